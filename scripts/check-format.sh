#!/usr/bin/env bash
# Checks that every C/C++ source we write is formatted as .clang-format says (STYLE.md): prints
# each file that differs and a diff of the first few, and exits 1 if any does. `-i` rewrites them
# in place instead. Emitted-code goldens (tests/golden) and the orchestration C++ written for
# PyPTO's runtime (tests/compat) are kept as they are: they are inputs and expected outputs, not
# our sources. Installs Debian's clang-format when it is missing (the version pins the format).
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "check-format.sh: installing clang-format" >&2
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -q --no-install-recommends clang-format >&2
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v -e '^tests/golden/' -e '^tests/compat/')
if [ "${1:-}" = -i ]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format.sh: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($("$CLANG_FORMAT" --version)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  for f in "${bad[@]:0:3}"; do diff -u "$f" <("$CLANG_FORMAT" "$f") | head -40 >&2 || true; done
  echo "check-format.sh: run scripts/check-format.sh -i to rewrite them" >&2
  exit 1
fi
echo "check-format.sh: ${#files[@]} files formatted"
