"""Reading request bodies (proxy.body): one size limit and one slow-body deadline on
every route that reads a body, and aiohttp's keep-alive timeout for slow headers.

Real proxies on loopback; an upstream that records what it received; raw sockets
where a client must misbehave (a body or a head that stops arriving).
"""

from __future__ import annotations

import ast
import asyncio
import gzip
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson
import pytest

from proxy.body import BodyDeadline
from tests.conftest import RunningProxy, start_proxy
from tests.reliability.support import ScriptedUpstream

KEY = "sk-body-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
ADMIN = "admin-token-0123456789abcdef"
CHAT = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})


@pytest.fixture
async def scripted() -> AsyncIterator[ScriptedUpstream]:
    up = ScriptedUpstream()
    await up.start()
    yield up
    await up.stop()


def test_the_deadline_grows_with_what_arrived() -> None:
    d = BodyDeadline(start=100.0, timeout=60.0, min_rate=1024)
    assert d.at(0) == 160.0
    assert d.at(10 * 1024 * 1024) == 160.0 + 10240  # 10 MiB at 1 KiB/s
    assert BodyDeadline(start=100.0, timeout=0, min_rate=1024).at(5) is None


def _zstd(prefix: bytes, zeros_mib: int) -> bytes:
    from backports import zstd

    c = zstd.ZstdCompressor(level=1)
    zeros = bytes(1 << 20)
    return c.compress(prefix) + b"".join(c.compress(zeros) for _ in range(zeros_mib)) + c.flush()


async def _send(proxy: RunningProxy, path: str, body: bytes, headers: dict[str, str]
                ) -> int:
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(proxy.root + path, data=body,
                                 headers={**AUTH, **headers}) as r:
                await r.read()
                return r.status
    except aiohttp.ClientError:  # closed before the answer was read: allowed for 413
        return 0


async def test_a_compressed_pass_through_body_is_limited_decoded(
        scripted: ScriptedUpstream, tmp_path: Path) -> None:
    """A pass-through route forwarded a compressed body decoded whatever its size:
    a 30 KiB zstd body became gigabytes sent upstream. Decoded, it is now held to
    proxy.max_body_bytes (413); a plain body still streams at any size."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              proxy={"max_body_bytes": 1 << 20})
    try:
        bomb = _zstd(b'{"model": "e", "input": "', 16)
        assert len(bomb) < 10_000
        status = await _send(proxy, "/v1/embeddings", bomb, {"Content-Encoding": "zstd"})
        assert status in (0, 413)
        assert all(len(b) <= 1 << 20 for b in scripted.received)
        ok = gzip.compress(b'{"model": "e", "input": "' + b"a" * 1000 + b'"}')
        assert await _send(proxy, "/v1/embeddings", ok, {"Content-Encoding": "gzip"}) == 200
        assert scripted.received[-1].endswith(b'a"}')
        plain = b"x" * (3 << 20)  # over the limit, not compressed: the upstream's to judge
        assert await _send(proxy, "/v1/files", plain, {}) == 200
        assert scripted.received[-1] == plain
    finally:
        await proxy.close()


async def test_an_over_limit_compressed_body_holds_about_the_limit(
        scripted: ScriptedUpstream, tmp_path: Path) -> None:
    """aiohttp's ``request.read()`` raises the stream's read size to the limit, so one
    compressed body over it held about four times the limit before its 413."""
    limit = 8 << 20
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              proxy={"max_body_bytes": limit})
    body = gzip.compress(b'{"model": "m", "messages": [{"role": "user", "content": "'
                         + bytes(64 << 20), 1)
    try:
        await _send(proxy, "/v1/chat/completions", b"{}", {})  # warm: imports, caches
        scripted.received.clear()
        tracemalloc.start()
        try:
            status = await _send(proxy, "/v1/chat/completions", body,
                                 {"Content-Encoding": "gzip"})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert status in (0, 413)
        assert peak < 1.5 * limit, f"peak {peak / limit:.1f}x the limit"
        assert scripted.received == []
    finally:
        await proxy.close()


async def _raw(proxy: RunningProxy, head: bytes, body: bytes, wait: float) -> bytes:
    """Send ``head`` and the start of a body, then nothing; what the proxy answers
    within ``wait`` seconds, up to its closing the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        writer.write(head + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(-1), wait)
    finally:
        writer.close()


