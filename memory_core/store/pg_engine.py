"""PostgreSQL implementations of the groups the memory tools, the injection block
and :class:`memory_core.engine.Engine` read and write through:
:class:`~memory_core.store.api.ToolReads`, :class:`~memory_core.store.api.AssemblyReads`,
:class:`~memory_core.store.api.ExtractionQueue`,
:class:`~memory_core.store.api.RequestReads`, :class:`~memory_core.store.api.Inspection`
and :class:`~memory_core.store.api.EngineWrites`. The statements of
``sqlite_tools``, ``sqlite_assembly`` and ``sqlite_engine`` in PostgreSQL's dialect
(rules: :mod:`memory_core.store.pg_reads`).

Besides those rules: text sorted for the caller (keys, tenants, roles, categories)
is sorted ``COLLATE "C"`` (by code point, as SQLite's ``BINARY``), whatever the
database's locale; sorts on a column with ties (``updated_at``, ``next_at``,
``created_at``) add ``id`` so that both backends give one order; the statements
SQLite runs as two or three (``history_beyond``, ``store_counts``, ``head_path``)
are one here, one round trip each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memory_core.store.api import (
    AssemblyReads,
    BlockBasics,
    EngineWrites,
    ExtractionQueue,
    Inspection,
    RequestReads,
    Row,
    ToolReads,
)
from memory_core.store.pg_reads import MESSAGE_NAME, dicts, ids_list
from memory_core.store.pg_trips import Deferred, count, defer, defer_read

T = TypeVar("T")

_HIT_SQL = {
    "message": "SELECT id, msg_role, text, created_at, tenant, role, hidden FROM messages"
               " WHERE id = %s",
    "item": "SELECT * FROM memory_items WHERE id = %s",
    "agent_memory": "SELECT * FROM agent_memories WHERE id = %s",
    "summary": "SELECT * FROM summary_nodes WHERE id = %s",
}


def _one(conn: Any, sql: str, args: Any) -> Row | None:
    rows = dicts(conn, sql, args)
    return rows[0] if rows else None


class PgToolReads:
    """Search hits, summary roots and the thread timeline of the memory tools."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def hit_row(self, kind: str, ref_id: int) -> Row | None:
        sql = _HIT_SQL.get(kind)
        if sql is None:
            raise ValueError(f"unknown kind {kind!r}")
        return _one(self._c, sql, (ref_id,))

    def root_summary_texts(self, tenant: str, role: str) -> dict[int, str]:
        return {int(r[0]): r[1] for r in self._c.execute(
            "SELECT id, text FROM summary_nodes WHERE tenant = %s AND role = %s"
            " AND parent_id IS NULL AND status = 'active' ORDER BY id", (tenant, role))}

    def thread_timeline(self, tenant: str, role: str) -> list[Row]:
        return dicts(
            self._c, "SELECT t.id, t.created_at, t.updated_at, COUNT(m.id) AS messages"
            " FROM threads t LEFT JOIN messages m ON m.thread_id = t.id"
            " WHERE t.tenant = %s AND t.role = %s GROUP BY t.id ORDER BY t.created_at, t.id",
            (tenant, role))


_QUOTE_COLS = f"id, parent_id, msg_role, text, created_at, {MESSAGE_NAME} AS name"
"""The columns of a message to quote; ``name``: its ``name`` field (a speaker's name)."""


_BLOCK_BASICS = (
    "SELECT * FROM ("
    " (SELECT 0 AS part, row_number() OVER (ORDER BY key COLLATE \"C\", tenant COLLATE \"C\")"
    " AS n, id, key, title, content, tenant, NULL::text AS label, NULL::text AS text,"
    " NULL::text AS status, NULL::bigint AS source_message_id FROM agent_memories"
    " WHERE category = 'user_preferences' AND role = %(role)s AND tenant = ANY(%(tenants)s))"
    " UNION ALL (SELECT 1, row_number() OVER (ORDER BY id), id, NULL, NULL, NULL, NULL, label,"
    " text, status, source_message_id FROM task_state WHERE thread_id = %(thread)s"
    " AND status = 'open')"
    " UNION ALL (SELECT 2, row_number() OVER (ORDER BY updated_at DESC, id), id, key,"
    " title, content, NULL, NULL, NULL, NULL, NULL FROM agent_memories"
    " WHERE category = 'progress' AND role = %(role)s AND tenant = %(tenant)s"
    " ORDER BY updated_at DESC, id LIMIT %(limit)s)"
    ") u ORDER BY part, n")
