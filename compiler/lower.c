/* Kernel lowering driver: host target machine, the pass pipeline and object emission. The code
 * generator proper is lower_kernel.c. */
#include "lower.h"
#include "pto/base.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "lower_internal.h"
#include "pto/kernel_abi.h"

/* Written once under g_target_once, read-only afterwards. */
static pthread_once_t g_target_once = PTHREAD_ONCE_INIT;
static int g_target_ok;
static char *g_triple, *g_cpu, *g_features, *g_identity;
static char g_switch_error[256]; /* a bad PTO_GENERIC_LOWERING: what was wrong */

static void target_init_once(void) {
  int generic = 0;
  pto_status s = pto__lower_generic_setting(&generic);
  if (s) {
    snprintf(g_switch_error, sizeof g_switch_error, "%s", pto_status_message(s));
    pto_status_free(s);
    return;
  }
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) return;
  g_triple = LLVMGetDefaultTargetTriple();
  g_cpu = LLVMGetHostCPUName();
  g_features = LLVMGetHostCPUFeatures();
  if (!g_triple || !g_cpu || !g_features) return;
  size_t n = strlen(g_triple) + strlen(g_cpu) + strlen(g_features) + 64;
  g_identity = pto_malloc(n);
  if (!g_identity) return;
  snprintf(g_identity, n, "triple=%s;cpu=%s;features=%s%s", g_triple, g_cpu, g_features,
           generic ? PTO_LOWERING_GENERIC_ID : "");
  g_target_ok = 1;
}

static pto_status target_init(void) {
  pthread_once(&g_target_once, target_init_once);
  if (g_switch_error[0])
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s (unset it or set it to 1)",
                           g_switch_error);
  if (!g_target_ok)
    return pto_status_make(PTO_STATUS_INTERNAL, "LLVM: cannot initialise the native target");
  return PTO_OK;
}

const char *pto__llvm_target_identity(void) {
  if (target_init()) return "triple=?;cpu=?;features=?";
  return g_identity;
}

static pto_status make_tm(int opt_level, LLVMTargetMachineRef *out_tm) {
  PTO_RETURN_IF_ERROR(target_init());
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(g_triple, &target, &err)) {
    pto_status s = pto_status_make(PTO_STATUS_INTERNAL, "LLVM: no target for '%s': %s", g_triple,
                                   err ? err : "?");
    LLVMDisposeMessage(err);
    return s;
  }
  LLVMCodeGenOptLevel cg = opt_level <= 0   ? LLVMCodeGenLevelNone
                           : opt_level == 1 ? LLVMCodeGenLevelLess
                           : opt_level == 2 ? LLVMCodeGenLevelDefault
                                            : LLVMCodeGenLevelAggressive;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, g_triple, g_cpu, g_features, cg,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm) return pto_status_make(PTO_STATUS_INTERNAL, "LLVM: cannot create a target machine");
  *out_tm = tm;
  return PTO_OK;
}

static void set_module_target(LLVMModuleRef mod, LLVMTargetMachineRef tm) {
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, td);
  LLVMDisposeTargetData(td);
  LLVMSetTarget(mod, g_triple);
}

static pto_status verify_module(LLVMModuleRef mod, const char *what) {
  char *err = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err)) {
    pto_status s =
        pto_status_make(PTO_STATUS_INTERNAL, "%s: invalid LLVM IR: %s", what, err ? err : "?");
    LLVMDisposeMessage(err);
    return s;
  }
  LLVMDisposeMessage(err);
  return PTO_OK;
}

static pto_status optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level);

/* Files are written here, not by LLVMPrintModuleToFile or LLVMTargetMachineEmitToFile: LLVM's
 * file streams abort the process on a write error (a full disk) instead of returning it. */
static pto_status write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return pto_status_make(PTO_STATUS_IO, "cannot write '%s': %s", path, strerror(errno));
  int ok = fwrite(data, 1, n, f) == n;
  int err = ok ? 0 : errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  if (!ok) return pto_status_make(PTO_STATUS_IO, "cannot write '%s': %s", path, strerror(err));
  return PTO_OK;
}

/* Runs default<On> and writes the object. */
static pto_status optimize_and_emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level,
                                    const char *obj_path) {
  PTO_RETURN_IF_ERROR(optimize(mod, tm, opt_level));
  char *err = NULL;
  LLVMMemoryBufferRef obj = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &obj)) {
    pto_status s =
        pto_status_make(PTO_STATUS_IO, "cannot emit object '%s': %s", obj_path, err ? err : "?");
    LLVMDisposeMessage(err);
    return s;
  }
  pto_status s = write_bytes(obj_path, LLVMGetBufferStart(obj), (size_t)LLVMGetBufferSize(obj));
  LLVMDisposeMemoryBuffer(obj);
  return s;
}

