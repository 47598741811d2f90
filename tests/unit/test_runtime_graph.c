/* Runtime: task order comes from tensor regions and directions. Every graph runs with the
 * shuffle test mode under many seeds and must equal the sequential computation. */
#include <stdatomic.h>
#include <time.h>

#include "test_runtime_common.h"

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

#define SEEDS 30

/* ---- kernels ------------------------------------------------------------------------------- */

static int32_t k_scale(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float a = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i) * a;
  return 0;
}

static int32_t k_add(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  for (int64_t i = 0, n = kv_numel(&t[2]); i < n; i++)
    *kv_f32p(&t[2], i) = kv_f32(&t[0], i) + kv_f32(&t[1], i);
  return 0;
}

static int32_t k_addc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) += c;
  return 0;
}

/* v = v * a + b on u32 (wrapping): tensor v (inout); scalars a, b. */
static int32_t k_aff(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++) {
    uint32_t *p = kv_u32p(&t[0], i);
    *p = *p * (uint32_t)s[0] + (uint32_t)s[1];
  }
  return 0;
}

/* dst = src * a + b on u32: tensors src, dst; scalars a, b. */
static int32_t k_affcopy(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_u32p(&t[1], i) = *kv_u32p(&t[0], i) * (uint32_t)s[0] + (uint32_t)s[1];
  return 0;
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000 * 1000};
  nanosleep(&ts, NULL);
}

/* Sleeps, then x[0] = 42. */
static int32_t k_slow_write(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  sleep_ms(20);
  *kv_f32p(&t[0], 0) = 42.0f;
  return 0;
}

/* Sleeps, then y = x. */
static int32_t k_slow_copy(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  sleep_ms(20);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i);
  return 0;
}

/* Sleeps, then fills its view with ones. */
static int32_t k_slow_fill(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  sleep_ms(20);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) = 1.0f;
  return 0;
}

static atomic_int g_flag;

/* Waits for k_set_flag; out[0] = 1 if it saw it. At most 20 s: a bound that makes tasks run in
 * statement order fail the test instead of hanging it, not a time the other task must start in
 * (it was 2 s, which a loaded host can take to schedule the other core's thread). */
static int32_t k_wait_flag(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  int seen = 0;
  for (int i = 0; i < 20000 && !(seen = atomic_load(&g_flag)); i++)
    sleep_ms(1);
  *kv_f32p(&t[0], 0) = (float)seen;
  return 0;
}

static int32_t k_set_flag(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  *kv_f32p(&t[0], 0) = 1;
  atomic_store(&g_flag, 1);
  return 0;
}

enum {
  K_SCALE,
  K_ADD,
  K_ADDC,
  K_AFF,
  K_AFFCOPY,
  K_SLOW_WRITE,
  K_SLOW_COPY,
  K_WAIT,
  K_SET,
  K_SLOW_FILL,
  NK
};
static const pto_kernel_fn g_kernels[NK] = {k_scale,    k_add,        k_addc,      k_aff,
                                            k_affcopy,  k_slow_write, k_slow_copy, k_wait_flag,
                                            k_set_flag, k_slow_fill};
static const char *const g_names[NK] = {"scale",    "add",        "addc",      "aff",
                                        "affcopy",  "slow_write", "slow_copy", "wait_flag",
                                        "set_flag", "slow_fill"};

static int32_t submit(int32_t k, const pto_orch_task_arg *a, int32_t n) {
  return g_api->submit(g_api->ctx, k, PTO_CORE_AIV, a, n);
}

static pto_orch_tensor create_like(const pto_orch_tensor *t) {
  pto_orch_tensor out;
  assert_int_equal(g_api->create_tensor(g_api->ctx, t->rank, t->shape, t->dtype, &out), 0);
  return out;
}

/* Runs a program over one f32 input x and n f32 outputs of N elements, for SEEDS shuffled seeds
 * and once in order on one core; check(x, outs, n) verifies. */
