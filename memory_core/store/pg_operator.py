"""PostgreSQL implementations of the operator-facing groups of
:mod:`memory_core.store.api`: :class:`~memory_core.store.api.OperatorReads`,
:class:`~memory_core.store.api.IndexProgress`, :class:`~memory_core.store.api.Maintenance`,
:class:`~memory_core.store.api.ForwardedLog` and :class:`~memory_core.store.api.Purge`.

The statements are those of ``sqlite_operator``, ``sqlite_ops`` and ``sqlite_purge``
in PostgreSQL's dialect (see :mod:`memory_core.store.pg_reads` for the common
translations), and:

- ``GROUP_CONCAT(DISTINCT role)`` is ``string_agg(DISTINCT role, ',' ORDER BY role)``
  (SQLite leaves the order unspecified; here it is alphabetical);
- a search of items (``instr(lower(text), lower(?))``) folds ASCII letters only, with
  ``lower_ascii`` (PostgreSQL's ``lower`` folds by locale), and decides in Python
  for items holding an escape pair (:mod:`memory_core.store.pg_text`);
- ``PRAGMA integrity_check`` has no equivalent: :meth:`PgMaintenance.integrity_check`
  checks what the schema cannot enforce (see there);
- the message id high-water mark is the identity sequence's ``last_value``: like
  SQLite's ``sqlite_sequence`` it only grows, and unlike it a rolled-back insert
  still moves it (sequences are not transactional), as the interface allows.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import orjson

from memory_core.store.api import (
    OUTBOX_KINDS,
    WHITESPACE,
    ForwardedLog,
    ForwardedRow,
    IndexProgress,
    Maintenance,
    OperatorReads,
    PathRows,
    Purge,
    Row,
    drop_purged_sources,
    orphan_successor,
)
from memory_core.store.pg_reads import MESSAGE_NAME, dicts, ids_list, lower_ascii
from memory_core.store.pg_text import Verbatim, contains, plain_sql, sendable
from memory_core.store.pg_trips import sync
from memory_core.store.purge_copies import find_copies
from memory_core.store.redaction import redact_rows

_OPTIONAL = frozenset({"forwarded_requests", "splices", "response_threads"})
"""The tables :func:`find_copies` looks in that some SQLite schemas lack: all here."""


def where(prefix: str = "", **filters: Any) -> tuple[str, list[Any]]:
    """``(clause, args)`` ANDing ``prefix + col = %s`` for each filter not ``None``."""
    parts, args = ["TRUE"], []
    for col, val in filters.items():
        if val is not None:
            parts.append(f"{prefix}{col} = %s")
            args.append(val)
    return " AND ".join(parts), args


_SUBJECT = "COALESCE(subject, '')"
_PLAIN_ITEM = f"{plain_sql('text')} AND {plain_sql(_SUBJECT)}"
"""SQL: an item whose text and subject are stored as they are (pg_text)."""


def _text_filter(conn: Any, clause: str, args: list[Any], text: str
                 ) -> tuple[str, list[Any]]:
    """``clause`` narrowed to items whose text or subject contains ``text`` (ASCII
    letters folded): decided in SQL for items stored as they are, in Python on the
    decoded text for the few holding an escape pair (NUL, U+FFFF; pg_text)."""
    odd = [int(r[0]) for r in conn.execute(
        f"SELECT id, text, subject FROM memory_items WHERE {clause} AND NOT ({_PLAIN_ITEM})",
        args) if contains(r[1], text) or contains(r[2], text)]
    found = "FALSE"
    more: list[Any] = []
    if sendable(text):
        found = (f"({_PLAIN_ITEM} AND (strpos({lower_ascii('text')}, {lower_ascii('%s')}) > 0"
                 f" OR strpos({lower_ascii(_SUBJECT)},"
                 f" {lower_ascii('%s')}) > 0))")
        more = [Verbatim(text), Verbatim(text)]
    return f"{clause} AND ({found} OR id = ANY(%s))", [*args, *more, odd]


def _one(conn: Any, sql: str, args: Any = ()) -> Any:
    return conn.execute(sql, args).fetchone()[0]


_PATH_CTE = ("WITH RECURSIVE path(id) AS (SELECT %(head)s::bigint UNION ALL SELECT m.parent_id"
             " FROM path CROSS JOIN LATERAL (SELECT parent_id FROM messages"
             " WHERE messages.id = path.id LIMIT 1) m WHERE m.parent_id IS NOT NULL)")
"""The ids of a path, head first: one primary-key lookup per step (see
``PgCaptureWrites.path_ids``)."""

_REF_SQL = {
    "message": "SELECT tenant, role, text, thread_id, msg_role FROM messages WHERE id = %s",
    "item": "SELECT tenant, role, text, thread_id, status, kind, source_message_id"
            " FROM memory_items WHERE id = %s",
    "summary": "SELECT tenant, role, text, thread_id, level FROM summary_nodes WHERE id = %s",
    "agent_memory": "SELECT tenant, role, title, content, category FROM agent_memories"
                    " WHERE id = %s",
}


class PgOperatorReads:
    """Reads of the admin API, the inspector, ``doctor`` and the evaluation."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def scope_status(self, tenant: str | None, role: str | None) -> Row:
        conn = self._c
        clause, args = where(tenant=tenant, role=role)
        counts: dict[str, int] = {}
        for table in ("threads", "messages", "events", "memory_items", "task_state",
                      "summary_nodes"):
            counts[table] = int(_one(conn, f"SELECT COUNT(*) FROM {table} WHERE {clause}",
                                     args))
        counts["hidden_messages"] = int(_one(
            conn, f"SELECT COUNT(*) FROM messages WHERE {clause} AND hidden = 1", args))
        am_clause, am_args = where(role=role)
        if tenant is not None:
            am_clause += " AND tenant IN (%s, '*')"
            am_args.append(tenant)
        counts["agent_memories"] = int(_one(
            conn, f"SELECT COUNT(*) FROM agent_memories WHERE {am_clause}", am_args))
        by_status = {r[0]: int(r[1]) for r in conn.execute(
            f"SELECT status, COUNT(*) FROM memory_items WHERE {clause} GROUP BY status", args)}
        levels = dicts(conn, "SELECT level, COUNT(*) AS nodes, SUM(tokens) AS tokens,"
                       " SUM(source_tokens) AS source_tokens FROM summary_nodes"
                       f" WHERE {clause} AND status = 'active' GROUP BY level ORDER BY level",
                       args)
        last_msg = _one(conn, f"SELECT MAX(created_at) FROM messages WHERE {clause}", args)
        last = dicts(conn, f"SELECT * FROM assembly_logs WHERE {clause} ORDER BY id DESC"
                     " LIMIT 1", args)
        return {"counts": counts, "items_by_status": by_status, "summary_levels": levels,
                "last_message_at": last_msg, "last_assembly": last[0] if last else None}

    def tenants(self) -> list[Row]:
        return [{"tenant": r["tenant"], "roles": str(r["roles"] or "").split(","),
                 "threads": int(r["threads"]), "messages": int(r["messages"]),
                 "last_activity": r["last_activity"]} for r in dicts(
            self._c,
            "SELECT t.tenant, string_agg(DISTINCT t.role, ',' ORDER BY t.role) AS roles,"
            " COUNT(*) AS threads, MAX(t.updated_at) AS last_activity,"
            " (SELECT COUNT(*) FROM messages m WHERE m.tenant = t.tenant) AS messages"
            " FROM threads t GROUP BY t.tenant ORDER BY last_activity DESC")]

    def threads_page(self, *, tenant: str | None, role: str | None, session: str | None,
                     limit: int, offset: int) -> tuple[int, list[Row]]:
        conn = self._c
        clause, args = where("t.", tenant=tenant, role=role, session=session)
        total = int(_one(conn, f"SELECT COUNT(*) FROM threads t WHERE {clause}", args))
        rows = dicts(
            conn,
            "SELECT t.*, (SELECT depth FROM messages WHERE id = t.head_message_id)"
            " AS head_depth,"
            " (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id) AS own_messages,"
            " (SELECT text FROM messages m WHERE m.thread_id = t.id AND m.msg_role = 'user'"
            "  ORDER BY m.id LIMIT 1) AS first_user"
            f" FROM threads t WHERE {clause} ORDER BY t.updated_at DESC, t.id DESC"
            " LIMIT %s OFFSET %s", [*args, limit, offset])
        return total, rows

    def thread(self, thread_id: int, *, tenant: str | None, role: str | None
               ) -> Row | None:
        clause, args = where(tenant=tenant, role=role)
        rows = dicts(self._c, f"SELECT * FROM threads WHERE id = %s AND {clause}",
                     [thread_id, *args])
        return rows[0] if rows else None

    def thread_path(self, head_message_id: int) -> PathRows:
        conn = self._c
        head = {"head": head_message_id}
        messages = dicts(
            conn, f"{_PATH_CTE} SELECT m.id, m.parent_id, m.msg_role, m.kind, m.hidden,"
            " m.text, m.tokens, m.created_at, m.summary_node_id, m.thread_id, m.depth"
            " FROM messages m JOIN path USING (id) ORDER BY m.depth", head)
        children = dicts(
            conn, f"{_PATH_CTE} SELECT c.id, c.parent_id, c.thread_id, c.msg_role, c.text"
            " FROM messages c JOIN path p ON c.parent_id = p.id ORDER BY c.id", head)
        forks = [(int(r[0]), int(r[1])) for r in conn.execute(
            f"{_PATH_CTE} SELECT th.id, th.fork_message_id FROM threads th"
            " JOIN path p ON th.fork_message_id = p.id ORDER BY th.id", head)]
        return PathRows(messages, children, forks)

    def task_state(self, thread_id: int) -> list[Row]:
        return dicts(self._c, "SELECT id, label, text, status, source_message_id, updated_at"
                     " FROM task_state WHERE thread_id = %s ORDER BY id", (thread_id,))

    def summary_nodes(self, tenant: str, role: str) -> list[Row]:
        return dicts(self._c, "SELECT * FROM summary_nodes WHERE tenant = %s AND role = %s"
                     " ORDER BY level DESC, id", (tenant, role))

    def items_page(self, *, tenant: str | None, role: str | None, status: str | None,
                   kind: str | None, thread_id: int | None, text: str | None,
                   limit: int, offset: int) -> tuple[int, list[Row]]:
        conn = self._c
        clause, args = where(tenant=tenant, role=role, status=status, kind=kind,
                             thread_id=thread_id)
        if text:
            clause, args = _text_filter(conn, clause, args, text)
        total = int(_one(conn, f"SELECT COUNT(*) FROM memory_items WHERE {clause}", args))
        cols = ("id, tenant, role, kind, status, text, subject, value, unit, condition,"
                " supersedes, superseded_by, conflict_with, source_message_id, evidence,"
                " created_at, updated_at")
        items = dicts(conn, f"SELECT {cols} FROM memory_items WHERE {clause} ORDER BY id DESC"
                      " LIMIT %s OFFSET %s", [*args, limit, offset])
        return total, items

    def item_brief(self, item_id: int) -> Row | None:
        rows = dicts(self._c, "SELECT id, status, kind, text, updated_at, supersedes,"
                     " superseded_by FROM memory_items WHERE id = %s", (item_id,))
        return rows[0] if rows else None

    def superseded_page(self, *, tenant: str | None, role: str | None, limit: int,
                        offset: int) -> tuple[int, list[int]]:
        conn = self._c
        clause, args = where(tenant=tenant, role=role)
        total = int(_one(conn, f"SELECT COUNT(*) FROM memory_items WHERE {clause} AND"
                         " status = 'superseded'", args))
        ids = [int(r[0]) for r in conn.execute(
            f"SELECT id FROM memory_items WHERE {clause} AND status = 'superseded'"
            " ORDER BY updated_at DESC, id DESC LIMIT %s OFFSET %s", [*args, limit, offset])]
        return total, ids

    def ref_row(self, kind: str, ref_id: int) -> Row | None:
        sql = _REF_SQL.get(kind)
        if sql is None:
            raise ValueError(f"unknown ref kind {kind!r}")
        rows = dicts(self._c, sql, (ref_id,))
        return rows[0] if rows else None

    def item_scope(self, item_id: int) -> tuple[str, str, str] | None:
        r = self._c.execute("SELECT tenant, role, session FROM memory_items WHERE id = %s",
                            (item_id,)).fetchone()
        return (r[0], r[1], r[2]) if r is not None else None

    def session_rows(self, tenant: str, role: str, session: str) -> dict[str, list[Any]]:
        conn = self._c
        threads = [int(r[0]) for r in conn.execute(
            "SELECT id FROM threads WHERE tenant = %s AND role = %s AND session = %s"
            " ORDER BY id", (tenant, role, session))]
        return {
            "items": dicts(conn, "SELECT id, kind, text, status, source_message_id"
                           " FROM memory_items WHERE tenant = %s AND role = %s ORDER BY id",
                           (tenant, role)),
            "prefs": dicts(conn, "SELECT key, title, content FROM agent_memories WHERE"
                           " category = 'user_preferences' AND role = %s"
                           " AND tenant IN (%s, '*') ORDER BY key", (role, tenant)),
            "tasks": dicts(conn, "SELECT label, text, status FROM task_state"
                           " WHERE thread_id = ANY(%s) ORDER BY id", (threads,)),
            "messages": dicts(conn, "SELECT id, thread_id, parent_id, msg_role, text,"
                              " node_key, hidden FROM messages WHERE tenant = %s"
                              " AND role = %s AND session = %s ORDER BY id",
                              (tenant, role, session)),
            "summaries": dicts(conn, "SELECT level, message_ids FROM summary_nodes"
                               " WHERE tenant = %s AND role = %s AND status = 'active'"
                               " ORDER BY id", (tenant, role)),
            "threads": threads,
        }

    def session_tenant(self, session: str) -> str | None:
        row = self._c.execute("SELECT tenant FROM threads WHERE session = %s LIMIT 1",
                              (session,)).fetchone()
        return str(row[0]) if row is not None else None

    def conflict_pairs(self) -> list[Row]:
        return dicts(self._c,
                     "SELECT a.text AS a_text, b.text AS b_text, ma.text AS a_msg,"
                     " mb.text AS b_msg FROM memory_items a"
                     " JOIN memory_items b ON b.id = a.conflict_with"
                     " LEFT JOIN messages ma ON ma.id = a.source_message_id"
                     " LEFT JOIN messages mb ON mb.id = b.source_message_id ORDER BY a.id")

    def message_session(self, message_id: int) -> Row | None:
        rows = dicts(self._c, "SELECT m.text, t.session FROM messages m JOIN threads t"
                     " ON t.id = m.thread_id WHERE m.id = %s", (message_id,))
        return rows[0] if rows else None


