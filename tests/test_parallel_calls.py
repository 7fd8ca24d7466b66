"""Parallel tool calls echoed in another order than stored stay on one path.

A model's parallel calls are one stored reply; a client may echo them interleaved
with their results (call 1, result 1, call 2, result 2), or the results in another
order. Capture (memory_core/capture/evidence.py ``regroup_calls``) maps such an echo to the
stored reply instead of forking a branch; separate rounds stay separate. Driven by
raw Responses requests through the proxy to the fake upstream, and on the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from proxy.settings import load_settings
from proxy.wire.responses import RESPONSES, reply_turn, to_turns
from tests.conftest import TEST_KEY, RunningProxy, sql_read
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream

TOOLS = [{"type": "function", "name": "read_file", "description": "Read a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path"]}}]


def _call(i: int) -> dict[str, Any]:
    return {"type": "function_call", "call_id": f"call_{i}", "name": "read_file",
            "arguments": f'{{"path": "f{i}.py"}}'}


def _out(i: int) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"call_{i}", "output": f"body {i}"}


def _threads(proxy: RunningProxy) -> list[dict[str, Any]]:
    threads: list[dict[str, Any]] = proxy.engine.export()["threads"]
    return threads


@pytest.mark.parametrize("order", ["interleaved", "results-swapped"])
async def test_an_echo_of_parallel_calls_in_another_order_keeps_one_thread(
        make_proxy: Any, upstream: FakeUpstream, order: str) -> None:
    proxy = await make_proxy(tools={"enabled": False})
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    user = {"role": "user", "content": "Read f1.py and f2.py, then tell me the diff."}
    upstream.push_response(RReply(text=None, calls=[
        {"call_id": "call_1", "name": "read_file", "arguments": '{"path": "f1.py"}'},
        {"call_id": "call_2", "name": "read_file", "arguments": '{"path": "f2.py"}'}]))
    r1 = await client.responses.create(model="m", input=[user], tools=TOOLS)
    calls = [o.model_dump(exclude_none=True) for o in r1.output]
    assert [c["call_id"] for c in calls] == ["call_1", "call_2"]
    if order == "interleaved":
        echo = [user, calls[0], _out(1), calls[1], _out(2)]
    else:  # first the results in one order, then in the other
        first = [user, *calls, _out(1), _out(2)]
        await client.responses.create(model="m", input=first, tools=TOOLS)
        echo = [user, *calls, _out(2), _out(1)]
    r2 = await client.responses.create(model="m", input=echo, tools=TOOLS)
    ask = {"role": "user", "content": "And which one is longer?"}
    await client.responses.create(
        model="m", input=[*echo, *(o.model_dump(exclude_none=True) for o in r2.output), ask],
        tools=TOOLS)
    await proxy.settle()
    threads = _threads(proxy)
    assert len(threads) == 1, [len(t["messages"]) for t in threads]
    roles = [m["role"] for m in threads[0]["messages"]]
    # one reply for both calls, each result once, then the two later turns
    assert roles.count("assistant") == 3 and roles.count("tool") == 2
    # the forwarded body is the client's, order as sent
    sent = upstream.responses_requests[-1]["json"]["input"]
    assert [i.get("call_id") for i in sent if isinstance(i, dict) and "call_id" in i] == [
        i["call_id"] for i in echo if "call_id" in i]


def test_separate_rounds_stay_separate_and_the_ids_line_up(tmp_path: Path) -> None:
    settings = load_settings(None, environ={}, overrides={"embedding": {"provider": "hashing"}})
    engine = Engine(tmp_path / "d", settings.memory_config())
    scope = Scope("t", "default", "s")
    try:
        user = {"role": "user", "content": "Read f1 then f2."}
        # Two sequential rounds, stored as such: call 1 answered, then call 2.
        ticket, fut = engine.capture_request(scope, "r1", [user], {})
        fut.result(30)
        engine.capture_response(ticket, [reply_turn([_call(1)])], {}).result(30)
        turns = to_turns([user, _call(1), _out(1)])
        ticket, fut = engine.capture_request(scope, "r2", turns, {})
        fut.result(30)
        engine.capture_response(ticket, [reply_turn([_call(2)])], {}).result(30)
        turns = to_turns([user, _call(1), _out(1), _call(2), _out(2)])
        ticket, fut = engine.capture_request(scope, "r3", turns, {})
        result = fut.result(30)
        assert not result.path_ids and len(set(result.message_ids)) == 5
        # One reply with both calls, echoed interleaved: its id stands for both call
        # turns, the path holds each stored message once.
        other = Scope("t", "default", "s2")
        ticket, fut = engine.capture_request(other, "r4", [user], {})
        fut.result(30)
        engine.capture_response(ticket, [reply_turn([_call(1), _call(2)])], {}).result(30)
        turns = to_turns([user, _call(1), _out(1), _call(2), _out(2), {
            "role": "user", "content": "next"}])
        ticket, fut = engine.capture_request(other, "r5", turns, {})
        result = fut.result(30)
        ids = result.message_ids
        assert len(ids) == len(turns) and ids[1] == ids[3]
        assert result.path == (ids[0], ids[1], ids[2], ids[4], ids[5])
        assert not result.created_thread and len(result.new_ids) == 3
        # the user message was stored (and extracted) as itself
        texts = dict(sql_read(engine, lambda c: c.execute(
            "SELECT id, text FROM messages").fetchall()))
        assert texts[ids[5]] == "next"
        assert RESPONSES.messages({"input": []}) == []
    finally:
        engine.close()


def test_a_reply_standing_for_two_call_turns_is_spliced_once() -> None:
    from proxy.rewrite import apply_splices

    a1, t1, a2, t2 = ({"role": "assistant", "n": 1}, {"role": "tool", "n": 1},
                      {"role": "assistant", "n": 2}, {"role": "tool", "n": 2})
    splice = [{"role": "assistant", "hidden": True}, {"role": "tool", "hidden": True},
              {"role": "assistant", "both": True}]
    out, ids = apply_splices([a1, t1, a2, t2], [7, 8, 7, 9], {7: splice})
    assert out == [*splice, t1, t2] and ids == [7, 7, 7, 8, 9]
