// set_allow_early_resolve on a producer: its consumer is staged on a core while it runs.
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD_SCALAR 1
#define K_SLOW_ADD 6

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &o1 = args.tensor(2).ref();
  const bool early = args.scalar<float>(0) == 1.0f;

  PTO2_SCOPE() {
    // t = a + b, slowly (the test holds it until its consumer waits); the flag lets its
    // consumers be staged while it runs.
    uint32_t shape[1] = {static_cast<uint32_t>(a.shapes[0])};
    CoreTaskArgs produce;
    produce.add_input(a, b);
    produce.add_output(TensorCreateInfo(shape, 1, DataType::FLOAT32));
    produce.set_allow_early_resolve(early);
    TaskOutputTensors made = rt_submit_aiv_task(K_SLOW_ADD, produce);
    if (made.empty()) return;
    const ChipTensor &t = made.get_ref(0);
    // o1 = t + 0.5: waits for the producer, on a core taken before it ends when early.
    CoreTaskArgs consume;
    consume.add_input(t);
    consume.add_output(o1);
    consume.add_scalar(0.5f);
    rt_submit_aiv_task(K_ADD_SCALAR, consume);
  }
}
