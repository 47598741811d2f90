#!/usr/bin/env bash
# pto killed (SIGTERM, SIGHUP, SIGKILL) while it writes an output: the old file stays as it was
# and no partial temp file is left beside it (a 64 MB FILE.npy.tmp-XXXXXX was, before the command
# line removed its temp files on SIGTERM and SIGHUP, and, for SIGKILL, which no handler sees,
# before the output was written to an unnamed O_TMPFILE file, named only once complete); the
# process still ends by the signal.
# A file that grows past `ulimit -f` (SIGXFSZ, whose default action killed pto, leaving the
# partial temp file, or a compile's half-built dir and cache temp dir) fails the write with
# "File too large", reported as a full disk is: exit 1, the old file as it was, nothing left.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
cd "$T" || exit 1

run_pto 0 compile "$EX/add.ptir" -o "$T/w"
# Whether pto (pid $1) is writing the output: a named temp file, or an unnamed one open in $T.
TP=$(pwd -P)
writing() {
  compgen -G 'c.npy.tmp-*' >/dev/null || ls -l "/proc/$1/fd" 2>/dev/null | grep -F -- "$TP/#" >/dev/null
}
for sig in TERM HUP KILL; do
  caught=0
  # The kill lands while the temp file exists (it is sent as soon as the file shows); a run
  # that wrote it all before the kill is tried again.
  for try in 1 2 3 4 5; do
    rm -f c.npy c.npy.tmp-*
    echo precious >c.npy
    "$PTO" run "$T/w" --dim M=131072 --out c=c.npy >/dev/null 2>&1 &
    pid=$!
    until writing "$pid" || ! kill -0 "$pid" 2>/dev/null; do :; done
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

# ulimit -f counts 1024-byte blocks: 1000 of them is less than the 2 MB output.
rm -f c.npy c.npy.tmp-*
echo precious >c.npy
run_status 1 bash -c 'ulimit -f 1000 && exec "$0" run "$1" --dim M=4096 --out c=c.npy' "$PTO" "$T/w"
expect_out "pto run: --out c: cannot write c.npy: File too large (the old file is unchanged)"
expect_true "ulimit -f: the old file is kept" test "$(cat c.npy)" = precious
expect_true "ulimit -f: no temp file is left" test -z "$(compgen -G 'c.npy.tmp-*')"

{
  echo "# $(head -c 60000 /dev/zero | tr '\0' x)"
  cat "$EX/add.ptir"
} >big.ptir
cp big.ptir big.orig
run_status 1 bash -c 'ulimit -f 20 && exec "$0" fmt -i big.ptir' "$PTO"
expect_out "File too large"
expect_true "fmt -i past ulimit -f: the old file is kept" cmp -s big.ptir big.orig
expect_true "fmt -i past ulimit -f: no temp file is left" test -z "$(compgen -G 'big.ptir.tmp-*')"

mkdir fresh-cache
run_status 1 bash -c 'ulimit -f 20 && PTO_CACHE_DIR=$PWD/fresh-cache exec "$0" compile "$1" -o wsm' \
  "$PTO" "$EX/softmax.ptir"
expect_out "File too large"
expect_true "compile past ulimit -f: no work dir is left" test ! -e wsm
expect_true "compile past ulimit -f: the cache's tmp/ is empty" \
  test -z "$(ls -A fresh-cache/tmp 2>/dev/null)"

finish
