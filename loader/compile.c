/* Compiling from the loader's side: the compiler library is dlopen'ed on demand (a cache hit
 * never maps LLVM), its output is recorded in a manifest written last, and programs are compiled
 * through the binary cache (cache.c). */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/manifest.h"
#include "remote_internal.h"

/* The compiler library, loaded once (g_compiler_once guards both). */
static pthread_once_t g_compiler_once = PTHREAD_ONCE_INIT;
static const pto_compiler_api *g_compiler;
static char g_compiler_error[1024];

static void *try_open(const char *path) {
  /* dlopen of a FIFO (PTO_COMPILER_LIBRARY naming one) blocks until a writer opens it: for ever.
   * A path must name a regular file (opened without blocking to check); a bare name is the
   * dynamic loader's to search. */
  if (strchr(path, '/')) {
    int fd;
    pto_status s = pto_file_open_regular(path, 0, &fd, NULL);
    if (s) {
      snprintf(g_compiler_error, sizeof g_compiler_error, "%s", pto_status_message(s));
      pto_status_free(s);
      return NULL;
    }
    close(fd);
  }
  void *h = pto__loader_dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) snprintf(g_compiler_error, sizeof g_compiler_error, "%s", dlerror());
  return h;
}

void pto__loader_compiler_path(char *out, size_t n) {
  const char *env = getenv("PTO_COMPILER_LIBRARY");
  if (env && *env) {
    snprintf(out, n, "%s", env);
    return;
  }
  /* Installed layout: libpto_compiler.so sits beside libpto_loader.so. */
  Dl_info info;
  if (dladdr((void *)&pto__loader_compiler_path, &info) && info.dli_fname) {
    char self[PATH_MAX], cand[PATH_MAX];
    snprintf(self, sizeof self, "%s", info.dli_fname);
    snprintf(cand, sizeof cand, "%s/%s", dirname(self), PTO_COMPILER_LIBRARY_NAME);
    if (access(cand, R_OK) == 0) {
      snprintf(out, n, "%s", cand);
      return;
    }
  }
  char cand[PATH_MAX];
  snprintf(cand, sizeof cand, "%s/%s", PTO_BUILD_LIBDIR, PTO_COMPILER_LIBRARY_NAME);
  if (access(cand, R_OK) == 0) {
    snprintf(out, n, "%s", cand);
    return;
  }
  snprintf(out, n, "%s", PTO_COMPILER_LIBRARY_NAME); /* the dynamic loader's search path */
}

/* The compiler's own search (compiler/exec.c) from where the compiler library is, so that the
 * cache key can name the headers generated code is compiled against without loading it. */
void pto__loader_include_dir(char *out, size_t n) {
  char lib[PATH_MAX];
  pto__loader_compiler_path(lib, sizeof lib);
  pto_file_include_dir(lib, out, n);
}

static void load_compiler(void) {
  /* A process that links the compiler already (a test built from the modules' objects, a tool
   * that always compiles) uses that copy rather than mapping a second one beside it. */
  const char *env = getenv("PTO_COMPILER_LIBRARY");
  const pto_compiler_api *linked =
      env && *env ? NULL : dlsym(RTLD_DEFAULT, "pto_compiler_api_table");
  if (linked && linked->version == PTO_COMPILER_API_VERSION &&
      linked->size >= sizeof(pto_compiler_api)) {
    g_compiler = linked;
    return;
  }
  char path[PATH_MAX];
  pto__loader_compiler_path(path, sizeof path);
  void *h = try_open(path);
  if (!h) return;
  const pto_compiler_api *api = dlsym(h, "pto_compiler_api_table");
  if (!api || api->version != PTO_COMPILER_API_VERSION || api->size < sizeof(pto_compiler_api)) {
    snprintf(g_compiler_error, sizeof g_compiler_error,
             "%s is not a compatible pto compiler library (API version %u, want %u)",
             PTO_COMPILER_LIBRARY_NAME, api ? api->version : 0, PTO_COMPILER_API_VERSION);
    pto__loader_dlclose(h);
    return;
  }
  g_compiler = api; /* the library stays loaded for the life of the process */
}

pto_status pto__loader_compiler(const pto_compiler_api **out_api) {
#ifdef PTO_NO_COMPILER
  *out_api = NULL;
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                         "this pto is runtime-only (built with -DPTO_COMPILER=OFF): it cannot "
                         "compile or rebuild; use a full pto for that");
#endif
  pthread_once(&g_compiler_once, load_compiler);
  *out_api = g_compiler;
  if (!g_compiler)
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "cannot load the pto compiler library %s: %s (set PTO_COMPILER_LIBRARY "
                           "to its path)",
                           PTO_COMPILER_LIBRARY_NAME, g_compiler_error);
  return PTO_OK;
}

int pto__loader_compiler_loaded(void) { return g_compiler != NULL; }

