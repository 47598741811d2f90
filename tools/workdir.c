/* The work dir that `pto compile -o DIR` writes: what pto wrote there, and how a compile
 * replaces it without losing anything of the user's.
 *
 * What pto wrote is recorded in DIR/compiled.xxh128, in xxh128sum's format ("HASH  PATH" a
 * line; `xxh128sum -c compiled.xxh128` lists what was edited since): every file the last compile
 * put there, with the content it had then. The manifests cannot say it: `pto rebuild` records
 * the hashes of hand edits in them, and a host's callees have manifests of their own. A work
 * dir without the record (written by an older pto) is judged by its manifests, as before.
 *
 * A compile holds an exclusive lock on DIR (flock of the directory) from the check to the end,
 * builds the program aside in DIR/.pto-build-<pid>-XXXXXX, checks every path it would write
 * (no symlink on the way, nothing there that pto did not write) before it changes anything, and
 * then moves the files in, the manifest last: concurrent compiles into one DIR take turns, and
 * the dir is always one program's. A build dir whose process died (SIGKILL) is removed by the
 * next compile into DIR. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pto/base.h"
#include "pto/manifest.h"

#define RECORD_NAME "compiled.xxh128"
#define BUILD_PREFIX ".pto-build-"

/* A list of (path relative to DIR, content hash). A path may appear more than once: while a
 * compile moves its files in, the record holds the old program's and the new one's. */
typedef struct wd_file {
  char *path;
  char hash[PTO_HASH_HEX_LEN + 1];
} wd_file;

typedef struct wd_list {
  wd_file *v;
  int n, cap;
} wd_list;

static void list_free(wd_list *l) {
  for (int i = 0; i < l->n; i++)
    free(l->v[i].path);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int list_add(wd_list *l, const char *path, const char *hash) {
  if (pto_grow_int(&l->v, sizeof *l->v, &l->cap, l->n + 1)) return -1;
  char *p = pto_strdup(path);
  if (!p) return -1;
  l->v[l->n].path = p;
  snprintf(l->v[l->n].hash, sizeof l->v[l->n].hash, "%s", hash);
  l->n++;
  return 0;
}

/* 2: path listed with this hash (hash NULL: listed at all); 1: listed with other hashes only;
 * 0: not listed. */
static int by_path(const void *a, const void *b) {
  return strcmp(((const wd_file *)a)->path, ((const wd_file *)b)->path);
}

static int list_match(const wd_list *l, const char *path, const char *hash) {
  int listed = 0;
  for (int i = 0; i < l->n; i++) {
    if (strcmp(l->v[i].path, path) != 0) continue;
    if (!hash || !strcmp(l->v[i].hash, hash)) return 2;
    listed = 1;
  }
  return listed;
}

static int oom(const char *cmd) {
  fprintf(stderr, "pto %s: out of memory\n", cmd);
  return PTO_EXIT_FAILED;
}

/* ---- what pto wrote -------------------------------------------------------------------- */

/* DIR/compiled.xxh128 into *l: 1 read, 0 absent or not a record of pto's (then a file the
 * user owns), -1 out of memory. */
static int read_record(const char *dir, wd_list *l) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/" RECORD_NAME, dir);
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  uint8_t *buf = NULL;
  size_t len = 0;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &buf, &len);
  if (s) {
    pto_status_free(s);
    return 0;
  }
  int ok = 1;
  for (char *line = (char *)buf, *nl; ok && *line; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl) {
      ok = 0;
      break;
    }
    *nl = 0;
    size_t hex = strspn(line, "0123456789abcdef");
    pto_status bad = hex == PTO_HASH_HEX_LEN && !strncmp(line + hex, "  ", 2)
                         ? pto_manifest_check_path(line + hex + 2, RECORD_NAME)
                         : pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "not HASH  PATH");
    ok = !bad;
    pto_status_free(bad);
    if (!ok) break;
    line[hex] = 0;
    if (list_add(l, line + hex + 2, line)) {
      pto_free(buf);
      return -1;
    }
  }
  pto_free(buf);
  if (!ok) list_free(l);
  return ok;
}

/* Adds DIR/rel with its current hash when it is a regular file. */
static int add_current(wd_list *l, const char *dir, const char *rel) {
  char path[PATH_MAX], hash[PTO_HASH_HEX_LEN + 1];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  pto_status s = pto_file_hash(path, hash);
  int ok = !s;
  pto_status_free(s);
  return ok ? list_add(l, rel, hash) : 0;
}

