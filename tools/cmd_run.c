/* pto run: load or compile a program, feed it, run it on a sim worker, check and save outputs. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "inputs.h"
#include "npy.h"
#include "pto/base.h"
#include "pto/bench.h"
#include "pto/dist.h"
#include "pto/runtime.h"

typedef struct run_args {
  cli_inputs in;
  int check, trace;
  double rtol, atol;                 /* < 0: by dtype */
  const char *rtol_text, *atol_text; /* as given, NULL: not given */
  const char *swimlane;
  cli_records records; /* --swimlane-records, --swimlane-level */
  cli_timeline timeline;
  const char *transport; /* --transport */
  const char *dump_dir;  /* --dump-args */
  int dump_level;        /* --dump-level */
  int strict_cores;      /* --strict-cores */
} run_args;

static const char *k_cmd = "run";

static uint64_t cli_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* run's own options (cli_option_fn). */
static int parse_run_option(void *ctx, const char *cmd, int argc, char **argv, int *i) {
  run_args *a = ctx;
  const char *arg = argv[*i];
  if (!strcmp(arg, "--check")) {
    a->check = 1;
  } else if (!strcmp(arg, "--trace")) {
    a->trace = 1;
  } else if (!strcmp(arg, "--strict-cores")) {
    a->strict_cores = 1;
  } else if (!strncmp(arg, "--swimlane-records", 18) || !strncmp(arg, "--swimlane-level", 16)) {
    return cli_parse_swimlane_records_option(cmd, argc, argv, i, &a->records);
  } else if (!strncmp(arg, "--dump-", 7)) {
    return cli_parse_dump_option(cmd, argc, argv, i, &a->dump_dir, &a->dump_level);
  } else if (!strncmp(arg, "--transport", 11)) {
    return cli_parse_transport_option(cmd, argc, argv, i, &a->transport);
  } else if (!strncmp(arg, "--timeline", 10)) {
    return cli_parse_timeline_option(cmd, &a->timeline, argc, argv, i);
  } else if (!strncmp(arg, "--swimlane", 10)) {
    return cli_parse_swimlane_option(cmd, argc, argv, i, &a->swimlane);
  } else if (!strncmp(arg, "--rtol", 6) || !strncmp(arg, "--atol", 6)) {
    /* --rtol R or --rtol=R, likewise --atol. */
    if (arg[6] != 0 && arg[6] != '=') return 0;
    char flag[7];
    snprintf(flag, sizeof flag, "%.6s", arg);
    const char *val = arg[6] == '=' ? arg + 7 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!val) return cli_usage_error(cmd, "%s needs a number", flag), -1;
    char *end;
    double v = strtod(val, &end);
    if (*end || end == val || !isfinite(v) || v < 0)
      return cli_usage_error(cmd, "%s %s: expected a finite non-negative number", flag, val), -1;
    double *slot = flag[2] == 'r' ? &a->rtol : &a->atol;
    const char **text = flag[2] == 'r' ? &a->rtol_text : &a->atol_text;
    /* Given twice: one value counts once, two are refused (the last would win in silence). */
    if (*text && *slot != v)
      return cli_usage_error(cmd, "%s given twice: '%s' and '%s'", flag, *text, val), -1;
    *slot = v;
    *text = val;
  } else {
    return 0;
  }
  return 1;
}

/* One element of --check: NaN matches NaN at the same position, an infinity matches only
 * itself, anything else matches within atol + rtol*|ref|. *out_err: the absolute error (0 for
 * a match of NaNs or infinities, +inf for a mismatch of them). */
static int check_elem(double got, double want, double rtol, double atol, double *out_err) {
  if (isnan(got) || isnan(want)) {
    *out_err = isnan(got) && isnan(want) ? 0 : INFINITY;
    return isnan(got) && isnan(want);
  }
  if (isinf(got) || isinf(want)) {
    *out_err = got == want ? 0 : INFINITY;
    return got == want;
  }
  *out_err = fabs(got - want);
  return *out_err <= atol + rtol * fabs(want);
}

/* One element of --check on an integer or bool output: exact, on the values themselves (a
 * double holds an i64 or u64 above 2^53 only rounded, so 2^60 + 1 against 2^60 would pass).
 * *out_err: |got - want| as a double, which rounds but is never 0 for different values. */
static int check_int_elem(pto_dtype dt, const void *got, const void *want, int64_t e,
                          double *out_err) {
  pto_scalar g = pto_elem_load(dt, got, e), w = pto_elem_load(dt, want, e);
  uint64_t d;
  if (pto_dtype_is_signed(dt))
    d = g.i >= w.i ? (uint64_t)g.i - (uint64_t)w.i : (uint64_t)w.i - (uint64_t)g.i;
  else
    d = g.u >= w.u ? g.u - w.u : w.u - g.u;
  *out_err = (double)d;
  return d == 0;
}

/* Element e of an output as --check prints it: integers exactly, floats to 9 digits. */
static void format_elem(char *buf, size_t cap, pto_dtype dt, const void *p, int64_t e) {
  pto_scalar s = pto_elem_load(dt, p, e);
  if (pto_dtype_is_float(dt))
    snprintf(buf, cap, "%.9g", s.f);
  else if (pto_dtype_is_signed(dt))
    snprintf(buf, cap, "%" PRId64, s.i);
  else
    snprintf(buf, cap, "%" PRIu64, s.u);
}

static void dtype_tolerance(pto_dtype dt, double *rtol, double *atol) {
  switch (dt) {
  case PTO_DTYPE_F16: *rtol = 1e-3, *atol = 1e-3; break;
  case PTO_DTYPE_BF16: *rtol = 1e-2, *atol = 1e-2; break;
  case PTO_DTYPE_F32: *rtol = 1e-5, *atol = 1e-6; break;
  case PTO_DTYPE_F64: *rtol = 1e-12, *atol = 1e-12; break;
  default: *rtol = 0, *atol = 0; break; /* integers and bool: exact */
  }
}

