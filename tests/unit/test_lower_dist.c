/* Kernel-side dist.* lowering (compiler/lower_dist.c): kernels using each dist op are lowered
 * through LLVM, linked, and called with a FAKE pto_dist_ctx whose functions record their
 * arguments, so every address, peer, stride, extent, element size and mode is checked exactly;
 * a nonzero return from the table comes back as the kernel's return, and a NULL table (an L2
 * worker) gives PTO_KERNEL_ERR_DIST. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "pto/ir.h"
#include "pto/kernel_abi.h"
#include "testutil.h"

/* ---- the fake transport ------------------------------------------------------------------- */

typedef struct fake_call {
  int fn; /* 1 notify, 2 wait, 3 remote_load, 4 remote_store, 5 barrier, 6 collective
           * (collective: peer = kind, value = root, mode = op, elem_bytes = mode) */
  const void *p0, *p1;
  int64_t s0, s1, rows, cols;
  int32_t peer, value, mode, elem_bytes;
} fake_call;

static fake_call g_calls[16];
static int g_ncalls;
static int32_t g_fail_at = -1; /* the call number that returns g_fail_code */
static int32_t g_fail_code;
static float g_peer_data[8 * 8]; /* what a remote_load reads: the "peer's window" */

static int32_t record(fake_call c) {
  int i = g_ncalls++;
  if (i < 16) g_calls[i] = c;
  return i == g_fail_at ? g_fail_code : 0;
}

static int32_t f_notify(const pto_dist_ctx *d, int32_t *sig, int32_t peer, int32_t value,
                        int32_t op) {
  (void)d;
  return record((fake_call){.fn = 1, .p0 = sig, .peer = peer, .value = value, .mode = op});
}
static int32_t f_wait(const pto_dist_ctx *d, int32_t *sig, int32_t value, int32_t cmp) {
  (void)d;
  return record((fake_call){.fn = 2, .p0 = sig, .value = value, .mode = cmp});
}
static int32_t f_remote_load(const pto_dist_ctx *d, void *dst, int64_t dst_stride,
                             const void *src_local, int64_t src_stride, int32_t peer, int64_t rows,
                             int64_t cols, int32_t elem_bytes) {
  (void)d;
  /* Copy from the fake peer window so the kernel's use of the tile can be checked too. */
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      ((float *)dst)[r * dst_stride + c] = g_peer_data[(r * 8 + c) % 64];
  return record((fake_call){.fn = 3,
                            .p0 = dst,
                            .s0 = dst_stride,
                            .p1 = src_local,
                            .s1 = src_stride,
                            .peer = peer,
                            .rows = rows,
                            .cols = cols,
                            .elem_bytes = elem_bytes});
}
static int32_t f_remote_store(const pto_dist_ctx *d, const void *src, int64_t src_stride,
                              void *dst_local, int64_t dst_stride, int32_t peer, int64_t rows,
                              int64_t cols, int32_t elem_bytes) {
  (void)d;
  return record((fake_call){.fn = 4,
                            .p0 = src,
                            .s0 = src_stride,
                            .p1 = dst_local,
                            .s1 = dst_stride,
                            .peer = peer,
                            .rows = rows,
                            .cols = cols,
                            .elem_bytes = elem_bytes});
}

static int32_t f_barrier(const pto_dist_ctx *d, const struct pto_kernel_tensor *sig) {
  (void)d;
  return record((fake_call){.fn = 5, .p0 = sig});
}
static int32_t f_collective(const pto_dist_ctx *d, int32_t kind,
                            const struct pto_kernel_tensor *win,
                            const struct pto_kernel_tensor *sig, int32_t op, int32_t mode,
                            int32_t root) {
  (void)d;
  return record((fake_call){
      .fn = 6, .p0 = win, .p1 = sig, .peer = kind, .value = root, .mode = op, .elem_bytes = mode});
}

