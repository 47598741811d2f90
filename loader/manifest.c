/* The work dir manifest (pto/manifest.h): JSON through jansson, validated field by field.
 *
 * Layout of pto.manifest/1 (every key required unless marked optional):
 *   schema, program, platform, opt_level, toolchain, cache_key,
 *   signature { entry, kernel_entry?, nrets, params [ {name, kind, dtype, direction, dims} |
 *                                                    {name, kind, dtype, binding} ] },
 *   orchestration { name, source, binary, build_id, hid, entry_symbol? },
 *   kernels_so { binary, build_id, hid },
 *   kernels [ {id, name, symbol, core_type, scratch_bytes, source?, object?} ],
 *   files { "<relative path>": "<32 hex>" }
 * A host (L3) program has "kind": "host" (optional, default "l2") and, instead of orchestration
 * and kernels_so (kernels is then []):
 *   host { name, source, binary, build_id, hid }, devices [ids], callees [orch names]
 * where each callee is the L2 work dir callees/<name>/ with its own manifest.
 * Unknown keys are ignored, so a later /1 writer may add fields. The plain fields of the root,
 * orchestration, host and each kernel are rows of one table per object ("the field table"
 * below), which both the writer and the reader walk. */
#include "pto/manifest.h"
#include "pto/base.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "loader_internal.h"
#include "pto/orch_abi.h"

#ifndef JSON_PRESERVE_ORDER
#define JSON_PRESERVE_ORDER 0
#endif

/* jansson seeds its hash tables from /dev/urandom on first use (an open, a read and a close on
 * every load of a work dir); the 16 random bytes the kernel gives every process at exec
 * (AT_RANDOM) serve as well, hashed so that they are not exposed. A seed set before, by an
 * application using jansson itself, stays (the first seed wins). */
static pthread_once_t g_json_seed_once = PTHREAD_ONCE_INIT;

static void json_seed(void) {
  const void *r = (const void *)getauxval(AT_RANDOM);
  if (r) json_object_seed((size_t)(XXH3_64bits(r, 16) | 1));
}

void pto__loader_json_init(void) { pthread_once(&g_json_seed_once, json_seed); }

static pto_status oom(void) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory handling a manifest");
}

/* ---- hashes --------------------------------------------------------------------------- */

static void hash_hex(XXH128_hash_t h, char out[33]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  pto_hash_hex(c.digest, sizeof c.digest, out);
}

pto_status pto_file_hash(const char *path, char out_hex[PTO_HASH_HEX_LEN + 1]) {
  if (!out_hex)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_file_hash: out_hex is NULL");
  out_hex[0] = 0;
  int fd;
  PTO_RETURN_IF_ERROR(pto_file_open_regular(path, 0, &fd, NULL));
  pto_status s = PTO_OK;
  XXH3_state_t *st = XXH3_createState();
  enum { CHUNK = 1 << 16 };
  uint8_t *buf = pto_malloc(CHUNK);
  if (!st || !buf) {
    s = oom();
    goto done;
  }
  XXH3_128bits_reset(st);
  for (;;) {
    ssize_t n = read(fd, buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
      goto done;
    }
    if (n == 0) break;
    XXH3_128bits_update(st, buf, (size_t)n);
  }
  hash_hex(XXH3_128bits_digest(st), out_hex);
done:
  free(buf);
  if (st) XXH3_freeState(st);
  close(fd);
  return s;
}

/* ---- paths ---------------------------------------------------------------------------- */

/* Why relpath is not a safe work-dir path, or NULL when it is. */
static const char *path_problem(const char *relpath) {
  if (!relpath || !*relpath) return "is empty";
  if (relpath[0] == '/') return "is absolute";
  if (strlen(relpath) >= PATH_MAX) return "is too long";
  for (const unsigned char *c = (const unsigned char *)relpath; *c; c++)
    if (*c < 0x20 || *c == 0x7f) return "contains a control character";
  for (const char *p = relpath;;) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 0) return e ? "has an empty component" : "ends with '/'";
    if (n == 1 && p[0] == '.') return "has a '.' component";
    if (n == 2 && p[0] == '.' && p[1] == '.') return "has a '..' component";
    if (!e) return NULL;
    p = e + 1;
  }
}

#define PATH_RULE "work dir paths are relative, without '.' or '..'"

pto_status pto_manifest_check_path(const char *relpath, const char *what) {
  const char *why = path_problem(relpath);
  if (!why) return PTO_OK;
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: path '%s' %s: " PATH_RULE, what,
                         relpath ? relpath : "(null)", why);
}

/* 1 when every component of relpath (checked: no '.', '..' or empty ones) below the resolved
 * dir rdir exists and is not a symlink: then rdir/relpath is already its realpath, found with
 * one lstat per component instead of a readlink per component of the whole path (a cache hit
 * resolves every file of its entry). */
static int no_links_below(const char *rdir, const char *relpath) {
  char path[PATH_MAX];
  if (!strcmp(rdir, "/")) return 0; /* the realpath of "//a" is "/a": leave it to realpath */
  int n = snprintf(path, sizeof path, "%s/%s", rdir, relpath);
  if (n < 0 || n >= (int)sizeof path) return 0;
  size_t base = strlen(rdir) + 1;
  for (size_t i = base;; i++) {
    if (path[i] != '/' && path[i] != 0) continue;
    char saved = path[i];
    path[i] = 0;
    struct stat st;
    int ok = lstat(path, &st) == 0 && !S_ISLNK(st.st_mode);
    path[i] = saved;
    if (!ok) return 0;
    if (!saved) return 1;
  }
}

/* The status of a path that realpath could not resolve (errno says why). */
static pto_status_code realpath_code(void) {
  return errno == ENOMEM   ? PTO_STATUS_OUT_OF_MEMORY
         : errno == ENOENT ? PTO_STATUS_NOT_FOUND
                           : PTO_STATUS_IO;
}

