#!/usr/bin/env bash
# PyPTO's (simpler's) timing and swimlane tools read pto's output:
#  - Effective is the span from the earlier start to the later end of the orchestration and
#    scheduling windows (strace_timing.py's formula, computed here independently in python):
#    pto trace and pto bench give the same value for the same launches, gap or not;
#  - pto run|bench --swimlane-records FILE writes chip_swimlane_records.json's layout and
#    deps.json (and func_names.json, also as name_map.json) beside it, consistent with each other
#    and with the launch; a host program one set per call of each chip; --swimlane-level 1-3
#    (default 3: each core's scheduler phases, as sched_overhead_analysis reads them);
#  - pto run|bench --dump-args DIR writes the reference's args_dump.json and args.bin; a host
#    program one per call of each chip.
# scripts/check-reference-tools.sh runs the reference's own tools on the same output.
source "$(dirname "$0")/lib/common.bash"

# reference_effective LOG: the median over the log's launches (of its most frequent hid) of
# max(orch end, sched end) - min(orch start, sched start), from the first span of each name, us.
reference_effective() {
  python3 - "$1" <<'EOF'
import re, statistics, sys
from collections import defaultdict
pat = re.compile(r"\[STRACE\]\s+v=1\s+pid=(\d+)\s+tid=\d+\s+inv=(\d+)\s+hid=([0-9a-f]+)\s+"
                 r"depth=\d+\s+name=(\S+)\s+ts=(\d+)\s+dur=(\d+)")
inv = defaultdict(dict)
hid_of = {}
for line in open(sys.argv[1]):
    for m in pat.finditer(line):
        key = (int(m[1]), int(m[2]))
        hid_of[key] = m[3]
        name, ts, dur = m[4], int(m[5]), int(m[6])
        if name not in inv[key] or ts < inv[key][name][0]:
            inv[key][name] = (ts, dur)
count = defaultdict(int)
for h in hid_of.values():
    count[h] += 1
best = max(count, key=count.get)
effs = []
for key, spans in inv.items():
    if hid_of[key] != best:
        continue
    o = spans.get("chip.run.runner_run.device_wall.orch")
    s = spans.get("chip.run.runner_run.device_wall.sched")
    if o and s:
        effs.append(max(o[0] + o[1], s[0] + s[1]) - min(o[0], s[0]))
print("%.3f" % (statistics.median(effs) / 1000.0))
EOF
}

# json_median FILE METRIC: the summary median pto printed as JSON, us.
json_median() {
  python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["summary"][sys.argv[2]]["median"])' "$1" "$2"
}

# A synthetic log with a gap between orch and sched in two of three launches: Effective counts
# the gap, busy does not.
cat >"$T/gap.log" <<'EOF'
[STRACE] v=1 pid=7 tid=7 inv=1 hid=abc depth=0 name=chip.run ts=0 dur=100000 
[STRACE] v=1 pid=7 tid=7 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch ts=1000 dur=10000 clk=dev
[STRACE] v=1 pid=7 tid=7 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched ts=21000 dur=10000 clk=dev
[STRACE] v=1 pid=7 tid=7 inv=2 hid=abc depth=0 name=chip.run ts=200000 dur=100000
[STRACE] v=1 pid=7 tid=7 inv=2 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch ts=201000 dur=5000 clk=dev
[STRACE] v=1 pid=7 tid=7 inv=2 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched ts=240000 dur=20000 clk=dev
[STRACE] v=1 pid=7 tid=7 inv=3 hid=abc depth=0 name=chip.run ts=400000 dur=100000
[STRACE] v=1 pid=7 tid=7 inv=3 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch ts=401000 dur=30000 clk=dev
[STRACE] v=1 pid=7 tid=7 inv=3 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched ts=402000 dur=10000 clk=dev
EOF
run_pto 0 trace "$T/gap.log" --warmup 0 --json
echo "$OUT" >"$T/gap.json"
want=$(reference_effective "$T/gap.log")
expect_true "gap log: reference Effective is 30us (got $want)" test "$want" = "30.000"
expect_true "gap log: pto trace effective equals the reference" test "$(json_median "$T/gap.json" effective)" = "$want"
expect_true "gap log: busy leaves the gaps out (20, 25 and 30us: median 25us)" test "$(json_median "$T/gap.json" busy)" = "25.000"

