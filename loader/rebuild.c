/* pto_program_rebuild_dir: rebuilds exactly what hand edits made stale in a work dir.
 *
 * A source (orchestration/<orch>.cpp, kernels/<k>.ll) whose content hash differs from the
 * manifest's makes its binary stale; so does a binary that is missing or no longer matches its
 * recorded hash. Stale orchestration: .cpp -> .so. Stale kernel: .ll -> .o, and then kernels.so
 * is relinked from every kernel object (each checked against the manifest first, so nothing
 * unverified is linked in) plus the other objects of the dir (the ABI object). Outputs are built
 * under temporary names and renamed into place, so a process that has the old binary mapped
 * keeps running it. The new content hashes and Build-IDs are recorded and the manifest is written
 * last and atomically: an interrupted rebuild leaves sources that still differ from the old
 * manifest, and the next rebuild does the work again. When nothing is stale the compiler (and
 * LLVM) is never loaded. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_internal.h"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The current content hash of DIR/relpath: NOT_FOUND when it is missing. */
static pto_status hash_of(const char *dir, const char *relpath, char out[PTO_HASH_HEX_LEN + 1]) {
  char *real = NULL;
  PTO_RETURN_IF_ERROR(pto_manifest_resolve(dir, relpath, &real));
  pto_status s = pto_file_hash(real, out);
  free(real);
  return s;
}

/* 1 when DIR/relpath differs from its manifest hash or is missing, 0 when it matches. */
static pto_status differs(const char *dir, const pto_manifest *m, const char *relpath,
                          int *out_differs) {
  *out_differs = 1;
  char hash[PTO_HASH_HEX_LEN + 1];
  const pto_manifest_file *f = pto_manifest_find_file(m, relpath);
  pto_status s = hash_of(dir, relpath, hash);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    return PTO_OK;
  }
  if (s) return s;
  *out_differs = !f || strcmp(f->hash, hash) != 0;
  return PTO_OK;
}

/* A source must exist to rebuild from. */
static pto_status source_differs(const char *dir, const pto_manifest *m, const char *relpath,
                                 int *out_differs) {
  char hash[PTO_HASH_HEX_LEN + 1];
  pto_status s = hash_of(dir, relpath, hash);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "%s/%s: listed in the manifest but missing, so there is nothing to "
                           "rebuild from; compile the program again",
                           dir, relpath);
  }
  if (s) return s;
  const pto_manifest_file *f = pto_manifest_find_file(m, relpath);
  *out_differs = !f || strcmp(f->hash, hash) != 0;
  return PTO_OK;
}

/* The program text the binaries were built from (program.ptir, and any other .ptir the manifest
 * lists) is no rebuild source: it must be there, a regular file (a FIFO is refused by
 * pto_file_open_regular without blocking) and unedited, as loading the dir requires too;
 * otherwise a rebuild that said "up to date" would leave a dir that does not load. */
static pto_status check_program_text(const char *dir, const pto_manifest *m) {
  for (int i = 0; i < m->nfiles; i++) {
    const pto_manifest_file *f = &m->files[i];
    if (!ends_with(f->path, ".ptir")) continue;
    char hash[PTO_HASH_HEX_LEN + 1];
    pto_status s = hash_of(dir, f->path, hash);
    if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
      pto_status_free(s);
      return pto_status_make(PTO_STATUS_NOT_FOUND,
                             "%s/%s: listed in the manifest but missing; compile the program "
                             "again",
                             dir, f->path);
    }
    if (s) return s;
    if (strcmp(hash, f->hash) != 0)
      return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                             "%s/%s: edited since it was compiled (content hash %s, the manifest "
                             "has %s), so every binary of the work dir is stale and pto rebuild "
                             "has nothing to rebuild them from; compile it again: pto compile "
                             "%s/%s -o DIR",
                             dir, f->path, hash, f->hash, dir, f->path);
  }
  return PTO_OK;
}

