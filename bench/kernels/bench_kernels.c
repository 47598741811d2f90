/* Kernel benchmarks (bench/RESULTS.md, "Kernels"): pto kernels side by side with hand-written C,
 * memcpy and OpenBLAS, interleaved in one run so that load on the machine hits every contender
 * alike.
 *
 *   bench_kernels [EW_N [SOFTMAX_M [MATMUL_N [REPS [NCORES]]]]]
 *                 (defaults 4096 4096 1024 10 2: the sizes of RESULTS.md)
 *
 *   (a) c = a + b and a fused chain c = relu(a * alpha + b) - b over [EW_N, EW_N] f32
 *       (ew.ptir), against the hand loops of peers.c and against memcpy of the same matrix;
 *   (b) row softmax over [SOFTMAX_M, 1024] f32 (softmax.ptir) against peers.c, every contender
 *       starting with its data out of the cache (evict_caches; 4096 rows are 16 MiB in and 16 MiB
 *       out, about one L3: before this, each peer read an input the one before it had left in
 *       L3);
 *   (c) C = A x B, [MATMUL_N]^3 f32 (matmul.ptir), against OpenBLAS cblas_sgemm (dlopen'ed at run
 *       time: libopenblas-dev is never a build dependency; skipped when it is missing) with
 *       OPENBLAS_NUM_THREADS = NCORES; with NCORES = 1, OpenBLAS and the direct kernel are timed
 *       by this thread's CPU time, as in (e);
 *   (d) the same with bf16 A and B into f32 C (matmul_bf16.ptir) against cblas_sbgemm of the
 *       OpenBLAS named by PTO_BENCH_SBGEMM_LIB (Debian's exports none; bench/kernels/sbgemm_peer.sh
 *       builds one from Debian's source; skipped without it).
 *   (e) the decode step's products, y = x W with x of M = 1 and M = 8 rows and W a
 *       [DECODE_K, DECODE_K] f32 weight (matmul_decode.ptir; DECODE_K = 4096 unless
 *       PTO_BENCH_DECODE_K says otherwise), against OpenBLAS cblas_sgemv (M = 1) and cblas_sgemm
 *       (M = 8), and the limit: memcpy of W's bytes on as many threads (a product that reads W
 *       once can go no faster than the memory delivers W), and a read of W alone (peer_read: no
 *       writes, so the rate the memory reads at, which memcpy's writes halve); pto's time is
 *       printed as a ratio to each. Three more rows run on threads made once and parked between
 *       reps (peer_ready_run: each rep wakes them and starts the clock once every one spins, so
 *       no thread's creation or wake-up is timed; wall clock even with one thread): "limit: read
 *       of W, threads ready" (each thread sums its contiguous share of W on 512-bit loads: the
 *       memory's ceiling), "pto, kernel direct, threads ready" (the direct kernel calls, as
 *       below), and "read in the tasks' 256-col blocks" (the same sum in the order a task of
 *       @m1 or @m8 reads W, 1 KiB of each row, rows 4 * DECODE_K bytes apart, without the
 *       kernel's prefetches), then a line "ceiling" with the ceiling's time over the peer's, the
 *       runtime's and the ready direct kernel's, paired by rep. Every contender starts with W
 *       out of the cache, and W is on transparent huge pages for all of them as for the runtime.
 *       W in panels: two more rows run the same products on W packed once, before the clock, by
 *       @pack_panels on the device into [DECODE_K / 256 * DECODE_K, 256] (panel j: columns j * 256
 *       .. j * 256 + 255 of all rows, contiguous; an inference engine packs resident weights so
 *       when it loads them): "pto, panels, runtime" (@m1p / @m8p, the same kernels, each task
 *       reading one contiguous 4 MiB panel at 4096) and "pto, panels, direct, threads ready",
 *       and a line "same clock (wall), W in panels" against the peer, which reads row-major W
 *       (what cblas takes), and against the runtime on row-major W, paired by rep. The packing's
 *       device wall is printed (not timed in the rows) and the panels checked bit for bit
 *       against the host's packing; every entry of the panels' products is checked like the
 *       others (the same fmaf chain in k order).
 *       K x N grid (M = 1, when the program has @m1g): one more row, "pto, @m1g grid, runtime",
 *       the product as 1024 x 1024 blocks of W (each task reads 4 KiB of each of 1024 rows; the
 *       last K block's task of each column block sums the block's partials in block order), timed
 *       in every rep right before @m1 (odd reps) or right after it (even reps), every entry
 *       checked bit for bit against its model (one fmaf chain in k order per block of rows, then
 *       0 + the blocks' sums in order: the interpreter's numbers for @m1g), and a line "same
 *       clock (wall), @m1g" against the peer and against @m1 (paired by rep: the two launches of
 *       a rep ran back to back). A variant of @m1g with another K block names it in
 *       PTO_BENCH_DECODE_KB (default 1024).
 * With NCORES = 1 the contenders in this thread are timed by its CPU time, and the peer also by the
 * wall clock, the runtime's (time spent descheduled counts on both sides): a row "OpenBLAS, wall"
 * and a line "same clock (wall)" with pto's ratio by the minima, the medians and the median of each
 * rep's paired ratio (the two ran back to back). A variant of the program (PTO_BENCH_KERNELS_DIR)
 * with another task width names it in PTO_BENCH_DECODE_BN (default 256 for M = 1 and M = 8;
 * DECODE_K a multiple of 1024). PTO_BENCH_DECODE_SKEW=BYTES allocates a device tensor of that many
 * bytes before the runtime's x and W, as a program's other tensors may lie before its weight. The
 * matmuls also check 64 entries bit for bit against fmaf in k order (the interpreter's numbers).
 * PTO_BENCH_KERNELS_ONLY, when set, is a comma-separated list of the sections to run (ew, softmax,
 * matmul, bf16, decode); all of them otherwise.
 *
 * Each pto program is measured two ways:
 *   "pto, runtime": a launch on a sim worker with NCORES cores and device tensors resident (no
 *     copies), timed by the launch's device wall span (chip.run.runner_run.device_wall: from the
 *     orchestration's start to the last task's end), so it includes task submission,
 *     dependency tracking and dispatch;
 *   "pto, kernel direct": the compiled kernel function (pto_program_kernel) called on NCORES
 *     threads over the same host buffers, one call per row block like the tasks, with the
 *     pto_core_ctx.flags the runtime would give them (non-temporal stores for tensors of 32 MiB
 *     or more together): the kernel code alone, without the runtime.
 * Peers run on NCORES threads (rows split evenly; threads are created per repetition, tens of
 * microseconds). Every output is checked against its peer. Times: min and median over REPS.
 * PTO_BENCH_KERNELS_DIR, when set, is where the .ptir programs are read from (to try variants);
 * PTO_BENCH_STREAM_STORE_BYTES, the worker's stream_store_bytes (and the direct calls' flags);
 * PTO_BENCH_CORES=default|strict, the worker's cores (see main; unset: NCORES of each type).
 * PTO_BENCH_EW_ANATOMY=ROUNDS adds to (a) what an add launch's time is made of, against the hand
 * loop's threads (ew_anatomy): the per-task records of ROUNDS launches, alternated with the hand
 * loop timed part by part, and how many of the launches one thread ran alone.
 * PTO_BENCH_DECODE_TRACE=1 prints before (e)'s tables each rep's times in the order they ran (the
 * peer, runtime, direct, memcpy and read of the same rep side by side, for paired ratios), and
 * after each launch its tasks as core:start-end in us from the first task's start (recorded:
 * do both threads run, and when; recording costs a clock read a task), e.g. to tell a rep one
 * thread ran alone from a slow one; then a line with the orchestration's end and each task's
 * ready>start in us from the device wall's start (the orchestration's), e.g. how long a task
 * waited for a core thread to wake; and after the reps a line of what made the launches longer
 * than their work, median and max over reps: when the last core to start started, how far apart
 * the cores' last task ends lay (the one done first idled), the longest task over the shortest;
 * and a line of where the device wall goes beside the tasks, median and max over reps, in us: (a)
 * its start to the first task's start, (b) the gaps between a core's tasks summed over the
 * cores, (c) the idle end (the cores' last ends apart), (d) the last task's end to its end.
 * In (a), each contender runs PTO_BENCH_EW_WARM times (default 2) untimed right before each timed
 * run, so that every one finds its own data as it left it (in the cache at 4 MiB). Once was not
 * enough on the Zen 4 host (issue #31 item 4): after the hand add's passes over its 12 MiB (it
 * follows memcpy, which reads its a and writes its c), the runtime's one untimed launch left its
 * own 12 MiB out of the cache, and the timed launch's tasks ran at 26-39 us each against 11-15
 * (runtime median 0.21-0.28 ms against 0.10-0.12 ms with two, the hand loop's 0.13-0.20 either
 * way; with the caches evicted by a 128 MiB read instead of the hand add, one was enough).
 * PTO_BENCH_EW_WARM=0 makes them take turns instead, as rounds 1-9 did: the hand add then
 * followed memcpy, which had just read its a and written its c, while the runtime's launch
 * followed the hand add's 12 MiB over other buffers (0.71-0.77x at 4 MiB, against 1.08-1.09x
 * warm, in the same session at load 16). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "peers.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"

#ifndef BENCH_KERNELS_DIR
#define BENCH_KERNELS_DIR "."
#endif

#define CHECK(call) check_status((call), #call, __LINE__)
static void check_status(pto_status s, const char *what, int line) {
  if (!s) return;
  fprintf(stderr, "bench_kernels.c:%d: %s failed: %s\n", line, what, pto_status_message(s));
  pto_status_free(s);
  exit(1);
}

static void *xalloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* xalloc on transparent huge pages where the system gives them on request (madvise mode), as
 * the sim runtime's device memory is (runtime/devmem.c): a contender streaming W from 4 KiB
 * pages pays a page walk every 4 KiB, which the runtime's tasks do not. */
static void *xalloc_huge(size_t bytes) {
  size_t huge = 2u << 20, n = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, n);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
