"""Replays of failure kinds, rows 167 on of docs/evaluation/wire_replays.md: Unicode
line separators inside SSE data, OpenRouter's in-band error chunk, Mistral's content
chunk lists, gpt-oss's raw reasoning text, Anthropic's compaction blocks, finish
reasons written after every chunk or as the legacy ``function_call``, legacy
``functions`` streams, tool-call indexes from 1, Kimi's native call ids, a
Responses message item done without its content, ``X-Accel-Buffering``; and two
leftovers of rows 159 and 162 (a memory call whose input does not parse, an ``id:``
field split across writes). The proxy on its memory path (the memory tools offered),
a loopback upstream writing each API's real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest

from proxy.flow.client import event_id_seen
from tests.conftest import TEST_KEY
from tests.replay_helpers import (
    FINAL,
    MEMORY_CALLS,
    USER,
    Gated,
    Scripted,
    block_event,
    chunk,
    data,
    ev,
    gated,  # noqa: F401 - the fixture
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


def _memory_call(args: str = _ARGS, **fields: Any) -> dict[str, Any]:
    return {"index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": args}, **fields}


def _memory_round(call: dict[str, Any] | None = None, finish: str = "tool_calls"
                  ) -> Scripted:
    return Scripted([chunk({"role": "assistant", "content": None,
                            "tool_calls": [call or _memory_call()]}),
                     chunk({}, finish), _DONE])


def _chat_text(shown: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in shown
                   if c.get("choices") and isinstance(c["choices"][0]["delta"].get("content"),
                                                      str))


def _sent_calls(upstream: Any, n: int = 1) -> list[dict[str, Any]]:
    """The tool calls of the assistant turn the proxy sent on in request ``n``."""
    sent = upstream.received[n]["json"]["messages"]
    calls: list[dict[str, Any]] = next(m for m in sent if m.get("tool_calls"))["tool_calls"]
    return calls


def _messages_answer(text: str, msg_id: str = "msg_2") -> bytes:
    return b"".join([
        message_start(msg_id),
        block_event("content_block_start", 0, content_block={"type": "text", "text": ""}),
        block_event("content_block_delta", 0, delta={"type": "text_delta", "text": text}),
        block_event("content_block_stop", 0),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
        ev("message_stop", {"type": "message_stop"})])


def _messages_memory_round(partial_json: str, before: list[bytes] | None = None,
                           index: int = 0) -> bytes:
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    return b"".join([
        message_start("msg_1"), *(before or []),
        block_event("content_block_start", index, content_block=use),
        block_event("content_block_delta", index, delta={
            "type": "input_json_delta", "partial_json": partial_json}),
        block_event("content_block_stop", index),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])


# -- 167: Unicode line separators inside an event's JSON ---------------------------------------
# JSON leaves U+2028, U+2029 and U+0085 unescaped inside strings; SSE ends lines at CR
# and LF only, but parsers built on ``str.splitlines()`` (or httpx's ``iter_lines``)
# split a ``data:`` line there and fail its JSON, losing the event
# (Soju06/codex-lb#1010, modelscope/evalscope#1642). Here each API's hidden round has
# such characters in the memory call's arguments and the answer in its text.
_SEPARATED = "build\u2028flag\u2029now\x85ok"


async def test_unicode_line_separators_in_chat_events_reach_the_sdk(gated: Gated) -> None:
    upstream, proxy = gated
    args = orjson.dumps({"query": _SEPARATED}).decode()
    assert "\u2028" in args, "written raw, as JSON allows"
    upstream.answers.extend([
        _memory_round(_memory_call(args)),
        Scripted([chunk({"role": "assistant", "content": _SEPARATED}),
                  chunk({}, "stop"), _DONE])])
    async with _openai(proxy) as client:
        async with client.chat.completions.stream(model="m", messages=USER) as s:
            final = await s.get_final_completion()
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.choices[0].message.content == _SEPARATED
    assert orjson.loads(_sent_calls(upstream)[0]["function"]["arguments"]) == {
        "query": _SEPARATED}


async def test_unicode_line_separators_in_messages_events_reach_the_sdk(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_messages_memory_round(orjson.dumps({"query": _SEPARATED}).decode())]),
        Scripted([_messages_answer(_SEPARATED)])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [b.type for b in final.content] == ["text"]
    assert final.content[0].text == _SEPARATED  # type: ignore[union-attr]
    turns = upstream.received[1]["json"]["messages"]
    assert [b["input"] for b in turns[-2]["content"] if b["type"] == "tool_use"] == [
        {"query": _SEPARATED}]


async def test_unicode_line_separators_in_responses_events_reach_the_sdk(
        gated: Gated) -> None:
    upstream, proxy = gated
    call = dict(MEMORY_ITEM, arguments=orjson.dumps({"query": _SEPARATED}).decode())
    item = dict(ANSWER_ITEM, content=[{"type": "output_text", "text": _SEPARATED,
                                       "annotations": []}])
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(call, [])])]),
        Scripted([_resp_stream("resp_2", [(item, [("response.output_text.delta", {
            "content_index": 0, "delta": _SEPARATED})])])])])
    async with _openai(proxy) as client:
        stream = await client.responses.create(model="m", input="hello there", stream=True)
        shown = [e async for e in stream]
    assert len(upstream.received) == 2, "the memory call was run"
    assert [e.delta for e in shown if e.type == "response.output_text.delta"] == [_SEPARATED]
    assert shown[-1].type == "response.completed"
    assert shown[-1].response.output_text == _SEPARATED  # type: ignore[union-attr]
    sent = upstream.received[1]["json"]
    calls = [i for i in sent.get("input") or [] if i.get("type") == "function_call"]
    assert [orjson.loads(c["arguments"]) for c in calls] == [{"query": _SEPARATED}]


# -- 168: OpenRouter's in-band error chunk -----------------------------------------------------
# Once OpenRouter has sent a 200, an upstream failure arrives as a chunk with a
# top-level ``error`` and ``finish_reason: "error"``; readers that look at ``choices``
# only took it for a finish and showed a truncated answer as a success
# (damianvtran/local-operator#223, diegosouzapw/OmniRoute#8210). Here it ends the round
# after a hidden one: the openai SDK must raise with the upstream's message.
_ERROR_CHUNK = data({"id": "gen-2", "object": "chat.completion.chunk", "created": 1,
                     "model": "m", "provider": "P",
                     "error": {"code": 502, "message": "Provider returned error",
                               "metadata": {"error_type": "provider_unavailable"}},
                     "choices": [{"index": 0, "delta": {"content": ""},
                                  "finish_reason": "error"}]})


async def test_an_in_band_error_chunk_after_a_hidden_round_reaches_the_sdk(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        _memory_round(),
        Scripted([chunk({"role": "assistant", "content": "par"}), _ERROR_CHUNK])])
    seen = []
    async with _openai(proxy) as client:
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        with pytest.raises(openai.APIError, match="Provider returned error"):
            async for c in stream:
                seen.append(c.choices[0].delta.content if c.choices else None)
    assert len(upstream.received) == 2, "the memory call was run"
    assert "par" in seen


async def test_an_in_band_error_chunk_reaches_the_client_as_written(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        _memory_round(),
        Scripted([chunk({"role": "assistant", "content": "par"}), _ERROR_CHUNK])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2
    last = [e for e in _events(got) if e.get("error")]
    assert len(last) == 1 and last[0]["error"] == orjson.loads(_ERROR_CHUNK[6:])["error"]
    assert last[0]["choices"][0]["finish_reason"] == "error"


# -- 169: Mistral's content as a list of chunks ------------------------------------------------
# Mistral's reasoning models write ``content`` (and ``delta.content``) as a list of
# chunks, ``thinking`` then ``text``, where the schema other relays assume has a string;
# accumulators that join strings crashed or dropped the answer (symfony/ai#2422,
# comet-ml/opik#8376). Here a hidden round thinks in such a list before its memory call,
# streamed and whole: the call must be run and hidden, the turn sent back with the
# chunks as written, and the answer reach the client.
_THINK = [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me look."}]}]


async def test_a_hidden_round_with_list_content_streamed(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([chunk({"role": "assistant", "content": _THINK}),
                  chunk({"tool_calls": [_memory_call()]}), chunk({}, "tool_calls"), _DONE]),
        Scripted([chunk({"role": "assistant", "content": _THINK}),
                  chunk({"content": "done"}), chunk({}, "stop"), _DONE])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert b"memory_grep" not in got and _chat_text(shown) == "done"
    assert [c["choices"][0]["delta"]["content"] for c in shown if c.get("choices")
            and isinstance(c["choices"][0]["delta"].get("content"), list)] == [_THINK] * 2
    turn = next(m for m in upstream.received[1]["json"]["messages"] if m.get("tool_calls"))
    assert turn["content"] == _THINK, turn


async def test_a_hidden_round_with_list_content_whole(gated: Gated) -> None:
    upstream, proxy = gated
    call = dict(_memory_call())
    call.pop("index")

    def whole(message: dict[str, Any], finish: str) -> bytes:
        return orjson.dumps({"id": "c", "object": "chat.completion", "created": 1,
                             "model": "m", "choices": [{"index": 0, "message": message,
                                                        "finish_reason": finish}]})
    answer = [*_THINK, {"type": "text", "text": "done"}]
    json_headers = {"Content-Type": "application/json"}
    upstream.answers.extend([
        Scripted([whole({"role": "assistant", "content": _THINK, "tool_calls": [call]},
                        "tool_calls")], headers=json_headers),
        Scripted([whole({"role": "assistant", "content": answer}, "stop")],
                 headers=json_headers)])
    status, _, got = await post(proxy, "/chat/completions", {"model": "m", "messages": USER})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    message = orjson.loads(got)["choices"][0]["message"]
    assert message["content"] == answer and not message.get("tool_calls")
    turn = next(m for m in upstream.received[1]["json"]["messages"] if m.get("tool_calls"))
    assert turn["content"] == _THINK, turn


# -- 170: gpt-oss's raw reasoning text (``reasoning_text``) ------------------------------------
# gpt-oss (and DeepSeek's Responses endpoint) stream their reasoning as a ``reasoning``
# item whose ``content`` holds ``reasoning_text`` parts, with
# ``response.reasoning_text.delta`` / ``.done`` events; accumulators that know only
# summaries dropped it (openai/openai-dotnet#748, CherryHQ/cherry-studio#17789). Here a
# hidden round reasons so before its memory call: the reasoning goes back with the call
# (``store: false``), stays unseen by the client, and the answering round's reaches it.
_REASONING = {"type": "reasoning", "id": "rs_1", "summary": [],
              "content": [{"type": "reasoning_text", "text": "Look it up."}]}


def _reasoning_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [("response.reasoning_text.delta", {"content_index": 0, "delta": text}),
            ("response.reasoning_text.done", {"content_index": 0, "text": text})]


async def test_raw_reasoning_text_across_a_hidden_round(gated: Gated) -> None:
    upstream, proxy = gated
    answer_reasoning = dict(_REASONING, id="rs_2",
                            content=[{"type": "reasoning_text", "text": "Found it."}])
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(_REASONING, _reasoning_events("Look it up.")),
                                          (MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(answer_reasoning, _reasoning_events("Found it.")),
                                          (ANSWER_ITEM, [])])])])
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True, "store": False})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert b"memory_grep" not in got and b"Look it up." not in got
    assert [e["delta"] for e in shown if e["type"] == "response.reasoning_text.delta"] == [
        "Found it."]
    assert [o["type"] for o in shown[-1]["response"]["output"]] == ["reasoning", "message"]
    sent = upstream.received[1]["json"]["input"]
    kinds = [i.get("type") for i in sent]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"], kinds
    assert sent[-3]["content"] == _REASONING["content"]


# -- 171: Anthropic's compaction block ---------------------------------------------------------
# With server-side compaction on, a response opens with a ``compaction`` block streamed
# as a start whose ``content`` is null and one ``compaction_delta`` with the summary;
# collectors that know text, tool input and citation deltas left it null, and the
# summary the next request must carry was lost (NVIDIA/NeMo-Relay#1035,
# BerriAI/litellm#41456). Here a round compacts and then calls a memory tool: the turn
# the proxy sends on must carry the summary, and the client see the block.
async def test_a_compaction_block_before_a_memory_call_goes_back_whole(gated: Gated) -> None:
    upstream, proxy = gated
    summary = "<summary>The user asked about the build flag.</summary>"
    compaction = [
        block_event("content_block_start", 0, content_block={"type": "compaction",
                                                             "content": None}),
        block_event("content_block_delta", 0, delta={"type": "compaction_delta",
                                                      "content": summary}),
        block_event("content_block_stop", 0)]
    upstream.answers.extend([
        Scripted([_messages_memory_round(_ARGS, compaction, index=1)]),
        Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert b"memory_grep" not in got
    assert [e["content_block"]["type"] for e in shown if e["type"] == "content_block_start"
            ] == ["compaction", "text"]
    assert [e["delta"].get("content") for e in shown
            if e["type"] == "content_block_delta"][0] == summary
    turns = upstream.received[1]["json"]["messages"]
    assert turns[-2]["content"][0] == {"type": "compaction", "content": summary}
    assert turns[-2]["content"][1]["type"] == "tool_use"


# -- 172: a finish reason after every chunk ----------------------------------------------------
# Open WebUI in front of vLLM wrote an extra chunk with ``finish_reason: "stop"`` after
# every streamed chunk; readers that settle the tool calls at a finish reason ran each
# call with its first fragment only, ``{}`` (1jehuang/jcode#1326). Here a memory call's
# fragments are each followed by such a chunk: it must be run with its whole arguments
# and hidden, and the answer so written reach the client whole.
async def test_a_finish_after_every_chunk_neither_cuts_the_call_nor_the_answer(
        gated: Gated) -> None:
    upstream, proxy = gated
    stop = chunk({}, "stop")
    upstream.answers.extend([
        Scripted([chunk({"role": "assistant", "content": None,
                         "tool_calls": [_memory_call("{\"query\": ")]}), stop,
                  chunk({"tool_calls": [{"index": 0, "function": {
                      "arguments": "\"build flag\"}"}}]}), stop,
                  chunk({}, "tool_calls"), _DONE]),
        Scripted([chunk({"role": "assistant", "content": "do"}), stop,
                  chunk({"content": "ne"}), stop, _DONE])])
    async with _openai(proxy) as client:
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream
                        if c.choices])
    assert len(upstream.received) == 2, "the memory call was run"
    assert text == "done"
    assert orjson.loads(_sent_calls(upstream)[0]["function"]["arguments"]) == {
        "query": "build flag"}


# -- 173: ``finish_reason: "function_call"`` closing tool calls --------------------------------
# Gateways bridging older servers close a round of ``delta.tool_calls`` with the legacy
# ``finish_reason: "function_call"``; loops that recognise only ``tool_calls`` stopped
# there and showed the call as the answer (unslothai/unsloth#10362). Here a memory call
# so finished, streamed and whole: run and hidden.
@pytest.mark.parametrize("stream", [True, False])
async def test_a_memory_call_finished_as_function_call_is_run_and_hidden(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        upstream.answers.extend([_memory_round(finish="function_call"),
                                 Scripted([FINAL["/chat/completions"]])])
    else:
        call = dict(_memory_call())
        call.pop("index")
        json_headers = {"Content-Type": "application/json"}
        upstream.answers.extend([
            Scripted([orjson.dumps({"id": "c", "object": "chat.completion", "created": 1,
                                    "model": "m", "choices": [{"index": 0, "message": {
                                        "role": "assistant", "content": None,
                                        "tool_calls": [call]},
                                        "finish_reason": "function_call"}]})],
                     headers=json_headers),
            Scripted([orjson.dumps({"id": "c", "object": "chat.completion", "created": 1,
                                    "model": "m", "choices": [{"index": 0, "message": {
                                        "role": "assistant", "content": "done"},
                                        "finish_reason": "stop"}]})], headers=json_headers)])
    async with _openai(proxy) as client:
        if stream:
            s = await client.chat.completions.create(model="m", messages=USER, stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in s if c.choices])
        else:
            got = await client.chat.completions.create(model="m", messages=USER)
            assert not got.choices[0].message.tool_calls
            text = got.choices[0].message.content or ""
    assert len(upstream.received) == 2, "the memory call was run"
    assert text == "done"


# -- 174: legacy ``functions`` streamed as ``delta.function_call`` -----------------------------
# Clients on the deprecated ``functions`` parameter get ``delta.function_call``
# fragments; gateways that translate only ``tools`` errored on them or mixed ``tools``
# into the request, which the API refuses (run-llama/llama_index#18313). Here such a
# request: the upstream gets it without the memory tools, and the client the stream
# byte for byte.
async def test_a_legacy_functions_stream_passes_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    stream = b"".join([
        chunk({"role": "assistant", "content": None,
               "function_call": {"name": "get_weather", "arguments": ""}}),
        chunk({"function_call": {"arguments": "{\"city\": \"Paris\"}"}}),
        chunk({}, "function_call"), _DONE])
    upstream.answers.append(Scripted([stream]))
    functions = [{"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}]
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True, "functions": functions})
    assert status == 200 and got == stream
    sent = upstream.received[0]["json"]
    assert "tools" not in sent and sent["functions"] == functions


# -- 175: tool-call indexes from 1 -------------------------------------------------------------
# Bridges from Anthropic streams numbered a call by its content block, so a call after a
# text block came as ``index: 1`` (router-for-me/CLIProxyAPI#5229); accumulators that
# assume dense indexes from 0 left an empty phantom call at 0 (pipecat-ai/pipecat#5342).
# Here a memory call at index 1 after text, and then a client call at index 1 alone: the
# memory call run and hidden, no phantom call sent back, the client's call shown.
async def test_a_memory_call_at_index_one_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated
    client_call = {"index": 1, "id": "call_c", "type": "function",
                   "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
    upstream.answers.extend([
        Scripted([chunk({"role": "assistant", "content": "Checking. "}),
                  chunk({"tool_calls": [_memory_call(index=1)]}),
                  chunk({}, "tool_calls"), _DONE]),
        Scripted([chunk({"role": "assistant", "content": None, "tool_calls": [client_call]}),
                  chunk({}, "tool_calls"), _DONE])])
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True, "tools": tools})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and b"get_weather" in got
    calls = _sent_calls(upstream)
    assert [c["id"] for c in calls] == ["call_m"], calls
    assert orjson.loads(calls[0]["function"]["arguments"]) == {"query": "build flag"}


# -- 176: Kimi's native call ids ---------------------------------------------------------------
# Kimi K2 writes call ids as ``functions.<name>:<n>`` and must see them back verbatim;
# layers that normalise ids (``functions_Read_0``) or rename them made the model stop
# calling tools, or left the call unanswered (MoonshotAI/kimi-code#2503,
# router-for-me/CLIProxyAPI#3184). Here a memory call so named: its turn and its result
# go back with the id as written.
async def test_a_kimi_call_id_goes_back_verbatim(gated: Gated) -> None:
    upstream, proxy = gated
    kimi_id = "functions.memory_grep:0"
    upstream.answers.extend([_memory_round(_memory_call(id=kimi_id)),
                             Scripted([FINAL["/chat/completions"]])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert _chat_text(_events(got)) == "done"
    sent = upstream.received[1]["json"]["messages"]
    assert _sent_calls(upstream)[0]["id"] == kimi_id
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == kimi_id


# -- 177: a message item done without its content ----------------------------------------------
# Some Responses servers (Codex's backend in one release, translators) end a message
# item with ``output_item.done`` whose ``content`` is ``[]`` after its text streamed;
# finalisers that take the done item's content overwrote the text with nothing
# (can1357/oh-my-pi#5149, agentgateway/agentgateway#2281). Here after a hidden round,
# the upstream's own ``response.completed`` carrying the text: the client's terminal
# must still hold it.
async def test_a_message_done_without_content_keeps_the_streamed_text(
        gated: Gated) -> None:
    upstream, proxy = gated
    empty_done = dict(ANSWER_ITEM, content=[])
    answer = _resp_stream("resp_2", [(empty_done, [
        ("response.content_part.added", {"content_index": 0, "part": {
            "type": "output_text", "text": "", "annotations": []}}),
        ("response.output_text.delta", {"content_index": 0, "delta": "done"}),
        ("response.output_text.done", {"content_index": 0, "text": "done"}),
        ("response.content_part.done", {"content_index": 0, "part": {
            "type": "output_text", "text": "done", "annotations": []}})])])
    written = _events(answer)
    written[-1]["response"]["output"] = [ANSWER_ITEM]  # completed: the whole item
    answer = b"".join(ev(e["type"], e) for e in written)
    upstream.answers.extend([Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                             Scripted([answer])])
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there") as s:
            final = await s.get_final_response()
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.id == "resp_2" and final.output_text == "done"


# -- 178: ``X-Accel-Buffering`` on a stream ----------------------------------------------------
# nginx buffers a proxied answer unless told not to; servers add
# ``X-Accel-Buffering: no`` to their event streams for it, and relays that rebuild the
# headers dropped it, so streams behind nginx came in one burst
# (mostlygeek/llama-swap#236, ggml-org/llama.cpp#24774). Here the upstream's header
# after a hidden round, streamed on each API: it must reach the client.
@pytest.mark.parametrize("path", ["/chat/completions", "/messages", "/responses"])
async def test_x_accel_buffering_reaches_the_client_after_a_hidden_round(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, call = MEMORY_CALLS[path]
    sse = {"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
    upstream.answers.extend([Scripted([call], headers=sse),
                             Scripted([FINAL[path]], headers=sse)])
    status, headers, got = await post(proxy, path, body)
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert headers.get("X-Accel-Buffering") == "no"
    assert b"memory_grep" not in got


# -- 179: thinking in several bursts, sent back as one ThinkChunk ------------------------------
# Mistral streams a reasoning model's thinking as many ``delta.content`` chunk lists,
# sometimes with an empty ``content: ""`` delta between two bursts; a turn sent back
# with its thinking split in two chunks is refused ("Expected at most one leading
# ThinkChunk, got 2", earendil-works/pi#9674). Here a hidden round so streamed: the turn
# the proxy sends on leads with one thinking chunk holding the whole thought.
def _think(text: str) -> list[dict[str, Any]]:
    return [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]


async def test_thinking_bursts_of_a_hidden_round_go_back_as_one_chunk(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([chunk({"role": "assistant", "content": _think("Let me ")}),
                  chunk({"content": ""}), chunk({"content": _think("look.")}),
                  chunk({"tool_calls": [_memory_call()]}), chunk({}, "tool_calls"), _DONE]),
        Scripted([FINAL["/chat/completions"]])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert _chat_text(_events(got)) == "done"
    turn = next(m for m in upstream.received[1]["json"]["messages"] if m.get("tool_calls"))
    assert turn["content"] == _think("Let me look."), turn


# -- 180: text deltas after their item was closed ----------------------------------------------
# A Responses relay closed a message item (``output_text.done``, ``content_part.done``,
# ``output_item.done``) after its first delta and went on writing deltas; clients that
# finalise at ``.done`` kept the first piece only (diegosouzapw/OmniRoute#13693). The
# upstream's own ``response.completed`` still holds the whole text: after a hidden
# round, the client's terminal must hold it too, not the early-closed item.
async def test_deltas_after_an_item_closed_keep_the_terminals_text(gated: Gated) -> None:
    upstream, proxy = gated
    early = dict(ANSWER_ITEM, content=[{"type": "output_text", "text": "1",
                                        "annotations": []}])
    whole = dict(ANSWER_ITEM, content=[{"type": "output_text", "text": "1\n2",
                                        "annotations": []}])
    answer = _resp_stream("resp_2", [(early, [
        ("response.output_text.delta", {"content_index": 0, "delta": "1"}),
        ("response.output_text.done", {"content_index": 0, "text": "1"})])])
    written = _events(answer)
    late = dict(written[-3], type="response.output_text.delta", delta="\n2")
    late.pop("text")
    written.insert(-1, late)  # after the item's done event, before the terminal
    written[-1]["response"]["output"] = [whole]
    for n, e in enumerate(written):
        e["sequence_number"] = n
    upstream.answers.extend([Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                             Scripted([b"".join(ev(e["type"], e) for e in written)])])
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert [e["delta"] for e in shown if e["type"] == "response.output_text.delta"] == [
        "1", "\n2"]
    assert shown[-1]["type"] == "response.completed"
    assert shown[-1]["response"]["output"] == [whole]


# -- leftover of 162: an ``id:`` field split across writes -----------------------------------
# The heartbeat drops its blank line once the client was sent an ``id:`` field (row
# 162); the check looked for ``\nid:`` within one write (or a write starting with
# ``id:``), so a field whose first bytes ended one write (``…\n\ni`` then ``d: 7``)
# went unseen, and the blank-line heartbeat would break the openai SDK's decoder all
# the same. The proxy's memory path writes whole events, so the check is read here
# over every split of a stream's bytes into two writes, and byte by byte.
def _id_seen(writes: list[bytes]) -> bool:
    tail, seen = b"\n", False
    for w in writes:
        if not seen and w:
            seen, tail = event_id_seen(tail, w)
    return seen


def test_an_id_field_is_seen_however_the_writes_split_it() -> None:
    with_id = chunk({"role": "assistant", "content": "a"}) + b"id: 7\r\n" + chunk({})
    without = chunk({"role": "assistant", "content": "valid: id: x"}) + b": id: no\n\n"
    for stream, expected in ((with_id, True), (without, False)):
        for cut in range(len(stream) + 1):
            assert _id_seen([stream[:cut], stream[cut:]]) is expected, (stream, cut)
        assert _id_seen([stream[i:i + 1] for i in range(len(stream))]) is expected
    assert _id_seen([b"id: 1\n" + chunk({})]), "a stream may open with the field"


# -- leftover of 159: the parse error reported to the model ------------------------------------
# A memory call whose streamed input does not parse went back as ``input: {}`` and its
# result said ``query is required``: the model was told it left out an argument it had
# written. The result must name the parse error (the turn still goes back with an
# object ``input``, which the API requires).
async def test_an_unparsable_memory_call_is_told_its_arguments_do_not_parse(
        gated: Gated) -> None:
    upstream, proxy = gated
    broken = "{\"query\": build flag}"
    upstream.answers.extend([Scripted([_messages_memory_round(broken)]),
                             Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was answered"
    turns = upstream.received[1]["json"]["messages"]
    assert [b["input"] for b in turns[-2]["content"] if b["type"] == "tool_use"] == [{}]
    result = next(b for b in turns[-1]["content"] if b["type"] == "tool_result")
    text = result["content"] if isinstance(result["content"], str) else "".join(
        p.get("text", "") for p in result["content"])
    assert "not valid JSON" in text and "query is required" not in text, text
