/* NumPy .npy reading and writing (see npy.h for the format conventions).
 *
 * The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * It is parsed with a small tokenizer that accepts exactly that grammar (either quote, any
 * whitespace, optional trailing commas), never by evaluating anything. */
#include "npy.h"
#include "pto/base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputs.h" /* CLI_DEVICE_MEMORY_BYTES */

static const uint8_t k_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
/* NPY_MAX_HEADER: the largest header read (numpy writes under 200 bytes; its own reader refuses
 * more than 10000 unless told otherwise). */
enum { GROWTH_AXIS_MAX_DIGITS = 21, ARRAY_ALIGN = 64, NPY_MAX_HEADER = 1 << 20 };

/* descr kinds: 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'V' raw bytes. */
typedef struct npy_kind {
  char kind;
  int size;
  pto_dtype dtype;
} npy_kind;

static const npy_kind k_kinds[] = {
    {'f', 2, PTO_DTYPE_F16}, {'f', 4, PTO_DTYPE_F32}, {'f', 8, PTO_DTYPE_F64},
    {'i', 1, PTO_DTYPE_I8},  {'i', 2, PTO_DTYPE_I16}, {'i', 4, PTO_DTYPE_I32},
    {'i', 8, PTO_DTYPE_I64}, {'u', 1, PTO_DTYPE_U8},  {'u', 2, PTO_DTYPE_U16},
    {'u', 4, PTO_DTYPE_U32}, {'u', 8, PTO_DTYPE_U64}, {'b', 1, PTO_DTYPE_BOOL},
};

const char *pto_npy_descr(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return "|b1";
  case PTO_DTYPE_I8: return "|i1";
  case PTO_DTYPE_I16: return "<i2";
  case PTO_DTYPE_I32: return "<i4";
  case PTO_DTYPE_I64: return "<i8";
  case PTO_DTYPE_U8: return "|u1";
  case PTO_DTYPE_U16: return "<u2";
  case PTO_DTYPE_U32: return "<u4";
  case PTO_DTYPE_U64: return "<u8";
  case PTO_DTYPE_F16: return "<f2";
  case PTO_DTYPE_BF16: return "<u2"; /* raw bits, see npy.h */
  case PTO_DTYPE_F32: return "<f4";
  case PTO_DTYPE_F64: return "<f8";
  case PTO_DTYPE_INDEX: return "<i8";
  default: return "?";
  }
}

static int host_is_big_endian(void) { return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__; }

static void byteswap(uint8_t *p, size_t count, size_t size) {
  if (size < 2) return;
  for (size_t i = 0; i < count; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

static pto_status bad(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pto_status bad(const char *name, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", name, msg);
}

/* ---- header tokenizer ----------------------------------------------------------------- */

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static int eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes into buf. */
static int read_str(cursor *c, char *buf, size_t n) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char q = *c->p++;
  size_t len = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || len + 1 >= n) return 0;
    buf[len++] = *c->p++;
  }
  if (c->p >= c->end) return 0;
  c->p++;
  buf[len] = 0;
  return 1;
}

static int read_word(cursor *c, const char *w) {
  skip_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
    c->p += n;
    return 1;
  }
  return 0;
}

/* A Python tuple of non-negative ints: (), (3,), (3, 4), (3, 4,). Returns the rank or -1;
 * -2 when there are more than max entries. */
static int read_shape(cursor *c, int64_t *shape, int max) {
  if (!eat(c, '(')) return -1;
  int rank = 0;
  for (;;) {
    skip_ws(c);
    if (eat(c, ')')) return rank;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return -1;
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return -1;
      v = v * 10 + (*c->p++ - '0');
    }
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 long */
    if (rank == max) return -2;
    shape[rank++] = v;
    if (eat(c, ',')) continue;
    if (eat(c, ')')) return rank;
    return -1;
  }
}

/* ---- reading -------------------------------------------------------------------------- */

