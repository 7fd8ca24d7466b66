"""Replays of failure kinds, rows 137 on of docs/evaluation/wire_replays.md: null and
missing fields in streamed chunks and usage, an OpenAI-style end marker in an Anthropic
stream, tool results written as content parts, ids with slashes on pass-through paths,
Codex's empty terminal output, tool calls streamed in other servers' shapes (no index,
no type, the name split or late), a tool-call finish without a call. The
proxy on its memory path (the memory tools offered), a loopback upstream writing each
API's real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest
from yarl import URL

from tests.conftest import TEST_KEY, store_sql
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    JSON,
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
    messages_call_whole_in_start,
    post,
)
from tests.replay_helpers import events as _events
from tests.test_wire_replays_more5 import ANSWER_ITEM, MEMORY_ITEM, _resp_stream


def _anthropic(proxy: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                    max_retries=0)


def _openai(proxy: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url, max_retries=0)


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _piece(delta: dict[str, Any] | None, finish: str | None = None, *,
           usage: Any = None, choices: bool = True, **extra: Any) -> bytes:
    """One Chat chunk with ``"usage"`` always written (``null`` unless given), as OpenAI
    writes every chunk of a stream with ``include_usage``."""
    head: dict[str, Any] = {"id": "chatcmpl-u", "object": "chat.completion.chunk",
                            "created": 1, "model": "m", **extra}
    if choices:
        head["choices"] = [] if delta is None else [
            {"index": 0, "delta": delta, "finish_reason": finish}]
    return data({**head, "usage": usage})


_MEMORY_DELTA = {"role": "assistant", "content": None, "tool_calls": [{
    "index": 0, "id": "call_m", "type": "function",
    "function": {"name": "memory_grep", "arguments": "{\"query\": \"build flag\"}"}}]}


# -- 137: ``"usage": null`` on every chunk -------------------------------------------------------
# OpenAI writes ``"usage": null`` on every chunk of a stream asked with
# ``stream_options.include_usage`` and the counts only on the last, empty-choices chunk.
# Relays read the key's presence as usage (a zero record, the real one then ignored:
# router-for-me/CLIProxyAPI#3221, #2762). Here: after a hidden round the client must see
# ``null`` where the upstream wrote ``null`` and the two rounds' sum on the last chunk.
async def test_null_usage_on_every_chunk_stays_null_and_the_last_is_summed(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_piece(_MEMORY_DELTA), _piece({}, "tool_calls"),
                  _piece(None, usage=_usage(10, 5)), b"data: [DONE]\n\n"]),
        Scripted([_piece({"role": "assistant", "content": "do"}), _piece({"content": "ne"}),
                  _piece({}, "stop"), _piece(None, usage=_usage(20, 2)),
                  b"data: [DONE]\n\n"])])
    async with _openai(proxy) as client:
        async with client.chat.completions.stream(
                model="m", messages=USER, stream_options={"include_usage": True}) as s:
            seen = [e.chunk for e in [x async for x in s] if e.type == "chunk"]
            final = await s.get_final_completion()
    assert final.choices[0].message.content == "done"
    assert final.usage is not None and (final.usage.prompt_tokens,
                                        final.usage.completion_tokens) == (30, 7)
    assert [c.usage is None for c in seen] == [True, True, True, False], seen
    assert all(orjson.loads(r["raw"]).get("stream_options") == {"include_usage": True}
               for r in upstream.received)


# -- 138: chunks without a ``choices`` key -----------------------------------------------------
# Groq and others write keep-alive and usage frames as ``{"usage": …}`` with no ``choices``
# array at all (tashfeenahmed/freellmapi#156: ``chunk.choices[0]`` threw mid-stream, the
# request failed). Here such a frame in the hidden round and in the answering one.
async def test_chunks_without_choices_neither_break_nor_show_the_hidden_round(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_piece(None, choices=False), _piece(_MEMORY_DELTA),
                  _piece({}, "tool_calls"), _piece(None, usage=_usage(10, 5), choices=False),
                  b"data: [DONE]\n\n"]),
        Scripted([_piece(None, choices=False), _piece({"role": "assistant", "content": "done"}),
                  _piece({}, "stop"), _piece(None, usage=_usage(20, 2), choices=False),
                  b"data: [DONE]\n\n"])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True,
        "stream_options": {"include_usage": True}})
    assert status == 200 and len(upstream.received) == 2
    assert b"memory_grep" not in got and b"[DONE]" in got
    shown = _events(got)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in shown
                   if c.get("choices"))
    assert text == "done"
    usages = [c["usage"] for c in shown if c.get("usage")]
    assert usages[-1] == _usage(30, 7), usages


# -- 139: ``data: [DONE]`` after ``message_stop`` ------------------------------------------------
# OpenRouter's Anthropic-compatible endpoint appends the OpenAI end marker to a Messages
# stream (NVIDIA-NeMo/Switchyard#136: read as JSON, a finished answer turned into an
# in-band error). Here in the hidden round and in the answering one, through
# ``messages.stream()``.
async def test_an_openai_done_marker_after_message_stop_is_no_error(gated: Gated) -> None:
    upstream, proxy = gated
    done = b"data: [DONE]\n\n"
    upstream.answers.extend([Scripted([messages_call_whole_in_start(), done]),
                             Scripted([FINAL["/messages"], done])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            kinds = [e.type async for e in s]
            final = await s.get_final_message()
    assert len(upstream.received) == 2
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == "done"
    assert "error" not in kinds and kinds[-1] == "message_stop", kinds
    assert final.stop_reason == "end_turn"


# -- 140: a second ``message_start`` of the same message ------------------------------------------
# Gateways that duplicate the ``message_start`` frame (vercel/ai#18332, naming
# maximhq/bifrost#4556 and BerriAI/litellm#32479): counted twice, or the first round's
# tool call lost from the proxy's own reading.
async def test_a_repeated_message_start_still_hides_the_memory_call(gated: Gated) -> None:
    upstream, proxy = gated
    start = message_start("msg_1")
    upstream.answers.extend([
        Scripted([start + messages_call_whole_in_start()]),
        Scripted([message_start("msg_2") + FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == "done"
    assert final.usage.input_tokens == 10 and final.usage.output_tokens == 11, final.usage


# -- 141: tool results and assistant turns written as content parts -------------------------------
# OpenAI allows a ``tool`` message's ``content`` (and an assistant turn's beside its
# ``tool_calls``) as an array of text parts; agent frameworks write them so. Relays read
# only the string form and sent an empty result on (tingly-dev/tingly-box#1427,
# InsForge/InsForge#1788) or dropped the assistant's text (CommandCodeAI/command-code#807).
# The Responses analogue: a ``function_call_output`` whose ``output`` is a list of
# ``input_text`` parts. Here the parts must reach the upstream as sent and be kept as
# the evidence's text, so that memory search finds what the tool said.
FACT = "the staging cluster runs on port 7443"
SAID = "checking the cluster config first"
_CALL = {"id": "call_1", "type": "function",
         "function": {"name": "read_config", "arguments": "{}"}}
_CLIENT_TOOL = {"type": "function", "function": {
    "name": "read_config", "parameters": {"type": "object", "properties": {}}}}
PARTS: dict[str, tuple[dict[str, Any], bytes]] = {
    "/chat/completions": ({"model": "m", "tools": [_CLIENT_TOOL], "messages": [
        {"role": "user", "content": "what port does staging use?"},
        {"role": "assistant", "content": [{"type": "text", "text": SAID}],
         "tool_calls": [_CALL]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": [{"type": "text", "text": FACT}]}]},
        orjson.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                      "choices": [{"index": 0, "finish_reason": "stop", "message": {
                          "role": "assistant", "content": "7443"}}]})),
    "/responses": ({"model": "m", "tools": [{"type": "function", "name": "read_config",
                                             "parameters": {"type": "object"}}], "input": [
        {"role": "user", "content": "what port does staging use?"},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": SAID}]},
        {"type": "function_call", "call_id": "call_1", "name": "read_config",
         "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1",
         "output": [{"type": "input_text", "text": FACT}]}]},
        orjson.dumps({"id": "resp_p", "object": "response", "status": "completed",
                      "model": "m", "created_at": 1, "output": [{
                          "type": "message", "id": "m1", "status": "completed",
                          "role": "assistant", "content": [{
                              "type": "output_text", "text": "7443", "annotations": []}]}],
                      "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}})),
    "/messages": ({"model": "claude", "max_tokens": 50, "tools": [{
        "name": "read_config", "input_schema": {"type": "object"}}], "messages": [
        {"role": "user", "content": "what port does staging use?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": SAID},
            {"type": "tool_use", "id": "toolu_1", "name": "read_config", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": FACT}]}]}]},
        orjson.dumps({"id": "msg_p", "type": "message", "role": "assistant",
                      "model": "claude", "content": [{"type": "text", "text": "7443"}],
                      "stop_reason": "end_turn", "stop_sequence": None,
                      "usage": {"input_tokens": 3, "output_tokens": 1}})),
}


@pytest.mark.parametrize("path", sorted(PARTS))
async def test_tool_results_as_content_parts_are_kept_and_stored(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, answer = PARTS[path]
    upstream.answers.append(Scripted([answer], headers=JSON))
    status, _, _ = await post(proxy, path, body)
    assert status == 200
    await proxy.settle()
    sent = upstream.received[0]["raw"]
    assert orjson.dumps({"type": "text" if path != "/responses" else "input_text",
                         "text": FACT}) in sent
    texts = [r["text"] for r in store_sql(proxy.engine, "SELECT text FROM messages")]
    assert any(FACT in t for t in texts), texts
    assert any(SAID in t for t in texts), texts


# -- 142: ids with a slash on pass-through paths --------------------------------------------------
# ``GET /v1/models/{id}`` for ids such as ``mistralai/mistral-7b-instruct`` (OpenRouter
# style) or the same with the slash percent-encoded answered 404 by the gateway
# (BerriAI/litellm#37271), or the encoded slash decoded on the way.
@pytest.mark.parametrize("model", ["mistralai/mistral-7b-instruct",
                                   "mistralai%2Fmistral-7b-instruct",
                                   "ft%3Agpt-4o%3Aacme%3A%3Aabc123"])
async def test_a_model_id_with_a_slash_or_escapes_reaches_the_upstream_unchanged(
        gated: Gated, model: str) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([b'{"id": "x", "object": "model"}'], headers=JSON))
    async with aiohttp.ClientSession() as session:
        url = URL(proxy.base_url + "/models/" + model + "?a=%2F&b=%3D", encoded=True)
        async with session.get(url, headers=HEADERS) as resp:
            assert resp.status == 200 and (await resp.json())["id"] == "x"
    assert upstream.received[0]["raw_path_qs"] == "/v1/models/" + model + "?a=%2F&b=%3D"


# -- 143: a ``response.completed`` whose ``output`` is empty (Codex backend) -----------------------
# ChatGPT's Codex backend streams the output items in ``response.output_item.done`` and
# ends with ``response.completed`` holding ``"output": []`` (NousResearch/hermes-agent#5689,
# bytedance/deer-flow#1928, sipeed/picoclaw#2437: answers read as empty). Here the memory
# call of the hidden round and the answer of the next are only in the item events.
def _empty_completed(rid: str, item: dict[str, Any]) -> bytes:
    stream = _resp_stream(rid, [(item, [])])
    head, _, tail = stream.rpartition(b"event: response.completed\n")
    done = orjson.loads(tail[len(b"data: "):].strip())
    done["response"]["output"] = []
    return head + ev("response.completed", done)


async def test_items_only_in_their_done_events_still_hide_the_memory_call(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([Scripted([_empty_completed("resp_1", MEMORY_ITEM)]),
                             Scripted([_empty_completed("resp_2", ANSWER_ITEM)])])
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and b"resp_1" not in got
    shown = _events(got)
    assert shown[-1]["type"] == "response.completed"
    # After a hidden round the terminal is restated with the items the client was shown.
    assert [i["type"] for i in shown[-1]["response"]["output"]] == ["message"]
    assert [e["item"]["type"] for e in shown if e["type"] == "response.output_item.done"] \
        == ["message"]
    second = upstream.received[1]["json"]["input"]
    assert [i.get("type") for i in second[-2:]] == ["function_call", "function_call_output"]
    await proxy.settle()
    said = store_sql(proxy.engine, "SELECT text FROM messages WHERE msg_role = ?",
                     ("assistant",))
    assert any(r["text"] == "done" for r in said), [r["text"] for r in said]


async def test_an_answer_only_in_its_done_events_is_relayed_and_stored(
        gated: Gated) -> None:
    upstream, proxy = gated
    stream = _empty_completed("resp_2", ANSWER_ITEM)
    upstream.answers.append(Scripted([stream]))
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and got == stream, "one round: the upstream's bytes"
    await proxy.settle()
    said = store_sql(proxy.engine, "SELECT text FROM messages WHERE msg_role = ?",
                     ("assistant",))
    assert [r["text"] for r in said] == ["done"]


# -- 144: streamed tool calls without ``index`` ---------------------------------------------------
# Gemini's OpenAI-compatible endpoint (and some local servers) leave ``index`` out of
# ``delta.tool_calls[]`` (openai/openai-python#2806: the SDK's accumulator raised
# "list indices must be integers or slices, not NoneType"; AstrBotDevs/AstrBot#6692:
# arguments lost). Here a memory call so written, its arguments in a second fragment,
# and a client's call so written, which must reach the client as the upstream wrote it.
def _indexless(call_id: str, name: str, args: str) -> list[bytes]:
    first = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return [chunk({"role": "assistant", "content": None, "tool_calls": [first]}),
            chunk({"tool_calls": [{"function": {"arguments": args}}]})]


async def test_a_memory_call_without_index_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([*_indexless("call_m", "memory_grep", "{\"query\": \"build flag\"}"),
                  chunk({}, "tool_calls"), b"data: [DONE]\n\n"]),
        Scripted([FINAL["/chat/completions"]])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and b"call_m" not in got
    sent = upstream.received[1]["json"]["messages"]
    calls = [m for m in sent if m.get("tool_calls")]
    assert calls[-1]["tool_calls"][0]["function"] == {
        "name": "memory_grep", "arguments": "{\"query\": \"build flag\"}"}
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_m"


async def test_a_client_call_without_index_reaches_the_client_as_written(
        gated: Gated) -> None:
    upstream, proxy = gated
    pieces = [*_indexless("call_c", "read_config", "{\"path\": \"a\"}"),
              chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    upstream.answers.append(Scripted(pieces))
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True, "tools": [_CLIENT_TOOL]})
    assert status == 200 and len(upstream.received) == 1
    assert got == b"".join(pieces)
    await proxy.settle()
    raw = [r["raw_json"] for r in store_sql(
        proxy.engine, "SELECT raw_json FROM messages WHERE msg_role = ?", ("assistant",))]
    assert len(raw) == 1 and orjson.loads(raw[0])["tool_calls"][0]["function"] == {
        "name": "read_config", "arguments": "{\"path\": \"a\"}"}, raw


# -- 145: cumulative usage on ``message_delta`` ----------------------------------------------------
# The Messages API now writes ``input_tokens`` and the cache counts on the final
# ``message_delta`` too (cumulative); the SDK's accumulator takes them over the ones of
# ``message_start``. A proxy summing rounds only in ``message_start`` shows the client
# the last round's input on the final message (BerriAI/litellm#20293 family: usage
# rebuilt from one event). Here each round writes its counts on both events.
def _cumulative(stream: bytes, cache_read: int) -> bytes:
    """``stream`` with its ``message_delta`` usage carrying the input and cache counts."""
    head, _, tail = stream.partition(b"event: message_delta\n")
    line, _, rest = tail.partition(b"\n\n")
    delta = orjson.loads(line[len(b"data: "):])
    delta["usage"] = {"input_tokens": 5, "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": 0, **delta["usage"]}
    return head + ev("message_delta", delta) + rest


async def test_cumulative_message_delta_usage_sums_every_round(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_cumulative(messages_call_whole_in_start(), 100)]),
        Scripted([_cumulative(FINAL["/messages"], 40)])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2 and final.content[0].type == "text"
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (
        10, 11, 140), usage


# -- 146: Anthropic Message Batches ---------------------------------------------------------------
# ``/v1/messages/batches`` (create, results as JSONL) sits under the Messages path:
# a gateway matching the prefix ran it as a message (block and tools added, the batch
# refused) or answered 404 (BerriAI/litellm#37201 family: batch paths answered by the
# gateway). Here through the SDK: the request goes as sent, the results read back.
async def test_message_batches_go_through_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    batch = {"id": "msgbatch_1", "type": "message_batch", "processing_status": "ended",
             "request_counts": {"processing": 0, "succeeded": 1, "errored": 0,
                                "canceled": 0, "expired": 0},
             "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
             "ended_at": "2026-01-01T00:01:00Z", "cancel_initiated_at": None,
             "archived_at": None,
             "results_url": f"{proxy.base_url}/messages/batches/msgbatch_1/results"}
    line = {"custom_id": "a", "result": {"type": "succeeded", "message": {
        "id": "msg_b", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}}
    upstream.answers.extend([
        Scripted([orjson.dumps(batch)], headers=JSON),
        Scripted([orjson.dumps(batch)], headers=JSON),
        Scripted([orjson.dumps(line) + b"\n"], headers={"Content-Type": "application/binary"})])
    params: Any = [{"custom_id": "a", "params": {"model": "claude", "max_tokens": 5,
                                                 "messages": USER}}]
    async with _anthropic(proxy) as client:
        made = await client.messages.batches.create(requests=params)
        results = [r async for r in await client.messages.batches.results(made.id)]
    assert made.id == "msgbatch_1"
    assert results[0].result.type == "succeeded"
    first = upstream.received[0]
    assert first["path"] == "/v1/messages/batches"
    assert first["json"] == {"requests": params}, "no block, no memory tools"
    assert upstream.received[2]["path"] == "/v1/messages/batches/msgbatch_1/results"


# -- 147: Messages usage missing or null ----------------------------------------------------------
# Anthropic-compatible endpoints (MiniMax's, Bedrock bridges) leave ``usage`` out of
# ``message_start`` or ``message_delta``, or write ``null`` for a count
# (earendil-works/pi#6567: "Cannot read properties of undefined (reading
# 'input_tokens')"; karthink/gptel#1331: nil token fields crashed tool calls;
# anthropics/anthropic-sdk-python#1820). Here such rounds around a hidden one.
def _bare_usage(stream: bytes, *, start: Any, delta: Any) -> bytes:
    """``stream`` with the usage of ``message_start`` and ``message_delta`` replaced
    (``...`` leaves the key out)."""
    out = []
    for block in stream.split(b"\n\n"):
        if not block:
            continue
        name, _, line = block.partition(b"\n")
        obj = orjson.loads(line[len(b"data: "):])
        if obj["type"] == "message_start":
            obj["message"].pop("usage")
            if start is not ...:
                obj["message"]["usage"] = start
        if obj["type"] == "message_delta":
            obj.pop("usage")
            if delta is not ...:
                obj["usage"] = delta
        out.append(ev(name[len(b"event: "):].decode(), obj))
    return b"".join(out)


async def test_missing_or_null_messages_usage_neither_breaks_nor_invents_counts(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_bare_usage(messages_call_whole_in_start(), start=..., delta=...)]),
        Scripted([_bare_usage(FINAL["/messages"],
                              start={"input_tokens": 5, "output_tokens": 1,
                                     "cache_read_input_tokens": None},
                              delta={"output_tokens": 2, "input_tokens": None})])])
    status, _, got = await post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got
    shown = _events(got)
    text = "".join(e["delta"].get("text", "") for e in shown
                   if e["type"] == "content_block_delta")
    assert text == "done" and shown[-1]["type"] == "message_stop"
    start = next(e for e in shown if e["type"] == "message_start")["message"]["usage"]
    delta = next(e for e in shown if e["type"] == "message_delta")["usage"]
    assert start["input_tokens"] == 5 and start.get("cache_read_input_tokens") is None, start
    # A hidden round without counts adds none; the restated delta may state the total.
    assert delta["output_tokens"] == 2 and delta.get("input_tokens") in (None, 5), delta


# -- 148: a memory call's fragments in the shapes OpenAI-compatible servers write -----------------
# The name split like the arguments ("memory_" + "grep": continuedev/continue#5849 for
# Gemini, ankit373/hydra#957); no ``type`` on the fragments (Azure AI Foundry, Mistral:
# vercel/ai#12901); continuations restating ``"id": null, "type": null, "name": null``
# (anomalyco/opencode#43328) or ``"name": ""`` (bitrouter/bitrouter#552); the name only in
# a later fragment than the id and the first arguments (vercel/ai#14760). A reader that
# decides on the first fragment's name shows the call, or runs one named wrongly.
ARGS = ("{\"query\": ", "\"build flag\"}")


def _fragments(shape: str) -> list[dict[str, Any]]:
    """The ``tool_calls`` entries of a memory call streamed as ``shape``."""
    head = {"index": 0, "id": "call_m", "type": "function"}
    if shape == "split-name":
        return [{**head, "function": {"name": "memory_", "arguments": ""}},
                {"index": 0, "function": {"name": "grep", "arguments": ARGS[0]}},
                {"index": 0, "function": {"arguments": ARGS[1]}}]
    if shape == "no-type":
        return [{"index": 0, "id": "call_m", "function": {"name": "memory_grep",
                                                         "arguments": ARGS[0]}},
                {"index": 0, "function": {"arguments": ARGS[1]}}]
    if shape == "null-continuation":
        return [{**head, "function": {"name": "memory_grep", "arguments": ""}},
                *({"index": 0, "id": None, "type": None,
                   "function": {"name": None, "arguments": a}} for a in ARGS)]
    if shape == "empty-name-continuation":
        return [{**head, "function": {"name": "memory_grep", "arguments": ""}},
                *({"index": 0, "function": {"name": "", "arguments": a}} for a in ARGS)]
    assert shape == "name-later"
    return [{**head, "function": {"arguments": ARGS[0]}},
            {"index": 0, "function": {"name": "memory_grep", "arguments": ARGS[1]}}]


@pytest.mark.parametrize("shape", ["split-name", "no-type", "null-continuation",
                                   "empty-name-continuation", "name-later"])
async def test_a_memory_call_in_loose_fragments_is_run_and_hidden(
        gated: Gated, shape: str) -> None:
    upstream, proxy = gated
    pieces = [chunk({"role": "assistant", "content": None}),
              *(chunk({"tool_calls": [f]}) for f in _fragments(shape)),
              chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    upstream.answers.extend([Scripted(pieces), Scripted([FINAL["/chat/completions"]])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_" not in got and b"call_m" not in got, got.decode()
    assert "".join(c["choices"][0]["delta"].get("content") or ""
                   for c in _events(got) if c.get("choices")) == "done"
    sent = upstream.received[1]["json"]["messages"]
    call = [m for m in sent if m.get("tool_calls")][-1]["tool_calls"][0]
    assert call["function"] == {"name": "memory_grep", "arguments": "".join(ARGS)}, call
    assert call["id"] == "call_m" and call.get("type") == "function"
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_m"
    assert "build flag" in sent[-1]["content"] or sent[-1]["content"]


async def test_a_client_call_named_late_reaches_the_client_whole(gated: Gated) -> None:
    """The client's own call in the ``name-later`` shape: held until its name comes,
    then relayed in order, so the SDK's accumulator builds the call the upstream sent."""
    upstream, proxy = gated
    upstream.answers.append(Scripted([
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_c", "type": "function",
                               "function": {"arguments": "{\"path\": "}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "read_config",
                                                         "arguments": "\"a\"}"}}]}),
        chunk({}, "tool_calls"), b"data: [DONE]\n\n"]))
    async with _openai(proxy) as client:
        async with client.chat.completions.stream(model="m", messages=USER,
                                                  tools=[_CLIENT_TOOL]) as s:
            final = await s.get_final_completion()
    assert len(upstream.received) == 1
    calls = final.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_c", "read_config", "{\"path\": \"a\"}")]


