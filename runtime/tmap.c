/* The tensor map: per buffer, the accesses of unfinished tasks, binned by byte range so that a
 * submit looks only at the accesses near its own range (runtime_internal.h explains the
 * layout). Used by the dispatching thread only; a task's done flag is the one field it reads
 * that core threads write. */
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "runtime_internal.h"

#define TM_MIN_SHIFT 6 /* 64-byte bins at the finest level */
#define TM_SWEEP_MIN 64
#define TM_DIRECT_MAX (1ull << 20) /* bins of a level kept in an array, at most */
#define TM_DIRECT_SMALL 512        /* bins of an array taken from the bump arena, at most */

static int32_t shift_for(uint64_t span) {
  if (span <= (1ull << TM_MIN_SHIFT)) return TM_MIN_SHIFT;
  return 64 - __builtin_clzll(span - 1);
}

static pto__rt_tm_entry *head_of(uint64_t v) { return (pto__rt_tm_entry *)(uintptr_t)v; }

static void give_back(pto__rt_tm_alloc *a, pto__rt_tm_entry *e) {
  e->next = a->free;
  a->free = e;
}

static int entry_done(const pto__rt_tm_entry *e) { return atomic_load(&e->task->done) != 0; }

/* Drops the entries of finished tasks from one bin's list. */
static void filter_done(pto__rt_tm_level *lv, pto__rt_tm_alloc *a, uint64_t *head) {
  pto__rt_tm_entry *e = head_of(*head), *keep = NULL, **tail = &keep;
  while (e) {
    pto__rt_tm_entry *next = e->next;
    if (entry_done(e)) {
      give_back(a, e);
      lv->n--;
    } else {
      *tail = e;
      tail = &e->next;
    }
    e = next;
  }
  *tail = NULL;
  *head = (uint64_t)(uintptr_t)keep;
}

/* Drops the entries of finished tasks from every bin; a hash level's map is rebuilt without
 * the bins left empty. */
static void sweep(pto__rt_tm_level *lv, pto__rt_tm_alloc *a) {
  if (lv->direct) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t b = lv->dmin; b <= lv->dmax && b < lv->ndirect; b++) {
      if (!lv->direct[b]) continue;
      filter_done(lv, a, &lv->direct[b]);
      if (lv->direct[b]) {
        if (b < lo) lo = b;
        if (b > hi) hi = b;
      }
    }
    lv->dmin = lo;
    lv->dmax = hi;
    lv->sweep_at = lv->n * 2 > TM_SWEEP_MIN ? lv->n * 2 : TM_SWEEP_MIN;
    return;
  }
  pto__rt_map nm = {0};
  int ok = 1;
  for (size_t i = 0; i < lv->bins.cap; i++) {
    if (!lv->bins.keys[i]) continue;
    filter_done(lv, a, &lv->bins.vals[i]);
    if (lv->bins.vals[i] && ok && pto__rt_map_put(&nm, lv->bins.keys[i], lv->bins.vals[i]) != 0)
      ok = 0;
  }
  if (ok) {
    pto__rt_map_fini(&lv->bins);
    lv->bins = nm;
  } else {
    pto__rt_map_fini(&nm); /* out of memory: keep the old map (its lists are filtered) */
  }
  lv->sweep_at = lv->bins.n * 2 > TM_SWEEP_MIN ? lv->bins.n * 2 : TM_SWEEP_MIN;
}

static void maybe_sweep(pto__rt_tm_level *lv, pto__rt_tm_alloc *a) {
  size_t size = lv->direct ? lv->n : lv->bins.n;
  if (size < lv->sweep_at) return;
  unsigned long done = a->ncompleted ? atomic_load(a->ncompleted) : ~0ul;
  if (a->ncompleted && done - lv->swept_at_completed < size / 2) {
    lv->sweep_at = size * 2; /* too few completions to be worth a sweep */
    return;
  }
  sweep(lv, a);
  lv->swept_at_completed = done;
}

