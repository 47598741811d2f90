#!/usr/bin/env bash
# Every tests/programs/*.ptir, examples/*.ptir and examples/runtime/*.ptir compiled and run with
# --check against the reference interpreter, once per '# run: ARGS' line at its top.
source "$(dirname "$0")/lib/common.bash"

for f in "$PTO_SOURCE_DIR"/tests/programs/*.ptir "$EX"/*.ptir "$EX"/runtime/*.ptir; do
  # Host (L3) programs name their device set in each run line (--devices); one without a run
  # line would go untested, so that is a failure.
  if grep -qE '^[[:space:]]*host[[:space:]]+@' "$f"; then
    expect_true "${f#"$PTO_SOURCE_DIR"/}: a host program has '# run: --devices ...' lines" \
      grep -q '^# run:.*--devices' "$f"
  fi
  while IFS= read -r line; do
    args=${line#\# run:}
    # shellcheck disable=SC2086
    run_pto 0 run "$f" $args --check && expect_out PASS
  done < <(grep '^# run:' "$f")
done
finish
