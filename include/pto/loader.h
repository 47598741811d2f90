/* pto loader: loaded programs, work dirs, manifests and Build-IDs.
 *
 * A pto_program is a compiled program ready to bind to a worker: its entry signature, the
 * orchestration entry of its orchestration shared object, and its kernels. It is reference
 * counted (create = 1 reference; the runtime retains what it registers) and immutable, so several
 * workers may share it. Loading verifies every binary against the manifest before dlopen. */
#ifndef PTO_LOADER_H
#define PTO_LOADER_H

#include <stdint.h>

#include "pto/compile_api.h" /* pto_compile_options: the loader never links the compiler */
#include "pto/export.h"
#include "pto/host_abi.h"
#include "pto/kernel_abi.h"
#include "pto/orch_abi.h"
#include "pto/signature.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_program pto_program;

/* ---- ELF Build-ID ---------------------------------------------------------------------- */

/* The GNU Build-ID of an ELF file: *out_len bytes (up to 64) in out_id. Fails with
 * PTO_STATUS_NOT_FOUND when the file has no NT_GNU_BUILD_ID note. */
PTO_API PTO_MUST_USE pto_status pto_elf_build_id(const char *path, uint8_t out_id[64],
                                                 size_t *out_len);
/* hid: the first 8 bytes of the Build-ID read little-endian; without a note, FNV-1a-64 of the
 * whole file. */
PTO_API PTO_MUST_USE pto_status pto_elf_hid(const char *path, uint64_t *out_hid);
/* The hid of a Build-ID note's bytes (0 for a NULL id). */
PTO_API uint64_t pto_hid_from_build_id(const uint8_t *id, size_t len);
/* hid as lowercase hex without 0x or padding; buf of at least 17 bytes. */
PTO_API void pto_hid_format(uint64_t hid, char buf[17]);

/* ---- programs -------------------------------------------------------------------------- */

/* Loads a work dir: reads DIR/manifest.json, verifies each binary's checksum and Build-ID,
 * dlopens: in place when only this user or root can replace the file (it and every directory
 * above it private, docs/c-api.md "pto/loader.h"), else the verified bytes from a private copy
 * kept until the program is released. A hand-edited source makes its binary stale: the load fails
 * (FAILED_PRECONDITION) naming the file; pto_program_rebuild_dir first rebuilds it. A binary
 * rebuilt while an older build of the same path is still loaded in this process loads beside it
 * (the older program keeps its code). */
PTO_API PTO_MUST_USE pto_status pto_program_load_dir(const char *work_dir,
                                                     pto_program **out_program);

/* Rebuilds what hand edits made stale in a work dir (README.md "Work dirs and the binary cache"):
 * an edited orchestration/<orch>.cpp -> its .so; an edited kernels/<k>.ll -> its .o, then
 * kernels.so relinked; a binary that is missing or no longer matches its recorded hash is rebuilt
 * from its source too. Records the new content hashes and Build-IDs and writes the manifest last
 * and atomically. *out_rebuilt (may be NULL) counts the files rebuilt: 0 when nothing was stale, in
 * which case the compiler library (and LLVM) is not loaded. A program loaded from the dir before
 * keeps running its old binaries; pto_program_load_dir afterwards loads the new ones. */
PTO_API PTO_MUST_USE pto_status pto_program_rebuild_dir(const char *work_dir, int *out_rebuilt);

/* Sets the symbol the runtime calls as the orchestration's entry in an L2 work dir
 * (orchestration.entry_symbol of DIR/manifest.json, written atomically): for hand-written
 * orchestration whose entry is not aicpu_orchestration_entry. NULL or PTO_ORCH_DEFAULT_ENTRY
 * goes back to the default. symbol must be a C identifier; a host (L3) work dir is refused. The
 * next pto_program_load_dir looks it up (and fails naming it when the .so lacks it). */
PTO_API PTO_MUST_USE pto_status pto_program_set_orch_entry(const char *work_dir,
                                                           const char *symbol);

/* For embedders and tests with functions in hand (no shared objects): a program whose
 * orchestration and kernels are the given function pointers. sig is copied; names copied. */
PTO_API PTO_MUST_USE pto_status pto_program_create_from_functions(
    const pto_signature *sig, pto_orch_bind_fn bind, pto_orch_entry_fn entry, int nkernels,
    const pto_kernel_fn *kernels, const char *const *kernel_names, uint64_t scratch_bytes,
    pto_program **out_program);

