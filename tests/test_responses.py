"""``POST /v1/responses`` end to end: the real ``openai`` SDK → proxy → fake upstream
speaking the Responses API's byte format (tests/fake_responses.py).

What the upstream received is read from the fake's request log, what was stored
from the SQLite evidence log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from memory_core.assembly import budget
from memory_core.assembly.block import BLOCK_MARKER, CURRENT_REQUEST
from proxy.sse import SSEDecoder
from proxy.wire.responses import RESPONSES, flatten, to_turns
from tests.conftest import TEST_KEY, RunningProxy, SqlRow, start_proxy, store_sql
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream

INSTRUCTIONS = "You are terse.\nNever use emoji."
OPAQUE = [
    {"type": "reasoning", "id": "rs_a", "summary": [],
     "encrypted_content": "gAAAA\u00e9+/==opaque-bytes"},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "c0mp\\u0000act", "x": 1.5},
    {"type": "future_item", "payload": {"nested": [1, None, {"k": "\u2603"}]}},
]


def _rows(proxy: RunningProxy, sql: str, *args: Any) -> list[SqlRow]:
    return store_sql(proxy.engine, sql, args)


def _user_parts(body: dict[str, Any]) -> list[Any]:
    last = body["input"][-1]
    assert last["role"] == "user"
    content = last["content"]
    return content if isinstance(content, list) else [content]


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """The conftest proxy with ``tools.offer = "always"``: most tests here are about
    the memory-tool rounds, on first requests that carry their whole history (the
    default offers the tools only when stored history lies beyond the request:
    ``test_tools_go_only_where_history_lies_beyond``)."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "always"})
    yield running
    await running.close()


@pytest.fixture
def rclient(proxy: RunningProxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


# -- the adapter, sans-io --------------------------------------------------------------
def test_turns_round_trip_every_item_unchanged() -> None:
    items = [
        {"role": "developer", "content": "dev rule"},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "look"},
                     {"type": "input_image", "image_url": "data:image/png;base64,AA=="},
                     {"type": "input_file", "file_id": "file_1"}]},
        OPAQUE[0],
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "calling", "annotations": []}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        OPAQUE[1], OPAQUE[2], "not-an-object",
        {"role": "user", "content": "next"},
    ]
    turns = to_turns(items)
    assert [t["role"] for t in turns] == ["developer", "user", "assistant", "tool",
                                          "assistant", "assistant", "assistant", "user"]
    assert turns[2]["content"] == "calling"
    assert turns[2]["tool_calls"][0]["id"] == "c1"
    assert flatten(turns) == items
    body = {"instructions": INSTRUCTIONS, "input": items}
    again = RESPONSES.with_messages(body, RESPONSES.messages(body))
    assert again == body and again["instructions"] is INSTRUCTIONS


def test_a_custom_tool_round_is_a_tool_round_and_keeps_its_block() -> None:
    from proxy import rewrite

    items = [{"role": "user", "content": "patch it"},
             {"type": "custom_tool_call", "call_id": "c9", "name": "apply_patch",
              "input": "*** Begin Patch"},
             {"type": "custom_tool_call_output", "call_id": "c9", "output": "Done"}]
    turns = to_turns(items)
    assert [t["role"] for t in turns] == ["user", "assistant", "tool"]
    assert rewrite.tool_round_user_index(turns) == 0
    injected = RESPONSES.inject_block(turns, "BLOCK", 0)
    assert flatten(injected)[0]["content"][0] == {"type": "input_text", "text": "BLOCK"}
    assert flatten(injected)[1:] == items[1:]


