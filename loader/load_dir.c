/* pto_program_load_dir: a work dir to a loaded program.
 *
 * Order matters: nothing is dlopen'ed until every check that can be made on the files has
 * passed. 1. the manifest reads and validates; 2. every source (.cpp, .ll) still has its
 * recorded content hash, else its binary is stale (FAILED_PRECONDITION: run pto rebuild);
 * 3. each shared object is read once, and those very bytes are hashed and their Build-ID read:
 * a mismatch with the manifest is DATA_LOSS and the file is never loaded (the manifest's
 * signature is checked against program.ptir before that, in a work dir; in a cache entry, after
 * loading, against the fingerprint compiled into the orchestration object); 4. dlopen, then the
 * Build-ID of the image the dynamic loader actually mapped is compared again. dlopen runs the
 * constructors of what it maps before that second check can refuse it, so the path is loaded in
 * place only when nobody but this user or root can swap the file meanwhile (path_is_private);
 * otherwise, and when an older image of the same path is still mapped in this process (dlopen
 * would return it), the verified bytes are loaded from a private copy, kept under a real path
 * until the program is released (open_private_copy); 5. ABI versions and symbols.
 *
 * Object files (the kernels/<k>.o) and other listed files are not needed to load and are not
 * checked here; rebuilding is what reads them. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/ir.h"
#include "pto/manifest.h"
#include "pto/signature.h"

static pto_status oom(void) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory loading a work dir");
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_source(const char *relpath) {
  return ends_with(relpath, ".cpp") || ends_with(relpath, ".ll") || ends_with(relpath, ".c") ||
         ends_with(relpath, ".ptir");
}

/* A hand-edited source makes its binary stale: refuse, and say how to fix it. */
static pto_status check_sources(const char *dir, const char *rdir, const pto_manifest *m) {
  for (int i = 0; i < m->nfiles; i++) {
    const pto_manifest_file *f = &m->files[i];
    if (!is_source(f->path)) continue;
    char *real = NULL;
    char hash[PTO_HASH_HEX_LEN + 1];
    pto_status s = pto__manifest_resolve_in(rdir, dir, f->path, &real);
    if (!s) s = pto_file_hash(real, hash);
    free(real);
    if (s) {
      if (pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
        pto_status_free(s);
        return pto_status_make(PTO_STATUS_NOT_FOUND,
                               "%s/%s: listed in the manifest but missing; compile the program "
                               "again",
                               dir, f->path);
      }
      return s;
    }
    if (strcmp(hash, f->hash) != 0 && ends_with(f->path, ".ptir")) {
      /* The binaries were made from the old text, and --check would interpret the new one. */
      return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                             "%s/%s: edited since it was compiled (content hash %s, the manifest "
                             "has %s), so every binary of the work dir is stale; compile it "
                             "again: pto compile %s/%s -o DIR",
                             dir, f->path, hash, f->hash, dir, f->path);
    }
    if (strcmp(hash, f->hash) != 0) {
      return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                             "%s/%s: edited since it was compiled (content hash %s, the manifest "
                             "has %s), so its binary is stale; run: pto rebuild %s",
                             dir, f->path, hash, f->hash, dir);
    }
  }
  return PTO_OK;
}

/* Reads the shared object b, checks its bytes against the manifest (content hash and Build-ID),
 * and returns its resolved path. */
static pto_status verify_binary(const char *dir, const char *rdir, const pto_manifest *m,
                                const pto_manifest_binary *b, char **out_real, uint8_t **out_buf,
                                size_t *out_len) {
  *out_real = NULL;
  *out_buf = NULL;
  *out_len = 0;
  char *real = NULL;
  uint8_t *buf = NULL;
  size_t len = 0, idlen = 0;
  uint8_t id[PTO_BUILD_ID_MAX];
  char hash[PTO_HASH_HEX_LEN + 1], idhex[2 * PTO_BUILD_ID_MAX + 1];
  const pto_manifest_file *f = pto_manifest_find_file(m, b->path);
  pto_status s = pto__manifest_resolve_in(rdir, dir, b->path, &real);
  if (s) goto done;
  s = pto_file_read(real, PTO_FILE_MAX_BINARY, &buf, &len);
  if (s) goto done;
  pto_hash_xxh128_hex(buf, len, hash);
  if (!f || strcmp(hash, f->hash) != 0) {
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: content hash %s differs from the manifest's %s: the file is "
                        "corrupt or was replaced; refusing to load it (compile the program again)",
                        dir, b->path, hash, f ? f->hash : "(none)");
    goto done;
  }
  s = pto__loader_build_id_mem(real, buf, len, id, &idlen);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    s = PTO_OK;
  }
  if (s) goto done;
  pto_hash_hex(id, idlen, idhex);
  if (strcmp(idhex, b->build_id) != 0) {
    s = pto_status_make(
        PTO_STATUS_DATA_LOSS,
        "%s/%s: Build-ID '%s' differs from the manifest's '%s'; refusing to load it", dir, b->path,
        idhex, b->build_id);
    goto done;
  }
  *out_real = real;
  real = NULL;
  *out_buf = buf;
  *out_len = len;
  buf = NULL;
