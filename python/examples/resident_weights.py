"""A weight kept resident on the device while batches of inputs stream through it (the seed's
resident-weights loop; examples/runtime/resident_batches.c in C).

linear.ptir computes y = x @ w. w is uploaded once (alloc_tensor with init) and passed to every
launch as a device tensor; each batch's x and y are numpy arrays (x passed without a copy, y
written in place). The program is registered once; B is a dynamic dim, so one compiled program
serves every batch size. Exit status 0 when every result matches numpy.

    PYTHONPATH=build/python python3 python/examples/resident_weights.py [ROUNDS]"""
import os
import sys

import numpy as np

import pto

HERE = os.path.dirname(os.path.abspath(__file__))
PTIR = os.path.join(HERE, "..", "..", "examples", "runtime", "linear.ptir")


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    linear = pto.compile(PTIR)
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((64, 64)).astype(np.float32)
    bad = 0
    with pto.ChipWorker(pto.RunConfig(platform="sim", cores=2)) as w:
        wt = w.alloc_tensor(weight.shape, np.float32, init=weight)  # uploaded once
        with w.register(linear) as step:
            for r in range(rounds):
                for batch in (37, 16, 100):
                    x = rng.standard_normal((batch, 64)).astype(np.float32)
                    y = np.zeros((batch, 64), np.float32)
                    step(x, wt, y)
                    want = x @ weight
                    if not np.allclose(y, want, rtol=1e-4, atol=1e-4):
                        bad += 1
                        print(f"round {r} batch {batch}: max error {np.abs(y - want).max()}")
        assert np.array_equal(w.copy_from(wt), weight)  # the weight was never written
    print(f"{rounds * 3} batches through one resident weight: {'FAIL' if bad else 'PASS'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
