"""PostgreSQL implementations of :class:`~memory_core.store.api.ItemWrites`,
:class:`~memory_core.store.api.TaskWrites` and
:class:`~memory_core.store.api.AgentMemoryWrites`: the statements of
:mod:`memory_core.store.sqlite_memory` in PostgreSQL's dialect (see
:mod:`memory_core.store.pg_reads` for the translation rules).

Besides those rules: ``instr(a, b) > 0`` is ``strpos(a, b) > 0`` (both
case-sensitive) for subjects stored as they are, and Python's ``in`` for those
holding an escape pair (:mod:`memory_core.store.pg_text`); ``value IS ?`` is ``IS
NOT DISTINCT FROM``; ``json_each(?)`` of a list is ``= ANY(%s)``; SQLite's planner
hints (``+column``) are dropped. The duplicate checks' lazy lookups fetch their rows
in one round trip and hand out an iterator over them: each filters in SQL, so it
returns the matching rows only, and a server-side cursor would cost three round trips
where one does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memory_core.store.api import (
    AgentMemoryWrites,
    ItemWrites,
    Row,
    TaskWrites,
    check_agent_content,
)
from memory_core.store.pg_reads import SPEAKER, dicts
from memory_core.store.pg_text import Verbatim, plain_sql, sendable
from memory_core.store.pg_trips import defer


def _outbox(conn: Any, kind: str, ref_id: int, op: str) -> None:
    defer(conn, "INSERT INTO index_outbox (kind, ref_id, op) VALUES (%s, %s, %s)",
          (kind, ref_id, op))


_PLAIN = plain_sql("subject")
_OVERLAP = f"({_PLAIN} AND (strpos(subject, %s) > 0 OR strpos(%s, subject) > 0))"
"""SQL: a subject stored as it is that contains the subject looked up or is in it
(both ``Verbatim``); one holding an escape pair is decided by :func:`_overlaps`."""


def _overlap_sql(subject: str) -> tuple[str, list[Any]]:
    """``(sql, args)``: the rows whose subject may contain ``subject`` or be in it:
    those :data:`_OVERLAP` finds, and all holding an escape pair (``NOT plain``),
    which :func:`_overlaps` decides on the decoded text. A ``subject`` holding NUL or
    ``ESC`` cannot be sent as it is: then every row is left to :func:`_overlaps`."""
    if not sendable(subject):
        return "TRUE", []
    return f"({_OVERLAP} OR NOT {_PLAIN})", [Verbatim(subject), Verbatim(subject)]


def _overlaps(row_subject: str, subject: str) -> bool:
    """SQLite's ``instr(subject, ?) > 0 OR instr(?, subject) > 0``."""
    return subject in row_subject or row_subject in subject


def _hit(subject: str) -> tuple[str, list[Any]]:
    """The filter of a subject lookup's streams (after ``WHERE …``) and its
    arguments after the tenant, role and kinds."""
    sql, args = _overlap_sql(subject)
    return (" AND tenant = %s AND role = %s AND status = 'active' AND kind = ANY(%s)"
            f" AND subject IS NOT NULL AND subject <> %s AND {sql}"
            f" AND {SPEAKER} = %s ORDER BY id DESC"), [subject, *args]


def _hits(conn: Any, sql: str, args: list[Any], subject: str) -> Iterator[Row]:
    return iter([r for r in dicts(conn, sql, args) if _overlaps(r["subject"], subject)])


def _hit_args(tenant: str, role: str, kinds: Sequence[str], subject: str,
              speaker: str) -> tuple[str, list[Any]]:
    sql, args = _hit(subject)
    return sql, [tenant, role, list(kinds), *args, speaker]


