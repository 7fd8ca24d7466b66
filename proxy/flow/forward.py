"""Forward a request without memory tools: the upstream's bytes relayed as they come.

One path for every API (the handlers give the upstream's URL and headers and how a
relayed answer is stored). A context-length error is answered once more before
any byte reached the client (:func:`proxy.flow.recovery.send_recovering`); any
other answer, errors included, reaches the client with its status, headers and
body. The answer is stored before the client's body ends (bounded wait). A client
that leaves while the upstream thinks (checked every ``tools.heartbeat_seconds``,
before the answer's status line and between its chunks) ends the upstream call;
what it did not see is not an answer.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from proxy import headers as hdrs
from proxy.errors import ProxyError
from proxy.flow import record
from proxy.flow.client import ClientGone, ClientWatch
from proxy.flow.exchange import Exchange
from proxy.flow.recovery import Recover, send_recovering
from proxy.keys import HTTP, METRICS, SETTINGS
from proxy.relay import RelayResult, Rewriter, relay_body
from proxy.upstream import is_event_stream

Capture = Callable[[Exchange, int, bool, RelayResult], Awaitable[None]]
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
                app[HTTP], url, headers,
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
        return web.Response(status=upstream.status, reason=upstream.reason, body=refused,
                            headers=client_headers)
    status = upstream.status
    streamed = False
    try:
        response = web.StreamResponse(status=status, reason=upstream.reason,
                                      headers=client_headers)
        await response.prepare(request)
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
