"""Replays of failure kinds, rows 153 on of docs/evaluation/wire_replays.md: the last
text or call fragment carried by the finish chunk, empty-data and keep-alive events,
a Responses stream ending in ``response.failed``, a ``tool_use`` opened without
``input`` or streamed as JSON that does not parse, a resumed background stream,
citations on Chat deltas, and the proxy's own heartbeats after an upstream ``id:``
field. The proxy on its memory path (the memory tools offered), a loopback upstream
writing each API's real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY
from tests.replay_helpers import (
    FINAL,
    HEADERS,
    MEMORY_CALLS,
    USER,
    Gated,
    Scripted,
    block_event,
    chunk,
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


def _memory_call(args: str = _ARGS, **fields: Any) -> dict[str, Any]:
    return {"index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": args}, **fields}


def _memory_round() -> Scripted:
    return Scripted([chunk({"role": "assistant", "content": None,
                            "tool_calls": [_memory_call()]}),
                     chunk({}, "tool_calls"), _DONE])


def _chat_text(shown: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in shown
                   if c.get("choices"))


# -- 153: the last text in the finish chunk ----------------------------------------------------
# Mistral, Gemini's OpenAI endpoint and vLLM write the last piece of text in the same
# chunk as ``finish_reason`` instead of an empty-delta finish chunk; readers that stop at
# the finish reason lost the answer's last characters (jeremychone/rust-genai#164,
# vllm-project/vllm#35705). Here the answering round after a hidden round so written:
# the proxy restates that round's finish, and must keep its text.
async def test_text_in_the_finish_chunk_after_a_hidden_round_reaches_the_sdk(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        _memory_round(),
        Scripted([chunk({"role": "assistant", "content": "do"}),
                  chunk({"content": "ne"}, "stop"), _DONE])])
    async with _openai(proxy) as client:
        async with client.chat.completions.stream(model="m", messages=USER) as s:
            final = await s.get_final_completion()
    assert len(upstream.received) == 2, "the memory call was run"
    assert final.choices[0].message.content == "done"
    assert final.choices[0].finish_reason == "stop"


# -- 154: a memory call's arguments in the finish chunk ----------------------------------------
# Servers that merge the last ``delta.tool_calls`` fragment (or the whole call) into the
# chunk carrying ``finish_reason: "tool_calls"``; readers that settle the calls on the
# finish reason before reading that chunk's own fragment lose it
# (ranxianglei/billion-context#432, ducks/claux#43). Here a memory call so written must
# be run with its whole arguments and hidden.
@pytest.mark.parametrize("shape", ["last-fragment", "whole-call"])
async def test_a_memory_call_finished_in_its_finish_chunk_is_run_and_hidden(
        gated: Gated, shape: str) -> None:
    upstream, proxy = gated
    if shape == "last-fragment":
        pieces = [chunk({"role": "assistant", "content": None,
                         "tool_calls": [_memory_call("{\"query\": ")]}),
                  chunk({"tool_calls": [{"index": 0, "function": {
                      "arguments": "\"build flag\"}"}}]}, "tool_calls")]
    else:
        pieces = [chunk({"role": "assistant", "content": None}),
                  chunk({"tool_calls": [_memory_call()]}, "tool_calls")]
    upstream.answers.extend([Scripted([*pieces, _DONE]),
                             Scripted([FINAL["/chat/completions"]])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and _chat_text(_events(got)) == "done"
    sent = upstream.received[1]["json"]["messages"]
    call = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]
    assert orjson.loads(call["function"]["arguments"]) == {"query": "build flag"}
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_m"


# -- 155: events whose data is empty -----------------------------------------------------------
# Servers and intermediaries send ``data:`` with nothing after it (or only ``retry:`` /
# ``id:``) as keep-alives; readers that parse every data field as JSON failed the
# stream (modelcontextprotocol/python-sdk#1670, Growth-Circle/cadis#2329,
# openai/openai-python#3833). Here such events in the hidden round and the answering one.
_EMPTY = [b"data:\n\n", b"data: \n\n", b"retry: 1000\n\n"]


async def test_empty_data_events_neither_break_nor_show_the_hidden_round(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_EMPTY[0], chunk({"role": "assistant", "content": None,
                                    "tool_calls": [_memory_call()]}),
                  _EMPTY[1], chunk({}, "tool_calls"), _EMPTY[2], _DONE]),
        Scripted([_EMPTY[1], chunk({"role": "assistant", "content": "do"}), _EMPTY[0],
                  chunk({"content": "ne"}), _EMPTY[2], chunk({}, "stop"), _DONE])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and _chat_text(_events(got)) == "done"


# -- 156: Responses ``keepalive`` events -------------------------------------------------------
# Long Responses streams carry ``{"type": "keepalive", "sequence_number": n}`` events,
# undocumented; accumulators with a closed list of event types ended the stream
# (openai/openai-node#1964, openai/openai-java#767). Here between the items of a hidden
# round and of the answering one: the call run and hidden, the client's sequence
# numbers still increasing.
def _with_keepalives(stream: bytes) -> bytes:
    """``stream`` with a ``keepalive`` event after each event, renumbered."""
    out, seq = [], 0
    for event in _events(stream):
        for one in (event, {"type": "keepalive"}):
            out.append(ev(one["type"], {**one, "sequence_number": seq}))
            seq += 1
    return b"".join(out[:-1])  # the terminal event stays last


async def test_keepalive_events_neither_break_nor_show_the_hidden_round(
        gated: Gated) -> None:
    upstream, proxy = gated
    upstream.answers.extend([
        Scripted([_with_keepalives(_resp_stream("resp_1", [(MEMORY_ITEM, [])]))]),
        Scripted([_with_keepalives(_resp_stream("resp_2", [(ANSWER_ITEM, [])]))])])
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    assert b"memory_grep" not in got and b"resp_1" not in got
    shown = _events(got)
    numbers = [e["sequence_number"] for e in shown]
    assert numbers == sorted(set(numbers)), numbers
    assert shown[-1]["type"] == "response.completed"
    assert shown[-1]["response"]["output"][0]["content"][0]["text"] == "done"


# -- 157: ``response.failed`` after a hidden round ---------------------------------------------
# A Responses stream that ends with ``response.failed`` (status ``failed``, its
# ``error``) was read as an empty success by relays that know only ``completed``
# (langchain-ai/langchain#39041; BerriAI/litellm#40243 replaced the provider's code and
# message). Here the round after a hidden memory round fails: the client must get that
# terminal, its error as written, and no ``response.completed``.
async def test_a_failed_response_after_a_hidden_round_reaches_the_client(
        gated: Gated) -> None:
    upstream, proxy = gated
    error = {"code": "server_error", "message": "The model failed mid-way."}
    resp = {"id": "resp_2", "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    failed = b"".join([
        ev("response.created", {"type": "response.created", "sequence_number": 0,
                                "response": resp}),
        ev("response.failed", {"type": "response.failed", "sequence_number": 1,
                               "response": dict(resp, status="failed", error=error)})])
    upstream.answers.extend([Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                             Scripted([failed])])
    status, _, got = await post(proxy, "/responses", {"model": "m", "input": "hello there",
                                                      "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    kinds = [e["type"] for e in shown]
    assert kinds[-1] == "response.failed" and "response.completed" not in kinds, kinds
    assert shown[-1]["response"]["status"] == "failed"
    assert shown[-1]["response"]["error"] == error
    assert b"memory_grep" not in got


# -- 158: a ``tool_use`` opened without ``input`` ----------------------------------------------
# llama.cpp's Anthropic endpoint (and bridges) open a streamed ``tool_use`` block without
# the ``input`` field, the arguments following as ``input_json_delta``; strict readers
# refused the block (ggml-org/llama.cpp#22960, farion1231/cc-switch#2557). Here a
# memory call so streamed: run with its streamed input, hidden, sent back whole.
async def test_a_tool_use_opened_without_input_is_run_and_hidden(gated: Gated) -> None:
    upstream, proxy = gated
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep"}
    upstream.answers.extend([
        Scripted([message_start("msg_1"),
                  block_event("content_block_start", 0, content_block=use),
                  block_event("content_block_delta", 0, delta={
                      "type": "input_json_delta", "partial_json": "{\"query\": "}),
                  block_event("content_block_delta", 0, delta={
                      "type": "input_json_delta", "partial_json": "\"build flag\"}"}),
                  block_event("content_block_stop", 0),
                  ev("message_delta", {"type": "message_delta", "delta": {
                      "stop_reason": "tool_use", "stop_sequence": None},
                      "usage": {"output_tokens": 9}}),
                  ev("message_stop", {"type": "message_stop"})]),
        Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=USER) as s:
            final = await s.get_final_message()
    assert len(upstream.received) == 2, "the memory call was run"
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == "done"
    turns = upstream.received[1]["json"]["messages"]
    sent_use = [b for b in turns[-2]["content"] if b["type"] == "tool_use"]
    assert sent_use == [dict(use, input={"query": "build flag"})]


# -- 159: a memory call whose streamed input does not parse ------------------------------------
# Under fine-grained tool streaming (``eager_input_streaming``) the API streams tool
# input unvalidated, so the accumulated JSON may not parse; clients that parse it
# strictly crashed the turn (leohenon/pi-anthropic-oauth#11), and the API refuses a
# ``tool_use`` whose ``input`` is not an object when the turn goes back (its guide:
# wrap it, ``{"INVALID_JSON": "…"}``; dust-tt/dust#24414 did). Here a memory call so
# streamed: the proxy answers it with an error result, the turn goes back with an
# object ``input``, and the answer reaches the client.
async def test_a_memory_call_whose_streamed_input_does_not_parse_goes_back_as_an_object(
        gated: Gated) -> None:
    upstream, proxy = gated
    broken = "{\"query\": build flag}"
    use = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}}
    upstream.answers.extend([
        Scripted([message_start("msg_1"),
                  block_event("content_block_start", 0, content_block=use),
                  block_event("content_block_delta", 0, delta={
                      "type": "input_json_delta", "partial_json": broken}),
                  block_event("content_block_stop", 0),
                  ev("message_delta", {"type": "message_delta", "delta": {
                      "stop_reason": "tool_use", "stop_sequence": None},
                      "usage": {"output_tokens": 9}}),
                  ev("message_stop", {"type": "message_stop"})]),
        Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": True})
    assert status == 200 and len(upstream.received) == 2, "the memory call was answered"
    assert b"memory_grep" not in got
    turns = upstream.received[1]["json"]["messages"]
    sent_use = [b for b in turns[-2]["content"] if b["type"] == "tool_use"]
    assert len(sent_use) == 1 and isinstance(sent_use[0]["input"], dict), sent_use
    result = [b for b in turns[-1]["content"] if b["type"] == "tool_result"]
    assert result and result[0]["tool_use_id"] == "toolu_m"


# -- 160: resuming a background stream ---------------------------------------------------------
# ``GET /v1/responses/{id}?stream=true&starting_after=n`` resumes a background
# response's stream from a sequence number; gateways answered it with an empty 200 or
# dropped the query (BerriAI/litellm#26762, #26671). Here the events must reach the
# client as they come (the first before the upstream writes the rest), the query as
# sent.
async def test_a_resumed_background_stream_is_relayed_as_it_comes(gated: Gated) -> None:
    upstream, proxy = gated
    first = ev("response.output_text.delta", {
        "type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_2",
        "output_index": 0, "content_index": 0, "delta": "do"})
    rest = _resp_stream("resp_b", [(ANSWER_ITEM, [])])
    answer = Scripted([first, rest], gate_at=1)
    upstream.answers.append(answer)
    query = "?stream=true&starting_after=3"
    async with aiohttp.ClientSession() as session:
        async with session.get(proxy.base_url + "/responses/resp_b" + query,
                               headers=HEADERS) as resp:
            assert resp.status == 200
            head = b""
            while not head.endswith(b"\n\n"):
                head += await asyncio.wait_for(resp.content.read(1), 10)
            answer.gate.set()
            body = head + await resp.read()
    assert head == first and body == first + rest
    assert upstream.received[0]["raw_path_qs"] == "/v1/responses/resp_b" + query


# -- 161: citations on Chat deltas -------------------------------------------------------------
# Search models write ``url_citation`` annotations on ``delta.annotations`` (on the text's
# chunk or a later one); relays and SDK layers that rebuild deltas dropped them
# (openai/openai-agents-python#4252, BerriAI/litellm#41492). Here after a hidden round:
# the annotations reach the client as written.
async def test_delta_annotations_after_a_hidden_round_reach_the_client(
        gated: Gated) -> None:
    upstream, proxy = gated
    cite = [{"type": "url_citation", "url_citation": {
        "url": "https://example.org/flag", "title": "Flags", "start_index": 0,
        "end_index": 4}}]
    upstream.answers.extend([
        _memory_round(),
        Scripted([chunk({"role": "assistant", "content": "done"}),
                  chunk({"annotations": cite}), chunk({}, "stop"), _DONE])])
    status, _, got = await post(proxy, "/chat/completions", {
        "model": "m", "messages": USER, "stream": True,
        "web_search_options": {}})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert _chat_text(shown) == "done"
    assert [c["choices"][0]["delta"]["annotations"] for c in shown
            if c.get("choices") and "annotations" in c["choices"][0]["delta"]] == [cite]


# -- 162: the proxy's heartbeat after an upstream ``id:`` field --------------------------------
# A keep-alive comment followed by a blank line, sent once the client has seen an
# ``id:`` field, makes SSE readers that keep the last id (openai-python's and
# openai-go's decoders) dispatch an event with empty data and fail on its JSON
# (theopenco/llmgateway#2334 on openai/openai-python#2722; james-6-23/codex2api#696).
# Here the upstream writes ``id:`` on each event, a hidden round's preamble is shown,
# and the next round is slow enough for the proxy's heartbeats: the SDK must read the
# whole answer.
def _with_ids(pieces: list[bytes]) -> list[bytes]:
    return [b"id: %d\n" % i + p if p.startswith(b"data:") else p
            for i, p in enumerate(pieces)]


async def test_heartbeats_after_an_upstream_event_id_do_not_break_the_sdk(
        tmp_path: Path) -> None:
    async with gated_proxy(tmp_path, heartbeat_seconds=0.1) as (upstream, proxy):
        answer = Scripted(_with_ids([chunk({"role": "assistant", "content": "done"}),
                                     chunk({}, "stop"), _DONE]), gate_at=0)
        upstream.answers.extend([
            Scripted(_with_ids([chunk({"role": "assistant", "content": "Checking. "}),
                                chunk({"tool_calls": [_memory_call()]}),
                                chunk({}, "tool_calls"), _DONE])),
            answer])

        async def later() -> None:
            await asyncio.sleep(0.6)
            answer.gate.set()

        opener = asyncio.ensure_future(later())
        async with _openai(proxy) as client:
            stream = await client.chat.completions.create(model="m", messages=USER,
                                                          stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in stream
                            if c.choices])
        await opener
    assert len(upstream.received) == 2, "the memory call was run"
    assert text == "Checking. done"


async def test_responses_heartbeats_after_an_upstream_event_id_do_not_break_the_sdk(
        tmp_path: Path) -> None:
    preamble = {"type": "message", "id": "msg_p", "status": "completed",
                "role": "assistant", "content": [{
                    "type": "output_text", "text": "Checking. ", "annotations": []}]}
    first = _resp_stream("resp_1", [(preamble, []), (MEMORY_ITEM, [])])
    second = _resp_stream("resp_2", [(ANSWER_ITEM, [])])

    def with_ids(stream: bytes) -> list[bytes]:
        return [b"id: %d\n" % i + p for i, p in enumerate(
            ev(e["type"], e) for e in _events(stream))]

    async with gated_proxy(tmp_path, heartbeat_seconds=0.1) as (upstream, proxy):
        answer = Scripted(with_ids(second), gate_at=0)
        upstream.answers.extend([Scripted(with_ids(first)), answer])

        async def later() -> None:
            await asyncio.sleep(0.6)
            answer.gate.set()

        opener = asyncio.ensure_future(later())
        async with _openai(proxy) as client:
            stream = await client.responses.create(model="m", input="hello there",
                                                   stream=True)
            kinds = [e.type async for e in stream]
        await opener
    assert len(upstream.received) == 2, "the memory call was run"
    assert kinds[-1] == "response.completed", kinds





# -- 163: a Responses refusal after a hidden round ---------------------------------------------
# A refusal streams as a ``refusal`` content part with ``response.refusal.delta`` /
# ``.done`` events, no ``output_text``; bridges and accumulators that know only text
# lost it and showed an empty answer (BerriAI/litellm#39203,
# NousResearch/hermes-agent#91181). Here after a hidden round, through the SDK's
# ``responses.stream()``: the refusal is the client's answer, not held as a blank message.
REFUSAL = "I can't help with that."


async def test_a_responses_refusal_after_a_hidden_round_reaches_the_sdk(
        gated: Gated) -> None:
    upstream, proxy = gated
    item = {"type": "message", "id": "msg_r", "status": "completed", "role": "assistant",
            "content": [{"type": "refusal", "refusal": REFUSAL}]}
    part = {"type": "refusal", "refusal": ""}
    events = [("response.content_part.added", {"content_index": 0, "part": part}),
              ("response.refusal.delta", {"content_index": 0, "delta": REFUSAL[:8]}),
              ("response.refusal.delta", {"content_index": 0, "delta": REFUSAL[8:]}),
              ("response.refusal.done", {"content_index": 0, "refusal": REFUSAL}),
              ("response.content_part.done", {"content_index": 0,
                                              "part": dict(part, refusal=REFUSAL)})]
    upstream.answers.extend([Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                             Scripted([_resp_stream("resp_2", [(item, events)])])])
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there") as s:
            kinds = [e.type async for e in s]
            final = await s.get_final_response()
    assert len(upstream.received) == 2, "the memory call was run"
    assert kinds.count("response.refusal.delta") == 2 and "response.refusal.done" in kinds
    assert final.id == "resp_2"
    assert [(c.type, getattr(c, "refusal", None)) for o in final.output
            for c in getattr(o, "content", [])] == [("refusal", REFUSAL)]


# -- 164: Responses text logprobs after a hidden round -----------------------------------------
# With ``include: ["message.output_text.logprobs"]`` each ``output_text.delta`` carries
# ``logprobs`` and the done part holds them all; stream builders that rebuild the parts
# dropped them (vllm-project/vllm#57326, UKGovernmentBEIS/inspect_ai#5219). Here after a
# hidden round: the deltas' and the done item's logprobs reach the client as written.
async def test_responses_logprobs_after_a_hidden_round_reach_the_client(
        gated: Gated) -> None:
    upstream, proxy = gated
    probs = [{"token": "do", "logprob": -0.25, "bytes": [100, 111], "top_logprobs": []},
             {"token": "ne", "logprob": -0.5, "bytes": [110, 101], "top_logprobs": []}]
    text = {"type": "output_text", "text": "done", "annotations": [], "logprobs": probs}
    item = dict(ANSWER_ITEM, content=[text])
    events = [("response.output_text.delta", {"content_index": 0, "delta": p["token"],
                                              "logprobs": [p]}) for p in probs]
    upstream.answers.extend([Scripted([_resp_stream("resp_1", [(MEMORY_ITEM, [])])]),
                             Scripted([_resp_stream("resp_2", [(item, events)])])])
    status, _, got = await post(proxy, "/responses", {
        "model": "m", "input": "hello there", "stream": True,
        "include": ["message.output_text.logprobs"], "top_logprobs": 0})
    assert status == 200 and len(upstream.received) == 2, "the memory call was run"
    shown = _events(got)
    assert [e["logprobs"] for e in shown if e["type"] == "response.output_text.delta"] \
        == [[p] for p in probs]
    assert shown[-1]["response"]["output"][0]["content"][0]["logprobs"] == probs
    assert upstream.received[1]["json"]["include"] == ["message.output_text.logprobs"]


# -- 165: an error status whose body is labelled as an event stream ----------------------------
# Some upstreams answer a streaming request's error with a 4xx whose body is an SSE
# ``error`` event under ``text/event-stream``; proxies that decide by the label (or by
# the first bytes) read it as a stream, committed a 200 or hung
# (easychen/openai-api-proxy#33, inference-gateway/inference-gateway#578). Here such a
# 400 answering the first round and a hidden round: the client gets the status and
# bytes as sent.
_ERR_EVENT = ev("error", {"type": "error", "error": {
    "type": "invalid_request_error", "message": "context too long"}})


@pytest.mark.parametrize("after_hidden", [False, True])
@pytest.mark.parametrize("path", ["/chat/completions", "/messages", "/responses"])
async def test_an_error_status_with_an_event_stream_body_reaches_the_client_as_sent(
        gated: Gated, path: str, after_hidden: bool) -> None:
    upstream, proxy = gated
    body, call = MEMORY_CALLS[path]
    if after_hidden:
        upstream.answers.append(Scripted([call]))
    upstream.answers.append(Scripted([_ERR_EVENT], status=400,
                                     headers={"Content-Type": "text/event-stream",
                                              "x-request-id": "req_err"}))
    status, headers, got = await post(proxy, path, body)
    assert len(upstream.received) == (2 if after_hidden else 1)
    assert status == 400 and got == _ERR_EVENT
    assert headers.get("x-request-id") == "req_err"


# -- 166: a UTF-8 byte order mark before a whole JSON answer -----------------------------------
# RFC 8259 §8.1 forbids a BOM before networked JSON but lets parsers ignore one; servers
# on Windows stacks write it, and parsers that refuse it failed the call
# (hapijs/bourne#28, aacerox/node-rest-client#197). Python's ``json`` (the openai SDK's
# reader) ignores it; the proxy must too: a memory call in such an answer is run and
# hidden, and an answer it does not change reaches the client as its bytes.
_BOM = b"\xef\xbb\xbf"


def _whole(message: dict[str, Any], finish: str) -> bytes:
    return _BOM + orjson.dumps({"id": "c", "object": "chat.completion", "created": 1,
                                "model": "m", "choices": [{"index": 0, "message": message,
                                                           "finish_reason": finish}]})


async def test_a_whole_answer_after_a_byte_order_mark_is_read(gated: Gated) -> None:
    upstream, proxy = gated
    call = dict(_memory_call())
    call.pop("index")
    upstream.answers.extend([
        Scripted([_whole({"role": "assistant", "content": None, "tool_calls": [call]},
                         "tool_calls")], headers={"Content-Type": "application/json"}),
        Scripted([_whole({"role": "assistant", "content": "done"}, "stop")],
                 headers={"Content-Type": "application/json"})])
    async with _openai(proxy) as client:
        got = await client.chat.completions.create(model="m", messages=USER)
    assert len(upstream.received) == 2, "the memory call was run"
    assert got.choices[0].message.content == "done" and not got.choices[0].message.tool_calls
    answer = _whole({"role": "assistant", "content": "done"}, "stop")
    upstream.answers.append(Scripted([answer], headers={"Content-Type": "application/json"}))
    status, _, raw = await post(proxy, "/chat/completions", {"model": "m", "messages": USER})
    assert status == 200 and raw == answer
