/* Host memory for the tensor data of pto run and pto bench (tensor_data.h).
 *
 * A tensor of 64 KiB or more gets its zeroed bytes from one region reserved for the process
 * (virtual only, MAP_NORESERVE), carved in order and given back whole when the last of them is
 * freed. The region asks for transparent huge pages and each carve is faulted in with one call:
 * every byte is written soon (an input's values, an output's copy back), and one fault and one
 * zeroing per 2 MiB (or one system call per tensor without THP) cost less than a fault per 4 KiB
 * page (pto run of a 400 KiB softmax: ~150 -> ~50 us). Smaller tensors come from calloc. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "tensor_data.h"

#define DATA_REGION_BYTES (16ull << 30) /* larger tensors come from calloc */
#define DATA_REGION_MIN 65536

static struct {
  uint8_t *base; /* NULL: not reserved (or the reservation failed: calloc only) */
  size_t used;   /* bytes carved, 64-byte aligned */
  int live;      /* carves not yet freed */
  int failed;
} g_data;

void *cli_tensor_data_alloc(size_t nbytes) {
  if (nbytes >= DATA_REGION_MIN && !g_data.failed) {
    if (!g_data.base) {
      void *p = mmap(NULL, DATA_REGION_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) {
        g_data.failed = 1;
        return calloc(1, nbytes);
      }
#ifdef MADV_HUGEPAGE
      (void)madvise(p, DATA_REGION_BYTES, MADV_HUGEPAGE);
#endif
      g_data.base = p;
      g_data.used = 0;
    }
    if (nbytes <= DATA_REGION_BYTES - g_data.used) {
      uint8_t *d = g_data.base + g_data.used;
      g_data.used = (g_data.used + nbytes + 63) & ~(size_t)63;
      g_data.live++;
#ifdef MADV_POPULATE_WRITE
      uintptr_t lo = (uintptr_t)d & ~(uintptr_t)4095;
      uintptr_t hi = ((uintptr_t)d + nbytes + 4095) & ~(uintptr_t)4095;
      (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* a hint: faults do the rest */
#endif
      return d;
    }
  }
  return calloc(1, nbytes ? nbytes : 1);
}

void cli_tensor_data_free(void *p) {
  uint8_t *d = p;
  if (!d || !g_data.base || d < g_data.base || d >= g_data.base + DATA_REGION_BYTES) {
    free(p);
    return;
  }
  if (--g_data.live == 0) {
    munmap(g_data.base, DATA_REGION_BYTES);
    g_data.base = NULL;
  }
}
