"""pto.DistributedWorker over pto/dist.h: resident and stacked tensors, copies, several programs
on one worker, and the L3 benchmark views. Opening the worker forks the chip processes, so this
file opens it once, before anything starts a thread."""
import os

import numpy as np
import pytest

import pto
from conftest import SRC

EX = os.path.join(SRC, "examples")


@pytest.fixture(scope="module")
def dw():
    with pto.DistributedWorker(devices=2, cores_per_chip=1) as w:
        yield w


@pytest.fixture(scope="module")
def scale():
    return pto.compile(os.path.join(EX, "runtime", "dist_scale.ptir"), devices=2)


def test_transport(dw):
    assert dw.transport == "shm" and dw.is_root
    assert "shm" in pto._c.pto_dist_transports().decode()
    with pytest.raises(pto.Error, match="unknown transport 'udp'"):
        pto.DistributedWorker(devices=2, transport="udp")


def test_program_is_host(scale):
    assert scale.is_host and scale.entry == "main"
    assert [p.name for p in scale.params] == ["w", "x", "y"]


@pytest.fixture(scope="module")
def scale_placed():
    return pto.compile(os.path.join(EX, "runtime", "dist_scale_placed.ptir"), devices=2)


def test_stacked_weight_placed_in_reverse(dw, scale, scale_placed):
    rng = np.random.default_rng(3)
    wts = rng.standard_normal((2, 16, 64)).astype(np.float32)
    st = dw.alloc_stacked_tensor(wts, worker_ids=[1, 0])   # shard i on worker 1 - i
    assert st.shape == (2, 16, 64) and st.worker_ids == (1, 0)
    # PyPTO's whole-shard index forms: st[r], st[r, ...], st[r, 0:16, :]
    assert st[1].worker_id == st[1, ...].worker_id == st[1, 0:16, :].worker_id == 0
    assert st[0, ..., 0:64].index == 0 and st[-1].index == 1
    with pytest.raises(ValueError, match=r"slice\(0, 8, None\) on axis 1 is not all of it"):
        st[0, 0:8]
    with pytest.raises(TypeError):
        st["0"]
    with pytest.raises(IndexError):
        st[2]
    with pytest.raises(IndexError):
        st[0, :, :, :]
    for _ in range(3):
        x = rng.standard_normal((32, 64)).astype(np.float32)
        y = np.zeros((32, 64), np.float32)
        dw.run(scale_placed, [st, x, y])   # x[0] and shard 0 to card 1, x[1] and shard 1 to card 0
        yhost = np.zeros((32, 64), np.float32)
        dw.run(scale_placed, [wts, x, yhost])
        assert np.array_equal(y, yhost)    # the stacked tensor means the host array
        assert np.array_equal(y, np.concatenate([x[:16] * wts[0], x[16:] * wts[1]]))
    # dist_scale passes shard d to device d: refused with this placement, naming what fits
    with pytest.raises(pto.Error, match=r"argument 0 is shard 0 of a stacked tensor, resident on "
                       r"device 1 \(worker_ids=\[1, 0\]\); pass it to device=1, or place the "
                       r"shards with worker_ids=\[0, 1\]"):
        dw.run(scale, [st, np.zeros((32, 64), np.float32), np.zeros((32, 64), np.float32)])
    assert np.array_equal(dw.copy_stacked_from(st), wts)
    out = np.empty_like(wts)
    assert dw.copy_stacked_from(st, out=out) is out and np.array_equal(out, wts)
    with pytest.raises(pto.Error):
        dw.copy_stacked_from(st, out=np.empty((2, 16, 32), np.float32))
    assert dw.copy_stacked_from(st, out) is out                  # PyPTO's (stacked, host)
    assert dw.copy_stacked_from(stacked=st, host=out) is out
    dw.free_stacked_tensor(st)
    dw.free_stacked_tensor(stacked=st)                    # idempotent, as PyPTO's
    dw.free_tensor(st)                                    # and so is free_tensor
    with pytest.raises(pto.Error):                        # a freed tensor
        dw.run(scale, [st, np.zeros((32, 64), np.float32), np.zeros((32, 64), np.float32)])
    with pytest.raises(pto.Error):
        dw.copy_stacked_from(st)
    st = dw.alloc_stacked_tensor(host=wts)                # PyPTO's keyword
    assert np.array_equal(dw.copy_stacked_from(st), wts)
    dw.free_stacked_tensor(st)


