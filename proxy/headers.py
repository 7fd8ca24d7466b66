"""Which headers cross the proxy, in each direction.

Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection and never cross.
``Host`` and ``Content-Length`` are recomputed by aiohttp for the new
connection (``Content-Length`` is kept for streamed pass-through bodies so that
uploads and downloads keep a declared length). ``Accept-Encoding`` is dropped
toward the upstream so that the proxy can read SSE (it asks for
:data:`UPSTREAM_ACCEPT_ENCODING` instead); ``Content-Encoding`` is
therefore dropped on the way back because aiohttp hands us decoded bytes. The same
holds for request bodies: aiohttp's server decodes a body sent with
``Content-Encoding: gzip`` (``deflate``, ``br``, ``zstd``) before a handler reads it,
so the proxy forwards the decoded bytes and must drop ``Content-Encoding`` (and the
encoded body's ``Content-Length``) toward the upstream, or the upstream would try to
decode plain bytes. ``Expect: 100-continue`` is answered by aiohttp's server at the
proxy's own hop, before a handler reads the body; forwarded, it would make the
proxy's client wait for an interim ``100 Continue`` that an upstream may rightly
never send, so it is dropped toward the upstream. ``X-LCM-*`` headers are the
proxy's own and never reach the upstream (DESIGN §2). The upstream's ``Date`` (when
the origin made its answer, RFC 9110 §6.6.1) and ``Server`` reach the client;
aiohttp adds its own only to answers the proxy makes itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from multidict import CIMultiDict

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_TO_UPSTREAM_DROP = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
_TO_CLIENT_DROP = HOP_BY_HOP | {"content-length", "content-encoding"}
DECODED_REQUEST_ENCODINGS = frozenset({"gzip", "deflate", "br", "zstd"})
"""``Content-Encoding`` values aiohttp's server decodes before a handler reads the body
(``br`` and ``zstd`` with the Brotli and backports.zstd packages, dependencies of this
one: the Codex CLI sends zstd request bodies)."""
UPSTREAM_ACCEPT_ENCODING = "gzip, deflate"
"""What the proxy accepts from the upstream (the client's own ``Accept-Encoding`` is
dropped: the proxy reads the answer). Pinned: with the packages above aiohttp's client
would also offer ``br`` and ``zstd``; the upstream's answers stay encoded as before."""


MAX_FIELD_BYTES = 32 * 1024
"""The longest header line (and request line) the proxy reads, both from clients and
from upstreams: aiohttp's default, 8190 bytes, refused what API fronts accept (a
request header of 10 KB got a plain-text 400; an answer's, a 502)."""
HEAD_LIMITS = {"max_line_size": MAX_FIELD_BYTES, "max_field_size": MAX_FIELD_BYTES}
"""aiohttp's server's ``handler_args`` for :data:`MAX_FIELD_BYTES`."""


def is_body_decoded(headers: Mapping[str, str]) -> bool:
    """True when aiohttp's server hands the handler this request's body decoded.

    Mirrors aiohttp's own test (``http_parser.parse_headers``): one ASCII
    ``Content-Encoding`` value, case-insensitive, among :data:`DECODED_REQUEST_ENCODINGS`.
    """
    value = CIMultiDict(headers).get("content-encoding", "")
    return value.isascii() and value.lower() in DECODED_REQUEST_ENCODINGS


def _connection_tokens(headers: Mapping[str, str]) -> set[str]:
    value = headers.get("connection", "")
    return {t.strip().lower() for t in value.split(",") if t.strip()}


def is_anthropic_path(path: str) -> bool:
    """True for Anthropic's routes (``/v1/messages`` and below, ``count_tokens`` and
    ``batches`` included): their keys travel as ``x-api-key`` and their errors are
    ``{"type": "error", "error": {...}}``."""
    return path == "/v1/messages" or path.startswith("/v1/messages/")


def to_upstream(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    api_key: str = "",
    anthropic: bool = False,
    azure: bool = False,
    keep_length: bool = False,
    body_decoded: bool | None = None,
) -> CIMultiDict[str]:
    """Return the headers to send upstream for a client request.

    ``api_key``: when set, replaces the client's ``Authorization`` with
    ``Bearer <api_key>``; with ``anthropic`` (Anthropic's ``/v1/messages*`` routes)
    it replaces the client's key headers with ``x-api-key: <api_key>``; with ``azure``
    (Azure's ``/openai/…`` paths, whose deployment routes take a key only as
    ``api-key``) with ``api-key: <api_key>``.
    ``keep_length``: keep ``Content-Length`` (streamed bodies).
    ``body_decoded``: the forwarded body is not the client's encoded bytes, so
    ``Content-Encoding`` and ``Content-Length`` are dropped; ``None`` (the default)
    decides with :func:`is_body_decoded`, which holds for any body read from aiohttp.
    """
    src = CIMultiDict(headers)
    drop = _TO_UPSTREAM_DROP | _connection_tokens(src)
    if keep_length:
        drop = drop - {"content-length"}
    if body_decoded is None:
        body_decoded = is_body_decoded(src)
    if body_decoded:
        drop = drop | {"content-encoding", "content-length"}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in src.items():
        low = name.lower()
        if low in drop or low.startswith("x-lcm-"):
            continue
        out.add(name, value)
    out["Accept-Encoding"] = UPSTREAM_ACCEPT_ENCODING
    if api_key and anthropic:
        out.popall("Authorization", None)
        out["x-api-key"] = api_key
    elif api_key and azure:
        out.popall("Authorization", None)
        out["api-key"] = api_key
    elif api_key:
        out["Authorization"] = f"Bearer {api_key}"
    return out


def to_client(headers: Mapping[str, str], *, keep_length: bool = False) -> CIMultiDict[str]:
    """Return the upstream response headers to relay to the client (status-related
    headers such as ``retry-after``, ``x-ratelimit-*`` and ``x-request-id`` included).

    ``keep_length``: keep ``Content-Length`` when the body is relayed byte for byte
    and was not content-encoded (aiohttp hands us decoded bytes, whose length
    differs), so downloads and ``HEAD`` answers keep their declared size. Callers
    that may write a different body must leave it off.
    """
    src = CIMultiDict(headers)
    drop = _TO_CLIENT_DROP | _connection_tokens(src)
    if keep_length and "content-encoding" not in src:
        drop = drop - {"content-length"}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in src.items():
        if name.lower() not in drop:
            out.add(name, value)
    return out


IDEMPOTENCY_HEADERS = ("idempotency-key", "x-idempotency-key")
"""Request headers naming one request to an upstream (or a gateway) that answers a
repeated key with the first answer."""


def for_send(headers: CIMultiDict[str], n: int) -> CIMultiDict[str]:
    """The upstream headers of the ``n``-th upstream call (from 0) the proxy makes for
    one client request (the hidden rounds of a memory tool loop, a retry without
    the memory tools): from the second call on, each :data:`IDEMPOTENCY_HEADERS`
    value gets ``-lcm<n>`` appended. An upstream that honours the key would answer
    every round with the first round's answer; derived keys stay stable across the
    client's own retries of the request, so each of their rounds is deduplicated
    with its counterpart. ``headers`` itself is never changed."""
    if n == 0 or not any(k in headers for k in IDEMPOTENCY_HEADERS):
        return headers
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in headers.items():
        out.add(name, f"{value}-lcm{n}" if name.lower() in IDEMPOTENCY_HEADERS else value)
    return out
