#!/usr/bin/env bash
# pto run --swimlane and pto bench --swimlane: every task of a launch as Chrome trace-event JSON,
# checked against the trace-event format (every event has ph, ts, dur, pid, tid, name; tasks
# never overlap on one core) and against the task graph (a task starts after its dependencies).
source "$(dirname "$0")/lib/common.bash"

CHAIN=("$EX/chain.ptir" --dim M=64 --in alpha=1)

# lane_check FILE NTASKS: the trace-event checks, in python3.
lane_check() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
path, ntasks = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))
ev = d["traceEvents"]
def fail(msg):
    print("swimlane check: " + msg)
    sys.exit(1)
for i, e in enumerate(ev):
    for k, t in (("ph", str), ("name", str), ("ts", (int, float)), ("dur", (int, float)),
                 ("pid", int), ("tid", int)):
        if not isinstance(e.get(k), t) or isinstance(e.get(k), bool):
            fail("event %d lacks %s: %r" % (i, k, e))
    if e["dur"] < 0:
        fail("event %d has a negative dur" % i)
tasks = [e for e in ev if e.get("cat") == "task" and e["ph"] == "X"]
if len(tasks) != ntasks:
    fail("%d tasks, expected %d" % (len(tasks), ntasks))
if {t["name"] for t in tasks} != {"scale", "add_bias", "act"}:
    fail("kernels %r" % sorted({t["name"] for t in tasks}))
eps = 1e-3  # us: the writer keeps 15 significant digits
lanes = {}
for t in tasks:
    if t["pid"] != 2 or t["tid"] != t["args"]["core"] + 1:
        fail("task %r is not on its core's track" % t)
    if t["args"]["ready_us"] > t["ts"] + eps:
        fail("task %r starts before it is ready" % t)
    lanes.setdefault((t["pid"], t["tid"]), []).append(t)
for lane in lanes.values():
    lane.sort(key=lambda t: t["ts"])
    for a, b in zip(lane, lane[1:]):
        if a["ts"] + a["dur"] > b["ts"] + eps:
            fail("tasks %r and %r overlap" % (a, b))
by_id = {t["args"]["task_id"]: t for t in tasks}
if sorted(by_id) != list(range(ntasks)):
    fail("task ids %r" % sorted(by_id))
for t in tasks:
    for dep in t["args"]["deps"]:
        p = by_id[dep]
        if p["ts"] + p["dur"] > t["ts"] + eps:
            fail("task %d starts before its dependency %d ends" % (t["args"]["task_id"], dep))
flows = [e for e in ev if e.get("cat") == "dep"]
if len(flows) != 2 * sum(len(t["args"]["deps"]) for t in tasks):
    fail("%d flow events for the dependencies" % len(flows))
spans = [e for e in ev if e.get("cat") == "span"]
host = {e["name"] for e in spans if e["pid"] == 1}
if host != {"chip.run", "chip.run.bind", "chip.run.runner_run", "chip.run.copy_back"}:
    fail("host track %r" % sorted(host))
root = [e for e in spans if e["name"] == "chip.run"][0]
for t in tasks:
    if not (root["ts"] - eps <= t["ts"] and t["ts"] + t["dur"] <= root["ts"] + root["dur"] + eps):
        fail("task %r is outside chip.run" % t)
print("swimlane check: %d events, %d tasks on %d cores" % (len(ev), len(tasks), len(lanes)))
EOF
}

if ! command -v python3 >/dev/null; then
  echo "python3 not found: the JSON checks are skipped"
  lane_check() { true; }
fi

# pto run: the one launch. chain.ptir at M=64 is 4 blocks of scale -> add_bias -> act.
run_pto 0 run "${CHAIN[@]}" --swimlane "$T/run.json" &&
  expect_out "swimlane: $T/run.json (12 tasks on " && expect_out "open it in Perfetto"
expect_true "run --swimlane writes a valid trace-event file" lane_check "$T/run.json" 12
# With more cores than blocks the blocks spread over several tracks (when the machine has them).
run_pto 0 run "$EX/chain.ptir" --dim M=256 --in alpha=0.5 --swimlane="$T/run256.json" --check &&
  expect_out PASS
expect_true "a larger graph too" lane_check "$T/run256.json" 48

# pto bench: the last measured launch, the one whose spans end the --json samples.
"$PTO" bench "${CHAIN[@]}" --rounds 4 --warmup 1 --json --swimlane "$T/bench.json" >"$T/b.out" 2>"$T/b.err"
expect_true "bench --json --swimlane exits 0" test $? = 0
expect_true "bench --swimlane writes a valid trace-event file" lane_check "$T/bench.json" 12
expect_true "bench --json stays pure JSON" python3 -m json.tool "$T/b.out" /dev/null
expect_true "the swimlane is the last measured launch" python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))
lane = json.load(open(sys.argv[2]))["traceEvents"]
root = [e for e in lane if e["name"] == "chip.run"][0]
sys.exit(0 if abs(root["dur"] - b["samples"]["host_wall"][-1]) < 0.01 else 1)' "$T/b.out" "$T/bench.json"
run_pto 0 bench "${CHAIN[@]}" --rounds 1 --warmup 0 --swimlane "$T/one.json" &&
  expect_out "swimlane of the last launch: $T/one.json (12 tasks on "
expect_true "a benchmark of one launch records it" lane_check "$T/one.json" 12

# Without --swimlane nothing is written.
run_pto 0 run "${CHAIN[@]}"
expect_true "no swimlane line without --swimlane" bash -c '! grep -q swimlane <<<"$1"' _ "$OUT"

# Bad usage: exit 2 naming the option; an unwritable file: exit 1 naming the file.
run_pto 2 run "${CHAIN[@]}" --swimlane && expect_out "--swimlane needs a file name"
run_pto 2 bench "${CHAIN[@]}" --swimlane= && expect_out "--swimlane needs a file name"
# Checked before the run (issue #10): a usage error.
run_pto 2 run "${CHAIN[@]}" --swimlane "$T/no/such/dir/x.json" &&
  expect_out "--swimlane $T/no/such/dir/x.json: directory $T/no/such/dir does not exist"
run_pto 0 run --help && expect_out "--swimlane FILE" && expect_out "--swimlane chain.json"
run_pto 0 bench --help && expect_out "--swimlane FILE"
finish
