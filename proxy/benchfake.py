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
"""

from __future__ import annotations

import itertools

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
            return web.json_response(
                {"error": {"message": "bad body", "type": "invalid_request_error",
                           "param": None, "code": None}}, status=400)
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
