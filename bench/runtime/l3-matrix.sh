#!/usr/bin/env bash
# The distributed worker's whole issue #31 matrix in one command (bench/RESULTS.md, "#31
# matrix"): on 2 and 4 ranks, with the host otherwise idle and with ONE busy process beside it (a
# shell loop this script starts and kills), ROUNDS rounds each of
#   - pto's allreduce (bench/runtime/dist_allreduce: the shared-memory transport's collective,
#     forked ranks) at 1 KiB, 64 KiB, 1 MiB and 64 MiB per rank, next to Open MPI's
#     MPI_Allreduce of the same data (bench/mpi/mpi_allreduce, its MPI_Allreduce column, under
#     mpirun --oversubscribe) when the MPI build is there;
#   - one-call dispatch (bench/runtime/dist_overhead: pto_dist_worker_run of a host program with
#     one call, prepared worker, resident tensors; each repetition's mean, and its median single
#     run, which a lost slice now and then does not move) and 64 calls per run (per call), with the
#     thread switches each takes, with the chips as processes (the default) and again as threads
#     of the host's process (PTO_DIST_CHIPS=threads, pto_dist_config.chips), alternated;
# then ONE markdown table: per measure the median over the rounds of each round's median and the
# smallest of them, the peer's the same way, and peer / pto (> 1: pto faster), with the CPU model
# and the load average.
#
#   bench/runtime/l3-matrix.sh [BUILD_DIR] [MPI_BUILD_DIR] [ROUNDS]   (build, build-mpi, 3)
#
# It builds the benchmarks it runs (cmake --build of their targets; BUILD_DIR is configured first
# when it has no CMakeCache.txt). The MPI peer comes from MPI_BUILD_DIR, the -DPTO_MPI=ON build
# scripts/test-mpi.sh makes: configured here the same way when Open MPI (mpicc, mpirun) is
# installed, else the MPI columns say "skipped" (scripts/test-mpi.sh installs Open MPI). Every
# step runs under a timeout (STEP_TIMEOUT seconds, default 150): a step that times out or fails
# shows "-" in its cells and is listed under the table. Environment: MAX_BYTES (default 64 MiB:
# the largest size measured; sizes above it show "-"), REPS (repetitions per size, default 5; the allreduce benches take at least 20 up to 64 KiB),
# CALLS (one-call runs per repetition of dist_overhead, default 640). About 3-5 minutes on an
# idle 2-core host with the defaults (Open MPI's 64 MiB allreduce takes seconds on a busy one).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
MB=${2:-build-mpi}
ROUNDS=${3:-3}
MAX_BYTES=${MAX_BYTES:-67108864}
REPS=${REPS:-5}
CALLS=${CALLS:-640}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
SIZES=(1024 65536 1048576 67108864)
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
MPIRUN=(mpirun --oversubscribe --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)

say() { echo "l3-matrix: $*" >&2; }
LAUNCH=()
command -v ccache >/dev/null && LAUNCH=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# ---- build ----------------------------------------------------------------------------------
if [ ! -f "$B/CMakeCache.txt" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCH[@]}" >/dev/null || exit 1
fi
say "building dist_allreduce and dist_overhead in $B"
cmake --build "$B" --target bench_dist_allreduce bench_dist_overhead >/dev/null || exit 1
MPI_OK=0
MPI_WHY="Open MPI is not installed (scripts/test-mpi.sh installs it and makes $MB)"
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  if [ ! -f "$MB/CMakeCache.txt" ]; then
    say "configuring $MB with -DPTO_MPI=ON (as scripts/test-mpi.sh does)"
    cmake -S . -B "$MB" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO_WERROR=ON -DPTO_MPI=ON \
      "${LAUNCH[@]}" >/dev/null
  fi
  say "building mpi_allreduce in $MB"
  if cmake --build "$MB" --target bench_mpi_allreduce >/dev/null; then
    MPI_OK=1
  else
    MPI_WHY="building bench_mpi_allreduce in $MB failed"
  fi
