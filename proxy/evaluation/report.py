"""Aggregate session results into figures, per system and session length and overall,
and render them: a Markdown report, a JSON-ready dict and a PNG chart.

Figures are never merged across metrics: each is its own column. Shares are
0–1 in JSON and percentages in Markdown; ``None`` (JSON ``null``, Markdown "—")
means the metric does not apply to that system (a baseline has no store to
search) or nothing was measured.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from proxy.evaluation.metrics import percentile, share
from proxy.evaluation.runner import SessionResult
from proxy.evaluation.systems import SYSTEMS

TARGETS = {
    "storage": 1.0, "coverage": 0.95, "recall": 0.95, "rank1": 0.85, "stale_questions": 0,
    "memory_tokens_mean": 1200.0, "prefix_share": 0.90, "added_p95_ms_at_1000": 15.0,
}
"""Issue 8's targets for lcm-proxy (shares 0–1, tokens, milliseconds)."""

REQUEST_INVARIANTS = ("answered", "not_failed_open", "system_first", "tool_pairs",
                      "within_budget", "client_unchanged")
STORE_INVARIANTS = ("evidence_kept", "stored_once", "no_duplicate_rows")
INVARIANT_LABELS = {
    "answered": "every request answered (200, the scripted reply)",
    "not_failed_open": "memory path never failed open",
    "system_first": "system prompt first and verbatim in every upstream request",
    "tool_pairs": "no tool call without its result (and no orphan result) upstream",
    "within_budget": "memory text within its budget (block ≤ soft budget; notes ≤ 1500)",
    "client_unchanged": "the client's own messages never modified",
    "evidence_kept": "no evidence lost (every client message stored)",
    "stored_once": "every message stored once, in order, on one path",
    "no_duplicate_rows": "no duplicate rows (node keys, items, summary ranges)",
}


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def figures(results: Sequence[SessionResult]) -> dict[str, Any]:
    """Figures of a group of session results of one system (see module docstring)."""
    reqs = [r for res in results for r in res.requests]
    qs = [q for res in results for q in res.questions]
    opening = [r for r in reqs if r.opens_turn]
    storage = [a for res in results for a in (res.storage or [])]
    tasks = [a for res in results for a in (res.tasks or [])]
    has_store = any(res.storage is not None for res in results)
    retrieval = [q for q in qs if q.recall is not None]
    prefixes = [r.prefix for r in reqs if r.prefix is not None]
    steady = [r.prefix for r in reqs if r.prefix is not None and not r.rewrite]
    proxy_ms = [r.proxy_ms for r in reqs]
    direct_ms = [r.direct_ms for r in reqs]
    invariants: dict[str, bool | None] = {
        k: all(getattr(r, k) for r in reqs) for k in REQUEST_INVARIANTS}
    for k in STORE_INVARIANTS:
        vals = [res.store_invariants.get(k) for res in results]
        known = [v for v in vals if v is not None]
        invariants[k] = all(known) if known else None
    total_up = sum(r.upstream_tokens for r in reqs)
    total_raw = sum(r.raw_tokens for r in reqs)
    out: dict[str, Any] = {
        "sessions": len(results), "turns": sum(res.n_turns for res in results),
        "requests": len(reqs), "questions": len(qs),
        "coverage": share(sum(q.covered for q in qs), len(qs)),
        "stale_questions": sum(1 for q in qs if q.stale),
        "stale_lines": sum(len(q.stale) for q in qs),
        "recall": share(sum(bool(q.recall) for q in retrieval), len(retrieval)),
        "rank1": share(sum(bool(q.rank1) for q in retrieval), len(retrieval)),
        "storage": share(sum(a["ok"] for a in storage), len(storage)) if has_store else None,
        "storage_checks": len(storage),
        "task_state": share(sum(a["ok"] for a in tasks), len(tasks)) if has_store else None,
        "memory_tokens_mean": _mean([r.memory_tokens for r in opening]),
        "net_extra_tokens_mean": _mean([r.upstream_tokens - r.client_tokens for r in reqs]),
        "upstream_tokens_mean": _mean([r.upstream_tokens for r in reqs]),
        "client_tokens_mean": _mean([r.client_tokens for r in reqs]),
        "raw_tokens_mean": _mean([r.raw_tokens for r in reqs]),
        "upstream_tokens_total": total_up, "raw_tokens_total": total_raw,
        "upstream_vs_raw": total_up / total_raw if total_raw else None,
        "prefix_share": _mean(steady), "prefix_share_all": _mean(prefixes),
        "prefix_share_bytes": (sum(r.prefix_bytes for r in reqs if r.prefix is not None
                                   and not r.rewrite)
                               / max(1, sum(r.body_bytes for r in reqs if r.prefix is not None
                                            and not r.rewrite))) if steady else None,
        "rewrite_turns": sum(1 for r in reqs if r.rewrite),
        "direct_p50_ms": percentile(direct_ms, 0.5) if direct_ms else None,
        "added_mean_ms": (statistics.fmean(proxy_ms) - statistics.fmean(direct_ms))
        if reqs else None,
        "added_p50_ms": percentile(proxy_ms, 0.5) - percentile(direct_ms, 0.5) if reqs else None,
        "added_p95_ms": percentile(proxy_ms, 0.95) - percentile(direct_ms, 0.95)
        if reqs else None,
        "invariants": invariants,
        "wall_s": sum(res.wall_s for res in results),
    }
    by_cat: dict[str, list[bool]] = {}
    for q in qs:
        by_cat.setdefault(q.category, []).append(q.covered)
    out["coverage_by_category"] = {c: share(sum(v), len(v)) for c, v in sorted(by_cat.items())}
    return out