/* A work dir without the record: what its manifests (the top one and each callee's) list, with
 * their hashes, and pto's files beside them. prefix is "" or "callees/<orch>/". */
static int owned_from_manifest(const char *top, const char *prefix, wd_list *l) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/%s", top, prefix);
  pto_manifest m;
  pto_status s = pto_manifest_read(dir, &m);
  if (s) {
    pto_status_free(s);
    return 0;
  }
  char rel[PATH_MAX];
  int err = 0;
  static const char *const beside[] = {PTO_MANIFEST_FILENAME, "key.txt", "positions.json"};
  for (size_t i = 0; i < sizeof beside / sizeof *beside && !err; i++) {
    snprintf(rel, sizeof rel, "%s%s", prefix, beside[i]);
    err = add_current(l, top, rel);
  }
  for (int i = 0; i < m.nfiles && !err; i++) {
    snprintf(rel, sizeof rel, "%s%s", prefix, m.files[i].path);
    err = list_add(l, rel, m.files[i].hash);
  }
  for (int i = 0; i < m.ncallees && !err && !*prefix; i++) {
    snprintf(rel, sizeof rel, "callees/%s/", m.callees[i]);
    err = owned_from_manifest(top, rel, l);
  }
  pto_manifest_free(&m);
  return err;
}

/* ---- walks ------------------------------------------------------------------------------ */

/* nftw has no context argument: a walk's state is this one static, used by one thread. */
static struct {
  size_t skip;        /* strlen of the walked root */
  const wd_list *own; /* check: what pto wrote */
  int record;         /* check: DIR/compiled.xxh128 is pto's record */
  wd_list *out;       /* list: the files found */
  char first[2][512]; /* check: first edited, first foreign */
  int nedited, nforeign, failed;
} g_walk;

static const char *rel_of(const char *path) {
  const char *rel = path + g_walk.skip;
  while (*rel == '/')
    rel++;
  return rel;
}

static int is_build_dir_name(const char *name) {
  return !strncmp(name, BUILD_PREFIX, strlen(BUILD_PREFIX));
}

static int is_binary(const char *rel) {
  size_t n = strlen(rel);
  return (n > 2 && !strcmp(rel + n - 2, ".o")) || (n > 3 && !strcmp(rel + n - 3, ".so"));
}

/* Counts rel as edited (0) or foreign (1); the message names the first, preferring a source to
 * a binary (a rebuilt edit leaves both edited: the source is what the user changed). */
static void note(int which, const char *rel) {
  int n = which ? g_walk.nforeign++ : g_walk.nedited++;
  if (n == 0 || (is_binary(g_walk.first[which]) && !is_binary(rel)))
    snprintf(g_walk.first[which], sizeof g_walk.first[which], "%s", rel);
}

static int check_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  const char *rel = rel_of(path);
  if (ftw->level == 1 && type == FTW_D && is_build_dir_name(rel)) return FTW_SKIP_SUBTREE;
  if (type == FTW_D || type == FTW_DP || !*rel) return FTW_CONTINUE;
  if (!strcmp(rel, RECORD_NAME) && g_walk.record) return FTW_CONTINUE;
  int listed = g_walk.own ? list_match(g_walk.own, rel, NULL) : 0;
  if (!listed || type != FTW_F) {
    note(1, rel);
    return FTW_CONTINUE;
  }
  char hash[PTO_HASH_HEX_LEN + 1];
  pto_status s = pto_file_hash(path, hash);
  if (s || list_match(g_walk.own, rel, hash) != 2) note(0, rel);
  pto_status_free(s);
  return FTW_CONTINUE;
}

static int list_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type != FTW_F) return FTW_CONTINUE;
  char hash[PTO_HASH_HEX_LEN + 1];
  pto_status s = pto_file_hash(path, hash);
  if (s || list_add(g_walk.out, rel_of(path), hash)) g_walk.failed = 1;
  pto_status_free(s);
  return g_walk.failed ? FTW_STOP : FTW_CONTINUE;
}

/* Build dirs in DIR of processes that are gone (killed while compiling). */
static void reclaim_build_dirs(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (!is_build_dir_name(e->d_name)) continue;
    char *end = NULL;
    long pid = strtol(e->d_name + strlen(BUILD_PREFIX), &end, 10);
    if (pid <= 0 || *end != '-' || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) pto_file_remove_tree(path);
  }
  closedir(d);
}