/* relpath, already checked, under rdir (dir's realpath; dir names it in messages). */
static pto_status resolve_checked(const char *rdir, const char *dir, const char *relpath,
                                  char **out_path) {
  pto_status s = PTO_OK;
  char *joined = NULL, *real = NULL;
  if (!(joined = pto_strdup_printf("%s/%s", rdir, relpath))) {
    s = oom();
    goto done;
  }
  if (no_links_below(rdir, relpath)) {
    if (!(real = pto_strdup(joined))) {
      s = oom();
      goto done;
    }
  } else {
    real = pto_realpath(joined);
  }
  if (!real) {
    s = pto_status_make(realpath_code(), "%s/%s: %s", dir, relpath, strerror(errno));
    goto done;
  }
  size_t n = strlen(rdir);
  int inside = strcmp(rdir, "/") == 0 || (strncmp(real, rdir, n) == 0 && real[n] == '/');
  if (!inside) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "%s/%s: a symlink leads outside the work dir (to %s); refusing to open it",
                        dir, relpath, real);
    goto done;
  }
  *out_path = real;
  real = NULL;
done:
  free(real);
  free(joined);
  return s;
}

pto_status pto__manifest_resolve_in(const char *rdir, const char *dir, const char *relpath,
                                    char **out_path) {
  *out_path = NULL;
  PTO_RETURN_IF_ERROR(pto_manifest_check_path(relpath, dir));
  return resolve_checked(rdir, dir, relpath, out_path);
}

pto_status pto__manifest_realdir(const char *dir, char **out_rdir) {
  *out_rdir = pto_realpath(dir);
  if (*out_rdir) return PTO_OK;
  return pto_status_make(realpath_code(), "work dir %s: %s", dir, strerror(errno));
}

