// A scratch arena in the style of PyPTO's generated decode orchestration: intermediates carved
// out of one allocation, sized with TensorCreateInfo::buffer_size_bytes, bounds checked with
// always_assert and debug_assert.
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD 0
#define K_ADD_SCALAR 1
#define K_MUL 2

namespace {

// Hands out row-major views of one f32 tensor, each at an element offset aligned to 8.
class Arena {
public:
  explicit Arena(const ChipTensor &storage) : storage_(storage) {}

  ChipTensor allocate(const TensorCreateInfo &ci) {
    always_assert(ci.dtype == storage_.dtype);
    const uint64_t elements = ci.buffer_size_bytes() / storage_.element_size();
    cursor_ = (cursor_ + 7) / 8 * 8;
    always_assert(cursor_ + elements <= static_cast<uint64_t>(storage_.numel()));
    uint32_t offset[1] = {static_cast<uint32_t>(cursor_)};
    uint32_t shape[1] = {static_cast<uint32_t>(elements)};
    cursor_ += elements;
    return storage_.view(shape, offset);
  }

private:
  const ChipTensor &storage_;
  uint64_t cursor_{0};
};

} // namespace

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &o1 = args.tensor(2).ref();
  const ChipTensor &o2 = args.tensor(3).ref();
  const float s = args.scalar<float>(0);

  uint32_t n[1] = {a.shapes[0]};
  const TensorCreateInfo ci(n, 1, DataType::FLOAT32);
  debug_assert(ci.buffer_size_bytes() == 4u * a.shapes[0]);
  // Room for two intermediates, or (s < 0) for one only: the second allocate's assertion fails.
  uint32_t room[1] = {s < 0 ? a.shapes[0] : 2 * a.shapes[0] + 8};
  TaskOutputTensors made = alloc_tensors(TensorCreateInfo(room, 1, DataType::FLOAT32));
  const ChipTensor &storage = made.get_ref(0);
  Arena arena(storage);
  const ChipTensor t = arena.allocate(ci); // a + b
  const ChipTensor u = arena.allocate(ci); // (a + b) * b
  // After a failed assertion the orchestration goes on, and every submit below is ignored.
  CoreTaskArgs sum;
  sum.add_input(a, b);
  sum.add_output(t);
  rt_submit_aiv_task(K_ADD, sum);
  CoreTaskArgs prod;
  prod.add_input(t, b);
  prod.add_output(u);
  rt_submit_aiv_task(K_MUL, prod);
  CoreTaskArgs copy1;
  copy1.add_input(t);
  copy1.add_output(o1);
  copy1.add_scalar(0.0f);
  rt_submit_aiv_task(K_ADD_SCALAR, copy1); // o1 = a + b
  CoreTaskArgs copy2;
  copy2.add_input(u);
  copy2.add_output(o2);
  copy2.add_scalar(0.0f);
  rt_submit_aiv_task(K_ADD_SCALAR, copy2); // o2 = (a + b) * b
}