static pto_dist_ctx fake_ctx(int rank, int nranks) {
  pto_dist_ctx d;
  memset(&d, 0, sizeof d);
  d.version = PTO_DIST_ABI_VERSION;
  d.size = sizeof d;
  d.rank = rank;
  d.nranks = nranks;
  d.notify = f_notify;
  d.wait = f_wait;
  d.remote_load = f_remote_load;
  d.remote_store = f_remote_store;
  d.barrier = f_barrier;
  d.collective = f_collective;
  g_ncalls = 0;
  g_fail_at = -1;
  memset(g_calls, 0, sizeof g_calls);
  return d;
}

/* ---- building and calling ----------------------------------------------------------------- */

static const char *k_src =
    "program d\n"
    "dynamic R\n"
    "kernel @k_rank(%w: dtensor[4,4] i32, out %o: tensor[1,2] i32) -> (tensor[1,2] i32) {\n"
    "  %c = dist.comm_ctx(%w)\n"
    "  %r = dist.rank(%c)\n"
    "  %n = dist.nranks(%w)\n"
    "  %tr = tile.full([1, 1], i32, i32(%r))\n"
    "  %tn = tile.full([1, 1], i32, i32(%n))\n"
    "  %o1 = tile.store(%tr, [0, 0], %o)\n"
    "  %o2 = tile.store(%tn, [0, 1], %o1)\n"
    "  return %o2\n"
    "}\n"
    "kernel @k_sig(inout %sig: dtensor[2,8] i32, %p: index) -> (dtensor[2,8] i32) {\n"
    "  %s1 = dist.notify(%sig, %p + 1, [1, 3], 7, op=atomic_add)\n"
    "  dist.notify(%s1, %p, [0, 5], -2, op=set)\n"
    "  dist.wait(%s1, [1, 2], 9, cmp=ge)\n"
    "  dist.wait(%s1, [0, 0], 4, cmp=eq)\n"
    "  return %s1\n"
    "}\n"
    "kernel @k_load(%w: dtensor[8,16] f32, out %o: tensor[4,8] f32, %p: index)\n"
    "    -> (tensor[4,8] f32) {\n"
    "  %t = dist.remote_load(%w, %p, [2, 4], [4, 8])\n"
    "  %u = tile.adds(%t, 1.0)\n"
    "  %o1 = tile.store(%u, [0, 0], %o)\n"
    "  return %o1\n"
    "}\n"
    "kernel @k_load_edge(%w: dtensor[R,16] f32, out %o: tensor[4,8] f32, %c0: index)\n"
    "    -> (tensor[4,8] f32) {\n"
    "  %t = dist.remote_load(%w, 1, [0, %c0], [4, 8])\n"
    "  %o1 = tile.store(%t, [0, 0], %o)\n"
    "  return %o1\n"
    "}\n"
    "kernel @k_store(%x: tensor[4,8] f32, inout %w: dtensor[8,16] f32, %p: index)\n"
    "    -> (dtensor[8,16] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [4, 8], valid=[3, 8])\n"
    "  %w1 = dist.remote_store(%t, %w, %p, [5, 2])\n"
    "  return %w1\n"
    "}\n"
    "kernel @k_coll(inout %win: dtensor[8, 16] f32, inout %sig: dtensor[1, 8] i32, %root: index)\n"
    "    -> (dtensor[8, 16] f32, dtensor[1, 8] i32) {\n"
    "  dist.barrier(%sig)\n"
    "  %a = dist.allreduce(%win, %sig)\n"
    "  %b = dist.allreduce(%a, %sig, op=max, mode=ring)\n"
    "  %c = dist.broadcast(%b, %sig, %root)\n"
    "  %e = dist.allgather(%c, %sig)\n"
    "  %f = dist.reduce_scatter(%e, %sig, op=prod)\n"
    "  return %f, %sig\n"
    "}\n";

typedef struct lib {
  char *dir;
  void *dl;
  pto_ir_program *p;
} lib;

static lib *g_lib;