pto_status pto_manifest_resolve(const char *dir, const char *relpath, char **out_path) {
  if (!out_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_resolve: out_path is NULL");
  *out_path = NULL;
  PTO_RETURN_IF_ERROR(pto_manifest_check_path(relpath, dir));
  char *rdir = NULL;
  PTO_RETURN_IF_ERROR(pto__manifest_realdir(dir, &rdir));
  pto_status s = resolve_checked(rdir, dir, relpath, out_path);
  free(rdir);
  return s;
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct reader {
  const char *file;
} reader;

static pto_status field_err(const reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pto_status field_err(const reader *r, const char *field, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: field '%s': %s", r->file, field, msg);
}

/* A short description of a JSON value for "got ..." */
static const char *describe(const json_t *v, char *buf, size_t n) {
  if (!v) return "nothing";
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: snprintf(buf, n, "\"%.60s\"", json_string_value(v)); return buf;
  case JSON_INTEGER: snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return buf;
  case JSON_REAL: snprintf(buf, n, "%g", json_real_value(v)); return buf;
  case JSON_TRUE: return "true";
  case JSON_FALSE: return "false";
  case JSON_NULL: return "null";
  }
  return "?";
}

static pto_status get_value(const reader *r, const json_t *obj, const char *key, const char *path,
                            json_type type, const char *what, json_t **out) {
  json_t *v = json_object_get(obj, key);
  if (!v) return field_err(r, path, "missing (expected %s)", what);
  if (json_typeof(v) != type && !(type == JSON_REAL && json_is_number(v))) {
    char b[80];
    return field_err(r, path, "expected %s, got %s", what, describe(v, b, sizeof b));
  }
  *out = v;
  return PTO_OK;
}

/* Letters, digits and '_', not starting with a digit: a symbol dlsym can find unmangled. */
static int c_identifier(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return 0;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')))
      return 0;
  return 1;
}

/* A required non-empty string, duplicated into *out (freed by the manifest). */
static pto_status get_str(const reader *r, const json_t *obj, const char *key, const char *path,
                          char **out) {
  json_t *v = NULL;
  PTO_RETURN_IF_ERROR(get_value(r, obj, key, path, JSON_STRING, "a string", &v));
  if (json_string_length(v) == 0) return field_err(r, path, "is empty");
  if (strlen(json_string_value(v)) != json_string_length(v))
    return field_err(r, path, "contains a NUL character");
  *out = pto_strdup(json_string_value(v));
  return *out ? PTO_OK : oom();
}

static pto_status get_path(const reader *r, const json_t *obj, const char *key, const char *path,
                           char **out) {
  PTO_RETURN_IF_ERROR(get_str(r, obj, key, path, out));
  const char *why = path_problem(*out);
  if (why) return field_err(r, path, "path '%.200s' %s: " PATH_RULE, *out, why);
  return PTO_OK;
}

static pto_status get_int(const reader *r, const json_t *obj, const char *key, const char *path,
                          int64_t lo, int64_t hi, int64_t *out) {
  json_t *v = NULL;
  PTO_RETURN_IF_ERROR(get_value(r, obj, key, path, JSON_INTEGER, "an integer", &v));
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi)
    return field_err(r, path, "%" JSON_INTEGER_FORMAT " is out of range [%" PRId64 ", %" PRId64 "]",
                     x, lo, hi);
  *out = (int64_t)x;
  return PTO_OK;
}

static int is_lower_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static pto_status get_hash(const reader *r, const json_t *v, const char *path, char out[33]) {
  char b[80];
  if (!json_is_string(v) || json_string_length(v) != PTO_HASH_HEX_LEN ||
      !is_lower_hex(json_string_value(v), PTO_HASH_HEX_LEN))
    return field_err(r, path, "expected 32 lowercase hex digits (XXH3-128), got %s",
                     describe(v, b, sizeof b));
  memcpy(out, json_string_value(v), PTO_HASH_HEX_LEN + 1);
  return PTO_OK;
}

static int hex_val(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* binary, build_id, hid of a shared object entry. */
static pto_status get_binary(const reader *r, const json_t *obj, const char *prefix,
                             pto_manifest_binary *b) {
  char path[96];
  json_t *v = NULL;
  snprintf(path, sizeof path, "%s.binary", prefix);
  PTO_RETURN_IF_ERROR(get_path(r, obj, "binary", path, &b->path));
  snprintf(path, sizeof path, "%s.build_id", prefix);
  PTO_RETURN_IF_ERROR(get_value(r, obj, "build_id", path, JSON_STRING, "a hex string", &v));
  size_t n = json_string_length(v);
  const char *id = json_string_value(v);
  if (n % 2 || n > 2 * PTO_BUILD_ID_MAX || !is_lower_hex(id, n))
    return field_err(
        r, path, "expected an even number (up to 128) of lowercase hex digits, got \"%.140s\"", id);
  memcpy(b->build_id, id, n + 1);
  snprintf(path, sizeof path, "%s.hid", prefix);
  PTO_RETURN_IF_ERROR(get_value(r, obj, "hid", path, JSON_STRING, "a hex string", &v));
  const char *h = json_string_value(v);
  n = json_string_length(v);
  if (n == 0 || n > 16 || !is_lower_hex(h, n) || (n > 1 && h[0] == '0'))
    return field_err(r, path,
                     "expected 1 to 16 lowercase hex digits without padding, got \"%.40s\"", h);
  b->hid = strtoull(h, NULL, 16);
  if (b->build_id[0]) {
    uint8_t bytes[PTO_BUILD_ID_MAX];
    size_t nb = strlen(b->build_id) / 2;
    for (size_t i = 0; i < nb; i++)
      bytes[i] = (uint8_t)(hex_val(b->build_id[2 * i]) << 4 | hex_val(b->build_id[2 * i + 1]));
    uint64_t want = pto_hid_from_build_id(bytes, nb);
    if (want != b->hid) {
      char hx[17];
      pto_hid_format(want, hx);
      return field_err(r, path, "\"%s\" does not match build_id (whose hid is %s)", h, hx);
    }
  }
  return PTO_OK;
}

static const char *const k_dir_names[] = {"in", "out", "inout"};

/* The specialized value of a scalar parameter of dtype dt. */
static pto_status get_scalar(const reader *r, const json_t *v, const char *path, pto_dtype dt,
                             pto_scalar *out) {
  char b[80];
  out->dtype = dt;
  out->u = 0;
  if (dt == PTO_DTYPE_BOOL) {
    if (!json_is_boolean(v))
      return field_err(r, path, "expected true or false, got %s", describe(v, b, sizeof b));
    out->i = json_is_true(v);
    return PTO_OK;
  }
  if (pto_dtype_is_float(dt)) {
    if (json_is_number(v)) {
      out->f = json_number_value(v);
      return PTO_OK;
    }
    const char *t = json_string_value(v);
    if (t && !strcmp(t, "nan"))
      out->f = NAN;
    else if (t && !strcmp(t, "-nan")) /* a NaN keeps its sign: -D x=-nan is not x=nan */
      out->f = copysign(NAN, -1.0);
    else if (t && !strcmp(t, "inf"))
      out->f = INFINITY;
    else if (t && !strcmp(t, "-inf"))
      out->f = -INFINITY;
    else
      return field_err(r, path,
                       "expected a number, \"nan\", \"-nan\", \"inf\" or \"-inf\" for %s, got %s",
                       pto_dtype_name(dt), describe(v, b, sizeof b));
    return PTO_OK;
  }
  size_t bits = pto_dtype_size(dt) * 8;
  if (!pto_dtype_is_signed(dt)) {
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
      out->u = (uint64_t)json_integer_value(v);
    } else if (dt == PTO_DTYPE_U64 && json_is_string(v)) {
      /* u64 values past INT64_MAX are written as decimal strings. */
      const char *t = json_string_value(v);
      char *end;
      errno = 0;
      unsigned long long x = strtoull(t, &end, 10);
      if (!*t || *t == '-' || *end || errno)
        return field_err(r, path, "expected a u64 value, got %s", describe(v, b, sizeof b));
      out->u = x;
    } else {
      return field_err(r, path, "expected a non-negative integer for %s, got %s",
                       pto_dtype_name(dt), describe(v, b, sizeof b));
    }
    if (bits < 64 && out->u >> bits)
      return field_err(r, path, "%" PRIu64 " does not fit %s", out->u, pto_dtype_name(dt));
    return PTO_OK;
  }
  if (!json_is_integer(v))
    return field_err(r, path, "expected an integer for %s, got %s", pto_dtype_name(dt),
                     describe(v, b, sizeof b));
  out->i = json_integer_value(v);
  if (bits < 64 && (out->i < -(INT64_C(1) << (bits - 1)) || out->i >= (INT64_C(1) << (bits - 1))))
    return field_err(r, path, "%" PRId64 " does not fit %s", out->i, pto_dtype_name(dt));
  return PTO_OK;
}

static pto_status get_param(const reader *r, const json_t *pv, int i, pto_signature *sig) {
  char path[128], b[80];
  json_t *v = NULL;
  pto_sig_param *p = &sig->params[i];
  snprintf(path, sizeof path, "signature.params[%d]", i);
  if (!json_is_object(pv))
    return field_err(r, path, "expected an object, got %s", describe(pv, b, sizeof b));
  snprintf(path, sizeof path, "signature.params[%d].name", i);
  PTO_RETURN_IF_ERROR(get_str(r, pv, "name", path, &p->name));
  for (int j = 0; j < i; j++)
    if (!strcmp(sig->params[j].name, p->name))
      return field_err(r, path, "duplicate parameter '%s'", p->name);
  snprintf(path, sizeof path, "signature.params[%d].dtype", i);
  PTO_RETURN_IF_ERROR(get_value(r, pv, "dtype", path, JSON_STRING, "a dtype name", &v));
  int dt = pto_dtype_from_name(json_string_value(v), json_string_length(v));
  if (dt < 0) return field_err(r, path, "unknown dtype %s", describe(v, b, sizeof b));
  p->dtype = (pto_dtype)dt;
  snprintf(path, sizeof path, "signature.params[%d].kind", i);
  PTO_RETURN_IF_ERROR(get_value(r, pv, "kind", path, JSON_STRING, "\"tensor\" or \"scalar\"", &v));
  const char *kind = json_string_value(v);
  if (!strcmp(kind, "scalar")) {
    p->dir = PTO_DIR_IN;
    snprintf(path, sizeof path, "signature.params[%d].binding", i);
    v = json_object_get(pv, "binding");
    if (!v) return field_err(r, path, "missing (expected \"runtime\" or the specialized value)");
    if (json_is_string(v) && !strcmp(json_string_value(v), "runtime")) {
      p->bind = PTO_BIND_RUNTIME;
      p->value = (pto_scalar){.dtype = p->dtype};
      return PTO_OK;
    }
    p->bind = PTO_BIND_LITERAL;
    return get_scalar(r, v, path, p->dtype, &p->value);
  }
  if (strcmp(kind, "tensor") != 0)
    return field_err(r, path, "expected \"tensor\" or \"scalar\", got %s",
                     describe(v, b, sizeof b));
  p->is_tensor = 1;
  snprintf(path, sizeof path, "signature.params[%d].direction", i);
  PTO_RETURN_IF_ERROR(
      get_value(r, pv, "direction", path, JSON_STRING, "\"in\", \"out\" or \"inout\"", &v));
  int d = -1;
  for (int k = 0; k < 3; k++)
    if (!strcmp(json_string_value(v), k_dir_names[k])) d = k;
  if (d < 0)
    return field_err(r, path, "expected \"in\", \"out\" or \"inout\", got %s",
                     describe(v, b, sizeof b));
  p->dir = (pto_dir)d;
  snprintf(path, sizeof path, "signature.params[%d].dims", i);
  PTO_RETURN_IF_ERROR(get_value(r, pv, "dims", path, JSON_ARRAY, "an array of extents", &v));
  size_t rank = json_array_size(v);
  if (rank < 1 || rank > PTO_MAX_RANK)
    return field_err(r, path, "rank %zu, expected 1 to %d dims", rank, PTO_MAX_RANK);
  p->rank = (int)rank;
  for (size_t k = 0; k < rank; k++) {
    json_t *dv = json_array_get(v, k);
    snprintf(path, sizeof path, "signature.params[%d].dims[%zu]", i, k);
    if (json_is_integer(dv) && json_integer_value(dv) >= 0) {
      p->dims[k] = (pto_sig_dim){json_integer_value(dv), -1};
    } else if (json_is_string(dv) && json_string_length(dv) > 0) {
      int si = pto_signature_intern_sym(sig, json_string_value(dv));
      if (si < 0) return oom();
      p->dims[k] = (pto_sig_dim){-1, si};
    } else {
      return field_err(r, path, "expected a non-negative extent or a dynamic symbol name, got %s",
                       describe(dv, b, sizeof b));
    }
  }
  return PTO_OK;
}

static pto_status get_signature(const reader *r, const json_t *root, pto_signature *sig) {
  json_t *so = NULL, *v = NULL;
  PTO_RETURN_IF_ERROR(get_value(r, root, "signature", "signature", JSON_OBJECT, "an object", &so));
  PTO_RETURN_IF_ERROR(get_str(r, so, "entry", "signature.entry", &sig->entry));
  /* A kernel run as the entry: its name, entry being the orch made for it (pto_signature). */
  if (json_object_get(so, "kernel_entry"))
    PTO_RETURN_IF_ERROR(
        get_str(r, so, "kernel_entry", "signature.kernel_entry", &sig->kernel_entry));
  int64_t nrets;
  PTO_RETURN_IF_ERROR(get_int(r, so, "nrets", "signature.nrets", 0, INT32_MAX, &nrets));
  sig->nrets = (int)nrets;
  PTO_RETURN_IF_ERROR(get_value(r, so, "params", "signature.params", JSON_ARRAY, "an array", &v));
  size_t n = json_array_size(v);
  if (n > INT32_MAX) return field_err(r, "signature.params", "too many parameters");
  sig->params = pto_calloc(n + 1, sizeof *sig->params);
  if (!sig->params) return oom();
  for (size_t i = 0; i < n; i++) {
    sig->nparams = (int)i + 1;
    PTO_RETURN_IF_ERROR(get_param(r, json_array_get(v, i), (int)i, sig));
  }
  return PTO_OK;
}

/* ---- the field table ------------------------------------------------------------------ */

/* The plain fields of each JSON object, in the order they are written: the writer and the reader
 * both walk these tables, so a new plain field is one row. The signature, the files, the
 * binaries' identities, the devices and the callees have code of their own. */
typedef enum field_type {
  F_STR,    /* char *: a non-empty string */
  F_PATH,   /* char *: a work-dir path (path_problem) */
  F_SYMBOL, /* char *: a C identifier dlsym can find */
  F_INT,    /* int in [lo, hi] */
  F_U64,    /* uint64_t in [0, INT64_MAX] */
  F_HASH,   /* char[PTO_HASH_HEX_LEN + 1]: XXH3-128 as lowercase hex */
  F_CORE,   /* int: PTO_CORE_AIV ("aiv") or PTO_CORE_AIC ("aic") */
} field_type;

typedef struct field {
  const char *key;
  field_type type;
  size_t offset; /* in the struct the object is read into */
  int optional;  /* a string that may be absent (NULL in the struct: not written) */
  int64_t lo, hi;
} field;

#define FIELDS(a) (a), sizeof(a) / sizeof *(a)

static const field k_root_fields[] = {
    {"program", F_STR, offsetof(pto_manifest, program), 0, 0, 0},
    {"platform", F_STR, offsetof(pto_manifest, platform), 0, 0, 0},
    {"opt_level", F_INT, offsetof(pto_manifest, opt_level), 0, 0, 3},
    {"toolchain", F_STR, offsetof(pto_manifest, toolchain), 0, 0, 0},
    {"cache_key", F_HASH, offsetof(pto_manifest, cache_key), 0, 0, 0},
};

/* "orchestration" (then binary, build_id, hid: get_binary). */
static const field k_orch_fields[] = {
    {"name", F_STR, offsetof(pto_manifest, orch_name), 0, 0, 0},
    {"source", F_PATH, offsetof(pto_manifest, orch_source), 0, 0, 0},
    {"entry_symbol", F_SYMBOL, offsetof(pto_manifest, orch_entry_symbol), 1, 0, 0},
};

/* "host" (then binary, build_id, hid: get_binary). */
static const field k_host_fields[] = {
    {"name", F_STR, offsetof(pto_manifest, host_name), 0, 0, 0},
    {"source", F_PATH, offsetof(pto_manifest, host_source), 0, 0, 0},
};

/* Each of "kernels"; id's upper bound is the kernel count, checked where it is known. */
static const field k_kernel_fields[] = {
    {"id", F_INT, offsetof(pto_manifest_kernel, id), 0, 0, INT32_MAX},
    {"name", F_STR, offsetof(pto_manifest_kernel, name), 0, 0, 0},
    {"symbol", F_STR, offsetof(pto_manifest_kernel, symbol), 0, 0, 0},
    {"core_type", F_CORE, offsetof(pto_manifest_kernel, core_type), 0, 0, 0},
    {"scratch_bytes", F_U64, offsetof(pto_manifest_kernel, scratch_bytes), 0, 0, 0},
    {"source", F_PATH, offsetof(pto_manifest_kernel, source), 1, 0, 0},
    {"object", F_PATH, offsetof(pto_manifest_kernel, object), 1, 0, 0},
};

static pto_status read_field(const reader *r, const json_t *obj, const field *f, const char *path,
                             void *at) {
  char b[80];
  json_t *v = NULL;
  int64_t x;
  switch (f->type) {
  case F_STR: return get_str(r, obj, f->key, path, (char **)at);
  case F_PATH: return get_path(r, obj, f->key, path, (char **)at);
  case F_SYMBOL:
    PTO_RETURN_IF_ERROR(get_str(r, obj, f->key, path, (char **)at));
    if (!c_identifier(*(char **)at))
      return field_err(r, path,
                       "'%.200s' is not a C identifier (letters, digits, '_', not starting with a "
                       "digit)",
                       *(char **)at);
    return PTO_OK;
  case F_INT:
    PTO_RETURN_IF_ERROR(get_int(r, obj, f->key, path, f->lo, f->hi, &x));
    *(int *)at = (int)x;
    return PTO_OK;
  case F_U64:
    PTO_RETURN_IF_ERROR(get_int(r, obj, f->key, path, 0, INT64_MAX, &x));
    *(uint64_t *)at = (uint64_t)x;
    return PTO_OK;
  case F_HASH:
    PTO_RETURN_IF_ERROR(get_value(r, obj, f->key, path, JSON_STRING, "a string", &v));
    return get_hash(r, v, path, (char *)at);
  case F_CORE:
    PTO_RETURN_IF_ERROR(get_value(r, obj, f->key, path, JSON_STRING, "\"aiv\" or \"aic\"", &v));
    if (!strcmp(json_string_value(v), "aiv"))
      *(int *)at = PTO_CORE_AIV;
    else if (!strcmp(json_string_value(v), "aic"))
      *(int *)at = PTO_CORE_AIC;
    else
      return field_err(r, path, "expected \"aiv\" or \"aic\", got %s", describe(v, b, sizeof b));
    return PTO_OK;
  }
  return field_err(r, path, "has no reader (internal)");
}

/* Reads the fields of obj into the struct at base; prefix names obj in messages ("" at the root).
 */
static pto_status read_fields(const reader *r, const json_t *obj, const char *prefix,
                              const field *fs, size_t n, void *base) {
  for (size_t i = 0; i < n; i++) {
    const field *f = &fs[i];
    if (f->optional && !json_object_get(obj, f->key)) continue;
    char path[96];
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", f->key);
    PTO_RETURN_IF_ERROR(read_field(r, obj, f, path, (char *)base + f->offset));
  }
  return PTO_OK;
}

static pto_status get_kernel(const reader *r, const json_t *kv, int i, int n,
                             pto_manifest_kernel *k) {
  char path[96], b[80];
  snprintf(path, sizeof path, "kernels[%d]", i);
  if (!json_is_object(kv))
    return field_err(r, path, "expected an object, got %s", describe(kv, b, sizeof b));
  PTO_RETURN_IF_ERROR(read_fields(r, kv, path, FIELDS(k_kernel_fields), k));
  if (k->id >= n)
    return field_err(r, strcat(path, ".id"), "%d is out of range [0, %d]", k->id, n - 1);
  return PTO_OK;
}

static pto_status need_file(const reader *r, const pto_manifest *m, const char *relpath,
                            const char *field) {
  if (pto_manifest_find_file(m, relpath)) return PTO_OK;
  return field_err(r, "files", "no content hash for '%s' (named by '%s')", relpath, field);
}

static pto_status parse_root(const reader *r, const json_t *root, pto_manifest *m) {
  char b[80];
  json_t *v = NULL, *o = NULL;
  if (!json_is_object(root))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: expected a JSON object, got %s",
                           r->file, describe(root, b, sizeof b));
  v = json_object_get(root, "schema");
  if (!v) return field_err(r, "schema", "missing: this is not a pto manifest");
  if (!json_is_string(v) || strcmp(json_string_value(v), PTO_MANIFEST_SCHEMA) != 0)
    return field_err(r, "schema",
                     "expected \"%s\", got %s: written by another version of pto; "
                     "compile the program again",
                     PTO_MANIFEST_SCHEMA, describe(v, b, sizeof b));
  PTO_RETURN_IF_ERROR(read_fields(r, root, "", FIELDS(k_root_fields), m));
  PTO_RETURN_IF_ERROR(get_signature(r, root, &m->sig));

  v = json_object_get(root, "kind");
  if (v && (!json_is_string(v) ||
            (strcmp(json_string_value(v), "host") != 0 && strcmp(json_string_value(v), "l2") != 0)))
    return field_err(r, "kind", "expected \"l2\" or \"host\", got %s", describe(v, b, sizeof b));
  m->is_host = v && strcmp(json_string_value(v), "host") == 0;
  if (m->is_host) {
    PTO_RETURN_IF_ERROR(get_value(r, root, "host", "host", JSON_OBJECT, "an object", &o));
    PTO_RETURN_IF_ERROR(read_fields(r, o, "host", FIELDS(k_host_fields), m));
    PTO_RETURN_IF_ERROR(get_binary(r, o, "host", &m->host));
    PTO_RETURN_IF_ERROR(get_value(r, root, "devices", "devices", JSON_ARRAY, "an array", &v));
    size_t nd = json_array_size(v);
    if (nd < 1 || nd > PTO_MAX_DEVICES)
      return field_err(r, "devices", "expected 1 to %d device ids, got %zu", PTO_MAX_DEVICES, nd);
    m->devices = pto_calloc(nd, sizeof *m->devices);
    if (!m->devices) return oom();
    for (size_t i = 0; i < nd; i++) {
      json_t *d = json_array_get(v, i);
      char path[48];
      snprintf(path, sizeof path, "devices[%zu]", i);
      if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) > INT32_MAX)
        return field_err(r, path, "expected a device id >= 0, got %s", describe(d, b, sizeof b));
      m->devices[i] = (int32_t)json_integer_value(d);
      for (size_t j = 0; j < i; j++)
        if (m->devices[j] == m->devices[i])
          return field_err(r, path, "device %d appears twice", (int)m->devices[i]);
      m->ndevices = (int)i + 1;
    }
    PTO_RETURN_IF_ERROR(get_value(r, root, "callees", "callees", JSON_ARRAY, "an array", &v));
    size_t nc = json_array_size(v);
    if (nc > 4096) return field_err(r, "callees", "too many callees");
    m->callees = pto_calloc(nc + 1, sizeof *m->callees);
    if (!m->callees) return oom();
    for (size_t i = 0; i < nc; i++) {
      json_t *c = json_array_get(v, i);
      char path[48];
      snprintf(path, sizeof path, "callees[%zu]", i);
      if (!json_is_string(c) || strchr(json_string_value(c), '/') ||
          path_problem(json_string_value(c)))
        return field_err(r, path, "expected an orch function name, got %s",
                         describe(c, b, sizeof b));
      m->callees[i] = pto_strdup(json_string_value(c));
      if (!m->callees[i]) return oom();
      m->ncallees = (int)i + 1;
    }
  } else {
    PTO_RETURN_IF_ERROR(
        get_value(r, root, "orchestration", "orchestration", JSON_OBJECT, "an object", &o));
    PTO_RETURN_IF_ERROR(read_fields(r, o, "orchestration", FIELDS(k_orch_fields), m));
    PTO_RETURN_IF_ERROR(get_binary(r, o, "orchestration", &m->orch));
    PTO_RETURN_IF_ERROR(
        get_value(r, root, "kernels_so", "kernels_so", JSON_OBJECT, "an object", &o));
    PTO_RETURN_IF_ERROR(get_binary(r, o, "kernels_so", &m->kernels_so));
  }

  PTO_RETURN_IF_ERROR(get_value(r, root, "kernels", "kernels", JSON_ARRAY, "an array", &v));
  size_t nk = json_array_size(v);
  if (nk > INT32_MAX) return field_err(r, "kernels", "too many kernels");
  m->kernels = pto_calloc(nk + 1, sizeof *m->kernels);
  if (!m->kernels) return oom();
  for (size_t i = 0; i < nk; i++) {
    /* Placed at its id, so kernels[i].id == i: each id must appear once. */
    pto_manifest_kernel k = {0};
    pto_status s = get_kernel(r, json_array_get(v, i), (int)i, (int)nk, &k);
    if (!s && m->kernels[k.id].name) {
      char path[64];
      snprintf(path, sizeof path, "kernels[%zu].id", i);
      s = field_err(r, path, "kernel id %d appears twice", k.id);
    }
    if (s) {
      free(k.name);
      free(k.symbol);
      free(k.source);
      free(k.object);
      return s;
    }
    m->kernels[k.id] = k;
    m->nkernels = (int)nk; /* every slot filled so far is freed by pto_manifest_free */
  }

  PTO_RETURN_IF_ERROR(get_value(r, root, "files", "files", JSON_OBJECT, "an object", &o));
  size_t nf = json_object_size(o);
  m->files = pto_calloc(nf + 1, sizeof *m->files);
  if (!m->files) return oom();
  const char *key;
  json_t *hv;
  json_object_foreach(o, key, hv) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "files.%s", key);
    const char *why = path_problem(key);
    if (why) return field_err(r, "files", "path '%.200s' %s: " PATH_RULE, key, why);
    pto_manifest_file *f = &m->files[m->nfiles];
    PTO_RETURN_IF_ERROR(get_hash(r, hv, path, f->hash));
    f->path = pto_strdup(key);
    if (!f->path) return oom();
    m->nfiles++;
  }

  if (m->is_host) {
    PTO_RETURN_IF_ERROR(need_file(r, m, m->host_source, "host.source"));
    PTO_RETURN_IF_ERROR(need_file(r, m, m->host.path, "host.binary"));
  } else {
    PTO_RETURN_IF_ERROR(need_file(r, m, m->orch_source, "orchestration.source"));
    PTO_RETURN_IF_ERROR(need_file(r, m, m->orch.path, "orchestration.binary"));
    PTO_RETURN_IF_ERROR(need_file(r, m, m->kernels_so.path, "kernels_so.binary"));
  }
  for (int i = 0; i < m->nkernels; i++) {
    char field[64];
    if (m->kernels[i].source) {
      snprintf(field, sizeof field, "kernels[%d].source", i);
      PTO_RETURN_IF_ERROR(need_file(r, m, m->kernels[i].source, field));
    }
    if (m->kernels[i].object) {
      snprintf(field, sizeof field, "kernels[%d].object", i);
      PTO_RETURN_IF_ERROR(need_file(r, m, m->kernels[i].object, field));
    }
  }
  return PTO_OK;
}

