"""Purge: irreversibly remove everything stored for a thread, a session, a role or a
tenant.

Raw evidence is never deleted except here (DESIGN §4). :func:`purge` is a writer
job: it runs inside the store's write transaction, so a purge is all or nothing.
It removes the matching rows of every table that holds conversation content —
threads, messages, events, memory items and their revisions, task state, summary
nodes, assembly logs, forwarded request bodies, cached embeddings, the extraction
queue, splices, Responses API response and conversation maps, and agent memories
when the filter is a role or tenant (agent memories are not per session) — and
appends an ``index_outbox`` ``delete`` for every removed message, item, agent
memory and summary, so the derived indexes (Tantivy, vectors) drop them when their
workers next run. An item of the scope that a message outside it stated too (a fact
restated in another session: ``data.sources``) is not removed: it cites its newest
surviving statement, in that statement's thread and session. An item outside the
scope that a removed item superseded (a correction said in the purged session) or
merged away is current again — the revision that replaced it is gone — unless a
surviving item replaced that one in turn, which then supersedes it (a ``restored``
revision says which). Deleted pages are zeroed (``secure_delete``) so the text does
not linger in free pages of the file.

Filters combine with AND: ``session`` alone purges that ``X-LCM-Session`` value in
every tenant and role; add ``tenant``/``role`` to narrow it. ``thread`` (a thread id
as ``memory search``, ``export`` and ``inspect`` show it) purges one conversation,
with or without ``X-LCM-Session``, and the branches forked from it (an edited or
regenerated message's thread: the same conversation). An item also stated in another
thread stays with its text (that conversation said it too) and cites only its
surviving statements; a surviving item that cited a purged statement or named a
purged thread (``data.sources``, ``occasion_threads``, ``resent_threads``) loses it.
A purge also records one ``purge`` event (filters and counts, no content) as an
audit trail.

Copies of the purged text in rows that stay (another conversation's reply, summary,
item, assembly log, forwarded body, splice, Responses chain row) are reported and,
when asked (``scrub_copies``), scrubbed by redaction's copy rule; other users' own
statements of it are named, never changed (:mod:`memory_core.store.purge_copies`).
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from memory_core.store.api import OUTBOX_KINDS, Tx

__all__ = ["OUTBOX_KINDS", "check_filters", "purge"]


def check_filters(tenant: str | None, role: str | None, session: str | None,
                  thread: int | None = None) -> None:
    """Raise ``ValueError`` unless at least one filter is given, none is empty and
    ``thread`` is a positive id."""
    given = {k: v for k, v in (("tenant", tenant), ("role", role), ("session", session))
             if v is not None}
    if not given and thread is None:
        raise ValueError("purge needs --thread, --session, --role or --tenant")
    for name, value in given.items():
        if not value.strip():
            raise ValueError(f"purge: {name} must not be empty")
    if thread is not None and (isinstance(thread, bool) or not isinstance(thread, int)
                               or thread < 1):
        raise ValueError("purge: thread must be a positive thread id")


def purge(tx: Tx, *, tenant: str | None = None, role: str | None = None,
          session: str | None = None, thread: int | None = None, dry_run: bool = False,
          scrub_copies: bool = False, now: float | None = None) -> dict[str, Any]:
    """Delete every row of the scope (writer job, ``store.write_tx``; see module
    docstring).

    Returns rows removed per table plus ``outbox_deletes`` (index deletes queued) and
    ``reindexed_children`` (surviving children of removed messages queued to be
    indexed again without their parent), ``sources_dropped`` (surviving items that
    lost a removed statement or thread from ``data``), and ``restored_items``: surviving items that
    a removed one had superseded or merged away, active again because the statement
    that replaced them is gone (an item replaced again by a survivor points at it
    instead). Copies of the scope's text in rows that stay (another conversation's
    reply, summary, item, assembly log, forwarded body; see
    :mod:`memory_core.store.purge_copies`) are reported: ``copies`` (``{table: [ids]}``),
    ``copies_found``, and ``held_elsewhere`` (other users' statements of it, never
    changed); with ``scrub_copies`` each copied span is replaced by the placeholder
    (``copies_scrubbed``). With ``dry_run`` the counts are exact and
    nothing changes. Raises ``ValueError`` for missing or empty filters.
    """
    check_filters(tenant, role, session, thread)
    now = time.time() if now is None else now
    counts = tx.purge.delete_scope(tenant=tenant, role=role, session=session,
                                   thread=thread, dry_run=dry_run, scrub_copies=scrub_copies)
    if not dry_run:
        filters: dict[str, str | int | bool] = {
            k: v for k, v in (("tenant", tenant), ("role", role), ("session", session),
                              ("thread", thread)) if v is not None}
        if scrub_copies:
            filters["scrub_copies"] = True
        tx.purge.record(now, orjson.dumps({"filters": filters, "counts": counts}).decode())
    return counts
