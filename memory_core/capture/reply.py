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
- a **bare pick** ("The editor one.", "the terminal") right after an assistant question,
  with no item of its own, names which of its candidates a pending head-only correction
  of the same speaker revises ("Actually, my font size is 14." after "editor font size"
  and "terminal font size": ``data.may_revise``, the block's "MAY REVISE … ask the
  user"); that one is superseded by it, the other stays (:func:`read_pick`). An answer
  naming neither, or both, changes nothing.

- a **take-back** ("Scratch that.", "Ignore my last message.", "Just kidding.", 当我没说,
  今のなし) withdraws what the same speaker's message before it stated: its active
  items are retracted, and what they superseded is current again
  (:func:`take_back_last`); the message itself states nothing.

The assistant message is read only when the user message could be such a reply (one
path look-up and one message read), inside the capture job's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from memory_core.extraction import extract
from memory_core.extraction import reply as said
from memory_core.items import fields
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


PICK_SCAN = 200
"""Newest active items of the scope read for a pending question a bare pick answers."""


def read_pick(tx: Tx, scope: Scope, message_id: int, text: str, speaker: str
              ) -> tuple[int, int] | None:
    """``(pending correction id, the candidate it revises)`` when user message
    ``message_id`` (``text``, no item extracted from it, said by ``speaker``: ``""``
    for the role alone) is a bare answer right after an assistant question naming
    exactly one active candidate of the newest pending correction of ``speaker``
    among the :data:`PICK_SCAN` newest active items, the question or the user's turn
    before it naming that correction's key ("font size":
    :func:`~memory_core.extraction.reply.names_head`); else ``None``. Reads nothing
    more when ``text`` is no short answer."""
    if not said.is_bare_answer(text):
        return None
    ids = tx.capture.path_ids(message_id)
    if len(ids) < 2:
        return None
    turns = {int(r["id"]): r for r in tx.history.path_messages(ids[-3:-1])}
    question = turns.get(ids[-2])
    if question is None or question["msg_role"] != "assistant" or not question["text"] \
            or not said.asks_or_offers(question["text"]):
        return None
    asked = [question["text"]] + [  # the question, and the user's turn it answers
        r["text"] or "" for i in ids[-3:-2] if (r := turns.get(i)) is not None
        and r["msg_role"] == "user"]
    for row in tx.assembly.newest_active_items(scope.tenant, scope.role, PICK_SCAN):
        pending = fields.may_revise(row)
        if len(pending) < 2 or row["supersedes"] is not None \
                or fields.speaker(row) != speaker.strip()[:64]:
            continue
        live = [r for r in map(tx.item_writes.item, pending)
                if r is not None and r["status"] == "active"]
        if len(live) < 2:
            continue
        if not any(said.names_head(t, row["subject"] or "") for t in asked):
            return None  # a question about something else ("editor or terminal?")
        meant = said.named_candidate(text, row["subject"] or "",
                                     [r["subject"] or "" for r in live])
        return None if meant is None else (int(row["id"]), int(live[meant]["id"]))
    return None


TAKE_BACK_REACH = 3
"""Messages back along the thread's path (the take-back's own included) searched for
the user message it takes back: past one assistant reply, never further."""


def take_back_last(tx: Tx, scope: Scope, message_id: int, speaker: str, *,
                   past_reply: bool = True) -> list[int]:
    """Retract the active items stated in the user message that user message
    ``message_id`` (a take-back: :func:`~memory_core.extraction.reply.takes_back_last`,
    said by ``speaker``: ``""`` for the role alone) takes back: the nearest user
    message before it on its thread's path, past at most one assistant reply. Only
    that speaker's items; returns the ids retracted (none when no such message). An
    item one of them superseded, and which it still supersedes ("My rent is 1500 EUR
    now." after "My rent is 1400 EUR."), is active again: what was taken back never
    replaced it."""
    from memory_core.items.writer import restore_item, retract_item

    ids = tx.capture.path_ids(message_id)[-TAKE_BACK_REACH:-1]
    rows = {int(r["id"]): r for r in tx.history.path_messages(ids)}
    before = next((i for i in reversed(ids) if (r := rows.get(i)) is not None
                   and r["msg_role"] == "user"), None)
    if before is not None and not past_reply and ids and before != ids[-1]:
        return []  # "Ignore that." after the assistant's reply sets the reply aside
    if before is None:
        return []
    done: list[int] = []
    for row in tx.item_writes.items_sourced_in(scope.tenant, scope.role, [before]):
        if row["status"] == "active" and fields.speaker(row) == speaker.strip()[:64]:
            retract_item(tx, int(row["id"]), f"taken back by the user in message {message_id}")
            done.append(int(row["id"]))
            before_it = row["supersedes"] and tx.item_writes.item(int(row["supersedes"]))
            if before_it and before_it["status"] == "superseded" \
                    and before_it["superseded_by"] == row["id"]:
                restore_item(tx, int(before_it["id"]),
                             f"its successor {row['id']} was taken back by the user")
    return done
