"""pto: PyPTO's pypto.runtime API over the pto C libraries (ctypes), numpy in and out.

    import numpy as np
    from pto import ChipWorker, RunConfig, compile
    prog = compile("examples/add.ptir")
    with ChipWorker(RunConfig(platform="sim", cores=2)) as w:
        x = np.ones((128, 128), np.float32); y = np.zeros_like(x)
        w.run(prog, x, x, y)             # y written in place

PyPTO user code runs with `from pypto.runtime import` -> `from pto import` and torch -> numpy
(docs/pypto-names.md maps the names; CPU torch tensors and torch dtypes are taken too, torch
never imported). Every failure raises pto.Error (code: the C pto_status_code, message: its
text), a RuntimeError; a refused argument is a pto.ArgumentError, also a ValueError and a
TypeError, as PyPTO raises those. bf16 data is numpy uint16 (the raw bits). Host arrays that
are C-contiguous and aligned are passed without a copy; out/inout arrays are written in place."""
from __future__ import annotations

import abc
import atexit
import contextlib
import ctypes as C
import dataclasses
import errno
import functools
import json
import math
import os
import re
import statistics
import sys
import threading
import time
import warnings
import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterable, Sequence

from . import _paths

try:
    import numpy as np
except ImportError as _e:  # name the fix, not just the module: a venv or pyenv python lacks it
    raise ImportError(
        f"pto needs numpy, which this interpreter ({sys.executable}, Python "
        f"{sys.version_info[0]}.{sys.version_info[1]}) cannot import: on Debian, "
        f"apt-get install python3-numpy; pto was built for "
        f"{getattr(_paths, 'PYTHON', 'python3')} (else pip install numpy into this one)",
        name="numpy") from _e

from . import _capi as _c

__all__ = ["Error", "ArgumentError", "NotFoundError", "RUNTIME", "compile", "CompiledProgram", "RunConfig",
           "Worker", "ChipWorker", "DeviceTensor", "Callable", "RegistrationHandle", "RunHandle",
           "benchmark", "BenchmarkStats", "Invocation", "TraceInvocation", "TraceSpan",
           "DistributedWorker", "DistributedConfig", "DistTensor", "StackedDeviceTensor",
           "DistBenchmarkStats", "DistributedRunHandle", "run", "RunResult", "cache"]

# ---- errors -------------------------------------------------------------------------------

STATUS_NAMES = ["OK", "INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_MEMORY", "IO",
                "FAILED_PRECONDITION", "DATA_LOSS", "UNIMPLEMENTED", "INTERNAL", "LAUNCH"]
INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, LAUNCH = 1, 2, 5, 9


class Error(RuntimeError):
    """A failed pto call: code is the C pto_status_code (pto.INVALID_ARGUMENT, ...), message its
    text. It is a RuntimeError, what PyPTO raises for a failed run or a closed worker; a refused
    argument (code INVALID_ARGUMENT) is a pto.ArgumentError, also a ValueError and a TypeError,
    what PyPTO raises for a bad value or a wrong type or shape, so PyPTO users' `except` clauses
    and `pytest.raises` catch pto's errors."""

    def __new__(cls, code: int = 0, message: str = "", *args: Any, **kw: Any):
        if cls is Error and code == INVALID_ARGUMENT:
            cls = ArgumentError
        return super().__new__(cls, code, message)

    def __init__(self, code: int, message: str):
        super().__init__(f"[{STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else code}] "
                         f"{message}")
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple:
        return (Error, (self.code, self.message), self.__dict__)


class ArgumentError(Error, ValueError, TypeError):
    """A pto.Error of code INVALID_ARGUMENT: also a ValueError and a TypeError (PyPTO raises
    either for a refused argument: a wrong value, a wrong dtype or shape)."""


class NotFoundError(Error, FileNotFoundError):
    """A pto.Error of code NOT_FOUND where PyPTO raises a FileNotFoundError (a work dir of
    CompiledProgram.from_dir that is not there): also a FileNotFoundError, errno ENOENT; its
    str() is a pto.Error's, "[NOT_FOUND] message"."""

    def __new__(cls, code: int = NOT_FOUND, message: str = "", *args: Any, **kw: Any):
        return FileNotFoundError.__new__(cls, message)  # one argument: errno is set below

    def __init__(self, code: int, message: str):
        super().__init__(code, message)
        self.errno = errno.ENOENT

    def __reduce__(self) -> tuple:
        return (NotFoundError, (self.code, self.message), self.__dict__)


def _check(status: int | None) -> None:
    if status:
        code = _c.pto_status_code_of(status)
        msg = _c.pto_status_message(status).decode(errors="replace")
        _c.pto_status_free(status)
        raise Error(code, _python_names(msg))


_CLI_HINTS = [  # the C messages name CLI flags: Python users pass keyword arguments
    (re.compile(r"-D (\w+)=runtime"), r"\1=pto.RUNTIME"),
    (re.compile(r"-D (\w+)=VALUE"), r"\1=VALUE"),
    (re.compile(r"--arg (\w+)=(\d+)x(\d+)"), r"\1=(\2, \3)"),
    (re.compile(r"--devices\b"), "devices"),
    (re.compile(r"\bpass -D\b"), "pass"),
    (re.compile(r"(?<![\w-])-D (\w+)="), r"\1="),
    (re.compile(r"(?<![\w-])-D (\w+):"), r"compile(\1=...):"),
]


def _python_names(msg: str) -> str:
    """msg with the CLI flags it suggests spelled as the Python arguments (pto.compile's
    keywords)."""
    for pat, rep in _CLI_HINTS:
        msg = pat.sub(rep, msg)
    return msg


def _fail(msg: str, code: int = INVALID_ARGUMENT) -> Error:
    return Error(code, msg)


I32_MAX, I64_MAX, U32_MAX, U64_MAX = 2**31 - 1, 2**63 - 1, 2**32 - 1, 2**64 - 1


def _int(what: str, v: Any, lo: int, hi: int) -> int:
    """v as a Python int in [lo, hi], or pto.Error naming what: nothing crosses into C wrapped
    (ctypes would silently keep the low bits of 2**31 or -1)."""
    if not isinstance(v, (int, np.integer)):
        raise _fail(f"{what} must be an integer, got {type(v).__name__} {v!r}")
    i = int(v)
    if not lo <= i <= hi:
        raise _fail(f"{what} = {i} is out of range: it must be in [{lo}, {hi}]")
    return i


def _no_bool(what: str, v: Any, dt: int) -> Any:
    """v, unless it is a bool (Python's or numpy's) for a scalar of dtype dt other than bool: True
    for an f32 or i32 scalar is a pto.ArgumentError (a TypeError) naming what, not 1.0 or 1 sent
    on (Python's bool is an int subclass, so the number checks alone would take it). A numpy
    bool for a bool scalar is Python's."""
    if isinstance(v, np.bool_):
        v = bool(v)
    if dt != 0 and isinstance(v, bool):
        raise _fail(f"{what} is a {_PTO_NAMES[dt]} scalar, got bool {v!r}: a bool is not a "
                    f"{_PTO_NAMES[dt]}; pass a number (e.g. {1.0 if dt in _FLOATS else 1} for True)")
    return v


def _float_arg(what: str, v: Any, dt: int) -> float:
    """v as a runtime scalar of float dtype dt, held to the range -D and --in hold it to
    (pto_scalar_parse): a finite value that rounds to infinity in dt (1e39 for f32, 10**400) is
    a pto.Error naming what, not an inf sent on or an OverflowError."""
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    if -65504.0 <= f <= 65504.0:  # fits every float dtype (f16's is the smallest): no C call
        return f
    text = repr(f) if f != math.inf or not isinstance(v, (int, np.integer)) else str(int(v))
    status = _c.pto_scalar_parse(text.encode(), dt, C.byref(_c.Scalar()))
    if status:
        msg = _c.pto_status_message(status).decode(errors="replace")
        _c.pto_status_free(status)
        raise _fail(f"{what} = {text}: {msg}")
    return f  # the value itself (a NaN keeps its sign and payload), rounded where it is packed


# ---- dtypes -------------------------------------------------------------------------------

_NP2PTO = {np.dtype(np.bool_): 0, np.dtype(np.int8): 1, np.dtype(np.int16): 2,
           np.dtype(np.int32): 3, np.dtype(np.int64): 4, np.dtype(np.uint8): 5,
           np.dtype(np.uint16): 6, np.dtype(np.uint32): 7, np.dtype(np.uint64): 8,
           np.dtype(np.float16): 9, np.dtype(np.float32): 11, np.dtype(np.float64): 12}
BF16, INDEX, U16 = 10, 13, 6
_PTO2NP = {v: k for k, v in _NP2PTO.items()}
_PTO2NP[BF16] = np.dtype(np.uint16)
_PTO2NP[INDEX] = np.dtype(np.int64)
_PTO_NAMES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16",
              "f32", "f64", "index"]


_FLOATS = (9, 10, 11, 12)


def _c_int_range(dt: int) -> tuple[int, int]:
    lo, hi = C.c_int64(), C.c_uint64()
    if _c.pto_dtype_int_range(dt, C.byref(lo), C.byref(hi)) != 0:
        raise ImportError(f"pto: libpto_base has no integer range for dtype {_PTO_NAMES[dt]}")
    return lo.value, hi.value


# The range of each integer scalar dtype (bool, i8 .. u64, index), by pto dtype: the C library's
# (pto_dtype_int_range), which pto_scalar_parse and pto_scalar_check hold values to, so the
# Python check and C's cannot disagree.
_INT_RANGES = {dt: _c_int_range(dt) for dt in range(len(_PTO_NAMES)) if dt not in _FLOATS}


def _is_torch(v: Any) -> bool:
    """v is a torch object (a torch.dtype, a torch.Tensor); torch itself is never imported."""
    return type(v).__module__.partition(".")[0] == "torch"


def _from_torch(v: Any) -> np.ndarray:
    """A CPU torch.Tensor as a numpy array over its memory (bf16: its uint16 bits), so an `out`
    parameter is written into the tensor, as PyPTO writes it."""
    if str(getattr(v, "device", "cpu")) != "cpu":
        raise _fail(f"a torch tensor on {v.device}: pto takes host tensors (pass t.cpu())")
    v = v.detach()
    if str(v.dtype) == "torch.bfloat16":
        return v.view(sys.modules["torch"].int16).numpy().view(np.uint16)
    return v.numpy()


def _host_array(v: Any) -> Any:
    """v, a torch.Tensor as a numpy array over its memory (_from_torch)."""
    return _from_torch(v) if _is_torch(v) and hasattr(v, "numpy") else v


def _pto_dtype(dtype: Any) -> int:
    """A pto dtype from a numpy dtype-like, a torch.dtype (torch.float32, torch.bfloat16, ...)
    or a pto name ("bf16", "f32", "index", ...)."""
    if _is_torch(dtype) and str(dtype).startswith("torch."):
        dtype = str(dtype)[len("torch."):]
    if isinstance(dtype, str) and dtype in ("bf16", "bfloat16"):
        return BF16
    if isinstance(dtype, str) and dtype in _PTO_NAMES:
        return _PTO_NAMES.index(dtype)
    try:
        return _NP2PTO[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise _fail(f"dtype {dtype!r} has no pto dtype (bf16 is 'bf16' over numpy uint16)")


# ---- programs -----------------------------------------------------------------------------


class _Runtime:
    def __repr__(self) -> str:
        return "pto.RUNTIME"


RUNTIME = _Runtime()  # a scalar binding left to run time: pto.compile(..., c=pto.RUNTIME)


@dataclass(frozen=True)
class Param:
    name: str
    is_tensor: bool
    dir: str          # "in", "out", "inout"
    dtype: str        # pto name
    rank: int
    bind: str         # scalars: "none", "literal", "runtime"
    value: Any        # the specialized value of a literal scalar


class CompiledProgram:
    """A loaded program (pto_program), from pto.compile or CompiledProgram.from_dir."""

    def __init__(self, ptr: int):
        self._ptr = ptr
        sig = _c.pto_program_signature(ptr).contents
        params = []
        for i in range(sig.nparams):
            p = sig.params[i]
            v = (p.value.f if p.value.dtype in (9, 10, 11, 12) else  # floats
                 p.value.u if p.value.dtype == 8 else p.value.i)  # u64: its whole range
            params.append(Param(p.name.decode(), bool(p.is_tensor), ("in", "out", "inout")[p.dir],
                                _PTO_NAMES[p.dtype], p.rank,
                                ("none", "literal", "runtime")[p.bind], v))
        # The entry as the user named it: a kernel run as the entry is shown as itself, not as
        # the orch made for it (pto_signature_entry_name).
        self.entry: str = (sig.kernel_entry or sig.entry).decode()
        self.params: tuple[Param, ...] = tuple(params)
        self._codes = tuple((p.is_tensor, p.dir != "in", _PTO_NAMES.index(p.dtype),
                             p.bind == "literal", p.value) for p in params)
        self.is_host = bool(_c.pto_program_is_host(ptr))
        self.hid: int = _c.pto_program_hid(ptr)
        wd = _c.pto_program_work_dir(ptr)
        self.work_dir: str | None = wd.decode() if wd else None

    @classmethod
    def from_dir(cls, work_dir: str, rebuild: bool = True) -> "CompiledProgram":
        """Loads a work dir (pto compile -o DIR), rebuilding hand-edited parts first. A dir that
        is not there (or lacks a file a work dir has) is a pto.NotFoundError, also a
        FileNotFoundError, as PyPTO raises."""
        d = os.fsencode(work_dir)
        out = C.c_void_p()
        try:
            if rebuild:
                _check(_c.pto_program_rebuild_dir(d, None))
            _check(_c.pto_program_load_dir(d, C.byref(out)))
        except Error as e:
            if e.code == NOT_FOUND:
                raise NotFoundError(e.code, e.message) from None
            raise
        return cls(out.value)

    @property
    def device_ids(self) -> tuple[int, ...]:
        """A host (L3) program's device set (rank -> device id); () for an L2 program."""
        n = _c.pto_program_device_count(self._ptr) if self.is_host else 0
        return tuple(_c.pto_program_device_id(self._ptr, r) for r in range(n))

    @property
    def output_dir(self) -> str | None:
        """PyPTO's name of work_dir."""
        return self.work_dir

    @property
    def param_names(self) -> list[str]:
        """PyPTO's param_names: the entry's parameter names, in order."""
        return [p.name for p in self.params]

    @property
    def output_indices(self) -> list[int]:
        """PyPTO's output_indices: the indices of the pure `out` parameters."""
        return [i for i, p in enumerate(self.params) if p.dir == "out"]

    has_return = property(lambda self: False, doc="PyPTO's has_return: False, a pto entry "
                          "returns nothing (outputs are out parameters, written in place)")
    program = property(lambda self: None, doc="PyPTO's program (its IR): None, as PyPTO's "
                       "after from_dir; pto keeps no IR object")
    runtime_name = property(lambda self: "tensormap_and_ringbuffer",
                            doc="PyPTO's runtime_name: pto has one runtime, of this name")

    def load(self) -> None:
        """PyPTO's load(): a no-op, a pto program is loaded when compiled."""

    def __call__(self, *args: Any, config: "RunConfig | None" = None) -> None:
        """PyPTO's compiled(*args): one launch. An L2 program runs on this process's shared
        ChipWorker for config (opened on first use, closed at exit), or on the worker of a
        DeviceTensor among args; a host (L3) program opens a
        DistributedWorker over its device set, runs once and closes it."""
        if self.is_host:
            with DistributedWorker(self, config) as rt:
                rt(*args)
            return
        vals = _call_values(args)
        w = next((a._worker for a in (vals.values() if isinstance(vals, dict) else vals)
                  if isinstance(a, DeviceTensor)), None)  # a resident tensor's worker
        if w is None:  # the worker of an open `with ChipWorker(...)` block, as PyPTO's
            w = _active_worker(config)
        if w is not None:
            w.run(self, vals, config=config)
            return
        w, lock = _shared_worker(config or RunConfig())
        with lock:  # threads share this worker, which runs one launch at a time
            w.run(self, vals, config=config)

    def prepare(self, config: "RunConfig | None" = None, *,
                extra_compiled: Sequence["CompiledProgram"] = ()) -> "DistributedWorker":
        """PyPTO's compiled.prepare(): a DistributedWorker for this host program (and
        extra_compiled, of the same device set), to call as rt(*args) many times."""
        return DistributedWorker([self, *extra_compiled], config)

    def __del__(self) -> None:
        if getattr(self, "_ptr", None):
            _c.pto_program_release(self._ptr)
            self._ptr = None

    def __repr__(self) -> str:
        ps = ", ".join(f"{p.dir} {p.name}: {p.dtype}" + (f"[{p.rank}]" if p.is_tensor else "")
                       for p in self.params)
        return f"<pto.CompiledProgram {self.entry}({ps})>"


def _binding_value(v: Any) -> str:
    if v is RUNTIME:
        return "runtime"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return "x".join(str(int(d)) for d in v)
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return "-nan" if math.copysign(1.0, float(v)) < 0 else "nan"  # repr(-nan) is 'nan'
    return repr(v) if isinstance(v, float) else str(v)


def _device_list(devices: int | Sequence[int]) -> list[int]:
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        n = _int("devices", devices, 1, I32_MAX)
        return list(range(n))
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Iterable):
        raise _fail(f"devices must be a count or a list of device ids, got {devices!r}")
    ids = [_int(f"devices[{i}]", d, 0, I32_MAX) for i, d in enumerate(devices)]
    if not ids:
        raise _fail("devices is empty: give a count >= 1 or at least one device id")
    return ids


