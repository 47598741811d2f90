/* Maintaining the binary cache (pto/cache.h): listing, finding, verifying, evicting, clearing,
 * and the statistics that sum every process's counters. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"

static pto_status oom(void) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory in the binary cache");
}

static int is_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int64_t mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* ---- walking the entries -------------------------------------------------------------- */

typedef struct found {
  char key[33];
  char path[PATH_MAX];
  int64_t last_use_ns;
  uint64_t bytes;
} found;

typedef struct found_list {
  found *v;
  int n, cap;
} found_list;

/* Every ROOT/<2 hex>/<30 hex> directory. with_sizes: also sum each entry's files. */
static pto_status scan(const char *root, int with_sizes, found_list *out) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(root);
  if (!d) {
    if (errno == ENOENT) return PTO_OK;
    return pto_status_make(PTO_STATUS_IO, "cannot read the cache directory %s: %s", root,
                           strerror(errno));
  }
  pto_status s = PTO_OK;
  struct dirent *e;
  while (!s && (e = readdir(d))) {
    if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2)) continue;
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
    /* Never through a symlink: an entry found there would be removed by gc. */
    int fd = open(sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d2 = fd < 0 ? NULL : fdopendir(fd);
    if (!d2) {
      if (fd >= 0) close(fd);
      continue;
    }
    struct dirent *e2;
    while ((e2 = readdir(d2))) {
      if (strlen(e2->d_name) != 30 || !is_hex(e2->d_name, 30)) continue;
      if (pto_grow_int(&out->v, sizeof *out->v, &out->cap, out->n + 1)) {
        s = oom();
        break;
      }
      found *f = &out->v[out->n];
      snprintf(f->key, sizeof f->key, "%s%s", e->d_name, e2->d_name);
      snprintf(f->path, sizeof f->path, "%s/%s", sub, e2->d_name);
      struct stat st;
      if (lstat(f->path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      f->last_use_ns = mtime_ns(&st);
      f->bytes = with_sizes ? pto_file_tree_bytes(f->path) : 0;
      out->n++;
    }
    closedir(d2);
  }
  closedir(d);
  if (s) {
    free(out->v);
    memset(out, 0, sizeof *out);
  }
  return s;
}

static int by_use_desc(const void *a, const void *b) {
  const found *x = a, *y = b;
  return x->last_use_ns < y->last_use_ns ? 1 : x->last_use_ns > y->last_use_ns ? -1 : 0;
}

static int by_use_asc(const void *a, const void *b) { return by_use_desc(b, a); }

/* The root for reading: it must pass the ownership checks, but is not created. */
static pto_status existing_root(char *root, size_t n, int *out_exists) {
  return pto__loader_cache_resolve_root(root, n, 0, out_exists);
}

/* ---- list, find ----------------------------------------------------------------------- */

pto_status pto_cache_list(pto_cache_entry **out_entries, int *out_count) {
  if (!out_entries)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_list: out_entries is NULL");
  if (!out_count)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_list: out_count is NULL");
  *out_entries = NULL;
  *out_count = 0;
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  if (!exists) return PTO_OK;
  found_list fl;
  PTO_RETURN_IF_ERROR(scan(root, 1, &fl));
  if (fl.n) qsort(fl.v, (size_t)fl.n, sizeof *fl.v, by_use_desc);
  pto_cache_entry *v = pto_calloc((size_t)fl.n + 1, sizeof *v);
  if (!v) {
    free(fl.v);
    return oom();
  }
  for (int i = 0; i < fl.n; i++) {
    pto_cache_entry *ce = &v[i];
    memcpy(ce->key, fl.v[i].key, sizeof ce->key);
    ce->path = pto_strdup(fl.v[i].path);
    ce->bytes = fl.v[i].bytes;
    ce->last_use_ns = fl.v[i].last_use_ns;
    char mpath[PATH_MAX + 32];
    snprintf(mpath, sizeof mpath, "%s/%s", fl.v[i].path, PTO_MANIFEST_FILENAME);
    struct stat st;
    if (stat(mpath, &st) == 0) ce->created_ns = mtime_ns(&st);
    pto_manifest m;
    pto_status s = pto_manifest_read(fl.v[i].path, &m);
    if (!s) {
      ce->program = pto_strdup(m.program);
      ce->entry = pto_strdup(pto_signature_entry_name(&m.sig)); /* as the user named it */
      pto_manifest_free(&m);
    } else {
      ce->other_schema = pto__loader_manifest_other_schema(fl.v[i].path);
    }
    pto_status_free(s);
  }
  *out_entries = v;
  *out_count = fl.n;
  free(fl.v);
  return PTO_OK;
}

void pto_cache_list_free(pto_cache_entry *entries, int count) {
  if (!entries) return;
  for (int i = 0; i < count; i++) {
    free(entries[i].path);
    free(entries[i].program);
    free(entries[i].entry);
    free(entries[i].other_schema);
  }
  free(entries);
}

pto_status pto_cache_find(const char *prefix, char out_key[33], char **out_path) {
  if (!out_key)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_find: out_key is NULL");
  if (!out_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_find: out_path is NULL");
  if (!prefix)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_find: prefix is NULL");
  out_key[0] = 0;
  *out_path = NULL;
  size_t n = strlen(prefix);
  char low[33];
  if (n == 0 || n > 32)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "'%s': a key is 1 to 32 hex digits (see pto cache ls)", prefix);
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)prefix[i]);
  if (!is_hex(low, n))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "'%s': a key is 1 to 32 hex digits (see pto cache ls)", prefix);
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  found_list fl = {0};
  if (exists) PTO_RETURN_IF_ERROR(scan(root, 0, &fl));
  int hits = 0, which = -1;
  for (int i = 0; i < fl.n; i++)
    if (!strncmp(fl.v[i].key, low, n)) hits++, which = i;
  pto_status s = PTO_OK;
  if (hits == 0) {
    s = pto_status_make(PTO_STATUS_NOT_FOUND, "no cache entry has a key starting with '%s'",
                        prefix);
  } else if (hits > 1) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "'%s' is the start of %d keys: give more digits (see pto cache ls)", prefix,
                        hits);
  } else {
    memcpy(out_key, fl.v[which].key, 33);
    *out_path = pto_strdup(fl.v[which].path);
    if (!*out_path) s = oom();
  }
  free(fl.v);
  return s;
}

