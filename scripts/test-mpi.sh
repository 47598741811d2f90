#!/usr/bin/env bash
# The distributed worker's MPI transport (-DPTO_MPI=ON): installs Debian's Open MPI
# (libopenmpi-dev openmpi-bin) when it is missing, builds pto with it in ./build-mpi (BUILD_DIR
# overrides), then runs the L3 suite under mpirun on every window path (ctest -L mpi: shared
# windows, forced one-sided windows, Open MPI's UCX components over TCP on loopback) and the
# distributed tests of the shared-memory transport in the same build. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for p in libopenmpi-dev openmpi-bin; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "test-mpi: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "test-mpi: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
BUILD_DIR=${BUILD_DIR:-build-mpi} PTO_CMAKE_ARGS="-DPTO_MPI=ON ${PTO_CMAKE_ARGS:-}" scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build-mpi}" --output-on-failure -j"$(nproc)" \
  -R 'mpi|dist|example_dist' "$@"
