"""Responses API response id → its conversation, kept in the store (``response_threads``).

A Responses request with ``previous_response_id`` sends only its new items; the
proxy captures and plans it as the whole conversation the previous response ended.
Each relayed response (``store`` not false) gets one row: the items it adds (the
request's new input items, then the response's ``output``), the response it
continued, and the thread its request was captured on. A response's conversation is
its chain of rows back to one without parent (:func:`conversation`), so the table
grows by each turn's new items, not by the thread each time.

Rows are written as the items came, so that a replay after a restart is the exact
bytes the first one would have been and maps to the same evidence nodes. Two
policies of capture therefore keep a row out of the table: ``redact_secrets`` with
a secret among its items (the items would be kept unmasked), and ``store_raw_json``
off (the original items would be kept). Such a response and its descendants then
resolve only within the process that relayed them (the proxy's in-memory map).

A request in a Responses API ``conversation`` (the upstream keeps its items) is
captured the same way: ``response_conversations`` names the newest response the
proxy relayed in each conversation, whose chain the next request follows.

Scoped by tenant and role: an id never resolves in another tenant. A purge
removes a scope's rows with their threads (:mod:`memory_core.purge`).
"""

from __future__ import annotations

import sqlite3
import time
import zlib
from typing import Any

from memory_core.capture import dumps_lossless, loads_lossless
from memory_core.models import CaptureTicket, Scope
from memory_core.redact import may_contain_secret, redact_value

__all__ = ["MAX_CHAIN", "conversation", "conversation_head", "insert", "prepare"]

MAX_CHAIN = 100_000
"""The most rows one conversation is read back through (a guard against a cycle)."""


def prepare(items: list[Any], *, redact: bool, store_raw: bool) -> bytes | None:
    """The ``items`` column for a row (zlib of their lossless JSON), or ``None`` when
    the capture policy keeps this row out (see module docstring)."""
    if not store_raw:
        return None
    text = dumps_lossless(items)
    if redact and may_contain_secret(text) and redact_value(items) != items:
        return None
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def insert(conn: sqlite3.Connection, scope: Scope, response_id: str, parent: str | None,
           blob: bytes | None, ticket: CaptureTicket | None = None,
           conversation_id: str | None = None) -> None:
    """Write (or replace) the row of ``response_id`` (none when ``blob`` is ``None``)
    and, with ``conversation_id``, make it that conversation's newest response.
    Writer job: queued after the request's capture, whose ``ticket`` then holds the
    thread id."""
    result = ticket.result if ticket is not None else None
    thread_id = result.thread_id if result is not None else None
    now = time.time()
    if blob is not None:
        conn.execute(
            "INSERT OR REPLACE INTO response_threads (tenant, role, response_id, session,"
            " parent_response_id, thread_id, items, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (scope.tenant, scope.role, response_id, scope.session, parent, thread_id, blob,
             now))
    if conversation_id is not None:
        conn.execute(
            "INSERT OR REPLACE INTO response_conversations (tenant, role, conversation_id,"
            " session, response_id, thread_id, updated_at) VALUES (?,?,?,?,?,?,?)",
            (scope.tenant, scope.role, conversation_id, scope.session, response_id,
             thread_id, now))


def conversation_head(conn: sqlite3.Connection, tenant: str, role: str,
                      conversation_id: str) -> str | None:
    """The newest response the proxy relayed in a Responses API conversation of this
    tenant and role, or ``None``."""
    row = conn.execute(
        "SELECT response_id FROM response_conversations WHERE tenant=? AND role=?"
        " AND conversation_id=?", (tenant, role, conversation_id)).fetchone()
    return str(row[0]) if row is not None else None


def conversation(conn: sqlite3.Connection, tenant: str, role: str, response_id: str
                 ) -> tuple[list[Any], int | None] | None:
    """The items of the conversation ``response_id`` ends, oldest first, and the
    thread id of its own row; ``None`` when the id is unknown in this tenant and role,
    or its chain is broken (an ancestor never stored or since purged)."""
    rows = conn.execute(
        "WITH RECURSIVE chain(response_id, parent, items, thread_id, depth) AS ("
        " SELECT response_id, parent_response_id, items, thread_id, 0 FROM response_threads"
        " WHERE tenant=? AND role=? AND response_id=?"
        " UNION ALL SELECT r.response_id, r.parent_response_id, r.items, r.thread_id,"
        " chain.depth + 1 FROM response_threads r JOIN chain"
        " ON r.tenant=? AND r.role=? AND r.response_id=chain.parent"
        " WHERE chain.depth < ?)"
        " SELECT parent, items, thread_id FROM chain ORDER BY depth DESC",
        (tenant, role, response_id, tenant, role, MAX_CHAIN)).fetchall()
    if not rows or rows[0]["parent"] is not None:
        return None
    items: list[Any] = []
    for row in rows:
        items.extend(loads_lossless(zlib.decompress(row["items"])))
    return items, rows[-1]["thread_id"]
