"""A client that leaves a plain request (no memory tools) of the Responses API or
Anthropic Messages ends the upstream call, as on the chat path
(tests/test_exchange_transparency.py): while the upstream thinks before its answer,
and while a stream stalls. The real openai and anthropic SDKs as clients, the fake
upstream on loopback; nothing the client did not see is stored as an answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_anthropic import AReply, text
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream


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