/* ---- --swimlane (shared with pto bench) ------------------------------------------------ */

int cli_parse_swimlane_option(const char *cmd, int argc, char **argv, int *i, const char **out) {
  const char *arg = argv[*i];
  if (strcmp(arg, "--swimlane") != 0 && strncmp(arg, "--swimlane=", 11) != 0) return 0;
  const char *val = arg[10] == '=' ? arg + 11 : cli_next_value(argc, argv, i);
  if (!val || !*val) return cli_usage_error(cmd, "--swimlane needs a file name (FILE.json)"), -1;
  return cli_set_once_path(cmd, "--swimlane", out, val) ? -1 : 1;
}

pto_status cli_write_swimlane(pto_worker *w, const char *path, size_t *out_ntasks) {
  pto_launch_record rec;
  const pto_task_record *tasks = NULL;
  size_t n = 0;
  PTO_RETURN_IF_ERROR(pto_worker_last_launch(w, &rec));
  pto_status s = pto_worker_last_launch_tasks(w, &tasks, &n);
  if (!s) s = pto_swimlane_write_launch(path, &rec, tasks, n);
  if (s) return pto_status_annotate(s, "--swimlane %s", path);
  if (out_ntasks) {
    *out_ntasks = 0;
    for (size_t i = 0; i < n; i++)
      *out_ntasks += tasks[i].core >= 0;
  }
  return PTO_OK;
}

void cli_note_mpi_launch(const char *cmd, const char *transport) {
  const char *np = getenv("OMPI_COMM_WORLD_SIZE");
  if (!np) np = getenv("PMI_SIZE");
  if (np && atoi(np) > 1 && (!transport || strcmp(transport, "mpi") != 0))
    fprintf(stderr,
            "pto %s: note: started by mpirun on %s ranks with the shm transport, so every rank "
            "runs the whole program on chips of its own; pass --transport mpi for one chip per "
            "rank\n",
            cmd, np);
}

pto_status cli_transport_needs_host(const char *transport, const char *entry) {
  if (!transport) return PTO_OK;
  /* How a host program's chips talk: an L2 program has one chip, in this process. */
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "--transport %s: applies to programs with a host entry (their chips "
                         "talk over it); @%s is an L2 program, run on one chip in this process",
                         transport, entry);
}

int cli_parse_transport_option(const char *cmd, int argc, char **argv, int *i, const char **out) {
  const char *arg = argv[*i];
  if (strcmp(arg, "--transport") != 0 && strncmp(arg, "--transport=", 12) != 0) return 0;
  const char *val = arg[11] == '=' ? arg + 12 : cli_next_value(argc, argv, i);
  if (!val || (strcmp(val, "shm") != 0 && strcmp(val, "mpi") != 0))
    return cli_usage_error(cmd,
                           "--transport%s%s: the transports are shm (one host, the default) "
                           "and mpi (under mpirun, in a build with -DPTO_MPI=ON)",
                           val ? " " : " needs a value", val ? val : ""),
           -1;
  if (cli_set_once(cmd, "--transport", out, val)) return -1;
  /* A transport this build lacks is bad usage (2), found before anything is compiled or run, as
   * an unknown one is. */
  if (!strcmp(val, "mpi") && !strstr(pto_dist_transports(), "mpi"))
    return cli_usage_error(cmd,
                           "--transport mpi: transport 'mpi' is not in this build (configure pto "
                           "with -DPTO_MPI=ON; this build has: %s)",
                           pto_dist_transports()),
           -1;
  return 1;
}

int cli_parse_swimlane_records_option(const char *cmd, int argc, char **argv, int *i,
                                      cli_records *out) {
  const char *arg = argv[*i];
  if (!strcmp(arg, "--swimlane-level") || !strncmp(arg, "--swimlane-level=", 17))
    return cli_int_option(cmd, "--swimlane-level", 1, argc, argv, i, &out->level);
  if (strcmp(arg, "--swimlane-records") != 0 && strncmp(arg, "--swimlane-records=", 19) != 0)
    return 0;
  const char *val = arg[18] == '=' ? arg + 19 : cli_next_value(argc, argv, i);
  if (!val || !*val)
    return cli_usage_error(cmd, "--swimlane-records needs a file name (FILE.json)"), -1;
  /* checked before the run, once its folder exists: cli_prepare_swimlane_records */
  return cli_set_once_path(cmd, "--swimlane-records", &out->path, val) ? -1 : 1;
}

int cli_parse_dump_option(const char *cmd, int argc, char **argv, int *i, const char **dir,
                          int *level) {
  const char *arg = argv[*i];
  if (!strcmp(arg, "--dump-level") || !strncmp(arg, "--dump-level=", 13))
    return cli_int_option(cmd, "--dump-level", 1, argc, argv, i, level);
  if (strcmp(arg, "--dump-args") != 0 && strncmp(arg, "--dump-args=", 12) != 0) return 0;
  const char *val = arg[11] == '=' ? arg + 12 : cli_next_value(argc, argv, i);
  if (!val || !*val) return cli_usage_error(cmd, "--dump-args needs a directory"), -1;
  return cli_set_once_path(cmd, "--dump-args", dir, val) ? -1 : 1;
}

int cli_check_dump_options(const char *cmd, const char *dir, int *level) {
  if (*level && !dir)
    return cli_usage_error(cmd, "--dump-level %d without --dump-args DIR", *level), -1;
  if (!dir) return 0;
  if (!*level) *level = 2;
  if (*level > 3)
    return cli_usage_error(cmd,
                           "--dump-level %d: the levels are 1 (the arguments "
                           "CoreTaskArgs::dump marks), 2 (every argument with its data, "
                           "the default) and 3 (every argument, data for the marked only)",
                           *level),
           -1;
  /* its files are claimed once the program is loaded: cli_claim_records_and_dump */
  return cli_check_output_path(cmd, "--dump-args", dir, 1) ? -1 : 0;
}

