"""Numbers with units: "30 s", "$1,200", "2.5k req/s", "5万円", "三十秒", "port 8080", "v3.2".

Works on the prepared scan string (full-width digits already folded; see ``prepare``) and
returns spans into it, so ``value_text`` is the number as written with digits normalised.
Clock times, dates, years and identifiers ("H100", "eu-west-1", "UTF-8", "Q3") are not
quantities: a digit that starts one is skipped with the whole date or name, because a
date read as "3 days" would corrupt the memory it is meant to keep.

Work is driven by the digits: the patterns run only where a digit (or a CJK numeral, or
an English number word) is, and look back a few characters for a currency sign, a
"port"/"version" cue or a month name. Scanning every position with an alternation of
forty branches costs microseconds per character in Python's ``re``; this costs a few
microseconds per number and nearly nothing for text without numbers.

Units are normalised to one spelling each (``units``): money to ISO 4217 codes (USD, EUR,
GBP, JPY, CNY — "$", "元", "円" are ambiguous or script-bound, a code is not). Port
numbers and versions carry no unit; their ``kind`` says what they are. A lowercase "m"
straight after a number ("5m") is minutes, as in Go/Kubernetes durations, which is what
it means in the conversations we serve; "5 m" with a space stays unitless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.extraction.units import CJK_UNITS, UNITS


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number found in a scan string: ``[start, end)`` covers number and unit."""

    value: float | None
    value_text: str
    unit: str | None
    start: int
    end: int
    kind: str  # "measure" (has a unit or currency) | "port" | "version" | "bare"
    # | "identifier" (value None: a phone number, an IP address, "1.2.3")


def _alternation(surfaces: list[str]) -> str:
    return "|".join(re.escape(s) for s in sorted(surfaces, key=len, reverse=True))


_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY_SIGNS = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "￥": "JPY"}
_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "million": 1e6, "billion": 1e9, "bn": 1e9,
                "千": 1e3, "万": 1e4, "萬": 1e4, "亿": 1e8, "億": 1e8}

_DIGITS = re.compile(r"\d+")
_NUMBER_AT = re.compile(
    r"(?P<num>" + _NUM + r")(?![.,]?\d)"
    r"(?:\s?(?P<range>-|–|~|〜|～|to)\s?(?P<num2>" + _NUM + r")(?![.,]?\d))?"
    r"(?P<mult>[kK](?![A-Za-z])|M(?![A-Za-z])|\s?(?:million|billion|bn)\b|千|万|萬|亿|億)?"
)
"""A number at a digit, with an optional range ("3-5") and multiplier ("2.5k", "5万")."""
_DECIMAL_COMMA_AT = re.compile(
    r"(?P<num>\d+,\d{1,2})(?![.,]?\d)"
    r"(?P<mult>[kK](?![A-Za-z])|M(?![A-Za-z])|\s?(?:million|billion|bn)\b|千|万|萬|亿|億)?")
"""A decimal comma ("1,5 kg", "3,99 EUR"): taken only with a unit or a currency (a
list "3,5 and 7" is two numbers; three digits after the comma group thousands)."""
_CURRENCY_BEFORE = re.compile(r"(?:US\$|\$|€|£|¥|￥)\s?$")
_IDENTIFIER_BEFORE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.-/:#@+^")
"""A digit glued to these is part of a name (H100, eu-west-1, UTC+8, v2), not a number."""
_IDENTIFIER_AT = re.compile(
    r"(?:\d+(?:\.\d+){2,}|\d+(?:-\d+){2,}|(?P<area>\d{3}\)\s?\d{3}[-.\s]\d{4}))"
    r"(?![.-]?[^\W_])")
