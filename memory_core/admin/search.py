"""The operator's memory search: a keyword scan, or the model's hybrid search.

Serves ``lcm-proxy memory search``, the admin API, the inspector and ``/memory
search``. Retracted items are never returned; stored ``/memory`` commands and hidden
memory-tool rounds only when asked for.
"""

from __future__ import annotations

import logging
from typing import Any

from memory_core.admin import overview
from memory_core.assembly.block import terms
from memory_core.store.api import EngineStore, Tx
from memory_core.tools.commands import is_command_exchange

log = logging.getLogger("lcm.engine")

OPERATOR_SEARCH_SCOPES = 64
"""Most (tenant, role) scopes one hybrid operator search visits (newest first)."""

OPERATOR_QUERY_EMBED_SECONDS = 10.0
"""How long a hybrid operator search waits for its query vector (the embedder may
be busy with a backlog); then it ranks by BM25 alone."""


def _scope_of(row: dict[str, Any]) -> dict[str, str]:
    """Whose a hit is: ``tenant`` (with its end user, ``t_…~u_…``), ``role`` and
    ``session`` (``""`` when none was given), so that hits of several tenants in one
    store can be told apart."""
    return {"tenant": row["tenant"], "role": row["role"], "session": row["session"] or ""}


def search_memory(store: EngineStore, search: Any, query: str, *,
                  tenant: str | None = None, role: str | None = None,
                  include_messages: bool = True, limit: int = 20,
                  session: str | None = None, include_commands: bool = True,
                  mode: str = "keyword") -> list[dict[str, Any]]:
    """Search memory items and messages (the operator's search and ``/memory search``);
    ``search``: the attached ``SearchService``, or ``None``.

    Retracted items are left out: a retraction takes an item out of retrieval
    (``inspect`` and the audit trail still show it). Returns dicts
    ``{ref, kind, status, score, match, text, tenant, role, session, ...}`` best
    first (the scope of each hit: several tenants share one store). ``session``
    keeps only rows stored under that ``X-LCM-Session``. With
    ``include_commands=False`` stored ``/memory`` commands and their replies, and
    the hidden memory-tool rounds (the model's calls and the proxy's results, which
    the client never saw), are left out before ``limit`` applies, as the model's
    ``memory_search`` leaves them out (:mod:`memory_core.tools.commands`).

    ``mode="keyword"``: an SQLite scan; ``score`` counts the query's keyword
    terms found (see ``assemble.terms``), +2 for the exact phrase. ``mode=
    "hybrid"``: the model's ``memory_search`` (``SearchService.search`` in hybrid
    mode: BM25 fused with vectors, so a paraphrase sharing no word is found) in
    every tenant and role the filters allow, best fused score first
    (``match: "hybrid"``), then what only the keyword scan found (``match:
    "keyword"``: rows the indexes do not hold yet). Without an attached search
    service ``hybrid`` is the keyword scan. Raises ``ValueError`` for another
    mode.
    """
    if mode not in ("keyword", "hybrid"):
        raise ValueError(f"unknown search mode {mode!r}; use keyword or hybrid")
    keyword = keyword_search(store, query, tenant, role, include_messages, limit,
                             session, include_commands)
    if mode == "keyword" or search is None or not query.strip():
        return keyword
    try:
        hybrid = hybrid_search(store, search, query, tenant, role, include_messages, limit,
                               session, include_commands)
    except Exception as exc:  # noqa: BLE001 - a failing index leaves the keyword scan
        log.warning("hybrid memory search failed (%s): keyword results only", exc)
        return keyword
    seen = {h["ref"] for h in hybrid}
    return (hybrid + [h for h in keyword if h["ref"] not in seen])[:limit]


