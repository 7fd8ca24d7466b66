"""Replays of transport- and HTTP-level failure kinds, rows 106 on of
docs/evaluation/wire_replays.md: encoded answers, repeated headers, an unterminated last
event, declared lengths, redirects, large and non-JSON bodies, the non-chat routes
(embeddings, audio in and out) and a dropped keep-alive connection. The proxy on its
memory path where a route has one (the memory tools offered), a loopback upstream writing
real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

import asyncio
import base64
import gzip
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import brotli
import openai
import orjson
import pytest
from aiohttp import web
from backports import zstd
from multidict import CIMultiDict

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    JSON,
    MEMORY_CALLS,
    SDK_USER,
    GatedUpstream,
    Scripted,
    gated_proxy,
)
from tests.replay_helpers import events as _events

SSE = {"Content-Type": "text/event-stream"}


class RawUpstream(GatedUpstream):
    """:class:`GatedUpstream` that also keeps each request's raw header lines (repeated
    names included)."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[list[tuple[bytes, bytes]]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.heads.append(list(request.raw_headers))
        return await super().handle(request)


Raw = tuple[RawUpstream, RunningProxy]


@pytest.fixture
async def raw(tmp_path: Path) -> AsyncIterator[Raw]:
    upstream = RawUpstream()
    async with gated_proxy(tmp_path, upstream) as (_, proxy):
        yield upstream, proxy


async def _send(proxy: RunningProxy, method: str, path: str, data: bytes | None = None,
                headers: Any = None) -> tuple[int, Any, bytes]:
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        async with session.request(method, proxy.base_url + path, data=data,
                                   headers=headers if headers is not None else HEADERS,
                                   allow_redirects=False) as resp:
            return resp.status, resp.headers.copy(), await resp.read()


def _pieces(body: bytes, size: int = 7) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)]


def _hidden_then(path: str, final: bytes, **kw: Any) -> list[Scripted]:
    """A hidden memory round, then ``final`` (streams of ``path``), both with ``kw``."""
    return [Scripted([MEMORY_CALLS[path][1]], **kw), Scripted([final], **kw)]


# -- 106: an answer encoded with gzip, br or zstd ---------------------------------------------
# Reported: proxies that advertise or meet an encoding they cannot decode hand the client
# compressed bytes labelled as JSON or SSE (zstd from relays behind CDNs), or decode and
# keep the label. The proxy asks for gzip/deflate only, but a CDN may still answer br or
# zstd: the client must get the plain bytes, without the label, whatever the encoding.
ENCODERS = {"gzip": gzip.compress, "br": brotli.compress, "zstd": zstd.compress}


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_an_encoded_stream_after_a_hidden_round_reaches_the_client_decoded(
        raw: Raw, path: str, encoding: str) -> None:
    upstream, proxy = raw
    encode = ENCODERS[encoding]
    head = {**SSE, "Content-Encoding": encoding}
    upstream.answers.extend([Scripted(_pieces(encode(MEMORY_CALLS[path][1])), headers=head),
                             Scripted(_pieces(encode(FINAL[path])), headers=head)])
    status, headers, got = await _send(proxy, "POST", path, orjson.dumps(MEMORY_CALLS[path][0]))
    assert status == 200 and "Content-Encoding" not in headers
    assert b"done" in got and b"memory_grep" not in got
    assert len(upstream.received) == 2


