/* pto compile, and the compile options shared with run and bench. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
#include "pto/base.h"
#include "pto/cache.h"
#include "pto/manifest.h"

void cli_compile_args_init(cli_compile_args *a) {
  memset(a, 0, sizeof *a);
  pto_compile_options_init(&a->opt);
  a->opt.scalars = a->scalars;
  a->opt.samples = a->samples;
  a->progress = (cli_progress){"compile", "kernels", -1, 0};
  if (isatty(STDERR_FILENO)) {
    a->opt.progress = cli_compile_progress;
    a->opt.waiting = cli_compile_waiting;
    a->opt.progress_ctx = &a->progress;
  }
}

int cli_split_name_value(const char *cmd, const char *flag, char *text, char **out_name,
                         char **out_value) {
  char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1]) {
    cli_usage_error(cmd, "%s %s: expected NAME=VALUE", flag, text);
    return -1;
  }
  *eq = 0;
  *out_name = text;
  *out_value = eq + 1;
  return 0;
}

/* An integer as pto_scalar_parse reads one: '-', then decimal digits or 0x and hex digits, and
 * nothing else; 1 with its sign and magnitude, else 0. */
static int int_text(const char *text, int *neg, unsigned long long *mag) {
  const char *p = text + (*text == '-');
  int base = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
  p += base == 16 ? 2 : 0;
  if (!*p || !strchr(base == 16 ? "0123456789abcdefABCDEF" : "0123456789", *p)) return 0;
  char *end;
  errno = 0;
  *mag = strtoull(p, &end, base);
  *neg = *text == '-'; /* -0 is not 0: a float scalar keeps its sign */
  return !*end && errno != ERANGE;
}

int cli_same_value(const char *a, const char *b) {
  if (!strcmp(a, b)) return 1;
  int na, nb;
  unsigned long long ma, mb;
  /* --in's random:SEED: one seed however spelled (random:5 and random:05), decimal digits only. */
  if (!strncmp(a, "random:", 7) && !strncmp(b, "random:", 7)) {
    a += 7;
    b += 7;
    return a[0] >= '0' && a[0] <= '9' && b[0] >= '0' && b[0] <= '9' && int_text(a, &na, &ma) &&
           int_text(b, &nb, &mb) && ma == mb && !strchr(a, 'x') && !strchr(b, 'x');
  }
  if (int_text(a, &na, &ma) && int_text(b, &nb, &mb)) return na == nb && ma == mb; /* exactly */
  /* Else as a float scalar reads them (strtod, no leading blank): 1.0 is 1 and 1e3 is 1000. */
  if ((unsigned char)a[0] <= ' ' || (unsigned char)b[0] <= ' ') return 0;
  char *ea, *eb;
  double x = strtod(a, &ea), y = strtod(b, &eb);
  if (ea == a || *ea || eb == b || *eb) return 0;
  return (x == y || (isnan(x) && isnan(y))) && !signbit(x) == !signbit(y); /* -0.0 is not 0.0 */
}

/* NAME=VALUE into list[*n]; the same NAME given twice with another value is a usage error (which
 * one would win is not what the command line says), given twice with the same value (however
 * spelled: cli_same_value) one binding, the first. */
static int add_binding(const char *cmd, const char *flag, char *text, pto_binding *list, int *n) {
  char *name, *value;
  if (cli_split_name_value(cmd, flag, text, &name, &value)) return -1;
  for (int k = 0; k < *n; k++) {
    if (strcmp(list[k].name, name) != 0) continue;
    if (cli_same_value(list[k].value, value)) return 0;
    cli_usage_error(cmd, "%s %s: given twice, as %s=%s and %s=%s", flag, name, name, list[k].value,
                    name, value);
    return -1;
  }
  if (*n == 64) {
    cli_usage_error(cmd, "too many %s options", flag);
    return -1;
  }
  list[*n].name = name;
  list[*n].value = value;
  ++*n;
  return 0;
}

