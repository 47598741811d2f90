/* pto trace: benchmark statistics from a [STRACE] log, and the report shared with pto bench. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pto/base.h"
#include "pto/bench.h"
#include "pto/dist_bench.h"

static const char *k_cmd = "trace";

/* The [STRACE]/[STASK] lines of text whose inv field is inv (--inv: one launch's statistics),
 * into a new buffer (*out, *out_len; NULL when out of memory). */
static char *lines_of_inv(const char *text, size_t len, int inv, size_t *out_len) {
  char want[32];
  int wn = snprintf(want, sizeof want, " inv=%d", inv);
  char *out = pto_malloc(len + 1);
  if (!out) return NULL;
  size_t n = 0;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl + 1 : end;
    const char *f = memmem(p, (size_t)(le - p), want, (size_t)wn);
    if (f && f + wn < le && (f[wn] == ' ' || f[wn] == '\n' || f[wn] == '\r') &&
        (memmem(p, (size_t)(le - p), "[STRACE] ", 9) ||
         memmem(p, (size_t)(le - p), "[STASK] ", 8))) {
      memcpy(out + n, p, (size_t)(le - p));
      n += (size_t)(le - p);
    }
    p = le;
  }
  out[n] = '\0';
  *out_len = n;
  return out;
}

void cli_stats_view_init(cli_stats_view *v) {
  memset(v, 0, sizeof *v);
  v->tree = -1;
  v->spread = PTO_BENCH_SPREAD_STDEV;
}

/* A non-negative decimal int, or -1. */
static int parse_count(const char *s) {
  if (!*s) return -1;
  long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > INT_MAX) return -1;
  }
  return (int)v;
}

/* --tree given again with another depth (--tree alone: every span): refused, as every
 * single-valued flag (cli_set_once), rather than the last one winning. */
static int set_tree(const char *cmd, cli_stats_view *v, int depth) {
  if (v->tree >= 0 && v->tree != depth) {
    char a[16] = "", b[16] = "";
    if (v->tree != INT_MAX) snprintf(a, sizeof a, " %d", v->tree);
    if (depth != INT_MAX) snprintf(b, sizeof b, " %d", depth);
    return cli_usage_error(cmd, "--tree given twice: '--tree%s' and '--tree%s'", a, b), -1;
  }
  v->tree = depth;
  return 1;
}

int cli_parse_view_option(const char *cmd, cli_stats_view *v, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  if (!strcmp(arg, "--json")) {
    v->json = 1;
    return 1;
  }
  if (!strcmp(arg, "--tree")) {
    /* --tree [N]: the next argument is its depth when it is a number. */
    if (*i + 1 < argc && parse_count(argv[*i + 1]) >= 0)
      return set_tree(cmd, v, parse_count(argv[++*i]));
    /* A negative depth is not taken for an unknown option '-1', nor one past INT_MAX for the
     * program or log. */
    else if (*i + 1 < argc &&
             ((argv[*i + 1][0] == '-' && argv[*i + 1][1] >= '0' && argv[*i + 1][1] <= '9') ||
              (argv[*i + 1][0] && strspn(argv[*i + 1], "0123456789") == strlen(argv[*i + 1]))))
      return cli_usage_error(cmd, "--tree %s: expected a depth (0 or more) up to %d", argv[*i + 1],
                             INT_MAX),
             -1;
    return set_tree(cmd, v, INT_MAX);
  }
  if (!strncmp(arg, "--tree=", 7)) {
    int depth = parse_count(arg + 7);
    if (depth < 0)
      return cli_usage_error(cmd, "--tree %s: expected a depth (0 or more) up to %d", arg + 7,
                             INT_MAX),
             -1;
    return set_tree(cmd, v, depth);
  }
  if (!strcmp(arg, "--spread") || !strncmp(arg, "--spread=", 9)) {
    const char *val = arg[8] == '=' ? arg + 9 : cli_next_value(argc, argv, i);
    if (!val) return cli_usage_error(cmd, "--spread needs stdev, minmax, both or none"), -1;
    int sp = pto_bench_spread_from_name(val);
    if (sp < 0)
      return cli_usage_error(cmd, "--spread %s: expected stdev, minmax, both or none", val), -1;
    v->spread = sp;
    if (cli_set_once(cmd, "--spread", &v->spread_text, val)) return -1;
    return 1;
  }
  return 0;
}

