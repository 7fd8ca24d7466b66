"""Replays of failure kinds reported against other LLM proxies (docs/evaluation/
wire_replays.md has the table: each kind, the public issue it comes from, and where
it is tested). Each test here drives the proxy on its memory path (the memory tools
offered) with an upstream on loopback that writes one API's real byte format, and
compares what the client sees with what the upstream sent, or what the upstream got
with what the client sent."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY, RunningProxy
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    MEMORY_CALLS,
    SDK_USER,
    USER,
    Gated,
    GatedUpstream,
    Scripted,
    block_event,
    chunk,
    ev,
    gated,  # noqa: F401 - the fixture
    gated_proxy,
    message_start,
    messages_call_whole_in_start,
    post,
)

CLIENT_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}


# -- a stream asked for, a JSON body answered -------------------------------------------
# Gateways and OpenAI-compatible servers sometimes answer ``stream: true`` with one JSON
# body (a model that cannot stream, a cached answer). The client must get it as sent.
PLAIN_BODIES = {
    "/chat/completions": ({"model": "m", "messages": USER, "stream": True}, {
        "id": "chatcmpl-j", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}),
    "/responses": ({"model": "m", "input": "hello there", "stream": True}, {
        "id": "resp_j", "object": "response", "created_at": 1, "status": "completed",
        "model": "m", "output": [{"type": "message", "id": "msg_j", "status": "completed",
                                  "role": "assistant", "content": [
                                      {"type": "output_text", "text": "whole",
                                       "annotations": []}]}],
        "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}}),
    "/messages": ({"model": "claude", "max_tokens": 50, "messages": USER, "stream": True}, {
        "id": "msg_j", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "whole"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}),
}


@pytest.mark.parametrize("path", sorted(PLAIN_BODIES))
async def test_a_stream_answered_with_one_json_body_reaches_the_client_as_sent(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, answer = PLAIN_BODIES[path]
    raw = orjson.dumps(answer)
    upstream.answers.append(Scripted([raw], headers={"Content-Type": "application/json"}))
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            got = await resp.read()
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("application/json")
    assert got == raw
    assert upstream.received[-1]["json"].get("tools"), "on the memory tools' path"


# -- a client's tool call streams as it comes ---------------------------------------------
# Reported: argument deltas held back and released in one burst at the end of the stream.
# The design holds a tool call only until its name is known; after that the client sees
# each argument fragment while the upstream is still writing.
HELD_STREAMS = {
    "/chat/completions": (
        {"model": "m", "messages": USER, "stream": True, "tools": [CLIENT_TOOL]},
        [chunk({"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}),
         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": \"Osl"}}]}),
         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "o\"}"}}]}),
         chunk({}, "tool_calls"), b"data: [DONE]\n\n"],
        b"Osl", 2),
    "/messages": (
        {"model": "claude", "max_tokens": 50, "messages": USER, "stream": True,
         "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]},
        [message_start("msg_1"),
         ev("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "tool_use", "id": "toolu_1",
                                                      "name": "get_weather", "input": {}}}),
         ev("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
             "type": "input_json_delta", "partial_json": "{\"city\": \"Osl"}}),
         ev("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
             "type": "input_json_delta", "partial_json": "o\"}"}}),
         ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
         ev("message_delta", {"type": "message_delta", "delta": {
             "stop_reason": "tool_use", "stop_sequence": None},
             "usage": {"output_tokens": 9}}),
         ev("message_stop", {"type": "message_stop"})],
        b"Osl", 3),
    "/responses": (
        {"model": "m", "input": "hello there", "stream": True,
         "tools": [{"type": "function", "name": "get_weather",
                    "parameters": {"type": "object"}}]},
        [ev("response.created", {"type": "response.created", "sequence_number": 0,
                                 "response": {"id": "resp_1", "object": "response",
                                              "status": "in_progress", "output": [],
                                              "model": "m", "created_at": 1}}),
         ev("response.output_item.added", {
             "type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
             "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                      "name": "get_weather", "arguments": "", "status": "in_progress"}}),
         ev("response.function_call_arguments.delta", {
             "type": "response.function_call_arguments.delta", "sequence_number": 2,
             "item_id": "fc_1", "output_index": 0, "delta": "{\"city\": \"Osl"}),
         ev("response.function_call_arguments.delta", {
             "type": "response.function_call_arguments.delta", "sequence_number": 3,
             "item_id": "fc_1", "output_index": 0, "delta": "o\"}"}),
         ev("response.function_call_arguments.done", {
             "type": "response.function_call_arguments.done", "sequence_number": 4,
             "item_id": "fc_1", "output_index": 0, "arguments": "{\"city\": \"Oslo\"}"}),
         ev("response.output_item.done", {
             "type": "response.output_item.done", "sequence_number": 5, "output_index": 0,
             "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                      "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}",
                      "status": "completed"}}),
         ev("response.completed", {"type": "response.completed", "sequence_number": 6,
                                   "response": {
                                       "id": "resp_1", "object": "response",
                                       "status": "completed", "model": "m",
                                       "created_at": 1, "output": [{
                                           "type": "function_call", "id": "fc_1",
                                           "call_id": "call_1", "name": "get_weather",
                                           "arguments": "{\"city\": \"Oslo\"}",
                                           "status": "completed"}],
                                       "usage": {"input_tokens": 3, "output_tokens": 4,
                                                 "total_tokens": 7}}})],
        b"Osl", 3),
}


@pytest.mark.parametrize("path", sorted(HELD_STREAMS))
async def test_a_clients_tool_arguments_reach_it_while_the_upstream_still_writes(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, pieces, first_fragment, gate_at = HELD_STREAMS[path]
    answer = Scripted(pieces, gate_at=gate_at)
    upstream.answers.append(answer)
    seen = b""
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            assert resp.status == 200
            while first_fragment not in seen:  # the rest waits on this fragment shown
                got = await asyncio.wait_for(resp.content.readany(), 10)
                assert got, "the stream ended before the first argument fragment"
                seen += got
            answer.gate.set()
            seen += await resp.read()
    assert seen == b"".join(pieces)


# -- a memory call whose arguments come without deltas ------------------------------------
# Reported: arguments only in ``response.function_call_arguments.done`` (no deltas), or
# an Anthropic tool_use whose input is whole in ``content_block_start``, read as ``{}``.
def _call_arguments(path: str, sent: dict[str, Any]) -> Any:
    """The memory call's arguments as the next round sent them back upstream."""
    if path == "/responses":
        calls = [i for i in sent["input"] if isinstance(i, dict)
                 and i.get("type") == "function_call"]
        return orjson.loads(calls[-1]["arguments"])
    if path == "/messages":
        uses = [b for m in sent["messages"] if isinstance(m.get("content"), list)
                for b in m["content"] if b.get("type") == "tool_use"]
        return uses[-1]["input"]
    calls = [c for m in sent["messages"] for c in m.get("tool_calls") or []]
    return orjson.loads(calls[-1]["function"]["arguments"])


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_memory_calls_arguments_without_deltas_are_run_as_sent(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([first]), Scripted([FINAL[path]])])
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    assert b"done" in got and b"memory_grep" not in got
    assert len(upstream.received) == 2, "the memory call ran and the round went on"
    assert _call_arguments(path, upstream.received[1]["json"]) == {"query": "build flag"}