class PgItemWrites:
    """``memory_items`` as the writer's rules read and change them, with their
    revisions, subject keys, content terms and outbox rows."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def queue_index(self, kind: str, ref_id: int, op: str = "upsert") -> None:
        _outbox(self._c, kind, ref_id, op)

    def revision(self, item_id: int, field: str, old: Any, new: Any, reason: str,
                 now: float) -> None:
        defer(self._c,
              "INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new, reason)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (item_id, now, field, None if old is None else str(old),
             None if new is None else str(new), reason))

    # -- the duplicate checks' lookups ----------------------------------------------
    def subject_window_ids(self, tenant: str, role: str, kinds: Sequence[str],
                           subject: str, speaker: str, above: int, upto: int,
                           limit: int) -> list[int]:
        window = ("FROM memory_items WHERE id > %s AND id <= %s AND tenant = %s"
                  " AND role = %s AND status = 'active' AND kind = ANY(%s)"
                  f" AND subject IS NOT NULL AND {SPEAKER} = %s")
        where = [above, upto, tenant, role, list(kinds), speaker]
        plain: list[int] = []
        if sendable(subject):  # the plain subjects matched in SQL, the others here
            plain = [r[0] for r in self._c.execute(
                f"SELECT id {window} AND {_OVERLAP} ORDER BY id DESC LIMIT %s",
                [*where, Verbatim(subject), Verbatim(subject), limit])]
            odd = self._c.execute(f"SELECT id, subject {window} AND NOT {_PLAIN}",
                                  where).fetchall()
        else:
            odd = self._c.execute(f"SELECT id, subject {window}", where).fetchall()
        found = plain + [int(i) for i, s in odd if _overlaps(s, subject)]
        return sorted(found, reverse=True)[:limit]

    def same_subject(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        return iter(dicts(
            self._c, "SELECT * FROM memory_items WHERE tenant = %s AND role = %s"
            " AND subject = %s AND status = 'active' AND kind = ANY(%s)"
            f" AND {SPEAKER} = %s ORDER BY id DESC",
            (tenant, role, subject, list(kinds), speaker)))

    def subject_hits(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        sql, args = _hit_args(tenant, role, kinds, subject, speaker)
        return _hits(self._c, "SELECT * FROM memory_items WHERE TRUE" + sql, args, subject)

    def subject_key_count(self, tenant: str, role: str, key: str, cap: int) -> int:
        return int(self._c.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM memory_item_subject_keys WHERE tenant = %s"
            " AND role = %s AND part = 0 AND key = %s LIMIT %s) k",
            (tenant, role, key, cap)).fetchone()[0])

    def subject_hits_by_key(self, tenant: str, role: str, key: str, kinds: Sequence[str],
                            subject: str, speaker: str) -> Iterator[Row]:
        sql, args = _hit_args(tenant, role, kinds, subject, speaker)
        return _hits(
            self._c, "SELECT * FROM memory_items WHERE id IN (SELECT item_id FROM"
            " memory_item_subject_keys WHERE tenant = %s AND role = %s AND part = 0"
            " AND key = %s)" + sql, [tenant, role, key, *args], subject)

    def subject_hits_among(self, tenant: str, role: str, subjects: Sequence[str],
                           kinds: Sequence[str], subject: str, speaker: str
                           ) -> Iterator[Row]:
        sql, args = _hit_args(tenant, role, kinds, subject, speaker)
        return _hits(self._c, "SELECT * FROM memory_items WHERE subject = ANY(%s)" + sql,
                     [list(subjects), *args], subject)

    def reworded_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, value: Any, unit: str | None,
                            condition: str | None, scan: int, terms: Sequence[str],
                            least: int) -> Iterator[Row]:
        return iter(dicts(
            self._c, "SELECT * FROM memory_items WHERE id IN (SELECT id FROM memory_items"
            " WHERE tenant = %s AND role = %s AND status = 'active' AND kind = ANY(%s)"
            f" AND {SPEAKER} = %s AND value IS NOT DISTINCT FROM %s::double precision"
            " AND unit IS NOT DISTINCT FROM %s::text"
            " AND condition IS NOT DISTINCT FROM %s::text ORDER BY id DESC LIMIT %s)"
            " AND (SELECT COUNT(*) FROM memory_item_terms t WHERE t.item_id = memory_items.id"
            " AND t.term = ANY(%s)) >= %s ORDER BY id DESC",
            (tenant, role, list(kinds), speaker, value, unit, condition, scan, list(terms),
             least)))

    # -- reads by id -----------------------------------------------------------------
    def item(self, item_id: int) -> Row | None:
        rows = dicts(self._c, "SELECT * FROM memory_items WHERE id = %s", (item_id,))
        return rows[0] if rows else None

    def item_sources(self, item_id: int) -> Row | None:
        rows = dicts(self._c, "SELECT data, source_message_id FROM memory_items WHERE id = %s",
                     (item_id,))
        return rows[0] if rows else None

    def active_pair(self, a: int, b: int) -> list[Row]:
        return dicts(self._c, "SELECT * FROM memory_items WHERE id IN (%s, %s)"
                     " AND status = 'active'", (a, b))

    def conflict_of(self, item_id: int) -> tuple[int | None] | None:
        row = self._c.execute("SELECT conflict_with FROM memory_items WHERE id = %s",
                              (item_id,)).fetchone()
        return (row[0],) if row is not None else None

    def item_text(self, item_id: int) -> str | None:
        row = self._c.execute("SELECT text FROM memory_items WHERE id = %s",
                              (item_id,)).fetchone()
        return row[0] if row is not None else None

    def conflicting_active(self, item_id: int, besides: int) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            "SELECT id FROM memory_items WHERE conflict_with = %s AND status = 'active'"
            " AND id <> %s", (item_id, besides))]

    def item_claim(self, item_id: int) -> Row | None:
        rows = dicts(self._c, "SELECT status, subject, text FROM memory_items WHERE id = %s",
                     (item_id,))
        return rows[0] if rows else None

    def item_status(self, item_id: int) -> str | None:
        row = self._c.execute("SELECT status FROM memory_items WHERE id = %s",
                              (item_id,)).fetchone()
        return row[0] if row is not None else None

    # -- writes ----------------------------------------------------------------------
    def insert_item(self, *, tenant: str, role: str, session: str, thread_id: int, kind: str,
                    subject: str | None, text: str, value: Any, value_text: str | None,
                    unit: str | None, condition: str | None, source_message_id: int | None,
                    evidence: str, lang: str | None, now: float, data: str) -> int:
        return int(self._c.execute(
            "INSERT INTO memory_items (tenant, role, session, thread_id, kind, subject, text,"
            " value, value_text, unit, condition, status, source_message_id, evidence, lang,"
            " created_at, updated_at, data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
            " %s, 'active', %s, %s, %s, %s, %s, %s) RETURNING id",
            (tenant, role, session, thread_id, kind, subject, text, value, value_text, unit,
             condition, source_message_id, evidence, lang, now, now, data)).fetchone()[0])

    def index_subject_keys(self, tenant: str, role: str, item_id: int, keys: Sequence[str],
                           anchor: str) -> None:
        # One statement (deferred: sent with the job's next one), rows in this order.
        defer(self._c,
              "INSERT INTO memory_item_subject_keys (tenant, role, part, key, item_id)"
              " SELECT %s, %s, u.part, u.key, %s FROM unnest(%s::int[], %s::text[])"
              " WITH ORDINALITY AS u(part, key, n) ORDER BY u.n ON CONFLICT DO NOTHING",
              (tenant, role, item_id, [0] * len(keys) + [1], [*keys, anchor]))

    def index_terms(self, tenant: str, role: str, item_id: int, terms: Sequence[str]) -> None:
        if not terms:
            return
        defer(self._c,
              "INSERT INTO memory_item_terms (tenant, role, term, item_id)"
              " SELECT %s, %s, u.term, %s FROM unnest(%s::text[]) WITH ORDINALITY"
              " AS u(term, n) ORDER BY u.n ON CONFLICT DO NOTHING",
              (tenant, role, item_id, list(terms)))

    def set_conflict(self, item_id: int, other_id: int) -> None:
        defer(self._c, "UPDATE memory_items SET conflict_with = %s WHERE id = %s",
                        (other_id, item_id))

    def branch_messages(self, parent_id: int, keep_id: int) -> dict[int, int]:
        return {int(r[0]): int(r[1]) for r in self._c.execute(
            "WITH RECURSIVE sub(id, root) AS ("
            " SELECT id, id FROM messages WHERE parent_id = %s AND id <> %s"
            " AND msg_role IN ('user', 'tool')"
            " UNION ALL SELECT m.id, sub.root FROM messages m JOIN sub ON m.parent_id = sub.id)"
            " SELECT id, root FROM sub", (parent_id, keep_id)).fetchall()}

    def items_sourced_in(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[Row]:
        return dicts(self._c, "SELECT * FROM memory_items WHERE source_message_id = ANY(%s)"
                     " AND tenant = %s AND role = %s AND status = 'active' ORDER BY id",
                     (sorted(set(message_ids)), tenant, role))

    def edited_items(self, tenant: str, role: str) -> list[Row]:
        return dicts(self._c, "SELECT * FROM memory_items WHERE tenant = %s AND role = %s"
                     " AND status = 'edited' ORDER BY id", (tenant, role))

    def set_status(self, item_id: int, status: str, superseded_by: int | None,
                   now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = %s, superseded_by = %s,"
              " updated_at = %s WHERE id = %s", (status, superseded_by, now, item_id))

    def link_edit(self, old_id: int, new_id: int | None) -> None:
        if new_id is None:
            defer(self._c, "UPDATE memory_items SET supersedes = NULL WHERE supersedes = %s",
                  (old_id,))
            defer(self._c, "UPDATE memory_items SET superseded_by = NULL WHERE id = %s",
                  (old_id,))
            return
        defer(self._c, "UPDATE memory_items SET superseded_by = %s WHERE id = %s",
              (new_id, old_id))
        defer(self._c, "UPDATE memory_items SET supersedes = %s, conflict_with = CASE WHEN"
              " conflict_with = %s THEN NULL ELSE conflict_with END WHERE id = %s",
              (old_id, old_id, new_id))

    def set_data(self, item_id: int, data: str) -> None:
        defer(self._c, "UPDATE memory_items SET data = %s WHERE id = %s", (data, item_id))

    def mark_merged(self, item_id: int, into: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = 'merged', superseded_by = %s,"
                        " updated_at = %s WHERE id = %s", (into, now, item_id))

    def touch(self, item_id: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET updated_at = %s WHERE id = %s", (now, item_id))

    def restate(self, item_id: int, *, now: float, message_id: int, thread_id: int,
                data: str) -> None:
        defer(self._c, "UPDATE memory_items SET updated_at = %s, source_message_id = %s,"
                        " thread_id = %s, data = %s WHERE id = %s",
                        (now, message_id, thread_id, data, item_id))

    def mark_superseded(self, old_id: int, new_id: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = 'superseded', superseded_by = %s,"
                        " updated_at = %s WHERE id = %s", (new_id, now, old_id))
        defer(self._c, "UPDATE memory_items SET supersedes = %s WHERE id = %s",
                        (old_id, new_id))

    def settle(self, item_id: int, new_id: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = 'superseded', superseded_by = %s,"
                        " conflict_with = NULL, updated_at = %s WHERE id = %s",
                        (new_id, now, item_id))

    def mark_retracted(self, item_id: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = 'retracted', updated_at = %s"
                        " WHERE id = %s", (now, item_id))

    def mark_restored(self, item_id: int, now: float) -> None:
        defer(self._c, "UPDATE memory_items SET status = 'active', superseded_by = NULL,"
                        " updated_at = %s WHERE id = %s", (now, item_id))


class PgTaskWrites:
    """``task_state`` lines of a thread."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def supersede_goals(self, thread_id: int, keep_norm: str, now: float) -> None:
        defer(self._c,
              "UPDATE task_state SET status = 'superseded', updated_at = %s WHERE thread_id = %s"
            " AND label = 'goal' AND status = 'open' AND norm <> %s", (now, thread_id, keep_norm))

    def open_todos(self, thread_id: int) -> list[Row]:
        return dicts(self._c, "SELECT id, text, label FROM task_state WHERE thread_id = %s"
                     " AND label IN ('todo', 'blocked') AND status = 'open' ORDER BY id",
                     (thread_id,))

    def close(self, line_id: int, now: float) -> None:
        defer(self._c, "UPDATE task_state SET status = 'done', updated_at = %s WHERE id = %s",
                        (now, line_id))

    def upsert_line(self, *, tenant: str, role: str, thread_id: int, label: str, text: str,
                    norm: str, message_id: int | None, now: float) -> None:
        defer(self._c,
              "INSERT INTO task_state (tenant, role, thread_id, label, text, norm, status,"
            " source_message_id, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, 'open', %s, %s, %s)"
            " ON CONFLICT (thread_id, label, norm) DO UPDATE SET status = 'open',"
            " updated_at = EXCLUDED.updated_at,"
            " source_message_id = EXCLUDED.source_message_id",
            (tenant, role, thread_id, label, text, norm, message_id, now, now))