"""Digits in three or more groups joined by one separator, or a phone number's area
code in brackets ("(555) 123-4567"): a phone or order number, an ISBN, a version, an
IP address. A name, taken whole, not a quantity (a range "5-10" has two groups)."""
_PHONE_OPEN = re.compile(r"(?:\+\d{1,3}\s?)?\($")
_INTERNATIONAL = re.compile(r"\d{1,3}(?:[ .-]\d{1,8}){2,}(?![.-]?[^\W_])")
"""A phone number after its "+" country code, in groups ("+49 30 1234567", "+1 415 555
0100"): one name, whose groups are no numbers of their own."""
_SIGN_BEFORE = re.compile(r"(?:^|(?<=[\s(=:~]))([-\u2212])$")
"""A minus sign right before a number, after a space or the start ("-4 °C", "−4 °C");
not one inside a name ("UTC-4", "eu-west-1")."""
_UNIT_TOKENS = re.compile(
    r"( ?)([A-Za-z%°℃℉/][A-Za-z/.]*|[%°℃℉])(?: ([A-Za-z]+))?(?: ([A-Za-z]+))?")
_UNIT_MAX_WORDS = max(len(u.split()) for u in UNITS)


def _latin_unit(scan: str, pos: int, end: int) -> tuple[str, str, int] | None:
    """(surface, canonical unit, end) of the Latin unit at ``pos`` (one space allowed)."""
    m = _UNIT_TOKENS.match(scan, pos, end)
    if m is None:
        return None
    words = [w for w in m.groups()[1:] if w]
    for n in range(min(len(words), _UNIT_MAX_WORDS), 0, -1):
        surface = " ".join(words[:n])
        stripped = surface.rstrip(".")
        for cand in (surface, stripped):
            unit = UNITS.get(cand.lower())
            if unit is None:
                continue
            stop = m.start(2) + len(cand) if n == 1 else m.end(n + 1) - (len(surface) - len(cand))
            if stop < end and scan[stop].isascii() and scan[stop].isalnum():
                continue
            return (m.group(1) + cand, unit, stop)
    return None
_UNIT_CJK = re.compile(r"\s?(?:" + _alternation(list(CJK_UNITS)) + r")")

_CJK_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4,
               "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CJK_SCALE = {"十": 10, "百": 100, "千": 1000}
_CJK_BIG = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}
_CJK_NUMERAL = re.compile(r"[〇零一二两兩三四五六七八九十百千万萬亿億]{1,12}")
_CJK_NOT_AFTER = set("第几幾每万统統唯单單0123456789")
_CJK_NOT_COUNTER = re.compile(r"次性|个别|個別|样|樣|起|直|些|般|下|[点點时時](?![间間])|月")
"""Chinese/Japanese numerals count only when a unit or counter follows ("三次", "三十秒"):
alone they are words (一起, 统一, 万一); 第三 is an ordinal, 一次性 "one-off", 三点 a time."""

_EN_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
             "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90,
             "hundred": 100, "a hundred": 100, "a thousand": 1000, "a dozen": 12,
             "a couple of": 2, "half an": 0.5, "half a": 0.5}
"""English number words, read only when a unit follows ("three times", "two weeks")."""
_EN_WORD_GATE = frozenset(w.split()[-1] if w.startswith(("a ", "half")) else w.split()[0]
                          for w in _EN_WORDS) | {"couple", "half"}
_EN_COUNTED_NOUN = re.compile(
    r"\s+(?:[a-z]+(?<!s)s|children|people|men|women|feet|teeth|mice|geese)\b(?!\s+of\b)"
    r"(?!['\u2019])")
"""A plural noun a number word counts ("two kids", "three cats"; not "two of them"):
the word is then a bare count like a digit."""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_PERCENT_ZH = re.compile(r"百分之(?P<num>" + _NUM + r"|[〇零一二两三四五六七八九十百]{1,6})")
_PORT_BEFORE = re.compile(
    r"(?:\bport\s?(?:number\s?)?(?:is\s|=|:|of\s)?\s?|(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\]):"
    r"|端口号?\s?(?:是|为|為|:)?\s?|ポート(?:番号)?\s?(?:は|:)?\s?)$", re.I)
