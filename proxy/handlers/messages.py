"""``POST /v1/messages`` (Anthropic Messages): the request flow of DESIGN §2.

The request is captured as evidence in its chat-shaped view
(:func:`proxy.wire.messages.view_messages`: the ``system`` field as a leading
``system`` message, every content block as sent); the memory path
(:func:`proxy.flow.memorypath.prepare_upstream`) decides the upstream messages on that
view, and its edits are mapped back onto the client's own objects
(:func:`proxy.wire.messages.map_back`): the block goes last on the newest user
message, after its ``tool_result`` blocks and after the client's last
``cache_control`` breakpoint. The memory tools are offered as Anthropic tools and
their ``tool_use`` calls answered by the tool loop (:mod:`proxy.flow.toolloop`).

Fail open as for chat: any exception in the memory path forwards the client's
bytes unchanged. Upstream answers (errors with their status and headers such as
``retry-after``) reach the client as sent; the proxy's own errors take
Anthropic's shape (``{"type": "error", "error": {"type", "message"}}``).
``x-api-key``, ``anthropic-version`` and ``anthropic-beta`` go upstream as sent
(``proxy.upstream_api_key``, when set, replaces the key as ``x-api-key``).
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from memory_core.capture.tree import message_text
from memory_core.tokens import count_tokens
from proxy import chatcommands, forwardlog, rawjson, rewrite
from proxy import headers as hdrs
from proxy.appkeys import (
    AENGINE,
    ENGINE,
    METRICS,
    MODEL,
    REQUEST_ID,
    SETTINGS,
    TOOL_REFUSALS,
)
from proxy.body import read_body
from proxy.errors import ProxyError, RequestTimeoutError
from proxy.flow import record
from proxy.flow.client import send_whole
from proxy.flow.exchange import Exchange
from proxy.flow.forward import forward, forward_with_tools
from proxy.flow.memorypath import Prepared, prepare_upstream
from proxy.flow.recovery import Recover
from proxy.flow.recovery import recoverer as flow_recoverer
from proxy.flow.steps import is_inexact, memory_off, parse_body, skip_reason
from proxy.rawjson import RawItems
from proxy.relay import RelayResult
from proxy.scope import effective_salt, request_zone, resolve_scope
from proxy.upstream import upstream_url
from proxy.wire import messages as mw
from proxy.wire.messages import MESSAGES
from proxy.wire.messagesstream import MessagesStreamRound

log = logging.getLogger("lcm.messages")



def error_response(status: int, message: str, rid: str) -> web.Response:
    """The proxy's own error in Anthropic's shape, with ``x-lcm-request-id``."""
    return web.Response(status=status, body=orjson.dumps(mw.error_body(status, message)),
                        content_type="application/json", headers={"x-lcm-request-id": rid})


async def messages(request: web.Request) -> web.StreamResponse:
    """Handle one Messages request, streamed or not (see module docstring)."""
    with request.app[AENGINE].in_flight():
        try:
            response = await _messages(request)
        except RequestTimeoutError:
            raise  # the middleware answers it in this shape and closes the connection
        except ProxyError as exc:  # upstream unreachable, timeout: Anthropic's shape
            if exc.status >= 500:
                log.warning("%s: %s", exc.__class__.__name__, exc.message)
            response = error_response(exc.status, exc.message, request[REQUEST_ID])
        await send_whole(request, response)  # the give-way covers the answer's bytes too
        return response


def _is_messages_body(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("messages"), list) and all(
        isinstance(m, dict) for m in body["messages"])


async def _messages(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    rid = request[REQUEST_ID]
    raw = await read_body(request)
    parsed = parse_body(raw)
    if parsed.error is not None:
        record.record_unparsed(request, raw, parsed.error)
        return error_response(400, f"request body is not valid JSON: {parsed.error}", rid)
    ex = Exchange(request=request, rid=rid, raw=raw, body=parsed.value, wire=MESSAGES)
    body = ex.body
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        request[MODEL] = body["model"][:100]
    system: Any = None
    if not _is_messages_body(body):
        record.record_unparsed(request, raw, "body is not an object with a messages array")
    elif settings.capture.enabled:
        system = _begin_capture(ex)
    if ex.scope is not None and mw.newest_is_user(body):
        newest = message_text(body["messages"][-1])
        if chatcommands.is_command(newest):
            return await answer_command(ex, newest)
    if ex.memory and ex.capture_future is not None:
        await _memory_path(ex, system)
    ex.extra = {"x-lcm-request-id": rid, "x-lcm-memory": ex.prepared.state,
                **ex.prepared.headers}
    if ex.prepared.state == "skipped":
        ex.extra["x-lcm-memory-reason"] = skip_reason(ex)
    ex.tools = (ex.memory and ex.prepared.tools  # tools.offer: only where they can help
                and ex.prepared.state not in ("failed-open", "over-budget")
                and settings.tools.enabled and not memory_off(ex)
                and MESSAGES.tools_wanted(body)
                and not request.app[TOOL_REFUSALS].refuses(settings.proxy.upstream,
                                                           body.get("model")))
    forwardlog.record(request, ex.scope, rid, ex.prepared, raw, body, tools=ex.tools,
                      wire=MESSAGES)
    if ex.tools:
        url, headers = upstream_target(ex)
        return await forward_with_tools(
            ex, url, headers, label="messages", recover=recoverer(ex, system))
    return await _forward(ex, system)


async def answer_command(ex: Exchange, text: str) -> web.StreamResponse:
    """Answer a ``/memory`` command (:func:`proxy.chatcommands.run_command`) as an
    Anthropic message, streamed when asked; stored as the request's reply (never
    extracted from), never sent upstream."""
    app, body = ex.request.app, ex.body
    aengine = app[AENGINE]
    assert ex.scope is not None
    reply = await aengine.run_command(ex.scope, text)
    model = body.get("model") if isinstance(body.get("model"), str) else "lcm-proxy"
    content = [{"type": "text", "text": reply}]
    if ex.ticket is not None:
        aengine.queue_command_reply(ex.ticket, [{"role": "assistant", "content": content}],
                                    {"status": 200, "outcome": "complete", "command": True,
                                     "model": model, "api": "messages"})
    usage = {"input_tokens": 0, "output_tokens": 0}
    msg = {"id": "msg_lcm_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
           "model": model, "content": content, "stop_reason": "end_turn",
           "stop_sequence": None, "usage": usage}
    headers = {"x-lcm-request-id": ex.rid, "x-lcm-memory": "command"}
    if not MESSAGES.is_stream(body):
        return web.Response(body=orjson.dumps(msg), content_type="application/json",
                            headers=headers)
    resp = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(ex.request)
    ev = mw.sse_event
    await resp.write(
        ev("message_start", {"type": "message_start", "message": dict(
            msg, content=[], stop_reason=None)})
        + ev("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}})
        + ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": reply}})
        + ev("content_block_stop", {"type": "content_block_stop", "index": 0})
        + ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": usage})
        + ev("message_stop", {"type": "message_stop"}))
    await resp.write_eof()
    return resp


def _begin_capture(ex: Exchange) -> Any:
    """Resolve the scope and queue the capture of the request's view; returns the
    view's ``system`` message (``None`` without one). Fail open: no ticket."""
    app = ex.request.app
    try:
        ex.scope = resolve_scope(
            ex.request.headers,
            salt=effective_salt(app[SETTINGS].proxy.tenant_salt, app[ENGINE].tenant_salt),
            fixed_tenant=app[SETTINGS].proxy.tenant, body=ex.body)
        view = mw.view_messages(ex.body)
        ex.ticket, ex.capture_future = app[AENGINE].capture_request(
            ex.scope, ex.rid, view,
            {"model": ex.body.get("model") if isinstance(ex.body.get("model"), str) else None,
             "stream": ex.body.get("stream") is True, "api": "messages"},
            request_zone(ex.request.headers))
        return view[0] if len(view) > len(ex.body["messages"]) else None
    except Exception:  # noqa: BLE001 - fail open
        app[METRICS].fail_open.labels("capture").inc()
        log.exception("capture failed; forwarding unmodified")
        ex.ticket = None
        return None


