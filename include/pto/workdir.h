/* pto work dir description: the one record of what a work dir holds (README.md, "Work dirs and
 * the binary cache").
 *
 * The compiler produces it (pto_compiler_build_dir fills the parts it knows: the program, the
 * entry signature, the kernels, the orchestration or host, the paths of the shared objects and
 * of every file it wrote, listed without a hash); the loader completes it (content hashes,
 * Build-IDs and hids, the toolchain identity, the cache key), writes it as DIR/manifest.json
 * (pto/manifest.h) and reads it back to load the dir. One struct, one free, one field list.
 *
 * Ownership: every pointer inside a pto_manifest is allocated through the project's allocator and
 * owned by the manifest; pto_manifest_free releases them (the struct itself belongs to the
 * caller). A zeroed struct is an empty manifest. */
#ifndef PTO_WORKDIR_H
#define PTO_WORKDIR_H

#include <stdint.h>

#include "pto/export.h"
#include "pto/signature.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_MANIFEST_SCHEMA "pto.manifest/1"
#define PTO_MANIFEST_FILENAME "manifest.json"
#define PTO_HASH_HEX_LEN 32 /* XXH3-128 as hex */
#define PTO_BUILD_ID_MAX 64 /* bytes */

typedef struct pto_manifest_kernel {
  int id;                 /* 0..nkernels-1, the index the orchestration submits */
  char *name;             /* kernel function name */
  char *symbol;           /* exported symbol in kernels.so, e.g. "pto_kernel_<name>" */
  int core_type;          /* PTO_CORE_AIV or PTO_CORE_AIC */
  uint64_t scratch_bytes; /* per-core tile footprint */
  char *source;           /* "kernels/<name>.ll" (a name over 200 characters: its first 200,
                             "-" and the kernel's number), or NULL when not recorded */
  char *object;           /* "kernels/<name>.o", or NULL when not recorded */
} pto_manifest_kernel;

/* One shared object: its path and identity. */
typedef struct pto_manifest_binary {
  char *path;                              /* relative to the work dir */
  char build_id[2 * PTO_BUILD_ID_MAX + 1]; /* full GNU Build-ID, lowercase hex; "" if none */
  uint64_t hid;                            /* pto_hid_from_build_id, or FNV-1a-64 without one */
} pto_manifest_binary;

typedef struct pto_manifest_file {
  char *path;                      /* relative to the work dir */
  char hash[PTO_HASH_HEX_LEN + 1]; /* XXH3-128 of the content, lowercase hex; "" not yet hashed */
} pto_manifest_file;

typedef struct pto_manifest {
  char *program;     /* program name */
  pto_signature sig; /* the entry signature; syms in order of first use in dims */
  int nkernels;
  pto_manifest_kernel *kernels; /* kernels[i].id == i */
  char *orch_name;              /* orchestration function name */
  char *orch_source;            /* "orchestration/<orch>.cpp" */
  pto_manifest_binary orch;     /* "orchestration/<orch>.so" */
  /* The symbol of orch that the runtime calls with the ChipTaskArgs ("entry_symbol", optional:
   * NULL is PTO_ORCH_DEFAULT_ENTRY, aicpu_orchestration_entry): set for hand-written
   * orchestration that names its entry otherwise (pto rebuild DIR --orch-entry NAME). */
  char *orch_entry_symbol;
  pto_manifest_binary kernels_so; /* "kernels/kernels.so" */
  int nfiles;
  pto_manifest_file *files; /* every source and binary, each path once */
  char *toolchain;          /* toolchain identity (pto, LLVM, C++ compiler, runtime ABI) */
  char cache_key[PTO_HASH_HEX_LEN + 1];
  int opt_level;  /* 0..3 */
  char *platform; /* "sim" */
  /* A host (L3) program ("kind": "host"; orchestration, kernels_so and kernels are then absent
   * or empty): its host function, the generated C and its shared object, the device set
   * (rank r runs on devices[r]) and the orch functions the host calls, in call-index order, each
   * an L2 work dir "callees/<name>" with its own manifest. Zero for an L2 program. */
  int is_host;
  char *host_name;          /* the host function's name */
  char *host_source;        /* "host/host.c" */
  pto_manifest_binary host; /* "host/host.so" */
  int ndevices;
  int32_t *devices;
  int ncallees;
  char **callees;
  /* The callees' own descriptions, callee_dirs[i] that of callees/<callees[i]>/, as the compiler
   * built them (each written to its own manifest.json, not into this one); NULL after a read,
   * which reads the top manifest only. */
  struct pto_manifest *callee_dirs;
} pto_manifest;

/* Releases everything m owns (callee_dirs included) and zeroes it; NULL is ignored. */
PTO_API void pto_manifest_free(pto_manifest *m);

/* The files entry for path, or NULL (also for a NULL m or relpath). */
PTO_API const pto_manifest_file *pto_manifest_find_file(const pto_manifest *m, const char *relpath);

/* Lists relpath in m->files without a hash (hash "") unless it is there already: what the
 * compiler wrote, for the loader to hash (pto_manifest_add_file) before the manifest is written. */
PTO_API PTO_MUST_USE pto_status pto_manifest_list_file(pto_manifest *m, const char *relpath);

#ifdef __cplusplus
}
#endif
#endif
