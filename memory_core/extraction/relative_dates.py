"""Days a statement names relative to when it was said ("tomorrow", "next Friday",
下周五, 来週の月曜日), resolved to calendar dates.

An item keeps the user's words, and its words keep their meaning only on the day they
were said: "My flight is tomorrow" read a week later names the wrong day. The block
(:mod:`memory_core.assembly.block`) shows the date each such phrase meant next to the
item, so the model does not re-read it against its own today.

Anchor: the calendar day, in the user's time zone, of the instant the statement was
stored (the item's ``created_at``). The zone is the one in force when it was said (the
request's ``X-LCM-Timezone`` header, else the ``capture.timezone`` setting), kept with
the message and its items (``data.tz``), never the zone of the request that renders
the block: "tomorrow" said at 18:00 in Los Angeles (02:00 UTC the next day) is the
Los Angeles tomorrow for good. The note names that zone ("said Mon 2026-12-07
America/Los_Angeles: …"); an item stored without one was said in UTC and keeps its
bytes ("said Mon 2026-12-07 UTC: …").
Weeks run Monday to Sunday: "this Friday" is the Friday of the week the statement was
said in, "next Friday" the Friday of the week after, "last Friday" of the week before
(下周五 and 来週の金曜日 read the same way); an English "next Friday" said before Friday
names both candidates, since speakers mean either; "coming Friday" is the first Friday
after the day said. A bare weekday ("on Friday") is left alone:
it is as often a recurring day ("the standup is on Friday") as one date.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

log = logging.getLogger(__name__)

_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WD_JA = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_NUM_EN = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_NUM_CJK = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
            "九": 9, "十": 10}

_EN = re.compile(
    r"\b(?:(?P<dayafter>the\s+day\s+after\s+tomorrow)|(?P<daybefore>the\s+day\s+before\s+yesterday)"
    r"|(?P<lastnight>last\s+night)"
    r"|(?<!the\s)(?P<rel>next|last|this|coming)\s+(?P<wd>" + "|".join(_WEEKDAYS_EN) + r")"
    r"|(?<!the\s)(?P<rel2>next|last|this)\s+(?P<span>week|month|year)"
    r"|in\s+(?P<n_in>\d{1,3}|" + "|".join(_NUM_EN) + r")\s+(?P<u_in>day|week)s?"
    r"|(?P<n_ago>\d{1,3}|" + "|".join(_NUM_EN) + r")\s+(?P<u_ago>day|week)s?\s+ago"
    r"|(?P<word>today|tonight|tomorrow|yesterday))\b",
    re.IGNORECASE)

_ZH = re.compile(
    r"(?P<word>大后天|后天|明天|今天|今晚|昨天|昨晚|前天)"
    r"|(?P<rel>下|上|这|本)(?:个)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"
    r"|(?P<rel2>下|上|这|本)(?:个)?(?P<span>周|星期|礼拜|月)(?![一二三四五六日天])"
    r"|(?P<n>\d{1,3}|[一两二三四五六七八九十])(?P<u>天|周|个星期)(?P<dir>后|以后|之后|前|以前|之前)")

_JA = re.compile(
    r"(?P<word>明々後日|明明後日|明後日|一昨日|おととい|あさって|明日|今日|今夜|今晩|昨日|昨夜)"
    r"|(?P<rel>来週|先週|今週)の?(?P<wd>[月火水木金土日])曜日?"
    r"|(?P<span>来週|先週|今週|来月|先月|今月|来年|去年|今年)"
    r"|(?P<n>\d{1,3}|[一二三四五六七八九十])(?P<u>日|週間)(?P<dir>後|前)")

_WORD_DAYS = {
    "today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1,
    "大后天": 3, "后天": 2, "明天": 1, "今天": 0, "今晚": 0, "昨天": -1, "昨晚": -1, "前天": -2,
    "明々後日": 3, "明明後日": 3, "明後日": 2, "あさって": 2, "明日": 1, "今日": 0, "今夜": 0,
    "今晩": 0, "昨日": -1, "昨夜": -1, "一昨日": -2, "おととい": -2,
}
_REL_WEEKS = {"next": 1, "coming": 1, "last": -1, "this": 0, "下": 1, "上": -1, "这": 0, "本": 0,
              "来週": 1, "先週": -1, "今週": 0}
_JA_SPANS = {"来週": ("week", 1), "先週": ("week", -1), "今週": ("week", 0),
             "来月": ("month", 1), "先月": ("month", -1), "今月": ("month", 0),
             "来年": ("year", 1), "去年": ("year", -1), "今年": ("year", 0)}

_MAX_PHRASES = 4
"""Most phrases resolved for one statement: the note stays a few words long."""


UTC_NAME = "UTC"
"""The zone of a statement stored without one (every statement before zones were
kept, and the ``capture.timezone`` default)."""


def check_zone(name: str) -> str:
    """``name`` (an IANA time zone name: ``America/Los_Angeles``, ``Asia/Tokyo``) as
    stored with a statement: ``""`` for :data:`UTC_NAME`, else ``name`` itself.
    Raises ``ValueError`` for a name the host's zone database (or the ``tzdata``
    package) does not know, an offset such as ``+09:00`` included."""
    if name == UTC_NAME:
        return ""
    _zone(name)
    return name


_HOST_ALIASES = frozenset({"localtime", "posixrules"})
"""Files some hosts keep beside the zone database that are no IANA zone: links to the
host's own zone (Debian's ``localtime`` → ``/etc/localtime``) or rules (``posixrules``).
Stored with a statement, they would read its days in whichever zone the reading host
is set to (replicas on one PostgreSQL may differ), so they are refused as unknown."""


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> tzinfo:
    if not name or name == UTC_NAME:
        return UTC
    if name.casefold() in _HOST_ALIASES:
        raise ValueError(f"unknown time zone {name!r} (an IANA name such as"
                         " America/Los_Angeles; this one names the host's own setting)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        # ValueError: a path ("../x", "/etc/localtime"); OSError: an unreadable file
        raise ValueError(f"unknown time zone {name!r} (an IANA name such as"
                         " America/Los_Angeles)") from exc


def said_day(ts: float, zone: str = "") -> date:
    """The calendar day in ``zone`` (an IANA name, ``""``: UTC) of the UNIX time
    ``ts`` (seconds). Raises ``ValueError`` for an unknown zone (:func:`check_zone`)."""
    return datetime.fromtimestamp(ts, tz=_zone(zone)).date()


def _count(raw: str, table: dict[str, int]) -> int:
    return int(raw) if raw.isdigit() else table.get(raw.lower(), 1)


def _week_day(anchor: date, weeks: int, weekday: int) -> date:
    monday = anchor - timedelta(days=anchor.weekday())
    return monday + timedelta(weeks=weeks, days=weekday)


def _span(anchor: date, span: str, step: int) -> str:
    if span == "week":
        return "week of " + _fmt(_week_day(anchor, step, 0))
    if span == "month":
        months = anchor.year * 12 + anchor.month - 1 + step
        return f"{months // 12:04d}-{months % 12 + 1:02d}"
    return f"{anchor.year + step:04d}"


def _fmt(d: date) -> str:
    return d.strftime("%a ") + d.isoformat()


def _resolve_en(m: re.Match[str], anchor: date) -> str | None:
    g = m.groupdict()
    if g["dayafter"]:
        return _fmt(anchor + timedelta(days=2))
    if g["daybefore"]:
        return _fmt(anchor - timedelta(days=2))
    if g["lastnight"]:
        return _fmt(anchor - timedelta(days=1))
    if g["wd"]:
        rel, wd = g["rel"].lower(), _WEEKDAYS_EN.index(g["wd"].lower())
        if rel == "coming":  # the first such day after the one it was said on
            return _fmt(anchor + timedelta(days=(wd - anchor.weekday() - 1) % 7 + 1))
        meant = _fmt(_week_day(anchor, _REL_WEEKS[rel], wd))
        if rel == "next" and wd > anchor.weekday():
            # "next Friday" said on a Monday: as often this week's Friday as the next
            return f"{meant} (or {_fmt(_week_day(anchor, 0, wd))})"
        return meant
    if g["span"]:
        return _span(anchor, g["span"].lower(), _REL_WEEKS[g["rel2"].lower()])
    if g["n_in"]:
        n = _count(g["n_in"], _NUM_EN) * (7 if g["u_in"].lower() == "week" else 1)
        return _fmt(anchor + timedelta(days=n))
    if g["n_ago"]:
        n = _count(g["n_ago"], _NUM_EN) * (7 if g["u_ago"].lower() == "week" else 1)
        return _fmt(anchor - timedelta(days=n))
    return _fmt(anchor + timedelta(days=_WORD_DAYS[g["word"].lower()]))


def _resolve_zh(m: re.Match[str], anchor: date) -> str | None:
    g = m.groupdict()
    if g["word"]:
        return _fmt(anchor + timedelta(days=_WORD_DAYS[g["word"]]))
    if g["wd"]:
        return _fmt(_week_day(anchor, _REL_WEEKS[g["rel"]], _WD_ZH[g["wd"]]))
    if g["span"]:
        return _span(anchor, "month" if g["span"] == "月" else "week", _REL_WEEKS[g["rel2"]])
    n = _count(g["n"], _NUM_CJK) * (1 if g["u"] == "天" else 7)
    return _fmt(anchor + timedelta(days=n if "后" in g["dir"] else -n))


def _resolve_ja(m: re.Match[str], anchor: date) -> str | None:
    g = m.groupdict()
    if g["word"]:
        return _fmt(anchor + timedelta(days=_WORD_DAYS[g["word"]]))
    if g["wd"]:
        return _fmt(_week_day(anchor, _REL_WEEKS[g["rel"]], _WD_JA[g["wd"]]))
    if g["span"]:
        span, step = _JA_SPANS[g["span"]]
        return _span(anchor, span, step)
    n = _count(g["n"], _NUM_CJK) * (1 if g["u"] == "日" else 7)
    return _fmt(anchor + timedelta(days=n if g["dir"] == "後" else -n))


_Resolver = Callable[[re.Match[str], date], str | None]
_ALL_SCRIPTS: tuple[tuple[re.Pattern[str], _Resolver], ...] = (
    (_EN, _resolve_en), (_ZH, _resolve_zh), (_JA, _resolve_ja))
_EN_ONLY = _ALL_SCRIPTS[:1]


def resolve(text: str, said_at: float, zone: str = "") -> list[tuple[str, str]]:
    """``(phrase as written, what it meant)`` for each relative day, week, month or
    year ``text`` names, in text order, at most :data:`_MAX_PHRASES`, each phrase once.
    ``said_at``: UNIX seconds the statement was made, anchored on its day in ``zone``
    (an IANA name, ``""``: UTC; ``ValueError`` when unknown). What
    it meant is ``"Tue 2026-12-08"`` for a day, ``"week of Mon 2026-12-14"``,
    ``"2027-01"`` or ``"2027"``. Empty when the text names none (the common case,
    decided by one regular-expression scan per script)."""
    return _resolve(text, said_day(said_at, zone)) if text else []


_CJK_FROM = "\u3000"
"""Every phrase :data:`_ZH` or :data:`_JA` matches holds a character at or past this
one (CJK symbols, kana, ideographs): a text without one is scanned for English only."""


def _resolve(text: str, anchor: date) -> list[tuple[str, str]]:
    found: list[tuple[int, str, str]] = []
    patterns = _ALL_SCRIPTS if not text.isascii() and max(text) >= _CJK_FROM else _EN_ONLY
    for pattern, fn in patterns:
        for m in pattern.finditer(text):
            meant = fn(m, anchor)
            if meant is not None:
                found.append((m.start(), m.group(0), meant))
    found.sort()
    out: list[tuple[str, str]] = []
    spans: list[tuple[int, int]] = []
    for start, phrase, meant in found:
        end = start + len(phrase)
        if any(s < end and start < e for s, e in spans) or any(p == phrase for p, _ in out):
            continue  # 昨日 inside 一昨日 (two scripts' patterns), or said twice
        spans.append((start, end))
        out.append((phrase, meant))
        if len(out) == _MAX_PHRASES:
            break
    return out


def note(text: str, said_at: float, zone: str = "") -> str:
    """`` (said Mon 2026-12-07 America/Los_Angeles: tomorrow = Tue 2026-12-08)`` for a
    statement that names relative days (:func:`resolve`), anchored on its day in
    ``zone`` (the IANA name stored with it; ``""``: UTC, written ``UTC``); ``""`` for
    one that names none. Never raises: a zone this host cannot load (a database
    without it) anchors on UTC and says so, logged. Memoised per text, day and zone:
    the block renders the same item lines on every request."""
    if not text:
        return ""
    zone = _loadable(zone) if zone else ""
    return _note(text, said_day(said_at, zone), zone or UTC_NAME)


@functools.lru_cache(maxsize=64)
def _loadable(zone: str) -> str:
    """``zone`` when this host can load it, else ``""`` (UTC), logged once a zone."""
    try:
        _zone(zone)
    except ValueError:
        log.warning("time zone %r of a stored statement is unknown on this host; its"
                    " relative days are read in UTC", zone)
        return ""
    return zone


@functools.lru_cache(maxsize=4096)
def _note(text: str, anchor: date, zone: str) -> str:
    pairs = _resolve(text, anchor)
    if not pairs:
        return ""
    meant = "; ".join(f"{p} = {d}" for p, d in pairs)
    return f" (said {_fmt(anchor)} {zone}: {meant})"
