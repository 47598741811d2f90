#!/usr/bin/env bash
# The README's C quick start, extracted as it is, compiled against this build and run: it must
# print y[3] = 3.5 (x[3] + the resident weight 0.5).
source "$(dirname "$0")/lib/common.bash"
B=$(dirname "$(dirname "$PTO")") # the build dir: $PTO is build/tools/pto

sed -n '/<!-- quickstart:begin -->/,/<!-- quickstart:end -->/p' "$PTO_SOURCE_DIR/README.md" |
  sed '1,2d;$d' | sed '$d' >"$T/quick.c"
expect_true "the README has a quick start" grep -q "pto_handle_call" "$T/quick.c"
expect_true "the quick start is about 15 lines of code (<= 30)" \
  test "$(grep -c . "$T/quick.c")" -le 30
LIBS=()
for l in runtime loader ir base; do LIBS+=(-L"$B/$l" -Wl,-rpath,"$B/$l"); done
# shellcheck disable=SC2086 # PTO_SANFLAGS is a flag list
if cc -std=c17 -Wall -Wextra -Werror $PTO_SANFLAGS -I"$PTO_SOURCE_DIR/include" "$T/quick.c" \
  -o "$T/quick" "${LIBS[@]}" -lpto_runtime -lpto_loader -lpto_ir -lpto_base 2>"$T/cc.err"; then
  PASSES=$((PASSES + 1))
else
  echo "FAIL: the README quick start does not compile:"
  sed 's/^/  | /' "$T/cc.err"
  FAILS=$((FAILS + 1))
fi
OUT=$(cd "$PTO_SOURCE_DIR" && "$T/quick" 2>&1)
expect_true "the quick start runs (exit 0)" test $? = 0
expect_out "y[3] = 3.5"
finish