@pytest.mark.parametrize("path,headers", [
    ("/v1/chat/completions", f"Authorization: Bearer {KEY}\r\nContent-Type: application/json"),
    ("/v1/responses", f"Authorization: Bearer {KEY}\r\nContent-Type: application/json"),
    ("/v1/messages", f"x-api-key: {KEY}\r\nContent-Type: application/json"),
    ("/v1/embeddings", f"Authorization: Bearer {KEY}\r\nContent-Type: application/json"),
    ("/lcm/v1/purge", f"Authorization: Bearer {ADMIN}\r\nContent-Type: application/json"),
    ("/lcm/ui/login", "Content-Type: application/x-www-form-urlencoded"),
])
async def test_a_body_that_stops_arriving_gets_408_and_the_connection_closed(
        scripted: ScriptedUpstream, tmp_path: Path, path: str, headers: str) -> None:
    """A client that declares a body and sends a few bytes of it held the connection
    (and a handler) for ever, on every route that reads a body."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d", proxy={
        "body_timeout_seconds": 1, "admin_token": ADMIN})
    try:
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\n{headers}\r\n"
                "Content-Length: 5000\r\n\r\n").encode()
        answer = await _raw(proxy, head, b'{"model": "m", "mess', wait=6)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"request_timeout" in answer or b"timeout" in answer
        assert scripted.received == []
    finally:
        await proxy.close()


async def test_a_slow_steady_body_is_not_cut(scripted: ScriptedUpstream,
                                             tmp_path: Path) -> None:
    """The deadline grows with what arrives: a body sent for 3 s at 2 KiB/s passes a
    1 s timeout (at least 1 KiB/s)."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d", proxy={
        "body_timeout_seconds": 1, "body_min_bytes_per_second": 1024})
    body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "y" * 6000}]})

    async def dribble() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 512):
            yield body[i:i + 512]
            await asyncio.sleep(0.25)

    try:
        for path in ("/v1/chat/completions", "/v1/embeddings"):
            async with aiohttp.ClientSession() as http:
                async with http.post(proxy.base_url + path[3:], data=dribble(),
                                     headers=AUTH) as r:
                    assert r.status == 200, await r.text()
            assert b"y" * 6000 in scripted.received[-1]
    finally:
        await proxy.close()


async def test_a_head_that_stops_arriving_is_closed(scripted: ScriptedUpstream,
                                                    tmp_path: Path) -> None:
    """aiohttp's keep-alive timeout also bounds the time to send a request's head; the
    proxy's runners got aiohttp's default of an hour."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              proxy={"keepalive_timeout_seconds": 1})
    try:
        answer = await _raw(proxy, b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.",
                            b"", wait=5)
        assert answer == b""  # closed, nothing to answer
    finally:
        await proxy.close()


READERS = {"read", "post", "json", "text", "multipart", "content"}
"""aiohttp's ways to read a request body (``request.content`` is its stream)."""


def test_every_body_read_goes_through_proxy_body() -> None:
    """The class of the failures above: a handler that reads a body its own way gets
    neither the decoded-size limit nor the deadline."""
    root = Path(__file__).resolve().parent.parent / "proxy"
    found = []
    for path in root.rglob("*.py"):
        if (path.name == "body.py" or "evaluation" in path.parts
                or path.stem.endswith(("bench", "fake"))):  # fake upstreams of benchmarks
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Attribute) and node.attr in READERS
                    and ast.unparse(node.value).endswith("request")):
                found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    assert found == []
