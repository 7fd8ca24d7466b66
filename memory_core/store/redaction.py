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
(:class:`memory_core.store.scrub.Scrubber`, whose docstring states what a copy is):
each copied span is replaced by the placeholder and the rest of the row stays, in
hidden tool rounds and replies of its thread, splices, summary lines, assembly logs,
forwarded bodies (the same JSON shape) and Responses API ``response_threads`` rows.
A chain row is kept with its items scrubbed, so a ``previous_response_id`` still
resolves after a restart: the capture continues a redacted node from a message that
holds the placeholder (``memory_core.capture.evidence``). Its ``content_hash``
(SHA-256 of the canonical message) is listed in the ``meta`` row :data:`META_KEY`,
and the root message of its conversation tree in :data:`ROOTS_KEY`, so bodies
forwarded later in that tree, which still carry the client's copy, are stored with
the placeholder (:func:`memory_core.store.scrub.mask_messages`). A distinctive text
(:func:`~memory_core.store.scrub.is_distinctive`) redacted under a tenant that is one
end user's (``t_…~u_…``) is also listed under :data:`WIDE_KEY`: that user's other
threads' later bodies are masked too (a bare key's tenant is everyone's).

Rows of the message's own conversation tree (its thread, its forks, the threads it
forked from) get every copy rule; rows of other conversations get the whole-text and
verbatim rules only for a distinctive text, so a redacted stock message ("Thanks,
that works!") is not taken out of another person's logs.

Other messages that state the same text (another conversation's paste, a user's
restatement later in the thread) are statements of their own, not copies derived
from this one: they are not touched, since redacting one message must not reach into
conversations the operator did not name, and are reported (``held_elsewhere``) so the
operator can redact them too.
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
    ROOTS_KEY,
    WIDE_KEY,
    Scrubber,
    content_strings,
    is_distinctive,
    redacted_raw,
)

WIDE_SEP = "~u_"
"""Marks a stored tenant as one end user's (``t_…~u_…``, ``proxy.scope``)."""

__all__ = ["redact_rows"]


def redact_rows(conn: Any, sql: Callable[[str], str], table: str, message_id: int, *,
                tenant: str | None, role: str | None, session: str | None = None,
                keep_restated: Callable[[Any, str, str], None],
                restore_orphans: Callable[[Any, str], int],
                now: float | None = None) -> dict[str, Any] | None:
    """Redact message ``message_id`` (see the module docstring) on ``conn``, inside
    the caller's savepoint, with the purge's temporary id ``table`` (``kind``,
    ``id``) already created and empty. ``sql`` turns ``?`` marks into the
    backend's; ``keep_restated`` and ``restore_orphans`` are the purge's own steps
    over the subqueries of marked ids. ``None`` when no such message is in the
    ``tenant``, ``role`` and ``session`` given. Returns counts per table (ints),
    ``rows`` (``{table: [ids of the rows changed]}``) and ``held_elsewhere`` (the
    other messages of the tenant that state the text too and stay as they are:
    ``[{message_id, thread_id, role, msg_role}]``)."""
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
    counts: dict[str, Any] = {"messages": 0 if text == PLACEHOLDER else 1}
    rows: dict[str, list[Any]] = {"messages": [message_id] if text != PLACEHOLDER else []}
    q(f"INSERT INTO {table} (kind, id)"
      " VALUES ('message', ?)", (message_id,))
    q(f"INSERT INTO {table} (kind, id)"
      " SELECT 'item', id FROM memory_items WHERE source_message_id=?", (message_id,))
    keep_restated(conn, ids("item"), ids("message"))
    removed = q(f"SELECT id, text FROM memory_items WHERE id IN {ids('item')}"
                " ORDER BY id").fetchall()
    removed_texts = [str(r[1]) for r in removed]
    rows["memory_items"] = [int(r[0]) for r in removed]
    try:
        raw = orjson.loads(raw_json)
    except orjson.JSONDecodeError:
        raw = None
    content = raw.get("content") if isinstance(raw, dict) else None
    said = [text, *content_strings(content)] if text != PLACEHOLDER else []
    scrubber = Scrubber(said, removed_texts)
    # Rows of other conversations: whole-text rules for distinctive texts only.
    far = Scrubber(said, removed_texts, distinctive_only=True)
    tree = _tree_threads(q, thread_id)

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
        counts.update(_scrub_copies(q, (scrubber, far, tree), message_id, thread_id,
                                    m_tenant, m_role, created_at - 300, touched, replies,
                                    rows))
    for ref in touched:
        q("DELETE FROM embeddings WHERE kind='message' AND ref_id=?", (ref,))
        q("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?, 'upsert')",
          (ref,))
    counts["reindexed_messages"] = len(touched)
    _remember_hashes(q, [message_id, *replies], m_tenant)  # a client resends them all
    _remember_root(q, thread_id, m_tenant)
    if WIDE_SEP in m_tenant and said and is_distinctive(text):
        _remember_hashes(q, [message_id, *replies], m_tenant, WIDE_KEY)
    q("INSERT INTO events (request_id, tenant, role, thread_id, kind, created_at, data)"
      " VALUES (NULL, ?, ?, ?, 'redact', ?, ?)",
      (m_tenant, m_role, thread_id, now,
       orjson.dumps({"message_id": message_id, "counts": counts}).decode()))
    q(f"DELETE FROM {table}")
    counts["rows"] = rows
    counts["held_elsewhere"] = [] if scrubber.is_empty else _held_elsewhere(
        q, scrubber, message_id, m_tenant, touched)
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