""":meth:`PgAssemblyReads.block_basics`: the three reads of
:meth:`~PgAssemblyReads.preferences`, :meth:`~PgAssemblyReads.open_task_state` and
:meth:`~PgAssemblyReads.progress_memories`, in their orders, as one statement
(``part`` tells them apart; thread 0 has no task state)."""

_BASICS_COLUMNS = (("id", "key", "title", "content", "tenant"),
                   ("id", "label", "text", "status", "source_message_id"),
                   ("id", "key", "title", "content"))


class PgAssemblyReads:
    """Preferences, task state, items and messages to quote of the injection block."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def thread_fork(self, thread_id: int) -> tuple[int | None, int | None] | None:
        row = self._c.execute("SELECT parent_thread_id, fork_message_id FROM threads"
                              " WHERE id = %s", (thread_id,)).fetchone()
        return (row[0], row[1]) if row is not None else None

    def preferences(self, role: str, tenants: Sequence[str]) -> list[Row]:
        return dicts(self._c, "SELECT id, key, title, content, tenant FROM agent_memories"
                     " WHERE category = 'user_preferences' AND role = %s AND tenant = ANY(%s)"
                     ' ORDER BY key COLLATE "C", tenant COLLATE "C"', (role, list(tenants)))

    def block_basics(self, role: str, tenants: Sequence[str], tenant: str,
                     thread_id: int | None, progress_limit: int) -> BlockBasics:
        out: tuple[list[Row], list[Row], list[Row]] = ([], [], [])
        for r in dicts(self._c, _BLOCK_BASICS, {
                "role": role, "tenants": list(tenants), "tenant": tenant,
                "thread": thread_id or 0, "limit": int(progress_limit)}):
            part = r.pop("part")
            r.pop("n")
            cols = _BASICS_COLUMNS[part]
            out[part].append({k: r[k] for k in cols})
        return BlockBasics(*out)

    def open_task_state(self, thread_id: int) -> list[Row]:
        return dicts(self._c, "SELECT id, label, text, status, source_message_id FROM"
                     " task_state WHERE thread_id = %s AND status = 'open' ORDER BY id",
                     (thread_id,))

    def progress_memories(self, tenant: str, role: str, limit: int) -> list[Row]:
        return dicts(self._c, "SELECT id, key, title, content FROM agent_memories"
                     " WHERE category = 'progress' AND role = %s AND tenant = %s"
                     " ORDER BY updated_at DESC, id LIMIT %s", (role, tenant, limit))

    def newest_active_items(self, tenant: str, role: str, limit: int) -> list[Row]:
        return dicts(self._c, "SELECT * FROM memory_items WHERE tenant = %s AND role = %s"
                     " AND status = 'active' ORDER BY id DESC LIMIT %s", (tenant, role, limit))

    def items_by_ids(self, ids: Sequence[int]) -> list[Row]:
        return dicts(self._c, "SELECT * FROM memory_items WHERE id = ANY(%s)",
                     (ids_list(ids),))

    def quote_messages(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        return dicts(self._c, f"SELECT {_QUOTE_COLS} FROM messages WHERE id = ANY(%s)"
                     " AND tenant = %s AND role = %s", (ids_list(ids), tenant, role))

    def visible_quote_messages(self, ids: Sequence[int], tenant: str, role: str
                               ) -> list[Row]:
        return dicts(self._c, f"SELECT {_QUOTE_COLS} FROM messages WHERE id = ANY(%s)"
                     " AND tenant = %s AND role = %s AND hidden = 0",
                     (ids_list(ids), tenant, role))

    def superseded_texts(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[tuple[int, str]]:
        return [(int(r[0]), r[1]) for r in self._c.execute(
            "SELECT source_message_id, text FROM memory_items WHERE tenant = %s AND role = %s"
            " AND status = 'superseded' AND source_message_id = ANY(%s) ORDER BY id",
            (tenant, role, ids_list(message_ids)))]


_QUEUED = ("SELECT q.message_id, m.tenant, m.role, m.session, m.thread_id, m.text, m.tz,"
           f" m.msg_role, {MESSAGE_NAME.replace('raw_json', 'm.raw_json')} AS name,"
           " CASE WHEN m.msg_role IN ('user', 'tool') THEN m.raw_json END AS raw_json"
           " FROM extraction_queue q JOIN messages m ON m.id = q.message_id WHERE ")


class PgExtractionQueue:
    """``extraction_queue``: messages whose extraction is pending or failed."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def defer(self, message_id: int, next_at: float) -> None:
        defer(self._c,
              "INSERT INTO extraction_queue (message_id, attempts, next_at) VALUES (%s, 0, %s)"
              " ON CONFLICT (message_id) DO NOTHING", (message_id, next_at))

    def attempt(self, fn: Callable[[], T]) -> T:
        pending = getattr(self._c, "deferred", None)
        if pending is None:
            # A read job's autocommit connection: a transaction of its own, rolled
            # back when ``fn`` raises.
            count(2)  # BEGIN and COMMIT
            with self._c.transaction():
                return fn()
        # The writer's, in the batch's transaction: a savepoint, deferred with its
        # release (pg_trips.defer); rolled back to when ``fn`` raises.
        savepoint: Deferred = (b"SAVEPOINT lcm_attempt", None, None)
        pending.append(savepoint)
        try:
            value = fn()
        except BaseException:
            at = next((i for i, s in enumerate(pending) if s is savepoint), None)
            if at is not None:  # never sent: nor was anything after it
                del pending[at:]
            else:
                pending.clear()
                self._c.execute(b"ROLLBACK TO SAVEPOINT lcm_attempt")
                defer(self._c, b"RELEASE SAVEPOINT lcm_attempt")
            raise
        pending.append((b"RELEASE SAVEPOINT lcm_attempt", None, None))
        return value

    def attempts(self, message_id: int) -> int | None:
        row = self._c.execute("SELECT attempts FROM extraction_queue WHERE message_id = %s",
                              (message_id,)).fetchone()
        return int(row[0]) if row else None

    def failed(self, message_id: int, attempts: int, error: str, next_at: float) -> None:
        self._c.execute(
            "INSERT INTO extraction_queue (message_id, attempts, last_error, next_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (message_id) DO UPDATE SET"
            " attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error,"
            " next_at = EXCLUDED.next_at", (message_id, attempts, error, next_at))

    def done(self, message_id: int) -> None:
        defer(self._c, "DELETE FROM extraction_queue WHERE message_id = %s", (message_id,))

    def due(self, now: float, limit: int) -> list[Row]:
        return dicts(self._c, _QUEUED + "q.next_at <= %s ORDER BY q.next_at, q.message_id"
                     " LIMIT %s", (now, limit))

    def due_later(self, now: float, limit: int) -> Callable[[], list[Row]]:
        return defer_read(self._c, _QUEUED + "q.next_at <= %s ORDER BY q.next_at,"
                          " q.message_id LIMIT %s", (now, limit))

    def pending(self, message_id: int) -> list[Row]:
        return dicts(self._c, _QUEUED + "q.message_id = %s AND q.attempts = 0", (message_id,))

    def calls_before(self, message_id: int, window: float, limit: int) -> list[str]:
        return [r[0] for r in self._c.execute(
            "SELECT a.raw_json FROM messages u JOIN messages a ON a.tenant = u.tenant"
            " AND a.role = u.role AND a.created_at BETWEEN u.created_at - %s AND u.created_at"
            " WHERE u.id = %s AND a.id < u.id AND a.msg_role = 'assistant' AND a.hidden = 0"
            " AND (strpos(a.raw_json, '\"tool_use\"') > 0"
            " OR strpos(a.raw_json, '\"tool_calls\"') > 0"
            " OR strpos(a.raw_json, '\"function_call\"') > 0)"
            " ORDER BY a.created_at DESC, a.id DESC LIMIT %s", (window, message_id, limit))]


