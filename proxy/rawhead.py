"""A relayed message's head (status line and headers) as the other side sent it.

Bytes: aiohttp reads a head as UTF-8 with ``surrogateescape`` (a Latin-1 ``é``,
byte 0xE9, becomes ``"\\udce9"``), but writes one as UTF-8 with surrogates dropped
(its C writer; its Python one raises), so ``X-Title: caf\\xe9`` left as ``caf``, in
both directions. RFC 9110 §5.5 lets a value carry such bytes (``obs-text``) and asks
a recipient to treat them as opaque. :func:`install` replaces aiohttp's head writer,
process-wide, by one that writes escaped bytes back as they were read; a head with
none (nearly all) still goes through aiohttp's own writer. aiohttp is pinned: the
writer's name is private (``aiohttp.http_writer._serialize_headers``, looked up at
each write) and ``tests/test_header_bytes.py`` pins the behaviour.

Nothing added: aiohttp gives an answer without ``Content-Type`` the type
``application/octet-stream``, and one without ``Server`` its own banner; and it
sends a 205 (which has no body, RFC 9110 §15.3.6) chunked. :class:`RelayedResponse`
and :class:`RelayedStreamResponse` show the client an upstream's answer without
them: a 205 goes with ``Content-Length: 0``. ``Date`` is still added where the
upstream sent none (RFC 9110 §6.6.1 asks a proxy with a clock to).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp.http_writer as _http_writer
from aiohttp import hdrs, web

_FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""What aiohttp's own writer refuses in a head (RFC 9110 §5.5, RFC 9112 §4)."""

_Serializer = Callable[[str, Any], bytes]
_AIOHTTP_WRITER: _Serializer = _http_writer._serialize_headers


def _has_escapes(text: str) -> bool:
    """True when ``text`` holds a byte its reader escaped (not writable as UTF-8)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _is_ascii(status_line: str, headers: Mapping[str, str]) -> bool:
    """True when the whole head is ASCII (nearly every head): one pass in C, where
    :func:`_has_escapes` per name and value costs two calls a header."""
    try:
        return "".join((status_line, *headers.keys(), *headers.values())).isascii()
    except TypeError:  # a value that is not a str: asked one by one
        return False


def serialize_head(status_line: str, headers: Mapping[str, str]) -> bytes:
    """The bytes of a head: ``status_line``, each header, the blank line.

    Escaped bytes (``surrogateescape``) are written as the bytes they were read from;
    a head without any is aiohttp's own writer's. Raises ``ValueError`` for a control
    character (header injection), as aiohttp's writer does.
    """
    if _is_ascii(status_line, headers) or (not _has_escapes(status_line) and not any(
            _has_escapes(str(k)) or _has_escapes(str(v)) for k, v in headers.items())):
        return _AIOHTTP_WRITER(status_line, headers)
    lines = [status_line, *(f"{k}: {v}" for k, v in headers.items())]
    for line in lines:
        if _FORBIDDEN.search(line) is not None:
            raise ValueError("Forbidden control character detected in headers. "
                             "Potential header injection attack.")
    text = "\r\n".join(lines) + "\r\n\r\n"
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no reader made: aiohttp's way (dropped)
        return _AIOHTTP_WRITER(status_line, headers)


def install() -> None:
    """Make aiohttp write escaped head bytes as read (idempotent, process-wide)."""
    _http_writer._serialize_headers = serialize_head


class _AsSent(web.StreamResponse):
    """Prepares the head it was given: no ``Content-Type`` or ``Server`` of
    aiohttp's, and a 205's empty body declared by length, not chunked."""

    async def _prepare_headers(self) -> None:
        if self.status == 205:
            self.headers.popall(hdrs.TRANSFER_ENCODING, None)
            self.headers[hdrs.CONTENT_LENGTH] = "0"
        added = [name for name in (hdrs.CONTENT_TYPE, hdrs.SERVER) if name not in self.headers]
        await super()._prepare_headers()
        for name in added:
            self.headers.popall(name, None)


class RelayedStreamResponse(_AsSent):
    """A ``web.StreamResponse`` carrying an upstream's answer (see module docstring)."""


class RelayedResponse(_AsSent, web.Response):
    """A ``web.Response`` carrying an upstream's answer (see module docstring)."""
