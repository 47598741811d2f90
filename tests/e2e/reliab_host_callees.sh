#!/usr/bin/env bash
# What a loaded host (L3) program needs is held from load to release (issue #34 item 14): the
# chips load its callees on their first run, from a private copy made when the program is
# loaded. They used to read the work dir then: with a cache pto could not use, pto compiled into
# a temporary dir and deleted it, and every host program failed ("callees/step: no manifest").
source "$(dirname "$0")/lib/common.bash"

PROG=("$EX/runtime/dist_scale.ptir" --devices 2 --dim N=2 --dim M=32 --check)
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"

# A cache dir that is refused (mode 777): compiled without the cache, into a temporary dir.
export PTO_CACHE_DIR="$T/open"
mkdir -p "$PTO_CACHE_DIR" && chmod 777 "$PTO_CACHE_DIR"
run_pto 0 run "${PROG[@]}" && expect_out PASS
expect_out "compiling without it"
expect_true "the held copies are gone after the run" test -z "$(ls -A "$TMPDIR")"

# Through the cache: the run passes, and leaves nothing in TMPDIR either.
export PTO_CACHE_DIR="$T/cache"
run_pto 0 run "${PROG[@]}" && expect_out PASS
run_pto 0 run "${PROG[@]}" && expect_out PASS
expect_true "no held copy left after cached runs" test -z "$(ls -A "$TMPDIR")"

# A copy left by a process that died is removed by the next one that holds a copy.
mkdir -p "$TMPDIR/pto-held-999999-AbCdEf/x" "$TMPDIR/pto-held-notes"
export PTO_CACHE_DIR="$T/cache2"
run_pto 0 run "${PROG[@]}" && expect_out PASS
expect_true "a dead process's copy is removed" test ! -e "$TMPDIR/pto-held-999999-AbCdEf"
expect_true "a name that is not pto's stays" test -d "$TMPDIR/pto-held-notes"
finish
