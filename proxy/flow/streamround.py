"""One streamed upstream round's I/O: open it, then relay its bytes through the
sans-io stream round (:class:`proxy.wire.base.StreamRound`) to the client side."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from proxy.flow.client import ClientGone, ClientSide
from proxy.upstream import is_event_stream, sse_by_its_bytes
from proxy.wire.base import StreamRound


async def _head(resp: aiohttp.ClientResponse) -> tuple[bool, bytes]:
    """Read the first bytes of a 2xx answer not labelled ``text/event-stream`` until
    they tell whether it is an event stream (:func:`proxy.upstream.sse_by_its_bytes`);
    ``(is a stream, the bytes read)``. A read error is left for the body's reader."""
    head = b""
    try:
        async for chunk in resp.content.iter_any():
            head += chunk
            verdict = sse_by_its_bytes(head)
            if verdict is not None:
                return verdict, head
    except (aiohttp.ClientError, TimeoutError):
        pass
    return False, head


async def open_round(client: ClientSide, session: aiohttp.ClientSession, url: Any,
                     headers: Any, data: bytes
                     ) -> tuple[aiohttp.ClientResponse, asyncio.Queue[Any] | None,
                                asyncio.Future[None], bytes]:
    """Send one streamed round; return its response, for an event stream the queue
    its chunks arrive in (else ``None``), the reading task, and the body's first
    bytes already read when it is not a stream (else ``b""``). The task that
    received the headers goes on reading the body at once, so no byte the upstream
    sent before breaking off is lost (aiohttp raises a connection error ahead of
    unread bytes). A 2xx answer is an event stream by its ``Content-Type``, or, under
    another label (none, ``text/plain``, ``application/octet-stream``, even JSON),
    by its first bytes: servers and relays send streams so labelled, and the
    memory calls in them must still be read."""
    ready: asyncio.Future[tuple[aiohttp.ClientResponse, asyncio.Queue[Any] | None,
                                bytes]] = asyncio.get_running_loop().create_future()

    async def run() -> None:
        try:
            resp = await client.ex.send(session, url, headers, data)
        except Exception as exc:  # noqa: BLE001 - handed to the loop
            if not ready.done():
                ready.set_exception(exc)
            return
        if ready.done():  # the loop gave up (client gone)
            resp.close()
            return
        queue: asyncio.Queue[Any] | None = None
        head = b""
        if resp.status < 400:
            stream = is_event_stream(resp)
            if not stream:
                # Until the first bytes tell, the client's status line may not be sent
                # (a heartbeat would commit a body's answer to a stream): its headers
                # are known to the client side only after.
                stream, head = await _head(resp)
            if stream:
                queue = asyncio.Queue()
                if head:
                    queue.put_nowait(head)
                head = b""
        client.last_headers = resp.headers
        if ready.done():  # the loop gave up while the first bytes were read
            resp.close()
            return
        ready.set_result((resp, queue, head))
        if queue is None:
            return
        try:
            async for chunk in resp.content.iter_any():
                queue.put_nowait(chunk)
            queue.put_nowait(None)
        except Exception as exc:  # noqa: BLE001 - handed to the loop
            queue.put_nowait(exc)

    reader = asyncio.ensure_future(run())
    try:
        resp, queue, head = await client.wait(ready)
    except BaseException:
        reader.cancel()
        raise
    return resp, queue, reader, head


GONE = object()
"""Put in a round's queue by :class:`_Watch`: the client left."""


class _Watch:
    """While a round is relayed, every ``every`` seconds (a timer, no task), check that
    the client is still there; once it left, wake the relay's read with :data:`GONE`.
    A client that leaves a stream it was shown is noticed within that time, not at
    the next write, which a stalled upstream may not send for a long time."""

    def __init__(self, client: ClientSide, queue: asyncio.Queue[Any], every: float) -> None:
        self.client, self.queue, self.every = client, queue, every
        self.loop = asyncio.get_running_loop()
        self.timer = self.loop.call_later(every, self._check)

    def _check(self) -> None:
        if self.client.left():
            self.queue.put_nowait(GONE)
        else:
            self.timer = self.loop.call_later(self.every, self._check)

    def stop(self) -> None:
        self.timer.cancel()


async def relay_round(client: ClientSide, resp: aiohttp.ClientResponse,
                      queue: asyncio.Queue[Any], reader: asyncio.Future[None],
                      sr: StreamRound) -> bool:
    """Relay one streamed round through ``sr``; False when the client left (noticed
    within ``client.heartbeat`` seconds, however long the upstream pauses)."""
    ex = client.ex
    ok = True
    watch = _Watch(client, queue, client.heartbeat)
    try:
        while ok:
            if ex.response is None or client.hidden_running:
                item = await client.wait(queue.get())
            else:
                item = await queue.get()
            if item is None:
                break
            if item is GONE:
                ok = False
                break
            if isinstance(item, BaseException):
                raise item
            out = sr.feed(item)
            if sr.shown:
                client.hidden_running = False
            elif sr.holds():  # a long reasoning may turn out hidden: keep the client alive
                client.hidden_running = True
            ok = await client.out(sr, out)
            if ok and client.beat_due() and client.last_headers is not None:
                # held reasoning that streams on without a pause: heartbeats all the same
                ok = await client.beat()
        if ok:
            ok = await client.out(sr, sr.close())
    except ClientGone:
        ok = False
    except (aiohttp.ClientError, TimeoutError) as exc:
        ex.error = f"{exc.__class__.__name__}: {exc}"
        ex.complete = False
        # The client gets every byte the upstream sent before it broke off; after
        # a later round, whose stream the proxy composed, not half an event: the
        # loop ends it with the API's error event, or, while the client's status
        # line was not sent yet, answers with the API's error (ToolLoop._end).
        if len(ex.rounds) == 1:
            ok = await client.commit()
            rest = sr.pending() if ok and not sr.holding else b""
            if rest:
                await client.write(rest)
    finally:
        watch.stop()
        reader.cancel()
        if not ok:
            resp.close()
        resp.release()
    return ok
