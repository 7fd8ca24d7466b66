"""Gates that keep cue matching cheap, and helpers to build cue patterns.

Python's ``re`` tries every branch of an alternation at every position, so a search for
one of forty phrases costs microseconds per character. A ``Cue`` runs its pattern only
when one of its trigger words (English, from a clause's token set) or trigger phrases
(Chinese, Japanese) occurs; a ``Lead`` runs a start-anchored pattern only when the
clause's first word can begin a match. Both answer like ``re.Pattern`` otherwise.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")


def tokens(text: str) -> frozenset[str]:
    """Lowercase ASCII word tokens of ``text`` (apostrophes and hyphens kept)."""
    return frozenset(_TOKEN.findall(text.lower()))


def lacks(text: str, needles: tuple[str, ...], low: str | None = None) -> bool:
    """Whether an ASCII ``text`` holds none of the lowercase ``needles`` (substrings;
    ``low`` is ``text.lower()`` when the caller has it): a case-insensitive pattern every
    match of which contains one of them cannot match, so its search can be skipped.
    Exact, unlike a token gate: a substring test misses no match ("re-replaced" holds
    "replaced"). A non-ASCII text is never said to lack one, since ``re.I`` folds some
    letters ``str.lower`` keeps apart (the Kelvin sign, the long s)."""
    if not text.isascii():
        return False
    if low is None:
        low = text.lower()
    return not any(n in low for n in needles)


class Cue:
    """An unanchored pattern gated by trigger ``words`` (matched against a token set)
    or ``marks`` (substrings, for scripts without spaces). A trigger list must name a
    word or substring that every match contains (a missing trigger silently disables a
    branch, so every rule has positive cases in ``tests/test_extract.py``)."""

    __slots__ = ("pattern", "words", "marks", "mark_chars", "ascii_marks")

    def __init__(self, pattern: re.Pattern[str], *, words: str = "", marks: str = "") -> None:
        self.pattern = pattern
        self.words = frozenset(words.split())
        self.marks = tuple(m for m in marks.split("|") if m)
        self.mark_chars = frozenset(m[0] for m in self.marks)
        self.ascii_marks = any(m.isascii() for m in self.marks)

    def _marked(self, text: str) -> bool:
        # ``isdisjoint`` walks the whole text, a mark or not: an ASCII text (the
        # interpreter knows it without a scan) holds none of the CJK marks.
        if not self.marks or (not self.ascii_marks and text.isascii()):
            return False
        return not self.mark_chars.isdisjoint(text) and any(m in text for m in self.marks)

    def search(self, text: str, toks: frozenset[str] = frozenset()) -> re.Match[str] | None:
        """``pattern.search(text)``, skipped (None) when no trigger is present."""
        if self.words.isdisjoint(toks) and not self._marked(text):
            return None
        return self.pattern.search(text)

    def finditer(self, text: str) -> list[re.Match[str]]:
        """All matches, or none without a trigger (marks only)."""
        return list(self.pattern.finditer(text)) if self._marked(text) else []


_FIRST_WORD = re.compile(r"[a-z][a-z']*")


def first_word(text: str) -> str:
    """The lowercase first word of ``text`` ("" when it starts with anything else)."""
    m = _FIRST_WORD.match(text[:24].lower())
    return m.group() if m else ""


class Lead:
    """A start-anchored English pattern gated by the clause's first word: every match
    begins with one of ``first`` (a space-separated list), checked by a set lookup."""

    __slots__ = ("pattern", "first")

    def __init__(self, pattern: re.Pattern[str], first: str) -> None:
        self.pattern = pattern
        self.first = frozenset(first.split())

    def match(self, text: str, first: str | None = None) -> re.Match[str] | None:
        """``pattern.match(text)`` when the first word can start a match, else None."""
        word = first_word(text) if first is None else first
        return self.pattern.match(text) if word in self.first else None


def cjk_cue(phrases: str, extra: str = "", marks: str = "") -> Cue:
    """A Cue over literal CJK ``phrases`` (plus an ``extra`` regex branch whose trigger
    substrings are listed in ``marks``)."""
    pattern = alt(phrases) + (("|" + extra) if extra else "")
    return Cue(re.compile(pattern), marks=phrases + ("|" + marks if marks else ""))


def phrases(text: str) -> list[str]:
    """The ``|``-separated phrases of ``text``, stripped, empty ones dropped."""
    return [p.strip() for p in text.split("|") if p.strip()]


def alt(text: str) -> str:
    """A regex alternation of ``|``-separated literal phrases, longest first."""
    return "|".join(re.escape(p).replace(r"\ ", r"\s+")
                    for p in sorted(phrases(text), key=len, reverse=True))


def en(pattern: str) -> re.Pattern[str]:
    """Compile an English cue pattern (case-insensitive)."""
    return re.compile(pattern, re.I)
