/* The HTTP remote cache backend: an entry is the object URL/<key>, read with GET, asked for with
 * HEAD and written with PUT, as ccache's HTTP storage does; nginx's WebDAV module (dav_methods
 * PUT), a plain object store or any server with those three methods serves it. libcurl does the
 * HTTP; every request is bounded by the timeout (connect and transfer together). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_internal.h"

#define MAX_BODY (UINT64_C(1) << 30)

typedef struct http {
  char *base;       /* the URL without a trailing '/' */
  char shown[1024]; /* base as messages name it: its password redacted */
  long timeout_ms;
} http;

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init;
static void curl_init(void) { g_curl_init = curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct body {
  uint8_t *data;
  size_t len, cap;
  int too_big, oom;
} body;

static size_t on_data(char *ptr, size_t size, size_t n, void *ctx) {
  body *b = ctx;
  size_t add = size * n;
  if (b->len + add > MAX_BODY) {
    b->too_big = 1;
    return 0;
  }
  if (pto_grow(&b->data, 1, &b->cap, b->len + add)) { /* len + add <= MAX_BODY: no wrap */
    b->oom = 1;
    return 0;
  }
  memcpy(b->data + b->len, ptr, add);
  b->len += add;
  return add;
}

typedef struct upload {
  const uint8_t *data;
  size_t len, off;
} upload;

static size_t on_read(char *ptr, size_t size, size_t n, void *ctx) {
  upload *u = ctx;
  size_t take = size * n;
  if (take > u->len - u->off) take = u->len - u->off;
  memcpy(ptr, u->data + u->off, take);
  u->off += take;
  return take;
}

/* One request: method GET, HEAD or PUT on base/key. *out_code is the HTTP status. */
static pto_status request(http *h, const char *method, const char *key, body *got,
                          const uint8_t *data, size_t len, long *out_code) {
  pthread_once(&g_curl_once, curl_init);
  char full[2048], url[2048]; /* url: for messages */
  snprintf(full, sizeof full, "%s/%s", h->base, key);
  snprintf(url, sizeof url, "%s/%s", h->shown, key);
  if (g_curl_init != CURLE_OK)
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: libcurl does not start: %s", url,
                           curl_easy_strerror(g_curl_init));
  CURL *c = curl_easy_init();
  if (!c) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", url);
  char err[CURL_ERROR_SIZE] = "";
  upload up = {data, len, 0};
  curl_easy_setopt(c, CURLOPT_URL, full);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->timeout_ms);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!strcmp(method, "HEAD")) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (!strcmp(method, "PUT")) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &up);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, got);
    /* An answer whose Content-Length says it is larger than any entry is refused from its
     * header, not after buffering 1 GiB of it (on_data's bound covers one without a length). */
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)MAX_BODY);
  }
  CURLcode rc = curl_easy_perform(c);
  *out_code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, out_code);
  curl_easy_cleanup(c);
  if (got && got->oom) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", url);
  if (got && (got->too_big || rc == CURLE_FILESIZE_EXCEEDED))
    return pto_status_make(PTO_STATUS_IO, "%s %s: the answer is larger than 1 GiB", method, url);
  if (rc != CURLE_OK)
    return pto_status_make(PTO_STATUS_IO, "%s %s: %s", method, url,
                           *err ? err : curl_easy_strerror(rc));
  return PTO_OK;
}

static pto_status http_get(void *impl, const char *key, uint8_t **out, size_t *out_len) {
  http *h = impl;
  body b = {0};
  long code = 0;
  pto_status s = request(h, "GET", key, &b, NULL, 0, &code);
  if (!s && code == 404) s = pto_status_make(PTO_STATUS_NOT_FOUND, "%s/%s: 404", h->shown, key);
  if (!s && code != 200)
    s = pto_status_make(PTO_STATUS_IO, "GET %s/%s: HTTP status %ld", h->shown, key, code);
  if (s) {
    free(b.data);
    return s;
  }
  *out = b.data;
  *out_len = b.len;
  return PTO_OK;
}

static pto_status http_head(void *impl, const char *key, int *out_exists) {
  http *h = impl;
  long code = 0;
  PTO_RETURN_IF_ERROR(request(h, "HEAD", key, NULL, NULL, 0, &code));
  if (code != 200 && code != 404)
    return pto_status_make(PTO_STATUS_IO, "HEAD %s/%s: HTTP status %ld", h->shown, key, code);
  *out_exists = code == 200;
  return PTO_OK;
}

static pto_status http_put(void *impl, const char *key, const uint8_t *data, size_t len) {
  http *h = impl;
  long code = 0;
  PTO_RETURN_IF_ERROR(request(h, "PUT", key, NULL, data, len, &code));
  if (code < 200 || code > 299)
    return pto_status_make(PTO_STATUS_IO, "PUT %s/%s: HTTP status %ld", h->shown, key, code);
  return PTO_OK;
}

static void http_close(void *impl) {
  http *h = impl;
  if (!h) return;
  free(h->base);
  free(h);
}

pto_status pto__remote_http_open(const char *url, int timeout_ms, pto__remote_backend *out) {
  memset(out, 0, sizeof *out);
  /* Objects are URL/<key>: after a query or a fragment the key would land in it, and a server
   * that ignores queries (nginx's WebDAV) would file every entry as one object. */
  if (strpbrk(url, "?#")) {
    char shown[1024];
    pto_url_redact(url, shown, sizeof shown);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "remote cache '%s': a query or fragment ('?', '#') has no place in it "
                           "(objects are named URL/<key>)",
                           shown);
  }
  http *h = pto_calloc(1, sizeof *h);
  if (h) h->base = pto_strdup(url);
  if (!h || !h->base) {
    free(h);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  size_t n = strlen(h->base);
  while (n > 0 && h->base[n - 1] == '/')
    h->base[--n] = 0;
  pto_url_redact(h->base, h->shown, sizeof h->shown);
  h->timeout_ms = timeout_ms;
  out->impl = h;
  out->get = http_get;
  out->head = http_head;
  out->put = http_put;
  out->list = NULL; /* plain HTTP has no listing */
  out->close = http_close;
  return PTO_OK;
}
