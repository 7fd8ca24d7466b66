"""The cheapest OpenAI-compatible upstream that still speaks the protocol, for benchmarks.

``lcm-proxy bench proxy`` must show what the proxy adds, so the upstream it talks
to has to cost as little as possible and the same on every request. The test
suite's fake (``tests/fake_upstream.py``) is scriptable and records every request,
and is not part of the installed package; this one answers from prebuilt bytes and
looks only at the ``stream`` flag of the request. It serves
``POST /v1/chat/completions`` on 127.0.0.1 (never another interface):

- non-streaming: one ``chat.completion`` JSON object (``application/json``);
- streaming: ``stream_chunks`` SSE events (a role delta, content deltas, a
  ``finish_reason`` delta), then ``data: [DONE]``, each event its own write so the
  client sees a real stream rather than one buffered body.

So that the README's keyless trial reaches every API that gets memory, it also
answers the Responses API (``POST /v1/responses``) and Anthropic's Messages API
(``POST /v1/messages``) with the same text, as JSON or, with ``"stream": true``, as
the SSE events the official SDKs parse. Those two build each answer per request
(each response and message has an id of its own, which the proxy keys threads by);
no benchmark measures them. ``lcm-proxy bench upstream`` serves this fake on its own,
in the foreground, for that trial.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from aiohttp import web

REPLY_TEXT = (
    "Here is a short answer from the benchmark upstream. It is long enough to look like a "
    "real reply (a few sentences) and short enough that copying it costs next to nothing."
)
"""The assistant content of every answer (streamed answers split it into deltas)."""

_BASE = {"id": "chatcmpl-bench", "created": 1_700_000_000, "model": "bench-model",
         "system_fingerprint": "fp_bench"}


def completion_body() -> bytes:
    """Return the non-streaming answer: a ``chat.completion`` object as JSON bytes."""
    return orjson.dumps(dict(
        _BASE, object="chat.completion",
        choices=[{"index": 0, "logprobs": None, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": REPLY_TEXT, "refusal": None}}],
        usage={"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
    ))


def stream_events(n_chunks: int = 20) -> list[bytes]:
    """Return the SSE events of the streamed answer: ``n_chunks`` chunk events (at least
    3: role, content deltas, finish) followed by ``data: [DONE]``, each ending ``\\n\\n``."""
    n_content = max(1, min(len(REPLY_TEXT), n_chunks - 2))
    cuts = [len(REPLY_TEXT) * k // n_content for k in range(n_content + 1)]
    pieces = [REPLY_TEXT[a:b] for a, b in itertools.pairwise(cuts)]
    deltas: list[dict[str, object]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": p} for p in pieces]
    events = []
    for i, delta in enumerate(deltas + [{}]):
        finish = "stop" if i == len(deltas) else None
        chunk = dict(_BASE, object="chat.completion.chunk",
                     choices=[{"index": 0, "delta": delta, "logprobs": None,
                               "finish_reason": finish}])
        events.append(b"data: " + orjson.dumps(chunk) + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


class BenchUpstream:
    """A running fake upstream; :meth:`start` returns its base URL (``…/v1``)."""

    def __init__(self, stream_chunks: int = 20) -> None:
        self.body = completion_body()
        self.events = stream_events(stream_chunks)
        self.app = web.Application()
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_post("/v1/responses", self.responses)
        self.app.router.add_post("/v1/messages", self.messages)
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def start(self) -> str:
        """Listen on 127.0.0.1 on a free port; return ``http://127.0.0.1:PORT/v1``."""
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Close the listening socket and open connections."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """Answer a chat completion: JSON, or SSE when the body asks ``"stream": true``."""
        raw = await request.read()
        try:
            streamed = orjson.loads(raw).get("stream") is True
        except (orjson.JSONDecodeError, AttributeError):
            return _bad_body()
        if not streamed:
            return web.Response(body=self.body, content_type="application/json",
                                headers={"x-request-id": "req_bench"})
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            "x-request-id": "req_bench",
        })
        await response.prepare(request)
        for event in self.events:
            await response.write(event)
        await response.write_eof()
        return response

    async def responses(self, request: web.Request) -> web.StreamResponse:
        """Answer ``POST /v1/responses``: a ``response`` object holding one assistant
        message of :data:`REPLY_TEXT`, or its SSE events when ``"stream": true``."""
        body = await _json_body(request)
        if body is None:
            return _bad_body()
        resp = response_object(next(self._ids), str(body.get("model", "bench-model")),
                               body.get("previous_response_id"))
        if body.get("stream") is not True:
            return web.json_response(resp, headers={"x-request-id": "req_bench"})
        return await _stream(request, response_events(resp))

    async def messages(self, request: web.Request) -> web.StreamResponse:
        """Answer Anthropic's ``POST /v1/messages``: a ``message`` with one text block of
        :data:`REPLY_TEXT`, or its SSE events when ``"stream": true``."""
        body = await _json_body(request)
        if body is None:
            return _bad_body()
        message = anthropic_message(next(self._ids), str(body.get("model", "bench-model")))
        if body.get("stream") is not True:
            return web.json_response(message, headers={"request-id": "req_bench"})
        return await _stream(request, anthropic_events(message))


def _bad_body() -> web.Response:
    return web.json_response(
        {"error": {"message": "bad body", "type": "invalid_request_error",
                   "param": None, "code": None}}, status=400)


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    """The request's JSON object, or ``None`` when the body is not one."""
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


