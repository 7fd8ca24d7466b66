"""Replays of failure kinds reported against other LLM proxies, rows 87 on of
docs/evaluation/wire_replays.md, and two leftovers of rows 73 and 75 (a Codex
compaction request, vLLM's usage on every chunk). Same setting as
tests/test_wire_replays.py: the proxy on its memory path (the memory tools offered),
a loopback upstream writing each API's real bytes, and what the client saw compared
with what the upstream sent (or what the upstream got with what the client sent)."""

from __future__ import annotations

from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY, sql_read
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    JSON,
    SDK_USER,
    Gated,
    Scripted,
    chunk,
    data,
    ev,
    events,
    gated,  # noqa: F401 - the fixture
    message_start,
    post,
)


# -- 75 (left): a compaction_trigger request goes as the client sent it ----------------------
# Codex's remote compaction v2 ends a ``POST /v1/responses`` input with a
# ``{"type": "compaction_trigger"}`` item and reads one ``compaction`` output item back: an
# encrypted summary of everything the request carried. A memory block or memory tools
# sent with it would be summarised into the agent's next context.
COMPACTION_ITEM = {"type": "compaction", "id": "cmp_9",
                   "encrypted_content": "gAAAAB" + "y" * 80}
CODEX_TOOL = {"type": "function", "name": "shell", "description": "Run a command",
              "strict": False, "parameters": {"type": "object", "properties": {
                  "command": {"type": "array", "items": {"type": "string"}}}}}
CODEX_COMPACT = {
    "model": "gpt-5-codex", "instructions": "You are Codex.",
    "input": [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Port the billing module to Rust."}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Started: cargo new billing."}]},
        {"type": "function_call", "call_id": "call_1", "name": "shell",
         "arguments": "{\"command\":[\"ls\"]}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "Cargo.toml src"},
        {"type": "compaction_trigger"}],
    "tools": [CODEX_TOOL], "tool_choice": "auto", "parallel_tool_calls": False,
    "reasoning": {"effort": "medium", "summary": "auto"}, "store": False, "stream": True,
    "include": ["reasoning.encrypted_content"], "prompt_cache_key": "conv-1"}


def _compaction_stream() -> bytes:
    base = {"id": "resp_k", "object": "response", "created_at": 1, "model": "gpt-5-codex",
            "output": []}
    done = dict(base, status="completed", output=[COMPACTION_ITEM],
                usage={"input_tokens": 900, "output_tokens": 40, "total_tokens": 940})
    return b"".join(
        b"event: " + str(e["type"]).encode() + b"\n" + data(e) for e in [
            {"type": "response.created", "sequence_number": 0,
             "response": dict(base, status="in_progress")},
            {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
             "item": COMPACTION_ITEM},
            {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0,
             "item": COMPACTION_ITEM},
            {"type": "response.completed", "sequence_number": 3, "response": done}])


async def test_a_compaction_request_goes_upstream_as_the_client_sent_it(gated: Gated) -> None:
    upstream, proxy = gated
    answer = _compaction_stream()
    upstream.answers.append(Scripted([answer]))
    sent = orjson.dumps(CODEX_COMPACT)
    status, headers, got = await post(proxy, "/responses", CODEX_COMPACT)
    assert (status, got) == (200, answer)
    assert upstream.received[0]["raw"] == sent  # no block, no memory tools: its bytes
    assert headers["x-lcm-side-request"] == "compaction-trigger"
    await proxy.settle()
    stored = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT raw_json FROM messages WHERE msg_role='assistant'").fetchall()])
    assert any("cmp_9" in (r or "") for r in stored), stored  # the answer is evidence


