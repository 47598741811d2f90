/* The orchestration C++ header: an orchestration written with PyPTO's PTO2 names compiles
 * against pto_orchestration_api.h alone into a shared object whose entry runs on the runtime. */
#include <dlfcn.h>

#include "test_runtime_common.h"

static const char k_orch_cpp[] =
    "#include <cstdint>\n"
    "#include \"pto/pto_orchestration_api.h\"\n"
    "\n"
    "extern \"C\" __attribute__((visibility(\"default\"))) OrchestrationConfig\n"
    "aicpu_orchestration_config(const ChipTaskArgs &args) {\n"
    "  (void)args;\n"
    "  return OrchestrationConfig{.expected_arg_count = 4};\n"
    "}\n"
    "\n"
    "extern \"C\" __attribute__((visibility(\"default\"))) void\n"
    "aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {\n"
    "  const ChipTensor &x = orch_args.tensor(0).ref();\n"
    "  const ChipTensor &y = orch_args.tensor(1).ref();\n"
    "  float alpha = orch_args.scalar<float>(0);\n"
    "  int64_t mode = orch_args.scalar<int64_t>(1);\n"
    "  if (mode == 1) {\n"
    "    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, \"mode %ld is not supported\", (long)mode);\n"
    "    return;\n"
    "  }\n"
    "  if (mode == 2) {\n"
    "    CoreTaskArgs many;\n"
    "    for (int i = 0; i <= MAX_TENSOR_ARGS; i++) many.add_input(x);\n"
    "    TaskOutputTensors none = rt_submit_aiv_task(0, many);\n"
    "    if (!none.empty() || none.task_id().is_valid()) rt_report_fatal(1, \"outputs\");\n"
    "    return;\n"
    "  }\n"
    "  if (mode == 3) {\n"
    "    static TaskId deps[300];\n"
    "    CoreTaskArgs late;\n"
    "    late.add_inout(y);\n"
    "    late.set_dependencies(deps, 300);\n"
    "    rt_submit_aic_task(1, late);\n"
    "    return;\n"
    "  }\n"
    "  const uint32_t rows = static_cast<uint32_t>(x.shapes[0]);\n"
    "  for (uint32_t r = 0; r < rows; r += 4) {\n"
    "    PTO2_SCOPE() {\n"
    "      uint32_t shape[2] = {4, static_cast<uint32_t>(x.shapes[1])};\n"
    "      uint32_t offset[2] = {r, 0};\n"
    "      ChipTensor xs = x.view(shape, offset);\n"
    "      ChipTensor ys = y.view(shape, offset);\n"
    "      TensorCreateInfo tmp_info(shape, 2, DataType::FLOAT32);\n"
    "      CoreTaskArgs scale;\n"
    "      scale.add_input(xs);\n"
    "      scale.add_output(tmp_info);\n"
    "      scale.add_scalar(alpha);\n"
    "      TaskOutputTensors scaled = rt_submit_aiv_task(0, scale);\n"
    "      const ChipTensor &tmp = scaled.get_ref(0);\n"
    "      CoreTaskArgs add;\n"
    "      add.add_input(tmp, xs);\n"
    "      add.add_output(ys);\n"
    "      TaskOutputTensors added = rt_submit_aic_task(1, add);\n"
    "      if (!added.task_id().is_valid() || rt_is_fatal()) return;\n"
    "    }\n"
    "  }\n"
    "  uint32_t four[1] = {4};\n"
    "  TaskOutputTensors acc = alloc_tensors(TensorCreateInfo(four, 1, DataType::FLOAT32));\n"
    "  const ChipTensor &a0 = acc.get_ref(0);\n"
    "  CoreTaskArgs inc;\n"
    "  inc.add_inout(a0);\n"
    "  inc.add_scalar(2.5f);\n"
    "  rt_submit_aiv_task(2, inc);\n"
    "  uint32_t i3[1] = {3};\n"
    "  float got = get_tensor_data<float>(a0, 1, i3);\n"
    "  uint32_t first[2] = {0, 1};\n"
    "  float v = get_tensor_data<float>(y, 2, first);\n"
    "  uint32_t last[2] = {rows - 1, static_cast<uint32_t>(y.shapes[1] - 1)};\n"
    "  set_tensor_data(y, 2, last, v + got + 1000.0f);\n"
    "  if (from_u64<float>(to_u64(alpha)) != alpha || from_u64<int32_t>(to_u64(int32_t{-5})) != -5 "
    "||\n"
    "      to_u64(int32_t{-1}) != 0xffffffffu || to_u64(1.5f) != 0x3fc00000u)\n"
    "    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, \"u64 round trip\");\n"
    "}\n";

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

/* A table of stubs, for calling the entry outside the runtime: the first fatal message. */
static char g_fatal[512];
static void stub_report_fatal(void *ctx, int32_t code, const char *msg) {
  (void)ctx;
  (void)code;
  if (!g_fatal[0]) snprintf(g_fatal, sizeof g_fatal, "%s", msg);
}
static int32_t stub_is_fatal(void *ctx) {
  (void)ctx;
  return g_fatal[0] != 0;
}
static int32_t stub_submit_args(void *ctx, const pto_orch_task_args *t, uint32_t *out_nouts,
                                int64_t *out_task_id) {
  (void)ctx;
  (void)t;
  *out_nouts = 0;
  *out_task_id = -1;
  return 1;
}