/* FILE's folder into dir: 0 when FILE names none (no slash, or a file in /). */
static int records_dir(const char *file, char *dir, size_t cap) {
  snprintf(dir, cap, "%s", file);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = 0;
  return 1;
}

int cli_prepare_swimlane_records(const char *cmd, cli_records *r) {
  const char *path = r->path;
  if (r->level && !path)
    return cli_usage_error(cmd, "--swimlane-level %d without --swimlane-records FILE", r->level),
           -1;
  if (!path) return 0;
  if (!r->level) r->level = 3;
  if (r->level > 3)
    return cli_usage_error(cmd,
                           "--swimlane-level %d: the levels are 1 (AICore rows), 2 (and "
                           "AICPU dispatch/finish rows) and 3 (and the scheduler phases, "
                           "the default); pto does not record level 4's orchestrator "
                           "phases",
                           r->level),
           -1;
  char dir[PATH_MAX];
  if (records_dir(path, dir, sizeof dir)) {
    if (!cli_is_dir(dir)) {
      /* Made just before the run (cli_make_records_folder), so a command refused before it
       * leaves nothing behind; what exists of the path must be folders. */
      char up[PATH_MAX];
      snprintf(up, sizeof up, "%s", dir);
      struct stat st;
      for (char *s = up + strlen(up); s > up; s = strrchr(up, '/')) {
        *s = 0;
        if (!*up || stat(up, &st) != 0) continue;
        if (!S_ISDIR(st.st_mode))
          return cli_usage_error(cmd, "--swimlane-records %s: %s is not a folder", path, up), -1;
        break;
      }
      return 0;
    }
  }
  /* FILE and the files beside it are claimed once the program says where they go (a host
   * program's in rank_R/dispatch_N/ folders): cli_claim_records_and_dump */
  return cli_check_output_file_unclaimed(cmd, "--swimlane-records", path) ? -1 : 0;
}

int cli_make_records_folder(const char *cmd, cli_records *r) {
  if (!r->path) return 0;
  char dir[PATH_MAX];
  if (!records_dir(r->path, dir, sizeof dir)) return 0;
  size_t made = cli_missing_prefix(dir);
  pto_status s = pto_file_mkdirs(dir, 0755);
  if (!s) {
    r->made = made;
    return 0;
  }
  r->made = 0;
  char undo[PATH_MAX];
  snprintf(undo, sizeof undo, "%s", dir);
  cli_remove_made_folders(undo, made); /* the part made before the failure */
  cli_usage_error(cmd, "--swimlane-records %s: cannot create its folder: %s", r->path,
                  pto_status_message(s));
  pto_status_free(s);
  return -1;
}

void cli_unmake_records_folder(const cli_records *r) {
  if (!r->path || !r->made) return;
  char dir[PATH_MAX];
  if (records_dir(r->path, dir, sizeof dir)) cli_remove_made_folders(dir, r->made);
}

/* Claims the files of one folder the records or the dump write: FOLDER/NAMES[i] (FOLDER "" is
 * the current one), labelled "FLAG ARG (its SUB + NAMES[i])", SUB "" for the folder itself, and
 * with SUB "" and FILE_FIRST names[0] (FILE itself) as "FLAG ARG". */
static int claim_in(const char *cmd, const char *flag, const char *arg, const char *folder,
                    const char *sub, const char *const *names, int n, int file_first) {
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX], label[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", folder, *folder ? "/" : "", names[i]);
    if (i == 0 && file_first && !*sub)
      snprintf(label, sizeof label, "%s %s", flag, arg);
    else
      snprintf(label, sizeof label, "%s %s (its %s%s)", flag, arg, sub, names[i]);
    if (cli_claim_file(cmd, label, path, 1)) return -1;
  }
  return 0;
}

/* For a host program: claim_in each rank_R/dispatch_N/ folder below BASE that exists already (the
 * run makes the missing ones, where no other output can be; its folder must exist before). */
static int claim_ranks(const char *cmd, const char *flag, const char *arg, const char *base,
                       int nranks, const char *const *names, int n) {
  for (int r = 0; r < nranks; r++)
    for (int call = 0;; call++) {
      char sub[64], folder[PATH_MAX];
      snprintf(sub, sizeof sub, "rank_%d/dispatch_%d/", r, call);
      snprintf(folder, sizeof folder, "%s%s%.*s", base, *base ? "/" : "", (int)strlen(sub) - 1,
               sub);
      if (!cli_is_dir(folder)) break;
      if (claim_in(cmd, flag, arg, folder, sub, names, n, 0)) return -1;
    }
  return 0;
}

int cli_claim_records_and_dump(const char *cmd, const pto_program *p, const cli_records *r,
                               const char *dump_dir) {
  int host = pto_program_is_host(p), nranks = host ? pto_program_device_count(p) : 0;
  if (r->path) {
    /* FILE and the files written beside it (pto_swimlane_write_worker_records) */
    const char *path = r->path, *slash = strrchr(path, '/');
    const char *names[4] = {slash ? slash + 1 : path, "deps.json", "func_names.json",
                            "name_map.json"};
    char folder[PATH_MAX];
    int dirlen = slash ? (int)(slash - path) : 0;
    snprintf(folder, sizeof folder, "%.*s", slash == path ? 1 : dirlen, path);
    if (host ? claim_ranks(cmd, "--swimlane-records", path, folder, nranks, names, 4)
             : claim_in(cmd, "--swimlane-records", path, folder, "", names, 4, 1))
      return -1;
  }
  if (dump_dir) {
    static const char *const k_files[] = {"args.bin", "args_dump.json"};
    if (host ? claim_ranks(cmd, "--dump-args", dump_dir, dump_dir, nranks, k_files, 2)
             : claim_in(cmd, "--dump-args", dump_dir, dump_dir, "", k_files, 2, 0))
      return -1;
  }
  return 0;
}

