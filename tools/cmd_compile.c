/* pto compile, and the compile options shared with run and bench. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
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

static int split_binding(const char *cmd, const char *flag, char *text, pto_binding *out) {
  char *name, *value;
  if (cli_split_name_value(cmd, flag, text, &name, &value)) return -1;
  out->name = name;
  out->value = value;
  return 0;
}

/* The value of an option written "--opt VALUE" or "--opt=VALUE". */
static char *option_value(const char *cmd, const char *name, int argc, char **argv, int *i) {
  size_t n = strlen(name);
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (*i + 1 >= argc) {
    cli_usage_error(cmd, "%s needs a value", name);
    return NULL;
  }
  return argv[++*i];
}

static int is_opt(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

int cli_parse_compile_option(const char *cmd, cli_compile_args *a, int argc, char **argv, int *i) {
  char *arg = argv[*i];
  if (!strncmp(arg, "-D", 2)) {
    char *v = arg[2] ? arg + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!v) return cli_usage_error(cmd, "-D needs NAME=VALUE or NAME=runtime"), -1;
    if (a->opt.nscalars == 64) return cli_usage_error(cmd, "too many -D options"), -1;
    if (split_binding(cmd, "-D", v, &a->scalars[a->opt.nscalars])) return -1;
    a->opt.nscalars++;
    return 1;
  }
  if (is_opt(arg, "--arg")) {
    char *v = option_value(cmd, "--arg", argc, argv, i);
    if (!v) return -1;
    if (a->opt.nsamples == 64) return cli_usage_error(cmd, "too many --arg options"), -1;
    if (split_binding(cmd, "--arg", v, &a->samples[a->opt.nsamples])) return -1;
    a->opt.nsamples++;
    return 1;
  }
  if (is_opt(arg, "--entry")) {
    char *v = option_value(cmd, "--entry", argc, argv, i);
    if (!v) return -1;
    a->opt.entry = v[0] == '@' ? v + 1 : v;
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
    a->depfile = v;
    return 1;
  }
  if (is_opt(arg, "--devices")) {
    char *v = option_value(cmd, "--devices", argc, argv, i);
    if (!v) return -1;
    char err[256];
    int n = cli_parse_devices(v, a->devices, err, sizeof err);
    if (n < 0) return cli_usage_error(cmd, "%s", err), -1;
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
    if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8) && strncmp(v, "redis://", 8))
      return cli_usage_error(cmd, "--remote-cache %s: not an http://, https:// or redis:// URL", v),
             -1;
    pto_status s = pto_cache_set_remote(v);
    if (s) return cli_fail(cmd, s), -1;
    return 1;
  }
  return 0;
}

pto_status cli_load_program(const char *prog, cli_compile_args *a, pto_program **out_program,
                            pto_ir_program **out_ir) {
  *out_program = NULL;
  if (out_ir) *out_ir = NULL;
  if (cli_is_dir(prog)) {
    /* Stale parts (hand-edited sources) are rebuilt first, so a stale binary is never loaded;
     * with PTO_NO_REBUILD=1 loading a stale dir fails instead, naming the edited file. */
    const char *no_rebuild = getenv("PTO_NO_REBUILD");
    if (!no_rebuild || strcmp(no_rebuild, "1") != 0) {
      int rebuilt = 0;
      PTO_RETURN_IF_ERROR(pto_program_rebuild_dir(prog, &rebuilt));
      if (rebuilt)
        fprintf(stderr, "pto: %s: rebuilt %d stale file%s\n", prog, rebuilt,
                rebuilt == 1 ? "" : "s");
    }
    PTO_RETURN_IF_ERROR(pto_program_load_dir(prog, out_program));
    if (out_ir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/program.ptir", prog);
      pto_status s = pto_ir_parse_file(path, out_ir);
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
  if (!s) s = a->no_cache ? pto_compile_uncached(ir, &a->opt, out_program)
                          : pto_compile(ir, &a->opt, out_program);
  cli_progress_end(&a->progress);
  if (s || !out_ir) pto_ir_program_destroy(ir);
  else *out_ir = ir;
  return s;
}

/* A path in a Make/Ninja depfile: spaces and '#' escaped with a backslash, '$' doubled (as
 * gcc -MD writes them). */
static void depfile_path(FILE *f, const char *p) {
  for (; *p; p++) {
    if (*p == ' ' || *p == '#') fputc('\\', f);
    if (*p == '$') fputc('$', f);
    fputc(*p, f);
  }
}

/* A Make/Ninja depfile: the work dir's manifest (written last, so it is the work dir's output
 * for a build system) depends on the PTIR source, the one input pto compile reads. Written to a
 * temp file and renamed, so a build tool never reads half of one. */
static pto_status write_depfile(const char *path, const char *dir, const char *source) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return pto_status_make(PTO_STATUS_IO, "--depfile %s: %s", path, strerror(errno));
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  char target[4096];
  snprintf(target, sizeof target, "%.*s/manifest.json", (int)n, dir);
  depfile_path(f, target);
  fputs(": ", f);
  depfile_path(f, source);
  fputc('\n', f);
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    pto_status s = pto_status_make(PTO_STATUS_IO, "--depfile %s: %s", path, strerror(errno));
    unlink(tmp);
    return s;
  }
  return PTO_OK;
}