async def _memory_path(ex: Exchange, system: Any) -> None:
    """The memory path on the request's view, mapped back onto its messages
    (:func:`prepare`); on any failure the request goes as sent (``failed-open``), and
    so does a body holding a number too large for a float (:func:`is_inexact`)."""
    if is_inexact(ex):
        return
    metrics = ex.request.app[METRICS]
    started = time.perf_counter()
    try:
        ex.prepared = await prepare(ex, system)
    except Exception as exc:  # noqa: BLE001 - fail open: forward unmodified
        metrics.fail_open.labels("memory_path").inc()
        log.exception("memory path failed; forwarding the request unmodified")
        ex.prepared = Prepared(state="failed-open", headers={"x-lcm-memory-reason": (
            "capture-timeout" if isinstance(exc, TimeoutError) else "error")})
    metrics.stage_latency.labels("memory_path").observe(time.perf_counter() - started)


async def prepare(ex: Exchange, system: Any) -> Prepared:
    """:func:`proxy.flow.memorypath.prepare_upstream` on the request's chat-shaped view,
    its edits mapped back onto the client's blocks (:func:`proxy.wire.messages.map_back`).
    A view that cannot go as Messages (a ``tool_result`` cut from its ``tool_use`` by
    a compacted range) goes uncompacted, with the block. Messages the body keeps, and
    the blocks it keeps (``thinking`` with its signature…), go as the client's bytes,
    here and in the tool loop's rounds (:mod:`proxy.rawjson`). Raises on failure."""
    engine = ex.request.app[ENGINE]
    body: dict[str, Any] = ex.body
    assert ex.scope is not None
    raw_items = RawItems(ex.raw, body, MESSAGES.raw_items_key or "messages")
    rawjson.CURRENT.set(raw_items)
    view_body = {"model": body.get("model"), "max_tokens": body.get("max_tokens"),
                 "messages": ([system] if system is not None else []) + body["messages"],
                 "tools": body.get("tools")}
    if not MESSAGES.tools_wanted(body):  # no memory tools: the block must not name them
        view_body["tool_choice"] = "none"
    prepared = await prepare_upstream(ex.request, ex.scope, ex.capture_future, ex.raw,
                                      view_body, ex.rid)
    if prepared.obj is None:
        return prepared
    out = prepared.obj["messages"]
    msgs = mw.map_back(body, out, system)
    if msgs is None:
        msgs = list(body["messages"])
        block = mw.injected_block(msgs[-1], out[-1]) if (
            prepared.state == "injected" and mw.newest_is_user(body)) else None
        if block is not None:
            msgs[-1] = mw.with_block(msgs[-1], block)
        for key in ("x-lcm-compacted-messages", "x-lcm-context-compacted"):
            prepared.headers.pop(key, None)
        prepared.headers["x-lcm-compaction"] = "skipped-tool-pairs"
        prepared.compacted_messages = 0
    if prepared.state == "injected":
        _turn_block(engine, ex, prepared, msgs, system)
    source = rewrite.exact_source(ex.raw, body, "messages")
    new_body = dict(source, messages=msgs)
    prepared.obj = new_body
    prepared.body = rewrite.dumps_body(new_body, raw_items)
    return prepared


