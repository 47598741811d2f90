"""Every L2 call of the pto package: compile, CompiledProgram, ChipWorker, register, benchmark;
error paths; numpy dtypes (bf16 as uint16); zero-copy passing of host arrays."""
import errno
import io
import os
import pickle
import subprocess

import numpy as np
import pytest

import pto
from conftest import BUILD, SRC

ADD_SCALAR = os.path.join(SRC, "examples", "runtime", "add_scalar.ptir")
ADD = os.path.join(SRC, "examples", "add.ptir")

COPY = """program copy_{dt}
kernel @k(%x: tensor[16,64] {dt}, out %y: tensor[16,64] {dt}) -> (tensor[16,64] {dt}) {{
  %t = tile.load(%x, [0, 0], [16, 64])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}}
orch @main(%x: tensor[16,64] {dt}, out %y: tensor[16,64] {dt}) -> (tensor[16,64] {dt}) {{
  call @k(%x, %y)
  return %y
}}
"""


@pytest.fixture(scope="module")
def prog():
    return pto.compile(ADD_SCALAR)


@pytest.fixture
def w():
    with pto.ChipWorker(pto.RunConfig(platform="sim", cores=2)) as w:
        yield w


def xs():
    return np.arange(16 * 64, dtype=np.float32).reshape(16, 64)


def test_compile_path_and_signature(prog):
    assert prog.entry == "main"
    assert [(p.name, p.dir, p.dtype, p.is_tensor) for p in prog.params] == [
        ("x", "in", "f32", True), ("y", "out", "f32", True), ("c", "in", "f32", False)]
    assert prog.params[2].bind == "runtime"
    assert not prog.is_host and prog.hid != 0 and "CompiledProgram" in repr(prog)


def test_compile_text_and_bindings(w):
    text = open(ADD_SCALAR).read().replace("%c: f32 = runtime", "%c: f32")
    fixed = pto.compile(text, c=1.5)
    rt = pto.compile(text, entry="main", c=pto.RUNTIME)
    assert fixed.params[2].bind == "literal" and fixed.params[2].value == 1.5
    assert rt.params[2].bind == "runtime"
    x, y = xs(), np.zeros((16, 64), np.float32)
    w.run(fixed, [x, y, None])  # a literal scalar may be left out (None)
    assert np.array_equal(y, x + 1.5)
    w.run(rt, {"x": x, "y": y, "c": 4.0})
    assert np.array_equal(y, x + 4.0)


def test_a_kernel_as_the_entry(w, tmp_path):
    """entry= naming a kernel runs it as one task through an orch made for it (add_block_entry):
    its parameters are the kernel's, its dynamic dims follow the arrays, and it is shown by the
    name given (program.entry is add_block)."""
    assert pto.compile(ADD).entry == "main"
    p = pto.compile(ADD, entry="add_block")
    assert p.entry == "add_block" and not p.is_host
    # Repeats are in-process hits, each of its own entry.
    assert pto.compile(ADD, entry="add_block").entry == "add_block"
    assert pto.compile(ADD).entry == "main"
    assert [(q.name, q.dir) for q in p.params] == [("a", "in"), ("b", "in"), ("c", "out")]
    a = np.arange(20 * 128, dtype=np.float32).reshape(20, 128)
    b, c = np.full_like(a, 0.5), np.zeros_like(a)
    w.run(p, {"a": a, "b": b, "c": c})
    assert np.array_equal(c, a + b)
    d = pto.compile(ADD, entry="@add_block", work_dir=tmp_path / "wd")
    assert d.entry == "add_block" and (tmp_path / "wd" / "orchestration" /
                                             "add_block_entry.cpp").exists()
    text = open(ADD).read().replace("orch @main", "kernel @unused_k() {\n}\norch @main")
    text = text[:text.index("orch @main")]
    with pytest.raises(pto.Error) as e:
        pto.compile(text)
    assert "name the entry with --entry NAME to run a kernel as one task" in str(e.value)
    assert "@add_block, @unused_k" in str(e.value)


