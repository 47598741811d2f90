# The L3 contract (docs/language.md: "L3: host programs" and the dist.* ops) against numpy, as a
# tester writes it from the contract alone: every collective with every op and every dtype the
# contract allows (both allreduce modes, sizes the rank count does not divide, runtime roots),
# point-to-point notify/wait/remote_load/remote_store, collectives in loops on one signal window,
# host-side tensor ops and per-device scalars, and the errors the contract names. Expected values
# come from numpy here, never from pto's interpreter; every case that runs also passes --check
# with a worst error of 0. Run by tests/e2e/contract_l3.sh (on forked chips and chips as threads)
# and contract_l3_slow.sh (more rank counts, and under MPI).
import os

I = np.int32
rng = np.random.default_rng(321)
CASES = []
SLOW = os.environ.get("PTO_CONTRACT_L3_SLOW") == "1"

NUMERIC = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
           "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16,
           "bf16": np.float32, "f32": np.float32, "f64": np.float64}
OPS = ("sum", "max", "min", "prod")
MODES = ("mesh", "ring")
AR = (7, 5)     # the allreduce window: 35 elements, divisible by no rank count used here
GC = 5          # the gather window's columns; its rows are 4 per rank


def gen(dt, shape, special):
    """Inputs of one rank for dtype dt: integers over the whole range (sums and products wrap),
    floats with NaN, -0, +0 and infinities where `special` asks."""
    if dt in ("f16", "bf16", "f32", "f64"):
        a = (rng.standard_normal(shape) * 4).astype(np.float32 if dt == "bf16" else NUMERIC[dt])
        if special is not None:
            flat = a.reshape(-1)
            for k, v in enumerate(special):
                flat[k] = v
        return a
    info = np.iinfo(NUMERIC[dt])
    return rng.integers(info.min, info.max, shape, dtype=NUMERIC[dt], endpoint=True)


def reduce_ranks(xs, op, dt):
    """The contract's reduction over ranks: in rank order; f16 and bf16 in f32, rounded once;
    float max/min ignore a NaN unless every rank's is NaN, and take +0 above -0."""
    acc = np.float32 if dt in ("f16", "bf16") else xs[0].dtype
    vals = [x.astype(acc) for x in xs]
    r = vals[0].copy()
    with np.errstate(all="ignore"):
        for v in vals[1:]:
            if op == "sum":
                r = (r + v).astype(acc)
            elif op == "prod":
                r = (r * v).astype(acc)
            elif np.issubdtype(acc, np.floating):
                pick_v = v > r if op == "max" else v < r
                zeros = (v == 0) & (r == 0)
                if op == "max":
                    pick_v |= zeros & ~np.signbit(v) & np.signbit(r)
                else:
                    pick_v |= zeros & np.signbit(v) & ~np.signbit(r)
                pick_v |= np.isnan(r) & ~np.isnan(v)
                r = np.where(pick_v, v, r)
            else:
                r = np.maximum(r, v) if op == "max" else np.minimum(r, v)
    if dt == "bf16":
        return bf16(r)
    return r.astype(xs[0].dtype)


def as_file(a, dt):
    return bf16(a) if dt == "bf16" else a


