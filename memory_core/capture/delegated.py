"""A user message the model wrote: a sub-agent's task prompt, a handoff's input.

An agent that delegates (Claude Code's ``Task``/``Agent`` tool, an openai-agents
agent-as-tool, a Codex sub-agent) writes the sub-agent's instructions as the argument
of a tool call of its own, then sends them, on the same key, as the first ``user``
message of a new conversation. Read as the user's words, that prompt's sentences
("The pool size is 40.", "Never include arguments.") became the user's facts and
rules and came back in later blocks as what the user said.

Signal, the same for every agent (no agent's or tool's name): the message's words
(less what a client adds to a turn, :func:`memory_core.extraction.prepare.user_words`)
are, but for whitespace, nearly the whole of a string in the arguments of a tool call
an assistant message of the same tenant and role made shortly before
(:data:`WINDOW_SECONDS`, the newest :data:`RECENT_CALLS` such messages). A sentence the
assistant said in prose, repeated by the user, stays the user's: only tool-call
arguments count. Such a message is kept as evidence and yields no items.

Checked off the request path, by the extraction job (:mod:`memory_core.capture.jobs`);
sans-io here: the store hands over the candidate assistant messages' raw JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from memory_core.capture.evidence import loads_lossless
from memory_core.extraction.prepare import user_words

WINDOW_SECONDS = 3600.0
"""How long before a user message the assistant's tool call may have been stored
(seconds): a sub-agent starts right after the call that spawns it; one resumed later
in the hour still matches."""
RECENT_CALLS = 32
"""Most recent assistant messages with tool calls read per check (parallel
sub-agents are one message's calls)."""
MIN_CHARS = 40
"""Shortest argument text (characters, whitespace collapsed) that can mark a message as
the model's: a short argument (``ls``, a file name, "yes") is words a user says too."""
NEAR = 0.8
"""The shorter of message and argument must be at least this share of the longer
(characters) and contained in it: "nearly whole", not a quoted sentence."""
_MAX_STRINGS = 256
"""Most argument strings read from one assistant message (an odd, huge call)."""


def _flat(text: str) -> str:
    return " ".join(text.split())


def argument_texts(message: Any) -> Iterator[str]:
    """The string values (any depth, at most :data:`_MAX_STRINGS`) of the tool-call
    arguments of an assistant ``message`` in the stored, Chat-like shape: Anthropic
    ``tool_use`` parts' ``input``, ``tool_calls[].function.arguments`` (JSON text, or
    free text for a custom tool), a legacy ``function_call``. Nothing for odd shapes."""
    if not isinstance(message, dict):
        return
    sources: list[Any] = []
    content = message.get("content")
    if isinstance(content, list):
        sources += [p.get("input") for p in content
                    if isinstance(p, dict) and p.get("type") == "tool_use"]
    calls = message.get("tool_calls")
    fns = [c.get("function") for c in calls if isinstance(c, dict)] \
        if isinstance(calls, list) else []
    fns.append(message.get("function_call"))
    for fn in fns:
        if isinstance(fn, dict):
            args = fn.get("arguments")
            if isinstance(args, str):
                try:
                    sources.append(orjson.loads(args))
                except orjson.JSONDecodeError:
                    sources.append(args)
    seen = 0
    stack = sources[::-1]
    while stack and seen < _MAX_STRINGS:
        value = stack.pop()
        if isinstance(value, str):
            seen += 1
            yield value
        elif isinstance(value, dict):
            stack.extend(list(value.values())[::-1])
        elif isinstance(value, list):
            stack.extend(value[::-1])


def worth_checking(text: str) -> bool:
    """Whether ``text`` (a user message's) is long enough to be an argument that
    marks it (:data:`MIN_CHARS`); a shorter one needs no look-up."""
    return len(_flat(user_words(text))) >= MIN_CHARS


def model_wrote(text: str, assistant_raw: Iterable[str]) -> bool:
    """Whether the user message ``text`` is (nearly whole) a tool-call argument string of
    one of the assistant messages ``assistant_raw`` (their stored raw JSON, newest
    first); see the module docstring. Unreadable JSON is skipped."""
    said = _flat(user_words(text))
    if len(said) < MIN_CHARS:
        return False
    for raw in assistant_raw:
        try:
            message = loads_lossless(raw)
        except (ValueError, TypeError, RecursionError):
            continue
        for arg in argument_texts(message):
            wrote = _flat(arg)
            if len(wrote) < MIN_CHARS:
                continue
            short, long = (wrote, said) if len(wrote) <= len(said) else (said, wrote)
            if len(short) >= NEAR * len(long) and short in long:
                return True
    return False
