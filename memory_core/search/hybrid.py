"""Rank fusion of BM25 and vector candidates, plus boosts (pure functions, no I/O).

Fusion (``SearchConfig.fusion``):

- ``rrf`` — reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
  ``w_b / (k + rank_b) + w_v / (k + rank_v)``, a missing rank contributes 0. The
  sum is divided by its maximum ``(w_b + w_v) / (k + 1)`` so that scores lie in
  [0, 1] and ``min_score`` and the boosts have a stable meaning.
- ``weighted`` — ``(w_b · bm25/max_bm25 + w_v · max(cos, 0)/max_cos) / (w_b + w_v)``.
- ``minmax`` (default) — each list is scaled to [0, 1] over its own candidates,
  ``(s - min) / (max - min)``, then ``(w_b · b + w_v · v) / (w_b + w_v)``; a
  candidate missing from a list gets 0 there. A BM25 list with fewer hits than
  asked for has run out of matches, and is scaled from 0 instead of its minimum.
  Scores keep the gaps that ranks lose. The BM25 list's top is scaled against at
  least a *reference* score when the caller gives one (the score of a document
  that matches the whole query, ``SearchConfig.bm25_reference_share``): plain
  min-max stretches the best keyword match to 1 however little of the query it
  holds, so one shared common word would outrank the best semantic match.

Then, in this order: *neighbour context* (a message gains ``neighbor_weight`` ×
the best fused score among its parent and children — the turn before and after — because
an answer often sits next to the turn that names the topic); *speaker*
(``speaker_boost`` when the hit was said by someone the query names); *date*
(``date_boost`` when the hit was created in a month or year the query names,
:func:`query_periods`); *session* (each plain turn gains ``session_boost`` × the
best score so far among the turns of its thread and UTC day — one sitting of a
conversation; the caller leaves memory out, see ``SearchService``); *exact match*
(``exact_match_boost`` when the whole query occurs verbatim, case-folded, in the
text, tested in SQLite by the caller); *scope* (``scope_boost`` for hits in the
caller's current thread);
*recency* (``recency_boost · 2^(-age_days / recency_half_life_days)``). Hits below
``min_score`` are dropped, and so are hits only the vector list found whose
similarity is below the embedder's relevance floor (:func:`drop_unrelated`). Ties
break on the label, so results are deterministic.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field

from memory_core.search.searchconfig import SearchConfig


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
    bm25: list[tuple[int, float]], vector: list[tuple[int, float]], cfg: SearchConfig,
    depth: int = 0, reference: float = 0.0,
) -> dict[int, Fused]:
    """Combine two ranked ``(label, score)`` lists into normalised fused scores.

    ``depth``: how many candidates each list was asked for (``minmax``: a shorter
    BM25 list is scaled from 0, not from its weakest match). ``reference``
    (``minmax``, BM25 units, 0 = none): the BM25 list is scaled to
    ``max(best score, reference)``, so a best match below it stays below 1."""
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
    if cfg.fusion == "minmax":
        # a BM25 list shorter than asked for ran out of matches: its floor is 0
        b_lo, b_span = _span(bm25, 0.0 if len(bm25) < depth else None)
        if reference > 0:
            b_span = max(b_span, reference - b_lo)
        v_lo, v_span = _span(vector)
        for e in out.values():
            b = (e.bm25_score - b_lo) / b_span if e.bm25_score is not None else 0.0
            v = (e.vector_score - v_lo) / v_span if e.vector_score is not None else 0.0
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


def _span(pairs: list[tuple[int, float]], floor: float | None = None
          ) -> tuple[float, float]:
    """``(low, max - low)`` of a candidate list's scores, ``low`` the minimum or
    ``floor`` (span 1.0 when flat)."""
    if not pairs:
        return 0.0, 1.0
    scores = [sc for _, sc in pairs]
    lo, hi = min(scores), max(scores)
    if floor is not None:
        lo = min(lo, floor)
    return lo, (hi - lo) or 1.0


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_YEAR = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?({_MON})\.?"
    rf"(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?,?\s+(?:of\s+)?((?:19|20)\d\d)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")


def query_periods(query: str) -> list[tuple[float, float]]:
    """UTC ``[start, end)`` periods (UNIX s) of the months and years ``query`` names.

    "in May 2023", "on 8 May, 2023", "October 6, 2022" name a month; a year alone
    ("in 2022") names the year. English month names and abbreviations only.
    """
    out: list[tuple[float, float]] = []
    rest = query
    for m in _MONTH_YEAR.finditer(query):
        month, year = _MONTHS[m.group(1).lower()], int(m.group(2))
        nxt = (year + 1, 1) if month == 12 else (year, month + 1)
        out.append((float(calendar.timegm((year, month, 1, 0, 0, 0))),
                    float(calendar.timegm((*nxt, 1, 0, 0, 0)))))
        rest = rest.replace(m.group(0), " ")
    for m in _YEAR.finditer(rest):
        year = int(m.group(1))
        out.append((float(calendar.timegm((year, 1, 1, 0, 0, 0))),
                    float(calendar.timegm((year + 1, 1, 1, 0, 0, 0)))))
    return out


def add_neighbours(
    fused: dict[int, Fused], neighbours: dict[int, list[int]], weight: float
) -> None:
    """Add ``weight`` × the best base score among each candidate's neighbours (labels)."""
    if weight <= 0 or not neighbours:
        return
    extras = {}
    for label, near in neighbours.items():
        if label in fused:
            best = max((fused[n].score for n in near if n in fused), default=0.0)
            if best:
                extras[label] = weight * best
    for label, extra in extras.items():
        e = fused[label]
        e.boosts["neighbours"] = extra
        e.score += extra