pto_status pto_cache_remove(const char *prefix, char out_key[33]) {
  if (!prefix)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_remove: prefix is NULL");
  char key[33], root[PATH_MAX];
  char *path = NULL;
  if (out_key) out_key[0] = 0;
  PTO_RETURN_IF_ERROR(pto_cache_find(prefix, key, &path));
  int exists;
  pto_status s = existing_root(root, sizeof root, &exists);
  if (!s && pto__loader_cache_discard(root, path) != 0)
    s = pto_status_make(PTO_STATUS_IO, "cannot remove cache entry %s: %s", path, strerror(errno));
  else if (!s && out_key)
    memcpy(out_key, key, sizeof key);
  free(path);
  return s;
}

/* ---- verify --------------------------------------------------------------------------- */

pto_status pto_cache_verify_entry(const char *entry_dir, const char *key) {
  if (!entry_dir || !key)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_cache_verify_entry: entry_dir or key is NULL");
  PTO_RETURN_IF_ERROR(pto__loader_cache_check_owner(entry_dir));
  pto_manifest m;
  pto_status s = pto__loader_manifest_read_sealed(entry_dir, &m);
  if (s) return s;
  if (key && strcmp(m.cache_key, key) != 0) {
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: field 'cache_key': \"%s\", but the entry is filed under %s",
                        entry_dir, PTO_MANIFEST_FILENAME, m.cache_key, key);
    goto done;
  }
  for (int i = 0; i < m.nfiles && !s; i++) {
    const pto_manifest_file *f = &m.files[i];
    char *real = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    char hash[PTO_HASH_HEX_LEN + 1];
    s = pto_manifest_resolve(entry_dir, f->path, &real);
    if (!s) s = pto_file_read(real, PTO_FILE_MAX_BINARY, &buf, &len);
    if (!s) {
      pto_hash_xxh128_hex(buf, len, hash);
      if (strcmp(hash, f->hash) != 0)
        s = pto_status_make(PTO_STATUS_DATA_LOSS,
                            "%s/%s: content hash %s differs from the manifest's %s", entry_dir,
                            f->path, hash, f->hash);
    }
    const pto_manifest_binary *b = m.is_host ? (!strcmp(f->path, m.host.path) ? &m.host : NULL)
                                   : !strcmp(f->path, m.orch.path)       ? &m.orch
                                   : !strcmp(f->path, m.kernels_so.path) ? &m.kernels_so
                                                                         : NULL;
    if (!s && b) {
      uint8_t id[PTO_BUILD_ID_MAX];
      size_t idlen = 0;
      char idhex[2 * PTO_BUILD_ID_MAX + 1];
      s = pto__loader_build_id_mem(real, buf, len, id, &idlen);
      if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
        pto_status_free(s);
        s = PTO_OK;
      }
      if (!s) {
        pto_hash_hex(id, idlen, idhex);
        if (strcmp(idhex, b->build_id) != 0)
          s = pto_status_make(PTO_STATUS_DATA_LOSS,
                              "%s/%s: Build-ID '%s' differs from the manifest's '%s'", entry_dir,
                              f->path, idhex, b->build_id);
      }
    }
    free(buf);
    free(real);
  }
  /* A host program's callee work dirs are part of the entry (same key). */
  for (int i = 0; i < m.ncallees && !s; i++) {
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/callees/%s", entry_dir, m.callees[i]);
    s = pto_cache_verify_entry(sub, key);
  }