# -- the client's feature and account headers go with every round --------------------------
# Reported: ``anthropic-beta`` (and OpenAI's organization/project headers) not forwarded,
# so a beta feature or the billed project silently changes. A hidden memory round is a
# second upstream call the client never made: it must carry them too.
CLIENT_HEADERS = {"anthropic-beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07",
                  "anthropic-version": "2023-06-01", "OpenAI-Organization": "org-r",
                  "OpenAI-Project": "proj_r", "OpenAI-Beta": "assistants=v2",
                  "X-Stainless-Lang": "python"}


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_the_clients_feature_headers_reach_every_round(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([first]), Scripted([FINAL[path]])])
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers={**HEADERS, **CLIENT_HEADERS}) as resp:
            await resp.read()
            assert resp.status == 200
    assert len(upstream.received) == 2
    for got in upstream.received:
        sent = {k.lower(): v for k, v in got["headers"].items()}
        for name, value in CLIENT_HEADERS.items():
            assert sent.get(name.lower()) == value, (name, got["path"])


# -- a plain request answered with a stream -----------------------------------------------
# Reported: backends that always answer with SSE (a Codex backend, some gateways), so a
# ``stream: false`` request gets ``text/event-stream``; a proxy that expects JSON loses the
# answer. The client must get what the upstream sent.
@pytest.mark.parametrize("path", sorted(FINAL))
async def test_a_plain_request_answered_with_a_stream_reaches_the_client_as_sent(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body = dict(MEMORY_CALLS[path][0], stream=False)
    upstream.answers.append(Scripted([FINAL[path]]))
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            got = await resp.read()
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/event-stream")
    assert got == FINAL[path]


# -- rate-limit and request-id headers of a successful stream --------------------------------
# Reported: a gateway's answer without the upstream's ``x-ratelimit-*``/``request-id``
# headers (clients pace themselves and de-duplicate by them).
UPSTREAM_HEADERS = {"x-request-id": "req_up_1", "request-id": "req_up_2",
                    "x-ratelimit-remaining-requests": "9",
                    "anthropic-ratelimit-tokens-remaining": "1000",
                    "openai-processing-ms": "12"}


@pytest.mark.parametrize("path", sorted(FINAL))
async def test_a_streams_upstream_headers_reach_the_client(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body = MEMORY_CALLS[path][0]
    upstream.answers.append(Scripted([FINAL[path]], headers={
        "Content-Type": "text/event-stream", **UPSTREAM_HEADERS}))
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            got = await resp.read()
            assert resp.status == 200
            for name, value in UPSTREAM_HEADERS.items():
                assert resp.headers.get(name) == value, name
    assert got == FINAL[path]


# -- SSE framings other servers write --------------------------------------------------------
# Reported: parsers that take each ``data:`` line as one event, or that dispatch on the
# ``event:`` line, lose or misread events from servers framing them otherwise. Both are
# valid SSE: one event's data on several ``data:`` lines (joined by a newline), and no
# ``event:`` line at all (the JSON's own ``type`` names it). A memory call framed so must
# still be found and run, never shown.
def _multiline(payload: bytes) -> bytes:
    """Each event's JSON split onto two ``data:`` lines after its first comma."""
    out = []
    for event in payload.split(b"\n\n"):
        lines = []
        for line in event.split(b"\n"):
            if line.startswith(b"data: {") and b", " in line:
                head, _, tail = line.partition(b",")
                lines += [head + b",", b"data: " + tail]
            elif line.startswith(b"data: {") and b"," in line:
                head, _, tail = line.partition(b",")
                lines += [head + b",", b"data:" + tail]
            else:
                lines.append(line)
        out.append(b"\n".join(lines))
    return b"\n\n".join(out)


def _no_event_lines(payload: bytes) -> bytes:
    return b"\n".join(line for line in payload.split(b"\n")
                      if not line.startswith(b"event:"))


FRAMINGS = {"multiline-data": _multiline, "no-event-lines": _no_event_lines}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_memory_call_in_another_sse_framing_is_run_and_hidden(
        gated: Gated, path: str, framing: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    final = FRAMINGS[framing](FINAL[path])
    upstream.answers.extend([Scripted([FRAMINGS[framing](first)]), Scripted([final])])
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    assert b"memory_grep" not in got
    assert len(upstream.received) == 2, "the memory call ran and the round went on"
    assert _call_arguments(path, upstream.received[1]["json"]) == {"query": "build flag"}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
@pytest.mark.parametrize("path", sorted(FINAL))
async def test_an_answer_in_another_sse_framing_reaches_the_client_as_sent(
        gated: Gated, path: str, framing: str) -> None:
    upstream, proxy = gated
    final = FRAMINGS[framing](FINAL[path])
    upstream.answers.append(Scripted([final]))
    status, _headers, got = await post(proxy, path, MEMORY_CALLS[path][0])
    assert status == 200
    assert got == final


# -- a rate limit met by a hidden round ------------------------------------------------------
# Reported: ``retry-after`` and rate-limit headers dropped from a relayed 429, so clients
# retry at once. Here the 429 answers the proxy's own second round: the client must still
# get it with the upstream's status, body and pacing headers.
LIMIT_HEADERS = {"retry-after": "7", "x-ratelimit-reset-requests": "7s",
                 "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:07Z"}


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_429_met_by_a_hidden_round_reaches_the_client_with_its_headers(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    error = orjson.dumps({"error": {"message": "slow down", "type": "rate_limit_error",
                                    "param": None, "code": "rate_limit_exceeded"}})
    upstream.answers.extend([Scripted([first]), Scripted(
        [error], status=429, headers={"Content-Type": "application/json", **LIMIT_HEADERS})])
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path,
                                data=orjson.dumps(body), headers=HEADERS) as resp:
            got = await resp.read()
            assert resp.status == 429
            for name, value in LIMIT_HEADERS.items():
                assert resp.headers.get(name) == value, name
    assert got == error


# -- a tool name restated in every fragment -------------------------------------------------
# Reported: some OpenAI-compatible servers (MiniMax through NVIDIA NIM, Fireworks) send a
# streamed call's whole name, and its id, in every fragment; accumulators that append
# each name piece read ``memory_grepmemory_grep``. A memory call so streamed must still be
# found, run and hidden, alone or beside the client's own call, and its name sent back once.
def _restated(index: int, call_id: str, name: str, *args: str) -> list[bytes]:
    return [chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": piece}}]})
            for piece in ("", *args)]


RESTATED = {
    "memory-call": _restated(0, "call_m", "memory_grep", "{\"query\":", " \"build flag\"}"),
    "beside-a-client-call": [*_restated(0, "call_c", "get_weather", "{\"city\":", "\"Oslo\"}"),
                             *_restated(1, "call_m", "memory_grep", "{\"query\": \"build flag\"}")],
}


async def _stream_round(upstream: GatedUpstream, proxy: RunningProxy, calls: list[bytes],
                        body: dict[str, Any]) -> bytes:
    """Stream one Chat round whose tool-call chunks are ``calls`` (then a final answer for
    the round after it) to a client sending ``body``; the bytes the client got."""
    pieces = [chunk({"role": "assistant", "content": None}), *calls,
              chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    upstream.answers.extend([Scripted(pieces), Scripted([FINAL["/chat/completions"]])])
    status, _headers, got = await post(proxy, "/chat/completions", body)
    assert status == 200
    return got


@pytest.mark.parametrize("calls", sorted(RESTATED))
async def test_a_memory_call_whose_name_every_fragment_restates_is_run_and_hidden(
        gated: Gated, calls: str) -> None:
    upstream, proxy = gated
    body = {"model": "m", "messages": USER, "stream": True, "tools": [CLIENT_TOOL]}
    got = await _stream_round(upstream, proxy, RESTATED[calls], body)
    assert b"memory_grep" not in got
    if calls == "memory-call":
        assert len(upstream.received) == 2, "the memory call ran and the round went on"
        assert b"done" in got
        sent = upstream.received[1]["json"]["messages"]
        assert [c["function"]["name"] for m in sent for c in m.get("tool_calls") or []
                ] == ["memory_grep"]
        assert _call_arguments("/chat/completions", upstream.received[1]["json"]) == {
            "query": "build flag"}
    else:
        # The client gets its own call (as the upstream restated it); the memory call
        # runs and is spliced into the client's next request.
        assert len(upstream.received) == 1
        assert b"get_weather" in got and b"\"Oslo\\\"}" in got


# -- parallel calls that share one index ---------------------------------------------------
# Reported: Ollama streams ``index: 0`` for every call of a parallel batch (each call
# whole, with an id of its own), and gateways translating from other APIs do the same;
# accumulators keyed on the index merge the calls (``{"q": "a"}{"q": "b"}``). A memory
# call beside the client's must still be told apart: run and hidden, the client's call
# shown on the index it would have had, and both spliced into the client's next turn.
def _call_at_zero(call_id: str, name: str, args: str) -> bytes:
    return chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                  "function": {"name": name, "arguments": args}}]})


