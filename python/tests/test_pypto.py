"""PyPTO's pypto.runtime user code against pto: the snippets of PyPTO's "Running on Device" and
"Host performance" pages with only `from pypto.runtime import ...` -> `from pto import ...` and
torch -> numpy changed (the @pl.jit kernel is examples/add.ptir), plus the Python-facing
errors. L3 snippets are in test_pypto_l3.py (forking chips wants a process without threads)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pto
from conftest import SRC

ADD = os.path.join(SRC, "examples", "add.ptir")  # add(a, b, out c): [M,128] f32
ROWS, COLS = 128, 128
PLATFORM = "a2a3sim"


@pytest.fixture(scope="module")
def compiled():
    return pto.compile(ADD)


def test_keep_a_weight_on_the_device(compiled):
    from pto import ChipWorker, RunConfig
    rng = np.random.default_rng(0)
    A = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    B = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    cfg = RunConfig(platform=PLATFORM)
    with ChipWorker(config=cfg) as w:
        resident = w.alloc_tensor((ROWS, COLS), np.float32, init=B)  # stays on device
        for _ in range(3):                                           # three "batches"
            out = np.zeros((ROWS, COLS), dtype=np.float32)
            w.run(compiled, A, resident, out)
            np.testing.assert_allclose(out, A + B, rtol=1e-4, atol=1e-4)
        w.free_tensor(resident)


def test_explicit_dispatch(compiled):
    from pto import ChipWorker, RunConfig
    A = np.full((ROWS, COLS), 2.0, np.float32)
    B = np.full((ROWS, COLS), 3.0, np.float32)
    worker = ChipWorker(config=RunConfig(platform=PLATFORM))
    try:
        handle = worker.register(compiled)               # eager registration
        out = np.zeros((ROWS, COLS), dtype=np.float32)
        for _ in range(3):                               # hot loop, no cid lookup
            handle(A, B, out)
        np.testing.assert_allclose(out, A + B, rtol=1e-4, atol=1e-4)
        assert handle.cid == handle.callable_id and handle.compiled is compiled
    finally:
        worker.close()


def test_device_tensor_read_back_by_address(compiled):
    from pto import ChipWorker, RunConfig
    cfg = RunConfig(platform=PLATFORM, device_id=0)
    host_weight = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    with ChipWorker(config=cfg) as w:
        weight = w.alloc_tensor((ROWS, COLS), np.float32, init=host_weight)  # uploaded once
        t = w.alloc_tensor((ROWS, COLS), np.float32)
        for batch in (np.ones((ROWS, COLS), np.float32), np.full((ROWS, COLS), 2, np.float32)):
            compiled(batch, weight, t)                   # not re-uploaded; t stays resident
            host = np.empty((ROWS, COLS), np.float32)
            w.copy_from(host.ctypes.data, t.data_ptr, t.nbytes)
            assert np.array_equal(host, batch + host_weight)
        assert weight.shape == (ROWS, COLS) and weight.dtype == np.float32
        assert weight.nbytes == ROWS * COLS * 4
        w.free_tensor(weight)
        # malloc / copy_to / copy_from / free with raw addresses and byte counts
        ptr = w.malloc(64)
        src = np.arange(16, dtype=np.float32)
        w.copy_to(ptr, src.ctypes.data, src.nbytes)
        back = np.zeros(16, np.float32)
        w.copy_from(back.ctypes.data, ptr, back.nbytes)
        assert np.array_equal(back, src)
        w.free(ptr)
        with pytest.raises(pto.Error, match="not an address malloc returned"):
            w.free(ptr)


def test_compiled_call_and_run(compiled):
    a = np.ones((ROWS, COLS), np.float32)
    c = np.zeros_like(a)
    compiled(a, a, c)                                    # PyPTO's compiled(*args)
    assert (c == 2).all()
    r = pto.run(ADD, a, a, c, config=pto.RunConfig(platform=PLATFORM))
    assert r.passed and r.error is None and "PASS" in str(r)

    def golden(a, b, c):
        c[...] = a + b
    assert pto.run(compiled, a, a, c, golden=golden).passed

    def wrong(a, b, c):
        c[...] = a - b
    r = pto.run(compiled, a, a, c, golden=wrong)
    assert not r.passed and "output 'c'" in r.error
    r = pto.run(compiled, a, a)                          # a failure is in the result
    assert not r.passed and "takes 3 arguments" in r.error

    # golden's own exception is the caller's bug: it propagates with its traceback, also a
    # pto.Error, and the program does not run
    def broken(a, b, c):
        c[...] = a[:, :3] + b                            # shapes do not broadcast
    c[...] = 7
    with pytest.raises(ValueError) as e:
        pto.run(compiled, a, a, c, golden=broken)
    assert e.traceback[-1].name == "broken" and (c == 7).all()

    def golden_pto_error(a, b, c):
        pto.compile("this is not PTIR")
    with pytest.raises(pto.Error) as e:
        pto.run(compiled, a, a, c, golden=golden_pto_error)
    assert any(t.name == "golden_pto_error" for t in e.traceback) and (c == 7).all()


def test_benchmark(compiled):
    from pto import benchmark
    a = b = np.ones((ROWS, COLS), np.float32)
    c = np.zeros_like(a)
    stats = benchmark(compiled, [a, b, c], rounds=10, warmup=3, platform=PLATFORM, device_id=0)
    print(stats.device_wall_us_median, stats.device_wall_us_min)
    assert len(stats.device_wall_us) == len(stats.host_wall_us) == 10
    assert stats.samples == stats.device_wall_us == stats.per_round("device")
    assert stats.device_wall_us_min == min(stats.device_wall_us) == stats.device_us_min
    assert stats.device_wall_us_min <= stats.device_wall_us_median <= stats.device_wall_us_max
    assert stats.device_us_mean > 0 and stats.device_us_stdev >= 0
    assert stats.device_wall_us_stdev == pytest.approx(stats.device_us_stdev)
    inv = stats.invocations[0]
    assert inv.device_wall_us() == inv.device_wall_us == stats.device_wall_us[0]
    assert inv.host_wall_us() > 0 and inv.effective_us() >= 0
    assert "chip.run" in inv.format_tree()
    assert stats.format_mean_tree().startswith("chip.run")
    assert stats.per_rank() == {} and stats.per_dispatch() == {} and stats.dispatch_groups() == {}
    assert (c == 2).all()


def test_submit_with_completions(compiled):
    a = np.ones((ROWS, COLS), np.float32)
    outs = [np.zeros_like(a) for _ in range(3)]
    with pto.ChipWorker(pto.RunConfig(cores=2)) as w:
        hs = [w.submit(compiled, a * k, a, outs[k]) for k in range(3)]
        for k, h in enumerate(hs):
            h.result(timeout=60)
            assert h.done and (outs[k] == k + 1).all()
        # non-contiguous arrays: each launch keeps its own contiguous copies until it ends
        big = [np.ones((ROWS, 2 * COLS), np.float32) * (k + 1) for k in range(3)]
        outs = [np.zeros((ROWS, 2 * COLS), np.float32) for _ in range(3)]
        hs = [w.submit(compiled, big[k][:, ::2], a, outs[k][:, 1::2]) for k in range(3)]
        for k, h in enumerate(hs):
            h.wait()
            assert (outs[k][:, 1::2] == k + 2).all() and not outs[k][:, ::2].any()
        bad = w.register(compiled).submit(a, a, np.zeros((ROWS, 64), np.float32))
        with pytest.raises(pto.Error):
            bad.wait()


def test_swimlane_export(compiled, tmp_path):
    a = np.ones((ROWS, COLS), np.float32)
    with pto.ChipWorker(pto.RunConfig(platform=PLATFORM, enable_chip_swimlane=4)) as w:
        w.run(compiled, a, a, np.zeros_like(a))
        w.export_swimlane(tmp_path / "trace.json")
        d = w.export_swimlane_records(tmp_path / "dfx_outputs")
    import json
    trace = json.load(open(tmp_path / "trace.json"))
    assert any(e.get("cat") == "task" for e in trace["traceEvents"])
    rec = json.load(open(os.path.join(d, "chip_swimlane_records.json")))
    assert rec["aicore_tasks"] and os.path.exists(os.path.join(d, "deps.json"))
    # level 4 asked (the reference's bare flag): level 3, the highest pto records, with each
    # core's scheduler phases, one complete per task
    assert rec["chip_swimlane_level"] == 3
    phases = [p for lane in rec["aicpu_scheduler_phases"] for p in lane]
    assert sum(p["kind"] == "complete" for p in phases) == len(rec["aicore_tasks"])
    with pto.ChipWorker(pto.RunConfig(platform=PLATFORM, enable_chip_swimlane=2)) as w:
        w.run(compiled, a, a, np.zeros_like(a))
        rec2 = json.load(open(os.path.join(w.export_swimlane_records(tmp_path / "l2"),
                                           "chip_swimlane_records.json")))
    assert rec2["chip_swimlane_level"] == 2 and "aicpu_scheduler_phases" not in rec2
    out_dir = tmp_path / "kept"                          # PyPTO's run with a swimlane
    r = pto.run(ADD, a, a, np.zeros_like(a), config=pto.RunConfig(
        platform=PLATFORM, enable_chip_swimlane=4, save_kernels=True, save_kernels_dir=out_dir))
    assert r.passed, r.error
    assert (out_dir / "manifest.json").exists()
    assert (out_dir / "dfx_outputs" / "chip_swimlane_records.json").exists()
    with pto.ChipWorker(pto.RunConfig()) as w:           # nothing recorded: a clear error
        w.run(compiled, a, a, np.zeros_like(a))
        with pytest.raises(pto.Error):
            w.export_swimlane(tmp_path / "none.json")
        # a per-dispatch config records this launch only
        w.run(compiled, a, a, np.zeros_like(a), config=pto.RunConfig(enable_chip_swimlane=True))
        w.export_swimlane(tmp_path / "once.json")
        w.run(compiled, a, a, np.zeros_like(a))
        with pytest.raises(pto.Error):
            w.export_swimlane(tmp_path / "none.json")


def test_swimlane_records_are_the_clis(compiled, build, tmp_path):
    # export_swimlane_records writes the files pto run --swimlane-records writes (it wrote
    # names.json where the CLI and the reference's tools have func_names.json and name_map.json),
    # with the same contents for the same run
    import json
    a = np.ones((ROWS, COLS), np.float32)
    with pto.ChipWorker(pto.RunConfig(platform=PLATFORM, enable_chip_swimlane=2)) as w:
        w.run(compiled, a, a, np.zeros_like(a))
        py = w.export_swimlane_records(tmp_path / "py")
    cli = tmp_path / "cli"
    subprocess.run([os.path.join(build, "tools", "pto"), "run", ADD, "--dim", f"M={ROWS}",
                    "--swimlane-records", str(cli / "chip_swimlane_records.json"),
                    "--swimlane-level", "2"], check=True, capture_output=True)
    assert sorted(os.listdir(py)) == sorted(os.listdir(cli)) == [
        "chip_swimlane_records.json", "deps.json", "func_names.json", "name_map.json"]
    for f in ("deps.json", "func_names.json", "name_map.json"):
        assert json.load(open(os.path.join(py, f))) == json.load(open(cli / f)), f
    rec = [json.load(open(os.path.join(d, "chip_swimlane_records.json"))) for d in (py, cli)]
    assert [sorted(r) for r in rec] == [sorted(rec[1])] * 2
    assert rec[0]["chip_swimlane_level"] == rec[1]["chip_swimlane_level"] == 2


def test_compile_into_a_work_dir(tmp_path):
    d = tmp_path / "work"
    p = pto.compile(ADD, work_dir=d)
    assert os.path.exists(d / "manifest.json") and os.path.samefile(p.work_dir, d)
    assert p.output_dir == p.work_dir
    q = pto.CompiledProgram.from_dir(str(d))
    a = np.ones((64, 128), np.float32)
    c = np.zeros_like(a)
    q(a, a, c)
    assert (c == 2).all()


def test_errors_name_python_arguments():
    text = open(os.path.join(SRC, "examples", "runtime", "add_scalar.ptir")).read().replace(
        "%c: f32 = runtime", "%c: f32")
    with pytest.raises(pto.Error) as e:
        pto.compile(text)
    assert "-D" not in e.value.message and "c=pto.RUNTIME" in e.value.message
    assert "pass c=VALUE or c=pto.RUNTIME" in e.value.message
    unshaped = text.replace("orch @main(%x: tensor[16,64] f32", "orch @main(%x: tensor f32")
    with pytest.raises(pto.Error) as e:
        pto.compile(unshaped, c=pto.RUNTIME)
    assert "--arg" not in e.value.message and "x=(64, 128)" in e.value.message
    fixed = pto.compile(text, c=1.5)                    # a launch with another value
    x = np.zeros((16, 64), np.float32)
    with pytest.raises(pto.Error) as e:
        fixed(x, x, 2.0)
    assert "-D" not in e.value.message and "recompile with c=pto.RUNTIME" in e.value.message
    with pytest.raises(pto.Error) as e:
        pto.compile(ADD, devices=2)
    assert "--devices" not in e.value.message and "devices applies to" in e.value.message


def test_failed_distributed_open_is_one_clean_error():
    code = ("import pto\ntry:\n    pto.DistributedWorker(devices=2, transport='udp')\n"
            "except pto.Error as e:\n    print('caught', e.code)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=os.environ)
    assert r.returncode == 0 and "caught 1" in r.stdout
    assert r.stderr == "", r.stderr                     # no second traceback from __del__
    with pytest.raises(pto.Error) as e:
        pto.DistributedWorker(pto.compile(ADD))         # an L2 program: refused before forking
    assert "not a host (L3) program" in e.value.message


def test_chip_worker_binding_and_lifecycle(compiled):
    """PyPTO's ChipWorker(config, *, level=2, runtime=, auto_init=), level/runtime, init() after
    close(), free_tensor(t, worker_id=0), and RegistrationHandle.closed / handle(*args, config=)."""
    from pto import ChipWorker, RunConfig
    A = np.full((ROWS, COLS), 2.0, np.float32)
    B = np.full((ROWS, COLS), 3.0, np.float32)
    out = np.zeros_like(A)
    w = ChipWorker(RunConfig(platform=PLATFORM), level=2, auto_init=False)
    assert not w.initialized and w.level == 2 and w.runtime == "tensormap_and_ringbuffer"
    w.init()
    w.init()  # a second init is a no-op
    assert w.initialized
    t = w.alloc_tensor((ROWS, COLS), np.float32, init=B)
    w.free_tensor(t, worker_id=0)
    h = w.register(compiled)
    assert not h.closed
    h(A, B, out, config=RunConfig(platform=PLATFORM, enable_chip_swimlane=1))
    assert np.array_equal(out, A + B) and w.last_launch()["ntasks"] > 0
    h.unregister()
    h.unregister()  # idempotent, as PyPTO's
    assert h.closed
    with pytest.raises(pto.Error):
        h(A, B, out)
    h2 = w.register(compiled)
    w.close()
    assert h2.closed and not w.initialized
    w.init()  # a closed worker opens again
    out[...] = 0
    w.run(compiled, A, B, out)
    assert np.array_equal(out, A + B)
    w.close()
    with pytest.raises(pto.Error, match="level is 2"):
        ChipWorker(RunConfig(), level=3)


def test_with_chip_worker_is_where_compiled_runs(compiled, tmp_path):
    """Inside `with ChipWorker(cfg) as w:`, compiled(*args) and pto.run run on w (PyPTO's
    ChipWorker.current), so w's records are theirs."""
    from pto import ChipWorker, RunConfig
    A = np.full((ROWS, COLS), 2.0, np.float32)
    B = np.full((ROWS, COLS), 3.0, np.float32)
    out = np.zeros_like(A)
    assert ChipWorker.current() is None
    with ChipWorker(RunConfig(platform=PLATFORM, enable_chip_swimlane=1)) as w:
        assert ChipWorker.current() is w and ChipWorker.current(device_id=1) is None
        compiled(A, B, out)
        assert np.array_equal(out, A + B)
        assert "chip_swimlane_records.json" in os.listdir(w.export_swimlane_records(tmp_path))
        inv = w.last_launch()["inv"]
        assert pto.run(compiled, A, B, out, config=RunConfig(platform=PLATFORM)).passed
        assert w.last_launch()["inv"] == inv + 1
        with ChipWorker(RunConfig(platform=PLATFORM, device_id=1)) as w1:
            assert ChipWorker.current() is w1 and ChipWorker.current(device_id=0) is w
            compiled(A, B, out, config=RunConfig(platform=PLATFORM))  # device 0's: on w
            assert w.last_launch()["inv"] == inv + 2
        assert ChipWorker.current() is w
    assert ChipWorker.current() is None