int cli_int_option(const char *cmd, const char *name, int min, int argc, char **argv, int *i,
                   int *out) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  const char *val = arg[n] == '=' ? arg + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
  if (!val) return cli_usage_error(cmd, "%s needs a number", name), -1;
  int v = parse_count(val);
  if (v < min)
    return cli_usage_error(cmd, "%s %s: expected %s", name, val,
                           min > 0 ? "a positive integer" : "an integer 0 or more"),
           -1;
  /* Given twice with another value: refused, as every single-valued flag (cli_set_once). One
   * command line per process, so the options given so far are a static list. */
  static struct {
    const int *slot;
    int value;
  } given[32];
  static int ngiven;
  for (int k = 0; k < ngiven; k++)
    if (given[k].slot == out) {
      if (given[k].value != v)
        return cli_usage_error(cmd, "%s given twice: '%d' and '%d'", name, given[k].value, v), -1;
      return 1;
    }
  if (ngiven < (int)(sizeof given / sizeof given[0])) {
    given[ngiven].slot = out;
    given[ngiven++].value = v;
  }
  *out = v;
  return 1;
}

static const char *spread_legend(int spread) {
  switch (spread) {
  case PTO_BENCH_SPREAD_STDEV: return "mean \u00b1stdev";
  case PTO_BENCH_SPREAD_MINMAX: return "mean [min..max]";
  case PTO_BENCH_SPREAD_BOTH: return "mean \u00b1stdev [min..max]";
  default: return "mean";
  }
}

int cli_print_stats(const char *cmd, const pto_bench_stats *st, const cli_stats_view *v) {
  char *text = NULL;
  pto_status s;
  if (v->json) {
    s = pto_bench_stats_to_json(st, &text);
    if (s) return cli_fail(cmd, s);
    fputs(text, stdout);
    pto_free(text);
    return PTO_EXIT_OK;
  }
  s = pto_bench_stats_render_summary(st, &text);
  if (s) return cli_fail(cmd, s);
  fputs(text, stdout);
  pto_free(text);
  if (v->tree < 0) return PTO_EXIT_OK;
  pto_bench_tree *tree = NULL;
  s = pto_bench_stats_mean_tree(st, &tree);
  if (!s) s = pto_bench_tree_render(tree, (pto_bench_spread)v->spread, v->tree, &text);
  pto_bench_tree_destroy(tree);
  if (s) return cli_fail(cmd, s);
  printf("\nmean of %d launch%s (warmup %d excluded); each node: %s\n", st->nlaunches,
         st->nlaunches == 1 ? "" : "es", st->warmup, spread_legend(v->spread));
  fputs(text, stdout);
  pto_free(text);
  return PTO_EXIT_OK;
}

void cli_dispatch_sel_init(cli_dispatch_sel *d) { d->rank = d->slot = d->pid = -1; }

int cli_dispatch_sel_given(const cli_dispatch_sel *d) {
  return d->rank >= 0 || d->slot >= 0 || d->pid >= 0;
}

int cli_parse_dispatch_option(const char *cmd, cli_dispatch_sel *d, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  int r = 0;
  if (!strcmp(arg, "--rank") || !strncmp(arg, "--rank=", 7))
    r = cli_int_option(cmd, "--rank", 0, argc, argv, i, &d->rank);
  else if (!strcmp(arg, "--slot") || !strncmp(arg, "--slot=", 7))
    return cli_int_option(cmd, "--slot", 0, argc, argv, i, &d->slot);
  else if (!strcmp(arg, "--pid") || !strncmp(arg, "--pid=", 6))
    r = cli_int_option(cmd, "--pid", 1, argc, argv, i, &d->pid);
  /* [--rank R | --pid P]: a dispatch is chosen by one of them; both would be found to disagree
   * only after the whole bench ran. */
  if (r == 1 && d->rank >= 0 && d->pid >= 0)
    return cli_usage_error(cmd,
                           "--rank %d and --pid %d: a dispatch is chosen by its rank or by its "
                           "chip's pid, not both",
                           d->rank, d->pid),
           -1;
  return r;
}