WEATHER = _call_at_zero("call_c", "get_weather", "{\"city\": \"Oslo\"}")
SHARED_INDEX = {
    "client-then-memory": [WEATHER, _call_at_zero("call_m", "memory_grep",
                                                  "{\"query\": \"build flag\"}")],
    "memory-then-client": [_call_at_zero("call_m", "memory_grep",
                                         "{\"query\": \"build flag\"}"), WEATHER],
    "two-memory-calls": [_call_at_zero("call_m", "memory_grep", "{\"query\": \"build flag\"}"),
                         _call_at_zero("call_n", "memory_grep", "{\"query\": \"port\"}")],
}


@pytest.mark.parametrize("calls", sorted(SHARED_INDEX))
async def test_parallel_calls_on_one_index_are_told_apart(
        gated: Gated, calls: str) -> None:
    upstream, proxy = gated
    body = {"model": "m", "messages": USER, "stream": True, "tools": [CLIENT_TOOL]}
    got = await _stream_round(upstream, proxy, SHARED_INDEX[calls], body)
    assert b"memory_grep" not in got
    if calls == "two-memory-calls":
        assert len(upstream.received) == 2, "the memory calls ran and the round went on"
        sent = upstream.received[1]["json"]["messages"]
        assert [(c["id"], orjson.loads(c["function"]["arguments"]))
                for m in sent for c in m.get("tool_calls") or []] == [
            ("call_m", {"query": "build flag"}), ("call_n", {"query": "port"})]
        assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [
            "call_m", "call_n"]
        return
    assert len(upstream.received) == 1
    shown = [c for line in got.split(b"\n\n") if line.startswith(b"data: {")
             for ch in orjson.loads(line[6:])["choices"]
             for c in ch["delta"].get("tool_calls") or []]
    assert [(c["index"], c["id"], c["function"]["name"]) for c in shown] == [
        (0, "call_c", "get_weather")]
    # The client's next turn: its call and result; the hidden call goes back too.
    upstream.answers.append(Scripted([FINAL["/chat/completions"]]))
    turn = [*USER, {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_c", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call_c", "content": "sunny"}]
    status, _headers, _got = await post(proxy, "/chat/completions", dict(body, messages=turn))
    assert status == 200
    sent = upstream.received[1]["json"]["messages"]
    called = {c["id"]: c["function"]["name"] for m in sent for c in m.get("tool_calls") or []}
    assert called == {"call_c": "get_weather", "call_m": "memory_grep"}
    assert sorted(m["tool_call_id"] for m in sent if m["role"] == "tool") == [
        "call_c", "call_m"]