done:
  free(buf);
  free(real);
  return s;
}

/* The Build-ID of the image behind handle, as lowercase hex. */
static pto_status loaded_id_hex(void *h, const char *name, char out[2 * PTO_BUILD_ID_MAX + 1]) {
  uint8_t id[PTO_BUILD_ID_MAX];
  size_t idlen = 0;
  PTO_RETURN_IF_ERROR(pto__loader_loaded_build_id(h, name, id, &idlen));
  pto_hash_hex(id, idlen, out);
  return PTO_OK;
}

/* ---- in place or from a private copy ------------------------------------------------------ */

/* Whether nobody but this user or root can change what path names before dlopen maps it, as
 * OpenSSH's StrictModes asks of authorized_keys: the file is a regular file owned by this user
 * or root and not writable by group or others, and so is every directory from / down to it,
 * except that a directory others may write (/tmp) is accepted when it has the sticky bit and
 * the entry in it is ours or root's, which only they may then rename or remove (is_dir: path
 * is such a directory instead of a file). path is a realpath: a symbolic link met on the way (one
 * made since) fails the check. ACLs are not read. */
static int owner_ok(const struct stat *st) { return st->st_uid == geteuid() || st->st_uid == 0; }

static int path_is_private(const char *path, int is_dir) {
  if (path[0] != '/') return 0;
  int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (cur < 0 || fstat(cur, &st) != 0 || !owner_ok(&st)) {
    if (cur >= 0) close(cur);
    return 0;
  }
  int ok = 1;
  const char *p = path;
  while (ok) {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/");
    if (n == 0 || n >= NAME_MAX + 1) {
      ok = 0;
      break;
    }
    char name[NAME_MAX + 1];
    memcpy(name, p, n);
    name[n] = 0;
    p += n;
    int last = *p == 0;
    /* Others may write the directory that holds this entry: only a sticky one will do. */
    int shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0, sticky = (st.st_mode & S_ISVTX) != 0;
    int next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
    close(cur);
    cur = next;
    if (cur < 0 || fstat(cur, &st) != 0 || !owner_ok(&st) || (shared && !sticky) ||
        (last ? (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) ||
                    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0
              : !S_ISDIR(st.st_mode))) {
      ok = 0;
      break;
    }
    if (last) break;
  }
  if (cur >= 0) close(cur);
  return ok;
}

/* The places a private copy may go, in order: $XDG_RUNTIME_DIR (the user's own, usually a
 * tmpfs), $TMPDIR, /tmp. */
static int copy_bases(const char *out[3]) {
  int n = 0;
  const char *x = getenv("XDG_RUNTIME_DIR"), *t = getenv("TMPDIR");
  if (x && x[0] == '/') out[n++] = x;
  if (t && *t && (!n || strcmp(t, out[0]) != 0)) out[n++] = t;
  if (strcmp(n ? out[n - 1] : "", "/tmp") != 0) out[n++] = "/tmp";
  return n;
}

/* Writes buf as a new file path, mode 0500. */
static pto_status write_copy(const char *path, const uint8_t *buf, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
  if (fd < 0) return pto_status_make(PTO_STATUS_IO, "cannot create %s: %s", path, strerror(errno));
  pto_status s = PTO_OK;
  for (size_t off = 0; off < len;) {
    ssize_t n = write(fd, buf + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
      break;
    }
    off += (size_t)n;
  }
  if (close(fd) != 0 && !s)
    s = pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
  return s;
}

/* dlopen of a private copy of the verified bytes buf: a file of mode 0500 in a directory of
 * this process's own, *copy_dir (pto-load-<pid>-XXXXXX, made by the program's first copy in the
 * first of copy_bases that is private by path_is_private and from which the copy loads; a
 * tmpfs mounted noexec refuses the mapping), kept under its real name while the program is
 * loaded, so that debuggers, profilers and dladdr find the file, and removed when the program
 * is released (pto__loader_release_held). Used when the path itself is not private (others
 * could swap the file between the check of its bytes and dlopen, which runs the constructors of
 * whatever it maps), and when an older image of the same path is still mapped in this process
 * (dlopen would hand back that image). The copy is named after the manifest's path, with '-'
 * for '/' (kernels-kernels.so). */
