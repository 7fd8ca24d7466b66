"""``POST /v1/chat/completions``: sequences the request flow of DESIGN §2.

One :class:`~proxy.flow.exchange.Exchange` carries the request; the steps
(:mod:`proxy.flow.steps`, :mod:`proxy.flow.record`, :mod:`proxy.flow.recovery`,
:mod:`proxy.flow.toolloop`) act on it; this module decides nothing itself. It keeps
the fail-open promise: any exception in the memory path is logged with the
request id, counted, and the original request bytes are forwarded unchanged.
Upstream answers (errors included) reach the client exactly as sent.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from memory_core.capture.tree import message_text
from proxy import chatcommands, forwardlog, rewrite
from proxy import headers as hdrs
from proxy.appkeys import AENGINE, SETTINGS, TASKS
from proxy.flow import record
from proxy.flow.client import send_whole
from proxy.flow.exchange import Exchange
from proxy.flow.forward import forward, forward_with_tools
from proxy.flow.recovery import recoverer
from proxy.flow.responsethreads import note_completion
from proxy.flow.steps import (
    ParsedBody,
    begin_capture,
    offers_tools,
    open_exchange,
    parse_body,
    run_memory_path,
    skip_reason,
)
from proxy.relay import RelayResult
from proxy.upstream import is_azure_path, route_url

__all__ = ["ParsedBody", "chat_completions", "parse_body"]


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """Handle one chat completion, streaming or not (see module docstring).

    While its memory path runs, and while it waits for its answer's capture, the
    search indexer, compaction and WAL checkpoints give way to it
    (``AsyncEngine.foreground()``); for the rest of its life, upstream round trip
    included, the indexer alone does (``AsyncEngine.in_flight()``); both bounded per
    step by ``search.foreground_wait_ms``. On a small machine the embedder and
    Tantivy's writer, woken by this request's own capture, would otherwise take the
    cores from its memory path and, when the upstream answers quickly, from the
    answer's relay and capture (the history bench's figures:
    docs/evaluation/constants.md). Behind a real model
    the step's budget runs out while the model thinks, and indexing goes on then.
    """
    with request.app[AENGINE].in_flight():
        response = await _chat_completions(request)
        await send_whole(request, response)  # the give-way covers the answer's bytes too
        return response


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    ex = await open_exchange(request)
    raw = ex.raw
    body = ex.body
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        # Not something we understand: the upstream answers it; we keep it.
        record.record_unparsed(request, raw, "body is not an object with a messages array")
    elif settings.capture.enabled:
        begin_capture(ex)
    if ex.scope is not None:
        index = rewrite.newest_user_index(body["messages"])
        newest = message_text(body["messages"][index]) if index is not None else ""
        if index is not None and chatcommands.is_command(newest):
            return await chatcommands.answer(request, request.app[AENGINE], ex.scope, body,
                                             newest, ex.ticket, ex.rid)
    if ex.memory and ex.capture_future is not None:
        await run_memory_path(ex)
    ex.extra = {"x-lcm-request-id": ex.rid, "x-lcm-memory": ex.prepared.state,
                **ex.prepared.headers}
    if ex.prepared.state == "skipped":
        ex.extra["x-lcm-memory-reason"] = skip_reason(ex)
    ex.tools = offers_tools(ex)
    forwardlog.record(request, ex.scope, ex.rid, ex.prepared, raw, body,
                      tools=ex.tools)  # inspector
    if ex.tools:
        return await _with_memory_tools(ex)
    return await _forward(ex)


def _upstream(ex: Exchange) -> tuple[Any, Any]:
    settings = ex.request.app[SETTINGS]
    url = route_url(settings.proxy.upstream, ex.request.rel_url.raw_path, "/chat/completions",
                    ex.request.rel_url.raw_query_string)
    # The body sent is bytes aiohttp decoded, or the proxy's rewrite of them: never
    # the client's Content-Encoding.
    out_headers = hdrs.to_upstream(ex.request.headers,
                                   api_key=settings.proxy.upstream_api_key, body_decoded=True,
                                   azure=is_azure_path(ex.request.rel_url.raw_path))
    return url, out_headers


async def _forward(ex: Exchange) -> web.StreamResponse:
    """Forward without memory tools (:func:`proxy.flow.forward.forward`); the usage of
    an answer that is not captured is counted on its own."""
    app = ex.request.app
    url, out_headers = _upstream(ex)
    summarizer = record.summarizer_for(app, ex.request) if ex.ticket is not None else None

    def capture(ex: Exchange, status: int, streamed: bool, res: RelayResult
                ) -> record.Stored:
        return record.capture_relayed(ex, status, streamed, res, summarizer)

    def uncaptured(status: int, streamed: bool, res: RelayResult) -> None:
        if status < 400:  # no capture to read the usage: read it alone
            app[TASKS].spawn(record.count_usage(app, streamed, res), name=f"usage-{ex.rid}")

    return await forward(ex, url, out_headers, label="chat", recover=recoverer(ex),
                         capture=capture, hold_done=True, uncaptured=uncaptured)


async def _with_memory_tools(ex: Exchange) -> web.StreamResponse:
    """Forward with the memory tools offered and intercept their calls
    (:func:`proxy.flow.forward.forward_with_tools`); a context-length error of the first
    round is answered once more (:func:`proxy.flow.recovery.recoverer`)."""
    url, out_headers = _upstream(ex)
    return await forward_with_tools(
        ex, url, out_headers, label="chat", recover=recoverer(ex),
        summarizer=record.summarizer_for(ex.request.app, ex.request),
        # only a stored completion is read back: no parse of the answer for the others
        remember=((lambda obj: note_completion(ex, obj))
                  if isinstance(ex.body, dict) and ex.body.get("store") is True else None))
