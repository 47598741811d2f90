#!/usr/bin/env bash
# An L3 program a new user writes from docs/language.md ("L3: host programs", the dist.* ops)
# and docs/python.md alone: a host sends one orch call per device, each with its shard of a
# [2, 16, 64] weight (tensor.select) and its block of x; the kernel multiplies them, puts its
# product at its rank's rows of a window and dist.allgather's it, and dist.allreduce(op=max)'s a
# second window, on one signal window (every collective leaves it zero). Run from the command
# line with --devices 2 (--check and a numpy oracle), then from Python on a prepared
# DistributedWorker with the weight resident as a stacked tensor, dispatched three times.
source "$(dirname "$0")/lib/common.bash"
PY=${PTO_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy (the oracle of this program)"
  exit 77
fi
cd "$T" || exit 1
cat >l3.ptir <<'EOF'
program l3
kernel @k(%w: tensor[16, 64] f32, %x: tensor[16, 64] f32, inout %g: dtensor[32, 64] f32,
          inout %m: dtensor[16, 64] f32, inout %sig: dtensor[1, 8] i32,
          out %y: tensor[32, 64] f32, out %z: tensor[16, 64] f32)
    -> (dtensor[32, 64] f32, dtensor[16, 64] f32, dtensor[1, 8] i32, tensor[32, 64] f32,
        tensor[16, 64] f32) {
  %me = dist.rank(%g)
  %a = tile.load(%w, [0, 0], [16, 64])
  %b = tile.load(%x, [0, 0], [16, 64])
  %p = tile.mul(%a, %b)
  %row = %me * 16
  %g1 = tile.store(%p, [%row, 0], %g)
  dist.allgather(%g1, %sig)
  %m1 = tile.store(%p, [0, 0], %m)
  dist.allreduce(%m1, %sig, op=max)
  %ga = tile.load(%g1, [0, 0], [32, 64])
  %y1 = tile.store(%ga, [0, 0], %y)
  %ma = tile.load(%m1, [0, 0], [16, 64])
  %z1 = tile.store(%ma, [0, 0], %z)
  return %g1, %m1, %sig, %y1, %z1
}

orch @step(%w: tensor[16, 64] f32, %x: tensor[16, 64] f32, inout %g: dtensor[32, 64] f32,
           inout %m: dtensor[16, 64] f32, inout %sig: dtensor[1, 8] i32,
           out %y: tensor[32, 64] f32, out %z: tensor[16, 64] f32)
    -> (dtensor[32, 64] f32, dtensor[16, 64] f32, dtensor[1, 8] i32, tensor[32, 64] f32,
        tensor[16, 64] f32) {
  %g1, %m1, %s1, %y1, %z1 = call @k(%w, %x, %g, %m, %sig, %y, %z)
  return %g1, %m1, %s1, %y1, %z1
}

host @main(%w: tensor[2, 16, 64] f32, %x: tensor[32, 64] f32, out %y: tensor[64, 64] f32,
           out %z: tensor[32, 64] f32) {
  %n = dist.world_size()
  %wg = dist.alloc_window([32, 64], f32)
  %wm = dist.alloc_window([16, 64], f32)
  %ws = dist.alloc_window([1, 8], i32)
  %g = dist.window(%wg)
  %m = dist.window(%wm)
  %s = dist.window(%ws)
  for %r in range(0, %n) {
    %wr = tensor.select(%w, %r)
    %xr = tensor.slice(%x, [%r * 16, 0], [16, 64])
    %yr = tensor.slice(%y, [%r * 32, 0], [32, 64])
    %zr = tensor.slice(%z, [%r * 16, 0], [16, 64])
    call @step(%wr, %xr, %g, %m, %s, %yr, %zr) device=%r
  }
}
EOF
run_status 0 "$PY" -c '
import numpy as np
rng = np.random.default_rng(21)
np.save("w.npy", rng.standard_normal((2, 16, 64)).astype(np.float32))
np.save("x.npy", rng.standard_normal((32, 64)).astype(np.float32))'
run_pto 0 run l3.ptir --devices 2 --in w=w.npy --in x=x.npy --out y=y.npy --out z=z.npy --check &&
  expect_out "2 devices (0,1)" && expect_out PASS
run_status 0 "$PY" -c '
import numpy as np
w, x, y, z = (np.load(f + ".npy") for f in "wxyz")
p = [w[r] * x[r * 16:(r + 1) * 16] for r in range(2)]
assert (y[:32] == np.concatenate(p)).all() and (y[32:] == y[:32]).all()
assert (z[:16] == np.maximum(p[0], p[1])).all() and (z[16:] == z[:16]).all()
print("OK")' && expect_out OK

# pto bench of it (cli.md, pto bench): two dispatches a run, so --tree needs --rank (or --pid);
# without, the statistics are printed and --tree is refused after them.
run_pto 2 bench l3.ptir --devices 2 --in w=w.npy --in x=x.npy --rounds 3 --warmup 1 --tree
expect_out "per_dispatch (device wall)" && expect_out "rank 1 slot 0 @step"
expect_out "--tree averages one dispatch over the rounds: choose it with --rank R or --pid P"
expect_out "(2 dispatch slots per round)"
run_pto 0 bench l3.ptir --devices 2 --in w=w.npy --in x=x.npy --rounds 3 --warmup 1 --tree --rank 1
expect_out "mean tree of rank 1 slot 0 @step"
run_pto 0 bench --help
expect_out "run, --tree without --rank or --pid is refused once the statistics"

if [ -n "$PTO_SANFLAGS" ]; then # an uninstrumented python3 cannot load sanitized libraries
  echo "note: a sanitizer build ($PTO_SANITIZE): the Python part is run by the plain build"
  finish
  exit
fi
B=$(cd "$(dirname "$PTO")/.." && pwd)
cat >l3.py <<'P'
import numpy as np, pto
prog = pto.compile("l3.ptir", devices=2)
rng = np.random.default_rng(5)
w = rng.standard_normal((2, 16, 64)).astype(np.float32)
with pto.DistributedWorker(prog) as rt:
    ws = rt.alloc_stacked_tensor(w)               # shard i on device i, uploaded once
    for step in range(3):
        x = rng.standard_normal((32, 64)).astype(np.float32)
        y = np.zeros((64, 64), np.float32); z = np.zeros((32, 64), np.float32)
        rt(ws, x, y, z)
        p = [w[r] * x[r * 16:(r + 1) * 16] for r in range(2)]
        assert (y[:32] == np.concatenate(p)).all() and (y[32:] == y[:32]).all(), step
        assert (z[:16] == np.maximum(p[0], p[1])).all() and (z[16:] == z[:16]).all(), step
    assert (rt.copy_stacked_from(ws, np.empty_like(w)) == w).all()
    rt.free_stacked_tensor(ws)
print("OK")
P
run_status 0 env PYTHONPATH="$B/python" "$PY" l3.py && expect_out OK
finish
