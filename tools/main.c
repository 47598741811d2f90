/* pto: compile, run and inspect tile-kernel programs (docs/cli.md). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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

/* ---- the files one command reads and writes ----------------------------------------------
 * Every file a command will write, and the program or log it reads, claimed before the job runs:
 * two claims that are one file (one name, two spellings, a symlink or a hard link) would lose a
 * file: the program overwritten by an output, or one output by another. An existing file is known
 * by its device and inode (a symlink followed, as the writers follow it); a file still to be
 * written by its folder's device and inode and its name. The list is global state of the
 * command's single-threaded option checks (one command per process); nothing else touches it. */
typedef struct claim {
  dev_t dev;
  ino_t ino;
  char *name;  /* NULL: an existing file; else its name in the folder dev/ino */
  char *label; /* "--out x.npy", "the program x.ptir" */
  int output;
} claim;
static claim *g_claims;
static int g_nclaims;

const char *cli_folder_of(const char *path, char *dir, size_t cap) {
  snprintf(dir, cap, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) {
    snprintf(dir, cap, ".");
    return NULL;
  }
  const char *base = path + (slash - dir) + 1;
  if (slash == dir)
    slash[1] = 0;
  else
    *slash = 0;
  return base;
}

/* The identity of the file path names (or will name): 0, or -1 when its folder is missing. */
static int file_identity(const char *path, dev_t *dev, ino_t *ino, char **name) {
  struct stat st;
  *name = NULL;
  if (stat(path, &st) == 0) {
    *dev = st.st_dev;
    *ino = st.st_ino;
    return 0;
  }
  char dir[PATH_MAX];
  if (strlen(path) >= sizeof dir) return -1;
  const char *base = cli_folder_of(path, dir, sizeof dir);
  if (stat(dir, &st) != 0) return -1;
  *dev = st.st_dev;
  *ino = st.st_ino;
  *name = strdup(base ? base : path);
  return *name ? 0 : -1;
}

int cli_same_path(const char *a, const char *b) {
  if (!strcmp(a, b)) return 1;
  /* Trailing slashes dropped ("w3/" is "w3" still to be made), then one file by its identity. */
  char pa[PATH_MAX], pb[PATH_MAX];
  const char *in[2] = {a, b};
  char *out[2] = {pa, pb};
  for (int k = 0; k < 2; k++) {
    size_t n = strlen(in[k]);
    while (n > 1 && in[k][n - 1] == '/')
      n--;
    if (!n || n >= PATH_MAX) return 0;
    memcpy(out[k], in[k], n);
    out[k][n] = 0;
  }
  if (!strcmp(pa, pb)) return 1;
  dev_t da, db;
  ino_t ia, ib;
  char *na = NULL, *nb = NULL;
  int same = file_identity(pa, &da, &ia, &na) == 0 && file_identity(pb, &db, &ib, &nb) == 0 &&
             da == db && ia == ib && !na == !nb && (!na || !strcmp(na, nb));
  free(na);
  free(nb);
  return same;
}

int cli_claim_file(const char *cmd, const char *label, const char *path, int output) {
  dev_t dev;
  ino_t ino;
  char *name;
  if (file_identity(path, &dev, &ino, &name) != 0) return 0; /* its folder is checked apart */
  for (int i = 0; i < g_nclaims; i++) {
    const claim *c = &g_claims[i];
    if (c->dev != dev || c->ino != ino || !c->name != !name || (name && strcmp(c->name, name)))
      continue;
    if (!strcmp(c->label, label)) break; /* the same flag and file given twice: one claim */
    if (!c->output && !output) continue; /* read twice: nothing lost */
    free(name);
    if (!c->output || !output)
      return cli_usage_error(cmd, "%s: that file is %s: writing it would lose it",
                             output ? label : c->label, output ? c->label : label);
    return cli_usage_error(cmd, "%s and %s are one file: one would overwrite the other", c->label,
                           label);
  }
  claim *grown = realloc(g_claims, (size_t)(g_nclaims + 1) * sizeof *grown);
  char *copy = strdup(label);
  if (!grown || !copy) {
    free(name);
    free(copy);
    if (grown) g_claims = grown;
    return cli_usage_error(cmd, "out of memory checking %s", label);
  }
  g_claims = grown;
  g_claims[g_nclaims++] = (claim){dev, ino, name, copy, output};
  return 0;
}

/* A work dir's own files, claimed as read: those its compiled.xxh128 lists (every file pto wrote,
 * its callees' included), the list itself and the manifest (a dir without the list). An output
 * over one of them would break the program (--out DIR/manifest.json left a dir that no longer
 * loads; --swimlane DIR/kernels/kernels.so a binary 'rebuilt' from its source next time). */
