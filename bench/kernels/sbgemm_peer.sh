#!/usr/bin/env bash
# Builds the cblas_sbgemm peer of bench_kernels' bf16 matmul (d) and prints its path:
#   PTO_BENCH_SBGEMM_LIB=$(bench/kernels/sbgemm_peer.sh [BUILD_DIR])
# Debian's OpenBLAS (0.3.21) is built without BUILD_BFLOAT16, so it exports no cblas_sbgemm. This
# builds the same version from Debian's source tarball (checked against its SHA-256) with
# BUILD_BFLOAT16=1 and TARGET=COOPERLAKE, OpenBLAS's kernels for AVX512_BF16 (single precision and
# the C interface only, pthreads), into BUILD_DIR/openblas-bf16 (default build/): about three
# minutes on 2 cores, once. Needs a CPU with avx512_bf16 (exits 3 without one), gcc and make;
# installs curl with apt-get when it is missing. Never needed to build or test pto.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
VER=0.3.21
TARBALL=openblas_${VER}+ds.orig.tar.xz
SHA256=bbec5cca61c8033b2d57aaecde205d709323a0b35a5f193290081dbb3826848a
URL=http://deb.debian.org/debian/pool/main/o/openblas/$TARBALL

if ! grep -qw avx512_bf16 /proc/cpuinfo; then
  echo "sbgemm_peer.sh: this CPU has no avx512_bf16: no sbgemm peer (pto's bf16 matmul runs" \
    "its f32 fma path here)" >&2
  exit 3
fi
case $B in
/*) D=$B/openblas-bf16 ;;
*) D=$PWD/$B/openblas-bf16 ;;
esac
LIB=$D/OpenBLAS-$VER/libopenblas.so.0
if [ ! -f "$LIB" ]; then
  if ! command -v curl >/dev/null; then
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get install -y curl >&2
  fi
  mkdir -p "$D"
  if [ ! -f "$D/$TARBALL" ]; then
    echo "sbgemm_peer.sh: downloading $URL" >&2
    curl -sSfL -o "$D/$TARBALL.part" "$URL"
    mv "$D/$TARBALL.part" "$D/$TARBALL"
  fi
  echo "$SHA256  $D/$TARBALL" | sha256sum -c --quiet - >&2
  rm -rf "$D/OpenBLAS-$VER"
  tar -C "$D" -xf "$D/$TARBALL"
  echo "sbgemm_peer.sh: building OpenBLAS $VER with BUILD_BFLOAT16=1 (a few minutes; log:" \
    "$D/build.log)" >&2
  if ! make -C "$D/OpenBLAS-$VER" -j"$(nproc)" TARGET=COOPERLAKE BUILD_BFLOAT16=1 BUILD_SINGLE=1 \
    NOFORTRAN=1 NO_LAPACK=1 NO_LAPACKE=1 ONLY_CBLAS=1 USE_OPENMP=0 NUM_THREADS=64 NO_STATIC=1 \
    libs shared >"$D/build.log" 2>&1; then
    tail -20 "$D/build.log" >&2
    echo "sbgemm_peer.sh: the build failed (log: $D/build.log)" >&2
    exit 1
  fi
fi
if ! nm -D "$LIB" | grep -w cblas_sbgemm >/dev/null; then
  echo "sbgemm_peer.sh: $LIB exports no cblas_sbgemm" >&2
  exit 1
fi
echo "$LIB"
