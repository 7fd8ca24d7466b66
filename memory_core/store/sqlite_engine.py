"""SQLite implementations of the groups :class:`memory_core.engine.Engine` reads and
writes through (:class:`~memory_core.store.api.ExtractionQueue`,
:class:`~memory_core.store.api.RequestReads`, :class:`~memory_core.store.api.Inspection`,
:class:`~memory_core.store.api.EngineWrites`): its SQL, statement for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memory_core.store.api import (
    EngineWrites,
    ExtractionQueue,
    Inspection,
    RequestReads,
    Row,
)

T = TypeVar("T")

# ``CROSS JOIN``: the queue drives the join (SQLite keeps the written order). With
# ANALYZE statistics the planner walked every message and looked each up in the queue.
_QUEUED = ("SELECT q.message_id, m.tenant, m.role, m.session, m.thread_id, m.text, m.tz,"
           " m.msg_role, CASE WHEN json_valid(m.raw_json) AND json_type(m.raw_json)='object'"
           " THEN json_extract(m.raw_json, '$.name') END AS name,"
           " CASE WHEN m.msg_role IN ('user', 'tool') THEN m.raw_json END AS raw_json"
           " FROM extraction_queue q CROSS JOIN messages m ON m.id=q.message_id WHERE ")


def _where(filters: Sequence[tuple[str, Any]]) -> tuple[list[str], list[Any]]:
    """``col=?`` for each filter whose value is not ``None``, after ``1=1``."""
    where, args = ["1=1"], []
    for col, val in filters:
        if val is not None:
            where.append(f"{col}=?")
            args.append(val)
    return where, args


class SqliteExtractionQueue:
    """``extraction_queue``: messages whose extraction is pending or failed."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def defer(self, message_id: int, next_at: float) -> None:
        self._c.execute(
            "INSERT INTO extraction_queue (message_id, attempts, next_at)"
            " VALUES (?, 0, ?) ON CONFLICT(message_id) DO NOTHING", (message_id, next_at))

    def attempt(self, fn: Callable[[], T]) -> T:
        conn = self._c
        conn.execute("SAVEPOINT extract")
        try:
            value = fn()
        except BaseException:
            conn.execute("ROLLBACK TO extract")
            conn.execute("RELEASE extract")
            raise
        conn.execute("RELEASE extract")
        return value

    def attempts(self, message_id: int) -> int | None:
        row = self._c.execute("SELECT attempts FROM extraction_queue WHERE message_id=?",
                              (message_id,)).fetchone()
        return row[0] if row else None

    def failed(self, message_id: int, attempts: int, error: str, next_at: float) -> None:
        self._c.execute(
            "INSERT INTO extraction_queue (message_id, attempts, last_error, next_at)"
            " VALUES (?,?,?,?) ON CONFLICT(message_id) DO UPDATE SET"
            " attempts=excluded.attempts, last_error=excluded.last_error,"
            " next_at=excluded.next_at",
            (message_id, attempts, error, next_at))

    def done(self, message_id: int) -> None:
        self._c.execute("DELETE FROM extraction_queue WHERE message_id=?", (message_id,))

    def due(self, now: float, limit: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            _QUEUED + "q.next_at <= ? ORDER BY q.next_at LIMIT ?", (now, limit)).fetchall()]

    def due_later(self, now: float, limit: int) -> Callable[[], list[Row]]:
        rows = self.due(now, limit)
        return lambda: rows

    def pending(self, message_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            _QUEUED + "q.message_id=? AND q.attempts=0", (message_id,)).fetchall()]

    def calls_before(self, message_id: int, window: float, limit: int) -> list[str]:
        # ``INDEXED BY``: the filter below is messages_calls' predicate (m014); with
        # ANALYZE statistics of messages_scope and none yet of the new index (a store
        # migrated since its last PRAGMA optimize) SQLite took messages_scope and
        # read every assistant message of the window.
        return [r[0] for r in self._c.execute(
            "SELECT a.raw_json FROM messages u JOIN messages a INDEXED BY messages_calls"
            " ON a.tenant=u.tenant"
            " AND a.role=u.role AND a.created_at BETWEEN u.created_at-? AND u.created_at"
            " WHERE u.id=? AND a.id<u.id AND a.msg_role='assistant' AND a.hidden=0"
            " AND (instr(a.raw_json, '\"tool_use\"') OR instr(a.raw_json, '\"tool_calls\"')"
            " OR instr(a.raw_json, '\"function_call\"'))"
            " ORDER BY a.created_at DESC, a.id DESC LIMIT ?", (window, message_id, limit))]


