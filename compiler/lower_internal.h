/* Internal interface between the kernel lowering driver (lower.c: targets, passes, objects) and
 * the kernel code generator (lower_kernel.c: PTIR to LLVM IR). */
#ifndef PTO_COMPILER_LOWER_INTERNAL_H
#define PTO_COMPILER_LOWER_INTERNAL_H

#include <stdint.h>

#include <llvm-c/Core.h>

#include "pto/ir.h"
#include "pto/status.h"

/* Adds the function "pto_kernel_<k->name>" to mod (an empty module of ctx) and sets
 * *out_scratch_bytes to its scratch footprint. The module is left unverified. */
pto_status pto__lower_build_kernel(LLVMContextRef ctx, LLVMModuleRef mod, const pto_ir_program *p,
                                   const pto_ir_func *k, uint64_t *out_scratch_bytes);

#endif
