"""pto: PyPTO's names over the pto C libraries (ctypes), numpy in and out.

    import numpy as np, pto
    prog = pto.compile("examples/add.ptir", M=128)
    with pto.ChipWorker(pto.RunConfig(platform="sim", cores=2)) as w:
        x = np.ones((128, 64), np.float32); y = np.zeros_like(x)
        w.run(prog, [x, x, y])           # y written in place

Every failure raises pto.Error (code: the C pto_status_code, message: its text). bf16 data is
numpy uint16 (the raw bits). Host arrays that are C-contiguous and aligned are passed without a
copy; out/inout arrays are written in place."""
from __future__ import annotations

import ctypes as C
import json
import os
import sys
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterable, Sequence

import numpy as np

from . import _capi as _c

__all__ = ["Error", "RUNTIME", "compile", "CompiledProgram", "RunConfig", "ChipWorker",
           "DeviceTensor", "Callable", "benchmark", "BenchmarkStats", "DistributedWorker",
           "DistTensor", "DistBenchmarkStats"]

# ---- errors -------------------------------------------------------------------------------

STATUS_NAMES = ["OK", "INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_MEMORY", "IO",
                "FAILED_PRECONDITION", "DATA_LOSS", "UNIMPLEMENTED", "INTERNAL", "LAUNCH"]
INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, LAUNCH = 1, 2, 5, 9


class Error(Exception):
    """A failed pto call: code is the C pto_status_code (pto.INVALID_ARGUMENT, ...)."""

    def __init__(self, code: int, message: str):
        super().__init__(f"[{STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else code}] "
                         f"{message}")
        self.code = code
        self.message = message


def _check(status: int | None) -> None:
    if status:
        code = _c.pto_status_code_of(status)
        msg = _c.pto_status_message(status).decode(errors="replace")
        _c.pto_status_free(status)
        raise Error(code, msg)


def _fail(msg: str, code: int = INVALID_ARGUMENT) -> Error:
    return Error(code, msg)


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


def _pto_dtype(dtype: Any) -> int:
    """A pto dtype from a numpy dtype-like or a pto name ("bf16", "f32", "index", ...)."""
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
            v = p.value.f if p.value.dtype in (9, 10, 11, 12) else p.value.i
            params.append(Param(p.name.decode(), bool(p.is_tensor), ("in", "out", "inout")[p.dir],
                                _PTO_NAMES[p.dtype], p.rank,
                                ("none", "literal", "runtime")[p.bind], v))
        self.entry: str = sig.entry.decode()
        self.params: tuple[Param, ...] = tuple(params)
        self._codes = tuple((p.is_tensor, p.dir != "in", _PTO_NAMES.index(p.dtype),
                             p.bind == "literal", p.value) for p in params)
        self.is_host = bool(_c.pto_program_is_host(ptr))
        self.hid: int = _c.pto_program_hid(ptr)
        wd = _c.pto_program_work_dir(ptr)
        self.work_dir: str | None = wd.decode() if wd else None

    @classmethod
    def from_dir(cls, work_dir: str, rebuild: bool = True) -> "CompiledProgram":
        """Loads a work dir (pto compile -o DIR), rebuilding hand-edited parts first."""
        d = os.fsencode(work_dir)
        if rebuild:
            _check(_c.pto_program_rebuild_dir(d, None))
        out = C.c_void_p()
        _check(_c.pto_program_load_dir(d, C.byref(out)))
        return cls(out.value)

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
    return repr(v) if isinstance(v, float) else str(v)


