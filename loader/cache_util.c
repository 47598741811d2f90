/* Small pieces of the binary cache: the warning hook, directory trees, atomic file writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

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
    /* The default hook: the one place the loader writes to stderr. A warning may quote what
     * a remote answered or a file held: its control characters (an escape sequence would drive
     * the terminal) are written as \xNN. */
    fputs("pto: warning: ", stderr);
    for (const char *c = msg; *c; c++) {
      unsigned char u = (unsigned char)*c;
      if ((u < 0x20 && u != '\n' && u != '\t') || u == 0x7f)
        fprintf(stderr, "\\x%02x", u);
      else
        fputc(u, stderr);
    }
    fputc('\n', stderr);
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

char *pto__loader_manifest_other_schema(const char *dir) {
  uint8_t *text = NULL;
  size_t len = 0;
  pto_status s = read_manifest_text(dir, &text, &len);
  char *other = NULL;
  if (!s) s = pto__loader_manifest_check_seal(dir, text, len);
  if (!s) {
    json_t *root = json_loadb((const char *)text, len, 0, NULL);
    const char *v = json_string_value(json_object_get(root, "schema"));
    if (v && !strncmp(v, "pto.manifest/", 13) && strcmp(v, PTO_MANIFEST_SCHEMA) != 0)
      other = pto_strdup(v);
    json_decref(root);
  }
  pto_status_free(s);
  free(text);
  return other;
}

int pto__loader_manifest_other_version(const char *dir) {
  char *schema = pto__loader_manifest_other_schema(dir);
  free(schema);
  return schema != NULL;
}

/* ---- holding a work dir --------------------------------------------------------------- */

/* dst, a copy of the regular file src: a hard link where the file system allows one (the
 * content is never rewritten in place: pto replaces files by rename; only pto fmt -i rewrites a
 * .ptir of several links in place, a source the loaded binaries no longer read), else a copy. */
static pto_status hold_file(const char *src, const char *dst, mode_t mode) {
  if (link(src, dst) == 0) return PTO_OK;
  uint8_t *buf = NULL;
  size_t len = 0;
  PTO_RETURN_IF_ERROR(pto_file_read(src, PTO_FILE_MAX_BINARY, &buf, &len));
  pto_status s = pto_file_write_atomic(dst, buf, len, (int)(mode & 0777));
  free(buf);
  return s;
}

/* The subdirectories of a work dir a copy follows (pto writes two levels). */
#define HOLD_MAX_DIRS 256

/* The private dirs this process holds (copies of work dirs, private copies of shared objects
 * being loaded), removed at release, or at exit for those of programs still loaded then (the
 * in-process map keeps its programs for the process's life); dirs of a process that died are
 * removed by the next process that makes one of the same kind in the same place. Each entry
 * records the process that made it: a forked child (a chip) leaves its parent's dirs at exit. */
typedef struct held_entry {
  char *path;
  pid_t pid;
} held_entry;
static pthread_mutex_t g_held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_held_once = PTHREAD_ONCE_INIT;
static held_entry *g_held;
static int g_nheld, g_held_cap;
/* "<kind>\n<base>" of each place already swept for dead processes' dirs, by this process. */
static char **g_swept;
static int g_nswept, g_swept_cap;

static void held_at_exit(void) {
  pid_t me = getpid();
  pthread_mutex_lock(&g_held_lock);
  for (int i = 0; i < g_nheld;) {
    if (g_held[i].pid != me) {
      i++;
      continue;
    }
    pto_file_remove_tree(g_held[i].path);
    free(g_held[i].path);
    g_held[i] = g_held[--g_nheld];
  }
  pthread_mutex_unlock(&g_held_lock);
}

/* Removes the pto-<kind>-<pid>-XXXXXX dirs of dead processes of this user in base. */
static void remove_stale(const char *base, const char *kind) {
  char prefix[64];
  int plen = snprintf(prefix, sizeof prefix, "pto-%s-", kind);
  if (plen <= 0 || plen >= (int)sizeof prefix) return;
  DIR *d = opendir(base);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0) continue;
    char *end;
    long pid = strtol(e->d_name + plen, &end, 10);
    if (pid <= 0 || *end != '-' || strlen(end + 1) != 6) continue;
    struct stat st;
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/%s", base, e->d_name) >= (int)sizeof sub) continue;
    if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) pto_file_remove_tree(sub);
  }
  closedir(d);
}

static void held_init(void) { atexit(held_at_exit); }