# A real benchmark: its own statistics, its log through pto trace and the reference formula agree.
PTO_LOG_LEVEL=timing "$PTO" bench "$EX/chain.ptir" --dim M=256 --in alpha=1 --rounds 5 --warmup 0 \
  --json >"$T/bench.json" 2>"$T/bench.log"
expect_true "bench ran" test -s "$T/bench.json"
run_pto 0 trace "$T/bench.log" --warmup 0 --json
echo "$OUT" >"$T/trace.json"
want=$(reference_effective "$T/bench.log")
expect_true "bench log: pto trace effective ($(json_median "$T/trace.json" effective)) equals the reference ($want)" \
  test "$(json_median "$T/trace.json" effective)" = "$want"
expect_true "bench log: pto bench effective ($(json_median "$T/bench.json" effective)) equals the reference ($want)" \
  test "$(json_median "$T/bench.json" effective)" = "$want"

# --swimlane-records: the capture and deps.json of one launch, and of a benchmark's last launch.
records_check() { # FILE LEVEL KERNELS...
  python3 - "$@" <<'EOF'
import json, os, sys
path, level, kernels = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
d = json.load(open(path))
deps = json.load(open(os.path.join(os.path.dirname(path), "deps.json")))
names = json.load(open(os.path.join(os.path.dirname(path), "func_names.json")))
def fail(msg):
    print("records check: " + msg)
    sys.exit(1)
if d.get("chip_swimlane_level") != level:
    fail("chip_swimlane_level %r, %d expected" % (d.get("chip_swimlane_level"), level))
md = d["metadata"]
if md["clock_freq_hz"] <= 0 or md["num_cores"] != len(md["core_types"]) or not md.get("runtime"):
    fail("metadata %r" % md)
if set(md["core_types"]) - {"aic", "aiv"} or "aic" not in md["core_types"]:
    fail("core types %r" % md["core_types"])
rows = d["aicore_tasks"]
if "scheduler_tasks" in d:
    fail("a scheduler_tasks key: the reference reads top-level aicpu_tasks rows")
sched = {(r[0], r[1]): r for r in d["aicpu_tasks"]}
if any(len(r) != 4 for r in d["aicpu_tasks"]):
    fail("aicpu_tasks rows of other than 4 columns")
if json.load(open(os.path.join(os.path.dirname(path), "name_map.json"))) != names:
    fail("name_map.json differs from func_names.json")
if level == 1:
    if sched:
        fail("level 1 with aicpu_tasks rows")
    sys.exit(0)
if len(sched) != len(rows):
    fail("aicpu_tasks do not pair with aicore_tasks")
# Level 3: aicpu_scheduler_phases, one list per scheduler thread, and core_to_thread mapping each
# core to its thread; sched_overhead_analysis (parse_scheduler_from_json_phases) sorts a thread's
# dispatch/complete records by start, counts FINs from complete's tasks_processed and loops as
# the largest loop_iter. Each core of pto's sim is its own scheduler thread.
phases = d.get("aicpu_scheduler_phases")
if level == 2:
    if phases is not None or "core_to_thread" in md:
        fail("level 2 with level 3's scheduler phases")
else:
    if md.get("core_to_thread") != list(range(md["num_cores"])) or len(phases) != md["num_cores"]:
        fail("core_to_thread %r, %d phase lists" % (md.get("core_to_thread"), len(phases)))
    fins = 0
    for core, recs in enumerate(phases):
        ran = sorted((r for r in rows if r[0] == core), key=lambda r: r[3])
        prev = None
        for p in recs:
            if p["kind"] not in ("dispatch", "complete") or p["tasks_processed"] != 1:
                fail("core %d: phase %r" % (core, p))
            if p["start_cycles"] > p["end_cycles"] or (prev and prev["end_cycles"] > p["start_cycles"]):
                fail("core %d: phase %r out of order" % (core, p))
            if not 1 <= p["loop_iter"] <= len(ran):
                fail("core %d: loop_iter %d of %d tasks" % (core, p["loop_iter"], len(ran)))
            task = ran[p["loop_iter"] - 1]
            if p["kind"] == "dispatch" and p["end_cycles"] > task[3]:
                fail("core %d: dispatch %r after its task's start %d" % (core, p, task[3]))
            if p["kind"] == "complete" and p["start_cycles"] < task[4]:
                fail("core %d: complete %r before its task's end %d" % (core, p, task[4]))
            fins += p["kind"] == "complete"
            prev = p
        if recs and max(p["loop_iter"] for p in recs) != len(ran):
            fail("core %d: %d loops for %d tasks" % (core, max(p["loop_iter"] for p in recs), len(ran)))
    if fins != len(rows):
        fail("%d completions for %d tasks" % (fins, len(rows)))
by_id = {t["task_id"]: t for t in deps["tasks"]}
for r in rows:
    core, tid, reg, start, end = r[0], r[1], r[2], r[3], r[4]
    if len(r) != 6 or not (0 <= core < md["num_cores"]) or end < start:
        fail("row %r" % r)
    dispatch, finish = sched[(core, reg)][2], sched[(core, reg)][3]
    if not (dispatch <= start <= end <= finish):
        fail("row %r: dispatch %d finish %d" % (r, dispatch, finish))
    t = by_id[tid]
    if t["core_type"] not in (md["core_types"][core], "mix"):
        fail("task %d ran on a %s core but is an %s task" % (tid, md["core_types"][core], t["core_type"]))
    slots = [0] if md["core_types"][core] == "aic" else [1, 2]
    if not any(t["kernel_ids"][s] >= 0 for s in slots):
        fail("task %r has no kernel for a %s core" % (t, md["core_types"][core]))
    if names["callable_id_to_name"][str(t["func_id"])] != t["name"].split("+")[0]:
        fail("task %r: name" % t)
if {t["name"] for t in deps["tasks"]} != kernels:
    fail("kernels %r, expected %r" % (sorted({t["name"] for t in deps["tasks"]}), sorted(kernels)))
ends = {r[1]: r[4] for r in rows}
starts = {r[1]: r[3] for r in rows}
for e in deps["edges"]:
    if e["pred"] >= e["succ"] or starts[e["succ"]] < ends[e["pred"]]:
        fail("edge %r" % e)
# Edges are the orderings the scheduler made: a producer already finished when its consumer was
# submitted is no edge, so a fast chain may have none.
EOF
}
mkdir -p "$T/run" "$T/bench"
run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1 --swimlane-records "$T/run/chip_swimlane_records.json"
expect_true "run: records and deps.json agree" records_check "$T/run/chip_swimlane_records.json" 3 scale add_bias act
run_pto 0 bench "$EX/chain.ptir" --dim M=64 --in alpha=1 --rounds 3 --warmup 1 \
  --swimlane-records "$T/bench/chip_swimlane_records.json"
