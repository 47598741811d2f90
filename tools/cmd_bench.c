/* pto bench: register a program once, launch it warmup + rounds times, print the statistics. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
#include "pto/bench.h"
#include "pto/dist_bench.h"

static const char *k_cmd = "bench";

/* --rounds and --warmup take at most this many launches each, for L2 and host programs alike
 * (pto_dist_benchmark's own bound): refused at once, not obeyed for hours in silence (a bar is
 * drawn only on a terminal). A launch of the smallest program takes about 10 us and each measured
 * one keeps its spans (about 0.4 KB), so 100000 is seconds and tens of MB there, and far more
 * launches than a median needs anywhere. */
enum { BENCH_MAX_LAUNCHES = 100000 };

typedef struct bench_args {
  cli_inputs in;
  int rounds, warmup;
  int strict_cores; /* --strict-cores */
  cli_stats_view view;
  const char *swimlane;
  cli_dispatch_sel sel;  /* host programs: the dispatch whose tree --tree prints */
  cli_records records;   /* --swimlane-records, --swimlane-level */
  const char *transport; /* --transport */
  cli_timeline timeline;
  const char *dump_dir; /* --dump-args */
  int dump_level;       /* --dump-level */
} bench_args;

/* bench's own options (cli_option_fn). */
static int parse_bench_option(void *ctx, const char *cmd, int argc, char **argv, int *i) {
  bench_args *a = ctx;
  const char *arg = argv[*i];
  if (!strncmp(arg, "--transport", 11))
    return cli_parse_transport_option(cmd, argc, argv, i, &a->transport);
  if (!strcmp(arg, "--strict-cores")) {
    a->strict_cores = 1;
    return 1;
  }
  int is_rounds = !strcmp(arg, "--rounds") || !strncmp(arg, "--rounds=", 9);
  if (is_rounds || !strcmp(arg, "--warmup") || !strncmp(arg, "--warmup=", 9)) {
    const char *flag = is_rounds ? "--rounds" : "--warmup";
    int *slot = is_rounds ? &a->rounds : &a->warmup;
    int r = cli_int_option(cmd, flag, is_rounds, argc, argv, i, slot);
    if (r == 1 && *slot > BENCH_MAX_LAUNCHES)
      return cli_usage_error(cmd, "%s %d: expected %d to %d launches", flag, *slot, is_rounds,
                             BENCH_MAX_LAUNCHES),
             -1;
    return r;
  }
  int d = cli_parse_dispatch_option(cmd, &a->sel, argc, argv, i);
  if (!d) d = cli_parse_dump_option(cmd, argc, argv, i, &a->dump_dir, &a->dump_level);
  if (d) return d;
  int r = cli_parse_swimlane_records_option(cmd, argc, argv, i, &a->records);
  if (r) return r;
  r = cli_parse_swimlane_option(cmd, argc, argv, i, &a->swimlane);
  if (!r) r = cli_parse_timeline_option(cmd, &a->timeline, argc, argv, i);
  if (r) return r;
  return cli_parse_view_option(cmd, &a->view, argc, argv, i);
}

/* After every launch: the progress bar (a terminal only), and with --swimlane, task recording
 * turned on before the last launch alone, so the measured launches before it run as they
 * would without it. */
typedef struct progress {
  cli_progress bar;
  int draw;
  pto_worker *record_last; /* NULL: no --swimlane */
  int phases_last;         /* record_last records its scheduling phases too */
  pto_worker *dump_last;   /* NULL: no --dump-args */
  const char *dump_dir;
  int dump_level;
} progress;

static void on_progress(void *ctx, int done, int total) {
  progress *p = ctx;
  if (p->draw) cli_progress_draw(&p->bar, done, total);
  if (p->record_last && done == total - 1) {
    pto_status s = pto_worker_set_record_tasks(p->record_last, true);
    pto_status_free(s); /* between launches it cannot fail; the swimlane would say so */
    if (p->phases_last) pto_status_free(pto_worker_set_record_phases(p->record_last, true));
  }
  if (p->dump_last && done == total - 1) /* checked before the run: between launches it holds */
    pto_status_free(pto_worker_set_dump_args(p->dump_last, p->dump_level, p->dump_dir));
}

