/* The binary cache (README.md, "Work dirs and the binary cache"; layout and environment in
 * pto/cache.h).
 *
 * Two levels. The in-process map answers a request whose key it has seen with the very program
 * object it returned before (retained), without touching disk: a request fingerprint (the
 * program's memoized structural hash, the identity, the options and the entry's parameter names)
 * maps to a key, and the key to a loaded program. Below it, the disk cache: an entry per key,
 * published by building into a private temp dir and renaming it into place; a process that loses
 * the race uses the winner's entry. Reads take no lock. An entry is verified (hashes, Build-IDs,
 * the key in its manifest, its owner and mode) before anything in it is loaded or copied; a bad
 * one is reported through the warning hook, counted, discarded and rebuilt.
 *
 * When the cache cannot be used (refused, read-only, full), programs are compiled without it and
 * the warning hook says so once per process. */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "cache_internal.h"
#include "pto/arena.h"
#include "pto/host_abi.h"
#include "pto/kernel_abi.h"
#include "pto/orch_abi.h"
#include "remote_internal.h"

/* Bump when the text below changes meaning: every old entry becomes a miss. */
/* 3: orchestration division no longer traps on MIN / -1 and is built with -fwrapv. */
#define PTO_CACHE_KEY_FORMAT "pto-cache-key/3"

/* Guards everything in this file that is static and mutable: the identity memo, the two maps of
 * the in-process level, and the structural-hash memo. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- text building -------------------------------------------------------------------- */

/* A field value on one line: newlines and carriage returns become spaces. */
static void tb_value(pto_text *b, const char *v) {
  size_t start = b->len;
  pto_text_printf(b, "%s", v ? v : "");
  if (b->failed) return;
  for (size_t i = start; i < b->len; i++)
    if (b->data[i] == '\n' || b->data[i] == '\r') b->data[i] = ' ';
}

/* ---- identity: toolchain and target, computed without loading the compiler or LLVM ---- */

/* An executable named by a variable: its absolute path (searching PATH for a bare name). */
static int resolve_tool(const char *name, char *out, size_t n) {
  if (strchr(name, '/')) return realpath(name, out) != NULL;
  const char *path = getenv("PATH");
  if (!path) return 0;
  char cand[PATH_MAX];
  for (const char *p = path; *p;) {
    const char *e = strchr(p, ':');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len && snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name) < (int)sizeof cand &&
        access(cand, X_OK) == 0 && realpath(cand, out))
      return 1;
    if (!e) break;
    p = e + 1;
  }
  (void)n;
  return 0;
}

/* toolchain.<field>=...: the configured compiler (id, version, path), or the one a variable
 * names; either way with the size and mtime of the binary, so that an upgrade in place shows. */
static void tool_line(pto_text *b, const char *field, const char *env, const char *dflt_id,
                      const char *dflt_path) {
  const char *e = getenv(env);
  char real[PATH_MAX] = "";
  struct stat st;
  memset(&st, 0, sizeof st);
  const char *name = e && *e ? e : dflt_path;
  if (resolve_tool(name, real, sizeof real)) stat(real, &st);
  pto_text_printf(b, "toolchain.%s=", field);
  if (e && *e) {
    pto_text_printf(b, "%s=", env);
    tb_value(b, e);
  } else {
    tb_value(b, dflt_id);
  }
  pto_text_printf(b, ";path=");
  tb_value(b, real[0] ? real : name);
  pto_text_printf(b, ";size=%lld;mtime=%lld\n", (long long)st.st_size, (long long)st.st_mtime);
}

/* The headers generated code is compiled against (the orchestration's, the kernels', the host
 * code's): their bytes are in the key (toolchain.headers), so a header changed in place, its
 * ABI version kept, makes no stale binary a hit. */
static const char *const k_key_headers[] = {"pto/pto_orchestration_api.h", "pto/orch_abi.h",
                                            "pto/kernel_abi.h", "pto/host_abi.h", "pto/types.h"};

/* XXH3-128 of k_key_headers, as 32 hex digits. */
static void headers_line(pto_text *b) {
  char dir[PATH_MAX], path[PATH_MAX + 64], hex[PTO_HASH_HEX_LEN + 1];
  pto__loader_include_dir(dir, sizeof dir);
  XXH3_state_t *st = XXH3_createState();
  if (!st) {
    b->failed = 1;
    return;
  }
  XXH3_128bits_reset(st);
  for (size_t i = 0; i < sizeof k_key_headers / sizeof *k_key_headers; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, k_key_headers[i]);
    pto_status s = pto_file_hash(path, hex);
    if (s) {
      pto_status_free(s);
      snprintf(hex, sizeof hex, "missing");
    }
    XXH3_128bits_update(st, k_key_headers[i], strlen(k_key_headers[i]) + 1);
    XXH3_128bits_update(st, hex, strlen(hex) + 1);
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
  XXH3_freeState(st);
  pto_hash_hex(c.digest, sizeof c.digest, hex);
  pto_text_printf(b, "toolchain.headers=%s\n", hex);
}

/* The compiler library's size and mtime: a rebuilt (or reinstalled) compiler makes every old
 * entry a miss. A stat, where reading its Build-ID would read the whole library. */
static void compiler_line(pto_text *b) {
  char path[PATH_MAX];
  struct stat st;
  pto__loader_compiler_path(path, sizeof path);
  if (strchr(path, '/') && stat(path, &st) == 0)
    pto_text_printf(b, "toolchain.compiler_library=size=%lld;mtime=%lld.%09ld\n",
                    (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  else
    pto_text_printf(b, "toolchain.compiler_library=searched:%s\n", path);
}

/* ---- the host CPU: /proc/cpuinfo's first processor ------------------------------------ */

/* The line that lists the CPU's extensions: "flags" on x86, "Features" on Arm. */
static int is_flags_key(const char *key, size_t klen) {
  return (klen == 5 && !strncmp(key, "flags", 5)) || (klen == 8 && !strncmp(key, "Features", 8));
}

int pto__loader_cpuinfo(const char *path, pto__loader_cpuinfo_fn fn, void *ctx) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    if (line[0] == '\n') break; /* the end of the first processor */
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *end = colon;
    while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
      end--;
    char *v = colon + 1;
    while (*v == ' ')
      v++;
    v[strcspn(v, "\n")] = 0;
    fn(ctx, line, (size_t)(end - line), v);
  }
  free(line);
  fclose(f);
  return 1;
}

static void flags_of(void *ctx, const char *key, size_t klen, const char *value) {
  char **out = ctx;
  if (!*out && is_flags_key(key, klen)) *out = pto_strdup(value);
}

char *pto__loader_cpu_flags(const char *path) {
  char *flags = NULL;
  pto__loader_cpuinfo(path, flags_of, &flags);
  return flags;
}

typedef struct target_ctx {
  pto_text *b, *features;
} target_ctx;

static void target_field(void *ctx, const char *key, size_t klen, const char *value) {
  static const char *const k_cpu_fields[] = {"vendor_id",   "cpu family",      "model",
                                             "model name",  "CPU implementer", "CPU architecture",
                                             "CPU variant", "CPU part"};
  target_ctx *t = ctx;
  if (is_flags_key(key, klen)) {
    tb_value(t->features, value);
    return;
  }
  for (size_t i = 0; i < sizeof k_cpu_fields / sizeof *k_cpu_fields; i++) {
    if (strlen(k_cpu_fields[i]) == klen && !strncmp(key, k_cpu_fields[i], klen)) {
      pto_text_printf(t->b, "%s=", k_cpu_fields[i]);
      tb_value(t->b, value);
      pto_text_printf(t->b, ";");
    }
  }
}

/* The host CPU as the code generator sees it, from the first processor of /proc/cpuinfo (LLVM
 * asks cpuid; the kernel's flags are the same bits, and reading them needs no LLVM). */
static void target_lines(pto_text *b) {
  pto_text_printf(b, "target.triple=%s\n", PTO_LLVM_TRIPLE);
  const char *o = getenv("PTO_CACHE_TARGET_OVERRIDE");
  if (o && *o) {
    pto_text_printf(b, "target.override=");
    tb_value(b, o);
    pto_text_printf(b, "\n");
    return;
  }
  pto_text_printf(b, "target.cpu=");
  pto_text features = {0};
  target_ctx t = {b, &features};
  pto__loader_cpuinfo(PTO__CPUINFO, target_field, &t);
  pto_text_printf(b, "\ntarget.features=%s\n", features.data ? features.data : "");
  if (features.failed) b->failed = 1;
  free(features.data);
}

typedef struct identity {
  char *text;       /* the toolchain.* and target.* lines */
  uint8_t hash[16]; /* XXH3-128 of text, for request fingerprints */
} identity;

static identity g_ident; /* memo: guarded by g_lock, set once per process (or test reset) */

/* The toolchain.* lines: the compilers, the compiler library, the headers. */
static void toolchain_lines(pto_text *b) {
  pto_text_printf(b, "toolchain.pto=%s\n", PTO_VERSION_STR);
  pto_text_printf(b, "toolchain.llvm=%s\n", PTO_LLVM_VERSION_STR);
  tool_line(b, "cxx", "PTO_CXX", PTO_CXX_ID, PTO_CXX_PATH);
  tool_line(b, "cc", "PTO_CC", PTO_CC_ID, PTO_CC_PATH);
  pto_text_printf(b, "toolchain.abi=orch/%d;kernel/%d;host/%d;compiler_api/%d;%s\n",
                  PTO_ORCH_ABI_VERSION, PTO_KERNEL_ABI_VERSION, PTO_HOST_ABI_VERSION,
                  PTO_COMPILER_API_VERSION, PTO_MANIFEST_SCHEMA);
  compiler_line(b);
  headers_line(b);
}

