"""LoCoMo conversations as one long chat session, for ``bench history --workload locomo``.

The bench replays a conversation turn by turn as an agent resends it. LoCoMo
(``locomo10.json``, CC BY-NC 4.0, read from the path given, never shipped) holds ten
two-person conversations of 19-32 sessions each. Here they are read in order
(conversation ``seed % 10`` first, then the next ones, wrapping) and joined into one
session: speaker A's messages are ``user`` turns, speaker B's the replies, each with
its speaker's name in the OpenAI ``name`` field as the LoCoMo eval sends them
(:func:`memory_core.evaluation.locomo.conversation_messages`), image captions as an
extra text part. Consecutive messages of one speaker join into one turn (a newline
between them); a user turn that nobody answered gets an empty reply. All ten give
2,871 user turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memory_core.evaluation.locomo import conversation_messages


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    """One user turn of the replay: ``text`` (content: a string or text parts),
    ``reply`` (the other speaker's answer, a string), their speakers' names."""

    index: int
    text: Any
    reply: str
    user_name: str
    reply_name: str | None
    lang: str = "en"
    tool: None = None
    asks: None = None


@dataclass(frozen=True, slots=True)
class LocomoSession:
    """The turns of the replay and the system message the bench sends first."""

    id: str
    n_turns: int
    turns: tuple[LocomoTurn, ...]
    system: str = ("You are one of two friends chatting. Answer in their voice, "
                   "briefly.")
    key: tuple[()] = field(default=())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def _join(a: Any, b: Any) -> Any:
    if isinstance(a, str) and isinstance(b, str):
        return f"{a}\n{b}"
    parts = a if isinstance(a, list) else [{"type": "text", "text": a}]
    more = b if isinstance(b, list) else [{"type": "text", "text": b}]
    return [*parts, *more]


def locomo_session(data_path: str | Path, n_turns: int, seed: int = 0) -> LocomoSession:
    """``n_turns`` user turns of LoCoMo joined as above. ``FileNotFoundError`` when the
    file is missing; ``ValueError`` when it is not LoCoMo's list of conversations or
    holds fewer than ``n_turns`` user turns in all."""
    data = orjson.loads(Path(data_path).read_bytes())
    if not isinstance(data, list) or not all(
            isinstance(s, dict) and "conversation" in s for s in data):
        raise ValueError(f"{data_path}: not LoCoMo's locomo10.json (a list of samples "
                         "with a 'conversation')")
    turns: list[LocomoTurn] = []
    for k in range(len(data)):
        conv = data[(seed + k) % len(data)]["conversation"]
        pending: dict[str, Any] | None = None  # the user turn being built
        reply: dict[str, Any] | None = None
        for _when, msgs in conversation_messages(conv):
            for _dia, msg in msgs:
                if msg["role"] == "user":
                    if reply is not None or pending is None:
                        if pending is not None:
                            turns.append(_turn(len(turns), pending, reply))
                        pending, reply = dict(msg), None
                    else:
                        pending["content"] = _join(pending["content"], msg["content"])
                elif pending is not None:
                    if reply is None:
                        reply = {"name": msg["name"], "content": _text(msg["content"])}
                    else:
                        reply["content"] += "\n" + _text(msg["content"])
        if pending is not None:
            turns.append(_turn(len(turns), pending, reply))
        if len(turns) >= n_turns:
            break
    if len(turns) < n_turns:
        raise ValueError(f"LoCoMo holds {len(turns)} user turns; asked for {n_turns}")
    return LocomoSession(id=f"locomo-{seed}-{n_turns}", n_turns=n_turns,
                         turns=tuple(turns[:n_turns]))


def _turn(index: int, user: dict[str, Any], reply: dict[str, Any] | None) -> LocomoTurn:
    return LocomoTurn(index=index, text=user["content"],
                      reply="" if reply is None else reply["content"],
                      user_name=user["name"],
                      reply_name=None if reply is None else reply["name"])