/* Whether FILE's folder is there (a path without one: the current folder, always). */
static int records_folder_exists(const char *file, char *dir, size_t cap) {
  return !records_dir(file, dir, cap) || cli_is_dir(dir);
}

pto_status cli_write_swimlane_records(pto_worker *w, const cli_records *r) {
  /* Another pto run that made FILE's folder and failed removes it while it is empty
   * (cli_unmake_records_folder), which can be while this run, which found it there, is still
   * launching: the folder is made again, and the write tried again should it vanish between the
   * two (a failed run removes it once). */
  char dir[PATH_MAX];
  pto_status s = PTO_OK;
  for (int attempt = 0; attempt < 3; attempt++) {
    pto_status_free(s);
    s = PTO_OK;
    if (!records_folder_exists(r->path, dir, sizeof dir) && (s = pto_file_mkdirs(dir, 0755))) break;
    s = pto_swimlane_write_worker_records(w, r->path, r->level);
    if (!s || records_folder_exists(r->path, dir, sizeof dir)) break;
  }
  return s ? pto_status_annotate(s, "--swimlane-records %s", r->path) : PTO_OK;
}

/* pto_dist_config.on_chip_call of a host program's --swimlane-records FILE (ctx, cli_records):
 * in each chip's process, its call N as DIR/rank_R/dispatch_N/ + FILE's name, where
 * critical_path finds them. */
static pto_status write_rank_records(void *ctx, pto_worker *chip, int rank, int call) {
  const cli_records *rec = ctx;
  pto_status s = pto_dist_swimlane_records_on_chip_call((void *)rec->path, chip, rank, call);
  return s ? pto_status_annotate(s, "--swimlane-records %s", rec->path) : PTO_OK;
}

/* ---- --check -------------------------------------------------------------------------- */

static pto_status run_reference(pto_ir_program *ir, const char *entry_name,
                                const pto_signature *sig, cli_param *pd, int nranks) {
  /* A kernel entry runs through the orch made for it, as it was compiled. */
  pto_ir_program *kprog = NULL;
  const char *name = NULL;
  PTO_RETURN_IF_ERROR(
      pto_ir_program_kernel_entry(ir, entry_name ? entry_name : sig->entry, &kprog, &name));
  pto_ir_func *entry = pto_ir_program_find_func(kprog ? kprog : ir, name);
  /* The reference runs what was compiled: the program with its -D/--arg bindings written in. */
  pto_ir_program *spec = NULL;
  pto_status ss = pto_ir_specialize(kprog ? kprog : ir, entry, sig, &spec);
  if (!ss) entry = pto_ir_program_find_func(spec, name);
  pto_ir_program_destroy(kprog); /* name was kprog's */
  if (ss) return ss;
  pto_ir_interp_arg *args = calloc((size_t)sig->nparams + 1, sizeof *args);
  if (!args) {
    pto_ir_program_destroy(spec);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int j = 0; j < sig->nparams; j++) {
    if (sig->params[j].is_tensor) {
      args[j].is_tensor = 1;
      args[j].tensor = pd[j].t;
      args[j].tensor.data = pd[j].ref;
    } else {
      args[j].scalar = pd[j].scalar;
    }
  }
  /* A host program runs with simulated ranks, one per device of its device set. */
  pto_status s = entry->kind == PTO_FUNC_HOST
                     ? pto_ir_interp_run_host(spec, entry, args, sig->nparams, nranks, 0)
                     : pto_ir_interp_run(spec, entry, args, sig->nparams);
  free(args);
  pto_ir_program_destroy(spec);
  return s ? pto_status_annotate(s, "reference interpreter") : PTO_OK;
}

static int compare_outputs(const pto_signature *sig, const cli_param *pd, const run_args *a) {
  int all_ok = 1;
  for (int j = 0; j < sig->nparams; j++) {
    const pto_sig_param *sp = &sig->params[j];
    if (!sp->is_tensor || sp->dir == PTO_DIR_IN) continue;
    double rtol, atol;
    dtype_tolerance(sp->dtype, &rtol, &atol);
    if (a->rtol >= 0) rtol = a->rtol;
    if (a->atol >= 0) atol = a->atol;
    int64_t n = pto_host_tensor_numel(&pd[j].t), bad = 0, worst_at = -1;
    double max_abs = 0, max_rel = 0, worst_err = -1;
    for (int64_t e = 0; e < n; e++) {
      double want = cli_elem_get(sp->dtype, pd[j].ref, e), err;
      /* Integers compare exactly unless --rtol/--atol give them a tolerance. */
      int ok = pto_dtype_is_float(sp->dtype) || rtol > 0 || atol > 0
                   ? check_elem(cli_elem_get(sp->dtype, pd[j].data, e), want, rtol, atol, &err)
                   : check_int_elem(sp->dtype, pd[j].data, pd[j].ref, e, &err);
      double rel = err == 0 ? 0 : err / fmax(fabs(want), 1e-30);
      if (err > max_abs) max_abs = err;
      if (rel > max_rel) max_rel = rel;
      if (!ok) {
        bad++;
        if (err > worst_err) worst_err = err, worst_at = e; /* the first of the worst */
      }
    }
    char shape[96];
    cli_format_shape(shape, sizeof shape, pd[j].t.rank, pd[j].t.shape);
    printf("%s: %s %s  max abs err %.3g  max rel err %.3g  (rtol %g, atol %g)  %s\n", sp->name,
           shape, pto_dtype_name(sp->dtype), max_abs, max_rel, rtol, atol, bad ? "FAIL" : "PASS");
    if (bad) {
      all_ok = 0;
      char got[40], ref[40];
      format_elem(got, sizeof got, sp->dtype, pd[j].data, worst_at);
      format_elem(ref, sizeof ref, sp->dtype, pd[j].ref, worst_at);
      printf("  %" PRId64 " of %" PRId64 " elements differ; worst at flat index %" PRId64
             ": got %s, reference %s\n",
             bad, n, worst_at, got, ref);
    }
  }
  printf("%s\n", all_ok ? "PASS" : "FAIL");
  return all_ok;
}

