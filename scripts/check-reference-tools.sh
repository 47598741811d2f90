#!/usr/bin/env bash
# check-reference-tools.sh SIMPLER_DIR [PTO]: runs the reference runtime's own tools, unmodified,
# on what pto writes, for a set of programs (L2 and L3), and fails on any refusal, zero-task
# result or numeric mismatch. SIMPLER_DIR is a checkout of hw-native-sys/simpler (its
# simpler_setup/tools/ are run with $PYTHON, default /usr/bin/python3); PTO defaults to
# build/tools/pto. CI has no network, so the suite cannot fetch them: run this by hand after
# changing what pto writes (tests/e2e/compat_simpler_tools.sh checks the same files from the
# tools' documented formats).
#
#   L2, per program: pto run --swimlane-records, pto run --dump-args, then
#     swimlane_converter   exits 0; its task table counts every AICore row, under the kernels'
#                          names
#     deps_viewer          exits 0; its summary counts deps.json's tasks, names resolved
#     critical_path        exits 0; one report; a nonzero makespan
#     sched_overhead_analysis  exits 0 (it needs level-3 scheduler phases)
#     dump_viewer          exits 0; lists every argument of args_dump.json
#     strace_timing        on the [STRACE] log of pto bench: exits 0; per-launch Host, Device and
#                          Effective (its own functions) equal pto bench's medians
#   L3, per program: pto run --swimlane-records (one set per call of each chip), pto run
#   --dump-args (one dump per call of each chip, in the same rank_R/dispatch_N folders), then
#     critical_path        on the folder: one report per chip call
#     swimlane_converter   on each set, as above
#     sched_overhead_analysis  on each set, as above
#     dump_viewer          on each dump, as above
#     strace_timing        on the log of pto bench: its per-launch view holds only the chips'
#                          chip.run launches (the host's node.* spans kept out), and PyPTO's
#                          per_round host (max over ranks of each rank's summed chip.run) equals
#                          pto's per_round host samples
# Prints one line per check and a summary; exit 0 only when every check passed.
set -u
if [ $# -lt 1 ] || [ ! -d "$1/simpler_setup/tools" ]; then
  echo "usage: $0 SIMPLER_DIR [PTO]  (SIMPLER_DIR: a checkout of hw-native-sys/simpler)" >&2
  exit 2
fi
SIMPLER=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PTO=${2:-$ROOT/build/tools/pto}
EX=$ROOT/examples
PY=${PYTHON:-/usr/bin/python3}
export PYTHONPATH="$SIMPLER:$SIMPLER/python${PYTHONPATH:+:$PYTHONPATH}"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/pto-reftools.XXXXXX")
KEEP=${KEEP:-0}
[ "$KEEP" = 1 ] || trap 'rm -rf "$OUT"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok    $*"; }
bad() { failed=$((failed + 1)); echo "FAIL  $*"; }

# tool NAME ARGS...: runs simpler_setup.tools.NAME, its output in $LOG; its exit status.
tool() {
  local name=$1
  shift
  LOG="$OUT/$name.$$.$RANDOM.log"
  timeout 300 "$PY" -m "simpler_setup.tools.$name" "$@" >"$LOG" 2>&1
}

# expect DESC: the last tool run exited 0, else its output's tail is shown.
expect() {
  local rc=$1
  shift
  if [ "$rc" = 0 ]; then ok "$*"; else bad "$* (exit $rc)"; tail -5 "$LOG" | sed 's/^/      | /'; fi
}

# pycheck DESC SCRIPT ARGS...: a python check of the tools' output (exit 0: passed).
pycheck() {
  local desc=$1
  shift
  local msg
  if msg=$("$PY" - "$@" 2>&1); then ok "$desc${msg:+: $msg}"; else bad "$desc: $msg"; fi
}

converter() { # DIR LABEL
  local d=$1
  tool swimlane_converter "$d/chip_swimlane_records.json" -o "$d/merged_swimlane.json"
  expect $? "$2: swimlane_converter"
  pycheck "$2: swimlane_converter counted every task" "$d" "$LOG" <<'EOF'
import json, re, sys
d, log = sys.argv[1], open(sys.argv[2]).read()
rows = json.load(open(d + "/chip_swimlane_records.json"))["aicore_tasks"]
names = set(json.load(open(d + "/name_map.json"))["callable_id_to_name"].values())
m = re.search(r"^TOTAL\s+(\d+)", log, re.M)
if not m or int(m.group(1)) != len(rows) or not rows:
    sys.exit("TOTAL %s, %d AICore rows" % (m and m.group(1), len(rows)))
missing = [n for n in names if not re.search(r"^\d+\s+%s\s" % re.escape(n), log, re.M)]
if missing:
    sys.exit("kernels without a row: %s" % missing)
print("%d tasks" % len(rows))
EOF
}

dump_view() { # DUMP-DIR LABEL: dump_viewer lists every argument of args_dump.json
  local d=$1
  (cd "$(dirname "$d")" && tool dump_viewer "$(basename "$d")")
  expect $? "$2: dump_viewer"
  LOG=$(ls -t "$OUT"/dump_viewer.*.log | head -1)
  pycheck "$2: dump_viewer listed every argument" "$d" "$LOG" <<'EOF'
import json, re, sys
d, log = sys.argv[1], open(sys.argv[2]).read()
n = json.load(open(d + "/args_dump.json"))["total_args"]
rows = len(re.findall(r"^\s*\d+\s+0x[0-9a-f]{16}\s", log, re.M))
if rows != n or n == 0:
    sys.exit("%d rows, %d arguments" % (rows, n))
print("%d arguments" % n)
EOF
}

l2() { # NAME PTO-ARGS...
  local name=$1
  shift
  local d="$OUT/l2/$name"
  # Two runs, as the reference captures them: the dump's copies would perturb the records.
  if ! "$PTO" run "$@" --swimlane-records "$d/chip_swimlane_records.json" >"$OUT/$name.run" 2>&1 ||
    ! "$PTO" run "$@" --dump-args "$d/args_dump" >>"$OUT/$name.run" 2>&1; then
    bad "$name: pto run $*"
    sed 's/^/      | /' "$OUT/$name.run"
    return
  fi
  converter "$d" "$name"
  tool deps_viewer "$d/deps.json" -o "$d/deps_viewer.txt"
  expect $? "$name: deps_viewer"
  pycheck "$name: deps_viewer read every task" "$d" <<'EOF'
import json, re, sys
d = sys.argv[1]
txt = open(d + "/deps_viewer.txt").read()
n = len(json.load(open(d + "/deps.json"))["tasks"])
m = re.search(r"^\s*tasks: (\d+)", txt, re.M)
if not m or int(m.group(1)) != n or n == 0:
    sys.exit("tasks %s, deps.json %d" % (m and m.group(1), n))
if not re.search(r"func_name_map: yes", txt):
    sys.exit("names not resolved")
print("%d tasks" % n)
EOF
  tool critical_path "$d"
  expect $? "$name: critical_path"
  pycheck "$name: critical_path report" "$d" "$LOG" <<'EOF'
import os, re, sys
d, log = sys.argv[1], open(sys.argv[2]).read()
m = re.search(r"Analyzed (\d+) rank", log)
mk = re.search(r"makespan=([0-9.]+)(m?s|us)", log)
if not m or m.group(1) != "1" or not os.path.exists(d + "/critical_path_report.md"):
    sys.exit("no report")
if not mk or float(mk.group(1)) <= 0:
    sys.exit("zero makespan")
print("makespan %s%s" % (mk.group(1), mk.group(2)))
EOF
  tool sched_overhead_analysis --chip-swimlane-records-json "$d/chip_swimlane_records.json" \
    --deps-json "$d/deps.json"
  expect $? "$name: sched_overhead_analysis"
  dump_view "$d/args_dump" "$name"
  # Timing: pto bench's medians and strace_timing's per-launch numbers of the same log.
  if ! PTO_LOG_LEVEL=timing "$PTO" bench "$@" --rounds 5 --warmup 0 --json >"$d/bench.json" \
    2>"$d/bench.log"; then
    bad "$name: pto bench"
    return
  fi
  tool strace_timing "$d/bench.log" --rounds-table
  expect $? "$name: strace_timing --rounds-table"
  pycheck "$name: strace_timing's Host/Device/Effective equal pto bench's" "$d" <<'EOF'
import json, statistics, sys
from simpler_setup.tools import strace_timing as st
d = sys.argv[1]
spans = list(st.parse_spans(open(d + "/bench.log").readlines()))
buckets = st.bucket_by_hid(st.group_invocations(st.invocation_spans(spans)))
best = max(buckets.values(), key=len)
rows = [st._round_metrics(inv) for inv in best]
summary = json.load(open(d + "/bench.json"))["summary"]
if len(rows) != 5:
    sys.exit("%d launches in the busiest hid, 5 expected" % len(rows))
got = {}
for i, key in ((0, "host_wall"), (1, "device_wall"), (2, "effective")):
    ref = statistics.median(r[i] for r in rows)
    mine = summary[key]["median"]
    if ref <= 0 or abs(ref - mine) > 0.0015:
        sys.exit("%s: strace_timing %.3f us, pto %.3f us" % (key, ref, mine))
    got[key] = "%.3f" % ref
print(", ".join("%s %s us" % kv for kv in got.items()))
EOF
}

l3() { # NAME PTO-ARGS...
  local name=$1
  shift
  local d="$OUT/l3/$name"
  if ! "$PTO" run "$@" --swimlane-records "$d/chip_swimlane_records.json" >"$OUT/$name.run" 2>&1
  then
    bad "$name: pto run $*"
    sed 's/^/      | /' "$OUT/$name.run"
    return
  fi
  local sets
  sets=$(ls -d "$d"/rank_*/dispatch_* 2>/dev/null | wc -l)
  tool critical_path "$d"
  expect $? "$name: critical_path on the run's folder"
  if grep -q "Analyzed $sets rank" "$LOG" && [ "$sets" -gt 0 ]; then
    ok "$name: critical_path analyzed all $sets chip calls"
  else
    bad "$name: critical_path: $(grep -m1 Analyzed "$LOG"), $sets sets written"
  fi
  local s
  for s in "$d"/rank_*/dispatch_*; do
    converter "$s" "$name ${s#"$d"/}"
    tool sched_overhead_analysis --chip-swimlane-records-json "$s/chip_swimlane_records.json" \
      --deps-json "$s/deps.json"
    expect $? "$name ${s#"$d"/}: sched_overhead_analysis"
  done
  if ! "$PTO" run "$@" --dump-args "$d/args_dump" >>"$OUT/$name.run" 2>&1; then
    bad "$name: pto run $* --dump-args"
    sed 's/^/      | /' "$OUT/$name.run"
    return
  fi
  local dumps
  dumps=$(ls -d "$d"/args_dump/rank_*/dispatch_* 2>/dev/null | wc -l)
  if [ "$dumps" = "$sets" ]; then
    ok "$name: a dump per chip call ($dumps)"
  else
    bad "$name: $dumps dumps, $sets chip calls"
  fi
  for s in "$d"/args_dump/rank_*/dispatch_*; do dump_view "$s" "$name ${s#"$d"/args_dump/}"; done
  if ! PTO_LOG_LEVEL=timing "$PTO" bench "$@" --rounds 4 --warmup 0 --json >"$d/bench.json" \
    2>"$d/bench.log"; then
    bad "$name: pto bench"
    return
  fi
  tool strace_timing "$d/bench.log"
  expect $? "$name: strace_timing"
  pycheck "$name: per-launch views hold the chips' launches only; per_round host is PyPTO's" \
    "$d" <<'EOF'
import json, sys
from collections import defaultdict
from simpler_setup.tools import strace_timing as st
d = sys.argv[1]
spans = list(st.parse_spans(open(d + "/bench.log").readlines()))
nodes = [s for s in spans if st.span_family(s.name) == "node"]
if not nodes or any(s.name.startswith("host.") for s in spans):
    sys.exit("the host's spans: %d node.*, host.* present: %s"
             % (len(nodes), any(s.name.startswith("host.") for s in spans)))
invs = st.group_invocations(st.invocation_spans(spans))
roots = {inv.root().name if inv.root() else None for inv in invs}
if roots != {"chip.run"}:
    sys.exit("invocation roots %s" % roots)
# PyPTO's _parse_l3_stats: per rank (pid) its launches in inv order, cut into equal rounds;
# a round's host is the max over ranks of the rank's summed chip.run.
by_pid = defaultdict(list)
for inv in invs:
    by_pid[inv.pid].append(inv)
j = json.load(open(d + "/bench.json"))
rounds = j["rounds"]
host = [0.0] * rounds
for pid, lst in by_pid.items():
    lst.sort(key=lambda i: i.inv)
    if len(lst) % rounds:
        sys.exit("rank pid %d: %d launches for %d rounds" % (pid, len(lst), rounds))
    k = len(lst) // rounds
    for r in range(rounds):
        s = sum(i.by_name()["chip.run"].dur for i in lst[r * k:(r + 1) * k]) / 1000.0
        host[r] = max(host[r], s)
mine = j["per_round"]["samples"]["host"]
if any(abs(a - b) > 0.0015 for a, b in zip(host, mine)) or len(mine) != rounds:
    sys.exit("PyPTO's per_round host %s, pto's %s" % (host, mine))
print("%d ranks, %d launches, per_round host %s us" % (len(by_pid), len(invs),
      ", ".join("%.1f" % h for h in host)))
EOF
}

echo "reference tools: $SIMPLER ($(git -C "$SIMPLER" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "pto: $PTO; output in $OUT"
l2 add "$EX/add.ptir" --dim M=256
l2 chain "$EX/chain.ptir" --dim M=256 --in alpha=1
l2 softmax "$EX/softmax.ptir" --dim M=64
l2 layernorm "$EX/layernorm.ptir" --dim M=64
l2 matmul "$EX/matmul.ptir" --entry main
l3 allreduce_mesh "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
l3 tp_ffn "$EX/tp_ffn.ptir" --devices 2 --dim M=64
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
