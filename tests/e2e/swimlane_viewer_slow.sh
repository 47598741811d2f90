#!/usr/bin/env bash
# The --swimlane JSON in a real trace viewer, in a real headless Chromium (Debian's chromium):
# its built-in chrome://tracing importer when this Chromium has one, else speedscope's web app
# from the npm registry (Chromium 128 and later ship no chrome://tracing in headless mode). Fails
# when the viewer rejects the file or shows no task events; a deliberately broken file must fail
# too. Setup installs what is missing (chromium with apt-get, speedscope with npm) and skips
# (exit 77) with a message when that cannot be done. Labelled slow.
source "$(dirname "$0")/lib/common.bash"

skip() {
  echo "SKIP: $*"
  exit 77
}

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium with apt-get"
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y --no-install-recommends chromium \
      >"$T/apt.log" 2>&1 || tail -5 "$T/apt.log"
  fi
  CHROMIUM=$(command -v chromium || true)
  [ -n "$CHROMIUM" ] || skip "no chromium, and it could not be installed (apt-get needs root and a mirror)"
fi
command -v node >/dev/null || skip "no node to drive Chromium over the DevTools protocol"

# speedscope, kept between runs beside the other test files of this build.
NPM_DIR="${PTO_TEST_TMP:-/tmp}/viewer-npm"
SPEEDSCOPE="$NPM_DIR/node_modules/speedscope/dist/release"
if [ ! -f "$SPEEDSCOPE/index.html" ] && command -v npm >/dev/null; then
  echo "setup: installing speedscope from the npm registry into $NPM_DIR"
  mkdir -p "$NPM_DIR"
  timeout 300 npm install --prefix "$NPM_DIR" --no-audit --no-fund speedscope@1.25.0 >"$T/npm.log" 2>&1 ||
    tail -5 "$T/npm.log"
fi
[ -f "$SPEEDSCOPE/index.html" ] || SPEEDSCOPE=

run_pto 0 run "$EX/chain.ptir" --dim M=64 --in alpha=1 --swimlane "$T/chain.json"
OUT=$(timeout 180 node "$(dirname "$0")/lib/viewer.js" "$CHROMIUM" "$T/chain.json" $SPEEDSCOPE 2>&1)
rc=$?
echo "$OUT"
[ $rc = 77 ] && skip "no trace viewer could run: $OUT"
expect_true "the viewer took the swimlane and shows task events (exit $rc)" test $rc = 0
expect_out '"ok":true'
expect_out '"kernels":["act","add_bias","scale"]'
# A core's lane, named with its type: which core runs a task is the pool's choice (the default
# worker has more cores than threads).
expect_true "the viewer shows a core's lane" grep -qE 'core [0-9]+ \((aiv|aic)\)' <<<"$OUT"

# A test that cannot fail is a defect: a truncated file must be refused.
head -c 200 "$T/chain.json" >"$T/broken.json"
OUT=$(timeout 180 node "$(dirname "$0")/lib/viewer.js" "$CHROMIUM" "$T/broken.json" $SPEEDSCOPE 2>&1)
rc=$?
echo "$OUT"
expect_true "a broken file is refused (exit 1, got $rc)" test $rc = 1
finish