pto_status pto_manifest_parse(const char *text, size_t len, const char *name, pto_manifest *out_m) {
  if (!out_m)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_parse: out_m is NULL");
  memset(out_m, 0, sizeof *out_m);
  pto__loader_json_init();
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    /* jansson reports an exhausted heap through the same error (or, when its first allocation
     * fails, no error at all): not the file's fault. */
    if (json_error_code(&jerr) == json_error_out_of_memory || !jerr.text[0])
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory reading the JSON", name);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s:%d:%d: invalid JSON: %s", name,
                           jerr.line, jerr.column, jerr.text);
  }
  reader r = {name};
  pto_status s = parse_root(&r, root, out_m);
  json_decref(root);
  if (s) pto_manifest_free(out_m);
  return s;
}

pto_status pto_manifest_read(const char *dir, pto_manifest *out_m) {
  if (!out_m)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_read: out_m is NULL");
  memset(out_m, 0, sizeof *out_m);
  char *path = NULL;
  if (!(path = pto_strdup_printf("%s/%s", dir, PTO_MANIFEST_FILENAME))) return oom();
  uint8_t *buf = NULL;
  size_t len = 0;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &buf, &len);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    s = pto_status_make(
        PTO_STATUS_NOT_FOUND,
        "%s: no manifest: %s is not a work dir (make one with pto compile PROG.ptir -o %s)", path,
        dir, dir);
  }
  if (!s) s = pto_manifest_parse((const char *)buf, len, path, out_m);
  free(buf);
  free(path);
  return s;
}

