"""The L3 contract's resident data (docs/language.md, "L3: host programs"; docs/python.md) against
numpy, through pto.DistributedWorker: a stacked resident tensor means what the host array it was
made from means (tensor.select in a host is shard i whichever device holds it, and a tensor.slice
of the shard or of the stack's leading dim follows); a program gives the same bits with the
stacked tensor as with the host array; passing a shard to another device is a launch error naming
the shard, both devices and the worker_ids that fit, and runs nothing; several programs on one
worker share resident tensors (one writes them, the next reads them, in order); a collective's
window and per-device scalars next to them. Run by tests/e2e/contract_l3.sh as
`python3 contract_l3_stacked.py processes|threads`."""
import sys

import numpy as np

import pto

CHIPS = sys.argv[1]
rng = np.random.default_rng(77)
F = np.float32
fails = []


def check(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape or \
            not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        fails.append("%s: got %r, want %r" % (name, got, want))
    else:
        print("ok: " + name)


def expect_error(name, fn, texts, code=None):
    try:
        fn()
    except pto.Error as e:
        msg = str(e)
        missing = [t for t in texts if t not in msg]
        if missing or (code is not None and e.code != code):
            fails.append("%s: error %r (code %s) lacks %r" % (name, msg, e.code, missing))
        else:
            print("ok: " + name)
        return
    fails.append("%s: no error" % name)


KERNELS = """
kernel @axpb(%x: tensor[4, 8] f32, %w: tensor[4, 8] f32, out %y: tensor[4, 8] f32, %b: f32)
    -> (tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %u = tile.load(%w, [0, 0], [4, 8])
  %v = tile.mul(%t, %u)
  %z = tile.adds(%v, %b)
  %y1 = tile.store(%z, [0, 0], %y)
  return %y1
}
orch @o(%x: tensor[4, 8] f32, %w: tensor[4, 8] f32, out %y: tensor[4, 8] f32, %b: f32)
    -> (tensor[4, 8] f32) {
  call @axpb(%x, %w, %y, %b)
  return %y
}
"""
# Shard i of %w (rows 2..5 of it: a slice of the shard) times x[i], plus a per-device scalar, on
# device %place(i); a slice of the stack's leading dim ([1, 3): shards 1 and 2) selected again.
SEL = """program sel
""" + KERNELS + """
host @main(%w: tensor[3, 8, 8] f32, %x: tensor[3, 4, 8] f32, out %y: tensor[3, 4, 8] f32,
           out %z: tensor[2, 4, 8] f32) {
  %n = dist.world_size()
  for %i in range(0, %n) {
    %wi = tensor.select(%w, %i)
    %ws = tensor.slice(%wi, [2, 0], [4, 8])
    %xi = tensor.select(%x, %i)
    %yi = tensor.select(%y, %i)
    call @o(%xi, %ws, %yi, f32(%i) * 0.5) device=PLACE
  }
  %w12 = tensor.slice(%w, [1, 0, 0], [2, 8, 8])
  for %j in range(0, 2) {
    %wj = tensor.select(%w12, %j)
    %wt = tensor.slice(%wj, [0, 0], [4, 8])
    %xj = tensor.select(%x, %j)
    %zj = tensor.select(%z, %j)
    call @o(%xj, %wt, %zj, 1.0) device=PLACE2
  }
}
"""
# Program 1 of a pair on one worker: acc[i] += x[i] on device i (acc resident, stacked, inout).
ACC = """program acc
kernel @add(%x: tensor[4, 8] f32, inout %a: tensor[4, 8] f32) -> (tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %u = tile.load(%a, [0, 0], [4, 8])
  %v = tile.add(%t, %u)
  %a1 = tile.store(%v, [0, 0], %a)
  return %a1
}
orch @o(%x: tensor[4, 8] f32, inout %a: tensor[4, 8] f32) -> (tensor[4, 8] f32) {
  call @add(%x, %a)
  return %a
}
host @main(%x: tensor[3, 4, 8] f32, inout %acc: tensor[3, 4, 8] f32) {
  for %i in range(0, dist.world_size()) {
    %xi = tensor.select(%x, %i)
    %ai = tensor.select(%acc, %i)
    call @o(%xi, %ai) device=%i
  }
}
""".replace("  for %i in range(0, dist.world_size()) {",
            "  %n = dist.world_size()\n  for %i in range(0, %n) {")
# Program 2: every device's acc shard summed over devices (allreduce) into y[i].
RED = """program red
kernel @k(%a: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 3] i32,
          out %y: tensor[4, 8] f32) -> (dtensor[4, 8] f32, dtensor[1, 3] i32, tensor[4, 8] f32) {
  %t = tile.load(%a, [0, 0], [4, 8])
  %w1 = tile.store(%t, [0, 0], %w)
  dist.allreduce(%w1, %sig, op=sum, mode=ring)
  %r = tile.load(%w1, [0, 0], [4, 8])
  %y1 = tile.store(%r, [0, 0], %y)
  return %w1, %sig, %y1
}
orch @o(%a: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 3] i32,
        out %y: tensor[4, 8] f32) -> (dtensor[4, 8] f32, dtensor[1, 3] i32, tensor[4, 8] f32) {
  %p, %q, %r = call @k(%a, %w, %sig, %y)
  return %p, %q, %r
}
host @main(%acc: tensor[3, 4, 8] f32, out %y: tensor[3, 4, 8] f32) {
  %ww = dist.alloc_window([4, 8], f32)
  %ws = dist.alloc_window([1, 3], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  for %i in range(0, 3) {
    %ai = tensor.select(%acc, %i)
    %yi = tensor.select(%y, %i)
    call @o(%ai, %w, %s, %yi) device=%i
  }
}
"""

# A view across shards (a reshape of the stack, sliced over a shard boundary): the host array
# runs; a stacked tensor's shards live on different devices, so the call is a launch error
# naming the shards (docs/language.md: select one shard).
SPAN = """program span
""" + KERNELS + """
host @main(%w: tensor[3, 8, 8] f32, %x: tensor[3, 4, 8] f32, out %y: tensor[3, 4, 8] f32) {
  %flat = tensor.reshape(%w, [24, 8])
  %ws = tensor.slice(%flat, [6, 0], [4, 8])
  %x0 = tensor.select(%x, 0)
  %y0 = tensor.select(%y, 0)
  call @o(%x0, %ws, %y0, 0.0) device=0
}
"""

ident = SEL.replace("device=PLACE2", "device=%j + 1").replace("device=PLACE", "device=%i")
rot = SEL.replace("device=PLACE2", "device=mod(%j + 2, 3)").replace("device=PLACE", "device=mod(%i + 1, %n)")
p_ident = pto.compile(ident, devices=3)
p_rot = pto.compile(rot, devices=3)
p_acc = pto.compile(ACC, devices=3)
p_red = pto.compile(RED, devices=3)
p_span = pto.compile(SPAN, devices=3)

wts = rng.standard_normal((3, 8, 8)).astype(F)
x = rng.standard_normal((3, 4, 8)).astype(F)


def sel_want():
    y = np.stack([(x[i] * wts[i, 2:6]).astype(F) + F(F(i) * F(0.5)) for i in range(3)])
    z = np.stack([(x[j] * wts[j + 1, 0:4]).astype(F) + F(1) for j in range(2)])
    return y, z


with pto.DistributedWorker(devices=3, cores_per_chip=1, chips=CHIPS) as w:
    yw, zw = sel_want()
    # the host array
    y, z = np.zeros((3, 4, 8), F), np.zeros((2, 4, 8), F)
    w.run(p_ident, wts, x, y, z)
    check("sel_host_array", y, yw)
    check("sel_host_array_z", z, zw)
    # the same array stacked, shard i on device i
    st = w.alloc_stacked_tensor(wts)
    y2, z2 = np.zeros((3, 4, 8), F), np.zeros((2, 4, 8), F)
    w.run(p_ident, st, x, y2, z2)
    check("sel_stacked", y2, yw)
    check("sel_stacked_z", z2, zw)
    # shard i on device i + 1: a program that passes shard i to device i + 1 gives the same bits
    strot = w.alloc_stacked_tensor(wts, worker_ids=[1, 2, 0])
    y3, z3 = np.zeros((3, 4, 8), F), np.zeros((2, 4, 8), F)
    w.run(p_rot, strot, x, y3, z3)
    check("sel_stacked_rotated", y3, yw)
    check("sel_stacked_rotated_z", z3, zw)
    y4, z4 = np.zeros((3, 4, 8), F), np.zeros((2, 4, 8), F)
    w.run(p_rot, wts, x, y4, z4)
    check("sel_host_array_rotated", y4, yw)
    # ... and passing it elsewhere is a launch error naming the shard, both devices and the
    # worker_ids that fit; nothing ran (the outputs are untouched, the shards unchanged)
    y5 = np.full((3, 4, 8), 7, F)
    z5 = np.full((2, 4, 8), 7, F)
    expect_error("misplaced_shard", lambda: w.run(p_rot, st, x, y5, z5),
                 ["shard 0", "device 0", "device=1", "worker_ids=[1, 2, 0]"], pto.LAUNCH)
    check("misplaced_shard_ran_nothing", y5, np.full((3, 4, 8), 7, F))
    check("misplaced_shard_kept", w.copy_stacked_from(st), wts)
    # a view across shards: the host array's rows 6..9; the stacked tensor's a launch error
    y7 = np.zeros((3, 4, 8), F)
    w.run(p_span, wts, x, y7)
    check("span_host_array", y7[0], (x[0] * wts.reshape(24, 8)[6:10]).astype(F) + F(0))
    y8 = np.full((3, 4, 8), 7, F)
    expect_error("span_stacked", lambda: w.run(p_span, st, x, y8),
                 ["argument 1 spans shards 0 to 1 of a stacked tensor",
                  "pass one shard (tensor.select(%t, i))"], pto.LAUNCH)
    check("span_stacked_ran_nothing", y8, np.full((3, 4, 8), 7, F))
    # several programs on one worker sharing a resident stacked tensor: two runs of acc, then red
    acc0 = rng.standard_normal((3, 4, 8)).astype(F)
    sacc = w.alloc_stacked_tensor(acc0)
    x1 = rng.standard_normal((3, 4, 8)).astype(F)
    x2 = rng.standard_normal((3, 4, 8)).astype(F)
    w.run(p_acc, x1, sacc)
    w.run(p_acc, x2, sacc)
    host_acc = (acc0 + x1).astype(F) + x2
    check("programs_share_resident", w.copy_stacked_from(sacc), host_acc)
    y6 = np.zeros((3, 4, 8), F)
    w.run(p_red, sacc, y6)
    s = host_acc[0]
    for r in (1, 2):
        s = (s + host_acc[r]).astype(F)
    check("programs_share_resident_reduced", y6, np.stack([s] * 3))
    # the same two programs with the host array give the same bits
    hacc = acc0.copy()
    w.run(p_acc, x1, hacc)
    w.run(p_acc, x2, hacc)
    check("programs_host_array", hacc, host_acc)
    # submitted back to back: each run sees the one before it
    h1 = w.submit(p_acc, x1, sacc)
    h2 = w.submit(p_acc, x2, sacc)
    h1.result(timeout=120)
    h2.result(timeout=120)
    check("programs_submitted_in_order", w.copy_stacked_from(sacc), (host_acc + x1).astype(F) + x2)

for f in fails:
    print("FAIL: " + f)
print("%s: %d failed" % (CHIPS, len(fails)))
sys.exit(1 if fails else 0)
