/* Allocation-failure injection through base's allocator (pto_malloc, issue #10 class 11): for
 * every n, the n-th allocation of parse, verify, compile, load, worker open, register and launch
 * of an example fails, and the result is a clean OUT_OF_MEMORY status (never a crash, never a
 * wrong answer) with nothing leaked.
 *
 * Each stage is injected on its own, so over all stages that is every allocation of the
 * pipeline. The reference run builds a work dir once with the real C and C++ compilers. The
 * iterations of parse, verify and compile stop after the compile, which writes into a scratch dir
 * with stand-ins for the compilers that copy the reference's binaries (they check our code's
 * unwinding, not the tools' output); a tolerated failure there must give the reference's
 * manifest. The iterations of the later stages start at load, from the reference's work dir, and
 * run to the launch; a tolerated failure there must give the reference's answer.
 *
 * Leaks: under LeakSanitizer every failed n is followed by a leak check, so a leak names its n;
 * without it, only a status and the result are checked (test_oom counts blocks in plain builds).
 *
 * The normal suite runs every n on examples/runtime/add_scalar.ptir; PTO_ALLOC_FAIL_ALL=1 (the
 * slow test alloc_fail_all) runs it on several examples. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc_test.h"
#include "pto/base.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "testutil.h"

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

/* LeakSanitizer's entry point when the test runs under it (weak: absent in plain builds). */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

enum {
  STAGE_PARSE,
  STAGE_VERIFY,
  STAGE_COMPILE,
  STAGE_LOAD,
  STAGE_OPEN,
  STAGE_REGISTER,
  STAGE_LAUNCH,
  NSTAGES
};
static const char *const k_stage[NSTAGES] = {"parse",       "verify",   "compile", "load",
                                             "worker open", "register", "launch"};

typedef struct example {
  const char *file;
  int64_t sym_value; /* every dynamic dimension */
} example;

/* Everything one run of the pipeline made, torn down by run_free. */
typedef struct run {
  char *text;
  pto_ir_program *ir;
  char *dir; /* the work dir this run compiled into */
  pto_program *prog;
  pto_worker *w;
  pto_handle *h;
  pto_device_tensor *t[16];
  int nt;
  float out0; /* first element of the first output, for the result check */
  int has_out;
} run;

static void run_free(run *r) {
  for (int i = 0; i < r->nt; i++)
    if (r->t[i]) pto_status_free(pto_worker_free_tensor(r->w, r->t[i]));
  r->nt = 0;
  pto_worker_close(r->w);
  r->w = NULL;
  r->h = NULL;
  pto_program_release(r->prog);
  r->prog = NULL;
  pto_ir_program_destroy(r->ir);
  r->ir = NULL;
}

static int64_t dim_of(const pto_sig_dim *d, int64_t sym_value) {
  return d->sym >= 0 ? sym_value : d->value;
}

/* Allocates, fills and binds every parameter, launches once and reads the first output back. */
static pto_status launch(run *r, const example *ex) {
  const pto_signature *sig = pto_program_signature(r->prog);
  pto_arg args[16];
  pto_status s = PTO_OK;
  int out_tensor = -1;
  for (int i = 0; i < sig->nparams && !s; i++) {
    const pto_sig_param *p = &sig->params[i];
    if (!p->is_tensor) {
      pto_scalar v = p->bind == PTO_BIND_LITERAL ? p->value : (pto_scalar){0};
      if (p->bind != PTO_BIND_LITERAL) {
        v.dtype = p->dtype;
        if (pto_dtype_is_float(p->dtype))
          v.f = 0.5;
        else
          v.i = 1;
      }
      args[i] = pto_arg_scalar(v);
      continue;
    }
    int64_t shape[PTO_MAX_RANK];
    int64_t numel = 1;
    for (int d = 0; d < p->rank; d++)
      numel *= shape[d] = dim_of(&p->dims[d], ex->sym_value);
    pto_device_tensor *t = NULL;
    s = pto_worker_alloc_tensor(r->w, p->rank, shape, p->dtype, NULL, &t);
    if (s) break;
    r->t[r->nt++] = t;
    if (p->dir != PTO_DIR_OUT && p->dtype == PTO_DTYPE_F32) {
      float *host = malloc((size_t)numel * sizeof *host);
      if (!host) return pto_status_make(PTO_STATUS_INTERNAL, "the test ran out of memory");
      for (int64_t k = 0; k < numel; k++)
        host[k] = 0.25f * (float)(k % 7);
      s = pto_worker_copy_to_tensor(r->w, t, 0, host, numel);
      free(host);
    }
    if (p->dir != PTO_DIR_IN && out_tensor < 0) out_tensor = r->nt - 1;
    args[i] = pto_arg_device(t);
  }
  if (!s) s = pto_handle_call(r->h, args, (size_t)sig->nparams);
  if (!s && out_tensor >= 0 && pto_device_tensor_dtype(r->t[out_tensor]) == PTO_DTYPE_F32) {
    s = pto_worker_copy_from_tensor(r->w, &r->out0, r->t[out_tensor], 0, 1);
    r->has_out = !s;
  }
  return s;
}

