/* Kernel lowering (compiler/lower.c): kernels compiled through LLVM, linked into a shared object,
 * called through the kernel ABI and compared with the reference interpreter on the same inputs.
 *
 * Each group of tests builds one program holding every kernel of the group, lowers each kernel to
 * its own .ll/.o, links them (plus the ABI object) with `cc -shared` and dlopens the result. A
 * test then runs one kernel natively and through pto_ir_interp_run on identical inputs from a
 * fixed seed and compares every output tensor: bit for bit for every op (both sides compute the
 * same formulas in the same order, transcendental ones through the same libm), NaNs equal to NaNs.
 * Test names say the op, the dtype and the tile shape. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "pto/ir.h"
#include "pto/kernel_abi.h"
#include "pto/mathf.h"
#include "testutil.h"

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The steps of a row softmax from the loaded tile %t to %p, each line indented by `ind`. */
#define SOFTMAX_STEPS(ind)                                                                         \
  ind "%m = tile.row_max(%t)\n" ind "%d = tile.row_expand_sub(%t, %m)\n" ind                       \
      "%e = tile.exp(%d)\n" ind "%s = tile.row_sum(%e)\n" ind "%p = tile.row_expand_div(%e, %s)\n"

/* ---- a built library of kernels ------------------------------------------------------------ */

typedef struct tl_lib {
  char *dir;
  void *dl;
  pto_ir_program *p;
  char **names;      /* kernel names */
  uint64_t *scratch; /* per kernel */
  int n;
} tl_lib;

static pto_ir_program *parse_text(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "t.ptir", &p);
  if (s) {
    print_error("parse failed: %s\n--- text ---\n%s\n", pto_status_message(s), text);
    pto_status_free(s);
    return NULL;
  }
  return p;
}

static void lib_free(tl_lib *L) {
  if (!L) return;
  if (L->dl) dlclose(L->dl);
  if (L->dir) tu_rmtree(L->dir);
  free(L->dir);
  for (int i = 0; i < L->n; i++)
    free(L->names[i]);
  free(L->names);
  free(L->scratch);
  if (L->p) pto_ir_program_destroy(L->p);
  free(L);
}

/* One kernel to lower, taken by the worker threads of lib_build_ex in index order. */
typedef struct lower_work {
  const pto_ir_program *p;
  const pto_ir_func **funcs;
  char **objs, **lls;
  uint64_t *scratch;
  pto_status *st;
  int n, next, opt, via_ll;
  pthread_mutex_t mu;
} lower_work;

static void *lower_worker(void *arg) {
  lower_work *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    int i = w->next++;
    pthread_mutex_unlock(&w->mu);
    if (i >= w->n) return NULL;
    pto_status s =
        pto__lower_kernel(w->p, w->funcs[i], w->opt, w->lls[i], w->objs[i], &w->scratch[i]);
    if (!s && w->via_ll) {
      remove(w->objs[i]);
      s = pto__compile_ll(w->lls[i], w->opt, w->objs[i]);
    }
    w->st[i] = s;
  }
}

/* Parses text, lowers every kernel at opt_level (on a few threads: lowering is thread-safe) and
 * links them into one shared object. via_ll: each object is rebuilt from its .ll with
 * pto__compile_ll (the hand-edit path). */
static tl_lib *lib_build_ex(const char *text, int opt_level, int via_ll) {
  tl_lib *L = calloc(1, sizeof *L);
  L->p = parse_text(text);
  if (!L->p) {
    lib_free(L);
    return NULL;
  }
  L->dir = tu_mkdtemp("lower");
  int nf = L->p->nfuncs;
  L->names = calloc((size_t)nf + 1, sizeof *L->names);
  L->scratch = calloc((size_t)nf + 1, sizeof *L->scratch);
  lower_work w;
  memset(&w, 0, sizeof w);
  w.p = L->p;
  w.funcs = calloc((size_t)nf + 1, sizeof *w.funcs);
  w.objs = calloc((size_t)nf + 1, sizeof *w.objs);
  w.lls = calloc((size_t)nf + 1, sizeof *w.lls);
  w.st = calloc((size_t)nf + 1, sizeof *w.st);
  w.scratch = L->scratch;
  w.opt = opt_level;
  w.via_ll = via_ll;
  pthread_mutex_init(&w.mu, NULL);
  size_t cap = 4096 + (size_t)nf * 512;
  char *cmd = malloc(cap);
  int n = snprintf(cmd, cap, "cc -shared -o '%s/k.so'", L->dir);
  for (int i = 0; i < nf; i++) {
    const pto_ir_func *f = L->p->funcs[i];
    if (f->kind != PTO_FUNC_KERNEL) continue;
    w.funcs[w.n] = f;
    w.objs[w.n] = dupf("%s/%s.o", L->dir, f->name);
    w.lls[w.n] = dupf("%s/%s.ll", L->dir, f->name);
    L->names[w.n] = strdup(f->name);
    n += snprintf(cmd + n, cap - (size_t)n, " '%s'", w.objs[w.n]);
    w.n++;
  }
  L->n = w.n;
  pthread_t th[4];
  int nth = w.n < 4 ? (w.n > 0 ? w.n : 1) : 4;
  for (int t = 0; t < nth; t++)
    pthread_create(&th[t], NULL, lower_worker, &w);
  for (int t = 0; t < nth; t++)
    pthread_join(th[t], NULL);
  pthread_mutex_destroy(&w.mu);
  int bad = 0;
  for (int i = 0; i < w.n; i++) {
    if (w.st[i]) {
      if (!bad)
        print_error("lowering @%s failed: %s\n", w.funcs[i]->name, pto_status_message(w.st[i]));
      pto_status_free(w.st[i]);
      bad = 1;
    }
    free(w.objs[i]);
    free(w.lls[i]);
  }
  free(w.funcs);
  free(w.objs);
  free(w.lls);
  free(w.st);
  char path[1024];
  snprintf(path, sizeof path, "%s/abi.o", L->dir);
  pto_status s = bad ? PTO_OK : pto__emit_abi_object(path);
  if (bad || s) {
    if (s) print_error("abi object: %s\n", pto_status_message(s));
    pto_status_free(s);
    free(cmd);
    lib_free(L);
    return NULL;
  }
  snprintf(cmd + n, cap - (size_t)n, " '%s' -lm", path);
  char *out = NULL;
  int rc = tu_run(&out, "%s", cmd);
  free(cmd);
  if (rc != 0) {
    print_error("link failed: %s\n", out ? out : "?");
    free(out);
    lib_free(L);
    return NULL;
  }
  free(out);
  snprintf(path, sizeof path, "%s/k.so", L->dir);
  L->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!L->dl) {
    print_error("dlopen: %s\n", dlerror());
    lib_free(L);
    return NULL;
  }
  return L;
}

static tl_lib *lib_build(const char *text, int opt_level) {
  return lib_build_ex(text, opt_level, 0);
}

static pto_kernel_fn lib_fn(tl_lib *L, const char *name, uint64_t *out_scratch) {
  char sym[256];
  snprintf(sym, sizeof sym, "pto_kernel_%s", name);
  void *f = dlsym(L->dl, sym);
  for (int i = 0; i < L->n; i++)
    if (strcmp(L->names[i], name) == 0 && out_scratch) *out_scratch = L->scratch[i];
  if (!f) print_error("no symbol %s\n", sym);
  pto_kernel_fn fn;
  memcpy(&fn, &f, sizeof fn);
  return fn;
}

/* ---- calling a kernel --------------------------------------------------------------------- */

/* Runs kernel name natively: tensors and scalars in parameter order as for the interpreter.
 * scratch_override: 0 = the kernel's footprint; else that many bytes. */
/* pto_core_ctx.flags of every kernel run_native runs (PTO_CORE_STREAM_STORES: the streamed
 * runs' non-temporal path). */
static int32_t g_run_flags;

static int32_t run_native(tl_lib *L, const char *name, const pto_ir_interp_arg *args, int nargs,
                          uint64_t scratch_override, pto_core_ctx *out_ctx) {
  uint64_t scratch = 0;
  pto_kernel_fn fn = lib_fn(L, name, &scratch);
  assert_non_null(fn);
  pto_kernel_tensor tens[16];
  uint64_t slots[16];
  int nt = 0, ns = 0;
  for (int i = 0; i < nargs; i++) {
    if (args[i].is_tensor) {
      const pto_host_tensor *h = &args[i].tensor;
      pto_kernel_tensor *k = &tens[nt++];
      memset(k, 0, sizeof *k);
      k->data = h->data;
      k->rank = h->rank;
      k->dtype = (int32_t)h->dtype;
      for (int d = 0; d < h->rank; d++) {
        k->shape[d] = h->shape[d];
        k->stride[d] = h->strides[d];
      }
    } else {
      slots[ns++] = pto_scalar_to_slot(args[i].scalar);
    }
  }
  if (scratch_override) scratch = scratch_override;
  size_t bytes = (size_t)((scratch + 63) / 64 * 64);
  void *arena = aligned_alloc(64, bytes ? bytes : 64);
  assert_non_null(arena);
  memset(arena, 0xcd, bytes ? bytes : 64); /* stale garbage: kernels must not read it */
  pto_core_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.scratch = arena;
  ctx.scratch_size = scratch;
  ctx.ncores = 1;
  ctx.flags = g_run_flags;
  int32_t rc = fn(tens, slots, &ctx);
  free(arena);
  if (out_ctx) *out_ctx = ctx;
  return rc;
}

/* Whether kernel k's IR as lowered (L->dir/k.ll) holds needle. */
static int ll_contains(const tl_lib *L, const char *k, const char *needle) {
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/%s.ll", L->dir, k);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  int found = strstr(text, needle) != NULL;
  free(text);
  return found;
}

/* How many lines of kernel k's IR as lowered hold both a and b. */
static int ll_count_lines(const tl_lib *L, const char *k, const char *a, const char *b) {
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/%s.ll", L->dir, k);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  int n = 0;
  for (char *line = text, *end; *line; line = end) {
    end = strchr(line, '\n');
    end = end ? end + 1 : line + strlen(line);
    char *nl = end[-1] == '\n' ? end - 1 : NULL;
    if (nl) *nl = 0;
    if (strstr(line, a) && strstr(line, b)) n++;
    if (nl) *nl = '\n';
  }
  free(text);
  return n;
}

/* ll_contains, saying which when it does not. */
static int ll_has(tl_lib *L, const char *k, const char *needle) {
  int found = ll_contains(L, k, needle);
  if (!found) print_error("@%s: no '%s' in its IR\n", k, needle);
  return found;
}

/* ---- data --------------------------------------------------------------------------------- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

/* Fill domains. */
/* D_SPECIAL: small integers (many ties), and among floats NaN, -0, +0 and infinities, with
 * the edge values of put_special half the time; D_SPECIAL_NZ the same without zeros. */
enum { D_ANY = 0, D_POS, D_NONZERO, D_WIDE, D_SMALLINT, D_WITHZERO, D_SPECIAL, D_SPECIAL_NZ };

static double rnd_real(int domain) {
  double u = (double)(rnd() >> 11) / 9007199254740992.0; /* [0,1) */
  switch (domain) {
  case D_POS: return 0.01 + u * 10.0;
  case D_WIDE: return (u - 0.5) * 600.0;
  case D_SMALLINT: return floor((u - 0.5) * 20.0);
  case D_SPECIAL: {
    static const double special[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY};
    uint64_t k = rnd() % 12;
    return k < 5 ? special[k] : floor((u - 0.5) * 8.0);
  }
  default: return (u - 0.5) * 16.0;
  }
}

static void put_elem(pto_dtype dt, void *base, int64_t i, double real, uint64_t bits) {
  char *p = (char *)base + (size_t)i * pto_dtype_size(dt);
  switch (dt) {
  case PTO_DTYPE_F16: {
    uint16_t h = pto_f32_to_f16((float)real);
    memcpy(p, &h, 2);
    break;
  }
  case PTO_DTYPE_BF16: {
    uint16_t h = pto_f32_to_bf16((float)real);
    memcpy(p, &h, 2);
    break;
  }
  case PTO_DTYPE_F32: {
    float f = (float)real;
    memcpy(p, &f, 4);
    break;
  }
  case PTO_DTYPE_F64: memcpy(p, &real, 8); break;
  default: memcpy(p, &bits, pto_dtype_size(dt)); break; /* little endian: low bytes */
  }
}

/* D_SPECIAL: the values the second set's edge rules are about, mixed with small numbers: NaN,
 * infinities, signed zeros, and for integers 0, +-1, the extremes and their neighbours. */
static void put_special(pto_dtype dt, void *base, int64_t i, uint64_t pick, int nonzero) {
  static const double reals[] = {NAN,  INFINITY, -INFINITY, -0.0, 0.0, 1.0,  -1.0,  2.5,
                                 -2.5, 0.5,      3.0,       -3.0, 7.0, 1e30, -1e-30};
  int w = (int)pto_dtype_size(dt) * 8;
  uint64_t top = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1, sign = UINT64_C(1) << (w - 1);
  uint64_t ints[] = {0,
                     1,
                     top,
                     sign,
                     sign - 1,
                     sign + 1,
                     2,
                     top - 1,
                     3,
                     5,
                     (uint64_t)w - 1,
                     (uint64_t)w,
                     (uint64_t)w + 1,
                     7,
                     top - 6};
  int n = (int)(sizeof reals / sizeof reals[0]);
  put_elem(dt, base, i, reals[pick % (uint64_t)n], ints[pick % (uint64_t)n]);
  if (nonzero && pick % (uint64_t)n == 0) put_elem(dt, base, i, 0.75, (uint64_t)-1);
}

static void fill(pto_dtype dt, void *base, int64_t n, int domain) {
  for (int64_t i = 0; i < n; i++) {
    if ((domain == D_SPECIAL || domain == D_SPECIAL_NZ) && (rnd() & 1)) {
      put_special(dt, base, i, rnd(), domain == D_SPECIAL_NZ);
      continue;
    }
    if (domain == D_SPECIAL_NZ) domain = D_NONZERO;
    double r = rnd_real(domain);
    uint64_t bits = rnd();
    if (domain == D_SMALLINT || domain == D_POS) bits = (uint64_t)(int64_t)floor(r);
    if (domain == D_SPECIAL) bits = (uint64_t)(int64_t)(isfinite(r) ? r : 3.0);
    if (domain == D_POS && bits == 0) bits = 1;
    if (domain == D_NONZERO || domain == D_WITHZERO) {
      if (pto_dtype_size(dt) < 8) bits &= (1ull << (8 * pto_dtype_size(dt))) - 1;
      if (bits == 0) bits = 3;
      if (r == 0) r = 0.5;
    }
    if (domain == D_WITHZERO && i == 5) bits = 0, r = 0;
    put_elem(dt, base, i, r, bits);
  }
}

/* Element equality: bits, or both NaN for floats. */
static int elem_equal(pto_dtype dt, const void *a, const void *b) {
  size_t sz = pto_dtype_size(dt);
  if (memcmp(a, b, sz) == 0) return 1;
  switch (dt) {
  case PTO_DTYPE_F16: {
    uint16_t x, y;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    return isnan(pto_f16_to_f32(x)) && isnan(pto_f16_to_f32(y));
  }
  case PTO_DTYPE_BF16: {
    uint16_t x, y;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    return isnan(pto_bf16_to_f32(x)) && isnan(pto_bf16_to_f32(y));
  }
  case PTO_DTYPE_F32: {
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return isnan(x) && isnan(y);
  }
  case PTO_DTYPE_F64: {
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return isnan(x) && isnan(y);
  }
  default: return 0;
  }
}

static double elem_as_double(pto_dtype dt, const void *p) {
  switch (dt) {
  case PTO_DTYPE_F16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return pto_f16_to_f32(x);
  }
  case PTO_DTYPE_BF16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return pto_bf16_to_f32(x);
  }
  case PTO_DTYPE_F32: {
    float x;
    memcpy(&x, p, 4);
    return x;
  }
  case PTO_DTYPE_F64: {
    double x;
    memcpy(&x, p, 8);
    return x;
  }
  default: {
    int64_t v = 0;
    memcpy(&v, p, pto_dtype_size(dt));
    return (double)v;
  }
  }
}

/* ---- differential runs ---------------------------------------------------------------------- */

/* Argument spec of a differential case. */
typedef struct ta_spec {
  int is_tensor;
  pto_dtype dt;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int64_t col_stride; /* >1: a strided view (every col_stride-th element of a wider buffer) */
  int domain;
  int out; /* written by the kernel: compared; 1 out (starts as a pattern), 2 inout */
  pto_scalar s;
} ta_spec;

typedef struct tcase {
  const char *group; /* which library */
  char name[96];
  char kname[96];
  char *text; /* the kernel's PTIR */
  ta_spec args[12];
  int nargs;
  int32_t expect_rc; /* 0, or a PTO_KERNEL_ERR_* the native run must return */
  /* optional hand-computed checks of the native outputs, beyond agreeing with the interpreter */
  void (*check)(const struct tcase *c, const pto_ir_interp_arg *nat);
} tcase;

static int64_t spec_numel(const ta_spec *a) {
  int64_t n = 1;
  for (int d = 0; d < a->rank; d++)
    n *= a->shape[d];
  return n;
}

/* Makes the native and interpreter copies of every argument; returns the buffers to free. */
static void make_args(const tcase *c, pto_ir_interp_arg *nat, pto_ir_interp_arg *ref, void **bufs,
                      int *nbufs) {
  *nbufs = 0;
  for (int i = 0; i < c->nargs; i++) {
    const ta_spec *a = &c->args[i];
    memset(&nat[i], 0, sizeof nat[i]);
    memset(&ref[i], 0, sizeof ref[i]);
    if (!a->is_tensor) {
      nat[i].scalar = a->s;
      ref[i].scalar = a->s;
      continue;
    }
    int64_t cs = a->col_stride > 1 ? a->col_stride : 1;
    int64_t n = spec_numel(a) * cs + 1;
    size_t sz = pto_dtype_size(a->dt);
    void *x = malloc((size_t)n * sz), *y = malloc((size_t)n * sz);
    if (a->out == 1)
      memset(x, 0x5a, (size_t)n * sz);
    else
      fill(a->dt, x, n, a->domain);
    memcpy(y, x, (size_t)n * sz);
    bufs[(*nbufs)++] = x;
    bufs[(*nbufs)++] = y;
    nat[i].is_tensor = ref[i].is_tensor = 1;
    pto_host_tensor_init(&nat[i].tensor, x, a->dt, a->rank, a->shape);
    pto_host_tensor_init(&ref[i].tensor, y, a->dt, a->rank, a->shape);
    if (cs > 1)
      for (int d = 0; d < a->rank; d++) {
        nat[i].tensor.strides[d] *= cs;
        ref[i].tensor.strides[d] *= cs;
      }
  }
}

static void compare_outputs(const tcase *c, pto_ir_interp_arg *nat, pto_ir_interp_arg *ref) {
  for (int i = 0; i < c->nargs; i++) {
    const ta_spec *a = &c->args[i];
    if (!a->is_tensor || !a->out) continue;
    int64_t cs = a->col_stride > 1 ? a->col_stride : 1;
    int64_t n = spec_numel(a) * cs;
    size_t sz = pto_dtype_size(a->dt);
    for (int64_t k = 0; k < n; k++) {
      const char *x = (const char *)nat[i].tensor.data + k * (int64_t)sz;
      const char *y = (const char *)ref[i].tensor.data + k * (int64_t)sz;
      if (!elem_equal(a->dt, x, y)) {
        print_error("%s: argument %d element %lld: native %.9g, interpreter %.9g (%s)\n", c->name,
                    i, (long long)k, elem_as_double(a->dt, x), elem_as_double(a->dt, y),
                    pto_dtype_name(a->dt));
        fail();
      }
    }
  }
}

static tl_lib *g_libs[32];
static const char *g_lib_names[32];
static int g_nlibs;
static tcase *g_cases;
static int g_ncases, g_capcases;

static tl_lib *lib_of(const char *group) {
  for (int i = 0; i < g_nlibs; i++)
    if (strcmp(g_lib_names[i], group) == 0) return g_libs[i];
  return NULL;
}

static void run_case(void **state) {
  const tcase *c = *state;
  tl_lib *L = lib_of(c->group);
  assert_non_null(L);
  pto_ir_interp_arg nat[12], ref[12];
  void *bufs[24];
  int nb;
  make_args(c, nat, ref, bufs, &nb);
  pto_core_ctx ctx;
  int32_t rc = run_native(L, c->kname, nat, c->nargs, 0, &ctx);
  if (rc != c->expect_rc) {
    print_error("%s: native kernel returned %d, expected %d\n", c->name, rc, c->expect_rc);
    for (int i = 0; i < nb; i++)
      free(bufs[i]);
    fail();
  }
  pto_ir_func *f = pto_ir_program_find_func(L->p, c->kname);
  assert_non_null(f);
  pto_status s = pto_ir_interp_run(L->p, f, ref, c->nargs);
  if (c->expect_rc != 0) {
    /* the interpreter must fail the launch too */
    if (pto_status_code_of(s) != PTO_STATUS_LAUNCH) {
      print_error("%s: interpreter: %s, expected a launch error\n", c->name,
                  s ? pto_status_message(s) : "ok");
      pto_status_free(s);
      for (int i = 0; i < nb; i++)
        free(bufs[i]);
      fail();
    }
    pto_status_free(s);
  } else {
    if (s) {
      print_error("%s: interpreter: %s\n", c->name, pto_status_message(s));
      pto_status_free(s);
      for (int i = 0; i < nb; i++)
        free(bufs[i]);
      fail();
    }
    compare_outputs(c, nat, ref);
    if (c->check) c->check(c, nat);
  }
  for (int i = 0; i < nb; i++)
    free(bufs[i]);
}

/* ---- case generation --------------------------------------------------------------------------
 */

static tcase *new_case(const char *group) {
  if (g_ncases == g_capcases) {
    g_capcases = g_capcases ? g_capcases * 2 : 256;
    g_cases = realloc(g_cases, (size_t)g_capcases * sizeof *g_cases);
  }
  tcase *c = &g_cases[g_ncases++];
  memset(c, 0, sizeof *c);
  c->group = group;
  return c;
}

static ta_spec tensor2(pto_dtype dt, int64_t r, int64_t cols, int domain, int out) {
  ta_spec a;
  memset(&a, 0, sizeof a);
  a.is_tensor = 1;
  a.dt = dt;
  a.rank = 2;
  a.shape[0] = r;
  a.shape[1] = cols;
  a.domain = domain;
  a.out = out;
  return a;
}

static ta_spec scalar_spec(pto_dtype dt, double f, int64_t i) {
  ta_spec a;
  memset(&a, 0, sizeof a);
  a.s.dtype = dt;
  if (pto_dtype_is_float(dt))
    a.s.f = f;
  else
    a.s.i = i;
  return a;
}

static char *dupf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

static const pto_dtype k_all_dtypes[] = {
    PTO_DTYPE_I8,  PTO_DTYPE_I16, PTO_DTYPE_I32, PTO_DTYPE_I64,  PTO_DTYPE_U8,  PTO_DTYPE_U16,
    PTO_DTYPE_U32, PTO_DTYPE_U64, PTO_DTYPE_F16, PTO_DTYPE_BF16, PTO_DTYPE_F32, PTO_DTYPE_F64};
#define N_ALL_DTYPES ((int)(sizeof k_all_dtypes / sizeof k_all_dtypes[0]))

/* Tile shapes [rows, cols] and the tensor each case runs on (smaller: partial tiles). */
typedef struct shape_case {
  int64_t tr, tc, r, c;
} shape_case;
static const shape_case k_shapes[] = {
    {1, 64, 1, 64}, {64, 1, 64, 1}, {7, 13, 7, 13}, {16, 32, 11, 29}};
#define N_SHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))

/* Duplicates every case of group from as group to (names get the suffix after '_'). */
static void copy_group(const char *from, const char *to) {
  int n = g_ncases;
  const char *suffix = strchr(to, '_');
  for (int i = 0; i < n; i++) {
    if (strcmp(g_cases[i].group, from) != 0) continue;
    tcase *c = new_case(to);
    tcase *o = &g_cases[i]; /* after new_case: g_cases may have moved */
    *c = *o;
    c->group = to;
    c->text = strdup(o->text);
    snprintf(c->name, sizeof c->name, "%.80s%s", o->name, suffix ? suffix : "");
  }
}

static void gen_binary(void) {
  static const char *ops[] = {"add", "sub", "mul", "div", "max", "min"};
  for (int o = 0; o < 6; o++)
    for (int d = 0; d < N_ALL_DTYPES; d++)
      for (int sh = 0; sh < N_SHAPES; sh++) {
        pto_dtype dt = k_all_dtypes[d];
        const shape_case *S = &k_shapes[sh];
        if (sh != 2 && dt != PTO_DTYPE_F32 && dt != PTO_DTYPE_I32 && dt != PTO_DTYPE_F16) continue;
        tcase *c = new_case("binary");
        const char *dn = pto_dtype_name(dt);
        snprintf(c->kname, sizeof c->kname, "%s_%s_%lldx%lld", ops[o], dn, (long long)S->tr,
                 (long long)S->tc);
        snprintf(c->name, sizeof c->name, "tile_%s_%s_%lldx%lld_on_%lldx%lld", ops[o], dn,
                 (long long)S->tr, (long long)S->tc, (long long)S->r, (long long)S->c);
        c->text =
            dupf("kernel @%s(%%a: tensor[R,C] %s, %%b: tensor[R,C] %s, out %%c: tensor[R,C] %s)"
                 " -> (tensor[R,C] %s) {\n"
                 "  %%ta = tile.load(%%a, [0, 0], [%lld, %lld])\n"
                 "  %%tb = tile.load(%%b, [0, 0], [%lld, %lld])\n"
                 "  %%tc = tile.%s(%%ta, %%tb)\n"
                 "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                 "  return %%c1\n}\n",
                 c->kname, dn, dn, dn, dn, (long long)S->tr, (long long)S->tc, (long long)S->tr,
                 (long long)S->tc, ops[o]);
        int dom_b = strcmp(ops[o], "div") == 0 && !pto_dtype_is_float(dt) ? D_NONZERO : D_ANY;
        c->args[0] = tensor2(dt, S->r, S->c, D_ANY, 0);
        c->args[1] = tensor2(dt, S->r, S->c, dom_b, 0);
        c->args[2] = tensor2(dt, S->r, S->c, D_ANY, 1);
        c->nargs = 3;
        /* an integer division meets the zero pad of a partial tile: a launch error */
        if (dom_b == D_NONZERO && (S->r < S->tr || S->c < S->tc))
          c->expect_rc = PTO_KERNEL_ERR_DIV_ZERO;
      }
}

static void gen_scalar_ops(void) {
  static const char *ops[] = {"adds", "subs", "muls", "divs", "maxs", "mins"};
  for (int o = 0; o < 6; o++)
    for (int d = 0; d < N_ALL_DTYPES; d++) {
      pto_dtype dt = k_all_dtypes[d];
      tcase *c = new_case("scalar");
      const char *dn = pto_dtype_name(dt);
      snprintf(c->kname, sizeof c->kname, "%s_%s", ops[o], dn);
      snprintf(c->name, sizeof c->name, "tile_%s_%s_9x17", ops[o], dn);
      c->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[R,C] %s, %%s: %s)"
                     " -> (tensor[R,C] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [9, 17])\n"
                     "  %%tc = tile.%s(%%ta, %%s)\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     c->kname, dn, dn, dn, dn, ops[o]);
      c->args[0] = tensor2(dt, 9, 17, D_ANY, 0);
      c->args[1] = tensor2(dt, 9, 17, D_ANY, 1);
      c->args[2] = scalar_spec(dt, -2.375, -3);
      if (pto_dtype_is_int(dt) && !pto_dtype_is_signed(dt)) c->args[2].s.i = 7;
      c->nargs = 3;
    }
}

static void gen_unary(void) {
  static const char *ops[] = {"exp",     "log",  "sqrt", "rsqrt", "recip",
                              "sigmoid", "relu", "neg",  "abs"};
  for (int o = 0; o < 9; o++)
    for (int d = 0; d < N_ALL_DTYPES; d++) {
      pto_dtype dt = k_all_dtypes[d];
      if (!pto_dtype_is_float(dt) && o < 6) continue;
      tcase *c = new_case("unary");
      const char *dn = pto_dtype_name(dt);
      snprintf(c->kname, sizeof c->kname, "%s_%s", ops[o], dn);
      snprintf(c->name, sizeof c->name, "tile_%s_%s_5x37", ops[o], dn);
      c->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[R,C] %s)"
                     " -> (tensor[R,C] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [5, 37])\n"
                     "  %%tc = tile.%s(%%ta)\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     c->kname, dn, dn, dn, ops[o]);
      /* log/sqrt/rsqrt on a mix that includes negatives: NaNs must agree as NaNs */
      c->args[0] = tensor2(dt, 5, 37, o == 0 ? D_ANY : D_ANY, 0);
      c->args[1] = tensor2(dt, 5, 37, D_ANY, 1);
      c->nargs = 2;
    }
}

static void gen_cast(void) {
  static const pto_dtype cast_dts[] = {PTO_DTYPE_I8,   PTO_DTYPE_I16, PTO_DTYPE_I32,
                                       PTO_DTYPE_I64,  PTO_DTYPE_U8,  PTO_DTYPE_F16,
                                       PTO_DTYPE_BF16, PTO_DTYPE_F32, PTO_DTYPE_F64};
  int n = (int)(sizeof cast_dts / sizeof cast_dts[0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j) continue;
      pto_dtype from = cast_dts[i], to = cast_dts[j];
      tcase *c = new_case("cast");
      const char *fn = pto_dtype_name(from), *tn = pto_dtype_name(to);
      snprintf(c->kname, sizeof c->kname, "cast_%s_to_%s", fn, tn);
      snprintf(c->name, sizeof c->name, "tile_cast_%s_to_%s_6x21", fn, tn);
      c->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[R,C] %s)"
                     " -> (tensor[R,C] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [6, 21])\n"
                     "  %%tc = tile.cast(%%ta, %s)\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     c->kname, fn, tn, tn, tn);
      c->args[0] = tensor2(from, 6, 21, pto_dtype_is_float(from) ? D_WIDE : D_ANY, 0);
      c->args[1] = tensor2(to, 6, 21, D_ANY, 1);
      c->nargs = 2;
    }
}

