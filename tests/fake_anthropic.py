"""The fake upstream's Anthropic Messages endpoint (``POST /v1/messages``).

Answers in Anthropic's byte format: a ``message`` object, or an SSE stream of
``event:``/``data:`` pairs — ``message_start``, ``ping``, per block
``content_block_start``/``content_block_delta``/``content_block_stop`` (``text_delta``,
``thinking_delta`` + ``signature_delta``, ``input_json_delta``), ``message_delta``
(``stop_reason``, cumulative ``usage``) and ``message_stop``; errors as
``{"type": "error", "error": {"type", "message"}}`` with the status and headers
scripted. Tests queue :class:`AReply` objects on ``fake.anthropic_replies``; with
none queued it answers ``"echo: <last user text>"``. Every request is recorded
in ``fake.requests`` like the chat endpoint's.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(id_: str, name: str, input_: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def thinking(t: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": signature}


@dataclass
class AReply:
    """One scripted answer."""

    content: list[dict[str, Any]] = field(default_factory=lambda: [text("ok")])
    stop_reason: str | None = None  # default: tool_use when a tool_use block, else end_turn
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=lambda: {
        "input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0})
    piece: int = 4  # characters per text/thinking delta, bytes per partial_json
    write_size: int | None = None  # re-split the SSE bytes into writes of this size
    delay: float = 0.0  # seconds between writes
    answer_delay: float = 0.0  # seconds before answering at all
    raw_stream: bytes | None = None
    drop_after: int | None = None  # a stream: close the connection after this many bytes


def _event(name: str, obj: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(obj) + b"\n\n"


def _stop(reply: AReply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if any(b.get("type") == "tool_use" for b in reply.content) else "end_turn"


def message(body: dict[str, Any], reply: AReply) -> dict[str, Any]:
    return {"id": "msg_fake", "type": "message", "role": "assistant",
            "model": body.get("model", "claude-fake"), "content": reply.content,
            "stop_reason": _stop(reply), "stop_sequence": None, "usage": reply.usage}


def stream_bytes(body: dict[str, Any], reply: AReply) -> bytes:
    """``reply`` as the SSE bytes Anthropic sends."""
    start = dict(message(body, reply), content=[], stop_reason=None,
                 usage=dict(reply.usage, output_tokens=1))
    out = _event("message_start", {"type": "message_start", "message": start})
    out += _event("ping", {"type": "ping"})
    n = max(1, reply.piece)
    for i, block in enumerate(reply.content):
        kind = block.get("type")
        if kind == "text":
            out += _event("content_block_start", {"type": "content_block_start", "index": i,
                                                  "content_block": dict(block, text="")})
            for s in range(0, len(block["text"]), n):
                out += _event("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "text_delta", "text": block["text"][s:s + n]}})
        elif kind == "thinking":
            out += _event("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            for s in range(0, len(block["thinking"]), n):
                out += _event("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "thinking_delta", "thinking": block["thinking"][s:s + n]}})
            out += _event("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "signature_delta", "signature": block["signature"]}})
        elif kind == "tool_use":
            out += _event("content_block_start", {"type": "content_block_start", "index": i,
                                                  "content_block": dict(block, input={})})
            args = orjson.dumps(block["input"]).decode()
            # The first delta is empty, as Anthropic sends it.
            for part in ["", *(args[s:s + n] for s in range(0, len(args), n))]:
                out += _event("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": part}})
        else:  # redacted_thinking and others: whole in the start event
            out += _event("content_block_start", {"type": "content_block_start", "index": i,
                                                  "content_block": block})
        out += _event("content_block_stop", {"type": "content_block_stop", "index": i})
    out += _event("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": _stop(reply), "stop_sequence": None},
        "usage": {"output_tokens": reply.usage["output_tokens"]}})
    out += _event("message_stop", {"type": "message_stop"})
    return out


def _last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            c = msg.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):  # the first text block (the proxy's block is last)
                return next((p.get("text", "") for p in c
                             if isinstance(p, dict) and p.get("type") == "text"), "")
    return ""


async def answer(fake: Any, request: web.Request) -> web.StreamResponse:
    """Answer one Messages request from ``fake.anthropic_replies``."""
    await fake._record(request)
    body = fake.requests[-1]["json"]
    if not isinstance(body, dict):
        return web.json_response({"type": "error", "error": {
            "type": "invalid_request_error", "message": "body must be a JSON object"}},
            status=400)
    reply = fake.anthropic_replies.popleft() if fake.anthropic_replies else AReply(
        content=[text("echo: " + _last_user_text(body))])
    if reply.answer_delay:
        try:
            await asyncio.sleep(reply.answer_delay)
        except asyncio.CancelledError:  # the caller went away before the answer
            fake.aborted += 1
            raise
    if reply.status >= 400:
        err = reply.error or {"type": "api_error", "message": "fake error"}
        return web.json_response({"type": "error", "error": err}, status=reply.status,
                                 headers={"request-id": "req_fake", **reply.headers})
    if not body.get("stream"):
        return web.json_response(message(body, reply),
                                 headers={"request-id": "req_fake", **reply.headers})
    payload = reply.raw_stream if reply.raw_stream is not None else stream_bytes(body, reply)
    fake.streams.append(payload)
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache", **reply.headers})
    await resp.prepare(request)
    size = reply.write_size or len(payload) or 1
    if reply.drop_after is not None:
        payload = payload[:reply.drop_after]
    try:
        for s in range(0, len(payload), size):
            await resp.write(payload[s:s + size])
            if reply.delay:
                await asyncio.sleep(reply.delay)
        if reply.drop_after is not None:  # hang up without the end of the body
            assert request.transport is not None
            request.transport.close()
            return resp
        await resp.write_eof()
    except (ConnectionResetError, asyncio.CancelledError):
        fake.aborted += 1
        raise
    fake.finished_streams += 1
    return resp
