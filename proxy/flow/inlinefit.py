"""Inline compaction: a request that would not fit its context budget is compacted
until it does (:func:`fit`), before it is forwarded (:mod:`proxy.flow.plan`)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from memory_core.assembly import budget
from memory_core.compaction.compressor import SCAFFOLD_HEADER
from memory_core.engine import Engine
from memory_core.models import Scope

INLINE_SECONDS = 5.0
"""Inline compaction to fit a budget starts no further stage after this long."""

@dataclass
class View:
    """What the upstream would see: ``messages``, the stored ``ids`` beside them
    (splices repeat their reply's id), the ids the forest ``covered``."""

    messages: list[Any]
    ids: list[int]
    covered: set[int]
    spliced: bool


TAIL_ROUNDS = 2
"""Call/result rounds of the newest turn the last inline stage keeps verbatim: the
one the request continues (its thinking signed) and the one before it."""


def fit(metrics: Any, engine: Engine, scope: Scope, thread_id: int, ids: list[int],
         roots: list[Any], view: View, total: int, render: Any, goal: int,
         forest_room: int, count: Any, first_stage_only: bool = False
         ) -> tuple[list[Any], View, int]:
    """Compact inline until the request counts at most ``goal`` tokens.

    Stages, each an extractive compaction with no minimum size: the configured
    protected turns, then fewer protected tail turns (halving to 1), then no
    protected head turns. The first stage whose result leaves a fifth of ``goal``
    free wins (the next turns then fit without compacting again); otherwise the
    first that fits. If none fits, the scaffold is squeezed to the room left.
    ``count(view)`` is the request's tokens with ``view``.
    ``first_stage_only``: the request already fits; run only the first stage (the
    configured protected turns), and leave the view as it is when it compacts
    nothing (a resumed thread at a small budget, :func:`proxy.flow.plan.prepare`).
    Returns ``(roots, view, total)``.
    """
    base = engine.config.compaction
    path = list(dict.fromkeys(ids))  # each stored message once (regrouped calls repeat one)
    tails = [base.tail_turns]
    while tails[-1] > 1:
        tails.append(max(1, tails[-1] // 2))
    stages = [dataclasses.replace(base, min_tokens=0, min_turns=1, tail_turns=t)
              for t in tails]
    stages.append(dataclasses.replace(stages[-1], head_turns=0))
    # An agent's tool loop inside one user turn: all but its last rounds.
    stages.append(dataclasses.replace(stages[-1], tail_rounds=TAIL_ROUNDS))
    if first_stage_only:
        stages = stages[:1]
    started = time.perf_counter()
    best: tuple[list[Any], View, int] | None = None
    for stage in stages:
        if time.perf_counter() - started > INLINE_SECONDS:
            break
        created = engine.compact(scope, thread_id, path, None, force=True, config=stage)
        if not created:
            continue
        metrics.compactions.labels("inline").inc(len(created))
        roots = engine.forest_for(scope, ids)
        view = render(roots, forest_room)
        total = count(view)
        if total <= goal and best is None:
            best = (roots, view, total)
        if total <= goal - goal // 5:
            best = (roots, view, total)
            break
    if first_stage_only:  # it fit before: not a fitted request
        return best or (roots, view, total)
    if best is not None:
        metrics.context.labels("fitted").inc()
        return best
    if roots:
        # Still over: give the scaffold only the room the rest leaves.
        at = scaffold_index(view.messages)
        scaffold = budget.message_tokens(view.messages[at]) if at is not None else 0
        room = max(0, goal - (total - scaffold))
        view = render(roots, room)
        total = count(view)
        if total <= goal:
            metrics.context.labels("fitted").inc()
    return roots, view, total


def scaffold_index(messages: list[Any]) -> int | None:
    for i, msg in enumerate(messages):
        if (isinstance(msg, dict) and isinstance(msg.get("content"), str)
                and msg["content"].startswith(SCAFFOLD_HEADER)):
            return i
    return None
