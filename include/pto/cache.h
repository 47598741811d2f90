/* pto cache: administration of the binary cache, and the loader's warning hook.
 *
 * Programs go through the cache with pto_compile and pto_compile_to_dir (pto/loader.h); this
 * header is for inspecting and maintaining it (`pto cache ...`). The cache root ROOT is
 * $PTO_CACHE_DIR, else $XDG_CACHE_HOME/pto, else ~/.cache/pto, created 0700 and used only when
 * it is owned by this user and not group/world-writable. Layout:
 *
 *   ROOT/<k[0:2]>/<k[2:32]>/  one entry per key k: a complete work dir (manifest.json last); its
 *                             directory mtime is the entry's last use, refreshed on every hit;
 *                             key.txt (the text that was hashed) when PTO_CACHE_DEBUG=1
 *   ROOT/tmp/                 private build dirs "<key>-<pid>-XXXXXX", renamed into place whole
 *   ROOT/stats                counters of every process, updated under flock(2)
 *   ROOT/lock                 flock(2)ed by the one cleaner that evicts at a time
 *   ROOT/toolchain            the key's toolchain and target lines (compilers, compiler library,
 *                             headers' hash, CPU), under a probe: the stat (device, inode, size,
 *                             mtime, ctime) of each file they come from, the variables that
 *                             choose them and the boot id; any change recomputes them
 *                             (PTO_CACHE_NO_TOOLCHAIN_MEMO=1: always)
 *
 * Readers take no lock: an entry appears by rename(2) and disappears by rename(2) into ROOT/tmp
 * before it is deleted, so a reader sees a whole entry or none. Every file of an entry is checked
 * against the XXH3-128 hashes and Build-IDs of its manifest before use; a mismatch is reported
 * through the warning hook, counted as a corruption, and the entry is discarded and rebuilt.
 * Entries still in use may be evicted: dlopen'ed files stay mapped after they are deleted.
 *
 * Environment: PTO_CACHE_MAX_SIZE (bytes, or with a K/M/G/T suffix: 512M, 2G) bounds the cache;
 * after each store the least recently used entries are evicted until it fits.
 * PTO_CACHE_DEBUG=1 writes key.txt into each new entry (and into work dirs written from the
 * cache), so that two misses can be explained by a diff.
 * For tests only: PTO_CACHE_TARGET_OVERRIDE replaces the host CPU identity in the key. The test
 * build of the loader (PTO_TEST_HOOKS: the unit tests and the build tree's pto_test, never the
 * library that ships) also reads PTO_CACHE_TEST_PAUSE=SECONDS, a sleep between building an entry
 * and publishing it, PTO_CACHE_TEST_GATE=W,R (pipe fds: at that point one byte is written to W,
 * then one awaited on R), and PTO_CACHE_TEST_FAIL_PUBLISH=ENOSPC|EROFS|EACCES, which makes
 * publishing fail with that error. The toolchain and target identity are read once per process,
 * from ROOT/toolchain when its probe matches. */
#ifndef PTO_CACHE_H
#define PTO_CACHE_H

#include <stdint.h>

#include "pto/export.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- warnings --------------------------------------------------------------------------- */

/* The loader reports what it recovers from (a corrupt entry discarded, a cache it cannot write)
 * through one hook instead of printing. The default writes "pto: warning: MESSAGE\n" to stderr.
 * fn == NULL restores the default. The hook may be called from any thread that compiles. */
typedef void (*pto_warning_fn)(void *ctx, const char *message);
PTO_API void pto_loader_set_warning_hook(pto_warning_fn fn, void *ctx);

/* ---- statistics ------------------------------------------------------------------------- */

typedef struct pto_cache_stats {
  /* Persisted in ROOT/stats, summed over every process that used the cache. */
  uint64_t hits;        /* a request served from a disk entry */
  uint64_t misses;      /* no entry: compiled */
  uint64_t stores;      /* entries published */
  uint64_t evictions;   /* entries removed to fit PTO_CACHE_MAX_SIZE or by gc */
  uint64_t corruptions; /* entries that failed verification (discarded) */
  uint64_t races;       /* publications that lost to another process's equal entry */
  uint64_t uncached;    /* compiles that could not be cached (read-only, full, refused dir) */
  /* This process only: requests answered by the in-process map without touching disk. */
  uint64_t memory_hits;
  /* A scan of ROOT now. */
  uint64_t entries;
  uint64_t bytes;
  uint64_t max_bytes; /* PTO_CACHE_MAX_SIZE, 0 when unset */
  /* The remote second level (PTO_REMOTE_CACHE), persisted in ROOT/stats like the above. */
  uint64_t remote_hits;     /* a local miss served by a verified remote entry */
  uint64_t remote_misses;   /* the remote had no entry */
  uint64_t remote_stores;   /* entries copied to the remote */
  uint64_t remote_errors;   /* the remote failed (down, slow, garbage): off for that process */
  uint64_t remote_refusals; /* fetched entries refused: bad hashes, unsigned or badly signed */
} pto_cache_stats;

PTO_API PTO_MUST_USE pto_status pto_cache_stats_get(pto_cache_stats *out_stats);

/* ---- the remote second level (docs/remote-cache.md) -------------------------------------- */