async def _stream(request: web.Request, events: list[bytes]) -> web.StreamResponse:
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
        "x-request-id": "req_bench",
    })
    await response.prepare(request)
    for event in events:
        await response.write(event)
    await response.write_eof()
    return response


def _sse(name: str, obj: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(obj) + b"\n\n"


def _pieces(n: int = 8) -> list[str]:
    cuts = [len(REPLY_TEXT) * k // n for k in range(n + 1)]
    return [REPLY_TEXT[a:b] for a, b in itertools.pairwise(cuts)]


def response_object(n: int, model: str, previous: Any = None) -> dict[str, Any]:
    """The Responses API's ``response`` object number ``n`` (id ``resp_bench_N``): one
    completed assistant message of :data:`REPLY_TEXT`; usage in tokens."""
    text = {"type": "output_text", "text": REPLY_TEXT, "annotations": [], "logprobs": []}
    return {
        "id": f"resp_bench_{n}", "object": "response", "created_at": 1_700_000_000,
        "status": "completed", "error": None, "incomplete_details": None,
        "instructions": None, "model": model, "parallel_tool_calls": True,
        "output": [{"type": "message", "id": f"msg_bench_{n}", "status": "completed",
                    "role": "assistant", "content": [text]}],
        "previous_response_id": previous, "tool_choice": "auto", "tools": [],
        "text": {"format": {"type": "text"}}, "truncation": "disabled", "metadata": {},
        "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 160},
    }


def response_events(resp: dict[str, Any]) -> list[bytes]:
    """The SSE events OpenAI streams for ``resp`` (from ``response.created`` to
    ``response.completed``, each with its ``sequence_number``)."""
    seq = itertools.count(0)
    item = resp["output"][0]
    ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    empty = dict(item["content"][0], text="")
    start = dict(resp, status="in_progress", output=[], usage=None)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": start}),
        ("response.in_progress", {"response": start}),
        ("response.output_item.added", {"output_index": 0,
                                        "item": dict(item, status="in_progress", content=[])}),
        ("response.content_part.added", dict(ids, part=empty)),
        *(("response.output_text.delta", dict(ids, delta=p, logprobs=[])) for p in _pieces()),
        ("response.output_text.done", dict(ids, text=REPLY_TEXT, logprobs=[])),
        ("response.content_part.done", dict(ids, part=item["content"][0])),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": resp}),
    ]
    return [_sse(kind, {"type": kind, "sequence_number": next(seq), **fields})
            for kind, fields in steps]


def anthropic_message(n: int, model: str) -> dict[str, Any]:
    """Anthropic's ``message`` object number ``n`` (id ``msg_bench_N``): one text block
    of :data:`REPLY_TEXT`, ``end_turn``; usage in tokens."""
    return {"id": f"msg_bench_{n}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": REPLY_TEXT}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 40}}


def anthropic_events(message: dict[str, Any]) -> list[bytes]:
    """The SSE events Anthropic streams for ``message`` (``message_start`` to
    ``message_stop``)."""
    start = dict(message, content=[], stop_reason=None,
                 usage=dict(message["usage"], output_tokens=1))
    events = [_sse("message_start", {"type": "message_start", "message": start}),
              _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})]
    events += [_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": p}})
               for p in _pieces()]
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return events
