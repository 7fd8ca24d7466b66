"""Memory tools the model can call; the proxy answers them itself (DESIGN §8).

This module holds the tool definitions (strict JSON Schema, OpenAI ``tools``
format) and their executors. Executors are synchronous (SQLite, Tantivy, the
embedder) and scoped to one tenant and role; they return the tool result as a
JSON string, and never raise for bad arguments or failures — the model gets an
``{"error": …}`` result it can read and recover from.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson

from memory_core.errors import NotFoundError
from memory_core.items import fields
from memory_core.models import Scope
from memory_core.store.api import Tx
from memory_core.tools.commands import is_command_exchange
from memory_core.tools.refs import parse_id

_HIT_KINDS = frozenset({"message", "item", "agent_memory", "summary"})

MAX_RESULT_CHARS = 12_000
"""Longest tool result returned to the model, in characters (≈3k tokens)."""
MAX_LIMIT = 50
QUERY_EMBED_SECONDS = 8.0
"""How long ``memory_search`` waits for its query embedding (seconds)."""
OVERFETCH = 3
"""Search hits fetched per result asked for: retracted items and stored ``/memory``
exchanges are dropped after the index answers, and must not leave the model short."""


def _fn(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


_TIME = {"type": ["string", "null"], "description": "ISO-8601 or UNIX seconds"}
_LIMIT = {"type": ["integer", "null"]}

DEFINITIONS: dict[str, dict[str, Any]] = {
    "memory_grep": _fn(
        "memory_grep",
        "Keyword search (* wildcard) of earlier messages and memories: exact numbers, "
        "names, decisions.",
        {"query": {"type": "string"}, "start_time": _TIME, "end_time": _TIME,
         "limit": _LIMIT},
    ),
    "memory_search": _fn(
        "memory_search",
        "Search earlier messages, memories and summaries by meaning.",
        {"query": {"type": "string"}, "limit": _LIMIT},
    ),
    "view_message": _fn(
        "view_message",
        "One earlier message in full, by the id in results or [msg N].",
        {"message_id": {"type": "integer"}},
    ),
    "view_chat_history_summary": _fn(
        "view_chat_history_summary",
        "Summaries and timeline of earlier conversations, oldest first.",
        {},
    ),
    "memory_update_progress": _fn(
        "memory_update_progress",
        "Save a progress note (snake_case key, content up to 500 characters) shown in "
        "later turns.",
        {"key": {"type": "string"}, "title": {"type": "string"},
         "content": {"type": "string"}},
    ),
}
NAMES = tuple(DEFINITIONS)

SHORT_DEFINITIONS: dict[str, dict[str, Any]] = {
    "memory_search": _fn(
        "memory_search",
        "Search earlier messages by meaning.",
        {"query": {"type": "string"}},
    ),
    "view_message": _fn(
        "view_message",
        "An earlier message in full, by id ([msg N]).",
        {"message_id": {"type": "integer"}},
    ),
}
"""The short set, for a small context budget: the two tools that find and read an
earlier message, with short schemas (about 100 tokens instead of about 320)."""


def definitions_for(taken: set[str], *, short: bool = False
                    ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Tool definitions to add to a request whose client already uses ``taken`` names.

    A name the client uses keeps its meaning (never shadowed): ours is then offered
    as ``lcm_<name>``. ``short``: only :data:`SHORT_DEFINITIONS`. Returns
    ``(tools, offered name → canonical name)``.
    """
    tools, names = [], {}
    for name, spec in (SHORT_DEFINITIONS if short else DEFINITIONS).items():
        offered = name if name not in taken else f"lcm_{name}"
        if offered in taken:
            continue
        if offered != name:
            spec = orjson.loads(orjson.dumps(spec))
            spec["function"]["name"] = offered
        tools.append(spec)
        names[offered] = name
    return tools, names


def _clip(text: str, limit: int = 600) -> str:
    flat = text if len(text) <= limit else text[: limit - 1] + "…"
    return flat


