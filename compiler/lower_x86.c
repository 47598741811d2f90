/* The kernel lowering's x86 fast paths and the one switch that turns them all off.
 *
 * Every choice the lowering makes for an x86 host goes through pto__lower_host_has: 16-lane
 * fused and streamed runs (+avx512f), vscalefps in exp, the sort network in zmm registers,
 * 512-bit vectors in the loops LLVM vectorizes (+avx512f), non-temporal stores fenced by sfence
 * (x86-64) and the deferred stores on them (lower_stream_x86.c), and the matmul microkernel and
 * its bf16 dot-product instruction (lower_matmul_x86.c). PTO_GENERIC_LOWERING=1 makes it answer
 * no to all of them: the kernels are then what the generic LLVM path gives on any target, the code
 * the differential tests check the fast paths against. The variable is read once per process and is
 * part of the target identity (pto__llvm_target_identity), and the loader puts it in the cache key
 * (loader/cache.c), so code lowered one way is never served for the other. */
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"
#include "pto/base.h"
#include "pto/compile_api.h"

pto_status pto__lower_generic_setting(int *out_generic) {
  static const char *const k_values[] = {"0", "1"};
  return pto_env_choice(PTO_GENERIC_LOWERING_ENV, k_values, 2, 0, out_generic);
}

int pto__lower_host_has(const char *what) {
  const char *id = pto__llvm_target_identity();
  return !strstr(id, PTO_LOWERING_GENERIC_ID) && strstr(id, what) != NULL;
}

int pto__lower_x86_wide(void) { return pto__lower_host_has("+avx512f"); }

int pto__lower_x86_streaming(void) { return pto__lower_host_has("triple=x86_64"); }

LLVMValueRef pto__lower_x86_scalef(lw *L, LLVMValueRef p, LLVMValueRef n) {
  LLVMTypeRef tf = LLVMTypeOf(p);
  if (LLVMGetTypeKind(tf) != LLVMVectorTypeKind || LLVMGetVectorSize(tf) != 16 ||
      !pto__lower_x86_wide())
    return NULL;
  /* p 2^n in one instruction, rounded once: vscalefps (p times 2^floor(n), n an integer or NaN)
   * equals the generic path's two multiplies, of which the first is exact (p 2^(n>>1) is normal
   * for n >= -150), and the second rounds. It spares 9 operations of 27 and the microcode assist
   * x86 takes for a multiply with a subnormal result. */
  LLVMValueRef args[5] = {p, n, LLVMGetPoison(tf), LLVMConstInt(L->t_i16, 0xffff, 0),
                          LLVMConstInt(L->t_i32, 4, 0)}; /* all lanes, MXCSR rounding */
  return pto__lower_call_intrinsic(L, "llvm.x86.avx512.mask.scalef.ps.512", NULL, 0, args, 5,
                                   "exp");
}

void pto__lower_x86_nontemporal(lw *L, LLVMValueRef store) {
  LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(L->t_i32, 1, 0));
  unsigned kind = LLVMGetMDKindIDInContext(L->c, "nontemporal", 11);
  LLVMSetMetadata(store, kind, LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, &one, 1)));
}

void pto__lower_x86_sfence(lw *L) {
  pto__lower_call_intrinsic(L, "llvm.x86.sse.sfence", NULL, 0, NULL, 0, "");
}

void pto__lower_x86_prefer_wide(lw *L) {
  /* LLVM's own tuning for Intel's AVX-512 cores (Skylake-X to Sapphire Rapids) prefers 256-bit
   * vectors, so the loops it vectorizes there (streamed and fused elementwise runs, copies)
   * got 8 lanes where AMD's Zen 4 and 5 get 16; the explicit 16-lane paths and the matmul
   * blocks already use 512 bits on every AVX-512 host. The width never changes a result: the
   * loops it widens are elementwise, or integer, or in index order. */
  if (!pto__lower_x86_wide()) return;
  LLVMAddAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(L->c, "prefer-vector-width", 19, "512", 3));
}

void pto__lower_x86_wide_vectors(lw *L) {
  if (!pto__lower_x86_wide()) return;
  LLVMAddAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(L->c, "min-legal-vector-width", 22, "512", 3));
}