/* ---- the identity memo: <cache>/toolchain ------------------------------------------- */

/* The identity cost ~210 us a process: resolving the compilers' symlinks, finding and hashing
 * the headers (~150 us), reading /proc/cpuinfo (~65 us). The cache dir keeps the lines in the
 * file "toolchain", under a probe: the stat (device, inode, size, mtime, ctime) of every file
 * the toolchain lines are computed from (the compilers as named, the compiler library, the
 * headers, this library itself), the variables that choose those files, the constants compiled
 * in, and the kernel's boot id for the target lines (the CPU does not change within a boot; a
 * cache dir shared by machines sees another boot id and recomputes). Any change to one of those
 * files (an upgrade in place, a switched alternatives link, an edited header, a rebuilt pto)
 * changes the probe and the lines are computed again and rewritten. */
#define PTO_TOOLCHAIN_MEMO "toolchain"
#define PTO_TOOLCHAIN_MEMO_FORMAT "pto-toolchain-memo/1"
enum { TOOLCHAIN_MEMO_MAX = 64 * 1024 };

static void probe_stat(pto_text *b, const char *what, const char *path) {
  struct stat st;
  pto_text_printf(b, "%s=", what);
  tb_value(b, path);
  if (path && *path && stat(path, &st) == 0)
    pto_text_printf(b, ";%llu;%llu;%lld;%lld.%09ld;%lld.%09ld\n", (unsigned long long)st.st_dev,
                    (unsigned long long)st.st_ino, (long long)st.st_size,
                    (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
                    (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec);
  else
    pto_text_printf(b, ";missing\n");
}

/* A compiler as tool_line finds it (PATH searched for a bare name), without resolving links:
 * stat follows them to the file they lead to. */
static void probe_tool(pto_text *b, const char *what, const char *env, const char *dflt_path) {
  const char *e = getenv(env);
  const char *name = e && *e ? e : dflt_path;
  pto_text_printf(b, "%s.name=", what);
  tb_value(b, name);
  pto_text_printf(b, "\n");
  if (strchr(name, '/')) {
    probe_stat(b, what, name);
    return;
  }
  const char *path = getenv("PATH");
  char cand[PATH_MAX];
  for (const char *p = path ? path : ""; *p;) {
    const char *sep = strchr(p, ':');
    size_t len = sep ? (size_t)(sep - p) : strlen(p);
    if (len && snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name) < (int)sizeof cand &&
        access(cand, X_OK) == 0) {
      probe_stat(b, what, cand);
      return;
    }
    if (!sep) break;
    p = sep + 1;
  }
  probe_stat(b, what, NULL);
}

static void memo_anchor(void) {}

/* The probe's hash, as 32 hex digits; "" when out of memory. */
static void toolchain_probe(char out_hex[33]) {
  static const char *const k_env[] = {"PTO_CXX", "PTO_CC", "PATH", "PTO_COMPILER_LIBRARY",
                                      "PTO_INCLUDE_DIR"};
  pto_text b = {0};
  pto_text_printf(&b, "%s\n%s\n%s\n%s\n%d/%d/%d/%d/%s\n%s/%s/%s/%s\n", PTO_TOOLCHAIN_MEMO_FORMAT,
                  PTO_CACHE_KEY_FORMAT, PTO_VERSION_STR, PTO_LLVM_VERSION_STR, PTO_ORCH_ABI_VERSION,
                  PTO_KERNEL_ABI_VERSION, PTO_HOST_ABI_VERSION, PTO_COMPILER_API_VERSION,
                  PTO_MANIFEST_SCHEMA, PTO_CXX_ID, PTO_CXX_PATH, PTO_CC_ID, PTO_CC_PATH);
  for (size_t i = 0; i < sizeof k_env / sizeof *k_env; i++) {
    const char *v = getenv(k_env[i]);
    pto_text_printf(&b, "%s%s", k_env[i], v ? "=" : " unset");
    if (v) tb_value(&b, v);
    pto_text_printf(&b, "\n");
  }
  probe_tool(&b, "cxx", "PTO_CXX", PTO_CXX_PATH);
  probe_tool(&b, "cc", "PTO_CC", PTO_CC_PATH);
  char lib[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64];
  pto__loader_compiler_path(lib, sizeof lib);
  probe_stat(&b, "compiler_library", lib);
  pto_file_include_dir(lib, dir, sizeof dir);
  for (size_t i = 0; i < sizeof k_key_headers / sizeof *k_key_headers; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, k_key_headers[i]);
    probe_stat(&b, k_key_headers[i], path);
  }
  Dl_info info;
  probe_stat(&b, "loader",
             dladdr((void *)&memo_anchor, &info) && info.dli_fname ? info.dli_fname : NULL);
  char boot[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  int have_boot = f && fgets(boot, sizeof boot, f) && boot[0] != '\n';
  if (f) fclose(f);
  pto_text_printf(&b, "boot_id=%s", boot);
  out_hex[0] = 0;
  if (!b.failed && have_boot) pto_hash_xxh128_hex(b.data, b.len, out_hex);
  free(b.data);
}

/* The memo's toolchain lines when its probe is probe_hex, else NULL. */
static char *memo_read(const char *path, const char *probe_hex) {
  struct stat st;
  /* The cache root was checked to be private; the memo must be a plain file of ours in it. */
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  pto_status s = pto_file_read(path, TOOLCHAIN_MEMO_MAX, &buf, &len);
  if (s) {
    pto_status_free(s);
    return NULL;
  }
  char head[128];
  int n = snprintf(head, sizeof head, "%s\nprobe=%s\n", PTO_TOOLCHAIN_MEMO_FORMAT, probe_hex);
  const char *text = (const char *)buf + n;
  if (len <= (size_t)n || memcmp(buf, head, (size_t)n) != 0 || strlen(text) != len - (size_t)n ||
      strncmp(text, "toolchain.", 10) != 0 || buf[len - 1] != '\n') {
    free(buf);
    return NULL;
  }
  char *out = pto_strdup(text);
  free(buf);
  return out;
}

static void memo_write(const char *path, const char *probe_hex, const char *text) {
  pto_text b = {0};
  pto_text_printf(&b, "%s\nprobe=%s\n%s", PTO_TOOLCHAIN_MEMO_FORMAT, probe_hex, text);
  if (!b.failed) {
    pto_status s = pto_file_write_atomic(path, b.data, b.len, 0600);
    pto_status_free(s); /* best effort: a read-only cache computes the lines every time */
  }
  free(b.data);
}

/* The toolchain and target lines, from the memo in an existing cache dir when its probe matches
 * (and written there when it does not). Not memoized: a target override (tests). */
/* A switch of the cache's environment (PTO_CACHE_DEBUG, PTO_CACHE_NO_TOOLCHAIN_MEMO): 1 for "1";
 * 0 unset, empty or "0"; another value warns once, naming the variable, and counts as 0 (the
 * cache's settings warn rather than fail a run, as PTO_CACHE_MAX_SIZE does): "yes" was silently
 * off, and "0" of the memo switch turned it on. */
static int env_switch(const char *name, int *warned) {
  const char *v = getenv(name);
  if (!v || !*v || !strcmp(v, "0")) return 0;
  if (!strcmp(v, "1")) return 1;
  pto__loader_warn_once(warned, "%s is '%s': expected 1 (on) or 0 (off, the default); taken as 0",
                        name, v);
  return 0;
}

static void identity_lines(pto_text *b) {
  char root[PATH_MAX], path[PATH_MAX + 32], probe[33];
  int exists = 0;
  const char *o = getenv("PTO_CACHE_TARGET_OVERRIDE");
  pto_status s = pto__loader_cache_resolve_root(root, sizeof root, 0, &exists);
  int usable = !s && exists;
  pto_status_free(s);
  static int memo_warned;
  if (!usable || (o && *o) || env_switch("PTO_CACHE_NO_TOOLCHAIN_MEMO", &memo_warned)) {
    toolchain_lines(b);
    target_lines(b);
    return;
  }
  snprintf(path, sizeof path, "%s/%s", root, PTO_TOOLCHAIN_MEMO);
  toolchain_probe(probe);
  char *text = probe[0] ? memo_read(path, probe) : NULL;
  if (text) {
    pto_text_printf(b, "%s", text);
    free(text);
    return;
  }
  size_t start = b->len;
  toolchain_lines(b);
  target_lines(b);
  if (!b->failed && probe[0]) memo_write(path, probe, b->data + start);
}

static pto_status make_identity(char **out_text) {
  /* the lowering switch as the compiler reads it (compiler/lower_x86.c): not memoized, a
   * variable of this process and not of the toolchain's files */
  static const char *const k_lowering[] = {"0", "1"};
  int generic = 0;
  PTO_RETURN_IF_ERROR(pto_env_choice(PTO_GENERIC_LOWERING_ENV, k_lowering, 2, 0, &generic));
  pto_text b = {0};
  identity_lines(&b);
  if (generic) pto_text_printf(&b, "target.lowering=generic\n");
  if (b.failed) {
    free(b.data);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory computing a cache key");
  }
  *out_text = b.data;
  return PTO_OK;
}

/* The memoized identity: text borrowed until the next reset (which only tests call). */
static pto_status get_identity(const char **out_text, uint8_t out_hash[16]) {
  pthread_mutex_lock(&g_lock);
  if (g_ident.text) {
    *out_text = g_ident.text;
    if (out_hash) memcpy(out_hash, g_ident.hash, 16);
    pthread_mutex_unlock(&g_lock);
    return PTO_OK;
  }
  pthread_mutex_unlock(&g_lock);
  char *text = NULL;
  PTO_RETURN_IF_ERROR(make_identity(&text));
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(text, strlen(text)));
  pthread_mutex_lock(&g_lock);
  if (!g_ident.text) {
    g_ident.text = text;
    memcpy(g_ident.hash, c.digest, 16);
    text = NULL;
  }
  *out_text = g_ident.text;
  if (out_hash) memcpy(out_hash, g_ident.hash, 16);
  pthread_mutex_unlock(&g_lock);
  free(text);
  return PTO_OK;
}