def _tree_threads(q: Callable[..., Any], thread_id: int) -> frozenset[int]:
    """The threads of ``thread_id``'s conversation tree (its root message's: the
    thread, its forks and the threads it forked from)."""
    row = q("SELECT root_message_id FROM threads WHERE id=?", (thread_id,)).fetchone()
    if row is None or row[0] is None:
        return frozenset({thread_id})
    return frozenset({thread_id, *(int(r[0]) for r in q(
        "SELECT id FROM threads WHERE root_message_id=?", (row[0],)).fetchall())})


def _scrub_copies(q: Callable[..., Any], scrubbers: tuple[Scrubber, Scrubber, frozenset[int]],
                  message_id: int, thread_id: int, tenant: str, role: str, since: float,
                  touched: list[int], replies: list[int],
                  rows: dict[str, list[Any]]) -> dict[str, int]:
    """Scrub the copies of the text (:class:`Scrubber`: each copied span replaced, the
    rest kept) in rows of the message's tenant and role written since it: hidden tool
    rounds and replies of its thread (appended to ``touched`` to be indexed again;
    the replies also to ``replies``), splices, summaries, assembly logs, forwarded
    bodies, Responses API chain rows. ``scrubbers``: the one for rows of the
    message's conversation tree (the threads given), the one for other rows
    (whole-text rules for a distinctive text only). The ids of the rows changed go
    to ``rows``."""
    from memory_core.capture.evidence import dumps_lossless, loads_lossless

    near, far, tree = scrubbers

    def pick(thread: Any) -> Scrubber:
        return near if thread is not None and int(thread) in tree else far

    counts = {"other_messages": 0, "splices": 0, "summary_nodes": 0, "assembly_logs": 0,
              "forwarded_bodies_edited": 0, "response_items_scrubbed": 0}
    for name in ("other_messages", "splices", "summary_nodes", "assembly_logs",
                 "forwarded_requests", "response_threads"):
        rows.setdefault(name, [])
    # Hidden memory-tool rounds quote retrieved evidence; replies of its own
    # conversation (and the branches forked from it) may repeat it.
    for ref, text, raw, hidden, thread in q(
            "SELECT id, text, raw_json, hidden, thread_id FROM messages WHERE tenant=? AND"
            " role=? AND id>? AND (hidden=1 OR (msg_role='assistant' AND (thread_id=? OR"
            " thread_id IN (SELECT id FROM threads WHERE parent_thread_id=?)))) ORDER BY id",
            (tenant, role, message_id, thread_id, thread_id)).fetchall():
        scrubber = pick(thread)
        if not scrubber.may_hold(text) and not scrubber.may_hold(raw):
            continue
        new_text = scrubber.scrub(text)
        # raw_json may hold what orjson refuses (an escaped lone surrogate, an integer
        # past 64 bits: memory_core.capture.evidence), read and written back as it was
        old_raw = loads_lossless(raw)
        new_raw = scrubber.scrub_value(old_raw)
        if new_text != text or new_raw is not old_raw:
            q("UPDATE messages SET text=?, raw_json=? WHERE id=?",
              (new_text, dumps_lossless(new_raw), ref))
            touched.append(int(ref))
            if not hidden:
                replies.append(int(ref))
            counts["other_messages"] += 1
            rows["other_messages"].append(int(ref))
    for ref, messages, thread in q(
            "SELECT message_id, messages, (SELECT thread_id FROM messages WHERE"
            " messages.id=splices.message_id) FROM splices WHERE tenant=? AND role=? AND"
            " message_id>=?", (tenant, role, message_id)).fetchall():
        scrubber = pick(thread)
        if not scrubber.may_hold(messages):
            continue
        value = loads_lossless(messages)  # written by dumps_lossless, as raw_json
        new = scrubber.scrub_value(value)
        if new is not value:
            q("UPDATE splices SET messages=? WHERE message_id=?", (dumps_lossless(new), ref))
            counts["splices"] += 1
            rows["splices"].append(int(ref))
    for ref, text, thread in q("SELECT id, text, thread_id FROM summary_nodes WHERE tenant=?"
                               " AND role=? AND last_message_id>=? ORDER BY id",
                               (tenant, role, message_id)).fetchall():
        new_text = pick(thread).scrub_lines(text)
        if new_text != text:
            q("UPDATE summary_nodes SET text=? WHERE id=?", (new_text, ref))
            q("DELETE FROM embeddings WHERE kind='summary' AND ref_id=?", (ref,))
            q("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('summary', ?, 'upsert')",
              (ref,))
            counts["summary_nodes"] += 1
            rows["summary_nodes"].append(int(ref))
    for ref, data, thread in q("SELECT id, data, thread_id FROM assembly_logs WHERE tenant=?"
                               " AND role=? AND created_at>=? ORDER BY id",
                               (tenant, role, since)).fetchall():
        scrubber = pick(thread)
        if not scrubber.may_hold(data):
            continue
        value = orjson.loads(data)
        new = scrubber.scrub_value(value)
        if new != value:
            q("UPDATE assembly_logs SET data=? WHERE id=?", (orjson.dumps(new).decode(), ref))
            counts["assembly_logs"] += 1
            rows["assembly_logs"].append(int(ref))
    # A forwarded body is edited string by string: the same JSON shape, each copied
    # span replaced (the client's message itself, a copy in the block or scaffold).
    for ref, body, thread in q("SELECT id, body, thread_id FROM forwarded_requests WHERE"
                               " tenant=? AND role=? AND created_at>=? AND body IS NOT NULL"
                               " ORDER BY id", (tenant, role, since)).fetchall():
        scrubber = pick(thread)
        raw = zlib.decompress(bytes(body))
        if not scrubber.may_hold(raw.decode("utf-8", "replace")):
            continue
        value = loads_lossless(raw)
        new = scrubber.scrub_value(value)
        if new != value:
            q("UPDATE forwarded_requests SET body=?, redacted=1 WHERE id=?",
              (zlib.compress(orjson.dumps(new), 1), ref))
            counts["forwarded_bodies_edited"] += 1
            rows["forwarded_requests"].append(int(ref))
    # A Responses API chain row keeps its place with its items scrubbed, so the chain
    # still resolves after a restart; the capture continues the redacted nodes from
    # the scrubbed items (``memory_core.capture.evidence``: a placeholder message).
    for rid, items, thread in q("SELECT response_id, items, thread_id FROM response_threads"
                                " WHERE tenant=? AND role=? AND created_at>=?",
                                (tenant, role, since)).fetchall():
        scrubber = pick(thread)
        raw = zlib.decompress(bytes(items))
        text = raw.decode("utf-8", "surrogatepass")
        if not scrubber.may_hold(text):
            continue
        value = loads_lossless(text)
        new = scrubber.scrub_value(value)
        if new != value:
            q("UPDATE response_threads SET items=? WHERE tenant=? AND role=? AND"
              " response_id=?", (zlib.compress(dumps_lossless(new).encode(
                  "utf-8", "surrogatepass"), 1), tenant, role, rid))
            counts["response_items_scrubbed"] += 1
            rows["response_threads"].append(str(rid))
    return counts