def compile(path_or_text: str | os.PathLike, entry: str | None = None, *,
            devices: int | Sequence[int] | None = None, opt_level: int = 2,
            work_dir: str | os.PathLike | None = None, **bindings: Any) -> CompiledProgram:
    """Compiles PTIR (a .ptir path, a work dir, or PTIR text) through the binary cache.

    A str without a line break that names an existing file or dir, or ends in .ptir, is a path;
    any other str is PTIR text (its messages name it <string>:LINE:COL).
    entry: the entry function (default: the single host, else the single orch); a kernel runs
    as one task, through an orch made for it (KERNEL_entry), and program.entry is still KERNEL.
    bindings: NAME=value specializes a scalar (pto.RUNTIME leaves it to run time; a tuple of
    ints is a sample shape of an unshaped tensor parameter: x=(64, 128)). devices: the device
    set of a host (L3) program, N (ids 0..N-1) or a list of ids. work_dir: also write the
    complete work dir there (pto compile -o DIR: the cache's entry copied in, hand-editable,
    loadable with CompiledProgram.from_dir) and load the program from it; a DIR that is not a
    work dir holding a name a work dir has (program.ptir, manifest.json, ...) is refused."""
    if not isinstance(path_or_text, (str, os.PathLike)) or isinstance(path_or_text, bytes):
        raise _fail(f"compile: the program is a .ptir path, a work dir or PTIR text (str), not "
                    f"{type(path_or_text).__name__}")
    if entry is not None and not isinstance(entry, str):
        raise _fail(f"compile: entry is a function name (str), not {type(entry).__name__}")
    src = os.fspath(path_or_text)
    if isinstance(src, bytes):
        raise _fail("compile: the program path is bytes; pass it as str")
    if os.path.isdir(src) and work_dir is None:
        if bindings or devices is not None:
            raise _fail("a work dir is compiled already: bindings and devices do not apply")
        return CompiledProgram.from_dir(src)
    opt_level = _int("opt_level", opt_level, 0, 3)
    ids = _device_list(devices) if devices is not None else None
    ir = C.c_void_p()
    if "\n" not in src and (os.path.exists(src) or src.endswith(".ptir")):
        _check(_c.pto_ir_parse_file(os.fsencode(src), C.byref(ir)))
    else:
        b = src.encode()
        _check(_c.pto_ir_parse_string(b, len(b), b"<string>", C.byref(ir)))
    try:
        _check(_c.pto_ir_verify(ir))
        opt = _c.CompileOptions()
        opt.sz, opt.platform, opt.opt_level = C.sizeof(opt), b"sim", opt_level
        opt.entry = entry.encode() if entry else None
        scal = [(k, v) for k, v in bindings.items() if not isinstance(v, (tuple, list))]
        samp = [(k, v) for k, v in bindings.items() if isinstance(v, (tuple, list))]
        for k, v in samp:
            for j, d in enumerate(v):
                _int(f"{k}[{j}] (a sample extent)", d, 0, I64_MAX)
        sa = (_c.Binding * max(1, len(scal)))(*[(k.encode(), _binding_value(v).encode())
                                               for k, v in scal])
        sm = (_c.Binding * max(1, len(samp)))(*[(k.encode(), _binding_value(v).encode())
                                               for k, v in samp])
        opt.scalars, opt.nscalars, opt.samples, opt.nsamples = sa, len(scal), sm, len(samp)
        if ids is not None:
            dv = (C.c_int32 * len(ids))(*ids)
            opt.devices, opt.ndevices = dv, len(ids)
        out = C.c_void_p()
        if work_dir is not None:
            wd = os.fsencode(work_dir)
            _check(_c.pto_compile_to_dir(ir, C.byref(opt), wd, 1))
            _check(_c.pto_program_load_dir(wd, C.byref(out)))
        else:
            _check(_c.pto_compile(ir, C.byref(opt), C.byref(out)))
        return CompiledProgram(out.value)
    finally:
        _c.pto_ir_program_destroy(ir)


# ---- arguments ----------------------------------------------------------------------------


def _host_tensor(ht: _c.HostTensor, a: np.ndarray, dt: int) -> None:
    if a.ndim > _c.MAX_RANK:
        raise _fail(f"an array of rank {a.ndim}: pto tensors have rank {_c.MAX_RANK} at most")
    shape = (C.c_int64 * max(1, a.ndim))(*a.shape)
    _c.pto_host_tensor_init(C.byref(ht), a.ctypes.data, dt, a.ndim, shape)


def _tensor_dtype(a: np.ndarray, want: int) -> int:
    dt = _NP2PTO.get(a.dtype, -1)
    if want == BF16 and dt == U16:
        return BF16  # bf16 travels as numpy uint16
    if want == INDEX and dt == 4:
        return INDEX
    if dt < 0:
        raise _fail(f"numpy dtype {a.dtype} has no pto dtype (the parameter is "
                    f"{_PTO_NAMES[want]})")
    return dt


_UNSET = object()


def _array_key(a: np.ndarray) -> tuple:
    """What a pto_arg made from a records of the array: an array changed in place (resized,
    re-strided, re-typed, its buffer swapped, made read-only) no longer has the same key."""
    return (a.shape, a.strides, a.dtype, a.ctypes.data, a.flags.writeable)


class _Slots:
    """One thread's packed arguments of one program: the pto_arg array, the objects each slot
    was made from (and the key of an array among them), contiguous copies of this call."""

    def __init__(self, n: int):
        self.args = (_c.Arg * max(1, n))()
        self.scalars = [self.args[i].scalar for i in range(n)]
        self.last: list[Any] = [_UNSET] * n
        self.keys: list[Any] = [None] * n
        self.keep: list[Any] = [None] * n


class _Packer:
    """Fills a pto_arg array per program and thread from Python arguments. An argument that is
    the very object of this thread's previous call in its slot keeps its pto_arg when it still
    matches it (an array's shape, strides, dtype, data pointer and writeability are compared: an
    array changed in place is packed and checked again): a loop that passes the same buffers pays
    for the changed scalars only. Each thread has its own array, so two threads calling one
    handle never launch with each other's pointers. Out/inout arrays that could not be passed in
    place are returned for copying back."""

    def __init__(self, prog: CompiledProgram):
        self.prog = prog
        self.n = len(prog.params)
        self._local = threading.local()

    def slots(self) -> _Slots:
        """This thread's slots (made on its first call)."""
        sl = getattr(self._local, "slots", None)
        if sl is None:
            sl = self._local.slots = _Slots(self.n)
        return sl

    @property
    def args(self) -> Any:
        """This thread's pto_arg array (of its last call)."""
        return self.slots().args

    def _bad(self, i: int, msg: str) -> Error:
        return _fail(f"{self.prog.entry}: argument {i} ('{self.prog.params[i].name}') {msg}")

    def pack(self, values: Sequence[Any] | dict) -> tuple[Any, list[tuple[np.ndarray, np.ndarray]]]:
        """(this thread's filled pto_arg array, the arrays to copy back after the launch)."""
        prog = self.prog
        if isinstance(values, dict):
            missing = [p.name for p in prog.params if p.name not in values and
                       not (not p.is_tensor and p.bind == "literal")]
            extra = set(values) - {p.name for p in prog.params}
            if missing or extra:
                raise _fail(f"{prog.entry}: missing arguments {missing}, unknown {sorted(extra)}")
            values = [values.get(p.name) for p in prog.params]
        if len(values) != self.n:
            raise _fail(f"{prog.entry} takes {self.n} arguments "
                        f"({', '.join(p.name for p in prog.params)}), got {len(values)}")
        sl = self.slots()
        back: list[tuple[np.ndarray, np.ndarray]] = []
        last, keys, codes = sl.last, sl.keys, prog._codes
        for i, v in enumerate(values):
            if v is last[i] and (keys[i] is None or keys[i] == _array_key(v)):
                continue
            last[i] = _UNSET
            keys[i] = None
            sl.keep[i] = None
            is_tensor, writes, dt, literal, lit_value = codes[i]
            if is_tensor:
                a = sl.args[i]
                if not isinstance(v, (np.ndarray, DeviceTensor)) and _is_torch(v) and \
                        hasattr(v, "numpy"):  # its memory; a torch tensor is not cached by identity
                    v = _from_torch(v)
                    last[i] = _UNSET
                if isinstance(v, np.ndarray):
                    arr = v
                    if not (v.flags.c_contiguous and v.flags.aligned):
                        arr = sl.keep[i] = np.ascontiguousarray(v)
                        if writes:
                            if not v.flags.writeable:
                                raise self._bad(i, "is written but read-only")
                            back.append((v, arr))
                    a.kind = _c.ARG_HOST
                    a.readonly = not arr.flags.writeable
                    _host_tensor(a.host, arr, _tensor_dtype(arr, dt))
                    if arr is v:
                        last[i], keys[i] = v, _array_key(v)
                elif isinstance(v, DeviceTensor):
                    a.kind = _c.ARG_DIST if isinstance(v, DistTensor) else _c.ARG_DEVICE
                    a.device = v._handle()
                    last[i] = v
                else:
                    raise self._bad(i, f"is a tensor: pass a numpy array or a device tensor, "
                                       f"not {type(v).__name__}")
            else:
                if isinstance(v, C._SimpleCData):  # PyPTO's ctypes scalars (c_float(2.5)), by
                    v = v.value                      # value: one changed in place is read again
                if v is None and literal:
                    v = lit_value
                if isinstance(v, (np.ndarray, DeviceTensor)) or v is None:
                    raise self._bad(i, f"is a scalar, got {type(v).__name__}")
                sl.args[i].kind = _c.ARG_SCALAR
                sc = sl.scalars[i]
                sc.dtype = dt
                v = _no_bool(f"{prog.entry}: argument {i} ('{prog.params[i].name}')", v, dt)
                if dt in _FLOATS:
                    if not isinstance(v, (int, float, np.integer, np.floating)):
                        raise self._bad(i, f"is a {_PTO_NAMES[dt]} scalar, got "
                                           f"{type(v).__name__} {v!r}")
                    sc.f = _float_arg(f"{prog.entry}: argument {i} ('{prog.params[i].name}', "
                                      f"{_PTO_NAMES[dt]})", v, dt)
                else:
                    lo, hi = _INT_RANGES[dt]
                    what = f"{prog.entry}: argument {i} ('{prog.params[i].name}', {_PTO_NAMES[dt]})"
                    if dt in (5, 6, 7, 8):
                        sc.u = _int(what, v, lo, hi)
                    else:
                        sc.i = _int(what, v, lo, hi)
                last[i] = v
        return sl.args, back


# ---- one chip (L2) ------------------------------------------------------------------------


@dataclass
class DistributedConfig:
    """PyPTO's DistributedConfig (pypto.ir): the device set of an L3 run. In a RunConfig's
    distributed_config it is DistributedWorker's devices= (checked against its programs') and
    pto.run's compile devices=; pto.compile itself takes devices=. num_sub_workers is 0 (pto's
    host programs have no Python sub-workers); runtime is kept as given."""
    device_ids: list[int] = dataclasses.field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"

    def __post_init__(self) -> None:
        self.device_ids = _device_list(self.device_ids)
        if len(set(self.device_ids)) != len(self.device_ids):
            raise _fail(f"DistributedConfig.device_ids must be distinct, got {self.device_ids}")
        if _int("DistributedConfig.num_sub_workers", self.num_sub_workers, 0, I32_MAX):
            raise _fail("DistributedConfig.num_sub_workers: pto's host programs have no Python "
                        "sub-workers; leave it 0")