/* Completes and writes m (loader_internal.h). */
pto_status pto__loader_write_manifest(const char *dir, pto_manifest *m, const char *toolchain,
                                      const char *cache_key) {
  if (m->ncallees && !m->callee_dirs)
    return pto_status_make(PTO_STATUS_INTERNAL,
                           "%s: the compiler described %d callees without their work dirs", dir,
                           m->ncallees);
  char sub[PATH_MAX];
  for (int i = 0; i < m->ncallees; i++) {
    snprintf(sub, sizeof sub, "%s/callees/%s", dir, m->callees[i]);
    PTO_RETURN_IF_ERROR(pto__loader_write_manifest(sub, &m->callee_dirs[i], toolchain, cache_key));
  }
  pto_free(m->toolchain);
  if (!(m->toolchain = pto_strdup(toolchain ? toolchain : "")))
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing a manifest");
  snprintf(m->cache_key, sizeof m->cache_key, "%s", cache_key ? cache_key : "");
  for (int i = 0; i < m->nfiles; i++)
    PTO_RETURN_IF_ERROR(pto_manifest_add_file(m, dir, m->files[i].path));
  if (m->is_host) {
    PTO_RETURN_IF_ERROR(pto_manifest_binary_set(&m->host, dir, m->host.path));
  } else {
    PTO_RETURN_IF_ERROR(pto_manifest_binary_set(&m->orch, dir, m->orch.path));
    PTO_RETURN_IF_ERROR(pto_manifest_binary_set(&m->kernels_so, dir, m->kernels_so.path));
  }
  return pto_manifest_write(dir, m);
}

static pto_status build_dir_and_manifest(const pto_compiler_api *api, const pto_ir_program *p,
                                         const pto_compile_options *opt, const char *dir,
                                         const char *cache_key);

/* The compiler's toolchain identity runs `CXX --version` (a shell and a compiler driver, tens
 * of ms on a cold compile's critical path): computed on a thread of its own while the program
 * builds, then read for the manifest (the compiler memoizes it). */
static void *identity_thread(void *arg) {
  ((const pto_compiler_api *)arg)->toolchain_identity();
  return NULL;
}

#ifdef PTO_NO_COMPILER
/* A runtime-only pto (-DPTO_COMPILER=OFF) gets here on a miss of both cache levels: it says what
 * would serve the program instead. */
static pto_status cannot_compile(const char *cache_key) {
  char local[PATH_MAX], remote[1024];
  pto_status s = pto_cache_dir(local, sizeof local);
  if (s) {
    snprintf(local, sizeof local, "(none: %s)", pto_status_message(s));
    pto_status_free(s);
  }
  pto__loader_remote_url(remote, sizeof remote);
  return pto_status_make(
      PTO_STATUS_FAILED_PRECONDITION,
      "this pto is runtime-only (built with -DPTO_COMPILER=OFF) and cannot compile; the program "
      "(cache key %s) has no usable entry in the local cache %s or in %s%s%s. Compile it with a "
      "full pto that stores to the same remote (pto compile PROG -o DIR --remote-cache URL, with "
      "the same PTO_REMOTE_CACHE_KEY), or run a work dir compiled elsewhere (pto run DIR)",
      cache_key ? cache_key : "-", local, remote[0] ? "the remote cache " : "a remote cache",
      remote[0] ? remote : " (none set: PTO_REMOTE_CACHE=URL or --remote-cache URL)",
      /* only a remote that is set can have refused an entry */
      remote[0] ? " (a refused remote entry is warned about above)" : "");
}
#endif

pto_status pto__loader_build_dir(const pto_ir_program *p, const pto_compile_options *opt,
                                 const char *dir, const char *cache_key) {
#ifdef PTO_NO_COMPILER
  return cannot_compile(cache_key);
#endif
  const pto_compiler_api *api;
  PTO_RETURN_IF_ERROR(pto__loader_compiler(&api));
  pthread_t identity;
  int identity_started = pthread_create(&identity, NULL, identity_thread, (void *)api) == 0;
  pto_status s = build_dir_and_manifest(api, p, opt, dir, cache_key);
  if (identity_started) pthread_join(identity, NULL);
  return s;
}

static pto_status build_dir_and_manifest(const pto_compiler_api *api, const pto_ir_program *p,
                                         const pto_compile_options *opt, const char *dir,
                                         const char *cache_key) {
  /* A stale manifest must not vouch for the new files while they are being written. */
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  if (unlink(path) != 0 && errno != ENOENT)
    return pto_status_make(PTO_STATUS_IO, "cannot replace %s: %s", path, strerror(errno));
  pto_manifest m;
  PTO_RETURN_IF_ERROR(api->build_dir(p, opt, dir, &m));
  pto_status s = pto__loader_write_manifest(dir, &m, api->toolchain_identity(), cache_key);
  pto_manifest_free(&m);
  return s;
}
