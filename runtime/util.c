/* Runtime plumbing: the clock, the object registry, a u64 hash map and a bump arena. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "pto/base.h"
#include "runtime_internal.h"

uint64_t pto__rt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pto__rt_usable_cpus(void) {
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n < 1) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c < 1 ? 1 : c > 1 << 20 ? 1 << 20 : (int)c;
  }
  return n;
}

pto_status pto__rt_log_level(int *out) {
  static const struct {
    const char *name;
    int level;
  } k_levels[] = {{"null", PTO__RT_LOG_NULL},      {"error", PTO_ORCH_LOG_ERROR},
                  {"warn", PTO_ORCH_LOG_WARN},     {"warning", PTO_ORCH_LOG_WARN},
                  {"timing", PTO_ORCH_LOG_TIMING}, {"info", PTO_ORCH_LOG_INFO},
                  {"debug", PTO_ORCH_LOG_DEBUG}};
  *out = PTO_ORCH_LOG_WARN;
  const char *v = getenv("PTO_LOG_LEVEL");
  if (!v || !*v) return PTO_OK;
  for (size_t i = 0; i < sizeof k_levels / sizeof k_levels[0]; i++)
    if (!strcasecmp(v, k_levels[i].name)) {
      *out = k_levels[i].level;
      return PTO_OK;
    }
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "PTO_LOG_LEVEL is '%s': expected one of: null, error, warn, timing, info, "
                         "debug (each includes the ones before it; timing and later write every "
                         "launch's [STRACE] lines)",
                         v);
}

/* ---- object registry ------------------------------------------------------------------
 *
 * Callers hold tokens (generation << 32 | slot + 1), never pointers, so a token that outlived
 * its object is recognised and reported instead of dereferenced. A retired slot keeps why it was
 * retired until it is reused; slots are reused oldest first and only once PTO__RT_REUSE_AFTER
 * others are waiting, so a recently retired token is reliably explained (double free is a no-op).
 *
 * An object may be pinned (pto__rt_obj_pin): a call that uses it holds a pin until it returns,
 * and pto__rt_obj_retire_wait retires the token and then waits until every pin is released, so
 * the object can be freed while no other thread is inside a call on it. A handle or tensor is
 * added with its owner (its worker): pinning it pins the owner, which must be live too.
 *
 * The registry is process-global mutable state, guarded by g_registry.mu; g_registry.unpinned
 * is signalled when a retired slot's last pin is released. */

#define PTO__RT_REUSE_AFTER 256u

typedef struct pto__rt_slot {
  void *obj;
  uint32_t gen;
  uint32_t owner; /* the owner's slot index + 1, or 0 */
  uint32_t owner_gen;
  uint32_t pins; /* calls inside the object now; a pinned slot is never reused */
  uint8_t kind;
  uint8_t live;
  uint8_t gone;
  uint8_t waiting; /* retired and pinned: retire_wait pushes it to the ring once unpinned */
} pto__rt_slot;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t unpinned;
  pto__rt_slot *slots;
  uint32_t nslots, capslots;
  uint32_t *fifo; /* retired slot indices, a ring */
  uint32_t fhead, fcount, fcap;
} g_registry = {.mu = PTHREAD_MUTEX_INITIALIZER, .unpinned = PTHREAD_COND_INITIALIZER};

static void *make_token(uint32_t idx, uint32_t gen) {
  return (void *)(uintptr_t)(((uint64_t)gen << 32) | ((uint64_t)idx + 1));
}

static int split_token(const void *token, uint32_t *out_idx, uint32_t *out_gen) {
  uint64_t v = (uint64_t)(uintptr_t)token;
  uint32_t lo = (uint32_t)v;
  if (lo == 0) return 0;
  *out_idx = lo - 1;
  *out_gen = (uint32_t)(v >> 32);
  return 1;
}

void *pto__rt_obj_add(pto__rt_obj_kind kind, void *obj) {
  return pto__rt_obj_add_owned(kind, obj, NULL);
}

