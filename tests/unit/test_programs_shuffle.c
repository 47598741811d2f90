/* Compiled programs whose results depend on task order (diamonds, write-after-read on a shared
 * buffer, loop-carried and scoped intermediates, tensor.read, inout chains) run through the real
 * emitter, kernel lowering and runtime with the shuffle test mode on — ready tasks start in a
 * random order — for several seeds and core counts, and every output must equal the reference
 * interpreter's. A missing dependency edge shows up as a mismatch for some seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "testutil.h"

typedef struct prog_case {
  const char *file;    /* relative to the source dir */
  const char *dims;    /* "M=40 N=3": dynamic dims of the inputs */
  const char *scalars; /* "a=2 c=1": runtime scalars */
} prog_case;

static const prog_case k_cases[] = {
    {"tests/programs/diamond.ptir", "M=40", ""},
    {"tests/programs/war_shared.ptir", "M=20", ""},
    {"tests/programs/create_scopes.ptir", "M=40", ""},
    {"tests/programs/create_escape.ptir", "M=24", "c=1"},
    {"tests/programs/tensor_read_control.ptir", "", "a=-1"},
    {"tests/programs/incore_dirs.ptir", "M=40", "a=2"},
    {"tests/programs/orch_if.ptir", "M=40", "mode=1"},
    {"tests/programs/loop_negative_step.ptir", "M=40", "lo=4 hi=-1 step=-1"},
    {"tests/programs/slice_edges.ptir", "M=37 N=70", ""},
    {"examples/runtime/kv_decode.ptir", "", "pos=5"},
    {"examples/runtime/mlp.ptir", "B=37", ""},
    {"examples/chain.ptir", "M=100", "alpha=0.5"},
};