def test_a_reply_echoed_without_ids_maps_to_the_same_turn() -> None:
    from memory_core.capture.tree import node_key

    produced = [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E"},
                {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": "hi", "annotations": [],
                              "logprobs": []}]}]
    echoed = [{"role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]
    assert node_key(None, RESPONSES.answer_message({"output": produced})) == node_key(
        None, to_turns(echoed)[0])


# -- capture and injection ---------------------------------------------------------------
async def test_plain_request_gets_the_block_and_keeps_instructions_and_opaque_items(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    items = [*OPAQUE, {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "Goal: ship the importer"}]}]
    r = await rclient.responses.create(model="m", instructions=INSTRUCTIONS, input=items)
    assert r.output_text == "echo: Goal: ship the importer"
    sent = upstream.responses_requests[-1]
    body = sent["json"]
    assert body["instructions"] == INSTRUCTIONS
    assert not any(i.get("role") == "system" for i in body["input"] if isinstance(i, dict))
    parts = _user_parts(body)
    assert parts[0]["type"] == "input_text" and parts[0]["text"].startswith(BLOCK_MARKER)
    assert parts[0]["text"].rstrip().endswith(CURRENT_REQUEST)
    assert parts[1:] == items[-1]["content"]
    for item in OPAQUE:  # forwarded as parsed, byte for byte
        assert orjson.dumps(item) in sent["raw"]
    assert body["input"][:3] == OPAQUE
    await proxy.settle()
    stored = _rows(proxy, "SELECT msg_role, kind, raw_json FROM messages ORDER BY id")
    assert [r["msg_role"] for r in stored] == ["system", "assistant", "assistant", "assistant",
                                               "user", "assistant"]
    assert orjson.loads(stored[0]["raw_json"])["content"] == INSTRUCTIONS
    assert orjson.loads(stored[1]["raw_json"])["items"] == [OPAQUE[0]]
    assert orjson.loads(stored[2]["raw_json"])["items"] == [OPAQUE[1]]
    assert orjson.loads(stored[3]["raw_json"])["items"] == [OPAQUE[2]]
    user = orjson.loads(stored[4]["raw_json"])
    assert user["items"] == [items[-1]]  # the client's, not the injected one
    reply = orjson.loads(stored[5]["raw_json"])
    assert stored[5]["kind"] == "response" and reply["content"] == r.output_text
    assert reply["items"][0]["id"] == r.output[0].id


async def test_string_input_and_a_replay_store_nothing_new(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    r1 = await rclient.responses.create(model="m", input="TODO: write the CSV reader")
    assert r1.output_text == "echo: TODO: write the CSV reader"
    parts = _user_parts(upstream.responses_requests[-1]["json"])
    assert parts[0]["text"].startswith(BLOCK_MARKER)
    assert parts[1] == {"type": "input_text", "text": "TODO: write the CSV reader"}
    await proxy.settle()
    history = [{"role": "user", "content": "TODO: write the CSV reader"},
               *[o.model_dump(exclude_unset=True) for o in r1.output],
               {"role": "user", "content": "and then?"}]
    await rclient.responses.create(model="m", input=history)
    await proxy.settle()
    n = len(_rows(proxy, "SELECT id FROM messages"))
    assert n == 4 and len(_rows(proxy, "SELECT id FROM threads")) == 1
    second = upstream.responses_requests[-1]["json"]
    assert "TODO: write the CSV reader" in _user_parts(second)[0]["text"]  # task state
    await rclient.responses.create(model="m", input=history)  # a retry
    await proxy.settle()
    assert len(_rows(proxy, "SELECT id FROM messages")) == n
    assert len(_rows(proxy, "SELECT id FROM threads")) == 1


async def test_stream_relays_every_event_and_stores_the_reply(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    upstream.push_response(RReply(text="streamed answer", reasoning="ENC", write_size=7,
                                  crlf=True))
    stream = await rclient.responses.create(model="m", input="hello there", stream=True,
                                            instructions=INSTRUCTIONS)
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "streamed answer"
    assert upstream.responses_requests[-1]["json"]["instructions"] == INSTRUCTIONS
    await proxy.settle()
    reply = _rows(proxy, "SELECT raw_json FROM messages WHERE kind='response'")
    assert len(reply) == 1
    stored = orjson.loads(reply[0]["raw_json"])
    assert stored["content"] == "streamed answer"
    assert stored["items"][0] == {"type": "reasoning", "id": "rs_1", "summary": [],
                                  "encrypted_content": "ENC"}


async def test_upstream_errors_reach_the_client_with_status_and_headers(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    upstream.push_response(RReply(status=429, headers={"retry-after": "7",
                                                       "x-ratelimit-remaining-requests": "0"},
                                  error={"message": "slow down", "type": "rate_limit",
                                         "param": None, "code": "rate_limit_exceeded"}))
    with pytest.raises(openai.RateLimitError) as info:
        await rclient.responses.create(model="m", input="hi")
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    upstream.push_response(RReply(status=503))
    with pytest.raises(openai.InternalServerError) as info5:
        await rclient.responses.create(model="m", input="hi", stream=True)
    assert info5.value.status_code == 503
    upstream.push_response(RReply(status=400, error={"message": "bad input", "type":
                                                     "invalid_request_error", "param": "input",
                                                     "code": None}))
    with pytest.raises(openai.BadRequestError) as info4:
        await rclient.responses.create(model="m", input="hi")
    assert info4.value.body["message"] == "bad input"
    await proxy.settle()
    events = _rows(proxy, "SELECT data FROM events WHERE kind='response'")
    assert [orjson.loads(e["data"])["status"] for e in events] == [429, 503, 400]
    assert not _rows(proxy, "SELECT id FROM messages WHERE kind='response'")


async def test_memory_failure_forwards_the_original_bytes(
        proxy: RunningProxy, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    from proxy.flow import plan

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("memory broke")

    monkeypatch.setattr(plan, "prepare", boom)
    raw = b'{"model":"m", "input":[{"role":"user","content":"hi"}],  "instructions":"x"}'
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/responses", data=raw,
            headers={"Authorization": f"Bearer {TEST_KEY}",
                     "Content-Type": "application/json"}) as resp:
        assert resp.status == 200
        assert resp.headers["x-lcm-memory"] == "failed-open"
        assert (await resp.json())["output"][0]["content"][0]["text"] == "echo: hi"
    assert upstream.responses_requests[-1]["raw"] == raw


async def test_a_body_without_input_is_forwarded_untouched(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    raw = b'{"model":"m","prompt":{"id":"pmpt_1"}}'
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/responses", data=raw,
            headers={"Authorization": f"Bearer {TEST_KEY}"}) as resp:
        assert resp.headers["x-lcm-memory-reason"] == "not-chat"
    assert upstream.responses_requests[-1]["raw"] == raw


# -- stored responses: previous_response_id ------------------------------------------------
def _blocks(items: list[Any]) -> int:
    """User messages that carry a memory block."""
    return sum(1 for i in items if isinstance(i, dict) and i.get("role") == "user"
               and CURRENT_REQUEST in orjson.dumps(i.get("content")).decode())


async def test_previous_response_id_continues_the_thread_without_piling_up_blocks(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    turns = ["Goal: ship the importer by Friday", "TODO: write the CSV reader",
             "Decision: use pyarrow for parsing", "what is left?"]
    prev = None
    ids = []
    for text in turns:
        kwargs: dict[str, Any] = {"previous_response_id": prev} if prev else {}
        r = await rclient.responses.create(model="m", instructions=INSTRUCTIONS,
                                           input=[{"role": "user", "content": text}], **kwargs)
        assert r.output_text == f"echo: {text}"
        prev = r.id
        ids.append(r.id)
        await proxy.settle()
    sent = upstream.responses_requests
    for i, req in enumerate(sent[1:], 1):  # every later turn went as a stateless replay
        body = req["json"]
        assert "previous_response_id" not in body
        assert body["instructions"] == INSTRUCTIONS
        users = [x for x in body["input"] if x.get("role") == "user"]
        assert len(users) == i + 1
        assert [u["content"] for u in users[:-1]] == turns[:i]  # earlier turns: no block
        assert _user_parts(body)[0]["text"].startswith(("[", BLOCK_MARKER))
        assert _blocks(body["input"]) == 1
    # The model's whole context at the last turn (the fake's stored conversation)
    # holds one block: the current one.
    assert _blocks(upstream.responses.stored[ids[-1]]) == 1
    assert "Goal: ship the importer by Friday" in _user_parts(sent[-1]["json"])[0]["text"]
    stored = _rows(proxy, "SELECT msg_role, thread_id FROM messages ORDER BY id")
    assert [r["msg_role"] for r in stored] == ["system"] + ["user", "assistant"] * 4
    assert len({r["thread_id"] for r in stored}) == 1
    # A retry of the last turn stores nothing new and stays on the thread.
    await rclient.responses.create(model="m", instructions=INSTRUCTIONS,
                                   previous_response_id=ids[-2],
                                   input=[{"role": "user", "content": turns[-1]}])
    await proxy.settle()
    assert len(_rows(proxy, "SELECT id FROM messages")) == len(stored)


async def test_previous_response_id_without_a_block_goes_as_sent(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0,
                                default_headers={"X-LCM-Memory": "off"})
    r1 = await client.responses.create(model="m", input="first")
    r2 = await client.responses.create(model="m", previous_response_id=r1.id,
                                       input="second")
    assert r2.output_text == "echo: second"
    assert upstream.responses_requests[-1]["json"]["previous_response_id"] == r1.id
    assert upstream.responses_requests[-1]["json"]["input"] == "second"
    await proxy.settle()
    rows = _rows(proxy, "SELECT msg_role FROM messages ORDER BY id")
    assert [r["msg_role"] for r in rows] == ["user", "assistant"] * 2


async def test_unknown_previous_response_id_is_forwarded_untouched(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        await rclient.responses.create(model="m", previous_response_id="resp_elsewhere",
                                       input="hi")
    assert info.value.code == "previous_response_not_found"
    assert info.value.response.headers["x-lcm-memory-reason"] == "unknown-previous-response"
    assert upstream.responses_requests[-1]["json"]["previous_response_id"] == "resp_elsewhere"
    await proxy.settle()
    assert not _rows(proxy, "SELECT id FROM messages")


# -- memory tools ------------------------------------------------------------------------
WEATHER = {"type": "function", "name": "get_weather", "description": "Weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, "strict": False}


def _grep(call_id: str = "call_m1") -> dict[str, Any]:
    return {"call_id": call_id, "name": "memory_grep",
            "arguments": orjson.dumps({"query": "GRF-7781", "start_time": None,
                                       "end_time": None, "limit": None}).decode()}


async def _seed(rclient: openai.AsyncOpenAI, proxy: RunningProxy) -> list[Any]:
    history: list[Any] = [{"role": "user",
                           "content": "The Grafana dashboard id is GRF-7781 for billing."}]
    r = await rclient.responses.create(model="m", input=history)
    history += [o.model_dump(exclude_unset=True) for o in r.output]
    await proxy.settle()
    return history


async def test_memory_tool_round_is_hidden_from_a_plain_response(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    history = await _seed(rclient, proxy)
    history.append({"role": "user", "content": "Which dashboard was it again?"})
    upstream.push_response(RReply(text=None, reasoning="ENC-1", calls=[_grep()]),
                           RReply(text="It is GRF-7781."))
    n = len(upstream.responses_requests)
    r = await rclient.responses.create(model="m", input=history, tools=[WEATHER])
    assert r.output_text == "It is GRF-7781."
    assert [o.type for o in r.output] == ["message"]
    assert [t.name for t in r.tools] == ["get_weather"]  # the echo leaves ours out
    assert r.usage is not None and r.usage.total_tokens == 30  # summed over two rounds
    assert r.usage.input_tokens_details.cached_tokens == 0
    first, second = upstream.responses_requests[n:]
    offered = [t["name"] for t in first["json"]["tools"]]
    assert offered[0] == "get_weather" and {"memory_grep", "memory_search", "view_message",
                                            "view_chat_history_summary"} <= set(offered)
    assert all(t["type"] == "function" and "function" not in t for t in first["json"]["tools"])
    tail = second["json"]["input"][len(first["json"]["input"]):]
    assert [t["type"] for t in tail] == ["reasoning", "function_call", "function_call_output"]
    assert tail[0]["encrypted_content"] == "ENC-1"  # reasoning carried unchanged
    assert tail[1]["call_id"] == tail[2]["call_id"] == "call_m1"
    assert "GRF-7781" in tail[2]["output"]
    await proxy.settle()
    hidden = _rows(proxy, "SELECT msg_role FROM messages WHERE hidden=1 ORDER BY id")
    assert [h["msg_role"] for h in hidden] == ["assistant", "tool"]
    # The next stateless turn shows the model its own hidden round, in place.
    history += [o.model_dump(exclude_unset=True) for o in r.output]
    history.append({"role": "user", "content": "thanks"})
    await rclient.responses.create(model="m", input=history)
    seen = upstream.responses_requests[-1]["json"]["input"]
    kinds = [i.get("type", "message") for i in seen]
    at = kinds.index("function_call_output")
    assert seen[at - 1]["name"] == "memory_grep"
    assert seen[at + 1]["content"][0]["text"] == "It is GRF-7781."


async def test_mixed_calls_give_the_client_only_its_own(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    history = await _seed(rclient, proxy)
    history.append({"role": "user", "content": "check the dashboard and the weather"})
    upstream.push_response(RReply(text=None, calls=[
        _grep(), {"call_id": "call_w", "name": "get_weather",
                  "arguments": '{"city":"Oslo"}'}]))
    r = await rclient.responses.create(model="m", input=history, tools=[WEATHER])
    assert [(o.type, o.name) for o in r.output] == [("function_call", "get_weather")]
    assert [t.name for t in r.tools] == ["get_weather"]
    # The client answers its call; the model sees its memory call answered too.
    history += [o.model_dump(exclude_unset=True) for o in r.output]
    history.append({"type": "function_call_output", "call_id": "call_w", "output": "sunny"})
    r2 = await rclient.responses.create(model="m", input=history, tools=[WEATHER])
    assert r2.output_text
    seen = upstream.responses_requests[-1]["json"]["input"]
    outputs = [i["call_id"] for i in seen if i.get("type") == "function_call_output"]
    assert outputs == ["call_m1", "call_w"]
    calls = [i["call_id"] for i in seen if i.get("type") == "function_call"]
    assert calls == ["call_m1", "call_w"]


@pytest.mark.parametrize("include", [False, True])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_hidden_round_without_store_goes_on_without_bare_reasoning(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI,
        stream: bool, include: bool) -> None:
    """With ``store: false`` the upstream keeps no item, and a reasoning item comes
    without its ``encrypted_content`` unless ``include`` asks for it: sent back, such
    an item is a reference to nothing ("Item with id 'rs_…' not found", a 404). The
    proxy sent a hidden round's reasoning item back as it came, so a memory call
    failed the chat of every stateless client that does not ask for encrypted
    reasoning, and the spliced rounds (the reply's own too) failed each later turn
    again. A bare reasoning item of the tool loop's rounds now stays out of what goes
    upstream again; one with its encrypted content goes unchanged. The call it came
    with then goes without its id: sent with it, the upstream asks for the reasoning
    item too ("Item 'fc_…' of type 'function_call' was provided without its
    required 'reasoning' item", a 400 that failed every such chat)."""
    history = await _seed(rclient, proxy)
    history.append({"role": "user", "content": "Which dashboard was it again?"})
    upstream.push_response(RReply(text=None, reasoning="ENC-1", calls=[_grep()]),
                           RReply(text="It is GRF-7781.", reasoning="ENC-2"))
    extra: dict[str, Any] = {"include": ["reasoning.encrypted_content"]} if include else {}
    n = len(upstream.responses_requests)
    made = await rclient.responses.create(model="m", input=history, tools=[WEATHER],
                                          store=False, stream=stream, **extra)
    if stream:
        text = "".join([e.delta async for e in made  # type: ignore[union-attr]
                        if e.type == "response.output_text.delta"])
    else:
        text = made.output_text  # type: ignore[union-attr]
    assert text == "It is GRF-7781."
    first, second = upstream.responses_requests[n:]
    tail = second["json"]["input"][len(first["json"]["input"]):]
    kinds = ["function_call", "function_call_output"]
    assert [t["type"] for t in tail] == (["reasoning", *kinds] if include else kinds)
    if include:
        assert tail[0]["encrypted_content"] == "ENC-1"
        assert tail[1]["id"].startswith("fc_")  # with its reasoning: kept as it came
    else:
        assert "id" not in tail[0]
    await proxy.settle()
    if stream:
        return
    # The next stateless turn gets the hidden round spliced back, and goes on too. The
    # client leaves out the bare reasoning item it was shown, as it must: the view of
    # the reply spliced in its place must not bring it back.
    history += [o.model_dump(exclude_unset=True) for o in made.output  # type: ignore
                if o.type != "reasoning" or o.encrypted_content]
    history.append({"role": "user", "content": "thanks"})
    r = await rclient.responses.create(model="m", input=history, store=False, **extra)
    assert r.output_text
    seen = upstream.responses_requests[-1]["json"]["input"]
    assert any(i.get("type") == "function_call_output" for i in seen)
    await proxy.settle()


# -- the OpenAI Agents SDK ------------------------------------------------------------------
async def test_agents_sdk_runs_a_function_tool_through_the_proxy(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.models.openai_provider import OpenAIProvider

    ran: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        ran.append(city)
        return f"sunny in {city}"

    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    config = RunConfig(model_provider=OpenAIProvider(openai_client=client),
                       tracing_disabled=True)
    agent = Agent(name="ops", instructions=INSTRUCTIONS, tools=[get_weather], model="m")
    upstream.push_response(
        RReply(text=None, calls=[_grep("call_m")]),  # hidden by the proxy
        RReply(text=None, calls=[{"call_id": "call_w", "name": "get_weather",
                                  "arguments": '{"city":"Oslo"}'}]),
        RReply(text="It is sunny in Oslo."))
    result = await Runner.run(agent, "Goal: plan the Oslo trip. Weather in Oslo?",
                              run_config=config)
    assert result.final_output == "It is sunny in Oslo."
    assert ran == ["Oslo"]
    seen_by_agent = [getattr(i.raw_item, "name", None) for i in result.new_items]
    assert "memory_grep" not in seen_by_agent and "get_weather" in seen_by_agent
    reqs = upstream.responses_requests
    assert len(reqs) == 3
    for req in reqs:
        assert req["json"]["instructions"] == INSTRUCTIONS
        assert "memory_grep" in {t.get("name") for t in req["json"]["tools"]}
    first_user = next(i for i in reqs[0]["json"]["input"] if i.get("role") == "user")
    assert CURRENT_REQUEST in orjson.dumps(first_user["content"]).decode()
    last = reqs[2]["json"]["input"]
    names = [i.get("name") for i in last if i.get("type") == "function_call"]
    assert names == ["memory_grep", "get_weather"]  # the model's own view, spliced back
    outs = [i["call_id"] for i in last if i.get("type") == "function_call_output"]
    assert outs == ["call_m", "call_w"]
    # Continuing by previous_response_id keeps the same thread.
    again = await Runner.run(agent, "and tomorrow?", run_config=config,
                             previous_response_id=result.last_response_id)
    assert again.final_output == "echo: and tomorrow?"
    await proxy.settle()
    rows = _rows(proxy, "SELECT msg_role, thread_id, hidden FROM messages ORDER BY id")
    assert len({r["thread_id"] for r in rows if not r["hidden"]}) == 1
    assert [r["msg_role"] for r in rows if not r["hidden"]] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"]


# -- memory tools in a stream -----------------------------------------------------------
async def _events(stream: Any) -> list[Any]:
    return [e async for e in stream]


def _check_one_answer(events: list[Any]) -> Any:
    kinds = [e.type for e in events]
    assert kinds.count("response.created") == 1 and kinds[0] == "response.created"
    assert kinds[-1] in ("response.completed", "response.incomplete", "response.failed")
    assert sum(k in ("response.completed", "response.incomplete", "response.failed")
               for k in kinds) == 1
    assert [e.sequence_number for e in events] == list(range(len(events)))
    added = [e.output_index for e in events if e.type == "response.output_item.added"]
    assert added == list(range(len(added)))
    for e in events:
        if e.type.startswith("response.output_item."):
            assert getattr(e.item, "name", None) != "memory_grep"
    final = events[-1].response
    assert final.id == events[0].response.id
    for e in events:  # the echoed request's tools: the client's own only
        if getattr(e, "response", None) is not None:
            assert "memory_grep" not in {getattr(t, "name", None) for t in e.response.tools}
    return final


@pytest.mark.parametrize("write_size", [None, 1])
async def test_memory_tool_round_is_hidden_from_a_stream(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI,
        write_size: int | None) -> None:
    history = await _seed(rclient, proxy)
    history.append({"role": "user", "content": "Which dashboard was it again?"})
    upstream.push_response(
        RReply(text=None, reasoning="ENC-1", calls=[_grep()], write_size=write_size),
        RReply(text="It is GRF-7781.", write_size=write_size))
    n = len(upstream.responses_requests)
    events = await _events(await rclient.responses.create(
        model="m", input=history, tools=[WEATHER], stream=True))
    final = _check_one_answer(events)
    assert not any("function_call_arguments" in e.type for e in events)
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "It is GRF-7781."
    # The first round (reasoning, then a memory call) is hidden whole, as in a plain
    # answer: the client is shown the answering round's response, not one that
    # ends in an unanswered memory call.
    assert [o.type for o in final.output] == ["message"]
    assert events[0].response.id == final.id == "resp_0003"
    assert final.usage.total_tokens == 30
    first, second = upstream.responses_requests[n:]
    tail = second["json"]["input"][len(first["json"]["input"]):]
    assert [t["type"] for t in tail] == ["reasoning", "function_call", "function_call_output"]
    await proxy.settle()
    hidden = _rows(proxy, "SELECT msg_role FROM messages WHERE hidden=1 ORDER BY id")
    assert [h["msg_role"] for h in hidden] == ["assistant", "tool"]
    reply = _rows(proxy, "SELECT raw_json FROM messages WHERE kind='response' AND hidden=0"
                         " ORDER BY id DESC LIMIT 1")
    assert orjson.loads(reply[0]["raw_json"])["content"] == "It is GRF-7781."


async def test_held_reasoning_keeps_the_stream_alive_with_comments(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A round's reasoning is held until the round shows an item (it may turn out a
    memory round): a model that reasons for minutes left the client without a byte
    after its status line, which idle timeouts of proxies between cut."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "always", "heartbeat_seconds": 0.1})
    try:
        upstream.push_response(RReply(text="done", reasoning="E", write_size=200, delay=0.15))
        async with aiohttp.ClientSession() as session, session.post(
                running.base_url + "/responses",
                headers={"Authorization": f"Bearer {TEST_KEY}"},
                json={"model": "m", "input": "hi", "stream": True}) as resp:
            body = await resp.read()
        assert resp.status == 200
        first_item = body.index(b"event: response.output_item.added")
        assert b": keep-alive\n\n" in body[:first_item]
        await running.settle()
    finally:
        await running.close()


async def test_mixed_calls_in_a_stream_show_the_client_call_renumbered(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    history = await _seed(rclient, proxy)
    history.append({"role": "user", "content": "dashboard and weather?"})
    upstream.push_response(RReply(text=None, calls=[
        _grep(), {"call_id": "call_w", "name": "get_weather", "arguments": '{"city":"Oslo"}'}]))
    events = await _events(await rclient.responses.create(
        model="m", input=history, tools=[WEATHER], stream=True))
    final = _check_one_answer(events)
    assert [(o.type, o.name) for o in final.output] == [("function_call", "get_weather")]
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert args == '{"city":"Oslo"}'
    assert {e.output_index for e in events if hasattr(e, "output_index")} == {0}


async def test_a_stream_with_a_hidden_round_is_continued_by_the_id_the_client_saw(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    upstream.push_response(RReply(text=None, calls=[_grep()]), RReply(text="found it"))
    events = await _events(await rclient.responses.create(
        model="m", input="Which dashboard?", stream=True))
    client_id = events[-1].response.id
    # The hidden round showed nothing: the client sees the answering round's id (in
    # created and completed), whose upstream conversation holds the memory call
    # and its output; the first round's ends in an unanswered call, which the
    # upstream refuses as a previous_response_id (a request that goes as sent:
    # memory failed open, or another proxy without this one's map).
    assert events[0].response.id == client_id == "resp_0002"
    held = upstream.responses.stored[client_id]
    calls = {i["call_id"] for i in held if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in held if i.get("type") == "function_call_output"}
    assert calls == outputs == {"call_m1"}
    await proxy.settle()
    off = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0,
                             default_headers={"X-LCM-Memory": "off"})
    r = await off.responses.create(model="m", previous_response_id=client_id, input="thanks")
    assert r.output_text == "echo: thanks"
    sent = upstream.responses_requests[-1]["json"]
    assert "previous_response_id" not in sent  # replayed: the hidden round spliced back
    names = [i.get("name") for i in sent["input"] if i.get("type") == "function_call"]
    assert names == ["memory_grep"]
    assert [i.get("content") for i in sent["input"] if i.get("role") == "user"] == [
        "Which dashboard?", "thanks"]


async def test_an_error_after_a_hidden_round_reaches_the_client_with_its_status(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    upstream.push_response(RReply(text=None, calls=[_grep()]),
                           RReply(status=429, headers={"retry-after": "3"}))
    with pytest.raises(openai.RateLimitError) as info:
        await rclient.responses.create(model="m", input="Which dashboard?", stream=True)
    assert info.value.response.headers["retry-after"] == "3"
    await proxy.settle()
    assert not _rows(proxy, "SELECT id FROM messages WHERE kind='response' AND hidden=0")


async def test_a_client_that_leaves_during_a_hidden_round_cancels_the_upstream_call(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(tools={"heartbeat_seconds": 0.1, "offer": "always"})
    upstream.push_response(RReply(text=None, calls=[_grep()]),
                           RReply(text="nobody reads this", answer_delay=3.0))
    async with aiohttp.ClientSession() as session:
        resp = await session.post(
            f"{proxy.base_url}/responses", headers={"Authorization": f"Bearer {TEST_KEY}"},
            json={"model": "m", "input": "Which dashboard?", "stream": True})
        assert resp.status == 200  # committed by the heartbeat while the hidden round runs
        assert await resp.content.readuntil(b"\n\n") == b": keep-alive\n\n"
        resp.close()
    await proxy.settle()
    assert upstream.responses.cancelled == 1
    assert not _rows(proxy, "SELECT id FROM messages WHERE kind='response' AND hidden=0")
    events = _rows(proxy, "SELECT data FROM events WHERE kind='response'")
    assert orjson.loads(events[-1]["data"])["client_gone"] is True


# -- the context budget -------------------------------------------------------------------
CONTEXT_ERROR = {"message": "This model's maximum context length is 6000 tokens. However, "
                            "your messages resulted in 7000 tokens. Please reduce the length "
                            "of the messages.", "type": "invalid_request_error",
                 "param": "input", "code": "context_length_exceeded"}


def _paste(i: int) -> str:
    return f"run {i} log:\n" + "\n".join(f"{i}.{k} step ok in {k * 7 % 13} ms, cache warm"
                                          for k in range(60))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("tools", [True, False])
async def test_a_context_length_error_is_recovered_once_by_compacting(
        make_proxy: Any, upstream: FakeUpstream, stream: bool, tools: bool) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    rclient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    items: list[Any] = []
    for i in range(12):
        items.append({"role": "user", "content": _paste(i)})
        items.append({"role": "assistant", "content": f"Run {i} looks healthy."})
    items.append({"role": "user", "content": "Which run was slowest?"})
    upstream.push_response(RReply(status=400, error=CONTEXT_ERROR), RReply(text="run 7"))
    before = len(upstream.responses_requests)
    raw = await rclient.responses.with_raw_response.create(
        model="big-model", input=items, instructions=INSTRUCTIONS, stream=stream)
    if stream:
        text = "".join([e.delta async for e in raw.parse()
                        if e.type == "response.output_text.delta"])
    else:
        text = raw.parse().output_text
    assert text == "run 7"
    assert raw.headers["x-lcm-context-recovery"].startswith("retried")
    first, second = upstream.responses_requests[before:]
    assert len(second["raw"]) < len(first["raw"]) // 2
    assert second["json"]["instructions"] == INSTRUCTIONS
    texts = [orjson.dumps(i.get("content")).decode() for i in second["json"]["input"]]
    assert any("[Conversation summary" in t for t in texts)
    assert "Which run was slowest?" in texts[-1]


# -- /memory commands ----------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
async def test_memory_commands_are_answered_locally_and_can_be_continued(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI,
        stream: bool) -> None:
    r0 = await rclient.responses.create(model="m", input="Goal: ship the importer")
    before = len(upstream.responses_requests)
    if stream:
        events = await _events(await rclient.responses.create(
            model="m", input="/memory help", previous_response_id=r0.id, stream=True))
        final = _check_one_answer(events)
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    else:
        final = await rclient.responses.create(model="m", input="/memory help",
                                               previous_response_id=r0.id)
        text = final.output_text
    assert "/memory search QUERY" in text and final.output_text == text
    assert len(upstream.responses_requests) == before  # never sent upstream
    r2 = await rclient.responses.create(model="m", input="and now?",
                                        previous_response_id=final.id)
    assert r2.output_text == "echo: and now?"
    sent = upstream.responses_requests[-1]["json"]
    assert "previous_response_id" not in sent  # replayed, the command left out
    assert "/memory" not in orjson.dumps(sent["input"]).decode()
    assert "Goal: ship the importer" in orjson.dumps(sent["input"][0]).decode()
    await proxy.settle()
    rows = _rows(proxy, "SELECT msg_role, thread_id FROM messages ORDER BY id")
    assert [r["msg_role"] for r in rows] == ["user", "assistant"] * 3
    assert len({r["thread_id"] for r in rows}) == 1


# -- a long stored session ---------------------------------------------------------------
async def test_a_fact_from_turn_2_reaches_the_upstream_at_turn_300_by_previous_response_id(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """An 8k window, which the thread outgrows: the proxy compacts it (the request
    then goes as a stateless replay) and every request it plans stays in budget."""
    proxy = await make_proxy(tools={"offer": "always"},
                             context={"model_windows": ["tiny-*=8192"]})
    rclient = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    texts = ["Hi, let's plan the data migration.",
             "The staging database runs on port 5433 when the VPN is up.",
             *(f"Step {i}: review the changelog entry number {i} and summarise it."
               for i in range(297)),
             "Which port does the staging database use?"]
    prev = None
    for text in texts:
        kwargs: dict[str, Any] = {"previous_response_id": prev} if prev else {}
        r = await rclient.responses.with_raw_response.create(
            model="tiny-m", instructions=INSTRUCTIONS, input=text, **kwargs)
        prev = r.parse().id
        # Within the context budget: counted when near it, else under it by a byte bound.
        context = dict(p.split("=", 1) for p in r.headers["x-lcm-context"].split("; "))
        assert int(context.get("tokens", 0)) <= int(context["budget"])
        assert r.headers["x-lcm-memory"] != "over-budget"
    sent = upstream.responses_requests[-1]["json"]
    limit = int(context["budget"])
    assert "previous_response_id" not in sent  # compacted: a stateless replay
    assert budget.messages_tokens(RESPONSES.messages(sent)) + budget.tools_tokens(
        sent["tools"]) <= limit
    assert len(sent["input"]) < 2 * 300 - 100
    block = _user_parts(sent)[0]["text"]
    assert "5433" in block and "staging database" in block
    assert _user_parts(sent)[1]["text"] == texts[-1]
    assert _blocks(sent["input"]) == 1
    await proxy.settle()
    rows = proxy.engine.export()["threads"]
    assert len(rows) == 1 and len(rows[0]["messages"]) == 1 + 2 * 300


@pytest.mark.parametrize("tools", [True, False])
async def test_a_stream_without_memory_calls_reaches_the_client_byte_for_byte(
        make_proxy: Any, upstream: FakeUpstream, tools: bool) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    upstream.push_response(RReply(text="exact bytes", reasoning="E", write_size=5, calls=[
        {"call_id": "call_w", "name": "get_weather", "arguments": '{"city":"Oslo"}'}]))
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/responses", headers={"Authorization": f"Bearer {TEST_KEY}"},
            json={"model": "m", "input": "hi", "stream": True, "tools": [WEATHER]}) as resp:
        got = await resp.read()
        assert resp.headers["x-lcm-memory"] == "injected"
    if not tools:
        assert got == upstream.streams[-1]
    else:  # the same, but the echoed request's tools in created/in_progress/completed
        theirs, ours = upstream.streams[-1].split(b"\n\n"), got.split(b"\n\n")
        assert len(theirs) == len(ours)
        changed = [i for i, (a, b) in enumerate(zip(theirs, ours, strict=True)) if a != b]
        assert changed == [0, 1, len(ours) - 2]
        for i in changed:
            a = orjson.loads(theirs[i].split(b"data: ", 1)[1])
            b = orjson.loads(ours[i].split(b"data: ", 1)[1])
            assert [t["name"] for t in b["response"]["tools"]] == ["get_weather"]
            assert dict(a, response=dict(a["response"], tools=[WEATHER])) == b
    await proxy.settle()
    reply = _rows(proxy, "SELECT raw_json FROM messages WHERE kind='response'")
    stored = orjson.loads(reply[0]["raw_json"])
    assert stored["content"] == "exact bytes"
    assert stored["tool_calls"][0]["function"]["name"] == "get_weather"


async def test_an_error_after_the_client_saw_a_round_is_an_error_event_in_sequence(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    upstream.push_response(RReply(text="Let me check.", calls=[_grep()]),
                           RReply(status=500))
    async with aiohttp.ClientSession() as session, session.post(
            f"{proxy.base_url}/responses", headers={"Authorization": f"Bearer {TEST_KEY}"},
            json={"model": "m", "input": "Which dashboard?", "stream": True}) as resp:
        assert resp.status == 200
        got = await resp.read()
    decoder = SSEDecoder()
    events = [orjson.loads(e.data) for e in decoder.feed(got) + decoder.close()]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created"
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    # the upstream's own error, as a Responses stream carries one
    assert events[-2]["message"] == "fake error" and events[-2]["code"] is not None
    # then the terminal event: the response the client saw, failed, with what it was shown
    failed = events[-1]["response"]
    assert failed["id"] == events[0]["response"]["id"] and failed["status"] == "failed"
    assert failed["error"] == {"code": events[-2]["code"], "message": "fake error"}
    assert [i["type"] for i in failed["output"]] == ["message"]
    assert b"memory_grep" not in got
    await proxy.settle()
    assert not _rows(proxy, "SELECT id FROM messages WHERE kind='response' AND hidden=0")


async def test_the_inspector_shows_the_responses_body_with_flat_memory_tools(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    raw = await rclient.responses.with_raw_response.create(
        model="m", input=[{"role": "user", "content": "hi"}], tools=[WEATHER])
    await proxy.settle()
    shown = proxy.engine.forwarded(raw.headers["x-lcm-request-id"])
    assert shown is not None
    body = orjson.loads(shown["body"])
    assert [t.get("name") for t in body["tools"]][:2] == ["get_weather", "memory_grep"]
    assert all("function" not in t for t in body["tools"])
    assert body == upstream.responses_requests[-1]["json"]


@pytest.mark.parametrize("tools", [True, False])
@pytest.mark.parametrize("status", ["incomplete", "failed"])
async def test_incomplete_is_an_answer_and_failed_is_not(
        make_proxy: Any, upstream: FakeUpstream, tools: bool, status: str) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    upstream.push_response(RReply(text="cut sh", response_status=status))
    events = await _events(await client.responses.create(model="m", input="hi", stream=True))
    assert events[-1].type == f"response.{status}"
    await proxy.settle()
    replies = _rows(proxy, "SELECT id FROM messages WHERE kind='response'")
    assert len(replies) == (1 if status == "incomplete" else 0)
    last = orjson.loads(_rows(proxy, "SELECT data FROM events WHERE kind='response'")[-1][
        "data"])
    assert last["outcome"] == ("complete" if status == "incomplete" else "incomplete")


async def test_agents_sdk_streamed_run_with_a_hidden_memory_round(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.models.openai_provider import OpenAIProvider

    @function_tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return f"sunny in {city}"

    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    config = RunConfig(model_provider=OpenAIProvider(openai_client=client),
                       tracing_disabled=True)
    agent = Agent(name="ops", instructions=INSTRUCTIONS, tools=[get_weather], model="m")
    upstream.push_response(
        RReply(text=None, calls=[_grep("call_m")]),
        RReply(text=None, calls=[{"call_id": "call_w", "name": "get_weather",
                                  "arguments": '{"city":"Oslo"}'}], write_size=3),
        RReply(text="It is sunny in Oslo.", write_size=3))
    result = Runner.run_streamed(agent, "Weather in Oslo?", run_config=config)
    kinds = [e.type async for e in result.stream_events()]
    assert result.final_output == "It is sunny in Oslo."
    assert "raw_response_event" in kinds
    names = [getattr(i.raw_item, "name", None) for i in result.new_items]
    assert "memory_grep" not in names and "get_weather" in names
    assert len(upstream.responses_requests) == 3


async def test_tools_go_only_where_history_lies_beyond(upstream: FakeUpstream,
                                                      tmp_path: Path) -> None:
    """Default ``tools.offer``: a first conversation carries all there is, so no memory
    tools; a second conversation of the same key has the first beyond it."""
    running = await start_proxy(upstream.base_url, tmp_path / "d")
    c = openai.AsyncOpenAI(base_url=running.base_url, api_key=TEST_KEY, max_retries=0)
    try:
        def offered() -> set[str]:
            body = [r for r in upstream.requests if r["path"] == "/v1/responses"][-1]["json"]
            return {t.get("name") for t in body.get("tools", [])}

        await c.responses.create(model="gpt-x", input="My cat is called Biscuit.")
        assert not {n for n in offered() if str(n).startswith("memory_")}
        await running.settle()
        await c.responses.create(model="gpt-x", input="A new task: what is my cat called?")
        assert {"memory_search", "memory_grep"} <= offered()
    finally:
        await c.close()
        await running.close()


async def test_a_background_run_gets_no_memory_tools_and_is_continued_upstream(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """``background: true``: the upstream answers ``queued`` and runs on after the
    proxy relayed that, so no memory tool is offered (nor named in the block), and the
    queued response, whose output only the upstream will know, is not mapped: a request
    continuing it goes with its ``previous_response_id``, never as a replay that would
    lack the background answer."""
    upstream.push_response(RReply(text=None, response_status="queued"))
    first = await rclient.responses.create(model="gpt-x", background=True,
                                           input="Write a long essay about owls.")
    assert first.status == "queued"
    body = upstream.responses_requests[-1]["json"]
    assert not [t for t in body.get("tools", []) if t["name"].startswith("memory_")]
    assert "memory_grep" not in orjson.dumps(body["input"]).decode()
    await proxy.settle()
    raw = await rclient.responses.with_raw_response.create(
        model="gpt-x", previous_response_id=first.id, input="Shorter, please.")
    assert "x-lcm-responses-mode" not in raw.headers
    sent = upstream.responses_requests[-1]["json"]
    assert sent["previous_response_id"] == first.id
    assert sent["input"] == "Shorter, please."  # as the client sent it


async def test_an_oversized_opening_is_compacted_but_never_the_request(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """A first request of two user turns whose first one alone overflows the budget:
    the inline compaction summarises it, and the newest user message still goes
    verbatim, last (it used to be summarised too, so the model got no request)."""
    paste = "lorem ipsum dolor sit amet 12345 " * 20_000  # ~160,000 tokens
    raw = await rclient.responses.with_raw_response.create(model="gpt-x", input=[
        {"role": "user", "content": paste}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "Summarise it in one line."}])
    assert raw.headers["x-lcm-context-compacted"] == "inline"
    sent = upstream.responses_requests[-1]["json"]["input"]
    assert len(orjson.dumps(sent)) < 100_000
    assert sent[-1]["role"] == "user"
    assert "Summarise it in one line." in orjson.dumps(_user_parts(
        upstream.responses_requests[-1]["json"])).decode()


async def test_tool_choice_required_gets_no_memory_tools(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """``tool_choice: "required"`` makes every round call a tool: a model that kept to
    the memory tools ran out the round budget and the client got a completed
    response with an empty output. So, as ``any`` on ``/v1/messages``, no memory
    tools go (and the block names none); the client's forced call comes back."""
    upstream.push_response(*(RReply(text=None, calls=[{
        "call_id": f"c{k}", "name": "memory_grep", "arguments": '{"query": "x"}'}])
        for k in range(8)))
    tools = [{"type": "function", "name": "lookup", "strict": False,
              "parameters": {"type": "object", "properties": {}}}]
    resp = await rclient.responses.create(model="gpt-x", input="Look it up.",
                                          tools=tools, tool_choice="required")
    body = upstream.responses_requests[0]["json"]
    assert [t["name"] for t in body["tools"]] == ["lookup"]
    assert "memory_grep" not in orjson.dumps(body["input"]).decode()
    # The fake answered the one round with its scripted call, relayed as it came.
    assert len(upstream.responses_requests) == 1
    assert [o.type for o in resp.output] == ["function_call"]


async def test_a_stream_the_upstream_ends_with_an_error_event_ends_cleanly(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A Responses stream may end with an ``error`` event and no terminal event
    (compatible servers do): with the memory tools offered, the client gets every
    event and a clean end, as from the upstream, not a connection cut mid-stream;
    the request is recorded as an error, not as an answer."""
    import openai

    def ev(obj: dict[str, Any]) -> bytes:
        return b"event: " + obj["type"].encode() + b"\ndata: " + orjson.dumps(obj) + b"\n\n"

    head = {"id": "resp_err", "object": "response", "created_at": 1, "status": "in_progress",
            "model": "m", "output": []}
    raw = (ev({"type": "response.created", "sequence_number": 0, "response": head})
           + ev({"type": "response.in_progress", "sequence_number": 1, "response": head})
           + ev({"type": "error", "sequence_number": 2, "code": "server_error",
                 "message": "model crashed", "param": None}))
    upstream.push_response(RReply(raw_stream=raw))
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    kinds = [event.type async for event in await client.responses.create(
        model="m", input="hi", stream=True)]  # no APIConnectionError: a clean end
    assert kinds == ["response.created", "response.in_progress", "error"]
    await proxy.settle()
    assert not _rows(proxy, "SELECT id FROM messages WHERE kind='response' AND hidden=0")
