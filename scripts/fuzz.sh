#!/usr/bin/env bash
# Runs one libFuzzer target of tests/fuzz for a number of seconds:
#   scripts/fuzz.sh TARGET SECONDS      TARGET: ptir | manifest | elf | strace | npy | remote | all
# Builds the targets with clang (libFuzzer + ASan + UBSan) in build-fuzz/ (BUILD_DIR overrides),
# seeds each from tests/fuzz/seeds and the examples and test programs, keeps the grown corpus
# in build-fuzz/corpus/TARGET, and leaves any crash as build-fuzz/artifacts/TARGET/crash-*
# (exit status 1). "all" runs every target for SECONDS each.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
B=${BUILD_DIR:-build-fuzz}
CLANG=${CLANG:-clang}
targets=(ptir manifest elf strace npy remote)

# libFuzzer ships with Debian's clang in libclang-rt-N-dev; install it when it is missing.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$probe/p.c"
if ! "$CLANG" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
  major=$("$CLANG" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  echo "fuzz.sh: $CLANG has no libFuzzer; installing libclang-rt-$major-dev" >&2
  apt-get install -y "libclang-rt-$major-dev" >&2
  "$CLANG" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p"
fi

if [ ! -f "$B/build.ninja" ]; then
  CC="$CLANG" CXX="${CLANGXX:-clang++}" cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPTO_FUZZ=ON -DPTO_SANITIZE=address,undefined -DPTO_BUILD_TESTS=OFF >/dev/null
fi
[ "$target" = all ] && run=("${targets[@]}") || run=("$target")
if ! ninja -C "$B" $(printf 'fuzz_%s ' "${run[@]}") >"$B/build.log" 2>&1; then
  echo "fuzz.sh: building the fuzz targets failed; the end of $B/build.log:" >&2
  tail -n 40 "$B/build.log" >&2
  exit 1
fi

seed() { # TARGET DIR: fill DIR with the seeds of TARGET
  local t=$1 d=$2
  mkdir -p "$d"
  case $t in
  ptir) cp examples/*.ptir tests/programs/*.ptir tests/corpus/*/*.ptir "$d"/ 2>/dev/null || true ;;
  *) cp tests/fuzz/seeds/"$t"/* "$d"/ ;;
  esac
  # Inputs that once crashed a reader stay in every run's seeds.
  cp tests/fuzz/regressions/"$t"/* "$d"/ 2>/dev/null || true
}

status=0
for t in "${run[@]}"; do
  corpus="$B/corpus/$t" seeds="$B/seeds/$t" art="$B/artifacts/$t"
  mkdir -p "$corpus" "$art"
  rm -rf "$seeds"
  seed "$t" "$seeds"
  # A remote entry holds whole binaries: its seed (a real entry) is about 85 KB.
  max_len=65536
  [ "$t" = remote ] && max_len=262144
  echo "== fuzz_$t for ${seconds}s (corpus $corpus)"
  # halt_on_error: UBSan findings stop the run like crashes do. detect_leaks: a leak is a bug.
  if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$B/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$art/" "$corpus" "$seeds" \
    >"$B/fuzz_$t.log" 2>&1; then
    status=1
    echo "fuzz_$t: FOUND A PROBLEM (see $B/fuzz_$t.log and $art/)"
  fi
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|SUMMARY' "$B/fuzz_$t.log" || true
  tail -n 3 "$B/fuzz_$t.log" | grep -E '^#[0-9]+' || true
done
exit $status
