/* Whole-file reads, atomic writes, mkdir -p and the include-dir search (pto/base.h): the one
 * copy every module uses. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "pto/base.h"

pto_status pto_file_read_stream(FILE *f, const char *name, uint64_t max_bytes, uint8_t **out_buf,
                                size_t *out_len) {
  if (!f) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_read_stream: f is NULL");
  if (!out_buf)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_read_stream: out_buf is NULL");
  if (!out_len)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_read_stream: out_len is NULL");
  *out_buf = NULL;
  *out_len = 0;
  size_t len = 0, cap = 0;
  uint8_t *buf = NULL;
  /* One byte past the limit (and the NUL) is enough to know the stream is over it. */
  size_t capmax = max_bytes && max_bytes < SIZE_MAX - 2 ? (size_t)max_bytes + 2 : SIZE_MAX;
  for (;;) {
    if (len + 65536 + 1 > cap && cap < capmax) {
      size_t ncap = cap ? (cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX) : (size_t)1 << 20;
      if (ncap > capmax) ncap = capmax;
      uint8_t *nb = pto_realloc(buf, ncap);
      if (!nb) {
        free(buf);
        return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading %s", name);
      }
      buf = nb;
      cap = ncap;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (max_bytes && len > max_bytes) {
      free(buf);
      if (max_bytes >= (1u << 20))
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "%s holds more than the limit of %llu MiB for this kind of input",
                               name, (unsigned long long)(max_bytes >> 20));
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s holds more than the limit of %llu bytes for this kind of input",
                             name, (unsigned long long)max_bytes);
    }
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

/* ---- temp files a fatal signal must not leave behind ---------------------------------------
 * The temp files pto_file_write_atomic and pto_file_replace are writing, in slots that
 * pto_file_remove_temps (called from a signal handler) can read without a lock: a slot's state
 * (0 free, 1 being filled, 2 holding a path) is atomic, and the path is complete before the state
 * says 2. Global state shared by every thread; the atomics are its only guard. */
enum { TEMP_SLOTS = 32 };
static struct {
  atomic_int state;
  pid_t pid;  /* a forked child does not remove its parent's temp files */
  int is_dir; /* a build directory (pto_file_make_temp_dir): removed with what it holds */
  char path[PATH_MAX + 16];
} g_temps[TEMP_SLOTS];

/* The slot now holding path, or -1 when every slot is taken (that temp file is not tracked). */
static int temp_track_kind(const char *path, int is_dir) {
  for (int i = 0; i < TEMP_SLOTS; i++) {
    int expect = 0;
    if (!atomic_compare_exchange_strong(&g_temps[i].state, &expect, 1)) continue;
    snprintf(g_temps[i].path, sizeof g_temps[i].path, "%s", path);
    g_temps[i].pid = getpid();
    g_temps[i].is_dir = is_dir;
    atomic_store(&g_temps[i].state, 2);
    return i;
  }
  return -1;
}

static int temp_track(const char *path) { return temp_track_kind(path, 0); }

static void temp_untrack(int slot) {
  if (slot >= 0) atomic_store(&g_temps[slot].state, 0);
}

/* Temp files being created (between mkostemp and temp_track), and whether
 * pto_file_remove_temps ran: the process is ending, so no new temp file is made. Signals are
 * blocked per thread, so a fatal signal can run the handler on another thread while one is
 * between the two calls (a worker thread of the run: a SIGTERM landing there left the temp file
 * behind): the handler waits for g_creating to drop to 0, and a creation that starts after it
 * said g_ending backs out. Both are seq_cst, so one of the two always sees the other. */
static atomic_int g_creating, g_ending;

/* mkostemp of tmp (a template) and temp_track of the name it made, with every signal blocked in
 * this thread between the two, so a handler calling pto_file_remove_temps never runs here while
 * the file exists and is not tracked yet, and one on another thread waits for it. The fd, or -1
 * with errno kept; *slot is temp_track's. */
static int temp_create(char *tmp, int *slot) {
  sigset_t all, was;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_BLOCK, &all, &was) == 0;
  atomic_fetch_add(&g_creating, 1);
  int fd = -1, err = EINTR;
  *slot = -1;
  if (!atomic_load(&g_ending)) {
    fd = mkostemp(tmp, O_CLOEXEC), err = errno;
    *slot = fd >= 0 ? temp_track(tmp) : -1;
  }
  atomic_fetch_sub(&g_creating, 1);
  if (masked) pthread_sigmask(SIG_SETMASK, &was, NULL);
  errno = err;
  return fd;
}