@dataclass
class RunConfig:
    """pto_run_config, with PyPTO's RunConfig fields: platform "sim" (PyPTO's simulator names,
    "a2a3sim", "a5sim", ..., run on it too); device_id: the device (the simulator has one, any id
    selects it); cores 0 = the machine's online CPUs (a thread each, an AIC core and two AIV
    cores per thread, every thread running ready tasks of either type as a core of the task's
    type, so matmul work runs on every thread at once; strict_cores=True: the chip's strict model, a thread per core running only its type's
    tasks, the CPUs split a third AIC); rtol/atol: pto.run's comparison with a
    golden; enable_chip_swimlane (a level, or True) records every task of every launch
    (record_tasks) so ChipWorker.export_swimlane can write them, and at level 3 or more (True:
    the reference's bare flag, 4) each core's scheduler phases too, which
    export_swimlane_records writes as level 3; save_kernels_dir: the work dir
    pto.run compiles into; aic_cores / aiv_cores: the cores of each type (with cores 0 or their
    sum), threads: the threads that run them when strict_cores is False (0: one per core; fewer
    let a worker have as many cube cores as threads: aic_cores=2, aiv_cores=2, threads=2 runs
    two matmul tasks at once on two threads, where cores=2 has one AIC core; the default,
    cores 0, has a cube core per thread already)."""
    platform: str = "sim"  # PyPTO's first four fields, in its order (RunConfig(p, 0, rtol, atol))
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    cores: int = 0
    strict_cores: bool = False
    device_memory_bytes: int = 0
    record_tasks: bool = False
    enable_chip_swimlane: int | bool = 0
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    aic_cores: int = 0
    aiv_cores: int = 0
    threads: int = 0
    enable_dump_args: int = 0
    distributed_config: DistributedConfig | None = None

    @property
    def enable_l2_swimlane(self) -> int | bool:
        """PyPTO's former name of enable_chip_swimlane (deprecated there too)."""
        warnings.warn("RunConfig.enable_l2_swimlane is deprecated; use enable_chip_swimlane",
                      DeprecationWarning, stacklevel=2)
        return self.enable_chip_swimlane

    @enable_l2_swimlane.setter
    def enable_l2_swimlane(self, value: int | bool) -> None:
        warnings.warn("RunConfig.enable_l2_swimlane is deprecated; use enable_chip_swimlane",
                      DeprecationWarning, stacklevel=2)
        self.enable_chip_swimlane = value

    def __post_init__(self) -> None:
        # PyPTO's: a diagnostic output asked for keeps the work dir it is written into
        if self.any_dfx_enabled() and not self.save_kernels:
            self.save_kernels = True

    def any_dfx_enabled(self) -> bool:
        """PyPTO's: whether a diagnostic output is asked for (enable_chip_swimlane or
        enable_dump_args). RunConfig() then sets save_kernels, as PyPTO's does, so pto.run keeps
        the work dir the records and dumps are written into."""
        return bool(self.enable_chip_swimlane) or bool(self.enable_dump_args)

    def _platform(self) -> bytes:
        p = str(self.platform)
        return b"sim" if p.endswith("sim") else p.encode()

    def _c(self) -> _c.RunConfigC:
        _int("RunConfig.device_id", self.device_id, 0, I32_MAX)
        cfg = _c.RunConfigC()
        _c.pto_run_config_init(C.byref(cfg))
        cfg.platform = self._platform()
        cfg.ncores = _int("RunConfig.cores", self.cores, 0, I32_MAX)
        cfg.strict_cores = bool(self.strict_cores)
        cfg.aic_cores = _int("RunConfig.aic_cores", self.aic_cores, 0, I32_MAX)
        cfg.aiv_cores = _int("RunConfig.aiv_cores", self.aiv_cores, 0, I32_MAX)
        cfg.threads = _int("RunConfig.threads", self.threads, 0, I32_MAX)
        cfg.device_memory_bytes = _int("RunConfig.device_memory_bytes",
                                       self.device_memory_bytes, 0, U64_MAX)
        cfg.record_tasks = bool(self.record_tasks or self.enable_chip_swimlane)
        _int("RunConfig.enable_dump_args", self.enable_dump_args, 0, 3)
        return cfg


_RUN_CONFIG_INIT = RunConfig.__init__


@functools.wraps(_RUN_CONFIG_INIT)
def _run_config_init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    # PyPTO's former keyword enable_l2_swimlane= is still taken, as PyPTO takes it (warning)
    if "enable_l2_swimlane" in kwargs:
        if "enable_chip_swimlane" in kwargs:
            raise TypeError("RunConfig: pass enable_chip_swimlane, not also enable_l2_swimlane")
        warnings.warn("RunConfig(enable_l2_swimlane=) is deprecated; use enable_chip_swimlane=",
                      DeprecationWarning, stacklevel=2)
        kwargs["enable_chip_swimlane"] = kwargs.pop("enable_l2_swimlane")
    _RUN_CONFIG_INIT(self, *args, **kwargs)


RunConfig.__init__ = _run_config_init  # type: ignore[method-assign]


def _call_values(args: tuple) -> Any:
    """PyPTO's f(*args), or pto's f([args]) / f({name: arg})."""
    return args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, dict)) else args


def _host_ptr(what: str, host: Any, nbytes: int) -> int:
    """A host address: an int (PyPTO's data_ptr) or a numpy array (or CPU torch tensor) of at
    least nbytes."""
    host = _host_array(host)
    if isinstance(host, np.ndarray):
        if not host.flags.c_contiguous:
            raise _fail(f"{what}: the array must be C-contiguous")
        if host.nbytes < nbytes:
            raise _fail(f"{what}: the array has {host.nbytes} bytes, nbytes is {nbytes}")
        return host.ctypes.data
    return _int(what, host, 1, U64_MAX)


def _check_out(out: Any, t: Any) -> None:
    """An array a copy from the device tensor t writes into: of t's shape and dtype, C-contiguous
    and writable (a read-only array may be a view of an immutable bytes object or of a read-only
    mapping: writing it corrupts the one and kills the process on the other)."""
    if not isinstance(out, np.ndarray) or out.shape != t.shape or out.dtype != t.dtype or \
            not out.flags.c_contiguous or not out.flags.writeable:
        raise _fail(f"out must be a writable C-contiguous {list(t.shape)} {t.dtype} array")


def _out_array(given: Any, t: Any) -> np.ndarray:
    """The array a copy from the device tensor t writes into: a new one when given is None, else
    given's array (a torch tensor's too), checked by _check_out."""
    out = _host_array(given)
    if out is None:
        return np.empty(t.shape, t.dtype)
    _check_out(out, t)
    return out


class DeviceTensor:
    """A tensor resident on a ChipWorker (pto_device_tensor): PyPTO's DeviceTensor with shape,
    dtype (numpy; bf16 is uint16), nbytes and data_ptr (its device address)."""

    def __init__(self, worker: Any, ptr: int, shape: tuple[int, ...], dtype: int):
        self._worker, self._ptr, self.shape, self._dt = worker, ptr, shape, dtype

    def _handle(self) -> int:
        return self._ptr

    @property
    def dtype(self) -> np.dtype:
        return _PTO2NP[self._dt]

    np_dtype = dtype

    @property
    def pto_dtype(self) -> str:
        """The pto dtype's name ("f32", "bf16", ...)."""
        return _PTO_NAMES[self._dt]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    @property
    def data_ptr(self) -> int:
        """Its device address, for ChipWorker.copy_to/copy_from; kept after free_tensor, as
        PyPTO's (a copy by the address of a freed tensor is then refused)."""
        return int(_c.pto_device_tensor_addr(self._ptr)) or getattr(self, "_addr", 0)

    def __repr__(self) -> str:
        return f"<pto.{type(self).__name__} {list(self.shape)} {self.pto_dtype}>"


def _init_array(shape: tuple[int, ...], dt: int, init: Any) -> np.ndarray | None:
    if init is None:
        return None
    init = _host_array(init)
    if not isinstance(init, np.ndarray) and np.ndim(init) == 0:
        return np.full(shape, _scalar_elem(dt, init), _PTO2NP[dt])
    a = np.asarray(init)
    want = _PTO2NP[dt]
    if a.dtype != want:
        raise _fail(f"init has dtype {a.dtype}, the tensor is {_PTO_NAMES[dt]} (numpy {want})")
    if a.shape != shape:
        raise _fail(f"init has shape {list(a.shape)}, the tensor is {list(shape)}")
    return np.ascontiguousarray(a)


def _scalar_elem(dt: int, v: Any) -> Any:
    """A Python or numpy number as one element of dtype dt (bf16: its bits), held to the dtype as
    a runtime scalar argument is (an i8 of 300, a float for an integer, 1e39 for f32: a
    pto.Error) and converted as C converts one (pto_elem_store)."""
    sc = _c.Scalar()
    sc.dtype = dt
    what = f"init (a {_PTO_NAMES[dt]} scalar)"
    v = _no_bool("init", v, dt)
    if dt in _FLOATS:
        if not isinstance(v, (int, float, np.integer, np.floating)):
            raise _fail(f"{what} must be a number, got {type(v).__name__} {v!r}")
        sc.f = _float_arg(what, v, dt)
    else:
        lo, hi = _INT_RANGES[dt]
        if dt in (5, 6, 7, 8):
            sc.u = _int(what, v, lo, hi)
        else:
            sc.i = _int(what, v, lo, hi)
    one = np.zeros(1, _PTO2NP[dt])
    _c.pto_elem_store(dt, one.ctypes.data, 0, sc)
    return one[0]


def _shape(shape: Iterable[int] | int) -> tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (int, np.integer, Iterable)):
        raise _fail(f"shape is a tuple of ints (or an int), not {type(shape).__name__} {shape!r}")
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return tuple(_int(f"shape[{i}]", d, 0, I64_MAX) for i, d in enumerate(dims))


class RunHandle:
    """A submitted launch (Callable.submit, ChipWorker.submit) or L3 run
    (DistributedWorker.submit), a pto_completion: done, result()/wait() (raise the run's error,
    and copy back out arrays that could not be written in place). Waiting again returns the same
    outcome (raises the same error) without waiting. The arguments stay referenced until it is
    consumed; inputs must not change and outputs are written by then. A handle dropped unwaited
    waits for its run as it is collected (the run uses the arrays it keeps alive)."""

    def __init__(self, ptr: int, back: list, keep: Any):
        self._ptr, self._back, self._keep = ptr, back, keep
        self._error: Error | None = None
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        with self._lock:
            return self._ptr is None or bool(_c.pto_completion_poll(self._ptr))

    def result(self, timeout: float | None = None) -> None:
        """Waits for the launch (timeout: seconds, None without a deadline; TimeoutError after
        it, and the handle stays waitable)."""
        if timeout is not None:
            deadline, ev = time.monotonic() + float(timeout), threading.Event()
            while not self.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the launch has not ended after {timeout} s")
                ev.wait(min(left, 0.001))
        with self._lock:
            if self._ptr is None:
                if self._error is not None:
                    raise self._error
                return
            ptr, self._ptr = self._ptr, None
        try:
            _check(_c.pto_completion_wait(ptr))
        except Error as e:
            self._error = e
            raise
        finally:
            self._keep = None
        for dst, src in self._back:
            dst[...] = src

    wait = result

    def __del__(self) -> None:
        # A handle dropped before its run ended: the run still reads and writes the arrays this
        # handle keeps alive, so it is waited for (its outcome dropped), never discarded early.
        ptr = getattr(self, "_ptr", None)
        if ptr:
            self._ptr = None
            if self._keep is not None and not _c.pto_completion_poll(ptr):
                _c.pto_status_free(_c.pto_completion_wait(ptr))
            else:
                _c.pto_completion_discard(ptr)


class Callable:
    """A registered program (pto_handle, PyPTO's RegistrationHandle): call it with the entry's
    arguments, or submit them."""

    def __init__(self, worker: "ChipWorker", prog: CompiledProgram, ptr: int):
        self._worker, self.program, self._ptr = worker, prog, ptr
        self._packer = _Packer(prog)
        self._closed = False

    compiled = property(lambda self: self.program)
    closed = property(lambda self: self._closed,
                      doc="True after unregister() or the worker's close() (PyPTO's closed)")

    @property
    def callable_id(self) -> int:
        return _c.pto_handle_callable_id(self._ptr)

    cid = callable_id

    def __call__(self, *args: Any, config: RunConfig | None = None) -> None:
        """One launch; config: this launch's settings, as in ChipWorker.run(config=)."""
        if config is not None:
            self._worker.run(self.program, *args, config=config)
            return
        args_c, back = self._packer.pack(_call_values(args))
        _check(_c.pto_handle_call(self._ptr, args_c, self._packer.n))
        for dst, src in back:
            dst[...] = src

    def submit(self, *args: Any) -> RunHandle:
        """Queues one launch and returns at once (pto_handle_submit): the host may prepare the
        next batch while it runs."""
        vals = _call_values(args)
        args_c, back = self._packer.pack(vals)
        # the arrays and this call's contiguous copies stay alive until the launch ends (the
        # next call of this thread replaces the packer's copies)
        keep = (vals, list(self._packer.slots().keep))
        out = C.c_void_p()
        _check(_c.pto_handle_submit(self._ptr, args_c, self._packer.n, C.byref(out)))
        return RunHandle(out.value, back, keep)

    def unregister(self) -> None:
        """Unregisters (again: a no-op); calling it afterwards raises pto.Error (a stale
        handle)."""
        if not self._closed:
            self._closed = True
            _c.pto_handle_unregister(self._ptr)

    def __enter__(self) -> "Callable":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()


_SHARED: dict[tuple, tuple["ChipWorker", threading.Lock]] = {}
_SHARED_LOCK = threading.Lock()


def _shared_worker(config: RunConfig) -> tuple["ChipWorker", threading.Lock]:
    """The ChipWorker compiled(*args) runs on, one per (platform, device_id, cores, memory),
    and the lock its launches take."""
    key = (config._platform(), config.device_id, config.cores, config.device_memory_bytes,
           config.aic_cores, config.aiv_cores, config.threads, config.strict_cores)
    with _SHARED_LOCK:
        wl = _SHARED.get(key)
        if wl is None or not wl[0]._ptr:
            wl = _SHARED[key] = (ChipWorker(config), threading.Lock())
        return wl


@atexit.register
def _close_shared() -> None:
    for w, _ in _SHARED.values():
        w.close()
    _SHARED.clear()


# The ChipWorkers whose `with` blocks are open in this context, innermost last: compiled(*args)
# and pto.run find the worker they run on here (PyPTO's ChipWorker.current).
_ACTIVE_WORKERS: ContextVar[tuple["ChipWorker", ...]] = ContextVar("pto_active_workers",
                                                                  default=())


