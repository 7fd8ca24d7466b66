"""A hidden memory-tool round stays within the request's context budget.

Each hidden round sends the conversation again with the model's memory calls and
their results appended. :func:`fit_results` checks that body against the
request's input budget (:class:`memory_core.assembly.budget.Budget`, planned by the memory
path) and clips the tool results to the room left; when even clipped results
cannot fit, the loop ends as at ``tools.max_rounds``. Sans-io.
"""

from __future__ import annotations

from typing import Any

from memory_core.assembly import budget

MIN_RESULT_TOKENS = 64
"""A tool result with less room than this is not worth sending: the round stops."""
CLIP_NOTE = " …[clipped to fit the context budget]"


def fit_results(limit: int | None, tools: Any, messages: list[Any], call: dict[str, Any],
                results: list[dict[str, Any]], *, outside: int = 0
                ) -> list[dict[str, Any]] | None:
    """``results`` (tool messages answering ``call``), clipped so that the next round,
    ``messages + [call, *results]`` with ``tools`` and ``outside`` tokens more (an
    Anthropic ``system`` field), counts at most ``limit`` tokens; ``None`` when they
    cannot fit (less than :data:`MIN_RESULT_TOKENS` each); ``results`` unchanged
    when ``limit`` is ``None`` or they fit."""
    if limit is None or not results:
        return results
    fixed = budget.tools_tokens(tools) + budget.messages_tokens([*messages, call]) + outside
    need = sum(budget.message_tokens(r) for r in results)
    room = limit - fixed
    if need <= room:
        return results
    per = room // len(results) - budget.MESSAGE_OVERHEAD
    if per < MIN_RESULT_TOKENS:
        return None
    out = []
    for result in results:
        text = result.get("content")
        if not isinstance(text, str):
            out.append(result)
            continue
        tokens = budget.message_tokens(result) - budget.MESSAGE_OVERHEAD
        if tokens <= per:
            out.append(result)
            continue
        keep = max(0, int(len(text) * per / max(tokens, 1)) - len(CLIP_NOTE) * 2)
        clipped = dict(result, content=text[:keep] + CLIP_NOTE)
        while keep > 0 and budget.message_tokens(clipped) - budget.MESSAGE_OVERHEAD > per:
            keep = keep * 9 // 10
            clipped = dict(result, content=text[:keep] + CLIP_NOTE)
        out.append(clipped)
    return out
