"""docs/pypto-names.md cannot go stale: every pto name its tables give exists in the package.

Each table row maps PyPTO's name (first column) to pto's (second). Every code span of the pto
column is checked, and of the PyPTO column too where pto's says "same". A dotted name (`w.run`,
`rt.alloc_tensor`, `handle.cid`, `pto.RegistrationHandle`, `ChipWorker.current`) must be an
attribute of its owner (a class attribute, a dataclass field, a property or an attribute its
methods set on `self`); a call's keywords (`RunConfig(platform=, ...)`) must be parameters of the
callable; a bare name (`output_indices`, `.nbytes`, `per_round(metric)`) must belong to one of the
owners the row or its section names. A code span that is not a Python name (a file, a CLI
command) is left alone; a name whose owner the test does not know fails it, so a new kind of row
gets a rule here."""
import ast
import dataclasses
import inspect
import os
import re
import textwrap

import numpy as np
import pytest

import pto
from conftest import SRC

DOC = os.path.join(SRC, "docs", "pypto-names.md")
ADD = os.path.join(SRC, "examples", "add.ptir")  # add(a, b, out c): [M,128] f32
# live objects of the classes whose attributes are set at run time (BenchmarkStats' statistics),
# filled by the fixture below
INSTANCES = {}

# the objects PyPTO's snippets name by a variable
ROOTS = {"w": pto.ChipWorker, "rt": pto.DistributedWorker, "compiled": pto.CompiledProgram,
         "handle": pto.Callable, "inv": pto.Invocation, "stacked": pto.StackedDeviceTensor,
         "result": pto.RunResult, "pto": pto}
# each section's default owners of bare names
SECTIONS = {"Programs and one-shot runs": [pto, pto.CompiledProgram, pto.RunResult, pto.RunConfig],
            "One chip: `ChipWorker`": [pto.ChipWorker, pto.DeviceTensor, pto.Callable],
            "simpler's `ChipWorker`, below PyPTO's": [pto.ChipWorker, pto.Callable],
            "Benchmarks": [pto.BenchmarkStats, pto.DistBenchmarkStats, pto.Invocation],
            "Many chips: `DistributedWorker`": [pto.DistributedWorker, pto.StackedDeviceTensor]}
# PyPTO-only roots (PyPTO's `ir.compile`) and spans of prose that are not pto names: the
# parameter a row talks about, numpy's dtype of bf16 bits, a statement keyword
PROSE = {"ir", "uint16"}
# keyword spans of prose: RunConfig's row says pto.run's compile gets DistributedConfig's ids as
# pto.compile's devices=
PROSE_KEYWORDS = {"devices"}
STAT_SUFFIXES = ("min", "median", "mean", "max", "stdev")


def _self_attrs(cls):
    """The attributes the methods of cls (and its bases) set on self."""
    names = set()
    for k in inspect.getmro(cls):
        if k is object or k.__module__ != pto.__name__:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(k)))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and isinstance(node.ctx, ast.Store)):
                names.add(node.attr)
    return names


def has(owner, name):
    if hasattr(owner, name) or (owner in INSTANCES and hasattr(INSTANCES[owner], name)):
        return True
    if inspect.isclass(owner):
        if dataclasses.is_dataclass(owner) and name in {f.name for f in dataclasses.fields(owner)}:
            return True
        return name in _self_attrs(owner)
    return False


def params(fn):
    """The keyword names fn takes (a class: its __init__'s), or None if it takes any."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return {n for n, p in sig.parameters.items() if p.kind is not p.VAR_POSITIONAL}


def spans(cell):
    return re.findall(r"`([^`]+)`", cell)


def expand(span):
    """PyPTO's shorthand for stat families: device_us_min/median/... and device_wall_us_*."""
    if re.fullmatch(r"\w+(/\w+)+", span):
        base = span.split("/")[0].rsplit("_", 1)[0]
        return [base + "_" + s for s in STAT_SUFFIXES]
    if re.fullmatch(r"\w+_\*", span):
        return [span[:-1] + s for s in STAT_SUFFIXES]
    return [span]


