// Mixed AIC/AIV tasks, SPMD blocks sized on the core counts, dispatch predicates, dump marks.
#include <cstdint>

#include "pto/pto_orchestration_api.h"

#define K_ADD_SCALAR 1
#define K_CUBE_DOUBLE 3
#define K_VEC_INC 4
#define K_BLOCK_MARK 5
#define K_SLOW_ADD 6
#define K_MEET_AIC 7
#define K_MEET_AIV 8

extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig
aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(
    const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &o1 = args.tensor(2).ref();
  const ChipTensor &o2 = args.tensor(3).ref();
  const float mode = args.scalar<float>(0);
  const int32_t clusters = rt_available_cluster_count();
  const int32_t aiv = rt_available_aiv_count();
  if (clusters != 2 || aiv != 4)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "%d clusters, %d AIV cores", clusters, aiv);

  if (mode == -1.0f) {  // a sync-start launch wider than the AIV cores
    CoreTaskArgs wide;
    wide.add_inout(o2);
    wide.launch_spec.set_block_num(aiv + 1);
    wide.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(K_BLOCK_MARK, wide);
    return;
  }
  if (mode == -3.0f) {  // a sync-start launch of every AIV core while one of them is busy
    CoreTaskArgs slow;
    slow.add_input(a, args.tensor(1).ref());
    slow.add_output(o1);
    rt_submit_aiv_task(K_SLOW_ADD, slow);
    CoreTaskArgs gang;
    gang.add_inout(o2);
    gang.launch_spec.set_block_num(aiv);
    gang.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(K_BLOCK_MARK, gang);
    return;
  }
  if (mode == -2.0f) {  // a cube kernel submitted as a vector task
    CoreTaskArgs wrong;
    wrong.add_input(a);
    wrong.add_output(o1);
    rt_submit_aiv_task(K_CUBE_DOUBLE, wrong);
    return;
  }

  PTO2_SCOPE() {
    // One task of two kernels side by side: the first half of o1 = 2a (cube), the second
    // a + 1 (vector); they meet (2 kernels) before writing.
    CoreTaskArgs mix;
    mix.add_input(a);
    mix.add_output(o1);
    mix.add_scalar(int64_t{2});
    mix.dump(a);
    if (mix.dump_arg_mask() != 1u) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "dump mask");
    mix.dump();
    if (mix.dump_arg_mask() != 7u) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "dump all");
    const MixedKernels mk{K_MEET_AIC, K_MEET_AIV, INVALID_KERNEL_ID};
    TaskOutputTensors m = rt_submit_task(mk, mix);
    if (!m.task_id().is_valid()) return;

    // o2[i] = i + 1 for each of the blocks, after the mixed task (a dependency it keeps).
    CoreTaskArgsWithDeps<4> spmd;
    spmd.add_dep(m.task_id());
    spmd.add_inout(o2);
    spmd.launch_spec.set_block_num(std::min(aiv, 14));
    spmd.launch_spec.set_require_sync_start(true);
    rt_submit_aiv_task(K_BLOCK_MARK, spmd);

    // Two predicated tasks on a[1] (== 1): the first runs, the second is retired unrun.
    uint32_t shape[1] = {static_cast<uint32_t>(a.shapes[0])};
    TensorCreateInfo p_info(shape, 1, DataType::FLOAT32);
    p_info.set_initial_value(-7.0f);
    CoreTaskPredicate is_one;
    is_one.operand.tensor = &a;
    is_one.operand.ndims = 1;
    is_one.operand.indices[0] = 1;
    is_one.op = PredicateOp::EQ;
    is_one.target = 1;
    CoreTaskArgs run;
    run.add_input(a);
    run.add_output(p_info);
    run.add_scalar(100.0f);
    run.set_predicate(is_one);
    TaskOutputTensors ran = rt_submit_aiv_task(K_ADD_SCALAR, run);
    CoreTaskPredicate negative = is_one;
    negative.op = PredicateOp::LT;
    negative.target = 0;
    CoreTaskArgs skip;
    skip.add_input(a);
    skip.add_output(p_info);
    skip.add_scalar(100.0f);
    skip.set_predicate(negative);
    TaskOutputTensors skipped = rt_submit_aiv_task(K_ADD_SCALAR, skip);
    const ChipTensor &p1 = ran.get_ref(0);
    const ChipTensor &p2 = skipped.get_ref(0);
    uint32_t i0[1] = {0};
    uint32_t i15[1] = {15};
    const float r = get_tensor_data<float>(p1, 1, i0) + get_tensor_data<float>(p2, 1, i0);
    set_tensor_data(o2, 1, i15, r);  // 100 + -7
  }
}
