"""The SQLite reads that run per request or per correction are served by their indexes,
with and without ANALYZE statistics: each store method is called on a filled database,
the statements it ran are recorded (``set_trace_callback``) and each one's
``EXPLAIN QUERY PLAN`` must not walk the large tables it reads (a scan grows with the
conversation and the number of corrections)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.store.sqlite_assembly import SqliteAssemblyReads
from memory_core.store.sqlite_capture import SqliteHistoryReads
from memory_core.store.sqlite_engine import SqliteExtractionQueue
from memory_core.store.sqlite_memory import SqliteItemWrites

pytestmark = pytest.mark.sqlite_only("query plans of the SQLite file")

MESSAGES, ITEMS, NODES = 3000, 3000, 40


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` into ``table``, each NOT NULL column without a default that a row
    leaves out filled by its declared type."""
    filler = {"INTEGER": 1, "REAL": 1.0, "TEXT": "x", "BIGINT": 1}
    needed = {c[1]: filler.get(c[2].upper(), "x") for c in conn.execute(
        f"PRAGMA table_info({table})") if c[3] and c[4] is None and not c[5]}
    for row in rows:
        full = {**needed, **row}
        conn.execute(f"INSERT INTO {table} ({','.join(full)}) VALUES"
                     f" ({','.join('?' * len(full))})", tuple(full.values()))


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database shaped like a long conversation full of corrections: many messages,
    most items superseded, a few in conflict, compacted into summary nodes whose rows
    are large, and one message waiting for extraction."""
    path = tmp_path_factory.mktemp("plans") / "d"
    Engine(path).close()
    db = path / "lcm.sqlite3"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    _insert(conn, "messages", [
        {"id": i, "tenant": "t", "role": "r", "session": "s", "thread_id": 1,
         "msg_role": "user" if i % 2 else "assistant", "text": f"message {i} " * 20,
         "node_key": f"k{i}", "raw_json": "{}", "created_at": float(i)}
        for i in range(1, MESSAGES + 1)])
    _insert(conn, "memory_items", [
        {"id": i, "tenant": "t", "role": "r", "session": "s", "thread_id": 1,
         "kind": "fact", "subject": f"pool size {i % 50}", "text": f"the pool size is {i}",
         "status": "active" if i % 3 == 0 else "superseded", "source_message_id": i,
         "conflict_with": i - 1 if i % 97 == 0 else None, "evidence": "user",
         "created_at": float(i), "updated_at": float(i), "data": "{}"}
        for i in range(1, ITEMS + 1)])
    _insert(conn, "summary_nodes", [
        {"id": i, "tenant": "t", "role": "r", "thread_id": 1, "level": 0,
         "first_message_id": i * 50, "last_message_id": i * 50 + 49,
         "message_ids": str(list(range(i * 50, i * 50 + 50))), "text": "summary " * 400,
         "tokens": 800, "source_tokens": 4000, "model": "extractive",
         "status": "active" if i % 4 else "replaced", "created_at": float(i)}
        for i in range(1, NODES + 1)])
    _insert(conn, "extraction_queue", [{"message_id": MESSAGES, "next_at": 0.0}])
    conn.execute("COMMIT")
    conn.close()
    return db


def _plans(db: Path, analyze: bool, call: Callable[[sqlite3.Connection], Any]
           ) -> list[tuple[str, list[str]]]:
    """Each statement ``call`` ran on a connection to ``db`` (statistics as asked) with
    its query plan."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("DROP TABLE IF EXISTS sqlite_stat1")
        if analyze:  # as a database closes (PRAGMA optimize): the queue empty by then
            queued = conn.execute("SELECT * FROM extraction_queue").fetchall()
            conn.execute("DELETE FROM extraction_queue")
            conn.execute("ANALYZE")
            conn.executemany("INSERT INTO extraction_queue VALUES (?,?,?,?)", queued)
        ran: list[str] = []
        conn.set_trace_callback(ran.append)
        call(conn)
        conn.set_trace_callback(None)
        ran = [s for s in ran if s.lstrip().upper().startswith("SELECT")]
        assert ran, "the call ran no query"
        return [(s, [r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {s}")]) for s in ran]
    finally:
        conn.close()


# The index each call's statement must take (``None``: any, as long as no table is
# walked).
USES: dict[str, str | None] = {
    "superseded_texts": "INDEX memory_items_superseded",
    "conflicting_active": "INDEX memory_items_conflict",
    "active_summaries": "COVERING INDEX summary_nodes_scope",
    "extraction_due": None,
    "extraction_pending": None,
}
CALLS: dict[str, Callable[[sqlite3.Connection], Any]] = {
    "superseded_texts": lambda c: SqliteAssemblyReads(c).superseded_texts(
        "t", "r", [5, 8, 11, 2999]),
    "conflicting_active": lambda c: SqliteItemWrites(c).conflicting_active(290, 291),
    "active_summaries": lambda c: SqliteHistoryReads(c).active_summaries("t", "r"),
    "extraction_due": lambda c: SqliteExtractionQueue(c).due(1.0, 8),
    "extraction_pending": lambda c: SqliteExtractionQueue(c).pending(MESSAGES),
}


@pytest.mark.parametrize("analyze", [False, True], ids=["no-stats", "analyzed"])
@pytest.mark.parametrize("name", list(CALLS))
def test_per_request_reads_use_their_indexes(filled: Path, name: str, analyze: bool) -> None:
    for sql, plan in _plans(filled, analyze, CALLS[name]):
        scans = [p for p in plan if p.startswith("SCAN") and p != "SCAN q"]  # the queue
        assert not scans, f"{name} walks a table: {plan} for {sql}"
        want = USES[name]
        assert want is None or any(want in p for p in plan), f"{name}: {plan} for {sql}"


def test_the_calls_read_what_they_should(filled: Path) -> None:
    """The pinned statements still return their rows (the plan tests above check only
    how; this checks what, on the same data)."""
    conn = sqlite3.connect(filled, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        texts = SqliteAssemblyReads(conn).superseded_texts("t", "r", [5, 8, 9, 2999])
        assert texts == [(5, "the pool size is 5"), (8, "the pool size is 8"),
                         (2999, "the pool size is 2999")]
        assert SqliteItemWrites(conn).conflicting_active(290, 0) == [291]
        assert SqliteItemWrites(conn).conflicting_active(290, 291) == []
        assert SqliteItemWrites(conn).conflicting_active(96, 0) == []  # 97 is superseded
        summaries = SqliteHistoryReads(conn).active_summaries("t", "r")
        assert sorted(summaries) == [i for i in range(1, NODES + 1) if i % 4]
        assert [r["message_id"] for r in SqliteExtractionQueue(conn).due(1.0, 8)] == [MESSAGES]
    finally:
        conn.close()
