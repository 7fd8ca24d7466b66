"""The stored fact a denial takes back ("I have a dog named Rex." for "I don't have a
dog, that was a mistake."; :mod:`memory_core.extraction.denial`).

:func:`denial_target` is to a denial what
:func:`~memory_core.items.supersession.retraction_target` is to a withdrawal: it scans
the speaker's active facts in the tenant and role, newest first, for the one that
affirms what the denial denies (:func:`memory_core.extraction.denial.states`). The
writer supersedes it by the denial's item, so the old fact leaves the block with its
provenance (``superseded_by`` and a revision row) and its evidence kept.

:func:`experience_target` does the same for an experience
(:mod:`memory_core.extraction.experience`) by its subject key: "I visited Japan in May."
turns over "I've never been to Japan." (both keyed ``visited japan``), and "I haven't
been to Japan." turns over "I've been to Japan twice.".
"""

from __future__ import annotations

import re
from typing import Any, Final

from memory_core.extraction import denial, experience
from memory_core.items.supersession import CORRECTION_SCAN
from memory_core.models import Scope
from memory_core.store.api import ItemReads

_KINDS: Final = ("fact",)


def denial_target(items: ItemReads, scope: Scope, ex: Any, *, speaker: str = "",
                  answering: bool = False) -> Any:
    """The newest active fact of ``speaker`` that ``ex`` (a ``negated`` fact) denies, or
    None: ``ex`` must read as a denial (:func:`memory_core.extraction.denial.find`) and
    the fact must state what it denies (:func:`memory_core.extraction.denial.states`).
    A denial of something never stored, or another speaker's fact, finds nothing.
    ``answering``: ``ex`` replies to the assistant's question or offer (see
    :func:`memory_core.extraction.denial.states`)."""
    lang = getattr(ex, "lang", "en") or "en"
    said = denial.find(ex.text or "", lang)
    if said is None:
        return None
    for row in items.correction_candidates(scope.tenant, scope.role, _KINDS, speaker, None,
                                           None, CORRECTION_SCAN):
        if denial.states(said, row["text"] or "", lang, answering=answering):
            return row
    return None


def experience_target(items: ItemReads, scope: Scope, ex: Any, *, speaker: str = "") -> Any:
    """The newest active fact of ``speaker`` with ``ex``'s subject that ``ex`` (a fact)
    turns over, or None: a denied experience ("I've never been to Japan.",
    :func:`memory_core.extraction.experience.read`) that ``ex`` affirms, or, where ``ex``
    denies an experience, an affirmation of it. Another subject, another speaker, or
    two statements of one polarity find nothing; nor does a statement read as no
    experience that does not tell of the speaker's own dealings with the thing
    (:func:`_own`: "Docker is slow on my Mac." leaves "I have never used Docker.")."""
    subject = getattr(ex, "subject", None)
    if not subject:
        return None
    lang = getattr(ex, "lang", "en") or "en"
    said = experience.read(ex.text or "", lang)
    denies = bool(getattr(ex, "negated", False))
    if denies and (said is None or not said.negated):
        return None  # a denial of another kind is :func:`denial_target`'s
    if said is None and not _own(ex.text or "", subject, lang):
        return None  # "Docker is slow on my Mac." says nothing of having used Docker
    for row in items.correction_candidates(scope.tenant, scope.role, _KINDS, speaker, None,
                                           None, CORRECTION_SCAN, subject_prefix=subject):
        if row["subject"] != subject:
            continue
        before = experience.read(row["text"] or "", lang)
        if denies and (before is None or not before.negated) \
                and not denial.negative(row["text"] or "") \
                and (before is not None or _own(row["text"] or "", subject, lang)):
            return row
        if not denies and before is not None and before.negated:
            return row
    return None


_FIRST_PERSON: Final = re.compile(r"\b(?:i|we|my|our|me|us)\b", re.I)


def _own(text: str, subject: str, lang: str) -> bool:
    """Whether ``text``, a statement read as no experience, tells of the speaker's own
    dealings with the thing ``subject`` keys: an English first-person word before the
    key's last word ("I visited Japan in May.", "My car is red."; not "Docker is slow
    on my Mac.", "The car is in the garage."). A light verb keys an experience by its
    object alone (``vim``, ``car``), so any statement about the thing shares the key.
    Other languages, and a text without the word, are left as they are."""
    if lang != "en":
        return True
    last = subject.split()[-1]
    at = re.search(rf"\b{re.escape(last)}", text, re.I)
    return at is None or _FIRST_PERSON.search(text, 0, at.start()) is not None
