"""Redact one message: irreversibly replace its stored content, keep the conversation.

A purge (:mod:`memory_core.admin.purge`) removes a whole conversation; an operator who
must remove one pasted customer record or one wrong personal detail redacts that
message instead. :func:`redact` is a writer job (``store.write_tx``), all or nothing:
the message's text becomes ``[removed by operator]`` and its raw JSON keeps no content;
the memory items stated only there are deleted (one also stated elsewhere keeps its
text and loses this source; a correction stated only there is undone and the item it
superseded is current again, as in a purge); copies in hidden tool rounds, replies,
splices, summaries, assembly logs, forwarded bodies and Responses API chain rows lose
the copied spans (the rest of each row stays); other messages that state the same
text are named, not touched; index upserts and deletes are queued so
Tantivy and the vectors drop the text; one ``redact`` event records ids and counts, no
content. The row keeps its node key, so a client that resends its history with the
original text continues the same thread and nothing is captured again (see
:mod:`memory_core.store.redaction`).
"""

from __future__ import annotations

from typing import Any

from memory_core.store.api import Tx
from memory_core.store.scrub import PLACEHOLDER

__all__ = ["PLACEHOLDER", "redact"]


def redact(tx: Tx, message_id: int, *, tenant: str | None = None, role: str | None = None,
           session: str | None = None, dry_run: bool = False) -> dict[str, Any] | None:
    """Redact message ``message_id`` (writer job; see the module docstring).

    Returns rows changed per table (``messages``: 0 when it was redacted before),
    with ``outbox_deletes``, ``reindexed_messages``, ``restored_items``,
    ``sources_dropped``, ``forwarded_bodies_edited`` and ``response_items_scrubbed``;
    ``rows``: the ids of the rows changed per table; ``held_elsewhere``: the other
    messages that state the text and are left as they are (``[{message_id,
    thread_id, role, msg_role}]``, see :mod:`memory_core.store.redaction`); ``None``
    when no message of that id is in ``tenant``/``role``/``session``. With
    ``dry_run`` the counts are exact and nothing changes. Raises ``ValueError`` for
    an id that is not a positive integer."""
    if isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1:
        raise ValueError("redact: message id must be a positive integer")
    return tx.purge.redact_message(message_id, tenant=tenant, role=role, session=session,
                                   dry_run=dry_run)