def collectives_program(dt, n):
    """Every collective on dtype dt over n ranks, one after another on one signal window, each
    rank's window rewritten at once after each: 8 allreduces (4 ops x 2 modes) of a 7x5 window,
    a broadcast from a runtime root, an allgather and 4 reduce_scatters of a [4n, 5] window."""
    G = 4 * n
    lines = []
    ar_out, g_out = [], []
    for op in OPS:
        for mode in MODES:
            k = len(ar_out)
            lines.append("  %%a%d = tile.store(%%t, [0, 0], %%w)" % k)
            lines.append("  dist.allreduce(%%a%d, %%sig, op=%s, mode=%s)" % (k, op, mode))
            lines.append("  %%ra%d = tile.load(%%a%d, [0, 0], [%d, %d])" % (k, k, AR[0], AR[1]))
            lines.append("  tile.store(%%ra%d, [%d, 0], %%ya)" % (k, k * AR[0]))
            ar_out.append((op, mode))
    lines.append("  %g0 = tile.store(%u, [0, 0], %g)")
    lines.append("  dist.broadcast(%g0, %sig, %root)")
    lines.append("  %%rg0 = tile.load(%%g0, [0, 0], [%d, %d])" % (G, GC))
    lines.append("  tile.store(%rg0, [0, 0], %yg)")
    lines.append("  %g1 = tile.store(%u, [0, 0], %g)")
    lines.append("  dist.allgather(%g1, %sig)")
    lines.append("  %%rg1 = tile.load(%%g1, [0, 0], [%d, %d])" % (G, GC))
    lines.append("  tile.store(%%rg1, [%d, 0], %%yg)" % G)
    for k, op in enumerate(OPS):
        lines.append("  %%s%d = tile.store(%%u, [0, 0], %%g)" % k)
        lines.append("  dist.reduce_scatter(%%s%d, %%sig, op=%s)" % (k, op))
        lines.append("  %%rs%d = tile.load(%%s%d, [%%me * 4, 0], [4, %d])" % (k, k, GC))
        lines.append("  tile.store(%%rs%d, [%d, 0], %%yr)" % (k, 4 * k))
    lines.append("  %%rz = tile.load(%%sig, [0, 0], [1, %d])" % (n + 2))
    lines.append("  tile.store(%rz, [0, 0], %yz)")
    body = "\n".join(lines)
    nar = len(ar_out)
    ks = ("%%x: tensor[%d, %d] %s, %%xg: tensor[%d, %d] %s, inout %%w: dtensor[%d, %d] %s, "
          "inout %%g: dtensor[%d, %d] %s, inout %%sig: dtensor[1, %d] i32, "
          "out %%ya: tensor[%d, %d] %s, out %%yg: tensor[%d, %d] %s, out %%yr: tensor[16, %d] %s, "
          "out %%yz: tensor[1, %d] i32, %%root: index"
          % (AR[0], AR[1], dt, G, GC, dt, AR[0], AR[1], dt, G, GC, dt, n + 2,
             nar * AR[0], AR[1], dt, 2 * G, GC, dt, GC, dt, n + 2))
    rs = ("dtensor[%d, %d] %s, dtensor[%d, %d] %s, dtensor[1, %d] i32, tensor[%d, %d] %s, "
          "tensor[%d, %d] %s, tensor[16, %d] %s, tensor[1, %d] i32"
          % (AR[0], AR[1], dt, G, GC, dt, n + 2, nar * AR[0], AR[1], dt, 2 * G, GC, dt, GC, dt,
             n + 2))
    prog = """program coll_%(dt)s
kernel @k(%(ks)s)
    -> (%(rs)s) {
  %%me = dist.rank(%%w)
  %%t = tile.load(%%x, [0, 0], [%(r)d, %(c)d])
  %%u = tile.load(%%xg, [0, 0], [%(G)d, %(GC)d])
%(body)s
  return %%w, %%g, %%sig, %%ya, %%yg, %%yr, %%yz
}
orch @o(%(ks)s)
    -> (%(rs)s) {
  %%a, %%b, %%c, %%d, %%e, %%f, %%h = call @k(%%x, %%xg, %%w, %%g, %%sig, %%ya, %%yg, %%yr, %%yz, %%root)
  return %%a, %%b, %%c, %%d, %%e, %%f, %%h
}
host @main(%%x: tensor[%(n)d, %(r)d, %(c)d] %(dt)s, %%xg: tensor[%(n)d, %(G)d, %(GC)d] %(dt)s,
           out %%ya: tensor[%(n)d, %(nar_r)d, %(c)d] %(dt)s, out %%yg: tensor[%(n)d, %(G2)d, %(GC)d] %(dt)s,
           out %%yr: tensor[%(n)d, 16, %(GC)d] %(dt)s, out %%yz: tensor[%(n)d, 1, %(S)d] i32,
           %%root: index = runtime) {
  %%ww = dist.alloc_window([%(r)d, %(c)d], %(dt)s)
  %%wg = dist.alloc_window([%(G)d, %(GC)d], %(dt)s)
  %%ws = dist.alloc_window([1, %(S)d], i32)
  %%w = dist.window(%%ww)
  %%g = dist.window(%%wg)
  %%s = dist.window(%%ws)
  for %%d in range(0, dist_n) {
    %%xd = tensor.select(%%x, %%d)
    %%xgd = tensor.select(%%xg, %%d)
    %%yad = tensor.select(%%ya, %%d)
    %%ygd = tensor.select(%%yg, %%d)
    %%yrd = tensor.select(%%yr, %%d)
    %%yzd = tensor.select(%%yz, %%d)
    call @o(%%xd, %%xgd, %%w, %%g, %%s, %%yad, %%ygd, %%yrd, %%yzd, %%root) device=%%d
  }
}
""" % dict(dt=dt, ks=ks, rs=rs, r=AR[0], c=AR[1], G=G, GC=GC, body=body, n=n,
           nar_r=nar * AR[0], G2=2 * G, S=n + 2)
    prog = prog.replace("range(0, dist_n)", "range(0, %nd)").replace(
        "  for %d in", "  %nd = dist.world_size()\n  for %d in")
    return prog, ar_out


