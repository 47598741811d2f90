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

/* The tree walks below hold at most this many directories open at once (one a level): pto's own
 * trees are a few levels deep, and a deeper one (a damaged or hostile entry) must cost neither
 * the stack nor every descriptor of the process. */
#define TREE_MAX_OPEN 64

/* One level of an iterative walk: the open directory and its name in its parent. */
typedef struct tree_level {
  DIR *d;
  char name[NAME_MAX + 1];
} tree_level;

/* Opens name (relative to dirfd; a path when dirfd is AT_FDCWD) as a directory, never through a
 * symlink. */
static DIR *open_dir_at(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return NULL;
  DIR *d = fdopendir(fd);
  if (!d) close(fd);
  return d;
}

/* Moves the directory name of parent up to the top of the tree being removed (top), under a
 * name of its own, for a later pass to remove. 1 when moved. */
static int hoist_dir(int parent, const char *name, int top, unsigned *serial) {
  for (int tries = 0; tries < 16; tries++) {
    char to[32];
    snprintf(to, sizeof to, ".pto-deep-%u", (*serial)++);
    if (renameat(parent, name, top, to) == 0) return 1;
    if (errno != EEXIST && errno != ENOTEMPTY) return 0;
  }
  return 0;
}

/* One depth-first pass removing what is under the directory open as top; a directory at the
 * depth bound is moved up to top instead. Returns the number moved (0: nothing left to do). */
static int remove_pass(int top, unsigned *serial) {
  tree_level lv[TREE_MAX_OPEN];
  int depth = 0, moved = 0;
  if (!(lv[0].d = open_dir_at(top, "."))) return 0;
  lv[0].name[0] = 0;
  depth = 1;
  while (depth > 0) {
    tree_level *cur = &lv[depth - 1];
    struct dirent *e = readdir(cur->d);
    if (!e) {
      closedir(cur->d);
      if (--depth > 0) unlinkat(dirfd(lv[depth - 1].d), cur->name, AT_REMOVEDIR);
      continue;
    }
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dirfd(cur->d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      unlinkat(dirfd(cur->d), e->d_name, 0);
    } else if (depth == TREE_MAX_OPEN) {
      moved += hoist_dir(dirfd(cur->d), e->d_name, top, serial);
    } else if ((lv[depth].d = open_dir_at(dirfd(cur->d), e->d_name))) {
      snprintf(lv[depth].name, sizeof lv[depth].name, "%s", e->d_name);
      depth++;
    }
  }
  return moved;
}

void pto__loader_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path);
    return;
  }
  int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top >= 0) {
    /* Each pass removes every directory above the ones it moves, so the passes end. */
    unsigned serial = 0;
    while (remove_pass(top, &serial) > 0) {
    }
    close(top);
  }
  rmdir(path);
}

uint64_t pto__loader_tree_bytes(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return (uint64_t)st.st_size;
  if (!S_ISDIR(st.st_mode)) return 0;
  /* Iterative, without following symlinks; below TREE_MAX_OPEN levels nothing is counted (pto
   * never writes so deep). */
  DIR *lv[TREE_MAX_OPEN];
  if (!(lv[0] = open_dir_at(AT_FDCWD, path))) return 0;
  int depth = 1;
  uint64_t total = 0;
  while (depth > 0) {
    DIR *cur = lv[depth - 1];
    struct dirent *e = readdir(cur);
    if (!e) {
      closedir(cur);
      depth--;
      continue;
    }
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (fstatat(dirfd(cur), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode))
      total += (uint64_t)st.st_size;
    else if (S_ISDIR(st.st_mode) && depth < TREE_MAX_OPEN &&
             (lv[depth] = open_dir_at(dirfd(cur), e->d_name)))
      depth++;
  }
  return total;
}

/* ---- the manifest's seal -------------------------------------------------------------- */

/* DIR/manifest.json's bytes. */
static pto_status read_manifest_text(const char *dir, uint8_t **out, size_t *out_len) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, out, out_len);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: missing", path);
  }
  return s;
}

pto_status pto__loader_manifest_seal(const char *dir) {
  uint8_t *text = NULL;
  size_t len = 0;
  char path[PATH_MAX], hash[PTO_HASH_HEX_LEN + 2];
  PTO_RETURN_IF_ERROR(read_manifest_text(dir, &text, &len));
  pto_manifest m;
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  pto_status s = pto_manifest_parse((const char *)text, len, path, &m);
  if (!s) {
    pto_hash_xxh128_hex(text, len, hash);
    strcat(hash, "\n");
    snprintf(path, sizeof path, "%s/%s", dir, PTO__MANIFEST_SEAL);
    s = pto_file_write_atomic(path, hash, strlen(hash), 0644);
    /* A host program's callee work dirs carry manifests of their own. */
    for (int i = 0; i < m.ncallees && !s; i++) {
      snprintf(path, sizeof path, "%s/callees/%s", dir, m.callees[i]);
      s = pto__loader_manifest_seal(path);
    }
    pto_manifest_free(&m);
  }
  free(text);
  return s;
}

pto_status pto__loader_manifest_check_seal(const char *dir, const void *text, size_t len) {
  char path[PATH_MAX], have[PTO_HASH_HEX_LEN + 1];
  snprintf(path, sizeof path, "%s/%s", dir, PTO__MANIFEST_SEAL);
  uint8_t *seal = NULL;
  size_t slen = 0;
  pto_status s = pto_file_read(path, 64, &seal, &slen);
  if (s) {
    pto_status_code c = pto_status_code_of(s);
    if (c == PTO_STATUS_OUT_OF_MEMORY) return s;
    pto_status t =
        pto_status_make(PTO_STATUS_DATA_LOSS, "%s: the entry's manifest is not sealed: %s", dir,
                        pto_status_message(s));
    pto_status_free(s);
    return t;
  }
  pto_hash_xxh128_hex(text, len, have);
  if (slen != PTO_HASH_HEX_LEN + 1 || memcmp(seal, have, PTO_HASH_HEX_LEN) != 0 ||
      seal[PTO_HASH_HEX_LEN] != '\n')
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: content hash %s differs from the one sealed in %s: the manifest "
                        "was changed after the entry was stored",
                        dir, PTO_MANIFEST_FILENAME, have, PTO__MANIFEST_SEAL);
  free(seal);
  return s;
}

pto_status pto__loader_manifest_read_sealed(const char *dir, pto_manifest *out_m) {
  memset(out_m, 0, sizeof *out_m);
  uint8_t *text = NULL;
  size_t len = 0;
  PTO_RETURN_IF_ERROR(read_manifest_text(dir, &text, &len));
  pto_status s = pto__loader_manifest_check_seal(dir, text, len);
  if (!s) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
    s = pto_manifest_parse((const char *)text, len, path, out_m);
  }
  free(text);
  return s;
}
