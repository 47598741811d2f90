"""The decode step of examples/llm/llama_layer.ptir composed as a user would write it without
pto: in numpy (over the OpenBLAS it loads) or in PyTorch eager on the CPU, float32, the same
weights and the same paged-cache gather. Run by decode_bench.py, one process per peer so each
gets its own environment (numpy: OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset).

    python3 peers.py numpy|torch|memcpy D F V B CTX THREADS ROUNDS OUT.npy

Prints one line of JSON: the step's times (ms, every round), the OpenBLAS kernel or torch's
BLAS, and for memcpy the bandwidth (GB/s copied, best of the rounds)."""
import ctypes
import json
import os
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "llm"))
import model  # noqa: E402


def openblas_core():
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "openblas" in path and path.endswith(".so") or "libopenblas" in path:
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                return f"{os.path.basename(path)}: {lib.openblas_get_corename().decode()}"
            except (OSError, AttributeError):
                continue
    return "no OpenBLAS loaded"


def setup(D, F, V, B, ctx):
    nb = (ctx + model.BLOCK - 1) // model.BLOCK     # blocks a sequence of ctx tokens uses
    cfg = model.Config(hidden=D, ffn=F, vocab=V, blocks=B * nb, max_blocks=nb)
    w = model.weights(cfg)
    rng = np.random.default_rng(11)
    ids = rng.integers(0, V, (B, 1)).astype(np.int32)
    pos = np.full((B, 1), ctx - 1, np.int32)
    bt = model.block_tables(cfg, B)
    kc = rng.standard_normal((cfg.S, D)).astype(np.float32)
    vc = rng.standard_normal((cfg.S, D)).astype(np.float32)
    return cfg, w, ids, pos, bt, kc, vc


def token_major(cache, heads):
    """The kernels' KV cache (model.heads_view: head-major inside each block) copied token-major,
    [S, D] with slot blk * BLOCK + t % BLOCK holding that token's heads: the peers' own layout.
    Same bytes, same values; each contender reads the cache in the layout that suits it (read
    head-major, numpy copies K and V transposed every step: 2.5-2.8x the step's time at batch 8,
    with the same logits)."""
    return np.ascontiguousarray(model.token_view(cache, heads)).reshape(cache.shape)


