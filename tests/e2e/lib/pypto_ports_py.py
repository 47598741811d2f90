"""The ports of tests/e2e/data/pypto_ports.py run the way a PyPTO user runs a compiled program
from Python (docs/pypto-guide.md, docs/python.md): `pto.compile(text, entry=NAME)` for
PyPTO's `ir.compile`, then `compiled(*args)` with numpy arrays (outputs zero-filled, in
parameter order; a `-D NAME=VALUE` of the case is pto.compile's NAME=VALUE, PyPTO's specialised
scalar) inside `with pto.ChipWorker(config=pto.RunConfig(platform="a2a3sim"))`.
Each output is held to the same numpy model as contract.py holds `pto run`'s.

Usage: python3 pypto_ports_py.py CASES.py [NAME...] (only the cases named, if any; PYTHONPATH naming the built package, PTO the built
pto for contract.py's import); exits 1 when a case fails.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract  # noqa: E402
import pto  # noqa: E402

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32}


def want_array(w):
    """The expected array of a want entry (an array, or a tuple naming its form first)."""
    if isinstance(w, tuple):
        return np.asarray(w[1] if isinstance(w[0], str) else w[0])
    return np.asarray(w)


def main():
    path = sys.argv[1]
    ns = {"__file__": path, "Case": contract.Case, "np": np, "bf16": contract.bf16,
          "bf16_to_f32": contract.bf16_to_f32}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    nfail = 0
    with pto.ChipWorker(config=pto.RunConfig(platform="a2a3sim")):
        cases = [c for c in ns["CASES"] if not sys.argv[2:] or c.name in sys.argv[2:]]
        for c in cases:
            kw = {}
            for i, a in enumerate(c.args[:-1]):
                if a == "--entry":
                    kw["entry"] = c.args[i + 1]
                if a == "--devices":  # a host program: pto.compile(.., devices=N)
                    kw["devices"] = int(c.args[i + 1])
                if a == "-D":  # a specialised scalar: pto.compile(.., NAME=VALUE)
                    n, v = c.args[i + 1].split("=", 1)
                    kw[n] = float(v) if "." in v else int(v)
            compiled = pto.compile(c.prog, **kw)
            args, outs = [], {}
            for p in compiled.params:
                if p.name in kw:  # the specialised value itself
                    args.append(kw[p.name])
                elif p.name in c.ins:
                    args.append(np.ascontiguousarray(c.ins[p.name]))
                else:
                    a = np.zeros(want_array(c.want[p.name]).shape, DTYPES[p.dtype])
                    outs[p.name] = a
                    args.append(a)
            compiled(*args)
            fails = ["%s: %s" % (n, m) for n, m in
                     ((n, contract.check_want(outs[n], w)) for n, w in c.want.items()) if m]
            for f in fails:
                print("FAIL: %s (Python): %s" % (c.name, f))
            nfail += bool(fails)
            if not fails:
                print("ok: %s (Python)" % c.name)
    print("%d passed, %d failed (Python)" % (len(cases) - nfail, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
