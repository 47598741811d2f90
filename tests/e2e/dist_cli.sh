#!/usr/bin/env bash
# The distributed (L3) level from the command line (issue #17): pto run --devices runs a host
# program on one chip process per device and --check compares it with the interpreter's
# simulated ranks (2, 3, 4 and 8 ranks; a subset and a permutation of device ids); --trace
# writes every chip's spans with rank=; pto bench gives the L3 views (text, --json, one
# dispatch's tree); a wait that no rank satisfies fails within the timeout naming the rank, the
# window and the offsets; misuse is exit 2 with the reason.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
P="$EX/allreduce_mesh.ptir"

for n in 2 3 4 8; do
  run_pto 0 run "$P" --devices $n --dim M=$((32 * n)) --check && expect_out "PASS"
  expect_out "ran host @main on sim: $n devices"
done
run_pto 0 run "$P" --devices 2,3 --dim M=64 --check && expect_out "2 devices (2,3)"
run_pto 0 run "$P" --devices 3,1,0 --dim M=96 --check && expect_out "3 devices (3,1,0)"

# Transports: shm is the default; mpi needs a build with -DPTO_MPI=ON (tests/mpi in that build).
run_pto 0 run "$P" --devices 2 --dim M=64 --transport shm && expect_out "ran host @main on sim: 2 devices"
run_pto 2 run "$P" --devices 2 --dim M=64 --transport tcp && expect_out "the transports are shm"
PTO_DIST_TRANSPORT=bogus run_pto 2 run "$P" --devices 2 --dim M=64 && expect_out "unknown transport 'bogus'"
run_pto 0 --version && expect_out "distributed transports: shm"
if ! grep -qF "shm, mpi" <<<"$OUT"; then
  # Bad usage (2), refused before anything runs, as an unknown transport is.
  run_pto 2 run "$P" --devices 2 --dim M=64 --transport mpi && expect_out "transport 'mpi' is not in this build (configure pto with -DPTO_MPI=ON"
  run_pto 2 bench "$P" --devices 2 --dim M=64 --transport mpi && expect_out "transport 'mpi' is not in this build"
  # The same transport named by the environment is the same configuration error (2).
  PTO_DIST_TRANSPORT=mpi run_pto 2 run "$P" --devices 2 --dim M=64 &&
    expect_out "PTO_DIST_TRANSPORT is 'mpi': transport 'mpi' is not in this build"
  PTO_DIST_TRANSPORT=mpi run_pto 2 bench "$P" --devices 2 --dim M=64 --rounds 1 --warmup 0 &&
    expect_out "PTO_DIST_TRANSPORT is 'mpi'"
fi
OMPI_COMM_WORLD_SIZE=2 run_pto 0 run "$P" --devices 2 --dim M=64 && expect_out "pass --transport mpi for one chip per rank"

# Every chip writes its spans with its rank; pto trace reads the log.
OUT=$("$PTO" run "$P" --devices 2 --dim M=64 --trace 2>"$T/trace.log")
expect_true "rank 0's spans" grep -q 'name=chip.run .*rank=0' "$T/trace.log"
expect_true "rank 1's spans" grep -q 'name=chip.run .*rank=1' "$T/trace.log"
run_pto 0 trace "$T/trace.log" && expect_out "device wall"
# The host's spans carry the reference's node-level names (its tools keep them out of the
# per-launch views): the host function's run with host.so's hid, one node.dispatch per call.
expect_true "the host function: node.graph_build with a hid" \
  grep -qE 'hid=0*[1-9a-f][0-9a-f]* depth=0 name=node.graph_build .*role=facade l3=1' "$T/trace.log"
expect_true "each call: node.dispatch" grep -q 'name=node.dispatch .*worker_id=1 role=scheduler' "$T/trace.log"
expect_true "no span named host.*" sh -c "! grep -q 'name=host[.]' '$T/trace.log'"