def compile(path_or_text: str | os.PathLike, entry: str | None = None, *,
            devices: int | Sequence[int] | None = None, opt_level: int = 2,
            **bindings: Any) -> CompiledProgram:
    """Compiles PTIR (a .ptir path, a work dir, or PTIR text) through the binary cache.

    bindings: NAME=value specializes a scalar (pto.RUNTIME leaves it to run time; a tuple of
    ints is a sample shape of an unshaped tensor parameter: x=(64, 128)). devices: the device
    set of a host (L3) program, N (ids 0..N-1) or a list of ids."""
    src = os.fspath(path_or_text)
    if os.path.isdir(src):
        if bindings or devices is not None:
            raise _fail("a work dir is compiled already: bindings and devices do not apply")
        return CompiledProgram.from_dir(src)
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
        sa = (_c.Binding * max(1, len(scal)))(*[(k.encode(), _binding_value(v).encode())
                                               for k, v in scal])
        sm = (_c.Binding * max(1, len(samp)))(*[(k.encode(), _binding_value(v).encode())
                                               for k, v in samp])
        opt.scalars, opt.nscalars, opt.samples, opt.nsamples = sa, len(scal), sm, len(samp)
        if devices is not None:
            ids = list(range(devices)) if isinstance(devices, int) else [int(d) for d in devices]
            dv = (C.c_int32 * len(ids))(*ids)
            opt.devices, opt.ndevices = dv, len(ids)
        out = C.c_void_p()
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


class _Packer:
    """Fills one pto_arg array per program from Python arguments. An argument that is the very
    object of the previous call in its slot (the same array, tensor or scalar object) keeps its
    pto_arg as it is: a loop that passes the same buffers pays for the changed scalars only.
    Out/inout arrays that could not be passed in place are returned for copying back."""

    def __init__(self, prog: CompiledProgram):
        self.prog = prog
        self.n = len(prog.params)
        self.args = (_c.Arg * max(1, self.n))()
        self.scalars = [self.args[i].scalar for i in range(self.n)]
        self.last: list[Any] = [_UNSET] * self.n  # the objects the pto_args were made from
        self.keep: list[Any] = [None] * self.n  # contiguous copies of the current call

    def _bad(self, i: int, msg: str) -> Error:
        return _fail(f"{self.prog.entry}: argument {i} ('{self.prog.params[i].name}') {msg}")

    def pack(self, values: Sequence[Any] | dict) -> list[tuple[np.ndarray, np.ndarray]]:
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
        back: list[tuple[np.ndarray, np.ndarray]] = []
        last, codes = self.last, prog._codes
        for i, v in enumerate(values):
            if v is last[i]:
                continue
            last[i] = _UNSET
            is_tensor, writes, dt, literal, lit_value = codes[i]
            if is_tensor:
                a = self.args[i]
                if isinstance(v, np.ndarray):
                    arr = v
                    if not (v.flags.c_contiguous and v.flags.aligned):
                        arr = self.keep[i] = np.ascontiguousarray(v)
                        if writes:
                            if not v.flags.writeable:
                                raise self._bad(i, "is written but read-only")
                            back.append((v, arr))
                    a.kind = _c.ARG_HOST
                    a.readonly = not arr.flags.writeable
                    _host_tensor(a.host, arr, _tensor_dtype(arr, dt))
                    if arr is v:
                        last[i] = v
                elif isinstance(v, DeviceTensor):
                    a.kind = _c.ARG_DIST if isinstance(v, DistTensor) else _c.ARG_DEVICE
                    a.device = v._ptr
                    last[i] = v
                else:
                    raise self._bad(i, f"is a tensor: pass a numpy array or a device tensor, "
                                       f"not {type(v).__name__}")
            else:
                if v is None and literal:
                    v = lit_value
                if isinstance(v, (np.ndarray, DeviceTensor)) or v is None:
                    raise self._bad(i, f"is a scalar, got {type(v).__name__}")
                self.args[i].kind = _c.ARG_SCALAR
                s = self.scalars[i]
                s.dtype = dt
                if dt in (9, 10, 11, 12):
                    s.f = float(v)
                elif dt in (5, 6, 7, 8):
                    s.u = int(v)
                else:
                    s.i = int(v)
                last[i] = v
        return back


