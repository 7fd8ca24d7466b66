"""Status lines and headers cross the proxy as bytes: a value that is not UTF-8
(``obs-text``, RFC 9110 §5.5: Latin-1 in practice) reaches the other side as sent,
and nothing is added to an answer the upstream sent without it.

Both ends here are raw sockets, because what is checked is the bytes on the wire:
an HTTP library on either end would decode or re-encode them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY, RunningProxy, start_proxy


class RawUpstream:
    """An upstream on 127.0.0.1 that records each request's head (bytes) and answers
    with the head and body it is given."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []
        self.answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        self.server: asyncio.Server | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(length)
        writer.write(self.answer)
        await writer.drain()
        writer.close()

    def header(self, name: bytes) -> bytes | None:
        """The last request's value of header ``name`` (case-insensitive)."""
        for line in self.heads[-1].split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return None


@pytest.fixture
async def raw_upstream() -> AsyncIterator[RawUpstream]:
    fake = RawUpstream()
    fake.server = await asyncio.start_server(fake.serve, "127.0.0.1", 0)
    yield fake
    fake.server.close()
    await fake.server.wait_closed()


@pytest.fixture
async def proxy_raw(raw_upstream: RawUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    assert raw_upstream.server is not None
    port = raw_upstream.server.sockets[0].getsockname()[1]
    running = await start_proxy(f"http://127.0.0.1:{port}/v1", tmp_path / "d",
                                tools={"offer": "history"})
    yield running
    await running.close()


async def exchange(proxy: RunningProxy, head: bytes, body: bytes = b"") -> tuple[bytes, bytes]:
    """Send one raw request to the proxy; return the answer's head and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(head + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    got_head, _, got_body = answer.partition(b"\r\n\r\n")
    return got_head, got_body


def request_head(method: bytes, path: bytes, extra: bytes, body: bytes = b"") -> bytes:
    return (method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Bearer " + TEST_KEY.encode() + b"\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n" % len(body) + extra + b"\r\n")


def head_value(head: bytes, name: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


CHAT = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
ROUTES = [(b"GET", b"/v1/models", b""), (b"POST", b"/v1/embeddings", b'{"input": "x"}'),
          (b"POST", b"/v1/chat/completions", CHAT)]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_request_header_bytes_reach_the_upstream_as_sent(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream,
        method: bytes, path: bytes, body: bytes) -> None:
    """aiohttp reads a header as UTF-8 with ``surrogateescape`` and writes it back as
    UTF-8 dropping surrogates: ``X-Title: caf\\xe9`` reached the upstream as ``caf``."""
    extra = (b"X-Title: caf\xe9 \xa9 1\r\nX-Utf8: caf\xc3\xa9\r\n"
             b"X-Mixed: \xff\xfe\xc3\xa9\xe9\r\n")
    head, _ = await exchange(proxy_raw, request_head(method, path, extra, body), body)
    assert head.startswith(b"HTTP/1.1 200"), head
    assert raw_upstream.header(b"x-title") == b"caf\xe9 \xa9 1"
    assert raw_upstream.header(b"x-utf8") == b"caf\xc3\xa9"
    assert raw_upstream.header(b"x-mixed") == b"\xff\xfe\xc3\xa9\xe9"
    await proxy_raw.settle()


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_response_status_and_header_bytes_reach_the_client_as_sent(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream,
        method: bytes, path: bytes, body: bytes) -> None:
    """The same for the upstream's answer: a ``Content-Disposition`` naming a Latin-1
    file, a reason phrase with an accent."""
    answer = (b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m",'
              b' "choices": [{"index": 0, "finish_reason": "stop", "message":'
              b' {"role": "assistant", "content": "ok"}}]}')
    raw_upstream.answer = (b"HTTP/1.1 200 Tr\xe8s bien\r\nContent-Type: application/json\r\n"
                           b'Content-Disposition: attachment; filename="f\xfcr.pdf"\r\n'
                           b"X-Utf8: caf\xc3\xa9\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(answer) + answer)
    head, got = await exchange(proxy_raw, request_head(method, path, b"", body), body)
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 200 Tr\xe8s bien"
    assert head_value(head, b"content-disposition") == b'attachment; filename="f\xfcr.pdf"'
    assert head_value(head, b"x-utf8") == b"caf\xc3\xa9"
    await proxy_raw.settle()


@pytest.mark.parametrize("status", [b"204 No Content", b"205 Reset Content",
                                    b"304 Not Modified"])
@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_a_bodiless_answer_gains_no_headers(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream,
        method: bytes, path: bytes, body: bytes, status: bytes) -> None:
    """aiohttp gives an answer without ``Content-Type`` ``application/octet-stream``
    unless the status forbids a body, and 205 is not among those it knows: a 205
    reached the client with a type, chunked, for a body it does not have."""
    length = b"Content-Length: 0\r\n" if status.startswith(b"205") else b""
    raw_upstream.answer = b"HTTP/1.1 " + status + b"\r\nX-Request-Id: r1\r\n" + length + b"\r\n"
    head, got = await exchange(proxy_raw, request_head(method, path, b"", body), body)
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 " + status
    assert head_value(head, b"x-request-id") == b"r1"
    assert head_value(head, b"content-type") is None
    assert head_value(head, b"server") is None
    assert head_value(head, b"transfer-encoding") is None
    assert got == b""
    await proxy_raw.settle()


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_an_untyped_error_body_stays_untyped(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream,
        method: bytes, path: bytes, body: bytes) -> None:
    """A gateway's error without ``Content-Type`` is not ``application/octet-stream``
    (a client that sniffs it would treat the text as a download)."""
    raw_upstream.answer = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nbad gateway"
    head, got = await exchange(proxy_raw, request_head(method, path, b"", body), body)
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 502 Bad Gateway"
    assert head_value(head, b"content-type") is None
    assert head_value(head, b"server") is None
    assert b"bad gateway" in got  # chunked or not: framing is per hop
    await proxy_raw.settle()


@pytest.mark.parametrize(("method", "path", "body"), [
    *ROUTES, (b"POST", b"/v1/responses/resp_1/cancel", b""),
    (b"DELETE", b"/v1/files/file_1", b"")])
async def test_the_upstream_gets_no_header_the_client_did_not_send(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream,
        method: bytes, path: bytes, body: bytes) -> None:
    """aiohttp's client adds ``Accept: */*`` to a request without one: an upstream
    that negotiates on ``Accept`` saw a client that accepts anything. Only the
    proxy's own ``Accept-Encoding`` (it reads the answers) is added."""
    head = (method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Bearer " + TEST_KEY.encode() + b"\r\nX-Custom: 1\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
    got, _ = await exchange(proxy_raw, head, body)
    assert got.startswith(b"HTTP/1.1 200"), got
    names = {line.partition(b":")[0].lower() for line in raw_upstream.heads[-1].split(b"\r\n")[1:]
             if line}
    assert names - {b"accept-encoding"} <= {b"host", b"authorization", b"x-custom",
                                            b"content-length"}
    assert {b"host", b"authorization", b"x-custom"} <= names
    await proxy_raw.settle()


@pytest.mark.parametrize("extra", [b"X-LCM-User: Ren\xe9\r\n", b"X-LCM-User: Ren\xc3\xa9\r\n"])
async def test_an_end_user_header_that_is_not_utf8_keeps_memory_on(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream, extra: bytes) -> None:
    """The end user's id is hashed into its tenant; a Latin-1 byte, read escaped,
    could not be encoded for the hash, and the request went without memory."""
    answer = (b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m",'
              b' "choices": [{"index": 0, "finish_reason": "stop", "message":'
              b' {"role": "assistant", "content": "ok"}}]}')
    raw_upstream.answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(answer) + answer)
    head, _ = await exchange(proxy_raw, request_head(b"POST", b"/v1/chat/completions",
                                                     extra, CHAT), CHAT)
    assert head_value(head, b"x-lcm-memory") == b"injected", head
    await proxy_raw.settle()


async def test_a_long_header_crosses_both_ways(
        proxy_raw: RunningProxy, raw_upstream: RawUpstream) -> None:
    """aiohttp reads header lines of 8190 bytes at most: a longer request header got
    its plain-text 400, a longer answer header a 502 (a large SSO token, a long
    ``Content-Security-Policy`` or ``Link`` header)."""
    big = b"t" * 20000
    raw_upstream.answer = b"HTTP/1.1 200 OK\r\nX-Long: " + big + b"\r\nContent-Length: 2\r\n\r\n{}"
    head, got = await exchange(proxy_raw, request_head(b"GET", b"/v1/models",
                                                       b"X-Token: " + big + b"\r\n"))
    assert head.startswith(b"HTTP/1.1 200"), head[:300]
    assert raw_upstream.header(b"x-token") == big
    assert head_value(head, b"x-long") == big and got == b"{}"
    await proxy_raw.settle()


def test_an_ascii_head_is_written_by_aiohttp_after_one_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A head that is all ASCII (nearly every head) is aiohttp's own bytes, checked
    in one pass, not name by name; one with an escaped byte is still looked at
    header by header and written as read."""
    from multidict import CIMultiDict

    from proxy import rawhead

    looked: list[str] = []
    has_escapes = rawhead._has_escapes

    def counted(text: str) -> bool:
        looked.append(text)
        return has_escapes(text)

    monkeypatch.setattr(rawhead, "_has_escapes", counted)
    head = CIMultiDict({f"X-H{i}": f"value {i}" for i in range(10)})
    assert rawhead.serialize_head("HTTP/1.1 200 OK", head) == rawhead._AIOHTTP_WRITER(
        "HTTP/1.1 200 OK", head)
    assert looked == []
    head["X-Title"] = "caf\udce9"  # the Latin-1 byte 0xE9 as aiohttp reads it
    assert rawhead.serialize_head("HTTP/1.1 200 OK", head).endswith(
        b"X-Title: caf\xe9\r\n\r\n")
    assert looked
