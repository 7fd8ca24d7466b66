"""Clip the client's own tool results when they alone overflow the context window.

A tool result the agent just received (a whole file read, a long build log) is part
of the newest turn, which compaction never summarises: when it alone is larger than
the budget, the request used to go upstream as sent and the upstream refused it
("prompt is too long", ``context_length_exceeded``), on every retry, because the
client resends it. :func:`clip_results` cuts the middle out of the largest results
until the request fits, keeping each one's head and tail (where a log's error
usually is) and saying how much was left out and which stored message holds the
whole output (the evidence log keeps it as sent; ``view_message`` reads it).

Sans-io, on the chat-shaped view the memory path plans on: Chat Completions and
Responses ``tool`` messages with string content, and Anthropic ``tool_result``
blocks (string content, or the text blocks of a list) of user messages. Images and
other parts are never cut; a result that is not text is left as it is. (The
results of the proxy's own memory tools, in hidden rounds, are cut otherwise, on
purpose: :func:`proxy.flow.roundbudget.fit_results`.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from memory_core.tokens import count_tokens

MIN_KEEP_TOKENS = 256
"""Tokens of a clipped result always kept (head and tail together)."""


def _note(left_out: int, stored_id: int | None, tools: bool) -> str:
    where = f"; the whole output is stored as message {stored_id}" if stored_id else ""
    how = f", view_message({stored_id}) shows it" if stored_id and tools else ""
    return (f"\n…[{left_out} tokens of this tool result left out to fit the context"
            f" window{where}{how}]…\n")


def _cut(text: str, tokens: int, keep_tokens: int, note: Callable[[int], str]) -> str:
    """``text`` (``tokens`` long) with its middle left out, so that about
    ``keep_tokens`` remain."""
    keep = max(1, int(len(text) * keep_tokens / max(tokens, 1)))
    while True:
        head = keep * 2 // 3
        out = text[:head] + note(tokens - keep_tokens) + text[len(text) - (keep - head):]
        if count_tokens(out) <= keep_tokens + 64 or keep <= 16:
            return out
        keep = keep * 9 // 10


class _Slot:
    """One clippable text: where it sits, its stored id, its tokens."""

    def __init__(self, msg: int, block: int | None, part: int | None, text: str,
                 stored_id: int | None) -> None:
        self.msg, self.block, self.part, self.text = msg, block, part, text
        self.stored_id = stored_id
        self.tokens = count_tokens(text)


def _slots(messages: list[Any], stored: Mapping[int, int]) -> list[_Slot]:
    out: list[_Slot] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        sid = stored.get(id(m))
        content = m.get("content")
        if m.get("role") == "tool" and isinstance(content, str):
            out.append(_Slot(i, None, None, content, sid))
        elif m.get("role") == "user" and isinstance(content, list):
            for b, block in enumerate(content):
                if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                    continue
                inner = block.get("content")
                if isinstance(inner, str):
                    out.append(_Slot(i, b, None, inner, sid))
                elif isinstance(inner, list):
                    for p, part in enumerate(inner):
                        if isinstance(part, dict) and part.get("type") == "text" and \
                                isinstance(part.get("text"), str):
                            out.append(_Slot(i, b, p, part["text"], sid))
    return out


def _put(messages: list[Any], slot: _Slot, text: str) -> None:
    m = messages[slot.msg]
    if slot.block is None:
        messages[slot.msg] = dict(m, content=text)
        return
    content = list(m["content"])
    block = content[slot.block]
    if slot.part is None:
        content[slot.block] = dict(block, content=text)
    else:
        parts = list(block["content"])
        parts[slot.part] = dict(parts[slot.part], text=text)
        content[slot.block] = dict(block, content=parts)
    messages[slot.msg] = dict(m, content=content)


def clip_results(messages: list[Any], over: int, stored: Mapping[int, int], *,
                 tools: bool = False) -> tuple[list[Any], int] | None:
    """``(messages with their largest tool results clipped, results clipped)`` saving
    at least ``over`` tokens, or ``None`` when clipping every result down to
    :data:`MIN_KEEP_TOKENS` would not save that much (the request does not fit for
    other reasons: the user's own text). ``stored`` maps ``id()`` of a message
    object to its stored message id (named in the note); ``tools``: the memory
    tools are offered (the note names ``view_message``). ``messages`` is not changed."""
    slots = sorted(_slots(messages, stored), key=lambda s: -s.tokens)
    spare = sum(max(0, s.tokens - MIN_KEEP_TOKENS) for s in slots)
    need = over + 64 * len(slots) + 32  # each note's own tokens, and slack
    if not slots or spare < need:
        return None
    # The cap every result is cut down to: the largest that saves enough.
    lo, hi = MIN_KEEP_TOKENS, slots[0].tokens
    while lo < hi:
        mid = (lo + hi + 1) // 2
        saved = sum(max(0, s.tokens - mid) for s in slots)
        if saved >= need:
            lo = mid
        else:
            hi = mid - 1
    cap = lo
    out = list(messages)
    clipped = 0
    for s in slots:
        if s.tokens <= cap:
            continue
        _put(out, s, _cut(s.text, s.tokens, cap, functools.partial(_note, stored_id=s.stored_id,
                                                         tools=tools)))
        clipped += 1
    return out, clipped


__all__ = ["MIN_KEEP_TOKENS", "clip_results"]