def _user_work_dir(program: CompiledProgram) -> str | None:
    """The program's work dir when it is the user's (pto.compile(..., work_dir=), from_dir), not
    an entry of the binary cache's; else None."""
    if program.work_dir is None:
        return None
    from . import cache  # noqa: PLC0415
    cdir = os.path.realpath(cache.dir())
    own = os.path.realpath(program.work_dir)
    return None if os.path.commonpath([cdir, own]) == cdir else program.work_dir


def _dump_dir(program: CompiledProgram, config: RunConfig) -> str:
    """Where enable_dump_args writes: PyPTO's <output_dir>/dfx_outputs/args_dump."""
    wd = config.save_kernels_dir if config.save_kernels and config.save_kernels_dir else None
    if wd is None:
        wd = _user_work_dir(program)
    if wd is None:
        raise _fail("enable_dump_args writes into the program's work dir: compile it with "
                    "pto.compile(..., work_dir=DIR), or set RunConfig(save_kernels=True, "
                    "save_kernels_dir=DIR) (a program from the binary cache has none)")
    return os.path.join(wd, "dfx_outputs", "args_dump")


def _active_worker(config: RunConfig | None) -> "ChipWorker | None":
    """The worker of the innermost open `with ChipWorker(...)` block whose platform and device
    match config's (config None: any), or None."""
    for w in reversed(_ACTIVE_WORKERS.get()):
        if w.initialized and (config is None or (
                w.config._platform() == config._platform() and
                w.config.device_id == config.device_id)):
            return w
    return None


class Worker(abc.ABC):
    """PyPTO's Worker: the base of ChipWorker (L2, one chip) and DistributedWorker (L3), for
    code that takes either (`def serve(w: pto.Worker)`, `isinstance(w, pto.Worker)`). Both have
    malloc, free, copy_to, copy_from, alloc_tensor, free_tensor, run, register and close; it is
    not made itself."""

    @abc.abstractmethod
    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int: ...

    @abc.abstractmethod
    def free(self, ptr: int, *, worker_id: int = 0) -> None: ...

    @abc.abstractmethod
    def copy_to(self, dst: Any, src: Any, nbytes: int | None = None, *,
                worker_id: int = 0) -> None: ...

    @abc.abstractmethod
    def copy_from(self, dst: Any, src: Any = None, nbytes: int | None = None, *,
                  out: np.ndarray | None = None, worker_id: int = 0) -> Any: ...

    @abc.abstractmethod
    def run(self, program: CompiledProgram, *args: Any, config: RunConfig | None = None) -> None:
        ...

    @abc.abstractmethod
    def register(self, program: CompiledProgram) -> Any: ...


class ChipWorker(Worker):
    """One chip (pto_worker): device tensors, registered programs, launches. PyPTO's
    ChipWorker(config, *, level=2, runtime=, enable_sdma=, auto_init=): level is 2 (a host
    program runs on a DistributedWorker); runtime and enable_sdma are PyPTO's names of the
    reference runtime's variants, which pto has one of, and are kept as given; auto_init=False
    leaves the chip unopened until init(). Inside `with ChipWorker(cfg) as w:`,
    compiled(*args) and pto.run(compiled, ...) run on w when their config is None or names w's
    platform and device_id, as PyPTO reuses an active worker."""

    def __init__(self, config: RunConfig | None = None, *, level: int = 2,
                 runtime: str = "tensormap_and_ringbuffer", enable_sdma: bool = False,
                 auto_init: bool | None = None):
        self._ptr: int | None = None
        self._opened = False
        if config is not None and not isinstance(config, RunConfig):
            raise _fail(f"ChipWorker: config is a pto.RunConfig, not {type(config).__name__}")
        if level != 2:
            raise _fail(f"ChipWorker: level is 2, got level={level!r} (a host program, level 3, "
                        "runs on a pto.DistributedWorker)")
        self.config = config or RunConfig()
        self._level, self._runtime, self._enable_sdma = level, str(runtime), bool(enable_sdma)
        self._tokens: list[Any] = []
        self._packers: dict[int, _Packer] = {}
        self._handles: dict[int, Callable] = {}
        self._malloced: dict[int, DeviceTensor] = {}
        self._registered: weakref.WeakSet[Callable] = weakref.WeakSet()
        self._loaded: set[int] = set()  # the programs loaded on this chip (dlopen counts)
        if auto_init is None or auto_init:
            self.init()

    def init(self) -> None:
        """Opens the chip (pto_worker_open); a no-op while it is open. After close(), init()
        opens a new one (tensors and registrations of the old one stay invalid)."""
        if self._ptr:
            return
        cfg = self.config._c()
        out = C.c_void_p()
        _check(_c.pto_worker_open(C.byref(cfg), C.byref(out)))
        self._ptr = out.value
        self._opened = True
        self._loaded = set()
        if self._swimlane_level() >= 3:
            _check(_c.pto_worker_set_record_phases(self._ptr, True))

    def _w(self) -> int:
        if not self._ptr:
            if not self._opened:
                raise _fail("the worker is not initialized (auto_init=False): call init() or "
                            "use `with ChipWorker(...) as w:`", FAILED_PRECONDITION)
            raise _fail("the worker is closed", FAILED_PRECONDITION)
        return self._ptr

    @property
    def cores(self) -> int:
        return _c.pto_worker_core_count(self._w())

    @property
    def committed_device_memory(self) -> int:
        """simpler's ChipWorker.committed_device_memory: the device bytes this chip's live
        allocations hold (pto_worker_memory_info's used: tensors and malloc, each rounded up to
        64 bytes; the arena is address space committed as it is used)."""
        mi = _c.DeviceMemoryInfo()
        _check(_c.pto_worker_memory_info(self._w(), C.byref(mi)))
        return int(mi.used)

    @property
    def aicpu_dlopen_count(self) -> int:
        """PyPTO's aicpu_dlopen_count: the programs this chip has loaded since it opened (a
        program's kernels and orch are loaded once, at its first register or run; calls of the
        handle load nothing)."""
        return len(self._loaded)

    host_dlopen_count = aicpu_dlopen_count
    platform = property(lambda self: self.config.platform)
    device_id = property(lambda self: self.config.device_id)
    level = property(lambda self: self._level)
    runtime = property(lambda self: self._runtime)
    initialized = property(lambda self: bool(self._ptr))

    @classmethod
    def current(cls, *, level: int = 2, platform: str | None = None,
                device_id: int | None = None, runtime: str | None = None,
                require_sdma: bool = False) -> "ChipWorker | None":
        """The innermost open worker of a `with ChipWorker(...)` block in this context whose
        binding matches (None: any), or None."""
        for w in reversed(_ACTIVE_WORKERS.get()):
            if w.initialized and w._level == level and \
                    (platform is None or w.platform == platform) and \
                    (device_id is None or w.device_id == device_id) and \
                    (runtime is None or w._runtime == runtime):
                if require_sdma and not w._enable_sdma:
                    raise _fail("the active ChipWorker was made without enable_sdma=True",
                                FAILED_PRECONDITION)
                return w
        return None

    def close(self) -> None:
        if getattr(self, "_ptr", None):
            for h in list(self._registered):
                h._closed = True
            # cleared first: a KeyboardInterrupt landing as the C call returns leaves a closed
            # worker, never one whose collection would close it a second time
            ptr, self._ptr = self._ptr, None
            _c.pto_worker_close(ptr)
            self._packers.clear()
            self._handles.clear()
            self._malloced.clear()

    def __enter__(self) -> "ChipWorker":
        binding = (self._level, self.platform, self.device_id, self._runtime)
        if any(o.initialized and
               (o._level, o.platform, o.device_id, o._runtime) == binding
               for o in _ACTIVE_WORKERS.get()):
            raise _fail(f"a ChipWorker of (level={binding[0]}, platform={binding[1]!r}, "
                        f"device_id={binding[2]}, runtime={binding[3]!r}) is open in an "
                        "enclosing `with` block: use that one, as PyPTO refuses a second one "
                        "of the same binding")
        self.init()
        self._tokens.append(_ACTIVE_WORKERS.set(_ACTIVE_WORKERS.get() + (self,)))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tokens:
            _ACTIVE_WORKERS.reset(self._tokens.pop())
        self.close()

    def __del__(self) -> None:
        self.close()

    def alloc_tensor(self, shape: Iterable[int] | int, dtype: Any = np.float32,
                     init: Any = None, *, worker_id: int = 0) -> DeviceTensor:
        """A resident tensor (PyPTO's alloc_tensor; worker_id 0, the chip, as PyPTO's)."""
        _int("worker_id", worker_id, 0, 0)
        shp, dt = _shape(shape), _pto_dtype(dtype)
        a = _init_array(shp, dt, init)
        out = C.c_void_p()
        _check(_c.pto_worker_alloc_tensor(self._w(), len(shp), (C.c_int64 * max(1, len(shp)))(*shp),
                                          dt, None if a is None else a.ctypes.data, C.byref(out)))
        t = DeviceTensor(self, out.value, shp, dt)
        t._addr = t.data_ptr
        return t

    def free_tensor(self, t: DeviceTensor, *, worker_id: int = 0) -> None:
        """Frees t; idempotent, as PyPTO's: a second free, or one after close() (which freed
        every tensor of the worker), does nothing. A tensor of another worker is refused."""
        _int("worker_id", worker_id, 0, 0)
        if not isinstance(t, DeviceTensor):
            raise _fail(f"free_tensor: t is a DeviceTensor, not {type(t).__name__}")
        if t._worker is self and not self._ptr:
            return
        _check(_c.pto_worker_free_tensor(self._w(), t._ptr))

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """PyPTO's malloc: nbytes of device memory; returns its device address."""
        _int("worker_id", worker_id, 0, 0)
        t = self.alloc_tensor((_int("nbytes", nbytes, 1, I64_MAX),), np.uint8)
        self._malloced[t.data_ptr] = t
        return t.data_ptr

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        """Frees what malloc returned."""
        _int("worker_id", worker_id, 0, 0)
        t = self._malloced.pop(_int("ptr", ptr, 0, U64_MAX), None)
        if t is None:
            raise _fail(f"free: {ptr:#x} is not an address malloc returned (or it was freed)")
        self.free_tensor(t)

    def _addr(self, t: DeviceTensor) -> int:
        addr = _c.pto_device_tensor_addr(t._ptr)
        if not addr:
            raise _fail(f"{t!r} was freed (or belongs to a closed worker)", FAILED_PRECONDITION)
        return addr

    def copy_to(self, dst: Any, src: Any, nbytes: int | None = None, *,
                worker_id: int = 0) -> None:
        """copy_to(tensor, array): uploads array (t's shape and numpy dtype) into tensor.
        PyPTO's copy_to(dst_dev_ptr, src_host_ptr, nbytes): nbytes from a host address (or
        array) to a device address (a DeviceTensor's data_ptr, or what malloc returned)."""
        if isinstance(dst, DeviceTensor):
            a = _init_array(dst.shape, dst._dt, src)
            _check(_c.pto_worker_copy_to(self._w(), self._addr(dst), a.ctypes.data, a.nbytes))
            return
        _int("worker_id", worker_id, 0, 0)
        n = _int("nbytes", nbytes, 0, I64_MAX)
        _check(_c.pto_worker_copy_to(self._w(), _int("dst_dev_ptr", dst, 1, U64_MAX),
                                     _host_ptr("src_host_ptr", src, n), n))

    def copy_from(self, dst: Any, src: Any = None, nbytes: int | None = None, *,
                  out: np.ndarray | None = None, worker_id: int = 0) -> Any:
        """copy_from(tensor, out=None): reads tensor back into a new array (or into out).
        PyPTO's copy_from(dst_host_ptr, src_dev_ptr, nbytes): nbytes from a device address to a
        host address (or array)."""
        if isinstance(dst, DeviceTensor):
            t = dst
            given = src if out is None else out  # returned as given (a torch tensor too)
            out = _out_array(given, t)
            _check(_c.pto_worker_copy_from(self._w(), out.ctypes.data, self._addr(t),
                                           out.nbytes))
            return out if given is None else given
        _int("worker_id", worker_id, 0, 0)
        n = _int("nbytes", nbytes, 0, I64_MAX)
        if isinstance(dst, np.ndarray) and not dst.flags.writeable:
            raise _fail("copy_from: dst_host_ptr is a read-only array")
        _check(_c.pto_worker_copy_from(self._w(), _host_ptr("dst_host_ptr", dst, n),
                                       _int("src_dev_ptr", src, 1, U64_MAX), n))
        return None

    def set_dump_args(self, level: int, directory: str | os.PathLike | None = None) -> None:
        """The reference runtime's argument dump from the next launch on
        (pto_worker_set_dump_args): level 0 off, 1 the arguments CoreTaskArgs::dump marks, 2
        every argument with its data, 3 every argument, data for the marked only; each launch
        writes directory/args_dump.json and args.bin, as simpler's dump_viewer reads them."""
        d = None if directory is None else os.fsencode(directory)
        _check(_c.pto_worker_set_dump_args(self._w(), level, d))

    def register(self, program: CompiledProgram) -> Callable:
        out = C.c_void_p()
        _check(_c.pto_worker_register(self._w(), program._ptr, C.byref(out)))
        self._loaded.add(program._ptr)
        h = Callable(self, program, out.value)
        self._registered.add(h)
        return h

    def _packer(self, program: CompiledProgram) -> _Packer:
        p = self._packers.get(id(program))
        if p is None or p.prog is not program:
            p = self._packers[id(program)] = _Packer(program)
        return p

    def run(self, program: CompiledProgram, *args: Any, config: RunConfig | None = None) -> None:
        """One launch (registering program on first use); out/inout arrays are written.
        run(prog, *args) as PyPTO, or run(prog, [args]) / run(prog, {name: arg}). config: this
        launch's settings where they differ from the worker's (its task recording,
        enable_chip_swimlane / record_tasks; the worker's own setting is restored after).
        enable_dump_args (of config, else of the worker's config) dumps the launch's arguments
        as PyPTO does, into <work dir>/dfx_outputs/args_dump/ (args_dump.json, args.bin; the
        work dir is save_kernels_dir with save_kernels, else the program's work_dir=; a program
        loaded from the binary cache has none to write into: a pto.Error says so)."""
        if not isinstance(program, CompiledProgram):
            raise _fail(f"run: the first argument is the program, not {type(program).__name__}")
        p = self._packer(program)
        args_c, back = p.pack(_call_values(args))
        rec = self.config._c().record_tasks
        once = config is not None and config._c().record_tasks != rec
        dump = (config or self.config).enable_dump_args
        dump_dir = _dump_dir(program, config or self.config) if dump else None
        if once:
            _check(_c.pto_worker_set_record_tasks(self._w(), not rec))
        try:
            if dump_dir is not None:
                _check(_c.pto_worker_set_dump_args(self._w(), dump, os.fsencode(dump_dir)))
            _check(_c.pto_worker_run(self._w(), program._ptr, args_c, p.n))
            self._loaded.add(program._ptr)
        finally:
            if once:
                _check(_c.pto_worker_set_record_tasks(self._w(), rec))
            if dump_dir is not None:
                _check(_c.pto_worker_set_dump_args(self._w(), 0, os.fsencode(dump_dir)))
        for dst, src in back:
            dst[...] = src

    def submit(self, program: CompiledProgram, *args: Any) -> RunHandle:
        """One launch queued on the worker's dispatcher (registering program on first use)."""
        h = self._handles.get(id(program))
        if h is None or h.program is not program:
            h = self._handles[id(program)] = self.register(program)
        self._w()
        return h.submit(*args)

    def last_launch(self) -> dict[str, Any]:
        """The spans of the last launch: {"inv", "ntasks", "ok", "spans": {name: dur_us}}."""
        rec = _c.LaunchRecord()
        _check(_c.pto_worker_last_launch(self._w(), C.byref(rec)))
        return {"inv": rec.inv, "ntasks": rec.ntasks, "ok": rec.ok,
                "spans": {rec.spans[i].name.decode(): rec.spans[i].dur_ns / 1e3
                          for i in range(rec.nspans)}}

    def _last_tasks(self) -> tuple[_c.LaunchRecord, int, int]:
        rec = _c.LaunchRecord()
        _check(_c.pto_worker_last_launch(self._w(), C.byref(rec)))
        tasks, n = C.c_void_p(), C.c_size_t()
        _check(_c.pto_worker_last_launch_tasks(self._w(), C.byref(tasks), C.byref(n)))
        return rec, tasks.value, n.value

    def export_swimlane(self, path: str | os.PathLike) -> None:
        """The last launch as a Chrome trace-event file (Perfetto): its spans and every task on
        its core's track, with dependency arrows. Needs RunConfig(enable_chip_swimlane=...) (or
        record_tasks)."""
        rec, tasks, n = self._last_tasks()
        _check(_c.pto_swimlane_write_launch(os.fsencode(path), C.byref(rec), tasks, n))

    def _swimlane_level(self) -> int:
        lv = self.config.enable_chip_swimlane
        return 4 if lv is True else int(lv or 0)

    def export_swimlane_records(self, out_dir: str | os.PathLike) -> str:
        """PyPTO's capture of the last launch, the files pto run --swimlane-records writes (the
        same C code): out_dir/chip_swimlane_records.json, deps.json, func_names.json and
        name_map.json (the same names again, where the reference's critical_path looks);
        returns out_dir. Its level is RunConfig.enable_chip_swimlane's, at most 3 (with the
        scheduler phases, when the launch recorded them), 2 when not given."""
        ph, nph = C.c_void_p(), C.c_size_t()
        st = _c.pto_worker_last_launch_phases(self._w(), C.byref(ph), C.byref(nph))
        if st:
            _c.pto_status_free(st)
        level = min(self._swimlane_level() or 2, 3 if not st else 2)
        os.makedirs(out_dir, exist_ok=True)
        d = os.fspath(out_dir)
        _check(_c.pto_swimlane_write_worker_records(
            self._w(), os.fsencode(os.path.join(d, "chip_swimlane_records.json")), level))
        return d


