"""The Llama-style layer of llama_layer.ptir in numpy: its weights, its KV cache layout and a
reference step, used by the tests (python/tests/test_llm.py), decode.py and the benchmark
(bench/llm/). Everything is computed in float64 from the float32 (or bf16-rounded) weights, so
the reference is the exact result up to float64 rounding."""
import numpy as np

HD = 128      # head dim (a constant of the PTIR kernels)
BLOCK = 64    # tokens per KV cache block (llama_layer.ptir's head comment: the layout)
THETA = 10000.0


class Config:
    def __init__(self, hidden=256, ffn=512, vocab=512, blocks=8, max_blocks=4):
        assert hidden % HD == 0 and ffn % 128 == 0 and hidden <= 1024 and max_blocks <= 64
        self.D, self.F, self.V = hidden, ffn, vocab
        self.heads = hidden // HD
        self.blocks = blocks            # physical blocks in the cache
        self.S = blocks * BLOCK         # cache rows (of D floats: see heads_view for the layout)
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
PANEL = 128   # columns of a weight panel (llama_layer.ptir's one-chip entries: a task a panel)


def panels(m):
    """A [K, C] matrix panel-major, as @decode, @prefill and @decode_bf16 take their matrices: its
    128-column panels one after another, [ceil(C/128) * K, 128], panel j (rows j*K .. j*K+K-1)
    holding columns j*128 .. j*128+127; the last panel zero-padded where 128 does not divide C.
    A task reads its panel as one contiguous run (a row-major slab is K pieces of 128 elements a
    row apart)."""
    K, C = m.shape
    n = (C + PANEL - 1) // PANEL
    pad = np.zeros((K, n * PANEL), m.dtype)
    pad[:, :C] = m
    return np.ascontiguousarray(pad.reshape(K, n, PANEL).transpose(1, 0, 2)).reshape(n * K, PANEL)


def weights_panels(w):
    """The weights as @decode, @prefill and @decode_bf16 take them: the matrices (float32, or
    weights_bf16's bits) panel-major (panels), the rest as they are. The reference (step) takes
    the matrices row-major, w itself."""
    return {k: (panels(v) if k in MATS else v) for k, v in w.items()}


def weights_bf16(w):
    """The weights with the projection matrices as bf16 bits (what the bf16 entry takes)."""
    return {k: (bf16(v) if k in MATS else v) for k, v in w.items()}


def empty_cache(cfg):
    return np.zeros((cfg.S, cfg.D), np.float32), np.zeros((cfg.S, cfg.D), np.float32)


def heads_view(cache, heads):
    """A KV cache ([S, D], D = heads * HD, or its float64 copy) as [blocks, heads, BLOCK, HD]: the
    kernels' layout, head-major inside each block of BLOCK tokens, so view[blk, h, t % BLOCK] is
    head h of the token in slot t % BLOCK of physical block blk. A view: writes go to cache."""
    assert cache.flags.c_contiguous, "a view of a copy would lose the writes"
    return cache.reshape(-1, heads, BLOCK, HD)


def token_view(cache, heads):
    """The same cache as [blocks, BLOCK, heads, HD] (a strided view): view[blk, t % BLOCK] is the
    token's heads, [heads, HD]; writes go to cache."""
    return heads_view(cache, heads).transpose(0, 2, 1, 3)


def shard_heads(cache, heads, n):
    """A [S, D] cache of `heads` heads split into n ranks' caches [n, S, D/n] (rank r: heads
    r*heads/n ..), each in the same layout with heads/n heads (what @tp takes)."""
    hv = heads_view(cache, heads)
    hl = heads // n
    return np.stack([np.ascontiguousarray(hv[:, r * hl:(r + 1) * hl]).reshape(cache.shape[0], -1)
                     for r in range(n)])


def unshard_heads(shards, heads):
    """shard_heads' inverse: the ranks' caches [n, S, D/n] as one [S, D] cache."""
    n, S = shards.shape[0], shards.shape[1]
    hv = [heads_view(shards[r], heads // n) for r in range(n)]
    return np.concatenate(hv, axis=1).reshape(S, -1)


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
    H = cfg.heads
    kc64, vc64 = kc.astype(np.float64), vc.astype(np.float64)
    kt, vt = token_view(kc, H), token_view(vc, H)           # [blocks, BLOCK, H, HD] views
    kt64, vt64 = token_view(kc64, H), token_view(vc64, H)
    for i in range(len(ids)):
        p = int(pos[i])
        blk, off = int(bt[i][p // BLOCK]), p % BLOCK
        kt64[blk, off], vt64[blk, off] = k[i].reshape(H, HD), v[i].reshape(H, HD)
        kt[blk, off], vt[blk, off] = k[i].reshape(H, HD), v[i].reshape(H, HD)
        t = np.arange(p + 1)
        ks, vs = kt64[bt[i][t // BLOCK], t % BLOCK], vt64[bt[i][t // BLOCK], t % BLOCK]
        for h in range(H):
            cs = slice(h * HD, (h + 1) * HD)
            s = ks[:, h] @ q[i, cs]
            e = np.exp(s - s.max())
            att[i, cs] = (e / e.sum()) @ vs[:, h]
    h = x + mm(att, "wo")
    n = _rms(h, f["g2"])
    g, u = mm(n, "wg"), mm(n, "wu")
    y = h + mm(g / (1 + np.exp(-g)) * u, "wd")
    logits = mm(_rms(y, f["gf"]), "wlm")
    return logits, logits.argmax(axis=1)