class SqliteRequestReads:
    """Small reads of the request path: splices, whether there is more history,
    whether a scope has summaries, superseded items to quote."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def spliced_ids(self) -> list[int]:
        return [r[0] for r in self._c.execute("SELECT message_id FROM splices")]

    def splices(self, ids: Sequence[int]) -> dict[int, str]:
        return {int(r["message_id"]): r["messages"] for r in self._c.execute(
            f"SELECT message_id, messages FROM splices WHERE message_id IN"
            f" ({','.join('?' * len(ids))})", tuple(ids))}

    def history_beyond(self, tenant: str, role: str, thread_id: int, newest: int) -> bool:
        c = self._c
        return any(c.execute(sql, args).fetchone() is not None for sql, args in (
            ("SELECT 1 FROM threads WHERE tenant=? AND role=? AND id!=? LIMIT 1",
             (tenant, role, thread_id)),
            ("SELECT 1 FROM messages WHERE thread_id=? AND id>? AND hidden=0 LIMIT 1",
             (thread_id, newest)),
            ("SELECT 1 FROM agent_memories WHERE role=? AND tenant IN (?, '*') LIMIT 1",
             (role, tenant))))

    def has_active_summaries(self, tenant: str, role: str) -> bool:
        return self._c.execute(
            "SELECT 1 FROM summary_nodes WHERE tenant=? AND role=? AND status='active'"
            " LIMIT 1", (tenant, role)).fetchone() is not None

    def superseded_sources(self, tenant: str, role: str, last_id: int, limit: int
                           ) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, source_message_id, text, value_text, unit FROM memory_items"
            " WHERE tenant=? AND role=? AND status='superseded' AND source_message_id<=?"
            " ORDER BY source_message_id DESC, id DESC LIMIT ?",
            (tenant, role, last_id, limit)).fetchall()]


class SqliteInspection:
    """The engine's operator reads: agent memories, assembly logs, the keyword
    scan, search hits by scope, one item or message in full, exports."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def agent_memories(self, *, category: str | None, role: str | None, tenant: str | None,
                       shared_tenant: str) -> list[Row]:
        where, args = _where((("category", category), ("role", role)))
        if tenant is not None:
            where.append("tenant IN (?, ?)")
            args.extend([tenant, shared_tenant])
        sql = ("SELECT id, category, key, title, content, updated_at, role, tenant FROM"
               f" agent_memories WHERE {' AND '.join(where)} ORDER BY role, category, key")
        return [dict(r) for r in self._c.execute(sql, args)]

    def last_assembly(self, *, tenant: str | None, role: str | None, session: str | None,
                      thread_id: int | None) -> Row | None:
        where, args = _where((("a.tenant", tenant), ("a.role", role),
                              ("a.thread_id", thread_id), ("t.session", session)))
        row = self._c.execute(
            "SELECT a.* FROM assembly_logs a LEFT JOIN threads t ON t.id=a.thread_id"
            f" WHERE {' AND '.join(where)} ORDER BY a.id DESC LIMIT 1", args).fetchone()
        return dict(row) if row is not None else None

    def recent_scopes(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> list[tuple[str, str]]:
        where, args = _where((("tenant", tenant), ("role", role), ("session", session)))
        return [(r[0], r[1]) for r in self._c.execute(
            f"SELECT tenant, role FROM threads WHERE {' AND '.join(where)} GROUP BY"
            f" tenant, role ORDER BY MAX(id) DESC LIMIT {int(limit)}", args)]

    def scoped_item(self, item_id: int, tenant: str, role: str) -> Row | None:
        row = self._c.execute("SELECT * FROM memory_items WHERE id=? AND tenant=? AND"
                              " role=?", (item_id, tenant, role)).fetchone()
        return dict(row) if row is not None else None

    def scoped_message(self, message_id: int, tenant: str, role: str) -> Row | None:
        row = self._c.execute("SELECT id, msg_role, tenant, role, session, text, created_at"
                              " FROM messages WHERE id=? AND tenant=? AND role=?",
                              (message_id, tenant, role)).fetchone()
        return dict(row) if row is not None else None

    def _scope(self, tenant: str | None, role: str | None, session: str | None
               ) -> tuple[str, list[Any]]:
        where, args = _where((("tenant", tenant), ("role", role), ("session", session)))
        return " AND ".join(where), args

    def keyword_items(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> Iterator[Row]:
        clause, args = self._scope(tenant, role, session)
        return (dict(r) for r in self._c.execute(
            f"SELECT * FROM memory_items WHERE {clause} AND"
            f" status != 'retracted' ORDER BY id DESC LIMIT {int(limit)}", args))

    def keyword_messages(self, *, tenant: str | None, role: str | None, session: str | None,
                         limit: int) -> Iterator[Row]:
        clause, args = self._scope(tenant, role, session)
        return (dict(r) for r in self._c.execute(
            f"SELECT id, msg_role, tenant, role, session, text, created_at, hidden"
            f" FROM messages"
            f" WHERE {clause} ORDER BY id DESC LIMIT {int(limit)}", args))

    def item(self, item_id: int) -> Row | None:
        row = self._c.execute("SELECT * FROM memory_items WHERE id=?", (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def message_brief(self, message_id: int | None) -> Row | None:
        row = self._c.execute("SELECT id, msg_role, text, created_at FROM messages WHERE id=?",
                              (message_id,)).fetchone()
        return dict(row) if row is not None else None

    def item_link(self, item_id: int, direction: str) -> Row | None:
        if direction not in ("supersedes", "superseded_by"):
            raise ValueError(f"unknown link {direction!r}")
        row = self._c.execute(f"SELECT id, text, status, {direction} FROM memory_items"
                              " WHERE id=?", (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def revisions(self, item_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT changed_at, field, old, new, reason FROM memory_item_revisions"
            " WHERE item_id=? ORDER BY id", (item_id,))]

    def message(self, message_id: int) -> Row | None:
        row = self._c.execute("SELECT * FROM messages WHERE id=?", (message_id,)).fetchone()
        return dict(row) if row is not None else None

    def message_items(self, message_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, kind, status, text FROM memory_items WHERE source_message_id=?",
            (message_id,))]

    def store_counts(self) -> Row:
        conn = self._c
        counts = {}
        for table in ("threads", "messages", "events"):
            counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        counts["hidden_messages"] = conn.execute(
            "SELECT COUNT(*) FROM messages WHERE hidden=1").fetchone()[0]
        scopes = conn.execute(
            "SELECT COUNT(DISTINCT tenant), COUNT(DISTINCT tenant || '/' || role)"
            " FROM threads").fetchone()
        last = conn.execute("SELECT MAX(created_at) FROM messages").fetchone()[0]
        return {"counts": counts, "tenants": scopes[0], "roles": scopes[1], "last": last}

    def export_threads(self, *, session: str | None, role: str | None, tenant: str | None,
                       thread_id: int | None) -> list[Row]:
        where, args = _where((("session", session), ("role", role), ("tenant", tenant),
                              ("id", thread_id)))
        clause = (" WHERE " + " AND ".join(where[1:])) if len(where) > 1 else ""
        return [dict(r) for r in self._c.execute(
            f"SELECT * FROM threads{clause} ORDER BY id", args)]

    def thread_messages(self, thread_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM messages WHERE thread_id=? ORDER BY id", (thread_id,))]

    def events(self, thread_ids: Sequence[int] | None, *,
               owner: tuple[str | None, str | None] | None = None) -> list[Row]:
        ev_clause = ""
        ev_args: list[Any] = []
        if thread_ids is not None:
            ev_clause = f" WHERE thread_id IN ({','.join('?' * len(thread_ids))})"
            ev_args = list(thread_ids)
            if owner is not None:
                tenant, role = owner
                ev_clause += (" OR (thread_id IS NULL AND (? IS NULL OR tenant = ?)"
                              " AND (? IS NULL OR role = ?))")
                ev_args += [tenant, tenant, role, role]
        return [dict(r) for r in self._c.execute(
            f"SELECT * FROM events{ev_clause} ORDER BY id", ev_args)]

    def head_path(self, thread_id: int) -> list[Row]:
        conn = self._c
        head = conn.execute(
            "SELECT head_message_id FROM threads WHERE id=?", (thread_id,)).fetchone()
        if head is None or head[0] is None:
            return []
        return [dict(r) for r in conn.execute(
            "WITH RECURSIVE path(id) AS (SELECT ? UNION ALL"
            " SELECT m.parent_id FROM messages m JOIN path p ON m.id=p.id"
            " WHERE m.parent_id IS NOT NULL)"
            " SELECT m.id, m.msg_role, m.kind, m.text, m.hidden FROM messages m"
            " JOIN path USING(id) ORDER BY m.depth",
            (head[0],)).fetchall()]


class SqliteEngineWrites:
    """The engine's own small writes: the tenant salt, assembly logs."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def meta(self, key: str) -> str | None:
        row = self._c.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))

    def log_assembly(self, *, request_id: str, tenant: str, role: str, thread_id: int | None,
                     created_at: float, trigger: str, budget_tokens: int, used_tokens: int,
                     token_source: str, data: str) -> int:
        cur = self._c.execute(
            "INSERT INTO assembly_logs (request_id, tenant, role, thread_id, created_at,"
            " trigger, budget_tokens, used_tokens, token_source, data)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            (request_id, tenant, role, thread_id, created_at, trigger, budget_tokens,
             used_tokens, token_source, data))
        return int(cur.lastrowid or 0)


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _queue(conn: sqlite3.Connection) -> ExtractionQueue:
        return SqliteExtractionQueue(conn)

    def _request(conn: sqlite3.Connection) -> RequestReads:
        return SqliteRequestReads(conn)

    def _inspection(conn: sqlite3.Connection) -> Inspection:
        return SqliteInspection(conn)

    def _writes(conn: sqlite3.Connection) -> EngineWrites:
        return SqliteEngineWrites(conn)
