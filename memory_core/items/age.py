"""An age that grows: "My son is 7." then "My son turned 8." is the son a year older,
not a value for the user to choose between (docs/evaluation/memory_replays.md, class 86).

:func:`grown_age` tells the writer that a later statement of the same subject's age
gives a greater one, which supersedes the older age as a correction does. An age is
read where the text says one: "turned 8", "turns 8", "8 years old", "aged 8", 8岁, 8歳,
or "is 8" / "I'm 35" of a person (a kin or person word in the subject, or the speaker:
``lexicon.EN_OTHER_ACTOR``'s nouns). "The build is 7" states no age. A smaller later
age is left to the writer's conflict ("ask the user"): people do not grow younger, so
one of the two is wrong; a correction ("Actually my son is 6") still replaces.
"""

from __future__ import annotations

import re
from typing import Any, Final

_EN_AGE_WORDS: Final = re.compile(
    r"\b(?:turned|turns|turning|aged?)\s+(?:just\s+)?\d{1,3}\b"
    r"|\b\d{1,3}\s*(?:-\s*)?(?:years?|yrs?)(?:\s*-\s*|\s+)old\b|\b\d{1,3}\s*y/?o\b"
    r"|\d{1,3}\s*(?:岁|歳|才)", re.I)
"""Words that say a number is an age whatever its subject."""
_EN_PERSON: Final = re.compile(
    r"(?<![\w'])(?:i|i'm|im)(?![\w'])|\b(?:sister|brother|sibling|mom|mum|mother|dad|father|wife|husband|partner"
    r"|spouse|son|daughter|kid|child|boy|girl|baby|toddler|friend|boyfriend|girlfriend"
    r"|cousin|aunt|uncle|niece|nephew|grand(?:ma|mother|pa|father|son|daughter)|dog|cat"
    r"|puppy|kitten)s?\b|息子|娘|子供|儿子|女儿|孩子", re.I)
"""Who has an age said as a bare number ("My son is 7", "I'm 35"): a kin or person
word, the speaker, a pet."""
_EN_BARE_AGE: Final = re.compile(
    r"\b(?:is|'s|am|'m|are)\s+(?:now\s+|just\s+|already\s+|only\s+)?\d{1,3}\s*(?:now\s*)?"
    r"(?:[.!;,)]|$)", re.I)
"""A bare number after "is" that ends the clause ("My son is 7.", "I'm 35 now")."""
_OLDEST: Final = 130


def _age(text: str | None, subject: str | None, value: Any, unit: str | None) -> float | None:
    """The age a statement gives, or None (module doc)."""
    if value is None or not text or not 0 < float(value) <= _OLDEST or float(value) % 1:
        return None
    if unit is not None and not re.fullmatch(r"years?|yrs?", unit, re.I):
        return None
    if _EN_AGE_WORDS.search(text):
        return float(value)
    if _EN_BARE_AGE.search(text) and _EN_PERSON.search(f"{subject or ''} {text}"):
        return float(value)
    return None


def grown_age(ex: Any, row: Any) -> bool:
    """Whether ``ex`` (a new statement) gives its subject a greater age than ``row`` (a
    stored one of the same subject, checked by the caller): ``row`` is outgrown."""
    new = _age(ex.text, ex.subject, ex.value, ex.unit)
    old = _age(row["text"], row["subject"], row["value"], row["unit"])
    return new is not None and old is not None and new > old
