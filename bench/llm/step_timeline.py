"""Where a decode step's wall goes: the task records of @decode (or @decode_bf16) launches,
every idle microsecond of every thread classified (bench/RESULTS.md, "decode1").

    PYTHONPATH=build/python /usr/bin/python3 bench/llm/step_timeline.py [--batch 1 8] [--bf16]
        [--threads 2] [--cube-cores N] [--launches 20] [--stages]

Sizes and worker as decode_bench.py (hidden 1024, FFN 2816, vocab 8192, context 512; THREADS
threads running THREADS vector and --cube-cores cube cores), the weights and caches resident on
the device. Each launch records its tasks (core, ready, start, end, dependencies)
and its spans; the step's wall is the device wall pto.benchmark reports (first task start to
last task end). At each microsecond of it a core is either running a task or idle, and an idle
core is idle because
  type     tasks were ready (inputs done, submitted) but every core of their type was busy
           (a worker with one cube core runs one matmul task at a time);
  wake     a ready task had a free core of its type but no thread had taken it yet: the
           dispatch and wake-up latency of the scheduler;
  other    nothing was ready and another thread ran a task: the step's dependency chain,
           charged to the kernel being waited on (a stage's last tasks: tail imbalance, or a
           single-task stage such as rmsnorm, rope_append or argmax);
  orch     no thread ran anything and nothing was ready: the next task was not submitted yet.
The classes are per thread (THREADS x wall in all; a thread at a time per running task).
Prints the launch's spans (the orchestration's window against the tasks), the classes summed
over the cores (mean per launch, us), and the idle time charged to each kernel; --stages adds the
stages of the median launch (consecutive tasks of one kernel): tasks, wall, core time."""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import decode_bench  # noqa: E402
import peers  # noqa: E402

PTIR = os.path.join(HERE, "..", "..", "examples", "llm", "llama_layer.ptir")
NAMES = ("emb", "g1", "wq", "wk", "wv", "wo", "g2", "wg", "wu", "wd", "gf", "wlm", "invf")


def read_launch(path):
    """(spans, tasks) of one swimlane file: spans as (name, start us, dur us), tasks as dicts
    with id, kernel, core, ready, start, end (us from the file's origin)."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    spans = [(e["name"], e["ts"], e["dur"]) for e in ev if e.get("cat") == "span"]
    tasks = [{"id": e["args"]["task_id"], "kernel": e["name"], "core": e["args"]["core"],
              "ready": e["args"]["ready_us"], "start": e["ts"], "end": e["ts"] + e["dur"],
              "deps": e["args"]["deps"]} for e in ev if e.get("cat") == "task"]
    return spans, sorted(tasks, key=lambda t: t["id"])


def classify(tasks, types, nthreads, step_us=0.25):
    """Per class, the thread-us of the step's wall (nthreads x wall in all), and the idle
    thread-us charged to each kernel being waited on. types[c]: core c's type (0 AIC, 1 AIV)."""
    t0 = min(t["start"] for t in tasks)
    t1 = max(t["end"] for t in tasks)
    grid = np.arange(t0, t1, step_us)
    ntypes = [sum(1 for x in types if x == k) for k in (0, 1)]
    run = np.zeros((2, grid.size), np.int64)        # running tasks by type
    rdy = np.zeros((2, grid.size), np.int64)        # ready, not started, by type
    who = [[] for _ in range(grid.size)]            # kernels running
    for t in tasks:
        ty = types[t["core"]]
        a, b = np.searchsorted(grid, [t["start"], t["end"]])
        run[ty, a:b] += 1
        rdy[ty, np.searchsorted(grid, t["ready"]):a] += 1
        for j in range(a, b):
            who[j].append(t["kernel"])
    out = dict.fromkeys(("busy", "wake", "type", "other", "orch"), 0.0)
    waited = {}
    for j in range(grid.size):
        r = int(run[:, j].sum())
        idle = max(0, nthreads - r)
        out["busy"] += min(r, nthreads) * step_us
        takeable = sum(min(int(rdy[k, j]), ntypes[k] - int(run[k, j])) for k in (0, 1))
        n = min(idle, takeable)
        out["wake"] += n * step_us
        idle -= n
        n = min(idle, int(rdy[:, j].sum()) - takeable)
        out["type"] += n * step_us
        idle -= n
        if idle and r:
            out["other"] += idle * step_us
            for k in who[j]:
                waited[k] = waited.get(k, 0.0) + idle * step_us / r
        else:
            out["orch"] += idle * step_us
    return t1 - t0, out, waited


