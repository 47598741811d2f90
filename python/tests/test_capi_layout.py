"""The ctypes mirrors in pto/_capi.py against the C headers: every ctypes Structure there has the
size of its C struct and each of its fields the C field's offset and size (members of anonymous
unions by their own names), as capi_layout (python/tests/capi_layout.c, built with the tests from
include/pto) prints them. A struct that grows in C fails here, not by corrupting memory later."""
import ctypes as C
import os
import subprocess

import pytest

from conftest import BUILD
from pto import _capi

# Python mirror -> C struct. "prefix": the mirror declares the leading fields only (read-only
# views of a struct C allocates), so its size may be smaller.
MIRRORS = {
    "HostTensor": "pto_host_tensor",
    "Scalar": "pto_scalar",
    "Arg": "pto_arg",
    "RunConfigC": "pto_run_config",
    "DeviceMemoryInfo": "pto_device_memory_info",
    "Binding": "pto_binding",
    "CompileOptions": "pto_compile_options",
    "SigDim": "pto_sig_dim",
    "SigParam": "pto_sig_param",
    "Signature": "pto_signature",
    "Span": "pto_span",
    "LaunchRecord": "pto_launch_record",
    "BenchOptions": "pto_bench_options",
    "CacheStats": "pto_cache_stats",
    "CacheEntry": "pto_cache_entry",
    "CacheGcResult": "pto_cache_gc_result",
    "BenchNode": "pto_bench_node",
    "BenchTree": "pto_bench_tree",
    "BenchSummary": "pto_bench_summary",
    "DistBenchSlot": "pto_dist_bench_slot",
    "DistBenchStats": ("pto_dist_bench_stats", "prefix"),
    "DistConfig": "pto_dist_config",
}
CONSTANTS = {"MAX_RANK": "PTO_MAX_RANK", "DIST_METRIC_COUNT": "PTO_DIST_METRIC_COUNT"}


@pytest.fixture(scope="module")
def layout():
    exe = os.path.join(BUILD, "python", "capi_layout")
    if not os.path.exists(exe):
        pytest.fail(f"{exe} is missing: build the tests (cmake --build {BUILD})")
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    sizes, fields = {}, {}
    for line in out.splitlines():
        name, *nums = line.split()
        if "." in name:
            fields[name] = tuple(int(n) for n in nums)
        else:
            sizes[name] = int(nums[0])
    return sizes, fields


def flat_fields(cls, base=0):
    """(name, offset, size) of cls's fields, an anonymous union's members in its place."""
    anon = set(getattr(cls, "_anonymous_", ()))
    for f in cls._fields_:
        name, ctype = f[0], f[1]
        desc = getattr(cls, name)
        if name in anon:
            yield from flat_fields(ctype, base + desc.offset)
        else:
            yield name, base + desc.offset, desc.size


def mirrors():
    return sorted(n for n, v in vars(_capi).items()
                  if isinstance(v, type) and issubclass(v, (C.Structure, C.Union))
                  and v.__module__ == _capi.__name__)


def test_every_mirror_is_checked():
    unions_in_place = {getattr(_capi, n)._fields_[i][1].__name__
                       for n in MIRRORS for i, f in enumerate(getattr(_capi, n)._fields_)
                       if f[0] in getattr(getattr(_capi, n), "_anonymous_", ())}
    missing = [n for n in mirrors() if n not in MIRRORS and n not in unions_in_place]
    assert not missing, (f"ctypes mirrors without a C struct in test_capi_layout.MIRRORS: "
                         f"{missing} (add them there and to capi_layout.c)")


def problems(cls, c_name, mode, layout):
    """What differs between the ctypes mirror cls and C's c_name (an empty list: nothing)."""
    sizes, fields = layout
    if c_name not in sizes:
        return [f"capi_layout.c does not print {c_name}: add it"]
    out = []
    if (C.sizeof(cls) != sizes[c_name]) if mode == "full" else (C.sizeof(cls) > sizes[c_name]):
        out.append(f"{cls.__name__} has {C.sizeof(cls)} bytes, {c_name} {sizes[c_name]}: "
                   f"mirror the C struct's fields (include/pto)")
    for name, off, size in flat_fields(cls):
        key = f"{c_name}.{name}"
        if key not in fields:
            out.append(f"{c_name} has no field '{name}' in capi_layout.c (or in C)")
        elif (off, size) != fields[key]:
            out.append(f"{cls.__name__}.{name} is at offset {off} ({size} bytes), {key} at "
                       f"{fields[key][0]} ({fields[key][1]} bytes)")
    return out


@pytest.mark.parametrize("py_name", sorted(MIRRORS))
def test_mirror_matches_c(layout, py_name):
    c_name, mode = (MIRRORS[py_name], "full") if isinstance(MIRRORS[py_name], str) \
        else MIRRORS[py_name]
    assert problems(getattr(_capi, py_name), c_name, mode, layout) == []


def test_constants(layout):
    sizes, _ = layout
    for py, c in CONSTANTS.items():
        assert getattr(_capi, py) == sizes[c], f"_capi.{py} is {getattr(_capi, py)}, {c} {sizes[c]}"


def test_a_changed_mirror_is_caught(layout):
    # the check itself: a mirror one field short at the end (as CacheStats was), one with a
    # field of the wrong type in the middle, and a prefix mirror with a moved field
    class CacheStats(C.Structure):
        _fields_ = _capi.CacheStats._fields_[:-1]

    class DistBenchStats(C.Structure):
        _fields_ = [f for f in _capi.DistBenchStats._fields_ if f[0] != "nranks"]

    assert "CacheStats has 120 bytes, pto_cache_stats 128" in \
        problems(CacheStats, "pto_cache_stats", "full", layout)[0]

    class DistConfig(C.Structure):
        _fields_ = [(n, C.c_int64 if n == "ncores_per_chip" else t)
                    for n, t in _capi.DistConfig._fields_]

    assert any("DistConfig.ncores_per_chip is at offset 32 (8 bytes)" in p
               for p in problems(DistConfig, "pto_dist_config", "full", layout))
    assert any("DistBenchStats.per_round is at offset" in p
               for p in problems(DistBenchStats, "pto_dist_bench_stats", "prefix", layout))
