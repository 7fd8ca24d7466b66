"""Operator reads, scoped: what one tenant (and role) has stored, for the admin API,
the inspector, ``/memory`` commands and ``lcm-proxy doctor``.

Every function takes a reader connection and optional ``tenant``/``role`` filters;
``None`` means "every tenant" (or role). A tenant filter is applied in SQL, on every
table read, so a scoped caller can never see another tenant's rows — that is the
isolation promise of DESIGN §1 and issue 9, and why these reads exist beside the
engine's global ones. Shapes are plain JSON-ready dicts; times are UNIX seconds.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from memory_core.errors import NotFoundError

INDEX_CHECKPOINTS = ("index_text", "index_vector")
"""Checkpoint names of the derived-index workers (memory_core.search.indexer)."""


def _where(prefix: str, **filters: Any) -> tuple[str, list[Any]]:
    """Return ``(clause, args)`` ANDing ``prefix.col = value`` for non-None values."""
    parts, args = ["1=1"], []
    for col, val in filters.items():
        if val is not None:
            parts.append(f"{prefix}{col}=?")
            args.append(val)
    return " AND ".join(parts), args


def _snippet(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def status_for(conn: sqlite3.Connection, tenant: str | None = None,
               role: str | None = None) -> dict[str, Any]:
    """Counts and the last injection of one scope.

    Returns ``{tenant, role, counts: {threads, messages, hidden_messages, events,
    memory_items, agent_memories, task_state, summary_nodes}, items_by_status,
    summary_levels: [{level, nodes, tokens, source_tokens}], last_message_at,
    last_injection: {request_id, created_at, trigger, used_tokens, budget_tokens,
    token_source, items, thread_id} | None}``.
    """
    clause, args = _where("", tenant=tenant, role=role)
    counts: dict[str, int] = {}
    for table in ("threads", "messages", "events", "memory_items", "task_state",
                  "summary_nodes"):
        counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {clause}",
                                     args).fetchone()[0]
    counts["hidden_messages"] = conn.execute(
        f"SELECT COUNT(*) FROM messages WHERE {clause} AND hidden=1", args).fetchone()[0]
    am_clause, am_args = _where("", role=role)
    if tenant is not None:
        am_clause += " AND tenant IN (?, '*')"
        am_args.append(tenant)
    counts["agent_memories"] = conn.execute(
        f"SELECT COUNT(*) FROM agent_memories WHERE {am_clause}", am_args).fetchone()[0]
    by_status = {r[0]: r[1] for r in conn.execute(
        f"SELECT status, COUNT(*) FROM memory_items WHERE {clause} GROUP BY status", args)}
    levels = [dict(r) for r in conn.execute(
        f"SELECT level, COUNT(*) AS nodes, SUM(tokens) AS tokens, SUM(source_tokens) AS"
        f" source_tokens FROM summary_nodes WHERE {clause} AND status='active'"
        f" GROUP BY level ORDER BY level", args)]
    last_msg = conn.execute(f"SELECT MAX(created_at) FROM messages WHERE {clause}",
                            args).fetchone()[0]
    row = conn.execute(
        f"SELECT * FROM assembly_logs WHERE {clause} ORDER BY id DESC LIMIT 1", args).fetchone()
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
    return {"tenant": tenant, "role": role, "counts": counts, "items_by_status": by_status,
            "summary_levels": levels, "last_message_at": last_msg, "last_injection": last}


def list_tenants(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every tenant seen in ``threads``: ``[{tenant, roles, threads, messages,
    last_activity}]``, most recently active first."""
    out = []
    for r in conn.execute(
        "SELECT tenant, GROUP_CONCAT(DISTINCT role) AS roles, COUNT(*) AS threads,"
        " MAX(updated_at) AS last_activity FROM threads GROUP BY tenant"
        " ORDER BY last_activity DESC"):
        n = conn.execute("SELECT COUNT(*) FROM messages WHERE tenant=?",
                         (r["tenant"],)).fetchone()[0]
        out.append({"tenant": r["tenant"], "roles": sorted(str(r["roles"] or "").split(",")),
                    "threads": r["threads"], "messages": n,
                    "last_activity": r["last_activity"]})
    return out


