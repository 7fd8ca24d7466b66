"""``lcm-proxy bench context``: does every forwarded request fit its context budget?

Sessions of three kinds are replayed turn by turn through the proxy's memory path
(:func:`proxy.flow.plan.prepare`, the function a chat request runs after its
capture, with the proxy's default settings and the memory tools offered) against
an engine in a temporary directory, as the proxy does it: capture the request,
plan and rewrite it, capture the answer, then run the compaction that is due
(background in the proxy, timed here). Kinds:

- ``chatter``: varied conversation, sentences drawn from a fixed vocabulary;
- ``agent``: near-repetitive agent steps ("Step 41: ran the tests, 3 failed") with
  a short tool call and result every turn;
- ``pastes``: pasted logs and long tool outputs (600 to 2,000 tokens a turn).

Budgets are context windows of 4k, 8k, 32k and 128k tokens (``[context]
model_windows`` for the bench's model names); the input budget is the window less
the output reserve (a quarter of a small window, 4,096 tokens otherwise) and the
margin, capped by ``hard_limit_tokens`` (100,000). "Forwarded" counts what the
upstream would receive: messages (with the chat format's 4 tokens each) and tool
definitions, in o200k tokens (:mod:`memory_core.assembly.budget`). Times are wall clock on
this machine, milliseconds.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import orjson

from memory_core.assembly import budget
from memory_core.engine import Engine
from memory_core.models import Scope
from proxy.evaluation.metrics import percentile
from proxy.flow.plan import prepare
from proxy.metrics import Metrics
from proxy.settings import load_settings
from proxy.wire.chat import CHAT

KINDS = ("chatter", "agent", "pastes")
WINDOWS = {"4k": 4096, "8k": 8192, "32k": 32768, "128k": 131072}
DEFAULT_TURNS = (100,)

_WORDS = ("the deployment schedule moved because the vendor asked for another review of the "
          "contract terms and we agreed to keep the staging cluster running until Friday "
          "while Maria checks the invoices against the budget of 4200 EUR and Tom rewrites "
          "the onboarding guide so new hires can find the VPN settings without asking").split()


def _chatter(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    n = rng.randint(12, 60)
    text = " ".join(rng.choice(_WORDS) for _ in range(n))
    return [{"role": "user", "content": f"{text.capitalize()}. What do you think about point"
                                        f" {turn}?"}]


def _agent(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    failed = rng.randint(0, 5)
    call = {"id": f"call_{turn}", "type": "function",
            "function": {"name": "run_tests", "arguments": '{"path": "tests/"}'}}
    return [{"role": "user", "content": f"Step {turn}: ran the tests, {failed} failed."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{turn}",
             "content": f"collected 212 items\n{212 - failed} passed, {failed} failed in "
                        f"{rng.randint(8, 40)}.{rng.randint(0, 9)}s"}]


def _pastes(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    lines = rng.randint(20, 70)
    log = "\n".join(f"2025-03-{turn % 28 + 1:02d} 10:{k % 60:02d}:{rng.randint(0, 59):02d} "
                    f"{rng.choice(('INFO', 'WARN', 'ERROR'))} svc-{rng.randint(1, 9)} "
                    f"request {turn * 1000 + k} took {rng.randint(3, 900)} ms "
                    f"(queue {rng.randint(0, 40)})" for k in range(lines))
    if turn % 2:
        return [{"role": "user", "content": f"Here is the log from run {turn}:\n{log}"}]
    call = {"id": f"call_{turn}", "type": "function",
            "function": {"name": "read_file", "arguments": f'{{"path": "logs/run{turn}.log"}}'}}
    return [{"role": "user", "content": f"Read logs/run{turn}.log and tell me what failed."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{turn}", "content": log}]


_MAKERS: dict[str, Callable[[random.Random, int], list[dict[str, Any]]]] = {
    "chatter": _chatter, "agent": _agent, "pastes": _pastes}


def _reply(rng: random.Random, kind: str, turn: int) -> dict[str, Any]:
    if kind == "agent":
        return {"role": "assistant", "content": f"Step {turn} done; next I will fix the "
                                                f"{rng.randint(0, 5)} failing tests."}
    return {"role": "assistant", "content": " ".join(rng.choice(_WORDS)
                                                     for _ in range(rng.randint(10, 50)))}


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


def sample_points(turns: int, samples: int = 5, spread: int = 12) -> tuple[set[int], set[int]]:
    """Turns at which the forest is measured: ``samples`` evenly spaced (the
    table's), and those with ``spread`` more spaced evenly on a log scale from turn
    10 (the chart's). Returns ``(table, all)``."""
    table = {max(1, round(turns * (i + 1) / samples)) for i in range(samples)}
    if turns <= 10:
        return table, table
    ratio = (turns / 10) ** (1 / spread)
    log_spaced = {round(10 * ratio ** i) for i in range(spread + 1)}
    return table, table | {t for t in log_spaced if 1 <= t <= turns}


def run_one(kind: str, window_name: str, turns: int, *, seed: int = 1,
            samples: int = 5, progress: Any = None) -> dict[str, Any]:
    """Replay one session of ``turns`` turns of ``kind`` at ``window_name``.

    Returns requests, ``over_budget`` (forwarded requests counting more than
    their budget, counted only when the proxy could have fitted them: a request
    forwarded unchanged as ``over-budget`` is counted in ``unfittable``), the
    largest forwarded count, the budget, the forest curve (``curve``: points of
    turns (:func:`sample_points`; ``table`` marks the evenly spaced ones), forest
    tokens = the scaffold as forwarded, and the stored roots' total), and
    compaction and planning times.
    """
    model = f"bench-{window_name}"
    settings = load_settings(None, environ={}, overrides={
        "context": {"model_windows": [f"{model}={WINDOWS[window_name]}"]},
        "embedding": {"provider": "hashing"}})
    cfg = settings.memory_config()
    rng = random.Random(f"{seed}-{kind}")
    make = _MAKERS[kind]
    scope = Scope("t_ctxbench", "default", f"ctx-{kind}-{window_name}")
    metrics = Metrics()
    table_points, points = sample_points(turns, samples)
    curve: list[dict[str, int]] = []
    over = unfittable = inline = 0
    largest = 0
    prepare_s: list[float] = []
    compact_s: list[float] = []
    plan = budget.request_budget({"model": model}, cfg.context,
                                 hard_limit=cfg.compaction.hard_limit_tokens)
    with tempfile.TemporaryDirectory(prefix="lcm-ctxbench-") as tmp:
        engine = Engine(tmp, cfg)
        try:
            history: list[dict[str, Any]] = [
                {"role": "system", "content": "You are a careful assistant. Keep answers "
                                              "short and cite the files you touch."}]
            for turn in range(1, turns + 1):
                history.extend(make(rng, turn))
                body: dict[str, Any] = {"model": model, "messages": list(history)}
                raw = orjson.dumps(body)
                ticket, fut = engine.capture_request(scope, f"r{turn}", body["messages"], {})
                result = fut.result(120)
                t0 = time.perf_counter()
                prepared = prepare(metrics, engine, scope, result, raw, body, f"r{turn}",
                                    True, True)
                prepare_s.append(time.perf_counter() - t0)
                prepared.sent()  # as the proxy does once the request went upstream
                sent = prepared.obj or body
                tools = (CHAT.add_tools(sent, short=prepared.short_tools)[0]["tools"]
                         if cfg.tools_enabled else None)
                tokens = budget.messages_tokens(sent["messages"]) + budget.tools_tokens(tools)
                largest = max(largest, tokens)
                if prepared.state == "over-budget":
                    unfittable += 1
                elif tokens > plan.input_tokens:
                    over += 1
                if "x-lcm-context-compacted" in prepared.headers:
                    inline += 1
                answer = _reply(rng, kind, turn)
                ids = engine.capture_response(ticket, [answer], {"outcome": "complete"}
                                              ).result(120)
                history.append(answer)
                t0 = time.perf_counter()
                created = engine.compact(scope, result.thread_id, [*result.message_ids,
                                                                   *ids[:1]])
                if created:
                    compact_s.append(time.perf_counter() - t0)
                if turn in points:
                    roots = engine.forest_for(scope, [*result.message_ids, *ids[:1]])
                    scaffold = next((budget.message_tokens(m) for m in sent["messages"]
                                     if isinstance(m.get("content"), str)
                                     and m["content"].startswith("[Conversation summary")), 0)
                    curve.append({"turns": turn, "forest_tokens": scaffold,
                                  "roots_tokens": sum(n.tokens for n in roots),
                                  "roots": len(roots),
                                  "levels": max((n.level for n in roots), default=-1) + 1,
                                  "table": turn in table_points})
                if progress is not None:
                    progress.update(1)
        finally:
            engine.close()
    return {
        "kind": kind, "window": window_name, "turns": turns, "requests": turns,
        "budget": plan.input_tokens, "over_budget": over, "unfittable": unfittable,
        "largest": largest, "inline": inline, "curve": curve,
        "compactions": len(compact_s),
        "compact_p50_ms": _ms(percentile(compact_s, 0.5)) if compact_s else None,
        "compact_p95_ms": _ms(percentile(compact_s, 0.95)) if compact_s else None,
        "compact_total_ms": _ms(sum(compact_s)),
        "prepare_p50_ms": _ms(percentile(prepare_s, 0.5)),
        "prepare_p95_ms": _ms(percentile(prepare_s, 0.95)),
        "prepare_mean_ms": _ms(statistics.fmean(prepare_s)),
    }


def run_context_bench(turns: tuple[int, ...] = DEFAULT_TURNS,
                      windows: tuple[str, ...] = tuple(WINDOWS), kinds: tuple[str, ...] = KINDS,
                      *, seed: int = 1, progress_factory: Callable[..., Any] | None = None
                      ) -> dict[str, Any]:
    """Run :func:`run_one` for every kind × window × length; ``{"rows", "table"}``.

    Raises ``ValueError`` for an unknown kind or window, or a length under 1.
    """
    for k in kinds:
        if k not in _MAKERS:
            raise ValueError(f"unknown history kind {k!r}; expected one of {', '.join(KINDS)}")
    for w in windows:
        if w not in WINDOWS:
            raise ValueError(f"unknown budget {w!r}; expected one of {', '.join(WINDOWS)}")
    if not turns or min(turns) < 1:
        raise ValueError("session lengths must be at least 1 turn")
    total = sum(turns) * len(windows) * len(kinds)
    bar = progress_factory(total=total, desc="bench context", unit="turn") \
        if progress_factory else None
    rows = []
    try:
        for n in turns:
            for kind in kinds:
                for window in windows:
                    rows.append(run_one(kind, window, n, seed=seed, progress=bar))
    finally:
        if bar is not None:
            bar.close()
    return {"rows": rows, "table": format_table(rows)}


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as two aligned tables: fit and time, then the forest against turns."""
    def fmt(v: Any, spec: str = "{}") -> str:
        return "—" if v is None else spec.format(v)

    head = ["kind", "window", "turns", "budget", "over budget", "unfittable", "largest",
            "inline", "runs", "run p50", "run p95", "plan p50", "plan p95"]
    table = [head]
    for r in rows:
        table.append([r["kind"], r["window"], str(r["turns"]), f"{r['budget']:,}",
                      str(r["over_budget"]), str(r["unfittable"]), f"{r['largest']:,}",
                      str(r["inline"]), str(r["compactions"]), fmt(r["compact_p50_ms"], "{:.1f}"),
                      fmt(r["compact_p95_ms"], "{:.1f}"), fmt(r["prepare_p50_ms"], "{:.1f}"),
                      fmt(r["prepare_p95_ms"], "{:.1f}")])
    out = _align(table)
    out.append("(over budget: forwarded requests counting more than their budget, target 0;"
               " unfittable: protected messages alone over it, forwarded unchanged; largest:"
               " the largest forwarded request; inline: requests compacted before forwarding;"
               " runs: background compactions that created nodes, ms each; plan: the memory"
               " path of one request, ms; tokens are o200k)")
    curve = [["kind", "window", "turns", "forest tokens", "stored roots tokens", "roots",
              "levels"]]
    for r in rows:
        for p in r["curve"]:
            if not p.get("table", True):
                continue
            curve.append([r["kind"], r["window"], str(p["turns"]), f"{p['forest_tokens']:,}",
                          f"{p['roots_tokens']:,}", str(p["roots"]), str(p["levels"])])
    out.append("")
    out.extend(_align(curve))
    out.append("(forest tokens: the scaffold as forwarded, within its share of the budget;"
               " stored roots tokens: the full texts of the forest's nodes)")
    return "\n".join(out)


def _align(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]


def write_png(rows: list[dict[str, Any]], path: str) -> None:
    """Chart the forest against turns, one line per kind and window: the scaffold as
    forwarded (left, within its share of the budget) and the stored roots' full
    texts (right), turns on a log scale (a straight line there is logarithmic
    growth). Needs matplotlib (the ``dev``/``eval`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    for r in rows:
        pts = sorted((p["turns"], p["forest_tokens"], p["roots_tokens"]) for p in r["curve"])
        if not pts:
            continue
        xs = [p[0] for p in pts]
        label = f"{r['kind']} {r['window']}"
        left.plot(xs, [p[1] for p in pts], marker=".", label=label)
        right.plot(xs, [p[2] for p in pts], marker=".", label=label)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("turns (log scale)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    left.set_ylabel("scaffold tokens forwarded (o200k)")
    left.set_title("forest as forwarded (capped by its share)", fontsize=10)
    right.set_ylabel("stored roots' full texts (o200k tokens)")
    right.set_title("forest stored (roots of every level)", fontsize=10)
    fig.suptitle("lcm-proxy bench context: forest tokens against turns")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