static void run_f32_program(pto_orch_entry_fn entry, const char *name, int nout, int64_t n,
                            void (*check)(const float *x, float *const *outs, int64_t n)) {
  tsig s;
  tsig_init(&s, name);
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "N");
  static const char *const onames[] = {"y1", "y2", "y3"};
  for (int i = 0; i < nout; i++)
    tsig_tensor(&s, onames[i], PTO_DIR_OUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float *x = malloc((size_t)n * sizeof *x);
  float *outs[3];
  for (int64_t i = 0; i < n; i++)
    x[i] = (float)(i % 97);
  pto_host_tensor hx, ho[3];
  pto_arg args[4];
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 1, &n);
  args[0] = pto_arg_host(&hx);
  for (int i = 0; i < nout; i++) {
    outs[i] = malloc((size_t)n * sizeof *outs[i]);
    pto_host_tensor_init(&ho[i], outs[i], PTO_DTYPE_F32, 1, &n);
    args[1 + i] = pto_arg_host(&ho[i]);
  }
  for (int seed = 0; seed <= SEEDS; seed++) {
    /* Every third seed with a tiny in-flight window: submits wait for the cores. */
    pto_run_config cfg;
    pto_run_config_init(&cfg);
    cfg.ncores = seed ? 3 : 1;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = (uint64_t)seed;
    cfg.device_memory_bytes = 64ull << 20;
    cfg.max_inflight_tasks = seed % 3 == 1 ? 2 : 0;
    pto_worker *w;
    assert_pto_ok(pto_worker_open(&cfg, &w));
    for (int i = 0; i < nout; i++)
      memset(outs[i], 0xff, (size_t)n * sizeof *outs[i]);
    assert_pto_ok(pto_worker_run(w, p, args, (size_t)(1 + nout)));
    check(x, outs, n);
    pto_worker_close(w);
  }
  free(x);
  for (int i = 0; i < nout; i++)
    free(outs[i]);
  pto_program_release(p);
}

/* ---- diamond ------------------------------------------------------------------------------- */

static void diamond_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1];
  pto_orch_tensor t1 = create_like(x), t2 = create_like(x), t3 = create_like(x);
  pto_orch_task_arg s1[3] = {ta_in(x), ta_out(&t1), ta_scalar(f32_slot(2))};
  pto_orch_task_arg s2[3] = {ta_in(&t1), ta_out(&t2), ta_scalar(f32_slot(3))};
  pto_orch_task_arg s3[3] = {ta_in(&t1), ta_out(&t3), ta_scalar(f32_slot(5))};
  pto_orch_task_arg s4[3] = {ta_in(&t2), ta_in(&t3), ta_out(y)};
  submit(K_SCALE, s1, 3);
  submit(K_SCALE, s2, 3);
  submit(K_SCALE, s3, 3);
  submit(K_ADD, s4, 3);
}

static void diamond_check(const float *x, float *const *o, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    assert_true(o[0][i] == 16.0f * x[i]);
}

static void test_diamond_matches_sequential(void **state) {
  (void)state;
  run_f32_program(diamond_entry, "diamond", 1, 1 << 14, diamond_check);
}

/* ---- chains -------------------------------------------------------------------------------- */

static void chain_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1], *y2 = &a->tensors[2];
  /* 1: one buffer updated in place 100 times (RAW + WAW on the same region) */
  pto_orch_task_arg c[3] = {ta_in(x), ta_out(y), ta_scalar(f32_slot(1))};
  submit(K_SCALE, c, 3);
  for (int i = 0; i < 100; i++) {
    pto_orch_task_arg t[2] = {ta_inout(y), ta_scalar(f32_slot((float)i))};
    submit(K_ADDC, t, 2);
  }
  /* 2: a chain through intermediates */
  pto_orch_tensor prev = *x;
  for (int i = 0; i < 30; i++) {
    pto_orch_tensor t = create_like(x);
    pto_orch_task_arg s1[3] = {ta_in(&prev), ta_out(&t), ta_scalar(f32_slot(1))};
    pto_orch_task_arg s2[2] = {ta_inout(&t), ta_scalar(f32_slot(1))};
    submit(K_SCALE, s1, 3);
    submit(K_ADDC, s2, 2);
    prev = t;
  }
  pto_orch_task_arg f[3] = {ta_in(&prev), ta_out(y2), ta_scalar(f32_slot(1))};
  submit(K_SCALE, f, 3);
}

static void chain_check(const float *x, float *const *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    assert_true(o[0][i] == x[i] + 4950.0f);
    assert_true(o[1][i] == x[i] + 30.0f);
  }
}

static void test_chains_match_sequential(void **state) {
  (void)state;
  run_f32_program(chain_entry, "chain", 2, 4096, chain_check);
}

