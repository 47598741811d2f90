/* The remote cache level (loader/remote.c) without servers: a remote that is down, or that
 * accepts connections and never answers, costs one bounded request, one warning and one counted
 * error, then is off for the process (nothing more is asked, warned or counted); URLs that are
 * not usable are warned about with what is wrong; pto_cache_set_remote wins over
 * $PTO_REMOTE_CACHE; listing says when there is no remote or it cannot list. The servers' side
 * (stores, fetches, signatures, tampering) is tests/e2e/remote_cache.sh. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/cache.h"
#include "remote_internal.h"
#include "testutil.h"

static char g_warnings[8192];
static int g_nwarnings;
static char *g_root;

static void capture_warning(void *ctx, const char *msg) {
  (void)ctx;
  g_nwarnings++;
  strncat(g_warnings, msg, sizeof g_warnings - strlen(g_warnings) - 2);
  strcat(g_warnings, "\n");
}

static const char k_key[] = "0123456789abcdef0123456789abcdef";
static const char k_key_text[] = "format=pto-cache-key/3\ntoolchain.pto=0\nprogram=1\n";

static int setup(void **state) {
  (void)state;
  g_warnings[0] = 0;
  g_nwarnings = 0;
  pto_loader_set_warning_hook(capture_warning, NULL);
  unsetenv("PTO_REMOTE_CACHE");
  unsetenv("PTO_REMOTE_CACHE_TIMEOUT_MS");
  unsetenv("PTO_REMOTE_CACHE_KEY");
  unsetenv("PTO_REMOTE_CACHE_KEY_FILE");
  unsetenv("PTO_REMOTE_CACHE_PASSWORD_FILE");
  assert_int_equal(pto_cache_set_remote(NULL), PTO_OK);
  pto__loader_remote_reset();
  g_root = tu_mkdtemp("remote");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  pto_loader_set_warning_hook(NULL, NULL);
  tu_rmtree(g_root);
  free(g_root);
  return 0;
}

/* A loopback socket bound to a free port; listening (connections queue, nothing answers) or
 * closed again (the port refuses connections). */
static int loopback_socket(int listening, int *out_port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *out_port = ntohs(a.sin_port);
  if (listening) {
    assert_int_equal(listen(fd, 4), 0);
    return fd;
  }
  close(fd);
  return -1;
}

static uint64_t count(pto__loader_counter c) {
  uint64_t v[PTO__COUNT_N];
  assert_int_equal(pto__loader_counts_read(g_root, v), PTO_OK);
  return v[c];
}

/* The first failure warns once, counts once and turns the remote off: later fetches and stores
 * neither ask, warn nor count. */
static void expect_off_after_one_failure(const char *url) {
  assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
  assert_int_equal(g_nwarnings, 1);
  assert_non_null(strstr(g_warnings, url));
  assert_non_null(strstr(g_warnings, "not using it for the rest of this process"));
  assert_int_equal(count(PTO__COUNT_REMOTE_ERRORS), 1);
  assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
  pto__loader_remote_store(g_root, g_root, k_key, k_key_text);
  assert_int_equal(g_nwarnings, 1);
  assert_int_equal(count(PTO__COUNT_REMOTE_ERRORS), 1);
  assert_int_equal(count(PTO__COUNT_REMOTE_MISSES), 0);
}

static void test_remote_down_http(void **state) {
  (void)state;
  int port;
  loopback_socket(0, &port);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/cache", port);
  setenv("PTO_REMOTE_CACHE", url, 1);
  expect_off_after_one_failure(url);
  assert_non_null(strstr(g_warnings, "GET "));
}

static void test_remote_down_redis(void **state) {
  (void)state;
  int port;
  loopback_socket(0, &port);
  char url[128];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d/2", port);
  setenv("PTO_REMOTE_CACHE", url, 1);
  expect_off_after_one_failure(url);
  assert_non_null(strstr(g_warnings, "cannot connect"));
}

/* A server that accepts connections (the kernel queues them) and never answers: one request,
 * bounded by PTO_REMOTE_CACHE_TIMEOUT_MS, then off. */
static void test_remote_silent_servers_time_out(void **state) {
  (void)state;
  setenv("PTO_REMOTE_CACHE_TIMEOUT_MS", "200", 1);
  const char *schemes[] = {"http://127.0.0.1:%d/c", "redis://127.0.0.1:%d"};
  for (int i = 0; i < 2; i++) {
    int port;
    int fd = loopback_socket(1, &port);
    char url[128];
    snprintf(url, sizeof url, schemes[i], port);
    assert_int_equal(pto_cache_set_remote(url), PTO_OK);
    pto__loader_remote_reset();
    g_warnings[0] = 0;
    g_nwarnings = 0;
    assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
    close(fd);
    assert_int_equal(g_nwarnings, 1);
    assert_non_null(strstr(g_warnings, url));
    assert_int_equal(count(PTO__COUNT_REMOTE_ERRORS), (uint64_t)i + 1);
  }
}