def list_threads(conn: sqlite3.Connection, *, tenant: str | None = None,
                 role: str | None = None, session: str | None = None, limit: int = 50,
                 offset: int = 0) -> dict[str, Any]:
    """Threads of a scope, most recently updated first.

    Returns ``{total, threads: [{id, tenant, role, session, parent_thread_id,
    fork_message_id, head_message_id, path_length, own_messages, title, created_at,
    updated_at}]}``; ``title`` is the thread's first user message, shortened.
    """
    clause, args = _where("t.", tenant=tenant, role=role, session=session)
    total = conn.execute(f"SELECT COUNT(*) FROM threads t WHERE {clause}", args).fetchone()[0]
    rows = conn.execute(
        "SELECT t.*, (SELECT depth FROM messages WHERE id=t.head_message_id) AS head_depth,"
        " (SELECT COUNT(*) FROM messages m WHERE m.thread_id=t.id) AS own_messages,"
        " (SELECT text FROM messages m WHERE m.thread_id=t.id AND m.msg_role='user'"
        "  ORDER BY m.id LIMIT 1) AS first_user"
        f" FROM threads t WHERE {clause} ORDER BY t.updated_at DESC, t.id DESC"
        " LIMIT ? OFFSET ?", [*args, max(0, limit), max(0, offset)]).fetchall()
    threads = [{
        "id": r["id"], "tenant": r["tenant"], "role": r["role"], "session": r["session"] or None,
        "parent_thread_id": r["parent_thread_id"], "fork_message_id": r["fork_message_id"],
        "head_message_id": r["head_message_id"],
        "path_length": (r["head_depth"] + 1) if r["head_depth"] is not None else 0,
        "own_messages": r["own_messages"], "title": _snippet(r["first_user"], 100),
        "created_at": r["created_at"], "updated_at": r["updated_at"],
    } for r in rows]
    return {"total": total, "threads": threads}


_PATH_CTE = ("WITH RECURSIVE path(id) AS (SELECT ? UNION ALL SELECT m.parent_id FROM"
             " messages m JOIN path p ON m.id=p.id WHERE m.parent_id IS NOT NULL)")


def thread_detail(conn: sqlite3.Connection, thread_id: int, *, tenant: str | None = None,
                  role: str | None = None) -> dict[str, Any]:
    """One thread: its path (root → head), branch points, forks, task state, summaries.

    ``messages``: ``[{id, parent_id, msg_role, kind, hidden, text, tokens, created_at,
    summary_node_id, thread_id, children, alternatives: [{id, thread_id, msg_role,
    text}], forks: [thread ids]}]`` — a message with ``children`` > 1 is a branch
    point; ``alternatives`` are the children not on this path. ``summaries``: the
    forest (:func:`summary_forest`). Raises ``NotFoundError`` when the thread does
    not exist or lies outside the ``tenant``/``role`` filter (indistinguishable).
    """
    clause, args = _where("", tenant=tenant, role=role)
    t = conn.execute(f"SELECT * FROM threads WHERE id=? AND {clause}",
                     [thread_id, *args]).fetchone()
    if t is None:
        raise NotFoundError(f"no thread {thread_id}")
    msgs: list[dict[str, Any]] = []
    if t["head_message_id"] is not None:
        rows = conn.execute(
            f"{_PATH_CTE} SELECT m.id, m.parent_id, m.msg_role, m.kind, m.hidden, m.text,"
            " m.tokens, m.created_at, m.summary_node_id, m.thread_id, m.depth FROM messages m"
            " JOIN path USING(id) ORDER BY m.depth", (t["head_message_id"],)).fetchall()
        on_path = {r["id"] for r in rows}
        children: dict[int, list[sqlite3.Row]] = {}
        for c in conn.execute(
                f"{_PATH_CTE} SELECT c.id, c.parent_id, c.thread_id, c.msg_role, c.text"
                " FROM messages c JOIN path p ON c.parent_id=p.id ORDER BY c.id",
                (t["head_message_id"],)):
            children.setdefault(c["parent_id"], []).append(c)
        forks: dict[int, list[int]] = {}
        for f in conn.execute(
                f"{_PATH_CTE} SELECT th.id, th.fork_message_id FROM threads th"
                " JOIN path p ON th.fork_message_id=p.id ORDER BY th.id",
                (t["head_message_id"],)):
            forks.setdefault(f["fork_message_id"], []).append(f["id"])
        for r in rows:
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
    task = [dict(r) for r in conn.execute(
        "SELECT id, label, text, status, source_message_id, updated_at FROM task_state"
        " WHERE thread_id=? ORDER BY id", (thread_id,))]
    return {
        "thread": {k: t[k] for k in t.keys()},
        "messages": msgs,
        "branch_points": [m["id"] for m in msgs if m["children"] > 1 or m["forks"]],
        "task_state": task,
        "summaries": summary_forest(conn, thread_id, tenant=t["tenant"], role=t["role"],
                                    path_ids=[m["id"] for m in msgs]),
    }


