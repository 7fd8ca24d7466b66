"""Request id, per-route counting, and errors rendered in the route's API shape
(OpenAI's; Anthropic's on ``/v1/messages*``)."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from aiohttp import web

from proxy.appkeys import AENGINE, ENGINE, METRICS, MODEL, REQUEST_ID, SETTINGS
from proxy.errors import (
    BadRequestError,
    ClientKeyRejectedError,
    CrossSiteRequestError,
    HostNotAllowedError,
    PayloadTooLargeError,
    ProxyError,
    RequestTimeoutError,
    error_body,
    error_response,
)
from proxy.handlers.access import host_is_loopback, is_own_origin
from proxy.headers import is_anthropic_path, is_body_decoded
from proxy.log import request_id_var
from proxy.scope import bearer_key, effective_salt, tenant_for_key
from proxy.upstream import is_azure_path, same_origin
from proxy.wire.messages import error_body as anthropic_error_body

log = logging.getLogger("lcm.http")
access_log = logging.getLogger("lcm.access")
_QUIET_PATHS = frozenset({"/lcm/health", "/lcm/ready", "/lcm/live", "/lcm/metrics"})
"""Probes and scrapes: their access lines are DEBUG, so INFO shows the traffic."""


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _printable(text: str) -> str:
    """``text`` with control characters (line breaks included) written as escapes:
    a client's path or model name cannot start a forged log line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _log_access(request: web.Request, status: int, started: float,
                response: web.StreamResponse | None) -> None:
    """One line per request: method, path (no query string), status, milliseconds,
    model and what memory did (``x-lcm-memory`` and its reason). Never the prompt,
    a header value or a key; the client's path and model with control characters
    escaped (:func:`_printable`)."""
    headers = response.headers if response is not None else {}
    memory = headers.get("x-lcm-memory")
    reason = headers.get("x-lcm-memory-reason")
    access_log.log(
        logging.DEBUG if request.path in _QUIET_PATHS else logging.INFO,
        "%s %s %d %.1f ms%s%s", request.method, _printable(request.path), status,
        (time.perf_counter() - started) * 1000,
        f" model={_printable(request[MODEL])}" if MODEL in request else "",
        f" memory={memory}" + (f" ({reason})" if reason else "") if memory else "")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ResponseAlreadyStartedError(RuntimeError):
    """An error surfaced after response bytes went out: the connection is dropped."""


def _response_started(request: web.Request) -> bool:
    """True once bytes of a response went out (aiohttp's own test in
    ``RequestHandler.handle_error``); a second response would then be spliced into
    the first one's body, so the only honest answer left is closing the connection."""
    writer = request.writer
    return writer is not None and writer.output_size > 0


def is_api_path(path: str) -> bool:
    """True for the paths the proxy forwards upstream: ``/v1/…`` and Azure's
    ``/openai/…`` (:func:`proxy.upstream.is_azure_path`)."""
    return path.startswith("/v1/") or is_azure_path(path)


_SEGMENT_SEPARATORS = re.compile(r"[/\\]")


def check_path(request: web.Request) -> None:
    """Raise ``BadRequestError`` (400) for a ``/v1/`` or ``/openai/`` request whose path
    holds a dot segment (``.`` or ``..``), written plainly or percent-encoded
    (``%2e%2e``, ``..%2f``, ``..\\``).

    The client's raw path is forwarded as it came (:func:`proxy.upstream.client_url`),
    and an upstream or gateway that resolves dot segments would serve
    ``/openai/../v1/models`` or ``/v1/../../admin`` outside the configured
    ``proxy.upstream`` prefix, with ``proxy.upstream_api_key``. No OpenAI, Azure or
    Anthropic API path has such a segment.
    """
    if not is_api_path(request.path):
        return
    for segment in _SEGMENT_SEPARATORS.split(unquote(request.rel_url.raw_path)):
        if segment in (".", ".."):
            raise BadRequestError(
                "the request path holds a '.' or '..' segment, which lcm-proxy does not"
                " forward", code="invalid_path")


def check_client_key(request: web.Request) -> None:
    """Raise ``ClientKeyRejectedError`` (401) for a ``/v1/`` or ``/openai/`` request
    whose key's tenant id is not in ``proxy.require_client_keys`` (when that list is set).

    Runs before the handler, so a refused request is neither read, stored nor
    forwarded. The key is hashed exactly as :func:`proxy.scope.tenant_for_key` does
    for scoping; it never appears in the error or the logs.
    """
    proxy = request.app[SETTINGS].proxy
    if not proxy.require_client_keys or not is_api_path(request.path):
        return
    salt = effective_salt(proxy.tenant_salt, request.app[ENGINE].tenant_salt)
    if tenant_for_key(bearer_key(request.headers), salt) not in proxy.require_client_keys:
        raise ClientKeyRejectedError(
            "Incorrect API key provided: this lcm-proxy accepts only the client keys listed"
            " in proxy.require_client_keys.")


