/* The binary cache's remote second level (docs/remote-cache.md): PTO_REMOTE_CACHE (or
 * pto_cache_set_remote) names an HTTP or Redis store shared between machines. A local miss asks
 * it; a local store is copied to it. An entry travels as one object:
 *
 *   pto-remote-entry/1 REMOTE_KEY ORIGIN_KEY\n
 *   file PATH SIZE\n BYTES \n        one per file: the manifests and every file they list
 *   end\n
 *   sig hmac-sha256 HEX\n | sig none\n
 *
 * An object is named by its remote key: the cache key's text without the lines only the local
 * toolchain decides (the compilers' and the compiler library's paths and dates, the headers, the
 * LLVM version and triple a runtime-only pto does not know), so a runtime-only pto on another
 * machine with the same CPU and pto release finds what a full pto stored. ORIGIN_KEY is the
 * storing machine's local key, which its manifests carry; unpacked here, they carry ours.
 *
 * The HMAC-SHA256 (PTO_REMOTE_CACHE_KEY or PTO_REMOTE_CACHE_KEY_FILE) covers every byte before
 * the "sig" line, both keys included. A fetched object is verified in memory before anything of it
 * is written: its signature when this process has a key, the manifest's cache_key, every file
 * against the manifest's hash, no file the manifests do not list. Only then is it unpacked into
 * the local cache, where the ordinary load verifies it once more.
 *
 * A remote never breaks a compile: every operation is bounded by PTO_REMOTE_CACHE_TIMEOUT_MS,
 * and the first failure (down, slow, an answer that is not HTTP or RESP) warns once and turns
 * the remote off for the rest of the process. A refused entry is warned about and counted; the
 * compile then proceeds as a local miss. */
#include <errno.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/manifest.h"
#include "remote_internal.h"

#define ENTRY_MAGIC "pto-remote-entry/1"
#define DEFAULT_TIMEOUT_MS 2000
#define MAX_OBJECT (UINT64_C(1) << 30)
#define MAX_FILES 4096

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_configured; /* the environment was read */
static int g_disabled;   /* a failure turned the remote off for this process */
static char *g_override; /* pto_cache_set_remote's URL (wins over the environment) */
static char g_url[1024]; /* "" when there is no remote */
static pto__remote_backend g_backend;
static int g_open; /* g_backend is open */
static int g_failure_warned;
/* Why the backend did not open (its URL is bad input, or not), for pto_cache_remote_list. */
static pto_status_code g_open_code;
static char g_open_msg[1200];
/* The remote key of an entry this process refused as malformed (cut short, not an entry of that
 * key, a file that does not match its manifest): the store after compiling it here replaces it
 * instead of leaving it for every other machine to refuse too. */
static char g_replace[33];

/* ---- configuration -------------------------------------------------------------------- */

static int timeout_ms(void) {
  const char *v = getenv("PTO_REMOTE_CACHE_TIMEOUT_MS");
  if (!v || !*v) return DEFAULT_TIMEOUT_MS;
  char *end = NULL;
  long ms = strtol(v, &end, 10);
  if (*end || ms <= 0 || ms > 600000) {
    static int warned;
    pto__loader_warn_once(&warned,
                          "PTO_REMOTE_CACHE_TIMEOUT_MS='%s' is not a number of milliseconds in "
                          "1..600000; using %d",
                          v, DEFAULT_TIMEOUT_MS);
    return DEFAULT_TIMEOUT_MS;
  }
  return (int)ms;
}

/* The one list of the schemes a remote cache is reached by, each with its backend: the command's
 * checks of --remote-cache and $PTO_REMOTE_CACHE ask pto_cache_remote_url_supported, so what
 * one accepts the other opens. */
typedef pto_status (*open_fn)(const char *url, int timeout_ms, pto__remote_backend *out);
static const struct {
  const char *prefix;
  open_fn open;
} k_schemes[] = {
    {"http://", pto__remote_http_open},
    {"https://", pto__remote_http_open},
    {"redis://", pto__remote_redis_open},
};
#define SCHEMES_TEXT "http://, https:// or redis://"

