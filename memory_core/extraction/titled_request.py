"""The user's own request on the line of a source title: "Pasted from Slack: can you
summarise the thread below?".

A title line naming a source ("Pasted from Slack:", "From the acme-sdk docs:") makes the
text after its colon material (:mod:`.material`): on the same line, that is the quoted
line itself ("From the docs: always pin your versions."). But the user often writes the
title and their own question or request on one line and pastes the material below it;
read as material, the request was hidden with it. :func:`own_request` tells such a
request: one addressed to the assistant ("can you …", "could you …", "please …", "I
need you to …", "help me …") or a question or an order about the material that points
at it ("what does this mean?", "summarise the thread below", "translate the above").
With material pasted below the line, a question on it is the user's too ("Pasted from
Slack: what does Alex mean by squash-merge?"). A line that neither addresses the
assistant nor points at the material stays the source's ("From the docs: always pin
your versions.", "From the FAQ: how do I reset my password?" with nothing below).

Pure: the scan and a span in, a bool out.
"""

from __future__ import annotations

import re

_ADDRESSED = re.compile(
    r"\W*(?:(?:can|could|would|will)\s+you|please|pls|kindly|help\s+me"
    r"|i\s+(?:need|want|would\s+like|'d\s+like)\s+you\s+to|i'd\s+like\s+you\s+to)\b", re.I)
_ABOUT = re.compile(
    r"\W*(?:what|why|how|which|who|is|are|does|do|should|summari[sz]e|translate|explain"
    r"|review|check|rewrite|reword|tl;?dr|answer|reply|respond|draft|list|extract)\b"
    r"[^\n]{0,120}?\b(?:below|above|this|these|that|those|it|them|the\s+(?:following|thread"
    r"|message|messages|email|post|page|text|snippet|excerpt|chat|conversation|notes?))\b",
    re.I)

_QUESTION = re.compile(r"\W*(?:what|why|how|which|who|when|where|is|are|does|do|did|should"
                       r"|can|could|would)\b[^\n]{0,200}\?\s*$", re.I)


def own_request(scan: str, start: int, end: int, *, below: bool = False) -> bool:
    """Whether ``scan[start:end]`` (the text after a title's colon, on its line) is the
    user's own request or question rather than the source's text (module doc).
    ``below``: text follows on the next line (the material); then any question there
    ("Pasted from Slack: what does Alex mean by squash-merge?") is the user's."""
    return _ADDRESSED.match(scan, start, end) is not None \
        or _ABOUT.match(scan, start, end) is not None \
        or (below and _QUESTION.match(scan, start, end) is not None)