# ---- benchmarks ---------------------------------------------------------------------------

_SPREADS = ("stdev", "minmax", "both", "none")


class _Us(float):
    """Microseconds that may also be called: PyPTO reads inv.device_wall_us as a property, and
    inv.device_wall_us() works as well."""

    def __call__(self) -> float:
        return float(self)


def _stat(values: list[float], k: str) -> float:
    v = [x for x in values if x == x]
    if not v:
        return 0.0
    return {"min": min, "max": max, "median": statistics.median, "mean": statistics.fmean,
            "stdev": lambda x: statistics.stdev(x) if len(x) > 1 else 0.0}[k](v)


@dataclass
class TraceSpan:
    """One span of a launch's tree (PyPTO's TraceSpan): name (dotted), depth, ts and dur (ns:
    ts from the launch's first span of the same clock), attrs ("clk=dev" for a device span);
    tid is 0 (pto records no thread). In a mean tree (mean_invocation) dur and ts are means."""
    pid: int
    tid: int
    inv: int
    hid: str
    depth: int
    name: str
    ts: int
    dur: int
    attrs: str

    @property
    def is_device(self) -> bool:
        return "clk=dev" in self.attrs

    @property
    def dur_us(self) -> float:
        return self.dur / 1000.0


def _bench_tree(stats_ptr: int, launch: int | None) -> C.c_void_p:
    """A pto_bench_stats' mean tree (launch None) or one launch's tree; the caller destroys it
    with pto_bench_tree_destroy."""
    tree = C.c_void_p()
    if launch is None:
        _check(_c.pto_bench_stats_mean_tree(stats_ptr, C.byref(tree)))
    else:
        _check(_c.pto_bench_stats_launch_tree(stats_ptr, _int("launch", launch, 0, I32_MAX),
                                              C.byref(tree)))
    return tree


def _tree_spans(stats_ptr: int, launch: int | None, pid: int, inv: int,
                hid: str) -> list[TraceSpan]:
    """The nodes of a pto_bench_stats' launch tree (launch None: its mean tree) as TraceSpans,
    in the tree's order (pre-order)."""
    tree = _bench_tree(stats_ptr, launch)
    try:
        t = C.cast(tree, C.POINTER(_c.BenchTree)).contents
        return [TraceSpan(pid, 0, inv, hid, n.depth, n.name.decode(), int(round(n.start_ns)),
                          int(round(n.mean_us * 1000)), "clk=dev" if n.is_device else "")
                for n in (t.nodes[k] for k in range(t.nnodes))]
    finally:
        _c.pto_bench_tree_destroy(tree)


class Invocation:
    """One measured launch (PyPTO's TraceInvocation): device_wall_us, host_wall_us,
    effective_us (µs), format_tree(), and its spans (TraceSpan: spans, root(), by_name())."""

    def __init__(self, render: Any, device: float, host: float, effective: float,
                 pid: int = 0, inv: int = 0, hid: str = "", spans: Any = None):
        self._render = render  # () -> its span tree, rendered
        self._spans_fn = spans  # () -> its TraceSpans
        self._spans: list[TraceSpan] | None = None
        self.device_wall_us, self.host_wall_us = _Us(device), _Us(host)
        self.effective_us = _Us(effective)
        self.pid, self.inv, self.hid = pid, inv, hid

    task = property(lambda self: self.hid)
    task_name = property(lambda self: self.hid)

    @property
    def spans(self) -> list[TraceSpan]:
        if self._spans is None:
            self._spans = self._spans_fn() if self._spans_fn else []
        return self._spans

    def root(self) -> TraceSpan | None:
        """The depth-0 span (chip.run), or None."""
        return next((s for s in self.spans if s.depth == 0), None)

    def by_name(self) -> dict[str, TraceSpan]:
        """span name -> its first span."""
        m: dict[str, TraceSpan] = {}
        for sp in self.spans:
            m.setdefault(sp.name, sp)
        return m

    def format_tree(self, *, us: bool = True, value_fn: Any = None) -> str:
        """The launch's span tree (`|-` / `` `- `` connectors, [dev] on device spans), as
        pto_bench_stats_launch_tree renders it; value_fn(span) -> [str, ...] gives each span's
        value columns instead of its duration, as PyPTO's (right-aligned under each other)."""
        if value_fn is None:
            return self._render()
        by_name = self.by_name()
        kids: dict[str | None, list[str]] = {}
        for name in by_name:  # a span's parent: its longest proper dotted prefix among them
            parts = name.split(".")
            parent = next((".".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)
                           if ".".join(parts[:k]) in by_name), None)
            kids.setdefault(parent, []).append(name)
        rows: list[tuple[str, list[str]]] = []

        def walk(parent: str | None, lead: str) -> None:
            names = sorted(kids.get(parent, []), key=lambda n: by_name[n].ts)
            for i, n in enumerate(names):
                last = i == len(names) - 1
                sp = by_name[n]
                label = n if parent is None else n[len(parent) + 1:]
                branch = "" if parent is None else ("`- " if last else "|- ")
                rows.append((lead + branch + label + (" [dev]" if sp.is_device else ""),
                             [str(v) for v in value_fn(sp)]))
                walk(n, lead if parent is None else lead + ("   " if last else "|  "))

        walk(None, "")
        width = max((len(r[0]) for r in rows), default=0)
        ncol = max((len(r[1]) for r in rows), default=0)
        cw = [max((len(r[1][c]) for r in rows if c < len(r[1])), default=0) for c in range(ncol)]
        return "\n".join((lab.ljust(width) + "".join(
            "  " + v.rjust(cw[c]) for c, v in enumerate(vals))).rstrip() for lab, vals in rows)

    def __repr__(self) -> str:
        return (f"<pto.Invocation device_wall_us={float(self.device_wall_us):.2f} "
                f"host_wall_us={float(self.host_wall_us):.2f}>")


class BenchmarkStats:
    """pto_benchmark's statistics with PyPTO's names (µs): device_wall_us, host_wall_us
    (per-round lists; samples is device_wall_us), invocations (one per measured launch),
    device_us_* / device_wall_us_* / host_wall_us_* / effective_us_* (min, median, mean, max,
    stdev), per_round(metric), and the L3-only views (per_rank, per_dispatch, dispatch_groups,
    dispatch_tasks: empty here)."""

    def __init__(self, ptr: int):
        self._ptr = ptr
        out = C.c_void_p()
        _check(_c.pto_bench_stats_to_json(ptr, C.byref(out)))
        self.json: dict[str, Any] = json.loads(_c.take_string(out.value))
        j = self.json
        self.rounds: int = j["rounds"]
        self.warmup: int = j["warmup"]
        self.ntasks: int = j["ntasks"]
        self.ncores: int = j["ncores"]
        nan = float("nan")
        sm = j["samples"]
        per = {m: [(sm[m][i] if sm[m][i] is not None else nan) for i in range(self.rounds)]
               for m in ("device_wall", "host_wall", "effective")}
        self.device_wall_us: list[float] = per["device_wall"]
        self.host_wall_us: list[float] = per["host_wall"]
        self.effective_wall_us: list[float] = per["effective"]
        self.invocations: list[Invocation] = [
            Invocation(functools.partial(self._launch_tree, i), per["device_wall"][i],
                       per["host_wall"][i], per["effective"][i], inv=i,
                       spans=functools.partial(self._launch_spans, i))
            for i in range(self.rounds)]
        self.round_samples: list[dict[str, float]] = [
            {f"{m}_us": per[m][i] for m in per} for i in range(self.rounds)]
        for metric in ("device_wall", "host_wall", "effective"):
            s = j["summary"][metric]
            for k in ("min", "median", "mean", "max", "stdev"):
                setattr(self, f"{metric}_us_{k}", s[k] if s["count"] else nan)
        self.rounds_dispatches: list = []
        self.fallback_flattened = False
        self.unstable_dispatch_slots = False

    device_wall_us_median: float
    device_wall_us_min: float
    host_wall_us_median: float
    host_wall_us_min: float

    samples = property(lambda self: self.device_wall_us)
    device_us_min = property(lambda self: _stat(self.device_wall_us, "min"))
    device_us_median = property(lambda self: _stat(self.device_wall_us, "median"))
    device_us_mean = property(lambda self: _stat(self.device_wall_us, "mean"))
    device_us_max = property(lambda self: _stat(self.device_wall_us, "max"))
    device_us_stdev = property(lambda self: _stat(self.device_wall_us, "stdev"))

    @property
    def all_zero_device(self) -> bool:
        """Every measured launch's device wall is 0 (or missing): no device time was recorded."""
        return all(not (v > 0) for v in self.device_wall_us)

    def per_round(self, metric: str = "device") -> list[float]:
        """The per-round samples of metric (device, host, effective; union, the L3 cross-rank
        window, is [] here, as PyPTO's L2 gives)."""
        m = {"device": self.device_wall_us, "host": self.host_wall_us,
             "effective": self.effective_wall_us, "union": []}.get(metric)
        if m is None:
            raise _fail(f"per_round: metric must be device, host, effective or union, not "
                        f"{metric!r}")
        return list(m)

    def per_rank(self, metric: str = "device") -> dict:
        return {}

    def per_dispatch(self, metric: str = "device") -> dict:
        return {}

    def dispatch_groups(self) -> dict:
        return {}

    def dispatch_tasks(self) -> dict:
        return {}

    def __del__(self) -> None:
        if getattr(self, "_ptr", None):
            _c.pto_bench_stats_destroy(self._ptr)
            self._ptr = None

    def _tree(self, launch: int | None, spread: str, max_level: int) -> str:
        return _render_tree(self._ptr, launch, spread, max_level)

    def _launch_tree(self, i: int) -> str:
        return self._tree(i, "none", -1)

    def _launch_spans(self, i: int) -> list[TraceSpan]:
        return _tree_spans(self._ptr, i, 0, i, "")

    def mean_invocation(self, *, pid: int | None = None,
                        slot: int | None = None) -> Invocation | None:
        """PyPTO's mean_invocation: one Invocation whose every span's dur (and ts) is its mean
        over the measured launches (inv -1); None without launches. pid and slot are L3's."""
        if not self.rounds or (pid not in (None, 0)) or (slot not in (None, 0)):
            return None
        return Invocation(functools.partial(self._tree, None, "none", -1),
                          self.device_wall_us_mean, self.host_wall_us_mean,
                          self.effective_us_mean, inv=-1,
                          spans=functools.partial(_tree_spans, self._ptr, None, 0, -1, ""))

    def mean_tree(self, spread: str = "stdev", max_level: int = -1) -> str:
        return self._tree(None, spread, max_level)

    def format_mean_tree(self, *, us: bool = True, spread: str = "stdev", pid: int | None = None,
                         slot: int | None = None, max_level: int = -1) -> str:
        """The span tree with every node's mean over the measured launches and its spread."""
        return self._tree(None, spread, max_level)

    def print_mean_tree(self, spread: str = "stdev", max_level: int = -1, file: Any = None,
                        **kw: Any) -> None:
        print(self.format_mean_tree(spread=spread, max_level=max_level), end="",
              file=file or sys.stdout)

    def format_tree(self, launch: int | None = None, *, us: bool = True) -> str:
        """The span tree of one measured launch (negative counts back), or of every one."""
        if launch is None:
            return "".join(f"launch[{i}]:\n" + self._launch_tree(i) for i in range(self.rounds))
        i = _int("launch", launch, -self.rounds, I32_MAX)
        return self._launch_tree(i + self.rounds if i < 0 else i)

    def print_tree(self, launch: int | None = None, *, us: bool = True, file: Any = None,
                   max_level: int = -1) -> None:
        """The span tree of one measured launch (negative counts back), or, by default (None),
        of every one, as PyPTO's print_tree. us: PyPTO's unit switch, taken but the trees are
        always in microseconds."""
        if launch is None:
            print(self.format_tree(None), end="", file=file or sys.stdout)
            return
        i = _int("launch", launch, -self.rounds, I32_MAX)
        i = i + self.rounds if i < 0 else i
        print(self._tree(i, "none", max_level), end="", file=file or sys.stdout)

    def summary(self) -> str:
        out = C.c_void_p()
        _check(_c.pto_bench_stats_render_summary(self._ptr, C.byref(out)))
        return _c.take_string(out.value)

    def __repr__(self) -> str:
        return (f"<pto.BenchmarkStats rounds={self.rounds} device_wall_us_median="
                f"{self.device_wall_us_median:.2f} host_wall_us_median="
                f"{self.host_wall_us_median:.2f}>")


