"""SQLite implementation of :class:`~memory_core.store.api.ToolReads`: the SQL of
:mod:`memory_core.tools.memory_tools`, statement for statement."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from memory_core.store.api import Row, ToolReads

_HIT_SQL = {
    "message": "SELECT id, msg_role, text, created_at, tenant, role, hidden FROM messages"
               " WHERE id=?",
    "item": "SELECT * FROM memory_items WHERE id=?",
    "agent_memory": "SELECT * FROM agent_memories WHERE id=?",
    "summary": "SELECT * FROM summary_nodes WHERE id=?",
}


class SqliteToolReads:
    """Search hits, summary roots and the thread timeline of the memory tools."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def hit_row(self, kind: str, ref_id: int) -> Row | None:
        sql = _HIT_SQL.get(kind)
        if sql is None:
            raise ValueError(f"unknown kind {kind!r}")
        row = self._c.execute(sql, (ref_id,)).fetchone()
        return dict(row) if row is not None else None

    def root_summary_texts(self, tenant: str, role: str) -> dict[int, str]:
        return {r["id"]: r["text"] for r in self._c.execute(
            "SELECT id, text FROM summary_nodes WHERE tenant=? AND role=? AND parent_id IS NULL"
            " AND status='active' ORDER BY id", (tenant, role))}

    def thread_timeline(self, tenant: str, role: str) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT t.id, t.created_at, t.updated_at, COUNT(m.id) AS messages FROM threads t"
            " LEFT JOIN messages m ON m.thread_id=t.id WHERE t.tenant=? AND t.role=?"
            " GROUP BY t.id ORDER BY t.created_at", (tenant, role))]


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: sqlite3.Connection) -> ToolReads:
        return SqliteToolReads(conn)