# ---- one chip (L2) ------------------------------------------------------------------------


@dataclass
class RunConfig:
    """pto_run_config: platform "sim"; cores 0 = the machine's online CPUs."""
    platform: str = "sim"
    cores: int = 0
    device_memory_bytes: int = 0
    record_tasks: bool = False

    def _c(self) -> _c.RunConfigC:
        cfg = _c.RunConfigC()
        _c.pto_run_config_init(C.byref(cfg))
        cfg.platform = self.platform.encode()
        cfg.ncores = self.cores
        cfg.device_memory_bytes = self.device_memory_bytes
        cfg.record_tasks = self.record_tasks
        return cfg


class DeviceTensor:
    """A tensor resident on a ChipWorker (pto_device_tensor)."""

    def __init__(self, worker: Any, ptr: int, shape: tuple[int, ...], dtype: int):
        self._worker, self._ptr, self.shape, self._dt = worker, ptr, shape, dtype

    @property
    def dtype(self) -> str:
        return _PTO_NAMES[self._dt]

    @property
    def np_dtype(self) -> np.dtype:
        return _PTO2NP[self._dt]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.np_dtype.itemsize

    def __repr__(self) -> str:
        return f"<pto.{type(self).__name__} {list(self.shape)} {self.dtype}>"


def _init_array(shape: tuple[int, ...], dt: int, init: Any) -> np.ndarray | None:
    if init is None:
        return None
    a = np.asarray(init)
    want = _PTO2NP[dt]
    if a.dtype != want:
        raise _fail(f"init has dtype {a.dtype}, the tensor is {_PTO_NAMES[dt]} (numpy {want})")
    if a.shape != shape:
        raise _fail(f"init has shape {list(a.shape)}, the tensor is {list(shape)}")
    return np.ascontiguousarray(a)


def _shape(shape: Iterable[int] | int) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


class Callable:
    """A registered program (pto_handle): call it with the entry's arguments."""

    def __init__(self, worker: "ChipWorker", prog: CompiledProgram, ptr: int):
        self._worker, self.program, self._ptr = worker, prog, ptr
        self._packer = _Packer(prog)

    @property
    def callable_id(self) -> int:
        return _c.pto_handle_callable_id(self._ptr)

    def __call__(self, *args: Any) -> None:
        vals = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, dict)) else args
        p = self._packer
        back = p.pack(vals)
        _check(_c.pto_handle_call(self._ptr, p.args, p.n))
        for dst, src in back:
            dst[...] = src

    def unregister(self) -> None:
        """Unregisters; calling it afterwards raises pto.Error (a stale handle)."""
        _c.pto_handle_unregister(self._ptr)

    def __enter__(self) -> "Callable":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()