/* ---- writing -------------------------------------------------------------------------- */

typedef struct writer {
  int failed;
} writer;

static json_t *jstr(writer *w, const char *s) {
  if (!s) return json_null(); /* validation then names the field */
  json_t *v = json_string(s);
  if (!v) w->failed = 1; /* out of memory, or not UTF-8 */
  return v;
}

static void put(writer *w, json_t *obj, const char *key, json_t *v) {
  if (!obj || !v || json_object_set_new(obj, key, v) != 0) w->failed = 1;
}

static void append(writer *w, json_t *arr, json_t *v) {
  if (!arr || !v || json_array_append_new(arr, v) != 0) w->failed = 1;
}

static json_t *scalar_json(writer *w, const pto_sig_param *p) {
  if (p->bind == PTO_BIND_RUNTIME) return jstr(w, "runtime");
  pto_dtype dt = p->dtype;
  if (dt == PTO_DTYPE_BOOL) return json_boolean(p->value.i != 0);
  if (pto_dtype_is_float(dt)) {
    double f = p->value.f;
    if (isnan(f)) return jstr(w, signbit(f) ? "-nan" : "nan");
    if (isinf(f)) return jstr(w, f > 0 ? "inf" : "-inf");
    return json_real(f);
  }
  if (!pto_dtype_is_signed(dt) && p->value.u > (uint64_t)INT64_MAX) {
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, p->value.u);
    return jstr(w, buf);
  }
  return json_integer((json_int_t)p->value.i);
}

