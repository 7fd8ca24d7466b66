"""What a client sees of the rounds the proxy hides (memory tool calls it answers
itself), for every API, through the real SDKs against the fake upstream's real
byte formats, events split across reads:

- a hidden round's thinking (Anthropic) or reasoning deltas (Chat Completions) are
  never shown, streamed or not; the upstream gets them back with the round's
  memory calls; the answering round's own thinking is shown, in its place;
- a later round that fails (an error status, an upstream that went away, a body
  that broke off) reaches the client as the API's own error: the upstream's
  status, headers and body while nothing was sent, else the API's in-stream error
  event, never a silently cut stream or a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY, RunningProxy
from tests.fake_anthropic import AReply, text, thinking, tool_use
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply

SIG = "EqQBCkYIARgCKkC+sig/with+base64==" * 3
THINK = {"type": "enabled", "budget_tokens": 1024}
LOOKUP = {"query": "GRF"}


def anthropic_client(proxy: RunningProxy) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)


def openai_client(proxy: RunningProxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


def sent(upstream: FakeUpstream, path: str) -> list[dict[str, Any]]:
    return [r["json"] for r in upstream.requests if r["path"] == path]


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """``(event name, data)`` of an Anthropic or Responses SSE body."""
    out = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = dict(line.split(b": ", 1) for line in block.split(b"\n")
                     if b": " in line and not line.startswith(b":"))
        if b"data" in lines:
            out.append((lines.get(b"event", b"").decode(), orjson.loads(lines[b"data"])))
    return out


async def raw_stream(proxy: RunningProxy, path: str, body: dict[str, Any]
                     ) -> tuple[int, dict[str, str], bytes]:
    """POST a streamed request; the status, headers and every byte (a cut-off body
    as far as it came)."""
    headers = {"x-api-key": TEST_KEY, "anthropic-version": "2023-06-01",
               "authorization": f"Bearer {TEST_KEY}"}
    async with aiohttp.ClientSession() as http, http.post(
            f"{proxy.root}{path}", headers=headers, json=body) as resp:
        raw = b""
        with contextlib.suppress(aiohttp.ClientPayloadError):
            async for chunk in resp.content.iter_any():
                raw += chunk
        return resp.status, dict(resp.headers), raw


# -- 1. a hidden round's thinking -------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
async def test_a_hidden_rounds_thinking_is_never_shown(
        make_proxy: Any, upstream: FakeUpstream, stream: bool) -> None:
    """Round 1 thinks and only calls a memory tool (thinking arrives slower than the
    heartbeat, so the client's status is sent meanwhile); round 2 thinks again and
    answers. The client sees one message: ``message_start`` once, round 2's thinking
    and text at indexes 0 and 1, the summed usage; round 1's thinking nowhere. The
    upstream's round 2 got round 1's thinking back, signature intact, before its
    memory call (extended thinking requires it with the tool result)."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    upstream.anthropic_replies.extend([
        AReply(content=[thinking("SECRET-PLAN: look it up.", SIG),
                        tool_use("toolu_m", "memory_grep", LOOKUP)],
               piece=2, write_size=13, delay=0.02),
        AReply(content=[thinking("Found it.", SIG + "2"), text("It is GRF-7781.")],
               write_size=7)])
    body = {"model": "claude-x", "max_tokens": 2000, "thinking": THINK,
            "messages": [{"role": "user", "content": "Which dashboard?"}]}
    c = anthropic_client(proxy)
    if stream:
        status, _, raw = await raw_stream(proxy, "/v1/messages", dict(body, stream=True))
        assert status == 200
        assert b"SECRET-PLAN" not in raw and b"toolu_m" not in raw
        # kept alive while round 1 was held (the fake's own ping is one)
        assert raw[:raw.index(b"content_block_start")].count(b"event: ping") > 2
        got = events(raw)
        names = [n for n, _ in got]
        assert names.count("message_start") == 1 and names[-1] == "message_stop"
        starts = [(d["index"], d["content_block"]["type"]) for n, d in got
                  if n == "content_block_start"]
        assert starts == [(0, "thinking"), (1, "text")]
        assert {d["index"] for n, d in got if n.startswith("content_block")} == {0, 1}
        delta = next(d for n, d in got if n == "message_delta")
        assert delta["delta"]["stop_reason"] == "end_turn"
        assert delta["usage"]["input_tokens"] == 20 and delta["usage"]["output_tokens"] == 10
        upstream.anthropic_replies.extend([
            AReply(content=[thinking("SECRET-PLAN again.", SIG),
                            tool_use("toolu_n", "memory_grep", LOOKUP)], write_size=9),
            AReply(content=[thinking("Found it.", SIG + "2"), text("It is GRF-7781.")],
                   write_size=7)])
        async with c.messages.stream(**body) as s:  # the SDK reads the same stream
            final = await s.get_final_message()
    else:
        final = await c.messages.create(**body)
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "Found it."  # type: ignore[union-attr]
    assert final.usage.input_tokens == 20
    second = sent(upstream, "/v1/messages")[-1]
    assert second["messages"][-2] == {"role": "assistant", "content": [
        thinking("SECRET-PLAN again." if stream else "SECRET-PLAN: look it up.", SIG),
        tool_use("toolu_n" if stream else "toolu_m", "memory_grep", LOOKUP)]}


