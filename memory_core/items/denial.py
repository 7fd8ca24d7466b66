"""The stored fact a denial takes back ("I have a dog named Rex." for "I don't have a
dog, that was a mistake."; :mod:`memory_core.extraction.denial`).

:func:`denial_target` is to a denial what
:func:`~memory_core.items.supersession.retraction_target` is to a withdrawal: it scans
the speaker's active facts in the tenant and role, newest first, for the one that
affirms what the denial denies (:func:`memory_core.extraction.denial.states`). The
writer supersedes it by the denial's item, so the old fact leaves the block with its
provenance (``superseded_by`` and a revision row) and its evidence kept.
"""

from __future__ import annotations

from typing import Any, Final

from memory_core.extraction import denial
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
