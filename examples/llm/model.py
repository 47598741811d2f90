"""The Llama-style layer of llama_layer.ptir in numpy: its weights, its KV cache layout and a
reference step, used by the tests (python/tests/test_llm.py), decode.py and the benchmark
(bench/llm/). Everything is computed in float64 from the float32 (or bf16-rounded) weights, so
the reference is the exact result up to float64 rounding."""
import numpy as np

HD = 128      # head dim (a constant of the PTIR kernels)
BLOCK = 16    # tokens per KV cache block
THETA = 10000.0


class Config:
    def __init__(self, hidden=256, ffn=512, vocab=512, blocks=8, max_blocks=4):
        assert hidden % HD == 0 and ffn % 128 == 0 and hidden <= 1024 and max_blocks <= 64
        self.D, self.F, self.V = hidden, ffn, vocab
        self.heads = hidden // HD
        self.blocks = blocks            # physical blocks in the cache
        self.S = blocks * BLOCK         # cache rows
        self.MB = max_blocks            # block table columns (a sequence's max blocks)


def bf16(a):
    """a (float32) rounded to bf16 (nearest even), as its uint16 bits."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def from_bf16(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def weights(cfg, seed=0):
    """The layer's weights, float32, scaled so activations stay O(1)."""
    rng = np.random.default_rng(seed)
    D, F, V = cfg.D, cfg.F, cfg.V

    def mat(k, n):
        return (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)

    def gain(n):
        return (1.0 + 0.1 * rng.standard_normal((1, n))).astype(np.float32)

    return {
        "emb": rng.standard_normal((V, D)).astype(np.float32),
        "g1": gain(D), "wq": mat(D, D), "wk": mat(D, D), "wv": mat(D, D), "wo": mat(D, D),
        "g2": gain(D), "wg": mat(D, F), "wu": mat(D, F), "wd": mat(F, D),
        "gf": gain(D), "wlm": mat(D, V),
        "invf": (THETA ** (-np.arange(0, HD, 2) / HD)).astype(np.float32).reshape(1, HD // 2),
    }


MATS = ("wq", "wk", "wv", "wo", "wg", "wu", "wd", "wlm")


def weights_bf16(w):
    """The weights with the projection matrices as bf16 bits (what the bf16 entry takes)."""
    return {k: (bf16(v) if k in MATS else v) for k, v in w.items()}


def empty_cache(cfg):
    return np.zeros((cfg.S, cfg.D), np.float32), np.zeros((cfg.S, cfg.D), np.float32)


def block_tables(cfg, nseq, seed=1):
    """nseq sequences' block tables [nseq, MB]: distinct physical blocks, shuffled."""
    assert nseq * cfg.MB <= cfg.blocks
    perm = np.random.default_rng(seed).permutation(cfg.blocks)[:nseq * cfg.MB]
    return perm.reshape(nseq, cfg.MB).astype(np.int32)


def _rms(x, g):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-5) * g


def _rope(x, pos, invf):
    ang = pos.astype(np.float64)[:, None] * invf[0].astype(np.float64)[None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = np.empty_like(x)
    for h in range(x.shape[1] // HD):
        x1, x2 = x[:, h * HD:h * HD + HD // 2], x[:, h * HD + HD // 2:(h + 1) * HD]
        out[:, h * HD:h * HD + HD // 2] = x1 * c - x2 * s
        out[:, h * HD + HD // 2:(h + 1) * HD] = x2 * c + x1 * s
    return out


def step(cfg, w, ids, pos, bt, kc, vc, bf16_mats=False):
    """One step of the layer for rows (ids[i], pos[i], bt[i]), in order: row i's key and value are
    appended to the caches kc, vc (float32, updated in place) before its attention, as the
    kernels do. bf16_mats: the matrices and the activations that meet them are bf16-rounded.
    Returns (logits [n, V] float64, next tokens [n] int)."""
    f = {k: v.astype(np.float64) for k, v in w.items()}

    def mm(x, name):
        if bf16_mats:
            return from_bf16(bf16(x.astype(np.float32))).astype(np.float64) @ \
                from_bf16(bf16(w[name])).astype(np.float64)
        return x @ f[name]

    ids, pos = ids.reshape(-1), pos.reshape(-1)
    x = f["emb"][ids]
    h0 = _rms(x, f["g1"])
    q, k, v = mm(h0, "wq"), mm(h0, "wk"), mm(h0, "wv")
    q = _rope(q, pos, w["invf"]) / np.sqrt(HD)
    k = _rope(k, pos, w["invf"])
    att = np.zeros_like(q)
    kc64 = kc.astype(np.float64)
    vc64 = vc.astype(np.float64)
    for i in range(len(ids)):
        p = int(pos[i])
        slot = int(bt[i][p // BLOCK]) * BLOCK + p % BLOCK
        kc64[slot], vc64[slot] = k[i], v[i]
        kc[slot], vc[slot] = k[i], v[i]
        rows = [int(bt[i][t // BLOCK]) * BLOCK + t % BLOCK for t in range(p + 1)]
        for h in range(cfg.heads):
            cs = slice(h * HD, (h + 1) * HD)
            s = kc64[rows, cs] @ q[i, cs]
            e = np.exp(s - s.max())
            att[i, cs] = (e / e.sum()) @ vc64[rows, cs]
    h = x + mm(att, "wo")
    n = _rms(h, f["g2"])
    g, u = mm(n, "wg"), mm(n, "wu")
    y = h + mm(g / (1 + np.exp(-g)) * u, "wd")
    logits = mm(_rms(y, f["gf"]), "wlm")
    return logits, logits.argmax(axis=1)
