"""Hostile but valid upstream answers on the tool loop's path (the memory tools
offered, none called): every stream reaches the client byte for byte, whatever
its events (Chat logprobs, refusals, filter chunks, no ``[DONE]``; Anthropic
thinking, redacted thinking, server tools, citations, errors; Responses reasoning,
annotations, incomplete, failed, errors), line endings, comments and read splits;
and what the proxy itself must write (a memory call's arguments) never fails the
chat."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest
from aiohttp import web

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_anthropic import AReply
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply


@pytest.fixture
async def make(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[Any]:
    made: list[RunningProxy] = []

    async def start(**sections: Any) -> RunningProxy:
        sections.setdefault("tools", {"offer": "always"})
        made.append(await start_proxy(upstream.base_url, tmp_path / f"d{len(made)}",
                                      **sections))
        return made[-1]

    yield start
    for running in made:
        await running.close()


async def post(url: str, body: Any, headers: dict[str, str] | None = None,
               raw: bytes | None = None) -> tuple[int, Any, bytes]:
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        async with session.post(url, data=raw if raw is not None else orjson.dumps(body),
                                headers={"Authorization": f"Bearer {TEST_KEY}",
                                         "x-api-key": TEST_KEY,
                                         "Content-Type": "application/json",
                                         **(headers or {})}) as resp:
            return resp.status, resp.headers, await resp.read()


def sse(*objs: Any, nl: bytes = b"\n", done: bool = True) -> bytes:
    out = b"".join(b"data: " + orjson.dumps(o) + nl + nl for o in objs)
    return out + (b"data: [DONE]" + nl + nl if done else b"")


def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-p", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": choices, **extra}


def ev(name: str, obj: dict[str, Any], nl: bytes = b"\n") -> bytes:
    return b"event: " + name.encode() + nl + b"data: " + orjson.dumps(obj) + nl + nl


USER = [{"role": "user", "content": "hello there"}]

LOGPROBS = {"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105],
                         "top_logprobs": []}], "refusal": None}
CHAT_STREAMS = {
    "logprobs": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                "finish_reason": None}]),
        chunk([{"index": 0, "delta": {"content": "Hi"}, "logprobs": LOGPROBS,
                "finish_reason": None}]),
        chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}])),
    "refusal": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": None,
                                      "refusal": ""}, "finish_reason": None}]),
        chunk([{"index": 0, "delta": {"refusal": "I can't"}, "finish_reason": None}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
    "azure-filter-first": sse(
        chunk([], prompt_filter_results=[{"prompt_index": 0, "content_filter_results": {}}]),
        chunk([{"index": 0, "delta": {"role": "assistant", "content": ""},
                "finish_reason": None}]),
        chunk([{"index": 0, "delta": {"content": "ok"}, "finish_reason": None,
                "content_filter_results": {"hate": {"filtered": False}}}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
    "no-done": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                "finish_reason": None}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]), done=False),
    "crlf-comments-ids": (
        b": keep-alive\r\n\r\nid: 1\r\nretry: 100\r\ndata:"
        + orjson.dumps(chunk([{"index": 0, "finish_reason": None, "delta": {
            "role": "assistant", "content": "\u00e9\u65e5"}}])) + b"\r\n\r\n: ping\r\n\r\n"
        + b"data: " + orjson.dumps(chunk([{"index": 0, "delta": {},
                                           "finish_reason": "stop"}])) + b"\r\n\r\n"
        + b"data: [DONE]\r\n\r\n"),
    "reasoning": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "reasoning_content": "think"},
                "finish_reason": None}]),
        chunk([{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        chunk([], usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3,
                         "completion_tokens_details": {"reasoning_tokens": 1}})),
    "error-mid-stream": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": "par"},
                "finish_reason": None}]),
        {"error": {"message": "overloaded", "type": "server_error", "code": None}},
        done=False),
    "error-first": sse({"error": {"message": "overloaded", "type": "server_error",
                                  "code": None}}, done=False),
    "client-tool": sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": None}]),
        chunk([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "{\"city\": \"Z\u00fcrich\"}"}}]},
            "finish_reason": None}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
}


@pytest.mark.parametrize("size", [1, None])
@pytest.mark.parametrize("name", sorted(CHAT_STREAMS))
async def test_chat_streams_pass_byte_for_byte(make: Any, upstream: FakeUpstream, name: str,
                                               size: int | None) -> None:
    upstream.push(Reply(raw_stream=CHAT_STREAMS[name], write_size=size))
    await _passes_byte_for_byte(await make(), upstream, "/chat/completions",
                                {"model": "m", "messages": USER, "stream": True},
                                CHAT_STREAMS[name])


async def _passes_byte_for_byte(proxy: RunningProxy, upstream: FakeUpstream, path: str,
                                body: dict[str, Any], payload: bytes) -> None:
    """The stream queued on ``upstream`` reaches the client as its bytes, on the tool
    loop's path (the memory tools went with the request)."""
    status, _, got = await post(proxy.base_url + path, body)
    assert status == 200
    assert got == payload
    await proxy.settle()
    sent = upstream.requests[-1]["json"]
    assert sent.get("tools"), "the memory tools went with it (the tool loop's path)"