def check_cross_site(request: web.Request) -> None:
    """Raise ``CrossSiteRequestError`` (403) for a ``/v1/`` or ``/openai/`` request, CORS preflight
    included, that carries the ``Origin`` of another site (or ``null``), unless
    ``proxy.allowed_origins`` lists that origin (or holds ``*``).

    Only browsers send ``Origin``; the SDKs and curl send none, and a same-origin page
    names the proxy's own ``Host``. The proxy lends whoever it serves the memory of a
    tenant (the pinned ``proxy.tenant``, the keyless ``anonymous``) and often a key
    (``proxy.upstream_api_key``), so a page of another site must not be served
    because an upstream's CORS answer approves any origin (vLLM's and LiteLLM's
    servers do by default): forwarded, its preflight would be approved, and a request
    with a made-up key would store text in that memory, run ``/memory`` commands there,
    spend the key and read the answers. Refusing the preflight stops a browser before
    it sends the request; refusing the request covers "simple" ones (a form,
    ``no-cors``) that need no preflight. Listed origins go on, and the upstream's
    CORS answer decides them.
    """
    origin = request.headers.get("Origin")
    if origin is None or not is_api_path(request.path):
        return
    if is_own_origin(request, origin):
        return
    allowed = request.app[SETTINGS].proxy.allowed_origins
    if "*" in allowed or any(origin == o.strip() or same_origin(origin, o) for o in allowed):
        return
    raise CrossSiteRequestError(
        f"cross-site request refused: a web page of {origin[:100]!r} cannot use this"
        " lcm-proxy (list its origin in proxy.allowed_origins to allow it)")


HOST_NAMES_OF_THIS_MACHINE = frozenset({
    "host.docker.internal", "gateway.docker.internal", "host.containers.internal"})
"""Names a container uses for the machine it runs on (Docker Desktop, Podman): its
runtime resolves them, a web page cannot re-point them, so they are served too."""


def check_host(request: web.Request) -> None:
    """Raise ``HostNotAllowedError`` (403) when the proxy listens on a loopback address
    (``proxy.host``) and the request's ``Host`` names another machine, unless that
    name is in ``proxy.allowed_hosts`` (or it holds ``*``).

    Only a browser led by DNS rebinding sends such a request to a loopback listener: a
    page of ``evil.example`` whose name now resolves to 127.0.0.1 is same-origin with
    the proxy, so it could read answers, ``/memory search`` the tenant the proxy pins
    or maps keyless requests to, and spend ``proxy.upstream_api_key``. Clients on
    this machine name it ``127.0.0.1``, ``localhost`` or ``::1`` (containers
    :data:`HOST_NAMES_OF_THIS_MACHINE`); a request without ``Host`` (HTTP/1.0) is served.
    """
    proxy = request.app[SETTINGS].proxy
    listen = proxy.host.strip().strip("[]")
    if not (listen == "localhost" or host_is_loopback(f"[{listen}]" if ":" in listen
                                                        else listen)):
        return
    given = request.headers.get("Host")
    if given is None or host_is_loopback(given) or "*" in proxy.allowed_hosts:
        return
    try:
        name = (urlsplit("//" + given).hostname or "").rstrip(".")
    except ValueError:  # "[bad": no host name at all
        name = ""
    if name and (host_is_loopback(name) or name in HOST_NAMES_OF_THIS_MACHINE or name in (
            h.lower().rstrip(".") for h in proxy.allowed_hosts)):
        return
    raise HostNotAllowedError(
        f"Host {given[:100]!r} is not served: lcm-proxy listens on loopback ({proxy.host})"
        " and answers loopback host names only (DNS rebinding); list a name a local"
        " reverse proxy forwards in proxy.allowed_hosts")


def _record_rejected(request: web.Request, rid: str, reason: str) -> None:
    """Keep an ``events`` row for a request refused before it could be read."""
    try:
        request.app[AENGINE].queue_event(None, rid, "rejected", {
            "path": request.path, "reason": reason,
            "content_length": request.content_length})
    except Exception:  # noqa: BLE001 - the client's answer matters more
        log.exception("could not record the rejected request")