static int claim_workdir_files(const char *cmd, const char *dir) {
  char path[PATH_MAX], label[2 * PATH_MAX + 32];
  static const char *const k_own[] = {"compiled.xxh128", "manifest.json"};
  for (size_t k = 0; k < sizeof k_own / sizeof k_own[0]; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, k_own[k]);
    snprintf(label, sizeof label, "the program %s (its %s)", dir, k_own[k]);
    if (cli_claim_file(cmd, label, path, 0)) return PTO_EXIT_USAGE;
  }
  snprintf(path, sizeof path, "%s/compiled.xxh128", dir);
  /* Read as a work dir's files are (a regular file, bounded): fopen blocked for good on a FIFO
   * of that name. One that cannot be read lists nothing. */
  uint8_t *text = NULL;
  size_t len = 0;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &text, &len);
  if (s) {
    pto_status_free(s);
    return 0;
  }
  int rc = 0;
  for (char *line = (char *)text, *end = line + len; !rc && line < end;) {
    char *nl = memchr(line, '\n', (size_t)(end - line));
    if (nl) *nl = 0; /* text is NUL-terminated past its end */
    char *next = nl ? nl + 1 : end;
    /* "HASH  RELPATH\n", as xxh128sum writes it */
    char *rel = strstr(line, "  ");
    line = next;
    if (!rel) continue;
    rel += 2;
    if (!*rel || rel[0] == '/' || strstr(rel, "..") || strlen(rel) >= PATH_MAX) continue;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(label, sizeof label, "the program %s (its %s)", dir, rel);
    if (access(path, F_OK) == 0) rc = cli_claim_file(cmd, label, path, 0);
  }
  free(text);
  return rc;
}

int cli_claim_program(const char *cmd, const char *path) {
  char label[PATH_MAX + 16];
  snprintf(label, sizeof label, "the program %s", path);
  if (cli_claim_file(cmd, label, path, 0)) return PTO_EXIT_USAGE;
  return cli_is_dir(path) ? claim_workdir_files(cmd, path) : 0;
}

static int check_output_path(const char *cmd, const char *flag, const char *path, int is_dir,
                             int claim) {
  if (!path || !*path) return cli_usage_error(cmd, "%s: the path is empty", flag);
  /* '-' is stdout to many tools, but not here (pto's report is there): a file or folder named
   * '-' would surprise whoever meant stdout, so it is refused and written ./- when meant. */
  if (!strcmp(path, "-"))
    return cli_usage_error(cmd,
                           "%s -: pto writes this output to a %s, not to stdout (where its "
                           "report goes); write ./- for one named '-'",
                           flag, is_dir ? "folder" : "file");
  char label[PATH_MAX + 64]; /* "--swimlane x.json" */
  snprintf(label, sizeof label, "%s %s", flag, path);
  struct stat st;
  if (stat(path, &st) == 0) {
    if (is_dir && !S_ISDIR(st.st_mode))
      return cli_usage_error(cmd, "%s: exists and is not a directory", label);
    if (!is_dir && S_ISDIR(st.st_mode))
      return cli_usage_error(cmd, "%s: is a directory, not a file", label);
    if (!is_dir && !S_ISREG(st.st_mode))
      return cli_usage_error(cmd, "%s: exists and is not a regular file", label);
    /* Found read-only now, not after a long run (pto_file_replace refuses it then too). */
    if (!is_dir && access(path, W_OK) != 0 && (errno == EACCES || errno == EROFS))
      return cli_usage_error(cmd, "%s: %s: the file is not writable", label, strerror(errno));
    return is_dir || !claim ? 0 : cli_claim_file(cmd, label, path, 1);
  }
  /* Created with its parents; claimed, so that no output file takes its name (--out c=D beside
   * --dump-args D ran the program, then failed writing c over the dump's folder). */
  if (is_dir) return claim ? cli_claim_file(cmd, label, path, 1) : 0;
  /* The file's directory must exist: found now, not after a long run. */
  char dir[PATH_MAX];
  if (!cli_folder_of(path, dir, sizeof dir)) /* in the current folder */
    return claim ? cli_claim_file(cmd, label, path, 1) : 0;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_usage_error(cmd, "%s: directory %s does not exist", label, dir);
  return claim ? cli_claim_file(cmd, label, path, 1) : 0;
}

int cli_check_output_path(const char *cmd, const char *flag, const char *path, int is_dir) {
  return check_output_path(cmd, flag, path, is_dir, 1);
}

int cli_check_output_file_unclaimed(const char *cmd, const char *flag, const char *path) {
  return check_output_path(cmd, flag, path, 0, 0);
}

const char *cli_next_value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) return NULL;
  const char *v = argv[*i + 1];
  if (v[0] == '-' && v[1] && !(v[1] >= '0' && v[1] <= '9')) return NULL; /* -1 is a value */
  return argv[++*i];
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