def _render_tree(stats_ptr: int, launch: int | None, spread: str, max_level: int) -> str:
    """A pto_bench_stats' mean tree (launch None) or one launch's tree, rendered."""
    if spread not in _SPREADS:
        raise _fail(f"spread must be one of {_SPREADS}, not {spread!r}")
    max_level = _int("max_level", max_level, -1, I32_MAX)
    tree = _bench_tree(stats_ptr, launch)
    try:
        out = C.c_void_p()
        _check(_c.pto_bench_tree_render(tree, _SPREADS.index(spread), max_level, C.byref(out)))
        return _c.take_string(out.value)
    finally:
        _c.pto_bench_tree_destroy(tree)


def _bench_opts(rounds: int, warmup: int) -> _c.BenchOptions:
    opt = _c.BenchOptions()
    _c.pto_bench_options_init(C.byref(opt))
    opt.rounds = _int("rounds", rounds, 1, I32_MAX)
    opt.warmup = _int("warmup", warmup, 0, I32_MAX)
    return opt


def benchmark(compiled: CompiledProgram, args: Sequence[Any] | dict, rounds: int = 100,
              warmup: int = 3, worker: "ChipWorker | DistributedWorker | None" = None,
              config: RunConfig | None = None, *, platform: str | None = None,
              device_id: int | None = None) -> "BenchmarkStats | DistBenchmarkStats":
    """PyPTO's benchmark: registers compiled once and launches it warmup + rounds times. An L2
    program runs on worker (else on the worker of a DeviceTensor among args, else on one opened
    with config, platform and device_id, and closed); a host (L3) program on worker (a
    DistributedWorker) or on one opened over its device set."""
    if config is None:
        config = RunConfig()
    if platform is not None or device_id is not None:
        config = dataclasses.replace(config, **({"platform": platform} if platform else {}),
                                     **({"device_id": device_id} if device_id is not None
                                        else {}))
    config._c()  # range checks before anything runs
    if compiled.is_host:
        if worker is not None:
            return worker.benchmark(compiled, args, rounds=rounds, warmup=warmup)
        with DistributedWorker(compiled, config) as rt:
            return rt.benchmark(compiled, args, rounds=rounds, warmup=warmup)
    if worker is None:
        worker = next((a._worker for a in (args.values() if isinstance(args, dict) else args)
                       if isinstance(a, DeviceTensor)), None)
    p = _Packer(compiled)
    opt = _bench_opts(rounds, warmup)
    args_c, back = p.pack(args)
    cfg = config._c()
    opt.run_config = C.pointer(cfg)
    out = C.c_void_p()
    _check(_c.pto_benchmark(worker._w() if worker else None, compiled._ptr, args_c, p.n,
                            C.byref(opt), C.byref(out)))
    for dst, src in back:
        dst[...] = src
    return BenchmarkStats(out.value)


# ---- many chips (L3) ----------------------------------------------------------------------


class DistTensor(DeviceTensor):
    """A resident (worker_id) tensor of a DistributedWorker. data_ptr is its handle in this
    process, which the worker's copy_to/copy_from/free take as PyPTO's device pointer."""

    def __init__(self, worker: Any, ptr: int, shape: tuple[int, ...], dtype: int,
                 worker_ids: tuple[int, ...]):
        super().__init__(worker, ptr, shape, dtype)
        self.worker_ids = worker_ids

    @property
    def worker_id(self) -> int:
        return self.worker_ids[0]

    @property
    def data_ptr(self) -> int:
        return self._ptr


class _Shard:
    """Shard i of a stacked tensor (PyPTO's StackedDeviceTensor.shards[i]): its shape, dtype,
    nbytes and the worker that holds it; the worker's copy_from reads it."""

    def __init__(self, stacked: "StackedDeviceTensor", index: int):
        self.stacked, self.index = stacked, index
        self.shape = stacked.shape[1:]
        self.dtype = stacked.dtype
        self.worker_id = stacked.worker_ids[index]
        self.nbytes = stacked.nbytes // stacked.shape[0]

    def __repr__(self) -> str:
        return f"<pto shard {self.index} of {self.stacked!r} on worker {self.worker_id}>"


class StackedDeviceTensor(DistTensor):
    """A stacked tensor (PyPTO's StackedDeviceTensor): shard i (host[i]) resident on
    worker_ids[i]; shards, shape (= full_shape), dtype, worker_ids."""

    @property
    def shards(self) -> tuple[_Shard, ...]:
        return tuple(_Shard(self, i) for i in range(self.shape[0]))

    full_shape = property(lambda self: self.shape)

    def __getitem__(self, idx: Any) -> _Shard:
        """Shard r: stacked[r], or PyPTO's whole-shard forms stacked[r, ...] and
        stacked[r, 0:N, :] (a part of a shard is refused: a ValueError)."""
        r, rest = (idx[0], idx[1:]) if isinstance(idx, tuple) and idx else (idx, ())
        if isinstance(idx, tuple) and not idx:
            raise IndexError("a stacked tensor is indexed by its shard: stacked[r]")
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
            raise TypeError(f"a stacked tensor's shard index is an int, not {type(r).__name__}")
        n, tail = self.shape[0], self.shape[1:]
        if not -n <= r < n:
            raise IndexError(f"shard {r} of a stacked tensor of {n} shards")
        if sum(x is Ellipsis for x in rest) > 1:
            raise IndexError("a stacked tensor's index has at most one ...")
        if Ellipsis in rest:
            e = rest.index(Ellipsis)
            rest = rest[:e] + (slice(None),) * (len(tail) - len(rest) + 1) + rest[e + 1:]
        if len(rest) > len(tail):
            raise IndexError(f"too many indices for a stacked tensor of shape {list(self.shape)}")
        for axis, sl in enumerate(rest):
            if not isinstance(sl, slice) or sl.step not in (None, 1) or \
                    slice(sl.start or 0, tail[axis] if sl.stop is None else sl.stop) != \
                    slice(0, tail[axis]):
                raise _fail(f"a stacked tensor is passed a whole shard at a time: {sl} on axis "
                            f"{axis + 1} is not all of it (the shard's shape is {list(tail)})")
        return self.shards[int(r)]