class PgRequestReads:
    """Small reads of the request path: splices, whether there is more history,
    whether a scope has summaries, superseded items to quote."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def spliced_ids(self) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            "SELECT message_id FROM splices ORDER BY message_id")]

    def splices(self, ids: Sequence[int]) -> dict[int, str]:
        return {int(r[0]): r[1] for r in self._c.execute(
            "SELECT message_id, messages FROM splices WHERE message_id = ANY(%s)",
            (ids_list(ids),))}

    def history_beyond(self, tenant: str, role: str, thread_id: int, newest: int) -> bool:
        row = self._c.execute(
            "SELECT EXISTS (SELECT 1 FROM threads WHERE tenant = %s AND role = %s"
            " AND id <> %s) OR EXISTS (SELECT 1 FROM messages WHERE thread_id = %s"
            " AND id > %s AND hidden = 0) OR EXISTS (SELECT 1 FROM agent_memories"
            " WHERE role = %s AND tenant IN (%s, '*'))",
            (tenant, role, thread_id, thread_id, newest, role, tenant)).fetchone()
        return bool(row[0])

    def has_active_summaries(self, tenant: str, role: str) -> bool:
        return self._c.execute(
            "SELECT 1 FROM summary_nodes WHERE tenant = %s AND role = %s AND status = 'active'"
            " LIMIT 1", (tenant, role)).fetchone() is not None

    def superseded_sources(self, tenant: str, role: str, last_id: int, limit: int
                           ) -> list[Row]:
        return dicts(self._c, "SELECT id, source_message_id, text, value_text, unit FROM"
                     " memory_items WHERE tenant = %s AND role = %s AND status = 'superseded'"
                     " AND source_message_id <= %s"
                     " ORDER BY source_message_id DESC, id DESC LIMIT %s",
                     (tenant, role, last_id, limit))


def _where(filters: Sequence[tuple[str, Any]]) -> tuple[list[str], list[Any]]:
    """``col = %s`` for each filter whose value is not ``None``, after ``TRUE``."""
    where, args = ["TRUE"], []
    for col, val in filters:
        if val is not None:
            where.append(f"{col} = %s")
            args.append(val)
    return where, args


class PgInspection:
    """The engine's operator reads: agent memories, assembly logs, the keyword
    scan, search hits by scope, one item or message in full, exports. The keyword
    scans' rows (at most ``limit``) are read in one round trip."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def agent_memories(self, *, category: str | None, role: str | None, tenant: str | None,
                       shared_tenant: str) -> list[Row]:
        where, args = _where((("category", category), ("role", role)))
        if tenant is not None:
            where.append("tenant IN (%s, %s)")
            args.extend([tenant, shared_tenant])
        return dicts(self._c, "SELECT id, category, key, title, content, updated_at, role,"
                     f" tenant FROM agent_memories WHERE {' AND '.join(where)}"
                     ' ORDER BY role COLLATE "C", category COLLATE "C", key COLLATE "C"', args)

    def last_assembly(self, *, tenant: str | None, role: str | None, session: str | None,
                      thread_id: int | None) -> Row | None:
        where, args = _where((("a.tenant", tenant), ("a.role", role),
                              ("a.thread_id", thread_id), ("t.session", session)))
        return _one(self._c, "SELECT a.* FROM assembly_logs a LEFT JOIN threads t"
                    f" ON t.id = a.thread_id WHERE {' AND '.join(where)}"
                    " ORDER BY a.id DESC LIMIT 1", args)

    def recent_scopes(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> list[tuple[str, str]]:
        where, args = _where((("tenant", tenant), ("role", role), ("session", session)))
        return [(r[0], r[1]) for r in self._c.execute(
            f"SELECT tenant, role FROM threads WHERE {' AND '.join(where)} GROUP BY"
            f" tenant, role ORDER BY MAX(id) DESC LIMIT {int(limit)}", args)]

    def scoped_item(self, item_id: int, tenant: str, role: str) -> Row | None:
        return _one(self._c, "SELECT * FROM memory_items WHERE id = %s AND tenant = %s"
                    " AND role = %s", (item_id, tenant, role))

    def scoped_message(self, message_id: int, tenant: str, role: str) -> Row | None:
        return _one(self._c, "SELECT id, msg_role, tenant, role, session, text, created_at"
                    " FROM messages WHERE id = %s AND tenant = %s AND role = %s",
                    (message_id, tenant, role))

    def keyword_items(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> Iterator[Row]:
        where, args = _where((("tenant", tenant), ("role", role), ("session", session)))
        return iter(dicts(self._c, f"SELECT * FROM memory_items WHERE {' AND '.join(where)}"
                          f" AND status <> 'retracted' ORDER BY id DESC LIMIT {int(limit)}",
                          args))

    def keyword_messages(self, *, tenant: str | None, role: str | None, session: str | None,
                         limit: int) -> Iterator[Row]:
        where, args = _where((("tenant", tenant), ("role", role), ("session", session)))
        return iter(dicts(self._c, "SELECT id, msg_role, tenant, role, session, text,"
                          " created_at, hidden FROM messages"
                          f" WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT {int(limit)}",
                          args))

    def item(self, item_id: int) -> Row | None:
        return _one(self._c, "SELECT * FROM memory_items WHERE id = %s", (item_id,))

    def message_brief(self, message_id: int | None) -> Row | None:
        return _one(self._c, "SELECT id, msg_role, text, created_at FROM messages"
                    " WHERE id = %s", (message_id,))

    def item_link(self, item_id: int, direction: str) -> Row | None:
        if direction not in ("supersedes", "superseded_by"):
            raise ValueError(f"unknown link {direction!r}")
        return _one(self._c, f"SELECT id, text, status, {direction} FROM memory_items"
                    " WHERE id = %s", (item_id,))

    def revisions(self, item_id: int) -> list[Row]:
        return dicts(self._c, "SELECT changed_at, field, old, new, reason FROM"
                     " memory_item_revisions WHERE item_id = %s ORDER BY id", (item_id,))

    def message(self, message_id: int) -> Row | None:
        return _one(self._c, "SELECT * FROM messages WHERE id = %s", (message_id,))

    def message_items(self, message_id: int) -> list[Row]:
        return dicts(self._c, "SELECT id, kind, status, text FROM memory_items"
                     " WHERE source_message_id = %s ORDER BY id", (message_id,))

    def store_counts(self) -> Row:
        row = self._c.execute(
            "SELECT (SELECT COUNT(*) FROM threads), (SELECT COUNT(*) FROM messages),"
            " (SELECT COUNT(*) FROM events),"
            " (SELECT COUNT(*) FROM messages WHERE hidden = 1),"
            " (SELECT COUNT(DISTINCT tenant) FROM threads),"
            " (SELECT COUNT(DISTINCT tenant || '/' || role) FROM threads),"
            " (SELECT MAX(created_at) FROM messages)").fetchone()
        counts = {"threads": int(row[0]), "messages": int(row[1]), "events": int(row[2]),
                  "hidden_messages": int(row[3])}
        return {"counts": counts, "tenants": int(row[4]), "roles": int(row[5]),
                "last": row[6]}

    def export_threads(self, *, session: str | None, role: str | None, tenant: str | None,
                       thread_id: int | None) -> list[Row]:
        where, args = _where((("session", session), ("role", role), ("tenant", tenant),
                              ("id", thread_id)))
        return dicts(self._c, f"SELECT * FROM threads WHERE {' AND '.join(where)}"
                     " ORDER BY id", args)

    def thread_messages(self, thread_id: int) -> list[Row]:
        return dicts(self._c, "SELECT * FROM messages WHERE thread_id = %s ORDER BY id",
                     (thread_id,))

    def events(self, thread_ids: Sequence[int] | None, *,
               owner: tuple[str | None, str | None] | None = None) -> list[Row]:
        if thread_ids is None:
            return dicts(self._c, "SELECT * FROM events ORDER BY id")
        if owner is None:
            return dicts(self._c, "SELECT * FROM events WHERE thread_id = ANY(%s) ORDER BY id",
                         (ids_list(thread_ids),))
        tenant, role = owner
        return dicts(
            self._c, "SELECT * FROM events WHERE thread_id = ANY(%s) OR (thread_id IS NULL"
            " AND (%s::text IS NULL OR tenant = %s) AND (%s::text IS NULL OR role = %s))"
            " ORDER BY id", (ids_list(thread_ids), tenant, tenant, role, role))

    def head_path(self, thread_id: int) -> list[Row]:
        return dicts(
            self._c, "WITH RECURSIVE path(id) AS (SELECT head_message_id FROM threads"
            " WHERE id = %s AND head_message_id IS NOT NULL UNION ALL"
            " SELECT m.parent_id FROM messages m JOIN path p ON m.id = p.id"
            " WHERE m.parent_id IS NOT NULL)"
            " SELECT m.id, m.msg_role, m.kind, m.text, m.hidden FROM messages m"
            " JOIN path USING (id) ORDER BY m.depth", (thread_id,))


class PgEngineWrites:
    """The engine's own small writes: the tenant salt, assembly logs."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def meta(self, key: str) -> str | None:
        row = self._c.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", (key, value))

    def log_assembly(self, *, request_id: str, tenant: str, role: str, thread_id: int | None,
                     created_at: float, trigger: str, budget_tokens: int, used_tokens: int,
                     token_source: str, data: str) -> int:
        return int(self._c.execute(
            "INSERT INTO assembly_logs (request_id, tenant, role, thread_id, created_at,"
            " trigger, budget_tokens, used_tokens, token_source, data)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (request_id, tenant, role, thread_id, created_at, trigger, budget_tokens,
             used_tokens, token_source, data)).fetchone()[0])


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _conforms(conn: Any) -> tuple[ToolReads, AssemblyReads, ExtractionQueue,
                                      RequestReads, Inspection, EngineWrites]:
        return (PgToolReads(conn), PgAssemblyReads(conn), PgExtractionQueue(conn),
                PgRequestReads(conn), PgInspection(conn), PgEngineWrites(conn))