/* ---- write after read ---------------------------------------------------------------------- */

static void war_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y1 = &a->tensors[1], *y2 = &a->tensors[2],
                        *y3 = &a->tensors[3];
  pto_orch_tensor b = create_like(x);
  pto_orch_task_arg w0[3] = {ta_in(x), ta_out(&b), ta_scalar(f32_slot(1))};  /* b = x */
  pto_orch_task_arg r1[3] = {ta_in(&b), ta_out(y1), ta_scalar(f32_slot(1))}; /* y1 = b */
  pto_orch_task_arg w1[3] = {ta_in(x), ta_out(&b), ta_scalar(f32_slot(2))};  /* b = 2x */
  pto_orch_task_arg r2[3] = {ta_in(&b), ta_out(y2), ta_scalar(f32_slot(1))}; /* y2 = b */
  pto_orch_task_arg w2[2] = {ta_inout(&b), ta_scalar(f32_slot(5))};          /* b += 5 */
  pto_orch_task_arg r3[3] = {ta_in(&b), ta_out(y3), ta_scalar(f32_slot(1))}; /* y3 = b */
  submit(K_SCALE, w0, 3);
  submit(K_SCALE, r1, 3);
  submit(K_SCALE, w1, 3);
  submit(K_SCALE, r2, 3);
  submit(K_ADDC, w2, 2);
  submit(K_SCALE, r3, 3);
}

static void war_check(const float *x, float *const *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    assert_true(o[0][i] == x[i]);
    assert_true(o[1][i] == 2 * x[i]);
    assert_true(o[2][i] == 2 * x[i] + 5);
  }
}

static void test_write_after_read_on_a_shared_buffer(void **state) {
  (void)state;
  run_f32_program(war_entry, "war", 3, 1 << 15, war_check);
}

/* ---- statement order orders nothing ---------------------------------------------------------- */

static void independent_entry(const pto_orch_args *a) {
  const pto_orch_tensor *y1 = &a->tensors[1], *y2 = &a->tensors[2];
  pto_orch_task_arg t1[1] = {ta_out(y1)};
  pto_orch_task_arg t2[1] = {ta_out(y2)};
  submit(K_WAIT, t1, 1); /* waits for the task submitted after it */
  submit(K_SET, t2, 1);
}

static void independent_check(const float *x, float *const *o, int64_t n) {
  (void)x;
  (void)n;
  assert_true(o[0][0] == 1.0f); /* the first task saw the second one run */
  assert_true(o[1][0] == 1.0f);
}

static void test_independent_tasks_are_not_ordered_by_statement_order(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "independent");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "N");
  tsig_tensor(&s, "y1", PTO_DIR_OUT, PTO_DTYPE_F32, "N");
  tsig_tensor(&s, "y2", PTO_DIR_OUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, independent_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float x[4] = {0}, y1[4], y2[4];
  int64_t n = 4;
  pto_host_tensor hx, h1, h2;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 1, &n);
  pto_host_tensor_init(&h1, y1, PTO_DTYPE_F32, 1, &n);
  pto_host_tensor_init(&h2, y2, PTO_DTYPE_F32, 1, &n);
  pto_arg args[3] = {pto_arg_host(&hx), pto_arg_host(&h1), pto_arg_host(&h2)};
  for (int seed = 1; seed <= 3; seed++) {
    pto_worker *w = topen(2, 1, (uint64_t)seed);
    atomic_store(&g_flag, 0);
    assert_pto_ok(pto_worker_run(w, p, args, 3));
    float *outs[2] = {y1, y2};
    independent_check(x, outs, n);
    pto_worker_close(w);
  }
  pto_program_release(p);
}

/* ---- tensor.read / set_tensor_data wait for the right tasks --------------------------------- */

static float g_read;

static void element_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1];
  int64_t idx[1] = {0};
  pto_orch_task_arg w[1] = {ta_inout(x)};
  submit(K_SLOW_WRITE, w, 1);
  /* waits for the writer */
  assert_int_equal(g_api->read_element(g_api->ctx, x, idx, &g_read), 0);
  pto_orch_task_arg r[2] = {ta_in(x), ta_out(y)};
  submit(K_SLOW_COPY, r, 2);
  float seven = 7;
  /* waits for the reader, then writes */
  assert_int_equal(g_api->write_element(g_api->ctx, x, idx, &seven), 0);
}

