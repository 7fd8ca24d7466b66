"""The steps before forwarding, each acting on one :class:`~proxy.flow.exchange.Exchange`:
parse, scope and capture, the memory path, the headers that say what memory did."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from memory_core.models import Scope
from proxy import rawjson, rewrite
from proxy.appkeys import (
    AENGINE,
    ENGINE,
    METRICS,
    MODEL,
    REQUEST_ID,
    SETTINGS,
    TOOL_REFUSALS,
)
from proxy.body import read_body
from proxy.deployment import request_model
from proxy.errors import BadRequestError
from proxy.flow.exchange import Exchange
from proxy.flow.memorypath import Prepared, prepare_upstream
from proxy.flow.record import record_unparsed
from proxy.rawjson import RawItems
from proxy.scope import effective_salt, request_zone, resolve_scope
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

log = logging.getLogger("lcm.chat")

_OFF = ("off", "0", "false", "no")


@dataclass(frozen=True, slots=True)
class ParsedBody:
    """The request body as parsed (``value``), or ``None`` with ``error`` set."""

    value: Any
    error: str | None = None


def parse_body(body: bytes) -> ParsedBody:
    """Parse a request body: orjson first, the stdlib as fallback.

    orjson rejects lone surrogates and integers past 64 bits, which the stdlib
    accepts (shared/DEPENDENCIES.md); a body neither accepts is reported in
    ``error``. ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (RFC 8259): the
    stdlib would read them, and a rewritten body would carry ``null`` in their place,
    so they are reported too. Never raises.
    """
    try:
        return ParsedBody(orjson.loads(body))
    except orjson.JSONDecodeError:
        pass
    try:
        return ParsedBody(json.loads(body, parse_constant=_not_json))
    except (ValueError, RecursionError) as exc:
        return ParsedBody(None, f"{exc.__class__.__name__}: {exc}"[:300])


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


async def open_exchange(request: web.Request, wire: WireAdapter = CHAT) -> Exchange:
    """Read and parse a request of an OpenAI-shaped API (``wire``) into a new
    :class:`~proxy.flow.exchange.Exchange`, its model noted for the access line.
    A body that is not JSON is recorded (an event) and raises
    :class:`~proxy.errors.BadRequestError` in OpenAI's wording."""
    raw = await read_body(request)
    parsed = parse_body(raw)
    if parsed.error is not None:
        record_unparsed(request, raw, parsed.error)
        raise BadRequestError(
            "We could not parse the JSON body of your request. (HINT: This likely means"
            " you aren't using your HTTP library correctly. The OpenAI API expects a JSON"
            f" payload.) Parser said: {parsed.error}"
        )
    ex = Exchange(request=request, rid=request[REQUEST_ID], raw=raw, body=parsed.value,
                  wire=wire)
    model = request_model(request, ex.body)
    if model is not None:
        request[MODEL] = model[:100]  # for the access line (middlewares)
    return ex


def exact_body(ex: Exchange) -> dict[str, Any]:
    """The body to add tools to: the memory path's, else the client's, re-read with
    the stdlib when it may hold integers orjson would turn into floats."""
    if ex.prepared.obj is not None:
        return ex.prepared.obj
    if rewrite.needs_exact_numbers(ex.raw):
        value = json.loads(ex.raw)
        if isinstance(value, dict):
            return value
    body: dict[str, Any] = ex.body
    return body


def memory_off(ex: Exchange) -> bool:
    """``X-LCM-Memory: off`` (or 0/false/no): no block and no memory tools."""
    return ex.request.headers.get("X-LCM-Memory", "").lower() in _OFF


def event_meta(body: dict[str, Any], model: str | None = None) -> dict[str, Any]:
    """What the request event records beside the messages; ``model``: the request's
    (:func:`proxy.deployment.request_model`), else the body's."""
    return {
        "model": model if model is not None else
        body.get("model") if isinstance(body.get("model"), str) else None,
        "stream": body.get("stream") is True,
    }


def scope_of(ex: Exchange) -> Scope:
    """The request's scope (tenant, role, session) from its headers and body. Raises
    on a request it cannot be resolved for (the caller fails open)."""
    app = ex.request.app
    return resolve_scope(
        ex.request.headers,
        salt=effective_salt(app[SETTINGS].proxy.tenant_salt, app[ENGINE].tenant_salt),
        fixed_tenant=app[SETTINGS].proxy.tenant, body=ex.body,
    )


def begin_capture(ex: Exchange,
                  expand: Callable[[Scope], dict[str, Any] | None] | None = None) -> None:
    """Resolve the scope (unless ``ex.scope`` is set) and queue the request's capture
    (fail open: no ticket).

    ``expand``: given the scope, the body whose conversation is captured instead of
    the client's (a Responses request continuing a stored response: its whole
    thread), or ``None`` to capture nothing.
    """
    app = ex.request.app
    try:
        ex.scope = ex.scope or scope_of(ex)
        body = ex.body if expand is None else expand(ex.scope)
        if body is None:
            return
        ex.ticket, ex.capture_future = app[AENGINE].capture_request(
            ex.scope, ex.rid, ex.wire.messages(body),
            event_meta(body, request_model(ex.request, body)),
            request_zone(ex.request.headers),
            # no block, no memory tools: its items are read after its answer at the
            # soonest, so the answer's commit need not wait for their extraction
            extract_after_answer=memory_off(ex))
    except Exception:  # noqa: BLE001 - fail open
        app[METRICS].fail_open.labels("capture").inc()
        log.exception("capture failed; forwarding unmodified")
        ex.ticket = None