def test_bindings_at_the_ends_of_u64_and_i64(w):
    """A u64 parameter specialised above 2^63-1 reads back as its value (not as a negative
    int64), so a call by dict, which fills it from the signature, launches."""
    ends = os.path.join(SRC, "tests", "programs", "int_literal_ends.ptir")
    p = pto.compile(ends, c=2**64 - 1, m=-2**63)
    assert [(q.name, q.value) for q in p.params if not q.is_tensor] == [("c", 2**64 - 1),
                                                                         ("m", -2**63)]
    x, s = np.ones((8, 16), np.uint64), np.zeros((8, 16), np.int64)
    y, z = np.zeros_like(x), np.zeros_like(s)
    w.run(p, {"x": x, "s": s, "y": y, "z": z})
    assert (y == 2**64 - 4).all() and (z == -2**63).all()
    with pytest.raises(pto.Error, match="from 0 to 18446744073709551615"):
        pto.compile(ends, c=2**64)


def test_compile_errors():
    with pytest.raises(pto.Error) as e:
        pto.compile("program p\norch @main( {\n")
    assert e.value.code == pto.INVALID_ARGUMENT and e.value.message
    with pytest.raises(pto.Error) as e:
        pto.compile(ADD_SCALAR, nosuch=3)
    assert "nosuch" in str(e.value)
    with pytest.raises(pto.Error):
        pto.compile("/nonexistent/x.ptir")
    with pytest.raises(pto.Error) as e:
        pto.compile(ADD_SCALAR, devices=2)
    assert "devices" in e.value.message


def test_from_dir(tmp_path, w):
    d = str(tmp_path / "work")
    subprocess.run([os.path.join(BUILD, "tools", "pto"), "compile", ADD_SCALAR, "-o", d],
                   check=True, capture_output=True)
    p = pto.CompiledProgram.from_dir(d)
    assert p.work_dir and os.path.samefile(p.work_dir, d)
    x, y = xs(), np.zeros((16, 64), np.float32)
    w.run(p, [x, y, 2.0])
    assert np.array_equal(y, x + 2.0)
    assert pto.compile(d).entry == "main"
    # A missing dir is what PyPTO raises, a FileNotFoundError, and a pto.Error still; it keeps
    # its type through pickling (a multiprocessing pool returns it).
    for rebuild in (True, False):
        with pytest.raises(FileNotFoundError) as e:
            pto.CompiledProgram.from_dir(str(tmp_path / "missing"), rebuild=rebuild)
        assert type(e.value) is pto.NotFoundError and isinstance(e.value, pto.Error)
        assert isinstance(e.value, RuntimeError) and e.value.errno == errno.ENOENT
        assert e.value.code == pto.NOT_FOUND and "missing" in e.value.message
        assert str(e.value) == "[NOT_FOUND] " + e.value.message
        p = pickle.loads(pickle.dumps(e.value))
        assert type(p) is pto.NotFoundError and p.code == pto.NOT_FOUND and str(p) == str(e.value)


def test_run_in_place_zero_copy(w, prog):
    x, y = xs(), np.zeros((16, 64), np.float32)
    w.run(prog, [x, y, 2.5])
    assert np.array_equal(y, x + 2.5)
    packer = w._packers[id(prog)]
    assert packer.args[0].host.data == x.ctypes.data  # passed without a copy
    assert packer.args[1].host.data == y.ctypes.data
    assert packer.args[0].readonly is False
    assert w.last_launch()["spans"]["chip.run"] > 0 and w.cores == 2


def test_non_contiguous_arrays(w, prog):
    big = np.zeros((16, 128), np.float32)
    x = np.asfortranarray(xs())             # not C-contiguous: copied in
    y = big[:, ::2]                         # 16x64 view with strides: written back in place
    assert not y.flags.c_contiguous and y.shape == (16, 64)
    w.run(prog, [x, y, 1.0])
    assert np.array_equal(y, xs() + 1.0) and np.array_equal(big[:, ::2], xs() + 1.0)
    assert not big[:, 1::2].any()
    ro = np.zeros((64, 16), np.float32).T
    ro.flags.writeable = False
    with pytest.raises(pto.Error):
        w.run(prog, [x, ro, 1.0])


