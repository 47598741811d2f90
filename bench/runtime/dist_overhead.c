/* The distributed worker's fixed costs (bench/RESULTS.md, "Distributed worker"):
 *
 *   dist_overhead [CALLS] [REPS] [NRANKS]       (default 2000 calls x 15 repetitions, 2 ranks)
 *
 * (a) per-dispatch host overhead of a prepared distributed worker on a 1-task program (one_task:
 *     y = x + c on a 16x64 f32 tile), with x and y resident, against the L2 launch of the same
 *     program through a handle with device tensors, in the same run. Two shapes of host code:
 *     one call per run (the whole run: host entry, dispatch, the chip's launch, the drain), and
 *     64 calls per run to the same device (dispatches pipelined through the chip's ring). The
 *     one-call row is each repetition's mean; "median of the single runs" is each repetition's
 *     median run, which a slice lost to another process now and then (milliseconds, where the
 *     host and a chip take turns on a CPU the busy process shares) does not move;
 * (b) prepare (open: shared mappings, fork, each chip's worker and core pool) and close;
 * (c) first touch of fresh shared memory against touching it again (why the heap is faulted in
 *     once, at allocation, and reused).
 *
 * With (a) come the thread switches per run: the context switches (voluntary: a thread blocked;
 * involuntary: preempted or yielded) of every thread of this process and of the chips, from
 * /proc, over the same loops. A one-call run needs two at least (the chip woken by the post, the
 * host woken by the reply) when neither spins. */
#include <dirent.h>
#include <stdalign.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_util.h"
#include "pto/dist.h"

#define R 16
#define C 64
#define BATCH 64

static int32_t host_one(const pto_host_api *api, const pto_host_args *a) {
  pto_host_call_arg args[3];
  memset(args, 0, sizeof args);
  args[0].kind = PTO_ORCH_ARG_IN, args[0].tensor = a->tensors[0];
  args[1].kind = PTO_ORCH_ARG_OUT, args[1].tensor = a->tensors[1];
  args[2].kind = PTO_ORCH_ARG_SCALAR, args[2].scalar = a->scalars[0];
  return api->call(api->ctx, 0, 0, args, 3);
}

static int32_t host_batch(const pto_host_api *api, const pto_host_args *a) {
  for (int i = 0; i < BATCH; i++)
    if (host_one(api, a)) return 1;
  return 0;
}

/* Context switches of every thread of process pid so far (0 if /proc cannot tell). */
static long ctx_switches(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  if (!d) return 0;
  long n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char sp[320], line[128];
    snprintf(sp, sizeof sp, "%s/%s/status", path, e->d_name);
    FILE *f = fopen(sp, "r");
    if (!f) continue;
    long v;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
          sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
        n += v;
    fclose(f);
  }
  closedir(d);
  return n;
}

/* The host process's and every chip's context switches (a chip that is a thread of this process,
 * pto_dist_config.chips "threads", is counted with it). */
static long all_switches(const pto_dist_worker *dw, int n) {
  long s = ctx_switches((int)getpid());
  for (int r = 0; r < n; r++)
    if (pto_dist_worker_chip_pid(dw, r) != (int)getpid())
      s += ctx_switches(pto_dist_worker_chip_pid(dw, r));
  return s;
}

static pto_program *host_prog(pto_host_entry_fn fn, pto_program *callee, int n) {
  pto_signature sig = *pto_program_signature(callee);
  sig.entry = "host";
  pto_program *p = NULL;
  B_CHECK(pto_program_create_host(&sig, fn, 1, &callee, n, NULL, &p));
  return p;
}

