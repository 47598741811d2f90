#!/usr/bin/env bash
# Installs what pto needs to build on Debian (12 "bookworm" or later) when it is missing, then
# configures and builds pto in ./build. Sourced by quickstart.sh and test.sh; safe to rerun.
# PTO_EXTRA_PACKAGES adds packages an optional part needs (scripts/test-mpi.sh: Open MPI).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(llvm-19-dev libelf-dev libxxhash-dev libjansson-dev libcmocka-dev cmake ninja-build
          pkg-config gcc g++ make binutils python3-numpy python3-pytest libcurl4-openssl-dev
          libhiredis-dev libssl-dev nginx-core redis-server ${PTO_EXTRA_PACKAGES:-})
missing=()
for p in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO_WERROR=ON ${PTO_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j"$(nproc)"