/* ---- a compile ended by a signal ----------------------------------------------------------
 * SIGINT, SIGTERM or SIGHUP in the middle of a compile (Ctrl-C, `timeout -s INT`) ends pto with
 * its build dir half written; the next compile into DIR would reclaim it, but until then DIR
 * held a hidden half build, and a DIR that this compile made stayed behind, holding nothing a
 * user asked for. The handler (main.c) removes both: the paths are recorded before the build
 * starts (g_abandon_state set last, so a handler on any thread reads complete paths) and the
 * removal uses only async-signal-safe calls. A file a compiler child writes meanwhile may keep
 * a folder there; the next compile into DIR removes what is left, as after a SIGKILL. */
static char g_abandon_build[PATH_MAX], g_abandon_dir[PATH_MAX];
static size_t g_abandon_top;
static atomic_int g_abandon_state; /* 0 none; 1 the build dir; 2 and DIR, made by this compile */

size_t cli_missing_prefix(const char *dir) {
  char p[PATH_MAX];
  struct stat st;
  size_t n = strlen(dir);
  if (n >= sizeof p) return 0;
  memcpy(p, dir, n + 1);
  for (size_t c = 1; c <= n; c++) {
    if (p[c] && p[c] != '/') continue;
    char saved = p[c];
    p[c] = 0;
    int missing = stat(p, &st) != 0;
    p[c] = saved;
    if (missing) return c;
  }
  return 0;
}

void cli_remove_made_folders(char *path, size_t top) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/')
    path[--n] = 0;
  while (top && n >= top) {
    if (rmdir(path) != 0) return; /* not empty: something else is there now */
    while (n > 0 && path[n - 1] != '/')
      n--;
    while (n > 0 && path[n - 1] == '/')
      n--;
    path[n] = 0;
  }
}

void cli_abandon_compile(void) {
  int state = atomic_exchange(&g_abandon_state, 0);
  if (!state) return;
  int saved = errno;
  pto_file_remove_tree_signal_safe(g_abandon_build);
  if (state == 2) cli_remove_made_folders(g_abandon_dir, g_abandon_top); /* only empty ones */
  errno = saved;
}

static void abandon_on_signal(const char *build, const char *dir, size_t top) {
  snprintf(g_abandon_build, sizeof g_abandon_build, "%s", build);
  snprintf(g_abandon_dir, sizeof g_abandon_dir, "%s", dir);
  g_abandon_top = top;
  atomic_store(&g_abandon_state, top ? 2 : 1);
}

/* ---- locking ----------------------------------------------------------------------------- */

int cli_lock_dir(const char *cmd, const char *dir, int exclusive) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int op = exclusive ? LOCK_EX : LOCK_SH;
  if (flock(fd, op | LOCK_NB) != 0) {
    fprintf(stderr, "pto %s: %s: waiting for another pto writing it\n", cmd, dir);
    while (flock(fd, op) != 0)
      if (errno != EINTR) {
        close(fd);
        return -1;
      }
  }
  return fd;
}

/* ---- checking and publishing ------------------------------------------------------------ */

/* Whether DIR/rel can be written: no symlink or non-directory on the way inside DIR, and the file
 * there (if any) a regular file pto wrote (or, with force, one it wrote that was edited since).
 * Prints the usage error and returns 2, else 0. */
static int check_target(const char *cmd, const char *dir, const char *rel, const wd_list *own,
                        int force) {
  char path[PATH_MAX];
  struct stat st;
  for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
    snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - rel), rel);
    if (lstat(path, &st) != 0) return 0; /* created, with what is below it */
    if (S_ISLNK(st.st_mode))
      return cli_usage_error(cmd,
                             "-o %s: %s is a symlink, and the program has files below it; pto "
                             "never writes through a symlink: remove it, or choose another -o",
                             dir, path);
    if (!S_ISDIR(st.st_mode))
      return cli_usage_error(cmd,
                             "-o %s: %s is not a directory, and the program has files below it: "
                             "move it away, or choose another -o",
                             dir, path);
  }
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  if (lstat(path, &st) != 0) return 0;
  int listed = S_ISREG(st.st_mode) ? list_match(own, rel, NULL) : 0;
  if (listed) {
    char hash[PTO_HASH_HEX_LEN + 1];
    pto_status s = pto_file_hash(path, hash);
    int mine = !s && list_match(own, rel, hash) == 2;
    pto_status_free(s);
    if (mine || force) return 0;
  }
  return cli_usage_error(cmd,
                         "-o %s: %s was not written by pto, and the program has a file of that "
                         "name; pto never overwrites a file it did not write, not even with "
                         "--force: move it away, or choose another -o",
                         dir, path);
}