def recoverer(ex: Exchange, system: Any) -> Recover | None:
    """The once-only answer to an upstream context-length error (Anthropic's "prompt
    is too long", :func:`memory_core.assembly.budget.context_error`), as for chat
    (:func:`proxy.flow.recovery.recoverer`), planned again on the request's view
    (:func:`prepare`)."""
    return flow_recoverer(ex, replan=lambda: prepare(ex, system), view=mw.view_messages)


def _turn_block(engine: Any, ex: Exchange, prepared: Prepared, msgs: list[Any],
                system: Any) -> None:
    """In a tool round (the newest user message holds only ``tool_result`` blocks)
    the block is the one the turn's opening user message got, when this process
    remembers it (:meth:`Engine.block_for`): the same memory for every round of
    the turn, not one retrieved for tool output, when it fits the request's context
    budget (the room its count leaves, or the block's share when it was not
    counted). Edits ``msgs[-1]`` in place."""
    messages = ex.body["messages"]
    opening = mw.opening_user_index(messages)
    ids = prepared.capture.message_ids if prepared.capture is not None else []
    shift = 1 if system is not None else 0
    if opening is None or opening == len(messages) - 1 or len(ids) != len(messages) + shift:
        return
    assert ex.scope is not None
    block = engine.block_for(ex.scope, ids[opening + shift])
    if not block:
        return
    tokens = count_tokens(block)
    plan = prepared.budget
    if plan is not None:
        cfg = engine.config
        room = plan.input_tokens - prepared.tokens if prepared.tokens is not None else min(
            cfg.soft_budget_tokens, int(cfg.context.block_share * plan.input_tokens))
        if tokens + 1 > room:  # the opening turn's block filled a room this round lacks
            prepared.headers["x-lcm-memory-reason"] = "no-room"
            return
    # Its tool results as planned (cut to fit the window), without a block of its own.
    planned = msgs[-1].get("content") if isinstance(msgs[-1], dict) else None
    sent = mw.blocks(messages[-1].get("content"))
    base = messages[-1]
    if isinstance(planned, list) and len(planned) in (len(sent), len(sent) + 1):
        base = dict(messages[-1], content=planned[:len(sent)])
    msgs[-1] = mw.with_block(base, block)
    prepared.headers["x-lcm-injected-tokens"] = str(tokens)


