"""PyPTO users' scripts against pto, round 20: the exception types PyPTO raises (a refused
argument is a ValueError or TypeError, a closed worker or a failed run a RuntimeError), the
idempotent free_tensor, PyPTO's explicit_dispatch example (its aicpu_dlopen_count included), the
CompiledProgram members its docs list, PyPTO's keyword names, and Ctrl-C during a launch (the
KeyboardInterrupt reaches the script, the worker closes, no chip process is left). Only the
import and torch -> numpy are changed from PyPTO's code."""
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pto
from conftest import SRC

ADD = os.path.join(SRC, "examples", "add.ptir")  # add(a, b, out c): [M,128] f32
ROWS, COLS = 128, 128

# n rounds of c = a + b: a launch as long as the caller wants
SPIN = """program spin
dynamic M, R
kernel @add_block(%a: tensor[R,128] f32, %b: tensor[R,128] f32,
                  out %c: tensor[R,128] f32) -> (tensor[R,128] f32) {
  %ta = tile.load(%a, [0, 0], [32, 128], valid=[R, 128])
  %tb = tile.load(%b, [0, 0], [32, 128], valid=[R, 128])
  %tc = tile.add(%ta, %tb)
  %c1 = tile.store(%tc, [0, 0], %c)
  return %c1
}
orch @main(%a: tensor[M,128] f32, %b: tensor[M,128] f32,
           out %c: tensor[M,128] f32, %n: i32 = runtime) -> (tensor[M,128] f32) {
  %nblk = (M + 31) / 32
  for %k in range(0, index(%n)) {
    for %i in range(0, %nblk) {
      %row0 = %i * 32
      %as = tensor.slice(%a, [%row0, 0], [32, 128])
      %bs = tensor.slice(%b, [%row0, 0], [32, 128])
      %cs = tensor.slice(%c, [%row0, 0], [32, 128])
      call @add_block(%as, %bs, %cs)
    }
  }
  return %c
}
"""


@pytest.fixture(scope="module")
def compiled():
    return pto.compile(ADD)


def ones():
    return np.ones((ROWS, COLS), np.float32)


def test_refused_arguments_are_value_and_type_errors(compiled):
    # PyPTO raises TypeError for an argument of the wrong dtype or shape and ValueError for a
    # bad value: pto's refusals are both, and still pto.Error with the C code and message
    a, out = ones(), np.zeros((ROWS, COLS), np.float32)
    with pto.ChipWorker(pto.RunConfig()) as w:
        with pytest.raises(TypeError, match="parameter 'a': expected dtype f32, got f64") as e:
            w.run(compiled, a.astype(np.float64), a, out)
        assert isinstance(e.value, pto.Error) and e.value.code == pto.INVALID_ARGUMENT
        assert isinstance(e.value, (ValueError, RuntimeError, pto.ArgumentError))
        with pytest.raises(TypeError, match=r"expected shape \[M,128\], got \[128,64\]"):
            w.run(compiled, np.ones((128, 64), np.float32), a, out)
        with pytest.raises(ValueError, match=r"takes 3 arguments \(a, b, c\), got 2"):
            w.run(compiled, a, a)
        with pytest.raises(ValueError, match="nbytes = 0 is out of range"):
            w.malloc(0)
        with pytest.raises(ValueError, match="worker_id = 1 is out of range"):
            w.malloc(64, worker_id=1)
        with pytest.raises(ValueError, match="level is 2"):
            pto.ChipWorker(pto.RunConfig(), level=3)
        with pytest.raises(TypeError, match="shape is a tuple of ints .*not NoneType"):
            w.alloc_tensor(None, np.float32)
        with pytest.raises(TypeError, match="shape is a tuple of ints .*not str"):
            w.alloc_tensor("16", np.float32)
        for shape in ((4, 8), [4, 8], np.array([4, 8]), (np.int64(4), 8)):  # shape spellings
            for dt in (np.float32, "float32", "f32", np.dtype("float32")):  # dtype spellings
                t = w.alloc_tensor(shape, dt)
                assert t.shape == (4, 8) and t.dtype == np.float32 and t.nbytes == 128
        assert w.alloc_tensor(8, "bfloat16").pto_dtype == w.alloc_tensor(8, "bf16").pto_dtype
        with pytest.raises(TypeError, match="init has dtype float64"):
            w.alloc_tensor((ROWS, COLS), np.float32, init=a.astype(np.float64))
        h = w.register(compiled)
        h.unregister()
        with pytest.raises(RuntimeError, match="unregistered") as e:  # PyPTO: RuntimeError
            h(a, a, out)
        assert not isinstance(e.value, ValueError) and e.value.code == pto.FAILED_PRECONDITION
    with pytest.raises(RuntimeError, match="the worker is closed"):
        w.run(compiled, a, a, out)
    with pytest.raises(RuntimeError, match=r"not initialized \(auto_init=False\): call init"):
        pto.ChipWorker(pto.RunConfig(), auto_init=False).alloc_tensor(4, np.float32)
    with pytest.raises(pto.ArgumentError, match="undeclared dynamic symbol 'M'"):
        pto.compile("program p\norch @main(%a: tensor[M,128] f32) { return }")
    # an error survives pickling (a multiprocessing pool returns it) with its code and message
    e = pickle.loads(pickle.dumps(pto.Error(pto.INVALID_ARGUMENT, "bad")))
    assert type(e) is pto.ArgumentError and e.code == pto.INVALID_ARGUMENT
    assert e.message == "bad" and str(e) == "[INVALID_ARGUMENT] bad"
    e = pickle.loads(pickle.dumps(pto.Error(pto.LAUNCH, "boom")))
    assert type(e) is pto.Error and e.code == pto.LAUNCH