static json_t *binary_json(writer *w, json_t *o, const pto_manifest_binary *b) {
  char hid[17];
  pto_hid_format(b->hid, hid);
  put(w, o, "binary", jstr(w, b->path));
  put(w, o, "build_id", jstr(w, b->build_id));
  put(w, o, "hid", jstr(w, hid));
  return o;
}

/* Writes the fields of the struct at base into obj. */
static void write_fields(writer *w, json_t *obj, const field *fs, size_t n, const void *base) {
  for (size_t i = 0; i < n; i++) {
    const field *f = &fs[i];
    const void *at = (const char *)base + f->offset;
    json_t *v = NULL;
    switch (f->type) {
    case F_STR:
    case F_PATH:
    case F_SYMBOL:
      if (f->optional && !*(char *const *)at) continue;
      v = jstr(w, *(char *const *)at);
      break;
    case F_INT: v = json_integer(*(const int *)at); break;
    case F_U64: v = json_integer((json_int_t) * (const uint64_t *)at); break;
    case F_HASH: v = jstr(w, (const char *)at); break;
    case F_CORE:
      v = jstr(w, *(const int *)at == PTO_CORE_AIC   ? "aic"
                  : *(const int *)at == PTO_CORE_AIV ? "aiv"
                                                     : "?");
      break;
    }
    put(w, obj, f->key, v);
  }
}