char *pto_file_make_temp_dir(char *tmpl, int *out_slot) {
  sigset_t all, was;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_BLOCK, &all, &was) == 0;
  atomic_fetch_add(&g_creating, 1);
  char *dir = NULL;
  int err = EINTR;
  *out_slot = -1;
  if (!atomic_load(&g_ending)) {
    dir = mkdtemp(tmpl), err = errno;
    *out_slot = dir ? temp_track_kind(tmpl, 1) : -1;
  }
  atomic_fetch_sub(&g_creating, 1);
  if (masked) pthread_sigmask(SIG_SETMASK, &was, NULL);
  errno = err;
  return dir;
}

void pto_file_forget_temp_dir(int slot) { temp_untrack(slot); }

/* Removes name (in the folder dirfd) and everything below it, with syscalls alone. */
static void remove_tree_at(int dirfd, const char *name, int depth) {
  if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  /* Entries are removed while the folder is read: read it again until a pass removes none. */
  for (int removed = 1, pass = 0; removed && pass < 8; pass++) {
    removed = 0;
    if (lseek(fd, 0, SEEK_SET) != 0) break;
    char buf[4096] __attribute__((aligned(8)));
    for (ssize_t n; (n = getdents64(fd, buf, sizeof buf)) > 0;) {
      for (ssize_t off = 0; off < n;) {
        struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);
        off += e->d_reclen;
        const char *d = e->d_name;
        if (d[0] == '.' && (!d[1] || (d[1] == '.' && !d[2]))) continue;
        if (depth < 32)
          remove_tree_at(fd, d, depth + 1); /* a file unlinked, a folder emptied first */
        else
          unlinkat(fd, d, 0);
        removed = 1;
      }
    }
  }
  close(fd);
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

void pto_file_remove_tree_signal_safe(const char *path) {
  int saved = errno;
  remove_tree_at(AT_FDCWD, path, 0);
  errno = saved;
}

void pto_file_remove_temps(void) {
  atomic_store(&g_ending, 1);
  /* A creation in flight on another thread takes microseconds; bounded at about a second so a
   * thread stopped there (a debugger) cannot hold the process's end. */
  for (int i = 0; i < 100000 && atomic_load(&g_creating) > 0; i++) {
    struct timespec ts = {0, 10000};
    nanosleep(&ts, NULL);
  }
  pid_t self = getpid();
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (atomic_load(&g_temps[i].state) == 2 && g_temps[i].pid == self) {
      if (g_temps[i].is_dir)
        remove_tree_at(AT_FDCWD, g_temps[i].path, 0);
      else
        unlink(g_temps[i].path);
    }
}

/* The template of a temp file beside path, "<path>.tmp-XXXXXX", with the file name cut so the
 * temp file's name stays within NAME_MAX (255 bytes): a file whose name has 250 bytes may be
 * written, so its temp file must be creatable too. 0, or -1 when it does not fit in cap. */
static int temp_template(char *tmp, size_t cap, const char *path) {
  static const char suffix[] = ".tmp-XXXXXX";
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash + 1 - path) : 0;
  size_t base = strlen(path + dirlen), keep = NAME_MAX - (sizeof suffix - 1);
  if (base > keep) base = keep;
  int n = snprintf(tmp, cap, "%.*s%.*s%s", (int)dirlen, path, (int)base, path + dirlen, suffix);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