static ta_spec tensor_n(pto_dtype dt, int rank, const int64_t *shape, int domain, int out) {
  ta_spec a;
  memset(&a, 0, sizeof a);
  a.is_tensor = 1;
  a.dt = dt;
  a.rank = rank;
  for (int d = 0; d < rank; d++)
    a.shape[d] = shape[d];
  a.domain = domain;
  a.out = out;
  return a;
}

/* Loads with valid regions (static, a dynamic symbol, scalar parameters) and every pad, at
 * offsets, from strided views and higher-rank tensors; stores of partial tiles. Reductions and a
 * full-region op make the pad values observable. */
static void gen_loadstore(void) {
  static const char *pads[] = {"zero", "min", "max"};
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_F16, PTO_DTYPE_BF16, PTO_DTYPE_I32,
                                  PTO_DTYPE_I8,  PTO_DTYPE_U8,  PTO_DTYPE_F64,  PTO_DTYPE_I64};
  for (int d = 0; d < (int)(sizeof dts / sizeof dts[0]); d++)
    for (int pd = 0; pd < 3; pd++) {
      pto_dtype dt = dts[d];
      const char *dn = pto_dtype_name(dt);
      /* valid from scalar parameters, offsets; row max/min and col sum see the pad */
      tcase *c = new_case("loadstore");
      snprintf(c->kname, sizeof c->kname, "ldpad_%s_%s", pads[pd], dn);
      snprintf(c->name, sizeof c->name, "tile_load_valid_pad_%s_%s_12x20", pads[pd], dn);
      c->text = dupf(
          "kernel @%s(%%a: tensor[R,C] %s, out %%rm: tensor[12,1] %s, out %%cs: tensor[1,20] %s,"
          " out %%st: tensor[12,20] %s, %%vr: index, %%vc: index, %%r0: index, %%c0: index)"
          " -> (tensor[12,1] %s, tensor[1,20] %s, tensor[12,20] %s) {\n"
          "  %%t = tile.load(%%a, [%%r0, %%c0], [12, 20], valid=[%%vr, %%vc], pad=%s)\n"
          "  %%m = tile.row_%s(%%t)\n"
          "  %%s = tile.col_%s(%%t)\n"
          "  %%rm1 = tile.store(%%m, [0, 0], %%rm)\n"
          "  %%cs1 = tile.store(%%s, [0, 0], %%cs)\n"
          "  %%st1 = tile.store(%%t, [0, 0], %%st)\n"
          "  return %%rm1, %%cs1, %%st1\n}\n",
          c->kname, dn, dn, dn, dn, dn, dn, dn, pads[pd], pd == 1 ? "min" : "max",
          pto_dtype_is_float(dt) ? "sum" : (pd == 1 ? "max" : "min"));
      c->args[0] = tensor2(dt, 15, 23, D_SMALLINT, 0);
      c->args[1] = tensor2(dt, 12, 1, D_ANY, 1);
      c->args[2] = tensor2(dt, 1, 20, D_ANY, 1);
      c->args[3] = tensor2(dt, 12, 20, D_ANY, 1);
      c->args[4] = scalar_spec(PTO_DTYPE_INDEX, 0, 9);
      c->args[5] = scalar_spec(PTO_DTYPE_INDEX, 0, 17);
      c->args[6] = scalar_spec(PTO_DTYPE_INDEX, 0, 2); /* 13 rows left: valid 9 wins */
      c->args[7] = scalar_spec(PTO_DTYPE_INDEX, 0, 5); /* 18 columns left: valid 17 wins */
      c->nargs = 8;
    }
  /* the tensor's edge clips before valid does; a dynamic symbol as valid */
  for (int d = 0; d < 4; d++) {
    pto_dtype dt = dts[d];
    const char *dn = pto_dtype_name(dt);
    tcase *c = new_case("loadstore");
    snprintf(c->kname, sizeof c->kname, "ldedge_%s", dn);
    snprintf(c->name, sizeof c->name, "tile_load_store_edge_clip_%s_16x32", dn);
    c->text =
        dupf("kernel @%s(%%a: tensor[R,C] %s, out %%o: tensor[K,C] %s) -> (tensor[K,C] %s) {\n"
             "  %%t = tile.load(%%a, [3, 4], [16, 32], valid=[R, 30], pad=max)\n"
             "  %%u = tile.muls(%%t, 2)\n"
             "  %%o1 = tile.store(%%u, [1, 2], %%o)\n"
             "  return %%o1\n}\n",
             c->kname, dn, dn, dn);
    c->args[0] = tensor2(dt, 14, 31, D_SMALLINT, 0); /* 11 rows, 27 cols from [3,4] */
    c->args[1] = tensor2(dt, 9, 31, D_ANY, 1);       /* 8 rows, 29 cols from [1,2] */
    c->nargs = 2;
  }
  /* strided views (column stride 3) in and out, both copy paths */
  for (int d = 0; d < 4; d++) {
    pto_dtype dt = dts[d];
    const char *dn = pto_dtype_name(dt);
    tcase *c = new_case("loadstore");
    snprintf(c->kname, sizeof c->kname, "ldstride_%s", dn);
    snprintf(c->name, sizeof c->name, "tile_load_store_strided_view_%s_8x16", dn);
    c->text =
        dupf("kernel @%s(%%a: tensor[R,C] %s, out %%o: tensor[R,C] %s) -> (tensor[R,C] %s) {\n"
             "  %%t = tile.load(%%a, [1, 1], [8, 16])\n"
             "  %%u = tile.neg(%%t)\n"
             "  %%o1 = tile.store(%%u, [0, 1], %%o)\n"
             "  return %%o1\n}\n",
             c->kname, dn, dn, dn);
    c->args[0] = tensor2(dt, 9, 17, D_SMALLINT, 0);
    c->args[0].col_stride = 3;
    c->args[1] = tensor2(dt, 9, 17, D_ANY, 1);
    c->args[1].col_stride = 3;
    c->nargs = 2;
  }
  /* rank 3 with a leading offset, and rank 1 */
  {
    tcase *c = new_case("loadstore");
    snprintf(c->kname, sizeof c->kname, "ld_rank3");
    snprintf(c->name, sizeof c->name, "tile_load_store_rank3_leading_offset_f32_4x8");
    c->text = dupf("kernel @%s(%%a: tensor[3,R,C] f32, out %%o: tensor[2,R,C] f32, %%b: index)"
                   " -> (tensor[2,R,C] f32) {\n"
                   "  %%t = tile.load(%%a, [%%b, 1, 2], [4, 8])\n"
                   "  %%o1 = tile.store(%%t, [1, 0, 0], %%o)\n"
                   "  return %%o1\n}\n",
                   c->kname);
    int64_t sa[3] = {3, 6, 11}, so[3] = {2, 6, 11};
    c->args[0] = tensor_n(PTO_DTYPE_F32, 3, sa, D_ANY, 0);
    c->args[1] = tensor_n(PTO_DTYPE_F32, 3, so, D_ANY, 1);
    c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, 2);
    c->nargs = 3;
    c = new_case("loadstore");
    snprintf(c->kname, sizeof c->kname, "ld_rank1");
    snprintf(c->name, sizeof c->name, "tile_load_store_rank1_i16_1x40");
    c->text = dupf("kernel @%s(%%a: tensor[C] i16, out %%o: tensor[C] i16) -> (tensor[C] i16) {\n"
                   "  %%t = tile.load(%%a, [3], [1, 40], pad=min)\n"
                   "  %%s = tile.row_min(%%t)\n"
                   "  %%u = tile.col_expand_sub(%%t, %%t)\n"
                   "  %%v = tile.row_expand_add(%%u, %%s)\n"
                   "  %%o1 = tile.store(%%v, [2], %%o)\n"
                   "  return %%o1\n}\n",
                   c->kname);
    int64_t s1[1] = {37};
    c->args[0] = tensor_n(PTO_DTYPE_I16, 1, s1, D_ANY, 0);
    c->args[1] = tensor_n(PTO_DTYPE_I16, 1, s1, D_ANY, 1);
    c->nargs = 2;
  }
}

static void gen_reduce(void) {
  static const char *ops[] = {"row_sum", "row_max", "row_min", "col_sum", "col_max", "col_min"};
  /* the last three: f32 row reductions 8 rows at a time through 8x8 transposes (R, C multiples
   * of 8), over a whole tile and over one padded by the load; two blocks of 8 side by side where
   * R is a multiple of 16 (16 and 32 rows), one where it is not (24) */
  static const shape_case shapes[] = {{1, 64, 1, 64},   {64, 1, 64, 1},   {13, 29, 13, 29},
                                      {19, 40, 17, 33}, {16, 40, 16, 40}, {24, 64, 20, 60},
                                      {32, 24, 29, 21}};
  enum { NSHAPES = sizeof shapes / sizeof *shapes };
  for (int o = 0; o < 6; o++)
    for (int d = 0; d < N_ALL_DTYPES; d++)
      for (int sh = 0; sh < NSHAPES; sh++) {
        pto_dtype dt = k_all_dtypes[d];
        if (sh < 2 && dt != PTO_DTYPE_F32 && dt != PTO_DTYPE_BF16) continue;
        if (sh >= 4 && dt != PTO_DTYPE_F32) continue;
        const shape_case *S = &shapes[sh];
        int row = o < 3;
        tcase *c = new_case("reduce");
        const char *dn = pto_dtype_name(dt);
        snprintf(c->kname, sizeof c->kname, "%s_%s_%lldx%lld", ops[o], dn, (long long)S->tr,
                 (long long)S->tc);
        snprintf(c->name, sizeof c->name, "tile_%s_%s_%lldx%lld_on_%lldx%lld", ops[o], dn,
                 (long long)S->tr, (long long)S->tc, (long long)S->r, (long long)S->c);
        c->text =
            dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[%lld,%lld] %s)"
                 " -> (tensor[%lld,%lld] %s) {\n"
                 "  %%ta = tile.load(%%a, [0, 0], [%lld, %lld], pad=%s)\n"
                 "  %%tc = tile.%s(%%ta)\n"
                 "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                 "  return %%c1\n}\n",
                 c->kname, dn, row ? (long long)S->tr : 1LL, row ? 1LL : (long long)S->tc, dn,
                 row ? (long long)S->tr : 1LL, row ? 1LL : (long long)S->tc, dn, (long long)S->tr,
                 (long long)S->tc, strstr(ops[o], "max") ? "min" : "zero", ops[o]);
        c->args[0] = tensor2(dt, S->r, S->c, D_ANY, 0);
        c->args[1] = tensor2(dt, row ? S->tr : 1, row ? 1 : S->tc, D_ANY, 1);
        c->nargs = 2;
      }
}

static void gen_expand(void) {
  static const char *ops[] = {"add", "sub", "mul", "div"};
  for (int rc = 0; rc < 2; rc++)
    for (int o = 0; o < 4; o++)
      for (int d = 0; d < N_ALL_DTYPES; d++) {
        pto_dtype dt = k_all_dtypes[d];
        const char *dn = pto_dtype_name(dt);
        const char *kind = rc ? "col" : "row";
        tcase *c = new_case("expand");
        snprintf(c->kname, sizeof c->kname, "%s_expand_%s_%s", kind, ops[o], dn);
        snprintf(c->name, sizeof c->name, "tile_%s_expand_%s_%s_10x24", kind, ops[o], dn);
        c->text = dupf(
            "kernel @%s(%%a: tensor[10,24] %s, %%v: tensor[%d,%d] %s, out %%c: tensor[10,24] %s)"
            " -> (tensor[10,24] %s) {\n"
            "  %%ta = tile.load(%%a, [0, 0], [10, 24])\n"
            "  %%tv = tile.load(%%v, [0, 0], [%d, %d])\n"
            "  %%tc = tile.%s_expand_%s(%%ta, %%tv)\n"
            "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
            "  return %%c1\n}\n",
            c->kname, dn, rc ? 1 : 10, rc ? 24 : 1, dn, dn, dn, rc ? 1 : 10, rc ? 24 : 1, kind,
            ops[o]);
        c->args[0] = tensor2(dt, 10, 24, D_ANY, 0);
        c->args[1] = tensor2(dt, rc ? 1 : 10, rc ? 24 : 1, o == 3 ? D_NONZERO : D_ANY, 0);
        c->args[2] = tensor2(dt, 10, 24, D_ANY, 1);
        c->nargs = 3;
      }
}

/* matmul in each input dtype over shapes with and without whole register blocks (bf16 on an
 * AVX512_BF16 host: pairs packed 16 at a time and one by one, columns 16 and 8 at a time); acc 1:
 * matmul_acc onto a product that stays live (a copy), acc 2: onto a dead one (in place). */
static void gen_matmul(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_F16, PTO_DTYPE_BF16,
                                  PTO_DTYPE_I8,  PTO_DTYPE_U8,  PTO_DTYPE_I32};
  /* M = 1, 2, 3 and 6: the last M mod 4 rows run register blocks of their own (1 x 48, 2 x 32,
   * 3 x 48, beside 4-row blocks for M = 6); 6 x 16 x 112 also has a 4-row edge whose 48-column
   * part is not a multiple of 32 columns (it lost 16 columns once: M = 4, N = 48 likewise) */
  static const int64_t mkn[][3] = {{1, 1, 1},    {5, 7, 19},  {8, 16, 32}, {13, 9, 35},
                                   {32, 64, 48}, {1, 40, 64}, {64, 8, 1},  {12, 40, 40},
                                   {2, 17, 80},  {3, 24, 96}, {6, 16, 112}};
  for (int d = 0; d < (int)(sizeof dts / sizeof dts[0]); d++)
    for (int sh = 0; sh < (int)(sizeof mkn / sizeof mkn[0]); sh++)
      for (int acc = 0; acc < 3; acc++) {
        pto_dtype dt = dts[d];
        if (acc && sh != 3 && sh != 4 && sh != 10) continue;
        const char *dn = pto_dtype_name(dt);
        const char *on = pto_dtype_is_float(dt) ? "f32" : "i32";
        pto_dtype odt = pto_dtype_is_float(dt) ? PTO_DTYPE_F32 : PTO_DTYPE_I32;
        long long M = mkn[sh][0], K = mkn[sh][1], N = mkn[sh][2];
        static const char *accname[] = {"", "_acc_copy", "_acc_in_place"};
        tcase *c = new_case("matmul");
        snprintf(c->kname, sizeof c->kname, "mm%d_%s_%lldx%lldx%lld", acc, dn, M, K, N);
        snprintf(c->name, sizeof c->name, "tile_matmul%s_%s_%lldx%lldx%lld", accname[acc], dn, M, K,
                 N);
        c->text =
            dupf("kernel @%s(%%l: tensor[%lld,%lld] %s, %%r: tensor[%lld,%lld] %s, out %%c: "
                 "tensor[%lld,%lld] %s,"
                 " out %%d: tensor[%lld,%lld] %s)"
                 " -> (tensor[%lld,%lld] %s, tensor[%lld,%lld] %s) {\n"
                 "  %%tl = tile.load(%%l, [0, 0], [%lld, %lld], space=mat)\n"
                 "  %%tr = tile.load(%%r, [0, 0], [%lld, %lld], space=mat)\n"
                 "  %%ml = tile.move(%%tl, space=left)\n"
                 "  %%mr = tile.move(%%tr, space=right)\n"
                 "%s"
                 "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
                 "  return %%c1, %%d\n}\n",
                 c->kname, M, K, dn, K, N, dn, M, N, on, M, N, on, M, N, on, M, N, on, M, K, K, N,
                 acc == 0   ? "  %o = tile.matmul(%ml, %mr)\n"
                 : acc == 1 ? "  %o0 = tile.matmul(%ml, %mr)\n"
                              "  %o = tile.matmul_acc(%o0, %ml, %mr)\n"
                              "  %d1 = tile.store(%o0, [0, 0], %d)\n"
                            : "  %o0 = tile.matmul(%ml, %mr)\n"
                              "  %o = tile.matmul_acc(%o0, %ml, %mr)\n");
        c->args[0] = tensor2(dt, M, K, D_ANY, 0);
        c->args[1] = tensor2(dt, K, N, D_ANY, 0);
        c->args[2] = tensor2(odt, M, N, D_ANY, 1);
        c->args[3] = tensor2(odt, M, N, D_ANY, 1);
        c->nargs = 4;
      }
}

/* A right operand loaded only to feed the matmul is a view of the tensor with its row stride
 * (plan_views, lw_tile.rs): W's window [2.., 5..] of a wider tensor, rows N + 13 apart, for the
 * decode shapes M = 1, 2, 4, 8 and odd N; the window clipped by the tensor's last rows or columns
 * (then the copy, padded with zeros); matmul_acc reading it twice; and a tile also stored (read
 * other than by the matmul: never a view with rows apart). */
static void gen_matmul_rview(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_BF16, PTO_DTYPE_F16, PTO_DTYPE_I8};
  static const int64_t mkn[][3] = {{1, 64, 48}, {2, 40, 35}, {4, 17, 80}, {8, 64, 48}, {8, 9, 131}};
  static const char *vname[] = {"", "_clip_rows", "_clip_cols", "_acc", "_also_stored"};
  for (int d = 0; d < (int)(sizeof dts / sizeof dts[0]); d++)
    for (int sh = 0; sh < (int)(sizeof mkn / sizeof mkn[0]); sh++)
      for (int v = 0; v < 5; v++) {
        pto_dtype dt = dts[d];
        if (v && (d > 1 || (sh != 1 && sh != 2 && sh != 3))) continue;
        const char *dn = pto_dtype_name(dt);
        const char *on = pto_dtype_is_float(dt) ? "f32" : "i32";
        pto_dtype odt = pto_dtype_is_float(dt) ? PTO_DTYPE_F32 : PTO_DTYPE_I32;
        long long M = mkn[sh][0], K = mkn[sh][1], N = mkn[sh][2];
        tcase *c = new_case("matmul");
        snprintf(c->kname, sizeof c->kname, "mmv%d_%s_%lldx%lldx%lld", v, dn, M, K, N);
        snprintf(c->name, sizeof c->name, "tile_matmul_right_view%s_%s_%lldx%lldx%lld", vname[v],
                 dn, M, K, N);
        c->text = dupf("kernel @%s(%%l: tensor[%lld,%lld] %s, %%r: tensor[R,C] %s, out %%c: "
                       "tensor[%lld,%lld] %s, out %%d: tensor[%lld,%lld] %s)"
                       " -> (tensor[%lld,%lld] %s, tensor[%lld,%lld] %s) {\n"
                       "  %%tl = tile.load(%%l, [0, 0], [%lld, %lld], space=mat)\n"
                       "  %%tr = tile.load(%%r, [2, 5], [%lld, %lld], space=mat)\n"
                       "  %%ml = tile.move(%%tl, space=left)\n"
                       "  %%mr = tile.move(%%tr, space=right)\n"
                       "%s"
                       "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
                       "  return %%c1, %%d\n}\n",
                       c->kname, M, K, dn, dn, M, N, on, K, N, dn, M, N, on, K, N, dn, M, K, K, N,
                       v == 3   ? "  %o0 = tile.matmul(%ml, %mr)\n"
                                  "  %o = tile.matmul_acc(%o0, %ml, %mr)\n"
                       : v == 4 ? "  %o = tile.matmul(%ml, %mr)\n"
                                  "  %d1 = tile.store(%tr, [0, 0], %d)\n"
                                : "  %o = tile.matmul(%ml, %mr)\n");
        c->args[0] = tensor2(dt, M, K, D_ANY, 0);
        c->args[1] = tensor2(dt, v == 1 ? K + 1 : K + 3, v == 2 ? N + 3 : N + 13, D_ANY, 0);
        c->args[2] = tensor2(odt, M, N, D_ANY, 1);
        c->args[3] = tensor2(dt, K, N, D_ANY, 1);
        c->nargs = 4;
      }
}

/* The decode attention's chunk loop (examples/llm/llama_layer.ptir @attend, small): K's rows
 * gathered through an index tile and read by the q . K run, then V's rows gathered through the
 * same or another index tile into the P . V matmul. The run prefetches V's rows (gather_ahead)
 * before V's gather checks them: the results are still the interpreter's, and indices out of
 * range (v 1: V's index tile offset by %b past the tensor's rows) still fail the launch at V's
 * gather, the prefetches of those rows having faulted nothing. K x N: 64 x 128 (the
 * attention's), 17 x 48; RT x CT the tensors, c0 the column offset. v 2: q . K as
 * tile.col_expand_mul(K, q), a column expansion in the run reading K through its index tile
 * (q broadcast from its one row, no [K, N] tile of it). */
static void gen_matmul_gather_ahead(void) {
  static const int64_t sh[][5] = {{64, 128, 70, 140, 9}, {17, 48, 23, 53, 5}};
  static const char *vname[] = {"", "_index_out_of_range", "_q_by_col_expand"};
  for (int h = 0; h < 2; h++)
    for (int v = 0; v < 3; v++) {
      long long K = sh[h][0], N = sh[h][1], RT = sh[h][2], CT = sh[h][3];
      tcase *c = new_case("matmul");
      snprintf(c->kname, sizeof c->kname, "mmga%d_%lldx%lld", v, K, N);
      snprintf(c->name, sizeof c->name, "tile_matmul_attention_loop_prefetches_v%s_%lldx%lld",
               vname[v], K, N);
      c->text =
          dupf("kernel @%s(%%q: tensor[1,%lld] f32, %%k: tensor[R,C] f32, %%v: tensor[R,C] f32,"
               " out %%c: tensor[1,%lld] f32, %%c0: index, %%a: i32, %%b: i32)"
               " -> (tensor[1,%lld] f32) {\n"
               "  %%tq = tile.load(%%q, [0, 0], [1, %lld])\n"
               "  %%qx = tile.col_expand(%%tq, [%lld, %lld])\n"
               "  %%z = tile.full([1, %lld], f32, 0, space=acc)\n"
               "  %%o = for %%i in range(0, 3) iter(%%cz = %%z) {\n"
               "    %%ci = tile.ci(i32(%%i * 5), [1, %lld], dtype=i32)\n"
               "    %%ct = tile.reshape(%%ci, [%lld, 1])\n"
               "    %%cm = tile.muls(%%ct, 7)\n"
               "    %%ca = tile.adds(%%cm, %%a)\n"
               "    %%ix = tile.rems(%%ca, %lld)\n"
               "    %%iv = tile.adds(%%ix, %%b)\n"
               "    %%tk = tile.gather_rows(%%k, %%ix, [%%c0], [%lld, %lld])\n"
               "    %%m = %s\n"
               "    %%s = tile.row_sum(%%m)\n"
               "    %%p = tile.reshape(%%s, [1, %lld])\n"
               "    %%pm = tile.move(%%p, space=mat)\n"
               "    %%pl = tile.move(%%pm, space=left)\n"
               "    %%tv = tile.gather_rows(%%v, %%iv, [%%c0], [%lld, %lld])\n"
               "    %%vm = tile.move(%%tv, space=mat)\n"
               "    %%vr = tile.move(%%vm, space=right)\n"
               "    %%cn = tile.matmul_acc(%%cz, %%pl, %%vr)\n"
               "    yield %%cn\n"
               "  }\n"
               "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
               "  return %%c1\n}\n",
               c->kname, N, N, N, N, K, N, N, K, K, RT, K, N,
               v == 2 ? "tile.col_expand_mul(%tk, %tq)" : "tile.mul(%tk, %qx)", K, K, N);
      c->args[0] = tensor2(PTO_DTYPE_F32, 1, N, D_ANY, 0);
      c->args[1] = tensor2(PTO_DTYPE_F32, RT, CT, D_ANY, 0);
      c->args[2] = tensor2(PTO_DTYPE_F32, RT, CT, D_ANY, 0);
      c->args[3] = tensor2(PTO_DTYPE_F32, 1, N, D_ANY, 1);
      c->args[4] = scalar_spec(PTO_DTYPE_INDEX, 0, sh[h][4]);
      c->args[5] = scalar_spec(PTO_DTYPE_I32, 0, RT - 1);
      c->args[6] = scalar_spec(PTO_DTYPE_I32, 0, v == 1 ? 1000000 : 0);
      c->nargs = 7;
      if (v == 1) c->expect_rc = PTO_KERNEL_ERR_INDEX;
    }
}

/* A right operand gathered only to feed the matmul is read through its index tile
 * (plan_row_views, lw_tile.ri): rows idx[k] = (7 k + a) mod RT of an RT x CT tensor from column
 * c0, through the moves vec -> mat -> right, for M = 1, 2, 4, 8, odd K and N (K > RT: repeated
 * rows; the first and last rows of the tensor among them); matmul_acc reading it twice; the
 * attention's loop (an index tile per iteration, the product accumulated); a tile also stored
 * (the copy); and the launch errors of the fused path: indices from a tensor of random values,
 * columns past the tensor's edge. */
static void gen_matmul_gview(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_BF16, PTO_DTYPE_F16, PTO_DTYPE_I8};
  /* M, K, N, tensor rows RT, columns CT, c0 */
  static const int64_t sh[][6] = {{1, 64, 128, 40, 131, 3},
                                  {1, 17, 48, 23, 53, 5},
                                  {2, 40, 35, 45, 40, 5},
                                  {8, 64, 48, 70, 61, 13},
                                  {4, 9, 131, 12, 140, 9}};
  static const char *vname[] = {
      "", "_acc", "_loop", "_also_stored", "_index_out_of_range", "_columns_out_of_range"};
  for (int d = 0; d < (int)(sizeof dts / sizeof dts[0]); d++)
    for (int h = 0; h < (int)(sizeof sh / sizeof sh[0]); h++)
      for (int v = 0; v < 6; v++) {
        pto_dtype dt = dts[d];
        if (v && d > 1 && v != 2) continue;
        const char *dn = pto_dtype_name(dt);
        const char *on = pto_dtype_is_float(dt) ? "f32" : "i32";
        pto_dtype odt = pto_dtype_is_float(dt) ? PTO_DTYPE_F32 : PTO_DTYPE_I32;
        long long M = sh[h][0], K = sh[h][1], N = sh[h][2], RT = sh[h][3], CT = sh[h][4];
        char idx[256], body[640];
        if (v == 4)
          snprintf(idx, sizeof idx, "  %%ix = tile.load(%%bi, [0, 0], [%lld, 1])\n", K);
        else
          snprintf(idx, sizeof idx,
                   "  %%ci = tile.ci(%s, [1, %lld], dtype=i32)\n"
                   "  %%ct = tile.reshape(%%ci, [%lld, 1])\n"
                   "  %%cm = tile.muls(%%ct, 7)\n"
                   "  %%ca = tile.adds(%%cm, %%a)\n"
                   "  %%ix = tile.rems(%%ca, %lld)\n",
                   v == 2 ? "i32(%i * 5)" : "0", K, K, RT);
        const char *gather = "  %%tr = tile.gather_rows(%%r, %%ix, [%%c0], [%lld, %lld])\n"
                             "  %%vm = tile.move(%%tr, space=mat)\n"
                             "  %%mr = tile.move(%%vm, space=right)\n";
        char g[256];
        snprintf(g, sizeof g, gather, K, N);
        if (v == 2)
          snprintf(body, sizeof body,
                   "  %%z = tile.full([%lld, %lld], %s, 0, space=acc)\n"
                   "  %%o = for %%i in range(0, 3) iter(%%cz = %%z) {\n%s%s"
                   "    %%cn = tile.matmul_acc(%%cz, %%ml, %%mr)\n"
                   "    yield %%cn\n  }\n",
                   M, N, on, idx, g);
        else
          snprintf(body, sizeof body, "%s%s%s", idx, g,
                   v == 1   ? "  %o0 = tile.matmul(%ml, %mr)\n"
                              "  %o = tile.matmul_acc(%o0, %ml, %mr)\n"
                   : v == 3 ? "  %o = tile.matmul(%ml, %mr)\n"
                              "  %d1 = tile.store(%tr, [0, 0], %d)\n"
                            : "  %o = tile.matmul(%ml, %mr)\n");
        tcase *c = new_case("matmul");
        snprintf(c->kname, sizeof c->kname, "mmg%d_%s_%lldx%lldx%lld", v, dn, M, K, N);
        snprintf(c->name, sizeof c->name, "tile_matmul_right_gathered%s_%s_%lldx%lldx%lld",
                 vname[v], dn, M, K, N);
        c->text =
            dupf("kernel @%s(%%l: tensor[%lld,%lld] %s, %%r: tensor[R,C] %s,"
                 " %%bi: tensor[%lld,1] i32, out %%c: tensor[%lld,%lld] %s,"
                 " out %%d: tensor[%lld,%lld] %s, %%c0: index, %%a: i32)"
                 " -> (tensor[%lld,%lld] %s, tensor[%lld,%lld] %s) {\n"
                 "  %%tl = tile.load(%%l, [0, 0], [%lld, %lld], space=mat)\n"
                 "  %%ml = tile.move(%%tl, space=left)\n"
                 "%s"
                 "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
                 "  return %%c1, %%d\n}\n",
                 c->kname, M, K, dn, dn, K, M, N, on, K, N, dn, M, N, on, K, N, dn, M, K, body);
        c->args[0] = tensor2(dt, M, K, D_ANY, 0);
        c->args[1] = tensor2(dt, RT, CT, D_ANY, 0);
        c->args[2] = tensor2(PTO_DTYPE_I32, K, 1, D_ANY, 0);
        c->args[3] = tensor2(odt, M, N, D_ANY, 1);
        c->args[4] = tensor2(dt, K, N, D_ANY, 1);
        c->args[5] = scalar_spec(PTO_DTYPE_INDEX, 0, v == 5 ? CT - N + 1 : sh[h][5]);
        c->args[6] = scalar_spec(PTO_DTYPE_I32, 0, (RT - 1) - (7 * (K / 2)) % RT + RT);
        c->nargs = 7;
        if (v >= 4) c->expect_rc = PTO_KERNEL_ERR_INDEX;
      }
}

