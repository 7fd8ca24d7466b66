"""A fake OpenAI-compatible upstream: a real aiohttp app on 127.0.0.1, port 0.

It streams real SSE bytes (optionally with hostile chunking: tiny writes, CRLF,
keep-alive comments, pauses), streams tool-call fragments, answers errors with
headers, and records every request it received so tests can assert on what the
proxy sent. Tests script replies with :meth:`FakeUpstream.push`; with nothing
queued it answers ``"echo: <last user text>"``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from multidict import CIMultiDict

from tests.fake_responses import ResponsesFake, RReply


@dataclass
class Reply:
    """One scripted answer to a chat completion request."""

    content: str | None = "ok"
    tool_calls: list[dict[str, Any]] | None = None  # [{"id","name","arguments"}]
    finish_reason: str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    )
    n: int = 1
    # streaming shape
    piece: int = 4  # characters of content per delta
    write_size: int | None = None  # re-split the SSE bytes into writes of this size
    crlf: bool = False
    keepalive: bool = False
    delay: float = 0.0  # seconds between writes
    answer_delay: float = 0.0  # seconds before answering at all (timeouts)
    raw_stream: bytes | None = None  # send exactly these bytes as the stream
    raw_body: bytes | None = None  # non-stream: send exactly these bytes
    content_type: str | None = None
    drop_after: int | None = None  # close the connection after this many bytes
    reasoning: str | None = None  # streamed before the content, as reasoning deltas
    reasoning_key: str = "reasoning_content"  # DeepSeek/vLLM; OpenRouter: "reasoning"
    split_names: bool = True  # a tool call's name over two deltas; False: whole in the
    # first, as OpenAI sends it (the Agents SDK's stream handler keeps the last piece)


class FakeUpstream:
    """Holds the app, the scripted replies and the log of received requests."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        # Replies reserved for one model (e.g. the summarizer's), checked first.
        self.model_replies: dict[str, deque[Reply]] = {}
        self.requests: list[dict[str, Any]] = []
        self.aborted = 0
        self.finished_streams = 0
        self.streams: list[bytes] = []  # the SSE payload of each stream, as scripted
        self.ws_closes: list[int | None] = []  # each WebSocket's close code
        self.hang_ups = 0
        """The next this many requests are read, recorded and left unanswered: the
        connection is closed before a status line (an upstream that went away),
        after ``hang_up_delay`` seconds."""
        self.hang_up_delay = 0.0
        self.app = web.Application(client_max_size=256 * 1024 * 1024,
                                   middlewares=[self._hang_up])
        self.app.router.add_post("/v1/chat/completions", self.chat)
        # Stored completions (``store: true``): each gets an id of its own.
        self.completions: dict[str, dict[str, Any]] = {}
        self.completion_messages: dict[str, list[Any]] = {}
        self._stored = 0
        self._cid = "chatcmpl-fake"
        self.app.router.add_get("/v1/chat/completions", self.list_completions)
        self.app.router.add_get("/v1/chat/completions/{cid}", self.get_completion)
        self.app.router.add_get("/v1/chat/completions/{cid}/messages", self.get_messages)
        self.app.router.add_delete("/v1/chat/completions/{cid}", self.delete_completion)
        self.responses = ResponsesFake()
        self.app.router.add_post("/v1/responses", self.responses_endpoint)
        self.app.router.add_get("/v1/responses/{rid}", self.responses.read)
        self.app.router.add_delete("/v1/responses/{rid}", self.responses.delete)
        self.app.router.add_get("/v1/responses/{rid}/input_items", self.responses.input_items)
        self.app.router.add_get("/v1/models", self.models)
        self.app.router.add_post("/v1/embeddings", self.embeddings)
        # Anthropic Messages (tests/fake_anthropic.py); count_tokens goes to echo.
        self.anthropic_replies: deque[Any] = deque()
        self.app.router.add_post("/v1/messages", self.anthropic_messages)
        self.app.router.add_get("/v1/realtime", self.realtime)
        self.app.router.add_route("*", "/v1/{tail:.*}", self.echo)
        # Azure OpenAI's paths (``?api-version=`` on the deployment and /openai/ ones).
        for chat in ("/openai/deployments/{deployment}/chat/completions",
                     "/openai/v1/chat/completions"):
            self.app.router.add_post(chat, self.chat)
        self.app.router.add_post("/openai/deployments/{deployment}/embeddings", self.embeddings)
        for responses in ("/openai/responses", "/openai/v1/responses"):
            self.app.router.add_post(responses, self.responses_endpoint)
        self.app.router.add_route("*", "/openai/{tail:.*}", self.echo)
        self.runner: web.AppRunner | None = None
        self.port = 0

    @web.middleware
    async def _hang_up(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.hang_ups <= 0 or request.method != "POST":
            return await handler(request)
        self.hang_ups -= 1
        await self._record(request)
        await asyncio.sleep(self.hang_up_delay)
        assert request.transport is not None
        request.transport.close()
        raise asyncio.CancelledError  # aiohttp drops a handler cancelled this way

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def push_response(self, *replies: RReply) -> None:
        """Queue answers for ``POST /v1/responses`` (tests/fake_responses.py)."""
        self.responses.replies.extend(replies)

    @property
    def responses_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/responses"]

    async def responses_endpoint(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        return await self.responses.answer(request, self.requests[-1]["json"], self.streams)

    def push_for_model(self, model: str, *replies: Reply) -> None:
        """Queue replies that only requests for ``model`` receive."""
        self.model_replies.setdefault(model, deque()).extend(replies)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    async def start(self) -> None:
        self.runner = web.AppRunner(self.app, handler_cancellation=True)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _record(self, request: web.Request) -> bytes:
        raw = await request.read()
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            try:  # valid JSON orjson refuses: lone surrogates, NaN, huge numbers
                body = json.loads(raw)
            except ValueError:
                body = None
        self.requests.append(
            {
                "method": request.method,
                "path": request.path,
                "raw_path": request.raw_path,  # path and query exactly as sent
                "query": request.query_string,
                "headers": CIMultiDict(request.headers),  # case-insensitive copy
                "raw": raw,
                "json": body,
            }
        )
        return raw

    async def anthropic_messages(self, request: web.Request) -> web.StreamResponse:
        from tests.fake_anthropic import answer
        return await answer(self, request)

    async def models(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response(
            {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                         "created": 0, "owned_by": "test"}]},
            headers={"x-request-id": "req_models"},
        )

    async def embeddings(self, request: web.Request) -> web.Response:
        await self._record(request)
        body = self.requests[-1]["json"] or {}
        inputs = body.get("input")
        items = inputs if isinstance(inputs, list) else [inputs]
        return web.json_response(
            {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]}
                         for i, _ in enumerate(items)],
                "model": body.get("model", "fake-embed"),
                "usage": {"prompt_tokens": 3, "total_tokens": 3},
            }
        )

    async def realtime(self, request: web.Request) -> web.StreamResponse:
        """A Realtime-API-like WebSocket: ``?refuse=1`` is answered 401 with headers;
        otherwise the subprotocol ``realtime`` is taken, a text message answered with
        ``echo: <text>``, a binary one with its bytes reversed, and ``bye`` with a
        close of code 4000, reason ``done`` (``bye-bare``: a close frame without a
        code, :func:`bare_close`); each close code is kept in
        :attr:`ws_closes`. A plain GET is an echo."""
        await self._record(request)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return await self.echo(request)
        if request.query.get("refuse"):
            return web.json_response(
                {"error": {"message": "bad key", "type": "invalid_request_error",
                           "param": None, "code": "invalid_api_key"}},
                status=401, headers={"x-request-id": "req_ws_refused"})
        ws = web.WebSocketResponse(protocols=("realtime",))
        ws.headers["x-request-id"] = "req_ws"
        await ws.prepare(request)
        async for msg in ws:
            if msg.type == web.WSMsgType.TEXT and msg.data == "bye":
                await ws.close(code=4000, message=b"done")
            elif msg.type == web.WSMsgType.TEXT and msg.data == "bye-bare":
                await bare_close(ws)
            elif msg.type == web.WSMsgType.TEXT:
                await ws.send_str("echo: " + msg.data)
            elif msg.type == web.WSMsgType.BINARY:
                await ws.send_bytes(msg.data[::-1])
        self.ws_closes.append(ws.close_code)
        return ws

    def _page(self, data: list[Any]) -> web.Response:
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    def _no_completion(self, cid: str) -> web.Response:
        return web.json_response({"error": {"message": f"Completion '{cid}' not found.",
                                            "type": "invalid_request_error", "param": None,
                                            "code": None}}, status=404)

    async def list_completions(self, request: web.Request) -> web.Response:
        """``GET /v1/chat/completions``: the stored completions, oldest first."""
        return self._page(list(self.completions.values()))

    async def get_completion(self, request: web.Request) -> web.Response:
        cid = request.match_info["cid"]
        found = self.completions.get(cid)
        return web.json_response(found) if found is not None else self._no_completion(cid)

    async def get_messages(self, request: web.Request) -> web.Response:
        cid = request.match_info["cid"]
        if cid not in self.completion_messages:
            return self._no_completion(cid)
        return self._page(self.completion_messages[cid])

    async def delete_completion(self, request: web.Request) -> web.Response:
        cid = request.match_info["cid"]
        if self.completions.pop(cid, None) is None:
            return self._no_completion(cid)
        self.completion_messages.pop(cid, None)
        return web.json_response({"object": "chat.completion.deleted", "id": cid,
                                  "deleted": True})

    async def echo(self, request: web.Request) -> web.Response:
        raw = await self._record(request)
        return web.json_response(
            {"method": request.method, "path": request.path, "query": request.query_string,
             "body_len": len(raw), "content_length": request.headers.get("Content-Length")},
            headers={"x-echo": "1"},
        )

    @staticmethod
    def _last_user_text(body: dict[str, Any]) -> str:
        for msg in reversed(body.get("messages") or []):
            if isinstance(msg, dict) and msg.get("role") == "user":
                c = msg.get("content")
                if isinstance(c, str):
                    return c
                if isinstance(c, list):
                    return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
        return ""

    async def chat(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        body = self.requests[-1]["json"]
        if not isinstance(body, dict):
            # What OpenAI answers for a body that is not a JSON object.
            return web.json_response(
                {"error": {"message": "request body must be a JSON object",
                           "type": "invalid_request_error", "param": None, "code": None}},
                status=400, headers={"x-request-id": "req_fake_bad_body"},
            )
        reserved = self.model_replies.get(str(body.get("model")))
        if reserved:
            reply = reserved.popleft()
        else:
            reply = self.replies.popleft() if self.replies else Reply(
                content="echo: " + self._last_user_text(body)
            )
        if reply.answer_delay:
            try:
                await asyncio.sleep(reply.answer_delay)
            except asyncio.CancelledError:  # the caller went away before the answer
                self.aborted += 1
                raise
        if reply.status >= 400:
            err = reply.error or {"message": "fake error", "type": "server_error",
                                  "param": None, "code": None}
            return web.json_response({"error": err}, status=reply.status, headers=reply.headers)
        self._cid = "chatcmpl-fake"
        if body.get("store") is True:
            self._stored += 1
            self._cid = cid = f"chatcmpl-fake-{self._stored}"
            msg: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.tool_calls:
                msg["tool_calls"] = [{"id": tc["id"], "type": "function", "function": {
                    "name": tc["name"], "arguments": tc["arguments"]}} for tc in reply.tool_calls]
            self.completions[cid] = {
                "id": cid, "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model"), "usage": reply.usage,
                "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]}
            self.completion_messages[cid] = [
                dict(m, id=f"{cid}-{k}") for k, m in enumerate(body.get("messages") or [])]
        if body.get("stream"):
            return await self._stream(request, body, reply)
        if reply.raw_body is not None:
            return web.Response(body=reply.raw_body, headers=reply.headers,
                                content_type=reply.content_type or "application/json")
        choices = []
        for i in range(reply.n):
            msg: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
            if reply.reasoning is not None:
                msg[reply.reasoning_key] = reply.reasoning
            if reply.tool_calls:
                msg["tool_calls"] = [
                    {"id": tc["id"], "type": "function",
                     "function": {"name": tc["name"], "arguments": tc["arguments"]}}
                    for tc in reply.tool_calls
                ]
            choices.append({"index": i, "message": msg, "logprobs": None,
                            "finish_reason": reply.finish_reason
                            or ("tool_calls" if reply.tool_calls else "stop")})
        whole = {"id": self._cid, "object": "chat.completion", "created": int(time.time()),
                 "model": body.get("model", "fake-model"), "choices": choices,
                 "usage": reply.usage, "system_fingerprint": "fp_fake"}
        if reply.drop_after is not None:  # promise the whole body, send a part, hang up
            raw = orjson.dumps(whole)
            cut = web.StreamResponse(headers={"Content-Type": "application/json",
                                              "Content-Length": str(len(raw))})
            await cut.prepare(request)
            await cut.write(raw[:reply.drop_after])
            request.transport.close()  # type: ignore[union-attr]
            return cut
        return web.json_response(whole, headers=reply.headers)

    def stream_bytes(self, body: dict[str, Any], reply: Reply) -> bytes:
        """Render ``reply`` as the SSE byte stream OpenAI would send."""
        base = {"id": self._cid, "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", "fake-model"),
                "system_fingerprint": "fp_fake"}
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events: list[dict[str, Any]] = []

        def chunk(choices: list[dict[str, Any]], **extra: Any) -> None:
            ev = dict(base, choices=choices, **extra)
            if include_usage:
                ev.setdefault("usage", None)
            events.append(ev)

        for i in range(reply.n):
            chunk([{"index": i, "delta": {"role": "assistant", "content": ""},
                    "logprobs": None, "finish_reason": None}])
            thought = reply.reasoning or ""
            for start in range(0, len(thought), max(1, reply.piece)):
                chunk([{"index": i, "delta": {reply.reasoning_key:
                                              thought[start:start + reply.piece]},
                        "logprobs": None, "finish_reason": None}])
            text = reply.content or ""
            for start in range(0, len(text), max(1, reply.piece)):
                chunk([{"index": i, "delta": {"content": text[start:start + reply.piece]},
                        "logprobs": None, "finish_reason": None}])
            for k, tc in enumerate(reply.tool_calls or []):
                name, args = tc["name"], tc["arguments"]
                cut = max(1, len(name) // 2) if reply.split_names else len(name)
                chunk([{"index": i, "delta": {"tool_calls": [
                    {"index": k, "id": tc["id"], "type": "function",
                     "function": {"name": name[:cut], "arguments": ""}}]},
                    "logprobs": None, "finish_reason": None}])
                if name[cut:]:
                    chunk([{"index": i, "delta": {"tool_calls": [
                        {"index": k, "function": {"name": name[cut:]}}]},
                        "logprobs": None, "finish_reason": None}])
                for start in range(0, len(args), 5):
                    chunk([{"index": i, "delta": {"tool_calls": [
                        {"index": k, "function": {"arguments": args[start:start + 5]}}]},
                        "logprobs": None, "finish_reason": None}])
            chunk([{"index": i, "delta": {}, "logprobs": None,
                    "finish_reason": reply.finish_reason
                    or ("tool_calls" if reply.tool_calls else "stop")}])
        if include_usage:
            events.append(dict(base, choices=[], usage=reply.usage))
        nl = b"\r\n" if reply.crlf else b"\n"
        out = b""
        for ev in events:
            if reply.keepalive:
                out += b": keep-alive" + nl + nl
            out += b"data: " + orjson.dumps(ev) + nl + nl
        out += b"data: [DONE]" + nl + nl
        return out

    async def _stream(self, request: web.Request, body: dict[str, Any],
                      reply: Reply) -> web.StreamResponse:
        payload = reply.raw_stream if reply.raw_stream is not None else self.stream_bytes(
            body, reply)
        headers = {"Content-Type": reply.content_type or "text/event-stream",
                   "Cache-Control": "no-cache", **reply.headers}
        self.streams.append(payload)
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        size = reply.write_size or len(payload) or 1
        sent = 0
        try:
            for start in range(0, len(payload), size):
                piece = payload[start:start + size]
                if reply.drop_after is not None and sent + len(piece) > reply.drop_after:
                    await resp.write(piece[: max(0, reply.drop_after - sent)])
                    request.transport.close()  # type: ignore[union-attr]
                    return resp
                await resp.write(piece)
                sent += len(piece)
                if reply.delay:
                    await asyncio.sleep(reply.delay)
            await resp.write_eof()
            self.finished_streams += 1
        except (ConnectionResetError, asyncio.CancelledError):
            self.aborted += 1
            raise
        return resp


async def bare_close(ws: web.WebSocketResponse | aiohttp.ClientWebSocketResponse) -> None:
    """Send a close frame without a status code, as a browser's ``ws.close()`` does
    (aiohttp's ``close()`` always sends one)."""
    await ws._writer.send_frame(b"", web.WSMsgType.CLOSE)  # noqa: SLF001 - no public way