/* A program is reference-counted (a worker that registers it, a distributed worker that runs it,
 * a submitted run: each holds a reference of its own); NULL is ignored. Unlike the runtime's
 * workers, handles and tensors, a pto_program is a pointer, not a generation-checked token: a
 * release more than the retains plus the one its maker gave, or a use after the last release,
 * is a use of freed memory that cannot be reported (it may crash). Release it exactly once per
 * reference held. */
PTO_API void pto_program_retain(pto_program *p);
PTO_API void pto_program_release(pto_program *p);

/* The accessors below take a NULL program as one with nothing: NULL, 0, "?" or -1 (what each
 * gives for an index out of range). */

PTO_API const pto_signature *pto_program_signature(const pto_program *p);
/* hid of the orchestration shared object (0 for programs made from functions). */
PTO_API uint64_t pto_program_hid(const pto_program *p);
PTO_API pto_orch_bind_fn pto_program_orch_bind(const pto_program *p);
PTO_API pto_orch_entry_fn pto_program_orch_entry(const pto_program *p);
/* The orchestration's config function (PTO_ORCH_DEFAULT_CONFIG, or NAME_config beside an entry
 * NAME of another name), or NULL when it exports none. The runtime calls it before the entry and
 * fails a launch with fewer arguments than its expected_arg_count, as PyPTO's runtime does. */
PTO_API pto_orch_config_fn pto_program_orch_config(const pto_program *p);
PTO_API int pto_program_kernel_count(const pto_program *p);
PTO_API pto_kernel_fn pto_program_kernel(const pto_program *p, int kernel_id);
PTO_API const char *pto_program_kernel_name(const pto_program *p, int kernel_id);
/* The core type a kernel runs on (PTO_CORE_AIV or PTO_CORE_AIC of pto/orch_abi.h), as the
 * manifest declares it; -1 when undeclared (programs made from functions, until set). A task
 * submitted to the other type fails the launch. */
PTO_API int pto_program_kernel_core_type(const pto_program *p, int kernel_id);
PTO_API PTO_MUST_USE pto_status pto_program_set_kernel_core_type(pto_program *p, int kernel_id,
                                                                 int core_type);
/* The largest per-core tile footprint of any kernel, bytes: the runtime's scratch size. */
PTO_API uint64_t pto_program_scratch_bytes(const pto_program *p);
/* The work dir it was loaded from, or NULL. */
PTO_API const char *pto_program_work_dir(const pto_program *p);

/* ---- host (L3) programs --------------------------------------------------------------- */

/* A program whose entry is a `host` function is run by a distributed worker (pto/dist.h). Its
 * work dir holds DIR/host/host.c and host.so (pto/host_abi.h) and one L2 work dir per orch
 * function the host calls, DIR/callees/<orch>/, loaded like any work dir (a dtensor parameter is
 * a tensor parameter there, bound to a window slice). pto_program_signature is the host
 * function's. For an L2 program: is_host 0, counts 0. */
PTO_API int pto_program_is_host(const pto_program *p);
/* The device set it was compiled for (--devices): its size, and rank r's device id. */
PTO_API int pto_program_device_count(const pto_program *p);
PTO_API int32_t pto_program_device_id(const pto_program *p, int rank);
/* The orch functions the host calls, in the order of pto_host_api.call's orch_index. */
PTO_API int pto_program_callee_count(const pto_program *p);
PTO_API const pto_program *pto_program_callee(const pto_program *p, int index); /* borrowed */
/* A callee's work dir in the host program's work dir (DIR/callees/<orch>, resolved), or NULL.
 * The callee itself was loaded from a private copy made at load (its pto_program_work_dir),
 * held until it is released, which this host's chips load: that dir may be gone by then (a
 * temporary build dir, an evicted cache entry). Ranks on other hosts (MPI) load this one. */
PTO_API const char *pto_program_callee_dir(const pto_program *p, int index);
PTO_API pto_host_entry_fn pto_program_host_entry(const pto_program *p);
/* For embedders and tests with a host function in hand: a host program calling the given L2
 * programs (retained; the distributed worker loads them on its chips from their work dirs, so
 * each must have one) on ndevices ranks with these device ids (NULL: 0 .. ndevices-1). */
PTO_API PTO_MUST_USE pto_status pto_program_create_host(const pto_signature *sig,
                                                        pto_host_entry_fn entry, int ncallees,
                                                        pto_program *const *callees, int ndevices,
                                                        const int32_t *device_ids,
                                                        pto_program **out_program);

/* ---- compiling (the compiler library is dlopen'ed on demand) ----------------------------- */