static json_t *manifest_json(const pto_manifest *m, writer *w) {
  pto__loader_json_init();
  json_t *root = json_object();
  put(w, root, "schema", jstr(w, PTO_MANIFEST_SCHEMA));
  write_fields(w, root, FIELDS(k_root_fields), m);

  json_t *sig = json_object(), *params = json_array();
  put(w, sig, "entry", jstr(w, m->sig.entry));
  if (m->sig.kernel_entry) put(w, sig, "kernel_entry", jstr(w, m->sig.kernel_entry));
  put(w, sig, "nrets", json_integer(m->sig.nrets));
  for (int i = 0; i < m->sig.nparams; i++) {
    const pto_sig_param *p = &m->sig.params[i];
    json_t *pj = json_object();
    put(w, pj, "name", jstr(w, p->name));
    put(w, pj, "kind", jstr(w, p->is_tensor ? "tensor" : "scalar"));
    put(w, pj, "dtype", jstr(w, pto_dtype_name(p->dtype)));
    if (p->is_tensor) {
      put(w, pj, "direction", jstr(w, (unsigned)p->dir < 3 ? k_dir_names[p->dir] : "?"));
      json_t *dims = json_array();
      for (int d = 0; d < p->rank && d < PTO_MAX_RANK; d++) {
        const pto_sig_dim *dim = &p->dims[d];
        if (dim->sym >= 0 && dim->sym < m->sig.nsyms)
          append(w, dims, jstr(w, m->sig.syms[dim->sym]));
        else if (dim->sym >= 0)
          append(w, dims, json_null()); /* validation names it */
        else
          append(w, dims, json_integer(dim->value));
      }
      put(w, pj, "dims", dims);
    } else {
      put(w, pj, "binding", scalar_json(w, p));
    }
    append(w, params, pj);
  }
  put(w, sig, "params", params);
  put(w, root, "signature", sig);

  if (m->is_host) {
    put(w, root, "kind", jstr(w, "host"));
    json_t *host = json_object();
    write_fields(w, host, FIELDS(k_host_fields), m);
    put(w, root, "host", binary_json(w, host, &m->host));
    json_t *devs = json_array();
    for (int i = 0; i < m->ndevices; i++)
      append(w, devs, json_integer(m->devices[i]));
    put(w, root, "devices", devs);
    json_t *cs = json_array();
    for (int i = 0; i < m->ncallees; i++)
      append(w, cs, jstr(w, m->callees[i]));
    put(w, root, "callees", cs);
  } else {
    json_t *orch = json_object();
    write_fields(w, orch, FIELDS(k_orch_fields), m);
    put(w, root, "orchestration", binary_json(w, orch, &m->orch));
    put(w, root, "kernels_so", binary_json(w, json_object(), &m->kernels_so));
  }

  json_t *kernels = json_array();
  for (int i = 0; i < m->nkernels; i++) {
    json_t *kj = json_object();
    write_fields(w, kj, FIELDS(k_kernel_fields), &m->kernels[i]);
    append(w, kernels, kj);
  }
  put(w, root, "kernels", kernels);

  json_t *files = json_object();
  for (int i = 0; i < m->nfiles; i++) {
    const pto_manifest_file *f = &m->files[i];
    if (!f->path || json_object_get(files, f->path)) {
      w->failed = 2; /* a NULL or repeated path */
      break;
    }
    put(w, files, f->path, jstr(w, f->hash));
  }
  put(w, root, "files", files);
  return root;
}