def test_free_tensor_is_idempotent_and_a_no_op_after_close(compiled):
    # PyPTO's Worker.free_tensor: a second free, or one after close() (which reclaimed every
    # tensor), does nothing; data_ptr stays readable, and a freed tensor is refused where used
    a, out = ones(), np.zeros((ROWS, COLS), np.float32)
    w = pto.ChipWorker(pto.RunConfig())
    t = w.alloc_tensor((ROWS, COLS), np.float32, init=a, worker_id=0)
    addr = t.data_ptr
    w.free_tensor(t)
    w.free_tensor(t)
    assert t.data_ptr == addr
    with pytest.raises(ValueError, match="the device tensor is stale"):
        w.run(compiled, t, a, out)
    with pytest.raises(ValueError, match="is not the start of an allocation"):
        w.copy_from(out.ctypes.data, t.data_ptr, t.nbytes)
    t2 = w.alloc_tensor((ROWS, COLS), np.float32)
    with pytest.raises(ValueError, match="worker_id = 1"):
        w.alloc_tensor((ROWS, COLS), np.float32, worker_id=1)
    other = pto.ChipWorker(pto.RunConfig())
    with pytest.raises(pto.Error):                              # not this worker's tensor
        other.free_tensor(t2)
    other.close()
    w.close()
    w.free_tensor(t2)                                           # close freed it
    with pytest.raises(RuntimeError, match="the worker is closed"):
        w.copy_from(t2)


