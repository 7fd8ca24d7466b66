"""Identity and payment numbers: masked in what memory stores and shows back.

A memory item is repeated into every later prompt of its user (the block), answered
by memory tools and listed by the inspector; the evidence it comes from is copied
into the full-text index, summaries and exports. A US Social Security number, a
payment card number or an IBAN said once in chat should not travel that far, so
capture masks them where it masks secrets (``capture.redact_identity_numbers``, on
by default; see docs/configuration.md for where and why). The upstream still
receives every request unchanged.

Pure functions, no I/O. Each number is replaced by ``[REDACTED:<label>]`` only when
its check passes, so order codes, phone numbers, dates, versions, UUIDs, hashes,
timestamps and amounts stay:

- ``ssn``: ``###-##-####`` with a valid area (not 000, 666 or 900-999), group (not
  00) and serial (not 0000), not inside a longer code (``ORD-123-45-6789`` stays);
  nine digits without dashes (or with spaces) only right after ``SSN`` or ``social
  security (number)`` (the words are kept: ``SSN: [REDACTED:ssn]``)
- ``card_number``: 13-19 digits, written whole or as a group of four then groups
  of 3-6 separated by one space or dash, with an issuer prefix and a length its
  cards have (Visa 4: 13/16/19, Mastercard 51-55 and 2221-2720: 16, Amex 34/37: 15,
  Discover 6011/644-649/65, JCB 3528-3589, UnionPay 62: 16-19, Diners
  300-305/36/38/39: 14-19, Maestro 50/56-58/63/67: 13-19), passing the Luhn check
- ``iban``: two capital letters of a country that issues IBANs, two check digits,
  then that country's length of capitals and digits (spaces allowed between groups
  of four), passing the ISO 13616 mod-97 check

Matching is one regex scan (bounded repetitions, linear in the text's length), run
only on a text with three digits in a row; a text without any such number comes
back as the same object.
"""

from __future__ import annotations

import re

__all__ = ["CANDIDATE_BYTES", "may_contain_identity_number", "redact_identity_numbers"]

_KEYWORD = r"(?i:\bssn\b|social[ -]security(?:[ -](?:number|no\b\.?|#))?)"
_SOURCE = (
    # a number stated after its keyword: group ``kw`` (kept) then ``ssn9``
    r"(?P<kw>" + _KEYWORD + r"[^0-9\n]{0,24}?)"
    r"(?P<ssn9>[0-9]{3}[ -]?[0-9]{2}[ -]?[0-9]{4})(?![0-9])"
    # ###-##-#### not inside a longer code
    r"|(?<![A-Za-z0-9_-])(?P<ssn>[0-9]{3}-[0-9]{2}-[0-9]{4})(?![A-Za-z0-9_]|-[0-9A-Za-z])"
    # a card number: whole, or groups of 3-6 digits with one separator
    r"|(?<![A-Za-z0-9_.,/+-])(?P<card>[0-9]{13,19}|[0-9]{4}(?:[ -][0-9]{3,6}){2,4})"
    r"(?![A-Za-z0-9_/]|[.,-][0-9])"
    # an IBAN: country, check digits, then groups (length checked per country)
    r"|(?<![A-Za-z0-9])(?P<iban>[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)"
)
_CANDIDATES = re.compile(_SOURCE)
_THREE_DIGITS = re.compile(r"[0-9]{3}")
"""Every number above holds three digits in a row (an IBAN: in its account part, as
every country's format but a few all-letter accounts allowed in QA, LC, … does); a
text without them (most chat) is passed over with this one fast scan."""
CANDIDATE_BYTES = re.compile(_SOURCE.encode())
"""The same scan over UTF-8 (or JSON) bytes: no match guarantees
:func:`redact_identity_numbers` changes nothing in any string of that text (JSON
escapes none of the characters the patterns use)."""

_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
"""Characters of each country's IBAN (ISO 13616 registry)."""

_V, _MC, _AX, _LONG = (13, 16, 19), (16,), (15,), tuple(range(16, 20))
_CARD_PREFIXES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("4", "4", _V), ("51", "55", _MC), ("2221", "2720", _MC), ("34", "34", _AX),
    ("37", "37", _AX), ("6011", "6011", _LONG), ("644", "649", _LONG), ("65", "65", _LONG),
    ("300", "305", tuple(range(14, 20))), ("36", "36", tuple(range(14, 20))),
    ("38", "39", _LONG), ("3528", "3589", _LONG), ("62", "62", _LONG),
    ("50", "50", tuple(range(13, 20))), ("56", "58", tuple(range(13, 20))),
    ("63", "63", tuple(range(13, 20))), ("67", "67", tuple(range(13, 20))),
)
"""Issuer prefix ranges (inclusive, compared on the same number of leading digits)
and the lengths their cards have."""


def may_contain_identity_number(text: str) -> bool:
    """Cheap pre-test: ``False`` guarantees :func:`redact_identity_numbers` would
    change nothing (also for every string of a JSON text ``text``)."""
    return _THREE_DIGITS.search(text) is not None and _CANDIDATES.search(text) is not None


def redact_identity_numbers(text: str) -> str:
    """Return ``text`` with every checked SSN, card number and IBAN replaced by
    ``[REDACTED:<label>]`` (the rest, keywords included, kept). Never raises."""
    if not text or _THREE_DIGITS.search(text) is None:
        return text
    out: list[str] = []
    done = 0
    for match in _CANDIDATES.finditer(text):
        kind = match.lastgroup
        if kind == "ssn9":
            start, end, label = match.start("ssn9"), match.end(), "ssn"
            ok = _ssn_ok(match.group("ssn9"))
        elif kind == "ssn":
            start, end, label = match.start(), match.end(), "ssn"
            ok = _ssn_ok(match.group(0))
        elif kind == "card":
            start, end, label = match.start(), match.end(), "card_number"
            ok = _card_ok(match.group(0))
        else:
            start, label = match.start(), "iban"
            end = _iban_end(text, match.start(), match.group(0))
            ok = end > 0
        if not ok:
            continue
        out.append(text[done:start])
        out.append(f"[REDACTED:{label}]")
        done = end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _ssn_ok(number: str) -> bool:
    digits = number.replace("-", "").replace(" ", "")
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return (area not in ("000", "666") and area[0] != "9" and group != "00"
            and serial != "0000")


def _card_ok(number: str) -> bool:
    digits = number.replace(" ", "").replace("-", "")
    if not 13 <= len(digits) <= 19:
        return False
    if not any(lo <= digits[:len(lo)] <= hi and len(digits) in lengths
               for lo, hi, lengths in _CARD_PREFIXES):
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _iban_end(text: str, start: int, candidate: str) -> int:
    """Where the IBAN starting at ``start`` ends in ``text``, or 0 when the
    candidate (which may run on into a following word) holds none."""
    want = _IBAN_LENGTHS.get(candidate[:2])
    if want is None:
        return 0
    compact: list[str] = []
    end = 0
    for i, ch in enumerate(candidate):
        if ch != " ":
            compact.append(ch)
            if len(compact) == want:
                end = i + 1
                break
    if not end:
        return 0
    after = start + end
    if after < len(text) and text[after].isalnum():
        return 0  # the number runs on: not this country's length
    code = "".join(compact)
    moved = code[4:] + code[:4]
    try:
        value = int("".join(str(int(c, 36)) for c in moved))
    except ValueError:
        return 0
    return after if value % 97 == 1 else 0
