/* Internal to the loader: the binary cache's pieces shared between cache.c (key, lookup,
 * publish, the in-process map), cache_admin.c (list, verify, gc), cache_stats.c (counters),
 * cache_util.c (files and warnings), load_dir.c and rebuild.c. */
#ifndef PTO_LOADER_CACHE_INTERNAL_H
#define PTO_LOADER_CACHE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loader_internal.h"
#include "pto/cache.h"
#include "pto/manifest.h"

/* ---- warnings and files (cache_util.c) --------------------------------------------------- */

/* Sends "fmt..." to the warning hook. */
void pto__loader_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, but at most once per process for each distinct *once flag. */
void pto__loader_warn_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A private copy of work dir dir, made at once (hard links where possible, else copies) in a new
 * $TMPDIR/pto-held-<pid>-XXXXXX (*out_held, malloc'd): what a loaded host program's chips load
 * from later, whatever happens to dir meanwhile (a temporary build dir deleted, a cache entry
 * evicted). release_held removes it and frees the path; copies still held at exit are removed
 * then, and those of dead processes by the next process that holds one. */
pto_status pto__loader_hold_dir(const char *dir, char **out_held);
void pto__loader_release_held(char *held);
/* A new empty directory base/pto-<kind>-<pid>-XXXXXX, mode 0700 (*out_dir, malloc'd), held like
 * a copy of hold_dir: removed by release_held, at exit if still held, or by the next process of
 * this user that makes one of the same kind in base once this one is dead. */
pto_status pto__loader_private_dir(const char *base, const char *kind, char **out_dir);
/* True for the errors of a cache that cannot take a new entry: full, read-only, not ours. */
int pto__loader_errno_is_unwritable(int err);
/* Realtime clock in ns. */
int64_t pto__loader_now_ns(void);

/* The seal of a cache entry's manifest: ENTRY/manifest.xxh128, the XXH3-128 of manifest.json
 * (hex and a newline), so an entry's manifest is covered like the files it lists. Seal writes it
 * for dir and each callee work dir of a host program. check_seal: DATA_LOSS when the seal is
 * missing or differs from text (the manifest's bytes). read_sealed: pto_manifest_read, the bytes
 * read once and checked against the seal (a missing manifest is DATA_LOSS too). */
#define PTO__MANIFEST_SEAL "manifest.xxh128"
pto_status pto__loader_manifest_seal(const char *dir);
pto_status pto__loader_manifest_check_seal(const char *dir, const void *text, size_t len);
pto_status pto__loader_manifest_read_sealed(const char *dir, pto_manifest *out_m);
/* 1 when dir's manifest matches its seal and names another manifest schema (pto.manifest/N, not
 * this pto's): an entry another version of pto wrote and would read, not a corrupt one. */
int pto__loader_manifest_other_version(const char *dir);
/* The same, with the schema it names: a copy (pto_strdup, freed with free), or NULL for any other
 * entry. */
char *pto__loader_manifest_other_schema(const char *dir);

/* ---- the cache root and entries (cache.c) ------------------------------------------------ */

/* The cache root: created 0700 if missing, refused (FAILED_PRECONDITION, saying how to fix it)
 * when owned by another user or group/world-writable. */
pto_status pto__loader_cache_root(char *out_root, size_t n);
/* The marker file of a cache root. A root without it that holds files pto did not create is
 * not pto's: the cache is its "pto" subfolder instead (warned once), and a subfolder that is
 * not pto's either is refused. With create, a missing root is created (and tagged);
 * without, *out_exists says whether there is one to read. */
#define PTO__CACHE_TAG "CACHEDIR.TAG"
pto_status pto__loader_cache_resolve_root(char *out_root, size_t n, int create, int *out_exists);
/* ROOT/<key[0:2]>/<key[2:]> */
void pto__loader_cache_entry_path(const char *root, const char *key, char *out, size_t n);
/* Refuses an entry dir that is not a directory of this user, or is group/world-writable. */
pto_status pto__loader_cache_check_owner(const char *entry_dir);
/* Removes an entry atomically for readers: renamed into ROOT/tmp, then deleted (in place when
 * it cannot be renamed). 0 when it is gone; -1 with errno set when it is still there (a
 * read-only cache dir). */
int pto__loader_cache_discard(const char *root, const char *entry_dir);
/* Evicts least recently used entries of root down to max_bytes and removes build dirs of dead
 * processes, holding ROOT/lock; with nonblocking, returns at once when another cleaner holds it.
 * out_result may be NULL. */
pto_status pto__loader_cache_gc(const char *root, uint64_t max_bytes, int nonblocking,
                                pto_cache_gc_result *out_result);
/* PTO_CACHE_MAX_SIZE in bytes (0 when unset or invalid, which is warned about once). */
uint64_t pto__loader_cache_max_bytes(void);
/* Test hooks: forget the memoized toolchain/target identity (re-read the environment) and the
 * in-process map of loaded programs (each program loses the map's reference). */
void pto__loader_cache_reset_identity(void);
void pto__loader_cache_forget_loaded(void);
/* Test hook: the once-per-process warnings (cache refused, cache unwritable) may come again. */
void pto__loader_cache_reset_warnings(void);
/* In-process map hits of this process. */
uint64_t pto__loader_cache_memory_hits(void);

/* ---- the host CPU (cache.c) ------------------------------------------------------------- */

/* One reader of the first processor of /proc/cpuinfo serves the cache key's target lines and
 * the work-dir loader's CPU check (load_dir.c). pto__loader_cpuinfo calls fn for each
 * "key : value" line of the first processor of path: key without the blanks before its colon
 * (klen bytes, not terminated), value without the blanks after it and without its newline; 0
 * when path cannot be opened. pto__loader_cpu_flags: a copy of the first processor's "flags"
 * (x86) or "Features" (Arm) value, the CPU's extensions; NULL where path has none. */
#define PTO__CPUINFO "/proc/cpuinfo"
typedef void (*pto__loader_cpuinfo_fn)(void *ctx, const char *key, size_t klen, const char *value);
int pto__loader_cpuinfo(const char *path, pto__loader_cpuinfo_fn fn, void *ctx);
char *pto__loader_cpu_flags(const char *path);

/* ---- counters (cache_stats.c) ------------------------------------------------------------ */

typedef enum pto__loader_counter {
  PTO__COUNT_HITS,
  PTO__COUNT_MISSES,
  PTO__COUNT_STORES,
  PTO__COUNT_EVICTIONS,
  PTO__COUNT_CORRUPTIONS,
  PTO__COUNT_RACES,
  PTO__COUNT_UNCACHED,
  PTO__COUNT_REMOTE_HITS, /* the remote second level (remote.c) */
  PTO__COUNT_REMOTE_MISSES,
  PTO__COUNT_REMOTE_STORES,
  PTO__COUNT_REMOTE_ERRORS,
  PTO__COUNT_REMOTE_REFUSALS,
  PTO__COUNT_N
} pto__loader_counter;

/* Adds n to a persisted counter (ROOT/stats under flock); best effort: a read-only cache keeps
 * no counts. */
void pto__loader_count(const char *root, pto__loader_counter c, uint64_t n);
/* Reads the persisted counters (zeros when there is no stats file). */
pto_status pto__loader_counts_read(const char *root, uint64_t out[PTO__COUNT_N]);

/* ---- verification and loading (load_dir.c) ----------------------------------------------- */

/* pto_program_load_dir, also refusing a manifest whose cache_key is not expect_key (when
 * expect_key is not NULL): an entry found under the wrong key is corrupt. */
pto_status pto__loader_load_dir_checked(const char *dir, const char *expect_key,
                                        pto_program **out_program);

/* ---- the compiler library (compile.c) ---------------------------------------------------- */

/* The path pto__loader_compiler would dlopen (a bare file name when it would search the
 * library path). Loads nothing. */
void pto__loader_compiler_path(char *out, size_t n);
/* The include dir the compiler would give the C++ compiler (same search, without loading it). */
void pto__loader_include_dir(char *out, size_t n);

#endif
