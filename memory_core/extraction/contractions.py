"""English contractions typed without their apostrophe: "i dont like coffee", "im vegan".

Casual and phone typing drops the apostrophe, and every rule reads negation and the
speaker's "I'm" from the written form (``n't``, ``I'm``): "we dont use jira" was a
positive fact, "i cant stand jazz" a liking kept as a fact, "im vegan" nothing.
:func:`restore` puts the apostrophe back in the forms that are no English word without
it (don't, isn't, I'm, I've…), and in "cant"/"wont" unless a determiner makes them the
nouns ("as is his wont"); the pipeline reads the restored text and :func:`original`
maps what it quotes back to the user's spelling, so items stay verbatim.

Pure: a message in, the restored text and the offsets of the apostrophes it added out.
"""

from __future__ import annotations

import re

_CONTRACTED = re.compile(
    r"\b(?:(do|does|did|is|are|was|were|has|have|had|would|should|could|must|need|ai)(nt)"
    r"|(ca|wo)(nt)"
    r"|(i)(m|ve))\b", re.I)
"""Group pairs (stem, ending): the apostrophe goes before the ending's "t" ("do" "nt"
as "don't"), or between them ("i" "m" as "i'm")."""

_NOUN_BEFORE = re.compile(r"\b(?:the|his|her|its|our|their|your|my|as|a)\s+$", re.I)
"""A determiner just before "cant"/"wont": the noun, no contraction."""


def restore(text: str) -> tuple[str, frozenset[int]]:
    """``text`` with the apostrophe put back in each contraction typed without one, and
    the offsets in the result of the apostrophes added (empty, ``text`` as it is, when
    none was)."""
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