class ChipWorker:
    """One chip (pto_worker): device tensors, registered programs, launches."""

    def __init__(self, config: RunConfig | None = None):
        self.config = config or RunConfig()
        cfg = self.config._c()
        out = C.c_void_p()
        _check(_c.pto_worker_open(C.byref(cfg), C.byref(out)))
        self._ptr: int | None = out.value
        self._packers: dict[int, _Packer] = {}

    def _w(self) -> int:
        if not self._ptr:
            raise _fail("the worker is closed", FAILED_PRECONDITION)
        return self._ptr

    @property
    def cores(self) -> int:
        return _c.pto_worker_core_count(self._w())

    def close(self) -> None:
        if self._ptr:
            _c.pto_worker_close(self._ptr)
            self._ptr = None
            self._packers.clear()

    def __enter__(self) -> "ChipWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def alloc_tensor(self, shape: Iterable[int] | int, dtype: Any = np.float32,
                     init: Any = None) -> DeviceTensor:
        shp, dt = _shape(shape), _pto_dtype(dtype)
        a = _init_array(shp, dt, init)
        out = C.c_void_p()
        _check(_c.pto_worker_alloc_tensor(self._w(), len(shp), (C.c_int64 * max(1, len(shp)))(*shp),
                                          dt, None if a is None else a.ctypes.data, C.byref(out)))
        return DeviceTensor(self, out.value, shp, dt)

    def free_tensor(self, t: DeviceTensor) -> None:
        _check(_c.pto_worker_free_tensor(self._w(), t._ptr))

    def _addr(self, t: DeviceTensor) -> int:
        addr = _c.pto_device_tensor_addr(t._ptr)
        if not addr:
            raise _fail(f"{t!r} was freed (or belongs to a closed worker)", FAILED_PRECONDITION)
        return addr

    def copy_to(self, t: DeviceTensor, array: Any) -> None:
        """Uploads array (t's shape and numpy dtype) into t."""
        a = _init_array(t.shape, t._dt, array)
        _check(_c.pto_worker_copy_to(self._w(), self._addr(t), a.ctypes.data, a.nbytes))

    def copy_from(self, t: DeviceTensor, out: np.ndarray | None = None) -> np.ndarray:
        """Reads t back into a new array (or into out, of t's shape and dtype)."""
        if out is None:
            out = np.empty(t.shape, t.np_dtype)
        elif out.shape != t.shape or out.dtype != t.np_dtype or not out.flags.c_contiguous:
            raise _fail(f"out must be a C-contiguous {list(t.shape)} {t.np_dtype} array")
        _check(_c.pto_worker_copy_from(self._w(), out.ctypes.data, self._addr(t), out.nbytes))
        return out

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
        return Callable(self, program, out.value)

    def run(self, program: CompiledProgram, args: Sequence[Any] | dict) -> None:
        """One launch (registering program on first use); out/inout arrays are written."""
        p = self._packers.get(id(program))
        if p is None or p.prog is not program:
            p = self._packers[id(program)] = _Packer(program)
        back = p.pack(args)
        _check(_c.pto_worker_run(self._w(), program._ptr, p.args, p.n))
        for dst, src in back:
            dst[...] = src

    def last_launch(self) -> dict[str, Any]:
        """The spans of the last launch: {"inv", "ntasks", "ok", "spans": {name: dur_us}}."""
        rec = _c.LaunchRecord()
        _check(_c.pto_worker_last_launch(self._w(), C.byref(rec)))
        return {"inv": rec.inv, "ntasks": rec.ntasks, "ok": rec.ok,
                "spans": {rec.spans[i].name.decode(): rec.spans[i].dur_ns / 1e3
                          for i in range(rec.nspans)}}


# ---- benchmarks ---------------------------------------------------------------------------

_SPREADS = ("stdev", "minmax", "both", "none")


