#!/usr/bin/env bash
# pto run on the examples, compared with the reference interpreter.
source "$(dirname "$0")/lib/common.bash"

for m in 1 31 32 100 257; do
  run_pto 0 run "$EX/add.ptir" --dim M=$m --check && expect_out PASS
done
run_pto 0 run "$EX/chain.ptir" --dim M=100 --in alpha=0.5 --check && expect_out "y: [100,64] f32"
run_pto 0 run "$EX/chain.ptir" --dim M=16 --in alpha=-2 --in x=random:7 --in b=ones --check && expect_out PASS

# Outputs written as .npy and fed back as inputs.
run_pto 0 run "$EX/add.ptir" --dim M=40 --in a=ones --in b=ones --out c="$T/c.npy"
expect_true "c.npy written" test -s "$T/c.npy"
run_pto 0 run "$EX/add.ptir" --in a="$T/c.npy" --in b="$T/c.npy" --out c="$T/c4.npy" --check && expect_out "c: [40,128] f32"

# The trace is [STRACE] v=1 lines.
run_pto 0 run "$EX/add.ptir" --dim M=64 --trace && expect_out "[STRACE] v=1 pid=" && expect_out "name=chip.run.runner_run.device_wall"
finish