def collectives_case(dt, n, root):
    prog, ar_out = collectives_program(dt, n)
    G = 4 * n
    fl = dt in ("f16", "bf16", "f32", "f64")
    inf, nan = float("inf"), float("nan")
    # NaN on some ranks (ignored by max/min) and on every rank at element 1; -0/+0 mixes;
    # infinities of both signs (inf - inf in a sum is NaN).
    specials = [[nan, nan, -0.0, 0.0, -0.0, inf, 1.0],
                [1.0, nan, 0.0, -0.0, -0.0, -inf, nan],
                [2.0, nan, -0.0, -0.0, -0.0, 3.0, -1.0],
                [nan, nan, 0.0, 0.0, -0.0, 1.0, 2.0]]
    xs = [gen(dt, AR, specials[r % 4] if fl else None) for r in range(n)]
    xg = [gen(dt, (G, GC), specials[(r + 1) % 4] if fl else None) for r in range(n)]
    files = [as_file(a, dt) for a in xs]
    gfiles = [as_file(a, dt) for a in xg]
    # what the ranks hold, in the window's dtype (bf16: the rounded values, as f32)
    held = [bf16_to_f32(f) if dt == "bf16" else f for f in files]
    gheld = [bf16_to_f32(f) if dt == "bf16" else f for f in gfiles]
    ya = np.concatenate([reduce_ranks(held, op, dt) for op, mode in ar_out])
    yg = np.concatenate([gfiles[root], np.concatenate([gfiles[r][4 * r:4 * r + 4]
                                                        for r in range(n)])])
    yr = [np.concatenate([reduce_ranks([h[4 * r:4 * r + 4] for h in gheld], op, dt)
                          for op in OPS]) for r in range(n)]
    want = {"ya": np.stack([ya] * n), "yg": np.stack([yg] * n), "yr": np.stack(yr),
            "yz": np.zeros((n, 1, n + 2), I)}
    if dt == "bf16":  # NaN's sign and payload are not the contract's (inf + -inf on x86: -NaN)
        want = {k: ("bf16", v) if k in ("ya", "yr") else v for k, v in want.items()}
    return Case("collectives_%s_n%d" % (dt, n), prog,
                ins={"x": np.stack(files), "xg": np.stack(gfiles), "root": str(root)},
                want=want, args=["--devices", str(n)])


# Every numeric dtype on 3 ranks (root 1; 35 elements over 3 ranks: uneven ring chunks); f32 on
# 4 ranks with root 3; with PTO_CONTRACT_L3_SLOW=1 (contract_l3_slow.sh) more on 2 and 4 ranks.
for dt in NUMERIC:
    CASES.append(collectives_case(dt, 3, 1))
CASES.append(collectives_case("f32", 4, 3))
if SLOW:
    for dt in ("i8", "bf16", "u64", "f16", "i64"):
        CASES.append(collectives_case(dt, 4, 3))
    for dt in ("f16", "u32", "f64"):
        CASES.append(collectives_case(dt, 2, 0))
# bool windows: broadcast and allgather move bits (a bool allreduce is a verifier error, below).
def bool_case(n, root):
    G = 2 * n
    xb = rng.integers(0, 2, (n, G, 4)).astype(bool)
    prog = """program collb
kernel @k(%%x: tensor[%(G)d, 4] bool, inout %%g: dtensor[%(G)d, 4] bool, inout %%sig: dtensor[1, %(n)d] i32,
          out %%y: tensor[%(G2)d, 4] bool, %%root: index)
    -> (dtensor[%(G)d, 4] bool, dtensor[1, %(n)d] i32, tensor[%(G2)d, 4] bool) {
  %%t = tile.load(%%x, [0, 0], [%(G)d, 4])
  %%g0 = tile.store(%%t, [0, 0], %%g)
  dist.broadcast(%%g0, %%sig, %%root)
  %%a = tile.load(%%g0, [0, 0], [%(G)d, 4])
  tile.store(%%a, [0, 0], %%y)
  %%g1 = tile.store(%%t, [0, 0], %%g0)
  dist.allgather(%%g1, %%sig)
  %%b = tile.load(%%g1, [0, 0], [%(G)d, 4])
  tile.store(%%b, [%(G)d, 0], %%y)
  return %%g1, %%sig, %%y
}
orch @o(%%x: tensor[%(G)d, 4] bool, inout %%g: dtensor[%(G)d, 4] bool, inout %%sig: dtensor[1, %(n)d] i32,
        out %%y: tensor[%(G2)d, 4] bool, %%root: index)
    -> (dtensor[%(G)d, 4] bool, dtensor[1, %(n)d] i32, tensor[%(G2)d, 4] bool) {
  %%a, %%b, %%c = call @k(%%x, %%g, %%sig, %%y, %%root)
  return %%a, %%b, %%c
}
host @main(%%x: tensor[%(n)d, %(G)d, 4] bool, out %%y: tensor[%(n)d, %(G2)d, 4] bool, %%root: index = runtime) {
  %%wg = dist.alloc_window([%(G)d, 4], bool)
  %%ws = dist.alloc_window([1, %(n)d], i32)
  %%g = dist.window(%%wg)
  %%s = dist.window(%%ws)
  for %%d in range(0, dist.world_size()) {
    %%xd = tensor.select(%%x, %%d)
    %%yd = tensor.select(%%y, %%d)
    call @o(%%xd, %%g, %%s, %%yd, %%root) device=%%d
  }
}
""" % dict(G=G, G2=2 * G, n=n)
    prog = prog.replace("  for %d in range(0, dist.world_size()) {",
                        "  %nd = dist.world_size()\n  for %d in range(0, %nd) {")
    y = np.concatenate([xb[root], np.concatenate([xb[r][2 * r:2 * r + 2] for r in range(n)])])
    return Case("collectives_bool_n%d" % n, prog, ins={"x": xb, "root": str(root)},
                want={"y": np.stack([y] * n)}, args=["--devices", str(n)])


CASES.append(bool_case(3, 2))

