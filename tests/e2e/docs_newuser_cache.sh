#!/usr/bin/env bash
# The binary cache as a new user drives it from the README and docs/cli.md alone: two
# specialisations of one program are two entries (`pto cache ls` shows what each was specialised
# for), PTO_CACHE_DEBUG=1's key.txt of the two differs in that scalar's line only (how to tell
# why a compile missed), `show` takes a unique start of a key, a corrupted binary is found by
# `verify` (exit 1) and the next run compiles again, `gc --max-size` evicts the least recently
# used entry first, and a PTO_CACHE_MAX_SIZE below one entry's size evicts each entry as it is
# stored: the run still succeeds, and nothing is kept.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
unset PTO_CACHE_MAX_SIZE PTO_REMOTE_CACHE
cd "$T" || exit 1
cp "$PTO_SOURCE_DIR/tests/e2e/data/newuser_pipe.ptir" pipe.ptir
for a in 2 3; do
  PTO_CACHE_DEBUG=1 run_pto 0 compile pipe.ptir -o "wd$a" -D alpha=$a
done
run_pto 0 cache ls
expect_out "alpha=2" && expect_out "alpha=3"
run_pto 0 cache ls --json
mapfile -t keys < <(sed -n 's/.*"key": "\([0-9a-f]*\)".*/\1/p' <<<"$OUT")
expect_true "two entries" test "${#keys[@]}" = 2
new=${keys[0]} old=${keys[1]} # most recently used first: alpha=3, then alpha=2
run_pto 0 cache show "${old:0:6}"
expect_out "alpha: f32 = 2" && expect_out "bias: f32 = runtime"
diff "$PTO_CACHE_DIR/${old:0:2}/${old:2}/key.txt" "$PTO_CACHE_DIR/${new:0:2}/${new:2}/key.txt" >keys.diff
expect_true "the key texts differ in alpha's line alone" \
  test "$(grep -c '^[<>]' keys.diff)" = 2 -a "$(grep -c '^[<>] param\.4=scalar;f32;=' keys.diff)" = 2

# a corrupted binary: verify finds it (exit 1) and discards it; the next run compiles again
so="$PTO_CACHE_DIR/${old:0:2}/${old:2}/kernels/kernels.so"
chmod u+w "$so"
printf 'X' | dd of="$so" bs=1 seek=100 conv=notrunc 2>/dev/null
run_pto 1 cache verify
expect_out "corrupt  $old" && expect_out "1 corrupt (discarded)"
run_pto 0 cache stats
misses=$(sed -n 's/^misses *//p' <<<"$OUT")
run_pto 0 run pipe.ptir -D alpha=2 --dim M=16 --in bias=0
run_pto 0 cache stats
expect_true "the run after verify compiled again" test "$(sed -n 's/^misses *//p' <<<"$OUT")" = $((misses + 1))

# gc: the least recently used (alpha=3 now) goes first; a bound one byte short of both entries
run_pto 0 cache ls --json
total=$(($(sed -n 's/.*"bytes": \([0-9]*\),.*/\1/p' <<<"$OUT" | paste -sd+)))
run_pto 0 cache gc --max-size $((total - 1))
expect_out "evicted 1 entries"
run_pto 0 cache ls
expect_out "alpha=2"
expect_true "gc evicted the least recently used entry" test -z "$(grep "alpha=3" <<<"$OUT")"

# a bound below one entry's size: every store is evicted at once, and the run still works
run_pto 0 cache clear
PTO_CACHE_MAX_SIZE=4K run_pto 0 run pipe.ptir -D alpha=4 --dim M=16 --in bias=0 --check
expect_out PASS
run_pto 0 cache stats
expect_out "entries          0"
expect_out "evictions        2"
finish