/* DIR/relpath for writing: relpath safe, its directory inside DIR (symlinks resolved). */
static pto_status out_path(const char *dir, const char *relpath, char *out, size_t n) {
  PTO_RETURN_IF_ERROR(pto_manifest_check_path(relpath, dir));
  const char *slash = strrchr(relpath, '/');
  if (!slash) {
    char *rdir = pto_realpath(dir);
    if (!rdir)
      return pto_status_make(errno == ENOMEM ? PTO_STATUS_OUT_OF_MEMORY : PTO_STATUS_IO,
                             "work dir %s: %s", dir, strerror(errno));
    snprintf(out, n, "%s/%s", rdir, relpath);
    free(rdir);
    return PTO_OK;
  }
  char parent[PATH_MAX], *real = NULL;
  snprintf(parent, sizeof parent, "%.*s", (int)(slash - relpath), relpath);
  PTO_RETURN_IF_ERROR(pto_manifest_resolve(dir, parent, &real));
  snprintf(out, n, "%s/%s", real, slash + 1);
  free(real);
  return PTO_OK;
}

/* Builds relpath through build(tmp) into a temporary name, then renames it into place. */
typedef pto_status (*build_fn)(const pto_compiler_api *api, const void *arg, const char *out);

static pto_status build_into(const pto_compiler_api *api, const char *dir, const char *relpath,
                             build_fn build, const void *arg) {
  char path[PATH_MAX], tmp[PATH_MAX + 32];
  PTO_RETURN_IF_ERROR(out_path(dir, relpath, path, sizeof path));
  snprintf(tmp, sizeof tmp, "%s.rebuild-%ld", path, (long)getpid());
  /* A work dir is rebuilt in place: say so when it cannot be written, rather than let the
   * compiler or linker fail on its output file (which read as a source that does not compile). */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return pto_status_make(
        PTO_STATUS_IO,
        "cannot write %s: %s: a stale work dir is rebuilt in place, so it must be "
        "writable (copy it somewhere writable, or rebuild it as its owner)",
        tmp, strerror(errno));
  close(fd);
  pto_status s = build(api, arg, tmp);
  if (!s && rename(tmp, path) != 0)
    s = pto_status_make(PTO_STATUS_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
  if (s) unlink(tmp);
  return s;
}

typedef struct src_arg {
  const char *src; /* absolute */
  int opt_level;
} src_arg;

static pto_status build_orch(const pto_compiler_api *api, const void *arg, const char *out) {
  const src_arg *a = arg;
  return api->build_orchestration(a->src, out);
}

static pto_status build_obj(const pto_compiler_api *api, const void *arg, const char *out) {
  const src_arg *a = arg;
  return api->build_kernel_object(a->src, a->opt_level, out);
}

typedef struct link_arg {
  const char *const *objects;
  int n;
} link_arg;

static pto_status build_link(const pto_compiler_api *api, const void *arg, const char *out) {
  const link_arg *a = arg;
  return api->link_kernels(a->objects, a->n, out);
}

/* Rebuilds the binary of source relpath and checks that the source did not change meanwhile
 * (else the recorded hash would vouch for a binary built from other text). */
static pto_status rebuild_from(const pto_compiler_api *api, const char *dir, const char *src_rel,
                               const char *out_rel, build_fn build, int opt_level) {
  char before[PTO_HASH_HEX_LEN + 1], after[PTO_HASH_HEX_LEN + 1];
  char *src = NULL;
  PTO_RETURN_IF_ERROR(pto_manifest_resolve(dir, src_rel, &src));
  pto_status s = pto_file_hash(src, before);
  src_arg a = {src, opt_level};
  if (!s) s = build_into(api, dir, out_rel, build, &a);
  if (!s) s = pto_file_hash(src, after);
  if (!s && strcmp(before, after) != 0)
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s changed while it was being rebuilt; run pto rebuild %s again", dir,
                        src_rel, dir);
  free(src);
  if (s) return pto_status_annotate(s, "rebuilding %s/%s", dir, out_rel);
  return PTO_OK;
}

static int is_kernel_object(const pto_manifest *m, const char *relpath) {
  for (int i = 0; i < m->nkernels; i++)
    if (m->kernels[i].object && !strcmp(m->kernels[i].object, relpath)) return 1;
  return 0;
}

static pto_status build_host_so(const pto_compiler_api *api, const void *arg, const char *out) {
  const src_arg *a = arg;
  if (api->size < offsetof(pto_compiler_api, build_host) + sizeof api->build_host ||
      !api->build_host)
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                           "the pto compiler library cannot build host code (too old)");
  return api->build_host(a->src, out);
}