def parse_time(value: Any) -> float | None:
    """ISO-8601 (``Z`` or offset; a date alone is midnight UTC) or UNIX seconds →
    UNIX seconds. ``None``/``""`` → ``None``. Raises ``ValueError`` otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("time must be ISO-8601 or UNIX seconds")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text)
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _iso(ts: float | None) -> str | None:
    return (datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            if ts else None)


def _limit(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("limit must be an integer")
    return max(1, min(MAX_LIMIT, int(value)))


_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)")
_ASKS = re.compile(r"(?:[?？]|吗|嗎|呢|ですか|ますか|でしょうか|か)\s*[。.]?\s*$")


def is_question(text: str) -> bool:
    """Whether ``text`` only asks (each of its sentences is a question: "When is our
    deploy window?", "部署窗口是什么时候？", "いつですか"). A question matches the
    words of its answer but does not answer itself."""
    sentences = [m.group().strip() for m in _SENTENCE.finditer(text or "")]
    sentences = [t for t in sentences if any(ch.isalnum() for ch in t)]
    return bool(sentences) and all(_ASKS.search(t) for t in sentences)


def _statements_first(rows: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` of ``rows`` with questions after statements (each group in
    its own order): for the same match, the user's own question ranks below the
    statement that answers it (issue 24, kind 10)."""
    rows.sort(key=lambda r: bool(r.pop("_question", False)))
    return rows[:limit]


def _describe(engine: Any, scope: Scope, refs: list[tuple[str, int, float]], limit: int
              ) -> list[dict[str, Any]]:
    """Up to ``limit`` rows for search hits, read from the store and re-checked against the
    scope. Retracted items and the proxy's own ``/memory`` command exchanges are left
    out, as in every other search (:mod:`memory_core.tools.commands`)."""
    out: list[dict[str, Any]] = []

    def q(tx: Tx) -> None:
        for kind, ref, score in refs:
            if len(out) >= limit:
                return
            if kind not in _HIT_KINDS:
                continue
            r = tx.tools.hit_row(kind, ref)
            if r is None:
                continue
            if kind == "message":
                if (r["tenant"], r["role"]) != (scope.tenant, scope.role) or \
                        is_command_exchange(r["text"]):
                    continue
                out.append({"type": "message", "message_id": r["id"], "role": r["msg_role"],
                            "time": _iso(r["created_at"]), "text": _clip(r["text"]),
                            "score": round(score, 4), "_question": is_question(r["text"])})
            elif kind == "item":
                if (r["tenant"], r["role"]) != (scope.tenant, scope.role) or \
                        r["status"] in ("retracted", "edited"):
                    continue
                hit = {"type": f"memory:{r['kind']}", "status": r["status"],
                       "message_id": r["source_message_id"], "time": _iso(r["created_at"]),
                       "text": _clip(r["text"]), "score": round(score, 4),
                       "_question": r["kind"] == "question"}
                told = fields.occasions(r)
                if len(told) > 1:  # the same words in several conversations: each time
                    hit["said_in_conversations"] = [_iso(t) for t in told]
                out.append(hit)
            elif kind == "agent_memory":
                if r["role"] != scope.role or r["tenant"] not in (scope.tenant, "*"):
                    continue
                out.append({"type": f"agent_memory:{r['category']}", "key": r["key"],
                            "title": r["title"], "text": _clip(r["content"]),
                            "time": _iso(r["updated_at"]), "score": round(score, 4)})
            else:  # summary
                if (r["tenant"], r["role"]) != (scope.tenant, scope.role):
                    continue
                out.append({"type": f"summary:level{r['level']}",
                            "messages": f"{r['first_message_id']}-{r['last_message_id']}",
                            "text": _clip(r["text"], 1500), "score": round(score, 4)})

    engine.store.read_tx(q)
    return out


def memory_grep(engine: Any, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    """Keyword search (BM25, all terms required, ``*`` wildcards) in a time range."""
    query = str(args.get("query") or "").strip()
    if not query:
        raise ValueError("query is required")
    start, end = parse_time(args.get("start_time")), parse_time(args.get("end_time"))
    limit = _limit(args.get("limit"), 10)
    refs: list[tuple[str, int, float]] = []
    if engine.search is not None:
        k = limit * OVERFETCH
        hits = engine.search.search(scope.tenant, scope.role, query, k=k, mode="bm25",
                                    start_time=start, end_time=end, include_hidden=False,
                                    require_all=True)
        if not hits:  # fall back to any-term matching before giving up
            hits = engine.search.search(scope.tenant, scope.role, query, k=k, mode="bm25",
                                        start_time=start, end_time=end, include_hidden=False)
        refs = [(h.kind, h.ref_id, h.score) for h in hits]
    else:
        for h in engine.search_memory(query.replace("*", ""), tenant=scope.tenant,
                                      role=scope.role, limit=limit * OVERFETCH,
                                      include_commands=False):
            ts = h.get("created_at")
            if ts is not None and ((start and ts < start) or (end and ts > end)):
                continue
            kind = "message" if h["kind"] == "message" else "item"
            refs.append((kind, h["id"], float(h["score"])))
    results = _statements_first(_describe(engine, scope, refs, len(refs)), limit)
    return {"query": query, "results": results,
            "note": None if results else "no matches; try fewer or other words"}


def memory_search(engine: Any, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    """Hybrid semantic search (vectors fused with BM25)."""
    query = str(args.get("query") or "").strip()
    if not query:
        raise ValueError("query is required")
    limit = _limit(args.get("limit"), 8)
    if engine.search is None:
        return memory_grep(engine, scope, {"query": query, "limit": limit})
    vector = None
    embedder = getattr(engine.search, "embedder", None)
    if embedder is not None:
        # The model asked for meaning: worth waiting for the embedder longer than the
        # injection's request-path budget (it may be busy embedding a backlog).
        try:
            vector = embedder.embed_queries([query], timeout=QUERY_EMBED_SECONDS)[0]
        except Exception:  # noqa: BLE001 - BM25 still answers
            vector = None
    hits = engine.search.search(scope.tenant, scope.role, query, k=limit * OVERFETCH,
                                mode="hybrid", include_hidden=False, query_vector=vector)
    results = _statements_first(_describe(
        engine, scope, [(h.kind, h.ref_id, h.score) for h in hits], len(hits)), limit)
    # Hits that only resemble the query by meaning are kept above a relevance floor
    # (SearchConfig.vector_floor): none left means memory holds nothing on it.
    return {"query": query, "results": results,
            "note": None if results else "nothing relevant found in memory for this query"}


def view_message(engine: Any, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    """One message in full, only within the caller's tenant and role."""
    mid = parse_id(args.get("message_id"), what="message_id")
    try:
        info = engine.inspect(f"msg:{mid}")
    except NotFoundError:
        info = None
    if info is None or (info["tenant"], info["role"]) != (scope.tenant, scope.role):
        raise ValueError(f"no message {mid} in this conversation's memory")
    message = info["message"]
    text = info["text"]
    out = {"message_id": mid, "role": info["msg_role"], "time": _iso(info["created_at"]),
           "compacted": info.get("summary_node_id") is not None,
           "content": text if len(text) <= MAX_RESULT_CHARS - 500 else
           text[: MAX_RESULT_CHARS - 600] + f"… [{len(text)} characters in all]"}
    if isinstance(message, dict):
        for field in ("tool_calls", "tool_call_id", "name"):
            if message.get(field):
                out[field] = message[field]
    return out


def view_chat_history_summary(engine: Any, scope: Scope, args: dict[str, Any]
                              ) -> dict[str, Any]:
    """The role's summary forest (roots, oldest first) and a short thread timeline."""
    status = engine.forest_status(tenant=scope.tenant, role=scope.role)
    roots = [n for n in status["nodes"] if n["parent_id"] is None]
    texts = engine.store.read_tx(
        lambda tx: tx.tools.root_summary_texts(scope.tenant, scope.role))
    threads = engine.store.read_tx(
        lambda tx: tx.tools.thread_timeline(scope.tenant, scope.role))
    return {
        "threads": [{"thread_id": t["id"], "started": _iso(t["created_at"]),
                     "last_active": _iso(t["updated_at"]), "messages": t["messages"]}
                    for t in threads[-20:]],
        "summaries": [{"level": n["level"], "thread_id": n["thread_id"],
                       "messages": f"{n['first_message_id']}-{n['last_message_id']}",
                       "text": texts.get(n["id"], "")} for n in roots],
        "note": None if roots else "nothing has been compacted yet; use memory_grep",
    }


def memory_update_progress(engine: Any, scope: Scope, args: dict[str, Any]) -> dict[str, Any]:
    """Upsert a ``progress`` agent memory (never ``user_preferences``)."""
    key, title, content = (str(args.get(k) or "") for k in ("key", "title", "content"))
    if not key.strip():
        raise ValueError("key is required")
    out = engine.set_agent_memory(tenant=scope.tenant, role=scope.role, category="progress",
                                  key=key, title=title or key, content=content,
                                  on_duplicate="route")
    return {"saved": True, "key": out.key, "created": out.created,
            "note": f"stored under the existing key '{out.key}' ({out.reason})"
            if out.routed_from else None}


EXECUTORS = {
    "memory_grep": memory_grep,
    "memory_search": memory_search,
    "view_message": view_message,
    "view_chat_history_summary": view_chat_history_summary,
    "memory_update_progress": memory_update_progress,
}


def run_tool(engine: Any, scope: Scope, name: str, arguments: str | None) -> str:
    """Execute memory tool ``name`` with JSON ``arguments``; return the result as JSON text.

    Never raises: unknown names, unparseable or wrong arguments and executor
    failures become ``{"error": "..."}`` results. Output is cut to
    :data:`MAX_RESULT_CHARS` characters.
    """
    try:
        fn = EXECUTORS.get(name)
        if fn is None:
            raise ValueError(f"unknown memory tool {name!r}; available: {', '.join(NAMES)}")
        try:
            args = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON: {exc}") from exc
        if not isinstance(args, dict):
            raise ValueError("arguments must be a JSON object")
        result: Any = fn(engine, scope, args)
    except (ValueError, TypeError) as exc:
        result = {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the model reads the error; the chat goes on
        result = {"error": f"memory tool failed: {exc.__class__.__name__}"}
    text = orjson.dumps(result, option=orjson.OPT_NON_STR_KEYS).decode()
    if len(text) > MAX_RESULT_CHARS:
        # Still valid JSON: the head of the result, marked as cut.
        text = orjson.dumps({"truncated": True, "total_chars": len(text),
                             "partial": text[: MAX_RESULT_CHARS - 200]}).decode()
    return text