# -- arguments written as a JSON object ---------------------------------------------------
# Reported: llama.cpp's server (one release) wrote ``function.arguments`` as a JSON object,
# not its text; clients and proxies that read only strings lost the arguments. A memory
# call so written must run with them, streamed or not.
OBJECT_ARGS_CALL = {"id": "call_m", "type": "function",
                    "function": {"name": "memory_grep", "arguments": {"query": "build flag"}}}
OBJECT_ARGS = {
    "stream": [chunk({"role": "assistant", "content": None,
                      "tool_calls": [dict(OBJECT_ARGS_CALL, index=0)]}),
               chunk({}, "tool_calls"), b"data: [DONE]\n\n"],
    "plain": [orjson.dumps({
        "id": "chatcmpl-o", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [OBJECT_ARGS_CALL]}}]})],
}


@pytest.mark.parametrize("mode", sorted(OBJECT_ARGS))
async def test_a_memory_call_whose_arguments_are_an_object_runs_with_them(
        gated: Gated, mode: str) -> None:
    upstream, proxy = gated
    stream = mode == "stream"
    final = FINAL["/chat/completions"] if stream else PLAIN_BODIES["/chat/completions"][1]
    json_type = {"Content-Type": "application/json"}
    upstream.answers.extend([
        Scripted(OBJECT_ARGS[mode], **({} if stream else {"headers": json_type})),
        Scripted([final] if stream else [orjson.dumps(final)],
                 **({} if stream else {"headers": json_type}))])
    body = {"model": "m", "messages": USER, "stream": stream}
    status, _headers, got = await post(proxy, "/chat/completions", body)
    assert status == 200
    assert b"memory_grep" not in got
    assert len(upstream.received) == 2, "the memory call ran and the round went on"
    (result,) = [m for m in upstream.received[1]["json"]["messages"] if m["role"] == "tool"]
    assert orjson.loads(result["content"]).get("query") == "build flag", result["content"]


# -- a call without an id -----------------------------------------------------------------
# Reported: some OpenAI-compatible servers send a streamed tool call without an ``id`` (or
# an empty one); a result sent back with ``tool_call_id: null`` is answered with a 400
# ("Tool call id was null"). A memory call so sent is the proxy's to pair with its result.
NO_ID = {"absent": {}, "empty": {"id": ""}}


@pytest.mark.parametrize("form", sorted(NO_ID))
async def test_a_memory_call_without_an_id_goes_back_paired_with_its_result(
        gated: Gated, form: str) -> None:
    upstream, proxy = gated
    calls = [{"index": i, **NO_ID[form], "type": "function",
              "function": {"name": "memory_grep", "arguments": args}}
             for i, args in enumerate(["{\"query\": \"build flag\"}", "{\"query\": \"port\"}"])]
    got = await _stream_round(upstream, proxy, [chunk({"tool_calls": calls})],
                              {"model": "m", "messages": USER, "stream": True})
    assert b"memory_grep" not in got
    sent = upstream.received[1]["json"]["messages"]
    ids = [c["id"] for m in sent for c in m.get("tool_calls") or []]
    assert len(ids) == 2 and all(isinstance(i, str) and i for i in ids) and ids[0] != ids[1]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ids


