#!/usr/bin/env bash
# pto killed (SIGTERM, SIGHUP) while it writes an output: the old file stays as it was and no
# partial temp file is left beside it (a 64 MB FILE.npy.tmp-XXXXXX was, before the command line
# removed its temp files on those signals); the process still ends by the signal.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
cd "$T" || exit 1

run_pto 0 compile "$EX/add.ptir" -o "$T/w"
for sig in TERM HUP; do
  caught=0
  # The kill lands while the temp file exists (it is sent as soon as the file shows); a run
  # that wrote it all before the kill is tried again.
  for try in 1 2 3 4 5; do
    rm -f c.npy c.npy.tmp-*
    echo precious >c.npy
    "$PTO" run "$T/w" --dim M=131072 --out c=c.npy >/dev/null 2>&1 &
    pid=$!
    until compgen -G 'c.npy.tmp-*' >/dev/null || ! kill -0 "$pid" 2>/dev/null; do :; done
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    [ "$rc" = 0 ] && continue
    caught=1
    expect_true "SIG$sig: pto ends by the signal (status $rc)" test "$rc" = $((128 + $(kill -l "$sig")))
    expect_true "SIG$sig: the old file is kept" test "$(cat c.npy)" = precious
    expect_true "SIG$sig: no temp file is left" test -z "$(compgen -G 'c.npy.tmp-*')"
    break
  done
  expect_true "SIG$sig reached pto while it wrote the output" test "$caught" = 1
done

finish
