/* pto base: the bottom layer every other module builds on.
 *
 * It owns the status type (pto/status.h), the arena (pto/arena.h), dtype basics (pto/types.h)
 * and the small helpers each module would otherwise copy: a growable text buffer, whole-file
 * reads, atomic writes, mkdir -p, hex and hash formatting, and the search for the directory that
 * holds the orchestration header. They are exported from libpto_base so every module shares one
 * copy; they are stable within a pto version, not across versions. Nothing here prints, aborts
 * or exits. */
#ifndef PTO_BASE_H
#define PTO_BASE_H

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pto/arena.h"
#include "pto/export.h"
#include "pto/status.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version --------------------------------------------------------------------------- */

/* The version of the pto libraries loaded at run time, "MAJOR.MINOR.PATCH" (static storage). Each
 * libpto_*.so has the SONAME libpto_<module>.so.MAJOR: a program built against one major version
 * never loads another. `pto --version` prints it. */
PTO_API const char *pto_version(void);

/* ---- allocation ------------------------------------------------------------------------ */

/* Every allocation of pto's libraries (base, ir, compiler, loader, runtime, stats) goes through
 * these, so a test can make any one of them fail and check that the caller unwinds to a clean
 * status. Blocks come from libc: free(3) releases them. A size of 0 allocates 1 byte.
 * Allocations made inside other libraries (LLVM, libelf, jansson, libc itself: dlopen, stdio,
 * realpath, asprintf) and in generated code do not pass through here. */
PTO_API void *pto_malloc(size_t n);
/* Releases a block of these allocators, or any result a pto library documents as freed with
 * pto_free (texts, buffers, paths); NULL is ignored. The blocks come from libc, so free(3) works
 * too, but pto_free is the contract: a caller (the Python package, another language's binding)
 * never has to find the C library's free. */
PTO_API void pto_free(void *p);
PTO_API void *pto_calloc(size_t n, size_t size);
PTO_API void *pto_realloc(void *p, size_t n);
PTO_API char *pto_strdup(const char *s);
/* At most n bytes of s, NUL-terminated. */
PTO_API char *pto_strndup(const char *s, size_t n);
/* The formatted text in a new block (asprintf without its out-parameter); NULL on failure. */
PTO_API char *pto_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* realpath(path, NULL) through this allocator; NULL with errno set on failure. */
PTO_API char *pto_realpath(const char *path);
/* align is a power of two; n is rounded up to a multiple of it. */
PTO_API void *pto_aligned_alloc(size_t align, size_t n);

/* The one growth rule of pto's growable arrays: makes the array *parr points to (parr is the
 * address of the caller's T *; elements of elem bytes, *cap of them allocated) hold at least need
 * elements. From max(*cap, 16) the capacity doubles until need fits, clamped to what the counter
 * holds (SIZE_MAX for pto_grow, INT_MAX for pto_grow_int) and to PTRDIFF_MAX bytes; a need above
 * that fails as an allocation failure does. Returns 0 (at once when *cap >= need), or -1 with the
 * array and *cap unchanged (the old block stays valid and the caller's). */
PTO_API PTO_MUST_USE int pto_grow(void *parr, size_t elem, size_t *cap, size_t need);
PTO_API PTO_MUST_USE int pto_grow_int(void *parr, size_t elem, int *cap, int64_t need);

/* Allocation-failure injection exists in the test build only (base/alloc_test.h). */

/* ---- text ------------------------------------------------------------------------------ */

/* A growable malloc'd string, zero-initialized to start (pto_text t = {0}). data is always
 * NUL-terminated once anything was appended. Allocation failure is sticky: failed is set, later
 * appends are dropped, and the caller checks once at the end. */
typedef struct pto_text {
  char *data;
  size_t len, cap;
  int failed;
} pto_text;

