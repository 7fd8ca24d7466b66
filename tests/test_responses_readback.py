"""``/v1/responses/{id}`` read back through the proxy: the client sees the response
it was shown (its id, output, tools, usage, ``previous_response_id``, input), not
the upstream's copy with the memory tools, their calls and the memory block; and
deleting it deletes the hidden rounds' responses too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest

from memory_core.assembly.block import BLOCK_MARKER
from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, "strict": False}
GREP = {"call_id": "call_m1", "name": "memory_grep",
        "arguments": orjson.dumps({"query": "GRF-7781", "start_time": None,
                                   "end_time": None, "limit": None}).decode()}


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data", tools={"offer": "always"})
    yield running
    await running.close()


@pytest.fixture
def rclient(proxy: RunningProxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


async def _answer(rclient: openai.AsyncOpenAI, stream: bool, **kwargs: Any) -> Any:
    """The response object the client ended with."""
    made = await rclient.responses.create(model="m", tools=[WEATHER], stream=stream, **kwargs)
    if not stream:
        return made
    events = [e async for e in made]  # type: ignore[union-attr]
    return events[-1].response


def _user_texts(items: list[Any]) -> list[str]:
    out = []
    for item in items:
        if getattr(item, "role", None) == "user":
            out += [p.text for p in item.content]
    return out


@pytest.mark.parametrize("stream", [False, True])
async def test_a_response_with_a_hidden_round_reads_back_as_shown(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI,
        stream: bool) -> None:
    """``GET /v1/responses/{id}`` went to the upstream as it is: its copy lists the
    memory tools, counts one round's tokens, and (before a reasoning round was
    hidden whole) was the round that ends in the memory call."""
    upstream.push_response(RReply(text=None, reasoning="ENC-1", calls=[GREP]),
                           RReply(text="It is GRF-7781."))
    shown = await _answer(rclient, stream, input="Which dashboard was it?")
    await proxy.settle()
    got = await rclient.responses.retrieve(shown.id)
    assert got.id == shown.id
    assert [t.name for t in got.tools] == [t.name for t in shown.tools] == ["get_weather"]
    assert got.output_text == shown.output_text == "It is GRF-7781."
    assert [o.type for o in got.output] == [o.type for o in shown.output]
    assert got.usage is not None and shown.usage is not None
    assert got.usage.total_tokens == shown.usage.total_tokens == 30
    items = (await rclient.responses.input_items.list(shown.id)).data
    assert [i.type for i in items] == ["message"]
    assert _user_texts(items) == ["Which dashboard was it?"]
    ascending = (await rclient.responses.input_items.list(shown.id, order="asc")).data
    assert [i.type for i in ascending] == ["message"]


async def test_a_replayed_turn_reads_back_with_the_clients_previous_id(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """A turn that continues a stored response and gets a memory block goes upstream
    as a stateless replay: the upstream's copy says ``previous_response_id: null``
    and holds the whole thread and the block as its input."""
    first = await _answer(rclient, False, input="Goal: ship the importer by Friday")
    await proxy.settle()
    second = await _answer(rclient, False, input="what was the goal again?",
                           previous_response_id=first.id)
    assert upstream.responses_requests[-1]["json"].get("previous_response_id") is None
    assert second.previous_response_id == first.id
    await proxy.settle()
    got = await rclient.responses.retrieve(second.id)
    assert got.previous_response_id == first.id
    items = (await rclient.responses.input_items.list(second.id)).data
    assert not any(BLOCK_MARKER in t for t in _user_texts(items))
    assert _user_texts(items)[0] == "what was the goal again?"


async def test_a_later_turns_block_is_not_read_back(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """A block after a thread's first turn opens with a section header
    (``[User Preferences]``…), not the bootstrap marker: its ``input_text`` part was
    read back as the user's."""
    proxy.engine.set_agent_memory(tenant="*", role="default", category="user_preferences",
                                  key="units", title="Units", content="metric")
    first = await _answer(rclient, False, input="Goal: ship the importer by Friday")
    await proxy.settle()
    second = await _answer(rclient, False, input="how far is it, in km?",
                           previous_response_id=first.id)
    await proxy.settle()
    sent = upstream.responses_requests[-1]["json"]["input"][-1]["content"][0]["text"]
    assert sent.startswith("[User Preferences]\n- Units: metric")
    items = (await rclient.responses.input_items.list(second.id)).data
    assert _user_texts(items)[0] == "how far is it, in km?"
    assert not any("Units: metric" in t for t in _user_texts(items))


