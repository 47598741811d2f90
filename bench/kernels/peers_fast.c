/* The row softmax of peers.c built with -O3 -march=native -ffast-math (see CMakeLists.txt): GCC
 * then vectorizes expf through glibc's libmvec and reassociates the max and sum reductions. The
 * peer a user who accepts fast-math's rounding would hold pto's softmax to. */
#include <math.h>

#include "peers.h"

void peer_softmax_fast(const float *restrict x, float *restrict y, int64_t n, int64_t lo,
                       int64_t hi) {
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
