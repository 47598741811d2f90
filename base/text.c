/* The one growable text buffer (pto/base.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"

static int reserve(pto_text *t, size_t extra) {
  if (t->failed) return 0;
  if (extra >= SIZE_MAX - t->len || pto_grow(&t->data, 1, &t->cap, t->len + extra + 1)) {
    t->failed = 1;
    return 0;
  }
  return 1;
}

void pto_text_put(pto_text *t, const char *s, size_t n) {
  if (!reserve(t, n)) return;
  if (n) memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
}

void pto_text_puts(pto_text *t, const char *s) { pto_text_put(t, s, strlen(s)); }

void pto_text_vprintf(pto_text *t, const char *fmt, va_list ap) {
  if (t->failed) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    t->failed = 1;
    return;
  }
  if (!reserve(t, (size_t)n)) return;
  vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
  t->len += (size_t)n;
}

void pto_text_printf(pto_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_text_vprintf(t, fmt, ap);
  va_end(ap);
}

void pto_text_pad(pto_text *t, size_t n) {
  if (!reserve(t, n)) return;
  memset(t->data + t->len, ' ', n);
  t->len += n;
  t->data[t->len] = 0;
}

char *pto_text_finish(pto_text *t) {
  char *d = t->data;
  int failed = t->failed;
  memset(t, 0, sizeof *t);
  if (failed) {
    free(d);
    return NULL;
  }
  return d ? d : pto_calloc(1, 1);
}

void pto_text_free(pto_text *t) {
  free(t->data);
  memset(t, 0, sizeof *t);
}

/* ---- URL passwords (pto/base.h) ---------------------------------------------------------- */

/* Where a URL's authority ends in a message: a path, query or fragment, a blank or a quote. */
static const char k_authority_end[] = "/?#'\"` \t\r\n";

/* Where a URL's word ends in a message: a blank or a quote. */
static const char k_word_end[] = "'\"` \t\r\n";

static int all_digits(const char *s, const char *e) {
  for (; s < e; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

static int is_word_start(const char *text, const char *p) {
  return p == text || strchr(" \t\r\n'\"`=(", p[-1]) != NULL;
}

/* [s, e) as RFC 3986 user information (unreserved, sub-delims, ':' and %XX escapes). */
static int is_userinfo(const char *s, const char *e) {
  for (; s < e; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '%') {
      if (e - s < 3 || !isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2])) return 0;
      s += 2;
    } else if (!isalnum(c) && !strchr("-._~!$&'()*+,;=:", c)) {
      return 0;
    }
  }
  return 1;
}

/* The password of the authority at auth (n bytes), scheme-less when strict. */
static int authority_password(const char *auth, size_t n, int strict, const char **pw,
                              size_t *len) {
  const char *at = memrchr(auth, '@', n);
  const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
  if (!colon) return 0;
  if (strict &&
      (*auth == '%' || !is_userinfo(auth, at) || !(isalnum((unsigned char)at[1]) || at[1] == '[')))
    return 0;
  *pw = colon + 1;
  *len = (size_t)(at - colon - 1);
  return 1;
}

int pto_url_password_find(const char *text, size_t *out_off, size_t *out_len) {
  for (const char *p = text; *p;) {
    const char *pw = NULL;
    size_t len = 0;
    if (!strncmp(p, "://", 3)) {
      const char *auth = p + 3;
      size_t n = strcspn(auth, k_authority_end);
      /* '[' starts no user name (an IPv6 host, or a usage text's [[USER]:PASSWORD@]HOST). */
      if (*auth != '[' && authority_password(auth, n, 0, &pw, &len)) goto found;
      /* A password typed with an unescaped '/', '?' or '#' ends the authority early
       * (u:pa/ss@h): when what follows the authority's ':' is no port and the URL's word has an
       * '@' further on, everything from that ':' to the word's last '@' is taken as the
       * password. */
      const char *colon = memchr(auth, ':', n);
      const char *at = memrchr(auth, '@', strcspn(auth, k_word_end));
      if (*auth != '[' && colon && at && at > auth + n && !all_digits(colon + 1, auth + n)) {
        pw = colon + 1;
        len = (size_t)(at - pw);
        goto found;
      }
      p = auth + n;
      continue;
    }
    /* A scheme-less word: its authority ends at the first '/', so a path's '@' is not in it. */
    if (is_word_start(text, p) && *p != '@' &&
        authority_password(p, strcspn(p, k_authority_end), 1, &pw, &len))
      goto found;
    p++;
    continue;
  found:
    *out_off = (size_t)(pw - text);
    *out_len = len;
    return 1;
  }
  return 0;
}

/* What fits of k bytes at s into out (n > 0 bytes, *w used), leaving room for the NUL. */
static void put_cut(char *out, size_t n, size_t *w, const char *s, size_t k) {
  if (k > n - 1 - *w) k = n - 1 - *w;
  memcpy(out + *w, s, k);
  *w += k;
}

const char *pto_url_redact(const char *text, char *out, size_t n) {
  if (!n) return out;
  size_t w = 0, off, len;
  const char *p = text;
  while (pto_url_password_find(p, &off, &len)) {
    put_cut(out, n, &w, p, off);
    put_cut(out, n, &w, "***", 3);
    p += off + len;
  }
  put_cut(out, n, &w, p, strlen(p));
  out[w] = 0;
  return out;
}
