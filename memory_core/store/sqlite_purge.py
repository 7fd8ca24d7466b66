"""SQLite implementation of :class:`memory_core.store.api.Purge`.

The scope's ids are first collected into a temporary table, links from rows that
stay to rows that go are cut (foreign keys), then the rows are deleted table by
table inside one savepoint with ``secure_delete`` on, so deleted pages are zeroed.
A dry run does the same work and rolls the savepoint back, so its counts are exact.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from memory_core.store.api import OUTBOX_KINDS, drop_purged_sources, orphan_successor
from memory_core.store.purge_copies import find_copies
from memory_core.store.redaction import redact_rows


_Counts = TypeVar("_Counts", dict[str, Any], dict[str, Any] | None)


def _clause(**filters: str | None) -> tuple[str, list[Any]]:
    parts, args = [], []
    for col, val in filters.items():
        if val is not None:
            parts.append(f"{col}=?")
            args.append(val)
    return " AND ".join(parts) or "1=1", args


class SqlitePurge:
    """Purge on the writer's connection (inside a write job)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def delete_scope(self, *, tenant: str | None, role: str | None, session: str | None,
                     dry_run: bool, thread: int | None = None,
                     scrub_copies: bool = False) -> dict[str, Any]:
        return _atomic(self._c, "purge", dry_run,
                       lambda: _delete(self._c, tenant, role, session, thread, scrub_copies))

    def record(self, created_at: float, data: str) -> None:
        self._c.execute(
            "INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
            " VALUES (NULL, NULL, NULL, NULL, 'purge', ?, ?)", (created_at, data))

    def redact_message(self, message_id: int, *, tenant: str | None, role: str | None,
                       dry_run: bool, session: str | None = None) -> dict[str, Any] | None:
        conn = self._c
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS purge_ids"
                     " (kind TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (kind, id))")
        conn.execute("DELETE FROM temp.purge_ids")
        return _atomic(conn, "redact", dry_run, lambda: redact_rows(
            conn, str, "temp.purge_ids", message_id, tenant=tenant, role=role,
            session=session, keep_restated=_keep_restated, restore_orphans=_restore_orphans))


def _atomic(conn: sqlite3.Connection, name: str, dry_run: bool,
            work: Callable[[], _Counts]) -> _Counts:
    """Run ``work`` in savepoint ``name`` with ``secure_delete`` on (freed pages zeroed)
    and return its counts; with ``dry_run`` roll it back after counting. Any error rolls
    it back and is raised."""
    secure = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute(f"SAVEPOINT {name}")
    try:
        counts = work()
        if dry_run:
            conn.execute(f"ROLLBACK TO {name}")
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    finally:
        conn.execute(f"PRAGMA secure_delete={int(secure)}")
    conn.execute(f"RELEASE {name}")
    return counts