/* What a .npy header says: the array (dtype, rank, shape, count, nbytes; no data) and where its
 * data starts. */
typedef struct npy_header {
  pto_npy_array a;
  size_t dstart, elem; /* the data's offset; the element size */
  int swap;            /* the data is of the other byte order */
} npy_header;

/* Where the header of the image buf (len bytes, at least the first 12 of the file) ends, or 0
 * when buf is not one (the parse below says why). */
static size_t header_end(const uint8_t *buf, size_t len) {
  if (len < 10 || memcmp(buf, k_magic, 6) != 0) return 0;
  if (buf[6] == 1) return 10 + ((size_t)buf[8] | (size_t)buf[9] << 8);
  if ((buf[6] == 2 || buf[6] == 3) && len >= 12)
    return 12 +
           ((size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24);
  return 0;
}

/* Parses the header of buf (len bytes: the header at least). */
static pto_status parse_header(const uint8_t *buf, size_t len, const char *name, int want_dtype,
                               npy_header *h) {
  memset(h, 0, sizeof *h);
  pto_npy_array *out = &h->a;
  if (len < 10 || memcmp(buf, k_magic, 6) != 0)
    return bad(name, "not a .npy file (no \\x93NUMPY magic)");
  int major = buf[6], minor = buf[7];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return bad(name, "truncated .npy header");
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    hstart = 12;
  } else {
    return bad(name, ".npy format version %d.%d is not supported (1.0, 2.0 and 3.0 are)", major,
               minor);
  }
  if (hlen > len - hstart)
    return bad(name, "truncated .npy header (%zu bytes announced, %zu present)", hlen,
               len - hstart);

  cursor c = {(const char *)buf + hstart, (const char *)buf + hstart + hlen};
  char descr[32] = "", key[32];
  int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0, rank = 0;
  int64_t shape[PTO_MAX_RANK] = {0};
  if (!eat(&c, '{'))
    /* The header is not NUL-terminated: print at most its own bytes (found by fuzz_npy). */
    return bad(name, ".npy header is not a dict: %.*s", (int)(hlen < 60 ? hlen : 60),
               (const char *)buf + hstart);
  while (!eat(&c, '}')) {
    if (!read_str(&c, key, sizeof key) || !eat(&c, ':'))
      return bad(name, "malformed .npy header near offset %zu", (size_t)(c.p - (const char *)buf));
    if (!strcmp(key, "descr")) {
      skip_ws(&c);
      if (c.p < c.end && *c.p == '[')
        return bad(name, "structured dtypes are not supported: store one plain array per file");
      if (!read_str(&c, descr, sizeof descr))
        return bad(name, "malformed 'descr' in the .npy header");
      have_descr = 1;
    } else if (!strcmp(key, "fortran_order")) {
      if (read_word(&c, "True"))
        fortran = 1;
      else if (read_word(&c, "False"))
        fortran = 0;
      else
        return bad(name, "malformed 'fortran_order' in the .npy header");
      have_order = 1;
    } else if (!strcmp(key, "shape")) {
      rank = read_shape(&c, shape, PTO_MAX_RANK);
      if (rank == -2) return bad(name, "rank is above pto's maximum of %d", PTO_MAX_RANK);
      if (rank < 0) return bad(name, "malformed 'shape' in the .npy header");
      have_shape = 1;
    } else {
      return bad(name, "unexpected key '%s' in the .npy header", key);
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}')) return bad(name, "malformed .npy header: expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return bad(name, ".npy header lacks '%s'",
               !have_descr   ? "descr"
               : !have_order ? "fortran_order"
                             : "shape");
  if (fortran)
    return bad(name, "fortran_order is True: pto reads C-order arrays only; save "
                     "numpy.ascontiguousarray(a) instead");

  /* descr: byte order, kind, size */
  char order = descr[0], kind = descr[1];
  char *endp = NULL;
  long size = (order && kind) ? strtol(descr + 2, &endp, 10) : 0;
  if (!strchr("<>|=", order) || !order || !kind || !endp || *endp || size <= 0)
    return bad(name, "dtype '%s' is not supported", descr);
  int dt = -1;
  for (size_t i = 0; i < sizeof k_kinds / sizeof *k_kinds; i++)
    if (k_kinds[i].kind == kind && k_kinds[i].size == size) dt = (int)k_kinds[i].dtype;
  if (kind == 'V' && size == 2 && want_dtype == PTO_DTYPE_BF16) dt = PTO_DTYPE_BF16;
  if (dt == PTO_DTYPE_U16 && want_dtype == PTO_DTYPE_BF16) dt = PTO_DTYPE_BF16;
  if (dt == PTO_DTYPE_I64 && want_dtype == PTO_DTYPE_INDEX) dt = PTO_DTYPE_INDEX;
  if (dt < 0) {
    if (kind == 'V' && size == 2)
      return bad(name,
                 "dtype '%s' (raw 2-byte values) reads only as bf16, and bf16 was not expected",
                 descr);
    return bad(name,
               "dtype '%s' is not a pto dtype (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)",
               descr);
  }
  int swap = size > 1 &&
             ((order == '>' && !host_is_big_endian()) || (order == '<' && host_is_big_endian()));

  size_t count = 1, nbytes;
  for (int i = 0; i < rank; i++)
    if (__builtin_mul_overflow(count, (size_t)shape[i], &count))
      return bad(name, "shape is too large");
  if (__builtin_mul_overflow(count, (size_t)size, &nbytes)) return bad(name, "shape is too large");
  out->dtype = (pto_dtype)dt;
  out->rank = rank;
  memcpy(out->shape, shape, sizeof shape);
  out->count = count;
  out->nbytes = nbytes;
  h->dstart = hstart + hlen;
  h->elem = (size_t)size;
  h->swap = swap;
  return PTO_OK;
}

