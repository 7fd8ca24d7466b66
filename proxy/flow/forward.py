"""Forward a request upstream, for every API: as it is, or with the memory tools.

The handlers give the upstream's URL and headers and how a relayed answer is
stored. :func:`forward_with_tools` offers the memory tools and answers their
calls (:class:`proxy.flow.toolloop.ToolLoop`). :func:`forward` relays the
upstream's bytes as they come. Either way a context-length error is answered once
more before any byte reached the client (:func:`proxy.flow.recovery.recoverer`);
any other answer, errors included, reaches the client with its status, headers and
body. The answer is stored before the client's body ends (bounded wait). A client
that leaves while the upstream thinks (checked every ``tools.heartbeat_seconds``,
before the answer's status line and between its chunks; between the tool loop's
rounds) ends the upstream call; what it did not see is not an answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from proxy import headers as hdrs
from proxy.appkeys import AENGINE, HTTP, METRICS, SETTINGS
from proxy.errors import ProxyError
from proxy.flow import record
from proxy.flow.client import ClientGone, ClientWatch
from proxy.flow.exchange import Exchange
from proxy.flow.recovery import Recover, send_recovering
from proxy.flow.steps import exact_body
from proxy.flow.toolloop import ToolLoop
from proxy.rawhead import RelayedResponse, RelayedStreamResponse
from proxy.relay import RelayResult, Rewriter, relay_body, start
from proxy.rewrite import loads_exact
from proxy.upstream import is_event_stream

Capture = Callable[[Exchange, int, bool, RelayResult], record.Stored]
"""Queues the answer's capture when called; returns the wait for its commit."""
"""Stores a relayed answer: ``(exchange, status, streamed, relayed bytes)``."""


async def forward(ex: Exchange, url: Any, headers: Any, *, label: str,
                  recover: Recover | None, capture: Capture, hold_done: bool = False,
                  rewriter: Callable[[bool, int], Rewriter | None] | None = None,
                  uncaptured: Callable[[int, bool, RelayResult], None] | None = None
                  ) -> web.StreamResponse:
    """Send ``ex``'s upstream body (the memory path's, else the client's bytes) to
    ``url`` and relay the answer (see module docstring).

    ``label``: the API, for ``lcm_upstream_latency_seconds``. ``capture`` stores the
    answer of a captured request. ``hold_done``: an event stream's ``[DONE]`` waits
    for the answer to be stored (Chat Completions). ``rewriter(streamed, status)``:
    what the client is shown instead of the upstream's chunks, or ``None``.
    ``uncaptured(status, streamed, relayed)``: called for an answer that is not
    captured.
    Returns 499 (nothing sent) when the client left before the answer began. Raises
    :class:`~proxy.errors.ProxyError` (recorded) when the upstream cannot be reached.
    """
    request, app = ex.request, ex.request.app
    check_every = app[SETTINGS].tools.heartbeat_seconds
    started = time.perf_counter()
    try:
        with ClientWatch(request, check_every):
            upstream, refused = await send_recovering(
                ex, app[HTTP], url, headers,
                ex.raw if ex.prepared.body is None else ex.prepared.body, recover)
    except ProxyError as exc:  # the request is evidence; say what became of it
        record.record_failure(ex, exc.status, exc.code, exc.message)
        raise
    except ClientGone:  # the upstream call was cancelled with it
        app[METRICS].client_disconnects.inc()
        record.record_gone(ex)
        return web.Response(status=499)
    app[METRICS].upstream_latency.labels(label).observe(time.perf_counter() - started)
    client_headers = hdrs.to_client(upstream.headers)
    client_headers.update(ex.extra)
    if refused is not None:  # an upstream error whose body was read already
        if ex.ticket is not None:
            record.spawn(ex, capture(ex, upstream.status, False,
                                     RelayResult(nbytes=len(refused), chunks=[refused])))
        return RelayedResponse(status=upstream.status, reason=upstream.reason, body=refused,
                            headers=client_headers)
    status = upstream.status
    streamed = False
    try:
        response = RelayedStreamResponse(status=status, reason=upstream.reason,
                                      headers=client_headers)
        if not await start(response, request):  # gone since the last look: as above
            upstream.close()
            app[METRICS].client_disconnects.inc()
            record.record_gone(ex)
            return response
        streamed = is_event_stream(upstream)

        async def store_first(res: RelayResult) -> None:
            # Store the answer before the client gets its end (bounded wait).
            if ex.ticket is not None:
                await record.store_first(ex, capture(ex, status, streamed, res))

        result = await relay_body(
            upstream, response, keep=True, request=request, before_end=store_first,
            hold_done=hold_done and streamed, check_every=check_every,
            rewriter=rewriter(streamed, status) if rewriter is not None else None)
    finally:
        upstream.release()
    if result.client_gone:
        app[METRICS].client_disconnects.inc()
    if ex.ticket is not None and not ex.captured:
        record.spawn(ex, capture(ex, status, streamed, result))
    elif ex.ticket is None and uncaptured is not None:
        uncaptured(status, streamed, result)
    return response


