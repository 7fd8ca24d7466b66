"""Hostile request bodies: each gets a clear error or is forwarded, never a 500 from our
code, and never lost evidence — what parses is stored, what does not is kept in an
``events`` row.

The upstream here (:class:`ScriptedUpstream`) answers 200 to any body, so every 5xx
a test sees would be the proxy's own. Property-based tests (hypothesis) cover request
bodies and SSE byte streams; example counts stay small for 2-core CI.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.appkeys import METRICS
from tests.conftest import RunningProxy, sql_read, start_proxy
from tests.reliability.support import LoopThread, Script, ScriptedUpstream, chunk, sse

KEY = "sk-hostile-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


@pytest.fixture
async def scripted() -> AsyncIterator[ScriptedUpstream]:
    up = ScriptedUpstream()
    await up.start()
    yield up
    await up.stop()


async def post(proxy: RunningProxy, body: bytes, headers: dict[str, str] | None = None
               ) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.base_url + "/chat/completions", data=body,
                             headers={**AUTH, **(headers or {})}) as r:
            return r.status, dict(r.headers), await r.read()


def events_for(proxy: RunningProxy, request_id: str) -> list[dict[str, Any]]:
    rows = sql_read(proxy.engine, lambda c: c.execute(
        "SELECT kind, data FROM events WHERE request_id=? ORDER BY id", (request_id,)).fetchall())
    return [{"kind": k, **json.loads(d)} for k, d in rows]


def assert_openai_error(body: bytes, code: str | None = None) -> dict[str, Any]:
    err = orjson.loads(body)["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    if code is not None:
        assert err["code"] == code
    return err


async def health(proxy: RunningProxy) -> int:
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + "/lcm/health") as r:
            return r.status


# -- size, nesting, encoding ------------------------------------------------------------------
async def test_body_over_the_limit_gets_413_and_an_event(scripted: ScriptedUpstream,
                                                         tmp_path: Path) -> None:
    proxy = await start_proxy(scripted.base_url, tmp_path / "d", proxy={"max_body_bytes": 4096})
    try:
        big = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 8000}]})
        status, headers, body = await post(proxy, big)
        assert status == 413
        assert_openai_error(body, "request_too_large")
        # the same without a Content-Length (chunked upload)

        async def gen() -> AsyncIterator[bytes]:
            for i in range(0, len(big), 1000):
                yield big[i:i + 1000]

        async with aiohttp.ClientSession() as http:
            async with http.post(proxy.base_url + "/chat/completions", data=gen(),
                                 headers=AUTH) as r:
                assert r.status == 413
                assert_openai_error(await r.read(), "request_too_large")
        await proxy.settle()
        assert scripted.received == []
        (event,) = events_for(proxy, headers["x-lcm-request-id"])
        assert event["kind"] == "rejected" and event["content_length"] == len(big)
        assert await health(proxy) == 200
    finally:
        await proxy.close()


async def test_nesting_encoding_and_size_extremes(scripted: ScriptedUpstream,
                                                  tmp_path: Path) -> None:
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 0.5})
    try:
        def user(content: bytes) -> bytes:
            return b'{"model":"m","messages":[{"role":"user","content":' + content + b"}]}"

        # 100k levels: no parser takes it -> a clear 400, the raw body kept in an event
        status, headers, body = await post(proxy, user(b"[" * 100_000 + b"]" * 100_000))
        assert status == 400
        assert_openai_error(body, "invalid_json")
        await proxy.settle()
        (ev,) = events_for(proxy, headers["x-lcm-request-id"])
        assert ev["kind"] == "unparsed" and len(ev["body"]) > 200_000
        # invalid UTF-8 inside a string: 400, kept with replacement characters
        status, headers, body = await post(proxy, user(b'"caf\xe9 \xff\xfe"'))
        assert status == 400
        await proxy.settle()
        (ev,) = events_for(proxy, headers["x-lcm-request-id"])
        assert ev["kind"] == "unparsed" and "caf\ufffd" in ev["body"]
        # 1000 levels (orjson parses up to 1024, Python's encoders recurse): forwarded
        # and stored, although no recursive encoder can write it back
        deep = b"[" * 1000 + b'"bottom"' + b"]" * 1000
        status, headers, body = await post(proxy, user(deep))
        assert status == 200 and scripted.received[-1] == user(deep)
        await proxy.settle()
        kinds = [e["kind"] for e in events_for(proxy, headers["x-lcm-request-id"])]
        assert kinds == ["request", "response"]
        raw = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT raw_json FROM messages WHERE request_id=? AND msg_role='user'",
            (headers["x-lcm-request-id"],)).fetchone()[0])
        assert json.loads(raw.replace("[" * 900, "").replace("]" * 900, ""))  # intact JSON
        # a 10 MB string: forwarded at once (the capture may finish after the wait:
        # fail open), stored whole
        huge = "word " * 2_000_000
        status, headers, body = await post(proxy, orjson.dumps(
            {"model": "m", "messages": [{"role": "user", "content": huge}]}))
        assert status == 200 and headers["x-lcm-memory"] in ("injected", "skipped",
                                                             "failed-open")
        await proxy.settle(120)
        assert sql_read(proxy.engine, lambda c: c.execute(
            "SELECT length(text) FROM messages WHERE request_id=? AND msg_role='user'",
            (headers["x-lcm-request-id"],)).fetchone()[0]) == len(huge)
        assert await health(proxy) == 200
    finally:
        await proxy.close()


async def test_one_hundred_thousand_messages_are_stored(scripted: ScriptedUpstream,
                                                        tmp_path: Path) -> None:
    """Search is off: indexing 100k documents is the indexer's test, not this one. The
    texts carry no facts: 50k extracted near-duplicate facts cost the extractor's
    dedupe quadratic time (memory_core/items/writer.py ``_candidates``; reported)."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d", search={"enabled": False},
                              injection={"capture_wait_seconds": 0.2})
    try:
        messages = [{"role": ("user", "assistant")[i % 2], "content": ("ok?", "fine")[i % 2]}
                    for i in range(100_000)]
        messages.append({"role": "wizard", "content": "an unknown role"})
        body = orjson.dumps({"model": "m", "messages": messages})
        status, headers, _ = await post(proxy, body)
        assert status == 200 and scripted.received[-1] == body  # forwarded untouched
        await proxy.settle(300)
        n, roles = sql_read(proxy.engine, lambda c: (
            c.execute("SELECT COUNT(*) FROM messages WHERE request_id=?",
                      (headers["x-lcm-request-id"],)).fetchone()[0],
            dict(c.execute("SELECT msg_role, COUNT(*) FROM messages GROUP BY msg_role"))))
        assert n == len(messages) + 1  # and the answer
        assert roles["wizard"] == 1
    finally:
        await proxy.close()


