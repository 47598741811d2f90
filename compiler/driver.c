/* The compile driver: program -> work dir binaries.
 *
 * Order matters for speed: the orchestration C++ is emitted first and the C++ compiler started
 * in the background, so that its (dominant) run overlaps kernel lowering in this process. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"
#include "lower.h"
#include "pto/kernel_abi.h"
#include "pto/orch_abi.h"

static char g_identity[2048]; /* written once under g_identity_once */
static pthread_once_t g_identity_once = PTHREAD_ONCE_INIT;

/* The first line of `CXX --version` names the compiler and its version. */
static void cxx_version(char *buf, size_t n) {
  char cmd[PATH_MAX + 32];
  snprintf(cmd, sizeof cmd, "'%s' --version 2>/dev/null", pto__compiler_cxx());
  snprintf(buf, n, "%s", pto__compiler_cxx());
  FILE *f = popen(cmd, "r");
  if (!f) return;
  if (fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = 0;
  pclose(f);
}

static void make_identity(void) {
  char cxx[256];
  cxx_version(cxx, sizeof cxx);
  snprintf(g_identity, sizeof g_identity,
           "pto=%s;llvm=%s;cxx=%s;orch_abi=%d;kernel_abi=%d;fingerprint=1;%s", PTO_VERSION,
           PTO_LLVM_VERSION, cxx, PTO_ORCH_ABI_VERSION, PTO_KERNEL_ABI_VERSION,
           pto__llvm_target_identity());
}

const char *pto_compiler_toolchain_identity(void) {
  pthread_once(&g_identity_once, make_identity);
  return g_identity;
}

static char *path_join(const char *dir, const char *rel) {
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = pto_malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

static char *xstrdupf(const char *fmt, const char *a) {
  size_t n = strlen(fmt) + strlen(a) + 1;
  char *p = pto_malloc(n);
  if (p) snprintf(p, n, fmt, a);
  return p;
}

/* Appends the definition of data symbol `symbol` holding hex to the generated source *text. */
static pto_status append_fingerprint_line(char **text, const char *linkage, const char *symbol,
                                          const char hex[33]) {
  char *t = pto_strdup_printf(
      "%s\n// The signature this object was compiled for (pto_signature_fingerprint): the loader\n"
      "// refuses a manifest that does not match it.\n"
      "%s__attribute__((visibility(\"default\"), used)) const char %s[33] = \"%s\";\n",
      *text, linkage, symbol, hex);
  if (!t) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory generating code");
  free(*text);
  *text = t;
  return PTO_OK;
}

/* The fingerprint of the signature and kernel table this code was generated for
 * (pto_signature_fingerprint), as a data symbol of the orchestration object, so that the loader
 * can refuse a manifest edited since. The kernels are p's, in order, as the loop below names
 * them. */
static pto_status append_fingerprint(const pto_ir_program *p, const pto_signature *sig,
                                     char **cpp) {
  const char **names = pto_calloc((size_t)p->nfuncs + 1, sizeof *names);
  char **symbols = pto_calloc((size_t)p->nfuncs + 1, sizeof *symbols);
  int n = 0;
  pto_status s = PTO_OK;
  if (!names || !symbols) goto oom;
  for (int i = 0; i < p->nfuncs; i++) {
    if (p->funcs[i]->kind != PTO_FUNC_KERNEL) continue;
    names[n] = p->funcs[i]->name;
    if (!(symbols[n++] = xstrdupf("pto_kernel_%s", p->funcs[i]->name))) goto oom;
  }
  char hex[33];
  if ((s = pto_signature_fingerprint(sig, n, names, (const char *const *)symbols, hex))) goto done;
  if ((s = append_fingerprint_line(cpp, "extern \"C\" ", PTO_ORCH_FINGERPRINT_SYMBOL, hex)))
    goto done;
  goto done;
oom:
  s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory compiling %s", p->name);
done:
  for (int i = 0; symbols && i < n; i++)
    free(symbols[i]);
  free(symbols);
  free(names);
  return s;
}

static pto_status start_orchestration(const char *cpp_path, const char *so_path, int opt_level,
                                      pto_exec *out) {
  static const char *const levels[] = {"-O0", "-O1", "-O2", "-O3"};
  /* -fwrapv: signed overflow in orchestration arithmetic wraps, as in kernels. */
  const char *argv[20];
  int n = 0;
  argv[n++] = pto__compiler_cxx();
  argv[n++] = "-std=c++17";
  argv[n++] = levels[opt_level];
  argv[n++] = "-fwrapv";
  argv[n++] = "-fPIC";
  argv[n++] = "-shared";
  argv[n++] = "-Wl,--build-id=sha1";
  /* Its calls to its own functions (the header's inline ones) bind when linked, not at their
   * first call in a launch. */
  argv[n++] = "-Wl,-Bsymbolic-functions";
  /* The precompiled header was built with exactly these flags at -O2: first in the search. */
  const char *pch = pto__compiler_pch_dir();
  if (opt_level == 2 && *pch) {
    argv[n++] = "-I";
    argv[n++] = pch;
  }
  argv[n++] = "-I";
  argv[n++] = pto__compiler_include_dir();
  /* Then the pto folder itself: orchestration written for PyPTO's runtime includes the header
   * by its bare name ("pto_orchestration_api.h"), as that runtime's build puts it on the path. */
  char pto_dir[PATH_MAX];
  snprintf(pto_dir, sizeof pto_dir, "%s/pto", pto__compiler_include_dir());
  argv[n++] = "-I";
  argv[n++] = pto_dir;
  argv[n++] = "-o";
  argv[n++] = so_path;
  argv[n++] = cpp_path;
  argv[n] = NULL;
  return pto__compiler_exec_start(argv, out);
}

pto_status pto_compiler_build_orchestration(const char *cpp_path, const char *so_path) {
  pto_exec e;
  PTO_RETURN_IF_ERROR(start_orchestration(cpp_path, so_path, 2, &e));
  int exit_status = 0;
  pto_status s = pto__compiler_exec_wait_status(&e, &exit_status);
  if (s && exit_status > 0) {
    /* The C++ compiler ran and refused the source: bad input (a hand edit that does not
     * compile), reported like a .ll that does not parse, not an I/O failure. */
    pto_status bad = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s does not compile: %s",
                                     cpp_path, pto_status_message(s));
    pto_status_free(s);
    s = bad;
  }
  return s;
}

pto_status pto_compiler_build_kernel_object(const char *ll_path, int opt_level,
                                            const char *obj_path) {
  return pto__compile_ll(ll_path, opt_level, obj_path);
}

pto_status pto_compiler_link_kernels(const char *const *objects, int nobjects,
                                     const char *so_path) {
  const char **argv = pto_calloc((size_t)nobjects + 8, sizeof *argv);
  if (!argv) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory linking kernels");
  int n = 0;
  argv[n++] = pto__compiler_cc();
  argv[n++] = "-shared";
  argv[n++] = "-Wl,--build-id=sha1";
  argv[n++] = "-o";
  argv[n++] = so_path;
  for (int i = 0; i < nobjects; i++)
    argv[n++] = objects[i];
  argv[n++] = "-lm";
  argv[n] = NULL;
  pto_status s = pto__compiler_exec(argv);
  free(argv);
  return s;
}

pto_status pto_compiler_build_host(const char *c_path, const char *so_path) {
  /* -fwrapv: signed overflow in host arithmetic wraps, as in orchestrations and kernels
   * (`%a + 1 > %a` at the i32 maximum is false). */
  const char *argv[] = {pto__compiler_cc(),
                        "-std=c17",
                        "-O2",
                        "-fwrapv",
                        "-fPIC",
                        "-shared",
                        "-Wl,--build-id=sha1",
                        "-I",
                        pto__compiler_include_dir(),
                        "-o",
                        so_path,
                        c_path,
                        "-lm",
                        NULL};
  return pto__compiler_exec(argv);
}

/* Validates a device set: 1 to PTO_MAX_DEVICES ids, distinct, >= 0. */
static pto_status check_devices(const int32_t *ids, int n) {
  if (n < 1 || n > PTO_MAX_DEVICES)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "--devices: %d devices; give 1 to %d", n,
                           PTO_MAX_DEVICES);
  for (int i = 0; i < n; i++) {
    if (ids[i] < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "--devices: device id %d is negative",
                             (int)ids[i]);
    for (int j = 0; j < i; j++)
      if (ids[j] == ids[i])
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "--devices: device id %d appears twice",
                               (int)ids[i]);
  }
  return PTO_OK;
}