def hybrid_search(store: EngineStore, search: Any, query: str, tenant: str | None, role: str | None,
                   include_messages: bool, limit: int, session: str | None,
                   include_commands: bool) -> list[dict[str, Any]]:
    scopes = store.read_tx(lambda tx: tx.inspection.recent_scopes(
        tenant=tenant, role=role, session=session, limit=OPERATOR_SEARCH_SCOPES))
    if not scopes:
        return []
    vector = search.embed_query(query, timeout=OPERATOR_QUERY_EMBED_SECONDS)
    kinds = ("message", "item") if include_messages else ("item",)
    k = max(limit, 1) * 2  # overfetch: retracted items and commands are dropped below
    # One fusion over every scope's candidates (each scope's vectors from its own
    # partition), so that scores of two scopes compare: fused per scope, a scope
    # with no keyword match would rank its nearest vector as a whole-query match.
    # Without commands, the hidden memory-tool rounds are left out too, as the model's
    # memory_search leaves them out: the proxy's own exchanges, which echo the query.
    pool = search.pool((search.candidate_lists(
        t, r, query, k=k, kinds=kinds, session=session, query_vector=vector,
        include_hidden=include_commands) for t, r in scopes), k)
    found = []
    for t, r in scopes:
        found += [(h, t, r) for h in search.search(
            t, r, query, k=k, kinds=kinds, session=session, include_hidden=include_commands,
            mode="hybrid", query_vector=vector, pool=pool)]
    found.sort(key=lambda x: -x[0].score)

    def rows(tx: Tx) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for h, t, r in found:
            if h.kind == "item":
                row = tx.inspection.scoped_item(h.ref_id, t, r)
                if row is None or row["status"] in ("retracted", "edited"):
                    continue
                out.append({"ref": f"item:{row['id']}", "id": row["id"],
                            "kind": row["kind"], "status": row["status"],
                            "score": round(h.score, 4), "match": "hybrid",
                            "text": row["text"], "value": row["value"],
                            "unit": row["unit"], "condition": row["condition"],
                            **_scope_of(row),
                            "source_message_id": row["source_message_id"]})
            else:
                row = tx.inspection.scoped_message(h.ref_id, t, r)
                if row is None or (not include_commands
                                   and is_command_exchange(row["text"])):
                    continue
                out.append({"ref": f"msg:{row['id']}", "id": row["id"],
                            "kind": "message", "status": row["msg_role"],
                            "score": round(h.score, 4), "match": "hybrid",
                            "text": row["text"][:300], **_scope_of(row),
                            "created_at": row["created_at"]})
            if len(out) >= limit:
                break
        return out

    return store.read_tx(rows)


def keyword_search(store: EngineStore, query: str, tenant: str | None, role: str | None,
                    include_messages: bool, limit: int, session: str | None,
                    include_commands: bool) -> list[dict[str, Any]]:
    q_terms = terms(query)
    needle = query.strip().lower()

    def run(tx: Tx) -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = []
        for r in tx.inspection.keyword_items(tenant=tenant, role=role, session=session,
                                             limit=20000):
            s = len(q_terms & terms(f"{r['subject'] or ''} {r['text']}"))
            s += 2 if needle and needle in r["text"].lower() else 0
            if s:
                hits.append({"ref": f"item:{r['id']}", "id": r["id"], "kind": r["kind"],
                             "status": r["status"], "score": s, "match": "keyword",
                             "text": r["text"],
                             "value": r["value"], "unit": r["unit"],
                             "condition": r["condition"], **_scope_of(r),
                             "source_message_id": r["source_message_id"]})
        if include_messages:
            for r in tx.inspection.keyword_messages(tenant=tenant, role=role,
                                                    session=session, limit=20000):
                if not include_commands and (r["hidden"] or is_command_exchange(r["text"])):
                    continue
                s = len(q_terms & terms(r["text"]))
                s += 2 if needle and needle in r["text"].lower() else 0
                if s:
                    hits.append({"ref": f"msg:{r['id']}", "id": r["id"], "kind": "message",
                                 "status": r["msg_role"], "score": s,
                                 "match": "keyword",
                                 "text": r["text"][:300], **_scope_of(r),
                                 "created_at": r["created_at"]})
        hits.sort(key=lambda h: (-h["score"], h["kind"] == "message", -h["id"]))
        return hits[:limit]

    return store.read_tx(run)


def indexed_search(store: EngineStore, search: Any, query: str, *, tenant: str, role: str,
                   mode: str, limit: int = 50) -> list[dict[str, Any]]:
    """Search the derived indexes of one tenant and role (``mode``: ``bm25``,
    ``vector`` or ``hybrid``; see ``SearchService.search``), hits described by
    :func:`memory_core.admin.overview.describe_hits` (retracted items and hidden
    memory-tool rounds left out, as the model's ``memory_grep`` and ``memory_search``
    leave them out).

    Raises ``ValueError`` for an unknown mode or when search is disabled
    (``search`` is ``None``)."""
    if search is None:
        raise ValueError("search is disabled ([search] enabled = false)")
    vector = (search.embed_query(query, timeout=OPERATOR_QUERY_EMBED_SECONDS)
              if mode in ("hybrid", "vector") else None)
    hits = search.search(tenant, role, query, k=limit, mode=mode, query_vector=vector,
                         include_hidden=False)
    rows = store.read_tx(lambda tx: overview.describe_hits(
        tx, [(h.kind, h.ref_id, h.score) for h in hits], tenant=tenant, role=role))
    return [r for r in rows if r["status"] not in ("retracted", "edited")]
