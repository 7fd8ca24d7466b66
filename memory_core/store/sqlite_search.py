"""SQLite implementation of :class:`~memory_core.store.api.SearchReads`: the SQL of
:mod:`memory_core.search.service`, statement for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from memory_core.store.api import OUTBOX_KINDS, SearchReads

_TIME_COL = {"message": "created_at", "item": "created_at", "agent_memory": "updated_at",
             "summary": "created_at"}
_TEXT_COL = {"message": "text", "item": "text", "agent_memory": "title || ' ' || content",
             "summary": "text"}
_THREAD_COL = {"message": "thread_id", "item": "thread_id", "agent_memory": "0",
               "summary": "thread_id"}


class SqliteSearchReads:
    """Task lines, agent-memory categories and candidate facts for search."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def task_lines_of(self, message_ids: Sequence[int]) -> list[tuple[int, str, str]]:
        ids = list(message_ids)
        return [(int(r[0]), r[1], r[2]) for r in self._c.execute(
            f"SELECT source_message_id, status, label FROM task_state WHERE"
            f" source_message_id IN ({','.join('?' * len(ids))})", ids).fetchall()]

    def open_task_lines(self, tenant: str, role: str, labels: Sequence[str], *,
                        thread_ids: Collection[int] | None, session: str | None,
                        start_time: float | None, end_time: float | None,
                        include_hidden: bool, current_thread: int, per_label: int
                        ) -> list[int]:
        where = ["t.tenant=?", "t.role=?", "t.status='open'", "t.label=?",
                 "m.tenant=t.tenant", "m.role=t.role"]
        args: list[Any] = []  # the filters' values, after tenant, role and label
        if thread_ids is not None:
            where.append(f"m.thread_id IN ({','.join('?' * len(thread_ids))})")
            args.extend(thread_ids)
        if session is not None:
            where.append("m.session=?")
            args.append(session)
        if start_time is not None:
            where.append("m.created_at>=?")
            args.append(start_time)
        if end_time is not None:
            where.append("m.created_at<=?")
            args.append(end_time)
        if not include_hidden:
            where.append("m.hidden=0")
        # CROSS JOIN keeps task_state the outer loop (its index), whatever the
        # planner's statistics say: the messages of a scope far outnumber its lines.
        sql = ("SELECT t.source_message_id FROM task_state t CROSS JOIN messages m"
               " ON m.id=t.source_message_id WHERE " + " AND ".join(where)
               + " ORDER BY t.thread_id=? DESC, t.updated_at DESC, t.id DESC LIMIT ?")
        out: list[int] = []
        for label in labels:
            params = [tenant, role, label, *args, current_thread, per_label]
            out.extend(int(r[0]) for r in self._c.execute(sql, params))
        return out

    def preference_memories(self, ids: Sequence[int]) -> list[int]:
        refs = list(ids)
        return [int(r[0]) for r in self._c.execute(
            f"SELECT id FROM agent_memories WHERE category='user_preferences'"
            f" AND id IN ({','.join('?' * len(refs))})", refs).fetchall()]

    def candidate_facts(self, kind: str, refs: Sequence[int], needle: str | None,
                        with_names: bool) -> list[tuple[Any, ...]]:
        is_msg = kind == "message"
        exact_col = f"instr(lower({_TEXT_COL[kind]}), ?) > 0" if needle else "0"
        name_col = "NULL"
        if with_names and is_msg:
            name_col = ("CASE WHEN json_valid(raw_json) AND"
                        " json_type(raw_json)='object'"
                        " THEN json_extract(raw_json, '$.name') END")
        elif with_names and kind == "item":
            # who said it: the item's ``data.speaker`` (store.sqlite_memory.SPEAKER_SQL)
            name_col = "json_extract(data, '$.speaker')"
        parent_col = "parent_id" if is_msg else "NULL"
        role_col = "msg_role" if is_msg else "NULL"
        sql = (f"SELECT id, {_THREAD_COL[kind]}, {_TIME_COL[kind]}, {exact_col},"
               f" {parent_col}, {name_col}, {role_col} FROM {OUTBOX_KINDS[kind]} WHERE id IN"
               f" ({','.join('?' * len(refs))})")
        args = [needle, *refs] if needle else list(refs)
        return [tuple(r) for r in self._c.execute(sql, args)]


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: sqlite3.Connection) -> SearchReads:
        return SqliteSearchReads(conn)
