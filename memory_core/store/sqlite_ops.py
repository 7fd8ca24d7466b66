"""SQLite implementations of the operation groups of :mod:`memory_core.store.api`,
bound together over one connection as a :class:`SqliteTx`."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import TYPE_CHECKING

from memory_core.store.api import OUTBOX_KINDS, WHITESPACE, ForwardedRow, Row, Tx
from memory_core.store.sqlite_assembly import SqliteAssemblyReads
from memory_core.store.sqlite_capture import (
    SqliteCaptureWrites,
    SqliteHistoryReads,
    SqliteItemFeed,
)
from memory_core.store.sqlite_engine import (
    SqliteEngineWrites,
    SqliteExtractionQueue,
    SqliteInspection,
    SqliteRequestReads,
)
from memory_core.store.sqlite_index import SqliteIndexFeed, SqliteIndexSource
from memory_core.store.sqlite_items import SqliteItemReads
from memory_core.store.sqlite_memory import (
    SqliteAgentMemoryWrites,
    SqliteItemWrites,
    SqliteTaskWrites,
)
from memory_core.store.sqlite_operator import SqliteOperatorReads, where
from memory_core.store.sqlite_purge import SqlitePurge
from memory_core.store.sqlite_search import SqliteSearchReads
from memory_core.store.sqlite_summaries import SqliteSummaryForest
from memory_core.store.sqlite_tools import SqliteToolReads


class SqliteIndexProgress:
    """Outbox and index checkpoints (``index_outbox``, ``checkpoints``)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def outbox_head(self) -> int:
        return int(self._c.execute("SELECT COALESCE(MAX(id), 0) FROM index_outbox"
                                   ).fetchone()[0])

    def index_checkpoints(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._c.execute(
            "SELECT name, value FROM checkpoints WHERE name LIKE 'index\\_%' ESCAPE '\\'")}

    def outbox_after(self, position: int) -> int:
        return int(self._c.execute("SELECT COUNT(*) FROM index_outbox WHERE id > ?",
                                   (position,)).fetchone()[0])

    def oldest_pending_message_at(self, position: int) -> float | None:
        row = self._c.execute(
            "SELECT m.created_at FROM index_outbox o JOIN messages m ON m.id = o.ref_id"
            " WHERE o.id > ? AND o.kind = 'message' ORDER BY o.id LIMIT 1",
            (position,)).fetchone()
        return float(row[0]) if row is not None else None

    def indexable_rows(self) -> int:
        return sum(int(self._c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                   for t in ("messages", "memory_items", "agent_memories", "summary_nodes"))

    def expected_documents(self, vector_kinds: Collection[str],
                           deleted_statuses: Collection[str]) -> dict[str, dict[str, int]]:
        vkinds = set(vector_kinds)
        text: dict[str, int] = {}
        vector: dict[str, int] = {}
        for kind, table in OUTBOX_KINDS.items():
            live = _where_live(kind, deleted_statuses)
            text[kind] = int(self._c.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {live}").fetchone()[0])
            if kind not in vkinds:
                vector[kind] = 0
                continue
            not_blank = f"trim(COALESCE({_EMBED_TEXT[kind]}, ''), ?) != ''"
            if kind == "message":  # "<name>: <text>" is embedded when the message has a name
                not_blank = f"({not_blank} OR COALESCE({_MESSAGE_NAME}, '') NOT IN ('', 0))"
            vector[kind] = int(self._c.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {live} AND {not_blank}",
                (WHITESPACE,)).fetchone()[0])
        return {"text": text, "vector": vector}


_LIVE = {"item": "status", "summary": "status"}
_EMBED_TEXT = {
    "message": "text",
    "item": "text",
    "agent_memory": "title || char(10) || content",
    "summary": "text",
}
_MESSAGE_NAME = ("CASE WHEN json_valid(raw_json) AND json_type(raw_json)='object'"
                 " THEN json_extract(raw_json, '$.name') END")


def _where_live(kind: str, deleted_statuses: Collection[str]) -> str:
    col = _LIVE.get(kind)
    if col is None:
        return "1"
    marks = ",".join("'" + s.replace("'", "''") + "'" for s in sorted(deleted_statuses))
    return f"COALESCE({col}, '') NOT IN ({marks})"


class SqliteMaintenance:
    """Probes and ``PRAGMA`` checks."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def ping(self) -> None:
        self._c.execute("SELECT 1").fetchone()

    def integrity_check(self) -> list[str]:
        return [line for r in self._c.execute("PRAGMA integrity_check")
                for line in str(r[0]).splitlines() if line.strip()]

    def message_id_high_water(self) -> int:
        # messages.id is AUTOINCREMENT: sqlite_sequence only grows.
        row = self._c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'"
                              ).fetchone()
        return int(row[0]) if row is not None else 0

    def extraction_backlog(self, now: float) -> int:
        return int(self._c.execute(
            "SELECT COUNT(*) FROM extraction_queue WHERE attempts > 0 OR next_at <= ?",
            (now,)).fetchone()[0])


class SqliteResponseMap:
    """``response_threads`` and ``response_conversations``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def save_response(self, *, tenant: str, role: str, session: str, response_id: str,
                      parent: str | None, thread_id: int | None, items: bytes,
                      created_at: float) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO response_threads (tenant, role, response_id, session,"
            " parent_response_id, thread_id, items, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (tenant, role, response_id, session, parent, thread_id, items, created_at))

    def save_conversation_head(self, *, tenant: str, role: str, session: str,
                               conversation_id: str, response_id: str,
                               thread_id: int | None, updated_at: float) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO response_conversations (tenant, role, conversation_id,"
            " session, response_id, thread_id, updated_at) VALUES (?,?,?,?,?,?,?)",
            (tenant, role, conversation_id, session, response_id, thread_id, updated_at))

    def conversation_head(self, tenant: str, role: str, conversation_id: str
                          ) -> str | None:
        row = self._c.execute(
            "SELECT response_id FROM response_conversations WHERE tenant=? AND role=?"
            " AND conversation_id=?", (tenant, role, conversation_id)).fetchone()
        return str(row[0]) if row is not None else None

    def response_chain(self, tenant: str, role: str, response_id: str, max_rows: int
                       ) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "WITH RECURSIVE chain(response_id, parent, items, thread_id, session, depth)"
            " AS (SELECT response_id, parent_response_id, items, thread_id, session, 0"
            " FROM response_threads WHERE tenant=? AND role=? AND response_id=?"
            " UNION ALL SELECT r.response_id, r.parent_response_id, r.items, r.thread_id,"
            " r.session, chain.depth + 1 FROM response_threads r JOIN chain"
            " ON r.tenant=? AND r.role=? AND r.response_id=chain.parent"
            " WHERE chain.depth < ?)"
            " SELECT parent, items, thread_id, session FROM chain ORDER BY depth DESC",
            (tenant, role, response_id, tenant, role, max_rows))]

    def response_owner(self, account: str, prefix: str, role: str, response_id: str
                       ) -> str | None:
        row = self._c.execute(OWNER_SQL, (response_id, role, account, len(prefix),
                                          prefix)).fetchone()
        return str(row[0]) if row is not None else None

    def conversation_owner(self, account: str, prefix: str, role: str,
                           conversation_id: str) -> str | None:
        row = self._c.execute(
            "SELECT tenant FROM response_conversations WHERE conversation_id=? AND role=?"
            " AND (tenant=? OR substr(tenant, 1, ?)=?) ORDER BY updated_at DESC, tenant"
            " LIMIT 1", (conversation_id, role, account, len(prefix), prefix)).fetchone()
        return str(row[0]) if row is not None else None