/* The orch functions a host calls, each once, in order of first appearance. */
static int collect_callees(const pto_ir_block *b, const char **names, int n, int cap) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    if (s->kind == PTO_STMT_CALL) {
      int seen = 0;
      for (int k = 0; k < n; k++)
        seen |= strcmp(names[k], s->call.callee->name) == 0;
      if (!seen && n < cap) names[n++] = s->call.callee->name;
    } else if (s->kind == PTO_STMT_FOR) {
      n = collect_callees(&s->loop.body, names, n, cap);
    } else if (s->kind == PTO_STMT_IF) {
      n = collect_callees(&s->branch.then_body, names, n, cap);
      n = collect_callees(&s->branch.else_body, names, n, cap);
    }
  }
  return n;
}

/* A call whose device= is a constant outside the ndev devices the program is compiled for fails
 * here, before anything runs, naming the call where it is written; a device= known only when the
 * host runs (a loop variable) is checked there, at launch (emit_host.c). */
static pto_status check_static_devices(const pto_ir_program *p, const pto_ir_block *b, int ndev) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    int64_t d;
    if (s->kind == PTO_STMT_CALL && s->call.device &&
        pto_ir_expr_static_int(s->call.device, &d) == 0 && d >= ndev) /* d < 0: the builder's */
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s:%d:%d: call @%s: device=%lld is outside the %d device%s (0..%d) "
                             "the program is compiled for: compile it with --devices %lld or more",
                             p->file ? p->file : "<program>", s->call.device->loc.line,
                             s->call.device->loc.col, s->call.callee->name, (long long)d, ndev,
                             ndev == 1 ? "" : "s", ndev - 1, (long long)d + 1);
    pto_status st = PTO_OK;
    if (s->kind == PTO_STMT_FOR) st = check_static_devices(p, &s->loop.body, ndev);
    if (s->kind == PTO_STMT_IF && !(st = check_static_devices(p, &s->branch.then_body, ndev)))
      st = check_static_devices(p, &s->branch.else_body, ndev);
    if (st) return st;
  }
  return PTO_OK;
}