#ifdef MADV_HUGEPAGE
  (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of the calling thread: time spent descheduled on a shared machine does not count. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- statistics ------------------------------------------------------------------------- */

#define MAX_REPS 100

typedef struct bstat {
  const char *name;
  double v[MAX_REPS]; /* ms */
  int n;
} bstat;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double stat_min(const bstat *s) {
  double m = s->v[0];
  for (int i = 1; i < s->n; i++)
    m = s->v[i] < m ? s->v[i] : m;
  return m;
}

static double stat_median(const bstat *s) {
  double t[MAX_REPS];
  memcpy(t, s->v, sizeof(double) * (size_t)s->n);
  qsort(t, (size_t)s->n, sizeof(double), cmp_double);
  return s->n % 2 ? t[s->n / 2] : (t[s->n / 2 - 1] + t[s->n / 2]) / 2;
}

static void add(bstat *s, double ms) {
  if (s->n < MAX_REPS) s->v[s->n++] = ms;
}

/* One table row: time and a rate (work / time) for min and median, and the ratio of this row's
 * rate to the reference row's (1.0 = as fast), median over median and min over min. */
static void row(const bstat *s, double work, const char *unit, const bstat *ref) {
  double mn = stat_min(s), md = stat_median(s);
  printf("| %-34s | %9.3f | %9.3f | %8.2f | %8.2f %-6s |", s->name, mn, md, work / mn / 1e6,
         work / md / 1e6, unit);
  if (ref)
    printf(" %5.2fx | %5.2fx |\n", stat_min(ref) / mn, stat_median(ref) / md);
  else
    printf("     -  |     -  |\n");
}

static void table_header(const char *title, const char *ref_name) {
  printf("\n%s\n\n| %-34s | %9s | %9s | %8s | %15s | vs %s: min | median |\n", title, "contender",
         "min ms", "median ms", "min", "median", ref_name);
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
}

/* ---- pto programs ----------------------------------------------------------------------- */

static pto_program *compile(const char *file, const char *entry) {
  char path[4096];
  const char *dir = getenv("PTO_BENCH_KERNELS_DIR");
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : BENCH_KERNELS_DIR, file);
  pto_ir_program *ir = NULL;
  CHECK(pto_ir_parse_file(path, &ir));
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.entry = entry;
  pto_program *p = NULL;
  CHECK(pto_compile(ir, &opt, &p));
  pto_ir_program_destroy(ir);
  return p;
}

static pto_kernel_fn kernel_of(const pto_program *p, const char *name) {
  for (int i = 0; i < pto_program_kernel_count(p); i++)
    if (!strcmp(pto_program_kernel_name(p, i), name)) return pto_program_kernel(p, i);
  fprintf(stderr, "kernel %s not found\n", name);
  exit(1);
}

/* A launch with resident tensors; returns the device wall in ms. */
static double launch(pto_handle *h, pto_worker *w, const pto_arg *args, size_t nargs) {
  CHECK(pto_handle_call(h, args, nargs));
  pto_launch_record rec;
  CHECK(pto_worker_last_launch(w, &rec));
  for (int i = 0; i < rec.nspans; i++)
    if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall"))
      return (double)rec.spans[i].dur_ns / 1e6;
  fprintf(stderr, "no device_wall span\n");
  exit(1);
}

static pto_device_tensor *dev_tensor_dt(pto_worker *w, int64_t rows, int64_t cols, pto_dtype dt,
                                        const void *init) {
  const int64_t shape[2] = {rows, cols};
  pto_device_tensor *t = NULL;
  CHECK(pto_worker_alloc_tensor(w, 2, shape, dt, init, &t));
  return t;
}

static pto_device_tensor *dev_tensor(pto_worker *w, int64_t rows, int64_t cols, const float *init) {
  return dev_tensor_dt(w, rows, cols, PTO_DTYPE_F32, init);
}

static void dev_read(pto_worker *w, pto_device_tensor *t, float *out, size_t n) {
  CHECK(pto_worker_copy_from(w, out, pto_device_tensor_addr(t), n * sizeof(float)));
}

static pto_kernel_tensor ktensor_dt(const void *data, pto_dtype dt, int64_t rows, int64_t cols,
                                    int64_t stride) {
  pto_kernel_tensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)data;
  t.rank = 2;
  t.dtype = dt;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.stride[0] = stride;
  t.stride[1] = 1;
  return t;
}

static pto_kernel_tensor ktensor(const float *data, int64_t rows, int64_t cols, int64_t stride) {
  return ktensor_dt(data, PTO_DTYPE_F32, rows, cols, stride);
}

/* Direct kernel calls: the kernel over row blocks of `block` rows, `ntensors` [rows, cols]
 * views per call (tensor i starts at base[i] + row0 * cols), split across threads like
 * peer_split. Matmul has its own (mm_part): a call per block of C a task computes. */
typedef struct direct_ctx {
  pto_kernel_fn fn;
  const float *base[3];
  int ntensors;
  int64_t rows, cols, block;
  uint64_t slots[2];
  uint64_t scratch_bytes;
  int32_t flags; /* pto_core_ctx.flags, as the runtime would set them (direct_flags) */
} direct_ctx;

/* pto_run_config.stream_store_bytes of the worker: the runtime's default (32 MiB), or
 * PTO_BENCH_STREAM_STORE_BYTES (UINT64_MAX: never), to measure the choice. */
static uint64_t g_stream_store_bytes = 32ull << 20;

/* The flags the worker gives a task whose tensors' buffers hold `bytes` together, so the direct
 * calls run the code the tasks do. */
static int32_t direct_flags(uint64_t bytes) {
  return bytes >= g_stream_store_bytes ? PTO_CORE_STREAM_STORES : 0;
}

static void run_kernel(pto_kernel_fn fn, const pto_kernel_tensor *t, const uint64_t *slots,
                       pto_core_ctx *ctx) {
  int32_t rc = fn(t, slots, ctx);
  if (rc) {
    fprintf(stderr, "kernel failed: %d (%lld, %lld)\n", rc, (long long)ctx->err_detail[0],
            (long long)ctx->err_detail[1]);
    exit(1);
  }
}

static void direct_part(void *p, int part, int nparts) {
  direct_ctx *d = p;
  pto_core_ctx ctx = {
      .core_id = part, .ncores = nparts, .scratch_size = d->scratch_bytes, .flags = d->flags};
  ctx.scratch = xalloc(d->scratch_bytes);
  int64_t lo, hi;
  peer_split(d->rows, d->block, part, nparts, &lo, &hi);
  for (int64_t r = lo; r < hi; r += d->block) {
    int64_t n = hi - r < d->block ? hi - r : d->block;
    pto_kernel_tensor t[3];
    for (int i = 0; i < d->ntensors; i++)
      t[i] = ktensor(d->base[i] + r * d->cols, n, d->cols, d->cols);
    run_kernel(d->fn, t, d->slots, &ctx);
  }
  free(ctx.scratch);
}

static double direct(direct_ctx *d, int nthreads) {
  double t0 = now_ms();
  peer_parallel(nthreads, direct_part, d);
  return now_ms() - t0;
}

/* ---- peers on threads --------------------------------------------------------------------- */

typedef struct peer_ctx {
  int what; /* 0 memcpy, 1 add, 2 chain, 3 softmax, 4 softmax -ffast-math, 5 read of a, 6 the
             * same summed as floats on 512-bit loads (peer_read_sum) */
  const float *a, *b;
  float *c;
  float alpha;
  int64_t rows, cols;
} peer_ctx;

/* peer_read's results, one per part (64: peer_parallel's most), so the reads are not dropped */
static volatile uint64_t g_read_sink[64];
static volatile float g_sum_sink[64];

static void peer_part(void *p, int part, int nparts) {
  peer_ctx *x = p;
  int64_t lo, hi;
  peer_split(x->rows, 1, part, nparts, &lo, &hi);
  switch (x->what) {
  case 0:
    peer_memcpy(x->c + lo * x->cols, x->a + lo * x->cols,
                (size_t)((hi - lo) * x->cols) * sizeof(float));
    break;
  case 1: peer_add(x->a, x->b, x->c, x->cols, lo, hi); break;
  case 2: peer_chain(x->a, x->b, x->c, x->alpha, x->cols, lo, hi); break;
  case 3: peer_softmax(x->a, x->c, x->cols, lo, hi); break;
  case 4: peer_softmax_fast(x->a, x->c, x->cols, lo, hi); break;
  case 7: /* 256-column blocks of a, part p taking blocks p, p + nparts, ... (the decode tasks') */
    for (int64_t j = part; j < x->cols / 256; j += nparts)
      g_sum_sink[part] += peer_read_block(x->a + j * 256, x->rows, x->cols);
    break;
  case 6:
    g_sum_sink[part] = peer_read_sum(x->a + lo * x->cols, (size_t)((hi - lo) * x->cols));
    break;
  default:
    g_read_sink[part] =
        peer_read(x->a + lo * x->cols, (size_t)((hi - lo) * x->cols) * sizeof(float));
    break;
  }
}

static double peer(peer_ctx *x, int nthreads) {
  double t0 = now_ms();
  peer_parallel(nthreads, peer_part, x);
  return now_ms() - t0;
}

/* ---- checks --------------------------------------------------------------------------------- */

/* Largest |got - want| / max(|want|, floor); prints it and fails above tol. */
static void compare(const char *what, const float *got, const float *want, size_t n, double floor,
                    double tol) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]);
    double m = fabs((double)want[i]) > floor ? fabs((double)want[i]) : floor;
    if (!(d / m <= worst)) worst = d / m; /* NaN too */
  }
  printf("check %-44s max rel diff %.3g %s\n", what, worst, worst <= tol ? "ok" : "FAIL");
  if (!(worst <= tol)) exit(1);
}

/* Reads 128 MiB (four times a Zen 5 core complex's L3, whatever size the VM reports), so that
 * the next contender finds none of its data in the cache. Without it, a contender that reads
 * the same input as the one before it finds much of it still in L3 (a 4096x1024 softmax reads
 * 16 MiB): the -ffast-math loop ran after the glibc loop on the same x, the direct kernel after
 * it, while the runtime read its own device copy cold. */
static volatile float g_evict_sink;
static double g_quiesce_ms; /* time quiesce waited, in all */
static int g_quiesce_n;     /* and how often it was called */

static double process_cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Waits until no other thread of this process burns CPU (under 25% of one CPU over 2 ms), at
 * most 1 s: OpenBLAS's threads spin about 0.1 s after each call (2^28 cycles, its
 * THREAD_TIMEOUT) and pto's core threads a little after a launch, so a contender timed right
 * after another shared the CPUs with that one's spinning threads (at 2 threads the direct
 * kernel after sgemv ran at 0.4-0.6x its speed). Every contender starts alike: its data out of
 * the cache and the other contenders' threads asleep. PTO_BENCH_NO_QUIESCE=1 leaves them. */
