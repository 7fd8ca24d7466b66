"""Statements that hold for a stretch of time the user names: "I'm in Paris until
Friday", "This week I'm working from home", 我这周在上海, 金曜日までパリにいます.

Such a statement is true when said and stops being true on a day the words name
(docs/evaluation/memory_replays.md, class 56); shown later without that day, it reads
as current ("the user is in Paris"). The item keeps the user's words; :func:`end_day`
resolves the last day it holds, and :func:`end_note` says so in the block, anchored like
:mod:`memory_core.extraction.relative_dates` on the day it was said, in the zone it was
said in:

* "until / till / through" a day (Friday, next Friday, tomorrow, tonight, the end of
  the week or month, next week: the Sunday before it); 到/直到 周五 (为止); 金曜日まで;
* a present state framed by a stretch that contains the day it was said: today,
  tonight, this week, this weekend, this month, next week ("This week I'm working from
  home", "I'm off today", 我这周在上海, 我今天在家办公, 今週は在宅勤務です). Past tense
  ("Today I switched to Vim") is a change that lasts, not a state with an end: only "I'm
  / we're / I am" (English), 在/住在/出差/休假/请假/放假/不在 (Chinese) and a copula or
  ている form (Japanese) count.

A bare weekday after "until" names the first such day after the day said (a week on
when said on that weekday); weeks run Monday to Sunday, as in ``relative_dates``.

The note is a function of the item and the request's day only, so the block's bytes
are the same for every request of one day (the cached prefix changes once, the day
after the end): `` (holds until Fri 2026-12-11)`` up to and on that day, then
`` (held until Fri 2026-12-11; over, not current)``. Pure, no I/O.
"""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta

from memory_core.extraction.relative_dates import check_zone, said_day

_WD_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WD_JA = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}

_UNTIL_EN = re.compile(
    r"\b(?:until|till|til|through|thru)\s+(?:the\s+)?"
    r"(?:(?P<rel>next|this|coming)\s+)?(?:(?P<wd>" + "|".join(_WD_EN) + r")"
    r"|(?P<word>tomorrow|tonight|today)|end\s+of\s+(?:the|this)\s+(?P<end>week|month)"
    r"|(?P<nextspan>week|month)(?=\s|[.,!;]|$))\b", re.I)
_STATE_EN = r"(?:i'm|i\s+am|we're|we\s+are|i've\s+been|we've\s+been)\b"
_SPAN_EN = r"(?P<span>today|tonight|this\s+week(?:end)?|this\s+month|next\s+week|all\s+week)"
_LEAD_EN = re.compile(r"^\W*(?:for\s+)?" + _SPAN_EN + r"\s*,?\s+" + _STATE_EN, re.I)
_TAIL_EN = re.compile(r"^\W*" + _STATE_EN + r"[^.!?\n]*?\s(?:for\s+)?" + _SPAN_EN
                      + r"\W*$", re.I)

_UNTIL_ZH = re.compile(
    r"(?:到|直到|一直到)(?P<rel>下|这|本)?(?:个)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"
    r"|(?:到|直到|一直到)(?P<word>明天|今天|今晚)")
_SPAN_ZH = r"(?P<span>今天|今晚|这周|本周|这个星期|这星期|这个月|本月|下周|下个星期|这几天)"
_STATE_ZH = re.compile(
    r"^(?:我们|我)?\s*" + _SPAN_ZH + r"\s*[，,]?\s*(?:我们|我)?\s*(?:都|一直|正)?"
    r"(?:在|住在|出差|休假|请假|放假|不在|居家|远程)")

_UNTIL_JA = re.compile(
    r"(?:(?P<rel>来週|今週)の?)?(?P<wd>[月火水木金土日])曜日?まで"
    r"|(?P<word>明日|今日|今夜)まで")
_SPAN_JA = r"(?P<span>今日|今夜|今週末|今週|今月|来週)"
_STATE_JA = re.compile(r"^(?:(?:私|僕|俺|わたし|私たち)は\s*)?" + _SPAN_JA
                       + r"(?:は|中は|いっぱい)?[、,]?.*?(?:です|でいます|にいます|ています|中です)"
                       r"[。.!！]?$", re.S)


