"""The fake upstream's ``POST /v1/responses``: the OpenAI Responses API's byte format.

JSON answers are whole ``response`` objects; streams are SSE blocks of
``event: <type>`` and ``data: <json>`` lines (``response.created``,
``response.in_progress``, ``response.output_item.added``/``done``,
``response.content_part.added``/``done``, ``response.output_text.delta``/``done``,
``response.function_call_arguments.delta``/``done``, then one of
``response.completed``/``incomplete``/``failed``), every event with its
``sequence_number`` and, for item events, its ``output_index``; no ``[DONE]``.
Like the real API with ``store`` on, the fake keeps each response's input and
output, and answers ``previous_response_id`` it does not know with a 400; with
``store: false`` a reasoning item carries its ``encrypted_content`` only when
``include`` asks for it, and one in the input without it is answered with the
real API's 404 (nothing was kept to look it up by).
Tests script answers with :meth:`tests.fake_upstream.FakeUpstream.push_response`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web


def _usage() -> dict[str, Any]:
    return {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15}


@dataclass
class RReply:
    """One scripted Responses answer."""

    text: str | None = "ok"
    calls: list[dict[str, Any]] = field(default_factory=list)  # [{"call_id","name","arguments"}]
    reasoning: str | None = None  # an encrypted reasoning item first, with this content
    response_status: str = "completed"  # or "incomplete", "failed"
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=_usage)
    piece: int = 4  # characters per text or arguments delta
    write_size: int | None = None  # re-split the SSE bytes into writes of this size
    crlf: bool = False
    delay: float = 0.0  # seconds between writes
    answer_delay: float = 0.0  # seconds before answering at all
    raw_stream: bytes | None = None  # a stream: exactly these bytes
    drop_after: int | None = None  # a stream: hang up after this many bytes


def _listed(item: Any, new_id: str) -> Any:
    """An input item as ``input_items`` lists it: with an id and a type, a message's
    text as an ``input_text`` part."""
    if not isinstance(item, dict):
        return item
    out = dict(item, id=item.get("id") or new_id)
    if "role" in out:
        out.setdefault("type", "message")
        if isinstance(out.get("content"), str):
            out["content"] = [{"type": "input_text", "text": out["content"]}]
    return out


class ResponsesFake:
    """State of the fake's Responses endpoint (one per :class:`FakeUpstream`)."""

    def __init__(self) -> None:
        self.replies: list[RReply] = []
        self.stored: dict[str, list[Any]] = {}
        """response id → the whole conversation it ends (input items and output)."""
        self.conversations: dict[str, list[Any]] = {}
        """conversation id → its items so far (a request's ``conversation``: the
        model reads them before its input; its input and output are appended)."""
        self.objects: dict[str, dict[str, Any]] = {}
        """response id → the response object, as ``GET /v1/responses/{id}`` answers."""
        self.inputs: dict[str, list[Any]] = {}
        """response id → its input items (with ids), oldest first."""
        self.reasoned: set[int] = set()
        """Numbers of the responses whose output began with a reasoning item: their
        ``msg_``/``fc_`` items, sent back with their ids, need it before them."""
        self.ids = itertools.count(1)
        self.cancelled = 0
        """Requests whose handler was cancelled (the proxy closed the connection)."""

    def conversation(self, body: dict[str, Any]) -> list[Any] | None:
        """What the model reads for ``body``: the stored response it continues plus
        its input (``None``: an unknown ``previous_response_id``)."""
        given = body.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(
            given or [])
        conv = self.conversation_id(body)
        if conv is not None:
            return [*self.conversations.setdefault(conv, []), *items]
        prev = body.get("previous_response_id")
        if prev is None:
            return items
        if prev not in self.stored:
            return None
        return [*self.stored[prev], *items]

    @staticmethod
    def conversation_id(body: dict[str, Any]) -> str | None:
        """The request's ``conversation`` id (a string or ``{"id": ...}``), or ``None``."""
        conv = body.get("conversation")
        conv = conv.get("id") if isinstance(conv, dict) else conv
        return conv if isinstance(conv, str) else None

    @staticmethod
    def last_user_text(items: list[Any]) -> str:
        for item in reversed(items):
            if isinstance(item, dict) and item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    return content
                texts = [p["text"] for p in content if isinstance(p, dict)
                         and isinstance(p.get("text"), str)] if isinstance(content,
                                                                           list) else []
                return str(texts[-1]) if texts else ""  # the user's own (last) part
        return ""

    def build(self, body: dict[str, Any], reply: RReply) -> dict[str, Any]:
        """The whole response object for ``reply``."""
        n = next(self.ids)
        output: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            self.reasoned.add(n)
            output.append({"type": "reasoning", "id": f"rs_{n}", "summary": [],
                           "encrypted_content": reply.reasoning})
            if body.get("store") is False and "reasoning.encrypted_content" not in (
                    body.get("include") or []):
                output[-1]["encrypted_content"] = None
        if reply.text is not None:
            output.append({"type": "message", "id": f"msg_{n}", "status": "completed",
                           "role": "assistant",
                           "content": [{"type": "output_text", "text": reply.text,
                                        "annotations": [], "logprobs": []}]})
        for k, call in enumerate(reply.calls):
            output.append({"type": "function_call", "id": f"fc_{n}_{k}",
                           "call_id": call["call_id"], "name": call["name"],
                           "arguments": call["arguments"], "status": "completed"})
        return {
            "id": f"resp_{n:04d}", "object": "response", "created_at": time.time(),
            "status": reply.response_status, "background": False, "error": None,
            "incomplete_details": ({"reason": "max_output_tokens"}
                                   if reply.response_status == "incomplete" else None),
            "instructions": body.get("instructions"), "max_output_tokens": None,
            "model": body.get("model", "fake-model"), "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None}, "store": body.get("store", True),
            "temperature": 1.0, "text": {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
            "top_p": 1.0, "truncation": "disabled", "usage": reply.usage, "user": None,
            "metadata": {},
        }

    def stream_bytes(self, resp: dict[str, Any], reply: RReply) -> bytes:
        """The SSE bytes OpenAI sends for ``resp`` (see module docstring)."""
        events: list[dict[str, Any]] = []
        seq = itertools.count(0)

        def emit(kind: str, **fields: Any) -> None:
            events.append({"type": kind, "sequence_number": next(seq), **fields})

        start = dict(resp, status="in_progress", output=[], usage=None)
        emit("response.created", response=start)
        emit("response.in_progress", response=start)
        step = max(1, reply.piece)
        for i, item in enumerate(resp["output"]):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                emit("response.output_item.added", output_index=i,
                     item=dict(item, status="in_progress", content=[]))
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                emit("response.content_part.added", item_id=item["id"], output_index=i,
                     content_index=0, part=part)
                for at in range(0, len(text), step):
                    emit("response.output_text.delta", item_id=item["id"], output_index=i,
                         content_index=0, delta=text[at:at + step], logprobs=[])
                emit("response.output_text.done", item_id=item["id"], output_index=i,
                     content_index=0, text=text, logprobs=[])
                emit("response.content_part.done", item_id=item["id"], output_index=i,
                     content_index=0, part=dict(part, text=text))
            elif item["type"] == "function_call":
                args = item["arguments"]
                emit("response.output_item.added", output_index=i,
                     item=dict(item, arguments="", status="in_progress"))
                for at in range(0, len(args), step):
                    emit("response.function_call_arguments.delta", item_id=item["id"],
                         output_index=i, delta=args[at:at + step])
                emit("response.function_call_arguments.done", item_id=item["id"],
                     output_index=i, arguments=args)
            else:
                emit("response.output_item.added", output_index=i, item=item)
            emit("response.output_item.done", output_index=i, item=item)
        terminal = {"completed": "response.completed", "incomplete": "response.incomplete",
                    "failed": "response.failed"}[resp["status"]]
        emit(terminal, response=resp)
        nl = b"\r\n" if reply.crlf else b"\n"
        return b"".join(b"event: " + ev["type"].encode() + nl + b"data: " + orjson.dumps(ev)
                        + nl + nl for ev in events)

    def unpaired(self, given: Any) -> str | None:
        """The real API's error for an output item sent back with its id but without
        the reasoning item it came with, or ``None``."""
        seen: set[str] = set()
        for item in given if isinstance(given, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            kind, rid = item.get("type", "message"), item["id"]
            seen.add(rid)
            if kind not in ("message", "function_call") or "_" not in rid:
                continue
            number = rid.split("_")[1]
            if number.isdigit() and int(number) in self.reasoned \
                    and f"rs_{number}" not in seen:
                return (f"Item '{rid}' of type '{kind}' was provided without its required"
                        f" 'reasoning' item: 'rs_{number}'.")
        return None

    def _missing(self, rid: str) -> web.Response:
        return web.json_response(
            {"error": {"message": f"Response with id '{rid}' not found.",
                       "type": "invalid_request_error", "param": None, "code": None}},
            status=404)

    async def read(self, request: web.Request) -> web.Response:
        """``GET /v1/responses/{id}``: the stored response object."""
        rid = request.match_info["rid"]
        found = self.objects.get(rid)
        return web.json_response(found) if found is not None else self._missing(rid)

    async def delete(self, request: web.Request) -> web.Response:
        """``DELETE /v1/responses/{id}``."""
        rid = request.match_info["rid"]
        if self.objects.pop(rid, None) is None:
            return self._missing(rid)
        self.stored.pop(rid, None)
        self.inputs.pop(rid, None)
        return web.json_response({"id": rid, "object": "response.deleted", "deleted": True})

    async def input_items(self, request: web.Request) -> web.Response:
        """``GET /v1/responses/{id}/input_items`` (one page, ``order`` as asked)."""
        rid = request.match_info["rid"]
        if rid not in self.inputs:
            return self._missing(rid)
        data = list(self.inputs[rid])
        if request.query.get("order", "desc") != "asc":
            data.reverse()
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def answer(self, request: web.Request, body: Any,
                     streams: list[bytes]) -> web.StreamResponse:
        """Answer one recorded request ``body``."""
        if not isinstance(body, dict):
            return web.json_response(
                {"error": {"message": "request body must be a JSON object",
                           "type": "invalid_request_error", "param": None, "code": None}},
                status=400)
        reply = self.replies.pop(0) if self.replies else None
        if reply is not None and reply.answer_delay:
            try:
                await asyncio.sleep(reply.answer_delay)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if reply is not None and reply.status >= 400:
            err = reply.error or {"message": "fake error", "type": "server_error",
                                  "param": None, "code": None}
            return web.json_response({"error": err}, status=reply.status, headers=reply.headers)
        if body.get("store") is False:
            bare = [i.get("id") for i in body.get("input") or []
                    if isinstance(i, dict) and i.get("type") == "reasoning"
                    and not i.get("encrypted_content")]
            if bare:
                return web.json_response(
                    {"error": {"message": f"Item with id '{bare[0]}' not found. Items are"
                                          " not persisted when `store` is set to false. Try"
                                          " again with `store` set to true, or remove this"
                                          " item from your input.",
                               "type": "invalid_request_error", "param": "input",
                               "code": None}}, status=404)
        unpaired = self.unpaired(body.get("input"))
        if unpaired is not None:
            return web.json_response({"error": {"message": unpaired,
                                                "type": "invalid_request_error",
                                                "param": "input", "code": None}}, status=400)
        conversation = self.conversation(body)
        if conversation is None:
            return web.json_response(
                {"error": {"message": f"Previous response with id"
                                      f" '{body['previous_response_id']}' not found.",
                           "type": "invalid_request_error", "param": "previous_response_id",
                           "code": "previous_response_not_found"}}, status=400)
        if reply is None:
            reply = RReply(text="echo: " + self.last_user_text(conversation))
        resp = self.build(body, reply)
        if body.get("store", True) is not False:
            self.stored[resp["id"]] = [*conversation, *resp["output"]]
            self.objects[resp["id"]] = resp
            given = body.get("input")
            items = [{"role": "user", "content": given}] if isinstance(given, str) else list(
                given or [])
            self.inputs[resp["id"]] = [_listed(i, f"in_{resp['id']}_{k}")
                                       for k, i in enumerate(items)]
        conv = self.conversation_id(body)
        if conv is not None:
            resp["conversation"] = {"id": conv}
            self.conversations[conv] = [*conversation, *resp["output"]]
        if not body.get("stream"):
            return web.json_response(resp, headers=reply.headers)
        payload = (reply.raw_stream if reply.raw_stream is not None
                   else self.stream_bytes(resp, reply))
        streams.append(payload)
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                          "Cache-Control": "no-cache", **reply.headers})
        await out.prepare(request)
        size = reply.write_size or len(payload) or 1
        if reply.drop_after is not None:
            payload = payload[:reply.drop_after]
        try:
            for at in range(0, len(payload), size):
                await out.write(payload[at:at + size])
                if reply.delay:
                    await asyncio.sleep(reply.delay)
            if reply.drop_after is not None:  # hang up without the end of the body
                assert request.transport is not None
                request.transport.close()
                return out
            await out.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            self.cancelled += 1
            raise
        return out