int cli_set_once_path(const char *cmd, const char *flag, const char **slot, const char *value) {
  if (*slot && cli_same_path(*slot, value)) return 0;
  return cli_set_once(cmd, flag, slot, value);
}

int cli_set_once(const char *cmd, const char *flag, const char **slot, const char *value) {
  if (*slot && strcmp(*slot, value) != 0) {
    /* cli_usage_error masks a URL's password (two --remote-cache URLs). */
    cli_usage_error(cmd, "%s given twice: '%s' and '%s'", flag, *slot, value);
    return -1;
  }
  *slot = value;
  return 0;
}

/* The value of an option written "--opt VALUE" or "--opt=VALUE". */
static char *option_value(const char *cmd, const char *name, int argc, char **argv, int *i) {
  size_t n = strlen(name);
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  const char *v = cli_next_value(argc, argv, i);
  if (!v) cli_usage_error(cmd, "%s needs a value", name);
  return (char *)v;
}

static int is_opt(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

int cli_parse_compile_option(const char *cmd, cli_compile_args *a, int argc, char **argv, int *i) {
  char *arg = argv[*i];
  if (!strncmp(arg, "-D", 2)) {
    /* -D NAME=VALUE, -DNAME=VALUE (as a C compiler takes it) or -D=NAME=VALUE (as every flag
     * with a value takes it after '='). */
    char *v = arg[2] == '=' ? arg + 3 : arg[2] ? arg + 2 : (char *)cli_next_value(argc, argv, i);
    if (!v) return cli_usage_error(cmd, "-D needs NAME=VALUE or NAME=runtime"), -1;
    if (add_binding(cmd, "-D", v, a->scalars, &a->opt.nscalars)) return -1;
    return 1;
  }
  if (is_opt(arg, "--arg")) {
    char *v = option_value(cmd, "--arg", argc, argv, i);
    if (!v) return -1;
    if (add_binding(cmd, "--arg", v, a->samples, &a->opt.nsamples)) return -1;
    return 1;
  }
  if (is_opt(arg, "--entry")) {
    char *v = option_value(cmd, "--entry", argc, argv, i);
    if (!v) return -1;
    if (!*v || !strcmp(v, "@")) return cli_usage_error(cmd, "--entry needs a function name"), -1;
    if (cli_set_once(cmd, "--entry", &a->opt.entry, v[0] == '@' ? v + 1 : v)) return -1;
    return 1;
  }
  if (is_opt(arg, "--platform")) {
    char *v = option_value(cmd, "--platform", argc, argv, i);
    if (!v) return -1;
    if (strcmp(v, "sim") != 0)
      return cli_usage_error(cmd, "--platform %s: unknown platform; the platforms are: sim", v), -1;
    a->opt.platform = v;
    return 1;
  }
  if (arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3' && !arg[3]) {
    a->opt.opt_level = arg[2] - '0';
    return 1;
  }
  if (arg[0] == '-' && arg[1] == 'O')
    return cli_usage_error(cmd, "%s: the optimization levels are -O0, -O1, -O2 and -O3", arg), -1;
  if (is_opt(arg, "--depfile")) {
    char *v = option_value(cmd, "--depfile", argc, argv, i);
    if (!v) return -1;
    if (cli_set_once_path(cmd, "--depfile", &a->depfile, v)) return -1;
    return 1;
  }
  if (is_opt(arg, "--devices")) {
    char *v = option_value(cmd, "--devices", argc, argv, i);
    if (!v) return -1;
    char err[256];
    int32_t set[PTO_MAX_DEVICES];
    int n = cli_parse_devices(v, set, err, sizeof err);
    if (n < 0) return cli_usage_error(cmd, "%s", err), -1;
    /* Given twice, the same set however spelled ("2", "02" and "0,1") counts once. */
    if (a->devices_text && (n != a->opt.ndevices || memcmp(set, a->devices, sizeof *set * n)))
      return cli_usage_error(cmd, "--devices given twice: '%s' and '%s'", a->devices_text, v), -1;
    if (a->devices_text) return 1;
    a->devices_text = v;
    memcpy(a->devices, set, sizeof *set * n);
    a->opt.devices = a->devices;
    a->opt.ndevices = n;
    return 1;
  }
  if (!strcmp(arg, "--no-cache")) {
    a->no_cache = 1;
    return 1;
  }
  if (is_opt(arg, "--remote-cache")) {
    char *v = option_value(cmd, "--remote-cache", argc, argv, i);
    if (!v) return -1;
    if (cli_check_remote_url(cmd, v)) return -1;
    if (cli_set_once(cmd, "--remote-cache", &a->remote_cache, v)) return -1;
    pto_status s = pto_cache_set_remote(v);
    if (s) return cli_fail(cmd, s), -1;
    return 1;
  }
  return 0;
}

int cli_check_compile_args(const char *cmd, const cli_compile_args *a) {
  if (a->no_cache && a->remote_cache)
    return cli_usage_error(cmd,
                           "--remote-cache %s with --no-cache: --no-cache compiles without "
                           "either cache level",
                           a->remote_cache);
  return 0;
}

/* A PTO_REMOTE_CACHE that is no URL of a remote cache warns at once, naming the variable, and is
 * not used: the cache reads it only on a local miss, so a program cached here ran with a typo in
 * the variable unnoticed. Taken out of the environment, so the cache does not warn again. */
static void check_remote_env(const cli_compile_args *a) {
  const char *url = getenv("PTO_REMOTE_CACHE");
  if (a->no_cache || a->remote_cache || !url || !*url || pto_cache_remote_url_supported(url))
    return;
  char text[1280];
  snprintf(text, sizeof text,
           "pto: warning: PTO_REMOTE_CACHE: remote cache '%.1024s': not an %s URL; not using the "
           "remote cache\n",
           url, pto_cache_remote_schemes());
  cli_put_message(stderr, text);
  unsetenv("PTO_REMOTE_CACHE");
}

int cli_check_remote_url(const char *cmd, const char *url) {
  if (!pto_cache_remote_url_supported(url))
    return cli_usage_error(cmd, "--remote-cache %s: not an %s URL", url,
                           pto_cache_remote_schemes());
  return 0;
}

/* --devices given with a work dir: the same device set as the dir's, else refused. */
static pto_status check_dir_devices(const char *dir, const pto_program *p,
                                    const cli_compile_args *a) {
  if (!pto_program_is_host(p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "--devices %s: applies to programs with a host entry; %s holds an L2 "
                           "program",
                           a->devices_text, dir);
  int n = pto_program_device_count(p), same = n == a->opt.ndevices;
  char set[256] = "";
  for (int r = 0, k = 0; r < n && k < (int)sizeof set - 12; r++) {
    int32_t id = pto_program_device_id(p, r);
    same = same && id == a->devices[r];
    k += snprintf(set + k, sizeof set - (size_t)k, "%s%d", r ? "," : "", (int)id);
  }
  if (same) return PTO_OK;
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "--devices %s: the work dir %s was compiled for devices %s (pto compile "
                         "it again with --devices %s to change them)",
                         a->devices_text, dir, set, a->devices_text);
}

pto_status cli_load_program(const char *prog, cli_compile_args *a, pto_program **out_program,
                            pto_ir_program **out_ir) {
  *out_program = NULL;
  if (out_ir) *out_ir = NULL;
  if (cli_is_dir(prog)) {
    /* Not while a pto compile -o moves another program in (the lock ends with the load: the
     * loaded files stay mapped when a later compile replaces them). */
    int lock = cli_lock_dir("run", prog, 0);
    /* Stale parts (hand-edited sources) are rebuilt first, so a stale binary is never loaded;
     * with PTO_NO_REBUILD=1 loading a stale dir fails instead, naming the edited file. */
    const char *no_rebuild = getenv("PTO_NO_REBUILD");
    pto_status s = PTO_OK;
    /* Another value (yes, true) would rebuild in silence, the opposite of what it asks for. */
    if (no_rebuild && *no_rebuild && strcmp(no_rebuild, "0") && strcmp(no_rebuild, "1")) {
      if (lock >= 0) close(lock);
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "PTO_NO_REBUILD is '%s': expected 1 (refuse to load a stale work "
                             "dir) or 0 (rebuild its stale parts, the default)",
                             no_rebuild);
    }
    if (!no_rebuild || strcmp(no_rebuild, "1") != 0) {
      int rebuilt = 0;
      s = pto_program_rebuild_dir(prog, &rebuilt);
      if (rebuilt)
        fprintf(stderr, "pto: %s: rebuilt %d stale file%s\n", prog, rebuilt,
                rebuilt == 1 ? "" : "s");
    }
    if (!s) s = pto_program_load_dir(prog, out_program);
    if (lock >= 0) close(lock);
    if (s) return s;
    /* --devices fixes the device set on run and bench too (docs/cli.md); a work dir was built for
     * one, so --devices may only repeat it. */
    if (a->opt.devices) s = check_dir_devices(prog, *out_program, a);
    if (s) {
      pto_program_release(*out_program);
      *out_program = NULL;
      return s;
    }
    if (out_ir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/program.ptir", prog);
      s = pto_ir_parse_file(path, out_ir);
      if (s) {
        pto_program_release(*out_program);
        *out_program = NULL;
        return s;
      }
    }
    return PTO_OK;
  }
  pto_ir_program *ir = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_parse_file(prog, &ir));
  pto_status s = pto_ir_verify(ir);
  check_remote_env(a);
  if (!s)
    s = a->no_cache ? pto_compile_uncached(ir, &a->opt, out_program)
                    : pto_compile(ir, &a->opt, out_program);
  cli_progress_end(&a->progress);
  if (s || !out_ir)
    pto_ir_program_destroy(ir);
  else
    *out_ir = ir;
  return s;
}