void cli_compile_waiting(void *ctx, const char *what) {
  cli_progress *p = ctx;
  fprintf(stderr, "\r\033[K%s: waiting for %s", p->label, what);
  fflush(stderr);
  p->shown = 1;
}

static void put_redacted(FILE *f, const char *text);

void cli_put_message(FILE *f, const char *text) { put_redacted(f, text); }

int cli_fail(const char *cmd, pto_status s) {
  pto_status_code c = pto_status_code_of(s);
  fprintf(stderr, "pto %s: ", cmd);
  put_redacted(stderr, pto_status_message(s));
  fputc('\n', stderr);
  pto_status_free(s);
  return c == PTO_STATUS_INVALID_ARGUMENT || c == PTO_STATUS_NOT_FOUND ? PTO_EXIT_USAGE
                                                                       : PTO_EXIT_FAILED;
}

static void print_warning(void *ctx, const char *message) {
  (void)ctx;
  fputs("pto: warning: ", stderr);
  put_redacted(stderr, message);
  fputc('\n', stderr);
}

void cli_launch_warnings(const pto_ir_program *p) {
  pto_status s = pto_ir_launch_warnings(p, print_warning, NULL);
  if (s) pto_status_free(s); /* only out of memory: the warnings are advice */
}

/* n bytes of s to f, a control character (but a newline or tab) as \xNN: messages quote what
 * files hold (a .npy header, a remote's answer, a log line), and an escape sequence there must
 * not drive the reader's terminal. */
static void put_safe(FILE *f, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}

/* text to f as put_safe writes it, with the password of every URL in it
 * (SCHEME://USER:PASSWORD@HOST, or a word USER:PASSWORD@HOST: pto_url_password_find) as ***: a
 * usage error echoes what was typed, and a --remote-cache URL (or any option given one as
 * --opt=URL) may carry one (docs/remote-cache.md). */
static void put_redacted(FILE *f, const char *text) {
  size_t off, len;
  while (pto_url_password_find(text, &off, &len)) {
    put_safe(f, text, off);
    fputs("***", f);
    text += off + len;
  }
  put_safe(f, text, strlen(text));
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = NULL;
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "pto %s: ", cmd);
  put_redacted(stderr, n >= 0 && text ? text : fmt);
  fprintf(stderr, "\nsee 'pto %s --help'\n", cmd);
  free(text);
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

/* SIGINT, SIGTERM, SIGHUP: no temp file of an output being written is left behind, nor the build
 * dir of a compile (and its DIR, where the compile made it); then the signal ends the process as
 * it would have. */
static void on_fatal_signal(int sig) {
  pto_file_remove_temps();
  cli_abandon_compile();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* SIGXFSZ (a file grew past `ulimit -f`): caught, so the write that crossed the limit fails with
 * EFBIG and is reported like a full disk (the old file kept, the temp file removed), where the
 * default action killed pto and left the partial temp file. Tools pto runs get the default again
 * (exec resets a caught signal). */
static void on_file_size_limit(int sig) { (void)sig; }

static void remove_temps_on_signals(void) {
  struct sigaction xfsz;
  if (sigaction(SIGXFSZ, NULL, &xfsz) == 0 && xfsz.sa_handler != SIG_IGN) {
    memset(&xfsz, 0, sizeof xfsz);
    xfsz.sa_handler = on_file_size_limit;
    sigemptyset(&xfsz.sa_mask);
    sigaction(SIGXFSZ, &xfsz, NULL);
  }
  static const int k_sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof k_sigs / sizeof k_sigs[0]; i++) {
    struct sigaction old;
    /* A signal ignored where pto was started (nohup, a shell's background job) stays ignored. */
    if (sigaction(k_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(k_sigs[i], &sa, NULL);
  }
}

int main(int argc, char **argv) {
  remove_temps_on_signals();
  if (argc < 2) {
    usage(stderr);
    return PTO_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    /* 'pto help NAME', and 'pto --help NAME' as git reads it. */
    if (argc > 2 && strcmp(argv[2], "-h") && strcmp(argv[2], "--help") && strcmp(argv[2], "help")) {
      for (int i = 0; i < NCMDS; i++)
        if (!strcmp(argv[2], k_cmds[i]->name)) {
          fputs(k_cmds[i]->usage, stdout);
          return PTO_EXIT_OK;
        }
      /* Help on a command that does not exist is bad usage, as 'pto frobnicate' is. */
      fputs("pto help: '", stderr);
      put_redacted(stderr, argv[2]);
      fputs("' is not a pto command\n\n", stderr);
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
  fputs("pto: '", stderr);
  put_redacted(stderr, argv[1]);
  fputs("' is not a pto command\n\n", stderr);
  usage(stderr);
  return PTO_EXIT_USAGE;
}