def test_argument_errors(w, prog):
    x, y = xs(), np.zeros((16, 64), np.float32)
    for bad in ([x, y], [x, y, 1.0, 2.0]):
        with pytest.raises(pto.Error) as e:
            w.run(prog, bad)
        assert e.value.code == pto.INVALID_ARGUMENT
    with pytest.raises(pto.Error) as e:                         # wrong dtype
        w.run(prog, [x.astype(np.float64), y, 1.0])
    assert e.value.code == pto.INVALID_ARGUMENT
    assert "parameter 'x': expected dtype f32, got f64" in e.value.message
    with pytest.raises(pto.Error) as e:                         # wrong shape
        w.run(prog, [np.zeros((8, 64), np.float32), y, 1.0])
    assert e.value.code == pto.INVALID_ARGUMENT
    with pytest.raises(pto.Error):                              # no pto dtype
        w.run(prog, [x.astype(np.complex64), y, 1.0])
    with pytest.raises(pto.Error):                              # rank 6
        w.run(prog, [np.zeros((1, 1, 1, 1, 16, 64), np.float32), y, 1.0])
    with pytest.raises(pto.Error):                              # scalar for a tensor
        w.run(prog, [1.0, y, 1.0])
    with pytest.raises(pto.Error):                              # tensor for a scalar
        w.run(prog, [x, y, x])
    with pytest.raises(pto.Error):
        w.run(prog, {"x": x})
    ro = np.zeros((16, 64), np.float32)
    ro.flags.writeable = False
    with pytest.raises(pto.Error):                              # read-only out array
        w.run(prog, [x, ro, 1.0])


def test_device_tensors(w, prog):
    x = xs()
    before = w.committed_device_memory
    t = w.alloc_tensor((16, 64), np.float32, init=x)
    assert w.committed_device_memory == before + 4096            # simpler's ChipWorker name
    z = w.alloc_tensor([16, 64], "f32")
    assert t.shape == (16, 64) and t.dtype == np.float32 and t.nbytes == 4096
    assert t.pto_dtype == "f32" and t.data_ptr != 0
    assert np.array_equal(w.copy_from(t), x) and not w.copy_from(z).any()
    w.run(prog, [t, z, 1.0])                                    # resident in, resident out
    out = np.empty((16, 64), np.float32)
    assert w.copy_from(z, out=out) is out and np.array_equal(out, x + 1.0)
    w.copy_to(t, np.ones((16, 64), np.float32))
    assert (w.copy_from(t) == 1).all()
    with pytest.raises(pto.Error):
        w.copy_to(t, np.ones((16, 64), np.float64))             # wrong dtype
    with pytest.raises(pto.Error):
        w.copy_to(t, np.ones((16, 32), np.float32))             # wrong shape
    with pytest.raises(pto.Error):
        w.copy_from(t, out=np.empty((4, 4), np.float32))
    with pytest.raises(pto.Error):
        w.alloc_tensor((16, 64), np.float32, init=np.ones((16, 64), np.int32))
    with pytest.raises(pto.Error):
        w.alloc_tensor((16, 64), np.float32, init=np.ones((4, 64), np.float32))
    with pytest.raises(pto.Error):
        w.alloc_tensor((16, 64), np.complex64)
    with pytest.raises(pto.Error):
        w.alloc_tensor((2, 2, 2, 2, 2, 2), np.float32)          # rank 6
    w.free_tensor(t)
    w.free_tensor(t)                                            # a second free is a no-op
    assert w.committed_device_memory == before + 4096            # z is still live
    for call in (lambda: w.copy_from(t), lambda: w.copy_to(t, x),
                 lambda: w.run(prog, [t, z, 1.0])):
        with pytest.raises(pto.Error) as e:
            call()
        assert e.value.code in (pto.INVALID_ARGUMENT, pto.FAILED_PRECONDITION, pto.NOT_FOUND)