done:
  pto_manifest_free(&m);
  return s;
}

pto_status pto_cache_verify(pto_cache_verify_fn fn, void *ctx, int *out_checked, int *out_corrupt) {
  if (!out_checked)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_verify: out_checked is NULL");
  if (!out_corrupt)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_verify: out_corrupt is NULL");
  *out_checked = *out_corrupt = 0;
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  if (!exists) return PTO_OK;
  found_list fl;
  PTO_RETURN_IF_ERROR(scan(root, 0, &fl));
  for (int i = 0; i < fl.n; i++) {
    pto_status s = pto_cache_verify_entry(fl.v[i].path, fl.v[i].key);
    ++*out_checked;
    if (!s) continue;
    if (pto_status_code_of(s) == PTO_STATUS_OUT_OF_MEMORY) {
      free(fl.v);
      return s;
    }
    if (pto__loader_manifest_other_version(fl.v[i].path)) {
      /* Another pto's entry (its key names that version; this one never looks it up): intact as
       * far as its seal tells, so left to it rather than deleted as corrupt. */
      pto_status_free(s);
      continue;
    }
    ++*out_corrupt;
    pto__loader_count(root, PTO__COUNT_CORRUPTIONS, 1);
    /* Discarded before it is reported: fn can tell one that stays (a read-only cache dir). */
    int kept = pto__loader_cache_discard(root, fl.v[i].path);
    if (kept) s = pto_status_annotate(s, "cannot remove %s (%s)", fl.v[i].path, strerror(errno));
    if (fn) fn(ctx, fl.v[i].key, s);
    pto_status_free(s);
  }
  free(fl.v);
  return PTO_OK;
}

/* ---- gc, clear ------------------------------------------------------------------------ */

/* Length of a run of n characters of mkdtemp's alphabet at s, or 0. */
static int is_mkdtemp_suffix(const char *s) {
  size_t i = 0;
  for (; s[i]; i++)
    if (!isalnum((unsigned char)s[i])) return 0;
  return i == 6;
}

/* The pid in a name pto gives its build dirs in ROOT/tmp ("<32 hex key>-<pid>-XXXXXX",
 * "discard-<pid>-XXXXXX"), or 0 when the name is not one of those: such a file is not pto's
 * and is never removed. */
static long tmp_name_pid(const char *name) {
  const char *dash = strchr(name, '-');
  if (!dash) return 0;
  size_t head = (size_t)(dash - name);
  if (!((head == 32 && is_hex(name, 32)) || (head == 7 && !strncmp(name, "discard", 7)))) return 0;
  if (!isdigit((unsigned char)dash[1])) return 0;
  char *end;
  errno = 0;
  long pid = strtol(dash + 1, &end, 10);
  if (errno || *end != '-' || pid <= 0 || !is_mkdtemp_suffix(end + 1)) return 0;
  return pid;
}

static uint64_t remove_stale_tmp(const char *root) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat tst;
  if (fd < 0) return 0;
  if (fstat(fd, &tst) != 0 || tst.st_uid != geteuid()) {
    close(fd);
    return 0;
  }
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return 0;
  }
  uint64_t n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    long pid = tmp_name_pid(e->d_name);
    if (!pid) continue;
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/%s", tmp, e->d_name) >= (int)sizeof sub) continue;
    /* pto makes only directories here, of this user. */
    struct stat st;
    if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    /* A day old is stale whatever its pid says: pids are reused. */
    int old = pto__loader_now_ns() - mtime_ns(&st) > 86400 * INT64_C(1000000000);
    if (!old && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH)) continue;
    pto_file_remove_tree(sub);
    n++;
  }
  closedir(d);
  return n;
}

pto_status pto__loader_cache_gc(const char *root, uint64_t max_bytes, int nonblocking,
                                pto_cache_gc_result *out_result) {
  pto_cache_gc_result r;
  memset(&r, 0, sizeof r);
  if (out_result) *out_result = r;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/lock", root);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return pto_status_make(PTO_STATUS_IO, "cannot open %s: %s", path, strerror(errno));
  /* One cleaner at a time: two would evict twice as much. */
  while (flock(fd, LOCK_EX | (nonblocking ? LOCK_NB : 0)) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) return PTO_OK;
    return pto_status_make(PTO_STATUS_IO, "cannot lock %s: %s", path, strerror(err));
  }
  found_list fl;
  pto_status s = scan(root, 1, &fl);
  if (s) {
    close(fd);
    return s;
  }
  uint64_t total = 0;
  for (int i = 0; i < fl.n; i++)
    total += fl.v[i].bytes;
  if (fl.n) qsort(fl.v, (size_t)fl.n, sizeof *fl.v, by_use_asc);
  int left = fl.n;
  for (int i = 0; max_bytes && i < fl.n && total > max_bytes; i++) {
    if (pto__loader_cache_discard(root, fl.v[i].path) != 0) continue; /* still there */
    total -= fl.v[i].bytes;
    r.evicted++;
    r.evicted_bytes += fl.v[i].bytes;
    left--;
  }
  if (r.evicted) pto__loader_count(root, PTO__COUNT_EVICTIONS, r.evicted);
  r.entries = (uint64_t)left;
  r.bytes = total;
  r.stale_tmp = remove_stale_tmp(root);
  free(fl.v);
  close(fd); /* releases the lock */
  if (out_result) *out_result = r;
  return PTO_OK;
}

