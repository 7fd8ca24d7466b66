"""Rank fusion of BM25 and vector candidates, plus boosts (pure functions, no I/O).

Fusion (``SearchConfig.fusion``):

- ``rrf`` — reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
  ``w_b / (k + rank_b) + w_v / (k + rank_v)``, a missing rank contributes 0. The
  sum is divided by its maximum ``(w_b + w_v) / (k + 1)`` so that scores lie in
  [0, 1] and ``min_score`` and the boosts have a stable meaning.
- ``weighted`` — ``(w_b · bm25/max_bm25 + w_v · max(cos, 0)/max_cos) / (w_b + w_v)``.

Then, in this order: *neighbour context* (a message gains ``neighbor_weight`` ×
the best fused score among its parent and children — the turn before and after — because
an answer often sits next to the turn that names the topic); *exact match*
(``exact_match_boost`` when the whole query occurs verbatim, case-folded, in the
text, tested in SQLite by the caller); *scope* (``scope_boost`` for hits in the caller's current thread);
*recency* (``recency_boost · 2^(-age_days / recency_half_life_days)``). Hits below
``min_score`` are dropped. Ties break on the label, so results are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_core.search.config import SearchConfig


@dataclass(slots=True)
class Fused:
    """Working record of one candidate during fusion (label = kind << 40 | ref_id)."""

    label: int
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    score: float = 0.0
    boosts: dict[str, float] = field(default_factory=dict)


def fuse(
    bm25: list[tuple[int, float]], vector: list[tuple[int, float]], cfg: SearchConfig
) -> dict[int, Fused]:
    """Combine two ranked ``(label, score)`` lists into normalised fused scores."""
    out: dict[int, Fused] = {}
    for rank, (label, score) in enumerate(bm25, 1):
        entry = out.setdefault(label, Fused(label))
        entry.bm25_rank, entry.bm25_score = rank, score
    for rank, (label, score) in enumerate(vector, 1):
        entry = out.setdefault(label, Fused(label))
        entry.vector_rank, entry.vector_score = rank, score
    wb, wv = cfg.bm25_weight, cfg.vector_weight
    if not bm25:
        wb = 0.0
    if not vector:
        wv = 0.0
    total = wb + wv
    if total <= 0:
        return out
    if cfg.fusion == "weighted":
        max_b = max((s for _, s in bm25), default=0.0) or 1.0
        max_v = max((s for _, s in vector), default=0.0) or 1.0
        for e in out.values():
            b = (e.bm25_score or 0.0) / max_b
            v = max(e.vector_score or 0.0, 0.0) / max_v
            e.score = (wb * b + wv * v) / total
        return out
    k = cfg.rrf_k
    top = total / (k + 1)
    for e in out.values():
        s = 0.0
        if e.bm25_rank is not None:
            s += wb / (k + e.bm25_rank)
        if e.vector_rank is not None:
            s += wv / (k + e.vector_rank)
        e.score = s / top
    return out


def add_neighbours(
    fused: dict[int, Fused], neighbours: dict[int, list[int]], weight: float
) -> None:
    """Add ``weight`` × the best base score among each candidate's neighbours (labels)."""
    if weight <= 0 or not neighbours:
        return
    base = {label: e.score for label, e in fused.items()}
    for label, e in fused.items():
        extra = weight * max((base.get(n, 0.0) for n in neighbours.get(label, ())), default=0.0)
        if extra:
            e.boosts["neighbours"] = extra
            e.score += extra


def apply_boosts(
    fused: dict[int, Fused],
    cfg: SearchConfig,
    *,
    exact: dict[int, bool],
    threads: dict[int, int],
    times: dict[int, float],
    current_thread_id: int | None,
    now: float,
) -> None:
    """Add the exact-match (``exact[label]`` true: the query occurs verbatim), scope and
    recency boosts (see module docstring)."""
    for label, e in fused.items():
        if exact.get(label) and cfg.exact_match_boost > 0:
            e.boosts["exact"] = cfg.exact_match_boost
        if (current_thread_id is not None and cfg.scope_boost > 0
                and threads.get(label) == current_thread_id):
            e.boosts["scope"] = cfg.scope_boost
        if cfg.recency_boost > 0 and label in times:
            age_days = max(0.0, now - times[label]) / 86400.0
            e.boosts["recency"] = cfg.recency_boost * 2.0 ** (
                -age_days / cfg.recency_half_life_days)
        e.score += sum(v for k, v in e.boosts.items() if k != "neighbours")


def ranked(fused: dict[int, Fused], min_score: float, k: int) -> list[Fused]:
    """Return the best ``k`` entries with ``score >= min_score`` (ties: lower label first)."""
    keep = [e for e in fused.values() if e.score >= min_score]
    keep.sort(key=lambda e: (-e.score, e.label))
    return keep[:k]
