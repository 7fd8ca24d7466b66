"""The real SDKs' higher-level features through the proxy (memory on, the memory tools
offered), each compared with the same call made straight to the fake upstream:

- ``chat.completions.parse`` / ``.stream(response_format=...)``,
  ``responses.parse`` / ``.stream(text_format=...)`` and anthropic
  ``messages.parse`` / ``.stream(output_format=...)``: a hidden round's text (a
  model's "Let me check." before its memory call) is never glued to the structured
  answer, streamed or not, and the stream the client sees stays well numbered;
- openai-agents: a handoff between two agents with a function tool, kept in a
  ``SQLiteSession``, on ``OpenAIChatCompletionsModel``, plain and streamed;
- anthropic: ``messages.stream()`` helpers (``text_stream``,
  ``current_message_snapshot``, ``get_final_message()``) and the beta tool runner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pydantic

from tests.conftest import TEST_KEY, RunningProxy, store_sql
from tests.fake_anthropic import AReply, text, tool_use
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply

ALWAYS = {"offer": "always"}
ANSWER = '{"city":"Oslo","days":3}'


class Trip(pydantic.BaseModel):
    city: str
    days: int


def _grep(call_id: str) -> dict[str, str]:
    return {"id": call_id, "name": "memory_grep", "arguments": '{"query":"Oslo"}'}


async def _parse(client: openai.AsyncOpenAI, ask: str, stream: bool) -> Any:
    kw: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": ask}],
                          "response_format": Trip}
    if not stream:
        return await client.chat.completions.parse(**kw)
    async with client.chat.completions.stream(**kw) as s:
        async for _ in s:
            pass
        return await s.get_final_completion()


async def test_a_hidden_rounds_text_is_not_glued_to_a_structured_answer(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """The hidden round says "Let me check." before its memory call; the client's
    parsed answer is the answering round's JSON, streamed as whole (it was not: the
    stream showed the preamble, and the SDK failed to parse it)."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    direct = openai.AsyncOpenAI(base_url=upstream.base_url, api_key=TEST_KEY, max_retries=0)
    for stream in (False, True):
        upstream.push(Reply(content=ANSWER, piece=5))
        want = await _parse(direct, f"plan {stream}", stream)
        upstream.push(Reply(content="Let me check.", tool_calls=[_grep(f"call_{stream}")]),
                      Reply(content=ANSWER, piece=5))
        got = await _parse(client, f"plan {stream}", stream)
        assert got.choices[0].message.parsed == want.choices[0].message.parsed
        assert got.choices[0].message.content == ANSWER
        assert got.choices[0].finish_reason == "stop"
    # The upstream still gets the hidden round's text back with its call.
    sent = upstream.chat_requests[-1]["json"]["messages"]
    hidden = [m for m in sent if m.get("role") == "assistant"]
    assert hidden and hidden[-1]["content"] == "Let me check."
    await proxy.settle()
    # Nor is the preamble stored as what the client was answered.
    said = [r["text"] for r in store_sql(
        proxy.engine, "SELECT text FROM messages WHERE msg_role = 'assistant' AND hidden = 0")]
    assert said.count(ANSWER) == 2 and not any("Let me check." in t for t in said)
    await client.close()
    await direct.close()


async def test_a_plain_chat_stream_still_shows_text_as_it_comes(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Without a structured format the text of a round is relayed at once, as
    before (the hold is for JSON answers only)."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    upstream.push(Reply(content="Let me check.", tool_calls=[_grep("call_p")]),
                  Reply(content="Sunny."))
    stream = await client.chat.completions.create(
        model="m", stream=True, messages=[{"role": "user", "content": "weather?"}])
    shown = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert shown == "Let me check.Sunny."
    await client.close()
    await proxy.settle()


def _rgrep(call_id: str) -> dict[str, str]:
    return {"call_id": call_id, "name": "memory_grep", "arguments": '{"query":"Oslo"}'}


def _numbered(events: list[Any]) -> None:
    """The client's events are well numbered: ``sequence_number`` 0, 1, 2…, and each
    item's ``output_index`` the next one from 0 when it is added."""
    assert [e.sequence_number for e in events] == list(range(len(events)))
    added = [e.output_index for e in events if e.type == "response.output_item.added"]
    assert added == list(range(len(added)))


async def _rparse(client: openai.AsyncOpenAI, ask: str, stream: bool
                  ) -> tuple[Any, list[Any]]:
    kw: dict[str, Any] = {"model": "m", "input": ask, "text_format": Trip}
    if not stream:
        return await client.responses.parse(**kw), []
    async with client.responses.stream(**kw) as s:
        events = [e async for e in s]
        return await s.get_final_response(), events


