"""Value shapes: an email address, a URL, a phone number, a date.

A correction that names no attribute ("Typo: it's jon@example.com.", "Sorry, it
should be 555-1243.", "Correction: it's May 5, not May 3.") revises the value of the
same shape that the user stated last (:func:`memory_core.items.supersession.correction_target`):
the shape stands for the attribute the pronoun points at. :func:`pronoun_value` finds
such a correction's value in an item's text, :func:`values` the shaped values of any
text. English forms; the shapes themselves are script-neutral. Pure, no I/O.
"""

from __future__ import annotations

import re
from typing import Final

_MONTH: Final = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
                 r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
SHAPES: Final = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.I)),
    ("url", re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]", re.I)),
    ("date", re.compile(
        rf"\b(?:\d{{4}}-\d\d-\d\d|\d{{1,2}}[/.]\d{{1,2}}[/.](?:\d{{4}}|\d\d)"
        rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
        rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?)\b", re.I)),
    ("phone", re.compile(r"(?<![\w.-])\+?\(?\d[\d\s().-]{5,18}\d(?![\w-])")),
)
"""Each shape's name and pattern, tried in this order (an email before a URL, a date
before a phone number: "2024-05-03" is a date)."""
_PHONE_DIGITS: Final = 7
"""Fewest digits of a phone number ("555-1234"); fewer is another number."""

_PRONOUN_VALUE: Final = re.compile(
    r"(?:^|[:,;\u2013\u2014]\s*|\s-\s*)(?:it'?s|it\s+is|it\s+should\s+be|that'?s|that\s+is"
    r"|that\s+should\s+be|should\s+be|i\s+meant|meant)\s+(?:actually\s+)?"
    r"(?P<v>[^,;()]+?)(?:\s*(?:,\s*|\(\s*)?not\s+[^,;()]+?\)?)?[\s.!]*$", re.I)
"""A correction whose subject is a pronoun, then one value ("it's jon@example.com",
"it should be 555-1243 (not 555-1234)"), at the end of its sentence."""


def values(text: str) -> list[tuple[str, str]]:
    """``(shape, value)`` of each shaped value in ``text``, in text order; the value
    as written, each span read by the first shape that takes it."""
    found: list[tuple[int, int, str, str]] = []
    for name, pattern in SHAPES:
        for m in pattern.finditer(text):
            if name == "phone" and sum(ch.isdigit() for ch in m.group()) < _PHONE_DIGITS:
                continue
            if any(m.start() < e and s < m.end() for s, e, _, _ in found):
                continue
            found.append((m.start(), m.end(), name, m.group()))
    return [(name, v) for _, _, name, v in sorted(found)]


_ADDRESS: Final = re.compile(
    SHAPES[0][1].pattern + "|" + SHAPES[1][1].pattern
    + r"|(?<![\w@])@\w[\w.-]*\w|(?<![\w/.~])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)+/?",
    re.I)
"""An email address, a URL, an @handle or a path of two or more parts."""


def without_addresses(text: str) -> str:
    """``text`` with every email address, URL, @handle and path cut out: what is
    left says whether the text states a number ("jon1984@x.com" holds none).

    Every match holds an ``@`` (an address, a handle), two ``/`` (a URL's scheme, a
    path of two parts) or ``www.`` in any case (a URL without a scheme), so a text
    with none of them ("19013 req/s.") is returned as it is without the search, which
    cost about 0.1 ms on a 250-character turn."""
    if "@" in text or text.count("/") >= 2 or "www." in text.lower():
        return _ADDRESS.sub(" ", text)
    return text


def pronoun_value(text: str) -> tuple[str, str] | None:
    """``(shape, value)`` when ``text`` ends in a pronoun's value of one shape ("Typo:
    it's jon@example.com."), else ``None``."""
    m = _PRONOUN_VALUE.search(text)
    if m is None:
        return None
    v = m.group("v").strip()
    found = values(v)
    if len(found) != 1 or found[0][1] != v.rstrip(".!"):
        return None
    return found[0]


def same(a: str, b: str) -> bool:
    """Whether two values of one shape are one value (case and separators aside)."""
    return re.sub(r"[\W_]+", "", a.casefold()) == re.sub(r"[\W_]+", "", b.casefold())


_PLACEHOLDER_VALUE: Final = re.compile(
    r"(?:\b(?:is|are|am|in|at|from|for|to|on)|:|=)\s+"
    r"(?:<(?!(?:div|span|p|a|b|i|em|strong|table|tr|td|th|ul|ol|li|img|br|hr|body|head|html"
    r"|script|style|form|input|button|section|nav|header|footer|main|code|pre|h[1-6])>)"
    r"[A-Za-z][\w /.|-]{0,38}>|\{\{?\s*[A-Za-z_][\w .|-]{0,38}\}?\}"
    r"|\[(?i:your|the|my|insert|enter|add|put)\s[^\[\]]{1,38}\]|(?i:xxx+))"
    r"\s*[.!]?$")
"""A template's unfilled slot as the clause's value: "My name is <Username>", "I live
in [Your City].", "My email is {email}", "The API key is {{ api_key }}", "… is XXX". An HTML tag
("My favourite tag is <div>") and an open value ("The deadline is TBD.") are values."""


def placeholder_value(text: str) -> bool:
    """Whether a statement ``text`` ends in an unfilled template slot instead of a value
    (:data:`_PLACEHOLDER_VALUE`): a pasted template or form, not something the user
    said of themselves; a slot inside code or a quote is masked before this is read."""
    return _PLACEHOLDER_VALUE.search(text) is not None