def is_inexact(ex: Exchange) -> bool:
    """True, ``ex.prepared`` saying so (skipped, ``inexact-number``), when ``ex``'s body
    holds a number too large for a float (``1e400``, :func:`proxy.rewrite.holds_infinity`):
    any rewrite would send ``null`` in its place, so the request goes as sent, without
    memory (it is still captured). Items a wire keeps as the client's bytes
    (``raw_items_key``: Responses ``input``, Messages ``messages``) keep such a number
    as sent, so only the other fields are asked; a large body's conversation is not
    read again (:func:`proxy.rewrite.holds_infinity`)."""
    if not rewrite.holds_infinity(ex.raw, ex.body, kept=ex.wire.raw_items_key,
                                  conversation=ex.wire.conversation_key):
        return False
    ex.prepared = Prepared(headers={"x-lcm-memory-reason": "inexact-number"})
    return True


async def run_memory_path(ex: Exchange) -> None:
    """Decide the upstream body (:func:`proxy.flow.memorypath.prepare_upstream`) from the
    client's body, or ``ex.plan_body`` when set; on any failure the request goes as
    sent (state ``failed-open``), and so does a body holding a number too large for a
    float (:func:`is_inexact`).

    For a wire whose items the proxy may not understand (``raw_items_key``), the
    client's bytes of its items are kept for every body built from them from here on
    (:data:`proxy.rawjson.CURRENT`, also the tool loop's rounds)."""
    app = ex.request.app
    metrics = app[METRICS]
    started = time.perf_counter()
    assert ex.scope is not None
    if is_inexact(ex):
        return
    raw_items = RawItems(ex.raw, ex.body, ex.wire.raw_items_key) if ex.wire.raw_items_key \
        else None
    rawjson.CURRENT.set(raw_items)
    try:
        # the background gives way (bounded) meanwhile
        ex.prepared = await prepare_upstream(
            ex.request, ex.scope, ex.capture_future,
            ex.raw if ex.plan_raw is None else ex.plan_raw,
            ex.body if ex.plan_body is None else ex.plan_body, ex.rid, ex.wire,
            raw_items)
    except Exception as exc:  # noqa: BLE001 - fail open: forward unmodified
        metrics.fail_open.labels("memory_path").inc()
        log.exception("memory path failed; forwarding the request unmodified")
        ex.prepared = Prepared(state="failed-open", headers={"x-lcm-memory-reason": (
            "capture-timeout" if isinstance(exc, TimeoutError) else "error")})
    metrics.stage_latency.labels("memory_path").observe(time.perf_counter() - started)


def skip_reason(ex: Exchange) -> str:
    """Why a forwarded request got no memory (``x-lcm-memory-reason`` beside
    ``x-lcm-memory: skipped``): ``not-chat`` (no messages array), ``capture-off``,
    ``error`` (the capture failed; logged), ``inexact-number`` (a number too large
    for a float: :func:`is_inexact`), ``injection-off`` (settings),
    ``memory-off-header`` (``X-LCM-Memory: off``), ``no-user-message``, ``no-room``
    (the messages leave no room for a block in the context budget), or
    ``nothing-to-inject`` (the block came out empty)."""
    body, app = ex.body, ex.request.app
    given = ex.prepared.headers.get("x-lcm-memory-reason")
    if given is not None:  # the memory path said why
        return given
    if not ex.wire.understood(body):
        return "not-chat"
    if not app[SETTINGS].capture.enabled:
        return "capture-off"
    if ex.ticket is None:
        return "error"
    if not app[ENGINE].config.inject:
        return "injection-off"
    if memory_off(ex):
        return "memory-off-header"
    if rewrite.newest_user_index(ex.wire.messages(body)) is None:
        return "no-user-message"
    return "nothing-to-inject"


def offers_tools(ex: Exchange) -> bool:
    """The memory tools go with this request: it is captured, its memory path did not
    fail open nor find it over budget (then it goes exactly as sent) and found that
    the tools could help (``Prepared.tools``), the tools are on, memory is not off
    for it, the request allows them, and its model's upstream has not refused tools
    (:mod:`proxy.flow.toolrefusal`)."""
    app = ex.request.app
    return (ex.memory and ex.prepared.tools
            and ex.prepared.state not in ("failed-open", "over-budget")
            and app[SETTINGS].tools.enabled and not memory_off(ex)
            and ex.wire.tools_wanted(ex.body)
            and not app[TOOL_REFUSALS].refuses(app[SETTINGS].proxy.upstream,
                                               request_model(ex.request, ex.body)))