/* Which args_dump.json files a run wrote, by one rule for a chip's dump (DIR/args_dump.json) and
 * a host program's (DIR/rank_R/dispatch_N/args_dump.json): a manifest counts as written when it
 * was not there before the run or is another file now (its inode: the runtime renames a new one
 * in). A call with nothing to dump (level 1, no argument marked) writes none, as the reference,
 * so a manifest an earlier run left is this run's only if it was replaced; mtimes cannot tell
 * (a file written in the clock tick the run started in, or one with a future mtime). */
typedef struct dump_seen {
  int host, nranks;
  int *ncalls; /* per rank: the dispatch folders there were (a chip: 1) */
  ino_t **ino; /* [rank][call]: the manifest's inode then, 0: none */
} dump_seen;

static void dump_json_path(char *buf, size_t n, const char *dir, int host, int r, int d) {
  if (host)
    snprintf(buf, n, "%s/rank_%d/dispatch_%d/args_dump.json", dir, r, d);
  else
    snprintf(buf, n, "%s/args_dump.json", dir);
}

/* Calls the folder holds for rank R: a chip's is its one; a host rank's, its dispatch_N. */
static int dump_has_call(const char *dir, int host, int r, int d) {
  if (!host) return d == 0;
  char path[PATH_MAX];
  struct stat st;
  snprintf(path, sizeof path, "%s/rank_%d/dispatch_%d", dir, r, d);
  return stat(path, &st) == 0;
}

static void dump_seen_free(dump_seen *ds) {
  for (int r = 0; ds->ino && r < ds->nranks; r++)
    free(ds->ino[r]);
  free(ds->ino);
  free(ds->ncalls);
  memset(ds, 0, sizeof *ds);
}

/* The manifests DIR holds before the run (NRANKS: a host program's ranks; 0: a chip's dump). */
static pto_status dump_seen_take(dump_seen *ds, const char *dir, int nranks) {
  memset(ds, 0, sizeof *ds);
  ds->host = nranks > 0;
  ds->nranks = nranks > 0 ? nranks : 1;
  ds->ncalls = calloc((size_t)ds->nranks, sizeof *ds->ncalls);
  ds->ino = calloc((size_t)ds->nranks, sizeof *ds->ino);
  if (!ds->ncalls || !ds->ino) goto oom;
  char path[PATH_MAX];
  for (int r = 0; r < ds->nranks; r++) {
    size_t cap = 0;
    for (int d = 0; dump_has_call(dir, ds->host, r, d); d++) {
      if ((size_t)d == cap) {
        cap = cap ? 2 * cap : 8;
        ino_t *v = realloc(ds->ino[r], cap * sizeof *v);
        if (!v) goto oom;
        ds->ino[r] = v;
      }
      struct stat st;
      dump_json_path(path, sizeof path, dir, ds->host, r, d);
      ds->ino[r][d] = stat(path, &st) == 0 ? st.st_ino : 0;
      ds->ncalls[r] = d + 1;
    }
  }
  return PTO_OK;
oom:
  dump_seen_free(ds);
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory listing the dump in %s", dir);
}

/* The manifests in DIR the run wrote, by that rule. */
static int dump_count_written(const dump_seen *ds, const char *dir) {
  int n = 0;
  char path[PATH_MAX];
  for (int r = 0; r < ds->nranks; r++)
    for (int d = 0; dump_has_call(dir, ds->host, r, d); d++) {
      struct stat st;
      dump_json_path(path, sizeof path, dir, ds->host, r, d);
      if (stat(path, &st) != 0) continue;
      n += d >= ds->ncalls[r] || !ds->ino[r][d] || ds->ino[r][d] != st.st_ino;
    }
  return n;
}

/* ---- the command ---------------------------------------------------------------------- */

