/* pto compile API: the types the loader and the compiler share.
 *
 * The loader compiles through the binary cache without linking the compiler: it takes
 * pto_compile_options from its callers and, on a miss, dlopens libpto_compiler and calls it
 * through the versioned pto_compiler_api table, which fills the work dir description (a
 * pto_manifest, pto/workdir.h) that the loader completes and writes. These types
 * live here, below both, so that pto/loader.h (and every runtime user) never sees the compiler's
 * own API (pto/compiler.h). */
#ifndef PTO_COMPILE_API_H
#define PTO_COMPILE_API_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/signature.h"
#include "pto/status.h"
#include "pto/workdir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "1": the kernel lowering uses no host-specific fast path (compiler/lower_x86.c), only the
 * generic LLVM one; unset, empty or "0": the host's fast paths. Read once per process by the
 * compiler and by the loader, which puts it in the cache key (target.lowering=generic). */
#define PTO_GENERIC_LOWERING_ENV "PTO_GENERIC_LOWERING"

typedef struct pto_compile_options {
  size_t sz;                  /* sizeof(pto_compile_options): older callers keep working */
  const char *entry;          /* NULL: the single host, else the single orch; or a kernel */
  const char *platform;       /* NULL or "sim" */
  int opt_level;              /* 0..3 */
  const pto_binding *scalars; /* -D NAME=VALUE|runtime */
  int nscalars;
  const pto_binding *samples; /* --arg NAME=64x128 */
  int nsamples;
  /* Called as kernels are lowered: done of total kernels, from (0, total) to (total, total);
   * NULL: none. Changes no code, so it is no part of the cache key. */
  void (*progress)(void *ctx, int done, int total);
  void *progress_ctx;
  /* The device set of a program with a host entry (--devices): rank r runs on devices[r]; ids
   * distinct, >= 0, 1 to PTO_MAX_DEVICES of them. ndevices 0 (the default): one device, id 0.
   * Part of the cache key of a host program and of no other; a non-host program given a device
   * set fails ("--devices applies to programs with a host entry"). */
  const int32_t *devices;
  int ndevices;
  /* Called once, after the kernels, before the compile waits for the C++ compile of a long
   * orchestration (one written in parts, docs/cli.md), with progress_ctx: what names it
   * ("the orchestration C++, 10000 calls in 160 functions"), so that a caller can say what the
   * compile waits for. NULL: none. Changes no code, so it is no part of the cache key. */
  void (*waiting)(void *ctx, const char *what);
} pto_compile_options;

#define PTO_MAX_DEVICES 64

/* The device set of opt (sz-checked, so an older caller's struct reads as the default): sets
 * *out_n and returns the ids, or NULL with *out_n = 0 for the default. */
static inline const int32_t *pto_compile_options_devices(const pto_compile_options *opt,
                                                         int *out_n) {
  *out_n = 0;
  if (!opt || opt->sz < offsetof(pto_compile_options, ndevices) + sizeof opt->ndevices ||
      opt->ndevices <= 0 || !opt->devices)
    return NULL;
  *out_n = opt->ndevices;
  return opt->devices;
}

/* Fills defaults: sz set, platform "sim", opt_level 2 (a NULL opt: nothing). Inline: the loader and
 * tools use it without linking the compiler. */
static inline void pto_compile_options_init(pto_compile_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt); /* not '= {0}': C++'s -Wextra wants every member named */
  opt->sz = sizeof *opt;
  opt->platform = "sim";
  opt->opt_level = 2;
}

/* The table the loader reads from the dlopen'ed library via the exported symbol
 * "pto_compiler_api". Version 3: the pto_manifest build_dir fills holds a pto_signature with
 * kernel_entry (a larger struct, so every pto_manifest field after sig moved); version 2 filled a
 * pto_manifest, freed by the loader with pto_manifest_free (libpto_ir); version 1 filled a
 * pto_compile_output freed by output_clear. */
#define PTO_COMPILER_API_VERSION 3
typedef struct pto_compiler_api {
  uint32_t version;
  uint32_t size;
  const char *(*toolchain_identity)(void);
  pto_status (*build_dir)(const pto_ir_program *, const pto_compile_options *, const char *,
                          pto_manifest *);
  pto_status (*build_orchestration)(const char *, const char *);
  pto_status (*build_kernel_object)(const char *, int, const char *);
  pto_status (*link_kernels)(const char *const *, int, const char *);
  pto_status (*build_host)(const char *, const char *); /* added at the end: size tells */
} pto_compiler_api;

#ifdef __cplusplus
}
#endif
#endif