def test_resident_tensors(dw):
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    t0 = dw.alloc_tensor((16, 64), np.float32, init=a, worker_id=0)
    t1 = dw.alloc_tensor((16, 64), "bf16", worker_id=1)
    assert np.array_equal(dw.copy_from(t0), a)
    assert dw.copy_from(t1).dtype == np.uint16 and not dw.copy_from(t1).any()
    bits = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64)
    dw.copy_to(t1, bits)
    assert np.array_equal(dw.copy_from(t1), bits)
    with pytest.raises(pto.Error):
        dw.copy_to(t1, bits.astype(np.float32))           # wrong dtype
    with pytest.raises(pto.Error):
        dw.copy_to(t0, a[:8])                             # wrong shape
    with pytest.raises(pto.Error):
        dw.alloc_tensor((4, 4), np.float32, worker_id=7)  # no such rank
    with pytest.raises(pto.Error):
        dw.alloc_stacked_tensor(np.zeros((2, 4), np.float32), worker_ids=[0])
    with pytest.raises(pto.Error):
        dw.alloc_stacked_tensor(np.zeros((2, 4), np.float32), worker_ids=[0, 0])
    # more shards than devices, no worker_ids given: the message names the counts, not worker_ids
    with pytest.raises(pto.Error, match=r"3 shards with the default placement .* need 3 "
                       r"devices, the worker has 2") as e:
        dw.alloc_stacked_tensor(np.zeros((3, 4), np.float32))
    assert "worker_ids[" not in str(e.value)
    sb = dw.alloc_stacked_tensor(np.stack([bits, bits + 1]), dtype="bf16")
    assert sb.pto_dtype == "bf16" and np.array_equal(dw.copy_stacked_from(sb)[1], bits + 1)
    with pytest.raises(pto.Error):
        dw.alloc_stacked_tensor(np.zeros((2, 4), np.float32), dtype="bf16")
    dw.free_tensor(sb)
    dw.free_tensor(t0)
    with pytest.raises(ValueError, match=r"allocated on worker 1; pass the same worker_id"):
        dw.free_tensor(t1, worker_id=0)                   # PyPTO's: never the wrong chip's
    assert np.array_equal(dw.copy_from(t1), bits)         # still there
    dw.free_tensor(t1, worker_id=1)
    with pytest.raises(pto.Error):
        dw.copy_from(t0)


def test_two_programs_one_worker(dw, scale):
    mesh = pto.compile(os.path.join(EX, "allreduce_mesh.ptir"), devices=2)
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    dw.run(mesh, [x, y])
    block = x[:32] + x[32:]
    assert np.allclose(y, np.concatenate([block, block]), rtol=1e-6, atol=1e-6)
    wts = np.ones((2, 16, 64), np.float32)
    st = dw.alloc_stacked_tensor(wts)
    y2 = np.zeros((32, 64), np.float32)
    dw.run(scale, [st, x[:32], y2])
    assert np.array_equal(y2, x[:32])
    dw.free_tensor(st)


def test_chips_as_threads(scale):
    # chips="threads": every chip a thread of this process; the same results as with processes
    mesh = pto.compile(os.path.join(EX, "allreduce_mesh.ptir"), devices=2)
    x = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float32)
    with pto.DistributedWorker(devices=2, cores_per_chip=1, chips="threads") as w:
        for _ in range(2):
            y = np.zeros_like(x)
            w.run(mesh, [x, y])
            block = x[:32] + x[32:]
            assert np.allclose(y, np.concatenate([block, block]), rtol=1e-6, atol=1e-6)
        y2 = np.zeros((32, 64), np.float32)
        w.run(scale, [np.ones((2, 16, 64), np.float32), x[:32], y2])
        assert np.array_equal(y2, x[:32])
    with pytest.raises(pto.Error, match="unknown chips 'fibers'"):
        pto.DistributedWorker(devices=2, chips="fibers")