void pto__loader_cache_reset_identity(void) {
  pthread_mutex_lock(&g_lock);
  /* Tests only, with no compile running: nobody still reads the old text. */
  free(g_ident.text);
  g_ident.text = NULL;
  pthread_mutex_unlock(&g_lock);
}

/* ---- the key -------------------------------------------------------------------------- */

/* The structural hash, memoized by program serial while the program's arena has not grown (a
 * program grown through the builder is hashed again). A small direct-mapped table guarded by
 * g_lock: a collision only costs a rehash. */
enum { HASH_MEMO_SLOTS = 64 };
typedef struct hash_memo {
  uint64_t serial; /* 0 = empty */
  size_t arena_bytes;
  pto_ir_hash128 hash;
} hash_memo;
static hash_memo g_hash_memo[HASH_MEMO_SLOTS];

static pto_ir_hash128 program_hash(const pto_ir_program *p) {
  size_t bytes = p->arena ? pto_arena_bytes(p->arena) : 0;
  hash_memo *slot = &g_hash_memo[p->serial % HASH_MEMO_SLOTS];
  pto_ir_hash128 h;
  if (bytes && p->serial) {
    pthread_mutex_lock(&g_lock);
    int hit = slot->serial == p->serial && slot->arena_bytes == bytes;
    h = slot->hash;
    pthread_mutex_unlock(&g_lock);
    if (hit) return h;
  }
  h = pto_ir_program_hash(p);
  if (bytes && p->serial) {
    pthread_mutex_lock(&g_lock);
    slot->serial = p->serial;
    slot->arena_bytes = bytes;
    slot->hash = h;
    pthread_mutex_unlock(&g_lock);
  }
  return h;
}

static void scalar_text(pto_text *b, const pto_scalar *v) {
  if (pto_dtype_is_float(v->dtype)) {
    uint64_t bits;
    memcpy(&bits, &v->f, 8);
    pto_text_printf(b, "%.17g/0x%016" PRIx64, v->f, bits);
  } else if (v->dtype == PTO_DTYPE_BOOL) {
    pto_text_printf(b, "%d", v->i != 0);
  } else if (!pto_dtype_is_signed(v->dtype)) {
    pto_text_printf(b, "%" PRIu64, v->u);
  } else {
    pto_text_printf(b, "%" PRId64, v->i);
  }
}

/* Everything that changes the generated code, one typed field a line, and nothing that does
 * not. Parameters are identified by position: value names (parameter names included) are for
 * people, so a renamed program maps to the same key. Dynamic dims are '?', runtime scalars their
 * dtype only; no paths, device ids or debug flags. */
static pto_status cache_key_text(const pto_ir_program *p, const pto_compile_options *opt,
                                 const pto_ir_func *entry, const pto_signature *sig,
                                 char **out_text) {
  static const char *const dirs[] = {"in", "out", "inout"};
  const char *ident = NULL;
  PTO_RETURN_IF_ERROR(get_identity(&ident, NULL));
  pto_text b = {0};
  pto_ir_hash128 h = program_hash(p);
  pto_text_printf(&b, "format=%s\n", PTO_CACHE_KEY_FORMAT);
  pto_text_printf(&b, "%s", ident);
  pto_text_printf(&b, "platform=");
  tb_value(&b, opt->platform ? opt->platform : "sim");
  pto_text_printf(&b, "\noption.opt_level=%d\n", opt->opt_level);
  pto_text_printf(&b, "program=%016" PRIx64 "%016" PRIx64 "\n", h.hi, h.lo);
  pto_text_printf(&b, "entry=%d\n", entry->index);
  if (entry->kind == PTO_FUNC_HOST) {
    /* The device set: part of a host program's key, and of no other. */
    int ndev = 0;
    const int32_t *devs = pto_compile_options_devices(opt, &ndev);
    pto_text_printf(&b, "devices=");
    if (!devs) pto_text_printf(&b, "0");
    for (int i = 0; devs && i < ndev; i++)
      pto_text_printf(&b, "%s%d", i ? "," : "", (int)devs[i]);
    pto_text_printf(&b, "\n");
  }
  pto_text_printf(&b, "params=%d\n", sig->nparams);
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *sp = &sig->params[i];
    if (sp->is_tensor) {
      pto_text_printf(&b, "param.%d=tensor;%s;%s;[", i, (unsigned)sp->dir < 3 ? dirs[sp->dir] : "?",
                      pto_dtype_name(sp->dtype));
      for (int d = 0; d < sp->rank; d++) {
        if (sp->dims[d].sym >= 0)
          pto_text_printf(&b, "%s?", d ? "," : "");
        else
          pto_text_printf(&b, "%s%" PRId64, d ? "," : "", sp->dims[d].value);
      }
      pto_text_printf(&b, "]\n");
    } else if (sp->bind == PTO_BIND_LITERAL) {
      pto_text_printf(&b, "param.%d=scalar;%s;=", i, pto_dtype_name(sp->dtype));
      scalar_text(&b, &sp->value);
      pto_text_printf(&b, "\n");
    } else {
      pto_text_printf(&b, "param.%d=scalar;%s;runtime\n", i, pto_dtype_name(sp->dtype));
    }
  }
  if (b.failed) {
    free(b.data);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory computing a cache key");
  }
  *out_text = b.data;
  return PTO_OK;
}

/* A request whose entry is a kernel becomes one for the orch that runs it as one task
 * (pto_ir_program_kernel_entry): *p becomes that program (*owned, the caller destroys it) and
 * *opt a copy of the options (*copy) naming its orch. Anything else is left as it is. */
static pto_status kernel_entry(const pto_ir_program **p, const pto_compile_options **opt,
                               pto_compile_options *copy, pto_ir_program **owned) {
  *owned = NULL;
  const char *name = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_program_kernel_entry(*p, (*opt)->entry, owned, &name));
  if (!*owned) return PTO_OK;
  pto_compile_options_init(copy);
  memcpy(copy, *opt, (*opt)->sz < sizeof *copy ? (*opt)->sz : sizeof *copy);
  copy->sz = sizeof *copy;
  copy->entry = name;
  *p = *owned;
  *opt = copy;
  return PTO_OK;
}

pto_status pto_cache_key(const pto_ir_program *p, const pto_compile_options *opt, char out_hex[33],
                         char **out_text) {
  if (!out_hex)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_key: out_hex is NULL");
  if (out_text) *out_text = NULL;
  out_hex[0] = 0;
  if (!p)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_key: the IR program is NULL");
  pto_compile_options defaults;
  pto_compile_options_init(&defaults);
  if (!opt) opt = &defaults;
  pto_compile_options kopt;
  pto_ir_program *kprog = NULL;
  PTO_RETURN_IF_ERROR(kernel_entry(&p, &opt, &kopt, &kprog));
  pto_ir_func *entry = NULL;
  pto_signature sig;
  pto_status s = pto_ir_program_entry(p, opt->entry, &entry);
  if (!s)
    s = pto_signature_build(p, entry, opt->scalars, opt->nscalars, opt->samples, opt->nsamples,
                            &sig);
  if (s) {
    pto_ir_program_destroy(kprog);
    return s;
  }
  char *text = NULL;
  s = cache_key_text(p, opt, entry, &sig, &text);
  pto_signature_clear(&sig);
  pto_ir_program_destroy(kprog);
  if (s) return s;
  pto_hash_xxh128_hex(text, strlen(text), out_hex);
  if (out_text)
    *out_text = text;
  else
    free(text);
  return PTO_OK;
}

/* ---- the in-process level ------------------------------------------------------------- */

/* A request: what pto_compile was asked, reduced to what decides the key. Equal requests have
 * equal keys; different requests may still share a key (renamed values), which the second map
 * resolves. The entry's parameter names are in because bindings refer to parameters by name. */