int cli_print_dist_tree(const char *cmd, const pto_dist_bench_stats *st, const cli_stats_view *v,
                        const cli_dispatch_sel *d) {
  if (v->tree < 0 && d->rank < 0 && d->slot < 0 && d->pid < 0) return PTO_EXIT_OK;
  const pto_dist_bench_slot *pick = NULL;
  int n = st->per_dispatch ? st->nslots : 0, slot = d->slot < 0 ? 0 : d->slot, npicked = 0;
  for (int i = 0; i < n; i++) {
    const pto_dist_bench_slot *sl = &st->per_dispatch[i];
    int chosen = d->rank < 0 && d->pid < 0
                     ? n == 1
                     : (d->rank < 0 || sl->rank == d->rank) && (d->pid < 0 || sl->pid == d->pid) &&
                           sl->slot == slot;
    if (chosen && npicked++ == 0) pick = sl;
  }
  /* Chips that are threads of one process (PTO_DIST_CHIPS=threads) share its pid. */
  if (npicked > 1)
    return cli_usage_error(cmd,
                           "--pid %d names %d ranks' dispatches (their chips are threads of one "
                           "process): choose one with --rank R instead",
                           d->pid, npicked);
  if (!pick && (d->rank >= 0 || d->pid >= 0)) {
    /* A selection that matches no dispatch: name it and the dispatches there are. */
    char sel[96], have[512];
    int k = snprintf(sel, sizeof sel, "%s", "");
    if (d->rank >= 0) k += snprintf(sel + k, sizeof sel - (size_t)k, " --rank %d", d->rank);
    if (d->pid >= 0) k += snprintf(sel + k, sizeof sel - (size_t)k, " --pid %d", d->pid);
    snprintf(sel + k, sizeof sel - (size_t)k, " --slot %d", slot);
    size_t h = 0;
    have[0] = 0;
    for (int i = 0; i < n && h < sizeof have - 64; i++)
      h += (size_t)snprintf(have + h, sizeof have - h, "%srank %d slot %d (pid %d)", i ? ", " : "",
                            st->per_dispatch[i].rank, st->per_dispatch[i].slot,
                            st->per_dispatch[i].pid);
    return cli_usage_error(cmd, "no dispatch matches%s; the dispatches of a round: %s%s", sel,
                           n ? have : "none", h >= sizeof have - 64 ? ", ..." : "");
  }
  if (!pick)
    return cli_usage_error(cmd,
                           "--tree averages one dispatch over the rounds: choose it with --rank R "
                           "or --pid P, and --slot S (%d dispatch slot%s per round%s)",
                           n, n == 1 ? "" : "s",
                           st->unstable_dispatch_slots ? "; the slots are unstable here" : "");
  printf("\nmean tree of rank %d slot %d @%s (pid %d):\n", pick->rank, pick->slot, pick->name,
         pick->pid);
  cli_stats_view tv = *v;
  if (tv.tree < 0) tv.tree = INT_MAX;
  return cli_print_stats(cmd, pick->stats, &tv);
}

/* An L3 log: per_round, per_rank, per_dispatch, ... (pto/dist_bench.h), and one dispatch's tree.
 * Warmup: the given count, else none (a log of one pto run --trace is one measured run). */
static int trace_l3(const char *log, const char *text, size_t len, const cli_stats_view *view,
                    int warmup, const cli_dispatch_sel *sel) {
  pto_dist_bench_stats *st = NULL;
  char *out = NULL;
  pto_status s = pto_dist_trace_parse(text, len, warmup < 0 ? 0 : warmup, &st);
  if (s) return cli_fail(k_cmd, pto_status_annotate(s, "%s", log));
  if (view->json)
    s = pto_dist_bench_stats_to_json(st, &out);
  else
    s = pto_dist_bench_stats_render(st, &out);
  int rc = PTO_EXIT_OK;
  if (!s) {
    if (!view->json) printf("%s: distributed runs\n", log);
    fputs(out, stdout);
    if (view->json)
      putchar('\n');
    else
      rc = cli_print_dist_tree(k_cmd, st, view, sel);
  }
  free(out);
  pto_dist_bench_stats_destroy(st);
  return s ? cli_fail(k_cmd, s) : rc;
}