def summary_forest(conn: sqlite3.Connection, thread_id: int, *, tenant: str, role: str,
                   path_ids: list[int] | None = None) -> list[dict[str, Any]]:
    """The summary nodes of a thread as a forest: roots (no parent, highest level
    first) with nested ``children``. A node belongs to the thread when it was made
    for it or covers a message on its path. Each node: ``{id, level, first_message_id,
    last_message_id, message_ids, text, tokens, source_tokens, model, status,
    parent_id, children}``."""
    rows = conn.execute(
        "SELECT * FROM summary_nodes WHERE tenant=? AND role=? ORDER BY level DESC, id",
        (tenant, role)).fetchall()
    path = set(path_ids or [])
    nodes: dict[int, dict[str, Any]] = {}
    for r in rows:
        if r["thread_id"] != thread_id and r["first_message_id"] not in path:
            continue
        node = {k: r[k] for k in r.keys() if k not in ("tenant", "role")}
        node["message_ids"] = orjson.loads(r["message_ids"])
        node["children"] = []
        nodes[r["id"]] = node
    roots: list[dict[str, Any]] = []
    for node in sorted(nodes.values(), key=lambda n: (n["first_message_id"], n["id"])):
        parent = nodes.get(node["parent_id"]) if node["parent_id"] is not None else None
        (parent["children"] if parent is not None else roots).append(node)
    roots.sort(key=lambda n: (-n["level"], n["first_message_id"]))
    return roots


