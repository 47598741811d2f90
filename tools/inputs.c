/* Program inputs shared by pto run and pto bench (inputs.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "npy.h"
#include "pto/base.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_FILL_F32_AVX512 1
#endif

static int split_named(const char *cmd, const char *flag, char *text, cli_named *out) {
  return cli_split_name_value(cmd, flag, text, &out->name, &out->value);
}

static const cli_named *find_named(const cli_named *list, int n, const char *name) {
  const cli_named *hit = NULL;
  for (int i = 0; i < n; i++)
    if (!strcmp(list[i].name, name)) hit = &list[i];
  return hit;
}

/* ---- the command line ----------------------------------------------------------------- */

int cli_parse_inputs(const char *cmd, cli_inputs *a, int argc, char **argv, int allow_out,
                     cli_option_fn extra, void *ctx) {
  memset(a, 0, sizeof *a);
  cli_compile_args_init(&a->c);
  char first_compile_opt[32] = ""; /* the first compile option given, for the message below */
  int operands = 0;                /* after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    if (operands) {
      if (a->prog)
        return cli_usage_error(cmd, "one program at a time: '%s' and '%s'", a->prog, argv[i]), -1;
      a->prog = argv[i];
      continue;
    }
    char opt[32];
    snprintf(opt, sizeof opt, "%s", argv[i]);
    int r = cli_parse_compile_option(cmd, &a->c, argc, argv, &i);
    if (r < 0) return -1;
    if (r) {
      /* --devices may name a work dir's own device set (cli_load_program checks it). */
      if (!first_compile_opt[0] && strncmp(opt, "--devices", 9) != 0) {
        opt[strcspn(opt, "=")] = 0;
        if (!strncmp(opt, "-D", 2)) opt[2] = 0;
        snprintf(first_compile_opt, sizeof first_compile_opt, "%s", opt);
      }
      continue;
    }
    char *arg = argv[i];
    cli_named *list = NULL;
    int *count = NULL;
    const char *flag = NULL;
    /* --dim SYM=VALUE or --dim=SYM=VALUE, likewise --in and --out. */
    size_t flen = strcspn(arg, "=");
    if (flen == 5 && !strncmp(arg, "--dim", 5))
      list = a->dims, count = &a->ndims, flag = "--dim";
    else if (flen == 4 && !strncmp(arg, "--in", 4))
      list = a->ins, count = &a->nins, flag = "--in";
    else if (flen == 5 && !strncmp(arg, "--out", 5) && allow_out)
      list = a->outs, count = &a->nouts, flag = "--out";
    if (list) {
      char *text = arg[flen] == '=' ? arg + flen + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (!text) return cli_usage_error(cmd, "%s needs NAME=VALUE", flag), -1;
      if (*count == CLI_MAX_OPTS) return cli_usage_error(cmd, "too many %s options", flag), -1;
      cli_named *n = &list[*count];
      if (split_named(cmd, flag, text, n)) return -1;
      /* One value per name: a second, different one would leave the command line unsaid about
       * which applies; two --out of one FILE would write it twice, the first lost. */
      int dup = 0;
      for (int k = 0; k < *count; k++) {
        /* --dim M=04 and --dim M=4, --in a=1 and --in a=1.0 are one value; --out's are files
         * (x.npy and ./x.npy one) */
        int same_name = !strcmp(list[k].name, n->name),
            same_value = list == a->outs ? cli_same_path(list[k].value, n->value)
                                         : cli_same_value(list[k].value, n->value);
        if (same_name && same_value)
          dup = 1;
        else if (same_name)
          return cli_usage_error(cmd, "%s %s: given twice, as %s=%s and %s=%s", flag, n->name,
                                 n->name, list[k].value, n->name, n->value),
                 -1;
        else if (list == a->outs && same_value)
          return cli_usage_error(cmd, "--out %s: both %s and %s would be written there", n->value,
                                 list[k].name, n->name),
                 -1;
      }
      if (!dup) ++*count;
      continue;
    }
    r = extra ? extra(ctx, cmd, argc, argv, &i) : 0;
    if (r < 0) return -1;
    if (r) continue;
    if (arg[0] == '-' && arg[1]) {
      return cli_usage_error(cmd, "unknown option '%s'", arg), -1;
    } else if (!a->prog) {
      a->prog = arg;
    } else {
      return cli_usage_error(cmd, "one program at a time: '%s' and '%s'", a->prog, arg), -1;
    }
  }
  if (!a->prog) return cli_usage_error(cmd, "no program given"), -1;
  /* No output may land on the program itself (--timeline-svg was claimed as it was parsed). */
  if (cli_claim_program(cmd, a->prog)) return -1;
  if (cli_check_compile_args(cmd, &a->c)) return -1;
  if (a->c.depfile)
    return cli_usage_error(cmd,
                           "--depfile: a depfile describes a work dir: pass it to pto compile"),
           -1;
  /* A work dir was compiled already: an option that would change the compile cannot apply, and
   * ignoring it would run something else than the command line says. */
  if (first_compile_opt[0] && cli_is_dir(a->prog))
    return cli_usage_error(cmd,
                           "%s: compile options apply to a .ptir program; %s is a work dir, "
                           "compiled already (pto compile it again to change them)",
                           first_compile_opt, a->prog),
           -1;
  return 0;
}

