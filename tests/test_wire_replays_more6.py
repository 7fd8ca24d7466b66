"""Replays of failure kinds, rows 134 on of docs/evaluation/wire_replays.md: the loose
ends of rows 118–133 (an MCP approval answer in the client's input, the service tier of
an answer summed over rounds, a hidden round's reasoning in a whole answer). The proxy
on its memory path (the memory tools offered), a loopback upstream writing each API's
real bytes, the real SDKs or aiohttp's client."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

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
    DONE_TEXT,
    MEMORY_ITEM,
    MEMORY_USE,
    _message,
)


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