/* The value of NAME in a "K=V K=V" list, or NULL. */
static const char *lookup(const char *list, const char *name, char *buf, size_t n) {
  size_t len = strlen(name);
  for (const char *p = list; p && *p;) {
    while (*p == ' ')
      p++;
    if (!strncmp(p, name, len) && p[len] == '=') {
      const char *v = p + len + 1;
      size_t k = strcspn(v, " ");
      snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), v);
      return buf;
    }
    p += strcspn(p, " ");
  }
  return NULL;
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Random inputs: floats in [-1, 1), integers in [-8, 8]. */
static void fill(void *data, pto_dtype dt, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_rand(&s);
    if (dt == PTO_DTYPE_F32)
      ((float *)data)[i] = (float)((double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    else if (dt == PTO_DTYPE_I32)
      ((int32_t *)data)[i] = (int32_t)(r % 17) - 8;
    else
      fail_msg("test inputs of dtype %s are not supported", pto_dtype_name(dt));
  }
}

typedef struct bound {
  pto_host_tensor run, ref; /* the same inputs: one copy for the runtime, one for the reference */
  size_t nbytes;
  pto_scalar scalar;
} bound;

static void bind_params(const prog_case *c, const pto_signature *sig, bound *b) {
  for (int j = 0; j < sig->nparams; j++) {
    const pto_sig_param *p = &sig->params[j];
    char buf[64];
    if (!p->is_tensor) {
      b[j].scalar = p->value;
      b[j].scalar.dtype = p->dtype;
      if (p->bind != PTO_BIND_RUNTIME) continue; /* specialized: its slot carries its value */
      const char *v = lookup(c->scalars, p->name, buf, sizeof buf);
      if (!v) fail_msg("%s: no value for runtime scalar '%s'", c->file, p->name);
      if (pto_dtype_is_float(p->dtype))
        b[j].scalar.f = strtod(v, NULL);
      else
        b[j].scalar.i = strtoll(v, NULL, 10);
      continue;
    }
    int64_t shape[PTO_MAX_RANK];
    for (int d = 0; d < p->rank; d++) {
      if (p->dims[d].sym < 0) {
        shape[d] = p->dims[d].value;
        continue;
      }
      const char *v = lookup(c->dims, sig->syms[p->dims[d].sym], buf, sizeof buf);
      if (!v) fail_msg("%s: no value for dim '%s'", c->file, sig->syms[p->dims[d].sym]);
      shape[d] = strtoll(v, NULL, 10);
    }
    int64_t n = 1;
    for (int d = 0; d < p->rank; d++)
      n *= shape[d];
    b[j].nbytes = (size_t)n * pto_dtype_size(p->dtype);
    void *run = calloc(1, b[j].nbytes + 1), *ref = calloc(1, b[j].nbytes + 1);
    assert_non_null(run);
    assert_non_null(ref);
    if (p->dir != PTO_DIR_OUT) fill(run, p->dtype, n, (uint64_t)j + 1);
    memcpy(ref, run, b[j].nbytes);
    pto_host_tensor_init(&b[j].run, run, p->dtype, p->rank, shape);
    pto_host_tensor_init(&b[j].ref, ref, p->dtype, p->rank, shape);
  }
}

static void run_reference(const prog_case *c, pto_ir_program *ir, const pto_signature *sig,
                          bound *b) {
  pto_ir_func *entry = NULL;
  assert_pto_ok(pto_ir_program_entry(ir, sig->entry, &entry));
  pto_ir_program *spec = NULL;
  assert_pto_ok(pto_ir_specialize(ir, entry, sig, &spec));
  entry = pto_ir_program_find_func(spec, sig->entry);
  pto_ir_interp_arg *args = calloc((size_t)sig->nparams + 1, sizeof *args);
  assert_non_null(args);
  for (int j = 0; j < sig->nparams; j++) {
    args[j].is_tensor = sig->params[j].is_tensor;
    if (args[j].is_tensor)
      args[j].tensor = b[j].ref;
    else
      args[j].scalar = b[j].scalar;
  }
  pto_status s = pto_ir_interp_run(spec, entry, args, sig->nparams);
  if (s) fail_msg("%s: reference interpreter: %s", c->file, pto_status_message(s));
  free(args);
  pto_ir_program_destroy(spec);
}

/* Elements of an f32 or i32 output that differ beyond f32 rounding. */
static long count_mismatches(const pto_host_tensor *got, const pto_host_tensor *want,
                             size_t nbytes) {
  long bad = 0;
  if (got->dtype == PTO_DTYPE_F32) {
    const float *g = got->data, *w = want->data;
    for (size_t i = 0; i < nbytes / 4; i++)
      if (!(fabsf(g[i] - w[i]) <= 1e-5f * fabsf(w[i]) + 1e-5f)) bad++;
  } else if (memcmp(got->data, want->data, nbytes) != 0) {
    bad = 1;
  }
  return bad;
}

static void run_case(const prog_case *c) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", PTO_SOURCE_DIR, c->file);
  pto_ir_program *ir = NULL;
  assert_pto_ok(pto_ir_parse_file(path, &ir));
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_program *prog = NULL;
  assert_pto_ok(pto_compile(ir, &opt, &prog));
  const pto_signature *sig = pto_program_signature(prog);
  bound *b = calloc((size_t)sig->nparams + 1, sizeof *b);
  assert_non_null(b);
  bind_params(c, sig, b);
  run_reference(c, ir, sig, b);

  pto_arg *args = calloc((size_t)sig->nparams + 1, sizeof *args);
  assert_non_null(args);
  for (int j = 0; j < sig->nparams; j++)
    args[j] = sig->params[j].is_tensor ? pto_arg_host(&b[j].run) : pto_arg_scalar(b[j].scalar);
  /* Inputs as they were before the launch: inout ones are restored before each run. */
  void **inputs = calloc((size_t)sig->nparams + 1, sizeof *inputs);
  assert_non_null(inputs);
  for (int j = 0; j < sig->nparams; j++)
    if (sig->params[j].is_tensor) {
      inputs[j] = malloc(b[j].nbytes + 1);
      assert_non_null(inputs[j]);
      memcpy(inputs[j], b[j].run.data, b[j].nbytes);
    }

  const int ncores[] = {1, 2, 4};
  for (int k = 0; k < 3; k++)
    for (uint64_t seed = 1; seed <= 6; seed++) {
      pto_run_config cfg;
      pto_run_config_init(&cfg);
      cfg.ncores = ncores[k];
      cfg.shuffle = 1;
      cfg.shuffle_seed = seed;
      pto_worker *w = NULL;
      assert_pto_ok(pto_worker_open(&cfg, &w));
      for (int j = 0; j < sig->nparams; j++)
        if (sig->params[j].is_tensor) memcpy(b[j].run.data, inputs[j], b[j].nbytes);
      assert_pto_ok(pto_worker_run(w, prog, args, (size_t)sig->nparams));
      pto_worker_close(w);
      for (int j = 0; j < sig->nparams; j++) {
        const pto_sig_param *p = &sig->params[j];
        if (!p->is_tensor || p->dir == PTO_DIR_IN) continue;
        long bad = count_mismatches(&b[j].run, &b[j].ref, b[j].nbytes);
        if (bad)
          fail_msg("%s: output '%s' differs from the reference in %ld elements (%d cores, "
                   "shuffle seed %llu)",
                   c->file, p->name, bad, ncores[k], (unsigned long long)seed);
      }
    }

  for (int j = 0; j < sig->nparams; j++) {
    free(inputs[j]);
    if (sig->params[j].is_tensor) {
      free(b[j].run.data);
      free(b[j].ref.data);
    }
  }
  free(inputs);
  free(args);
  free(b);
  pto_program_release(prog);
  pto_ir_program_destroy(ir);
}

static void test_programs_equal_reference_under_shuffle(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
    run_case(&k_cases[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_programs_equal_reference_under_shuffle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