pto_status pto_cache_gc(uint64_t max_bytes, pto_cache_gc_result *out_result) {
  if (!out_result)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_gc: out_result is NULL");
  memset(out_result, 0, sizeof *out_result);
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  if (!exists) return PTO_OK;
  return pto__loader_cache_gc(root, max_bytes, 0, out_result);
}

pto_status pto_cache_clear(uint64_t *out_removed) {
  if (!out_removed)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_clear: out_removed is NULL");
  *out_removed = 0;
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  if (!exists) return PTO_OK;
  found_list fl;
  PTO_RETURN_IF_ERROR(scan(root, 0, &fl));
  pto_status failed = PTO_OK;
  for (int i = 0; i < fl.n; i++) {
    if (pto__loader_cache_discard(root, fl.v[i].path) == 0)
      ++*out_removed;
    else if (!failed)
      failed = pto_status_make(PTO_STATUS_IO, "cannot remove cache entry %s: %s", fl.v[i].path,
                               strerror(errno));
  }
  free(fl.v);
  /* The fan-out dirs, now empty (rmdir leaves any that are not). */
  DIR *d = opendir(root);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2)) continue;
      char sub[PATH_MAX];
      snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
      rmdir(sub);
    }
    closedir(d);
  }
  remove_stale_tmp(root);
  return failed;
}

/* ---- sizes and stats ------------------------------------------------------------------ */

pto_status pto_cache_parse_size(const char *text, uint64_t *out_bytes) {
  if (!out_bytes)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_parse_size: out_bytes is NULL");
  *out_bytes = 0;
  const char *p = text;
  if (!p || !isdigit((unsigned char)*p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "size '%s': expected a number of bytes, optionally with K, M, G or T "
                           "(512M, 2G)",
                           text ? text : "");
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K': shift = 10, end++; break;
  case 'M': shift = 20, end++; break;
  case 'G': shift = 30, end++; break;
  case 'T': shift = 40, end++; break;
  default: break;
  }
  if (shift && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
    end += 2;
  else if (*end == 'B' || *end == 'b')
    end++;
  if (*end || errno || (shift && v > (UINT64_MAX >> shift)))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "size '%s': expected a number of bytes, optionally with K, M, G or T "
                           "(512M, 2G)",
                           text);
  *out_bytes = (uint64_t)v << shift;
  return PTO_OK;
}

pto_status pto_cache_stats_get(pto_cache_stats *out) {
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_stats_get: out is NULL");
  memset(out, 0, sizeof *out);
  out->memory_hits = pto__loader_cache_memory_hits();
  out->max_bytes = pto__loader_cache_max_bytes();
  char root[PATH_MAX];
  int exists;
  PTO_RETURN_IF_ERROR(existing_root(root, sizeof root, &exists));
  if (!exists) return PTO_OK;
  uint64_t c[PTO__COUNT_N];
  PTO_RETURN_IF_ERROR(pto__loader_counts_read(root, c));
  out->hits = c[PTO__COUNT_HITS];
  out->misses = c[PTO__COUNT_MISSES];
  out->stores = c[PTO__COUNT_STORES];
  out->evictions = c[PTO__COUNT_EVICTIONS];
  out->corruptions = c[PTO__COUNT_CORRUPTIONS];
  out->races = c[PTO__COUNT_RACES];
  out->uncached = c[PTO__COUNT_UNCACHED];
  out->remote_hits = c[PTO__COUNT_REMOTE_HITS];
  out->remote_misses = c[PTO__COUNT_REMOTE_MISSES];
  out->remote_stores = c[PTO__COUNT_REMOTE_STORES];
  out->remote_errors = c[PTO__COUNT_REMOTE_ERRORS];
  out->remote_refusals = c[PTO__COUNT_REMOTE_REFUSALS];
  found_list fl;
  PTO_RETURN_IF_ERROR(scan(root, 1, &fl));
  out->entries = (uint64_t)fl.n;
  for (int i = 0; i < fl.n; i++)
    out->bytes += fl.v[i].bytes;
  free(fl.v);
  return PTO_OK;
}
