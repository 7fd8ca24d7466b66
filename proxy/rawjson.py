"""The client's own bytes for the items a rewritten body keeps unchanged.

A Responses or Messages body the memory path rewrites is serialised again, and
re-serialising an item is value-identical but not byte-identical: ``\\u00e9``
becomes ``é``, ``1e400`` (parsed as infinity) becomes ``null``, an integer past
64 bits parsed by orjson becomes a float, spacing changes. Items the proxy does not
understand (``compaction`` items, unknown types, reasoning with
``encrypted_content``, signed ``thinking`` blocks) must reach the upstream exactly
as the client sent them, so :class:`RawItems` records where each element of the
body's conversation array (``input`` or ``messages``), and each block of their
``content`` arrays, lies in the client's bytes, and :meth:`RawItems.dumps` splices
those bytes into the new body for every element that is still the same object,
with the same value, as the client's.

Sans-io and lazy: constructing one costs a walk over the parsed items (an id per
item and block); the bytes are scanned (the stdlib's C scanner, about one
``json.loads`` of the body) on the first :meth:`~RawItems.dumps` only, so a request
that goes as sent pays nothing. Any surprise in the bytes (a body that is not an
object, not UTF-8, a count that differs from the parse) turns splicing off for
that body: it is then serialised from its values, as before.

The proxy's tool loops serialise each round's body through
:func:`proxy.rewrite.dumps_body`, far from where the request was parsed; the
request's :class:`RawItems` reaches them through :data:`CURRENT` (a context
variable the handler sets once its memory path ran; tasks it starts inherit it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import orjson

__all__ = ["CURRENT", "RawItems"]

CURRENT: ContextVar[RawItems | None] = ContextVar("lcm_raw_items", default=None)
"""The current request's :class:`RawItems` (``None``: serialise from values)."""

_WS = re.compile(r"[ \t\n\r]*")
_SCAN = json.JSONDecoder().raw_decode
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

Span = tuple[int, int]


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _array_spans(text: str, pos: int) -> list[Span]:
    """The ``(start, end)`` of each element of the array opening at ``text[pos]``.
    Raises ``ValueError`` when it is not one."""
    if text[pos:pos + 1] != "[":
        raise ValueError("not an array")
    spans: list[Span] = []
    pos = _skip(text, pos + 1)
    if text[pos:pos + 1] == "]":
        return spans
    while True:
        _value, end = _SCAN(text, pos)
        spans.append((pos, end))
        pos = _skip(text, end)
        mark = text[pos:pos + 1]
        if mark == "]":
            return spans
        if mark != ",":
            raise ValueError("malformed array")
        pos = _skip(text, pos + 1)


def _member_span(text: str, pos: int, key: str) -> Span | None:
    """The span of member ``key``'s value in the object opening at ``text[pos]`` (the
    last one when the key repeats, as parsers keep), ``None`` without it. Raises
    ``ValueError`` when it is not an object."""
    if text[pos:pos + 1] != "{":
        raise ValueError("not an object")
    found: Span | None = None
    pos = _skip(text, pos + 1)
    if text[pos:pos + 1] == "}":
        return None
    while True:
        if text[pos:pos + 1] != '"':
            raise ValueError("malformed object")
        name, pos = _scanstring(text, pos + 1)
        pos = _skip(text, pos)
        if text[pos:pos + 1] != ":":
            raise ValueError("malformed object")
        pos = _skip(text, pos + 1)
        _value, end = _SCAN(text, pos)
        if name == key:
            found = (pos, end)
        pos = _skip(text, end)
        mark = text[pos:pos + 1]
        if mark == "}":
            return found
        if mark != ",":
            raise ValueError("malformed object")
        pos = _skip(text, pos + 1)


def _same(raw: bytes, value: Any) -> bool:
    """True when ``raw`` parses to ``value`` (orjson, or the stdlib for what orjson
    reads differently: integers past 64 bits, ``1e400``)."""
    try:
        if orjson.loads(raw) == value:
            return True
    except orjson.JSONDecodeError:
        pass
    try:
        return bool(json.loads(raw) == value)
    except (ValueError, RecursionError):
        return False


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, ensure_ascii=True).encode("ascii")


