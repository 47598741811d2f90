"""The decode step of examples/llm/llama_layer.ptir (@decode, f32; @decode_bf16 with --bf16)
against what a user would pick instead: the same step in numpy over OpenBLAS (its best kernel:
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for that process) and in PyTorch eager on the CPU,
same weights, same thread count; and the limit: the bytes a step must read (weights, the KV
cache rows it attends over) over the memory bandwidth a memcpy reaches in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/llm/decode_bench.py [--batch 1 8]
        [--hidden 1024] [--ffn 2816] [--vocab 8192] [--ctx 512] [--threads N] [--rounds 20]
        [--cube-cores N]

Sizes: hidden 1024, 8 heads of 128, FFN 2816 (Llama's 8/3 ratio, rounded to 128), vocab 8192,
every sequence at position ctx-1 (it attends over ctx tokens). pto's entries take the matrices
panel-major (examples/llm/model.py weights_panels), the peers row-major: the same bytes
(the limit counts the matrices' own bytes, none of a vocab's zero padding). pto's time is the
device wall of pto.benchmark (weights and caches resident, ids/pos/block tables passed per
launch), the peers' the wall of the step in Python: the median over the rounds, and the minimum
beside it.
Prints a markdown table and, per batch, pto's mean tree and where the time goes per kernel
(the summed core time of its tasks, from a worker recording its tasks).

THREADS defaults to the CPUs this process may run on, and then pto's worker is the default one
(RunConfig()): a thread per CPU, each with a cube core and two vector cores. Every projection
and the attention are matmul (AIC) kernels: a worker with fewer cube cores than threads runs
them one at a time while a thread idles (bench/RESULTS.md, "decode1"; --cube-cores 1 measures
that). With --threads other than the CPUs, or --cube-cores, the worker is THREADS threads with
THREADS vector cores and CUBE (default THREADS) cube cores (RunConfig(aic_cores=, aiv_cores=,
threads=))."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402

PTIR = os.path.join(HERE, "..", "..", "examples", "llm", "llama_layer.ptir")
NAMES = ("emb", "g1", "wq", "wk", "wv", "wo", "g2", "wg", "wu", "wd", "gf", "wlm", "invf")


def peer(what, a, b, out, env=None):
    cmd = [sys.executable, os.path.join(HERE, "peers.py"), what, str(a.hidden), str(a.ffn),
           str(a.vocab), str(b), str(a.ctx), str(a.threads), str(a.rounds), out]
    e = dict(os.environ, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    e.update(env or {})
    for k in [k for k, v in e.items() if v is None]:
        del e[k]
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=1800)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
    return json.loads(r.stdout.strip().splitlines()[-1]), None


def run_config(threads, cube, record=False):
    """The default worker (cube 0), or THREADS threads running THREADS vector cores and cube cube
    cores (module docstring)."""
    if not cube:
        return pto.RunConfig(platform="sim", record_tasks=record)
    return pto.RunConfig(platform="sim", aic_cores=cube, aiv_cores=threads, threads=threads,
                         record_tasks=record)


def kernel_times(prog, args, threads, cube, launches=5):
    """Where the time goes: per kernel, the summed core time of its tasks (ms per launch, mean
    over launches) and the task count, from the task records of a worker with record_tasks."""
    tot = {}
    with pto.ChipWorker(run_config(threads, cube, True)) as wk:
        with wk.register(prog) as run:
            for _ in range(launches):
                run(*args)
                d = wk.export_swimlane_records(f"/tmp/pto_llm_bench_rec_{os.getpid()}")
                with open(os.path.join(d, "deps.json")) as f:
                    names = {t["task_id"]: t["name"] for t in json.load(f)["tasks"]}
                with open(os.path.join(d, "chip_swimlane_records.json")) as f:
                    rows = json.load(f)["aicore_tasks"]
                for core, task, _, t0, t1, _ in rows:
                    ms, n = tot.get(names[task], (0.0, 0))
                    tot[names[task]] = (ms + (t1 - t0) / 1e6 / launches, n + 1)
    return {k: (ms, n // launches) for k, (ms, n) in sorted(tot.items(), key=lambda e: -e[1][0])}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2816)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512)
    ncpu = len(os.sched_getaffinity(0))
    ap.add_argument("--threads", type=int, default=ncpu,
                    help="threads of pto and of the peers (default: the CPUs, %(default)s)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--bf16", action="store_true", help="pto runs @decode_bf16 (bf16 matrices)")
    ap.add_argument("--cube-cores", type=int, default=0,
                    help="pto's cube (AIC) cores on its threads (default: as many as threads; "
                    "with --threads the CPUs, the default worker)")
    a = ap.parse_args()
    cube = a.cube_cores or (0 if a.threads == ncpu else a.threads)
    entry = "decode_bf16" if a.bf16 else "decode"
    prog = pto.compile(PTIR, entry=entry)
    # memcpy before each batch and at the end: the machine's load moves it by up to 5x, and the
    # limit takes the best of the run (the fastest the memory was seen to go)
    mems = []

    def memcpy():
        m, _ = peer("memcpy", a, 0, "-")
        mems.append(2 * m["memcpy_gbps"])   # bytes read + bytes written per second
        return mems[-1]

    rows, trees = [], []
    for b in a.batch:
        memcpy()
        cfg, w, ids, pos, bt, kc, vc = peers.setup(a.hidden, a.ffn, a.vocab, b, a.ctx)
        wsz = 2 if a.bf16 else 4
        mats = sum(w[k].size for k in ("wq", "wk", "wv", "wo", "wg", "wu", "wd", "wlm"))
        nbytes = mats * wsz + 2 * b * a.ctx * cfg.D * 4 + b * cfg.D * 4   # weights, K and V, emb
        ww = peers.model.weights_panels(peers.model.weights_bf16(w) if a.bf16 else w)
        logits = np.zeros((b, cfg.V), np.float32)
        nxt = np.zeros((b, 1), np.int32)
        with pto.ChipWorker(run_config(a.threads, cube)) as wk:
            dev = [wk.alloc_tensor(ww[k].shape, "bf16" if a.bf16 and k in peers.model.MATS
                                   else ww[k].dtype, init=ww[k]) for k in NAMES]
            dkc = wk.alloc_tensor(kc.shape, np.float32, init=kc)
            dvc = wk.alloc_tensor(vc.shape, np.float32, init=vc)
            args = [ids, pos, bt, *dev, dkc, dvc, logits, nxt]
            st = pto.benchmark(prog, args, rounds=a.rounds, warmup=2, worker=wk)
            pto_ms = st.device_wall_us_median / 1e3
            pto_min = st.device_wall_us_min / 1e3
            tree = st.format_mean_tree()
        # the host arrays again, so the recording worker gets the same inputs
        kt = kernel_times(prog, [ids, pos, bt, *[ww[k] for k in NAMES], kc.copy(), vc.copy(),
                                 logits.copy(), nxt.copy()], a.threads, cube)
        trees.append((b, tree + "\n".join(["", "kernel            core ms/launch  tasks"] +
                               [f"{k:16s}  {ms:13.3f}  {n:5d}" for k, (ms, n) in kt.items()] +
                               [f"{'all':16s}  {sum(v[0] for v in kt.values()):13.3f}  "
                                f"(on {a.threads} cores)"])))
        out_np = f"/tmp/pto_llm_bench_numpy_{os.getpid()}.npy"
        res_np, err_np = peer("numpy", a, b, out_np,
                              {"OPENBLAS_CORETYPE": None, "OPENBLAS_L2_SIZE": None})
        # OpenMP's default active wait spins its threads: on a machine shared with other work
        # that made torch's step 3-10x slower here, so torch gets the passive wait
        res_t, err_t = peer("torch", a, b, "/dev/null", {"OMP_WAIT_POLICY": "PASSIVE"})
        np_ms = float(np.median(res_np["ms"])) if res_np else float("nan")
        t_ms = float(np.median(res_t["ms"])) if res_t else float("nan")
        np_min = float(np.min(res_np["ms"])) if res_np else float("nan")
        t_min = float(np.min(res_t["ms"])) if res_t else float("nan")
        check = ""
        if res_np:
            want = np.load(out_np)
            os.unlink(out_np)
            rel = np.abs(logits - want).max() / np.abs(want).max()
            check = f"logits vs numpy: {rel:.2g} of the scale, argmax " + \
                ("equal" if np.array_equal(nxt[:, 0], want.argmax(1)) else "DIFFERS")
        print(f"batch {b}: numpy: {res_np['info'] if res_np else err_np}")
        print(f"batch {b}: torch: {res_t['info'] if res_t else err_t}")
        print(f"batch {b}: {check}")
        rows.append((b, nbytes, pto_ms, pto_min, np_ms, np_min, t_ms, t_min))
    memcpy()
    gbps = max(mems)
    print(f"memcpy of 256 MiB on {a.threads} threads, {len(mems)} times: "
          f"{', '.join(f'{m:.1f}' for m in mems)} GB/s of traffic (read + write); the limit "
          f"divides the bytes a step reads by the best, {gbps:.1f} GB/s")
    table = []
    for b, nbytes, pto_ms, pto_min, np_ms, np_min, t_ms, t_min in rows:
        limit_ms = nbytes / (gbps * 1e9) * 1e3
        faster = np.nanmin([np_ms, t_ms])
        faster_min = np.nanmin([np_min, t_min])
        table.append(f"| {b} | {pto_ms:.2f} ({pto_min:.2f}) | {np_ms:.2f} ({np_min:.2f}) | "
                     f"{t_ms:.2f} ({t_min:.2f}) | {limit_ms:.2f} ({nbytes / 1e6:.1f} MB) | "
                     f"{faster / pto_ms:.2f}x ({faster_min / pto_min:.2f}x) | "
                     f"{pto_ms / limit_ms:.2f}x ({pto_min / limit_ms:.2f}x) |")
    print(f"\n{entry}: hidden {a.hidden}, {a.hidden // 128} heads, FFN {a.ffn}, vocab {a.vocab}, "
          f"context {a.ctx}, {a.threads} threads (pto: "
          + (f"the default worker, {a.threads} cube + {2 * a.threads} vector cores" if not cube
             else f"{cube} cube + {a.threads} vector cores") + "), "
          f"median (min) of {a.rounds} rounds\n")
    print("| batch | pto ms | numpy ms | torch ms | limit ms (bytes) | faster peer / pto "
          "| pto / limit |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(table))
    for b, tree in trees:
        print(f"\npto mean tree, batch {b}:\n{tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