int cmd_trace(int argc, char **argv) {
  cli_stats_view view;
  cli_stats_view_init(&view);
  cli_dispatch_sel sel;
  cli_dispatch_sel_init(&sel);
  pto_trace_options opt;
  pto_trace_options_init(&opt);
  const char *log = NULL;
  cli_timeline tl = {0};
  int inv = 0;
  int operands = 0; /* after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    if (operands) {
      if (log) return cli_usage_error(k_cmd, "one log at a time: '%s' and '%s'", log, argv[i]);
      log = argv[i];
      continue;
    }
    int r = cli_parse_view_option(k_cmd, &view, argc, argv, &i);
    if (!r) r = cli_parse_timeline_option(k_cmd, &tl, argc, argv, &i);
    if (!r) r = cli_parse_dispatch_option(k_cmd, &sel, argc, argv, &i);
    if (!r && (!strcmp(argv[i], "--inv") || !strncmp(argv[i], "--inv=", 6)))
      r = cli_int_option(k_cmd, "--inv", 1, argc, argv, &i, &inv);
    if (!r && (!strcmp(argv[i], "--warmup") || !strncmp(argv[i], "--warmup=", 9)))
      r = cli_int_option(k_cmd, "--warmup", 0, argc, argv, &i, &opt.warmup);
    if (r < 0) return PTO_EXIT_USAGE;
    if (r) continue;
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(k_cmd, "unknown option '%s'", argv[i]);
    if (log) return cli_usage_error(k_cmd, "one log at a time: '%s' and '%s'", log, argv[i]);
    log = argv[i];
  }
  if (!log) return cli_usage_error(k_cmd, "no log file given");
  /* --timeline-svg must not land on the log it draws (claimed as the option was read). */
  if (strcmp(log, "-") != 0) {
    char label[PATH_MAX + 16];
    snprintf(label, sizeof label, "the log %s", log);
    if (cli_claim_file(k_cmd, label, log, 0)) return PTO_EXIT_USAGE;
  }
  if (cli_check_timeline_options(k_cmd, &tl, view.json)) return PTO_EXIT_USAGE;

  /* The log, read once: for the L3 check, the statistics and the timeline alike. */
  int from_stdin = !strcmp(log, "-");
  uint8_t *text = NULL;
  size_t len = 0;
  pto_status s = from_stdin ? pto_file_read_stream(stdin, "stdin", PTO_FILE_MAX_LOG, &text, &len)
                            : pto_file_read(log, PTO_FILE_MAX_LOG, &text, &len);
  if (s) {
    pto_free(text);
    if (from_stdin && pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY)
      s = pto_status_annotate(s, "-");
    return cli_fail(k_cmd, s);
  }
  /* A log of distributed (L3) runs: the same views as pto bench gives a host program. */
  if (!from_stdin && text && memmem(text, len, " l3=1", 5) &&
      (memmem(text, len, "name=node.graph_build", 21) || memmem(text, len, "name=host.run", 13))) {
    int rc = inv ? cli_usage_error(k_cmd,
                                   "%s: --inv chooses a launch of a log of L2 launches; in a log "
                                   "of distributed (L3) runs choose a dispatch with --rank R or "
                                   "--pid P and --slot S",
                                   log)
                 : trace_l3(log, (const char *)text, len, &view, opt.warmup, &sel);
    pto_free(text);
    return rc;
  }
  /* A log of L2 launches has no dispatches to choose: a selection would be ignored. */
  if (cli_dispatch_sel_given(&sel)) {
    pto_free(text);
    return cli_usage_error(k_cmd,
                           "%s: --rank, --pid and --slot choose a dispatch of a log of "
                           "distributed (L3) runs; this log holds L2 launches",
                           from_stdin ? "stdin" : log);
  }
  /* --inv: one launch, its statistics (and tree) alone, no warmup; the timeline draws it too. */
  const char *body = (const char *)text;
  size_t blen = len;
  char *one = NULL;
  if (inv) {
    if (!(one = lines_of_inv(body, len, inv, &blen))) {
      pto_free(text);
      return cli_fail(k_cmd, pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory"));
    }
    if (!blen) {
      pto_free(one);
      pto_free(text);
      return cli_usage_error(k_cmd, "%s: no launch with inv=%d (no [STRACE] line has it)",
                             from_stdin ? "stdin" : log, inv);
    }
    body = one;
    opt.warmup = 0;
  }
  pto_bench_stats *st = NULL;
  s = pto_trace_parse(body, blen, &opt, &st);
  pto_free(one);
  if (s && pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) s = pto_status_annotate(s, "%s", log);
  if (s) {
    if (strstr(pto_status_message(s), "is warmup")) {
      pto_status hint = pto_status_make(pto_status_code_of(s),
                                        "%s: --warmup %d is too many for this log (--warmup 0 "
                                        "keeps every launch)",
                                        pto_status_message(s), opt.warmup);
      pto_status_free(s);
      s = hint;
    }
    pto_free(text);
    return cli_fail(k_cmd, s);
  }
  if (!view.json) {
    const pto_trace_info *t = &st->trace;
    char hid[17];
    pto_hid_format(st->hid, hid);
    printf("%s: %d launch%s of hid %s after %d warmup", log, st->nlaunches,
           st->nlaunches == 1 ? "" : "es", hid, st->warmup);
    if (t->hids > 1)
      printf(" (%zu other invocation%s of %zu other hid%s ignored)", t->invocations - t->bucket,
             t->invocations - t->bucket == 1 ? "" : "s", t->hids - 1, t->hids == 2 ? "" : "s");
    printf("; %zu record%s", t->records, t->records == 1 ? "" : "s");
    if (t->skipped) printf(", %zu truncated or malformed skipped", t->skipped);
    if (t->unsupported) printf(", %zu of another version ignored", t->unsupported);
    printf("\n");
  }
  int rc = cli_print_stats(k_cmd, st, &view);
  pto_bench_stats_destroy(st);
  if (rc == PTO_EXIT_OK && cli_timeline_wanted(&tl)) {
    pto_swimlane_task *tasks = NULL;
    size_t n = 0;
    uint64_t got = 0;
    s = pto_trace_parse_tasks((const char *)text, len, (uint64_t)inv, &tasks, &n, &got);
    if (!s) {
      if (tl.text) printf("\ntimeline of launch inv=%llu:\n", (unsigned long long)got);
      s = cli_show_timeline(&tl, tasks, n, 0);
    }
    pto_timeline_tasks_free(tasks, n);
    if (s) rc = cli_fail(k_cmd, pto_status_annotate(s, "%s", log));
  }
  pto_free(text);
  return rc;
}

const pto_cmd cli_cmd_trace = {
    "trace", "statistics from a [STRACE] log",
    "usage: pto trace LOGFILE [--tree [N]] [--spread stdev|minmax|both|none] [--warmup N] "
    "[--json]\n"
    "                 [--rank R | --pid P] [--slot S]\n"
    "                 [--timeline [--timeline-width N]] [--timeline-svg FILE] [--inv N]\n"
    "\n"
    "Reads the [STRACE] v=1 span lines that 'pto run --trace', PTO_LOG_LEVEL=timing or any "
    "runtime\n"
    "writing the same format left in LOGFILE ('-': stdin) and prints the statistics 'pto bench'\n"
    "prints: device wall, host wall, effective and busy time per launch (min, median, mean, max, "
    "stdev).\n"
    "\n"
    "How the log is read:\n"
    "  - a record starts at '[STRACE]' anywhere on a line (logger prefixes are ignored) and runs\n"
    "    to the next '[STRACE]' or the end of the line; %XX escapes in names are decoded\n"
    "  - a log (a file or stdin) is at most 4 GiB; a larger one is refused\n"
    "  - a truncated or malformed record is skipped and counted\n"
    "  - records group into launches by (pid, inv); the hid with the most launches is the one\n"
    "    measured; its launches in (inv, pid) order lose the first --warmup as warmup\n"
    "  - a log without records, or with nothing left after --warmup, is an error\n"
    "  - a log of distributed (L3) runs (node.graph_build records with l3=1, written by the\n"
    "    distributed worker; host.run in older logs) gives the L3 views instead, as 'pto bench\n"
    "    --devices' prints them: per_round,\n"
    "    per_rank, per_dispatch, dispatch_groups (--json: every view); --tree with --rank R or\n"
    "    --pid P and --slot S prints one dispatch's mean tree (default warmup there: 0)\n"
    "\n"
    "options:\n"
    "  --warmup N    launches dropped as warmup; 0 keeps all. Default: 3, as pto bench, but\n"
    "                never every launch (a log of n <= 3 launches drops n-1, so the log of one\n"
    "                'pto run --trace' is one measured launch)\n"
    "  --tree [N]    also print the mean span tree, down to depth N (0: chip.run alone;\n"
    "                default: every span)\n"
    "  --spread S    the spread after each mean in the tree: stdev (default), minmax, both, none\n"
    "  --json        print the statistics, samples and mean tree as JSON instead (not with\n"
    "                --timeline: --timeline-svg FILE draws beside it)\n"
    "  --timeline    also draw one launch's tasks from the log's [STASK] lines (written by\n"
    "                'pto run --trace'): one row per core, busy % per core, the critical path\n"
    "                marked; width: the terminal's, or --timeline-width N\n"
    "  --inv N       that launch alone (a log of L2 launches): its statistics and --tree, no\n"
    "                warmup, and the one --timeline or --timeline-svg draws (default: the\n"
    "                statistics of every launch after --warmup, and the last one with task\n"
    "                lines drawn)\n"
    "  --timeline-svg FILE  the same picture as an SVG file\n"
    "\n"
    "exit status: 0 success, 1 failure, 2 bad usage or a log without measurements.\n"
    "\n"
    "example:\n"
    "  pto run examples/chain.ptir --dim M=64 --in alpha=1 --trace 2> run.log\n"
    "  pto trace run.log --tree --spread both\n",
    cmd_trace};