@pytest.mark.parametrize("stream", [False, True])
async def test_the_next_request_after_a_hidden_thinking_round_is_valid(
        make_proxy: Any, upstream: FakeUpstream, stream: bool) -> None:
    """The visible turn after a hidden round is a client tool call without thinking
    (the model thought before its memory call). When the client sends it back with
    its tool result, the upstream gets the tool-use cycle as the model wrote it:
    the hidden round (thinking first, signature intact), its result, the client's
    call, the client's result — what extended thinking requires."""
    proxy = await make_proxy(tools={"offer": "always"})
    weather = {"name": "get_weather", "description": "Weather.",
               "input_schema": {"type": "object", "properties": {}}}
    upstream.anthropic_replies.extend([
        AReply(content=[thinking("Recall first.", SIG),
                        tool_use("toolu_m", "memory_grep", LOOKUP)], write_size=11),
        AReply(content=[tool_use("toolu_w", "get_weather", {})], write_size=11)])
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather at the site?"}]
    c = anthropic_client(proxy)
    kw: dict[str, Any] = {"model": "claude-x", "max_tokens": 2000, "thinking": THINK,
                          "tools": [weather]}
    if stream:
        async with c.messages.stream(messages=history, **kw) as s:
            turn = await s.get_final_message()
    else:
        turn = await c.messages.create(messages=history, **kw)
    assert [b.type for b in turn.content] == ["tool_use"]
    history += [{"role": "assistant", "content": [b.to_dict() for b in turn.content]},
                {"role": "user", "content": [{"type": "tool_result",
                                              "tool_use_id": "toolu_w", "content": "sunny"}]}]
    await proxy.settle()
    await c.messages.create(messages=history, **kw)
    seen = sent(upstream, "/v1/messages")[-1]["messages"]
    kinds = [[b.get("type") for b in m["content"]] if isinstance(m["content"], list)
             else "str" for m in seen]
    assert kinds[-4:-1] == [["thinking", "tool_use"], ["tool_result"], ["tool_use"]]
    assert seen[-4]["content"][0] == thinking("Recall first.", SIG)
    assert seen[-1]["content"][0]["tool_use_id"] == "toolu_w"


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_hidden_rounds_reasoning_deltas_are_never_shown(
        make_proxy: Any, upstream: FakeUpstream, stream: bool, key: str) -> None:
    """Chat Completions with reasoning deltas (vLLM/DeepSeek ``reasoning_content``,
    OpenRouter ``reasoning``): a round of reasoning and a memory call is hidden
    whole; the answering round's reasoning and content reach the client."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    upstream.push(
        Reply(content=None, reasoning="SECRET-PLAN: look it up.", reasoning_key=key,
              tool_calls=[{"id": "call_m", "name": "memory_grep",
                           "arguments": orjson.dumps(LOOKUP).decode()}],
              piece=2, write_size=17, delay=0.01),
        Reply(content="It is GRF-7781.", reasoning="Found it.", reasoning_key=key,
              write_size=13))
    c = openai_client(proxy)
    msgs: Any = [{"role": "user", "content": "Which dashboard?"}]
    if stream:
        raw = b""
        async with c.chat.completions.with_streaming_response.create(
                model="m", messages=msgs, stream=True) as resp:
            async for chunk in resp.iter_bytes():
                raw += chunk
        assert b"SECRET-PLAN" not in raw and b"call_m" not in raw
        chunks = [orjson.loads(line[6:]) for line in raw.split(b"\n")
                  if line.startswith(b"data: {")]
        deltas = [ch["choices"][0]["delta"] for ch in chunks if ch["choices"]]
        assert deltas[0].get("role") == "assistant"
        assert "".join(d.get(key) or "" for d in deltas) == "Found it."
        assert "".join(d.get("content") or "" for d in deltas) == "It is GRF-7781."
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    else:
        done = await c.chat.completions.create(model="m", messages=msgs)
        message = done.choices[0].message.model_dump()
        assert message["content"] == "It is GRF-7781."
        assert message[key] == "Found it."
        assert b"SECRET-PLAN" not in orjson.dumps(done.model_dump())
    second = sent(upstream, "/v1/chat/completions")[1]
    assert second["messages"][-2][key] == "SECRET-PLAN: look it up."


# -- 2. a later round that fails ---------------------------------------------------------
def _script(upstream: FakeUpstream, api: str, second: str) -> None:
    """Round 1 only calls a memory tool; round 2 fails as ``second`` says:
    ``529`` (an error status with retry-after), ``hangup`` (no status line),
    ``drop`` (a stream cut off after a few events), ``early`` (its headers, half
    an event, then the connection closes)."""
    delay = 0.4  # longer than the heartbeat when a test wants the status sent first
    trickle = 0.001  # between round 1's 9-byte writes: it streams for a few heartbeats
    cut = {"drop": 300, "early": 40}.get(second)
    if api == "messages":
        upstream.anthropic_replies.append(AReply(content=[
            thinking("Recall.", SIG), tool_use("toolu_m", "memory_grep", LOOKUP)],
            write_size=9, delay=trickle))
        if second == "529":
            upstream.anthropic_replies.append(AReply(
                status=529, error={"type": "overloaded_error", "message": "Overloaded"},
                headers={"retry-after": "30"}, answer_delay=delay))
        elif cut is not None:
            upstream.anthropic_replies.append(AReply(
                content=[text("a long answer " * 20)], drop_after=cut, answer_delay=delay))
    elif api == "chat":
        upstream.push(Reply(content=None, tool_calls=[
            {"id": "call_m", "name": "memory_grep", "arguments": '{"query": "GRF"}'}],
            write_size=9, delay=trickle))
        if second == "529":
            upstream.push(Reply(status=429, error={
                "message": "Rate limit reached", "type": "requests", "param": None,
                "code": "rate_limit_exceeded"}, headers={"retry-after": "30"},
                answer_delay=delay))
        elif cut is not None:
            upstream.push(Reply(content="a long answer " * 20, drop_after=cut,
                                answer_delay=delay))
    else:
        upstream.push_response(RReply(text=None, calls=[
            {"call_id": "call_m", "name": "memory_grep", "arguments": '{"query": "GRF"}'}],
            write_size=9, delay=trickle))
        if second == "529":
            upstream.push_response(RReply(status=429, error={
                "message": "Rate limit reached", "type": "requests", "param": None,
                "code": "rate_limit_exceeded"}, headers={"retry-after": "30"},
                answer_delay=delay))
        elif cut is not None:
            upstream.push_response(RReply(text="a long answer " * 20, drop_after=cut,
                                          answer_delay=delay))
    if second == "hangup":  # round 2 finds no one: the connection closes unanswered
        original, before = upstream._record, len(upstream.requests)

        async def record_then_arm(request: Any) -> bytes:
            raw = await original(request)
            if len(upstream.requests) == before + 1:
                upstream.hang_ups, upstream.hang_up_delay = 1, delay
            return raw
        upstream._record = record_then_arm  # type: ignore[method-assign]


async def _ask(proxy: RunningProxy, api: str, stream: bool) -> Any:
    """The request through the SDK of ``api``; what it returned (a stream read whole:
    its events)."""
    if api == "messages":
        c = anthropic_client(proxy)
        kw: dict[str, Any] = {"model": "claude-x", "max_tokens": 2000, "thinking": THINK,
                              "messages": [{"role": "user", "content": "Which?"}]}
        if not stream:
            return await c.messages.create(**kw)
        return [e async for e in await c.messages.create(stream=True, **kw)]
    o = openai_client(proxy)
    if api == "chat":
        msgs: Any = [{"role": "user", "content": "Which?"}]
        if not stream:
            return await o.chat.completions.create(model="m", messages=msgs)
        return [e async for e in await o.chat.completions.create(
            model="m", messages=msgs, stream=True)]
    if not stream:
        return await o.responses.create(model="m", input="Which?")
    return [e async for e in await o.responses.create(model="m", input="Which?",
                                                        stream=True)]


@pytest.mark.parametrize("api", ["messages", "chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("second", ["529", "hangup", "early"])
async def test_a_later_rounds_error_reaches_the_client_as_the_apis_error(
        make_proxy: Any, upstream: FakeUpstream, api: str, stream: bool,
        second: str) -> None:
    """Round 2 fails before anything reached the client (round 1 was hidden, the
    heartbeat longer than the wait), streamed or not. Refused (429/529 with
    retry-after): the client gets the upstream's status, headers and body, and the
    SDK raises its status error with the upstream's error type. The upstream gone
    before answering, or gone after its headers and half an event (``early``: the
    client's status line was not sent yet): a 502 in the API's error shape."""
    if second == "early" and not stream:
        pytest.skip("streams only: a whole answer's status line waits for its end")
    # a heartbeat longer than the whole exchange (round 1 streams for a while)
    proxy = await make_proxy(tools={"heartbeat_seconds": 60.0, "offer": "always"})
    _script(upstream, api, second)
    errors = (anthropic.APIStatusError, openai.APIStatusError)
    with pytest.raises(errors) as info:
        await _ask(proxy, api, stream)
    exc: Any = info.value
    body = exc.body
    assert isinstance(body, dict)
    if second in ("hangup", "early"):
        assert exc.status_code == 502
        assert (body["error"]["type"] == "api_error" if api == "messages"
                else body["type"] == "upstream_error"), body
        return
    assert exc.status_code == (529 if api == "messages" else 429)
    assert exc.response.headers["retry-after"] == "30"
    if api == "messages":
        assert body["error"]["type"] == "overloaded_error"
    else:
        assert body["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize("api", ["messages", "chat", "responses"])
@pytest.mark.parametrize("second", ["529", "hangup", "drop"])
async def test_a_later_round_failing_after_the_stream_started_is_an_error_event(
        make_proxy: Any, upstream: FakeUpstream, api: str, second: str) -> None:
    """The client's status was sent (heartbeats while round 1 was hidden), then round
    2 failed: refused with an error status, the upstream gone before answering, or
    its stream cut off. The client's stream ends with the API's own in-stream error
    (Anthropic ``event: error``, Chat Completions an ``{"error": …}`` chunk,
    Responses an ``error`` event, then ``response.failed``, the terminal event),
    which the SDK raises or yields; never a clean end that looks like an answer,
    never a hang."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    _script(upstream, api, second)
    path = {"messages": "/v1/messages", "chat": "/v1/chat/completions",
            "responses": "/v1/responses"}[api]
    body: dict[str, Any] = {"model": "m", "stream": True}
    if api == "responses":
        body["input"] = "Which?"
    else:
        body["messages"] = [{"role": "user", "content": "Which?"}]
    if api == "messages":
        body.update(max_tokens=2000, thinking=THINK)
    status, headers, raw = await raw_stream(proxy, path, body)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    assert b"Recall." not in raw
    if api == "chat":
        last = [line for line in raw.split(b"\n") if line.startswith(b"data: ")][-1]
        err = orjson.loads(last[6:])["error"]
        assert b"[DONE]" not in raw
    else:
        got = events(raw)
        if api == "responses":
            _assert_failed_at_the_end(got)
            got = got[:-1]
        name, data = got[-1]
        assert name == "error"
        err = data["error"] if api == "messages" else data
        assert not any(n in ("message_stop", "response.completed") for n, _ in events(raw))
    if second == "529":  # the upstream's own error, its type kept
        assert (err["type"] == "overloaded_error" if api == "messages"
                else err["code"] == "rate_limit_exceeded"), err
    else:
        assert "memory tool round" in err["message"], err
    # the SDK of the API says so too
    if api == "messages":
        _script(upstream, api, "529")
        with pytest.raises(anthropic.APIStatusError) as a_info:
            await _ask(proxy, api, True)
        assert a_info.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    elif api == "chat":
        _script(upstream, api, "529")
        with pytest.raises(openai.APIError) as o_info:
            await _ask(proxy, api, True)
        assert o_info.value.code == "rate_limit_exceeded"
    await proxy.settle()


def _assert_failed_at_the_end(got: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A Responses stream that failed ends as the API ends one: ``response.created``
    first, then the ``error`` event, then ``response.failed`` (the terminal event)
    whose response has the id the client saw, status ``failed`` and an ``error``;
    every event numbered on from the one before. Returns the failed response."""
    names = [n for n, _ in got]
    assert names[0] == "response.created" and names.count("response.created") == 1, names
    assert names[-2:] == ["error", "response.failed"], names
    assert not {"response.completed", "response.incomplete"} & set(names)
    seqs = [d["sequence_number"] for _, d in got]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    failed = got[-1][1]["response"]
    assert failed["id"] == got[0][1]["response"]["id"]
    assert failed["status"] == "failed" and failed["object"] == "response"
    assert set(failed["error"]) == {"code", "message"} and failed["error"]["message"]
    return dict(failed)


@pytest.mark.parametrize("second", ["529", "hangup", "drop"])
async def test_a_failed_responses_stream_ends_with_response_failed_for_the_sdks(
        make_proxy: Any, upstream: FakeUpstream, second: str) -> None:
    """A later round fails after the client's stream started (heartbeats sent its
    status): the openai SDK yields the ``error`` event and then a
    ``ResponseFailedEvent`` (the terminal event a client waits for), not a stream
    that just stops; its stream helper's final response is refused; the
    openai-agents SDK's streamed run raises rather than hangs."""
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    c = openai_client(proxy)
    _script(upstream, "responses", second)
    got = [e async for e in await c.responses.create(model="m", input="Which?", stream=True)]
    assert [e.type for e in got[-2:]] == ["error", "response.failed"]
    failed = _assert_failed_at_the_end([(e.type, e.model_dump(exclude_unset=True))
                                       for e in got])
    last = got[-1]
    assert isinstance(last, openai.types.responses.ResponseFailedEvent)
    assert last.response.status == "failed" and last.response.error is not None
    if second == "529":  # the upstream's own error code
        assert failed["error"]["code"] == "rate_limit_exceeded"
        assert got[-2].code == "rate_limit_exceeded"  # type: ignore[union-attr]
    else:
        assert "memory tool round" in failed["error"]["message"]
    if second == "drop":  # the items the client was shown are the failed response's
        shown = [e.item.id for e in got if e.type == "response.output_item.added"]
        assert [i["id"] for i in failed["output"]] == shown[:len(failed["output"])]

    _script(upstream, "responses", second)
    async with c.responses.stream(model="m", input="Which?") as s:
        kinds = [e.type async for e in s]
        assert kinds[-1] == "response.failed"
        with pytest.raises(RuntimeError, match="response.completed"):
            await s.get_final_response()

    from agents import Agent, RunConfig, Runner
    from agents.models.openai_provider import OpenAIProvider
    _script(upstream, "responses", second)
    config = RunConfig(model_provider=OpenAIProvider(openai_client=c), tracing_disabled=True)
    result = Runner.run_streamed(Agent(name="ops", model="m"), "Which?", run_config=config)

    async def drain() -> None:
        async for _ in result.stream_events():
            pass
    with pytest.raises(Exception) as info:  # noqa: PT011 - the agents SDK's own class
        await asyncio.wait_for(drain(), 20)
    assert not isinstance(info.value, TimeoutError), "the streamed run hung"
    await proxy.settle()
