"""pto.cache: stats, ls, verify, gc, clear and remove over the binary cache (pto/cache.h), in a
cache dir of this test's own."""
import os

import numpy as np
import pytest

import pto
from conftest import SRC

ADD = os.path.join(SRC, "examples", "add.ptir")
SCALE = os.path.join(SRC, "examples", "scale_rows.ptir")


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PTO_CACHE_DIR", str(tmp_path / "cache"))
    yield


def test_cache_round_trip(tmp_path):
    assert pto.cache.dir() == str(tmp_path / "cache")
    assert pto.cache.ls() == [] and pto.cache.stats()["entries"] == 0
    pto.compile(ADD, work_dir=tmp_path / "w1")
    pto.compile(SCALE, work_dir=tmp_path / "w2")
    st = pto.cache.stats()
    assert st["entries"] == 2 and st["stores"] == 2 and st["bytes"] > 0
    entries = pto.cache.ls()
    assert {e["program"] for e in entries} == {"add", "scale_rows"}
    assert all(len(e["key"]) == 32 and e["bytes"] > 0 for e in entries)
    assert all(e["other_version"] is None for e in entries)  # this pto's entries
    assert pto.cache.verify() == {}
    add = next(e for e in entries if e["program"] == "add")
    assert pto.cache.remove(add["key"][:6]) == add["key"]
    assert [e["program"] for e in pto.cache.ls()] == ["scale_rows"]
    with pytest.raises(pto.Error) as e:
        pto.cache.remove(add["key"])
    assert e.value.code == pto.NOT_FOUND and "no cache entry" in e.value.message
    with pytest.raises(pto.Error) as e:
        pto.cache.remove("zz")
    assert "1 to 32 hex digits" in e.value.message
    assert len(pto.cache.ls()) == 1
    r = pto.cache.gc("1")
    assert r["evicted"] == 1 and r["entries"] == 0
    pto.compile(ADD, work_dir=tmp_path / "w3")
    assert pto.cache.clear() == 1 and pto.cache.ls() == []


def test_verify_reports_and_discards_a_damaged_entry(tmp_path):
    pto.compile(SCALE, work_dir=tmp_path / "w")
    (e,) = pto.cache.ls()
    so = os.path.join(e["path"], "kernels", "kernels.so")
    with open(so, "r+b") as f:
        f.seek(300)
        f.write(b"x")
    bad = pto.cache.verify()
    assert list(bad) == [e["key"]] and bad[e["key"]]
    assert pto.cache.ls() == [] and pto.cache.stats()["corruptions"] == 1
    with pytest.raises(pto.Error):
        pto.cache.gc(-1)
    with pytest.raises(pto.Error):
        pto.cache.gc("lots")
    # the next compile rebuilds it, and runs
    p = pto.compile(SCALE)
    assert p.entry and np is not None