/* Whether Make treats c specially in a depfile path, so that it is written with a backslash. */
static int depfile_special(char c) { return c == ' ' || c == '\t' || c == '#' || c == ':'; }

/* A path in a Make/Ninja depfile, as gcc -MD writes one: space, tab, '#' and ':' escaped with a
 * backslash (and the backslashes right before one doubled), '$' doubled. */
static void depfile_path(pto_text *t, const char *p) {
  for (; *p; p++) {
    if (*p == '\\') {
      size_t n = strspn(p, "\\");
      for (size_t i = 0; i < (depfile_special(p[n]) ? 2 * n : n); i++)
        pto_text_puts(t, "\\");
      p += n - 1;
      continue;
    }
    if (depfile_special(*p)) pto_text_puts(t, "\\");
    if (*p == '$') pto_text_puts(t, "$");
    pto_text_put(t, p, 1);
  }
}

/* A path that no depfile can hold (Make has no escape for a line break): usage error, 2. */
static int check_depfile_path(const char *cmd, const char *what, const char *p) {
  if (!strpbrk(p, "\n\r")) return 0;
  return cli_usage_error(cmd,
                         "--depfile: the %s path '%s' holds a line break, which a Make/Ninja "
                         "depfile cannot express: rename it, or compile without --depfile",
                         what, p);
}

