"""The in-memory message facts always answer what the queries they replace answer."""

from __future__ import annotations

import random
import sqlite3

from memory_core.capture.message_facts import MessageFacts
from memory_core.compaction.compressor import MessageOutline
from memory_core.store.sqlite_ops import SqliteTx


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, msg_role TEXT,"
                 " tokens INTEGER)")
    conn.executemany("INSERT INTO messages (msg_role, tokens) VALUES (?, ?)",
                     [(("user", "assistant", None)[i % 3], i % 7 or None)
                      for i in range(3000)])  # some NULL roles and counts
    return conn


def _sql_total(conn: sqlite3.Connection, ids: list[int]) -> int:
    marks = ",".join("?" * len(ids))
    return int(conn.execute(f"SELECT COALESCE(SUM(tokens), 0) FROM messages WHERE id IN ({marks})",
                            ids).fetchone()[0]) if ids else 0


def test_total_and_counts_equal_the_queries_across_overflow_and_missing_ids() -> None:
    conn, rng = _db(), random.Random(7)
    tx = SqliteTx(conn)
    cache = MessageFacts(max_ids=2500)  # small: the mapping is replaced several times
    for _ in range(40):
        ids = rng.sample(range(1, 3200), rng.randint(0, 900))  # ids past 3000 do not exist
        assert cache.total(tx, ids) == _sql_total(conn, ids)
        tail = ids[-128:]
        rows = conn.execute(f"SELECT id, tokens FROM messages WHERE id IN"
                            f" ({','.join('?' * len(tail))})", tail).fetchall()
        assert cache.counts(tx, tail) == {i: t or 0 for i, t in rows}
        rows = conn.execute(f"SELECT id, msg_role, tokens FROM messages WHERE id IN"
                            f" ({','.join('?' * len(ids))})", ids).fetchall() if ids else []
        assert cache.outlines(tx, ids) == {i: MessageOutline(i, r or "", t or 0)
                                             for i, r, t in rows}


def test_facts_are_read_once_and_missing_ids_are_not_remembered() -> None:
    conn = _db()
    tx = SqliteTx(conn)
    cache = MessageFacts()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    assert cache.total(tx, [1, 2, 3, 4]) == 0 + 1 + 2 + 3  # id 1's count is NULL
    assert cache.total(tx, [4, 3, 2, 1]) == 6
    assert len(statements) == 1  # the second answer came from memory
    assert cache.counts(tx, [3001]) == {}
    conn.execute("INSERT INTO messages (msg_role, tokens) VALUES ('user', 5)")  # id 3001 now exists
    assert cache.counts(tx, [3001]) == {3001: 5}
    cache.clear()
    statements.clear()
    assert cache.total(tx, [2]) == 1
    assert len(statements) == 1


def test_a_long_id_list_is_read_in_chunks_under_sqlites_variable_limit() -> None:
    conn = _db()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    ids = list(range(1, 3001))
    facts = MessageFacts().outlines(SqliteTx(conn), ids)
    assert len(facts) == 3000
    assert facts[2] == MessageOutline(2, "assistant", 1)  # the row of i = 1
    assert len(statements) == 4  # 900 + 900 + 900 + 300 ids: each under the limit of 999