/* The remote cache URL (http://, https:// or redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]) for
 * this process,
 * instead of $PTO_REMOTE_CACHE; NULL goes back to the environment. A local miss asks it, a
 * local store is copied to it; entries are signed and verified with $PTO_REMOTE_CACHE_KEY (or
 * the content of $PTO_REMOTE_CACHE_KEY_FILE) when set. Requests are bounded by
 * $PTO_REMOTE_CACHE_TIMEOUT_MS (default 2000); the first failure turns the remote off for the
 * rest of the process, with one warning. */
PTO_API PTO_MUST_USE pto_status pto_cache_set_remote(const char *url);
/* 1 when url starts with a scheme the remote cache is reached by (the list above, lower case as
 * written; NULL is 0), else 0: the one list, which pto_cache_set_remote's and $PTO_REMOTE_CACHE's
 * URL are opened by. Its parts may still be bad (a redis:// URL without a host): that is found
 * when the remote is first used. */
PTO_API int pto_cache_remote_url_supported(const char *url);
/* The schemes as a message names them: "http://, https:// or redis://". A static string. */
PTO_API const char *pto_cache_remote_schemes(void);
/* Calls fn for every entry of the remote (key and size of its object). UNIMPLEMENTED for a
 * backend that cannot list (HTTP); INVALID_ARGUMENT when no remote is set. */
PTO_API PTO_MUST_USE pto_status pto_cache_remote_list(void (*fn)(void *ctx, const char *key,
                                                                 uint64_t bytes),
                                                      void *ctx);

/* ---- entries ---------------------------------------------------------------------------- */

typedef struct pto_cache_entry {
  char key[33];
  char *path;     /* the entry dir, absolute */
  char *program;  /* from the manifest; NULL when the manifest does not read */
  char *entry;    /* the entry as the user named it (pto_signature_entry_name); NULL likewise */
  uint64_t bytes; /* sum of its files' sizes */
  int64_t last_use_ns; /* CLOCK_REALTIME of the last hit (or of the store) */
  int64_t created_ns;  /* mtime of its manifest */
  /* The manifest schema of another pto version ("pto.manifest/2") when the entry is that
   * version's (its manifest matches its seal and names that schema: this pto never looks it up,
   * and pto_cache_verify leaves it alone; program and entry are NULL); NULL for this version's
   * entries and for unreadable ones. */
  char *other_schema;
} pto_cache_entry;

/* Every entry, most recently used first. */
PTO_API PTO_MUST_USE pto_status pto_cache_list(pto_cache_entry **out_entries, int *out_count);
PTO_API void pto_cache_list_free(pto_cache_entry *entries, int count);

/* The entry whose key starts with prefix (1 to 32 hex digits): NOT_FOUND when none does,
 * INVALID_ARGUMENT naming the count when several do. *out_path is freed with pto_free. */
PTO_API PTO_MUST_USE pto_status pto_cache_find(const char *prefix, char out_key[33],
                                               char **out_path);

/* Removes the entry whose key starts with prefix (as pto_cache_find finds it: NOT_FOUND when
 * none does, INVALID_ARGUMENT when several do, and then nothing is removed; IO when the entry
 * cannot be removed, a read-only cache dir). out_key (may be NULL) gets the full key removed. */
PTO_API PTO_MUST_USE pto_status pto_cache_remove(const char *prefix, char out_key[33]);

/* Checks one entry dir completely: the manifest matches its seal (manifest.xxh128), reads and
 * names this key, every listed file has its recorded hash, both shared objects their recorded
 * Build-ID, the dir belongs to this user and is not group/world-writable. Loads nothing. */
PTO_API PTO_MUST_USE pto_status pto_cache_verify_entry(const char *entry_dir, const char *key);

/* Verifies every entry; a bad one is counted as a corruption, discarded, then reported to fn
 * (which may be NULL); one that cannot be removed (a read-only cache dir) stays, its problem
 * prefixed with "cannot remove DIR (reason)". An entry of another pto version (its manifest
 * matches its seal and names another schema) is counted checked and left alone. */
typedef void (*pto_cache_verify_fn)(void *ctx, const char *key, pto_status problem);
PTO_API PTO_MUST_USE pto_status pto_cache_verify(pto_cache_verify_fn fn, void *ctx,
                                                 int *out_checked, int *out_corrupt);

typedef struct pto_cache_gc_result {
  uint64_t evicted, evicted_bytes; /* entries removed, least recently used first */
  uint64_t entries, bytes;         /* what is left */
  uint64_t stale_tmp;              /* build dirs of dead processes removed */
} pto_cache_gc_result;

/* Evicts least recently used entries until the cache holds at most max_bytes (0: evict nothing)
 * and removes build dirs left by processes that died (an entry that cannot be removed, in a
 * read-only cache dir, is left and not counted). Waits for a concurrent cleaner. */
PTO_API PTO_MUST_USE pto_status pto_cache_gc(uint64_t max_bytes, pto_cache_gc_result *out_result);

/* Removes every entry (counters are kept). *out_removed counts the entries removed; an entry
 * that cannot be removed (a read-only cache dir) is left and makes it fail (IO), after the
 * others are removed. */
PTO_API PTO_MUST_USE pto_status pto_cache_clear(uint64_t *out_removed);

/* "4096", "512K", "512M", "2G", "1T" (powers of 1024; an optional trailing "B" or "iB"). */
PTO_API PTO_MUST_USE pto_status pto_cache_parse_size(const char *text, uint64_t *out_bytes);

#ifdef __cplusplus
}
#endif
#endif
