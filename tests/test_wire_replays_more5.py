"""Replays of failure kinds, rows 118 on of docs/evaluation/wire_replays.md: newer API
surface (Claude Code's ``?beta=true``, Anthropic's usage breakdown and one-hour cache,
Responses MCP items, partial images, prompt templates, grammar tools) and HTTP details
(``Connection: close``, trailers, long URLs). The proxy on its memory path (the memory
tools offered), a loopback upstream writing each API's real bytes, the real SDKs or
aiohttp's client."""

from __future__ import annotations

import asyncio
import base64
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import aiohttp
import anthropic
import openai
import orjson
import pytest
from aiohttp import web

from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    JSON,
    MEMORY_CALLS,
    SDK_USER,
    USER,
    Gated,
    GatedUpstream,
    Scripted,
    block_event,
    ev,
    gated,  # noqa: F401 - the fixture
    gated_proxy,
    message_start,
    messages_call_whole_in_start,
    post,
)
from tests.replay_helpers import events as _events
from tests.test_wire_replays_refs import SERVER_BLOCKS


def _anthropic(proxy: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                    max_retries=0)


def _openai(proxy: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url, max_retries=0)


def _message(blocks: list[dict[str, Any]], stop: str, usage: dict[str, Any],
             msg_id: str = "msg_1", **extra: Any) -> dict[str, Any]:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": "claude",
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage,
            **extra}


MEMORY_USE = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
              "input": {"query": "build flag"}}
DONE_TEXT = {"type": "text", "text": "done"}
_CHAT_CALL = {"role": "assistant", "content": None, "tool_calls": [{
    "id": "call_m", "type": "function",
    "function": {"name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}
_USAGE = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
WHOLE_CALL: dict[str, Any] = {
    "/chat/completions": {"id": "chatcmpl-m", "object": "chat.completion", "created": 1,
                          "model": "m", "choices": [{"index": 0, "message": _CHAT_CALL,
                                                     "finish_reason": "tool_calls"}]},
    "/messages": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                  "content": [MEMORY_USE], "stop_reason": "tool_use", "stop_sequence": None,
                  "usage": {"input_tokens": 5, "output_tokens": 2}},
    "/responses": {"id": "resp_1", "object": "response", "status": "completed", "model": "m",
                   "created_at": 1, "usage": _USAGE, "output": [{
                       "type": "function_call", "id": "fc_1", "call_id": "call_m",
                       "name": "memory_grep", "arguments": "{\"query\": \"x\"}",
                       "status": "completed"}]},
}
"""path → a whole answer whose one call is a memory call."""
WHOLE_DONE: dict[str, Any] = {
    "/chat/completions": {"id": "chatcmpl-d", "object": "chat.completion", "created": 1,
                          "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                                     "message": {"role": "assistant",
                                                                 "content": "done"}}]},
    "/messages": {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
                  "content": [DONE_TEXT], "stop_reason": "end_turn", "stop_sequence": None,
                  "usage": {"input_tokens": 5, "output_tokens": 2}},
    "/responses": {"id": "resp_2", "object": "response", "status": "completed", "model": "m",
                   "created_at": 1, "usage": _USAGE, "output": [{
                       "type": "message", "id": "msg_2", "status": "completed",
                       "role": "assistant", "content": [{
                           "type": "output_text", "text": "done", "annotations": []}]}]},
}
"""path → a whole answer with the text "done"."""


