"""More replays of failure kinds reported against other LLM proxies (rows 63 on of
docs/evaluation/wire_replays.md). Same setting as tests/test_wire_replays.py: the proxy
on its memory path (the memory tools offered), a loopback upstream writing each API's
real bytes, and what the client saw compared with what the upstream sent."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY
from tests.replay_helpers import (
    FINAL,
    JSON,
    MEMORY_CALLS,
    SDK_USER,
    USER,
    Gated,
    Scripted,
    chunk,
    data,
    ev,
    gated,  # noqa: F401 - the fixture
)
from tests.replay_helpers import events as _events
from tests.replay_helpers import post as _post


def _chat_call_then(final: bytes) -> list[Scripted]:
    """A hidden memory round, then ``final`` as the answering round (Chat)."""
    return [Scripted([MEMORY_CALLS["/chat/completions"][1]]), Scripted([final])]


# -- 63: Chat custom (freeform) tool calls ----------------------------------------------------
# Reported: gateways that read every Chat tool call as ``function`` drop or break GPT-5's
# ``type: "custom"`` calls (``custom: {name, input}``, no ``function``).
CUSTOM_TOOL = {"type": "custom", "custom": {"name": "apply_patch",
                                            "description": "Apply a patch"}}
CUSTOM_STREAM = b"".join([
    chunk({"role": "assistant", "content": None, "tool_calls": [{
        "index": 0, "id": "call_c", "type": "custom",
        "custom": {"name": "apply_patch", "input": ""}}]}),
    chunk({"tool_calls": [{"index": 0, "custom": {"input": "*** Begin Patch\n"}}]}),
    chunk({"tool_calls": [{"index": 0, "custom": {"input": "*** End Patch"}}]}),
    chunk({}, "tool_calls"), b"data: [DONE]\n\n"])
CUSTOM_MESSAGE = {"role": "assistant", "content": None, "tool_calls": [{
    "id": "call_c", "type": "custom",
    "custom": {"name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}}]}


def _custom_plain(call_id: str = "chatcmpl-c") -> bytes:
    return orjson.dumps({"id": call_id, "object": "chat.completion", "created": 1,
                         "model": "m", "choices": [{"index": 0, "message": CUSTOM_MESSAGE,
                                                    "finish_reason": "tool_calls"}],
                         "usage": {"prompt_tokens": 3, "completion_tokens": 5,
                                   "total_tokens": 8}})


@pytest.mark.parametrize("hidden_round", [False, True])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_custom_tool_call_reaches_the_chat_client(
        gated: Gated, stream: bool, hidden_round: bool) -> None:
    upstream, proxy = gated
    answer = (Scripted([CUSTOM_STREAM]) if stream else
              Scripted([_custom_plain()], headers={"Content-Type": "application/json"}))
    if hidden_round:
        first = MEMORY_CALLS["/chat/completions"][1]
        upstream.answers.append(Scripted([first]) if stream else Scripted([orjson.dumps({
            "id": "chatcmpl-m", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_m", "type": "function", "function": {
                        "name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}}]})],
            headers={"Content-Type": "application/json"}))
    upstream.answers.append(answer)
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        kw: Any = {"model": "m", "messages": SDK_USER, "tools": [CUSTOM_TOOL]}
        if stream:
            got = [c async for c in await client.chat.completions.create(stream=True, **kw)]
            calls = [tc for c in got for ch in c.choices for tc in ch.delta.tool_calls or []]
            dumped = [tc.model_dump(exclude_none=True) for tc in calls]
            assert dumped[0]["type"] == "custom" and dumped[0]["custom"]["name"] == "apply_patch"
            text = "".join(d["custom"].get("input", "") for d in dumped)
            assert text == "*** Begin Patch\n*** End Patch"
            assert got[-1].choices[0].finish_reason == "tool_calls"
        else:
            done = await client.chat.completions.create(**kw)
            assert done.choices[0].message.model_dump(exclude_none=True)[
                "tool_calls"] == CUSTOM_MESSAGE["tool_calls"]
    assert len(upstream.received) == (2 if hidden_round else 1)
    assert upstream.received[0]["json"]["tools"][0] == CUSTOM_TOOL


async def test_a_custom_tool_calls_turn_goes_back_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL["/chat/completions"]]))
    turn = [*USER, CUSTOM_MESSAGE, {"role": "tool", "tool_call_id": "call_c",
                                     "content": "patched"}]
    status, _, got = await _post(proxy, "/chat/completions", {
        "model": "m", "messages": turn, "tools": [CUSTOM_TOOL], "stream": True})
    assert status == 200 and got == FINAL["/chat/completions"]
    sent = upstream.received[0]["json"]["messages"]
    assert CUSTOM_MESSAGE in sent and orjson.dumps(CUSTOM_MESSAGE) in upstream.received[0]["raw"]


MESSAGE_DONE = {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
                "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 2}}
MESSAGE_CALL = dict(MESSAGE_DONE, id="msg_1", stop_reason="tool_use", content=[
    {"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
     "input": {"query": "build flag"}}])


# -- 64: model_context_window_exceeded ---------------------------------------------------------
# Reported: a proxy or client that maps stop reasons through a closed list turns Anthropic's
# ``model_context_window_exceeded`` into a crash or an ``end_turn``. After a hidden round
# (a longer request than the client's) the client must get the round's own.
@pytest.mark.parametrize("stop", ["model_context_window_exceeded", "refusal"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_context_window_stop_after_a_hidden_round_reaches_the_client(
        gated: Gated, stop: str, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        final = FINAL["/messages"].replace(b'"stop_reason":"end_turn"',
                                           b'"stop_reason":"%s"' % stop.encode())
        upstream.answers.extend([Scripted([MEMORY_CALLS["/messages"][1]]), Scripted([final])])
    else:
        upstream.answers.extend([Scripted([orjson.dumps(MESSAGE_CALL)], headers=JSON),
                                 Scripted([orjson.dumps(dict(MESSAGE_DONE, stop_reason=stop))],
                                          headers=JSON)])
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                        max_retries=0) as client:
        if stream:
            async with client.messages.stream(model="claude", max_tokens=50,
                                              messages=SDK_USER) as s:
                message = await s.get_final_message()
        else:
            message = await client.messages.create(model="claude", max_tokens=50,
                                                   messages=SDK_USER)
    assert message.stop_reason == stop
    assert len(upstream.received) == 2


# -- 65: fields of the terminal message_delta ----------------------------------------------------
# Reported: a gateway that rebuilds ``message_delta`` from the fields it knows (stop reason,
# usage) drops the others: the code-execution ``container``, ``context_management``
# (context editing), refusal ``stop_details``. After a hidden round they must still come.
DELTA_EXTRAS = {"container": {"id": "container_1", "expires_at": "2026-12-07T00:00:00Z"},
                "stop_details": {"type": "refusal", "category": "cyber"}}
TOP_EXTRAS = {"context_management": {"applied_edits": [
    {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2,
     "cleared_input_tokens": 900}]}}


@pytest.mark.parametrize("hidden_round", [False, True])
async def test_the_terminal_message_deltas_fields_reach_the_client(
        gated: Gated, hidden_round: bool) -> None:
    upstream, proxy = gated
    head, _, tail = FINAL["/messages"].partition(b"event: message_delta")
    delta = ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "end_turn", "stop_sequence": None, **DELTA_EXTRAS},
        "usage": {"output_tokens": 2}, **TOP_EXTRAS})
    final = head + delta + ev("message_stop", {"type": "message_stop"})
    if hidden_round:
        upstream.answers.append(Scripted([MEMORY_CALLS["/messages"][1]]))
    upstream.answers.append(Scripted([final]))
    status, _, got = await _post(proxy, "/messages", MEMORY_CALLS["/messages"][0])
    assert status == 200
    shown = [e for e in _events(got) if e["type"] == "message_delta"]
    assert len(shown) == 1
    for key, value in DELTA_EXTRAS.items():
        assert shown[0]["delta"].get(key) == value, key
    for key, value in TOP_EXTRAS.items():
        assert shown[0].get(key) == value, key


# -- 66: Chat chunk fields after a hidden round -----------------------------------------------
# Reported: ``system_fingerprint``, ``service_tier`` and the streaming ``obfuscation``
# padding dropped, and ``content_filter`` finish reasons rewritten to ``stop``, by relays
# that rebuild chunks.
@pytest.mark.parametrize("finish", ["content_filter", "length"])
async def test_chat_chunk_fields_after_a_hidden_round_reach_the_client(
        gated: Gated, finish: str) -> None:
    upstream, proxy = gated
    extras = {"system_fingerprint": "fp_1", "service_tier": "flex"}

    def rich(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return data({"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1,
                     "model": "m", **extras, "obfuscation": "aBc", "choices": [
                         {"index": 0, "delta": delta, "finish_reason": reason}]})
    final = b"".join([rich({"role": "assistant", "content": "cut"}), rich({}, finish),
                      b"data: [DONE]\n\n"])
    upstream.answers.extend(_chat_call_then(final))
    status, _, got = await _post(proxy, "/chat/completions", MEMORY_CALLS["/chat/completions"][0])
    assert status == 200 and b"memory_grep" not in got
    shown = _events(got)
    assert shown and all(e.get(k) == v for e in shown for k, v in extras.items()), shown
    assert [c["finish_reason"] for e in shown for c in e["choices"]
            if c["finish_reason"]] == [finish]


# -- 67: a 200 whose body is an error -----------------------------------------------------------
# Reported: OpenAI-compatible servers (one-api/new-api channels, some local servers) that
# answer ``200`` with ``{"error": {...}}`` and no choices; gateways reading the answer
# then fail with their own 500 or an empty completion. On the memory path, first round or
# hidden round, the client must get the body as the upstream wrote it.
ERROR_200 = orjson.dumps({"error": {"message": "channel quota exhausted",
                                    "type": "new_api_error", "code": "quota"}})
PLAIN_CALLS = {
    "/chat/completions": orjson.dumps({
        "id": "chatcmpl-m", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [{
                "id": "call_m", "type": "function", "function": {
                    "name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}}]}),
    "/messages": orjson.dumps(MESSAGE_CALL),
    "/responses": orjson.dumps({
        "id": "resp_1", "object": "response", "status": "completed", "model": "m",
        "created_at": 1, "output": [{"type": "function_call", "id": "fc_1",
                                     "call_id": "call_m", "name": "memory_grep",
                                     "arguments": "{\"query\": \"x\"}",
                                     "status": "completed"}],
        "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}),
}


@pytest.mark.parametrize("hidden_round", [False, True])
@pytest.mark.parametrize("path", sorted(PLAIN_CALLS))
async def test_an_error_body_under_200_reaches_the_client_as_sent(
        gated: Gated, path: str, hidden_round: bool) -> None:
    upstream, proxy = gated
    if hidden_round:
        upstream.answers.append(Scripted([PLAIN_CALLS[path]], headers=JSON))
    upstream.answers.append(Scripted([ERROR_200], headers=JSON))
    body = dict(MEMORY_CALLS[path][0], stream=False)
    status, headers, got = await _post(proxy, path, body)
    assert (status, got) == (200, ERROR_200)
    assert headers["Content-Type"].startswith("application/json")


# -- 68: a plain-text 5xx met by a hidden round ------------------------------------------------
# Reported: an upstream or load balancer in front of it answering 502/503 with a text or
# HTML body ("upstream connect error or disconnect/reset before headers"); gateways that
# parse every error as JSON turn it into their own 500 and lose the upstream's words.
TEXT_502 = b"upstream connect error or disconnect/reset before headers. reset reason: overflow"


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("path", sorted(PLAIN_CALLS))
async def test_a_text_5xx_met_by_a_hidden_round_reaches_the_client_as_sent(
        gated: Gated, path: str, stream: bool) -> None:
    upstream, proxy = gated
    first = (Scripted([MEMORY_CALLS[path][1]]) if stream
             else Scripted([PLAIN_CALLS[path]], headers=JSON))
    upstream.answers.extend([first, Scripted([TEXT_502], status=503, headers={
        "Content-Type": "text/plain", "retry-after": "3"})])
    status, headers, got = await _post(proxy, path, dict(MEMORY_CALLS[path][0], stream=stream))
    assert status == 503 and headers.get("retry-after") == "3"
    assert got == TEXT_502


# -- 69: an empty 200 -----------------------------------------------------------------------------
# Reported: providers answering ``200`` with an empty body (overloaded free tiers); relays
# answering with a synthesised empty completion hide the failure from the client.
@pytest.mark.parametrize("path", sorted(PLAIN_CALLS))
async def test_an_empty_200_reaches_the_client_empty(gated: Gated, path: str) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([b""], headers=JSON))
    status, _, got = await _post(proxy, path, dict(MEMORY_CALLS[path][0], stream=False))
    assert (status, got) == (200, b"")


# -- 63 (cont.): a custom call beside a memory call ---------------------------------------------
def _custom_at(index: int) -> list[bytes]:
    return [chunk({"tool_calls": [{"index": index, "id": "call_c", "type": "custom",
                                   "custom": {"name": "apply_patch", "input": ""}}]}),
            chunk({"tool_calls": [{"index": index, "custom": {"input": "*** Begin Patch"}}]})]


def _memory_at(index: int) -> list[bytes]:
    return [chunk({"tool_calls": [{"index": index, "id": "call_m", "type": "function",
                                   "function": {"name": "memory_grep", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": index,
                                   "function": {"arguments": "{\"query\": \"x\"}"}}]})]


@pytest.mark.parametrize("memory_first", [True, False])
async def test_a_custom_call_beside_a_memory_call_is_shown_and_goes_back(
        gated: Gated, memory_first: bool) -> None:
    upstream, proxy = gated
    calls = ([*_memory_at(0), *_custom_at(1)] if memory_first
             else [*_custom_at(0), *_memory_at(1)])
    upstream.answers.extend([Scripted([chunk({"role": "assistant", "content": None}), *calls,
                                       chunk({}, "tool_calls"), b"data: [DONE]\n\n"]),
                             Scripted([FINAL["/chat/completions"]])])
    body = {"model": "m", "messages": USER, "stream": True, "tools": [CUSTOM_TOOL]}
    status, _, got = await _post(proxy, "/chat/completions", body)
    assert status == 200 and b"memory_grep" not in got
    shown = [tc for e in _events(got) for c in e["choices"]
             for tc in c["delta"].get("tool_calls") or []]
    assert shown and shown[0]["index"] == 0 and shown[0]["custom"]["name"] == "apply_patch"
    assert "".join(tc["custom"].get("input", "") for tc in shown) == "*** Begin Patch"
    assert len(upstream.received) == 1
    mine = {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_c", "type": "custom",
        "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}]}
    turn = [*USER, mine, {"role": "tool", "tool_call_id": "call_c", "content": "ok"}]
    status, _, _ = await _post(proxy, "/chat/completions", dict(body, messages=turn))
    sent = upstream.received[1]["json"]["messages"]
    kinds = {c["id"]: c["type"] for m in sent for c in m.get("tool_calls") or []}
    assert kinds == {"call_c": "custom", "call_m": "function"}
    assert sorted(m["tool_call_id"] for m in sent if m["role"] == "tool") == [
        "call_c", "call_m"]


async def test_a_custom_tool_named_like_a_memory_tool_leaves_names_unique(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL["/chat/completions"]]))
    mine = {"type": "custom", "custom": {"name": "memory_grep"}}
    status, _, _ = await _post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True, "tools": [mine]})
    tools = upstream.received[0]["json"]["tools"]
    names = [t.get("function", t.get("custom", {})).get("name") for t in tools]
    assert len(tools) > 1 and len(names) == len(set(names)), names


# -- 70: the tool-count limit --------------------------------------------------------------------
# Reported: "Invalid 'tools': array too long. Expected an array with maximum length 128, but
# got an array with length 129" from a router that added its own tool to a client's 128.
# The memory tools may take only the room the client's tools leave.
def _many_tools(path: str, count: int) -> list[dict[str, Any]]:
    if path == "/responses":
        return [{"type": "function", "name": f"t{i}", "parameters": {"type": "object"}}
                for i in range(count)]
    return [{"type": "function", "function": {"name": f"t{i}", "parameters": {
        "type": "object"}}} for i in range(count)]


@pytest.mark.parametrize("count", [126, 128])
@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
async def test_the_memory_tools_take_only_the_room_left_under_128(
        gated: Gated, path: str, count: int) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL[path]]))
    mine = _many_tools(path, count)
    status, _, got = await _post(proxy, path, dict(MEMORY_CALLS[path][0], tools=mine))
    assert (status, got) == (200, FINAL[path])
    sent = upstream.received[0]["json"]["tools"]
    assert len(sent) == 128 and sent[:count] == mine


# -- 71: predicted outputs -------------------------------------------------------------------
# OpenAI's Predicted Outputs (``prediction``) refuse ``tools``: a proxy adding its own to
# such a request turns a valid request into a 400. The request goes without memory tools.
async def test_a_request_with_a_prediction_is_offered_no_tools(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL["/chat/completions"]]))
    prediction = {"type": "content", "content": "def f():\n    return 1\n"}
    status, _, got = await _post(proxy, "/chat/completions", dict(
        MEMORY_CALLS["/chat/completions"][0], prediction=prediction))
    assert (status, got) == (200, FINAL["/chat/completions"])
    sent = upstream.received[0]["json"]
    assert sent["prediction"] == prediction and "tools" not in sent


# -- 72: Responses custom tool call beside a memory call ----------------------------------------
# Reported (kind 63 on Responses): ``custom_tool_call`` items (Codex's ``apply_patch``) read
# as function calls, or dropped, by gateways. Beside a hidden memory call in one round, the
# client must get its call alone, and the memory call must go back with its next turn.
def _resp_events(items: list[dict[str, Any]]) -> bytes:
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    out, seq = [ev("response.created", {"type": "response.created", "sequence_number": 0,
                                        "response": resp})], 1
    for i, item in enumerate(items):
        out.append(ev("response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": seq,
            "output_index": i, "item": dict(item, status="in_progress")}))
        out.append(ev("response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": seq + 1,
            "output_index": i, "item": item}))
        seq += 2
    out.append(ev("response.completed", {"type": "response.completed", "sequence_number": seq,
                                         "response": dict(resp, status="completed",
                                                          output=items, usage={
                                                              "input_tokens": 3,
                                                              "output_tokens": 4,
                                                              "total_tokens": 7})}))
    return b"".join(out)


CUSTOM_ITEM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c",
               "name": "apply_patch", "input": "*** Begin Patch", "status": "completed"}
MEMORY_ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_m",
               "name": "memory_grep", "arguments": "{\"query\": \"x\"}", "status": "completed"}


COMPUTER_ITEM = {"type": "computer_call", "id": "cu_1", "call_id": "call_c",
                 "action": {"type": "screenshot"}, "pending_safety_checks": [],
                 "status": "completed"}
CLIENT_ITEMS = {"custom_tool_call": (CUSTOM_ITEM, {"type": "custom", "name": "apply_patch"}),
                "computer_call": (COMPUTER_ITEM, {"type": "computer_use_preview",
                                                  "display_width": 800,
                                                  "display_height": 600,
                                                  "environment": "browser"})}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", sorted(CLIENT_ITEMS))
@pytest.mark.parametrize("memory_first", [True, False])
async def test_a_responses_client_call_beside_a_memory_call_is_shown_and_goes_back(
        gated: Gated, memory_first: bool, kind: str, stream: bool) -> None:
    upstream, proxy = gated
    item, tool = CLIENT_ITEMS[kind]
    items = [MEMORY_ITEM, item] if memory_first else [item, MEMORY_ITEM]
    if stream:
        upstream.answers.extend([Scripted([_resp_events(items)]),
                                 Scripted([FINAL["/responses"]])])
    else:
        whole = dict(orjson.loads(PLAIN_CALLS["/responses"]), output=items)
        upstream.answers.extend([Scripted([orjson.dumps(whole)], headers=JSON),
                                 Scripted([b"{}"], headers=JSON)])
    body = {"model": "m", "input": "hello there", "stream": stream, "store": False,
            "tools": [tool]}
    status, _, got = await _post(proxy, "/responses", body)
    assert status == 200 and b"memory_grep" not in got
    done = ([e for e in _events(got) if e["type"] == "response.completed"][0]["response"]
            if stream else orjson.loads(got))
    assert [o["type"] for o in done["output"]] == [kind]
    assert len(upstream.received) == 1, "the round ended with the client's call"
    upstream.answers.append(Scripted([FINAL["/responses"]]))
    turn = [{"role": "user", "content": "hello there"}, item,
            {"type": kind + "_output", "call_id": "call_c", "output": "ok"}]
    status, _, _ = await _post(proxy, "/responses", dict(body, input=turn, stream=True))
    sent = upstream.received[1]["json"]["input"]
    kinds = [i.get("type") for i in sent if isinstance(i, dict)]
    assert kind in kinds and "function_call" in kinds, kinds
    assert "function_call_output" in kinds and kind + "_output" in kinds


# -- 73: usage on the finish chunk ---------------------------------------------------------------
# Reported: Gemini's and vLLM's OpenAI-compatible streams put ``usage`` on the chunk that
# carries ``finish_reason`` (no separate empty-choices chunk); relays that look for usage
# only on a chunk without choices report none. After a hidden round it must be summed.
async def test_usage_on_the_finish_chunk_after_a_hidden_round_is_summed(gated: Gated) -> None:
    upstream, proxy = gated
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    first = b"".join([
        chunk({"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}),
        data({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
              "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
              "usage": usage}), b"data: [DONE]\n\n"])
    final = b"".join([
        chunk({"role": "assistant", "content": "done"}),
        data({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
              "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
              "usage": usage}), b"data: [DONE]\n\n"])
    upstream.answers.extend([Scripted([first]), Scripted([final])])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True,
            stream_options={"include_usage": True})]
    usages = [c.usage for c in got if c.usage is not None]
    assert [u.total_tokens for u in usages] == [24]
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "done"


# -- 74: one response id from created to completed --------------------------------------------
# Reported: relays stitching several upstream responses into one stream show one id in
# ``response.created`` and another in ``response.completed``; clients (Codex) keying their
# state on the id then lose the turn or chain the next one to the wrong response.
async def test_a_responses_stream_keeps_one_id_after_a_hidden_round(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([Scripted([MEMORY_CALLS["/responses"][1]]),
                             Scripted([FINAL["/responses"]])])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        events = [e async for e in await client.responses.create(
            model="m", input="hello there", stream=True)]
    ids = {e.response.id for e in events if hasattr(e, "response")}
    assert len(ids) == 1, ids
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "done"


# -- 75: compaction items and the compact endpoint -----------------------------------------------
# Reported: gateways that validate Responses input items against the types they know
# refuse Codex's ``compaction`` items (encrypted summaries of earlier turns), and route
# ``POST /v1/responses/compact`` as a new response. Items go as sent; the endpoint passes.
COMPACTION = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB" + "x" * 64}


async def test_compaction_items_and_the_compact_endpoint_go_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL["/responses"]]))
    items = [COMPACTION, {"role": "user", "content": "and now?"}]
    status, _, got = await _post(proxy, "/responses", {"model": "m", "input": items,
                                                       "stream": True, "store": False})
    assert (status, got) == (200, FINAL["/responses"])
    assert orjson.dumps(COMPACTION) in upstream.received[0]["raw"]
    compacted = orjson.dumps({"id": "resp_c", "object": "response.compaction",
                              "output": [COMPACTION], "usage": {"input_tokens": 9}})
    upstream.answers.append(Scripted([compacted], headers=JSON))
    body = {"model": "m", "input": [{"role": "user", "content": "hello there"}]}
    status, _, got = await _post(proxy, "/responses/compact", body)
    assert (status, got) == (200, compacted)
    assert upstream.received[1]["path"] == "/v1/responses/compact"
    assert upstream.received[1]["json"] == body


# -- 76: loose chunk shapes of OpenAI-compatible servers -----------------------------------------
# Reported: servers writing ``"delta": null`` on the finish chunk, ``finish_reason: ""`` on
# every chunk before the last, or a choice without ``index``; parsers that index or compare
# strictly then crash or end the stream early. A memory call so written must still be run.
def _loose(call: dict[str, Any]) -> bytes:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return b"".join([
        data(dict(base, choices=[{"delta": {"role": "assistant", "tool_calls": [call]},
                                  "finish_reason": ""}])),
        data(dict(base, choices=[{"index": 0, "delta": None, "finish_reason": "tool_calls"}])),
        b"data: [DONE]\n\n"])


async def test_a_memory_call_in_loose_chunks_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated
    call = {"index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}
    upstream.answers.extend(_chat_call_then(FINAL["/chat/completions"]))
    upstream.answers[0] = Scripted([_loose(call)])
    status, _, got = await _post(proxy, "/chat/completions", MEMORY_CALLS["/chat/completions"][0])
    assert status == 200 and b"memory_grep" not in got and b"done" in got
    assert len(upstream.received) == 2


# -- 77: a ping before message_start ----------------------------------------------------------------
# Reported: Anthropic-compatible relays (and Bedrock bridges) that send ``ping`` before
# ``message_start``; parsers expecting ``message_start`` first drop the stream.
async def test_a_ping_before_message_start_still_hides_the_memory_call(gated: Gated) -> None:
    upstream, proxy = gated
    ping = ev("ping", {"type": "ping"})
    upstream.answers.extend([Scripted([ping + MEMORY_CALLS["/messages"][1]]),
                             Scripted([ping + FINAL["/messages"]])])
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                        max_retries=0) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            message = await s.get_final_message()
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "done" and len(upstream.received) == 2


# -- review rev8: only a function call can be a memory call -------------------------------------
# Since every call the client answers ends a round (72), an MCP approval request or any
# other non-function item carrying a ``name`` reaches the loop; a remote MCP server's tool
# may be called ``memory_grep`` (the proxy cannot rename what it never sees). Only a
# ``function_call`` of ours is run and hidden; the approval goes to the client.
APPROVAL_ITEM = {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "notes",
                 "name": "memory_grep", "arguments": "{\"query\": \"x\"}"}
MCP_TOOL = {"type": "mcp", "server_label": "notes", "server_url": "https://mcp.example/sse",
            "require_approval": "always"}


@pytest.mark.parametrize("stream", [True, False])
async def test_an_mcp_approval_named_like_a_memory_tool_reaches_the_client(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        upstream.answers.append(Scripted([_resp_events([APPROVAL_ITEM])]))
    else:
        whole = dict(orjson.loads(PLAIN_CALLS["/responses"]), output=[APPROVAL_ITEM])
        upstream.answers.append(Scripted([orjson.dumps(whole)], headers=JSON))
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        if stream:
            events = [e async for e in await client.responses.create(
                model="m", input="hello there", stream=True, tools=[MCP_TOOL])]
            done = events[-1].response
        else:
            done = await client.responses.create(model="m", input="hello there",
                                                 tools=[MCP_TOOL])
    assert [(o.type, o.name) for o in done.output] == [("mcp_approval_request", "memory_grep")]
    assert len(upstream.received) == 1, "no memory tool ran for the client's approval"


@pytest.mark.parametrize("count, offered", [(127, 1), (129, 0)])
@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
async def test_a_client_memory_search_near_the_limit_keeps_names_unique(
        gated: Gated, path: str, count: int, offered: int) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([FINAL[path]]))
    mine = _many_tools(path, count)
    if path == "/responses":
        mine[0] = dict(mine[0], name="memory_grep")
    else:
        mine[0] = {"type": "function", "function": dict(mine[0]["function"], name="memory_grep")}
    status, _, got = await _post(proxy, path, dict(MEMORY_CALLS[path][0], tools=mine))
    assert (status, got) == (200, FINAL[path])
    sent = upstream.received[0]["json"]["tools"]
    names = [t.get("name") or t["function"]["name"] for t in sent]
    assert sent[:count] == mine and len(sent) == count + offered
    assert len(set(names)) == len(names), names