/* Sweeps base for dead processes' dirs of kind, once per process for each (kind, base). */
static void sweep_once(const char *base, const char *kind) {
  char *key = pto_strdup_printf("%s\n%s", kind, base);
  if (!key) return;
  int fresh = 1;
  pthread_mutex_lock(&g_held_lock);
  for (int i = 0; i < g_nswept && fresh; i++)
    fresh = strcmp(g_swept[i], key) != 0;
  if (fresh && !pto_grow_int(&g_swept, sizeof *g_swept, &g_swept_cap, g_nswept + 1)) {
    g_swept[g_nswept++] = key;
    key = NULL;
  }
  pthread_mutex_unlock(&g_held_lock);
  free(key);
  if (fresh) remove_stale(base, kind);
}

static int held_add(char *path) {
  pthread_mutex_lock(&g_held_lock);
  int ok = !pto_grow_int(&g_held, sizeof *g_held, &g_held_cap, g_nheld + 1);
  if (ok) g_held[g_nheld++] = (held_entry){path, getpid()};
  pthread_mutex_unlock(&g_held_lock);
  return ok;
}

void pto__loader_release_held(char *held) {
  if (!held) return;
  pthread_mutex_lock(&g_held_lock);
  for (int i = 0; i < g_nheld; i++)
    if (g_held[i].path == held) {
      g_held[i] = g_held[--g_nheld];
      break;
    }
  pthread_mutex_unlock(&g_held_lock);
  pto_file_remove_tree(held);
  free(held);
}

pto_status pto__loader_private_dir(const char *base, const char *kind, char **out_dir) {
  *out_dir = NULL;
  pthread_once(&g_held_once, held_init);
  sweep_once(base, kind);
  char *dir = pto_strdup_printf("%s/pto-%s-%ld-XXXXXX", base, kind, (long)getpid());
  if (!dir) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!mkdtemp(dir)) {
    pto_status s = pto_status_make(PTO_STATUS_IO, "cannot create a private directory %s: %s", dir,
                                   strerror(errno));
    free(dir);
    return s;
  }
  if (!held_add(dir)) {
    rmdir(dir);
    free(dir);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  *out_dir = dir;
  return PTO_OK;
}

pto_status pto__loader_hold_dir(const char *dir, char **out_held) {
  *out_held = NULL;
  const char *t = getenv("TMPDIR");
  char *held = NULL;
  pto_status s = pto__loader_private_dir(t && *t ? t : "/tmp", "held", &held);
  if (s) return pto_status_annotate(s, "holding the work dir %s", dir);
  /* Breadth first over relative dir names, iteratively; symlinks are not followed. */
  char *dirs[HOLD_MAX_DIRS];
  int ndirs = 0, next = 0;
  if (!(dirs[ndirs++] = pto_strdup("")))
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  while (!s && next < ndirs) {
    const char *rel = dirs[next++];
    char from[PATH_MAX], to[PATH_MAX];
    snprintf(from, sizeof from, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = pto_file_opendir_at(AT_FDCWD, from);
    if (!d) {
      s = pto_status_make(PTO_STATUS_NOT_FOUND, "cannot read %s: %s", from, strerror(errno));
      break;
    }
    struct dirent *e;
    while (!s && (e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      struct stat st;
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      char sub[PATH_MAX];
      if (snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof sub ||
          snprintf(from, sizeof from, "%s/%s", dir, sub) >= (int)sizeof from ||
          snprintf(to, sizeof to, "%s/%s", held, sub) >= (int)sizeof to) {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s/%s: path too long", dir, e->d_name);
      } else if (S_ISREG(st.st_mode)) {
        s = hold_file(from, to, st.st_mode);
      } else if (S_ISDIR(st.st_mode)) {
        if (ndirs == HOLD_MAX_DIRS)
          s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: more than %d directories", dir,
                              HOLD_MAX_DIRS);
        else if (mkdir(to, 0700) != 0)
          s = pto_status_make(PTO_STATUS_IO, "cannot create %s: %s", to, strerror(errno));
        else if (!(dirs[ndirs++] = pto_strdup(sub)))
          s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
      }
    }
    closedir(d);
  }
  for (int i = 0; i < ndirs; i++)
    free(dirs[i]);
  if (s) {
    pto__loader_release_held(held);
    return pto_status_annotate(s, "holding the work dir %s", dir);
  }
  *out_held = held;
  return PTO_OK;
}
