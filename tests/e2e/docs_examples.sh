#!/usr/bin/env bash
# Every PTIR example block of docs/*.md, checked with the built pto. A block's info string says
# how: `ptir` is a whole program (pto check); `ptir run ARGS` a whole program also run with
# `pto run FILE ARGS --check`; `ptir kernel`, `ptir orch`, `ptir dist`, `ptir host` are
# statements placed in the fixed function docs/language.md ("How to read the examples") shows.
# A block that names an op of language.md's second-set section which pto's op table does not
# have yet ("unknown op") is reported PENDING, not failed; any other error fails. A whole-program
# block whose info string has `file=PATH` (`ptir file=examples/add.ptir`, `ptir run file=PATH
# ARGS`) shows that file of the repository: it must be the file, line for line.
source "$(dirname "$0")/lib/common.bash"
DOCS="$PTO_SOURCE_DIR/docs"
LANG_MD="$DOCS/language.md"
SECOND=$(sed -n '/<!-- second-set:begin -->/,/<!-- second-set:end -->/p' "$LANG_MD" |
  grep -o '^### .*' | grep -oE '`tile\.[a-z_]+`' | tr -d '`' | sort -u)
expect_true "language.md lists the second set" test -n "$SECOND"

wrap() { # wrap KIND BODY_FILE: the whole program for a block of KIND
  local kind=$1 body=$2
  echo "program doc_example"
  case $kind in
  kernel)
    cat <<'P'
kernel @k(%x: tensor[64, 64] f32, %xh: tensor[64, 64] f16, %xi: tensor[64, 64] i32,
          %xb: tensor[64, 64] bool, out %y: tensor[64, 64] f32, out %yi: tensor[64, 64] i32,
          %s: f32, %n: i32, %k: index)
    -> (tensor[64, 64] f32, tensor[64, 64] i32) {
  %a = tile.load(%x, [0, 0], [16, 16])
  %b = tile.load(%x, [16, 16], [16, 16])
  %i = tile.load(%xi, [0, 0], [16, 16])
  %j = tile.load(%xi, [16, 16], [16, 16])
  %v = tile.row_max(%a)
  %w = tile.col_max(%a)
  %ma = tile.load(%x, [0, 0], [16, 16], space=mat)
  %l = tile.move(%ma, space=left)
  %r = tile.move(%ma, space=right)
P
    cat "$body"
    printf '  return %%y, %%yi\n}\n' ;;
  orch)
    printf 'orch @main(%%x: tensor[64, 64] f32, out %%y: tensor[64, 64] f32, %%k: index = runtime)\n    -> (tensor[64, 64] f32) {\n'
    cat "$body"
    printf '  return %%y\n}\n' ;;
  dist)
    printf 'kernel @k(%%x: tensor[16, 16] f32, inout %%win: dtensor[16, 16] f32, inout %%sig: dtensor[1, 8] i32,\n          %%peer: index) -> (dtensor[16, 16] f32, dtensor[1, 8] i32) {\n'
    cat "$body"
    printf '  return %%win, %%sig\n}\n' ;;
  host)
    printf 'dynamic M\norch @o(inout %%w: dtensor[16, 16] f32) -> (dtensor[16, 16] f32) {\n  return %%w\n}\n'
    printf 'host @main(%%x: tensor[M, 64] f32, out %%y: tensor[M, 64] f32) {\n'
    cat "$body"
    printf '}\n' ;;
  esac
}

