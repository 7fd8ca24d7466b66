"""Replays of failure kinds, rows 134 on of docs/evaluation/wire_replays.md: the loose
ends of rows 118–133 (an MCP approval answer in the client's input, the service tier of
an answer summed over rounds, a hidden round's reasoning in a whole answer). The proxy
on its memory path (the memory tools offered), a loopback upstream writing each API's
real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest

from tests.conftest import TEST_KEY, store_sql
from tests.replay_helpers import (
    JSON,
    Gated,
    Scripted,
    block_event,
    data,
    ev,
    gated,  # noqa: F401 - the fixture
    post,
)
from tests.replay_helpers import events as _events
from tests.test_wire_replays_more5 import (
    ANSWER_ITEM,
    APPROVAL,
    DONE_TEXT,
    LIST_TOOLS,
    MCP_CALL,
    MCP_TOOL,
    MEMORY_ITEM,
    MEMORY_USE,
    _message,
    _resp_stream,
    _response,
)


# -- 134: an MCP approval answer is the client's ------------------------------------------------
# The Responses reference: an ``mcp_approval_response`` input item is "a response to an
# MCP approval request", sent by the client on its next request. It was read as an
# opaque assistant turn: stored as something the model said, found by memory search as
# the assistant's.
# Like a ``function_call_output`` it is now the client's answer to an item of the
# model's (a ``tool`` turn), and it still reaches the upstream as the SDK wrote it.
REASON = "only the staging database, never production"
GREP = orjson.dumps({"query": "staging database"}).decode()


def _item_bytes(body: bytes, kind: bytes) -> bytes:
    """The bytes of the flat JSON object of type ``kind`` in ``body``."""
    at = body.index(b'"' + kind + b'"')
    return body[body.rindex(b"{", 0, at):body.index(b"}", at) + 1]


async def test_an_mcp_approval_answer_is_stored_as_the_clients(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_response("resp_1", [LIST_TOOLS, APPROVAL])], headers=JSON),
        Scripted([_response("resp_2", [MCP_CALL, ANSWER_ITEM])], headers=JSON),
        Scripted([_response("resp_3", [dict(MEMORY_ITEM, arguments=GREP)])], headers=JSON),
        Scripted([_response("resp_4", [ANSWER_ITEM])], headers=JSON)])
    sent: list[bytes] = []

    async def keep(request: Any) -> None:
        sent.append(request.content)

    tool: Any = dict(MCP_TOOL, require_approval="always")
    user: Any = [{"role": "user", "content": "search the orders table"}]
    answer: Any = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                   "approve": True, "reason": REASON}
    async with openai.DefaultAsyncHttpxClient(event_hooks={"request": [keep]}) as http, \
            openai.AsyncOpenAI(
            api_key=TEST_KEY, base_url=proxy.base_url, max_retries=0,
            http_client=http) as client:
        first = await client.responses.create(model="m", input=user, store=False,
                                              tools=[tool])
        assert [o.type for o in first.output] == ["mcp_list_tools", "mcp_approval_request"]
        thread = [*user, *(o.model_dump(exclude_none=True) for o in first.output), answer]
        second = await client.responses.create(model="m", input=thread, store=False,
                                               tools=[tool])
        assert second.output_text == "done"
        await proxy.settle()
        await client.responses.create(model="m", store=False, tools=[tool], input=[
            {"role": "user", "content": "which database did I allow, staging?"}])
    assert len(upstream.received) == 4
    given = _item_bytes(sent[1], b"mcp_approval_response")
    assert given in upstream.received[1]["raw"], "the SDK's bytes, as written"
    kinds = [i.get("type", "message") for i in upstream.received[1]["json"]["input"]]
    assert kinds[-2:] == ["mcp_approval_request", "mcp_approval_response"]
    stored = store_sql(proxy.engine, "SELECT msg_role, text FROM messages"
                       " WHERE raw_json LIKE ?", ("%mcp_approval_response%",))
    assert [(r["msg_role"], r["text"]) for r in stored] == [
        ("tool", f"[mcp approval: approved] {REASON}")]
    # A later turn's memory search finds it as the client's answer, not as something
    # the assistant said.
    found = [orjson.loads(i["output"]) for i in upstream.received[3]["json"]["input"]
             if i.get("type") == "function_call_output"]
    assert [(r["role"], r["text"]) for r in found[0]["results"]
            if "staging" in r["text"]] == [("tool", f"[mcp approval: approved] {REASON}")]


# -- 135: the service tier of an answer summed over rounds ---------------------------------------
# Anthropic reports the tier a request was served on in ``usage.service_tier``; OpenAI in
# the response's (chunk's) ``service_tier``. A hidden round and the answering round can
# be served on different tiers (priority capacity runs out between them). The usage was
# summed and a string kept from the first round, so the client saw the hidden round's
# tier on an answer served on another; the answering round's tier is now the answer's.
def _chat(tier: str, call: bool, stream: bool) -> bytes:
    msg: Any = {"role": "assistant", "content": "done"} if not call else {
        "role": "assistant", "content": None, "tool_calls": [{
            "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}
    head = {"id": "chatcmpl-" + tier, "created": 1, "model": "m", "service_tier": tier}
    if not stream:
        return orjson.dumps({**head, "object": "chat.completion", "choices": [{
            "index": 0, "message": msg, "finish_reason": "tool_calls" if call else "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}})

    def piece(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return data({**head, "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]})

    if call:
        first = piece({"role": "assistant", "content": ""})
        body = piece({"tool_calls": [dict(msg["tool_calls"][0], index=0)]})
        return first + body + piece({}, "tool_calls") + b"data: [DONE]\n\n"
    return piece({"role": "assistant", "content": "done"}) + piece({}, "stop") + \
        b"data: [DONE]\n\n"


def _resp(tier: str, call: bool, stream: bool) -> bytes:
    item = MEMORY_ITEM if call else ANSWER_ITEM
    done = {"id": "resp_" + tier, "object": "response", "status": "completed", "model": "m",
            "created_at": 1, "service_tier": tier, "output": [item],
            "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}
    if not stream:
        return orjson.dumps(done)
    return b"".join([
        ev("response.created", {"type": "response.created", "sequence_number": 0,
                                "response": dict(done, status="in_progress", output=[],
                                                 usage=None)}),
        *(ev(name, {"type": name, "sequence_number": n, "output_index": 0, "item": item})
          for n, name in ((1, "response.output_item.added"), (2, "response.output_item.done"))),
        ev("response.completed", {"type": "response.completed", "sequence_number": 3,
                                  "response": done})])


def _msgs(tier: str, call: bool, stream: bool) -> bytes:
    usage = {"input_tokens": 5, "output_tokens": 2, "service_tier": tier}
    msg = _message([MEMORY_USE if call else DONE_TEXT], "tool_use" if call else "end_turn",
                   usage, "msg_" + tier)
    if not stream:
        return orjson.dumps(msg)
    return b"".join([
        ev("message_start", {"type": "message_start", "message": dict(
            msg, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))}),
        block_event("content_block_start", 0, content_block=msg["content"][0]),
        block_event("content_block_stop", 0),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": msg["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 2}}),
        ev("message_stop", {"type": "message_stop"})])


_ASK: Any = [{"role": "user", "content": "hello there"}]
TIERED: dict[str, tuple[Any, dict[str, Any], tuple[str, str]]] = {
    "/chat/completions": (_chat, {"model": "m", "messages": _ASK}, ("priority", "default")),
    "/responses": (_resp, {"model": "m", "input": "hello there"}, ("priority", "default")),
    "/messages": (_msgs, {"model": "claude", "max_tokens": 50, "messages": _ASK},
                  ("priority", "standard"))}
"""path → (round bytes, request body, (hidden round's tier, answering round's))."""


def _tiers(value: Any) -> list[Any]:
    """Every ``service_tier`` in ``value``, depth first."""
    if isinstance(value, dict):
        return [*([value["service_tier"]] if "service_tier" in value else []),
                *(t for v in value.values() for t in _tiers(v))]
    return [t for v in value for t in _tiers(v)] if isinstance(value, list) else []


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("path", sorted(TIERED))
async def test_the_answering_rounds_service_tier_is_the_answers(
        gated: Gated, path: str, stream: bool) -> None:
    upstream, proxy = gated
    make, body, (hidden, answering) = TIERED[path]
    kw: Any = {} if stream else {"headers": JSON}
    upstream.answers.extend([Scripted([make(hidden, True, stream)], **kw),
                             Scripted([make(answering, False, stream)], **kw)])
    status, _, got = await post(proxy, path, dict(body, stream=stream))
    assert status == 200 and len(upstream.received) == 2 and b"memory_grep" not in got
    shown = _events(got) if stream else orjson.loads(got)
    assert _tiers(shown) and set(_tiers(shown)) == {answering}, _tiers(shown)


# -- 136: a hidden round's reasoning in a whole answer --------------------------------------------
# Row 130 put a hidden round's server tool work in front of a whole answer; a stream also
# shows that round's reasoning items (thinking blocks) once the work is shown. Sent back
# without them, the client's copy is not what the upstream wrote: an ``mcp_call`` sent
# by id without the reasoning item that led to it, a signed thinking block missing
# ahead of the server tool use. A whole answer now holds them in their places, as the
# stream does, and the next turn still reaches the upstream with each item once.
RS: list[dict[str, Any]] = [{"type": "reasoning", "id": f"rs_{n}", "summary": [],
                             "encrypted_content": f"gAAAAB{n}" * 8} for n in (0, 1, 2)]
TH: list[dict[str, Any]] = [{"type": "thinking", "thinking": f"step {n}",
                             "signature": f"sig{n}" * 8} for n in (0, 1, 2)]
SRV: list[dict[str, Any]] = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "alpha"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}]


def _message_stream(msg: dict[str, Any]) -> bytes:
    out = [ev("message_start", {"type": "message_start",
                                "message": dict(msg, content=[], stop_reason=None)})]
    for n, block in enumerate(msg["content"]):
        out += [block_event("content_block_start", n, content_block=block),
                block_event("content_block_stop", n)]
    return b"".join([*out, ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": msg["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": 2}}), ev("message_stop", {"type": "message_stop"})])


@pytest.mark.parametrize("stream", [True, False])
async def test_a_hidden_rounds_reasoning_leads_a_whole_response_as_a_stream(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    first: list[dict[str, Any]] = [RS[0], LIST_TOOLS, MCP_CALL, RS[1], MEMORY_ITEM]
    last: list[dict[str, Any]] = [RS[2], ANSWER_ITEM]
    if stream:
        upstream.answers.extend([Scripted([_resp_stream("resp_1", [(i, []) for i in first])]),
                                 Scripted([_resp_stream("resp_2", [(i, []) for i in last])])])
    else:
        upstream.answers.extend([Scripted([_response("resp_1", first)], headers=JSON),
                                 Scripted([_response("resp_2", last)], headers=JSON)])
    upstream.answers.append(Scripted([_response("resp_3", [ANSWER_ITEM])], headers=JSON))
    user: Any = [{"role": "user", "content": "hello there"}]
    body = {"model": "m", "input": user, "store": False, "tools": [MCP_TOOL], "stream": stream,
            "include": ["reasoning.encrypted_content"]}
    status, _, got = await post(proxy, "/responses", body)
    shown = ([e for e in _events(got) if e.get("type") == "response.completed"][0]["response"]
             if stream else orjson.loads(got))["output"]
    assert status == 200 and [o["id"] for o in shown] == [
        "rs_0", "mcpl_1", "mcp_1", "rs_1", "rs_2", "msg_2"]
    await proxy.settle()
    status, _, _ = await post(proxy, "/responses", dict(body, stream=False, input=[
        *user, *shown, {"role": "user", "content": "and then?"}]))
    assert status == 200 and len(upstream.received) == 3
    sent = upstream.received[2]
    assert [i.get("id", i.get("type", "user")) for i in sent["json"]["input"]] == [
        "user", "rs_0", "mcpl_1", "mcp_1", "rs_1", "fc_1", "function_call_output",
        "rs_2", "msg_2", "user"]
    assert all(sent["raw"].count(r["encrypted_content"].encode()) == 1 for r in RS)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_hidden_rounds_thinking_leads_a_whole_message_as_a_stream(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    usage = {"input_tokens": 5, "output_tokens": 2}
    first = _message([TH[0], *SRV, TH[1], MEMORY_USE], "tool_use", usage)
    last = _message([TH[2], DONE_TEXT], "end_turn", usage, "msg_2")
    if stream:
        upstream.answers.extend([Scripted([_message_stream(first)]),
                                 Scripted([_message_stream(last)])])
    else:
        upstream.answers.extend([Scripted([orjson.dumps(first)], headers=JSON),
                                 Scripted([orjson.dumps(last)], headers=JSON)])
    upstream.answers.append(Scripted([orjson.dumps(last)], headers=JSON))
    user: Any = [{"role": "user", "content": "hello there"}]
    body = {"model": "claude", "max_tokens": 2048, "messages": user, "stream": stream,
            "thinking": {"type": "enabled", "budget_tokens": 1024}}
    status, _, got = await post(proxy, "/messages", body)
    shown = [e["content_block"] for e in _events(got) if e.get("type") ==
             "content_block_start"] if stream else orjson.loads(got)["content"]
    assert status == 200 and shown == [TH[0], *SRV, TH[1], TH[2], DONE_TEXT]
    await proxy.settle()
    status, _, _ = await post(proxy, "/messages", dict(body, stream=False, messages=[
        *user, {"role": "assistant", "content": shown},
        {"role": "user", "content": "and then?"}]))
    assert status == 200 and len(upstream.received) == 3
    sent = upstream.received[2]
    turns = sent["json"]["messages"]
    assert [m["role"] for m in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] == [TH[0], *SRV, TH[1], MEMORY_USE]
    assert turns[3]["content"] == [TH[2], DONE_TEXT]
    assert all(sent["raw"].count(t["signature"].encode()) == 1 for t in TH)
