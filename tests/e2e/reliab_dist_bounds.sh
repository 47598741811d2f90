#!/usr/bin/env bash
# Window ops are bounds-checked against their own dtensor (issue #34 item 3): a runtime offset
# past the end of a window used to reach the next window of the same rank (dist.notify wrote
# into it, exit 0). Now it is a launch error naming the rank, the op, the window and the offset;
# offsets inside the window still run and pass --check.
source "$(dirname "$0")/lib/common.bash"

cat >"$T/poke.ptir" <<'PTIR'
program win_bounds
kernel @poke(inout %sig: dtensor[1, 8] i32, %k: index, %row: index, %x: tensor[1, 8] f32,
             inout %buf: dtensor[2, 8] f32) -> (dtensor[1, 8] i32, dtensor[2, 8] f32) {
  %me = dist.rank(%sig)
  %s1 = dist.notify(%sig, %me, [0, %k], 1, op=set)
  %t = tile.load(%x, [0, 0], [1, 8])
  %b1 = dist.remote_store(%t, %buf, %me, [%row, 0])
  return %s1, %b1
}
orch @step(inout %sig: dtensor[1, 8] i32, %k: index, %row: index, %x: tensor[1, 8] f32,
           inout %buf: dtensor[2, 8] f32) -> (dtensor[1, 8] i32, dtensor[2, 8] f32) {
  %s, %b = call @poke(%sig, %k, %row, %x, %buf)
  return %s, %b
}
host @main(%x: tensor[1, 8] f32, %k: index = runtime, %row: index = runtime) {
  %n = dist.world_size()
  %wsig = dist.alloc_window([1, 8], i32)
  %wnext = dist.alloc_window([1, 8], i32)
  %wbuf = dist.alloc_window([2, 8], f32)
  %sig = dist.window(%wsig)
  %buf = dist.window(%wbuf)
  for %r in range(0, %n) {
    call @step(%sig, %k, %row, %x, %buf) device=%r
  }
}
PTIR

run_limited() { OUT=$(timeout 120 "$PTO" "$@" 2>&1); }
run_limited run "$T/poke.ptir" --devices 2 --in k=7 --in row=1 --check
expect_true "in range: exit 0, got $?" test "$?" = 0
expect_out PASS
run_limited run "$T/poke.ptir" --devices 2 --in k=8 --in row=0
expect_true "notify past the window: exit 1, got $?" test "$?" = 1
expect_out "dist.notify on rank 0: offset 8 of dim 1 is outside the extent 8 of window %wsig (the kernel's tensor argument 0)"
run_limited run "$T/poke.ptir" --devices 2 --in k=-1 --in row=0
expect_true "notify before the window: exit 1, got $?" test "$?" = 1
expect_out "dist.notify on rank 0: offset -1 of dim 1 is outside the extent 8"
run_limited run "$T/poke.ptir" --devices 2 --in k=1 --in row=-1
expect_true "remote_store before the window: exit 1, got $?" test "$?" = 1
expect_out "dist.remote_store on rank 0: offset -1 of dim 0 of window %wbuf (the kernel's tensor argument 2) is negative"

# A rank beyond int32 (a broadcast root, a peer) is out of range, as the interpreter says: it
# used to be truncated to 32 bits, so root 2^32 + 1 broadcast rank 1's window with exit 0.
COLL="$PTO_SOURCE_DIR/tests/programs/dist_collectives.ptir"
for root in 4294967296 4294967297; do
  run_limited run "$COLL" --devices 2 --dim M=16 --in root=$root
  expect_true "broadcast root $root: exit 1, got $?" test "$?" = 1
  expect_out "broadcast root 2147483647 (or beyond) is out of range (0 to 1)"
done
run_limited run "$COLL" --devices 2 --dim M=16 --in root=-4294967295
expect_out "broadcast root -2147483648 (or beyond) is out of range (0 to 1)"
sed 's/dist.notify(%sig, %me,/dist.notify(%sig, %row,/' "$T/poke.ptir" >"$T/peer.ptir"
run_limited run "$T/peer.ptir" --devices 2 --in k=0 --in row=4294967297
expect_true "notify peer 2^32 + 1: exit 1, got $?" test "$?" = 1
expect_out "peer 2147483647 (or beyond) is out of range (0 to 1)"

