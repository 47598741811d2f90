#!/usr/bin/env bash
# The kernel benchmarks of bench/RESULTS.md ("Kernels"), in one run:
#   bench/kernels/run.sh [BUILD_DIR] [REPS] [NCORES]     (defaults: build, 10, 2)
# Installs Debian's libopenblas-dev when it is missing (the sgemm peer; never needed to build or
# test pto), builds the sbgemm peer once on CPUs with avx512_bf16 (sbgemm_peer.sh), builds
# bench_kernels, prints the machine (CPU model, family/model, flags) and its load, then runs the
# benchmark with the sizes of the issue: elementwise 4096x4096, softmax 4096x1024, matmul 1024^3
# (f32, and bf16 into f32), and the decode step's products [1|8, 4096] x [4096, 4096] f32
# (PTO_BENCH_KERNELS_ONLY=decode runs those alone). A private cache dir keeps the compile out of the timings and away
# from other caches.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
REPS=${2:-10}
NCORES=${3:-2}

if ! grep -q 'libopenblas\.so' <<<"$(ldconfig -p)"; then
  echo "installing libopenblas-dev (the sgemm peer)" >&2
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y libopenblas-dev >&2
fi

[ -f "$B/build.ninja" ] || cmake -S . -B "$B" -G Ninja >&2
ninja -C "$B" bench_kernels pto_compiler >&2

# The bf16 matmul's peer, cblas_sbgemm, is in no Debian package: build it once where the CPU
# has avx512_bf16 (bench/kernels/sbgemm_peer.sh); the bf16 table skips the peer without it.
if [ -z "${PTO_BENCH_SBGEMM_LIB:-}" ] && grep -qw avx512_bf16 /proc/cpuinfo; then
  PTO_BENCH_SBGEMM_LIB=$(bench/kernels/sbgemm_peer.sh "$B") || PTO_BENCH_SBGEMM_LIB=
  export PTO_BENCH_SBGEMM_LIB
fi

export PTO_CACHE_DIR=${PTO_CACHE_DIR:-$PWD/$B/bench-kernels-cache}
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "cpu flags: $(sed -n 's/^flags\s*: //p' /proc/cpuinfo | head -1)"
echo "cpu family/model: $(sed -n 's/^cpu family\s*: //p' /proc/cpuinfo | head -1)/$(sed -n 's/^model\s*: //p' /proc/cpuinfo | head -1)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/bench/kernels/bench_kernels" 4096 4096 1024 "$REPS" "$NCORES"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
