"""Compaction benchmark: the rewrite step's latency and the tokens it saves, by length.

One conversation (the eval generator's turns, tool calls included) is captured
through the engine exactly as the proxy does it — request capture, response
capture, then the compaction that is due (what the proxy runs after a response).
When it reaches each size, the *rewrite step* of a request — load the summary
forest that applies to the path (:meth:`Engine.forest_for`), replace the covered
messages by the scaffold (:func:`proxy.rewrite.apply_forest`) and serialise the body
(:func:`proxy.rewrite.dumps_body`), as :func:`proxy.flow.memorypath.prepare_upstream`
does — is timed ``repeats`` times. Tokens "before" are the stored o200k counts of
the whole path; "after" are what the upstream sees once the forest replaces its
ranges (:meth:`Engine.path_tokens`). Latencies in milliseconds, wall clock, one
thread; compaction runs (background in the proxy) are timed separately.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.models import Scope
from proxy import rewrite
from proxy.evaluation.generator import generate_session
from proxy.evaluation.metrics import percentile

DEFAULT_SIZES = (100, 200, 500, 1000)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def run_compaction_bench(sizes: tuple[int, ...] = DEFAULT_SIZES, repeats: int = 50, *,
                         seed: int = 1, progress_factory: Callable[..., Any] | None = None
                         ) -> dict[str, Any]:
    """Measure the rewrite step at each of ``sizes`` (user turns) of one conversation.

    Returns ``{"rows": [...], "table": str}``; each row: ``turns``, ``messages``,
    ``rewrite_p50_ms``/``rewrite_p95_ms``, ``tokens_before``/``tokens_after``
    (o200k), ``ratio`` (after/before), ``nodes`` (forest roots), ``levels`` (highest
    level), ``compactions`` and ``compact_p50_ms``/``compact_p95_ms`` (runs that
    created nodes so far). Raises ``ValueError`` for sizes under 24 turns.
    """
    sizes = tuple(sorted(set(sizes)))
    session = generate_session(seed, "compactbench", max(sizes), "en")
    scope = Scope("t_bench", "default", "compactbench")
    rows: list[dict[str, Any]] = []
    compact_s: list[float] = []
    bar = progress_factory(total=max(sizes), desc="bench compaction", unit="turn") \
        if progress_factory else None
    with tempfile.TemporaryDirectory(prefix="lcm-compactbench-") as tmp:
        engine = Engine(tmp, MemoryConfig())
        try:
            history: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
            for turn in session.turns:
                history.append({"role": "user", "content": turn.text})
                if turn.tool is not None:
                    call = {"id": turn.tool.call_id, "type": "function", "function": {
                        "name": turn.tool.name, "arguments": turn.tool.arguments}}
                    _exchange(engine, scope, history, {"role": "assistant", "content": None,
                                                       "tool_calls": [call]}, compact_s)
                    history.append({"role": "tool", "tool_call_id": turn.tool.call_id,
                                    "content": turn.tool.result})
                _exchange(engine, scope, history, {"role": "assistant", "content": turn.reply},
                          compact_s)
                if bar is not None:
                    bar.update(1)
                if turn.index + 1 in sizes:
                    rows.append(_measure(engine, scope, history, repeats, turn.index + 1,
                                         compact_s))
        finally:
            if bar is not None:
                bar.close()
            engine.close()
    return {"rows": rows, "table": format_table(rows)}


def _exchange(engine: Engine, scope: Scope, history: list[dict[str, Any]],
              answer: dict[str, Any], compact_s: list[float]) -> None:
    """Capture one request and its answer, then run the compaction that is due."""
    ticket, fut = engine.capture_request(scope, f"r{len(history)}", list(history), {})
    result = fut.result(60)
    ids = engine.capture_response(ticket, [answer], {"outcome": "complete"}).result(60)
    history.append(answer)
    t0 = time.perf_counter()
    created = engine.compact(scope, result.thread_id, [*result.message_ids, *ids[:1]])
    if created:
        compact_s.append(time.perf_counter() - t0)


def _measure(engine: Engine, scope: Scope, history: list[dict[str, Any]], repeats: int,
             turns: int, compact_s: list[float]) -> dict[str, Any]:
    history.append({"role": "user", "content": "Where were we?"})
    ticket, fut = engine.capture_request(scope, f"m{turns}", list(history), {})
    ids = list(fut.result(60).message_ids)
    history.pop()
    body = {"model": "bench", "messages": None}
    times = []
    roots: list[Any] = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        roots = engine.forest_for(scope, ids)
        msgs = rewrite.apply_forest(history + [{"role": "user", "content": "Where were we?"}],
                                    ids, roots, tools_enabled=engine.config.tools_enabled)
        rewrite.dumps_body(dict(body, messages=msgs))
        times.append(time.perf_counter() - t0)
    before = engine.path_tokens(ids, ())
    after = engine.path_tokens(ids, roots)
    return {
        "turns": turns, "messages": len(ids),
        "rewrite_p50_ms": _ms(percentile(times, 0.5)),
        "rewrite_p95_ms": _ms(percentile(times, 0.95)),
        "tokens_before": before, "tokens_after": after,
        "ratio": round(after / before, 3) if before else None,
        "nodes": len(roots), "levels": max((n.level for n in roots), default=-1),
        "compactions": len(compact_s),
        "compact_p50_ms": _ms(percentile(compact_s, 0.5)) if compact_s else None,
        "compact_p95_ms": _ms(percentile(compact_s, 0.95)) if compact_s else None,
        "compact_mean_ms": _ms(statistics.fmean(compact_s)) if compact_s else None,
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    """Render the rows as aligned text (latencies in ms, tokens in o200k tokens)."""
    cols = [("turns", "turns", "{}"), ("messages", "msgs", "{}"),
            ("rewrite_p50_ms", "rewrite p50", "{:.3f}"),
            ("rewrite_p95_ms", "rewrite p95", "{:.3f}"),
            ("tokens_before", "tokens before", "{:,}"), ("tokens_after", "tokens after", "{:,}"),
            ("ratio", "after/before", "{:.3f}"), ("nodes", "roots", "{}"),
            ("levels", "top level", "{}"), ("compactions", "runs", "{}"),
            ("compact_p50_ms", "run p50", "{:.1f}"), ("compact_p95_ms", "run p95", "{:.1f}")]
    table = [[name for _, name, _ in cols]]
    table += [["—" if row[k] is None else fmt.format(row[k]) for k, _, fmt in cols]
              for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    lines.append("(rewrite = forest lookup + scaffold substitution + body serialisation, ms;"
                 " runs = compactions that created nodes so far, ms each; tokens are o200k)")
    return "\n".join(lines)
