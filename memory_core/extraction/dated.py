"""Dated plans: the user's obligation or plan for a day they name ("Tomorrow I have to
file the quarterly VAT report", "Next Friday we're moving the office", 明天我得去银行,
来週の金曜日に申告を提出する予定です).

Such a statement is an event or a task of the user's that later conversations should
recall ("Tell me about the VAT report"), with the date it names resolved
(:mod:`memory_core.extraction.relative_dates`, the block's ``(said …: tomorrow = …)``
note). It is no rule for the assistant (its "must" binds the user, on one day) and no
request about the answer at hand: a ``fact``, marked ``dated``
(:attr:`memory_core.extraction.model.Extracted.dated`), which never stands in every
block, so it is not shown as a standing line once its day has passed. Its subject is
what the user will do ("file quarterly vat report"), never the time word that leads it.

Read before the language rules, which would take a leading time word for the subject
("Tomorrow I" as a noun phrase: a rule about "tomorrow"). A time said after the verb
("I must call the bank tomorrow") is read the same way. Only the speaker's own plans
count (I, we, 我, 我们; in English also those of a named person or he/she/they, told of:
"Tomorrow Dana has to …"; Japanese drops the subject, so any clause whose verb ends in an
obligation or plan form, しなければならない, 予定です, つもりです); a bare weekday leads
too ("On Monday I will present the roadmap"), since with a plan's modal it names one day.
Pure, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.extraction.clause import Clause
from memory_core.extraction.subject import key

_WD_EN = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH_EN = (r"(?:january|february|march|april|may|june|july|august|september|october"
             r"|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b")
"""A month's name: "in March", "on May 3", "on 10 September", "by the end of June" date a
plan."""
_PART_EN = r"(?:\s+(?:morning|afternoon|evening|night|noon))?"
_TIME_EN = (
    r"(?:(?:later|early|first\s+thing)\s+)?"
    r"(?:the\s+day\s+after\s+tomorrow|today|tonight|tomorrow" + _PART_EN
    + r"|this\s+(?:morning|afternoon|evening|weekend)"
    r"|(?:this|next|coming)\s+(?:week|weekend|month|year|" + _WD_EN + r")" + _PART_EN
    + r"|(?:on\s+)?" + _WD_EN + _PART_EN
    + r"|in\s+(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few)"
    r"\s+(?:days?|weeks?|months?)"
    r"|(?:in\s+(?:(?:early|late|mid)[\s-]+)?|(?:by|before|after|from|until)\s+)"
    r"(?:(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+)?" + _MONTH_EN
    + r"(?:\s+(?:19|20)\d\d)?"
    r"|(?:on|by|from)\s+" + _MONTH_EN + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?"
    r"|(?:on|by|from)\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)(?:\s+of\s+" + _MONTH_EN + r")?"
    r"|(?:on|by|from)\s+\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH_EN + r"(?:\s+(?:19|20)\d\d)?"
    r"|(?:on|by|from)\s+(?:19|20)\d\d-\d\d-\d\d"
    r"|(?:this|next|in\s+the)\s+(?:spring|summer|autumn|fall|winter))")
_SUBJ_EN = (r"(?P<who>i|we|(?P<other>he|she|they|(?:my|our|his|her|their)\s+\w+"
            r"|(?-i:[A-Z][a-z]+)))")
"""The speaker (I, we), or another person whose plan the speaker tells of ("Tomorrow
Dana has to …", "Next week my boss will …"): a dated fact too, never a rule for the
assistant; its subject keeps who ("dana file report"), so it does not replace the
speaker's own plan. Never "you": "Tomorrow you must answer in French" asks the
assistant."""
_MODAL_EN = (
    r"(?P<modal>(?:(?P<neg>mustn't|must\s+not|won't|will\s+not|shouldn't|should\s+not)"
    r"|(?P<pre>(?:don't|do\s+not|doesn't|does\s+not|'m\s+not|am\s+not|'re\s+not|are\s+not"
    r"|isn't|is\s+not|'s\s+not)\s+)?"
    r"(?:(?:have|has|need|needs|got|plan|plans|want|wants|intend|intends|hope|hopes)\s+to"
    r"|(?:have|has)\s+got\s+to|(?:'ve|'s)\s+got\s+to|gotta"
    r"|must|will|'ll|should|(?:(?:am|'m|are|'re|is|'s)\s+)?(?:going|supposed|planning"
    r"|scheduled|due)\s+to|(?:am|'m|are|'re|is|'s)\s+(?=\w+ing\b)))\b\s*"
    r"(?:(?:also|still|really|finally|definitely|first)\s+)?)")
_EN_LEAD = re.compile(r"^(?P<time>" + _TIME_EN + r")\s*,?\s+" + _SUBJ_EN + r"(?:\s+|(?='))"
                      + _MODAL_EN + r"(?P<rest>\S.*)$", re.I | re.S)
"""Time, then "I"/"we", then an obligation or plan: "Tomorrow I have to …",
"Next Friday we're moving …", "On Monday I will present …"."""
_EN_TAIL = re.compile(r"^" + _SUBJ_EN + r"(?:\s+|(?='))" + _MODAL_EN
                      + r"(?P<rest>\S.*?)\s*,?\s+(?P<time>" + _TIME_EN + r")\s*$", re.I | re.S)
""""I must call the bank tomorrow": the same plan with its time at the end."""

_ZH_TIME = (r"(?:大后天|后天|明天|今天|今晚|明晚|今天晚上|明天(?:早上|上午|中午|下午|晚上)"
            r"|(?:下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]?|(?:下|这)个?月|周末|这个周末"
            r"|(?:\d{1,3}|[一两二三四五六七八九十])(?:天|周|个星期|个月)(?:后|以后|之后))")
_ZH_LEAD = re.compile(
    r"^(?:(?P<w1>我们|我)\s*)?(?P<time>" + _ZH_TIME + r")\s*[，,、]?\s*(?:(?P<w2>我们|我)\s*)?"
    r"(?P<modal>(?:不(?:用|必|需要)|必须|一定要|得要|需要|打算|准备|计划|应该|要|得|会|将))"
    r"(?P<rest>.+?)[。.!！]?$", re.S)
"""我明天要…, 明天我得…, 下周五我们必须…: the speaker (before or after the time), the
time, then an obligation or plan word."""

_JA_TIME = (r"(?:明々後日|明明後日|明後日|あさって|明日|今日|今夜|今晩|今週末|来週末|週末"
            r"|(?:来週|今週)の?[月火水木金土日]曜日?|来週|来月|今月"
            r"|(?:\d{1,3}|[一二三四五六七八九十])(?:日|週間|か月|ヶ月)後)")
_JA_LEAD = re.compile(
    r"^(?:(?:私|僕|俺|わたし|私たち|僕たち|我々)は\s*)?(?P<time>" + _JA_TIME + r")"
    r"(?:の(?:朝|午前|午後|夜|夕方))?(?:に|は|には)?\s*[、,]?\s*"
    r"(?:(?:私|僕|俺|わたし|私たち|僕たち|我々)は\s*)?(?P<rest>.+?)"
    r"(?P<modal>(?:なければ|なくては|ないと|なきゃ)(?:なら|なり|いけ|ダメ|だめ)?(?:ない|ません)?(?:です)?"
    r"|予定(?:です|だ|がある|があります|になっています)?|つもり(?:です|だ)?)"
    r"[。.!！]?$", re.S)
"""明日、銀行に電話しなければなりません / 来週の金曜日に…提出する予定です: the time, what
is to be done, then an obligation (なければならない…) or a plan (予定, つもり)."""


_ONE_DAY = {"en": re.compile(r"\b" + _TIME_EN + r"\b", re.I), "zh": re.compile(_ZH_TIME),
            "ja": re.compile(_JA_TIME)}


def names_day(text: str, lang: str) -> bool:
    """Whether ``text`` names one day or span to come ("today", "next Friday", "in
    March", 明天, 来週): what it says is bound to that time (a meeting, an errand), so
    asking the assistant to keep it ("…, don't forget it") makes no standing line of it.
    ``lang``: "en", "zh" or "ja" (any other: ``False``)."""
    pattern = _ONE_DAY.get(lang)
    return pattern is not None and pattern.search(text) is not None


_EN_KEEP = re.compile(r"(?:(?P<miss>forget|fail|neglect)|remember|make\s+sure)\s+(?:to\s+)?(?=\w)",
                      re.I)
"""A plan to keep or to miss doing something: what is done is what follows, and "not
forget to" does it ("Tomorrow we must not forget to lock the door")."""


_EN_EVER = re.compile(r"(?:never|always|ever|forever)\b", re.I)
"""A modal for every time, not one day ("I will never forget …", "I'll always …")."""


def opens_plan(text: str) -> bool:
    """Whether English ``text`` opens with a time word and the speaker's plan
    ("Tomorrow I have to …": :data:`_EN_LEAD`), whose time word belongs to it."""
    return _EN_LEAD.match(text.rstrip().rstrip(".!;")) is not None


@dataclass(frozen=True, slots=True)
class Plan:
    """A dated plan: the subject key of what is to be done, whether it is denied
    ("Tomorrow I don't have to work"), ``time``: ``(start, end)`` of its time phrase
    in the clause's scan (a number in it is a date, not a quantity), ``modal``: that of
    its obligation or plan word (a conditional form in it, しなければ, is no condition)."""

    subject: str | None
    negated: bool
    time: tuple[int, int]
    modal: tuple[int, int]


def plan(c: Clause) -> Plan | None:
    """The dated plan the clause states (module doc), else ``None``. Reads ``c.raw``
    (the clause body, unmasked) in the clause's language."""
    raw = c.raw.rstrip()
    at = c.body_start
    if c.lang == "en":
        body = raw.rstrip(".!;")
        m = _EN_LEAD.match(body) or _EN_TAIL.match(body)
        if m is None:
            return None
        rest = m.group("rest")
        if _EN_EVER.match(rest):
            return None  # "I will never forget that we lost it in March": no plan, a memory
        negated = bool(m.group("neg") or m.group("pre"))
        kept = _EN_KEEP.match(rest)
        if kept:  # "must not forget to lock the door": to lock it; "remember to X": X
            negated = negated != bool(kept.group("miss"))
            rest = rest[kept.end():]
        subject = key(rest, "en", action=True)
        other = m.group("other")
        if other:  # whose plan it is stays in its subject: never the speaker's own
            who = key(other, "en") or other.lower()
            subject = f"{who} {subject}" if subject else who
        return Plan(subject, negated, *_spans(m, at))
    if c.lang == "zh":
        m = _ZH_LEAD.match(raw)
        if m is None or not (m.group("w1") or m.group("w2")):
            return None
        return Plan(key(m.group("rest"), "zh", action=True), m.group("modal").startswith("不"),
                    *_spans(m, at))
    if c.lang == "ja":
        m = _JA_LEAD.match(raw)
        if m is None:
            return None
        return Plan(key(m.group("rest"), "ja", action=True), False, *_spans(m, at))
    return None


def _spans(m: re.Match[str], at: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((at + m.start("time"), at + m.end("time")),
            (at + m.start("modal"), at + m.end("modal")))