/* A host program: rounds on a distributed worker, the L3 views (pto/dist_bench.h). */
static int bench_host(const bench_args *a, const pto_program *prog, const pto_arg *args) {
  const pto_signature *sig = pto_program_signature(prog);
  if (a->swimlane) {
    cli_usage_error(k_cmd,
                    "--swimlane draws one chip's launch; a host program runs on %d chips "
                    "(use --json for every dispatch)",
                    pto_program_device_count(prog));
    return PTO_EXIT_USAGE;
  }
  if (a->records.path || a->dump_dir) {
    cli_usage_error(k_cmd,
                    "%s of a host program: use 'pto run', which writes one set per call "
                    "of each of its %d chips",
                    a->dump_dir ? "--dump-args" : "--swimlane-records",
                    pto_program_device_count(prog));
    return PTO_EXIT_USAGE;
  }
  int nd = pto_program_device_count(prog);
  pto_dist_config dc;
  pto_dist_config_init(&dc);
  dc.program = prog; /* single-program mode: the program's device set */
  dc.transport = a->transport;
  cli_note_mpi_launch(k_cmd, a->transport ? a->transport : getenv("PTO_DIST_TRANSPORT"));
  pto_dist_worker *dw = NULL;
  pto_dist_bench_stats *st = NULL;
  char *text = NULL;
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.rounds = a->rounds;
  opt.warmup = a->warmup;
  progress pr = {{"bench", "runs", -1, 0}, isatty(STDERR_FILENO), NULL, 0, NULL, NULL, 0};
  if (pr.draw) {
    opt.progress = on_progress;
    opt.progress_ctx = &pr;
  }
  int rc = PTO_EXIT_OK;
  pto_status s = pto_dist_worker_open(&dc, &dw);
  if (!s && !pto_dist_worker_is_root(dw)) goto done; /* an MPI rank that served rank 0's chip */
  if (!s) s = pto_dist_benchmark(dw, prog, args, (size_t)sig->nparams, &opt, &st);
  if (s) goto done;
  if (a->view.json) {
    if ((s = pto_dist_bench_stats_to_json(st, &text))) goto done;
    printf("%s\n", text);
    goto done;
  }
  printf("bench host @%s on sim: %d device%s (transport %s), %d run%s after %d warmup\n",
         sig->entry, nd, nd == 1 ? "" : "s", pto_dist_worker_transport(dw), st->rounds,
         st->rounds == 1 ? "" : "s", st->warmup);
  if ((s = pto_dist_bench_stats_render(st, &text))) goto done;
  fputs(text, stdout);
  rc = cli_print_dist_tree(k_cmd, st, &a->view, &a->sel);
done:
  if (s) rc = cli_fail(k_cmd, s);
  free(text);
  pto_dist_bench_stats_destroy(st);
  pto_dist_worker_close(dw);
  return rc;
}