static pto_status open_private_copy(const char *dir, const pto_manifest_binary *b,
                                    const uint8_t *buf, size_t len, char **copy_dir,
                                    void **out_handle) {
  *out_handle = NULL;
  const char *bases[3];
  int nbases = *copy_dir ? 1 : copy_bases(bases);
  pto_status first = PTO_OK;
  for (int i = 0; i < nbases; i++) {
    char *made = NULL;
    pto_status s = PTO_OK;
    if (!*copy_dir) {
      /* Made under the base's realpath, the copy's path is real: the name the link map and
       * debuggers show, and one path_is_private can walk. */
      char *rbase = realpath(bases[i], NULL);
      s = rbase ? pto__loader_private_dir(rbase, "load", &made)
                : pto_status_make(PTO_STATUS_NOT_FOUND, "%s: %s", bases[i], strerror(errno));
      free(rbase);
      if (!s && !path_is_private(made, 1))
        s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                            "%s is not private (it, or a directory above it, is owned by "
                            "another user or writable by others without the sticky bit)",
                            made);
    }
    const char *cdir = made ? made : *copy_dir;
    char path[PATH_MAX];
    if (!s && strlen(cdir) + 1 + strlen(b->path) >= sizeof path)
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s/%s: path too long", cdir, b->path);
    if (!s) {
      size_t k = (size_t)snprintf(path, sizeof path, "%s/", cdir);
      for (const char *c = b->path; *c; c++)
        path[k++] = *c == '/' ? '-' : *c;
      path[k] = 0;
    }
    if (!s) s = write_copy(path, buf, len);
    if (!s) {
      dlerror();
      void *h = pto__loader_dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) {
        if (made) *copy_dir = made;
        pto_status_free(first);
        *out_handle = h;
        return PTO_OK;
      }
      const char *e = dlerror();
      s = pto_status_make(PTO_STATUS_IO, "%s/%s: cannot load its private copy %s: %s", dir, b->path,
                          path, e ? e : "dlopen failed");
      if (!made) unlink(path);
    }
    pto__loader_release_held(made);
    if (!first)
      first = s;
    else
      pto_status_free(s);
  }
  return pto_status_annotate(first, "loading a private copy of %s/%s", dir, b->path);
}

#ifdef PTO_TEST_HOOKS
void (*pto__loader_test_after_verify)(const char *path);
#endif

static int name_is(struct dl_phdr_info *info, size_t size, void *path) {
  (void)size;
  return info->dlpi_name && strcmp(info->dlpi_name, path) == 0;
}

/* Whether an object loaded in this process has the name path (a realpath, as every dlopen
 * below is given). Cheaper than asking dlopen with RTLD_NOLOAD, which opens and reads the file
 * to compare inodes: the case it would find besides, the same file under another name, loads
 * to that image anyway, and its Build-ID is checked below like any other. */
static int loaded_as(const char *path) {
  return pto__loader_dl_iterate_phdr(name_is, (void *)path) != 0;
}

/* dlopen after verify_binary (buf holds the verified bytes), then the mapped image's Build-ID
 * once more: in place when the path is private (path_is_private: nobody else can swap the file
 * meanwhile), else from a private copy of buf (open_private_copy, into *copy_dir). */
static pto_status open_binary(const char *dir, const pto_manifest_binary *b, const char *real,
                              const uint8_t *buf, size_t len, char **copy_dir, void **out_handle) {
  *out_handle = NULL;
  char idhex[2 * PTO_BUILD_ID_MAX + 1];
#ifdef PTO_TEST_HOOKS
  if (pto__loader_test_after_verify) pto__loader_test_after_verify(real);
#endif
  /* An image of this path already mapped in this process: reuse it when it is this build (its
   * constructors ran when it was mapped), else load the new build under a private name. */
  void *h = b->build_id[0] && loaded_as(real)
                ? pto__loader_dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)
                : NULL;
  if (h) {
    pto_status s = loaded_id_hex(h, real, idhex);
    if (!s && strcmp(idhex, b->build_id) == 0) {
      *out_handle = h;
      return PTO_OK;
    }
    pto_status_free(s);
    pto__loader_dlclose(h);
    PTO_RETURN_IF_ERROR(open_private_copy(dir, b, buf, len, copy_dir, &h));
  } else if (!path_is_private(real, 0)) {
    PTO_RETURN_IF_ERROR(open_private_copy(dir, b, buf, len, copy_dir, &h));
  } else {
    dlerror();
    h = pto__loader_dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      return pto_status_make(PTO_STATUS_IO, "%s/%s: cannot load it: %s", dir, b->path,
                             e ? e : "dlopen failed");
    }
  }
  if (b->build_id[0]) {
    pto_status s = loaded_id_hex(h, real, idhex);
    if (s) {
      pto__loader_dlclose(h);
      return s;
    }
    if (strcmp(idhex, b->build_id) != 0) {
      pto__loader_dlclose(h);
      return pto_status_make(PTO_STATUS_DATA_LOSS,
                             "%s/%s: the loaded image has Build-ID '%s', the manifest '%s': the "
                             "file changed while loading; refusing it",
                             dir, b->path, idhex, b->build_id);
    }
  }
  *out_handle = h;
  return PTO_OK;
}

