# Shared by pypto_ports.sh and pypto_ports_slow.sh (PTO_PORTS_SET picks the set): the ports of
# tests/e2e/data/pypto_ports.py through `pto run --check` against their numpy models
# (lib/contract.bash's harness), then through the Python package, which must give the CLI's
# results (skipped in a sanitizer build: an uninstrumented python3 cannot load its libraries).
source "$(dirname "${BASH_SOURCE[0]}")/contract.bash"
run_contract "$PTO_SOURCE_DIR/tests/e2e/data/pypto_ports.py"
if [ -n "$PTO_SANFLAGS" ]; then
  echo "skipped the Python package part: a sanitizer build ($PTO_SANITIZE)"
else
  B=$(cd "$(dirname "$PTO")/.." && pwd)
  PYTHONPATH="$B/python" run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/pypto_ports_py.py" \
    "$PTO_SOURCE_DIR/tests/e2e/data/pypto_ports.py"
  echo "$OUT"
fi
finish
