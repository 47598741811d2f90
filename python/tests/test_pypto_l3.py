"""PyPTO's L3 user code against pto ("Distributed execution": DistributedWorker(compiled) and
compiled.prepare() as context managers, rt(*args), rt.run(compiled, *args), several programs on
one worker, stacked tensors, the L3 benchmark views and mean tree), with only the import and
torch -> numpy changed. Opens its workers before anything starts a thread."""
import os

import numpy as np
import pytest

import pto
from conftest import SRC

EX = os.path.join(SRC, "examples")


@pytest.fixture(scope="module")
def mesh():
    return pto.compile(os.path.join(EX, "allreduce_mesh.ptir"), devices=2)  # x, out y [64,64]


@pytest.fixture(scope="module")
def scale():
    return pto.compile(os.path.join(EX, "runtime", "dist_scale.ptir"), devices=2)  # w, x, y


def want_mesh(x):
    block = x[:32] + x[32:]
    return np.concatenate([block, block])


def test_prepare_and_dispatch(mesh, scale):
    from pto import DistributedWorker
    host_x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    host_out = np.zeros_like(host_x)
    with mesh.prepare() as rt:
        rt(host_x, host_out)
        np.testing.assert_allclose(host_out, want_mesh(host_x), rtol=1e-6, atol=1e-6)
        host_out[...] = 0
        rt.run(mesh, host_x, host_out)
        np.testing.assert_allclose(host_out, want_mesh(host_x), rtol=1e-6, atol=1e-6)
        rt.submit(mesh, host_x, host_out).result()
    with DistributedWorker(mesh) as rt:
        assert rt.world_size == 2
        rt(host_x, host_out)
    # several programs on one worker: rt(*args) runs the first, rt.run names the other
    with DistributedWorker([mesh, scale]) as rt:
        host_w = np.ones((2, 16, 64), np.float32) * np.array([2, 3], np.float32)[:, None, None]
        stacked = rt.alloc_stacked_tensor(host_w)
        assert stacked.worker_ids == (0, 1) and len(stacked.shards) == 2
        assert stacked.shards[1].worker_id == 1 and stacked.shards[0].shape == (16, 64)
        assert stacked.shape == stacked.full_shape == (2, 16, 64)
        x = np.ones((32, 64), np.float32)
        y = np.zeros((32, 64), np.float32)
        rt.run(scale, stacked, x, y)
        assert np.array_equal(y, np.concatenate([x[:16] * 2, x[16:] * 3]))
        rt(host_x, host_out)
        out = np.empty_like(host_w)
        rt.copy_stacked_from(stacked, out)
        assert np.array_equal(out, host_w)
        assert np.array_equal(rt.copy_from(stacked.shards[1]), host_w[1])
        rt.free_stacked_tensor(stacked)
        # resident tensors by address and byte count
        t = rt.alloc_tensor((16, 64), np.float32, init=host_w[0], worker_id=1)
        back = np.zeros((16, 64), np.float32)
        rt.copy_from(back.ctypes.data, t.data_ptr, t.nbytes, worker_id=1)
        assert np.array_equal(back, host_w[0])
        ptr = rt.malloc(64, worker_id=0)
        src = np.arange(64, dtype=np.uint8)
        rt.copy_to(ptr, src.ctypes.data, 64)
        got = np.zeros(64, np.uint8)
        rt.copy_from(got, ptr, 64)
        assert np.array_equal(got, src)
        rt.free(ptr)
        rt.free_tensor(t)
        with pytest.raises(pto.Error, match="no live tensor"):
            rt.free(ptr)
    with pytest.raises(pto.Error, match="one device set"):
        DistributedWorker([mesh, pto.compile(os.path.join(EX, "allreduce_mesh.ptir"),
                                             devices=[0, 2])])


