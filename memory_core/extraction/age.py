"""Ages: where a statement's number is someone's age, and one subject key for it.

:func:`stated_age` reads an age where the text says one: "turned 8", "turns 8", "8 years
old", "aged 8", 8岁, 8歳, or "is 8" / "I'm 35" of a person (a kin or person word in the
subject, or the speaker). "The build is 7" states no age. :func:`age_key` gives the
speaker's own age and a Chinese age one key however it is said ("I'm 35." / "I turned
36." → ``age``; 我儿子7岁 / 我儿子今年8岁了 → ``儿子岁``; 我35岁 / 我已经36岁了 → ``岁``;
私は35歳です / 36歳になりました → ``歳``), as a relative's age already has ("My son is 7."
/ "My son turned 8." → ``son``), so the writer compares the two
(:func:`memory_core.items.age.grown_age`).
"""

from __future__ import annotations

import re
from typing import Any, Final

_EN_AGE_WORDS: Final = re.compile(
    r"\b(?:turned|turns|turning|aged?)\s+(?:just\s+)?\d{1,3}\b"
    r"|\b\d{1,3}\s*(?:-\s*)?(?:years?|yrs?)(?:\s*-\s*|\s+)old\b|\b\d{1,3}\s*y/?o\b"
    r"|\d{1,3}\s*(?:岁|歳|才)", re.I)
"""Words that say a number is an age whatever its subject."""
_KIN: Final = (
    r"\b(?:sister|brother|sibling|mom|mum|mother|dad|father|wife|husband|partner"
    r"|spouse|son|daughter|kid|child|boy|girl|baby|toddler|friend|boyfriend|girlfriend"
    r"|cousin|aunt|uncle|niece|nephew|grand(?:ma|mother|pa|father|son|daughter)|dog|cat"
    r"|puppy|kitten)s?\b|息子|娘|子供|儿子|女儿|孩子")
_EN_PERSON: Final = re.compile(r"(?<![\w'])(?:i|i'm|im)(?![\w'])|" + _KIN, re.I)
"""Who has an age said as a bare number ("My son is 7", "I'm 35"): a kin or person
word, the speaker, a pet."""
_EN_BARE_AGE: Final = re.compile(
    r"\b(?:is|'s|am|'m|are)\s+(?:now\s+|just\s+|already\s+|only\s+)?\d{1,3}\s*(?:now\s*)?"
    r"(?:[.!;,)]|$)", re.I)
"""A bare number after "is" that ends the clause ("My son is 7.", "I'm 35 now")."""
_OLDEST: Final = 130


def stated_age(text: str | None, subject: str | None, value: Any,
               unit: str | None) -> float | None:
    """The age a statement gives (years), or None (module doc)."""
    if value is None or not text or not 0 < float(value) <= _OLDEST or float(value) % 1:
        return None
    if unit is not None and not re.fullmatch(r"years?|yrs?", unit, re.I):
        return None
    if _EN_AGE_WORDS.search(text):
        return float(value)
    if _EN_BARE_AGE.search(text) and _EN_PERSON.search(f"{subject or ''} {text}"):
        return float(value)
    return None


_EN_OWN: Final = re.compile(r"(?<![\w'])(?:i|i'm|im)(?![\w'])", re.I)
"""The speaker in a clause ("I'm 35.", "lol I just turned 36.")."""
_EN_OTHER: Final = re.compile(_KIN, re.I)
"""A person word other than the speaker (a kin word, a pet)."""
_ZH_FILLER: Final = re.compile(r"了|今年|现在|已经|都|快|刚|刚刚|满")
_ZH_OWN: Final = re.compile(r"\W*(?:其实|对了|嗯)?[，,]?我(?![们的])")
_JA_OWN: Final = frozenset(("私", "僕", "俺", "わたし", "歳"))


def age_key(text: str, subject: str | None, value: Any, unit: str | None,
            lang: str) -> str | None:
    """The subject key of a statement whose number is an age (:func:`stated_age`):
    ``age`` for the speaker's own in English, the person then 岁 in Chinese (岁 alone
    for the speaker), 歳 for the speaker in Japanese; ``subject`` unchanged otherwise
    (a relative's English or Japanese key already names the person)."""
    if stated_age(text, subject, value, unit) is None:
        return subject
    if lang == "en":
        if _EN_OWN.search(text) and not _EN_OTHER.search(f"{subject or ''} {text}"):
            return "age"
        return subject
    if lang == "zh":
        if not text or not (_ZH_OWN.match(text) or subject):
            return subject
        who = _ZH_FILLER.sub("", (subject or "").replace("岁", ""))
        if not who and not _ZH_OWN.match(text):
            return subject
        return f"{who}岁"
    if subject is None or subject in _JA_OWN:
        return "歳"
    return subject
