"""Recover once from an upstream context-length error, before any byte reached the client."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from memory_core.assembly import budget
from proxy import forwardlog, rewrite
from proxy import headers as hdrs
from proxy.appkeys import ENGINE, METRICS, SETTINGS
from proxy.deployment import request_model
from proxy.flow.exchange import Exchange
from proxy.flow.memorypath import Prepared, prepare_upstream

log = logging.getLogger("lcm.chat")

Recover = Callable[[int, bytes], Awaitable[dict[str, Any] | None]]
"""Given a first round's error status and body, a new upstream body to send once
instead, or ``None``."""


def recoverer(ex: Exchange, replan: Callable[[], Awaitable[Prepared]] | None = None,
              view: Callable[[dict[str, Any]], list[Any]] | None = None) -> Recover | None:
    """The once-only answer to an upstream context-length error, or ``None`` when
    the memory path did not plan this request (failed open, over budget).

    ``replan`` runs the memory path again (default:
    :func:`~proxy.flow.memorypath.prepare_upstream` on the planned body) and
    ``view`` gives the messages a body is counted by (default: the adapter's);
    Anthropic Messages plans on a chat-shaped view of its body
    (:mod:`proxy.handlers.messages`).

    The returned coroutine function takes the error's status and body; for a
    context-length error (:func:`memory_core.assembly.budget.context_error`) it records a
    smaller window for the model (:class:`memory_core.assembly.budget.ContextLimits`), runs
    the memory path again under it and returns the new upstream body (memory tools
    added when ``ex.tools``), or ``None`` (not such an error, already retried, or
    the new plan is no smaller); the new plan becomes ``ex.prepared`` (its budget bounds
    the hidden rounds that follow). Says what happened in ``ex.extra``
    (``x-lcm-context-recovery``), the log and ``lcm_context_events``.
    """
    prepared, extra = ex.prepared, ex.extra
    body = ex.body if ex.plan_body is None else ex.plan_body
    raw = ex.raw if ex.plan_raw is None else ex.plan_raw
    if not ex.memory or prepared.budget is None or prepared.state in (
            "over-budget", "failed-open"):
        return None
    request = ex.request
    app = request.app
    engine, metrics = app[ENGINE], app[METRICS]
    strict = app[SETTINGS].tools.strict
    rid = ex.rid
    tried = False

    async def recover(status: int, error_body: bytes) -> dict[str, Any] | None:
        nonlocal tried
        error = budget.context_error(status, error_body)
        if tried or error is None or prepared.budget is None:
            return None
        tried = True
        sent_obj = prepared.obj or body
        sent = prepared.tokens
        if sent is None:
            messages = (view or ex.wire.messages)(sent_obj)
            sent = budget.messages_tokens(messages) + budget.tools_tokens(
                ex.wire.add_tools(sent_obj, strict=strict, short=prepared.short_tools
                                  )[0]["tools"] if ex.tools
                else sent_obj.get("tools"))
        model = request_model(request, body)
        window = engine.context_limits.learn(model, prepared.budget, error, sent)
        again: Prepared | None = None
        assert ex.scope is not None  # ex.memory
        try:
            if replan is not None:
                again = await replan()
            else:
                again = await prepare_upstream(request, ex.scope, ex.capture_future, raw,
                                               body, rid, ex.wire)
        except Exception:  # noqa: BLE001 - fail open: the client gets the error
            log.exception("memory path failed while recovering from a context-length error")
        if (again is None or again.obj is None or again.state == "over-budget"
                or (again.tokens is not None and again.tokens >= sent)):
            metrics.context.labels("not_recovered").inc()
            log.warning("request %s: the upstream refused %d tokens as too long (%s); a"
                        " window of %d for model %r cannot hold less: answered with the error",
                        rid, sent, error.message[:200], window, model)
            extra["x-lcm-context-recovery"] = f"not-recovered; window={window}"
            return None
        metrics.context.labels("recovered").inc()
        log.warning("request %s: the upstream refused %d tokens as too long (%s); model %r"
                    " now planned with a window of %d, retried once with %s tokens",
                    rid, sent, error.message[:200], model, window,
                    again.tokens if again.tokens is not None else "fewer")
        # The retry is the plan the upstream answers from here on: its budget (the
        # learned window) bounds the tool loop's hidden rounds, and its block's
        # explain log waits for the next send (Exchange.send), as the first plan's did.
        ex.prepared = again
        extra.update(again.headers)
        extra["x-lcm-memory"] = again.state
        extra["x-lcm-context-recovery"] = f"retried; window={window}; refused_tokens={sent}"
        # The inspector shows both bodies the upstream received; the retry is newest.
        forwardlog.record(request, ex.scope, rid, again, ex.raw, body, tools=ex.tools,
                          wire=ex.wire)
        return ex.wire.add_tools(again.obj, strict=strict, short=again.short_tools
                                 )[0] if ex.tools else again.obj

    return recover


async def send_recovering(ex: Exchange, session: aiohttp.ClientSession, url: Any,
                          headers: Any, body: bytes, recover: Recover | None
                          ) -> tuple[aiohttp.ClientResponse, bytes | None]:
    """POST ``body`` upstream for ``ex`` (:meth:`~proxy.flow.exchange.Exchange.send`);
    on an error status with ``recover`` set, read the error
    and, when ``recover`` gives a new body, send that once instead.

    Returns ``(upstream, refused)``: ``refused`` is the body of an error that was
    read (its response released) and stands as the answer, else ``None`` and
    ``upstream`` is unread. The new body goes under a derived ``Idempotency-Key``
    (:func:`proxy.headers.for_send`), as a hidden round of the tool loop does. Raises
    what :func:`proxy.upstream.send` raises
    (``UpstreamError`` and its timeout).
    """
    upstream = await ex.send(session, url, headers, body)
    if upstream.status < 400 or recover is None:
        return upstream, None
    # A context-length error is answered once more, compacted further, before any
    # byte reached the client; any other error as it came.
    try:
        refused = await upstream.read()
    finally:
        upstream.release()
    again = await recover(upstream.status, refused)
    if again is None:
        return upstream, refused
    return await ex.send(session, url, hdrs.for_send(headers, 1),
                         rewrite.dumps_body(again)), None
