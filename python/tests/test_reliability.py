"""Issue #34 items 5 and 27: the argument packer never launches with a stale or another
thread's pto_arg (an array changed in place is packed and checked again; each thread packs its
own), and every integer that crosses into C is range-checked and refused with its name."""
import ctypes as C
import os
import threading

import numpy as np
import pytest

import pto
from conftest import SRC

ADD_SCALAR = os.path.join(SRC, "examples", "runtime", "add_scalar.ptir")  # x, out y, c: f32

INTS = """program ints
kernel @k(%x: tensor[16,64] f32, out %y: tensor[16,64] f32) -> (tensor[16,64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[16,64] f32, out %y: tensor[16,64] f32, %n: i32 = runtime,
           %u: u32 = runtime, %b: i8 = runtime) -> (tensor[16,64] f32) {
  call @k(%x, %y)
  return %y
}
"""


@pytest.fixture(scope="module")
def w():
    with pto.ChipWorker(pto.RunConfig(cores=2)) as w:
        yield w


@pytest.fixture(scope="module")
def prog():
    return pto.compile(ADD_SCALAR)


def xs():
    return np.arange(16 * 64, dtype=np.float32).reshape(16, 64)


def test_array_resized_in_place_is_checked_again(w, prog):
    h = w.register(prog)
    x, y = xs().copy(), np.zeros((16, 64), np.float32)   # arrays that own their data
    h(x, y, 1.0)
    assert np.array_equal(y, x + 1.0)
    y.resize((32, 64), refcheck=False)                  # a new, bigger buffer: not [16,64]
    with pytest.raises(pto.Error) as e:
        h(x, y, 2.0)
    assert "y" in e.value.message
    y.resize((16, 64), refcheck=False)                  # the shape fits again, another buffer
    y[...] = 0
    h(x, y, 3.0)                                        # written where y's data is now
    assert np.array_equal(y, x + 3.0)
    x.resize((8, 64), refcheck=False)                   # an input shrunk in place
    with pytest.raises(pto.Error):
        h(x, y, 1.0)
    for run in (h, lambda *a: w.run(prog, *a)):         # the same through worker.run
        x2, y2 = xs().copy(), np.zeros((16, 64), np.float32)
        run(x2, y2, 1.0)
        x2.dtype = np.int32                              # re-typed in place, same bytes
        with pytest.raises(pto.Error):
            run(x2, y2, 1.0)
        x2.dtype = np.float32
        y2.flags.writeable = False                       # made read-only in place
        with pytest.raises(pto.Error):
            run(x2, y2, 1.0)
        y2.flags.writeable = True
        run(x2, y2, 5.0)
        assert np.array_equal(y2, xs() + 5.0)