# -- 149: a Responses function call named only when it is done -----------------------------------
# Row 148's Responses analogue: servers bridging Chat streams to Responses open the
# ``function_call`` item before the name is known (``"name": ""`` or none in
# ``response.output_item.added``) and name it in ``output_item.done``
# (bitrouter/bitrouter#552: one call fragmented into items without names).
@pytest.mark.parametrize("added_name", ["", None])
async def test_a_responses_call_named_when_done_is_run_and_hidden(
        gated: Gated, added_name: str | None) -> None:
    upstream, proxy = gated
    done = dict(MEMORY_ITEM, arguments="".join(ARGS))
    added: dict[str, Any] = {k: v for k, v in done.items() if k != "name"}
    added.update(arguments="", status="in_progress")
    if added_name is not None:
        added["name"] = added_name
    stream = _resp_stream("resp_1", [(done, [
        ("response.function_call_arguments.delta", {"delta": a}) for a in ARGS])])
    stream = stream.replace(orjson.dumps(dict(done, status="in_progress")),
                            orjson.dumps(added), 1)
    assert orjson.dumps(added) in stream
    upstream.answers.extend([Scripted([stream]), Scripted([FINAL["/responses"]])])
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"call_m" not in got and b"fc_1" not in got, got.decode()
    second = upstream.received[1]["json"]["input"]
    assert [(i.get("type"), i.get("name")) for i in second[-2:]] == [
        ("function_call", "memory_grep"), ("function_call_output", None)]


