/* A stand-in for libpto_compiler, for the cache tests (built by them with cc, loaded through
 * PTO_COMPILER_LIBRARY). For any program it writes a small but real work dir without LLVM: an
 * orchestration .so (C++) and a kernels .so (C, in kernels/k.ll), both with Build-IDs, whose
 * function pto_fake_tag / kernel pto_kernel_k return the low bits of the program's structural
 * hash, so a test can tell which program a binary came from. Every build appends a line to
 * $PTO_FAKE_COMPILER_LOG; $PTO_FAKE_COMPILER_SLEEP_MS widens race windows.
 *
 * The pto_ir / pto_signature symbols it uses resolve, at dlopen time, from the test process. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pto/compiler.h"
#include "pto/kernel_abi.h"
#include "pto/orch_abi.h"

#ifndef FAKE_INCLUDE
#define FAKE_INCLUDE "."
#endif

static pto_status run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static pto_status run(const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  if (rc != 0) return pto_status_make(PTO_STATUS_IO, "fake compiler: '%s' failed (%d)", cmd, rc);
  return PTO_OK;
}

static pto_status write_text(const char *dir, const char *rel, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  FILE *f = fopen(path, "w");
  if (!f)
    return pto_status_make(PTO_STATUS_IO, "fake compiler: cannot write %s: %s", path,
                           strerror(errno));
  int ok = fputs(text, f) >= 0;
  if (fclose(f) != 0 || !ok)
    return pto_status_make(PTO_STATUS_IO, "fake compiler: cannot write %s: %s", path,
                           strerror(errno));
  return PTO_OK;
}

static const char *identity(void) { return "fake toolchain"; }

static pto_status build_orchestration(const char *cpp, const char *so) {
  return run("c++ -std=c++17 -shared -fPIC -Wl,--build-id=sha1 -I'%s' -o '%s' '%s'", FAKE_INCLUDE,
             so, cpp);
}

static pto_status build_kernel_object(const char *ll, int opt_level, const char *obj) {
  return run("cc -x c -O%d -fPIC -c -I'%s' -o '%s' '%s'", opt_level, FAKE_INCLUDE, obj, ll);
}

static pto_status link_kernels(const char *const *objects, int n, const char *so) {
  char list[4096] = "";
  for (int i = 0; i < n; i++) {
    strncat(list, " '", sizeof list - strlen(list) - 1);
    strncat(list, objects[i], sizeof list - strlen(list) - 1);
    strncat(list, "'", sizeof list - strlen(list) - 1);
  }
  return run("cc -shared -Wl,--build-id=sha1 -o '%s'%s", so, list);
}

static pto_status build_dir(const pto_ir_program *p, const pto_compile_options *opt,
                            const char *dir, pto_manifest *out) {
  memset(out, 0, sizeof *out);
  pto_ir_func *entry = NULL;
  pto_status s = pto_ir_program_entry(p, opt->entry, &entry);
  if (s) return s;
  s = pto_signature_build(p, entry, opt->scalars, opt->nscalars, opt->samples, opt->nsamples,
                          &out->sig);
  if (s) return s;
  const char *sleep_ms = getenv("PTO_FAKE_COMPILER_SLEEP_MS");
  if (sleep_ms && *sleep_ms) {
    long ms = atol(sleep_ms);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
  }
  uint64_t tag = pto_ir_program_hash(p).lo & 0x7fffffff;
  char path[4096], text[4096], src[4096], bin[4096];
  snprintf(path, sizeof path, "%s/orchestration", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/kernels", dir);
  mkdir(path, 0755);
  char *ptir = NULL;
  if ((s = pto_ir_print(p, &ptir))) goto fail;
  s = write_text(dir, "program.ptir", ptir);
  free(ptir);
  if (s) goto fail;

  /* The fingerprint the loader checks the manifest against (one kernel, k). */
  const char *kname = "k", *ksym = "pto_kernel_k";
  char fp[33];
  if ((s = pto_signature_fingerprint(&out->sig, 1, &kname, &ksym, fp))) goto fail;
  snprintf(text, sizeof text,
           "#include \"pto/orch_abi.h\"\n"
           "extern \"C\" {\n"
           "__attribute__((visibility(\"default\"))) extern const char pto_orch_fingerprint[33] = "
           "\"%s\";\n"
           "__attribute__((visibility(\"default\"))) uint32_t pto_orch_abi_version(void) { return "
           "PTO_ORCH_ABI_VERSION; }\n"
           "__attribute__((visibility(\"default\"))) void pto_orch_bind(const pto_orch_api *) {}\n"
           "__attribute__((visibility(\"default\"))) void aicpu_orchestration_entry(const void *) "
           "{}\n"
           "__attribute__((visibility(\"default\"))) unsigned long long pto_fake_tag(void) { "
           "return %" PRIu64 "ull; }\n"
           "}\n",
           fp, tag);
  snprintf(src, sizeof src, "orchestration/%s.cpp", entry->name);
  if ((s = write_text(dir, src, text))) goto fail;
  snprintf(bin, sizeof bin, "orchestration/%s.so", entry->name);
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s/%s", dir, src);
  snprintf(b, sizeof b, "%s/%s", dir, bin);
  if ((s = build_orchestration(a, b))) goto fail;

  snprintf(
      text, sizeof text,
      "#include \"pto/kernel_abi.h\"\n"
      "const int32_t pto_kernel_abi_version = PTO_KERNEL_ABI_VERSION;\n"
      "int32_t pto_kernel_k(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *c) {\n"
      "  (void)t; (void)s; (void)c;\n"
      "  return %" PRIu64 ";\n"
      "}\n",
      tag);
  if ((s = write_text(dir, "kernels/k.ll", text))) goto fail;
  if ((s = write_text(dir, "kernels/abi.c", "int pto_fake_abi_object;\n"))) goto fail;
  snprintf(a, sizeof a, "%s/kernels/k.ll", dir);
  snprintf(b, sizeof b, "%s/kernels/k.o", dir);
  if ((s = build_kernel_object(a, opt->opt_level, b))) goto fail;
  snprintf(a, sizeof a, "%s/kernels/abi.c", dir);
  snprintf(b, sizeof b, "%s/kernels/pto_abi.o", dir);
  if ((s = build_kernel_object(a, 0, b))) goto fail;
  char k_o[4096], abi_o[4096], kso[4096];
  snprintf(k_o, sizeof k_o, "%s/kernels/k.o", dir);
  snprintf(abi_o, sizeof abi_o, "%s/kernels/pto_abi.o", dir);
  snprintf(kso, sizeof kso, "%s/kernels/kernels.so", dir);
  const char *objs[] = {k_o, abi_o};
  if ((s = link_kernels(objs, 2, kso))) goto fail;

  out->program = strdup(p->name);
  out->orch_name = strdup(entry->name);
  out->orch_source = strdup(src);
  out->orch.path = strdup(bin);
  out->kernels_so.path = strdup("kernels/kernels.so");
  out->platform = strdup("sim");
  out->opt_level = opt->opt_level;
  out->kernels = calloc(1, sizeof *out->kernels);
  if (out->kernels) {
    out->nkernels = 1;
    out->kernels[0].name = strdup("k");
    out->kernels[0].symbol = strdup("pto_kernel_k");
    out->kernels[0].source = strdup("kernels/k.ll");
    out->kernels[0].object = strdup("kernels/k.o");
    out->kernels[0].core_type = PTO_CORE_AIV;
  }
  const char *files[] = {"kernels/k.ll",      "kernels/k.o", "program.ptir",
                         "kernels/pto_abi.o", src,           bin,
                         "kernels/kernels.so"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    if ((s = pto_manifest_list_file(out, files[i]))) goto fail;
  const char *log = getenv("PTO_FAKE_COMPILER_LOG");
  if (log && *log) {
    FILE *f = fopen(log, "a");
    if (f) {
      fprintf(f, "build %s %ld\n", dir, (long)getpid());
      fclose(f);
    }
  }
  return PTO_OK;
fail:
  pto_manifest_free(out);
  return s;
}

__attribute__((visibility("default"))) const pto_compiler_api pto_compiler_api_table = {
    .version = PTO_COMPILER_API_VERSION,
    .size = sizeof(pto_compiler_api),
    .toolchain_identity = identity,
    .build_dir = build_dir,
    .build_orchestration = build_orchestration,
    .build_kernel_object = build_kernel_object,
    .link_kernels = link_kernels,
};