# Point to point: every rank remote_stores its row into every rank's window (itself included) and
# counts arrivals with atomic_add notifies on an element past the barrier's; after a barrier each
# rank remote_loads its right neighbour's copy of x. 4 ranks on a permuted device set (ids 2,0,3,1:
# dist.world_size() is 4, device=d the d-th id).
P2P = """program p2p
kernel @k(%x: tensor[1, 8] f32, inout %w: dtensor[4, 8] f32, inout %v: dtensor[1, 8] f32,
          inout %sig: dtensor[1, 6] i32, out %y: tensor[4, 8] f32, out %z: tensor[1, 8] f32)
    -> (dtensor[4, 8] f32, dtensor[1, 8] f32, dtensor[1, 6] i32, tensor[4, 8] f32, tensor[1, 8] f32) {
  %me = dist.rank(%w)
  %n = dist.nranks(%w)
  %t = tile.load(%x, [0, 0], [1, 8])
  %v1 = tile.store(%t, [0, 0], %v)
  for %p in range(0, %n) {
    dist.remote_store(%t, %w, %p, [%me, 0])
    dist.notify(%sig, %p, [0, 5], 1, op=atomic_add)
  }
  dist.wait(%sig, [0, 5], i32(%n), cmp=ge)
  dist.notify(%sig, %me, [0, 5], 0, op=set)
  %a = tile.load(%w, [0, 0], [4, 8])
  tile.store(%a, [0, 0], %y)
  dist.barrier(%sig)
  %right = mod(%me + 1, %n)
  %b = dist.remote_load(%v1, %right, [0, 0], [1, 8])
  tile.store(%b, [0, 0], %z)
  dist.barrier(%sig)
  return %w, %v1, %sig, %y, %z
}
orch @o(%x: tensor[1, 8] f32, inout %w: dtensor[4, 8] f32, inout %v: dtensor[1, 8] f32,
        inout %sig: dtensor[1, 6] i32, out %y: tensor[4, 8] f32, out %z: tensor[1, 8] f32)
    -> (dtensor[4, 8] f32, dtensor[1, 8] f32, dtensor[1, 6] i32, tensor[4, 8] f32, tensor[1, 8] f32) {
  %a, %b, %c, %d, %e = call @k(%x, %w, %v, %sig, %y, %z)
  return %a, %b, %c, %d, %e
}
host @main(%x: tensor[4, 1, 8] f32, out %y: tensor[4, 4, 8] f32, out %z: tensor[4, 1, 8] f32) {
  %ww = dist.alloc_window([4, 8], f32)
  %wv = dist.alloc_window([1, 8], f32)
  %ws = dist.alloc_window([1, 6], i32)
  %w = dist.window(%ww)
  %v = dist.window(%wv)
  %s = dist.window(%ws)
  %nd = dist.world_size()
  for %d in range(0, %nd) {
    %xd = tensor.select(%x, %d)
    %yd = tensor.select(%y, %d)
    %zd = tensor.select(%z, %d)
    call @o(%xd, %w, %v, %s, %yd, %zd) device=%d
  }
}
"""
xp = rng.standard_normal((4, 1, 8)).astype(np.float32)
CASES.append(Case("p2p_store_load_notify", P2P, ins={"x": xp},
                  want={"y": np.stack([xp[:, 0]] * 4), "z": np.roll(xp, -1, axis=0)},
                  args=["--devices", "2,0,3,1"]))

# Collectives in a loop on one signal window, each rank rewriting its window at once after each:
# acc += allreduce(x * (k + 1)) for k in 0..4, alternating modes; the signal window is zero after.
LOOP = """program loop
kernel @k(%x: tensor[3, 4] i64, inout %w: dtensor[3, 4] i64, inout %sig: dtensor[1, 3] i32,
          out %y: tensor[3, 4] i64, out %ys: tensor[1, 3] i32)
    -> (dtensor[3, 4] i64, dtensor[1, 3] i32, tensor[3, 4] i64, tensor[1, 3] i32) {
  %t = tile.load(%x, [0, 0], [3, 4])
  %z = tile.full([3, 4], i64, 0)
  %acc = for %k in range(0, 5) iter(%a = %z) {
    %tk = tile.muls(%t, i64(%k) + 1)
    %w1 = tile.store(%tk, [0, 0], %w)
    %even = mod(%k, 2) == 0
    if %even {
      dist.allreduce(%w1, %sig, mode=ring)
    } else {
      dist.allreduce(%w1, %sig, mode=mesh)
    }
    %r = tile.load(%w1, [0, 0], [3, 4])
    %a1 = tile.add(%a, %r)
    yield %a1
  }
  %y1 = tile.store(%acc, [0, 0], %y)
  %s = tile.load(%sig, [0, 0], [1, 3])
  %ys1 = tile.store(%s, [0, 0], %ys)
  return %w, %sig, %y1, %ys1
}
orch @o(%x: tensor[3, 4] i64, inout %w: dtensor[3, 4] i64, inout %sig: dtensor[1, 3] i32,
        out %y: tensor[3, 4] i64, out %ys: tensor[1, 3] i32)
    -> (dtensor[3, 4] i64, dtensor[1, 3] i32, tensor[3, 4] i64, tensor[1, 3] i32) {
  %a, %b, %c, %d = call @k(%x, %w, %sig, %y, %ys)
  return %a, %b, %c, %d
}
host @main(%x: tensor[3, 3, 4] i64, out %y: tensor[3, 3, 4] i64, out %ys: tensor[3, 1, 3] i32) {
  %ww = dist.alloc_window([3, 4], i64)
  %ws = dist.alloc_window([1, 3], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  for %d in range(0, 3) {
    %xd = tensor.select(%x, %d)
    %yd = tensor.select(%y, %d)
    %sd = tensor.select(%ys, %d)
    call @o(%xd, %w, %s, %yd, %sd) device=%d
  }
}
"""
xl = rng.integers(-1000, 1000, (3, 3, 4)).astype(np.int64)
CASES.append(Case("collectives_in_loop", LOOP, ins={"x": xl},
                  want={"y": np.stack([sum((k + 1) * xl.sum(0) for k in range(5))] * 3),
                        "ys": np.zeros((3, 1, 3), I)},
                  args=["--devices", "3"]))