# -- 118: Claude Code's ``POST /v1/messages?beta=true`` ----------------------------------------
# Reported: relays that route on the path with its query answer "404 Route
# /v1/messages?beta=true not found", or drop the query. Claude Code sends it on every
# call (the Python SDK's beta client no longer does: ``extra_query`` stands in for it);
# every round, the hidden one too, must reach the upstream with it.
@pytest.mark.parametrize("stream", [True, False])
async def test_the_beta_query_of_claude_code_reaches_every_round(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        upstream.answers.extend([Scripted([messages_call_whole_in_start()]),
                                 Scripted([FINAL["/messages"]])])
    else:
        usage = {"input_tokens": 5, "output_tokens": 2}
        upstream.answers.extend([
            Scripted([orjson.dumps(_message([MEMORY_USE], "tool_use", usage))], headers=JSON),
            Scripted([orjson.dumps(_message([DONE_TEXT], "end_turn", usage, "msg_2"))],
                     headers=JSON)])
    async with _anthropic(proxy) as client:
        kw: Any = {"model": "claude", "max_tokens": 50, "messages": SDK_USER,
                   "betas": ["context-management-2025-06-27"],
                   "extra_query": {"beta": "true"}}
        if stream:
            async with client.beta.messages.stream(**kw) as s:
                final = await s.get_final_message()
        else:
            final = await client.beta.messages.create(**kw)
    assert [(b.type, getattr(b, "text", None)) for b in final.content] == [("text", "done")]
    assert [r["path_qs"] for r in upstream.received] == ["/v1/messages?beta=true"] * 2
    assert {r["headers"]["anthropic-beta"] for r in upstream.received} == {
        "context-management-2025-06-27"}


# -- 119: Anthropic usage with its breakdown and its string fields ----------------------------
# Reported: gateways that rebuild ``usage`` keep only the flat counts and lose
# ``cache_creation`` (5-minute against 1-hour writes, priced differently),
# ``server_tool_use`` and ``service_tier`` (a string). After a hidden round the client
# must get each count summed over both rounds, the breakdown too, and the string kept.
ROUND_USAGE = [
    {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 0,
     "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 100},
     "output_tokens": 9, "server_tool_use": {"web_search_requests": 1},
     "service_tier": "standard"},
    {"input_tokens": 7, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100,
     "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
     "output_tokens": 2, "server_tool_use": {"web_search_requests": 0},
     "service_tier": "standard"},
]
SUMMED_USAGE = {
    "input_tokens": 12, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 100,
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 100},
    "output_tokens": 11, "server_tool_use": {"web_search_requests": 1},
    "service_tier": "standard"}


def _usage_stream(block: dict[str, Any], stop: str, usage: dict[str, Any],
                  msg_id: str) -> bytes:
    """A Messages stream as the API writes it: ``message_start`` with the input side
    (``output_tokens`` 1), ``message_delta`` with the cumulative counts."""
    start = dict(usage, output_tokens=1)
    delta = {k: v for k, v in usage.items() if k not in ("cache_creation", "service_tier")}
    out = [ev("message_start", {"type": "message_start", "message": _message(
        [], None, start, msg_id)})]  # type: ignore[arg-type]
    if block["type"] == "text":
        out += [block_event("content_block_start", 0, content_block={"type": "text",
                                                                     "text": ""}),
                block_event("content_block_delta", 0, delta={"type": "text_delta",
                                                             "text": block["text"]})]
    else:
        out.append(block_event("content_block_start", 0, content_block=block))
    out += [block_event("content_block_stop", 0),
            ev("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": stop, "stop_sequence": None}, "usage": delta}),
            ev("message_stop", {"type": "message_stop"})]
    return b"".join(out)


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_usage_breakdown_after_a_hidden_round_is_summed(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        upstream.answers.extend([
            Scripted([_usage_stream(MEMORY_USE, "tool_use", ROUND_USAGE[0], "msg_1")]),
            Scripted([_usage_stream(DONE_TEXT, "end_turn", ROUND_USAGE[1], "msg_2")])])
    else:
        upstream.answers.extend([
            Scripted([orjson.dumps(_message([MEMORY_USE], "tool_use", ROUND_USAGE[0]))],
                     headers=JSON),
            Scripted([orjson.dumps(_message([DONE_TEXT], "end_turn", ROUND_USAGE[1],
                                            "msg_2"))], headers=JSON)])
    async with _anthropic(proxy) as client:
        kw: Any = {"model": "claude", "max_tokens": 50, "messages": SDK_USER}
        if stream:
            async with client.messages.stream(**kw) as s:
                final = await s.get_final_message()
        else:
            final = await client.messages.create(**kw)
    assert len(upstream.received) == 2 and final.content[0].type == "text"
    got = final.usage.model_dump(exclude_none=True)
    want = dict(SUMMED_USAGE)
    if stream:  # the SDK reads cache_creation from message_start only
        got.pop("cache_creation", None)
        want.pop("cache_creation")
    assert got == want


# -- 120: one-hour cache breakpoints before five-minute ones ---------------------------------
# Anthropic's prompt-caching guide: a ``ttl: "1h"`` breakpoint must not come after a
# 5-minute one in tools → system → messages order (a 400 otherwise); reported: the TTL
# dropped by gateways (the 1-hour write billed and kept as 5 minutes). Every round keeps
# the client's TTLs, in the client's order; the proxy adds no breakpoint.
def _ttls(body: dict[str, Any]) -> list[str]:
    blocks = [*body.get("tools", []), *body.get("system", [])]
    for m in body["messages"]:
        if isinstance(m["content"], list):
            blocks.extend(m["content"])
    return [b["cache_control"].get("ttl", "5m") for b in blocks if "cache_control" in b]


async def test_one_hour_cache_breakpoints_keep_their_ttl_and_order(gated: Gated) -> None:
    upstream, proxy = gated
    hour = {"type": "ephemeral", "ttl": "1h"}
    body: dict[str, Any] = {"model": "claude", "max_tokens": 50, "stream": True,
            "tools": [{"name": "get_time", "input_schema": {"type": "object"},
                       "cache_control": hour}],
            "system": [{"type": "text", "text": "Be brief.", "cache_control": hour}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hello there",
                 "cache_control": {"type": "ephemeral"}}]}]}
    upstream.answers.extend([Scripted([MEMORY_CALLS["/messages"][1]]),
                             Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", body,
                                {"anthropic-beta": "extended-cache-ttl-2025-04-11"})
    assert status == 200 and b"memory_grep" not in got and len(upstream.received) == 2
    for sent in upstream.received:
        assert _ttls(sent["json"]) == ["1h", "1h", "5m"]
        assert sent["json"]["tools"][0] == body["tools"][0]
        assert sent["headers"]["anthropic-beta"] == "extended-cache-ttl-2025-04-11"


# -- Responses streams built item by item -----------------------------------------------------
def _resp_stream(rid: str, items: list[tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]]
                 ) -> bytes:
    """A Responses stream of ``items``: each ``(done item, [(event, fields)])``, the
    events between its ``output_item.added`` (the item ``in_progress``) and ``.done``."""
    resp = {"id": rid, "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    out, seq = [ev("response.created", {"type": "response.created", "sequence_number": 0,
                                        "response": resp})], 1

    def add(name: str, **kw: Any) -> None:
        nonlocal seq
        out.append(ev(name, {"type": name, "sequence_number": seq, **kw}))
        seq += 1

    for i, (item, between) in enumerate(items):
        added = dict(item, status="in_progress")
        if item["type"] == "image_generation_call":
            added["result"] = None
        if item["type"] == "mcp_call":
            added.update(arguments="", output=None)
        add("response.output_item.added", output_index=i, item=added)
        for name, fields in between:
            add(name, output_index=i, item_id=item["id"], **fields)
        add("response.output_item.done", output_index=i, item=item)
    add("response.completed", response=dict(
        resp, status="completed", output=[it for it, _ in items],
        usage={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}))
    return b"".join(out)


