"""A hidden memory-tool round stays within the request's context budget.

Each hidden round sends the conversation again with the model's memory calls and
their results appended. :func:`fit_results` checks that body against the
request's input budget (:class:`memory_core.assembly.budget.Budget`, planned by the memory
path) and clips the tool results to the room left; when even clipped results
cannot fit, the loop ends as at ``tools.max_rounds``. Sans-io.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_core.assembly import budget

MIN_RESULT_TOKENS = 64
"""A tool result with less room than this is not worth sending: the round stops."""
CLIP_NOTE = " …[clipped to fit the context budget]"


def fit_results(limit: int | None, tools: Any, messages: list[Any], call: dict[str, Any],
                results: list[dict[str, Any]], *, outside: int = 0,
                turns: Callable[[list[dict[str, Any]]], list[Any]] | None = None
                ) -> list[dict[str, Any]] | None:
    """``results`` (tool messages answering ``call``), clipped so that the next round,
    ``messages + [call, *turns(results)]`` with ``tools`` and ``outside`` tokens more
    (an Anthropic ``system`` field), counts at most ``limit`` tokens; ``None`` when
    they cannot fit (less than :data:`MIN_RESULT_TOKENS` each); ``results``
    unchanged when ``limit`` is ``None`` or they fit. ``turns``: the conversation
    entries the results go as (Anthropic: one user message of ``tool_result``
    blocks), counted as sent; default: the results themselves."""
    if limit is None or not results:
        return results
    wrap = turns or list
    fixed = budget.tools_tokens(tools) + budget.messages_tokens([*messages, call]) + outside
    room = limit - fixed

    def need(rs: list[dict[str, Any]]) -> int:
        return sum(budget.message_tokens(t) for t in wrap(rs))

    if need(results) <= room:
        return results
    per = room // len(results) - budget.MESSAGE_OVERHEAD
    for _ in range(4):  # the wrapped count can differ from the per-result one a little
        if per < MIN_RESULT_TOKENS:
            return None
        out = [_clipped(r, per) for r in results]
        over = need(out) - room
        if over <= 0:
            return out
        per -= over // len(results) + 1
    return None


def _clipped(result: dict[str, Any], per: int) -> dict[str, Any]:
    """``result`` with its text content cut to about ``per`` tokens, its head kept.

    Not :func:`proxy.flow.resultclip.clip_results` on purpose: that one cuts the
    middle of the client's own results (a log's error is at its tail) and names the
    stored whole; this result is the proxy's own ranked answer (best hits first, so
    the head is what matters), stored nowhere yet, and counted by the budget's own
    estimate (:func:`~memory_core.assembly.budget.message_tokens`) that the round is
    checked against."""
    text = result.get("content")
    if not isinstance(text, str):
        return result
    tokens = budget.message_tokens(result) - budget.MESSAGE_OVERHEAD
    if tokens <= per:
        return result
    keep = max(0, int(len(text) * per / max(tokens, 1)) - len(CLIP_NOTE) * 2)
    clipped = dict(result, content=text[:keep] + CLIP_NOTE)
    while keep > 0 and budget.message_tokens(clipped) - budget.MESSAGE_OVERHEAD > per:
        keep = keep * 9 // 10
        clipped = dict(result, content=text[:keep] + CLIP_NOTE)
    return clipped