/* Writes the record of what pto wrote: a's files, then b's (may be NULL); while a compile moves
 * its files in, the record holds the old program's and the new one's. */
static pto_status write_record(const char *dir, const wd_list *a, const wd_list *b) {
  pto_text t;
  memset(&t, 0, sizeof t);
  const wd_list *lists[2] = {a, b};
  for (int k = 0; k < 2; k++)
    for (int i = 0; lists[k] && i < lists[k]->n; i++)
      pto_text_printf(&t, "%s  %s\n", lists[k]->v[i].hash, lists[k]->v[i].path);
  char *text = pto_text_finish(&t);
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/" RECORD_NAME, dir);
  pto_status s = pto_file_write_atomic(path, text, strlen(text), 0644);
  pto_free(text);
  return s;
}

/* Creates the directories of DIR/rel (checked by check_target: none is a symlink). */
static pto_status make_parents(const char *dir, const char *rel) {
  char path[PATH_MAX];
  const char *slash = strrchr(rel, '/');
  if (!slash) return PTO_OK;
  snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - rel), rel);
  return pto_file_mkdirs(path, 0755);
}

/* Removes DIR/rel when it is still the content pto wrote, then its directories left empty. */
static void remove_if_mine(const char *dir, const char *rel, const wd_list *old) {
  char path[PATH_MAX], hash[PTO_HASH_HEX_LEN + 1];
  struct stat st;
  for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
    snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - rel), rel);
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return;
  }
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return;
  pto_status s = pto_file_hash(path, hash);
  int mine = !s && list_match(old, rel, hash) == 2;
  pto_status_free(s);
  if (!mine || unlink(path) != 0) return;
  for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(dir);
       slash = strrchr(path, '/')) {
    *slash = 0;
    if (rmdir(path) != 0) break;
  }
}

/* Moves the built files of tmp into DIR (all checked first), the manifest last, then removes
 * what the old program had that the new one has not. */
static int publish(const char *cmd, const char *dir, const char *tmp, const wd_list *old,
                   int record, int force) {
  wd_list built;
  memset(&built, 0, sizeof built);
  memset(&g_walk, 0, sizeof g_walk);
  g_walk.skip = strlen(tmp);
  g_walk.out = &built;
  nftw(tmp, list_one, 16, FTW_PHYS | FTW_ACTIONRETVAL);
  if (g_walk.failed) {
    list_free(&built);
    return cli_fail(cmd, pto_status_make(PTO_STATUS_IO, "cannot read the build in %s", tmp));
  }
  if (built.n) qsort(built.v, (size_t)built.n, sizeof *built.v, by_path);
  int rc = 0;
  for (int i = 0; i < built.n && !rc; i++)
    rc = check_target(cmd, dir, built.v[i].path, old, force);
  if (!rc && !record) rc = check_target(cmd, dir, RECORD_NAME, old, force);
  pto_status s = rc ? PTO_OK : write_record(dir, old, &built);
  char from[PATH_MAX], to[PATH_MAX];
  snprintf(to, sizeof to, "%s/" PTO_MANIFEST_FILENAME, dir);
  /* From here until the new manifest is in place, the dir is no program's. */
  if (!rc && !s && unlink(to) != 0 && errno != ENOENT)
    s = pto_status_make(PTO_STATUS_IO, "cannot replace %s: %s", to, strerror(errno));
  for (int pass = 0; pass < 2 && !rc && !s; pass++)
    for (int i = 0; i < built.n && !s; i++) {
      const char *rel = built.v[i].path;
      if ((strcmp(rel, PTO_MANIFEST_FILENAME) == 0) != pass) continue; /* manifest last */
      snprintf(from, sizeof from, "%s/%s", tmp, rel);
      snprintf(to, sizeof to, "%s/%s", dir, rel);
      s = make_parents(dir, rel);
      if (!s && rename(from, to) != 0)
        s = pto_status_make(PTO_STATUS_IO, "cannot move %s to %s: %s", from, to, strerror(errno));
    }
  if (!rc && !s) {
    for (int i = 0; i < old->n; i++)
      if (!list_match(&built, old->v[i].path, NULL)) remove_if_mine(dir, old->v[i].path, old);
    s = write_record(dir, &built, NULL);
  }
  list_free(&built);
  return rc ? rc : s ? cli_fail(cmd, s) : 0;
}