static void quiesce(void) {
  static int off = -1;
  if (off < 0) {
    const char *e = getenv("PTO_BENCH_NO_QUIESCE");
    off = e && *e && *e != '0';
  }
  if (off) return;
  double t0 = now_ms();
  for (int i = 0; i < 500; i++) {
    double c0 = process_cpu_ms();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    if (process_cpu_ms() - c0 < 0.5) break;
  }
  g_quiesce_ms += now_ms() - t0;
  g_quiesce_n++;
}

static void evict_caches(void) {
  quiesce();
  static float *buf;
  const size_t n = (128u << 20) / sizeof(float);
  if (!buf) {
    buf = xalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
      buf[i] = (float)(i & 7);
  }
  float acc = 0;
  for (size_t i = 0; i < n; i += 16)
    acc += buf[i];
  g_evict_sink = acc;
}

static void fill(float *x, size_t n, uint32_t seed, float lo, float hi) {
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = lo + (hi - lo) * (float)(s >> 8) / 16777216.0f;
  }
}

/* ---- (a) what a launch's time is made of (PTO_BENCH_EW_ANATOMY) --------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The hand loop's parts with their start and end times (CLOCK_MONOTONIC ns). */
typedef struct timed_peer {
  peer_ctx *x;
  uint64_t start[2], end[2];
} timed_peer;

static void timed_part(void *p, int part, int nparts) {
  timed_peer *t = p;
  t->start[part] = now_ns();
  peer_part(t->x, part, nparts);
  t->end[part] = now_ns();
}

enum { AN_CALL, AN_WAKE, AN_GAPS, AN_TAIL, AN_RET, AN_WALL, AN_TOTAL, AN_ORCH, AN_BUSY, AN_N };

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* rounds (at most 400) launches of h (add) and of the hand loop on 2 threads, alternated, each
 * split into: from the call to the first task's start (hand: to part 0's start, i.e. creating the
 * other thread), from there to the last core's or thread's first start (the other's wake-up), the
 * gaps between one core's tasks (summed over the cores), the tail (the last end less the earliest
 * last end of a core that ran tasks), the last end to the call's return (hand: the join), the
 * time the bench counts (runtime: the device wall; hand: the whole call), the whole call, the
 * orchestration's span, and the time inside tasks (hand: inside its parts) summed over the cores.
 * Printed: median (min) in us of each, over the rounds. */
static void ew_anatomy(pto_worker *w, pto_handle *h, const pto_arg *args, peer_ctx *hand,
                       int ncores, int rounds) {
  enum { MAXR = 400 };
  static double pv[AN_N][MAXR], hv[AN_N][MAXR];
  int one_core = 0; /* launches whose tasks all ran as one core: one thread ran them all */
  if (rounds > MAXR) rounds = MAXR;
  CHECK(pto_worker_set_record_tasks(w, true));
  for (int r = 0; r < rounds; r++) {
    timed_peer tp = {.x = hand};
    uint64_t h0 = now_ns();
    peer_parallel(ncores < 2 ? ncores : 2, timed_part, &tp);
    uint64_t h1 = now_ns();
    int np = ncores < 2 ? 1 : 2;
    uint64_t last_start = tp.start[0], first_end = tp.end[0], last_end = tp.end[0];
    for (int i = 1; i < np; i++) {
      last_start = tp.start[i] > last_start ? tp.start[i] : last_start;
      first_end = tp.end[i] < first_end ? tp.end[i] : first_end;
      last_end = tp.end[i] > last_end ? tp.end[i] : last_end;
    }
    hv[AN_CALL][r] = (double)(tp.start[0] - h0) / 1e3;
    hv[AN_WAKE][r] = (double)(last_start - tp.start[0]) / 1e3;
    hv[AN_GAPS][r] = 0;
    hv[AN_TAIL][r] = (double)(last_end - first_end) / 1e3;
    hv[AN_RET][r] = (double)(h1 - last_end) / 1e3;
    hv[AN_WALL][r] = hv[AN_TOTAL][r] = (double)(h1 - h0) / 1e3;
    hv[AN_ORCH][r] = 0;
    hv[AN_BUSY][r] =
        (double)(tp.end[0] - tp.start[0] + (np > 1 ? tp.end[1] - tp.start[1] : 0)) / 1e3;

    uint64_t p0 = now_ns();
    double wall = launch(h, w, args, 3);
    uint64_t p1 = now_ns();
    const pto_task_record *tr = NULL;
    size_t nt = 0;
    CHECK(pto_worker_last_launch_tasks(w, &tr, &nt));
    pto_launch_record rec;
    CHECK(pto_worker_last_launch(w, &rec));
    double orch = 0;
    for (int i = 0; i < rec.nspans; i++)
      if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall.orch"))
        orch = (double)rec.spans[i].dur_ns / 1e3;
    enum { MAXC = 64 };
    uint64_t cfirst[MAXC] = {0}, clast[MAXC] = {0}, cbusy[MAXC] = {0};
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < nt; i++) {
      int c = tr[i].core;
      if (c < 0 || c >= MAXC) continue;
      if (!cfirst[c] || tr[i].start_ns < cfirst[c]) cfirst[c] = tr[i].start_ns;
      if (tr[i].end_ns > clast[c]) clast[c] = tr[i].end_ns;
      cbusy[c] += tr[i].end_ns - tr[i].start_ns;
      first = tr[i].start_ns < first ? tr[i].start_ns : first;
      last = tr[i].end_ns > last ? tr[i].end_ns : last;
    }
    uint64_t last_first = first, first_last = last, gaps = 0;
    int used = 0;
    for (int c = 0; c < MAXC; c++) {
      if (!cfirst[c]) continue;
      used++;
      last_first = cfirst[c] > last_first ? cfirst[c] : last_first;
      first_last = clast[c] < first_last ? clast[c] : first_last;
      gaps += (clast[c] - cfirst[c]) - cbusy[c];
    }
    one_core += used == 1 && nt > 1;
    pv[AN_CALL][r] = (double)(first - p0) / 1e3;
    pv[AN_WAKE][r] = (double)(last_first - first) / 1e3;
    pv[AN_GAPS][r] = (double)gaps / 1e3;
    pv[AN_TAIL][r] = (double)(last - first_last) / 1e3;
    pv[AN_RET][r] = (double)(p1 - last) / 1e3;
    pv[AN_WALL][r] = wall * 1e3;
    pv[AN_TOTAL][r] = (double)(p1 - p0) / 1e3;
    pv[AN_ORCH][r] = orch;
    pv[AN_BUSY][r] = 0;
    for (int c = 0; c < MAXC; c++)
      pv[AN_BUSY][r] += (double)cbusy[c] / 1e3;
  }
  CHECK(pto_worker_set_record_tasks(w, false));
  static const char *names[AN_N] = {"call -> first task start",
                                    "first start -> other core's first start",
                                    "gaps between a core's tasks (summed)",
                                    "tail: last end - other's last end",
                                    "last end -> return",
                                    "bench's time (device wall | thread wall)",
                                    "whole call",
                                    "orchestration (pto)",
                                    "time in tasks | parts, summed"};
  printf("\nanatomy of an add launch, %d rounds alternated, us, median (min) (pto: "
         "per-task records; hand: its 2 threads' parts)\n\n| part | pto runtime | hand loop "
         "|\n| --- | ---: | ---: |\n",
         rounds);
  for (int k = 0; k < AN_N; k++) {
    double pm = median_of(pv[k], rounds), hm = median_of(hv[k], rounds); /* sorts: [0] is the min */
    printf("| %s | %.1f (%.1f) | %.1f (%.1f) |\n", names[k], pm, pv[k][0], hm, hv[k][0]);
  }
  /* A launch run by one thread alone takes about twice as long: its other core thread never got a
   * CPU during it (on a busy host, one woken onto the dispatching thread's CPU waited there for
   * the launch's end until the pool steered it off: runtime/pool.c, steer). */
  printf("\nlaunches whose tasks all ran as one core (one thread ran them all): %d of %d\n",
         one_core, rounds);
}

/* ---- (a) elementwise ---------------------------------------------------------------------- */