static void test_remote_unusable_urls(void **state) {
  (void)state;
  static const struct {
    const char *url, *why;
  } cases[] = {
      {"ftp://example/c", "not an http://, https:// or redis:// URL"},
      {"redis://", "no host (redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])"},
      {"redis://h:99999", "bad port"},
      {"redis://h:12x", "bad port"},
      {"redis://h:6379/x", "bad database number"},
      {"redis://:pw@", "no host"},
      {"redis://u%zz:pw@h", "bad user or password"},
      {"redis://u:p%4@h", "bad user or password"},
      {"redis://u:p%00q@h", "bad user or password"},
      {"redis://farm@h", "a user without a password"},
      {"redis://farm:@h", "a user without a password"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("PTO_REMOTE_CACHE", cases[i].url, 1);
    pto__loader_remote_reset();
    g_warnings[0] = 0;
    g_nwarnings = 0;
    assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
    assert_int_equal(g_nwarnings, 1);
    if (!strstr(g_warnings, cases[i].why)) fail_msg("%s: %s", cases[i].url, g_warnings);
    assert_non_null(strstr(g_warnings, "not using the remote cache"));
  }
  /* A lone user may be a password typed without its ':', and a password with an unescaped '/'
   * ends the authority early: neither is shown. */
  static const char *const hidden[] = {"redis://s3cret@h", "redis://:pa/s3cret@h"};
  for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++) {
    setenv("PTO_REMOTE_CACHE", hidden[i], 1);
    pto__loader_remote_reset();
    g_warnings[0] = 0;
    g_nwarnings = 0;
    assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
    assert_int_equal(g_nwarnings, 1);
    if (strstr(g_warnings, "s3cret")) fail_msg("%s: %s", hidden[i], g_warnings);
  }
  /* A configuration error, not the remote's. */
  assert_int_equal(count(PTO__COUNT_REMOTE_ERRORS), 0);
}

/* The schemes the command checks --remote-cache and PTO_REMOTE_CACHE against
 * (pto_cache_remote_url_supported) are the ones the cache opens: a URL accepted by one is opened
 * by the other (it fails to connect, not as "not an ... URL"), and one refused by one is refused
 * by the other. The command kept a copy of the list, and so did this file's opener. */
static void test_remote_url_schemes_are_one_list(void **state) {
  (void)state;
  int port;
  loopback_socket(0, &port); /* a free port: a connection is refused at once */
  static const char *const urls[] = {
      "http://127.0.0.1:%d/c", "https://127.0.0.1:%d/c", "redis://127.0.0.1:%d",
      "ftp://127.0.0.1:%d/c",  "HTTP://127.0.0.1:%d/c",  "redis:/127.0.0.1:%d",
      "http:/127.0.0.1:%d/c",  "127.0.0.1:%d",           "file:///tmp/%d",
  };
  int accepted = 0;
  for (size_t i = 0; i < sizeof urls / sizeof *urls; i++) {
    char url[128];
    snprintf(url, sizeof url, urls[i], port);
    int yes = pto_cache_remote_url_supported(url);
    accepted += yes;
    setenv("PTO_REMOTE_CACHE", url, 1);
    pto__loader_remote_reset();
    g_warnings[0] = 0;
    g_nwarnings = 0;
    assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
    assert_int_equal(g_nwarnings, 1);
    int refused = strstr(g_warnings, "not an http://, https:// or redis:// URL") != NULL;
    if (refused == yes) fail_msg("%s: supported=%d but the cache said: %s", url, yes, g_warnings);
  }
  assert_int_equal(accepted, 3);
  assert_false(pto_cache_remote_url_supported(NULL));
  assert_false(pto_cache_remote_url_supported(""));
  assert_string_equal(pto_cache_remote_schemes(), "http://, https:// or redis://");
}

static void test_remote_timeout_variable_checked(void **state) {
  (void)state;
  int port;
  loopback_socket(0, &port);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/c", port);
  setenv("PTO_REMOTE_CACHE", url, 1);
  setenv("PTO_REMOTE_CACHE_TIMEOUT_MS", "soon", 1);
  assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
  assert_non_null(strstr(g_warnings, "PTO_REMOTE_CACHE_TIMEOUT_MS='soon' is not a number"));
}

static void test_remote_set_remote_wins_over_environment(void **state) {
  (void)state;
  int port;
  loopback_socket(0, &port);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/override", port);
  setenv("PTO_REMOTE_CACHE", "ftp://not-this-one", 1);
  assert_int_equal(pto_cache_set_remote(url), PTO_OK);
  char got[256];
  pto__loader_remote_url(got, sizeof got);
  assert_string_equal(got, url);
  expect_off_after_one_failure(url);
  assert_null(strstr(g_warnings, "ftp://"));
}