class RawItems:
    """Where the elements of ``body[key]`` (and the blocks of their ``content``) lie
    in ``raw``, the bytes ``body`` was parsed from (see module docstring).

    ``raw``: the request body as received; ``body``: its parse; ``key``: the
    conversation array (``"input"``, ``"messages"``). Holds the parsed items (so
    their ids stay theirs) and the bytes until dropped.
    """

    def __init__(self, raw: bytes, body: Any, key: str) -> None:
        self.raw, self.key = raw, key
        items = body.get(key) if isinstance(body, dict) else None
        self._items: list[Any] = list(items) if isinstance(items, list) else []
        self._where: dict[int, tuple[int, int]] = {}
        """id of an element → (index, -1); of a content block → (index, block index)."""
        for i, item in enumerate(self._items):
            if not isinstance(item, dict | list):
                continue
            self._where[id(item)] = (i, -1)
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, list):
                for j, part in enumerate(content):
                    if isinstance(part, dict | list):
                        self._where.setdefault(id(part), (i, j))
        self._text: str | None = None
        self._spans: list[Span] | None = None
        self._blocks: dict[int, list[Span] | None] = {}
        self._broken = not self._where

    def _scan(self) -> bool:
        """Scan the body's bytes once; False when splicing is off for it."""
        if self._spans is not None:
            return True
        if self._broken:
            return False
        try:
            text = self.raw.decode("utf-8")
            at = _member_span(text, _skip(text, 0), self.key)
            if at is None:
                raise ValueError("no conversation array")
            spans = _array_spans(text, at[0])
            if len(spans) != len(self._items):
                raise ValueError("the bytes and the parse disagree")
        except (ValueError, IndexError, RecursionError, UnicodeDecodeError):
            self._broken = True
            return False
        self._text, self._spans = text, spans
        return True

    def _block_spans(self, index: int) -> list[Span] | None:
        if index not in self._blocks:
            assert self._text is not None and self._spans is not None
            try:
                at = _member_span(self._text, self._spans[index][0], "content")
                self._blocks[index] = _array_spans(self._text, at[0]) if at else None
            except (ValueError, IndexError, RecursionError):
                self._blocks[index] = None
        return self._blocks[index]

    def original(self, obj: Any) -> bytes | None:
        """The client's bytes of ``obj`` when it is one of the body's elements or
        blocks, unchanged in value; else ``None``."""
        where = self._where.get(id(obj))
        if where is None or not self._scan():
            return None
        assert self._text is not None and self._spans is not None
        index, block = where
        if block < 0:
            if self._items[index] is not obj:
                return None
            span: Span = self._spans[index]
        else:
            content = self._items[index].get("content")
            spans = self._block_spans(index)
            if (not isinstance(content, list) or spans is None or len(spans) != len(content)
                    or content[block] is not obj):
                return None
            span = spans[block]
        raw = self._text[span[0]:span[1]].encode("utf-8")
        return raw if _same(raw, obj) else None

    def _element(self, item: Any) -> tuple[bytes, bool]:
        """``(bytes of item, whether any of them are the client's)``."""
        found = self.original(item)
        if found is not None:
            return found, True
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, list) or not all(isinstance(k, str) for k in item):
            return _dumps(item), False
        spliced = False
        parts: list[bytes] = []
        for part in content:
            kept = self.original(part)
            spliced = spliced or kept is not None
            parts.append(kept if kept is not None else _dumps(part))
        if not spliced:
            return _dumps(item), False
        members = [_dumps(k) + b":" + (b"[" + b",".join(parts) + b"]" if k == "content"
                                       else _dumps(v)) for k, v in item.items()]
        return b"{" + b",".join(members) + b"}", True

    def dumps(self, body: dict[str, Any]) -> bytes | None:
        """``body`` serialised with the client's bytes for every element (and block)
        of ``body[key]`` still as the client sent it; ``None`` when none is (the
        caller serialises from values)."""
        items = body.get(self.key)
        if not isinstance(items, list) or self._broken or not all(
                isinstance(k, str) for k in body):
            return None
        out: list[bytes] = []
        spliced = False
        for item in items:
            data, kept = self._element(item)
            out.append(data)
            spliced = spliced or kept
        if not spliced:
            return None
        array = b"[" + b",".join(out) + b"]"
        return b"{" + b",".join(_dumps(k) + b":" + (array if k == self.key else _dumps(v))
                                for k, v in body.items()) + b"}"