static int setup(void **state) {
  (void)state;
  g_lib = calloc(1, sizeof *g_lib);
  pto_status s = pto_ir_parse_string(k_src, strlen(k_src), "d.ptir", &g_lib->p);
  if (s) {
    print_error("parse: %s\n", pto_status_message(s));
    pto_status_free(s);
    return -1;
  }
  g_lib->dir = tu_mkdtemp("lower-dist");
  char cmd[8192];
  int n = snprintf(cmd, sizeof cmd, "cc -shared -o '%s/k.so'", g_lib->dir);
  for (int i = 0; i < g_lib->p->nfuncs; i++) {
    const pto_ir_func *f = g_lib->p->funcs[i];
    char obj[1024], ll[1024];
    snprintf(obj, sizeof obj, "%s/%s.o", g_lib->dir, f->name);
    snprintf(ll, sizeof ll, "%s/%s.ll", g_lib->dir, f->name);
    s = pto__lower_kernel(g_lib->p, f, 2, ll, obj, NULL);
    if (s) {
      print_error("lower @%s: %s\n", f->name, pto_status_message(s));
      pto_status_free(s);
      return -1;
    }
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", obj);
  }
  char *out = NULL;
  int rc = tu_run(&out, "%s -lm", cmd);
  if (rc) print_error("link: %s\n", out ? out : "?");
  free(out);
  if (rc) return -1;
  snprintf(cmd, sizeof cmd, "%s/k.so", g_lib->dir);
  g_lib->dl = dlopen(cmd, RTLD_NOW | RTLD_LOCAL);
  return g_lib->dl ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  if (g_lib->dl) dlclose(g_lib->dl);
  if (g_lib->dir) tu_rmtree(g_lib->dir);
  free(g_lib->dir);
  pto_ir_program_destroy(g_lib->p);
  free(g_lib);
  return 0;
}

static pto_kernel_tensor desc(void *data, pto_dtype dt, int64_t r, int64_t c, int64_t rs) {
  pto_kernel_tensor k;
  memset(&k, 0, sizeof k);
  k.data = data;
  k.rank = 2;
  k.dtype = (int32_t)dt;
  k.shape[0] = r;
  k.shape[1] = c;
  k.stride[0] = rs;
  k.stride[1] = 1;
  return k;
}