static void test_remote_list_errors(void **state) {
  (void)state;
  pto_status s = pto_cache_remote_list(NULL, NULL);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "no remote cache: set PTO_REMOTE_CACHE=URL");
  setenv("PTO_REMOTE_CACHE", "http://127.0.0.1:9/c", 1);
  pto__loader_remote_reset();
  s = pto_cache_remote_list(NULL, NULL);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_UNIMPLEMENTED);
  assert_status_contains(s, "cannot list its entries");
}

/* The loader's own messages (a warning to the hook, a status of pto_cache_remote_list) never
 * carry a URL's password, with a scheme or without one (a URL typed without it). */
static void test_remote_messages_mask_passwords(void **state) {
  (void)state;
  static const struct {
    const char *url, *shown;
  } cases[] = {
      {"farm:hunter2@h/x", "farm:***@h/x"},
      {"ftp://farm:hunter2@h/", "ftp://farm:***@h/"},
      {"redis://:hunter2@h:99999", "redis://:***@h:99999"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("PTO_REMOTE_CACHE", cases[i].url, 1);
    pto__loader_remote_reset();
    g_warnings[0] = 0;
    assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
    assert_non_null(strstr(g_warnings, cases[i].shown));
    assert_null(strstr(g_warnings, "hunter2"));
    char got[256];
    pto__loader_remote_url(got, sizeof got);
    assert_string_equal(got, cases[i].shown);
    pto_status s = pto_cache_remote_list(NULL, NULL);
    assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
    assert_null(strstr(pto_status_message(s), "hunter2"));
    pto_status_free(s);
  }
}

/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]: the user information ends at the authority's last
 * '@'; USER and PASSWORD have their %XX escapes decoded; an empty USER is none. */
static void test_remote_redis_url_parts(void **state) {
  (void)state;
  static const struct {
    const char *url, *host, *user, *password;
    int port, db;
  } cases[] = {
      {"redis://h", "h", "", "", 6379, 0},
      {"redis://h/", "h", "", "", 6379, 0},
      {"redis://h:7000/4", "h", "", "", 7000, 4},
      {"redis://:pw@h", "h", "", "pw", 6379, 0},
      {"redis://:pw@h/2", "h", "", "pw", 6379, 2},
      {"redis://ci:pw@10.0.0.1:6380/1", "10.0.0.1", "ci", "pw", 6380, 1},
      {"redis://c%69:p%40ss%2Fw%3Ad%25@h", "h", "ci", "p@ss/w:d%", 6379, 0},
      {"redis://:a@b@h:1", "h", "", "a@b", 1, 0},
      {"redis://:a:b@h", "h", "", "a:b", 6379, 0},
      {"redis://farm@h", "h", "farm", "", 6379, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    pto__redis_url u;
    pto_status s = pto__remote_redis_parse_url(cases[i].url, "shown", &u);
    if (s) fail_msg("%s: %s", cases[i].url, pto_status_message(s));
    assert_string_equal(u.host, cases[i].host);
    assert_string_equal(u.user, cases[i].user);
    assert_string_equal(u.password, cases[i].password);
    assert_int_equal(u.port, cases[i].port);
    assert_int_equal(u.db, cases[i].db);
  }
  /* A bad escape is named with the URL as shown (its password masked), never as given. */
  pto__redis_url u;
  pto_status s = pto__remote_redis_parse_url("redis://u:hunter2%G1@h", "redis://u:***@h", &u);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "'redis://u:***@h': bad user or password");
  s = pto__remote_redis_parse_url("redis://u:hunter2%G1@h", "redis://u:***@h", &u);
  assert_null(strstr(pto_status_message(s), "hunter2"));
  pto_status_free(s);
}

/* PTO_REMOTE_CACHE_PASSWORD_FILE: a file that is missing or whose first line is empty is a
 * configuration error naming the file (the remote is not used), never its content; a file every
 * user can read is warned about and used. */
