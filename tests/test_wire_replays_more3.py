"""Replays of failure kinds, rows 94 on of docs/evaluation/wire_replays.md: what a hidden
round leaves in the client's view, no-argument memory calls, and kinds probed from the
API references (signed thinking, stop reasons, refusals, logprobs, ``n``, encrypted
reasoning, incomplete responses). Same setting as tests/test_wire_replays.py: the proxy
on its memory path (the memory tools offered), a loopback upstream writing each API's
real bytes, the real SDKs as clients."""

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
    SDK_USER,
    Gated,
    Scripted,
    chunk,
    ev,
    gated,  # noqa: F401 - the fixture
)
from tests.replay_helpers import events as _events
from tests.replay_helpers import post as _post
from tests.test_wire_replays_more2 import MEMORY_CALL, _empty_text_then_call


def _anthropic(proxy: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3],
                                    max_retries=0)


def _openai(proxy: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url, max_retries=0)


def _blank(text: Any) -> bool:
    return isinstance(text, str) and not text.strip()


# -- 94: a hidden round's empty text block, as the client sees it and sends it back ------------
# Row 88 kept the hidden round's empty (or whitespace) text block out of the turn the proxy
# sends on, but the client was still shown it: its SDK's message held two text blocks, and
# the client sent the empty one back on its next turn, which Anthropic refuses ("text
# content blocks must be non-empty"). A single upstream answer would hold one block.
@pytest.mark.parametrize("text", ["", " \n"])
async def test_a_hidden_rounds_empty_text_block_is_not_shown(gated: Gated, text: str) -> None:
    upstream, proxy = gated
    upstream.answers.extend([Scripted([_empty_text_then_call(text)]),
                             Scripted([FINAL["/messages"]]), Scripted([FINAL["/messages"]])])
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            message = await s.get_final_message()
        shown = [b.model_dump(exclude_none=True) for b in message.content]
        assert shown == [{"type": "text", "text": "done"}]
        # the client's next turn: what it was shown goes back
        await client.messages.create(model="claude", max_tokens=50, messages=[
            *SDK_USER, {"role": "assistant", "content": shown},
            {"role": "user", "content": "and then?"}])
    for received in upstream.received[1:]:
        blocks = [b for m in received["json"]["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]
        assert not [b for b in blocks if b.get("type") == "text" and _blank(b.get("text"))]


async def test_an_answers_own_empty_text_block_still_reaches_the_client_as_sent(
        gated: Gated) -> None:
    """The answering round's blocks are the client's as the upstream wrote them."""
    upstream, proxy = gated
    answer = _empty_text_then_call("").replace(b"memory_grep", b"get_weather")
    upstream.answers.append(Scripted([answer]))
    status, _, got = await _post(proxy, "/messages", {
        "model": "claude", "max_tokens": 50, "messages": SDK_USER, "stream": True,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]})
    assert (status, got) == (200, answer)


def _responses_round(rid: str, items: list[dict[str, Any]], status: str = "completed",
                     **extra: Any) -> bytes:
    """A Responses stream of ``items``: each item's added/done (a message's text through
    its content part events), then ``response.completed``."""
    resp = {"id": rid, "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    out = [ev("response.created", {"type": "response.created", "response": resp})]
    for i, item in enumerate(items):
        start = dict(item, status="in_progress")
        if item["type"] == "message":
            start["content"] = []
        elif item["type"] == "function_call":
            start["arguments"] = ""
        out.append(ev("response.output_item.added", {
            "type": "response.output_item.added", "output_index": i, "item": start}))
        for j, part in enumerate(item.get("content") or []):
            base = {"output_index": i, "item_id": item["id"], "content_index": j}
            out.append(ev("response.content_part.added", dict(
                base, type="response.content_part.added", part=dict(part, text=""))))
            if part["text"]:
                out.append(ev("response.output_text.delta", dict(
                    base, type="response.output_text.delta", delta=part["text"])))
            out.append(ev("response.output_text.done", dict(
                base, type="response.output_text.done", text=part["text"])))
            out.append(ev("response.content_part.done", dict(
                base, type="response.content_part.done", part=part)))
        if item["type"] == "function_call":
            out.append(ev("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "output_index": i,
                "item_id": item["id"], "arguments": item["arguments"]}))
        out.append(ev("response.output_item.done", {
            "type": "response.output_item.done", "output_index": i, "item": item}))
    done = dict(resp, status=status, output=items, **extra,
                usage={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7})
    out.append(ev(f"response.{status}", {"type": f"response.{status}", "response": done}))
    seq = [b.replace(b"{\"type\"", b"{\"sequence_number\":%d,\"type\"" % n, 1)
           for n, b in enumerate(out)]
    return b"".join(seq)


def _message(mid: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": mid, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _call(arguments: str, call_id: str = "call_m") -> dict[str, Any]:
    return {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": "memory_grep",
            "arguments": arguments, "status": "completed"}


@pytest.mark.parametrize("text", ["", " \n"])
async def test_a_hidden_rounds_empty_output_text_is_not_shown(gated: Gated, text: str) -> None:
    upstream, proxy = gated
    hidden = _responses_round("resp_1", [_message("msg_1", text), _call("{\"query\":\"x\"}")])
    answer = _responses_round("resp_2", [_message("msg_2", "done")])
    upstream.answers.extend([Scripted([hidden]), Scripted([answer])])
    async with _openai(proxy) as client:
        async with client.responses.stream(model="m", input="hello there") as s:
            response = await s.get_final_response()
    assert [(o.type, o.id) for o in response.output] == [("message", "msg_2")]
    assert response.output_text == "done"
    # the client's response is the one the upstream can continue from: not the hidden
    # round's, which ends in an unanswered memory call
    assert response.id == "resp_2"


@pytest.mark.parametrize("text", ["", " \n"])
async def test_a_hidden_rounds_blank_content_is_not_shown_nor_sent_back(
        gated: Gated, text: str) -> None:
    upstream, proxy = gated
    first = b"".join([chunk({"role": "assistant", "content": ""}),
                      *([chunk({"content": text})] if text else []),
                      chunk({"tool_calls": [MEMORY_CALL]}), chunk({}, "tool_calls"),
                      b"data: [DONE]\n\n"])
    upstream.answers.extend([Scripted([first]), Scripted([FINAL["/chat/completions"]])])
    async with _openai(proxy) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True)]
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "done"
    turn = [m for m in upstream.received[1]["json"]["messages"] if m.get("tool_calls")][0]
    # a bridge to Anthropic makes a text block of a string content (row 88)
    assert turn.get("content") is None, turn


