"""Parse the ids and refs an operator or a user types (``7``, ``item:7``, ``msg:12``).

Ids are SQLite ``INTEGER PRIMARY KEY`` values, so they fit 1..2**63-1. A larger
number is not merely unknown: handed to SQLite it raises ``OverflowError`` before
any lookup, which surfaced as a 500 or a traceback. Every surface that takes an id
from outside (admin API, in-chat ``/memory``, CLI, memory tools) parses it here
first, so all of them answer "no such id" the same way instead of crashing.
"""

from __future__ import annotations

import re

from memory_core.errors import InvalidIdError

MAX_ID = (1 << 63) - 1
"""The largest SQLite rowid."""

_DIGITS = re.compile(r"[0-9]+")
_KINDS = {"item": "item", "i": "item", "msg": "msg", "m": "msg", "message": "msg"}


def parse_id(value: object, *, what: str = "id") -> int:
    """Return ``value`` (an ``int`` or ASCII digits) as an id in 1..:data:`MAX_ID`.

    Raises :class:`~memory_core.errors.InvalidIdError` (a ``ValueError``) for
    anything else: signs, non-ASCII digits, bools, zero, or a number too large for
    SQLite. ``what`` names the id in the message (``"item id"``).
    """
    if isinstance(value, bool):
        raise InvalidIdError(f"{what} must be a positive integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        raise InvalidIdError(f"{what} must be a positive integer, not {value!r}")
    if not 1 <= number <= MAX_ID:
        raise InvalidIdError(f"{what} out of range: {value!r} (ids are 1..{MAX_ID})")
    return number


def parse_ref(text: str, *, default_kind: str = "msg") -> tuple[str, int]:
    """Split ``item:7`` / ``msg:12`` / ``12`` into ``(kind, id)``; kind is ``item`` or
    ``msg`` (``i``, ``m``, ``message`` accepted). A bare number takes ``default_kind``.

    Raises :class:`~memory_core.errors.InvalidIdError` for an unknown kind or a bad id.
    """
    head, sep, num = text.strip().partition(":")
    if not sep:
        return _KINDS.get(default_kind, default_kind), parse_id(head)
    kind = _KINDS.get(head.strip().lower())
    if kind is None:
        raise InvalidIdError(f"unknown reference kind {head!r} (use item:N or msg:N)")
    return kind, parse_id(num, what=f"{kind} id")


def parse_item_id(text: str) -> int:
    """Parse an item id as search and inspect print it (``item:7``) or bare (``7``)."""
    kind, ident = parse_ref(text, default_kind="item")
    if kind != "item":
        raise InvalidIdError(f"not a memory item: {text!r} (use item:N or N)")
    return ident