static void bench_elementwise(pto_worker *w, int64_t n, int reps, int ncores) {
  size_t numel = (size_t)(n * n), bytes = numel * sizeof(float);
  float *a = xalloc(bytes), *b = xalloc(bytes), *c = xalloc(bytes), *d = xalloc(bytes);
  fill(a, numel, 1, -1, 1);
  fill(b, numel, 2, -1, 1);
  memset(c, 0, bytes);
  memset(d, 0, bytes);
  const float alpha = 0.75f;

  pto_program *padd = compile("ew.ptir", "add"), *pchain = compile("ew.ptir", "chain");
  pto_handle *hadd = NULL, *hchain = NULL;
  CHECK(pto_worker_register(w, padd, &hadd));
  CHECK(pto_worker_register(w, pchain, &hchain));
  pto_device_tensor *da = dev_tensor(w, n, n, a), *db = dev_tensor(w, n, n, b),
                    *dc = dev_tensor(w, n, n, NULL);
  pto_arg args[4] = {pto_arg_device(da), pto_arg_device(db), pto_arg_device(dc),
                     pto_arg_f32(alpha)};

  direct_ctx dadd = {.fn = kernel_of(padd, "add_rows"),
                     .base = {a, b, d},
                     .ntensors = 3,
                     .rows = n,
                     .cols = n,
                     .block = 16,
                     .scratch_bytes = pto_program_scratch_bytes(padd),
                     .flags = direct_flags(3 * (uint64_t)bytes)};
  direct_ctx dchain = dadd;
  dchain.fn = kernel_of(pchain, "chain_rows");
  dchain.scratch_bytes = pto_program_scratch_bytes(pchain);
  pto_scalar sa = {.dtype = PTO_DTYPE_F32, .f = alpha};
  dchain.slots[0] = pto_scalar_to_slot(sa);

  peer_ctx mc = {.what = 0, .a = a, .c = c, .rows = n, .cols = n};
  peer_ctx hadd_c = {.what = 1, .a = a, .b = b, .c = c, .rows = n, .cols = n};
  peer_ctx hchain_c = {.what = 2, .a = a, .b = b, .c = c, .alpha = alpha, .rows = n, .cols = n};

  bstat s_mc = {.name = "memcpy (read n + write n)"};
  bstat s_hadd = {.name = "add: hand loop, gcc -O3"},
        s_padd = {.name = "add: pto, runtime (device wall)"},
        s_dadd = {.name = "add: pto, kernel direct"};
  bstat s_hch = {.name = "chain: hand loop, gcc -O3"},
        s_pch = {.name = "chain: pto, runtime (device wall)"},
        s_dch = {.name = "chain: pto, kernel direct"};
  /* warm every buffer and code path once */
  peer(&mc, ncores), peer(&hadd_c, ncores), peer(&hchain_c, ncores);
  launch(hadd, w, args, 3), launch(hchain, w, args, 4);
  direct(&dadd, ncores), direct(&dchain, ncores);
  const char *wv = getenv("PTO_BENCH_EW_WARM");
  int warm = wv && *wv ? atoi(wv) : 2; /* untimed runs of its own before each timed run */
  if (warm < 0) warm = 0;
  char warm_text[64];
  snprintf(warm_text, sizeof warm_text, ", each after %d untimed run%s of its own", warm,
           warm == 1 ? "" : "s");
  /* the contender's time into stat s, after warm untimed runs of its own */
#define TIMED(s, run)                                                                              \
  do {                                                                                             \
    for (int w_ = 0; w_ < warm; w_++)                                                              \
      (void)(run);                                                                                 \
    add(&(s), (run));                                                                              \
  } while (0)
  for (int r = 0; r < reps; r++) {
    TIMED(s_mc, peer(&mc, ncores));
    TIMED(s_hadd, peer(&hadd_c, ncores));
    TIMED(s_padd, launch(hadd, w, args, 3));
    TIMED(s_dadd, direct(&dadd, ncores));
    TIMED(s_hch, peer(&hchain_c, ncores));
    TIMED(s_pch, launch(hchain, w, args, 4));
    TIMED(s_dch, direct(&dchain, ncores));
  }
#undef TIMED

  /* checks: the last results of each contender */
  float *got = xalloc(bytes);
  peer(&hadd_c, ncores);
  launch(hadd, w, args, 3);
  dev_read(w, dc, got, numel);
  compare("add: pto runtime vs hand loop", got, c, numel, 1e-30, 0);
  direct(&dadd, ncores);
  compare("add: pto kernel direct vs hand loop", d, c, numel, 1e-30, 0);
  peer(&hchain_c, ncores);
  launch(hchain, w, args, 4);
  dev_read(w, dc, got, numel);
  compare("chain: pto runtime vs hand loop", got, c, numel, 1e-30, 0);
  direct(&dchain, ncores);
  compare("chain: pto kernel direct vs hand loop", d, c, numel, 1e-30, 0);

  char title[256];
  snprintf(title, sizeof title,
           "(a) elementwise, [%lld, %lld] f32 (%.0f MiB per matrix), %d threads/cores, %d reps%s; "
           "rate = bytes read + written per second (GB/s)",
           (long long)n, (long long)n, (double)bytes / 1048576.0, ncores, reps,
           warm ? warm_text : ", taking turns (PTO_BENCH_EW_WARM=0)");
  table_header(title, "hand loop");
  row(&s_mc, 2.0 * (double)bytes, "GB/s", NULL);
  row(&s_hadd, 3.0 * (double)bytes, "GB/s", &s_hadd);
  row(&s_padd, 3.0 * (double)bytes, "GB/s", &s_hadd);
  row(&s_dadd, 3.0 * (double)bytes, "GB/s", &s_hadd);
  row(&s_hch, 3.0 * (double)bytes, "GB/s", &s_hch);
  row(&s_pch, 3.0 * (double)bytes, "GB/s", &s_hch);
  row(&s_dch, 3.0 * (double)bytes, "GB/s", &s_hch);
  /* fraction of memcpy bandwidth: (3 bytes / t) / (2 bytes / t_memcpy) */
  printf("\nfraction of memcpy bandwidth (min | median): add pto runtime %.2f | %.2f, "
         "add hand %.2f | %.2f, chain pto runtime %.2f | %.2f, chain hand %.2f | %.2f\n",
         1.5 * stat_min(&s_mc) / stat_min(&s_padd), 1.5 * stat_median(&s_mc) / stat_median(&s_padd),
         1.5 * stat_min(&s_mc) / stat_min(&s_hadd), 1.5 * stat_median(&s_mc) / stat_median(&s_hadd),
         1.5 * stat_min(&s_mc) / stat_min(&s_pch), 1.5 * stat_median(&s_mc) / stat_median(&s_pch),
         1.5 * stat_min(&s_mc) / stat_min(&s_hch), 1.5 * stat_median(&s_mc) / stat_median(&s_hch));

  const char *an = getenv("PTO_BENCH_EW_ANATOMY");
  if (an && atoi(an) > 0) ew_anatomy(w, hadd, args, &hadd_c, ncores, atoi(an));

  free(got);
  CHECK(pto_worker_free_tensor(w, da));
  CHECK(pto_worker_free_tensor(w, db));
  CHECK(pto_worker_free_tensor(w, dc));
  pto_handle_unregister(hadd);
  pto_handle_unregister(hchain);
  pto_program_release(padd);
  pto_program_release(pchain);
  free(a), free(b), free(c), free(d);
}

/* ---- (b) softmax ----------------------------------------------------------------------------- */

static void bench_softmax(pto_worker *w, int64_t m, int reps, int ncores) {
  const int64_t n = 1024;
  size_t numel = (size_t)(m * n), bytes = numel * sizeof(float);
  float *x = xalloc(bytes), *y = xalloc(bytes), *d = xalloc(bytes);
  fill(x, numel, 3, -8, 8);
  memset(y, 0, bytes);
  memset(d, 0, bytes);

  pto_program *p = compile("softmax.ptir", NULL);
  pto_handle *h = NULL;
  CHECK(pto_worker_register(w, p, &h));
  pto_device_tensor *dx = dev_tensor(w, m, n, x), *dy = dev_tensor(w, m, n, NULL);
  pto_arg args[2] = {pto_arg_device(dx), pto_arg_device(dy)};
  direct_ctx dk = {.fn = kernel_of(p, "softmax_rows"),
                   .base = {x, d},
                   .ntensors = 2,
                   .rows = m,
                   .cols = n,
                   .block = 64,
                   .scratch_bytes = pto_program_scratch_bytes(p),
                   .flags = direct_flags(2 * (uint64_t)bytes)};
  peer_ctx hc = {.what = 3, .a = x, .c = y, .rows = m, .cols = n};
  float *yf = xalloc(bytes);
  memset(yf, 0, bytes);
  peer_ctx hf = {.what = 4, .a = x, .c = yf, .rows = m, .cols = n};

  bstat s_f = {.name = "softmax: hand C, -O3 -ffast-math"};
  bstat s_h = {.name = "softmax: hand C, gcc -O3"},
        s_p = {.name = "softmax: pto, runtime (device wall)"},
        s_d = {.name = "softmax: pto, kernel direct"};
  peer(&hc, ncores), peer(&hf, ncores), launch(h, w, args, 2), direct(&dk, ncores);
  /* Each contender starts with nothing of its data in the cache (evict_caches). */
  for (int r = 0; r < reps; r++) {
    evict_caches();
    add(&s_h, peer(&hc, ncores));
    evict_caches();
    add(&s_f, peer(&hf, ncores));
    evict_caches();
    add(&s_p, launch(h, w, args, 2));
    evict_caches();
    add(&s_d, direct(&dk, ncores));
  }
  float *got = xalloc(bytes);
  dev_read(w, dy, got, numel);
  compare("softmax: pto runtime vs hand C", got, y, numel, 1e-30, 1e-6);
  compare("softmax: pto kernel direct vs hand C", d, y, numel, 1e-30, 1e-6);
  compare("softmax: -ffast-math hand C vs hand C", yf, y, numel, 1e-30, 1e-5);

  char title[160];
  snprintf(title, sizeof title,
           "(b) row softmax, [%lld, %lld] f32, %d threads/cores, %d reps; rate = rows per "
           "microsecond",
           (long long)m, (long long)n, ncores, reps);
  table_header(title, "hand C");
  row(&s_h, (double)m * 1e3, "rows/us", &s_h);
  row(&s_p, (double)m * 1e3, "rows/us", &s_h);
  row(&s_d, (double)m * 1e3, "rows/us", &s_h);
  table_header("    the same against the -ffast-math (libmvec) loop", "fast-math C");
  row(&s_f, (double)m * 1e3, "rows/us", &s_f);
  row(&s_p, (double)m * 1e3, "rows/us", &s_f);
  row(&s_d, (double)m * 1e3, "rows/us", &s_f);

  free(got);
  CHECK(pto_worker_free_tensor(w, dx));
  CHECK(pto_worker_free_tensor(w, dy));
  pto_handle_unregister(h);
  pto_program_release(p);
  free(x), free(y), free(d), free(yf);
}

/* ---- (c) matmul, (d) bf16 matmul ---------------------------------------------------------- */

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
typedef void (*sbgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                          const uint16_t *a, int lda, const uint16_t *b, int ldb, float beta,
                          float *c, int ldc);

/* OpenBLAS, looked up at run time so that the build never needs it: path, or Debian's
 * libopenblas when NULL. Returns the library (NULL when missing) and its configuration. */
static void *open_blas(const char *path, int ncores, char *out_config, size_t n) {
  char threads[16];
  snprintf(threads, sizeof threads, "%d", ncores);
  setenv("OPENBLAS_NUM_THREADS", threads, 1); /* read when the library initializes */
  /* OpenBLAS on its best kernel for this CPU: OPENBLAS_CORETYPE (which forces a core type, e.g.
   * Haswell's AVX2 kernels on an AVX-512 machine) and OPENBLAS_L2_SIZE are removed from this
   * process before the library initializes; what they were is printed with the config. */
  static char was[128];
  if (!was[0]) {
    const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
    snprintf(was, sizeof was, "OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s unset for the peer",
             ct ? ct : "(none)", l2 ? l2 : "(none)");
  }
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_L2_SIZE");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!path) lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!path && !lib) lib = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  void (*set_threads)(int) = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
  if (set_threads) set_threads(ncores);
  char *(*get_config)(void) = (char *(*)(void))dlsym(lib, "openblas_get_config");
  int (*get_threads)(void) = (int (*)(void))dlsym(lib, "openblas_get_num_threads");
  char *(*get_core)(void) = (char *(*)(void))dlsym(lib, "openblas_get_corename");
  snprintf(out_config, n, "%s: %s, core %s, %d threads (%s)", path ? path : "libopenblas.so.0",
           get_config ? get_config() : "?", get_core ? get_core() : "?",
           get_threads ? get_threads() : -1, was);
  return lib;
}

