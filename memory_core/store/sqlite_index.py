"""SQLite implementations of :class:`~memory_core.store.api.IndexSource` and
:class:`~memory_core.store.api.IndexFeed`: the SQL of :mod:`memory_core.search.docs`
and :mod:`memory_core.search.indexer`, statement for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_core.store.api import OUTBOX_KINDS, IndexFeed, IndexSource, Row, cut_parents
from memory_core.store.sqlite_rows import rows_by_ids

_QUERIES = {
    "message": (
        "SELECT id, tenant, role, session, thread_id, created_at, kind AS mkind, msg_role,"
        " hidden, text, CASE WHEN json_valid(raw_json) AND json_type(raw_json)='object'"
        " THEN json_extract(raw_json, '$.name') END AS name, NULL AS status{context}"
        " FROM messages"
    ),
    "item": (
        "SELECT id, tenant, role, session, thread_id, created_at, kind AS mkind, '' AS msg_role,"
        " 0 AS hidden, text, subject AS name, status, unit, condition,"
        " json_extract(data, '$.speaker') AS speaker FROM memory_items"
    ),
    "agent_memory": (
        "SELECT id, tenant, role, '' AS session, 0 AS thread_id, updated_at AS created_at,"
        " category AS mkind, '' AS msg_role, 0 AS hidden, title || '\n' || content AS text,"
        " key AS name, NULL AS status FROM agent_memories"
    ),
    "summary": (
        "SELECT id, tenant, role, '' AS session, thread_id, created_at, 'summary' AS mkind,"
        " '' AS msg_role, 0 AS hidden, text, NULL AS name, status FROM summary_nodes"
    ),
}
_PREFIX = "CASE WHEN instr(p.text, char(0)) > 0 THEN p.text ELSE substr(p.text, 1, {chars}) END"
"""The first characters of the parent's text; whole when it holds a NUL (``substr``
would end it there), cut by :func:`~memory_core.store.api.cut_parents`."""
_MESSAGE_CONTEXT = (
    f", (SELECT {_PREFIX} FROM messages p"
    " WHERE p.id = messages.parent_id) AS ctx_parent"
)
_EMBED_CONTEXT = (
    f", (SELECT {_PREFIX} FROM messages p WHERE p.id = messages.parent_id"
    " AND p.msg_role IN ('user', 'assistant')) AS embed_parent,"
    " (SELECT CASE WHEN json_valid(p.raw_json) AND json_type(p.raw_json)='object'"
    " THEN json_extract(p.raw_json, '$.name') END FROM messages p"
    " WHERE p.id = messages.parent_id) AS embed_parent_name"
)
_CHUNK = 500
"""Ids per ``IN (…)`` statement."""


class SqliteIndexSource:
    """Rows of ``messages``, ``memory_items``, ``agent_memories``, ``summary_nodes``
    as the derived indexes read them."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def doc_rows(self, kind: str, ids: Sequence[int], *, context_chars: int = 0,
                 embed_chars: int = 0) -> list[Row]:
        extra = _MESSAGE_CONTEXT.format(chars=int(context_chars)) if context_chars > 0 else ""
        if embed_chars > 0:
            extra += _EMBED_CONTEXT.format(chars=int(embed_chars))
        sql = _QUERIES[kind].replace("{context}", extra)
        return cut_parents([dict(r) for r in rows_by_ids(
            self._c, sql.replace("{", "{{").replace("}", "}}") + " WHERE id IN ({marks})", ids,
            chunk=_CHUNK)], context_chars, embed_chars)

    def ids_after(self, kind: str, after: int, limit: int) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            f"SELECT id FROM {OUTBOX_KINDS[kind]} WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit))]


class SqliteIndexFeed:
    """``checkpoints``, ``index_outbox`` and ``embeddings`` for the indexer."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def checkpoint(self, name: str) -> int:
        row = self._c.execute("SELECT value FROM checkpoints WHERE name=?", (name,)).fetchone()
        return int(row[0]) if row else 0

    def set_checkpoint(self, name: str, value: int, now: float) -> None:
        self._c.execute("INSERT INTO checkpoints (name, value, updated_at) VALUES (?,?,?)"
                        " ON CONFLICT(name) DO UPDATE SET value=excluded.value,"
                        " updated_at=excluded.updated_at", (name, value, now))

    def outbox_rows(self, after: int, limit: int) -> list[tuple[int, str, int, str]]:
        return [(int(r[0]), r[1], int(r[2]), r[3]) for r in self._c.execute(
            "SELECT id, kind, ref_id, op FROM index_outbox WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit))]

    def outbox_left(self, after: int) -> tuple[int, int]:
        row = self._c.execute(
            "SELECT COUNT(*), COALESCE(SUM(kind = 'message'), 0) FROM index_outbox"
            " WHERE id > ?", (after,)).fetchone()
        return int(row[0]), int(row[1])

    def cached_vectors(self, kind: str, model: str, dim: int, refs: Sequence[int]
                       ) -> dict[int, bytes]:
        return {int(r[0]): r[1] for r in rows_by_ids(
            self._c, "SELECT ref_id, vector FROM embeddings WHERE kind=? AND model=?"
            " AND dim=? AND ref_id IN ({marks})", refs, before=(kind, model, dim),
            chunk=_CHUNK)}

    def save_vectors(self, rows: Sequence[tuple[str, int, str, int, bytes, float]]) -> None:
        self._c.executemany("INSERT OR REPLACE INTO embeddings (kind, ref_id, model, dim,"
                            " vector, created_at) VALUES (?,?,?,?,?,?)", rows)

    def unembedded(self) -> int:
        row = self._c.execute(
            "SELECT (SELECT COUNT(*) FROM messages m WHERE trim(m.text) != '' AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.kind = 'message' AND e.ref_id = m.id))"
            " + (SELECT COUNT(*) FROM memory_items i"
            " WHERE i.status NOT IN ('retracted', 'deleted', 'purged', 'merged', 'edited')"
            " AND NOT EXISTS (SELECT 1 FROM embeddings e"
            " WHERE e.kind = 'item' AND e.ref_id = i.id))").fetchone()
        return int(row[0])


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _conforms(conn: sqlite3.Connection) -> IndexSource:
        return SqliteIndexSource(conn)

    def _conforms_feed(conn: sqlite3.Connection) -> IndexFeed:
        return SqliteIndexFeed(conn)