def step(cfg, w, ids, pos, bt, kc, vc, xp):
    """One decode step, batched over the B sequences; returns the logits. xp: Np or TorchNp."""
    D, H, HD = cfg.D, cfg.heads, model.HD
    B = ids.shape[0]

    def rms(x, g):
        return x / xp.sqrt(xp.rowmean(x * x) + 1e-5) * g

    x = w["emb"][xp.i64(ids[:, 0])]
    h0 = rms(x, w["g1"])
    q, k, v = h0 @ w["wq"], h0 @ w["wk"], h0 @ w["wv"]
    ang = xp.f32(pos) * w["invf"]                                   # [B, 64]
    c, s = xp.cos(ang)[:, None, :], xp.sin(ang)[:, None, :]

    def rope(t):
        t = t.reshape(B, H, HD)
        t1, t2 = t[..., :HD // 2], t[..., HD // 2:]
        return xp.cat([t1 * c - t2 * s, t2 * c + t1 * s])

    qh = rope(q) * (1.0 / np.sqrt(HD))
    kh = rope(k)
    p = xp.i64(pos[:, 0])
    # the caches token-major ([S, D]: slot blk * BLOCK + t % BLOCK holds the token's heads), the
    # layout a numpy or PyTorch user keeps (see token_major)
    slot = xp.i64(bt[xp.arange(B), p // model.BLOCK]) * model.BLOCK + p % model.BLOCK
    kc[slot] = kh.reshape(B, D)
    vc[slot] = v
    ctx = int(pos.max()) + 1
    t = xp.arange(ctx)
    rows = xp.i64(bt[:, t // model.BLOCK]) * model.BLOCK + t % model.BLOCK   # [B, ctx]
    K = xp.heads(kc[rows].reshape(B, ctx, H, HD))                  # [B, H, ctx, HD]
    Vv = xp.heads(vc[rows].reshape(B, ctx, H, HD))
    sc = (K @ qh[..., None])[..., 0]                                # [B, H, ctx]
    sc = xp.where(t[None, None, :] <= pos[:, :, None], sc, -np.inf)
    e = xp.exp(sc - xp.rowmax(sc))
    pr = e / xp.rowsum(e)
    att = (pr[:, :, None, :] @ Vv)[:, :, 0, :].reshape(B, D)
    hh = x + att @ w["wo"]
    n = rms(hh, w["g2"])
    g, u = n @ w["wg"], n @ w["wu"]
    y = hh + (g / (1 + xp.exp(-g)) * u) @ w["wd"]
    return rms(y, w["gf"]) @ w["wlm"]


class Np:
    """The array operations step() uses, in numpy."""
    sqrt, exp, cos, sin, arange, where = np.sqrt, np.exp, np.cos, np.sin, np.arange, np.where
    f32 = staticmethod(lambda a: a.astype(np.float32))
    i64 = staticmethod(lambda a: a.astype(np.int64))
    rowmean = staticmethod(lambda a: a.mean(axis=-1, keepdims=True))
    rowmax = staticmethod(lambda a: a.max(axis=-1, keepdims=True))
    rowsum = staticmethod(lambda a: a.sum(axis=-1, keepdims=True))
    cat = staticmethod(lambda xs: np.concatenate(xs, -1))
    heads = staticmethod(lambda a: a.transpose(0, 2, 1, 3))


class TorchNp:
    """The same in torch (eager)."""

    def __init__(self, torch):
        t = torch
        self.sqrt, self.exp, self.cos, self.sin, self.arange = t.sqrt, t.exp, t.cos, t.sin, \
            t.arange
        self.where = lambda m, a, b: t.where(m, a, t.tensor(b, dtype=a.dtype))
        self.f32 = lambda a: a.to(t.float32)
        self.i64 = lambda a: a.to(t.int64)
        self.rowmean = lambda a: a.mean(dim=-1, keepdim=True)
        self.rowmax = lambda a: a.amax(dim=-1, keepdim=True)
        self.rowsum = lambda a: a.sum(dim=-1, keepdim=True)
        self.cat = lambda xs: t.cat(xs, dim=-1)
        self.heads = lambda a: a.permute(0, 2, 1, 3)


def main():
    what = sys.argv[1]
    D, F, V, B, ctx, threads, rounds = map(int, sys.argv[2:9])
    out = sys.argv[9]
    if what == "memcpy":
        # THREADS threads, each copying its share (numpy's copy releases the GIL), so the
        # bandwidth is the one the same thread count reaches
        n = 256 << 20
        src = np.ones(n // 4, np.float32)
        dst = np.zeros_like(src)
        parts = np.array_split(np.arange(src.size), threads)
        cuts = [(int(q[0]), int(q[-1]) + 1) for q in parts]

        def copy_all():
            ts = [threading.Thread(target=np.copyto, args=(dst[a:b], src[a:b])) for a, b in cuts]
            for t in ts:
                t.start()
            for t in ts:
                t.join()

        copy_all()
        best = min(_timed(copy_all) for _ in range(rounds))
        print(json.dumps({"memcpy_gbps": n / best / 1e9, "bytes": n, "threads": threads}))
        return
    cfg, w, ids, pos, bt, kc, vc = setup(D, F, V, B, ctx)
    kc, vc = token_major(kc, cfg.heads), token_major(vc, cfg.heads)
    if what == "numpy":
        info = openblas_core()
        xp, args = Np, (cfg, w, ids, pos, bt, kc, vc)
        to_np = np.asarray
    else:
        import torch
        torch.set_num_threads(threads)
        info = f"torch {torch.__version__}, {torch.get_num_threads()} threads; " + \
            " ".join(torch.__config__.show().split())[:300]
        xp = TorchNp(torch)
        tw = {k: torch.from_numpy(v) for k, v in w.items()}
        args = (cfg, tw, torch.from_numpy(ids), torch.from_numpy(pos), torch.from_numpy(bt),
                torch.from_numpy(kc), torch.from_numpy(vc))
        to_np = lambda t: t.numpy()  # noqa: E731
    logits = step(*args, xp=xp)   # warm up
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        logits = step(*args, xp=xp)
        times.append((time.perf_counter() - t0) * 1e3)
    np.save(out, to_np(logits))
    print(json.dumps({"peer": what, "info": info, "ms": times}))


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