static int request_fingerprint(const pto_ir_program *p, const pto_compile_options *opt,
                               uint8_t out[16]) {
  uint8_t ident_hash[16];
  const char *ident;
  pto_status s = get_identity(&ident, ident_hash);
  if (s) {
    pto_status_free(s);
    return -1;
  }
  pto_ir_func *entry = NULL;
  s = pto_ir_program_entry(p, opt->entry, &entry);
  if (s) {
    pto_status_free(s);
    return -1;
  }
  unsigned char buf[4096];
  size_t len = 0;
  pto_ir_hash128 h = program_hash(p);
#define PUT(ptr, n)                                                                                \
  do {                                                                                             \
    size_t n__ = (n);                                                                              \
    if (len + n__ > sizeof buf) return -1;                                                         \
    memcpy(buf + len, (ptr), n__);                                                                 \
    len += n__;                                                                                    \
  } while (0)
#define PUTS(str)                                                                                  \
  do {                                                                                             \
    const char *s__ = (str) ? (str) : "";                                                          \
    PUT(s__, strlen(s__) + 1);                                                                     \
  } while (0)
  PUT(&h, sizeof h);
  PUT(ident_hash, 16);
  PUT(&opt->opt_level, sizeof opt->opt_level);
  PUTS(opt->platform ? opt->platform : "sim");
  PUT(&entry->index, sizeof entry->index);
  int ndev = 0;
  const int32_t *devs =
      entry->kind == PTO_FUNC_HOST ? pto_compile_options_devices(opt, &ndev) : NULL;
  PUT(&ndev, sizeof ndev);
  if (devs) PUT(devs, (size_t)ndev * sizeof *devs);
  PUT(&entry->nparams, sizeof entry->nparams);
  for (int i = 0; i < entry->nparams; i++)
    PUTS(entry->params[i].value->name);
  PUT(&opt->nscalars, sizeof opt->nscalars);
  for (int i = 0; i < opt->nscalars; i++) {
    PUTS(opt->scalars[i].name);
    PUTS(opt->scalars[i].value);
  }
  PUT(&opt->nsamples, sizeof opt->nsamples);
  for (int i = 0; i < opt->nsamples; i++) {
    PUTS(opt->samples[i].name);
    PUTS(opt->samples[i].value);
  }
#undef PUT
#undef PUTS
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(buf, len));
  memcpy(out, c.digest, 16);
  return 0;
}

enum { NBUCKETS = 1024 };

typedef struct memo_node {
  uint8_t fp[16];    /* request map: the fingerprint */
  char key[33];      /* both maps: the cache key */
  pto_program *prog; /* loaded map: one reference held by the map */
  struct memo_node *next;
} memo_node;

/* Guarded by g_lock. Nodes live as long as the process (or until a test forgets them). */
static memo_node *g_requests[NBUCKETS];
static memo_node *g_loaded[NBUCKETS];
static uint64_t g_memory_hits;

static unsigned bucket_of(const void *bytes) {
  unsigned v;
  memcpy(&v, bytes, sizeof v);
  return v % NBUCKETS;
}

static unsigned key_bucket(const char *key) { return (unsigned)(XXH3_64bits(key, 32) % NBUCKETS); }

static memo_node *find_request(const uint8_t fp[16]) {
  for (memo_node *n = g_requests[bucket_of(fp)]; n; n = n->next)
    if (!memcmp(n->fp, fp, 16)) return n;
  return NULL;
}

static memo_node *find_loaded(const char *key) {
  for (memo_node *n = g_loaded[key_bucket(key)]; n; n = n->next)
    if (!memcmp(n->key, key, 32)) return n;
  return NULL;
}

/* Under g_lock: remembers fp -> key (allocation failure only costs a later slow path). */
static void remember_request(const uint8_t fp[16], const char *key) {
  if (find_request(fp)) return;
  memo_node *n = pto_calloc(1, sizeof *n);
  if (!n) return;
  memcpy(n->fp, fp, 16);
  memcpy(n->key, key, 33);
  unsigned b = bucket_of(fp);
  n->next = g_requests[b];
  g_requests[b] = n;
}

/* Under g_lock: the map's program for key, retained for the caller; else NULL. */
static pto_program *take_loaded(const char *key) {
  memo_node *n = find_loaded(key);
  if (!n) return NULL;
  pto_program_retain(n->prog);
  return n->prog;
}

/* Under g_lock: puts prog in the map (which retains it) unless an equal key got there first, and
 * returns the map's program, retained for the caller. Consumes the caller's reference to prog. */
static pto_program *adopt_loaded(const char *key, pto_program *prog) {
  pto_program *have = take_loaded(key);
  if (have) {
    pto_program_release(prog);
    return have;
  }
  memo_node *n = pto_calloc(1, sizeof *n);
  if (!n) return prog; /* not remembered; still correct */
  memcpy(n->key, key, 33);
  n->prog = prog;
  pto_program_retain(prog);
  unsigned b = key_bucket(key);
  n->next = g_loaded[b];
  g_loaded[b] = n;
  return prog;
}

void pto__loader_cache_forget_loaded(void) {
  pthread_mutex_lock(&g_lock);
  for (int b = 0; b < NBUCKETS; b++) {
    for (memo_node *n = g_loaded[b], *next; n; n = next) {
      next = n->next;
      pto_program_release(n->prog);
      free(n);
    }
    for (memo_node *n = g_requests[b], *next; n; n = next) {
      next = n->next;
      free(n);
    }
    g_loaded[b] = g_requests[b] = NULL;
  }
  pthread_mutex_unlock(&g_lock);
}

uint64_t pto__loader_cache_memory_hits(void) {
  pthread_mutex_lock(&g_lock);
  uint64_t n = g_memory_hits;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* ---- the directory -------------------------------------------------------------------- */

/* Writes the directory into out, refusing a path out does not hold (a truncated path would name
 * another directory). A relative $XDG_CACHE_HOME is ignored, as the XDG base directory
 * specification says (it would put the cache wherever the process happens to run). */
static pto_status cache_dir_put(char *out, size_t n, const char *a, const char *b) {
  int len = snprintf(out, n, "%s%s", a, b);
  if (len < 0 || (size_t)len >= n) {
    if (n) out[0] = 0;
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "the cache directory %s%s is longer than %zu bytes: set PTO_CACHE_DIR "
                           "to a shorter path",
                           a, b, n ? n - 1 : 0);
  }
  return PTO_OK;
}

pto_status pto_cache_dir(char *out, size_t n) {
  if (!out || !n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_cache_dir: out is NULL or n is 0");
  const char *d = getenv("PTO_CACHE_DIR");
  if (d && *d) return cache_dir_put(out, n, d, "");
  d = getenv("XDG_CACHE_HOME");
  if (d && d[0] == '/') return cache_dir_put(out, n, d, "/pto");
  d = getenv("HOME");
  if (!d || !*d)
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "no cache directory: set PTO_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
  return cache_dir_put(out, n, d, "/.cache/pto");
}

/* Where the cache directory came from, for its messages (as pto_cache_dir chooses it), into buf:
 * " (PTO_CACHE_DIR=/x)", " (XDG_CACHE_HOME=/x)" or " (HOME=/x)"; at level 1, the "pto" folder
 * pto uses inside a directory of other files, " (the pto folder of PTO_CACHE_DIR=/x)". A user
 * told "cache directory /x/pto is writable by others" learns which setting to change. */
static const char *root_origin(char *buf, size_t n, int level) {
  const char *var = "HOME", *d = getenv("PTO_CACHE_DIR");
  if (d && *d)
    var = "PTO_CACHE_DIR";
  else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/')
    var = "XDG_CACHE_HOME";
  else
    d = getenv("HOME");
  snprintf(buf, n, " (%s%s=%s)", level ? "the pto folder of " : "", var, d ? d : "");
  return buf;
}

/* Anyone who can write the cache can make us dlopen their code. origin follows path in the
 * messages ("" for an entry; root_origin for the cache directory). */
static pto_status check_private(const char *path, const char *origin, const char *what,
                                const struct stat *st) {
  if (!S_ISDIR(st->st_mode))
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION, "%s %s%s is not a directory", what, path,
                           origin);
  if (st->st_uid != geteuid())
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                           "%s %s%s is owned by uid %u, not by you (uid %u): refusing to use it; "
                           "set PTO_CACHE_DIR to a directory of your own",
                           what, path, origin, (unsigned)st->st_uid, (unsigned)geteuid());
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return pto_status_make(
        PTO_STATUS_FAILED_PRECONDITION,
        "%s %s%s is writable by group or others (mode %03o): refusing to use it; "
        "run chmod 700 %s, or set PTO_CACHE_DIR to a directory of your own",
        what, path, origin, (unsigned)(st->st_mode & 0777), path);
  return PTO_OK;
}

/* A directory is pto's cache when it holds pto's marker file, or holds nothing but the names
 * pto creates there (a cache made before the marker existed, or a new empty one). Anything
 * else (a $HOME, /, a project dir) is not pto's: the cache lives in its "pto" subfolder, so
 * that gc and clear can never reach a file that pto did not create. */
static const char k_tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
                            "# This directory is pto's binary cache (see pto cache --help).\n";

static int is_own_name(const char *name) {
  static const char *const own[] = {".", "..", PTO__CACHE_TAG, "tmp", "lock", "stats"};
  for (size_t i = 0; i < sizeof own / sizeof *own; i++)
    if (!strcmp(name, own[i])) return 1;
  /* The marker while another process writes it (pto_file_write_atomic's temp name): without
   * this, processes that start on a new cache at once took it for a foreign dir and moved to its
   * "pto" subfolder (seen as lost counters in e2e_cache_race_slow). */
  static const char tag_tmp[] = PTO__CACHE_TAG ".tmp-";
  if (!strncmp(name, tag_tmp, sizeof tag_tmp - 1) && strlen(name) == sizeof tag_tmp - 1 + 6)
    return 1;
  /* The toolchain memo, and its temp file while a process writes it. */
  static const char memo_tmp[] = PTO_TOOLCHAIN_MEMO ".tmp-";
  if (!strcmp(name, PTO_TOOLCHAIN_MEMO) ||
      (!strncmp(name, memo_tmp, sizeof memo_tmp - 1) && strlen(name) == sizeof memo_tmp - 1 + 6))
    return 1;
  return strlen(name) == 2 && isxdigit((unsigned char)name[0]) &&
         isxdigit((unsigned char)name[1]) && !isupper((unsigned char)name[0]) &&
         !isupper((unsigned char)name[1]);
}