pto_status pto_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode) {
  char tmp[PATH_MAX];
  if (temp_template(tmp, sizeof tmp, path) != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
  int slot;
  int fd = temp_create(tmp, &slot);
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
  if (err) unlink(tmp);
  temp_untrack(slot);
  if (err) {
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

/* ---- reading outside input safely, replacing a user's file (from the reliability work) ---- */

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

static pto_status open_error(const char *path, int err) {
  pto_status_code c = err == ENOENT ? PTO_STATUS_NOT_FOUND
                      : err == EACCES || err == EPERM || err == ENOTDIR || err == ELOOP ||
                              err == ENAMETOOLONG || err == EISDIR || err == ENXIO
                          ? PTO_STATUS_INVALID_ARGUMENT
                          : PTO_STATUS_IO;
  return pto_status_make(c, "cannot open %s: %s", path, strerror(err));
}

static pto_status check_stat(const char *path, const struct stat *st, uint64_t max_bytes) {
  if (!S_ISREG(st->st_mode))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s is %s: only regular files are read",
                           path, kind_of(st->st_mode));
  if (max_bytes && (uint64_t)st->st_size > max_bytes)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s is %llu bytes, more than the limit of %llu MiB for this kind of "
                           "file",
                           path, (unsigned long long)st->st_size,
                           (unsigned long long)(max_bytes >> 20));
  return PTO_OK;
}

pto_status pto_file_open_regular(const char *path, uint64_t max_bytes, int *out_fd,
                                 uint64_t *out_size) {
  if (!out_fd)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_open_regular: out_fd is NULL");
  *out_fd = -1;
  if (out_size) *out_size = 0;
  if (!path || !*path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "an empty path names no file");
  struct stat st;
  if (stat(path, &st) != 0) return open_error(path, errno);
  PTO_RETURN_IF_ERROR(check_stat(path, &st, max_bytes));
  /* O_NONBLOCK: a FIFO swapped in after the stat must not block the open. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return open_error(path, errno);
  pto_status s = PTO_OK;
  if (fstat(fd, &st) != 0)
    s = pto_status_make(PTO_STATUS_IO, "cannot stat %s: %s", path, strerror(errno));
  if (!s) s = check_stat(path, &st, max_bytes);
  /* A regular file now: O_NONBLOCK has no effect on its reads, so it stays set. */
  if (s) {
    close(fd);
    return s;
  }
  *out_fd = fd;
  if (out_size) *out_size = (uint64_t)st.st_size;
  return PTO_OK;
}

pto_status pto_file_read(const char *path, uint64_t max_bytes, uint8_t **out_buf, size_t *out_len) {
  if (!out_buf)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_read: out_buf is NULL");
  if (!out_len)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_read: out_len is NULL");
  *out_buf = NULL;
  *out_len = 0;
  int fd;
  uint64_t size;
  PTO_RETURN_IF_ERROR(pto_file_open_regular(path, max_bytes, &fd, &size));
  pto_status s = PTO_OK;
  if (size >= SIZE_MAX) {
    close(fd);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: too large to read", path);
  }
  /* One byte more than the size: reading it means the file grew since fstat, and keeps a byte
   * for the terminating NUL otherwise. */
  size_t alloc = (size_t)size + 1, len = 0;
  uint8_t *buf = pto_malloc(alloc);
  if (!buf) {
    close(fd);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading %s (%llu bytes)", path,
                           (unsigned long long)size);
  }
  for (;;) {
    if (len == alloc) {
      if (max_bytes && len > max_bytes) {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                            "%s grew past the limit of %llu MiB while it was read", path,
                            (unsigned long long)(max_bytes >> 20));
        break;
      }
      if (pto_grow(&buf, 1, &alloc, alloc + 1)) {
        s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading %s", path);
        break;
      }
    }
    ssize_t n = read(fd, buf + len, alloc - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
      break;
    }
    if (n == 0) break; /* len < alloc: room for the NUL */
    len += (size_t)n;
  }
  close(fd);
  if (s) {
    free(buf);
    return s;
  }
  buf[len] = 0;
  *out_buf = buf;
  *out_len = len;
  return PTO_OK;
}

/* An unnamed file (O_TMPFILE) in the directory of target, or -1 where the file system has none
 * or /proc is missing (linkat names it through /proc/self/fd). A process killed while it writes
 * one (SIGKILL, which no handler sees) leaves nothing behind; the named temp file it replaces
 * stayed, as large as the output. */
static int temp_open_unnamed(const char *target) {
  char dir[PATH_MAX];
  const char *slash = strrchr(target, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == target)
    snprintf(dir, sizeof dir, "/");
  else if (snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target) >= (int)sizeof dir)
    return -1;
  if (access("/proc/self/fd", X_OK) != 0) return -1;
  return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

/* Names the unnamed file fd tmp (a template ending in XXXXXX, filled in here) and tracks it as
 * temp_create does, with signals blocked between the two. 0, or -1 with errno kept (nothing was
 * named then). */
static int temp_link(int fd, char *tmp, int *slot) {
  static const char k_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  char *x = tmp + strlen(tmp) - 6;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
               (uint64_t)(uintptr_t)tmp;
  sigset_t all, was;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_BLOCK, &all, &was) == 0;
  atomic_fetch_add(&g_creating, 1);
  int rc = -1, err = EINTR;
  *slot = -1;
  for (int tries = 0; tries < 100 && !atomic_load(&g_ending); tries++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    for (int i = 0; i < 6; i++)
      x[i] = k_chars[(r >> (16 + 6 * i)) % (sizeof k_chars - 1)];
    if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
      rc = 0;
      *slot = temp_track(tmp);
      break;
    }
    err = errno;
    if (err != EEXIST) break;
  }
  atomic_fetch_sub(&g_creating, 1);
  if (masked) pthread_sigmask(SIG_SETMASK, &was, NULL);
  errno = err;
  return rc;
}

