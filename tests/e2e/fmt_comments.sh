#!/usr/bin/env bash
# pto fmt keeps every comment: on every example and test program the output re-parses, formatting
# it again changes nothing, and every comment text of the input is in the output, in order; a
# fixture with comments in awkward places formats to its golden text; a file whose comments
# cannot all be kept, or whose rewrite fails, is left as it was.
source "$(dirname "$0")/lib/common.bash"
DATA="$PTO_SOURCE_DIR/tests/e2e/data"

# comments FILE: its comment texts, one a line, trailing blanks dropped.
comments() { grep -o '#.*' "$1" | sed 's/[[:space:]]*$//'; }

n=0
for f in "$EX"/*.ptir "$PTO_SOURCE_DIR"/tests/programs/*.ptir "$DATA/fmt_comments.ptir"; do
  name=$(basename "$f")
  run_pto 0 fmt "$f" || continue
  printf '%s\n' "$OUT" >"$T/once.ptir"
  run_pto 0 check "$T/once.ptir"
  run_pto 0 fmt "$T/once.ptir"
  expect_true "fmt is a fixed point on $name" test "$OUT" = "$(cat "$T/once.ptir")"
  expect_true "every comment of $name is kept, in order" \
    diff <(comments "$f") <(comments "$T/once.ptir")
  n=$((n + $(comments "$f" | wc -l)))
done
expect_true "the files hold comments to keep ($n)" test "$n" -gt 50

# Where each comment lands: before else, at the end of blocks, after the last function,
# end-of-line on headers and closing braces, inside a multi-line expression.
run_pto 0 fmt "$DATA/fmt_comments.ptir"
expect_true "the awkward fixture formats to its golden text" \
  diff <(printf '%s\n' "$OUT") "$DATA/fmt_comments.expected"

# -i keeps the comments and the file's mode.
cp "$EX/scale_rows.ptir" "$T/edit.ptir"
chmod 640 "$T/edit.ptir"
run_pto 0 fmt -i "$T/edit.ptir"
expect_true "fmt -i keeps the comments" diff <(comments "$EX/scale_rows.ptir") <(comments "$T/edit.ptir")
expect_true "fmt -i keeps the mode" test "$(stat -c %a "$T/edit.ptir")" = 640
run_pto 0 fmt -i "$T/edit.ptir"
expect_true "fmt -i twice is fmt -i once" diff <("$PTO" fmt "$EX/scale_rows.ptir") "$T/edit.ptir"

# A comment the output cannot hold (a NUL byte in it) is refused: non-zero, file untouched.
printf 'program p  # a\000b\n\norch @main(%%x: i32) {\n  return\n}\n' >"$T/nul.ptir"
cp "$T/nul.ptir" "$T/nul.orig"
run_pto 2 fmt -i "$T/nul.ptir" &&
  expect_out "nul.ptir:1: formatting would lose the comment '# a': it holds a NUL byte"
expect_true "a comment that cannot be kept leaves the file untouched" cmp -s "$T/nul.ptir" "$T/nul.orig"
run_pto 2 fmt "$T/nul.ptir"

# A rewrite that cannot be written leaves the file whole.
cp "$EX/add.ptir" "$T/add.orig"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  # A read-only file system, then one too full for the new copy.
  D="$T/ro" && mkdir -p "$D"
  OUT=$(unshare -m bash -c "mount -t tmpfs -o size=1m tmpfs '$D' && cp '$T/add.orig' '$D/add.ptir' &&
    mount -o remount,ro '$D' && '$PTO' fmt -i '$D/add.ptir'; echo rc=\$?; cmp '$D/add.ptir' '$T/add.orig' && echo intact" 2>&1)
  expect_true "read-only dir: fmt -i fails and says why ($OUT)" grep -q "Read-only file system" <<<"$OUT"
  expect_true "read-only dir: non-zero" grep -q "rc=[1-9]" <<<"$OUT"
  expect_true "read-only dir: the file is intact" grep -qx intact <<<"$OUT"
  D="$T/full" && mkdir -p "$D"
  { cat "$EX/add.ptir"; for i in $(seq 300); do echo "# padding comment $i, to fill the small file system"; done; } >"$T/big.orig"
  OUT=$(unshare -m bash -c "mount -t tmpfs -o size=32k tmpfs '$D' && cp '$T/big.orig' '$D/big.ptir' &&
    '$PTO' fmt -i '$D/big.ptir'; echo rc=\$?; cmp '$D/big.ptir' '$T/big.orig' && echo intact" 2>&1)
  expect_true "full dir: non-zero ($OUT)" grep -q "rc=[1-9]" <<<"$OUT"
  expect_true "full dir: it says why" grep -q "No space left on device (the old file is unchanged)" <<<"$OUT"
  expect_true "full dir: the file is intact" grep -qx intact <<<"$OUT"
elif [ "$(id -u)" != 0 ]; then
  mkdir -p "$T/ro" && cp "$T/add.orig" "$T/ro/add.ptir" && chmod 500 "$T/ro"
  run_pto 1 fmt -i "$T/ro/add.ptir"
  expect_true "read-only dir: the file is intact" cmp -s "$T/ro/add.ptir" "$T/add.orig"
  chmod 700 "$T/ro"
fi
finish