/* 1: dir is pto's (tagged or only pto's names), 0: it holds other files, -1: cannot read. */
static int dir_is_pto_cache(const char *dir, int *out_tagged) {
  char tag[PATH_MAX + 32];
  struct stat st;
  snprintf(tag, sizeof tag, "%s/%s", dir, PTO__CACHE_TAG);
  *out_tagged = lstat(tag, &st) == 0 && S_ISREG(st.st_mode);
  if (*out_tagged) return 1;
  DIR *d = opendir(dir);
  if (!d) return -1;
  int own = 1;
  struct dirent *e;
  while (own && (e = readdir(d)))
    own = is_own_name(e->d_name);
  closedir(d);
  return own;
}

static void write_tag(const char *dir) {
  char tag[PATH_MAX + 32];
  snprintf(tag, sizeof tag, "%s/%s", dir, PTO__CACHE_TAG);
  pto_status s = pto_file_write_atomic(tag, k_tag, sizeof k_tag - 1, 0600);
  pto_status_free(s); /* best effort: a read-only cache is still usable for reading */
}

pto_status pto__loader_cache_resolve_root(char *root, size_t n, int create, int *out_exists) {
  static int warned;
  *out_exists = 0;
  PTO_RETURN_IF_ERROR(pto_cache_dir(root, n));
  char origin[PATH_MAX + 64];
  for (int level = 0;; level++) {
    struct stat st;
    if (lstat(root, &st) != 0) {
      if (errno != ENOENT)
        return pto_status_make(PTO_STATUS_IO, "cache directory %s: %s", root, strerror(errno));
      if (!create) return PTO_OK;
      PTO_RETURN_IF_ERROR(pto_file_mkdirs(root, 0700));
      if (lstat(root, &st) != 0)
        return pto_status_make(PTO_STATUS_IO, "cache directory %s: %s", root, strerror(errno));
      PTO_RETURN_IF_ERROR(
          check_private(root, root_origin(origin, sizeof origin, level), "cache directory", &st));
      write_tag(root);
      *out_exists = 1;
      return PTO_OK;
    }
    if (S_ISLNK(st.st_mode) && stat(root, &st) != 0)
      return pto_status_make(PTO_STATUS_IO, "cache directory %s: %s", root, strerror(errno));
    int tagged = 0;
    int own = S_ISDIR(st.st_mode) ? dir_is_pto_cache(root, &tagged) : 1;
    if (own < 0)
      return pto_status_make(PTO_STATUS_IO, "cache directory %s: %s", root, strerror(errno));
    if (own) {
      PTO_RETURN_IF_ERROR(
          check_private(root, root_origin(origin, sizeof origin, level), "cache directory", &st));
      if (!tagged && create) write_tag(root);
      *out_exists = 1;
      return PTO_OK;
    }
    if (level > 0)
      return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                             "cache directory %s%s holds files that pto did not create: refusing "
                             "to use it; set PTO_CACHE_DIR to a directory of its own",
                             root, root_origin(origin, sizeof origin, level));
    size_t len = strlen(root);
    if (len + 5 >= n)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "cache directory path too long: %s",
                             root);
    pto__loader_warn_once(&warned,
                          "cache directory %s%s holds files that pto did not create: using %s/pto "
                          "instead",
                          root, root_origin(origin, sizeof origin, level), root);
    memcpy(root + len, "/pto", 5);
  }
}

pto_status pto__loader_cache_root(char *root, size_t n) {
  int exists;
  return pto__loader_cache_resolve_root(root, n, 1, &exists);
}

void pto__loader_cache_entry_path(const char *root, const char *key, char *out, size_t n) {
  snprintf(out, n, "%s/%.2s/%s", root, key, key + 2);
}

pto_status pto__loader_cache_check_owner(const char *entry_dir) {
  struct stat st;
  if (lstat(entry_dir, &st) != 0)
    return pto_status_make(errno == ENOENT ? PTO_STATUS_NOT_FOUND : PTO_STATUS_IO,
                           "cache entry %s: %s", entry_dir, strerror(errno));
  return check_private(entry_dir, "", "cache entry", &st);
}

int pto__loader_cache_discard(const char *root, const char *entry_dir) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  pto_status s = pto_file_mkdirs(tmp, 0700);
  pto_status_free(s);
  struct stat st;
  int err = EACCES;
  /* ROOT/tmp must be our own directory, not a symlink to somewhere else. */
  int tmp_ok = lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
  snprintf(tmp, sizeof tmp, "%s/tmp/discard-%ld-XXXXXX", root, (long)getpid());
  if (tmp_ok && mkdtemp(tmp)) {
    char dest[PATH_MAX + 8];
    snprintf(dest, sizeof dest, "%s/e", tmp);
    if (rename(entry_dir, dest) == 0) {
      pto_file_remove_tree(tmp);
      return 0;
    }
    err = errno;
    rmdir(tmp);
  } else if (tmp_ok) {
    err = errno;
  }
  pto_file_remove_tree(entry_dir); /* cannot move it aside: delete in place */
  /* Gone, or still there (a read-only cache dir): the caller must not report it removed. */
  if (lstat(entry_dir, &st) != 0) return 0;
  errno = err;
  return -1;
}

uint64_t pto__loader_cache_max_bytes(void) {
  static int warned;
  const char *v = getenv("PTO_CACHE_MAX_SIZE");
  if (!v || !*v) return 0;
  uint64_t n = 0;
  pto_status s = pto_cache_parse_size(v, &n);
  if (s) {
    pto__loader_warn_once(&warned, "PTO_CACHE_MAX_SIZE: %s; the cache is not size-limited",
                          pto_status_message(s));
    pto_status_free(s);
    return 0;
  }
  return n;
}

/* ---- disk entries --------------------------------------------------------------------- */

/* LOOKUP_NAMES: a good entry, from a program that differs from this one only in names; a work
 * dir is not written from it (its program.ptir, C++ and manifest would carry the other names). */
typedef enum lookup { LOOKUP_HIT, LOOKUP_MISS, LOOKUP_CORRUPT, LOOKUP_ERROR, LOOKUP_NAMES } lookup;

/* Refreshes the entry's use time (its directory mtime), at most about once a second. */
static void touch_entry(const char *entry_dir, const struct stat *st) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (now.tv_sec - st->st_mtim.tv_sec < 1) return;
  struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  utimensat(AT_FDCWD, entry_dir, times, 0);
}

static pto_status copy_entry(const char *entry_dir, const char *key, const pto_signature *want,
                             const char *dir, int *out_names_differ);

/* Uses the entry dir: loads it (copy_to NULL; *out_prog set) or copies it into copy_to. MISS
 * when it is not there, CORRUPT when it is bad (*out_problem says why), ERROR for a failure that
 * is not the entry's (out of memory, the work dir cannot be written; in *out_problem). An entry
 * that vanishes or is replaced while being read (evicted, discarded by another process) is a
 * MISS. */
