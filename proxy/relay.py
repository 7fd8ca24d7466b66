"""Relay an upstream body to the client as it arrives, optionally keeping a copy.

The client must see each chunk the moment it arrives (streaming is the product);
memory needs the whole body afterwards. So the relay only appends the raw chunks
to a list — decoding happens after the last byte was written, off the hot path.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import aiohttp
from aiohttp import web

log = logging.getLogger("lcm.relay")


@dataclass
class RelayResult:
    """What happened while relaying: bytes relayed (``nbytes``), the chunks kept
    (when ``keep`` was set), whether the client left early (``client_gone``) and
    whether the upstream body ended abnormally (``upstream_error``)."""

    nbytes: int = 0
    chunks: list[bytes] = field(default_factory=list)
    client_gone: bool = False
    upstream_error: str | None = None

    def body(self) -> bytes:
        """Return the kept chunks joined."""
        return b"".join(self.chunks)


_DONE_EVENT = re.compile(rb"[\r\n]data: ?\[DONE\]")
"""The ``[DONE]`` event's line: ``data: [DONE]`` at a line start. The bytes ``[DONE]``
inside an event's JSON (a model writing "Step 1 [DONE]") are not it: a JSON string
holds no raw line break, so its text never starts a line."""
_DONE_SPAN = len(b"\ndata: [DONE]") - 1


class Rewriter(Protocol):
    """Bytes the client is shown instead of the upstream's: ``feed`` each chunk,
    ``close`` at the end of the body (what it still holds)."""

    def feed(self, chunk: bytes) -> bytes: ...

    def close(self) -> bytes: ...


async def start(response: web.StreamResponse, request: web.BaseRequest) -> bool:
    """Send ``response``'s status line and headers; False when the client already left
    (it hung up while the upstream was answering): not an error, nothing to relay."""
    try:
        await response.prepare(request)
    except (ConnectionResetError, aiohttp.ClientConnectionResetError):
        return False
    return True


async def _chunks(upstream: aiohttp.ClientResponse, head: bytes) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for chunk in upstream.content.iter_any():
        yield chunk


async def relay_body(
    upstream: aiohttp.ClientResponse,
    response: web.StreamResponse,
    *,
    keep: bool,
    request: web.BaseRequest | None = None,
    before_end: Callable[[RelayResult], Awaitable[None]] | None = None,
    hold_done: bool = False,
    check_every: float | None = None,
    rewriter: Rewriter | None = None,
    head: bytes = b"",
) -> RelayResult:
    """Copy ``upstream``'s body to the prepared ``response`` chunk by chunk
    (``head``: its first bytes, when the caller read them already).

    Never raises for client disconnects or upstream read errors. When the client
    leaves, the upstream connection is closed, which aborts generation upstream.
    When the upstream body ends abnormally (connection dropped, bad chunking, read
    timeout) the client's connection is closed *without* the final chunk, so the
    client sees a truncated body exactly as it would talking to the upstream
    directly, instead of a clean end that passes a cut-off answer for a whole one.
    ``request`` is the request being answered (defaults to the one ``response``
    was prepared for).

    ``before_end`` is awaited, once the upstream body ended cleanly, before the
    client's body is ended (the caller stores the answer first: a client never
    holds a whole answer the proxy lost). The end is the chunked terminator, or
    with ``hold_done`` (event streams) the chunk that completes the ``[DONE]``
    event, since SDKs stop reading at ``[DONE]``: the answer is whole there, and is
    stored then, whenever the upstream closes its body (what follows is relayed).

    With ``check_every`` (seconds), a client that leaves while the upstream sends
    nothing (a model thinking before its first token) is noticed within that time,
    not at the next write: the upstream connection is closed then.
    ``rewriter``: the client is shown what it makes of the upstream's chunks (the
    kept chunks stay the upstream's); not used with ``hold_done``.
    """
    result = RelayResult()
    stored = False  # before_end ran
    carry = b"\n"  # the stream starts a line
    watch = None
    if check_every is not None:
        req = request if request is not None else getattr(response, "_req", None)
        watch = _Watch(req, upstream, result, check_every)
    try:
        async for chunk in _chunks(upstream, head):
            if keep:
                result.chunks.append(chunk)
            result.nbytes += len(chunk)
            if (hold_done and before_end is not None and not stored
                    and _DONE_EVENT.search(carry + chunk) is not None):
                stored = True  # [DONE] (or its last bytes) waits for the answer's store
                await before_end(result)
            carry = (carry + chunk)[-_DONE_SPAN:]
            if rewriter is not None:
                chunk = rewriter.feed(chunk)
                if not chunk:
                    continue
            try:
                await response.write(chunk)
            except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
                result.client_gone = True
                break
    except (TimeoutError, aiohttp.ClientError) as exc:
        if not result.client_gone:  # not the watcher closing it
            result.upstream_error = f"{exc.__class__.__name__}: {exc}"
            log.warning("upstream body ended abnormally: %s", result.upstream_error)
    finally:
        if watch is not None:
            watch.stop()
    if result.client_gone:
        upstream.close()
        return result
    tail = rewriter.close() if rewriter is not None else b""
    if result.upstream_error is not None:
        upstream.close()
        try:  # every byte the upstream sent, then the abrupt end it gave us
            if tail:
                await response.write(tail)
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            result.client_gone = True
        _abort_client(response, request)
        return result
    if before_end is not None and not stored:
        await before_end(result)
    try:
        if tail:
            await response.write(tail)
        await response.write_eof()
    except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
        result.client_gone = True
    return result


class _Watch:
    """Every ``every`` seconds (a timer, no task), check the client's connection; once
    it is gone, mark ``result`` and close ``upstream`` (which ends the relay's read)."""

    def __init__(self, request: web.BaseRequest | None, upstream: aiohttp.ClientResponse,
                 result: RelayResult, every: float) -> None:
        self.request, self.upstream, self.result, self.every = request, upstream, result, every
        self.loop = asyncio.get_running_loop()
        self.timer = self.loop.call_later(every, self._check)

    def _check(self) -> None:
        transport = self.request.transport if self.request is not None else None
        if transport is None or transport.is_closing():
            self.result.client_gone = True
            self.upstream.close()
        else:
            self.timer = self.loop.call_later(self.every, self._check)

    def stop(self) -> None:
        self.timer.cancel()


def _abort_client(response: web.StreamResponse, request: web.BaseRequest | None) -> None:
    """Close the client's connection after the bytes already written, with no EOF.

    The response is marked ``force_close`` so aiohttp does not try to reuse the
    connection; its own ``write_eof`` afterwards fails quietly (a ConnectionError).
    """
    response.force_close()
    # aiohttp keeps the request a response was prepared for in ``_req``; it has no
    # public accessor (aiohttp is pinned; tests cover this path).
    req = request if request is not None else getattr(response, "_req", None)
    transport = req.transport if req is not None else None
    if transport is not None:
        transport.close()
