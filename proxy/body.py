"""Reading a client's request body: the one place that does it, so that every route
gets the same size limit and the same slow-body deadline.

**Size.** A body is read in the stream's own small steps (aiohttp decodes a
compressed body at most 64 KiB ahead of the reader and pauses the socket beyond
128 KiB), counting decoded bytes: past ``proxy.max_body_bytes`` the read stops with
aiohttp's 413. aiohttp's ``request.read()`` would first raise the stream's read size to
``max_body_bytes``, so that one over-limit compressed body held about four times the
limit (a decoded step of the limit's size, the buffer of twice that, the body
gathered so far); here it holds the limit plus about 200 KiB. A declared
``Content-Length`` over the limit is refused before a byte is read.

**Time.** A body must keep arriving: it gets ``proxy.body_timeout_seconds`` from its
first read, plus one second for each ``proxy.body_min_bytes_per_second`` bytes received
(the shape of Apache's ``mod_reqtimeout``). A client that sends a byte a minute is
cut (:class:`~proxy.errors.RequestTimeoutError`, 408) after about the timeout; an
agent sending 10 MB over a 100 kB/s link (100 s) is never near its deadline (about
10,000 s with the defaults). aiohttp's server has no setting for this; the time to
send a request's headers is bounded by its ``keepalive_timeout``
(``proxy.keepalive_timeout_seconds``), which closes a connection that has not
completed a request in that time.

Pass-through routes stream a body to the upstream (:class:`BodyStream`): the deadline
applies; the size limit applies to a body aiohttp decodes (``Content-Encoding``),
whose decoded size the client does not declare (a 30 KiB zstd body can decode to
gigabytes); a plain body is the upstream's to limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import parse_qsl

from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from proxy.appkeys import SETTINGS
from proxy.errors import RequestTimeoutError
from proxy.headers import is_body_decoded


@dataclass(frozen=True)
class BodyDeadline:
    """When a body being read must have arrived (sans-io: times in the loop's clock).

    ``timeout`` seconds after ``start``, plus one second per ``min_rate`` bytes
    received; ``timeout`` 0 means no deadline.
    """

    start: float
    timeout: float
    min_rate: int

    def at(self, received: int) -> float | None:
        """The deadline once ``received`` bytes have arrived; None when there is none."""
        if self.timeout <= 0:
            return None
        return self.start + self.timeout + received / self.min_rate


def body_deadline(request: web.Request) -> BodyDeadline:
    """The deadline of ``request``'s body, starting now (``proxy.body_*`` settings)."""
    p = request.app[SETTINGS].proxy
    return BodyDeadline(asyncio.get_running_loop().time(), p.body_timeout_seconds,
                        p.body_min_bytes_per_second)


class BodyStream:
    """``request``'s body as it arrives, under its deadline and, with ``limit``, a
    limit on its decoded bytes.

    Iterating raises :class:`~proxy.errors.RequestTimeoutError` (408) when the body is
    late, ``web.HTTPRequestEntityTooLarge`` (413) past ``limit`` and
    ``web.RequestPayloadError`` for a body aiohttp cannot read (a bad gzip stream);
    the error is also kept in :attr:`error`, for a caller whose reader (aiohttp's
    client, sending it upstream) swallows it.
    """

    def __init__(self, request: web.Request, limit: int | None) -> None:
        self._request = request
        self._limit = limit
        self.received = 0
        self.error: Exception | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        payload = self._request.content
        deadline = body_deadline(self._request)
        try:
            while True:
                when = deadline.at(self.received)
                try:
                    async with asyncio.timeout_at(when):
                        chunk = await payload.readany()
                except TimeoutError:
                    raise RequestTimeoutError(
                        f"the request body arrived too slowly ({self.received} bytes in"
                        f" {asyncio.get_running_loop().time() - deadline.start:.0f} s;"
                        " proxy.body_timeout_seconds, proxy.body_min_bytes_per_second)"
                    ) from None
                if not chunk:
                    return
                self.received += len(chunk)
                if self._limit is not None and self.received > self._limit:
                    raise web.HTTPRequestEntityTooLarge(self._limit, self.received)
                yield chunk
        except (RequestTimeoutError, web.HTTPRequestEntityTooLarge,
                web.RequestPayloadError) as exc:
            self.error = exc
            raise


def passthrough_body(request: web.Request) -> BodyStream:
    """The body of a pass-through request, to stream upstream: limited to
    ``proxy.max_body_bytes`` when aiohttp decodes it (see module docstring)."""
    limit = (request.app[SETTINGS].proxy.max_body_bytes
             if is_body_decoded(request.headers) else None)
    return BodyStream(request, limit)


async def read_body(request: web.Request) -> bytes:
    """The whole body of ``request`` (decoded), at most ``proxy.max_body_bytes``.

    Raises ``web.HTTPRequestEntityTooLarge`` (413; the middleware answers it in the
    API's shape and closes a compressed body's connection),
    :class:`~proxy.errors.RequestTimeoutError` (408) for a late body, and
    ``web.RequestPayloadError`` for one aiohttp cannot decode. Read once per request.
    """
    limit = request.app[SETTINGS].proxy.max_body_bytes
    declared = request.content_length
    if declared is not None and declared > limit and not is_body_decoded(request.headers):
        raise web.HTTPRequestEntityTooLarge(limit, declared)
    body = bytearray()
    async for chunk in BodyStream(request, limit):
        body += chunk
    return bytes(body)


async def read_form(request: web.Request) -> MultiDictProxy[str]:
    """An ``application/x-www-form-urlencoded`` body's fields, read by :func:`read_body`
    (the inspector's forms); any other content type gives no fields and is not read."""
    if request.content_type != "application/x-www-form-urlencoded":
        return MultiDictProxy(MultiDict())
    raw = await read_body(request)
    charset = request.charset or "utf-8"
    try:
        text = raw.decode(charset)
    except (LookupError, UnicodeDecodeError):
        text = raw.decode("utf-8", "replace")
    return MultiDictProxy(MultiDict(parse_qsl(text, keep_blank_values=True)))