static open_fn scheme_open(const char *url) {
  for (size_t i = 0; url && i < sizeof k_schemes / sizeof *k_schemes; i++)
    if (!strncmp(url, k_schemes[i].prefix, strlen(k_schemes[i].prefix))) return k_schemes[i].open;
  return NULL;
}

int pto_cache_remote_url_supported(const char *url) { return scheme_open(url) != NULL; }

const char *pto_cache_remote_schemes(void) { return SCHEMES_TEXT; }

/* Called under g_lock: opens the backend once per process. 0 when there is none to use. */
static int configure(void) {
  if (g_disabled) return 0;
  if (g_configured) return g_open;
  g_configured = 1;
  const char *url = g_override ? g_override : getenv("PTO_REMOTE_CACHE");
  if (!url || !*url) return 0;
  pto_url_redact(url, g_url, sizeof g_url);
  pto_status s;
  int ms = timeout_ms();
  open_fn open = scheme_open(url);
  if (open)
    s = open(url, ms, &g_backend);
  else
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "remote cache '%s': not an " SCHEMES_TEXT " URL", g_url);
  if (s) {
    /* Named where it came from: a PTO_REMOTE_CACHE set long ago is not what a user suspects. */
    pto__loader_warn_once(&g_failure_warned, "%s: %s; not using the remote cache",
                          g_override ? "--remote-cache" : "PTO_REMOTE_CACHE",
                          pto_status_message(s));
    g_open_code = pto_status_code_of(s);
    snprintf(g_open_msg, sizeof g_open_msg, "%s", pto_status_message(s));
    pto_status_free(s);
    g_disabled = 1;
    return 0;
  }
  g_open = 1;
  return 1;
}

/* Called under g_lock: a failure of the remote turns it off for the rest of the process. */
static void fail(const char *root, const char *what, pto_status s) {
  pto__loader_warn_once(&g_failure_warned,
                        "remote cache %s: %s: %s; not using it for the rest of this process", g_url,
                        what, pto_status_message(s));
  pto_status_free(s);
  pto__loader_count(root, PTO__COUNT_REMOTE_ERRORS, 1);
  g_disabled = 1;
}

void pto__loader_remote_url(char *out, size_t n) {
  pthread_mutex_lock(&g_lock);
  const char *url = g_override ? g_override : getenv("PTO_REMOTE_CACHE");
  pto_url_redact(url ? url : "", out, n);
  pthread_mutex_unlock(&g_lock);
}

static void close_backend(void) {
  if (g_open && g_backend.close) g_backend.close(g_backend.impl);
  memset(&g_backend, 0, sizeof g_backend);
  g_open = 0;
  g_configured = 0;
  g_disabled = 0;
  g_open_code = PTO_STATUS_OK;
  g_open_msg[0] = 0;
  g_url[0] = 0;
  g_replace[0] = 0;
}