int main(int argc, char **argv) {
  long calls = b_arg(argc, argv, 1, 2000), reps = b_arg(argc, argv, 2, 15);
  int n = (int)b_arg(argc, argv, 3, 2);
  if (reps > 256) reps = 256;
  pto_program *callee = b_compile("one_task.ptir");

  /* (b) prepare and close, measured first: nothing else is mapped yet. */
  b_stat open_ms = {0}, close_ms = {0};
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = n;
  cfg.ncores_per_chip = 1;
  for (int i = 0; i < 5; i++) {
    pto_dist_worker *w = NULL;
    uint64_t t0 = b_now_ns();
    B_CHECK(pto_dist_worker_open(&cfg, &w));
    uint64_t t1 = b_now_ns();
    pto_dist_worker_close(w);
    b_add(&open_ms, (double)(t1 - t0) / 1e6);
    b_add(&close_ms, (double)(b_now_ns() - t1) / 1e6);
  }

  pto_dist_worker *dw = NULL;
  B_CHECK(pto_dist_worker_open(&cfg, &dw));
  pto_program *one = host_prog(host_one, callee, n), *batch = host_prog(host_batch, callee, n);
  static alignas(64) float x[R * C], got[R * C];
  for (int i = 0; i < R * C; i++)
    x[i] = (float)i;
  const int64_t shape[2] = {R, C};
  pto_dist_tensor *dx = NULL, *dy = NULL;
  B_CHECK(pto_dist_alloc_tensor(dw, 2, shape, PTO_DTYPE_F32, x, 0, &dx));
  B_CHECK(pto_dist_alloc_tensor(dw, 2, shape, PTO_DTYPE_F32, NULL, 0, &dy));
  pto_arg dargs[3] = {pto_arg_dist(dx), pto_arg_dist(dy), pto_arg_f32(1.0f)};

  pto_worker *w = b_open_worker(1);
  pto_handle *h = NULL;
  B_CHECK(pto_worker_register(w, callee, &h));
  pto_device_tensor *lx = NULL, *ly = NULL;
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, x, &lx));
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &ly));
  pto_arg largs[3] = {pto_arg_device(lx), pto_arg_device(ly), pto_arg_f32(1.0f)};

  B_CHECK(pto_dist_worker_run(dw, one, dargs, 3)); /* the chips load the callee once */
  b_stat l2 = {0}, d1 = {0}, d1each = {0}, db = {0}, over1 = {0}, overb = {0}, sw1 = {0}, swb = {0};
  double *each = malloc(sizeof(double) * (size_t)(calls > 0 ? calls : 1));
  if (!each) return 1;
  for (long r = 0; r < reps; r++) {
    uint64_t t0 = b_now_ns();
    for (long i = 0; i < calls; i++)
      B_CHECK(pto_handle_call(h, largs, 3));
    double l2us = (double)(b_now_ns() - t0) / 1e3 / (double)calls;
    long c0 = all_switches(dw, n);
    t0 = b_now_ns();
    uint64_t ti = t0;
    for (long i = 0; i < calls; i++) {
      B_CHECK(pto_dist_worker_run(dw, one, dargs, 3));
      uint64_t tn = b_now_ns();
      each[i] = (double)(tn - ti) / 1e3;
      ti = tn;
    }
    double d1us = (double)(ti - t0) / 1e3 / (double)calls;
    if (calls > 0) {
      qsort(each, (size_t)calls, sizeof *each, b_cmp_double);
      b_add(&d1each, each[calls / 2]);
    }
    long runs = calls / BATCH > 0 ? calls / BATCH : 1;
    long c1 = all_switches(dw, n);
    t0 = b_now_ns();
    for (long i = 0; i < runs; i++)
      B_CHECK(pto_dist_worker_run(dw, batch, dargs, 3));
    double dbus = (double)(b_now_ns() - t0) / 1e3 / (double)(runs * BATCH);
    long c2 = all_switches(dw, n);
    b_add(&sw1, (double)(c1 - c0) / (double)calls);
    b_add(&swb, (double)(c2 - c1) / (double)(runs * BATCH));
    b_add(&l2, l2us), b_add(&d1, d1us), b_add(&db, dbus);
    b_add(&over1, d1us - l2us), b_add(&overb, dbus - l2us);
  }
  long bad = 0;
  B_CHECK(pto_dist_copy_from(dw, got, dy, sizeof got));
  for (int i = 0; i < R * C; i++)
    bad += got[i] != x[i] + 1;

  /* (c) first touch of fresh MAP_SHARED memory vs touching it again. */
  const size_t bytes = 64u << 20;
  b_stat fresh = {0}, again = {0};
  for (int i = 0; i < 5; i++) {
    uint8_t *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t t0 = b_now_ns();
    memset(m, 1, bytes);
    uint64_t t1 = b_now_ns();
    memset(m, 2, bytes);
    uint64_t t2 = b_now_ns();
    b_add(&fresh, (double)bytes / (double)(t1 - t0)); /* GB/s */
    b_add(&again, (double)bytes / (double)(t2 - t1));
    munmap(m, bytes);
  }

  printf(
      "dist_overhead: %d ranks (1 core each), %ld calls x %ld repetitions; 1 task, 16x64 f32\n\n",
      n, calls, reps);
  b_header();
  b_row("L2: pto_handle_call, device tensors", &l2, "us/call");
  b_row("L3: pto_dist_worker_run, 1 call per run", &d1, "us/call");
  b_row("L3: one-call run, median of the single runs", &d1each, "us");
  b_row("L3: pto_dist_worker_run, 64 calls per run", &db, "us/call");
  b_row("L3 - L2 per dispatch, 1 call per run", &over1, "us");
  b_row("L3 - L2 per dispatch, 64 calls per run", &overb, "us");
  b_row("thread switches per run, 1 call per run", &sw1, "switches");
  b_row("thread switches per call, 64 calls per run", &swb, "switches");
  b_row("prepare: pto_dist_worker_open", &open_ms, "ms");
  b_row("close: pto_dist_worker_close", &close_ms, "ms");
  b_row("first touch of fresh shared memory (64 MiB memset)", &fresh, "GB/s");
  b_row("the same memory touched again", &again, "GB/s");
  printf("\nresults: %s\n", bad ? "WRONG" : "ok");
  free(each);
  pto_program_release(one);
  pto_program_release(batch);
  pto_dist_worker_close(dw);
  pto_worker_close(w);
  pto_program_release(callee);
  return bad != 0;
}