MSG_START = {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [],
    "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 1}}}


def block(i: int, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "index": i, **obj}


ANTHROPIC_STREAMS = {
    "thinking-redacted-citations-server-tools": b"".join([
        ev("message_start", MSG_START),
        ev("ping", {"type": "ping"}),
        ev("content_block_start", block(0, "content_block_start", {"content_block": {
            "type": "thinking", "thinking": "", "signature": ""}})),
        ev("content_block_delta", block(0, "content_block_delta", {"delta": {
            "type": "thinking_delta", "thinking": "hmm \u65e5"}})),
        ev("content_block_delta", block(0, "content_block_delta", {"delta": {
            "type": "signature_delta", "signature": "EqQBCgIYAhIM"}})),
        ev("content_block_stop", block(0, "content_block_stop", {})),
        ev("content_block_start", block(1, "content_block_start", {"content_block": {
            "type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}})),
        ev("content_block_stop", block(1, "content_block_stop", {})),
        ev("content_block_start", block(2, "content_block_start", {"content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
            "input": {}}})),
        ev("content_block_delta", block(2, "content_block_delta", {"delta": {
            "type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}})),
        ev("content_block_stop", block(2, "content_block_stop", {})),
        ev("content_block_start", block(3, "content_block_start", {"content_block": {
            "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
            "content": [{"type": "web_search_result", "url": "https://e.x", "title": "E",
                         "encrypted_content": "abc", "page_age": None}]}})),
        ev("content_block_stop", block(3, "content_block_stop", {})),
        ev("content_block_start", block(4, "content_block_start", {"content_block": {
            "type": "text", "text": "", "citations": []}})),
        ev("content_block_delta", block(4, "content_block_delta", {"delta": {
            "type": "citations_delta", "citation": {
                "type": "web_search_result_location", "url": "https://e.x", "title": "E",
                "encrypted_index": "Eo8B", "cited_text": "x"}}})),
        ev("content_block_delta", block(4, "content_block_delta", {"delta": {
            "type": "text_delta", "text": "answer"}})),
        ev("ping", {"type": "ping"}),
        ev("content_block_stop", block(4, "content_block_stop", {})),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9, "server_tool_use": {"web_search_requests": 1}}}),
        ev("message_stop", {"type": "message_stop"}),
    ]),
    "error-mid-stream": b"".join([
        ev("message_start", MSG_START),
        ev("content_block_start", block(0, "content_block_start", {"content_block": {
            "type": "text", "text": ""}})),
        ev("content_block_delta", block(0, "content_block_delta", {"delta": {
            "type": "text_delta", "text": "part"}})),
        ev("error", {"type": "error", "error": {"type": "overloaded_error",
                                                 "message": "Overloaded"}}),
    ]),
    "error-first": ev("error", {"type": "error", "error": {"type": "overloaded_error",
                                                           "message": "Overloaded"}}),
    "crlf-comments": b"".join([
        b": hello\r\n\r\n",
        ev("message_start", MSG_START, b"\r\n"),
        ev("content_block_start", block(0, "content_block_start", {"content_block": {
            "type": "text", "text": ""}}), b"\r\n"),
        ev("content_block_delta", block(0, "content_block_delta", {"delta": {
            "type": "text_delta", "text": "\u00e9\U0001f44b"}}), b"\r\n"),
        ev("content_block_stop", block(0, "content_block_stop", {}), b"\r\n"),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9}}, b"\r\n"),
        ev("message_stop", {"type": "message_stop"}, b"\r\n"),
    ]),
}


@pytest.mark.parametrize("size", [1, None])
@pytest.mark.parametrize("name", sorted(ANTHROPIC_STREAMS))
async def test_anthropic_streams_pass_byte_for_byte(make: Any, upstream: FakeUpstream,
                                                    name: str, size: int | None) -> None:
    upstream.anthropic_replies.append(AReply(raw_stream=ANTHROPIC_STREAMS[name],
                                             write_size=size))
    await _passes_byte_for_byte(
        await make(), upstream, "/messages",
        {"model": "claude", "max_tokens": 100, "messages": USER, "stream": True},
        ANTHROPIC_STREAMS[name])


def rev(kind: str, seq: int, **fields: Any) -> bytes:
    return ev(kind, {"type": kind, "sequence_number": seq, **fields})


RESP = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress",
        "model": "m", "output": [], "usage": None, "error": None,
        "incomplete_details": None}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [],
             "encrypted_content": "gAAAAB"}