/* Whether the kernel of case c was lowered with a k loop run as one product ("kl.fused",
 * compiler/lower_kloop.c): where the host has AVX-512 (not under PTO_GENERIC_LOWERING) for the
 * cases named "mmkf*", never for "mmkn*". A fused one packs b's rows into the panel in the first
 * row block's k loop ("kl.kp"), not in a copy loop of its own ("kl.pk"). */
static void check_kloop_fused(const tcase *c, const pto_ir_interp_arg *nat) {
  (void)nat;
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/%s.ll", lib_of(c->group)->dir, c->kname);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  int fused = strstr(text, "kl.fused") != NULL;
  int packs_in_block = strstr(text, "kl.kp") != NULL, pack_loop = strstr(text, "kl.pk") != NULL;
  free(text);
  int want = c->kname[3] == 'f' && pto__lower_host_has("+avx512f");
  if (fused != want) {
    print_error("%s: k loop fused %d, want %d\n", c->name, fused, want);
    fail();
  }
  if (fused && (!packs_in_block || pack_loop)) {
    print_error("%s: b packed in the first row block %d, in a loop of its own %d\n", c->name,
                packs_in_block, pack_loop);
    fail();
  }
}

/* A k loop of matmul_acc steps (f32) run as one K-blocked product (lower_kloop.c), against the
 * interpreter: windows at offsets inside larger tensors (a's row 1 and column c0 on, b's column
 * 3 on), shapes with edges (M mod 8 rows, N not a multiple of 48, 32 or 16 columns, odd k
 * steps, no iteration at all), bench/kernels/matmul.ptir's task (256 x 128, k step 64); and loops
 * that must stay as they are or fall back at run time: fewer than 16 rows (never fused), a's last
 * window past the tensor's edge (padded: the run-time check fails), a's columns strided, an
 * elementwise op between the load and the product, a loop that stores into the tensor it loads a's
 * windows from (the next window), an offset that divides. */
static void gen_matmul_kloop(void) {
  /* M, k step, N, iterations */
  static const int64_t sh[][4] = {{19, 8, 100, 3},  {16, 24, 80, 2}, {24, 5, 112, 4},
                                  {17, 16, 20, 3},  {33, 7, 64, 5},  {16, 8, 48, 0},
                                  {256, 64, 128, 3}};
  static const char *vname[] = {"",      "_rows7",    "_last_window_padded", "_a_strided",
                                "_adds", "_stores_a", "_offset_divides"};
  for (int h = 0; h < (int)(sizeof sh / sizeof sh[0]); h++)
    for (int v = 0; v < 7; v++) {
      if (v && h > 1) continue;
      long long M = v == 1 ? 7 : sh[h][0], KS = sh[h][1], N = sh[h][2], IT = sh[h][3];
      long long c0 = 2, KA = IT * KS + c0 + (v == 2 ? -1 : 3), KB = IT * KS + 1;
      int fused = v == 0 || v == 2 || v == 3;
      char body[512];
      const char *aoff = v == 6 ? "%%k * %lld * 2 / 2 + %%c0" : "%%k * %lld + %%c0";
      char ao[64], next_a[96];
      snprintf(ao, sizeof ao, aoff, KS);
      snprintf(next_a, sizeof next_a,
               "    %%a1 = tile.store(%%ta, [1, %%k * %lld + %lld + %%c0], %%a)\n", KS, KS);
      snprintf(body, sizeof body,
               "    %%ta = tile.load(%%a, [1, %s], [%lld, %lld], space=mat)\n"
               "    %%tb = tile.load(%%b, [%%k * %lld, 3], [%lld, %lld], space=mat)\n"
               "%s"
               "    %%l = tile.move(%s, space=left)\n"
               "    %%r = tile.move(%%tb, space=right)\n"
               "%s",
               ao, M, KS, KS, KS, N, v == 4 ? "    %tx = tile.adds(%ta, 0.5)\n" : "",
               v == 4 ? "%tx" : "%ta", v == 5 ? next_a : "");
      char ret_a[64] = "";
      if (v == 5) snprintf(ret_a, sizeof ret_a, "tensor[%lld,%lld] f32, ", M + 2, KA);
      tcase *c = new_case("matmul");
      snprintf(c->kname, sizeof c->kname, "mmk%c%d_%lldx%lldx%lldx%lld", fused ? 'f' : 'n', v, M,
               KS, N, IT);
      snprintf(c->name, sizeof c->name, "tile_matmul_acc_k_loop%s_%lldx%lldx%lldx%lld", vname[v], M,
               KS, N, IT);
      c->text = dupf("kernel @%s(%s%%a: tensor[%lld,%lld] f32, %%b: tensor[%lld,%lld] f32,"
                     " %%c0: index, out %%c: tensor[%lld,%lld] f32)"
                     " -> (%stensor[%lld,%lld] f32) {\n"
                     "  %%acc0 = tile.full([%lld, %lld], f32, -1.5, space=acc)\n"
                     "  %%acc = for %%k in range(0, %lld) iter(%%ck = %%acc0) {\n"
                     "%s"
                     "    %%cn = tile.matmul_acc(%%ck, %%l, %%r)\n"
                     "    yield %%cn\n"
                     "  }\n"
                     "  %%c1 = tile.store(%%acc, [0, 0], %%c)\n"
                     "  return %s%%c1\n}\n",
                     c->kname, v == 5 ? "inout " : "", M + 2, KA, KB, N + 5, M, N, ret_a, M, N, M,
                     N, IT, body, v == 5 ? "%a, " : "");
      c->args[0] = tensor2(PTO_DTYPE_F32, M + 2, KA, D_ANY, v == 5 ? 2 : 0); /* 2: in and out */
      if (v == 3) c->args[0].col_stride = 2;
      c->args[1] = tensor2(PTO_DTYPE_F32, KB, N + 5, D_ANY, 0);
      c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, c0);
      c->args[3] = tensor2(PTO_DTYPE_F32, M, N, D_ANY, 1);
      c->nargs = 4;
      c->check = check_kloop_fused;
    }
}

/* The k loop in examples/matmul.ptir's form (scalar assignments opening the body, loads with
 * valid=[rows, min(KS, kv - k0)]) run as one K-blocked product when every valid extent covers
 * its tile ("_valid_whole"), and at run time as the loop when the last k step is partial or a's
 * valid rows fall short, with the windows themselves inside the tensors (so only the extents'
 * check can send it back: a fused run would add the products past them). */
static void gen_matmul_kloop_valid(void) {
  static const int64_t sh[][4] = {{19, 8, 100, 3}, {16, 24, 80, 2}}; /* M, k step, N, iterations */
  static const char *vname[] = {"_valid_whole", "_valid_last_k_partial", "_valid_rows_partial"};
  for (int h = 0; h < 2; h++)
    for (int v = 0; v < 3; v++) {
      long long M = sh[h][0], KS = sh[h][1], N = sh[h][2], IT = sh[h][3];
      long long c0 = 2, KA = IT * KS + c0 + 3, KB = IT * KS + 1;
      tcase *c = new_case("matmul");
      snprintf(c->kname, sizeof c->kname, "mmkf%d_%lldx%lldx%lldx%lld", 7 + v, M, KS, N, IT);
      snprintf(c->name, sizeof c->name, "tile_matmul_acc_k_loop%s_%lldx%lldx%lldx%lld", vname[v], M,
               KS, N, IT);
      c->text = dupf("kernel @%s(%%a: tensor[%lld,%lld] f32, %%b: tensor[%lld,%lld] f32,"
                     " %%c0: index, %%kv: index, %%mv: index, out %%c: tensor[%lld,%lld] f32)"
                     " -> (tensor[%lld,%lld] f32) {\n"
                     "  %%acc0 = tile.full([%lld, %lld], f32, -1.5, space=acc)\n"
                     "  %%acc = for %%k in range(0, %lld) iter(%%ck = %%acc0) {\n"
                     "    %%k0 = %%k * %lld\n"
                     "    %%kn = min(%lld, %%kv - %%k0)\n"
                     "    %%ta = tile.load(%%a, [1, %%k0 + %%c0], [%lld, %lld], space=mat,"
                     " valid=[%%mv, %%kn])\n"
                     "    %%tb = tile.load(%%b, [%%k0, 3], [%lld, %lld], space=mat,"
                     " valid=[%%kn, %lld])\n"
                     "    %%l = tile.move(%%ta, space=left)\n"
                     "    %%r = tile.move(%%tb, space=right)\n"
                     "    %%cn = tile.matmul_acc(%%ck, %%l, %%r)\n"
                     "    yield %%cn\n"
                     "  }\n"
                     "  %%c1 = tile.store(%%acc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     c->kname, M + 2, KA, KB, N + 5, M, N, M, N, M, N, IT, KS, KS, M, KS, KS, N, N);
      c->args[0] = tensor2(PTO_DTYPE_F32, M + 2, KA, D_ANY, 0);
      c->args[1] = tensor2(PTO_DTYPE_F32, KB, N + 5, D_ANY, 0);
      c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, c0);
      c->args[3] = scalar_spec(PTO_DTYPE_INDEX, 0, IT * KS - (v == 1 ? 3 : 0));
      c->args[4] = scalar_spec(PTO_DTYPE_INDEX, 0, M - (v == 2 ? 1 : 0));
      c->args[5] = tensor2(PTO_DTYPE_F32, M, N, D_ANY, 1);
      c->nargs = 6;
      c->check = check_kloop_fused;
    }
}

/* a = -17, b = 5: floor division, modulo with the divisor's sign, wraps, saturation. */
static void check_sexpr_m17_5(const tcase *c, const pto_ir_interp_arg *nat) {
  (void)c;
  const int64_t *oi = nat[0].tensor.data;
  assert_int_equal(oi[0], -4);  /* -17 / 5 floors */
  assert_int_equal(oi[1], 3);   /* mod(-17, 5) */
  assert_int_equal(oi[2], -17); /* min */
  assert_int_equal(oi[3], 200); /* max(u8 200, u8 200) */
  assert_int_equal(oi[4], 0);
  assert_int_equal(oi[7], 1);    /* 200 / 200 */
  assert_int_equal(oi[9], -104); /* i8(-17000) wraps */
  assert_int_equal(oi[10], 17);
  assert_int_equal(oi[11], -17 * 5 - (-6)); /* -17 / 3 = -6 (floor) */
  assert_int_equal(oi[12], 255);            /* u8(271.828) saturates */
  assert_int_equal(oi[16], 2);              /* mod(17, 5) */
  assert_int_equal(oi[17], 0);              /* -17 / 5 > 1 is false */
  const float *of = nat[1].tensor.data;
  assert_true(of[0] == 2.71828f / -1.25f);
  assert_true(of[4] == -1.25f);
}

static tcase *misc_case(const char *kname, const char *name, const char *text) {
  tcase *c = new_case("misc");
  snprintf(c->kname, sizeof c->kname, "%s", kname);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->text = strdup(text);
  return c;
}