/* ---- source positions of launch errors ------------------------------------------------------
 * Generated orchestration records the op id of the statement it runs (pto_ir_func_stmt_index of
 * the entry as compiled) in its exported pto_orch_current_op; the program keeps a position
 * table from op id to file:line:col, made from the caller's IR (pto_compile) or read from the
 * work dir's positions.json (pto_program_load_dir). Neither enters the cache key. */

/* The op id the orchestration last recorded, or -1 (none yet, or code without op ids). Read on
 * the thread that runs the orchestration. */
PTO_API int32_t pto_program_current_op(const pto_program *p);
PTO_API void pto_program_reset_current_op(const pto_program *p);
/* "prog.ptir:12:5: call @k" (or ": tensor.slice") for op into buf; 0, or -1 when unknown (or
 * for a NULL p or buf, or n 0: nothing written). */
PTO_API int pto_program_op_text(const pto_program *p, int32_t op, char *buf, size_t n);
/* "prog.ptir:14:9: tile.gather" for the statement with index op (pto_ir_func_stmt_at) of the
 * kernel named kernel (an incore scope's: the kernel it becomes), as a kernel failing with
 * PTO_KERNEL_ERR_INDEX names it; 0, or -1 when unknown (or for a NULL buf, or n 0). */
PTO_API int pto_program_kernel_op_text(const pto_program *p, const char *kernel, int32_t op,
                                       char *buf, size_t n);
/* The names of that statement's index tile and tensor (*index, *table: "ix", "tab", owned by
 * p) when it is a tile.gather_rows or tile.scatter_rows; 0, or -1 when unknown. */
PTO_API int pto_program_kernel_op_operands(const pto_program *p, const char *kernel, int32_t op,
                                           const char **index, const char **table);
/* For a kernel that failed with PTO_KERNEL_ERR_DIM_MISMATCH (values a and b) at call op with
 * these tensor arguments: "dynamic symbol R is 8 from parameter 'x' (dim 0) but 16 from
 * parameter 'y' (dim 0)"; 0, or -1 when it cannot be told. */
PTO_API int pto_program_explain_dim_mismatch(const pto_program *p, int32_t op,
                                             const pto_kernel_tensor *tensors, int ntensors,
                                             int64_t a, int64_t b, char *buf, size_t n);

/* Compiles through the binary cache and loads the result: a hit loads the cached entry without
 * loading the compiler (or LLVM); a miss compiles, publishes and loads. A request whose key this
 * process has seen returns the same program object (retained) without touching disk; its
 * parameter names are those of the first program compiled with that key. The structural hash is
 * memoized per program (by pto_ir_program.serial): do not edit p's nodes in place after
 * compiling it. A cache that cannot be used (refused, read-only, full) is warned about once
 * (pto/cache.h) and the program is compiled without it. */
PTO_API PTO_MUST_USE pto_status pto_compile(const pto_ir_program *p, const pto_compile_options *opt,
                                            pto_program **out_program);
/* Compiles without touching the cache (a temporary work dir, removed after loading). */
PTO_API PTO_MUST_USE pto_status pto_compile_uncached(const pto_ir_program *p,
                                                     const pto_compile_options *opt,
                                                     pto_program **out_program);
/* Writes a complete work dir at dir (created if missing); the manifest is written last. With
 * use_cache the binary cache's entry for the key is copied in (every file checked against its
 * hash on the way), after building and publishing it on a miss; without, dir is built directly.
 * Beside the manifest (no part of it or of the key), positions.json maps op ids to this IR's
 * source lines for launch errors; a host program's callees (dir/callees/<orch>/) get theirs.
 * A dir that is not a work dir (no manifest.json of pto's) holding a name a work dir has at its
 * top (manifest.json, program.ptir, kernels/, ...) is refused (INVALID_ARGUMENT), never
 * overwritten. */
PTO_API PTO_MUST_USE pto_status pto_compile_to_dir(const pto_ir_program *p,
                                                   const pto_compile_options *opt, const char *dir,
                                                   int use_cache);
/* The cache key (32 hex digits) and, if out_text, the text that was hashed (freed with pto_free).
 */
PTO_API PTO_MUST_USE pto_status pto_cache_key(const pto_ir_program *p,
                                              const pto_compile_options *opt, char out_hex[33],
                                              char **out_text);
/* $PTO_CACHE_DIR, else $XDG_CACHE_HOME/pto (an absolute one; a relative one is ignored, as the
 * XDG base directory specification says), else ~/.cache/pto. A path out (n bytes) cannot hold
 * is an error, never truncated. */
PTO_API PTO_MUST_USE pto_status pto_cache_dir(char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
