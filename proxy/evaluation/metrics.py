"""The evaluation's measures, as pure functions over plain values (no I/O).

Every function here is unit-tested on hand-made inputs (``tests/test_eval_harness.py``).
Conventions:

- A *needle set* is a tuple of strings that must all occur on one line. Matching
  ignores ASCII case; a needle that starts (ends) with a digit does not match right
  after (before) another digit or a decimal point, so ``"45 s"`` is not found in
  ``"145 s"``.
- *Lines* of a request are the lines of every message's text (string content or
  text parts) and of every tool call's arguments.
- *Memory text* is what a memory layer wrote, as opposed to the client's own
  messages: the injection block (before ``[Current Request]`` in the newest user
  message), the compaction scaffold (a message starting with the scaffold header)
  and the rolling-summary baseline's notes (after :data:`ROLLING_MARKER` in the
  system message).
- Token counts are o200k tokens (:func:`memory_core.tokens.count_tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from memory_core.assembly.block import CURRENT_REQUEST
from memory_core.compaction.compressor import SCAFFOLD_HEADER
from memory_core.tokens import count_tokens

ROLLING_MARKER = "[Notes kept from earlier in this conversation]"
"""Where the rolling-summary client's notes start inside its system message."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens counted per message for role and framing (OpenAI's chat format costs 3–4)."""

_SUPERSEDED = re.compile(r"superseded", re.I)


def _needle_re(needle: str) -> re.Pattern[str]:
    head = r"(?<![\d.])" if needle[:1].isdigit() else ""
    tail = r"(?![\d])" if needle[-1:].isdigit() else ""
    return re.compile(head + re.escape(needle) + tail, re.I)


_CACHE: dict[str, re.Pattern[str]] = {}


def has_needle(text: str, needle: str) -> bool:
    """True when ``needle`` occurs in ``text`` (see the module's matching rules)."""
    pat = _CACHE.get(needle)
    if pat is None:
        pat = _CACHE[needle] = _needle_re(needle)
    return pat.search(text) is not None


def line_has_all(line: str, needles: Sequence[str]) -> bool:
    """True when every needle occurs in ``line`` (an empty needle set never matches)."""
    return bool(needles) and all(has_needle(line, n) for n in needles)


def message_text(message: Any) -> str:
    """The text of one chat message: string content, text parts joined by newlines,
    and tool-call arguments (one per line). Non-dict messages give ``""``."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [p.get("text", "") for p in content if isinstance(p, dict)
                  and isinstance(p.get("text"), str)]
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            fn = call.get("function") or {}
            parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    return "\n".join(parts)


def lines_of(messages: Iterable[Any]) -> list[str]:
    """Every line of every message of a request (see :func:`message_text`)."""
    out: list[str] = []
    for m in messages:
        out += message_text(m).splitlines()
    return out


def covered(messages: Sequence[Any], needles: Sequence[str]) -> bool:
    """Assembly coverage of one key item: some line of the request holds every needle."""
    return any(line_has_all(line, needles) for line in lines_of(messages))


def memory_lines(messages: Sequence[Any]) -> list[str]:
    """The lines of memory text in a request (module docstring), in request order."""
    out: list[str] = []
    for i, m in enumerate(messages):
        text = message_text(m)
        role = m.get("role") if isinstance(m, dict) else None
        if text.startswith(SCAFFOLD_HEADER):
            out += text.splitlines()
        elif role == "system" and ROLLING_MARKER in text:
            out += text.split(ROLLING_MARKER, 1)[1].splitlines()
        elif role == "user" and i == len(messages) - 1 and CURRENT_REQUEST in text:
            out += text.split(CURRENT_REQUEST, 1)[0].splitlines()
    return out


def stale_lines(messages: Sequence[Any], current: Sequence[str],
                superseded: Sequence[Sequence[str]]) -> list[str]:
    """Superseded values presented as current, for one key item; ``[]`` when none.

    A line of memory text counts when it holds all needles of an older value, holds
    no current value and does not say "superseded" (a line showing old and new
    together is a correction, not a stale value). The request as a whole counts
    (reported as ``"<stale only> …"``) when an older value is on some line not
    marked superseded and the current value on none: a reader could only take the
    old one for current.
    """
    bad: list[str] = []
    for line in memory_lines(messages):
        if _SUPERSEDED.search(line) or line_has_all(line, current):
            continue
        if any(line_has_all(line, old) for old in superseded):
            bad.append(line)
    if superseded and not covered(messages, current):
        for line in lines_of(messages):
            if _SUPERSEDED.search(line):
                continue  # marked as history: a coverage miss, not a stale value
            if any(line_has_all(line, old) for old in superseded):
                bad.append("<stale only> " + line)
                break
    return bad


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (binary search over
    slice comparisons, so megabyte bodies cost microseconds)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


_RENDERED_SETTINGS = ("tools", "functions", "response_format")
"""Request fields a chat template renders ahead of the conversation."""


def rendered_prompt(body: dict[str, Any]) -> bytes:
    """The request as a provider's prompt cache sees it, as comparable bytes.

    Providers cache the *rendered* prompt, not the JSON body: tool definitions (and
    a structured-output schema) come before the messages, which follow in order
    (OpenAI's prompt-caching guide: tools and schemas "must be identical between
    requests" and serve as a prefix; Together's and others' docs list tool
    definitions as part of the cached prefix). So this returns those settings,
    then one line per message, keys sorted. In the JSON body ``tools`` follows
    ``messages`` and could never count as a shared prefix.
    """
    head = orjson.dumps({k: body[k] for k in _RENDERED_SETTINGS if k in body},
                        option=orjson.OPT_SORT_KEYS)
    return head + b"".join(b"\n" + orjson.dumps(m, option=orjson.OPT_SORT_KEYS)
                           for m in body.get("messages") or ())


def prefix_share(previous: bytes | None, current: bytes) -> float | None:
    """Cacheable-prefix share: common byte prefix / ``len(current)`` (0–1) of two
    :func:`rendered_prompt` values; ``None`` for the first request or an empty one."""
    if previous is None or not current:
        return None
    return common_prefix(previous, current) / len(current)


def tool_pairs_ok(messages: Sequence[Any]) -> bool:
    """True when every assistant tool call is answered by a later ``tool`` message with
    its id before the next user/assistant turn, and every ``tool`` message answers a
    call made before it."""
    open_calls: set[Any] = set()
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id")
            if cid not in open_calls:
                return False
            open_calls.discard(cid)
            continue
        if open_calls:
            return False
        if role == "assistant":
            open_calls = {c.get("id") for c in m.get("tool_calls") or () if isinstance(c, dict)}
    return not open_calls


class TokenCounter:
    """Tokens of chat requests, with a per-text cache (messages repeat every turn)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def text(self, text: str) -> int:
        """o200k tokens of ``text`` (cached)."""
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = count_tokens(text)
        return n

    def message(self, message: Any) -> int:
        """Tokens of one message: its text (:func:`message_text`) plus
        :data:`MESSAGE_OVERHEAD_TOKENS`."""
        return self.text(message_text(message)) + MESSAGE_OVERHEAD_TOKENS

    def request(self, messages: Iterable[Any]) -> int:
        """Tokens of a request's messages (tool definitions are not counted: every
        system sends the same ones)."""
        return sum(self.message(m) for m in messages)


def block_text(messages: Sequence[Any]) -> str:
    """The injection block of a request (up to and including ``[Current Request]``),
    or ``""`` when its newest message carries none."""
    if not messages:
        return ""
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        return ""
    text = message_text(last)
    head, sep, _ = text.partition(CURRENT_REQUEST)
    return head + sep if sep else ""


def hit_matches(text: str, status: str | None, needles: Sequence[str]) -> bool:
    """Retrieval: a search hit is the key item when one of its lines holds every
    needle and it is not a superseded or retracted memory item."""
    if status in ("superseded", "retracted"):
        return False
    return any(line_has_all(line, needles) for line in text.splitlines())


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0–1) by linear interpolation between closest ranks.
    Raises ``ValueError`` on no values."""
    if not values:
        raise ValueError("percentile of no values")
    data = sorted(values)
    pos = (len(data) - 1) * q
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


def share(hits: int, total: int) -> float | None:
    """``hits / total`` (0–1), or ``None`` when ``total`` is 0 (nothing measured)."""
    return hits / total if total else None
