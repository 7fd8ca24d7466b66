"""The proxy core, end to end: the real openai SDK -> proxy -> fake upstream on loopback.

These tests pin transparency (bytes, headers, statuses, errors) of chat completions
and pass-through paths. Memory injection is switched off in the ``core`` proxy so
that "the upstream receives exactly the client's bytes" is a hard equality; one test
checks what still holds with injection on.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest
from yarl import URL

from proxy.headers import HOP_BY_HOP
from tests.conftest import TEST_KEY, RunningProxy, closed_port, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream, Reply, bare_close

MakeProxy = Callable[..., Awaitable[RunningProxy]]
NO_INJECTION = {"enabled": False}
NO_TOOLS = {"enabled": False}  # no memory tools: the request body stays the client's


@pytest.fixture
async def core(make_proxy: MakeProxy) -> RunningProxy:
    """A proxy that captures but does not rewrite requests (injection off)."""
    return await make_proxy(injection=NO_INJECTION, tools=NO_TOOLS)


class SDK:
    """One face over the sync and async openai clients for use inside async tests.

    The sync client blocks, so its calls run in a thread (``asyncio.to_thread``) and
    the proxy, served by this event loop, keeps answering.
    """

    def __init__(self, kind: str, base_url: str, api_key: str = TEST_KEY) -> None:
        self.kind = kind
        cls = openai.OpenAI if kind == "sync" else openai.AsyncOpenAI
        self.client: Any = cls(base_url=base_url, api_key=api_key, max_retries=0)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.kind == "sync":
            return await asyncio.to_thread(fn, *args, **kwargs)
        return await fn(*args, **kwargs)

    async def create(self, **kw: Any) -> Any:
        return await self.call(self.client.chat.completions.create, **kw)

    async def create_raw(self, **kw: Any) -> Any:
        return await self.call(self.client.chat.completions.with_raw_response.create, **kw)

    async def stream(self, **kw: Any) -> list[Any]:
        """Stream a completion and return every chunk the SDK yielded."""
        if self.kind == "sync":
            return await asyncio.to_thread(
                lambda: list(self.client.chat.completions.create(stream=True, **kw)))
        return [c async for c in await self.client.chat.completions.create(stream=True, **kw)]

    async def final_completion(self, **kw: Any) -> Any:
        """The SDK's own reassembly of a stream (``chat.completions.stream``)."""
        if self.kind == "sync":
            def run() -> Any:
                with self.client.chat.completions.stream(**kw) as s:
                    return s.get_final_completion()
            return await asyncio.to_thread(run)
        async with self.client.chat.completions.stream(**kw) as s:
            return await s.get_final_completion()

    async def error(self, fn: Callable[..., Any], **kw: Any) -> openai.APIStatusError:
        """Run ``fn`` expecting an ``APIStatusError``; return it."""
        with pytest.raises(openai.APIStatusError) as info:
            result = await self.call(fn, **kw)
            if kw.get("stream"):  # a stream that did not fail at once
                await self.call(lambda: list(result)) if self.kind == "sync" else [
                    c async for c in result]
        return info.value

    async def close(self) -> None:
        await self.call(self.client.close)


@pytest.fixture(params=["sync", "async"])
async def sdk(request: pytest.FixtureRequest, core: RunningProxy) -> AsyncIterator[SDK]:
    client = SDK(request.param, core.base_url)
    yield client
    await client.close()


def text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


USER = [{"role": "user", "content": "What is the capital of Switzerland?"}]


# -- chat: plain, streamed, tool calls ------------------------------------------------


async def test_non_stream(sdk: SDK, core: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push(Reply(content="Bern.", headers={"x-request-id": "req_up_1"}))
    raw = await sdk.create_raw(model="gpt-test", messages=USER)
    completion = raw.parse()
    assert completion.choices[0].message.content == "Bern."
    assert completion.usage.total_tokens == 15
    assert raw.headers["x-lcm-request-id"].startswith("req_")
    assert raw.headers["x-request-id"] == "req_up_1"
    (sent,) = upstream.chat_requests
    assert sent["json"]["messages"] == USER
    assert sent["headers"]["Authorization"] == f"Bearer {TEST_KEY}"


async def test_stream_with_include_usage(sdk: SDK, upstream: FakeUpstream) -> None:
    answer = "Bern is the federal city. Zürich is larger. 🇨🇭"
    upstream.push(Reply(content=answer, piece=3))
    chunks = await sdk.stream(model="m", messages=USER, stream_options={"include_usage": True})
    assert text_of(chunks) == answer
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 15
    assert [c.usage for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
TOOL_CALLS = [
    {"id": "call_weather_1", "name": "get_weather", "arguments": '{"city": "Bern"}'},
    {"id": "call_weather_2", "name": "get_weather",
     "arguments": '{"city": "Genève", "note": "a \\"quoted\\" word"}'},
]


async def test_streamed_tool_calls_reassembled_by_the_sdk(
    sdk: SDK, upstream: FakeUpstream
) -> None:
    upstream.push(Reply(content=None, tool_calls=TOOL_CALLS, write_size=5, keepalive=True))
    final = await sdk.final_completion(model="m", messages=USER, tools=TOOLS)
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.type, c.function.name, c.function.arguments)
            for c in message.tool_calls] == [
        (t["id"], "function", t["name"], t["arguments"]) for t in TOOL_CALLS]