class Row:
    def __init__(self, where, owners):
        self.where = where
        self.owners = list(owners)  # what bare names may belong to
        self.bare = []  # (name, span) checked at the end against every owner of the row
        self.calls = []  # callables named in the row, for keyword spans (`worker_id=`)
        self.errors = []

    def resolve(self, node):
        """The object an expression names, or None (unknown root: an error)."""
        if isinstance(node, ast.Name):
            if node.id in ROOTS:
                return ROOTS[node.id]
            if node.id in PROSE:
                return PROSE
            if hasattr(pto, node.id):
                return getattr(pto, node.id)
            for o in reversed(self.owners):  # a bare name: the latest owner that has it
                if has(o, node.id):
                    return getattr(INSTANCES.get(o, o), node.id, PROSE)
            self.bare.append(node.id)  # checked again once the row has named its owners
            return PROSE
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is PROSE or base is None:
                return PROSE
            if not has(base, node.attr):
                owner = getattr(base, "__name__", base)
                self.errors.append("%s: %s has no %r" % (self.where, owner, node.attr))
                return PROSE
            self.owners.append(base)
            return getattr(base, node.attr, PROSE)
        return PROSE

    def check_call(self, fn, node):
        if fn is PROSE:
            return
        if fn is not pto and inspect.isclass(fn):
            self.owners.append(fn)
        target = fn
        if inspect.isclass(fn) and isinstance(node.func, ast.Name) and node.func.id in ROOTS:
            # compiled(...), rt(...), handle(...): the instance is called
            if not any("__call__" in vars(k) for k in fn.__mro__[:-1]):
                self.errors.append("%s: %s is not callable" % (self.where, fn.__name__))
                return
            target = fn.__call__
        self.calls.append(target)
        ok = params(target)
        for kw in node.keywords:
            if kw.arg is None or ok is None:
                continue
            if kw.arg not in ok and not (inspect.isclass(fn) and has(fn, kw.arg)):
                self.errors.append("%s: %s takes no %s=" % (self.where, ast.unparse(node.func),
                                                            kw.arg))
        for a in node.args + [k.value for k in node.keywords]:
            if isinstance(a, ast.Call):
                self.check_call(self.resolve(a.func), a)

    def add(self, span):
        if span.startswith("."):
            span = span[1:]
        for s in expand(span):
            outer = re.sub(r"\(.*\)|\[.*\]", "", s)
            if re.search(r"[/ ]|\.json$", outer) or s.startswith("("):
                continue  # a file, a folder, a CLI command, a call shape
            if s == "with":  # a with block: a context manager
                self.bare.append("__enter__")
                continue
            kw = re.fullmatch(r"(\w+)=(.*)", s)
            if kw:
                self.bare.append(("=", kw.group(1)))
                if kw.group(2):  # its value: distributed_config=DistributedConfig(...)
                    s = kw.group(2)
                else:
                    continue
            src = re.sub(r"\*\s*,", "", s)  # a bare * in a signature
            src = re.sub(r"=\s*(?=[,)])", "=None", src)  # keyword= with no value
            try:
                node = ast.parse(src, mode="eval").body
            except SyntaxError:
                self.errors.append("%s: cannot read `%s`" % (self.where, span))
                continue
            if isinstance(node, ast.Call):
                self.check_call(self.resolve(node.func), node)
            elif isinstance(node, (ast.Name, ast.Attribute)):
                obj = self.resolve(node)
                if inspect.isclass(obj) and obj.__module__ == pto.__name__:
                    self.owners.append(obj)

    def takes(self, name):
        """A parameter of a callable the row names (`host` of copy_stacked_from(stacked, host))."""
        return any(params(c) is None or name in params(c) for c in self.calls)

    def finish(self):
        for b in self.bare:
            if isinstance(b, tuple):  # a keyword span: a parameter of a callable of the row
                name = b[1]
                if name not in PROSE_KEYWORDS and not self.takes(name):
                    self.errors.append("%s: no callable of the row takes %s=" % (self.where, name))
            elif not any(has(o, b) for o in self.owners) and not self.takes(b):
                self.errors.append("%s: %r is not an attribute of %s" % (
                    self.where, b, ", ".join(getattr(o, "__name__", str(o)) for o in self.owners)))
        return self.errors


def rows():
    """(line number, section, cells) of every table row but the headers."""
    section = None
    with open(DOC, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        header = n < len(lines) and lines[n].startswith("| ---")
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| ") and not line.startswith("| ---") and not header:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            yield n, section, cells


def test_every_table_row_is_read():
    got = list(rows())
    assert len(got) > 40, "docs/pypto-names.md has %d table rows" % len(got)
    assert {s for _, s, _ in got} == set(SECTIONS), "a section without owners: add it to SECTIONS"


@pytest.fixture(scope="module")
def live():
    prog = pto.compile(ADD)
    a = np.ones((128, 128), np.float32)
    with pto.ChipWorker(config=pto.RunConfig()) as w:
        stats = pto.benchmark(prog, [a, a, np.zeros_like(a)], rounds=2, warmup=0, worker=w)
        INSTANCES.update({pto.CompiledProgram: prog, pto.ChipWorker: w,
                          pto.BenchmarkStats: stats, pto.Invocation: stats.invocations[0],
                          pto.TraceSpan: stats.invocations[0].spans[0],
                          pto.DeviceTensor: w.alloc_tensor((4, 4), np.float32),
                          pto.Callable: w.register(prog)})
        yield
    INSTANCES.clear()


def test_every_pto_name_exists(live):
    errors = []
    for n, section, cells in rows():
        row = Row("docs/pypto-names.md:%d" % n, SECTIONS[section])
        pyp, ours = cells[0], cells[1]
        if ours.startswith("same"):
            for s in spans(pyp):
                row.add(s)
        for s in spans(ours):
            row.add(s)
        errors += row.finish()
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("text", [
    "| `w.no_such_method()` | same | |",
    "| `RunConfig(no_such_field=)` | same | |",
    "| `rt.alloc_tensor(shape)` | same, `no_such_kw=` | |",
    "| `compiled.param_names`, `no_such_attr` | same | |",
    "| `frobnicate(x)` | same | |",
])
def test_a_stale_name_is_caught(text):
    """The checker itself: a name pto does not have fails the row."""
    cells = [c.strip() for c in text.strip().strip("|").split(" | ")]
    row = Row("sample", SECTIONS["Programs and one-shot runs"])
    for s in spans(cells[1]) + spans(cells[0]):
        row.add(s)
    assert row.finish(), text
