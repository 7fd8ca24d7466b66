"""Errors the proxy itself answers, in OpenAI's error body shape.

Tree::

    ProxyError (status, message, type, code, param)
    ├── BadRequestError        400  invalid_request_error   body not JSON / not decodable
    ├── PayloadTooLargeError   413  invalid_request_error   body over proxy.max_body_bytes
    ├── RequestTimeoutError    408  invalid_request_error   body sent too slowly
    ├── UnauthorizedError      401  authentication_error    admin token missing/wrong
    │   └── ClientKeyRejectedError 401 invalid_request_error client key not allowed
    ├── TooManyFailuresError   429  rate_limit_error        too many wrong admin tokens
    └── UpstreamError          502  upstream_error          upstream unreachable / broken
        └── UpstreamTimeoutError 504 upstream_timeout        no answer in time

Body: ``{"error": {"message", "type", "param", "code"}}`` — the shape the openai SDK
parses into ``APIStatusError`` subclasses (400 → BadRequestError, 401 →
AuthenticationError, 413/502/504 → APIStatusError/InternalServerError).
Errors that come *from* the upstream are never wrapped: they pass through as-is.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web


class ProxyError(Exception):
    """An error answered by the proxy itself with an OpenAI-style JSON body."""

    status = 500
    type = "proxy_error"
    code: str | None = None

    def __init__(self, message: str, *, code: str | None = None, param: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.param = param
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """Return the error as OpenAI's ``{"error": {...}}`` dict."""
        return error_body(self.message, self.type, self.code, self.param)


class BadRequestError(ProxyError):
    status, type, code = 400, "invalid_request_error", "invalid_json"


class PayloadTooLargeError(ProxyError):
    status, type, code = 413, "invalid_request_error", "request_too_large"


class RequestTimeoutError(ProxyError):
    """The request body did not arrive in time (:mod:`proxy.body`); the connection
    is closed after the answer, the rest of the body unread."""

    status, type, code = 408, "invalid_request_error", "request_timeout"


class UnauthorizedError(ProxyError):
    status, type, code = 401, "authentication_error", "invalid_admin_token"


class ClientKeyRejectedError(UnauthorizedError):
    """The client's key is not in ``proxy.require_client_keys`` (OpenAI's own 401
    shape for a wrong key: ``invalid_request_error`` / ``invalid_api_key``)."""

    status, type, code = 401, "invalid_request_error", "invalid_api_key"


class TooManyFailuresError(ProxyError):
    """This address sent too many wrong admin tokens lately (:mod:`proxy.throttle`);
    ``Retry-After`` says when it may try again."""

    status, type, code = 429, "rate_limit_error", "too_many_failed_attempts"

    def __init__(self, retry_after: int):
        super().__init__(f"too many wrong admin tokens from this address; try again in"
                         f" {retry_after} s", headers={"Retry-After": str(retry_after)})
        self.retry_after = retry_after


class CrossSiteRequestError(ProxyError):
    """A browser request (or CORS preflight) from a site not in ``proxy.allowed_origins`` (403)."""

    status, type, code = 403, "permission_error", "cross_site_request"


class HostNotAllowedError(CrossSiteRequestError):
    """A ``Host`` a loopback listener does not serve (DNS rebinding) (403)."""

    code = "host_not_allowed"


class UpstreamError(ProxyError):
    status, type, code = 502, "upstream_error", "upstream_unreachable"


class UpstreamTimeoutError(UpstreamError):
    status, type, code = 504, "upstream_timeout", "upstream_timeout"


def error_body(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """Return ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error_response(exc: ProxyError, request_id: str | None = None) -> web.Response:
    """Render ``exc`` as a JSON ``web.Response`` carrying ``x-lcm-request-id`` and
    the error's own headers (``Retry-After``)."""
    headers = {**exc.headers, **({"x-lcm-request-id": request_id} if request_id else {})}
    return web.Response(
        status=exc.status,
        body=orjson.dumps(exc.body()),
        content_type="application/json",
        headers=headers,
    )