# pto bench: the L3 views.
run_pto 0 bench "$P" --devices 2 --dim M=64 --rounds 5 --warmup 1
expect_out "per_round"
expect_out "rank 1 slot 0 @step"
run_pto 0 bench "$P" --devices 2 --dim M=64 --rounds 3 --warmup 0 --json
for k in per_round per_rank per_dispatch dispatch_tasks rounds_dispatches \
  unstable_dispatch_slots fallback_flattened dispatch_groups; do
  expect_out "\"$k\""
done
run_pto 0 bench "$P" --devices 2 --dim M=64 --rounds 3 --tree --rank 1 && expect_out "device_wall"
run_pto 2 bench "$P" --devices 2 --dim M=64 --rounds 3 --tree && expect_out "choose it with --rank"
run_pto 0 bench "$P" --devices 2 --dim M=64 --rounds 3 --tree --slot 0 --rank 0 && expect_out "mean tree of rank 0 slot 0"

# pto trace reads the log of a benchmark into the same L3 views, with the same numbers.
PTO_LOG_LEVEL=timing "$PTO" bench "$P" --devices 2 --dim M=64 --rounds 6 --warmup 2 >"$T/bench.txt" 2>"$T/l3.log"
run_pto 0 trace "$T/l3.log" --warmup 2 && expect_out "distributed runs"
expect_true "bench and trace agree on every view" \
  diff <(sed -n '/^6 rounds/,$p' "$T/bench.txt") <(sed -n '/^6 rounds/,$p' <<<"$OUT")
run_pto 0 trace "$T/l3.log" --warmup 2 --json && expect_out '"per_dispatch"'
expect_out '"host_function"'
# A log of an older pto (host.run, host.dispatch) reads the same.
sed 's/name=node[.]graph_build/name=host.run/; s/name=node[.]dispatch/name=host.dispatch/' \
  "$T/l3.log" >"$T/old.log"
NEW=$OUT
run_pto 0 trace "$T/old.log" --warmup 2 --json
expect_true "an older log gives the same views" test "$NEW" = "$OUT"
run_pto 2 trace "$T/l3.log" --warmup 8 && expect_out "no L3 runs to measure"
# One dispatch's mean tree from the log, chosen by rank or by the chip's pid; never averaged
# over different dispatches.
run_pto 0 trace "$T/l3.log" --warmup 2 --tree --rank 1 && expect_out "mean tree of rank 1 slot 0 @step"
pid1=$(sed -n 's/.*rank 1 slot 0 @step (pid \([0-9]*\)).*/\1/p' <<<"$OUT")
expect_true "the tree names the chip's pid" test -n "$pid1"
if [ "${PTO_DIST_CHIPS:-processes}" = threads ]; then
  # Every chip is a thread of one process: its pid names both ranks, and --pid alone is refused;
  # --rank R chooses instead ([--rank R | --pid P]: one of them, so both together are refused).
  run_pto 2 trace "$T/l3.log" --warmup 2 --tree --pid "$pid1" &&
    expect_out "--pid $pid1 names 2 ranks' dispatches (their chips are threads of one process): choose one with --rank R instead"
  run_pto 2 trace "$T/l3.log" --warmup 2 --tree --pid "$pid1" --rank 1 &&
    expect_out "--rank 1 and --pid $pid1: a dispatch is chosen by its rank or by its chip's pid, not both"
  run_pto 0 trace "$T/l3.log" --warmup 2 --tree --rank 1 &&
    expect_out "mean tree of rank 1 slot 0 @step (pid $pid1)"
else
  run_pto 0 trace "$T/l3.log" --warmup 2 --tree --pid "$pid1" && expect_out "mean tree of rank 1 slot 0 @step (pid $pid1)"
fi
expect_out "device_wall"
run_pto 2 trace "$T/l3.log" --warmup 2 --tree && expect_out "choose it with --rank R or --pid P"
run_pto 2 trace "$T/l3.log" --warmup 2 --tree --pid 1 && expect_out "no dispatch matches --pid 1 --slot 0; the dispatches of a round: rank 0 slot 0"