/* Control flow, scalar expressions, full/move, fused chains: hand-written kernels. */
static void gen_misc(void) {
  tcase *c;
  c = misc_case("loop_acc", "for_iter_tile_accumulates_f32",
                "kernel @loop_acc(%a: tensor[R,C] f32, out %o: tensor[8,32] f32, %n: index)"
                " -> (tensor[8,32] f32) {\n"
                "  %z = tile.full([8, 32], f32, 0.5)\n"
                "  %r = for %i in range(0, %n) iter(%acc = %z) {\n"
                "    %t = tile.load(%a, [%i * 8, 0], [8, 32])\n"
                "    %s = tile.add(%acc, %t)\n"
                "    %s2 = tile.muls(%s, 0.75)\n"
                "    yield %s2\n"
                "  }\n"
                "  %o1 = tile.store(%r, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 37, 32, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 32, D_ANY, 1);
  c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, 5);
  c->nargs = 3;

  c = misc_case(
      "loop_swap", "for_iter_tiles_swap_and_scalar_carry",
      "kernel @loop_swap(%a: tensor[4,16] f32, %b: tensor[4,16] f32, out %o: tensor[4,16] f32,"
      " out %p: tensor[4,16] f32, %n: index) -> (tensor[4,16] f32, tensor[4,16] f32) {\n"
      "  %ta = tile.load(%a, [0, 0], [4, 16])\n"
      "  %tb = tile.load(%b, [0, 0], [4, 16])\n"
      "  %x, %y, %k = for %i in range(0, %n) iter(%u = %ta, %v = %tb, %c = 0) {\n"
      "    %w = tile.adds(%v, f32(%c))\n"
      "    yield %w, %u, %c + 3\n"
      "  }\n"
      "  %x2 = tile.adds(%x, f32(%k))\n"
      "  %o1 = tile.store(%x2, [0, 0], %o)\n"
      "  %p1 = tile.store(%y, [0, 0], %p)\n"
      "  return %o1, %p1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 4, 16, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 4, 16, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F32, 4, 16, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_F32, 4, 16, D_ANY, 1);
  c->args[4] = scalar_spec(PTO_DTYPE_INDEX, 0, 3);
  c->nargs = 5;

  for (int act = 0; act < 2; act++) {
    c = misc_case(act ? "if_act1" : "if_act0",
                  act ? "if_results_tile_then_branch" : "if_results_tile_else_branch",
                  act ? "kernel @if_act1(%x: tensor[R,128] f32, out %y: tensor[R,128] f32,\n"
                        "                %alpha: f32, %act: i32) -> (tensor[R,128] f32) {\n"
                        "  %t = tile.load(%x, [0, 0], [32, 128], valid=[R, 128])\n"
                        "  %s = tile.muls(%t, %alpha)\n"
                        "  %o = if %act != 0 {\n"
                        "    %r = tile.relu(%s)\n"
                        "    yield %r\n"
                        "  } else {\n"
                        "    yield %s\n"
                        "  }\n"
                        "  %y1 = tile.store(%o, [0, 0], %y)\n"
                        "  return %y1\n}\n"
                      : "kernel @if_act0(%x: tensor[R,128] f32, out %y: tensor[R,128] f32,\n"
                        "                %alpha: f32, %act: i32) -> (tensor[R,128] f32) {\n"
                        "  %t = tile.load(%x, [0, 0], [32, 128], valid=[R, 128])\n"
                        "  %s = tile.muls(%t, %alpha)\n"
                        "  %o, %q = if %act != 0 {\n"
                        "    %r = tile.relu(%s)\n"
                        "    yield %r, 1\n"
                        "  } else {\n"
                        "    %r2 = tile.neg(%s)\n"
                        "    yield %r2, 2\n"
                        "  }\n"
                        "  %o2 = tile.muls(%o, f32(%q))\n"
                        "  %y1 = tile.store(%o2, [0, 0], %y)\n"
                        "  return %y1\n}\n");
    c->args[0] = tensor2(PTO_DTYPE_F32, 21, 128, D_ANY, 0);
    c->args[1] = tensor2(PTO_DTYPE_F32, 21, 128, D_ANY, 1);
    c->args[2] = scalar_spec(PTO_DTYPE_F32, -1.5, 0);
    c->args[3] = scalar_spec(PTO_DTYPE_I32, 0, act);
    c->nargs = 4;
  }

  c = misc_case(
      "nest", "for_nested_step2_if_scalar_results",
      "kernel @nest(out %o: tensor[2,8] i64, %n: index, %m: index) -> (tensor[2,8] i64) {\n"
      "  %s = for %i in range(0, %n) iter(%acc = 1) {\n"
      "    %t = for %j in range(1, %m, 2) iter(%b = %acc) {\n"
      "      %c = if mod(%j, 3) == 0 {\n"
      "        yield %b + %j\n"
      "      } else {\n"
      "        yield %b - 1\n"
      "      }\n"
      "      yield %c\n"
      "    }\n"
      "    yield %t * 2\n"
      "  }\n"
      "  %f = tile.full([2, 8], i64, i64(%s))\n"
      "  %o1 = tile.store(%f, [0, 0], %o)\n"
      "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_I64, 2, 8, D_ANY, 1);
  c->args[1] = scalar_spec(PTO_DTYPE_INDEX, 0, 4);
  c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, 11);
  c->nargs = 3;

  static const char *sexpr_text =
      "kernel @sexpr(out %oi: tensor[1,20] i64, out %of: tensor[1,10] f32, %a: i32, %b: i32,"
      " %x: f32, %y: f32, %u: u8, %v: u8, %h: f16) -> (tensor[1,20] i64, tensor[1,10] f32) {\n"
      "  %e0 = i64(%a / %b)\n"
      "  %e1 = i64(mod(%a, %b))\n"
      "  %e2 = i64(min(%a, %b))\n"
      "  %e3 = i64(max(%u, %v))\n"
      "  %e4 = i64(%u - %v)\n"
      "  %e5 = i64(%a < %b && !(%x > %y) || %u == %v)\n"
      "  %e6 = i64(%x)\n"
      "  %e7 = i64(%u / %v)\n"
      "  %e8 = i64(mod(%u, %v))\n"
      "  %e9 = i64(i8(%a * 1000))\n"
      "  %e10 = i64(-%a)\n"
      "  %e11 = i64(%a * %b - %a / 3)\n"
      "  %e12 = i64(u8(%x * 100.0))\n"
      "  %e13 = i64(f16(%x) > %h)\n"
      "  %e14 = i64(%a != %b)\n"
      "  %e15 = i64(bool(%a))\n"
      "  %e16 = i64(mod(-%a, %b))\n"
      "  %e17 = i64(%b != 0 && %a / %b > 1)\n"
      "  %e18 = i64(i16(%y * 1000.0))\n"
      "  %e19 = i64(%a) * 3000000000 / 7\n"
      "%TILES%"
      "  %f0 = %x / %y\n"
      "  %f1 = mod(%x, %y)\n"
      "  %f2 = f32(%h) * %x\n"
      "  %f3 = f32(f16(%x) + %h)\n"
      "  %f4 = min(%x, %y)\n"
      "  %f5 = f32(%a) / f32(%b)\n"
      "  %f6 = f32(bf16(%x) * bf16(%y))\n"
      "  %f7 = -%x + 0.1\n"
      "  %f8 = f32(f64(%x) / 3.0)\n"
      "  %f9 = f32(f16(f64(%y) * 1.0e-3))\n"
      "%FTILES%"
      "  return %oi, %of\n}\n";
  {
    char tiles[4096] = "", ftiles[2048] = "";
    for (int i = 0; i < 20; i++) {
      char line[256];
      snprintf(
          line, sizeof line,
          "  %%t%d = tile.full([1, 1], i64, %%e%d)\n  %%s%d = tile.store(%%t%d, [0, %d], %%oi)\n",
          i, i, i, i, i);
      strcat(tiles, line);
    }
    for (int i = 0; i < 10; i++) {
      char line[256];
      snprintf(
          line, sizeof line,
          "  %%g%d = tile.full([1, 1], f32, %%f%d)\n  %%w%d = tile.store(%%g%d, [0, %d], %%of)\n",
          i, i, i, i, i);
      strcat(ftiles, line);
    }
    char *t1 = strdup(sexpr_text);
    char *p = strstr(t1, "%TILES%");
    *p = 0;
    char *q = strstr(p + 7, "%FTILES%");
    *q = 0;
    char *text = dupf("%s%s%s%s%s", t1, tiles, p + 7, ftiles, q + 8);
    free(t1);
    static const int64_t ab[][2] = {{17, 5},   {-17, 5}, {17, -5},
                                    {-17, -5}, {7, 0},   {-2147483647 - 1, -1}};
    for (int k = 0; k < 6; k++) {
      char kn[32], nm[96];
      snprintf(kn, sizeof kn, "sexpr");
      snprintf(nm, sizeof nm, "scalar_expressions_a%lld_b%lld", (long long)ab[k][0],
               (long long)ab[k][1]);
      c = misc_case(kn, nm, k == 0 ? text : "");
      c->args[0] = tensor2(PTO_DTYPE_I64, 1, 20, D_ANY, 1);
      c->args[1] = tensor2(PTO_DTYPE_F32, 1, 10, D_ANY, 1);
      c->args[2] = scalar_spec(PTO_DTYPE_I32, 0, ab[k][0]);
      c->args[3] = scalar_spec(PTO_DTYPE_I32, 0, ab[k][1]);
      c->args[4] = scalar_spec(PTO_DTYPE_F32, k == 2 ? -3.37 : 2.71828, 0);
      c->args[5] = scalar_spec(PTO_DTYPE_F32, k == 3 ? 0.0 : -1.25, 0);
      c->args[6] = scalar_spec(PTO_DTYPE_U8, 0, 200);
      c->args[7] = scalar_spec(PTO_DTYPE_U8, 0, k == 1 ? 200 : 7);
      c->args[8] = scalar_spec(PTO_DTYPE_F16, 2.5, 0);
      c->nargs = 9;
      if (ab[k][1] == 0) c->expect_rc = PTO_KERNEL_ERR_DIV_ZERO;
      if (k == 1) c->check = check_sexpr_m17_5;
    }
    free(text);
  }

  c = misc_case("fullmove", "tile_full_move_create_bf16",
                "kernel @fullmove(%a: tensor[6,10] bf16, out %o: tensor[6,10] bf16, %v: bf16)"
                " -> (tensor[6,10] bf16) {\n"
                "  %f = tile.full([6, 10], bf16, %v)\n"
                "  %t = tile.load(%a, [0, 0], [6, 10], space=mat)\n"
                "  %m = tile.move(%t, space=vec)\n"
                "  %c = tile.create([6, 10], bf16)\n"
                "  %s = tile.add(%m, %f)\n"
                "  %s2 = tile.mul(%s, %m)\n"
                "  %o1 = tile.store(%s2, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_BF16, 6, 10, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_BF16, 6, 10, D_ANY, 1);
  c->args[2] = scalar_spec(PTO_DTYPE_BF16, 1.3, 0);
  c->nargs = 3;

  c = misc_case("chain", "fused_elementwise_chain_f16",
                "kernel @chain(%a: tensor[R,C] f16, %b: tensor[R,C] f16, out %o: tensor[R,C] f16,"
                " out %p: tensor[R,C] f16) -> (tensor[R,C] f16, tensor[R,C] f16) {\n"
                "  %ta = tile.load(%a, [0, 0], [16, 64])\n"
                "  %tb = tile.load(%b, [0, 0], [16, 64])\n"
                "  %t1 = tile.muls(%ta, 1.7)\n"
                "  %t2 = tile.sub(%t1, %tb)\n"
                "  %t3 = tile.relu(%t2)\n"
                "  %t4 = tile.maxs(%t3, 0.25)\n"
                "  %t5 = tile.mul(%t4, %t1)\n"
                "  %t6 = tile.cast(%t5, f32)\n"
                "  %t7 = tile.sqrt(%t6)\n"
                "  %t8 = tile.cast(%t7, f16)\n"
                "  %t9 = tile.div(%t8, %tb)\n"
                "  %o1 = tile.store(%t9, [0, 0], %o)\n"
                "  %p1 = tile.store(%t2, [0, 0], %p)\n"
                "  return %o1, %p1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F16, 16, 64, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F16, 16, 64, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F16, 16, 64, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_F16, 16, 64, D_ANY, 1);
  c->nargs = 4;

  c = misc_case(
      "softmax", "row_softmax_f32_pad_min",
      "kernel @softmax(%x: tensor[R,64] f32, out %y: tensor[R,64] f32) -> (tensor[R,64] f32) {\n"
      "  %t = tile.load(%x, [0, 0], [16, 64], valid=[R, 60], pad=min)\n"
      "  %m = tile.row_max(%t)\n"
      "  %d = tile.row_expand_sub(%t, %m)\n"
      "  %e = tile.exp(%d)\n"
      "  %s = tile.row_sum(%e)\n"
      "  %o = tile.row_expand_div(%e, %s)\n"
      "  %y1 = tile.store(%o, [0, 0], %y)\n"
      "  return %y1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 13, 64, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 13, 64, D_ANY, 1);
  c->nargs = 2;

  /* row expansions inside fused runs and streamed stores: the softmax of bench/kernels (the
   * subtraction fused with exp, the division streamed to the tensor, max along the row), in f32
   * and bf16; chains that mix scalar and row operands with a row result that must stay live; an
   * [R,1] operand computed inside what would otherwise be one run (it must not be fused) */
  c = misc_case("smx", "row_softmax_f32_8x1024_streamed",
                "kernel @smx(%x: tensor[16,1024] f32, out %y: tensor[16,1024] f32)\n"
                "    -> (tensor[16,1024] f32) {\n"
                "  for %i in range(0, 2) {\n"
                "    %t = tile.load(%x, [%i * 8, 0], [8, 1024])\n" SOFTMAX_STEPS(
                    "    ") "    tile.store(%p, [%i * 8, 0], %y)\n"
                            "  }\n"
                            "  return %y\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 16, 1024, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 16, 1024, D_ANY, 1);
  c->nargs = 2;

  c = misc_case(
      "smxb", "row_softmax_bf16_16x64",
      "kernel @smxb(%x: tensor[16,64] bf16, out %y: tensor[16,64] bf16) -> (tensor[16,64] bf16) {\n"
      "  %t = tile.load(%x, [0, 0], [16, 64])\n"
      "  %m = tile.row_max(%t)\n"
      "  %d = tile.row_expand_sub(%t, %m)\n"
      "  %e = tile.exp(%d)\n"
      "  %s = tile.row_sum(%e)\n"
      "  %p = tile.row_expand_div(%e, %s)\n"
      "  %y1 = tile.store(%p, [0, 0], %y)\n"
      "  return %y1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_BF16, 16, 64, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_BF16, 16, 64, D_ANY, 1);
  c->nargs = 2;

  c = misc_case(
      "rexp", "row_expand_in_fused_runs_f32",
      "kernel @rexp(%a: tensor[16,48] f32, %v: tensor[16,1] f32, out %o: tensor[16,48] f32,\n"
      "             out %q: tensor[16,48] f32) -> (tensor[16,48] f32, tensor[16,48] f32) {\n"
      "  %ta = tile.load(%a, [0, 0], [16, 48])\n"
      "  %tv = tile.load(%v, [0, 0], [16, 1])\n"
      "  %x = tile.muls(%ta, f32(2))\n"
      "  %y = tile.row_expand_add(%x, %tv)\n"
      "  %z = tile.row_expand_mul(%y, %tv)\n"
      "  %s = tile.row_sum(%z)\n"
      "  %w = tile.row_expand_div(%z, %s)\n"
      "  %u = tile.row_expand_sub(%w, %tv)\n"
      "  %o1 = tile.store(%u, [0, 0], %o)\n"
      "  %q1 = tile.store(%y, [0, 0], %q)\n"
      "  return %o1, %q1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 16, 48, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 16, 1, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F32, 16, 48, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_F32, 16, 48, D_ANY, 1);
  c->nargs = 4;

  /* column expansions (kind 7) in fused runs: the [1,C] operand read at each element's column
   * from its buffer (f32 with a row expansion and an exp in the run: explicit vectors; i32 with
   * a division by it), and one computed by the run itself ([1,C] runs, R = 1) */
  c = misc_case("cexp", "col_expand_in_fused_runs_f32",
                "kernel @cexp(%a: tensor[16,48] f32, %v: tensor[1,48] f32, %r: tensor[16,1] f32,\n"
                "             out %o: tensor[16,48] f32, out %q: tensor[1,48] f32)\n"
                "    -> (tensor[16,48] f32, tensor[1,48] f32) {\n"
                "  %ta = tile.load(%a, [0, 0], [16, 48])\n"
                "  %tv = tile.load(%v, [0, 0], [1, 48])\n"
                "  %tr = tile.load(%r, [0, 0], [16, 1])\n"
                "  %x = tile.muls(%ta, f32(2))\n"
                "  %y = tile.col_expand_add(%x, %tv)\n"
                "  %z = tile.row_expand_mul(%y, %tr)\n"
                "  %w = tile.col_expand_expdif(%z, %tv)\n"
                "  %u = tile.col_expand_max(%w, %tv)\n"
                "  %o1 = tile.store(%u, [0, 0], %o)\n"
                "  %d = tile.adds(%tv, f32(0.5))\n"
                "  %e = tile.col_expand_mul(%tv, %d)\n"
                "  %f = tile.col_expand_sub(%e, %d)\n"
                "  %q1 = tile.store(%f, [0, 0], %q)\n"
                "  return %o1, %q1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 16, 48, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 1, 48, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F32, 16, 1, D_ANY, 0);
  c->args[3] = tensor2(PTO_DTYPE_F32, 16, 48, D_ANY, 1);
  c->args[4] = tensor2(PTO_DTYPE_F32, 1, 48, D_ANY, 1);
  c->nargs = 5;

  c = misc_case(
      "cexi", "col_expand_in_fused_runs_i32",
      "kernel @cexi(%a: tensor[16,40] i32, %v: tensor[1,40] i32, out %o: tensor[16,40] i32)\n"
      "    -> (tensor[16,40] i32) {\n"
      "  %ta = tile.load(%a, [0, 0], [16, 40])\n"
      "  %tv = tile.load(%v, [0, 0], [1, 40])\n"
      "  %x = tile.adds(%ta, i32(3))\n"
      "  %y = tile.col_expand_div(%x, %tv)\n"
      "  %z = tile.col_expand_mul(%y, %tv)\n"
      "  %w = tile.sub(%x, %z)\n"
      "  %o1 = tile.store(%w, [0, 0], %o)\n"
      "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_I32, 16, 40, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_I32, 1, 40, D_NONZERO, 0);
  c->args[2] = tensor2(PTO_DTYPE_I32, 16, 40, D_ANY, 1);
  c->nargs = 3;

  c = misc_case(
      "rexi", "row_expand_in_fused_runs_i32_and_column_tiles",
      "kernel @rexi(%a: tensor[16,40] i32, %v: tensor[16,1] i32, out %o: tensor[16,40] i32,\n"
      "             out %q: tensor[16,1] i32) -> (tensor[16,40] i32, tensor[16,1] i32) {\n"
      "  %ta = tile.load(%a, [0, 0], [16, 40])\n"
      "  %tv = tile.load(%v, [0, 0], [16, 1])\n"
      "  %x = tile.adds(%ta, i32(3))\n"
      "  %y = tile.row_expand_div(%x, %tv)\n"
      "  %z = tile.row_expand_mul(%y, %tv)\n"
      "  %o1 = tile.store(%z, [0, 0], %o)\n"
      "  %d = tile.adds(%tv, i32(1))\n"
      "  %e = tile.row_expand_mul(%tv, %d)\n"
      "  %f = tile.row_expand_add(%e, %d)\n"
      "  %q1 = tile.store(%f, [0, 0], %q)\n"
      "  return %o1, %q1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_I32, 16, 40, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_I32, 16, 1, D_NONZERO, 0);
  c->args[2] = tensor2(PTO_DTYPE_I32, 16, 40, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_I32, 16, 1, D_ANY, 1);
  c->nargs = 4;

  /* loads that could be views of their tensor and must not be: a store into the loaded tensor
   * while the tile lives, an in-place op that would write into the tile's buffer (then the
   * tensor is loaded again), a row operand read by a streamed run whose store overwrites it
   * (same tensor, other rows) */
  c = misc_case("vw1", "load_view_refused_by_store_into_source",
                "kernel @vw1(inout %x: tensor[8,64] f32, out %y: tensor[8,64] f32)\n"
                "    -> (tensor[8,64] f32, tensor[8,64] f32) {\n"
                "  %t = tile.load(%x, [0, 0], [8, 64])\n"
                "  %u = tile.adds(%t, f32(1))\n"
                "  %x1 = tile.store(%u, [0, 0], %x)\n"
                "  %m = tile.row_max(%t)\n"
                "  %v = tile.row_expand_sub(%t, %m)\n"
                "  %y1 = tile.store(%v, [0, 0], %y)\n"
                "  return %x1, %y1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 64, D_ANY, 1);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 64, D_ANY, 1);
  c->nargs = 2;

  c = misc_case(
      "vw2", "load_view_refused_by_in_place_op",
      "kernel @vw2(%x: tensor[8,64] f32, out %y: tensor[8,1] f32, out %z: tensor[8,64] f32)\n"
      "    -> (tensor[8,1] f32, tensor[8,64] f32) {\n"
      "  %t = tile.load(%x, [0, 0], [8, 64])\n"
      "  %m = tile.row_max(%t)\n"
      "  %u = tile.row_expand_sub(%t, %m)\n"
      "  %w = tile.muls(%u, f32(3))\n"
      "  %s = tile.row_sum(%w)\n"
      "  %y1 = tile.store(%s, [0, 0], %y)\n"
      "  %t2 = tile.load(%x, [0, 0], [8, 64])\n"
      "  %z1 = tile.store(%t2, [0, 0], %z)\n"
      "  return %y1, %z1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 64, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 1, D_ANY, 1);
  c->args[2] = tensor2(PTO_DTYPE_F32, 8, 64, D_ANY, 1);
  c->nargs = 3;

  c = misc_case("vw3", "load_view_refused_for_streamed_row_operand",
                "kernel @vw3(inout %x: tensor[16,16] f32) -> (tensor[16,16] f32) {\n"
                "  %v = tile.load(%x, [0, 15], [16, 1])\n"
                "  %t = tile.load(%x, [0, 0], [16, 16])\n"
                "  %m = tile.row_max(%t)\n"
                "  %a = tile.add(%t, %t)\n"
                "  %p = tile.row_expand_add(%a, %v)\n"
                "  %x1 = tile.store(%p, [0, 0], %x)\n"
                "  return %x1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 16, 16, D_ANY, 1);
  c->nargs = 1;

  c = misc_case(
      "tdim", "tensor_dim_drives_loop_and_valid",
      "kernel @tdim(%a: tensor[R,C] f32, out %o: tensor[R,C] f32) -> (tensor[R,C] f32) {\n"
      "  %rows = tensor.dim(%a, 0)\n"
      "  %cols = tensor.dim(%a, 1)\n"
      "  %nb = (%rows + 3) / 4\n"
      "  for %i in range(0, %nb) {\n"
      "    %t = tile.load(%a, [%i * 4, 0], [4, 16], valid=[min(4, %rows - %i * 4), %cols - 1])\n"
      "    %u = tile.adds(%t, f32(%cols))\n"
      "    %o1 = tile.store(%u, [%i * 4, 0], %o)\n"
      "  }\n"
      "  return %o\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 11, 13, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 11, 13, D_ANY, 1);
  c->nargs = 2;

  c = misc_case(
      "accst", "tile_store_acc_f32_to_bf16_and_f16",
      "kernel @accst(%l: tensor[16,8] bf16, %r: tensor[8,32] bf16, out %c: tensor[16,32] bf16,"
      " out %d: tensor[16,32] f16) -> (tensor[16,32] bf16, tensor[16,32] f16) {\n"
      "  %tl = tile.load(%l, [0, 0], [16, 8], space=mat)\n"
      "  %tr = tile.load(%r, [0, 0], [8, 32], space=mat)\n"
      "  %ml = tile.move(%tl, space=left)\n"
      "  %mr = tile.move(%tr, space=right)\n"
      "  %o = tile.matmul(%ml, %mr)\n"
      "  %c1 = tile.store(%o, [0, 0], %c)\n"
      "  %d1 = tile.store(%o, [0, 0], %d)\n"
      "  return %c1, %d1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_BF16, 16, 8, D_WIDE, 0);
  c->args[1] = tensor2(PTO_DTYPE_BF16, 8, 32, D_WIDE, 0);
  c->args[2] = tensor2(PTO_DTYPE_BF16, 16, 32, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_F16, 16, 32, D_ANY, 1);
  c->nargs = 4;

  /* buffer planning: values live across loops and branches must survive the reuse */
  c = misc_case("live", "plan_value_live_across_loop_keeps_buffer",
                "kernel @live(%a: tensor[8,16] f32, out %o: tensor[8,16] f32, %n: index)"
                " -> (tensor[8,16] f32) {\n"
                "  %x = tile.load(%a, [0, 0], [8, 16])\n"
                "  %y = tile.muls(%x, 2)\n"
                "  %r = for %i in range(0, %n) iter(%acc = %y) {\n"
                "    %t = tile.adds(%x, f32(%i))\n"
                "    %u = tile.add(%acc, %t)\n"
                "    yield %u\n"
                "  }\n"
                "  %z = tile.sub(%r, %x)\n"
                "  %o1 = tile.store(%z, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 16, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 16, D_ANY, 1);
  c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, 4);
  c->nargs = 3;

  c = misc_case("ifkeep", "plan_if_else_yields_value_used_after",
                "kernel @ifkeep(%a: tensor[8,16] f32, out %o: tensor[8,16] f32, %c: i32)"
                " -> (tensor[8,16] f32) {\n"
                "  %s = tile.load(%a, [0, 0], [8, 16])\n"
                "  %v = if %c > 0 {\n"
                "    %r = tile.relu(%s)\n"
                "    yield %r\n"
                "  } else {\n"
                "    yield %s\n"
                "  }\n"
                "  %q = tile.add(%v, %s)\n"
                "  %q2 = tile.mul(%q, %v)\n"
                "  %o1 = tile.store(%q2, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 16, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 16, D_ANY, 1);
  c->args[2] = scalar_spec(PTO_DTYPE_I32, 0, 1);
  c->nargs = 3;

  c = misc_case(
      "fusedead", "plan_fused_run_operands_die_midway",
      "kernel @fusedead(%a: tensor[8,16] i32, %b: tensor[8,16] i32, out %o: tensor[8,16] i32,"
      " out %p: tensor[8,16] i32, out %q: tensor[8,16] i32)"
      " -> (tensor[8,16] i32, tensor[8,16] i32, tensor[8,16] i32) {\n"
      "  %ta = tile.load(%a, [0, 0], [8, 16])\n"
      "  %tb = tile.load(%b, [0, 0], [8, 16])\n"
      "  %c = tile.add(%ta, %tb)\n"
      "  %d = tile.mul(%tb, %tb)\n"
      "  %e = tile.sub(%c, %d)\n"
      "  %f = tile.maxs(%e, -3)\n"
      "  %g = tile.mul(%f, %c)\n"
      "  %o1 = tile.store(%c, [0, 0], %o)\n"
      "  %p1 = tile.store(%d, [0, 0], %p)\n"
      "  %q1 = tile.store(%g, [0, 0], %q)\n"
      "  return %o1, %p1, %q1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_I32, 8, 16, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_I32, 8, 16, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_I32, 8, 16, D_ANY, 1);
  c->args[3] = tensor2(PTO_DTYPE_I32, 8, 16, D_ANY, 1);
  c->args[4] = tensor2(PTO_DTYPE_I32, 8, 16, D_ANY, 1);
  c->nargs = 5;

  c = misc_case(
      "kloop", "for_matmul_acc_k_loop_f16_in_place",
      "kernel @kloop(%l: tensor[16,K] f16, %r: tensor[K,32] f16, out %c: tensor[16,32] f32)"
      " -> (tensor[16,32] f32) {\n"
      "  %k = tensor.dim(%l, 1)\n"
      "  %nk = %k / 8\n"
      "  %l0 = tile.load(%l, [0, 0], [16, 8], space=mat)\n"
      "  %r0 = tile.load(%r, [0, 0], [8, 32], space=mat)\n"
      "  %ml0 = tile.move(%l0, space=left)\n"
      "  %mr0 = tile.move(%r0, space=right)\n"
      "  %a0 = tile.matmul(%ml0, %mr0)\n"
      "  %acc = for %i in range(1, %nk) iter(%a = %a0) {\n"
      "    %tl = tile.load(%l, [0, %i * 8], [16, 8], space=mat)\n"
      "    %tr = tile.load(%r, [%i * 8, 0], [8, 32], space=mat)\n"
      "    %ml = tile.move(%tl, space=left)\n"
      "    %mr = tile.move(%tr, space=right)\n"
      "    %a2 = tile.matmul_acc(%a, %ml, %mr)\n"
      "    yield %a2\n"
      "  }\n"
      "  %c1 = tile.store(%acc, [0, 0], %c)\n"
      "  return %c1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F16, 16, 40, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F16, 40, 32, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F32, 16, 32, D_ANY, 1);
  c->nargs = 3;

  /* streamed runs (load, elementwise, store in one loop) and the cases that must fall back to
   * the buffered lowering: an in-place update, an overlapping shifted store, a load whose
   * valid region is narrower than the store's, a run over tiles without loads */
  c = misc_case("stream_inplace", "stream_in_place_update_is_buffered_f32",
                "kernel @stream_inplace(inout %x: tensor[8,40] f32, %b: tensor[8,40] f32)"
                " -> (tensor[8,40] f32) {\n"
                "  %t = tile.load(%x, [0, 0], [8, 40])\n"
                "  %u = tile.load(%b, [0, 0], [8, 40])\n"
                "  %s = tile.muls(%t, 0.5)\n"
                "  %v = tile.add(%s, %u)\n"
                "  %x1 = tile.store(%v, [0, 0], %x)\n"
                "  return %x1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 40, D_ANY, 2);
  c->args[1] = tensor2(PTO_DTYPE_F32, 8, 40, D_ANY, 0);
  c->nargs = 2;

  c = misc_case("stream_shift", "stream_overlapping_shifted_store_is_buffered_f32",
                "kernel @stream_shift(inout %x: tensor[8,40] f32) -> (tensor[8,40] f32) {\n"
                "  %t = tile.load(%x, [0, 0], [8, 40], valid=[8, 39])\n"
                "  %s = tile.adds(%t, 1)\n"
                "  %x1 = tile.store(%s, [0, 1], %x)\n"
                "  return %x1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 8, 40, D_ANY, 2);
  c->nargs = 1;

  c = misc_case("stream_narrow", "stream_load_narrower_than_store_is_buffered_f32",
                "kernel @stream_narrow(%a: tensor[R,32] f32, %b: tensor[R,32] f32,"
                " out %o: tensor[R,32] f32) -> (tensor[R,32] f32) {\n"
                "  %ta = tile.load(%a, [0, 0], [8, 32], valid=[R, 32])\n"
                "  %tb = tile.load(%b, [0, 0], [8, 32], valid=[R, 20], pad=max)\n"
                "  %m = tile.min(%ta, %tb)\n"
                "  %o1 = tile.store(%m, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_F32, 5, 32, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 5, 32, D_ANY, 0);
  c->args[2] = tensor2(PTO_DTYPE_F32, 5, 32, D_ANY, 1);
  c->nargs = 3;

  c = misc_case("stream_tiles", "stream_run_over_tiles_without_loads_bf16",
                "kernel @stream_tiles(%a: tensor[R,16] bf16, out %o: tensor[R,16] f32)"
                " -> (tensor[R,16] f32) {\n"
                "  %t = tile.load(%a, [0, 0], [8, 16], valid=[R, 16])\n"
                "  %m = tile.row_max(%t)\n"
                "  %d = tile.row_expand_sub(%t, %m)\n"
                "  %e = tile.muls(%d, 3)\n"
                "  %f = tile.abs(%e)\n"
                "  %g = tile.cast(%f, f32)\n"
                "  %o1 = tile.store(%g, [0, 0], %o)\n"
                "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_BF16, 6, 16, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_F32, 6, 16, D_ANY, 1);
  c->nargs = 2;

  c = misc_case(
      "idiv_zero", "tile_div_i32_zero_divisor_is_launch_error",
      "kernel @idiv_zero(%a: tensor[4,8] i32, %b: tensor[4,8] i32, out %o: tensor[4,8] i32)"
      " -> (tensor[4,8] i32) {\n"
      "  %ta = tile.load(%a, [0, 0], [4, 8])\n"
      "  %tb = tile.load(%b, [0, 0], [4, 8])\n"
      "  %tc = tile.div(%ta, %tb)\n"
      "  %o1 = tile.store(%tc, [0, 0], %o)\n"
      "  return %o1\n}\n");
  c->args[0] = tensor2(PTO_DTYPE_I32, 4, 8, D_ANY, 0);
  c->args[1] = tensor2(PTO_DTYPE_I32, 4, 8, D_WITHZERO, 0);
  c->args[2] = tensor2(PTO_DTYPE_I32, 4, 8, D_ANY, 1);
  c->nargs = 3;
  c->expect_rc = PTO_KERNEL_ERR_DIV_ZERO;
}

/* Random straight-line and loop kernels over a pool of tiles: they stress the buffer planner
 * (in-place reuse, fused runs, values live across loops, carried buffers) against the
 * interpreter. Fixed seed. */
static void gen_random(void) {
  static const char *fops[] = {"add",  "sub",  "mul",  "max", "min", "adds",
                               "muls", "maxs", "relu", "neg", "abs", "div"};
  static const char *iops[] = {"add",  "sub",  "mul",  "max", "min", "adds",
                               "muls", "mins", "relu", "neg", "abs"};
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_I32, PTO_DTYPE_F16};
  uint64_t seed = 12345;
  for (int k = 0; k < 36; k++) {
    pto_dtype dt = dts[k % 3];
    int loop = (k / 3) % 2;
    const char *dn = pto_dtype_name(dt);
    int isf = pto_dtype_is_float(dt);
    char body[8192] = "";
    size_t bl = 0;
    int nv = 2; /* %v0, %v1 loaded */
    int first = 2;
    if (loop) {
      bl += (size_t)snprintf(body + bl, sizeof body - bl,
                             "  %%r = for %%i in range(0, %%n) iter(%%c = %%v0) {\n");
    }
    int nstmt = 5 + (int)((seed >> 7) % 9);
    int prev_n = nv;
    for (int j = 0; j < nstmt; j++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      int nops = isf ? 12 : 11;
      const char *op = (isf ? fops : iops)[(seed >> 33) % (uint64_t)nops];
      /* operands: any value so far (inside a loop: %c, %v1 or body values) */
      int pool = loop ? (nv - first) + 2 : nv;
      int x = (int)((seed >> 20) % (uint64_t)pool), y = (int)((seed >> 40) % (uint64_t)pool);
      char xa[16], ya[16];
      if (loop) {
        if (x < 2)
          snprintf(xa, sizeof xa, "%s", x == 0 ? "%c" : "%v1");
        else
          snprintf(xa, sizeof xa, "%%v%d", first + x - 2);
        if (y < 2)
          snprintf(ya, sizeof ya, "%s", y == 0 ? "%c" : "%v1");
        else
          snprintf(ya, sizeof ya, "%%v%d", first + y - 2);
      } else {
        snprintf(xa, sizeof xa, "%%v%d", x);
        snprintf(ya, sizeof ya, "%%v%d", y);
      }
      const char *ind = loop ? "    " : "  ";
      if (op[strlen(op) - 1] == 's' && strcmp(op, "abs") != 0)
        bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s%%v%d = tile.%s(%s, %s)\n", ind, nv,
                               op, xa, isf ? "0.75" : "3");
      else if (!strcmp(op, "relu") || !strcmp(op, "neg") || !strcmp(op, "abs"))
        bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s%%v%d = tile.%s(%s)\n", ind, nv, op,
                               xa);
      else
        bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s%%v%d = tile.%s(%s, %s)\n", ind, nv,
                               op, xa, ya);
      nv++;
    }
    (void)prev_n;
    const char *o0, *o1, *o2;
    char s0[16], s1[16], s2[16];
    if (loop) {
      bl += (size_t)snprintf(body + bl, sizeof body - bl, "    yield %%v%d\n  }\n", nv - 1);
      o0 = "%r";
      o1 = "%v0"; /* the init stays live after the loop */
      o2 = "%v1";
    } else {
      snprintf(s0, sizeof s0, "%%v%d", nv - 1);
      snprintf(s1, sizeof s1, "%%v%d", (int)((seed >> 11) % (uint64_t)nv));
      snprintf(s2, sizeof s2, "%%v%d", (int)((seed >> 27) % (uint64_t)nv));
      o0 = s0;
      o1 = s1;
      o2 = s2;
    }
    tcase *c = new_case("random");
    snprintf(c->kname, sizeof c->kname, "rnd%d_%s", k, dn);
    snprintf(c->name, sizeof c->name, "random_%s_kernel_%d_%s", loop ? "loop" : "straight", k, dn);
    c->text =
        dupf("kernel @%s(%%a: tensor[8,24] %s, %%b: tensor[8,24] %s, out %%o0: tensor[8,24] %s,"
             " out %%o1: tensor[8,24] %s, out %%o2: tensor[8,24] %s, %%n: index)"
             " -> (tensor[8,24] %s, tensor[8,24] %s, tensor[8,24] %s) {\n"
             "  %%v0 = tile.load(%%a, [0, 0], [8, 24])\n"
             "  %%v1 = tile.load(%%b, [0, 0], [8, 24])\n"
             "%s"
             "  %%p0 = tile.store(%s, [0, 0], %%o0)\n"
             "  %%p1 = tile.store(%s, [0, 0], %%o1)\n"
             "  %%p2 = tile.store(%s, [0, 0], %%o2)\n"
             "  return %%p0, %%p1, %%p2\n}\n",
             c->kname, dn, dn, dn, dn, dn, dn, dn, dn, body, o0, o1, o2);
    c->args[0] = tensor2(dt, 8, 24, isf ? D_ANY : D_SMALLINT, 0);
    c->args[1] = tensor2(dt, 8, 24, isf ? D_ANY : D_SMALLINT, 0);
    c->args[2] = tensor2(dt, 8, 24, D_ANY, 1);
    c->args[3] = tensor2(dt, 8, 24, D_ANY, 1);
    c->args[4] = tensor2(dt, 8, 24, D_ANY, 1);
    c->args[5] = scalar_spec(PTO_DTYPE_INDEX, 0, 3);
    c->nargs = 6;
  }
}

/* ---- second set: structural ops ------------------------------------------------------------ */

/* One structural case: kernel text from fmt (its first %s is the kernel name), arguments after. */
static tcase *struct_case(const char *kname, const char *name) {
  tcase *c = new_case("struct");
  snprintf(c->kname, sizeof c->kname, "%s", kname);
  snprintf(c->name, sizeof c->name, "%s", name);
  return c;
}

/* Arg reductions and products over every dtype, sort_idx both ways: small integers (ties) with
 * NaN, -0, +0 and infinities among the floats; partial tiles (pad values take part). */
static void gen_struct_reduce(void) {
  static const char *ops[] = {"row_prod",   "col_prod",   "row_argmax", "row_argmin",
                              "col_argmax", "col_argmin", "sort_idx",   "sort_idx_asc"};
  /* sort only: 4x40 (3x37 valid: a 64-lane sorting network over padding) and 2x100 (a full run
   * of 64 and a padded one, then a merge) */
  static const shape_case shapes[] = {
      {7, 13, 7, 13}, {16, 32, 11, 29}, {32, 64, 32, 64}, {4, 40, 3, 37}, {2, 100, 2, 97}};
  /* ties: small integers without NaN (a row of D_SPECIAL almost always holds one) */
  for (int ties = 0; ties < 2; ties++)
    for (int o = 0; o < 8; o++)
      for (int d = 0; d < N_ALL_DTYPES; d++)
        for (int sh = 0; sh < 5; sh++) {
          pto_dtype dt = k_all_dtypes[d];
          const shape_case *S = &shapes[sh];
          if (sh == 2 && o < 6 && o != 2 && o != 3) continue; /* 32x64: the benchmarked shapes */
          if (sh >= 3 && o < 6) continue;
          if (ties && (o < 2 || (dt != PTO_DTYPE_F32 && dt != PTO_DTYPE_I32))) continue;
          const char *dn = pto_dtype_name(dt);
          int sort = o >= 6, row = sort || o == 0 || o == 2 || o == 3, arg = o >= 2;
          int64_t orr = sort || row ? S->tr : 1, oc = sort ? S->tc : row ? 1 : S->tc;
          const char *odn = arg ? "i32" : dn;
          char kn[96], nm[96], op[64];
          snprintf(kn, sizeof kn, "st_%s_%s_%d%s", ops[o], dn, sh, ties ? "_t" : "");
          snprintf(nm, sizeof nm, "tile_%s_%s_%lldx%lld_on_%lldx%lld%s", ops[o], dn,
                   (long long)S->tr, (long long)S->tc, (long long)S->r, (long long)S->c,
                   ties ? "_ties" : "");
          snprintf(op, sizeof op, "%s", sort ? "sort_idx" : ops[o]);
          tcase *c = struct_case(kn, nm);
          c->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[%lld,%lld] %s)"
                         " -> (tensor[%lld,%lld] %s) {\n"
                         "  %%ta = tile.load(%%a, [0, 0], [%lld, %lld], pad=%s)\n"
                         "  %%tc = tile.%s(%%ta%s)\n"
                         "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                         "  return %%c1\n}\n",
                         kn, dn, (long long)orr, (long long)oc, odn, (long long)orr, (long long)oc,
                         odn, (long long)S->tr, (long long)S->tc, o == 3 ? "max" : "min", op,
                         o == 7   ? ", order=asc"
                         : o == 6 ? ", order=desc"
                                  : "");
          c->args[0] = tensor2(dt, S->r, S->c, o < 2 ? D_ANY : ties ? D_SMALLINT : D_SPECIAL, 0);
          c->args[1] = tensor2(arg ? PTO_DTYPE_I32 : dt, orr, oc, D_ANY, 1);
          c->nargs = 2;
        }
}

/* Moves over every dtype: broadcasts, transpose (valid regions swap), extract and assemble at
 * static and runtime offsets, concat, reshape, fillpad with each pad. */
static void gen_struct_moves(void) {
  for (int d = 0; d < N_ALL_DTYPES; d++) {
    pto_dtype dt = k_all_dtypes[d];
    const char *dn = pto_dtype_name(dt);
    char kn[96], nm[96];
    for (int rc = 0; rc < 2; rc++) {
      snprintf(kn, sizeof kn, "st_%s_expand_%s", rc ? "col" : "row", dn);
      snprintf(nm, sizeof nm, "tile_%s_expand_%s_10x24", rc ? "col" : "row", dn);
      tcase *c = struct_case(kn, nm);
      c->text = dupf("kernel @%s(%%v: tensor[%d,%d] %s, out %%c: tensor[10,24] %s)"
                     " -> (tensor[10,24] %s) {\n"
                     "  %%tv = tile.load(%%v, [0, 0], [%d, %d])\n"
                     "  %%tc = tile.%s_expand(%%tv, [10, 24])\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     kn, rc ? 1 : 10, rc ? 24 : 1, dn, dn, dn, rc ? 1 : 10, rc ? 24 : 1,
                     rc ? "col" : "row");
      c->args[0] = tensor2(dt, rc ? 1 : 10, rc ? 24 : 1, D_ANY, 0);
      c->args[1] = tensor2(dt, 10, 24, D_ANY, 1);
      c->nargs = 2;
    }
    static const shape_case tshapes[] = {{7, 13, 5, 11}, {64, 64, 64, 64}, {16, 40, 16, 40}};
    for (int sh = 0; sh < 3; sh++) {
      const shape_case *S = &tshapes[sh];
      snprintf(kn, sizeof kn, "st_transpose_%s_%d", dn, sh);
      snprintf(nm, sizeof nm, "tile_transpose_%s_%lldx%lld_valid_%lldx%lld", dn, (long long)S->tr,
               (long long)S->tc, (long long)S->r, (long long)S->c);
      tcase *c = struct_case(kn, nm);
      c->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[C,R] %s)"
                     " -> (tensor[C,R] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [%lld, %lld], valid=[R, C])\n"
                     "  %%tc = tile.transpose(%%ta)\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     kn, dn, dn, dn, (long long)S->tr, (long long)S->tc);
      c->args[0] = tensor2(dt, S->r, S->c, D_ANY, 0);
      c->args[1] = tensor2(dt, S->c, S->r, D_ANY, 1);
      c->nargs = 2;
    }
    /* extract [4,5] at (2,3) and at runtime (r0, c0); assemble it back at runtime (c0, r0) into
     * a concat of the two; reshape; fillpad of a partial load with each pad */
    snprintf(kn, sizeof kn, "st_moves_%s", dn);
    snprintf(nm, sizeof nm, "tile_extract_assemble_concat_reshape_fillpad_%s", dn);
    tcase *c = struct_case(kn, nm);
    c->text =
        dupf("kernel @%s(%%a: tensor[10,24] %s, %%b: tensor[R,C] %s, out %%e: tensor[4,10] %s,"
             " out %%f: tensor[20,24] %s, out %%g: tensor[8,24] %s, %%r0: index, %%c0: index)"
             " -> (tensor[4,10] %s, tensor[20,24] %s, tensor[8,24] %s) {\n"
             "  %%ta = tile.load(%%a, [0, 0], [10, 24])\n"
             "  %%tb = tile.load(%%b, [0, 0], [8, 12], valid=[R, C])\n"
             "  %%x1 = tile.extract(%%ta, [2, 3], [4, 5])\n"
             "  %%x2 = tile.extract(%%ta, [%%r0, %%c0], [4, 5])\n"
             "  %%x = tile.concat(%%x1, %%x2)\n"
             "  %%e1 = tile.store(%%x, [0, 0], %%e)\n"
             "  %%p0 = tile.fillpad(%%tb, pad=min)\n"
             "  %%p1 = tile.fillpad(%%tb, pad=max)\n"
             "  %%p2 = tile.fillpad(%%tb)\n"
             "  %%p = tile.concat(%%p0, %%p1)\n"
             "  %%y = tile.assemble(%%ta, %%x2, [%%c0, %%r0])\n"
             "  %%z = tile.reshape(%%y, [20, 12])\n"
             "  %%z1 = tile.concat(%%z, %%z)\n"
             "  %%f1 = tile.store(%%z1, [0, 0], %%f)\n"
             "  %%g0 = tile.extract(%%p, [0, 6], [8, 12])\n"
             "  %%g2 = tile.concat(%%g0, %%p2)\n"
             "  %%g1 = tile.store(%%g2, [0, 0], %%g)\n"
             "  return %%e1, %%f1, %%g1\n}\n",
             kn, dn, dn, dn, dn, dn, dn, dn, dn);
    c->args[0] = tensor2(dt, 10, 24, D_ANY, 0);
    c->args[1] = tensor2(dt, 6, 9, D_ANY, 0);
    c->args[2] = tensor2(dt, 4, 10, D_ANY, 1);
    c->args[3] = tensor2(dt, 20, 24, D_ANY, 1);
    c->args[4] = tensor2(dt, 8, 24, D_ANY, 1);
    c->args[5] = scalar_spec(PTO_DTYPE_INDEX, 0, 5);
    c->args[6] = scalar_spec(PTO_DTYPE_INDEX, 0, 2);
    c->nargs = 7;
    /* tri, lower and upper, at a runtime diagonal */
    for (int up = 0; up < 2; up++)
      for (int dg = -2; dg <= 3; dg += 5) {
        snprintf(kn, sizeof kn, "st_tri_%s_%d_%d", dn, up, dg + 2);
        snprintf(nm, sizeof nm, "tile_tri_%s%s_diagonal_%d", dn, up ? "_upper" : "", dg);
        c = struct_case(kn, nm);
        c->text = dupf("kernel @%s(out %%c: tensor[9,13] %s, %%d: index) -> (tensor[9,13] %s) {\n"
                       "  %%t = tile.tri(%%d, [9, 13], dtype=%s, upper=%s)\n"
                       "  %%c1 = tile.store(%%t, [0, 0], %%c)\n"
                       "  return %%c1\n}\n",
                       kn, dn, dn, dn, up ? "true" : "false");
        c->args[0] = tensor2(dt, 9, 13, D_ANY, 1);
        c->args[1] = scalar_spec(PTO_DTYPE_INDEX, 0, dg);
        c->nargs = 2;
      }
  }
  static const pto_dtype cdts[] = {PTO_DTYPE_I32, PTO_DTYPE_I16, PTO_DTYPE_I64};
  for (int d = 0; d < 3; d++)
    for (int desc = 0; desc < 2; desc++) {
      const char *dn = pto_dtype_name(cdts[d]);
      char kn[96], nm[96];
      snprintf(kn, sizeof kn, "st_ci_%s_%d", dn, desc);
      snprintf(nm, sizeof nm, "tile_ci_%s%s_runtime_start", dn, desc ? "_descending" : "");
      tcase *c = struct_case(kn, nm);
      c->text = dupf("kernel @%s(out %%c: tensor[1,37] %s, %%s: %s) -> (tensor[1,37] %s) {\n"
                     "  %%t = tile.ci(%%s, [1, 37], dtype=%s, descending=%s)\n"
                     "  %%c1 = tile.store(%%t, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     kn, dn, dn, dn, dn, desc ? "true" : "false");
      c->args[0] = tensor2(cdts[d], 1, 37, D_ANY, 1);
      /* i16 wraps past 32767 */
      c->args[1] = scalar_spec(cdts[d], 0, cdts[d] == PTO_DTYPE_I16 ? 32750 : -5);
      c->nargs = 2;
    }
}

/* Gathers and scatters with indices made in the kernel (sort_idx: a permutation of the
 * columns, so in range; column 0 of it repeats rows across a tile: a later row wins), and with
 * indices from a tensor of random values: a launch error, in the interpreter too. */
static void gen_struct_gather(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_BF16, PTO_DTYPE_I8,
                                  PTO_DTYPE_I64, PTO_DTYPE_F64,  PTO_DTYPE_U16};
  for (int d = 0; d < 6; d++) {
    pto_dtype dt = dts[d];
    const char *dn = pto_dtype_name(dt);
    char kn[96], nm[96];
    for (int bad = 0; bad < 2; bad++) {
      snprintf(kn, sizeof kn, "st_gather_%s_%d", dn, bad);
      snprintf(nm, sizeof nm, "tile_gather_rows_scatter_rows_%s%s", dn,
               bad ? "_index_out_of_range" : "");
      tcase *c = struct_case(kn, nm);
      c->text = dupf("kernel @%s(%%a: tensor[8,32] f32, %%t: tensor[K,24] %s, %%s: tensor[8,16] %s,"
                     " %%bi: tensor[8,32] i32, out %%o: tensor[8,32] %s, out %%g: tensor[8,16] %s,"
                     " inout %%u: tensor[K,24] %s, %%c0: index)"
                     " -> (tensor[8,32] %s, tensor[8,16] %s, tensor[K,24] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [8, 32])\n"
                     "  %%ix = %s\n"
                     "  %%src = tile.load(%%t, [0, 0], [8, 24])\n"
                     "  %%w = tile.gather(%%src, %%ix)\n"
                     "  %%o1 = tile.store(%%w, [0, 0], %%o)\n"
                     "  %%ir = tile.extract(%%ix, [0, 0], [8, 1])\n"
                     "  %%gr = tile.gather_rows(%%t, %%ir, [%%c0], [8, 16])\n"
                     "  %%g1 = tile.store(%%gr, [0, 0], %%g)\n"
                     "  %%ts = tile.load(%%s, [0, 0], [8, 16])\n"
                     "  %%u1 = tile.scatter_rows(%%ts, %%ir, [%%c0], %%u)\n"
                     "  return %%o1, %%g1, %%u1\n}\n",
                     kn, dn, dn, dn, dn, dn, dn, dn, dn,
                     bad ? "tile.load(%bi, [0, 0], [8, 32])" : "tile.sort_idx(%ta, order=asc)");
      c->args[0] = tensor2(PTO_DTYPE_F32, 8, 32, D_ANY, 0);
      c->args[1] = tensor2(dt, 40, 24, D_ANY, 0);
      c->args[2] = tensor2(dt, 8, 16, D_ANY, 0);
      c->args[3] = tensor2(PTO_DTYPE_I32, 8, 32, D_ANY, 0);
      c->args[4] = tensor2(dt, 8, 32, D_ANY, 1);
      c->args[5] = tensor2(dt, 8, 16, D_ANY, 1);
      c->args[6] = tensor2(dt, 40, 24, D_ANY, 2);
      c->args[7] = scalar_spec(PTO_DTYPE_INDEX, 0, 5);
      c->nargs = 8;
      c->expect_rc = bad ? PTO_KERNEL_ERR_INDEX : 0;
    }
    /* the columns past the tensor's edge: 9 + 16 > 24 */
    snprintf(kn, sizeof kn, "st_gather_cols_%s", dn);
    snprintf(nm, sizeof nm, "tile_gather_rows_%s_columns_out_of_range", dn);
    tcase *c = struct_case(kn, nm);
    c->text = dupf("kernel @%s(%%t: tensor[K,24] %s, out %%g: tensor[8,16] %s, %%c0: index)"
                   " -> (tensor[8,16] %s) {\n"
                   "  %%ir = tile.full([8, 1], i32, 3)\n"
                   "  %%gr = tile.gather_rows(%%t, %%ir, [%%c0], [8, 16])\n"
                   "  %%g1 = tile.store(%%gr, [0, 0], %%g)\n"
                   "  return %%g1\n}\n",
                   kn, dn, dn, dn);
    c->args[0] = tensor2(dt, 40, 24, D_ANY, 0);
    c->args[1] = tensor2(dt, 8, 16, D_ANY, 1);
    c->args[2] = scalar_spec(PTO_DTYPE_INDEX, 0, 9);
    c->nargs = 3;
    c->expect_rc = PTO_KERNEL_ERR_INDEX;
  }
}

/* A gather read only by elementwise statements goes into them through its index tile
 * (plan_row_views, lw_tile.ri), row by row: the attention's q . K (mul by a broadcast row, then
 * row_sum; the row partly valid), the gathered tile as the second operand and read twice in one
 * fused run, a scalar op, the attention's loop, the launch error of an index out of range, and a
 * streamed run (stays a copy). Rows idx[k] = (7 k + a) mod RT from column c0, K > RT repeating
 * rows; odd columns (no vectors). */
static void gen_struct_gather_elementwise(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_BF16, PTO_DTYPE_F16, PTO_DTYPE_I32};
  /* K, C, tensor rows RT, columns CT, c0, the valid columns of q */
  static const int64_t sh[][6] = {
      {64, 128, 40, 131, 3, 128}, {17, 48, 23, 53, 5, 45}, {8, 35, 12, 40, 5, 35}};
  static const char *vname[] = {"mul_row_sum", "read_twice",         "scalar",
                                "loop",        "index_out_of_range", "streamed"};
  for (int d = 0; d < (int)(sizeof dts / sizeof dts[0]); d++)
    for (int h = 0; h < (int)(sizeof sh / sizeof sh[0]); h++)
      for (int v = 0; v < 6; v++) {
        pto_dtype dt = dts[d];
        if (d > 1 && (v == 3 || v == 4) && h) continue;
        const char *dn = pto_dtype_name(dt);
        long long K = sh[h][0], C = sh[h][1], RT = sh[h][2], CT = sh[h][3], VC = sh[h][5];
        char idx[320], body[900];
        if (v == 4)
          snprintf(idx, sizeof idx, "  %%ix = tile.load(%%bi, [0, 0], [%lld, 1])\n", K);
        else
          snprintf(idx, sizeof idx,
                   "  %%ci = tile.ci(%s, [1, %lld], dtype=i32)\n"
                   "  %%ct = tile.reshape(%%ci, [%lld, 1])\n"
                   "  %%cm = tile.muls(%%ct, 7)\n"
                   "  %%ca = tile.adds(%%cm, %%a)\n"
                   "  %%ix = tile.rems(%%ca, %lld)\n",
                   v == 3 ? "i32(%i * 5)" : "0", K, K, RT);
        char g[160];
        snprintf(g, sizeof g, "  %%tk = tile.gather_rows(%%r, %%ix, [%%c0], [%lld, %lld])\n", K, C);
        if (v == 3)
          snprintf(body, sizeof body,
                   "  %%z = tile.full([%lld, 1], %s, 0)\n"
                   "  %%s = for %%i in range(0, 3) iter(%%cz = %%z) {\n%s%s"
                   "    %%m = tile.mul(%%tk, %%qx)\n"
                   "    %%rs = tile.row_sum(%%m)\n"
                   "    %%cn = tile.add(%%cz, %%rs)\n"
                   "    yield %%cn\n  }\n",
                   K, dn, idx, g);
        else
          snprintf(body, sizeof body, "%s%s%s", idx, g,
                   v == 1   ? "  %m0 = tile.mul(%qx, %tk)\n"
                              "  %m = tile.add(%m0, %tk)\n"
                              "  %s = tile.row_max(%m)\n"
                   : v == 2 ? "  %m = tile.muls(%tk, 3)\n"
                              "  %s = tile.row_sum(%m)\n"
                   : v == 5 ? "  %m = tile.muls(%tk, 3)\n"
                              "  %w1 = tile.store(%m, [0, 0], %w)\n"
                              "  %s = tile.row_sum(%qx)\n"
                            : "  %m = tile.mul(%tk, %qx)\n"
                              "  %s = tile.row_sum(%m)\n");
        char kn[96], nm[128];
        snprintf(kn, sizeof kn, "st_gew%d_%s_%d", v, dn, h);
        snprintf(nm, sizeof nm, "tile_gather_rows_into_%s_%s_%lldx%lld", vname[v], dn, K, C);
        tcase *c = struct_case(kn, nm);
        c->text = dupf("kernel @%s(%%q: tensor[1,%lld] %s, %%r: tensor[R,C] %s,"
                       " %%bi: tensor[%lld,1] i32, out %%o: tensor[%lld,1] %s,"
                       " out %%w: tensor[%lld,%lld] %s, %%c0: index, %%a: i32)"
                       " -> (tensor[%lld,1] %s, tensor[%lld,%lld] %s) {\n"
                       "  %%tq = tile.load(%%q, [0, 0], [1, %lld], valid=[1, %lld])\n"
                       "  %%qx = tile.col_expand(%%tq, [%lld, %lld])\n"
                       "%s"
                       "  %%o1 = tile.store(%%s, [0, 0], %%o)\n"
                       "  return %%o1, %%w\n}\n",
                       kn, C, dn, dn, K, K, dn, K, C, dn, K, dn, K, C, dn, C, VC, K, C, body);
        int isf = pto_dtype_is_float(dt);
        c->args[0] = tensor2(dt, 1, C, isf ? D_ANY : D_SMALLINT, 0);
        c->args[1] = tensor2(dt, RT, CT, isf ? D_ANY : D_SMALLINT, 0);
        c->args[2] = tensor2(PTO_DTYPE_I32, K, 1, D_ANY, 0);
        c->args[3] = tensor2(dt, K, 1, D_ANY, 1);
        c->args[4] = tensor2(dt, K, C, D_ANY, 1);
        c->args[5] = scalar_spec(PTO_DTYPE_INDEX, 0, sh[h][4]);
        c->args[6] = scalar_spec(PTO_DTYPE_I32, 0, (RT - 1) - (7 * (K / 2)) % RT + RT);
        c->nargs = 7;
        if (v == 4) c->expect_rc = PTO_KERNEL_ERR_INDEX;
      }
}

/* matmul_bias: the bias in the product's dtype and in the operands'. */
static void gen_struct_matmul_bias(void) {
  static const pto_dtype dts[] = {PTO_DTYPE_F32, PTO_DTYPE_F16, PTO_DTYPE_BF16, PTO_DTYPE_I8};
  static const int64_t mkn[][3] = {{5, 7, 19}, {32, 64, 48}, {12, 40, 40}};
  for (int d = 0; d < 4; d++)
    for (int sh = 0; sh < 3; sh++)
      for (int own = 0; own < 2; own++) {
        pto_dtype dt = dts[d];
        const char *dn = pto_dtype_name(dt);
        const char *on = pto_dtype_is_float(dt) ? "f32" : "i32";
        const char *bn = own ? dn : on;
        long long M = mkn[sh][0], K = mkn[sh][1], N = mkn[sh][2];
        char kn[96], nm[96];
        snprintf(kn, sizeof kn, "st_mmb_%s_%d_%d", dn, sh, own);
        snprintf(nm, sizeof nm, "tile_matmul_bias_%s_%lldx%lldx%lld_bias_%s", dn, M, K, N, bn);
        tcase *c = struct_case(kn, nm);
        c->text = dupf("kernel @%s(%%l: tensor[%lld,%lld] %s, %%r: tensor[%lld,%lld] %s,"
                       " %%b: tensor[1,%lld] %s, out %%c: tensor[%lld,%lld] %s)"
                       " -> (tensor[%lld,%lld] %s) {\n"
                       "  %%tl = tile.load(%%l, [0, 0], [%lld, %lld], space=mat)\n"
                       "  %%tr = tile.load(%%r, [0, 0], [%lld, %lld], space=mat)\n"
                       "  %%tb = tile.load(%%b, [0, 0], [1, %lld])\n"
                       "  %%ml = tile.move(%%tl, space=left)\n"
                       "  %%mr = tile.move(%%tr, space=right)\n"
                       "  %%o = tile.matmul_bias(%%ml, %%mr, %%tb)\n"
                       "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
                       "  return %%c1\n}\n",
                       kn, M, K, dn, K, N, dn, N, bn, M, N, on, M, N, on, M, K, K, N, N);
        c->args[0] = tensor2(dt, M, K, D_ANY, 0);
        c->args[1] = tensor2(dt, K, N, D_ANY, 0);
        c->args[2] = tensor2(own                      ? dt
                             : pto_dtype_is_float(dt) ? PTO_DTYPE_F32
                                                      : PTO_DTYPE_I32,
                             1, N, D_ANY, 0);
        c->args[3] =
            tensor2(pto_dtype_is_float(dt) ? PTO_DTYPE_F32 : PTO_DTYPE_I32, M, N, D_ANY, 1);
        c->nargs = 4;
      }
}

/* ---- second set: elementwise ------------------------------------------------------------------
 */

/* How an op of the second set's elementwise group is called. */
enum { EF_TILE, EF_SCALAR, EF_UNARY, EF_SEL, EF_SELS, EF_ROW, EF_COL };
/* Which dtypes its row allows. */
enum { ED_ALL, ED_INT_BOOL, ED_INT, ED_FLOAT, ED_NUM };

typedef struct elem_op {
  const char *op; /* the op's name after "tile." */
  const char *kw; /* ", cmp=lt" or "" */
  int form, dts;
  int bool_out; /* the result is a bool tile */
  int b_domain; /* fill of the second operand */
} elem_op;

static const elem_op k_elem_ops[] = {
    {"cmp", ", cmp=eq", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmp", ", cmp=ne", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmp", ", cmp=lt", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmp", ", cmp=le", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmp", ", cmp=gt", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmp", ", cmp=ge", EF_TILE, ED_ALL, 1, D_SPECIAL},
    {"cmps", ", cmp=ne", EF_SCALAR, ED_ALL, 1, 0},
    {"cmps", ", cmp=lt", EF_SCALAR, ED_ALL, 1, 0},
    {"sel", "", EF_SEL, ED_ALL, 0, D_SPECIAL},
    {"sels", "", EF_SELS, ED_ALL, 0, 0},
    {"and", "", EF_TILE, ED_INT_BOOL, 0, D_SPECIAL},
    {"or", "", EF_TILE, ED_INT_BOOL, 0, D_SPECIAL},
    {"xor", "", EF_TILE, ED_INT_BOOL, 0, D_SPECIAL},
    {"ands", "", EF_SCALAR, ED_INT, 0, 0},
    {"ors", "", EF_SCALAR, ED_INT, 0, 0},
    {"xors", "", EF_SCALAR, ED_INT, 0, 0},
    {"not", "", EF_UNARY, ED_INT_BOOL, 0, 0},
    {"shl", "", EF_TILE, ED_INT, 0, D_SPECIAL},
    {"shr", "", EF_TILE, ED_INT, 0, D_SPECIAL},
    {"shls", "", EF_SCALAR, ED_INT, 0, 0},
    {"shrs", "", EF_SCALAR, ED_INT, 0, 0},
    {"row_expand_max", "", EF_ROW, ED_NUM, 0, D_SPECIAL},
    {"row_expand_min", "", EF_ROW, ED_NUM, 0, D_SPECIAL},
    {"col_expand_max", "", EF_COL, ED_NUM, 0, D_SPECIAL},
    {"col_expand_min", "", EF_COL, ED_NUM, 0, D_SPECIAL},
    {"row_expand_expdif", "", EF_ROW, ED_FLOAT, 0, D_SPECIAL},
    {"col_expand_expdif", "", EF_COL, ED_FLOAT, 0, D_SPECIAL},
    {"lrelu", "", EF_SCALAR, ED_NUM, 0, 0},
    {"prelu", "", EF_COL, ED_NUM, 0, D_SPECIAL},
    {"rem", "", EF_TILE, ED_NUM, 0, D_SPECIAL_NZ},
    {"rems", "", EF_SCALAR, ED_NUM, 0, 0},
    {"fmod", "", EF_TILE, ED_FLOAT, 0, D_SPECIAL},
    {"fmods", "", EF_SCALAR, ED_FLOAT, 0, 0},
    {"sin", "", EF_UNARY, ED_FLOAT, 0, 0},
    {"cos", "", EF_UNARY, ED_FLOAT, 0, 0},
    /* the first set's integer ops at the overflow rule's edges (MIN / -1, MIN mod -1, wraps) */
    {"div", "", EF_TILE, ED_INT, 0, D_SPECIAL_NZ},
    {"divs", "", EF_SCALAR, ED_INT, 0, 0},
    {"mul", "", EF_TILE, ED_INT, 0, D_SPECIAL},
};
#define N_ELEM_OPS ((int)(sizeof k_elem_ops / sizeof k_elem_ops[0]))

static const pto_dtype k_elem_dtypes[] = {
    PTO_DTYPE_BOOL, PTO_DTYPE_I8,  PTO_DTYPE_I16, PTO_DTYPE_I32, PTO_DTYPE_I64,
    PTO_DTYPE_U8,   PTO_DTYPE_U16, PTO_DTYPE_U32, PTO_DTYPE_U64, PTO_DTYPE_F16,
    PTO_DTYPE_BF16, PTO_DTYPE_F32, PTO_DTYPE_F64};

static int elem_dtype_ok(int dts, pto_dtype dt) {
  switch (dts) {
  case ED_INT_BOOL: return dt == PTO_DTYPE_BOOL || pto_dtype_is_int(dt);
  case ED_INT: return pto_dtype_is_int(dt);
  case ED_FLOAT: return pto_dtype_is_float(dt);
  case ED_NUM: return dt != PTO_DTYPE_BOOL;
  default: return 1;
  }
}

/* The scalar operand of a scalar form: a value the edge rules care about for dt. */
static ta_spec elem_scalar(const elem_op *o, pto_dtype dt, int variant) {
  ta_spec s = scalar_spec(dt, variant ? NAN : -2.5, variant ? -1 : 3);
  if (dt == PTO_DTYPE_BOOL) s.s.i = 1;
  if (!pto_dtype_is_float(dt) && !pto_dtype_is_signed(dt) && dt != PTO_DTYPE_BOOL)
    s.s.u = variant ? 200 : 3;
  /* shift counts: one inside [0, bits), one past it (-1 or 200: outside for every width) */
  if (o->op[0] == 's' && o->op[1] == 'h' && variant)
    s.s.u = pto_dtype_is_signed(dt) ? (uint64_t)-1 : 200;
  int divlike = strcmp(o->op, "rems") == 0 || strcmp(o->op, "divs") == 0;
  if (divlike && variant && !pto_dtype_is_float(dt)) s.s.i = -1;
  if (divlike && variant && pto_dtype_is_float(dt)) s.s.f = -0.75;
  return s;
}

/* One case of op o on dt: tiles [tr,tc] loaded from [r,c] tensors (a partial tile when smaller),
 * the result stored to an out tensor of the result's dtype. */
static void elem_case(const elem_op *o, pto_dtype dt, int64_t tr, int64_t tc, int64_t r, int64_t c,
                      int variant) {
  const char *dn = pto_dtype_name(dt), *on = o->bool_out ? "bool" : dn;
  tcase *t = new_case("elem");
  const char *kw = o->kw[0] ? o->kw + 6 : "";
  snprintf(t->kname, sizeof t->kname, "%s%s_%s_%lldx%lld_%d", o->op, kw, dn, (long long)tr,
           (long long)tc, variant);
  snprintf(t->name, sizeof t->name, "tile_%s%s%s_%s_%lldx%lld_on_%lldx%lld%s", o->op,
           kw[0] ? "_" : "", kw, dn, (long long)tr, (long long)tc, (long long)r, (long long)c,
           variant ? "_edge_scalar" : "");
  int64_t br = o->form == EF_COL ? 1 : r, bc = o->form == EF_ROW ? 1 : c;
  int64_t btr = o->form == EF_COL ? 1 : tr, btc = o->form == EF_ROW ? 1 : tc;
  int sel = o->form == EF_SEL || o->form == EF_SELS;
  const char *call;
  switch (o->form) {
  case EF_SCALAR: call = "%ta, %s"; break;
  case EF_UNARY: call = "%ta"; break;
  case EF_SEL: call = "%tm, %ta, %tb"; break;
  case EF_SELS: call = "%tm, %ta, %s"; break;
  default: call = "%ta, %tb"; break;
  }
  const char *bdims = o->form == EF_COL ? "1,C" : o->form == EF_ROW ? "R,1" : "R,C";
  t->text = dupf("kernel @%s(%%a: tensor[R,C] %s, %%b: tensor[%s] %s,"
                 " %%m: tensor[R,C] bool, out %%c: tensor[R,C] %s, %%s: %s)"
                 " -> (tensor[R,C] %s) {\n"
                 "  %%ta = tile.load(%%a, [0, 0], [%lld, %lld])\n"
                 "  %%tb = tile.load(%%b, [0, 0], [%lld, %lld])\n"
                 "  %%tm = tile.load(%%m, [0, 0], [%lld, %lld])\n"
                 "  %%tc = tile.%s(%s%s)\n"
                 "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                 "  return %%c1\n}\n",
                 t->kname, dn, bdims, dn, on, dn, on, (long long)tr, (long long)tc, (long long)btr,
                 (long long)btc, (long long)tr, (long long)tc, o->op, call, o->kw);
  (void)sel;
  t->args[0] = tensor2(dt, r, c, D_SPECIAL, 0);
  t->args[1] = tensor2(dt, br, bc, o->b_domain ? o->b_domain : D_SPECIAL, 0);
  t->args[2] = tensor2(PTO_DTYPE_BOOL, r, c, D_ANY, 0);
  t->args[3] = tensor2(o->bool_out ? PTO_DTYPE_BOOL : dt, r, c, D_ANY, 1);
  t->args[4] = elem_scalar(o, dt, variant);
  t->nargs = 5;
  /* an integer remainder meets the zero pad of a partial tile: a launch error */
  if ((strcmp(o->op, "rem") == 0 || strcmp(o->op, "div") == 0) && pto_dtype_is_int(dt) &&
      (r < tr || c < tc))
    t->expect_rc = PTO_KERNEL_ERR_DIV_ZERO;
}

static void gen_elem(void) {
  for (int k = 0; k < N_ELEM_OPS; k++) {
    const elem_op *o = &k_elem_ops[k];
    for (int d = 0; d < (int)(sizeof k_elem_dtypes / sizeof k_elem_dtypes[0]); d++) {
      pto_dtype dt = k_elem_dtypes[d];
      if (!elem_dtype_ok(o->dts, dt)) continue;
      elem_case(o, dt, 16, 32, 11, 29, 0); /* a partial tile */
      /* the scalar at its edge (NaN, -1, a shift count past the width) on a few widths */
      int edge = dt == PTO_DTYPE_F32 || dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_I8 ||
                 dt == PTO_DTYPE_U8 || dt == PTO_DTYPE_I64;
      if ((o->form == EF_SCALAR || o->form == EF_SELS) && edge) elem_case(o, dt, 8, 16, 8, 16, 1);
      if (dt == PTO_DTYPE_F32 ||
          ((strcmp(o->op, "rem") == 0 || strcmp(o->op, "div") == 0) && pto_dtype_is_int(dt)))
        elem_case(o, dt, 7, 13, 7, 13, 0);
    }
  }
  /* bool tiles: casts to and from every dtype (nonzero -> 1), and a bool tile stored to u8 */
  for (int d = 1; d < (int)(sizeof k_elem_dtypes / sizeof k_elem_dtypes[0]); d++) {
    const char *dn = pto_dtype_name(k_elem_dtypes[d]);
    for (int dir = 0; dir < 2; dir++) {
      tcase *t = new_case("elem");
      const char *from = dir ? "bool" : dn, *to = dir ? dn : "bool";
      snprintf(t->kname, sizeof t->kname, "cast_%s_to_%s", from, to);
      snprintf(t->name, sizeof t->name, "tile_cast_%s_to_%s_12x20_on_9x17", from, to);
      t->text = dupf("kernel @%s(%%a: tensor[R,C] %s, out %%c: tensor[R,C] %s)"
                     " -> (tensor[R,C] %s) {\n"
                     "  %%ta = tile.load(%%a, [0, 0], [12, 20])\n"
                     "  %%tc = tile.cast(%%ta, %s)\n"
                     "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
                     "  return %%c1\n}\n",
                     t->kname, from, to, to, to);
      t->args[0] = tensor2(dir ? PTO_DTYPE_BOOL : k_elem_dtypes[d], 9, 17, D_SPECIAL, 0);
      t->args[1] = tensor2(dir ? k_elem_dtypes[d] : PTO_DTYPE_BOOL, 9, 17, D_ANY, 1);
      t->nargs = 2;
    }
  }
  tcase *t = new_case("elem");
  snprintf(t->kname, sizeof t->kname, "bool_to_u8");
  snprintf(t->name, sizeof t->name, "tile_store_bool_tile_to_u8_tensor");
  t->text = dupf("kernel @bool_to_u8(%%a: tensor[5,40] bool, out %%c: tensor[5,40] u8)"
                 " -> (tensor[5,40] u8) {\n"
                 "  %%ta = tile.load(%%a, [0, 0], [5, 40])\n"
                 "  %%c1 = tile.store(%%ta, [0, 0], %%c)\n"
                 "  return %%c1\n}\n");
  t->args[0] = tensor2(PTO_DTYPE_BOOL, 5, 40, D_ANY, 0);
  t->args[1] = tensor2(PTO_DTYPE_U8, 5, 40, D_ANY, 1);
  t->nargs = 2;
}

/* ---- groups -----------------------------------------------------------------------------------
 */

static int group_setup_named(const char *group, int opt, int via_ll) {
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  len += (size_t)snprintf(text, cap, "program t\ndynamic R, C, K\n");
  for (int i = 0; i < g_ncases; i++) {
    if (strcmp(g_cases[i].group, group) != 0) continue;
    size_t need = strlen(g_cases[i].text) + 1;
    if (len + need + 1 > cap) {
      while (len + need + 1 > cap)
        cap *= 2;
      text = realloc(text, cap);
    }
    memcpy(text + len, g_cases[i].text, need);
    len += need - 1;
  }
  tl_lib *L = lib_build_ex(text, opt, via_ll);
  free(text);
  if (!L) return -1;
  if (g_nlibs == (int)(sizeof g_libs / sizeof g_libs[0])) {
    lib_free(L);
    return -1;
  }
  g_lib_names[g_nlibs] = group;
  g_libs[g_nlibs++] = L;
  return 0;
}

static int run_group_ex(const char *group, int opt, int via_ll) {
  const char *only = getenv("PTO_TEST_LOWER_GROUP");
  if (only && *only && strcmp(only, group) != 0) return 0;
  /* a group run again (another pto_core_ctx.flags) reuses its library */
  if (!lib_of(group) && group_setup_named(group, opt, via_ll)) {
    print_error("group %s: build failed\n", group);
    return 1;
  }
  int n = 0;
  for (int i = 0; i < g_ncases; i++)
    if (strcmp(g_cases[i].group, group) == 0) n++;
  struct CMUnitTest *tests = calloc((size_t)n + 1, sizeof *tests);
  n = 0;
  for (int i = 0; i < g_ncases; i++) {
    if (strcmp(g_cases[i].group, group) != 0) continue;
    tests[n].name = g_cases[i].name;
    tests[n].test_func = run_case;
    tests[n].initial_state = &g_cases[i];
    n++;
  }
  int fails = _cmocka_run_group_tests(group, tests, (size_t)n, NULL, NULL);
  free(tests);
  return fails;
}

static int run_group(const char *group, int opt) { return run_group_ex(group, opt, 0); }

/* ---- hand-checked tests ------------------------------------------------------------------------
 */

static const char *k_add_src =
    "program add\n"
    "dynamic M, R\n"
    "kernel @add_block(%a: tensor[R,128] f32, %b: tensor[R,128] f32,\n"
    "                  out %c: tensor[R,128] f32) -> (tensor[R,128] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [32, 128], valid=[R, 128])\n"
    "  %tb = tile.load(%b, [0, 0], [32, 128], valid=[R, 128])\n"
    "  %tc = tile.add(%ta, %tb)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

/* @add_block of k_add_src on [rows, 128] f32 matrices: c = a + b. */
static int32_t run_add_block(tl_lib *L, float *a, float *b, float *c, int64_t rows) {
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  int64_t shape[2] = {rows, 128};
  args[0].is_tensor = args[1].is_tensor = args[2].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&args[1].tensor, b, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&args[2].tensor, c, PTO_DTYPE_F32, 2, shape);
  return run_native(L, "add_block", args, 3, 0, NULL);
}

/* With PTO_CORE_STREAM_STORES a streamed run stores past the cache: rows peeled one by one to
 * the 64-byte boundary, then non-temporal 16-lane stores, then the rest; fenced. The results are
 * the same for every alignment of the output, and nothing outside its window is written. */
static void test_lower_streamed_stores_past_the_cache(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 2);
  assert_non_null(L);
  if (pto__lower_host_has("triple=x86_64")) {
    assert_true(ll_has(L, "add_block", "!nontemporal"));
    assert_true(ll_has(L, "add_block", "@llvm.x86.sse.sfence()"));
  } else {
    print_message("host not x86-64 or generic lowering: no non-temporal path\n");
  }
  static float a[3 * 128], b[3 * 128], buf[3 * 128 + 64] __attribute__((aligned(64)));
  for (int i = 0; i < 3 * 128; i++) {
    a[i] = (float)i * 0.25f;
    b[i] = 7.0f - (float)i;
  }
  g_run_flags = PTO_CORE_STREAM_STORES;
  for (int off = 0; off < 17; off++)
    for (int rows = 1; rows <= 3; rows++) {
      for (int i = 0; i < 3 * 128 + 64; i++)
        buf[i] = -1.0f;
      assert_int_equal(run_add_block(L, a, b, buf + off, rows), 0);
      for (int i = 0; i < 3 * 128 + 64; i++) {
        int k = i - off;
        float want = k >= 0 && k < rows * 128 ? a[k] + b[k] : -1.0f;
        if (buf[i] != want) {
          print_error("offset %d, rows %d, element %d: %g, want %g\n", off, rows, i, buf[i], want);
          g_run_flags = 0;
          fail();
        }
      }
    }
  g_run_flags = 0;
  lib_free(L);
}

/* A row softmax's division streamed past the cache, deferred: each loop iteration leaves its
 * rows in a staging buffer and the next iteration's exp run (or the next staging, or the loop's
 * exit) writes them out (lw_defer). The results are the interpreter's bit for bit for outputs
 * that do and do not start on a line (the latter take the direct path), with a partial last
 * tile, with nested loops, without a run to drain in, and with the output sharing bytes with
 * the input so that an iteration reads what the one before stored (checked at run time: no
 * deferral then). A kernel whose body also reads the output never defers. */
static const char *k_defer_src =
    "program defer\n"
    "dynamic R\n"
    "kernel @dsm(%x: tensor[R,1024] f32, out %y: tensor[R,1024] f32) -> (tensor[R,1024] f32) {\n"
    "  for %i in range(0, 3) {\n"
    "    %t = tile.load(%x, [%i * 8, 0], [8, 1024])\n" SOFTMAX_STEPS(
        "    ") "    tile.store(%p, [%i * 8, 0], %y)\n"
                "  }\n"
                "  return %y\n}\n"
                "kernel @dsum(%x: tensor[R,1024] f32, out %y: tensor[R,1024] f32) -> "
                "(tensor[R,1024] f32) {\n"
                "  for %i in range(0, 3) {\n"
                "    %t = tile.load(%x, [%i * 8, 0], [8, 1024])\n"
                "    %s = tile.row_sum(%t)\n"
                "    %p = tile.row_expand_div(%t, %s)\n"
                "    tile.store(%p, [%i * 8, 0], %y)\n"
                "  }\n"
                "  return %y\n}\n"
                "kernel @dnest(%x: tensor[R,1024] f32, out %y: tensor[R,1024] f32) -> "
                "(tensor[R,1024] f32) {\n"
                "  for %j in range(0, 2) {\n"
                "    for %i in range(0, 2) {\n"
                "      %r = %j * 16 + %i * 8\n"
                "      %t = tile.load(%x, [%r, 0], [8, 1024])\n" SOFTMAX_STEPS(
                    "      ") "      tile.store(%p, [%r, 0], %y)\n"
                              "    }\n"
                              "  }\n"
                              "  return %y\n}\n"
                              "kernel @dinout(%x: tensor[R,1024] f32, inout %y: tensor[R,1024] "
                              "f32)\n"
                              "    -> (tensor[R,1024] f32) {\n"
                              "  for %i in range(0, 3) {\n"
                              "    %t = tile.load(%x, [%i * 8, 0], [8, 1024])\n"
                              "    %u = tile.load(%y, [%i * 8, 0], [8, 1024])\n"
                              "    %v = tile.add(%t, %u)\n"
                              "    %s = tile.row_sum(%v)\n"
                              "    %p = tile.row_expand_div(%v, %s)\n"
                              "    tile.store(%p, [%i * 8, 0], %y)\n"
                              "  }\n"
                              "  return %y\n}\n"
                              "kernel @dbf(%x: tensor[R,64] bf16, out %y: tensor[R,64] bf16) -> "
                              "(tensor[R,64] bf16) {\n"
                              "  for %i in range(0, 3) {\n"
                              "    %t = tile.load(%x, [%i * 8, 0], [8, 64])\n" SOFTMAX_STEPS(
                                  "    ") "    tile.store(%p, [%i * 8, 0], %y)\n"
                                          "  }\n"
                                          "  return %y\n}\n";

/* Kernel k on x = buf + xoff and y = buf + yoff elements ([rows, cols] each, dtype dt), natively
 * (flags) in one copy of buf and by the interpreter in another: the whole buffers must agree. */
static void defer_run(tl_lib *L, const char *k, pto_dtype dt, int64_t cols, int64_t rows,
                      int64_t xoff, int64_t yoff, int32_t flags) {
  size_t es = pto_dtype_size(dt);
  int64_t n = 72 * cols + 64;
  char *nat = aligned_alloc(64, (size_t)n * es), *ref = aligned_alloc(64, (size_t)n * es);
  assert_non_null(nat);
  assert_non_null(ref);
  fill(dt, nat, n, D_ANY);
  memcpy(ref, nat, (size_t)n * es);
  int64_t shape[2] = {rows, cols};
  pto_ir_interp_arg a[2][2];
  memset(a, 0, sizeof a);
  for (int w = 0; w < 2; w++) {
    char *base = w ? ref : nat;
    a[w][0].is_tensor = a[w][1].is_tensor = 1;
    pto_host_tensor_init(&a[w][0].tensor, base + xoff * (int64_t)es, dt, 2, shape);
    pto_host_tensor_init(&a[w][1].tensor, base + yoff * (int64_t)es, dt, 2, shape);
  }
  g_run_flags = flags;
  int32_t rc = run_native(L, k, a[0], 2, 0, NULL);
  g_run_flags = 0;
  assert_int_equal(rc, 0);
  pto_ir_func *f = pto_ir_program_find_func(L->p, k);
  assert_non_null(f);
  pto_status s = pto_ir_interp_run(L->p, f, a[1], 2);
  if (s) print_error("%s: interpreter: %s\n", k, pto_status_message(s));
  assert_null(s);
  for (int64_t i = 0; i < n; i++)
    if (!elem_equal(dt, nat + i * (int64_t)es, ref + i * (int64_t)es)) {
      print_error("@%s rows %lld, x at %lld, y at %lld, flags %d: element %lld: native %.9g, "
                  "interpreter %.9g\n",
                  k, (long long)rows, (long long)xoff, (long long)yoff, (int)flags, (long long)i,
                  elem_as_double(dt, nat + i * (int64_t)es),
                  elem_as_double(dt, ref + i * (int64_t)es));
      free(nat);
      free(ref);
      fail();
    }
  free(nat);
  free(ref);
}

static void test_lower_deferred_store_matches_interpreter(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_defer_src, 2);
  assert_non_null(L);
  int x86 = pto__lower_host_has("triple=x86_64");
  if (x86) {
    static const char *const deferred[] = {"dsm", "dsum", "dnest", "dbf"};
    for (size_t i = 0; i < sizeof deferred / sizeof deferred[0]; i++)
      assert_true(ll_has(L, deferred[i], "stream.defer:"));
    assert_true(ll_has(L, "dsm", "ew.drain:"));
    char ll[1024];
    snprintf(ll, sizeof ll, "%s/dinout.ll", L->dir);
    char *text = tu_read_file(ll, NULL);
    assert_non_null(text);
    assert_null(strstr(text, "stream.defer:"));
    free(text);
  } else {
    print_message("host not x86-64 or generic lowering: no non-temporal path to defer\n");
  }
  static const char *const f32k[] = {"dsm", "dsum", "dnest", "dinout"};
  for (size_t k = 0; k < sizeof f32k / sizeof f32k[0]; k++) {
    int64_t rows = strcmp(f32k[k], "dnest") ? 24 : 32;
    for (int flags = 0; flags <= PTO_CORE_STREAM_STORES; flags += PTO_CORE_STREAM_STORES) {
      defer_run(L, f32k[k], PTO_DTYPE_F32, 1024, rows, 0, 36 * 1024, flags); /* apart */
      defer_run(L, f32k[k], PTO_DTYPE_F32, 1024, 20, 0, 36 * 1024, flags);   /* last tile 4 rows */
      defer_run(L, f32k[k], PTO_DTYPE_F32, 1024, rows, 0, 36 * 1024 + 8, flags); /* off a line */
      /* y 8 rows after x: each iteration reads the rows the one before stored */
      defer_run(L, f32k[k], PTO_DTYPE_F32, 1024, rows, 0, 8 * 1024, flags);
      defer_run(L, f32k[k], PTO_DTYPE_F32, 1024, rows, 8 * 1024, 0, flags);
    }
  }
  for (int flags = 0; flags <= PTO_CORE_STREAM_STORES; flags += PTO_CORE_STREAM_STORES) {
    defer_run(L, "dbf", PTO_DTYPE_BF16, 64, 24, 0, 30 * 64, flags);
    defer_run(L, "dbf", PTO_DTYPE_BF16, 64, 21, 0, 30 * 64, flags);
    defer_run(L, "dbf", PTO_DTYPE_BF16, 64, 24, 0, 8 * 64, flags);
  }
  lib_free(L);
}

static void test_lower_add_block_matches_hand_computed(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 2);
  assert_non_null(L);
  for (int rows = 1; rows <= 32; rows += 31) {
    float a[32 * 128], b[32 * 128], c[32 * 128];
    for (int i = 0; i < 32 * 128; i++) {
      a[i] = (float)i * 0.5f;
      b[i] = 1000.0f - (float)i;
      c[i] = -1.0f;
    }
    assert_int_equal(run_add_block(L, a, b, c, rows), 0);
    for (int i = 0; i < 32 * 128; i++) {
      float want = i < rows * 128 ? a[i] + b[i] : -1.0f;
      if (c[i] != want) {
        print_error("rows=%d element %d: %g, want %g\n", rows, i, c[i], want);
        fail();
      }
    }
  }
  lib_free(L);
}

static void test_lower_dim_mismatch_returns_code(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 1);
  assert_non_null(L);
  float a[4 * 128] = {0}, b[5 * 128] = {0}, c[4 * 128] = {0};
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  int64_t s4[2] = {4, 128}, s5[2] = {5, 128};
  args[0].is_tensor = args[1].is_tensor = args[2].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, s4);
  pto_host_tensor_init(&args[1].tensor, b, PTO_DTYPE_F32, 2, s5);
  pto_host_tensor_init(&args[2].tensor, c, PTO_DTYPE_F32, 2, s4);
  pto_core_ctx ctx;
  assert_int_equal(run_native(L, "add_block", args, 3, 0, &ctx), PTO_KERNEL_ERR_DIM_MISMATCH);
  assert_int_equal(ctx.err_detail[0], 4);
  assert_int_equal(ctx.err_detail[1], 5);
  lib_free(L);
}

static void test_lower_small_scratch_returns_code(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 1);
  assert_non_null(L);
  uint64_t need = 0;
  lib_fn(L, "add_block", &need);
  assert_true(need >= 2 * 32 * 128 * 4);
  float a[128] = {0}, b[128] = {0}, c[128] = {0};
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  int64_t s1[2] = {1, 128};
  args[0].is_tensor = args[1].is_tensor = args[2].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, s1);
  pto_host_tensor_init(&args[1].tensor, b, PTO_DTYPE_F32, 2, s1);
  pto_host_tensor_init(&args[2].tensor, c, PTO_DTYPE_F32, 2, s1);
  pto_core_ctx ctx;
  assert_int_equal(run_native(L, "add_block", args, 3, need - 64, &ctx), PTO_KERNEL_ERR_SCRATCH);
  assert_int_equal(ctx.err_detail[0], (int64_t)need);
  lib_free(L);
}

static void test_lower_ll_compiles_back(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 2);
  assert_non_null(L);
  char ll[1024], obj[1024];
  snprintf(ll, sizeof ll, "%s/add_block.ll", L->dir);
  snprintf(obj, sizeof obj, "%s/again.o", L->dir);
  size_t n = 0;
  char *text = tu_read_file(ll, &n);
  assert_non_null(text);
  assert_non_null(strstr(text, "define i32 @pto_kernel_add_block("));
  free(text);
  assert_pto_ok(pto__compile_ll(ll, 3, obj));
  char *out = NULL;
  int rc = tu_run(&out, "nm '%s' | grep -q ' T pto_kernel_add_block'", obj);
  free(out);
  assert_int_equal(rc, 0);
  /* A broken edit is reported as the user's error, with LLVM's position. */
  assert_int_equal(tu_write_file(ll, "define i32 @f( {\n"), 0);
  pto_status s = pto__compile_ll(ll, 2, obj);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "add_block.ll");
  lib_free(L);
}

static const char *k_plan_src =
    "program plan\n"
    "dynamic R, C, K\n"
    "kernel @chain(%a: tensor[R,C] f16, %b: tensor[R,C] f16, out %o: tensor[R,C] f16,\n"
    "              out %p: tensor[R,C] f16) -> (tensor[R,C] f16, tensor[R,C] f16) {\n"
    "  %ta = tile.load(%a, [0, 0], [16, 64])\n"
    "  %tb = tile.load(%b, [0, 0], [16, 64])\n"
    "  %t1 = tile.muls(%ta, 1.7)\n"
    "  %t2 = tile.sub(%t1, %tb)\n"
    "  %t3 = tile.relu(%t2)\n"
    "  %t4 = tile.maxs(%t3, 0.25)\n"
    "  %t5 = tile.mul(%t4, %t1)\n"
    "  %t6 = tile.cast(%t5, f32)\n"
    "  %t7 = tile.sqrt(%t6)\n"
    "  %t8 = tile.cast(%t7, f16)\n"
    "  %t9 = tile.div(%t8, %tb)\n"
    "  %o1 = tile.store(%t9, [0, 0], %o)\n"
    "  %p1 = tile.store(%t2, [0, 0], %p)\n"
    "  return %o1, %p1\n"
    "}\n"
    "kernel @loop_acc(%a: tensor[R,C] f32, out %o: tensor[8,32] f32, %n: index)\n"
    "    -> (tensor[8,32] f32) {\n"
    "  %z = tile.full([8, 32], f32, 0.5)\n"
    "  %r = for %i in range(0, %n) iter(%acc = %z) {\n"
    "    %t = tile.load(%a, [%i * 8, 0], [8, 32])\n"
    "    %s = tile.add(%acc, %t)\n"
    "    %s2 = tile.muls(%s, 0.75)\n"
    "    yield %s2\n"
    "  }\n"
    "  %o1 = tile.store(%r, [0, 0], %o)\n"
    "  return %o1\n"
    "}\n"
    "kernel @mm(%l: tensor[64,64] f32, %r: tensor[64,64] f32, out %c: tensor[64,64] f32)\n"
    "    -> (tensor[64,64] f32) {\n"
    "  %tl = tile.load(%l, [0, 0], [64, 64], space=mat)\n"
    "  %tr = tile.load(%r, [0, 0], [64, 64], space=mat)\n"
    "  %ml = tile.move(%tl, space=left)\n"
    "  %mr = tile.move(%tr, space=right)\n"
    "  %o = tile.matmul(%ml, %mr)\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @kloop(%l: tensor[16,K] f16, %r: tensor[K,32] f16, out %c: tensor[16,32] f32)\n"
    "    -> (tensor[16,32] f32) {\n"
    "  %k = tensor.dim(%l, 1)\n"
    "  %nk = %k / 8\n"
    "  %l0 = tile.load(%l, [0, 0], [16, 8], space=mat)\n"
    "  %r0 = tile.load(%r, [0, 0], [8, 32], space=mat)\n"
    "  %ml0 = tile.move(%l0, space=left)\n"
    "  %mr0 = tile.move(%r0, space=right)\n"
    "  %a0 = tile.matmul(%ml0, %mr0)\n"
    "  %acc = for %i in range(1, %nk) iter(%a = %a0) {\n"
    "    %tl = tile.load(%l, [0, %i * 8], [16, 8], space=mat)\n"
    "    %tr = tile.load(%r, [%i * 8, 0], [8, 32], space=mat)\n"
    "    %ml = tile.move(%tl, space=left)\n"
    "    %mr = tile.move(%tr, space=right)\n"
    "    %a2 = tile.matmul_acc(%a, %ml, %mr)\n"
    "    yield %a2\n"
    "  }\n"
    "  %c1 = tile.store(%acc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

/* Scratch footprints: in-place reuse, fused temporaries without buffers, moves as aliases,
 * loop carries computed in their own buffer. */
static void test_lower_scratch_plan_reuses_buffers(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_add_src, 2);
  assert_non_null(L);
  uint64_t need = 0;
  lib_fn(L, "add_block", &need);
  assert_int_equal(need, 2 * 32 * 128 * 4); /* %tc reuses %ta */
  lib_free(L);
  L = lib_build(k_plan_src, 2);
  assert_non_null(L);
  lib_fn(L, "chain", &need);
  assert_int_equal(need, 3 * 16 * 64 * 2); /* ta, tb (= t9), t2: t1 and t3..t8 are fused away */
  lib_fn(L, "loop_acc", &need);
  assert_int_equal(need, 2 * 8 * 32 * 4); /* z = acc = s = s2, and t */
  lib_fn(L, "mm", &need);
  assert_int_equal(need, 3 * 64 * 64 * 4); /* moves alias their sources */
  /* a K loop: the first product becomes the carried accumulator and matmul_acc updates it in
   * place, so no tile is ever copied; the first loads share bytes with the loop's loads */
  lib_fn(L, "kloop", &need);
  assert_int_equal(need, 16 * 32 * 4 + 16 * 8 * 2 + 8 * 32 * 2);
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/kloop.ll", L->dir);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  assert_null(strstr(text, "llvm.memcpy"));
  free(text);
  lib_free(L);
}

/* f32 row reductions keep each row's scalar chain, through the 8x8 transposes (any row
 * reduction) and along the row (max and min of rows a multiple of 16 long): NaNs (maxnum and
 * minnum skip them), zeros, infinities and a sum whose order matters, against the interpreter
 * bit for bit. Not tested: the max or min of a row of mixed +0 and -0, where compiled code
 * (llvm.maxnum/minnum, either zero allowed) and the interpreter's fmaxf/fminf can pick different
 * zeros (-0 vs +0 for a row alternating -0, +0): a difference that predates these reductions,
 * the scalar lowering gives the same -0. */
static void row_reductions_special(int C) {
  char src[1024];
  snprintf(src, sizeof src,
           "program red\n"
           "kernel @red(%%a: tensor[16,%d] f32, out %%mx: tensor[16,1] f32,\n"
           "            out %%mn: tensor[16,1] f32, out %%sm: tensor[16,1] f32)\n"
           "    -> (tensor[16,1] f32, tensor[16,1] f32, tensor[16,1] f32) {\n"
           "  %%t = tile.load(%%a, [0, 0], [16, %d])\n"
           "  %%x = tile.row_max(%%t)\n"
           "  %%n = tile.row_min(%%t)\n"
           "  %%s = tile.row_sum(%%t)\n"
           "  %%x1 = tile.store(%%x, [0, 0], %%mx)\n"
           "  %%n1 = tile.store(%%n, [0, 0], %%mn)\n"
           "  %%s1 = tile.store(%%s, [0, 0], %%sm)\n"
           "  return %%x1, %%n1, %%s1\n}\n",
           C, C);
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  static float a[16 * 64], out[2][3][16];
  const float sp[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1e30f, -1e30f, 1.0f, 0x1p-24f, -NAN};
  for (int i = 0; i < 16 * C; i++)
    a[i] = (i * 7) % 5 == 0 ? sp[(i * 3) % 10] : (float)((i * 37) % 101) * 0.01f - 0.5f;
  for (int c = 0; c < C; c++) { /* row 1 all NaN, row 2 all -0, row 3 all +0 */
    a[C + c] = NAN;
    a[2 * C + c] = -0.0f;
    a[3 * C + c] = 0.0f;
  }
  /* row 4: NaN first, then numbers; row 5: numbers, a NaN in every lane's middle; row 6: all
   * -inf; row 7: negatives and one -0 (a zero maximum); row 8: one huge value last;
   * row 9: NaN in the first 16 (every lane starts with a NaN), a maximum after */
  for (int c = 0; c < C; c++) {
    a[4 * C + c] = c == 0 ? NAN : (float)(c % 13) - 6.0f;
    a[5 * C + c] = c >= 16 && c < 32 ? NAN : (float)(c * 3 % 17) * 0.25f;
    a[6 * C + c] = -INFINITY;
    a[7 * C + c] = c == C / 2 ? -0.0f : -(float)(c + 1);
    a[8 * C + c] = c == C - 1 ? 3e38f : (float)c;
    a[9 * C + c] = c < 16 ? NAN : c == C - 2 ? 7.0f : -(float)c;
  }
  for (int k = 0; k < 2; k++) {
    pto_ir_interp_arg args[4];
    memset(args, 0, sizeof args);
    int64_t sa[2] = {16, C}, so[2] = {16, 1};
    for (int i = 0; i < 4; i++)
      args[i].is_tensor = 1;
    pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, sa);
    for (int i = 0; i < 3; i++)
      pto_host_tensor_init(&args[1 + i].tensor, out[k][i], PTO_DTYPE_F32, 2, so);
    if (k == 0)
      assert_int_equal(run_native(L, "red", args, 4, 0, NULL), 0);
    else
      assert_pto_ok(pto_ir_interp_run(L->p, pto_ir_program_find_func(L->p, "red"), args, 4));
  }
  for (int i = 0; i < 3; i++)
    for (int r = 0; r < 16; r++)
      if (memcmp(&out[0][i][r], &out[1][i][r], 4)) {
        print_error("C=%d reduction %d row %d: kernel %a, interpreter %a\n", C, i, r,
                    (double)out[0][i][r], (double)out[1][i][r]);
        fail();
      }
  lib_free(L);
}

static void test_lower_row_reductions_special_values(void **state) {
  (void)state;
  row_reductions_special(24); /* 8x8 transposes */
  row_reductions_special(48); /* along the row, one accumulator */
  row_reductions_special(64); /* along the row, four accumulators */
}

/* Runs kernel name of L, C[M,N] f32 = A[M,K] x B[K,N] of dtype in (its three tensor
 * parameters), compiled into o and interpreted into o2. */
static void mm_run_both(tl_lib *L, const char *name, pto_dtype in, void *a, void *b, int64_t M,
                        int64_t K, int64_t N, float *o, float *o2) {
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  for (int i = 0; i < 3; i++)
    args[i].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, in, 2, sa);
  pto_host_tensor_init(&args[1].tensor, b, in, 2, sb);
  pto_host_tensor_init(&args[2].tensor, o, PTO_DTYPE_F32, 2, sc);
  assert_int_equal(run_native(L, name, args, 3, 0, NULL), 0);
  pto_host_tensor_init(&args[2].tensor, o2, PTO_DTYPE_F32, 2, sc);
  assert_pto_ok(pto_ir_interp_run(L->p, pto_ir_program_find_func(L->p, name), args, 3));
}

