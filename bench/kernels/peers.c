/* Hand-written peers of the pto kernels (peers.h). Built with -O3 -march=native; what a C
 * programmer would write without intrinsics or -ffast-math. */
#include "peers.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

typedef struct part_arg {
  void (*fn)(void *, int, int);
  void *ctx;
  int part, nparts;
} part_arg;

static void *part_main(void *p) {
  part_arg *a = p;
  a->fn(a->ctx, a->part, a->nparts);
  return NULL;
}

void peer_parallel(int nparts, void (*fn)(void *ctx, int part, int nparts), void *ctx) {
  enum { MAXP = 64 };
  if (nparts < 1) nparts = 1;
  if (nparts > MAXP) nparts = MAXP;
  pthread_t th[MAXP];
  part_arg args[MAXP];
  for (int i = 1; i < nparts; i++) {
    args[i] = (part_arg){fn, ctx, i, nparts};
    if (pthread_create(&th[i], NULL, part_main, &args[i])) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  fn(ctx, 0, nparts);
  for (int i = 1; i < nparts; i++)
    pthread_join(th[i], NULL);
}

void peer_split(int64_t rows, int64_t align, int part, int nparts, int64_t *lo, int64_t *hi) {
  int64_t blocks = (rows + align - 1) / align;
  *lo = blocks * part / nparts * align;
  *hi = blocks * (part + 1) / nparts * align;
  if (*hi > rows) *hi = rows;
}

void peer_add(const float *restrict a, const float *restrict b, float *restrict c, int64_t n,
              int64_t lo, int64_t hi) {
  for (int64_t i = lo * n; i < hi * n; i++)
    c[i] = a[i] + b[i];
}

void peer_chain(const float *restrict a, const float *restrict b, float *restrict c, float alpha,
                int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = lo * n; i < hi * n; i++) {
    float t = a[i] * alpha + b[i];
    t = t > 0 ? t : 0;
    c[i] = t - b[i];
  }
}

void peer_softmax(const float *restrict x, float *restrict y, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t r = lo; r < hi; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float m = -INFINITY;
    for (int64_t j = 0; j < n; j++)
      m = xr[j] > m ? xr[j] : m;
    float s = 0;
    for (int64_t j = 0; j < n; j++) {
      yr[j] = expf(xr[j] - m);
      s += yr[j];
    }
    for (int64_t j = 0; j < n; j++)
      yr[j] = yr[j] / s;
  }
}

void peer_memcpy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

uint64_t peer_read(const void *src, size_t bytes) {
  const uint64_t *w = src;
  uint64_t x = 0;
  for (size_t i = 0; i < bytes / 8; i++)
    x ^= w[i];
  return x;
}

float peer_read_sum(const float *src, size_t n) {
  size_t i = 0;
#ifdef __AVX512F__
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(src + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(src + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_loadu_ps(src + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_loadu_ps(src + i + 48));
  }
  float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
#else
  float s = 0;
#endif
  for (; i < n; i++)
    s += src[i];
  return s;
}

float peer_read_block(const float *src, int64_t rows, int64_t ld) {
#ifdef __AVX512F__
  __m512 a[16];
  for (int h = 0; h < 16; h++)
    a[h] = _mm512_setzero_ps();
  for (int64_t r = 0; r < rows; r++)
    for (int h = 0; h < 16; h++)
      a[h] = _mm512_add_ps(a[h], _mm512_loadu_ps(src + r * ld + h * 16));
  for (int h = 1; h < 16; h++)
    a[0] = _mm512_add_ps(a[0], a[h]);
  return _mm512_reduce_add_ps(a[0]);
#else
  float s = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int h = 0; h < 256; h++)
      s += src[r * ld + h];
  return s;
#endif
}

/* peer_ready_*: threads parked on a condition variable between runs; a run wakes them, waits
 * until each spins on the start flag, then starts the clock and releases them. */
enum { READY_MAX = 64 };
static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int nparts, epoch, quit;
  pthread_t th[READY_MAX];
  void (*fn)(void *, int, int);
  void *ctx;
  atomic_int spinning, done, go;
} g_ready = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *ready_main(void *p) {
  int part = (int)(intptr_t)p, seen = 0;
  for (;;) {
    pthread_mutex_lock(&g_ready.mu);
    while (g_ready.epoch == seen && !g_ready.quit)
      pthread_cond_wait(&g_ready.cv, &g_ready.mu);
    int quit = g_ready.quit;
    seen = g_ready.epoch;
    pthread_mutex_unlock(&g_ready.mu);
    if (quit) return NULL;
    atomic_fetch_add(&g_ready.spinning, 1);
    while (atomic_load_explicit(&g_ready.go, memory_order_acquire) != seen)
      ;
    g_ready.fn(g_ready.ctx, part, g_ready.nparts);
    atomic_fetch_add_explicit(&g_ready.done, 1, memory_order_release);
  }
}

void peer_ready_start(int nparts) {
  if (nparts > READY_MAX) nparts = READY_MAX;
  g_ready.nparts = nparts < 1 ? 1 : nparts;
  for (int i = 1; i < g_ready.nparts; i++)
    if (pthread_create(&g_ready.th[i], NULL, ready_main, (void *)(intptr_t)i)) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
}

static double ready_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double peer_ready_run(void (*fn)(void *ctx, int part, int nparts), void *ctx) {
  int n = g_ready.nparts;
  pthread_mutex_lock(&g_ready.mu);
  g_ready.fn = fn;
  g_ready.ctx = ctx;
  atomic_store(&g_ready.spinning, 0);
  atomic_store(&g_ready.done, 0);
  int e = ++g_ready.epoch;
  pthread_cond_broadcast(&g_ready.cv);
  pthread_mutex_unlock(&g_ready.mu);
  /* every other thread spinning before the clock starts; a bounded wait (10 s) */
  double dl = ready_now_ms() + 10000;
  while (atomic_load(&g_ready.spinning) < n - 1)
    if (ready_now_ms() > dl) {
      fprintf(stderr, "peer_ready_run: threads did not start in 10 s\n");
      exit(1);
    }
  double t0 = ready_now_ms();
  atomic_store_explicit(&g_ready.go, e, memory_order_release);
  fn(ctx, 0, n);
  /* yielding: where another process holds the other CPU, the spin would keep the part it waits
   * for off this one until the next tick (4 ms, seen in the smoke test beside another) */
  while (atomic_load_explicit(&g_ready.done, memory_order_acquire) < n - 1)
    sched_yield();
  return ready_now_ms() - t0;
}

void peer_ready_stop(void) {
  pthread_mutex_lock(&g_ready.mu);
  g_ready.quit = 1;
  pthread_cond_broadcast(&g_ready.cv);
  pthread_mutex_unlock(&g_ready.mu);
  for (int i = 1; i < g_ready.nparts; i++)
    pthread_join(g_ready.th[i], NULL);
  g_ready.quit = 0;
  g_ready.epoch = 0;
  atomic_store(&g_ready.go, 0);
}