static int32_t call(const char *name, pto_kernel_tensor *t, uint64_t *scalars,
                    const pto_dist_ctx *d) {
  char sym[128];
  snprintf(sym, sizeof sym, "pto_kernel_%s", name);
  void *f = dlsym(g_lib->dl, sym);
  assert_non_null(f);
  pto_kernel_fn fn;
  memcpy(&fn, &f, sizeof fn);
  static _Alignas(64) unsigned char arena[1 << 16];
  pto_core_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.scratch = arena;
  ctx.scratch_size = sizeof arena;
  ctx.ncores = 1;
  ctx.dist = d;
  return fn(t, scalars, &ctx);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_dist_rank_and_nranks(void **state) {
  (void)state;
  int32_t w[16] = {0}, o[2] = {-1, -1};
  pto_kernel_tensor t[2] = {desc(w, PTO_DTYPE_I32, 4, 4, 4), desc(o, PTO_DTYPE_I32, 1, 2, 2)};
  pto_dist_ctx d = fake_ctx(3, 5);
  assert_int_equal(call("k_rank", t, NULL, &d), 0);
  assert_int_equal(o[0], 3);
  assert_int_equal(o[1], 5);
  assert_int_equal(g_ncalls, 0);
}

static void test_dist_notify_wait_arguments(void **state) {
  (void)state;
  int32_t sig[2 * 10] = {0}; /* row stride 10: a view of a wider window */
  pto_kernel_tensor t[1] = {desc(sig, PTO_DTYPE_I32, 2, 8, 10)};
  uint64_t sc[1] = {2};
  pto_dist_ctx d = fake_ctx(0, 4);
  assert_int_equal(call("k_sig", t, sc, &d), 0);
  assert_int_equal(g_ncalls, 4);
  assert_int_equal(g_calls[0].fn, 1);
  assert_ptr_equal(g_calls[0].p0, &sig[1 * 10 + 3]);
  assert_int_equal(g_calls[0].peer, 3);
  assert_int_equal(g_calls[0].value, 7);
  assert_int_equal(g_calls[0].mode, PTO_DIST_NOTIFY_ADD);
  assert_int_equal(g_calls[1].fn, 1);
  assert_ptr_equal(g_calls[1].p0, &sig[5]);
  assert_int_equal(g_calls[1].peer, 2);
  assert_int_equal(g_calls[1].value, -2);
  assert_int_equal(g_calls[1].mode, PTO_DIST_NOTIFY_SET);
  assert_int_equal(g_calls[2].fn, 2);
  assert_ptr_equal(g_calls[2].p0, &sig[1 * 10 + 2]);
  assert_int_equal(g_calls[2].value, 9);
  assert_int_equal(g_calls[2].mode, PTO_DIST_WAIT_GE);
  assert_int_equal(g_calls[3].fn, 2);
  assert_ptr_equal(g_calls[3].p0, &sig[0]);
  assert_int_equal(g_calls[3].value, 4);
  assert_int_equal(g_calls[3].mode, PTO_DIST_WAIT_EQ);
}

static void test_dist_error_propagates_and_stops(void **state) {
  (void)state;
  int32_t sig[2 * 8] = {0};
  pto_kernel_tensor t[1] = {desc(sig, PTO_DTYPE_I32, 2, 8, 8)};
  uint64_t sc[1] = {0};
  pto_dist_ctx d = fake_ctx(0, 4);
  g_fail_at = 2; /* the first wait times out */
  g_fail_code = PTO_KERNEL_ERR_DIST_TIMEOUT;
  assert_int_equal(call("k_sig", t, sc, &d), PTO_KERNEL_ERR_DIST_TIMEOUT);
  assert_int_equal(g_ncalls, 3); /* nothing after the failed call */
  d = fake_ctx(0, 4);
  g_fail_at = 0;
  g_fail_code = 77; /* any code comes back as it is */
  assert_int_equal(call("k_sig", t, sc, &d), 77);
  assert_int_equal(g_ncalls, 1);
}

static void test_dist_without_table_is_err_dist(void **state) {
  (void)state;
  int32_t sig[16] = {0}, w[16] = {0}, o[2] = {0};
  pto_kernel_tensor t[1] = {desc(sig, PTO_DTYPE_I32, 2, 8, 8)};
  uint64_t sc[1] = {0};
  g_ncalls = 0;
  assert_int_equal(call("k_sig", t, sc, NULL), PTO_KERNEL_ERR_DIST);
  pto_kernel_tensor t2[2] = {desc(w, PTO_DTYPE_I32, 4, 4, 4), desc(o, PTO_DTYPE_I32, 1, 2, 2)};
  assert_int_equal(call("k_rank", t2, NULL, NULL), PTO_KERNEL_ERR_DIST);
  assert_int_equal(g_ncalls, 0);
}

static void test_dist_remote_load_arguments(void **state) {
  (void)state;
  float w[8 * 20], o[4 * 8];
  memset(w, 0, sizeof w);
  for (int i = 0; i < 64; i++)
    g_peer_data[i] = (float)i;
  pto_kernel_tensor t[2] = {desc(w, PTO_DTYPE_F32, 8, 16, 20), desc(o, PTO_DTYPE_F32, 4, 8, 8)};
  uint64_t sc[1] = {1};
  pto_dist_ctx d = fake_ctx(0, 2);
  assert_int_equal(call("k_load", t, sc, &d), 0);
  assert_int_equal(g_ncalls, 1);
  fake_call *c = &g_calls[0];
  assert_int_equal(c->fn, 3);
  assert_ptr_equal(c->p1, &w[2 * 20 + 4]);
  assert_int_equal(c->s1, 20);
  assert_int_equal(c->s0, 8); /* the tile's row: 8 columns */
  assert_int_equal(c->peer, 1);
  assert_int_equal(c->rows, 4);
  assert_int_equal(c->cols, 8);
  assert_int_equal(c->elem_bytes, 4);
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < 8; k++)
      assert_true(o[r * 8 + k] == g_peer_data[r * 8 + k] + 1.0f);
}