# -- wrong types for every field we read -------------------------------------------------------
WRONG = {
    "messages string": {"messages": "hello"},
    "messages number": {"messages": 5},
    "messages null": {"messages": None},
    "messages object": {"messages": {"role": "user", "content": "x"}},
    "messages missing": {"model": "m"},
    "body array": [{"role": "user", "content": "x"}],
    "body string": "just a string",
    "body number": 42,
    "body null": None,
    "message number": {"messages": [5]},
    "message string": {"messages": ["hello"]},
    "message null": {"messages": [None]},
    "message list": {"messages": [["user", "hi"]]},
    "content number": {"messages": [{"role": "user", "content": 5}]},
    "content float": {"messages": [{"role": "user", "content": 1e308}]},
    "content bool": {"messages": [{"role": "user", "content": True}]},
    "content object": {"messages": [{"role": "user", "content": {"text": "x"}}]},
    "content odd parts": {"messages": [{"role": "user", "content": [
        5, None, "s", {"type": "text", "text": 5}, {"type": "image_url"}, [1]]}]},
    "tool_calls string": {"messages": [{"role": "assistant", "content": "x",
                                        "tool_calls": "call"}, {"role": "user", "content": "y"}]},
    "tool_calls number": {"messages": [{"role": "user", "content": "y", "tool_calls": 5}]},
    "tool_calls object": {"messages": [{"role": "user", "content": "y",
                                        "tool_calls": {"id": 1}}]},
    "tool_calls odd items": {"messages": [{"role": "assistant", "tool_calls": [
        5, None, {"function": "f"}, {"function": {"name": 5, "arguments": {"a": 1}}}]},
        {"role": "user", "content": "y"}]},
    "role missing": {"messages": [{"content": "no role"}]},
    "role number": {"messages": [{"role": 7, "content": "x"}]},
    "role unknown": {"messages": [{"role": "wizard", "content": "x"},
                                  {"role": "user", "content": "y"}]},
    "name and ids": {"messages": [{"role": "tool", "name": {"n": 1}, "tool_call_id": [1],
                                   "content": "r"}, {"role": "user", "content": "y",
                                                     "function_call": "f"}]},
    "stream string": {"stream": "yes", "messages": [{"role": "user", "content": "x"}]},
    "stream number": {"stream": 1, "messages": [{"role": "user", "content": "x"}]},
    "stream_options string": {"stream": True, "stream_options": "x",
                              "messages": [{"role": "user", "content": "x"}]},
    "model number": {"model": 5, "messages": [{"role": "user", "content": "x"}]},
    "huge integer": {"model": "m", "n": 2 ** 70, "messages": [{"role": "user", "content": "x"}]},
    "lone surrogate": {"messages": [{"role": "user", "content": "\ud83d"}]},
    "command with odd fields": {"messages": [{"role": "user", "content": "/memory status",
                                              "tool_calls": 5}], "stream_options": 3},
}