_LIVE = {"item": "status", "summary": "status"}
_EMBED_TEXT = {
    "message": "text",
    "item": "text",
    "agent_memory": "title || chr(10) || content",
    "summary": "text",
}


class PgIndexProgress:
    """Outbox and index checkpoints (``index_outbox``, ``checkpoints``)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def outbox_head(self) -> int:
        return int(_one(self._c, "SELECT COALESCE(MAX(id), 0) FROM index_outbox"))

    def index_checkpoints(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._c.execute(
            "SELECT name, value FROM checkpoints WHERE left(name, 6) = 'index_'")}

    def outbox_after(self, position: int) -> int:
        return int(_one(self._c, "SELECT COUNT(*) FROM index_outbox WHERE id > %s",
                        (position,)))

    def oldest_pending_message_at(self, position: int) -> float | None:
        row = self._c.execute(
            "SELECT m.created_at FROM index_outbox o JOIN messages m ON m.id = o.ref_id"
            " WHERE o.id > %s AND o.kind = 'message' ORDER BY o.id LIMIT 1",
            (position,)).fetchone()
        return float(row[0]) if row is not None else None

    def indexable_rows(self) -> int:
        return int(_one(self._c, "SELECT (SELECT COUNT(*) FROM messages)"
                        " + (SELECT COUNT(*) FROM memory_items)"
                        " + (SELECT COUNT(*) FROM agent_memories)"
                        " + (SELECT COUNT(*) FROM summary_nodes)"))

    def expected_documents(self, vector_kinds: Collection[str],
                           deleted_statuses: Collection[str]) -> dict[str, dict[str, int]]:
        vkinds = set(vector_kinds)
        deleted = sorted(deleted_statuses)
        text: dict[str, int] = {}
        vector: dict[str, int] = {}
        for kind, table in OUTBOX_KINDS.items():
            col = _LIVE.get(kind)
            live, args = ((f"NOT (COALESCE({col}, '') = ANY(%s))", [deleted]) if col
                          else ("TRUE", []))
            text[kind] = int(_one(self._c, f"SELECT COUNT(*) FROM {table} WHERE {live}",
                                  args))
            if kind not in vkinds:
                vector[kind] = 0
                continue
            not_blank = f"btrim(COALESCE({_EMBED_TEXT[kind]}, ''), %s) <> ''"
            if kind == "message":  # "<name>: <text>" is embedded when the message has a name
                not_blank = f"({not_blank} OR COALESCE({MESSAGE_NAME}, '') <> '')"
            vector[kind] = int(_one(
                self._c, f"SELECT COUNT(*) FROM {table} WHERE {live} AND {not_blank}",
                [*args, WHITESPACE]))
        return {"text": text, "vector": vector}


class PgMaintenance:
    """Probes and whole-store checks."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def ping(self) -> None:
        self._c.execute("SELECT 1").fetchone()

    def integrity_check(self) -> list[str]:
        """PostgreSQL checks pages and constraints itself; what it cannot: links
        without a foreign key (a message's summary node, a thread's ends, an outbox
        row's kind), one line per kind of problem with its count."""
        checks = {
            "messages.summary_node_id without its node":
                "SELECT COUNT(*) FROM messages m WHERE m.summary_node_id IS NOT NULL AND NOT"
                " EXISTS (SELECT 1 FROM summary_nodes s WHERE s.id = m.summary_node_id)",
            "threads.head_message_id without its message":
                "SELECT COUNT(*) FROM threads t WHERE t.head_message_id IS NOT NULL AND NOT"
                " EXISTS (SELECT 1 FROM messages m WHERE m.id = t.head_message_id)",
            "index_outbox rows of an unknown kind":
                "SELECT COUNT(*) FROM index_outbox WHERE NOT (kind = ANY(%s))",
        }
        problems = []
        for what, sql in checks.items():
            args = (list(OUTBOX_KINDS),) if "%s" in sql else ()
            n = int(_one(self._c, sql, args))
            if n:
                problems.append(f"{what}: {n}")
        return problems or ["ok"]

    def message_id_high_water(self) -> int:
        row = self._c.execute(
            "SELECT last_value FROM pg_sequences WHERE schemaname = current_schema()"
            " AND sequencename = 'messages_id_seq'").fetchone()
        return int(row[0]) if row is not None and row[0] is not None else 0

    def extraction_backlog(self, now: float) -> int:
        return int(_one(self._c, "SELECT COUNT(*) FROM extraction_queue WHERE attempts > 0"
                        " OR next_at <= %s", (now,)))


