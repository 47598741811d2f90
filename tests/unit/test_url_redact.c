/* The one rule by which pto's messages mask a URL's password (pto_url_password_find and
 * pto_url_redact in base/text.c; the loader's warnings and every message of the pto command go
 * through it): SCHEME://USER:PASSWORD@HOST anywhere, a scheme-less USER:PASSWORD@HOST only as a
 * word of its own, and never a path's bytes. */
#include <string.h>

#include "pto/base.h"
#include "testutil.h"

static const char *redact(const char *text) {
  static char out[512];
  return pto_url_redact(text, out, sizeof out);
}

static void test_url_with_scheme(void **state) {
  assert_string_equal(redact("http://farm:hunter2@h:9/pto"), "http://farm:***@h:9/pto");
  assert_string_equal(redact("redis://:hunter2@127.0.0.1:6379"), "redis://:***@127.0.0.1:6379");
  /* The last '@' ends the user information: a password may hold one. */
  assert_string_equal(redact("https://u:a@b@h/x"), "https://u:***@h/x");
  /* Two URLs in one message, each quoted. */
  assert_string_equal(redact("given twice: 'http://u:p1@h' and 'http://u:p2@h'"),
                      "given twice: 'http://u:***@h' and 'http://u:***@h'");
  /* A password with an unescaped '/' (or '?', '#'), which ends the authority: still masked, up
   * to the URL's last '@'; a port before a path's '@' is no password. */
  assert_string_equal(redact("remote cache 'redis://:pa/ss@127.0.0.1': no host"),
                      "remote cache 'redis://:***@127.0.0.1': no host");
  assert_string_equal(redact("GET http://u:pa/ss@h/x/k: bad URL"),
                      "GET http://u:***@h/x/k: bad URL");
  assert_string_equal(redact("http://u:p?w@h"), "http://u:***@h");
  assert_string_equal(redact("http://h:8080/a@b"), "http://h:8080/a@b");
  /* '[' starts no user: an IPv6 host, a usage text's form. */
  assert_string_equal(redact("http://[::1]:80/x@y (redis://[[USER]:PASSWORD@]HOST[:PORT])"),
                      "http://[::1]:80/x@y (redis://[[USER]:PASSWORD@]HOST[:PORT])");
  /* No password: the bytes stay. */
  assert_string_equal(redact("http://u@h/x a://b@c http://h/a:b@c"),
                      "http://u@h/x a://b@c http://h/a:b@c");
}

static void test_url_without_scheme(void **state) {
  /* A URL typed without its scheme, as a word of its own: whole, after a blank, '=', a quote. */
  assert_string_equal(redact("farm:hunter2@h/x"), "farm:***@h/x");
  assert_string_equal(redact("--remote-cache farm:hunter2@h: not an http:// URL"),
                      "--remote-cache farm:***@h: not an http:// URL");
  assert_string_equal(redact("unknown option '--remote-cache=farm:hunter2@h'"),
                      "unknown option '--remote-cache=farm:***@h'");
  assert_string_equal(redact("remote cache ':hunter2@h'"), "remote cache ':***@h'");
  /* A bare a:b@c reads as a URL too. */
  assert_string_equal(redact("cannot open a:b@c"), "cannot open a:***@c");
}

static void test_text_that_is_not_a_url_keeps_its_bytes(void **state) {
  const char *keep[] = {
      "cannot open /tmp/a:b@c/prog.ptir: No such file", /* a path: '/' before the '@' */
      "cannot open dir/a:b@c",
      "x.ptir:3:4: %x:f32@vec is not a type", /* not user information: '%' without hex */
      "%t:tile[4,4]f32@vec",                  /* '[' is not user information */
      "a:b@ c",                               /* no host */
      "user@host",                            /* no password */
      "mail me at a:b@@",
      "x:y@-z",
      "",
  };
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
    size_t off = 7, len = 7;
    assert_int_equal(pto_url_password_find(keep[i], &off, &len), 0);
    assert_string_equal(redact(keep[i]), keep[i]);
  }
}

static void test_find_reports_the_span(void **state) {
  size_t off = 0, len = 0;
  assert_int_equal(pto_url_password_find("see http://u:secret@h", &off, &len), 1);
  assert_int_equal(off, strlen("see http://u:"));
  assert_int_equal(len, strlen("secret"));
  assert_int_equal(pto_url_password_find("http://u:@h", &off, &len), 1); /* empty password */
  assert_int_equal(len, 0);
}

/* The output is cut short to fit and always terminated; a password is never partly shown. */
static void test_redact_cuts_short(void **state) {
  char out[12];
  assert_string_equal(pto_url_redact("http://u:hunter2@host/long/path", out, sizeof out),
                      "http://u:**");
  assert_string_equal(pto_url_redact("abc", out, 1), "");
  out[0] = 'x';
  pto_url_redact("abc", out, 0); /* nothing written */
  assert_int_equal(out[0], 'x');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_url_with_scheme),
      cmocka_unit_test(test_url_without_scheme),
      cmocka_unit_test(test_text_that_is_not_a_url_keeps_its_bytes),
      cmocka_unit_test(test_find_reports_the_span),
      cmocka_unit_test(test_redact_cuts_short),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