static int count_calls(const pto_ir_block *b) {
  int n = 0;
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    n += s->kind == PTO_STMT_CALL;
    if (s->kind == PTO_STMT_FOR) n += count_calls(&s->loop.body);
    if (s->kind == PTO_STMT_IF)
      n += count_calls(&s->branch.then_body) + count_calls(&s->branch.else_body);
  }
  return n;
}

/* Lists paths in out->files (unhashed: the loader hashes them before writing the manifest). */
static pto_status list_files(pto_manifest *out, const char *const *paths, int n) {
  for (int i = 0; i < n; i++)
    PTO_RETURN_IF_ERROR(pto_manifest_list_file(out, paths[i]));
  return PTO_OK;
}

/* The kernel objects' runtime support, linked into kernels.so. */
static const char k_abi_object[] = "kernels/pto_abi.o";

/* What an L2 build wrote: each kernel's IR and object, then the program, the ABI object, the
 * orchestration source and binary, and the kernels' shared object. */
static pto_status list_l2_files(pto_manifest *out) {
  for (int i = 0; i < out->nkernels; i++) {
    const pto_manifest_kernel *k = &out->kernels[i];
    PTO_RETURN_IF_ERROR(list_files(out, (const char *const[]){k->source, k->object}, 2));
  }
  return list_files(out,
                    (const char *const[]){"program.ptir", k_abi_object, out->orch_source,
                                          out->orch.path, out->kernels_so.path},
                    5);
}