static lookup try_entry(const char *entry_dir, const char *key, const pto_signature *want,
                        const char *copy_to, pto_program **out_prog, pto_status *out_problem) {
  *out_problem = PTO_OK;
  if (out_prog) *out_prog = NULL;
  struct stat st;
  if (lstat(entry_dir, &st) != 0) return LOOKUP_MISS;
  pto_status s = check_private(entry_dir, "", "cache entry", &st);
  int names_differ = 0;
  if (!s) {
    if (copy_to)
      s = copy_entry(entry_dir, key, want, copy_to, &names_differ);
    else
      s = pto__loader_load_dir_checked(entry_dir, key, out_prog);
  }
  if (!s && names_differ) return LOOKUP_NAMES;
  if (!s) {
    touch_entry(entry_dir, &st);
    return LOOKUP_HIT;
  }
  pto_status_code c = pto_status_code_of(s);
  if (c == PTO_STATUS_OUT_OF_MEMORY ||
      (copy_to && c != PTO_STATUS_DATA_LOSS && c != PTO_STATUS_FAILED_PRECONDITION)) {
    *out_problem = s;
    return LOOKUP_ERROR;
  }
  struct stat now;
  if (lstat(entry_dir, &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
    pto_status_free(s);
    return LOOKUP_MISS;
  }
  *out_problem = s;
  return LOOKUP_CORRUPT;
}

static void report_corrupt(const char *root, const char *entry_dir, pto_status problem) {
  pto__loader_warn("binary cache entry %s is corrupt, discarding it and compiling again: %s",
                   entry_dir, pto_status_message(problem));
  pto_status_free(problem);
  pto__loader_count(root, PTO__COUNT_CORRUPTIONS, 1);
  pto__loader_cache_discard(root, entry_dir);
}

typedef enum publish {
  PUBLISH_STORED,    /* renamed into place */
  PUBLISH_LOST_RACE, /* another process's equal entry was there first */
  PUBLISH_UNWRITABLE /* the cache cannot take it: compile without it */
} publish;

/* Set once, atomically, by pto__loader_warn_once; reset only by tests. */
static int g_unwritable_warned, g_refused_warned;

void pto__loader_cache_reset_warnings(void) {
  __atomic_store_n(&g_unwritable_warned, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&g_refused_warned, 0, __ATOMIC_RELEASE);
}

/* Test hooks, compiled only into the test build of the loader (PTO_TEST_HOOKS, see
 * loader/CMakeLists.txt): the library that ships reads neither variable. */
#ifdef PTO_TEST_HOOKS
/* errno of PTO_CACHE_TEST_FAIL_PUBLISH, or 0. */
static int test_publish_failure(void) {
  const char *v = getenv("PTO_CACHE_TEST_FAIL_PUBLISH");
  if (!v || !*v) return 0;
  if (!strcmp(v, "ENOSPC")) return ENOSPC;
  if (!strcmp(v, "EROFS")) return EROFS;
  if (!strcmp(v, "EACCES")) return EACCES;
  return EIO;
}

/* Between building an entry (and making its fan-out dir) and publishing it:
 * PTO_CACHE_TEST_PAUSE=SECONDS sleeps; PTO_CACHE_TEST_GATE=W,R (two inherited pipe fds) writes one
 * byte to W, then waits for one byte (or end of file) on R, so a test holds the publish until it
 * has done what it means to first. */
static void test_pause(void) {
  const char *pause = getenv("PTO_CACHE_TEST_PAUSE");
  if (pause && *pause) {
    struct timespec ts = {atoi(pause), 0};
    nanosleep(&ts, NULL);
  }
  const char *gate = getenv("PTO_CACHE_TEST_GATE");
  int w, r;
  char c = 'b';
  if (gate && sscanf(gate, "%d,%d", &w, &r) == 2 && write(w, &c, 1) == 1)
    while (read(r, &c, 1) < 0 && errno == EINTR) {
    }
}
#else
static int test_publish_failure(void) { return 0; }
static void test_pause(void) {}
#endif

/* Less than a megabyte free: the cache's file system is full for our purposes. */
static int fs_full(const char *root) {
  struct statvfs v;
  return statvfs(root, &v) == 0 && (uint64_t)v.f_bavail * v.f_frsize < (1u << 20);
}

static void write_key_text(const char *dir, const char *key_text) {
  static int debug_warned;
  if (!env_switch("PTO_CACHE_DEBUG", &debug_warned) || !key_text) return;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/key.txt", dir);
  pto_status s = pto_file_write_atomic(path, key_text, strlen(key_text), 0644);
  pto_status_free(s);
}

/* Builds the entry in ROOT/tmp and renames it into place. A build error is returned as is;
 * a cache that cannot take the entry is PUBLISH_UNWRITABLE with *out_why saying why. */
static pto_status publish_entry(const pto_ir_program *p, const pto_compile_options *opt,
                                const char *root, const char *key, const char *key_text,
                                publish *out_result, char *out_why, size_t why_len) {
  *out_result = PUBLISH_UNWRITABLE;
  char tmp[PATH_MAX], entry[PATH_MAX], parent[PATH_MAX];
  int err = test_publish_failure();
  if (err) {
    snprintf(out_why, why_len, "%s (PTO_CACHE_TEST_FAIL_PUBLISH)", strerror(err));
    return PTO_OK;
  }
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  pto_status s = pto_file_mkdirs(tmp, 0700);
  if (s) {
    err = errno;
    if (pto__loader_errno_is_unwritable(err)) {
      snprintf(out_why, why_len, "%s", pto_status_message(s));
      pto_status_free(s);
      return PTO_OK;
    }
    return s;
  }
  snprintf(tmp, sizeof tmp, "%s/tmp/%s-%ld-XXXXXX", root, key, (long)getpid());
  /* Tracked: a compile ended by SIGINT/SIGTERM removes it (pto_file_remove_temps), where it
   * stayed until pto cache gc. */
  int slot;
  if (!pto_file_make_temp_dir(tmp, &slot)) {
    err = errno;
    if (pto__loader_errno_is_unwritable(err)) {
      snprintf(out_why, why_len, "cannot create a directory in %s/tmp: %s", root, strerror(err));
      return PTO_OK;
    }
    return pto_status_make(PTO_STATUS_IO, "cannot create a directory in %s/tmp: %s", root,
                           strerror(err));
  }
  s = pto__loader_build_dir(p, opt, tmp, key);
  if (!s) s = pto__loader_manifest_seal(tmp);
  if (s) {
    pto_file_remove_tree(tmp);
    pto_file_forget_temp_dir(slot);
    if (pto_status_code_of(s) == PTO_STATUS_IO && fs_full(root)) {
      const char *msg = pto_status_message(s);
      snprintf(out_why, why_len, "the file system is full (%.*s)", (int)strcspn(msg, "\n"), msg);
      pto_status_free(s);
      return PTO_OK;
    }
    return s;
  }
  write_key_text(tmp, key_text);
  snprintf(parent, sizeof parent, "%s/%.2s", root, key);
  pto__loader_cache_entry_path(root, key, entry, sizeof entry);
  /* pto cache clear removes the fan-out dirs it empties: one removed between the mkdir and the
   * rename is made again (a compile racing a clear failed with "cannot rename ... No such file
   * or directory"). */
  for (int tries = 0;; tries++) {
    s = pto_file_mkdirs(parent, 0700);
    if (!tries) test_pause(); /* the test build: a clear or a rival store, here */
    if (s) {
      err = errno;
      pto_status_free(s);
    } else if (rename(tmp, entry) == 0) {
      pto_file_forget_temp_dir(slot);
      *out_result = PUBLISH_STORED;
      return PTO_OK;
    } else {
      err = errno;
    }
    if (err != ENOENT || tries == 8) break;
  }
  pto_file_remove_tree(tmp);
  pto_file_forget_temp_dir(slot);
  if (err == EEXIST || err == ENOTEMPTY) {
    *out_result = PUBLISH_LOST_RACE;
    return PTO_OK;
  }
  snprintf(out_why, why_len, "cannot rename an entry into %s: %s", parent, strerror(err));
  if (pto__loader_errno_is_unwritable(err)) return PTO_OK;
  return pto_status_make(PTO_STATUS_IO, "%s", out_why);
}

/* A private build dir outside the cache, tracked as publish_entry's is (*slot). */
static pto_status make_private_dir(char *out, size_t n, int *slot) {
  const char *t = getenv("TMPDIR");
  snprintf(out, n, "%s/pto-compile-XXXXXX", t && *t ? t : "/tmp");
  if (!pto_file_make_temp_dir(out, slot))
    return pto_status_make(PTO_STATUS_IO, "cannot create a temporary directory %s: %s", out,
                           strerror(errno));
  return PTO_OK;
}

/* An uncached compile (pto_compile_uncached, pto_compile_to_dir without the cache: pto's
 * --no-cache) in a runtime-only pto, which cannot compile: say that the caches were not read,
 * where the miss of both levels (compile.c) would name a local cache it never looked in. */
static pto_status uncached_needs_compiler(void) {
#ifdef PTO_NO_COMPILER
  return pto_status_make(
      PTO_STATUS_FAILED_PRECONDITION,
      "this pto is runtime-only (built with -DPTO_COMPILER=OFF) and cannot compile, and an "
      "uncached compile (--no-cache) reads neither the local nor the remote cache: without "
      "--no-cache it takes the program's entry from either, or run a work dir compiled "
      "elsewhere (pto run DIR)");
#else
  return PTO_OK;
#endif
}

static pto_status compile_uncached_key(const pto_ir_program *p, const pto_compile_options *opt,
                                       const char *key, pto_program **out_program) {
  char tmp[PATH_MAX];
  int slot;
  PTO_RETURN_IF_ERROR(make_private_dir(tmp, sizeof tmp, &slot));
  pto_status s = pto__loader_build_dir(p, opt, tmp, key);
  if (!s) s = pto_program_load_dir(tmp, out_program);
  if (!s) s = pto__program_set_positions_from_ir(*out_program, p);
  pto_file_remove_tree(tmp); /* the shared objects stay mapped after their files are gone */
  pto_file_forget_temp_dir(slot);
  return s;
}

/* Evicts down to PTO_CACHE_MAX_SIZE after a store, unless another cleaner is at it. */
static void maybe_evict(const char *root) {
  uint64_t max = pto__loader_cache_max_bytes();
  if (!max) return;
  pto_status s = pto__loader_cache_gc(root, max, 1, NULL);
  pto_status_free(s);
}

/* What a compile through the disk cache produces: a loaded program, or a work dir copy. */
typedef struct disk_request {
  const pto_ir_program *p;
  const pto_compile_options *opt;
  const char *key;
  const char *key_text;
  const pto_signature *sig; /* the caller's: its names */
  const char *copy_to;      /* pto_compile_to_dir: the work dir; else NULL (load) */
} disk_request;

/* Serves one request from the disk cache, building and publishing on a miss. */
static pto_status disk_get(const disk_request *r, pto_program **out_program) {
  if (out_program) *out_program = NULL;
  char root[PATH_MAX], entry[PATH_MAX], why[PATH_MAX + 256];
  pto_status s = pto__loader_cache_root(root, sizeof root);
  if (s) {
    pto__loader_warn_once(&g_refused_warned, "not using the binary cache: %s; compiling without it",
                          pto_status_message(s));
    pto_status_free(s);
    goto uncached;
  }
  pto__loader_cache_entry_path(root, r->key, entry, sizeof entry);
  int counted_miss = 0, stored = 0, asked_remote = 0;
  for (int attempt = 0; attempt < 4; attempt++) {
    pto_status problem = PTO_OK;
    lookup l = try_entry(entry, r->key, r->sig, r->copy_to, out_program, &problem);
    if (l == LOOKUP_ERROR) return problem;
    if (l == LOOKUP_NAMES) {
      pto__loader_count(root, PTO__COUNT_MISSES, 1);
      goto build_here;
    }
    if (l == LOOKUP_HIT) {
      if (!counted_miss) pto__loader_count(root, PTO__COUNT_HITS, 1); /* a request counts once */
      if (stored) {
        if (r->key_text)
          pto__loader_remote_store(root, entry, r->key, r->key_text); /* both levels */
        maybe_evict(root);
      }
      return PTO_OK;
    }
    if (l == LOOKUP_CORRUPT) {
      if (stored) {
        /* Our own fresh entry does not load: a compiler or loader problem, not the disk's.
         * Do not leave it for the next process. */
        pto__loader_cache_discard(root, entry);
        return problem;
      }
      report_corrupt(root, entry, problem);
    }
    if (l == LOOKUP_MISS && !asked_remote) {
      asked_remote = 1;
      /* The second level: a verified remote entry placed here counts as a remote hit only. */
      if (r->key_text && pto__loader_remote_fetch(root, r->key, r->key_text)) {
        counted_miss = 1;
        continue;
      }
    }
    if (!counted_miss) {
      pto__loader_count(root, PTO__COUNT_MISSES, 1);
      counted_miss = 1;
    }
    publish res;
    why[0] = 0;
    s = publish_entry(r->p, r->opt, root, r->key, r->key_text, &res, why, sizeof why);
    if (s) return s;
    if (res == PUBLISH_UNWRITABLE) {
      pto__loader_warn_once(&g_unwritable_warned,
                            "cannot write to the binary cache %s: %s; compiling without caching",
                            root, why);
      pto__loader_count(root, PTO__COUNT_UNCACHED, 1);
      goto uncached;
    }
    if (res == PUBLISH_STORED) {
      pto__loader_count(root, PTO__COUNT_STORES, 1);
      stored = 1;
    } else {
      pto__loader_count(root, PTO__COUNT_RACES, 1);
    }
  }
  return pto_status_make(PTO_STATUS_IO,
                         "binary cache entry %s keeps disappearing (evicted while in use?); "
                         "set PTO_CACHE_MAX_SIZE larger or compile with --no-cache",
                         entry);
uncached:
build_here:
  if (r->copy_to) {
    s = pto__loader_build_dir(r->p, r->opt, r->copy_to, r->key);
    if (!s) write_key_text(r->copy_to, r->key_text);
    return s;
  }
  return compile_uncached_key(r->p, r->opt, r->key, out_program);
}

/* ---- compiling through the cache ------------------------------------------------------ */

static pto_status caller_signature(const pto_ir_program *p, const pto_compile_options *opt,
                                   pto_signature *out_sig) {
  pto_ir_func *entry = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_program_entry(p, opt->entry, &entry));
  return pto_signature_build(p, entry, opt->scalars, opt->nscalars, opt->samples, opt->nsamples,
                             out_sig);
}

