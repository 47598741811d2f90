#!/usr/bin/env bash
# The pto command as docs/cli.md lists it: every subcommand exists and has --help with an example,
# bad usage exits 2 naming the problem, and a progress bar is drawn only on a terminal, for
# compiles of four kernels or more.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

CMDS=(compile run bench cache build-id rebuild fmt check trace)

# ---- every subcommand: listed, --help with usage and an example, 'pto help CMD' alike ------------
run_pto 0 --help
for c in "${CMDS[@]}"; do
  expect_true "'pto --help' lists $c" grep -qE "^  $c +[a-z]" <<<"$OUT"
done
for c in "${CMDS[@]}"; do
  run_pto 0 "$c" --help && expect_out "usage: pto $c" &&
    expect_true "pto $c --help has an example" grep -qE '^examples?:$' <<<"$OUT" &&
    expect_true "pto $c --help shows an example command line" grep -qE "^  pto $c( |$)" <<<"$OUT"
  help_text=$OUT
  dup=$(grep -oE '^  --[a-z-]+' <<<"$help_text" | sort | uniq -d)
  expect_true "pto $c --help describes each option once${dup:+ (twice: $dup)}" test -z "$dup"
  run_pto 0 "$c" -h
  expect_true "pto $c -h is --help" test "$OUT" = "$help_text"
  run_pto 0 help "$c"
  expect_true "pto help $c is --help" test "$OUT" = "$help_text"
done
run_pto 0 --version && expect_out "pto "

# ---- bad usage: exit 2 and a message naming what is wrong ---------------------------------------
run_pto 2 compile && expect_out "pto compile: no program given"
run_pto 2 run && expect_out "pto run: no program given"
run_pto 2 bench && expect_out "pto bench: no program given"
run_pto 2 cache && expect_out "pto cache: "
run_pto 2 build-id && expect_out "pto build-id: no file given"
run_pto 2 rebuild && expect_out "pto rebuild: "
run_pto 2 fmt && expect_out "pto fmt: no file given"
run_pto 2 check && expect_out "pto check: no file given"
run_pto 2 trace && expect_out "pto trace: no log file given"
for c in compile run bench fmt check build-id trace; do
  run_pto 2 "$c" --frobnicate x && expect_out "unknown option '--frobnicate'" &&
    expect_out "see 'pto $c --help'"
done
run_pto 2 fmt "$EX/add.ptir" "$EX/chain.ptir" && expect_out "one file at a time"
run_pto 2 compile "$EX/add.ptir" "$EX/chain.ptir" -o "$T/w" && expect_out "one program at a time"
run_pto 2 run "$EX/add.ptir" --dim M && expect_out "--dim M: expected NAME=VALUE"
run_pto 2 run "$EX/add.ptir" --dim M=-1 && expect_out "--dim M=-1: expected a non-negative integer"
run_pto 2 run "$EX/add.ptir" --dim M=4 --rtol x && expect_out "--rtol x: expected a finite non-negative number"

# A work dir was compiled already: compile options cannot apply to it and are refused, not ignored.
run_pto 0 compile "$EX/chain.ptir" -o "$T/chain_wd"
for o in "-D alpha=runtime" "--arg x=64x64" "--entry main" "-O3" "--no-cache"; do
  # shellcheck disable=SC2086
  run_pto 2 run "$T/chain_wd" --dim M=16 --in alpha=1 $o &&
    expect_out "${o%% *}: compile options apply to a .ptir program; $T/chain_wd is a work dir"
done
run_pto 2 bench "$T/chain_wd" --dim M=16 --in alpha=1 -O1 --rounds 1 && expect_out "-O1: compile options apply"
run_pto 0 run "$T/chain_wd" --dim M=16 --in alpha=1 --check && expect_out PASS
run_pto 2 run "$EX/chain.ptir" --dim M=16 --in alpha=1 --depfile "$T/d" &&
  expect_out "--depfile: a depfile describes a work dir: pass it to pto compile"

# ---- progress bars: only on a terminal --------------------------------------------------------
FOUR="$PTO_SOURCE_DIR/tests/programs/four_kernels.ptir"
run_pto 0 compile "$FOUR" -o "$T/four" --no-cache
expect_true "no compile progress bar when stderr is not a terminal" \
  bash -c '! grep -q "compile \[" <<<"$1"' _ "$OUT"
if command -v script >/dev/null; then
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" compile "$FOUR" -o "$T/four2" --no-cache)" /dev/null)
  expect_true "a compile progress bar on a terminal, one step per kernel" \
    grep -q "compile \[#*\.*\] 4/4 kernels" <<<"$TTY_OUT"
  expect_true "the bar starts at 0/4" grep -q "compile \[\.*\] 0/4 kernels" <<<"$TTY_OUT"
  # run compiles through the cache: a miss draws the bar, a hit compiles nothing
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" run "$FOUR" --dim M=16 --check)" /dev/null)
  expect_true "pto run of an uncached program draws the compile bar" \
    grep -q "compile \[#*\] 4/4 kernels" <<<"$TTY_OUT"
  expect_true "and then runs it" grep -q "PASS" <<<"$TTY_OUT"
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" run "$FOUR" --dim M=16)" /dev/null)
  expect_true "a cache hit draws no compile bar" bash -c '! grep -q "compile \[" <<<"$1"' _ "$TTY_OUT"
  # fewer kernels than four: no bar
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" compile "$EX/chain.ptir" -o "$T/chain" --no-cache)" /dev/null)
  expect_true "no bar for a three-kernel program" bash -c '! grep -q "compile \[" <<<"$1"' _ "$TTY_OUT"
else
  echo "script(1) not found: the terminal checks are skipped"
fi
finish
