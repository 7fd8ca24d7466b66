"""The three systems compared, as what the client sends and how the proxy is set up.

Every system is the same agent (it keeps its whole history) talking to a real
proxy built by :func:`proxy.app.create_app`, each with its own data directory:

- ``no_memory``: the proxy with injection, extraction, compaction and search off
  (a capturing pass-through). The client sends its system prompt and the most
  recent *whole* turns (a user message with every assistant message, tool call
  and tool result after it) that fit in :data:`CLIENT_BUDGET_TOKENS`; the newest
  turn is always sent.
- ``rolling_summary``: the same proxy set-up. The client also keeps running notes:
  when a turn falls out of the window, every sentence of its user and tool
  messages that holds a digit or a cue word (decide, prefer, always, never, must,
  actually, correction, goal, TODO, blocked… and their Chinese and Japanese
  counterparts) is appended as a ``- `` line; the oldest lines go when the notes
  pass :data:`SUMMARY_BUDGET_TOKENS`. The notes ride in the system message, and
  the recent turns fill what is left of the same budget. Simple, honest and
  deterministic; it never marks a corrected value as superseded.
- ``lcm``: lcm-proxy with its defaults (memory on). The client sends its whole
  history every time, as agents do; the proxy compacts and injects.

Out-of-band preferences (``memory prefs set`` for lcm-proxy) are, for the two
baselines, appended to the client's system prompt, the way a user without a
memory layer would set them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from proxy.evaluation.metrics import ROLLING_MARKER, TokenCounter, message_text

CLIENT_BUDGET_TOKENS = 8000
"""History budget of the baseline clients (o200k tokens of message text plus 4 per
message, system prompt and notes included): about what lcm-proxy's compacted
requests carry with its defaults (6000-token compaction threshold, a tail of six
turns and the summary scaffold)."""

SUMMARY_BUDGET_TOKENS = 1500
"""Most tokens the rolling-summary notes may use (inside the client budget)."""

SYSTEMS = ("no_memory", "rolling_summary", "lcm")
LABELS = {"no_memory": "no memory (truncated)", "rolling_summary": "rolling summary",
          "lcm": "lcm-proxy"}

_CUES = re.compile(
    r"(?i)\b(decid\w*|decision|prefer\w*|always|never|must|actually|correction|update|"
    r"goal|todo|blocked|progress|instead|meant)\b|决定|喜欢|一律|更正|其实|不对|目标|待办|阻塞|进展|"
    r"決め|採用|お願い|訂正|実は|いいえ|目標|進捗|ブロッカー")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


def baseline_overrides() -> dict[str, dict[str, Any]]:
    """Settings tables that turn the proxy into a capturing pass-through."""
    return {"injection": {"enabled": False, "extract": False},
            "compaction": {"enabled": False}, "search": {"enabled": False}}


def split_turns(history: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                             list[list[dict[str, Any]]]]:
    """Split a history into (leading system messages, turns); a turn starts at a user
    message and holds everything up to the next one."""
    head: list[dict[str, Any]] = []
    turns: list[list[dict[str, Any]]] = []
    for m in history:
        if not turns and m.get("role") in ("system", "developer"):
            head.append(m)
        elif m.get("role") == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    return head, turns


@dataclass
class Shaped:
    """One request as the client builds it: ``messages`` to send, ``memory_tokens``
    (tokens of the notes, 0 without) and ``rewrote`` (the window or the notes
    changed since the previous request, i.e. the client rewrote its history)."""

    messages: list[dict[str, Any]]
    memory_tokens: int
    rewrote: bool


class Client:
    """The client side of one system: shapes its full history into a request."""

    def __init__(self, system: str, counter: TokenCounter, extra_system: str = "") -> None:
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}")
        self.system = system
        self.counter = counter
        self.extra_system = extra_system
        self.notes: list[str] = []
        self._noted_turns = 0
        self._last_first: int | None = None
        self._last_notes: tuple[str, ...] = ()

    def shape(self, history: list[dict[str, Any]]) -> Shaped:
        """The request for ``history`` (the agent's whole conversation so far)."""
        if self.system == "lcm":
            return Shaped(history, 0, False)
        head, turns = split_turns(history)
        if self.extra_system and head:
            head = [dict(head[0], content=f"{head[0]['content']}\n\n{self.extra_system}"),
                    *head[1:]]
        budget = CLIENT_BUDGET_TOKENS - self.counter.request(head)
        first = self._window(turns, budget)
        notes_tokens = 0
        if self.system == "rolling_summary":
            for _ in range(4):  # notes take budget, which may push more turns out
                self._note(turns, first)
                narrower = self._window(turns, budget - self._notes_tokens() - 10)
                if narrower <= first:
                    break
                first = narrower
            if self.notes and head:
                body = "\n".join(self.notes)
                head = [dict(head[0], content=f"{head[0]['content']}\n\n{ROLLING_MARKER}\n{body}"),
                        *head[1:]]
            notes_tokens = self.counter.text("\n".join(self.notes)) if self.notes else 0
        rewrote = (self._last_first is not None and first != self._last_first) or (
            tuple(self.notes) != self._last_notes)
        self._last_first, self._last_notes = first, tuple(self.notes)
        messages = list(head) + [m for turn in turns[first:] for m in turn]
        return Shaped(messages, notes_tokens, rewrote)

    def _window(self, turns: list[list[dict[str, Any]]], budget: int) -> int:
        """Index of the oldest turn kept: the newest turns that fit in ``budget``."""
        used, first = 0, len(turns)
        for i in range(len(turns) - 1, -1, -1):
            cost = sum(self.counter.message(m) for m in turns[i])
            if used + cost > budget and first < len(turns):
                break
            used += cost
            first = i
        return first

    def _note(self, turns: list[list[dict[str, Any]]], first: int) -> None:
        """Append notes from the turns that left the window since the last call."""
        for turn in turns[self._noted_turns:first]:
            for m in turn:
                if m.get("role") not in ("user", "tool"):
                    continue
                for sentence in _SENTENCE.split(message_text(m)):
                    s = sentence.strip()
                    if s and (any(ch.isdigit() for ch in s) or _CUES.search(s)):
                        line = f"- {s}"
                        if line not in self.notes:
                            self.notes.append(line)
        self._noted_turns = max(self._noted_turns, first)
        while self.notes and self._notes_tokens() > SUMMARY_BUDGET_TOKENS:
            self.notes.pop(0)

    def _notes_tokens(self) -> int:
        return sum(self.counter.text(n) + 1 for n in self.notes)