static pto__rt_tm_level *level_of(pto__rt_tmap *m, pto__rt_tm_alloc *a, int32_t shift,
                                  uint64_t size) {
  for (int32_t i = 0; i < m->nlv; i++)
    if (m->lv[i].shift == shift) return &m->lv[i];
  if (!m->lv) {
    /* The first level lives in the map itself: a launch of a few tasks mallocs nothing here. */
    m->lv = m->inline_lv;
    m->caplv = 1;
  }
  if (m->nlv == m->caplv) {
    int32_t ncap = m->caplv * 2;
    pto__rt_tm_level *nl = pto_malloc((size_t)ncap * sizeof *nl);
    if (!nl) return NULL;
    memcpy(nl, m->lv, (size_t)m->nlv * sizeof *nl);
    if (m->lv != m->inline_lv) free(m->lv);
    m->lv = nl;
    m->caplv = ncap;
  }
  pto__rt_tm_level lv;
  memset(&lv, 0, sizeof lv);
  lv.shift = shift;
  lv.sweep_at = TM_SWEEP_MIN;
  uint64_t nb = (size >> shift) + 1;
  if (nb <= TM_DIRECT_SMALL) {
    if (!(lv.direct = pto__rt_bump_alloc(a->bump, nb * sizeof *lv.direct))) return NULL;
    memset(lv.direct, 0, nb * sizeof *lv.direct);
    lv.direct_bump = 1;
  } else if (nb <= TM_DIRECT_MAX && !(lv.direct = pto_calloc(nb, sizeof *lv.direct))) {
    return NULL;
  }
  if (lv.direct) {
    lv.ndirect = nb;
    lv.dmin = UINT64_MAX; /* and dmax 0: no bin in use */
  }
  m->lv[m->nlv] = lv;
  return &m->lv[m->nlv++];
}

int pto__rt_tmap_insert(pto__rt_tmap *m, pto__rt_tm_alloc *a, uint64_t buffer, uint64_t size,
                        pto__rt_task *t, const pto__rt_region *r) {
  pto__rt_tm_level *lv = level_of(m, a, shift_for(r->hi - r->lo), size);
  if (!lv) return -1;
  pto__rt_tm_entry *e = a->free;
  if (e)
    a->free = e->next;
  else if (!(e = pto__rt_bump_alloc(a->bump, sizeof *e)))
    return -1;
  e->task = t;
  e->r = *r;
  uint64_t bin = (r->lo - buffer) >> lv->shift;
  if (lv->direct) {
    maybe_sweep(lv, a);
    uint64_t *h = &lv->direct[bin];
    e->next = head_of(*h);
    *h = (uint64_t)(uintptr_t)e;
    if (bin < lv->dmin) lv->dmin = bin;
    if (bin > lv->dmax) lv->dmax = bin;
    lv->n++;
    return 0;
  }
  uint64_t *v = pto__rt_map_find(&lv->bins, bin + 1);
  if (v) {
    e->next = head_of(*v);
    *v = (uint64_t)(uintptr_t)e;
  } else {
    maybe_sweep(lv, a);
    e->next = NULL;
    if (pto__rt_map_put(&lv->bins, bin + 1, (uint64_t)(uintptr_t)e) != 0) {
      give_back(a, e);
      return -1;
    }
  }
  lv->n++;
  return 0;
}