int cmd_run(int argc, char **argv) {
  run_args a;
  memset(&a, 0, sizeof a);
  a.rtol = a.atol = -1;
  if (cli_parse_inputs(k_cmd, &a.in, argc, argv, 1, parse_run_option, &a) < 0)
    return PTO_EXIT_USAGE;
  /* Tolerances of a check that is not made would be ignored in silence. */
  if (!a.check && (a.rtol >= 0 || a.atol >= 0))
    return cli_usage_error(k_cmd, "%s without --check: the tolerances are --check's",
                           a.rtol >= 0 ? "--rtol" : "--atol");
  if (cli_check_timeline_options(k_cmd, &a.timeline, 0)) return PTO_EXIT_USAGE;
  /* Output paths are checked before the run, not found bad after it. */
  for (int i = 0; i < a.in.nouts; i++)
    if (cli_check_output_path(k_cmd, "--out", a.in.outs[i].value, 0)) return PTO_EXIT_USAGE;
  if (a.swimlane && cli_check_output_path(k_cmd, "--swimlane", a.swimlane, 0))
    return PTO_EXIT_USAGE;
  if (cli_prepare_swimlane_records(k_cmd, &a.records)) return PTO_EXIT_USAGE;
  if (cli_check_dump_options(k_cmd, a.dump_dir, &a.dump_level)) return PTO_EXIT_USAGE;
  if (a.trace) {
    /* --trace asks for the timing level at least: a later one (info, debug) stays, with the
     * orchestration's lines it adds, and a value that names no level is left for the worker's
     * open to refuse, as it is without --trace. */
    static const char *const k_below[] = {"", "null", "error", "warn", "warning"};
    const char *level = getenv("PTO_LOG_LEVEL");
    int below = !level;
    for (size_t k = 0; !below && k < sizeof k_below / sizeof k_below[0]; k++)
      below = !strcasecmp(level, k_below[k]);
    if (below) setenv("PTO_LOG_LEVEL", "timing", 1);
  }

  pto_program *prog = NULL;
  pto_ir_program *ir = NULL;
  pto_worker *w = NULL;
  cli_param *pd = NULL;
  pto_arg *args = NULL;
  dump_seen dump_before = {0};
  int rc = PTO_EXIT_OK;
  pto_status s = cli_load_program(a.in.prog, &a.in.c, &prog, a.check ? &ir : NULL);
  if (s) return cli_fail(k_cmd, s);
  const pto_signature *sig = pto_program_signature(prog);
  if (cli_claim_records_and_dump(k_cmd, prog, &a.records, a.dump_dir)) {
    rc = PTO_EXIT_USAGE;
    goto out;
  }
  if ((s = cli_prepare_params(sig, &a.in, &pd, &args))) goto out;
  for (int j = 0; a.check && j < sig->nparams; j++) {
    if (sig->params[j].is_tensor) {
      /* The reference interpreter's own copy of the inputs. */
      pd[j].ref = cli_tensor_data_alloc(pd[j].nbytes);
      if (!pd[j].ref) {
        s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
        goto out;
      }
      memcpy(pd[j].ref, pd[j].data, pd[j].nbytes);
    }
  }
  if (pto_program_is_host(prog)) {
    /* L3: one chip process per device of the program's device set. */
    if (a.swimlane || cli_timeline_wanted(&a.timeline)) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "--swimlane and --timeline draw one chip's launch; a host program runs "
                          "on %d chips (use --trace and pto trace, or --swimlane-records for one "
                          "set per chip)",
                          pto_program_device_count(prog));
      goto out;
    }
    if (a.strict_cores) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "--strict-cores sets up an L2 program's worker; a host program's chips "
                          "take their cores from the distributed worker (--devices)");
      goto out;
    }
    if (cli_make_records_folder(k_cmd, &a.records) ||
        cli_claim_records_and_dump(k_cmd, prog, &a.records, a.dump_dir)) {
      rc = PTO_EXIT_USAGE;
      goto out;
    }
    int nd = pto_program_device_count(prog);
    pto_dist_config dc;
    pto_dist_config_init(&dc);
    dc.program = prog; /* single-program mode: the program's device set */
    dc.transport = a.transport;
    if (a.records.path) {
      dc.on_chip_call = write_rank_records;
      dc.on_chip_call_ctx = &a.records;
      dc.record_phases = a.records.level >= 3;
    }
    dc.dump_args_dir = a.dump_dir;
    dc.dump_args_level = a.dump_level;
    cli_note_mpi_launch(k_cmd, a.transport ? a.transport : getenv("PTO_DIST_TRANSPORT"));
    pto_dist_worker *dw = NULL;
    if (a.dump_dir && (s = dump_seen_take(&dump_before, a.dump_dir, nd))) goto out;
    if ((s = pto_dist_worker_open(&dc, &dw))) goto out;
    if (!pto_dist_worker_is_root(dw)) { /* an MPI rank that served rank 0's chip: done */
      pto_dist_worker_close(dw);
      goto out;
    }
    uint64_t t0 = cli_now_ns();
    s = pto_dist_worker_run(dw, prog, args, (size_t)sig->nparams);
    double host_us = (double)(cli_now_ns() - t0) / 1e3;
    char transport[64];
    snprintf(transport, sizeof transport, "%s", pto_dist_worker_transport(dw));
    pto_dist_worker_close(dw);
    if (s) goto out;
    char set[256] = "";
    for (int r = 0, k = 0; r < nd && k < (int)sizeof set - 12; r++)
      k += snprintf(set + k, sizeof set - (size_t)k, "%s%d", r ? "," : "",
                    (int)pto_program_device_id(prog, r));
    /* The worker's own transport: PTO_DIST_TRANSPORT=mpi, the default of --transport, too. */
    int over_mpi = !strncmp(transport, "mpi", 3);
    printf("ran host @%s on sim%s%s: %d device%s (%s), %d orch function%s, host wall %.1f us\n",
           sig->entry, over_mpi ? " over " : "", over_mpi ? transport : "", nd, nd == 1 ? "" : "s",
           set, pto_program_callee_count(prog), pto_program_callee_count(prog) == 1 ? "" : "s",
           host_us);
    const char *rp = a.records.path;
    if (rp)
      printf("swimlane records (level %d): one set per call of each rank in "
             "%.*srank_R/dispatch_N/\n",
             a.records.level, (int)(strrchr(rp, '/') ? strrchr(rp, '/') - rp + 1 : 0), rp);
    int ndumps = a.dump_dir ? dump_count_written(&dump_before, a.dump_dir) : 0;
    if (ndumps)
      printf("args dump (level %d): one per call of each rank in %s/rank_R/dispatch_N/"
             "args_dump.json (simpler's dump_viewer reads each): %d\n",
             a.dump_level, a.dump_dir, ndumps);
    else if (a.dump_dir)
      printf("args dump (level %d): no task argument to dump at this level (level 1 dumps the "
             "arguments a kernel marks), nothing written in %s\n",
             a.dump_level, a.dump_dir);
    goto outputs;
  }
  if ((s = cli_transport_needs_host(a.transport, pto_signature_entry_name(sig)))) goto out;
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.strict_cores = a.strict_cores != 0;
  /* --trace records the tasks too, so the log carries [STASK] lines for pto trace --timeline. */
  cfg.record_tasks =
      a.swimlane != NULL || a.records.path != NULL || cli_timeline_wanted(&a.timeline) || a.trace;
  if (cli_make_records_folder(k_cmd, &a.records) ||
      cli_claim_records_and_dump(k_cmd, prog, &a.records, a.dump_dir)) {
    rc = PTO_EXIT_USAGE;
    goto out;
  }
  if ((s = pto_worker_open(&cfg, &w))) goto out;
  if (a.records.level >= 3 && (s = pto_worker_set_record_phases(w, true))) goto out;
  if (a.dump_dir && (s = pto_worker_set_dump_args(w, a.dump_level, a.dump_dir))) goto out;
  /* The dump's manifest as it was: the report must not name an old one as this run's. */
  if (a.dump_dir && (s = dump_seen_take(&dump_before, a.dump_dir, 0))) goto out;
  s = pto_worker_run(w, prog, args, (size_t)sig->nparams);
  size_t ndrawn = 0;
  if (a.swimlane) {
    /* A failed launch is drawn too (the tasks that ran), which is when a picture helps most;
     * a launch that never started leaves nothing to draw. */
    pto_launch_record last;
    pto_status ws = pto_worker_last_launch(w, &last);
    if (!ws) ws = cli_write_swimlane(w, a.swimlane, &ndrawn);
    if (!ws && s)
      fprintf(stderr, "pto run: swimlane of the failed launch (%zu tasks ran) written to %s\n",
              ndrawn, a.swimlane);
    if (s)
      pto_status_free(ws);
    else
      s = ws;
  }
  if (!s && a.records.path) s = cli_write_swimlane_records(w, &a.records);
  if (s && cli_timeline_wanted(&a.timeline)) {
    /* A failed launch is drawn too (the tasks that ran), like the swimlane. */
    pto_status_free(cli_show_worker_timeline(&a.timeline, w));
  }
  if (s) goto out;
  pto_launch_record rec;
  if (!pto_worker_last_launch(w, &rec)) {
    double host_us = 0, dev_us = 0;
    for (int i = 0; i < rec.nspans; i++) {
      if (!strcmp(rec.spans[i].name, "chip.run")) host_us = (double)rec.spans[i].dur_ns / 1e3;
      if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall"))
        dev_us = (double)rec.spans[i].dur_ns / 1e3;
    }
    printf("ran @%s on sim (%d cores): %" PRIu64
           " task%s, host wall %.1f us, device wall %.1f us\n",
           pto_signature_entry_name(sig), pto_worker_core_count(w), rec.ntasks,
           rec.ntasks == 1 ? "" : "s", host_us, dev_us);
  }
  if (a.dump_dir && dump_count_written(&dump_before, a.dump_dir))
    printf("args dump (level %d): %s/args_dump.json (simpler's dump_viewer reads it)\n",
           a.dump_level, a.dump_dir);
  else if (a.dump_dir)
    printf("args dump (level %d): no task argument to dump at this level (level 1 dumps the "
           "arguments a kernel marks), nothing written in %s\n",
           a.dump_level, a.dump_dir);
  if (a.swimlane)
    printf("swimlane: %s (%zu task%s on %d cores; open it in Perfetto or chrome://tracing)\n",
           a.swimlane, ndrawn, ndrawn == 1 ? "" : "s", pto_worker_core_count(w));
  if (cli_timeline_wanted(&a.timeline) && (s = cli_show_worker_timeline(&a.timeline, w))) goto out;