/* A device set belongs to a program with a host entry only (the key of any other leaves it
 * out, so without this check a cache hit would silently ignore it). */
static pto_status check_devices_apply(const char *fn, const pto_ir_program *p,
                                      const pto_compile_options *opt) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the IR program is NULL", fn);
  int ndev = 0;
  pto_compile_options_devices(opt, &ndev);
  if (ndev == 0) return PTO_OK;
  pto_ir_func *entry = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_program_entry(p, opt->entry, &entry));
  if (entry->kind == PTO_FUNC_HOST) return PTO_OK;
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "--devices applies to programs with a host entry; entry @%s is %s",
                         entry->name, entry->kind == PTO_FUNC_ORCH ? "an orch" : "a kernel");
}

static pto_status compile_program(const pto_ir_program *p, const pto_compile_options *opt,
                                  const uint8_t *fp, pto_program **out_program);

pto_status pto_compile(const pto_ir_program *p, const pto_compile_options *opt,
                       pto_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_compile: out_program is NULL");
  *out_program = NULL;
  pto_compile_options defaults;
  pto_compile_options_init(&defaults);
  if (!opt) opt = &defaults;
  PTO_RETURN_IF_ERROR(check_devices_apply("pto_compile", p, opt));

  /* The in-process level: a request seen before, answered without disk or key text. A kernel
   * entry's request is the caller's (the kernel's index in p), so a hit needs no orch made. */
  uint8_t fp[16];
  int have_fp = request_fingerprint(p, opt, fp) == 0;
  if (have_fp) {
    pthread_mutex_lock(&g_lock);
    memo_node *n = find_request(fp);
    pto_program *hit = n ? take_loaded(n->key) : NULL;
    if (hit) g_memory_hits++;
    pthread_mutex_unlock(&g_lock);
    if (hit) {
      *out_program = hit;
      return PTO_OK;
    }
  }

  pto_compile_options kopt;
  pto_ir_program *kprog = NULL;
  PTO_RETURN_IF_ERROR(kernel_entry(&p, &opt, &kopt, &kprog));
  pto_status s = compile_program(p, opt, have_fp ? fp : NULL, out_program);
  pto_ir_program_destroy(kprog);
  return s;
}

/* pto_compile past the in-process map, for a program whose entry is an orch or a host; fp is
 * the caller's request fingerprint to remember (NULL: none). */
static pto_status compile_program(const pto_ir_program *p, const pto_compile_options *opt,
                                  const uint8_t *fp, pto_program **out_program) {
  int have_fp = fp != NULL;
  char key[33];
  char *key_text = NULL;
  PTO_RETURN_IF_ERROR(pto_cache_key(p, opt, key, &key_text));
  pthread_mutex_lock(&g_lock);
  pto_program *hit = take_loaded(key);
  if (hit) {
    g_memory_hits++;
    if (have_fp) remember_request(fp, key);
  }
  pthread_mutex_unlock(&g_lock);
  if (hit) {
    free(key_text);
    *out_program = hit;
    return PTO_OK;
  }

  pto_signature sig;
  pto_status s = caller_signature(p, opt, &sig);
  if (s) {
    free(key_text);
    return s;
  }
  disk_request r = {p, opt, key, key_text, &sig, NULL};
  pto_program *prog = NULL;
  s = disk_get(&r, &prog);
  free(key_text);
  if (s) {
    pto_signature_clear(&sig);
    return s;
  }
  /* The entry may come from a program that differs from this one only in names (or positions):
   * the program object (new, not shared yet) gets this caller's. An in-process hit above shares
   * the object, with the first caller's positions. */
  pto_signature_clear(&prog->sig);
  prog->sig = sig;
  s = pto__program_set_positions_from_ir(prog, p);
  if (s) {
    pto_program_release(prog);
    return s;
  }
  pthread_mutex_lock(&g_lock);
  prog = adopt_loaded(key, prog);
  if (have_fp) remember_request(fp, key);
  pthread_mutex_unlock(&g_lock);
  *out_program = prog;
  return PTO_OK;
}

/* DIR/positions.json of function fn, from ir; a failure loses only the messages' positions. */
static void write_positions(const pto_ir_program *ir, const char *fn, const char *dir) {
  pto__positions *t = NULL;
  pto_status e = pto__positions_from_ir(ir, fn, &t);
  if (!e && t) e = pto__positions_write(t, dir);
  pto__positions_free(t);
  pto_status_free(e);
}

/* A host program's callees are work dirs of their own (DIR/callees/<orch>/, as its manifest
 * lists them): each gets its position table too, so a rank that fails in a run from DIR names
 * its op and line (the chips load the callee dirs, tables included). */
static void write_callee_positions(const pto_ir_program *ir, const char *dir) {
  pto_manifest m;
  memset(&m, 0, sizeof m);
  pto_status e = pto_manifest_read(dir, &m);
  for (int i = 0; !e && i < m.ncallees; i++) {
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/callees/%s", dir, m.callees[i]) < (int)sizeof sub)
      write_positions(ir, m.callees[i], sub);
  }
  pto_status_free(e);
  pto_manifest_free(&m);
}

/* pto_compile_to_dir writes a whole work dir into dir, over the files of the one there. Into a
 * directory that is not a work dir (no manifest.json that reads as pto's), a name it would write
 * that is taken is refused rather than replaced: a user's own program.ptir or manifest.json there
 * was overwritten (pto.compile(..., work_dir=".") in the user's folder), where `pto compile -o`
 * refuses it. A missing or empty dir, or one without those names, is written as before. */