async def test_a_hidden_rounds_text_is_not_shown_with_a_structured_response(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Responses: the hidden round's message item ("Let me check.") is not shown,
    streamed or not: ``responses.stream(text_format=...)`` parses the answer (it
    failed: the stream showed the preamble's item and the SDK's parse of it raised),
    with its items numbered from 0 and ``response.completed`` holding the one item
    shown, as straight to the fake."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    direct = openai.AsyncOpenAI(base_url=upstream.base_url, api_key=TEST_KEY, max_retries=0)
    for stream in (False, True):
        upstream.push_response(RReply(text=ANSWER, piece=5))
        want, want_events = await _rparse(direct, f"plan {stream}", stream)
        upstream.push_response(RReply(text="Let me check.", calls=[_rgrep(f"c_{stream}")]),
                               RReply(text=ANSWER, piece=5))
        got, events = await _rparse(client, f"plan {stream}", stream)
        assert got.output_parsed == want.output_parsed == Trip(city="Oslo", days=3)
        assert got.output_text == ANSWER
        assert [i.type for i in got.output] == ["message"]
        assert [e.type for e in events] == [e.type for e in want_events]
        _numbered(events)
    sent = upstream.responses_requests[-1]["json"]
    assert sent["text"]["format"]["type"] == "json_schema"
    # The upstream still gets the hidden round's message back with its call.
    assert any(i.get("type") == "message" and "Let me check." in orjson.dumps(i).decode()
               for i in sent["input"] if isinstance(i, dict))
    await client.close()
    await direct.close()


async def test_a_plain_responses_stream_still_shows_text_as_it_comes(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Without ``text.format`` json, a round's message item is relayed at once, as
    before (it comes before the round is known to be hidden), then the answer's."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    upstream.push_response(RReply(text="Let me check.", calls=[_rgrep("c_p")]),
                           RReply(text="Sunny."))
    stream = await client.responses.create(model="m", input="weather?", stream=True)
    events = [e async for e in stream]
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") \
        == "Let me check.Sunny."
    _numbered(events)
    await client.close()


async def test_a_hidden_rounds_text_is_not_shown_with_a_structured_message(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Messages: the hidden round's text block ("Let me check.") is not shown,
    streamed or not: ``messages.stream(output_format=...)`` parses the answer (it
    raised: the SDK parses each text block as it stops), its block indexes from 0,
    as straight to the fake; so does a stream that asks through the structured
    outputs beta's ``output_format`` body field."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)

    async def run(base: str, memory: bool) -> list[Any]:
        client = anthropic.AsyncAnthropic(base_url=base, api_key=TEST_KEY, max_retries=0)
        out: list[Any] = []
        kw: dict[str, Any] = {"model": "c", "max_tokens": 50, "output_format": Trip,
                              "messages": [{"role": "user", "content": "Plan?"}]}
        for how in ("parse", "stream", "beta"):
            if memory:
                upstream.anthropic_replies.append(AReply(content=[
                    text("Let me check."), tool_use("toolu_m", "memory_grep", {"query": "x"})]))
            upstream.anthropic_replies.append(AReply(content=[text(ANSWER)], piece=5))
            if how == "parse":
                msg: Any = await client.messages.parse(**kw)
                out.append(msg.parsed_output)
            elif how == "stream":
                async with client.messages.stream(**kw) as s:
                    indexes = [e.index async for e in s if e.type == "content_block_start"]
                    msg = await s.get_final_message()
                out.append((indexes, msg.parsed_output))
            else:
                fmt = {"type": "json_schema", "schema": Trip.model_json_schema()}
                raw = await client.beta.messages.create(
                    model="c", max_tokens=50, stream=True,
                    betas=["structured-outputs-2025-11-13"],
                    messages=[{"role": "user", "content": "Plan?"}],
                    extra_body={"output_format": fmt})
                events = [e async for e in raw]
                out.append([(e.type, getattr(e, "index", None)) for e in events
                            if e.type.startswith("content_block")])
                said = "".join(e.delta.text for e in events
                               if e.type == "content_block_delta" and e.delta.type == "text_delta")
                out.append(Trip.model_validate_json(said))
                continue
            out.append([b.model_dump(exclude={"parsed_output"}) for b in msg.content])
        await client.close()
        return out

    got = await run(proxy.root, True)
    sent = [r["json"] for r in upstream.requests if r["path"] == "/v1/messages"]
    assert len(sent) == 6
    assert sent[-1]["output_format"]["type"] == "json_schema"
    assert sent[-3]["output_config"]["format"]["type"] == "json_schema"
    # The upstream still gets the hidden round's text back with its call.
    assert sent[-1]["messages"][-2]["content"][0] == {"type": "text", "text": "Let me check."}
    assert got == await run(upstream.base_url[:-3], False)
    assert not upstream.anthropic_replies
    await proxy.settle()


async def test_a_plain_messages_stream_still_shows_text_as_it_comes(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Without an output format, a round's text block is relayed at once, as before."""
    proxy: RunningProxy = await make_proxy(tools=ALWAYS)
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    upstream.anthropic_replies.extend([
        AReply(content=[text("Let me check."),
                        tool_use("toolu_m", "memory_grep", {"query": "x"})]),
        AReply(content=[text("Sunny.")])])
    async with client.messages.stream(model="c", max_tokens=50, messages=[
            {"role": "user", "content": "Weather?"}]) as s:
        said = [t async for t in s.text_stream]
        msg = await s.get_final_message()
    assert "".join(said) == "Let me check.Sunny."
    assert [b.text for b in msg.content if b.type == "text"] == ["Let me check.", "Sunny."]
    await client.close()
    await proxy.settle()


async def test_agents_handoff_with_a_session_on_the_chat_completions_model(
        make_proxy: Any, upstream: FakeUpstream, tmp_path: Path) -> None:
    """Triage hands off to a weather agent that calls a function tool, with a hidden
    memory round before each model turn that answers; plain then streamed, one
    ``SQLiteSession``: the same results and session items as straight to the fake."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        RunConfig,
        Runner,
        SQLiteSession,
        function_tool,
    )

    proxy: RunningProxy = await make_proxy(tools=ALWAYS)

    async def run(base: str, memory: bool) -> list[Any]:
        ran: list[str] = []

        @function_tool
        def get_weather(city: str) -> str:
            """The weather of a city."""
            ran.append(city)
            return f"sunny in {city}"

        client = openai.AsyncOpenAI(base_url=base, api_key=TEST_KEY, max_retries=0)
        model = OpenAIChatCompletionsModel(model="m", openai_client=client)
        weather = Agent(name="weather", instructions="Weather.", tools=[get_weather],
                        model=model)
        triage = Agent(name="triage", instructions="Route.", handoffs=[weather], model=model)
        session = SQLiteSession("s", str(tmp_path / f"{memory}.db"))
        seen: list[Any] = []
        for streamed in (False, True):
            calls = [{"id": "call_h", "name": "transfer_to_weather", "arguments": "{}"},
                     {"id": "call_w", "name": "get_weather", "arguments": '{"city":"Oslo"}'}]
            script = [Reply(content=None, tool_calls=[c], split_names=False) for c in calls]
            script.append(Reply(content="Sunny in Oslo."))
            if memory:
                script.insert(0, Reply(content=None, tool_calls=[_grep("call_m1")]))
                script.insert(3, Reply(content=None, tool_calls=[_grep("call_m2")]))
            upstream.push(*script)
            if streamed:
                result: Any = Runner.run_streamed(triage, "And Bergen?", session=session,
                                                  run_config=RunConfig(tracing_disabled=True))
                seen.append(sorted({e.type async for e in result.stream_events()}))
            else:
                result = await Runner.run(triage, "Weather in Oslo?", session=session,
                                          run_config=RunConfig(tracing_disabled=True))
            seen.append((result.final_output, result.last_agent.name,
                         [i.type for i in result.new_items]))
        seen.append([(i.get("type"), i.get("role"), i.get("name"))
                     for i in await session.get_items()])
        seen.append(ran)
        await client.close()
        return seen

    assert await run(proxy.base_url, True) == await run(upstream.base_url, False)
    assert not upstream.replies
    await proxy.settle()


async def test_anthropic_stream_helpers_and_tool_runner(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """``text_stream``, ``current_message_snapshot`` after each event and
    ``get_final_message()``; then ``beta.messages.tool_runner`` with a function tool:
    as straight to the fake, a hidden memory round before each answer (usage is
    summed over the rounds, by design, so it is left out)."""
    from anthropic import beta_async_tool

    proxy: RunningProxy = await make_proxy(tools=ALWAYS)

    async def run(base: str, memory: bool) -> list[Any]:
        client = anthropic.AsyncAnthropic(base_url=base, api_key=TEST_KEY, max_retries=0)

        def push(*replies: AReply) -> None:
            if memory:
                upstream.anthropic_replies.append(
                    AReply(content=[tool_use("toolu_m", "memory_grep", {"query": "x"})]))
            upstream.anthropic_replies.extend(replies)

        out: list[Any] = []
        push(AReply(content=[text("Sunny in Oslo today.")], write_size=9))
        snaps = []
        async with client.messages.stream(model="c", max_tokens=50, messages=[
                {"role": "user", "content": "Weather?"}]) as s:
            out.append([t async for t in s.text_stream])
            snaps.append(s.current_message_snapshot.model_dump(exclude={"usage"}))
            out.append((await s.get_final_message()).model_dump(exclude={"usage"}))
        out.append(snaps)
        ran: list[str] = []

        @beta_async_tool
        async def get_weather(city: str) -> str:
            """Weather of a city.

            Args:
                city: the city
            """
            ran.append(city)
            return f"sunny in {city}"

        push(AReply(content=[tool_use("toolu_w", "get_weather", {"city": "Bergen"})]))
        push(AReply(content=[text("Bergen is sunny.")]))
        runner = client.beta.messages.tool_runner(
            model="c", max_tokens=50, tools=[get_weather],
            messages=[{"role": "user", "content": "Weather in Bergen?"}])
        out.append([m.model_dump(exclude={"usage"}) async for m in runner])
        out.append(ran)
        await client.close()
        return out

    assert await run(proxy.root, True) == await run(upstream.base_url[:-3], False)
    assert not upstream.anthropic_replies
    await proxy.settle()