_FORWARDED_COLS = ("f.id, f.request_id, f.tenant, f.role, f.thread_id, f.created_at, f.state,"
                   " f.model, f.stream, f.client_bytes, f.body_bytes, f.body_omitted,"
                   " f.redacted, f.tools_added, f.compacted_messages")


class PgForwardedLog:
    """``forwarded_requests`` with the events and assembly logs of each request."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def insert(self, row: ForwardedRow, keep: int) -> int:
        conn = self._c
        row_id = int(conn.execute(
            "INSERT INTO forwarded_requests (request_id, tenant, role, thread_id, created_at,"
            " state, model, stream, client_bytes, body_bytes, body, body_omitted, redacted,"
            " tools_added, compacted_messages) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s,"
            " %s, %s, %s, %s, %s, %s) RETURNING id", tuple(row)).fetchone()[0])
        conn.execute(
            "DELETE FROM forwarded_requests WHERE tenant = %(t)s AND id <= (SELECT id FROM"
            " forwarded_requests WHERE tenant = %(t)s ORDER BY id DESC LIMIT 1"
            " OFFSET %(keep)s)", {"t": row.tenant, "keep": max(1, keep)})
        return row_id

    def page(self, *, tenant: str | None, role: str | None, thread_id: int | None,
             limit: int, offset: int) -> tuple[int, list[Row]]:
        clause, args = where("f.", tenant=tenant, role=role, thread_id=thread_id)
        total = int(_one(self._c, f"SELECT COUNT(*) FROM forwarded_requests f WHERE {clause}",
                         args))
        rows = dicts(self._c, f"SELECT {_FORWARDED_COLS} FROM forwarded_requests f"
                     f" WHERE {clause} ORDER BY f.id DESC LIMIT %s OFFSET %s",
                     [*args, limit, offset])
        return total, rows

    def by_request(self, request_id: str, *, tenant: str | None, role: str | None
                   ) -> Row | None:
        clause, args = where("f.", tenant=tenant, role=role)
        rows = dicts(self._c, f"SELECT {_FORWARDED_COLS}, f.body FROM forwarded_requests f"
                     f" WHERE {clause} AND f.request_id = %s ORDER BY f.id DESC LIMIT 1",
                     [*args, request_id])
        return rows[0] if rows else None

    def request_events(self, request_id: str, tenant: str) -> list[Row]:
        return dicts(self._c, "SELECT kind, created_at, data FROM events WHERE"
                     " request_id = %s AND tenant = %s AND kind IN ('request', 'response')"
                     " ORDER BY id", (request_id, tenant))

    def request_assembly(self, request_id: str, tenant: str) -> Row | None:
        rows = dicts(self._c, "SELECT * FROM assembly_logs WHERE request_id = %s"
                     " AND tenant = %s ORDER BY id DESC LIMIT 1", (request_id, tenant))
        return rows[0] if rows else None


class _Preview(Exception):
    """Raised inside a dry run to roll the purge back; carries the counts."""

    def __init__(self, counts: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.counts = counts


class PgPurge:
    """Purge inside a write job: the scope's ids are collected into a temporary
    table, links from rows that stay are cut, then the rows are deleted table by
    table inside one savepoint (a dry run rolls it back, so its counts are exact).

    PostgreSQL has no ``secure_delete``: deleted tuples stay on disk until
    ``VACUUM`` reclaims their space (and are overwritten only when it is reused)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def delete_scope(self, *, tenant: str | None, role: str | None, session: str | None,
                     dry_run: bool, thread: int | None = None,
                     scrub_copies: bool = False) -> dict[str, Any]:
        sync(self._c)  # the batch's deferred BEGIN: the savepoint nests in it
        try:
            with self._c.transaction():  # a savepoint inside the job's transaction
                counts = _delete(self._c, tenant, role, session, thread, scrub_copies)
                if dry_run:
                    raise _Preview(counts)
        except _Preview as preview:
            return preview.counts
        return counts

    def record(self, created_at: float, data: str) -> None:
        self._c.execute(
            "INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
            " VALUES (NULL, NULL, NULL, NULL, 'purge', %s, %s)", (created_at, data))

    def redact_message(self, message_id: int, *, tenant: str | None, role: str | None,
                       dry_run: bool, session: str | None = None) -> dict[str, Any] | None:
        sync(self._c)  # the batch's deferred BEGIN: the savepoint nests in it
        counts: dict[str, Any] | None = None
        try:
            with self._c.transaction():  # a savepoint inside the job's transaction
                self._c.execute("CREATE TEMP TABLE IF NOT EXISTS purge_ids (kind TEXT"
                                " NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (kind, id))")
                self._c.execute("DELETE FROM purge_ids")
                counts = redact_rows(self._c, _marks, "purge_ids", message_id,
                                     tenant=tenant, role=role, session=session,
                                     keep_restated=_keep_restated,
                                     restore_orphans=_restore_orphans)
                if dry_run:
                    raise _Preview(counts or {})
        except _Preview:
            return counts
        return counts