def add_boost(fused: dict[int, Fused], name: str, labels: set[int], amount: float) -> None:
    """Add ``amount`` to the score of each entry whose label is in ``labels``."""
    if amount <= 0:
        return
    for label in labels:
        e = fused.get(label)
        if e is not None:
            e.boosts[name] = amount
            e.score += amount


def scale(fused: dict[int, Fused], name: str, labels: set[int], factor: float) -> None:
    """Multiply the score of each entry whose label is in ``labels`` by ``factor``."""
    if factor >= 1.0:
        return
    for label in labels:
        e = fused.get(label)
        if e is not None:
            e.boosts[name] = factor - 1.0
            e.score *= factor


def add_session(fused: dict[int, Fused], groups: dict[int, tuple[int, int]],
                weight: float) -> None:
    """Add ``weight`` × the best score of each entry's group (same thread and day)."""
    if weight <= 0 or not groups:
        return
    best: dict[tuple[int, int], float] = {}
    for label, e in fused.items():
        g = groups.get(label)
        if g is not None and e.score > best.get(g, 0.0):
            best[g] = e.score
    for label, e in fused.items():
        g = groups.get(label)
        if g is not None and best.get(g, 0.0) > 0:
            e.boosts["session"] = weight * best[g]
            e.score += e.boosts["session"]


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
    recency boosts (see module docstring). Only the entries that earn one are touched."""
    if cfg.exact_match_boost > 0:
        for label, flag in exact.items():
            e = fused.get(label)
            if flag and e is not None:
                e.boosts["exact"] = cfg.exact_match_boost
                e.score += cfg.exact_match_boost
    if current_thread_id is not None and cfg.scope_boost > 0:
        for label, thread in threads.items():
            e = fused.get(label)
            if thread == current_thread_id and e is not None:
                e.boosts["scope"] = cfg.scope_boost
                e.score += cfg.scope_boost
    if cfg.recency_boost > 0:
        for label, e in fused.items():
            if label in times:
                age_days = max(0.0, now - times[label]) / 86400.0
                amount = cfg.recency_boost * 2.0 ** (-age_days / cfg.recency_half_life_days)
                e.boosts["recency"] = amount
                e.score += amount


ASKED_BOOSTS = frozenset({"intent", "standing", "quantity", "successor", "source"})
"""Boosts that make a candidate relevant whatever its vector score: the kind of
record the query asks for, the value that replaced a match, an item whose source
turn matched."""


def drop_unrelated(fused: dict[int, Fused], floor: float) -> None:
    """Remove the entries that only the vector list found (no BM25 rank) with a
    similarity below ``floor``: the nearest neighbours of a query about something
    never said. Entries from neither list (added successors, task lines) and those
    holding one of :data:`ASKED_BOOSTS` stay."""
    for label in [lb for lb, e in fused.items() if e.bm25_rank is None
                  and e.vector_score is not None and e.vector_score < floor
                  and not ASKED_BOOSTS.intersection(e.boosts)]:
        del fused[label]


def ranked(fused: dict[int, Fused], min_score: float, k: int) -> list[Fused]:
    """Return the best ``k`` entries with ``score >= min_score`` (ties: lower label first)."""
    keep = [e for e in fused.values() if e.score >= min_score]
    keep.sort(key=lambda e: (-e.score, e.label))
    return keep[:k]