def test_l3_benchmark_views(mesh):
    from pto import benchmark
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    with mesh.prepare() as rt:
        stats = benchmark(mesh, [x, y], rounds=4, warmup=1, worker=rt)
    assert len(stats.device_wall_us) == len(stats.host_wall_us) == 4
    assert stats.per_round("device") == stats.device_wall_us == stats.samples
    assert stats.per_round.device.n == 4                 # pto's JSON view still reads
    ranks = stats.per_rank()
    assert sorted(ranks) == [0, 1] and all(len(v) == 4 for v in ranks.values())
    per = stats.per_dispatch("device")
    assert sorted(per) == [(0, 0), (1, 0)] and all(len(v) == 4 for v in per.values())
    groups = stats.dispatch_groups()
    assert len(groups[(0, 0)]) == 4 and groups[(0, 0)][0].device_wall_us() > 0
    assert "chip.run" in groups[(1, 0)][3].format_tree()
    assert stats.dispatch_tasks() == {(0, 0): "step", (1, 0): "step"}
    assert len(stats.invocations) == 8
    tree = stats.format_mean_tree()
    assert "rank=0 slot=0 task=step" in tree and "rank=1 slot=0" in tree and "chip.run" in tree
    assert "rank=1" not in stats.format_mean_tree(pid=0)
    # benchmark without a worker opens one over the program's devices
    st2 = benchmark(mesh, [x, y], rounds=2, warmup=0)
    assert len(st2.device_wall_us) == 2 and (y == 2).all()


def test_l3_compiled_call_and_ids(mesh):
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    mesh(x, y)                                           # one-shot: opens, runs, closes
    assert (y == 2).all()
    assert mesh.device_ids == (0, 1)


def test_l3_submit_completions(mesh):
    # rt.submit queues the run and returns at once; handles report done and the run's outcome;
    # runs keep their order; close waits for submitted runs, so a handle is waitable after it
    fe = pto.compile(os.path.join(SRC, "tests", "e2e", "data", "first_error.ptir"), devices=2)
    xs = [np.full((64, 64), k, np.float32) for k in range(4)]
    ys = [np.zeros((64, 64), np.float32) for _ in range(4)]
    rt = pto.DistributedWorker(mesh)
    hs = [rt.submit(mesh, x, y) for x, y in zip(xs, ys)]
    assert all(isinstance(h, pto.RunHandle) for h in hs)
    for h in reversed(hs):                               # any order of waits
        h.wait()
        assert h.done
    for x, y in zip(xs, ys):
        assert np.array_equal(y, want_mesh(x))
    # a run that fails: its handle raises, again on a second wait; the worker stays usable
    y1 = np.zeros((1, 16), np.float32)
    bad = rt.submit(fe, y1, 0)
    good = rt.submit(fe, y1, 1)
    for _ in range(2):
        with pytest.raises(pto.Error, match="integer division by zero"):
            bad.wait()
    good.result(timeout=60)
    good.wait()                                          # a second wait: the same outcome
    assert np.array_equal(y1, np.ones((1, 16), np.float32))
    # a handle dropped at once: its run still sees its (temporary) input, and writes y
    ys[2][...] = 0
    rt.submit(mesh, np.full((64, 64), 7, np.float32), ys[2])
    rt.run(mesh, xs[0], ys[3])
    assert np.array_equal(ys[2], want_mesh(np.full((64, 64), 7, np.float32)))
    # a copy right after a submit sees the run: every other call waits for submitted runs
    h = rt.submit(mesh, xs[2], ys[0])
    t = rt.alloc_tensor((4,), np.float32)
    assert h.done
    rt.free_tensor(t)
    # wait after close: close waited for the run; its outputs are there
    ys[1][...] = 0
    late = rt.submit(mesh, xs[3], ys[1])
    rt.close()
    assert late.done
    late.wait()
    assert np.array_equal(ys[1], want_mesh(xs[3]))
    with pytest.raises(pto.Error, match="the distributed worker is closed"):
        rt.submit(mesh, xs[0], ys[0])
    h.wait()


def test_l3_swimlane_records(mesh, tmp_path):
    # DistributedWorker(swimlane_records=DIR): every call of every chip leaves the files that
    # `pto run --swimlane-records DIR/chip_swimlane_records.json` writes for a host program
    import json
    import subprocess
    from conftest import BUILD
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    with pto.DistributedWorker(mesh, swimlane_records=tmp_path / "py") as rt:
        rt(x, y)
        rt(x, y)                                         # a second run: dispatch_1 of each rank
        assert rt.swimlane_records == str(tmp_path / "py")
    subprocess.run([os.path.join(BUILD, "tools", "pto"), "run",
                    os.path.join(EX, "allreduce_mesh.ptir"), "--devices", "2", "--dim", "M=64",
                    "--swimlane-records", str(tmp_path / "cli" / "chip_swimlane_records.json")],
                   check=True, capture_output=True)

    def files(d):
        return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d)
                      for f in fs)

    py, cli = files(tmp_path / "py"), files(tmp_path / "cli")
    assert [f for f in py if "dispatch_0" in f] == cli
    assert len(cli) == 8 and len(py) == 16               # 2 ranks x 4 files, per run
    for r in (0, 1):
        for n in (0, 1):
            d = tmp_path / "py" / f"rank_{r}" / f"dispatch_{n}"
            rec = json.loads((d / "chip_swimlane_records.json").read_text())
            assert rec["chip_swimlane_level"] == 2 and rec["aicore_tasks"]
            deps = json.loads((d / "deps.json").read_text())
            assert [t["name"] for t in deps["tasks"]] == ["allreduce"]
            assert (d / "name_map.json").read_text() == (d / "func_names.json").read_text()
    # pto.run of a host program with enable_chip_swimlane: the same under dfx_outputs/
    wd = tmp_path / "wd"
    res = pto.run(os.path.join(EX, "allreduce_mesh.ptir"), x, y, devices=2,
                  config=pto.RunConfig(save_kernels=True, save_kernels_dir=str(wd),
                                       enable_chip_swimlane=True))
    assert res.passed, res.error
    assert files(wd / "dfx_outputs") == cli