MEMORY_ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_m",
               "name": "memory_grep", "arguments": "{\"query\": \"x\"}", "status": "completed"}
ANSWER_ITEM = {"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": "done", "annotations": []}]}
MCP_TOOL: Any = {"type": "mcp", "server_label": "ex", "server_url": "https://mcp.example/mcp",
            "require_approval": "never"}
LIST_TOOLS = {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "ex", "tools": [
    {"name": "search", "input_schema": {"type": "object"}, "description": "Search."}]}
MCP_CALL = {"type": "mcp_call", "id": "mcp_1", "server_label": "ex", "name": "search",
            "arguments": "{\"q\": \"alpha\"}", "output": "alpha found", "error": None,
            "status": "completed"}


def _mcp_round(rid: str, last: tuple[dict[str, Any], list[Any]]) -> bytes:
    return _resp_stream(rid, [
        (LIST_TOOLS, [("response.mcp_list_tools.in_progress", {}),
                      ("response.mcp_list_tools.completed", {})]),
        (MCP_CALL, [("response.mcp_call.in_progress", {}),
                    ("response.mcp_call_arguments.delta", {"delta": MCP_CALL["arguments"]}),
                    ("response.mcp_call_arguments.done", {"arguments": MCP_CALL["arguments"]}),
                    ("response.mcp_call.completed", {})]),
        last])