async def _answer_and_close(request: web.Request, response: web.StreamResponse) -> None:
    """Send ``response`` now and close the connection, leaving the rest of the
    request's body unread (a body sent too slowly: aiohttp would wait 10 s more for
    it; or one too large, below).

    For a compressed body over ``proxy.max_body_bytes``: after an answer aiohttp reads
    and drops what is left of a body for up to 10 s ("lingering"), and a compressed
    body's rest is decoded while it does so, chunk after chunk without giving another
    request a turn (a 30 KiB zstd body decodes to gigabytes): every client of the
    proxy would wait those 10 s. A sender of such a body may see the connection reset
    instead of reading the 413.
    """
    response.force_close()
    await response.prepare(request)
    await response.write_eof()
    request.protocol.force_close()


def _route_label(request: web.Request) -> str:
    info = request.match_info.route.resource
    return info.canonical if info is not None else "unmatched"


def _json_error(request: web.Request, status: int, body: dict[str, Any], rid: str
                ) -> web.Response:
    """``body`` (OpenAI's ``{"error": {...}}``) as the route's API shapes it."""
    if is_anthropic_path(request.path):
        body = anthropic_error_body(status, body["error"]["message"])
    return web.json_response(body, status=status, headers={"x-lcm-request-id": rid})


def _error(request: web.Request, exc: ProxyError, rid: str) -> web.Response:
    if is_anthropic_path(request.path):
        return _json_error(request, exc.status, exc.body(), rid)
    return error_response(exc, rid)


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Assign the request id (``x-lcm-request-id``), render errors, count requests.

    A ``/v1/`` or ``/openai/`` path with a dot segment → 400 (:func:`check_path`) and a
    key not in ``proxy.require_client_keys`` → 401, before the handler runs;
    a browser request or preflight of an origin not allowed → 403 (:func:`check_cross_site`),
    as is a ``Host`` a loopback listener does not serve (:func:`check_host`).
    ``ProxyError`` → its status with ``{"error": {...}}``; aiohttp's 413 (body over
    ``proxy.max_body_bytes``) → 413 in the same shape, recorded as a ``rejected``
    event (nothing of the body could be kept); a body aiohttp cannot read (a
    ``Content-Encoding: gzip`` body that is not gzip) → 400; any other exception from our
    code → 500 ``internal_error`` (logged with the request id; never a bare HTML page).
    An exception raised after the response started streaming is logged and re-raised
    as :class:`ResponseAlreadyStartedError`, and aiohttp closes the connection: the
    client sees a truncated response, never a second response inside the first.
    """
    rid = "req_" + uuid.uuid4().hex
    request[REQUEST_ID] = rid
    token = request_id_var.set(rid)
    status = 500
    started = time.perf_counter()
    response: web.StreamResponse | None = None
    in_flight = request.app[METRICS].in_flight.labels(_route_label(request))
    in_flight.inc()
    try:
        try:
            check_host(request)
            check_path(request)
            check_client_key(request)
            check_cross_site(request)
            response = await handler(request)
        except Exception as exc:
            if _response_started(request):
                log.error("error after the response started; closing the connection",
                          exc_info=True)
                raise ResponseAlreadyStartedError(str(exc)) from exc
            raise
        status = response.status
        if not response.prepared:
            response.headers.setdefault("x-lcm-request-id", rid)
        return response
    except ResponseAlreadyStartedError:
        raise
    except ProxyError as exc:
        status = exc.status
        if exc.status >= 500:
            log.warning("%s: %s", exc.__class__.__name__, exc.message)
        answer = _error(request, exc, rid)
        if isinstance(exc, RequestTimeoutError):  # its body's rest is not worth waiting for
            await _answer_and_close(request, answer)
        return answer
    except web.HTTPRequestEntityTooLarge as exc:
        status = 413
        _record_rejected(request, rid, "body over proxy.max_body_bytes")
        too_large = _error(request, PayloadTooLargeError(exc.text or "request body too large"),
                           rid)
        if is_body_decoded(request.headers):
            await _answer_and_close(request, too_large)
        return too_large
    except web.RequestPayloadError:
        status = 400
        encoding = request.headers.get("Content-Encoding")
        what = f" (Content-Encoding: {encoding[:40]})" if encoding else ""
        return _error(request, BadRequestError(f"could not read the request body{what}",
                                               code="invalid_body"), rid)
    except web.HTTPException as exc:
        status = exc.status
        if exc.status >= 400 and exc.content_type != "application/json":
            err_type = "not_found_error" if exc.status == 404 else "invalid_request_error"
            return _json_error(request, exc.status, error_body(exc.reason, err_type), rid)
        raise
    except Exception:
        log.exception("unhandled error")
        return _json_error(request, 500, error_body("internal error in lcm-proxy",
                                                    "internal_error", "internal_error"), rid)
    finally:
        in_flight.dec()
        request.app[METRICS].requests.labels(_route_label(request), str(status)).inc()
        _log_access(request, status, started, response)
        request_id_var.reset(token)