# -- 95: a no-argument memory call streamed with ``arguments: ""`` -----------------------------
# OpenAI-compatible servers (vLLM, llama.cpp, Ollama) stream a call without arguments as
# ``""``. openai-python's ``json.loads`` refuses it; openai-agents reads ``""`` as ``{}`` and
# sends ``"{}"`` back (``chatcmpl_converter``). The proxy runs it as ``{}`` and sends
# ``"{}"`` back: vLLM's and bridges' templates parse the arguments of every past call.
def _responses_arguments(sent: dict[str, Any]) -> list[Any]:
    return [i["arguments"] for i in sent["input"] if isinstance(i, dict)
            and i.get("type") == "function_call"]


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_memory_call_with_empty_arguments_runs_and_goes_back_as_an_object(
        gated: Gated, api: str, stream: bool) -> None:
    upstream, proxy = gated
    if api == "chat":
        call = dict(MEMORY_CALL, function={"name": "memory_grep", "arguments": ""})
        if stream:
            first = b"".join([chunk({"role": "assistant", "tool_calls": [call]}),
                              chunk({}, "tool_calls"), b"data: [DONE]\n\n"])
            answers = [Scripted([first]), Scripted([FINAL["/chat/completions"]])]
        else:
            plain = {k: v for k, v in call.items() if k != "index"}
            answers = [Scripted([orjson.dumps({
                "id": "c", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": None, "tool_calls": [plain]}}]})],
                headers=JSON), Scripted([orjson.dumps({
                    "id": "c2", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant", "content": "done"}}]})], headers=JSON)]
        body: dict[str, Any] = {"model": "m", "messages": SDK_USER, "stream": stream}
        path = "/chat/completions"
    else:
        first = _responses_round("resp_1", [_call("")])
        final = _responses_round("resp_2", [_message("msg_2", "done")])
        if stream:
            answers = [Scripted([first]), Scripted([final])]
        else:
            def whole(raw: bytes) -> bytes:
                return orjson.dumps(_events(raw)[-1]["response"])
            answers = [Scripted([whole(first)], headers=JSON),
                       Scripted([whole(final)], headers=JSON)]
        body = {"model": "m", "input": "hello there", "stream": stream}
        path = "/responses"
    upstream.answers.extend(answers)
    status, _, got = await _post(proxy, path, body)
    assert status == 200 and b"done" in got and b"memory_grep" not in got
    sent = upstream.received[1]["json"]
    if api == "chat":
        args = [c["function"]["arguments"] for m in sent["messages"]
                for c in m.get("tool_calls") or []]
        results = [m["content"] for m in sent["messages"] if m.get("role") == "tool"]
    else:
        args = _responses_arguments(sent)
        results = [i["output"] for i in sent["input"] if isinstance(i, dict)
                   and i.get("type") == "function_call_output"]
    assert args == ["{}"]
    assert "not valid JSON" not in results[0], results


# -- 96-105: probed from the API references, each with and without a hidden round --------------
def _anthropic_stream(mid: str, blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]],
                      stop: str) -> bytes:
    """A Messages stream: each block's start (its content as streamed) and deltas."""
    out = [ev("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": "claude", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1}}})]
    for i, (start, deltas) in enumerate(blocks):
        out.append(ev("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": start}))
        out += [ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": d}) for d in deltas]
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 9}}))
    out.append(ev("message_stop", {"type": "message_stop"}))
    return b"".join(out)


