"""Answer-key assertions on the store, task-state accuracy and the store's invariants.

:func:`load_view` reads one session's rows from the store into plain dicts (a
:class:`StoreView`); everything else here is a pure function of a view and the
answer key, so each rule is unit-tested on hand-made rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_core.capture.tree import message_text
from memory_core.store.api import Tx
from proxy.evaluation.generator import KeyItem, TaskExpectation
from proxy.evaluation.metrics import has_needle, line_has_all


@dataclass
class StoreView:
    """The rows of one session (tenant, role, session) as dicts.

    ``items``: memory_items (id, kind, text, status, source_message_id).
    ``prefs``: agent_memories of category user_preferences (key, title, content).
    ``tasks``: task_state (label, text, status). ``messages``: (id, thread_id,
    parent_id, msg_role, text, node_key, hidden). ``summaries``: active
    summary_nodes (level, message_ids as JSON text). ``threads``: thread ids.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    prefs: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)


def load_view(tx: Tx, tenant: str, role: str, session: str) -> StoreView:
    """Read the session's rows (a read job, ``store.read_tx``)."""
    return StoreView(**tx.operator.session_rows(tenant, role, session))


def storage_assertions(key: Sequence[KeyItem], view: StoreView) -> list[dict[str, Any]]:
    """Check every answer-key value against the store; one dict per assertion.

    ``item`` values: the current value is held by an *active* memory item; each
    older value by a *superseded* item; no active item holds an older value without
    the current one. ``agent_memory``: a user preference whose content holds the
    needle. ``tool_message``: a stored ``tool`` message holds it. Task items are
    checked by :func:`task_accuracy`. Each dict: ``item``, ``check``, ``ok``.
    """
    out: list[dict[str, Any]] = []

    def add(item: KeyItem, check: str, ok: bool) -> None:
        out.append({"item": item.id, "category": item.category, "check": check, "ok": ok})

    for k in key:
        if k.store == "item":
            add(k, "current value active", any(
                r["status"] == "active" and line_has_all(r["text"], k.current)
                for r in view.items))
            for old in k.superseded:
                label = " + ".join(old)
                add(k, f"old value superseded: {label}", any(
                    r["status"] == "superseded" and line_has_all(r["text"], old)
                    for r in view.items))
                add(k, f"old value not active: {label}", not any(
                    r["status"] == "active" and line_has_all(r["text"], old)
                    and not line_has_all(r["text"], k.current) for r in view.items))
        elif k.store == "agent_memory":
            add(k, "preference stored", any(line_has_all(p["content"], k.current)
                                            for p in view.prefs))
        elif k.store == "tool_message":
            add(k, "tool result stored", any(
                m["msg_role"] == "tool" and line_has_all(m["text"], k.current)
                for m in view.messages))
    return out


def task_accuracy(expected: Sequence[TaskExpectation], view: StoreView
                  ) -> list[dict[str, Any]]:
    """For each expected task line: a row with its label and needle and that status.

    Each dict: ``label``, ``needle``, ``expected``, ``found`` (statuses of matching
    rows), ``ok``."""
    out = []
    for exp in expected:
        found = [r["status"] for r in view.tasks
                 if r["label"] == exp.label and has_needle(r["text"], exp.needle)]
        out.append({"label": exp.label, "needle": exp.needle, "expected": exp.status,
                    "found": found, "ok": exp.status in found})
    return out


def store_invariants(view: StoreView, sent: Sequence[dict[str, Any]], *, whole_history: bool
                     ) -> dict[str, bool | None]:
    """Invariants of the store after a session.

    ``sent``: every message the client ever had (its whole history, final reply
    included). ``evidence_kept``: each of their texts is stored. ``stored_once``:
    (whole-history clients only, else ``None``) the session holds exactly those
    messages, once each, in order, on one path. ``no_duplicate_rows``: no node key
    twice, no memory item twice from one message, no two active summaries of the
    same range.
    """
    stored = Counter(m["text"] for m in view.messages if not m["hidden"])
    wanted = [message_text(m) for m in sent]
    evidence = all(stored[t] > 0 for t in wanted)
    once: bool | None = None
    if whole_history:
        visible = [m for m in view.messages if not m["hidden"]]
        chained = all(b["parent_id"] == a["id"] for a, b in zip(visible, visible[1:],
                                                                  strict=False))
        once = chained and [m["text"] for m in visible] == wanted
    keys = Counter(m["node_key"] for m in view.messages)
    items = Counter((r["source_message_id"], r["kind"], r["text"]) for r in view.items)
    ranges = Counter((s["level"], s["message_ids"]) for s in view.summaries)
    dup_free = (max(keys.values(), default=1) == 1 and max(items.values(), default=1) == 1
                and max(ranges.values(), default=1) == 1)
    return {"evidence_kept": evidence, "stored_once": once, "no_duplicate_rows": dup_free}