/* Visits one bin's list; returns 1 when the bin is left empty. */
static int visit_bin(pto__rt_tm_level *lv, pto__rt_tm_alloc *a, uint64_t *head,
                     const pto__rt_region *r, int covering, pto__rt_tm_visit_fn fn, void *ctx) {
  pto__rt_tm_entry *e = head_of(*head), *prev = NULL;
  while (e) {
    pto__rt_tm_entry *next = e->next;
    int drop = 0;
    /* Disjoint byte ranges first: that needs no look at the task (another core's cache line). */
    if (!(e->r.hi <= r->lo || r->hi <= e->r.lo)) {
      if (entry_done(e)) {
        drop = 1;
      } else {
        drop = fn(ctx, e) && covering && r->lo <= e->r.lo && e->r.hi <= r->hi;
      }
    }
    if (drop) {
      if (prev)
        prev->next = next;
      else
        *head = (uint64_t)(uintptr_t)next;
      give_back(a, e);
      lv->n--;
    } else {
      prev = e;
    }
    e = next;
  }
  return *head == 0;
}

void pto__rt_tmap_visit(pto__rt_tmap *m, pto__rt_tm_alloc *a, uint64_t buffer,
                        const pto__rt_region *r, int covering, pto__rt_tm_visit_fn fn, void *ctx) {
  if (r->lo == r->hi) return;
  uint64_t qlo = r->lo - buffer, qhi = r->hi - buffer;
  for (int32_t i = 0; i < m->nlv; i++) {
    pto__rt_tm_level *lv = &m->lv[i];
    if (!lv->n) continue;
    uint64_t b0 = qlo >> lv->shift, b1 = (qhi - 1) >> lv->shift;
    if (b0) b0--; /* an access starting in the bin before may reach into b0 */
    if (lv->direct) {
      if (b0 < lv->dmin) b0 = lv->dmin;
      if (b1 > lv->dmax) b1 = lv->dmax;
      for (uint64_t b = b0; b <= b1; b++)
        if (lv->direct[b]) visit_bin(lv, a, &lv->direct[b], r, covering, fn, ctx);
    } else if (b1 - b0 < lv->bins.n) {
      for (uint64_t b = b0;; b++) {
        uint64_t *v = pto__rt_map_find(&lv->bins, b + 1);
        if (v && visit_bin(lv, a, v, r, covering, fn, ctx)) pto__rt_map_del(&lv->bins, b + 1);
        if (b == b1) break;
      }
    } else {
      /* The range covers more bins than the level holds: walk the bins it holds instead
       * (bins left empty stay until the next sweep). */
      for (size_t k = 0; k < lv->bins.cap; k++) {
        uint64_t key = lv->bins.keys[k];
        if (key && key - 1 >= b0 && key - 1 <= b1 && lv->bins.vals[k])
          visit_bin(lv, a, &lv->bins.vals[k], r, covering, fn, ctx);
      }
    }
  }
}

static void give_back_list(pto__rt_tm_alloc *a, uint64_t head) {
  for (pto__rt_tm_entry *e = head_of(head), *next; e; e = next) {
    next = e->next;
    give_back(a, e);
  }
}

void pto__rt_tmap_reset(pto__rt_tmap *m, pto__rt_tm_alloc *a) {
  for (int32_t i = 0; i < m->nlv; i++) {
    pto__rt_tm_level *lv = &m->lv[i];
    if (!lv->n) continue;
    if (lv->direct) {
      for (uint64_t b = lv->dmin; b <= lv->dmax && b < lv->ndirect; b++)
        give_back_list(a, lv->direct[b]);
    } else {
      for (size_t k = 0; k < lv->bins.cap; k++)
        if (lv->bins.keys[k]) give_back_list(a, lv->bins.vals[k]);
    }
  }
  pto__rt_tmap_fini(m);
}

void pto__rt_tmap_fini(pto__rt_tmap *m) {
  for (int32_t i = 0; i < m->nlv; i++) {
    pto__rt_map_fini(&m->lv[i].bins);
    if (!m->lv[i].direct_bump) free(m->lv[i].direct);
  }
  if (m->lv != m->inline_lv) free(m->lv);
  memset(m, 0, sizeof *m);
}

size_t pto__rt_tmap_count(const pto__rt_tmap *m) {
  size_t n = 0;
  for (int32_t i = 0; i < m->nlv; i++)
    n += m->lv[i].n;
  return n;
}
