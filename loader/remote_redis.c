/* The Redis remote cache backend: an entry is the string "pto:<key>" (GET, EXISTS, SET), listed
 * with SCAN. hiredis (Debian's libhiredis-dev) speaks RESP; one connection per process, made on
 * first use, with the timeout on connecting and on every reply. */
#include <ctype.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "cache_internal.h"
#include "remote_internal.h"

/* The longest answer read: an entry's object is at most 1 GiB (remote.c), plus its RESP header.
 * It bounds the bytes of one answer as they arrive, not only one bulk string's length: an array of
 * strings each under it, or of many small items, would otherwise buffer more. */
#define MAX_ANSWER ((size_t)1 << 30 | 64)
/* The most keys one SCAN answer may list (it asks for COUNT 1000; Redis returns about that). */
#define MAX_SCAN_KEYS 65536
/* The most names one listing reads: a million entries of a remote is ~100 GB of binaries. A
 * server whose SCAN never ends (its cursor never 0) stops here, not after hours of rounds. */
#define MAX_LISTED (1 << 20)

typedef struct redis {
  char url[1024];
  pto__redis_url where;
  char password_file[1024]; /* where the password came from ("" when from the URL, or none) */
  struct timeval timeout;
  redisContext *c;
  /* hiredis's reply constructors, with createArray checked against what the command expects:
   * every answer but SCAN's is one value, never an array (hiredis would allocate the element
   * table of any length a server announces, up to 2^31 pointers, and nest arrays 7 deep). */
  redisReplyObjectFunctions fn;
  void *(*create_array)(const redisReadTask *, int);
  int scan;          /* the command in flight is SCAN: [cursor, [keys]] */
  char refused[128]; /* why create_array refused an array ("" when it did not) */
  char error[256];   /* the server's error answer to the last command ("" when none) */
} redis;

static void *create_array(const redisReadTask *task, int elements) {
  redis *r = task->privdata;
  int depth = 0;
  for (const redisReadTask *t = task->parent; t; t = t->parent)
    depth++;
  if (!r->scan)
    snprintf(r->refused, sizeof r->refused, "the answer is an array of %d, not one value",
             elements);
  else if (depth > 1 || (depth == 0 && elements != 2) || elements > MAX_SCAN_KEYS)
    snprintf(r->refused, sizeof r->refused,
             "unexpected answer (an array of %d at depth %d; SCAN answers [cursor, [keys]] of "
             "at most %d keys)",
             elements, depth, MAX_SCAN_KEYS);
  else
    return r->create_array(task, elements);
  return NULL; /* hiredis: an error of the reader, which command() reports as r->refused */
}

/* Decodes the n bytes at s (URL user information: %XX escapes) into out (size bytes). -1 on a
 * bad or NUL escape, or when it does not fit. */
static int percent_decode(const char *s, size_t n, char *out, size_t size) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      if (n - i < 3 || !isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2]))
        return -1;
      char hex[3] = {s[i + 1], s[i + 2], 0};
      c = (char)strtol(hex, NULL, 16);
      if (!c) return -1;
      i += 2;
    }
    if (w + 1 >= size) return -1;
    out[w++] = c;
  }
  out[w] = 0;
  return 0;
}

#define URL_FORM "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]"

