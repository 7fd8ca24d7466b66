"""SQLite implementation of :class:`~memory_core.store.api.SummaryForest`: the SQL
of :mod:`memory_core.compaction.compressor`, statement for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_core.store.api import Row, SummaryForest
from memory_core.store.sqlite_rows import padded

_CHUNK = 900
"""Ids per ``IN (…)`` statement (under SQLite's default 999 variables)."""


class SqliteSummaryForest:
    """``summary_nodes`` (and the summary links of ``messages``)."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def nodes_within(self, tenant: str, role: str, first_id: int, last_id: int
                     ) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM summary_nodes WHERE tenant=? AND role=? AND status='active'"
            " AND first_message_id>=? AND last_message_id<=?"
            " ORDER BY level, first_message_id, id",
            (tenant, role, first_id, last_id))]

    def forest_rows(self, *, tenant: str | None, role: str | None, thread_id: int | None
                    ) -> list[Row]:
        where, args = ["status='active'"], []
        for col, val in (("tenant", tenant), ("role", role), ("thread_id", thread_id)):
            if val is not None:
                where.append(f"{col}=?")
                args.append(val)
        return [dict(r) for r in self._c.execute(
            f"SELECT id, thread_id, level, first_message_id, last_message_id, message_ids,"
            f" tokens, source_tokens, model, parent_id FROM summary_nodes"
            f" WHERE {' AND '.join(where)} ORDER BY level, first_message_id", args)]

    def save_node(self, *, tenant: str, role: str, thread_id: int, level: int,
                  message_ids: Sequence[int], ids_json: str, text: str, tokens: int,
                  source_tokens: int, model: str, created_at: float,
                  children: Sequence[int]) -> int:
        conn = self._c
        existing = conn.execute(
            "SELECT id FROM summary_nodes WHERE tenant=? AND role=? AND level=?"
            " AND message_ids=? AND status='active'", (tenant, role, level, ids_json),
        ).fetchone()
        if existing is not None:
            return int(existing[0])
        cur = conn.execute(
            "INSERT INTO summary_nodes (tenant, role, thread_id, level, first_message_id,"
            " last_message_id, message_ids, text, tokens, source_tokens, model, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (tenant, role, thread_id, level, message_ids[0], message_ids[-1], ids_json, text,
             tokens, source_tokens, model, created_at),
        )
        node_id = int(cur.lastrowid or 0)
        if children:
            children = padded(children)
            marks = ",".join("?" * len(children))
            conn.execute(f"UPDATE summary_nodes SET parent_id=? WHERE id IN ({marks})",
                         (node_id, *children))
        if level == 0:
            for start in range(0, len(message_ids), _CHUNK):
                chunk = padded(message_ids[start:start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                conn.execute(f"UPDATE messages SET summary_node_id=? WHERE id IN ({marks})"
                             " AND summary_node_id IS NULL", (node_id, *chunk))
        conn.execute(
            "INSERT INTO index_outbox (kind, ref_id, op) VALUES ('summary', ?, 'upsert')",
            (node_id,))
        return node_id


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: sqlite3.Connection) -> SummaryForest:
        return SqliteSummaryForest(conn)