SIGNED = ({"type": "thinking", "thinking": "", "signature": ""},
          [{"type": "thinking_delta", "thinking": "Check memory."},
           {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJw=="}])
REDACTED = ({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}, [])
GREP = ({"type": "tool_use", "id": "toolu_m", "name": "memory_grep", "input": {}},
        [{"type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}])


def _text(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]


@pytest.mark.parametrize("hidden", [True, False])
async def test_signed_and_redacted_thinking_cross_a_hidden_round_unchanged(
        gated: Gated, hidden: bool) -> None:
    """96: the hidden round's thinking goes back first and byte-equal; the answering
    round's thinking reaches the SDK with its signature."""
    upstream, proxy = gated
    answer = _anthropic_stream("msg_2", [SIGNED, REDACTED, _text("done")], "end_turn")
    if hidden:
        upstream.answers.append(Scripted([_anthropic_stream(
            "msg_1", [SIGNED, REDACTED, GREP], "tool_use")]))
    upstream.answers.append(Scripted([answer]))
    async with _anthropic(proxy) as client:
        async with client.messages.stream(
                model="claude", max_tokens=2000, messages=SDK_USER,
                thinking={"type": "enabled", "budget_tokens": 1024}) as s:
            message = await s.get_final_message()
    assert [b.model_dump(exclude_none=True) for b in message.content] == [
        {"type": "thinking", "thinking": "Check memory.",
         "signature": "EqQBCgIYAhIM1gbcDa9GJw=="},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"},
        {"type": "text", "text": "done"}]
    assert len(upstream.received) == (2 if hidden else 1)
    if hidden:
        turn = upstream.received[1]["json"]["messages"][-2]
        assert turn["content"] == [
            {"type": "thinking", "thinking": "Check memory.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJw=="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"},
            {"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
             "input": {"query": "x"}}]


@pytest.mark.parametrize("stop", ["pause_turn", "refusal"])
@pytest.mark.parametrize("hidden", [True, False])
async def test_pause_turn_and_refusal_reach_the_sdk(gated: Gated, stop: str,
                                                    hidden: bool) -> None:
    """97, 98: the answering round's stop reason is the client's."""
    upstream, proxy = gated
    if hidden:
        upstream.answers.append(Scripted([_anthropic_stream("msg_1", [GREP], "tool_use")]))
    upstream.answers.append(Scripted([_anthropic_stream("msg_2", [_text("so far")], stop)]))
    async with _anthropic(proxy) as client:
        async with client.messages.stream(model="claude", max_tokens=50,
                                          messages=SDK_USER) as s:
            message = await s.get_final_message()
    assert message.stop_reason == stop
    assert [b.model_dump(exclude_none=True) for b in message.content] == [
        {"type": "text", "text": "so far"}]


LOGPROBS = {"content": [{"token": "no", "logprob": -0.1, "bytes": [110, 111],
                         "top_logprobs": []}], "refusal": None}


def _chat_chunk(choices: list[dict[str, Any]], cid: str = "chatcmpl-r") -> bytes:
    return b"data: " + orjson.dumps({"id": cid, "object": "chat.completion.chunk",
                                     "created": 1, "model": "m", "choices": choices}) + b"\n\n"


@pytest.mark.parametrize("hidden", [True, False])
async def test_a_refusal_with_logprobs_after_a_hidden_round_reaches_the_sdk(
        gated: Gated, hidden: bool) -> None:
    """99: ``delta.refusal`` and ``logprobs`` of the answering round."""
    upstream, proxy = gated
    if hidden:
        upstream.answers.append(Scripted([b"".join([
            chunk({"role": "assistant", "content": None, "tool_calls": [MEMORY_CALL]}),
            chunk({}, "tool_calls"), b"data: [DONE]\n\n"])]))
    upstream.answers.append(Scripted([b"".join([
        _chat_chunk([{"index": 0, "delta": {"role": "assistant", "refusal": ""},
                      "logprobs": None, "finish_reason": None}]),
        _chat_chunk([{"index": 0, "delta": {"refusal": "I can't help with that."},
                      "logprobs": LOGPROBS, "finish_reason": None}]),
        _chat_chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]),
        b"data: [DONE]\n\n"])]))
    async with _openai(proxy) as client:
        async with client.chat.completions.stream(
                model="m", messages=SDK_USER, logprobs=True) as s:
            final = await s.get_final_completion()
    choice = final.choices[0]
    assert choice.message.refusal == "I can't help with that." and not choice.message.content
    assert choice.finish_reason == "stop"
    assert choice.logprobs is not None and choice.logprobs.content is not None
    assert [t.token for t in choice.logprobs.content] == ["no"]


async def test_n_2_gets_no_memory_tools_and_its_choices_pass_as_sent(gated: Gated) -> None:
    """100: with ``n: 2`` no hidden round could be hidden in every choice, so the memory
    tools are not offered (``ChatWire.can_offer``); a call of that name in one choice is
    not the proxy's, and the stream reaches the client as the upstream wrote it."""
    upstream, proxy = gated
    answer = b"".join([
        _chat_chunk([{"index": 0, "delta": {"role": "assistant", "tool_calls": [MEMORY_CALL]},
                      "finish_reason": None},
                     {"index": 1, "delta": {"role": "assistant", "content": "other"},
                      "finish_reason": None}]),
        _chat_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"},
                     {"index": 1, "delta": {}, "finish_reason": "stop"}]),
        b"data: [DONE]\n\n"])
    upstream.answers.append(Scripted([answer]))
    async with _openai(proxy) as client:
        got = [c async for c in await client.chat.completions.create(
            model="m", messages=SDK_USER, stream=True, n=2)]
    assert len(upstream.received) == 1
    assert not [t for t in upstream.received[0]["json"].get("tools") or []
                if t["function"]["name"].startswith("memory_")]
    ends = sorted((c.index, c.finish_reason) for g in got for c in g.choices
                  if c.finish_reason)
    assert ends == [(0, "tool_calls"), (1, "stop")]
    upstream.answers.append(Scripted([answer]))
    status, _, raw = await _post(proxy, "/chat/completions", {
        "model": "m", "messages": SDK_USER, "stream": True, "n": 2})
    assert (status, raw) == (200, answer)


def _reasoning(rid: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": rid, "summary": [],
            "encrypted_content": "gAAAAB" + rid * 20}


@pytest.mark.parametrize("hidden", [True, False])
async def test_encrypted_reasoning_without_store_crosses_a_hidden_round(
        gated: Gated, hidden: bool) -> None:
    """101: the hidden round's encrypted reasoning goes back before its call; the
    client is shown the answering round's."""
    upstream, proxy = gated
    if hidden:
        upstream.answers.append(Scripted([_responses_round(
            "resp_1", [_reasoning("rs_1"), _call("{\"query\":\"x\"}")])]))
    upstream.answers.append(Scripted([_responses_round(
        "resp_2", [_reasoning("rs_2"), _message("msg_2", "done")])]))
    async with _openai(proxy) as client:
        async with client.responses.stream(
                model="m", input="hello there", store=False,
                include=["reasoning.encrypted_content"]) as s:
            response = await s.get_final_response()
    assert [o.id for o in response.output] == ["rs_2", "msg_2"]
    assert response.output[0].encrypted_content == _reasoning("rs_2")["encrypted_content"]
    if hidden:
        sent = upstream.received[1]["json"]
        assert sent["store"] is False
        kinds = [(i.get("type"), i.get("encrypted_content")) for i in sent["input"]
                 if isinstance(i, dict) and i.get("type", "message") != "message"]
        assert kinds == [("reasoning", _reasoning("rs_1")["encrypted_content"]),
                         ("function_call", None), ("function_call_output", None)], kinds


@pytest.mark.parametrize("hidden", [True, False])
async def test_an_incomplete_response_after_a_hidden_round_reaches_the_sdk(
        gated: Gated, hidden: bool) -> None:
    """102: ``response.incomplete`` as the terminal event of the answering round."""
    upstream, proxy = gated
    if hidden:
        upstream.answers.append(Scripted([_responses_round(
            "resp_1", [_call("{\"query\":\"x\"}")])]))
    upstream.answers.append(Scripted([_responses_round(
        "resp_2", [_message("msg_2", "cut sho")], "incomplete",
        incomplete_details={"reason": "max_output_tokens"})]))
    # (the SDK's ``responses.stream`` helper wants ``response.completed`` and raises
    # without it, straight to the upstream too: read the events instead)
    async with _openai(proxy) as client:
        events = [e async for e in await client.responses.create(
            model="m", input="hello there", max_output_tokens=16, stream=True)]
    response = events[-1].response  # type: ignore[union-attr]
    events = [e.type for e in events]
    assert events[-1] == "response.incomplete"
    assert response.status == "incomplete" and response.output_text == "cut sho"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.id == "resp_2" and response.usage is not None
    assert response.usage.total_tokens == (14 if hidden else 7)