pto_status pto__remote_redis_parse_url(const char *raw, const char *shown, pto__redis_url *out) {
  memset(out, 0, sizeof *out);
  const char *p = raw + strlen("redis://"), *url = shown; /* messages name the redacted URL */
  /* The user information ends at the authority's last '@' (as pto_url_password_find reads it):
   * a password with '@' or '/' in it is written %40, %2F. */
  size_t auth = strcspn(p, "/?#");
  const char *at = memrchr(p, '@', auth);
  if (at) {
    const char *colon = memchr(p, ':', (size_t)(at - p));
    const char *user_end = colon ? colon : at;
    if (percent_decode(p, (size_t)(user_end - p), out->user, sizeof out->user) ||
        (colon &&
         percent_decode(colon + 1, (size_t)(at - colon - 1), out->password, sizeof out->password)))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "remote cache '%s': bad user or password: too long, or a %% not "
                             "followed by two hexadecimal digits (or %%00) (" URL_FORM ")",
                             url);
    p = at + 1;
  }
  size_t hn = strcspn(p, ":/");
  if (hn == 0 || hn >= sizeof out->host)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "remote cache '%s': no host (" URL_FORM ")",
                           url);
  memcpy(out->host, p, hn);
  out->host[hn] = 0;
  p += hn;
  out->port = 6379;
  out->db = 0;
  char *end = NULL;
  if (*p == ':') {
    long v = strtol(p + 1, &end, 10);
    if (end == p + 1 || v <= 0 || v > 65535 || (*end && *end != '/'))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "remote cache '%s': bad port (" URL_FORM ")", url);
    out->port = (int)v;
    p = end;
  }
  if (*p == '/' && p[1]) {
    long v = strtol(p + 1, &end, 10);
    if (end == p + 1 || *end || v < 0 || v > 65535)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "remote cache '%s': bad database number (" URL_FORM ")", url);
    out->db = (int)v;
  }
  return PTO_OK;
}

/* The password of PTO_REMOTE_CACHE_PASSWORD_FILE (its first line), for a URL without one. Warned
 * about, as the key file is, when every user of the machine can read or write it. */
static pto_status password_from_file(redis *r) {
  const char *f = getenv("PTO_REMOTE_CACHE_PASSWORD_FILE");
  if (!f || !*f || r->where.password[0]) return PTO_OK;
  uint8_t *data = NULL;
  size_t len = 0;
  static int warned;
  PTO_RETURN_IF_ERROR(pto__remote_read_secret_file("PTO_REMOTE_CACHE_PASSWORD_FILE", f, 1 << 16,
                                                   "any of them can use the remote cache's "
                                                   "password",
                                                   &warned, &data, &len));
  size_t n = 0;
  while (n < len && data[n] != '\n' && data[n] != '\r' && data[n] != 0)
    n++;
  if (n == 0 || n >= sizeof r->where.password) {
    free(data);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           n ? "PTO_REMOTE_CACHE_PASSWORD_FILE %s: its first line is longer than "
                               "%zu bytes"
                             : "PTO_REMOTE_CACHE_PASSWORD_FILE %s: its first line is empty: put "
                               "the remote cache's password in it",
                           f, sizeof r->where.password - 1);
  }
  memcpy(r->where.password, data, n);
  r->where.password[n] = 0;
  free(data);
  snprintf(r->password_file, sizeof r->password_file, "%s", f);
  return PTO_OK;
}

/* After a failed connection: the next command connects again (none follows in practice: the
 * remote is off after a failure). */
static pto_status drop(redis *r, pto_status s) {
  if (r->c) redisFree(r->c);
  r->c = NULL;
  return s;
}

static pto_status command(redis *r, redisReply **out, const char *what, const char *fmt, ...);

