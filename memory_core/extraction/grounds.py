"""An order that rests on a lasting circumstance of the user's lasts as long as it does.

"I live in Lisbon, so give me times in Lisbon time", "I play guitar left-handed, so any
chord diagrams you draw need to be mirrored", "Keep Wednesday evenings clear, because the
kids have swim practice every Wednesday": the order says no "always" and no "from now
on", but the reason it gives holds on, and so does the order. The reason decides, read
from its tense and aspect, never from what it is about:

* the speaker's habit or standing state, in the simple present ("I live …", "I play
  …", "we float …"), with no time that binds it to the moment;
* a state said to have lasted ("I've been vegetarian for twelve years", "since 2019");
* anything said to recur, whoever it is about ("the kids have swim practice every
  Wednesday", "on weeknights", "each morning").

Not a state of the moment ("I'm tired, so keep it short", "I'm reading on my phone"):
a copula, a progressive, a possession or a need ("I have a call at 3", "My dad has
diabetes, so no sweets for him at the party") says nothing of how long the order
holds, unless it recurs or has lasted. An order that names its own occasion ("… for
this answer", "this time") is the moment's whatever its reason. Used by
:mod:`memory_core.extraction.pipeline`; pure.
"""

from __future__ import annotations

import re

__all__ = ["rests_on_lasting"]

_SO = re.compile(r"(?:,|;|\band|(?<!\s))\s*(?:so|therefore|which\s+means)\s*,?\s*$", re.I)
"""The joint between a reason and the order after it: "…, so give me …"."""
_BECAUSE = re.compile(r"(?:,|(?<!\s))\s*\b(?:because|since|as|given\s+that)\s+(?=\S)", re.I)
"""The joint between an order and the reason after it: "… because I …"."""
_SENTENCE_END = re.compile(r"[.!?\n]\s*")

_SUBJECT = r"(?:i|we)"
_MODAL_OR_MENTAL = (r"(?:think|guess|feel|hope|wonder|know|mean|believe|suppose|want|wish"
                    r"|like|love|hate|prefer|bet|reckon|assume|said|told|asked)")
_IRREGULAR_PAST = (
    r"(?:ate|awoke|became|began|bent|bit|bled|blew|bought|broke|brought|built|burnt|caught"
    r"|chose|came|crept|dealt|drank|drew|drove|dug|fed|fell|felt|fled|flew|fought|forgave"
    r"|forgot|found|froze|gave|grew|heard|held|hid|hung|kept|knew|knelt|laid|leapt|learnt"
    r"|led|left|lent|lost|made|met|paid|ran|rang|rode|rose|sang|sank|sat|saw|sent|shook"
    r"|shot|slept|slid|sold|spent|spoke|stole|stood|stuck|struck|swam|swore|taught|threw"
    r"|told|took|tore|understood|woke|won|wore|wrote)")
"""Simple past forms that are no present ("I broke my wrist", "I took a painkiller"):
a thing that happened, not a habit (forms also present, "put", "read", "quit", are
left to the present)."""
_HABIT = re.compile(
    r"^\W*(?:(?:and|but|well|ok|okay)\W+)?" + _SUBJECT
    + r"\s+(?:(?:usually|normally|generally|always|often|only|mostly|also|still)\s+)?"
    r"(?!" + _MODAL_OR_MENTAL + r"\b|am\b|is\b|are\b|was\b|were\b|had\b|did\b|got\b|went\b"
    r"|have\b|has\b|need\b|needs\b|" + _IRREGULAR_PAST + r"\b"
    r"|[a-z]+ed\b|[a-z]+ing\b|will\b|would\b|could\b|might\b|can\b|may\b|must\b|should\b)"
    r"[a-z]+\b", re.I)