/* A host entry: specialize, then each orch the host calls compiled as the entry of its own L2
 * work dir DIR/callees/<orch>/ (its scalars runtime: the host passes them; its dynamic dims stay
 * dynamic), then DIR/host/host.c and host.so. */
static pto_status build_host_dir(const pto_ir_program *input, pto_ir_func *entry,
                                 const pto_compile_options *opt, int opt_level, const char *dir,
                                 pto_manifest *out) {
  pto_ir_program *specialized = NULL;
  char *text = NULL, *c_path = NULL, *so_path = NULL;
  const char **names = NULL;
  pto_binding *binds = NULL;
  int ndev = 0;
  const int32_t *devs = pto_compile_options_devices(opt, &ndev);
  static const int32_t k_default_device = 0;
  if (!devs) {
    devs = &k_default_device;
    ndev = 1;
  }
  pto_status s = check_devices(devs, ndev);
  if (s) return s;
  s = pto_signature_build(input, entry, opt->scalars, opt->nscalars, opt->samples, opt->nsamples,
                          &out->sig);
  if (s) return s;
  if ((s = pto_ir_specialize(input, entry, &out->sig, &specialized))) goto done;
  const pto_ir_program *p = specialized;
  const pto_ir_func *host = pto_ir_program_find_func(p, out->sig.entry);
  if ((s = check_static_devices(p, &host->body, ndev))) goto done;
  int cap = count_calls(&host->body);
  names = pto_calloc((size_t)cap + 1, sizeof *names);
  out->devices = pto_malloc((size_t)ndev * sizeof *out->devices);
  out->callees = pto_calloc((size_t)cap + 1, sizeof *out->callees);
  out->callee_dirs = pto_calloc((size_t)cap + 1, sizeof *out->callee_dirs);
  out->program = pto_strdup(p->name);
  out->host_name = pto_strdup(host->name);
  out->host_source = pto_strdup("host/host.c");
  out->host.path = pto_strdup("host/host.so");
  out->platform = pto_strdup("sim");
  if (!names || !out->devices || !out->callees || !out->callee_dirs || !out->program ||
      !out->host_name || !out->host_source || !out->host.path || !out->platform)
    goto oom;
  out->is_host = 1;
  out->opt_level = opt_level;
  memcpy(out->devices, devs, (size_t)ndev * sizeof *devs);
  out->ndevices = ndev;
  int ncallees = collect_callees(&host->body, names, 0, cap);

  char path[PATH_MAX];
  for (int i = 0; i < ncallees; i++) {
    const pto_ir_func *g = pto_ir_program_find_func(p, names[i]);
    int nb = 0;
    free(binds);
    binds = pto_calloc((size_t)g->nparams + 1, sizeof *binds);
    if (!binds) goto oom;
    for (int k = 0; k < g->nparams; k++)
      if (g->params[k].value->type->kind == PTO_TYPE_SCALAR)
        binds[nb++] = (pto_binding){g->params[k].value->name, "runtime"};
    pto_compile_options copt;
    pto_compile_options_init(&copt);
    copt.entry = names[i];
    copt.opt_level = opt_level;
    copt.scalars = binds;
    copt.nscalars = nb;
    /* The caller's progress counts each callee's kernels as they are lowered (a host program of
     * many kernels drew no bar: the callees' options had none). */
    if (opt->sz >= offsetof(pto_compile_options, progress_ctx) + sizeof opt->progress_ctx) {
      copt.progress = opt->progress;
      copt.progress_ctx = opt->progress_ctx;
    }
    snprintf(path, sizeof path, "%s/callees/%s", dir, names[i]);
    if ((s = pto_file_mkdirs(path, 0755))) goto done;
    if (!(out->callees[i] = pto_strdup(names[i]))) goto oom;
    out->ncallees = i + 1; /* callees[i] and callee_dirs[i] both freed from here on */
    s = pto_compiler_build_dir(p, &copt, path, &out->callee_dirs[i]);
    if (s) {
      s = pto_status_annotate(s, "compiling @%s, called by host @%s", names[i], host->name);
      goto done;
    }
  }

  snprintf(path, sizeof path, "%s/program.ptir", dir);
  if ((s = pto_ir_print(p, &text))) goto done;
  if ((s = pto__compiler_write_file(path, text))) goto done;
  free(text);
  text = NULL;
  snprintf(path, sizeof path, "%s/host", dir);
  if ((s = pto_file_mkdirs(path, 0755))) goto done;
  if ((s = pto__emit_host(p, host, names, ncallees, &text))) goto done;
  {
    /* The host's fingerprint: its signature and its callees (by name) in call-index order. */
    char hex[33];
    if ((s = pto_signature_fingerprint(&out->sig, ncallees, (const char *const *)names,
                                       (const char *const *)names, hex)))
      goto done;
    if ((s = append_fingerprint_line(&text, "", PTO_HOST_FINGERPRINT_SYMBOL, hex))) goto done;
  }
  c_path = path_join(dir, out->host_source);
  so_path = path_join(dir, out->host.path);
  if (!c_path || !so_path) goto oom;
  if ((s = pto__compiler_write_file(c_path, text))) goto done;
  if ((s = pto_compiler_build_host(c_path, so_path))) {
    s = pto_status_annotate(s, "compiling the host code %s", c_path);
    goto done;
  }
  s = list_files(out, (const char *const[]){"program.ptir", out->host_source, out->host.path}, 3);
  goto done;
oom:
  s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory compiling %s", input->name);
done:
  free(binds);
  free(names);
  free(text);
  free(c_path);
  free(so_path);
  pto_ir_program_destroy(specialized);
  return s;
}