static pto_status connect_once(redis *r) {
  if (r->c) return PTO_OK;
  r->c = redisConnectWithTimeout(r->where.host, r->where.port, r->timeout);
  if (!r->c) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", r->url);
  if (r->c->err)
    return drop(r, pto_status_make(PTO_STATUS_IO, "%s: cannot connect: %s", r->url, r->c->errstr));
  if (redisSetTimeout(r->c, r->timeout) != REDIS_OK)
    return drop(
        r, pto_status_make(PTO_STATUS_IO, "%s: cannot set a timeout: %s", r->url, r->c->errstr));
  redisReader *rd = r->c->reader;
  r->fn = *rd->fn;
  r->create_array = r->fn.createArray;
  r->fn.createArray = create_array;
  rd->fn = &r->fn;
  rd->privdata = r;
  redisReply *rep;
  const pto__redis_url *w = &r->where;
  /* AUTH before anything else (SELECT included), through command(): bounded as every answer. */
  if (w->password[0]) {
    pto_status s = w->user[0]
                       ? command(r, &rep, "AUTH", "AUTH %b %b", w->user, strlen(w->user),
                                 w->password, strlen(w->password))
                       : command(r, &rep, "AUTH", "AUTH %b", w->password, strlen(w->password));
    if (s && r->error[0]) {
      /* WRONGPASS, ERR invalid password, ERR AUTH ... called without any password configured:
       * the server's words (they never hold the password), and where the password came from. */
      pto_status_free(s);
      char from[1200];
      if (r->password_file[0])
        snprintf(from, sizeof from, "the password of PTO_REMOTE_CACHE_PASSWORD_FILE %s%s%s",
                 r->password_file, w->user[0] ? " for user " : "", w->user[0] ? w->user : "");
      else
        snprintf(from, sizeof from, "the %s of the URL",
                 w->user[0] ? "user and password" : "password");
      s = pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                          "%s: authentication failed: %s (refused: %s)", r->url, r->error, from);
    }
    if (s) return drop(r, s);
    freeReplyObject(rep);
  }
  if (w->db) {
    pto_status s = command(r, &rep, "SELECT", "SELECT %d", w->db);
    if (s) return drop(r, s);
    int ok = rep->type == REDIS_REPLY_STATUS;
    freeReplyObject(rep);
    if (!ok) return drop(r, pto_status_make(PTO_STATUS_IO, "%s: SELECT %d failed", r->url, w->db));
  }
  return PTO_OK;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The socket timeout becomes what is left until deadline: the timeout bounds the whole command,
 * not each read (a server that sends a byte a second would otherwise never time out). */
static pto_status time_left(redis *r, long long deadline, const char *what) {
  long long ms = deadline - now_ms();
  if (ms <= 0)
    return pto_status_make(PTO_STATUS_IO, "%s: %s: no whole answer within %lld ms", r->url, what,
                           (long long)r->timeout.tv_sec * 1000 + r->timeout.tv_usec / 1000);
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
  if (redisSetTimeout(r->c, tv) != REDIS_OK)
    return pto_status_make(PTO_STATUS_IO, "%s: cannot set a timeout: %s", r->url, r->c->errstr);
  return PTO_OK;
}

/* Sends one command and reads its answer, within the timeout and MAX_ANSWER bytes (hiredis
 * itself would buffer any bulk length a server announces); NULL reply or an error reply is a
 * status naming the command. */