int cmd_bench(int argc, char **argv) {
  bench_args a;
  memset(&a, 0, sizeof a);
  a.rounds = PTO_BENCH_DEFAULT_ROUNDS;
  a.warmup = PTO_BENCH_DEFAULT_WARMUP;
  cli_dispatch_sel_init(&a.sel);
  cli_stats_view_init(&a.view);
  if (cli_parse_inputs(k_cmd, &a.in, argc, argv, 0, parse_bench_option, &a) < 0)
    return PTO_EXIT_USAGE;
  if (cli_check_timeline_options(k_cmd, &a.timeline, a.view.json)) return PTO_EXIT_USAGE;
  if (a.swimlane && cli_check_output_path(k_cmd, "--swimlane", a.swimlane, 0))
    return PTO_EXIT_USAGE;
  if (cli_prepare_swimlane_records(k_cmd, &a.records)) return PTO_EXIT_USAGE;
  if (cli_check_dump_options(k_cmd, a.dump_dir, &a.dump_level)) return PTO_EXIT_USAGE;

  pto_program *prog = NULL;
  cli_param *pd = NULL;
  pto_arg *args = NULL;
  pto_bench_stats *st = NULL;
  pto_worker *w = NULL;
  int rc = PTO_EXIT_OK;
  pto_status s = cli_load_program(a.in.prog, &a.in.c, &prog, NULL);
  if (s) return cli_fail(k_cmd, s);
  const pto_signature *sig = pto_program_signature(prog);
  /* (a host program's bench refuses both options: bench_host) */
  if (!pto_program_is_host(prog) &&
      cli_claim_records_and_dump(k_cmd, prog, &a.records, a.dump_dir)) {
    rc = PTO_EXIT_USAGE;
    goto out;
  }
  if ((s = cli_prepare_params(sig, &a.in, &pd, &args))) goto out;
  if (pto_program_is_host(prog) && a.strict_cores) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "--strict-cores sets up an L2 program's worker; a host program's chips "
                        "take their cores from the distributed worker (--devices)");
    goto out;
  }
  if (pto_program_is_host(prog)) {
    rc = bench_host(&a, prog, args);
    goto out;
  }
  if ((s = cli_transport_needs_host(a.transport, pto_signature_entry_name(sig)))) goto out;
  if (cli_dispatch_sel_given(&a.sel)) {
    /* An L2 program has one launch per round, no dispatches to choose: not ignored in silence. */
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "--rank, --pid and --slot choose a dispatch of a host (L3) program; @%s "
                        "is an L2 program (--tree alone prints its mean tree)",
                        pto_signature_entry_name(sig));
    goto out;
  }

  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.rounds = a.rounds;
  opt.warmup = a.warmup;
  progress pr = {
      {"bench", "launches", -1, 0}, isatty(STDERR_FILENO), NULL, 0, NULL, a.dump_dir, a.dump_level};
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.strict_cores = a.strict_cores != 0;
  if (cli_make_records_folder(k_cmd, &a.records) ||
      cli_claim_records_and_dump(k_cmd, prog, &a.records, a.dump_dir)) {
    rc = PTO_EXIT_USAGE;
    goto out;
  }
  if ((s = pto_worker_open(&cfg, &w))) goto out;
  if (a.dump_dir) {
    /* Only the last launch dumps, so the others are measured as without the option. */
    pr.dump_last = w;
    if (a.warmup + a.rounds == 1 && (s = pto_worker_set_dump_args(w, a.dump_level, a.dump_dir)))
      goto out;
  }
  if (a.swimlane || a.records.path || cli_timeline_wanted(&a.timeline)) {
    pr.record_last = w;
    pr.phases_last = a.records.level >= 3;
    if (a.warmup + a.rounds == 1 && (s = pto_worker_set_record_tasks(w, true))) goto out;
    if (a.warmup + a.rounds == 1 && pr.phases_last && (s = pto_worker_set_record_phases(w, true)))
      goto out;
  }
  if (pr.draw || pr.record_last || pr.dump_last) {
    opt.progress = on_progress;
    opt.progress_ctx = &pr;
  }
  if ((s = pto_benchmark(w, prog, args, (size_t)sig->nparams, &opt, &st))) goto out;
  size_t ndrawn = 0;
  if (a.swimlane && (s = cli_write_swimlane(w, a.swimlane, &ndrawn))) goto out;
  if (a.records.path && (s = cli_write_swimlane_records(w, &a.records))) goto out;
  /* JSON output stays JSON: --timeline with --json was refused (the SVG is still written). */
  cli_timeline tl = a.timeline;
  if (!a.view.json) {
    char hid[17];
    pto_hid_format(st->hid, hid);
    printf("bench @%s on sim (%d cores): %d launch%s after %d warmup, %llu task%s per launch, "
           "hid %s\n",
           pto_signature_entry_name(sig), st->ncores, st->nlaunches, st->nlaunches == 1 ? "" : "es",
           st->warmup, (unsigned long long)st->ntasks, st->ntasks == 1 ? "" : "s", hid);
    if (a.swimlane)
      printf("swimlane of the last launch: %s (%zu task%s on %d cores)\n", a.swimlane, ndrawn,
             ndrawn == 1 ? "" : "s", st->ncores);
  }
  rc = cli_print_stats(k_cmd, st, &a.view);
  if (cli_timeline_wanted(&tl)) {
    if (tl.text) printf("\ntimeline of the last measured launch:\n");
    s = cli_show_worker_timeline(&tl, w);
  }
out:
  if (s) rc = cli_fail(k_cmd, s);
  pto_bench_stats_destroy(st);
  pto_worker_close(w);
  if (rc) cli_unmake_records_folder(&a.records);
  cli_params_free(pd, args, sig->nparams);
  pto_program_release(prog);
  return rc;
}