async def test_a_responses_client_call_named_when_done_reaches_the_client_as_sent(
        gated: Gated) -> None:
    """The client's own call in that shape: held until its ``output_item.done``
    names it, then relayed as the upstream wrote it."""
    upstream, proxy = gated
    done = {"type": "function_call", "id": "fc_c", "call_id": "call_c",
            "name": "read_config", "arguments": "{}", "status": "completed"}
    added = dict(done, name="", arguments="", status="in_progress")
    stream = _resp_stream("resp_c", [(done, [
        ("response.function_call_arguments.delta", {"delta": "{}"})])])
    stream = stream.replace(orjson.dumps(dict(done, status="in_progress")),
                            orjson.dumps(added), 1)
    upstream.answers.append(Scripted([stream]))
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True,
        "tools": [{"type": "function", "name": "read_config",
                   "parameters": {"type": "object"}}]})
    assert status == 200 and len(upstream.received) == 1
    assert got == stream


# -- 150: a tool-call finish without a call ------------------------------------------------------
# Providers end a turn with ``finish_reason: "tool_calls"`` and ``tool_calls: []`` or none
# (Copilot's Claude models: NousResearch/hermes-agent#75926), or ``stop_reason:
# "tool_use"`` with no ``tool_use`` block (mastra-ai/mastra#14187); loops that go on by
# the finish reason ask again forever (Kilo-Org/kilocode#7773, open-webui#23095). Here
# the proxy's loop must end after one round and hand the answer on as sent.
_PREAMBLE = "I'll read the brief file first."
EMPTY_CALLS: dict[str, tuple[str, dict[str, Any], bytes, dict[str, str] | None]] = {
    "chat-plain": ("/chat/completions", {"model": "m", "messages": USER}, orjson.dumps({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": _PREAMBLE, "tool_calls": []}}]}), JSON),
    "chat-stream": ("/chat/completions", {"model": "m", "messages": USER, "stream": True},
                    chunk({"role": "assistant", "content": _PREAMBLE})
                    + chunk({"tool_calls": []}) + chunk({}, "tool_calls")
                    + b"data: [DONE]\n\n", None),
    "messages-plain": ("/messages", {"model": "claude", "max_tokens": 50, "messages": USER},
                       orjson.dumps({"id": "msg_e", "type": "message", "role": "assistant",
                                     "model": "claude", "content": [],
                                     "stop_reason": "tool_use", "stop_sequence": None,
                                     "usage": {"input_tokens": 3, "output_tokens": 1}}),
                       JSON),
    "messages-stream": ("/messages", {"model": "claude", "max_tokens": 50, "messages": USER,
                                      "stream": True},
                        message_start("msg_e") + ev("message_delta", {
                            "type": "message_delta", "delta": {
                                "stop_reason": "tool_use", "stop_sequence": None},
                            "usage": {"output_tokens": 1}})
                        + ev("message_stop", {"type": "message_stop"}), None),
}


@pytest.mark.parametrize("case", sorted(EMPTY_CALLS))
async def test_a_tool_call_finish_without_a_call_ends_the_loop_as_sent(
        gated: Gated, case: str) -> None:
    upstream, proxy = gated
    path, body, answer, headers = EMPTY_CALLS[case]
    upstream.answers.append(Scripted([answer], **({"headers": headers} if headers else {})))
    upstream.answers.append(Scripted([answer], **({"headers": headers} if headers else {})))
    status, _, got = await post(proxy, path, body)
    assert status == 200 and len(upstream.received) == 1, "no round after it"
    if body.get("stream"):
        assert _events(got) == _events(answer)
    else:
        assert orjson.loads(got) == orjson.loads(answer)


# -- 151: a Messages call without arguments ------------------------------------------------------
# For a tool that takes no input the API writes ``"input": {}`` in ``content_block_start``
# and one ``input_json_delta`` whose ``partial_json`` is ``""`` (or no delta at all);
# accumulators parsed ``""`` and failed (anthropics/anthropic-sdk-java#295,
# rchern/pi-claude-cli#37: "root: must be object"). Here a memory tool without
# arguments so streamed: run, hidden, and sent back with ``input: {}``.
@pytest.mark.parametrize("empty_delta", [True, False])
async def test_a_messages_call_without_arguments_is_run_with_an_empty_input(
        gated: Gated, empty_delta: bool) -> None:
    upstream, proxy = gated
    use = {"type": "tool_use", "id": "toolu_s", "name": "view_chat_history_summary",
           "input": {}}
    deltas = [block_event("content_block_delta", 0, delta={
        "type": "input_json_delta", "partial_json": ""})] if empty_delta else []
    upstream.answers.extend([
        Scripted([message_start("msg_1"), block_event("content_block_start", 0,
                                                      content_block=use),
                  *deltas, block_event("content_block_stop", 0),
                  ev("message_delta", {"type": "message_delta", "delta": {
                      "stop_reason": "tool_use", "stop_sequence": None},
                      "usage": {"output_tokens": 3}}),
                  ev("message_stop", {"type": "message_stop"})]),
        Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [b.type for b in final.content] == ["text"]
    turns = upstream.received[1]["json"]["messages"]
    sent_use = [b for b in turns[-2]["content"] if b["type"] == "tool_use"]
    assert sent_use == [use]
    result = [b for b in turns[-1]["content"] if b["type"] == "tool_result"]
    assert result and result[0]["tool_use_id"] == "toolu_s"
    assert not result[0].get("is_error"), result


# -- 152: a whole Chat answer's tool call without ``type`` ---------------------------------------
# Row 148's ``no-type`` shape in a whole answer: Azure AI Foundry and Mistral write
# ``tool_calls`` entries without ``"type": "function"`` (vercel/ai#12901: "Expected
# 'function' type"). Here a memory call so written, then a client's.
async def test_a_whole_answers_call_without_type_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated

    def whole(call: dict[str, Any] | None) -> bytes:
        msg: dict[str, Any] = {"role": "assistant", "content": "done" if call is None
                               else None}
        if call is not None:
            msg["tool_calls"] = [call]
        return orjson.dumps({"id": "c", "object": "chat.completion", "created": 1,
                             "model": "m", "choices": [{
                                 "index": 0, "message": msg,
                                 "finish_reason": "stop" if call is None else "tool_calls"}]})

    memory = {"id": "call_m", "function": {"name": "memory_grep",
                                           "arguments": "{\"query\": \"build flag\"}"}}
    client_call = {"id": "call_c", "function": {"name": "read_config", "arguments": "{}"}}
    upstream.answers.extend([Scripted([whole(memory)], headers=JSON),
                             Scripted([whole(client_call)], headers=JSON)])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "tools": [_CLIENT_TOOL]})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = orjson.loads(got)["choices"][0]["message"]
    assert shown["tool_calls"] == [client_call], shown
    sent = upstream.received[1]["json"]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_m"


async def test_a_whole_answer_after_a_round_with_null_usage_keeps_its_own(
        gated: Gated) -> None:
    """Row 137 in whole answers: the hidden round says ``"usage": null`` (servers
    that count nothing); the answer's usage is then its own, not lost or zeroed."""
    upstream, proxy = gated
    call = {"id": "call_m", "type": "function", "function": {
        "name": "memory_grep", "arguments": "{\"query\": \"build flag\"}"}}
    first = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
             "usage": None, "choices": [{"index": 0, "finish_reason": "tool_calls",
                                         "message": {"role": "assistant", "content": None,
                                                     "tool_calls": [call]}}]}
    second = {"id": "c2", "object": "chat.completion", "created": 1, "model": "m",
              "usage": _usage(20, 2), "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant",
                                                              "content": "done"}}]}
    upstream.answers.extend([Scripted([orjson.dumps(first)], headers=JSON),
                             Scripted([orjson.dumps(second)], headers=JSON)])
    async with _openai(proxy) as client:
        got = await client.chat.completions.create(model="m", messages=USER)
    assert len(upstream.received) == 2 and got.choices[0].message.content == "done"
    assert got.usage is not None and (got.usage.prompt_tokens, got.usage.completion_tokens,
                                      got.usage.total_tokens) == (20, 2, 22)