static pto_status command(redis *r, redisReply **out, const char *what, const char *fmt, ...) {
  *out = NULL;
  PTO_RETURN_IF_ERROR(connect_once(r));
  r->scan = !strcmp(what, "SCAN");
  r->refused[0] = 0;
  r->error[0] = 0;
  size_t total = 0; /* bytes of this answer read so far */
  long long deadline = now_ms() + (long long)r->timeout.tv_sec * 1000 + r->timeout.tv_usec / 1000;
  va_list ap;
  va_start(ap, fmt);
  int rc = redisvAppendCommand(r->c, fmt, ap);
  va_end(ap);
  if (rc != REDIS_OK)
    return pto_status_make(PTO_STATUS_IO, "%s: %s: %s", r->url, what, r->c->errstr);
  void *reply = NULL;
  for (int done = 0; !done;) {
    PTO_RETURN_IF_ERROR(time_left(r, deadline, what));
    if (redisBufferWrite(r->c, &done) != REDIS_OK)
      return pto_status_make(PTO_STATUS_IO, "%s: %s: %s", r->url, what, r->c->errstr);
  }
  for (;;) {
    if (redisReaderGetReply(r->c->reader, &reply) != REDIS_OK)
      return pto_status_make(PTO_STATUS_IO, "%s: %s: %s", r->url, what,
                             r->refused[0] ? r->refused : r->c->reader->errstr);
    if (reply) break;
    redisReader *rd = r->c->reader;
    /* A bulk string announced larger than that is refused from its length, as HTTP's is: the
     * reader has taken its '$' and waits for the whole string, its length next in the buffer. */
    if (rd->ridx >= 0 && rd->rstack[rd->ridx].type == REDIS_REPLY_STRING && rd->len > rd->pos &&
        memchr(rd->buf + rd->pos, '\n', rd->len - rd->pos) &&
        strtoull(rd->buf + rd->pos, NULL, 10) > MAX_ANSWER)
      return pto_status_make(PTO_STATUS_IO, "%s: %s: the answer is larger than 1 GiB", r->url,
                             what);
    if (rd->len > MAX_ANSWER || total > MAX_ANSWER)
      return pto_status_make(PTO_STATUS_IO, "%s: %s: the answer is larger than 1 GiB", r->url,
                             what);
    PTO_RETURN_IF_ERROR(time_left(r, deadline, what));
    size_t before = rd->len; /* redisBufferRead appends what it read to the reader's buffer */
    int read_rc = redisBufferRead(r->c);
    total += rd->len - before;
    if (read_rc != REDIS_OK) {
      if (now_ms() >= deadline) PTO_RETURN_IF_ERROR(time_left(r, deadline, what));
      return pto_status_make(PTO_STATUS_IO, "%s: %s: %s", r->url, what,
                             r->c->err ? r->c->errstr : "no answer");
    }
  }
  redisReply *rep = reply;
  if (rep->type == REDIS_REPLY_ERROR) {
    snprintf(r->error, sizeof r->error, "%.*s", (int)rep->len, rep->str);
    freeReplyObject(rep);
    /* NOAUTH: the server requires a password and this URL gives none. */
    if (!strncmp(r->error, "NOAUTH", 6) && !r->where.password[0])
      return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                             "%s: %s: the server requires a password (%s): give it as "
                             "redis://:PASSWORD@HOST[:PORT][/DB] (USER:PASSWORD@ for an ACL "
                             "user), or in the file PTO_REMOTE_CACHE_PASSWORD_FILE names",
                             r->url, what, r->error);
    return pto_status_make(PTO_STATUS_IO, "%s: %s: %s", r->url, what, r->error);
  }
  *out = rep;
  return PTO_OK;
}

static pto_status redis_get(void *impl, const char *key, uint8_t **out, size_t *out_len) {
  redis *r = impl;
  redisReply *rep;
  PTO_RETURN_IF_ERROR(command(r, &rep, "GET", "GET pto:%s", key));
  pto_status s = PTO_OK;
  if (rep->type == REDIS_REPLY_NIL) {
    s = pto_status_make(PTO_STATUS_NOT_FOUND, "%s: no pto:%s", r->url, key);
  } else if (rep->type != REDIS_REPLY_STRING) {
    s = pto_status_make(PTO_STATUS_IO, "%s: GET pto:%s: not a string (type %d)", r->url, key,
                        rep->type);
  } else {
    *out = pto_malloc(rep->len ? rep->len : 1);
    if (!*out) {
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    } else {
      memcpy(*out, rep->str, rep->len);
      *out_len = rep->len;
    }
  }
  freeReplyObject(rep);
  return s;
}

static pto_status redis_head(void *impl, const char *key, int *out_exists) {
  redis *r = impl;
  redisReply *rep;
  PTO_RETURN_IF_ERROR(command(r, &rep, "EXISTS", "EXISTS pto:%s", key));
  pto_status s = PTO_OK;
  if (rep->type != REDIS_REPLY_INTEGER)
    s = pto_status_make(PTO_STATUS_IO, "%s: EXISTS: not an integer", r->url);
  else
    *out_exists = rep->integer > 0;
  freeReplyObject(rep);
  return s;
}

static pto_status redis_put(void *impl, const char *key, const uint8_t *data, size_t len) {
  redis *r = impl;
  redisReply *rep;
  PTO_RETURN_IF_ERROR(command(r, &rep, "SET", "SET pto:%s %b", key, data, len));
  pto_status s = PTO_OK;
  if (rep->type != REDIS_REPLY_STATUS)
    s = pto_status_make(PTO_STATUS_IO, "%s: SET pto:%s: unexpected answer", r->url, key);
  freeReplyObject(rep);
  return s;
}