# Collectives that do not match across ranks (rank 0 a broadcast while rank 1 gathers on the
# same signal window) fail the run, naming both, as the interpreter does (--check runs both): the
# compiled run used to finish with exit 0 and garbage in the window. (Not an allreduce: on a host
# with fewer CPUs than ranks a small one takes another path, checked only against allreduces.)
cat >"$T/mismatch.ptir" <<'PTIR'
program cm
kernel @k(inout %w: dtensor[8, 4] f32, inout %s: dtensor[1, 4] i32, %same: index)
    -> (dtensor[8, 4] f32, dtensor[1, 4] i32) {
  %me = dist.rank(%s)
  if %me == 0 {
    dist.broadcast(%w, %s, 0)
  } else {
    if %same == 1 {
      dist.broadcast(%w, %s, 0)
    } else {
      dist.allgather(%w, %s)
    }
  }
  return %w, %s
}
orch @o(inout %w: dtensor[8, 4] f32, inout %s: dtensor[1, 4] i32, %same: index)
    -> (dtensor[8, 4] f32, dtensor[1, 4] i32) {
  %a, %b = call @k(%w, %s, %same)
  return %a, %b
}
host @main(%same: index = runtime) {
  %ww = dist.alloc_window([8, 4], f32)
  %ws = dist.alloc_window([1, 4], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  %n = dist.world_size()
  for %r in range(0, %n) {
    call @o(%w, %s, %same) device=%r
  }
}
PTIR
run_limited run "$T/mismatch.ptir" --devices 2 --in same=1 --check
expect_true "matching collectives: exit 0, got $?" test "$?" = 0
expect_out PASS
run_limited run "$T/mismatch.ptir" --devices 2 --in same=0
expect_true "mismatched collectives: exit 1, got $?" test "$?" = 1
expect_out "rank 1: dist.allgather of 32 f32 elements does not match rank 0's dist.broadcast (root 0) of 32 f32 elements on the same signal window %ws (every rank"

# Rank 0 a small mode=mesh allreduce, rank 1 a ring one: where ranks outnumber the CPUs the mesh
# one is gathered (each rank waits once, for the last to arrive) while the ring starts with a
# barrier, so neither reaches the check after the barrier and both waited out the deadline (a
# timeout naming a signal element). Each now finds the other waiting in the same collective with
# another mode and fails naming both, long before the deadline; where each rank has a CPU both
# take the barrier and the check after it names them alike.
CM="$PTO_SOURCE_DIR/tests/e2e/data/coll_mismatch.ptir"
run_limited run "$CM" --devices 4 --in case=0 --check
expect_true "matching allreduces: exit 0, got $?" test "$?" = 0
expect_out PASS
PTO_DIST_TIMEOUT_MS=60000 run_limited run "$CM" --devices 4 --in case=1
expect_true "mesh against ring: exit 1, got $?" test "$?" = 1
expect_out "dist.allreduce (sum) of 32 f32 elements does not match rank "
expect_out "dist.allreduce (sum) of 32 f32 elements (another mode) on the same signal window %sw"
expect_true "no wait timed out (mesh against ring)" test "${OUT/timed out/}" = "$OUT"

# A host function that fails after posting a call (the slice for device 1 starts past the end of
# x) reports its own error first, and the posted call's dist.wait fails at once, naming the host,
# instead of timing out (PTO_DIST_TIMEOUT_MS) and hiding the cause.
start=$(date +%s)
PTO_DIST_TIMEOUT_MS=60000 run_limited run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=32
expect_true "host failure: exit 1, got $?" test "$?" = 1
expect_true "host failure reported before the wait's deadline" test $(($(date +%s) - start)) -lt 50
expect_out "host @main: tensor.slice: offset 32 of dim 0 is outside the extent 32; then rank 0"
expect_out "dist.wait aborted because the host function failed"
finish