static pto_status check_dir_is_ours(const char *dir) {
  static const char *const k_names[] = {
      PTO_MANIFEST_FILENAME,
      "program.ptir",
      "positions.json",
      "orchestration",
      "kernels",
      "host",
      "callees",
      "key.txt",
  };
  if (!dir) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_compile_to_dir: dir is NULL");
  pto_manifest m;
  memset(&m, 0, sizeof m);
  pto_status e = pto_manifest_read(dir, &m);
  pto_manifest_free(&m);
  if (!e) return PTO_OK;
  char path[PATH_MAX];
  struct stat st;
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, k_names[i]);
    if (lstat(path, &st) != 0) continue;
    pto_status_free(e);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_compile_to_dir: %s holds %s, and it is not a pto work dir (no "
                           "manifest.json of pto's): a work dir would replace it, and pto never "
                           "overwrites a file it did not write; move it away, or choose a new or "
                           "empty directory",
                           dir, path);
  }
  pto_status_free(e);
  return PTO_OK;
}

pto_status pto_compile_to_dir(const pto_ir_program *p, const pto_compile_options *opt,
                              const char *dir, int use_cache) {
  pto_compile_options defaults;
  pto_compile_options_init(&defaults);
  if (!opt) opt = &defaults;
  PTO_RETURN_IF_ERROR(check_devices_apply("pto_compile_to_dir", p, opt));
  pto_compile_options kopt;
  pto_ir_program *kprog = NULL;
  PTO_RETURN_IF_ERROR(kernel_entry(&p, &opt, &kopt, &kprog));
  char key[33];
  char *key_text = NULL;
  pto_status s = pto_cache_key(p, opt, key, &key_text);
  if (s) {
    pto_ir_program_destroy(kprog);
    return s;
  }
  s = check_dir_is_ours(dir);
  if (!s) s = pto_file_mkdirs(dir, 0755);
  if (!s) {
    if (use_cache) {
      pto_signature sig;
      s = caller_signature(p, opt, &sig);
      if (!s) {
        disk_request r = {p, opt, key, key_text, &sig, dir};
        s = disk_get(&r, NULL);
        pto_signature_clear(&sig);
      }
    } else {
      s = uncached_needs_compiler();
      if (!s) s = pto__loader_build_dir(p, opt, dir, key);
      if (!s) write_key_text(dir, key_text);
    }
  }
  if (!s) {
    /* Beside the work dir, from this caller's IR: outside the manifest and the key. */
    pto_ir_func *entry = NULL;
    pto_status e = pto_ir_program_entry(p, opt->entry, &entry);
    if (!e) write_positions(p, entry->name, dir);
    pto_status_free(e); /* only messages would lose their positions */
    write_callee_positions(p, dir);
  }
  free(key_text);
  pto_ir_program_destroy(kprog);
  return s;
}

pto_status pto_compile_uncached(const pto_ir_program *p, const pto_compile_options *opt,
                                pto_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_compile_uncached: out_program is NULL");
  *out_program = NULL;
  pto_compile_options defaults;
  pto_compile_options_init(&defaults);
  if (!opt) opt = &defaults;
  PTO_RETURN_IF_ERROR(check_devices_apply("pto_compile_uncached", p, opt));
  pto_compile_options kopt;
  pto_ir_program *kprog = NULL;
  PTO_RETURN_IF_ERROR(kernel_entry(&p, &opt, &kopt, &kprog));
  char key[33];
  pto_status s = uncached_needs_compiler();
  if (!s) s = pto_cache_key(p, opt, key, NULL);
  if (!s) s = compile_uncached_key(p, opt, key, out_program);
  pto_ir_program_destroy(kprog);
  return s;
}

/* ---- copying an entry into a work dir ------------------------------------------------- */

/* Copies the entry's files into dir, each checked against the manifest as it is copied (the
 * bytes written are the bytes hashed), and the manifest last; DATA_LOSS when a file does not
 * match. A file is replaced by rename, so a process that has the old one mapped keeps it. */
/* Whether two signatures of one key name their parameters and dynamic symbols alike. */
static int same_names(const pto_signature *a, const pto_signature *b) {
  if (a->nparams != b->nparams || a->nsyms != b->nsyms) return 0;
  for (int i = 0; i < a->nparams; i++)
    if (strcmp(a->params[i].name, b->params[i].name) != 0) return 0;
  for (int i = 0; i < a->nsyms; i++)
    if (strcmp(a->syms[i], b->syms[i]) != 0) return 0;
  return 1;
}

static pto_status copy_entry(const char *entry_dir, const char *key, const pto_signature *want,
                             const char *dir, int *out_names_differ) {
  *out_names_differ = 0;
  char path[PATH_MAX];
  uint8_t *mtext = NULL, *buf = NULL;
  size_t mlen = 0, len = 0;
  pto_manifest m;
  memset(&m, 0, sizeof m);
  snprintf(path, sizeof path, "%s/%s", entry_dir, PTO_MANIFEST_FILENAME);
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &mtext, &mlen);
  if (s) {
    if (pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
      pto_status_free(s);
      s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: missing", path);
    }
    return s;
  }
  s = pto__loader_manifest_check_seal(entry_dir, mtext, mlen);
  if (s) goto corrupt;
  s = pto_manifest_parse((const char *)mtext, mlen, path, &m);
  if (s) goto corrupt;
  if (strcmp(m.cache_key, key) != 0) {
    s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: field 'cache_key': \"%s\", filed under %s", path,
                        m.cache_key, key);
    goto done;
  }
  if (want && !same_names(&m.sig, want)) {
    *out_names_differ = 1;
    goto done;
  }
  /* An interrupted copy must not leave an older manifest vouching for new files. */
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  if (unlink(path) != 0 && errno != ENOENT) {
    s = pto_status_make(PTO_STATUS_IO, "cannot replace %s: %s", path, strerror(errno));
    goto done;
  }
  for (int i = 0; i < m.nfiles; i++) {
    const pto_manifest_file *f = &m.files[i];
    char *real = NULL, hash[PTO_HASH_HEX_LEN + 1];
    s = pto_manifest_resolve(entry_dir, f->path, &real);
    if (!s) s = pto_file_read(real, PTO_FILE_MAX_BINARY, &buf, &len);
    free(real);
    if (s) goto corrupt;
    pto_hash_xxh128_hex(buf, len, hash);
    if (strcmp(hash, f->hash) != 0) {
      s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s/%s: content hash %s, the manifest has %s",
                          entry_dir, f->path, hash, f->hash);
      goto done;
    }
    const pto_manifest_binary *b = m.is_host ? (!strcmp(f->path, m.host.path) ? &m.host : NULL)
                                   : !strcmp(f->path, m.orch.path)       ? &m.orch
                                   : !strcmp(f->path, m.kernels_so.path) ? &m.kernels_so
                                                                         : NULL;
    if (b) {
      uint8_t id[PTO_BUILD_ID_MAX];
      size_t idlen = 0;
      char idhex[2 * PTO_BUILD_ID_MAX + 1];
      s = pto__loader_build_id_mem(f->path, buf, len, id, &idlen);
      if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
        pto_status_free(s);
        s = PTO_OK;
      }
      if (s) goto corrupt;
      pto_hash_hex(id, idlen, idhex);
      if (strcmp(idhex, b->build_id) != 0) {
        s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s/%s: Build-ID '%s', the manifest has '%s'",
                            entry_dir, f->path, idhex, b->build_id);
        goto done;
      }
    }
    snprintf(path, sizeof path, "%s/%s", dir, f->path);
    /* Already there with this content (compiled into this dir before): left alone. Replacing
     * a file by rename costs a flush on ext4 and gains nothing. */
    char have[PTO_HASH_HEX_LEN + 1];
    struct stat st;
    pto_status hs = lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len
                        ? pto_file_hash(path, have)
                        : pto_status_make(PTO_STATUS_NOT_FOUND, "differs");
    int same = !hs && !strcmp(have, f->hash);
    pto_status_free(hs);
    char *slash = strrchr(path, '/');
    *slash = 0;
    s = same ? PTO_OK : pto_file_mkdirs(path, 0755);
    *slash = '/';
    if (!s && !same) s = pto_file_write_atomic(path, buf, len, b ? 0755 : 0644);
    free(buf);
    buf = NULL;
    if (s) goto done;
  }
  /* A host program's callee work dirs, each with its manifest, before the top manifest. */
  for (int i = 0; i < m.ncallees; i++) {
    char from[PATH_MAX], to[PATH_MAX];
    int nd = 0;
    snprintf(from, sizeof from, "%s/callees/%s", entry_dir, m.callees[i]);
    snprintf(to, sizeof to, "%s/callees/%s", dir, m.callees[i]);
    if ((s = pto_file_mkdirs(to, 0755))) goto done;
    if ((s = copy_entry(from, key, NULL, to, &nd))) goto done;
  }
  snprintf(path, sizeof path, "%s/key.txt", entry_dir);
  pto_status ks = pto_file_read(path, PTO_FILE_MAX_SOURCE, &buf, &len);
  pto_status_free(ks); /* key.txt is optional */
  if (!ks) {
    snprintf(path, sizeof path, "%s/key.txt", dir);
    pto_status_free(pto_file_write_atomic(path, buf, len, 0644));
    free(buf);
    buf = NULL;
  }
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  s = pto_file_write_atomic(path, mtext, mlen, 0644);
  goto done;
corrupt:
  /* Anything unreadable or malformed inside a verified-by-name entry is corruption. */
  if (pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) {
    pto_status t = pto_status_make(PTO_STATUS_DATA_LOSS, "%s", pto_status_message(s));
    pto_status_free(s);
    s = t;
  }
done:
  free(buf);
  free(mtext);
  pto_manifest_free(&m);
  return s;
}