/* ---- element access ------------------------------------------------------------------- */

/* An element as a double, for --check's comparison (pto_elem_load reads it). */
double cli_elem_get(pto_dtype dt, const void *p, int64_t i) {
  pto_scalar s = pto_elem_load(dt, p, i);
  if (pto_dtype_is_float(dt)) return s.f;
  return pto_dtype_is_signed(dt) ? (double)s.i : (double)s.u;
}

/* Whether text reads whole as a number (strtod: 1.5, -2, 0x10, inf). */
static int is_number(const char *text) {
  char *end;
  if (!*text || (unsigned char)*text <= ' ') return 0;
  (void)strtod(text, &end);
  return end != text && !*end;
}

/* splitmix64: a tiny, well-mixed generator, so 'random:SEED' is reproducible everywhere. Its
 * state only ever grows by the constant below, so element i of a sequence is the mix of
 * state0 + (i + 1) * SPLITMIX_GAMMA: lanes computed side by side give the same values. */
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull
#define SPLITMIX_M1 0xbf58476d1ce4e5b9ull
#define SPLITMIX_M2 0x94d049bb133111ebull

static uint64_t splitmix_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * SPLITMIX_M1;
  z = (z ^ (z >> 27)) * SPLITMIX_M2;
  return z ^ (z >> 31);
}

static uint64_t next_random(uint64_t *state) { return splitmix_mix(*state += SPLITMIX_GAMMA); }

/* A random word as a number in [-1, 1): the top 53 bits scaled by 2^-52, less one (all exact
 * in double); an f32 input rounds it once. */
static double random_unit(uint64_t r) { return (double)(r >> 11) * 0x1.0p-52 - 1.0; }

#ifdef HAVE_FILL_F32_AVX512
/* The f32 fill 8 elements at a time (64-bit multiplies and conversions need AVX-512 DQ): the
 * same values as random_unit of next_random, rounded (pto run of a softmax over 16384x200 generated
 * inputs: 11.4 -> 9.6 ms). Returns how many elements it wrote (a multiple of 8). */