# -- a stream under another label ---------------------------------------------------------
# Reported: servers and relays that send a stream with no ``Content-Type`` (a bare
# streaming response), ``text/plain``/``application/octet-stream``, or even a JSON label;
# clients that trust the bytes (the SDKs do) read it, a proxy that trusts the label took
# it for a body and passed the memory call it held to the client. The bytes decide.
LABELS = {"none": {}, "text-plain": {"Content-Type": "text/plain; charset=utf-8"},
          "octet-stream": {"Content-Type": "application/octet-stream"},
          "json": {"Content-Type": "application/json"}}


@pytest.mark.parametrize("label", sorted(LABELS))
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_memory_call_in_a_stream_under_another_label_is_run_and_hidden(
        gated: Gated, path: str, label: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([first[:3], first[3:]], headers=LABELS[label]),
                             Scripted([FINAL[path]], headers=LABELS[label])])
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    assert b"memory_grep" not in got and b"done" in got
    assert len(upstream.received) == 2, "the memory call ran and the round went on"
    assert _call_arguments(path, upstream.received[1]["json"]) == {"query": "build flag"}


@pytest.mark.parametrize("label", ["none", "text-plain"])
@pytest.mark.parametrize("path", sorted(PLAIN_BODIES))
async def test_a_body_under_another_label_still_reaches_a_stream_client_as_sent(
        gated: Gated, path: str, label: str) -> None:
    upstream, proxy = gated
    body, answer = PLAIN_BODIES[path]
    raw = b"\n " + orjson.dumps(answer)  # read a byte at a time until it is told apart
    upstream.answers.append(Scripted([raw[i:i + 1] for i in range(len(raw))],
                                     headers=LABELS[label]))
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    assert got == raw
    assert len(upstream.received) == 1


# -- more SSE framings ---------------------------------------------------------------------
# Reported: parsers splitting events only on ``\n\n`` (sse-starlette and Azure-hosted
# models end lines with CRLF; bare CR is valid too), reading only ``data: `` with its
# space, tripping on comment lines (OpenRouter's ``: OPENROUTER PROCESSING``), a byte
# order mark, ``id:``/``retry:`` fields, or Responses events without ``sequence_number``.
def _id_retry(payload: bytes) -> bytes:
    return b"retry: 3000\n\n" + b"".join(
        b"id: %d\n" % n + block + b"\n\n"
        for n, block in enumerate(payload.split(b"\n\n")) if block)


MORE_FRAMINGS: dict[str, Callable[[bytes], bytes]] = {
    "crlf": lambda p: p.replace(b"\n", b"\r\n"),
    "cr": lambda p: p.replace(b"\n", b"\r"),
    "no-space": lambda p: p.replace(b"data: ", b"data:").replace(b"event: ", b"event:"),
    "comments": lambda p: b": OPENROUTER PROCESSING\n\n" + p.replace(b"\n\n", b"\n\n: ping\n\n"),
    "bom": lambda p: b"\xef\xbb\xbf" + p,
    "id-retry": _id_retry,
    "no-sequence-numbers": lambda p: re.sub(rb'"sequence_number":\d+,', b"", p),
}


@pytest.mark.parametrize("framing", sorted(MORE_FRAMINGS))
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_memory_call_in_more_sse_framings_is_run_and_hidden(
        gated: Gated, path: str, framing: str) -> None:
    upstream, proxy = gated
    frame = MORE_FRAMINGS[framing]
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([frame(first)]), Scripted([frame(FINAL[path])])])
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    assert b"memory_grep" not in got and b"done" in got
    assert len(upstream.received) == 2


# -- Anthropic server tools, citations, pause_turn and refusal --------------------------------
# Reported: ``server_tool_use``/``web_search_tool_result`` blocks dropped (the next turn is
# refused: a web_search use without its result), ``citations_delta`` lost from streams,
# ``pause_turn``/``refusal`` stop reasons not known. They must reach the client as sent,
# and a paused turn, sent back as the last (assistant) message, go upstream as it came.
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
    {"type": "web_search_result", "url": "https://example.org/a", "title": "A",
     "encrypted_content": "EqgfCioIARgBIiQ3", "page_age": None}]}
CITATION = {"type": "web_search_result_location", "url": "https://example.org/a",
            "title": "A", "encrypted_index": "Eo8BCioIAhgB", "cited_text": "alpha beta"}