def _keep_restated(conn: sqlite3.Connection, items: str, messages: str) -> None:
    """Items of the scope that a message outside it also stated (``data.sources``: a
    fact restated in another session) stay: each is taken off the purge list and
    cites its newest surviving source (its thread and session too), with only the
    surviving sources listed, a ``sources`` revision and an index upsert."""
    now = time.time()
    for item_id, data in conn.execute(
            f"SELECT id, data FROM memory_items WHERE id IN {items}"
            " AND data LIKE '%\"sources\"%' ORDER BY id").fetchall():
        value = orjson.loads(data or "{}")
        srcs = value.get("sources") if isinstance(value, dict) else None
        if not isinstance(srcs, list) or len(srcs) < 2:
            continue
        wanted = [int(m) for m in srcs if isinstance(m, int)]
        kept = {int(r[0]): (int(r[1]), r[2]) for r in conn.execute(
            f"SELECT id, thread_id, session FROM messages WHERE id IN"
            f" ({','.join('?' * len(wanted))}) AND id NOT IN {messages}", wanted)}
        if not kept:
            continue
        value["sources"] = [m for m in wanted if m in kept]
        newest = max(kept)
        thread_id, session = kept[newest]
        conn.execute("DELETE FROM temp.purge_ids WHERE kind='item' AND id=?", (item_id,))
        conn.execute("UPDATE memory_items SET source_message_id=?, thread_id=?, session=?,"
                     " data=? WHERE id=?",
                     (newest, thread_id, session, orjson.dumps(value).decode(), item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (?,?,?,?,?,?)",
                     (item_id, now, "sources", str(wanted), str(value["sources"]),
                      "purged: the sources in the purged scope"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                     (item_id,))


def _drop_purged_sources(conn: sqlite3.Connection, items: str, messages: str,
                         threads: str) -> int:
    """Surviving items of the purged threads' tenants that cite a purged message or
    name a purged thread in ``data`` lose them (:func:`drop_purged_sources`, a
    ``sources`` revision, an index upsert); their text stays, as another conversation
    said it too. Returns how many changed."""
    rows = conn.execute(
        f"SELECT id, data FROM memory_items WHERE id NOT IN {items} AND tenant IN"
        f" (SELECT tenant FROM threads WHERE id IN {threads}) AND (data LIKE ? OR"
        " data LIKE ?) ORDER BY id", ('%"sources"%', '%_threads"%')).fetchall()
    if not rows:
        return 0
    gone_m = {int(r[0]) for r in conn.execute(messages[1:-1])}
    gone_t = {int(r[0]) for r in conn.execute(threads[1:-1])}
    now = time.time()
    changed = 0
    for item_id, data in rows:
        value = orjson.loads(data or "{}")
        if not isinstance(value, dict):
            continue
        before = value.get("sources")
        if not drop_purged_sources(value, gone_m, gone_t):
            continue
        conn.execute("UPDATE memory_items SET data=? WHERE id=?",
                     (orjson.dumps(value).decode(), item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (?,?,?,?,?,?)",
                     (item_id, now, "sources", str(before), str(value.get("sources")),
                      "purged: the sources in the purged scope"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                     (item_id,))
        changed += 1
    return changed


def _restore_orphans(conn: sqlite3.Connection, purged: str) -> int:
    """Surviving items that a purged item superseded or merged away: each takes the
    first surviving item down the purged one's own chain as its superseder, or,
    when the chain ends in the purged scope, becomes ``active`` again (a
    ``restored`` revision; indexed again): the purged statement's revision is gone,
    so the value it replaced is current again. Returns how many became active."""
    orphans = conn.execute(
        f"SELECT id, status, superseded_by FROM memory_items WHERE superseded_by IN"
        f" {purged} AND id NOT IN {purged} AND status IN ('superseded', 'merged')"
        " ORDER BY id").fetchall()
    if not orphans:
        return 0
    chain = {int(r[0]): r[1] for r in conn.execute(
        f"SELECT id, superseded_by FROM memory_items WHERE id IN {purged}")}
    now = time.time()
    restored = 0
    for item_id, status, by in orphans:
        successor = orphan_successor(int(by), chain)
        if successor is not None:
            conn.execute("UPDATE memory_items SET superseded_by=? WHERE id=?",
                         (successor, item_id))
            conn.execute("UPDATE memory_items SET supersedes=? WHERE id=? AND"
                         f" (supersedes IS NULL OR supersedes IN {purged})",
                         (item_id, successor))
            continue
        conn.execute("UPDATE memory_items SET status='active', superseded_by=NULL,"
                     " updated_at=? WHERE id=?", (now, item_id))
        conn.execute("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new,"
                     " reason) VALUES (?,?,?,?,?,?)",
                     (item_id, now, "status", status, "active",
                      f"restored: item {by} that replaced it was purged"))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                     (item_id,))
        restored += 1
    return restored


def _delete(conn: sqlite3.Connection, tenant: str | None, role: str | None,
            session: str | None, thread: int | None, scrub_copies: bool) -> dict[str, Any]:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS purge_ids"
                 " (kind TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (kind, id))")
    conn.execute("DELETE FROM temp.purge_ids")
    by_scope, s_args = _clause(tenant=tenant, role=role, session=session)
    by_owner, o_args = _clause(tenant=tenant, role=role)
    forwarded = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND"
                             " name='forwarded_requests'").fetchone() is not None  # schema 7+

    def mark(kind: str, sql: str, args: list[Any]) -> int:
        return int(conn.execute(f"INSERT OR IGNORE INTO temp.purge_ids (kind, id) {sql}",
                                args).rowcount)

    ids = "(SELECT id FROM temp.purge_ids WHERE kind='{}')".format
    if thread is None:
        mark("thread", f"SELECT 'thread', id FROM threads WHERE {by_scope}", s_args)
        mark("message", f"SELECT 'message', id FROM messages WHERE {by_scope}", s_args)
        mark("item", f"SELECT 'item', id FROM memory_items WHERE {by_scope}", s_args)
    else:
        # the thread and the branches forked from it (edits, regenerations)
        grown = mark("thread", f"SELECT 'thread', id FROM threads WHERE {by_scope} AND id=?",
                     [*s_args, thread])
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
                        *((("forwarded", "forwarded_requests"),) if forwarded else ())):
        mark(kind, f"SELECT '{kind}', id FROM {table} WHERE thread_id IN {ids('thread')}", [])
        if whole:
            mark(kind, f"SELECT '{kind}', id FROM {table} WHERE {by_owner}", o_args)
    if whole:
        mark("agent_memory", f"SELECT 'agent_memory', id FROM agent_memories WHERE {by_owner}",
             o_args)
    optional = {str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name IN"
        " ('forwarded_requests', 'splices', 'response_threads')")}
    copies, held = find_copies(conn, str, ids, tables=optional, scrub=scrub_copies)

    counts: dict[str, Any] = {}
    outbox = 0
    for kind in OUTBOX_KINDS:
        outbox += conn.execute(
            "INSERT INTO index_outbox (kind, ref_id, op) SELECT ?, id, 'delete'"
            " FROM temp.purge_ids WHERE kind=?", (kind, kind)).rowcount
    counts["embeddings"] = sum(conn.execute(
        f"DELETE FROM embeddings WHERE kind=? AND ref_id IN {ids(kind)}", (kind,)).rowcount
        for kind in OUTBOX_KINDS)

    counts["restored_items"] = _restore_orphans(conn, ids("item"))
    counts["sources_dropped"] = _drop_purged_sources(
        conn, ids("item"), ids("message"), ids("thread"))
    # Links from rows that stay to rows that go would break foreign keys: cut them.
    for col in ("supersedes", "superseded_by", "conflict_with"):
        conn.execute(f"UPDATE memory_items SET {col}=NULL WHERE {col} IN {ids('item')}"
                     f" AND id NOT IN {ids('item')}")
    conn.execute(f"UPDATE memory_items SET source_message_id=NULL WHERE source_message_id IN"
                 f" {ids('message')} AND id NOT IN {ids('item')}")
    conn.execute(f"UPDATE summary_nodes SET parent_id=NULL WHERE parent_id IN {ids('summary')}"
                 f" AND id NOT IN {ids('summary')}")
    # A surviving child of a purged turn (a fork in another session) was indexed with
    # its parent's words: the text index's context field and, with embed_context,
    # its vector. Drop its cached vector and index it again, without the parent.
    children = (f"(SELECT id FROM messages WHERE parent_id IN {ids('message')}"
                f" AND id NOT IN {ids('message')})")
    conn.execute(f"DELETE FROM embeddings WHERE kind='message' AND ref_id IN {children}")
    counts["reindexed_children"] = conn.execute(
        f"INSERT INTO index_outbox (kind, ref_id, op) SELECT 'message', id, 'upsert'"
        f" FROM messages WHERE id IN {children}").rowcount
    conn.execute(f"UPDATE messages SET parent_id=NULL WHERE parent_id IN {ids('message')}"
                 f" AND id NOT IN {ids('message')}")
    conn.execute(f"UPDATE threads SET parent_thread_id=NULL WHERE parent_thread_id IN"
                 f" {ids('thread')} AND id NOT IN {ids('thread')}")

    def delete(name: str, sql: str) -> None:
        counts[name] = conn.execute(sql).rowcount

    delete("extraction_queue", f"DELETE FROM extraction_queue WHERE message_id IN"
           f" {ids('message')}")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='splices'"
                    ).fetchone():  # schema 3+
        delete("splices", f"DELETE FROM splices WHERE message_id IN {ids('message')}")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table'"
                    " AND name='memory_item_subject_keys'").fetchone():  # schema 9+
        delete("memory_item_subject_keys", f"DELETE FROM memory_item_subject_keys"
               f" WHERE item_id IN {ids('item')}")
        delete("memory_item_terms", f"DELETE FROM memory_item_terms"
               f" WHERE item_id IN {ids('item')}")
    delete("memory_item_revisions", f"DELETE FROM memory_item_revisions WHERE item_id IN"
           f" {ids('item')}")
    # Items point at each other (supersession) and at messages: drop links inside the set.
    conn.execute(f"UPDATE memory_items SET supersedes=NULL, superseded_by=NULL,"
                 f" conflict_with=NULL WHERE id IN {ids('item')}")
    delete("memory_items", f"DELETE FROM memory_items WHERE id IN {ids('item')}")
    conn.execute(f"UPDATE summary_nodes SET parent_id=NULL WHERE id IN {ids('summary')}")
    delete("summary_nodes", f"DELETE FROM summary_nodes WHERE id IN {ids('summary')}")
    delete("task_state", f"DELETE FROM task_state WHERE id IN {ids('task')}")
    delete("assembly_logs", f"DELETE FROM assembly_logs WHERE id IN {ids('assembly')}")
    delete("events", f"DELETE FROM events WHERE id IN {ids('event')}")
    if forwarded:
        delete("forwarded_requests",
               f"DELETE FROM forwarded_requests WHERE id IN {ids('forwarded')}")
    delete("agent_memories", f"DELETE FROM agent_memories WHERE id IN {ids('agent_memory')}")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND"
                    " name='response_threads'").fetchone():  # schema 8+
        scoped = f"({by_scope}) OR " if thread is None else ""
        for table in ("response_threads", "response_conversations"):
            counts[table] = conn.execute(
                f"DELETE FROM {table} WHERE {scoped}thread_id IN {ids('thread')}",
                s_args if thread is None else []).rowcount
    conn.execute(f"UPDATE messages SET parent_id=NULL WHERE id IN {ids('message')}")
    delete("messages", f"DELETE FROM messages WHERE id IN {ids('message')}")
    conn.execute(f"UPDATE threads SET parent_thread_id=NULL WHERE id IN {ids('thread')}")
    delete("threads", f"DELETE FROM threads WHERE id IN {ids('thread')}")
    counts["outbox_deletes"] = outbox
    counts["copies_found"] = sum(len(v) for v in copies.values())
    counts["copies_scrubbed"] = counts["copies_found"] if scrub_copies else 0
    counts["copies"] = copies
    counts["held_elsewhere"] = held
    conn.execute("DELETE FROM temp.purge_ids")
    return counts