/* Checks o (compiled) and o2 (interpreted) of name's C[M,N] = -1 + A[M,K] x B[K,N] against an
 * fmaf chain in k order, bit for bit. */
static void mm_check_fma_chain(const char *name, const float *a, const float *b, int M, int K,
                               int N, const float *o, const float *o2) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float sum = -1.0f;
      for (int k = 0; k < K; k++)
        sum = fmaf(a[i * K + k], b[k * N + j], sum);
      if (memcmp(&sum, &o[i * N + j], 4) || memcmp(&sum, &o2[i * N + j], 4)) {
        print_error("@%s [%d,%d]: kernel %a, interpreter %a, fmaf chain %a\n", name, i, j,
                    (double)o[i * N + j], (double)o2[i * N + j], (double)sum);
        fail();
      }
    }
}

/* f32 matmul is one fused multiply-add per product, in k order, compiled and interpreted alike:
 * with l = r = 1 + 2^-12 and acc = -1, fmaf gives 2^-11 + 2^-24 where a rounded product then a
 * sum gives 2^-11. Shapes that take the 8x48, 8x32, 4-row and scalar paths of the lowering. */
static const char *k_fma_src =
    "program fma\n"
    "kernel @mmfma(%a: tensor[13,3] f32, %b: tensor[3,100] f32,\n"
    "              out %o: tensor[13,100] f32) -> (tensor[13,100] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [13, 3], space=mat)\n"
    "  %tb = tile.load(%b, [0, 0], [3, 100], space=mat)\n"
    "  %l = tile.move(%ta, space=left)\n"
    "  %r = tile.move(%tb, space=right)\n"
    "  %acc = tile.full([13, 100], f32, -1, space=acc)\n"
    "  %m = tile.matmul_acc(%acc, %l, %r)\n"
    "  %o1 = tile.store(%m, [0, 0], %o)\n"
    "  return %o1\n"
    "}\n";

