"""The client side of one exchange: its status line held, committed, kept alive.

Nothing reaches a streaming client before the tool loop knows whether a round is
a hidden memory round: the status line and the first bytes are held
(:meth:`ClientSide.out`) until the round shows something, or for at most
``heartbeat`` seconds. While a hidden round runs after that, an SSE comment is
sent every ``heartbeat`` seconds. A client that left (its connection closed, or
a write failed) ends the wait with :class:`ClientGone`, cancelling what was awaited.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

from proxy import headers as hdrs
from proxy.appkeys import REQUEST_ID
from proxy.flow.exchange import Exchange
from proxy.rawhead import RelayedStreamResponse
from proxy.wire.base import StreamRound

T = TypeVar("T")


async def send_whole(request: web.Request, response: web.StreamResponse) -> None:
    """Send a response the handler built whole (a ``web.Response`` not prepared yet):
    its status line, headers and body, now rather than after the handler returned.

    A handler calls it while its request is still marked in flight
    (``AsyncEngine.in_flight()``): aiohttp would send the body only after the
    handler returned, once the mark is gone, and the background work that gives way
    to requests (the indexer's Tantivy commit, the compaction check, both woken by
    the end of the mark) then took the interpreter lock from that write
    (docs/evaluation/README.md, "Short non-streamed requests: what main added").
    A response already started (a stream) is left as it is. A client that left is
    not an error here (aiohttp sees it too).
    """
    if response.prepared:
        return
    response.headers.setdefault("x-lcm-request-id", request[REQUEST_ID])
    try:
        await response.prepare(request)
        await response.write_eof()
    except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
        pass


def event_id_seen(tail: bytes, data: bytes) -> tuple[bool, bytes]:
    """Whether an SSE ``id:`` field starts in ``data``, written after ``tail`` (the
    last bytes written before it, ``b"\n"`` at the start of a stream), and the tail
    to pass with the next write. A field starts a line (after LF or CR), and its
    name may be split across writes (``…\n\ni`` then ``d: 3``); three bytes of
    tail are enough to see ``\nid:`` across any split."""
    seen = tail[-3:] + data
    return b"\nid:" in seen or b"\rid:" in seen, seen[-3:]


class ClientGone(Exception):
    """The client left while the loop waited (what it waited for was cancelled)."""


class ClientWatch:
    """``with ClientWatch(request, every):`` checks the client's connection every
    ``every`` seconds while the block runs; once the client left, the task running
    the block is cancelled (the upstream call it awaits with it) and the block raises
    :class:`ClientGone`. Nothing runs between the block's own steps: an upstream
    answer it awaits is read the moment it arrives."""

    def __init__(self, request: web.BaseRequest, every: float) -> None:
        self.request, self.every = request, every
        self.gone = False
        self._task: asyncio.Task[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> ClientWatch:
        # A timer, not a task: half the cost (about 20 us against 40-60 us a request).
        self._task = asyncio.current_task()
        self._timer = asyncio.get_running_loop().call_later(self.every, self._check)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: Any) -> None:
        assert self._timer is not None and self._task is not None
        self._timer.cancel()
        if self.gone and kind is asyncio.CancelledError:
            self._task.uncancel()
            raise ClientGone from None

    def _check(self) -> None:
        assert self._task is not None
        transport = self.request.transport
        if transport is None or transport.is_closing():
            self.gone = True
            self._task.cancel()
        else:
            self._timer = asyncio.get_running_loop().call_later(self.every, self._check)


class ClientSide:
    """The client's response for one exchange (see module docstring)."""

    def __init__(self, ex: Exchange, heartbeat: float) -> None:
        self.ex, self.wire, self.heartbeat = ex, ex.wire, heartbeat
        self.held = b""
        """Bytes owed to the client before its status line is sent."""
        self.hidden_running = False
        """A hidden memory round runs: heartbeats are due."""
        self.last_write = time.monotonic()
        self.last_headers: Any = None
        """The latest upstream round's headers (the client's, when committed early)."""
        self.has_event_id = False
        """The client was sent an SSE ``id:`` field (see :meth:`heartbeat_bytes`)."""
        self._tail = b"\n"
        """The last bytes written, up to three (:func:`event_id_seen`)."""

    def left(self) -> bool:
        transport = self.ex.request.transport
        return transport is None or transport.is_closing()

    async def wait(self, aw: Awaitable[T]) -> T:
        """Await ``aw``; meanwhile, every ``heartbeat`` seconds, check the client is
        still there (else cancel ``aw`` and raise :class:`ClientGone`) and, on a
        stream, send the held bytes (the hold is over) or a heartbeat.

        ``aw`` runs in the calling task and a timer does the checks (as
        :class:`ClientWatch`): nearly every wait ends before its first tick, and a
        task of its own with ``asyncio.wait`` cost several event-loop turns a wait.
        A due beat runs as a task while ``aw`` goes on; the next check is timed from
        its end, and the wait does not return before it ended (the client's bytes
        stay in order). A beat that finds the client gone (or raises) cancels
        ``aw``: :class:`ClientGone` (or the beat's exception)."""
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        gone, active = False, True  # active: this wait has not returned yet
        failure: BaseException | None = None
        beat: asyncio.Future[bool] | None = None
        timer: asyncio.TimerHandle | None = None

        def end(exc: BaseException | None = None) -> None:
            nonlocal gone, failure
            if active and not gone:
                gone, failure = True, exc
                task.cancel()

        def beaten(done: asyncio.Future[bool]) -> None:
            nonlocal timer
            if not active or done.cancelled():  # the wait's end looks at it itself
                return
            if done.exception() is not None or not done.result():
                end(done.exception())
            elif not gone:
                timer = loop.call_later(self.heartbeat, tick)

        def tick() -> None:
            nonlocal beat, timer
            if not active:
                return
            if self.left():
                end()
            elif self.ex.streamed and (self.hidden_running or self.last_headers is not None):
                beat = asyncio.ensure_future(self.beat())
                beat.add_done_callback(beaten)
            else:
                timer = loop.call_later(self.heartbeat, tick)

        def stop() -> None:
            nonlocal active
            active = False
            assert timer is not None
            timer.cancel()
            if beat is not None and not beat.done():
                beat.cancel()

        timer = loop.call_later(self.heartbeat, tick)
        try:
            result = await aw
        except BaseException as exc:  # the watch's cancel (or what ``aw`` made of it)
            stop()
            if not gone:
                raise
            task.uncancel()
            if failure is not None:
                raise failure from None
            raise ClientGone from (None if isinstance(exc, asyncio.CancelledError) else exc)
        active = False
        timer.cancel()
        if beat is not None and not gone and not beat.cancelled() and not await beat:
            raise ClientGone  # (a done beat is read at once; its exception raised)
        if gone:  # ``aw`` ended all the same: the cancel was not taken
            task.uncancel()
            if failure is not None:
                raise failure
            raise ClientGone
        return result

    async def beat(self) -> bool:
        """Send the client's status line and held bytes (the hold is over), and a
        heartbeat while a hidden round runs; False if the client is gone."""
        return await self.commit() and (not self.hidden_running
                                        or await self.write(self.heartbeat_bytes()))

    def heartbeat_bytes(self) -> bytes:
        """The wire's heartbeat; a comment heartbeat without its blank line once the
        client was sent an ``id:`` field.

        By the SSE spec a blank line after a comment dispatches nothing, but the
        openai SDKs' decoders (openai-python's ``SSEDecoder``, openai-go's) dispatch
        an event with empty data on any blank line once an event id was seen, and
        fail on its JSON. The comment line alone still writes bytes, and the next
        event's lines follow it (a comment line inside an event is ignored)."""
        beat = self.wire.heartbeat()
        if self.has_event_id and beat.startswith(b":") and beat.endswith(b"\n\n"):
            return beat[:-1]
        return beat

    def beat_due(self) -> bool:
        """A heartbeat is due: a hidden round runs (or a round holds what it may not
        show) and nothing was written for ``heartbeat`` seconds."""
        return self.hidden_running and time.monotonic() - self.last_write >= self.heartbeat

    async def commit(self) -> bool:
        """Send the client's status line (once) and any held bytes; False if gone."""
        ex = self.ex
        if ex.response is None:
            client_headers = hdrs.to_client(self.last_headers or {})
            client_headers.update(ex.extra)
            ex.response = RelayedStreamResponse(status=200, headers=client_headers)
            try:
                await ex.response.prepare(ex.request)
            except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
                return False
        held, self.held = self.held, b""
        return await self.write(held) if held else True

    async def write(self, data: bytes) -> bool:
        response = self.ex.response
        assert response is not None
        self.last_write = time.monotonic()
        if not self.has_event_id and data:
            self.has_event_id, self._tail = event_id_seen(self._tail, data)
        try:
            await response.write(data)
            return True
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            return False

    async def out(self, sr: StreamRound, data: bytes) -> bool:
        """Relay a round's bytes, or hold them while the round may still be hidden."""
        if self.ex.response is None:
            self.held += data
            if not sr.shown:
                return True
            return await self.commit()
        return await self.write(data) if data else True