# Host-side ops: reshape, slice and select of host arrays; a per-device scalar computed in the
# host (if/else, a cast of the loop index); tensor.create as a buffer one device writes and another
# reads, ordered by the data; a call without device= goes to device 0.
HOST = """program hostops
kernel @axpb(%x: tensor[2, 16] f32, out %y: tensor[2, 16] f32, %a: f32, %b: f32)
    -> (tensor[2, 16] f32) {
  %t = tile.load(%x, [0, 0], [2, 16])
  %u = tile.muls(%t, %a)
  %v = tile.adds(%u, %b)
  %y1 = tile.store(%v, [0, 0], %y)
  return %y1
}
orch @o(%x: tensor[2, 16] f32, out %y: tensor[2, 16] f32, %a: f32, %b: f32) -> (tensor[2, 16] f32) {
  call @axpb(%x, %y, %a, %b)
  return %y
}
host @main(%x: tensor[4, 32] f32, out %y: tensor[3, 2, 16] f32, out %z: tensor[2, 16] f32,
           %s: f32 = runtime) {
  %xr = tensor.reshape(%x, [8, 16])
  %nd = dist.world_size()
  for %d in range(0, %nd) {
    %xs = tensor.slice(%xr, [%d * 2 + 1, 0], [2, 16])
    %yd = tensor.select(%y, %d)
    %v = if %d == 0 {
      yield %s
    } else {
      yield %s * 2.0
    }
    call @o(%xs, %yd, %v, f32(%d)) device=%d
  }
  %tmp = tensor.create([2, 16], f32)
  %x0 = tensor.slice(%xr, [6, 0], [2, 16])
  call @o(%x0, %tmp, 3.0, 0.0)
  call @o(%tmp, %z, 1.0, 1.0) device=2
}
"""
xh = rng.standard_normal((4, 32)).astype(np.float32)
xr8 = xh.reshape(8, 16)
F = np.float32
sv = F(0.75)
CASES.append(Case("host_ops_scalars_create", HOST, ins={"x": xh, "s": "0.75"},
                  want={"y": np.stack([(xr8[2 * d + 1:2 * d + 3] * (sv if d == 0 else F(sv * F(2))))
                                       .astype(F) + F(d) for d in range(3)]),
                        "z": (xr8[6:8] * F(3)).astype(F) * F(1) + F(1)},
                  args=["--devices", "3"]))

# -- errors the contract names -------------------------------------------------------------------
FAST = {"PTO_DIST_TIMEOUT_MS": "1500"}


def two_kernels(body0, body1, n=2, wshape=(4, 8), sshape=(1, 4), w1shape=None, root_arg=False):
    """A host that runs kernel @k0 (body0) on device 0 and @k1 (body1) on the others, each given
    the window %w (device 0's of shape wshape, the others' of w1shape if given) and %sig."""
    w1shape = w1shape or wshape

    def kern(name, body, ws):
        sig = "inout %%w: dtensor[%d, %d] f32, inout %%sig: dtensor[%d, %d] i32, %%root: index" % (
            ws + sshape)
        res = "dtensor[%d, %d] f32, dtensor[%d, %d] i32" % (ws + sshape)
        return ("kernel @k%s(%s) -> (%s) {\n%s\n  return %%w, %%sig\n}\n"
                "orch @o%s(%s) -> (%s) {\n  %%a, %%b = call @k%s(%%w, %%sig, %%root)\n"
                "  return %%a, %%b\n}\n" % (name, sig, res, body, name, sig, res, name))
    prog = "program e\n" + kern("0", body0, wshape) + kern("1", body1, w1shape)
    prog += "host @main(%root: index = runtime) {\n"
    prog += "  %%wa = dist.alloc_window([%d, %d], f32)\n" % wshape
    prog += "  %%wb = dist.alloc_window([%d, %d], f32)\n" % w1shape
    prog += "  %%ws = dist.alloc_window([%d, %d], i32)\n" % sshape
    prog += "  %a = dist.window(%wa)\n  %b = dist.window(%wb)\n  %s = dist.window(%ws)\n"
    prog += "  call @o0(%a, %s, %root) device=0\n"
    prog += "  for %%d in range(1, %d) {\n    call @o1(%%b, %%s, %%root) device=%%d\n  }\n}\n" % n
    return prog