static void test_lower_matmul_is_fused_multiply_add(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_fma_src, 2);
  assert_non_null(L);
  static float a[13 * 3], b[3 * 100], c[13 * 100], o[13 * 100], o2[13 * 100];
  const float x = 1.0f + 0x1p-12f;
  for (int i = 0; i < 13 * 3; i++)
    a[i] = i % 3 == 0 ? x : i < 3 ? 0.0f : (float)(i % 5) * 0.25f; /* row 0: x, 0, 0 */
  for (int i = 0; i < 3 * 100; i++)
    b[i] = i < 100 ? x : (float)(i % 7) * 0.125f;
  for (int i = 0; i < 13 * 100; i++)
    c[i] = -1.0f;
  mm_run_both(L, "mmfma", PTO_DTYPE_F32, a, b, 13, 3, 100, o, o2);
  for (int i = 0; i < 13; i++)
    for (int j = 0; j < 100; j++) {
      float want = c[i * 100 + j];
      for (int k = 0; k < 3; k++)
        want = fmaf(a[i * 3 + k], b[k * 100 + j], want);
      if (memcmp(&want, &o[i * 100 + j], 4) || memcmp(&want, &o2[i * 100 + j], 4)) {
        print_error("[%d,%d]: kernel %a, interpreter %a, fmaf chain %a\n", i, j,
                    (double)o[i * 100 + j], (double)o2[i * 100 + j], (double)want);
        fail();
      }
    }
  assert_true(o[0] == 0x1p-11f + 0x1p-24f); /* not 0x1p-11f: the product was not rounded */
  lib_free(L);
}

/* bf16 matmul on the host's bf16 dot products (vdpbf16ps, where it has AVX512_BF16) stays the
 * interpreter's fmaf chain in k order: the pairs are packed so that k = 2p goes first (with the
 * instruction's own order, odd element first, row "order" would give 0.5 + 2^-24), an odd K's
 * last step is one fma, and operands outside the range where the instruction equals fmaf (it
 * flushes denormals) take the fmaf blocks: a product of 2^-140 (row "tiny"), a sum of 2^-135 from
 * an accumulator below 2^-103 (@mmdp_acc), an infinity. [13,5] x [5,116]: 8x48 and 4-row 16-lane
 * blocks, an 8-lane block, scalar edges. */
static const char *k_dp_fmt =
    "program dp\n"
    "kernel @mmdp%s(%%a: tensor[13,5] bf16, %%b: tensor[5,116] bf16,\n"
    "              out %%o: tensor[13,116] f32) -> (tensor[13,116] f32) {\n"
    "  %%ta = tile.load(%%a, [0, 0], [13, 5], space=mat)\n"
    "  %%tb = tile.load(%%b, [0, 0], [5, 116], space=mat)\n"
    "  %%l = tile.move(%%ta, space=left)\n"
    "  %%r = tile.move(%%tb, space=right)\n"
    "  %%acc = tile.full([13, 116], f32, %.17g, space=acc)\n"
    "  %%m = tile.matmul_acc(%%acc, %%l, %%r)\n"
    "  %%o1 = tile.store(%%m, [0, 0], %%o)\n"
    "  return %%o1\n"
    "}\n";

/* Runs kernel name of L on l [13,5] and r [5,116] (floats, exact in bf16) and returns whether
 * the kernel and the interpreter both gave want[i] in every element of row i. */
static int dp_run_rows(tl_lib *L, const char *name, const float *l, const float *r,
                       const float *want) {
  static uint16_t a[13 * 5], b[5 * 116];
  static float o[13 * 116], o2[13 * 116];
  for (int i = 0; i < 13 * 5; i++)
    a[i] = pto_f32_to_bf16(l[i]);
  for (int i = 0; i < 5 * 116; i++)
    b[i] = pto_f32_to_bf16(r[i]);
  mm_run_both(L, name, PTO_DTYPE_BF16, a, b, 13, 5, 116, o, o2);
  for (int i = 0; i < 13 * 116; i++)
    if (memcmp(&o[i], &want[i / 116], 4) || memcmp(&o2[i], &want[i / 116], 4)) {
      print_error("@%s [%d,%d]: kernel %a, interpreter %a, want %a\n", name, i / 116, i % 116,
                  (double)o[i], (double)o2[i], (double)want[i / 116]);
      return 0;
    }
  return 1;
}

static int dp_run(tl_lib *L, const char *name, const float *l, const float *r, float want) {
  float w[13];
  for (int i = 0; i < 13; i++)
    w[i] = want;
  return dp_run_rows(L, name, l, r, w);
}

