#!/usr/bin/env bash
# Paired runs for issue #31 item 1 (bench/RESULTS.md): RUNS times, pto's allreduce
# (bench/runtime/dist_allreduce, forked ranks on the shared-memory transport) and then Open
# MPI's MPI_Allreduce of the same data (bench/mpi/mpi_allreduce under mpirun), each run's median,
# on RANKS ranks, beside ONE busy process (a shell loop this script starts and kills; BUSY=0
# leaves the host idle). Per size (1 KiB, 64 KiB, 1 MiB) it prints in how many runs pto was at or
# under MPI, both sides' medians and ranges, and every losing run. Where the matrix
# (l3-matrix.sh) gives a median over a few rounds, this counts single runs: a rare slow run shows.
#
#   bench/runtime/l3-paired.sh [RUNS] [RANKS] [BUILD_DIR] [MPI_BUILD_DIR]   (30, 4, build, build-mpi)
#
# Both builds must exist (scripts/test-mpi.sh makes build-mpi); it builds the two targets. Each
# run is bounded by a timeout (STEP_TIMEOUT, default 60 s); a run that fails is counted apart.
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-30}
N=${2:-4}
B=${3:-build}
MB=${4:-build-mpi}
REPS=${REPS:-5}
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
MAX=1048576
SIZES=(1024 65536 1048576)
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
MPIRUN=(mpirun --oversubscribe --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
cmake --build "$B" --target bench_dist_allreduce >/dev/null || exit 1
cmake --build "$MB" --target bench_mpi_allreduce >/dev/null || exit 1

BUSYPID=
stop_busy() { [ -n "$BUSYPID" ] && kill "$BUSYPID" 2>/dev/null && wait "$BUSYPID" 2>/dev/null; BUSYPID=; }
OUT=$(mktemp -d)
trap 'stop_busy; rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM
if [ "${BUSY:-1}" != 0 ]; then
  timeout 3600 sh -c 'while :; do :; done' &
  BUSYPID=$!
fi
row() { awk -F'|' -v b="$2" -v c="$3" '$2 + 0 == b && $2 ~ /[0-9]/ { gsub(/ /, "", $c); print $c; exit }' "$1"; }
load0=$(cut -d' ' -f1 /proc/loadavg)
: >"$OUT/res" # lines: run size pto mpi
for r in $(seq 1 "$RUNS"); do
  timeout "$STEP_TIMEOUT" "$B/bench/runtime/dist_allreduce" "$N" "$MAX" "$REPS" >"$OUT/ar" 2>/dev/null || : >"$OUT/ar"
  timeout "$STEP_TIMEOUT" "${MPIRUN[@]}" -np "$N" "$MB/bench/mpi/mpi_allreduce" "$MAX" "$REPS" >"$OUT/mpi" 2>/dev/null || : >"$OUT/mpi"
  for s in "${SIZES[@]}"; do
    echo "$r $s $(row "$OUT/ar" "$s" 3) $(row "$OUT/mpi" "$s" 5)" >>"$OUT/res"
  done
done
stop_busy
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
fam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "## l3-paired: $RUNS paired runs, $N ranks, host $([ "${BUSY:-1}" != 0 ] && echo "with one busy loop" || echo idle), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "CPU: $cpu (family $fam, model $model), $(nproc) CPUs; load average (1 min) at the start $load0, at the end $(cut -d' ' -f1 /proc/loadavg)"
echo
awk '
function med(list,   v, k, i, j, t) {
  k = split(list, v, " ")
  for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
  lo = v[1]; hi = v[k]
  return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
{
  if ($3 == "" || $4 == "") { failed[$2]++; next }
  n[$2]++; pto[$2] = pto[$2] " " $3; mpi[$2] = mpi[$2] " " $4
  if ($3 + 0 <= $4 + 0) ok[$2]++; else lost[$2] = lost[$2] sprintf(" run %d: %s against %s;", $1, $3, $4)
  if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 }
}
END {
  print "| bytes per rank | pto at or under MPI | pto median (min-max) [us] | MPI median (min-max) [us] | failed runs |"
  print "| ---: | ---: | ---: | ---: | ---: |"
  for (i = 1; i <= ns; i++) {
    s = order[i]
    pm = med(pto[s]); plo = lo; phi = hi
    mm = med(mpi[s]); mlo = lo; mhi = hi
    printf "| %d | %d of %d | %s (%s-%s) | %s (%s-%s) | %d |\n", s, ok[s], n[s], pm, plo, phi, mm, mlo, mhi, failed[s]
  }
  for (i = 1; i <= ns; i++) if (order[i] in lost) printf "\nlosing runs at %d bytes:%s", order[i], lost[order[i]]
  print ""
}' "$OUT/res"
