/* Allreduce bandwidth of the shared-memory transport against memcpy (bench/RESULTS.md,
 * "Distributed worker").
 *
 *   dist_allreduce [NRANKS] [MAX_BYTES] [REPS]      (default 2 ranks, 64 MiB, 10 repetitions)
 *
 * NRANKS processes are forked over one shared region laid out as the distributed worker lays
 * out a comm window, and each calls the transport's collective (the function a compiled
 * dist.allreduce calls) on f32 windows of 1 KiB to MAX_BYTES, back to back on one signal window.
 * Reported per size: the median time of one allreduce (max over ranks) and its algorithm
 * bandwidth (bytes of one rank's window / time), against memcpy of the same bytes in one process
 * (its median), measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAXREPS 64

/* Windows up to 64 KiB take at least 20 repetitions: on ranks that share CPUs their first few
 * allreduces after start-up take 100-500 us where the settled ones take 30-70 (4 ranks on 2
 * CPUs), and a median of 5 measured the start-up (bench/RESULTS.md, round 10). The same rule is
 * in bench/runtime/dist_allreduce.c and bench/mpi/mpi_allreduce.c, so both libraries get it. */
static int reps_for(uint64_t bytes, int reps) { return bytes <= 65536 && reps < 20 ? 20 : reps; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  uint64_t max_bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 64ull << 20;
  int reps = argc > 3 ? atoi(argv[3]) : 10;
  if (n < 2 || n > 16 || reps < 1 || reps > MAXREPS) {
    fprintf(stderr, "usage: dist_allreduce [NRANKS 2..16] [MAX_BYTES] [REPS 1..%d]\n", MAXREPS);
    return 2;
  }
  uint64_t stride = (max_bytes + 4095) & ~4095ull;
  uint64_t heap_size = stride * (uint64_t)n + 4096;
  size_t sh_bytes = sizeof(pto__dist_shared) + (size_t)n * sizeof(pto__dist_chip);
  pto__dist_shared *sh =
      mmap(NULL, sh_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  uint8_t *heap = mmap(NULL, heap_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  /* per size and repetition, each rank's time */
  double *times = mmap(NULL, sizeof(double) * 32 * MAXREPS * (size_t)n, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || heap == MAP_FAILED || times == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(heap, 0, heap_size); /* faulted in once, as the worker does */
  sh->nranks = n;
  sh->timeout_ms = 30000;
  sh->heap = heap;
  sh->heap_size = heap_size;
  pto__dist_window *data = &sh->windows[0], *sigw = &sh->windows[1];
  data->off = 0, data->stride = stride, data->bytes = max_bytes, data->cols = 1;
  sigw->off = stride * (uint64_t)n, sigw->stride = 64, sigw->bytes = 64, sigw->cols = 16;
  atomic_store(&data->live, 1);
  atomic_store(&sigw->live, 1);

  int nsizes = 0;
  for (uint64_t b = 1024; b <= max_bytes; b *= 4)
    nsizes++;
  fflush(NULL);
  for (int r = 0; r < n; r++) {
    if (fork() != 0) continue;
    pto__dist_shm t;
    pto__dist_shm_init(&t, sh, r);
    float *mine = (float *)(heap + (uint64_t)r * stride);
    pto_kernel_tensor sig = {.data = heap + sigw->off + (uint64_t)r * 64,
                             .rank = 2,
                             .shape = {1, 16},
                             .stride = {16, 1},
                             .dtype = PTO_DTYPE_I32};
    int si = 0;
    for (uint64_t b = 1024; b <= max_bytes; b *= 4, si++) {
      /* Each size's data is written right before it is measured, as bench/mpi/mpi_allreduce
       * does for both libraries: writing the whole largest window first put every rank's
       * first touch of up to 64 MiB right before the 1 KiB repetitions (on 4 ranks over 2
       * CPUs their medians were 150-620 us, against 31-68 us with the largest size 64 KiB). */
      for (uint64_t i = 0; i < b / 4; i++)
        mine[i] = (float)(r + 1);
      pto_kernel_tensor win = {.data = mine,
                               .rank = 2,
                               .shape = {1, (int64_t)(b / 4)},
                               .stride = {(int64_t)(b / 4), 1},
                               .dtype = PTO_DTYPE_F32};
      t.ctx.barrier(&t.ctx, &sig);
      for (int k = -1; k < reps_for(b, reps); k++) { /* one warm-up */
        uint64_t t0 = now_ns();
        if (t.ctx.collective(&t.ctx, PTO_DIST_ALLREDUCE, &win, &sig, PTO_DIST_RED_SUM, 0, 0)) {
          fprintf(stderr, "rank %d: %s\n", r, t.detail);
          _exit(1);
        }
        if (k >= 0)
          times[((size_t)si * MAXREPS + (size_t)k) * (size_t)n + (size_t)r] =
              (double)(now_ns() - t0);
      }
    }
    _exit(0);
  }
  int bad = 0;
  for (int r = 0; r < n; r++) {
    int st;
    wait(&st);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  }
  if (bad) return 1;

  /* memcpy of the same bytes, one process, the same memory system. */
  uint8_t *src = heap, *dst = heap + stride;
  printf("dist_allreduce: %d ranks (processes), f32 sum, %d repetitions (at least 20 up to 64 "
         "KiB); median time of one "
         "allreduce (slowest rank) vs memcpy of one rank's window\n\n",
         n, reps);
  printf("| bytes per rank | allreduce [us] | allreduce [GB/s] | memcpy [us] | memcpy [GB/s] | "
         "ratio |\n");
  printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  int si = 0;
  for (uint64_t b = 1024; b <= max_bytes; b *= 4, si++) {
    double ar[MAXREPS], mc[MAXREPS];
    int nr = reps_for(b, reps);
    for (int k = 0; k < nr; k++) {
      double worst = 0;
      for (int r = 0; r < n; r++) {
        double v = times[((size_t)si * MAXREPS + (size_t)k) * (size_t)n + (size_t)r];
        if (v > worst) worst = v;
      }
      ar[k] = worst;
    }
    memcpy(dst, src, b);
    for (int k = 0; k < nr; k++) {
      uint64_t t0 = now_ns();
      memcpy(dst, src, b);
      __asm__ volatile("" ::: "memory");
      mc[k] = (double)(now_ns() - t0);
    }
    double a = median(ar, nr), m = median(mc, nr);
    printf("| %llu | %.1f | %.2f | %.1f | %.2f | %.2f |\n", (unsigned long long)b, a / 1e3,
           (double)b / a, m / 1e3, (double)b / m, m / a);
  }
  return 0;
}