__attribute__((target("avx512f,avx512dq"))) static int64_t fill_f32_avx512(float *f, int64_t n,
                                                                           uint64_t st) {
  __m512i z =
      _mm512_set_epi64((long long)(st + 8 * SPLITMIX_GAMMA), (long long)(st + 7 * SPLITMIX_GAMMA),
                       (long long)(st + 6 * SPLITMIX_GAMMA), (long long)(st + 5 * SPLITMIX_GAMMA),
                       (long long)(st + 4 * SPLITMIX_GAMMA), (long long)(st + 3 * SPLITMIX_GAMMA),
                       (long long)(st + 2 * SPLITMIX_GAMMA), (long long)(st + SPLITMIX_GAMMA));
  const __m512i step = _mm512_set1_epi64((long long)(8 * SPLITMIX_GAMMA));
  const __m512i m1 = _mm512_set1_epi64((long long)SPLITMIX_M1);
  const __m512i m2 = _mm512_set1_epi64((long long)SPLITMIX_M2);
  const __m512d scale = _mm512_set1_pd(0x1.0p-52), one = _mm512_set1_pd(1.0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512i r = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), m1);
    r = _mm512_mullo_epi64(_mm512_xor_si512(r, _mm512_srli_epi64(r, 27)), m2);
    r = _mm512_xor_si512(r, _mm512_srli_epi64(r, 31));
    /* r >> 11 < 2^53: the signed conversion is exact. */
    __m512d d =
        _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_srli_epi64(r, 11)), scale), one);
    _mm256_storeu_ps(f + i, _mm512_cvtpd_ps(d));
    z = _mm512_add_epi64(z, step);
  }
  return i;
}
#endif

static void fill_random(pto_dtype dt, void *p, int64_t n, uint64_t seed) {
  uint64_t st = seed * 0x2545f4914f6cdd1dull + 1;
  if (dt == PTO_DTYPE_F32) {
    /* The common case without the per-element dtype dispatch: the same values. */
    float *f = p;
    int64_t i = 0;
#ifdef HAVE_FILL_F32_AVX512
    if (__builtin_cpu_supports("avx512dq")) {
      i = fill_f32_avx512(f, n, st);
      st += (uint64_t)i * SPLITMIX_GAMMA;
    }
#endif
    for (; i < n; i++)
      f[i] = (float)random_unit(next_random(&st));
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(&st);
    pto_scalar v = {.dtype = dt};
    if (pto_dtype_is_float(dt))
      v.f = random_unit(r);
    else if (dt == PTO_DTYPE_BOOL)
      v.i = (int64_t)(r & 1);
    else if (pto_dtype_is_signed(dt))
      v.i = (int64_t)(r % 17) - 8; /* [-8, 8] */
    else
      v.u = r % 17; /* [0, 16] */
    pto_elem_store(dt, p, i, v);
  }
}

void cli_format_shape(char *buf, size_t n, int rank, const int64_t *shape) {
  size_t off = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < rank && off < n; d++)
    off += (size_t)snprintf(buf + off, n - off, "%s%" PRId64, d ? "," : "", shape[d]);
  if (off < n) snprintf(buf + off, n - off, "]");
}

/* ---- binding the inputs --------------------------------------------------------------- */

typedef struct sym_values {
  int64_t v[64];
  int known[64];
} sym_values;

static pto_status bind_dims(const pto_signature *sig, const cli_inputs *a, sym_values *syms) {
  memset(syms, 0, sizeof *syms);
  for (int i = 0; i < a->ndims; i++) {
    int si = -1;
    for (int s = 0; s < sig->nsyms && s < 64; s++)
      if (!strcmp(sig->syms[s], a->dims[i].name)) si = s;
    if (si < 0) {
      char list[512] = "";
      for (int s = 0; s < sig->nsyms; s++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", s ? ", " : "",
                 sig->syms[s]);
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--dim %s: the entry's parameters have no dynamic dim '%s'%s%s",
                             a->dims[i].name, a->dims[i].name, sig->nsyms ? " (they have: " : "",
                             sig->nsyms ? strcat(list, ")") : "");
    }
    char *end;
    errno = 0;
    long long v = strtoll(a->dims[i].value, &end, 10);
    /* Digits only: strtoll would also take " 5", "+5" and "-0". */
    if (*end || end == a->dims[i].value || v < 0 || a->dims[i].value[0] < '0' ||
        a->dims[i].value[0] > '9')
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--dim %s=%s: expected a non-negative integer", a->dims[i].name,
                             a->dims[i].value);
    if (errno == ERANGE)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--dim %s=%s: out of range (at most %lld)", a->dims[i].name,
                             a->dims[i].value, (long long)INT64_MAX);
    syms->v[si] = v;
    syms->known[si] = 1;
  }
  return PTO_OK;
}

