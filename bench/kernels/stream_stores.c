/* Regular against non-temporal stores in a plain streaming add, c = a + b over N f32 (default
 * 4096 x 4096: 64 MiB a matrix), on T threads (default 2), best of REPS (default 30), the two
 * loops alternating within each repetition (bench/RESULTS.md, "Issue #12, sixth round"):
 *
 *   bench_stream_stores [N [T [REPS]]]
 *
 * A store to a line not in the cache reads the line first; a non-temporal store does not, so the
 * add moves three matrices' bytes instead of four. This is what the runtime's
 * PTO_CORE_STREAM_STORES lets pto's streamed runs do. Needs AVX-512F (built with -mavx512f; run
 * on such a CPU only). */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static float *g_a, *g_b, *g_c;
static int g_nt;

typedef struct part {
  long lo, hi;
} part;

static void *run(void *p) {
  const part *q = p;
  if (g_nt) {
    for (long i = q->lo; i < q->hi; i += 16)
      _mm512_stream_ps(g_c + i, _mm512_add_ps(_mm512_load_ps(g_a + i), _mm512_load_ps(g_b + i)));
    _mm_sfence();
  } else {
    for (long i = q->lo; i < q->hi; i += 16)
      _mm512_store_ps(g_c + i, _mm512_add_ps(_mm512_load_ps(g_a + i), _mm512_load_ps(g_b + i)));
  }
  return NULL;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4096L * 4096L;
  int nt = argc > 2 ? atoi(argv[2]) : 2, reps = argc > 3 ? atoi(argv[3]) : 30;
  if (n < 16 * 64 || n % (16L * 64) || nt < 1 || nt > 64 || reps < 1) {
    fprintf(stderr, "usage: bench_stream_stores [N (a multiple of 1024) [THREADS [REPS]]]\n");
    return 2;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    fprintf(stderr, "bench_stream_stores: this CPU has no AVX-512F\n");
    return 2;
  }
  g_a = aligned_alloc(64, (size_t)n * 4);
  g_b = aligned_alloc(64, (size_t)n * 4);
  g_c = aligned_alloc(64, (size_t)n * 4);
  if (!g_a || !g_b || !g_c) return 1;
  for (long i = 0; i < n; i++) {
    g_a[i] = (float)i;
    g_b[i] = 1;
    g_c[i] = 0;
  }
  double best[2] = {1e30, 1e30};
  for (int r = 0; r < reps; r++)
    for (g_nt = 0; g_nt < 2; g_nt++) {
      pthread_t th[64];
      part ps[64];
      double t = now_ms();
      for (int j = 0; j < nt; j++) {
        ps[j] = (part){n / nt / 16 * 16 * j, j == nt - 1 ? n : n / nt / 16 * 16 * (j + 1)};
        pthread_create(&th[j], NULL, run, &ps[j]);
      }
      for (int j = 0; j < nt; j++)
        pthread_join(th[j], NULL);
      t = now_ms() - t;
      if (t < best[g_nt]) best[g_nt] = t;
    }
  printf("add of %ld f32 on %d threads, best of %d: regular stores %.3f ms, non-temporal %.3f ms "
         "(%.2fx)\n",
         n, nt, reps, best[0], best[1], best[0] / best[1]);
  free(g_a), free(g_b), free(g_c);
  return 0;
}
