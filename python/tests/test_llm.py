"""examples/llm: the Llama-style decoder layer (llama_layer.ptir) against its numpy reference
(examples/llm/model.py, float64).

Tolerances: the kernels compute in float32 (bf16 matrices: bf16 products summed in float32), the
reference in float64 from the same weights and the same bf16 roundings. The logits pass through
six chained projections with dot products of at most 512 terms, RoPE, an online softmax and
three RMSNorms; float32 rounding gives errors near 1e-6 of the logits' scale (measured: 2.3e-6 at
a scale of 3.9), so LOGIT_TOL (1e-4 of the largest |logit|) leaves a margin of 40x. The argmax
must be equal; the tests check first that the reference's best logit leads the second by more
than the tolerance (so a tie can't flip it). With bf16 matrices the activations are rounded to
bf16 before each product, in the kernel from float32 and in the reference from float64: where the
two sit on either side of a rounding boundary they differ by one bf16 ulp (2^-8), so
LOGIT_TOL_BF16 is 1e-3 (measured: 4.9e-5 at a scale of 3.9, 1.3e-5 of it). The KV cache rows the
step appends are checked to the same relative tolerance, every other row to be untouched (bit
for bit). The tensor-parallel runs (2 and 4 devices) are checked against the same one-chip
reference, every rank's logits and tokens."""
import os
import sys

import numpy as np
import pytest

import pto
from conftest import SRC

LLM = os.path.join(SRC, "examples", "llm")
sys.path.insert(0, LLM)
import model  # noqa: E402

PTIR = os.path.join(LLM, "llama_layer.ptir")
LOGIT_TOL = 1e-4
LOGIT_TOL_BF16 = 1e-3
CFG = model.Config(hidden=256, ffn=512, vocab=512, blocks=40, max_blocks=4)
NAMES = ("emb", "g1", "wq", "wk", "wv", "wo", "g2", "wg", "wu", "wd", "gf", "wlm", "invf")


@pytest.fixture(scope="module")
def decode():
    return pto.compile(PTIR, entry="decode")


def check_logits(got, want, rel=LOGIT_TOL):
    tol = rel * np.abs(want).max()
    err = np.abs(got - want).max()
    assert err <= tol, f"logits: max error {err} over the tolerance {tol}"
    top2 = np.sort(want, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] > tol).all(), "a near tie in the reference: pick another seed"
    return err


def run_step(prog, w, ids, pos, bt, kc, vc, cfg=CFG):
    n = len(ids)
    logits = np.zeros((n, cfg.V), np.float32)
    nxt = np.full((n, 1), -1, np.int32)
    pto.run(prog, ids, pos, bt, *[w[k] for k in NAMES], kc, vc, logits, nxt)
    return logits, nxt.reshape(-1)


