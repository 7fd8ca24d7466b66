"""Every ``/v1/`` path other than chat completions (and every Azure ``/openai/`` one
other than a deployment's), forwarded transparently.

Method, path, query, headers (minus hop-by-hop and ``X-LCM-*``) and body go to the
upstream; status, headers and body come back. Bodies stream in both directions
without buffering, so uploads (``/v1/files``, audio) and downloads of any size
work and the first byte reaches the client as soon as the upstream sends it.
A body aiohttp decodes (``Content-Encoding: gzip``…) is forwarded decoded, without
that header, up to ``proxy.max_body_bytes`` decoded (413 beyond); one it cannot decode
is the client's fault (400), not the upstream's, as is one sent too slowly (408,
:mod:`proxy.body`).
A client that hangs up ends the upstream call, as it would talking to the upstream
directly: while the upstream has not answered, and while its stream stalls (checked
every ``tools.heartbeat_seconds``), and at the next write otherwise.

A WebSocket upgrade (the Realtime API, ``GET /v1/realtime``) is answered by opening
one to the upstream with the client's headers, query and subprotocols; the client's
upgrade is accepted with the subprotocol and headers the upstream chose, then every
message is relayed as it comes, both ways, and the first side to close closes the
other with its close code. Each hop is pinged every ``tools.heartbeat_seconds``: the
proxy answers each side's pings itself, so a side that stopped answering (gone
without a close) must end the relay here, or the other side would never learn of it.
When the proxy shuts down, both hops of every session are closed with 1001 (going
away) instead of holding the shutdown. An upgrade the upstream refuses reaches the
client with the upstream's status and headers (aiohttp's client keeps no body of a
refusal).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from weakref import WeakSet

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from proxy import headers as hdrs
from proxy.appkeys import HTTP, METRICS, REQUEST_ID, SETTINGS, WEBSOCKETS
from proxy.body import passthrough_body
from proxy.errors import BadRequestError, UpstreamError
from proxy.flow.client import ClientGone, ClientWatch
from proxy.rawhead import RelayedResponse, RelayedStreamResponse
from proxy.relay import relay_body, start
from proxy.rewrite import dumps_body, loads_exact
from proxy.upstream import client_url, is_azure_path, send

View = Callable[[Any], Any]
"""What the client is shown of a JSON answer's value: the value itself, or a new one."""


async def passthrough(request: web.Request, *, view: View | None = None
                      ) -> web.StreamResponse:
    """Forward any ``/v1/*`` or Azure ``/openai/*`` request
    (:func:`proxy.upstream.client_url`) and stream the upstream's answer back; with
    ``view``, a 200 JSON answer is read whole and shown as ``view`` makes it (its
    exact bytes when ``view`` changes nothing)."""
    settings = request.app[SETTINGS]
    rid = request[REQUEST_ID]
    url = client_url(settings.proxy.upstream, request.rel_url.raw_path,
                     request.rel_url.raw_query_string)
    keep_length = request.content_length is not None
    out_headers = hdrs.to_upstream(
        request.headers, api_key=settings.proxy.upstream_api_key, keep_length=keep_length,
        anthropic=hdrs.is_anthropic_path(request.path),
        azure=is_azure_path(request.rel_url.raw_path),
    )
    if _is_upgrade(request):
        return await _websocket(request, url, out_headers)
    body = passthrough_body(request) if request.body_exists else None
    check_every = settings.tools.heartbeat_seconds
    metrics = request.app[METRICS]
    started = time.perf_counter()
    try:
        with ClientWatch(request, check_every):
            upstream = await send(request.app[HTTP], request.method, url, out_headers, body)
    except UpstreamError:
        if body is not None and body.error is not None:
            raise body.error from None  # 400, 408 or 413 from the middleware
        raise
    except ClientGone:  # the upstream call was cancelled with it, as a hang-up would
        metrics.client_disconnects.inc()
        return web.Response(status=499)
    metrics.upstream_latency.labels("passthrough").observe(time.perf_counter() - started)
    if view is not None and upstream.status == 200 and upstream.content_type == "application/json":
        return await _viewed(request, upstream, view)
    try:
        client_headers = hdrs.to_client(upstream.headers, keep_length=True)
        client_headers["x-lcm-request-id"] = rid
        response = RelayedStreamResponse(
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


async def _viewed(request: web.Request, upstream: aiohttp.ClientResponse, view: View
                  ) -> web.StreamResponse:
    """The upstream's JSON answer as ``view`` shows it (see :func:`passthrough`)."""
    try:
        raw = await upstream.read()
    except aiohttp.ClientPayloadError as exc:
        raise UpstreamError(f"upstream body ended abnormally: {exc}") from exc
    finally:
        upstream.release()
    body = raw
    try:
        value = loads_exact(raw)
    except (ValueError, RecursionError):
        value = None
    if value is not None:
        shown = view(value)
        if shown is not value:
            body = dumps_body(shown)  # orjson, else the stdlib (surrogates, huge integers)
    headers = hdrs.to_client(upstream.headers, keep_length=body is raw)
    headers["x-lcm-request-id"] = request[REQUEST_ID]
    return RelayedResponse(status=upstream.status, reason=upstream.reason, body=body,
                           headers=headers)


_HANDSHAKE = frozenset({"sec-websocket-key", "sec-websocket-version",
                        "sec-websocket-extensions", "sec-websocket-protocol",
                        "sec-websocket-accept"})
"""Headers of one hop's WebSocket handshake: each hop negotiates its own."""


def _is_upgrade(request: web.Request) -> bool:
    """True for a WebSocket upgrade (``Upgrade: websocket`` on a ``GET``)."""
    return (request.method == "GET"
            and request.headers.get("Upgrade", "").strip().lower() == "websocket")


async def _websocket(request: web.Request, url: Any, headers: Any) -> web.StreamResponse:
    """Relay a WebSocket between the client and the upstream (see module docstring).
    A client handshake the proxy could not accept is refused before the upstream is
    asked, so that it opens no upstream session."""
    if not web.WebSocketResponse().can_prepare(request).ok:
        raise BadRequestError("invalid WebSocket handshake (Sec-WebSocket-Key,"
                              " Sec-WebSocket-Version: 13)", code="invalid_handshake")
    settings = request.app[SETTINGS]
    protocols = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
                 if p.strip()]
    sent = CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in _HANDSHAKE)
    try:
        with ClientWatch(request, settings.tools.heartbeat_seconds):
            upstream = await request.app[HTTP].ws_connect(
                url, headers=sent, protocols=protocols, max_msg_size=0,
                heartbeat=settings.tools.heartbeat_seconds)
    except aiohttp.WSServerHandshakeError as exc:  # refused: its status and headers
        refused = hdrs.to_client(exc.headers or {})
        refused["x-lcm-request-id"] = request[REQUEST_ID]
        return RelayedResponse(status=exc.status, reason=exc.message, headers=refused)
    except ClientGone:
        request.app[METRICS].client_disconnects.inc()
        return web.Response(status=499)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UpstreamError(f"upstream WebSocket failed: {exc.__class__.__name__}: {exc}"
                            ) from exc
    shown = hdrs.to_client(upstream._response.headers)  # noqa: SLF001 - the handshake's
    for name in _HANDSHAKE:
        shown.popall(name, None)
    shown["x-lcm-request-id"] = request[REQUEST_ID]
    client = web.WebSocketResponse(protocols=[upstream.protocol] if upstream.protocol else (),
                                   max_msg_size=settings.proxy.max_body_bytes,
                                   heartbeat=settings.tools.heartbeat_seconds)
    client.headers.update(shown)
    relay = _Relay(client, upstream)
    request.app[WEBSOCKETS].add(relay)
    try:
        await client.prepare(request)
        await asyncio.gather(_pump(upstream, client, relay), _pump(client, upstream, relay))
    finally:  # both closed, whichever way the relay ended (no pump outlives it)
        await upstream.close()
        if client.prepared:
            await client.close()
    return client


