"""Side requests: an agent's one-shot utility calls beside its conversation.

Coding agents send, on the same key and base URL as the conversation, requests that
are not a turn of it: a quota probe answering in one token, a compaction request
whose one user message quotes the whole transcript. A memory block or the memory
tools do not fit them: a one-token answer cannot call a tool and pays for the block's
input; a compaction request carries its own context (the block's items would be
summarised into the agent's next session).

:func:`side_reason` tells them by signals that hold across agents, read from the
body alone (sans-io), never by an agent's name:

- ``tiny-output``: the answer may hold at most :data:`TINY_OUTPUT_TOKENS` tokens
  (``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens``);
- ``quoted-transcript``: no earlier assistant turn, and the newest user message quotes
  a conversation, turns of both speakers labelled (``Human:``/``User:`` and
  ``Assistant:``/``AI:``), as a compaction or summary request does; a user who pastes
  a chat log into a conversation under way asks about it as a turn of that
  conversation (:func:`memory_core.extraction.prepare.quotes_transcript`;
  the same signal keeps its lines out of the user's items);
- ``compaction-trigger``: a Responses ``input`` holding a ``compaction_trigger`` item
  (the API's "compact the current context" item, which Codex's remote compaction
  sends as the last input item on ``POST /v1/responses``): the answer is one
  ``compaction`` item, an encrypted summary of everything the request carries, so a
  block or memory tools sent with it would be folded into the agent's next context
  (and a memory call could not be answered inside a compaction anyway).

The request is still captured and forwarded as sent (its bytes untouched); only the
block and the memory tools are left out, ``x-lcm-side-request`` saying why.

A history-less request asking for a JSON answer (a topic or guardrail classifier) is
*not* taken for one: a JSON-only system prompt or a declared format looks the same in
an application's one-shot question ("Respond in JSON only" + "What's my dog's name?")
and in an agent with an output type, and those need the user's memory. Taking one
for a side request would lose memory silently on every call; a classifier given the
block only pays for its tokens.
"""

from __future__ import annotations

from typing import Any

from memory_core.capture.tree import message_text
from memory_core.extraction.prepare import quotes_transcript

COMPACTION_TRIGGER = "compaction_trigger"
"""The Responses input item type asking for a compaction of the request's context."""

TINY_OUTPUT_TOKENS = 4
"""An answer budget at or below this is a probe (a quota or health check answers in one
token): nothing the block adds could be used. A one-word answer to a question about
the user (``max_tokens`` 5–16) may still need the user's memory, so it keeps it."""


def side_reason(body: dict[str, Any], messages: list[Any]) -> str | None:
    """Why ``body`` (its conversation ``messages``, as the wire adapter reads them) is
    a side request, or ``None`` for a turn of a conversation. Never raises on odd
    shapes (a field of the wrong type is no signal)."""
    items = body.get("input")
    if isinstance(items, list) and any(isinstance(i, dict) and i.get("type") == COMPACTION_TRIGGER
                                       for i in items):
        return "compaction-trigger"
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) \
                and 0 < value <= TINY_OUTPUT_TOKENS:
            return "tiny-output"
    history = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
    if history:
        return None
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "user" \
            and quotes_transcript(message_text(last)):
        return "quoted-transcript"
    return None
