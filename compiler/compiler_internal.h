/* Internal to the compiler module. */
#ifndef PTO_COMPILER_INTERNAL_H
#define PTO_COMPILER_INTERNAL_H

#include "pto/base.h"
#include "pto/compiler.h"

#include <limits.h>
#include <sys/types.h>

/* A running tool. */
typedef struct pto_exec {
  pid_t pid;
  int log_fd; /* the tool's stdout and stderr: a temporary file, unlinked once opened */
  char cmd[1024];
} pto_exec;

/* Runs argv[0] with argv (no shell), waits; on failure the status carries the command line and
 * the end of the tool's output. */
pto_status pto__compiler_exec(const char *const *argv);
/* The same in two halves, so other work can overlap the tool. Every started exec must be
 * waited for. The tool dies with the thread that started it (a parent-death SIGTERM, which the
 * C/C++ compiler drivers answer by removing their temporary files): killing pto, even with
 * SIGKILL, leaves no compiler running. */
pto_status pto__compiler_exec_start(const char *const *argv, pto_exec *out);
pto_status pto__compiler_exec_wait(pto_exec *e);
/* Same; *out_exit_status gets the tool's exit status (-1 when a signal ended it), so a caller
 * can tell a tool that refused its input from one that could not run. */
pto_status pto__compiler_exec_wait_status(pto_exec *e, int *out_exit_status);

/* The C and C++ compilers pto invokes ($PTO_CC / $PTO_CXX override the build-time ones). */
const char *pto__compiler_cc(void);
const char *pto__compiler_cxx(void);
/* -I directory holding pto/pto_orchestration_api.h. */
const char *pto__compiler_include_dir(void);
/* The directory holding pto/pto_orchestration_api.h.gch, precompiled at -O2, or "" when there is
 * none to use: passed with -I before the include dir, it spares each orchestration compile the
 * parse of the header and the C++ library headers it includes. */
const char *pto__compiler_pch_dir(void);

/* The core type a kernel runs on: AIC (cube) when it does a matmul anywhere in its body, else
 * AIV. One answer for the manifest and the emitted submit call. */
int pto__kernel_core_type(const pto_ir_func *k);

/* Emits the orchestration C++ of orch function f (kernel ids by kernel_ids[func->index]); the
 * call sites it wrote and the parts long blocks were split into (0: none) in *out_calls and
 * *out_parts. */
pto_status pto__emit_orchestration(const pto_ir_program *p, const pto_ir_func *f,
                                   const pto_ir_func *src, const pto_signature *sig,
                                   const int *kernel_ids, char **out_text, int *out_calls,
                                   int *out_parts);

/* Emits the C of host function f (pto/host_abi.h); callees[i] is the orch with call index i. */
pto_status pto__emit_host(const pto_ir_program *p, const pto_ir_func *f, const char *const *callees,
                          int ncallees, char **out_text);

/* Outlines every incore scope of p into a kernel (docs/language.md "Functions and parameters").
 * Sets *out_program to a new program, or to NULL when p has no incore scope (use p as it is). */
pto_status pto__outline_incore(const pto_ir_program *p, pto_ir_program **out_program);

pto_status pto__compiler_write_file(const char *path, const char *text);

#endif
