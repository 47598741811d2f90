#!/usr/bin/env bash
# An orchestration that submits without end (a loop of 2^62 calls) fails its launch with a
# message naming the bound, once its tasks' records reach the device memory size (at least
# 1 GiB, some 1.8 million tasks): every task of a launch is kept until the launch ends, so such
# a loop grew the host's memory by some 36 MB a second until the system killed the process
# (under `ulimit -v` it ended in a bare "out of memory submitting kernel 'k'" after 40 s).
source "$(dirname "$0")/lib/common.bash"
if [ -n "$PTO_SANFLAGS" ]; then # ASan's shadow memory cannot live under ulimit -v
  echo "SKIP: the address-space limit this test runs pto under does not fit $PTO_SANFLAGS"
  exit 77
fi
export PTO_CACHE_DIR="$T/cache"
cd "$T" || exit 1

cat >loop.ptir <<'PTIR'
program loop
kernel @k(%a: tensor[1,16] f32, out %c: tensor[1,16] f32) -> (tensor[1,16] f32) {
  %t = tile.load(%a, [0, 0], [1, 16])
  %c1 = tile.store(%t, [0, 0], %c)
  return %c1
}
orch @main(%a: tensor[1,16] f32, out %c: tensor[1,16] f32) -> (tensor[1,16] f32) {
  for %i in range(0, 4611686018427387904) {
    call @k(%a, %c)
  }
  return %c
}
PTIR
run_pto 0 compile loop.ptir -o w
# 4 GB of address space: the 1 GiB device arena, the records, and room to spare; a pto that kept
# submitting would run out of it rather than the host's memory.
run_status 1 bash -c 'ulimit -v 4000000 && exec timeout 300 "$0" run w' "$PTO"
expect_out "call @k: orchestration: submit of kernel 'k': too many tasks in one launch: its "
expect_out "the most a launch may hold (1073741824: the device memory size, at least 1 GiB)"
expect_out "split the work into several launches, or raise pto_run_config.device_memory_bytes"

finish