async def _pump(src: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
                dst: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
                relay: _Relay) -> None:
    """Send every message of ``src`` on to ``dst`` until ``src`` closes, then close
    ``dst`` with ``src``'s close code and reason (1011 when ``src`` ended without a
    close frame: a close code that says so, 1006, is never sent; 1000 for a close
    frame without a code; 1001 once the proxy is shutting down)."""
    code, reason = aiohttp.WSCloseCode.INTERNAL_ERROR, ""
    while True:
        msg = await src.receive()
        try:
            if msg.type == aiohttp.WSMsgType.TEXT:
                await dst.send_str(msg.data)
            elif msg.type == aiohttp.WSMsgType.BINARY:
                await dst.send_bytes(msg.data)
            elif msg.type == aiohttp.WSMsgType.CLOSE:
                # a close frame without a status code (a browser's ``ws.close()``)
                # reads as 0, which no frame may carry: it is a normal close (1000)
                code, reason = msg.data or aiohttp.WSCloseCode.OK, msg.extra or ""
                break
            elif msg.type in _ENDED:
                break
        except (ConnectionResetError, aiohttp.ClientConnectionResetError):
            break  # dst is gone: its own pump ends on it
    if relay.going_away:
        code, reason = aiohttp.WSCloseCode.GOING_AWAY, _GOING_AWAY
    if not dst.closed:
        await dst.close(code=code, message=reason.encode())


class _Relay:
    """One relayed session's two hops (weakly held in ``app[WEBSOCKETS]``)."""

    __slots__ = ("client", "upstream", "going_away", "__weakref__")

    def __init__(self, client: web.WebSocketResponse,
                 upstream: aiohttp.ClientWebSocketResponse) -> None:
        self.client, self.upstream = client, upstream
        self.going_away = False


async def close_websockets(app: web.Application) -> None:
    """``app.on_shutdown`` hook: close every relayed WebSocket with 1001 (going away),
    both hops, so that shutdown does not wait ``proxy.shutdown_timeout_seconds`` on
    sessions that never end by themselves."""
    relays: WeakSet[_Relay] = app[WEBSOCKETS]
    for relay in list(relays):
        relay.going_away = True
        for ws in (relay.upstream, relay.client):
            if not ws.closed:
                await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY,
                               message=_GOING_AWAY.encode())


_GOING_AWAY = "proxy shutting down"


_ENDED = (aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)
