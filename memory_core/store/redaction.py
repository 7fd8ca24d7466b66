"""Redact one message: its content goes, the conversation stays.

Both backends' :meth:`memory_core.store.api.Purge.redact_message` run
:func:`redact_rows` inside their purge savepoint; only the parameter mark and the
name of the purge's temporary id table differ (``sql``, ``table``), and the purge's
own source-keeping and restoring steps are handed in, so a redaction drops the
items stated only in that message exactly as a purge of it would.

The message row stays with its ``node_key`` (the hash the capture matches a resent
history on), so a client that resends the original text still continues the same
thread and nothing is captured again; its ``text`` becomes :data:`PLACEHOLDER`, its
``raw_json`` keeps role, name and tool-call ids only. Copies elsewhere are scrubbed
(:class:`memory_core.store.scrub.Scrubber`): every copy of the text is replaced by
the placeholder; a string that still holds a piece of it (a quoted snippet, a summary
line, the text of an item stated there) is replaced whole in assembly logs, splices,
hidden tool rounds and summary lines (replies of its thread lose only the copies);
a forwarded body that still holds a piece after the copies are replaced cannot be
edited safely and loses its body (``body_omitted``); a Responses
API ``response_threads`` row that holds it is deleted (the chain is captured by the
node keys of its exact items, so an edited row would fork the thread). Its
``content_hash`` (SHA-256 of the canonical message) is listed in the ``meta`` row
:data:`META_KEY` so bodies forwarded later, which still carry the client's copy,
are stored with the placeholder (:func:`memory_core.store.scrub.mask_messages`).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from memory_core.store.api import drop_purged_sources
from memory_core.store.scrub import (
    META_KEY,
    PLACEHOLDER,
    Scrubber,
    content_strings,
    redacted_raw,
)

__all__ = ["redact_rows"]


def redact_rows(conn: Any, sql: Callable[[str], str], table: str, message_id: int, *,
                tenant: str | None, role: str | None, session: str | None = None,
                keep_restated: Callable[[Any, str, str], None],
                restore_orphans: Callable[[Any, str], int],
                now: float | None = None) -> dict[str, int] | None:
    """Redact message ``message_id`` (see the module docstring) on ``conn``, inside
    the caller's savepoint, with the purge's temporary id ``table`` (``kind``,
    ``id``) already created and empty. ``sql`` turns ``?`` marks into the
    backend's; ``keep_restated`` and ``restore_orphans`` are the purge's own steps
    over the subqueries of marked ids. ``None`` when no such message is in the
    ``tenant``, ``role`` and ``session`` given. Returns counts per table."""
    now = time.time() if now is None else now
    ids = ("(SELECT id FROM " + table + " WHERE kind='{}')").format

    def q(text: str, args: Any = ()) -> Any:
        return conn.execute(sql(text), args)

    row = q("SELECT id, tenant, role, thread_id, text, raw_json, created_at, session"
            " FROM messages WHERE id=?", (message_id,)).fetchone()
    if row is None or any(want is not None and have != want for want, have in (
            (tenant, row[1]), (role, row[2]), (session, row[7]))):
        return None
    _, m_tenant, m_role, thread_id, text, raw_json, created_at, _ = row
    counts: dict[str, int] = {"messages": 0 if text == PLACEHOLDER else 1}
    q(f"INSERT INTO {table} (kind, id)"
      " VALUES ('message', ?)", (message_id,))
    q(f"INSERT INTO {table} (kind, id)"
      " SELECT 'item', id FROM memory_items WHERE source_message_id=?", (message_id,))
    keep_restated(conn, ids("item"), ids("message"))
    removed_texts = [str(r[0]) for r in q(f"SELECT text FROM memory_items WHERE id IN"
                                          f" {ids('item')}").fetchall()]
    try:
        raw = orjson.loads(raw_json)
    except orjson.JSONDecodeError:
        raw = None
    content = raw.get("content") if isinstance(raw, dict) else None
    scrubber = Scrubber([text, *content_strings(content), *removed_texts]
                        if text != PLACEHOLDER else [], removed_texts)

    counts["outbox_deletes"] = q(
        "INSERT INTO index_outbox (kind, ref_id, op) SELECT 'item', id, 'delete' FROM"
        f" memory_items WHERE id IN {ids('item')}").rowcount
    counts["embeddings"] = q(f"DELETE FROM embeddings WHERE kind='item' AND ref_id IN"
                             f" {ids('item')}").rowcount
    counts["restored_items"] = restore_orphans(conn, ids("item"))
    counts["sources_dropped"] = _drop_source(q, ids("item"), message_id, m_tenant, now)
    for col in ("supersedes", "superseded_by", "conflict_with"):
        q(f"UPDATE memory_items SET {col}=NULL WHERE {col} IN {ids('item')}"
          f" AND id NOT IN {ids('item')}")
    q(f"UPDATE memory_items SET source_message_id=NULL WHERE source_message_id=?"
      f" AND id NOT IN {ids('item')}", (message_id,))
    for keyed in ("memory_item_subject_keys", "memory_item_terms"):
        counts[keyed] = q(f"DELETE FROM {keyed} WHERE item_id IN {ids('item')}").rowcount
    counts["memory_item_revisions"] = q(
        f"DELETE FROM memory_item_revisions WHERE item_id IN {ids('item')}").rowcount
    q(f"UPDATE memory_items SET supersedes=NULL, superseded_by=NULL, conflict_with=NULL"
      f" WHERE id IN {ids('item')}")
    counts["memory_items"] = q(f"DELETE FROM memory_items WHERE id IN {ids('item')}").rowcount
    counts["task_state"] = q("DELETE FROM task_state WHERE source_message_id=?",
                             (message_id,)).rowcount
    counts["extraction_queue"] = q("DELETE FROM extraction_queue WHERE message_id=?",
                                   (message_id,)).rowcount

    q("UPDATE messages SET text=?, raw_json=? WHERE id=?",
      (PLACEHOLDER, redacted_raw(raw_json), message_id))
    # The message, and its children (indexed with their parent's words), again.
    touched = [message_id] + [int(r[0]) for r in q(
        "SELECT id FROM messages WHERE parent_id=? ORDER BY id", (message_id,)).fetchall()]
    replies: list[int] = []  # replies of its thread that repeated it
    if not scrubber.is_empty:
        # a body forwarded with the message is logged just after it: a margin
        counts.update(_scrub_copies(q, scrubber, message_id, thread_id, m_tenant, m_role,
                                    created_at - 300, touched, replies))
    for ref in touched:
        q("DELETE FROM embeddings WHERE kind='message' AND ref_id=?", (ref,))
        q("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?, 'upsert')",
          (ref,))
    counts["reindexed_messages"] = len(touched)
    _remember_hashes(q, [message_id, *replies], m_tenant)  # a client resends them all
    q("INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
      " VALUES (NULL, ?, ?, ?, 'redact', ?, ?)",
      (m_tenant, m_role, thread_id, now,
       orjson.dumps({"message_id": message_id, "counts": counts}).decode()))
    q(f"DELETE FROM {table}")
    return counts


def _drop_source(q: Callable[..., Any], items: str, message_id: int, tenant: str,
                 now: float) -> int:
    """Surviving items that cite the message among their sources lose it
    (:func:`drop_purged_sources`, a ``sources`` revision, an index upsert)."""
    changed = 0
    for item_id, data in q(f"SELECT id, data FROM memory_items WHERE tenant=? AND id NOT IN"
                           f" {items} AND data LIKE ? ORDER BY id",
                           (tenant, '%"sources"%')).fetchall():
        value = orjson.loads(data or "{}")
        if not isinstance(value, dict):
            continue
        before = value.get("sources")
        if not drop_purged_sources(value, {message_id}, set()):
            continue
        q("UPDATE memory_items SET data=? WHERE id=?", (orjson.dumps(value).decode(), item_id))
        q("INSERT INTO memory_item_revisions (item_id, changed_at, field, old, new, reason)"
          " VALUES (?,?,?,?,?,?)", (item_id, now, "sources", str(before),
                                    str(value.get("sources")), "redacted: a source message"))
        q("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
          (item_id,))
        changed += 1
    return changed


def _scrub_copies(q: Callable[..., Any], scrubber: Scrubber, message_id: int,
                  thread_id: int, tenant: str, role: str, since: float,
                  touched: list[int], replies: list[int]) -> dict[str, int]:
    """Scrub the copies of the text in rows of the message's tenant and role written
    since it: hidden tool rounds and replies of its thread (appended to ``touched``
    to be indexed again; the replies also to ``replies``), splices, summaries,
    assembly logs, forwarded bodies, Responses API items."""
    counts = {"other_messages": 0, "splices": 0, "summary_nodes": 0, "assembly_logs": 0,
              "forwarded_bodies_edited": 0, "forwarded_bodies_dropped": 0,
              "response_items_dropped": 0}
    # Hidden memory-tool rounds quote retrieved evidence: scrubbed whole. Replies of
    # its own conversation (and the branches forked from it) may repeat it: their
    # copies of the text are replaced.
    for ref, text, raw, hidden in q(
            "SELECT id, text, raw_json, hidden FROM messages WHERE tenant=? AND role=? AND"
            " id>? AND (hidden=1 OR (msg_role='assistant' AND (thread_id=? OR thread_id IN"
            " (SELECT id FROM threads WHERE parent_thread_id=?)))) ORDER BY id",
            (tenant, role, message_id, thread_id, thread_id)).fetchall():
        whole = bool(hidden)
        new_text = scrubber.scrub(text) if whole else scrubber.replace(text)
        old_raw = orjson.loads(raw)
        new_raw, _ = scrubber.scrub_value(old_raw, whole=whole)
        if new_text != text or new_raw != old_raw:
            q("UPDATE messages SET text=?, raw_json=? WHERE id=?",
              (new_text, orjson.dumps(new_raw).decode(), ref))
            touched.append(int(ref))
            if not hidden:
                replies.append(int(ref))
            counts["other_messages"] += 1
    for ref, messages in q("SELECT message_id, messages FROM splices WHERE tenant=? AND"
                           " role=? AND message_id>=?", (tenant, role, message_id)).fetchall():
        value = orjson.loads(messages)
        new, _ = scrubber.scrub_value(value)
        if new != value:
            q("UPDATE splices SET messages=? WHERE message_id=?",
              (orjson.dumps(new).decode(), ref))
            counts["splices"] += 1
    for ref, text in q("SELECT id, text FROM summary_nodes WHERE tenant=? AND role=? AND"
                       " last_message_id>=? ORDER BY id", (tenant, role, message_id)).fetchall():
        new_text = scrubber.scrub_lines(text)
        if new_text != text:
            q("UPDATE summary_nodes SET text=? WHERE id=?", (new_text, ref))
            q("DELETE FROM embeddings WHERE kind='summary' AND ref_id=?", (ref,))
            q("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('summary', ?, 'upsert')",
              (ref,))
            counts["summary_nodes"] += 1
    for ref, data in q("SELECT id, data FROM assembly_logs WHERE tenant=? AND role=? AND"
                       " created_at>=? ORDER BY id", (tenant, role, since)).fetchall():
        value = orjson.loads(data)
        new, _ = scrubber.scrub_value(value)
        if new != value:
            q("UPDATE assembly_logs SET data=? WHERE id=?", (orjson.dumps(new).decode(), ref))
            counts["assembly_logs"] += 1
    for ref, body in q("SELECT id, body FROM forwarded_requests WHERE tenant=? AND role=?"
                       " AND created_at>=? AND body IS NOT NULL ORDER BY id",
                       (tenant, role, since)).fetchall():
        value = orjson.loads(zlib.decompress(bytes(body)))
        new, residue = scrubber.scrub_value(value, whole=False)
        if residue:
            q("UPDATE forwarded_requests SET body=NULL, body_omitted=1 WHERE id=?", (ref,))
            counts["forwarded_bodies_dropped"] += 1
        elif new != value:
            q("UPDATE forwarded_requests SET body=?, redacted=1 WHERE id=?",
              (zlib.compress(orjson.dumps(new), 1), ref))
            counts["forwarded_bodies_edited"] += 1
    # A Responses API chain is rebuilt from these exact items and captured by their
    # node keys: an edited row would fork the thread, so a row holding the text goes
    # (its response and later ones then resolve only in the process that relayed them).
    for rid, items in q("SELECT response_id, items FROM response_threads WHERE tenant=?"
                        " AND role=? AND created_at>=?", (tenant, role, since)).fetchall():
        value = orjson.loads(zlib.decompress(bytes(items)))
        new, residue = scrubber.scrub_value(value, whole=False)
        if residue or new != value:
            q("DELETE FROM response_threads WHERE tenant=? AND role=? AND response_id=?",
              (tenant, role, rid))
            counts["response_items_dropped"] += 1
    return counts


def _remember_hashes(q: Callable[..., Any], message_ids: list[int], tenant: str) -> None:
    """List the messages' content hashes under :data:`META_KEY` for later bodies."""
    value = {}
    row = q("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
    if row:
        value = orjson.loads(row[0])
    listed = value.setdefault(tenant, [])
    known = set(listed)
    for ref in message_ids:
        digest = q("SELECT content_hash FROM messages WHERE id=?", (ref,)).fetchone()[0]
        if digest not in known:
            listed.append(digest)
            known.add(digest)
    q("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
      " value=excluded.value", (META_KEY, orjson.dumps(value).decode()))
