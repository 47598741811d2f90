/* pto: compile, run and inspect tile-kernel programs (docs/cli.md). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pto/base.h"
#include "pto/dist.h"

static const pto_cmd *const k_cmds[] = {&cli_cmd_compile, &cli_cmd_run,     &cli_cmd_bench,
                                        &cli_cmd_fmt,     &cli_cmd_check,   &cli_cmd_build_id,
                                        &cli_cmd_cache,   &cli_cmd_rebuild, &cli_cmd_trace};
enum { NCMDS = sizeof k_cmds / sizeof k_cmds[0] };

static void usage(FILE *f) {
  fprintf(
      f, "usage: pto <command> [options]\n"
         "\n"
         "pto compiles PTIR tile-kernel programs ahead of time, caches the binaries and runs them\n"
         "on the sim platform (a CPU device).\n"
         "\n"
         "commands:\n");
  for (int i = 0; i < NCMDS; i++)
    fprintf(f, "  %-10s %s\n", k_cmds[i]->name, k_cmds[i]->summary);
  fprintf(f, "\n"
             "'pto <command> --help' explains a command, with an example.\n"
             "\n"
             "example:\n"
             "  pto run examples/add.ptir --dim M=100 --check\n");
}

int cli_check_output_path(const char *cmd, const char *flag, const char *path, int is_dir) {
  if (!path || !*path) return cli_usage_error(cmd, "%s: the path is empty", flag);
  struct stat st;
  if (stat(path, &st) == 0) {
    if (is_dir && !S_ISDIR(st.st_mode))
      return cli_usage_error(cmd, "%s %s: exists and is not a directory", flag, path);
    if (!is_dir && S_ISDIR(st.st_mode))
      return cli_usage_error(cmd, "%s %s: is a directory, not a file", flag, path);
    if (!is_dir && !S_ISREG(st.st_mode))
      return cli_usage_error(cmd, "%s %s: exists and is not a regular file", flag, path);
    return 0;
  }
  if (is_dir) return 0; /* created with its parents */
  /* The file's directory must exist: found now, not after a long run. */
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) return 0;
  if (slash == dir)
    slash[1] = 0;
  else
    *slash = 0;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_usage_error(cmd, "%s %s: directory %s does not exist", flag, path, dir);
  return 0;
}

int cli_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void cli_progress_draw(cli_progress *p, int done, int total) {
  int pct = total > 0 ? (int)((long long)done * 100 / total) : 100;
  if (pct == p->last_pct && done != total) return;
  p->last_pct = pct;
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  int fill = pct * WIDTH / 100;
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[WIDTH] = 0;
  fprintf(stderr, "\r%s [%s] %d/%d %s", p->label, bar, done, total, p->unit);
  p->shown = done < total;
  if (!p->shown) fputs("\r\033[K", stderr);
  fflush(stderr);
}

void cli_progress_end(cli_progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = 0;
}

void cli_compile_progress(void *ctx, int done, int total) {
  if (total >= CLI_PROGRESS_MIN_KERNELS) cli_progress_draw(ctx, done, total);
}

int cli_fail(const char *cmd, pto_status s) {
  pto_status_code c = pto_status_code_of(s);
  fprintf(stderr, "pto %s: %s\n", cmd, pto_status_message(s));
  pto_status_free(s);
  return c == PTO_STATUS_INVALID_ARGUMENT || c == PTO_STATUS_NOT_FOUND ? PTO_EXIT_USAGE
                                                                       : PTO_EXIT_FAILED;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "pto %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nsee 'pto %s --help'\n", cmd);
  va_end(ap);
  return PTO_EXIT_USAGE;
}

int cli_wants_help(const pto_cmd *cmd, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) break;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(cmd->usage, stdout);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return PTO_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    if (argc > 2 && strcmp(argv[1], "help") == 0) {
      for (int i = 0; i < NCMDS; i++)
        if (!strcmp(argv[2], k_cmds[i]->name)) {
          fputs(k_cmds[i]->usage, stdout);
          return PTO_EXIT_OK;
        }
      /* Help on a command that does not exist is bad usage, as 'pto frobnicate' is. */
      fprintf(stderr, "pto help: '%s' is not a pto command\n\n", argv[2]);
      usage(stderr);
      return PTO_EXIT_USAGE;
    }
    usage(stdout);
    return PTO_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("pto %s (distributed transports: %s)\n", pto_version(), pto_dist_transports());
    return PTO_EXIT_OK;
  }
  for (int i = 0; i < NCMDS; i++) {
    if (strcmp(argv[1], k_cmds[i]->name) != 0) continue;
    if (cli_wants_help(k_cmds[i], argc - 1, argv + 1)) return PTO_EXIT_OK;
    return k_cmds[i]->run(argc - 1, argv + 1);
  }
  fprintf(stderr, "pto: '%s' is not a pto command\n\n", argv[1]);
  usage(stderr);
  return PTO_EXIT_USAGE;
}