# -- 121: Responses remote-MCP items in a hidden round ----------------------------------------
# Reported: relays whose stream accumulators know only messages and function calls lose
# ``mcp_list_tools`` / ``mcp_call`` items and their ``response.mcp_*`` events. A round
# that listed and ran an MCP tool and then called a memory tool must send them back, in
# order, before its call; the client's SDK must read a consistent stream.
async def test_mcp_items_of_a_hidden_round_go_back_with_its_call(gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_mcp_round("resp_1", (MEMORY_ITEM, []))]),
        Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])])
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there", store=False,
                                           tools=[MCP_TOOL]) as stream:
            events = [e async for e in stream]
            final = await stream.get_final_response()
    assert final.output_text == "done" and "memory_grep" not in final.model_dump_json()
    seqs = [e.sequence_number for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len(upstream.received) == 2
    sent = upstream.received[1]["json"]
    assert [i.get("type") for i in sent["input"] if isinstance(i, dict)][-4:] == [
        "mcp_list_tools", "mcp_call", "function_call", "function_call_output"]
    assert [i for i in sent["input"] if i.get("type") == "mcp_call"] == [MCP_CALL]
    assert sent["tools"][0] == MCP_TOOL


# -- 122: an MCP approval request after a hidden round, answered on the next turn -------------
# The MCP guide: a tool with ``require_approval`` ends the response with an
# ``mcp_approval_request``; the client answers with an ``mcp_approval_response`` naming
# it, on a ``previous_response_id`` continuation. Reported: gateways that keep only
# function calls lose the request, and the upstream refuses the orphan response. After a
# hidden round the request reaches the client, and the continuation reaches the upstream
# with the request before its response.
APPROVAL = {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "ex",
            "name": "search", "arguments": "{\"q\": \"alpha\"}"}


async def test_an_approval_request_after_a_hidden_round_is_answered_in_order(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(LIST_TOOLS, []), (APPROVAL, [])])]),
        Scripted([FINAL["/responses"]])])
    tool: Any = dict(MCP_TOOL, require_approval="always")
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there",
                                           tools=[tool]) as stream:
            first = await stream.get_final_response()
        assert [o.type for o in first.output] == ["mcp_list_tools", "mcp_approval_request"]
        async with client.responses.stream(
                model="m", previous_response_id=first.id, tools=[tool],
                input=[{"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                        "approve": True}]) as stream:
            second = await stream.get_final_response()
    assert second.output_text == "done" and len(upstream.received) == 3
    sent = upstream.received[2]["json"]
    if sent.get("previous_response_id") is not None:  # the upstream holds the thread
        assert sent["previous_response_id"] == "resp_2"
    else:
        kinds = [i.get("type") for i in sent["input"] if isinstance(i, dict)]
        assert kinds[-2:] == ["mcp_approval_request", "mcp_approval_response"]


# -- 123: image generation with partial images after a hidden round ---------------------------
# Reported: ``response.image_generation_call.partial_image`` events unknown to relays
# (dropped, or their base64 cut); the SDK indexes them by ``output_index``. After a
# hidden round each partial image and the final result reach the SDK whole.
PARTIAL = base64.b64encode(bytes(range(256)) * 300).decode()
RESULT = base64.b64encode(bytes(range(255, -1, -1)) * 400).decode()


async def test_partial_images_after_a_hidden_round_reach_the_sdk_whole(gated: Gated) -> None:
    upstream, proxy = gated
    image = {"type": "image_generation_call", "id": "ig_1", "status": "completed",
             "result": RESULT}
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
        Scripted([_resp_stream("resp_2", [(image, [
            ("response.image_generation_call.in_progress", {}),
            ("response.image_generation_call.generating", {}),
            ("response.image_generation_call.partial_image", {
                "partial_image_index": 0, "partial_image_b64": PARTIAL}),
            ("response.image_generation_call.completed", {})])])])])
    async with _openai(proxy) as client:
        async with client.responses.stream(
                model="m", input="draw", tools=[{"type": "image_generation",
                                                 "partial_images": 1}]) as stream:
            events = [e async for e in stream]
            final = await stream.get_final_response()
    partial = [e for e in events if e.type == "response.image_generation_call.partial_image"]
    assert [(e.output_index, e.partial_image_b64) for e in partial] == [(0, PARTIAL)]
    assert [(o.type, getattr(o, "result", None)) for o in final.output] == [
        ("image_generation_call", RESULT)]
    assert len(upstream.received) == 2


# -- 124: newer request fields on every round ---------------------------------------------------
# Reported: relays with a closed list of request fields drop Responses' ``prompt``
# (reusable prompt templates, ``variables`` that may be input parts) and newer
# ``include`` values; Chat's ``store`` + ``metadata`` (stored completions) and
# ``top_logprobs``. A hidden round that lost one would answer another prompt.
FIELDS: dict[str, dict[str, Any]] = {
    "/responses": {
        "prompt": {"id": "pmpt_1", "version": "2", "variables": {
            "city": "Paris", "doc": {"type": "input_file", "file_id": "file-1"}}},
        "include": ["message.output_text.logprobs", "web_search_call.action.sources",
                    "code_interpreter_call.outputs", "message.input_image.image_url"],
        "top_logprobs": 2, "metadata": {"run": "r-1"}, "store": True},
    "/chat/completions": {"store": True, "metadata": {"run": "r-1"}, "logprobs": True,
                          "top_logprobs": 2},
}


@pytest.mark.parametrize("path", sorted(FIELDS))
async def test_newer_request_fields_reach_every_round(gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, call = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([call]), Scripted([FINAL[path]])])
    status, _, got = await post(proxy, path, dict(body, **FIELDS[path]))
    assert status == 200 and b"memory_grep" not in got and len(upstream.received) == 2
    for sent in upstream.received:
        assert {k: sent["json"].get(k) for k in FIELDS[path]} == FIELDS[path]


