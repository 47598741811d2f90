"""pto.cache: the binary cache (pto/cache.h), as `pto cache` shows and maintains it.

    pto.cache.stats()      counters, entries and bytes (a dict)
    pto.cache.ls()         every entry, most recently used first (dicts; "other_version" names
                           the manifest schema of another pto version's entry, else None)
    pto.cache.verify()     re-hashes every entry; corrupt ones are discarded: {key: problem}
    pto.cache.gc(max_bytes=None)   evicts least recently used entries down to max_bytes
    pto.cache.clear()      removes every entry; returns how many
    pto.cache.remove(key)  removes one entry (its key or a unique start of it); returns its key
    pto.cache.dir()        where it is ($PTO_CACHE_DIR, else $XDG_CACHE_HOME/pto, ...)"""
from __future__ import annotations

import ctypes as C
import os
from typing import Any

from . import _capi as _c


def _check(status: int | None) -> None:
    from . import _check as check
    check(status)


def dir() -> str:  # noqa: A001  (pto.cache.dir, as `pto cache` names it)
    buf = C.create_string_buffer(4096)
    _check(_c.pto_cache_dir(buf, len(buf)))
    return buf.value.decode()


def stats() -> dict[str, int]:
    st = _c.CacheStats()
    _check(_c.pto_cache_stats_get(C.byref(st)))
    return {name: int(getattr(st, name)) for name, _ in _c.CacheStats._fields_}


def ls() -> list[dict[str, Any]]:
    v, n = C.POINTER(_c.CacheEntry)(), C.c_int()
    _check(_c.pto_cache_list(C.byref(v), C.byref(n)))
    try:
        return [{"key": e.key.decode(), "path": e.path.decode() if e.path else None,
                 "program": e.program.decode() if e.program else None,
                 "entry": e.entry.decode() if e.entry else None, "bytes": int(e.bytes),
                 "last_use_ns": int(e.last_use_ns), "created_ns": int(e.created_ns),
                 "other_version": e.other_schema.decode() if e.other_schema else None}
                for e in (v[i] for i in range(n.value))]
    finally:
        if n.value:
            _c.pto_cache_list_free(v, n)


def verify() -> dict[str, str]:
    """Checks every entry; returns {key: problem} of the corrupt ones (already discarded)."""
    bad: dict[str, str] = {}

    def report(_ctx: Any, key: bytes, problem: int) -> None:
        bad[key.decode()] = _c.pto_status_message(problem).decode(errors="replace")

    fn = _c.CACHE_VERIFY_FN(report)
    checked, corrupt = C.c_int(), C.c_int()
    _check(_c.pto_cache_verify(fn, None, C.byref(checked), C.byref(corrupt)))
    return bad


def gc(max_bytes: int | str | None = None) -> dict[str, int]:
    """Evicts least recently used entries until the cache holds at most max_bytes (an int, or
    "512M"/"2G"; None: $PTO_CACHE_MAX_SIZE, else nothing is evicted) and removes build dirs of
    dead processes."""
    from . import U64_MAX, _int
    if max_bytes is None:
        max_bytes = os.environ.get("PTO_CACHE_MAX_SIZE") or 0
    if isinstance(max_bytes, str):
        n = C.c_uint64()
        _check(_c.pto_cache_parse_size(max_bytes.encode(), C.byref(n)))
        max_bytes = n.value
    r = _c.CacheGcResult()
    _check(_c.pto_cache_gc(_int("max_bytes", max_bytes, 0, U64_MAX), C.byref(r)))
    return {name: int(getattr(r, name)) for name, _ in _c.CacheGcResult._fields_}


def clear() -> int:
    n = C.c_uint64()
    _check(_c.pto_cache_clear(C.byref(n)))
    return n.value


def remove(key: str) -> str:
    """Removes the entry whose key starts with key (pto cache rm); returns its full key.
    pto.Error when no entry or several match (nothing is removed then)."""
    if not isinstance(key, str):
        from . import _fail
        raise _fail(f"remove: key must be a str of 1 to 32 hex digits, got {key!r}")
    out = (C.c_char * 33)()
    _check(_c.pto_cache_remove(key.encode(), out))
    return out.value.decode()


rm = remove