typedef struct mm_ctx {
  pto_kernel_fn fn;
  const char *a, *b; /* n x n elements of es bytes */
  float *c;
  size_t es;
  pto_dtype dt;
  int64_t n;
  int64_t bm, bn; /* the block of C a task computes */
  uint64_t scratch_bytes;
} mm_ctx;

/* The block of C one task computes (the programs' @main tiling): matmul.ptir 256x128,
 * matmul_bf16.ptir 128x256. MATMUL_N is a multiple of MM_N, which both divide. */
#define MM_F32_BM 256
#define MM_F32_BN 128
#define MM_BF16_BM 128
#define MM_BF16_BN 256
#define MM_N 256

static void mm_part(void *p, int part, int nparts) {
  mm_ctx *x = p;
  pto_core_ctx ctx = {.core_id = part, .ncores = nparts, .scratch_size = x->scratch_bytes};
  ctx.scratch = xalloc(x->scratch_bytes);
  int64_t bm = x->bm, bn = x->bn, nbi = x->n / bm, nbj = x->n / bn;
  for (int64_t blk = part; blk < nbi * nbj; blk += nparts) {
    int64_t i = blk / nbj, j = blk % nbj;
    pto_kernel_tensor t[3] = {
        ktensor_dt(x->a + (size_t)(i * bm * x->n) * x->es, x->dt, bm, x->n, x->n),
        ktensor_dt(x->b + (size_t)(j * bn) * x->es, x->dt, x->n, bn, x->n),
        ktensor(x->c + i * bm * x->n + j * bn, bm, bn, x->n)};
    run_kernel(x->fn, t, NULL, &ctx);
  }
  free(ctx.scratch);
}

/* C = A x B, [n]^3: f32 (matmul.ptir against cblas_sgemm) or bf16 inputs into f32 (matmul_bf16.ptir
 * against cblas_sbgemm; PTO_BENCH_SBGEMM_LIB names an OpenBLAS built with it, as
 * bench/kernels/sbgemm_peer.sh builds one: Debian's exports none). */
static void bench_matmul(pto_worker *w, int64_t n, int reps, int ncores, int bf16) {
  char config[768] = "";
  const char *peer_path = bf16 ? getenv("PTO_BENCH_SBGEMM_LIB") : NULL;
  if (peer_path && !*peer_path) peer_path = NULL;
  void *lib = open_blas(peer_path, ncores, config, sizeof config);
  sgemm_fn sgemm = !bf16 && lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
  sbgemm_fn sbgemm = bf16 && lib ? (sbgemm_fn)dlsym(lib, "cblas_sbgemm") : NULL;
  int have_peer = sgemm || sbgemm;
  pto_dtype dt = bf16 ? PTO_DTYPE_BF16 : PTO_DTYPE_F32;
  size_t numel = (size_t)(n * n), bytes = numel * sizeof(float), es = pto_dtype_size(dt);
  /* On huge pages, as the runtime's tensors are (xalloc_huge): OpenBLAS packs its operands, but
   * the direct kernel reads A's and B's windows row by row, each row 4 KiB from the next: on 4 KiB
   * pages a page walk per row that the runtime's tasks do not pay. */
  float *a = xalloc_huge(bytes), *b = xalloc_huge(bytes), *c = xalloc_huge(bytes),
        *d = xalloc_huge(bytes);
  fill(a, numel, 4, -1, 1);
  fill(b, numel, 5, -1, 1);
  uint16_t *a16 = NULL, *b16 = NULL;
  if (bf16) {
    a16 = xalloc_huge(numel * 2);
    b16 = xalloc_huge(numel * 2);
    for (size_t i = 0; i < numel; i++) {
      a16[i] = pto_f32_to_bf16(a[i]);
      b16[i] = pto_f32_to_bf16(b[i]);
      a[i] = pto_bf16_to_f32(a16[i]); /* the values the products see */
      b[i] = pto_bf16_to_f32(b16[i]);
    }
  }
  const void *ain = bf16 ? (const void *)a16 : a, *bin = bf16 ? (const void *)b16 : b;
  memset(c, 0, bytes);
  memset(d, 0, bytes);

  pto_program *p = compile(bf16 ? "matmul_bf16.ptir" : "matmul.ptir", NULL);
  pto_handle *h = NULL;
  CHECK(pto_worker_register(w, p, &h));
  pto_device_tensor *da = dev_tensor_dt(w, n, n, dt, ain), *db = dev_tensor_dt(w, n, n, dt, bin),
                    *dc = dev_tensor(w, n, n, NULL);
  pto_arg args[3] = {pto_arg_device(da), pto_arg_device(db), pto_arg_device(dc)};
  mm_ctx mk = {.fn = kernel_of(p, bf16 ? "matmul_block_bf16" : "matmul_block"),
               .a = ain,
               .b = bin,
               .c = d,
               .es = es,
               .dt = dt,
               .n = n,
               .bm = bf16 ? MM_BF16_BM : MM_F32_BM,
               .bn = bf16 ? MM_BF16_BN : MM_F32_BN,
               .scratch_bytes = pto_program_scratch_bytes(p)};
  int N = (int)n;
#define PEER()                                                                                     \
  do {                                                                                             \
    if (sgemm) sgemm(101, 111, 111, N, N, N, 1, a, N, b, N, 0, c, N);                              \
    if (sbgemm) sbgemm(101, 111, 111, N, N, N, 1, a16, N, b16, N, 0, c, N);                        \
  } while (0)

  bstat s_b = {.name = bf16 ? "sbgemm: OpenBLAS" : "sgemm: OpenBLAS"},
        s_p = {.name = "matmul: pto, runtime (device wall)"},
        s_d = {.name = "matmul: pto, kernel direct"};
  PEER();
  launch(h, w, args, 3);
  peer_parallel(ncores, mm_part, &mk);
  double (*clk)(void) = ncores == 1 ? cpu_ms : now_ms; /* as bench_decode */
  for (int r = 0; r < reps; r++) {
    double t0;
    if (have_peer) {
      t0 = clk();
      PEER();
      add(&s_b, clk() - t0);
    }
    add(&s_p, launch(h, w, args, 3));
    t0 = clk();
    peer_parallel(ncores, mm_part, &mk);
    add(&s_d, clk() - t0);
  }
#undef PEER
  float *got = xalloc(bytes);
  dev_read(w, dc, got, numel);
  compare("matmul: pto kernel direct vs pto runtime", d, got, numel, 1e-30, 0);
  if (have_peer) {
    /* Different summation orders: compare relative to the row's magnitude (|a| |b| sum ~ n/4). */
    compare(bf16 ? "matmul bf16: pto runtime vs OpenBLAS" : "matmul: pto runtime vs OpenBLAS", got,
            c, numel, (double)n / 16, 1e-5);
  }
  /* 64 entries: the interpreter's numbers (fmaf in k order) bit for bit, and a double-precision
   * dot product within rounding */
  float *want = c; /* the peer's output is checked above */
  for (int64_t t = 0; t < 64; t++) {
    int64_t i = (t * 131) % n, j = (t * 71) % n;
    double s = 0;
    float f = 0;
    for (int64_t k = 0; k < n; k++) {
      s += (double)a[i * n + k] * b[k * n + j];
      f = fmaf(a[i * n + k], b[k * n + j], f);
    }
    want[t] = (float)s;
    d[t] = got[i * n + j];
    if (memcmp(&f, &d[t], sizeof f)) {
      fprintf(stderr, "matmul: [%lld,%lld] is %a, the fmaf chain in k order %a\n", (long long)i,
              (long long)j, (double)d[t], (double)f);
      exit(1);
    }
  }
  printf("check %-44s bit-identical ok\n", "matmul: 64 entries vs fmaf in k order");
  compare("matmul: pto runtime vs double, 64 entries", d, want, 64, (double)n / 16, 1e-5);

  char title[200];
  snprintf(title, sizeof title,
           "(%c) matmul, [%lld]^3 %s, %d threads/cores, %d reps; rate = GFLOP/s (2 n^3)",
           bf16 ? 'd' : 'c', (long long)n, bf16 ? "bf16 into f32" : "f32", ncores, reps);
  table_header(title, "OpenBLAS");
  double flops = 2.0 * (double)n * (double)n * (double)n;
  if (have_peer)
    row(&s_b, flops, "GFLOPS", &s_b);
  else if (bf16)
    printf("| cblas_sbgemm not found (%s; Debian's OpenBLAS has none: "
           "PTO_BENCH_SBGEMM_LIB=$(bench/kernels/sbgemm_peer.sh)): skipped |\n",
           peer_path ? peer_path : "libopenblas.so.0");
  else
    printf("| OpenBLAS not found (apt-get install libopenblas-dev): skipped |\n");
  row(&s_p, flops, "GFLOPS", have_peer ? &s_b : NULL);
  row(&s_d, flops, "GFLOPS", have_peer ? &s_b : NULL);
  if (have_peer) printf("\nOpenBLAS: %s\n", config);

  free(got);
  CHECK(pto_worker_free_tensor(w, da));
  CHECK(pto_worker_free_tensor(w, db));
  CHECK(pto_worker_free_tensor(w, dc));
  pto_handle_unregister(h);
  pto_program_release(p);
  free(a), free(b), free(c), free(d), free(a16), free(b16);
}

/* ---- (e) the decode step's products ------------------------------------------------------- */

typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                         const float *x, int incx, float beta, float *y, int incy);

typedef struct dec_ctx {
  pto_kernel_fn fn;
  const float *x, *w;
  float *y;
  int64_t m, k, n;
  uint64_t scratch_bytes;
  int panels; /* w is W in panels (dec_pack): task j's columns are K rows of bn, contiguous */
} dec_ctx;

/* the columns of y one task of matmul_decode.ptir computes: @m1's, @m8's */
#define DEC_BN1 256
#define DEC_BN8 256

/* DEC_BN1 (m = 1) or DEC_BN8, or PTO_BENCH_DECODE_BN for a variant of the program
 * (PTO_BENCH_KERNELS_DIR) */
static int64_t dec_bn(int64_t m) {
  const char *e = getenv("PTO_BENCH_DECODE_BN");
  return e && *e ? atol(e) : m == 1 ? DEC_BN1 : DEC_BN8;
}

