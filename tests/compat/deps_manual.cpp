// Manual scopes and explicit dependencies: the tasks inside PTO2_SCOPE(MANUAL) are ordered only by
// set_dependencies; a dummy task is a fence; intermediates come from alloc_tensors(array, count)
// with an initial value.
#include <array>
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD_SCALAR 1
#define K_MUL 2
#define K_SLOW_ADD 6

extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &o1 = args.tensor(2).ref();
  const ChipTensor &o2 = args.tensor(3).ref();
  const float s = args.scalar<float>(0);
  const uint32_t n = static_cast<uint32_t>(std::min<int64_t>(a.shapes[0], 16));
  uint32_t shape[1] = {n};
  TensorCreateInfo ones(shape, 1, DataType::FLOAT32);
  ones.set_initial_value(1.0f);
  TensorCreateInfo plain(shape, 1, DataType::FLOAT32);
  const TensorCreateInfo infos[2] = {ones, plain};

  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    TaskOutputTensors pre = alloc_tensors(infos, 2);
    const ChipTensor &one = pre.get_ref(0);

    // sum = a + 1 (slowly): a is an entry tensor, so its owner is invalid and skipped.
    CoreTaskArgs t1;
    t1.add_input(a, one);
    t1.add_output(plain);
    const std::array<PTO2TaskId, 1> external{a.owner_task_id};
    t1.set_dependencies(external.data(), static_cast<uint32_t>(external.size()));
    t1.set_allow_early_resolve(true);
    TaskOutputTensors r1 = rt_submit_aiv_task(K_SLOW_ADD, t1);
    const ChipTensor &sum = r1.get_ref(0);
    if (sum.owner_task_id != r1.task_id()) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "owner_task_id");

    // A fence after the producer.
    CoreTaskArgs fence_args;
    fence_args.add_inout(sum);
    PTO2TaskId after_sum[1] = {sum.owner_task_id};
    fence_args.set_dependencies(after_sum, 1);
    TaskOutputTensors fence = rt_submit_dummy_task(fence_args);

    // o1 = sum + s, after the fence only.
    CoreTaskArgs t2;
    t2.add_input(sum);
    t2.add_output(o1);
    t2.add_scalar(s);
    PTO2TaskId after_fence[1] = {fence.task_id()};
    t2.set_dependencies(after_fence, 1);
    TaskOutputTensors r2 = rt_submit_aiv_task(K_ADD_SCALAR, t2);

    // o2 = sum * b, after both.
    CoreTaskArgs t3;
    t3.add_input(sum, b);
    t3.add_output(o2);
    PTO2TaskId both[2] = {r1.task_id(), r2.task_id()};
    t3.set_dependencies(both, 2);
    rt_submit_aiv_task(K_MUL, t3);
  }

  // Outside the scope: reads wait for the writers, raw bits reinterpreted.
  uint32_t i3[1] = {3};
  const float v = get_tensor_data<float>(o1, 1, i3);
  const uint64_t raw = get_tensor_data(o1, 1, i3);
  if (from_u64<float>(raw) != v || v != 3.0f + 1.0f + s)  // a[i] = i
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "o1[3] is %f", static_cast<double>(v));
  if (get_tensor_data<uint32_t>(o1, 1, i3) != static_cast<uint32_t>(to_u64(v)))
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "get_tensor_data<uint32_t> must give the raw bits");
  LOG_TIMING("o1[3] = %.1f", static_cast<double>(v));
  LOG_INFO("%d tensors", args.tensor_count());
  rt_orchestration_done();
}