def _server_tool_stream(stop: str) -> bytes:
    return b"".join([
        message_start("msg_s"),
        block_event("content_block_start", 0, content_block={
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        block_event("content_block_delta", 0, delta={"type": "input_json_delta",
                                                     "partial_json": "{\"query\": \"alpha\"}"}),
        block_event("content_block_stop", 0),
        block_event("content_block_start", 1, content_block=SEARCH_RESULT),
        block_event("content_block_stop", 1),
        block_event("content_block_start", 2, content_block={"type": "text", "text": "",
                                                             "citations": []}),
        block_event("content_block_delta", 2, delta={"type": "citations_delta",
                                                     "citation": CITATION}),
        block_event("content_block_delta", 2, delta={"type": "text_delta", "text": "Alpha."}),
        block_event("content_block_stop", 2),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"})])


@pytest.mark.parametrize("stop", ["end_turn", "pause_turn", "refusal"])
async def test_server_tool_blocks_and_citations_reach_the_client_and_go_back(
        gated: Gated, stop: str) -> None:
    upstream, proxy = gated
    raw = _server_tool_stream(stop)
    upstream.answers.append(Scripted([raw]))
    client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3])
    tools: Any = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
    async with client.messages.stream(model="claude", max_tokens=50, messages=SDK_USER,
                                      tools=tools) as stream:
        final = await stream.get_final_message()
    assert [b.type for b in final.content] == ["server_tool_use", "web_search_tool_result",
                                               "text"]
    assert final.stop_reason == stop
    assert final.content[2].type == "text" and final.content[2].citations
    upstream.answers.append(Scripted([FINAL["/messages"]]))
    turn = {"role": "assistant", "content": [*final.model_dump(exclude_none=True)["content"]]}
    body = {"model": "claude", "max_tokens": 50, "messages": [*USER, turn], "tools": tools,
            "stream": True}
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + "/messages", data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            assert resp.status == 200
            await resp.read()
    assert orjson.dumps(turn) in upstream.received[1]["raw"], "the paused turn went as sent"


# -- thinking before a hidden memory call ---------------------------------------------------
# Reported: signed ``thinking``/``redacted_thinking`` blocks changed on their way back
# ("Invalid signature in thinking block", "thinking blocks in the latest assistant
# message cannot be modified"). Here the proxy itself sends a turn back: the hidden
# round's thinking must lead its assistant message, exactly as streamed.
THOUGHT = {
    "thinking": ({"type": "thinking", "thinking": "", "signature": ""},
                 [{"type": "thinking_delta", "thinking": "I should look."},
                  {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJw=="}],
                 {"type": "thinking", "thinking": "I should look.",
                  "signature": "EqQBCgIYAhIM1gbcDa9GJw=="}),
    "redacted": ({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}, [],
                 {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}),
}


@pytest.mark.parametrize("kind", sorted(THOUGHT))
async def test_thinking_before_a_memory_call_goes_back_first_and_unchanged(
        gated: Gated, kind: str) -> None:
    upstream, proxy = gated
    start, deltas, whole = THOUGHT[kind]
    call = messages_call_whole_in_start().split(b"\n\n")
    first = b"".join([call[0] + b"\n\n",
                      block_event("content_block_start", 0, content_block=start),
                      *(block_event("content_block_delta", 0, delta=d) for d in deltas),
                      block_event("content_block_stop", 0),
                      b"\n\n".join(call[1:]).replace(b"\"index\":0", b"\"index\":1")])
    upstream.answers.extend([Scripted([first]), Scripted([FINAL["/messages"]])])
    body = {"model": "claude", "max_tokens": 2000, "messages": USER, "stream": True,
            "thinking": {"type": "enabled", "budget_tokens": 1024}}
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + "/messages", data=orjson.dumps(body),
                                headers={**HEADERS, "anthropic-beta":
                                         "interleaved-thinking-2025-05-14"}) as resp:
            got = await resp.read()
    assert b"memory_grep" not in got and len(upstream.received) == 2
    sent = upstream.received[1]["json"]["messages"]
    assert [m for m in sent if m["role"] == "assistant"][-1]["content"][0] == whole


# -- a memory call beside the client's, read by the SDKs' accumulators -----------------------
# Reported: gateways that drop one block of a parallel batch and leave a gap in
# ``index``/``output_index``; the SDKs index their snapshot by it. With the memory call
# hidden, the client's call must come on the index it would have had.
@pytest.mark.parametrize("memory_first", [True, False])
async def test_a_hidden_call_beside_the_clients_leaves_no_gap_for_the_sdks(
        gated: Gated, memory_first: bool) -> None:
    upstream, proxy = gated
    calls = [("toolu_m", "memory_grep", "{\"query\": \"build flag\"}"),
             ("toolu_c", "get_weather", "{\"city\": \"Oslo\"}")]
    calls = calls if memory_first else calls[::-1]
    start = MEMORY_CALLS["/messages"][1].split(b"\n\n")[0] + b"\n\n"
    blocks = b"".join(
        block_event("content_block_start", i, content_block={
            "type": "tool_use", "id": cid, "name": name, "input": {}})
        + block_event("content_block_delta", i, delta={"type": "input_json_delta",
                                                       "partial_json": args})
        + block_event("content_block_stop", i) for i, (cid, name, args) in enumerate(calls))
    end = ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}) + ev(
        "message_stop", {"type": "message_stop"})
    upstream.answers.append(Scripted([start + blocks + end]))
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3]
                                        ) as client, client.messages.stream(
            model="claude", max_tokens=50, messages=SDK_USER, tools=[
                {"name": "get_weather", "input_schema": {"type": "object"}}]) as stream:
        final = await stream.get_final_message()
    assert [(b.type, getattr(b, "input", None)) for b in final.content] == [
        ("tool_use", {"city": "Oslo"})]