# -- 73 (left): vLLM's continuous usage on every chunk -------------------------------------------
# ``stream_options.continuous_usage_stats`` (vLLM, SGLang) puts the round's running usage on
# every chunk. After a hidden round, the answering round's chunks must count it too, or the
# client's running totals drop, then jump at the finish chunk (summed since row 73).
def _vllm_chunk(delta: dict[str, Any] | None, completion: int, prompt: int,
                finish: str | None = None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return data({"id": "cmpl-v", "object": "chat.completion.chunk", "created": 1,
                 "model": "m", "choices": choices, "usage": {
                     "prompt_tokens": prompt, "completion_tokens": completion,
                     "total_tokens": prompt + completion}})


def _vllm_round(prompt: int, pieces: list[dict[str, Any]], finish: str) -> bytes:
    out = [_vllm_chunk({"role": "assistant", "content": ""}, 0, prompt)]
    out += [_vllm_chunk(p, i + 1, prompt) for i, p in enumerate(pieces)]
    n = len(pieces)
    return b"".join([*out, _vllm_chunk({}, n, prompt, finish), _vllm_chunk(None, n, prompt),
                     b"data: [DONE]\n\n"])


@pytest.mark.parametrize("include_usage", [True, False])
async def test_continuous_usage_after_a_hidden_round_counts_every_round(
        gated: Gated, include_usage: bool) -> None:
    upstream, proxy = gated
    call = {"index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}
    hidden = _vllm_round(10, [{"tool_calls": [call]}], "tool_calls")  # 10 + 1
    answer = _vllm_round(30, [{"content": "do"}, {"content": "ne"}], "stop")  # 30 + 2
    upstream.answers.extend([Scripted([hidden]), Scripted([answer])])
    options: Any = {"include_usage": include_usage, "continuous_usage_stats": True}
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True, stream_options=options)]
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "done"
    seen = [(c.usage.prompt_tokens, c.usage.completion_tokens, c.usage.total_tokens)
            for c in got if c.usage is not None]
    # every chunk the client sees belongs to the answering round: 10 + 30 prompt tokens,
    # 1 + its own running completion count; the totals never go down
    assert seen[:3] == [(40, 1, 41), (40, 2, 42), (40, 3, 43)], seen
    assert set(seen[3:]) == {(40, 3, 43)} and len(seen) == (5 if include_usage else 4), seen
    assert len(upstream.received) == 2


# -- 87: a provider's own field on a streamed tool call --------------------------------------------
# Reported: Gemini's OpenAI-compatible endpoint puts the call's thought signature on the
# tool call (``extra_content.google.thought_signature``); a relay that rebuilds the call
# from its known fields sends it back without, and Gemini answers 400 "Function call is
# missing a thought_signature in functionCall parts".
MEMORY_CALL = {"index": 0, "id": "call_m", "type": "function",
               "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}
SIGNED = dict(MEMORY_CALL, extra_content={"google": {"thought_signature": "c2lnLTE="}})


def _chat_round(*deltas: dict[str, Any]) -> bytes:
    return b"".join([*(chunk(d) for d in deltas), chunk({}, "tool_calls"), b"data: [DONE]\n\n"])


async def test_a_hidden_calls_thought_signature_goes_back_with_it(gated: Gated) -> None:
    upstream, proxy = gated
    first = _chat_round({"role": "assistant", "tool_calls": [SIGNED]})
    upstream.answers.extend([Scripted([first]), Scripted([FINAL["/chat/completions"]])])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True)]
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "done"
    sent = upstream.received[1]["json"]["messages"]
    back = [c for m in sent for c in m.get("tool_calls") or []]
    assert back[0]["id"] == "call_m"
    assert back[0]["extra_content"] == SIGNED["extra_content"]


# -- 88: an empty text block before a tool_use -------------------------------------------------
# Reported: Anthropic refuses a text block that is empty or whitespace ("text content blocks
# must be non-empty" / "must contain non-whitespace text"); relays and OpenAI-to-Anthropic
# bridges stream one before a ``tool_use`` (or make one of ``content: ""``) and send it back.
def _empty_text_then_call(text: str) -> bytes:
    return b"".join([
        message_start("msg_1"),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}}),
        *([ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": text}})]
          if text else []),
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}}),
        ev("content_block_delta", {"type": "content_block_delta", "index": 1,
                                   "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ev("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}}),
        ev("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])


@pytest.mark.parametrize("text", ["", " \n"])
async def test_an_empty_text_block_does_not_go_back_with_a_hidden_call(
        gated: Gated, text: str) -> None:
    upstream, proxy = gated
    upstream.answers.extend([Scripted([_empty_text_then_call(text)]),
                             Scripted([FINAL["/messages"]])])
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                        max_retries=0) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            message = await s.get_final_message()
    assert {b.type for b in message.content} == {"text"}  # the empty one is shown, as sent
    assert message.content[-1].text == "done"  # type: ignore[union-attr]
    turn = upstream.received[1]["json"]["messages"][-2]
    assert turn["role"] == "assistant"
    assert turn["content"] == [{"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
                                "input": {"query": "x"}}]


# -- 89, 90: reasoning a thinking model wants back with its tool calls ----------------------------
# Reported: DeepSeek's thinking mode answers 400 "The `reasoning_content` in the thinking
# mode must be passed back" / "Missing `reasoning_content` field" when a tool-call turn
# goes back without it; OpenRouter's Gemini and Claude want ``reasoning_details`` back.
DETAILS = [{"type": "reasoning.encrypted", "data": "ZW5jLTE=", "id": "r1",
            "format": "google-gemini-v1", "index": 0}]