_PORT_DIGITS = re.compile(r"\d{2,5}(?![\d]|[.,]\d)")
_VERSION_WORDS = frozenset(
    "v version ver ver. python node nodejs django java postgres postgresql pg mysql redis ubuntu "
    "debian react vue angular ruby php go golang rust kotlin swift typescript gcc clang cuda npm "
    "pnpm numpy pandas pydantic sqlite kubernetes k8s helm terraform ios android macos chrome "
    "firefox fastapi flask rails spring next.js tensorflow pytorch torch".split())
"""Words after which a number is a version ("Python 3.11", "v2.3.1")."""
_VERSION_CJK = re.compile(r"(?:版本号?(?:是|为|:)?|バージョン)$")
_VERSION_DIGITS = re.compile(r"\d+(?:\.\d+){0,3}(?![\d.]*\d)")

# Numbers that are times, dates or years, read from their first digit.
_DATE_AT = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"                                  # 2024-05-30
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"                                # 5/30, 5/30/2024
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\b\.?)?"                 # 11:30, 6:40 am
    r"|\d{1,2}(?:\.\d{2})?\s?[ap]\.?m\b\.?"                            # 4pm, 6 a.m.
    r"|\d{1,2}(?:st|nd|rd|th)?\s(?:of\s)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}\b"
    r"|\d{1,2}(?:st|nd|rd|th)\b"                                      # the 12th
    r"|\d{4}年(?:\d{1,2}月)?(?:\d{1,2}[日号號])?"                      # 2024年5月30日
    r"|\d{1,2}月(?:\d{1,2}[日号號])?(?!份?\d)"                         # 3月10日, 3月
    r"|\d{1,3}\s?[点點时時](?!間|间)(?:半|\d{1,2}分)?"                  # 3点, 15時
    r"|(?:19|20)\d{2}\b(?!\s?(?:users|people|persons|requests|rows|items|tokens|words|lines|[a-z]{1,3}\b|%|元|円))",
    re.I,
)
"""The year branch skips "2000 users", "2024 MB" and the like: a year carries no unit."""
_MONTH_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]{0,6}\.?\s$", re.I)
_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s\d{4})?")
_RATE_QUALIFIER = re.compile(r"per second|a second|/s\b|每秒|毎秒|秒間|秒あたり|秒当たり|per minute"
                             r"|a minute|/min\b|每分钟|毎分|分あたり|分当たり|分間に", re.I)
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bisn't|不是|并非|並非|而不是)\s?(?:\$|€|£|¥)?$", re.I)
_NEGATED_AFTER = re.compile(r"\s?(?:じゃなくて|じゃなく|ではなく|ではありません)")
_LOOKBACK = 16  # characters searched for a cue before a number


def parse_cjk_numeral(text: str) -> int | None:
    """Value of a Chinese/Japanese numeral ("三十" -> 30, "两千五百" -> 2500), else None."""
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _CJK_DIGITS:
            if digit is not None:  # "一二" is not a numeral
                return None
            digit = _CJK_DIGITS[ch]
        elif ch in _CJK_SCALE:
            section += (1 if digit is None else digit) * _CJK_SCALE[ch]
            digit = None
        elif ch in _CJK_BIG:
            total += (section + (digit or 0)) * _CJK_BIG[ch]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def find_quantities(scan: str, start: int = 0, end: int | None = None) -> list[Quantity]:
    """All quantities in ``scan[start:end]`` in text order (spans are absolute).

    Dates, clock times and years are skipped; a number refuted in place ("not 30",
    "5人じゃなくて") is skipped too, since the statement asserts the other number.
    """
    end = len(scan) if end is None else end
    found: list[Quantity] = []
    resume = start
    for d in _DIGITS.finditer(scan, start, end):
        p = d.start()
        if p < resume:
            continue
        quantity, resume = _at_digit(scan, p, start, end)
        resume = max(resume, d.end())
        if quantity is not None:
            found.append(quantity)
    if not scan[start:end].isascii():
        found += _cjk_numerals(scan, start, end, found)
    found += _english_numbers(scan, start, end)
    found.sort(key=lambda q: q.start)
    return [q for q in found if not _refuted(scan, q, start, end)]


