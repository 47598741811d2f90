#!/usr/bin/env bash
# The front end's recursion is bounded and its time linear (issue #10, class 4): long operator
# chains, deep nesting of parentheses, unary operators, casts and blocks are clear errors
# naming the limit (exit 2), not a stack overflow or a hang; long flat programs check fast.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# gen NAME EXPR-PYTHON: an orch whose one assignment is the generated expression.
gen() {
  python3 - "$T/$1.ptir" "$2" <<'PY'
import sys
expr = eval(sys.argv[2])
open(sys.argv[1], 'w').write("program deep\norch @main(%a: index = runtime, %c: bool = runtime) {\n"
                             "  %x = " + expr + "\n  return\n}\n")
PY
}
# check_fast NAME EXIT TEXT: pto check ends with EXIT and TEXT. The 120 s is a guard against a
# hang (or a walk gone quadratic: minutes at these sizes), not a speed assert: alone each takes
# about 2 s here, and CI runs it beside the sanitizer builds. (frontend_scale counts the walks.)
check_fast() {
  OUT=$(timeout 120 "$PTO" check "$T/$1.ptir" 2>&1)
  local got=$?
  expect_true "$1: exit $2 (got $got; 124 is the 120 s guard)" test "$got" = "$2"
  expect_out "$3"
}

n=200000
gen add "' + '.join(['%a'] * $n)"
check_fast add 2 "add.ptir:3:1291: expression too deep: more than 256 operators nested or chained"
gen mul "' * '.join(['%a'] * $n)"
check_fast mul 2 "expression too deep"
gen sub "' - '.join(['%a'] * $n)"
check_fast sub 2 "expression too deep"
gen or "' || '.join(['%c'] * $n)"
check_fast or 2 "expression too deep"
gen and "' && '.join(['%c'] * $n)"
check_fast and 2 "expression too deep"
gen div "' / '.join(['%a'] * $n)"
check_fast div 2 "expression too deep"
gen parens "'(' * $n + '%a' + ')' * $n"
check_fast parens 2 "nested too deeply (more than 200 levels)"
gen neg "'-' * $n + '%a'"
check_fast neg 2 "nested too deeply"
gen not "'!' * $n + '%c'"
check_fast not 2 "nested too deeply"
gen casts "'index(' * $n + '%a' + ')' * $n"
check_fast casts 2 "nested too deeply"
gen minmax "'min(' * $n + '%a' + ', %a)' * $n"
check_fast minmax 2 "nested too deeply"
# At the limit: accepted.
gen ok256 "' + '.join(['%a'] * 257)"
check_fast ok256 0 ""
gen ok_paren "'(' * 40 + '%a' + ')' * 40"
check_fast ok_paren 0 ""

# Nested blocks.
python3 - "$T/ifs.ptir" "$T/fors.ptir" <<'PY'
import sys
n = 100000
open(sys.argv[1], 'w').write("program deep\norch @main(%c: bool = runtime) {\n" +
                             "if %c {\n" * n + "}\n" * n + "  return\n}\n")
open(sys.argv[2], 'w').write("program deep\norch @main(%n: index = runtime) {\n" +
                             "".join(f"for %i{k} in range(0, %n) {{\n" for k in range(n)) + "}\n" * n + "  return\n}\n")
PY
check_fast ifs 2 "nested too deeply"
check_fast fors 2 "nested too deeply"

# Long flat programs are linear: 40000 statements in one kernel, 2000 assignments of 250 terms.
python3 - "$T/flat.ptir" "$T/wide.ptir" <<'PY'
import sys
n = 40000
body = ''.join(f'  %t{i+1} = tile.adds(%t{i}, 1.0)\n' for i in range(n))
open(sys.argv[1], 'w').write(f'''program flat
kernel @k(%x: tensor[8,8] f32, out %y: tensor[8,8] f32) -> (tensor[8,8] f32) {{
  %t0 = tile.load(%x, [0, 0], [8, 8])
{body}  %y1 = tile.store(%t{n}, [0, 0], %y)
  return %y1
}}
orch @main(%x: tensor[8,8] f32, out %y: tensor[8,8] f32) -> (tensor[8,8] f32) {{
  call @k(%x, %y)
  return %y
}}
''')
stm = ''.join(f'  %s{i} = ' + ' + '.join(['%a'] * 250) + '\n' for i in range(2000))
open(sys.argv[2], 'w').write("program wide\norch @main(%a: index = runtime) {\n" + stm + "  return\n}\n")
PY
check_fast flat 0 ""
check_fast wide 0 ""
timeout 120 "$PTO" fmt "$T/flat.ptir" >"$T/flat.out" 2>&1
expect_true "fmt of 40000 statements ends (124 is the 120 s guard)" test $? = 0

finish
