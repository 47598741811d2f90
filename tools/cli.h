/* Shared pieces of the pto command's subcommands. */
#ifndef PTO_TOOLS_CLI_H
#define PTO_TOOLS_CLI_H

#include <stdio.h>

#include "pto/compiler.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "pto/status.h"

/* Exit codes of docs/cli.md. */
enum { PTO_EXIT_OK = 0, PTO_EXIT_FAILED = 1, PTO_EXIT_USAGE = 2 };

typedef struct pto_cmd {
  const char *name;
  const char *summary;
  const char *usage; /* full --help text */
  int (*run)(int argc, char **argv);
} pto_cmd;

/* Prints "pto NAME: message" to stderr and returns the exit code for the status: 2 for bad
 * input/usage, 1 for a job that ran and failed. Frees s. */
int cli_fail(const char *cmd, pto_status s);
/* Prints "pto: warning: MESSAGE" on stderr for each launch that p makes and that will fail for
 * certain (pto_ir_launch_warnings); the exit status is not changed. */
void cli_launch_warnings(const pto_ir_program *p);
/* Prints "pto NAME: <formatted>" plus "see 'pto NAME --help'" and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A message as cli_fail and cli_usage_error write it: control characters (but newline and tab)
 * as \xNN, the password of a URL as ***. */
void cli_put_message(FILE *f, const char *text);
/* True for "-h" / "--help"; prints usage. */
int cli_wants_help(const pto_cmd *cmd, int argc, char **argv);

/* A progress bar on stderr, "LABEL [#####.....] done/total UNIT", redrawn when the percentage
 * moves and erased when done == total (main.c). Call it only when stderr is a terminal. */
typedef struct cli_progress {
  const char *label, *unit;
  int last_pct;
  int shown; /* drawn and not erased yet */
} cli_progress;
void cli_progress_draw(cli_progress *p, int done, int total);
/* Erases a bar left unfinished (a failed compile), so a message starts on a clean line. */
void cli_progress_end(cli_progress *p);
/* pto_compile_options.progress for the tools: a bar for compiles of CLI_PROGRESS_MIN_KERNELS
 * kernels or more (ctx: a cli_progress). */
#define CLI_PROGRESS_MIN_KERNELS 4
void cli_compile_progress(void *ctx, int done, int total);
/* pto_compile_options.waiting for the tools: after the bar, a line saying what the compile waits
 * for (a long orchestration's C++), erased by cli_progress_end (ctx: a cli_progress). */
void cli_compile_waiting(void *ctx, const char *what);

/* The value of "FLAG VALUE": the next argument (*i advanced to it), or NULL when there is none or
 * it is an option ("-x", "--x"; a bare "-" and a negative number, "-1", are values): a forgotten
 * value must not take the next option for a file or a name ('--swimlane --check' wrote a file named
 * --check). A value that starts with '-' is given as FLAG=VALUE (or ./-x for a path). */
const char *cli_next_value(int argc, char **argv, int *i);

/* Splits "NAME=VALUE" in place (the strings stay in argv); on a malformed one prints a usage
 * error naming flag and returns -1. */
int cli_split_name_value(const char *cmd, const char *flag, char *text, char **out_name,
                         char **out_value);

/* Whether two values of one NAME=VALUE flag (--dim, --in, -D, --arg) are the same value: the
 * same string, or two numbers of the same value however spelled ("4", "04" and "0x4"; "1",
 * "1.0" and "1e0"), integers compared exactly, others as doubles (two that differ as doubles
 * but round to one f32 still differ: the flag's dtype is not known yet; -0 and 0 differ, as
 * they do as floats); a flag given twice with the same value counts once. */
int cli_same_value(const char *a, const char *b);

/* A single-valued option's value into *slot: given twice with another value, a usage error
 * (printed) and -1 (the command line would not say which one applies); else 0. */
int cli_set_once(const char *cmd, const char *flag, const char **slot, const char *value);
/* Whether two spellings name one file or folder ("x.npy" and "./x.npy", "dir" and "dir/", a
 * symlink and its target), made already or not. */
