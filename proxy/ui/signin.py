"""Signing in to and out of the inspector, its CSRF token, and the page response.

- ``POST /lcm/ui/login`` (form ``token``): the right admin token sets the session
  cookie (:mod:`proxy.uisession`: issued now, ``Max-Age`` of
  ``proxy.ui_session_seconds``, HttpOnly, SameSite=Strict, Secure over HTTPS:
  :func:`~proxy.handlers.access.cookie_is_secure`) and redirects to
  ``/lcm/ui``. Wrong tokens count against the client's address; after too many
  the form answers 429 with ``Retry-After`` (:mod:`proxy.throttle`). A foreign
  ``Origin`` gets 403 before the token is looked at (nor counted), so a web page
  cannot throttle the operator, whose browser shares the operator's address.
- ``POST /lcm/ui/logout`` (form ``csrf``): clears the cookie and ends every
  session issued so far. A page seen through the cookie shows its button.
- Every form that changes something carries the CSRF token (:func:`csrf_token`),
  checked by :func:`csrf_refusal` (double submit, constant time, same origin).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from aiohttp import web

from proxy.appkeys import SETTINGS
from proxy.body import read_form
from proxy.errors import TooManyFailuresError, UnauthorizedError
from proxy.handlers.access import (
    UI_COOKIE,
    check_token,
    cookie_is_secure,
    end_ui_sessions,
    has_foreign_origin,
    has_ui_session,
    new_ui_session,
    require_admin,
)
from proxy.ui.html import SECURITY_HEADERS, e, page

CSRF_COOKIE = "lcm_csrf"
"""The inspector's CSRF token: a random value in a SameSite=Strict, HttpOnly cookie,
repeated in a hidden field of every form that changes something (double submit)."""

_CSRF_NEW = web.RequestKey("lcm_csrf_new", str)
_BY_COOKIE = web.RequestKey("lcm_ui_by_cookie", bool)


def csrf_token(request: web.Request) -> str:
    """This browser's CSRF token (from its cookie, else a new one that the page's
    response sets as the cookie)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if len(token) < 32:
        token = request.get(_CSRF_NEW) or secrets.token_urlsafe(32)
        request[_CSRF_NEW] = token
    return token


def csrf_refusal(request: web.Request, form: Any) -> str | None:
    """Why a form POST is refused (a foreign ``Origin``, the form's ``csrf`` not the
    cookie's), or ``None`` when it may proceed."""
    if has_foreign_origin(request):
        return "cross-origin request refused"
    cookie = request.cookies.get(CSRF_COOKIE, "")
    sent = str(form.get("csrf", ""))
    if len(cookie) < 32 or not hmac.compare_digest(sent.encode(), cookie.encode()):
        return "missing or wrong CSRF token: reload the page and retry"
    return None


def html_response(body: str, status: int = 200, request: web.Request | None = None,
                  headers: dict[str, str] | None = None) -> web.Response:
    """An HTML response with the security headers, setting a new CSRF cookie when
    ``request``'s page handed one out."""
    resp = web.Response(status=status, text=body, content_type="text/html",
                        charset="utf-8", headers={**SECURITY_HEADERS, **(headers or {})})
    if request is not None and request.get(_CSRF_NEW):
        resp.set_cookie(CSRF_COOKIE, request[_CSRF_NEW], httponly=True, samesite="Strict",
                        path="/lcm/ui", secure=cookie_is_secure(request))
    return resp


def respond(request: web.Request, title: str, body: str, *, tenant: str | None = None,
            status: int = 200) -> web.Response:
    """A whole inspector page; with a sign-out button when the cookie let it in."""
    signout = csrf_token(request) if request.get(_BY_COOKIE) else None
    return html_response(page(title, body, tenant=tenant, signout=signout), status, request)


def login_page(message: str = "", status: int = 401,
               headers: dict[str, str] | None = None) -> web.Response:
    note = f'<p class="muted">{e(message)}</p>' if message else ""
    form = ('<form method="post" action="/lcm/ui/login"><label>Admin token '
            '<input type="password" name="token" autocomplete="current-password"></label>'
            ' <button type="submit">Sign in</button></form>')
    return html_response(page("Sign in", note + form), status, headers=headers)


def guard(request: web.Request) -> web.Response | None:
    """The login page when the token is set and missing (429 while the address is
    throttled); raises 403 off loopback without a token."""
    try:
        request[_BY_COOKIE] = require_admin(request, cookie_ok=True) == "cookie"
    except TooManyFailuresError as exc:
        return login_page(exc.message, 429, exc.headers)
    except UnauthorizedError as exc:
        return login_page(exc.message)
    return None


async def login(request: web.Request) -> web.StreamResponse:
    """``POST /lcm/ui/login`` (form ``token``) → cookie and 303 to ``/lcm/ui``; the
    login page again (401) for a wrong token, 429 while the address is throttled,
    403 for a foreign ``Origin`` (not counted)."""
    settings = request.app[SETTINGS].proxy
    if has_foreign_origin(request):  # not counted: see proxy.handlers.access
        return html_response(page("Refused", "<p>cross-origin sign-in refused</p>"), 403)
    if not settings.admin_token:
        return login_page("no admin token is configured")
    form = await read_form(request)
    try:
        check_token(request, str(form.get("token", "")))
    except TooManyFailuresError as exc:
        return login_page(exc.message, 429, exc.headers)
    except UnauthorizedError:
        return login_page("wrong token")
    resp = web.Response(status=303, headers={"Location": "/lcm/ui", **SECURITY_HEADERS})
    resp.set_cookie(UI_COOKIE, new_ui_session(request), max_age=settings.ui_session_seconds,
                    httponly=True, samesite="Strict", path="/lcm/",
                    secure=cookie_is_secure(request))
    return resp


async def logout(request: web.Request) -> web.StreamResponse:
    """``POST /lcm/ui/logout`` (form ``csrf``) → cookie cleared and 303 to ``/lcm/ui``.

    A live session also ends every session issued so far (:mod:`proxy.uisession`);
    a foreign ``Origin`` or a wrong ``csrf`` → 403 and nothing changes.
    """
    form = await read_form(request)
    if (why := csrf_refusal(request, form)) is not None:
        return html_response(page("Refused", f"<p>{e(why)}</p>"), 403)
    if has_ui_session(request):
        end_ui_sessions(request)
    resp = web.Response(status=303, headers={"Location": "/lcm/ui", **SECURITY_HEADERS})
    resp.del_cookie(UI_COOKIE, path="/lcm/", secure=cookie_is_secure(request), httponly=True,
                    samesite="Strict")
    return resp
