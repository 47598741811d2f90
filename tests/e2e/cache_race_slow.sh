#!/usr/bin/env bash
# 16 processes compile the same program into an empty cache at once: all succeed, there is one
# entry, every work dir is whole and runs, and the counters add up (lost races are allowed).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
N=16
pids=()
for i in $(seq 1 $N); do
  "$PTO" compile "$EX/chain.ptir" -o "$T/w$i" >"$T/log$i" 2>&1 &
  pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
expect_true "all $N compiles succeed" test "$fails" = 0
[ "$fails" = 0 ] || cat "$T"/log*
entries=$(find "$PTO_CACHE_DIR" -mindepth 2 -maxdepth 2 -path "$PTO_CACHE_DIR/[0-9a-f][0-9a-f]/*" | wc -l)
expect_true "one entry" test "$entries" = 1
run_pto 0 cache verify
expect_out "1 entries checked, 0 corrupt"
for i in $(seq 2 $N); do
  expect_true "work dir $i equals work dir 1" cmp -s "$T/w1/manifest.json" "$T/w$i/manifest.json"
done
for i in 1 $N; do
  run_pto 0 run "$T/w$i" --dim M=50 --in alpha=0.5 --check && expect_out PASS
done
run_pto 0 cache stats --json
json=$OUT
num() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" <<<"$json"; }
expect_true "one store" test "$(num stores)" = 1
expect_true "misses = stores + races" test "$(num misses)" = $(($(num stores) + $(num races)))
expect_true "every compile is a hit or a miss" test $(($(num hits) + $(num misses))) = $N
echo "races: $(num races), hits: $(num hits), misses: $(num misses)"
expect_true "no stale build dirs" test -z "$(ls -A "$PTO_CACHE_DIR/tmp" 2>/dev/null)"
finish