def _at_digit(scan: str, p: int, start: int, end: int) -> tuple[Quantity | None, int]:
    """The quantity starting at digit ``p`` (or the date it belongs to), and where to resume."""
    back = max(start, p - _LOOKBACK)
    date = _DATE_AT.match(scan, p, end)
    chain = _IDENTIFIER_AT.match(scan, p, end)
    if date and not (chain and chain.end() > date.end()):
        return None, date.end()  # "2024-05-30"; not the year of "2024-117-88"
    if _MONTH_BEFORE.search(scan, back, p):
        day = _DAY.match(scan, p, end)
        return None, day.end() if day else p + 1
    cue = _PORT_BEFORE.search(scan, back, p)
    digits = _PORT_DIGITS.match(scan, p, end) if cue else None
    if cue and digits:
        text = digits.group()
        return Quantity(float(text), text, None, cue.start(), digits.end(), "port"), digits.end()
    cue_start = _version_cue(scan, p, back)
    digits = _VERSION_DIGITS.match(scan, p, end) if cue_start is not None else None
    if cue_start is not None and digits:
        text = digits.group()
        value = float(text) if text.count(".") <= 1 else None
        return Quantity(value, text, None, cue_start, digits.end(), "version"), digits.end()
    signed = _SIGN_BEFORE.search(scan, max(start, p - 2), p) if p > start else None
    if p > start and scan[p - 1] == "+" and (phone := _INTERNATIONAL.match(scan, p, end)):
        return Quantity(None, scan[p - 1:phone.end()], None, p - 1, phone.end(),
                        "identifier"), phone.end()
    if p > 0 and scan[p - 1] in _IDENTIFIER_BEFORE and signed is None:
        k = p
        while k < end and (scan[k].isalnum() or scan[k] in "._-"):
            k += 1
        return None, k
    if chain and not (_UNIT_CJK.match(scan, chain.end(), end)
                      or _latin_unit(scan, chain.end(), end)):
        # "555-123-4567", "1.2.3", "192.168.1.20": one name, not its first number
        a = p
        opened = _PHONE_OPEN.search(scan, back, p) if chain.group("area") else None
        if opened:
            a = opened.start()
        return Quantity(None, scan[a:chain.end()], None, a, chain.end(), "identifier"), \
            chain.end()
    m = _NUMBER_AT.match(scan, p, end)
    cur = _CURRENCY_BEFORE.search(scan, back, p)
    if m is None:
        m = _DECIMAL_COMMA_AT.match(scan, p, end)
        if m is None or scan[p - 1:p] == ",":
            return None, p + 1
        measured = _measure(scan, m, cur, end)
        return (measured, m.end()) if measured.unit else (None, p + 1)
    return _measure(scan, m, cur, end), m.end()


def _version_cue(scan: str, p: int, back: int) -> int | None:
    """Start of a version cue ending right before ``p`` (one space allowed), else None."""
    k = p - 1 if p > back and scan[p - 1] == " " else p
    j = k
    while j > back and (scan[j - 1].isalnum() or scan[j - 1] in ".-"):
        j -= 1
    word = scan[j:k]
    glued = j > 0 and (scan[j - 1].isalnum() or scan[j - 1] == ".")
    if word.lower() in _VERSION_WORDS and not glued:
        return j
    cjk = _VERSION_CJK.search(word)
    return j + cjk.start() if cjk else None


