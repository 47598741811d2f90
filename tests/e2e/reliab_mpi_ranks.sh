#!/usr/bin/env bash
# Ranks of one MPI job that do not match, or stop (the MPI transport, docs/cli.md --transport):
# - ranks that open the worker for different device sets (rank 1 given --devices 3 in a 2-rank
#   job) fail together at the first agreement, every rank naming rank 1 and both counts; rank 1
#   used to fail alone after it, and wait 10 s for rank 0 (which waited for its hello) before
#   saying that rank 0 "failed or stopped";
# - ranks with different host heaps (Python's shared_heap_bytes) fail together there too, where
#   rank 0 alone used to refuse at rank 1's hello while rank 1 reported its worker opened;
# - a rank of another pto release or build (the test build's PTO_DIST_TEST_MPI_RELEASE) is
#   refused by every rank at the first agreement, naming both releases: the commands the ranks
#   exchange are raw structs, which another build would misread; nothing checked it;
# - a rank that stops during a run (SIGSTOP, a debugger: the test build's
#   PTO_DIST_TEST_MPI_SKIP=1:stop-at-run) used to leave rank 0 waiting for its answer for ever
#   (no deadline under MPI); each rank now sends rank 0 a beat every 100 ms while it serves,
#   and rank 0 fails the run naming the rank once none came for the wait deadline
#   (PTO_DIST_TIMEOUT_MS, at least 2 s), then mpirun ends the job;
# - PTO_DIST_TRANSPORT=mpi runs say "over mpi" as --transport mpi ones do.
# Every mpirun runs under `timeout`, on loopback. Skipped when pto has no MPI transport.
source "$(dirname "$0")/lib/common.bash"
: "${PTO_TEST:?}"
grep -q 'transports: .*mpi' <<<"$("$PTO" --version)" || {
  echo "SKIP: this pto has no MPI transport (-DPTO_MPI=ON)"
  exit 77
}
command -v mpirun >/dev/null || {
  echo "SKIP: no mpirun"
  exit 77
}
export PTO_CACHE_DIR
# Tests only: CI containers run as root, which mpirun refuses without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(timeout 120 mpirun --oversubscribe --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
  -x PTO_CACHE_DIR)
P="$EX/allreduce_mesh.ptir"
no_hang() { ! grep -q "did not arrive" <<<"$OUT"; }
not_opened() { ! grep -q "^rank [0-9] opened" <<<"$OUT"; }

# Rank 1 opens for 3 devices, rank 0 for 2: every rank fails at the first agreement with one
# message (exit 1, as for ranks that pass different window settings, tests/mpi/l3.sh).
run_status 1 "${MPIRUN[@]}" -np 1 "$PTO" run "$P" --devices 2 --dim M=64 --transport mpi : \
  -np 1 "$PTO" run "$P" --devices 3 --dim M=96 --transport mpi &&
  expect_out "MPI rank 1 opened its worker for 3 devices, rank 0 for 2: every rank must run the same program on the same device set"
expect_true "no rank waited for another" no_hang