@pytest.mark.parametrize("field,value", [("reasoning_content", "look it up"),
                                         ("reasoning_details", DETAILS)])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_hidden_calls_reasoning_goes_back_with_it(
        gated: Gated, stream: bool, field: str, value: Any) -> None:
    upstream, proxy = gated
    if stream:
        first = _chat_round({"role": "assistant", field: value}, {"tool_calls": [MEMORY_CALL]})
        upstream.answers.extend([Scripted([first]), Scripted([FINAL["/chat/completions"]])])
    else:
        call = {k: v for k, v in MEMORY_CALL.items() if k != "index"}
        msg = {"role": "assistant", "content": "", field: value, "tool_calls": [call]}
        upstream.answers.extend([Scripted([orjson.dumps({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}]})],
            headers=JSON), Scripted([orjson.dumps({
                "id": "c2", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "done"}}]})], headers=JSON)])
    status, _, got = await post(proxy, "/chat/completions",
                                {"model": "m", "messages": SDK_USER, "stream": stream})
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    turn = [m for m in upstream.received[1]["json"]["messages"] if m.get("tool_calls")][0]
    assert turn[field] == value


# -- 91: header values outside ASCII, both ways ---------------------------------------------------
# Reported: proxies that encode header values as latin-1 (or ASCII) answer 500 to a client
# sending a UTF-8 value (OpenRouter's ``X-Title`` in Chinese) or to an upstream answering
# with one (a model name in a response header).
async def test_header_values_outside_ascii_cross_both_ways(gated: Gated) -> None:
    upstream, proxy = gated
    title = "Café 中文".encode()
    answer = Scripted([FINAL["/chat/completions"]],
                      headers={"Content-Type": "text/event-stream", "x-model-name": "模型"})
    upstream.answers.append(answer)
    async with aiohttp.ClientSession() as session:
        async with session.post(
                proxy.base_url + "/chat/completions",
                data=orjson.dumps({"model": "m", "messages": SDK_USER, "stream": True}),
                headers={**HEADERS, "X-Title": title.decode("latin-1")}) as resp:
            body = await resp.read()
            raw_headers = dict(resp.raw_headers)
    assert resp.status == 200 and body == FINAL["/chat/completions"]
    assert raw_headers[b"x-model-name"] == "模型".encode()
    sent = upstream.received[0]["headers"]["X-Title"]
    assert sent.encode("utf-8", "surrogateescape") == title or sent.encode("latin-1") == title


# -- 92: chunks without id or created --------------------------------------------------------------
# Reported: OpenAI-compatible servers (OpenVINO Model Server, TGI's empty id) stream chunks
# without ``id``/``created``; strict clients (openai-java's required fields, async-openai)
# refuse a chunk whose ``id`` is missing or null. A relay must not add ``"id": null``.
def _bare(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return data({"object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


async def test_chunks_without_ids_get_no_null_ids_after_a_hidden_round(gated: Gated) -> None:
    upstream, proxy = gated
    first = b"".join([_bare({"role": "assistant", "tool_calls": [MEMORY_CALL]}),
                      _bare({}, "tool_calls"), b"data: [DONE]\n\n"])
    final = b"".join([_bare({"role": "assistant", "content": "done"}), _bare({}, "stop"),
                      b"data: [DONE]\n\n"])
    upstream.answers.extend([Scripted([first]), Scripted([final])])
    status, _, got = await post(proxy, "/chat/completions",
                                {"model": "m", "messages": SDK_USER, "stream": True})
    chunks = events(got)
    assert status == 200 and [c["choices"][0]["finish_reason"] for c in chunks] == [None, "stop"]
    assert all("id" not in c and "created" not in c for c in chunks), chunks


# -- 93: a second [DONE] -----------------------------------------------------------------------
# Reported: relays (one-api's OpenAI channel, Ray Serve) end a stream with ``data: [DONE]``
# twice; a proxy that stops at the first and then reads the second as the next round's
# start, or relays a hidden round's marker, cuts the client's answer.
async def test_a_doubled_done_marker_neither_ends_nor_splits_the_answer(gated: Gated) -> None:
    upstream, proxy = gated
    first = _chat_round({"role": "assistant", "tool_calls": [MEMORY_CALL]}) + b"data: [DONE]\n\n"
    final = FINAL["/chat/completions"] + b"data: [DONE]\n\n"
    upstream.answers.extend([Scripted([first]), Scripted([final])])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True)]
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "done"
    assert got[-1].choices[0].finish_reason == "stop" and len(upstream.received) == 2
