/* The MPI transport against MPI itself (bench/RESULTS.md, "MPI transport"): run under mpirun.
 *
 *   mpirun -np N mpi_allreduce [MAX_BYTES] [REPS]     (default 64 MiB, 10 repetitions)
 *
 * Every rank opens pto's MPI transport (the window arena, on the path PTO_MPI_WINDOWS and the
 * MCA settings give) and calls its collective, the function a compiled dist.allreduce calls, on
 * f32 windows of 1 KiB to MAX_BYTES; the peer is MPI_Allreduce (MPI_IN_PLACE, MPI_SUM) of the
 * same bytes on MPI_COMM_WORLD, measured in the same run. Reported per size: the median over
 * repetitions of the slowest rank's time. Then a notify/wait round trip between ranks 0 and 1
 * (rank 0 notifies, rank 1 waits and notifies back) against an MPI_Send/MPI_Recv ping-pong of 4
 * bytes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist_internal.h"

#define MAXREPS 64

/* Windows up to 64 KiB take at least 20 repetitions: on ranks that share CPUs their first few
 * allreduces after start-up take 100-500 us where the settled ones take 30-70 (4 ranks on 2
 * CPUs), and a median of 5 measured the start-up (bench/RESULTS.md, round 10). The same rule is
 * in bench/runtime/dist_allreduce.c and bench/mpi/mpi_allreduce.c, so both libraries get it. */
