"""Who may use the ``/lcm/`` admin API and the inspector.

- With ``proxy.admin_token`` set (``LCM_ADMIN_TOKEN``, ``--admin-token``): every
  request needs ``Authorization: Bearer <token>``, compared in constant time
  (``hmac.compare_digest``); missing or wrong → 401 ``authentication_error``. The
  read-only inspector also accepts its session cookie (an HMAC of the token).
- With no token: only loopback peers whose ``Host`` is a loopback name are served.
  The peer address is read from the socket, never from forwarded headers; the
  ``Host`` check defeats DNS rebinding. Anything else → 403 ``permission_error``.

Writes must carry ``Content-Type: application/json`` (POST) and no foreign
``Origin``, so a web page the operator visits cannot forge them: a cross-origin
JSON or PUT/DELETE request needs a CORS preflight, which is never granted.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlsplit

from aiohttp import web

from proxy.appkeys import SETTINGS
from proxy.errors import BadRequestError, ProxyError, UnauthorizedError

UI_COOKIE = "lcm_admin"


class AdminForbiddenError(ProxyError):
    status, type, code = 403, "permission_error", "admin_forbidden"


def _is_loopback_ip(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def peer_is_loopback(request: web.Request) -> bool:
    """True when the TCP peer of ``request`` is a loopback address (socket, not headers)."""
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    return isinstance(peer, (tuple, list)) and bool(peer) and _is_loopback_ip(str(peer[0]))


def host_is_loopback(host: str | None) -> bool:
    """True when a ``Host`` header names this machine (localhost, 127.x, ::1)."""
    if not host:
        return False
    try:
        name = urlsplit("//" + host).hostname or ""
    except ValueError:  # "[bad": no host name at all
        return False
    return name == "localhost" or name.endswith(".localhost") or _is_loopback_ip(name)


def ui_session_value(token: str) -> str:
    """The inspector's cookie value for ``token``: an HMAC, never the token itself."""
    return hmac.new(token.encode(), b"lcm-ui-session-v1", "sha256").hexdigest()


def require_admin(request: web.Request, *, cookie_ok: bool = False) -> None:
    """Raise unless ``request`` may use the admin API (see module docstring).

    ``cookie_ok``: also accept the inspector's session cookie (read-only UI pages).
    Raises ``UnauthorizedError`` (401) or ``AdminForbiddenError`` (403).
    """
    token = request.app[SETTINGS].proxy.admin_token
    if token:
        auth = request.headers.get("Authorization", "")
        presented = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if presented:
            if not hmac.compare_digest(presented.encode(), token.encode()):
                raise UnauthorizedError("invalid admin token")
            return
        cookie = request.cookies.get(UI_COOKIE, "") if cookie_ok else ""
        if cookie and hmac.compare_digest(cookie.encode(), ui_session_value(token).encode()):
            return
        raise UnauthorizedError("admin token required: send Authorization: Bearer <token>",
                                code="admin_token_required")
    if not peer_is_loopback(request) or not host_is_loopback(request.host):
        raise AdminForbiddenError(
            "no admin token is configured, so the admin API answers loopback clients only;"
            " set proxy.admin_token (LCM_ADMIN_TOKEN) to allow remote access")


def require_write(request: web.Request) -> None:
    """Raise unless a write request is same-origin JSON (see module docstring)."""
    origin = request.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc != request.host:
        raise AdminForbiddenError("cross-origin admin requests are refused")
    if request.method == "POST" and request.content_type != "application/json":
        raise BadRequestError("admin POST requests need Content-Type: application/json",
                              code="json_required")
