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
a secret among its items, or ``redact_identity_numbers`` with such a number (the
items would be kept unmasked), and ``store_raw_json``
off (the original items would be kept). Such a response and its descendants then
resolve only within the process that relayed them (the proxy's in-memory map).

A request in a Responses API ``conversation`` (the upstream keeps its items) is
captured the same way: ``response_conversations`` names the newest response the
proxy relayed in each conversation, whose chain the next request follows.

Scoped by tenant and role: an id never resolves in another API key's tenant. Within
one key, :func:`owner` and :func:`conversation_owner` find which of its tenants (the
key's own, or an end user's, ``t_…~u_…``) holds an id, so that a request naming
another end user (or none) than the conversation it continues is still captured, on
that conversation's thread (docs/scopes.md). A purge removes a scope's rows with their threads
(:mod:`memory_core.admin.purge`).
"""

from __future__ import annotations

import time
import zlib
from typing import Any

from memory_core.capture.evidence import dumps_lossless, loads_lossless
from memory_core.capture.redact import may_need_redaction, redact_value
from memory_core.items.writer import USER_SEP, account_tenant
from memory_core.models import CaptureTicket, Scope
from memory_core.store.api import Tx

__all__ = ["MAX_CHAIN", "conversation", "conversation_head", "conversation_owner", "insert",
           "owner", "prepare"]

MAX_CHAIN = 100_000
"""The most rows one conversation is read back through (a guard against a cycle)."""


def prepare(items: list[Any], *, redact: bool, store_raw: bool,
            identity: bool = False) -> bytes | None:
    """The ``items`` column for a row (zlib of their lossless JSON), or ``None`` when
    the capture policy keeps this row out (see module docstring). ``identity``: the
    policy also masks identity and payment numbers (``redact_identity_numbers``)."""
    if not store_raw:
        return None
    text = dumps_lossless(items)
    flags = {"secrets": redact, "identity": identity}
    if may_need_redaction(text, **flags) and redact_value(items, **flags) != items:
        return None
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def insert(tx: Tx, scope: Scope, response_id: str, parent: str | None,
           blob: bytes | None, ticket: CaptureTicket | None = None,
           conversation_id: str | None = None) -> None:
    """Write (or replace) the row of ``response_id`` (none when ``blob`` is ``None``)
    and, with ``conversation_id``, make it that conversation's newest response.
    Writer job (``store.write_tx``): queued after the request's capture, whose
    ``ticket`` then holds the thread id."""
    result = ticket.result if ticket is not None else None
    thread_id = result.thread_id if result is not None else None
    now = time.time()
    if blob is not None:
        tx.responses.save_response(tenant=scope.tenant, role=scope.role,
                                   session=scope.session, response_id=response_id,
                                   parent=parent, thread_id=thread_id, items=blob,
                                   created_at=now)
    if conversation_id is not None:
        tx.responses.save_conversation_head(
            tenant=scope.tenant, role=scope.role, session=scope.session,
            conversation_id=conversation_id, response_id=response_id, thread_id=thread_id,
            updated_at=now)


def conversation_head(tx: Tx, tenant: str, role: str, conversation_id: str) -> str | None:
    """The newest response the proxy relayed in a Responses API conversation of this
    tenant and role, or ``None``."""
    return tx.responses.conversation_head(tenant, role, conversation_id)


def owner(tx: Tx, tenant: str, role: str, response_id: str) -> str | None:
    """The tenant of ``tenant``'s API key that holds ``response_id`` in ``role``: the
    key's own tenant or one of its end users' (``tenant`` itself included), or
    ``None``. Never a tenant of another key."""
    account = account_tenant(tenant)
    return tx.responses.response_owner(account, account + USER_SEP, role, response_id)


def conversation_owner(tx: Tx, tenant: str, role: str, conversation_id: str) -> str | None:
    """The tenant of ``tenant``'s API key that holds the head of a Responses API
    conversation in ``role`` (as :func:`owner`), or ``None``."""
    account = account_tenant(tenant)
    return tx.responses.conversation_owner(account, account + USER_SEP, role,
                                           conversation_id)


def conversation(tx: Tx, tenant: str, role: str, response_id: str
                 ) -> tuple[list[Any], int | None, str] | None:
    """The items of the conversation ``response_id`` ends, oldest first, and the
    thread id and session of its own row; ``None`` when the id is unknown in this
    tenant and role, or its chain is broken (an ancestor never stored or since
    purged)."""
    rows = tx.responses.response_chain(tenant, role, response_id, MAX_CHAIN)
    if not rows or rows[0]["parent"] is not None:
        return None
    items: list[Any] = []
    for row in rows:
        items.extend(loads_lossless(zlib.decompress(row["items"])))
    return items, rows[-1]["thread_id"], rows[-1].get("session") or ""
