/* The PyPTO compatibility corpus (the .cpp files of tests/compat): orchestration sources in PyPTO's
 * PTO2 style, compiled with c++ and with clang++, run on a sim worker with two AIC and four AIV
 * cores, outputs and per-task records checked. The kernels here fail unless they run on a core of
 * their type. */
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "pto/bench.h"
#include "runtime_internal.h"
#include "test_runtime_common.h"

#define N 16
#define WRONG_CORE 99

enum {
  K_ADD,
  K_ADD_SCALAR,
  K_MUL,
  K_CUBE_DOUBLE,
  K_VEC_INC,
  K_BLOCK_MARK,
  K_SLOW_ADD,
  K_MEET_AIC,
  K_MEET_AIV,
  NK
};
#define NOT_SIDE_BY_SIDE 97
#define NOT_OVERLAPPED 96

/* Arrivals at the rendezvous of the current launch (reset by corpus_launch). */
static atomic_int g_meet_mixed, g_meet_blocks;

/* slow_add's hold for the current launch (corpus_launch_held; NULL: none): the launch's count
 * of threads blocked waiting for a task, and how many slow_add waits for. */
static _Atomic(atomic_int *) g_hold_waiters;
static atomic_int g_hold_want;

/* Waits until *count reaches want; 0 when it did not. The 60 s is a guard that turns a broken
 * runtime's hang into a failure, not a timing assertion: a correct runtime brings the count
 * there however loaded the machine is (the 2 s this was could fail a correct run whose core
 * threads were descheduled that long). */
static int await_count(atomic_int *count, int want) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (atomic_load(count) < want) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 60) return 0;
    sched_yield();
  }
  return 1;
}

/* Arrives and waits until want kernels have: only kernels that run side by side all get
 * through. */
static int meet(atomic_int *count, int want) {
  atomic_fetch_add(count, 1);
  return await_count(count, want);
}

static int on_type(const pto_core_ctx *ctx, int type) { return ctx->core_type == type; }

static int32_t k_add(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  for (int64_t i = 0, n = kv_numel(&t[2]); i < n; i++)
    *kv_f32p(&t[2], i) = kv_f32(&t[0], i) + kv_f32(&t[1], i);
  return 0;
}

static int32_t k_add_scalar(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i) + c;
  return 0;
}

static int32_t k_mul(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  for (int64_t i = 0, n = kv_numel(&t[2]); i < n; i++)
    *kv_f32p(&t[2], i) = kv_f32(&t[0], i) * kv_f32(&t[1], i);
  return 0;
}

static int32_t k_cube_double(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = 2.0f * kv_f32(&t[0], i);
  return 0;
}

static int32_t k_vec_inc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) += 1.0f;
  return 0;
}

static int32_t k_block_mark(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  if (ctx->block_idx < 0 || ctx->block_idx >= ctx->block_num || ctx->block_idx >= kv_numel(&t[0]))
    return 98;
  if (!meet(&g_meet_blocks, ctx->block_num)) return NOT_SIDE_BY_SIDE;
  *kv_f32p(&t[0], ctx->block_idx) = (float)(ctx->block_idx + 1);
  return 0;
}

/* add, which, held, does not finish before want threads of the worker block waiting for a task:
 * cores that took its successors staged (allow_early_resolve) or gang blocks that wait for its
 * core (require_sync_start), the dispatching thread reading what it writes. The overlap a test
 * looks at is then certain, not likely after a sleep. */
static int32_t k_slow_add(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  atomic_int *waiters = atomic_load(&g_hold_waiters);
  if (waiters && !await_count(waiters, atomic_load(&g_hold_want))) return NOT_OVERLAPPED;
  return k_add(t, s, ctx);
}

/* The two halves of a mixed task (t1 = 2 t0 in the first half, t0 + 1 in the second), which
 * meet s[0] kernels before writing: they fail unless the AIC and AIV kernels run side by side. */
static int32_t k_meet_aic(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  if (!meet(&g_meet_mixed, (int)s[0])) return NOT_SIDE_BY_SIDE;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n / 2; i++)
    *kv_f32p(&t[1], i) = 2.0f * kv_f32(&t[0], i);
  return 0;
}

static int32_t k_meet_aiv(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  if (!meet(&g_meet_mixed, (int)s[0])) return NOT_SIDE_BY_SIDE;
  for (int64_t i = kv_numel(&t[1]) / 2, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i) + 1.0f;
  return 0;
}

static pto_kernel_fn g_kernels[NK] = {k_add,         k_add_scalar, k_mul,
                                      k_cube_double, k_vec_inc,    k_block_mark,
                                      k_slow_add,    k_meet_aic,   k_meet_aiv};
static const char *g_names[NK] = {"add",        "add_scalar", "mul",      "cube_double", "vec_inc",
                                  "block_mark", "slow_add",   "meet_aic", "meet_aiv"};
static const int g_types[NK] = {PTO_CORE_AIV, PTO_CORE_AIV, PTO_CORE_AIV,
                                PTO_CORE_AIC, PTO_CORE_AIV, PTO_CORE_AIV,
                                PTO_CORE_AIV, PTO_CORE_AIC, PTO_CORE_AIV};

typedef struct corpus_run {
  void *so;
  pto_program *p;
  pto_worker *w;
  float a[N], b[N], o1[N], o2[N];
  pto_arg args[5];
  pto_host_tensor h[4];
} corpus_run;

/* Compiles tests/compat/NAME.cpp with cxx and binds it to the test kernels; 0 when cxx is not
 * installed. */
static int corpus_open(corpus_run *r, const char *name, const char *cxx, const char *dir) {
  memset(r, 0, sizeof *r);
  char *out = NULL;
  if (tu_run(&out, "command -v %s", cxx) != 0) {
    free(out);
    return 0;
  }
  free(out);
  int rc = tu_run(&out,
                  "%s -std=c++17 -O1 -Wall -Wextra -Werror -shared -fPIC -I '%s/include' -o "
                  "'%s/%s.%s.so' '%s/tests/compat/%s.cpp'",
                  cxx, PTO_SOURCE_DIR, dir, name, cxx, PTO_SOURCE_DIR, name);
  if (rc != 0) print_error("%s: %s\n", cxx, out);
  assert_int_equal(rc, 0);
  free(out);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s.so", dir, name, cxx);
  r->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(r->so);
  pto_orch_bind_fn bind = (pto_orch_bind_fn)dlsym(r->so, "pto_orch_bind");
  pto_orch_entry_fn entry = (pto_orch_entry_fn)dlsym(r->so, "aicpu_orchestration_entry");
  pto_orch_abi_version_fn version = (pto_orch_abi_version_fn)dlsym(r->so, "pto_orch_abi_version");
  assert_non_null(bind);
  assert_non_null(entry);
  assert_int_equal(version(), PTO_ORCH_ABI_VERSION);
  tsig s;
  tsig_init(&s, name);
  tsig_tensor(&s, "a", PTO_DIR_IN, PTO_DTYPE_F32, "16");
  tsig_tensor(&s, "b", PTO_DIR_IN, PTO_DTYPE_F32, "16");
  tsig_tensor(&s, "o1", PTO_DIR_OUT, PTO_DTYPE_F32, "16");
  tsig_tensor(&s, "o2", PTO_DIR_OUT, PTO_DTYPE_F32, "16");
  tsig_scalar(&s, "s", PTO_DTYPE_F32, PTO_BIND_RUNTIME, tscalar_f(PTO_DTYPE_F32, 0));
  r->p = tprogram(&s, bind, entry, NK, g_kernels, g_names);
  tsig_free(&s);
  for (int k = 0; k < NK; k++)
    assert_pto_ok(pto_program_set_kernel_core_type(r->p, k, g_types[k]));
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aic_cores = 2;
  cfg.aiv_cores = 4;
  cfg.record_tasks = true;
  cfg.device_memory_bytes = 64ull << 20;
  assert_pto_ok(pto_worker_open(&cfg, &r->w));
  int64_t shape[1] = {N};
  float *bufs[4] = {r->a, r->b, r->o1, r->o2};
  for (int i = 0; i < N; i++) {
    r->a[i] = (float)i;
    r->b[i] = 2.0f;
  }
  for (int k = 0; k < 4; k++) {
    pto_host_tensor_init(&r->h[k], bufs[k], PTO_DTYPE_F32, 1, shape);
    r->args[k] = pto_arg_host(&r->h[k]);
  }
  r->args[4] = pto_arg_f32(0.5f);
  return 1;
}

