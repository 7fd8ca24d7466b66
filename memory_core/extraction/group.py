"""A subject that holds the speaker among others, read as the speaker's (English).

"Both of us drink coffee", "The two of us love hiking", "We both drink coffee", "Each
of us has a car" state of the speaker what "I drink coffee" states; "Neither of us
drinks coffee", "None of us eat meat", "Nobody in my family eats pork", "No one on our
team uses Jira" state what "I don't drink coffee" does: the negation sits in the
subject. The rules key a statement from its predicate after the speaker, so a group
subject left as it is keys the subject's own words (``neither``, ``both``, ``family
nobody``) and two such statements about different things share a key; a plural verb
after "none of us" was read as nothing. As "My wife and I …" is read from its "I"
(:data:`memory_core.extraction.pipeline._EN_CO_SUBJECT`), a group subject is read as
"I": the speaker's own fact, not a team's rule ("we don't use Jira").

:func:`read` rewrites the subject and its verb in a copy of the clause's scan, inside
the span they take (the scan keeps its length, so offsets hold): the rules see "I
drink coffee" or "I don't drink coffee"; the item keeps the user's words, and its
``negated`` is :func:`memory_core.extraction.denial.find`'s, read from those words.

Pure: a scan and a clause's bounds in, a rewritten scan and the clause's new body out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_ALL: Final = re.compile(
    r"(?:(?:both|all|each)\s+of\s+us|the\s+(?:two|three|four|five)\s+of\s+us"
    r"|we\s+(?:both|all))\s+",
    re.I)
"""A subject naming the whole group with the speaker in it: "both of us", "all of
us", "each of us", "the two of us", "we both", "we all"."""
_NONE: Final = re.compile(
    r"(?:(?:neither|none)\s+of\s+us"
    r"|(?:nobody|no\s*-?\s*one)\s+(?:in|at|on|from|of)\s+(?:my|our)\s+[a-z]+)\s+", re.I)
"""A subject that denies of each one of a group the speaker is in: "neither of us",
"none of us", "nobody in my family", "no one on our team"."""
_VERB: Final = re.compile(
    r"(?P<adv>(?:(?:really|ever|actually|even|currently)\s+)?)(?P<verb>[a-z]+(?:n't)?)\b"
    r"(?!')", re.I)
_NEGATION: Final = re.compile(r"(?:not|never|don't|doesn't|didn't|isn't|aren't|wasn't"
                              r"|weren't|can't|won't|haven't|hasn't)$", re.I)
_PLURAL: Final = {"is": "am", "are": "am", "was": "was", "were": "was", "has": "have",
                   "does": "do"}
_DENIED: Final = {
    "is": "am not", "are": "am not", "was": "was not", "were": "was not",
    "has": "don't have", "have": "don't have", "had": "didn't have", "does": "don't do",
    "do": "don't do", "did": "didn't do", "can": "can't", "could": "couldn't",
    "will": "won't", "would": "wouldn't", "should": "shouldn't", "must": "mustn't"}
"""A verb after a denying subject and its denial said by "I"."""


@dataclass(frozen=True, slots=True)
class Reading:
    """``scan``: the scan with the subject and its verb rewritten (same length);
    ``body``: where the clause now starts to be read ("I …")."""

    scan: str
    body: int


def read(scan: str, body: int, end: int) -> Reading | None:
    """The clause ``scan[body:end]`` read with its group subject as "I" (module doc),
    or ``None`` when it opens on no such subject, or on a denying one before a
    negated verb ("None of us don't …": left as typed)."""
    m = _NONE.match(scan, body, end)
    denies = m is not None
    m = m or _ALL.match(scan, body, end)
    if m is None:
        return None
    verb = _VERB.match(scan, m.end(), end)
    if verb is None:
        return None
    word = verb.group("verb")
    if _NEGATION.search(word):
        if denies:
            return None
        said = f"I {word}"
    elif denies:
        low = word.lower()
        said = "I " + (_DENIED.get(low) or (f"never {word}" if low.endswith("ed")
                                             else f"don't {_base(word)}"))
    else:
        said = f"I {_PLURAL.get(word.lower()) or _base(word)}"
    start, stop = m.start(), verb.end()
    if len(said) > stop - start:
        return None
    at = stop - len(said)
    return Reading(scan[:start] + " " * (at - start) + said + scan[stop:], at)


def _base(verb: str) -> str:
    """A present verb's plural form ("drinks" → "drink", "watches" → "watch", "tries"
    → "try"); a form without the third person's "-s" is left as it is."""
    low = verb.lower()
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return verb[:-1]
    return verb