/* Runs the stages 0..last of ex, with injection armed for stage `inject` only (-1: never). A
 * stage after compile starts at load, from the work dir dir that the reference run built (parse,
 * verify and compile without injection would only rebuild the same files, and the compile runs
 * the C and C++ compilers: about a second an n, most of the sweep's time). */
static pto_status pipeline(const example *ex, const char *dir, int last, int inject, long n,
                           run *r) {
  memset(r, 0, sizeof *r);
  pto_status s = PTO_OK;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", PTO_SOURCE_DIR, ex->file);
  for (int st = inject > STAGE_COMPILE ? STAGE_LOAD : 0; st <= last && !s; st++) {
    if (st == inject) pto_alloc_fail_at(n, 0);
    switch (st) {
    case STAGE_PARSE: s = pto_ir_parse_file(path, &r->ir); break;
    case STAGE_VERIFY: s = pto_ir_verify(r->ir); break;
    case STAGE_COMPILE: {
      pto_compile_options opt;
      pto_compile_options_init(&opt);
      opt.opt_level = 0;
      opt.entry = "main";
      tu_rmtree(dir);
      s = pto_compile_to_dir(r->ir, &opt, dir, 0);
      break;
    }
    case STAGE_LOAD: s = pto_program_load_dir(dir, &r->prog); break;
    case STAGE_OPEN: {
      pto_run_config cfg;
      pto_run_config_init(&cfg);
      cfg.ncores = 2;
      cfg.device_memory_bytes = 16 << 20;
      s = pto_worker_open(&cfg, &r->w);
      break;
    }
    case STAGE_REGISTER: s = pto_worker_register(r->w, r->prog, &r->h); break;
    case STAGE_LAUNCH: s = launch(r, ex); break;
    }
    if (st == inject) pto_alloc_fail_at(-1, 0);
  }
  return s;
}

/* A stand-in for the C or C++ compiler: copies src to the path after -o. */
static void write_fake_tool(const char *path, const char *src) {
  char text[8192];
  snprintf(text, sizeof text,
           "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then exec cp '%s' \"$2\"; fi\n"
           "  shift\ndone\nexit 1\n",
           src);
  assert_int_equal(tu_write_file(path, text), 0);
  assert_int_equal(chmod(path, 0755), 0);
}

static void with_tools(const char *cc, const char *cxx) {
  if (cc) {
    setenv("PTO_CC", cc, 1);
    setenv("PTO_CXX", cxx, 1);
  } else {
    unsetenv("PTO_CC");
    unsetenv("PTO_CXX");
  }
}

