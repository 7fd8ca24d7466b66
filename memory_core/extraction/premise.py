"""Premises: a fact of the user's own given as the reason for a question.

"Since I'm vegan, what should I cook tonight?", "As I live in Berlin, which museums …?",
"Given that I have two kids, what car …?", "Because I'm allergic to nuts, can you
suggest a snack?", "What should I cook tonight, since I'm vegan?": the question is about
the answer at hand, but the clause it rests on states what holds for the user. The
pipeline reads that clause as a statement of its own (the item quotes the clause only,
a substring of the message) in place of the question.

The structure decides, not a word list: a subordinator of reason (since, as, because,
given that, seeing that, now that, considering that) that opens the sentence or follows
the question's last comma, then a clause whose subject is the speaker (I, we, my, our),
set off from the question by that comma. What the speaker says of the conversation ("As
I said, …", "As I mentioned, …", "Since I asked, …") is no premise; nor is a supposition
("If I'm vegan, …": not a subordinator of reason), nor a clause about the one asked
("Since you know I'm vegan, …"). English only. Pure, no I/O.
"""

from __future__ import annotations

import re
from typing import Final

_SUB: Final = (r"(?:since|as|because|'?cause|given\s+that|seeing\s+(?:as|that)|now\s+that"
               r"|considering\s+that)")
_OWN: Final = r"(?:i|we|my|our)(?:'m|'ve|'re|'d|'ll)?\b"
_CONVERSATION: Final = (
    r"(?:i|we)(?:'ve|\s+have|'d|\s+had)?\s+(?:already\s+|just\s+)?(?:said|say|mentioned|mention"
    r"|explained|noted|told\s+you|asked|ask|wrote|write|understand|understood|recall|remember"
    r"|was\s+saying|were\s+saying|see\s+it|put\s+it|discussed|agreed)\b")
"""What the speaker says of the conversation ("As I said", "as we discussed")."""
_LEAD: Final = re.compile(
    rf"{_SUB}\s+(?!{_CONVERSATION})(?P<p>{_OWN}[^,;:?!]*?[^\s,;:?!])\s*,\s*(?=\S)", re.I)
"""The premise before the question: "Since I'm vegan, …"."""
_TAIL: Final = re.compile(
    rf",\s*{_SUB}\s+(?!{_CONVERSATION})(?P<p>{_OWN}[^,;:?!]*?[^\s,;:?!])\s*\?[\s?!\"')\]]*$",
    re.I)
"""The premise after the question, behind its last comma: "…, since I'm vegan?"."""


def find(scan: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` in ``scan`` of the premise clause (module doc) of the question
    sentence ``scan[start:end]`` (its prefixes stripped), without its subordinator or
    the comma that sets it off, or ``None``."""
    m = _LEAD.match(scan, start, end)
    if m is None or "?" not in scan[m.end():end]:
        tail = scan.rfind(",", start, end)
        m = _TAIL.match(scan, tail, end) if tail >= 0 else None
        if m is None or tail == start or not scan[start:tail].strip():
            return None
    return m.start("p"), m.end("p")