expect_true "bench: records and deps.json agree" records_check "$T/bench/chip_swimlane_records.json" 3 scale add_bias act
run_pto 2 run "$EX/chain.ptir" --swimlane-records
expect_out "--swimlane-records needs a file name"
# --swimlane-level: the reference's lower levels leave the phases (2) and the AICPU rows (1) out.
for lv in 1 2; do
  run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1 --swimlane-level $lv \
    --swimlane-records "$T/lv$lv/chip_swimlane_records.json"
  expect_true "run: level $lv records" records_check "$T/lv$lv/chip_swimlane_records.json" $lv \
    scale add_bias act
done
run_pto 0 bench "$EX/chain.ptir" --dim M=64 --in alpha=1 --rounds 2 --warmup 0 \
  --swimlane-records "$T/blv2/chip_swimlane_records.json" --swimlane-level=2
expect_true "bench: level 2 records" records_check "$T/blv2/chip_swimlane_records.json" 2 \
  scale add_bias act
run_pto 2 run "$EX/chain.ptir" --dim M=64 --swimlane-records "$T/x.json" --swimlane-level 4
expect_out "--swimlane-level 4: the levels are 1 (AICore rows), 2"
expect_true "a refused level writes nothing" test ! -e "$T/x.json"
run_pto 2 bench "$EX/chain.ptir" --dim M=64 --swimlane-level 3
expect_out "--swimlane-level 3 without --swimlane-records FILE"
run_pto 2 run "$EX/chain.ptir" --dim M=64 --swimlane-records "$T/x.json" --swimlane-level 0
expect_out "--swimlane-level 0: expected a positive integer"