static void test_lower_bf16_matmul_dot_products(void **state) {
  (void)state;
  char src[4096];
  int n = snprintf(src, sizeof src, k_dp_fmt, "", 0.0);
  snprintf(src + n, sizeof src - (size_t)n, strchr(k_dp_fmt, '\n') + 1, "_acc",
           (double)(0x1p-112f + 0x1p-135f));
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  if (pto__lower_host_has("+avx512bf16") && pto__lower_host_has("+avx512vl")) {
    assert_true(ll_has(L, "mmdp", "@llvm.x86.avx512bf16.dpbf16ps.512"));
    assert_true(ll_has(L, "mmdp", "@llvm.x86.avx512bf16.dpbf16ps.256"));
  } else {
    print_message("host without AVX512_BF16 or generic lowering: the fmaf blocks only\n");
  }
  static float l[13 * 5], r[5 * 116];
  /* order: sum 1, then 1 + 2^-24 (a tie: 1) - 1, then + 0.5 */
  static const float lrow[5] = {1, 0, 0x1p-12f, -1, 0.5f}, rcol[5] = {1, 0, 0x1p-12f, 1, 1};
  for (int i = 0; i < 13 * 5; i++)
    l[i] = lrow[i % 5];
  for (int i = 0; i < 5 * 116; i++)
    r[i] = rcol[i / 116];
  assert_true(dp_run(L, "mmdp", l, r, 0.5f));
  /* tiny: 2^-70 x 2^-70 */
  memset(l, 0, sizeof l);
  memset(r, 0, sizeof r);
  for (int i = 0; i < 13; i++)
    l[i * 5] = 0x1p-70f;
  for (int j = 0; j < 116; j++)
    r[j] = 0x1p-70f;
  assert_true(dp_run(L, "mmdp", l, r, 0x1p-140f));
  /* an accumulator of 2^-112 + 2^-135 minus 2^-56 x 2^-56 (the inputs in range) */
  for (int i = 0; i < 13; i++)
    l[i * 5] = -0x1p-56f;
  for (int j = 0; j < 116; j++)
    r[j] = 0x1p-56f;
  assert_true(dp_run(L, "mmdp_acc", l, r, 0x1p-135f));
  /* an infinity among the inputs (outside the range: the fmaf blocks) gives the interpreter's
   * inf in its row; 2^40 x 2^40 in the others */
  for (int i = 0; i < 13; i++) {
    l[i * 5] = i == 12 ? INFINITY : 0x1p40f;
    l[i * 5 + 1] = i == 12 ? 1.0f : 0.0f;
  }
  for (int j = 0; j < 116; j++) {
    r[j] = 0x1p40f;
    r[116 + j] = 1.0f;
  }
  float inf_want[13];
  for (int i = 0; i < 13; i++)
    inf_want[i] = i == 12 ? INFINITY : 0x1p80f;
  assert_true(dp_run_rows(L, "mmdp", l, r, inf_want));
  lib_free(L);
}

/* A matmul in a k loop whose tile.loads move with the loop (the blocked matmul of
 * bench/kernels/matmul.ptir, small; N = 80: 16-lane blocks on AVX-512 hosts, N = 16: 8-lane
 * blocks everywhere): the matmul prefetches the next iteration's load windows while it computes
 * ("pf.next"; the last iteration's lie past the tensors' ends, which a prefetch may touch), a
 * load prefetches its rows ahead ("pf.row"), and the result is still one
 * fma per product in k order, bit for bit the interpreter's. A load whose offset divides is
 * never evaluated at the next iteration (a division there could fail a check the loop never
 * reaches): that kernel prefetches no next window. The offsets may go through scalars assigned
 * in the loop body (@mmvar: re-evaluated at the next iteration; @mmvardiv: a division there,
 * no next window). */
/* A k-loop kernel of the program: its name, N, the scalars assigned at the top of the loop body,
 * the k offset, and whether it prefetches next windows. */
static const struct mm_loop_kernel {
  const char *name;
  int n;
  const char *scalars, *koff;
  int next;
} k_mm_loop[] = {{"mmk", 80, "", "%k * 8", 1},
                 {"mmk16", 16, "", "%k * 8", 1},
                 {"mmvar", 80, "    %k1 = %k * 4\n    %k0 = %k1 + %k1\n", "%k0", 1},
                 {"mmvardiv", 80, "    %k0 = %k * 16 / 2\n", "%k0", 0},
                 {"mmdiv", 80, "", "%k * 16 / 2", 0}};

static const char *k_mm_loop_fmt =
    "kernel @%s(%%a: tensor[16,24] f32, %%b: tensor[24,%d] f32, out %%o: tensor[16,%d] f32)\n"
    "    -> (tensor[16,%d] f32) {\n"
    "  %%acc0 = tile.full([16, %d], f32, -1, space=acc)\n"
    "  %%acc = for %%k in range(0, 3) iter(%%ck = %%acc0) {\n"
    "%s"
    "    %%ta = tile.load(%%a, [0, %s], [16, 8], space=mat)\n"
    "    %%tb = tile.load(%%b, [%s, 0], [8, %d], space=mat)\n"
    "    %%l = tile.move(%%ta, space=left)\n"
    "    %%r = tile.move(%%tb, space=right)\n"
    "    %%cn = tile.matmul_acc(%%ck, %%l, %%r)\n"
    "    yield %%cn\n"
    "  }\n"
    "  %%o1 = tile.store(%%acc, [0, 0], %%o)\n"
    "  return %%o1\n"
    "}\n";

static const char *k_mm64_src =
    "kernel @mm64(%a: tensor[8,8] f32, %b: tensor[8,64] f32, out %o: tensor[8,64] f32)\n"
    "    -> (tensor[8,64] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [8, 8], space=mat)\n"
    "  %tb = tile.load(%b, [0, 0], [8, 64], space=mat)\n"
    "  %l = tile.move(%ta, space=left)\n"
    "  %r = tile.move(%tb, space=right)\n"
    "  %m = tile.matmul(%l, %r)\n"
    "  %o1 = tile.store(%m, [0, 0], %o)\n"
    "  return %o1\n"
    "}\n";

/* @mm64: N = 64 on a host with 512-bit vectors takes two 8 x 32 blocks, not 8 x 48 and 16
 * columns of the 8-lane kernel (so 16-lane fmas only). @mmk's prefetches survive optimization. */
static void check_mm64(tl_lib *L) {
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/mm64.ll", L->dir);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  if (strstr(text, "@llvm.fma.v16f32") && strstr(text, "@llvm.fma.v8f32")) {
    print_error("@mm64: 8-lane fmas beside 16-lane ones\n");
    free(text);
    fail();
  }
  free(text);
  snprintf(ll, sizeof ll, "%s/mmk.ll", L->dir);
  assert_pto_ok(pto__optimize_ll_text(ll, 2, &text));
  assert_non_null(strstr(text, "call void @llvm.prefetch"));
  free(text);
}

/* The decode step's GEMV: the weight's window goes into the matmul as a view with the tensor's
 * row stride ("view.rs"), not through a copy; a right operand that is also stored, or one of a
 * matmul of 16 rows (which reads it once per block of rows), stays a copy (the differential cases
 * "mmv*" of the matmul group check the results of both against the interpreter). */
static const char *k_rview_src =
    "program rview\n"
    "dynamic K\n"
    "kernel @gemv(%a: tensor[1,K] f32, %b: tensor[K,4096] f32, out %c: tensor[1,256] f32)\n"
    "    -> (tensor[1,256] f32) {\n"
    "  %acc0 = tile.full([1, 256], f32, 0, space=acc)\n"
    "  %acc = for %k in range(0, K / 64) iter(%ck = %acc0) {\n"
    "    %ta = tile.load(%a, [0, %k * 64], [1, 64], space=mat)\n"
    "    %tb = tile.load(%b, [%k * 64, 256], [64, 256], space=mat)\n"
    "    %l = tile.move(%ta, space=left)\n"
    "    %r = tile.move(%tb, space=right)\n"
    "    %cn = tile.matmul_acc(%ck, %l, %r)\n"
    "    yield %cn\n"
    "  }\n"
    "  %c1 = tile.store(%acc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @stored(%a: tensor[1,64] f32, %b: tensor[64,512] f32, out %c: tensor[1,256] f32,\n"
    "               out %d: tensor[64,256] f32) -> (tensor[1,256] f32, tensor[64,256] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [1, 64], space=mat)\n"
    "  %tb = tile.load(%b, [0, 0], [64, 256], space=mat)\n"
    "  %l = tile.move(%ta, space=left)\n"
    "  %r = tile.move(%tb, space=right)\n"
    "  %m = tile.matmul(%l, %r)\n"
    "  %d1 = tile.store(%tb, [0, 0], %d)\n"
    "  %c1 = tile.store(%m, [0, 0], %c)\n"
    "  return %c1, %d1\n"
    "}\n"
    "kernel @rows16(%a: tensor[16,64] f32, %b: tensor[64,512] f32, out %c: tensor[16,256] f32)\n"
    "    -> (tensor[16,256] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [16, 64], space=mat)\n"
    "  %tb = tile.load(%b, [0, 0], [64, 256], space=mat)\n"
    "  %l = tile.move(%ta, space=left)\n"
    "  %r = tile.move(%tb, space=right)\n"
    "  %m = tile.matmul(%l, %r)\n"
    "  %c1 = tile.store(%m, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

static void test_lower_matmul_right_operand_is_a_strided_view(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_rview_src, 2);
  assert_non_null(L);
  static const struct {
    const char *k;
    int view;
  } want[] = {{"gemv", 1}, {"stored", 0}, {"rows16", 0}};
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    int view = ll_contains(L, want[w].k, "%view.rs = select");
    if (view != want[w].view) {
      print_error("@%s: strided view %d, want %d\n", want[w].k, view, want[w].view);
      fail();
    }
  }
  lib_free(L);
}

/* The attention's P . V and q . K: V's rows gathered through the block table go into the
 * matmul, and K's into the mul before row_sum, read through the index tile ("rview.base"), not
 * copied; a gathered tile also stored, one of a matmul of 16 rows, one whose index tile is
 * overwritten (in place) before the matmul reads it, and one a streamed run stores stay copies (the
 * differential cases "mmg*" of the matmul group check the results against the interpreter,
 * "tile_gather_rows_into_*" of the struct group the elementwise ones). */
static const char *k_gview_src =
    "program gview\n"
    "dynamic S\n"
    "kernel @pv(%p: tensor[1,64] f32, %v: tensor[S,128] f32, out %c: tensor[1,128] f32)\n"
    "    -> (tensor[1,128] f32) {\n"
    "  %tp = tile.load(%p, [0, 0], [1, 64], space=mat)\n"
    "  %l = tile.move(%tp, space=left)\n"
    "  %z = tile.full([1, 128], f32, 0, space=acc)\n"
    "  %o = for %i in range(0, 4) iter(%cz = %z) {\n"
    "    %ci = tile.ci(i32(%i * 64), [1, 64], dtype=i32)\n"
    "    %ix = tile.reshape(%ci, [64, 1])\n"
    "    %tv = tile.gather_rows(%v, %ix, [0], [64, 128])\n"
    "    %vm = tile.move(%tv, space=mat)\n"
    "    %vr = tile.move(%vm, space=right)\n"
    "    %cn = tile.matmul_acc(%cz, %l, %vr)\n"
    "    yield %cn\n"
    "  }\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @stored(%p: tensor[1,64] f32, %v: tensor[S,128] f32, out %c: tensor[1,128] f32,\n"
    "               out %d: tensor[64,128] f32) -> (tensor[1,128] f32, tensor[64,128] f32) {\n"
    "  %tp = tile.load(%p, [0, 0], [1, 64], space=mat)\n"
    "  %l = tile.move(%tp, space=left)\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tv = tile.gather_rows(%v, %ix, [0], [64, 128])\n"
    "  %vr = tile.move(%tv, space=right)\n"
    "  %o = tile.matmul(%l, %vr)\n"
    "  %d1 = tile.store(%tv, [0, 0], %d)\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1, %d1\n"
    "}\n"
    "kernel @rows16(%p: tensor[16,64] f32, %v: tensor[S,128] f32, out %c: tensor[16,128] f32)\n"
    "    -> (tensor[16,128] f32) {\n"
    "  %tp = tile.load(%p, [0, 0], [16, 64], space=mat)\n"
    "  %l = tile.move(%tp, space=left)\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tv = tile.gather_rows(%v, %ix, [0], [64, 128])\n"
    "  %vr = tile.move(%tv, space=right)\n"
    "  %o = tile.matmul(%l, %vr)\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @reused(%p: tensor[1,64] f32, %v: tensor[S,128] f32, out %c: tensor[1,128] f32,\n"
    "               out %d: tensor[64,1] i32) -> (tensor[1,128] f32, tensor[64,1] i32) {\n"
    "  %tp = tile.load(%p, [0, 0], [1, 64], space=mat)\n"
    "  %l = tile.move(%tp, space=left)\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tv = tile.gather_rows(%v, %ix, [0], [64, 128])\n"
    "  %i2 = tile.adds(%ix, 1)\n"
    "  %vr = tile.move(%tv, space=right)\n"
    "  %o = tile.matmul(%l, %vr)\n"
    "  %d1 = tile.store(%i2, [0, 0], %d)\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1, %d1\n"
    "}\n"
    "kernel @qk(%q: tensor[1,128] f32, %k: tensor[S,128] f32, out %c: tensor[64,1] f32)\n"
    "    -> (tensor[64,1] f32) {\n"
    "  %tq = tile.load(%q, [0, 0], [1, 128])\n"
    "  %qx = tile.col_expand(%tq, [64, 128])\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tk = tile.gather_rows(%k, %ix, [0], [64, 128])\n"
    "  %m = tile.mul(%tk, %qx)\n"
    "  %s = tile.row_sum(%m)\n"
    "  %c1 = tile.store(%s, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @streamed(%k: tensor[S,128] f32, out %c: tensor[64,128] f32)\n"
    "    -> (tensor[64,128] f32) {\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tk = tile.gather_rows(%k, %ix, [0], [64, 128])\n"
    "  %m = tile.muls(%tk, 2.0)\n"
    "  %c1 = tile.store(%m, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

static void test_lower_matmul_right_operand_read_through_gather_indices(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_gview_src, 2);
  assert_non_null(L);
  static const struct {
    const char *k;
    int view;
  } want[] = {{"pv", 1}, {"stored", 0}, {"rows16", 0}, {"reused", 0}, {"qk", 1}, {"streamed", 0}};
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    int view = ll_contains(L, want[w].k, "%rview.base = select");
    if (view != want[w].view) {
      print_error("@%s: view through the indices %d, want %d\n", want[w].k, view, want[w].view);
      fail();
    }
  }
  lib_free(L);
}

/* A run that computes a tile row by row while a loop walks tiles (the softmax of bench/kernels)
 * prefetches, a block of the row at a time, the lines its later tile.store writes (for writing)
 * and the next iteration's tile.load window (for reading); in a loop whose load does not move
 * with the induction value, only the store's. The results are the interpreter's (the "smx"
 * differential case covers the kernel with both). A kernel of the test program: its name, the
 * rows of its x, the row offset of its load. */
static const char *const k_fused_pf_kernel =
    "kernel @%s(%%x: tensor[%d,512] f32, out %%y: tensor[32,512] f32) -> (tensor[32,512] f32) {\n"
    "  for %%i in range(0, 4) {\n"
    "    %%t = tile.load(%%x, [%s, 0], [8, 512])\n"
    "    %%m = tile.row_max(%%t)\n"
    "    %%d = tile.row_expand_sub(%%t, %%m)\n"
    "    %%e = tile.exp(%%d)\n"
    "    %%s = tile.row_sum(%%e)\n"
    "    %%p = tile.row_expand_div(%%e, %%s)\n"
    "    tile.store(%%p, [%%i * 8, 0], %%y)\n"
    "  }\n"
    "  return %%y\n"
    "}\n";

static void test_lower_fused_run_prefetches_store_and_next_load(void **state) {
  (void)state;
  char *both = dupf(k_fused_pf_kernel, "both", 32, "%i * 8");
  char *store_only = dupf(k_fused_pf_kernel, "store_only", 8, "0");
  char *src = dupf("program fpf\n%s%s", both, store_only);
  tl_lib *L = lib_build(src, 2);
  free(both);
  free(store_only);
  free(src);
  assert_non_null(L);
  static const struct {
    const char *k;
    int next;
  } want[] = {{"both", 1}, {"store_only", 0}};
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    char ll[1024];
    snprintf(ll, sizeof ll, "%s/%s.ll", L->dir, want[w].k);
    char *text = tu_read_file(ll, NULL);
    assert_non_null(text);
    int blocked = strstr(text, "ew.jb") != NULL;
    int write = strstr(text, "%pf.store = ") != NULL && strstr(text, "i32 1, i32 3, i32 1)");
    int read = strstr(text, "%pf.next = ") != NULL;
    free(text);
    if (!blocked || !write || read != want[w].next) {
      print_error("@%s: blocked %d, write prefetch %d, read prefetch %d (want %d)\n", want[w].k,
                  blocked, write, read, want[w].next);
      fail();
    }
  }
  lib_free(L);
}

/* A run that reads K's rows row by row in the attention's chunk loop prefetches, beside its row
 * i, row idx[i] of the gather of V that comes later in the loop body ("pf.gather"): @ahead. None
 * where V's index tile is computed after the run (its rows hold nothing yet: @late), or where
 * V's column offset divides (evaluated ahead, a division could fail before the statements that
 * come first: @divoff). The "mmga*" differential cases of the matmul group check the results. */
static const char *const k_gather_ahead_kernel =
    "kernel @%s(%%q: tensor[1,128] f32, %%k: tensor[S,128] f32, %%v: tensor[S,128] f32,\n"
    "           out %%c: tensor[1,128] f32, %%d: index) -> (tensor[1,128] f32) {\n"
    "  %%tq = tile.load(%%q, [0, 0], [1, 128])\n"
    "  %%qx = tile.col_expand(%%tq, [64, 128])\n"
    "  %%z = tile.full([1, 128], f32, 0, space=acc)\n"
    "  %%o = for %%i in range(0, 4) iter(%%cz = %%z) {\n"
    "    %%ci = tile.ci(i32(%%i * 64), [1, 64], dtype=i32)\n"
    "    %%ix = tile.reshape(%%ci, [64, 1])\n"
    "    %%tk = tile.gather_rows(%%k, %%ix, [0], [64, 128])\n"
    "    %%m = tile.mul(%%tk, %%qx)\n"
    "    %%s = tile.row_sum(%%m)\n"
    "    %%p = tile.reshape(%%s, [1, 64])\n"
    "    %%pm = tile.move(%%p, space=mat)\n"
    "    %%pl = tile.move(%%pm, space=left)\n"
    "%s"
    "    %%tv = tile.gather_rows(%%v, %%%s, [%s], [64, 128])\n"
    "    %%vm = tile.move(%%tv, space=mat)\n"
    "    %%vr = tile.move(%%vm, space=right)\n"
    "    %%cn = tile.matmul_acc(%%cz, %%pl, %%vr)\n"
    "    yield %%cn\n"
    "  }\n"
    "  %%c1 = tile.store(%%o, [0, 0], %%c)\n"
    "  return %%c1\n"
    "}\n";

static void test_lower_row_run_prefetches_gather_ahead(void **state) {
  (void)state;
  static const struct {
    const char *k, *def, *iv, *c0;
    int pf;
  } want[] = {{"ahead", "", "ix", "0", 1},
              {"late", "    %iv = tile.adds(%ix, 0)\n", "iv", "0", 0},
              {"divoff", "", "ix", "%d / 2", 0}};
  char *src = dupf("program gahead\ndynamic S\n");
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    char *k = dupf(k_gather_ahead_kernel, want[w].k, want[w].def, want[w].iv, want[w].c0);
    char *both = dupf("%s%s", src, k);
    free(k);
    free(src);
    src = both;
  }
  tl_lib *L = lib_build(src, 2);
  free(src);
  assert_non_null(L);
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    int pf = ll_contains(L, want[w].k, "%pf.gather = ");
    if (pf != want[w].pf) {
      print_error("@%s: V's rows prefetched %d, want %d\n", want[w].k, pf, want[w].pf);
      fail();
    }
  }
  lib_free(L);
}

/* A column expansion is a kind of the fused runs: tile.col_expand_mul(K, q) reads K's gathered
 * rows through their index tile (plan_row_views: "rview.base", no copy), q at each element's
 * column from its one row, in the run's loop ("ew.i") rather than a loop of its own ("bc.i").
 * The "mmga2" and "cexp"/"cexi" differential cases check the results. */
static void test_lower_col_expand_fuses_and_reads_views(void **state) {
  (void)state;
  tl_lib *L = lib_build("program colq\ndynamic S\n"
                        "kernel @colq(%q: tensor[1,128] f32, %k: tensor[S,128] f32,\n"
                        "             out %c: tensor[64,1] f32) -> (tensor[64,1] f32) {\n"
                        "  %tq = tile.load(%q, [0, 0], [1, 128])\n"
                        "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
                        "  %ix = tile.reshape(%ci, [64, 1])\n"
                        "  %tk = tile.gather_rows(%k, %ix, [0], [64, 128])\n"
                        "  %m = tile.col_expand_mul(%tk, %tq)\n"
                        "  %s = tile.row_sum(%m)\n"
                        "  %c1 = tile.store(%s, [0, 0], %c)\n"
                        "  return %c1\n"
                        "}\n",
                        2);
  assert_non_null(L);
  if (!ll_has(L, "colq", "rview.base") || !ll_has(L, "colq", "ew.i") ||
      ll_contains(L, "colq", "bc.i")) {
    print_error("@colq: the column expansion is not a fused run over K's view\n");
    fail();
  }
  lib_free(L);
}

static void test_lower_matmul_prefetches_next_loads(void **state) {
  (void)state;
  static char src[8192];
  int len = snprintf(src, sizeof src, "program mmloop\n");
  for (size_t i = 0; i < sizeof k_mm_loop / sizeof k_mm_loop[0]; i++) {
    const struct mm_loop_kernel *k = &k_mm_loop[i];
    len += snprintf(src + len, sizeof src - (size_t)len, k_mm_loop_fmt, k->name, k->n, k->n, k->n,
                    k->n, k->scalars, k->koff, k->koff, k->n);
  }
  snprintf(src + len, sizeof src - (size_t)len, "%s", k_mm64_src);
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  static float a[16 * 24], b[24 * 80], o[16 * 80], o2[16 * 80];
  for (int i = 0; i < 16 * 24; i++)
    a[i] = (float)((i * 37) % 23 - 11) * 0.0625f + 0x1p-13f * (float)(i % 3);
  for (int i = 0; i < 24 * 80; i++)
    b[i] = (float)((i * 53) % 19 - 9) * 0.125f + 0x1p-14f * (float)(i % 5);
  for (size_t w = 0; w < sizeof k_mm_loop / sizeof k_mm_loop[0]; w++) {
    const struct mm_loop_kernel *k = &k_mm_loop[w];
    char ll[1024];
    snprintf(ll, sizeof ll, "%s/%s.ll", L->dir, k->name);
    char *text = tu_read_file(ll, NULL);
    assert_non_null(text);
    /* the row-ahead prefetch is sized 0 at run time for rows back to back ("pf.bytes") */
    if (!strstr(text, "pf.row") || !strstr(text, "%pf.bytes = select") ||
        !strstr(text, "@llvm.prefetch") || !strstr(text, "pf.next") != !k->next) {
      print_error("@%s: prefetches not as expected (next windows: %d)\n", k->name, k->next);
      free(text);
      fail();
    }
    free(text);
    int N = k->n;
    mm_run_both(L, k->name, PTO_DTYPE_F32, a, b, 16, 24, N, o, o2);
    mm_check_fma_chain(k->name, a, b, 16, 24, N, o, o2);
  }
  check_mm64(L);
  lib_free(L);
}

/* A decode step's batch, M <= 8 rows (@mmb8: the 8 x 48 and 8 x 32 blocks; @mmb5: 4-row blocks,
 * a 1-row block and 8 columns of the simple loop), in a k loop whose loads move: on 512-bit
 * vectors the matmul prefetches no next windows (mm_blocks: there they cost more than they
 * bring) but the first block prefetches the rest of each row of W's window ("pf.rest",
 * mm_blocked), elsewhere it does as for 16 rows and prefetches no rest; @mmb2 (M < 4, the wide
 * row blocks that read whole row pieces) neither. Either way one fma per product in k order, bit
 * for bit the interpreter's. */
static const char *k_mm_rows_fmt =
    "kernel @%s(%%a: tensor[%d,24] %s, %%b: tensor[24,%d] %s, out %%o: tensor[%d,%d] f32)\n"
    "    -> (tensor[%d,%d] f32) {\n"
    "  %%acc0 = tile.full([%d, %d], f32, -1, space=acc)\n"
    "  %%acc = for %%k in range(0, 3) iter(%%ck = %%acc0) {\n"
    "    %%ta = tile.load(%%a, [0, %%k * 8], [%d, 8], space=mat)\n"
    "    %%tb = tile.load(%%b, [%%k * 8, 0], [8, %d], space=mat)\n"
    "    %%l = tile.move(%%ta, space=left)\n"
    "    %%r = tile.move(%%tb, space=right)\n"
    "    %%cn = tile.matmul_acc(%%ck, %%l, %%r)\n"
    "    yield %%cn\n"
    "  }\n"
    "  %%o1 = tile.store(%%acc, [0, 0], %%o)\n"
    "  return %%o1\n"
    "}\n";

static void test_lower_matmul_decode_rows_prefetch_rest(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int m, n;
  } ks[] = {{"mmb8", 8, 80}, {"mmb5", 5, 88}, {"mmb2", 2, 64}};
  static char src[4096];
  int len = snprintf(src, sizeof src, "program mmrows\n");
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    int M = ks[i].m, N = ks[i].n;
    len += snprintf(src + len, sizeof src - (size_t)len, k_mm_rows_fmt, ks[i].name, M, "f32", N,
                    "f32", M, N, M, N, M, N, M, N);
  }
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  int wide = pto__lower_host_has("+avx512f");
  static float a[8 * 24], b[24 * 88], o[8 * 88], o2[8 * 88];
  for (size_t w = 0; w < sizeof ks / sizeof ks[0]; w++) {
    int M = ks[w].m, N = ks[w].n;
    int next = ll_contains(L, ks[w].name, "pf.next"), rest = ll_contains(L, ks[w].name, "pf.rest");
    if (next == wide || rest != (wide && M >= 4)) {
      print_error("@%s: next-window prefetches %d, rest-of-row prefetches %d on a host %s 512-bit "
                  "vectors\n",
                  ks[w].name, next, rest, wide ? "with" : "without");
      fail();
    }
    for (int i = 0; i < M * 24; i++)
      a[i] = (float)((i * 37) % 23 - 11) * 0.0625f + 0x1p-13f * (float)(i % 3);
    for (int i = 0; i < 24 * N; i++)
      b[i] = (float)((i * 53) % 19 - 9) * 0.125f + 0x1p-14f * (float)(i % 5);
    mm_run_both(L, ks[w].name, PTO_DTYPE_F32, a, b, M, 24, N, o, o2);
    mm_check_fma_chain(ks[w].name, a, b, M, 24, N, o, o2);
  }
  lib_free(L);
}

/* A decode step's single row, [1, K] x a view of W (f32 and bf16): on 512-bit vectors each k step
 * of the wide row blocks (mm_rows_wide) prefetches the first line of its columns of W's row 16
 * ahead ("pf.ahead", mm_row_ahead), the last steps' rows lying past the tensor's end, which a
 * prefetch may touch; on Zen 4 instead every line of that piece of the row 60 ahead into L2 and
 * no line into L1; at M = 2 there is none, nor without AVX-512. Either way one fma per product
 * in k order, bit for bit the interpreter's. The kernels are k_mm_rows_fmt's. */
static void test_lower_matmul_one_row_prefetches_rows_ahead(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int m, n, bf16;
  } ks[] = {{"mma1", 1, 256, 0}, {"mma1e", 1, 80, 0}, {"mma1h", 1, 256, 1}, {"mma2", 2, 64, 0}};
  static char src[8192];
  int len = snprintf(src, sizeof src, "program mmahead\n");
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    int M = ks[i].m, N = ks[i].n;
    const char *dt = ks[i].bf16 ? "bf16" : "f32";
    len += snprintf(src + len, sizeof src - (size_t)len, k_mm_rows_fmt, ks[i].name, M, dt, N, dt, M,
                    N, M, N, M, N, M, N);
  }
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  int wide = pto__lower_host_has("+avx512f"), zen4 = pto__lower_host_has("cpu=znver4;");
  static float a[2 * 24], b[24 * 256], o[2 * 256], o2[2 * 256];
  static uint16_t ah[2 * 24], bh[24 * 256];
  for (size_t w = 0; w < sizeof ks / sizeof ks[0]; w++) {
    int M = ks[w].m, N = ks[w].n, bf = ks[w].bf16;
    int ahead = ll_contains(L, ks[w].name, "pf.ahead");
    if (ahead != (wide && M == 1 && !zen4)) {
      print_error("@%s: rows-ahead prefetch %d on %s\n", ks[w].name, ahead,
                  pto__llvm_target_identity());
      fail();
    }
    /* on Zen 4 every line of the block's piece of the row 60 ahead into L2 ("pf.rowl2", a
     * prefetch of locality 2 each), on no other host */
    int l2 = ll_count_lines(L, ks[w].name, "%pf.rowl2", "getelementptr");
    int l2call = ll_count_lines(L, ks[w].name, "%pf.rowl2", "i32 0, i32 2, i32 1)");
    if ((l2 > 0) != (wide && M == 1 && zen4) || l2call != l2) {
      print_error("@%s: %d row-piece L2 prefetches (%d of locality 2) on %s\n", ks[w].name, l2,
                  l2call, pto__llvm_target_identity());
      fail();
    }
    /* 60 rows ahead of the first block's k step (not 64: bench/RESULTS.md, round 14, "m1z4") */
    if (l2 > 0 && !ll_has(L, ks[w].name, "= add i64 %mm.k, 60\n")) fail();
    for (int i = 0; i < M * 24; i++) {
      a[i] = (float)((i * 37) % 23 - 11) * 0.0625f + 0x1p-6f * (float)(i % 3);
      ah[i] = pto_f32_to_bf16(a[i]);
      if (bf) a[i] = pto_bf16_to_f32(ah[i]);
    }
    for (int i = 0; i < 24 * N; i++) {
      b[i] = (float)((i * 53) % 19 - 9) * 0.125f + 0x1p-7f * (float)(i % 5);
      bh[i] = pto_f32_to_bf16(b[i]);
      if (bf) b[i] = pto_bf16_to_f32(bh[i]);
    }
    mm_run_both(L, ks[w].name, bf ? PTO_DTYPE_BF16 : PTO_DTYPE_F32, bf ? (void *)ah : (void *)a,
                bf ? (void *)bh : (void *)b, M, 24, N, o, o2);
    mm_check_fma_chain(ks[w].name, a, b, M, 24, N, o, o2);
  }
  lib_free(L);
}