static void test_dist_remote_load_clipped_pads_zero(void **state) {
  (void)state;
  float w[3 * 16], o[4 * 8];
  memset(w, 0, sizeof w);
  for (int i = 0; i < 64; i++)
    g_peer_data[i] = 100.0f + (float)i;
  for (int i = 0; i < 32; i++)
    o[i] = -1.0f;
  /* R = 3 rows, columns 12..15 of 16: a 3 x 4 block of the 4 x 8 tile. */
  pto_kernel_tensor t[2] = {desc(w, PTO_DTYPE_F32, 3, 16, 16), desc(o, PTO_DTYPE_F32, 4, 8, 8)};
  uint64_t sc[1] = {12};
  pto_dist_ctx d = fake_ctx(0, 2);
  assert_int_equal(call("k_load_edge", t, sc, &d), 0);
  assert_int_equal(g_calls[0].rows, 3);
  assert_int_equal(g_calls[0].cols, 4);
  assert_ptr_equal(g_calls[0].p1, &w[12]);
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < 8; k++) {
      float want = r < 3 && k < 4 ? g_peer_data[r * 8 + k] : 0.0f;
      assert_true(o[r * 8 + k] == want);
    }
}

static void test_dist_remote_store_arguments(void **state) {
  (void)state;
  float x[4 * 8], w[8 * 16];
  for (int i = 0; i < 32; i++)
    x[i] = (float)i;
  pto_kernel_tensor t[2] = {desc(x, PTO_DTYPE_F32, 4, 8, 8), desc(w, PTO_DTYPE_F32, 8, 16, 16)};
  uint64_t sc[1] = {1};
  pto_dist_ctx d = fake_ctx(0, 2);
  assert_int_equal(call("k_store", t, sc, &d), 0);
  assert_int_equal(g_ncalls, 1);
  fake_call *c = &g_calls[0];
  assert_int_equal(c->fn, 4);
  assert_ptr_equal(c->p1, &w[5 * 16 + 2]);
  assert_int_equal(c->s1, 16);
  assert_int_equal(c->s0, 8);
  assert_int_equal(c->peer, 1);
  assert_int_equal(c->rows, 3); /* the tile's valid rows */
  assert_int_equal(c->cols, 8);
  assert_int_equal(c->elem_bytes, 4);
  /* src is the tile in the scratch arena: its valid rows are x's. */
  const float *src = c->p0;
  for (int i = 0; i < 3 * 8; i++)
    assert_true(src[i] == x[i]);
}

static void test_dist_barrier_and_collectives(void **state) {
  (void)state;
  float w[8 * 16] = {0};
  int32_t sig[8] = {0};
  pto_kernel_tensor t[2] = {desc(w, PTO_DTYPE_F32, 8, 16, 16), desc(sig, PTO_DTYPE_I32, 1, 8, 8)};
  uint64_t sc[1] = {2};
  pto_dist_ctx d = fake_ctx(1, 4);
  assert_int_equal(call("k_coll", t, sc, &d), 0);
  assert_int_equal(g_ncalls, 6);
  assert_int_equal(g_calls[0].fn, 5);
  assert_ptr_equal(g_calls[0].p0, &t[1]); /* the signal window's own descriptor */
  static const int kinds[5] = {PTO_DIST_ALLREDUCE, PTO_DIST_ALLREDUCE, PTO_DIST_BROADCAST,
                               PTO_DIST_ALLGATHER, PTO_DIST_REDUCE_SCATTER};
  static const int ops[5] = {PTO_DIST_RED_SUM, PTO_DIST_RED_MAX, PTO_DIST_RED_SUM, PTO_DIST_RED_SUM,
                             PTO_DIST_RED_PROD};
  static const int modes[5] = {PTO_DIST_MODE_MESH, PTO_DIST_MODE_RING, PTO_DIST_MODE_MESH,
                               PTO_DIST_MODE_MESH, PTO_DIST_MODE_MESH};
  for (int i = 0; i < 5; i++) {
    const fake_call *c = &g_calls[i + 1];
    assert_int_equal(c->fn, 6);
    assert_int_equal(c->peer, kinds[i]);
    assert_ptr_equal(c->p0, &t[0]);
    assert_ptr_equal(c->p1, &t[1]);
    assert_int_equal(c->mode, ops[i]);
    assert_int_equal(c->elem_bytes, modes[i]);
    assert_int_equal(c->value, kinds[i] == PTO_DIST_BROADCAST ? 2 : 0);
  }
  /* A failing collective stops the kernel with its code. */
  d = fake_ctx(1, 4);
  g_fail_at = 3;
  g_fail_code = PTO_KERNEL_ERR_DIST_TIMEOUT;
  assert_int_equal(call("k_coll", t, sc, &d), PTO_KERNEL_ERR_DIST_TIMEOUT);
  assert_int_equal(g_ncalls, 4);
  g_ncalls = 0;
  assert_int_equal(call("k_coll", t, sc, NULL), PTO_KERNEL_ERR_DIST);
  assert_int_equal(g_ncalls, 0);
}