async def test_a_prompt_template_without_input_goes_as_sent(gated: Gated) -> None:
    upstream, proxy = gated
    body = {"model": "m", "stream": True, "prompt": FIELDS["/responses"]["prompt"]}
    upstream.answers.append(Scripted([FINAL["/responses"]]))
    status, _, got = await post(proxy, "/responses", body)
    assert (status, got) == (200, FINAL["/responses"])
    assert upstream.received[0]["raw"] == orjson.dumps(body)


# -- 125: custom tools constrained by a grammar -------------------------------------------------
# Reported: freeform tools with a Lark or regex grammar (``format: {type: "grammar"}``)
# rebuilt as function tools, or their definition re-escaped. On every round the client's
# tools reach the upstream as its bytes, ours after them.
DEFINITION = "start: \"SELECT \" NAME \"\\n\"\nNAME: /[a-z_]+/"
GRAMMAR_TOOLS = {
    "/responses": [{"type": "custom", "name": "sql", "description": "Run SQL.",
                    "format": {"type": "grammar", "syntax": "lark",
                               "definition": DEFINITION}},
                   {"type": "custom", "name": "date", "format": {
                       "type": "grammar", "syntax": "regex",
                       "definition": "^\\d{4}-\\d{2}-\\d{2}$"}}],
    "/chat/completions": [{"type": "custom", "custom": {
        "name": "sql", "description": "Run SQL.", "format": {
            "type": "grammar", "grammar": {"syntax": "lark", "definition": DEFINITION}}}}],
}


@pytest.mark.parametrize("path", sorted(GRAMMAR_TOOLS))
async def test_grammar_tools_reach_every_round_as_sent(gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, call = MEMORY_CALLS[path]
    tools = GRAMMAR_TOOLS[path]
    upstream.answers.extend([Scripted([call]), Scripted([FINAL[path]])])
    status, _, got = await post(proxy, path, dict(body, tools=tools))
    assert status == 200 and b"memory_grep" not in got and len(upstream.received) == 2
    for sent in upstream.received:
        assert sent["json"]["tools"][:len(tools)] == tools
        assert orjson.dumps(tools)[:-1] in sent["raw"], "the client's tools as its bytes"


# -- 126: an upstream that closes each connection (``Connection: close``) ----------------------
# Reported: proxies that relay the upstream's ``Connection`` header (hop-by-hop, RFC 9110
# §7.6.1) close the client's connection too, or reuse the closed upstream connection
# for the next round ("Server disconnected"). Each round gets a new connection; the
# client's stays its own.
class ClosingUpstream(GatedUpstream):
    """:class:`GatedUpstream` answering ``Connection: close`` and closing after each."""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.received.append({"path": request.path, "path_qs": request.path_qs, "raw": raw,
                              "json": orjson.loads(raw) if raw else None,
                              "headers": dict(request.headers)})
        answer = self.answers.popleft()
        resp = web.StreamResponse(status=answer.status, headers=answer.headers)
        resp.force_close()
        await resp.prepare(request)
        for piece in answer.pieces:
            await resp.write(piece)
        await resp.write_eof()
        return resp


@pytest.fixture
async def closing(tmp_path: Path) -> AsyncIterator[Gated]:
    async with gated_proxy(tmp_path, ClosingUpstream()) as pair:
        yield pair


@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_an_upstream_closing_each_connection_serves_every_round(
        closing: Gated, path: str) -> None:
    upstream, proxy = closing
    body, call = MEMORY_CALLS[path]
    async with aiohttp.ClientSession() as session:
        for _ in range(2):  # the second turn on the client's kept connection
            upstream.answers.extend([Scripted([call]), Scripted([FINAL[path]])])
            async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                    headers=HEADERS) as resp:
                got = await resp.read()
                assert resp.status == 200 and b"done" in got and b"memory_grep" not in got
                assert resp.headers.get("Connection", "").lower() != "close"
    assert len(upstream.received) == 4