async def forward_with_tools(ex: Exchange, url: Any, headers: Any, *, label: str,
                         recover: Recover | None, summarizer: Any = None,
                         shown_previous: str | None = None,
                         remember: Callable[[Any], None] | None = None
                         ) -> web.StreamResponse:
    """Forward ``ex`` to ``url`` with the memory tools offered, answer their calls and
    store the answer (before a plain answer's body, or a stream's last bytes, goes
    out; ``summarizer`` for the compaction after it). ``label``: the API, for
    ``lcm_upstream_latency_seconds``. ``recover`` answers a context-length error of
    the first round once (:func:`proxy.flow.recovery.recoverer`); the hidden rounds'
    results are fitted to the request's own budget
    (:attr:`~proxy.flow.plan.Prepared.input_budget`); ``shown_previous`` as for
    :meth:`~proxy.wire.base.WireAdapter.client_answer`. ``remember`` is given the
    response object the client ends with (a stream without one: ``{"id": ...}``),
    before the answer is stored.
    Raises :class:`~proxy.errors.ProxyError` (recorded) when the upstream cannot be
    reached."""
    app = ex.request.app
    settings, metrics = app[SETTINGS], app[METRICS]
    body, names = ex.wire.add_tools(exact_body(ex), strict=settings.tools.strict,
                                    short=ex.prepared.short_tools)
    ex.tool_names = names

    async def store_first() -> None:
        # Store the answer before the client gets its last bytes (bounded wait).
        if remember is not None and ex.streamed:  # mapped before the client holds its id
            ss = loop.stream
            final = ss.final if ss is not None else None
            if final is None and ss is not None and ss.stream_id is not None:
                # an API whose stream has no object: its id, the usage summed
                final = {"id": ss.stream_id[0], **({"usage": ex.usage} if ex.usage else {})}
            remember(final)
        await record.store_first(ex, record.capture_tool_answer(ex, summarizer))

    loop = ToolLoop(
        ex, session=app[HTTP], url=url, headers=headers, aengine=app[AENGINE], names=names,
        max_rounds=settings.tools.max_rounds,
        tool_timeout=settings.tools.tool_timeout_seconds,
        heartbeat=settings.tools.heartbeat_seconds,
        on_round=lambda: metrics.tool_rounds.inc(), before_end=store_first,
        recover=recover)
    loop.shown_previous = shown_previous
    started = time.perf_counter()
    try:
        if ex.streamed:
            response = await loop.run_stream(body)
        else:
            response = await loop.run_plain(body)
            if (remember is not None and isinstance(response, web.Response)
                    and response.status < 400 and isinstance(response.body, bytes)):
                try:
                    remember(loads_exact(response.body))
                except (ValueError, RecursionError):
                    pass
    except ProxyError as exc:  # the request is evidence; say what became of it
        record.record_failure(ex, exc.status, exc.code, exc.message)
        raise
    except ClientGone:
        ex.client_gone, ex.complete = True, False
        response = ex.response or web.Response(status=499)
    metrics.upstream_latency.labels(label).observe(time.perf_counter() - started)
    if ex.client_gone:
        metrics.client_disconnects.inc()
    if not ex.captured:
        if ex.streamed or ex.client_gone:
            # ended early (error, disconnect): nothing to hold back
            record.spawn(ex, record.capture_tool_answer(ex, summarizer))
        else:  # the body is not sent yet: store it first
            await store_first()
    return response