def test_two_threads_on_one_handle_keep_their_own_arguments(w, prog):
    h = w.register(prog)
    errors, n = [], 40
    barrier = threading.Barrier(2, timeout=60)

    def body(k):
        try:
            x = xs() * (k + 1)
            y = np.zeros((16, 64), np.float32)
            barrier.wait()
            for i in range(n):
                y[...] = -1
                try:
                    h(x, y, float(k * 1000 + i))
                except pto.Error as e:  # the worker runs one launch at a time: refused, not run
                    if "already running" not in e.message:
                        raise
                    continue
                if not np.array_equal(y, x + (k * 1000 + i)):  # a success wrote our y
                    errors.append(f"thread {k} round {i}: another thread's arguments")
                    return
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(f"thread {k}: {e!r}")

    ts = [threading.Thread(target=body, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts), "a thread did not finish"
    assert not errors, errors
    assert h._packer.slots() is not None


def test_threads_calling_a_compiled_program_share_its_worker_safely(prog):
    errors = []

    def body(k):
        try:
            x = xs() * (k + 1)
            y = np.zeros((16, 64), np.float32)
            for i in range(20):
                prog(x, y, float(i))                    # PyPTO's compiled(*args)
                if not np.array_equal(y, x + i):
                    errors.append(f"thread {k} round {i}: a wrong result")
                    return
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(f"thread {k}: {e!r}")

    ts = [threading.Thread(target=body, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts) and not errors, errors


def test_each_thread_packs_its_own_array(prog):
    p = pto._Packer(prog)
    mine = p.slots()
    other = []
    t = threading.Thread(target=lambda: other.append(p.slots()))
    t.start()
    t.join(timeout=60)
    assert other and other[0] is not mine and other[0].args is not mine.args


def test_scalars_out_of_their_dtype_are_refused(w):
    p = pto.compile(INTS)
    x, y = xs(), np.zeros((16, 64), np.float32)
    w.run(p, x, y, 2**31 - 1, 2**32 - 1, -128)
    for args, name in (((2**31, 0, 0), "'n', i32"), ((-2**31 - 1, 0, 0), "'n', i32"),
                       ((0, -1, 0), "'u', u32"), ((0, 2**32, 0), "'u', u32"),
                       ((0, 0, 128), "'b', i8"), ((1.5, 0, 0), "'n', i32"),
                       (("3", 0, 0), "'n', i32")):
        with pytest.raises(pto.Error) as e:
            w.run(p, x, y, *args)
        assert name in e.value.message and e.value.code == pto.INVALID_ARGUMENT
    assert np.array_equal(y, x)


def test_float_scalars_that_round_to_infinity_are_refused(w, prog):
    # As --in c=1e39 is (pto_scalar_parse): 1e39 used to launch as inf and 10**400 to raise a
    # bare OverflowError; infinities, NaN and the largest finite f32 still launch.
    x, y = xs(), np.zeros((16, 64), np.float32)
    for v in (1e39, -1e39, 10**39, 10**400, -10**400, np.float64(1e300)):
        with pytest.raises(pto.Error) as e:
            w.run(prog, x, y, v)
        assert "argument 2 ('c', f32) = " in e.value.message
        assert "out of range for f32: a finite f32 is at most" in e.value.message
        assert e.value.code == pto.INVALID_ARGUMENT
    assert not y.any()
    big = 3.4028234663852886e38  # the largest finite f32
    for v, want in ((float("inf"), np.inf), (-np.inf, -np.inf), (big, big), (2, 2.0)):
        w.run(prog, x, y, v)
        assert y[0, 0] == np.float32(want) + np.float32(x[0, 0])
    w.run(prog, x, y, float("nan"))
    assert np.isnan(y).all()


def test_bound_scalars_out_of_their_dtype_are_refused():
    act = os.path.join(SRC, "examples", "activation.ptir")  # mode: i32 = runtime
    # The one scalar parser (base/scalar.c) names the dtype's range, as -D and --in do.
    rng = "expected an integer from -2147483648 to 2147483647"
    for v, why in ((2**31, "out of range for i32"), (-2**31 - 1, "out of range for i32"),
                   (2**40, "out of range for i32"), (1.5, "not a valid i32 value")):
        with pytest.raises(pto.Error) as e:
            pto.compile(act, mode=v)
        assert f"mode={v}: {why}: {rng}" in e.value.message
        assert "-D" not in e.value.message
    assert pto.compile(act, mode=2**31 - 1).params[2].value == 2**31 - 1


def test_python_and_c_agree_on_every_integer_range():
    # The launch-scalar check's table (pto._INT_RANGES) is asked of the C library: every integer
    # dtype is in it, with the known range, and C's scalar parser (the one of -D and --in)
    # accepts both ends and refuses one past each.
    ints = {n: dt for dt, n in enumerate(pto._PTO_NAMES) if dt not in pto._FLOATS}
    assert sorted(pto._INT_RANGES) == sorted(ints.values())
    known = {"bool": (0, 1), "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1),
             "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1),
             "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1),
             "index": (-2**63, 2**63 - 1)}
    assert {n: pto._INT_RANGES[dt] for n, dt in ints.items()} == known
    c = pto._c

    def parses(text, dt):
        out = c.Scalar()
        st = c.pto_scalar_parse(str(text).encode(), dt, C.byref(out))
        c.pto_status_free(st)
        return not st

    for name, dt in ints.items():
        lo, hi = pto._INT_RANGES[dt]
        assert parses(lo, dt) and parses(hi, dt), name
        assert not parses(lo - 1, dt) and not parses(hi + 1, dt), name
    for dt in pto._FLOATS:
        assert c.pto_dtype_int_range(dt, C.byref(C.c_int64()), C.byref(C.c_uint64())) == -1


def test_ids_counts_and_sizes_are_range_checked(w, prog):
    cases = [
        (lambda: pto.compile(ADD_SCALAR, devices=0), "devices = 0"),
        (lambda: pto.compile(ADD_SCALAR, devices=[2**31]), "devices[0] = 2147483648"),
        (lambda: pto.compile(ADD_SCALAR, devices=[-1]), "devices[0] = -1"),
        (lambda: pto.compile(ADD_SCALAR, devices=[]), "devices is empty"),
        (lambda: pto.compile(ADD_SCALAR, opt_level=2**32), "opt_level"),
        (lambda: pto.DistributedWorker(devices=[0, 2**31]), "devices[1] = 2147483648"),
        (lambda: pto.DistributedWorker(devices=0), "devices = 0"),
        (lambda: pto.DistributedWorker(devices=2, wait_timeout_ms=2**32), "wait_timeout_ms"),
        (lambda: pto.DistributedWorker(devices=2, cores_per_chip=-1), "cores_per_chip"),
        (lambda: pto.ChipWorker(pto.RunConfig(cores=2**31)), "RunConfig.cores"),
        (lambda: pto.ChipWorker(pto.RunConfig(device_id=2**31)), "RunConfig.device_id"),
        (lambda: pto.ChipWorker(pto.RunConfig(device_memory_bytes=-1)),
         "RunConfig.device_memory_bytes"),
        (lambda: w.alloc_tensor((2**63,), np.float32), "shape[0]"),
        (lambda: w.alloc_tensor((4, -1), np.float32), "shape[1] = -1"),
        (lambda: w.malloc(-8), "nbytes = -8"),
        (lambda: w.copy_to(2**64, np.zeros(4, np.uint8), 4), "dst_dev_ptr"),
        (lambda: w.copy_from(np.zeros(4, np.uint8), 1, 8), "has 4 bytes, nbytes is 8"),
        (lambda: pto.benchmark(prog, [xs(), xs(), 1.0], rounds=2**31, worker=w), "rounds"),
        (lambda: pto.benchmark(prog, [xs(), xs(), 1.0], rounds=1, warmup=-1, worker=w),
         "warmup"),
        (lambda: pto.benchmark(prog, [xs(), xs(), 1.0], rounds=1, device_id=-1, worker=w),
         "device_id"),
    ]
    for call, text in cases:
        with pytest.raises(pto.Error) as e:
            call()
        assert text in e.value.message, (text, e.value.message)


def test_alloc_tensor_init_scalar_fills_the_tensor_and_is_range_checked(w, prog):
    # docs/python.md: alloc_tensor's init is "an array or a scalar"; every scalar was refused
    # ("init has dtype int64", "init has shape []").
    for dt, v, want in [(np.float32, 2.5, 2.5), (np.int32, 3, 3), (np.int8, -128, -128),
                        (np.uint64, 2**64 - 1, 2**64 - 1), (np.float32, np.float32(1.5), 1.5),
                        (np.int16, np.int16(7), 7), (np.float16, 1e-8, np.float16(1e-8)),
                        (np.bool_, True, True)]:
        t = w.alloc_tensor((3, 5), dt, init=v)
        got = w.copy_from(t)
        assert got.dtype == np.dtype(dt) and (got == want).all(), (dt, v, got)
        w.free_tensor(t)
    # bf16 holds its bits: 1.0 is 0x3f80, as a runtime bf16 scalar is converted.
    t = w.alloc_tensor((2, 2), "bf16", init=1.0)
    assert (w.copy_from(t) == 0x3F80).all()
    # Held to the dtype as a runtime scalar argument is.
    for dt, v, text in [(np.int8, 300, "init (a i8 scalar) = 300 is out of range"),
                        (np.int32, 1.5, "init (a i32 scalar) must be an integer, got float"),
                        (np.float32, 1e39, "init (a f32 scalar) = 1e+39"),
                        (np.float32, "1", "init (a f32 scalar) must be a number, got str")]:
        with pytest.raises(pto.Error, match=text.replace("(", r"\(").replace(")", r"\)")
                           .replace("+", r"\+")):
            w.alloc_tensor((2, 2), dt, init=v)
    # A scalar-initialised tensor runs like any other.
    x = w.alloc_tensor((16, 64), np.float32, init=2.0)
    y = np.zeros((16, 64), np.float32)
    w.run(prog, x, y, 1.0)
    assert (y == 3.0).all()


def test_wrong_types_for_compile_and_worker_are_named_errors():
    # Were AttributeError/TypeError from deep inside ("'int' object has no attribute 'encode'").
    with pytest.raises(pto.Error, match="entry is a function name"):
        pto.compile(ADD_SCALAR, entry=5)
    with pytest.raises(pto.Error, match="not NoneType"):
        pto.compile(None)
    with pytest.raises(pto.Error, match="not bytes"):
        pto.compile(b"program p")
    with pytest.raises(pto.Error, match="config is a pto.RunConfig, not str"):
        pto.ChipWorker("sim")
    with pytest.raises(pto.Error, match="DistributedWorker: config is a pto.RunConfig, not str"):
        pto.DistributedWorker(devices=1, config="sim", chips="threads")


def test_copy_from_never_writes_a_read_only_out_array(w):
    # copy_from(tensor, out=a) wrote into a read-only out array: into the immutable bytes object
    # under np.frombuffer (changing a Python constant), or, for a read-only mapping, SIGSEGV.
    t = w.alloc_tensor((4, 8), np.float32, init=7.0)
    buf = bytes(4 * 8 * 4)
    ro = np.frombuffer(buf, np.float32).reshape(4, 8)
    with pytest.raises(pto.Error, match=r"out must be a writable C-contiguous \[4, 8\] float32"):
        w.copy_from(t, out=ro)
    with pytest.raises(pto.Error, match="out must be a writable"):
        w.copy_from(t, ro)                                 # PyPTO's positional form
    assert buf == bytes(4 * 8 * 4)                         # nothing was written into it
    out = np.zeros((4, 8), np.float32)
    assert w.copy_from(t, out=out) is out and (out == 7.0).all()
    w.free_tensor(t)


def test_a_negative_nan_binding_keeps_its_sign():
    # pto.compile(..., a=-nan) bound +nan: the binding went through repr(), which writes -nan as
    # 'nan' (numpy's str() too).
    text = """program nb
kernel @k(%x: tensor[2,8] f32, out %y: tensor[2,8] f32, %a: f32) -> (tensor[2,8] f32) {
  %t = tile.load(%x, [0, 0], [2, 8])
  %u = tile.muls(%t, %a)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[2,8] f32, out %y: tensor[2,8] f32, %a: f32) -> (tensor[2,8] f32) {
  call @k(%x, %y, %a)
  return %y
}
"""
    import math
    for v, neg in [(-math.nan, True), (math.nan, False), (np.float32("-nan"), True),
                   (np.float64("nan"), False)]:
        p = pto.compile(text, a=v)
        a = p.params[2]
        assert a.bind == "literal" and math.isnan(a.value)
        assert (math.copysign(1.0, a.value) < 0) == neg, (v, a.value)
        y = np.zeros((2, 8), np.float32)
        p({"x": np.ones((2, 8), np.float32), "y": y})
        assert np.isnan(y).all()


BOOLS = INTS.replace("%b: i8 = runtime)", "%b: i8 = runtime, %f: bool = runtime)")


def test_a_bool_is_refused_where_a_number_is_wanted(w, prog):
    # Python's bool is an int subclass: True for the f32 'c' launched as 1.0 (and for an i32 as
    # 1) while numpy's True was refused; a bool is a value of the bool dtype only.
    x, y = xs(), np.zeros((16, 64), np.float32)
    for v in (True, False, np.True_, C.c_bool(True)):
        with pytest.raises(pto.ArgumentError) as e:
            w.run(prog, x, y, v)
        assert isinstance(e.value, TypeError) and e.value.code == pto.INVALID_ARGUMENT
        assert "argument 2 ('c') is a f32 scalar, got bool" in e.value.message, e.value.message
        assert "a bool is not a f32; pass a number (e.g. 1.0 for True)" in e.value.message
        with pytest.raises(pto.ArgumentError, match="argument 2 \\('c'\\) is a f32 scalar"):
            w.run(prog, [x, y, v])
        with pytest.raises(pto.ArgumentError, match="argument 2 \\('c'\\) is a f32 scalar"):
            w.run(prog, {"x": x, "y": y, "c": v})
    assert not y.any()  # nothing launched
    w.run(prog, x, y, 1)  # an int is still a number for a float scalar (docs/python.md)
    assert np.array_equal(y, x + 1.0)
    ints, bools = pto.compile(INTS), pto.compile(BOOLS)
    for args, name in (((True, 0, 0), "argument 2 ('n') is a i32 scalar, got bool True"),
                       ((0, np.True_, 0), "argument 3 ('u') is a u32 scalar, got bool True"),
                       ((0, 0, False), "argument 4 ('b') is a i8 scalar, got bool False")):
        with pytest.raises(pto.ArgumentError) as e:
            w.run(ints, x, y, *args)
        assert name in e.value.message, e.value.message
    # The bool dtype takes either bool, and 0 or 1, as -D and --in take true/false/1/0.
    for f in (True, False, np.True_, np.False_, 0, 1):
        w.run(bools, x, y, 1, 2, 3, f)
    with pytest.raises(pto.ArgumentError, match="argument 5 \\('f', bool\\) = 2 is out of range"):
        w.run(bools, x, y, 1, 2, 3, 2)
    # A fill value is held to the same rule.
    for dt, v in ((np.float32, True), (np.float64, np.False_), (np.int32, True), ("bf16", True)):
        with pytest.raises(pto.ArgumentError, match="init is a .* scalar, got bool"):
            w.alloc_tensor((2, 2), dt, init=v)
    for v in (True, np.True_, 1):
        t = w.alloc_tensor((2, 2), np.bool_, init=v)
        assert w.copy_from(t).all()
        w.free_tensor(t)
