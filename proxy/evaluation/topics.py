"""The shapes of the generator's templates: topics, task sets, tool keys, CLI preferences.

A *topic* is one thing a user tells the agent (a number with its unit and condition,
a decision, a value that is later corrected, a preference) together with the
sentences that merely look like it (distractors) and questions that ask for it in
other words (paraphrases). The template text lives in :mod:`topics_en` and
:mod:`topics_cjk`; it was written for this harness and is the only source of the
answer key's values (see :mod:`proxy.evaluation.generator`).

Slots: ``{v}`` is the key value, ``{d}`` a distractor value (never equal to a key
value of the same topic). ``needle`` is the template of the string that must appear
for the value to count as present; ``context`` is a phrase that must appear on the
same line (the condition or the entity), or ``None``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CATEGORIES = ("fact", "decision", "chain", "pref_chat", "pref_cli", "task_goal", "task_blocked",
              "tool_result")
"""Answer-key categories; ``chain`` is a value corrected once or twice (A→B, A→B→C)."""


@dataclass(frozen=True, slots=True)
class Topic:
    """One key-item template (``kind`` ∈ fact | decision | chain | pref_chat).

    ``values``: ``(low, high, step)`` integers, or a tuple of strings to choose from.
    ``fixes``: correction templates for ``chain`` topics, applied in order (the
    second is the correction of the correction). ``concept``: topics with the same
    concept in other languages (a session uses at most one of them, so that no
    question has two right answers); empty = unique.
    """

    kind: str
    lang: str
    say: str
    asks: tuple[str, ...]
    needle: str = "{v}"
    context: str | None = None
    values: tuple[int, int, int] | tuple[str, ...] = ()
    noise: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    concept: str = ""

    def draw(self, rng: random.Random, count: int, avoid: frozenset[str] | set[str] = frozenset()
             ) -> list[str]:
        """Return ``count`` distinct values (as written in text), none in ``avoid``.

        Raises ``ValueError`` when the topic cannot supply that many."""
        if self.values and isinstance(self.values[0], int):
            low, high, step = self.values
            pool = [str(x) for x in range(int(low), int(high) + 1, int(step))]
        else:
            pool = [str(x) for x in self.values]
        pool = [p for p in pool if p not in avoid]
        if len(pool) < count:
            raise ValueError(f"topic {self.say[:40]!r} has fewer than {count} values")
        return rng.sample(pool, count)


@dataclass(frozen=True, slots=True)
class TaskSet:
    """A thread's task-state story: a goal, later replaced; three TODOs, the first
    closed by a progress line; one blocker. ``goal_needle``/``blocked_needle`` are
    distinctive phrases of the new goal and of the blocker; ``old_goal_needle`` of
    the replaced goal. ``todo_needles`` identify the TODO lines (first = closed)."""

    lang: str
    goal_old: str
    goal_new: str
    todos: tuple[str, str, str]
    progress: str
    blocked: str
    goal_needle: str
    old_goal_needle: str
    blocked_needle: str
    todo_needles: tuple[str, str, str]
    ask_goal: str
    ask_blocked: str


@dataclass(frozen=True, slots=True)
class ToolKey:
    """A tool exchange whose result holds a key value.

    ``request``: the user's ask; ``tool``/``arguments``: the call the (fake) model
    makes; ``result``: the tool output template; ``needle``: what the question needs.
    """

    request: str
    tool: str
    arguments: str
    result: str
    values: tuple[int, int, int] | tuple[str, ...]
    needle: str
    ask: str

    def draw(self, rng: random.Random) -> str:
        """Return one value for this tool key."""
        if self.values and isinstance(self.values[0], int):
            low, high, step = self.values
            return str(rng.randrange(int(low), int(high) + 1, int(step)))
        return str(rng.choice(self.values))


@dataclass(frozen=True, slots=True)
class CliPref:
    """A user preference set out of band (engine API / ``memory prefs set``)."""

    lang: str
    key: str
    title: str
    content: str
    needle: str
    ask: str