def aggregate(results: Sequence[SessionResult]) -> dict[str, Any]:
    """``{system: {"by_size": {turns: figures}, "overall": figures}}``."""
    out: dict[str, Any] = {}
    for system in SYSTEMS:
        mine = [r for r in results if r.system == system]
        if not mine:
            continue
        sizes = sorted({r.n_turns for r in mine})
        out[system] = {"by_size": {n: figures([r for r in mine if r.n_turns == n])
                                   for n in sizes},
                       "overall": figures(mine)}
    return out


def verdict(agg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """lcm-proxy against :data:`TARGETS`: ``{target: {"value", "target", "met"}}``
    (``met`` is ``None`` when the profile cannot measure it, e.g. no 1000-turn session)."""
    lcm = agg.get("lcm")
    if lcm is None:
        return {}
    o = lcm["overall"]
    sizes = lcm["by_size"]
    cov_min = min((f["coverage"] for f in sizes.values() if f["coverage"] is not None),
                  default=None)
    at_1000 = sizes.get(1000, {}).get("added_p95_ms")
    invariants_ok = all(v is not False for v in o["invariants"].values())

    def row(value: Any, target: Any, met: bool | None, unit: str) -> dict[str, Any]:
        return {"value": value, "target": target, "met": met, "unit": unit}

    def at_least(v: float | None, t: float) -> bool | None:
        return None if v is None else v >= t

    def at_most(v: float | None, t: float) -> bool | None:
        return None if v is None else v <= t

    return {
        "storage correctness": row(o["storage"], 1.0, at_least(o["storage"], 1.0), "share"),
        "assembly coverage, every size (lowest)": row(cov_min, 0.95, at_least(cov_min, 0.95),
                                                      "share"),
        "retrieval recall@10": row(o["recall"], 0.95, at_least(o["recall"], 0.95), "share"),
        "retrieval rank-1": row(o["rank1"], 0.85, at_least(o["rank1"], 0.85), "share"),
        "questions with a superseded value shown as current": row(
            o["stale_questions"], 0, o["stale_questions"] == 0, "count"),
        "memory tokens per user turn (mean)": row(
            o["memory_tokens_mean"], 1200, at_most(o["memory_tokens_mean"], 1200.0), "tokens"),
        "net extra tokens per request (mean)": row(
            o["net_extra_tokens_mean"], 1200, at_most(o["net_extra_tokens_mean"], 1200.0),
            "tokens"),
        "cacheable prefix, requests without a new compaction": row(
            o["prefix_share"], 0.90, at_least(o["prefix_share"], 0.90), "share"),
        "added latency p95 at 1000 turns": row(at_1000, 15.0, at_most(at_1000, 15.0), "ms"),
        "all invariants hold": row(invariants_ok, True, invariants_ok, "bool"),
    }


def to_json(results: Sequence[SessionResult], meta: dict[str, Any]) -> dict[str, Any]:
    """The whole report as a JSON-ready dict: ``meta``, ``figures`` (aggregate),
    ``verdict`` and ``sessions`` (questions, storage and task checks, invariants —
    per-request records are summarised, not listed)."""
    agg = aggregate(results)
    sessions = []
    for r in results:
        d = asdict(r)
        d.pop("requests")
        d["figures"] = figures([r])
        sessions.append(d)
    return {"meta": meta, "figures": agg, "verdict": verdict(agg), "sessions": sessions}
