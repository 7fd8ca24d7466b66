"""SQLite implementation of :class:`~memory_core.store.api.AssemblyReads`: the SQL
of :mod:`memory_core.assembly.block`, statement for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_core.store.api import AssemblyReads, BlockBasics, Row
from memory_core.store.sqlite_rows import marks as _marks
from memory_core.store.sqlite_rows import padded

_QUOTE_COLS = ("id, parent_id, msg_role, text, created_at, CASE WHEN json_valid(raw_json) AND"
               " json_type(raw_json)='object' THEN json_extract(raw_json, '$.name') END AS name")
"""The columns of a message to quote; ``name``: its ``name`` field (a speaker's name)."""


class SqliteAssemblyReads:
    """Preferences, task state, items and messages to quote of the injection block."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def thread_fork(self, thread_id: int) -> tuple[int | None, int | None] | None:
        row = self._c.execute("SELECT parent_thread_id, fork_message_id FROM threads WHERE id=?",
                              (thread_id,)).fetchone()
        return (row[0], row[1]) if row is not None else None

    def preferences(self, role: str, tenants: Sequence[str]) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, key, title, content, tenant FROM agent_memories"
            " WHERE category='user_preferences'"
            f" AND role=? AND tenant IN ({_marks(len(tenants))}) ORDER BY key, tenant",
            (role, *tenants)).fetchall()]

    def block_basics(self, role: str, tenants: Sequence[str], tenant: str,
                     thread_id: int | None, progress_limit: int) -> BlockBasics:
        # In process: three statements cost no round trip.
        return BlockBasics(self.preferences(role, tenants),
                           self.open_task_state(thread_id) if thread_id else [],
                           self.progress_memories(tenant, role, progress_limit))

    def open_task_state(self, thread_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, label, text, status, source_message_id FROM task_state WHERE thread_id=?"
            " AND status='open' ORDER BY id", (thread_id,)).fetchall()]

    def progress_memories(self, tenant: str, role: str, limit: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, key, title, content FROM agent_memories WHERE category='progress'"
            " AND role=? AND tenant=? ORDER BY updated_at DESC LIMIT ?",
            (role, tenant, limit)).fetchall()]

    def newest_active_items(self, tenant: str, role: str, limit: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE tenant=? AND role=? AND status='active'"
            " ORDER BY id DESC LIMIT ?", (tenant, role, limit)).fetchall()]

    def items_by_ids(self, ids: Sequence[int]) -> list[Row]:
        ids = padded(ids)
        return [dict(r) for r in self._c.execute(
            f"SELECT * FROM memory_items WHERE id IN ({_marks(len(ids))})", tuple(ids))]

    def quote_messages(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        # ``+tenant``/``+role``: look the ids up by primary key. Without the plus
        # (and without ANALYZE statistics) SQLite walks the scope's whole (tenant,
        # role, created_at) index instead: every message of the scope on every turn
        # (0.5 ms at 2,000 messages, growing).
        ids = padded(ids)
        return [dict(r) for r in self._c.execute(
            f"SELECT {_QUOTE_COLS} FROM messages WHERE id IN ({_marks(len(ids))})"
            " AND +tenant=? AND +role=?", (*ids, tenant, role))]

    def visible_quote_messages(self, ids: Sequence[int], tenant: str, role: str
                               ) -> list[Row]:
        ids = padded(ids)
        return [dict(r) for r in self._c.execute(
            f"SELECT {_QUOTE_COLS} FROM messages WHERE id IN ({_marks(len(ids))})"
            " AND tenant=? AND role=? AND hidden=0", (*ids, tenant, role))]

    def superseded_texts(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[tuple[int, str]]:
        # ``INDEXED BY``: without ANALYZE statistics SQLite takes the (tenant, role,
        # status) index and reads every superseded item of the scope.
        message_ids = padded(message_ids)
        return [(r[0], r[1]) for r in self._c.execute(
            "SELECT source_message_id, text FROM memory_items"
            " INDEXED BY memory_items_superseded WHERE tenant=? AND role=?"
            f" AND status='superseded' AND source_message_id IN ({_marks(len(message_ids))})"
            " ORDER BY id", (tenant, role, *message_ids))]


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: sqlite3.Connection) -> AssemblyReads:
        return SqliteAssemblyReads(conn)