/* --depfile inside DIR (DIR itself or a folder below it, under any spelling or symlink): usage
 * error, 2. It could be one of the files the compile writes there (--depfile DIR/manifest.json
 * replaced the manifest, leaving a dir that no longer loads), and any other file in DIR is one
 * pto did not write, so the next compile into DIR would refuse it. */
static int check_depfile_outside(const char *cmd, const char *depfile, const char *dir) {
  char folder[PATH_MAX], real_dir[PATH_MAX], real_folder[PATH_MAX];
  (void)cli_folder_of(depfile, folder, sizeof folder);
  /* A DIR still to be made holds nothing yet; the depfile's folder exists (checked before). */
  if (!realpath(dir, real_dir) || !realpath(folder, real_folder)) return 0;
  size_t n = strlen(real_dir);
  if (strncmp(real_folder, real_dir, n) != 0 ||
      (real_folder[n] != 0 && real_folder[n] != '/' && strcmp(real_dir, "/") != 0))
    return 0;
  return cli_usage_error(cmd,
                         "--depfile %s: inside the work dir %s, where pto compile writes its own "
                         "files (and finds any other one not written by pto): write it beside "
                         "the dir",
                         depfile, dir);
}

/* A Make/Ninja depfile: the work dir's manifest (written last, so it is the work dir's output
 * for a build system) depends on the PTIR source, the one input pto compile reads. Written with
 * pto_file_replace, as every output file (a temp file and a rename: a build tool never reads half
 * of one). */
