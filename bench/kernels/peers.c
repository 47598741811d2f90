/* Hand-written peers of the pto kernels (peers.h). Built with -O3 -march=native; what a C
 * programmer would write without intrinsics or -ffast-math. */
#include "peers.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