def _measure(scan: str, m: re.Match[str], cur: re.Match[str] | None, end: int) -> Quantity:
    raw = m.group("num")
    value = float(raw.replace(",", ".")) if m.re is _DECIMAL_COMMA_AT else _float(raw)
    mult = (m.group("mult") or "").strip()
    if mult:
        value *= _MULTIPLIERS.get(mult, _MULTIPLIERS.get(mult.lower(), 1.0))
    span_end = m.end()
    text = scan[m.start():span_end].strip()
    sign = cur.group().strip().lower() if cur else ""
    unit: str | None = _CURRENCY_SIGNS.get(sign)
    cjk = _UNIT_CJK.match(scan, span_end, end)
    found = (cjk.group(), CJK_UNITS[cjk.group().strip().lower()], cjk.end()) if cjk else None
    found = found or _latin_unit(scan, span_end, end)
    if found is not None and unit is None:
        written, unit, stop = found
        if unit == "years" and value >= 100:
            unit = None
        elif written == " m":  # "5 m" is metres; "5m" is minutes
            unit = None
        else:
            span_end = stop
    elif found is not None and unit in ("JPY", "CNY") and found[0].strip() in ("円", "元"):
        span_end = found[2]
    if unit == "JPY" and sign == "¥" and scan[m.end():m.end() + 3].strip()[:1] in "元块塊":
        unit = "CNY"  # "¥30元" is yuan
    if unit == "req":
        rate = _RATE_QUALIFIER.search(scan, max(0, m.start() - 12), min(end, span_end + 24))
        if rate is not None:
            unit = "req/min" if "min" in rate.group().lower() or "分" in rate.group() else "req/s"
    start = cur.start() if cur else m.start()
    signed = _SIGN_BEFORE.search(scan, max(0, start - 2), start) if start else None
    if signed is not None:  # "-4 °C", "−4 °C": below zero
        value, text, start = -value, scan[signed.start(1):m.start()] + text, signed.start(1)
    return Quantity(value, text, unit, start, span_end, "measure" if unit else "bare")


def _cjk_numerals(scan: str, start: int, end: int, taken: list[Quantity]) -> list[Quantity]:
    out: list[Quantity] = []
    for m in _CJK_NUMERAL.finditer(scan, start, end):
        if m.start() > 0 and scan[m.start() - 1] in _CJK_NOT_AFTER:
            continue
        if m.group()[0] not in _CJK_DIGITS and m.group()[0] != "十":
            continue
        if _CJK_NOT_COUNTER.match(scan, m.end(), end):
            continue
        unit_m = _UNIT_CJK.match(scan, m.end(), end)
        value = parse_cjk_numeral(m.group())
        if unit_m is None or value is None or unit_m.group() != unit_m.group().strip():
            continue
        if any(q.start < unit_m.end() and m.start() < q.end for q in taken):
            continue
        unit = CJK_UNITS[unit_m.group().lower()]
        out.append(Quantity(float(value), m.group(), unit, m.start(), unit_m.end(), "measure"))
    for m in _PERCENT_ZH.finditer(scan, start, end):
        raw = m.group("num")
        percent: float | None = _float(raw) if raw[0].isdigit() else parse_cjk_numeral(raw)
        if percent is not None:
            out = [q for q in out if not (q.start < m.end() and m.start() < q.end)]
            taken[:] = [q for q in taken if not (q.start < m.end() and m.start() < q.end)]
            out.append(Quantity(float(percent), raw, "%", m.start(), m.end(), "measure"))
    return out


def _english_numbers(scan: str, start: int, end: int) -> list[Quantity]:
    span = scan[start:end]
    low = span.lower() if span.isascii() else span.translate(_ASCII_LOWER)
    if _EN_WORD_GATE.isdisjoint(low.split()):
        return []
    out: list[Quantity] = []
    for word, value in _EN_WORDS.items():
        i = low.find(word + " ")
        while i >= 0:
            a = start + i
            if a == 0 or not scan[a - 1].isalnum():
                found = _latin_unit(scan, a + len(word), end)
                if found is not None and len(found[0].strip()) > 1:
                    out.append(Quantity(float(value), scan[a:a + len(word)], found[1], a,
                                        found[2], "measure"))
                elif found is None and value >= 2 and " " not in word \
                        and _EN_COUNTED_NOUN.match(scan, a + len(word), end):
                    # "two kids": a count, as "2 kids" is (a bare number)
                    out.append(Quantity(float(value), scan[a:a + len(word)], None, a,
                                        a + len(word), "bare"))
            i = low.find(word + " ", i + 1)
    out.sort(key=lambda q: (q.start, -q.end))
    kept: list[Quantity] = []
    for q in out:  # "a hundred" and "hundred" overlap: keep the longer, earlier one
        if not kept or q.start >= kept[-1].end:
            kept.append(q)
    return kept