PTO_API void pto_text_put(pto_text *t, const char *s, size_t n);
PTO_API void pto_text_puts(pto_text *t, const char *s);
PTO_API void pto_text_printf(pto_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
PTO_API void pto_text_vprintf(pto_text *t, const char *fmt, va_list ap);
/* n spaces. */
PTO_API void pto_text_pad(pto_text *t, size_t n);
/* The text (the caller frees it with pto_free; "" when nothing was appended), or NULL when an
 * append failed, in which case the buffer is freed. Either way t is left empty. */
PTO_API char *pto_text_finish(pto_text *t);
PTO_API void pto_text_free(pto_text *t);

/* ---- URL passwords ----------------------------------------------------------------------- */

/* The first URL password in text, the one rule of every message pto prints that may quote a URL
 * (docs/remote-cache.md): the PASSWORD of SCHEME://USER:PASSWORD@HOST, and of a scheme-less
 * USER:PASSWORD@HOST that stands as a word of its own (at the start of text or after a blank, a
 * quote, '=' or '('; USER not starting with '%' or '@', USER and PASSWORD of URL user-information
 * characters, HOST starting with a letter, digit or '['). A word with a '/' before its '@' is a
 * path ("/tmp/a:b@c", "dir/a:b@c"), not a URL, and keeps its bytes; a bare "a:b@c" reads as a
 * URL and is masked. The user information ends at the URL's last '@' before a '/', '?', '#', a
 * blank or a quote. Returns 1 with the password's offset in text and its length (either may be
 * 0), or 0 when text holds none. */
PTO_API int pto_url_password_find(const char *text, size_t *out_off, size_t *out_len);
/* text into out (n bytes, cut short to fit, NUL-terminated when n > 0) with every password
 * pto_url_password_find finds written as ***. Returns out. */
PTO_API const char *pto_url_redact(const char *text, char *out, size_t n);

/* ---- scalars and elements ---------------------------------------------------------------- */

/* Parses text as a scalar of dtype dt (base/scalar.c; -D, --in and the Python package's bindings
 * all come here): bool is true, false, 1 or 0; an integer is an optional '-' then decimal digits
 * or 0x and hex digits (no blanks, '+', octal or suffix) within the dtype's range; a float is what
 * strtod reads (decimal, 0x hex, inf, nan), rounded to the dtype, and a finite value that rounds
 * to infinity is refused. INVALID_ARGUMENT names the dtype and its range ("out of range for i8:
 * expected an integer from -128 to 127"), not the text: the caller annotates it with where the
 * text came from. *out is untouched on failure. */
PTO_API PTO_MUST_USE pto_status pto_scalar_parse(const char *text, pto_dtype dt, pto_scalar *out);
/* The range of integer dtype dt (bool, i8 .. u64, index) as [*lo, *hi], *lo <= 0 as int64 and
 * *hi as uint64: the one range pto_scalar_parse and pto_scalar_check hold a value to, which the
 * Python package asks for too. Returns 0, or -1 (nothing written) for a float or unknown dtype or a
 * NULL lo or hi. */
PTO_API int pto_dtype_int_range(pto_dtype dt, int64_t *lo, uint64_t *hi);
/* INVALID_ARGUMENT when the value of s lies outside the range of its dtype (an i8 of 300, a
 * bool of 2, a u8 of 256; floats always fit), naming the value and the range. */
PTO_API PTO_MUST_USE pto_status pto_scalar_check(pto_scalar s);
/* Element i of an array of dtype dt (any alignment), as a scalar of dtype dt: the one load and
 * store of an element by dtype. pto_elem_store writes v's value as dtype dt (v must fit it:
 * pto_scalar_check), through the same conversion as pto_scalar_to_slot. */
PTO_API pto_scalar pto_elem_load(pto_dtype dt, const void *base, int64_t i);
PTO_API void pto_elem_store(pto_dtype dt, void *base, int64_t i, pto_scalar v);

/* ---- files ----------------------------------------------------------------------------- */

/* Size limits by kind of input (pto_file_read, pto_file_open_regular). */
#define PTO_FILE_MAX_SOURCE (UINT64_C(256) << 20) /* .ptir, .cpp, .ll, manifest.json */
#define PTO_FILE_MAX_BINARY (UINT64_C(4) << 30)   /* shared objects, objects */
#define PTO_FILE_MAX_LOG (UINT64_C(4) << 30)      /* [STRACE] logs */
#define PTO_FILE_MAX_DATA (UINT64_C(64) << 30)    /* .npy inputs */

/* Every reader of outside input (sources, manifests, cache entries, work-dir files, .npy files,
 * logs) opens its file through these two, so a FIFO, a device or a directory is rejected without
 * being opened for reading (no hang on a FIFO without a writer) and every read has a size limit
 * with a clear error. Statuses: NOT_FOUND for a missing path, INVALID_ARGUMENT for a path that is
 * not a readable regular file or is over the limit, IO for a failing read, OUT_OF_MEMORY.
 *
 * pto_file_open_regular opens path for reading if it is a regular file of at most max_bytes
 * (0: no limit): checked with stat before the open and with fstat on the descriptor (opened
 * O_NONBLOCK, then made blocking), so a file swapped in between is caught too. */
PTO_API PTO_MUST_USE pto_status pto_file_open_regular(const char *path, uint64_t max_bytes,
                                                      int *out_fd, uint64_t *out_size);
/* Reads a whole regular file of at most max_bytes (0: no limit) into a buffer (freed with pto_free)
 * with a NUL after the last byte (not counted in *out_len). */
PTO_API PTO_MUST_USE pto_status pto_file_read(const char *path, uint64_t max_bytes,
                                              uint8_t **out_buf, size_t *out_len);
/* The rest of stream f (e.g. stdin), named name in messages, with a NUL after the last byte:
 * at most max_bytes (0: no limit), read no further than one byte past it; more is an
 * INVALID_ARGUMENT naming the limit. */
PTO_API PTO_MUST_USE pto_status pto_file_read_stream(FILE *f, const char *name, uint64_t max_bytes,
                                                     uint8_t **out_buf, size_t *out_len);
/* Writes data to path through a temp file in the same dir and rename(2), so a reader (or a
 * process that has the old file mapped) never sees a partial file. errno is kept on failure. */
PTO_API PTO_MUST_USE pto_status pto_file_write_atomic(const char *path, const void *data,
                                                      size_t len, mode_t mode);
/* Replaces a user's file with the concatenation of bufs through a temp file in the same
 * directory, fsync and a rename, so a full disk or a crash never leaves a truncated file (the
 * temp file is unnamed, O_TMPFILE, until complete where the file system allows: a process killed
 * meanwhile, by SIGKILL too, leaves no temp file either); an
 * existing file keeps its mode, owner, POSIX ACL and user.* extended attributes (not its inode:
 * its other hard links keep the old contents), and a symlink keeps pointing at its target, which
 * gets the new contents; a file this process may not write (access(2): a read-only mode) is
 * refused. On failure the old file is unchanged and the temp file removed. */
PTO_API PTO_MUST_USE pto_status pto_file_replace(const char *path, const void *const *bufs,
                                                 const size_t *lens, int nbufs);
/* Removes the temp files pto_file_write_atomic and pto_file_replace of this process are writing
 * now; async-signal-safe, for a handler of SIGINT/SIGTERM that then lets the signal end the
 * process (pto's command line installs one), so no partial temp file is left beside the output.
 * A temp file another thread is creating at that moment is waited for (at most about a second)
 * and removed too, and every later write of this process fails (EINTR): it is ending. */
PTO_API void pto_file_remove_temps(void);
/* mkdtemp(tmpl) for a build directory, tracked so that pto_file_remove_temps removes it with
 * everything in it (a compile's build dir, which a SIGINT/SIGTERM would otherwise leave behind):
 * tmpl, or NULL with errno set (EINTR once pto_file_remove_temps ran). *out_slot is the tracking
 * slot (-1: not tracked, every slot taken) for pto_file_forget_temp_dir, to call once the
 * directory is renamed away or removed. */
PTO_API char *pto_file_make_temp_dir(char *tmpl, int *out_slot);
PTO_API void pto_file_forget_temp_dir(int slot);
/* Removes path and everything below it with syscalls alone (async-signal-safe; errno kept), for
 * a signal handler; what it cannot remove (another user's file) stays. */
PTO_API void pto_file_remove_tree_signal_safe(const char *path);
/* mkdir -p with mode for the directories it creates; an IO status (errno kept) on failure. */
PTO_API PTO_MUST_USE pto_status pto_file_mkdirs(const char *path, mode_t mode);

/* Directory trees (base/tree.c). pto_file_opendir_at opens name (relative to dirfd; a path when
 * dirfd is AT_FDCWD) as a directory, never through a symlink; NULL with errno on failure. */
PTO_API DIR *pto_file_opendir_at(int dirfd, const char *name);
/* rm -rf without following symlinks, of a tree of any depth (iterative, a bounded number of
 * directories open); best effort. A path that is not a directory is unlinked. */
PTO_API void pto_file_remove_tree(const char *path);
/* Sum of the sizes of the regular files under path, without following symlinks (iterative; the
 * first 64 levels, deeper than pto ever writes). */
PTO_API uint64_t pto_file_tree_bytes(const char *path);

/* The directory that holds pto/pto_orchestration_api.h, for -I when compiling generated C++:
 * $PTO_INCLUDE_DIR, else <dir of beside_lib>/../include (the installed layout; beside_lib may be
 * NULL or a bare name), else the source tree's include/ when it is there, else the configured
 * install include dir. */
PTO_API void pto_file_include_dir(const char *beside_lib, char *out, size_t n);

/* ---- settings -------------------------------------------------------------------------- */

/* text, the value of setting name (an environment variable, or a command-line option), as a
 * decimal integer from min to max: digits only, with a leading '-' where min < 0 (no blanks,
 * '+', hex, suffix, exponent or fraction). Otherwise INVALID_ARGUMENT naming the setting, the
 * text and the range: "PTO_DIST_TIMEOUT_MS is 'abc': expected an integer from 1 to 86400000". */
PTO_API PTO_MUST_USE pto_status pto_parse_int_setting(const char *name, const char *text,
                                                      int64_t min, int64_t max, int64_t *out);
/* The integer environment variable name, as pto_parse_int_setting; dflt when unset or empty. */
PTO_API PTO_MUST_USE pto_status pto_env_int(const char *name, int64_t min, int64_t max,
                                            int64_t dflt, int64_t *out);
/* The environment variable name, which must be one of choices[0..nchoices): *out is its index;
 * dflt when unset or empty. Otherwise INVALID_ARGUMENT naming the variable and every choice. */
PTO_API PTO_MUST_USE pto_status pto_env_choice(const char *name, const char *const *choices,
                                               int nchoices, int dflt, int *out);

/* ---- hashes ---------------------------------------------------------------------------- */

/* Lowercase hex of len bytes into out (2 * len + 1 bytes). */
PTO_API void pto_hash_hex(const uint8_t *bytes, size_t len, char *out);
/* FNV-1a-64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
PTO_API uint64_t pto_hash_fnv1a64(const uint8_t *data, size_t len);
/* XXH3-128 of a buffer as 32 lowercase hex digits (canonical, big-endian byte order). */
PTO_API void pto_hash_xxh128_hex(const void *data, size_t len, char out_hex[33]);

#ifdef __cplusplus
}
#endif
#endif
