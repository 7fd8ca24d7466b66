"""Replays of failure kinds, rows 181 on of docs/evaluation/wire_replays.md, and four
leftovers of earlier rows: a ``store: false`` reasoning item that carries its text
going back with its id, a Responses terminal whose item is poorer than the streamed
one, an ``Idempotency-Key`` on the hidden rounds of a memory tool loop, and a
``previous_response_id`` continuation without the first request's ``X-LCM-Session``.
The proxy on its memory path (the memory tools offered), a loopback upstream writing
each API's real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest
from aiohttp import web

from tests.conftest import TEST_KEY, sql_read, start_proxy
from tests.replay_helpers import (
    FINAL,
    SDK_USER,
    USER,
    Gated,
    GatedUpstream,
    Scripted,
    block_event,
    chunk,
    data,
    ev,
    gated,  # noqa: F401 - the fixture
    gated_proxy,
    message_start,
    post,
)
from tests.replay_helpers import events as _events
from tests.test_wire_replays_more5 import ANSWER_ITEM, MEMORY_ITEM, _resp_stream


def _anthropic(proxy: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                    max_retries=0)


def _openai(proxy: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url, max_retries=0)


_ARGS = "{\"query\": \"build flag\"}"
_DONE = b"data: [DONE]\n\n"


def _memory_round() -> Scripted:
    return Scripted([chunk({"role": "assistant", "content": None, "tool_calls": [{
        "index": 0, "id": "call_m", "type": "function",
        "function": {"name": "memory_grep", "arguments": _ARGS}}]}),
        chunk({}, "tool_calls"), _DONE])


def _messages_memory_round() -> bytes:
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    return b"".join([
        message_start("msg_1"),
        block_event("content_block_start", 0, content_block=use),
        block_event("content_block_delta", 0, delta={
            "type": "input_json_delta", "partial_json": _ARGS}),
        block_event("content_block_stop", 0),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])


# -- leftover of row 170: a reasoning item with its text, ``store: false`` -----------------
# The API reference gives an input ``reasoning`` item a required ``id`` (with
# ``summary``; ``content`` and ``encrypted_content`` optional). With ``store: false`` one
# that carries neither text nor ``encrypted_content`` refers to nothing the upstream kept
# and stays out; one that carries its text (gpt-oss's ``reasoning_text`` parts) goes
# back as it came, id included, and so does the call that follows it.
_REASONING = {"type": "reasoning", "id": "rs_1", "summary": [],
              "content": [{"type": "reasoning_text", "text": "Look it up."}]}


@pytest.mark.parametrize("with_bare", [False, True], ids=["alone", "beside-a-bare-one"])
async def test_a_reasoning_item_with_its_text_goes_back_with_its_id(
        gated: Gated, with_bare: bool) -> None:
    upstream, proxy = gated
    bare: dict[str, Any] = {"type": "reasoning", "id": "rs_0", "summary": []}
    first: list[tuple[dict[str, Any], list[Any]]] = [(bare, [])] if with_bare else []
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [*first, (_REASONING, []), (MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])])
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True, "store": False})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    sent = upstream.received[1]["json"]["input"]
    back = [i for i in sent if i.get("type") in ("reasoning", "function_call")]
    assert [(i["type"], i.get("id")) for i in back] == [
        ("reasoning", "rs_1"), ("function_call", "fc_1")], back
    assert back[0]["content"] == _REASONING["content"]


async def test_a_clients_reasoning_item_with_its_text_goes_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])])
    given = [{"role": "user", "content": "hello there"}, _REASONING,
             {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "ls",
              "arguments": "{}"},
             {"type": "function_call_output", "call_id": "call_0", "output": "a.txt"}]
    status, _, _ = await post(proxy, "/responses", {
        "model": "m", "input": given, "stream": True, "store": False,
        "tools": [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]})
    assert status == 200 and len(upstream.received) == 2
    for n in (0, 1):
        sent = upstream.received[n]["json"]["input"]
        assert [i for i in sent if i.get("type") == "reasoning"] == [_REASONING]
        assert [i.get("id") for i in sent if i.get("type") == "function_call"][0] == "fc_0"


# -- leftover of rows 177/180: a terminal poorer than the streamed items ----------------------
# After a hidden round the proxy restates the terminal event with the items the client
# was shown, taking an item the terminal states too as the terminal states it (rows 177,
# 180: a message closed early or with ``content: []``). A terminal can be the poorer
# one: a translator that drops ``encrypted_content`` or a content part from its
# ``response.completed``. What the client received in ``output_item.done`` is kept.
def _with_terminal(stream: bytes, output: list[dict[str, Any]]) -> bytes:
    """``stream`` (from :func:`_resp_stream`) with its terminal's ``output`` replaced."""
    head, _, tail = stream.partition(b"event: response.completed\n")
    terminal = orjson.loads(tail.split(b"data: ", 1)[1])
    terminal["response"]["output"] = output
    return head + ev("response.completed", terminal)