# The file's folder is created before the run.
run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1 \
  --swimlane-records "$T/made/for/it/chip_swimlane_records.json"
expect_true "run: records in a folder it created" records_check \
  "$T/made/for/it/chip_swimlane_records.json" 3 scale add_bias act
run_pto 2 run "$EX/chain.ptir" --dim M=64 --in alpha=1 --swimlane-records "$T/made"
expect_out "--swimlane-records $T/made: is a directory, not a file"

# A host program: one set per call of each chip, in the rank/dispatch folders critical_path
# walks, each the records of that chip's launch.
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 \
  --swimlane-records "$T/l3/chip_swimlane_records.json"
expect_out "swimlane records (level 3): one set per call of each rank in $T/l3/rank_R/dispatch_N/"
for r in 0 1; do
  expect_true "host program: rank $r's records" records_check \
    "$T/l3/rank_$r/dispatch_0/chip_swimlane_records.json" 3 allreduce
done
expect_true "host program: one dispatch per rank" test "$(ls -d "$T"/l3/rank_*/dispatch_* | wc -l)" = 2
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --rounds 1 --warmup 0 \
  --swimlane-records "$T/l3b/chip_swimlane_records.json"
expect_out "--swimlane-records of a host program: use 'pto run'"

# --dump-args DIR [--dump-level N]: the reference's args_dump.json (args key, counters, func_id)
# and args.bin; level 2 (the default, full) carries every tensor's bytes, level 3 (hybrid)
# none without a CoreTaskArgs::dump mark, so no args.bin and a null bin_file.
dump_check() { # DIR LEVEL NTASKS
  python3 - "$@" <<'EOF'
import json, os, sys
d, level, ntasks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
m = json.load(open(os.path.join(d, "args_dump.json")))
a = m["args"]
assert m["dump_args_level"] == level and m["run_dir"] == os.path.basename(d), m["run_dir"]
assert m["total_args"] == len(a) == m["before_dispatch"] + m["after_completion"]
assert m["input_args"] + m["output_args"] + m["inout_args"] == len(a)
assert m["dropped_records"] == m["dropped_overwrite"] == m["truncated_args"] == 0
assert len({x["task_id"] for x in a}) == ntasks, len({x["task_id"] for x in a})
assert all(x["func_id"] and all(f >= 0 for f in x["func_id"]) for x in a)
tensors = [x for x in a if x["kind"] == "tensor"]
scalars = [x for x in a if x["kind"] == "scalar"]
# chain's alpha (f32, fed as 1.5) as its dtype, a number, not its raw slot
assert scalars and all(x["dtype"] == "float32" and x["value"] == 1.5 for x in scalars), scalars
if level == 2:
    assert m["bin_file"] == "args.bin"
    size = os.path.getsize(os.path.join(d, "args.bin"))
    assert size == sum(x["bin_size"] for x in a), size
    # args.bin holds the entries' bytes in the manifest's order (task, stage, argument), not in
    # the order the cores ran the tasks: one launch dumped twice is one file
    at = 0
    for x in a:
        assert x["bin_offset"] == at, (x, at)
        at += x["bin_size"]
    for x in tensors:
        assert x["bin_size"] == x["numel"] * 4, x
else:
    assert m["bin_file"] is None and not os.path.exists(os.path.join(d, "args.bin"))
    assert all(x["bin_size"] == 0 for x in a)
EOF
}
run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1.5 --dump-args "$T/dump/args_dump"
expect_out "args dump (level 2): $T/dump/args_dump/args_dump.json"
expect_true "run: a full dump" dump_check "$T/dump/args_dump" 2 12
for k in 1 2; do
  run_pto 0 run "$EX/chain.ptir" --dim M=512 --in alpha=1.5 --dump-args "$T/dump$k"