MESSAGE = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "hi", "annotations": [
               {"type": "url_citation", "url": "https://e.x", "title": "E",
                "start_index": 0, "end_index": 2}]}]}


def responses_stream(terminal: str, status: str) -> bytes:
    done = dict(RESP, status=status, output=[REASONING, MESSAGE],
                usage={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
                incomplete_details=({"reason": "max_output_tokens"}
                                    if status == "incomplete" else None),
                error=({"code": "server_error", "message": "x"}
                       if status == "failed" else None))
    return b"".join([
        rev("response.created", 0, response=RESP),
        rev("response.in_progress", 1, response=RESP),
        rev("response.output_item.added", 2, output_index=0,
            item=dict(REASONING, encrypted_content=None)),
        rev("response.reasoning_summary_part.added", 3, item_id="rs_1", output_index=0,
            summary_index=0, part={"type": "summary_text", "text": ""}),
        rev("response.reasoning_summary_text.delta", 4, item_id="rs_1", output_index=0,
            summary_index=0, delta="think"),
        rev("response.output_item.done", 5, output_index=0, item=REASONING),
        rev("response.output_item.added", 6, output_index=1,
            item=dict(MESSAGE, status="in_progress", content=[])),
        rev("response.content_part.added", 7, item_id="msg_1", output_index=1,
            content_index=0, part={"type": "output_text", "text": "", "annotations": []}),
        rev("response.output_text.delta", 8, item_id="msg_1", output_index=1,
            content_index=0, delta="hi"),
        rev("response.output_text.annotation.added", 9, item_id="msg_1", output_index=1,
            content_index=0, annotation_index=0,
            annotation=MESSAGE["content"][0]["annotations"][0]),
        rev("response.output_text.done", 10, item_id="msg_1", output_index=1,
            content_index=0, text="hi"),
        rev("response.content_part.done", 11, item_id="msg_1", output_index=1,
            content_index=0, part=MESSAGE["content"][0]),
        rev("response.output_item.done", 12, output_index=1, item=MESSAGE),
        rev(terminal, 13, response=done),
    ])


RESPONSES_STREAMS = {
    "completed": responses_stream("response.completed", "completed"),
    "incomplete": responses_stream("response.incomplete", "incomplete"),
    "failed": responses_stream("response.failed", "failed"),
    "error-first": rev("error", 0, code="server_error", message="boom", param=None),
    "error-event": b"".join([
        rev("response.created", 0, response=RESP),
        rev("response.output_item.added", 1, output_index=0,
            item=dict(MESSAGE, status="in_progress", content=[])),
        rev("response.output_text.delta", 2, item_id="msg_1", output_index=0,
            content_index=0, delta="par"),
        rev("error", 3, code="server_error", message="boom", param=None),
    ]),
    "comments-crlf": b": keep-alive\r\n\r\n" + responses_stream(
        "response.completed", "completed").replace(b"\n", b"\r\n"),
}


@pytest.mark.parametrize("size", [1, None])
@pytest.mark.parametrize("name", sorted(RESPONSES_STREAMS))
async def test_responses_streams_pass_byte_for_byte(make: Any, upstream: FakeUpstream,
                                                    name: str, size: int | None) -> None:
    upstream.push_response(RReply(raw_stream=RESPONSES_STREAMS[name], write_size=size))
    await _passes_byte_for_byte(await make(), upstream, "/responses",
                                {"model": "m", "input": "hello there", "stream": True},
                                RESPONSES_STREAMS[name])


# -- a memory call the proxy cannot serialise as orjson does not fail the chat ------------
async def test_a_memory_call_with_an_integer_past_64_bits_does_not_fail_the_chat(
        make: Any, upstream: FakeUpstream) -> None:
    """Anthropic's ``tool_use.input`` is an object the proxy turns back into JSON text
    for the tool: an integer past 64 bits in it (the stdlib reads the answer then)
    made orjson raise, and the client got a 500 for a memory tool's arguments."""
    from tests.fake_anthropic import text, tool_use

    proxy = await make()
    big = 123456789012345678901234567890
    upstream.anthropic_replies.extend([
        AReply(content=[tool_use("toolu_1", "memory_grep", {"query": "x", "limit": big})]),
        AReply(content=[text("done")])])
    body = {"model": "claude", "max_tokens": 100, "messages": USER}
    status, _, got = await post(proxy.base_url + "/messages", body)
    assert status == 200, got
    assert orjson.loads(got)["content"] == [{"type": "text", "text": "done"}]
    second = upstream.requests[-1]
    assert b'"limit": %d' % big in second["raw"]  # the model's call, exact
    await proxy.settle()


# -- Expect: 100-continue is answered by the proxy's own hop ----------------------------
async def test_expect_100_continue_does_not_wait_on_the_upstream(tmp_path: Path) -> None:
    """aiohttp's server answers a client's ``Expect: 100-continue`` itself (curl sends
    one for large bodies, .NET and PowerShell for every POST). Forwarded, it made the
    proxy's own client wait for a ``100 Continue`` before sending the body: an upstream
    that reads the body without sending one (RFC 9110 lets it) left the request
    hanging until the read timeout."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)  # no 100 Continue: it simply reads the body
        answer = orjson.dumps({"object": "list", "data": []})
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy = await start_proxy(f"http://127.0.0.1:{port}/v1", tmp_path / "d")
    try:
        body = orjson.dumps({"model": "m", "input": "x" * 5000,
                             "messages": [{"role": "user", "content": "hi"}]})
        async with aiohttp.ClientSession() as session:
            for path in ("/chat/completions", "/embeddings"):
                async with session.post(proxy.base_url + path, data=body, expect100=True,
                                        headers={"Authorization": f"Bearer {TEST_KEY}",
                                                 "Content-Type": "application/json"},
                                        timeout=aiohttp.ClientTimeout(total=10)) as resp:
                    assert resp.status == 200
                    assert orjson.loads(await resp.read())["object"] == "list"
        assert len(seen) == 2 and all(b"expect:" not in h.lower() for h in seen)
        await proxy.settle()
    finally:
        await proxy.close()
        server.close()
        await server.wait_closed()


# -- the upstream's Date and Server reach the client --------------------------------------
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("offer", ["always", "history"])
async def test_the_upstreams_date_and_server_reach_the_client(
        make: Any, upstream: FakeUpstream, stream: bool, offer: str) -> None:
    """``Date`` is when the origin made its answer (RFC 9110 §6.6.1: a proxy forwards
    it) and ``Server`` names it; the proxy replaced both with its own."""
    proxy = await make(tools={"offer": offer})
    stamp = {"Date": "Tue, 01 Dec 2026 10:00:00 GMT", "Server": "cloudflare"}
    upstream.push(Reply(content="ok", headers=stamp))
    body = {"model": "m", "messages": USER, "stream": stream}
    status, headers, _ = await post(proxy.base_url + "/chat/completions", body)
    assert status == 200
    assert (headers["Date"], headers["Server"]) == (stamp["Date"], stamp["Server"])
    await proxy.settle()


# -- a number too large for a float goes as sent -----------------------------------------
@pytest.mark.parametrize("path", ["/chat/completions", "/responses", "/messages"])
async def test_a_number_too_large_for_a_float_reaches_the_upstream_as_sent(
        make: Any, upstream: FakeUpstream, path: str) -> None:
    """``1e400`` is JSON (RFC 8259 leaves the range to the reader); parsed, it is
    infinity, which JSON cannot write, and the rewritten body said ``null``: the
    upstream got ``"temperature": null`` (its default) for what the client sent.
    Such a body goes as sent, without memory, and the upstream answers it."""
    proxy = await make(tools={"offer": "history"})
    raw = (b'{"model": "m", "max_tokens": 9, "temperature": 1E+400,'
           b' "messages": [{"role": "user", "content": "hi"}], "input": "hi"}')
    status, headers, _ = await post(proxy.base_url + path, None, raw=raw)
    assert status == 200
    assert upstream.requests[-1]["raw"] == raw
    assert headers["x-lcm-memory-reason"] == "inexact-number"
    await proxy.settle()


@pytest.mark.parametrize("path", ["/chat/completions", "/responses", "/messages"])
async def test_a_long_historys_field_too_large_for_a_float_is_found_too(
        make: Any, upstream: FakeUpstream, path: str) -> None:
    """A body past 64 KB has its fields outside the conversation asked (the history,
    most of its bytes, is not read again on the request path)."""
    proxy = await make(tools={"offer": "history"})
    turns = [{"role": r, "content": f"turn {i} " + "words " * 40}
             for i, r in zip(range(400), ["user", "assistant"] * 200, strict=True)]
    turns.append({"role": "user", "content": "hi"})
    history = orjson.dumps(turns)
    raw = (b'{"model": "m", "max_tokens": 9, "temperature": 1E+400, "messages": '
           + history + b', "input": ' + history + b'}')
    assert len(raw) > 64 * 1024
    status, headers, _ = await post(proxy.base_url + path, None, raw=raw)
    assert status == 200
    assert upstream.requests[-1]["raw"] == raw
    assert headers["x-lcm-memory-reason"] == "inexact-number"
    await proxy.settle()


# -- an upstream that closes late after [DONE] ----------------------------------------
async def test_done_reaches_the_client_when_the_upstream_sends_it(tmp_path: Path) -> None:
    """The answer is whole at ``[DONE]`` (SDKs stop reading there), but the proxy held
    ``[DONE]`` until the upstream closed its body: an upstream that sends its last
    bytes later (a keep-alive comment after ``[DONE]``, a lingering gateway) kept the
    client waiting for an answer it already had. ``[DONE]`` now goes once the answer
    is stored, and what follows it is relayed."""
    payload = CHAT_STREAMS["logprobs"]

    async def lingering(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(payload)
        await asyncio.sleep(2.0)
        await resp.write(b": bye\n\n")
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", lingering)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    proxy = await start_proxy(f"http://127.0.0.1:{port}/v1", tmp_path / "d")
    try:
        sdk = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
        started = time.monotonic()
        stream = await sdk.chat.completions.create(model="m", messages=USER, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream
                        if c.choices])
        assert text == "Hi" and time.monotonic() - started < 1.5
        await stream.close()
        await proxy.settle()
        (thread,) = proxy.engine.export()["threads"]
        assert thread["messages"][-1]["message"]["content"] == "Hi"
        status, _, got = await post(proxy.base_url + "/chat/completions",
                                    {"model": "m", "messages": USER, "stream": True})
        assert got == payload + b": bye\n\n"  # every byte, [DONE] first
        await proxy.settle()
    finally:
        await proxy.close()
        await runner.cleanup()
