"""What the replay tests share: tests/test_memory_replays*.py and test_replay_lookalikes.py
store statements straight into an engine and read its items back; tests/test_wire_replays*.py
run the proxy on its memory path (the memory tools always offered) against a loopback
upstream that answers each POST with scripted bytes, and build those bytes in each API's
real SSE format.

A fixture defined here reaches a test file by import (``gated,  # noqa: F401``)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from memory_core.engine import Engine
from memory_core.evaluation.updates import replay
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from memory_core.search import SearchConfig, SearchService
from proxy.sse import SSEDecoder
from tests.conftest import TEST_KEY, RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

# -- memory: statements stored without a proxy ------------------------------------------------
SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str, scope: Scope = SCOPE) -> None:
    """Store the statements extracted from ``text`` as one message's items under ``scope``."""
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, scope, 1, None, extract(text)))


def rows(engine: Engine) -> list[dict[str, Any]]:
    """Every memory item as ``{id, kind, text, status, conflict_with, supersedes}``, by id."""
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, kind, text, status, conflict_with, supersedes FROM memory_items"
        " ORDER BY id")])


# -- wire: a scripted upstream and the proxy in front of it -----------------------------------
@dataclass
class Scripted:
    """One answer: a status, headers and body pieces; before the piece at ``gate_at``
    the upstream waits until the test opens ``gate``."""

    pieces: list[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {
        "Content-Type": "text/event-stream"})
    gate_at: int | None = None
    gate: asyncio.Event = field(default_factory=asyncio.Event)


class GatedUpstream:
    """A loopback upstream answering every request from a queue of :class:`Scripted`,
    recording what it received (``json``: ``None`` for a body that is not JSON)."""

    def __init__(self) -> None:
        self.answers: deque[Scripted] = deque()
        self.received: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            value = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:  # an upload, or a body the test sent as it is
            value = None
        self.received.append({"path": request.path, "path_qs": request.path_qs,
                              "raw_path_qs": request.raw_path, "raw": raw,
                              "json": value, "headers": dict(request.headers)})
        answer = self.answers.popleft()
        resp = web.StreamResponse(status=answer.status, headers=answer.headers)
        await resp.prepare(request)
        for i, piece in enumerate(answer.pieces):
            if i == answer.gate_at:
                await asyncio.wait_for(answer.gate.wait(), 30)
            await resp.write(piece)
        await resp.write_eof()
        return resp

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/v1/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


Gated = tuple[GatedUpstream, RunningProxy]


@asynccontextmanager
async def gated_proxy(tmp_path: Path, upstream: GatedUpstream | None = None,
                      **tools: Any) -> AsyncIterator[Gated]:
    """A started :class:`GatedUpstream` (``upstream``, or a new one) and a proxy on it
    with data under ``tmp_path/d``, the memory tools always offered; ``tools`` adds
    settings of the ``tools`` section."""
    upstream = upstream or GatedUpstream()
    await upstream.start()
    proxy = await start_proxy(f"http://127.0.0.1:{upstream.port}/v1", tmp_path / "d",
                              tools={"offer": "always", **tools})
    yield upstream, proxy
    await proxy.close()
    assert upstream.runner is not None
    await upstream.runner.cleanup()


@pytest.fixture
async def gated(tmp_path: Path) -> AsyncIterator[Gated]:
    async with gated_proxy(tmp_path) as pair:
        yield pair