# -- 127, 132, 133: answer framings aiohttp's server does not write ------------------------
# 127, RFC 9110 §6.5: a chunked message may end with trailer fields (``Trailer:``
# announced, fields after the last chunk), which some servers send (usage, checksums);
# a reader that expects ``0\r\n\r\n`` hangs or fails on them. 132, RFC 9112 §6.3: an
# HTTP/1.0 answer without ``Content-Length`` ends where the server closes (small
# servers, ``http.server``); read as empty, or the closed connection kept for the next
# round. 133, RFC 8297: ``103 Early Hints`` (CDNs) before the final status, relayed as
# the answer or hanging the reader. Raw bytes on a loopback socket.
FRAMINGS = ("trailers", "http-1.0", "early-hints")


class RawSocketUpstream:
    """A raw HTTP upstream answering each request (on kept-alive connections too) with
    the next of ``answers`` (``Content-Type``, body), framed as ``framing`` says (one
    of :data:`FRAMINGS`); records each request's head and body."""

    def __init__(self, framing: str) -> None:
        self.framing = framing
        self.answers: deque[tuple[str, bytes]] = deque()
        self.received: list[tuple[bytes, bytes]] = []
        self.server: asyncio.Server | None = None
        self.port = 0

    def frame(self, kind: str, payload: bytes) -> bytes:
        head = b"Content-Type: " + kind.encode() + b"\r\n"
        if self.framing == "http-1.0":
            return b"HTTP/1.0 200 OK\r\n" + head + b"\r\n" + payload
        out = []
        if self.framing == "early-hints":
            out.append(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
        out.append(b"HTTP/1.1 200 OK\r\n" + head + b"Transfer-Encoding: chunked\r\n"
                   + (b"Trailer: x-usage-tokens\r\n" if self.framing == "trailers" else b"")
                   + b"\r\n")
        for i in range(0, len(payload), 40):
            piece = payload[i:i + 40]
            out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
        out.append(b"0\r\nx-usage-tokens: 7\r\n\r\n" if self.framing == "trailers"
                   else b"0\r\n\r\n")
        return b"".join(out)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                self.received.append((head, body))
                writer.write(self.frame(*self.answers.popleft()))
                await writer.drain()
                if self.framing == "http-1.0":
                    break  # the body ends where the connection does
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]


@pytest.fixture(params=FRAMINGS)
async def framed(request: pytest.FixtureRequest, tmp_path: Path
                 ) -> AsyncIterator[tuple[RawSocketUpstream, RunningProxy]]:
    upstream = RawSocketUpstream(request.param)
    await upstream.start()
    proxy = await start_proxy(f"http://127.0.0.1:{upstream.port}/v1", tmp_path / "d",
                              tools={"offer": "always"})
    yield upstream, proxy
    await proxy.close()
    assert upstream.server is not None
    upstream.server.close()


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("path", sorted(MEMORY_CALLS))
async def test_answers_in_other_framings_serve_every_round(
        framed: tuple[RawSocketUpstream, RunningProxy], path: str, stream: bool) -> None:
    upstream, proxy = framed
    body, call = MEMORY_CALLS[path]
    models = b"{\"object\": \"list\", \"data\": []}"
    if stream:
        answers = [("text/event-stream", call), ("text/event-stream", FINAL[path])]
    else:
        answers = [("application/json", orjson.dumps(WHOLE_CALL[path])),
                   ("application/json", orjson.dumps(WHOLE_DONE[path]))]
    upstream.answers.extend([*answers, ("application/json", models)])
    status, _, got = await post(proxy, path, dict(body, stream=stream))
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    if not stream:
        assert orjson.loads(got)  # whole, not cut at a chunk
    async with aiohttp.ClientSession() as session:
        async with session.get(proxy.base_url + "/models", headers=HEADERS) as resp:
            assert (resp.status, await resp.read()) == (200, models)
    assert len(upstream.received) == 3


# -- 128: a URL of tens of kilobytes ----------------------------------------------------------
# Reported: "414 Request-URI Too Large" or a 502 from gateways whose request line is
# capped near 8 KiB (a long query of ids, a signed URL). A 24 KiB query reaches the
# upstream whole, on a pass-through GET and on each round of a memory path POST.
class LongLineUpstream(GatedUpstream):
    """:class:`GatedUpstream` whose request line may be 64 KiB (aiohttp's default is
    8190 bytes, below the proxy's 32 KiB)."""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/v1/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, max_line_size=65536)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