int cli_same_path(const char *a, const char *b);
/* cli_set_once of a path: given twice, one file however spelled (cli_same_path) counts once. */
int cli_set_once_path(const char *cmd, const char *flag, const char **slot, const char *value);
/* --remote-cache URL: http://, https:// or redis://, else a usage error printed and 2. */
int cli_check_remote_url(const char *cmd, const char *url);

/* Options shared by compile, run and bench. */
typedef struct cli_compile_args {
  pto_compile_options opt;
  pto_binding scalars[64];
  pto_binding samples[64];
  const char *depfile;
  int no_cache;
  int32_t devices[PTO_MAX_DEVICES]; /* --devices (opt.devices points here once given) */
  const char *devices_text;         /* --devices as given, NULL: not given */
  const char *remote_cache;         /* --remote-cache as given, NULL: not given */
  cli_progress progress; /* the compile's bar, on a terminal (opt.progress_ctx points here) */
} cli_compile_args;

/* After parsing: --remote-cache with --no-cache (which reads and writes neither cache level) is
 * a usage error (printed, 2), else 0. */
int cli_check_compile_args(const char *cmd, const cli_compile_args *a);
/* Consumes one compile option at argv[*i] (and its value). Returns 1 if consumed, 0 if not a
 * compile option, -1 on a usage error (already printed). */
int cli_parse_compile_option(const char *cmd, cli_compile_args *a, int argc, char **argv, int *i);
void cli_compile_args_init(cli_compile_args *a);

/* PROG is a .ptir file (compiled through the cache unless no_cache) or a work dir (loaded,
 * stale parts rebuilt). *out_ir gets the program's IR for --check (may be NULL for a work dir
 * without program.ptir). */
pto_status cli_load_program(const char *prog, cli_compile_args *a, pto_program **out_program,
                            pto_ir_program **out_ir);

int cli_is_dir(const char *path);

/* Checks an output path before the run: not empty; a file path is not a directory and its
 * directory exists, and it is claimed (cli_claim_file) as "FLAG PATH"; a dir path is not a file,
 * and is claimed likewise while it does not exist yet (an existing dir refuses file outputs).
 * Prints a usage error and returns 2, else 0. */
int cli_check_output_path(const char *cmd, const char *flag, const char *path, int is_dir);
/* cli_check_output_path of a file that is claimed later, once the program says where the files
 * really go (cli_claim_records_and_dump). */
int cli_check_output_file_unclaimed(const char *cmd, const char *flag, const char *path);
/* Claims the file at path for this command, as the file it reads (output 0: the program, the
 * log) or one it will write (1), under label ("the program x.ptir", "--out x.npy"). A file
 * claimed before under another label (another spelling, a symlink or a hard link of it), where
 * either claim writes it, is a usage error naming both: an output over the program, or two
 * outputs in one file, would lose one of them. Returns 2 (the error printed), else 0. */
int cli_claim_file(const char *cmd, const char *label, const char *path, int output);
/* cli_claim_file of the program a command reads (PROG, the .ptir of pto compile), as "the
 * program PATH". */
int cli_claim_program(const char *cmd, const char *path);

/* pto compile -o DIR (workdir.c): under an exclusive lock on DIR, refuses (usage error) a DIR
 * holding hand edits or files pto did not write unless force, builds the program with build(ctx,
 * BUILD_DIR) into a build dir inside DIR and moves its files in (never over a file pto did not
 * write, never through a symlink), the manifest last; then removes the previous program's files
 * that nobody edited. Returns the exit status, the error printed. */
typedef pto_status (*cli_build_fn)(void *ctx, const char *build_dir);
int cli_compile_into_dir(const char *cmd, const char *dir, int force, cli_build_fn build,
                         void *ctx);
/* For the handler of SIGINT, SIGTERM and SIGHUP (main.c), async-signal-safe: removes the build
 * dir of a compile in progress (cli_compile_into_dir), and its DIR where that compile made it and
 * it is empty. */
void cli_abandon_compile(void);
/* The length of the first prefix of path (ending at a '/' or at its end) that does not exist:
 * pto_file_mkdirs(path) makes that folder and those below it. 0: path exists. */
