"""A client that leaves a plain request (no memory tools) of the Responses API or
Anthropic Messages ends the upstream call, as on the chat path
(tests/test_exchange_transparency.py): while the upstream thinks before its answer,
and while a stream stalls. The real openai and anthropic SDKs as clients, the fake
upstream on loopback; nothing the client did not see is stored as an answer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import pytest
from aiohttp import web

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_anthropic import AReply, text
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """Memory tools only where history lies beyond (the default): a first request
    goes the plain path. Clients are checked for every 0.1 s."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "history", "heartbeat_seconds": 0.1})
    yield running
    await running.close()


def assistant_rows(proxy: RunningProxy) -> list[dict[str, Any]]:
    data = proxy.engine.export(events=True)
    return [m for t in data["threads"] for m in t["messages"] if m["role"] == "assistant"]


def last_response_event(proxy: RunningProxy) -> dict[str, Any]:
    events = [e for e in proxy.engine.export(events=True).get("events", [])
              if e.get("kind") == "response"]
    assert events
    return events[-1]["data"]


async def until(seen: Callable[[], int], within: float) -> bool:
    """True once ``seen()`` is 1, waiting ``within`` seconds."""
    deadline = time.monotonic() + within
    while seen() == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return seen() == 1


async def check_nothing_stored(proxy: RunningProxy) -> None:
    await proxy.settle()
    assert assistant_rows(proxy) == []
    event = last_response_event(proxy)
    assert event["client_gone"] is True and event["outcome"] == "incomplete"


# -- the Responses API ---------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
async def test_responses_client_that_leaves_while_the_upstream_thinks_cancels_it(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    upstream.push_response(RReply(text="an answer nobody reads", answer_delay=6.0))
    impatient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                   max_retries=0, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        answer = await impatient.responses.create(model="m", input="hi", stream=stream)
        if stream:
            async for _ in answer:  # type: ignore[union-attr]
                pass
    assert "tools" not in upstream.responses_requests[-1]["json"]
    # The upstream call ends with the client, long before its answer was due.
    assert await until(lambda: upstream.responses.cancelled, 1.5)
    assert time.monotonic() - started < 4.0  # well before the 6 s answer
    await check_nothing_stored(proxy)


async def test_responses_client_that_leaves_a_stalled_stream_closes_the_upstream(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # The first words, then the upstream thinks for 3 s: the client leaves meanwhile.
    upstream.push_response(RReply(text="first words, then a long pause", piece=12,
                                  write_size=400, delay=3.0))
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    stream = await client.responses.create(model="m", input="hi", stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            break
    left = time.monotonic()
    await stream.close()
    assert await until(lambda: upstream.responses.cancelled, 1.5)
    assert time.monotonic() - left < 2.0
    await check_nothing_stored(proxy)


# -- Anthropic Messages ----------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
async def test_messages_client_that_leaves_while_the_upstream_thinks_cancels_it(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    upstream.anthropic_replies.append(
        AReply(content=[text("an answer nobody reads")], answer_delay=6.0))
    impatient = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY,
                                         max_retries=0, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        answer = await impatient.messages.create(
            model="claude-x", max_tokens=10, stream=stream,
            messages=[{"role": "user", "content": "hi"}])
        if stream:
            async for _ in answer:  # type: ignore[union-attr]
                pass
    sent = [r for r in upstream.requests if r["path"] == "/v1/messages"]
    assert "tools" not in sent[-1]["json"]
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - started < 4.0  # well before the 6 s answer
    await check_nothing_stored(proxy)


async def test_messages_client_that_leaves_a_stalled_stream_closes_the_upstream(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.anthropic_replies.append(
        AReply(content=[text("first words, then a long pause")], piece=12,
               write_size=300, delay=3.0))
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    async with client.messages.with_streaming_response.create(
            model="claude-x", max_tokens=10, stream=True,
            messages=[{"role": "user", "content": "hi"}]) as raw:
        async for chunk in raw.iter_bytes():
            if b"text_delta" in chunk:
                break
        left = time.monotonic()
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - left < 2.0
    assert upstream.finished_streams == 0
    await check_nothing_stored(proxy)


# -- pass-through paths, and a client gone just before the answer's status line ---------
class SlowUpstream:
    """An upstream for any ``/v1/`` path that answers after ``delay`` seconds (a
    stream: a first event at once, the next after ``delay``); counts handlers the
    proxy's closed connection cancelled."""

    def __init__(self, delay: float) -> None:
        self.delay, self.cancelled, self.finished = delay, 0, 0
        self.app = web.Application()
        self.app.router.add_route("*", "/v1/{tail:.*}", self.answer)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        try:
            if request.query.get("stream"):
                resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await resp.prepare(request)
                await resp.write(b"data: {}\n\n")
                await asyncio.sleep(self.delay)
                await resp.write(b"data: {}\n\n")
                self.finished += 1
                return resp
            await asyncio.sleep(self.delay)
            self.finished += 1
            return web.json_response({"created": 1, "data": []})
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


@pytest.fixture
async def slow(tmp_path: Path) -> AsyncIterator[tuple[SlowUpstream, RunningProxy]]:
    fake = SlowUpstream(3.0)
    runner = web.AppRunner(fake.app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    running = await start_proxy(f"http://127.0.0.1:{port}/v1", tmp_path / "data",
                                tools={"heartbeat_seconds": 0.1})
    yield fake, running
    await running.close()
    await runner.cleanup()


@pytest.mark.parametrize("path", ["/images/generations", "/fine_tuning/jobs/j/events?stream=1"])
async def test_a_client_that_leaves_a_pass_through_request_ends_the_upstream_call(
        slow: tuple[SlowUpstream, RunningProxy], path: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """Talking to the upstream directly, a client that hangs up closes the upstream's
    connection; through the proxy the upstream went on (an image generated, and paid
    for, for nobody), and the proxy then logged an error for the client's absence."""
    fake, proxy = slow
    impatient = aiohttp.ClientTimeout(total=0.4)
    started = time.monotonic()
    async with aiohttp.ClientSession(timeout=impatient) as session:
        with pytest.raises(TimeoutError):
            async with session.post(proxy.base_url + path, json={"prompt": "a cat"},
                                    headers={"Authorization": f"Bearer {TEST_KEY}"}) as resp:
                await resp.read()
    assert await until(lambda: fake.cancelled, 1.5) and time.monotonic() - started < 2.0
    assert fake.finished == 0
    await proxy.settle()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_client_gone_before_the_answers_status_line_is_no_error(
        upstream: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The client leaves while the upstream thinks, and the upstream answers before the
    proxy's next look at the client (every ``heartbeat_seconds``): writing the status
    line then fails. That is a client gone, recorded as such, not an error."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "data",
                              tools={"offer": "history", "heartbeat_seconds": 30})
    try:
        upstream.push(Reply(content="an answer nobody reads", answer_delay=0.8))
        impatient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                       max_retries=0, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            await impatient.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}])
        await asyncio.sleep(1.0)  # the upstream answered meanwhile
        await check_nothing_stored(proxy)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        await proxy.close()
