#!/usr/bin/env bash
# pto fmt -i of a file with other hard links rewrites it in place, so that every link gets the
# new text (a rename gave the name a new file and left the other links the old one), growing or
# shrinking it; a write that fails there (past `ulimit -f`) leaves the old text and the links; a
# read-only one is refused. A file of one link is still replaced atomically, keeping its user.*
# extended attributes and its POSIX ACL (a rename dropped them).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

"$PTO" fmt "$EX/add.ptir" >"$T/canon.ptir"
# The same program not in canonical form: shorter (no indentation) and longer (wider).
sed 's/^ *//' "$EX/add.ptir" >"$T/short.ptir"
sed 's/^  /        /' "$EX/add.ptir" >"$T/long.ptir"
expect_true "the short form is shorter" test "$(wc -c <"$T/short.ptir")" -lt "$(wc -c <"$T/canon.ptir")"
expect_true "the long form is longer" test "$(wc -c <"$T/long.ptir")" -gt "$(wc -c <"$T/canon.ptir")"

for form in short long; do
  cp "$T/$form.ptir" "$T/a-$form.ptir"
  ln "$T/a-$form.ptir" "$T/b-$form.ptir"
  ino=$(stat -c %i "$T/a-$form.ptir")
  run_pto 0 fmt -i "$T/a-$form.ptir"
  expect_true "$form: the file is formatted" cmp -s "$T/a-$form.ptir" "$T/canon.ptir"
  expect_true "$form: its other link has the new text" cmp -s "$T/b-$form.ptir" "$T/canon.ptir"
  expect_true "$form: one inode, two links" \
    test "$(stat -c %i.%h "$T/a-$form.ptir")" = "$ino.2"
  expect_true "$form: the other link is the same inode" \
    test "$(stat -c %i "$T/b-$form.ptir")" = "$ino"
done
expect_true "no temp files left" test -z "$(find "$T" -name '*.tmp-*')"

# A write that fails in place (the file would grow past `ulimit -f`): the old text stays, in both
# links. The short form is padded with a comment (kept as it is) to end 20 bytes before 2 KiB,
# so that its canonical form ends past it.
{
  head -c $((2048 - 20 - $(wc -c <"$T/short.ptir"))) /dev/zero | tr '\0' x | sed 's/^/# /'
  echo
  cat "$T/short.ptir"
} >"$T/edge.ptir"
expect_true "the padded file is under 2 KiB" test "$(wc -c <"$T/edge.ptir")" -lt 2048
expect_true "its canonical form is over 2 KiB" test "$("$PTO" fmt "$T/edge.ptir" | wc -c)" -gt 2048
cp "$T/edge.ptir" "$T/c.ptir"
ln "$T/c.ptir" "$T/d.ptir"
run_status 1 bash -c "ulimit -f 2 && exec '$PTO' fmt -i '$T/c.ptir'"
expect_out "cannot write $T/c.ptir: File too large (the old file is unchanged)"
expect_true "the old text stays" cmp -s "$T/c.ptir" "$T/edge.ptir"
expect_true "in both links" test "$(stat -c %h "$T/c.ptir")" = 2
expect_true "of one inode" test "$(stat -c %i "$T/c.ptir")" = "$(stat -c %i "$T/d.ptir")"
run_pto 0 fmt -i "$T/c.ptir"
expect_true "without the limit it is formatted, in both links" \
  cmp -s "$T/d.ptir" <("$PTO" fmt "$T/edge.ptir")

# A file in canonical form already is not written.
cp "$T/canon.ptir" "$T/e.ptir"
touch -d @1000000000 "$T/e.ptir"
ln "$T/e.ptir" "$T/f.ptir"
run_pto 0 fmt -i "$T/e.ptir"
expect_true "its mtime stays" test "$(stat -c %Y "$T/f.ptir")" = 1000000000

# A read-only file with other links is refused, unchanged (root may write any file: a user's).
as_unprivileged_user
"${as_user[@]}" cp "$T/short.ptir" "$D/ro.ptir"
"${as_user[@]}" ln "$D/ro.ptir" "$D/ro2.ptir"
chmod 444 "$D/ro.ptir"
run_status 2 "${as_user[@]}" "$PTO" fmt -i "$D/ro.ptir"
expect_out "cannot write $D/ro.ptir: Permission denied (the old file is unchanged)"
expect_true "the read-only file is unchanged" cmp -s "$D/ro2.ptir" "$T/short.ptir"

# One link: replaced by a rename, keeping its extended attributes and its ACL. The ACL is set
# in its binary form (version 2; tag, perm, id): user::rw- user:12345:rw- group::r-- mask::rw-
# other::r--.
cp "$T/short.ptir" "$T/x.ptir"
if python3 - "$T/x.ptir" <<'PY' 2>"$T/xattr.err"; then
import os, struct, sys
p = sys.argv[1]
os.setxattr(p, "user.pto_test", b"kept")
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, perm, i) for t, perm, i in [
    (0x01, 6, 0xFFFFFFFF), (0x02, 6, 12345), (0x04, 4, 0xFFFFFFFF),
    (0x10, 6, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)])
os.setxattr(p, "system.posix_acl_access", acl)
PY
  before=$(python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "system.posix_acl_access").hex())' "$T/x.ptir")
  ino=$(stat -c %i "$T/x.ptir")
  run_pto 0 fmt -i "$T/x.ptir"
  expect_true "one link: formatted" cmp -s "$T/x.ptir" "$T/canon.ptir"
  expect_true "one link: replaced (a new inode)" test "$(stat -c %i "$T/x.ptir")" != "$ino"
  expect_true "the user.* attribute stays" test "$(python3 -c \
    'import os,sys; print(os.getxattr(sys.argv[1], "user.pto_test").decode())' "$T/x.ptir")" = kept
  expect_true "the ACL stays" test "$(python3 -c \
    'import os,sys; print(os.getxattr(sys.argv[1], "system.posix_acl_access").hex())' \
    "$T/x.ptir")" = "$before"
else
  echo "note: no user.* attributes or ACLs on this file system: $(tail -1 "$T/xattr.err")"
fi
finish