static pto_status corpus_launch(corpus_run *r, float s) {
  memset(r->o1, 0, sizeof r->o1);
  memset(r->o2, 0, sizeof r->o2);
  atomic_store(&g_meet_mixed, 0);
  atomic_store(&g_meet_blocks, 0);
  r->args[4] = pto_arg_f32(s);
  return pto_worker_run(r->w, r->p, r->args, 5);
}

/* corpus_launch with slow_add held until want threads block waiting for a task (k_slow_add). */
static pto_status corpus_launch_held(corpus_run *r, float s, int want) {
  pto__rt_worker *iw = pto__rt_obj_get(r->w, PTO__RT_OBJ_WORKER, NULL);
  assert_non_null(iw);
  atomic_store(&g_hold_want, want);
  atomic_store(&g_hold_waiters, &iw->launch.waiters);
  pto_status st = corpus_launch(r, s);
  atomic_store(&g_hold_waiters, NULL);
  return st;
}

static void corpus_close(corpus_run *r) {
  pto_worker_close(r->w);
  pto_program_release(r->p);
  dlclose(r->so);
}

/* Every task ran on a core of its kernel's type (cores 0-3 AIV, 4-5 AIC). */
static void check_core_types(const pto_worker *w) {
  const pto_task_record *t;
  size_t n;
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
  for (size_t i = 0; i < n; i++) {
    int want = t[i].kernel_id >= 0 ? g_types[t[i].kernel_id] : PTO_CORE_AIV;
    assert_int_equal(t[i].core_type, want);
    assert_true(t[i].core >= 0);
    assert_true(want == PTO_CORE_AIV ? t[i].core < 4 : t[i].core >= 4 && t[i].core < 6);
  }
}

static const pto_task_record *find_task(const pto_worker *w, const char *kernel, int nth) {
  const pto_task_record *t;
  size_t n;
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
  for (size_t i = 0; i < n; i++)
    if (strcmp(t[i].kernel, kernel) == 0 && nth-- == 0) return &t[i];
  fail_msg("no task %d of kernel '%s'", nth, kernel);
  return NULL;
}

static const char *const k_cxx[] = {"c++", "clang++"};

