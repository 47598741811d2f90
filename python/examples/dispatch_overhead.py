"""What a launch costs from Python, against the C API's own launch (the seed's explicit-dispatch
overhead check; examples/runtime/dispatch_overhead.c in C).

add_scalar.ptir is one task, y = x + c, on a 16x64 tile: a launch is nearly all runtime overhead.
The program is registered once; then, in REPS alternating rounds, pto.benchmark measures CALLS
launches driven by C (pto_benchmark: each launch's chip.run span, the whole pto_handle_call), and
a Python loop times CALLS calls of the handle (each with a different c, every result checked).
The Python-side overhead per dispatch is the Python call's median minus the C launch's median;
the target is python <= 2 * C + 5 us. The round with the lowest Python median is reported (the
machine may be loaded). Exit status 1 on a wrong result, or with --check when the target is
missed.

    PYTHONPATH=build/python python3 python/examples/dispatch_overhead.py [CALLS] [--check]"""
import os
import sys
import time

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
PTIR = os.path.join(HERE, "..", "..", "examples", "runtime", "add_scalar.ptir")
REPS = 5


def measure(calls: int) -> dict:
    prog = pto.compile(PTIR)
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64) / 7
    y = np.zeros_like(x)
    bad = 0
    best = None
    with pto.ChipWorker(pto.RunConfig(platform="sim", cores=2)) as w:
        t0 = time.perf_counter()
        h = w.register(prog)
        register_us = (time.perf_counter() - t0) * 1e6
        clock = time.perf_counter_ns
        for _ in range(REPS):
            st = pto.benchmark(prog, [x, y, 0.5], rounds=calls, warmup=10, worker=w)
            ts = np.empty(calls)
            for i in range(calls):
                c = float(i % 1000) * 0.5
                t = clock()
                h(x, y, c)
                ts[i] = clock() - t
                if i % 97 == 0 and not np.array_equal(y, x + np.float32(c)):
                    bad += 1
            bad += not np.array_equal(y, x + np.float32(c))
            r = {"c_us": st.host_wall_us_median, "c_min_us": st.host_wall_us_min,
                 "py_us": float(np.median(ts)) / 1e3, "py_min_us": float(ts.min()) / 1e3}
            if best is None or r["py_us"] < best["py_us"]:
                best = r
        h.unregister()
    best["overhead_us"] = best["py_us"] - best["c_us"]
    best["ratio"] = best["py_us"] / best["c_us"]
    best["target_us"] = 2 * best["c_us"] + 5
    best["met"] = best["py_us"] <= best["target_us"]
    best["register_us"] = register_us
    best["bad"] = bad
    return best


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--check"]
    calls = int(args[0]) if args else 2000
    r = measure(calls)
    print(f"register once: {r['register_us']:.1f} us")
    print(f"C launch (pto_benchmark chip.run): median {r['c_us']:.2f} us, min {r['c_min_us']:.2f} us")
    print(f"Python call of the handle:         median {r['py_us']:.2f} us, min {r['py_min_us']:.2f} us")
    print(f"Python-side overhead {r['overhead_us']:.2f} us per dispatch, ratio {r['ratio']:.2f}x; "
          f"target <= 2 x C + 5 us = {r['target_us']:.2f} us: {'met' if r['met'] else 'MISSED'}")
    print(f"{r['bad']} wrong results: {'FAIL' if r['bad'] else 'PASS'}")
    return 1 if r["bad"] or ("--check" in sys.argv and not r["met"]) else 0


if __name__ == "__main__":
    sys.exit(main())
