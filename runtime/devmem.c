/* Device memory of the sim platform: one mmap'd arena per worker, addressed by device addresses
 * of its own (base + offset, never a host pointer), carved by a first-fit allocator with a
 * sorted, coalesced free list. Allocations are found by their base address in a hash map, which
 * is what copy_to/copy_from and dispatch validate against. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pto/base.h"
#include "runtime_internal.h"

/* Each worker gets its own 1 TiB window of device addresses, so a device address of one worker
 * is recognisably foreign to another. Process-global, lock-free (an atomic counter). */
static atomic_uint g_next_window;

#define PTO__RT_DEVICE_BASE 0x100000000000ull
#define PTO__RT_WINDOW (1ull << 40)
#define PTO__RT_WINDOWS 64u

/* Sets m up over size bytes at host (64-byte aligned size), device address base. */
static pto_status setup(pto__rt_devmem *m, void *host, uint64_t size, uint64_t base) {
  m->free = pto_malloc(16 * sizeof *m->free);
  if (!m->free) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a worker");
  pthread_mutex_init(&m->mu, NULL);
  m->host = host;
  m->size = size;
  m->base = base;
  m->capfree = 16;
  m->nfree = 1;
  m->free[0].off = 0;
  m->free[0].size = size;
  return PTO_OK;
}

pto_status pto__rt_devmem_init(pto__rt_devmem *m, uint64_t size) {
  memset(m, 0, sizeof *m);
  if (size < 4096 || size > PTO__RT_WINDOW)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "device_memory_bytes %llu is out of range (4096 to %llu)",
                           (unsigned long long)size, (unsigned long long)PTO__RT_WINDOW);
  size = (size + 63) & ~63ull;
  void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                           "cannot reserve %llu bytes of device memory: %s",
                           (unsigned long long)size, strerror(errno));
#ifdef MADV_HUGEPAGE
  /* Transparent huge pages where the system offers them on request (`madvise` mode, Debian's
   * default): a launch's first touch of fresh device memory then costs one fault and one zeroing
   * per 2 MiB instead of a fault per 4 KiB page (the first launch of a new worker binding 400 KiB
   * of tensors: 300 -> 185 us), and kernels walk tensors with fewer TLB misses. Without THP, or
   * if the kernel refuses, the arena keeps its 4 KiB pages. */
  (void)madvise(p, (size_t)size, MADV_HUGEPAGE);
#endif
  unsigned win = atomic_fetch_add(&g_next_window, 1) % PTO__RT_WINDOWS;
  pto_status s = setup(m, p, size, PTO__RT_DEVICE_BASE + (uint64_t)win * PTO__RT_WINDOW);
  if (s) munmap(p, (size_t)size);
  m->knob = "pto_run_config.device_memory_bytes";
  return s;
}

pto_status pto__rt_devmem_init_over(pto__rt_devmem *m, void *host, uint64_t size, uint64_t base,
                                    const char *knob) {
  memset(m, 0, sizeof *m);
  m->borrowed = 1;
  pto_status s = setup(m, host, size & ~63ull, base);
  m->touched = m->size; /* someone else's memory: never assumed zero */
  m->knob = knob;
  return s;
}

void pto__rt_devmem_fini(pto__rt_devmem *m) {
  if (!m->host) return;
  if (!m->borrowed) munmap(m->host, (size_t)m->size);
  free(m->free);
  pto__rt_map_fini(&m->allocs);
  pto__rt_map_fini(&m->ext_sizes);
  pthread_mutex_destroy(&m->mu);
  memset(m, 0, sizeof *m);
}

static uint64_t largest_free_locked(const pto__rt_devmem *m) {
  uint64_t best = 0;
  for (size_t i = 0; i < m->nfree; i++)
    if (m->free[i].size > best) best = m->free[i].size;
  return best;
}

static int insert_free_locked(pto__rt_devmem *m, size_t at, uint64_t off, uint64_t size) {
  if (pto_grow(&m->free, sizeof *m->free, &m->capfree, m->nfree + 1)) return -1;
  memmove(&m->free[at + 1], &m->free[at], (m->nfree - at) * sizeof *m->free);
  m->free[at].off = off;
  m->free[at].size = size;
  m->nfree++;
  return 0;
}

