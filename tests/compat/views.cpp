// ChipTensor views (reshape, transpose, three-argument view, start_offset, data_as), external
// tensors, no-dependency arguments and a Graph function.
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD 0
#define K_ADD_SCALAR 1

namespace {

// o = (a + b) + delta, through an intermediate.
void layer(const GraphTaskArgs &args, float delta) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &o = args.tensor(2).ref();
  // PyPTO's field types: shapes and ndims are uint32_t, so they brace-initialise uint32_t arrays
  // and compare with uint32_t counters without a cast.
  uint32_t shape[1] = {a.shapes[0]};
  uint32_t elems = 1;
  for (uint32_t d = 0; d < a.ndims; d++) elems *= a.shapes[d];
  if (elems != 16) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "a has %u elements", elems);
  TensorCreateInfo tmp_info(shape, 1, DataType::FLOAT32);
  CoreTaskArgs add;
  add.add_input(a, b);
  add.add_output(tmp_info);
  TaskOutputTensors added = rt_submit_aiv_task(K_ADD, add);
  const ChipTensor &tmp = added.get_ref(0);
  CoreTaskArgs shift;
  shift.add_no_dep(tmp);  // ordered after its creator only
  shift.add_output(o);
  shift.add_scalar(delta);
  rt_submit_aiv_task(K_ADD_SCALAR, shift);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const ChipTensor a = from_tensor_arg(args.tensor(0).ref());
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &o1 = args.tensor(2).ref();
  const ChipTensor &o2 = args.tensor(3).ref();
  if (pto2_rt_is_fatal()) return;

  // o1 (as 4x4) = transpose(a as 4x4).
  uint32_t sq[2] = {4, 4};
  ChipTensor at = a.reshape(sq, 2).transpose(0, 1);
  ChipTensor o1sq = o1.reshape(sq, 2);
  if (at.strides[0] != 1 || at.strides[1] != 4 || o1sq.strides[0] != 4)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "reshape/transpose strides");
  CoreTaskArgs copy;
  copy.add_input(at);
  copy.add_output(o1sq);
  copy.add_scalar(0.0f);
  rt_submit_aiv_task(K_ADD_SCALAR, copy);

  // Views keep start_offset; the third argument marks manual_dep.
  uint32_t two[1] = {2}, five[1] = {5}, one[1] = {1};
  ChipTensor v = a.view(two, five);
  ChipTensor w = v.view(one, one, true);
  if (v.start_offset != 5 || w.start_offset != 6 || !w.manual_dep || v.manual_dep)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "start_offset %llu %llu",
                    static_cast<unsigned long long>(v.start_offset),
                    static_cast<unsigned long long>(w.start_offset));
  if (to_u64(int32_t{-1}) != 0xffffffffu || to_u64(int8_t{-1}) != 0xffu)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "to_u64 must zero-extend");

  // o2 = a + b + 10, written through an external tensor over o2's buffer.
  uint32_t n[1] = {static_cast<uint32_t>(o2.shapes[0])};
  ChipTensor ext = make_tensor_external(o2.data_as<void>(), n, 1, DataType::FLOAT32);
  if (ext.owner_task_id.is_valid() || ext.addr != o2.addr)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "make_tensor_external");
  GraphTaskArgs g;
  g.add_input(a, b);
  g.add_output(ext);
  pto2_rt_scope_begin();
  rt_submit_graph(&layer, g, 10.0f);
  pto2_rt_scope_end();
  pto2_rt_orchestration_done();
}