void pto__loader_remote_reset(void) {
  pthread_mutex_lock(&g_lock);
  close_backend();
  __atomic_store_n(&g_failure_warned, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
}

pto_status pto_cache_set_remote(const char *url) {
  char *copy = NULL;
  if (url) {
    copy = pto_strdup(url);
    if (!copy) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  pthread_mutex_lock(&g_lock);
  close_backend();
  free(g_override);
  g_override = copy;
  pthread_mutex_unlock(&g_lock);
  return PTO_OK;
}

pto_status pto__remote_read_secret_file(const char *var, const char *file, uint64_t max,
                                        const char *risk, int *warned, uint8_t **out,
                                        size_t *out_len) {
  pto_status s = pto_file_read(file, max, out, out_len);
  if (s) {
    pto_status t = pto_status_make(pto_status_code_of(s), "%s: %s", var, pto_status_message(s));
    pto_status_free(s);
    return t;
  }
  struct stat st;
  if (stat(file, &st) == 0 && (st.st_mode & (S_IROTH | S_IWOTH)))
    pto__loader_warn_once(warned,
                          "%s %s can be read or written by every user (mode %04o): %s; chmod o= %s",
                          var, file, (unsigned)(st.st_mode & 07777), risk, file);
  return PTO_OK;
}

/* The signing key: PTO_REMOTE_CACHE_KEY, else the content of PTO_REMOTE_CACHE_KEY_FILE (one
 * trailing newline dropped). *out NULL when neither is set. */
static pto_status signing_key(uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  const char *k = getenv("PTO_REMOTE_CACHE_KEY");
  if (k && *k) {
    *out = (uint8_t *)pto_strdup(k);
    if (!*out) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    *out_len = strlen(k);
    return PTO_OK;
  }
  const char *f = getenv("PTO_REMOTE_CACHE_KEY_FILE");
  if (!f || !*f) return PTO_OK;
  static int warned;
  PTO_RETURN_IF_ERROR(pto__remote_read_secret_file(
      "PTO_REMOTE_CACHE_KEY_FILE", f, 1 << 20,
      "any of them can sign entries that every machine sharing it loads", &warned, out, out_len));
  if (*out_len && (*out)[*out_len - 1] == '\n') (*out_len)--;
  if (*out_len == 0) {
    free(*out);
    *out = NULL;
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "PTO_REMOTE_CACHE_KEY_FILE %s is empty: put the shared secret in it", f);
  }
  return PTO_OK;
}

static void hmac_hex(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len,
                     char out[65]) {
  uint8_t md[EVP_MAX_MD_SIZE];
  unsigned md_len = 0;
  HMAC(EVP_sha256(), key, (int)key_len, data, len, md, &md_len);
  pto_hash_hex(md, md_len, out);
}

/* ---- the remote key --------------------------------------------------------------------- */

static const char *const k_local_lines[] = {
    "toolchain.llvm=",    "toolchain.cxx=", "toolchain.cc=", "toolchain.compiler_library=",
    "toolchain.headers=", "target.triple="};

static int local_line(const char *line) {
  for (size_t i = 0; i < sizeof k_local_lines / sizeof *k_local_lines; i++)
    if (!strncmp(line, k_local_lines[i], strlen(k_local_lines[i]))) return 1;
  return 0;
}

/* The key text without the local toolchain's lines, with the machine's architecture instead of
 * LLVM's triple; its XXH3-128. */
static pto_status remote_key(const char *key_text, char out[33]) {
  pto_text t = {0};
  struct utsname u;
  pto_text_printf(&t, "remote.format=pto-remote-key/1\nremote.machine=%s\n",
                  uname(&u) == 0 ? u.machine : "unknown");
  for (const char *line = key_text; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    if (!local_line(line)) pto_text_put(&t, line, n);
    line += n;
  }
  char *text = pto_text_finish(&t);
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_hash_xxh128_hex(text, strlen(text), out);
  free(text);
  return PTO_OK;
}

/* ---- packing ---------------------------------------------------------------------------- */

/* Appends the manifest of dir (PREFIX names it inside the object) and every file it lists, then
 * its callees' work dirs the same way. */
static pto_status pack_dir(pto_text *t, const char *dir, const char *prefix, int depth) {
  char path[PATH_MAX];
  uint8_t *mtext = NULL, *buf = NULL;
  size_t mlen = 0, len = 0;
  pto_manifest m;
  memset(&m, 0, sizeof m);
  if (depth > 4) return pto_status_make(PTO_STATUS_DATA_LOSS, "%s: callees nest too deep", dir);
  snprintf(path, sizeof path, "%s/%s", dir, PTO_MANIFEST_FILENAME);
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &mtext, &mlen);
  if (!s) s = pto_manifest_parse((const char *)mtext, mlen, path, &m);
  if (s) goto done;
  pto_text_printf(t, "file %s%s %zu\n", prefix, PTO_MANIFEST_FILENAME, mlen);
  pto_text_put(t, (const char *)mtext, mlen);
  pto_text_puts(t, "\n");
  for (int i = 0; i < m.nfiles; i++) {
    char *real = NULL;
    s = pto_manifest_resolve(dir, m.files[i].path, &real);
    if (!s) s = pto_file_read(real, PTO_FILE_MAX_BINARY, &buf, &len);
    free(real);
    if (s) goto done;
    pto_text_printf(t, "file %s%s %zu\n", prefix, m.files[i].path, len);
    pto_text_put(t, (const char *)buf, len);
    pto_text_puts(t, "\n");
    free(buf);
    buf = NULL;
  }
  for (int i = 0; i < m.ncallees && !s; i++) {
    char sub[PATH_MAX], subprefix[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/callees/%s", dir, m.callees[i]);
    snprintf(subprefix, sizeof subprefix, "%scallees/%s/", prefix, m.callees[i]);
    s = pack_dir(t, sub, subprefix, depth + 1);
  }
done:
  free(mtext);
  pto_manifest_free(&m);
  return s;
}

static pto_status pack_entry(const char *entry_dir, const char *rkey, const char *key, char **out,
                             size_t *out_len) {
  *out = NULL;
  uint8_t *sk = NULL;
  size_t sk_len = 0;
  PTO_RETURN_IF_ERROR(signing_key(&sk, &sk_len));
  pto_text t = {0};
  pto_text_printf(&t, ENTRY_MAGIC " %s %s\n", rkey, key);
  pto_status s = pack_dir(&t, entry_dir, "", 0);
  if (s) {
    pto_text_free(&t);
    free(sk);
    return s;
  }
  pto_text_puts(&t, "end\n");
  size_t body = t.len;
  if (sk) {
    char mac[65];
    hmac_hex(sk, sk_len, (const uint8_t *)t.data, body, mac);
    pto_text_printf(&t, "sig hmac-sha256 %s\n", mac);
  } else {
    pto_text_puts(&t, "sig none\n");
  }
  free(sk);
  size_t len = t.len;
  char *buf = pto_text_finish(&t);
  if (!buf) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  *out = buf;
  *out_len = len;
  return PTO_OK;
}

/* ---- verifying ---------------------------------------------------------------------------- */

typedef struct object_file {
  char path[PATH_MAX];
  const uint8_t *data;
  size_t len;
  int used;        /* listed by a manifest */
  int is_manifest; /* its cache_key is rewritten to the local key when unpacked */
} object_file;

typedef struct object {
  char origin[33]; /* the storing machine's key, which the manifests carry */
  char stale[160]; /* why the entry was compiled by another toolchain than this pto's, or "" */
  object_file *files;
  int nfiles, capfiles;
} object;

/* Splits the object into its files and checks its signature. DATA_LOSS for anything malformed;
 * FAILED_PRECONDITION for a signature that is missing (with a key) or wrong. */
static pto_status parse_object(const uint8_t *buf, size_t len, const char *rkey, object *o) {
  memset(o, 0, sizeof *o);
  const char *p = (const char *)buf, *end = p + len;
  char head[64];
  int hn = snprintf(head, sizeof head, ENTRY_MAGIC " %s ", rkey);
  if (len < (size_t)hn + 33 || memcmp(p, head, (size_t)hn) != 0 || p[hn + 32] != '\n' ||
      strspn(p + hn, "0123456789abcdef") < 32)
    return pto_status_make(PTO_STATUS_DATA_LOSS, "not a pto remote entry for remote key %s", rkey);
  memcpy(o->origin, p + hn, 32);
  o->origin[32] = 0;
  p += hn + 33;
  for (;;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return pto_status_make(PTO_STATUS_DATA_LOSS, "the entry is cut short");
    if (nl - p == 3 && !memcmp(p, "end", 3)) {
      p = nl + 1;
      break;
    }
    char line[PATH_MAX + 64];
    size_t ln = (size_t)(nl - p);
    if (ln >= sizeof line || o->nfiles == MAX_FILES)
      return pto_status_make(PTO_STATUS_DATA_LOSS, "malformed file record");
    if (pto_grow_int(&o->files, sizeof *o->files, &o->capfiles, (int64_t)o->nfiles + 1))
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    memcpy(line, p, ln);
    line[ln] = 0;
    object_file *f = &o->files[o->nfiles];
    memset(f, 0, sizeof *f);
    unsigned long long size = 0;
    char fmt[32];
    snprintf(fmt, sizeof fmt, "file %%%ds %%llu", PATH_MAX - 1);
    if (sscanf(line, fmt, f->path, &size) != 2 || size >= (unsigned long long)(end - nl - 1) ||
        nl[1 + size] != '\n')
      return pto_status_make(PTO_STATUS_DATA_LOSS, "malformed file record '%.80s'", line);
    pto_status ps = pto_manifest_check_path(f->path, "a file of the entry");
    if (ps) {
      pto_status t = pto_status_make(PTO_STATUS_DATA_LOSS, "%s", pto_status_message(ps));
      pto_status_free(ps);
      return t;
    }
    f->data = (const uint8_t *)nl + 1;
    f->len = (size_t)size;
    for (int i = 0; i < o->nfiles; i++)
      if (!strcmp(o->files[i].path, f->path))
        return pto_status_make(PTO_STATUS_DATA_LOSS, "%s appears twice", f->path);
    o->nfiles++;
    p = nl + 1 + size + 1;
  }
  size_t body = (size_t)(p - (const char *)buf);
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  if (!nl || nl + 1 != end) return pto_status_make(PTO_STATUS_DATA_LOSS, "no signature line");
  uint8_t *sk = NULL;
  size_t sk_len = 0;
  PTO_RETURN_IF_ERROR(signing_key(&sk, &sk_len));
  if (!sk) return PTO_OK; /* no key: the hashes below are all there is to check */
  char mac[65];
  hmac_hex(sk, sk_len, buf, body, mac);
  free(sk);
  const char *tag = "sig hmac-sha256 ";
  size_t tn = strlen(tag);
  /* Name the key where the user set it: a farm that keeps it in a file has no
   * PTO_REMOTE_CACHE_KEY to look for. */
  const char *ek = getenv("PTO_REMOTE_CACHE_KEY"), *kf = getenv("PTO_REMOTE_CACHE_KEY_FILE");
  int from_file = !(ek && *ek) && kf;
  if ((size_t)(nl - p) < tn || memcmp(p, tag, tn) != 0)
    return pto_status_make(
        PTO_STATUS_FAILED_PRECONDITION, "the entry is not signed, and %s%s requires a signature",
        from_file ? "the key of PTO_REMOTE_CACHE_KEY_FILE " : "PTO_REMOTE_CACHE_KEY",
        from_file ? kf : "");
  if ((size_t)(nl - p) != tn + 64 || CRYPTO_memcmp(p + tn, mac, 64) != 0)
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                           "its HMAC-SHA256 signature does not match %s%s (tampered with, or "
                           "stored with another key)",
                           from_file ? "the key in PTO_REMOTE_CACHE_KEY_FILE "
                                     : "PTO_REMOTE_CACHE_KEY",
                           from_file ? kf : "");
  return PTO_OK;
}

