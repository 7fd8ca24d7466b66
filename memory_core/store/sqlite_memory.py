"""SQLite implementations of :class:`~memory_core.store.api.ItemWrites`,
:class:`~memory_core.store.api.TaskWrites` and
:class:`~memory_core.store.api.AgentMemoryWrites`: the SQL of
:mod:`memory_core.items.writer`, statement for statement (the duplicate checks' queries
and the indexes they read: docs/evaluation/README.md, "The duplicate checks")."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memory_core.store.api import (
    AgentMemoryWrites,
    ItemWrites,
    Row,
    TaskWrites,
    check_agent_content,
)
from memory_core.store.sqlite_rows import IN_CHUNK, padded
from memory_core.store.sqlite_rows import marks as _marks

SPEAKER_SQL = "coalesce(json_extract(data, '$.speaker'), '')"
"""An item's speaker (the source message's ``name``; ``''`` for none) in SQL."""


def _hit(kinds: int) -> str:
    """The filter of a subject lookup's streams (after ``WHERE …``)."""
    return (f" AND tenant=? AND role=? AND +status='active' AND +kind IN ({_marks(kinds)})"
            " AND +subject IS NOT NULL AND +subject != ?"
            f" AND (instr(subject, ?) > 0 OR instr(?, subject) > 0) AND +{SPEAKER_SQL} = ?"
            " ORDER BY id DESC")


def _outbox(conn: sqlite3.Connection, kind: str, ref_id: int, op: str) -> None:
    conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES (?,?,?)", (kind, ref_id, op))