async def test_wrong_types_are_forwarded_or_refused_never_500(
        scripted: ScriptedUpstream, tmp_path: Path) -> None:
    """Every case of :data:`WRONG` through one proxy (one start, not 33). The indexes
    commit at once, so each settle also proves the indexer swallowed the odd message."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 30},
                              search={"commit_interval_ms": 0, "poll_interval_ms": 10})
    try:
        for name, value in WRONG.items():
            body = json.dumps(value).encode()
            status, headers, reply = await post(proxy, body, {
                "X-LCM-Role": "../r\xfc\t" * 100,  # cleaned into a label, never trusted
                "X-LCM-Session": name.replace(" ", "-")})  # cases never share a history
            assert status < 500, (name, reply[:500])
            await proxy.settle()
            kinds = [e["kind"] for e in events_for(proxy, headers["x-lcm-request-id"])]
            messages = value.get("messages") if isinstance(value, dict) else None
            if isinstance(messages, list):
                # everything we could parse is stored: the request's messages, each once
                assert kinds[:1] == ["request"], (name, kinds)
                n = sql_read(proxy.engine, lambda c, h=headers: c.execute(
                    "SELECT COUNT(*) FROM messages WHERE request_id=? AND kind='request'",
                    (h["x-lcm-request-id"],)).fetchone()[0])
                assert n == len(messages), name
            else:  # not ours to understand: forwarded untouched, kept in an event
                assert kinds == ["unparsed"] and scripted.received[-1] == body, name
            assert proxy.app[METRICS].fail_open.labels("capture")._value.get() == 0, name
            assert await health(proxy) == 200
    finally:
        await proxy.close()


async def test_a_numeric_name_does_not_stall_the_indexer(scripted: ScriptedUpstream,
                                                         tmp_path: Path) -> None:
    proxy = await start_proxy(scripted.base_url, tmp_path / "d",
                              injection={"capture_wait_seconds": 30})
    try:
        body = {"model": "m", "messages": [{"role": "user", "name": 5, "content": "x"}]}
        status, _, _ = await post(proxy, json.dumps(body).encode())
        assert status == 200
        await asyncio.to_thread(proxy.engine.flush)
        assert proxy.engine.search is not None
        assert await asyncio.to_thread(proxy.engine.search.wait_idle, 5.0)
    finally:
        await proxy.close()


async def test_streamed_command_with_odd_stream_options(scripted: ScriptedUpstream,
                                                        tmp_path: Path) -> None:
    proxy = await start_proxy(scripted.base_url, tmp_path / "d")
    try:
        status, _, reply = await post(proxy, json.dumps({
            "stream": True, "stream_options": "x",
            "messages": [{"role": "user", "content": "/memory status"}]}).encode())
        assert status == 200 and reply.endswith(b"data: [DONE]\n\n")
    finally:
        await proxy.close()


# -- property-based: request bodies ------------------------------------------------------------
def _looped(tmp: Path, tools: bool) -> Any:
    lt = LoopThread()
    up = ScriptedUpstream()
    lt.run(up.start())
    proxy = lt.run(start_proxy(up.base_url, tmp, injection={"capture_wait_seconds": 30},
                               tools={"enabled": tools}))
    try:
        yield lt, proxy, up
    finally:
        lt.run(proxy.close())
        lt.run(up.stop())
        lt.close()


@pytest.fixture
def looped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A proxy (memory tools off: the plain relay) and a scripted upstream on an event
    loop in a thread (hypothesis drives synchronous test functions). One per test,
    as every store fixture: the store a test runs on (LCM_TEST_STORE) is the test's."""
    yield from _looped(tmp_path_factory.mktemp("prop"), tools=False)


