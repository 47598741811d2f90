/* The side-by-side peers of bench/kernels: hand-written C loops (compiled -O3 -march=native,
 * see CMakeLists.txt), memcpy, and a tiny fork-join helper that splits rows across threads.
 * Plain ISO C: no -ffast-math, so the loops round like the pto kernels do. */
#ifndef PTO_BENCH_KERNELS_PEERS_H
#define PTO_BENCH_KERNELS_PEERS_H

#include <stddef.h>
#include <stdint.h>

/* Runs fn(ctx, part, nparts) on nparts threads (part 0 on the calling thread) and joins. */
void peer_parallel(int nparts, void (*fn)(void *ctx, int part, int nparts), void *ctx);

/* Row range [*lo, *hi) of part `part` of `nparts` over `rows` rows, in multiples of `align`. */
void peer_split(int64_t rows, int64_t align, int part, int nparts, int64_t *lo, int64_t *hi);

/* Over rows [lo, hi) of row-major [*, n] f32 matrices. */
void peer_add(const float *a, const float *b, float *c, int64_t n, int64_t lo, int64_t hi);
/* c = relu(a * alpha + b) - b: the same four ops as ew.ptir's chain. */
void peer_chain(const float *a, const float *b, float *c, float alpha, int64_t n, int64_t lo,
                int64_t hi);
/* Row softmax: max, exp(x - max) (libm expf), sum, divide. */
void peer_softmax(const float *x, float *y, int64_t n, int64_t lo, int64_t hi);
/* The same loop built with -ffast-math (peers_fast.c): libmvec's vector expf. */
void peer_softmax_fast(const float *x, float *y, int64_t n, int64_t lo, int64_t hi);
void peer_memcpy(void *dst, const void *src, size_t bytes);
/* Reads bytes (a multiple of 8) and nothing else: the xor of their 64-bit words (integer ops, so
 * the loop vectorizes without reassociating anything): the read rate memcpy's writes hide. */
uint64_t peer_read(const void *src, size_t bytes);
/* The sum of n floats, read with 512-bit loads where the build has AVX-512F (four running sums
 * of 16 lanes): a plain streaming read, the memory's ceiling for a product that reads W once. */
float peer_read_sum(const float *src, size_t n);
/* The sum of a [rows, 256] block of floats, rows ld apart, read row by row (16 running sums of
 * 16 lanes): the read the M = 1 decode kernel's task does, without its arithmetic. */
float peer_read_block(const float *src, int64_t rows, int64_t ld);
/* A pool of nparts - 1 threads made once (peer_ready_start), parked between runs; each
 * peer_ready_run wakes them, waits until every one spins on the start flag, then starts the
 * clock, runs fn(ctx, part, nparts) (part 0 on the calling thread) and returns the ms until the
 * last part ended: a fork-join without the threads' creation or wake-up in the time. */
void peer_ready_start(int nparts);
double peer_ready_run(void (*fn)(void *ctx, int part, int nparts), void *ctx);
void peer_ready_stop(void);

#endif