# -- count_tokens ----------------------------------------------------------------------------
# Reported: ``POST /v1/messages/count_tokens`` (``?beta=true`` from Claude Code) answered
# 404 by proxies. It goes through untouched, query and beta header included.
async def test_count_tokens_goes_through_untouched(
        gated: Gated) -> None:
    upstream, proxy = gated
    for n in (14, 15):
        upstream.answers.append(Scripted([b"{\"input_tokens\":%d}" % n], headers={
            "Content-Type": "application/json"}))
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY,
                                        base_url=proxy.base_url[:-3]) as client:
        plain = await client.messages.count_tokens(model="claude", messages=SDK_USER,
                                                   system="sys")
        beta = await client.beta.messages.count_tokens(model="claude", messages=SDK_USER,
                                                       betas=["token-counting-2024-11-01"])
    assert (plain.input_tokens, beta.input_tokens) == (14, 15)
    assert upstream.received[0]["json"] == {"model": "claude", "messages": USER,
                                            "system": "sys"}
    assert upstream.received[1]["path"] == "/v1/messages/count_tokens"
    assert "token-counting-2024-11-01" in upstream.received[1]["headers"]["anthropic-beta"]


# -- a body whose first byte comes after a heartbeat ---------------------------------------
# While the first bytes of an answer under another label are read, a heartbeat is due;
# it may not send the client's status line yet (a body would then reach a stream client as
# an upstream error event), and a stream so labelled must still have its memory call run.
@pytest.fixture
async def beating(tmp_path: Path) -> AsyncIterator[Gated]:
    async with gated_proxy(tmp_path, heartbeat_seconds=0.1) as pair:
        yield pair


async def _open_later(upstream: GatedUpstream, gate: asyncio.Event) -> None:
    while not upstream.received:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.5)  # five heartbeats after the headers went out
    gate.set()


@pytest.mark.parametrize("path", sorted(PLAIN_BODIES))
async def test_a_body_whose_first_byte_comes_after_a_heartbeat_reaches_the_client_as_sent(
        beating: Gated, path: str) -> None:
    upstream, proxy = beating
    body, answer = PLAIN_BODIES[path]
    raw = orjson.dumps(answer)
    slow = Scripted([b"", raw], headers={"Content-Type": "application/json"}, gate_at=1)
    upstream.answers.append(slow)
    opener = asyncio.ensure_future(_open_later(upstream, slow.gate))
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    await opener
    assert got == raw


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_stream_under_another_label_after_a_heartbeat_still_hides_its_memory_call(
        beating: Gated, path: str) -> None:
    upstream, proxy = beating
    body, first = MEMORY_CALLS[path]
    slow = Scripted([b"", first], headers=LABELS["text-plain"], gate_at=1)
    upstream.answers.extend([slow, Scripted([FINAL[path]], headers=LABELS["text-plain"])])
    opener = asyncio.ensure_future(_open_later(upstream, slow.gate))
    status, _headers, got = await post(proxy, path, body)
    assert status == 200
    await opener
    assert b"memory_grep" not in got and b"done" in got
    assert len(upstream.received) == 2


# -- a continuation after hidden rounds ------------------------------------------------------
# Reported: a proxy's answer without the ``previous_response_id`` the client sent, or with
# another one, so a client that checks or stores the chain loses it. After a turn whose
# memory call was hidden, the proxy continues the thread as a stateless replay (the hidden
# call and its output spliced back), also when it injects nothing: the upstream's answer
# says null, the client must be shown the id it continued from.
def _final_with_previous(rid: bytes) -> bytes:
    return FINAL["/responses"].replace(b"resp_2", rid).replace(
        b'"created_at":1,"output"', b'"created_at":1,"previous_response_id":null,"output"')


@pytest.mark.parametrize("stream", [True, False])
async def test_a_continuation_after_a_hidden_round_is_shown_its_previous_response_id(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    upstream.answers.extend([Scripted([MEMORY_CALLS["/responses"][1]]),
                             Scripted([_final_with_previous(b"resp_2")])])
    final = _final_with_previous(b"resp_3")
    if not stream:  # the completed event's response, as one JSON body
        final = orjson.dumps(orjson.loads(final.split(b"\n\n")[1].partition(b"data: ")[2])[
            "response"])
    upstream.answers.append(Scripted([final], headers={
        "Content-Type": "text/event-stream" if stream else "application/json"}))
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        first = [e async for e in await client.responses.create(
            model="m", input="hello there", stream=True)]
        seen = first[-1].response.id
        if stream:
            events = [e async for e in await client.responses.create(
                model="m", input="and then?", stream=True, previous_response_id=seen)]
            got = events[-1].response
        else:
            got = await client.responses.create(model="m", input="and then?",
                                                previous_response_id=seen)
    assert seen == "resp_2"
    sent = upstream.received[-1]["json"]
    assert "previous_response_id" not in sent, "the thread went as a stateless replay"
    assert [i.get("type") for i in sent["input"]][1:3] == ["function_call",
                                                           "function_call_output"]
    assert (got.id, got.previous_response_id) == ("resp_3", "resp_2")


# -- Azure's query string and api-key header on every round ----------------------------------
# Reported: ``?api-version=`` dropped or not kept on a proxy's own calls, and Azure's
# ``api-key`` header (instead of a bearer token) not forwarded, so a deployment answers 404
# or 401. Both must reach every round, the hidden ones too.
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_the_query_string_and_api_key_header_reach_every_round(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([first]), Scripted([FINAL[path]])])
    query = "?api-version=2024-10-21&beta=true"
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path + query, data=orjson.dumps(body),
                                headers={"api-key": TEST_KEY,
                                         "Content-Type": "application/json"}) as resp:
            got = await resp.read()
            assert resp.status == 200
    assert b"memory_grep" not in got and b"done" in got
    assert [r["path_qs"] for r in upstream.received] == ["/v1" + path + query] * 2
    assert [r["headers"].get("api-key") for r in upstream.received] == [TEST_KEY] * 2