const pto_cmd cli_cmd_bench = {
    "bench", "launch a program many times and print timing statistics",
    "usage: pto bench PROG [inputs as pto run] [--rounds 100] [--warmup 3] [--tree [N]]\n"
    "                 [--rank R | --pid P] [--slot S] [--spread stdev|minmax|both|none]\n"
    "                 [--json] [--swimlane FILE]\n"
    "                 [--swimlane-records FILE [--swimlane-level N]]\n"
    "                 [--dump-args DIR [--dump-level N]]\n"
    "                 [--timeline [--timeline-width N]] [--timeline-svg FILE]\n"
    "                 [--strict-cores]\n"
    "\n"
    "Registers PROG once on a sim worker, launches it --warmup times unmeasured and then --rounds\n"
    "times measured, reading every launch's spans, and prints per metric n, min, median, mean,\n"
    "max and stdev in microseconds:\n"
    "  device wall   first task start to last task end (chip.run.runner_run.device_wall)\n"
    "  host wall     the whole launch on the host: bind, run, copy back (chip.run)\n"
    "  effective     the orchestration and scheduling windows merged: earlier start to later end\n"
    "                (PyPTO's Effective, as its strace_timing.py computes it)\n"
    "  busy          the union of those two windows (effective less any gap between them)\n"
    "The inputs are bound once, as 'pto run' binds them, and fed to every launch.\n"
    "A program with a host entry (--devices) runs its rounds on a distributed worker and prints\n"
    "the L3 views: per_round (device: the max over ranks of a rank's summed dispatch device\n"
    "walls; host: the same of their chip.run walls, as PyPTO's parser computes it; effective;\n"
    "union of the dispatch windows; host_function: the host function's whole run), per_rank,\n"
    "per_dispatch (rank R's S-th call of each round), dispatch_groups (by orch function);\n"
    "--json adds rounds_dispatches, dispatch_tasks, unstable_dispatch_slots, fallback_flattened.\n"
    "\n"
    "options:\n"
    "  --rounds N    measured launches (default 100, at most 100000)\n"
    "  --warmup N    launches before them, not measured (default 3, at most 100000)\n"
    "  --tree [N]    also print the mean span tree over the measured launches, down to depth N\n"
    "                (0: chip.run alone; default: every span)\n"
    "  --spread S    the spread after each mean in the tree: stdev (default), minmax, both, none\n"
    "  --json        print the statistics, every sample and the mean tree as JSON instead (not\n"
    "                with --timeline: --timeline-svg FILE draws beside it)\n"
    "  --rank R | --pid P, --slot S  a host program (--devices): the dispatch whose mean tree\n"
    "                --tree prints (the S-th call of each run to rank R, or to the chip process\n"
    "                P; default slot 0; chips that are threads share one pid: use --rank);\n"
    "                a tree never averages different dispatches: with several dispatches a\n"
    "                run, --tree without --rank or --pid is refused once the statistics\n"
    "                are printed (exit status 2)\n"
    "  --swimlane-records FILE  the last measured launch's tasks in PyPTO's\n"
    "                   chip_swimlane_records.json layout, deps.json and func_names.json (also as\n"
    "                   name_map.json) beside it (its folder is created; L2 programs)\n"
    "  --swimlane-level N  their chip_swimlane_level, as 'pto run' takes it: 1, 2 or 3 (the\n"
    "                default: with the scheduler phases, recorded in that launch only)\n"
    "  --swimlane FILE  write the last measured launch's tasks (core, kernel, dependencies,\n"
    "                ready/start/end) and spans to FILE as Chrome trace-event JSON (Perfetto,\n"
    "                chrome://tracing); only that launch records its tasks, so the others are\n"
    "                measured as without the option\n"
    "  --dump-args DIR  the last measured launch's argument dump in DIR, as 'pto run' writes it\n"
    "                (only that launch dumps); --dump-level N as there (default 2, full)\n"
    "  --timeline    draw the last measured launch's tasks in the terminal after the statistics:\n"
    "                one row per core, busy % per core, the critical path marked (recorded like\n"
    "                --swimlane; width: the terminal's, or --timeline-width N)\n"
    "  --timeline-svg FILE  the same picture as an SVG file\n"
    "  --strict-cores  the worker's cores as 'pto run --strict-cores' sets them (L2 programs):\n"
    "                a thread per core, running only its type's tasks\n"
    "inputs:\n"
    "  --in NAME=SOURCE  --dim SYM=VALUE  (see 'pto run --help')\n"
    "compile options (for a .ptir PROG):\n"
    "  --entry NAME  -D NAME=VALUE|runtime  --arg NAME=64x128  --platform sim  -O0..-O3  "
    "--no-cache\n"
    "                      (--entry KERNEL runs that kernel as one task: see 'pto compile "
    "--help')\n"
    "  --remote-cache URL  the shared second cache level (default $PTO_REMOTE_CACHE; see pto\n"
    "                      compile --help and docs/remote-cache.md)\n"
    "  --devices N|ID,ID,...  the device set of a program with a host entry (L3)\n"
    "  --transport shm|mpi  a host program's chips: forked on this host (shm, default) or one per\n"
    "                      MPI rank (mpi: mpirun -np N pto bench PROG --transport mpi ...; rank 0\n"
    "                      prints the report)\n"
    "\n"
    "A progress bar is drawn on stderr when it is a terminal. With PTO_LOG_LEVEL=timing every\n"
    "launch (warmup included) also writes its [STRACE] lines to stderr; 'pto trace' of that log\n"
    "gives the same numbers.\n"
    "\n"
    "exit status: 0 success, 1 a launch failed, 2 bad usage or input.\n"
    "\n"
    "example:\n"
    "  pto bench examples/chain.ptir --dim M=64 --in alpha=1 --rounds 50 --warmup 5 --tree\n"
    "  pto bench examples/allreduce_mesh.ptir --devices 2 --dim M=64 --tree --rank 1\n",
    cmd_bench};