outputs:
  for (int i = 0; i < a.in.nouts; i++) {
    int j = pto_signature_find(sig, a.in.outs[i].name);
    s = pto_npy_write(a.in.outs[i].value, sig->params[j].dtype, pd[j].t.rank, pd[j].t.shape,
                      pd[j].data);
    if (s) {
      s = pto_status_annotate(s, "--out %s", a.in.outs[i].name);
      goto out;
    }
  }
  if (a.check) {
    if ((s = run_reference(ir, a.in.c.opt.entry, sig, pd, pto_program_device_count(prog))))
      goto out;
    if (!compare_outputs(sig, pd, &a)) rc = PTO_EXIT_FAILED;
  }
out:
  if (s) rc = cli_fail(k_cmd, s);
  pto_worker_close(w);
  dump_seen_free(&dump_before);
  if (rc) cli_unmake_records_folder(&a.records);
  cli_params_free(pd, args, sig->nparams);
  pto_program_release(prog);
  pto_ir_program_destroy(ir);
  return rc;
}

const pto_cmd cli_cmd_run = {
    "run", "run a program on the sim platform",
    "usage: pto run PROG [options]\n"
    "\n"
    "Runs PROG once on a sim worker. PROG is a .ptir file (compiled through the binary cache) or "
    "a\n"
    "work dir made by 'pto compile' (hand-edited sources are rebuilt first). A program with a "
    "host\n"
    "entry (L3) runs on a distributed worker: one chip process per device of its device set\n"
    "(--devices), the host function in this process; --check then compares with the reference\n"
    "interpreter running one simulated rank per device. PTO_DIST_TIMEOUT_MS bounds every\n"
    "dist.wait (default 5000). PTO_DIST_CHIPS=threads runs the chips as threads of this\n"
    "process instead of forked processes (faster dispatch; a crashing chip ends pto).\n"
    "PTO_DIST_SLICE_US and PTO_DIST_JOIN tune how the ranks share CPUs with other work\n"
    "(docs/cli.md).\n"
    "\n"
    "Across hosts (a build with -DPTO_MPI=ON): mpirun -np N pto run PROG --transport mpi ...\n"
    "runs one chip per MPI rank (N must be the program's device count); rank 0 runs the host\n"
    "function, reads --in and writes --out and the report; the other ranks print nothing.\n"
    "Every rank must run the same pto build on the same device set. A rank not heard from for\n"
    "PTO_DIST_TIMEOUT_MS (at least 2 s; stopped by a signal or a debugger) fails the run.\n"
    "PTO_MPI_WINDOWS=separate forces the one-sided windows used across hosts; where /dev/shm\n"
    "is too small for the shared windows of one node, the run uses separate ones with a warning\n"
    "(PTO_MPI_WINDOWS=shared makes that an error); see README.\n"
    "\n"
    "inputs:\n"
    "  --in NAME=SOURCE    feed parameter NAME: FILE.npy, random[:SEED] (uniform in [-1,1) for\n"
    "                      floats, integers -8..8 for signed dtypes and 0..16 for unsigned, 0\n"
    "                      or 1 for bool), zeros, ones, or a number for a runtime scalar.\n"
    "                      Unfed in tensors are random (seed = parameter position); unfed\n"
    "                      outputs (out and inout) start as zeros, an out one even when fed\n"
    "                      (declare it inout to give it starting values); runtime scalars\n"
    "                      must be fed.\n"
    "  --dim SYM=VALUE     the value of dynamic dim SYM for generated inputs (a .npy input\n"
    "                      binds the dims of its parameter by its own shape; a dim bound by\n"
    "                      neither is 128, with a note on stderr)\n"
    "  .npy files hold the parameter's dtype as numpy names it (f2 f4 f8 i1-i8 u1-u8 b1), C\n"
    "  order; bf16 is stored as '<u2' holding the raw bfloat16 bits (a '|V2' file of ml_dtypes\n"
    "  reads too), index as '<i8'; big-endian files are converted. A file of another dtype or\n"
    "  shape is refused, naming both.\n"
    "outputs:\n"
    "  --out NAME=FILE.npy write out/inout parameter NAME after the run\n"
    "  --check             run the reference interpreter on the same inputs and compare every\n"
    "                      output; prints the worst absolute and relative error and PASS or FAIL\n"
    "  --rtol R --atol A   tolerances of --check, only with it (default by dtype: f32\n"
    "                      1e-5/1e-6, f16 1e-3, bf16 1e-2, f64 1e-12, integers exact); passes\n"
    "                      where |got-ref| <= atol + rtol*|ref|\n"
    "  --trace             write the launch's [STRACE] span lines and its [STASK] task lines\n"
    "                      to stderr ('pto trace LOG --timeline' draws them): PTO_LOG_LEVEL\n"
    "                      timing for this run, unless it names a later level (info, debug)\n"
    "  --swimlane-records FILE  the launch's tasks in PyPTO's chip_swimlane_records.json\n"
    "                      layout, with deps.json and func_names.json (also as name_map.json)\n"
    "                      beside FILE, for PyPTO's swimlane_converter and critical_path tools\n"
    "                      (FILE's folder is created); a host program writes one set per call\n"
    "                      of each chip, in rank_R/dispatch_N/ beside FILE\n"
    "  --swimlane-level N  the reference's chip_swimlane_level of those records: 1 AICore rows,\n"
    "                      2 and the AICPU dispatch/finish rows, 3 (the default) and each\n"
    "                      core's scheduler phases (aicpu_scheduler_phases, for PyPTO's\n"
    "                      sched_overhead_analysis; recorded only at level 3)\n"
    "  --dump-args DIR     write the reference runtime's argument dump of the launch to DIR\n"
    "                      (args_dump.json and args.bin, for simpler's dump_viewer; DIR is\n"
    "                      created): every task's arguments with their data; a host program\n"
    "                      writes one per call of each chip, in DIR/rank_R/dispatch_N/. Two\n"
    "                      runs write one dump byte for byte, but for the bytes of comm windows\n"
    "                      (dtensor arguments), which other ranks may be writing then\n"
    "  --dump-level N      the reference's levels: 1 the arguments CoreTaskArgs::dump marks,\n"
    "                      with their data; 2 every argument with its data (the default); 3\n"
    "                      every argument, data for the marked ones only\n"
    "  --timeline          draw the launch's tasks in the terminal: one row per core, busy %\n"
    "                      per core, the critical path marked (width: the terminal's)\n"
    "  --timeline-svg FILE the same picture as an SVG file\n"
    "  --timeline-width N  columns of the --timeline rows, 30 to 10000 (default: the terminal's;\n"
    "                      only with --timeline)\n"
    "  --swimlane FILE     record every task of the launch (core, kernel, dependencies, ready,\n"
    "                      start and end times) and write them with the launch's spans to FILE\n"
    "                      as Chrome trace-event JSON: open it in Perfetto or chrome://tracing\n"
    "worker (an L2 program):\n"
    "  --strict-cores      the chip's strict model: a thread per core, running only tasks of\n"
    "                      its core's type, the CPUs split a third AIC (cube) and the rest AIV\n"
    "                      (vector). Default: a thread per CPU, an AIC core and two AIV cores\n"
    "                      per thread, every thread running ready tasks of either type as a\n"
    "                      free core of the task's type (vector and matmul work each use\n"
    "                      every CPU)\n"
    "compile options (for a .ptir PROG):\n"
    "  --entry NAME  -D NAME=VALUE|runtime  --arg NAME=64x128  --platform sim  -O0..-O3  "
    "--no-cache\n"
    "                      (--entry KERNEL runs that kernel as one task: see 'pto compile "
    "--help')\n"
    "  --remote-cache URL  the shared second cache level (default $PTO_REMOTE_CACHE; see pto\n"
    "                      compile --help and docs/remote-cache.md)\n"
    "  --devices N|ID,ID,...  the device set of a program with a host entry (L3); with a work\n"
    "                      dir, only its own device set (it was compiled for that one)\n"
    "  --transport shm|mpi  how a host program's chips talk: shm (default: forked chips on this\n"
    "                      host) or mpi (one chip per MPI rank, under mpirun)\n"
    "\n"
    "exit status: 0 success, 1 the run or the check failed, 2 bad usage or input.\n"
    "\n"
    "example:\n"
    "  pto run examples/add.ptir --dim M=100 --check --out c=c.npy\n"
    "  pto run examples/chain.ptir --dim M=256 --in alpha=0.5 --swimlane chain.json\n"
    "  pto run examples/allreduce_mesh.ptir --devices 4 --dim M=128 --check\n",
    cmd_run};
