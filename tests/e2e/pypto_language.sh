#!/usr/bin/env bash
# PyPTO's language ops written in PTIR as docs/pypto-language.md maps them, checked against the
# expected values of PyPTO's own runtime tests recomputed with numpy (tests/e2e/data/
# pypto_language.py); every case also runs --check, and the compiled kernel must give the
# interpreter's bits.
source "$(dirname "$0")/lib/contract.bash"
run_contract "$PTO_SOURCE_DIR/tests/e2e/data/pypto_language.py"

# The page's PTIR column (of its "| PyPTO | PTIR |" tables) cannot go stale: every op it names
# is one pto knows. A kernel calling the op is checked; whatever else is wrong with the call,
# "unknown op" must not be the error. A row whose PTIR is "(the same names)" names the PyPTO
# column's ops under tile.
DOC="$PTO_SOURCE_DIR/docs/pypto-language.md"
ops=$(awk -F' \\| ' '!/^\| / { ptir = 0 } /^\| PyPTO \| PTIR \|/ { ptir = 1; next }
      ptir && !/^\| ---/ {
        print $2
        if ($2 ~ /\(the same names\)/) {
          n = split($1, w, "`")
          for (i = 2; i <= n; i += 2) print "tile." w[i]
        }
      }' "$DOC" | grep -oP '(?<![\w.%])(tile|tensor|dist)\.[a-z_]*[a-z]\b(?!\*)' | sort -u)
nops=$(wc -w <<<"$ops")
if [ "$nops" -lt 100 ]; then
  echo "FAIL: only $nops PTIR ops read from docs/pypto-language.md's tables"
  FAILS=$((FAILS + 1))
fi
probe() {
  cat >"$T/probe.ptir" <<EOF
program names
kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %a = tile.load(%x, [0, 0], [16, 16])
  %z = $1(%a)
  %y1 = tile.store(%a, [0, 0], %y)
  return %y1
}
EOF
  "$PTO" check "$T/probe.ptir" 2>&1
}
# the probe tells an unknown op from a known one
out=$(probe tile.no_such_op)
grep -q "unknown op 'tile.no_such_op'" <<<"$out" || {
  echo "FAIL: the probe of an unknown op did not say so:"
  echo "$out" | sed 's/^/  | /'
  FAILS=$((FAILS + 1))
}
out=$(probe tile.exp)
if grep -q "unknown op" <<<"$out"; then
  echo "FAIL: the probe calls tile.exp unknown: $out"
  FAILS=$((FAILS + 1))
fi
for op in $ops; do
  out=$(probe "$op")
  if grep -q "unknown op" <<<"$out"; then
    echo "FAIL: docs/pypto-language.md maps a PyPTO op to $op, which pto does not have: $out"
    FAILS=$((FAILS + 1))
  else
    PASSES=$((PASSES + 1))
  fi
done
finish
