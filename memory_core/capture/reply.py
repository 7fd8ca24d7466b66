"""A user message read as a reply to the assistant message right before it in its thread.

Two short replies mean nothing alone (:mod:`memory_core.extraction.reply`):

- an **assent** ("yep 👍", "ok go ahead") right after an assistant message that proposes
  something makes each stated proposal of that message (not an offer asked as a question)
  the user's ``decision``, with the assent as its source message; the proposal item it
  confirms, if stored, is merged into it (:func:`memory_core.items.writer.confirm_proposal`),
  so the choice is no longer "not confirmed" and reaches other conversations as the
  user's decision;
- a **bare decline** ("I'm not interested.") right after an assistant question or offer
  answers that, and takes back no stored fact that names more than it does
  (``answering`` in :func:`memory_core.items.writer.store_extracted`), unless the
  question names the declined word ("Are you married?" then "I'm not married.").

The assistant message is read only when the user message could be such a reply (one
path look-up and one message read), inside the capture job's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from memory_core.extraction import extract
from memory_core.extraction import reply as said
from memory_core.models import Scope
from memory_core.store.api import Tx


@dataclass(frozen=True, slots=True)
class Reply:
    """What the assistant message before a user message makes of it: ``answering``
    (that message asks or offers something), the ``proposals`` an assent confirms
    (extracted ``decision`` items, text as the assistant wrote it) and the stored
    proposal rows by text, to be merged into them."""

    answering: bool
    proposals: tuple[Any, ...]
    stored: dict[str, int]


def read_reply(tx: Tx, scope: Scope, message_id: int, text: str, items: list[Any],
               redact: Callable[[str], str]) -> Reply | None:
    """The :class:`Reply` of user message ``message_id`` (``text``, its extracted
    ``items``), or ``None`` when it is no short reply or no assistant message precedes
    it. ``redact``: what capture applies to stored text before extraction."""
    assent = said.is_assent(text)
    if not assent and not any(said.bare_decline(ex) for ex in items):
        return None
    ids = tx.capture.path_ids(message_id)
    if len(ids) < 2:
        return None
    rows = tx.history.path_messages([ids[-2]])
    if not rows or rows[0]["msg_role"] != "assistant" or not rows[0]["text"]:
        return None
    before = redact(rows[0]["text"])
    proposals: tuple[Any, ...] = ()
    stored: dict[str, int] = {}
    if assent:
        proposals = tuple(
            replace(ex, kind="decision") for ex in extract(before, speaker="assistant")
            if ex.kind == "proposal" and not ex.text.rstrip().endswith(("?", "？")))
        if proposals:
            stored = {row["text"]: int(row["id"]) for row in tx.item_writes.items_sourced_in(
                scope.tenant, scope.role, [ids[-2]]) if row["kind"] == "proposal"}
    declines = [ex for ex in items if said.bare_decline(ex)]
    answering = said.asks_or_offers(before) and not any(
        said.asked_about(before, ex) for ex in declines)
    return Reply(answering, proposals, stored)
