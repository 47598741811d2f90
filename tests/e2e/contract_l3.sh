#!/usr/bin/env bash
# The L3 contract (docs/language.md, "L3: host programs" and the dist.* ops) checked with
# expected values computed by numpy, not by pto's interpreter (tests/e2e/data/contract_l3.py):
# every collective x every op x every dtype it allows, point to point, collectives in loops,
# host-side ops and per-device scalars, and the errors the contract names; each run case also
# passes --check with a worst error of 0. Run with the chips as forked processes, and again as
# threads of pto's process (PTO_DIST_CHIPS=threads: how chips run changes nothing a program
# sees); contract_l3_slow.sh adds rank counts and the MPI transport. Then resident data through
# pto.DistributedWorker (contract_l3_stacked.py): stacked tensors mean their host arrays, a shard
# passed to another device is a launch error, several programs share resident tensors.
source "$(dirname "$0")/lib/contract.bash"
CASES="$PTO_SOURCE_DIR/tests/e2e/data/contract_l3.py"
for chips in processes threads; do
  PTO_DIST_CHIPS=$chips run_contract "$CASES"
done

# pto's libraries loaded into python3 through ctypes: not into an uninstrumented interpreter
# when they are built with a sanitizer.
if [ -n "$PTO_SANFLAGS" ]; then
  echo "note: a sanitizer build: the pto.DistributedWorker part is left out"
else
  B=$(cd "$(dirname "$PTO")/.." && pwd)
  for chips in processes threads; do
    run_status 0 env PYTHONPATH="$B/python" timeout 300 "$PY" \
      "$PTO_SOURCE_DIR/tests/e2e/data/contract_l3_stacked.py" "$chips"
    echo "$OUT"
  done
fi
finish
