"""Operator reads, scoped: what one tenant (and role) has stored, for the admin API,
the inspector, ``/memory`` commands and ``lcm-proxy doctor``.

Every function takes a store transaction (:class:`memory_core.store.api.Tx`, from
``store.read_tx``) and optional ``tenant``/``role`` filters;
``None`` means "every tenant" (or role). A tenant filter is applied by the store, on
every table read, so a scoped caller can never see another tenant's rows — that is the
isolation promise of DESIGN §1 and issue 9, and why these reads exist beside the
engine's global ones. Shapes are plain JSON-ready dicts; times are UNIX seconds.
"""

from __future__ import annotations

from typing import Any

import orjson

from memory_core.errors import NotFoundError
from memory_core.store.api import Tx
from memory_core.tools.commands import is_command

INDEX_CHECKPOINTS = ("index_text", "index_vector")
"""Checkpoint names of the derived-index workers (memory_core.search.indexer)."""


def _snippet(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def status_for(tx: Tx, tenant: str | None = None,
               role: str | None = None) -> dict[str, Any]:
    """Counts and the last injection of one scope.

    Returns ``{tenant, role, counts: {threads, messages, hidden_messages, events,
    memory_items, agent_memories, task_state, summary_nodes}, items_by_status,
    summary_levels: [{level, nodes, tokens, source_tokens}], last_message_at,
    last_injection: {request_id, created_at, trigger, used_tokens, budget_tokens,
    token_source, items, thread_id} | None}``.
    """
    got = tx.operator.scope_status(tenant, role)
    row = got["last_assembly"]
    last = None
    if row is not None:
        data = orjson.loads(row["data"])
        last = {"request_id": row["request_id"], "created_at": row["created_at"],
                "trigger": row["trigger"], "used_tokens": row["used_tokens"],
                "budget_tokens": row["budget_tokens"], "token_source": row["token_source"],
                "thread_id": row["thread_id"],
                "items": sum(1 for r in data.get("included", [])
                             if str(r.get("ref", "")).startswith("item:")),
                "skipped": data.get("skipped")}
    return {"tenant": tenant, "role": role, "counts": got["counts"],
            "items_by_status": got["items_by_status"], "summary_levels": got["summary_levels"],
            "last_message_at": got["last_message_at"], "last_injection": last}


def list_tenants(tx: Tx) -> list[dict[str, Any]]:
    """Every tenant seen in ``threads``: ``[{tenant, roles, threads, messages,
    last_activity}]``, most recently active first."""
    return [{**r, "roles": sorted(r["roles"])} for r in tx.operator.tenants()]


def list_threads(tx: Tx, *, tenant: str | None = None,
                 role: str | None = None, session: str | None = None, limit: int = 50,
                 offset: int = 0) -> dict[str, Any]:
    """Threads of a scope, most recently updated first.

    Returns ``{total, threads: [{id, tenant, role, session, parent_thread_id,
    fork_message_id, head_message_id, path_length, own_messages, title, command,
    created_at, updated_at}]}``; ``title`` is the thread's first user message,
    shortened; ``command`` is true when that message is an in-chat ``/memory``
    command (the exchange is kept as evidence; it is no conversation of its own).
    """
    total, rows = tx.operator.threads_page(tenant=tenant, role=role, session=session,
                                           limit=max(0, limit), offset=max(0, offset))
    threads = [{
        "id": r["id"], "tenant": r["tenant"], "role": r["role"], "session": r["session"] or None,
        "parent_thread_id": r["parent_thread_id"], "fork_message_id": r["fork_message_id"],
        "head_message_id": r["head_message_id"],
        "path_length": (r["head_depth"] + 1) if r["head_depth"] is not None else 0,
        "own_messages": r["own_messages"], "title": _snippet(r["first_user"], 100),
        "command": bool(r["first_user"]) and is_command(r["first_user"]),
        "created_at": r["created_at"], "updated_at": r["updated_at"],
    } for r in rows]
    return {"total": total, "threads": threads}


def thread_detail(tx: Tx, thread_id: int, *, tenant: str | None = None,
                  role: str | None = None) -> dict[str, Any]:
    """One thread: its path (root → head), branch points, forks, task state, summaries.

    ``messages``: ``[{id, parent_id, msg_role, kind, hidden, text, tokens, created_at,
    summary_node_id, thread_id, children, alternatives: [{id, thread_id, msg_role,
    text}], forks: [thread ids]}]`` — a message with ``children`` > 1 is a branch
    point; ``alternatives`` are the children not on this path. ``summaries``: the
    forest (:func:`summary_forest`). Raises ``NotFoundError`` when the thread does
    not exist or lies outside the ``tenant``/``role`` filter (indistinguishable).
    """
    t = tx.operator.thread(thread_id, tenant=tenant, role=role)
    if t is None:
        raise NotFoundError(f"no thread {thread_id}")
    msgs: list[dict[str, Any]] = []
    if t["head_message_id"] is not None:
        path = tx.operator.thread_path(t["head_message_id"])
        on_path = {r["id"] for r in path.messages}
        children: dict[int, list[dict[str, Any]]] = {}
        for c in path.children:
            children.setdefault(c["parent_id"], []).append(c)
        forks: dict[int, list[int]] = {}
        for fork_id, at in path.forks:
            forks.setdefault(at, []).append(fork_id)
        for r in path.messages:
            kids = children.get(r["id"], [])
            msgs.append({
                "id": r["id"], "parent_id": r["parent_id"], "msg_role": r["msg_role"],
                "kind": r["kind"], "hidden": bool(r["hidden"]), "text": r["text"],
                "tokens": r["tokens"], "created_at": r["created_at"],
                "summary_node_id": r["summary_node_id"], "thread_id": r["thread_id"],
                "children": len(kids),
                "alternatives": [{"id": c["id"], "thread_id": c["thread_id"],
                                  "msg_role": c["msg_role"], "text": _snippet(c["text"])}
                                 for c in kids if c["id"] not in on_path],
                "forks": [x for x in forks.get(r["id"], []) if x != thread_id],
            })
    return {
        "thread": t,
        "messages": msgs,
        "branch_points": [m["id"] for m in msgs if m["children"] > 1 or m["forks"]],
        "task_state": tx.operator.task_state(thread_id),
        "summaries": summary_forest(tx, thread_id, tenant=t["tenant"], role=t["role"],
                                    path_ids=[m["id"] for m in msgs]),
    }


def summary_forest(tx: Tx, thread_id: int, *, tenant: str, role: str,
                   path_ids: list[int] | None = None) -> list[dict[str, Any]]:
    """The summary nodes of a thread as a forest: roots (no parent, highest level
    first) with nested ``children``. A node belongs to the thread when it was made
    for it or covers a message on its path. Each node: ``{id, level, first_message_id,
    last_message_id, message_ids, text, tokens, source_tokens, model, status,
    parent_id, children}``."""
    path = set(path_ids or [])
    nodes: dict[int, dict[str, Any]] = {}
    for r in tx.operator.summary_nodes(tenant, role):
        if r["thread_id"] != thread_id and r["first_message_id"] not in path:
            continue
        node = {k: v for k, v in r.items() if k not in ("tenant", "role")}
        node["message_ids"] = orjson.loads(r["message_ids"])
        node["children"] = []
        nodes[r["id"]] = node
    roots: list[dict[str, Any]] = []
    for node in sorted(nodes.values(), key=lambda n: (n["first_message_id"], n["id"])):
        parent = nodes.get(node["parent_id"]) if node["parent_id"] is not None else None
        (parent["children"] if parent is not None else roots).append(node)
    roots.sort(key=lambda n: (-n["level"], n["first_message_id"]))
    return roots


def list_items(tx: Tx, *, tenant: str | None = None,
               role: str | None = None, status: str | None = None, kind: str | None = None,
               limit: int = 200, offset: int = 0, thread_id: int | None = None,
               text: str | None = None) -> dict[str, Any]:
    """Memory items of a scope, newest first, with their supersession chains.

    ``thread_id`` keeps the items extracted in that thread; ``text`` those whose
    text or subject contains it (case-insensitive for ASCII letters).

    Returns ``{total, items: [{id, tenant, role, kind, status, text, subject, value,
    unit, condition, supersedes, superseded_by, conflict_with, source_message_id,
    evidence, created_at, updated_at}], chains: [[oldest id, …, newest id]]}``; a
    chain is listed once, for every listed item that has a predecessor or successor.
    """
    total, items = tx.operator.items_page(
        tenant=tenant, role=role, status=status, kind=kind, thread_id=thread_id,
        text=text or None, limit=max(0, limit), offset=max(0, offset))
    chains: list[list[int]] = []
    seen: set[int] = set()
    for it in items:
        if it["id"] in seen or (it["supersedes"] is None and it["superseded_by"] is None):
            continue
        head = it["id"]
        for _ in range(200):  # walk to the newest
            nxt = tx.operator.item_brief(head)
            if nxt is None or nxt["superseded_by"] is None:
                break
            head = nxt["superseded_by"]
        chain, cur = [], head
        for _ in range(200):  # then back to the oldest
            r = tx.operator.item_brief(cur)
            if r is None:
                break
            chain.append(r["id"])
            if r["supersedes"] is None:
                break
            cur = r["supersedes"]
        chain.reverse()
        seen.update(chain)
        chains.append(chain)
    return {"total": total, "items": items, "chains": chains}


def corrections(tx: Tx, *, tenant: str | None = None,
                role: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """Every supersession of a scope, whatever else is listed: the superseded items,
    most recently superseded first, each followed forward to the item now in force.

    Returns ``{total, chains: [[{id, status, kind, text, updated_at}, …]]}``, each
    chain oldest → newest; ``total`` counts superseded items. A chain that is the
    tail of another one on the same page is left out (shown inside the longer one).
    """
    total, starts = tx.operator.superseded_page(tenant=tenant, role=role,
                                                limit=max(0, limit), offset=max(0, offset))
    chains: list[list[dict[str, Any]]] = []
    for start in starts:
        chain: list[dict[str, Any]] = []
        cur: int | None = start
        for _ in range(200):  # forward to the item in force
            if cur is None or any(c["id"] == cur for c in chain):
                break
            r = tx.operator.item_brief(cur)
            if r is None:
                break
            chain.append(r)
            cur = r["superseded_by"]
        chains.append(chain)
    ids = [tuple(c["id"] for c in ch) for ch in chains]
    kept = [ch for ch, key in zip(chains, ids, strict=True)
            if not any(len(o) > len(key) and o[-len(key):] == key for o in ids)]
    for ch in kept:
        for c in ch:
            c.pop("supersedes", None)
            c.pop("superseded_by", None)
    return {"total": total, "chains": kept}


def describe_hits(tx: Tx, hits: list[tuple[str, int, float]], *,
                  tenant: str, role: str) -> list[dict[str, Any]]:
    """Rows for search hits ``(kind, ref_id, score)``, re-checked against the scope.

    Returns ``[{kind, id, score, text, status, thread_id, message_id, label}]`` in
    the hits' order: ``message_id`` is the message itself or an item's source;
    ``status`` an item's. Hits outside ``tenant``/``role`` or gone are left out.
    """
    out: list[dict[str, Any]] = []
    for kind, ref, score in hits:
        if kind not in ("message", "item", "summary", "agent_memory"):
            continue
        row: dict[str, Any] = {"kind": kind, "id": ref, "score": score, "status": None,
                               "thread_id": None, "message_id": None, "label": kind}
        r = tx.operator.ref_row(kind, ref)
        if r is None:
            continue
        if kind == "agent_memory":
            if r["role"] != role or r["tenant"] not in (tenant, "*"):
                continue
            row.update(text=f"{r['title']}: {r['content']}",
                       label=f"agent memory ({r['category']})")
        elif (r["tenant"], r["role"]) != (tenant, role):
            continue
        elif kind == "message":
            row.update(text=r["text"], thread_id=r["thread_id"], message_id=ref,
                       label=f"message ({r['msg_role']})")
        elif kind == "item":
            row.update(text=r["text"], thread_id=r["thread_id"], status=r["status"],
                       message_id=r["source_message_id"], label=f"item ({r['kind']})")
        else:
            row.update(text=r["text"], thread_id=r["thread_id"],
                       label=f"summary (level {r['level']})")
        out.append(row)
    return out


def item_scope(tx: Tx, item_id: int) -> tuple[str, str, str] | None:
    """Return ``(tenant, role, session)`` of a memory item, or ``None`` when it does
    not exist (``session`` is ``""`` when none was given)."""
    return tx.operator.item_scope(item_id)


def _own_points(tx: Tx, names: tuple[str, str]) -> dict[str, int]:
    """Every ``index_*`` checkpoint, this replica's ``names`` reported under the plain
    :data:`INDEX_CHECKPOINTS` (0 when unset), other replicas' under their own."""
    points = tx.index.index_checkpoints()
    out = {plain: int(points.pop(name, 0)) for plain, name in zip(INDEX_CHECKPOINTS, names,
                                                                   strict=True)}
    for name, pos in points.items():
        out.setdefault(name, int(pos))
    return out


def index_lag(tx: Tx, names: tuple[str, str] = INDEX_CHECKPOINTS) -> dict[str, Any]:
    """Outbox rows each derived-index worker has not applied yet.

    Returns ``{outbox_head, indexers: {name: {checkpoint, lag}}}`` for the text and
    vector workers (a missing checkpoint counts as 0: nothing applied yet) and for
    any other ``index_*`` checkpoint found. ``names``: this replica's checkpoints
    (:func:`memory_core.replica.checkpoint_names`), reported as ``index_text`` and
    ``index_vector``; other replicas' appear as ``index_text@<id>``.
    """
    head = tx.index.outbox_head()
    points = _own_points(tx, names)
    out: dict[str, dict[str, int]] = {}
    for name in sorted(points):
        pos = points[name]
        out[name] = {"checkpoint": pos, "lag": tx.index.outbox_after(pos)}
    return {"outbox_head": head, "indexers": out}


def index_lag_seconds(tx: Tx, now: float, names: tuple[str, str] = INDEX_CHECKPOINTS
                      ) -> dict[str, float]:
    """How far behind each derived-index worker is, as an age: ``{name: seconds}``.

    For each checkpoint of :func:`index_lag` (named as there), the seconds from the
    ``created_at`` of the oldest stored message whose outbox row lies past the
    checkpoint to ``now`` (epoch seconds); ``0.0`` when every message is applied.
    Grows while a worker is stalled, even when no new message arrives.
    """
    points = _own_points(tx, names)
    out: dict[str, float] = {}
    for name in sorted(points):
        at = tx.index.oldest_pending_message_at(points[name])
        out[name] = max(0.0, now - at) if at is not None else 0.0
    return out


def messages_sequence(tx: Tx) -> int:
    """The highest message id ever assigned (0 before the first).

    The value only grows, by one per committed insert, and neither deletes nor
    rolled-back inserts move it back (SQLite: ``messages.id`` is ``AUTOINCREMENT``).
    """
    return tx.maintenance.message_id_high_water()


def integrity_check(tx: Tx) -> list[str]:
    """The store's integrity check, a line per problem (``["ok"]`` when healthy;
    SQLite: ``PRAGMA integrity_check``)."""
    return tx.maintenance.integrity_check()
