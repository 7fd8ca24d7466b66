"""A sentence about someone the sentence before named, by "he", "she" or "they" ("My
sister is a nurse. She lives in Oslo.", "My brother Tom moved to Oslo. He works at
Equinor.") — English.

The rules read a statement whose subject is a bare pronoun as about nobody they know,
and keep nothing of it; the fact the speaker gave about their sister was lost. Within
one message, a pronoun that opens a sentence right after one that opens on one of the
speaker's people ("my sister", "my brother Tom", "our manager") stands for that person:
:func:`person` finds such a subject, and :func:`resolve` the pronoun that points back to
it — "she" to a woman's relation, "he" to a man's, "they" (or a named person's any
pronoun) to anyone. The pipeline reads the sentence with the person written in place
of the pronoun and quotes the person before the sentence ("My sister … She lives in
Oslo."), so the item carries its own sense.

Pure: a scan and offsets in, spans out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_SHE: Final = ("sister|mother|mom|mum|wife|daughter|girlfriend|grandma|grandmother|aunt"
               "|niece|fiancee|stepmother|stepdaughter")
_HE: Final = ("brother|father|dad|husband|son|boyfriend|grandpa|grandfather|uncle|nephew"
              "|fiance|stepfather|stepson")
_ANY: Final = ("partner|friend|boss|manager|colleague|coworker|co-worker|roommate|neighbou?r"
               "|cousin|kid|child|teammate|mentor|landlord|doctor|dentist|therapist|lead")
_PERSON: Final = re.compile(
    rf"(?:my|our)\s+(?:(?:best|older|younger|little|big|elder|oldest|youngest)\s+)?"
    rf"(?:(?P<she>{_SHE})|(?P<he>{_HE})|(?P<any>{_ANY}))\b"
    r"(?:,?\s+(?-i:[A-Z][a-z]+)\b)?(?=,?\s+(?!and\b|or\b)[a-z])", re.I)
"""One of the speaker's people opening a sentence, with the name after it ("my sister",
"my older brother Tom", "our manager"), before the verb."""
_PRONOUN: Final = re.compile(r"(?P<p>she|he|they)\s+(?=[a-z])", re.I)


@dataclass(frozen=True, slots=True)
class Person:
    """``span``: where the person is named; ``pronouns``: those that may stand for them."""

    span: tuple[int, int]
    pronouns: frozenset[str]


def person(scan: str, body: int, end: int) -> Person | None:
    """The speaker's person that opens the sentence at ``scan[body:end]``, or ``None``."""
    m = _PERSON.match(scan, body, end)
    if m is None:
        return None
    named = m.group(0).rstrip(",").split()[-1][:1].isupper()
    pronouns = {"they"}
    if m.group("she") or m.group("any") or named:
        pronouns.add("she")
    if m.group("he") or m.group("any") or named:
        pronouns.add("he")
    return Person((m.start(), m.end()), frozenset(pronouns))


def resolve(scan: str, body: int, end: int, before: Person | None) -> int | None:
    """Where the sentence at ``scan[body:end]`` goes on after the pronoun that opens it
    when that pronoun stands for ``before`` (the person the sentence before opened on),
    else ``None``."""
    if before is None:
        return None
    m = _PRONOUN.match(scan, body, end)
    if m is None or m.group("p").lower() not in before.pronouns:
        return None
    return m.end()