def list_items(conn: sqlite3.Connection, *, tenant: str | None = None,
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
    clause, args = _where("", tenant=tenant, role=role, status=status, kind=kind,
                          thread_id=thread_id)
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clause += (" AND (text LIKE ? ESCAPE '\\' OR COALESCE(subject, '') LIKE ?"
                   " ESCAPE '\\')")
        args += [pattern, pattern]
    total = conn.execute(f"SELECT COUNT(*) FROM memory_items WHERE {clause}",
                         args).fetchone()[0]
    cols = ("id, tenant, role, kind, status, text, subject, value, unit, condition,"
            " supersedes, superseded_by, conflict_with, source_message_id, evidence,"
            " created_at, updated_at")
    items = [dict(r) for r in conn.execute(
        f"SELECT {cols} FROM memory_items WHERE {clause} ORDER BY id DESC LIMIT ? OFFSET ?",
        [*args, max(0, limit), max(0, offset)])]
    chains: list[list[int]] = []
    seen: set[int] = set()
    for it in items:
        if it["id"] in seen or (it["supersedes"] is None and it["superseded_by"] is None):
            continue
        head = it["id"]
        for _ in range(200):  # walk to the newest
            nxt = conn.execute("SELECT superseded_by FROM memory_items WHERE id=?",
                               (head,)).fetchone()
            if nxt is None or nxt[0] is None:
                break
            head = nxt[0]
        chain, cur = [], head
        for _ in range(200):  # then back to the oldest
            r = conn.execute("SELECT id, supersedes FROM memory_items WHERE id=?",
                             (cur,)).fetchone()
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


def corrections(conn: sqlite3.Connection, *, tenant: str | None = None,
                role: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """Every supersession of a scope, whatever else is listed: the superseded items,
    most recently superseded first, each followed forward to the item now in force.

    Returns ``{total, chains: [[{id, status, kind, text, updated_at}, …]]}``, each
    chain oldest → newest; ``total`` counts superseded items. A chain that is the
    tail of another one on the same page is left out (shown inside the longer one).
    """
    clause, args = _where("", tenant=tenant, role=role)
    total = conn.execute(f"SELECT COUNT(*) FROM memory_items WHERE {clause} AND"
                         " status='superseded'", args).fetchone()[0]
    starts = [r[0] for r in conn.execute(
        f"SELECT id FROM memory_items WHERE {clause} AND status='superseded'"
        " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
        [*args, max(0, limit), max(0, offset)])]
    cols = "id, status, kind, text, updated_at, superseded_by"
    chains: list[list[dict[str, Any]]] = []
    for start in starts:
        chain: list[dict[str, Any]] = []
        cur: int | None = start
        for _ in range(200):  # forward to the item in force
            if cur is None or any(c["id"] == cur for c in chain):
                break
            r = conn.execute(f"SELECT {cols} FROM memory_items WHERE id=?", (cur,)).fetchone()
            if r is None:
                break
            chain.append(dict(r))
            cur = r["superseded_by"]
        chains.append(chain)
    ids = [tuple(c["id"] for c in ch) for ch in chains]
    kept = [ch for ch, key in zip(chains, ids, strict=True)
            if not any(len(o) > len(key) and o[-len(key):] == key for o in ids)]
    for ch in kept:
        for c in ch:
            c.pop("superseded_by", None)
    return {"total": total, "chains": kept}


def describe_hits(conn: sqlite3.Connection, hits: list[tuple[str, int, float]], *,
                  tenant: str, role: str) -> list[dict[str, Any]]:
    """Rows for search hits ``(kind, ref_id, score)``, re-checked against the scope.

    Returns ``[{kind, id, score, text, status, thread_id, message_id, label}]`` in
    the hits' order: ``message_id`` is the message itself or an item's source;
    ``status`` an item's. Hits outside ``tenant``/``role`` or gone are left out.
    """
    out: list[dict[str, Any]] = []
    for kind, ref, score in hits:
        row: dict[str, Any] = {"kind": kind, "id": ref, "score": score, "status": None,
                               "thread_id": None, "message_id": None, "label": kind}
        if kind == "message":
            r = conn.execute("SELECT tenant, role, text, thread_id, msg_role FROM messages"
                             " WHERE id=?", (ref,)).fetchone()
            if r is None or (r["tenant"], r["role"]) != (tenant, role):
                continue
            row.update(text=r["text"], thread_id=r["thread_id"], message_id=ref,
                       label=f"message ({r['msg_role']})")
        elif kind == "item":
            r = conn.execute("SELECT tenant, role, text, thread_id, status, kind,"
                             " source_message_id FROM memory_items WHERE id=?",
                             (ref,)).fetchone()
            if r is None or (r["tenant"], r["role"]) != (tenant, role):
                continue
            row.update(text=r["text"], thread_id=r["thread_id"], status=r["status"],
                       message_id=r["source_message_id"], label=f"item ({r['kind']})")
        elif kind == "summary":
            r = conn.execute("SELECT tenant, role, text, thread_id, level FROM summary_nodes"
                             " WHERE id=?", (ref,)).fetchone()
            if r is None or (r["tenant"], r["role"]) != (tenant, role):
                continue
            row.update(text=r["text"], thread_id=r["thread_id"],
                       label=f"summary (level {r['level']})")
        elif kind == "agent_memory":
            r = conn.execute("SELECT tenant, role, title, content, category FROM"
                             " agent_memories WHERE id=?", (ref,)).fetchone()
            if r is None or r["role"] != role or r["tenant"] not in (tenant, "*"):
                continue
            row.update(text=f"{r['title']}: {r['content']}",
                       label=f"agent memory ({r['category']})")
        else:
            continue
        out.append(row)
    return out


def item_scope(conn: sqlite3.Connection, item_id: int) -> tuple[str, str, str] | None:
    """Return ``(tenant, role, session)`` of a memory item, or ``None`` when it does
    not exist (``session`` is ``""`` when none was given)."""
    r = conn.execute("SELECT tenant, role, session FROM memory_items WHERE id=?",
                     (item_id,)).fetchone()
    return (r["tenant"], r["role"], r["session"]) if r is not None else None


def index_lag(conn: sqlite3.Connection) -> dict[str, Any]:
    """Outbox rows each derived-index worker has not applied yet.

    Returns ``{outbox_head, indexers: {name: {checkpoint, lag}}}`` for the text and
    vector workers (a missing checkpoint counts as 0: nothing applied yet) and for
    any other ``index_*`` checkpoint found.
    """
    head = conn.execute("SELECT COALESCE(MAX(id), 0) FROM index_outbox").fetchone()[0]
    points = {r["name"]: r["value"] for r in conn.execute(
        "SELECT name, value FROM checkpoints WHERE name LIKE 'index\\_%' ESCAPE '\\'")}
    out: dict[str, dict[str, int]] = {}
    for name in sorted(set(INDEX_CHECKPOINTS) | set(points)):
        pos = int(points.get(name, 0))
        lag = conn.execute("SELECT COUNT(*) FROM index_outbox WHERE id > ?",
                           (pos,)).fetchone()[0]
        out[name] = {"checkpoint": pos, "lag": lag}
    return {"outbox_head": head, "indexers": out}


def index_lag_seconds(conn: sqlite3.Connection, now: float) -> dict[str, float]:
    """How far behind each derived-index worker is, as an age: ``{name: seconds}``.

    For each checkpoint of :func:`index_lag`, the seconds from the ``created_at`` of
    the oldest stored message whose outbox row lies past the checkpoint to ``now``
    (epoch seconds); ``0.0`` when every message is applied. Grows while a worker is
    stalled, even when no new message arrives.
    """
    points = {r["name"]: r["value"] for r in conn.execute(
        "SELECT name, value FROM checkpoints WHERE name LIKE 'index\\_%' ESCAPE '\\'")}
    out: dict[str, float] = {}
    for name in sorted(set(INDEX_CHECKPOINTS) | set(points)):
        row = conn.execute(
            "SELECT m.created_at FROM index_outbox o JOIN messages m ON m.id = o.ref_id"
            " WHERE o.id > ? AND o.kind = 'message' ORDER BY o.id LIMIT 1",
            (int(points.get(name, 0)),)).fetchone()
        out[name] = max(0.0, now - float(row[0])) if row is not None else 0.0
    return out


def messages_sequence(conn: sqlite3.Connection) -> int:
    """The highest message id ever assigned (``sqlite_sequence``; 0 before the first).

    ``messages.id`` is ``AUTOINCREMENT``: the value only grows, by one per committed
    insert, and neither deletes nor rolled-back inserts move it back.
    """
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()
    return int(row[0]) if row is not None else 0


def integrity_check(conn: sqlite3.Connection) -> list[str]:
    """``PRAGMA integrity_check`` lines (``["ok"]`` for a healthy database)."""
    return [line for r in conn.execute("PRAGMA integrity_check")
            for line in str(r[0]).splitlines() if line.strip()]