static void test_element_access_waits_for_conflicting_tasks(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "element");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "N");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, element_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float x[8], y[8];
  int64_t n = 8;
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 1, &n);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 1, &n);
  pto_arg args[2] = {pto_arg_host(&hx), pto_arg_host(&hy)};
  for (int seed = 0; seed < 3; seed++) {
    for (int i = 0; i < 8; i++)
      x[i] = 1;
    pto_worker *w = topen(2, seed != 0, (uint64_t)seed);
    g_read = 0;
    assert_pto_ok(pto_worker_run(w, p, args, 2));
    assert_true(g_read == 42.0f);
    assert_true(y[0] == 42.0f); /* the reader ran before the write */
    assert_true(x[0] == 7.0f);
    pto_worker_close(w);
  }
  pto_program_release(p);
}

/* ---- overlapping and disjoint slices: a randomized differential test ------------------------ */

#define NOPS 80
#define NBUF 3
#define MAXEL 480

/* Two [12,40] buffers and a [4,6,10] one, all u32. */
static const int g_rank[NBUF] = {2, 2, 3};
static const int64_t g_shape[NBUF][3] = {{12, 40}, {12, 40}, {4, 6, 10}};

typedef struct slice_op {
  int type; /* 0: v = v*a+b in place; 1: dst = src*a+b; 2: read; 3: write */
  int buf, sbuf;
  int64_t off[3], soff[3], ext[3];
  int cs; /* the innermost dim steps by cs elements */
  uint32_t a, b;
} slice_op;

static slice_op g_ops[NOPS];
static uint32_t g_reads[NOPS];

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static int64_t pick(uint64_t *s, int64_t n) { return (int64_t)(rnd(s) % (uint64_t)n); }

static int64_t numel_of(const slice_op *o, int buf) {
  int64_t n = 1;
  for (int d = 0; d < g_rank[buf]; d++)
    n *= o->ext[d];
  return n;
}

/* Flat element index (row-major in its buffer) of the lin-th element of a view. */
static int64_t flat_of(int buf, const int64_t *off, const int64_t *ext, int cs, int64_t lin) {
  int r = g_rank[buf];
  int64_t flat = 0, mul = 1;
  for (int d = r - 1; d >= 0; d--) {
    int64_t i = lin % ext[d];
    lin /= ext[d];
    flat += (off[d] + (d == r - 1 ? cs * i : i)) * mul;
    mul *= g_shape[buf][d];
  }
  return flat;
}

static void gen_ops(uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int i = 0; i < NOPS; i++) {
    slice_op *o = &g_ops[i];
    memset(o, 0, sizeof *o);
    o->type = pick(&s, 10) < 4 ? 0 : pick(&s, 10) < 8 ? 1 : 2 + (int)pick(&s, 2);
    o->buf = (int)pick(&s, NBUF);
    o->a = 1 + (uint32_t)pick(&s, 5);
    o->b = (uint32_t)pick(&s, 100);
    int r = g_rank[o->buf];
    const int64_t *sh = g_shape[o->buf];
    if (o->type >= 2) {
      for (int d = 0; d < r; d++)
        o->off[d] = pick(&s, sh[d]);
      continue;
    }
    o->cs = 1 + (int)pick(&s, 2);
    for (int d = 0; d < r; d++) {
      int64_t room = d == r - 1 ? (sh[d] - 1) / o->cs + 1 : sh[d];
      o->ext[d] = 1 + pick(&s, room);
      int64_t span = d == r - 1 ? o->cs * (o->ext[d] - 1) + 1 : o->ext[d];
      o->off[d] = pick(&s, sh[d] - span + 1);
    }
    if (o->type == 1) {
      o->sbuf = g_rank[o->buf] == 2 ? (int)pick(&s, 2) : o->buf;
      for (int d = 0; d < r; d++) {
        int64_t span = d == r - 1 ? o->cs * (o->ext[d] - 1) + 1 : o->ext[d];
        o->soff[d] = pick(&s, sh[d] - span + 1);
      }
      if (o->sbuf == o->buf) { /* same buffer: source and destination must not share elements */
        static unsigned char mark[MAXEL];
        memset(mark, 0, sizeof mark);
        int64_t n = numel_of(o, o->buf);
        for (int64_t k = 0; k < n; k++)
          mark[flat_of(o->buf, o->off, o->ext, o->cs, k)] = 1;
        for (int64_t k = 0; k < n; k++)
          if (mark[flat_of(o->buf, o->soff, o->ext, o->cs, k)]) o->type = 0;
      }
    }
  }
}