/* The data of h, read: host byte order, bools as 0 or 1. */
static void finish_data(npy_header *h) {
  if (h->swap) byteswap(h->a.data, h->a.count, h->elem);
  if (h->a.dtype == PTO_DTYPE_BOOL)
    for (size_t i = 0; i < h->a.count; i++)
      ((uint8_t *)h->a.data)[i] = ((uint8_t *)h->a.data)[i] != 0;
}

static pto_status truncated(const char *name, size_t nbytes, uint64_t have) {
  return bad(name, "truncated: the shape needs %zu bytes of data, the file has %llu", nbytes,
             (unsigned long long)have);
}

pto_status pto_npy_parse(const uint8_t *buf, size_t len, const char *name, int want_dtype,
                         pto_npy_array *out) {
  memset(out, 0, sizeof *out);
  npy_header h;
  PTO_RETURN_IF_ERROR(parse_header(buf, len, name, want_dtype, &h));
  if (len - h.dstart < h.a.nbytes) return truncated(name, h.a.nbytes, len - h.dstart);
  h.a.data = malloc(h.a.nbytes ? h.a.nbytes : 1);
  if (!h.a.data)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", name,
                           h.a.nbytes);
  memcpy(h.a.data, buf + h.dstart, h.a.nbytes);
  finish_data(&h);
  *out = h.a;
  return PTO_OK;
}

static void shape_text(int rank, const int64_t *shape, char *buf, size_t n) {
  size_t at = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < rank && at < n; i++) {
    if (shape && shape[i] >= 0)
      at += (size_t)snprintf(buf + at, n - at, "%s%" PRId64, i ? ", " : "", shape[i]);
    else
      at += (size_t)snprintf(buf + at, n - at, "%s?", i ? ", " : "");
  }
  if (at < n) snprintf(buf + at, n - at, "]");
}