class BenchmarkStats:
    """pto_benchmark's statistics, with the seed's names (times in microseconds)."""

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
        self.invocations: int = j["rounds"]
        nan = float("nan")
        for metric in ("device_wall", "host_wall", "effective"):
            s = j["summary"][metric]
            for k in ("min", "median", "mean", "max", "stdev"):
                setattr(self, f"{metric}_us_{k}", s[k] if s["count"] else nan)
        sm = j["samples"]
        self.samples: list[dict[str, float]] = [
            {f"{m}_us": (sm[m][i] if sm[m][i] is not None else nan)
             for m in ("device_wall", "host_wall", "effective")} for i in range(self.rounds)]

    device_wall_us_median: float
    device_wall_us_min: float
    host_wall_us_median: float
    host_wall_us_min: float

    @property
    def all_zero_device(self) -> bool:
        """Every measured launch's device wall is 0 (or missing): no device time was recorded."""
        return all(not (s["device_wall_us"] > 0) for s in self.samples)

    def __del__(self) -> None:
        if getattr(self, "_ptr", None):
            _c.pto_bench_stats_destroy(self._ptr)
            self._ptr = None

    def _tree(self, launch: int | None, spread: str, max_level: int) -> str:
        if spread not in _SPREADS:
            raise _fail(f"spread must be one of {_SPREADS}, not {spread!r}")
        tree = C.c_void_p()
        if launch is None:
            _check(_c.pto_bench_stats_mean_tree(self._ptr, C.byref(tree)))
        else:
            _check(_c.pto_bench_stats_launch_tree(self._ptr, launch, C.byref(tree)))
        try:
            out = C.c_void_p()
            _check(_c.pto_bench_tree_render(tree, _SPREADS.index(spread), max_level,
                                            C.byref(out)))
            return _c.take_string(out.value)
        finally:
            _c.pto_bench_tree_destroy(tree)

    def mean_tree(self, spread: str = "stdev", max_level: int = -1) -> str:
        return self._tree(None, spread, max_level)

    def print_mean_tree(self, spread: str = "stdev", max_level: int = -1, file: Any = None) -> None:
        print(self._tree(None, spread, max_level), end="", file=file or sys.stdout)

    def print_tree(self, launch: int = -1, max_level: int = -1, file: Any = None) -> None:
        """The span tree of one measured launch (default the last; negative counts back)."""
        i = launch + self.rounds if launch < 0 else launch
        print(self._tree(i, "none", max_level), end="", file=file or sys.stdout)

    def summary(self) -> str:
        out = C.c_void_p()
        _check(_c.pto_bench_stats_render_summary(self._ptr, C.byref(out)))
        return _c.take_string(out.value)

    def __repr__(self) -> str:
        return (f"<pto.BenchmarkStats rounds={self.rounds} device_wall_us_median="
                f"{self.device_wall_us_median:.2f} host_wall_us_median="
                f"{self.host_wall_us_median:.2f}>")


def _bench_opts(rounds: int, warmup: int) -> _c.BenchOptions:
    if rounds < 1 or warmup < 0:
        raise _fail(f"rounds must be >= 1 and warmup >= 0 (got {rounds}, {warmup})")
    opt = _c.BenchOptions()
    _c.pto_bench_options_init(C.byref(opt))
    opt.rounds, opt.warmup = rounds, warmup
    return opt


def benchmark(compiled: CompiledProgram, args: Sequence[Any] | dict, rounds: int = 100,
              warmup: int = 3, worker: ChipWorker | None = None,
              config: RunConfig | None = None) -> BenchmarkStats:
    """Registers compiled once and launches it warmup + rounds times (pto_benchmark). Without a
    worker, one is opened with config (or taken from a DeviceTensor among args) and closed."""
    if worker is None:
        worker = next((a._worker for a in (args.values() if isinstance(args, dict) else args)
                       if isinstance(a, DeviceTensor)), None)
    p = _Packer(compiled)
    back = p.pack(args)
    opt = _bench_opts(rounds, warmup)
    cfg = (config or RunConfig())._c()
    opt.run_config = C.pointer(cfg)
    out = C.c_void_p()
    _check(_c.pto_benchmark(worker._w() if worker else None, compiled._ptr, p.args, p.n,
                            C.byref(opt), C.byref(out)))
    for dst, src in back:
        dst[...] = src
    return BenchmarkStats(out.value)


# ---- many chips (L3) ----------------------------------------------------------------------


class DistTensor(DeviceTensor):
    """A resident (worker_id) or stacked (worker_ids) tensor of a DistributedWorker."""

    def __init__(self, worker: Any, ptr: int, shape: tuple[int, ...], dtype: int,
                 worker_ids: tuple[int, ...]):
        super().__init__(worker, ptr, shape, dtype)
        self.worker_ids = worker_ids