size_t cli_missing_prefix(const char *path);
/* Removes the folders of path (modified) from the deepest up to its prefix of length top (those
 * made, from cli_missing_prefix), each only while it is empty; with syscalls alone, so a signal
 * handler may call it. Nothing when top is 0. */
void cli_remove_made_folders(char *path, size_t top);
/* Opens dir and takes flock LOCK_EX (exclusive) or LOCK_SH on it, saying on stderr when it has
 * to wait: the fd (closing it unlocks), or -1 with errno set. */
int cli_lock_dir(const char *cmd, const char *dir, int exclusive);

/* How bench and trace print statistics (cmd_trace.c). tree: -1 none, else the deepest level. */
typedef struct cli_stats_view {
  int tree, spread, json;
  const char *spread_text; /* --spread as given, NULL: not given */
} cli_stats_view;
void cli_stats_view_init(cli_stats_view *v);
/* --tree [N], --spread S, --json: 1 consumed, 0 not one of them, -1 usage error printed. */
int cli_parse_view_option(const char *cmd, cli_stats_view *v, int argc, char **argv, int *i);
/* NAME N or NAME=N with N >= min into *out: 1, or -1 usage error printed. */
int cli_int_option(const char *cmd, const char *name, int min, int argc, char **argv, int *i,
                   int *out);
/* --rank R, --slot S, --pid P: which dispatch of an L3 benchmark or log a tree shows. */
typedef struct cli_dispatch_sel {
  int rank, slot, pid; /* -1: not given */
} cli_dispatch_sel;
void cli_dispatch_sel_init(cli_dispatch_sel *d);
/* Whether any of --rank, --slot, --pid was given. */
int cli_dispatch_sel_given(const cli_dispatch_sel *d);
/* 1 consumed, 0 not one of them, -1 usage error printed. */
int cli_parse_dispatch_option(const char *cmd, cli_dispatch_sel *d, int argc, char **argv, int *i);
struct pto_dist_bench_stats;
/* With --tree (or a selection): the mean tree of the one dispatch selected (by rank and slot,
 * or by pid and slot); a selection that matches no dispatch, or none when there are several, is
 * a usage error listing how to choose: a mean never averages different dispatches. */
int cli_print_dist_tree(const char *cmd, const struct pto_dist_bench_stats *st,
                        const cli_stats_view *v, const cli_dispatch_sel *d);
struct pto_bench_stats;
int cli_print_stats(const char *cmd, const struct pto_bench_stats *st, const cli_stats_view *v);

/* --swimlane FILE or --swimlane=FILE (cmd_run.c): 1 consumed (the path into *out), 0 not it, -1
 * usage error printed. */
int cli_parse_swimlane_option(const char *cmd, int argc, char **argv, int *i, const char **out);
/* Writes w's last launch, recorded with its tasks, to path as Chrome trace-event JSON;
 * *out_ntasks (may be NULL) gets the tasks drawn. Errors name the file. */
pto_status cli_write_swimlane(pto_worker *w, const char *path, size_t *out_ntasks);
/* --swimlane-records FILE [--swimlane-level N]: PyPTO's chip_swimlane_records.json layout at
 * its level N (1-3, default 3: with the scheduler phases), with deps.json and func_names.json
 * (and a copy, name_map.json) written beside FILE (pto_swimlane_write_records_level). */
typedef struct cli_records {
  const char *path; /* NULL: not asked for */
  int level;        /* 0 until cli_prepare_swimlane_records */
  size_t made;      /* cli_make_records_folder: the prefix of FILE's folder it made (0: none) */
} cli_records;
/* Either option: 1 consumed, 0 not these, -1 usage error printed. */
int cli_parse_swimlane_records_option(const char *cmd, int argc, char **argv, int *i,
                                      cli_records *out);
/* w's last launch, recorded with its tasks (and at level 3 its phases). */
pto_status cli_write_swimlane_records(pto_worker *w, const cli_records *r);
/* --dump-args DIR and --dump-level N (run, bench): 1 consumed, 0 not these, -1 usage error
 * printed. *level starts at 0 (not given). */
int cli_parse_dump_option(const char *cmd, int argc, char **argv, int *i, const char **dir,
                          int *level);
