/* --timeline, --timeline-svg FILE, --timeline-width N: shared by pto run, bench and trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "pto/base.h"
#include "pto/bench.h"

int cli_parse_timeline_option(const char *cmd, cli_timeline *t, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  if (!strcmp(arg, "--timeline")) {
    t->text = 1;
    return 1;
  }
  if (!strcmp(arg, "--timeline-svg") || !strncmp(arg, "--timeline-svg=", 15)) {
    const char *val = arg[14] == '=' ? arg + 15 : cli_next_value(argc, argv, i);
    if (!val || !*val)
      return cli_usage_error(cmd, "--timeline-svg needs a file name (FILE.svg)"), -1;
    /* Checked now, like every output path, not found bad after the run (once: a second
     * spelling of the same file is the same flag given twice). */
    if (t->svg && cli_same_path(t->svg, val)) return 1;
    if (cli_check_output_path(cmd, "--timeline-svg", val, 0)) return -1;
    return cli_set_once_path(cmd, "--timeline-svg", &t->svg, val) ? -1 : 1;
  }
  if (!strcmp(arg, "--timeline-width") || !strncmp(arg, "--timeline-width=", 17)) {
    const char *val = arg[16] == '=' ? arg + 17 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!val) return cli_usage_error(cmd, "--timeline-width needs a number"), -1;
    int64_t v;
    pto_status s = pto_parse_int_setting("--timeline-width", val, 30, CLI_TIMELINE_MAX_WIDTH, &v);
    if (s) {
      cli_usage_error(cmd, "%s", pto_status_message(s));
      pto_status_free(s);
      return -1;
    }
    if (t->width && t->width != (int)v)
      return cli_usage_error(cmd, "--timeline-width given twice: '%d' and '%d'", t->width, (int)v),
             -1;
    t->width = (int)v;
    return 1;
  }
  return 0;
}

int cli_check_timeline_options(const char *cmd, const cli_timeline *t, int json) {
  if (json && t->text)
    return cli_usage_error(cmd, "--timeline draws on stdout, which --json keeps JSON: pass "
                                "--timeline-svg FILE for the picture");
  if (t->width && !t->text)
    return cli_usage_error(cmd,
                           "--timeline-width %d without --timeline: it sets the columns of "
                           "the terminal drawing",
                           t->width);
  return 0;
}

/* The terminal's columns (stdout), else $COLUMNS, else 80. */
static int terminal_width(void) {
  struct winsize ws;
  if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 30)
    return ws.ws_col;
  const char *c = getenv("COLUMNS");
  int v = c ? atoi(c) : 0;
  return v >= 30 ? v : 80;
}

pto_status cli_show_timeline(const cli_timeline *t, const pto_swimlane_task *tasks, size_t n,
                             int ncores) {
  pto_timeline_options opt;
  pto_timeline_options_init(&opt);
  opt.ncores = ncores;
  if (t->svg) {
    pto_status s = pto_timeline_write_svg(t->svg, tasks, n, &opt);
    if (s) return pto_status_annotate(s, "--timeline-svg %s", t->svg);
  }
  if (!t->text) return PTO_OK;
  opt.width = t->width ? t->width : terminal_width();
  char *text = NULL;
  PTO_RETURN_IF_ERROR(pto_timeline_render(tasks, n, &opt, &text));
  fputs(text, stdout);
  pto_free(text);
  return PTO_OK;
}

pto_status cli_show_worker_timeline(const cli_timeline *t, pto_worker *w) {
  const pto_task_record *rec = NULL;
  size_t n = 0;
  PTO_RETURN_IF_ERROR(pto_worker_last_launch_tasks(w, &rec, &n));
  pto_swimlane_task *lane = calloc(n ? n : 1, sizeof *lane);
  if (!lane) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory (timeline)");
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const pto_task_record *r = &rec[i];
    if (r->core < 0) continue;
    lane[k++] = (pto_swimlane_task){r->core,  r->kernel,   r->task_id,  r->deps,
                                    r->ndeps, r->ready_ns, r->start_ns, r->end_ns};
  }
  pto_status s = cli_show_timeline(t, lane, k, pto_worker_core_count(w));
  free(lane);
  return s;
}