def stages(tasks):
    """Consecutive tasks (by submission) of one kernel: (kernel, n, first ready, first start,
    last end, core us)."""
    out = []
    for t in tasks:
        if out and out[-1][0] == t["kernel"]:
            k, n, r, s, e, c = out[-1]
            out[-1] = (k, n + 1, min(r, t["ready"]), min(s, t["start"]), max(e, t["end"]),
                       c + t["end"] - t["start"])
        else:
            out.append((t["kernel"], 1, t["ready"], t["start"], t["end"], t["end"] - t["start"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2816)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--stages", action="store_true")
    ap.add_argument("--show", choices=("median", "min"), default="median",
                    help="the launch whose spans and stages are shown (min: the fastest, the "
                         "nearest to a quiet host on a loaded one)")
    ap.add_argument("--ptir", default=PTIR)
    ap.add_argument("--cube-cores", type=int, default=0,
                    help="cube (AIC) cores on the threads, as decode_bench.py (default: as many "
                         "as threads; 1: as a worker of cores=2 has)")
    a = ap.parse_args()
    entry = "decode_bf16" if a.bf16 else "decode"
    prog = pto.compile(a.ptir, entry=entry)
    tmp = tempfile.mkdtemp(prefix="pto_step_timeline_")
    for b in a.batch:
        cfg, w, ids, pos, bt, kc, vc = peers.setup(a.hidden, a.ffn, a.vocab, b, a.ctx)
        ww = peers.model.weights_panels(peers.model.weights_bf16(w) if a.bf16 else w)
        logits = np.zeros((b, cfg.V), np.float32)
        nxt = np.zeros((b, 1), np.int32)
        runs = []
        cube = a.cube_cores or a.threads
        types = [1] * a.threads + [0] * cube            # the AIV cores first
        rc = decode_bench.run_config(a.threads, cube, True)
        with pto.ChipWorker(rc) as wk:
            dev = [wk.alloc_tensor(ww[k].shape, "bf16" if a.bf16 and k in peers.model.MATS
                                   else ww[k].dtype, init=ww[k]) for k in NAMES]
            dkc = wk.alloc_tensor(kc.shape, np.float32, init=kc)
            dvc = wk.alloc_tensor(vc.shape, np.float32, init=vc)
            with wk.register(prog) as run:
                for i in range(a.launches + 2):
                    run(ids, pos, bt, *dev, dkc, dvc, logits, nxt)
                    if i < 2:
                        continue                                    # warm-up
                    path = os.path.join(tmp, f"b{b}_{i}.json")
                    wk.export_swimlane(path)
                    runs.append(read_launch(path))
                    os.unlink(path)
        res = []
        for spans, tasks in runs:
            wall, cls, waited = classify(tasks, types, a.threads)
            res.append((wall, cls, waited, spans, tasks))
        res.sort(key=lambda r: r[0])
        walls = [r[0] for r in res]
        n = len(res)
        mean = {k: sum(r[1][k] for r in res) / n for k in res[0][1]}
        wk_all = {}
        for r in res:
            for k, v in r[2].items():
                wk_all[k] = wk_all.get(k, 0.0) + v / n
        tot = sum(mean.values())
        print(f"\n{entry} batch {b}, {a.threads} threads, {n} launches: device wall median "
              f"{statistics.median(walls):.0f} us (min {walls[0]:.0f}), {len(res[0][4])} tasks")
        print(f"thread-us per launch (mean; {a.threads} threads x wall = {tot:.0f}; "
              f"cores {types.count(0)} AIC + {types.count(1)} AIV):")
        for k, label in (("busy", "running tasks"),
                         ("type", "idle, ready tasks wait for a core of their type"),
                         ("wake", "idle, a ready task has a free core (dispatch/wake-up)"),
                         ("other", "idle, nothing ready, a task running (dependency)"),
                         ("orch", "idle, nothing ready, none running (not submitted yet)")):
            print(f"  {label:58s} {mean[k]:8.0f}  {mean[k] / tot * 100:5.1f}%")
        print("idle thread-us waiting on each kernel (nothing ready; mean per launch):")
        for k, v in sorted(wk_all.items(), key=lambda e: -e[1]):
            print(f"  {k:18s} {v:8.0f}")
        med = res[n // 2] if a.show == "median" else res[0]
        spans, tasks = med[3], med[4]
        t0 = min(t["start"] for t in tasks)
        print(f"spans of the {a.show} launch (us from its first task's start, {med[0]:.0f} us):")
        for name, s, d in spans:
            print(f"  {name:28s} {s - t0:9.1f} .. {s + d - t0:9.1f}")
        if a.stages:
            print(f"stages of the {a.show} launch (us from the first task's start):")
            wall, cls, _ = classify(tasks, types, a.threads)
            print("  its thread-us: " + ", ".join(f"{k} {v:.0f}" for k, v in cls.items()))
            print("  kernel              tasks  ready    start      end   wall  core-us")
            for k, cnt, r, s, e, c in stages(tasks):
                print(f"  {k:18s} {cnt:5d} {r - t0:7.1f} {s - t0:8.1f} {e - t0:8.1f} "
                      f"{e - s:6.1f} {c:8.1f}")
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