def test_register_handle(w, prog):
    x, y = xs(), np.zeros((16, 64), np.float32)
    h = w.register(prog)
    h(x, y, 3.0)
    assert np.array_equal(y, x + 3.0)
    h([x, y, 4.0])
    assert np.array_equal(y, x + 4.0)
    with w.register(prog) as h2:
        assert h2.callable_id == h.callable_id
        h2(x, y, 5.0)
    with pytest.raises(pto.Error) as e:                         # stale handle
        h2(x, y, 1.0)
    assert e.value.code == pto.FAILED_PRECONDITION
    h.unregister()
    with pytest.raises(pto.Error):
        h(x, y, 1.0)


def test_dump_args(w, prog, tmp_path):
    """set_dump_args writes the reference's args_dump.json: every argument at level 2, the
    scalar as its dtype; a bad level is refused naming the levels."""
    import json
    x, y = xs(), np.zeros((16, 64), np.float32)
    w.set_dump_args(2, tmp_path / "args_dump")
    w.run(prog, [x, y, 3.0])
    m = json.load(open(tmp_path / "args_dump" / "args_dump.json"))
    assert m["dump_args_level"] == 2 and m["total_args"] == len(m["args"]) > 0
    assert (tmp_path / "args_dump" / "args.bin").stat().st_size == sum(a["bin_size"] for a in m["args"])
    assert all(isinstance(a["func_id"], list) for a in m["args"])
    w.set_dump_args(0)
    with pytest.raises(pto.Error) as e:
        w.set_dump_args(4, tmp_path)
    assert "1 marked, 2 full, 3 hybrid" in str(e.value)