def _ns(v: Any) -> Any:
    if isinstance(v, dict):
        return SimpleNamespace(**{k: _ns(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_ns(x) for x in v]
    return v


class DistBenchmarkStats:
    """pto_dist_benchmark's L3 views, from pto/dist_bench.h's JSON (the seed's field names):
    per_round, per_rank, per_dispatch, dispatch_tasks, dispatch_groups, rounds_dispatches,
    unstable_dispatch_slots, fallback_flattened (dicts become attribute namespaces; .json is the
    raw dict)."""

    def __init__(self, ptr: int):
        try:
            out = C.c_void_p()
            _check(_c.pto_dist_bench_stats_to_json(ptr, C.byref(out)))
            self.json: dict[str, Any] = json.loads(_c.take_string(out.value))
            out = C.c_void_p()
            _check(_c.pto_dist_bench_stats_render(ptr, C.byref(out)))
            self.report: str = _c.take_string(out.value)
        finally:
            _c.pto_dist_bench_stats_destroy(ptr)
        for k, v in self.json.items():
            setattr(self, k, _ns(v))
        pr = self.json.get("per_round", {})
        for metric, name in (("device", "device_wall"), ("host", "host_wall"),
                             ("effective", "effective")):
            for k in ("min", "median", "mean", "max", "stdev"):  # the headline, per round
                setattr(self, f"{name}_us_{k}", pr.get(metric, {}).get(k, float("nan")))

    def __repr__(self) -> str:
        return f"<pto.DistBenchmarkStats {sorted(self.json)}>"


class DistributedWorker:
    """Many chips (pto_dist_worker): opening it forks one chip process per device, so open it
    before the process starts threads."""

    def __init__(self, devices: int | Sequence[int] = 1, cores_per_chip: int = 0,
                 shared_heap_bytes: int = 0, wait_timeout_ms: int = 0,
                 transport: str | None = None, window_bytes: int = 0):
        """transport: "shm" (default) or "mpi" (a pto built with -DPTO_MPI=ON, under mpirun:
        on ranks other than 0 opening serves rank 0's chip until it closes, and `is_root` is
        then False)."""
        import threading
        if threading.active_count() > 1:
            import warnings
            warnings.warn("pto.DistributedWorker forks its chip processes while this process "
                          "runs other threads: open it before starting threads", RuntimeWarning,
                          stacklevel=2)
        cfg = _c.DistConfig()
        _c.pto_dist_config_init(C.byref(cfg))
        if isinstance(devices, int):
            cfg.ndevices = devices
        else:
            ids = [int(d) for d in devices]
            self._ids = (C.c_int32 * max(1, len(ids)))(*ids)
            cfg.ndevices, cfg.device_ids = len(ids), self._ids
        cfg.ncores_per_chip, cfg.shared_heap_bytes = cores_per_chip, shared_heap_bytes
        cfg.wait_timeout_ms = wait_timeout_ms
        if transport is not None:
            self._transport = transport.encode()
            cfg.transport = self._transport
        cfg.window_bytes = window_bytes
        out = C.c_void_p()
        _check(_c.pto_dist_worker_open(C.byref(cfg), C.byref(out)))
        self._ptr: int | None = out.value
        self._packers: dict[int, _Packer] = {}

    def _w(self) -> int:
        if not self._ptr:
            raise _fail("the distributed worker is closed", FAILED_PRECONDITION)
        return self._ptr

    @property
    def devices(self) -> int:
        return _c.pto_dist_worker_device_count(self._w())

    @property
    def is_root(self) -> bool:
        """False on an MPI rank other than 0, which only served rank 0's chip."""
        return bool(_c.pto_dist_worker_is_root(self._w()))

    @property
    def transport(self) -> str:
        return _c.pto_dist_worker_transport(self._w()).decode()

    def close(self) -> None:
        if self._ptr:
            _c.pto_dist_worker_close(self._ptr)
            self._ptr = None

    def __enter__(self) -> "DistributedWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def alloc_tensor(self, shape: Iterable[int] | int, dtype: Any = np.float32, init: Any = None,
                     worker_id: int = 0) -> DistTensor:
        shp, dt = _shape(shape), _pto_dtype(dtype)
        a = _init_array(shp, dt, init)
        out = C.c_void_p()
        _check(_c.pto_dist_alloc_tensor(self._w(), len(shp), (C.c_int64 * max(1, len(shp)))(*shp),
                                        dt, None if a is None else a.ctypes.data, worker_id,
                                        C.byref(out)))
        return DistTensor(self, out.value, shp, dt, (worker_id,))

    def alloc_stacked_tensor(self, array: np.ndarray, worker_ids: Sequence[int] | None = None,
                             dtype: Any = None) -> DistTensor:
        """Shard i (array[i]) resident on worker_ids[i] (default rank i). dtype="bf16" for a
        uint16 array of bf16 bits."""
        a = np.ascontiguousarray(array)
        dt = _pto_dtype(dtype if dtype is not None else a.dtype)
        if _PTO2NP[dt] != a.dtype:
            raise _fail(f"array has dtype {a.dtype}, not {_PTO_NAMES[dt]}")
        ids = list(range(a.shape[0])) if worker_ids is None else [int(i) for i in worker_ids]
        if len(ids) != a.shape[0]:
            raise _fail(f"{len(ids)} worker ids for {a.shape[0]} shards")
        ht = _c.HostTensor()
        _host_tensor(ht, a, dt)
        out = C.c_void_p()
        _check(_c.pto_dist_alloc_stacked_tensor(self._w(), C.byref(ht),
                                                (C.c_int * len(ids))(*ids), C.byref(out)))
        return DistTensor(self, out.value, a.shape, dt, tuple(ids))

    def free_tensor(self, t: DistTensor) -> None:
        _check(_c.pto_dist_free_tensor(self._w(), t._ptr))

    def copy_to(self, t: DistTensor, array: Any) -> None:
        a = _init_array(t.shape, t._dt, array)
        _check(_c.pto_dist_copy_to(self._w(), t._ptr, a.ctypes.data, a.nbytes))

    def copy_from(self, t: DistTensor, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(t.shape, t.np_dtype)
        elif out.shape != t.shape or out.dtype != t.np_dtype or not out.flags.c_contiguous:
            raise _fail(f"out must be a C-contiguous {list(t.shape)} {t.np_dtype} array")
        _check(_c.pto_dist_copy_from(self._w(), out.ctypes.data, t._ptr, out.nbytes))
        return out

    def copy_stacked_from(self, t: DistTensor, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(t.shape, t.np_dtype)
        elif out.shape != t.shape or out.dtype != t.np_dtype or not out.flags.c_contiguous:
            raise _fail(f"out must be a C-contiguous {list(t.shape)} {t.np_dtype} array")
        ht = _c.HostTensor()
        _host_tensor(ht, out, t._dt)
        _check(_c.pto_dist_copy_stacked_from(self._w(), t._ptr, C.byref(ht)))
        return out

    def _pack(self, program: CompiledProgram, args: Any) -> tuple[_Packer, list]:
        p = self._packers.get(id(program))
        if p is None or p.prog is not program:
            p = self._packers[id(program)] = _Packer(program)
        return p, p.pack(args)

    def run(self, program: CompiledProgram, args: Sequence[Any] | dict) -> None:
        """One run of a host program compiled for this device set (any number of programs)."""
        p, back = self._pack(program, args)
        _check(_c.pto_dist_worker_run(self._w(), program._ptr, p.args, p.n))
        for dst, src in back:
            dst[...] = src

    def benchmark(self, program: CompiledProgram, args: Sequence[Any] | dict,
                  rounds: int = 100, warmup: int = 3) -> DistBenchmarkStats:
        p, back = self._pack(program, args)
        opt = _bench_opts(rounds, warmup)
        out = C.c_void_p()
        _check(_c.pto_dist_benchmark(self._w(), program._ptr, p.args, p.n, C.byref(opt),
                                     C.byref(out)))
        for dst, src in back:
            dst[...] = src
        return DistBenchmarkStats(out.value)
