#!/usr/bin/env bash
# Every tests/programs/*.ptir, examples/*.ptir and examples/runtime/*.ptir compiled and run with
# --check against the reference interpreter, once per '# run: ARGS' line at its top.
source "$(dirname "$0")/lib/common.bash"

for f in "$PTO_SOURCE_DIR"/tests/programs/*.ptir "$EX"/*.ptir "$EX"/runtime/*.ptir; do
  # Host (L3) programs compile on 2 and 4 devices, then run as their '# run:' lines say (with
  # --devices; tests/e2e/dist_cli.sh runs the L3 examples on 2 to 8 devices).
  if grep -qE '^[[:space:]]*host[[:space:]]+@' "$f"; then
    run_pto 0 compile "$f" --devices 2 -o "$T/host2"
    run_pto 0 compile "$f" --devices 4 -o "$T/host4"
  fi
  while IFS= read -r line; do
    args=${line#\# run:}
    # shellcheck disable=SC2086
    run_pto 0 run "$f" $args --check && expect_out PASS
  done < <(grep '^# run:' "$f")
done
finish
