"""The item and search reads of the store (``ItemReads``, ``SearchReads``): what
supersession and search ask, in the statements they asked it in before the move."""

from __future__ import annotations

import sqlite3

import orjson

from memory_core.search.base import SearchFilter
from memory_core.search.successors import current_successors
from memory_core.store.migrations import apply_migrations
from memory_core.store.sqlite_ops import SqliteTx


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    apply_migrations(conn)
    return conn


def _item(conn: sqlite3.Connection, text: str, *, status: str = "active", unit: str | None = None,
          speaker: str = "", label: str = "", tenant: str = "t", at: float = 1.0) -> int:
    data = {k: v for k, v in (("speaker", speaker), ("label", label)) if v}
    cur = conn.execute(
        "INSERT INTO memory_items (tenant, role, session, thread_id, kind, subject, text, unit,"
        " status, evidence, created_at, updated_at, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (tenant, "r", "s", 1, "fact", "port", text, unit, status, "user", at, at,
         orjson.dumps(data).decode()))
    return int(cur.lastrowid or 0)


def test_correction_candidates_filter_by_speaker_label_and_unit_newest_first() -> None:
    conn = _db()
    plain = _item(conn, "the port is 5433")
    seconds = _item(conn, "the timeout is 30 s", unit="s")
    _item(conn, "the disk is 12 GB", unit="GB")
    _item(conn, "Bob's port is 7000", speaker="Bob")
    run = _item(conn, "Run 40: score 0.9", label="Run 40")
    _item(conn, "gone", status="superseded")
    _item(conn, "other tenant", tenant="u")
    items = SqliteTx(conn).items
    ids = [r["id"] for r in items.correction_candidates("t", "r", ["fact"], "", None, None, 99)]
    assert ids == [run, 3, seconds, plain]  # newest first; not Bob's, not superseded
    assert [r["id"] for r in items.correction_candidates(
        "t", "r", ["fact"], "", None, ["s", "min"], 99)] == [run, seconds, plain]
    assert [r["id"] for r in items.correction_candidates(
        "t", "r", ["fact"], "", "Run 40", None, 99)] == [run]
    assert [r["id"] for r in items.correction_candidates(
        "t", "r", ["fact"], "Bob", None, None, 99)] == [4]
    assert len(items.correction_candidates("t", "r", ["fact"], "", None, None, 2)) == 2
    assert set(items.correction_candidates("t", "r", ["fact"], "", None, None, 1)[0]) == {
        "id", "kind", "subject", "text", "unit", "condition", "value_text"}


def test_successors_follow_a_chain_with_one_statement_per_hop() -> None:
    conn = _db()
    a = _item(conn, "port 5433", status="superseded")
    b = _item(conn, "port 5434", status="superseded")
    c = _item(conn, "port 5435", at=5.0)
    conn.execute("UPDATE memory_items SET superseded_by=? WHERE id=?", (b, a))
    conn.execute("UPDATE memory_items SET superseded_by=? WHERE id=?", (c, b))
    tx = SqliteTx(conn)
    rows = tx.items.search_items([a])
    assert list(rows[0]) == ["id", "status", "evidence", "kind", "source_message_id",
                             "superseded_by", "unit", "value", "text", "data"]
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    pairs, found = current_successors(tx, rows, SearchFilter(tenant="t", role="r"))
    assert pairs == {a: c} and found[c]["created_at"] == 5.0
    assert len(statements) == 2  # b, then c
    current = tx.items.search_items([c])
    statements.clear()
    # a search up to a moment before the successor was stated finds none
    assert current_successors(tx, rows, SearchFilter(tenant="t", role="r", end_time=4.0)) \
        == ({}, {})
    assert current_successors(tx, current, SearchFilter(tenant="t", role="r")) == ({}, {})
    assert len(statements) == 2  # and none for rows without a superseded item


def test_open_task_lines_one_statement_per_label() -> None:
    conn = _db()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    got = SqliteTx(conn).search.open_task_lines(
        "t", "r", ["goal", "todo"], thread_ids=(1, 2), session="s", start_time=0.0,
        end_time=9.0, include_hidden=False, current_thread=1, per_label=3)
    assert got == [] and len(statements) == 2


def test_a_prefix_range_bounds_every_string_that_starts_with_it() -> None:
    """``correction_candidates``' subject range on SQLite (BINARY order): the bound
    above a prefix skips the surrogates, and a prefix of U+10FFFF alone has none."""
    from memory_core.store.sqlite_items import _successor

    assert _successor("prod ") == "prod!"
    assert _successor("a\ud7ff") == "a\ue000"
    assert _successor("x\U0010ffff") == "y"
    assert _successor("\U0010ffff") is None
    for prefix in ("prod ", "a\ud7ff", "x\U0010ffff"):
        above = _successor(prefix)
        assert above is not None and prefix.encode("utf-8", "surrogatepass") < above.encode()
        assert (prefix + "\U0010ffff" * 3).encode("utf-8", "surrogatepass") < above.encode()
