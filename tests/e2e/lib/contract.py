"""Checks of pto against the language's contract (docs/language.md), with expected values computed
here, independently of pto's interpreter: `pto run --check` already holds compiled code to the
interpreter, so these catch what both could get wrong together.

A case is a program, its inputs (numpy arrays or runtime scalars), and either the exact outputs
the contract implies or the error (exit status and message) it must report. Used by
tests/e2e/contract_*.sh: `python3 contract.py CASES.py` runs every case of CASES.py (a module
with a list CASES) and exits 1 when one fails.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

PTO = os.environ["PTO"]


def bf16(a):
    """float32 values as raw bfloat16 bits (round to nearest-even; NaN kept a quiet NaN)."""
    b = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(a, np.float32))
    k16, one = np.uint64(16), np.uint64(1)
    r = ((b + np.uint64(0x7FFF) + ((b >> k16) & one)) >> k16).astype(np.uint16)
    return np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16)


def bf16_to_f32(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


class Case:
    """One check. ins: name -> array (a .npy input) or str (passed to --in as is);
    want: name -> array of the exact bits expected (NaN equal to NaN, -0 distinct from +0),
    or (array, ulps) for a float result within that many ulps, or ("near", array, rtol, atol) for
    one within a tolerance, or ("relnorm", array, tol) for one whose error's Frobenius norm is
    within tol of the array's, or ("bf16", raw bits) for bf16
    values compared as floats (NaN equal to NaN whatever its sign and payload); err: (status, text) for a
    program that must fail (text: a string, or a list of strings it must all hold), cmd 'check'
    or 'run'; env: variables set for pto."""

    def __init__(self, name, prog, ins=None, want=None, err=None, args=(), cmd="run",
                 check=True, env=None):
        self.name, self.prog = name, prog
        self.ins, self.want = ins or {}, want or {}
        self.err, self.args, self.cmd, self.check = err, list(args), cmd, check
        self.env = env or {}


def same_bits(got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind == "f":
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        g, w = got.view(width), want.view(width)
        bad = (g != w) & ~(np.isnan(got) & np.isnan(want))
    else:
        bad = got != want
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        return "%d elements differ; first at %s: got %r, want %r" % (
            int(bad.sum()), list(i), got[i], want[i])
    return None


def within_ulps(got, want, ulps):
    if got.shape != want.shape:
        return "shape %s, want %s" % (got.shape, want.shape)
    g, w = got.astype(np.float64), want.astype(np.float64)
    spacing = np.abs(np.spacing(want.astype(got.dtype))).astype(np.float64)
    bad = ~((np.abs(g - w) <= ulps * spacing) | (np.isnan(g) & np.isnan(w)) | (g == w))
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        return "%d elements off by more than %d ulp; first at %s: got %r, want %r" % (
            int(bad.sum()), ulps, list(i), got[i], want[i])
    return None


def near(got, want, rtol, atol):
    """Float results the contract leaves to an unspecified order of rounding (a matmul's sum, a
    chain through exp): |got - want| <= atol + rtol * |want| where want is finite, and the same
    infinities and NaNs where it is not. A u16 result against float values holds bf16 bits."""
    if got.shape != want.shape:
        return "shape %s, want %s" % (got.shape, want.shape)
    if got.dtype == np.uint16 and want.dtype.kind == "f":  # bf16 bits, compared as floats
        got = bf16_to_f32(got)
    g, w = got.astype(np.float64), want.astype(np.float64)
    fin = np.isfinite(w)
    ok = np.where(fin, np.abs(g - w) <= atol + rtol * np.abs(w),
                  (np.isnan(g) & np.isnan(w)) | (g == w))
    if not ok.all():
        i = tuple(int(k) for k in np.argwhere(~ok)[0])
        return "%d elements outside rtol %g atol %g; first at %s: got %r, want %r" % (
            int((~ok).sum()), rtol, atol, list(i), got[i], want[i])
    return None


def relnorm(got, want, tol):
    """A result held as a whole, not element by element: ||got - want|| <= tol * ||want|| (the
    Frobenius norms), for a chain through a rounding step (a bf16 intermediate) where an
    element near zero after cancellation misses any per-element tolerance."""
    if got.shape != want.shape:
        return "shape %s, want %s" % (got.shape, want.shape)
    g, w = got.astype(np.float64), want.astype(np.float64)
    err = np.linalg.norm(g - w) / np.linalg.norm(w)
    if not err <= tol:
        return "relative Frobenius error %.3g, over %g" % (err, tol)
    return None


def check_want(got, w):
    """got against one entry of a Case's want (see Case)."""
    if isinstance(w, tuple) and isinstance(w[0], str) and w[0] == "near":
        return near(got, np.asarray(w[1]), w[2], w[3])
    if isinstance(w, tuple) and isinstance(w[0], str) and w[0] == "relnorm":
        return relnorm(got, np.asarray(w[1]), w[2])
    if isinstance(w, tuple) and isinstance(w[0], str):  # ("bf16", bits): any NaN is NaN
        return same_bits(bf16_to_f32(got), bf16_to_f32(w[1]))
    if isinstance(w, tuple):
        return within_ulps(got, np.asarray(w[0]), w[1])
    return same_bits(got, np.asarray(w))