CHAT_CALL = orjson.dumps({
    "id": "chatcmpl-m", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{
            "id": "call_m", "type": "function", "function": {
                "name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
CHAT_DONE = orjson.dumps({
    "id": "chatcmpl-d", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "done"}}],
    "usage": {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}})


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
async def test_an_encoded_json_answer_reaches_the_sdk_decoded(raw: Raw, encoding: str) -> None:
    upstream, proxy = raw
    head = {**JSON, "Content-Encoding": encoding}
    upstream.answers.extend([Scripted([ENCODERS[encoding](CHAT_CALL)], headers=head),
                             Scripted([ENCODERS[encoding](CHAT_DONE)], headers=head)])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        done = await client.chat.completions.create(model="m", messages=SDK_USER)
    assert done.choices[0].message.content == "done"
    assert done.usage is not None and done.usage.total_tokens == 10, "both rounds summed"


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
async def test_an_encoded_pass_through_answer_reaches_the_client_decoded(
        raw: Raw, encoding: str) -> None:
    upstream, proxy = raw
    models = orjson.dumps({"object": "list", "data": [{"id": "m", "object": "model"}] * 50})
    upstream.answers.append(Scripted([ENCODERS[encoding](models)],
                                     headers={**JSON, "Content-Encoding": encoding}))
    status, headers, got = await _send(proxy, "GET", "/models", headers={
        "Authorization": f"Bearer {TEST_KEY}"})
    assert (status, got) == (200, models)
    assert "Content-Encoding" not in headers
    assert headers.get("Content-Length", str(len(models))) == str(len(models))


# -- 107: repeated response headers ---------------------------------------------------------
# Reported: proxies that copy headers through a dict keep one ``set-cookie`` of several, or
# merge them into one line (which no cookie parser reads back). Each line must reach the
# client: the sticky-session cookies of load balancers in front of upstreams depend on it.
def _repeated(tag: str, base: dict[str, str]) -> CIMultiDict[str]:
    return CIMultiDict([*base.items(), ("Set-Cookie", f"lb{tag}=a; Path=/; HttpOnly"),
                        ("Set-Cookie", f"sess{tag}=b; Expires=Thu, 01 Jan 2037 00:00:00 GMT"),
                        ("Vary", "Origin"), ("Vary", "Accept-Encoding")])


def _lines(headers: Any, name: str) -> list[str]:
    return [v for k, v in headers.items() if k.lower() == name]


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_repeated_response_headers_reach_the_client_line_by_line(
        raw: Raw, path: str) -> None:
    upstream, proxy = raw
    upstream.answers.extend([Scripted([MEMORY_CALLS[path][1]], headers=_repeated("1", SSE)),
                             Scripted([FINAL[path]], headers=_repeated("2", SSE))])
    status, headers, got = await _send(proxy, "POST", path, orjson.dumps(MEMORY_CALLS[path][0]))
    assert status == 200 and b"memory_grep" not in got
    assert _lines(headers, "set-cookie") == [
        "lb2=a; Path=/; HttpOnly", "sess2=b; Expires=Thu, 01 Jan 2037 00:00:00 GMT"]
    assert _lines(headers, "vary") == ["Origin", "Accept-Encoding"]


async def test_repeated_headers_of_a_pass_through_answer_reach_the_client(raw: Raw) -> None:
    upstream, proxy = raw
    upstream.answers.append(Scripted([b"{}"], headers=_repeated("", JSON)))
    status, headers, _ = await _send(proxy, "GET", "/models", headers={})
    assert status == 200
    assert len(_lines(headers, "set-cookie")) == 2 and _lines(headers, "vary") == [
        "Origin", "Accept-Encoding"]


# -- 108: repeated request headers ----------------------------------------------------------
# Reported: a caller's ``anthropic-beta`` lost on the way (400 "Extra inputs are not
# permitted"); a header sent on two lines is one list (RFC 9110 §5.3), so a proxy keeping
# one line drops half the betas. Every line must reach the upstream, on every round.
async def test_repeated_request_headers_reach_every_round(raw: Raw) -> None:
    upstream, proxy = raw
    upstream.answers.extend(_hidden_then("/messages", FINAL["/messages"]))
    sent = CIMultiDict([*HEADERS.items(), ("anthropic-beta", "context-1m-2025-08-07"),
                        ("anthropic-beta", "interleaved-thinking-2025-05-14"),
                        ("X-Trace", "a"), ("X-Trace", "b")])
    status, _, got = await _send(proxy, "POST", "/messages",
                                 orjson.dumps(MEMORY_CALLS["/messages"][0]), headers=sent)
    assert status == 200 and b"memory_grep" not in got
    assert len(upstream.heads) == 2
    for head in upstream.heads:
        beta = [v for k, v in head if k.lower() == b"anthropic-beta"]
        trace = [v for k, v in head if k.lower() == b"x-trace"]
        assert b", ".join(beta) == b"context-1m-2025-08-07, interleaved-thinking-2025-05-14"
        assert b", ".join(trace) == b"a, b"


# -- 109: the last event without its blank line ---------------------------------------------
# Reported: servers and relays that close right after the last ``data:`` line (no blank
# line, or no newline at all); decoders that never flush at the end lose the terminal
# event (``finish_reason``, ``response.completed``, ``message_stop``). The proxy must not
# be one more of them: after a hidden round the answering round's last event reaches the
# client, as the upstream wrote it, or with its blank line where the proxy restates it.
@pytest.mark.parametrize("tail", [b"\n", b""], ids=["one-newline", "no-newline"])
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_an_unterminated_last_event_after_a_hidden_round_reaches_the_client(
        raw: Raw, path: str, tail: bytes) -> None:
    upstream, proxy = raw
    final = FINAL[path].removesuffix(b"\n\n") + tail
    upstream.answers.extend(_hidden_then(path, final))
    status, _, got = await _send(proxy, "POST", path, orjson.dumps(MEMORY_CALLS[path][0]))
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    if path == "/chat/completions":
        assert got.rstrip(b"\n").endswith(b"data: [DONE]")
    else:  # read by a decoder that flushes at the end (openai-node since #2726)
        assert _events(got)[-1]["type"] in ("message_stop", "response.completed")
    if path == "/responses":  # restated with the summed usage: the proxy's own bytes
        assert got.endswith(b"}\n\n")
    else:  # the upstream's bytes, unterminated as it wrote them
        assert got.endswith(final[-30:])


# -- 110: a declared length the proxy's body no longer has --------------------------------------
# Reported: proxies that change a body but keep its ``Content-Length`` (the client waits
# for bytes that never come, or reads a cut body). Some upstreams send a stream buffered
# whole, with its length; after a hidden round the client's body is not that one.
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_stream_with_a_declared_length_reaches_the_client_whole(
        raw: Raw, path: str) -> None:
    upstream, proxy = raw
    first, final = MEMORY_CALLS[path][1], FINAL[path]
    upstream.answers.extend([
        Scripted([first], headers={**SSE, "Content-Length": str(len(first))}),
        Scripted([final], headers={**SSE, "Content-Length": str(len(final))})])
    status, headers, got = await _send(proxy, "POST", path, orjson.dumps(MEMORY_CALLS[path][0]))
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    assert headers.get("Content-Length", str(len(got))) == str(len(got))


async def test_a_json_answer_with_a_declared_length_reaches_the_sdk_whole(raw: Raw) -> None:
    upstream, proxy = raw
    upstream.answers.extend([
        Scripted([CHAT_CALL], headers={**JSON, "Content-Length": str(len(CHAT_CALL))}),
        Scripted([CHAT_DONE], headers={**JSON, "Content-Length": str(len(CHAT_DONE))})])
    status, headers, got = await _send(proxy, "POST", "/chat/completions", orjson.dumps(
        {"model": "m", "messages": SDK_USER}))
    assert status == 200 and headers.get("Content-Length", str(len(got))) == str(len(got))
    assert orjson.loads(got)["usage"]["total_tokens"] == 10


# -- 111: a redirect from the upstream --------------------------------------------------------
# Reported: proxies that follow an upstream's redirect themselves (a POST turned into a
# GET without its body: 405; or the key sent to another host), or that hang on it. A
# transparent proxy relays the 3xx with its ``Location`` and lets the client decide.
@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("path", ["/chat/completions", "/messages", "/embeddings"])
async def test_an_upstream_redirect_reaches_the_client_unfollowed(
        raw: Raw, path: str, status: int) -> None:
    upstream, proxy = raw
    where = "https://api.example.invalid/v1" + path
    upstream.answers.append(Scripted([b""], status=status, headers={"Location": where}))
    body = MEMORY_CALLS.get(path, ({"model": "e", "input": "x"}, b""))[0]
    got_status, headers, got = await _send(proxy, "POST", path, orjson.dumps(body))
    assert (got_status, headers.get("Location"), got) == (status, where, b"")
    assert len(upstream.received) == 1


# -- 112: a body of tens of megabytes -------------------------------------------------------
# Reported: base64 images refused by a proxy's default body limit (1-2 MB) before they
# reach the upstream. Under ``proxy.max_body_bytes`` (32 MiB) the image must reach every
# round byte for byte, on the memory path.
async def test_a_twenty_megabyte_image_reaches_every_round_as_sent(raw: Raw) -> None:
    upstream, proxy = raw
    image = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 60_000).decode()
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is in it?"},
        {"type": "image_url", "image_url": {"url": image}}]}]}
    upstream.answers.extend(_hidden_then("/chat/completions", FINAL["/chat/completions"]))
    status, _, got = await _send(proxy, "POST", "/chat/completions", orjson.dumps(body))
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    assert len(image) > 20_000_000
    assert [r["raw"].count(image.encode()) for r in upstream.received] == [1, 1]