static object_file *find_file(object *o, const char *path) {
  for (int i = 0; i < o->nfiles; i++)
    if (!strcmp(o->files[i].path, path)) return &o->files[i];
  return NULL;
}

#ifndef PTO_NO_COMPILER
/* The value of field (e.g. "llvm") in a manifest's toolchain identity ("pto=V;llvm=V;cxx=..."),
 * copied into out; 0 when absent. */
static int toolchain_field(const char *tc, const char *field, char *out, size_t n) {
  size_t fl = strlen(field);
  for (const char *p = tc; p && *p;) {
    if (!strncmp(p, field, fl) && p[fl] == '=') {
      p += fl + 1;
      snprintf(out, n, "%.*s", (int)strcspn(p, ";"), p);
      return 1;
    }
    p = strchr(p, ';');
    if (p) p++;
  }
  return 0;
}
#endif

/* A pto that compiles (not a runtime-only one, which cannot compile anyway): an entry whose
 * kernels another LLVM compiled is not this pto's output (the remote key leaves the toolchain
 * out, so that runtime-only machines find entries): o->stale says why, and the fetch counts a
 * miss, compiles here and stores the entry over it. */
static void check_toolchain(object *o, const pto_manifest *m, const char *path) {
#ifndef PTO_NO_COMPILER
  char v[64];
  if (o->stale[0]) return;
  if (!toolchain_field(m->toolchain, "llvm", v, sizeof v))
    snprintf(o->stale, sizeof o->stale, "%s: its toolchain names no LLVM version", path);
  else if (strcmp(v, PTO_LLVM_VERSION_STR) != 0)
    snprintf(o->stale, sizeof o->stale, "%s: compiled by LLVM %s, this pto has LLVM %s", path, v,
             PTO_LLVM_VERSION_STR);
#else
  (void)o;
  (void)m;
  (void)path;
#endif
}

