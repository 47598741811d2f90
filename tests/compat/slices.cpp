// ChipTensor::slice with a step, permute, valid_transpose and valid_reshape on 4x4 views of the
// entry tensors.
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD 0
#define K_ADD_SCALAR 1
#define K_MUL 2

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const uint32_t sq[2] = {4, 4};
  const ChipTensor a = args.tensor(0).ref().reshape(sq, 2);
  const ChipTensor b = args.tensor(1).ref().reshape(sq, 2);
  const ChipTensor o1 = args.tensor(2).ref().reshape(sq, 2);
  const ChipTensor o2 = args.tensor(3).ref().reshape(sq, 2);
  if (!a.valid_transpose(0, 1) || a.valid_transpose(0, 2) || !a.valid_reshape(sq, 2)) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "valid_transpose or valid_reshape is wrong");
    return;
  }
  const uint32_t bad[2] = {4, 5};
  if (a.valid_reshape(bad, 2)) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "valid_reshape({4, 5})");
  // s < 0: a slice past the edge fails the launch.
  const uint32_t end = args.scalar<float>(0) < 0 ? 5 : 4;

  // Even columns: o1 = a + b; odd columns: o1 = a * b.
  CoreTaskArgs even;
  even.add_input(a.slice(1, 0, 4, 2), b.slice(1, 0, 4, 2));
  even.add_output(o1.slice(1, 0, 4, 2));
  rt_submit_aiv_task(K_ADD, even);
  CoreTaskArgs odd;
  odd.add_input(a.slice(1, 1, end, 2), b.slice(1, 1, 4, 2));
  odd.add_output(o1.slice(1, 1, 4, 2));
  rt_submit_aiv_task(K_MUL, odd);
  // o2 = a transposed, through permute.
  const uint32_t order[2] = {1, 0};
  CoreTaskArgs t;
  t.add_input(a.permute(order));
  t.add_output(o2);
  t.add_scalar(0.0f);
  rt_submit_aiv_task(K_ADD_SCALAR, t);
}