static int reps_for(uint64_t bytes, int reps) { return bytes <= 65536 && reps < 20 ? 20 : reps; }

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The slowest rank's time of one repetition, on rank 0. */
static double slowest(double t) {
  double worst = 0;
  MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char **argv) {
  uint64_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 64ull << 20;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  if (reps < 1 || reps > MAXREPS || max_bytes < 1024) {
    fprintf(stderr, "usage: mpi_allreduce [MAX_BYTES >= 1024] [REPS 1..%d]\n", MAXREPS);
    return 2;
  }
  uint64_t stride = (max_bytes + 4095) & ~4095ull;
  pto__dist_mpi *m = NULL;
  int rank = 0, n = 0;
  char err[1024];
  /* Every arena's first 4 KiB hold no window: its first 64 bytes are the transport's header
   * (pto__dist_arena_hdr: the abort word, the left neighbour's collectives). */
  const uint64_t hdr = 4096;
  /* No worker, so no device count or heap for the ranks to compare (0 on every rank). */
  if (pto__dist_mpi_open(hdr + stride + 4096, getenv("PTO_MPI_WINDOWS"), 5000, 0, 0, &m, &rank, &n,
                         err, sizeof err)) {
    fprintf(stderr, "mpi_allreduce: %s\n", err);
    return 1;
  }
  pto__dist_shared *sh = calloc(1, sizeof *sh + (size_t)n * sizeof(pto__dist_chip));
  float *peer = aligned_alloc(64, stride);
  if (!sh || !peer) return 1;
  sh->nranks = n;
  sh->timeout_ms = 60000;
  sh->mpi = m;
  sh->arena_size = hdr + stride + 4096;
  for (int q = 0; q < n; q++)
    sh->arena[q] = pto__dist_mpi_arena(m, q);
  pto__dist_window *data = &sh->windows[0], *sigw = &sh->windows[1];
  data->off = hdr, data->stride = stride, data->bytes = max_bytes, data->cols = 1;
  sigw->off = hdr + stride, sigw->stride = 64, sigw->bytes = 64, sigw->cols = 16;
  atomic_store(&data->live, 1);
  atomic_store(&sigw->live, 1);
  pto__dist_shm t;
  pto__dist_shm_init(&t, sh, rank);
  float *mine = (float *)(sh->arena[rank] + hdr);
  pto_kernel_tensor sig = {.data = sh->arena[rank] + hdr + stride,
                           .rank = 2,
                           .shape = {1, 16},
                           .stride = {16, 1},
                           .dtype = PTO_DTYPE_I32};
  if (rank == 0)
    printf("mpi_allreduce: %d ranks, windows: %s, f32 sum, %d repetitions (at least 20 up to 64 "
           "KiB); median of the "
           "slowest rank\n\n| bytes per rank | pto [us] | pto [GB/s] | MPI_Allreduce [us] | "
           "MPI_Allreduce [GB/s] | pto / MPI |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n",
           n,
           pto__dist_mpi_is_shared(m) ? "shared (MPI_Win_allocate_shared)"
                                      : "one-sided (MPI_Win_allocate)",
           reps);
  for (uint64_t b = 1024; b <= max_bytes; b *= 4) {
    uint64_t e = b / 4;
    for (uint64_t i = 0; i < e; i++)
      mine[i] = peer[i] = (float)(rank + 1);
    pto_kernel_tensor win = {.data = mine,
                             .rank = 2,
                             .shape = {1, (int64_t)e},
                             .stride = {(int64_t)e, 1},
                             .dtype = PTO_DTYPE_F32};
    double ours[MAXREPS], theirs[MAXREPS];
    int nr = reps_for(b, reps);
    for (int k = -1; k < nr; k++) { /* one warm-up */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_us();
      if (t.ctx.collective(&t.ctx, PTO_DIST_ALLREDUCE, &win, &sig, PTO_DIST_RED_SUM, 0, 0)) {
        fprintf(stderr, "rank %d: %s\n", rank, t.detail);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      double w = slowest(now_us() - t0);
      if (k >= 0) ours[k] = w;
    }
    for (int k = -1; k < nr; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_us();
      MPI_Allreduce(MPI_IN_PLACE, peer, (int)e, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double w = slowest(now_us() - t0);
      if (k >= 0) theirs[k] = w;
    }
    if (rank == 0) {
      double a = median(ours, nr), p = median(theirs, nr);
      printf("| %llu | %.1f | %.2f | %.1f | %.2f | %.2f |\n", (unsigned long long)b, a,
             (double)b / a / 1e3, p, (double)b / p / 1e3, p / a);
    }
  }
  /* notify/wait round trip between ranks 0 and 1 (elements 2 and 3 of the signal window) */
  if (n >= 2) {
    int32_t *s = sig.data;
    const int trips = 2000;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int k = 1; k <= trips && rank < 2; k++) {
      if (rank == 0) {
        if (t.ctx.notify(&t.ctx, s + 2, 1, 1, PTO_DIST_NOTIFY_ADD) ||
            t.ctx.wait(&t.ctx, s + 3, k, PTO_DIST_WAIT_GE))
          MPI_Abort(MPI_COMM_WORLD, 1);
      } else {
        if (t.ctx.wait(&t.ctx, s + 2, k, PTO_DIST_WAIT_GE) ||
            t.ctx.notify(&t.ctx, s + 3, 0, 1, PTO_DIST_NOTIFY_ADD))
          MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    double ours = (now_us() - t0) / trips;
    MPI_Barrier(MPI_COMM_WORLD);
    int32_t tok = 0;
    t0 = now_us();
    for (int k = 0; k < trips && rank < 2; k++) {
      if (rank == 0) {
        MPI_Send(&tok, 1, MPI_INT32_T, 1, 9, MPI_COMM_WORLD);
        MPI_Recv(&tok, 1, MPI_INT32_T, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&tok, 1, MPI_INT32_T, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&tok, 1, MPI_INT32_T, 0, 9, MPI_COMM_WORLD);
      }
    }
    double theirs = (now_us() - t0) / trips;
    if (rank == 0)
      printf("\nnotify/wait round trip, ranks 0 and 1: pto %.2f us, MPI_Send/MPI_Recv ping-pong "
             "%.2f us (%d round trips)\n",
             ours, theirs, trips);
  }
  pto__dist_shm_fini(&t);
  pto__dist_mpi_close(m);
  free(sh);
  free(peer);
  return 0;
}
