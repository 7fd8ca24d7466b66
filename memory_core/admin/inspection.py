"""Operator reads of one item, one message, or everything stored: inspect and export.

Each function reads inside one reader transaction (``store.read_tx(fn, …)``).
"""

from __future__ import annotations

from typing import Any

from memory_core.capture.evidence import loads_lossless
from memory_core.errors import NotFoundError
from memory_core.store.api import Tx
from memory_core.store.migrations import SCHEMA_VERSION


def parse_ref(ref: str) -> tuple[str, int]:
    """``(kind, id)`` of an operator's reference: ``item:7`` → ``("item", 7)``,
    ``msg:12`` or ``12`` → ``("msg", 12)``. Raises ``ValueError`` for a malformed ref."""
    kind, _, num = ref.partition(":") if ":" in ref else ("msg", "", ref)
    try:
        ident = int(num)
    except ValueError as exc:
        raise ValueError(f"not an id: {ref!r} (use item:N or msg:N)") from exc
    if kind in ("item", "i"):
        return "item", ident
    if kind in ("msg", "m", "message"):
        return "msg", ident
    raise ValueError(f"unknown reference kind {kind!r} (use item:N or msg:N)")


def inspect(tx: Tx, kind: str, ident: int) -> dict[str, Any]:
    """Return an item (``kind`` ``"item"``) or a message (``"msg"``) in full
    (:func:`parse_ref` gives both).

    Items include numbers, condition, scope, source message text, supersession
    links (both directions, as chains) and revision history. Raises
    ``NotFoundError`` for an unknown id.
    """

    reads = tx.inspection
    if kind == "item":
        row = reads.item(ident)
        if row is None:
            raise NotFoundError(f"no memory item {ident}")
        out = dict(row)
        out["data"] = loads_lossless(row["data"])
        out["ref"] = f"item:{ident}"
        src = reads.message_brief(row["source_message_id"])
        out["source"] = src if src else None
        out["supersedes_chain"] = _chain(tx, row, "supersedes")
        out["superseded_by_chain"] = _chain(tx, row, "superseded_by")
        out["revisions"] = reads.revisions(ident)
        return out
    msg = reads.message(ident)
    if msg is None:
        raise NotFoundError(f"no message {ident}")
    found = {k: v for k, v in msg.items() if k != "raw_json"}
    found["message"] = loads_lossless(msg["raw_json"])
    found["ref"] = f"msg:{ident}"
    found["items"] = reads.message_items(ident)
    return found


def _chain(tx: Tx, row: Any, link: str) -> list[dict[str, Any]]:
    """``{id, text, status}`` of the items reached from ``row`` by following ``link``
    (``supersedes`` or ``superseded_by``), nearest first, at most 100."""
    chain: list[dict[str, Any]] = []
    cur = row[link]
    while cur is not None and len(chain) < 100:
        r = tx.inspection.item_link(cur, link)
        if r is None:
            break
        chain.append({"id": r["id"], "text": r["text"], "status": r["status"]})
        cur = r[link]
    return chain


def export(
    tx: Tx,
    *,
    session: str | None = None,
    role: str | None = None,
    tenant: str | None = None,
    thread_id: int | None = None,
    events: bool = False,
) -> dict[str, Any]:
    """Return stored threads and messages (and events) as plain JSON-ready dicts.

    Filters combine with AND. ``session`` matches ``X-LCM-Session`` values.
    Messages carry ``id`` (the public message id), ``parent_id``, ``role``,
    ``kind``, ``hidden``, ``text``, ``message`` (the original JSON) and
    ``created_at`` (UNIX seconds).
    """
    filtered = any(v is not None for v in (session, role, tenant, thread_id))

    threads = []
    for t in tx.inspection.export_threads(session=session, role=role, tenant=tenant,
                                          thread_id=thread_id):
        msgs = [
            {
                "id": m["id"],
                "parent_id": m["parent_id"],
                "role": m["msg_role"],
                "kind": m["kind"],
                "hidden": bool(m["hidden"]),
                "text": m["text"],
                "tokens": m["tokens"],
                "message": loads_lossless(m["raw_json"]),
                "created_at": m["created_at"],
            }
            for m in tx.inspection.thread_messages(t["id"])
        ]
        threads.append(
            {
                "id": t["id"],
                "tenant": t["tenant"],
                "role": t["role"],
                "session": t["session"] or None,
                "parent_thread_id": t["parent_thread_id"],
                "fork_message_id": t["fork_message_id"],
                "head_message_id": t["head_message_id"],
                "created_at": t["created_at"],
                "updated_at": t["updated_at"],
                "messages": msgs,
            }
        )
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "threads": threads}
    if events:
        ids = [t["id"] for t in threads]
        rows = []
        # A tenant's or role's export also holds its events of no thread (a body the
        # proxy could not read), as its purge removes them; a session's or thread's
        # holds its threads' events only.
        owner = ((tenant, role) if filtered and session is None and thread_id is None
                 else None)
        if ids or not filtered or owner is not None:
            for e in tx.inspection.events(ids if filtered else None, owner=owner):
                rows.append(
                    {
                        "id": e["id"],
                        "request_id": e["request_id"],
                        "thread_id": e["thread_id"],
                        "kind": e["kind"],
                        "created_at": e["created_at"],
                        "data": loads_lossless(e["data"]),
                    }
                )
        out["events"] = rows
    return out