static void test_deps_manual_runs_with_both_compilers(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-deps");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "deps_manual", k_cxx[c], dir)) continue;
    for (int round = 0; round < 3; round++) {
      /* The slow task ends once the fence's core (staged: the producer is early_resolve) and the
       * dispatching thread (reading o1, after every submit) both wait. */
      assert_pto_ok(corpus_launch_held(&r, 0.5f, 2));
      for (int i = 0; i < N; i++) {
        assert_true(r.o1[i] == r.a[i] + 1.0f + 0.5f);
        assert_true(r.o2[i] == (r.a[i] + 1.0f) * r.b[i]);
      }
      check_core_types(r.w);
      /* The manual scope orders by the dependencies given, not by the regions: o1's task reads
       * the slow task's output yet waits for the fence only (the slow task is still running when
       * it is submitted, so tracking would have ordered it after that task too). */
      const pto_task_record *slow = find_task(r.w, "slow_add", 0);
      const pto_task_record *fence = find_task(r.w, "dummy", 0);
      const pto_task_record *t2 = find_task(r.w, "add_scalar", 0);
      assert_int_equal(fence->skipped, 2);
      assert_int_equal(fence->ndeps, 1);
      assert_int_equal(fence->deps[0], slow->task_id);
      assert_int_equal(t2->ndeps, 1);
      assert_int_equal(t2->deps[0], fence->task_id);
      assert_true(t2->start_ns >= slow->end_ns);
    }
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* Runs one launch of r with stderr captured into a file; returns the text (caller frees). */
static char *launch_capturing_stderr(corpus_run *r, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/stderr.txt", dir);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  dup2(fileno(f), STDERR_FILENO);
  pto_status s = corpus_launch(r, 0.5f);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  fclose(f);
  assert_pto_ok(s);
  char *out = NULL;
  assert_int_equal(tu_run(&out, "cat '%s'", path), 0);
  return out;
}

/* LOG_* lines reach stderr through the runtime, filtered by PTO_LOG_LEVEL. */
static void test_log_lines_follow_pto_log_level(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-log");
  corpus_run r;
  assert_true(corpus_open(&r, "deps_manual", "c++", dir));
  setenv("PTO_LOG_LEVEL", "timing", 1);
  char *out = launch_capturing_stderr(&r, dir);
  assert_non_null(strstr(out, "[TIMING] orchestration aicpu_orchestration_entry: o1[3] = 4.5\n"));
  assert_null(strstr(out, "[INFO]"));
  free(out);
  setenv("PTO_LOG_LEVEL", "info", 1);
  out = launch_capturing_stderr(&r, dir);
  assert_non_null(strstr(out, "[INFO] orchestration aicpu_orchestration_entry: 4 tensors\n"));
  free(out);
  unsetenv("PTO_LOG_LEVEL");
  out = launch_capturing_stderr(&r, dir);
  assert_null(strstr(out, "orchestration aicpu_orchestration_entry"));
  free(out);
  corpus_close(&r);
  tu_rmtree(dir);
  free(dir);
}

static void test_mixed_spmd_runs_with_both_compilers(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-mixed");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "mixed_spmd", k_cxx[c], dir)) continue;
    assert_pto_ok(corpus_launch(&r, 0.0f));
    for (int i = 0; i < N; i++) {
      assert_true(r.o1[i] == (i < N / 2 ? 2.0f * r.a[i] : r.a[i] + 1.0f));
      float want = i < 4 ? (float)(i + 1) : i == 15 ? 93.0f : 0.0f;
      assert_true(r.o2[i] == want);
    }
    check_core_types(r.w);
    /* The mixed task: its cube and vector kernels side by side (they meet before writing), one
     * on an AIC core, one on an AIV core, one group. */
    const pto_task_record *cube = find_task(r.w, "meet_aic", 0);
    const pto_task_record *inc = find_task(r.w, "meet_aiv", 0);
    assert_int_equal(cube->core_type, PTO_CORE_AIC);
    assert_int_equal(inc->core_type, PTO_CORE_AIV);
    assert_true(inc->start_ns < cube->end_ns && cube->start_ns < inc->end_ns);
    assert_int_equal(cube->group_id, cube->task_id);
    assert_int_equal(inc->group_id, cube->task_id);
    assert_int_equal(cube->slot, 0);
    assert_int_equal(inc->slot, 1);
    /* add_dep on the mixed task's id: the SPMD task starts after both of its kernels. Its four
     * blocks ran side by side (they meet), on four AIV cores. */
    const pto_task_record *spmd = find_task(r.w, "block_mark", 0);
    assert_true(spmd->start_ns >= inc->end_ns && spmd->start_ns >= cube->end_ns);
    assert_int_equal(spmd->block_num, 4);
    assert_non_null(spmd->blocks);
    for (int b = 0; b < 4; b++) {
      assert_true(spmd->blocks[b].core >= 0 && spmd->blocks[b].core < 4);
      assert_true(spmd->blocks[b].start_ns >= cube->end_ns &&
                  spmd->blocks[b].start_ns >= inc->end_ns);
      for (int b2 = 0; b2 < b; b2++) {
        assert_int_not_equal(spmd->blocks[b].core, spmd->blocks[b2].core);
        assert_true(spmd->blocks[b].start_ns < spmd->blocks[b2].end_ns &&
                    spmd->blocks[b2].start_ns < spmd->blocks[b].end_ns);
      }
    }
    assert_true(spmd->core == spmd->blocks[0].core && spmd->start_ns == spmd->blocks[0].start_ns);
    /* In PyPTO's capture the mixed task is one task: two rows (an AIC and an AIV core) under
     * one id, and one deps.json entry with both kernel ids. */
    const pto_task_record *recs;
    size_t nrecs;
    assert_pto_ok(pto_worker_last_launch_tasks(r.w, &recs, &nrecs));
    int types[6];
    for (int k = 0; k < 6; k++)
      types[k] = pto_worker_core_type(r.w, k);
    assert_int_equal(types[0], PTO_CORE_AIV);
    assert_int_equal(types[5], PTO_CORE_AIC);
    char rp[4096], dp[4096];
    snprintf(rp, sizeof rp, "%s/chip_swimlane_records.json", dir);
    snprintf(dp, sizeof dp, "%s/deps.json", dir);
    assert_pto_ok(pto_swimlane_write_records(rp, dp, NULL, recs, nrecs, types, 6));
    char *out = NULL;
    int rc =
        tu_run(&out,
               "python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); "
               "d=json.load(open(sys.argv[2])); g=%d; "
               "t=[x for x in d[\"tasks\"] if x[\"task_id\"]==g][0]; "
               "rows=[x for x in r[\"aicore_tasks\"] if x[1]==g]; "
               "ok=t[\"kernel_ids\"]==[7,8,-1] and t[\"name\"]==\"meet_aic+meet_aiv\" "
               "and t[\"core_type\"]==\"mix\" and "
               "sorted(r[\"metadata\"][\"core_types\"][x[0]] for x in rows)==[\"aic\",\"aiv\"] "
               "and all(e[\"pred\"]!=e[\"succ\"] for e in d[\"edges\"]); "
               "sys.exit(0 if ok else 1)' '%s' '%s'",
               (int)cube->task_id, rp, dp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    free(out);
    assert_int_equal(find_task(r.w, "add_scalar", 0)->skipped, 0);
    assert_int_equal(find_task(r.w, "add_scalar", 1)->skipped, 1);
    assert_status_contains(corpus_launch(&r, -1.0f),
                           "require_sync_start with block_num 5, more than the 4 AIV cores");
    assert_status_contains(corpus_launch(&r, -2.0f),
                           "submit of kernel 'cube_double': submitted to an AIV core, but the "
                           "kernel is an AIC kernel (use rt_submit_aic_task)");
    /* require_sync_start: the blocks taken while a core still runs the slow task wait for it, and
     * all four start once it ends (without the gang, three would start at once). The slow task
     * ends once the other three cores wait with a block each. */
    assert_pto_ok(corpus_launch_held(&r, -3.0f, 3));
    const pto_task_record *slow = find_task(r.w, "slow_add", 0);
    const pto_task_record *gang = find_task(r.w, "block_mark", 0);
    assert_int_equal(gang->block_num, 4);
    for (int b = 0; b < 4; b++) {
      assert_true(gang->blocks[b].start_ns >= slow->end_ns);
      assert_true(r.o2[b] == (float)(b + 1));
    }
    assert_pto_ok(corpus_launch(&r, 0.0f));
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* allow_early_resolve, as PyPTO's runtime does it: the consumer of a flagged producer is taken by
 * a core (staged) while the producer runs, and starts once it ends; unflagged, it is dispatched
 * when ready. The flag reaches deps.json as early_dispatch. */
static void test_early_resolve_stages_the_consumer(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-early");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "early_resolve", k_cxx[c], dir)) continue;
    for (int early = 1; early >= 0; early--) {
      /* Flagged, the producer ends once the consumer's core waits for it. */
      assert_pto_ok(early ? corpus_launch_held(&r, 1.0f, 1) : corpus_launch(&r, 0.0f));
      for (int i = 0; i < N; i++)
        assert_true(r.o1[i] == r.a[i] + r.b[i] + 0.5f);
      check_core_types(r.w);
      const pto_task_record *p = find_task(r.w, "slow_add", 0);
      const pto_task_record *q = find_task(r.w, "add_scalar", 0);
      assert_int_equal(p->early_resolve, early);
      assert_int_equal(q->early_resolve, 0);
      assert_true(q->start_ns >= p->end_ns);
      if (early) {
        assert_true(q->staged_ns > 0 && q->staged_ns < p->end_ns && q->staged_ns >= p->start_ns);
        assert_int_not_equal(q->core, p->core);
      } else {
        assert_int_equal(q->staged_ns, 0);
      }
      const pto_task_record *recs;
      size_t nrecs;
      assert_pto_ok(pto_worker_last_launch_tasks(r.w, &recs, &nrecs));
      int types[6];
      for (int k = 0; k < 6; k++)
        types[k] = pto_worker_core_type(r.w, k);
      char rp[4096], dp[4096];
      snprintf(rp, sizeof rp, "%s/chip_swimlane_records.json", dir);
      snprintf(dp, sizeof dp, "%s/deps.json", dir);
      assert_pto_ok(pto_swimlane_write_records(rp, dp, NULL, recs, nrecs, types, 6));
      char *out = NULL;
      /* The consumer's scheduler row dispatches it when it was staged: before the producer's
       * end when early. */
      int rc = tu_run(&out,
                      "python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); "
                      "d=json.load(open(sys.argv[2])); e=%d; "
                      "t={x[\"task_id\"]:x for x in d[\"tasks\"]}; "
                      "a={x[1]:x for x in r[\"aicore_tasks\"]}; "
                      "s={(x[0],x[1]):x for x in r[\"aicpu_tasks\"]}; "
                      "p,q=%d,%d; qd=s[(a[q][0],a[q][2])][2]; "
                      "ok=t[p][\"early_dispatch\"]==bool(e) and not t[q][\"early_dispatch\"] "
                      "and ((qd<a[p][4]) if e else (qd>=a[p][4])); "
                      "sys.exit(0 if ok else 1)' '%s' '%s'",
                      early, (int)p->task_id, (int)q->task_id, rp, dp);
      if (rc) print_error("%s\n", out);
      assert_int_equal(rc, 0);
      free(out);
    }
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* CoreTaskArgs::dump with pto_worker_set_dump_args, in the reference's args_dump.json: the marked
 * arguments of the mixed task (a and the scalar before it runs, o1 after it ends, under the
 * group's id, with both kernels' func_ids) with their bytes at level 1; every byte at level 2
 * (full); every task's arguments at level 3 (hybrid), bytes for the marked only; the counters
 * match the entries. */
static void test_dump_writes_the_marked_arguments(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-dump");
  corpus_run r;
  assert_true(corpus_open(&r, "mixed_spmd", "c++", dir));
  char dd[4096];
  snprintf(dd, sizeof dd, "%s/args_dump", dir);
  assert_status_contains(pto_worker_set_dump_args(r.w, 4, dd),
                         "level 4 (0 off, 1 marked, 2 full, 3 hybrid)");
  assert_status_contains(pto_worker_set_dump_args(r.w, 1, NULL), "level 1 needs a directory");
  for (int level = 1; level <= 3; level++) {
    assert_pto_ok(pto_worker_set_dump_args(r.w, level, dd));
    assert_pto_ok(corpus_launch(&r, 0.0f));
    const pto_task_record *mixed = find_task(r.w, "meet_aic", 0);
    char py[4096];
    snprintf(py, sizeof py, "%s/check_dump.py", dir);
    FILE *f = fopen(py, "w");
    assert_non_null(f);
    fputs(
        "import json, struct, sys\n"
        "d, level, g = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
        "m = json.load(open(d + '/args_dump.json'))\n"
        "assert m['dump_args_level'] == level and m['run_dir'] == 'args_dump', m['run_dir']\n"
        "assert m['total_args'] == len(m['args']) == m['before_dispatch'] + m['after_completion']\n"
        "assert m['input_args'] + m['output_args'] + m['inout_args'] == len(m['args'])\n"
        "assert m['dropped_records'] == m['dropped_overwrite'] == m['truncated_args'] == 0\n"
        "b = open(d + '/' + m['bin_file'], 'rb').read()\n"
        "tid = '0x%016x' % g\n"
        "mine = [t for t in m['args'] if t['task_id'] == tid]\n"
        "assert all(len(t['func_id']) == 2 for t in mine), mine\n"
        "def f32(t): return list(struct.unpack_from('<%df' % (t['bin_size'] // 4), b, "
        "t['bin_offset']))\n"
        "key = sorted((t['stage'], t['role'], t['arg_index'], t['kind']) for t in mine)\n"
        "assert key == [('after_completion', 'output', 1, 'tensor'), ('before_dispatch', 'input', "
        "0, 'tensor'),\n"
        "               ('before_dispatch', 'input', 2, 'scalar')], key\n"
        "a = [t for t in mine if t['arg_index'] == 0][0]\n"
        "o = [t for t in mine if t['arg_index'] == 1][0]\n"
        "s = [t for t in mine if t['arg_index'] == 2][0]\n"
        "assert a['dtype'] == 'float32' and a['shape'] == [16] and a['is_contiguous'], a\n"
        "assert f32(a) == [float(i) for i in range(16)], f32(a)\n"
        "assert f32(o) == [2.0 * i if i < 8 else i + 1.0 for i in range(16)], f32(o)\n"
        "assert s['value'] == 2 and s['dtype'] == 'int64', s\n"
        "others = [t for t in m['args'] if t['task_id'] != tid]\n"
        "if level == 1: assert not others, others\n"
        "else:\n"
        "    assert others and all(t['bin_size'] == (64 if level == 2 and t['kind'] == 'tensor' "
        "else 0) for t in others), others\n"
        "    roles = {(t['stage'], t['role']) for t in others}\n"
        "    assert ('before_dispatch', 'inout') in roles and ('after_completion', 'inout') in "
        "roles, roles\n",
        f);
    fclose(f);
    char *out = NULL;
    int rc = tu_run(&out, "python3 '%s' '%s' %d %d", py, dd, level, (int)mixed->group_id);
    if (rc) print_error("level %d: %s\n", level, out);
    assert_int_equal(rc, 0);
    free(out);
  }
  assert_pto_ok(pto_worker_set_dump_args(r.w, 0, NULL));
  corpus_close(&r);
  tu_rmtree(dir);
  free(dir);
}

static void test_views_run_with_both_compilers(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-views");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "views", k_cxx[c], dir)) continue;
    assert_pto_ok(corpus_launch(&r, 0.0f));
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++)
        assert_true(r.o1[i * 4 + j] == r.a[j * 4 + i]);
    for (int i = 0; i < N; i++)
      assert_true(r.o2[i] == r.a[i] + r.b[i] + 10.0f);
    check_core_types(r.w);
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* slice with a step, permute, valid_transpose, valid_reshape: o1's even columns a + b, its odd
 * ones a * b, o2 a transposed; a slice past the edge fails the launch naming it. */
static void test_slices_with_both_compilers(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-slices");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "slices", k_cxx[c], dir)) continue;
    assert_pto_ok(corpus_launch(&r, 0.0f));
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        const float a = r.a[i * 4 + j], b = r.b[i * 4 + j];
        assert_true(r.o1[i * 4 + j] == (j % 2 ? a * b : a + b));
        assert_true(r.o2[i * 4 + j] == r.a[j * 4 + i]);
      }
    check_core_types(r.w);
    assert_status_contains(corpus_launch(&r, -1.0f),
                           "slice(1, 1, 5, 2) of a view of extent 4 in dim 1");
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* always_assert and TensorCreateInfo::buffer_size_bytes (PyPTO's scratch-arena code): with room
 * for both intermediates the tasks run; without, the second carve's assertion fails the launch
 * naming the condition and its line, and no task after it runs. */
static void test_scratch_arena_asserts_with_both_compilers(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("compat-assert");
  for (int c = 0; c < 2; c++) {
    corpus_run r;
    if (!corpus_open(&r, "scratch_assert", k_cxx[c], dir)) continue;
    assert_pto_ok(corpus_launch(&r, 0.0f));
    for (int i = 0; i < N; i++) {
      assert_true(r.o1[i] == r.a[i] + r.b[i]);
      assert_true(r.o2[i] == (r.a[i] + r.b[i]) * r.b[i]);
    }
    check_core_types(r.w);
    pto_status st = corpus_launch(&r, -1.0f);
    assert_non_null(st);
    const char *m = pto_status_message(st);
    if (!strstr(m, "Assertion failed: cursor_ + elements <= "
                   "static_cast<uint64_t>(storage_.numel()) at ") ||
        !strstr(m, "tests/compat/scratch_assert.cpp:23"))
      fail_msg("%s", m);
    pto_status_free(st);
    for (int i = 0; i < N; i++)
      assert_true(r.o1[i] == 0.0f && r.o2[i] == 0.0f);
    assert_pto_ok(corpus_launch(&r, 0.0f));
    corpus_close(&r);
  }
  tu_rmtree(dir);
  free(dir);
}

/* ---- the reference runtime's own examples ---------------------------------------------------
 * PyPTO's runtime (hw-native-sys/simpler) ships orchestration sources with its examples. With
 * PTO_SIMPLER_DIR naming a checkout of it, these tests compile some of them in place, as a user
 * would (`-I include/pto -I include`, no -Werror: their code has unused variables), and run them on
 * a sim worker with kernels written here that compute what the examples' kernels compute (their
 * test_*.py goldens). Without PTO_SIMPLER_DIR they are skipped; CI runs the look-alike sources of
 * tests/compat instead. */

static const char *simpler_dir(void) {
  const char *d = getenv("PTO_SIMPLER_DIR");
  return d && *d && access(d, R_OK) == 0 ? d : NULL;
}

static int32_t k_noop(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t;
  (void)s;
  return on_type(ctx, PTO_CORE_AIV) ? 0 : WRONG_CORE;
}

/* bgemm's mixed task (A tile, B tile, C tile inout, each 64x64 as 4096 elements): the cube
 * kernel computes C += A @ B. The reference streams A @ B to the two vector kernels, which add
 * their halves into C; the sim has no cube-to-vector FIFO, so here the vector kernels only run
 * beside the cube kernel. */
static int32_t k_gemm_tile(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  enum { T = 64 };
  if (kv_numel(&t[0]) != T * T || kv_numel(&t[2]) != T * T) return 98;
  for (int r = 0; r < T; r++)
    for (int c = 0; c < T; c++) {
      float acc = 0.0f;
      for (int k = 0; k < T; k++)
        acc += kv_f32(&t[0], r * T + k) * kv_f32(&t[1], k * T + c);
      *kv_f32p(&t[2], r * T + c) += acc;
    }
  return 0;
}

typedef struct simpler_run {
  void *so;
  pto_program *p;
  pto_worker *w;
} simpler_run;

/* Compiles PTO_SIMPLER_DIR/SRC with cxx into dir and makes a program of its entry symbol and the
 * given kernels (func_id = index) on a worker of aic + aiv cores; 0 when cxx is missing. */
static int simpler_open(simpler_run *r, const char *src, const char *entry_sym, const char *cxx,
                        const char *dir, const tsig *s, int nk, const pto_kernel_fn *kernels,
                        const char *const *names, const int *types, int aic, int aiv) {
  memset(r, 0, sizeof *r);
  char *out = NULL;
  if (tu_run(&out, "command -v %s", cxx) != 0) {
    free(out);
    return 0;
  }
  free(out);
  char so[4096];
  snprintf(so, sizeof so, "%s/%s.%s.so", dir, src, cxx); /* one file per source */
  for (char *c = so + strlen(dir) + 1; *c; c++)
    if (*c == '/') *c = '_';
  int rc = tu_run(&out,
                  "%s -std=c++17 -O1 -shared -fPIC -I '%s/include/pto' -I '%s/include' -o '%s' "
                  "'%s/%s'",
                  cxx, PTO_SOURCE_DIR, PTO_SOURCE_DIR, so, simpler_dir(), src);
  if (rc != 0) print_error("%s %s: %s\n", cxx, src, out);
  assert_int_equal(rc, 0);
  free(out);
  r->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(r->so);
  pto_orch_bind_fn bind = (pto_orch_bind_fn)dlsym(r->so, "pto_orch_bind");
  pto_orch_entry_fn entry = (pto_orch_entry_fn)dlsym(r->so, entry_sym);
  assert_non_null(bind);
  assert_non_null(entry);
  r->p = tprogram(s, bind, entry, nk, kernels, names);
  for (int k = 0; k < nk; k++)
    assert_pto_ok(pto_program_set_kernel_core_type(r->p, k, types[k]));
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aic_cores = aic;
  cfg.aiv_cores = aiv;
  cfg.record_tasks = true;
  cfg.device_memory_bytes = 64ull << 20;
  assert_pto_ok(pto_worker_open(&cfg, &r->w));
  return 1;
}

static void simpler_close(simpler_run *r) {
  pto_worker_close(r->w);
  pto_program_release(r->p);
  dlclose(r->so);
}

/* Runs the program once on f32 host tensors bufs[i] of nels[i] elements (rank 1). */
static pto_status simpler_launch(simpler_run *r, int n, float *const *bufs, const int64_t *nels) {
  pto_host_tensor h[8];
  pto_arg args[8];
  for (int i = 0; i < n; i++) {
    pto_host_tensor_init(&h[i], bufs[i], PTO_DTYPE_F32, 1, &nels[i]);
    args[i] = pto_arg_host(&h[i]);
  }
  return pto_worker_run(r->w, r->p, args, n);
}

/* vector_example (both chip generations): f = (a + b + 1) * (a + b + 2) + (a + b) over five
 * tasks in two scopes, kernels add, add_scalar and mul as func_ids 0, 1 and 2; a = 2, b = 3 give
 * 47 everywhere, as its test_vector_example.py says. */
static void test_simpler_vector_example(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  static const char *const srcs[] = {
      "examples/a2a3/tensormap_and_ringbuffer/vector_example/kernels/orchestration/"
      "example_orchestration.cpp",
      "examples/a5/tensormap_and_ringbuffer/vector_example/kernels/orchestration/"
      "example_orchestration.cpp"};
  enum { SIZE = 128 * 128 };
  static float a[SIZE], b[SIZE], f[SIZE];
  char *dir = tu_mkdtemp("simpler-vector");
  tsig s;
  tsig_init(&s, "aicpu_orchestration_entry");
  tsig_tensor(&s, "a", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "b", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "f", PTO_DIR_OUT, PTO_DTYPE_F32, "16384");
  for (int v = 0; v < 2; v++)
    for (int c = 0; c < 2; c++) {
      simpler_run r;
      if (!simpler_open(&r, srcs[v], "aicpu_orchestration_entry", k_cxx[c], dir, &s, 3, g_kernels,
                        g_names, g_types, 2, 4))
        continue;
      for (int i = 0; i < SIZE; i++)
        a[i] = 2.0f, b[i] = 3.0f, f[i] = 0.0f;
      float *bufs[] = {a, b, f};
      const int64_t nels[] = {SIZE, SIZE, SIZE};
      assert_pto_ok(simpler_launch(&r, 3, bufs, nels));
      for (int i = 0; i < SIZE; i++)
        assert_true(f[i] == (a[i] + b[i] + 1) * (a[i] + b[i] + 2) + (a[i] + b[i]));
      assert_true(f[0] == 47.0f);
      check_core_types(r.w);
      const pto_task_record *t;
      size_t n;
      assert_pto_ok(pto_worker_last_launch_tasks(r.w, &t, &n));
      assert_int_equal(n, 5);
      simpler_close(&r);
    }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

/* scalar_data (both generations): get_tensor_data / set_tensor_data with their waits (RAW, WAW,
 * WAR on an intermediate and on an external tensor written by a task), alloc_tensors with an
 * initial value, add_inout; kernels add and noop as func_ids 0 and 1. The golden of its
 * test_scalar_data.py: result = a + b, check = 2, 102, 77, 77, 79, 42, 12, 88, 55. */
static void test_simpler_scalar_data(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  static const char *const srcs[] = {
      "examples/a2a3/tensormap_and_ringbuffer/scalar_data/kernels/orchestration/"
      "scalar_data_orch.cpp",
      "examples/a5/tensormap_and_ringbuffer/scalar_data/kernels/orchestration/"
      "scalar_data_orch.cpp"};
  enum { SIZE = 128 * 128 };
  static float a[SIZE], b[SIZE], result[SIZE], check[9];
  static const float want[9] = {2, 102, 77, 77, 79, 42, 12, 88, 55};
  const pto_kernel_fn kernels[] = {k_add, k_noop};
  const char *const names[] = {"kernel_add", "kernel_noop"};
  const int types[] = {PTO_CORE_AIV, PTO_CORE_AIV};
  char *dir = tu_mkdtemp("simpler-scalar");
  tsig s;
  tsig_init(&s, "aicpu_orchestration_entry");
  tsig_tensor(&s, "a", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "b", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "result", PTO_DIR_OUT, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "check", PTO_DIR_OUT, PTO_DTYPE_F32, "9");
  for (int v = 0; v < 2; v++)
    for (int c = 0; c < 2; c++) {
      simpler_run r;
      if (!simpler_open(&r, srcs[v], "aicpu_orchestration_entry", k_cxx[c], dir, &s, 2, kernels,
                        names, types, 2, 4))
        continue;
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < SIZE; i++)
          a[i] = 2.0f, b[i] = (float)i, result[i] = 0.0f;
        memset(check, 0, sizeof check);
        float *bufs[] = {a, b, result, check};
        const int64_t nels[] = {SIZE, SIZE, SIZE, 9};
        assert_pto_ok(simpler_launch(&r, 4, bufs, nels));
        for (int i = 0; i < SIZE; i++)
          assert_true(result[i] == 2.0f + (float)i);
        for (int i = 0; i < 9; i++)
          if (check[i] != want[i]) fail_msg("check[%d] = %g, expected %g", i, check[i], want[i]);
      }
      simpler_close(&r);
    }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

/* workers/l2/vector_add: its entry is vector_add_orchestration, one task of func_id 0 on a
 * 128x128 f32 pair, out = a + b (the tensors are passed as 16384 elements here: the kernel reads
 * them flat). */
static void test_simpler_l2_vector_add(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  enum { SIZE = 128 * 128 };
  static float a[SIZE], b[SIZE], out[SIZE];
  char *dir = tu_mkdtemp("simpler-l2");
  tsig s;
  tsig_init(&s, "vector_add_orchestration");
  tsig_tensor(&s, "a", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "b", PTO_DIR_IN, PTO_DTYPE_F32, "16384");
  tsig_tensor(&s, "out", PTO_DIR_OUT, PTO_DTYPE_F32, "16384");
  for (int c = 0; c < 2; c++) {
    simpler_run r;
    if (!simpler_open(
            &r, "examples/workers/l2/vector_add/kernels/orchestration/vector_add_orch.cpp",
            "vector_add_orchestration", k_cxx[c], dir, &s, 1, g_kernels, g_names, g_types, 1, 2))
      continue;
    for (int i = 0; i < SIZE; i++)
      a[i] = (float)(i % 97) * 0.25f, b[i] = (float)(i % 13) - 6.0f, out[i] = 0.0f;
    float *bufs[] = {a, b, out};
    const int64_t nels[] = {SIZE, SIZE, SIZE};
    assert_pto_ok(simpler_launch(&r, 3, bufs, nels));
    for (int i = 0; i < SIZE; i++)
      assert_true(out[i] == a[i] + b[i]);
    simpler_close(&r);
  }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

/* a5 bgemm: C[b, m, n] = sum over k of A[b, m, k] @ B[b, k, n] for 2 batches of a 4x4x4 grid of
 * 64x64 tiles, one mixed task (cube + two vector kernels) per k step, C's tile accumulated in
 * place (add_inout: the k steps of a tile are ordered by the regions they touch). The sum is
 * compared with one computed here in the same order (k ascending, within a tile k ascending). */
static void test_simpler_bgemm(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  enum { T = 64, G = 4, BATCH = 2, TE = T * T, NA = BATCH * G * G * TE };
  static float A[NA], B[NA], C[NA], want[NA];
  const pto_kernel_fn kernels[] = {k_gemm_tile, k_noop};
  const char *const names[] = {"gemm_tile", "tile_add"};
  const int types[] = {PTO_CORE_AIC, PTO_CORE_AIV};
  for (int i = 0; i < NA; i++) {
    A[i] = (float)((i * 7) % 11) / 8.0f - 0.5f;
    B[i] = (float)((i * 5) % 13) / 16.0f - 0.25f;
  }
  memset(want, 0, sizeof want);
  for (int b = 0; b < BATCH; b++)
    for (int m = 0; m < G; m++)
      for (int n = 0; n < G; n++) {
        float *c = &want[((b * G + m) * G + n) * TE];
        for (int k = 0; k < G; k++) {
          const float *a = &A[((b * G + m) * G + k) * TE], *bt = &B[((b * G + k) * G + n) * TE];
          for (int r = 0; r < T; r++)
            for (int col = 0; col < T; col++) {
              float acc = 0.0f;
              for (int kk = 0; kk < T; kk++)
                acc += a[r * T + kk] * bt[kk * T + col];
              c[r * T + col] += acc;
            }
        }
      }
  char *dir = tu_mkdtemp("simpler-bgemm");
  tsig s;
  tsig_init(&s, "aicpu_orchestration_entry");
  tsig_tensor(&s, "A", PTO_DIR_IN, PTO_DTYPE_F32, "131072");
  tsig_tensor(&s, "B", PTO_DIR_IN, PTO_DTYPE_F32, "131072");
  tsig_tensor(&s, "C", PTO_DIR_INOUT, PTO_DTYPE_F32, "131072");
  for (int c = 0; c < 2; c++) {
    simpler_run r;
    if (!simpler_open(&r,
                      "examples/a5/tensormap_and_ringbuffer/bgemm/kernels/orchestration/"
                      "bgemm_orch.cpp",
                      "aicpu_orchestration_entry", k_cxx[c], dir, &s, 2, kernels, names, types, 2,
                      4))
      continue;
    memset(C, 0, sizeof C);
    float *bufs[] = {A, B, C};
    const int64_t nels[] = {NA, NA, NA};
    assert_pto_ok(simpler_launch(&r, 3, bufs, nels));
    for (int i = 0; i < NA; i++)
      if (C[i] != want[i]) fail_msg("C[%d] = %g, expected %g", i, C[i], want[i]);
    const pto_task_record *t;
    size_t n;
    assert_pto_ok(pto_worker_last_launch_tasks(r.w, &t, &n));
    assert_int_equal(n, BATCH * G * G * G * 3);
    simpler_close(&r);
  }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

/* prefetch_async_demo's kernel: on the chip an SDMA prefetch then a copy, which changes no value
 * (its golden: out = src); here the copy. */
static int32_t k_copy(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i);
  return 0;
}

/* prefetch_async_demo: its entry prefetch_async_orchestration checks the argument count itself
 * and submits one task, out = src over 128 f32 (arange / 8). */
static void test_simpler_prefetch_async(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  enum { SIZE = 128 };
  static float src[SIZE], out[SIZE];
  const pto_kernel_fn kernels[] = {k_copy};
  const char *const names[] = {"kernel_prefetch_copy"};
  const int types[] = {PTO_CORE_AIV};
  char *dir = tu_mkdtemp("simpler-prefetch");
  tsig s;
  tsig_init(&s, "prefetch_async_orchestration");
  tsig_tensor(&s, "src", PTO_DIR_IN, PTO_DTYPE_F32, "128");
  tsig_tensor(&s, "out", PTO_DIR_OUT, PTO_DTYPE_F32, "128");
  for (int c = 0; c < 2; c++) {
    simpler_run r;
    if (!simpler_open(&r,
                      "examples/a2a3/tensormap_and_ringbuffer/prefetch_async_demo/kernels/"
                      "orchestration/prefetch_async_orch.cpp",
                      "prefetch_async_orchestration", k_cxx[c], dir, &s, 1, kernels, names, types,
                      1, 2))
      continue;
    for (int i = 0; i < SIZE; i++)
      src[i] = (float)i / 8.0f, out[i] = -1.0f;
    float *bufs[] = {src, out};
    const int64_t nels[] = {SIZE, SIZE};
    assert_pto_ok(simpler_launch(&r, 2, bufs, nels));
    assert_memory_equal(out, src, sizeof src);
    simpler_close(&r);
  }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

/* paged_attention's four kernels (func_ids 0 to 3), bf16 inputs, f32 accumulation, as its
 * golden (simpler_setup/goldens/paged_attention.py) computes: QK sij = qi @ kj^T (AIC); SF
 * pij = bf16(exp(sij * scale - mi)) over the valid columns (0 past them), mi the row max, li the
 * row sum of pij (AIV); PV oi_tmp = pij @ vj (AIC); UP the online-softmax update of (mi, li, oi),
 * and out = oi / li at the last block (AIV). */
static float bf16_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint16_t f32_bf16(float f) { /* round to nearest even; no NaN here */
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static float pa_bf16_at(const pto_kernel_tensor *t, int64_t r, int64_t c) {
  return bf16_f32(((const uint16_t *)t->data)[r * t->stride[0] + c * t->stride[1]]);
}
static float *pa_f32_at(const pto_kernel_tensor *t, int64_t r, int64_t c) {
  return &((float *)t->data)[r * t->stride[0] + c * t->stride[1]];
}

/* The three steps over n blocks of bs rows of the K or V cache: rows blocks[k] * bs + j, or
 * k * bs + j when blocks is NULL (a cache view of the block itself). */
static void pa_qk(const pto_kernel_tensor *qi, const pto_kernel_tensor *kc, const int32_t *blocks,
                  int64_t n, int64_t bs, const pto_kernel_tensor *sij) {
  for (int64_t k = 0; k < n; k++)
    for (int64_t i = 0; i < qi->shape[0]; i++)
      for (int64_t j = 0; j < bs; j++) {
        const int64_t row = (blocks ? blocks[k] : k) * bs + j;
        float acc = 0.0f;
        for (int64_t d = 0; d < qi->shape[1]; d++)
          acc += pa_bf16_at(qi, i, d) * pa_bf16_at(kc, row, d);
        *pa_f32_at(sij, i, k * bs + j) = acc;
      }
}

/* Tensors sij, pij, mi, li: pij over sij's first `valid` columns (0 past them). */
static void pa_softmax(const pto_kernel_tensor *t, float scale, int64_t valid) {
  const int64_t cols = t[1].shape[1];
  for (int64_t i = 0; i < t[1].shape[0]; i++) {
    float m = -1e30f, l = 0.0f;
    for (int64_t j = 0; j < valid; j++)
      m = fmaxf(m, *pa_f32_at(&t[0], i, j) * scale);
    for (int64_t j = 0; j < cols; j++) {
      uint16_t p = j < valid ? f32_bf16(expf(*pa_f32_at(&t[0], i, j) * scale - m)) : 0;
      ((uint16_t *)t[1].data)[i * t[1].stride[0] + j * t[1].stride[1]] = p;
      l += bf16_f32(p);
    }
    ((float *)t[2].data)[i * t[2].stride[0]] = m;
    ((float *)t[3].data)[i * t[3].stride[0]] = l;
  }
}

static void pa_pv(const pto_kernel_tensor *pij, const pto_kernel_tensor *vc, const int32_t *blocks,
                  int64_t n, int64_t bs, const pto_kernel_tensor *oi) {
  for (int64_t i = 0; i < pij->shape[0]; i++)
    for (int64_t d = 0; d < oi->shape[1]; d++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < bs; j++)
          acc +=
              pa_bf16_at(pij, i, k * bs + j) * pa_bf16_at(vc, (blocks ? blocks[k] : k) * bs + j, d);
      *pa_f32_at(oi, i, d) = acc;
    }
}

/* Tensors qi, kj (the block's rows), sij. */
static int32_t k_pa_qk(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  pa_qk(&t[0], &t[1], NULL, 1, t[1].shape[0], &t[2]);
  return 0;
}

/* Tensors sij_valid, pij, mi, li; scalar scale. */
static int32_t k_pa_softmax(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  pa_softmax(t, slot_f32(s[0]), t[0].shape[1]);
  return 0;
}

/* Tensors pij, vj (the block's rows), oi_tmp. */
static int32_t k_pa_pv(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  pa_pv(&t[0], &t[1], NULL, 1, t[1].shape[0], &t[2]);
  return 0;
}

static int32_t k_pa_update(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  float *mi = t[0].data, *li = t[1].data, *mu = t[3].data, *lu = t[4].data;
  for (int64_t i = 0; i < t[2].shape[0]; i++) {
    float alpha = 0.0f, beta = 1.0f;
    if (s[0]) {
      mu[i * t[3].stride[0]] = mi[i * t[0].stride[0]];
      lu[i * t[4].stride[0]] = li[i * t[1].stride[0]];
    } else {
      const float m_old = mu[i * t[3].stride[0]], m_new = fmaxf(m_old, mi[i * t[0].stride[0]]);
      alpha = expf(m_old - m_new);
      beta = expf(mi[i * t[0].stride[0]] - m_new);
      lu[i * t[4].stride[0]] = alpha * lu[i * t[4].stride[0]] + beta * li[i * t[1].stride[0]];
      mu[i * t[3].stride[0]] = m_new;
    }
    for (int64_t d = 0; d < t[2].shape[1]; d++) {
      float *o = pa_f32_at(&t[5], i, d);
      *o = alpha * *o + beta * *pa_f32_at(&t[2], i, d);
      if (s[1]) *pa_f32_at(&t[6], i, d) = *o / lu[i * t[4].stride[0]];
    }
  }
  return 0;
}

/* paged_attention_unroll_manual_scope's kernels: one task per group of up to 64 blocks (n_blocks
 * and the group's first block-table index as scalars), the block table read by the kernels. QK
 * (qi, key_cache, block_table, sij_buf): the group's blocks side by side; SF (sij_buf, pij, mi,
 * li; scale, n_blocks, the last block's valid length); PV (pij, value_cache, block_table, oi):
 * summed over the group's blocks; UP: k_pa_update. */
static int32_t k_pau_qk(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  const int64_t n = (int64_t)s[0];
  pa_qk(&t[0], &t[1], (const int32_t *)t[2].data + s[1], n, t[3].shape[1] / n, &t[3]);
  return 0;
}

static int32_t k_pau_softmax(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIV)) return WRONG_CORE;
  const int64_t n = (int64_t)s[1];
  pa_softmax(t, slot_f32(s[0]), (n - 1) * (t[0].shape[1] / n) + (int64_t)s[2]);
  return 0;
}

static int32_t k_pau_pv(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (!on_type(ctx, PTO_CORE_AIC)) return WRONG_CORE;
  const int64_t n = (int64_t)s[0];
  pa_pv(&t[0], &t[1], (const int32_t *)t[2].data + s[1], n, t[0].shape[1] / n, &t[3]);
  return 0;
}

/* The inputs of the paged-attention runs (CaseVarSeq4's shape: 4 requests of 33, 64, 128 and 15
 * tokens, 16 heads of dim 16, blocks of 16 tokens, a random block table). */
enum { PA_BATCH = 4, PA_HEADS = 16, PA_DIM = 16, PA_BS = 16, PA_MAXB = 16, PA_NBLK = 4 * 8 };
static uint16_t g_pa_q[PA_BATCH * PA_HEADS * PA_DIM], g_pa_kc[PA_NBLK * PA_BS * PA_DIM],
    g_pa_vc[PA_NBLK * PA_BS * PA_DIM];
static int32_t g_pa_table[PA_BATCH * PA_MAXB], g_pa_lens[PA_BATCH] = {33, 64, 128, 15};

/* The golden's online softmax (simpler_setup/goldens/paged_attention.py) over groups of `group`
 * blocks: within a group one max, p = bf16(exp(s - max)), then the running (m, l, o) update. */
static void pa_golden(int group, float *want) {
  enum { B = PA_BATCH, H = PA_HEADS, D = PA_DIM, BS = PA_BS };
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++) {
      float m = -1e30f, l = 0.0f, o[D] = {0};
      for (int g0 = 0; g0 * BS < g_pa_lens[b]; g0 += group) {
        const int ntok = g_pa_lens[b] - g0 * BS < group * BS ? g_pa_lens[b] - g0 * BS : group * BS;
        float sij[PA_MAXB * BS], mij = -1e30f, lij = 0.0f, oij[D] = {0};
        for (int j = 0; j < ntok; j++) {
          const int blk = g_pa_table[b * PA_MAXB + g0 + j / BS], row = blk * BS + j % BS;
          sij[j] = 0.0f;
          for (int d = 0; d < D; d++)
            sij[j] += bf16_f32(g_pa_q[(b * H + h) * D + d]) * bf16_f32(g_pa_kc[row * D + d]);
          mij = fmaxf(mij, sij[j]);
        }
        for (int j = 0; j < ntok; j++) {
          const int blk = g_pa_table[b * PA_MAXB + g0 + j / BS], row = blk * BS + j % BS;
          const float p = bf16_f32(f32_bf16(expf(sij[j] - mij)));
          lij += p;
          for (int d = 0; d < D; d++)
            oij[d] += p * bf16_f32(g_pa_vc[row * D + d]);
        }
        const float mn = g0 ? fmaxf(m, mij) : mij, alpha = g0 ? expf(m - mn) : 0.0f,
                    beta = g0 ? expf(mij - mn) : 1.0f;
        l = alpha * l + beta * lij;
        for (int d = 0; d < D; d++)
          o[d] = alpha * o[d] + beta * oij[d];
        m = mn;
      }
      for (int d = 0; d < D; d++)
        want[(b * H + h) * D + d] = o[d] / l;
    }
}

/* paged_attention, its manual-scope variant (set_dependencies through CoreTaskArgsWithDeps) and
 * its unrolled manual-scope variant (a group of blocks per task, the block table read by the
 * kernels), both generations: out compared with the golden's online softmax, computed here over
 * the same groups of blocks, at its tolerance (1e-3). */
static void test_simpler_paged_attention(void **state) {
  (void)state;
  if (!simpler_dir()) skip();
  static const struct {
    const char *src;
    int group; /* blocks per task */
  } cases[] = {
      {"examples/a2a3/tensormap_and_ringbuffer/paged_attention/kernels/orchestration/"
       "paged_attention_orch.cpp",
       1},
      {"examples/a5/tensormap_and_ringbuffer/paged_attention/kernels/orchestration/"
       "paged_attention_orch.cpp",
       1},
      {"examples/a2a3/tensormap_and_ringbuffer/paged_attention_manual_scope/kernels/orchestration/"
       "paged_attention_orch.cpp",
       1},
      {"examples/a5/tensormap_and_ringbuffer/paged_attention_manual_scope/kernels/orchestration/"
       "paged_attention_orch.cpp",
       1},
      {"examples/a2a3/tensormap_and_ringbuffer/paged_attention_unroll_manual_scope/kernels/"
       "orchestration/paged_attention_orch.cpp",
       64},
      {"examples/a5/tensormap_and_ringbuffer/paged_attention_unroll_manual_scope/kernels/"
       "orchestration/paged_attention_orch.cpp",
       64}};
  enum { NOUT = PA_BATCH * PA_HEADS * PA_DIM };
  static float out[NOUT], want1[NOUT], want64[NOUT];
  uint32_t seed = 12345;
#define PA_RAND() ((seed = seed * 1103515245u + 12345u) >> 8 & 0xffff)
  for (int i = 0; i < NOUT; i++)
    g_pa_q[i] = f32_bf16((float)PA_RAND() / 65536.0f - 0.5f);
  for (int i = 0; i < PA_NBLK * PA_BS * PA_DIM; i++) {
    g_pa_kc[i] = f32_bf16((float)PA_RAND() / 65536.0f - 0.5f);
    g_pa_vc[i] = f32_bf16((float)PA_RAND() / 32768.0f - 1.0f);
  }
  for (int i = 0; i < PA_BATCH * PA_MAXB; i++)
    g_pa_table[i] = (int32_t)(PA_RAND() % PA_NBLK);
#undef PA_RAND
  pa_golden(1, want1);
  pa_golden(64, want64);
  const pto_kernel_fn per_block[] = {k_pa_qk, k_pa_softmax, k_pa_pv, k_pa_update};
  const pto_kernel_fn unrolled[] = {k_pau_qk, k_pau_softmax, k_pau_pv, k_pa_update};
  const char *const names[] = {"QK", "SF", "PV", "UP"};
  const int types[] = {PTO_CORE_AIC, PTO_CORE_AIV, PTO_CORE_AIC, PTO_CORE_AIV};
  char *dir = tu_mkdtemp("simpler-pa");
  tsig s;
  tsig_init(&s, "aicpu_orchestration_entry");
  tsig_tensor(&s, "query", PTO_DIR_IN, PTO_DTYPE_BF16, "4,16,16");
  tsig_tensor(&s, "key_cache", PTO_DIR_IN, PTO_DTYPE_BF16, "32,16,1,16");
  tsig_tensor(&s, "value_cache", PTO_DIR_IN, PTO_DTYPE_BF16, "32,16,1,16");
  tsig_tensor(&s, "block_table", PTO_DIR_IN, PTO_DTYPE_I32, "4,16");
  tsig_tensor(&s, "context_lens", PTO_DIR_IN, PTO_DTYPE_I32, "4");
  tsig_tensor(&s, "out", PTO_DIR_OUT, PTO_DTYPE_F32, "4,16,16");
  tsig_scalar(&s, "scale", PTO_DTYPE_F32, PTO_BIND_RUNTIME, tscalar_f(PTO_DTYPE_F32, 1.0));
  for (size_t v = 0; v < sizeof cases / sizeof cases[0]; v++)
    for (int c = 0; c < 2; c++) {
      simpler_run r;
      /* The a5 sources name their entry build_paged_attention_graph. */
      if (!simpler_open(&r, cases[v].src,
                        strstr(cases[v].src, "/a5/") ? "build_paged_attention_graph"
                                                     : "aicpu_orchestration_entry",
                        k_cxx[c], dir, &s, 4, cases[v].group > 1 ? unrolled : per_block, names,
                        types, 2, 4))
        continue;
      memset(out, 0, sizeof out);
      const int64_t sq[] = {PA_BATCH, PA_HEADS, PA_DIM}, skv[] = {PA_NBLK, PA_BS, 1, PA_DIM},
                    sbt[] = {PA_BATCH, PA_MAXB}, sl[] = {PA_BATCH};
      pto_host_tensor h[6];
      pto_host_tensor_init(&h[0], g_pa_q, PTO_DTYPE_BF16, 3, sq);
      pto_host_tensor_init(&h[1], g_pa_kc, PTO_DTYPE_BF16, 4, skv);
      pto_host_tensor_init(&h[2], g_pa_vc, PTO_DTYPE_BF16, 4, skv);
      pto_host_tensor_init(&h[3], g_pa_table, PTO_DTYPE_I32, 2, sbt);
      pto_host_tensor_init(&h[4], g_pa_lens, PTO_DTYPE_I32, 1, sl);
      pto_host_tensor_init(&h[5], out, PTO_DTYPE_F32, 3, sq);
      pto_arg args[7];
      for (int i = 0; i < 6; i++)
        args[i] = pto_arg_host(&h[i]);
      args[6] = pto_arg_f32(1.0f);
      assert_pto_ok(pto_worker_run(r.w, r.p, args, 7));
      const float *want = cases[v].group > 1 ? want64 : want1;
      for (int i = 0; i < NOUT; i++)
        if (!(fabsf(out[i] - want[i]) <= 1e-3f + 1e-3f * fabsf(want[i])))
          fail_msg("%s: out[%d] = %g, expected %g", cases[v].src, i, out[i], want[i]);
      const pto_task_record *t;
      size_t n;
      assert_pto_ok(pto_worker_last_launch_tasks(r.w, &t, &n));
      assert_true(n > 0);
      for (size_t i = 0; i < n; i++)
        assert_int_equal(t[i].core_type, types[t[i].kernel_id]);
      simpler_close(&r);
    }
  tsig_free(&s);
  tu_rmtree(dir);
  free(dir);
}

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }
static int32_t g_counts[2];
static void count_entry(const pto_orch_args *a) {
  (void)a;
  g_counts[0] = g_api->core_count(g_api->ctx, PTO_CORE_AIV);
  g_counts[1] = g_api->core_count(g_api->ctx, PTO_CORE_AIC);
}

/* ncores splits like the chip's clusters, a third AIC; explicit counts must agree with it. */
static void test_worker_core_types_default_to_one_cube_per_two_vector_cores(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "counts");
  pto_program *p = tprogram(&s, bind_api, count_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  const int ncores[] = {1, 2, 3, 6, 7}, aic[] = {1, 1, 1, 2, 2}, aiv[] = {1, 1, 2, 4, 5};
  for (int k = 0; k < 5; k++) {
    pto_run_config cfg;
    pto_run_config_init(&cfg);
    cfg.ncores = ncores[k];
    pto_worker *w;
    assert_pto_ok(pto_worker_open(&cfg, &w));
    assert_pto_ok(pto_worker_run(w, p, NULL, 0));
    assert_int_equal(g_counts[PTO_CORE_AIC], aic[k]);
    assert_int_equal(g_counts[PTO_CORE_AIV], aiv[k]);
    assert_int_equal(pto_worker_core_count(w), aic[k] + aiv[k]);
    pto_worker_close(w);
  }
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 5;
  cfg.aic_cores = 1;
  cfg.aiv_cores = 2;
  pto_worker *w;
  assert_status_contains(pto_worker_open(&cfg, &w),
                         "ncores 5 differs from aic_cores 1 + aiv_cores 2");
  cfg.ncores = 0;
  cfg.aiv_cores = 0;
  assert_status_contains(pto_worker_open(&cfg, &w), "at least one core of each type");
  pto_program_release(p);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The clock (CLOCK_MONOTONIC, the spans' clock) just before and just after the entry calls
 * rt_orchestration_done; the entry returns only once the clock has moved past the second. */
static uint64_t g_before_done, g_after_done;

static void done_then_wait_entry(const pto_orch_args *a) {
  (void)a;
  g_before_done = mono_ns();
  g_api->orchestration_done(g_api->ctx);
  g_after_done = mono_ns();
  while (mono_ns() <= g_after_done) /* one tick: returning is later than the call, on the clock */
    sched_yield();
}

/* rt_orchestration_done ends the orchestration's span where it is called: the span ends between
 * the clock readings around the call, and the launch (which ends after the entry returns) later.
 * Ordered by the clock readings, not by a sleep's length. */
static void test_orchestration_done_ends_the_orch_span(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "done");
  pto_program *p = tprogram(&s, bind_api, done_then_wait_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  pto_worker *w = topen(2, 0, 0);
  assert_pto_ok(pto_worker_run(w, p, NULL, 0));
  pto_launch_record r;
  assert_pto_ok(pto_worker_last_launch(w, &r));
  int found = 0;
  for (int i = 0; i < r.nspans; i++) {
    uint64_t end = r.spans[i].ts_ns + r.spans[i].dur_ns;
    if (strcmp(r.spans[i].name, "chip.run.runner_run.device_wall.orch") == 0) {
      assert_true(end >= g_before_done && end <= g_after_done);
      found = 1;
    }
    if (strcmp(r.spans[i].name, "chip.run") == 0) assert_true(end > g_after_done);
  }
  assert_true(found);
  pto_worker_close(w);
  pto_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_orchestration_done_ends_the_orch_span),
      cmocka_unit_test(test_early_resolve_stages_the_consumer),
      cmocka_unit_test(test_dump_writes_the_marked_arguments),
      cmocka_unit_test(test_worker_core_types_default_to_one_cube_per_two_vector_cores),
      cmocka_unit_test(test_deps_manual_runs_with_both_compilers),
      cmocka_unit_test(test_mixed_spmd_runs_with_both_compilers),
      cmocka_unit_test(test_log_lines_follow_pto_log_level),
      cmocka_unit_test(test_views_run_with_both_compilers),
      cmocka_unit_test(test_scratch_arena_asserts_with_both_compilers),
      cmocka_unit_test(test_slices_with_both_compilers),
      cmocka_unit_test(test_simpler_vector_example),
      cmocka_unit_test(test_simpler_scalar_data),
      cmocka_unit_test(test_simpler_l2_vector_add),
      cmocka_unit_test(test_simpler_bgemm),
      cmocka_unit_test(test_simpler_paged_attention),
      cmocka_unit_test(test_simpler_prefetch_async),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