/* A host work dir: every callee work dir rebuilt as an L2 one, then host/host.so from an edited
 * host/host.c (or a missing or mismatching host.so), then the manifest. */
static pto_status rebuild_host_dir(const char *work_dir, pto_manifest *m, int *out_rebuilt) {
  int rebuilt = 0, d = 0;
  pto_status s = PTO_OK;
  for (int i = 0; i < m->ncallees; i++) {
    char sub[PATH_MAX];
    int n = 0;
    snprintf(sub, sizeof sub, "%s/callees/%s", work_dir, m->callees[i]);
    if ((s = pto_program_rebuild_dir(sub, &n))) return s;
    rebuilt += n;
  }
  if ((s = source_differs(work_dir, m, m->host_source, &d))) return s;
  if (!d && (s = differs(work_dir, m, m->host.path, &d))) return s;
  if (d) {
    const pto_compiler_api *api = NULL;
    if ((s = pto__loader_compiler(&api))) return s;
    if ((s = rebuild_from(api, work_dir, m->host_source, m->host.path, build_host_so,
                          m->opt_level)))
      return s;
    rebuilt++;
    if ((s = pto_manifest_add_file(m, work_dir, m->host_source))) return s;
    if ((s = pto_manifest_add_file(m, work_dir, m->host.path))) return s;
    if ((s = pto_manifest_binary_set(&m->host, work_dir, m->host.path))) return s;
    if ((s = pto_manifest_write(work_dir, m))) return s;
  }
  if (out_rebuilt) *out_rebuilt = rebuilt;
  return PTO_OK;
}

