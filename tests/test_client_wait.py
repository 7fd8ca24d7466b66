"""``ClientSide.wait`` (proxy/flow/client.py): what the tool loop awaits, watched.

A real aiohttp server whose handler waits through :class:`ClientSide` as the tool
loop does, and a real client reading it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from proxy.flow.client import ClientGone, ClientSide
from proxy.flow.exchange import Exchange

HEARTBEAT = 0.05

Script = Callable[[ClientSide], Awaitable[None]]


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Script], Awaitable[tuple[str, dict[str, Any]]]]]:
    """``await serve(script)`` → (the URL, what the handler saw): each request runs
    ``script`` on a streamed exchange's client side."""
    runners: list[web.AppRunner] = []
    seen: dict[str, Any] = {}

    async def start(script: Script) -> tuple[str, dict[str, Any]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            ex = Exchange(request=request, rid="req_test", raw=b"{}", body={"stream": True})
            side = ClientSide(ex, HEARTBEAT)
            seen["task"] = asyncio.current_task()
            try:
                await script(side)
            except ClientGone:
                seen["gone"] = True
            assert ex.response is not None or seen.get("gone")
            if ex.response is not None and not seen.get("gone"):
                await ex.response.write(b"data: [DONE]\n\n")
                await ex.response.write_eof()
            return ex.response or web.Response(status=499)

        app = web.Application()
        app.router.add_post("/", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}/", seen

    yield start
    for runner in runners:
        await runner.cleanup()


async def test_a_wait_runs_in_the_callers_task(serve: Any) -> None:
    async def work() -> str:
        seen["inner"] = asyncio.current_task()
        await asyncio.sleep(0)
        return "answer"

    async def script(side: ClientSide) -> None:
        seen["result"] = await side.wait(work())
        await side.commit()

    url, seen = await serve(script)
    async with aiohttp.ClientSession() as session, session.post(url) as resp:
        assert await resp.read() == b"data: [DONE]\n\n"
    assert seen["result"] == "answer"
    assert seen["inner"] is seen["task"]  # no task of its own per wait


async def test_a_long_wait_on_a_stream_beats_and_ends_after_the_beat(serve: Any) -> None:
    async def script(side: ClientSide) -> None:
        side.hidden_running = True  # a hidden memory round: heartbeats are due
        await side.wait(asyncio.sleep(HEARTBEAT * 5))

    url, seen = await serve(script)
    async with aiohttp.ClientSession() as session, session.post(url) as resp:
        assert resp.status == 200
        body = await resp.read()
    beats = body.count(b": keep-alive\n\n")
    assert beats >= 2, body
    # every heartbeat went out before the handler's own last bytes
    assert body == b": keep-alive\n\n" * beats + b"data: [DONE]\n\n"
    assert not seen.get("gone")


async def test_a_client_that_leaves_cancels_what_is_awaited(serve: Any) -> None:
    cancelled = asyncio.Event()

    async def upstream_call() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def script(side: ClientSide) -> None:
        await side.wait(upstream_call())

    url, seen = await serve(script)
    async with aiohttp.ClientSession() as session:
        task = asyncio.ensure_future(session.post(url))
        await asyncio.sleep(HEARTBEAT * 2)
        task.cancel()  # the client hangs up before any byte
        with pytest.raises(asyncio.CancelledError):
            await task
    await asyncio.wait_for(cancelled.wait(), 5)
    for _ in range(100):
        if seen.get("gone"):
            break
        await asyncio.sleep(HEARTBEAT / 5)
    assert seen.get("gone") is True
    assert not seen["task"].cancelling()  # the watch's cancel was taken back
