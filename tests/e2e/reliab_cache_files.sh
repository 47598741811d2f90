#!/usr/bin/env bash
# pto never deletes what it did not create under the cache dir (issue #10, class 1): gc, clear
# and eviction remove only pto's entry layout and its own temp-name pattern, follow no
# symlink, and a cache dir that holds other files is used only through a "pto" subfolder.
source "$(dirname "$0")/lib/common.bash"

entries() { find "$1" -mindepth 2 -maxdepth 2 -path "$1/[0-9a-f][0-9a-f]/*" -type d; }

# ---- user files under ROOT/tmp and look-alike names survive gc and clear -------------------
export PTO_CACHE_DIR="$T/c1"
run_pto 0 run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
expect_true "the new cache is tagged" test -f "$PTO_CACHE_DIR/CACHEDIR.TAG"
mkdir -p "$T/elsewhere/keepdir"
echo precious >"$T/elsewhere/keep.txt"
echo precious >"$T/elsewhere/keepdir/inner.txt"
echo mine >"$PTO_CACHE_DIR/tmp/notes.txt"
mkdir -p "$PTO_CACHE_DIR/tmp/project-1-abcdef" "$PTO_CACHE_DIR/tmp/discard-1-abc"
echo mine >"$PTO_CACHE_DIR/tmp/project-1-abcdef/f"
mkdir -p "$PTO_CACHE_DIR/tmp/discard-999999-ABCDEF"          # pto's name, pid 999999 is gone
ln -s "$T/elsewhere" "$PTO_CACHE_DIR/tmp/discard-999998-XYZabc" # pto's name, but a symlink
ln -s "$T/elsewhere" "$PTO_CACHE_DIR/tmp/link"
run_pto 0 cache gc
expect_out "removed 1 stale build dirs"
run_pto 0 cache clear
for f in tmp/notes.txt tmp/project-1-abcdef/f tmp/discard-1-abc tmp/link tmp/discard-999998-XYZabc; do
  expect_true "clear keeps $f" test -e "$PTO_CACHE_DIR/$f" -o -L "$PTO_CACHE_DIR/$f"
done
expect_true "gc removed pto's stale dir" test ! -e "$PTO_CACHE_DIR/tmp/discard-999999-ABCDEF"
expect_true "nothing behind the symlinks was touched" \
  test -f "$T/elsewhere/keep.txt" -a -f "$T/elsewhere/keepdir/inner.txt"
expect_true "clear removed the entry" test -z "$(entries "$PTO_CACHE_DIR")"

# ---- ROOT/tmp itself a symlink: nothing behind it is removed ---------------------------------
export PTO_CACHE_DIR="$T/c2"
run_pto 0 run "$EX/add.ptir" --dim M=40
rm -rf "$PTO_CACHE_DIR/tmp"
mkdir -p "$T/victim/discard-999999-ABCDEF"
echo precious >"$T/victim/discard-999999-ABCDEF/data"
ln -s "$T/victim" "$PTO_CACHE_DIR/tmp"
run_pto 0 cache gc
run_pto 0 cache clear
expect_true "files behind a symlinked tmp survive" test -f "$T/victim/discard-999999-ABCDEF/data"

# ---- a fan-out dir that is a symlink: its look-alike entries are not pto's -------------------
export PTO_CACHE_DIR="$T/c3"
run_pto 0 run "$EX/add.ptir" --dim M=40
mkdir -p "$T/fan/0123456789abcdef0123456789abcd"
echo precious >"$T/fan/0123456789abcdef0123456789abcd/data"
ln -s "$T/fan" "$PTO_CACHE_DIR/ff"
run_pto 0 cache clear
run_pto 0 cache gc --max-size 1
expect_true "an entry reached through a symlink survives" \
  test -f "$T/fan/0123456789abcdef0123456789abcd/data"