async def test_streamed_tool_calls_are_stored(core: RunningProxy, upstream: FakeUpstream) -> None:
    client = SDK("async", core.base_url)
    upstream.push(Reply(content="Let me check.", tool_calls=TOOL_CALLS, write_size=3, crlf=True))
    chunks = await client.stream(model="m", messages=USER, tools=TOOLS)
    assert text_of(chunks) == "Let me check."
    await core.settle()
    (thread,) = core.engine.export()["threads"]
    stored = thread["messages"][-1]["message"]
    assert stored["content"] == "Let me check."
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in stored["tool_calls"]] == [
        (t["id"], t["name"], t["arguments"]) for t in TOOL_CALLS]
    await client.close()


# -- hostile chunking: the client sees exactly the upstream's bytes --------------------


async def _post_raw(url: str, body: dict[str, Any]) -> tuple[int, Any, bytes]:
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=orjson.dumps(body),
                                headers={"Authorization": f"Bearer {TEST_KEY}",
                                         "Content-Type": "application/json"}) as resp:
            return resp.status, resp.headers, await resp.read()


@pytest.mark.parametrize("write_size", range(1, 8))
@pytest.mark.parametrize("crlf,keepalive", [(False, False), (True, True)],
                         ids=["lf", "crlf-keepalive"])
async def test_hostile_chunking_reaches_the_client_byte_identical(
    core: RunningProxy, upstream: FakeUpstream, write_size: int, crlf: bool, keepalive: bool
) -> None:
    body = {"model": "m", "messages": USER, "stream": True,
            "stream_options": {"include_usage": True}}
    payload = upstream.stream_bytes(body, Reply(content="Grüezi 👋 from Bern", piece=2,
                                                tool_calls=TOOL_CALLS[1:], crlf=crlf,
                                                keepalive=keepalive))
    upstream.push(Reply(raw_stream=payload, write_size=write_size))
    status, headers, received = await _post_raw(core.base_url + "/chat/completions", body)
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    assert received == payload
    await core.settle()
    (thread,) = core.engine.export()["threads"]
    reply = thread["messages"][-1]["message"]
    assert reply["content"] == "Grüezi 👋 from Bern"
    assert reply["tool_calls"][0]["function"]["arguments"] == TOOL_CALLS[1]["arguments"]


@pytest.mark.parametrize("write_size,crlf,keepalive", [(1, True, True), (4, False, False)])
async def test_hostile_chunking_byte_identical_with_memory_features_on(
    make_proxy: MakeProxy, upstream: FakeUpstream, write_size: int, crlf: bool,
    keepalive: bool
) -> None:
    """Injection and memory tools on (the defaults): a reply that calls no memory tool
    still reaches the client exactly as the upstream sent it."""
    running = await make_proxy()
    body = {"model": "m", "messages": USER, "stream": True,
            "stream_options": {"include_usage": True}}
    payload = upstream.stream_bytes(body, Reply(content="Grüezi 👋 from Bern", piece=2,
                                                tool_calls=TOOL_CALLS, crlf=crlf,
                                                keepalive=keepalive))
    upstream.push(Reply(raw_stream=payload, write_size=write_size))
    status, _, received = await _post_raw(running.base_url + "/chat/completions", body)
    assert status == 200
    assert received == payload


@pytest.mark.parametrize("write_size,crlf,keepalive", [(1, True, True), (3, False, True),
                                                        (7, True, False)])
async def test_hostile_chunking_through_the_sdk(
    sdk: SDK, upstream: FakeUpstream, write_size: int, crlf: bool, keepalive: bool
) -> None:
    answer = "Line one\nLine two\r\nand 日本語"
    upstream.push(Reply(content=answer, piece=1, write_size=write_size, crlf=crlf,
                        keepalive=keepalive))
    chunks = await sdk.stream(model="m", messages=USER)
    assert text_of(chunks) == answer