OWNER_SQL = (
    "SELECT tenant FROM response_threads WHERE response_id=? AND role=?"
    " AND (tenant=? OR substr(tenant, 1, ?)=?) ORDER BY created_at, tenant LIMIT 1")
"""The tenant of a key holding a response id: one lookup of ``response_threads_response``
(m010), whatever the number of end users and rows behind the key (as
``conversation_owner``'s of ``response_conversations_conversation``)."""


_FORWARDED_COLS = ("f.id, f.request_id, f.tenant, f.role, f.thread_id, f.created_at, f.state,"
                   " f.model, f.stream, f.client_bytes, f.body_bytes, f.body_omitted,"
                   " f.redacted, f.tools_added, f.compacted_messages")


class SqliteForwardedLog:
    """``forwarded_requests`` with the events and assembly logs of each request."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def insert(self, row: ForwardedRow, keep: int) -> int:
        conn = self._c
        cur = conn.execute(
            "INSERT INTO forwarded_requests (request_id, tenant, role, thread_id, created_at,"
            " state, model, stream, client_bytes, body_bytes, body, body_omitted, redacted,"
            " tools_added, compacted_messages) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            tuple(row))
        row_id = int(cur.lastrowid or 0)
        cutoff = conn.execute(
            "SELECT id FROM forwarded_requests WHERE tenant=? ORDER BY id DESC"
            " LIMIT 1 OFFSET ?", (row.tenant, max(1, keep))).fetchone()
        if cutoff is not None:
            conn.execute("DELETE FROM forwarded_requests WHERE tenant=? AND id<=?",
                         (row.tenant, cutoff[0]))
        return row_id

    def page(self, *, tenant: str | None, role: str | None, thread_id: int | None,
             limit: int, offset: int) -> tuple[int, list[Row]]:
        clause, args = where("f.", tenant=tenant, role=role, thread_id=thread_id)
        total = int(self._c.execute(
            f"SELECT COUNT(*) FROM forwarded_requests f WHERE {clause}", args).fetchone()[0])
        rows = [dict(r) for r in self._c.execute(
            f"SELECT {_FORWARDED_COLS} FROM forwarded_requests f WHERE {clause}"
            " ORDER BY f.id DESC LIMIT ? OFFSET ?", [*args, limit, offset])]
        return total, rows

    def by_request(self, request_id: str, *, tenant: str | None, role: str | None
                   ) -> Row | None:
        clause, args = where("f.", tenant=tenant, role=role)
        row = self._c.execute(
            f"SELECT {_FORWARDED_COLS}, f.body FROM forwarded_requests f WHERE {clause} AND"
            " f.request_id=? ORDER BY f.id DESC LIMIT 1", [*args, request_id]).fetchone()
        return dict(row) if row is not None else None

    def request_events(self, request_id: str, tenant: str) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT kind, created_at, data FROM events WHERE request_id=? AND tenant=?"
            " AND kind IN ('request','response') ORDER BY id", (request_id, tenant))]

    def request_assembly(self, request_id: str, tenant: str) -> Row | None:
        row = self._c.execute("SELECT * FROM assembly_logs WHERE request_id=? AND tenant=?"
                              " ORDER BY id DESC LIMIT 1", (request_id, tenant)).fetchone()
        return dict(row) if row is not None else None


class SqliteTx:
    """Every operation group over one SQLite connection (:class:`~memory_core.store.api.Tx`).

    :class:`memory_core.store.sqlite.SqliteStore` keeps one per connection (the
    writer's, each thread's reader) and hands it to ``read_tx``/``write_tx`` jobs."""

    __slots__ = ("agent_memories", "assembly", "capture", "engine_writes", "extraction",
                 "forwarded", "history", "index", "index_feed", "index_source", "inspection",
                 "item_feed", "item_writes", "items", "maintenance", "operator", "purge",
                 "request_reads", "responses", "search", "summaries", "tasks", "tools")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.operator = SqliteOperatorReads(conn)
        self.index = SqliteIndexProgress(conn)
        self.maintenance = SqliteMaintenance(conn)
        self.purge = SqlitePurge(conn)
        self.responses = SqliteResponseMap(conn)
        self.forwarded = SqliteForwardedLog(conn)
        self.capture = SqliteCaptureWrites(conn)
        self.history = SqliteHistoryReads(conn)
        self.item_feed = SqliteItemFeed(conn)
        self.summaries = SqliteSummaryForest(conn)
        self.items = SqliteItemReads(conn)
        self.index_source = SqliteIndexSource(conn)
        self.index_feed = SqliteIndexFeed(conn)
        self.search = SqliteSearchReads(conn)
        self.tools = SqliteToolReads(conn)
        self.assembly = SqliteAssemblyReads(conn)
        self.item_writes = SqliteItemWrites(conn)
        self.tasks = SqliteTaskWrites(conn)
        self.agent_memories = SqliteAgentMemoryWrites(conn)
        self.extraction = SqliteExtractionQueue(conn)
        self.request_reads = SqliteRequestReads(conn)
        self.inspection = SqliteInspection(conn)
        self.engine_writes = SqliteEngineWrites(conn)


if TYPE_CHECKING:  # mypy checks that every group implements its Protocol
    def _conforms(conn: sqlite3.Connection) -> Tx:
        return SqliteTx(conn)