pto_status pto_npy_check(const pto_npy_array *a, const char *name, pto_dtype dtype, int rank,
                         const int64_t *shape) {
  if (a->dtype != dtype)
    return bad(name, "dtype %s ('%s'), expected %s ('%s')%s", pto_dtype_name(a->dtype),
               pto_npy_descr(a->dtype), pto_dtype_name(dtype), pto_npy_descr(dtype),
               dtype == PTO_DTYPE_BF16 ? ": a bf16 file holds the raw bfloat16 bits as '<u2' "
                                         "(numpy: a.view(np.uint16)) or '|V2' (ml_dtypes)"
                                       : "");
  if (rank < 0) return PTO_OK;
  int ok = a->rank == rank;
  for (int i = 0; ok && shape && i < rank; i++)
    ok = shape[i] < 0 || shape[i] == a->shape[i];
  if (!ok) {
    char got[160], want[160];
    shape_text(a->rank, a->shape, got, sizeof got);
    if (shape)
      shape_text(rank, shape, want, sizeof want);
    else
      snprintf(want, sizeof want, "rank %d", rank);
    return bad(name, "shape %s, expected %s", got, want);
  }
  return PTO_OK;
}

/* Reads n bytes at off of fd into buf; the count read (short at the end of the file), or -1. */
static ssize_t read_at(int fd, uint64_t off, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

/* The header first, then the data it announces and no more: a file is not read whole (bytes
 * after the array, as a second numpy.save to the same file leaves, cost nothing, and a header
 * announcing more than max_data bytes is refused before any is read). check: the expected
 * dtype, rank and shape, checked on the header (pto_npy_check) when rank >= -1. */
static pto_status read_npy(const char *path, int want_dtype, int check, pto_dtype dtype, int rank,
                           const int64_t *shape, uint64_t max_data, pto_npy_array *out) {
  memset(out, 0, sizeof *out);
  int fd = -1;
  uint64_t size = 0;
  PTO_RETURN_IF_ERROR(pto_file_open_regular(path, PTO_FILE_MAX_DATA, &fd, &size));
  uint8_t pre[12];
  uint8_t *hbuf = NULL;
  npy_header h;
  memset(&h, 0, sizeof h);
  pto_status s = PTO_OK;
  ssize_t n = read_at(fd, 0, pre, sizeof pre);
  if (n < 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
    goto done;
  }
  size_t hend = header_end(pre, (size_t)n);
  if (hend > NPY_MAX_HEADER) {
    /* Refused from its length, whatever the file holds: a header announcing more than the file
     * has (a 3 GiB file announcing 4 GiB) is not read either to say it is cut short. */
    size_t hstart = pre[6] == 1 ? 10 : 12;
    if ((uint64_t)hend <= size)
      s = bad(path, "the .npy header is %zu bytes, more than the %d that pto reads", hend,
              NPY_MAX_HEADER);
    else
      s = bad(path, "truncated .npy header (%zu bytes announced, %llu present)", hend - hstart,
              (unsigned long long)(size - hstart));
    goto done;
  }
  /* No header end (not a .npy): the 12 bytes read, which the parse refuses by name. */
  size_t hlen = hend ? (size_t)((uint64_t)hend < size ? (uint64_t)hend : size) : (size_t)n;
  hbuf = malloc(hlen ? hlen : 1);
  if (!hbuf) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
    goto done;
  }
  n = read_at(fd, 0, hbuf, hlen);
  if (n < 0) {
    s = pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
    goto done;
  }
  s = parse_header(hbuf, (size_t)n, path, want_dtype, &h);
  if (!s && check) s = pto_npy_check(&h.a, path, dtype, rank, shape);
  if (s) goto done;
  if (h.a.nbytes > max_data) {
    s = bad(path,
            "the array is %zu bytes, more than the %llu bytes of device memory that hold the "
            "run's tensors: it can never be placed",
            h.a.nbytes, (unsigned long long)max_data);
    goto done;
  }
  if (size - h.dstart < h.a.nbytes) {
    s = truncated(path, h.a.nbytes, size - h.dstart);
    goto done;
  }
  h.a.data = malloc(h.a.nbytes ? h.a.nbytes : 1);
  if (!h.a.data) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", path,
                        h.a.nbytes);
    goto done;
  }
  n = read_at(fd, h.dstart, h.a.data, h.a.nbytes);
  if (n < 0)
    s = pto_status_make(PTO_STATUS_IO, "cannot read %s: %s", path, strerror(errno));
  else if ((size_t)n < h.a.nbytes) /* shrunk since fstat */
    s = truncated(path, h.a.nbytes, (uint64_t)n);
  if (s) goto done;
  finish_data(&h);
  *out = h.a;
  h.a.data = NULL;
