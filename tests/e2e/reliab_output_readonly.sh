#!/usr/bin/env bash
# A file its owner made read-only (chmod 444) is not replaced by an output (pto fmt -i, --out,
# --swimlane, --depfile), as a shell's '>' or cp leaves it: the temp file and rename pto writes
# through used to replace it, mode and all. Refused before the run where the path is an option
# (exit 2, the flag and file named), and the file left as it was. Run as a user that is not root
# (root may write any file): as root, through setpriv as nobody.
source "$(dirname "$0")/lib/common.bash"

as_unprivileged_user
# upto STATUS ARGS...: pto as that user, in $D.
upto() {
  local want=$1
  shift
  run_status "$want" "${as_user[@]}" env PTO_CACHE_DIR="$D/cache" HOME="$D" "$PTO" "$@"
}
owned() { [ "${#as_user[@]}" = 0 ] || chown nobody:nogroup "$@"; }

cp "$EX/add.ptir" "$D/add.ptir"
sed 's/^program add/program   add/' "$EX/add.ptir" >"$D/ro.ptir" # not in canonical form
for f in c.npy s.json w.d; do echo precious >"$D/$f"; done
owned "$D/add.ptir" "$D/ro.ptir" "$D/c.npy" "$D/s.json" "$D/w.d"
chmod 444 "$D/ro.ptir" "$D/c.npy" "$D/s.json" "$D/w.d"
ro_sum=$(cksum <"$D/ro.ptir")

cd "$D" || exit 1
upto 2 fmt -i ro.ptir && expect_out "cannot write ro.ptir: Permission denied (the old file is unchanged)"
expect_true "fmt -i left the read-only file" test "$(cksum <"$D/ro.ptir")" = "$ro_sum"
upto 2 run add.ptir --dim M=8 --out c=c.npy && expect_out "--out c.npy: Permission denied: the file is not writable"
upto 2 run add.ptir --dim M=8 --swimlane s.json && expect_out "--swimlane s.json: Permission denied"
upto 2 compile add.ptir -o w --depfile w.d && expect_out "--depfile w.d: Permission denied"
expect_true "the read-only outputs are unchanged" test "$(cat c.npy s.json w.d | tr -d '\n')" = preciouspreciousprecious
# Writable again: written.
chmod 644 "$D/c.npy"
upto 0 run add.ptir --dim M=8 --out c=c.npy
expect_true "a writable file is replaced" test "$(head -c 6 c.npy | tail -c 5)" = NUMPY

finish
