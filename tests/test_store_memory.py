"""SQLite's memory in the process: every connection's page cache under one limit
(``storage.sqlite_memory_limit_kib``)."""

from __future__ import annotations

import ctypes
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core.config import MemoryConfig
from memory_core.store.factory import open_store
from memory_core.store.sqlite import SqliteStore


def _sqlite_memory_used() -> int | None:
    """Bytes SQLite has allocated in this process (``sqlite3_status64``,
    ``SQLITE_STATUS_MEMORY_USED``) from the library ``sqlite3`` loaded."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        if "libsqlite3" in line or "_sqlite3" in line:
            lib = ctypes.CDLL(line.split()[-1])
            cur, high = ctypes.c_int64(), ctypes.c_int64()
            try:
                if lib.sqlite3_status64(0, ctypes.byref(cur), ctypes.byref(high), 0) == 0:
                    return cur.value
            except AttributeError:
                continue
    return None


@pytest.fixture
def no_limit_after() -> Iterator[None]:
    """The soft heap limit is process-wide: lift it again after the test."""
    yield
    sqlite3.connect(":memory:").execute("PRAGMA soft_heap_limit=0")


def _fill_and_scan(store: SqliteStore, readers: int) -> int:
    """Write about 12 MB, scan it whole from ``readers`` threads (each its own
    connection, kept open); return SQLite's memory afterwards in bytes."""
    def fill(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS blobs (b BLOB)")
        conn.executemany("INSERT INTO blobs VALUES (?)",
                         ((os.urandom(600),) for _ in range(20_000)))
    store.write_sync(fill)
    errors: list[BaseException] = []
    done = threading.Barrier(readers + 1)

    def scan() -> None:
        try:
            store.read(lambda c: c.execute("SELECT sum(length(b)) FROM blobs").fetchone())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        done.wait(30)  # keep the thread (and its connection's cache) until measured
        done.wait(30)

    threads = [threading.Thread(target=scan) for _ in range(readers)]
    for t in threads:
        t.start()
    done.wait(30)
    used = _sqlite_memory_used()
    done.wait(30)
    for t in threads:
        t.join()
    assert not errors
    assert used is not None
    return used


@pytest.mark.sqlite_only("SQLite's own memory counter")
@pytest.mark.usefixtures("no_limit_after")
def test_the_memory_limit_bounds_every_connections_page_cache_together(
        tmp_path: Path) -> None:
    """Six readers and the writer with 4 MB page caches each hold about 28 MB of a
    12 MB database's pages without the limit; with ``sqlite_memory_limit_kib`` at
    2,048 SQLite's memory stays near 2 MB and every read still answers."""
    if _sqlite_memory_used() is None:
        pytest.skip("sqlite3_status64 not reachable from this build")
    sqlite3.connect(":memory:").execute("PRAGMA soft_heap_limit=0")
    free = SqliteStore(tmp_path / "free", cache_kib=4000)
    try:
        unbounded = _fill_and_scan(free, 6)
    finally:
        free.close()
    bounded_store = open_store(tmp_path / "bounded", MemoryConfig(
        sqlite_cache_kib=4000, sqlite_memory_limit_kib=2048))
    assert isinstance(bounded_store, SqliteStore)
    try:
        bounded = _fill_and_scan(bounded_store, 6)
        limit = bounded_store.read(
            lambda c: int(c.execute("PRAGMA soft_heap_limit").fetchone()[0]))
    finally:
        bounded_store.close()
    assert limit == 2048 * 1024
    assert unbounded > 20 * 2**20
    assert bounded < 4 * 2**20


def test_the_memory_limit_is_on_by_default() -> None:
    """The default keeps SQLite's memory to a few MB whatever the number of threads."""
    assert 0 < MemoryConfig().sqlite_memory_limit_kib <= 16 * 1024
