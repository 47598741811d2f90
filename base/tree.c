/* Directory trees: removing one and summing its bytes, without following a symlink and with a
 * bounded number of open directories (the binary cache's entries and temp dirs, the pto
 * command's build dirs). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pto/base.h"

/* The tree walks below hold at most this many directories open at once (one a level): pto's own
 * trees are a few levels deep, and a deeper one (a damaged or hostile entry) must cost neither
 * the stack nor every descriptor of the process. */
#define TREE_MAX_OPEN 64

/* One level of an iterative walk: the open directory and its name in its parent. */
typedef struct tree_level {
  DIR *d;
  char name[NAME_MAX + 1];
} tree_level;

DIR *pto_file_opendir_at(int dirfd, const char *name) {
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
  if (!(lv[0].d = pto_file_opendir_at(top, "."))) return 0;
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
    } else if ((lv[depth].d = pto_file_opendir_at(dirfd(cur->d), e->d_name))) {
      snprintf(lv[depth].name, sizeof lv[depth].name, "%s", e->d_name);
      depth++;
    }
  }
  return moved;
}

void pto_file_remove_tree(const char *path) {
  if (!path) return;
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

uint64_t pto_file_tree_bytes(const char *path) {
  if (!path) return 0;
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return (uint64_t)st.st_size;
  if (!S_ISDIR(st.st_mode)) return 0;
  /* Iterative, without following symlinks; below TREE_MAX_OPEN levels nothing is counted (pto
   * never writes so deep). */
  DIR *lv[TREE_MAX_OPEN];
  if (!(lv[0] = pto_file_opendir_at(AT_FDCWD, path))) return 0;
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
             (lv[depth] = pto_file_opendir_at(dirfd(cur), e->d_name)))
      depth++;
  }
  return total;
}