typedef struct orch_config {
  int expected_arg_count;
} orch_config;

static void test_orchestration_header_compiles_and_runs(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("orch-header");
  assert_non_null(dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/orch.cpp", dir);
  assert_int_equal(tu_write_file(path, k_orch_cpp), 0);
  char *out = NULL;
  int rc = tu_run(&out,
                  "c++ -std=c++17 -O1 -Wall -Wextra -Werror -shared -fPIC -I '%s/include' -o "
                  "'%s/orch.so' '%s/orch.cpp'",
                  PTO_SOURCE_DIR, dir, dir);
  if (rc != 0) print_error("%s\n", out);
  assert_int_equal(rc, 0);
  free(out);
  snprintf(path, sizeof path, "%s/orch.so", dir);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(so);
  pto_orch_abi_version_fn version = (pto_orch_abi_version_fn)dlsym(so, "pto_orch_abi_version");
  pto_orch_bind_fn bind = (pto_orch_bind_fn)dlsym(so, "pto_orch_bind");
  pto_orch_entry_fn entry = (pto_orch_entry_fn)dlsym(so, "aicpu_orchestration_entry");
  orch_config (*config)(const pto_orch_args *) =
      (orch_config(*)(const pto_orch_args *))dlsym(so, "aicpu_orchestration_config");
  assert_non_null(version);
  assert_non_null(bind);
  assert_non_null(entry);
  assert_non_null(config);
  assert_int_equal(version(), PTO_ORCH_ABI_VERSION);
  pto_orch_args none = {0};
  assert_int_equal(config(&none).expected_arg_count, 4);
  /* The entry tensors are the runtime's ChipTensor copies (chip_tensors): arguments without
   * them are an error, not a read of the wrong layout. */
  pto_orch_api stub = {.version = PTO_ORCH_ABI_VERSION,
                       .size = sizeof stub,
                       .report_fatal = stub_report_fatal,
                       .is_fatal = stub_is_fatal,
                       .submit_args = stub_submit_args};
  pto_orch_tensor two[2] = {{0}};
  uint64_t slots[2] = {0, 0};
  pto_orch_args bare = {.tensors = two, .scalars = slots, .ntensors = 2, .nscalars = 2};
  bind(&stub);
  entry(&bare);
  assert_string_equal(g_fatal, "entry tensor 0: the arguments carry no ChipTensors (2 tensors)");
  bind(NULL);

  tsig s;
  tsig_init(&s, "header");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "M,8");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "M,8");
  tsig_scalar(&s, "alpha", PTO_DTYPE_F32, PTO_BIND_RUNTIME, tscalar_f(PTO_DTYPE_F32, 0));
  tsig_scalar(&s, "mode", PTO_DTYPE_I64, PTO_BIND_RUNTIME, tscalar_i64(PTO_DTYPE_I64, 0));
  pto_kernel_fn ks[3] = {k_scale, k_add, k_addc};
  const char *names[3] = {"scale", "add", "addc"};
  pto_program *p = tprogram(&s, bind, entry, 3, ks, names);
  tsig_free(&s);

  pto_worker *w = topen(3, 1, 7);
  float x[12][8], y[12][8];
  for (int r = 0; r < 12; r++)
    for (int c = 0; c < 8; c++)
      x[r][c] = (float)(r * 8 + c);
  int64_t shape[2] = {12, 8};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[4] = {pto_arg_host(&hx), pto_arg_host(&hy), pto_arg_f32(3.0f), pto_arg_i64(0)};
  for (int round = 0; round < 5; round++) {
    memset(y, 0, sizeof y);
    assert_pto_ok(pto_worker_run(w, p, args, 4));
    for (int r = 0; r < 12; r++)
      for (int c = 0; c < 8; c++) {
        float want = r == 11 && c == 7 ? 4.0f * x[0][1] + 2.5f + 1000.0f : 4.0f * x[r][c];
        assert_true(y[r][c] == want);
      }
  }
  args[3] = pto_arg_i64(1);
  assert_status_contains(pto_worker_run(w, p, args, 4),
                         "orchestration: reported a fatal error (code 1): mode 1 is not supported");
  /* CoreTaskArgs's errors, reported by the runtime's submit_args. */
  args[3] = pto_arg_i64(2);
  assert_status_contains(pto_worker_run(w, p, args, 4),
                         "orchestration: reported a fatal error (code 1): submit of kernel 0: too "
                         "many tensor arguments in one task (PTO_ORCH_MAX_TENSOR_ARGS)");
  args[3] = pto_arg_i64(3);
  assert_status_contains(pto_worker_run(w, p, args, 4),
                         "orchestration: reported a fatal error (code 1): submit: 300 explicit "
                         "dependencies (at most 256)");
  args[3] = pto_arg_i64(0);
  assert_pto_ok(pto_worker_run(w, p, args, 4));
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0);
  pto_worker_close(w);
  pto_program_release(p);
  dlclose(so);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_orchestration_header_compiles_and_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