static void slices_ref(uint32_t (*bufs)[MAXEL]) {
  for (int i = 0; i < NOPS; i++) {
    const slice_op *o = &g_ops[i];
    uint32_t *d = bufs[o->buf];
    if (o->type >= 2) {
      int64_t one[3] = {1, 1, 1};
      int64_t f = flat_of(o->buf, o->off, one, 1, 0);
      if (o->type == 2)
        g_reads[i] = d[f];
      else
        d[f] = o->b;
      continue;
    }
    for (int64_t k = 0, n = numel_of(o, o->buf); k < n; k++) {
      uint32_t *dst = &d[flat_of(o->buf, o->off, o->ext, o->cs, k)];
      uint32_t src =
          o->type == 0 ? *dst : bufs[o->sbuf][flat_of(o->sbuf, o->soff, o->ext, o->cs, k)];
      *dst = src * o->a + o->b;
    }
  }
}

static pto_orch_tensor slice_view(const pto_orch_tensor *t, const int64_t *off, const int64_t *ext,
                                  int cs) {
  pto_orch_tensor v = tview(t, off, ext);
  v.stride[t->rank - 1] *= cs;
  return v;
}

static void slices_entry(const pto_orch_args *a) {
  for (int i = 0; i < NOPS; i++) {
    const slice_op *o = &g_ops[i];
    const pto_orch_tensor *t = &a->tensors[o->buf];
    if (o->type == 2 || o->type == 3) {
      if (o->type == 2)
        assert_int_equal(g_api->read_element(g_api->ctx, t, o->off, &g_reads[i]), 0);
      else
        assert_int_equal(g_api->write_element(g_api->ctx, t, o->off, &o->b), 0);
      continue;
    }
    pto_orch_tensor dst = slice_view(t, o->off, o->ext, o->cs);
    if (o->type == 0) {
      pto_orch_task_arg ta[3] = {ta_inout(&dst), ta_scalar(o->a), ta_scalar(o->b)};
      submit(K_AFF, ta, 3);
    } else {
      pto_orch_tensor src = slice_view(&a->tensors[o->sbuf], o->soff, o->ext, o->cs);
      pto_orch_task_arg ta[4] = {ta_in(&src), ta_out(&dst), ta_scalar(o->a), ta_scalar(o->b)};
      submit(K_AFFCOPY, ta, 4);
    }
  }
}

static void test_overlapping_and_disjoint_slices_match_sequential(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "slices");
  tsig_tensor(&s, "X", PTO_DIR_INOUT, PTO_DTYPE_U32, "12,40");
  tsig_tensor(&s, "Y", PTO_DIR_INOUT, PTO_DTYPE_U32, "12,40");
  tsig_tensor(&s, "Z", PTO_DIR_INOUT, PTO_DTYPE_U32, "4,6,10");
  pto_program *p = tprogram(&s, bind_api, slices_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  static uint32_t data[NBUF][MAXEL], ref[NBUF][MAXEL];
  uint32_t ref_reads[NOPS];
  pto_host_tensor h[NBUF];
  pto_arg args[NBUF];
  for (int b = 0; b < NBUF; b++) {
    pto_host_tensor_init(&h[b], data[b], PTO_DTYPE_U32, g_rank[b], g_shape[b]);
    args[b] = pto_arg_host(&h[b]);
  }
  for (int seed = 1; seed <= 3 * SEEDS; seed++) {
    gen_ops((uint64_t)seed);
    for (int b = 0; b < NBUF; b++)
      for (int e = 0; e < MAXEL; e++)
        ref[b][e] = data[b][e] = (uint32_t)(seed * 1000 + b * 7919 + e);
    slices_ref(ref);
    memcpy(ref_reads, g_reads, sizeof ref_reads);
    memset(g_reads, 0, sizeof g_reads);
    pto_worker *w = topen(3, 1, (uint64_t)seed);
    assert_pto_ok(pto_worker_run(w, p, args, NBUF));
    pto_worker_close(w);
    assert_memory_equal(data, ref, sizeof data);
    for (int i = 0; i < NOPS; i++)
      if (g_ops[i].type == 2) assert_int_equal(g_reads[i], ref_reads[i]);
  }
  pto_program_release(p);
}