static void dec_part(void *p, int part, int nparts) {
  dec_ctx *x = p;
  pto_core_ctx ctx = {.core_id = part, .ncores = nparts, .scratch_size = x->scratch_bytes};
  ctx.scratch = xalloc(x->scratch_bytes);
  int64_t bn = dec_bn(x->m);
  for (int64_t j = part; j < x->n / bn; j += nparts) {
    pto_kernel_tensor t[3] = {ktensor(x->x, x->m, x->k, x->k),
                              x->panels ? ktensor(x->w + j * bn * x->k, x->k, bn, bn)
                                        : ktensor(x->w + j * bn, x->k, bn, x->n),
                              ktensor(x->y + j * bn, x->m, bn, x->n)};
    run_kernel(x->fn, t, NULL, &ctx);
  }
  free(ctx.scratch);
}

/* Whether the program has @m1g (a variant of it in PTO_BENCH_KERNELS_DIR may not) */
static int dec_has_m1g(void) {
  char path[4096];
  const char *dir = getenv("PTO_BENCH_KERNELS_DIR");
  snprintf(path, sizeof path, "%s/matmul_decode.ptir", dir && *dir ? dir : BENCH_KERNELS_DIR);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int has = 0;
  while (!has && fgets(line, sizeof line, f))
    has = !strncmp(line, "orch @m1g(", 10);
  fclose(f);
  return has;
}

/* @m1g's K block: 1024, or PTO_BENCH_DECODE_KB for a variant of the program */
static int64_t dec_kb(void) {
  const char *e = getenv("PTO_BENCH_DECODE_KB");
  return e && *e ? atol(e) : 1024;
}

/* W [k, n] into panels of bn columns (the layout @pack_panels writes): panel j holds columns
 * j * bn .. j * bn + bn - 1 of all k rows, one after the other, as a [n / bn * k, bn] matrix. */
static void dec_pack(const float *w, float *wp, int64_t k, int64_t n, int64_t bn) {
  for (int64_t j = 0; j < n / bn; j++)
    for (int64_t r = 0; r < k; r++)
      memcpy(wp + (j * k + r) * bn, w + r * n + j * bn, (size_t)bn * 4);
}

/* Every entry of y ([m, n], from x [m, k] and W [k, n]) against the interpreter's numbers, bit
 * for bit; exits on the first that differs. Those are the fmaf chain in k order (kb 0), or for a
 * K x N grid of kb-row blocks (@m1g) one fmaf chain in k order per block, each from 0, and
 * 0 + the blocks' sums in block order. */
static void dec_check_fmaf(const char *what, const float *x, const float *wt, const float *y,
                           int64_t m, int64_t k, int64_t n, int64_t kb) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float f = 0;
      for (int64_t b = 0; b < k; b += kb ? kb : k) {
        float g = 0;
        for (int64_t q = b; q < (kb ? b + kb : k); q++)
          g = fmaf(x[i * k + q], wt[q * n + j], g);
        f = kb ? f + g : g;
      }
      if (memcmp(&f, &y[i * n + j], sizeof f)) {
        fprintf(stderr, "decode: %s[%lld,%lld] is %a, the fmaf chain in k order %a\n", what,
                (long long)i, (long long)j, (double)y[i * n + j], (double)f);
        exit(1);
      }
    }
  char line[128];
  if (kb)
    snprintf(line, sizeof line, "decode: %severy entry vs fmaf in k order per %lld rows, summed",
             what, (long long)kb);
  else
    snprintf(line, sizeof line, "decode: %severy entry vs fmaf in k order", what);
  printf("check %-44s bit-identical ok\n", line);
}

/* What makes a launch slower than its tasks' work (dec_trace_tasks, a value a rep): the start of
 * the last core to start (us from the device wall's start: a core thread's wake-up), how far
 * apart the cores' last task ends lie (ms: the one that finished first idled), and the longest
 * task over the shortest (a core that ran slow, or a task preempted). */
typedef struct dec_anatomy {
  bstat late, tail, spread;
  bstat first, gaps, tailend; /* where the device wall goes beside the tasks (dec_trace_tasks) */
} dec_anatomy;

static double stat_max(const bstat *s) {
  double m = s->v[0];
  for (int i = 1; i < s->n; i++)
    m = s->v[i] > m ? s->v[i] : m;
  return m;
}

/* PTO_BENCH_DECODE_TRACE: the tasks of the last launch (rep r), each as core:start-end in us
 * from the first task's start, then from the device wall's start, each added to an. Returns 1
 * when one core ran them all. */
static int dec_trace_tasks(pto_worker *w, int64_t m, int r, dec_anatomy *an) {
  const pto_task_record *t = NULL;
  size_t n = 0;
  CHECK(pto_worker_last_launch_tasks(w, &t, &n));
  uint64_t t0 = UINT64_MAX;
  for (size_t i = 0; i < n; i++)
    if (t[i].core >= 0 && t[i].start_ns < t0) t0 = t[i].start_ns;
  int alone = 1;
  printf("tasks m=%lld rep %d:", (long long)m, r);
  for (size_t i = 0; i < n; i++) {
    printf(" %d:%.0f-%.0f", t[i].core, (double)(t[i].start_ns - t0) / 1e3,
           (double)(t[i].end_ns - t0) / 1e3);
    alone &= t[i].core == t[0].core;
  }
  printf("\n");
  /* the same tasks from the device wall's start (the orchestration's): when each was ready
   * (submitted) and started, and the orchestration's end */
  pto_launch_record rec;
  CHECK(pto_worker_last_launch(w, &rec));
  uint64_t d0 = 0, o1 = 0;
  for (int i = 0; i < rec.nspans; i++) {
    if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall")) d0 = rec.spans[i].ts_ns;
    if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall.orch"))
      o1 = rec.spans[i].ts_ns + rec.spans[i].dur_ns;
  }
  printf("ready m=%lld rep %d: orch end %.1f; tasks ready>start:", (long long)m, r,
         (double)(o1 - d0) / 1e3);
  for (size_t i = 0; i < n; i++)
    printf(" %.1f>%.1f", (double)(t[i].ready_ns - d0) / 1e3, (double)(t[i].start_ns - d0) / 1e3);
  printf("\n");
  /* per core (at most 64 ids): its first start and last end */
  uint64_t first[64], last[64];
  int used[64] = {0};
  double lo = 0, hi = 0;
  for (size_t i = 0; i < n; i++) {
    int c = t[i].core;
    double d = (double)(t[i].end_ns - t[i].start_ns) / 1e6;
    if (!i || d < lo) lo = d;
    if (!i || d > hi) hi = d;
    if (c < 0 || c >= 64) continue;
    if (!used[c] || t[i].start_ns < first[c]) first[c] = t[i].start_ns;
    if (!used[c] || t[i].end_ns > last[c]) last[c] = t[i].end_ns;
    used[c] = 1;
  }
  uint64_t late = 0, end_lo = UINT64_MAX, end_hi = 0, early = UINT64_MAX, busy = 0, span = 0;
  for (int c = 0; c < 64; c++) {
    if (!used[c]) continue;
    if (first[c] > late) late = first[c];
    if (first[c] < early) early = first[c];
    if (last[c] < end_lo) end_lo = last[c];
    if (last[c] > end_hi) end_hi = last[c];
    span += last[c] - first[c];
  }
  for (size_t i = 0; i < n; i++)
    if (t[i].core >= 0 && t[i].core < 64) busy += t[i].end_ns - t[i].start_ns;
  uint64_t w1 = 0;
  for (int i = 0; i < rec.nspans; i++)
    if (!strcmp(rec.spans[i].name, "chip.run.runner_run.device_wall"))
      w1 = rec.spans[i].ts_ns + rec.spans[i].dur_ns;
  if (n && late >= d0) {
    add(&an->late, (double)(late - d0) / 1e3);
    add(&an->tail, (double)(end_hi - end_lo) / 1e6);
    add(&an->spread, lo > 0 ? hi / lo : 1);
    /* (a) the device wall's start to the first task's start, (b) the gaps between tasks on each
     * core, summed over the cores, (d) the last task's end to the device wall's end (us); the
     * idle end (c) is tail */
    add(&an->first, (double)(early - d0) / 1e3);
    add(&an->gaps, (double)(span > busy ? span - busy : 0) / 1e3);
    add(&an->tailend, w1 > end_hi ? (double)(w1 - end_hi) / 1e3 : 0);
  }
  return alone;
}

/* The median over reps of a's time over b's in the same rep (a paired ratio: each rep's two
 * contenders ran one after the other, so a rep where the host was busier counts once). */