# ---- a cache dir that is not pto's ($HOME-like) is used through a pto subfolder --------------
home="$T/home"
mkdir -p "$home/tmp" "$home/ab/0123456789abcdef0123456789abcd"
echo precious >"$home/.bashrc"
echo precious >"$home/tmp/work.txt"
echo precious >"$home/ab/0123456789abcdef0123456789abcd/data"
chmod 700 "$home"
export PTO_CACHE_DIR="$home"
run_pto 0 run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
expect_out "using $home/pto instead"
expect_true "the cache went into the subfolder" test -n "$(entries "$home/pto")"
run_pto 0 cache clear
run_pto 0 cache gc --max-size 1
for f in .bashrc tmp/work.txt ab/0123456789abcdef0123456789abcd/data; do
  expect_true "a foreign cache dir keeps $f" test -f "$home/$f"
done
# A subfolder that is not pto's either is refused.
rm -rf "$home/pto" && mkdir -p "$home/pto" && echo x >"$home/pto/mine.txt"
run_pto 1 cache clear && expect_out "holds files that pto did not create: refusing"
run_pto 1 cache gc --max-size 1
expect_true "a foreign pto subfolder keeps its files" test -f "$home/pto/mine.txt"

# A new cache whose marker another process is writing right now (its temp file is all there is)
# is pto's own, not a foreign dir: no move to a subfolder.
fresh="$T/fresh"
mkdir -p "$fresh" && chmod 700 "$fresh" && echo x >"$fresh/CACHEDIR.TAG.tmp-a1B2c3"
PTO_CACHE_DIR="$fresh" run_pto 0 run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
expect_true "no subfolder for a cache being tagged" test ! -e "$fresh/pto"
expect_true "the cache went into the dir itself" test -n "$(entries "$fresh")"

# ---- eviction under PTO_CACHE_MAX_SIZE keeps user files too ---------------------------------
export PTO_CACHE_DIR="$T/c4"
run_pto 0 run "$EX/add.ptir" --dim M=40
echo precious >"$PTO_CACHE_DIR/tmp/mine"
mkdir -p "$PTO_CACHE_DIR/tmp/0123456789abcdef0123456789abcdef-1-notes"
PTO_CACHE_MAX_SIZE=1 run_pto 0 run "$EX/chain.ptir" --dim M=40 --in alpha=1
expect_true "eviction keeps tmp/mine" test -f "$PTO_CACHE_DIR/tmp/mine"
expect_true "eviction keeps a non-pto name" test -d "$PTO_CACHE_DIR/tmp/0123456789abcdef0123456789abcdef-1-notes"

# ---- a deep tree inside an entry (issue #34 item 8): every walk is iterative, clear removes it --
# 3000 levels: the old recursive size walk needed ~4 KiB of stack a level (SIGSEGV in a 2 MiB
# stack), and the old removal stopped at 32 levels, leaving the tree under tmp/.
export PTO_CACHE_DIR="$T/deep"
run_pto 0 run "$EX/add.ptir" --dim M=40
entry=$(entries "$PTO_CACHE_DIR")
/usr/bin/python3 - "$entry" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(3000):
    os.mkdir("d", dir_fd=fd)
    sub = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = sub
os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
PY
small_stack() { bash -c 'ulimit -s 2048 && exec "$@"' _ "$@"; }
run_status 0 small_stack "$PTO" cache stats && expect_out "entries"
run_status 0 small_stack "$PTO" cache ls
expect_true "ls lists the entry" test -n "$OUT"
run_status 0 small_stack "$PTO" cache gc
PTO_CACHE_MAX_SIZE=1 run_status 0 small_stack "$PTO" run "$EX/chain.ptir" --dim M=40 --in alpha=1
run_status 0 small_stack "$PTO" cache clear
expect_true "clear removed every entry" test -z "$(entries "$PTO_CACHE_DIR")"
expect_true "clear left nothing under tmp/" test -z "$(ls -A "$PTO_CACHE_DIR/tmp")"

finish