# -- 113: a body that is not JSON on a JSON route ------------------------------------------------
# Reported: proxies that parse the body first answer a malformed one with their own 500,
# or a 404/503 in another shape, which the SDKs cannot read. By design the proxy answers
# a body it cannot parse itself, with the 400 the API would give, in the route's error
# shape (OpenAI's wording and ``invalid_json``; Anthropic's ``invalid_request_error``
# envelope), and sends nothing upstream; JSON that is not an object goes as sent.
@pytest.mark.parametrize("sent", [b'{"model": "m", "messages": [', b"", b"\xff\xfe{}"],
                         ids=["truncated", "empty", "not-utf8"])
@pytest.mark.parametrize("path", ["/chat/completions", "/messages", "/responses"])
async def test_a_body_that_is_not_json_gets_the_apis_400_in_its_shape(
        raw: Raw, path: str, sent: bytes) -> None:
    upstream, proxy = raw
    status, headers, got = await _send(proxy, "POST", path, sent)
    error = orjson.loads(got)
    assert status == 400 and headers["Content-Type"].startswith("application/json")
    if path == "/messages":
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
    else:
        assert (error["error"]["type"], error["error"]["code"]) == (
            "invalid_request_error", "invalid_json")
    assert upstream.received == []


@pytest.mark.parametrize("path", ["/chat/completions", "/messages", "/responses"])
async def test_json_that_is_not_an_object_goes_upstream_as_sent(raw: Raw, path: str) -> None:
    upstream, proxy = raw
    refusal = b'{"error": {"message": "Invalid type for body", "type": "invalid_request_error"}}'
    upstream.answers.append(Scripted([refusal], status=400, headers=JSON))
    status, _, got = await _send(proxy, "POST", path, b' [1, "two"] ')
    assert (status, got) == (400, refusal)
    assert [r["raw"] for r in upstream.received] == [b' [1, "two"] ']