/* ---- the work dir that -o names ------------------------------------------------------- */

/* What is in DIR that a compile would overwrite or leave behind: files edited since the last
 * compile (hash differs from the manifest) and files pto did not write (not in the manifest).
 * nftw has no context argument: the walk's state is this one static, used by one thread. */
static struct {
  const char *dir;
  const pto_manifest *m; /* NULL: DIR has no manifest */
  char first[2][512];    /* first edited, first foreign */
  int nedited, nforeign;
} g_walk;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  if (type == FTW_D || type == FTW_DP) return 0;
  const char *rel = path + strlen(g_walk.dir);
  while (*rel == '/') rel++;
  /* pto's own files beside the manifest: the cache key text and the launch-error position table
   * (kept out of the manifest so positions never enter the key). */
  if (!strcmp(rel, PTO_MANIFEST_FILENAME) || !strcmp(rel, "key.txt") ||
      !strcmp(rel, "positions.json"))
    return 0;
  /* A host program's callees are L2 work dirs of pto's with manifests of their own. */
  for (int i = 0; g_walk.m && g_walk.m->is_host && i < g_walk.m->ncallees; i++) {
    size_t n = strlen(g_walk.m->callees[i]);
    if (!strncmp(rel, "callees/", 8) && !strncmp(rel + 8, g_walk.m->callees[i], n) &&
        rel[8 + n] == '/')
      return 0;
  }
  const pto_manifest_file *f = NULL;
  for (int i = 0; g_walk.m && i < g_walk.m->nfiles && !f; i++)
    if (!strcmp(g_walk.m->files[i].path, rel)) f = &g_walk.m->files[i];
  char hash[PTO_HASH_HEX_LEN + 1] = "";
  int which = -1;
  if (!f || type != FTW_F) {
    which = 1;
  } else {
    pto_status s = pto_file_hash(path, hash);
    if (s || strcmp(hash, f->hash) != 0) which = 0;
    pto_status_free(s);
  }
  if (which >= 0 && (which ? g_walk.nforeign++ : g_walk.nedited++) == 0)
    snprintf(g_walk.first[which], sizeof g_walk.first[which], "%s", rel);
  (void)ftw;
  return 0;
}

/* Refuses (usage error, 2) a DIR holding hand edits or files pto did not write, unless force.
 * *out_old gets DIR's manifest when it has one (the previous program). */
static int check_out_dir(const char *cmd, const char *dir, int force, pto_manifest *out_old,
                         int *out_has_old) {
  *out_has_old = 0;
  struct stat st;
  if (stat(dir, &st) != 0) return 0; /* created */
  pto_status s = pto_manifest_read(dir, out_old);
  *out_has_old = s == PTO_OK;
  pto_status_free(s);
  memset(&g_walk, 0, sizeof g_walk);
  g_walk.dir = dir;
  g_walk.m = *out_has_old ? out_old : NULL;
  nftw(dir, walk_one, 16, FTW_PHYS);
  if (force || (!g_walk.nedited && !g_walk.nforeign)) return 0;
  if (g_walk.nedited)
    cli_usage_error(cmd,
                    "-o %s: %s/%s (and %d more) was edited since it was compiled; compiling would "
                    "overwrite it: pass --force to overwrite, or choose another -o",
                    dir, dir, g_walk.first[0], g_walk.nedited - 1);
  else
    cli_usage_error(cmd,
                    "-o %s: %s/%s (and %d more) was not written by pto%s; pass --force to "
                    "compile into it anyway (pto never deletes files it did not write), or choose "
                    "another -o",
                    dir, dir, g_walk.first[1], g_walk.nforeign - 1,
                    *out_has_old ? "" : " (the directory is not a pto work dir)");
  if (*out_has_old) pto_manifest_free(out_old);
  *out_has_old = 0;
  return PTO_EXIT_USAGE;
}

/* After a compile into a dir that held another program: removes the files the old manifest
 * listed that the new one does not, when their content is still what pto wrote. */