def _last_of_month(d: date) -> date:
    first_next = date(d.year + d.month // 12, d.month % 12 + 1, 1)
    return first_next - timedelta(days=1)


def _sunday(d: date, weeks: int = 0) -> date:
    return d + timedelta(days=6 - d.weekday(), weeks=weeks)


def _weekday_after(anchor: date, weekday: int, rel: str | None) -> date:
    if rel in ("next", "下", "来週"):
        return anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=1, days=weekday)
    if rel in ("this", "这", "本", "今週"):
        return anchor - timedelta(days=anchor.weekday()) + timedelta(days=weekday)
    ahead = (weekday - anchor.weekday()) % 7 or 7
    return anchor + timedelta(days=ahead)


_WORD_DAYS = {"today": 0, "tonight": 0, "tomorrow": 1, "今天": 0, "今晚": 0, "明天": 1,
              "今日": 0, "今夜": 0, "明日": 1}


def _span_end(span: str, anchor: date) -> date | None:
    s = " ".join(span.lower().split())
    if s in ("today", "tonight", "今天", "今晚", "今日", "今夜"):
        return anchor
    if s in ("this week", "all week", "this weekend", "这周", "本周", "这个星期", "这星期",
             "今週", "今週末"):
        return _sunday(anchor)
    if s in ("next week", "下周", "下个星期", "来週"):
        return _sunday(anchor, 1)
    if s in ("this month", "这个月", "本月", "今月"):
        return _last_of_month(anchor)
    if s == "这几天":
        return None  # "these few days": no day named
    return None


def _until(text: str, anchor: date) -> date | None:
    for pattern, days in ((_UNTIL_EN, None), (_UNTIL_ZH, _WD_ZH), (_UNTIL_JA, _WD_JA)):
        m = pattern.search(text)
        if m is None:
            continue
        g = m.groupdict()
        if g.get("word"):
            return anchor + timedelta(days=_WORD_DAYS[g["word"].lower()])
        if g.get("wd"):
            wd = _WD_EN.index(g["wd"].lower()) if days is None else days[g["wd"]]
            return _weekday_after(anchor, wd, (g.get("rel") or "").lower() or None)
        if g.get("end"):
            return _sunday(anchor) if g["end"].lower() == "week" else _last_of_month(anchor)
        if g.get("nextspan"):
            # "until next week": up to the Sunday before it
            rel = (g.get("rel") or "").lower()
            if rel != "next":
                return None
            return _sunday(anchor) if g["nextspan"].lower() == "week" \
                else _last_of_month(anchor)
    return None


@functools.lru_cache(maxsize=4096)
def _end(text: str, anchor: date) -> date | None:
    if text.isascii():
        m = _LEAD_EN.match(text) or _TAIL_EN.match(text)
        found = _until(text, anchor)
        return found if found is not None or m is None else _span_end(m.group("span"), anchor)
    found = _until(text, anchor)
    if found is not None:
        return found
    m = _STATE_ZH.match(text) or _STATE_JA.match(text) or _LEAD_EN.match(text)
    return None if m is None else _span_end(m.group("span"), anchor)


@functools.lru_cache(maxsize=8192)
def end_day(text: str, said_at: float, zone: str = "") -> date | None:
    """The last day, in ``zone`` (IANA name; ``""``: UTC), that the statement ``text``
    said at UNIX time ``said_at`` holds (module doc), or ``None`` when it names no end
    (the common case). A zone this host cannot load reads as UTC.

    Memoised (a function of its arguments alone): every block line asks it of its
    item on every turn (:func:`end_note`, whose ``now`` changes), and the answer of an
    item never does; an edited item is new text, a new key."""
    if not text:
        return None
    try:
        zone = check_zone(zone) if zone else ""
    except ValueError:
        zone = ""
    return _end(text.strip(), said_day(said_at, zone))


def end_note(text: str, said_at: float, zone: str, now: float) -> str:
    """`` (holds until Fri 2026-12-11)`` for a statement with an end (:func:`end_day`)
    up to and on its last day as of ``now`` (UNIX seconds, read in the same zone), ``
    (held until Fri 2026-12-11; over, not current)`` after it, ``""`` without an end."""
    end = end_day(text, said_at, zone)
    if end is None:
        return ""
    try:
        today = said_day(now, zone)
    except ValueError:
        today = said_day(now)
    day = end.strftime("%a ") + end.isoformat()
    return f" (holds until {day})" if today <= end else \
        f" (held until {day}; over, not current)"