/* A view of rows/columns for the parallel test. */
static pto_orch_tensor rect(const pto_orch_tensor *t, int r0, int c0, int h, int w, int cs) {
  int64_t off[2] = {r0, c0}, ext[2] = {h, w};
  return slice_view(t, off, ext, cs);
}

/* Disjoint slices of one buffer run in parallel: the box test proves rows and interleaved
 * columns disjoint, so two tasks that wait for each other both finish. */
static void parallel_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  pto_orch_tensor top = rect(x, 0, 0, 1, 4, 1), bottom = rect(x, 1, 0, 1, 4, 1);
  pto_orch_tensor even = rect(x, 2, 0, 2, 4, 2), odd = rect(x, 2, 1, 2, 4, 2);
  pto_orch_task_arg t1[1] = {ta_out(&top)}, t2[1] = {ta_out(&bottom)};
  pto_orch_task_arg t3[1] = {ta_out(&even)}, t4[1] = {ta_out(&odd)};
  atomic_store(&g_flag, 0);
  submit(K_WAIT, t1, 1);
  submit(K_SET, t2, 1);
  int64_t idx[2] = {0, 0};
  float seen;
  assert_int_equal(g_api->read_element(g_api->ctx, x, idx, &seen), 0);
  assert_true(seen == 1.0f);
  atomic_store(&g_flag, 0);
  submit(K_WAIT, t3, 1);
  submit(K_SET, t4, 1);
}

static void test_disjoint_slices_of_one_buffer_run_in_parallel(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "parallel");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "4,8");
  pto_program *p = tprogram(&s, bind_api, parallel_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float x[4][8] = {{0}};
  int64_t shape[2] = {4, 8};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_arg arg = pto_arg_host(&hx);
  pto_worker *w = topen(2, 0, 0);
  assert_pto_ok(pto_worker_run(w, p, &arg, 1));
  assert_true(x[2][0] == 1.0f); /* even columns: the waiting task saw the other one */
  assert_true(x[2][1] == 1.0f);
  pto_worker_close(w);
  pto_program_release(p);
}

/* A view whose rows run past the buffer's row width ([2,8] at column 4 of a [4,8] buffer covers
 * elements 4..19) must be ordered with a view of the elements it wraps onto (row 1, columns 0..3),
 * although their boxes look disjoint. */
static void wrap_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1];
  int64_t off_a[2] = {0, 4}, ext_a[2] = {2, 8}, off_b[2] = {1, 0}, ext_b[2] = {1, 4};
  pto_orch_tensor wrap = tview(x, off_a, ext_a), row = tview(x, off_b, ext_b);
  int64_t yo[2] = {0, 0};
  pto_orch_tensor y4 = tview(y, yo, ext_b);
  pto_orch_task_arg w[1] = {ta_out(&wrap)};
  pto_orch_task_arg r[3] = {ta_in(&row), ta_out(&y4), ta_scalar(f32_slot(1))};
  submit(K_SLOW_FILL, w, 1);
  submit(K_SCALE, r, 3);
}

static void test_views_that_wrap_rows_are_ordered_conservatively(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "wrap");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "4,8");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "4,8");
  pto_program *p = tprogram(&s, bind_api, wrap_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float x[4][8] = {{0}}, y[4][8];
  int64_t shape[2] = {4, 8};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[2] = {pto_arg_host(&hx), pto_arg_host(&hy)};
  pto_worker *w = topen(2, 0, 0);
  assert_pto_ok(pto_worker_run(w, p, args, 2));
  for (int c = 0; c < 4; c++)
    assert_true(y[0][c] == 1.0f); /* the reader saw the write */
  pto_worker_close(w);
  pto_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_diamond_matches_sequential),
      cmocka_unit_test(test_chains_match_sequential),
      cmocka_unit_test(test_write_after_read_on_a_shared_buffer),
      cmocka_unit_test(test_independent_tasks_are_not_ordered_by_statement_order),
      cmocka_unit_test(test_element_access_waits_for_conflicting_tasks),
      cmocka_unit_test(test_overlapping_and_disjoint_slices_match_sequential),
      cmocka_unit_test(test_disjoint_slices_of_one_buffer_run_in_parallel),
      cmocka_unit_test(test_views_that_wrap_rows_are_ordered_conservatively),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