/* Refuses (usage error, 2) a DIR holding hand edits or files pto did not write, unless force. */
static int check_dir(const char *cmd, const char *dir, int force, const wd_list *own, int record,
                     int is_pto_dir) {
  memset(&g_walk, 0, sizeof g_walk);
  /* DIR/. : a DIR that is a symlink to a directory has that directory's files checked (nftw
   * without following links stopped at the link itself, and such a DIR was taken as empty). */
  char top[PATH_MAX];
  snprintf(top, sizeof top, "%s/.", dir);
  g_walk.skip = strlen(top);
  g_walk.own = is_pto_dir ? own : NULL;
  g_walk.record = record;
  nftw(top, check_one, 16, FTW_PHYS | FTW_ACTIONRETVAL);
  if (force || (!g_walk.nedited && !g_walk.nforeign)) return 0;
  if (g_walk.nedited)
    return cli_usage_error(
        cmd,
        "-o %s: %s/%s (and %d more) was edited since it was compiled; compiling would "
        "overwrite it: pass --force to overwrite, or choose another -o",
        dir, dir, g_walk.first[0], g_walk.nedited - 1);
  return cli_usage_error(cmd,
                         "-o %s: %s/%s (and %d more) was not written by pto%s; pass --force to "
                         "compile into it anyway (pto never overwrites or deletes files it did "
                         "not write), or choose another -o",
                         dir, dir, g_walk.first[1], g_walk.nforeign - 1,
                         is_pto_dir ? "" : " (the directory is not a pto work dir)");
}

int cli_compile_into_dir(const char *cmd, const char *dir, int force, cli_build_fn build,
                         void *ctx) {
  /* The folders this compile makes (DIR, and its parents that were missing) are removed again
   * when it fails (bad input found once the program is read, a build error) or is ended by a
   * signal: a refused compile leaves no empty folders behind. */
  size_t top = cli_missing_prefix(dir);
  pto_status s = pto_file_mkdirs(dir, 0755);
  /* A folder made by another compile that failed at once may vanish under this one: retry. */
  for (int tries = 0; s && errno == ENOENT && tries < 3; tries++) {
    pto_status_free(s);
    s = pto_file_mkdirs(dir, 0755);
  }
  if (s) return cli_fail(cmd, s);
  int lock = cli_lock_dir(cmd, dir, 1);
  if (lock < 0)
    return cli_fail(
        cmd, pto_status_make(PTO_STATUS_IO, "-o %s: cannot lock it: %s", dir, strerror(errno)));
  reclaim_build_dirs(dir);
  wd_list own;
  memset(&own, 0, sizeof own);
  int record = read_record(dir, &own), rc = record < 0;
  if (!record) rc = owned_from_manifest(dir, "", &own);
  rc = rc ? oom(cmd) : check_dir(cmd, dir, force, &own, record, record || own.n > 0);
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/" BUILD_PREFIX "%ld-XXXXXX", dir, (long)getpid());
  if (!rc && !mkdtemp(tmp))
    rc = cli_fail(cmd, pto_status_make(PTO_STATUS_IO, "-o %s: cannot create a build dir: %s", dir,
                                       strerror(errno)));
  else if (!rc) {
    abandon_on_signal(tmp, dir, top);
    s = build(ctx, tmp);
    /* Built: from here on the build dir's files move into DIR (publish), the manifest last. */
    atomic_store(&g_abandon_state, 0);
    rc = s ? cli_fail(cmd, s) : publish(cmd, dir, tmp, &own, record, force);
    pto_file_remove_tree(tmp);
  }
  list_free(&own);
  if (rc && top) { /* made for this compile, and still empty */
    char made[PATH_MAX];
    snprintf(made, sizeof made, "%s", dir);
    cli_remove_made_folders(made, top);
  }
  close(lock);
  return rc;
}