class SqliteItemWrites:
    """``memory_items`` as the writer's rules read and change them, with their
    revisions, subject keys, content terms and outbox rows."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def queue_index(self, kind: str, ref_id: int, op: str = "upsert") -> None:
        _outbox(self._c, kind, ref_id, op)

    def revision(self, item_id: int, field: str, old: Any, new: Any, reason: str,
                 now: float) -> None:
        self._c.execute(
            "INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new, reason)"
            " VALUES (?,?,?,?,?,?)",
            (item_id, now, field, None if old is None else str(old),
             None if new is None else str(new), reason),
        )

    # -- the duplicate checks' lookups ----------------------------------------------
    def subject_window_ids(self, tenant: str, role: str, kinds: Sequence[str],
                           subject: str, speaker: str, above: int, upto: int,
                           limit: int) -> list[int]:
        return [r[0] for r in self._c.execute(
            "SELECT id FROM memory_items WHERE id > ? AND id <= ?"
            " AND +tenant=? AND +role=? AND +status='active'"
            f" AND +kind IN ({_marks(len(kinds))}) AND subject IS NOT NULL"
            " AND (instr(subject, ?) > 0 OR instr(?, subject) > 0)"
            f" AND {SPEAKER_SQL} = ? ORDER BY id DESC LIMIT ?",
            (above, upto, tenant, role, *kinds, subject, subject, speaker, limit))]

    def same_subject(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        return (dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE tenant=? AND role=? AND subject=?"
            f" AND +status='active' AND +kind IN ({_marks(len(kinds))}) AND +{SPEAKER_SQL} = ?"
            " ORDER BY id DESC", (tenant, role, subject, *kinds, speaker)))

    def subject_hits(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        return (dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE 1" + _hit(len(kinds)),
            (tenant, role, *kinds, subject, subject, subject, speaker)))

    def subject_key_count(self, tenant: str, role: str, key: str, cap: int) -> int:
        return int(self._c.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM memory_item_subject_keys WHERE tenant=?"
            " AND role=? AND part=0 AND key=? LIMIT ?)", (tenant, role, key, cap)).fetchone()[0])

    def subject_hits_by_key(self, tenant: str, role: str, key: str, kinds: Sequence[str],
                            subject: str, speaker: str) -> Iterator[Row]:
        return (dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE id IN (SELECT item_id FROM"
            " memory_item_subject_keys WHERE tenant=? AND role=? AND part=0 AND key=?)"
            + _hit(len(kinds)).replace(" tenant=? AND role=?", " +tenant=? AND +role=?"),
            (tenant, role, key, tenant, role, *kinds, subject, subject, subject, speaker)))

    def subject_hits_among(self, tenant: str, role: str, subjects: Sequence[str],
                           kinds: Sequence[str], subject: str, speaker: str
                           ) -> Iterator[Row]:
        return (dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE subject IN (SELECT value FROM"
            " json_each(?))" + _hit(len(kinds)),
            (json.dumps(list(subjects)), tenant, role, *kinds, subject, subject, subject,
             speaker)))

    def reworded_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, value: Any, unit: str | None,
                            condition: str | None, scan: int, terms: Sequence[str],
                            least: int) -> Iterator[Row]:
        terms = padded(terms)
        return (dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE id IN (SELECT id FROM memory_items"
            " WHERE tenant=? AND role=? AND status='active'"
            f" AND kind IN ({_marks(len(kinds))})"
            f" AND {SPEAKER_SQL} = ? AND value IS ? AND unit IS ? AND condition IS ?"
            " ORDER BY id DESC LIMIT ?)"
            " AND (SELECT COUNT(*) FROM memory_item_terms t WHERE t.item_id=memory_items.id"
            f" AND t.term IN ({_marks(len(terms))})) >= ?"
            " ORDER BY id DESC",
            (tenant, role, *kinds, speaker, value, unit, condition, scan, *terms, least)))

    # -- reads by id -----------------------------------------------------------------
    def item(self, item_id: int) -> Row | None:
        row = self._c.execute("SELECT * FROM memory_items WHERE id=?", (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def item_sources(self, item_id: int) -> Row | None:
        row = self._c.execute("SELECT data, source_message_id FROM memory_items WHERE id=?",
                              (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def active_pair(self, a: int, b: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE id IN (?, ?) AND status='active'", (a, b))]

    def conflict_of(self, item_id: int) -> tuple[int | None] | None:
        row = self._c.execute("SELECT conflict_with FROM memory_items WHERE id=?",
                              (item_id,)).fetchone()
        return (row[0],) if row is not None else None

    def item_text(self, item_id: int) -> str | None:
        row = self._c.execute("SELECT text FROM memory_items WHERE id=?", (item_id,)).fetchone()
        return row[0] if row is not None else None

    def conflicting_active(self, item_id: int, besides: int) -> list[int]:
        return [r[0] for r in self._c.execute(
            "SELECT id FROM memory_items WHERE conflict_with=? AND status='active' AND id<>?",
            (item_id, besides))]

    def item_claim(self, item_id: int) -> Row | None:
        row = self._c.execute("SELECT status, subject, text FROM memory_items WHERE id=?",
                              (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def item_status(self, item_id: int) -> str | None:
        row = self._c.execute("SELECT status FROM memory_items WHERE id=?",
                              (item_id,)).fetchone()
        return row[0] if row is not None else None

    # -- writes ----------------------------------------------------------------------
    def insert_item(self, *, tenant: str, role: str, session: str, thread_id: int, kind: str,
                    subject: str | None, text: str, value: Any, value_text: str | None,
                    unit: str | None, condition: str | None, source_message_id: int | None,
                    evidence: str, lang: str | None, now: float, data: str) -> int:
        cur = self._c.execute(
            "INSERT INTO memory_items (tenant, role, session, thread_id, kind, subject, text,"
            " value, value_text, unit, condition, status, source_message_id, evidence, lang,"
            " created_at, updated_at, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,'active',?,?,?,?,?,?)",
            (tenant, role, session, thread_id, kind, subject, text, value, value_text, unit,
             condition, source_message_id, evidence, lang, now, now, data),
        )
        return int(cur.lastrowid or 0)

    def index_subject_keys(self, tenant: str, role: str, item_id: int, keys: Sequence[str],
                           anchor: str) -> None:
        self._c.executemany(
            "INSERT OR IGNORE INTO memory_item_subject_keys (tenant, role, part, key, item_id)"
            " VALUES (?,?,?,?,?)",
            [(tenant, role, 0, k, item_id) for k in keys] + [(tenant, role, 1, anchor, item_id)])

    def index_terms(self, tenant: str, role: str, item_id: int, terms: Sequence[str]) -> None:
        self._c.executemany(
            "INSERT OR IGNORE INTO memory_item_terms (tenant, role, term, item_id)"
            " VALUES (?,?,?,?)", [(tenant, role, t, item_id) for t in terms])

    def set_conflict(self, item_id: int, other_id: int) -> None:
        self._c.execute("UPDATE memory_items SET conflict_with=? WHERE id=?",
                        (other_id, item_id))

    def branch_messages(self, parent_id: int, keep_id: int) -> dict[int, int]:
        return {int(r[0]): int(r[1]) for r in self._c.execute(
            "WITH RECURSIVE sub(id, root) AS ("
            " SELECT id, id FROM messages WHERE parent_id=? AND id<>?"
            " AND msg_role IN ('user', 'tool')"
            " UNION ALL SELECT m.id, sub.root FROM messages m JOIN sub ON m.parent_id=sub.id)"
            " SELECT id, root FROM sub", (parent_id, keep_id))}

    def items_sourced_in(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[Row]:
        ids = sorted(set(message_ids))
        out: list[Row] = []
        for start in range(0, len(ids), IN_CHUNK):
            run = padded(ids[start:start + IN_CHUNK])
            out.extend(dict(r) for r in self._c.execute(
                "SELECT * FROM memory_items WHERE source_message_id IN"
                f" ({_marks(len(run))}) AND tenant=? AND role=? AND status='active'",
                (*run, tenant, role)))
        return sorted(out, key=lambda r: r["id"])

    def edited_items(self, tenant: str, role: str) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM memory_items WHERE tenant=? AND role=? AND status='edited'"
            " ORDER BY id", (tenant, role))]

    def set_status(self, item_id: int, status: str, superseded_by: int | None,
                   now: float) -> None:
        self._c.execute("UPDATE memory_items SET status=?, superseded_by=?, updated_at=?"
                        " WHERE id=?", (status, superseded_by, now, item_id))

    def link_edit(self, old_id: int, new_id: int | None) -> None:
        if new_id is None:
            self._c.execute("UPDATE memory_items SET supersedes=NULL WHERE supersedes=?",
                            (old_id,))
            self._c.execute("UPDATE memory_items SET superseded_by=NULL WHERE id=?", (old_id,))
            return
        self._c.execute("UPDATE memory_items SET superseded_by=? WHERE id=?", (new_id, old_id))
        self._c.execute("UPDATE memory_items SET supersedes=?, conflict_with=CASE WHEN"
                        " conflict_with=? THEN NULL ELSE conflict_with END WHERE id=?",
                        (old_id, old_id, new_id))

    def set_data(self, item_id: int, data: str) -> None:
        self._c.execute("UPDATE memory_items SET data=? WHERE id=?", (data, item_id))

    def mark_merged(self, item_id: int, into: int, now: float) -> None:
        self._c.execute("UPDATE memory_items SET status='merged', superseded_by=?, updated_at=?"
                        " WHERE id=?", (into, now, item_id))

    def touch(self, item_id: int, now: float) -> None:
        self._c.execute("UPDATE memory_items SET updated_at=? WHERE id=?", (now, item_id))

    def restate(self, item_id: int, *, now: float, message_id: int, thread_id: int,
                data: str) -> None:
        self._c.execute("UPDATE memory_items SET updated_at=?, source_message_id=?, thread_id=?,"
                        " data=? WHERE id=?", (now, message_id, thread_id, data, item_id))

    def mark_superseded(self, old_id: int, new_id: int, now: float) -> None:
        self._c.execute(
            "UPDATE memory_items SET status='superseded', superseded_by=?, updated_at=? WHERE id=?",
            (new_id, now, old_id))
        self._c.execute("UPDATE memory_items SET supersedes=? WHERE id=?", (old_id, new_id))

    def settle(self, item_id: int, new_id: int, now: float) -> None:
        self._c.execute("UPDATE memory_items SET status='superseded', superseded_by=?,"
                        " conflict_with=NULL, updated_at=? WHERE id=?", (new_id, now, item_id))

    def mark_retracted(self, item_id: int, now: float) -> None:
        self._c.execute("UPDATE memory_items SET status='retracted', updated_at=? WHERE id=?",
                        (now, item_id))

    def mark_restored(self, item_id: int, now: float) -> None:
        self._c.execute("UPDATE memory_items SET status='active', superseded_by=NULL,"
                        " updated_at=? WHERE id=?", (now, item_id))


class SqliteTaskWrites:
    """``task_state`` lines of a thread."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def supersede_goals(self, thread_id: int, keep_norm: str, now: float) -> None:
        self._c.execute(
            "UPDATE task_state SET status='superseded', updated_at=? WHERE thread_id=?"
            " AND label='goal' AND status='open' AND norm<>?", (now, thread_id, keep_norm))

    def open_todos(self, thread_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, text, label FROM task_state WHERE thread_id=?"
            " AND label IN ('todo','blocked')"
            " AND status='open'", (thread_id,)).fetchall()]

    def close(self, line_id: int, now: float) -> None:
        self._c.execute("UPDATE task_state SET status='done', updated_at=? WHERE id=?",
                        (now, line_id))

    def upsert_line(self, *, tenant: str, role: str, thread_id: int, label: str, text: str,
                    norm: str, message_id: int | None, now: float) -> None:
        self._c.execute(
            "INSERT INTO task_state (tenant, role, thread_id, label, text, norm, status,"
            " source_message_id, created_at, updated_at) VALUES (?,?,?,?,?,?,'open',?,?,?)"
            " ON CONFLICT(thread_id, label, norm) DO UPDATE SET status='open',"
            " updated_at=excluded.updated_at, source_message_id=excluded.source_message_id",
            (tenant, role, thread_id, label, text, norm, message_id, now, now))