def test_devices_beside_programs_must_match(scale):
    # refused at open (before any chip is forked), not at the first run, naming both counts
    with pytest.raises(pto.Error, match=r"main is compiled for 2 devices, devices= gives 3"):
        pto.DistributedWorker(scale, devices=3)
    with pytest.raises(pto.Error, match=r"compiled for devices \[0, 1\], devices= gives \[1, 0\]"):
        pto.DistributedWorker([scale], devices=[1, 0])
    with pto.DistributedWorker(scale, devices=2, cores_per_chip=1, chips="threads") as w:
        assert w.devices == 2


def test_run_errors(dw, scale):
    l2 = pto.compile(os.path.join(EX, "runtime", "add_scalar.ptir"))
    x = np.zeros((16, 64), np.float32)
    with pytest.raises(pto.Error):                        # not a host program
        dw.run(l2, [x, x, 1.0])
    three = pto.compile(os.path.join(EX, "allreduce_mesh.ptir"), devices=3)
    with pytest.raises(pto.Error):                        # another device set
        dw.run(three, [np.zeros((96, 64), np.float32), np.zeros((96, 64), np.float32)])
    with pytest.raises(pto.Error):
        dw.run(scale, [x, x])                             # argument count


def test_first_error_wins(dw):
    # rank 1's orch divides by a runtime zero while rank 0 waits in dist.wait for its notify: the
    # error is rank 1's, rank 0's wait ends at once (no timeout), and the worker stays usable.
    fe = pto.compile(os.path.join(SRC, "tests", "e2e", "data", "first_error.ptir"), devices=2)
    y = np.zeros((1, 16), np.float32)
    with pytest.raises(pto.Error) as e:
        dw.run(fe, y, 0)
    msg = str(e.value)
    assert msg.index("rank 1 (pid") < msg.index("then rank 0 (pid"), msg
    assert "integer division by zero" in msg and "dist.wait aborted because rank 1 failed" in msg
    assert "timed out" not in msg
    assert e.value.code == pto.LAUNCH                     # a launch error, as on one chip
    dw.run(fe, y, 1)
    assert np.array_equal(y, np.ones((1, 16), np.float32))


ROTATE = """
program rotate
dynamic B
kernel @k(inout %s: tensor[1, 4] f32) -> (tensor[1, 4] f32) {
  %a = tile.load(%s, [0, 0], [1, 4])
  %b = tile.adds(%a, 1.0)
  %s1 = tile.store(%b, [0, 0], %s)
  return %s1
}
orch @o(inout %s: tensor[1, 4] f32) -> (tensor[1, 4] f32) {
  %a = call @k(%s)
  return %a
}
host @main(inout %s: tensor[B, 1, 4] f32) {
  %n = dist.world_size()
  for %i in range(0, %n) {
    %si = tensor.select(%s, %i)
    %d = mod(%i + 1, %n)
    call @o(%si) device=%d
  }
}
"""


def test_misplaced_shard_names_the_placement_that_fits():
    # shard i goes to device i+1 (mod 3): the error names the placement of every call of the run
    # (it named [1, 0, 2] before: the first call's shard swapped with the one on its device, which
    # the second call then finds on the wrong device), a launch error; that placement runs.
    rot = pto.compile(ROTATE, devices=3)
    s = np.arange(12, dtype=np.float32).reshape(3, 1, 4)
    with pto.DistributedWorker(devices=3, cores_per_chip=1) as w:
        st = w.alloc_stacked_tensor(s)
        with pytest.raises(pto.Error, match=r"argument 0 is shard 0 of a stacked tensor, resident "
                           r"on device 0 \(worker_ids=\[0, 1, 2\]\); pass it to device=0, or "
                           r"place the shards with worker_ids=\[1, 2, 0\]$") as e:
            w.run(rot, st)
        assert e.value.code == pto.LAUNCH
        assert np.array_equal(w.copy_stacked_from(st), s)  # nothing ran
        fit = w.alloc_stacked_tensor(s, worker_ids=[1, 2, 0])
        w.run(rot, fit)
        assert np.array_equal(w.copy_stacked_from(fit), s + 1)
        # every shard to device 0: no placement fits, and the error says why
        one = pto.compile(ROTATE.replace("mod(%i + 1, %n)", "0"), devices=3)
        with pytest.raises(pto.Error, match=r"argument 0 is shard 1 of a stacked tensor, resident "
                           r"on device 1 \(worker_ids=\[0, 1, 2\]\); pass it to device=1; no "
                           r"placement of the shards fits \(the run passes two shards to device "
                           r"0\)$"):
            w.run(one, st)