@pytest.fixture
def looped_tools(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The same with the memory tools on (streams go through ``proxy.flow.toolloop``)."""
    yield from _looped(tmp_path_factory.mktemp("prop-tools"), tools=True)


json_leaf = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
             | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30))
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                          max_leaves=12)
message = st.one_of(
    json_value,
    st.fixed_dictionaries({}, optional={
        "role": st.sampled_from(["user", "assistant", "system", "tool", "developer",
                                 "function", "wizard", ""]) | json_value,
        "content": st.text(max_size=60) | json_value,
        "name": json_value, "tool_calls": json_value, "tool_call_id": json_value,
        "function_call": json_value,
    }))
request_body = st.one_of(
    json_value,
    st.fixed_dictionaries({"messages": st.lists(message, max_size=6)}, optional={
        "model": json_value, "stream": st.booleans() | json_value,
        "stream_options": json_value, "tools": json_value, "tool_choice": json_value}))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=request_body)
def test_any_request_body_gets_no_5xx_and_leaves_evidence(looped: Any, body: Any) -> None:
    lt, proxy, up = looped
    raw = json.dumps(body).encode()

    async def run() -> None:
        status, headers, reply = await post(proxy, raw)
        assert status < 500, (status, reply[:300])
        await proxy.settle()
        kinds = [e["kind"] for e in events_for(proxy, headers["x-lcm-request-id"])]
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            assert kinds and kinds[0] == "request", kinds
        else:
            assert kinds == ["unparsed"]
        assert await health(proxy) == 200

    lt.run(run())
    assert proxy.app[METRICS].fail_open.labels("capture")._value.get() == 0


# -- property-based: SSE byte streams from the upstream ------------------------------------------
sse_piece = st.one_of(
    st.builds(lambda t: sse(chunk(t), done=False), st.text(max_size=20)),
    st.builds(lambda t, f: sse(chunk(t, finish=f), done=False), st.text(max_size=5),
              st.sampled_from(["stop", "length", "tool_calls"])),
    st.just(b"data: [DONE]\n\n"),
    st.just(b": keep-alive\n\n"),
    st.sampled_from([b"event: ping\n", b"id: 7\n", b"retry: 10\n", b"data: {\n\n",
                     b"\r\n", b"\r", b"\n\n\n"]),
    st.binary(max_size=40),
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
MALFORMED_CHUNKS = [b'data: {"choices": 5}\n\n', b'data: {"choices": "abc"}\n\n',
                    b'data: {"choices": [{"index": "x", "delta": 5}]}\n\n',
                    b'data: {"choices": [{"index": 0, "delta": {"tool_calls": 5}}]}\n\n',
                    b'data: {"choices": [{"delta": {"tool_calls": [{"function": 5}]}}]}\n\n',
                    b'data: {"choices": [{"delta": {"tool_calls": [{"function": {"name": 5}}'
                    b']}}]}\n\n', b'data: {"choices": [], "usage": 5}\n\n']
"""Valid JSON events with the wrong types inside ``choices``."""


@st.composite
def sse_script(draw: st.DrawFn, malformed: bool = True) -> Script:
    pieces = sse_piece | st.sampled_from(MALFORMED_CHUNKS) if malformed else sse_piece
    payload = b"".join(draw(st.lists(pieces, min_size=0, max_size=12)))
    if draw(st.booleans()):  # truncate anywhere
        payload = payload[: draw(st.integers(0, len(payload)))]
    cuts = sorted(set(draw(st.lists(st.integers(0, len(payload)), max_size=8))))
    bounds = [0, *cuts, len(payload)]
    chunks = [payload[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    return Script(chunks=chunks, drop=draw(st.booleans()))


def _done_before_cut(script: Script) -> bool:
    """Whether the chat stream's ``[DONE]`` line arrived before the upstream cut it (with
    or without its blank line: the marker is all there is of it): the answer was whole,
    and the relay may have recorded it complete before it read the cut."""
    return script.content_type == "text/event-stream" and any(
        line.strip() == b"data: [DONE]" for line in b"".join(script.chunks).splitlines())


def _check_stream(looped: Any, script: Script, n: int, *, exact_when_cut: bool) -> None:
    lt, proxy, up = looped
    fail_open = proxy.app[METRICS].fail_open.labels("capture_response")

    async def run() -> None:
        before = fail_open._value.get()
        up.scripts.append(script)
        received = b""
        body = orjson.dumps({"model": "m", "stream": True,
                             "messages": [{"role": "user", "content": f"stream {n}"}]})
        async with aiohttp.ClientSession() as http:
            async with http.post(proxy.base_url + "/chat/completions", data=body,
                                 headers=AUTH) as r:
                assert r.status == 200
                rid = r.headers["x-lcm-request-id"]
                try:
                    async for piece in r.content.iter_any():
                        received += piece
                    ended_cleanly = True
                except aiohttp.ClientPayloadError:
                    ended_cleanly = False
        sent = b"".join(script.chunks)
        if script.drop and not exact_when_cut:
            assert sent.startswith(received)
        else:
            assert received == sent
        assert ended_cleanly is not script.drop  # a cut upstream is a cut client stream
        await proxy.settle()
        assert fail_open._value.get() == before  # decoding the stream never raised
        stored = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT COUNT(*) FROM messages WHERE request_id=? AND msg_role='assistant'",
            (rid,)).fetchone()[0])
        response = [e for e in events_for(proxy, rid) if e["kind"] == "response"]
        assert len(response) == 1
        if script.drop and not _done_before_cut(script):
            # nothing half-written is stored as an answer
            assert stored == 0 and response[0]["outcome"] == "incomplete"
        elif script.drop:  # [DONE] came before the cut: the answer was whole, and it is
            # recorded complete where the relay read the marker before the cut
            assert response[0]["outcome"] in ("complete", "incomplete")
        assert await health(proxy) == 200

    lt.run(run())


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(script=sse_script(), n=st.integers(0, 10 ** 9))
def test_any_sse_stream_reaches_the_client_byte_for_byte(looped: Any, script: Script,
                                                         n: int) -> None:
    _check_stream(looped, script, n, exact_when_cut=True)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(script=sse_script(malformed=False), n=st.integers(0, 10 ** 9))
def test_any_sse_stream_through_the_tool_loop(looped_tools: Any, script: Script,
                                              n: int) -> None:
    """With memory tools on, a stream the upstream cuts loses at most its unfinished last
    event (the loop relays whole events); the client still sees the cut. Events with
    wrong types inside ``choices`` are the next test's."""
    _check_stream(looped_tools, script, n, exact_when_cut=False)


