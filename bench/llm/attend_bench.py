"""The decode step's attention alone: @attend of examples/llm/llama_layer.ptir (or of the PTIR
files given) for B sequences x 8 heads at context 512, the tasks @decode launches for it, beside
two floors that are not attention: the same walk over the cache with only the K and V copies
(`gather_rows` through the block table, then an add and a col_sum so nothing is dead), and the
same with `tile.load` of 64 contiguous rows instead of the gather (what the walk would cost if a
kernel could load whole blocks).

    PYTHONPATH=build/python /usr/bin/python3 bench/llm/attend_bench.py [PTIR ...]
        [--batch 8] [--ctx 512] [--threads 2] [--cube-cores N] [--rounds 30] [--repeat 3]
        [--contiguous] [--evict MB]

The worker is the decode step's (decode_bench.py): THREADS threads, each with a cube core, so two
@attend tasks (matmul, AIC kernels) run at once on 2 threads; --cube-cores 1 is the worker this
bench had before (RunConfig(cores=2): one cube core, the 64 tasks one at a time, bench/RESULTS.md
"decode1"), whose times cannot approach a limit counted at two threads' memcpy.

--evict MB: each measured launch alone (warmup 0, one round), after a read of MB MB of other
memory (numpy's sum of a float32 array), so K and V come from memory as in the decode step, which
reads 89 MB of weights between two attentions (the cache of 33.5 MB at batch 8 otherwise fits in
a 32 MiB L3 nearly whole); the min and median are then over the ROUNDS launches.

Every sequence is at position ctx-1; the block tables are a random permutation of the cache's
blocks of 64 tokens (--contiguous: block i of sequence s is s*ctx/64 + i, the layout a fresh cache
gets); the caches are in the kernels' layout (examples/llm/model.py heads_view).
Prints per variant the minimum and the median device wall (us) of each repeat, the variants
interleaved so they share the machine's load, and @attend's largest error against numpy
(float64), and the limit: the K and V bytes (2 * B * ctx * 1024 * 4) over the best memcpy
bandwidth (read + written bytes per second, as decode_bench.py counts it) of two measured before
and after the variants."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
import model  # noqa: E402

PTIR = os.path.join(HERE, "..", "..", "examples", "llm", "llama_layer.ptir")
D = 1024

ORCH = """
orch @att(%q: tensor[B, D] f32, %pos: tensor[B, 1] i32, %bt: tensor[B, MB] i32,
          %kc: tensor[S, D] f32, %vc: tensor[S, D] f32, out %o: tensor[B, D] f32)
    -> (tensor[B, D] f32) {
  %kh = tensor.reshape(%kc, [S * D / 128, 128])
  %vh = tensor.reshape(%vc, [S * D / 128, 128])
  for %i in range(0, B) {
    %p = tensor.read(%pos, [%i, 0])
    %bt_i = tensor.slice(%bt, [%i, 0], [1, MB])
    for %hd in range(0, D / 128) {
      %q_ih = tensor.slice(%q, [%i, %hd * 128], [1, 128])
      %o_ih = tensor.slice(%o, [%i, %hd * 128], [1, 128])
      call @attend(%q_ih, %kh, %vh, %bt_i, %o_ih, %p, %hd * 64, D / 2, %i * CTX * D / 128)
    }
  }
  return %o
}
"""

# The floors: the copies of @attend's walk without its arithmetic. ROWS is the gather through
# the block table, or a load of the chunk's 64 rows of the head from the sequence's first block
# (row %r0 of the [S*8, 128] cache) on: with --contiguous, the same rows.
FLOOR = """
kernel @attend(%q: tensor[1, 128] f32, %kc: tensor[SH, 128] f32, %vc: tensor[SH, 128] f32,
               %bt: tensor[1, MB] i32, out %o: tensor[1, 128] f32, %p: i32, %h0: index,
               %bs: index, %r0: index) -> (tensor[1, 128] f32) {
  %tb = tile.load(%bt, [0, 0], [1, 64], valid=[1, MB])
  %a0 = tile.full([1, 128], f32, 0.0)
  %nc = (index(%p) + 64) / 64
  %acc = for %c in range(0, %nc) iter(%ac = %a0) {
    %tr = tile.ci(i32(%c * 64), [1, 64], dtype=i32)
    %tt = tile.reshape(%tr, [64, 1])
    %tcl = tile.mins(%tt, %p)
    %blk = tile.divs(%tcl, 64)
    %off = tile.rems(%tcl, 64)
    %phys = tile.gather(%tb, %blk)
    %base = tile.muls(%phys, i32(%bs))
    %offh = tile.adds(%off, i32(%h0))
    %rows = tile.add(%base, %offh)
ROWS
    %x = tile.add(%tk, %tv)
    %s = tile.col_sum(%x)
    %an = tile.add(%ac, %s)
    yield %an
  }
  tile.store(%acc, [0, 0], %o)
  return %o
}
"""
# The one-element extracts keep the gathers copies: read only by the add, the compiler would read
# them through the block table instead (plan_row_views), as it does in @attend.
GATHER = """    %tk = tile.gather_rows(%kc, %rows, [0], [64, 128])
    %tv = tile.gather_rows(%vc, %rows, [0], [64, 128])
    %kx = tile.extract(%tk, [0, 0], [1, 1])
    %vx = tile.extract(%tv, [0, 0], [1, 1])"""
LOAD = """    %tk = tile.load(%kc, [%r0 + %c * %bs + %h0, 0], [64, 128])
    %tv = tile.load(%vc, [%r0 + %c * %bs + %h0, 0], [64, 128])"""


def attend_of(path):
    """@attend's text from a PTIR file, with the floors' extra %r0 argument (unused)."""
    with open(path) as f:
        s = f.read()
    a = s.index("kernel @attend(")
    b = s.index("\n}\n", a) + 3
    k = s[a:b]
    return k.replace("%bs: index)", "%bs: index, %r0: index)", 1)


def compile_variant(kernel, ctx, tmp, name):
    path = os.path.join(tmp, name + ".ptir")
    with open(path, "w") as f:
        f.write("program att\ndynamic B, D, S, MB, SH\n\n" + kernel + ORCH.replace("CTX", str(ctx)))
    return pto.compile(path, entry="att")


def memcpy_gbps(threads):
    cmd = [sys.executable, os.path.join(HERE, "peers.py"), "memcpy", "0", "0", "0", "0", "0",
           str(threads), "10", "-"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS=str(threads)))
    return 2 * json.loads(r.stdout.strip().splitlines()[-1])["memcpy_gbps"]


def reference(q, kc, vc, bt, ctx):
    out = np.zeros(q.shape)
    kt, vt = model.token_view(kc, D // 128), model.token_view(vc, D // 128)
    t = np.arange(ctx)
    for i in range(q.shape[0]):
        blk, off = bt[i][t // model.BLOCK], t % model.BLOCK
        ks, vs = kt[blk, off], vt[blk, off]                 # [ctx, heads, 128]
        for h in range(D // 128):
            c = slice(h * 128, h * 128 + 128)
            s = ks[:, h].astype(np.float64) @ q[i, c]
            e = np.exp(s - s.max())
            out[i, c] = (e / e.sum()) @ vs[:, h]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ptir", nargs="*", default=[PTIR])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cube-cores", type=int, default=0,
                    help="cube (AIC) cores on the threads (default: as many as threads)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--contiguous", action="store_true")
    ap.add_argument("--evict", type=int, default=0, metavar="MB",
                    help="read MB MB of other memory before each launch (one launch a call)")
    a = ap.parse_args()
    if a.ctx % model.BLOCK or a.ctx > 64 * model.BLOCK:
        ap.error("--ctx must be a multiple of 64, at most 4096 (64 blocks of 64)")
    nb = a.ctx // model.BLOCK
    rng = np.random.default_rng(0)
    blocks = np.arange(a.batch * nb) if a.contiguous else rng.permutation(a.batch * nb)
    bt = blocks.astype(np.int32).reshape(a.batch, nb)
    kc = rng.standard_normal((a.batch * a.ctx, D)).astype(np.float32)
    vc = rng.standard_normal((a.batch * a.ctx, D)).astype(np.float32)
    q = (rng.standard_normal((a.batch, D)) / np.sqrt(128)).astype(np.float32)
    pos = np.full((a.batch, 1), a.ctx - 1, np.int32)
    want = reference(q, kc, vc, bt, a.ctx)
    mem = [memcpy_gbps(a.threads)]
    with tempfile.TemporaryDirectory() as tmp:
        variants = [(os.path.relpath(p), compile_variant(attend_of(p), a.ctx, tmp, f"v{j}"), True)
                    for j, p in enumerate(a.ptir)]
        variants += [("floor: gather_rows only", compile_variant(
            FLOOR.replace("ROWS", GATHER), a.ctx, tmp, "gather"), False)]
        if a.contiguous:   # the load floor reads the sequence's rows in order: the same bytes
            variants += [("floor: tile.load only", compile_variant(
                FLOOR.replace("ROWS", LOAD), a.ctx, tmp, "load"), False)]
        res = {n: [] for n, _, _ in variants}
        err = {}
        cube = a.cube_cores or a.threads
        cfg = pto.RunConfig(platform="sim", aic_cores=cube, aiv_cores=a.threads, threads=a.threads)
        ev = np.ones(a.evict * 250000, np.float32)
        with pto.ChipWorker(cfg) as wk:
            dkc = wk.alloc_tensor(kc.shape, np.float32, init=kc)
            dvc = wk.alloc_tensor(vc.shape, np.float32, init=vc)
            for _ in range(a.repeat):
                for n, prog, check in variants:
                    o = np.zeros((a.batch, D), np.float32)
                    if a.evict:
                        w = []
                        for _ in range(a.rounds):
                            float(ev.sum())
                            st = pto.benchmark(prog, [q, pos, bt, dkc, dvc, o], rounds=1,
                                               warmup=0, worker=wk)
                            w.append(st.device_wall_us_median)
                        res[n].append((min(w), float(np.median(w))))
                    else:
                        st = pto.benchmark(prog, [q, pos, bt, dkc, dvc, o], rounds=a.rounds,
                                           warmup=2, worker=wk)
                        res[n].append((st.device_wall_us_min, st.device_wall_us_median))
                    if check:
                        err[n] = max(err.get(n, 0.0), float(np.abs(o - want).max()))
    mem.append(memcpy_gbps(a.threads))
    mb = 2 * a.batch * a.ctx * D * 4 / 1e6
    print(f"attention: batch {a.batch}, 8 heads, context {a.ctx} ({mb:.1f} MB of K and V), "
          f"{a.threads} threads ({a.cube_cores or a.threads} AIC + {a.threads} AIV cores), {'contiguous' if a.contiguous else 'random'} blocks"
          f"{f', {a.evict} MB read before each launch' if a.evict else ''}; "
          f"device wall us, min / median of {a.rounds} rounds per repeat; memcpy "
          f"{max(mem):.1f} GB/s (best), so the limit is {mb / max(mem) * 1e3:.0f} us\n")
    limit = mb / max(mem) * 1e3
    print("| variant | min | median | best min / limit | max error |\n"
          "| --- | --- | --- | --- | --- |")
    for n, v in res.items():
        e = f"{err[n]:.2g}" if n in err else "(not attention)"
        print(f"| {n} | {' '.join(f'{x:.0f}' for x, _ in v)} | "
              f"{' '.join(f'{y:.0f}' for _, y in v)} | {min(x for x, _ in v) / limit:.2f}x | {e} |")
    bad = [n for n, e in err.items() if e > 1e-5]
    if bad:
        print("attention differs from numpy: " + ", ".join(bad))
        return 1
    print("attention agrees with numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