pto_status pto_program_rebuild_dir(const char *work_dir, int *out_rebuilt) {
  if (out_rebuilt) *out_rebuilt = 0;
  pto_manifest m;
  PTO_RETURN_IF_ERROR(pto_manifest_read(work_dir, &m));
  pto_status ps = check_program_text(work_dir, &m);
  if (ps) {
    pto_manifest_free(&m);
    return ps;
  }
  if (m.is_host) {
    pto_status hs = rebuild_host_dir(work_dir, &m, out_rebuilt);
    pto_manifest_free(&m);
    return hs;
  }
  pto_status s = PTO_OK;
  int nk = m.nkernels, rebuilt = 0, need_orch = 0, need_link = 0, any_obj = 0, d = 0;
  int *need_obj = pto_calloc((size_t)nk + 1, sizeof *need_obj);
  const char **objects = pto_calloc((size_t)m.nfiles + (size_t)nk + 1, sizeof *objects);
  char **object_paths = pto_calloc((size_t)m.nfiles + (size_t)nk + 1, sizeof *object_paths);
  int nobjects = 0;
  if (!need_obj || !objects || !object_paths) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory rebuilding %s", work_dir);
    goto done;
  }

  /* 1. What is stale, touching nothing. */
  if ((s = source_differs(work_dir, &m, m.orch_source, &d))) goto done;
  need_orch = d;
  if (!need_orch) {
    if ((s = differs(work_dir, &m, m.orch.path, &d))) goto done;
    need_orch = d;
  }
  for (int i = 0; i < nk; i++) {
    const pto_manifest_kernel *k = &m.kernels[i];
    if (!k->source || !k->object) continue;
    if ((s = source_differs(work_dir, &m, k->source, &d))) goto done;
    need_obj[i] = d;
    if (!d) {
      if ((s = differs(work_dir, &m, k->object, &d))) goto done;
      need_obj[i] = d;
    }
    any_obj |= need_obj[i];
  }
  if ((s = differs(work_dir, &m, m.kernels_so.path, &d))) goto done;
  need_link = any_obj || d;
  if (need_link) {
    /* Every object that is linked in must be what the manifest says, or be rebuilt now. */
    for (int i = 0; i < nk; i++) {
      if (!m.kernels[i].object || !m.kernels[i].source) {
        s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                            "%s/%s: kernel '%s' has no recorded source or object, so "
                            "kernels.so cannot be relinked; compile the program again",
                            work_dir, PTO_MANIFEST_FILENAME, m.kernels[i].name);
        goto done;
      }
      objects[nobjects++] = m.kernels[i].object;
    }
    for (int i = 0; i < m.nfiles; i++) {
      const char *f = m.files[i].path;
      if (!ends_with(f, ".o") || is_kernel_object(&m, f)) continue;
      if ((s = differs(work_dir, &m, f, &d))) goto done;
      if (d) {
        s = pto_status_make(PTO_STATUS_DATA_LOSS,
                            "%s/%s is missing or does not match the manifest, and there is no "
                            "source to rebuild it from; compile the program again",
                            work_dir, f);
        goto done;
      }
      objects[nobjects++] = f;
    }
  }
  if (!need_orch && !need_link) goto done; /* nothing stale: the compiler stays unloaded */

  /* 2. Rebuild. */
  const pto_compiler_api *api = NULL;
  if ((s = pto__loader_compiler(&api))) goto done;
  if (need_orch) {
    if ((s = rebuild_from(api, work_dir, m.orch_source, m.orch.path, build_orch, m.opt_level)))
      goto done;
    rebuilt++;
    if ((s = pto_manifest_add_file(&m, work_dir, m.orch_source))) goto done;
    if ((s = pto_manifest_add_file(&m, work_dir, m.orch.path))) goto done;
    if ((s = pto_manifest_binary_set(&m.orch, work_dir, m.orch.path))) goto done;
  }
  for (int i = 0; i < nk; i++) {
    if (!need_obj[i]) continue;
    const pto_manifest_kernel *k = &m.kernels[i];
    if ((s = rebuild_from(api, work_dir, k->source, k->object, build_obj, m.opt_level))) goto done;
    rebuilt++;
    if ((s = pto_manifest_add_file(&m, work_dir, k->source))) goto done;
    if ((s = pto_manifest_add_file(&m, work_dir, k->object))) goto done;
  }
  if (need_link) {
    for (int i = 0; i < nobjects; i++) {
      /* The objects as the manifest now records them, checked once more right before linking. */
      if ((s = differs(work_dir, &m, objects[i], &d))) goto done;
      if (d) {
        s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                            "%s/%s changed while rebuilding; run pto rebuild %s again", work_dir,
                            objects[i], work_dir);
        goto done;
      }
      if ((s = pto_manifest_resolve(work_dir, objects[i], &object_paths[i]))) goto done;
    }
    link_arg la = {(const char *const *)object_paths, nobjects};
    if ((s = build_into(api, work_dir, m.kernels_so.path, build_link, &la))) {
      s = pto_status_annotate(s, "relinking %s/%s", work_dir, m.kernels_so.path);
      goto done;
    }
    rebuilt++;
    if ((s = pto_manifest_add_file(&m, work_dir, m.kernels_so.path))) goto done;
    if ((s = pto_manifest_binary_set(&m.kernels_so, work_dir, m.kernels_so.path))) goto done;
  }
  /* 3. The manifest, last and atomically. */
  s = pto_manifest_write(work_dir, &m);
  if (!s && out_rebuilt) *out_rebuilt = rebuilt;
done:
  if (object_paths)
    for (int i = 0; i < nobjects; i++)
      free(object_paths[i]);
  free(object_paths);
  free(objects);
  free(need_obj);
  pto_manifest_free(&m);
  return s;
}

pto_status pto_program_set_orch_entry(const char *work_dir, const char *symbol) {
  if (!work_dir)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_program_set_orch_entry: work_dir is NULL");
  pto_manifest m;
  PTO_RETURN_IF_ERROR(pto_manifest_read(work_dir, &m));
  pto_status s = PTO_OK;
  if (m.is_host) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "%s is a host (L3) program: its orchestration entries are those of its "
                        "callees, each a work dir of its own (%s/callees/<name>)",
                        work_dir, work_dir);
  } else {
    free(m.orch_entry_symbol);
    m.orch_entry_symbol = NULL;
    if (symbol && strcmp(symbol, PTO_ORCH_DEFAULT_ENTRY) != 0 &&
        !(m.orch_entry_symbol = pto_strdup(symbol)))
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    if (!s) s = pto_manifest_write(work_dir, &m);
    if (s)
      s = pto_status_annotate(s, "setting the orchestration entry of %s to '%s'", work_dir,
                              symbol ? symbol : PTO_ORCH_DEFAULT_ENTRY);
  }
  pto_manifest_free(&m);
  return s;
}
