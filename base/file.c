/* Whole-file reads, atomic writes, mkdir -p and the include-dir search (pto/base.h): the one
 * copy every module uses. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pto/base.h"

int pto_file_read_errno(const char *path, int regular_only, uint8_t **out_buf, size_t *out_len,
                        pto_file_step *out_step) {
  *out_buf = NULL;
  *out_len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *out_step = PTO_FILE_STEP_OPEN;
    return errno;
  }
  int err = 0;
  uint8_t *buf = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    err = errno;
    *out_step = PTO_FILE_STEP_STAT;
    goto done;
  }
  if (regular_only && !S_ISREG(st.st_mode)) {
    err = EINVAL;
    *out_step = PTO_FILE_STEP_NOT_REGULAR;
    goto done;
  }
  /* One byte more than the size: reading it means the file grew since fstat, and keeps a byte
   * for the terminating NUL otherwise. A pipe or device reports no size: start at 64 KiB. */
  size_t alloc = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : (size_t)1 << 16, len = 0;
  buf = malloc(alloc);
  if (!buf) {
    err = ENOMEM;
    *out_step = PTO_FILE_STEP_MEMORY;
    goto done;
  }
  for (;;) {
    if (len == alloc) {
      uint8_t *nb = alloc <= SIZE_MAX / 2 ? realloc(buf, 2 * alloc) : NULL;
      if (!nb) {
        err = ENOMEM;
        *out_step = PTO_FILE_STEP_MEMORY;
        goto done;
      }
      buf = nb;
      alloc *= 2;
    }
    ssize_t n = read(fd, buf + len, alloc - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      *out_step = PTO_FILE_STEP_READ;
      goto done;
    }
    if (n == 0) break; /* len < alloc: room for the NUL */
    len += (size_t)n;
  }
  buf[len] = 0;
  *out_buf = buf;
  *out_len = len;
  buf = NULL;
done:
  free(buf);
  close(fd);
  return err;
}

pto_status pto_file_read(const char *path, int regular_only, uint8_t **out_buf, size_t *out_len) {
  pto_file_step step;
  int err = pto_file_read_errno(path, regular_only, out_buf, out_len, &step);
  switch (err ? step : PTO_FILE_STEP_OPEN) {
  case PTO_FILE_STEP_OPEN:
    if (!err) return PTO_OK;
    return pto_status_make(err == ENOENT ? PTO_STATUS_NOT_FOUND : PTO_STATUS_IO,
                           "cannot open %s: %s", path, strerror(err));
  case PTO_FILE_STEP_STAT:
    return pto_status_make(PTO_STATUS_IO, "cannot stat %s: %s", path, strerror(err));
  case PTO_FILE_STEP_NOT_REGULAR:
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: not a regular file", path);
  case PTO_FILE_STEP_MEMORY:
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading %s", path);
  case PTO_FILE_STEP_READ: break;
  }
  return pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(err));
}

pto_status pto_file_read_stream(FILE *f, const char *name, uint8_t **out_buf, size_t *out_len) {
  *out_buf = NULL;
  *out_len = 0;
  size_t len = 0, cap = 0;
  uint8_t *buf = NULL;
  for (;;) {
    if (len + 65536 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
      uint8_t *nb = realloc(buf, ncap);
      if (!nb) {
        free(buf);
        return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading %s", name);
      }
      buf = nb;
      cap = ncap;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (!n) break;
  }
  if (ferror(f)) {
    free(buf);
    return pto_status_make(PTO_STATUS_IO, "cannot read %s", name);
  }
  buf[len] = 0;
  *out_buf = buf;
  *out_len = len;
  return PTO_OK;
}

pto_status pto_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    pto_status s = pto_status_make(PTO_STATUS_IO, "cannot create %s: %s", tmp, strerror(err));
    errno = err;
    return s;
  }
  const char *p = data;
  size_t left = len;
  int err = 0;
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    p += n;
    left -= (size_t)n;
  }
  if (!err && fchmod(fd, mode) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    pto_status s = pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(err));
    errno = err;
    return s;
  }
  return PTO_OK;
}

pto_status pto_file_mkdirs(const char *path, mode_t mode) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
  for (char *c = tmp + 1;; c++) {
    if (*c && *c != '/') continue;
    char saved = *c;
    *c = 0;
    if (mkdir(tmp, mode) != 0 && errno != EEXIST) {
      int err = errno;
      pto_status s =
          pto_status_make(PTO_STATUS_IO, "cannot create directory %s: %s", tmp, strerror(err));
      errno = err;
      return s;
    }
    *c = saved;
    if (!saved) break;
  }
  return PTO_OK;
}

static int has_header(const char *dir) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/pto/pto_orchestration_api.h", dir);
  return access(p, R_OK) == 0;
}

void pto_file_include_dir(const char *beside_lib, char *out, size_t n) {
  const char *e = getenv("PTO_INCLUDE_DIR");
  if (e && *e) {
    snprintf(out, n, "%s", e);
    return;
  }
  if (beside_lib && strchr(beside_lib, '/')) {
    char lib[PATH_MAX], cand[PATH_MAX], real[PATH_MAX];
    snprintf(lib, sizeof lib, "%s", beside_lib);
    snprintf(cand, sizeof cand, "%s/../include", dirname(lib));
    if (has_header(cand) && realpath(cand, real)) {
      snprintf(out, n, "%s", real);
      return;
    }
  }
  snprintf(out, n, "%s",
           has_header(PTO_SOURCE_INCLUDE_DIR) ? PTO_SOURCE_INCLUDE_DIR : PTO_INSTALL_INCLUDE_DIR);
}
