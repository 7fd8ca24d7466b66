"""PostgreSQL implementations of the operation groups of :mod:`memory_core.store.api`,
bound together over one connection as a :class:`PgTx`.

:class:`PgResponseMap` is here; capture's group is in :mod:`memory_core.store.pg_capture`,
the engine's reads in :mod:`memory_core.store.pg_reads`, the writer's item, task
and agent-memory rules in :mod:`memory_core.store.pg_memory`, the tools', block's
and engine's own groups in :mod:`memory_core.store.pg_engine`, the operator's groups and
purge in :mod:`memory_core.store.pg_operator`; their tables in
:mod:`memory_core.store.pg_migrations`. A group works over one ``psycopg``
connection (a pooled one: in autocommit mode for a read job, inside the transaction
its store opens for a write job) and returns the same plain values as its SQLite
twin. Needs ``psycopg`` 3 (the ``postgres`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from psycopg.rows import dict_row

from memory_core.store.api import ResponseMap, Row, Tx
from memory_core.store.pg_capture import PgCaptureWrites
from memory_core.store.pg_engine import (
    PgAssemblyReads,
    PgEngineWrites,
    PgExtractionQueue,
    PgInspection,
    PgRequestReads,
    PgToolReads,
)
from memory_core.store.pg_memory import PgAgentMemoryWrites, PgItemWrites, PgTaskWrites
from memory_core.store.pg_operator import (
    PgForwardedLog,
    PgIndexProgress,
    PgMaintenance,
    PgOperatorReads,
    PgPurge,
)
from memory_core.store.pg_reads import (
    PgHistoryReads,
    PgIndexFeed,
    PgIndexSource,
    PgItemFeed,
    PgItemReads,
    PgSearchReads,
    PgSummaryForest,
)


class PgResponseMap:
    """``response_threads`` and ``response_conversations`` on PostgreSQL.

    Several replicas may write one response id at once: a save is one
    ``INSERT … ON CONFLICT DO UPDATE``, the last writer's row wins (as SQLite's
    ``INSERT OR REPLACE`` under its single writer)."""

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def save_response(self, *, tenant: str, role: str, session: str, response_id: str,
                      parent: str | None, thread_id: int | None, items: bytes,
                      created_at: float) -> None:
        self._c.execute(
            "INSERT INTO response_threads (tenant, role, response_id, session,"
            " parent_response_id, thread_id, items, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (tenant, role, response_id) DO UPDATE SET"
            " session = EXCLUDED.session, parent_response_id = EXCLUDED.parent_response_id,"
            " thread_id = EXCLUDED.thread_id, items = EXCLUDED.items,"
            " created_at = EXCLUDED.created_at",
            (tenant, role, response_id, session, parent, thread_id, items, created_at))

    def save_conversation_head(self, *, tenant: str, role: str, session: str,
                               conversation_id: str, response_id: str,
                               thread_id: int | None, updated_at: float) -> None:
        self._c.execute(
            "INSERT INTO response_conversations (tenant, role, conversation_id, session,"
            " response_id, thread_id, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (tenant, role, conversation_id) DO UPDATE SET"
            " session = EXCLUDED.session, response_id = EXCLUDED.response_id,"
            " thread_id = EXCLUDED.thread_id, updated_at = EXCLUDED.updated_at",
            (tenant, role, conversation_id, session, response_id, thread_id, updated_at))

    def conversation_head(self, tenant: str, role: str, conversation_id: str
                          ) -> str | None:
        row = self._c.execute(
            "SELECT response_id FROM response_conversations WHERE tenant = %s AND role = %s"
            " AND conversation_id = %s", (tenant, role, conversation_id)).fetchone()
        return str(row[0]) if row is not None else None

    def response_chain(self, tenant: str, role: str, response_id: str, max_rows: int
                       ) -> list[Row]:
        with self._c.cursor(row_factory=dict_row) as cur:
            cur.execute(CHAIN_SQL, {"t": tenant, "r": role, "id": response_id,
                                    "max": max_rows})
            return [{"parent": r["parent"], "items": bytes(r["items"]),
                     "thread_id": r["thread_id"], "session": r["session"]}
                    for r in cur.fetchall()]

    def response_owner(self, account: str, prefix: str, role: str, response_id: str
                       ) -> str | None:
        row = self._c.execute(OWNER_SQL, {"id": response_id, "r": role, "t": account,
                                          "n": len(prefix), "p": prefix}).fetchone()
        return str(row[0]) if row is not None else None

    def conversation_owner(self, account: str, prefix: str, role: str,
                           conversation_id: str) -> str | None:
        row = self._c.execute(
            "SELECT tenant FROM response_conversations WHERE conversation_id = %s"
            " AND role = %s AND (tenant = %s OR left(tenant, %s) = %s)"
            " ORDER BY updated_at DESC, tenant LIMIT 1",
            (conversation_id, role, account, len(prefix), prefix)).fetchone()
        return str(row[0]) if row is not None else None


OWNER_SQL = (
    "SELECT tenant FROM response_threads WHERE response_id = %(id)s AND role = %(r)s"
    " AND (tenant = %(t)s OR left(tenant, %(n)s) = %(p)s) ORDER BY created_at, tenant"
    " LIMIT 1")
"""The tenant of a key holding a response id: a lookup of ``response_threads_response``
(migration 5), whatever the number of end users and rows behind the key."""

CHAIN_SQL = (
    "WITH RECURSIVE chain(response_id, parent, items, thread_id, session, depth) AS ("
    " SELECT response_id, parent_response_id, items, thread_id, session, 0"
    " FROM response_threads WHERE tenant = %(t)s AND role = %(r)s AND response_id = %(id)s"
    " UNION ALL SELECT p.response_id, p.parent_response_id, p.items, p.thread_id,"
    " p.session, chain.depth + 1 FROM chain CROSS JOIN LATERAL ("
    "  SELECT * FROM response_threads r WHERE r.tenant = %(t)s AND r.role = %(r)s"
    "  AND r.response_id = chain.parent LIMIT 1) p"
    " WHERE chain.depth < %(max)s)"
    " SELECT parent, items, thread_id, session FROM chain ORDER BY depth DESC")
"""A conversation's rows, newest first in the recursion, oldest first out.