def test_enable_dump_args(tmp_path):
    """RunConfig(enable_dump_args=N) dumps a launch's arguments into
    <work dir>/dfx_outputs/args_dump/, as PyPTO's does."""
    import json
    from pto import ChipWorker, RunConfig
    prog = pto.compile(ADD, work_dir=tmp_path / "wd")
    A = np.full((ROWS, COLS), 2.0, np.float32)
    B = np.full((ROWS, COLS), 3.0, np.float32)
    out = np.zeros_like(A)
    dump = tmp_path / "wd" / "dfx_outputs" / "args_dump" / "args_dump.json"
    with ChipWorker(RunConfig(platform=PLATFORM)) as w:
        w.run(prog, A, B, out)
        assert not dump.exists()
        w.run(prog, A, B, out, config=RunConfig(platform=PLATFORM, enable_dump_args=2))
        assert json.loads(dump.read_text())["dump_args_level"] == 2
        dump.unlink()
        w.run(prog, A, B, out)  # the next launch dumps nothing again
        assert not dump.exists()
        with pytest.raises(pto.Error, match="work_dir"):  # a cached program has no work dir
            w.run(pto.compile(ADD), A, B, out, config=RunConfig(enable_dump_args=1))
    sk = tmp_path / "kernels"
    r = pto.run(ADD, A, B, out, config=RunConfig(save_kernels=True, save_kernels_dir=str(sk),
                                                 enable_dump_args=2))
    assert r.passed and (sk / "dfx_outputs" / "args_dump" / "args_dump.json").exists()
    with pytest.raises(pto.Error, match="enable_dump_args"):
        RunConfig(enable_dump_args=4)._c()