/* ---- a real (in-process) transport: the mesh allreduce example on N threads --------------- */

enum { MAXR = 8 };

typedef struct mini_win {
  char *base[MAXR]; /* rank r's slice */
  int64_t bytes;    /* of one slice */
} mini_win;

typedef struct mini {
  mini_win win[2];
  int nwin;
} mini;

/* The peer's address of local address p of rank `rank`. */
static void *peer_addr(const pto_dist_ctx *d, const void *p, int peer) {
  const mini *m = d->impl;
  for (int w = 0; w < m->nwin; w++) {
    const char *b = m->win[w].base[d->rank];
    if ((const char *)p >= b && (const char *)p < b + m->win[w].bytes)
      return m->win[w].base[peer] + ((const char *)p - b);
  }
  return NULL;
}

static int32_t m_notify(const pto_dist_ctx *d, int32_t *sig, int32_t peer, int32_t value,
                        int32_t op) {
  if (peer < 0 || peer >= d->nranks) return PTO_KERNEL_ERR_DIST;
  _Atomic int32_t *e = peer_addr(d, sig, peer);
  if (!e) return PTO_KERNEL_ERR_DIST;
  if (op == PTO_DIST_NOTIFY_ADD)
    atomic_fetch_add(e, value);
  else
    atomic_store(e, value);
  return 0;
}

static int32_t m_wait(const pto_dist_ctx *d, int32_t *sig, int32_t value, int32_t cmp) {
  (void)d;
  _Atomic int32_t *e = (_Atomic int32_t *)sig;
  for (long i = 0; i < 200000000L; i++) {
    int32_t v = atomic_load(e);
    if (cmp == PTO_DIST_WAIT_EQ ? v == value : v >= value) return 0;
    sched_yield();
  }
  return PTO_KERNEL_ERR_DIST_TIMEOUT;
}

static int32_t m_remote_load(const pto_dist_ctx *d, void *dst, int64_t dst_stride,
                             const void *src_local, int64_t src_stride, int32_t peer, int64_t rows,
                             int64_t cols, int32_t elem_bytes) {
  if (peer < 0 || peer >= d->nranks) return PTO_KERNEL_ERR_DIST;
  const char *src = peer_addr(d, src_local, peer);
  if (!src) return PTO_KERNEL_ERR_DIST;
  /* (ordered after the peer's stores by the acquire load of the wait that precedes it) */
  for (int64_t r = 0; r < rows; r++)
    memcpy((char *)dst + r * dst_stride * elem_bytes, src + r * src_stride * elem_bytes,
           (size_t)(cols * elem_bytes));
  return 0;
}

typedef struct rank_job {
  pto_kernel_fn fn;
  pto_dist_ctx d;
  pto_kernel_tensor t[4];
  int32_t rc;
} rank_job;

static void *rank_main(void *arg) {
  rank_job *j = arg;
  void *arena = aligned_alloc(64, 1 << 16);
  pto_core_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.scratch = arena;
  ctx.scratch_size = 1 << 16;
  ctx.ncores = 1;
  ctx.dist = &j->d;
  j->rc = j->fn(j->t, NULL, &ctx);
  free(arena);
  return NULL;
}