async def post(proxy: RunningProxy, path: str, body: dict[str, Any],
               headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
    """POST ``body`` to the proxy's ``/v1`` + ``path`` with :data:`HEADERS` (and
    ``headers``); the status, the response headers and the whole body."""
    async with aiohttp.ClientSession() as session:
        async with session.post(proxy.base_url + path, data=orjson.dumps(body),
                                headers={**HEADERS, **(headers or {})}) as resp:
            return resp.status, resp.headers.copy(), await resp.read()


def events(raw: bytes) -> list[dict[str, Any]]:
    """Every JSON event of an SSE body, in order."""
    decoder = SSEDecoder()
    out = []
    for event in [*decoder.feed(raw), *decoder.close()]:
        if event.data and event.data != "[DONE]":
            out.append(orjson.loads(event.data))
    return out


# -- wire: bytes in each API's format -----------------------------------------------------------
HEADERS = {"Authorization": f"Bearer {TEST_KEY}", "x-api-key": TEST_KEY,
           "Content-Type": "application/json"}
JSON = {"Content-Type": "application/json"}
USER = [{"role": "user", "content": "hello there"}]
SDK_USER: Any = USER  # the SDKs' message params, as sent


def data(obj: Any) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def ev(name: str, obj: Any) -> bytes:
    return b"event: " + name.encode() + b"\n" + data(obj)


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return data({"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1,
                 "model": "m", "choices": [{"index": 0, "delta": delta,
                                            "finish_reason": finish}]})


def message_start(msg_id: str) -> bytes:
    """A Messages stream's ``message_start`` event for message ``msg_id`` (5 tokens in)."""
    return ev("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": "claude",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1}}})


def block_event(name: str, index: int, **kw: Any) -> bytes:
    """A Messages stream's ``content_block_*`` event ``name`` for block ``index``."""
    return ev(name, {"type": name, "index": index, **kw})


# A memory call (memory_grep, query "build flag") in each API's stream, its arguments sent
# whole: no deltas (Responses), whole in content_block_start (Messages), whole in the first
# chunk (Chat).
def _responses_call_without_deltas() -> bytes:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_m",
            "name": "memory_grep", "arguments": "", "status": "in_progress"}
    args = "{\"query\": \"build flag\"}"
    done = dict(item, arguments=args, status="completed")
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    return b"".join([
        ev("response.created", {"type": "response.created", "sequence_number": 0,
                                "response": resp}),
        ev("response.output_item.added", {"type": "response.output_item.added",
                                          "sequence_number": 1, "output_index": 0,
                                          "item": item}),
        ev("response.function_call_arguments.done", {
            "type": "response.function_call_arguments.done", "sequence_number": 2,
            "item_id": "fc_1", "output_index": 0, "arguments": args}),
        ev("response.output_item.done", {"type": "response.output_item.done",
                                         "sequence_number": 3, "output_index": 0,
                                         "item": done}),
        ev("response.completed", {"type": "response.completed", "sequence_number": 4,
                                  "response": dict(resp, status="completed", output=[done],
                                                   usage={"input_tokens": 3,
                                                          "output_tokens": 4,
                                                          "total_tokens": 7})}),
    ])


def messages_call_whole_in_start() -> bytes:
    return b"".join([
        message_start("msg_1"),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "tool_use", "id": "toolu_m",
                                                     "name": "memory_grep",
                                                     "input": {"query": "build flag"}}}),
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}}),
        ev("message_stop", {"type": "message_stop"}),
    ])


def _chat_call_whole_in_first_chunk() -> bytes:
    return b"".join([
        chunk({"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": "call_m", "type": "function",
            "function": {"name": "memory_grep", "arguments": "{\"query\": \"build flag\"}"}}]}),
        chunk({}, "tool_calls"), b"data: [DONE]\n\n"])