static void every_failed_allocation(const example *ex) {
  char *tmp = tu_mkdtemp("alloc-fail");
  char built[4096], scratch[4096];
  snprintf(built, sizeof built, "%s/built", tmp);
  snprintf(scratch, sizeof scratch, "%s/scratch", tmp);
  const char *cc0 = getenv("PTO_CC"), *cxx0 = getenv("PTO_CXX");
  char *cc_saved = cc0 ? strdup(cc0) : NULL, *cxx_saved = cxx0 ? strdup(cxx0) : NULL;

  /* The reference run: every stage with injection off, the work dir built by the real tools. */
  run ref;
  pto_status s = pipeline(ex, built, STAGE_LAUNCH, -1, -1, &ref);
  if (s) {
    print_error("%s: the run without injection fails: %s\n", ex->file, pto_status_message(s));
    fail();
  }
  float want = ref.out0;
  int has_out = ref.has_out;
  run_free(&ref);
  /* The compile stage's tools: copies of what the real ones built, so each n costs two cp. */
  char fake_cc[4096], fake_cxx[4096], src[4096];
  snprintf(fake_cc, sizeof fake_cc, "%s/cc", tmp);
  snprintf(fake_cxx, sizeof fake_cxx, "%s/cxx", tmp);
  snprintf(src, sizeof src, "%s/kernels/kernels.so", built);
  write_fake_tool(fake_cc, src);
  snprintf(src, sizeof src, "%s/orchestration/main.so", built);
  write_fake_tool(fake_cxx, src);

  long total = 0, noom = 0;
  const char *from = getenv("PTO_ALLOC_FAIL_FROM"); /* a stage number, to debug a late one */
  for (int stage = from ? atoi(from) : 0; stage < NSTAGES; stage++) {
    long n;
    for (n = 0;; n++) {
      run r;
      const char *dir = built;
      /* Up to compile, a run stops after the compile, into scratch with the fake tools. */
      int to_compile = stage <= STAGE_COMPILE;
      if (to_compile) {
        with_tools(fake_cc, fake_cxx);
        dir = scratch;
      }
      s = pipeline(ex, dir, to_compile ? STAGE_COMPILE : STAGE_LAUNCH, stage, n, &r);
      if (to_compile) with_tools(cc_saved, cxx_saved);
      long failed = pto_alloc_failures();
      if (getenv("PTO_OOM_VERBOSE"))
        fprintf(stderr, "%s %s n=%ld: %s\n", ex->file, k_stage[stage], n,
                s ? pto_status_message(s) : "ok");
      if (failed == 0) { /* n is past the stage's last allocation: a normal run */
        if (s) {
          print_error("%s: %s without a failed allocation fails: %s\n", ex->file, k_stage[stage],
                      pto_status_message(s));
          fail();
        }
        run_free(&r);
        break;
      }
      if (s) {
        if (pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) {
          print_error("%s: failing allocation %ld of %s gives a status that is not "
                      "OUT_OF_MEMORY: %s\n",
                      ex->file, n, k_stage[stage], pto_status_message(s));
          fail();
        }
        noom++;
      } else if (to_compile) {
        /* A tolerated failure must not change what was built. The manifest names every file the
         * compile wrote with its hash (sources, objects, the build ids of the copied .so files),
         * so the same manifest means the same program runs, with the same answer. */
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s/manifest.json", built);
        snprintf(b, sizeof b, "%s/manifest.json", scratch);
        char *ma = tu_read_file(a, NULL), *mb = tu_read_file(b, NULL);
        int same = ma && mb && strcmp(ma, mb) == 0;
        free(ma);
        free(mb);
        if (!same) {
          print_error("%s: failing allocation %ld of compile succeeds with a different manifest\n",
                      ex->file, n);
          fail();
        }
      } else if (r.has_out != has_out ||
                 (has_out && !(r.out0 == want || (isnan(want) && isnan(r.out0))))) {
        /* A tolerated failure (an optional cache, say) must not change the answer. */
        print_error("%s: failing allocation %ld of %s succeeds with a different result "
                    "(%g, want %g)\n",
                    ex->file, n, k_stage[stage], (double)r.out0, (double)want);
        fail();
      }
      pto_status_free(s);
      run_free(&r);
      if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
        print_error("%s: failing allocation %ld of %s leaks (report above)\n", ex->file, n,
                    k_stage[stage]);
        fail();
      }
    }
    print_message("%s: %s: failed each of its %ld allocations in turn\n", ex->file, k_stage[stage],
                  n);
    total += n;
  }
  /* Not vacuous: most failures surface as the status (the rest were tolerated with the same
   * result, checked above). */
  assert_true(total > 50 || from);
  assert_true(noom * 2 > total);
  print_message("%s: %ld allocations failed in turn, %ld gave OUT_OF_MEMORY\n", ex->file, total,
                noom);
  free(cc_saved);
  free(cxx_saved);
  tu_rmtree(tmp);
  free(tmp);
}

static void test_pipeline_survives_every_failed_allocation(void **state) {
  (void)state;
  static const example reduced[] = {{"examples/runtime/add_scalar.ptir", 0}};
  static const example all[] = {
      {"examples/runtime/add_scalar.ptir", 0},
      {"examples/add.ptir", 64},
      {"examples/scale_rows.ptir", 64},
      {"examples/softmax.ptir", 64},
      {"examples/incore.ptir", 64},
      {"examples/chain.ptir", 64},
      {"examples/matmul.ptir", 64},
      {"examples/layernorm.ptir", 64},
  };
  const char *e = getenv("PTO_ALLOC_FAIL_ALL");
  int every = e && *e == '1';
  /* PTO_ALLOC_FAIL_EXAMPLE=FILE: that example of the list alone (CTest runs one test per
   * example, alloc_fail_all_<name>, so that the sweeps run side by side under -j). */
  const char *only = getenv("PTO_ALLOC_FAIL_EXAMPLE");
  const example *list = every ? all : reduced;
  size_t n = every ? sizeof all / sizeof *all : 1;
  int ran = 0;
  for (size_t i = 0; i < n; i++) {
    if (only && *only && strcmp(only, list[i].file) != 0) continue;
    every_failed_allocation(&list[i]);
    ran++;
  }
  if (!ran) fail_msg("PTO_ALLOC_FAIL_EXAMPLE=%s is not in the list of examples", only);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipeline_survives_every_failed_allocation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
