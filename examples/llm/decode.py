"""Greedy generation with the Llama-style layer of llama_layer.ptir: a prefill of each prompt,
then decode steps of all the sequences together, each feeding its argmax back as the next
input. Two programs (@prefill, @decode) on one worker; the weights and the paged KV caches stay
resident on the device between the calls (only token ids, positions and block tables travel).
--check runs the same loop in numpy (model.py) and compares every step's logits and tokens.

    PYTHONPATH=build/python python3 examples/llm/decode.py [STEPS] [--check] [--hidden D]"""
import argparse
import os
import sys

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model  # noqa: E402

PTIR = os.path.join(HERE, "llama_layer.ptir")
NAMES = ("emb", "g1", "wq", "wk", "wv", "wo", "g2", "wg", "wu", "wd", "gf", "wlm", "invf")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int, nargs="?", default=8)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--hidden", type=int, default=256)
    a = ap.parse_args()
    cfg = model.Config(hidden=a.hidden, ffn=2 * a.hidden, vocab=512, blocks=16, max_blocks=4)
    w = model.weights(cfg)
    rng = np.random.default_rng(7)
    prompts = [rng.integers(0, cfg.V, n).astype(np.int32) for n in (11, 20)]
    assert max(len(p) for p in prompts) + a.steps <= cfg.MB * model.BLOCK
    bt = model.block_tables(cfg, len(prompts))      # one block table row per sequence

    prefill = pto.compile(PTIR, entry="prefill")
    decode = pto.compile(PTIR, entry="decode")
    ref_k, ref_v = model.empty_cache(cfg)
    bad = 0

    def compare(what, logits, tokens, want_logits, want_tokens):
        nonlocal bad
        err = np.abs(logits - want_logits).max() / np.abs(want_logits).max()
        if err > 1e-4 or not np.array_equal(tokens, want_tokens):
            bad += 1
            print(f"{what}: relative logit error {err:.3g}, tokens {tokens} vs {want_tokens}")

    # the default worker: a thread per CPU, each able to run a matmul (cube) task (every
    # projection and the attention are cube kernels), as a cube core of its own (README)
    with pto.ChipWorker(pto.RunConfig(platform="sim")) as wk:
        # once; the matrices panel-major, as @prefill and @decode take them (model.panels)
        dev = {k: wk.alloc_tensor(v.shape, v.dtype, init=v)
               for k, v in model.weights_panels(w).items()}
        kc = wk.alloc_tensor((cfg.S, cfg.D), np.float32, init=ref_k)  # zeros
        vc = wk.alloc_tensor((cfg.S, cfg.D), np.float32, init=ref_v)
        weights = [dev[k] for k in NAMES]
        out = [list(p) for p in prompts]
        with wk.register(prefill) as run_prefill, wk.register(decode) as run_decode:
            for s, p in enumerate(prompts):
                n = len(p)
                logits = np.zeros((n, cfg.V), np.float32)
                nxt = np.zeros((n, 1), np.int32)
                run_prefill(p.reshape(n, 1), bt[s:s + 1], *weights, kc, vc, logits, nxt)
                out[s].append(int(nxt[-1, 0]))
                if a.check:
                    rows = np.repeat(bt[s:s + 1], n, 0)
                    want, want_next = model.step(cfg, w, p, np.arange(n), rows, ref_k, ref_v)
                    compare(f"prefill {s}", logits, nxt[:, 0], want, want_next)
            b = len(prompts)
            for step in range(a.steps):
                ids = np.array([[o[-1]] for o in out], np.int32)
                pos = np.array([[len(o) - 1] for o in out], np.int32)
                logits = np.zeros((b, cfg.V), np.float32)
                nxt = np.zeros((b, 1), np.int32)
                run_decode(ids, pos, bt, *weights, kc, vc, logits, nxt)
                if a.check:
                    want, want_next = model.step(cfg, w, ids, pos, bt, ref_k, ref_v)
                    compare(f"decode step {step}", logits, nxt[:, 0], want, want_next)
                for o, t in zip(out, nxt[:, 0]):
                    o.append(int(t))
        if a.check:
            got = wk.copy_from(kc)
            if np.abs(got - ref_k).max() > 1e-4 * np.abs(ref_k).max():
                bad += 1
                print("the resident key cache differs from numpy's")
    for s, o in enumerate(out):
        print(f"sequence {s}: prompt {len(prompts[s])} tokens, generated {o[len(prompts[s]):]}")
    if a.check:
        print(f"{len(prompts)} prefills and {a.steps} decode steps checked: "
              f"{'FAIL' if bad else 'PASS'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