/* A decode step's projection as examples/llm/llama_layer.ptir's @linear writes it: a tile of TM
 * (2..8) rows times a window of KW (32..96) rows of W, K walked in windows with valid=, run on
 * partial rows (R < TM), partial columns (C < the tile's), a partial last window (K not a multiple
 * of KW) and whole windows of a wider W (a view with its rows the tensor's width apart). On 512-bit
 * vectors the M = 4..8 products run their register blocks in chunks ("mm.kc", mm_blocks; M < 4
 * keeps its wide row blocks) of 32 k steps where KW is a multiple of 32 larger than 32, else of
 * 16 (KW / the chunk's steps chunks a window), each column slab of the blocks from row 0
 * prefetching its own lines of the row 16 ahead (one "pf.chunk" a 16-lane vector of the slab: 3 for
 * a 48-column slab, 2 for a 32-column one; none from the other rows' blocks, which read the same
 * lines, and no other prefetch of W's rows into L1) and the same lines of the row MM_L2_AHEAD (56)
 * ahead into L2 (as many "pf.l2", each a prefetch of locality 2), elsewhere as before; either way
 * one fma per product in k order, bit for bit the interpreter's. */
static const char *k_mm_chunk_fmt =
    "kernel @%s(%%x: tensor[R, K] f32, %%w: tensor[K, C] f32, out %%y: tensor[R, C] f32)\n"
    "    -> (tensor[R, C] f32) {\n"
    "  %%acc0 = tile.full([%d, %d], f32, -1, space=acc)\n"
    "  %%acc = for %%k in range(0, (K + %d) / %d) iter(%%ca = %%acc0) {\n"
    "    %%k0 = %%k * %d\n"
    "    %%kn = min(%d, K - %%k0)\n"
    "    %%cn = min(%d, C)\n"
    "    %%tx = tile.load(%%x, [0, %%k0], [%d, %d], space=mat, valid=[R, %%kn])\n"
    "    %%tw = tile.load(%%w, [%%k0, 0], [%d, %d], space=mat, valid=[%%kn, %%cn])\n"
    "    %%l = tile.move(%%tx, space=left)\n"
    "    %%r = tile.move(%%tw, space=right)\n"
    "    %%cn2 = tile.matmul_acc(%%ca, %%l, %%r)\n"
    "    yield %%cn2\n"
    "  }\n"
    "  tile.store(%%acc, [0, 0], %%y)\n"
    "  return %%y\n"
    "}\n";

static void test_lower_matmul_decode_rows_in_k_chunks(void **state) {
  (void)state;
  /* kernels: tile rows TM by tile columns TN, window rows KW, the prefetches of the rows ahead
   * into L1 (48-column slabs, then 32-column ones), the chunks a window */
  static const struct {
    const char *name;
    int tm, tn, kw, pf, chunks;
  } ks[] = {{"mmc8", 8, 128, 32, 3 + 2, 2},  {"mmc7", 7, 96, 32, 3, 2},
            {"mmc6", 6, 80, 32, 3 + 2, 2},   {"mmc5", 5, 128, 32, 3 + 2, 2},
            {"mmc4", 4, 48, 32, 3, 2},       {"mmc2", 2, 64, 32, 0, 0},
            {"mmc8w", 8, 128, 64, 3 + 2, 2}, {"mmc6w", 6, 80, 96, 3 + 2, 3},
            {"mmc5w", 5, 128, 48, 3 + 2, 3}};
  /* runs: kernel, R x K times K x C */
  static const struct {
    int kern, r, k, c;
  } runs[] = {{0, 8, 96, 160},  {0, 5, 80, 100}, {1, 7, 64, 96},   {1, 4, 64, 200},
              {2, 3, 72, 70},   {2, 6, 48, 80},  {3, 5, 64, 128},  {3, 2, 40, 128},
              {4, 4, 96, 64},   {5, 2, 64, 64},  {6, 8, 192, 160}, {6, 6, 150, 128},
              {7, 6, 192, 100}, {7, 4, 96, 80},  {8, 5, 144, 200}, {8, 4, 100, 128}};
  static char src[32768];
  int len = snprintf(src, sizeof src, "program mmchunk\ndynamic R, K, C\n");
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    int kw = ks[i].kw;
    len += snprintf(src + len, sizeof src - (size_t)len, k_mm_chunk_fmt, ks[i].name, ks[i].tm,
                    ks[i].tn, kw - 1, kw, kw, kw, ks[i].tn, ks[i].tm, kw, kw, ks[i].tn);
  }
  tl_lib *L = lib_build(src, 2);
  assert_non_null(L);
  int wide = pto__lower_host_has("+avx512f");
  for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
    int chunked = ll_contains(L, ks[q].name, "mm.kc");
    if (chunked != (wide && ks[q].tm >= 4)) {
      print_error("@%s: chunked k loop %d on a host %s 512-bit vectors\n", ks[q].name, chunked,
                  wide ? "with" : "without");
      fail();
    }
    int pf = ll_count_lines(L, ks[q].name, "%pf.chunk", "getelementptr");
    if (pf != (wide ? ks[q].pf : 0) || (chunked && ll_contains(L, ks[q].name, "pf.rest"))) {
      print_error("@%s: %d prefetches of the next chunk's rows, want %d (and no pf.rest)\n",
                  ks[q].name, pf, wide ? ks[q].pf : 0);
      fail();
    }
    char trip[64];
    snprintf(trip, sizeof trip, "icmp slt i64 %%mm.kc, %d\n", ks[q].chunks);
    if (chunked && !ll_contains(L, ks[q].name, trip)) {
      print_error("@%s: not %d chunks a window of %d rows\n", ks[q].name, ks[q].chunks, ks[q].kw);
      fail();
    }
    int l2 = ll_count_lines(L, ks[q].name, "%pf.l2", "getelementptr");
    int l2call = ll_count_lines(L, ks[q].name, "%pf.l2", "i32 0, i32 2, i32 1)");
    if (l2 != pf || l2call != pf) {
      print_error("@%s: %d prefetches into L2 of the rows 56 ahead (%d of locality 2), want %d\n",
                  ks[q].name, l2, l2call, pf);
      fail();
    }
  }
  static float x[8 * 192], w[192 * 200], o[8 * 200], o2[8 * 200];
  for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++) {
    const char *name = ks[runs[q].kern].name;
    int R = runs[q].r, K = runs[q].k, C = runs[q].c, TN = ks[runs[q].kern].tn;
    for (int i = 0; i < R * K; i++)
      x[i] = (float)((i * 37) % 23 - 11) * 0.0625f + 0x1p-13f * (float)(i % 3);
    for (int i = 0; i < K * C; i++)
      w[i] = (float)((i * 53) % 19 - 9) * 0.125f + 0x1p-14f * (float)(i % 5);
    for (int i = 0; i < R * C; i++)
      o[i] = o2[i] = 12345.0f; /* columns past the tile keep it */
    mm_run_both(L, name, PTO_DTYPE_F32, x, w, R, K, C, o, o2);
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++) {
        float sum = 12345.0f;
        if (j < TN) {
          sum = -1.0f;
          for (int k = 0; k < K; k++)
            sum = fmaf(x[i * K + k], w[k * C + j], sum);
        }
        if (memcmp(&sum, &o[i * C + j], 4) || memcmp(&sum, &o2[i * C + j], 4)) {
          print_error("@%s %dx%dx%d [%d,%d]: kernel %a, interpreter %a, fmaf chain %a\n", name, R,
                      K, C, i, j, (double)o[i * C + j], (double)o2[i * C + j], (double)sum);
          fail();
        }
      }
  }
  lib_free(L);
}

/* f32 exp, log and sigmoid: the compiled loops (pto/mathf.h's operations emitted as LLVM IR,
 * vectorized) give the same bits as the reference the interpreter calls (pto_expf, pto_logf in
 * base/mathf.c), over a sweep of every 251st f32 bit pattern (NaN, infinities, subnormals and
 * negatives included) and the special values. */
static const char *k_explog_src =
    "program explog\n"
    "dynamic R\n"
    "kernel @kexp(%a: tensor[R,1024] f32, out %c: tensor[R,1024] f32) -> (tensor[R,1024] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024], valid=[R, 1024])\n"
    "  %tc = tile.exp(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @klog(%a: tensor[R,1024] f32, out %c: tensor[R,1024] f32) -> (tensor[R,1024] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024], valid=[R, 1024])\n"
    "  %tc = tile.log(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "kernel @ksig(%a: tensor[R,1024] f32, out %c: tensor[R,1024] f32) -> (tensor[R,1024] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024], valid=[R, 1024])\n"
    "  %tc = tile.sigmoid(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    /* the same ops in fused runs that keep their result in a buffer (the row max reads it), not
     * streamed from tensor to tensor: a flat loop, and a row by row one (a row expansion) */
    "kernel @kexpf(%a: tensor[R,1024] f32, %z: tensor[R,1] f32, out %c: tensor[R,1024] f32,\n"
    "              out %d: tensor[R,1] f32) -> (tensor[R,1024] f32, tensor[R,1] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024], valid=[R, 1024])\n"
    "  %tc = tile.exp(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  %m = tile.row_max(%tc)\n"
    "  %d1 = tile.store(%m, [0, 0], %d)\n"
    "  return %c1, %d1\n"
    "}\n"
    "kernel @ksigrow(%a: tensor[R,1024] f32, %z: tensor[R,1] f32, out %c: tensor[R,1024] f32,\n"
    "                out %d: tensor[R,1] f32) -> (tensor[R,1024] f32, tensor[R,1] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024], valid=[R, 1024])\n"
    "  %tz = tile.load(%z, [0, 0], [64, 1], valid=[R, 1])\n"
    "  %tx = tile.row_expand_sub(%ta, %tz)\n"
    "  %tc = tile.sigmoid(%tx)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  %m = tile.row_max(%tc)\n"
    "  %d1 = tile.store(%m, [0, 0], %d)\n"
    "  return %c1, %d1\n"
    "}\n";

static float f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void test_lower_exp_log_bit_identical_to_reference(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_explog_src, 2);
  assert_non_null(L);
  enum { N = 64 * 1024 };
  float *a = malloc(N * sizeof *a), *c = malloc(N * sizeof *c);
  float z[64] = {0}, d[64];
  assert_non_null(a);
  assert_non_null(c);
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                     0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x00000001u,
                                     0x807fffffu, 0x3f800000u, 0x42b17218u, 0x42b17217u,
                                     0xc2ce8ed0u, 0xc2cff1b5u, 0x7f7fffffu, 0xbf800000u};
  const char *kname[5] = {"kexp", "klog", "ksig", "kexpf", "ksigrow"};
  uint64_t mismatches = 0, checked = 0;
  uint64_t u = 0;
  for (int chunk = 0; u <= 0xffffffffull; chunk++) {
    for (int i = 0; i < N; i++) {
      if (chunk == 0 && i < (int)(sizeof special / sizeof special[0]))
        a[i] = f32_of_bits(special[i]);
      else {
        a[i] = f32_of_bits((uint32_t)u);
        u += 251;
      }
    }
    /* (a, c) for the first three, (a, z, c, d) for the fused ones */
    pto_ir_interp_arg args[2], args4[4];
    memset(args, 0, sizeof args);
    memset(args4, 0, sizeof args4);
    int64_t shape[2] = {64, 1024}, rshape[2] = {64, 1};
    args[0].is_tensor = args[1].is_tensor = 1;
    pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&args[1].tensor, c, PTO_DTYPE_F32, 2, shape);
    for (int i = 0; i < 4; i++)
      args4[i].is_tensor = 1;
    pto_host_tensor_init(&args4[0].tensor, a, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&args4[1].tensor, z, PTO_DTYPE_F32, 2, rshape);
    pto_host_tensor_init(&args4[2].tensor, c, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&args4[3].tensor, d, PTO_DTYPE_F32, 2, rshape);
    for (int k = 0; k < 5; k++) {
      assert_int_equal(k < 3 ? run_native(L, kname[k], args, 2, 0, NULL)
                             : run_native(L, kname[k], args4, 4, 0, NULL),
                       0);
      for (int i = 0; i < N; i++) {
        float x = a[i] - z[i / 1024]; /* z is 0: x is a[i], as the kernel computes it */
        float want = k == 0 || k == 3 ? pto_expf(a[i])
                     : k == 1         ? pto_logf(a[i])
                                      : 1.0f / (1.0f + pto_expf(-x));
        checked++;
        if (memcmp(&want, &c[i], sizeof want) != 0 && mismatches++ < 10)
          print_error("%s(%a): kernel %a, reference %a\n", kname[k], (double)a[i], (double)c[i],
                      (double)want);
      }
    }
  }
  print_message("exp/log/sigmoid: %llu values, %llu mismatches\n", (unsigned long long)checked,
                (unsigned long long)mismatches);
  assert_int_equal(mismatches, 0);
  free(a);
  free(c);
  /* On AVX-512 hosts the exp of every run (streamed, fused flat, fused by rows) scales by 2^n with
   * vscalefps on 16-lane vectors, the results above being the same bits. */
  if (pto__lower_host_has("+avx512f")) {
    const char *vk[4] = {"kexp", "ksig", "kexpf", "ksigrow"};
    for (int k = 0; k < 4; k++)
      assert_true(ll_has(L, vk[k], "@llvm.x86.avx512.mask.scalef.ps.512(<16 x float>"));
  } else {
    print_message("host without AVX-512 or generic lowering: exp scales by two multiplies\n");
  }
  /* and the loops are vector code: exp's f32 fma chain and log's double one vectorize */
  char ll[1024];
  snprintf(ll, sizeof ll, "%s/kexp.ll", L->dir);
  char *text = NULL;
  assert_pto_ok(pto__optimize_ll_text(ll, 2, &text));
  assert_non_null(strstr(text, "x float> @llvm.fma.v"));
  free(text);
  snprintf(ll, sizeof ll, "%s/klog.ll", L->dir);
  assert_pto_ok(pto__optimize_ll_text(ll, 2, &text));
  assert_non_null(strstr(text, "x double> @llvm.fma.v"));
  free(text);
  lib_free(L);
}

/* tile.sin / tile.cos on f32 against pto_sinf / pto_cosf (base/mathf.c) over a sweep of every
 * 251st f32 (all of them: beyond 2^20, infinities and NaNs too), bit for bit; the loops are
 * vector code (the reduction's double fmas and the polynomials' f32 fmas vectorize). */
static const char *k_sincos_src =
    "program sc\n"
    "kernel @ksin(%a: tensor[64, 1024] f32, out %c: tensor[64, 1024] f32)"
    " -> (tensor[64, 1024] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024])\n"
    "  %tc = tile.sin(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n}\n"
    "kernel @kcos(%a: tensor[64, 1024] f32, out %c: tensor[64, 1024] f32)"
    " -> (tensor[64, 1024] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [64, 1024])\n"
    "  %tc = tile.cos(%ta)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n}\n";

static void test_lower_sin_cos_bit_identical_to_reference(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_sincos_src, 2);
  assert_non_null(L);
  enum { N = 64 * 1024 };
  float *a = malloc(N * sizeof *a), *c = malloc(N * sizeof *c);
  assert_non_null(a);
  assert_non_null(c);
  uint64_t mismatches = 0, checked = 0, u = 0;
  while (u <= 0xffffffffull) {
    for (int i = 0; i < N; i++, u += 251)
      a[i] = f32_of_bits((uint32_t)u);
    pto_ir_interp_arg args[2];
    memset(args, 0, sizeof args);
    int64_t shape[2] = {64, 1024};
    args[0].is_tensor = args[1].is_tensor = 1;
    pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&args[1].tensor, c, PTO_DTYPE_F32, 2, shape);
    for (int k = 0; k < 2; k++) {
      assert_int_equal(run_native(L, k ? "kcos" : "ksin", args, 2, 0, NULL), 0);
      for (int i = 0; i < N; i++) {
        float want = k ? pto_cosf(a[i]) : pto_sinf(a[i]);
        checked++;
        if (memcmp(&want, &c[i], sizeof want) != 0 && mismatches++ < 10)
          print_error("%s(%a): kernel %a, reference %a\n", k ? "cos" : "sin", (double)a[i],
                      (double)c[i], (double)want);
      }
    }
  }
  print_message("sin/cos: %llu values, %llu mismatches\n", (unsigned long long)checked,
                (unsigned long long)mismatches);
  assert_int_equal(mismatches, 0);
  /* sin is odd: sin(-0) = -0 (the polynomial alone gives +0), the smallest subnormals as they
   * are, as pto_sinf */
  static const float zeros[4] = {-0.0f, 0.0f, -0x1p-149f, 0x1p-149f};
  for (int i = 0; i < N; i++)
    a[i] = zeros[i % 4];
  {
    pto_ir_interp_arg args[2];
    memset(args, 0, sizeof args);
    int64_t shape[2] = {64, 1024};
    args[0].is_tensor = args[1].is_tensor = 1;
    pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&args[1].tensor, c, PTO_DTYPE_F32, 2, shape);
    assert_int_equal(run_native(L, "ksin", args, 2, 0, NULL), 0);
    for (int i = 0; i < N; i++) {
      float want = pto_sinf(a[i]);
      if (memcmp(&a[i], &c[i], sizeof want) != 0 || memcmp(&want, &c[i], sizeof want) != 0) {
        print_error("sin(%a): kernel %a, reference %a\n", (double)a[i], (double)c[i], (double)want);
        fail();
      }
    }
  }
  free(a);
  free(c);
  char ll[1024];
  /* on every host, PTO_GENERIC_LOWERING=1 included: 16-lane vectors, the branch to the exact
   * reduction on all 16 lanes at once (scalar code with the branch per element stays scalar) */
  for (int k = 0; k < 2; k++)
    assert_true(ll_has(L, k ? "kcos" : "ksin", "%sc.any = icmp ne i16"));
  snprintf(ll, sizeof ll, "%s/ksin.ll", L->dir);
  char *text = NULL;
  assert_pto_ok(pto__optimize_ll_text(ll, 2, &text));
  assert_non_null(strstr(text, "x double> @llvm.fma.v"));
  assert_non_null(strstr(text, "x float> @llvm.fma.v"));
  free(text);
  lib_free(L);
}

/* The optimized IR of elementwise, matmul and cast kernels holds vector instructions; -O0 none. */
static void test_lower_loops_vectorize(void **state) {
  (void)state;
  tl_lib *L = lib_build(k_plan_src, 2);
  assert_non_null(L);
  static const struct {
    const char *k, *needle;
  } want[] = {{"chain", "@llvm.sqrt.v"},
              {"chain", " x half>"},
              {"loop_acc", "fadd <"},
              {"mm", "@llvm.fma.v"}}; /* 16 lanes where the host has 512-bit vectors, else 8 */
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    char ll[1024];
    snprintf(ll, sizeof ll, "%s/%s.ll", L->dir, want[i].k);
    char *text = NULL;
    assert_pto_ok(pto__optimize_ll_text(ll, 2, &text));
    if (!strstr(text, want[i].needle)) {
      print_error("@%s: optimized IR has no '%s'\n", want[i].k, want[i].needle);
      free(text);
      fail();
    }
    free(text);
    if (i == 2) {
      assert_pto_ok(pto__optimize_ll_text(ll, 0, &text));
      assert_null(strstr(text, "fadd <"));
      free(text);
    }
  }
  char ll[1024];
  lib_free(L);
  /* add_block streams (one loop from the two tensors to the target, no tile buffers): it
   * vectorizes behind LLVM's own overlap check of the three tensors */
  L = lib_build(k_add_src, 3);
  assert_non_null(L);
  snprintf(ll, sizeof ll, "%s/add_block.ll", L->dir);
  char *text = tu_read_file(ll, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "\nstream:"));
  /* 512-bit loops on every AVX-512 host: LLVM's tuning for Intel's prefers 256 */
  if (pto__lower_host_has("+avx512f"))
    assert_non_null(strstr(text, "\"prefer-vector-width\"=\"512\""));
  else
    assert_null(strstr(text, "prefer-vector-width"));
  free(text);
  assert_pto_ok(pto__optimize_ll_text(ll, 3, &text));
  assert_non_null(strstr(text, "fadd <"));
  /* the streamed loop's lanes: 16 f32 on AVX-512, 8 on AVX2 */
  const char *lanes = pto__lower_host_has("+avx512f") ? "fadd <16 x float>"
                      : pto__lower_host_has("+avx2")  ? "fadd <8 x float>"
                                                      : NULL;
  if (lanes && !strstr(text, lanes)) {
    print_error("@add_block: optimized IR has no '%s'\n", lanes);
    free(text);
    fail();
  }
  free(text);
  lib_free(L);
  /* buffered loops between tensors and tiles: alias scopes, no runtime overlap checks (the
   * second add streams from tiles into %d, one tensor only) */
  static const char *twice =
      "program twice\n"
      "dynamic R\n"
      "kernel @add_twice(%a: tensor[R,128] f32, %b: tensor[R,128] f32,\n"
      "                  out %c: tensor[R,128] f32, out %d: tensor[R,128] f32)\n"
      "    -> (tensor[R,128] f32, tensor[R,128] f32) {\n"
      "  %ta = tile.load(%a, [0, 0], [32, 128], valid=[R, 128])\n"
      "  %tb = tile.load(%b, [0, 0], [32, 128], valid=[R, 128])\n"
      "  %tc = tile.add(%ta, %tb)\n"
      "  %c1 = tile.store(%tc, [0, 0], %c)\n"
      "  %td = tile.add(%tc, %tb)\n"
      "  %d1 = tile.store(%td, [0, 0], %d)\n"
      "  return %c1, %d1\n"
      "}\n";
  L = lib_build(twice, 3);
  assert_non_null(L);
  snprintf(ll, sizeof ll, "%s/add_twice.ll", L->dir);
  assert_pto_ok(pto__optimize_ll_text(ll, 3, &text));
  assert_non_null(strstr(text, "fadd <"));
  assert_null(strstr(text, "vector.memcheck"));
  free(text);
  lib_free(L);
}

static void test_lower_dist_kernel_lowers(void **state) {
  (void)state;
  static const char *src =
      "program d\n"
      "kernel @k(%w: dtensor[4,4] f32, out %o: tensor[4,4] f32) -> (tensor[4,4] f32) {\n"
      "  %c = dist.comm_ctx(%w)\n"
      "  %r = dist.rank(%c)\n"
      "  %t = tile.full([4, 4], f32, 1.0)\n"
      "  %o1 = tile.store(%t, [0, 0], %o)\n"
      "  return %o1\n"
      "}\n";
  pto_ir_program *p = parse_text(src);
  assert_non_null(p);
  char *dir = tu_mkdtemp("lower-dist");
  char obj[1024];
  snprintf(obj, sizeof obj, "%s/k.o", dir);
  /* Lowered onto pto_core_ctx.dist: test_lower_dist calls such kernels with a fake table. */
  assert_pto_ok(pto__lower_kernel(p, pto_ir_program_find_func(p, "k"), 2, NULL, obj, NULL));
  tu_rmtree(dir);
  free(dir);
  pto_ir_program_destroy(p);
}

static void test_lower_rejects_non_kernel(void **state) {
  (void)state;
  static const char *src = "program o\n"
                           "orch @main(%a: tensor[4] f32) {\n"
                           "  return\n"
                           "}\n";
  pto_ir_program *p = parse_text(src);
  assert_non_null(p);
  pto_status s =
      pto__lower_kernel(p, pto_ir_program_find_func(p, "main"), 2, NULL, "/nonexistent/x.o", NULL);
  assert_status_contains(s, "not a kernel");
  pto_ir_program_destroy(p);
}

typedef struct lower_job {
  const pto_ir_program *p;
  const pto_ir_func *f;
  char obj[1024], ll[1024];
  pto_status st;
} lower_job;

static void *lower_job_run(void *arg) {
  lower_job *j = arg;
  j->st = pto__lower_kernel(j->p, j->f, 2, j->ll, j->obj, NULL);
  return NULL;
}

/* Kernels lower from several threads at once (one LLVM context each) to identical objects. */
static void test_lower_concurrent_lowering_is_deterministic(void **state) {
  (void)state;
  pto_ir_program *p = parse_text(k_plan_src);
  assert_non_null(p);
  char *dir = tu_mkdtemp("lower-mt");
  enum { NJ = 8 };
  lower_job jobs[NJ];
  pthread_t th[NJ];
  for (int i = 0; i < NJ; i++) {
    jobs[i].p = p;
    jobs[i].f = pto_ir_program_find_func(p, i % 2 ? "chain" : "mm");
    snprintf(jobs[i].obj, sizeof jobs[i].obj, "%s/k%d.o", dir, i);
    snprintf(jobs[i].ll, sizeof jobs[i].ll, "%s/k%d.ll", dir, i);
    assert_int_equal(pthread_create(&th[i], NULL, lower_job_run, &jobs[i]), 0);
  }
  for (int i = 0; i < NJ; i++) {
    pthread_join(th[i], NULL);
    assert_pto_ok(jobs[i].st);
  }
  for (int i = 2; i < NJ; i++) {
    char *out = NULL;
    int rc = tu_run(&out, "cmp '%s' '%s' && cmp '%s' '%s'", jobs[i].obj, jobs[i % 2].obj,
                    jobs[i].ll, jobs[i % 2].ll);
    if (rc != 0) print_error("%s\n", out ? out : "");
    free(out);
    assert_int_equal(rc, 0);
  }
  tu_rmtree(dir);
  free(dir);
  pto_ir_program_destroy(p);
}

static void test_lower_target_identity(void **state) {
  (void)state;
  const char *id = pto__llvm_target_identity();
  assert_non_null(strstr(id, "triple="));
  assert_non_null(strstr(id, ";cpu="));
  assert_non_null(strstr(id, ";features="));
  assert_ptr_equal(id, pto__llvm_target_identity());
  /* PTO_GENERIC_LOWERING=1 (.ci/run runs this test both ways): the identity says so, and the
   * lowering takes none of the host's fast paths */
  const char *g = getenv("PTO_GENERIC_LOWERING");
  int generic = g && !strcmp(g, "1");
  assert_int_equal(strstr(id, ";lowering=generic") != NULL, generic);
  assert_int_equal(pto__lower_host_has("triple="), !generic);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lower_target_identity),
      cmocka_unit_test(test_lower_add_block_matches_hand_computed),
      cmocka_unit_test(test_lower_dim_mismatch_returns_code),
      cmocka_unit_test(test_lower_small_scratch_returns_code),
      cmocka_unit_test(test_lower_ll_compiles_back),
      cmocka_unit_test(test_lower_scratch_plan_reuses_buffers),
      cmocka_unit_test(test_lower_loops_vectorize),
      cmocka_unit_test(test_lower_exp_log_bit_identical_to_reference),
      cmocka_unit_test(test_lower_sin_cos_bit_identical_to_reference),
      cmocka_unit_test(test_lower_streamed_stores_past_the_cache),
      cmocka_unit_test(test_lower_deferred_store_matches_interpreter),
      cmocka_unit_test(test_lower_matmul_is_fused_multiply_add),
      cmocka_unit_test(test_lower_bf16_matmul_dot_products),
      cmocka_unit_test(test_lower_matmul_prefetches_next_loads),
      cmocka_unit_test(test_lower_matmul_decode_rows_prefetch_rest),
      cmocka_unit_test(test_lower_matmul_decode_rows_in_k_chunks),
      cmocka_unit_test(test_lower_matmul_right_operand_is_a_strided_view),
      cmocka_unit_test(test_lower_matmul_one_row_prefetches_rows_ahead),
      cmocka_unit_test(test_lower_matmul_right_operand_read_through_gather_indices),
      cmocka_unit_test(test_lower_fused_run_prefetches_store_and_next_load),
      cmocka_unit_test(test_lower_row_run_prefetches_gather_ahead),
      cmocka_unit_test(test_lower_col_expand_fuses_and_reads_views),
      cmocka_unit_test(test_lower_row_reductions_special_values),
      cmocka_unit_test(test_lower_dist_kernel_lowers),
      cmocka_unit_test(test_lower_rejects_non_kernel),
      cmocka_unit_test(test_lower_concurrent_lowering_is_deterministic),
  };
  int fails = cmocka_run_group_tests(tests, NULL, NULL);
  gen_binary();
  gen_scalar_ops();
  gen_unary();
  gen_cast();
  gen_loadstore();
  gen_reduce();
  gen_expand();
  gen_matmul();
  gen_matmul_rview();
  gen_matmul_gview();
  gen_matmul_gather_ahead();
  gen_matmul_kloop();
  gen_matmul_kloop_valid();
  gen_misc();
  gen_random();
  gen_struct_reduce();
  gen_struct_moves();
  gen_struct_gather();
  gen_struct_gather_elementwise();
  gen_struct_matmul_bias();
  gen_elem();
  /* The same kernels unoptimized and at -O3 (objects rebuilt from their .ll): results equal the
   * interpreter's, so each other's. */
  copy_group("misc", "misc_O0");
  copy_group("misc", "misc_O3");
  copy_group("loadstore", "loadstore_O0");
  copy_group("matmul", "matmul_O0");
  copy_group("struct", "struct_O0");
  fails += run_group("misc", 2);
  fails += run_group("random", 2);
  fails += run_group("misc_O0", 0);
  fails += run_group_ex("misc_O3", 3, 1); /* objects rebuilt from the .ll files */
  fails += run_group("loadstore_O0", 0);
  fails += run_group("matmul_O0", 0);
  fails += run_group("binary", 2);
  fails += run_group("scalar", 2);
  fails += run_group("unary", 2);
  fails += run_group("cast", 2);
  fails += run_group("loadstore", 2);
  fails += run_group("reduce", 2);
  fails += run_group("expand", 2);
  fails += run_group("matmul", 3);
  fails += run_group("struct", 2);
  fails += run_group("struct_O0", 0);
  fails += run_group("elem", 2);
  /* Again with the runtime's word that the outputs are too large for the cache: streamed runs
   * take their non-temporal path (rows peeled to 64-byte boundaries), with the same results. */
  g_run_flags = PTO_CORE_STREAM_STORES;
  fails += run_group("loadstore", 2);
  fails += run_group("binary", 2);
  fails += run_group("unary", 2);
  fails += run_group("random", 2);
  g_run_flags = 0;
  for (int i = 0; i < g_nlibs; i++)
    lib_free(g_libs[i]);
  for (int i = 0; i < g_ncases; i++)
    free(g_cases[i].text);
  free(g_cases);
  return fails ? 1 : 0;
}
