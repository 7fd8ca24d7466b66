"""Edited messages: the memory of a branch the user left behind (DESIGN §3).

A chat client that lets the user edit an earlier message resends the history with
that message changed and the later turns gone. The evidence tree keeps both: the
edited message is a new node beside the old one, under the same parent, on a new
thread (:mod:`memory_core.capture.evidence`). Nothing is deleted. What changes is
which items are current:

* **An edit retires the old branch's items.** When a request's first new message is
  a user message and the parent it continues already has another user message
  under it, that sibling and everything said after it is a branch the user left.
  Each active item whose every source (``data.sources``, else its source message)
  lies in that branch gets status ``edited`` (a revision says which message replaced
  which), leaves the block, the item cache and the search indexes, and stays in the
  store for the inspector. An item also said outside the branch (earlier in the
  conversation, in another session, or again in the edited message itself) is still
  someone's statement and stays active.
* **The edit's own item replaces its counterpart.** An item of the edited message
  that the writer found in conflict with a retired one ("My budget is $500." edited
  to "My budget is $800.") or that has the same subject and kind supersedes it (the
  links point at each other; the old item keeps status ``edited``). The edit's
  items are extracted before the old branch is retired (same transaction), so a
  statement the edit repeats is a restatement, not a new item.
* **A regeneration is not an edit.** Resending the same user message for another
  answer stores no new user node; the new answer forks beside the old one and
  nothing is retired (the old answer's proposals are conversation-local anyway).
* **A new conversation is not an edit.** Conversations that start alike share
  nodes: the same system prompt, or a few-shot example exchange the client sends at
  the start of every conversation. An edit is recognised only after an answer: the
  message before the edited one is an assistant message the proxy stored as an
  upstream answer (kind ``response``), so the user saw that turn and changed what came
  after it. Editing the very first user message of a conversation therefore retires
  nothing (it cannot be told apart from a new conversation), nor does a ``/memory``
  command. Nor does editing the second: two conversations without a session header
  that open with the same message get the same answer from a model at temperature 0
  ("Hi!", "Hello! How can I help?"), so they share the first exchange, and the
  second one's next message would read as an edit of the first's. An edit needs
  :data:`EDIT_MIN_ANSWERS` answers before it; a missed edit leaves the old branch's
  items active (the edit's own items still supersede or conflict with them as any
  later statement does), a false one would hide another conversation's memory.
* **A branch that goes on is not abandoned.** An agent that forks on purpose
  continues both branches. When an answer is stored on a path through a retired
  branch (:func:`restore_continued`, run after the answer, off the request path),
  that branch's ``edited`` items become active again (a ``restored`` revision),
  with their links to the edit's items cut; an item of the edit that had replaced
  one of them is retired in its turn (:func:`_retire_rival`). The rule that keeps each view
  consistent: memory follows the branch that was continued last; a branch left
  behind stops speaking for the user until it is continued again.

Called by :mod:`memory_core.capture.jobs` inside the writer's transaction.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from memory_core.items import fields
from memory_core.models import Scope
from memory_core.store.api import Row, Tx
from memory_core.tools.commands import is_command

EDITED = "edited"
"""Status of an item whose every source lies in a branch the user edited away."""
EDIT_MIN_ANSWERS = 2
"""Assistant messages the history must hold before a changed user message for it to
count as an edit: conversations of one key and session that open alike ("Hi!" and
the answer a model gives at temperature 0) share their first exchange's nodes, and
the second conversation's next message must not retire the first one's items."""


def is_edit(messages: list[Any], first_new: int) -> bool:
    """Whether a request whose messages from ``first_new`` on are new, forking from
    a stored prefix, may be an edit (module doc): its first new message is a user
    message (not a ``/memory`` command) after an assistant message. The caller checks
    that this assistant message was stored as an answer (:func:`retire_edited`)."""
    if first_new <= 0 or first_new >= len(messages):
        return False
    msg, before = messages[first_new], messages[first_new - 1]
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return False
    if not isinstance(before, dict) or before.get("role") != "assistant":
        return False
    answers = sum(1 for m in messages[:first_new]
                  if isinstance(m, dict) and m.get("role") == "assistant")
    if answers < EDIT_MIN_ANSWERS:
        return False  # an opening two conversations may share (module doc)
    content = msg.get("content")
    return not (isinstance(content, str) and is_command(content))


def _data(row: Row) -> dict[str, Any]:
    return fields.data_of(row)


def retire_edited(tx: Tx, scope: Scope, parent_id: int, new_id: int,
                  now: float | None = None) -> list[int]:
    """Retire the items of the branches that user message ``new_id`` replaced under
    ``parent_id`` (module doc) and link the edit's items to their counterparts.
    Returns the ids of the items retired (``[]`` when ``new_id`` has no sibling)."""
    now = time.time() if now is None else now
    items = tx.item_writes
    parent = tx.inspection.message(parent_id)
    if parent is None or parent["kind"] != "response":
        return []  # a prefix the client wrote (a few-shot example): not an edit
    branch = items.branch_messages(parent_id, new_id)
    if not branch:
        return []
    retired: dict[int, Row] = {}
    for row in items.items_sourced_in(scope.tenant, scope.role, list(branch)):
        if any(m not in branch for m in fields.sources(row)):
            continue  # said outside the branch as well: still the user's statement
        root = branch[int(row["source_message_id"])]
        data = _data(row)
        data["edited"] = {"branch": root, "by": new_id}
        item_id = int(row["id"])
        items.set_data(item_id, orjson.dumps(data).decode())
        items.set_status(item_id, EDITED, None, now)
        items.revision(item_id, "status", "active", EDITED,
                       f"edited: message {root} was replaced by message {new_id}", now)
        items.queue_index("item", item_id, "delete")
        retired[item_id] = row
    for row in retired.values():
        _uncover(tx, row, retired, now)
    if retired:
        _link_counterparts(tx, scope, new_id, retired, now)
    return sorted(retired)


def _uncover(tx: Tx, row: Row, retired: dict[int, Row], now: float) -> None:
    """The item a retired correction superseded ("My budget is $500" before the branch,
    "Actually, $800" in it) is current again: the statement that replaced it was
    edited away (:func:`restore_continued` supersedes it again if the branch goes on)."""
    old_id = row["supersedes"]
    if old_id is None or int(old_id) in retired:
        return
    items = tx.item_writes
    old = items.item(int(old_id))
    if old is None or old["status"] != "superseded" or old["superseded_by"] != row["id"]:
        return
    items.set_status(int(old_id), "active", None, now)
    items.revision(int(old_id), "status", "superseded", "active",
                   f"restored: item {row['id']} that replaced it was edited away", now)
    items.queue_index("item", int(old_id))


def _link_counterparts(tx: Tx, scope: Scope, new_id: int, retired: dict[int, Row],
                       now: float) -> None:
    """Each item of the edited message ``new_id`` supersedes the retired item it
    conflicts with, else one of the same kind and subject (newest first)."""
    items = tx.item_writes
    taken: set[int] = set()
    for new in items.items_sourced_in(scope.tenant, scope.role, [new_id]):
        old = new["conflict_with"] if new["conflict_with"] in retired else None
        if old is None and new["subject"]:
            old = next((i for i in sorted(retired, reverse=True)
                        if i not in taken and retired[i]["kind"] == new["kind"]
                        and retired[i]["subject"] == new["subject"]), None)
        if old is None or old in taken:
            continue
        taken.add(old)
        items.link_edit(old, int(new["id"]))
        items.revision(old, "superseded_by", None, new["id"],
                       f"edited: replaced by item {new['id']} of the edited message", now)


def restore_continued(tx: Tx, scope: Scope, message_id: int,
                      now: float | None = None) -> list[int]:
    """Make the ``edited`` items of every retired branch that stored message
    ``message_id``'s path runs through active again (module doc: a branch that goes
    on), their links to the edit's items cut. Returns the ids restored. One indexed
    read when the role has no edited item, the usual case; the path is read only
    otherwise."""
    now = time.time() if now is None else now
    items = tx.item_writes
    edited = items.edited_items(scope.tenant, scope.role)
    if not edited:
        return []
    on_path = set(tx.capture.path_ids(message_id))
    restored: list[int] = []
    rivals: list[tuple[int, int, int, int]] = []  # (edit's item, restored item, branches)
    for row in edited:
        data = _data(row)
        edit = data.get("edited")
        root = edit.get("branch") if isinstance(edit, dict) else None
        if root not in on_path:
            continue
        item_id = int(row["id"])
        if row["superseded_by"] is not None and isinstance(edit, dict) \
                and edit.get("by") is not None:
            rivals.append((int(row["superseded_by"]), item_id, int(edit["by"]), int(root)))
        data.pop("edited", None)
        items.set_data(item_id, orjson.dumps(data).decode())
        items.link_edit(item_id, None)
        items.set_status(item_id, "active", None, now)
        items.revision(item_id, "status", EDITED, "active",
                       f"restored: the branch of message {root} was continued", now)
        items.queue_index("item", item_id)
        restored.append(item_id)
        old_id = row["supersedes"]
        old = items.item(int(old_id)) if old_id is not None else None
        if old is not None and old["status"] == "active":  # _uncover, undone
            items.mark_superseded(int(old_id), item_id, now)
            items.revision(int(old_id), "status", "active", "superseded",
                           f"superseded again by item {item_id}: its branch was continued",
                           now)
            items.queue_index("item", int(old_id))
    for rival_id, item_id, branch, by in rivals:
        _retire_rival(tx, rival_id, item_id, branch, by, now)
    return restored


def _retire_rival(tx: Tx, rival_id: int, item_id: int, branch: int, by: int,
                  now: float) -> None:
    """The edit's item ``rival_id`` that had replaced the restored item ``item_id``
    ("My budget is 800 EUR." in the edit, "… 500 EUR." in the branch continued) is
    retired in its turn (status ``edited``, the links pointing the other way): one
    value per subject speaks, the one of the branch continued last. The edit's other
    items stay active; continuing the edit's branch (``branch``) restores it."""
    items = tx.item_writes
    rival = items.item(rival_id)
    if rival is None or rival["status"] != "active":
        return
    data = _data(rival)
    data["edited"] = {"branch": branch, "by": by}
    items.set_data(rival_id, orjson.dumps(data).decode())
    items.set_status(rival_id, EDITED, None, now)
    items.revision(rival_id, "status", "active", EDITED,
                   f"edited: the branch of message {by} was continued", now)
    items.queue_index("item", rival_id, "delete")
    items.link_edit(rival_id, item_id)
    items.revision(rival_id, "superseded_by", None, item_id,
                   f"edited: replaced by item {item_id} of the branch continued", now)
