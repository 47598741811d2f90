#!/usr/bin/env bash
# --depfile paths (issue #34, item 21): ':', '#', '$', spaces and backslashes are escaped the way
# Make reads them back (as gcc -MD writes them); a path with a line break, which no depfile can
# hold, is a usage error (2) naming the path, before anything is compiled or written.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
cd "$T" || exit 1

cp "$EX/add.ptir" 's p#1.ptir'
W='w:1 #$x'
run_pto 0 compile 's p#1.ptir' -o "$W" --depfile dep.d
expect_true "the depfile escapes ':', '#', '\$' and spaces" \
  test "$(cat dep.d)" = 'w\:1\ \#$$x/manifest.json: s\ p\#1.ptir'
if command -v make >/dev/null; then
  printf 'all: ;\n-include dep.d\n' >Makefile
  # Make's own database holds the rule with the paths as they are on disk.
  expect_true "make reads the paths back" \
    bash -c "make -p -q -f Makefile 2>/dev/null | grep -qxF 'w:1 #\$x/manifest.json: s p#1.ptir'"
fi
# Backslashes: doubled only right before a character that is escaped.
cp "$EX/add.ptir" 'b\ a.ptir'
run_pto 0 compile 'b\ a.ptir' -o 'o\d' --depfile b.d
expect_true "backslashes before a space are doubled, others kept" \
  test "$(cat b.d)" = 'o\d/manifest.json: b\\\ a.ptir'

# A line break: refused, nothing compiled, no depfile.
run_pto 2 compile 's p#1.ptir' -o $'nl\ndir' --depfile nl.d &&
  expect_out "--depfile: the work dir path 'nl" && expect_out "holds a line break, which a Make/Ninja depfile cannot express"
expect_true "nothing compiled for a refused depfile" test ! -e $'nl\ndir' -a ! -e nl.d
cp "$EX/add.ptir" $'n\nl.ptir'
run_pto 2 compile $'n\nl.ptir' -o nl2 --depfile nl.d && expect_out "--depfile: the source path 'n"
expect_true "nothing compiled for a refused source path" test ! -e nl2 -a ! -e nl.d
# Without --depfile such a path is fine.
run_pto 0 compile $'n\nl.ptir' -o nl2

finish
