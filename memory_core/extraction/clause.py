"""The unit the rules classify: one clause of one sentence, with its numbers and condition.

A ``Clause`` carries the clause *body* (labels, fillers and correction cues already
stripped) as a scan string in which the condition and the quantities are masked, so the
language rules read "the API timeout is ▯▯▯▯ ▯▯▯▯▯▯▯▯▯▯▯▯" and key the subject from
what is left. ``Verdict`` is what a language rule decides about a clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_core.extraction.cue import first_word
from memory_core.extraction.cue import tokens as word_tokens
from memory_core.extraction.prepare import MASK
from memory_core.extraction.quantity import Quantity
from memory_core.extraction.subject import VERSION_TOKEN

COUNT_UNITS = frozenset(("times", "people", "users", "tokens", "words", "chars", "lines", "items",
                         "cores", "replicas", "workers", "rows", "pages", "files", "tests",
                         "nodes", "gpus", "nights", "req", "spaces"))
"""Units that are nouns a rule may be about ("3 retries", "8 workers"): only the number
is masked, so the noun can key the subject."""
_LEADING_NOISE = MASK + " \t,，、:：;；-—"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A rule's decision: the kind, the subject key (already normalised), negation,
    and whether the fact lasts (``Extracted.lasting``)."""

    kind: str
    subject: str | None
    negated: bool = False
    lasting: bool = False


_WORD_BEFORE = re.compile(r"([A-Za-z][\w'-]*)\s+$")
_SHOWN = re.compile(r"[^ \t\"'*_:-]")
"""A character other than blanks, quote marks and emphasis: words before the name."""
_VALUE_PREPOSITIONS = frozenset(
    "to on at from of in into onto with via for by as than over back".split())


def names_release(scan: str, start: int, at: int) -> bool:
    """Whether a version word at ``scan[at]`` (``VERSION_TOKEN``: "v2") names a release
    the clause from ``start`` says something of ("we ship v2", "freeze v1.8", "v4 は",
    "发布 v3"), rather than being the clause's value: after a preposition ("we're on
    v2.3", "pin the SDK to v1.2.4") or a name it versions ("use API v1", "Node v20"),
    a later version is a new value of the same key, so it is masked like "Python 3.12"."""
    before = _WORD_BEFORE.search(scan, _last_word_start(scan, start, at), at)
    if before is None:
        return True
    word = before.group(1)
    if word.lower() in _VALUE_PREPOSITIONS:
        return False
    return not (word[0].isupper() and _SHOWN.search(scan, start, before.start()))


def _last_word_start(scan: str, start: int, at: int) -> int:
    """Where the run of word characters (``\\w``, ``'``, ``-``) and spaces that ends at
    ``at`` begins its words: no match of :data:`_WORD_BEFORE` ending at ``at`` starts
    before it, so the search need not cover the clause (once per version word)."""
    i = at
    while i > start and scan[i - 1].isspace():
        i -= 1
    while i > start and (scan[i - 1].isalnum() or scan[i - 1] in "_'-"):
        i -= 1
    return i


@dataclass(slots=True)
class Clause:
    """One clause: ``[start, end)`` in the message; ``body`` begins at ``body_start``."""

    scan: str
    start: int
    end: int
    body_start: int
    lang: str
    question: bool
    quantities: list[Quantity] = field(default_factory=list)
    condition: tuple[int, int] | None = None
    core: str = ""
    """``scan[body_start:end]`` with condition and quantity spans masked; trailing
    sentence punctuation removed."""
    raw: str = ""
    """``scan[body_start:end]`` unmasked (still width-folded and quote-masked); offsets
    into ``raw`` and ``core`` agree."""
    tokens: frozenset[str] = frozenset()
    """Lowercase English word tokens of the clause (a superset of ``core``'s is fine):
    the trigger set for ``lexicon.Cue``."""
    first: str = ""
    """The first English word of ``core``, lowercased: the trigger for ``lexicon.Lead``."""

    def build(self) -> Clause:
        """Fill ``core`` and ``raw`` from the spans; returns self for chaining."""
        raw = self.scan[self.body_start:self.end]
        spans = [self.condition] if self.condition else []
        for q in self.quantities:
            if q.kind == "version" and VERSION_TOKEN.match(self.scan[q.start:q.end]) \
                    and names_release(self.scan, self.body_start, q.start):
                continue  # "we ship v2": one word, the release it names
            if q.kind in ("port", "version"):
                spans.append((q.end - len(q.value_text), q.end))
            elif q.unit in COUNT_UNITS and self.scan.startswith(q.value_text, q.start) \
                    and self.scan[q.start + len(q.value_text):q.end].strip().isascii():
                spans.append((q.start, q.start + len(q.value_text)))  # keep "retries", not 人
            else:
                spans.append((q.start, q.end))
        chars = list(raw) if spans else None
        for a, b in spans:
            a, b = max(a, self.body_start) - self.body_start, min(b, self.end) - self.body_start
            if chars is not None and a < b:
                chars[a:b] = MASK * (b - a)
        core = ("".join(chars) if chars is not None else raw).rstrip()
        while core and core[-1] in ".!?;。！？；":
            core = core[:-1].rstrip()
        lead = len(core) - len(core.lstrip(_LEADING_NOISE))
        self.body_start += lead
        self.core, self.raw = core[lead:], raw[lead:]
        if self.lang == "en" and not self.tokens:
            self.tokens = word_tokens(self.core)
        self.first = first_word(self.core) if self.lang == "en" else ""
        return self