AR_W = "  dist.allreduce(%w, %sig)"
# A collective only some ranks reach: the others never arrive; the wait fails at the deadline,
# naming the rank, the window and the offsets (exit 1, a launch error).
CASES.append(Case("err_collective_some_ranks", two_kernels(AR_W, "  %t = tile.full([4, 8], f32, 1.0)\n  tile.store(%t, [0, 0], %w)"),
                  ins={"root": "0"}, env=FAST, args=["--devices", "2"],
                  err=(1, ["rank 0: dist.allreduce (sum) of 32 f32 elements: ",
                           "timed out after 1500 ms on window %ws at offsets [0, "])))
# Ranks that run different collectives: a launch error naming both.
CASES.append(Case("err_collective_kinds_differ", two_kernels(AR_W, "  dist.broadcast(%w, %sig, 0)"),
                  ins={"root": "0"}, env=FAST, args=["--devices", "2"],
                  err=(1, ["dist.allreduce (sum) of 32 f32 elements", "does not match rank ",
                           "dist.broadcast (root 0) of 32 f32 elements"])))
CASES.append(Case("err_collective_ops_differ", two_kernels(AR_W, "  dist.allreduce(%w, %sig, op=max)"),
                  ins={"root": "0"}, env=FAST, args=["--devices", "3"],
                  err=(1, ["dist.allreduce (sum)", "does not match rank ", "dist.allreduce (max)"])))
CASES.append(Case("err_collective_roots_differ",
                  two_kernels("  dist.broadcast(%w, %sig, 0)", "  dist.broadcast(%w, %sig, 1)"),
                  ins={"root": "0"}, env=FAST, args=["--devices", "2"],
                  err=(1, ["dist.broadcast (root 0)", "does not match rank ", "dist.broadcast (root 1)"])))
# A shape mismatch across chips: device 0 reduces a [4, 8] window, device 1 a [2, 8] one.
CASES.append(Case("err_collective_sizes_differ", two_kernels(AR_W, AR_W, w1shape=(2, 8)),
                  ins={"root": "0"}, env=FAST, args=["--devices", "2"],
                  err=(1, ["dist.allreduce (sum) of 16 f32 elements", "does not match rank ",
                           "dist.allreduce (sum) of 32 f32 elements"])))
# allgather of a window whose rows the rank count does not divide.
CASES.append(Case("err_allgather_rows", two_kernels("  dist.allgather(%w, %sig)", "  dist.allgather(%w, %sig)", n=3,
                                                    wshape=(4, 8)),
                  ins={"root": "0"}, env=FAST, args=["--devices", "3"],
                  err=(1, ["dist.allgather of 32 f32 elements: the window %w",
                           "'s 4 rows do not divide among 3 ranks"])))
CASES.append(Case("err_reduce_scatter_rows", two_kernels("  dist.reduce_scatter(%w, %sig)", "  dist.reduce_scatter(%w, %sig)", n=3,
                                                         wshape=(4, 8)),
                  ins={"root": "0"}, env=FAST, args=["--devices", "3"],
                  err=(1, ["dist.reduce_scatter (sum) of 32 f32 elements: the window %w",
                           "'s 4 rows do not divide among 3 ranks"])))
# a signal window narrower than the rank count
CASES.append(Case("err_sig_below_ranks", two_kernels(AR_W, AR_W, n=3, sshape=(1, 2)),
                  ins={"root": "0"}, env=FAST, args=["--devices", "3"],
                  err=(1, ["dist.allreduce (sum) of 32 f32 elements: the signal window %ws has 2 "
                           "elements, fewer than the 3 ranks"])))
# a broadcast root outside 0 .. nranks-1 (runtime)
BC_R = "  dist.broadcast(%w, %sig, %root)"
CASES.append(Case("err_broadcast_root_range", two_kernels(BC_R, BC_R), ins={"root": "2"},
                  env=FAST, args=["--devices", "2"],
                  err=(1, ["broadcast root 2 is out of range (0 to 1)"])))
# a notify to a peer outside 0 .. nranks-1
CASES.append(Case("err_notify_peer_range",
                  two_kernels("  dist.notify(%sig, %root, [0, 0], 1, op=set)", "  %t = tile.full([4, 8], f32, 1.0)"),
                  ins={"root": "5"}, env=FAST, args=["--devices", "2"], err=(1, ["rank 0: peer 5 is out of range (0 to 1)"])))
# a wait no rank satisfies: the rank, the window and the offsets
CASES.append(Case("err_wait_unsatisfied",
                  two_kernels("  dist.wait(%sig, [0, 3], 1, cmp=eq)", "  %t = tile.full([4, 8], f32, 1.0)"),
                  ins={"root": "0"}, env=FAST, args=["--devices", "2"],
                  err=(1, ["rank 0: dist.wait timed out after 1500 ms on window %ws at offsets [0, 3]: "
                           "expected == 1, current value 0"])))