/* Checks the manifest at PREFIX (its key, every listed file's hash), then its callees. */
static pto_status verify_dir(object *o, const char *prefix, int depth) {
  const char *key = o->origin;
  char path[PATH_MAX];
  if (depth > 4) return pto_status_make(PTO_STATUS_DATA_LOSS, "callees nest too deep");
  snprintf(path, sizeof path, "%s%s", prefix, PTO_MANIFEST_FILENAME);
  object_file *mf = find_file(o, path);
  if (!mf) return pto_status_make(PTO_STATUS_DATA_LOSS, "%s: missing", path);
  mf->used = 1;
  mf->is_manifest = 1;
  pto_manifest m;
  memset(&m, 0, sizeof m);
  pto_status s = pto_manifest_parse((const char *)mf->data, mf->len, path, &m);
  if (s) {
    pto_status t = pto_status_make(PTO_STATUS_DATA_LOSS, "%s", pto_status_message(s));
    pto_status_free(s);
    return t;
  }
  if (strcmp(m.cache_key, key) != 0)
    s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: cache_key \"%s\", the entry says %s", path,
                        m.cache_key, key);
  check_toolchain(o, &m, path);
  for (int i = 0; i < m.nfiles && !s; i++) {
    snprintf(path, sizeof path, "%s%s", prefix, m.files[i].path);
    object_file *f = find_file(o, path);
    char hash[PTO_HASH_HEX_LEN + 1];
    if (!f) {
      s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: missing", path);
      break;
    }
    pto_hash_xxh128_hex(f->data, f->len, hash);
    if (strcmp(hash, m.files[i].hash) != 0)
      s = pto_status_make(PTO_STATUS_DATA_LOSS, "%s: content hash %s, the manifest has %s", path,
                          hash, m.files[i].hash);
    f->used = 1;
  }
  for (int i = 0; i < m.ncallees && !s; i++) {
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%scallees/%s/", prefix, m.callees[i]);
    s = verify_dir(o, sub, depth + 1);
  }
  pto_manifest_free(&m);
  return s;
}