Each step is one primary-key lookup of the parent, whatever the table's statistics:
the ``LIMIT 1`` (the key allows one row anyway) keeps the planner from flattening the
lookup into a join that scans the tenant's whole map per step. On a table not yet
analyzed that join read a 1,000-turn chain in 0.75-1.9 s instead of 4 ms
(docs/evaluation/store_backends_chain.py)."""


class PgTx:
    """Every operation group over one ``psycopg`` connection
    (:class:`~memory_core.store.api.Tx`); :class:`memory_core.store.pg.PgStore` makes
    one per job."""

    __slots__ = ("agent_memories", "assembly", "capture", "engine_writes", "extraction",
                 "forwarded", "history", "index", "index_feed", "index_source", "inspection",
                 "item_feed", "item_writes", "items", "maintenance", "operator", "purge",
                 "request_reads", "responses", "search", "summaries", "tasks", "tools")

    def __init__(self, conn: Any) -> None:
        self.operator = PgOperatorReads(conn)
        self.index = PgIndexProgress(conn)
        self.maintenance = PgMaintenance(conn)
        self.purge = PgPurge(conn)
        self.responses = PgResponseMap(conn)
        self.forwarded = PgForwardedLog(conn)
        self.capture = PgCaptureWrites(conn)
        self.history = PgHistoryReads(conn)
        self.item_feed = PgItemFeed(conn)
        self.summaries = PgSummaryForest(conn)
        self.items = PgItemReads(conn)
        self.index_source = PgIndexSource(conn)
        self.index_feed = PgIndexFeed(conn)
        self.search = PgSearchReads(conn)
        self.tools = PgToolReads(conn)
        self.assembly = PgAssemblyReads(conn)
        self.item_writes = PgItemWrites(conn)
        self.tasks = PgTaskWrites(conn)
        self.agent_memories = PgAgentMemoryWrites(conn)
        self.extraction = PgExtractionQueue(conn)
        self.request_reads = PgRequestReads(conn)
        self.inspection = PgInspection(conn)
        self.engine_writes = PgEngineWrites(conn)


if TYPE_CHECKING:  # mypy checks every group against its Protocol
    def _conforms(conn: Any) -> ResponseMap:
        return PgResponseMap(conn)

    def _conforms_tx(conn: Any) -> Tx:
        return PgTx(conn)
