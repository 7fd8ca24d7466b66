"""Text that PostgreSQL cannot hold, stored losslessly: NUL characters.

PostgreSQL's ``text`` refuses the character U+0000, which SQLite stores (a message
may carry one: tool output, a pasted binary, hostile input), and its ``json``
operators refuse the JSON escape ``\\u0000`` when they return text (``data::json
->> 'speaker'``, in an index too). So every string goes to the server through
:func:`encode` and every ``text`` value comes back through :func:`decode`, on every
connection of the backend (:func:`register`): the rest of the store never sees the
difference and a message round-trips character for character.

The encoding escapes with ``ESC`` (U+FFFF, a Unicode noncharacter, so that ordinary
text never pays for it), in two layers:

- characters: ``ESC`` becomes ``ESC 1`` and NUL ``ESC 0``;
- JSON escapes (a backslash-u not itself escaped by a backslash before it):
  ``\\uffff`` becomes ``\\uffff1`` and ``\\u0000`` becomes ``\\uffff0``. Stored JSON
  stays valid, and a field PostgreSQL extracts from it (``->>``: ``ESC 0``, a
  ``ESC 1``) decodes to what SQLite's ``json_extract`` returns (NUL, ``ESC``).

Every ``ESC`` (every unescaped ``\\uffff``) of an encoded string starts one of these
pairs, so decoding is unambiguous, and a string with none of them is stored as it
is. The encoding is injective, so equality and ``IN`` on encoded columns mean what
they meant; the order of strings holding these differs from SQLite's, and SQL that
looks inside a string (``strpos``, ``LIKE``, ``substr``, ``length``) sees the pairs:
a search could match inside a pair, a cut split one, a length count the escapes. So
such SQL decides only for values stored as they are (:func:`plain_sql`), with the
raw search string (:class:`Verbatim`), and hands the others to Python, which reads
them decoded (:func:`contains`; the backend's ``doc_rows``, ``items_page``,
``candidate_facts`` and subject lookups; an agent memory's length is checked before
its write, and its CHECK counts with ``lcm_text_length``, migration 4). (A JSON
field extracted from a document whose producer wrote an upper-case ``\\uFFFF``
escape followed by ``0``/``1`` would decode as a pair; the store's own JSON comes
from ``orjson``, which writes U+FFFF unescaped.)
"""

from __future__ import annotations

import re
from typing import Any

from psycopg.types.string import StrBinaryDumper, StrDumperUnknown, TextBinaryLoader, TextLoader

ESC = "\uffff"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_CHAR_PAIR = re.compile(ESC + "[01]")
_CHAR_DECODED = {ESC + "0": "\x00", ESC + "1": ESC}
_JSON_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u(0000|ffff)")
_JSON_PAIR = re.compile(r"(?<!\\)((?:\\\\)*)\\uffff([01])")


def _json_encoded(m: re.Match[str]) -> str:
    return m.group(1) + ("\\uffff0" if m.group(2) == "0000" else "\\uffff1")


def _json_decoded(m: re.Match[str]) -> str:
    return m.group(1) + ("\\u0000" if m.group(2) == "0" else "\\uffff")


def encode(text: str) -> str:
    """``text`` as stored in PostgreSQL (itself when it holds no NUL, no ``ESC`` and
    no JSON escape ``\\u0000`` or ``\\uffff``)."""
    if ESC in text:
        text = text.replace(ESC, ESC + "1")
    if "\x00" in text:
        text = text.replace("\x00", ESC + "0")
    if "\\u0000" in text or "\\uffff" in text:
        text = _JSON_ESCAPE.sub(_json_encoded, text)
    return text


def decode(stored: str) -> str:
    """The string :func:`encode` turned into ``stored``."""
    if "\\uffff" in stored:
        stored = _JSON_PAIR.sub(_json_decoded, stored)
    if ESC in stored:
        stored = _CHAR_PAIR.sub(lambda m: _CHAR_DECODED[m.group(0)], stored)
    return stored


def plain_sql(expr: str) -> str:
    """SQL: whether the stored text ``expr`` (not ``NULL``) is stored as it is (holds
    no ``ESC`` and no ``\\uffff``, so it decodes to itself): SQL that looks inside it
    sees its real characters."""
    return f"(strpos({expr}, chr(65535)) = 0 AND strpos({expr}, '\\uffff') = 0)"


def fold_ascii(text: str) -> str:
    """``text`` with ASCII capitals folded to small letters (SQLite's ``lower``)."""
    return text.translate(_ASCII_LOWER)


def contains(text: str | None, needle: str) -> bool:
    """Whether ``text`` contains ``needle``, ASCII letters folded on both sides (what
    the stores' substring searches mean, decided here on decoded text)."""
    return text is not None and fold_ascii(needle) in fold_ascii(text)


def sendable(needle: str) -> bool:
    """Whether ``needle`` can be sent as :class:`Verbatim`: it holds no NUL and no
    ``ESC`` (neither is in any text stored as it is, so a search for it matches
    only encoded values)."""
    return "\x00" not in needle and ESC not in needle


class Verbatim(str):
    """A string sent as it is, not encoded: a search string compared with values
    :func:`plain_sql` says are stored as they are. Never holds NUL (see
    :func:`sendable`)."""

    __slots__ = ()


class _Dumper(StrDumperUnknown):
    def dump(self, obj: str) -> Any:
        return super().dump(encode(obj))


class _BinaryDumper(StrBinaryDumper):
    def dump(self, obj: str) -> Any:
        return super().dump(encode(obj))


class _Loader(TextLoader):
    def load(self, data: Any) -> Any:
        text = str(data, self._encoding or "utf-8")
        return decode(text) if ESC in text or "\\uffff" in text else text


class _BinaryLoader(_Loader):
    format = TextBinaryLoader.format


def register(conn: Any) -> None:
    """Make ``conn`` (a ``psycopg`` connection) encode every string it sends and
    decode every ``text``/``varchar`` value it reads (the pool's ``configure``)."""
    adapters = conn.adapters
    adapters.register_dumper(str, _BinaryDumper)
    adapters.register_dumper(str, _Dumper)  # the last one is the default: untyped text
    adapters.register_dumper(Verbatim, StrBinaryDumper)
    adapters.register_dumper(Verbatim, StrDumperUnknown)
    for name in ("text", "varchar"):
        adapters.register_loader(name, _Loader)
        adapters.register_loader(name, _BinaryLoader)
