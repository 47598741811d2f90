/* Small pieces of the binary cache: the warning hook, directory trees, atomic file writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_internal.h"

/* ---- warnings ------------------------------------------------------------------------- */

/* The hook and its context; g_warn_lock guards both and serializes warnings. */
static pthread_mutex_t g_warn_lock = PTHREAD_MUTEX_INITIALIZER;
static pto_warning_fn g_warn_fn;
static void *g_warn_ctx;

void pto_loader_set_warning_hook(pto_warning_fn fn, void *ctx) {
  pthread_mutex_lock(&g_warn_lock);
  g_warn_fn = fn;
  g_warn_ctx = ctx;
  pthread_mutex_unlock(&g_warn_lock);
}

static void warnv(const char *fmt, va_list ap) {
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, ap);
  pthread_mutex_lock(&g_warn_lock);
  if (g_warn_fn) {
    g_warn_fn(g_warn_ctx, msg);
  } else {
    /* The default hook: the one place the loader writes to stderr. */
    fprintf(stderr, "pto: warning: %s\n", msg);
  }
  pthread_mutex_unlock(&g_warn_lock);
}

void pto__loader_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  warnv(fmt, ap);
  va_end(ap);
}

void pto__loader_warn_once(int *once, const char *fmt, ...) {
  if (__atomic_exchange_n(once, 1, __ATOMIC_ACQ_REL)) return;
  va_list ap;
  va_start(ap, fmt);
  warnv(fmt, ap);
  va_end(ap);
}

/* ---- files ---------------------------------------------------------------------------- */

int pto__loader_errno_is_unwritable(int err) {
  return err == ENOSPC || err == EROFS || err == EACCES || err == EPERM || err == EDQUOT;
}

int64_t pto__loader_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Removes every entry of the directory open as dfd, then closes it. Never follows a symlink:
 * subdirectories are opened with O_NOFOLLOW relative to their parent, a symlink is unlinked
 * as a name. depth bounds the recursion (pto's own trees are a few levels deep). */
static void remove_dir_contents(int dfd, int depth) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth <= 0) continue;
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue;
      remove_dir_contents(sub, depth - 1);
      unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    } else {
      unlinkat(dirfd(d), e->d_name, 0);
    }
  }
  closedir(d);
}

void pto__loader_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path);
    return;
  }
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) remove_dir_contents(fd, 32);
  rmdir(path);
}

uint64_t pto__loader_tree_bytes(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return (uint64_t)st.st_size;
  if (!S_ISDIR(st.st_mode)) return 0;
  uint64_t total = 0;
  DIR *d = opendir(path);
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub) continue;
    total += pto__loader_tree_bytes(sub);
  }
  closedir(d);
  return total;
}