pto_status pto_manifest_to_json(const pto_manifest *m, char **out_text) {
  if (!m) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_to_json: m is NULL");
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_to_json: out_text is NULL");
  *out_text = NULL;
  writer w = {0};
  json_t *root = manifest_json(m, &w);
  char *text = NULL;
  pto_status s = PTO_OK;
  if (w.failed == 2) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "manifest: field 'files': a path is NULL or listed twice");
    goto done;
  }
  if (w.failed || !root) {
    s = pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "manifest: cannot encode it as JSON (a string is not UTF-8, or out of memory)");
    goto done;
  }
  text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (!text) {
    s = oom();
    goto done;
  }
  /* What we write must read back: the same validation as pto_manifest_read. */
  pto_manifest check;
  s = pto_manifest_parse(text, strlen(text), "manifest being written", &check);
  pto_manifest_free(&check);
  if (s) goto done;
  *out_text = text;
  text = NULL;
done:
  free(text);
  json_decref(root);
  return s;
}

static pto_status write_all(int fd, const char *text, size_t len, const char *path) {
  while (len) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    text += n;
    len -= (size_t)n;
  }
  return PTO_OK;
}

pto_status pto_manifest_write(const char *dir, const pto_manifest *m) {
  if (!dir) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_write: dir is NULL");
  if (!m) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_manifest_write: m is NULL");
  char *text = NULL, *path = NULL, *tmp = NULL;
  int fd = -1;
  pto_status s = pto_manifest_to_json(m, &text);
  if (s) goto done;
  if (!(path = pto_strdup_printf("%s/%s", dir, PTO_MANIFEST_FILENAME))) {
    path = NULL;
    s = oom();
    goto done;
  }
  if (!(tmp = pto_strdup_printf("%s/.%s.XXXXXX", dir, PTO_MANIFEST_FILENAME))) {
    tmp = NULL;
    s = oom();
    goto done;
  }
  fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot create a temporary file in %s: %s", dir,
                        strerror(errno));
    free(tmp);
    tmp = NULL;
    goto done;
  }
  size_t len = strlen(text);
  text[len] = '\n'; /* json_dumps leaves no final newline; its NUL becomes one */
  s = write_all(fd, text, len + 1, tmp);
  if (s) goto done;
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot sync %s: %s", tmp, strerror(errno));
    goto done;
  }
  int rc = close(fd);
  fd = -1;
  if (rc != 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", tmp, strerror(errno));
    goto done;
  }
  if (rename(tmp, path) != 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    goto done;
  }
  free(tmp);
  tmp = NULL;
  /* The rename is durable once the directory is. */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    if (fsync(dfd) != 0)
      s = pto_status_make(PTO_STATUS_IO, "cannot sync %s: %s", dir, strerror(errno));
    close(dfd);
  }
done:
  if (fd >= 0) close(fd);
  if (tmp) unlink(tmp);
  free(tmp);
  free(path);
  free(text);
  return s;
}

/* ---- building ------------------------------------------------------------------------- */

pto_status pto_manifest_add_file(pto_manifest *m, const char *dir, const char *relpath) {
  char *real = NULL;
  char hash[PTO_HASH_HEX_LEN + 1];
  PTO_RETURN_IF_ERROR(pto_manifest_resolve(dir, relpath, &real));
  pto_status s = pto_file_hash(real, hash);
  free(real);
  if (s) return s;
  pto_manifest_file *f = (pto_manifest_file *)pto_manifest_find_file(m, relpath);
  if (!f) {
    int cap = m->nfiles; /* the public struct keeps no capacity: the count is the allocation */
    if (pto_grow_int(&m->files, sizeof *m->files, &cap, (int64_t)m->nfiles + 1)) return oom();
    pto_manifest_file *files = m->files;
    char *p = pto_strdup(relpath);
    if (!p) return oom();
    f = &files[m->nfiles++];
    f->path = p;
  }
  memcpy(f->hash, hash, sizeof hash);
  return PTO_OK;
}

pto_status pto_manifest_binary_set(pto_manifest_binary *b, const char *dir, const char *relpath) {
  char *real = NULL, *p = NULL;
  uint8_t *buf = NULL;
  size_t len = 0, idlen = 0;
  uint8_t id[PTO_BUILD_ID_MAX];
  pto_status s = pto_manifest_resolve(dir, relpath, &real);
  if (s) goto done;
  s = pto_file_read(real, PTO_FILE_MAX_BINARY, &buf, &len);
  if (s) goto done;
  s = pto__loader_build_id_mem(real, buf, len, id, &idlen);
  if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
    pto_status_free(s);
    s = PTO_OK;
  }
  if (s) goto done;
  p = pto_strdup(relpath);
  if (!p) {
    s = oom();
    goto done;
  }
  free(b->path);
  b->path = p;
  pto_hash_hex(id, idlen, b->build_id);
  b->hid = idlen ? pto_hid_from_build_id(id, idlen) : pto_hash_fnv1a64(buf, len);
done:
  free(buf);
  free(real);
  return s;
}
