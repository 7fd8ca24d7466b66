"""``lcm-proxy eval locomo --context-window N``: does the evidence reach a small upstream?

LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753; data CC BY-NC 4.0, read from
the path given, never copied) conversations are replayed turn by turn through the
proxy's memory path (:func:`proxy.flow.plan.prepare`, the function a chat request
runs after its capture, with the proxy's default settings, BM25 search attached as
in the proxy, the memory tools offered) for a model whose context window is
``window`` tokens (``[context] model_windows``): speaker A's turns are user messages,
speaker B's the assistant's (a B turn that answers an A turn is captured as that
request's answer; others are sent by the client), and the compaction that is due
runs after each answer, as the proxy runs it in the background.

Then every question with gold evidence is asked at the end of its conversation:
the whole history plus the question, planned against the same budget. A gold
evidence turn *reaches* the upstream when its text (whitespace-normalised) is in
the forwarded messages: verbatim in the tail, quoted in the block, or in a summary
line. The baseline is plain truncation of the same request to the same size (the
newest messages that fit in as many tokens as the proxy forwarded, tool definitions
included), in the same run. Reported: the share of gold turns that reach (over all
(question, gold turn) pairs), for the proxy and for truncation, per conversation
split, and where the proxy's reached turns were (tail, block, summary).

Nothing here looks at answers: the proxy sees the conversation and the question
text only, as it would in use.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from memory_core.assembly import budget
from memory_core.assembly.block import CURRENT_REQUEST, terms
from memory_core.compaction.compressor import SCAFFOLD_HEADER
from memory_core.engine import Engine
from memory_core.evaluation.locomo import conversation_messages, gold_turns
from memory_core.models import Scope
from proxy.flow.plan import prepare
from proxy.metrics import Metrics
from proxy.settings import load_settings
from proxy.wire.chat import CHAT

MODEL = "locomo-context"
DEV = tuple(range(5))
HELD_OUT = tuple(range(5, 10))


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _texts(msg: Any) -> list[str]:
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict)
                and isinstance(p.get("text"), str)]
    return []


def _places(messages: list[dict[str, Any]], newest: int) -> dict[str, str]:
    """The forwarded text by place: ``summary`` (the scaffold), ``block`` (what was
    prepended to the newest user message) and ``tail`` (everything else), each
    whitespace-normalised and case-folded."""
    out: dict[str, list[str]] = {"summary": [], "block": [], "tail": []}
    for i, msg in enumerate(messages):
        for text in _texts(msg):
            if text.startswith(SCAFFOLD_HEADER):
                out["summary"].append(text)
            elif i == newest and CURRENT_REQUEST in text:
                block, _sep, rest = text.partition(CURRENT_REQUEST)
                out["block"].append(block)
                out["tail"].append(rest)
            else:
                out["tail"].append(text)
    return {k: _norm("\n".join(v)) for k, v in out.items()}


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _sentences(text: str) -> list[str]:
    """The sentences of a normalised turn text that carry content (four words or
    more; a shorter turn is one sentence)."""
    parts = [p for p in _SENTENCE.split(text) if len(p.split()) >= 4]
    return parts or [text]


def _truncated(messages: list[dict[str, Any]], size: int) -> str:
    """Plain truncation: the newest messages that fit in ``size`` tokens (the newest
    one always), as normalised text."""
    kept: list[dict[str, Any]] = []
    total = budget.REQUEST_OVERHEAD
    for msg in reversed(messages):
        cost = budget.message_tokens(msg)
        if kept and total + cost > size:
            break
        kept.append(msg)
        total += cost
    return _norm("\n".join(t for m in reversed(kept) for t in _texts(m)))


MISS_KINDS = ("not retrieved", "retrieved, no keyword", "retrieved, past the cap",
              "left out for room", "quoted, cut", "no block")
"""Why a gold turn that did not reach was missing, in order: not among the block
search's first :data:`MISS_RANK` message hits for the question; among them but not
a quote the block considered (no keyword shared with the message, its speaker's
name or the turn before it; past the quote cap, or a repeat);
considered and left out for room (the explain log's ``omitted``); quoted, but not
whole (cut at ``snippet_chars``); no block at all for the question."""
MISS_RANK = 200


def _miss_kind(engine: Engine, scope: Scope, question: str, msg_id: int | None,
               assembly: Any, msg: dict[str, Any], before: dict[str, Any] | None) -> str:
    """The :data:`MISS_KINDS` entry for a gold turn (stored id ``msg_id``, the chat
    message ``msg``, after the message ``before``) that did not reach the upstream
    for ``question``; ``assembly``: the question's block."""
    if assembly is None or not assembly.block:
        return "no block"
    ref = f"msg:{msg_id}"
    if any(e.get("ref") == ref for e in assembly.log.get("included", [])):
        return "quoted, cut"
    if any(e.get("ref") == ref for e in assembly.log.get("omitted", [])):
        return "left out for room"
    hits = engine.searcher(scope, question, ("message",), MISS_RANK, structured=True)
    if not any(kind == "message" and ref_id == msg_id for kind, ref_id, _s in hits):
        return "not retrieved"
    # The message's words, its speaker's name and the words of the turn before it
    # (the filled block's test, :func:`memory_core.assembly.block.assemble`).
    words = terms("\n".join(_texts(msg))) | terms(str(msg.get("name") or ""))
    if before is not None:
        words |= terms("\n".join(_texts(before)))
    return "retrieved, past the cap" if terms(question) & words else "retrieved, no keyword"


def replay_conversation(index: int, sample: dict[str, Any], window: int, *,
                        progress: Callable[[int], None] | None = None,
                        overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replay conversation ``index`` (a ``locomo10.json`` entry) and ask its
    questions; return its counts (see :func:`run_locomo_context`)."""
    tables = dict(overrides or {})
    tables["context"] = {**tables.get("context", {}), "model_windows": [f"{MODEL}={window}"]}
    tables["embedding"] = {**tables.get("embedding", {}), "provider": "hashing"}
    settings = load_settings(None, environ={}, overrides=tables)
    cfg = settings.memory_config()
    conv = sample["conversation"]
    turns = [(dia, msg) for _when, session in conversation_messages(conv)
             for dia, msg in session]
    text_of = {dia: _norm(t["text"]) for key, s in conv.items()
               if key.startswith("session_") and isinstance(s, list)
               for t in s for dia in [t["dia_id"]] if t.get("text")}
    turn_at = {dia: i for i, (dia, _msg) in enumerate(turns)}
    scope = Scope("locomo-context", "default", f"conv{index}")
    metrics = Metrics()
    from memory_core.search import SearchService

    out: dict[str, Any] = {"conversation": index, "requests": 0, "questions": 0,
                           "gold": 0, "reached": 0, "truncation": 0, "over_budget": 0,
                           "sentence": 0, "truncation_sentence": 0,
                           "unfittable": 0, "where": {"tail": 0, "block": 0, "summary": 0},
                           "tokens": [], "by_category": {},
                           "misses": {k: 0 for k in MISS_KINDS}}
    with tempfile.TemporaryDirectory(prefix="lcm-locomo-ctx-") as tmp:
        engine = Engine(tmp, cfg)
        service = SearchService(engine.store, Path(tmp), settings.search.search_config(), None)
        engine.attach_search(service, start=False)
        try:
            plan = budget.request_budget({"model": MODEL}, cfg.context,
                                         hard_limit=cfg.compaction.hard_limit_tokens)
            out["budget"] = plan.input_tokens

            def ask(messages: list[dict[str, Any]], rid: str) -> tuple[Any, Any, Any]:
                body = {"model": MODEL, "messages": messages}
                raw = orjson.dumps(body)
                ticket, fut = engine.capture_request(scope, rid, messages, {})
                result = fut.result(120)
                prepared = prepare(metrics, engine, scope, result, raw, body, rid, True, True)
                prepared.sent()  # as the proxy does once the request went upstream
                return ticket, result, prepared

            history: list[dict[str, Any]] = []
            k = 0
            while k < len(turns):
                _dia, msg = turns[k]
                history.append(msg)
                reply = turns[k + 1][1] if k + 1 < len(turns) else None
                if msg["role"] == "user" and reply is not None and reply["role"] == "assistant":
                    ticket, result, _prepared = ask(list(history), f"c{index}-t{k}")
                    out["requests"] += 1
                    ids = engine.capture_response(ticket, [reply], {"outcome": "complete"}
                                                  ).result(120)
                    history.append(reply)
                    engine.compact(scope, result.thread_id, [*result.message_ids, *ids[:1]])
                    if out["requests"] % 25 == 0:
                        service.catch_up()
                    k += 2
                    step = 2
                else:
                    k += 1
                    step = 1
                if progress is not None:
                    progress(step)
            engine.flush()
            service.catch_up()
            known = set(text_of)
            # The block each question got (its explain log tells what was left out).
            last: list[Any] = []
            assemble = engine.assemble

            def assemble_kept(*args: Any, **kwargs: Any) -> Any:
                last.append(assemble(*args, **kwargs))
                return last[-1]

            engine.assemble = assemble_kept  # type: ignore[method-assign]
            for q, qa in enumerate(sample["qa"]):
                gold = sorted(gold_turns(qa, known))
                if not gold:
                    continue
                question = {"role": "user", "content": str(qa["question"])}
                messages = [*history, question]
                last.clear()
                _t, captured, prepared = ask(messages, f"c{index}-q{q}")
                sent = prepared.obj or {"messages": messages}
                tools = (CHAT.add_tools(sent, short=prepared.short_tools)[0]["tools"]
                         if cfg.tools_enabled else None)
                size = (budget.messages_tokens(sent["messages"])
                        + budget.tools_tokens(tools))
                out["tokens"].append(size)
                if prepared.state == "over-budget":
                    out["unfittable"] += 1
                elif size > plan.input_tokens:
                    out["over_budget"] += 1
                places = _places(sent["messages"], len(sent["messages"]) - 1)
                plain = _truncated(messages, size)
                out["questions"] += 1
                cat = out["by_category"].setdefault(str(qa.get("category")),
                                                    {"gold": 0, "reached": 0, "truncation": 0})
                for dia in gold:
                    text = text_of[dia]
                    out["gold"] += 1
                    cat["gold"] += 1
                    where = next((p for p in ("tail", "block", "summary") if text in places[p]),
                                 None)
                    if where is not None:
                        out["reached"] += 1
                        cat["reached"] += 1
                        out["where"][where] += 1
                    else:
                        ids = captured.message_ids
                        at = turn_at.get(dia)
                        msg_id = ids[at] if at is not None and at < len(ids) else None
                        out["misses"][_miss_kind(
                            engine, scope, str(qa["question"]), msg_id,
                            last[-1] if last else None, turns[at][1] if at is not None else {},
                            turns[at - 1][1] if at else None)] += 1
                    if text in plain:
                        out["truncation"] += 1
                        cat["truncation"] += 1
                    # Relaxed: a sentence of the turn (a memory item, a summary line)
                    sentences = _sentences(text)
                    if any(x in places[p] for x in sentences for p in places):
                        out["sentence"] += 1
                    if any(x in plain for x in sentences):
                        out["truncation_sentence"] += 1
        finally:
            engine.close()
    return out


def run_locomo_context(data_path: str | Path, window: int = 4096,
                       conversations: tuple[int, ...] = DEV + HELD_OUT, *,
                       progress_factory: Callable[..., Any] | None = None,
                       overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replay the chosen conversations (0-based indexes into ``locomo10.json``) at a
    context window of ``window`` tokens; return ``{"rows", "splits", "table"}``.

    ``rows``: per conversation, requests replayed, questions asked, gold turns,
    those that reached the upstream (``reached``; by place in ``where``) and those
    plain truncation to the same size keeps (``truncation``), requests over budget
    (target 0) and unfittable, forwarded sizes. ``splits``: the same sums for the
    development conversations (0-4) and the held-out ones (5-9) among those run.
    ``overrides``: settings tables for the replayed proxy (as ``load_settings``
    takes them; the window and the hashing embedder are always set).
    Raises ``OSError``/``ValueError`` for an unreadable file or a bad index.
    """
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    for i in conversations:
        if not 0 <= i < len(data):
            raise ValueError(f"conversation {i} is not in the file (0-{len(data) - 1})")
    if window < budget.MIN_WINDOW:
        raise ValueError(f"context window must be at least {budget.MIN_WINDOW} tokens")
    started = time.monotonic()
    total = sum(sum(len(s) for k, s in data[i]["conversation"].items()
                    if k.startswith("session_") and isinstance(s, list))
                for i in conversations)
    bar = progress_factory(total=total, desc="locomo context", unit="turn") \
        if progress_factory else None
    rows = []
    try:
        for i in conversations:
            rows.append(replay_conversation(i, data[i], window, overrides=overrides,
                                            progress=bar.update if bar else None))
    finally:
        if bar is not None:
            bar.close()
    splits = {}
    for name, chosen in (("dev 0-4", DEV), ("held-out 5-9", HELD_OUT), ("all", None)):
        part = [r for r in rows if chosen is None or r["conversation"] in chosen]
        if part:
            splits[name] = _sums(part)
    return {"window": window, "budget": rows[0]["budget"] if rows else None, "rows": rows,
            "splits": splits, "seconds": round(time.monotonic() - started, 1),
            "table": format_table(rows, splits)}


def _sums(rows: list[dict[str, Any]]) -> dict[str, Any]:
    gold = sum(r["gold"] for r in rows)
    tokens = [t for r in rows for t in r["tokens"]]
    return {"conversations": len(rows), "questions": sum(r["questions"] for r in rows),
            "gold": gold, "reached": sum(r["reached"] for r in rows),
            "truncation": sum(r["truncation"] for r in rows),
            "sentence": sum(r["sentence"] for r in rows),
            "truncation_sentence": sum(r["truncation_sentence"] for r in rows),
            "share": round(sum(r["reached"] for r in rows) / gold, 3) if gold else None,
            "truncation_share": (round(sum(r["truncation"] for r in rows) / gold, 3)
                                 if gold else None),
            "where": {p: sum(r["where"][p] for r in rows) for p in ("tail", "block", "summary")},
            "over_budget": sum(r["over_budget"] for r in rows),
            "misses": {k: sum(r["misses"][k] for r in rows) for k in MISS_KINDS},
            "unfittable": sum(r["unfittable"] for r in rows),
            "tokens_mean": round(sum(tokens) / len(tokens)) if tokens else None,
            "tokens_max": max(tokens) if tokens else None}


def format_table(rows: list[dict[str, Any]], splits: dict[str, dict[str, Any]]) -> str:
    """One line per conversation, then per split."""
    head = ["conv", "requests", "questions", "gold turns", "reach proxy", "reach trunc.",
            "sentence proxy", "sentence trunc.",
            "tail", "block", "summary", "over budget", "tokens mean", "tokens max"]
    table = [head]

    def line(label: str, s: dict[str, Any], requests: str) -> list[str]:
        gold = s["gold"] or 1
        return [label, requests, str(s["questions"]), str(s["gold"]),
                f"{s['reached'] / gold:.3f}", f"{s['truncation'] / gold:.3f}",
                f"{s['sentence'] / gold:.3f}", f"{s['truncation_sentence'] / gold:.3f}",
                str(s["where"]["tail"]), str(s["where"]["block"]), str(s["where"]["summary"]),
                str(s["over_budget"] + s["unfittable"]),
                str(s["tokens_mean"]), str(s["tokens_max"])]

    for r in rows:
        table.append(line(str(r["conversation"]), _sums([r]), str(r["requests"])))
    for name, s in splits.items():
        table.append(line(name, s, str(sum(r["requests"] for r in rows
                                           if name == "all" or r["conversation"] in
                                           (DEV if name.startswith("dev") else HELD_OUT)))))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    out = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    out.append("")
    out.append("gold turns that did not reach, by why (" + ", ".join(
        f"{k}" for k in MISS_KINDS) + "):")
    for name, s in splits.items():
        out.append(f"  {name}: " + "  ".join(f"{s['misses'][k]}" for k in MISS_KINDS))
    out.append("(reach: share of gold evidence turns whose text is in the forwarded request;"
               " trunc.: plain truncation of the same request to the same size; sentence: a"
               " sentence of four words or more of the turn is (a memory item, a summary"
               " line); tail/block/"
               "summary: where the proxy's reached turns were; over budget: forwarded over"
               " the budget or unfittable, target 0; tokens: forwarded, o200k)")
    return "\n".join(out)