def test_dfx_flag_keeps_the_work_dir(tmp_path, monkeypatch):
    # PyPTO's RunConfig turns save_kernels on when a diagnostic output is asked for, and its run
    # writes into build_output/NAME_TIMESTAMP when no save_kernels_dir is given
    from pto import RunConfig
    assert not RunConfig().save_kernels and not RunConfig().any_dfx_enabled()
    cfg = RunConfig(platform=PLATFORM, enable_chip_swimlane=2)
    assert cfg.any_dfx_enabled() and cfg.save_kernels and cfg.save_kernels_dir is None
    assert RunConfig(enable_dump_args=1).save_kernels
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR", raising=False)
    a = np.ones((ROWS, COLS), np.float32)
    r = pto.run(ADD, a, a, np.zeros_like(a), config=cfg)
    assert r.passed, r.error
    (made,) = os.listdir(tmp_path / "build_output")
    assert made.startswith("add_") and len(made) == len("add_YYYYmmdd_HHMMSS")
    kept = tmp_path / "build_output" / made
    assert os.path.realpath(r.output_dir) == os.path.realpath(kept)
    assert (kept / "manifest.json").exists()
    assert (kept / "dfx_outputs" / "chip_swimlane_records.json").exists()
    # $PYPTO_PROG_BUILD_DIR moves the base, as PyPTO's; a flag set after construction counts too
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "elsewhere"))
    late = RunConfig(platform=PLATFORM)
    late.enable_dump_args = 2
    r = pto.run(ADD, a, a, np.zeros_like(a), config=late)
    assert r.passed, r.error
    (made,) = os.listdir(tmp_path / "elsewhere")
    assert (tmp_path / "elsewhere" / made / "dfx_outputs" / "args_dump" / "args_dump.json").exists()
    # nothing asked: nothing written
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR")
    r = pto.run(ADD, a, a, np.zeros_like(a), config=RunConfig(platform=PLATFORM))
    assert r.passed, r.error
    assert sorted(os.listdir(tmp_path)) == ["build_output", "elsewhere"]
    assert len(os.listdir(tmp_path / "build_output")) == 1