static void remove_stale(const char *dir, const pto_manifest *old) {
  pto_manifest m;
  pto_status s = pto_manifest_read(dir, &m);
  if (s) {
    pto_status_free(s);
    return;
  }
  for (int i = 0; i < old->nfiles; i++) {
    const char *rel = old->files[i].path;
    int kept = 0;
    for (int k = 0; k < m.nfiles && !kept; k++)
      kept = !strcmp(m.files[k].path, rel);
    char *path = NULL;
    char hash[PTO_HASH_HEX_LEN + 1];
    if (kept || pto_manifest_resolve(dir, rel, &path)) {
      free(path);
      continue;
    }
    pto_status h = pto_file_hash(path, hash);
    if (!h && !strcmp(hash, old->files[i].hash)) unlink(path);
    pto_status_free(h);
    free(path);
  }
  pto_manifest_free(&m);
}

int cmd_compile(int argc, char **argv) {
  const char *cmd = "compile";
  cli_compile_args a;
  cli_compile_args_init(&a);
  const char *src = NULL, *out_dir = NULL;
  int force = 0;
  for (int i = 1; i < argc; i++) {
    int r = cli_parse_compile_option(cmd, &a, argc, argv, &i);
    if (r < 0) return PTO_EXIT_USAGE;
    if (r) continue;
    if (!strcmp(argv[i], "--force")) {
      force = 1;
    } else if (!strcmp(argv[i], "-o")) {
      if (i + 1 >= argc) return cli_usage_error(cmd, "-o needs a directory");
      out_dir = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    } else if (!src) {
      src = argv[i];
    } else {
      return cli_usage_error(cmd, "one program at a time: '%s' and '%s'", src, argv[i]);
    }
  }
  if (!src) return cli_usage_error(cmd, "no program given");
  if (!out_dir) return cli_usage_error(cmd, "no output directory: pass -o DIR");
  if (cli_check_output_path(cmd, "-o", out_dir, 1)) return PTO_EXIT_USAGE;
  if (a.depfile && cli_check_output_path(cmd, "--depfile", a.depfile, 0)) return PTO_EXIT_USAGE;
  pto_manifest old;
  int has_old = 0;
  if (check_out_dir(cmd, out_dir, force, &old, &has_old)) return PTO_EXIT_USAGE;
  pto_ir_program *ir = NULL;
  pto_status s = pto_ir_parse_file(src, &ir);
  if (!s) s = pto_ir_verify(ir);
  if (!s) s = pto_compile_to_dir(ir, &a.opt, out_dir, !a.no_cache);
  cli_progress_end(&a.progress);
  if (!s && a.depfile) s = write_depfile(a.depfile, out_dir, src);
  if (!s && has_old) remove_stale(out_dir, &old);
  if (has_old) pto_manifest_free(&old);
  pto_ir_program_destroy(ir);
  if (s) return cli_fail(cmd, s);
  return PTO_EXIT_OK;
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
    "options:\n"
    "  -o DIR                 the work dir to write (created if missing)\n"
    "  --entry NAME           the entry function (default: the single host, else the single orch)\n"
    "  -D NAME=VALUE          specialize scalar parameter NAME to VALUE (baked into the binary)\n"
    "  -D NAME=runtime        leave scalar parameter NAME a runtime parameter\n"
    "  --arg NAME=64x128      sample shape for an unshaped entry tensor 'tensor f32'\n"
    "  --platform sim         the target platform (only sim so far)\n"
    "  --devices N|ID,ID,...  the device set of a program with a host entry: N devices 0..N-1,\n"
    "                         or those ids (rank r runs on the r-th); default 1 device, id 0\n"
    "  -O0 | -O1 | -O2 | -O3  optimization level (default -O2)\n"
    "  --depfile FILE         also write a Make/Ninja depfile for build systems\n"
    "  --no-cache             compile without reading or writing the binary cache\n"
    "  --remote-cache URL     a second cache level shared between machines (default\n"
    "                         $PTO_REMOTE_CACHE): http://HOST/PATH or redis://HOST[:PORT][/DB];\n"
    "                         entries signed with $PTO_REMOTE_CACHE_KEY (docs/remote-cache.md)\n"
    "  --force                compile into a DIR that holds hand edits or files pto did not write\n"
    "                         (without it, such a DIR is refused; files of a previous program\n"
    "                         that pto wrote and nobody edited are removed either way)\n"
    "\n"
    "On a terminal, a progress bar counts the kernels as they are lowered (programs of four\n"
    "kernels or more).\n"
    "\n"
    "example:\n"
    "  pto compile examples/scale_rows.ptir -o build/scale_rows -D act=1\n"
    "  pto compile examples/allreduce_mesh.ptir --devices 4 -o build/allreduce\n",
    cmd_compile};
