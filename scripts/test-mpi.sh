#!/usr/bin/env bash
# The distributed worker's MPI transport (-DPTO_MPI=ON): installs Debian's Open MPI
# (libopenmpi-dev openmpi-bin) when it is missing, builds pto with it in ./build-mpi (BUILD_DIR
# overrides), then runs the L3 suite under mpirun on every window path (ctest -L mpi: shared
# windows, forced one-sided windows, Open MPI's UCX components over TCP on loopback) and the
# distributed tests of the shared-memory transport in the same build. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
PTO_EXTRA_PACKAGES="libopenmpi-dev openmpi-bin" BUILD_DIR=${BUILD_DIR:-build-mpi} PTO_CMAKE_ARGS="-DPTO_MPI=ON ${PTO_CMAKE_ARGS:-}" scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build-mpi}" --output-on-failure -j"$(nproc)" \
  -R 'mpi|dist|example_dist' "$@"
