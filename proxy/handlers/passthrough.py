"""Every ``/v1/`` path other than chat completions, forwarded transparently.

Method, path, query, headers (minus hop-by-hop and ``X-LCM-*``) and body go to the
upstream; status, headers and body come back. Bodies stream in both directions
without buffering, so uploads (``/v1/files``, audio) and downloads of any size
work and the first byte reaches the client as soon as the upstream sends it.
A body aiohttp decodes (``Content-Encoding: gzip``…) is forwarded decoded, without
that header; one it cannot decode is the client's fault (400), not the upstream's.
A client that hangs up ends the upstream call, as it would talking to the upstream
directly: while the upstream has not answered, and while its stream stalls (checked
every ``tools.heartbeat_seconds``), and at the next write otherwise.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from aiohttp import web

from proxy import headers as hdrs
from proxy.appkeys import HTTP, METRICS, REQUEST_ID, SETTINGS
from proxy.errors import UpstreamError
from proxy.flow.client import ClientGone, ClientWatch
from proxy.relay import relay_body, start
from proxy.upstream import send, upstream_url


def tail_of(request: web.Request) -> str:
    """Return the raw path after ``/v1`` (``/v1/models`` → ``/models``)."""
    raw = request.rel_url.raw_path
    return raw[3:] if raw.startswith("/v1") else raw


class _ClientBody:
    """The client's body, streamed, remembering whether reading it failed: the
    upstream send then fails too, and the client must hear it was its body."""

    def __init__(self, request: web.Request) -> None:
        self._request = request
        self.error: web.RequestPayloadError | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._request.content.iter_any():
                yield chunk
        except web.RequestPayloadError as exc:
            self.error = exc
            raise


async def passthrough(request: web.Request) -> web.StreamResponse:
    """Forward any ``/v1/*`` request and stream the upstream's answer back."""
    settings = request.app[SETTINGS]
    rid = request[REQUEST_ID]
    url = upstream_url(settings.proxy.upstream, tail_of(request), request.rel_url.raw_query_string)
    keep_length = request.content_length is not None
    out_headers = hdrs.to_upstream(
        request.headers, api_key=settings.proxy.upstream_api_key, keep_length=keep_length,
        anthropic=hdrs.is_anthropic_path(request.path),
    )
    body = _ClientBody(request) if request.body_exists else None
    check_every = settings.tools.heartbeat_seconds
    metrics = request.app[METRICS]
    started = time.perf_counter()
    try:
        with ClientWatch(request, check_every):
            upstream = await send(request.app[HTTP], request.method, url, out_headers, body)
    except UpstreamError:
        if body is not None and body.error is not None:
            raise body.error from None  # rendered as 400 by the middleware
        raise
    except ClientGone:  # the upstream call was cancelled with it, as a hang-up would
        metrics.client_disconnects.inc()
        return web.Response(status=499)
    metrics.upstream_latency.labels("passthrough").observe(time.perf_counter() - started)
    try:
        client_headers = hdrs.to_client(upstream.headers, keep_length=True)
        client_headers["x-lcm-request-id"] = rid
        response = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=client_headers
        )
        if not await start(response, request):
            metrics.client_disconnects.inc()
            upstream.close()
            return response
        result = await relay_body(upstream, response, keep=False, request=request,
                                  check_every=check_every)
        if result.client_gone:
            metrics.client_disconnects.inc()
        return response
    finally:
        upstream.release()