_SIGNED = {"type": "reasoning", "id": "rs_2", "summary": [
    {"type": "summary_text", "text": "Checked."}], "encrypted_content": "gAAAAB" + "z" * 40}
_TWO_PARTS: dict[str, Any] = dict(ANSWER_ITEM, content=[
    {"type": "output_text", "text": "done", "annotations": []},
    {"type": "output_text", "text": " twice", "annotations": [], "logprobs": []}])


async def test_a_poorer_terminal_keeps_what_the_stream_showed(gated: Gated) -> None:
    upstream, proxy = gated
    poorer = [{k: v for k, v in _SIGNED.items() if k != "encrypted_content"},
              dict(_TWO_PARTS, content=[dict(_TWO_PARTS["content"][0], text="do")])]
    answer = _resp_stream("resp_2", [(_SIGNED, []), (_TWO_PARTS, [])])
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_with_terminal(answer, poorer)])])
    async with _openai(proxy) as client:
        async with client.responses.stream(
                model="m", input="hello there",
                include=["reasoning.encrypted_content"]) as s:
            final = await s.get_final_response()
    assert len(upstream.received) == 2, "the memory call was run"
    out = [o.model_dump(exclude_none=True) for o in final.output]
    assert out[0]["encrypted_content"] == _SIGNED["encrypted_content"]
    assert [p["text"] for p in out[1]["content"]] == ["done", " twice"]


async def test_a_richer_terminal_still_completes_the_streamed_items(gated: Gated) -> None:
    upstream, proxy = gated
    early = dict(_TWO_PARTS, content=[dict(_TWO_PARTS["content"][0], text="do")])
    answer = _resp_stream("resp_2", [(early, [])])
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_with_terminal(answer, [_TWO_PARTS])])])
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True})
    assert status == 200 and len(upstream.received) == 2
    assert _events(got)[-1]["response"]["output"] == [_TWO_PARTS]


