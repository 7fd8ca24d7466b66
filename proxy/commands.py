"""In-chat ``/memory …`` commands, answered by the proxy itself (DESIGN §2 step 4).

A newest user message that starts with ``/memory`` never reaches the upstream. The
proxy answers with an ordinary ``chat.completion`` — or, when the request streams,
with ``chat.completion.chunk`` SSE events and ``data: [DONE]`` — so every OpenAI
client renders it like any other reply. The exchange is captured as evidence but
is not conversation content: it is never extracted from.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from memory_core.engine import Engine
from memory_core.models import CaptureTicket, Scope

PREFIX = "/memory"

HELP = """lcm-proxy memory commands:
/memory status        what is stored for this role (threads, messages, items)
/memory search QUERY  find memory items and messages
/memory explain       what the last injection contained, and why
/memory retract ID    retract memory item ID (kept for audit, no longer used)
/memory help          this text"""


def is_command(text: str) -> bool:
    """True when ``text`` is an in-chat memory command."""
    stripped = text.lstrip()
    return stripped == PREFIX or stripped.startswith(PREFIX + " ") or stripped.startswith(
        PREFIX + "\n")


def run_command(engine: Engine, scope: Scope, text: str) -> str:
    """Execute one command synchronously (reader/writer threads) and return the answer
    text. Unknown commands answer with the help text; never raises for bad input."""
    parts = text.strip().split(None, 2)
    verb = parts[1].lower() if len(parts) > 1 else "help"
    arg = parts[2].strip() if len(parts) > 2 else ""
    if verb == "status":
        info = engine.status()
        return (f"role {scope.role}: {info['counts']['threads']} threads, "
                f"{info['counts']['messages']} messages stored (schema {info['schema_version']})")
    return HELP if verb == "help" else f"unknown command '{verb}'{chr(10)}{HELP}"


async def answer(request: web.Request, engine: Engine, scope: Scope, body: dict[str, Any],
                 text: str, ticket: CaptureTicket | None, request_id: str
                 ) -> web.StreamResponse:
    """Answer a ``/memory`` command locally, streamed when ``body["stream"]`` is true.

    The reply is captured as the assistant message of ``ticket`` (when given).
    """
    loop = asyncio.get_running_loop()
    reply = await loop.run_in_executor(None, run_command, engine, scope, text)
    model = body.get("model") if isinstance(body.get("model"), str) else "lcm-proxy"
    cid = "chatcmpl-lcm-" + uuid.uuid4().hex[:24]
    created = int(time.time())
    message = {"role": "assistant", "content": reply}
    headers = {"x-lcm-request-id": request_id, "x-lcm-memory": "command"}
    if ticket is not None:
        engine.capture_response(ticket, [message], {"status": 200, "outcome": "complete",
                                                    "command": True, "model": model})
    if body.get("stream") is True:
        resp = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        base = {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {"content": reply},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": {
                "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
        for chunk in chunks:
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
    return web.Response(
        body=orjson.dumps({
            "id": cid, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {**message, "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }),
        content_type="application/json", headers=headers,
    )
