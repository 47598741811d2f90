#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

void tu_assert_status_contains(pto_status s, const char *needle, const char *file, int line) {
  if (!s) {
    print_error("%s:%d: expected an error containing '%s', got ok\n", file, line, needle);
    _fail(file, line);
  }
  const char *m = pto_status_message(s);
  if (!strstr(m, needle)) {
    print_error("%s:%d: error '%s' does not contain '%s'\n", file, line, m, needle);
    pto_status_free(s);
    _fail(file, line);
  }
  pto_status_free(s);
}

char *tu_read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    if (out_len) *out_len = (size_t)n;
  }
  return buf;
}

int tu_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

char *tu_mkdtemp(const char *tag) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  size_t n = strlen(tmp) + strlen(tag) + 32;
  char *p = malloc(n);
  if (!p) return NULL;
  snprintf(p, n, "%s/pto-%s-XXXXXX", tmp, tag);
  if (!mkdtemp(p)) {
    free(p);
    return NULL;
  }
  return p;
}

void tu_rmtree(const char *path) {
  size_t n = strlen(path) + 16;
  char *cmd = malloc(n);
  if (!cmd) return;
  snprintf(cmd, n, "rm -rf '%s'", path);
  if (system(cmd) != 0) {
  }
  free(cmd);
}

int tu_run(char **out_output, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *cmd = NULL;
  if (vasprintf(&cmd, fmt, ap) < 0) cmd = NULL;
  va_end(ap);
  if (!cmd) return -1;
  size_t full_len = strlen(cmd) + 16;
  char *full = malloc(full_len);
  if (!full) {
    free(cmd);
    return -1;
  }
  snprintf(full, full_len, "(%s) 2>&1", cmd);
  free(cmd);
  FILE *p = popen(full, "r");
  free(full);
  if (!p) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 1024) buf = realloc(buf, cap *= 2);
  }
  buf[len] = 0;
  int st = pclose(p);
  if (out_output)
    *out_output = buf;
  else
    free(buf);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tu_all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}
