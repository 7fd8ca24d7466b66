"""Send requests to the upstream on the shared ``ClientSession``; map transport errors.

Transport failures become :class:`~proxy.errors.UpstreamError` (502) or
:class:`~proxy.errors.UpstreamTimeoutError` (504) with an OpenAI-style body; an
HTTP error *answered* by the upstream is not an exception here — it is relayed to
the client unchanged by the caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiohttp
from yarl import URL

from proxy.errors import UpstreamError, UpstreamTimeoutError


def upstream_url(base: str, tail: str, query: str = "") -> URL:
    """Join the upstream base URL (ending in ``/v1``) with ``tail`` (``/models``…).

    ``tail`` and ``query`` are kept exactly as the client encoded them.
    """
    raw = base.rstrip("/") + tail
    if query:
        raw += "?" + query
    return URL(raw, encoded=True)


AZURE_PREFIX = "/openai"
"""Azure OpenAI's path prefix on a client's request (``/openai/deployments/{name}/…``,
``/openai/responses``, ``/openai/v1/…``): what ``AzureOpenAI(azure_endpoint=…)`` and
clients given ``https://RES.openai.azure.com/openai/v1`` as base URL send."""


def is_azure_path(raw_path: str) -> bool:
    """True for a path under :data:`AZURE_PREFIX` (``/openai`` itself or below)."""
    return raw_path == AZURE_PREFIX or raw_path.startswith(AZURE_PREFIX + "/")


def azure_root(base: str) -> str:
    """The part of the upstream base URL an Azure path (``/openai/…``) is appended
    to: ``base`` without a trailing ``/openai/v1``, ``/openai`` or ``/v1``
    (``https://RES.openai.azure.com/openai/v1`` and ``https://RES.openai.azure.com``
    → ``https://RES.openai.azure.com``; a gateway's ``https://gw/team/openai/v1`` →
    ``https://gw/team``). No trailing slash."""
    root = base.rstrip("/")
    for suffix in ("/openai/v1", "/openai", "/v1"):
        if root.lower().endswith(suffix):
            return root[: -len(suffix)]
    return root


def client_url(base: str, raw_path: str, query: str = "") -> URL:
    """The upstream URL of a client's request path and query, both kept exactly as
    the client encoded them: ``/v1/{tail}`` → ``base`` + ``/{tail}``
    (:func:`upstream_url`); an Azure path (``/openai/…``, :func:`is_azure_path`) →
    :func:`azure_root` of ``base`` + the whole path, so the deployment in the path and
    ``?api-version=`` reach the Azure resource unchanged; any other path →
    ``base`` + the path."""
    if is_azure_path(raw_path):
        return URL(azure_root(base) + raw_path + ("?" + query if query else ""), encoded=True)
    return upstream_url(base, raw_path[3:] if raw_path.startswith("/v1") else raw_path, query)


def route_url(base: str, raw_path: str, tail: str, query: str = "") -> URL:
    """The upstream URL of a request to one of the proxy's own API routes: ``base`` +
    ``tail`` (``/chat/completions``) for its ``/v1/`` route, the client's path as
    :func:`client_url` maps it for an Azure one (the deployment path, kept for every
    round the proxy sends for the request)."""
    if is_azure_path(raw_path):
        return client_url(base, raw_path, query)
    return upstream_url(base, tail, query)


def same_origin(a: str, b: str) -> bool:
    """True when URLs ``a`` and ``b`` name one server: scheme, host and port (the
    scheme's default when absent), compared case-insensitively; unparsable → False."""
    try:
        ua, ub = URL(a), URL(b)
        return (ua.scheme.lower(), (ua.host or "").lower(), ua.port) == (
            ub.scheme.lower(), (ub.host or "").lower(), ub.port) and bool(ua.host)
    except (ValueError, TypeError):
        return False


def shown_url(url: str) -> str:
    """``url`` as health and the start banner show it: its user info and every query
    value replaced by ``***`` (an upstream URL may carry basic-auth credentials, a
    token as user name, or an ``?api-key=``); scheme, host, port and path kept."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = "***@" + netloc.rpartition("@")[2]
        query = urlencode([(k, "***") for k, _ in parse_qsl(parts.query, keep_blank_values=True)],
                          safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(unparsable URL)"


async def send(
    session: aiohttp.ClientSession,
    method: str,
    url: URL,
    headers: Mapping[str, str],
    data: bytes | AsyncIterable[bytes] | None,
) -> aiohttp.ClientResponse:
    """Send one request and return the response once its headers arrived.

    The caller must ``release()``/``close()`` the response. Raises
    ``UpstreamTimeoutError`` when connecting or the first byte times out and
    ``UpstreamError`` when the upstream cannot be reached or drops the connection.
    """
    try:
        return await session.request(
            method, url, headers=headers, data=data, allow_redirects=False,
            auto_decompress=True,
        )
    except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
        raise UpstreamTimeoutError(f"upstream did not answer in time ({url.host})") from exc
    except aiohttp.ClientConnectorError as exc:
        raise UpstreamError(f"cannot reach upstream {url.host}:{url.port}: {exc.os_error}") from exc
    except aiohttp.ClientError as exc:
        raise UpstreamError(f"upstream request failed: {exc.__class__.__name__}: {exc}") from exc


def client_timeout(connect: float, read: float) -> aiohttp.ClientTimeout:
    """No total limit (long streams are normal); ``sock_connect``/``sock_read`` bound
    connecting and each idle gap between reads, in seconds."""
    return aiohttp.ClientTimeout(total=None, connect=None, sock_connect=connect, sock_read=read)


def is_event_stream(resp: aiohttp.ClientResponse) -> bool:
    """True when the upstream answered with ``text/event-stream``."""
    return resp.content_type == "text/event-stream"


_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":")


def sse_by_its_bytes(head: bytes) -> bool | None:
    """Whether a body that begins with ``head`` is an event stream, judged by its
    bytes (for an answer to a stream request whose ``Content-Type`` is not
    ``text/event-stream``: missing, ``application/octet-stream``, ``text/plain``, or
    JSON by label, as some servers and relays send their streams).

    After a UTF-8 byte order mark and blank lines, an event stream starts with a
    field or a comment line (``data:``, ``event:``, ``id:``, ``retry:``, ``:``); a
    JSON body with ``{``/``[``. ``None``: ``head`` is too short to tell (read more,
    or at the body's end take it for not a stream)."""
    rest = head.removeprefix(b"\xef\xbb\xbf").lstrip(b"\r\n \t")
    if not rest:
        return None
    for start in _SSE_STARTS:
        if rest.startswith(start):
            return True
        if start.startswith(rest):
            return None
    return False


def describe(exc: BaseException) -> dict[str, Any]:
    """A short, loggable description of a transport error."""
    return {"error": exc.__class__.__name__, "detail": str(exc)[:500]}