/* Returns [off, off+size) to the free list, coalescing with its neighbours. */
static int release_locked(pto__rt_devmem *m, uint64_t off, uint64_t size) {
  size_t lo = 0, hi = m->nfree;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->free[mid].off < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  int merge_prev = lo > 0 && m->free[lo - 1].off + m->free[lo - 1].size == off;
  int merge_next = lo < m->nfree && off + size == m->free[lo].off;
  if (merge_prev && merge_next) {
    m->free[lo - 1].size += size + m->free[lo].size;
    memmove(&m->free[lo], &m->free[lo + 1], (m->nfree - lo - 1) * sizeof *m->free);
    m->nfree--;
  } else if (merge_prev) {
    m->free[lo - 1].size += size;
  } else if (merge_next) {
    m->free[lo].off = off;
    m->free[lo].size += size;
  } else {
    return insert_free_locked(m, lo, off, size);
  }
  return 0;
}

/* The setting to raise when m is full. */
static const char *knob_of(const pto__rt_devmem *m) {
  return m->knob ? m->knob : "the device memory size";
}

/* pto__rt_devmem_alloc; *out_fresh_from (when not NULL): the arena offset from which the
 * allocation's bytes were never handed out before (its end when all of them were). */
static pto_status alloc_at(pto__rt_devmem *m, uint64_t nbytes, uint64_t align, const char *what,
                           const char *name, uint64_t *out_addr, uint64_t *out_fresh_from) {
  const char *q = name ? " '" : "", *qe = name ? "'" : "";
  if (!name) name = "";
  *out_addr = 0;
  if (align < 64) align = 64;
  if (align & (align - 1))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "alignment %llu is not a power of two",
                           (unsigned long long)align);
  if (nbytes > m->size)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                           "out of device memory allocating %s%s%s%s: %llu bytes requested, the "
                           "device has %llu bytes in all; raise %s",
                           what, q, name, qe, (unsigned long long)nbytes,
                           (unsigned long long)m->size, knob_of(m));
  uint64_t size = nbytes ? (nbytes + 63) & ~63ull : 64;
  pthread_mutex_lock(&m->mu);
  for (size_t i = 0; i < m->nfree; i++) {
    pto__rt_free_block *b = &m->free[i];
    uint64_t a = (b->off + align - 1) & ~(align - 1);
    uint64_t end = b->off + b->size;
    if (a < b->off || a > end || end - a < size) continue;
    uint64_t lead = a - b->off, tail = end - (a + size);
    if (lead == 0) {
      b->off += size;
      b->size -= size;
      if (b->size == 0) {
        memmove(&m->free[i], &m->free[i + 1], (m->nfree - i - 1) * sizeof *m->free);
        m->nfree--;
      }
    } else {
      b->size = lead;
      if (tail && insert_free_locked(m, i + 1, a + size, tail) != 0) {
        b->size = lead + size + tail;
        break;
      }
    }
    if (pto__rt_map_put(&m->allocs, m->base + a, nbytes) != 0) {
      release_locked(m, a, size);
      break;
    }
    m->used += size;
    if (m->used > m->peak) m->peak = m->used;
    if (out_fresh_from) *out_fresh_from = a > m->touched ? a : m->touched;
    if (a + size > m->touched) m->touched = a + size;
    pthread_mutex_unlock(&m->mu);
    *out_addr = m->base + a;
    return PTO_OK;
  }
  uint64_t used = m->used, largest = largest_free_locked(m);
  pthread_mutex_unlock(&m->mu);
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                         "out of device memory allocating %s%s%s%s: %llu bytes requested, %llu of "
                         "%llu bytes in use, largest free block %llu bytes; raise %s or free "
                         "device tensors",
                         what, q, name, qe, (unsigned long long)nbytes, (unsigned long long)used,
                         (unsigned long long)m->size, (unsigned long long)largest, knob_of(m));
}

