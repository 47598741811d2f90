/* The cache's persisted counters: ROOT/stats, a few lines of text ("hits 12"), read, added to
 * and rewritten in place under an exclusive flock(2) by every process that uses the cache, so
 * `pto cache stats` sums them across processes. Counting is best effort: a cache that cannot be
 * written keeps no counts, and a failure never fails a compile. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"

#define STATS_HEADER "pto-cache-stats/1"

static const char *const k_names[PTO__COUNT_N] = {
    "hits",     "misses",      "stores",        "evictions",     "corruptions",   "races",
    "uncached", "remote_hits", "remote_misses", "remote_stores", "remote_errors", "remote_refusals",
};

static void parse(const char *text, uint64_t out[PTO__COUNT_N]) {
  memset(out, 0, sizeof(uint64_t) * PTO__COUNT_N);
  const char *line = text;
  while (line && *line) {
    char name[32];
    uint64_t v;
    if (sscanf(line, "%31s %" SCNu64, name, &v) == 2) {
      for (int i = 0; i < PTO__COUNT_N; i++)
        if (!strcmp(name, k_names[i])) out[i] = v;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
}

static ssize_t read_all(int fd, char *buf, size_t cap) {
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t n = pread(fd, buf + len, cap - 1 - len, (off_t)len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    len += (size_t)n;
  }
  buf[len] = 0;
  return (ssize_t)len;
}

void pto__loader_count(const char *root, pto__loader_counter c, uint64_t n) {
  if (!root || (unsigned)c >= PTO__COUNT_N || n == 0) return;
  char path[PATH_MAX], buf[1024];
  snprintf(path, sizeof path, "%s/stats", root);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* a FIFO, a socket: not counted */
    close(fd);
    return;
  }
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return;
    }
  }
  uint64_t v[PTO__COUNT_N];
  ssize_t old = read_all(fd, buf, sizeof buf);
  if (old < 0) {
    close(fd);
    return;
  }
  parse(buf, v);
  v[c] += n;
  int len = snprintf(buf, sizeof buf, STATS_HEADER "\n");
  for (int i = 0; i < PTO__COUNT_N; i++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, "%s %" PRIu64 "\n", k_names[i], v[i]);
  /* The text only grows (counters never shrink), so writing over the old text from offset 0
   * leaves nothing stale behind; a file longer than the new text (written by hand, or by a
   * later pto with more counters) is cut to it. */
  if (pwrite(fd, buf, (size_t)len, 0) == len && old > len) {
    if (ftruncate(fd, len) != 0) { /* harmless: parse stops at the text it knows */
    }
  }
  close(fd); /* releases the lock */
}

pto_status pto__loader_counts_read(const char *root, uint64_t out[PTO__COUNT_N]) {
  memset(out, 0, sizeof(uint64_t) * PTO__COUNT_N);
  char path[PATH_MAX], buf[1024];
  snprintf(path, sizeof path, "%s/stats", root);
  /* O_NONBLOCK: a FIFO put in its place must not block the open (pto cache stats hung on one
   * for good); only a regular file is read. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return PTO_OK;
    return pto_status_make(PTO_STATUS_IO, "cannot open %s: %s", path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return pto_status_make(PTO_STATUS_IO, "cannot read %s: it is %s, not a regular file", path,
                           S_ISDIR(st.st_mode)    ? "a directory"
                           : S_ISFIFO(st.st_mode) ? "a FIFO"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "a device");
  }
  /* A shared lock: never half of a concurrent rewrite. */
  while (flock(fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  ssize_t n = read_all(fd, buf, sizeof buf);
  close(fd);
  if (n < 0) return pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
  parse(buf, out);
  return PTO_OK;
}