done
expect_true "run: a dump of many parallel tasks" dump_check "$T/dump1" 2 96
expect_true "run: two dumps of one launch are one dump" \
  cmp "$T/dump1/args.bin" "$T/dump2/args.bin"
expect_true "run: two dumps of one launch list the same entries" \
  diff <(grep -v run_dir "$T/dump1/args_dump.json") <(grep -v run_dir "$T/dump2/args_dump.json")
run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1.5 --dump-args "$T/dump/args_dump" --dump-level 3
expect_true "run: a hybrid dump replaces it, without args.bin" dump_check "$T/dump/args_dump" 3 12
run_pto 0 bench "$EX/chain.ptir" --dim M=64 --in alpha=1.5 --rounds 2 --warmup 1 \
  --dump-args "$T/bdump"
expect_true "bench: the last launch's dump" dump_check "$T/bdump" 2 12
run_pto 2 run "$EX/chain.ptir" --dump-level 3
expect_out "--dump-level 3 without --dump-args DIR"
run_pto 2 run "$EX/chain.ptir" --dump-args "$T/x" --dump-level 4
expect_out "--dump-level 4: the levels are 1"
run_pto 2 run "$EX/chain.ptir" --dump-args "$T/bench.json"
expect_out "exists and is not a directory"

# A host program: one dump per call of each chip, in the rank/dispatch folders of its records,
# each listing every argument of that call's tasks.
l3_dump_check() { # DIR NRANKS
  python3 - "$@" <<'EOF'
import glob, json, os, sys
d, nranks = sys.argv[1], int(sys.argv[2])
sets = sorted(glob.glob(os.path.join(d, "rank_*", "dispatch_*")))
assert len(sets) == nranks and [os.path.basename(os.path.dirname(s)) for s in sets] == \
    ["rank_%d" % r for r in range(nranks)], sets
for s in sets:
    m = json.load(open(os.path.join(s, "args_dump.json")))
    a = m["args"]
    assert m["run_dir"] == "dispatch_0" and m["dump_args_level"] == 2, m["run_dir"]
    assert m["total_args"] == len(a) > 0 and m["dropped_records"] == 0, s
    assert any(x["kind"] == "tensor" and x["role"] in ("output", "inout") for x in a), s
    assert os.path.getsize(os.path.join(s, "args.bin")) == sum(x["bin_size"] for x in a), s
EOF
}
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --dump-args "$T/l3dump"
expect_out "args dump (level 2): one per call of each rank in $T/l3dump/rank_R/dispatch_N/"
expect_true "host program: each rank's dump" l3_dump_check "$T/l3dump" 2
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --dump-args "$T/bench.json"
expect_out "exists and is not a directory"
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --rounds 1 --warmup 0 \
  --dump-args "$T/l3bdump"
expect_out "--dump-args of a host program: use 'pto run'"
finish