def test_explicit_dispatch_example(compiled):
    # PyPTO's examples/runtime/explicit_dispatch.py: modes A, B and C
    from pto import ChipWorker, RunConfig

    def mode_a_inference_service(worker):
        handles = {"add": worker.register(compiled)}
        a = np.full((128, 128), 2.0, dtype=np.float32)
        b = np.full((128, 128), 3.0, dtype=np.float32)
        out = np.zeros((128, 128), dtype=np.float32)
        handles["add"](a, b, out)
        assert np.allclose(out, a + b, rtol=1e-5, atol=1e-5)

    def mode_b_training_loop(worker):
        host_weight = np.full((128, 128), 0.5, dtype=np.float32)
        w_dev = worker.alloc_tensor(host_weight.shape, host_weight.dtype, init=host_weight)
        h = worker.register(compiled)
        for step in range(5):
            x = np.full((128, 128), float(step), dtype=np.float32)
            out = np.zeros((128, 128), dtype=np.float32)
            h(x, w_dev, out)
            assert np.allclose(out, x + host_weight, rtol=1e-5, atol=1e-5), f"step {step}"
        worker.free_tensor(w_dev)

    def mode_c_register_dispatch_overhead():
        worker = ChipWorker(config=RunConfig())
        try:
            before = worker.aicpu_dlopen_count
            h = worker.register(compiled)
            after_register = worker.aicpu_dlopen_count
            a = np.full((128, 128), 1.0, dtype=np.float32)
            b = np.full((128, 128), 2.0, dtype=np.float32)
            out = np.zeros((128, 128), dtype=np.float32)
            for _ in range(20):
                h(a, b, out)
            after_runs = worker.aicpu_dlopen_count
            assert after_register == before + 1, (before, after_register)
            assert after_runs == after_register, (after_register, after_runs)
            worker.register(compiled)                           # the same program: loaded once
            other = pto.compile(SPIN)
            worker.run(other, a, b, out, 1)                     # a new one, loaded by its run
            assert worker.host_dlopen_count == worker.aicpu_dlopen_count == before + 2
        finally:
            worker.close()

    worker = ChipWorker(config=RunConfig())
    try:
        mode_a_inference_service(worker)
        mode_b_training_loop(worker)
    finally:
        worker.close()
    mode_c_register_dispatch_overhead()


def test_compiled_program_members(compiled, tmp_path):
    # the CompiledProgram members PyPTO's "Running on Device" page lists
    assert compiled.param_names == ["a", "b", "c"]
    assert compiled.output_indices == [2]                       # the pure out parameters
    assert compiled.has_return is False and compiled.program is None
    assert compiled.runtime_name == pto.ChipWorker(pto.RunConfig(), auto_init=False).runtime
    compiled.load()                                             # loaded already: a no-op
    p = pto.compile(ADD, work_dir=tmp_path / "wd")
    assert pto.CompiledProgram.from_dir(p.output_dir).param_names == ["a", "b", "c"]


def _child(code: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def _wait_line(p: subprocess.Popen, prefix: str) -> str:
    for line in p.stdout:                    # bounded: the child exits, and communicate() has
        if line.startswith(prefix):          # a deadline below
            return line
    out, _ = p.communicate(timeout=120)
    pytest.fail(f"the child ended before {prefix!r}:\n{out}")


def _ctrl_c_child(body: str) -> str:
    return textwrap.dedent(f"""
    import os, sys, time, numpy as np, pto
    spin = pto.compile({SPIN!r})
    a = np.ones((256, 128), np.float32); c = np.zeros_like(a)
    """) + textwrap.dedent(body)


def test_ctrl_c_during_a_launch_closes_the_worker():
    # A KeyboardInterrupt cannot stop a launch midway (the call is in C): it is raised when the
    # launch has ended, the `with` block closes the worker, and a new worker runs after it.
    # The signal may come during the launch or after it: the script waits for it either way.
    p = _child(_ctrl_c_child("""
    try:
        with pto.ChipWorker(pto.RunConfig(cores=2)) as w:
            print("started", flush=True)
            w.run(spin, a, a, c, 30000)
            h = w.submit(spin, a, a, c, 30000)
            h.result()
            for _ in range(600):
                time.sleep(0.1)
        print("no interrupt")
    except KeyboardInterrupt:
        # a launch runs whole or not at all (the signal may come before it starts)
        whole = bool((c == 0).all() or (c == 2).all())
        print("interrupted, open:", w.initialized, "whole:", whole, flush=True)
    c[...] = 0
    with pto.ChipWorker(pto.RunConfig(cores=2)) as w2:
        w2.run(spin, a, a, c, 1)
    print("after:", bool((c == 2).all()))
    """))
    try:
        _wait_line(p, "started")
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=300)
    finally:
        p.kill()
    assert p.returncode == 0, out
    assert "interrupted, open: False whole: True" in out and "after: True" in out, out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("caught", [True, False])
