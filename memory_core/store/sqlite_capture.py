"""SQLite implementations of :class:`~memory_core.store.api.CaptureWrites` (the SQL
of :mod:`memory_core.capture.evidence`, statement for statement: the request path's hottest
writes, one statement per operation, no extra round) and of
:class:`~memory_core.store.api.HistoryReads` (what the message and summary caches
read), and of :class:`~memory_core.store.api.ItemFeed` (the active-item cache's)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_core.store.api import (
    ITEM_ROW_COLUMNS,
    CaptureWrites,
    HistoryReads,
    ItemFeed,
    MessageRow,
    NodeReads,
    NodeRef,
    Row,
)
from memory_core.store.sqlite_rows import IN_CHUNK, padded, rows_by_ids

_CHUNK = IN_CHUNK


class SqliteCaptureWrites:
    """``messages``, ``threads``, ``splices``, ``events`` (and the message outbox)."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def node(self, tenant: str, role: str, session: str, key: str) -> NodeRef | None:
        row = self._c.execute(
            "SELECT id, thread_id, depth FROM messages"
            " WHERE tenant=? AND role=? AND session=? AND node_key=?",
            (tenant, role, session, key),
        ).fetchone()
        return NodeRef(row[0], row[1], row[2]) if row is not None else None

    def redacted_children(self, tenant: str, role: str, session: str,
                          parent_id: int | None, placeholder: str
                          ) -> list[tuple[str, str, str]]:
        return [(str(r[0]), str(r[1]), str(r[2])) for r in self._c.execute(
            "SELECT node_key, text, msg_role FROM messages WHERE tenant=? AND role=? AND"
            " session=? AND parent_id IS ? AND instr(text, ?) > 0 ORDER BY id",
            (tenant, role, session, parent_id, placeholder))]

    def nodes(self, tenant: str, role: str, session: str, keys: Sequence[str]
              ) -> dict[str, NodeRef]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, NodeRef] = {}
        for start in range(0, len(wanted), IN_CHUNK):
            run = wanted[start:start + IN_CHUNK]
            out.update((r[3], NodeRef(r[0], r[1], r[2])) for r in self._c.execute(
                "SELECT id, thread_id, depth, node_key FROM messages"
                " WHERE tenant=? AND role=? AND session=? AND node_key IN"
                f" ({','.join('?' * len(run))})", (tenant, role, session, *run)))
        return out

    def node_reads(self, tenant: str, role: str, session: str, keys: Sequence[str],
                   thread_id: int | None = None) -> NodeReads:
        nodes = self.nodes(tenant, role, session, keys)
        heads: dict[int, Row] = {}
        ids = sorted({ref.id for ref in nodes.values()})
        for start in range(0, len(ids), IN_CHUNK):
            run = ids[start:start + IN_CHUNK]
            for r in self._c.execute(
                    "SELECT head_message_id, id, updated_at FROM threads WHERE tenant=?"
                    " AND role=? AND session=? AND head_message_id IN"
                    f" ({','.join('?' * len(run))}) ORDER BY id",
                    (tenant, role, session, *run)):
                heads.setdefault(int(r[0]), {"id": r[1], "updated_at": r[2]})
        thread = self.thread_ends(thread_id) if thread_id is not None else None
        return NodeReads(nodes, heads, thread)

    def path_ids(self, message_id: int) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            "WITH RECURSIVE chain(id, parent_id, depth) AS ("
            " SELECT id, parent_id, depth FROM messages WHERE id=?"
            " UNION ALL SELECT m.id, m.parent_id, m.depth FROM messages m"
            " JOIN chain c ON m.id=c.parent_id)"
            " SELECT id FROM chain ORDER BY depth",
            (message_id,),
        ).fetchall()]

    def insert_message(self, row: MessageRow) -> int:
        cur = self._c.execute(
            "INSERT INTO messages (tenant, role, session, thread_id, node_key, parent_key,"
            " parent_id, depth, msg_role, kind, text, raw_json, content_hash, tokens,"
            " created_at, hidden, request_id, tz) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            row,
        )
        mid = int(cur.lastrowid or 0)
        self._c.execute(
            "INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?, 'upsert')",
            (mid,))
        return mid

    def insert_chain(self, rows: Sequence[MessageRow]) -> list[int]:
        ids: list[int] = []
        for row in rows:
            ids.append(self.insert_message(row._replace(parent_id=ids[-1]) if ids else row))
        return ids

    def new_thread(self, tenant: str, role: str, session: str, now: float,
                   parent_thread_id: int | None, fork_message_id: int | None) -> int:
        cur = self._c.execute(
            "INSERT INTO threads (tenant, role, session, parent_thread_id, fork_message_id,"
            " created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
            (tenant, role, session, parent_thread_id, fork_message_id, now, now),
        )
        return int(cur.lastrowid or 0)

    def thread_with_head(self, tenant: str, role: str, session: str, head_id: int
                         ) -> Row | None:
        row = self._c.execute(
            "SELECT id, updated_at FROM threads WHERE head_message_id=? AND tenant=? AND role=?"
            " AND session=? ORDER BY id LIMIT 1",
            (head_id, tenant, role, session),
        ).fetchone()
        return {"id": row[0], "updated_at": row[1]} if row is not None else None

    def thread_updated_at(self, thread_id: int) -> float | None:
        row = self._c.execute("SELECT updated_at FROM threads WHERE id=?",
                              (thread_id,)).fetchone()
        return float(row[0]) if row is not None else None

    def thread_ends(self, thread_id: int) -> Row | None:
        row = self._c.execute(
            "SELECT head_message_id, root_message_id FROM threads WHERE id=?", (thread_id,)
        ).fetchone()
        return dict(row) if row is not None else None

    def message_depth(self, message_id: int | None) -> int | None:
        row = self._c.execute("SELECT depth FROM messages WHERE id=?",
                              (message_id,)).fetchone()
        return int(row[0]) if row is not None else None

    def fill_thread_root(self, thread_id: int, root_id: int | None) -> None:
        self._c.execute(
            "UPDATE threads SET root_message_id=COALESCE(root_message_id, ?) WHERE id=?",
            (root_id, thread_id))

    def touch_thread(self, thread_id: int, now: float) -> None:
        self._c.execute("UPDATE threads SET updated_at=? WHERE id=?", (now, thread_id))

    def extend_thread(self, thread_id: int, head_id: int | None, now: float,
                      user_turn: bool) -> None:
        self._c.execute(
            "UPDATE threads SET head_message_id=?, updated_at=?,"
            " last_user_at=CASE WHEN ? THEN ? ELSE last_user_at END WHERE id=?",
            (head_id, now, user_turn, now, thread_id))

    def set_head(self, thread_id: int, head_id: int | None, now: float) -> None:
        self._c.execute("UPDATE threads SET head_message_id=?, updated_at=? WHERE id=?",
                        (head_id, now, thread_id))

    def advance_head(self, thread_id: int, head_id: int, now: float,
                     from_head: int | None) -> None:
        self._c.execute(
            "UPDATE threads SET head_message_id=?, updated_at=? WHERE id=?"
            " AND (head_message_id=? OR head_message_id IS NULL)",
            (head_id, now, thread_id, from_head))

    def save_splice(self, message_id: int, tenant: str, role: str, messages: str,
                    hidden_ids: str) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO splices (message_id, tenant, role, messages, hidden_ids)"
            " VALUES (?,?,?,?,?)", (message_id, tenant, role, messages, hidden_ids))

    def insert_event(self, request_id: str | None, tenant: str | None, role: str | None,
                     thread_id: int | None, kind: str, created_at: float, data: str
                     ) -> int:
        cur = self._c.execute(
            "INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
            " VALUES (?,?,?,?,?,?,?)",
            (request_id, tenant, role, thread_id, kind, created_at, data))
        return int(cur.lastrowid or 0)

    def add_event(self, request_id: str | None, tenant: str | None, role: str | None,
                  thread_id: int | None, kind: str, created_at: float, data: str) -> None:
        self.insert_event(request_id, tenant, role, thread_id, kind, created_at, data)