static pto_status write_depfile(const char *path, const char *dir, const char *source) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  char target[4096];
  snprintf(target, sizeof target, "%.*s/manifest.json", (int)n, dir);
  pto_text t = {0};
  depfile_path(&t, target);
  pto_text_puts(&t, ": ");
  depfile_path(&t, source);
  pto_text_puts(&t, "\n");
  char *text = pto_text_finish(&t);
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "--depfile %s: out of memory", path);
  const void *bufs[1] = {text};
  size_t lens[1] = {strlen(text)};
  pto_status s = pto_file_replace(path, bufs, lens, 1);
  pto_free(text);
  return s ? pto_status_annotate(s, "--depfile %s", path) : PTO_OK;
}

/* What cli_compile_into_dir builds into its build dir: the program through the cache. */
typedef struct build_ctx {
  const pto_ir_program *ir;
  cli_compile_args *a;
} build_ctx;

static pto_status build_into(void *ctx, const char *dir) {
  build_ctx *b = ctx;
  return pto_compile_to_dir(b->ir, &b->a->opt, dir, !b->a->no_cache);
}

int cmd_compile(int argc, char **argv) {
  const char *cmd = "compile";
  cli_compile_args a;
  cli_compile_args_init(&a);
  const char *src = NULL, *out_dir = NULL;
  int force = 0, operands = 0; /* operands: after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    int r = operands ? 0 : cli_parse_compile_option(cmd, &a, argc, argv, &i);
    if (r < 0) return PTO_EXIT_USAGE;
    if (r) continue;
    if (operands) {
      if (src) return cli_usage_error(cmd, "one program at a time: '%s' and '%s'", src, argv[i]);
      src = argv[i];
    } else if (!strcmp(argv[i], "--force")) {
      force = 1;
    } else if (!strcmp(argv[i], "-o") || !strncmp(argv[i], "-o=", 3)) {
      /* -o DIR or -o=DIR, as every flag with a value (docs/cli.md) */
      const char *v = argv[i][2] == '=' ? argv[i] + 3 : cli_next_value(argc, argv, &i);
      if (!v) return cli_usage_error(cmd, "-o needs a directory");
      if (cli_set_once_path(cmd, "-o", &out_dir, v)) return PTO_EXIT_USAGE;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    } else if (!src) {
      src = argv[i];
    } else {
      return cli_usage_error(cmd, "one program at a time: '%s' and '%s'", src, argv[i]);
    }
  }
  if (!src) return cli_usage_error(cmd, "no program given");
  if (cli_claim_program(cmd, src)) return PTO_EXIT_USAGE; /* --depfile must not overwrite it */
  if (cli_check_compile_args(cmd, &a)) return PTO_EXIT_USAGE;
  if (!out_dir) return cli_usage_error(cmd, "no output directory: pass -o DIR");
  if (cli_check_output_path(cmd, "-o", out_dir, 1)) return PTO_EXIT_USAGE;
  if (a.depfile &&
      (cli_check_output_path(cmd, "--depfile", a.depfile, 0) ||
       check_depfile_path(cmd, "source", src) || check_depfile_path(cmd, "work dir", out_dir) ||
       check_depfile_outside(cmd, a.depfile, out_dir)))
    return PTO_EXIT_USAGE;
  pto_ir_program *ir = NULL;
  pto_status s = pto_ir_parse_file(src, &ir);
  if (!s) s = pto_ir_verify(ir);
  if (s) {
    pto_ir_program_destroy(ir);
    return cli_fail(cmd, s);
  }
  cli_launch_warnings(ir);
  check_remote_env(&a);
  build_ctx b = {ir, &a};
  int rc = cli_compile_into_dir(cmd, out_dir, force, build_into, &b);
  cli_progress_end(&a.progress);
  pto_ir_program_destroy(ir);
  if (!rc && a.depfile) {
    s = write_depfile(a.depfile, out_dir, src);
    if (s) return cli_fail(cmd, s);
  }
  return rc;
}

