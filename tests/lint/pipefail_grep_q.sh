#!/usr/bin/env bash
# Under `set -o pipefail`, `producer | grep -q PATTERN` fails at random: grep -q exits at the first
# match, the producer dies of SIGPIPE on its next write, and the pipeline reports that failure
# (issue #15: `ldd "$PTO" | grep -q libtsan` missed 6 times in 200, so a TSan test built its
# application without TSan). Match on a captured string instead: grep -q P <<<"$(producer)".
# This check fails on any such pipe in a script that turns pipefail on (a `bash -c "..."` string
# runs in a new shell without it and is allowed; comments are skipped).
set -uo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
bad=0
while IFS= read -r f; do
  # pipefail set here, or by the e2e library it sources
  grep -qE 'pipefail|lib/common\.bash' "$f" || continue
  while IFS=: read -r line text; do
    case "$text" in *'bash -c'* | [[:space:]]#* | \#*) continue ;; esac
    echo "$f:$line: pipe into 'grep -q' under pipefail:$text"
    bad=1
  done < <(grep -nE '\|[[:space:]]*grep[[:space:]]+(-[A-Za-z]*q|--quiet)' "$f")
done < <(cd "$ROOT" && find tests scripts bench examples .ci -type f \( -name '*.sh' -o -name '*.bash' -o -name run \) | sed "s|^|$ROOT/|")
[ $bad = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $bad