# Verifier errors (pto check, exit 2, the position).
VERR = [
    ("world_size_in_orch", "orch @o(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  %n = dist.world_size()\n  return %y\n}\n", "2:"),
    ("alloc_window_in_orch", "orch @o(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  %w = dist.alloc_window([4, 4], f32)\n  return %y\n}\n", "2:"),
    ("window_of_tensor", "host @main(%x: tensor[4, 4] f32) {\n  %w = dist.window(%x)\n}\n", "2:"),
    ("device_in_orch", "orch @p(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  return %y\n}\norch @o(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  call @p(%y) device=1\n  return %y\n}\n", "5:"),
    ("allreduce_bool", "kernel @k(inout %w: dtensor[4, 4] bool, inout %s: dtensor[1, 4] i32) -> (dtensor[4, 4] bool, dtensor[1, 4] i32) {\n  dist.allreduce(%w, %s)\n  return %w, %s\n}\n", "2:"),
    ("reduce_scatter_bool", "kernel @k(inout %w: dtensor[4, 4] bool, inout %s: dtensor[1, 4] i32) -> (dtensor[4, 4] bool, dtensor[1, 4] i32) {\n  dist.reduce_scatter(%w, %s)\n  return %w, %s\n}\n", "2:"),
    ("allreduce_sig_f32", "kernel @k(inout %w: dtensor[4, 4] f32, inout %s: dtensor[1, 4] f32) -> (dtensor[4, 4] f32, dtensor[1, 4] f32) {\n  dist.allreduce(%w, %s)\n  return %w, %s\n}\n", "2:"),
    ("allreduce_sig_2rows", "kernel @k(inout %w: dtensor[4, 4] f32, inout %s: dtensor[2, 4] i32) -> (dtensor[4, 4] f32, dtensor[2, 4] i32) {\n  dist.allreduce(%w, %s)\n  return %w, %s\n}\n", "2:"),
    ("allreduce_op_avg", "kernel @k(inout %w: dtensor[4, 4] f32, inout %s: dtensor[1, 4] i32) -> (dtensor[4, 4] f32, dtensor[1, 4] i32) {\n  dist.allreduce(%w, %s, op=avg)\n  return %w, %s\n}\n", "2:"),
    ("allreduce_mode_tree", "kernel @k(inout %w: dtensor[4, 4] f32, inout %s: dtensor[1, 4] i32) -> (dtensor[4, 4] f32, dtensor[1, 4] i32) {\n  dist.allreduce(%w, %s, mode=tree)\n  return %w, %s\n}\n", "2:"),
    ("barrier_sig_f32", "kernel @k(inout %s: dtensor[1, 4] f32) -> (dtensor[1, 4] f32) {\n  dist.barrier(%s)\n  return %s\n}\n", "2:"),
    ("notify_without_op", "kernel @k(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {\n  dist.notify(%s, 0, [0, 0], 1)\n  return %s\n}\n", "2:"),
    ("notify_sig_f32", "kernel @k(inout %s: dtensor[1, 4] f32) -> (dtensor[1, 4] f32) {\n  dist.notify(%s, 0, [0, 0], 1, op=set)\n  return %s\n}\n", "2:"),
    ("remote_store_dtype", "kernel @k(%x: tensor[4, 4] f16, inout %w: dtensor[4, 4] f32) -> (dtensor[4, 4] f32) {\n  %t = tile.load(%x, [0, 0], [4, 4])\n  dist.remote_store(%t, %w, 0, [0, 0])\n  return %w\n}\n", "3:"),
    ("remote_load_past_edge", "kernel @k(inout %w: dtensor[4, 4] f32) -> (dtensor[4, 4] f32) {\n  %t = dist.remote_load(%w, 0, [2, 0], [4, 4])\n  return %w\n}\n", "2:"),
    ("rank_of_tensor", "kernel @k(%x: tensor[4, 4] f32, out %y: tensor[4, 4] f32) -> (tensor[4, 4] f32) {\n  %r = dist.rank(%x)\n  return %y\n}\n", "2:"),
    ("dist_wait_in_host", "host @main() {\n  %ws = dist.alloc_window([1, 4], i32)\n  %s = dist.window(%ws)\n  dist.wait(%s, [0, 0], 1, cmp=eq)\n}\n", "4:"),
]
for name, text, msg in VERR:
    if msg[:-1].isdigit():  # a line of text: the program's header adds one
        msg = ".ptir:%d:" % (int(msg[:-1]) + 1)
    CASES.append(Case("verr_" + name, "program e\n" + text, cmd="check", err=(2, msg)))