/* A symbol defined by the object of handle itself, or NULL. dlsym also searches the object's
 * dependencies, so a manifest edited to name 'system' would otherwise call libc: the address
 * found must lie in the object that handle loaded. */
static void *sym(void *handle, const char *name) {
  dlerror();
  void *p = dlsym(handle, name);
  struct link_map *lm = NULL;
  Dl_info info;
  if (!p || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !dladdr(p, &info) ||
      !info.dli_fname || !lm->l_name || strcmp(info.dli_fname, lm->l_name) != 0)
    return NULL;
  return p;
}

/* Same, and the symbol must be a function: a manifest naming a data symbol of the object
 * must not make the runtime call into data. */
static void *func_sym(void *handle, const char *name) {
  void *p = sym(handle, name);
  Dl_info info;
  const ElfW(Sym) *es = NULL;
  if (!p || !dladdr1(p, &info, (void **)&es, RTLD_DL_SYMENT) || !es ||
      ELF64_ST_TYPE(es->st_info) != STT_FUNC)
    return NULL;
  return p;
}

static const char *dims_text(const pto_signature *sig, const pto_sig_param *p, char *buf,
                             size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < p->rank && k < n; d++) {
    const pto_sig_dim *dm = &p->dims[d];
    if (dm->sym >= 0 && dm->sym < sig->nsyms)
      k += (size_t)snprintf(buf + k, n - k, "%s%s", d ? "," : "", sig->syms[dm->sym]);
    else
      k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)dm->value);
  }
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

/* What differs between two signatures, or NULL. */
static const char *sig_mismatch(const pto_signature *a, const pto_signature *b, char *why,
                                size_t n) {
  if (strcmp(a->entry ? a->entry : "", b->entry ? b->entry : "") != 0) return "the entry";
  if (a->nparams != b->nparams || a->nrets != b->nrets) return "the parameter count";
  for (int i = 0; i < a->nparams; i++) {
    const pto_sig_param *x = &a->params[i], *y = &b->params[i];
    char dx[128], dy[128];
    dims_text(a, x, dx, sizeof dx);
    dims_text(b, y, dy, sizeof dy);
    if (strcmp(x->name, y->name) || x->is_tensor != y->is_tensor || x->dir != y->dir ||
        x->dtype != y->dtype || x->bind != y->bind ||
        (x->bind == PTO_BIND_LITERAL && memcmp(&x->value, &y->value, sizeof x->value)) ||
        strcmp(dx, dy)) {
      snprintf(why, n, "parameter %d ('%s' %s %s in the manifest, '%s' %s %s in the program)", i,
               x->name, pto_dtype_name(x->dtype), dx, y->name, pto_dtype_name(y->dtype), dy);
      return why;
    }
  }
  return NULL;
}

/* The manifest's signature and kernel table against the fingerprint the compiler wrote into the
 * orchestration object (pto_signature_fingerprint): a manifest edited by hand, with its file
 * hashes and program.ptir edited to match (or program.ptir dropped), still differs from the
 * compiled code. */
static pto_status check_fingerprint_of(const char *dir, const pto_manifest *m, void *dl,
                                       const char *symbol, const char *object, int n,
                                       const char *const *names, const char *const *symbols) {
  const char *have = sym(dl, symbol);
  /* Hand-written orchestration (or generated code whose fingerprint line was deleted) carries
   * none: its signature is the manifest's, checked against program.ptir alone. */
  if (!have) return PTO_OK;
  char want[33];
  PTO_RETURN_IF_ERROR(pto_signature_fingerprint(&m->sig, n, names, symbols, want));
  if (strncmp(have, want, sizeof want) != 0)
    return pto_status_make(PTO_STATUS_DATA_LOSS,
                           "%s/%s: the signature or %s does not match the one %s was compiled "
                           "for (fingerprint %.32s, the manifest's %s); the manifest was edited: "
                           "compile the program again",
                           dir, PTO_MANIFEST_FILENAME, m->is_host ? "callee list" : "kernel table",
                           object, have, want);
  return PTO_OK;
}

