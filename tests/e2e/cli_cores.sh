#!/usr/bin/env bash
# pto run / pto bench --strict-cores: the default worker has a thread per CPU, an AIC core and
# two AIV cores per thread; --strict-cores keeps the chip's model (the CPUs split a third
# AIC, a thread per core). A host program's chips take their cores from the distributed worker,
# so there the flag is refused with the reason.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
N=$(nproc)
AIC=$((N / 3 > 0 ? N / 3 : 1))
AIV=$((N - AIC > 0 ? N - AIC : 1))
SHARED=$((3 * N))
ADD=("$EX/runtime/add_scalar.ptir" --in c=2.5)

run_pto 0 run "${ADD[@]}" --check && expect_out "on sim ($SHARED cores)" && expect_out "PASS"
run_pto 0 run "${ADD[@]}" --check --strict-cores && expect_out "on sim ($((AIC + AIV)) cores)" &&
  expect_out "PASS"
run_pto 0 bench "${ADD[@]}" --rounds 3 --warmup 0 --strict-cores &&
  expect_out "3 launches after 0 warmup"
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --strict-cores &&
  expect_out "--strict-cores sets up an L2 program's worker"
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --strict-cores &&
  expect_out "--strict-cores sets up an L2 program's worker"
finish