async def test_first_chunk_arrives_before_the_upstream_finishes(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    upstream.push(Reply(content="x" * 60, piece=1, write_size=40, delay=0.05))
    client = openai.AsyncOpenAI(base_url=core.base_url, api_key=TEST_KEY, max_retries=0)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    seen_unfinished = False
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            seen_unfinished = upstream.finished_streams == 0
            break
    assert seen_unfinished, "the proxy buffered the stream instead of relaying it"
    await stream.close()
    await client.close()


async def test_done_in_the_content_does_not_hold_the_stream_back(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """Only the ``data: [DONE]`` event waits for the answer to be stored; the text
    "[DONE]" inside a delta (a model ticking off steps) is relayed as it comes."""
    upstream.push(Reply(content="Step 1 [DONE] " + "y" * 60, piece=20, write_size=40,
                        delay=0.05))
    client = openai.AsyncOpenAI(base_url=core.base_url, api_key=TEST_KEY, max_retries=0)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    text, seen_unfinished = "", False
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
            if "[DONE]" in text and len(text) > 20:
                seen_unfinished = upstream.finished_streams == 0
                break
    assert seen_unfinished, "the text [DONE] held the rest of the stream back"
    await stream.close()
    await client.close()


# -- upstream errors pass through unchanged ------------------------------------------

ERROR_HEADERS = {
    "retry-after": "7",
    "x-ratelimit-limit-requests": "500",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": "7s",
    "x-ratelimit-limit-tokens": "30000",
    "x-request-id": "req_upstream_err",
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("status,exc_type,err_type", [
    (429, openai.RateLimitError, "rate_limit_exceeded"),
    (500, openai.InternalServerError, "server_error"),
])
async def test_upstream_errors_pass_through(
    sdk: SDK, core: RunningProxy, upstream: FakeUpstream, stream: bool,
    status: int, exc_type: type[openai.APIStatusError], err_type: str,
) -> None:
    error = {"message": f"upstream says {status}", "type": err_type, "param": None,
             "code": "x_code"}
    upstream.push(Reply(status=status, error=error, headers=ERROR_HEADERS))
    exc = await sdk.error(sdk.client.chat.completions.create, model="m", messages=USER,
                          stream=stream)
    assert type(exc) is exc_type
    assert exc.status_code == status
    assert exc.body == error
    assert exc.request_id == "req_upstream_err"
    for name, value in ERROR_HEADERS.items():
        assert exc.response.headers[name] == value
    assert exc.response.headers["x-lcm-request-id"].startswith("req_")
    # The body is the upstream's, byte for byte.
    assert exc.response.content == json.dumps({"error": error}).encode()
    await core.settle()
    events = core.engine.export(events=True)["events"]
    assert events[-1]["kind"] == "response"
    assert events[-1]["data"]["outcome"] == "upstream_error"
    assert events[-1]["data"]["status"] == status
    assert all(m["role"] == "user" for t in core.engine.export()["threads"]
               for m in t["messages"])


# -- other /v1 paths ------------------------------------------------------------------


async def test_models_and_embeddings_via_sdk(sdk: SDK, upstream: FakeUpstream) -> None:
    models = await sdk.call(sdk.client.models.list)
    assert [m.id for m in models.data] == ["fake-model"]
    emb = await sdk.call(sdk.client.embeddings.create, model="text-embedding-3-small",
                         input=["alpha", "beta"], encoding_format="float")
    assert [d.embedding for d in emb.data] == [[0.1, 0.2, 0.3]] * 2
    assert emb.model == "text-embedding-3-small"
    get, post = upstream.requests
    assert (get["method"], get["path"]) == ("GET", "/v1/models")
    assert (post["method"], post["path"]) == ("POST", "/v1/embeddings")
    assert post["json"]["input"] == ["alpha", "beta"]
    assert get["headers"]["Authorization"] == post["headers"]["Authorization"] == (
        f"Bearer {TEST_KEY}")


def _hostile_headers() -> dict[str, str]:
    return {
        "Authorization": "Bearer sk-client-key",
        "Connection": "keep-alive, X-Hop-Custom",
        "X-Hop-Custom": "only for this hop",
        "Keep-Alive": "timeout=5",
        "Proxy-Authorization": "Basic c2VjcmV0",
        "TE": "trailers",
        "X-LCM-Session": "session-1",
        "X-LCM-Role": "coder",
        "X-Custom-End-To-End": "kept",
        "OpenAI-Organization": "org-123",
        "Content-Type": "application/octet-stream",
    }


def _assert_clean_forward(received: Any) -> None:
    names = {n.lower() for n in received}
    assert not {n for n in names if n.startswith("x-lcm-")}
    assert not names & HOP_BY_HOP, names & HOP_BY_HOP
    assert "x-hop-custom" not in names  # named in Connection: hop-by-hop too
    assert received["X-Custom-End-To-End"] == "kept"
    assert received["OpenAI-Organization"] == "org-123"


async def test_passthrough_forwards_method_path_query_body(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    body = bytes(range(256)) * 40  # binary, 10 KiB
    path = "/v1/files/file-abc/content?purpose=fine%2Dtune&x=1&x=2&q=a%20b+c"
    async with aiohttp.ClientSession() as session:
        # encoded=True: send the path exactly as written (yarl would normalise %2D).
        async with session.post(URL(core.root + path, encoded=True), data=body,
                                headers=_hostile_headers()) as resp:
            assert resp.status == 200
            assert resp.headers["x-echo"] == "1"
            assert resp.headers["x-lcm-request-id"].startswith("req_")
            echoed = await resp.json()
    (got,) = upstream.requests
    assert got["method"] == "POST"
    assert got["raw_path"] == path  # path and query exactly as the client encoded them
    assert got["raw"] == body
    assert got["headers"]["Content-Length"] == str(len(body))
    assert echoed["content_length"] == str(len(body))
    assert got["headers"]["Authorization"] == "Bearer sk-client-key"
    _assert_clean_forward(got["headers"])


async def test_passthrough_keeps_the_declared_length_of_downloads(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(core.base_url + "/files/file-1/content") as resp:
            body = await resp.read()
            assert resp.headers["Content-Length"] == str(len(body))
            assert "Transfer-Encoding" not in resp.headers
        async with session.head(core.base_url + "/files/file-1/content") as resp:
            assert resp.status == 200
            assert int(resp.headers["Content-Length"]) > 0  # the size a GET would send
            assert await resp.read() == b""


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
async def test_passthrough_other_methods(
    core: RunningProxy, upstream: FakeUpstream, method: str
) -> None:
    async with aiohttp.ClientSession() as session:
        data = None if method in ("GET", "DELETE") else b'{"a": 1}'
        async with session.request(method, core.base_url + "/vector_stores/vs_1?limit=2",
                                   data=data) as resp:
            assert resp.status == 200
            assert (await resp.json())["method"] == method
    (got,) = upstream.requests
    assert (got["method"], got["raw_path"]) == (method, "/v1/vector_stores/vs_1?limit=2")
    assert got["raw"] == (data or b"")


async def test_passthrough_relays_a_websocket(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """A WebSocket upgrade (the Realtime API) went upstream as a plain GET without
    its ``Upgrade`` (a hop-by-hop header), and the client's handshake failed on the
    answer: no Realtime session could pass the proxy. It is relayed now: the
    handshake's headers, query and subprotocol, every message both ways, the
    close codes, and a refused upgrade's status and headers."""
    url = core.base_url + "/realtime?model=gpt-realtime&x=1"
    auth = {"Authorization": f"Bearer {TEST_KEY}", "OpenAI-Beta": "realtime=v1"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers=auth,
                                      protocols=("other", "realtime")) as ws:
            assert ws.protocol == "realtime"
            assert ws._response.headers["x-request-id"] == "req_ws"
            await ws.send_str('{"type": "session.update"}')
            assert await ws.receive_str() == 'echo: {"type": "session.update"}'
            await ws.send_bytes(b"\x00\x01\xff")
            assert await ws.receive_bytes() == b"\xff\x01\x00"
            await ws.send_str("bye")
            closing = await ws.receive()
            assert (closing.type, closing.data, closing.extra) == (
                aiohttp.WSMsgType.CLOSE, 4000, "done")
        async with session.ws_connect(url, headers=auth) as ws:
            await ws.send_str("hi")
            assert await ws.receive_str() == "echo: hi"
            await ws.close(code=4001)  # the client's close reaches the upstream
        for _ in range(100):
            if len(upstream.ws_closes) == 2:
                break
            await asyncio.sleep(0.02)
        assert len(upstream.ws_closes) == 2 and upstream.ws_closes[1] == 4001
        got = upstream.requests[0]
        assert got["raw_path"] == "/v1/realtime?model=gpt-realtime&x=1"
        assert got["headers"]["OpenAI-Beta"] == "realtime=v1"
        assert got["headers"]["Authorization"] == f"Bearer {TEST_KEY}"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url + "&refuse=1", headers=auth)
        assert refused.value.status == 401
        assert refused.value.headers is not None
        assert refused.value.headers["x-request-id"] == "req_ws_refused"


async def test_a_close_without_a_code_is_relayed_as_a_normal_close(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """A close frame without a status code (a browser's ``ws.close()``) reads as code
    0, and the relay sent that on: the other side failed the connection with a
    protocol error (1002, "Invalid close code: 0") instead of closing it."""
    url = core.base_url + "/realtime?model=m"
    auth = {"Authorization": f"Bearer {TEST_KEY}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers=auth) as ws:
            await ws.send_str("bye-bare")  # the upstream closes without a code
            closing = await ws.receive()
            assert (closing.type, closing.data) == (aiohttp.WSMsgType.CLOSE, 1000)
        async with session.ws_connect(url, headers=auth) as ws:
            await ws.send_str("hi")
            assert await ws.receive_str() == "echo: hi"
            await bare_close(ws)  # the client closes without a code
            assert (await ws.receive()).type == aiohttp.WSMsgType.CLOSE
        for _ in range(100):
            if len(upstream.ws_closes) == 2:
                break
            await asyncio.sleep(0.02)
    assert upstream.ws_closes[1] == 1000


async def test_shutdown_closes_a_relayed_websocket_as_going_away(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    """A relayed session never ends by itself: shutdown waited for it until
    ``shutdown_timeout_seconds`` and then dropped both hops without a close frame.
    Both hops are now closed with 1001 as the proxy shuts down."""
    running = await start_proxy(upstream.base_url, tmp_path / "d")
    auth = {"Authorization": f"Bearer {TEST_KEY}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(running.base_url + "/realtime?model=m",
                                      headers=auth) as ws:
            await ws.send_str("hi")
            assert await ws.receive_str() == "echo: hi"
            shutdown = asyncio.create_task(running.close())
            closing = await asyncio.wait_for(ws.receive(), 10)
            await asyncio.wait_for(shutdown, 10)
    assert (closing.type, closing.data) == (aiohttp.WSMsgType.CLOSE, 1001)
    for _ in range(100):
        if upstream.ws_closes:
            break
        await asyncio.sleep(0.02)
    assert upstream.ws_closes == [1001]


async def test_a_websocket_client_that_stops_answering_ends_the_relay(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    """A client gone without a close (its network dropped) left the upstream session
    open for good: nothing pinged the client, and the proxy answered the upstream's
    pings for it. The proxy now pings each hop; one that stops answering ends both."""
    quick = await make_proxy(injection=NO_INJECTION, tools={**NO_TOOLS, "heartbeat_seconds": 0.2})
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(quick.base_url + "/realtime?model=m", autoping=False,
                                      headers={"Authorization": f"Bearer {TEST_KEY}"})
        await ws.send_str("hi")  # then reads nothing: no pong goes back
        for _ in range(100):
            if upstream.ws_closes:
                break
            await asyncio.sleep(0.02)
        assert upstream.ws_closes == [aiohttp.WSCloseCode.INTERNAL_ERROR]
        await ws.close()


async def test_an_invalid_websocket_handshake_never_reaches_the_upstream(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """An upgrade without ``Sec-WebSocket-Key`` was refused only after the proxy had
    opened a WebSocket to the upstream (a Realtime session per bad request)."""
    async with aiohttp.ClientSession() as session:
        async with session.get(core.base_url + "/realtime?model=m",
                               headers={"Upgrade": "websocket", "Connection": "Upgrade",
                                        "Authorization": f"Bearer {TEST_KEY}"}) as resp:
            assert resp.status == 400
            err = (await resp.json())["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert (err["type"], err["code"]) == ("invalid_request_error", "invalid_handshake")
    assert upstream.requests == []


async def test_passthrough_streams_a_chunked_upload(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    parts = [b"part-%d;" % i * 100 for i in range(50)]

    async def gen() -> AsyncIterator[bytes]:
        for p in parts:
            yield p

    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + "/uploads/up_1/parts", data=gen()) as resp:
            assert resp.status == 200
    (got,) = upstream.requests
    assert got["raw"] == b"".join(parts)
    assert "Content-Length" not in got["headers"]


async def test_upstream_api_key_replaces_authorization(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    key = "sk-proj-upstream-" + "k" * 30
    running = await make_proxy(proxy={"upstream_api_key": key}, injection=NO_INJECTION,
                               tools=NO_TOOLS)
    client = SDK("async", running.base_url, api_key="sk-client-key-not-for-upstream")
    await client.create(model="m", messages=USER)
    await client.call(client.client.models.list)
    async with aiohttp.ClientSession() as session:
        async with session.post(running.base_url + "/files?x=1", data=b"abc",
                                headers=_hostile_headers()) as resp:
            assert resp.status == 200
    assert [r["headers"]["Authorization"] for r in upstream.requests] == [f"Bearer {key}"] * 3
    _assert_clean_forward(upstream.requests[-1]["headers"])
    await client.close()


# -- the upstream receives exactly the client's bytes ---------------------------------

KITCHEN_SINK: dict[str, Any] = dict(
    model="gpt-test",
    messages=[
        {"role": "developer", "content": "You are terse."},
        {"role": "system", "content": [{"type": "text", "text": "System as parts."}]},
        {"role": "user", "content": [
            {"type": "text", "text": "What is in this image? 日本語 😀"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=",
                                                "detail": "low"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "look", "arguments": '{"x": 1}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
        {"role": "assistant", "content": None,
         "function_call": {"name": "legacy", "arguments": "{}"}},
        {"role": "function", "name": "legacy", "content": "legacy result"},
        {"role": "user", "content": "And now?", "name": "alice"},
    ],
    n=2,
    logprobs=True,
    top_logprobs=3,
    response_format={"type": "json_schema", "json_schema": {
        "name": "answer", "strict": True,
        "schema": {"type": "object", "properties": {"a": {"type": "string"}},
                   "required": ["a"], "additionalProperties": False}}},
    tools=TOOLS,
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
    parallel_tool_calls=False,
    reasoning_effort="low",
    seed=42,
    temperature=0.2,
    metadata={"k": "v"},
    extra_body={
        "vendor_extension": {"top_k": 40, "safe_mode": None, "nested": [1, 2.5, "x"]},
        "unknown_future_field": True,
        "huge_integer": 2**70,
    },
)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_request_reaches_upstream_byte_identical(
    sdk: SDK, upstream: FakeUpstream, stream: bool
) -> None:
    kwargs = dict(KITCHEN_SINK, stream=stream)
    direct = SDK(sdk.kind, upstream.base_url)
    first = await direct.create(**kwargs)
    if stream:
        await direct.call(lambda: list(first)) if sdk.kind == "sync" else [c async for c in first]
    await direct.close()
    result = await sdk.create(**kwargs)
    if stream:
        await sdk.call(lambda: list(result)) if sdk.kind == "sync" else [c async for c in result]
    sent_direct, sent_via_proxy = upstream.chat_requests
    assert b"huge_integer" in sent_direct["raw"] and b"input_audio" in sent_direct["raw"]
    assert sent_via_proxy["raw"] == sent_direct["raw"]


async def test_fields_survive_memory_injection(
    make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    """With injection on (memory tools off), only the newest user message may change."""
    running = await make_proxy(tools=NO_TOOLS)
    direct = SDK("async", upstream.base_url)
    await direct.create(**KITCHEN_SINK)
    await direct.close()
    client = SDK("async", running.base_url)
    await client.create(**KITCHEN_SINK)
    await client.close()
    a, b = (json.loads(r["raw"]) for r in upstream.chat_requests)  # stdlib: exact integers
    assert b["huge_integer"] == 2**70
    assert b["messages"][:-1] == a["messages"][:-1]
    assert {k: v for k, v in b.items() if k != "messages"} == {
        k: v for k, v in a.items() if k != "messages"}
    assert b["messages"][-1]["name"] == "alice"


# -- bodies the proxy does not understand ----------------------------------------------


async def test_invalid_json_is_a_400_in_openai_shape(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + "/chat/completions",
                                data=b'{"model": "m", "messages": [',
                                headers={"Content-Type": "application/json"}) as resp:
            assert resp.status == 400
            assert resp.content_type == "application/json"
            assert resp.headers["x-lcm-request-id"].startswith("req_")
            err = (await resp.json())["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error" and err["code"] == "invalid_json"
    assert isinstance(err["message"], str) and err["message"]
    assert upstream.requests == []
    await core.settle()
    (event,) = core.engine.export(events=True)["events"]
    assert event["kind"] == "unparsed"


async def test_an_unreadable_body_is_filed_under_its_tenant_and_purged_with_it(
    core: RunningProxy, upstream: FakeUpstream
) -> None:
    """A body the proxy cannot read is kept (an ``unparsed`` event) under the tenant
    and role its headers name: a tenant's export holds it, and purging the tenant
    removes it (it may hold anything the client pasted)."""
    async with aiohttp.ClientSession() as session:
        for key in ("sk-unparsed-tenant-a-0001", "sk-unparsed-tenant-b-0002"):
            async with session.post(core.base_url + "/chat/completions",
                                    data=b'{"model": "m", "messages": "PRIVATE-DIAG-42"}',
                                    headers={"Authorization": f"Bearer {key}",
                                             "X-LCM-Role": "coder",
                                             "Content-Type": "application/json"}) as resp:
                assert resp.status in (200, 400)
    await core.settle()
    events = core.engine.export(events=True)["events"]
    assert len(events) == 2
    rows = sql_read(core.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT tenant, role FROM events WHERE kind='unparsed' ORDER BY id")])
    (ta, role_a), (tb, _) = rows
    assert ta.startswith("t_") and ta != tb and role_a == "coder"
    assert len(core.engine.export(tenant=ta, events=True)["events"]) == 1
    core.engine.purge(tenant=ta)
    left = core.engine.export(events=True)["events"]  # tenant b's, and the purge's audit
    assert [e["kind"] for e in left] == ["unparsed", "purge"]
    assert b"PRIVATE" not in orjson.dumps(core.engine.export(tenant=ta, events=True))
    assert len(core.engine.export(tenant=tb, events=True)["events"]) == 1


@pytest.mark.parametrize("path", ["/chat/completions", "/responses", "/messages"])
@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
async def test_nan_and_infinity_are_not_json_and_reach_no_upstream(
        core: RunningProxy, upstream: FakeUpstream, path: str, constant: bytes) -> None:
    # the stdlib reads them; re-serialised, the parameter became null upstream
    raw = (b'{"model": "m", "temperature": ' + constant + b', "max_tokens": 9,'
           b' "messages": [{"role": "user", "content": "hi"}], "input": "hi"}')
    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + path, data=raw,
                                headers={"Content-Type": "application/json"}) as resp:
            assert resp.status == 400
            err = (await resp.json())["error"]
    assert constant.lstrip(b"-").decode() in err["message"]
    assert upstream.requests == []


@pytest.mark.parametrize("raw", [b"[1, 2, 3]", b'{"model": "m"}', b'"just a string"',
                                 b'{"messages": "not a list"}'])
async def test_non_chat_json_is_forwarded_untouched(
    core: RunningProxy, upstream: FakeUpstream, raw: bytes
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + "/chat/completions", data=raw,
                                headers={"Content-Type": "application/json"}) as resp:
            status, body, headers = resp.status, await resp.read(), resp.headers
    (got,) = upstream.requests
    assert got["raw"] == raw
    if got["json"] is not None and isinstance(got["json"], dict):
        return  # the fake answered it as a chat; forwarding is what we checked
    assert status == 400  # the upstream's answer, relayed
    assert headers["x-request-id"] == "req_fake_bad_body"
    assert orjson.loads(body)["error"]["message"] == "request body must be a JSON object"


def _encoded(encoding: str, plain: bytes) -> bytes:
    """``plain`` compressed as a client sends it with ``Content-Encoding: encoding``."""
    if encoding == "zstd":
        from backports import zstd  # Python 3.14: compression.zstd

        return zstd.compress(plain)
    if encoding == "br":
        import brotli

        return bytes(brotli.compress(plain))
    return gzip.compress(plain)


@pytest.mark.parametrize("encoding", ["gzip", "zstd", "br"])
@pytest.mark.parametrize("memory", [False, True], ids=["core", "memory-on"])
async def test_encoded_chat_body_reaches_the_upstream_decoded(
    make_proxy: MakeProxy, upstream: FakeUpstream, memory: bool, encoding: str
) -> None:
    """gzip, and zstd as the Codex CLI sends it (br too): decoded at the proxy's hop; the
    upstream is asked for what the proxy asked before those packages were installed."""
    running = await (make_proxy() if memory else make_proxy(injection=NO_INJECTION,
                                                              tools=NO_TOOLS))
    plain = orjson.dumps({"model": "m", "messages": USER})
    async with aiohttp.ClientSession() as session:
        async with session.post(running.base_url + "/chat/completions",
                                data=_encoded(encoding, plain),
                                headers={"Content-Type": "application/json",
                                         "Content-Encoding": encoding,
                                         "Accept-Encoding": "zstd"}) as resp:
            assert resp.status == 200, await resp.text()
            answer = await resp.json()
    assert "What is the capital" in answer["choices"][0]["message"]["content"]
    (got,) = upstream.chat_requests
    assert "Content-Encoding" not in got["headers"]
    assert got["headers"]["Accept-Encoding"] == "gzip, deflate"
    assert got["json"]["messages"][-1]["content"].endswith(USER[-1]["content"])
    if not memory:
        assert got["raw"] == plain


@pytest.mark.parametrize("encoding", ["gzip", "zstd", "br"])
async def test_encoded_passthrough_body_reaches_the_upstream_decoded(
    core: RunningProxy, upstream: FakeUpstream, encoding: str
) -> None:
    plain = b'{"input": "hello"}' * 500
    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + "/files?x=1", data=_encoded(encoding, plain),
                                headers={"Content-Encoding": encoding}) as resp:
            assert resp.status == 200, await resp.text()
    (got,) = upstream.requests
    assert got["raw"] == plain
    assert "Content-Encoding" not in got["headers"]
    assert got["headers"].get("Content-Length") in (None, str(len(plain)))


@pytest.mark.parametrize("path", ["/chat/completions", "/files"])
async def test_invalid_gzip_body_is_a_400_in_openai_shape(
    core: RunningProxy, upstream: FakeUpstream, path: str
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(core.base_url + path, data=b'{"model":"x"}',
                                headers={"Content-Type": "application/json",
                                         "Content-Encoding": "gzip"}) as resp:
            assert resp.status == 400
            assert resp.headers["x-lcm-request-id"].startswith("req_")
            err = (await resp.json())["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error" and err["code"] == "invalid_body"
    assert "gzip" in err["message"]
    assert [r for r in upstream.requests if r["method"] == "POST" and r["raw"]] == []


async def test_upstream_unreachable_is_a_502(
    sdk: SDK, make_proxy: MakeProxy, upstream: FakeUpstream
) -> None:
    dead = await make_proxy(upstream_url=f"http://127.0.0.1:{closed_port()}/v1",
                            injection=NO_INJECTION, tools=NO_TOOLS)
    client = SDK(sdk.kind, dead.base_url)
    for fn, kw in ((client.client.chat.completions.create, {"model": "m", "messages": USER}),
                   (client.client.models.list, {})):
        exc = await client.error(fn, **kw)
        assert isinstance(exc, openai.InternalServerError)
        assert exc.status_code == 502
        assert exc.body["type"] == "upstream_error"
        assert exc.body["code"] == "upstream_unreachable"
        assert set(exc.body) == {"message", "type", "param", "code"}
        assert exc.response.headers["x-lcm-request-id"].startswith("req_")
    await client.close()
    async with aiohttp.ClientSession() as session:
        async with session.get(dead.root + "/lcm/health") as resp:
            assert resp.status == 200


async def test_body_over_limit_is_a_413(make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    small = await make_proxy(proxy={"max_body_bytes": 4096}, injection=NO_INJECTION,
                             tools=NO_TOOLS)
    client = SDK("async", small.base_url)
    exc = await client.error(client.client.chat.completions.create, model="m",
                             messages=[{"role": "user", "content": "x" * 8000}])
    assert exc.status_code == 413
    assert exc.body["type"] == "invalid_request_error"
    assert exc.body["code"] == "request_too_large"
    assert set(exc.body) == {"message", "type", "param", "code"}
    assert upstream.requests == []
    ok = await client.create(model="m", messages=[{"role": "user", "content": "small"}])
    assert ok.choices[0].message.content == "echo: small"
    await client.close()


# -- client disconnects ---------------------------------------------------------------


async def test_client_disconnect_mid_stream(core: RunningProxy, upstream: FakeUpstream) -> None:
    full = "".join(f"word{i} " for i in range(100))
    upstream.push(Reply(content=full, piece=5, write_size=64, delay=0.02))
    client = openai.AsyncOpenAI(base_url=core.base_url, api_key=TEST_KEY, max_retries=0)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "tell me a long story"}],
        stream=True)
    received = ""
    async for chunk in stream:
        received += chunk.choices[0].delta.content or "" if chunk.choices else ""
        if len(received) >= 10:
            break
    await stream.close()  # drops the connection mid-stream
    await core.settle()
    # The proxy closed its upstream connection: the fake saw the abort, and the
    # stream did not run to its end.
    assert upstream.aborted == 1
    assert upstream.finished_streams == 0
    # The proxy stays healthy.
    upstream.push(Reply(content="still here"))
    again = await client.chat.completions.create(model="m", messages=USER)
    assert again.choices[0].message.content == "still here"
    async with aiohttp.ClientSession() as session:
        async with session.get(core.root + "/lcm/health") as resp:
            assert resp.status == 200
    await core.settle()
    # The partial answer is evidence of what happened, not an answer.
    data = core.engine.export(events=True)
    texts = [m["text"] for t in data["threads"] for m in t["messages"]]
    assert "tell me a long story" in texts
    assert not any(t.startswith("word0") for t in texts)
    (incomplete,) = [e for e in data["events"]
                     if e["kind"] == "response" and e["data"]["outcome"] == "incomplete"]
    assert incomplete["data"]["client_gone"] is True
    partial = incomplete["data"]["partial_choices"][0]["content"]
    assert partial.startswith(received) and full.startswith(partial) and partial != full
    await client.close()


async def test_upstream_drop_mid_stream_reaches_the_client_as_an_error(
    sdk: SDK, core: RunningProxy, upstream: FakeUpstream
) -> None:
    """A cut-off upstream must not look like a complete answer to the client."""
    upstream.push(Reply(content="abcdefghij" * 20, piece=2, write_size=50, drop_after=700))
    with pytest.raises(openai.APIConnectionError):
        await sdk.stream(model="m", messages=USER)
    await core.settle()
    data = core.engine.export(events=True)
    assert [m["role"] for t in data["threads"] for m in t["messages"]] == ["user"]
    event = data["events"][-1]
    assert event["data"]["outcome"] == "incomplete"
    assert event["data"]["upstream_error"]
    # The proxy is fine afterwards.
    upstream.push(Reply(content="next"))
    assert (await sdk.create(model="m", messages=USER)).choices[0].message.content == "next"


# -- errors raised inside the proxy -----------------------------------------------------


async def _serve_with_request_context(handler: Any) -> tuple[aiohttp.web.AppRunner, str]:
    """A real app with the proxy's middleware around ``handler`` (not the proxy routes)."""
    from aiohttp import web

    from proxy.appkeys import METRICS, SETTINGS
    from proxy.metrics import Metrics
    from proxy.middlewares import request_context
    from proxy.settings import load_settings

    app = web.Application(middlewares=[request_context])
    app[METRICS] = Metrics()
    app[SETTINGS] = load_settings(None, environ={})
    app.router.add_get("/x", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/x"


async def test_error_before_the_response_is_an_openai_error() -> None:
    async def handler(request: Any) -> Any:
        raise ValueError("a bug")

    runner, url = await _serve_with_request_context(handler)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as resp:
                assert resp.status == 500
                assert resp.headers["x-lcm-request-id"].startswith("req_")
                assert (await resp.json())["error"]["type"] == "internal_error"
    finally:
        await runner.cleanup()


async def test_error_after_the_response_started_drops_the_connection() -> None:
    """Never a second HTTP response spliced into the body of the first."""
    from aiohttp import web

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: partial\n\n")
        raise RuntimeError("a bug after prepare")

    runner, url = await _serve_with_request_context(handler)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as resp:
                assert resp.status == 200
                received = b""
                with pytest.raises(aiohttp.ClientPayloadError):
                    async for chunk in resp.content.iter_any():
                        received += chunk
        assert received == b"data: partial\n\n"
    finally:
        await runner.cleanup()