/* "4x128": a shape for messages. */
static void shape_text(char *buf, size_t cap, int rank, const int64_t *shape) {
  buf[0] = '\0';
  for (int k = 0; k < rank; k++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%lld", k ? "x" : "", (long long)shape[k]);
}

pto_status cli_bind_inputs(const pto_signature *sig, const cli_inputs *a, cli_param *pd) {
  sym_values syms;
  PTO_RETURN_IF_ERROR(bind_dims(sig, a, &syms));
  for (int i = 0; i < a->nins; i++)
    if (pto_signature_find(sig, a->ins[i].name) < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--in %s: @%s has no parameter named '%s'", a->ins[i].name,
                             pto_signature_entry_name(sig), a->ins[i].name);
  for (int i = 0; i < a->nouts; i++) {
    int j = pto_signature_find(sig, a->outs[i].name);
    if (j < 0 || !sig->params[j].is_tensor || sig->params[j].dir == PTO_DIR_IN)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--out %s: @%s has no out or inout tensor parameter named '%s'",
                             a->outs[i].name, pto_signature_entry_name(sig), a->outs[i].name);
  }
  /* First pass: .npy inputs bind dynamic dims by their shapes. */
  pto_npy_array *arrays = calloc((size_t)sig->nparams + 1, sizeof *arrays);
  if (!arrays) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_status s = PTO_OK;
  for (int j = 0; j < sig->nparams && !s; j++) {
    const pto_sig_param *sp = &sig->params[j];
    const cli_named *in = find_named(a->ins, a->nins, sp->name);
    if (!sp->is_tensor || !in) continue;
    const char *v = in->value;
    if (!strcmp(v, "zeros") || !strcmp(v, "ones") || !strncmp(v, "random", 6)) continue;
    int64_t expect[PTO_MAX_RANK];
    for (int d = 0; d < sp->rank; d++)
      expect[d] = sp->dims[d].sym >= 0
                      ? (syms.known[sp->dims[d].sym] ? syms.v[sp->dims[d].sym] : -1)
                      : sp->dims[d].value;
    s = pto_npy_read_expect(v, sp->dtype, sp->rank, expect, &arrays[j]);
    if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND && is_number(v)) {
      /* "--in a=1.5" of a tensor: a number feeds a runtime scalar, not a missing file "1.5". */
      pto_status_free(s);
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "--in %s=%s: '%s' is a tensor (%s), and a number feeds a runtime "
                          "scalar: a tensor takes FILE.npy, random[:SEED], zeros or ones",
                          sp->name, v, sp->name, pto_dtype_name(sp->dtype));
      break;
    }
    if (s) {
      s = pto_status_annotate(s, "--in %s", sp->name);
      break;
    }
    for (int d = 0; d < sp->rank; d++) {
      int si = sp->dims[d].sym;
      if (si < 0) continue;
      if (!syms.known[si]) syms.v[si] = arrays[j].shape[d], syms.known[si] = 1;
    }
  }
  uint64_t total = 0; /* bytes of the tensors so far */
  for (int j = 0; j < sig->nparams && !s; j++) {
    const pto_sig_param *sp = &sig->params[j];
    const cli_named *in = find_named(a->ins, a->nins, sp->name);
    cli_param *d = &pd[j];
    if (!sp->is_tensor) {
      if (in) {
        s = pto_scalar_parse(in->value, sp->dtype, &d->scalar);
        if (s) s = pto_status_annotate(s, "--in %s=%s", sp->name, in->value);
      } else if (sp->bind == PTO_BIND_LITERAL) {
        d->scalar = sp->value;
      } else {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                            "runtime scalar parameter '%s' (%s) has no value: pass --in %s=VALUE",
                            sp->name, pto_dtype_name(sp->dtype), sp->name);
      }
      d->fed = in != NULL;
      continue;
    }
    int64_t shape[PTO_MAX_RANK];
    for (int k = 0; k < sp->rank; k++) {
      int si = sp->dims[k].sym;
      if (si < 0) {
        shape[k] = sp->dims[k].value;
      } else if (syms.known[si]) {
        shape[k] = syms.v[si];
      } else {
        /* A program compiled for every M still runs without --dim: it gets a stated default,
         * the same every time, and the note says how to choose. */
        syms.v[si] = CLI_DEFAULT_DIM;
        syms.known[si] = 1;
        shape[k] = CLI_DEFAULT_DIM;
        fprintf(stderr,
                "pto: note: dynamic dim %s has no value; using %s=%d (pass --dim %s=VALUE, or feed "
                "'%s' from a .npy file)\n",
                sig->syms[si], sig->syms[si], CLI_DEFAULT_DIM, sig->syms[si], sp->name);
      }
    }
    if (s) break;
    pto_host_tensor_init(&d->t, NULL, sp->dtype, sp->rank, shape);
    int64_t n, nbytes;
    if (pto_shape_size(sp->rank, shape, sp->dtype, &n, &nbytes) || (uint64_t)nbytes > SIZE_MAX) {
      char dims[PTO_MAX_RANK * 24];
      shape_text(dims, sizeof dims, sp->rank, shape);
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "parameter '%s': shape [%s] %s is too large: its size in bytes "
                          "overflows 64 bits (check --dim and --arg values)",
                          sp->name, dims, pto_dtype_name(sp->dtype));
      break;
    }
    total += (uint64_t)nbytes;
    if ((uint64_t)nbytes > CLI_DEVICE_MEMORY_BYTES || total > CLI_DEVICE_MEMORY_BYTES) {
      /* The tensors could never be placed together: refused before this one's host copy is
       * allocated and filled (an add of --dim M=10000000 filled 15 GB of host memory for 51 s,
       * then the launch failed "out of device memory"; a little more and the system kills the
       * process). */
      char dims[PTO_MAX_RANK * 24];
      shape_text(dims, sizeof dims, sp->rank, shape);
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "parameter '%s': shape [%s] %s (%lld bytes) brings the run's tensors "
                          "to more than the %llu bytes of device memory that hold them: they "
                          "can never be placed (check --dim and --arg values, or the .npy files)",
                          sp->name, dims, pto_dtype_name(sp->dtype), (long long)nbytes,
                          CLI_DEVICE_MEMORY_BYTES);
      break;
    }
    d->nbytes = (size_t)nbytes;
    d->data = cli_tensor_data_alloc(d->nbytes);
    if (!d->data) {
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory for parameter '%s' (%zu bytes)",
                          sp->name, d->nbytes);
      break;
    }
    d->t.data = d->data;
    d->fed = in != NULL;
    const char *src = in ? in->value : (sp->dir != PTO_DIR_IN ? "zeros" : NULL);
    if (!src) {
      fill_random(sp->dtype, d->data, n, (uint64_t)j); /* unfed `in` tensors: reproducible random */
    } else if (!strcmp(src, "zeros")) {
    } else if (!strcmp(src, "ones")) {
      pto_scalar one = {.dtype = sp->dtype};
      if (pto_dtype_is_float(sp->dtype))
        one.f = 1.0;
      else
        one.i = 1;
      for (int64_t e = 0; e < n; e++)
        pto_elem_store(sp->dtype, d->data, e, one);
    } else if (!strncmp(src, "random", 6)) {
      uint64_t seed = (uint64_t)j;
      if (src[6] == ':') {
        char *end;
        errno = 0;
        seed = strtoull(src + 7, &end, 10);
        /* Digits only: strtoull would take "-1" as 2^64-1 and wrap a seed past 2^64-1. */
        if (*end || end == src + 7 || src[7] < '0' || src[7] > '9' || errno == ERANGE) {
          s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                              "--in %s=%s: expected random or random:SEED (SEED 0 to 2^64-1)",
                              sp->name, src);
          break;
        }
      } else if (src[6]) {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                            "--in %s=%s: expected random or random:SEED (SEED 0 to 2^64-1)",
                            sp->name, src);
        break;
      }
      fill_random(sp->dtype, d->data, n, seed);
    } else {
      char have[96], want[96];
      cli_format_shape(have, sizeof have, arrays[j].rank, arrays[j].shape);
      cli_format_shape(want, sizeof want, sp->rank, shape);
      if ((size_t)arrays[j].nbytes != d->nbytes) {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "--in %s=%s: shape %s, expected %s",
                            sp->name, src, have, want);
        break;
      }
      memcpy(d->data, arrays[j].data, d->nbytes);
    }
    if (sp->dir == PTO_DIR_OUT && in && strcmp(src, "zeros")) {
      /* The runtime never copies an out tensor in (it starts as zeros on the device); the
       * reference of --check starts from the same zeros, else the parts a program leaves
       * unwritten would differ. A .npy still binds the dims. */
      memset(d->data, 0, d->nbytes);
      fprintf(stderr,
              "pto: note: '%s' is an out parameter: it starts as zeros, not as --in %s=%s "
              "(declare it inout to give it starting values)\n",
              sp->name, sp->name, src);
    }
  }
  for (int j = 0; j < sig->nparams; j++)
    pto_npy_array_free(&arrays[j]);
  free(arrays);
  return s;
}

