/* pto manifest: DIR/manifest.json, the record of a work dir (README.md, "Work dirs and the
 * binary cache").
 *
 * A manifest names what the compiler produced and how to trust it: the program and its entry
 * signature, the kernels (id, name, exported symbol, core type, scratch bytes), the
 * orchestration (its C++ source and shared object), the kernels shared object, the XXH3-128
 * content hash of every source and binary, the GNU Build-ID and hid of both shared objects, the
 * toolchain identity, the cache key, the optimization level and the platform.
 *
 * Reading validates everything before returning: a malformed or foreign manifest fails with one
 * message naming the file and the field ("DIR/manifest.json: field 'kernels[1].core_type':
 * expected \"aiv\" or \"aic\", got \"gpu\""), and JSON syntax errors carry jansson's line:col.
 * Every path in a manifest is relative to the work dir, '/'-separated, without empty, '.' or '..'
 * components; pto_manifest_resolve additionally refuses a path that a symlink leads out of the
 * work dir, so a manifest never makes the loader open a file outside it.
 *
 * Writing validates the same way (what pto_manifest_write accepts, pto_manifest_read accepts),
 * then replaces DIR/manifest.json atomically (temp file in DIR, fsync, rename, fsync DIR). The
 * compiler writes the manifest last, so an interrupted build is never trusted.
 *
 * Ownership: every pointer inside a pto_manifest is malloc'd and owned by the manifest;
 * pto_manifest_free releases them (the struct itself belongs to the caller). A zeroed struct is
 * an empty manifest. */
#ifndef PTO_MANIFEST_H
#define PTO_MANIFEST_H

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
  char *source;           /* "kernels/<name>.ll", or NULL when not recorded */
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
  char hash[PTO_HASH_HEX_LEN + 1]; /* XXH3-128 of the content, lowercase hex */
} pto_manifest_file;

typedef struct pto_manifest {
  char *program;     /* program name */
  pto_signature sig; /* the entry signature; syms in order of first use in dims */
  int nkernels;
  pto_manifest_kernel *kernels;   /* kernels[i].id == i after read */
  char *orch_name;                /* orchestration function name */
  char *orch_source;              /* "orchestration/<orch>.cpp" */
  pto_manifest_binary orch;       /* "orchestration/<orch>.so" */
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
} pto_manifest;

/* Reads and validates DIR/manifest.json into *out_m (zeroed first; left empty on failure). */
PTO_API PTO_MUST_USE pto_status pto_manifest_read(const char *dir, pto_manifest *out_m);
/* Parses manifest text; name is the file named in messages. */
PTO_API PTO_MUST_USE pto_status pto_manifest_parse(const char *text, size_t len, const char *name,
                                                   pto_manifest *out_m);
/* Validates m and writes DIR/manifest.json atomically. */
PTO_API PTO_MUST_USE pto_status pto_manifest_write(const char *dir, const pto_manifest *m);
/* The JSON text pto_manifest_write would write (freed with pto_free, NUL-terminated). */
PTO_API PTO_MUST_USE pto_status pto_manifest_to_json(const pto_manifest *m, char **out_text);
PTO_API void pto_manifest_free(pto_manifest *m);

/* ---- building a manifest (compiler, rebuild) -------------------------------------------- */

/* The files entry for path, or NULL. */
PTO_API const pto_manifest_file *pto_manifest_find_file(const pto_manifest *m, const char *relpath);
/* Hashes DIR/relpath and records it in m->files (replacing an earlier entry for the path). */
PTO_API PTO_MUST_USE pto_status pto_manifest_add_file(pto_manifest *m, const char *dir,
                                                      const char *relpath);
/* Fills b from the shared object DIR/relpath: path, Build-ID hex and hid. */
PTO_API PTO_MUST_USE pto_status pto_manifest_binary_set(pto_manifest_binary *b, const char *dir,
                                                        const char *relpath);

/* ---- paths and hashes ------------------------------------------------------------------- */

/* Ok when relpath is a safe work-dir path: relative, '/'-separated, no empty, '.' or '..'
 * components, no control characters. what names it in the message. */
PTO_API PTO_MUST_USE pto_status pto_manifest_check_path(const char *relpath, const char *what);
/* DIR/relpath as an absolute, symlink-free path (freed with pto_free), refusing an unsafe relpath
 * and a path that symlinks lead outside DIR. The file must exist. */
PTO_API PTO_MUST_USE pto_status pto_manifest_resolve(const char *dir, const char *relpath,
                                                     char **out_path);

/* XXH3-128 of a file's content, streamed, as 32 lowercase hex digits (the canonical big-endian
 * byte order, as xxh128sum prints it). */
PTO_API PTO_MUST_USE pto_status pto_file_hash(const char *path, char out_hex[PTO_HASH_HEX_LEN + 1]);

#ifdef __cplusplus
}
#endif
#endif