class SqliteAgentMemoryWrites:
    """``agent_memories`` upserts and deletes, with their outbox rows."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def keys(self, tenant: str, category: str, role: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._c.execute(
            "SELECT key, title FROM agent_memories WHERE tenant=? AND category=? AND role=?",
            (tenant, category, role)).fetchall()]

    def find(self, tenant: str, category: str, key: str, role: str) -> int | None:
        row = self._c.execute(
            "SELECT id FROM agent_memories WHERE tenant=? AND category=? AND key=? AND role=?",
            (tenant, category, key, role)).fetchone()
        return int(row[0]) if row is not None else None

    def upsert(self, *, tenant: str, role: str, category: str, key: str, title: str,
               content: str, now: float) -> int:
        check_agent_content(content)
        self._c.execute(
            "INSERT INTO agent_memories (category, key, title, content, updated_at, role, tenant)"
            " VALUES (?,?,?,?,?,?,?) ON CONFLICT(tenant, category, key, role) DO UPDATE SET"
            " title=excluded.title, content=excluded.content, updated_at=excluded.updated_at,"
            " embedding=NULL",
            (category, key, title, content, now, role, tenant))
        found = self.find(tenant, category, key, role)
        assert found is not None  # just written
        _outbox(self._c, "agent_memory", found, "upsert")
        return found

    def delete(self, memory_id: int) -> None:
        self._c.execute("DELETE FROM agent_memories WHERE id=?", (memory_id,))
        _outbox(self._c, "agent_memory", memory_id, "delete")


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _items(conn: sqlite3.Connection) -> ItemWrites:
        return SqliteItemWrites(conn)

    def _tasks(conn: sqlite3.Connection) -> TaskWrites:
        return SqliteTaskWrites(conn)

    def _agent(conn: sqlite3.Connection) -> AgentMemoryWrites:
        return SqliteAgentMemoryWrites(conn)