def test_ctrl_c_to_the_process_group_during_l3_runs(caught):
    # A terminal's Ctrl-C signals the whole process group, the chip processes too. Caught: the
    # worker closes and its chips end, and a new worker runs; not caught: the script dies with
    # the KeyboardInterrupt and its chips end with it (a worker's shared memory is anonymous:
    # there is no /dev/shm file to leak).
    body = """
    mesh = pto.compile(os.path.join({src!r}, "examples", "allreduce_mesh.ptir"), devices=2)
    x = np.ones((64, 64), np.float32); y = np.zeros_like(x)
    me = os.getpid()
    def children():
        out = set()
        for d in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{{d}}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[2] == str(me):
                        out.add(d)
            except OSError:
                pass
        return out
    def loop():
        before = children()
        with pto.DistributedWorker(mesh) as rt:
            print("chips", *(children() - before), flush=True)
            for _ in range(10 ** 9):
                rt(x, y)
    if {caught}:
        try:
            loop()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        with pto.DistributedWorker(mesh) as rt:
            rt(x, y)
        print("after:", float(y[0, 0]))
    else:
        loop()
    """.format(src=SRC, caught=caught)
    p = _child(_ctrl_c_child(body), start_new_session=True)
    try:
        chips = [int(c) for c in _wait_line(p, "chips").split()[1:]]
        assert len(chips) == 2
        os.killpg(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=300)
    finally:
        p.kill()
    if caught:
        assert p.returncode == 0 and "interrupted" in out and "after: 2.0" in out, out
    else:
        assert p.returncode in (-signal.SIGINT, 130) and "KeyboardInterrupt" in out, out
    deadline = time.monotonic() + 60
    while any(_alive(c) for c in chips) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in chips), chips


def test_format_tree_value_fn(compiled):
    # PyPTO's TraceInvocation.format_tree(value_fn=): the same tree, value_fn's columns
    a, out = ones(), np.zeros((ROWS, COLS), np.float32)
    st = pto.benchmark(compiled, [a, a, out], rounds=2, warmup=1)
    for inv in (st.invocations[0], st.mean_invocation()):
        plain = inv.format_tree().splitlines()
        cols = inv.format_tree(us=True, value_fn=lambda s: [s.depth, f"{s.dur}ns"]).splitlines()
        assert len(cols) == len(plain) == len(inv.spans) and "[dev]" in "".join(cols)
        assert [ln.rsplit(None, 1)[0].rstrip() for ln in plain] == \
            [ln.rsplit(None, 2)[0].rstrip() for ln in cols]
        assert cols[0].split() == ["chip.run", "0", f"{inv.root().dur}ns"]
    # PyPTO's four per_round metrics; union, the L3 cross-rank window, is [] at L2
    assert st.per_round("union") == [] and len(st.per_round("effective")) == 2
    with pytest.raises(ValueError, match="device, host, effective or union"):
        st.per_round("wall")


def _stand_in_torch():
    """A stand-in for the few torch members pto reads (torch is not installed here): a
    torch.dtype whose str is "torch.NAME", and a CPU Tensor over a numpy array (numpy(),
    detach(), view(dtype), device)."""
    import types
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return f"torch.{self.name}"

    class Tensor:
        def __init__(self, arr, dt, device="cpu"):
            self._a, self.dtype, self.device = arr, dt, device

        def detach(self):
            return self

        def numpy(self):
            return self._a

        def view(self, dt):  # a bf16 tensor holds its bits as int16 here
            bf16 = "bfloat16" in (dt.name, self.dtype.name)
            return Tensor(self._a if bf16 else self._a.view(np.dtype(dt.name)), dt, self.device)

    for cls in (dtype, Tensor):
        cls.__module__ = "torch"
    for name in ("float32", "float16", "bfloat16", "int16", "int32"):
        setattr(torch, name, dtype(name))
    torch.Tensor = Tensor
    return torch