def decode_case(prog, w, pos, seed, bf16_mats=False, cfg=CFG):
    """A decode step of len(pos) sequences over caches filled with random earlier tokens. w: the
    weights as numpy has them (bf16: model.weights_bf16's); the step gets them panel-major
    (model.weights_panels)."""
    rng = np.random.default_rng(seed)
    n = len(pos)
    ids = rng.integers(0, cfg.V, (n, 1)).astype(np.int32)
    pos = np.array(pos, np.int32).reshape(n, 1)
    bt = model.block_tables(cfg, n, seed)
    kc = rng.standard_normal((cfg.S, cfg.D)).astype(np.float32)
    vc = rng.standard_normal((cfg.S, cfg.D)).astype(np.float32)
    kr, vr = kc.copy(), vc.copy()
    logits, nxt = run_step(prog, model.weights_panels(w), ids, pos, bt, kc, vc, cfg)
    want, want_next = model.step(cfg, model.weights(cfg) if bf16_mats else w, ids, pos, bt, kr,
                                 vr, bf16_mats=bf16_mats)
    rel = LOGIT_TOL_BF16 if bf16_mats else LOGIT_TOL
    err = check_logits(logits, want, rel)
    assert (nxt == want_next).all(), f"next tokens {nxt}, numpy says {want_next}"
    # the appended tokens' slots (every head, in the cache's head-major blocks), and the rest
    new = np.zeros((cfg.blocks, model.BLOCK), bool)
    for i, p in enumerate(pos.reshape(-1)):
        new[bt[i][p // model.BLOCK], p % model.BLOCK] = True
    kt, vt = model.token_view(kc, cfg.heads), model.token_view(vc, cfg.heads)
    ktr, vtr = model.token_view(kr, cfg.heads), model.token_view(vr, cfg.heads)
    tol = rel * max(np.abs(kr).max(), np.abs(vr).max())
    assert np.abs(kt[new] - ktr[new]).max() <= tol and np.abs(vt[new] - vtr[new]).max() <= tol
    assert np.array_equal(kt[~new], ktr[~new]) and np.array_equal(vt[~new], vtr[~new])
    return err


def test_panels_layout():
    # model.panels: panel j is columns j*128.. of every row, one after another; the last panel
    # zero-padded
    m = np.arange(3 * 300, dtype=np.float32).reshape(3, 300)
    p = model.panels(m)
    assert p.shape == (3 * 3, 128)
    assert np.array_equal(p[3:6], m[:, 128:256]) and np.array_equal(p[6:9, :44], m[:, 256:])
    assert not p[6:9, 44:].any()


def test_decode_f32(decode):
    w = model.weights(CFG)
    # three sequences: inside the first block, the first token of the second (and of the second
    # 64-token chunk), in the third block
    err = decode_case(decode, w, [5, 64, 130], seed=1)
    print(f"decode f32, 3 sequences: max logit error {err:.3g}")


def test_decode_f32_two_row_blocks(decode):
    # 10 sequences: a full block of 8 rows, then a block of 2 (pad rows must append nothing)
    w = model.weights(CFG)
    decode_case(decode, w, [0, 1, 2, 15, 63, 64, 65, 127, 128, 255], seed=2)


def test_decode_f32_odd_sizes(decode):
    # the same compiled program at other sizes: a vocab of 700 (a partial 128-column block of
    # the logits and a partial 512-column chunk of the argmax) and an FFN of 384
    cfg = model.Config(hidden=256, ffn=384, vocab=700, blocks=12, max_blocks=4)
    decode_case(decode, model.weights(cfg), [5, 70, 200], seed=4, cfg=cfg)


def test_decode_f32_batch1(decode):
    # one sequence: @decode takes its batch-1 path (the one-row kernels, 256 columns a task)
    w = model.weights(CFG)
    err = decode_case(decode, w, [100], seed=3)
    print(f"decode f32, 1 sequence: max logit error {err:.3g}")


def kernels_run(prog, w, n, out_dir, cfg=CFG):
    """The names of the kernels a decode step of n sequences ran (the task records)."""
    return set(kernel_tasks(prog, w, n, out_dir, cfg))


def kernel_tasks(prog, w, n, out_dir, cfg=CFG):
    """The kernel of every task of a decode step of n sequences (the task records)."""
    import json
    rng = np.random.default_rng(n)
    ids = rng.integers(0, cfg.V, (n, 1)).astype(np.int32)
    pos = np.full((n, 1), 9, np.int32)
    bt = model.block_tables(cfg, n, n)
    kc, vc = model.empty_cache(cfg)
    args = [ids, pos, bt, *[w[k] for k in NAMES], kc, vc, np.zeros((n, cfg.V), np.float32),
            np.zeros((n, 1), np.int32)]
    with pto.ChipWorker(pto.RunConfig(platform="sim", cores=2, record_tasks=True)) as wk:
        with wk.register(prog) as run:
            run(*args)
            d = wk.export_swimlane_records(str(out_dir))
    with open(os.path.join(d, "deps.json")) as f:
        return [t["name"] for t in json.load(f)["tasks"]]


def test_decode_batch1_runs_the_one_row_kernels(decode, tmp_path):
    # B == 1 takes @decode's batch-1 branch (no 8-row projection), B == 2 the 8-row kernels
    w = model.weights(CFG)
    wp = model.weights_panels(w)
    one = kernels_run(decode, wp, 1, tmp_path / "b1")
    assert {"linear1", "linear_res1", "swiglu1"} <= one, one
    assert not one & {"linear", "linear_res", "swiglu"}, one
    two = kernels_run(decode, wp, 2, tmp_path / "b2")
    assert {"linear", "linear_res", "swiglu"} <= two and not two & {"linear1", "swiglu1"}, two


def test_decode_f32_batch1_odd_sizes(decode):
    # the batch-1 path at sizes 256 does not divide: hidden 384 (3 panels of q, k, v, o and
    # down), FFN 640 (5 of gate and up), vocab 700 (a last panel of 60 columns, zero-padded)
    cfg = model.Config(hidden=384, ffn=640, vocab=700, blocks=12, max_blocks=4)
    decode_case(decode, model.weights(cfg), [17], seed=6, cfg=cfg)


def test_decode_batch1_gate_up_task_per_panel(decode, tmp_path):
    # FFN 768: a gate/up task per 128-column panel (6), f32 and bf16, both against numpy
    cfg = model.Config(hidden=256, ffn=768, vocab=512, blocks=12, max_blocks=4)
    w = model.weights(cfg)
    decode_case(decode, w, [21], seed=8, cfg=cfg)
    tasks = kernel_tasks(decode, model.weights_panels(w), 1, tmp_path / "b1", cfg)
    assert tasks.count("swiglu1") == 6
    prog = pto.compile(PTIR, entry="decode_bf16")
    wb = model.weights_bf16(w)
    decode_case(prog, wb, [21], seed=8, bf16_mats=True, cfg=cfg)
    tasks = kernel_tasks(prog, model.weights_panels(wb), 1, tmp_path / "b1_bf16", cfg)
    assert tasks.count("swiglu1_bf16") == 6


def test_decode_bf16_weights_batch1():
    prog = pto.compile(PTIR, entry="decode_bf16")
    cfg = model.Config(hidden=384, ffn=640, vocab=700, blocks=12, max_blocks=4)
    wb = model.weights_bf16(model.weights(cfg))
    err = decode_case(prog, wb, [33], seed=7, bf16_mats=True, cfg=cfg)
    print(f"decode bf16 weights, 1 sequence: max logit error {err:.3g}")


def test_decode_bf16_weights():
    # The reference rounds the same matrices and the activations that meet them to bf16.
    prog = pto.compile(PTIR, entry="decode_bf16")
    wb = model.weights_bf16(model.weights(CFG))
    err = decode_case(prog, wb, [7, 33, 60], seed=5, bf16_mats=True)
    print(f"decode bf16 weights: max logit error {err:.3g}")


TP_CFG = model.Config(hidden=512, ffn=1024, vocab=512, blocks=12, max_blocks=4)


def shards(w, kc, vc, n):
    """The host arrays of @tp for n devices: the weights split Megatron-style, stacked on axis 0."""
    D, F = TP_CFG.D, TP_CFG.F
    dl, fl = D // n, F // n
    cols = lambda a, k: np.stack([a[:, r * k:(r + 1) * k] for r in range(n)])  # noqa: E731
    rows = lambda a, k: np.stack([a[r * k:(r + 1) * k] for r in range(n)])     # noqa: E731
    return {"wqs": cols(w["wq"], dl), "wks": cols(w["wk"], dl), "wvs": cols(w["wv"], dl),
            "wos": rows(w["wo"], dl), "wgs": cols(w["wg"], fl), "wus": cols(w["wu"], fl),
            "wds": rows(w["wd"], fl), "kcs": model.shard_heads(kc, TP_CFG.heads, n),
            "vcs": model.shard_heads(vc, TP_CFG.heads, n)}


@pytest.mark.parametrize("ndev", [2, 4])
def test_tensor_parallel(ndev):
    # The same step on 1 device's reference, split over ndev devices with dist.allreduce.
    prog = pto.compile(PTIR, entry="tp", devices=ndev)
    cfg, w = TP_CFG, model.weights(TP_CFG, seed=4)
    rng = np.random.default_rng(6)
    b = 3
    ids = rng.integers(0, cfg.V, (b, 1)).astype(np.int32)
    pos = np.array([[9], [64], [140]], np.int32)
    bt = model.block_tables(cfg, b, 6)
    kc = rng.standard_normal((cfg.S, cfg.D)).astype(np.float32)
    vc = rng.standard_normal((cfg.S, cfg.D)).astype(np.float32)
    s = shards(w, kc, vc, ndev)
    logits = np.zeros((ndev * b, cfg.V), np.float32)
    nxt = np.full((ndev * b, 1), -1, np.int32)
    with pto.DistributedWorker(prog, cores_per_chip=2) as dw:
        dw(ids, pos, bt, w["emb"], w["g1"], s["wqs"], s["wks"], s["wvs"], s["wos"], w["g2"],
           s["wgs"], s["wus"], s["wds"], w["gf"], w["wlm"], w["invf"], s["kcs"], s["vcs"],
           logits, nxt)
    want, want_next = model.step(cfg, w, ids, pos, bt, kc, vc)
    for r in range(ndev):
        err = check_logits(logits[r * b:(r + 1) * b], want)
        assert (nxt[r * b:(r + 1) * b, 0] == want_next).all(), f"rank {r}: {nxt.ravel()}"
    # every rank appended its heads' keys and values: the caches put back together are the
    # reference's (updated in place by model.step)
    got_k = model.unshard_heads(s["kcs"], cfg.heads)
    got_v = model.unshard_heads(s["vcs"], cfg.heads)
    tol = LOGIT_TOL * np.abs(kc).max()
    assert np.abs(got_k - kc).max() <= tol and np.abs(got_v - vc).max() <= tol
    print(f"tensor parallel over {ndev} devices: max logit error {err:.3g}")


def test_decode_loop_example():
    # examples/llm/decode.py as a user runs it: two prefills, then 6 decode steps of both
    # sequences on one worker (two programs, resident weights and caches), checked by numpy.
    import subprocess
    r = subprocess.run([sys.executable, os.path.join(LLM, "decode.py"), "6", "--check"],
                       capture_output=True, text=True, timeout=600)
    print(r.stdout, r.stderr)
    assert r.returncode == 0 and "2 prefills and 6 decode steps checked: PASS" in r.stdout


@pytest.mark.parametrize("n", [20, 70])
def test_prefill(n):
    # a prompt of 20 tokens (@prefill_attend: Q K^T, tile.tri's mask, P V) and of 70 (past its
    # 64 rows: each token's attention through @attend), against the reference row by row
    prog = pto.compile(PTIR, entry="prefill")
    cfg = model.Config(hidden=256, ffn=256, vocab=512, blocks=12, max_blocks=8)
    w = model.weights(cfg, seed=8)
    ids = np.random.default_rng(n).integers(0, cfg.V, (n, 1)).astype(np.int32)
    bt = model.block_tables(cfg, 1, seed=n)
    kc, vc = model.empty_cache(cfg)
    kr, vr = kc.copy(), vc.copy()
    logits = np.zeros((n, cfg.V), np.float32)
    nxt = np.full((n, 1), -1, np.int32)
    wp = model.weights_panels(w)
    pto.run(prog, ids, bt, *[wp[k] for k in NAMES], kc, vc, logits, nxt)
    want, want_next = model.step(cfg, w, ids, np.arange(n), np.repeat(bt, n, 0), kr, vr)
    check_logits(logits, want)
    assert (nxt[:, 0] == want_next).all()
    assert np.abs(kc - kr).max() <= LOGIT_TOL * np.abs(kr).max()