class SqliteHistoryReads:
    """``messages`` outlines and ``summary_nodes``, one query per 900 ids."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def message_outlines(self, ids: Sequence[int]) -> list[tuple[int, str | None, int | None]]:
        return [(r[0], r[1], r[2]) for r in rows_by_ids(
            self._c, "SELECT id, msg_role, tokens FROM messages WHERE id IN ({marks})", ids)]

    def active_summaries(self, tenant: str, role: str) -> dict[int, int | None]:
        return {int(r[0]): r[1] for r in self._c.execute(
            "SELECT id, parent_id FROM summary_nodes WHERE tenant=? AND role=?"
            " AND status='active'", (tenant, role))}

    def summary_rows(self, ids: Sequence[int]) -> list[Row]:
        return [dict(r) for r in rows_by_ids(
            self._c, "SELECT id, level, message_ids, text, tokens, source_tokens, model,"
            " parent_id FROM summary_nodes WHERE id IN ({marks})", ids)]

    def path_messages(self, ids: Sequence[int]) -> list[Row]:
        return [dict(r) for r in rows_by_ids(
            self._c, "SELECT id, msg_role, text, tokens, raw_json, created_at FROM messages"
            " WHERE id IN ({marks})", ids)]

    def message_links(self, ids: Sequence[int]) -> list[Row]:
        return [dict(r) for r in rows_by_ids(
            self._c, "SELECT id, parent_id, msg_role, text FROM messages"
            " WHERE id IN ({marks})", ids)]

    def sent_as_history(self, message_id: int) -> bool:
        return self._c.execute(
            "SELECT 1 FROM messages c JOIN messages m ON m.id=c.parent_id"
            " WHERE c.parent_id=? AND c.kind='request' AND c.request_id=m.request_id"
            " LIMIT 1", (message_id,)).fetchone() is not None

    def next_turns(self, ids: Sequence[int]) -> list[Row]:
        return [dict(r) for r in rows_by_ids(
            self._c, "SELECT parent_id, msg_role, text FROM messages"
            " WHERE parent_id IN ({marks})", ids)]

    def message_evidence(self, ids: Sequence[int]) -> tuple[list[Row], list[Row]]:
        items: list[Row] = []
        todos: list[Row] = []
        for start in range(0, len(ids), _CHUNK):
            chunk = padded(ids[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            items += (dict(r) for r in self._c.execute(
                f"SELECT id, kind, text, status, source_message_id FROM memory_items"
                f" WHERE source_message_id IN ({marks}) ORDER BY id", chunk))
            todos += (dict(r) for r in self._c.execute(
                f"SELECT label, text, status, source_message_id FROM task_state"
                f" WHERE source_message_id IN ({marks}) ORDER BY id", chunk))
        return items, todos


_ITEM_COLUMNS = ", ".join(ITEM_ROW_COLUMNS)


class SqliteItemFeed:
    """``memory_items`` and ``memory_item_changes`` (filled by triggers, m004)."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def change_position(self) -> int:
        return int(self._c.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM memory_item_changes").fetchone()[0])

    def oldest_change(self) -> int | None:
        oldest = self._c.execute("SELECT MIN(seq) FROM memory_item_changes").fetchone()[0]
        return int(oldest) if oldest is not None else None

    def changes_after(self, position: int, limit: int) -> list[tuple[int, int]]:
        return [(int(r[0]), int(r[1])) for r in self._c.execute(
            "SELECT seq, item_id FROM memory_item_changes WHERE seq > ? ORDER BY seq LIMIT ?",
            (position, limit))]

    def changes_since(self, position: int, limit: int
                      ) -> tuple[int | None, list[tuple[int, int]]]:
        return self.oldest_change(), self.changes_after(position, limit)

    def active_items(self, tenant: str, role: str) -> list[Row]:
        return [_item(r) for r in self._c.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE tenant=? AND role=?"
            " AND status='active'", (tenant, role))]

    def items_in_scope(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        ids = padded(ids)
        marks = ",".join("?" * len(ids))
        # By primary key (``+``: not through a scope index, which would read every
        # item of the scope once the list is long enough for the planner to prefer it).
        return [_item(r) for r in self._c.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE id IN ({marks})"
            " AND +tenant=? AND +role=?", (*ids, tenant, role))]

    def prune_changes(self, keep: int) -> int:
        cur = self._c.execute(
            "DELETE FROM memory_item_changes WHERE seq <="
            " (SELECT COALESCE(MAX(seq), 0) FROM memory_item_changes) - ?", (keep,))
        return cur.rowcount


def _item(row: sqlite3.Row) -> Row:
    return dict(zip(ITEM_ROW_COLUMNS, row, strict=True))


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _conforms(conn: sqlite3.Connection) -> tuple[CaptureWrites, HistoryReads, ItemFeed]:
        return SqliteCaptureWrites(conn), SqliteHistoryReads(conn), SqliteItemFeed(conn)