const pto_cmd cli_cmd_compile = {
    "compile", "compile a .ptir program into a work dir",
    "usage: pto compile PROG.ptir -o DIR [options]\n"
    "\n"
    "Compiles PROG.ptir ahead of time into the work dir DIR: manifest.json, program.ptir (the\n"
    "specialized program), orchestration/<entry>.cpp and .so, kernels/<kernel>.ll and .o, and\n"
    "kernels/kernels.so. The sources in DIR may be edited by hand; 'pto rebuild DIR' (or loading\n"
    "DIR with 'pto run DIR') rebuilds what changed. Binaries come from the binary cache when an\n"
    "equal program was compiled before. A program with a host entry (L3) gets host/host.c and\n"
    "host/host.so (the host function as C) and one such work dir per orch it calls in\n"
    "callees/<orch>/, for the device set of --devices.\n"
    "\n"
    "DIR/compiled.xxh128 records the files as pto wrote them ('xxh128sum -c' lists the edited\n"
    "ones). The program is built aside in DIR and moved in, the manifest last; compiles into\n"
    "one DIR take turns, so DIR always holds one program.\n"
    "\n"
    "options:\n"
    "  -o DIR                 the work dir to write (created if missing)\n"
    "  --entry NAME           the entry function (default: the single host, else the single "
    "orch);\n"
    "                         a kernel runs as one task, through an orch NAME_entry made for it\n"
    "  -D NAME=VALUE          specialize scalar parameter NAME to VALUE (baked into the binary)\n"
    "  -D NAME=runtime        leave scalar parameter NAME a runtime parameter\n"
    "  --arg NAME=64x128      sample shape for an unshaped entry tensor 'tensor f32'\n"
    "  --platform sim         the target platform (only sim so far)\n"
    "  --devices N|ID,ID,...  the device set of a program with a host entry: N devices 0..N-1,\n"
    "                         or those ids (rank r runs on the r-th); default 1 device, id 0\n"
    "  -O0 | -O1 | -O2 | -O3  optimization level (default -O2)\n"
    "  --depfile FILE         also write a Make/Ninja depfile for build systems (paths escaped as\n"
    "                         gcc escapes its own depfiles; a path with a line break is refused),\n"
    "                         beside DIR: a FILE inside DIR is refused\n"
    "  --no-cache             compile without reading or writing the binary cache (either\n"
    "                         level: not with --remote-cache)\n"
    "  --remote-cache URL     a second cache level shared between machines (default\n"
    "                         $PTO_REMOTE_CACHE): http://HOST/PATH or\n"
    "                         redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; entries signed with\n"
    "                         $PTO_REMOTE_CACHE_KEY (docs/remote-cache.md)\n"
    "  --force                compile into a DIR that holds hand edits or files pto did not "
    "write:\n"
    "                         hand edits are overwritten; files pto did not write are kept, and\n"
    "                         a program with a file of such a name (or below a symlink) is\n"
    "                         refused (without --force, any such DIR is refused; files of a\n"
    "                         previous program that pto wrote and nobody edited are removed\n"
    "                         either way)\n"
    "\n"
    "On a terminal, a progress bar counts the kernels as they are lowered (programs of four\n"
    "kernels or more; a host program's, for each orch it calls); a long orchestration (written\n"
    "in parts) then has a line saying the compile waits for its C++ compile.\n"
    "\n"
    "example:\n"
    "  pto compile examples/scale_rows.ptir -o build/scale_rows -D act=1\n"
    "  pto compile examples/allreduce_mesh.ptir --devices 4 -o build/allreduce\n",
    cmd_compile};
