"""Who may use the ``/lcm/`` admin API and the inspector.

- With ``proxy.admin_token`` set (``LCM_ADMIN_TOKEN``, ``--admin-token-file``): every
  request needs ``Authorization: Bearer <token>``, compared in constant time
  (``hmac.compare_digest``); missing or wrong → 401 ``authentication_error``. The
  read-only inspector also accepts its session cookie (signed with the token,
  valid for ``proxy.ui_session_seconds``: :mod:`proxy.uisession`). An address
  that sent too many wrong tokens lately gets 429 ``rate_limit_error`` with
  ``Retry-After``, even for the right one (:mod:`proxy.throttle`).
- With no token: only loopback peers whose ``Host`` is a loopback name are served,
  and no request that a proxy relayed (:data:`FORWARDING_HEADERS`): a reverse proxy
  on this machine makes every client a loopback peer, and nginx's default keeps a
  loopback ``Host``. The peer address is read from the socket, never from forwarded
  headers; the ``Host`` check defeats DNS rebinding. Anything else → 403
  ``permission_error``.

Writes must carry ``Content-Type: application/json`` (POST) and no foreign
``Origin``, so a web page the operator visits cannot forge them: a cross-origin
JSON or PUT/DELETE request needs a CORS preflight, which is never granted. The
inspector's sign-in form refuses a foreign ``Origin`` too, before the token is
checked: the operator's browser shares the operator's address, so a page's wrong
guesses would otherwise throttle the operator out (:mod:`proxy.ui.signin`).
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import re
import time
from typing import Literal
from urllib.parse import urlsplit

from aiohttp import web

from proxy.appkeys import AUTH_THROTTLE, SETTINGS, UI_SESSIONS
from proxy.errors import BadRequestError, ProxyError, TooManyFailuresError, UnauthorizedError
from proxy.throttle import address_key
from proxy.uisession import session_is_live, session_issued, session_value
from proxy.upstream import same_origin

UI_COOKIE = "lcm_admin"


class AdminForbiddenError(ProxyError):
    status, type, code = 403, "permission_error", "admin_forbidden"


FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP")
"""Headers a reverse proxy adds to what it relays (RFC 7239 and the common ones)."""


def _is_loopback_ip(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def _peer(request: web.Request) -> str | None:
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if isinstance(peer, (tuple, list)) and peer else None


def peer_is_loopback(request: web.Request) -> bool:
    """True when the TCP peer of ``request`` is a loopback address (socket, not headers)."""
    peer = _peer(request)
    return peer is not None and _is_loopback_ip(peer)


def client_key(request: web.Request) -> str:
    """What wrong tokens from ``request`` count under: its socket peer's address
    (:func:`proxy.throttle.address_key`), never a forwarded header, which the
    client writes itself."""
    return address_key(_peer(request))


def check_token(request: web.Request, presented: str, *, bucket: str = "") -> None:
    """Raise unless ``presented`` is the admin token, counting a wrong one against
    the client's address: :class:`TooManyFailuresError` (429) while that address
    is throttled, even for the right token; :class:`UnauthorizedError` (401) for a
    wrong one. The right one clears the address's count. ``bucket``: a separate
    count for an endpoint that needs no token but reads one (``/lcm/health``), so
    that a probe sending some other token never throttles the admin API."""
    token = request.app[SETTINGS].proxy.admin_token
    throttle = request.app[AUTH_THROTTLE]
    key = bucket + client_key(request)
    if wait := throttle.retry_after(key):
        raise TooManyFailuresError(wait)
    if not hmac.compare_digest(presented.encode(), token.encode()):
        throttle.failed(key)
        raise UnauthorizedError("invalid admin token")
    throttle.succeeded(key)


def host_is_loopback(host: str | None) -> bool:
    """True when a ``Host`` header names this machine (localhost, 127.x, ::1)."""
    if not host:
        return False
    return _host_is_loopback(host)


@functools.lru_cache(maxsize=256)
def _host_is_loopback(host: str) -> bool:
    """:func:`host_is_loopback` of a non-empty ``host``: every request asks it for the
    same few names (its listener's, its ``Host``), and parsing one costs more than
    the rest of the request's checks."""
    try:
        name = urlsplit("//" + host).hostname or ""
    except ValueError:  # "[bad": no host name at all
        return False
    return name == "localhost" or name.endswith(".localhost") or _is_loopback_ip(name)


def new_ui_session(request: web.Request) -> str:
    """A session cookie value issued now (the admin token must be set)."""
    return session_value(request.app[SETTINGS].proxy.admin_token, time.time_ns() // 1_000_000)


def has_ui_session(request: web.Request) -> bool:
    """True when ``request`` carries a live inspector session (:mod:`proxy.uisession`)."""
    settings = request.app[SETTINGS].proxy
    cookie = request.cookies.get(UI_COOKIE, "")
    if not settings.admin_token or not cookie:
        return False
    issued = session_issued(cookie, settings.admin_token)
    return issued is not None and session_is_live(
        issued, time.time_ns() // 1_000_000, settings.ui_session_seconds, request.app[UI_SESSIONS])


def end_ui_sessions(request: web.Request) -> None:
    """Sign out: every session issued until now stops being valid."""
    request.app[UI_SESSIONS].not_before_ms = time.time_ns() // 1_000_000


Access = Literal["bearer", "cookie", "loopback"]
"""How :func:`require_admin` let a request in."""


def require_admin(request: web.Request, *, cookie_ok: bool = False,
                  bucket: str = "") -> Access:
    """Raise unless ``request`` may use the admin API (see module docstring); return
    how it got in.

    ``cookie_ok``: also accept the inspector's session cookie (read-only UI pages);
    ``bucket``: where a wrong token counts (:func:`check_token`).
    Raises ``UnauthorizedError`` (401), ``TooManyFailuresError`` (429) or
    ``AdminForbiddenError`` (403).
    """
    token = request.app[SETTINGS].proxy.admin_token
    if token:
        auth = request.headers.get("Authorization", "")
        presented = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if presented:
            check_token(request, presented, bucket=bucket)
            return "bearer"
        if cookie_ok and has_ui_session(request):
            return "cookie"
        if cookie_ok and request.cookies.get(UI_COOKIE):
            raise UnauthorizedError("the inspector session has expired or was signed out;"
                                    " sign in again", code="admin_session_expired")
        raise UnauthorizedError("admin token required: send Authorization: Bearer <token>",
                                code="admin_token_required")
    if (not peer_is_loopback(request) or not host_is_loopback(request.host)
            or any(h in request.headers for h in FORWARDING_HEADERS)):
        raise AdminForbiddenError(
            "no admin token is configured, so the admin API answers loopback clients only;"
            " set proxy.admin_token (LCM_ADMIN_TOKEN) to allow remote access")
    return "loopback"


_FORWARDED_HOST = re.compile(r'(?:^|[;,\s])host="?([^";,\s]+)', re.I)


def is_own_origin(request: web.Request, origin: str) -> bool:
    """Whether a page of ``origin`` (``scheme://host[:port]``) is this proxy's own: it
    names the server of the request's ``Host``, or of the host a reverse proxy in front
    says it was asked for (``X-Forwarded-Host``, ``Forwarded: host=``, first values),
    which a browser cannot send across sites without a preflight; ports compared as
    :func:`proxy.upstream.same_origin` does (the scheme's default when absent).
    ``null`` is never."""
    if origin == "null":
        return False
    scheme = urlsplit(origin).scheme
    hosts = [request.host, request.headers.get("X-Forwarded-Host", "").split(",")[0]]
    forwarded = _FORWARDED_HOST.search(request.headers.get("Forwarded", ""))
    if forwarded:
        hosts.append(forwarded.group(1))
    return any(same_origin(origin, f"{scheme}://{h.strip()}") for h in hosts if h.strip())


_FORWARDED_PROTO = re.compile(r'(?:^|[;\s])proto="?([^";,\s]+)', re.I)


def cookie_is_secure(request: web.Request) -> bool:
    """Whether the inspector's cookies get ``Secure``: ``proxy.secure_cookies``, or the
    request came over HTTPS, to this server or to a TLS front that says so in the
    first hop of ``X-Forwarded-Proto`` or ``Forwarded: proto=``.

    Believing these headers from any peer, as :func:`is_own_origin` does the forwarded
    host, costs nothing: a made-up ``https`` only makes the client's own browser keep
    the cookie off plain HTTP."""
    if request.app[SETTINGS].proxy.secure_cookies or request.secure:
        return True
    said = [request.headers.get("X-Forwarded-Proto", "").split(",")[0]]
    forwarded = _FORWARDED_PROTO.search(request.headers.get("Forwarded", "").split(",")[0])
    if forwarded:
        said.append(forwarded.group(1))
    return any(p.strip().lower() == "https" for p in said)


def has_foreign_origin(request: web.Request) -> bool:
    """True when ``request`` carries the ``Origin`` of another site (or ``null``): a
    browser sent it for a page that is not this proxy's (:func:`is_own_origin`)."""
    origin = request.headers.get("Origin")
    return origin is not None and not is_own_origin(request, origin)


def require_write(request: web.Request) -> None:
    """Raise unless a write request is same-origin JSON (see module docstring)."""
    if has_foreign_origin(request):
        raise AdminForbiddenError("cross-origin admin requests are refused")
    if request.method == "POST" and request.content_type != "application/json":
        raise BadRequestError("admin POST requests need Content-Type: application/json",
                              code="json_required")