static void test_dist_mesh_allreduce_runs_on_threads(void **state) {
  (void)state;
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/allreduce_mesh.ptir", &p));
  char *dir = tu_mkdtemp("lower-dist-mesh");
  char obj[1024], so[1024];
  snprintf(obj, sizeof obj, "%s/k.o", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  assert_pto_ok(pto__lower_kernel(p, pto_ir_program_find_func(p, "allreduce"), 2, NULL, obj, NULL));
  char *out = NULL;
  int rc = tu_run(&out, "cc -shared -o '%s' '%s' -lm", so, obj);
  free(out);
  assert_int_equal(rc, 0);
  void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(dl);
  void *f = dlsym(dl, "pto_kernel_allreduce");
  assert_non_null(f);
  pto_kernel_fn fn;
  memcpy(&fn, &f, sizeof fn);
  for (int n = 1; n <= 4; n++) {
    float *x = malloc(sizeof(float) * 32 * 64 * (size_t)n), *y = calloc((size_t)n * 32 * 64, 4);
    float *buf = calloc((size_t)n * 32 * 64, 4);
    int32_t *sig = calloc((size_t)n * 8, 4);
    for (int i = 0; i < n * 32 * 64; i++)
      x[i] = (float)((i * 7919) % 1000) * 0.01f - 3.0f;
    mini m;
    memset(&m, 0, sizeof m);
    m.nwin = 2;
    m.win[0].bytes = 32 * 64 * 4;
    m.win[1].bytes = 8 * 4;
    for (int r = 0; r < n; r++) {
      m.win[0].base[r] = (char *)(buf + r * 32 * 64);
      m.win[1].base[r] = (char *)(sig + r * 8);
    }
    rank_job jobs[MAXR];
    pthread_t th[MAXR];
    for (int r = 0; r < n; r++) {
      rank_job *j = &jobs[r];
      memset(j, 0, sizeof *j);
      j->fn = fn;
      j->d = (pto_dist_ctx){.version = PTO_DIST_ABI_VERSION,
                            .size = sizeof(pto_dist_ctx),
                            .rank = r,
                            .nranks = n,
                            .impl = &m,
                            .notify = m_notify,
                            .wait = m_wait,
                            .remote_load = m_remote_load};
      j->t[0] = desc(x + r * 32 * 64, PTO_DTYPE_F32, 32, 64, 64);
      j->t[1] = desc(buf + r * 32 * 64, PTO_DTYPE_F32, 32, 64, 64);
      j->t[2] = desc(sig + r * 8, PTO_DTYPE_I32, 1, 8, 8);
      j->t[3] = desc(y + r * 32 * 64, PTO_DTYPE_F32, 32, 64, 64);
      pthread_create(&th[r], NULL, rank_main, j);
    }
    for (int r = 0; r < n; r++)
      pthread_join(th[r], NULL);
    for (int r = 0; r < n; r++)
      assert_int_equal(jobs[r].rc, 0);
    for (int r = 0; r < n; r++)
      for (int i = 0; i < 32 * 64; i++) {
        float want = 0.0f;
        for (int q = 0; q < n; q++)
          want += x[q * 32 * 64 + i];
        if (y[r * 32 * 64 + i] != want) {
          print_error("n=%d rank %d element %d: %g, want %g\n", n, r, i, y[r * 32 * 64 + i], want);
          fail();
        }
      }
    free(x);
    free(y);
    free(buf);
    free(sig);
  }
  dlclose(dl);
  tu_rmtree(dir);
  free(dir);
  pto_ir_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dist_rank_and_nranks),
      cmocka_unit_test(test_dist_notify_wait_arguments),
      cmocka_unit_test(test_dist_error_propagates_and_stops),
      cmocka_unit_test(test_dist_without_table_is_err_dist),
      cmocka_unit_test(test_dist_remote_load_arguments),
      cmocka_unit_test(test_dist_remote_load_clipped_pads_zero),
      cmocka_unit_test(test_dist_remote_store_arguments),
      cmocka_unit_test(test_dist_barrier_and_collectives),
      cmocka_unit_test(test_dist_mesh_allreduce_runs_on_threads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