# -- an HTML page under 200 --------------------------------------------------------------------
# Reported: a captive portal or a CDN challenge page answered with ``200 text/html`` read as
# an API answer (or as an empty stream), so the client got a blank success. It must reach
# the client as sent: status, label and bytes, for the SDK to raise on.
CHALLENGE = (b"<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
             b"<body>Checking your browser</body></html>")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_an_html_page_under_200_reaches_the_client_as_sent(
        gated: Gated, path: str, stream: bool) -> None:
    upstream, proxy = gated
    upstream.answers.append(Scripted([CHALLENGE], headers={
        "Content-Type": "text/html; charset=UTF-8"}))
    body = dict(MEMORY_CALLS[path][0], stream=stream)
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers=HEADERS) as resp:
            got = await resp.read()
            assert (resp.status, resp.headers["Content-Type"]) == (
                200, "text/html; charset=UTF-8")
    assert got == CHALLENGE


# -- one SSE line of a megabyte ------------------------------------------------------------
# Reported: line readers with a fixed buffer (aiohttp's ``readuntil``, 128 KiB) failing with
# "Chunk too big" on one event of a base64 image or a long tool result. A 1 MiB event, after
# a hidden round too, must reach the client whole.
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_a_one_megabyte_event_reaches_the_client_whole(
        gated: Gated, path: str) -> None:
    upstream, proxy = gated
    big = FINAL[path].replace(b"done", b"A" * (1 << 20))
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([big]), Scripted([first]), Scripted([big])])
    async with aiohttp.ClientSession() as session:
        for _ in range(2):  # answered at once, then after a hidden round
            async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                    headers=HEADERS) as resp:
                got = await resp.read()
                assert resp.status == 200
            assert b"A" * (1 << 20) in got and b"memory_grep" not in got
    assert got.count(b"\n\n") == big.count(b"\n\n")


# -- HTTP/1.0, Expect: 100-continue and chunked request bodies ------------------------------
# Reported: proxies that answer an HTTP/1.0 client with a chunked stream it cannot read,
# hang on ``Expect: 100-continue`` (curl's default above 1 KiB), or refuse a request body
# without ``Content-Length`` (``Transfer-Encoding: chunked`` from streaming HTTP clients).
def _request_head(path: str, version: str, extra: str) -> bytes:
    return (f"POST /v1{path} HTTP/{version}\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {TEST_KEY}\r\nx-api-key: {TEST_KEY}\r\n"
            f"Content-Type: application/json\r\nConnection: close\r\n{extra}\r\n").encode()


async def _exchange(port: int, head: bytes, body: bytes, *, wait_continue: bool = False
                    ) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        if wait_continue:  # the body goes only after the interim answer
            await writer.drain()
            assert await asyncio.wait_for(reader.readline(), 10) == b"HTTP/1.1 100 Continue\r\n"
            assert await asyncio.wait_for(reader.readline(), 10) == b"\r\n"
        writer.write(body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


@pytest.mark.parametrize("client", ["http-1.0", "expect-100", "chunked-body"])
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_older_and_streaming_http_clients_get_the_answer(
        gated: Gated, path: str, client: str) -> None:
    upstream, proxy = gated
    body, first = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([first]), Scripted([FINAL[path]])])
    raw = orjson.dumps(body)
    if client == "chunked-body":
        half = len(raw) // 2
        sent = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (raw[:half], raw[half:]))
        got = await _exchange(proxy.port, _request_head(
            path, "1.1", "Transfer-Encoding: chunked\r\n"), sent + b"0\r\n\r\n")
    else:
        length = f"Content-Length: {len(raw)}\r\n"
        got = await _exchange(proxy.port, _request_head(
            path, "1.0" if client == "http-1.0" else "1.1",
            length + ("Expect: 100-continue\r\n" if client == "expect-100" else "")),
            raw, wait_continue=client == "expect-100")
    head, _, answer = got.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].endswith(b" 200 OK")
    if client == "http-1.0":  # no chunked framing for a client that cannot read it
        assert b"transfer-encoding" not in head.lower()
        last = answer.rstrip(b"\n").rpartition(b"\n\n")[2]  # whole, to its terminal event
        assert last.split(b"\n")[0] == FINAL[path].rstrip(b"\n").rpartition(
            b"\n\n")[2].split(b"\n")[0]
    assert b"done" in answer and b"memory_grep" not in answer
    assert upstream.received[0]["json"]["input" if path == "/responses" else "messages"]


# -- a stop sequence after a hidden round ------------------------------------------------------
# Reported: ``stop_reason: "stop_sequence"`` with its ``stop_sequence`` lost or replaced by
# ``end_turn`` by a proxy that rebuilds the final message. After a hidden memory round the
# client's final message must carry the round's own.
async def test_a_stop_sequence_after_a_hidden_round_reaches_the_client(
        gated: Gated) -> None:
    upstream, proxy = gated
    final = FINAL["/messages"].replace(b'"stop_reason":"end_turn","stop_sequence":null',
                                       b'"stop_reason":"stop_sequence","stop_sequence":"###"')
    upstream.answers.extend([Scripted([MEMORY_CALLS["/messages"][1]]), Scripted([final])])
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                        max_retries=0) as client:
        async with client.messages.stream(model="claude", max_tokens=50, messages=SDK_USER,
                                          stop_sequences=["###"]) as stream:
            message = await stream.get_final_message()
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "###")
    assert [r["json"]["stop_sequences"] for r in upstream.received] == [["###"]] * 2