void *pto__rt_obj_add_owned(pto__rt_obj_kind kind, void *obj, const void *owner) {
  uint32_t owner_idx = 0, owner_gen = 0;
  if (owner && !split_token(owner, &owner_idx, &owner_gen)) return NULL;
  pthread_mutex_lock(&g_registry.mu);
  uint32_t idx;
  if (g_registry.fcount > PTO__RT_REUSE_AFTER) {
    idx = g_registry.fifo[g_registry.fhead];
    g_registry.fhead = (g_registry.fhead + 1) % g_registry.fcap;
    g_registry.fcount--;
  } else {
    if (g_registry.nslots == g_registry.capslots) {
      /* A slot's index + 1 is its token's low half, which is never 0. */
      size_t cap = g_registry.capslots;
      if (g_registry.nslots >= UINT32_MAX - 1 ||
          pto_grow(&g_registry.slots, sizeof *g_registry.slots, &cap,
                   (size_t)g_registry.nslots + 1)) {
        pthread_mutex_unlock(&g_registry.mu);
        return NULL;
      }
      g_registry.capslots = cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX;
    }
    /* The retired-slot ring must be able to take every slot, so a removal never allocates. */
    if (g_registry.fcap < g_registry.capslots) {
      uint32_t ncap = g_registry.capslots;
      uint32_t *nf = pto_malloc((size_t)ncap * sizeof *nf);
      if (!nf) {
        pthread_mutex_unlock(&g_registry.mu);
        return NULL;
      }
      for (uint32_t i = 0; i < g_registry.fcount; i++)
        nf[i] = g_registry.fifo[(g_registry.fhead + i) % g_registry.fcap];
      free(g_registry.fifo);
      g_registry.fifo = nf;
      g_registry.fhead = 0;
      g_registry.fcap = ncap;
    }
    idx = g_registry.nslots++;
    g_registry.slots[idx].gen = 1;
  }
  pto__rt_slot *s = &g_registry.slots[idx];
  s->obj = obj;
  s->kind = (uint8_t)kind;
  s->live = 1;
  s->gone = PTO__RT_GONE_UNKNOWN;
  s->owner = owner ? owner_idx + 1 : 0;
  s->owner_gen = owner ? owner_gen : 0;
  s->pins = 0;
  s->waiting = 0;
  void *token = make_token(idx, s->gen);
  pthread_mutex_unlock(&g_registry.mu);
  return token;
}

/* The live slot a token names, or NULL with *gone saying why not. Under g_registry.mu. */
static pto__rt_slot *lookup(const void *token, pto__rt_obj_kind kind, pto__rt_gone *gone) {
  uint32_t idx, gen;
  *gone = token ? PTO__RT_GONE_UNKNOWN : PTO__RT_GONE_NULL;
  if (!split_token(token, &idx, &gen) || idx >= g_registry.nslots) return NULL;
  pto__rt_slot *s = &g_registry.slots[idx];
  if (s->live && s->gen == gen) {
    if (s->kind == kind) return s;
    *gone = PTO__RT_GONE_WRONG_KIND;
  } else if (!s->live && s->gen == gen + 1) {
    *gone = (pto__rt_gone)s->gone;
  }
  return NULL;
}

void *pto__rt_obj_get(const void *token, pto__rt_obj_kind kind, pto__rt_gone *out_gone) {
  pto__rt_gone gone;
  pthread_mutex_lock(&g_registry.mu);
  pto__rt_slot *s = lookup(token, kind, &gone);
  void *obj = s ? s->obj : NULL;
  pthread_mutex_unlock(&g_registry.mu);
  if (out_gone) *out_gone = gone;
  return obj;
}

void *pto__rt_obj_pin(const void *token, pto__rt_obj_kind kind, pto__rt_gone *out_gone,
                      uint32_t *out_pin) {
  pto__rt_gone gone;
  void *obj = NULL;
  pthread_mutex_lock(&g_registry.mu);
  pto__rt_slot *s = lookup(token, kind, &gone);
  if (s) {
    uint32_t idx = s->owner ? s->owner - 1 : (uint32_t)(s - g_registry.slots);
    pto__rt_slot *o = &g_registry.slots[idx];
    if (o->live && (!s->owner || o->gen == s->owner_gen)) {
      o->pins++;
      *out_pin = idx;
      obj = s->obj;
    } else {
      gone = PTO__RT_GONE_WORKER_CLOSED; /* its owner is being closed */
    }
  }
  pthread_mutex_unlock(&g_registry.mu);
  if (out_gone) *out_gone = gone;
  return obj;
}

void pto__rt_obj_unpin(uint32_t pin) {
  pthread_mutex_lock(&g_registry.mu);
  pto__rt_slot *s = &g_registry.slots[pin];
  if (--s->pins == 0 && s->waiting) pthread_cond_broadcast(&g_registry.unpinned);
  pthread_mutex_unlock(&g_registry.mu);
}