# A wait that no rank can satisfy: rank 1 waits for a signal nobody sends. The message names the
# deadline it honoured (no wall-clock bound here: a loaded host took 11.9 s to start and fail)
# and the window as the host program wrote it (%w), as the interpreter does: it printed the
# window's slot ("window 0").
PTO_DIST_TIMEOUT_MS=300 run_pto 1 run "$PTO_SOURCE_DIR/tests/e2e/data/stuck_wait.ptir" --devices 2
expect_out "rank 1: dist.wait timed out after 300 ms on window %w at offsets [0, 5]: expected == 7, current value 0"
# The shortest deadline, 1 ms, is honoured too (the transport's own bound: test_runtime_dist_shm).
# At 1 ms the stuck-chip check (same deadline) may fire first on a loaded host: either names it.
PTO_DIST_TIMEOUT_MS=1 run_pto 1 run "$PTO_SOURCE_DIR/tests/e2e/data/stuck_wait.ptir" --devices 2
if grep -qF "has made no progress for 1 ms" <<<"$OUT"; then
  expect_out "(PTO_DIST_TIMEOUT_MS"
else
  expect_out "rank 1: dist.wait timed out after 1 ms on window %w at offsets [0, 5]"
fi

# One window passed as both the data and the signal window of an allreduce: the compiled run
# refused it as the interpreter does (it ran, overwriting its signals with the data).
PTO_DIST_TIMEOUT_MS=5000 run_pto 1 run "$PTO_SOURCE_DIR/tests/e2e/data/signal_is_data.ptir" --devices 2 --dim M=2 &&
  expect_out "rank 0: dist.allreduce (sum) of 16 i32 elements: the signal window is the data window" &&
  expect_out "rank 1: dist.allreduce (sum) of 16 i32 elements: the signal window is the data window"

# The first error wins (issue #28 item 2): rank 1's orch fails while rank 0 waits for its
# notify. The run reports rank 1's error, with its op and source line (the callees' position
# tables are written into the copies the chips load), and rank 0's wait ends at
# once, "aborted because rank 1 failed", instead of waiting out its 20 s deadline.
FE="$PTO_SOURCE_DIR/tests/e2e/data/first_error.ptir"
PTO_DIST_TIMEOUT_MS=20000 run_pto 1 run "$FE" --devices 2 --in z=0 &&
  expect_out "pto run: rank 1 (pid " && expect_out "@fail_side: launch of 'fail_side': " &&
  expect_out "first_error.ptir:25:3: %q =: orchestration: reported a fatal error (code 1): integer division by zero; then rank 0 (pid " &&
  expect_out "rank 0: dist.wait aborted because rank 1 failed"
expect_true "no wait timed out" test "${OUT/timed out/}" = "$OUT"
run_pto 0 run "$FE" --devices 2 --in z=1 --check && expect_out PASS
# The same from a work dir (issue #28): compile -o DIR writes each callee's position table into
# DIR/callees/<orch>/ (recorded in DIR/compiled.xxh128 as pto's), so `pto run DIR` names the line.
run_pto 0 compile "$FE" --devices 2 -o "$T/fe" &&
  expect_true "the callee's table" test -f "$T/fe/callees/fail_side/positions.json" &&
  expect_true "recorded as pto's" grep -q '  callees/fail_side/positions.json$' "$T/fe/compiled.xxh128"
PTO_DIST_TIMEOUT_MS=20000 run_pto 1 run "$T/fe" --in z=0 &&
  expect_out "first_error.ptir:25:3: %q =: orchestration: reported a fatal error (code 1): integer division by zero; then rank 0 (pid "
run_pto 0 compile "$FE" --devices 2 -o "$T/fe" # a recompile into it: every file is pto's

# A zero divisor in host code fails the run, naming the host function.
run_pto 1 run "$PTO_SOURCE_DIR/tests/programs/host_div.ptir" --devices 1 --in a=7 --in b=0 &&
  expect_out "host @main: integer division by zero"

# Misuse.
run_pto 2 run "$EX/add.ptir" --devices 2 && expect_out "--devices applies to programs with a host entry"
run_pto 2 run "$P" --devices 2,2 && expect_out "device id 2 appears twice"
run_pto 2 run "$P" --devices 2 --dim M=64 --swimlane "$T/s.json"
finish
