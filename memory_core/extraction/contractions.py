"""What casual English typing leaves out: the apostrophe of a contraction ("i dont like
coffee", "im vegan") and the speaker opening a liking ("Love Python.", "Big fan of Rust.").

Casual and phone typing drops the apostrophe, and every rule reads negation and the
speaker's "I'm" from the written form (``n't``, ``I'm``): "we dont use jira" was a
positive fact, "i cant stand jazz" a liking kept as a fact, "im vegan" nothing.
:func:`restore` puts the apostrophe back in the forms that are no English word without
it (don't, isn't, I'm, I've…), and in "cant"/"wont" unless a determiner makes them the
nouns ("as is his wont"), and the speaker before a sentence that opens on a verb of
liking or loathing ("Love Python." as "I Love Python.", "Not a fan of Java." as "I'm Not
a fan of Java.", "Big fan of Rust." as "I'm a Big fan of Rust."), unless what follows
points back at the conversation ("Love it!", "Hate that", "Love the colors") or the one
spoken to ("Love you"), or "Love" is a noun (:data:`_LIKING`); "Prefer X over Y" and
"Enjoy your weekend" are orders and wishes, never read so; and the owner and verb of a
profile's label lines ("Name: Priya" as "My Name is: Priya", :mod:`.profile`); and the
denial that "neither … nor" puts on the speaker's plain verb ("Neither my wife nor I eat
meat." as "… nor I don't eat meat.", :data:`_NEITHER`).
The pipeline reads the restored text and :func:`original` maps what it quotes back to
the user's spelling, so items stay verbatim.

Pure: a message in, the restored text and the offsets of the apostrophes it added out.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from memory_core.extraction import profile

_CONTRACTED = re.compile(
    r"\b(?:(do|does|did|is|are|was|were|has|have|had|would|should|could|must|need|ai)(nt)"
    r"|(ca|wo)(nt)"
    r"|(i)(m|ve))\b", re.I)
"""Group pairs (stem, ending): the apostrophe goes before the ending's "t" ("do" "nt"
as "don't"), or between them ("i" "m" as "i'm")."""

_NOUN_BEFORE = re.compile(r"\b(?:the|his|her|its|our|their|your|my|as|a)\s+$", re.I)
"""A determiner just before "cant"/"wont": the noun, no contraction."""


_OPENING = r"(?:^|(?<=[.!?]\s)|(?<=\n))[ \t]*"
_LIKING = re.compile(
    _OPENING + r"(?=(?:(?:really|absolutely|totally|just|kinda|honestly)\s+)?"
    r"(?:love|hate|adore|loathe|detest|despise)\s+"
    r"(?!(?:it|this|that|these|those|you|u|ya|your|yours|yourself|to|him|her|them|when|how"
    r"|what|the|all|every|his|their|our|my|seeing|hearing|watching|reading|having\s+(?:you|u)"
    r"|and|or|is|are|was|were|will|can|could|should|must|has|have|makes|brings|conquers)\b)"
    r"[\w\"'(])", re.I | re.M)
"""A sentence opening on a verb of liking or loathing, its speaker left out, before a
kind of thing or doing ("Love Python.", "Hate meetings.", "Love experimenting with
spices."). Not before a definite or someone's thing, or seeing it ("Love the colors",
"Love your dedication", "Love seeing …"): an impression of what was just shown, no
liking to keep; nor "Love" as a noun ("Love is truly magical", "Love and acceptance
…")."""
_NOUN_PHRASE = re.compile(
    r"[^.!?\n,;:()\u2014]{0,80}?\b(?:(?:because|since|when|whenever|while|if|as|that|which|who"
    r"|whom|whose|where|and|but|or|so|though|although|unless|than|until|there|it|they|he|she"
    r"|we|you|i)\b|(?P<verb>is|are|was|were|has|have|had|will|would|can|could|should|shall"
    r"|may|might|must|does|do|did|isn't|aren't|wasn't|weren't|hasn't|haven't|won't|can't)\b)",
    re.I)
"""What follows a verb of liking up to the first clause joint or finite verb: a finite
verb first ("Love letters from my grandmother are in the attic", "Hate speech is
banned") makes the opening a noun phrase, the sentence's subject, no liking. Read
over 80 characters at most: a subject runs no longer (and a long paste stays linear)."""
_WORD = re.compile(r"\s*\w+")
_FAN = re.compile(
    _OPENING + r"(?:(?=not\s+(?:a\s+|the\s+)?(?:big\s+|huge\s+)?fan\s+of\b)"
    r"|(?P<bare>(?=(?:big|huge|massive|total)\s+fan\s+of\b)))", re.I | re.M)
"""A sentence opening on being a fan, its "I'm" (and its "a") left out."""


_NEITHER = re.compile(
    _OPENING + r"neither\s+(?:(?:my|our)\s+[\w'-]+|(?-i:[A-Z])[\w'-]*)\s+nor\s+(?:i|we)\s+"
    r"(?=(?!(?:not|never|really|also|am|are|is|was|were|can|could|will|would|should|shall"
    r"|may|might|must|do|did|does|have\s+(?:been|\w+ed|\w+en)|had\s+(?:been|\w+ed|\w+en))\b)"
    r"(?=[a-z]+\b))", re.I | re.M)
""""Neither someone nor I (or we)" before the speaker's plain verb: its "don't" is left
out, so "Neither my wife nor I eat meat" reads as the speaker's "I don't eat meat" (the
pipeline reads from "I", :data:`memory_core.extraction.pipeline._EN_CO_SUBJECT`). A
copula, a modal or a perfect after it is left as typed."""


def _neither(text: str) -> list[tuple[int, str]]:
    """Where :data:`_NEITHER` puts the denial in."""
    return [(m.end(), "don't ") for m in _NEITHER.finditer(text)]


def restore(text: str) -> tuple[str, frozenset[int]]:
    """``text`` with what casual typing left out put back (module doc), and the
    offsets in the result of the characters added (empty, ``text`` as it is, when none
    was)."""
    inserts = [(m.end(), "I ") for m in _LIKING.finditer(text) if not _opens_noun(text, m.end())]
    inserts += [(m.end(), "I'm a " if m.group("bare") is not None else "I'm ")
                for m in _FAN.finditer(text)]
    inserts += profile.inserts(text)
    inserts += _neither(text)
    if inserts:
        text, opened = _insert(text, sorted(inserts))
        restored, added = _apostrophes(text)
        # where each apostrophe went in before, in the opened text: it shifts what follows
        cuts = [a - i for i, a in enumerate(sorted(added))]
        shifted = {p + bisect_right(cuts, p) for p in opened}
        return restored, frozenset(shifted | added)
    return _apostrophes(text)


def _opens_noun(text: str, at: int) -> bool:
    """Whether the verb of liking at ``text[at:]`` opens a noun phrase (:data:`_NOUN_PHRASE`):
    its first word is skipped (the verb itself)."""
    verb = _WORD.match(text, at)
    m = _NOUN_PHRASE.match(text, verb.end() if verb else at)
    return m is not None and m.group("verb") is not None


def _insert(text: str, inserts: list[tuple[int, str]]) -> tuple[str, frozenset[int]]:
    """``text`` with each ``(offset, words)`` inserted, and the offsets of the inserted
    characters in the result."""
    parts: list[str] = []
    added: set[int] = set()
    last = 0
    length = 0
    for at, words in inserts:
        parts.append(text[last:at])
        length += at - last
        added.update(range(length, length + len(words)))
        parts.append(words)
        length += len(words)
        last = at
    parts.append(text[last:])
    return "".join(parts), frozenset(added)


def _apostrophes(text: str) -> tuple[str, frozenset[int]]:
    """``text`` with the apostrophe put back in each contraction typed without one."""
    parts: list[str] = []
    added: list[int] = []
    length = 0
    last = 0
    for m in _CONTRACTED.finditer(text):
        stem_group = next(g for g in (1, 3, 5) if m.group(g))
        if stem_group == 3 and _NOUN_BEFORE.search(text[max(0, m.start() - 16):m.start()]):
            continue  # "as is his wont", "the cant of politicians"
        cut = m.end(stem_group) + (stem_group != 5)  # do|n't, ca|n't, i|'m
        parts.append(text[last:cut])
        length += cut - last
        added.append(length)
        parts.append("'")
        length += 1
        last = cut
    if not added:
        return text, frozenset()
    parts.append(text[last:])
    return "".join(parts), frozenset(added)


def original(piece: str, restored: str, added: frozenset[int], cursor: int = 0
             ) -> tuple[str, int]:
    """``piece``, a substring of ``restored`` found at or after ``cursor``, as the user
    typed it (the added apostrophes taken out), and where it was found (``cursor`` when it
    was not: then ``piece`` comes back as it is)."""
    at = restored.find(piece, cursor)
    if at < 0:
        at = restored.find(piece)
    if at < 0:
        return piece, cursor
    return "".join(ch for i, ch in enumerate(piece, at) if i not in added), at
