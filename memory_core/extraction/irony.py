"""Ironic praise: "Oh great, I just love it when the build breaks on Friday evening."

A liking said of a misfortune, or after an ironic opener, is a complaint: storing it as
a preference ("the user loves broken builds") inverts it. :func:`ironic` reads an
English sentence and says whether its liking is ironic:

* an ironic opener ("Oh great,", "Oh joy,", "Oh wonderful,", "Yeah right,", "Just what
  I needed,") before a liking word (love, enjoy, adore, like); or
* a liking word, a word of misfortune (breaks, fails, crashes, outage, flaky, waiting,
  merge conflict…) and "when", "waiting" or "another" ("I love it when CI fails",
  "I just love waiting 40 minutes for CI", "another merge conflict, I love those").

"I love Python", "Great, I love the new design" and "I like it when the tests are
fast" are no irony, nor is a misfortune denied ("I love it when nothing breaks", "no
bugs", "doesn't fail"); "down" is one only as an outage ("the site is down"), not in
"sit down". English only; a CJK sentence is left as it was.
"""

from __future__ import annotations

import re
from typing import Final

_OPENER: Final = re.compile(
    r"^\W*(?:oh,?\s+(?:great|joy|wonderful|fantastic|lovely|perfect|brilliant|goody|boy)"
    r"|yeah,?\s+right|just\s+what\s+i\s+needed|just\s+great|just\s+perfect|oh\s+yes)\b", re.I)
_LIKING: Final = re.compile(r"\b(?:love|loves|loving|enjoy|enjoys|adore|like)\b", re.I)
_MISFORTUNE: Final = re.compile(
    r"\b(?:break|breaks|broke|broken|fail|fails|failed|failing|crash|crashes|crashed|outage"
    r"|flaky|(?:is|are|was|were|goes|go|went|going)\s+down|timeouts?|times\s+out|late|delayed"
    r"|stuck|hangs?|merge\s+conflicts?|bugs?"
    r"|rain(?:s|ing)?|traffic|waiting|wait|meetings?\s+that\s+could|overtime|on\s+call)\b", re.I)
_DENIED: Final = re.compile(
    r"(?:\b(?:no|nothing|never|without|not|zero|none\s+of\s+the)|n't)\s+(?:\w+\s+){0,2}$",
    re.I)
"""A denial just before a misfortune word: "nothing breaks", "no bugs", "doesn't fail",
"without any flaky tests" (up to two words between)."""
_FRAME: Final = re.compile(r"\b(?:when|whenever|waiting|another|every\s+time)\b", re.I)


def ironic(sentence: str) -> bool:
    """Whether the liking in an English ``sentence`` is ironic (module doc)."""
    if _LIKING.search(sentence) is None:
        return False
    if _OPENER.match(sentence):
        return True
    return bool(_FRAME.search(sentence) and any(
        _DENIED.search(sentence, max(0, m.start() - 40), m.start()) is None
        for m in _MISFORTUNE.finditer(sentence)))
