/* Kernel lowering: PTIR kernel functions to native objects through the LLVM C API.
 *
 * Each kernel becomes its own LLVM module exporting "pto_kernel_<name>" with the pto_kernel_fn
 * signature of pto/kernel_abi.h. The lowered IR is written before optimization (a .ll a user can
 * read, edit and rebuild with pto__compile_ll); the object is optimized with the new pass
 * manager's "default<On>" pipeline for the host CPU and its features, position independent, so
 * the driver can link every kernel object plus the ABI object into kernels.so.
 *
 * Tiles live in the per-core scratch arena (pto_core_ctx.scratch) at offsets fixed at compile
 * time, 64-byte aligned, dense row-major [rows][cols] in their dtype; buffers of tiles whose
 * lifetimes do not overlap are shared, and elementwise ops may run in place over a dead operand.
 *
 * Numerics match the reference interpreter (ir/interp.c) bit for bit: same formulas and order,
 * f16/bf16 computed in f32 and rounded to nearest even; f32 exp/log inline as pto/mathf.h's
 * operations (they vectorize like the rest), f64 exp/log through libm's exp/log (so kernel objects
 * need -lm when linked; those loops stay scalar); f32 matmul one llvm.fma per product in k order.
 * Every other elementwise, load/store, reduction and matmul loop vectorizes. A kernel returns
 * PTO_KERNEL_ERR_DIV_ZERO for an integer division by a runtime zero, PTO_KERNEL_ERR_LOOP_STEP for
 * a for loop's runtime step of zero, PTO_KERNEL_ERR_DIM_MISMATCH
 * (err_detail: the two extents) when a dynamic symbol is bound twice with different values,
 * PTO_KERNEL_ERR_SCRATCH (err_detail: needed, given) when the arena is smaller than the
 * footprint, PTO_KERNEL_ERR_DIST for a dist.* op when pto_core_ctx.dist is NULL, and a dist table
 * call's nonzero code as it is.
 *
 * Every call uses its own LLVM context, so kernels may be lowered from several threads at once.
 * LLVM's target registry is initialised once (pthread_once). */
#ifndef PTO_COMPILER_LOWER_H
#define PTO_COMPILER_LOWER_H

#include <stdint.h>

#include "pto/ir.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lowers kernel function k of p into its own LLVM module: writes ll_path (the IR as lowered,
 * before optimization; may be NULL) and obj_path (optimized at opt_level 0..3, PIC, host CPU and
 * features). *out_scratch_bytes (may be NULL) receives the kernel's tile footprint in the
 * per-core scratch arena. Kernel-side dist.* ops call the pto_core_ctx.dist table (lower_dist.c).
 */
pto_status pto__lower_kernel(const pto_ir_program *p, const pto_ir_func *k, int opt_level,
                             const char *ll_path, const char *obj_path,
                             uint64_t *out_scratch_bytes);

/* Compiles a (possibly hand-edited) .ll file into an object: the rebuild path. A parse error
 * comes back as PTO_STATUS_INVALID_ARGUMENT with LLVM's message (file:line:col). */
pto_status pto__compile_ll(const char *ll_path, int opt_level, const char *obj_path);

/* The optimized IR of a .ll file at opt_level, as text (malloc'd): what pto__compile_ll turns
 * into an object. For tests and for looking at what the vectorizer did. */
pto_status pto__optimize_ll_text(const char *ll_path, int opt_level, char **out_text);

/* Writes a tiny object exporting the int32 "pto_kernel_abi_version" = PTO_KERNEL_ABI_VERSION. */
pto_status pto__emit_abi_object(const char *obj_path);

/* "triple=...;cpu=...;features=..." of the host target, for the cache key, followed by
 * PTO_LOWERING_GENERIC_ID under PTO_GENERIC_LOWERING=1 (lower_x86.c). Static storage, computed
 * once. */
const char *pto__llvm_target_identity(void);
#define PTO_LOWERING_GENERIC_ID ";lowering=generic"

/* lower_x86.c: PTO_GENERIC_LOWERING as 0 or 1; an error naming the values it accepts. */
pto_status pto__lower_generic_setting(int *out_generic);
/* lower_x86.c: whether the lowering may use what the host (the code's target) has: a part of
 * pto__llvm_target_identity, e.g. "+avx512f" (512-bit vector registers) or "triple=x86_64"
 * (non-temporal stores, sfence). Always 0 under PTO_GENERIC_LOWERING=1: every host-specific
 * choice of the lowering asks this. */
int pto__lower_host_has(const char *what);

#ifdef __cplusplus
}
#endif
#endif
