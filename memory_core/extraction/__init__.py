"""Deterministic extraction of memory items from chat messages (DESIGN §5).

No model calls, no I/O: a message's text goes in, ``Extracted`` items come out, the same
every time. English, Chinese (simplified and traditional) and Japanese.

    >>> [(i.kind, i.subject, i.value, i.unit, i.condition)
    ...  for i in extract("The API timeout is 30 s when offline.")]
    [('fact', 'api timeout', 30.0, 's', 'when offline')]

Layout: ``prepare`` (width folding, masking of code and quotes; ``listing`` finds
source code pasted without a fence), ``segment`` (sentences),
``quantity``/``units`` and ``condition`` (numbers with units, qualifying phrases),
``subject`` (normalised keys), ``lexicon``/``lexicon_cjk`` (cue tables) over ``cue`` (the
gates that keep them cheap), ``clause`` (what a rule reads), ``rules_en``/``rules_cjk``
(classification), ``pipeline`` (``extract``), ``model`` (``Extracted``). Scoring against
the labelled set: ``memory_core.evaluation.extraction``.
"""

from __future__ import annotations

from memory_core.extraction.model import KINDS, LANGS, TASK_LABELS, Extracted
from memory_core.extraction.pipeline import extract

__all__ = ["KINDS", "LANGS", "TASK_LABELS", "Extracted", "extract"]