static double paired_median(const bstat *a, const bstat *b) {
  double t[MAX_REPS];
  int n = a->n < b->n ? a->n : b->n;
  for (int i = 0; i < n; i++)
    t[i] = a->v[i] / b->v[i];
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* pto's time (runtime p, kernel direct d) over a limit's lim, by the minima and the medians. */
static void limit_ratios(const char *of, const bstat *p, const bstat *d, const bstat *lim) {
  printf("pto's time / %s: runtime min %.2fx median %.2fx, direct min %.2fx median %.2fx\n", of,
         stat_min(p) / stat_min(lim), stat_median(p) / stat_median(lim),
         stat_min(d) / stat_min(lim), stat_median(d) / stat_median(lim));
}

/* y = x W, x [m, k], W [k, n]: the same reps interleaved, pto (runtime and direct), OpenBLAS and
 * memcpy of W, each after evict_caches. With one thread (ncores 1) every contender but the
 * runtime runs in this thread, timed by its CPU time (cpu_ms), which time spent descheduled on a
 * loaded machine does not inflate; the runtime row stays its device wall. */
static void bench_decode(pto_worker *w, int64_t m, int64_t k, int reps, int ncores) {
  char config[768] = "";
  void *lib = open_blas(NULL, ncores, config, sizeof config);
  sgemv_fn sgemv = lib && m == 1 ? (sgemv_fn)dlsym(lib, "cblas_sgemv") : NULL;
  sgemm_fn sgemm = lib && m > 1 ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
  int have_peer = sgemv || sgemm;
  int64_t n = k;
  size_t wn = (size_t)(k * n), xn = (size_t)(m * k), yn = (size_t)(m * n);
  float *x = xalloc(xn * 4), *wt = xalloc_huge(wn * 4), *yd = xalloc(yn * 4), *yp = xalloc(yn * 4),
        *wc = xalloc_huge(wn * 4);
  fill(x, xn, 6, -1, 1);
  fill(wt, wn, 7, -1, 1);
  memset(yd, 0, yn * 4);
  memset(yp, 0, yn * 4);
  memset(wc, 0, wn * 4);
  pto_program *p = compile("matmul_decode.ptir", m == 1 ? "m1" : "m8");
  pto_handle *h = NULL;
  CHECK(pto_worker_register(w, p, &h));
  /* PTO_BENCH_DECODE_SKEW=BYTES: a device tensor of that many bytes allocated first, as a
   * program's other tensors may lie before W in the device memory */
  const char *skew = getenv("PTO_BENCH_DECODE_SKEW");
  pto_device_tensor *ds = skew && atol(skew) >= 4 ? dev_tensor(w, 1, atol(skew) / 4, NULL) : NULL;
  pto_device_tensor *dx = dev_tensor(w, m, k, x), *dw = dev_tensor(w, k, n, wt),
                    *dy = dev_tensor(w, m, n, NULL);
  if (ds)
    printf("decode: W at %llu bytes past a page, after a %ld-byte tensor (PTO_BENCH_DECODE_SKEW)\n",
           (unsigned long long)(pto_device_tensor_addr(dw) % 4096), atol(skew) / 4 * 4);
  pto_arg args[3] = {pto_arg_device(dx), pto_arg_device(dw), pto_arg_device(dy)};
  /* @m1g, when the program has it (M = 1): the same product as a K x N grid of blocks of W, each
   * block's partials summed in block order; timed beside @m1 in every rep, the two in turns */
  pto_program *pg = m == 1 && dec_has_m1g() ? compile("matmul_decode.ptir", "m1g") : NULL;
  pto_handle *hg = NULL;
  pto_device_tensor *dyg = NULL;
  if (pg) {
    CHECK(pto_worker_register(w, pg, &hg));
    dyg = dev_tensor(w, m, n, NULL);
  }
  pto_arg gargs[3] = {pto_arg_device(dx), pto_arg_device(dw),
                      dyg ? pto_arg_device(dyg) : pto_arg_device(dy)};
  /* W in panels (matmul_decode.ptir's @pack_panels, @m1p, @m8p): packed once on the device by
   * @pack_panels from the resident row-major W, before the clock (an inference engine packs its
   * weights when it loads them); the packing's device wall is printed, and the panels checked bit
   * for bit against the host's packing (dec_pack), which the direct kernel reads */
  int64_t bn = dec_bn(m);
  pto_program *pk = compile("matmul_decode.ptir", "pack_panels"),
              *pp = compile("matmul_decode.ptir", m == 1 ? "m1p" : "m8p");
  pto_handle *hk = NULL, *hp = NULL;
  CHECK(pto_worker_register(w, pk, &hk));
  CHECK(pto_worker_register(w, pp, &hp));
  float *wpk = xalloc_huge(wn * 4), *gotw = xalloc_huge(wn * 4), *ypd = xalloc(yn * 4);
  memset(ypd, 0, yn * 4);
  dec_pack(wt, wpk, k, n, bn);
  pto_device_tensor *dwp = dev_tensor(w, n / bn * k, bn, NULL), *dyp = dev_tensor(w, m, n, NULL);
  pto_arg kargs[2] = {pto_arg_device(dw), pto_arg_device(dwp)},
          pargs[3] = {pto_arg_device(dx), pto_arg_device(dwp), pto_arg_device(dyp)};
  evict_caches();
  double pack_first = launch(hk, w, kargs, 2);
  evict_caches();
  double pack_again = launch(hk, w, kargs, 2);
  dev_read(w, dwp, gotw, wn);
  if (memcmp(gotw, wpk, wn * 4)) {
    fprintf(stderr, "decode: @pack_panels's panels differ from the host's packing\n");
    exit(1);
  }
  printf("check %-44s bit-identical ok\n", "decode: @pack_panels vs the host's packing");
  printf("decode: W packed into %lld-column panels by @pack_panels once, before the clock: device "
         "wall %.3f ms (first launch), %.3f ms (again)\n",
         (long long)bn, pack_first, pack_again);
  dec_ctx dk = {.fn = kernel_of(p, m == 1 ? "gemv_1" : "gemm_8"),
                .x = x,
                .w = wt,
                .y = yd,
                .m = m,
                .k = k,
                .n = n,
                .scratch_bytes = pto_program_scratch_bytes(p)};
  dec_ctx dkp = dk;
  dkp.fn = kernel_of(pp, m == 1 ? "gemv_1" : "gemm_8");
  dkp.w = wpk;
  dkp.y = ypd;
  dkp.panels = 1;
  dkp.scratch_bytes = pto_program_scratch_bytes(pp);
  peer_ctx cp = {.what = 0, .a = wt, .c = wc, .rows = k, .cols = n},
           cr = {.what = 5, .a = wt, .rows = k, .cols = n},
           cs = {.what = 6, .a = wt, .rows = k, .cols = n},
           cb = {.what = 7, .a = wt, .rows = k, .cols = n};
  int K = (int)k, N = (int)n, M = (int)m;
#define PEER()                                                                                     \
  do {                                                                                             \
    if (sgemv) sgemv(101, 112, K, N, 1, wt, N, x, 1, 0, yp, 1);                                    \
    if (sgemm) sgemm(101, 111, 111, M, N, K, 1, x, K, wt, N, 0, yp, N);                            \
  } while (0)
  char bname[64];
  snprintf(bname, sizeof bname, "%s: OpenBLAS", m == 1 ? "sgemv" : "sgemm");
  bstat s_b = {.name = bname}, s_p = {.name = "pto, runtime (device wall)"},
        s_d = {.name = "pto, kernel direct"}, s_m = {.name = "limit: memcpy of W"},
        s_r = {.name = "limit: read of W (no writes)"}, s_bw = {.name = "sgemv: OpenBLAS, wall"},
        s_c = {.name = "limit: read of W, threads ready"},
        s_dr = {.name = "pto, kernel direct, threads ready"},
        s_cb = {.name = "read in the tasks' 256-col blocks"},
        s_pp = {.name = "pto, panels, runtime (device wall)"},
        s_dpr = {.name = "pto, panels, direct, threads ready"},
        s_g = {.name = "pto, @m1g grid, runtime (device wall)"};
  PEER();
  launch(h, w, args, 3);
  launch(hp, w, pargs, 3);
  if (hg) launch(hg, w, gargs, 3);
  peer_parallel(ncores, dec_part, &dk);
  peer(&cp, ncores);
  peer_ready_start(ncores);
  peer_ready_run(peer_part, &cs);
  peer_ready_run(dec_part, &dkp);
  double (*clk)(void) = ncores == 1 ? cpu_ms : now_ms;
  /* PTO_BENCH_DECODE_TRACE=1: each rep's times (ms) in the order they ran, one line a rep, and
   * where and when each task of the runtime's launch ran */
  const char *tr = getenv("PTO_BENCH_DECODE_TRACE");
  int trace = tr && *tr && *tr != '0', alone = 0;
  dec_anatomy an = {{0}, {0}, {0}, {0}, {0}, {0}};
  if (trace) CHECK(pto_worker_set_record_tasks(w, true));
  for (int r = 0; r < reps; r++) {
    double t0;
    if (have_peer) {
      evict_caches();
      double w0 = now_ms();
      t0 = clk();
      PEER();
      add(&s_b, clk() - t0);
      add(&s_bw, now_ms() - w0); /* the runtime's clock, for the same-clock ratio */
    }
    /* @m1g before @m1 in odd reps, after it in even ones */
    if (hg && r % 2) {
      evict_caches();
      add(&s_g, launch(hg, w, gargs, 3));
    }
    evict_caches();
    add(&s_p, launch(h, w, args, 3));
    if (trace) alone += dec_trace_tasks(w, m, r, &an);
    if (hg && !(r % 2)) {
      evict_caches();
      add(&s_g, launch(hg, w, gargs, 3));
    }
    /* the same product on W in panels, right after the row-major one */
    evict_caches();
    add(&s_pp, launch(hp, w, pargs, 3));
    evict_caches();
    t0 = clk();
    peer_parallel(ncores, dec_part, &dk);
    add(&s_d, clk() - t0);
    evict_caches();
    t0 = clk();
    peer_parallel(ncores, peer_part, &cp);
    add(&s_m, clk() - t0);
    evict_caches();
    t0 = clk();
    peer_parallel(ncores, peer_part, &cr);
    add(&s_r, clk() - t0);
    /* the memory's ceiling: the same read on threads already spinning when the clock starts */
    evict_caches();
    add(&s_c, peer_ready_run(peer_part, &cs));
    /* the kernel the same way: the kernel code against the memory's ceiling, without the
     * threads' creation (s_d) or the runtime's launch (s_p) */
    evict_caches();
    add(&s_dr, peer_ready_run(dec_part, &dk));
    evict_caches();
    add(&s_dpr, peer_ready_run(dec_part, &dkp));
    evict_caches();
    add(&s_cb, peer_ready_run(peer_part, &cb));
  }
  peer_ready_stop();
#undef PEER
  if (trace) CHECK(pto_worker_set_record_tasks(w, false));
  if (trace)
    for (int r = 0; r < s_p.n; r++)
      printf("trace m=%lld rep %d: %s %.3f runtime %.3f direct %.3f memcpy %.3f read %.3f ready "
             "%.3f direct-ready %.3f blocks-ready %.3f\n",
             (long long)m, r, have_peer ? "peer" : "-", have_peer ? s_b.v[r] : 0.0, s_p.v[r],
             s_d.v[r], s_m.v[r], s_r.v[r], s_c.v[r], s_dr.v[r], s_cb.v[r]);
  if (trace)
    printf("trace m=%lld: launches whose tasks all ran on one core: %d of %d\n", (long long)m,
           alone, s_p.n);
  if (trace && an.late.n)
    printf("trace m=%lld: per launch, median (max) over reps: the last core to start started at "
           "%.1f (%.1f) us from the device wall's start; the cores' last ends %.3f (%.3f) ms "
           "apart; longest task / shortest %.2f (%.2f)\n",
           (long long)m, stat_median(&an.late), stat_max(&an.late), stat_median(&an.tail),
           stat_max(&an.tail), stat_median(&an.spread), stat_max(&an.spread));
  if (trace && an.first.n)
    printf("trace m=%lld: device wall beside the tasks, median (max) over reps, us: (a) start to "
           "first task %.1f (%.1f), (b) gaps between tasks summed over cores %.1f (%.1f), (c) idle "
           "end %.1f (%.1f), (d) last end to the wall's end %.1f (%.1f)\n",
           (long long)m, stat_median(&an.first), stat_max(&an.first), stat_median(&an.gaps),
           stat_max(&an.gaps), stat_median(&an.tail) * 1e3, stat_max(&an.tail) * 1e3,
           stat_median(&an.tailend), stat_max(&an.tailend));
  float *got = xalloc(yn * 4);
  dev_read(w, dy, got, yn);
  compare("decode: pto kernel direct vs pto runtime", yd, got, yn, 1e-30, 0);
  if (have_peer) compare("decode: pto runtime vs OpenBLAS", got, yp, yn, (double)k / 16, 1e-5);
  /* every entry: the interpreter's numbers (fmaf in k order) bit for bit */
  dec_check_fmaf("", x, wt, got, m, k, n, 0);
  float *gotp = xalloc(yn * 4);
  dev_read(w, dyp, gotp, yn);
  compare("decode: W in panels, runtime vs row-major", gotp, got, yn, 1e-30, 0);
  compare("decode: W in panels, direct vs runtime", ypd, gotp, yn, 1e-30, 0);
  dec_check_fmaf("W in panels: ", x, wt, gotp, m, k, n, 0);
  float *gotg = NULL;
  if (hg) {
    gotg = xalloc(yn * 4);
    dev_read(w, dyg, gotg, yn);
    dec_check_fmaf("@m1g: ", x, wt, gotg, m, k, n, dec_kb());
  }
  char title[200];
  snprintf(title, sizeof title,
           "(e) decode product, [%lld, %lld] x [%lld, %lld] f32, %d threads/cores, %d reps; "
           "rate = GB/s of W (%.0f MiB)%s",
           (long long)m, (long long)k, (long long)k, (long long)n, ncores, reps,
           (double)wn * 4 / 1048576,
           ncores == 1 ? "; one thread: CPU time, but the runtime's device wall" : "");
  table_header(title, "OpenBLAS");
  double wbytes = (double)wn * 4; /* row(): work / ms / 1e6, GB/s */
  if (have_peer)
    row(&s_b, wbytes, "GB/s", &s_b);
  else
    printf("| OpenBLAS not found (apt-get install libopenblas-dev): skipped |\n");
  row(&s_p, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_d, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_dr, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_pp, wbytes, "GB/s", have_peer ? &s_b : NULL);
  if (hg) row(&s_g, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_dpr, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_m, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_r, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_c, wbytes, "GB/s", have_peer ? &s_b : NULL);
  row(&s_cb, wbytes, "GB/s", have_peer ? &s_b : NULL);
  limit_ratios("the limit's (memcpy of W)", &s_p, &s_d, &s_m);
  limit_ratios("the read of W's (its read rate against the memory's)", &s_p, &s_d, &s_r);
  limit_ratios("the ready threads' read of W's (the memory's ceiling)", &s_p, &s_d, &s_c);
  /* The runtime's row is its device wall, which time spent descheduled inflates; with one
   * thread the peer's row is its CPU time, which it does not. The same clock on both sides: the
   * peer's wall time of the same calls, and per-rep paired ratios (peer's time / pto's). */
  if (have_peer) {
    char bwname[64];
    snprintf(bwname, sizeof bwname, "%s: OpenBLAS, wall", m == 1 ? "sgemv" : "sgemm");
    s_bw.name = bwname;
    if (ncores == 1) row(&s_bw, wbytes, "GB/s", &s_b);
    const bstat *pw = ncores == 1 ? &s_bw : &s_b;
    printf("same clock (wall): pto runtime vs OpenBLAS min %.2fx median %.2fx, paired by rep "
           "median %.2fx; kernel direct vs OpenBLAS (%s) paired by rep median %.2fx\n",
           stat_min(pw) / stat_min(&s_p), stat_median(pw) / stat_median(&s_p),
           paired_median(pw, &s_p), ncores == 1 ? "CPU time" : "wall", paired_median(&s_b, &s_d));
    printf("same clock (wall), W in panels (packed once, not timed; OpenBLAS reads row-major W): "
           "pto runtime vs OpenBLAS min %.2fx median %.2fx, paired by rep median %.2fx; vs pto "
           "runtime on row-major W paired by rep median %.2fx\n",
           stat_min(pw) / stat_min(&s_pp), stat_median(pw) / stat_median(&s_pp),
           paired_median(pw, &s_pp), paired_median(&s_p, &s_pp));
    if (hg)
      printf("same clock (wall), @m1g (K x N grid of %lld-row blocks): pto runtime vs OpenBLAS min "
             "%.2fx median %.2fx, paired by rep median %.2fx; vs @m1 min %.2fx median %.2fx, "
             "paired by rep median %.2fx\n",
             (long long)dec_kb(), stat_min(pw) / stat_min(&s_g),
             stat_median(pw) / stat_median(&s_g), paired_median(pw, &s_g),
             stat_min(&s_p) / stat_min(&s_g), stat_median(&s_p) / stat_median(&s_g),
             paired_median(&s_p, &s_g));
    printf("ceiling (the ready threads' read of W, wall) paired by rep median: its time / "
           "OpenBLAS's %.2fx, / pto runtime's %.2fx, / kernel direct's (threads ready) %.2fx\n",
           paired_median(&s_c, pw), paired_median(&s_c, &s_p), paired_median(&s_c, &s_dr));
    printf("\nOpenBLAS: %s\n", config);
  }
  if (g_quiesce_n)
    printf("each contender started with the process's other threads asleep: %.2f ms waited for "
           "them before each on average (PTO_BENCH_NO_QUIESCE=1: not waited)\n",
           g_quiesce_ms / g_quiesce_n);
  free(got), free(gotp), free(gotw), free(wpk), free(ypd), free(gotg);
  CHECK(pto_worker_free_tensor(w, dwp));
  CHECK(pto_worker_free_tensor(w, dyp));
  if (hg) {
    CHECK(pto_worker_free_tensor(w, dyg));
    pto_handle_unregister(hg);
    pto_program_release(pg);
  }
  pto_handle_unregister(hk);
  pto_handle_unregister(hp);
  pto_program_release(pk);
  pto_program_release(pp);
  CHECK(pto_worker_free_tensor(w, dx));
  CHECK(pto_worker_free_tensor(w, dw));
  CHECK(pto_worker_free_tensor(w, dy));
  if (ds) CHECK(pto_worker_free_tensor(w, ds));
  pto_handle_unregister(h);
  pto_program_release(p);
  free(x), free(wt), free(yd), free(yp), free(wc);
}

/* Is section name to run (PTO_BENCH_KERNELS_ONLY unset, or naming it)? */
static int wanted(const char *name) {
  const char *only = getenv("PTO_BENCH_KERNELS_ONLY");
  if (!only || !*only) return 1;
  size_t n = strlen(name);
  for (const char *c = only; *c;) {
    const char *e = strchr(c, ',');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    if (len == n && !strncmp(c, name, n)) return 1;
    if (!e) break;
    c = e + 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  long ew = argc > 1 ? atol(argv[1]) : 4096, sm = argc > 2 ? atol(argv[2]) : 4096,
       mm = argc > 3 ? atol(argv[3]) : 1024, reps = argc > 4 ? atol(argv[4]) : 10;
  int ncores = argc > 5 ? atoi(argv[5]) : 2;
  const char *dks = getenv("PTO_BENCH_DECODE_K");
  long decode_k = dks && *dks ? atol(dks) : 4096;
  if (ew < 256 || ew % 256 || sm < 64 || sm % 64 || mm < MM_N || mm % MM_N || reps < 1 ||
      reps > MAX_REPS || ncores < 1 || decode_k < DEC_BN1 || decode_k % DEC_BN1) {
    fprintf(stderr,
            "usage: bench_kernels [EW_N [SOFTMAX_M [MATMUL_N [REPS [NCORES]]]]]\n"
            "  EW_N a multiple of 256, SOFTMAX_M of 64, MATMUL_N of 256; REPS 1..%d;\n"
            "  PTO_BENCH_DECODE_K a multiple of 1024\n",
            MAX_REPS);
    return 2;
  }
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  /* NCORES cores of each type: a program's tasks all run on one type (matmul on AIC, the others
   * on AIV), so each program gets NCORES core threads, as many as the peers' threads. (With
   * ncores = NCORES alone the worker splits them, a third AIC and the rest AIV: on 2 cores one of
   * each, and every program here ran on a single core.) The idle type's threads sleep. */
  cfg.aic_cores = ncores;
  cfg.aiv_cores = ncores;
  cfg.ncores = 2 * ncores;
  /* PTO_BENCH_CORES=default: the worker a caller gets without core counts (a thread per CPU, an
   * AIC core and two AIV cores per thread; any thread runs either type's tasks); =strict: the
   * same with strict_cores (the chip's model: on 2 CPUs 1 AIC + 1 AIV, a thread each). */
  const char *cores = getenv("PTO_BENCH_CORES");
  if (cores && (!strcmp(cores, "default") || !strcmp(cores, "strict"))) {
    cfg.aic_cores = cfg.aiv_cores = cfg.ncores = 0;
    cfg.strict_cores = !strcmp(cores, "strict");
  }
  const char *ssb = getenv("PTO_BENCH_STREAM_STORE_BYTES");
  if (ssb && *ssb) g_stream_store_bytes = strtoull(ssb, NULL, 0);
  cfg.stream_store_bytes = g_stream_store_bytes;
  uint64_t need = 3 * (uint64_t)ew * (uint64_t)ew * 4,
           dneed = 3 * (uint64_t)decode_k * decode_k * 4; /* W, W in panels (e) */
  need = need > dneed ? need : dneed;
  cfg.device_memory_bytes = need + (256u << 20);
  pto_worker *w = NULL;
  CHECK(pto_worker_open(&cfg, &w));
  int nc = pto_worker_core_count(w), naiv = 0;
  while (naiv < nc && pto_worker_core_type(w, naiv) == PTO_CORE_AIV)
    naiv++;
  printf("bench_kernels %ld %ld %ld %ld %d: sim worker%s%s with %d cores (%d AIC + %d AIV), stores "
         "past the cache from %llu bytes of a task's buffers\n",
         ew, sm, mm, reps, ncores, cores ? " PTO_BENCH_CORES=" : "", cores ? cores : "", nc,
         nc - naiv, naiv, (unsigned long long)g_stream_store_bytes);
  if (wanted("ew")) bench_elementwise(w, ew, (int)reps, ncores);
  if (wanted("softmax")) bench_softmax(w, sm, (int)reps, ncores);
  if (wanted("matmul")) bench_matmul(w, mm, (int)reps, ncores, 0);
  if (wanted("bf16")) bench_matmul(w, mm, (int)reps, ncores, 1);
  if (wanted("decode")) {
    bench_decode(w, 1, decode_k, (int)reps, ncores);
    bench_decode(w, 8, decode_k, (int)reps, ncores);
  }
  pto_worker_close(w);
  return 0;
}