# path → the answering round's stream: the text "done"
FINAL = {
    "/chat/completions": b"".join([chunk({"role": "assistant", "content": "done"}),
                                   chunk({}, "stop"), b"data: [DONE]\n\n"]),
    "/messages": b"".join([
        message_start("msg_2"),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}}),
        ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": "done"}}),
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
        ev("message_stop", {"type": "message_stop"})]),
    "/responses": b"".join([
        ev("response.created", {"type": "response.created", "sequence_number": 0,
                                "response": {"id": "resp_2", "object": "response",
                                             "status": "in_progress", "output": [],
                                             "model": "m", "created_at": 1}}),
        ev("response.completed", {"type": "response.completed", "sequence_number": 1,
                                  "response": {
                                      "id": "resp_2", "object": "response",
                                      "status": "completed", "model": "m", "created_at": 1,
                                      "output": [{"type": "message", "id": "msg_2",
                                                  "status": "completed",
                                                  "role": "assistant", "content": [{
                                                      "type": "output_text", "text": "done",
                                                      "annotations": []}]}],
                                      "usage": {"input_tokens": 3, "output_tokens": 1,
                                                "total_tokens": 4}}})]),
}
# path → (a streaming request body, a round whose one call is a memory call)
MEMORY_CALLS = {
    "/chat/completions": ({"model": "m", "messages": USER, "stream": True},
                          _chat_call_whole_in_first_chunk()),
    "/messages": ({"model": "claude", "max_tokens": 50, "messages": USER, "stream": True},
                  messages_call_whole_in_start()),
    "/responses": ({"model": "m", "input": "hello there", "stream": True},
                   _responses_call_without_deltas()),
}


# -- memory: statements said through the proxy ------------------------------------------------
async def asked_later(proxy: RunningProxy, upstream: FakeUpstream,
                      said: Sequence[tuple[str, str]], question: str) -> str:
    """The injection block (:func:`tests.test_injection.block_of`, ``""`` for none) the
    upstream received for ``question``, asked in a new session ``"later"`` after each
    ``(session, text)`` of ``said`` was said in that session and captured
    (:meth:`~tests.conftest.RunningProxy.settle`), in order."""
    for session, text in said:
        await Agent(proxy, upstream, session=session).say(text)
        await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say(question)
    return block_of(later.upstream_last_user())


def replay_items(tmp: Path, messages: Sequence[Any], embedder: Any = None, *,
                 folder: str = "d", **search: Any) -> list[dict[str, Any]]:
    """Items ``{id, status, text, superseded_by}`` (by id) after ``messages`` (texts, or
    ``(name, text)``) are replayed as an agent resends them
    (:func:`memory_core.evaluation.updates.replay`) into a new engine in ``tmp/folder``;
    with ``embedder``, the engine has its search indexes (``search``: SearchConfig
    fields), else words only."""
    engine = Engine(tmp / folder)
    if embedder is not None:
        engine.attach_search(SearchService(engine.store, tmp / folder,
                                           SearchConfig(**search), embedder))
    turns = [{"content": m} if isinstance(m, str) else {"name": m[0], "content": m[1]}
             for m in messages]
    try:
        replay(engine, {"id": "r", "messages": turns}, "t")
        return sql_read(engine, lambda c: [dict(r) for r in c.execute(
            "SELECT id, status, text, superseded_by FROM memory_items ORDER BY id")])
    finally:
        engine.close()


def status_of(items: list[dict[str, Any]], part: str) -> str:
    """The status of the one item of ``items`` whose text holds ``part`` (asserts one)."""
    found = [i["status"] for i in items if part in i["text"]]
    assert len(found) == 1, items
    return found[0]


def say_in_thread(engine: Engine, tenant: str, role: str,
                  turns: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Say ``turns`` (speaker name, text) in one thread of ``tenant``/``role``, each a
    request resending the history, an assistant "Okay." after each; ``{text: id}`` of
    the active items."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "A chat."}]
    for i, (who, text) in enumerate(turns):
        messages.append({"role": "user", "content": text, "name": who})
        _, done = engine.capture_request(Scope(tenant, role, "talk"), f"t{i}",
                                         [dict(m) for m in messages], {})
        done.result()
        messages.append({"role": "assistant", "content": "Okay."})
    engine.flush()
    return {str(it["text"]): int(it["id"])
            for it in engine.list_items(tenant=tenant, role=role, limit=100)["items"]
            if it["status"] == "active"}