def _marks(sql: str) -> str:
    """``?`` marks as psycopg's (the shared redaction SQL has no literal ``%``)."""
    return sql.replace("?", "%s")


def _keep_restated(conn: Any, items: str, messages: str) -> None:
    """``sqlite_purge._keep_restated``: items a message outside the scope also stated
    stay, citing their newest surviving source."""
    now = time.time()
    for item_id, data in conn.execute(
            f"SELECT id, data FROM memory_items WHERE id IN {items}"
            " AND data LIKE '%%\"sources\"%%' ORDER BY id").fetchall():
        value = orjson.loads(data or "{}")
        srcs = value.get("sources") if isinstance(value, dict) else None
        if not isinstance(srcs, list) or len(srcs) < 2:
            continue
        wanted = [int(m) for m in srcs if isinstance(m, int)]
        kept = {int(r[0]): (int(r[1]), r[2]) for r in conn.execute(
            f"SELECT id, thread_id, session FROM messages WHERE id = ANY(%s)"
            f" AND id NOT IN {messages}", (wanted,)).fetchall()}
        if not kept:
            continue
        value["sources"] = [m for m in wanted if m in kept]
        newest = max(kept)
        thread_id, session = kept[newest]
        conn.execute("DELETE FROM purge_ids WHERE kind = 'item' AND id = %s", (item_id,))
        conn.execute("UPDATE memory_items SET source_message_id = %s, thread_id = %s,"
                     " session = %s, data = %s WHERE id = %s",
                     (newest, thread_id, session, orjson.dumps(value).decode(), item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (%s, %s, %s, %s, %s, %s)",
                     (item_id, now, "sources", str(wanted), str(value["sources"]),
                      "purged: the sources in the purged scope"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', %s, 'upsert')",
                     (item_id,))


def _drop_purged_sources(conn: Any, items: str, messages: str, threads: str) -> int:
    """``sqlite_purge._drop_purged_sources``: surviving items lose the purged
    messages and threads from ``data``; returns how many changed."""
    rows = conn.execute(
        f"SELECT id, data FROM memory_items WHERE id NOT IN {items} AND tenant IN"
        f" (SELECT tenant FROM threads WHERE id IN {threads}) AND (data LIKE %s OR"
        " data LIKE %s) ORDER BY id", ('%"sources"%', '%_threads"%')).fetchall()
    if not rows:
        return 0
    gone_m = {int(r[0]) for r in conn.execute(messages[1:-1]).fetchall()}
    gone_t = {int(r[0]) for r in conn.execute(threads[1:-1]).fetchall()}
    now = time.time()
    changed = 0
    for item_id, data in rows:
        value = orjson.loads(data or "{}")
        if not isinstance(value, dict):
            continue
        before = value.get("sources")
        if not drop_purged_sources(value, gone_m, gone_t):
            continue
        conn.execute("UPDATE memory_items SET data = %s WHERE id = %s",
                     (orjson.dumps(value).decode(), item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (%s, %s, %s, %s, %s, %s)",
                     (item_id, now, "sources", str(before), str(value.get("sources")),
                      "purged: the sources in the purged scope"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', %s, 'upsert')",
                     (item_id,))
        changed += 1
    return changed


def _restore_orphans(conn: Any, purged: str) -> int:
    """``sqlite_purge._restore_orphans``: surviving items a purged item superseded or
    merged away point at the first survivor down its chain, or become active again
    (a ``restored`` revision, an outbox ``upsert``). Returns how many became active."""
    orphans = conn.execute(
        f"SELECT id, status, superseded_by FROM memory_items WHERE superseded_by IN"
        f" {purged} AND id NOT IN {purged} AND status IN ('superseded', 'merged')"
        " ORDER BY id").fetchall()
    if not orphans:
        return 0
    chain = {int(r[0]): r[1] for r in conn.execute(
        f"SELECT id, superseded_by FROM memory_items WHERE id IN {purged}").fetchall()}
    now = time.time()
    restored = 0
    for item_id, status, by in orphans:
        successor = orphan_successor(int(by), chain)
        if successor is not None:
            conn.execute("UPDATE memory_items SET superseded_by = %s WHERE id = %s",
                         (successor, item_id))
            conn.execute("UPDATE memory_items SET supersedes = %s WHERE id = %s AND"
                         f" (supersedes IS NULL OR supersedes IN {purged})",
                         (item_id, successor))
            continue
        conn.execute("UPDATE memory_items SET status = 'active', superseded_by = NULL,"
                     " updated_at = %s WHERE id = %s", (now, item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (%s, %s, %s, %s, %s, %s)",
                     (item_id, now, "status", status, "active",
                      f"restored: item {by} that replaced it was purged"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', %s, 'upsert')",
                     (item_id,))
        restored += 1
    return restored


def _delete(conn: Any, tenant: str | None, role: str | None,
            session: str | None, thread: int | None, scrub_copies: bool) -> dict[str, Any]:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS purge_ids"
                 " (kind TEXT NOT NULL, id BIGINT NOT NULL, PRIMARY KEY (kind, id))")
    conn.execute("DELETE FROM purge_ids")
    by_scope, s_args = where(tenant=tenant, role=role, session=session)
    by_owner, o_args = where(tenant=tenant, role=role)

    def mark(kind: str, sql: str, args: list[Any]) -> int:
        return int(conn.execute(
            f"INSERT INTO purge_ids (kind, id) {sql} ON CONFLICT DO NOTHING", args).rowcount)

    ids = "(SELECT id FROM purge_ids WHERE kind = '{}')".format
    if thread is None:
        mark("thread", f"SELECT 'thread', id FROM threads WHERE {by_scope}", s_args)
        mark("message", f"SELECT 'message', id FROM messages WHERE {by_scope}", s_args)
        mark("item", f"SELECT 'item', id FROM memory_items WHERE {by_scope}", s_args)
    else:
        # the thread and the branches forked from it (edits, regenerations)
        grown = mark("thread", f"SELECT 'thread', id FROM threads WHERE {by_scope}"
                     " AND id = %s", [*s_args, thread])
        while grown:
            grown = mark("thread", f"SELECT 'thread', id FROM threads WHERE {by_scope} AND"
                         f" parent_thread_id IN {ids('thread')}", s_args)
        mark("message", f"SELECT 'message', id FROM messages WHERE thread_id IN"
             f" {ids('thread')}", [])
    mark("item", "SELECT 'item', id FROM memory_items WHERE source_message_id IN"
         f" {ids('message')} OR thread_id IN {ids('thread')}", [])
    _keep_restated(conn, ids("item"), ids("message"))
    whole = session is None and thread is None  # rows kept per role or tenant go too
    # Tables without a session column belong to a session through its threads.
    for kind, table in (("summary", "summary_nodes"), ("task", "task_state"),
                        ("assembly", "assembly_logs"), ("event", "events"),
                        ("forwarded", "forwarded_requests")):
        mark(kind, f"SELECT '{kind}', id FROM {table} WHERE thread_id IN {ids('thread')}", [])
        if whole:
            mark(kind, f"SELECT '{kind}', id FROM {table} WHERE {by_owner}", o_args)
    if whole:
        mark("agent_memory", f"SELECT 'agent_memory', id FROM agent_memories WHERE {by_owner}",
             o_args)
    copies, held = find_copies(conn, _marks, ids, tables=_OPTIONAL, scrub=scrub_copies)

    def rows(sql: str, args: Any = ()) -> int:
        return int(conn.execute(sql, args).rowcount)

    counts: dict[str, Any] = {}
    outbox = sum(rows("INSERT INTO index_outbox (kind, ref_id, op) SELECT %s, id, 'delete'"
                      " FROM purge_ids WHERE kind = %s ORDER BY id", (kind, kind))
                 for kind in OUTBOX_KINDS)
    counts["embeddings"] = sum(
        rows(f"DELETE FROM embeddings WHERE kind = %s AND ref_id IN {ids(kind)}", (kind,))
        for kind in OUTBOX_KINDS)

    counts["restored_items"] = _restore_orphans(conn, ids("item"))
    counts["sources_dropped"] = _drop_purged_sources(
        conn, ids("item"), ids("message"), ids("thread"))
    # Links from rows that stay to rows that go would break foreign keys: cut them.
    for col in ("supersedes", "superseded_by", "conflict_with"):
        conn.execute(f"UPDATE memory_items SET {col} = NULL WHERE {col} IN {ids('item')}"
                     f" AND id NOT IN {ids('item')}")
    conn.execute("UPDATE memory_items SET source_message_id = NULL WHERE source_message_id IN"
                 f" {ids('message')} AND id NOT IN {ids('item')}")
    conn.execute(f"UPDATE summary_nodes SET parent_id = NULL WHERE parent_id IN"
                 f" {ids('summary')} AND id NOT IN {ids('summary')}")
    # A surviving child of a purged turn (a fork in another session) was indexed with
    # its parent's words: drop its cached vector and index it again, without the parent.
    children = (f"(SELECT id FROM messages WHERE parent_id IN {ids('message')}"
                f" AND id NOT IN {ids('message')})")
    conn.execute(f"DELETE FROM embeddings WHERE kind = 'message' AND ref_id IN {children}")
    counts["reindexed_children"] = rows(
        "INSERT INTO index_outbox (kind, ref_id, op) SELECT 'message', id, 'upsert'"
        f" FROM messages WHERE id IN {children} ORDER BY id")
    conn.execute(f"UPDATE messages SET parent_id = NULL WHERE parent_id IN {ids('message')}"
                 f" AND id NOT IN {ids('message')}")
    conn.execute(f"UPDATE threads SET parent_thread_id = NULL WHERE parent_thread_id IN"
                 f" {ids('thread')} AND id NOT IN {ids('thread')}")

    counts["extraction_queue"] = rows(
        f"DELETE FROM extraction_queue WHERE message_id IN {ids('message')}")
    counts["splices"] = rows(f"DELETE FROM splices WHERE message_id IN {ids('message')}")
    counts["memory_item_subject_keys"] = rows(
        f"DELETE FROM memory_item_subject_keys WHERE item_id IN {ids('item')}")
    counts["memory_item_terms"] = rows(
        f"DELETE FROM memory_item_terms WHERE item_id IN {ids('item')}")
    counts["memory_item_revisions"] = rows(
        f"DELETE FROM memory_item_revisions WHERE item_id IN {ids('item')}")
    # Items point at each other (supersession) and at messages: drop links inside the set.
    conn.execute(f"UPDATE memory_items SET supersedes = NULL, superseded_by = NULL,"
                 f" conflict_with = NULL WHERE id IN {ids('item')}")
    counts["memory_items"] = rows(f"DELETE FROM memory_items WHERE id IN {ids('item')}")
    conn.execute(f"UPDATE summary_nodes SET parent_id = NULL WHERE id IN {ids('summary')}")
    counts["summary_nodes"] = rows(f"DELETE FROM summary_nodes WHERE id IN {ids('summary')}")
    counts["task_state"] = rows(f"DELETE FROM task_state WHERE id IN {ids('task')}")
    counts["assembly_logs"] = rows(f"DELETE FROM assembly_logs WHERE id IN {ids('assembly')}")
    counts["events"] = rows(f"DELETE FROM events WHERE id IN {ids('event')}")
    counts["forwarded_requests"] = rows(
        f"DELETE FROM forwarded_requests WHERE id IN {ids('forwarded')}")
    counts["agent_memories"] = rows(
        f"DELETE FROM agent_memories WHERE id IN {ids('agent_memory')}")
    scoped = f"({by_scope}) OR " if thread is None else ""
    for table in ("response_threads", "response_conversations"):
        counts[table] = rows(f"DELETE FROM {table} WHERE {scoped}thread_id IN {ids('thread')}",
                             s_args if thread is None else [])
    conn.execute(f"UPDATE messages SET parent_id = NULL WHERE id IN {ids('message')}")
    counts["messages"] = rows(f"DELETE FROM messages WHERE id IN {ids('message')}")
    conn.execute(f"UPDATE threads SET parent_thread_id = NULL WHERE id IN {ids('thread')}")
    counts["threads"] = rows(f"DELETE FROM threads WHERE id IN {ids('thread')}")
    counts["outbox_deletes"] = outbox
    counts["copies_found"] = sum(len(v) for v in copies.values())
    counts["copies_scrubbed"] = counts["copies_found"] if scrub_copies else 0
    counts["copies"] = copies
    counts["held_elsewhere"] = held
    conn.execute("DELETE FROM purge_ids")
    return counts


if TYPE_CHECKING:  # mypy checks every group against its Protocol
    def _conforms(conn: Any) -> tuple[OperatorReads, IndexProgress, Maintenance,
                                      ForwardedLog, Purge]:
        return (PgOperatorReads(conn), PgIndexProgress(conn), PgMaintenance(conn),
                PgForwardedLog(conn), PgPurge(conn))


__all__ = ["PgForwardedLog", "PgIndexProgress", "PgMaintenance", "PgOperatorReads",
           "PgPurge", "ids_list", "where"]