def test_torch_tensors_and_dtypes(compiled, monkeypatch):
    # PyPTO's scripts pass torch tensors and dtypes: a CPU tensor is passed as the numpy array
    # over its memory (an out parameter is written into it), a torch.dtype names its dtype
    torch = _stand_in_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    a = torch.Tensor(np.full((ROWS, COLS), 2, np.float32), torch.float32)
    out = torch.Tensor(np.zeros((ROWS, COLS), np.float32), torch.float32)
    with pto.ChipWorker(pto.RunConfig()) as w:
        t = w.alloc_tensor((ROWS, COLS), torch.float32, init=a)
        assert t.dtype == np.float32
        w.run(compiled, a, t, out)
        assert (out.numpy() == 4).all()
        w.register(compiled)(a, a, out)
        host = torch.Tensor(np.zeros((ROWS, COLS), np.float32), torch.float32)
        w.copy_from(host, t.data_ptr, t.nbytes)
        assert (host.numpy() == 2).all() and (w.copy_from(t, host).numpy() == 2).all()
        bits = np.array([0x3F80, 0x4000, 0xC040], np.uint16)            # 1.0, 2.0, -3.0
        b = w.alloc_tensor(3, torch.bfloat16,
                           init=torch.Tensor(bits.view(np.int16), torch.int16).view(
                               torch.bfloat16))
        assert b.pto_dtype == "bf16" and (w.copy_from(b) == bits).all()
        with pytest.raises(ValueError, match=r"a torch tensor on cuda:0: .*t\.cpu\(\)"):
            w.run(compiled, torch.Tensor(a.numpy(), torch.float32, "cuda:0"), a, out)
        with pytest.raises(TypeError, match="expected dtype f32, got f16"):
            w.run(compiled, torch.Tensor(np.ones((ROWS, COLS), np.float16), torch.float16),
                  a, out)
    out.numpy()[...] = 0

    def golden(x, y, z):
        assert isinstance(z, np.ndarray)
        z[...] = x + y
    r = pto.run(compiled, a, a, out, golden=golden)
    assert r.passed, r.error
    assert (out.numpy() == 4).all()


def test_worker_base_class(compiled):
    # PyPTO's Worker: the base library code type-hints against, for either level
    from pto import ChipWorker, DistributedWorker, RunConfig, Worker

    def serve(w: Worker, *args):
        w.run(compiled, *args)

    a, out = ones(), np.zeros((ROWS, COLS), np.float32)
    with ChipWorker(config=RunConfig()) as w:
        assert isinstance(w, Worker)
        serve(w, a, a, out)
    assert (out == 2).all() and issubclass(DistributedWorker, Worker)
    with pytest.raises(TypeError):
        Worker()                                                # abstract, as PyPTO's


def test_ctrl_c_as_close_returns_leaves_a_closed_worker(monkeypatch):
    # A second Ctrl-C while a `with` block closes the worker can land as the C close returns:
    # the worker is closed then, and neither close() nor its collection closes it again (a
    # second close of the freed worker)
    calls = []

    def interrupted(real):
        def close(ptr):
            calls.append(ptr)
            real(ptr)
            raise KeyboardInterrupt
        return close

    monkeypatch.setattr(pto._c, "pto_worker_close", interrupted(pto._c.pto_worker_close))
    w = pto.ChipWorker(pto.RunConfig(cores=1))
    with pytest.raises(KeyboardInterrupt):
        with w:
            pass
    assert not w.initialized
    w.close()
    del w
    assert len(calls) == 1
    monkeypatch.setattr(pto._c, "pto_dist_worker_close",
                        interrupted(pto._c.pto_dist_worker_close))
    rt = pto.DistributedWorker(devices=1, chips="threads")
    with pytest.raises(KeyboardInterrupt):
        rt.close()
    rt.close()
    del rt
    assert len(calls) == 2


def test_run_config_positional_fields_are_pyptos():
    # PyPTO's RunConfig(platform, device_id, rtol, atol, ...): its first four, in its order
    cfg = pto.RunConfig("a2a3sim", 0, 1e-3, 1e-4)
    assert (cfg.platform, cfg.device_id, cfg.rtol, cfg.atol) == ("a2a3sim", 0, 1e-3, 1e-4)
    assert cfg.cores == 0