static pto_status check_fingerprint(const char *dir, const pto_manifest *m, void *orch_dl) {
  const char **names = pto_calloc((size_t)m->nkernels + 1, sizeof *names);
  const char **symbols = pto_calloc((size_t)m->nkernels + 1, sizeof *symbols);
  pto_status s = PTO_OK;
  if (!names || !symbols) {
    s = oom();
  } else {
    for (int i = 0; i < m->nkernels; i++) {
      names[i] = m->kernels[i].name;
      symbols[i] = m->kernels[i].symbol;
    }
    s = check_fingerprint_of(dir, m, orch_dl, PTO_ORCH_FINGERPRINT_SYMBOL, m->orch.path,
                             m->nkernels, names, symbols);
  }
  free(names);
  free(symbols);
  return s;
}

/* The manifest's signature is what the runtime validates launches against; it must be the
 * signature of the program the binaries were built from (DIR/program.ptir, whose hash
 * check_sources has verified), not a hand edit of the manifest. */
static pto_status check_signature(const char *dir, const char *rdir, const pto_manifest *m) {
  int listed = 0;
  for (int i = 0; i < m->nfiles; i++)
    listed |= !strcmp(m->files[i].path, "program.ptir");
  if (!listed) return PTO_OK; /* a work dir written by an older pto */
  char *path = NULL;
  PTO_RETURN_IF_ERROR(pto__manifest_resolve_in(rdir, dir, "program.ptir", &path));
  pto_ir_program *ir = NULL;
  pto_signature sig;
  memset(&sig, 0, sizeof sig);
  pto_status s = pto_ir_parse_file(path, &ir);
  const pto_ir_func *f = NULL;
  if (!s && !(f = pto_ir_program_find_func(ir, m->sig.entry ? m->sig.entry : "")))
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: field 'signature.entry': program.ptir has no function @%s; the "
                        "manifest was edited: compile the program again",
                        dir, PTO_MANIFEST_FILENAME, m->sig.entry ? m->sig.entry : "");
  if (!s) s = pto_signature_build(ir, f, NULL, 0, NULL, 0, &sig);
  char why[512];
  const char *what = s ? NULL : sig_mismatch(&m->sig, &sig, why, sizeof why);
  if (what)
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: the signature does not match program.ptir, which the binaries "
                        "were built from: %s differs; the manifest was edited: compile the "
                        "program again",
                        dir, PTO_MANIFEST_FILENAME, what);
  pto_signature_clear(&sig);
  pto_ir_program_destroy(ir);
  free(path);
  return s;
}

#define SYM_AS(fnptr, handle, name)                                                                \
  do {                                                                                             \
    void *sym__ = sym((handle), (name));                                                           \
    memcpy(&(fnptr), &sym__, sizeof(fnptr));                                                       \
  } while (0)

/* ---- the CPU a work dir was compiled for ------------------------------------------------- */

/* Kernels are compiled for the compiling machine's CPU (LLVM's host CPU and features, recorded
 * in the manifest's "toolchain" as "features=+avx512f,..."). A cache entry is filed under this
 * CPU's model and flags (the cache key, the remote key), so only a work dir can come from
 * another CPU; run on a CPU without an extension its code uses, it would stop with an illegal
 * instruction. The extensions below are those LLVM's code generator can emit on x86-64, with the
 * name /proc/cpuinfo's "flags" gives each; a feature not listed (tuning flags, extensions that
 * need the OS's consent, names this table does not know) is not checked. */
typedef struct cpu_feature {
  const char *llvm, *flag;
} cpu_feature;

static const cpu_feature k_x86_features[] = {
    {"sse3", "pni"},
    {"ssse3", "ssse3"},
    {"sse4.1", "sse4_1"},
    {"sse4.2", "sse4_2"},
    {"popcnt", "popcnt"},
    {"cx16", "cx16"},
    {"movbe", "movbe"},
    {"lzcnt", "abm"},
    {"bmi", "bmi1"},
    {"bmi2", "bmi2"},
    {"adx", "adx"},
    {"aes", "aes"},
    {"pclmul", "pclmulqdq"},
    {"sha", "sha_ni"},
    {"avx", "avx"},
    {"avx2", "avx2"},
    {"fma", "fma"},
    {"f16c", "f16c"},
    {"avxvnni", "avx_vnni"},
    {"gfni", "gfni"},
    {"vaes", "vaes"},
    {"vpclmulqdq", "vpclmulqdq"},
    {"avx512f", "avx512f"},
    {"avx512bw", "avx512bw"},
    {"avx512cd", "avx512cd"},
    {"avx512dq", "avx512dq"},
    {"avx512vl", "avx512vl"},
    {"avx512ifma", "avx512ifma"},
    {"avx512vbmi", "avx512vbmi"},
    {"avx512vbmi2", "avx512_vbmi2"},
    {"avx512vnni", "avx512_vnni"},
    {"avx512bitalg", "avx512_bitalg"},
    {"avx512vpopcntdq", "avx512_vpopcntdq"},
    {"avx512bf16", "avx512_bf16"},
    {"avx512fp16", "avx512_fp16"},
    {"amx-tile", "amx_tile"},
    {"amx-int8", "amx_int8"},
    {"amx-bf16", "amx_bf16"},
};