void *pto__rt_obj_take(const void *token, pto__rt_obj_kind kind, pto__rt_gone why,
                       pto__rt_gone *out_gone) {
  pto__rt_gone gone;
  pthread_mutex_lock(&g_registry.mu);
  pto__rt_slot *s = lookup(token, kind, &gone);
  void *obj = s ? s->obj : NULL;
  pthread_mutex_unlock(&g_registry.mu);
  if (obj) pto__rt_obj_remove(token, why);
  if (out_gone) *out_gone = gone;
  return obj;
}

/* Retires slot idx (live, of generation gen): later lookups say why; reused once unpinned.
 * Returns 1 if it was live. Under g_registry.mu. */
static int retire(const void *token, pto__rt_gone why, uint32_t *out_idx) {
  uint32_t idx, gen;
  if (!split_token(token, &idx, &gen) || idx >= g_registry.nslots) return 0;
  pto__rt_slot *s = &g_registry.slots[idx];
  if (!s->live || s->gen != gen) return 0;
  s->live = 0;
  s->obj = NULL;
  s->gone = (uint8_t)why;
  s->gen++;
  *out_idx = idx;
  return 1;
}

static void recycle(uint32_t idx) {
  g_registry.fifo[(g_registry.fhead + g_registry.fcount) % g_registry.fcap] = idx;
  g_registry.fcount++;
}

void pto__rt_obj_remove(const void *token, pto__rt_gone why) {
  uint32_t idx;
  pthread_mutex_lock(&g_registry.mu);
  if (retire(token, why, &idx)) recycle(idx);
  pthread_mutex_unlock(&g_registry.mu);
}

int pto__rt_obj_retire_wait(const void *token, pto__rt_gone why) {
  uint32_t idx;
  pthread_mutex_lock(&g_registry.mu);
  int retired = retire(token, why, &idx);
  if (retired) {
    /* By index: the array may move (grow) while we wait. The calls inside end by themselves:
     * each holds its pin only while it runs. */
    g_registry.slots[idx].waiting = 1;
    while (g_registry.slots[idx].pins)
      pthread_cond_wait(&g_registry.unpinned, &g_registry.mu);
    g_registry.slots[idx].waiting = 0;
    recycle(idx);
  }
  pthread_mutex_unlock(&g_registry.mu);
  return retired;
}

const char *pto__rt_gone_text(pto__rt_gone why, pto__rt_obj_kind kind) {
  static const char *const wrong[] = {
      [PTO__RT_OBJ_WORKER] = "not a worker (a token of another kind)",
      [PTO__RT_OBJ_HANDLE] = "not a handle (a token of another kind)",
      [PTO__RT_OBJ_TENSOR] = "not a device tensor (a token of another kind)",
      [PTO__RT_OBJ_COMPLETION] = "not a completion (a token of another kind)",
      [PTO__RT_OBJ_DIST_WORKER] = "not a distributed worker (a token of another kind)",
      [PTO__RT_OBJ_DIST_TENSOR] = "not a distributed tensor (a token of another kind)",
  };
  static const char *const unknown[] = {
      [PTO__RT_OBJ_WORKER] = "not an open worker (closed long ago, or never opened)",
      [PTO__RT_OBJ_HANDLE] = "not a live handle (stale, or never registered)",
      [PTO__RT_OBJ_TENSOR] = "not a live device tensor (stale, or never allocated)",
      [PTO__RT_OBJ_COMPLETION] = "not a live completion (waited for or discarded long ago, or "
                                 "never submitted)",
      [PTO__RT_OBJ_DIST_WORKER] = "not an open distributed worker (closed long ago, or never "
                                  "opened)",
      [PTO__RT_OBJ_DIST_TENSOR] = "not a live tensor of a distributed worker (stale, or never "
                                  "allocated)",
  };
  static const char *const null[] = {
      [PTO__RT_OBJ_WORKER] = "the worker is NULL",
      [PTO__RT_OBJ_HANDLE] = "the handle is NULL",
      [PTO__RT_OBJ_TENSOR] = "the device tensor is NULL",
      [PTO__RT_OBJ_COMPLETION] = "the completion is NULL",
      [PTO__RT_OBJ_DIST_WORKER] = "the distributed worker is NULL",
      [PTO__RT_OBJ_DIST_TENSOR] = "the tensor is NULL",
  };
  switch (why) {
  case PTO__RT_GONE_CLOSED:
    return kind == PTO__RT_OBJ_DIST_WORKER ? "the distributed worker is closed"
                                           : "the worker is closed";
  case PTO__RT_GONE_WORKER_CLOSED: return "its worker was closed";
  case PTO__RT_GONE_FREED:
    return kind == PTO__RT_OBJ_DIST_TENSOR ? "the tensor was freed" : "the device tensor was freed";
  case PTO__RT_GONE_UNREGISTERED: return "the handle was unregistered";
  case PTO__RT_GONE_WAITED: return "the completion was waited for already (each is consumed once)";
  case PTO__RT_GONE_DISCARDED: return "the completion was discarded";
  case PTO__RT_GONE_WRONG_KIND: return wrong[kind];
  case PTO__RT_GONE_NULL: return null[kind];
  case PTO__RT_GONE_UNKNOWN: break;
  }
  return unknown[kind];
}

