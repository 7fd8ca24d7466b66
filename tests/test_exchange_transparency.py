"""The tool loop is transparent: what the client sees, through the real openai SDK and a
fake upstream on loopback, is what the upstream would have sent it with no memory round
in between (issue 25). Each test failed before the request path became one exchange."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from memory_core.assembly import budget
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream, Reply

KEY = "sk-exchange-0123456789abcdef"
GREP = {"id": "call_m", "name": "memory_grep",
        "arguments": orjson.dumps({"query": "x", "start_time": None, "end_time": None,
                                   "limit": None}).decode()}
SEARCH = {"id": "call_m", "name": "memory_search",
          "arguments": orjson.dumps({"query": "x"}).decode()}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}}}}}


@pytest.fixture
async def make(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[Any]:
    """``await make(**tools_settings)``: a proxy on the fake upstream. The tools go
    with every request unless ``offer`` says otherwise: most tests here are about the
    tool loop on a one-message request (when the tools go by default: section (k))."""
    made: list[RunningProxy] = []

    async def start(**tools: Any) -> RunningProxy:
        made.append(await start_proxy(upstream.base_url, tmp_path / f"d{len(made)}",
                                      tools={"offer": "always", **tools}))
        return made[-1]

    yield start
    for running in made:
        await running.close()


def client(proxy: RunningProxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)


def chunk(delta: dict[str, Any], finish: str | None = None, *, cid: str = "chatcmpl-a",
          created: int = 100) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(*objs: Any) -> bytes:
    return b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in objs) + b"data: [DONE]\n\n"


def response_events(proxy: RunningProxy) -> list[dict[str, Any]]:
    data = proxy.engine.export(events=True)
    return [e for e in data.get("events", []) if e.get("kind") == "response"]


def assistant_rows(proxy: RunningProxy) -> list[dict[str, Any]]:
    data = proxy.engine.export(events=True)
    return [m for t in data["threads"] for m in t["messages"]
            if m["role"] == "assistant" and not m["hidden"]]


# -- (a) an error of the second upstream call keeps its status ----------------------------
@pytest.mark.parametrize("status", [429, 503])
async def test_an_error_after_a_hidden_round_reaches_a_stream_with_its_true_status(
        make: Any, upstream: FakeUpstream, status: int) -> None:
    proxy = await make()
    err = {"message": "Rate limit reached", "type": "requests", "param": None,
           "code": "rate_limit_exceeded"}
    upstream.push(Reply(content=None, tool_calls=[GREP]),
                  Reply(status=status, error=err, headers={"retry-after": "7",
                                                           "x-ratelimit-remaining": "0"}))
    with pytest.raises(openai.APIStatusError) as info:
        stream = await client(proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        async for _ in stream:
            pass
    assert info.value.status_code == status
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.response.headers["x-ratelimit-remaining"] == "0"
    assert orjson.loads(info.value.response.content) == {"error": err}
    assert len(upstream.chat_requests) == 2


# -- (b) calls without ``index`` sharing a chunk -------------------------------------------
async def test_a_memory_call_without_index_does_not_leak_into_the_clients_call(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    upstream.push(Reply(raw_stream=sse(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [
            {"id": "call_c", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "call_m", "type": "function",
             "function": {"name": "memory_grep", "arguments": GREP["arguments"]}}]}),
        chunk({}, "tool_calls"))))
    stream = await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "weather?"}], stream=True,
        tools=[WEATHER_TOOL])  # type: ignore[list-item]
    calls: dict[int, list[str]] = {}
    async for part in stream:
        for ch in part.choices:
            for tc in ch.delta.tool_calls or []:
                slot = calls.setdefault(tc.index, ["", ""])
                slot[0] += (tc.function.name or "") if tc.function else ""
                slot[1] += (tc.function.arguments or "") if tc.function else ""
    assert calls == {0: ["get_weather", '{"city":"Paris"}']}


# -- (c) heartbeats while a hidden round runs ----------------------------------------------
async def test_a_slow_hidden_round_keeps_the_stream_alive_with_comments(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make(heartbeat_seconds=0.2)
    upstream.push(Reply(content=None, tool_calls=[GREP]),
                  Reply(content="found it", answer_delay=1.0))
    gaps: list[float] = []
    body = b""
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
            json={"model": "m", "stream": True,
                  "messages": [{"role": "user", "content": "hi"}]}) as resp:
        assert resp.status == 200
        last = time.monotonic()
        async for data in resp.content.iter_any():
            gaps.append(time.monotonic() - last)
            last = time.monotonic()
            body += data
    assert body.count(b": keep-alive\n\n") >= 2
    assert max(gaps) < 0.8  # never a second of silence
    assert b"found it" not in body or body.index(b": keep-alive") < body.index(b"found")


# -- (d) reasoning is kept and sent back ---------------------------------------------------
async def test_streamed_reasoning_goes_back_to_the_upstream_in_the_next_round(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    upstream.push(Reply(raw_stream=sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": "I should "}),
        chunk({"reasoning_content": "look it up."}),
        chunk({"tool_calls": [{"index": 0, "id": "call_m", "type": "function",
                               "function": {"name": "memory_grep",
                                            "arguments": GREP["arguments"]}}]}),
        chunk({}, "tool_calls"))), Reply(content="done"))
    stream = await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    async for _ in stream:
        pass
    second = upstream.chat_requests[-1]["json"]["messages"]
    call = next(m for m in second if m.get("tool_calls"))
    assert call["reasoning_content"] == "I should look it up."


# -- (e) a non-streaming client that leaves ----------------------------------------------
async def test_a_client_that_leaves_cancels_the_call_and_nothing_is_an_answer(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make(heartbeat_seconds=0.1)
    upstream.push(Reply(content="an answer nobody reads", answer_delay=1.5))
    impatient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0,
                                   timeout=0.4)
    with pytest.raises(openai.APITimeoutError):
        await impatient.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    await asyncio.sleep(1.6)
    await proxy.settle()
    assert assistant_rows(proxy) == []
    events = response_events(proxy)
    assert events and events[-1]["data"]["client_gone"] is True


async def aborted(upstream: FakeUpstream, within: float) -> bool:
    """True once the fake upstream saw its caller go away, waiting ``within`` seconds."""
    deadline = time.monotonic() + within
    while upstream.aborted == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return upstream.aborted == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_client_that_leaves_a_plain_request_cancels_the_call(
        make: Any, upstream: FakeUpstream, stream: bool) -> None:
    # No memory tools (nothing stored yet): the request is forwarded and relayed.
    proxy = await make(offer="history", heartbeat_seconds=0.1)
    upstream.push(Reply(content="an answer nobody reads", answer_delay=3.0))
    impatient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0,
                                   timeout=0.4)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        answer = await impatient.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=stream)
        if stream:
            async for _ in answer:  # type: ignore[union-attr]
                pass
    assert "tools" not in upstream.chat_requests[-1]["json"]
    # The upstream call ends with the client, long before its answer was due.
    assert await aborted(upstream, 1.5) and time.monotonic() - started < 2.5
    await proxy.settle()
    assert assistant_rows(proxy) == []
    events = response_events(proxy)
    assert events and events[-1]["data"]["client_gone"] is True
    assert events[-1]["data"]["outcome"] == "incomplete"


async def test_a_client_that_leaves_a_stalled_stream_closes_the_upstream(
        make: Any, upstream: FakeUpstream) -> None:
    # The first words, then the upstream thinks for 3 s: the client leaves meanwhile.
    proxy = await make(offer="history", heartbeat_seconds=0.1)
    upstream.push(Reply(content="first words, then a long pause", piece=12,
                        write_size=120, delay=3.0))
    stream = await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    left = time.monotonic()
    await stream.close()
    assert await aborted(upstream, 1.5) and time.monotonic() - left < 2.0
    assert upstream.finished_streams == 0
    await proxy.settle()
    assert assistant_rows(proxy) == []
    assert response_events(proxy)[-1]["data"]["client_gone"] is True


# -- (f) one id, one role chunk ------------------------------------------------------------
async def test_a_streamed_answer_keeps_one_id_across_hidden_rounds(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    upstream.push(
        Reply(raw_stream=sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Let me check. "}),
            chunk({"tool_calls": [{"index": 0, "id": "call_m", "type": "function",
                                   "function": {"name": "memory_grep",
                                                "arguments": GREP["arguments"]}}]}),
            chunk({}, "tool_calls"))),
        Reply(raw_stream=sse(
            chunk({"role": "assistant", "content": ""}, cid="chatcmpl-b", created=200),
            chunk({"content": "Found."}, cid="chatcmpl-b", created=200),
            chunk({}, "stop", cid="chatcmpl-b", created=200))))
    stream = await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    ids, roles, text = set(), 0, ""
    async for part in stream:
        ids.add((part.id, part.created))
        for ch in part.choices:
            roles += ch.delta.role is not None
            text += ch.delta.content or ""
    assert ids == {("chatcmpl-a", 100)} and roles == 1 and text == "Let me check. Found."


# -- (g) the finish reason recorded is the upstream's --------------------------------------
@pytest.mark.parametrize("stream", [False, True])
async def test_the_recorded_finish_reason_is_the_upstreams(
        make: Any, upstream: FakeUpstream, stream: bool) -> None:
    proxy = await make()
    upstream.push(Reply(content=None, tool_calls=[GREP]),
                  Reply(content="cut short", finish_reason="length"))
    if stream:
        s = await client(proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        finish = [ch.finish_reason async for part in s for ch in part.choices
                  if ch.finish_reason]
    else:
        r = await client(proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
        finish = [r.choices[0].finish_reason]
    assert finish == ["length"]
    await proxy.settle()
    assert response_events(proxy)[-1]["data"]["finish_reasons"] == ["length"]


# -- (h) n > 1 ------------------------------------------------------------------------------
async def test_several_choices_are_forwarded_without_memory_tools(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    upstream.push(Reply(content=None, tool_calls=[GREP], n=2))
    r = await client(proxy).chat.completions.create(
        model="m", n=2, messages=[{"role": "user", "content": "hi"}])
    assert len(r.choices) == 2
    assert all(c.message.tool_calls[0].function.name == "memory_grep" for c in r.choices)
    assert "tools" not in upstream.chat_requests[-1]["json"]


# -- (i) strict only when the client uses it -----------------------------------------------
@pytest.mark.parametrize(("mode", "client_strict", "expect"), [
    ("auto", False, False), ("auto", True, True), ("always", False, True),
    ("never", True, False)])
async def test_memory_tools_are_strict_only_when_asked(
        make: Any, upstream: FakeUpstream, mode: str, client_strict: bool,
        expect: bool) -> None:
    proxy = await make(strict=mode)
    tool = {"type": "function", "function": dict(WEATHER_TOOL["function"])}
    if client_strict:
        tool["function"]["strict"] = True
    await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}],
        tools=[tool])  # type: ignore[list-item]
    ours = [t for t in upstream.chat_requests[-1]["json"]["tools"]
            if t["function"]["name"] != "get_weather"]
    assert ours and all(("strict" in t["function"]) is expect for t in ours)


# -- (j) integers past 64 bits -------------------------------------------------------------
async def test_integers_past_64_bits_survive_the_tool_path(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    big = b"123456789012345678901234567890"
    answer = (b'{"id": "chatcmpl-big", "object": "chat.completion", "created": 1, "model": "m",'
              b' "trace": ' + big + b', "choices": [{"index": 0, "finish_reason": "stop",'
              b' "message": {"role": "assistant", "content": "ok"}}]}')
    upstream.push(Reply(content=None, tool_calls=[GREP]), Reply(raw_body=answer))
    raw = (b'{"model": "m", "metadata_id": ' + big
           + b', "messages": [{"role": "user", "content": "hi"}]}')
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/chat/completions", data=raw,
            headers={"Authorization": f"Bearer {KEY}",
                     "Content-Type": "application/json"}) as resp:
        assert resp.status == 200
        got = await resp.read()
    assert b'"trace":' + big in got.replace(b" ", b"")
    assert all(big in sent["raw"] for sent in upstream.chat_requests[-2:])


@pytest.mark.parametrize("turns", [1, 400])  # a short body, and one past 64 KB
async def test_integers_past_64_bits_survive_a_rewritten_body(
        make: Any, upstream: FakeUpstream, turns: int) -> None:
    """The memory path rewrites the body (a block, the memory tools): a field beside
    the conversation keeps an integer orjson would read as a float, byte for byte,
    whether the body is scanned (short) or its other fields walked (long)."""
    proxy = await make()
    big = b"123456789012345678901234567890"
    history = []
    for i in range(turns - 1):
        history += [{"role": "user", "content": f"Step {i}: " + "notes on the rollout " * 8},
                    {"role": "assistant", "content": f"Done with step {i}."}]
    history.append({"role": "user", "content": "What is our deploy window?"})
    raw = (b'{"model": "m", "metadata_id": ' + big + b', "messages": '
           + orjson.dumps(history) + b"}")
    assert (len(raw) > 64 * 1024) is (turns > 1)
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/chat/completions", data=raw,
            headers={"Authorization": f"Bearer {KEY}",
                     "Content-Type": "application/json"}) as resp:
        assert resp.status == 200
        state = resp.headers["x-lcm-memory"]
    sent = upstream.chat_requests[-1]["raw"]
    assert state == "injected" or b'"tools"' in sent  # the body was rewritten
    assert b'"metadata_id":' + big in sent.replace(b" ", b"")


def test_exact_source_reparses_only_for_the_fields_it_keeps() -> None:
    from proxy import rewrite

    filler = [{"role": "user", "content": "x" * 70_000}]
    for fields, conversation, expect in [
            (b'"n": 123456789012345678901234567890', [], True),
            (b'"n": 1', [{"role": "user", "content": "x", "n": 2 ** 70}], False),
            (b'"n": -92233720368547758090', [], True),
            (b'"n": 1e19', [], True),  # a float literal that large: read again, same value
            (b'"n": 1.5, "t": [1, {"u": 18446744073709551615}]', [], False)]:
        messages = orjson.dumps(filler + conversation) if not conversation else \
            json.dumps(filler + conversation).encode()
        raw = b'{"model": "m", ' + fields + b', "messages": ' + messages + b"}"
        body = orjson.loads(raw)
        got = rewrite.exact_source(raw, body, "messages")
        assert (got is not body) is expect
        want = json.loads(raw) if expect else body
        assert {k: v for k, v in got.items() if k != "messages"} == \
            {k: v for k, v in want.items() if k != "messages"}
        # A short body is scanned: any run of 19 digits, the conversation's too.
        short = b'{"model": "m", ' + fields + b', "messages": []}'
        parsed = orjson.loads(short)
        assert (rewrite.exact_source(short, parsed, "messages") is not parsed) \
            is rewrite.needs_exact_numbers(short)


# -- (k) memory off means no tools ---------------------------------------------------------
async def test_memory_off_adds_no_tools(make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}],
        extra_headers={"X-LCM-Memory": "off"})
    assert "tools" not in upstream.chat_requests[-1]["json"]


async def test_the_memory_tools_cost_few_prompt_tokens(make: Any, upstream: FakeUpstream) -> None:
    proxy = await make()
    await client(proxy).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}])
    tools = upstream.chat_requests[-1]["json"]["tools"]
    assert len(tools) == 5 and budget.tools_tokens(tools) <= 350  # 542 before issue 25


def recording_client(proxy: RunningProxy, sent: list[bytes]) -> openai.AsyncOpenAI:
    """The SDK, keeping the body of every request it sends in ``sent``."""
    async def keep(request: Any) -> None:
        sent.append(request.content)

    http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [keep]})
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0,
                              http_client=http)


def with_block(sent: bytes, text: str, forwarded: str) -> bytes:
    """``sent`` with the newest user message's ``text`` as ``forwarded`` (block and
    text, when the proxy injected one)."""
    assert forwarded.endswith(text)
    head, found, tail = sent.rpartition(orjson.dumps(text))
    assert found
    return head + orjson.dumps(forwarded) + tail


async def test_a_request_holding_its_whole_history_goes_without_tools(
        make: Any, upstream: FakeUpstream) -> None:
    proxy = await make(offer="history")
    sent: list[bytes] = []
    sdk = recording_client(proxy, sent)
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    for turn in range(3):
        raw = await sdk.chat.completions.with_raw_response.create(model="m",
                                                                   messages=history)
        # Nothing stored beyond what it carries: the upstream gets the client's bytes
        # but for the block (a first turn has one: the guidelines), and no tools.
        got = upstream.chat_requests[-1]
        assert "tools" not in got["json"], turn
        assert got["raw"] == with_block(sent[-1], history[-1]["content"],
                                        got["json"]["messages"][-1]["content"]), turn
        if turn == 0:
            assert raw.headers["x-lcm-memory"] == "injected"
            assert "memory_grep" not in got["json"]["messages"][-1]["content"]
        history += [{"role": "assistant", "content": raw.parse().choices[0].message.content},
                    {"role": "user", "content": f"and then {turn}?"}]
        await proxy.settle()
    # Another conversation under the same key: the first is stored beyond its view.
    await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
    offered = {t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]}
    assert "memory_grep" in offered


async def test_a_block_without_tools_does_not_point_to_them(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    # Every fact restated (in_view_tokens 0): a block on a request that carries its
    # whole history, so no tools; the block must not tell the model to call them.
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              injection={"in_view_tokens": 0})
    try:
        sent: list[bytes] = []
        sdk = recording_client(proxy, sent)
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "We decided to ship the release on Friday."}]
        r = await sdk.chat.completions.create(model="m", messages=history)
        await proxy.settle()
        history += [{"role": "assistant", "content": r.choices[0].message.content},
                    {"role": "user", "content": "When do we ship the release?"}]
        raw = await sdk.chat.completions.with_raw_response.create(model="m",
                                                                   messages=history)
        assert raw.headers["x-lcm-memory"] == "injected", raw.headers
        got = upstream.chat_requests[-1]["json"]
        assert "tools" not in got
        block = got["messages"][-1]["content"]
        assert "Friday" in block and "memory_grep" not in block
        # Apart from the block, the upstream sees what the client sent.
        got["messages"][-1]["content"] = history[-1]["content"]
        assert got == orjson.loads(sent[-1])
    finally:
        await proxy.close()


# -- (l) hidden rounds within the context budget -------------------------------------------
async def test_no_hidden_round_goes_over_the_context_budget(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "budget",
                              context={"model_windows": ["tiny*=2000"]},
                              tools={"offer": "always"})
    try:
        # A request that fits its budget with the memory tools, leaving no room for
        # a tool result: the hidden round is not sent. (A request over budget is
        # forwarded as sent, without the memory tools: tests/test_context_budget.py.)
        probe = await client(proxy).chat.completions.with_raw_response.create(
            model="tiny-1", max_tokens=100,
            messages=[{"role": "user", "content": "word " * 1000}])
        note = dict(p.split("=", 1) for p in probe.headers["x-lcm-context"].split("; "))
        # The room the messages leave (the probe's block, if any, is not theirs: the
        # next request fills it, and a block too small to inject is left out).
        room = int(note["budget"]) - int(note["tokens"]) + (
            int(probe.headers["x-lcm-injected-tokens"]) + 1
            if "x-lcm-injected-tokens" in probe.headers else 0)
        assert room > 20, note
        await proxy.settle()
        before = len(upstream.chat_requests)
        # (A 2,000-token window gets the short tool set: memory_search, view_message.)
        upstream.push(Reply(content="From what you said: ", tool_calls=[SEARCH]),
                      Reply(content="never asked for"))
        raw = await client(proxy).chat.completions.with_raw_response.create(
            model="tiny-1", max_tokens=100,
            messages=[{"role": "user", "content": "word " * (1000 + room - 8)}])
        assert raw.headers["x-lcm-memory"] != "over-budget", raw.headers
        r = raw.parse()
        assert r.choices[0].message.content == "From what you said: "
        assert not r.choices[0].message.tool_calls and r.choices[0].finish_reason == "stop"
        # Chat rounds carry the tools; a background summary (the probe's thread
        # compacted through the upstream) does not.
        rounds = [q for q in upstream.chat_requests[before:] if "tools" in q["json"]]
        assert len(rounds) == 1
    finally:
        await proxy.close()


async def test_the_query_string_reaches_the_upstream_on_every_api(
        make: Any, upstream: FakeUpstream) -> None:
    """``?api-version=`` (Azure OpenAI), ``?beta=true`` (the Anthropic SDK's beta
    namespace, Claude Code): the chat routes forward the client's query string as
    encoded, as the pass-through routes do, on every upstream round."""
    import anthropic

    proxy = await make()
    root = proxy.base_url.removesuffix("/v1")
    azure = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0,
                               default_query={"api-version": "2024-10-21"})
    upstream.push(Reply(tool_calls=[SEARCH]), Reply(content="done"))
    await azure.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "What is the port?"}])
    await azure.responses.create(model="m", input="hello")
    claude = anthropic.AsyncAnthropic(base_url=root, api_key=KEY, max_retries=0)
    await claude.messages.create(model="claude-x", max_tokens=10,
                                 messages=[{"role": "user", "content": "hi"}],
                                 extra_query={"beta": "true"})
    by_path = [(r["path"], r["query"]) for r in upstream.requests]
    assert by_path == [("/v1/chat/completions", "api-version=2024-10-21")] * 2 + [
        ("/v1/responses", "api-version=2024-10-21"), ("/v1/messages", "beta=true")]


@pytest.mark.parametrize("stream", [False, True])
async def test_an_upstream_that_takes_no_tools_gets_none_and_the_chat_goes_on(
        make: Any, upstream: FakeUpstream, stream: bool) -> None:
    """A model served without tool calling (Ollama: "… does not support tools") refuses
    the request the memory tools were added to: the proxy sends it again without
    them, the client gets the model's answer, and that model's later requests go
    without them from the start (another model still gets them). A refusal of the
    client's own tools reaches the client as the upstream said it."""
    proxy = await make()
    c = client(proxy)
    refusal = {"message": "registry.ollama.ai/library/gemma3:latest does not support tools",
               "type": "api_error", "param": None, "code": None}

    async def ask(model: str, **kw: Any) -> str:
        messages = [{"role": "user", "content": "What is the port?"}]
        if stream:
            out = await c.chat.completions.create(model=model, messages=messages,
                                                  stream=True, **kw)
            return "".join([ch.choices[0].delta.content or "" async for ch in out
                            if ch.choices])
        done = await c.chat.completions.create(model=model, messages=messages, **kw)
        return done.choices[0].message.content or ""

    upstream.push(Reply(status=400, error=refusal), Reply(content="It is 5432."))
    assert await ask("gemma3") == "It is 5432."
    first, second = upstream.chat_requests
    assert {t["function"]["name"] for t in first["json"]["tools"]} >= {"memory_search"}
    assert "tools" not in second["json"]
    upstream.push(Reply(content="Again."))
    assert await ask("gemma3") == "Again."
    assert "tools" not in upstream.chat_requests[-1]["json"]
    upstream.push(Reply(content="Tools here."))
    assert await ask("qwen3") == "Tools here."
    assert "tools" in upstream.chat_requests[-1]["json"]
    # The client's own tools refused: sent again without the memory tools only,
    # and the upstream's answer to the client's request is what the client gets.
    upstream.push(Reply(status=400, error=refusal), Reply(status=400, error=refusal))
    with pytest.raises(openai.BadRequestError, match="does not support tools"):
        await ask("llama2", tools=[WEATHER_TOOL])
    assert [t["function"]["name"] for t in upstream.chat_requests[-1]["json"]["tools"]] == [
        "get_weather"]


async def test_a_body_cut_off_on_the_tool_path_is_a_502_and_recorded(
        make: Any, upstream: FakeUpstream) -> None:
    """The upstream hangs up halfway through a whole (non-streamed) answer the tool
    loop must read: the client gets a 502 in OpenAI's error shape, not the proxy's
    500, and the request is recorded as failed."""
    proxy = await make()
    upstream.push(Reply(content="a long answer " * 20, drop_after=40))
    with pytest.raises(openai.APIStatusError) as info:
        await client(proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 502
    assert info.value.body["type"] == "upstream_error"  # type: ignore[index]
    await proxy.settle()
    outcomes = [e["data"].get("outcome") for e in response_events(proxy)]
    assert "upstream_unreachable" in outcomes, outcomes