# Ranks that open with different host heaps (the Python package's shared_heap_bytes): rank 0
# alone found it, at rank 1's hello, while rank 1 went on as if opened (its script printed
# "opened"); now every rank fails at the first agreement. Needs the build's Python package and
# a python3 with numpy; not in sanitizer builds (pto's libraries in an uninstrumented python3).
PYDIR=$(cd "$(dirname "$PTO")/.." && pwd)/python
if [ -z "$PTO_SANFLAGS" ] && [ -f "$PYDIR/pto/__init__.py" ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  cat >"$T/heap.py" <<'PY'
import os, sys
import pto
r = int(os.environ["OMPI_COMM_WORLD_RANK"])
def say(line):  # also into a file of the rank's own: mpirun may interleave the two ranks' lines
    with open("%s.%d" % (os.environ["HEAP_OUT"], r), "a") as f:
        f.write(line + "\n")
    print(line, flush=True)
try:
    w = pto.DistributedWorker(devices=2, transport="mpi", shared_heap_bytes=(1 << 28) << r)
    say("rank %d opened" % r)
    w.close()
except Exception as e:
    say("rank %d error: %s" % (r, e))
    sys.exit(1)
PY
  run_status 1 env PYTHONPATH="$PYDIR" HEAP_OUT="$T/heap.out" "${MPIRUN[@]}" -x PYTHONPATH \
    -x HEAP_OUT -np 2 /usr/bin/python3 "$T/heap.py" &&
    { OUT=$(cat "$T"/heap.out.* 2>&1) || true; } &&
    expect_out "rank 1 error: [INTERNAL] pto_dist_worker_open: the MPI transport: MPI rank 1 opened its worker with a 536870912-byte host heap, rank 0 with 268435456 (pto_dist_config.shared_heap_bytes): every rank must pass the same configuration" &&
    expect_out "rank 0 error: [INTERNAL] pto_dist_worker_open: the MPI transport: MPI rank 1 opened"
  expect_true "no rank opened" not_opened
else
  echo "note: the heap case needs the Python package and /usr/bin/python3 with numpy"
fi

# A rank of another release.
run_status 1 "${MPIRUN[@]}" -np 2 -x PTO_DIST_TEST_MPI_RELEASE=1:0.0.1-other "$PTO_TEST" run "$P" \
  --devices 2 --dim M=64 --transport mpi &&
  expect_out "MPI rank 1 runs pto 0.0.1-other (messages of " &&
  expect_out "), rank 0 pto $("$PTO" --version | cut -d' ' -f2) (" &&
  expect_out "every rank must run the same pto build"
expect_true "no rank waited for another" no_hang

# Without mpirun (an MPI singleton: a world of 1 rank), a 2-device program names the remedy, in
# the singular for one device (it said "give the program 1 devices").
run_status 2 env PTO_DIST_TRANSPORT=mpi timeout 120 "$PTO" run "$P" --devices 2 --dim M=64 &&
  expect_out "the device set has 2 devices but the MPI world has 1 rank; every MPI rank hosts one chip: launch with mpirun -np 2, or give the program 1 device (--devices 1)"

# PTO_DIST_TRANSPORT=mpi, the default of --transport, runs over MPI as --transport mpi does (here
# a singleton, without mpirun), and the summary says so: it used to name the transport only when
# --transport was given, so this run read as one on the shm transport.
run_status 0 env PTO_DIST_TRANSPORT=mpi timeout 120 "$PTO" run "$P" --devices 1 --dim M=32 --check &&
  expect_out "ran host @main on sim over mpi (shared windows): 1 device (0)" && expect_out PASS

# The same ranks, matching: the run passes.
run_status 0 "${MPIRUN[@]}" -np 2 "$PTO_TEST" run "$P" --devices 2 --dim M=64 --check \
  --transport mpi && expect_out PASS

# Rank 1 stops at its first run: rank 0 names it after the deadline, then cannot close with it
# (the close agreement's 10 s) and exits 1; mpirun ends the stopped rank.
cp "$P" "$T/stopme.ptir"
run_status 1 "${MPIRUN[@]}" -np 2 -x PTO_DIST_TIMEOUT_MS=1000 -x PTO_DIST_TEST_MPI_SKIP=1:stop-at-run \
  "$PTO_TEST" run "$T/stopme.ptir" --devices 2 --dim M=64 --transport mpi &&
  expect_out "chip rank 1 (device 1, pid " &&
  expect_out "has not been heard from over MPI for " &&
  expect_out "(stopped by a signal or a debugger, or its host or link is gone); the distributed worker is unusable" &&
  expect_out "rank 1 did not arrive within 10000 ms (PTO_DIST_TIMEOUT_MS, at least 10 s) while this rank was closing the worker"
left=$(pgrep -f "$T/stopme.ptir" || true)
expect_true "no rank left behind: ${left:-none}" test -z "$left"
[ -z "$left" ] || kill -KILL $left
finish
