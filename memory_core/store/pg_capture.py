"""PostgreSQL implementation of :class:`~memory_core.store.api.CaptureWrites`
(tables of migration 2 in :mod:`memory_core.store.pg_migrations`).

The same statements as :mod:`memory_core.store.sqlite_capture`, one round trip
each, with ``RETURNING id`` where SQLite reads ``lastrowid``. Behaviour equals the
SQLite group (tested on both backends). Several replicas capturing one scope at
once stay idempotent because :class:`~memory_core.store.pg.PgStore` runs every
write batch under one advisory lock: a capture's node lookups see whatever another
replica committed before it (``UNIQUE (tenant, role, session, node_key)`` backs
that up).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memory_core.store.api import CaptureWrites, MessageRow, NodeReads, NodeRef, Row
from memory_core.store.pg_trips import defer, pipelined

_INSERT_MESSAGE = (
    "WITH m AS (INSERT INTO messages (tenant, role, session, thread_id, node_key,"
    " parent_key, parent_id, depth, msg_role, kind, text, raw_json, content_hash,"
    " tokens, created_at, hidden, request_id, tz) VALUES (%s, %s, %s, %s, %s, %s,"
    " {parent}, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id),"
    " o AS (INSERT INTO index_outbox (kind, ref_id, op)"
    " SELECT 'message', id, 'upsert' FROM m)"
    " SELECT id FROM m")
"""One message and its outbox row: one statement."""

_INSERT_CHILD = _INSERT_MESSAGE.format(
    parent="(SELECT id FROM messages WHERE tenant = %s AND role = %s AND session = %s"
           " AND node_key = %s)")
"""A message whose parent is found by its key (the row inserted just before it, in
the same pipeline)."""



_PIPELINED_CHAIN_MAX = 16
"""The longest chain :meth:`PgCaptureWrites.insert_chain` sends as one pipeline
(a request's new turn with its tool rounds)."""

class PgCaptureWrites:
    """``messages``, ``threads``, ``splices``, ``events`` (and the message outbox)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def node(self, tenant: str, role: str, session: str, key: str) -> NodeRef | None:
        row = self._c.execute(
            "SELECT id, thread_id, depth FROM messages WHERE tenant = %s AND role = %s"
            " AND session = %s AND node_key = %s", (tenant, role, session, key)).fetchone()
        return NodeRef(int(row[0]), int(row[1]), int(row[2])) if row is not None else None

    def redacted_children(self, tenant: str, role: str, session: str,
                          parent_id: int | None, placeholder: str
                          ) -> list[tuple[str, str, str]]:
        return [(str(r[0]), str(r[1]), str(r[2])) for r in self._c.execute(
            "SELECT node_key, text, msg_role FROM messages WHERE tenant = %s AND role = %s"
            " AND session = %s AND parent_id IS NOT DISTINCT FROM %s"
            " AND strpos(text, %s) > 0 ORDER BY id",
            (tenant, role, session, parent_id, placeholder))]

    def nodes(self, tenant: str, role: str, session: str, keys: Sequence[str]
              ) -> dict[str, NodeRef]:
        return {r[3]: NodeRef(int(r[0]), int(r[1]), int(r[2])) for r in self._c.execute(
            "SELECT id, thread_id, depth, node_key FROM messages WHERE tenant = %s"
            " AND role = %s AND session = %s AND node_key = ANY(%s)",
            (tenant, role, session, list(dict.fromkeys(keys))))}

    def node_reads(self, tenant: str, role: str, session: str, keys: Sequence[str],
                   thread_id: int | None = None) -> NodeReads:
        nodes: dict[str, NodeRef] = {}
        heads: dict[int, Row] = {}
        thread: Row | None = None
        for r in self._c.execute(
                "SELECT m.id, m.thread_id, m.depth, m.node_key, h.id, h.updated_at"
                " FROM messages m LEFT JOIN LATERAL (SELECT t.id, t.updated_at FROM threads t"
                "  WHERE t.head_message_id = m.id AND t.tenant = m.tenant AND t.role = m.role"
                "  AND t.session = m.session ORDER BY t.id LIMIT 1) h ON true"
                " WHERE m.tenant = %s AND m.role = %s AND m.session = %s"
                " AND m.node_key = ANY(%s)"
                " UNION ALL SELECT head_message_id, root_message_id, NULL, NULL, NULL, NULL"
                " FROM threads WHERE id = %s",
                (tenant, role, session, list(dict.fromkeys(keys)), thread_id)):
            if r[3] is None:
                thread = {"head_message_id": r[0], "root_message_id": r[1]}
                continue
            nodes[r[3]] = NodeRef(int(r[0]), int(r[1]), int(r[2]))
            if r[4] is not None:
                heads[int(r[0])] = {"id": int(r[4]), "updated_at": r[5]}
        return NodeReads(nodes, heads, thread)

    def path_ids(self, message_id: int) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            "WITH RECURSIVE chain(id, parent_id, depth) AS ("
            " SELECT id, parent_id, depth FROM messages WHERE id = %s"
            " UNION ALL SELECT p.id, p.parent_id, p.depth FROM chain CROSS JOIN LATERAL ("
            "  SELECT m.id, m.parent_id, m.depth FROM messages m"
            "  WHERE m.id = chain.parent_id LIMIT 1) p)"
            " SELECT id FROM chain ORDER BY depth", (message_id,))]
        # One primary-key lookup per step (the LIMIT 1 keeps the planner from a join
        # that scans messages at every step: 9 ms at depth 200 on a table not yet
        # analyzed, docs/evaluation/store_backends_turn.py), as pg_ops.CHAIN_SQL.

    def insert_message(self, row: MessageRow) -> int:
        # One round trip: the outbox row is written by the same statement.
        got = self._c.execute(_INSERT_MESSAGE.format(parent="%s"), tuple(row)).fetchone()
        return int(got[0])

    def insert_chain(self, rows: Sequence[MessageRow]) -> list[int]:
        if len(rows) <= 1 or len(rows) > _PIPELINED_CHAIN_MAX:
            # A long chain (a backfill of a whole history) one row at a time, each
            # with its parent's id: the pipelined lookup by key is planned before the
            # table has statistics and scanned the scope once per row (quadratic).
            ids: list[int] = []
            for row in rows:
                ids.append(self.insert_message(row._replace(parent_id=ids[-1]) if ids
                                               else row))
            return ids
        # One pipeline, one round trip: each child finds its parent (the row before
        # it, inserted by the statement before) by its key.
        conn = self._c
        cursors = []
        with pipelined(conn):
            for n, row in enumerate(rows):
                cur = conn.cursor()
                if n == 0:
                    cur.execute(_INSERT_MESSAGE.format(parent="%s"), tuple(row))
                else:
                    prev = rows[n - 1]
                    head = tuple(row[:6])
                    cur.execute(_INSERT_CHILD, (*head, prev.tenant, prev.role, prev.session,
                                                prev.node_key, *tuple(row[7:])))
                cursors.append(cur)
        return [int(cur.fetchone()[0]) for cur in cursors]

    def new_thread(self, tenant: str, role: str, session: str, now: float,
                   parent_thread_id: int | None, fork_message_id: int | None) -> int:
        got = self._c.execute(
            "INSERT INTO threads (tenant, role, session, parent_thread_id, fork_message_id,"
            " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (tenant, role, session, parent_thread_id, fork_message_id, now, now)).fetchone()
        return int(got[0])

    def thread_with_head(self, tenant: str, role: str, session: str, head_id: int
                         ) -> Row | None:
        row = self._c.execute(
            "SELECT id, updated_at FROM threads WHERE head_message_id = %s AND tenant = %s"
            " AND role = %s AND session = %s ORDER BY id LIMIT 1",
            (head_id, tenant, role, session)).fetchone()
        return {"id": int(row[0]), "updated_at": row[1]} if row is not None else None

    def thread_updated_at(self, thread_id: int) -> float | None:
        row = self._c.execute("SELECT updated_at FROM threads WHERE id = %s",
                              (thread_id,)).fetchone()
        return float(row[0]) if row is not None else None

    def thread_ends(self, thread_id: int) -> Row | None:
        row = self._c.execute(
            "SELECT head_message_id, root_message_id FROM threads WHERE id = %s",
            (thread_id,)).fetchone()
        return ({"head_message_id": row[0], "root_message_id": row[1]}
                if row is not None else None)

    def message_depth(self, message_id: int | None) -> int | None:
        if message_id is None:
            return None
        row = self._c.execute("SELECT depth FROM messages WHERE id = %s",
                              (message_id,)).fetchone()
        return int(row[0]) if row is not None else None

    def fill_thread_root(self, thread_id: int, root_id: int | None) -> None:
        defer(self._c,
              "UPDATE threads SET root_message_id = COALESCE(root_message_id, %s) WHERE id = %s",
              (root_id, thread_id))

    def touch_thread(self, thread_id: int, now: float) -> None:
        defer(self._c, "UPDATE threads SET updated_at = %s WHERE id = %s", (now, thread_id))

    def extend_thread(self, thread_id: int, head_id: int | None, now: float,
                      user_turn: bool) -> None:
        defer(self._c,
              "UPDATE threads SET head_message_id = %s, updated_at = %s,"
              " last_user_at = CASE WHEN %s THEN %s ELSE last_user_at END WHERE id = %s",
              (head_id, now, user_turn, now, thread_id))

    def set_head(self, thread_id: int, head_id: int | None, now: float) -> None:
        defer(self._c, "UPDATE threads SET head_message_id = %s, updated_at = %s"
                       " WHERE id = %s", (head_id, now, thread_id))

    def advance_head(self, thread_id: int, head_id: int, now: float,
                     from_head: int | None) -> None:
        defer(self._c,
              "UPDATE threads SET head_message_id = %s, updated_at = %s WHERE id = %s"
              " AND (head_message_id = %s OR head_message_id IS NULL)",
              (head_id, now, thread_id, from_head))

    def save_splice(self, message_id: int, tenant: str, role: str, messages: str,
                    hidden_ids: str) -> None:
        defer(self._c,
              "INSERT INTO splices (message_id, tenant, role, messages, hidden_ids)"
              " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (message_id) DO UPDATE SET"
              " tenant = EXCLUDED.tenant, role = EXCLUDED.role,"
              " messages = EXCLUDED.messages, hidden_ids = EXCLUDED.hidden_ids",
              (message_id, tenant, role, messages, hidden_ids))

    def insert_event(self, request_id: str | None, tenant: str | None, role: str | None,
                     thread_id: int | None, kind: str, created_at: float, data: str
                     ) -> int:
        got = self._c.execute(
            "INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (request_id, tenant, role, thread_id, kind, created_at, data)).fetchone()
        return int(got[0])

    def add_event(self, request_id: str | None, tenant: str | None, role: str | None,
                  thread_id: int | None, kind: str, created_at: float, data: str) -> None:
        defer(self._c,
              "INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
              " VALUES (%s, %s, %s, %s, %s, %s, %s)",
              (request_id, tenant, role, thread_id, kind, created_at, data))


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: Any) -> CaptureWrites:
        return PgCaptureWrites(conn)