class PgAgentMemoryWrites:
    """``agent_memories`` upserts and deletes, with their outbox rows."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def keys(self, tenant: str, category: str, role: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._c.execute(
            "SELECT key, title FROM agent_memories WHERE tenant = %s AND category = %s"
            " AND role = %s ORDER BY id", (tenant, category, role))]

    def find(self, tenant: str, category: str, key: str, role: str) -> int | None:
        row = self._c.execute(
            "SELECT id FROM agent_memories WHERE tenant = %s AND category = %s AND key = %s"
            " AND role = %s", (tenant, category, key, role)).fetchone()
        return int(row[0]) if row is not None else None

    def upsert(self, *, tenant: str, role: str, category: str, key: str, title: str,
               content: str, now: float) -> int:
        check_agent_content(content)
        found = int(self._c.execute(
            "INSERT INTO agent_memories (category, key, title, content, updated_at, role,"
            " tenant) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (tenant, category, key, role) DO UPDATE SET"
            " title = EXCLUDED.title, content = EXCLUDED.content,"
            " updated_at = EXCLUDED.updated_at, embedding = NULL RETURNING id",
            (category, key, title, content, now, role, tenant)).fetchone()[0])
        _outbox(self._c, "agent_memory", found, "upsert")
        return found

    def delete(self, memory_id: int) -> None:
        self._c.execute("DELETE FROM agent_memories WHERE id = %s", (memory_id,))
        _outbox(self._c, "agent_memory", memory_id, "delete")


if TYPE_CHECKING:  # mypy checks the groups against their Protocols
    def _items(conn: Any) -> ItemWrites:
        return PgItemWrites(conn)

    def _tasks(conn: Any) -> TaskWrites:
        return PgTaskWrites(conn)

    def _agent(conn: Any) -> AgentMemoryWrites:
        return PgAgentMemoryWrites(conn)
