#!/usr/bin/env bash
# What a runtime-only pto (-DPTO_COMPILER=OFF; docs/remote-cache.md, *A runtime-only pto*) can and
# cannot do with no remote cache, each as the docs say: it checks and formats programs, runs a
# work dir compiled elsewhere (--check too) and finds it up to date; a miss, an uncached compile
# (--no-cache, which reads neither cache level: the message says so rather than naming a local
# cache it never looked in) and a stale work dir fail with exit 1 and say it cannot compile,
# leaving no folder behind. Slow: it builds the runtime-only pto (lib/runtime_only.bash).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/runtime_only.bash"
build_runtime_only
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY PTO_REMOTE_CACHE_KEY_FILE
export PTO_CACHE_DIR="$T/cache"
cd "$T"
rt() {
  local want=$1
  shift
  run_status "$want" "$RTPTO" "$@"
}
NOCOMPILE="this pto is runtime-only (built with -DPTO_COMPILER=OFF)"

# What needs no compiler.
rt 0 --version && expect_out "pto "
rt 0 check "$EX/add.ptir" "$EX/chain.ptir"
rt 0 fmt "$EX/add.ptir" && expect_out "program add"
rt 0 cache stats && rt 0 cache ls && rt 0 cache verify

# A work dir compiled by a full pto runs, as it is; nothing to rebuild.
run_pto 0 compile "$EX/chain.ptir" -o "$T/chain"
rt 0 run "$T/chain" --dim M=64 --in alpha=0.5 --check && expect_out PASS
rt 0 rebuild "$T/chain" && expect_out "up to date"

# A miss of both cache levels: exit 1, saying what would serve; -o's folders are not left.
rt 1 run "$EX/add.ptir" --dim M=4 && expect_out "$NOCOMPILE and cannot compile"
rt 1 compile "$EX/add.ptir" -o "$T/new/wd" && expect_out "$NOCOMPILE and cannot compile"
expect_true "a compile that could not compile leaves no folder" test ! -e "$T/new"
# --no-cache reads no cache: the message says so (it named a local cache it never looked in).
for c in "run $EX/add.ptir --dim M=4" "bench $EX/add.ptir --dim M=4 --rounds 1" \
  "compile $EX/add.ptir -o $T/nc/wd"; do
  # shellcheck disable=SC2086 # the command and its arguments as words
  rt 1 $c --no-cache
  expect_out "$NOCOMPILE and cannot compile, and an uncached compile (--no-cache) reads neither"
  expect_true "--no-cache: no local cache named" test "$(grep -c "no usable entry" <<<"$OUT")" = 0
done
expect_true "no folder left by --no-cache" test ! -e "$T/nc"

# A stale work dir (a hand edit): rebuild and run refuse with exit 1; the dir stays as it was.
echo "// a hand edit" >>"$T/chain/orchestration/main.cpp"
manifest=$(cat "$T/chain/manifest.json")
rt 1 rebuild "$T/chain" && expect_out "$NOCOMPILE: it cannot compile or rebuild"
rt 1 run "$T/chain" --dim M=64 --in alpha=0.5 && expect_out "$NOCOMPILE: it cannot compile or rebuild"
PTO_NO_REBUILD=1 rt 1 run "$T/chain" --dim M=64 --in alpha=0.5
expect_out "orchestration/main.cpp: edited since it was compiled"
expect_true "the manifest is untouched" test "$(cat "$T/chain/manifest.json")" = "$manifest"
# ... and a full pto rebuilds it, after which the runtime-only one runs it again.
run_pto 0 rebuild "$T/chain"
rt 0 run "$T/chain" --dim M=64 --in alpha=0.5 --check && expect_out PASS
finish