static int has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
  return 0;
}

/* The first processor's "flags" of /proc/cpuinfo (the reader of the cache key's target
 * lines), read once per process; NULL when unreadable. */
static pthread_once_t g_flags_once = PTHREAD_ONCE_INIT;
static char *g_cpu_flags;

static void read_cpu_flags(void) { g_cpu_flags = pto__loader_cpu_flags(PTO__CPUINFO); }

/* FAILED_PRECONDITION when the manifest records an extension (above) this CPU lacks. Nothing to
 * check on another architecture, for a manifest without features, or where /proc/cpuinfo has
 * no flags (then the check cannot be made, and the load goes on as before). */
static pto_status check_cpu(const char *work_dir, const pto_manifest *m) {
#if defined(__x86_64__)
  const char *f = m->toolchain ? strstr(m->toolchain, "features=") : NULL;
  if (!f) return PTO_OK;
  pthread_once(&g_flags_once, read_cpu_flags);
  if (!g_cpu_flags) return PTO_OK;
  for (const char *p = f + strlen("features="); *p && *p != ';';) {
    size_t n = strcspn(p, ",;"); /* one "+name" or "-name" */
    if (n > 1 && *p == '+') {
      for (size_t i = 0; i < sizeof k_x86_features / sizeof *k_x86_features; i++) {
        const cpu_feature *c = &k_x86_features[i];
        if (strlen(c->llvm) == n - 1 && !strncmp(p + 1, c->llvm, n - 1) &&
            !has_word(g_cpu_flags, c->flag))
          return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                                 "%s was compiled for a CPU with %s (LLVM feature +%s), which "
                                 "this CPU lacks (no '%s' in /proc/cpuinfo's flags): its "
                                 "kernels would stop with an illegal instruction; compile the "
                                 "program on this machine, or on one of its CPU model",
                                 work_dir, c->flag, c->llvm, c->flag);
      }
    }
    p += n;
    if (*p == ',') p++;
  }
#else
  (void)work_dir;
  (void)m;
#endif
  return PTO_OK;
}

/* A host (L3) work dir, after its manifest read and its sources checked: host.so verified and
 * opened, its ABI version checked, then every callee work dir loaded (same cache key). */
static pto_status load_host(const char *work_dir, char *rdir, const char *expect_key,
                            pto_manifest *m, pto_program **out_program) {
  char *real = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  pto_program *p = NULL;
  pto_status s = verify_binary(work_dir, rdir, m, &m->host, &real, &buf, &len);
  if (s) goto fail;
  p = pto__loader_program_alloc(0);
  if (!p) {
    s = oom();
    goto fail;
  }
  p->is_host = 1;
  p->work_dir = rdir;
  rdir = NULL;
  p->devices = pto_malloc((size_t)m->ndevices * sizeof *p->devices + 1);
  p->callees = pto_calloc((size_t)m->ncallees + 1, sizeof *p->callees);
  p->callee_dirs = pto_calloc((size_t)m->ncallees + 1, sizeof *p->callee_dirs);
  if (!p->devices || !p->callees || !p->callee_dirs) {
    s = oom();
    goto fail;
  }
  memcpy(p->devices, m->devices, (size_t)m->ndevices * sizeof *p->devices);
  p->ndevices = m->ndevices;
  s = open_binary(work_dir, &m->host, real, buf, len, &p->load_copy, &p->host_dl);
  if (s) goto fail;
  pto_host_abi_version_fn version = NULL;
  SYM_AS(version, p->host_dl, "pto_host_abi_version");
  if (!version) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: no 'pto_host_abi_version' symbol: not pto host code", work_dir,
                        m->host.path);
    goto fail;
  }
  uint32_t v = version();
  if (v != PTO_HOST_ABI_VERSION) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: host ABI version %u, this runtime needs %d; compile the program "
                        "again",
                        work_dir, m->host.path, v, PTO_HOST_ABI_VERSION);
    goto fail;
  }
  s = check_fingerprint_of(work_dir, m, p->host_dl, PTO_HOST_FINGERPRINT_SYMBOL, m->host.path,
                           m->ncallees, (const char *const *)m->callees,
                           (const char *const *)m->callees);
  if (s) goto fail;
  SYM_AS(p->host_entry, p->host_dl, "pto_host_entry");
  if (!p->host_entry) {
    s = pto_status_make(PTO_STATUS_NOT_FOUND, "%s/%s: no 'pto_host_entry' symbol", work_dir,
                        m->host.path);
    goto fail;
  }
  p->hid = m->host.hid;
  for (int i = 0; i < m->ncallees; i++) {
    char sub[PATH_MAX], *held = NULL;
    snprintf(sub, sizeof sub, "%s/callees/%s", work_dir, m->callees[i]);
    /* The chips load each callee from disk on their first run, which may be long after this
     * load: they load a private copy, made now and held until the program is released, and
     * the very copy is what is loaded (and verified) here. */
    s = pto__loader_hold_dir(sub, &held);
    if (!s) s = pto__loader_load_dir_checked(held, expect_key, &p->callees[i]);
    if (!s) {
      p->callees[i]->held_dir = held;
      p->ncallees = i + 1;
      char *rsub = realpath(sub, NULL);
      p->callee_dirs[i] = rsub ? rsub : pto_strdup(sub);
      if (!p->callee_dirs[i]) s = oom();
    } else {
      pto__loader_release_held(held);
    }
    if (s) {
      s = pto_status_annotate(s, "loading callee @%s of %s", m->callees[i], work_dir);
      goto fail;
    }
  }
  p->sig = m->sig;
  memset(&m->sig, 0, sizeof m->sig);
  free(real);
  free(buf);
  *out_program = p;
  return PTO_OK;
