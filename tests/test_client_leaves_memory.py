"""A client that leaves a request on the memory path (the memory tools offered, the
proxy reading every round: proxy/flow/toolloop, proxy/flow/streamround) ends the
upstream call, as on the plain path (tests/test_client_leaves.py): for every API,
streamed or not, plain or structured (a round's text held: ``hold_text``), while
the upstream thinks, while a stream it was shown stalls, and while a held round
only sends heartbeats. The real openai and anthropic SDKs as clients, the fake
upstream on loopback; nothing is stored as an answer the client did not get."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_anthropic import AReply, text
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_client_leaves import check_nothing_stored, until

SCHEMA: Any = {"type": "object", "properties": {"city": {"type": "string"}},
               "required": ["city"], "additionalProperties": False}
LONG = "word " * 2000
"""An answer of many deltas: its first write holds the head and the first words, and
the stream goes on for several writes, 3 s apart."""
FIRST = 65536
"""Bytes of the fake upstream's first write (then one more every 3 s)."""
STRUCTURED_JSON = '{"city": "' + "Lisbon " * 1500 + '"}'


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """The memory tools go with every request; clients are checked every 0.1 s."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "always", "heartbeat_seconds": 0.1})
    yield running
    await running.close()


def oai(proxy: RunningProxy, **kw: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0, **kw)


def ant(proxy: RunningProxy, **kw: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0,
                                    **kw)


# -- a stream the client was shown, then the upstream stalls ---------------------------
async def test_responses_client_that_leaves_a_shown_stream_ends_the_upstream_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push_response(RReply(text=LONG, piece=6, write_size=FIRST, delay=3.0))
    stream = await oai(proxy).responses.create(model="m", input="Where do I live?",
                                               stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            break
    left = time.monotonic()
    await stream.close()
    assert "tools" in upstream.responses_requests[-1]["json"]  # the memory path
    assert await until(lambda: upstream.responses.cancelled, 1.5)
    assert time.monotonic() - left < 2.0  # before the upstream's next write
    await check_nothing_stored(proxy)


async def test_messages_client_that_leaves_a_shown_stream_ends_the_upstream_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.anthropic_replies.append(
        AReply(content=[text(LONG)], piece=6, write_size=FIRST, delay=3.0))
    async with ant(proxy).messages.with_streaming_response.create(
            model="claude-x", max_tokens=4000, stream=True,
            messages=[{"role": "user", "content": "Where do I live?"}]) as raw:
        async for chunk in raw.iter_bytes():
            if b"text_delta" in chunk:
                break
        left = time.monotonic()
    sent = [r for r in upstream.requests if r["path"] == "/v1/messages"]
    assert "tools" in sent[-1]["json"]
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - left < 2.0
    await check_nothing_stored(proxy)


async def test_chat_client_that_leaves_a_shown_stream_ends_the_upstream_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push(Reply(content=LONG, piece=6, write_size=FIRST, delay=3.0))
    stream = await oai(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Where do I live?"}], stream=True)
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    left = time.monotonic()
    await stream.close()
    assert "tools" in upstream.chat_requests[-1]["json"]
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - left < 2.0
    assert upstream.finished_streams == 0
    await check_nothing_stored(proxy)


# -- a structured answer: its text held, the client gets heartbeats, then leaves -------
async def leave_after_first_bytes(raw: Any) -> float:
    """Read the first bytes the proxy sends (its status line came: heartbeats), leave."""
    async for _chunk in raw.iter_bytes():
        break
    return time.monotonic()


async def test_responses_client_that_leaves_a_held_structured_stream_ends_the_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push_response(RReply(text=STRUCTURED_JSON, piece=6, write_size=FIRST,
                                  delay=3.0))
    async with oai(proxy).responses.with_streaming_response.create(
            model="m", input="Where do I live?", stream=True,
            text={"format": {"type": "json_schema", "name": "place", "schema": SCHEMA,
                             "strict": True}}) as raw:
        left = await leave_after_first_bytes(raw)
    assert await until(lambda: upstream.responses.cancelled, 1.5)
    assert time.monotonic() - left < 2.0
    await check_nothing_stored(proxy)


async def test_messages_client_that_leaves_a_held_structured_stream_ends_the_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.anthropic_replies.append(
        AReply(content=[text(STRUCTURED_JSON)], piece=6, write_size=FIRST, delay=3.0))
    async with ant(proxy).messages.with_streaming_response.create(
            model="claude-x", max_tokens=4000, stream=True,
            messages=[{"role": "user", "content": "Where do I live?"}],
            extra_body={"output_config": {"format": {"type": "json_schema",
                                                     "schema": SCHEMA}}}) as raw:
        left = await leave_after_first_bytes(raw)
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - left < 2.0
    await check_nothing_stored(proxy)


async def test_chat_client_that_leaves_a_held_structured_stream_ends_the_call(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push(Reply(content=STRUCTURED_JSON, piece=6, write_size=FIRST, delay=3.0))
    async with oai(proxy).chat.completions.with_streaming_response.create(
            model="m", messages=[{"role": "user", "content": "Where do I live?"}],
            stream=True,
            response_format={"type": "json_schema", "json_schema": {
                "name": "place", "schema": SCHEMA, "strict": True}}) as raw:
        left = await leave_after_first_bytes(raw)
    assert await until(lambda: upstream.aborted, 1.5)
    assert time.monotonic() - left < 2.0
    assert upstream.finished_streams == 0
    await check_nothing_stored(proxy)


# -- the upstream thinks before answering: streamed or not, plain or structured --------
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("structured", [False, True])
async def test_responses_client_that_leaves_while_the_upstream_thinks_ends_the_call(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool, structured: bool) -> None:
    upstream.push_response(RReply(text='{"city": "Lisbon"}', answer_delay=6.0))
    extra: Any = {"text": {"format": {"type": "json_schema", "name": "place",
                                      "schema": SCHEMA, "strict": True}}} if structured else {}
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        answer = await oai(proxy, timeout=1.0).responses.create(
            model="m", input="Where do I live?", stream=stream, **extra)
        if stream:
            async for _ in answer:  # type: ignore[union-attr]
                pass
    assert "tools" in upstream.responses_requests[-1]["json"]
    assert await until(lambda: upstream.responses.cancelled, 1.5)
    assert time.monotonic() - started < 4.0  # well before the 6 s answer
    await check_nothing_stored(proxy)