def _ns(v: Any) -> Any:
    if isinstance(v, dict):
        return SimpleNamespace(**{k: _ns(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_ns(x) for x in v]
    return v


class _CallableNS(SimpleNamespace):
    """The JSON view (attributes) that is also PyPTO's method: per_round.device.median and
    per_round("device")."""

    def __init__(self, fn: Any, **kw: Any):
        super().__init__(**kw)
        object.__setattr__(self, "_fn", fn)

    def __call__(self, *a: Any, **kw: Any) -> Any:
        return self._fn(*a, **kw)


class _CallableList(list):
    """A JSON list view that is also PyPTO's method (per_rank(), per_dispatch(), ...)."""

    def __init__(self, items: list, fn: Any):
        super().__init__(items)
        self._fn = fn

    def __call__(self, *a: Any, **kw: Any) -> Any:
        return self._fn(*a, **kw)


_METRIC_KEY = {"device": "device_us", "host": "host_us", "effective": "effective_us"}


class DistBenchmarkStats:
    """pto_dist_benchmark's L3 views with PyPTO's names: device_wall_us / host_wall_us
    (per-round lists, the slowest rank's), invocations (every measured dispatch),
    per_round(metric), per_rank(metric) {rank: [per round]}, per_dispatch(metric)
    {(rank, slot): [per round]}, dispatch_groups() {(rank, slot): [Invocation]},
    dispatch_tasks(), format_mean_tree / print_mean_tree (one tree per dispatch slot). The JSON
    of pto/dist_bench.h stays readable too: st.per_round.device.median, st.json, st.report."""

    def __init__(self, ptr: int):
        self._ptr = ptr
        out = C.c_void_p()
        _check(_c.pto_dist_bench_stats_to_json(ptr, C.byref(out)))
        self.json: dict[str, Any] = json.loads(_c.take_string(out.value))
        out = C.c_void_p()
        _check(_c.pto_dist_bench_stats_render(ptr, C.byref(out)))
        self.report: str = _c.take_string(out.value)
        j = self.json
        for k, v in j.items():
            setattr(self, k, _ns(v))
        pr = j.get("per_round", {})
        self.per_round = _CallableNS(self._per_round, **vars(_ns(pr)))
        self.per_rank = _CallableList(_ns(j.get("per_rank", [])), self._per_rank)
        self.per_dispatch = _CallableList(_ns(j.get("per_dispatch", [])), self._per_dispatch)
        self.dispatch_groups = _CallableList(_ns(j.get("dispatch_groups", [])), self._groups)
        self.dispatch_tasks = _CallableList(j.get("dispatch_tasks", []), self._tasks)
        nan = float("nan")
        smp = pr.get("samples", {})
        self.device_wall_us: list[float] = [nan if x is None else x for x in smp.get("device", [])]
        self.host_wall_us: list[float] = [nan if x is None else x for x in smp.get("host", [])]
        for metric, name in (("device", "device_wall"), ("host", "host_wall"),
                             ("effective", "effective")):
            for k in ("min", "median", "mean", "max", "stdev"):  # the headline, per round
                setattr(self, f"{name}_us_{k}", pr.get(metric, {}).get(k, nan))
        # rounds_dispatches[k][rank] = that rank's dispatches of round k, as Invocations; the
        # span tree of one is launch k of its slot's stats (pto_dist_bench_slot)
        cs = C.cast(ptr, C.POINTER(_c.DistBenchStats)).contents
        slot_stats = {(cs.per_dispatch[i].rank, cs.per_dispatch[i].slot): cs.per_dispatch[i].stats
                      for i in range(cs.nslots)}
        self._grid: list[dict[int, list[Invocation]]] = []
        for k, ranks in enumerate(j.get("rounds_dispatches", [])):
            row: dict[int, list[Invocation]] = {}
            for r, ds in enumerate(ranks):
                row[r] = [Invocation(functools.partial(self._slot_tree, (r, d["slot"]), k),
                                     d["device_us"], d["host_us"], d["effective_us"], pid=r, inv=k,
                                     hid=d.get("task", ""),
                                     spans=functools.partial(self._slot_spans, (r, d["slot"]), k,
                                                             d.get("task", "")))
                          for d in ds]
            self._grid.append(row)
        self._slot_stats = slot_stats
        self.invocations: list[Invocation] = [iv for row in self._grid for ds in row.values()
                                              for iv in ds]

    samples = property(lambda self: self.device_wall_us)
    device_us_min = property(lambda self: _stat(self.device_wall_us, "min"))
    device_us_median = property(lambda self: _stat(self.device_wall_us, "median"))
    device_us_mean = property(lambda self: _stat(self.device_wall_us, "mean"))
    device_us_max = property(lambda self: _stat(self.device_wall_us, "max"))
    device_us_stdev = property(lambda self: _stat(self.device_wall_us, "stdev"))

    def _slot_spans(self, key: tuple[int, int], round_: int | None,
                    hid: str) -> list[TraceSpan]:
        st = self._slot_stats.get(key)
        return _tree_spans(st, round_, key[0], -1 if round_ is None else round_, hid) \
            if st else []

    def mean_invocation(self, *, pid: int | None = None,
                        slot: int | None = None) -> Invocation | None:
        """PyPTO's mean_invocation: the first dispatch slot (rank, slot) that matches pid and
        slot, as one Invocation whose every span's dur (and ts) is its mean over the measured
        rounds (inv -1); None when none matches."""
        for (r, sl), st in sorted(self._slot_stats.items()):
            if st and (pid is None or r == pid) and (slot is None or sl == slot):
                ivs = [iv for row in self._grid for iv in row.get(r, [])[sl:sl + 1]]
                mean = (lambda m: _stat([float(getattr(iv, m)) for iv in ivs], "mean"))
                hid = ivs[0].hid if ivs else ""
                return Invocation(functools.partial(_render_tree, st, None, "none", -1),
                                  mean("device_wall_us"), mean("host_wall_us"),
                                  mean("effective_us"), pid=r, inv=-1, hid=hid,
                                  spans=functools.partial(self._slot_spans, (r, sl), None, hid))
        return None

    def _slot_tree(self, key: tuple[int, int], round_: int) -> str:
        st = self._slot_stats.get(key)
        if not st:
            return f"no span tree of rank {key[0]} slot {key[1]} (unstable dispatch slots)\n"
        return _render_tree(st, round_, "none", -1)

    def _per_round(self, metric: str = "device") -> list[float]:
        smp = self.json.get("per_round", {}).get("samples", {})
        if metric not in smp:
            raise _fail(f"per_round: metric must be one of {sorted(smp)}, not {metric!r}")
        return [float("nan") if x is None else x for x in smp[metric]]

    def _attr(self, metric: str) -> str:
        if metric not in _METRIC_KEY:
            raise _fail(f"metric must be device, host or effective, not {metric!r}")
        return {"device": "device_wall_us", "host": "host_wall_us",
                "effective": "effective_us"}[metric]

    def _per_rank(self, metric: str = "device") -> dict[int, list[float]]:
        attr, n = self._attr(metric), len(self._grid)
        out: dict[int, list[float]] = {}
        for k, row in enumerate(self._grid):
            for r, ds in row.items():
                out.setdefault(r, [0.0] * n)[k] = sum(float(getattr(d, attr)) for d in ds)
        return out

    def _groups(self) -> dict[tuple[int, int], list[Invocation]]:
        if self.json.get("unstable_dispatch_slots"):
            return {}
        out: dict[tuple[int, int], list[Invocation]] = {}
        for row in self._grid:
            for r, ds in row.items():
                for slot, d in enumerate(ds):
                    out.setdefault((r, slot), []).append(d)
        return {k: out[k] for k in sorted(out)}

    def _per_dispatch(self, metric: str = "device") -> dict[tuple[int, int], list[float]]:
        attr = self._attr(metric)
        return {k: [float(getattr(d, attr)) for d in g] for k, g in self._groups().items()}

    def _tasks(self) -> dict[tuple[int, int], str]:
        return {k: g[0].hid for k, g in self._groups().items() if g}

    def format_mean_tree(self, *, us: bool = True, spread: str = "stdev", pid: int | None = None,
                         slot: int | None = None, max_level: int = -1) -> str:
        """One mean span tree per dispatch slot (rank, slot), over the measured rounds."""
        st = C.cast(self._ptr, C.POINTER(_c.DistBenchStats)).contents
        parts = []
        for i in range(st.nslots):
            d = st.per_dispatch[i]
            if (pid is not None and d.rank != pid) or (slot is not None and d.slot != slot):
                continue
            parts.append(f"dispatch rank={d.rank} slot={d.slot} task={d.name.decode()} - mean of "
                         f"{self.json.get('rounds')} rounds:\n" +
                         _render_tree(d.stats, None, spread, max_level))
        if not parts:
            return "no dispatch tree (unstable dispatch slots, or no dispatch matches)\n"
        return "\n".join(parts)

    @property
    def all_zero_device(self) -> bool:
        """Every measured round's device wall is 0 (or missing)."""
        return all(not (v > 0) for v in self.device_wall_us)

    def format_tree(self, launch: int | None = None, *, us: bool = True) -> str:
        """The span tree of one measured dispatch of invocations (round by round, rank by
        rank; negative counts back), or of every one (None), each headed by its launch index,
        rank (pid), round and slot, as PyPTO's."""
        n = len(self.invocations)
        if launch is None:
            sel = range(n)
        else:
            i = _int("launch", launch, -n, n - 1)
            sel = [i + n if i < 0 else i]
        where = {id(iv): (k, s) for k, row in enumerate(self._grid) for ds in row.values()
                 for s, iv in enumerate(ds)}
        out = []
        for i in sel:
            iv = self.invocations[i]
            k, s = where[id(iv)]
            out.append(f"launch[{i}] (pid={iv.pid} round={k} slot={s} task={iv.hid}):\n" +
                       iv.format_tree())
        return "".join(out)

    def print_tree(self, launch: int | None = None, *, us: bool = True,
                   file: Any = None) -> None:
        print(self.format_tree(launch), end="", file=file or sys.stdout)

    def print_mean_tree(self, *, us: bool = True, spread: str = "stdev", pid: int | None = None,
                        slot: int | None = None, file: Any = None) -> None:
        print(self.format_mean_tree(spread=spread, pid=pid, slot=slot), end="",
              file=file or sys.stdout)

    def __del__(self) -> None:
        if getattr(self, "_ptr", None):
            _c.pto_dist_bench_stats_destroy(self._ptr)
            self._ptr = None

    def __repr__(self) -> str:
        return f"<pto.DistBenchmarkStats {sorted(self.json)}>"


def _programs(arg: Any) -> list[CompiledProgram] | None:
    if isinstance(arg, CompiledProgram):
        return [arg]
    if isinstance(arg, (list, tuple)) and arg and all(isinstance(p, CompiledProgram) for p in arg):
        return list(arg)
    return None


class DistributedWorker(Worker):
    """Many chips (pto_dist_worker), PyPTO's DistributedWorker: DistributedWorker(compiled) or
    DistributedWorker([prefill, decode]) (host programs of one device set; rt(*args) runs the
    first, rt.run(p, *args) any of them), or DistributedWorker(devices=N | [ids]) for any host
    program of that device set. Opening it forks one chip process per device, so open it before
    the process starts threads (or chips="threads": every chip a thread of this process)."""

    def __init__(self, compiled: Any = None, config: RunConfig | None = None, *,
                 devices: int | Sequence[int] | None = None, cores_per_chip: int = 0,
                 shared_heap_bytes: int = 0, wait_timeout_ms: int = 0,
                 transport: str | None = None, window_bytes: int = 0,
                 swimlane_records: str | os.PathLike | None = None, chips: str | None = None):
        """transport: "shm" (default) or "mpi" (a pto built with -DPTO_MPI=ON, under mpirun:
        on ranks other than 0 opening serves rank 0's chip until it closes, and `is_root` is
        then False). chips: "processes" (one forked process per chip: a chip that crashes is
        reported and this process lives on) or "threads" (every chip a thread of this process:
        a dispatch costs no process switch; a crashing chip ends the process); None:
        $PTO_DIST_CHIPS, else "processes" (pto_dist_config.chips). swimlane_records: a folder (made if missing) where every call of every
        chip leaves its capture as `pto run --swimlane-records DIR/chip_swimlane_records.json`
        does for a host program: DIR/rank_R/dispatch_N/ (N counts the chip's calls from 0 over
        the worker's life) with chip_swimlane_records.json, deps.json, func_names.json and
        name_map.json, where PyPTO's critical_path walks."""
        self._ptr: int | None = None  # set first: a failed open leaves a closed worker
        self._packers: dict[int, _Packer] = {}
        self._tensors: dict[int, DistTensor] = {}
        progs = _programs(compiled)
        if progs is None and compiled is not None:
            if devices is not None:
                raise _fail("DistributedWorker: give the programs or devices=, not both")
            devices = compiled  # pto's DistributedWorker(N) / DistributedWorker([ids])
        self.programs: tuple[CompiledProgram, ...] = tuple(progs or ())
        for i, p in enumerate(self.programs):
            if not p.is_host:
                raise _fail(f"DistributedWorker: program {i} ({p.entry}) is not a host (L3) "
                            f"program: run it on a ChipWorker")
        if self.programs:
            ids = self.programs[0].device_ids
            for p in self.programs[1:]:
                if p.device_ids != ids:
                    raise _fail(f"DistributedWorker: {p.entry} is compiled for devices "
                                f"{list(p.device_ids)}, {self.programs[0].entry} for {list(ids)}:"
                                f" one worker runs programs of one device set")
            if devices is None:
                devices = list(ids)
        if devices is None:  # PyPTO's RunConfig(distributed_config=DistributedConfig(...))
            dc = config.distributed_config if isinstance(config, RunConfig) else None
            devices = list(dc.device_ids) if dc is not None else 1
        ids = _device_list(devices)
        if self.programs and tuple(ids) != self.programs[0].device_ids:
            p0 = self.programs[0]
            n0 = len(p0.device_ids)
            if len(ids) != n0:
                raise _fail(f"DistributedWorker: {p0.entry} is compiled for {n0} devices, "
                            f"devices= gives {len(ids)}: leave devices= out (the programs' "
                            f"device set) or compile for {len(ids)}")
            raise _fail(f"DistributedWorker: {p0.entry} is compiled for devices "
                        f"{list(p0.device_ids)}, devices= gives {ids}: leave devices= out "
                        f"(the programs' device set) or give the same ids")
        dc = config.distributed_config if isinstance(config, RunConfig) else None
        if dc is not None and tuple(dc.device_ids) != tuple(ids):
            raise _fail(f"DistributedWorker: config.distributed_config.device_ids is "
                        f"{list(dc.device_ids)}, the worker's devices are {ids}")
        if threading.active_count() > 1 and (chips or os.environ.get("PTO_DIST_CHIPS")) != "threads":
            warnings.warn("pto.DistributedWorker forks its chip processes while this process "
                          "runs other threads: open it before starting threads", RuntimeWarning,
                          stacklevel=2)
        if config is not None and not isinstance(config, RunConfig):
            raise _fail(f"DistributedWorker: config is a pto.RunConfig, not "
                        f"{type(config).__name__}")
        self.config = config or RunConfig()
        self.config._c()
        cfg = _c.DistConfig()
        _c.pto_dist_config_init(C.byref(cfg))
        self._ids = (C.c_int32 * len(ids))(*ids)
        cfg.ndevices, cfg.device_ids = len(ids), self._ids
        cfg.ncores_per_chip = _int("cores_per_chip", cores_per_chip, 0, I32_MAX)
        cfg.shared_heap_bytes = _int("shared_heap_bytes", shared_heap_bytes, 0, U64_MAX)
        cfg.wait_timeout_ms = _int("wait_timeout_ms", wait_timeout_ms, 0, U32_MAX)
        if transport is not None:
            self._transport = transport.encode()
            cfg.transport = self._transport
        if chips is not None:
            self._chips = chips.encode()
            cfg.chips = self._chips
        cfg.window_bytes = _int("window_bytes", window_bytes, 0, U64_MAX)
        self.swimlane_records: str | None = None
        if swimlane_records is not None:
            d = os.path.abspath(os.fspath(swimlane_records))
            os.makedirs(d, exist_ok=True)
            self.swimlane_records = d
            # read in the chip processes (forked by open, each with its copy of this buffer)
            self._records_path = C.create_string_buffer(
                os.fsencode(os.path.join(d, "chip_swimlane_records.json")))
            cfg.on_chip_call = C.cast(_c.lib.pto_dist_swimlane_records_on_chip_call,
                                      C.c_void_p).value
            cfg.on_chip_call_ctx = C.addressof(self._records_path)
        out = C.c_void_p()
        _check(_c.pto_dist_worker_open(C.byref(cfg), C.byref(out)))
        self._ptr = out.value

    def _w(self) -> int:
        if not self._ptr:
            raise _fail("the distributed worker is closed", FAILED_PRECONDITION)
        return self._ptr

    @property
    def devices(self) -> int:
        return _c.pto_dist_worker_device_count(self._w())

    world_size = devices
    level = property(lambda self: 3, doc="PyPTO's hierarchy level of a DistributedWorker: 3")

    @property
    def is_root(self) -> bool:
        """False on an MPI rank other than 0, which only served rank 0's chip."""
        return bool(_c.pto_dist_worker_is_root(self._w()))

    @property
    def transport(self) -> str:
        return _c.pto_dist_worker_transport(self._w()).decode()

    def close(self) -> None:
        if getattr(self, "_ptr", None):
            ptr, self._ptr = self._ptr, None  # first, as ChipWorker.close
            _c.pto_dist_worker_close(ptr)
            self._tensors.clear()

    def __enter__(self) -> "DistributedWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _rank(self, worker_id: int) -> int:
        return _int("worker_id", worker_id, 0, I32_MAX)

    def alloc_tensor(self, shape: Iterable[int] | int, dtype: Any = np.float32, init: Any = None,
                     worker_id: int = 0) -> DistTensor:
        shp, dt = _shape(shape), _pto_dtype(dtype)
        rank = self._rank(worker_id)
        a = _init_array(shp, dt, init)
        out = C.c_void_p()
        _check(_c.pto_dist_alloc_tensor(self._w(), len(shp), (C.c_int64 * max(1, len(shp)))(*shp),
                                        dt, None if a is None else a.ctypes.data, rank,
                                        C.byref(out)))
        t = DistTensor(self, out.value, shp, dt, (rank,))
        self._tensors[t._ptr] = t
        return t

    def alloc_stacked_tensor(self, host: np.ndarray, worker_ids: Sequence[int] | None = None,
                             dtype: Any = None) -> StackedDeviceTensor:
        """Shard i (host[i]) resident on worker_ids[i] (default rank i). dtype="bf16" for a
        uint16 array of bf16 bits."""
        host = _host_array(host)
        if not isinstance(host, np.ndarray):
            raise _fail(f"alloc_stacked_tensor: host is a numpy array, not {type(host).__name__}")
        a = np.ascontiguousarray(host)
        dt = _pto_dtype(dtype if dtype is not None else a.dtype)
        if _PTO2NP[dt] != a.dtype:
            raise _fail(f"array has dtype {a.dtype}, not {_PTO_NAMES[dt]}")
        if a.ndim < 1:
            raise _fail("alloc_stacked_tensor: the array needs a leading (shard) dimension")
        ids = (list(range(a.shape[0])) if worker_ids is None else
               [_int(f"worker_ids[{i}]", w, 0, I32_MAX) for i, w in enumerate(worker_ids)])
        if len(ids) != a.shape[0]:
            raise _fail(f"{len(ids)} worker ids for {a.shape[0]} shards")
        ht = _c.HostTensor()
        _host_tensor(ht, a, dt)
        out = C.c_void_p()
        # no worker_ids: NULL, the C API's default placement, whose error names the counts
        given = None if worker_ids is None else (C.c_int * len(ids))(*ids)
        _check(_c.pto_dist_alloc_stacked_tensor(self._w(), C.byref(ht), given, C.byref(out)))
        t = StackedDeviceTensor(self, out.value, a.shape, dt, tuple(ids))
        self._tensors[t._ptr] = t
        return t

    def free_tensor(self, t: DistTensor, *, worker_id: int | None = None) -> None:
        """Frees t; idempotent, as PyPTO's: a second free of a tensor of this worker, or one
        after close() (which freed them all), does nothing."""
        if not isinstance(t, DistTensor):
            raise _fail(f"free_tensor: t is a tensor of this worker, not {type(t).__name__}")
        if worker_id is not None and not isinstance(t, StackedDeviceTensor) and \
                _int("worker_id", worker_id, 0, I32_MAX) != t.worker_id:
            # PyPTO's: a wrong worker_id is an error, never a free of another chip's tensor
            raise _fail(f"free_tensor(..., worker_id={worker_id}): the tensor was allocated on "
                        f"worker {t.worker_id}; pass the same worker_id")
        if t._worker is self and (getattr(t, "_freed", False) or not self._ptr):
            return
        _check(_c.pto_dist_free_tensor(self._w(), t._ptr))
        self._tensors.pop(t._ptr, None)
        t._freed = True

    def free_stacked_tensor(self, stacked: DistTensor) -> None:
        """Frees every shard; idempotent, as PyPTO's (free_tensor is too)."""
        self.free_tensor(stacked)

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """PyPTO's malloc: nbytes on chip worker_id; returns its handle (a DistTensor's
        data_ptr) for copy_to/copy_from/free."""
        return self.alloc_tensor((_int("nbytes", nbytes, 1, I64_MAX),), np.uint8,
                                 worker_id=worker_id).data_ptr

    def _by_ptr(self, what: str, ptr: Any) -> DistTensor:
        if isinstance(ptr, DistTensor):
            return ptr
        t = self._tensors.get(_int(what, ptr, 0, U64_MAX))
        if t is None:
            raise _fail(f"{what} {ptr:#x} is no live tensor of this worker (data_ptr of "
                        f"alloc_tensor or what malloc returned)")
        return t

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        self.free_tensor(self._by_ptr("ptr", ptr))

    def copy_to(self, dst: Any, src: Any, nbytes: int | None = None, *,
                worker_id: int = 0) -> None:
        """copy_to(tensor, array), or PyPTO's copy_to(dst_dev_ptr, src_host_ptr, nbytes) (the
        tensor's whole size)."""
        if isinstance(dst, DistTensor) and nbytes is None:
            a = _init_array(dst.shape, dst._dt, src)
            _check(_c.pto_dist_copy_to(self._w(), dst._ptr, a.ctypes.data, a.nbytes))
            return
        t = self._by_ptr("dst_dev_ptr", dst)
        n = _int("nbytes", nbytes, 0, I64_MAX)
        _check(_c.pto_dist_copy_to(self._w(), t._ptr, _host_ptr("src_host_ptr", src, n), n))

    def copy_from(self, dst: Any, src: Any = None, nbytes: int | None = None, *,
                  out: np.ndarray | None = None, worker_id: int = 0) -> Any:
        """copy_from(tensor, out=None) -> array, or PyPTO's copy_from(dst_host_ptr,
        src_dev_ptr, nbytes); a shard of a stacked tensor (stacked.shards[i]) reads that
        shard."""
        if isinstance(dst, _Shard):
            given = src if out is None else out
            arr = _host_array(given)
            if arr is not None:
                _check_out(arr, dst)  # np.copyto would broadcast into a bigger array, or cast
            full = self.copy_stacked_from(dst.stacked)
            if arr is None:
                return full[dst.index].copy()
            arr[...] = full[dst.index]
            return given
        if isinstance(dst, DistTensor):
            t = dst
            given = src if out is None else out  # returned as given (a torch tensor too)
            out = _out_array(given, t)
            _check(_c.pto_dist_copy_from(self._w(), out.ctypes.data, t._ptr, out.nbytes))
            return out if given is None else given
        t = self._by_ptr("src_dev_ptr", src)
        n = _int("nbytes", nbytes, 0, I64_MAX)
        if isinstance(dst, np.ndarray) and not dst.flags.writeable:
            raise _fail("copy_from: dst_host_ptr is a read-only array")
        _check(_c.pto_dist_copy_from(self._w(), _host_ptr("dst_host_ptr", dst, n), t._ptr, n))
        return None

    def copy_stacked_from(self, stacked: DistTensor, host: np.ndarray | None = None, *,
                          out: np.ndarray | None = None) -> np.ndarray:
        """Every shard into host (PyPTO's copy_stacked_from(stacked, host); out= is pto's former
        name of it) or a new array; returns the array."""
        t = stacked
        if host is not None and out is not None and host is not out:
            raise _fail("copy_stacked_from: pass host or out, not both")
        given = host if out is None else out  # returned as given (a torch tensor too)
        out = _out_array(given, t)
        ht = _c.HostTensor()
        _host_tensor(ht, out, t._dt)
        _check(_c.pto_dist_copy_stacked_from(self._w(), t._ptr, C.byref(ht)))
        return out if given is None else given

    def _pack(self, program: CompiledProgram, args: Any) -> tuple[_Packer, Any, list]:
        if not isinstance(program, CompiledProgram):
            raise _fail(f"run: the first argument is the program, not {type(program).__name__}")
        p = self._packers.get(id(program))
        if p is None or p.prog is not program:
            p = self._packers[id(program)] = _Packer(program)
        args_c, back = p.pack(args)
        return p, args_c, back

    def __call__(self, *args: Any, config: RunConfig | None = None) -> None:
        """rt(*args): runs the (first) program this worker was made for. config (PyPTO's
        per-dispatch settings) is range-checked; an L3 run of pto has no per-run settings."""
        if not self.programs:
            raise _fail("rt(*args) runs the program the worker was made with "
                        "(DistributedWorker(compiled)); this one was opened with devices=: "
                        "use rt.run(compiled, *args)", FAILED_PRECONDITION)
        self.run(self.programs[0], *args, config=config)

    def run(self, program: CompiledProgram, *args: Any, config: RunConfig | None = None) -> None:
        """One run of a host program compiled for this device set: run(p, *args) as PyPTO, or
        run(p, [args]). config is range-checked; an L3 run of pto has no per-run settings."""
        if config is not None:
            config._c()
        p, args_c, back = self._pack(program, _call_values(args))
        _check(_c.pto_dist_worker_run(self._w(), program._ptr, args_c, p.n))
        for dst, src in back:
            dst[...] = src

    def submit(self, program: CompiledProgram, *args: Any,
               config: RunConfig | None = None) -> RunHandle:
        """PyPTO's submit: queues one run (pto_dist_worker_submit) and returns at once with its
        handle: done, wait()/result() (raises the run's error). Runs happen in the order issued;
        every other call on the worker (run, copies, tensors, benchmark, close) waits for the
        submitted runs first, and close waits for them too, so a handle can be waited on after
        close. The arguments stay referenced until the handle is consumed: inputs must not
        change, outputs are written by then."""
        if config is not None:
            config._c()
        vals = _call_values(args)
        p, args_c, back = self._pack(program, vals)
        # the arrays and this run's contiguous copies stay alive until the run ends (the next
        # pack of this program replaces the packer's copies)
        keep = (vals, list(p.slots().keep))
        out = C.c_void_p()
        _check(_c.pto_dist_worker_submit(self._w(), program._ptr, args_c, p.n, C.byref(out)))
        return RunHandle(out.value, back, keep)

    def release_inherited_host_tensor_refs(self) -> None:
        """PyPTO's: drops the host tensors its parent process keeps for forked chips. pto
        keeps no such references: a no-op (on an open worker)."""
        self._w()

    def register(self, program: CompiledProgram) -> "_DistRegistration":
        """PyPTO's rt.register(compiled): a handle whose call is rt.run(compiled, ...) (cid 0:
        an L3 run has no per-program registration; the device set is checked at the run)."""
        if not isinstance(program, CompiledProgram) or not program.is_host:
            raise _fail("register: the program is a host (L3) CompiledProgram, not "
                        f"{program!r}")
        self._w()
        return _DistRegistration(self, program)

    def benchmark(self, program: CompiledProgram, args: Sequence[Any] | dict,
                  rounds: int = 100, warmup: int = 3) -> DistBenchmarkStats:
        opt = _bench_opts(rounds, warmup)
        p, args_c, back = self._pack(program, args)
        out = C.c_void_p()
        _check(_c.pto_dist_benchmark(self._w(), program._ptr, args_c, p.n, C.byref(opt),
                                     C.byref(out)))
        for dst, src in back:
            dst[...] = src
        return DistBenchmarkStats(out.value)


class _DistRegistration:
    """DistributedWorker.register's handle (PyPTO's RegistrationHandle of an L3 worker):
    handle(*args, config=) is rt.run(compiled, *args), handle.submit(*args) rt.submit; cid is 0;
    after unregister() (or the worker's close) a call raises pto.Error."""

    def __init__(self, worker: DistributedWorker, program: CompiledProgram):
        self._worker, self.program, self._closed = worker, program, False

    compiled = property(lambda self: self.program)
    cid = callable_id = property(lambda self: 0)
    closed = property(lambda self: self._closed or not self._worker._ptr)

    def _check_open(self) -> None:
        if self.closed:
            raise _fail("the handle was unregistered (or its worker closed): register again",
                        FAILED_PRECONDITION)

    def __call__(self, *args: Any, config: RunConfig | None = None) -> None:
        self._check_open()
        self._worker.run(self.program, *args, config=config)

    def submit(self, *args: Any) -> RunHandle:
        self._check_open()
        return self._worker.submit(self.program, *args)

    def unregister(self) -> None:
        self._closed = True

    def __enter__(self) -> "_DistRegistration":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()


# ---- PyPTO's run ----------------------------------------------------------------------------


@dataclass
class RunResult:
    """pto.run's outcome (PyPTO's RunResult): passed, error, execution_time (seconds), and
    compiled, the CompiledProgram (None when compiling failed). PyPTO's run returns the compiled
    program itself, so the result is also used as one: result(*args, config=) is
    compiled(*args, config=) (a pto.Error with the run's error when there is no program), and
    the program's attributes (output_dir, params, prepare, ...) are read through it."""
    passed: bool
    test_name: str | None = None
    error: str | None = None
    execution_time: float | None = None
    profile: dict[str, Any] | None = None
    compiled: "CompiledProgram | None" = dataclasses.field(default=None, repr=False,
                                                          compare=False)

    def __str__(self) -> str:
        t = f" ({self.execution_time:.3f}s)" if self.execution_time is not None else ""
        return ("PASS" if self.passed else f"FAIL: {self.error}") + t

    def _program(self) -> CompiledProgram:
        if self.compiled is None:
            raise _fail(f"pto.run compiled no program: {self.error}", FAILED_PRECONDITION)
        return self.compiled

    def __call__(self, *args: Any, config: RunConfig | None = None) -> None:
        self._program()(*args, config=config)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("compiled",):
            raise AttributeError(name)
        return getattr(self._program(), name)


def _run_work_dir(program: Any, cfg: RunConfig, entry: Any) -> str | None:
    """pto.run's work dir: with save_kernels (or a diagnostic output, as PyPTO's RunConfig turns
    save_kernels on for one), save_kernels_dir, else a compiled program's own work dir of the
    user's, else PyPTO's default: $PYPTO_PROG_BUILD_DIR (or build_output)/NAME_YYYYmmdd_HHMMSS,
    NAME the program's (its file's stem, or the entry)."""
    if not (cfg.save_kernels or cfg.any_dfx_enabled()):
        return None
    if cfg.save_kernels_dir:
        return os.fspath(cfg.save_kernels_dir)
    if isinstance(program, CompiledProgram):
        own = _user_work_dir(program)
        if own is not None:
            return own
        name = program.entry
    elif isinstance(entry, str) and entry:
        name = entry
    elif isinstance(program, (str, os.PathLike)) and "\n" not in os.fspath(program):
        name = os.path.splitext(os.path.basename(os.path.normpath(os.fspath(program))))[0]
    else:
        name = "program"
    base = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    return os.path.join(base, f"{name or 'program'}_{time.strftime('%Y%m%d_%H%M%S')}")


def run(program: Any, *tensors: Any, config: RunConfig | None = None,
        golden: Any = None, **bindings: Any) -> RunResult:
    """PyPTO's run: compiles program (PTIR path or text, or a CompiledProgram) and runs it once
    with tensors (out arrays written in place). golden(*tensors) (optional) writes the expected
    outputs into copies of the arguments; passed is then whether every out/inout array matches
    them within config.rtol/atol. With config.save_kernels, the program is compiled into
    config.save_kernels_dir, and with config.enable_chip_swimlane an L2 run's task records land
    in its dfx_outputs/ (chip_swimlane_records.json, deps.json, func_names.json, name_map.json),
    as PyPTO's do (an L3 run's in dfx_outputs/rank_R/dispatch_N/,
    DistributedWorker(swimlane_records=)). A
    failure of pto's (compiling, arguments, the run, outputs that differ from the golden) is
    reported in the result, not raised; an exception raised by golden itself, a bug of the
    caller's, propagates with its traceback. With no tensors it only compiles, as PyPTO's run.
    The result carries the program (compiled) and is called as it, as PyPTO's run returns the
    compiled program: `compiled = pto.run(prog, a, b, c); compiled(a2, b2, c2)`."""
    cfg = config or RunConfig()
    t0 = time.monotonic()
    wd = _run_work_dir(program, cfg, bindings.get("entry"))
    try:
        if cfg.distributed_config is not None and "devices" not in bindings and \
                not isinstance(program, CompiledProgram):  # PyPTO's device set of an L3 run
            bindings["devices"] = list(cfg.distributed_config.device_ids)
        prog = program if isinstance(program, CompiledProgram) else compile(
            program, work_dir=wd, **bindings)
        vals = _call_values(tensors)
        if isinstance(vals, dict):  # by name: in parameter order, for golden and the compare
            extra = set(vals) - {p.name for p in prog.params}
            missing = [p.name for p in prog.params if p.name not in vals and
                       not (not p.is_tensor and p.bind == "literal")]
            if missing or extra:  # the packer's words
                raise _fail(f"{prog.entry}: missing arguments {missing}, unknown {sorted(extra)}")
            vals = [vals.get(p.name) for p in prog.params]
        # torch tensors as numpy arrays over their memory: golden gets numpy copies
        vals = [_host_array(v) for v in vals]
    except Error as e:
        return RunResult(False, error=str(e), execution_time=time.monotonic() - t0)
    if not tensors:  # PyPTO: no tensors, compile only
        return RunResult(True, execution_time=time.monotonic() - t0, compiled=prog)
    expect = None
    if golden is not None:  # outside the try: golden's own errors (even a pto.Error) propagate
        expect = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in vals]
        golden(*expect)
    try:
        if prog.is_host:
            rec = os.path.join(wd, "dfx_outputs") if cfg.enable_chip_swimlane and wd else None
            with DistributedWorker(prog, cfg, swimlane_records=rec) as rt:
                rt.run(prog, vals)
        else:
            active = _active_worker(cfg)  # an open `with ChipWorker(...)`'s, as PyPTO's run
            with contextlib.nullcontext(active) if active else ChipWorker(cfg) as w:
                w.run(prog, vals, config=cfg)
                if cfg.enable_chip_swimlane and wd is not None:
                    w.export_swimlane_records(os.path.join(wd, "dfx_outputs"))
        if expect is not None:
            for p, got, want in zip(prog.params, vals, expect):
                if p.is_tensor and p.dir != "in" and isinstance(got, np.ndarray) and not \
                        np.allclose(got, want, rtol=cfg.rtol, atol=cfg.atol):
                    bad = int(np.sum(~np.isclose(got, want, rtol=cfg.rtol, atol=cfg.atol)))
                    return RunResult(False, error=f"output '{p.name}': {bad} of {got.size} "
                                     f"elements differ from the golden beyond rtol={cfg.rtol} "
                                     f"atol={cfg.atol}", execution_time=time.monotonic() - t0,
                                     compiled=prog)
        return RunResult(True, execution_time=time.monotonic() - t0, compiled=prog)
    except Error as e:
        return RunResult(False, error=str(e), execution_time=time.monotonic() - t0,
                         compiled=prog)


# PyPTO's names of the same things
RegistrationHandle = Callable
TraceInvocation = Invocation
DistributedRunHandle = RunHandle

from . import cache  # noqa: E402  (pto.cache: the binary cache)