pto_status cli_prepare_params(const pto_signature *sig, const cli_inputs *a, cli_param **out_pd,
                              pto_arg **out_args) {
  *out_pd = calloc((size_t)sig->nparams + 1, sizeof **out_pd);
  *out_args = calloc((size_t)sig->nparams + 1, sizeof **out_args);
  if (!*out_pd || !*out_args) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  PTO_RETURN_IF_ERROR(cli_bind_inputs(sig, a, *out_pd));
  for (int j = 0; j < sig->nparams; j++)
    (*out_args)[j] = sig->params[j].is_tensor ? pto_arg_host(&(*out_pd)[j].t)
                                              : pto_arg_scalar((*out_pd)[j].scalar);
  return PTO_OK;
}

void cli_params_free(cli_param *pd, pto_arg *args, int nparams) {
  for (int j = 0; pd && j < nparams; j++) {
    cli_tensor_data_free(pd[j].data);
    cli_tensor_data_free(pd[j].ref);
  }
  free(pd);
  free(args);
}

int cli_parse_devices(const char *text, int32_t out[PTO_MAX_DEVICES], char *err, size_t errlen) {
  const char *p = text;
  if (!*p) {
    snprintf(err, errlen, "--devices: expected N or ID,ID,...");
    return -1;
  }
  int64_t v[PTO_MAX_DEVICES + 1];
  int n = 0, list = strchr(text, ',') != NULL;
  while (*p) {
    if (*p < '0' || *p > '9') {
      snprintf(err, errlen, "--devices %s: expected N or ID,ID,... (non-negative integers)", text);
      return -1;
    }
    int64_t x = 0;
    while (*p >= '0' && *p <= '9') {
      x = x * 10 + (*p++ - '0');
      if (x > INT32_MAX) {
        snprintf(err, errlen, "--devices %s: number out of range", text);
        return -1;
      }
    }
    if (n == PTO_MAX_DEVICES) {
      snprintf(err, errlen, "--devices %s: at most %d devices", text, PTO_MAX_DEVICES);
      return -1;
    }
    v[n++] = x;
    if (*p == ',') {
      p++;
      if (!*p) {
        snprintf(err, errlen, "--devices %s: a trailing ','", text);
        return -1;
      }
    } else if (*p) {
      snprintf(err, errlen, "--devices %s: expected N or ID,ID,... (non-negative integers)", text);
      return -1;
    }
  }
  if (!list) {
    if (v[0] < 1 || v[0] > PTO_MAX_DEVICES) {
      snprintf(err, errlen, "--devices %s: the device count must be 1 to %d", text,
               PTO_MAX_DEVICES);
      return -1;
    }
    for (int i = 0; i < (int)v[0]; i++)
      out[i] = i;
    return (int)v[0];
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++)
      if (v[j] == v[i]) {
        snprintf(err, errlen, "--devices %s: device id %d appears twice", text, (int)v[i]);
        return -1;
      }
    out[i] = (int32_t)v[i];
  }
  return n;
}
