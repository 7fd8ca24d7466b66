"""A settling phrase that fixes a value: "net 30, no exceptions", "Budget is 40k, period.",
两周交付，没得商量.

The phrase closing the clause says the value is not up for discussion: it holds for every
later answer like a rule, where the statement alone may read as a passing remark ("Payment
terms are net 30" fixes no unit the rules know). Read as part of the clause it also
polluted the key (两周交付，没得商量 keyed ``交付没得商量``). :func:`settle` masks the phrase
in the prepared scan, so the clause is keyed as without it, and returns where it was; the
pipeline marks the item that holds it ``lasting`` (the item still quotes it).

Only at the end of a clause after a comma, semicolon or dash: "the period is 30 days"
and "no exceptions were thrown" say nothing of the kind.

Pure: the prepared scan in (full-width commas already half-width), a scan of the same
length and the phrases' spans out.
"""

from __future__ import annotations

import re

from memory_core.extraction.prepare import MASK

_SETTLED = re.compile(
    r"(?:[,;]|\s[-\u2013\u2014])\s*(?:no\s+exceptions|period|full\s+stop|non-?negotiable"
    r"|end\s+of\s+(?:story|discussion)|not\s+up\s+for\s+(?:debate|discussion)"
    r"|no\s+ifs,?\s+ands,?\s+or\s+buts)(?=[ \t]*[.!]*[ \t]*(?:$|\n|[.!]\s))"
    r"|,\s*(?:没得商量|没有商量的余地|没商量|不接受讨价还价|没有例外|不容商量|雷打不动)"
    r"(?=[ \t]*[.!。！]*[ \t]*(?:$|\n|[.!。！]))",
    re.I | re.M)
"""Each alternative opens on its comma, semicolon or spaced dash (no leading run of
spaces to retry), so the search stays linear in the message."""


PAST = re.compile(r"\b(?:was|were|had|did|yesterday|ago|last\s+(?:night|week|month|year|time))\b"
                  r"|昨天|上周|去年|以前", re.I)
"""A clause told in the past ("that movie was the best ever, period", "we had no budget
last year, period"): an emphatic report, no value the user sets."""


def settle(scan: str) -> tuple[str, list[tuple[int, int]]]:
    """``scan`` with each settling phrase masked (its comma kept), and their spans, in
    text order; ``(scan, [])`` where there is none. Never raises."""
    spans = [(m.start(), m.end()) for m in _SETTLED.finditer(scan)]
    if not spans:
        return scan, []
    chars = list(scan)
    for start, end in spans:
        chars[start + 1:end] = MASK * (end - start - 1)
    return "".join(chars), spans