fail:
  pto_program_release(p);
  free(rdir);
  free(real);
  free(buf);
  return s;
}

pto_status pto_program_load_dir(const char *work_dir, pto_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_program_load_dir: out_program is NULL");
  return pto__loader_load_dir_checked(work_dir, NULL, out_program);
}

pto_status pto__loader_load_dir_checked(const char *work_dir, const char *expect_key,
                                        pto_program **out_program) {
  *out_program = NULL;
  pto_manifest m;
  pto_program *p = NULL;
  char *orch_real = NULL, *kern_real = NULL, *rdir = NULL;
  uint8_t *orch_buf = NULL, *kern_buf = NULL;
  size_t orch_len = 0, kern_len = 0;
  /* A cache entry's manifest is covered by its seal, as the files it lists by their hashes. */
  pto_status s =
      expect_key ? pto__loader_manifest_read_sealed(work_dir, &m) : pto_manifest_read(work_dir, &m);
  if (s) return s;
  if (expect_key && strcmp(m.cache_key, expect_key) != 0) {
    s = pto_status_make(PTO_STATUS_DATA_LOSS,
                        "%s/%s: field 'cache_key': \"%s\", but the entry is filed under %s",
                        work_dir, PTO_MANIFEST_FILENAME, m.cache_key, expect_key);
    goto fail;
  }

  /* Built for a platform this runtime does not have (a manifest of another or a later pto):
   * its binaries are not sim code. */
  if (m.platform && strcmp(m.platform, "sim") != 0) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: compiled for platform '%s', which this runtime does not have "
                        "(available: sim); compile the program for sim",
                        work_dir, PTO_MANIFEST_FILENAME, m.platform);
    goto fail;
  }

  /* Every path below is resolved under the work dir's realpath, found once. */
  s = pto__manifest_realdir(work_dir, &rdir);
  if (!s) s = check_sources(work_dir, rdir, &m);
  if (s) goto fail;
  if (m.is_host) {
    s = load_host(work_dir, rdir, expect_key, &m, out_program);
    pto_manifest_free(&m);
    return s;
  }
  /* A cache entry (expect_key) is pto's own output: its orchestration object carries the
   * fingerprint of the signature it was compiled for, checked below against the manifest's, so
   * reading and parsing program.ptir again on every hit would prove nothing more. A work dir (or
   * an entry whose object has no fingerprint) is checked against program.ptir, before loading. */
  if (!expect_key) {
    s = check_cpu(work_dir, &m);
    if (!s) s = check_signature(work_dir, rdir, &m);
    if (s) goto fail;
  }
  s = verify_binary(work_dir, rdir, &m, &m.orch, &orch_real, &orch_buf, &orch_len);
  if (s) goto fail;
  s = verify_binary(work_dir, rdir, &m, &m.kernels_so, &kern_real, &kern_buf, &kern_len);
  if (s) goto fail;

  p = pto__loader_program_alloc(m.nkernels);
  if (!p) {
    s = oom();
    goto fail;
  }
  p->work_dir = rdir;
  rdir = NULL;

  s = open_binary(work_dir, &m.kernels_so, kern_real, kern_buf, kern_len, &p->load_copy,
                  &p->kernels_dl);
  if (s) goto fail;
  const int32_t *kabi = sym(p->kernels_dl, "pto_kernel_abi_version");
  if (!kabi) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: no 'pto_kernel_abi_version' symbol: not a pto kernels object",
                        work_dir, m.kernels_so.path);
    goto fail;
  }
  if (*kabi != PTO_KERNEL_ABI_VERSION) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: kernel ABI version %d, this runtime needs %d; compile the program "
                        "again",
                        work_dir, m.kernels_so.path, (int)*kabi, PTO_KERNEL_ABI_VERSION);
    goto fail;
  }
  for (int i = 0; i < m.nkernels; i++) {
    const pto_manifest_kernel *k = &m.kernels[i];
    {
      void *fp = func_sym(p->kernels_dl, k->symbol);
      memcpy(&p->kernels[i], &fp, sizeof fp);
    }
    if (!p->kernels[i]) {
      s = pto_status_make(PTO_STATUS_NOT_FOUND,
                          "%s/%s: no function '%s' defined in it for kernel %d '%s' of the "
                          "manifest",
                          work_dir, m.kernels_so.path, k->symbol, i, k->name);
      goto fail;
    }
    p->kernel_core_types[i] = k->core_type;
    p->kernel_names[i] = pto_strdup(k->name);
    if (!p->kernel_names[i]) {
      s = oom();
      goto fail;
    }
    if (k->scratch_bytes > p->scratch_bytes) p->scratch_bytes = k->scratch_bytes;
  }

  s = open_binary(work_dir, &m.orch, orch_real, orch_buf, orch_len, &p->load_copy, &p->orch_dl);
  if (s) goto fail;
  pto_orch_abi_version_fn version = NULL;
  SYM_AS(version, p->orch_dl, "pto_orch_abi_version");
  if (!version) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: no 'pto_orch_abi_version' symbol: not a pto orchestration object",
                        work_dir, m.orch.path);
    goto fail;
  }
  uint32_t v = version();
  if (v != PTO_ORCH_ABI_VERSION) {
    s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                        "%s/%s: orchestration ABI version %u, this runtime needs %d; compile the "
                        "program again",
                        work_dir, m.orch.path, v, PTO_ORCH_ABI_VERSION);
    goto fail;
  }
  s = check_fingerprint(work_dir, &m, p->orch_dl);
  if (!s && expect_key && !sym(p->orch_dl, PTO_ORCH_FINGERPRINT_SYMBOL))
    s = check_signature(work_dir, p->work_dir, &m);
  if (s) goto fail;
  p->current_op = sym(p->orch_dl, "pto_orch_current_op"); /* absent in hand-written code */
  p->positions = pto__positions_read(work_dir);
  SYM_AS(p->orch_bind, p->orch_dl, "pto_orch_bind");
  /* The C++ entry takes const ChipTaskArgs&, ABI-identical to const pto_orch_args *. */
  const char *entry = m.orch_entry_symbol ? m.orch_entry_symbol : PTO_ORCH_DEFAULT_ENTRY;
  SYM_AS(p->orch_entry, p->orch_dl, entry);
  if (!p->orch_bind || !p->orch_entry) {
    s = pto_status_make(PTO_STATUS_NOT_FOUND,
                        "%s/%s: no '%s' symbol (is it declared extern \"C\"?)%s", work_dir,
                        m.orch.path, p->orch_bind ? entry : "pto_orch_bind",
                        p->orch_bind ? "; for an entry of another name: pto rebuild DIR "
                                       "--orch-entry NAME"
                                     : "");
    goto fail;
  }
  /* PyPTO's config function, when the orchestration has one: aicpu_orchestration_config, or
   * NAME_config beside an entry NAME of another name (vector_add_orchestration_config). */
  char config[256];
  if (strcmp(entry, PTO_ORCH_DEFAULT_ENTRY) == 0)
    snprintf(config, sizeof config, "%s", PTO_ORCH_DEFAULT_CONFIG);
  else
    snprintf(config, sizeof config, "%s_config", entry);
  void *config_fn = func_sym(p->orch_dl, config);
  memcpy(&p->orch_config, &config_fn, sizeof p->orch_config);
  p->hid = m.orch.hid;
  p->kernels_hid = m.kernels_so.hid;
  /* The signature moves from the manifest to the program. */
  p->sig = m.sig;
  memset(&m.sig, 0, sizeof m.sig);

  free(orch_real);
  free(kern_real);
  free(orch_buf);
  free(kern_buf);
  pto_manifest_free(&m);
  *out_program = p;
  return PTO_OK;

fail:
  pto_program_release(p);
  free(rdir);
  free(orch_real);
  free(kern_real);
  free(orch_buf);
  free(kern_buf);
  pto_manifest_free(&m);
  return s;
}
