"""A scripted OpenAI-compatible upstream that keeps what it was sent, for the evaluation.

The harness tells it what to answer next (:meth:`EvalUpstream.script`): a text, or
a call of one of the agent's own tools. It answers every ``POST
/v1/chat/completions`` with that, non-streaming, from bytes built once per script
call, and keeps the raw body of the last request that came through a proxy
(requests carrying ``X-Eval-Direct: 1`` are the harness's direct calls, answered
the same way and not kept). It parses nothing on the request path, so that direct
and proxied calls cost it the same; the harness parses the kept bytes afterwards.
Listens on 127.0.0.1 only.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

DIRECT_HEADER = "X-Eval-Direct"

_BASE = {"object": "chat.completion", "created": 1_700_000_000, "model": "eval-model",
         "system_fingerprint": "fp_eval"}


def completion(content: str | None, tool_call: dict[str, Any] | None = None,
               seq: int = 0) -> bytes:
    """A ``chat.completion`` body: ``content``, or one ``tool_call``
    (``{"id", "name", "arguments"}``) with ``finish_reason`` ``tool_calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    finish = "stop"
    if tool_call is not None:
        message["tool_calls"] = [{"id": tool_call["id"], "type": "function", "function": {
            "name": tool_call["name"], "arguments": tool_call["arguments"]}}]
        finish = "tool_calls"
    return orjson.dumps(dict(
        _BASE, id=f"chatcmpl-eval-{seq}",
        choices=[{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}))


class EvalUpstream:
    """The running fake; :meth:`start` returns its base URL (``http://127.0.0.1:PORT/v1``).

    ``last_raw``: bytes of the last proxied request (``None`` before the first).
    ``proxied``/``direct``: request counts.
    """

    def __init__(self) -> None:
        self.app = web.Application(client_max_size=1 << 30)
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self._runner: web.AppRunner | None = None
        self._body = completion("ok")
        self._seq = 0
        self.base_url = ""
        self.last_raw: bytes | None = None
        self.proxied = 0
        self.direct = 0

    def script(self, content: str | None, tool_call: dict[str, Any] | None = None) -> None:
        """Answer every following request with ``content`` (or ``tool_call``) until the
        next call of this method."""
        self._seq += 1
        self._body = completion(content, tool_call, self._seq)

    def take(self) -> bytes:
        """Return and forget the last proxied request body (``RuntimeError`` if none)."""
        raw, self.last_raw = self.last_raw, None
        if raw is None:
            raise RuntimeError("the upstream received no proxied request")
        return raw

    async def start(self) -> str:
        """Listen on 127.0.0.1, a free port."""
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Close the socket and open connections."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _chat(self, request: web.Request) -> web.Response:
        raw = await request.read()
        if request.headers.get(DIRECT_HEADER) == "1":
            self.direct += 1
        else:
            self.proxied += 1
            self.last_raw = raw
        return web.Response(body=self._body, content_type="application/json")