def upstream_target(ex: Exchange) -> tuple[Any, Any]:
    """The upstream URL and headers (the client's ``x-api-key``, ``anthropic-*``)."""
    settings = ex.request.app[SETTINGS]
    url = upstream_url(settings.proxy.upstream, "/messages", ex.request.rel_url.raw_query_string)
    out_headers = hdrs.to_upstream(ex.request.headers, body_decoded=True, anthropic=True,
                                   api_key=settings.proxy.upstream_api_key)
    return url, out_headers


async def _forward(ex: Exchange, system: Any) -> web.StreamResponse:
    """Forward without memory tools (:func:`proxy.flow.forward.forward`)."""
    url, out_headers = upstream_target(ex)
    return await forward(ex, url, out_headers, label="messages",
                         recover=recoverer(ex, system), capture=capture_relayed)


def read_answer(streamed: bool, body: bytes) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(assistant message, facts)`` of a relayed Messages answer: the message
    (``None`` when unreadable) and ``id``, ``model``, ``usage``, ``stop_reason``,
    ``done`` (a stream ended with ``message_stop``), ``error`` (an ``error`` event)."""
    if streamed:
        sr = MessagesStreamRound({})
        sr.feed(body)
        sr.close()
        facts = {"id": sr.identity()[0], "model": (sr.message or {}).get("model"),
                 "usage": sr.usage(), "stop_reason": sr.stop_reason, "done": sr.stopped}
        if sr.error is not None:
            facts["error"] = sr.error
        msg = {"role": "assistant", "content": sr.content()} if sr.message else None
        return msg, facts
    try:
        obj = rewrite.loads_exact(body)
    except (ValueError, RecursionError):
        return None, {}
    msg = MESSAGES.answer_message(obj)
    if msg is None:
        return None, {}
    return msg, {"id": obj.get("id"), "model": obj.get("model"), "usage": obj.get("usage"),
                 "stop_reason": obj.get("stop_reason"), "done": True}


def capture_relayed(ex: Exchange, status: int, streamed: bool,
                    result: RelayResult) -> record.Stored:
    """Queue a relayed Messages answer (:func:`proxy.flow.record.store_relayed`):
    complete when the message was read whole (a stream ended by ``message_stop``)
    and no ``error`` event came."""

    def read(streamed: bool, body: bytes, event: dict[str, Any]) -> tuple[list[Any], bool]:
        msg, facts = read_answer(streamed, body)
        event.update(facts)
        event["finish_reasons"] = [facts.get("stop_reason")]
        if msg is None:
            event["unparsed_body"] = record.unparsed(body)
            return [], False
        return [msg], bool(facts.get("done")) and "error" not in facts

    return record.store_relayed(ex, status, streamed, result, read, api="messages")


__all__ = ["capture_relayed", "error_response", "messages", "read_answer", "upstream_target"]