# -- leftover of row 146: ``Idempotency-Key`` on the hidden rounds ----------------------------
# Gateways (Portkey, Stripe-style APIs) answer a repeated ``Idempotency-Key`` with the
# first answer. The client's key names its one request; the proxy's later rounds are new
# requests, so each carries a key derived from the client's: an upstream that
# deduplicates answers each round for itself, and a client's retry of the whole request
# meets each of its rounds again under the same keys.
class DedupingUpstream(GatedUpstream):
    """A :class:`GatedUpstream` answering a repeated ``Idempotency-Key`` (or
    ``X-Idempotency-Key``) with the answer first given for it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, Scripted] = {}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        key = request.headers.get("Idempotency-Key") or request.headers.get(
            "X-Idempotency-Key")
        if key is not None and key in self.seen:
            self.answers.appendleft(self.seen[key])
        elif key is not None and self.answers:
            self.seen[key] = self.answers[0]
        return await super().handle(request)


@pytest.fixture
async def deduping(tmp_path: Path) -> AsyncIterator[Gated]:
    async with gated_proxy(tmp_path, DedupingUpstream()) as pair:
        yield pair


_ROUNDS = {
    "/chat/completions": lambda: [_memory_round(), Scripted([FINAL["/chat/completions"]])],
    "/responses": lambda: [Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                           Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])],
    "/messages": lambda: [Scripted([_messages_memory_round()]),
                          Scripted([FINAL["/messages"]])],
}


@pytest.mark.parametrize("header", ["Idempotency-Key", "X-Idempotency-Key"])
@pytest.mark.parametrize("path", list(_ROUNDS))
async def test_each_round_of_a_hidden_loop_gets_its_own_idempotency_key(
        deduping: Gated, path: str, header: str) -> None:
    upstream, proxy = deduping
    shapes: dict[str, dict[str, Any]] = {
        "/chat/completions": {"messages": USER}, "/responses": {"input": "hello there"},
        "/messages": {"messages": USER, "max_tokens": 50}}
    body: dict[str, Any] = {"model": "m", "stream": True, **shapes[path]}
    for attempt in range(2):  # the client's retry of the same request
        upstream.answers.extend(_ROUNDS[path]())
        status, _, got = await post(proxy, path, body, {header: "key-1"})
        assert status == 200 and b"memory_grep" not in got, attempt
        assert b"done" in got, attempt
        upstream.answers.clear()
    keys = [r["headers"].get(header) for r in upstream.received]
    assert keys == ["key-1", "key-1-lcm1"] * 2, keys


# -- leftover: a ``previous_response_id`` continuation without ``X-LCM-Session`` --------------
# A client that names its session on the first request (``X-LCM-Session``) and then
# continues with ``previous_response_id`` alone (the Agents SDK's
# ``auto_previous_response_id``, a second process) continues the same conversation: it is
# captured on the stored response's thread, in its session, not started anew.
def _answer(rid: str, text: str) -> Scripted:
    item = dict(ANSWER_ITEM, id="msg_" + rid,
                content=[{"type": "output_text", "text": text, "annotations": []}])
    return Scripted([orjson.dumps({"id": rid, "object": "response", "status": "completed",
                                   "model": "m", "created_at": 1, "output": [item]})],
                    headers={"Content-Type": "application/json"})


@pytest.mark.parametrize(("second", "restarted"), [({}, False), ({}, True),
                                                   ({"X-LCM-Session": "s2"}, False)],
                         ids=["none", "none-another-proxy", "another-session"])
async def test_a_continuation_without_the_session_header_keeps_its_thread(
        gated: Gated, tmp_path: Path, second: dict[str, str], restarted: bool) -> None:
    upstream, proxy = gated
    upstream.answers.extend([_answer("resp_1", "noted"), _answer("resp_2", "sure")])
    status, _, _ = await post(proxy, "/responses", {"model": "m", "input": "first turn"},
                              {"X-LCM-Session": "s1"})
    assert status == 200
    await proxy.settle()
    # A second proxy on the same data dir reads the response from the store.
    other = await start_proxy(f"http://127.0.0.1:{upstream.port}/v1", tmp_path / "d",
                              tools={"offer": "always"}) if restarted else proxy
    try:
        status, _, _ = await post(other, "/responses", {
            "model": "m", "input": "second turn", "previous_response_id": "resp_1"}, second)
        assert status == 200
        await other.settle()
    finally:
        if other is not proxy:
            await other.close()
    rows = sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT m.text, t.session, m.thread_id FROM messages m JOIN threads t"
        " ON t.id = m.thread_id ORDER BY m.id")])
    texts = [r[0] for r in rows]
    assert texts[:2] == ["first turn", "noted"] and "second turn" in texts, rows
    named = second.get("X-LCM-Session", "s1")
    assert {r[1] for r in rows[2:]} == {named}, rows
    if not second:
        assert len({r[2] for r in rows}) == 1, "one thread"


# -- 181: a Messages memory call ending with ``end_turn``, after an empty text block ----------
# A bridge from Chat streams (LiteLLM's ``ollama_chat`` → ``/v1/messages``) opened every
# turn with an empty text block and closed a tool-use turn with ``stop_reason:
# "end_turn"``; tool runners that go on by the stop reason stopped (BerriAI/litellm#34692).
# The proxy goes by the blocks: the memory call is run and hidden, and neither the empty
# block nor the call reaches the client.
async def test_a_memory_call_ending_with_end_turn_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    round_1 = b"".join([
        message_start("msg_1"),
        block_event("content_block_start", 0, content_block={"type": "text", "text": ""}),
        block_event("content_block_stop", 0),
        block_event("content_block_start", 1, content_block=use),
        block_event("content_block_delta", 1, delta={"type": "input_json_delta",
                                                      "partial_json": _ARGS}),
        block_event("content_block_stop", 1),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])
    upstream.answers.extend([Scripted([round_1]), Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [(b.type, getattr(b, "text", None)) for b in final.content] == [("text", "done")]
    assert final.stop_reason == "end_turn"
    turn = upstream.received[1]["json"]["messages"][-2]
    assert [b["type"] for b in turn["content"]] == ["tool_use"], turn


# -- 182: one tool call reopened as several ``tool_use`` blocks --------------------------------
# A translator from OpenAI streams to Anthropic's opened a new ``tool_use`` block for each
# argument fragment of one call: the same ``id`` each time, the later ones with ``"name":
# ""`` (diegosouzapw/OmniRoute#686). Such blocks are one call: the proxy reads them as
# the call their id names, so a memory call so written is run with its whole input and
# no nameless block reaches the client.
def _reopened(name: str, tool_id: str) -> list[bytes]:
    out = []
    for i, (piece, named) in enumerate([("{\"query\": ", name), ("\"build flag\"}", "")]):
        out += [block_event("content_block_start", i, content_block={
                    "type": "tool_use", "id": tool_id, "name": named, "input": {}}),
                block_event("content_block_delta", i, delta={"type": "input_json_delta",
                                                               "partial_json": piece}),
                block_event("content_block_stop", i)]
    return out


async def test_a_memory_call_reopened_in_several_blocks_is_run_whole(gated: Gated) -> None:
    upstream, proxy = gated
    round_1 = b"".join([
        message_start("msg_1"), *_reopened("memory_grep", "toolu_m"),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])
    upstream.answers.extend([Scripted([round_1]), Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert [e["content_block"]["type"] for e in shown if e["type"] == "content_block_start"
            ] == ["text"], shown
    turn = upstream.received[1]["json"]["messages"]
    uses = [b for b in turn[-2]["content"] if b["type"] == "tool_use"]
    assert [(u["id"], u["name"], u["input"]) for u in uses] == [
        ("toolu_m", "memory_grep", {"query": "build flag"})], uses
    results = [b for b in turn[-1]["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ["toolu_m"]
    assert "query is required" not in orjson.dumps(results).decode()


# -- 183: an empty thinking delta inside a signed thinking block -------------------------------
# Bedrock's Converse stream writes an empty reasoning delta in the middle of a thinking
# block; relays turned it into a ``thinking_delta`` with ``"thinking": ""`` or a block of
# its own, and Claude Code's next turn carried a changed block (BerriAI/litellm#33315).
# Here a hidden round so written goes back as one thinking block, text and signature as
# streamed.
async def test_an_empty_thinking_delta_leaves_the_signed_block_whole(gated: Gated) -> None:
    upstream, proxy = gated
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    round_1 = b"".join([
        message_start("msg_1"),
        block_event("content_block_start", 0, content_block={"type": "thinking",
                                                             "thinking": "", "signature": ""}),
        block_event("content_block_delta", 0, delta={"type": "thinking_delta",
                                                      "thinking": "Look "}),
        block_event("content_block_delta", 0, delta={"type": "thinking_delta",
                                                      "thinking": ""}),
        block_event("content_block_delta", 0, delta={"type": "thinking_delta",
                                                      "thinking": "it up."}),
        block_event("content_block_delta", 0, delta={"type": "signature_delta",
                                                      "signature": "EqQBCkgIARAB"}),
        block_event("content_block_stop", 0),
        block_event("content_block_start", 1, content_block=use),
        block_event("content_block_delta", 1, delta={"type": "input_json_delta",
                                                      "partial_json": _ARGS}),
        block_event("content_block_stop", 1),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])
    upstream.answers.extend([Scripted([round_1]), Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(
                model="claude", max_tokens=2048, messages=SDK_USER,
                thinking={"type": "enabled", "budget_tokens": 1024}) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.content[-1].text == "done"  # type: ignore[union-attr]
    turn = upstream.received[1]["json"]["messages"][-2]["content"]
    assert turn[0] == {"type": "thinking", "thinking": "Look it up.",
                       "signature": "EqQBCkgIARAB"}, turn
    assert [b["type"] for b in turn] == ["thinking", "tool_use"]


# -- 184: a Responses ``error`` event with its fields nested under ``error`` -------------------
# The reference documents the stream's ``error`` event with ``code``, ``message`` and
# ``param`` at its top level; the API was seen writing them nested under ``error``
# (openai/openai-dotnet#881), and relays that read the top level only reported an error
# without a message (QuantumNous/new-api#5625). After a hidden round the client must
# still get the upstream's message.
@pytest.mark.parametrize("nested", [False, True], ids=["documented", "nested"])
async def test_an_error_event_after_a_hidden_round_keeps_its_message(
        gated: Gated, nested: bool) -> None:
    upstream, proxy = gated
    fields = {"code": "too_many_requests", "message": "Too Many Requests", "param": None}
    error = {"type": "error", "sequence_number": 1,
             **({"error": dict(fields, type="too_many_requests")} if nested else fields)}
    head = ev("response.created", {"type": "response.created", "sequence_number": 0,
                                   "response": {"id": "resp_2", "object": "response",
                                                "status": "in_progress", "output": [],
                                                "model": "m", "created_at": 1}})
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([head, ev("error", error)])])
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert b"Too Many Requests" in got, got
    assert b"memory_grep" not in got
    assert [e["type"] for e in shown].count("error") == 1, shown
    # openai-python raises for the nested form and yields the documented one.
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([head, ev("error", error)])])
    seen: list[Any] = []
    async with _openai(proxy) as client:
        stream = await client.responses.create(model="m", input="hello there", stream=True)
        try:
            async for event in stream:
                seen.append(event)
        except openai.APIError as exc:
            seen.append(exc)
    last = seen[-1]
    if nested:
        assert isinstance(last, openai.APIError) and "Too Many Requests" in str(last)
    else:
        assert last.type == "error" and last.message == "Too Many Requests", seen


# -- 185: numbers of another type in a Responses object (``created_at`` as a float) -----------
# OpenAI-compatible Responses servers write ``created_at`` as a float
# (``1764950000.123``); gateways with typed structs failed to parse the answer
# (QuantumNous/new-api#5221). Here such answers, streamed and whole, after a hidden
# round: the SDK reads them and the client gets the value as written.
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_float_created_at_reaches_the_sdk_after_a_hidden_round(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    stamp = 1764950000.123
    answer = _resp_stream("resp_2", [(ANSWER_ITEM, [])]).replace(
        b'"created_at":1', b'"created_at":' + str(stamp).encode())
    first = _resp_stream("resp_1", [(MEMORY_ITEM, [])]).replace(
        b'"created_at":1', b'"created_at":' + str(stamp).encode())
    if stream:
        upstream.answers.extend([Scripted([first]), Scripted([answer])])
    else:
        json = {"Content-Type": "application/json"}
        whole = [orjson.dumps(_events(b)[-1]["response"]) for b in (first, answer)]
        upstream.answers.extend([Scripted([whole[0]], headers=json),
                                 Scripted([whole[1]], headers=json)])
    final: Any
    async with _openai(proxy) as client:
        if stream:
            async with client.responses.stream(model="m", input="hello there") as s:
                final = await s.get_final_response()
        else:
            final = await client.responses.create(model="m", input="hello there")
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.output_text == "done"
    assert final.created_at == stamp


# -- 186: a Responses terminal without ``usage`` after a hidden round --------------------------
# Relays and compatible servers end a Responses stream with a ``response.completed``
# that has no ``usage`` (diegosouzapw/OmniRoute#6906); the Agents SDK then failed
# ("Response object missing required usage information", openai/openai-agents-python
# #1179, via LionSR/TeXRA#1857). After a hidden round the client is shown the usage
# summed over the rounds that state one.
async def test_a_terminal_without_usage_after_a_hidden_round(gated: Gated) -> None:
    upstream, proxy = gated
    answer = _resp_stream("resp_2", [(ANSWER_ITEM, [])])
    head, _, tail = answer.partition(b"event: response.completed\n")
    terminal = orjson.loads(tail.split(b"data: ", 1)[1])
    del terminal["response"]["usage"]
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([head + ev("response.completed", terminal)])])
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there") as s:
            final = await s.get_final_response()
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.output_text == "done"
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (3, 4)


# -- 187: a request body streamed chunked by the client ----------------------------------------
# A proxy that reads a chunked request body whole and re-sends it with its length, but
# copies the client's ``Transfer-Encoding: chunked`` too, sends both framings; strict
# HTTP/1.1 servers (Node, nginx) refuse it (HA7CH/ai-native-company#14). Here a chunked
# body on the memory path (rewritten) and on a pass-through route: the upstream gets one
# framing and the whole body.
async def test_a_chunked_request_body_reaches_the_upstream_with_one_framing(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([_memory_round(), Scripted([FINAL["/chat/completions"]]),
                             Scripted([b'{"data": []}'],
                                      headers={"Content-Type": "application/json"})])
    body = orjson.dumps({"model": "m", "messages": USER, "stream": True})
    embed = orjson.dumps({"model": "e", "input": "x" * 5000})

    async def pieces(raw: bytes) -> AsyncIterator[bytes]:
        for i in range(0, len(raw), 7):
            yield raw[i:i + 7]

    async with aiohttp.ClientSession() as session:
        for path, raw in (("/chat/completions", body), ("/embeddings", embed)):
            async with session.post(proxy.base_url + path, data=pieces(raw), headers={
                    "Authorization": f"Bearer {TEST_KEY}",
                    "Content-Type": "application/json"}) as resp:
                assert resp.status == 200, await resp.read()
                got = await resp.read()
            if path == "/chat/completions":
                assert b"done" in got and b"memory_grep" not in got
    assert len(upstream.received) == 3, "the memory call was run"
    for seen in upstream.received:
        framing = {k.lower() for k in seen["headers"]} & {"content-length",
                                                          "transfer-encoding"}
        assert len(framing) == 1, seen["headers"]
    assert upstream.received[2]["raw"] == embed


# -- 188: Codex's zstd request body on the Responses memory path -------------------------------
# The Codex CLI and desktop app compress larger ``/v1/responses`` bodies with
# ``Content-Encoding: zstd``; proxies that parse the bytes as JSON answered 400/502 or
# forwarded them still compressed under a dropped header (sozercan/vekil#6,
# Anionex/agent-vision-toolkit#29). Chat bodies are covered
# (``test_encoded_chat_body_reaches_the_upstream_decoded``); here a Responses stream with
# a hidden round.
async def test_a_zstd_responses_body_serves_every_round(gated: Gated) -> None:
    from backports import zstd  # Python 3.14: compression.zstd

    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])])
    plain = orjson.dumps({"model": "m", "input": "hello there", "stream": True,
                          "instructions": "Be brief. " * 200})
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + "/responses", data=zstd.compress(plain),
                                headers={"Authorization": f"Bearer {TEST_KEY}",
                                         "Content-Type": "application/json",
                                         "Content-Encoding": "zstd"}) as resp:
            assert resp.status == 200, await resp.read()
            got = await resp.read()
    assert len(upstream.received) == 2, "the memory call was run"
    assert _events(got)[-1]["response"]["output"] == [ANSWER_ITEM]
    for seen in upstream.received:
        assert "Content-Encoding" not in seen["headers"]
        assert seen["json"]["instructions"] == "Be brief. " * 200


# -- 189: a POST without a body on a pass-through route ----------------------------------------
# ``POST /v1/responses/{id}/cancel`` and batch cancels carry no body; proxies that
# forwarded such a request with an empty stream as its body (``Content-Length: 0``
# plus a body reader) got it refused and answered 502 (nuxt/scripts#854). Here with
# ``Content-Length: 0`` and with no length at all.
@pytest.mark.parametrize("length", ["0", None], ids=["length-0", "no-length"])
async def test_a_bodyless_post_passes_through(gated: Gated, length: str | None) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([b'{"id": "resp_1", "status": "cancelled"}'],
                                     headers={"Content-Type": "application/json"}))
    headers = {"Authorization": f"Bearer {TEST_KEY}",
               **({"Content-Length": length} if length is not None else {})}
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + "/responses/resp_1/cancel",
                                headers=headers) as resp:
            assert resp.status == 200, await resp.read()
            assert (await resp.json())["status"] == "cancelled"
    (seen,) = upstream.received
    assert seen["raw"] == b"" and seen["path"] == "/v1/responses/resp_1/cancel"
    assert seen["headers"].get("Transfer-Encoding") is None


# -- 190: a ``text_delta`` on an open ``tool_use`` block ---------------------------------------
# Bridges from Chat streams (sglang's Anthropic endpoint with the qwen3_coder parser)
# stamped the newline between two calls as a ``text_delta`` with the still-open
# ``tool_use`` block's index; the SDKs refused the stream ("Content block is not a text
# block", sgl-project/sglang#24294). On a memory call the proxy swallows the block; the
# turn it sends on must still be a valid ``tool_use`` block (Anthropic refuses unknown
# fields on it), the stray text not written into it.
async def test_a_text_delta_on_a_memory_call_stays_out_of_its_block(gated: Gated) -> None:
    upstream, proxy = gated
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    round_1 = b"".join([
        message_start("msg_1"),
        block_event("content_block_start", 0, content_block=use),
        block_event("content_block_delta", 0, delta={"type": "input_json_delta",
                                                      "partial_json": _ARGS}),
        block_event("content_block_delta", 0, delta={"type": "text_delta", "text": "\n"}),
        block_event("content_block_stop", 0),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])
    upstream.answers.extend([Scripted([round_1]), Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [b.type for b in final.content] == ["text"]
    turn = upstream.received[1]["json"]["messages"][-2]["content"]
    assert turn == [{"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
                     "input": {"query": "build flag"}}], turn