def test_enable_l2_swimlane_is_the_former_name():
    from pto import RunConfig
    with pytest.deprecated_call():
        cfg = RunConfig(enable_l2_swimlane=2)
    assert cfg.enable_chip_swimlane == 2
    with pytest.deprecated_call():
        assert cfg.enable_l2_swimlane == 2
    with pytest.raises(TypeError):
        RunConfig(enable_l2_swimlane=1, enable_chip_swimlane=1)


def test_print_tree_prints_every_launch_by_default(compiled):
    import io
    A = np.full((ROWS, COLS), 2.0, np.float32)
    st = pto.benchmark(compiled, [A, A, np.zeros_like(A)], rounds=3, warmup=0)
    f = io.StringIO()
    st.print_tree(file=f, us=True)
    assert f.getvalue().count("launch[") == 3 and f.getvalue() == st.format_tree()
    f = io.StringIO()
    st.print_tree(-1, file=f)
    assert "launch[" not in f.getvalue() and f.getvalue() == st.format_tree(2)


def test_an_unknown_binding_names_the_keyword():
    with pytest.raises(pto.Error) as e:
        pto.compile(ADD, nonexistent=1)
    assert "compile(nonexistent=...)" in str(e.value) and "-D" not in str(e.value)


def test_benchmark_spans_and_mean_invocation(compiled):
    """PyPTO's TraceSpan, inv.spans / root() / by_name() and stats.mean_invocation()."""
    A = np.full((ROWS, COLS), 2.0, np.float32)
    st = pto.benchmark(compiled, [A, A, np.zeros_like(A)], rounds=3, warmup=1)
    inv = st.invocations[1]
    root = inv.root()
    assert isinstance(root, pto.TraceSpan) and root.name == "chip.run" and root.depth == 0
    assert abs(root.dur_us - inv.host_wall_us) < 0.01  # the launch's host wall is its root span
    by = inv.by_name()
    assert set(by) == {sp.name for sp in inv.spans} and by["chip.run"] is root
    assert any(sp.is_device for sp in inv.spans) and inv.inv == 1
    m = st.mean_invocation()
    assert m.inv == -1 and m.root().name == "chip.run"
    assert abs(m.root().dur_us - st.host_wall_us_mean) < 0.01
    assert m.format_tree() == st.format_mean_tree(spread="none")
    assert st.mean_invocation(pid=1) is None


def test_run_returns_what_is_called_again(compiled):
    """PyPTO's run returns the compiled program: `compiled = run(P, a, b, c)`, then
    `compiled(a2, b2, c2)`; with no tensors it only compiles. pto's RunResult is used as it."""
    from pto import RunConfig, run
    a = np.full((ROWS, COLS), 2.0, np.float32)
    b = np.full((ROWS, COLS), 3.0, np.float32)
    c = np.zeros_like(a)
    prog = run(ADD, a, b, c, config=RunConfig(platform=PLATFORM))
    assert prog.passed and (c == 5).all() and prog.compiled.entry == prog.entry
    c2 = np.zeros_like(a)
    prog(b, b, c2)
    assert (c2 == 6).all() and prog.output_dir == prog.compiled.output_dir
    only = run(ADD)  # compile only
    assert only.passed and only.params == prog.params
    bad = run("program nope(", a)
    assert not bad.passed and bad.compiled is None
    with pytest.raises(pto.Error, match="compiled no program"):
        bad(a)