def _refuted(scan: str, q: Quantity, start: int, end: int) -> bool:
    before = scan[max(start, q.start - 10):q.start]
    after = _NEGATED_AFTER.match(scan, q.end, min(end, q.end + 8))
    return bool(_NEGATED_BEFORE.search(before) or after)


_PER = re.compile(r"\s?(?:あたり|当たり|につき|に|per|/|每|毎)?\s?", re.I)
"""What sits between a unit denominator and the amount: "一人5万円", "1分あたり100"."""


_CHANGE_FROM = re.compile(
    r"(?:\b(?:went|goes|go|gone|chang\w*|increas\w*|decreas\w*|rais\w*|reduc\w*|cut|bump\w*"
    r"|mov\w*|switch\w*|upgrad\w*|downgrad\w*|dropp?\w*|grew|grow\w*|fell|rose|jump\w*"
    r"|lower\w*|updat\w*|migrat\w*|shift\w*|expand\w*|shrunk|shrank|extend\w*|slash\w*"
    r"|doubl\w*|halv\w*|tripl\w*)\b[^.;!?]{0,40}?\bfrom|从|由|從)\s*$", re.I)
"""A change verb and "from" right before the old value ("went from", "bumped … from",
从 …): the clause states a change, and its value is the new one."""
_CHANGE_TO = re.compile(
    r"\s*(?:to|->|→|=>|到|改为|改成|变为|变成|變為|變成|调到|調到|升到|降到)\s*", re.I)
"""Between the old and the new value of a stated change ("from 10% to 15%")."""
_CHANGE_KARA = re.compile(r"\s*から\s*")
"""Japanese: "10%から15%に" (the change's verb follows: 変更, 上げ, 下げ…)."""


def primary_quantity(quantities: list[Quantity], scan: str) -> Quantity | None:
    """The quantity a clause is about: the first with a unit, port or version, else the
    first bare number. A "1 <unit>" directly followed by another quantity is a
    denominator ("一人5万円" is 50 000 yen per person; "1分あたり100リクエスト" is 100
    requests a minute), so it is skipped. A stated change ("the discount went from
    10% to 15%", "从8080改为9090", "10%から15%に変更") is about its new value; a range
    ("we work from 9 to 5") names no change and keeps its first.
    """
    ranked = [q for q in quantities if q.kind != "bare"]
    for i, q in enumerate(ranked):
        nxt = ranked[i + 1] if i + 1 < len(ranked) else None
        if q.value == 1 and nxt is not None and _PER.fullmatch(scan[q.end:nxt.start]):
            continue
        return _new_value(quantities, q, scan)
    return _new_value(quantities, quantities[0], scan) if quantities else None


def _new_value(quantities: list[Quantity], q: Quantity, scan: str) -> Quantity:
    """``q``, or the quantity right after it when the two are the ends of a stated
    change (its new value)."""
    after = [o for o in quantities if o.start >= q.end]
    nxt = min(after, key=lambda o: o.start) if after else None
    return nxt if nxt is not None and _changed_to(scan, q, nxt) else q


def _changed_to(scan: str, old: Quantity, new: Quantity) -> bool:
    """Whether ``old`` and ``new`` are the two ends of a stated change."""
    between = scan[old.end:new.start]
    if _CHANGE_TO.fullmatch(between):
        return _CHANGE_FROM.search(scan[max(0, old.start - 60):old.start]) is not None
    if _CHANGE_KARA.fullmatch(between):
        return scan[new.end:new.end + 6].lstrip().startswith("に")
    return False