pto_status_code pto__rt_gone_code(pto__rt_gone why, pto_status_code stale_code) {
  return why == PTO__RT_GONE_NULL ? PTO_STATUS_INVALID_ARGUMENT : stale_code;
}

/* ---- u64 map ------------------------------------------------------------------------- */

static size_t map_slot(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

void pto__rt_map_fini(pto__rt_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

void pto__rt_map_clear(pto__rt_map *m) {
  if (m->n && m->keys) memset(m->keys, 0, m->cap * sizeof *m->keys);
  m->n = 0;
}

uint64_t *pto__rt_map_find(const pto__rt_map *m, uint64_t key) {
  /* 0 marks an empty slot: it is never a key (it would "find" any empty slot's garbage). */
  if (!m->cap || key == 0) return NULL;
  for (size_t i = map_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) return &m->vals[i];
    if (m->keys[i] == 0) return NULL;
  }
}

static int map_grow(pto__rt_map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  uint64_t *nk = pto_calloc(ncap, sizeof *nk);
  uint64_t *nv = pto_malloc(ncap * sizeof *nv);
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = map_slot(m->keys[i], ncap);
    while (nk[j])
      j = (j + 1) & (ncap - 1);
    nk[j] = m->keys[i];
    nv[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  return 0;
}

int pto__rt_map_put(pto__rt_map *m, uint64_t key, uint64_t val) {
  if (key == 0) return -1;
  uint64_t *v = pto__rt_map_find(m, key);
  if (v) {
    *v = val;
    return 0;
  }
  if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m) != 0) return -1;
  size_t i = map_slot(key, m->cap);
  while (m->keys[i])
    i = (i + 1) & (m->cap - 1);
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
  return 0;
}

int pto__rt_map_del(pto__rt_map *m, uint64_t key) {
  if (!m->cap || key == 0) return 0;
  size_t mask = m->cap - 1, i = map_slot(key, m->cap);
  while (m->keys[i] != key) {
    if (!m->keys[i]) return 0;
    i = (i + 1) & mask;
  }
  /* Backward-shift deletion keeps probe chains intact without tombstones. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!m->keys[j]) break;
    size_t home = map_slot(m->keys[j], m->cap);
    int between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (between) continue;
    m->keys[i] = m->keys[j];
    m->vals[i] = m->vals[j];
    i = j;
  }
  m->keys[i] = 0;
  m->n--;
  return 1;
}

/* ---- bump arena ---------------------------------------------------------------------- */

struct pto__rt_chunk {
  pto__rt_chunk *next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
};

void *pto__rt_bump_alloc(pto__rt_bump *b, size_t size) {
  size = (size + 15) & ~(size_t)15;
  while (b->cur) {
    pto__rt_chunk *c = b->cur;
    if (c->cap - c->used >= size) {
      void *p = c->data + c->used;
      c->used += size;
      b->live += size;
      return p;
    }
    if (!c->next) break;
    b->cur = c->next;
    b->cur->used = 0;
  }
  size_t cap = 64 * 1024;
  if (cap < size) cap = size;
  pto__rt_chunk *c = pto_malloc(sizeof *c + cap);
  if (!c) return NULL;
  c->next = NULL;
  c->cap = cap;
  c->used = size;
  if (b->cur)
    b->cur->next = c;
  else
    b->first = c;
  b->cur = c;
  b->live += size;
  return c->data;
}

void pto__rt_bump_reset(pto__rt_bump *b) {
  b->cur = b->first;
  if (b->cur) b->cur->used = 0;
  b->live = 0;
}

void pto__rt_bump_fini(pto__rt_bump *b) {
  pto__rt_chunk *c = b->first;
  while (c) {
    pto__rt_chunk *n = c->next;
    free(c);
    c = n;
  }
  b->first = b->cur = NULL;
}