# A window's shape may be computed at run time (docs/language.md, dist.alloc_window): a [%n, 8]
# window allreduced on 2 devices; a negative extent is a launch error naming it.
DYNWIN = """program dw
dynamic R
kernel @k(%x: tensor[R, 8] f32, inout %w: dtensor[R, 8] f32, inout %sig: dtensor[1, 4] i32,
          out %y: tensor[R, 8] f32) -> (dtensor[R, 8] f32, dtensor[1, 4] i32, tensor[R, 8] f32) {
  %t = tile.load(%x, [0, 0], [8, 8], valid=[R, 8])
  %w1 = tile.store(%t, [0, 0], %w)
  dist.allreduce(%w1, %sig, op=max)
  %u = tile.load(%w1, [0, 0], [8, 8], valid=[R, 8])
  %y1 = tile.store(%u, [0, 0], %y)
  return %w1, %sig, %y1
}
orch @o(%x: tensor[R, 8] f32, inout %w: dtensor[R, 8] f32, inout %sig: dtensor[1, 4] i32,
        out %y: tensor[R, 8] f32) -> (dtensor[R, 8] f32, dtensor[1, 4] i32, tensor[R, 8] f32) {
  %a, %b, %c = call @k(%x, %w, %sig, %y)
  return %a, %b, %c
}
host @main(%x: tensor[2, 6, 8] f32, out %y: tensor[2, 6, 8] f32, %n: index = runtime) {
  %ww = dist.alloc_window([%n, 8], f32)
  %ws = dist.alloc_window([1, 4], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  for %d in range(0, 2) {
    %xd = tensor.select(%x, %d)
    %yd = tensor.select(%y, %d)
    call @o(%xd, %w, %s, %yd) device=%d
  }
}
"""
xd = rng.standard_normal((2, 6, 8)).astype(np.float32)
CASES.append(Case("alloc_window_runtime_shape", DYNWIN, ins={"x": xd, "n": "6"},
                  want={"y": np.stack([np.maximum(xd[0], xd[1])] * 2)}, args=["--devices", "2"]))
CASES.append(Case("err_alloc_window_negative", DYNWIN, ins={"x": xd, "n": "-2"},
                  args=["--devices", "2"],
                  err=(1, ["dist.alloc_window: extent -2 of dim 0 is not valid"])))

# Calls to different devices run concurrently: device 0's call, issued first, waits for a notify
# that only device 1's later call sends (run one after the other, it would time out), then reads
# what device 1 remote_stored into its window.
CONC = """program conc
kernel @waiter(inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32, out %y: tensor[2, 8] f32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32, tensor[2, 8] f32) {
  dist.wait(%sig, [0, 1], 1, cmp=eq)
  dist.notify(%sig, 0, [0, 1], 0, op=set)
  %t = tile.load(%w, [0, 0], [2, 8])
  %y1 = tile.store(%t, [0, 0], %y)
  return %w, %sig, %y1
}
kernel @sender(%x: tensor[2, 8] f32, inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32) {
  %t = tile.load(%x, [0, 0], [2, 8])
  dist.remote_store(%t, %w, 0, [0, 0])
  dist.notify(%sig, 0, [0, 1], 1, op=set)
  return %w, %sig
}
orch @ow(inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32, out %y: tensor[2, 8] f32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32, tensor[2, 8] f32) {
  %a, %b, %c = call @waiter(%w, %sig, %y)
  return %a, %b, %c
}
orch @os(%x: tensor[2, 8] f32, inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32) {
  %a, %b = call @sender(%x, %w, %sig)
  return %a, %b
}
host @main(%x: tensor[2, 8] f32, out %y: tensor[2, 8] f32) {
  %ww = dist.alloc_window([2, 8], f32)
  %ws = dist.alloc_window([1, 2], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  call @ow(%w, %s, %y) device=0
  call @os(%x, %w, %s) device=1
}
"""
xc = rng.standard_normal((2, 8)).astype(np.float32)
CASES.append(Case("devices_run_concurrently", CONC, ins={"x": xc}, want={"y": xc},
                  env=FAST, args=["--devices", "2"]))

# docs/language.md: calls that write overlapping bytes of a host tensor run one after the other,
# so one out tensor passed whole to every device's collective deadlocks: device 1's call waits
# for device 0's to end while device 0's allreduce waits for device 1; the run fails at the
# wait's timeout, naming the collective.
WHOLE_OUT = """program dl
kernel @k(inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32, out %y: tensor[2, 8] f32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32, tensor[2, 8] f32) {
  dist.allreduce(%w, %sig)
  %t = tile.load(%w, [0, 0], [2, 8])
  %y1 = tile.store(%t, [0, 0], %y)
  return %w, %sig, %y1
}
orch @o(inout %w: dtensor[2, 8] f32, inout %sig: dtensor[1, 2] i32, out %y: tensor[2, 8] f32)
    -> (dtensor[2, 8] f32, dtensor[1, 2] i32, tensor[2, 8] f32) {
  %a, %b, %c = call @k(%w, %sig, %y)
  return %a, %b, %c
}
host @main(out %y: tensor[2, 8] f32) {
  %ww = dist.alloc_window([2, 8], f32)
  %ws = dist.alloc_window([1, 2], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  for %d in range(0, 2) {
    call @o(%w, %s, %y) device=%d
  }
}
"""
CASES.append(Case("err_out_whole_to_every_device", WHOLE_OUT, env=FAST, args=["--devices", "2"],
                  err=(1, ["rank 0: dist.allreduce (sum) of 16 f32 elements: ",
                           "timed out after 1500 ms on window %ws at offsets [0, "])))