def mpi_argv(argv, c):
    """With PTO_CONTRACT_MPIRUN set (an mpirun command line), a run of a host program (one with
    --devices) runs under it on as many ranks as devices, with --transport mpi: the contract
    says the transport changes nothing a program can see."""
    mpirun = os.environ.get("PTO_CONTRACT_MPIRUN")
    if not mpirun or "--devices" not in c.args:
        return argv
    devs = c.args[c.args.index("--devices") + 1]
    n = len(devs.split(",")) if "," in devs else int(devs)
    pre = mpirun.split() + ["-np", str(n)]
    for k in c.env:
        pre += ["-x", k]
    return pre + argv + ["--transport", "mpi"]


def run_case(c, tmp):
    d = tempfile.mkdtemp(prefix=c.name + "-", dir=tmp)
    prog = os.path.join(d, c.name + ".ptir")
    with open(prog, "w") as f:
        f.write(c.prog)
    if c.cmd == "check":
        argv = [PTO, "check", prog]
    else:
        argv = [PTO, "run", prog] + c.args
        for n, v in c.ins.items():
            if isinstance(v, str):
                argv += ["--in", "%s=%s" % (n, v)]
            else:
                p = os.path.join(d, n + ".npy")
                np.save(p, v)
                argv += ["--in", "%s=%s" % (n, p)]
        for n in c.want:
            argv += ["--out", "%s=%s" % (n, os.path.join(d, n + ".out.npy"))]
        if c.check and not c.err:
            argv.append("--check")
        argv = mpi_argv(argv, c)
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240,
                           env=dict(os.environ, **c.env))
    except subprocess.TimeoutExpired:
        return ["timed out: " + " ".join(argv)]
    out = r.stdout.decode(errors="replace")
    if c.err:
        status, text = c.err
        fails = []
        if r.returncode != status:
            fails.append("exit %d, want %d" % (r.returncode, status))
        for t in [text] if isinstance(text, str) else text:
            if t not in out:
                fails.append("output lacks %r" % t)
        return [f + "\n" + out for f in fails]
    if r.returncode != 0:
        return ["exit %d:\n%s" % (r.returncode, out)]
    if c.check and "PASS" not in out:
        return ["--check did not pass:\n" + out]
    if argv[-2:] == ["--transport", "mpi"] and "over mpi" not in out:
        return ["not run over MPI:\n" + out]
    fails = []
    # The contract asks for the interpreter's bits, not only its tolerance: --check's worst
    # absolute error is 0 for every output.
    for line in out.splitlines():
        if "max abs err" in line and "max abs err 0 " not in line:
            fails.append("compiled and interpreter differ: " + line.strip())
    for n, w in c.want.items():
        got = np.load(os.path.join(d, n + ".out.npy"))
        msg = check_want(got, w)
        if msg:
            fails.append("%s: %s" % (n, msg))
    return fails


def main():
    path = sys.argv[1]
    only = sys.argv[2:]
    ns = {"__file__": path, "Case": Case, "np": np, "bf16": bf16, "bf16_to_f32": bf16_to_f32}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    tmp = tempfile.mkdtemp(prefix="contract-", dir=os.environ.get("PTO_TEST_TMP", "/tmp"))
    nfail = npass = 0
    for c in ns["CASES"]:
        if only and c.name not in only:
            continue
        fails = run_case(c, tmp)
        if fails:
            nfail += 1
            for f in fails:
                print("FAIL: %s: %s" % (c.name, f.rstrip().replace("\n", "\n  | ")))
        else:
            npass += 1
            print("ok: " + c.name)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