async def test_a_replayed_background_run_polls_with_the_clients_previous_id(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """A background run is read back by polling ``GET /v1/responses/{id}``; replayed
    statelessly, its upstream copy says ``previous_response_id: null`` where the
    client was shown its own (the run's output is the upstream's: it is not noted)."""
    first = await _answer(rclient, False, input="Goal: ship the importer by Friday")
    await proxy.settle()
    upstream.push_response(RReply(text=None, response_status="queued"))
    raw = await rclient.responses.with_raw_response.create(
        model="m", background=True, input="what was the goal again?",
        previous_response_id=first.id)
    assert raw.headers["x-lcm-responses-mode"] == "stateless-replay"
    queued = raw.parse()
    assert queued.previous_response_id == first.id
    upstream.responses.objects[queued.id].update(
        status="completed", output=[{"type": "message", "id": "msg_bg", "status": "completed",
                                     "role": "assistant", "content": [
                                         {"type": "output_text", "text": "Ship it by Friday.",
                                          "annotations": []}]}])
    got = await rclient.responses.retrieve(queued.id)
    assert got.status == "completed" and got.output_text == "Ship it by Friday."
    assert got.previous_response_id == first.id
    await proxy.settle()


async def test_deleting_a_response_deletes_its_hidden_rounds(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """The hidden round's response is stored upstream too, with the client's input; a
    client that deletes its response must not leave it behind."""
    upstream.push_response(RReply(text=None, reasoning="ENC-1", calls=[GREP]),
                           RReply(text="It is GRF-7781."))
    shown = await _answer(rclient, True, input="Which dashboard was it?")
    await proxy.settle()
    assert len(upstream.responses.objects) == 2
    deleted = await rclient.responses.delete(shown.id)
    assert deleted is None  # the SDK's delete returns nothing on success
    assert upstream.responses.objects == {}
    with pytest.raises(openai.NotFoundError):
        await rclient.responses.retrieve(shown.id)


def test_without_a_note_the_memory_tools_are_found_by_their_definitions() -> None:
    """After a restart the proxy has no note of what it showed: its own tools (name
    and description as offered) and their calls still leave the read-back; a client
    tool of the same name, its own description, stays."""
    from memory_core.tools.memory_tools import DEFINITIONS
    from proxy.wire.responseview import response_view

    ours = DEFINITIONS["memory_grep"]["function"]
    theirs = {"type": "function", "name": "memory_grep", "description": "my own grep"}
    prefixed = {"type": "function", "name": "lcm_memory_grep",
                "description": ours["description"], "parameters": {}}
    obj = {"id": "resp_1", "tools": [theirs, prefixed],
           "output": [{"type": "function_call", "name": "lcm_memory_grep", "call_id": "a"},
                      {"type": "function_call", "name": "memory_grep", "call_id": "b"}]}
    view = response_view(obj, None)
    assert view["tools"] == [theirs]
    assert [i["call_id"] for i in view["output"]] == ["b"]
    assert response_view(view, None) is view  # nothing of ours: the same object


async def test_a_users_own_text_shaped_like_a_block_is_read_back_whole(
        proxy: RunningProxy, upstream: FakeUpstream, rclient: openai.AsyncOpenAI) -> None:
    """A turn that got no block, one of whose own parts is shaped like a block (a
    section header through a ``[Current Request]`` line), is read back whole (the
    proxy noted that no block went in); that part was dropped."""
    first = await _answer(rclient, False, input="hello there")
    await proxy.settle()
    pasted = "[Memory]\n- the old log says X\n[Current Request]"  # a part of its own
    parts: Any = [{"type": "input_text", "text": pasted},
                  {"type": "input_text", "text": "what does that log mean?"}]
    second = await _answer(rclient, False, input=[{"role": "user", "content": parts}],
                           previous_response_id=first.id)
    await proxy.settle()
    sent = upstream.responses_requests[-1]["json"]["input"]
    assert "Background Context" not in str(sent) and "User Preferences" not in str(sent)
    items = (await rclient.responses.input_items.list(second.id)).data
    assert _user_texts(items)[:2] == [pasted, "what does that log mean?"]
