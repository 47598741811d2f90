#!/usr/bin/env bash
# The reference runtime's own orchestration sources, the way a user runs hand-written
# orchestration with pto: compile a PTIR program whose kernels compute what the example's kernels
# do (tests/e2e/data/simpler_*.ptir), put the example's source in the work dir in place of the
# emitted one (it includes "pto_orchestration_api.h" by its bare name), pto rebuild (with
# --orch-entry when its entry has another name), and pto run --check: the outputs must match the
# reference interpreter's run of the PTIR program. Needs PTO_SIMPLER_DIR, a checkout of
# hw-native-sys/simpler (read in place, nothing copied); skipped (77) without it.
source "$(dirname "$0")/lib/common.bash"
if [ -z "${PTO_SIMPLER_DIR:-}" ] || [ ! -d "$PTO_SIMPLER_DIR/examples" ]; then
  echo "skipped: PTO_SIMPLER_DIR does not name a checkout of the reference runtime"
  exit 77
fi
export PTO_CACHE_DIR="$T/cache"
DATA="$PTO_SOURCE_DIR/tests/e2e/data"
ORCH=kernels/orchestration

# vector_example of both chip generations: five tasks in two scopes.
for gen in a2a3 a5; do
  W="$T/vector_example_$gen"
  run_pto 0 compile "$DATA/simpler_vector_example.ptir" -o "$W"
  cp "$PTO_SIMPLER_DIR/examples/$gen/tensormap_and_ringbuffer/vector_example/$ORCH/example_orchestration.cpp" \
    "$W/orchestration/main.cpp"
  run_pto 0 rebuild "$W"
  expect_out "rebuilt 1 file"
  run_pto 0 run "$W" --in a=random:1 --in b=random:2 --check
  expect_out ": 5 tasks,"
  expect_out PASS
done

# workers/l2/vector_add: its entry is vector_add_orchestration, its config function
# vector_add_orchestration_config.
W="$T/vector_add"
run_pto 0 compile "$DATA/simpler_vector_add.ptir" -o "$W"
cp "$PTO_SIMPLER_DIR/examples/workers/l2/vector_add/$ORCH/vector_add_orch.cpp" "$W/orchestration/main.cpp"
run_pto 2 run "$W" --check
expect_out "no 'aicpu_orchestration_entry' symbol"
run_pto 0 rebuild "$W" --orch-entry vector_add_orchestration
run_pto 0 run "$W" --check
expect_out ": 1 task,"
expect_out PASS
finish