fi
[ "$MPI_OK" = 1 ] || say "MPI peer skipped: $MPI_WHY"

# ---- the busy process -----------------------------------------------------------------------
BUSY=
stop_busy() {
  if [ -n "$BUSY" ]; then
    kill "$BUSY" 2>/dev/null
    wait "$BUSY" 2>/dev/null
    BUSY=
  fi
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM

# ---- measure --------------------------------------------------------------------------------
OUT=$(mktemp -d)
trap 'stop_busy; rm -rf "$OUT"' EXIT
RES="$OUT/results" # lines: ranks host measure round pto peer
FAILS="$OUT/fails"
: >"$RES"
: >"$FAILS"
LOADS="$OUT/loads"
: >"$LOADS"
T0=$(date +%s)

# step NAME FILE CMD...: runs CMD under the step timeout into FILE; notes a failure.
step() {
  local name=$1 file=$2
  shift 2
  timeout "$STEP_TIMEOUT" "$@" >"$file" 2>"$file.err"
  local rc=$?
  if [ $rc != 0 ]; then
    echo "- $name: $([ $rc = 124 ] && echo "timed out after ${STEP_TIMEOUT} s" || echo "exit $rc: $(tail -1 "$file.err")")" >>"$FAILS"
  fi
}

# row FILE BYTES COLUMN: the value in that column (awk field) of the table row for BYTES.
row() { awk -F'|' -v b="$2" -v c="$3" '$2 + 0 == b && $2 ~ /[0-9]/ { gsub(/ /, "", $c); print $c; exit }' "$1"; }
# metric FILE NAME: the median column of dist_overhead's row NAME.
metric() { awk -F'|' -v n="$2" 'index($2, n) { gsub(/ /, "", $4); print $4; exit }' "$1"; }

for n in 2 4; do
  for host in idle busy; do
    if [ "$host" = busy ]; then
      timeout 900 sh -c 'while :; do :; done' &
      BUSY=$!
    fi
    echo "$n $host $(cut -d' ' -f1 /proc/loadavg)" >>"$LOADS"
    for r in $(seq 1 "$ROUNDS"); do
      say "$n ranks, $host host, round $r of $ROUNDS ($(($(date +%s) - T0)) s so far)"
      tag="$n ranks $host round $r"
      step "dist_allreduce, $tag" "$OUT/ar" "$B/bench/runtime/dist_allreduce" "$n" "$MAX_BYTES" "$REPS"
      if [ "$MPI_OK" = 1 ]; then
        step "mpi_allreduce, $tag" "$OUT/mpi" "${MPIRUN[@]}" -np "$n" "$MB/bench/mpi/mpi_allreduce" "$MAX_BYTES" "$REPS"
      else
        : >"$OUT/mpi"
      fi
      step "dist_overhead, $tag" "$OUT/ov" env PTO_DIST_CHIPS=processes "$B/bench/runtime/dist_overhead" "$CALLS" "$REPS" "$n"
      step "dist_overhead (chips as threads), $tag" "$OUT/ovt" env PTO_DIST_CHIPS=threads "$B/bench/runtime/dist_overhead" "$CALLS" "$REPS" "$n"
      for s in "${SIZES[@]}"; do
        echo "$n $host allreduce:$s $r $(row "$OUT/ar" "$s" 3) $(row "$OUT/mpi" "$s" 5)" >>"$RES"
      done
      echo "$n $host one_call $r $(metric "$OUT/ov" "1 call per run") -" >>"$RES"
      echo "$n $host one_call_each $r $(metric "$OUT/ov" "median of the single runs") -" >>"$RES"
      echo "$n $host batch $r $(metric "$OUT/ov" "64 calls per run ") -" >>"$RES"
      echo "$n $host sw_one $r $(metric "$OUT/ov" "switches per run, 1 call") -" >>"$RES"
      echo "$n $host sw_batch $r $(metric "$OUT/ov" "switches per call, 64") -" >>"$RES"
      echo "$n $host one_call_thr $r $(metric "$OUT/ovt" "1 call per run") -" >>"$RES"
      echo "$n $host one_call_each_thr $r $(metric "$OUT/ovt" "median of the single runs") -" >>"$RES"
      echo "$n $host batch_thr $r $(metric "$OUT/ovt" "64 calls per run ") -" >>"$RES"
      echo "$n $host sw_one_thr $r $(metric "$OUT/ovt" "switches per run, 1 call") -" >>"$RES"
    done
    stop_busy
  done
done

# ---- the table ------------------------------------------------------------------------------
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
[ -n "$cpu" ] || cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
fam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "## issue #31 matrix: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "CPU: $cpu (family $fam, model $model), $(nproc) CPUs; load average at the start of each block (1 min): $(awk '{printf "%s%s ranks %s: %s", (NR > 1 ? ", " : ""), $1, $2, $3}' "$LOADS"); at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "$ROUNDS rounds of $REPS repetitions; per cell the median over the rounds of each round's median, / the smallest; peer: Open MPI's MPI_Allreduce $([ "$MPI_OK" = 1 ] && mpirun --version 2>/dev/null | head -1 | sed 's/.*(Open MPI) /(Open MPI /; s/$/)/' || echo "(skipped: $MPI_WHY)"). Host idle: nothing started beside the ranks (the load average says what else ran); busy: one shell loop beside them. $(($(date +%s) - T0)) s in all."
echo
echo "| ranks | host | measure | pto median / min | peer median / min | peer / pto (medians) |"
echo "| ---: | --- | --- | ---: | ---: | ---: |"
awk '
function name(m) {
  if (m ~ /^allreduce:/) {
    b = substr(m, 11) + 0
    return "allreduce f32, " (b >= 1048576 ? b / 1048576 " MiB" : b / 1024 " KiB") " per rank [us]"
  }
  if (m == "one_call") return "`pto_dist_worker_run`, 1 call per run [us]"
  if (m == "one_call_each") return "1-call run, median of the single runs [us]"
  if (m == "one_call_each_thr") return "1-call run, median of the single runs, chips as threads [us]"
  if (m == "batch") return "64 calls per run, per call [us]"
  if (m == "sw_one") return "thread switches per 1-call run"
  if (m == "one_call_thr") return "`pto_dist_worker_run`, 1 call per run, chips as threads [us]"
  if (m == "batch_thr") return "64 calls per run, per call, chips as threads [us]"
  if (m == "sw_one_thr") return "thread switches per 1-call run, chips as threads"
  return "thread switches per call, 64 calls per run"
}
function stat(list,   v, k, i, j, t, med) {
  last_med = 0
  k = split(list, v, " ")
  if (k == 0) return "-"
  for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
  med = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  last_med = med
  return num(med) " / " num(v[1])
}
function num(x) { return sprintf(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.2f", x) }
{
  key = $1 SUBSEP $2 SUBSEP $3
  if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
  if ($5 != "" && $5 != "-") pto[key] = pto[key] " " $5
  if ($6 != "" && $6 != "-") peer[key] = peer[key] " " $6
}
END {
  for (i = 1; i <= nk; i++) {
    split(order[i], f, SUBSEP)
    a = stat(pto[order[i]]); am = last_med
    p = stat(peer[order[i]]); pm = last_med
    ratio = (a != "-" && p != "-" && am > 0) ? sprintf("%.2fx", pm / am) : "-"
    if (p == "-") p = (f[3] ~ /^allreduce:/) ? "-" : "n/a"
    printf "| %s | %s | %s | %s | %s | %s |\n", f[1], f[2], name(f[3]), a, p, ratio
  }
}' "$RES"
if [ -s "$FAILS" ]; then
  echo
  echo "Steps that failed or timed out:"
  cat "$FAILS"
fi
