/* Reading input files safely. Every reader of outside input (sources, manifests, cache entries,
 * work-dir files, .npy files, logs) opens its file through here, so that a FIFO, a device or a
 * directory is rejected without being opened for reading (no hang on a FIFO without a writer)
 * and every read has a size limit with a clear error. Statuses: NOT_FOUND for a missing path,
 * INVALID_ARGUMENT for a path that is not a readable regular file or is over the limit (the
 * caller named bad input), IO for a failing read, OUT_OF_MEMORY. */
#ifndef PTO_FILE_H
#define PTO_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size limits by kind of input. */
#define PTO_FILE_MAX_SOURCE (UINT64_C(256) << 20) /* .ptir, .cpp, .ll, manifest.json */
#define PTO_FILE_MAX_BINARY (UINT64_C(4) << 30)   /* shared objects, objects */
#define PTO_FILE_MAX_LOG (UINT64_C(4) << 30)      /* [STRACE] logs */
#define PTO_FILE_MAX_DATA (UINT64_C(64) << 30)    /* .npy inputs */

/* Opens path for reading if it is a regular file of at most max_bytes (0: no limit): checked
 * with stat before the open, and again with fstat on the descriptor (opened O_NONBLOCK, then
 * made blocking), so a file swapped in between is caught too. *out_size gets its size. */
pto_status pto_file_open_regular(const char *path, uint64_t max_bytes, int *out_fd,
                                 uint64_t *out_size);

/* Reads a whole regular file of at most max_bytes into a malloc'd buffer with a NUL after the
 * last byte (not counted in *out_len). */
pto_status pto_file_read(const char *path, uint64_t max_bytes, uint8_t **out_buf, size_t *out_len);

/* Writes the concatenation of bufs to path through a temp file in the same directory, fsync
 * and a rename, so a full disk or a crash never leaves a truncated file; an existing file keeps
 * its mode and owner, and a symlink keeps pointing at its target, which gets the new contents.
 * On failure the old file is unchanged and the temp file removed. */
pto_status pto_file_write_atomic(const char *path, const void *const *bufs, const size_t *lens,
                                 int nbufs);

#ifdef __cplusplus
}
#endif
#endif