done:
  free(h.a.data);
  free(hbuf);
  close(fd);
  return s;
}

pto_status pto_npy_read_expect(const char *path, pto_dtype dtype, int rank, const int64_t *shape,
                               pto_npy_array *out) {
  return read_npy(path, (int)dtype, 1, dtype, rank, shape, CLI_DEVICE_MEMORY_BYTES, out);
}

pto_status pto_npy_read(const char *path, pto_npy_array *out) {
  return read_npy(path, -1, 0, PTO_DTYPE_F32, -1, NULL, PTO_FILE_MAX_DATA, out);
}

void pto_npy_array_free(pto_npy_array *a) {
  if (!a) return;
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* ---- writing -------------------------------------------------------------------------- */

pto_status pto_npy_write(const char *path, pto_dtype dtype, int rank, const int64_t *shape,
                         const void *data) {
  if ((unsigned)dtype >= PTO_DTYPE_COUNT)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: dtype %d is not a pto dtype", path,
                           (int)dtype);
  if (rank < 0 || rank > PTO_MAX_RANK)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", path, rank,
                           PTO_MAX_RANK);
  size_t size = pto_dtype_size(dtype), count = 1, nbytes;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: negative extent %" PRId64 " in dim %d", path, shape[i], i);
    if (__builtin_mul_overflow(count, (size_t)shape[i], &count))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: shape is too large", path);
  }
  if (__builtin_mul_overflow(count, size, &nbytes))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: shape is too large", path);

  /* numpy.save's header, byte for byte (numpy/lib/format.py: _write_array_header). */
  char header[256];
  size_t h =
      (size_t)snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                       pto_npy_descr(dtype));
  for (int i = 0; i < rank; i++)
    h += (size_t)snprintf(header + h, sizeof header - h, "%s%" PRId64, i ? ", " : "", shape[i]);
  h += (size_t)snprintf(header + h, sizeof header - h, "%s), }", rank == 1 ? "," : "");
  if (rank > 0) {
    char first[24];
    int digits = snprintf(first, sizeof first, "%" PRId64, shape[0]);
    for (int i = digits; i < GROWTH_AXIS_MAX_DIGITS; i++)
      header[h++] = ' ';
  }
  size_t hlen = h + 1; /* with the final newline */
  size_t pad = ARRAY_ALIGN - ((6 + 2 + 2 + hlen) % ARRAY_ALIGN);
  size_t total = hlen + pad;
  uint8_t prefix[10];
  memcpy(prefix, k_magic, 6);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix[8] = (uint8_t)(total & 0xff);
  prefix[9] = (uint8_t)(total >> 8);

  const void *out = data;
  void *swapped = NULL;
  if (host_is_big_endian() && size > 1 && nbytes) {
    swapped = malloc(nbytes);
    if (!swapped) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
    memcpy(swapped, data, nbytes);
    byteswap(swapped, count, size);
    out = swapped;
  }
  /* Through a temp file and a rename: a full disk never leaves a truncated .npy. */
  char spaces[ARRAY_ALIGN + 1];
  memset(spaces, ' ', pad);
  spaces[pad] = '\n';
  const void *bufs[4] = {prefix, header, spaces, out};
  size_t lens[4] = {sizeof prefix, h, pad + 1, nbytes};
  pto_status s = pto_file_replace(path, bufs, lens, 4);
  free(swapped);
  return s;
}