def test_nested_with_of_the_same_binding_is_refused(compiled):
    # PyPTO's ChipWorker.__enter__ refuses a second worker of the same (level, platform,
    # device_id, runtime) in an enclosing `with` block (a ValueError); another device is fine
    from pto import ChipWorker, RunConfig
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as w:
        inner = ChipWorker(config=RunConfig(platform="a2a3sim"))
        with pytest.raises(ValueError, match="is open in an enclosing `with` block"):
            with inner:
                pass
        inner.close()
        with ChipWorker(config=RunConfig(platform="a2a3sim", device_id=1)) as w1:
            assert ChipWorker.current(device_id=1) is w1
        with pytest.raises(ValueError):                         # the same worker again: its
            with w:                                             # exit would close it
                pass
        assert w.initialized and ChipWorker.current() is w


def test_ctypes_scalars():
    # PyPTO's scalar arguments may be ctypes values (compiled(x, y, ctypes.c_float(2.5))); one
    # changed in place between calls is read again, not taken from the previous call
    import ctypes
    prog = pto.compile(os.path.join(SRC, "examples", "runtime", "add_scalar.ptir"))  # x, y, c
    x, y = np.ones((16, 64), np.float32), np.zeros((16, 64), np.float32)
    c = ctypes.c_float(2.5)
    with pto.ChipWorker(pto.RunConfig(cores=1)) as w:
        h = w.register(prog)
        h(x, y, c)
        assert (y == 3.5).all()
        c.value = -1.0
        h(x, y, c)
        assert (y == 0).all()
        w.run(prog, x, y, ctypes.c_double(1.0))
        assert (y == 2).all()
        with pytest.raises(TypeError, match=r"argument 2 \('c'\) is a scalar, got NoneType"):
            w.run(prog, x, y, ctypes.c_void_p(None))


def test_distributed_config(tmp_path):
    # PyPTO's RunConfig(distributed_config=DistributedConfig(device_ids=[...])): the device set
    # of pto.run's compile of a host program and of a DistributedWorker (checked against the
    # programs'); its own checks are PyPTO's ValueErrors
    from pto import DistributedConfig, DistributedWorker, RunConfig
    mesh = os.path.join(SRC, "examples", "allreduce_mesh.ptir")      # x, out y [64, 64]
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    r = pto.run(mesh, x, y, config=cfg)
    assert r.passed, r.error
    assert r.compiled.device_ids == (0, 1) and (y == 2).all()
    with DistributedWorker(config=cfg, chips="threads") as rt:
        assert rt.devices == 2
        rt.run(r.compiled, x, y)
    with pytest.raises(ValueError, match=r"distributed_config.device_ids is \[0\], the worker's "
                       r"devices are \[0, 1\]"):
        DistributedWorker(r.compiled, RunConfig(distributed_config=DistributedConfig()),
                          chips="threads")
    with pytest.raises(ValueError, match="must be distinct"):
        DistributedConfig(device_ids=[0, 0])
    with pytest.raises(ValueError, match="devices is empty"):
        DistributedConfig(device_ids=[])
    with pytest.raises(ValueError, match="no Python sub-workers"):
        DistributedConfig(num_sub_workers=2)


def test_run_with_arguments_by_name_and_a_golden(compiled):
    # pto.run(prog, {name: arg}, golden=): golden gets the copies in parameter order and the
    # outputs are compared (the dict's keys were iterated instead)
    a, c = ones(), np.zeros((ROWS, COLS), np.float32)

    def golden(x, y, z):
        z[...] = x + y
    r = pto.run(compiled, {"c": c, "b": a, "a": a}, golden=golden)
    assert r.passed, r.error
    assert (c == 2).all()

    def wrong(x, y, z):
        z[...] = x - y
    r = pto.run(compiled, {"a": a, "b": a, "c": c}, golden=wrong)
    assert not r.passed and "output 'c'" in r.error
    r = pto.run(compiled, {"a": a, "c": c, "d": a})
    assert not r.passed and "missing arguments ['b'], unknown ['d']" in r.error
