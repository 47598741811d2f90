#!/usr/bin/env bash
# pto cache rm / clear / gc / verify of a read-only cache dir (chmod -R a-w) say what they did:
# an entry that cannot be removed is named, exit 1 (the job ran and failed), and never reported
# removed (they printed "removed KEY", "removed 1 entries", "evicted 1 entries", exit 0, and
# verify "(discarded)", and the entry stayed). Read commands (stats, ls, show, verify) work on it. Run as a user that is not root
# (root may remove anything): as root, through setpriv as nobody.
source "$(dirname "$0")/lib/common.bash"

as_unprivileged_user
C="$D/cache"
# upto STATUS ARGS...: pto as that user, in $D, with its own cache $C.
upto() {
  local want=$1
  shift
  run_status "$want" "${as_user[@]}" env PTO_CACHE_DIR="$C" HOME="$D" "$PTO" "$@"
}
cp "$EX/add.ptir" "$D/add.ptir"
[ "${#as_user[@]}" = 0 ] || chown nobody:nogroup "$D/add.ptir"
cd "$D" || exit 1

upto 0 compile add.ptir -o wd
upto 0 cache ls --json
key=$(printf '%s' "$OUT" | sed -n 's/.*"key": "\([0-9a-f]*\)".*/\1/p' | head -1)
expect_true "one entry" test "${#key}" = 32
entry="$C/${key:0:2}/${key:2}"

chmod -R a-w "$C"
upto 0 cache stats && expect_out "entries          1"
upto 0 cache ls && expect_out "$key"
upto 0 cache show "${key:0:6}" && expect_out "$key"
upto 0 cache verify && expect_out "1 entries checked, 0 corrupt"
upto 1 cache rm "${key:0:6}" && expect_out "cannot remove cache entry $entry: Permission denied"
expect_true "rm does not say it removed it" test -z "$(grep -F "removed $key" <<<"$OUT")"
upto 1 cache clear && expect_out "cannot remove cache entry $entry: Permission denied"
expect_true "clear does not say it removed it" test -z "$(grep -F "removed 1" <<<"$OUT")"
# gc needs the lock file: the root writable, the entry's fan-out dir not.
chmod u+w "$C"
upto 0 cache gc --max-size 4096 && expect_out "evicted 0 entries (0 B); 1 entries"
expect_true "the entry is still there" test -d "$entry"
upto 0 cache ls && expect_out "$key"

# Writable again: removed.
chmod -R u+w "$C"
upto 0 cache rm "${key:0:6}" && expect_out "removed $key"
expect_true "the entry is gone" test ! -e "$entry"
# verify of a corrupt entry it cannot remove: reported "kept", not "discarded" (exit 1 either way).
upto 0 compile add.ptir -o wd
echo "# damaged" >>"$entry/program.ptir"
chmod -R a-w "$C"
upto 1 cache verify && expect_out "corrupt  $key: cannot remove $entry (Permission denied): " &&
  expect_out "(kept)" && expect_out "1 entries checked, 1 corrupt (some could not be removed)"
expect_true "the corrupt entry stays" test -d "$entry"
chmod -R u+w "$C"
upto 1 cache verify && expect_out "(discarded)" && expect_out "1 entries checked, 1 corrupt (discarded)"
expect_true "the corrupt entry is gone" test ! -e "$entry"
upto 0 compile add.ptir -o wd
upto 0 cache clear && expect_out "removed 1 entries"
finish