"""The speaker and a verb in the simple present: "I live …", "I play …", "we float …";
not a mental verb ("I think …") nor a past (:data:`_IRREGULAR_PAST`) or
progressive form, nor a copula, a possession or a need ("I have a question", "I need
it", which may be the moment's: those last only when said to recur)."""
_LASTED = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)\s+[a-z]+\b[^.;!?\n]{0,60}?\b(?:for\s+(?:(?:over|more\s+than"
    r"|almost|nearly|about|around|at\s+least)\s+)?(?:\d+|a|an|many|several|a\s+few|two"
    r"|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty)\s+"
    r"(?:years?|months?|decades?)|since\s+(?:\d{4}|childhood|birth|forever))\b", re.I)
"""A state said to have lasted: "I've been vegetarian for twelve years"."""
_RECURS = re.compile(
    r"\b(?:every|each)\s+(?:day|night|morning|evening|week|weekend|month|year|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|time)\b"
    r"|\bon\s+(?:weekdays|weeknights|weekends|mondays|tuesdays|wednesdays|thursdays"
    r"|fridays|saturdays|sundays)\b|\b(?:weeknights|weekdays|daily|nightly|weekly|monthly"
    r"|always|never|usually|normally)\b", re.I)
"""Words that say the circumstance recurs: "every Wednesday", "on weeknights"."""
_NOW = re.compile(
    r"\b(?:now|today|tonight|tomorrow|yesterday|currently|at\s+the\s+moment|right\s+now"
    r"|this\s+(?:time|once|morning|afternoon|evening|week|weekend|one|answer|reply|response"
    r"|message|email|draft|meeting|call|trip)|for\s+now|at\s+\d{1,2}(?::\d\d)?\b"
    r"|in\s+(?:an?|\d+|a\s+few)\s+(?:minutes?|hours?|mins?)|soon|later)\b", re.I)
"""Words that bind a reason or an order to the moment it is said in."""


_CJK_JOINT = re.compile(r"(?:なので|ので|から)[、，,]|[，,、]\s*(?:所以|因此|因而)")
"""The joint between a reason and the order after it: …なので、… / …，所以…."""
_CJK_NOW = re.compile(
    r"今天|今晚|明天|昨天|这次|这回|现在|刚才|刚刚|马上|正在|暂时|今日|今夜|明日|昨日|今回"
    r"|さっき|今すぐ|ちょっと|(?<![昨毎])今(?![後度])")
"""Words of the moment in a Chinese or Japanese reason or order."""
_CJK_OTHER = re.compile(r"さん|様|君|ちゃん|先生|彼|[他她]们?|同事|朋友")
"""A reason told of someone outside the household (田中さんは…ので, 彼は…ので, 他…，所以…): their
circumstance, not the user's; the order rests on it no longer than they stay."""
_CJK_PAST = re.compile(r"(?:了|过|着|た|だ|ている|ています|てる|てます|でした|ました)\s*$")
"""A past or progressive ending of a reason: what happened, or the state of the moment."""


def _cjk_rests_on_lasting(order: str) -> bool:
    joint = _CJK_JOINT.search(order)
    if joint is None:
        return False
    reason = order[:joint.start()].strip()
    return (bool(reason) and _CJK_NOW.search(order) is None
            and _CJK_PAST.search(reason) is None and _CJK_OTHER.search(reason) is None)


def _lasting_reason(reason: str) -> bool:
    if _NOW.search(reason) is not None:
        return False
    if _RECURS.search(reason) is not None or _LASTED.search(reason) is not None:
        return True
    return _HABIT.match(reason) is not None


def rests_on_lasting(text: str, start: int, end: int) -> bool:
    """Whether the order at ``text[start:end]`` gives a lasting reason for itself
    (module doc): the clause before it in its sentence, joined by "so", or the clause
    after "because"/"since" inside it. False when the order names its moment."""
    order = text[start:end]
    if _CJK_JOINT.search(order) is not None:
        return _cjk_rests_on_lasting(order)
    joint = _BECAUSE.search(order)
    if _NOW.search(order[:joint.start()] if joint else order) is not None:
        return False
    if joint is not None and _lasting_reason(order[joint.end():]):
        return True
    lo = max(0, start - 300)
    before = text[lo:start]
    so = _SO.search(before)
    if so is None:
        return False
    ends = list(_SENTENCE_END.finditer(before, 0, so.start()))
    reason = before[ends[-1].end() if ends else 0:so.start()]
    return bool(reason.strip()) and _lasting_reason(reason)