# Split every ```ptir block into $T/blocks/N.ptir with its info string in N.info.
mkdir -p "$T/blocks"
for md in "$DOCS"/*.md; do
  awk -v dir="$T/blocks" -v src="$(basename "$md")" '
    /^```ptir/ { n = ++count; f = dir "/" src "." n; info = substr($0, 8); sub(/^ +/, "", info)
                 print info > (f ".info"); print FILENAME ":" NR > (f ".where"); inb = 1; next }
    inb && /^```/ { inb = 0; close(f ".body"); next }
    inb { print > (f ".body") }' "$md"
done
NBLOCKS=0
PENDING=0
for info in "$T"/blocks/*.info; do
  base=${info%.info}
  shown=
  words=()
  read -ra all <"$info"
  for word in ${all[@]+"${all[@]}"}; do
    case $word in file=*) shown=${word#file=} ;; *) words+=("$word") ;; esac
  done
  kind=${words[0]:-}
  args=${words[*]:1}
  where=$(cat "$base.where")
  touch "$base.body"
  if [ -n "$shown" ] && ! diff -q "$PTO_SOURCE_DIR/$shown" "$base.body" >/dev/null 2>&1; then
    echo "FAIL: $where: the block is not $shown as the repository has it:"
    diff "$PTO_SOURCE_DIR/$shown" "$base.body" | sed 's/^/  | /'
    FAILS=$((FAILS + 1))
    continue
  fi
  case $kind in
  "" | run) cp "$base.body" "$base.ptir"; args=${kind:+$args} ;;
  kernel | orch | dist | host) wrap "$kind" "$base.body" >"$base.ptir" ;;
  *) echo "FAIL: $where: unknown block kind 'ptir $kind'"; FAILS=$((FAILS + 1)); continue ;;
  esac
  NBLOCKS=$((NBLOCKS + 1))
  if ! OUT=$("$PTO" check "$base.ptir" 2>&1); then
    op=$(sed -n "s/.*unknown op '\([a-z_.]*\)'.*/\1/p" <<<"$OUT" | head -1)
    if [ -n "$op" ] && grep -qx "$op" <<<"$SECOND"; then
      echo "PENDING: $where: $op (second set) is not in pto's op table yet"
      PENDING=$((PENDING + 1))
      continue
    fi
    echo "FAIL: $where: the example does not check:"
    sed 's/^/  | /' <<<"$OUT"
    sed 's/^/  > /' "$base.ptir"
    FAILS=$((FAILS + 1))
    continue
  fi
  PASSES=$((PASSES + 1))
  if [ "$kind" = run ]; then
    # shellcheck disable=SC2086 # the block's own arguments
    run_status 0 "$PTO" run "$base.ptir" $args --check && expect_out PASS
  fi
done
expect_true "the docs have PTIR examples ($NBLOCKS)" test "$NBLOCKS" -gt 50

# ```python run, ```c run and ```sh run blocks: run against this build in a scratch folder where
# examples/ is the repository's (C: built with the build tree's pto-uninstalled.pc; sh: bash -e
# with the built pto first on PATH). Python needs Debian's python3 with numpy.
B=$(cd "$(dirname "$PTO")/.." && pwd)
PY=${PTO_PYTHON:-/usr/bin/python3}
for md in "$DOCS"/*.md; do
  awk -v dir="$T/blocks" -v src="$(basename "$md")" '
    /^```(python|c|sh) run/ { n = ++count; ext = substr($1, 4); if (ext == "python") ext = "py"
                              f = dir "/" src ".run" n "." ext
                              print FILENAME ":" NR > (f ".where"); inb = 1; next }
    inb && /^```/ { inb = 0; close(f); next }
    inb { print > f }' "$md"
done
W="$T/work"
mkdir -p "$W"
ln -s "$PTO_SOURCE_DIR/examples" "$W/examples"
NRUN=0
for f in "$T"/blocks/*.run*.py "$T"/blocks/*.run*.c "$T"/blocks/*.run*.sh; do
  [ -f "$f" ] || continue
  where=$(cat "$f.where")
  NRUN=$((NRUN + 1))
  case $f in
  *.py)
    if ! "$PY" -c 'import numpy' 2>/dev/null; then
      echo "note: $where: $PY has no numpy; the Python block is not run"
      continue
    fi
    if [ -n "$PTO_SANFLAGS" ]; then # an uninstrumented python3 cannot load sanitized libraries
      echo "note: $where: a sanitizer build ($PTO_SANITIZE); the Python block is run by the plain build"
      continue
    fi
    run_status 0 env PYTHONPATH="$B/python" bash -c 'cd "$1" && "$2" "$3"' _ "$W" "$PY" "$f" ||
      echo "  (the block at $where)" ;;
  *.c)
    # shellcheck disable=SC2046,SC2086 # pkg-config's flags and PTO_SANFLAGS are flag lists
    if run_status 0 cc -std=c17 -Wall -Wextra -Werror $PTO_SANFLAGS "$f" -o "${f%.c}" \
      $(PKG_CONFIG_PATH=$B pkg-config --cflags --libs pto); then
      run_status 0 bash -c 'cd "$1" && "$2"' _ "$W" "${f%.c}" || echo "  (the block at $where)"
    else
      echo "  (the block at $where)"
    fi ;;
  *.sh)
    run_status 0 env PATH="$(dirname "$PTO"):$PATH" bash -c 'cd "$1" && bash -e -o pipefail "$2"' \
      _ "$W" "$f" || echo "  (the block at $where)" ;;
  esac
done
expect_true "the docs have runnable Python, C and shell blocks ($NRUN)" test "$NRUN" -gt 0
echo "$NBLOCKS blocks, $PENDING pending on second-set ops"
finish