static pto_status verify_object(object *o) {
  PTO_RETURN_IF_ERROR(verify_dir(o, "", 0));
  for (int i = 0; i < o->nfiles; i++)
    if (!o->files[i].used)
      return pto_status_make(PTO_STATUS_DATA_LOSS, "%s: not listed by any manifest",
                             o->files[i].path);
  return PTO_OK;
}

pto_status pto__loader_remote_check_object(const uint8_t *buf, size_t len, const char *rkey) {
  object o = {0};
  pto_status s = parse_object(buf, len, rkey, &o);
  if (!s) s = verify_object(&o);
  free(o.files);
  return s;
}

/* ---- unpacking ---------------------------------------------------------------------------- */

/* A verified manifest with this machine's key for cache_key. */
static pto_status local_manifest(const object_file *f, const char *key, char **out) {
  pto_manifest m;
  memset(&m, 0, sizeof m);
  pto_status s = pto_manifest_parse((const char *)f->data, f->len, f->path, &m);
  if (!s) {
    snprintf(m.cache_key, sizeof m.cache_key, "%s", key);
    s = pto_manifest_to_json(&m, out);
  }
  pto_manifest_free(&m);
  return s;
}

/* Writes the verified files into a private dir under ROOT/tmp and renames it into place. */
static pto_status unpack(const char *root, const char *key, object *o) {
  char tmp[PATH_MAX], entry[PATH_MAX], parent[PATH_MAX], path[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  PTO_RETURN_IF_ERROR(pto_file_mkdirs(tmp, 0700));
  snprintf(tmp, sizeof tmp, "%s/tmp/%s-%ld-remote-XXXXXX", root, key, (long)getpid());
  if (!mkdtemp(tmp))
    return pto_status_make(PTO_STATUS_IO, "cannot create a directory in %s/tmp: %s", root,
                           strerror(errno));
  pto_status s = PTO_OK;
  for (int i = 0; i < o->nfiles && !s; i++) {
    snprintf(path, sizeof path, "%s/%s", tmp, o->files[i].path);
    char *slash = strrchr(path, '/');
    *slash = 0;
    s = pto_file_mkdirs(path, 0755);
    *slash = '/';
    const char *name = slash + 1;
    size_t nl = strlen(name);
    int exe = nl > 3 && !strcmp(name + nl - 3, ".so");
    if (!s && o->files[i].is_manifest) {
      char *text = NULL;
      s = local_manifest(&o->files[i], key, &text);
      if (!s) s = pto_file_write_atomic(path, text, strlen(text), 0644);
      free(text);
    } else if (!s) {
      s = pto_file_write_atomic(path, o->files[i].data, o->files[i].len, exe ? 0755 : 0644);
    }
  }
  if (!s) s = pto__loader_manifest_seal(tmp); /* as a local store seals it (manifest.xxh128) */
  if (!s) {
    snprintf(parent, sizeof parent, "%s/%.2s", root, key);
    pto__loader_cache_entry_path(root, key, entry, sizeof entry);
    /* A fan-out dir that pto cache clear removes in between is made again (as a local store). */
    for (int tries = 0;; tries++) {
      s = pto_file_mkdirs(parent, 0700);
      if (s || rename(tmp, entry) == 0) break;
      if (errno == ENOENT && tries < 8) continue;
      if (errno == EEXIST || errno == ENOTEMPTY) break; /* another process placed it first */
      s = pto_status_make(PTO_STATUS_IO, "cannot rename an entry into %s: %s", parent,
                          strerror(errno));
      break;
    }
  }
  pto_file_remove_tree(tmp); /* gone already after a rename */
  return s;
}

/* ---- the hooks -------------------------------------------------------------------------- */

int pto__loader_remote_fetch(const char *root, const char *key, const char *key_text) {
  pthread_mutex_lock(&g_lock);
  if (!configure()) { /* no remote: no work, not even the remote key */
    pthread_mutex_unlock(&g_lock);
    return 0;
  }
  char rkey[33];
  pto_status s = remote_key(key_text, rkey);
  if (s) {
    pto_status_free(s);
    pthread_mutex_unlock(&g_lock);
    return 0;
  }
  uint8_t *buf = NULL;
  size_t len = 0;
  s = g_backend.get(g_backend.impl, rkey, &buf, &len);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    pto__loader_count(root, PTO__COUNT_REMOTE_MISSES, 1);
    pthread_mutex_unlock(&g_lock);
    return 0;
  }
  if (s) {
    fail(root, "fetching an entry", s);
    pthread_mutex_unlock(&g_lock);
    return 0;
  }
  char url[sizeof g_url];
  snprintf(url, sizeof url, "%s", g_url);
  pthread_mutex_unlock(&g_lock);

  object o = {0};
  s = len > MAX_OBJECT ? pto_status_make(PTO_STATUS_DATA_LOSS, "larger than 1 GiB")
                       : parse_object(buf, len, rkey, &o);
  if (!s) s = verify_object(&o);
  if (s && pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) {
    pto__loader_warn("refusing the remote cache entry %s from %s: %s; not loading it, compiling "
                     "here instead",
                     rkey, url, pto_status_message(s));
    pto__loader_count(root, PTO__COUNT_REMOTE_REFUSALS, 1);
    /* Not a signature of another key (FAILED_PRECONDITION: a farm rotating its key would
     * overwrite its peers' entries back and forth), nor a key file this process cannot read. */
    if (pto_status_code_of(s) == PTO_STATUS_DATA_LOSS) {
      pthread_mutex_lock(&g_lock);
      memcpy(g_replace, rkey, sizeof g_replace);
      pthread_mutex_unlock(&g_lock);
    }
  } else if (!s && o.stale[0]) {
    /* A miss: nothing of it is loaded; the entry compiled here is stored over it. */
    pto__loader_count(root, PTO__COUNT_REMOTE_MISSES, 1);
    pthread_mutex_lock(&g_lock);
    memcpy(g_replace, rkey, sizeof g_replace);
    pthread_mutex_unlock(&g_lock);
    s = pto_status_make(PTO_STATUS_NOT_FOUND, "%s", o.stale);
  } else if (!s) {
    s = unpack(root, key, &o);
    if (s)
      pto__loader_warn("cannot place the remote cache entry %s into %s: %s", key, root,
                       pto_status_message(s));
    else
      pto__loader_count(root, PTO__COUNT_REMOTE_HITS, 1);
  }
  int ok = s == PTO_OK;
  pto_status_free(s);
  free(o.files);
  free(buf);
  return ok;
}