/* A buffer of 64 KiB or more starts on a page (4 KiB from the arena's start, which mmap gives a
 * page) where a free block has room for it there, else where align allows (from 64 KiB up the
 * bytes a page boundary can skip are at most 6% of the buffer's). A kernel that
 * streams a large tensor's rows in pieces then finds each piece whole in a page, which is as far
 * as the hardware prefetchers follow a stream: a decode product, [1, 4096] x [4096, 4096] f32 in
 * tasks of 1024 columns, reads one 4 KiB piece of each row of W, and with W 2 KiB past a page it
 * ran 10-20% slower on Zen 4 (bench/RESULTS.md, round 20, "mm20"). The bytes before such a
 * buffer stay free for smaller ones. */
static pto_status alloc(pto__rt_devmem *m, uint64_t nbytes, uint64_t align, const char *what,
                        const char *name, uint64_t *out_addr, uint64_t *out_fresh_from) {
  if (nbytes >= 65536 && align < 4096 && !(align & (align - 1))) {
    pto_status s = alloc_at(m, nbytes, 4096, what, name, out_addr, out_fresh_from);
    if (!s || pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) return s;
    pto_status_free(s);
  }
  return alloc_at(m, nbytes, align, what, name, out_addr, out_fresh_from);
}

pto_status pto__rt_devmem_alloc(pto__rt_devmem *m, uint64_t nbytes, uint64_t align,
                                const char *what, const char *name, uint64_t *out_addr) {
  return alloc(m, nbytes, align, what, name, out_addr, NULL);
}

pto_status pto__rt_devmem_alloc_whole(pto__rt_devmem *m, uint64_t nbytes, const char *what,
                                      const char *name, uint64_t *out_addr, int *out_zero) {
  uint64_t fresh;
  *out_zero = 0;
  PTO_RETURN_IF_ERROR(alloc(m, nbytes, 64, what, name, out_addr, &fresh));
  uint64_t off = *out_addr - m->base, end = off + nbytes;
  *out_zero = fresh <= off;
#ifdef MADV_POPULATE_WRITE
  /* The never-touched pages, whole pages only (a page shared with an older allocation is
   * backed already, or soon by its own fault). A kernel without it (before 5.14) says EINVAL:
   * the writes then fault page by page, as without this call. */
  uintptr_t lo = ((uintptr_t)m->host + (fresh > off ? fresh : off) + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = ((uintptr_t)m->host + end) & ~(uintptr_t)4095;
  if (hi > lo && end - off >= 16384) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
  return PTO_OK;
}

int pto__rt_devmem_free(pto__rt_devmem *m, uint64_t addr) {
  pthread_mutex_lock(&m->mu);
  uint64_t *v = pto__rt_map_find(&m->allocs, addr);
  if (!v) {
    pthread_mutex_unlock(&m->mu);
    return 0;
  }
  uint64_t size = *v ? (*v + 63) & ~63ull : 64;
  pto__rt_map_del(&m->allocs, addr);
  /* A free list that cannot grow loses this block until a neighbour is freed: no corruption. */
  (void)release_locked(m, addr - m->base, size);
  m->used -= size;
  pthread_mutex_unlock(&m->mu);
  return 1;
}

int pto__rt_devmem_size(pto__rt_devmem *m, uint64_t addr, uint64_t *out_nbytes) {
  int in1 = addr - m->ext_base < m->ext_size, in2 = addr - m->ext2_base < m->ext2_size;
  if (in1 || in2) { /* the external regions: owned and checked elsewhere */
    pthread_mutex_lock(&m->mu);
    uint64_t *w = pto__rt_map_find(&m->ext_sizes, addr);
    *out_nbytes = w     ? *w
                  : in1 ? m->ext_size - (addr - m->ext_base)
                        : m->ext2_size - (addr - m->ext2_base);
    pthread_mutex_unlock(&m->mu);
    return 1;
  }
  pthread_mutex_lock(&m->mu);
  uint64_t *v = pto__rt_map_find(&m->allocs, addr);
  *out_nbytes = v ? *v : 0;
  pthread_mutex_unlock(&m->mu);
  return v != NULL;
}

void pto__rt_devmem_info(pto__rt_devmem *m, pto_device_memory_info *out) {
  pthread_mutex_lock(&m->mu);
  out->base = m->base;
  out->total = m->size;
  out->used = m->used;
  out->peak = m->peak;
  out->nallocs = m->allocs.n;
  out->largest_free = largest_free_locked(m);
  pthread_mutex_unlock(&m->mu);
}