static void test_remote_redis_password_file(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/password", g_root);
  setenv("PTO_REMOTE_CACHE", "redis://127.0.0.1:9/1", 1);
  setenv("PTO_REMOTE_CACHE_PASSWORD_FILE", path, 1);
  pto__remote_backend b;
  pto_status s = pto__remote_redis_open("redis://127.0.0.1:9/1", 100, &b);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_status_contains(s, "PTO_REMOTE_CACHE_PASSWORD_FILE: ");
  s = NULL;

  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("\nhunter2\n", f);
  fclose(f);
  chmod(path, 0600);
  s = pto__remote_redis_open("redis://127.0.0.1:9/1", 100, &b);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "its first line is empty");
  s = NULL;
  /* Through the loader: one warning, the remote off, not a remote error. */
  assert_int_equal(pto__loader_remote_fetch(g_root, k_key, k_key_text), 0);
  assert_int_equal(g_nwarnings, 1);
  assert_non_null(strstr(g_warnings, "its first line is empty"));
  assert_null(strstr(g_warnings, "hunter2"));

  f = fopen(path, "w");
  assert_non_null(f);
  fputs("hunter2\r\nsecond line\n", f);
  fclose(f);
  chmod(path, 0644);
  g_warnings[0] = 0;
  g_nwarnings = 0;
  s = pto__remote_redis_open("redis://127.0.0.1:9/1", 100, &b);
  assert_int_equal(s, PTO_OK);
  b.close(b.impl);
  assert_int_equal(g_nwarnings, 1);
  assert_non_null(strstr(g_warnings, "can be read or written by every user (mode 0644)"));
  assert_null(strstr(g_warnings, "hunter2"));
  /* The URL's own password wins: the file is not read (a missing one is no error then). */
  setenv("PTO_REMOTE_CACHE_PASSWORD_FILE", "/nonexistent/password", 1);
  s = pto__remote_redis_open("redis://:pw@127.0.0.1:9/1", 100, &b);
  assert_int_equal(s, PTO_OK);
  b.close(b.impl);
}

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

/* A whole entry (the remote fuzzer's seed: an unsigned entry of examples/add.ptir) passes the
 * checks; cut short at every line boundary (and a byte either side of one) and at each of its
 * last 256 bytes (the end and signature lines), each copy in a buffer of exactly that length, it
 * is refused as malformed (DATA_LOSS: the entry compiled here then replaces it), never loaded.
 * With a key, the whole unsigned entry is refused for its signature (FAILED_PRECONDITION: not
 * replaced), and so it is with a key file that is missing. */
static void test_remote_entry_cut_at_every_boundary(void **state) {
  (void)state;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/fuzz/seeds/remote/add_entry", PTO_SOURCE_DIR);
  size_t len = 0;
  char *buf = tu_read_file(path, &len);
  assert_non_null(buf);
  const char *rk = "0123456789abcdef0123456789abcdef";
  pto_status s = pto__loader_remote_check_object((const uint8_t *)buf, len, rk);
  if (s) fail_msg("the whole entry: %s", pto_status_message(s));
  int cuts = 0;
  for (size_t cut = 0; cut < len; cut++) {
    int near_nl = buf[cut] == '\n' || (cut > 0 && buf[cut - 1] == '\n') ||
                  (cut + 1 < len && buf[cut + 1] == '\n');
    if (!near_nl && cut + 256 < len) continue;
    uint8_t *part = malloc(cut ? cut : 1);
    assert_non_null(part);
    memcpy(part, buf, cut);
    s = pto__loader_remote_check_object(part, cut, rk);
    free(part);
    if (!s) fail_msg("the entry cut to %zu of %zu bytes was accepted", cut, len);
    if (pto_status_code_of(s) != PTO_STATUS_DATA_LOSS)
      fail_msg("cut to %zu bytes: %s", cut, pto_status_message(s));
    pto_status_free(s);
    cuts++;
  }
  assert_true(cuts > 300);
  setenv("PTO_REMOTE_CACHE_KEY", "s3cret", 1);
  s = pto__loader_remote_check_object((const uint8_t *)buf, len, rk);
  assert_non_null(s);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_FAILED_PRECONDITION);
  assert_non_null(strstr(pto_status_message(s), "the entry is not signed"));
  pto_status_free(s);
  unsetenv("PTO_REMOTE_CACHE_KEY");
  /* A key file that is not there fails closed: the entry is refused (not as malformed, so the
   * remote's entry is not replaced), never taken as "no key", which would load it unchecked. */
  setenv("PTO_REMOTE_CACHE_KEY_FILE", "/nonexistent/pto-remote.key", 1);
  s = pto__loader_remote_check_object((const uint8_t *)buf, len, rk);
  assert_non_null(s);
  assert_int_not_equal(pto_status_code_of(s), PTO_STATUS_DATA_LOSS);
  assert_non_null(strstr(pto_status_message(s), "/nonexistent/pto-remote.key"));
  pto_status_free(s);
  unsetenv("PTO_REMOTE_CACHE_KEY_FILE");
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_remote_entry_cut_at_every_boundary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_down_http, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_down_redis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_redis_url_parts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_redis_password_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_silent_servers_time_out, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_unusable_urls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_url_schemes_are_one_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_timeout_variable_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_set_remote_wins_over_environment, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_remote_list_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remote_messages_mask_passwords, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