void pto__loader_remote_store(const char *root, const char *entry_dir, const char *key,
                              const char *key_text) {
  pthread_mutex_lock(&g_lock);
  if (!configure()) { /* no remote: no work, not even the remote key */
    pthread_mutex_unlock(&g_lock);
    return;
  }
  char rkey[33];
  pto_status s = remote_key(key_text, rkey);
  if (s) {
    pto_status_free(s);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  int exists = 0, replace = !strcmp(rkey, g_replace);
  s = replace ? PTO_OK : g_backend.head(g_backend.impl, rkey, &exists);
  if (s) {
    fail(root, "asking for an entry", s);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  if (replace) g_replace[0] = 0;
  if (exists) {
    pthread_mutex_unlock(&g_lock);
    return;
  }
  char *obj = NULL;
  size_t len = 0;
  s = pack_entry(entry_dir, rkey, key, &obj, &len);
  if (s) {
    pto__loader_warn("not storing %s in the remote cache: %s", entry_dir, pto_status_message(s));
    pto_status_free(s);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  s = g_backend.put(g_backend.impl, rkey, (const uint8_t *)obj, len);
  free(obj);
  if (s)
    fail(root, "storing an entry", s);
  else
    pto__loader_count(root, PTO__COUNT_REMOTE_STORES, 1);
  pthread_mutex_unlock(&g_lock);
}

/* ---- listing ---------------------------------------------------------------------------- */

pto_status pto_cache_remote_list(void (*fn)(void *ctx, const char *key, uint64_t bytes),
                                 void *ctx) {
  pthread_mutex_lock(&g_lock);
  pto_status s = PTO_OK;
  if (!configure()) {
    const char *url = g_override ? g_override : getenv("PTO_REMOTE_CACHE");
    /* A URL that does not parse is bad input, named where it came from (exit 2 for pto cache
     * ls --remote, as --remote-cache ftp://x is), not a job that failed. */
    char shown[sizeof g_url];
    pto_url_redact(url ? url : "", shown, sizeof shown);
    if (url && *url && g_open_code == PTO_STATUS_INVALID_ARGUMENT)
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s",
                          g_override ? "--remote-cache" : "PTO_REMOTE_CACHE", g_open_msg);
    else
      s = url && *url
              ? pto_status_make(PTO_STATUS_IO,
                                "remote cache %s cannot be used (see the warning above)", shown)
              : pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                                "no remote cache: set PTO_REMOTE_CACHE=URL or pass "
                                "--remote-cache URL");
  } else if (!g_backend.list) {
    s = pto_status_make(PTO_STATUS_UNIMPLEMENTED,
                        "remote cache %s cannot list its entries: an HTTP store (GET, HEAD, PUT) "
                        "has no listing, a redis:// one has; its entries are the objects under "
                        "that URL on the server",
                        g_url);
  } else {
    s = g_backend.list(g_backend.impl, fn, ctx);
  }
  pthread_mutex_unlock(&g_lock);
  return s;
}