_EN_BINDS = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|being|equals?|to|at|of|under|over|below|above|by"
    r"|max(?:imum)?|min(?:imum)?|least|most|than|from|between|and|or|about|around|roughly"
    r"|approximately|approx|exactly|only|just|nearly|almost|has|have|had|keep|set|cap"
    r"|capped|limit|limited|needs?|needed|uses?|used|costs?|takes?|allow|allows|allowed"
    r"|runs?|holds?|gets?|got|with|without|every|each|per|for|in|on|within|after|before"
    r"|until|till|last|first|next|another|those|these|all|its|our|my|your|their|his"
    r"|her|the|a|an)|'s|'re|'m|[:=≈~<>≤≥])\s*$", re.I)
"""What binds a unitless number to its subject when it stands right before it: a
copula or a verb that takes an amount ("the limit is 5", "we have 3", "set X to 4"),
a separator ("retries: 3", "workers=8"), a bound ("at most 5") or a determiner and
preposition of a noun phrase ("in the 3 regions")."""
_EN_LOOSE_AFTER = frozenset(
    "again too also now then please pls plz thanks thx ty today tomorrow yesterday lol "
    "haha ok okay already yet anyway right here there so ?".split())
"""Words after a number that name nothing counted ("error 500 again")."""
_EN_WORD_AFTER = re.compile(r"\s*([A-Za-z][A-Za-z'-]*)")
_CJK_BINDS = re.compile(
    r"(?:是|为|為|到|成|至|有|约|約|大约|大約|最多|至少|不超过|不超過|上限|下限|以内|以內"
    r"|は|が|を|に|で|も|の|約|およそ|最大|最小|[:：=＝≈~〜～<>≤≥])\s*$")
_NAME_BEFORE = re.compile(r"(?<![A-Za-z])([A-Za-z][A-Za-z0-9+#.-]*)\s?$")
"""A product name right before a number is its version ("Python 3.10", "MySQL 8")."""
_CJK_AFTER = re.compile(r"\s*[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def _named(word: str, lead: str) -> bool:
    """Whether ``word`` (right before a number) names a product: mixed case with an
    inner capital ("MySQL", "iOS"), or a capital not at the start of the clause ("we use Python
    3.10"; "Hello 429" starts its clause)."""
    inner = any(ch.isupper() for ch in word[1:]) and any(ch.islower() for ch in word)
    return inner or (word[0].isupper() and bool(lead.strip(" \t,.:;!?-")))


def loose(scan: str, q: Quantity, start: int, end: int, lang: str) -> bool:
    """Whether ``q`` is a number the clause ``scan[start:end]`` does not fix: unitless,
    with no port or version cue, and bound to nothing — neither by a word or separator
    right before it (:data:`_EN_BINDS`: "the limit is 5", "retries: 3", "we have 3")
    nor by a noun right after it that it counts ("3 replicas", "2 kids", "3台").
    "hello 429", "rate limit me 2", "ping 42", "error 500 again" hold loose numbers:
    such a number is kept with its item (searchable) but is not a quantity the user
    set (:func:`memory_core.items.readings.fixed_quantity`)."""
    if q.kind != "bare" or q.value is None:
        return False
    before = scan[max(start, q.start - 24):q.start]
    after = scan[q.end:end]
    name = _NAME_BEFORE.search(before)
    if name and _named(name.group(1), scan[start:q.start - len(name.group(0))]):
        return False
    if lang == "en" or before.isascii():
        if _EN_BINDS.search(before):
            return False
        word = _EN_WORD_AFTER.match(after)
        return word is None or word.group(1).lower() in _EN_LOOSE_AFTER
    if _CJK_BINDS.search(before) or _EN_BINDS.search(before):
        return False
    return _CJK_AFTER.match(after) is None and _EN_WORD_AFTER.match(after) is None