# -- 114: embeddings as base64 -----------------------------------------------------------------
# Reported: gateways that read ``/v1/embeddings`` answers as float lists break the SDKs'
# default ``encoding_format: "base64"`` (502, or vectors a quarter as long). Pass-through:
# the SDK's request and the upstream's answer cross as sent.
async def test_base64_embeddings_reach_the_sdk_as_sent(raw: Raw) -> None:
    upstream, proxy = raw
    vector = [0.25, -1.5, 3.0, 1e-7] * 96
    packed = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    answer = orjson.dumps({"object": "list", "model": "e", "data": [
        {"object": "embedding", "index": 0, "embedding": packed}],
        "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    upstream.answers.append(Scripted([answer], headers=JSON))
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = await client.embeddings.create(model="e", input="hello")
    assert got.data[0].embedding == pytest.approx(vector, rel=1e-6)
    assert upstream.received[0]["json"]["encoding_format"] == "base64"


# -- 115: a multipart upload (audio transcription) ----------------------------------------------
# Reported: proxies that parse and rebuild multipart bodies (a new boundary, text fields
# decoded, binary parts re-encoded) or read them as JSON: 400 from the upstream. The
# upload must reach it byte for byte with its boundary.
AUDIO = b"RIFF\x00\x00\x00\x00WAVE" + bytes(range(256)) * 40 + b"\r\n--not-a-boundary\r\n\xff"


async def test_a_transcription_upload_reaches_the_upstream_byte_for_byte(raw: Raw) -> None:
    upstream, proxy = raw
    upstream.answers.append(Scripted([b'{"text": "hello"}'], headers=JSON))
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = await client.audio.transcriptions.create(
            model="whisper-1", file=("a.wav", AUDIO, "audio/wav"), language="en")
    assert got.text == "hello"
    sent = upstream.received[0]
    boundary = sent["headers"]["Content-Type"].split("boundary=")[1].encode()
    assert sent["raw"].count(b"--" + boundary) == 4, "three parts and the closing line"
    assert sent["raw"].count(AUDIO) == 1
    assert sent["headers"]["Content-Length"] == str(len(sent["raw"]))


# -- 116: a binary answer (speech) -------------------------------------------------------------
# Reported: proxies that relabel ``/v1/audio/speech`` answers (always ``audio/mpeg``) or
# read them as text. The bytes, their label and their length reach the SDK as sent.
async def test_speech_bytes_reach_the_sdk_as_sent(raw: Raw) -> None:
    upstream, proxy = raw
    wav = AUDIO * 50
    upstream.answers.append(Scripted(_pieces(wav, 4096), headers={
        "Content-Type": "audio/wav", "Content-Length": str(len(wav))}))
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        async with client.audio.speech.with_streaming_response.create(
                model="tts-1", voice="alloy", input="hi", response_format="wav") as resp:
            assert resp.headers["content-type"] == "audio/wav"
            assert resp.headers["content-length"] == str(len(wav))
            got = b"".join([piece async for piece in resp.iter_bytes()])
    assert got == wav


# -- 117: a kept-alive connection the upstream closed --------------------------------------------
# Reported: pooled connections the upstream (or a load balancer's idle timeout) closed
# are reused and the request fails with "Server disconnected"; a proxy that answers it as
# an error its clients do not retry turns a transient into a failure. The client must
# get an error its SDK retries, and the retry must get through.
class OneAnswerPerConnection:
    """A raw HTTP/1.1 upstream that answers the first request of each connection as
    keep-alive, then closes the connection when the next request arrives, unanswered
    (an idle timeout crossing the request). Counts its connections."""

    def __init__(self) -> None:
        self.connections = 0

    async def __call__(self, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        head = await reader.readuntil(b"\r\n\r\n")
        length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:")]
        await reader.readexactly(length[0] if length else 0)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(CHAT_DONE), CHAT_DONE))
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        writer.close()


async def test_a_closed_kept_alive_connection_gets_a_retried_answer(tmp_path: Path) -> None:
    upstream = OneAnswerPerConnection()
    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy = await start_proxy(f"http://127.0.0.1:{port}/v1", tmp_path / "d")
    try:
        async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                      max_retries=2) as client:
            for _ in range(3):
                done = await client.chat.completions.create(model="m", messages=SDK_USER)
                assert done.choices[0].message.content == "done"
            async with anthropic.AsyncAnthropic(api_key=TEST_KEY,
                                                base_url=proxy.base_url[:-3],
                                                max_retries=2) as claude:
                assert (await claude.models.list()) is not None
    finally:
        await proxy.close()
        server.close()
        await server.wait_closed()
    assert upstream.connections >= 4, "every call after the first met a closed connection"