/* opt->waiting, when the caller's struct has it (sz) and set it. */
static void report_waiting(const pto_compile_options *opt, const char *what) {
  if (opt->sz >= offsetof(pto_compile_options, waiting) + sizeof opt->waiting && opt->waiting)
    opt->waiting(opt->progress_ctx, what);
}

/* opt->progress, when the caller's struct has it (sz) and set it. */
static void report_progress(const pto_compile_options *opt, int done, int total) {
  if (opt->sz >= offsetof(pto_compile_options, progress_ctx) + sizeof opt->progress_ctx &&
      opt->progress)
    opt->progress(opt->progress_ctx, done, total);
}

pto_status pto_compiler_build_dir(const pto_ir_program *input, const pto_compile_options *opt,
                                  const char *dir, pto_manifest *out) {
  if (!input)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_compiler_build_dir: input is NULL");
  if (!dir)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_compiler_build_dir: dir is NULL");
  if (!out)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_compiler_build_dir: out is NULL");
  memset(out, 0, sizeof *out);
  pto_compile_options defaults;
  pto_compile_options_init(&defaults);
  if (!opt) opt = &defaults;
  if (opt->platform && strcmp(opt->platform, "sim") != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "--platform %s: unknown platform; the platforms are: sim",
                           opt->platform);
  int opt_level = opt->opt_level;
  if (opt_level < 0 || opt_level > 3)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "-O%d: the levels are -O0 to -O3",
                           opt_level);

  pto_status s = pto_ir_verify(input);
  if (s) return s;
  pto_ir_program *specialized = NULL, *outlined = NULL;
  const pto_ir_program *p = input;
  pto_ir_func *entry = NULL;
  char *ptir = NULL, *cpp = NULL, *orch_cpp = NULL, *orch_so = NULL, *kso = NULL, *abi = NULL;
  const char **objs = NULL;
  int *kernel_ids = NULL;
  int exec_started = 0;
  pto_exec orch_exec;

  s = pto_ir_program_entry(input, opt->entry, &entry);
  if (s) goto done;
  if (entry->kind == PTO_FUNC_KERNEL) {
    /* A kernel runs as one task of an orch made for it (the loader has usually done this). */
    pto_ir_program *wrapped = NULL;
    const char *name = NULL;
    if ((s = pto_ir_program_kernel_entry(input, opt->entry, &wrapped, &name))) goto done;
    pto_compile_options kopt;
    pto_compile_options_init(&kopt);
    memcpy(&kopt, opt, opt->sz < sizeof kopt ? opt->sz : sizeof kopt);
    kopt.sz = sizeof kopt;
    kopt.entry = name;
    s = pto_compiler_build_dir(wrapped, &kopt, dir, out);
    pto_ir_program_destroy(wrapped);
    return s;
  }
  const pto_ir_func *src_entry = entry;
  if (entry->kind == PTO_FUNC_HOST) {
    s = build_host_dir(input, entry, opt, opt_level, dir, out);
    goto done;
  }
  int ndev = 0;
  pto_compile_options_devices(opt, &ndev);
  if (ndev > 0) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "--devices applies to programs with a host entry; @%s is an orch",
                        entry->name);
    goto done;
  }
  s = pto_signature_build(input, entry, opt->scalars, opt->nscalars, opt->samples, opt->nsamples,
                          &out->sig);
  if (s) goto done;
  if ((s = pto_ir_specialize(input, entry, &out->sig, &specialized))) goto done;
  p = specialized;
  if ((s = pto__outline_incore(p, &outlined))) goto done;
  if (outlined) p = outlined;
  entry = pto_ir_program_find_func(p, out->sig.entry);

  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/orchestration", dir);
  if ((s = pto_file_mkdirs(path, 0755))) goto done;
  snprintf(path, sizeof path, "%s/kernels", dir);
  if ((s = pto_file_mkdirs(path, 0755))) goto done;

  snprintf(path, sizeof path, "%s/program.ptir", dir);
  if ((s = pto_ir_print(p, &ptir))) goto done;
  if ((s = pto__compiler_write_file(path, ptir))) goto done;

  kernel_ids = pto_calloc((size_t)p->nfuncs + 1, sizeof *kernel_ids);
  out->kernels = pto_calloc((size_t)p->nfuncs + 1, sizeof *out->kernels);
  objs = pto_calloc((size_t)p->nfuncs + 2, sizeof *objs);
  if (!kernel_ids || !out->kernels || !objs) goto oom;
  for (int i = 0; i < p->nfuncs; i++)
    kernel_ids[i] = p->funcs[i]->kind == PTO_FUNC_KERNEL ? out->nkernels++ : -1;

  out->program = pto_strdup(p->name);
  out->orch_name = pto_strdup(entry->name);
  out->orch_source = xstrdupf("orchestration/%s.cpp", entry->name);
  out->orch.path = xstrdupf("orchestration/%s.so", entry->name);
  out->kernels_so.path = pto_strdup("kernels/kernels.so");
  out->platform = pto_strdup("sim");
  out->opt_level = opt_level;
  if (!out->program || !out->orch_name || !out->orch_source || !out->orch.path ||
      !out->kernels_so.path || !out->platform)
    goto oom;

  int orch_calls = 0, orch_parts = 0;
  if ((s = pto__emit_orchestration(p, entry, src_entry, &out->sig, kernel_ids, &cpp, &orch_calls,
                                   &orch_parts)))
    goto done;
  if ((s = append_fingerprint(p, &out->sig, &cpp))) goto done;
  orch_cpp = path_join(dir, out->orch_source);
  orch_so = path_join(dir, out->orch.path);
  kso = path_join(dir, out->kernels_so.path);
  abi = path_join(dir, k_abi_object);
  if (!orch_cpp || !orch_so || !kso || !abi) goto oom;
  if ((s = pto__compiler_write_file(orch_cpp, cpp))) goto done;
  if ((s = start_orchestration(orch_cpp, orch_so, opt_level, &orch_exec))) goto done;
  exec_started = 1;

  int k = 0;
  report_progress(opt, 0, out->nkernels);
  for (int i = 0; i < p->nfuncs; i++) {
    const pto_ir_func *f = p->funcs[i];
    if (f->kind != PTO_FUNC_KERNEL) continue;
    pto_manifest_kernel *ck = &out->kernels[k];
    ck->id = k;
    ck->name = pto_strdup(f->name);
    ck->symbol = xstrdupf("pto_kernel_%s", f->name);
    /* The kernel's files are named after it; a name too long for a file name (255 bytes with
     * ".ll": "File name too long") is cut to 200 characters and given the kernel's number
     * ('-' is in no PTIR name, so no other kernel's file has that name). */
    if (strlen(f->name) <= 200) {
      ck->source = xstrdupf("kernels/%s.ll", f->name);
      ck->object = xstrdupf("kernels/%s.o", f->name);
    } else {
      char cut[224];
      snprintf(cut, sizeof cut, "%.200s-%d", f->name, k);
      ck->source = xstrdupf("kernels/%s.ll", cut);
      ck->object = xstrdupf("kernels/%s.o", cut);
    }
    if (!ck->name || !ck->symbol || !ck->source || !ck->object) goto oom;
    ck->core_type = pto__kernel_core_type(f);
    char *ll = path_join(dir, ck->source);
    char *obj = path_join(dir, ck->object);
    if (!ll || !obj) {
      free(ll);
      free(obj);
      goto oom;
    }
    s = pto__lower_kernel(p, f, opt_level, ll, obj, &ck->scratch_bytes);
    free(ll);
    objs[k++] = obj;
    if (s) goto done;
    report_progress(opt, k, out->nkernels);
  }
  if ((s = pto__emit_abi_object(abi))) goto done;
  objs[k] = abi; /* borrowed for the link only: freed below as abi */
  s = pto_compiler_link_kernels(objs, k + 1, kso);
  objs[k] = NULL;
  if (s) goto done;
  exec_started = 0;
  if (orch_parts > 0) {
    /* Long: its compile may outlast the kernels' by far (seconds per thousand calls). */
    char what[128];
    snprintf(what, sizeof what, "the orchestration C++, %d calls in %d functions", orch_calls,
             orch_parts + 1);
    report_waiting(opt, what);
  }
  if ((s = pto__compiler_exec_wait(&orch_exec))) {
    s = pto_status_annotate(s, "compiling the orchestration %s", orch_cpp);
    goto done;
  }
  s = list_l2_files(out);
  goto done;
oom:
  s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory compiling %s", p->name);
done:
  if (exec_started) {
    pto_status w = pto__compiler_exec_wait(&orch_exec);
    pto_status_free(w);
  }
  if (objs)
    for (int i = 0; objs[i]; i++)
      free((void *)objs[i]);
  free(objs);
  free(kernel_ids);
  free(ptir);
  free(cpp);
  free(orch_cpp);
  free(orch_so);
  free(kso);
  free(abi);
  pto_ir_program_destroy(outlined);
  pto_ir_program_destroy(specialized);
  if (s) pto_manifest_free(out);
  return s;
}

const pto_compiler_api pto_compiler_api_table = {
    .version = PTO_COMPILER_API_VERSION,
    .size = sizeof(pto_compiler_api),
    .toolchain_identity = pto_compiler_toolchain_identity,
    .build_dir = pto_compiler_build_dir,
    .build_orchestration = pto_compiler_build_orchestration,
    .build_kernel_object = pto_compiler_build_kernel_object,
    .link_kernels = pto_compiler_link_kernels,
    .build_host = pto_compiler_build_host,
};