pto_status pto__lower_kernel(const pto_ir_program *p, const pto_ir_func *k, int opt_level,
                             const char *ll_path, const char *obj_path,
                             uint64_t *out_scratch_bytes) {
  if (!p || !k || !obj_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto__lower_kernel: NULL argument");
  if (k->kind != PTO_FUNC_KERNEL)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "@%s is not a kernel", k->name);
  LLVMTargetMachineRef tm;
  PTO_RETURN_IF_ERROR(make_tm(opt_level, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  char modname[256];
  snprintf(modname, sizeof modname, "pto_kernel_%s", k->name);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(modname, ctx);
  set_module_target(mod, tm);
  uint64_t scratch = 0;
  pto_status s = pto__lower_build_kernel(ctx, mod, p, k, &scratch);
  if (!s) s = verify_module(mod, modname);
  if (!s && ll_path) {
    char *text = LLVMPrintModuleToString(mod);
    s = write_bytes(ll_path, text, strlen(text));
    LLVMDisposeMessage(text);
  }
  if (!s) s = optimize_and_emit(mod, tm, opt_level, obj_path);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  if (!s && out_scratch_bytes) *out_scratch_bytes = scratch;
  return s;
}

/* Parses and verifies a .ll file into a fresh context; errors are the user's (a hand edit). */
static pto_status parse_ll(const char *ll_path, LLVMTargetMachineRef tm, LLVMContextRef ctx,
                           LLVMModuleRef *out_mod) {
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(ll_path, &buf, &err)) {
    pto_status s = pto_status_make(PTO_STATUS_IO, "cannot read '%s': %s", ll_path, err ? err : "?");
    LLVMDisposeMessage(err);
    return s;
  }
  LLVMModuleRef mod = NULL;
  /* LLVMParseIRInContext takes ownership of buf, success or not. */
  if (LLVMParseIRInContext(ctx, buf, &mod, &err)) {
    pto_status s =
        pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", ll_path, err ? err : "parse error");
    LLVMDisposeMessage(err);
    return s;
  }
  set_module_target(mod, tm);
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err)) {
    pto_status s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: invalid LLVM IR: %s", ll_path,
                                   err ? err : "?");
    LLVMDisposeMessage(err);
    LLVMDisposeModule(mod);
    return s;
  }
  LLVMDisposeMessage(err);
  *out_mod = mod;
  return PTO_OK;
}

/* Runs default<On> over mod. */
static pto_status optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level) {
  if (opt_level < 0) opt_level = 0;
  if (opt_level > 3) opt_level = 3;
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(opts, opt_level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, opt_level >= 2);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, opt_level >= 2);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, opt_level >= 2);
  LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (e) {
    char *m = LLVMGetErrorMessage(e);
    pto_status s = pto_status_make(PTO_STATUS_INTERNAL, "LLVM passes '%s': %s", pipeline, m);
    LLVMDisposeErrorMessage(m);
    return s;
  }
  return PTO_OK;
}

pto_status pto__compile_ll(const char *ll_path, int opt_level, const char *obj_path) {
  if (!ll_path || !obj_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto__compile_ll: NULL argument");
  LLVMTargetMachineRef tm;
  PTO_RETURN_IF_ERROR(make_tm(opt_level, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  pto_status s = parse_ll(ll_path, tm, ctx, &mod);
  if (!s) s = optimize_and_emit(mod, tm, opt_level, obj_path);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}

pto_status pto__optimize_ll_text(const char *ll_path, int opt_level, char **out_text) {
  if (!ll_path || !out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto__optimize_ll_text: NULL argument");
  *out_text = NULL;
  LLVMTargetMachineRef tm;
  PTO_RETURN_IF_ERROR(make_tm(opt_level, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  pto_status s = parse_ll(ll_path, tm, ctx, &mod);
  if (!s) s = optimize(mod, tm, opt_level);
  if (!s) {
    char *text = LLVMPrintModuleToString(mod);
    *out_text = text ? pto_strdup(text) : NULL;
    LLVMDisposeMessage(text);
    if (!*out_text) s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}

pto_status pto__emit_abi_object(const char *obj_path) {
  if (!obj_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto__emit_abi_object: NULL path");
  LLVMTargetMachineRef tm;
  PTO_RETURN_IF_ERROR(make_tm(0, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("pto_kernel_abi", ctx);
  set_module_target(mod, tm);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMValueRef g = LLVMAddGlobal(mod, i32, "pto_kernel_abi_version");
  LLVMSetInitializer(g, LLVMConstInt(i32, PTO_KERNEL_ABI_VERSION, 0));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetAlignment(g, 4);
  pto_status s = verify_module(mod, "pto_kernel_abi");
  if (!s) s = optimize_and_emit(mod, tm, 0, obj_path);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}