def test_strict_cores(prog):
    """The default worker has an AIC core and two AIV cores per CPU thread; strict_cores
    keeps the chip's model, the CPUs split a third AIC, a thread each."""
    n = len(os.sched_getaffinity(0))
    with pto.ChipWorker(pto.RunConfig()) as w:
        assert w.cores == 3 * n
        y = np.zeros((16, 64), np.float32)
        w.run(prog, [xs(), y, 2.0])
        assert np.array_equal(y, xs() + 2.0)
    with pto.ChipWorker(pto.RunConfig(strict_cores=True)) as w:
        aic = max(1, n // 3)
        assert w.cores == aic + max(1, n - aic)
        y = np.zeros((16, 64), np.float32)
        w.run(prog, [xs(), y, 2.0])
        assert np.array_equal(y, xs() + 2.0)


def test_threads_fewer_than_cores(prog):
    """RunConfig(aic_cores=, aiv_cores=, threads=): 2 + 2 cores on 2 threads (the decode bench's
    worker: both threads may run matmul tasks); threads past the cores, or with strict_cores,
    are refused with the numbers."""
    with pto.ChipWorker(pto.RunConfig(aic_cores=2, aiv_cores=2, threads=2)) as w:
        assert w.cores == 4
        y = np.zeros((16, 64), np.float32)
        w.run(prog, [xs(), y, 2.0])
        assert np.array_equal(y, xs() + 2.0)
    with pytest.raises(pto.Error) as e:
        pto.ChipWorker(pto.RunConfig(aic_cores=2, aiv_cores=2, threads=5))
    assert "threads 5 is out of range for 4 cores (2 AIC + 2 AIV)" in str(e.value)
    with pytest.raises(pto.Error) as e:
        pto.ChipWorker(pto.RunConfig(aic_cores=2, aiv_cores=2, threads=2, strict_cores=True))
    assert "threads 2 with strict_cores" in str(e.value)


def test_closed_worker(prog):
    w = pto.ChipWorker(pto.RunConfig(cores=1))
    t = w.alloc_tensor((16, 64), np.float32)
    h = w.register(prog)
    w.close()
    w.close()  # idempotent
    for call in (lambda: w.run(prog, [xs(), xs(), 1.0]), lambda: w.alloc_tensor(4, np.float32),
                 lambda: w.copy_from(t), lambda: w.register(prog)):
        with pytest.raises(pto.Error) as e:
            call()
        assert e.value.code == pto.FAILED_PRECONDITION
    with pytest.raises(pto.Error):
        h(xs(), np.zeros((16, 64), np.float32), 1.0)            # a handle of a closed worker


@pytest.mark.parametrize("dt,np_dt", [("f32", np.float32), ("f16", np.float16),
                                      ("bf16", np.uint16), ("f64", np.float64),
                                      ("i32", np.int32), ("i16", np.int16), ("i8", np.int8),
                                      ("u8", np.uint8)])
def test_dtypes(w, dt, np_dt):
    p = pto.compile(COPY.format(dt=dt))
    rng = np.random.default_rng(1)
    x = (rng.integers(0, 100, (16, 64)) if np.dtype(np_dt).kind in "iu"
         else rng.standard_normal((16, 64))).astype(np_dt)
    if dt == "bf16":  # bf16 bits: the high half of the f32 bits
        x = (rng.standard_normal((16, 64)).astype(np.float32).view(np.uint32) >> 16).astype(
            np.uint16)
    y = np.zeros_like(x)
    w.run(p, [x, y])
    assert np.array_equal(x, y)
    t = w.alloc_tensor((16, 64), dt, init=x)
    assert np.array_equal(w.copy_from(t), x) and w.copy_from(t).dtype == np.dtype(np_dt)
    if dt == "bf16":
        with pytest.raises(pto.Error):
            w.run(p, [x.astype(np.float32), y])                 # float32 is not bf16
    if dt == "f16":
        with pytest.raises(pto.Error):
            w.run(p, [x.view(np.uint16), y.view(np.uint16)])   # uint16 is bf16's, not f16's


def test_benchmark(w, prog):
    x, y = xs(), np.zeros((16, 64), np.float32)
    st = pto.benchmark(prog, [x, y, 1.0], rounds=12, warmup=2, worker=w)
    assert st.rounds == len(st.invocations) == len(st.samples) == 12 and st.warmup == 2
    assert st.samples == st.device_wall_us and len(st.host_wall_us) == 12
    assert 0 < st.device_wall_us_min <= st.device_wall_us_median
    assert 0 < st.host_wall_us_min <= st.host_wall_us_median
    assert st.host_wall_us_mean > 0 and st.effective_us_median >= 0
    assert not st.all_zero_device and st.ntasks == 1 and st.ncores == 2
    assert set(st.round_samples[0]) == {"device_wall_us", "host_wall_us", "effective_us"}
    assert np.array_equal(y, x + 1.0)
    f = io.StringIO()
    st.print_mean_tree(spread="both", file=f)
    assert f.getvalue().startswith("chip.run") and "device_wall [dev]" in f.getvalue()
    f = io.StringIO()
    st.print_tree(launch=0, file=f)
    assert "chip.run" in f.getvalue() and "±" not in f.getvalue()
    assert "device wall" in st.summary() and "median" in st.summary()
    with pytest.raises(pto.Error):
        st.print_mean_tree(spread="bogus")
    with pytest.raises(pto.Error):
        st.print_tree(launch=99)
    # without a worker: one is opened with the config and closed
    st2 = pto.benchmark(prog, [x, y, 2.0], rounds=3, warmup=0, config=pto.RunConfig(cores=1))
    assert st2.rounds == 3 and st2.ncores == 2  # one AIV core asked for, plus the AIC core every worker has
    t = w.alloc_tensor((16, 64), np.float32, init=x)           # the worker of a device tensor
    st3 = pto.benchmark(prog, [t, y, 3.0], rounds=2, warmup=1)
    assert st3.ncores == 2 and np.array_equal(y, x + 3.0)
    with pytest.raises(pto.Error):
        pto.benchmark(prog, [x, y, 1.0], rounds=0)
    with pytest.raises(pto.Error):
        pto.benchmark(prog, [x, y], rounds=1)


def test_launch_error(w):
    p = pto.compile(ADD)  # M dynamic: a and c of different M is a dim mismatch
    with pytest.raises(pto.Error) as e:
        w.run(p, [np.zeros((64, 128), np.float32), np.zeros((32, 128), np.float32),
                  np.zeros((64, 128), np.float32)])
    assert e.value.code in (pto.INVALID_ARGUMENT, pto.LAUNCH)
