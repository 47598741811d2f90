#!/usr/bin/env bash
# A Python program a new user writes from docs/python.md alone: pto.compile of PTIR text with a
# specialised and a runtime scalar (data/newuser_pipe.ptir), a ChipWorker of 3 cores with a
# resident input, a handle registered once and called four times, then submitted, and
# pto.benchmark on that worker, each result checked against numpy; pto.compile's rule for telling
# a path from PTIR text, a kernel entry's program.entry, and pto.run with pto.compile's keywords
# and a golden (a wrong one fails the result).
source "$(dirname "$0")/lib/common.bash"
PY=${PTO_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
if [ -n "$PTO_SANFLAGS" ]; then # an uninstrumented python3 cannot load sanitized libraries
  echo "SKIP: a sanitizer build ($PTO_SANITIZE): the plain build runs this"
  exit 77
fi
B=$(cd "$(dirname "$PTO")/.." && pwd)
cd "$T" || exit 1
cp "$PTO_SOURCE_DIR/tests/e2e/data/newuser_pipe.ptir" pipe.ptir
cat >l2.py <<'P'
import numpy as np, pto
prog = pto.compile(open("pipe.ptir").read(), alpha=2.0, bias=pto.RUNTIME)   # PTIR text
assert [(p.name, p.bind) for p in prog.params][-2:] == [("alpha", "literal"), ("bias", "runtime")]
rng = np.random.default_rng(7)
with pto.ChipWorker(pto.RunConfig(platform="sim", cores=3)) as wk:
    b = rng.standard_normal((40, 64)).astype(np.float32)
    bt = wk.alloc_tensor((40, 64), np.float32, init=b)            # resident
    y = np.zeros((40, 64), np.float32); rs = np.zeros((40, 1), np.float32)
    with wk.register(prog) as h:
        for step in range(4):
            x = rng.standard_normal((40, 64)).astype(np.float32)
            h(x, bt, y, rs, None, float(step))                    # alpha keeps its place: None
            ref = np.maximum(2 * x + b, 0)
            assert np.allclose(y, ref, rtol=1e-6), step
            assert np.allclose(rs[:, 0], ref.sum(1) + step, rtol=1e-5), step
        h.submit(x, bt, y, rs, 2.0, -1.0).result()                # or its value
        assert np.allclose(rs[:, 0], ref.sum(1) - 1, rtol=1e-5)
    st = pto.benchmark(prog, [x, b, y, rs, None, 0.5], rounds=5, warmup=1, worker=wk)
    assert st.device_wall_us_median > 0 and len(st.invocations) == 5
# a path: no line break and an existing file, or a name ending in .ptir
k = pto.compile("pipe.ptir", entry="scale", alpha=1.5)            # a kernel entry
assert k.entry == "scale", k.entry
for missing in ("nosuch.ptir", "nosuch"):
    try:
        pto.compile(missing)
        raise AssertionError(missing)
    except pto.Error as e:
        print(missing, "->", e.message)
# pto.run: PyPTO's one call, compiling with pto.compile's keywords and comparing with a golden
x = rng.standard_normal((16, 64)).astype(np.float32)
def golden(x_, y_, alpha_):
    y_[...] = x_ * np.float32(alpha_)
res = pto.run("pipe.ptir", x, np.zeros_like(x), 0.5, entry="scale", alpha=0.5, golden=golden)
assert res.passed and res.error is None and res.compiled.entry == "scale", res.error
res = pto.run("pipe.ptir", x, np.zeros_like(x), 0.5, entry="scale", alpha=0.5,
              golden=lambda x_, y_, a_: y_.__setitem__(Ellipsis, x_))
assert not res.passed and res.error, "a wrong golden fails"
print("OK")
P
run_status 0 env PYTHONPATH="$B/python" "$PY" l2.py && expect_out OK
expect_out "nosuch.ptir -> cannot open nosuch.ptir"
expect_out "nosuch -> <string>:1:"
finish