TOOLLOOP_TYPE_BUG: list[Any] = []  # was an xfail: the tool loop now skips ill-typed parts


@pytest.mark.parametrize("event", [
    pytest.param(e, marks=TOOLLOOP_TYPE_BUG) if i in (0, 3, 4, 5, 6) else e
    for i, e in enumerate(MALFORMED_CHUNKS)])
def test_wrong_types_inside_choices_through_the_tool_loop(looped_tools: Any,
                                                          event: bytes) -> None:
    script = Script(chunks=[sse(chunk("a"), done=False), event, sse(chunk("b", "stop"))])
    _check_stream(looped_tools, script, 11, exact_when_cut=True)


def test_cut_stream_through_the_tool_loop_keeps_every_byte(looped_tools: Any) -> None:
    script = Script(chunks=[sse(chunk("hi"), done=False), b'data: {"choi'], drop=True)
    _check_stream(looped_tools, script, 7, exact_when_cut=True)


def _zstd_bomb(decoded_mib: int) -> bytes:
    """A zstd body of ``decoded_mib`` MiB once decoded, a few dozen KiB on the wire."""
    from backports import zstd

    c = zstd.ZstdCompressor(level=1)
    zeros = bytes(1 << 20)
    return (c.compress(b'{"model": "m", "messages": [{"role": "user", "content": "')
            + b"".join(c.compress(zeros) for _ in range(decoded_mib)) + c.flush())