static pto_status redis_list(void *impl, void (*fn)(void *ctx, const char *key, uint64_t bytes),
                             void *ctx) {
  redis *r = impl;
  char cursor[32] = "0";
  size_t listed = 0;
  for (int round = 0; round < 100000; round++) {
    redisReply *rep;
    PTO_RETURN_IF_ERROR(command(r, &rep, "SCAN", "SCAN %s MATCH pto:* COUNT 1000", cursor));
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_ARRAY) {
      freeReplyObject(rep);
      return pto_status_make(PTO_STATUS_IO, "%s: SCAN: unexpected answer", r->url);
    }
    snprintf(cursor, sizeof cursor, "%.*s", (int)rep->element[0]->len, rep->element[0]->str);
    redisReply *keys = rep->element[1];
    listed += keys->elements;
    if (listed > MAX_LISTED) {
      freeReplyObject(rep);
      return pto_status_make(PTO_STATUS_IO,
                             "%s: SCAN lists more than %d names (or does not end); stopping",
                             r->url, MAX_LISTED);
    }
    pto_status s = PTO_OK;
    for (size_t i = 0; i < keys->elements && !s; i++) {
      redisReply *k = keys->element[i];
      /* Only names pto stores (pto:<32 hex digits>): anything else the server lists is not an
       * entry, and its bytes (escape sequences) are not printed to the terminal. */
      if (k->type != REDIS_REPLY_STRING || k->len != 4 + 32 || memcmp(k->str, "pto:", 4) != 0 ||
          strspn(k->str + 4, "0123456789abcdef") < 32)
        continue;
      char name[40];
      snprintf(name, sizeof name, "%.*s", (int)k->len, k->str);
      redisReply *len;
      s = command(r, &len, "STRLEN", "STRLEN %s", name);
      if (s) break;
      fn(ctx, name + 4,
         len->type == REDIS_REPLY_INTEGER && len->integer > 0 ? (uint64_t)len->integer : 0);
      freeReplyObject(len);
    }
    freeReplyObject(rep);
    if (s) return s;
    if (!strcmp(cursor, "0")) return PTO_OK;
  }
  return pto_status_make(PTO_STATUS_IO, "%s: SCAN does not end", r->url);
}

static void redis_close(void *impl) {
  redis *r = impl;
  if (!r) return;
  if (r->c) redisFree(r->c);
  OPENSSL_cleanse(r, sizeof *r);
  free(r);
}

pto_status pto__remote_redis_open(const char *url, int timeout_ms, pto__remote_backend *out) {
  memset(out, 0, sizeof *out);
  redis *r = pto_calloc(1, sizeof *r);
  if (!r) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_url_redact(url, r->url, sizeof r->url);
  pto_status s = pto__remote_redis_parse_url(url, r->url, &r->where);
  if (!s) s = password_from_file(r);
  if (!s && r->where.user[0] && !r->where.password[0]) {
    /* The user is not shown: redis://secret@h may be a password typed without its ':'. */
    char shown[sizeof r->url];
    const char *auth = strstr(r->url, "://"), *at = auth ? strrchr(auth, '@') : NULL;
    if (auth && at)
      snprintf(shown, sizeof shown, "%.*s***%s", (int)(auth + 3 - r->url), r->url, at);
    else
      snprintf(shown, sizeof shown, "%s", r->url);
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "remote cache '%s': a user without a password (the user is not shown, in "
                        "case it is a password without its ':'): " URL_FORM
                        ", or PTO_REMOTE_CACHE_PASSWORD_FILE=FILE",
                        shown);
  }
  if (s) {
    OPENSSL_cleanse(r, sizeof *r);
    free(r);
    return s;
  }
  r->timeout.tv_sec = timeout_ms / 1000;
  r->timeout.tv_usec = (timeout_ms % 1000) * 1000;
  out->impl = r;
  out->get = redis_get;
  out->head = redis_head;
  out->put = redis_put;
  out->list = redis_list;
  out->close = redis_close;
  return PTO_OK;
}