/* After parsing: --dump-level without --dump-args, or out of 1-3, is a usage error (-1); the
 * level defaults to 2 (every argument with its data); DIR checked as an output folder. */
int cli_check_dump_options(const char *cmd, const char *dir, int *level);
/* After parsing: --swimlane-level without --swimlane-records, or out of 1-3, refused; the level
 * defaulted; FILE checked as an output file where its folder exists (else what exists of the
 * folder's path must be folders); 0, or a usage error printed and -1. */
int cli_prepare_swimlane_records(const char *cmd, cli_records *r);
/* Just before the run, every check passed: FILE's folder created (mkdir -p), so a command refused
 * before leaves no folder behind; 0, or a usage error printed and -1. (Claim the files again
 * then: a FILE through '..' of a folder just made, "new/../x.json", was not found before.) */
int cli_make_records_folder(const char *cmd, cli_records *r);
/* A command that failed (exit 1 or 2) removes the folders cli_make_records_folder made where
 * they are still empty (no records were written), as it leaves no other output behind. */
void cli_unmake_records_folder(const cli_records *r);
/* Once the program is loaded, before it runs: claims (cli_claim_file) the files its
 * --swimlane-records and --dump-args will write where they really go: for an L2 program FILE
 * and the files beside it, DIR/args.bin and DIR/args_dump.json; for a host program the same
 * names in each rank_R/dispatch_N/ folder (of FILE's folder, of DIR), of which only those that
 * exist already can hold another output. 0, or a usage error printed and -1. */
int cli_claim_records_and_dump(const char *cmd, const pto_program *p, const cli_records *r,
                               const char *dump_dir);
/* --transport shm|mpi (run, bench): 1 parsed, 0 not this option, -1 usage error (reported). */
int cli_parse_transport_option(const char *cmd, int argc, char **argv, int *i, const char **out);
/* The folder path names a file in, into dir (cap bytes): "." for a bare name, "/" at the root.
 * Returns where the file's name starts in path, or NULL for a bare name. */
const char *cli_folder_of(const char *path, char *dir, size_t cap);
/* --transport given for an L2 program (entry: its name as the user gave it): an
 * INVALID_ARGUMENT status saying it applies to host programs only; PTO_OK where none was given. */
pto_status cli_transport_needs_host(const char *transport, const char *entry);
/* A host program started by mpirun without the mpi transport: says so on stderr. */
void cli_note_mpi_launch(const char *cmd, const char *transport);

/* --timeline, --timeline-svg FILE, --timeline-width N (timeline.c). */
/* --timeline-width accepts 30 to this many columns. */
#define CLI_TIMELINE_MAX_WIDTH 10000
typedef struct cli_timeline {
  int text;        /* --timeline */
  const char *svg; /* --timeline-svg */
  int width;       /* --timeline-width; 0: the terminal's */
} cli_timeline;
static inline int cli_timeline_wanted(const cli_timeline *t) { return t->text || t->svg; }
/* 1 consumed, 0 not one of them, -1 usage error printed. */
int cli_parse_timeline_option(const char *cmd, cli_timeline *t, int argc, char **argv, int *i);
/* After parsing: --timeline-width without --timeline, or --timeline with --json (json: whether
 * it was given), is a usage error (printed, 2), else 0. */
int cli_check_timeline_options(const char *cmd, const cli_timeline *t, int json);
struct pto_swimlane_task;
/* Prints the timeline of tasks to stdout (--timeline) and/or writes the SVG. */
pto_status cli_show_timeline(const cli_timeline *t, const struct pto_swimlane_task *tasks, size_t n,
                             int ncores);
/* The same for w's last launch, recorded with its tasks. */
pto_status cli_show_worker_timeline(const cli_timeline *t, pto_worker *w);

int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_fmt(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_build_id(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_trace(int argc, char **argv);

int cmd_cache(int argc, char **argv);
int cmd_rebuild(int argc, char **argv);

extern const pto_cmd cli_cmd_compile, cli_cmd_run, cli_cmd_fmt, cli_cmd_check, cli_cmd_build_id;
extern const pto_cmd cli_cmd_bench, cli_cmd_trace;
extern const pto_cmd cli_cmd_cache, cli_cmd_rebuild;

#endif