/* The extended attributes of the file src onto the file open as fd: its POSIX ACLs
 * (system.posix_acl_access) and user.* attributes, which a rename would otherwise drop (losing
 * an ACL can widen access: the mode's group bits are the ACL's mask). Attributes the system sets
 * itself (security.*) or only root may (trusted.*) are left to it. 0, or an errno. */
static int copy_xattrs(const char *src, int fd) {
  ssize_t n = listxattr(src, NULL, 0);
  if (n < 0) return errno == ENOTSUP || errno == ENOSYS ? 0 : errno;
  if (n == 0) return 0;
  char *names = malloc((size_t)n + 1), *val = NULL;
  if (!names) return ENOMEM;
  int err = 0;
  n = listxattr(src, names, (size_t)n);
  if (n < 0) err = errno == ERANGE ? EAGAIN : errno; /* grew meanwhile */
  for (ssize_t off = 0; !err && off < n; off += (ssize_t)strlen(names + off) + 1) {
    const char *name = names + off;
    if (strncmp(name, "user.", 5) && strcmp(name, "system.posix_acl_access")) continue;
    ssize_t len = getxattr(src, name, NULL, 0);
    if (len < 0) {
      err = errno == ENODATA ? 0 : errno; /* removed meanwhile */
      continue;
    }
    char *grown = realloc(val, (size_t)len + 1);
    if (!grown) {
      err = ENOMEM;
      break;
    }
    val = grown;
    len = getxattr(src, name, val, (size_t)len);
    if (len < 0)
      err = errno == ENODATA ? 0 : errno;
    else if (fsetxattr(fd, name, val, (size_t)len, 0) != 0)
      err = errno;
  }
  free(val);
  free(names);
  return err;
}

pto_status pto_file_replace(const char *path, const void *const *bufs, const size_t *lens,
                            int nbufs) {
  if (!path) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_replace: path is NULL");
  /* A symlink keeps pointing where it did: the new contents go to its target. */
  char target[PATH_MAX];
  struct stat st;
  int exists = lstat(path, &st) == 0;
  if (exists && S_ISLNK(st.st_mode)) {
    if (!realpath(path, target))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s is a symlink to a missing file (%s)",
                             path, strerror(errno));
    exists = stat(target, &st) == 0;
  } else if (snprintf(target, sizeof target, "%s", path) >= (int)sizeof target) {
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
  }
  if (exists && !S_ISREG(st.st_mode))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s is not a regular file", path);
  /* A file its owner made read-only stays as it is, as a shell's '>' or cp leaves it: the rename
   * would replace it though its mode forbids writing it. */
  if (exists && access(target, W_OK) != 0 && (errno == EACCES || errno == EROFS))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "cannot write %s: %s (the old file is unchanged)", path,
                           strerror(errno));
  char tmp[PATH_MAX + 16];
  if (temp_template(tmp, sizeof tmp, target) != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
  /* Written unnamed where the file system allows it, named only once complete. */
  int slot = -1, named = 0;
  int fd = temp_open_unnamed(target);
  if (fd < 0) {
    fd = temp_create(tmp, &slot);
    if (fd < 0)
      return pto_status_make(PTO_STATUS_IO, "cannot write next to %s: %s", target, strerror(errno));
    named = 1;
  }
  int err = 0;
  for (int i = 0; i < nbufs && !err; i++) {
    const char *p = bufs[i];
    size_t left = lens[i];
    while (left && !err) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err = w < 0 ? errno : EIO;
        break;
      }
      p += w;
      left -= (size_t)w;
    }
  }
  /* The old file's mode and owner, or a new file's usual mode (0666 less the umask). */
  mode_t mask = umask(0);
  umask(mask);
  mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
  if (!err && fchmod(fd, mode) != 0) err = errno;
  if (!err && exists && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
      fchown(fd, st.st_uid, st.st_gid) != 0)
    err = errno;
  if (!err && exists) err = copy_xattrs(target, fd);
  if (!err && fsync(fd) != 0) err = errno;
  if (!err && !named) {
    if (temp_link(fd, tmp, &slot) == 0)
      named = 1;
    else
      err = errno;
  }
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, target) != 0) err = errno;
  if (err && named) unlink(tmp);
  temp_untrack(slot);
  if (err) {
    return pto_status_make(PTO_STATUS_IO, "cannot write %s: %s (the old file is unchanged)", path,
                           strerror(err));
  }
  return PTO_OK;
}
