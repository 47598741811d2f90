#!/usr/bin/env bash
# Progress on long work, on a terminal only: pto compile draws a bar counting the kernels as they
# are lowered (programs of four kernels or more), erased when done; a host program's too, for each
# orch it calls (its callees were compiled without the caller's progress: no bar at all for a
# host program of 20 kernels). Off a terminal nothing is drawn.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
command -v python3 >/dev/null || {
  echo "SKIP: no python3 to give pto a terminal"
  exit 77
}
# on_tty OUT CMD...: runs CMD with stdout and stderr on a new pseudo-terminal, what it wrote into
# OUT; its exit status. Bounded: killed after 300 s.
on_tty() {
  python3 - "$@" <<'PY'
import os, pty, subprocess, sys, time
out = sys.argv[1]
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=s, stdout=s, stderr=s, close_fds=True)
os.close(s)
data, end = b"", time.time() + 300
while time.time() < end:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    data += d
if p.poll() is None:
    p.kill()
open(out, "wb").write(data)
sys.exit(p.wait())
PY
}

on_tty "$T/l2.txt" "$PTO" compile "$PTO_SOURCE_DIR/tests/programs/four_kernels.ptir" -o "$T/l2" \
  --no-cache
expect_true "an L2 program of 4 kernels compiles on a terminal" test $? = 0
expect_true "its bar counts them" grep -qF "4/4 kernels" "$T/l2.txt"
expect_true "and is erased" grep -qF $'\r\033[K' "$T/l2.txt"

on_tty "$T/l3.txt" "$PTO" compile "$EX/llm/llama_layer.ptir" -o "$T/l3" --no-cache
expect_true "a host program compiles on a terminal" test $? = 0
expect_true "its callee's bar counts its 20 kernels" grep -qF "20/20 kernels" "$T/l3.txt"
expect_true "from the first" grep -qF "1/20 kernels" "$T/l3.txt"

run_pto 0 compile "$EX/llm/llama_layer.ptir" -o "$T/l3b" --no-cache
expect_true "off a terminal, no bar" test -z "$(grep -F kernels <<<"$OUT")"
finish
