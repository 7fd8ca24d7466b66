"""What a purge leaves of the purged conversations in the rows that stay.

A purge deletes its scope's rows (:mod:`memory_core.admin.purge`); the text of a
purged conversation may also have been copied into rows of other threads before it:
a reply of another conversation that repeated it, a hidden tool round that retrieved
it, a summary line, a memory item extracted from such a reply, an assembly log, a
forwarded body, a splice or a Responses API chain row. Both backends' purges run
:func:`find_copies` on the scope's ids before they delete them; only the parameter
mark (``sql``) and the temporary id table (``ids``) differ.

What is a copy is redaction's rule (:class:`memory_core.store.scrub.Scrubber`), with
the whole-text rules for distinctive texts only, as every row looked at is of another
conversation: a stock message ("Thanks, that works!") is everyone's. Looked for are
the scope's user and assistant messages (system prompts are shared by every
conversation of an app; hidden rounds quote other threads), except those whose text a
surviving message states too (same content hash: that conversation said it as well,
so its rows keep it, as an item stated in two threads keeps its text). Only rows of
the purged threads' tenants written after the first purged message are looked at.

Copies are always reported (``copies``: the ids per table); with ``scrub`` each copied
span is replaced by :data:`~memory_core.store.scrub.PLACEHOLDER`, the rest of the
row stays, and the changed messages, items and summaries are indexed again. Other
user messages that state the text are the user's own statements: named
(``held_elsewhere``), never changed, as redaction names them.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Collection
from typing import Any

import orjson

from memory_core.store.scrub import PLACEHOLDER, Scrubber

__all__ = ["HELD_ELSEWHERE_MAX", "find_copies"]

HELD_ELSEWHERE_MAX = 100
"""The most other messages holding purged text a purge names."""

_BEYOND_TEXT = re.compile(r'"(?:tool_calls|function_call|content)"\s*:\s*[\[{]')
"""Raw JSON whose strings the stored text may not hold: tool calls, content parts."""

_MARGIN_S = 300
"""Seconds before the first purged message still looked at: a body forwarded with a
message is logged around it."""


def find_copies(conn: Any, sql: Callable[[str], str], ids: Callable[[str], str], *,
                tables: Collection[str], scrub: bool,
                ) -> tuple[dict[str, list[Any]], list[dict[str, Any]]]:
    """Find (and with ``scrub`` replace) the copies of the scope's text in the rows
    that stay (module docstring), inside the purge's savepoint, before its deletes.

    ``sql`` turns ``?`` marks into the backend's; ``ids(kind)`` is the subquery of the
    scope's ids of that kind (``message``, ``thread``, ``item``, ``summary``,
    ``assembly``, ``forwarded``); ``tables``: the optional tables the schema has
    (``forwarded_requests``, ``splices``, ``response_threads``). Returns ``copies``
    (``{table: [ids of the rows holding a copy]}``, only tables with one) and
    ``held_elsewhere`` (``[{message_id, thread_id, role, msg_role}]``: surviving user
    messages that state the text, oldest first, at most :data:`HELD_ELSEWHERE_MAX`)."""

    def q(text: str, args: Any = ()) -> Any:
        return conn.execute(sql(text), args)

    sources = q(f"SELECT id, text, content_hash, created_at, tenant FROM messages WHERE id IN"
                f" {ids('message')} AND hidden=0 AND msg_role IN ('user', 'assistant')"
                " AND text<>? ORDER BY id", (PLACEHOLDER,)).fetchall()
    if not sources:
        return {}, []
    tenants = sorted({str(r[4]) for r in sources})
    in_tenants = "tenant IN (" + ",".join("?" * len(tenants)) + ")"
    first_id = min(int(r[0]) for r in sources)
    since = min(float(r[3]) for r in sources) - _MARGIN_S
    held: list[dict[str, Any]] = []
    stated: set[str] = set()
    for ref, thread, role, msg_role, digest in q(
            f"SELECT id, thread_id, role, msg_role, content_hash FROM messages WHERE"
            f" {in_tenants} AND id NOT IN {ids('message')} AND content_hash IN"
            f" (SELECT content_hash FROM messages WHERE id IN {ids('message')}) ORDER BY id",
            tenants).fetchall():
        stated.add(str(digest))
        _name(held, ref, thread, role, msg_role)
    texts = [str(r[1]) for r in sources if str(r[2]) not in stated and str(r[1]).strip()]
    if not texts:
        return {}, held
    scrubber = Scrubber(texts, distinctive_only=True)
    copies: dict[str, list[Any]] = {}
    named = {h["message_id"] for h in held}

    def found(table: str, ref: Any) -> None:
        copies.setdefault(table, []).append(ref)

    def reindex(kind: str, ref: Any) -> None:
        q("DELETE FROM embeddings WHERE kind=? AND ref_id=?", (kind, ref))
        q("INSERT INTO index_outbox (kind, ref_id, op) VALUES (?, ?, 'upsert')", (kind, ref))

    from memory_core.capture.evidence import dumps_lossless, loads_lossless

    for ref, thread, role, msg_role, hidden, text, raw in q(
            f"SELECT id, thread_id, role, msg_role, hidden, text, raw_json FROM messages"
            f" WHERE {in_tenants} AND id>? AND id NOT IN {ids('message')} AND text<>?"
            " ORDER BY id", [*tenants, first_id, PLACEHOLDER]).fetchall():
        new_text = scrubber.scrub(text)
        # The raw JSON's content is the text; only what the text does not hold (tool
        # calls, content parts) needs its own look.
        if new_text == text and not (_BEYOND_TEXT.search(raw) and scrubber.may_hold(raw)):
            continue
        old_raw = loads_lossless(raw)
        new_raw = scrubber.scrub_value(old_raw)
        if new_text == text and new_raw is old_raw:
            continue
        if msg_role not in ("assistant", "tool") and not hidden:
            if int(ref) not in named:  # the user's own statement: named, kept
                _name(held, ref, thread, role, msg_role)
            continue
        found("messages", int(ref))
        if scrub:
            q("UPDATE messages SET text=?, raw_json=? WHERE id=?",
              (new_text, dumps_lossless(new_raw), ref))
            reindex("message", ref)
    for ref, text in q(f"SELECT id, text FROM summary_nodes WHERE {in_tenants} AND"
                       f" last_message_id>? AND id NOT IN {ids('summary')} ORDER BY id",
                       [*tenants, first_id]).fetchall():
        new_text = scrubber.scrub_lines(text)
        if new_text != text:
            found("summary_nodes", int(ref))
            if scrub:
                q("UPDATE summary_nodes SET text=? WHERE id=?", (new_text, ref))
                reindex("summary", ref)
    # An item of another conversation holds a copy when a reply there repeated the
    # purged text; one whose source is a surviving user message is that user's own.
    for ref, text, data in q(
            f"SELECT id, text, data FROM memory_items WHERE {in_tenants} AND created_at>=?"
            f" AND id NOT IN {ids('item')} AND (source_message_id IS NULL OR"
            " source_message_id NOT IN (SELECT id FROM messages WHERE msg_role='user'))"
            " ORDER BY id", [*tenants, since]).fetchall():
        if not scrubber.may_hold(text) and not scrubber.may_hold(data or ""):
            continue
        new_text = scrubber.scrub(text)
        value = orjson.loads(data or "{}")
        new_value = scrubber.scrub_value(value)
        if new_text == text and new_value is value:
            continue
        found("memory_items", int(ref))
        if scrub:
            q("UPDATE memory_items SET text=?, data=? WHERE id=?",
              (new_text, orjson.dumps(new_value).decode(), ref))
            for rev, old, new in q("SELECT id, old, new FROM memory_item_revisions WHERE"
                                   " item_id=?", (ref,)).fetchall():
                q("UPDATE memory_item_revisions SET old=?, new=? WHERE id=?",
                  (scrubber.scrub(old) if old else old, scrubber.scrub(new) if new else new,
                   rev))
            reindex("item", ref)
    for ref, data in q(f"SELECT id, data FROM assembly_logs WHERE {in_tenants} AND"
                       f" created_at>=? AND id NOT IN {ids('assembly')} ORDER BY id",
                       [*tenants, since]).fetchall():
        if not scrubber.may_hold(data):
            continue
        value = orjson.loads(data)
        new = scrubber.scrub_value(value)
        if new != value:
            found("assembly_logs", int(ref))
            if scrub:
                q("UPDATE assembly_logs SET data=? WHERE id=?", (orjson.dumps(new).decode(),
                                                                  ref))
    if "forwarded_requests" in tables:
        for ref, body in q(f"SELECT id, body FROM forwarded_requests WHERE {in_tenants} AND"
                           f" created_at>=? AND body IS NOT NULL AND id NOT IN"
                           f" {ids('forwarded')} ORDER BY id", [*tenants, since]).fetchall():
            raw = _inflate(body)
            if raw is None or not scrubber.may_hold(raw.decode("utf-8", "replace")):
                continue
            value = loads_lossless(raw)
            new = scrubber.scrub_value(value)
            if new != value:
                found("forwarded_requests", int(ref))
                if scrub:
                    q("UPDATE forwarded_requests SET body=?, redacted=1 WHERE id=?",
                      (zlib.compress(orjson.dumps(new), 1), ref))
    if "splices" in tables:
        for ref, messages in q(f"SELECT message_id, messages FROM splices WHERE {in_tenants}"
                               f" AND message_id>? AND message_id NOT IN {ids('message')}"
                               " ORDER BY message_id", [*tenants, first_id]).fetchall():
            if not scrubber.may_hold(messages):
                continue
            value = loads_lossless(messages)
            new = scrubber.scrub_value(value)
            if new is not value:
                found("splices", int(ref))
                if scrub:
                    q("UPDATE splices SET messages=? WHERE message_id=?",
                      (dumps_lossless(new), ref))
    if "response_threads" in tables:
        for tenant, role, rid, items in q(
                f"SELECT tenant, role, response_id, items FROM response_threads WHERE"
                f" {in_tenants} AND created_at>=? AND (thread_id IS NULL OR thread_id NOT IN"
                f" {ids('thread')}) ORDER BY tenant, role, response_id",
                [*tenants, since]).fetchall():
            blob = _inflate(items)
            if blob is None:
                continue
            text = blob.decode("utf-8", "surrogatepass")
            if not scrubber.may_hold(text):
                continue
            value = loads_lossless(text)
            new = scrubber.scrub_value(value)
            if new != value:
                found("response_threads", str(rid))
                if scrub:
                    q("UPDATE response_threads SET items=? WHERE tenant=? AND role=? AND"
                      " response_id=?", (zlib.compress(dumps_lossless(new).encode(
                          "utf-8", "surrogatepass"), 1), tenant, role, rid))
    return copies, held


def _inflate(blob: Any) -> bytes | None:
    """A zlib column's bytes, or ``None`` for one that is not zlib (written by no
    capture: no copy can be read from it, and the purge goes on)."""
    try:
        return zlib.decompress(bytes(blob))
    except zlib.error:
        return None


def _name(held: list[dict[str, Any]], ref: Any, thread: Any, role: Any, msg_role: Any) -> None:
    """Add one message to ``held_elsewhere`` (up to :data:`HELD_ELSEWHERE_MAX`)."""
    if len(held) < HELD_ELSEWHERE_MAX:
        held.append({"message_id": int(ref), "thread_id": int(thread), "role": role,
                     "msg_role": msg_role})