async def test_a_long_query_string_reaches_the_upstream_whole(tmp_path: Path) -> None:
    async with gated_proxy(tmp_path, LongLineUpstream()) as (upstream, proxy):
        await _long_query(upstream, proxy)


async def _long_query(upstream: GatedUpstream, proxy: RunningProxy) -> None:
    query = "ids=" + ",".join(f"file-{i:06d}" for i in range(2100))
    assert len(query) > 24 * 1024
    body, call = MEMORY_CALLS["/chat/completions"]
    upstream.answers.extend([Scripted([b"{\"data\": []}"], headers=JSON), Scripted([call]),
                             Scripted([FINAL["/chat/completions"]])])
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{proxy.base_url}/files?{query}", headers=HEADERS) as resp:
            assert (resp.status, await resp.read()) == (200, b"{\"data\": []}")
        async with session.post(f"{proxy.base_url}/chat/completions?{query}",
                                data=orjson.dumps(body), headers=HEADERS) as resp:
            got = await resp.read()
            assert resp.status == 200 and b"done" in got and b"memory_grep" not in got
    assert [r["path_qs"] for r in upstream.received] == [
        f"/v1/files?{query}", *[f"/v1/chat/completions?{query}"] * 2]


# -- 129: ``context_management`` of a plain (non-streamed) answer after a hidden round ---------
# The Messages reference's context editing: a plain answer carries a top-level
# ``context_management`` (``applied_edits``) beside ``container``. Reported (row 65,
# streams): gateways that rebuild the message keep only content, stop reason and usage.
async def test_context_management_of_a_plain_answer_after_a_hidden_round_reaches_the_client(
        gated: Gated) -> None:
    upstream, proxy = gated
    applied = {"applied_edits": [{"type": "clear_tool_uses_20250919",
                                  "cleared_tool_uses": 2, "cleared_input_tokens": 900}]}
    container = {"id": "container_1", "expires_at": "2026-12-07T13:00:00Z"}
    usage = {"input_tokens": 5, "output_tokens": 2}
    upstream.answers.extend([
        Scripted([orjson.dumps(_message([MEMORY_USE], "tool_use", usage,
                                        context_management={"applied_edits": []}))],
                 headers=JSON),
        Scripted([orjson.dumps(_message([DONE_TEXT], "end_turn", usage, "msg_2",
                                        context_management=applied, container=container))],
                 headers=JSON)])
    body = {"model": "claude", "max_tokens": 50, "messages": USER,
            "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}
    status, _, got = await post(proxy, "/messages", body)
    answer = orjson.loads(got)
    assert status == 200 and answer["content"] == [DONE_TEXT]
    assert answer["context_management"] == applied and answer["container"] == container
    assert len(upstream.received) == 2


# -- 130: server-side tool work of a hidden round in a whole (non-streamed) answer -------------
# Reported: a gateway that runs a tool loop of its own answers a non-streamed request with
# the last round's text only ("the image never left the proxy"). A round in which the
# upstream ran a server tool (an MCP call, an image, a web fetch, code execution) and the
# model then called a memory tool shows that work in a stream; a whole answer must hold
# it too, before the answering round's content, and the next turn, which sends it back,
# must reach the upstream with each block once.
IMAGE = {"type": "image_generation_call", "id": "ig_1", "status": "completed",
         "result": RESULT}
WEB_SEARCH = {"type": "web_search_call", "id": "ws_1", "status": "completed",
              "action": {"type": "search", "query": "alpha"}}
RESPONSES_WORK: dict[str, list[dict[str, Any]]] = {
    "mcp": [LIST_TOOLS, MCP_CALL], "image": [IMAGE], "web_search": [WEB_SEARCH]}


def _response(rid: str, items: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"id": rid, "object": "response", "status": "completed", "model": "m",
                         "created_at": 1, "output": items,
                         "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}})


@pytest.mark.parametrize("work", sorted(RESPONSES_WORK))
async def test_a_hidden_rounds_server_items_reach_a_whole_response(
        gated: Gated, work: str) -> None:
    upstream, proxy = gated
    items = RESPONSES_WORK[work]
    upstream.answers.extend([
        Scripted([_response("resp_1", [*items, MEMORY_ITEM])], headers=JSON),
        Scripted([_response("resp_2", [ANSWER_ITEM])], headers=JSON)])
    async with _openai(proxy) as client:
        done = await client.responses.create(model="m", input="hello there",
                                             tools=[MCP_TOOL])
    assert [o.model_dump(exclude_none=True) for o in done.output[:-1]] == [
        {k: v for k, v in i.items() if v is not None} for i in items]
    assert done.output_text == "done" and "memory_grep" not in done.model_dump_json()
    sent = upstream.received[1]["json"]["input"]
    assert [i.get("type") for i in sent][-len(items) - 2:] == [
        *(i["type"] for i in items), "function_call", "function_call_output"]


SERVER_WORK = cast(dict[str, list[dict[str, Any]]], SERVER_BLOCKS)
"""A hidden round's server work by kind (the same blocks as the streamed rows' test)."""


@pytest.mark.parametrize("work", sorted(SERVER_WORK))
async def test_a_hidden_rounds_server_blocks_reach_a_whole_message(
        gated: Gated, work: str) -> None:
    upstream, proxy = gated
    blocks = SERVER_WORK[work]
    usage = {"input_tokens": 5, "output_tokens": 2}
    upstream.answers.extend([
        Scripted([orjson.dumps(_message([*blocks, MEMORY_USE], "tool_use", usage))],
                 headers=JSON),
        Scripted([orjson.dumps(_message([DONE_TEXT], "end_turn", usage, "msg_2"))],
                 headers=JSON),
        Scripted([FINAL["/messages"]])])
    body: dict[str, Any] = {"model": "claude", "max_tokens": 50, "messages": USER}
    status, _, got = await post(proxy, "/messages", body)
    answer = orjson.loads(got)
    assert status == 200 and answer["content"] == [*blocks, DONE_TEXT]
    later = dict(body, stream=True, messages=[
        *USER, {"role": "assistant", "content": answer["content"]},
        {"role": "user", "content": "and then?"}])
    status, _, _ = await post(proxy, "/messages", later)
    assert status == 200 and len(upstream.received) == 3
    sent = upstream.received[2]["json"]["messages"]
    raw = upstream.received[2]["raw"]
    assert raw.count(blocks[0]["id"].encode()) == 2, "its use and its result, once each"
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"] == [*blocks, MEMORY_USE]
    assert sent[3]["content"] == [DONE_TEXT]


# -- 131: the next turn of a thread whose hidden round listed MCP tools ----------------------
# A client without stored responses (``store: false``) sends its output items back; the
# proxy splices the hidden round in front of the answer it showed. ``mcp_list_tools``
# (and ``mcp_approval_request``) are output items whose type does not end in ``_call``:
# read as a turn of their own, they split the client's answer, which then no longer
# matched the one it was shown, and the hidden call never went back.
@pytest.mark.parametrize("stream", [True, False])
async def test_a_thread_whose_hidden_round_listed_mcp_tools_goes_back_whole(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        upstream.answers.extend([Scripted([_mcp_round("resp_1", (MEMORY_ITEM, []))]),
                                 Scripted([_resp_stream("resp_2", [(ANSWER_ITEM, [])])])])
    else:
        upstream.answers.extend([
            Scripted([_response("resp_1", [LIST_TOOLS, MCP_CALL, MEMORY_ITEM])], headers=JSON),
            Scripted([_response("resp_2", [ANSWER_ITEM])], headers=JSON)])
    upstream.answers.append(Scripted([FINAL["/responses"]]))
    user: Any = [{"role": "user", "content": "hello there"}]
    body = {"model": "m", "input": user, "store": False, "tools": [MCP_TOOL], "stream": stream}
    status, _, got = await post(proxy, "/responses", body)
    shown = ([e for e in _events(got) if e.get("type") == "response.completed"][0]["response"]
             if stream else orjson.loads(got))["output"]
    assert status == 200 and [o["type"] for o in shown] == [
        "mcp_list_tools", "mcp_call", "message"]
    await proxy.settle()
    later = dict(body, stream=True, input=[*user, *shown,
                                           {"role": "user", "content": "and then?"}])
    status, _, _ = await post(proxy, "/responses", later)
    assert status == 200 and len(upstream.received) == 3
    sent = upstream.received[2]["json"]["input"]
    assert [i.get("type", i.get("role")) for i in sent] == [
        "user", "mcp_list_tools", "mcp_call", "function_call", "function_call_output",
        "message", "user"]