def test_benchmark_views(dw):
    mesh = pto.compile(os.path.join(EX, "allreduce_mesh.ptir"), devices=2)
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    st = dw.benchmark(mesh, [x, y], rounds=5, warmup=1)
    for k in ("per_round", "per_rank", "per_dispatch", "dispatch_groups", "rounds_dispatches",
              "unstable_dispatch_slots", "fallback_flattened"):
        assert k in st.json, k
        assert hasattr(st, k)
    assert not st.json["unstable_dispatch_slots"] and not st.json["fallback_flattened"]
    assert len(st.json["rounds_dispatches"]) == 5
    assert st.per_round.device.n == 5 and st.per_round.device.median > 0
    assert st.device_wall_us_median == st.per_round.device.median
    assert 0 < st.device_wall_us_min <= st.device_wall_us_median <= st.host_wall_us_max
    assert len(st.per_rank) == 2
    assert "per_round" in st.report or "device" in st.report
    assert np.array_equal(y, np.full((64, 64), 2, np.float32))
    with pytest.raises(pto.Error):
        dw.benchmark(mesh, [x, y], rounds=0)


def test_closed():
    w = pto.DistributedWorker(devices=[0, 1], cores_per_chip=1)
    assert w.devices == 2
    t = w.alloc_tensor(4, np.float32)
    w.close()
    w.close()
    with pytest.raises(pto.Error) as e:
        w.alloc_tensor(4, np.float32)
    assert e.value.code == pto.FAILED_PRECONDITION
    assert isinstance(e.value, RuntimeError)              # what PyPTO raises on a closed worker
    w.free_tensor(t)                                      # close freed it: a no-op, as PyPTO's
    with pytest.raises(RuntimeError, match="closed"):
        w.copy_from(t)


def test_copies_never_write_a_read_only_array(dw):
    # copy_from / copy_stacked_from into a read-only array wrote into it (the immutable bytes
    # object under np.frombuffer); now refused, the bytes unchanged.
    t = dw.alloc_tensor((4, 8), np.float32, init=np.full((4, 8), 5.0, np.float32), worker_id=1)
    buf = bytes(4 * 8 * 4)
    ro = np.frombuffer(buf, np.float32).reshape(4, 8)
    with pytest.raises(pto.Error, match=r"out must be a writable C-contiguous \[4, 8\] float32"):
        dw.copy_from(t, out=ro)
    with pytest.raises(pto.Error, match="dst_host_ptr is a read-only array"):
        dw.copy_from(ro, t.data_ptr, ro.nbytes)            # PyPTO's (host, device ptr, nbytes)
    st = dw.alloc_stacked_tensor(np.ones((2, 4, 8), np.float32))
    sbuf = bytes(2 * 4 * 8 * 4)
    with pytest.raises(pto.Error, match="out must be a writable"):
        dw.copy_stacked_from(st, np.frombuffer(sbuf, np.float32).reshape(2, 4, 8))
    # A shard (st.shards[i]) was copied with np.copyto: broadcast into a bigger array, cast into
    # another dtype, a read-only one a ValueError. Now held to the shard as a tensor's out is.
    big = np.zeros((3, 4, 8), np.float32)
    for bad in (big, np.zeros((4, 8), np.float64), np.frombuffer(sbuf, np.float32)[:32]
                .reshape(4, 8)):
        with pytest.raises(pto.Error, match=r"out must be a writable C-contiguous \[4, 8\]"):
            dw.copy_from(st.shards[1], out=bad)
    assert not big.any()
    o = np.zeros((4, 8), np.float32)
    assert dw.copy_from(st.shards[1], o) is o and (o == 1.0).all()
    assert buf == bytes(4 * 8 * 4) and sbuf == bytes(2 * 4 * 8 * 4)
    assert (dw.copy_from(t) == 5.0).all() and (dw.copy_stacked_from(st) == 1.0).all()
    dw.free_tensor(st)
    dw.free_tensor(t)