@pytest.mark.parametrize("method,path", [
    ("POST", "/v1/chat/completions"), ("POST", "/v1/responses"), ("POST", "/v1/messages"),
    ("POST", "/lcm/ui/login"), ("POST", "/lcm/v1/purge"), ("POST", "/v1/embeddings"),
    ("GET", "/lcm/health"), ("POST", "/nowhere")])
async def test_an_unread_compressed_body_does_not_stall_the_proxy(
        scripted: ScriptedUpstream, tmp_path: Path, method: str, path: str) -> None:
    """A compressed body the proxy does not read to its end (over the limit: 413; a
    route that takes no body; no route) was drained for aiohttp's 10 s lingering time,
    decoding as it went without letting any other request run: a 30 KiB zstd body
    stalled every agent's chat for 10 s. Such a connection is closed instead; other
    requests keep being answered."""
    proxy = await start_proxy(scripted.base_url, tmp_path / "d")
    bomb = await asyncio.to_thread(_zstd_bomb, 2048)
    assert len(bomb) < 200_000
    try:
        async with aiohttp.ClientSession() as http:
            async def send_bomb() -> int:
                try:
                    async with http.request(method, proxy.root + path, data=bomb, headers={
                            **AUTH, "Content-Encoding": "zstd"}) as r:
                        await r.read()
                        return r.status
                except aiohttp.ClientError:  # closed without an answer: fine too
                    return 0

            async def worst_probe() -> float:
                loop = asyncio.get_running_loop()
                worst = 0.0
                until = loop.time() + 3.0
                while loop.time() < until:
                    started = loop.time()
                    async with http.get(proxy.root + "/lcm/livez") as r:
                        assert r.status == 200
                    worst = max(worst, loop.time() - started)
                    await asyncio.sleep(0.05)
                return worst

            status, worst = await asyncio.gather(send_bomb(), worst_probe())
        assert status in (0, 200, 401, 404, 405, 413), status
        # the stall this guards against is aiohttp's 10 s lingering drain; a loaded
        # 2-CPU runner answers a probe in up to ~2 s, so the bound sits between the two
        assert worst < 5.0, f"the proxy stalled for {worst:.1f} s"
    finally:
        await proxy.close()
