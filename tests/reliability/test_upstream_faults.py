"""Upstream faults: the client gets a correct error or a cleanly cut stream, the proxy
stays healthy, and nothing half-written is stored as a complete answer.

Faults: connect timeout (a listening socket whose accept queue is full), first-byte
timeout, idle timeout mid-stream, connection reset mid-stream, HTML with 200 and with
502, an unparseable event stream, an unreachable upstream. Each runs with the memory
tools on (the default) and off, streamed and not, where it applies.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from tests.conftest import RunningProxy, closed_port, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream, Reply

KEY = "sk-faults-0123456789abcdef"
TIMEOUTS = {"connect_timeout_seconds": 0.5, "read_timeout_seconds": 1.0}
HTML = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"


@dataclass
class Outcome:
    """What the client saw and what the proxy stored for one request."""

    status: int
    body: bytes
    clean_end: bool
    request_id: str
    events: list[dict[str, Any]]
    assistant_rows: int


NO_OUTCOME = None  # was an xfail: the tool path now records the outcome
JUNK_IS_ANSWER = None  # was an xfail: junk is never stored as an answer


def tools_params(*xfail_marks: Any) -> list[Any]:
    """``tools`` on (the default, marked with ``xfail_marks``) and off."""
    return [pytest.param(True, id="tools", marks=[m for m in xfail_marks if m is not None]),
            pytest.param(False, id="no-tools")]


@pytest.fixture
async def make(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[Any]:
    """``await make(tools, upstream_url=None)``: a proxy with short upstream timeouts."""
    made: list[RunningProxy] = []

    async def start(tools: bool, upstream_url: str | None = None) -> RunningProxy:
        made.append(await start_proxy(upstream_url or upstream.base_url,
                                      tmp_path / f"d{len(made)}", proxy=TIMEOUTS,
                                      tools={"enabled": tools},
                                      injection={"capture_wait_seconds": 30}))
        return made[-1]

    yield start
    for running in made:
        await running.close()


async def call(proxy: RunningProxy, *, stream: bool, text: str = "hello") -> Outcome:
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": text}]}
    got, clean = b"", True
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.base_url + "/chat/completions", json=body,
                             headers={"Authorization": f"Bearer {KEY}"}) as r:
            try:
                async for piece in r.content.iter_any():
                    got += piece
            except aiohttp.ClientPayloadError:
                clean = False
            status, rid = r.status, r.headers["x-lcm-request-id"]
        async with http.get(proxy.root + "/lcm/health") as h:
            assert h.status == 200  # the proxy stays healthy
    await proxy.settle()
    events, rows = sql_read(proxy.engine, lambda c: (
        [{"kind": k, **json.loads(d)} for k, d in c.execute(
            "SELECT kind, data FROM events WHERE request_id=? ORDER BY id", (rid,))],
        c.execute("SELECT COUNT(*) FROM messages WHERE request_id=? AND msg_role='assistant'",
                  (rid,)).fetchone()[0]))
    return Outcome(status, got, clean, rid, events, rows)


def proxy_error(out: Outcome, status: int, code: str) -> None:
    """The proxy answered ``status`` itself, in OpenAI's error shape."""
    assert out.status == status and out.clean_end
    err = json.loads(out.body)["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["code"] == code


def nothing_stored_as_answer(out: Outcome, outcomes: tuple[str, ...]) -> None:
    response = [e for e in out.events if e["kind"] == "response"]
    assert out.assistant_rows == 0
    assert len(response) == 1 and response[0]["outcome"] in outcomes, out.events
    assert out.events[0]["kind"] == "request"  # the request itself is evidence


# -- timeouts ---------------------------------------------------------------------------------
@pytest.fixture
def full_backlog() -> Iterator[int]:
    """A port whose listen queue is full: new connections hang in SYN (connect timeout)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers = []
    for _ in range(3):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(s)
    try:
        yield port
    finally:
        for s in fillers:
            s.close()
        srv.close()


@pytest.mark.parametrize("tools", tools_params(NO_OUTCOME))
@pytest.mark.parametrize("stream", [False, True])
async def test_connect_timeout_is_a_504(make: Any, full_backlog: int, stream: bool,
                                        tools: bool) -> None:
    proxy = await make(tools, f"http://127.0.0.1:{full_backlog}/v1")
    out = await call(proxy, stream=stream)
    proxy_error(out, 504, "upstream_timeout")
    nothing_stored_as_answer(out, ("upstream_timeout",))


@pytest.mark.parametrize("tools", tools_params(NO_OUTCOME))
@pytest.mark.parametrize("stream", [False, True])
async def test_unreachable_upstream_is_a_502(make: Any, stream: bool, tools: bool) -> None:
    proxy = await make(tools, f"http://127.0.0.1:{closed_port()}/v1")
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as c:
        with pytest.raises(openai.InternalServerError) as info:
            await c.chat.completions.create(model="m", messages=[  # type: ignore[arg-type]
                {"role": "user", "content": "x"}])
        assert info.value.status_code == 502
    out = await call(proxy, stream=stream)
    proxy_error(out, 502, "upstream_unreachable")
    nothing_stored_as_answer(out, ("upstream_unreachable",))


@pytest.mark.parametrize("tools", tools_params(NO_OUTCOME))
@pytest.mark.parametrize("stream", [False, True])
async def test_first_byte_timeout_is_a_504(make: Any, upstream: FakeUpstream, stream: bool,
                                           tools: bool) -> None:
    proxy = await make(tools)
    upstream.push(Reply(content="too late", answer_delay=2.5))
    out = await call(proxy, stream=stream)
    proxy_error(out, 504, "upstream_timeout")
    nothing_stored_as_answer(out, ("upstream_timeout",))


# -- streams cut mid-way ------------------------------------------------------------------------
@pytest.mark.parametrize("tools", tools_params())
@pytest.mark.parametrize("fault", ["idle timeout", "connection reset"])
async def test_a_stream_cut_mid_way_ends_uncleanly_and_is_not_an_answer(
        make: Any, upstream: FakeUpstream, fault: str, tools: bool) -> None:
    proxy = await make(tools)
    text = "The first half arrives, the second half never does. " * 4
    if fault == "idle timeout":  # a pause longer than read_timeout after some bytes
        upstream.push(Reply(content=text, piece=8, write_size=300, delay=1.6))
    else:
        upstream.push(Reply(content=text, piece=8, drop_after=500))
    out = await call(proxy, stream=True)
    assert out.status == 200 and not out.clean_end  # no clean end: the SDK raises
    assert b"data: " in out.body and b"[DONE]" not in out.body
    assert upstream.streams[-1].startswith(out.body) or fault == "idle timeout"
    nothing_stored_as_answer(out, ("incomplete",))
    # the SDK raises instead of returning a cut answer as a whole one
    upstream.push(Reply(content=text, piece=8, drop_after=500))
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as c:
        with pytest.raises(Exception) as info:  # noqa: B017 - a transport error of the SDK
            s = await c.chat.completions.create(model="m", stream=True, messages=[  # type: ignore[arg-type]
                {"role": "user", "content": "again"}])
            async for _ in s:
                pass
        assert not isinstance(info.value, AssertionError)


# -- answers that are not what they claim -------------------------------------------------
@pytest.mark.parametrize("tools", tools_params())
@pytest.mark.parametrize("status", [200, 502])
@pytest.mark.parametrize("stream", [False, True])
async def test_html_from_the_upstream_is_relayed_and_not_stored_as_an_answer(
        make: Any, upstream: FakeUpstream, status: int, stream: bool, tools: bool) -> None:
    proxy = await make(tools)
    if status == 200:
        upstream.push(Reply(raw_body=HTML, raw_stream=HTML, content_type="text/html"))
    else:
        upstream.push(Reply(status=502, error={"message": "bad gateway", "type": "x"}))
    out = await call(proxy, stream=stream)
    assert out.status == status and out.clean_end
    if status == 200:
        assert out.body == HTML  # transparent: the client sees what the upstream sent
    nothing_stored_as_answer(out, ("incomplete", "upstream_error"))


@pytest.mark.parametrize("tools", tools_params(JUNK_IS_ANSWER))
async def test_an_unparseable_event_stream_is_relayed_and_not_an_answer(
        make: Any, upstream: FakeUpstream, tools: bool) -> None:
    proxy = await make(tools)
    junk = b"data: {not json\n\nevent: x\ndata: \xff\xfe\n\n: comment\n\ndata: [[[\n\n"
    upstream.push(Reply(raw_stream=junk))
    out = await call(proxy, stream=True)
    assert out.status == 200 and out.body == junk and out.clean_end
    nothing_stored_as_answer(out, ("incomplete",))


@pytest.mark.parametrize("tools", tools_params())
async def test_upstream_error_body_and_headers_pass_through(make: Any, upstream: FakeUpstream,
                                                            tools: bool) -> None:
    proxy = await make(tools)
    upstream.push(Reply(status=429, error={"message": "slow down", "type": "rate_limit"},
                        headers={"retry-after": "7", "x-ratelimit-remaining-requests": "0"}))
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as c:
        with pytest.raises(openai.RateLimitError) as info:
            await c.chat.completions.create(model="m", messages=[  # type: ignore[arg-type]
                {"role": "user", "content": "x"}])
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.body == {"message": "slow down", "type": "rate_limit"}