def _held_elsewhere(q: Callable[..., Any], scrubber: Scrubber, message_id: int,
                    tenant: str, changed: list[int]) -> list[dict[str, Any]]:
    """The other messages of the tenant that still state the text (a copy by the
    :class:`Scrubber`'s rule), not redacted with it: ``[{message_id, thread_id, role,
    msg_role}]``, oldest first, at most :data:`HELD_ELSEWHERE_MAX`."""
    out: list[dict[str, Any]] = []
    skip = set(changed)
    for ref, thread, role, msg_role, text in q(
            "SELECT id, thread_id, role, msg_role, text FROM messages WHERE tenant=? AND"
            " id<>? AND text<>? ORDER BY id", (tenant, message_id, PLACEHOLDER)):
        if ref in skip or not text or not scrubber.may_hold(text) \
                or scrubber.scrub(text) == text:
            continue
        out.append({"message_id": int(ref), "thread_id": int(thread), "role": role,
                    "msg_role": msg_role})
        if len(out) >= HELD_ELSEWHERE_MAX:
            break
    return out


HELD_ELSEWHERE_MAX = 100
"""The most other messages holding the text a redaction names."""


def _remember_root(q: Callable[..., Any], thread_id: int, tenant: str) -> None:
    """List the root message of the thread's conversation tree under
    :data:`ROOTS_KEY`: only bodies forwarded in its threads can carry a redacted
    message (the forwarded-body log tests that first)."""
    row = q("SELECT root_message_id FROM threads WHERE id=?", (thread_id,)).fetchone()
    if row is None or row[0] is None:
        return
    got = q("SELECT value FROM meta WHERE key=?", (ROOTS_KEY,)).fetchone()
    value = orjson.loads(got[0]) if got else {}
    listed = value.setdefault(tenant, [])
    if int(row[0]) not in listed:
        listed.append(int(row[0]))
    q("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
      " value=excluded.value", (ROOTS_KEY, orjson.dumps(value).decode()))


def _remember_hashes(q: Callable[..., Any], message_ids: list[int], tenant: str,
                     key: str = META_KEY) -> None:
    """List the messages' content hashes under ``key`` (:data:`META_KEY`, or
    :data:`WIDE_KEY`) for later bodies."""
    value = {}
    row = q("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
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
      " value=excluded.value", (key, orjson.dumps(value).decode()))