def test_l3_stacked_input_to_a_collective():
    """A program written from the docs alone (tests/programs/set2_host_allreduce.ptir): a
    stacked [2, 16, 64] weight, shard i resident on device i, scales device i's block, and
    dist.allreduce sums (ring) and maxes (mesh) the blocks over the devices."""
    prog = pto.compile(os.path.join(SRC, "tests", "programs", "set2_host_allreduce.ptir"),
                       devices=2)
    rng = np.random.default_rng(3)
    host_w = rng.standard_normal((2, 16, 64)).astype(np.float32)
    x = rng.standard_normal((2, 16, 64)).astype(np.float32)
    y = np.zeros((16, 64), np.float32)
    z = np.zeros_like(y)
    with pto.DistributedWorker(prog) as rt:
        w = rt.alloc_stacked_tensor(host_w)
        for step in (1.0, -2.0):
            rt(w, x * step, y, z)
            np.testing.assert_allclose(y, (host_w * x * step).sum(0), rtol=1e-6, atol=1e-6)
            np.testing.assert_array_equal(z, (host_w * x * step).max(0))
        placed = rt.alloc_stacked_tensor(host_w, worker_ids=[1, 0])
        with pytest.raises(pto.Error, match="worker_ids"):
            rt(placed, x, y, z)  # shard 0 lives on device 1, the program sends it to device 0
        rt.free_stacked_tensor(placed)
        rt.free_stacked_tensor(w)


def test_l3_register(mesh):
    """PyPTO's rt.register(compiled): a handle whose call is rt.run(compiled, ...), cid 0."""
    from pto import DistributedWorker
    host_x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    host_out = np.zeros_like(host_x)
    with DistributedWorker(mesh) as rt:
        h = rt.register(mesh)
        assert h.cid == 0 and h.compiled is mesh and not h.closed
        h(host_x, host_out)
        np.testing.assert_allclose(host_out, want_mesh(host_x), rtol=1e-6, atol=1e-6)
        host_out[...] = 0
        h.submit(host_x, host_out).wait()
        np.testing.assert_allclose(host_out, want_mesh(host_x), rtol=1e-6, atol=1e-6)
        with rt.register(mesh) as h2:
            h2(host_x, host_out)
        assert h2.closed
        rt.release_inherited_host_tensor_refs()  # PyPTO's; pto keeps none: a no-op
        with pytest.raises(pto.Error, match="unregistered"):
            h2(host_x, host_out)
    assert h.closed


def test_l3_benchmark_trees(mesh):
    """PyPTO's L3 BenchmarkStats.print_tree / format_tree / all_zero_device."""
    import io
    x = np.ones((64, 64), np.float32)
    with pto.DistributedWorker(mesh) as rt:
        st = pto.benchmark(mesh, [x, np.zeros_like(x)], rounds=2, warmup=0, worker=rt)
    n = len(st.invocations)
    assert n == 4 and not st.all_zero_device  # 2 rounds x 2 ranks
    f = io.StringIO()
    st.print_tree(file=f)
    assert f.getvalue() == st.format_tree() and f.getvalue().count("launch[") == n
    assert st.format_tree(-1).startswith(f"launch[{n - 1}] (pid=1 round=1 slot=0")
    with pytest.raises(pto.Error, match="launch"):
        st.format_tree(n)
    last = st.invocations[-1]
    assert last.pid == 1 and last.root() is not None and last.by_name()
    m = st.mean_invocation(pid=1)
    assert m.pid == 1 and m.inv == -1 and m.root().name == last.root().name
    assert st.mean_invocation(pid=5) is None
