"""Record an exchange's evidence: the answer, its hidden rounds, or what became of it.

Runs after the client was served, or just before its last bytes (``store_first``:
an answer the client fully received is never one the proxy lost). A reply is
stored as a message only when the client received all of it; anything else is
kept as an event. Failures here never reach the client (fail open).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from aiohttp import web

from memory_core.capture.evidence import loads_lossless
from memory_core.models import Scope
from proxy.appkeys import AENGINE, ENGINE, HTTP, METRICS, REQUEST_ID, SETTINGS, TASKS
from proxy.deployment import request_model
from proxy.flow.exchange import Exchange
from proxy.flow.memorypath import schedule_compaction
from proxy.relay import RelayResult
from proxy.scope import bearer_key, effective_salt, resolve_scope
from proxy.sse import ChunkAccumulator, SSEDecoder
from proxy.summarizer import LLMSummarizer
from proxy.upstream import same_origin

log = logging.getLogger("lcm.chat")

_ERROR_BODY_KEEP = 64 * 1024

Stored = Coroutine[Any, Any, None]
"""What a capture of this module's returns once it has queued the answer's write:
the wait for its commit (and the compaction due after it), to run as a task
(:func:`store_first`, :func:`spawn`). It never raises."""


async def bounded(task: asyncio.Task[Any], seconds: float, request_id: str) -> None:
    """Wait up to ``seconds`` for a capture task; it keeps running past the limit."""
    if seconds <= 0:
        return
    try:
        await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        log.warning("response capture still pending after %.1f s; answering anyway"
                    " (request %s)", seconds, request_id)


def summarizer_for(app: web.Application, request: web.Request) -> LLMSummarizer | None:
    """The ``llm`` summarizer for a compaction this request may trigger, if configured.

    Without ``compaction.llm_api_key`` it borrows ``proxy.upstream_api_key`` or the
    request's key, held in memory for the background task only (never stored or
    logged), but only when it calls the upstream itself: a ``compaction.llm_base_url``
    on another server (scheme, host, port) gets no key meant for the upstream.
    """
    cfg = app[SETTINGS].compaction
    if cfg.summarizer != "llm":
        return None
    upstream = app[SETTINGS].proxy.upstream
    base_url = cfg.llm_base_url or upstream
    key = cfg.llm_api_key
    if not key and same_origin(base_url, upstream):
        key = app[SETTINGS].proxy.upstream_api_key or bearer_key(request.headers)
    return LLMSummarizer(
        app[HTTP], asyncio.get_running_loop(), base_url=base_url, model=cfg.llm_model,
        api_key=key, timeout=cfg.llm_timeout_seconds,
    )


def record_unparsed(request: web.Request, raw: bytes, reason: str) -> None:
    """Keep a body the proxy could not read as a chat request (an ``unparsed`` event),
    filed under the tenant and role its headers (and body, when it is an object) name,
    so that export and purge of that tenant cover it."""
    app = request.app
    try:
        try:
            parsed = loads_lossless(raw) if raw else None
        except ValueError:
            parsed = None
        scope: Scope | None = resolve_scope(
            request.headers,
            salt=effective_salt(app[SETTINGS].proxy.tenant_salt, app[ENGINE].tenant_salt),
            fixed_tenant=app[SETTINGS].proxy.tenant,
            body=parsed if isinstance(parsed, dict) else None)
    except Exception:  # noqa: BLE001 - kept unscoped rather than lost
        scope = None
    try:
        app[AENGINE].queue_event(
            scope,
            request[REQUEST_ID],
            "unparsed",
            {"path": request.path, "reason": reason, "body": raw.decode("utf-8", "replace")},
        )
    except Exception:  # noqa: BLE001 - fail open
        app[METRICS].fail_open.labels("capture").inc()
        log.exception("could not record unparsed body")


def record_failure(ex: Exchange, status: int, code: str | None, message: str | None
                   ) -> None:
    """The request is evidence: say what became of it (a transport error)."""
    if ex.ticket is not None:
        ex.request.app[AENGINE].queue_response(
            ex.ticket, [], {"status": status, "outcome": code, "error": message})


def record_gone(ex: Exchange) -> None:
    """The client left before the upstream's answer began: say so (an event, never
    an answer)."""
    if ex.ticket is not None:
        ex.captured = True
        ex.request.app[AENGINE].queue_response(
            ex.ticket, [], {"status": None, "stream": ex.streamed, "outcome": "incomplete",
                            "client_gone": True, "partial_choices": []})


async def store_first(ex: Exchange, job: Stored) -> None:
    """Run the answer's capture ``job`` before the client gets its end, then wait for
    the commit at most ``capture.response_wait_seconds`` (default 2 s; 0: not at all)
    while the background gives way, unless the write went to the capture journal as
    it was queued (``capture.journal``, the default:
    :mod:`memory_core.capture.journal`), which keeps it through a crash before the
    commit: then nothing waits.

    ``job`` is what one of this module's captures (or a handler's built on
    :func:`store_relayed`) returned: making it queued the answer on the store's
    writer, before this call. The writer runs jobs in order (FIFO), so anything
    this client sends after the end (the next turn, whose capture matches its
    history against this answer by prefix) is queued behind the answer and sees it
    stored: the guarantee the commit wait used to give the next turn, at no wait
    and no turn of the loop. What the wait still adds is durability against a
    crash in the few milliseconds before the commit (the client has the answer, the
    store not yet; a Chat Completions or Messages client sends it back with its
    next turn, and it is stored then).
    """
    app = ex.request.app
    ex.captured = True
    task = app[TASKS].spawn(job, name=f"capture-response-{ex.rid}")
    seconds = app[SETTINGS].capture.response_wait_seconds
    journaled = ex.ticket is not None and ex.ticket.journaled
    if seconds > 0 and not journaled:
        with app[AENGINE].foreground():
            await bounded(task, seconds, ex.rid)


def spawn(ex: Exchange, job: Stored) -> None:
    """Run the answer's capture ``job`` (its write already queued) in the background."""
    ex.captured = True
    ex.request.app[TASKS].spawn(job, name=f"capture-response-{ex.rid}")


def capture_tool_answer(ex: Exchange, summarizer: LLMSummarizer | None) -> Stored:
    """Queue what the tool loop produced: the client's reply, the hidden rounds, and
    the model's own view of the reply (spliced into later requests); count the
    rounds' summed usage under the request's model."""
    app = ex.request.app
    aengine, metrics = app[AENGINE], app[METRICS]
    metrics.count_tokens(request_model(ex.request, ex.body), ex.usage)
    ticket = ex.ticket
    assert ticket is not None
    try:
        event = ex.evidence()
        if not ex.is_whole_answer():
            return _committed(ex, aengine.queue_answer(ticket, [], event), None)
        view = ex.upstream_view
        if view is not None and isinstance(ex.body, dict):  # as it can go upstream again
            view = [ex.wire.replayable(ex.body, m) if isinstance(m, dict) else m
                    for m in view]
        return _committed(ex, aengine.queue_answer(
            ticket, ex.client_choices, event, ex.hidden or None, view), summarizer)
    except Exception:  # noqa: BLE001 - fail open, after the client was served
        _capture_failed(ex)
        return _nothing()


ReadAnswer = Callable[[bool, bytes, dict[str, Any]], tuple[list[Any], bool]]
"""``read(streamed, body, event) -> (choices, finished)``: one API's decoding of a
relayed 2xx body into its reply turns, adding the answer's facts (``id``, ``model``,
``usage``, ``finish_reasons``…) to ``event``; ``finished``: the answer ended as the
API ends a whole answer."""


def store_relayed(ex: Exchange, status: int, streamed: bool, result: RelayResult,
                  read: ReadAnswer, summarizer: LLMSummarizer | None = None,
                  api: str | None = None) -> Stored:
    """Queue a relayed answer's capture, for every API, as it is called (just before
    the client's end, or after the client is served); returns the wait for its
    commit (:data:`Stored`).

    The reply turns ``read`` decodes are stored as messages only when the answer is
    complete: a 2xx status, ``finished``, no upstream error mid-stream, and the client
    stayed to the end. Anything else is kept in an event (``upstream_error`` with the
    first 64 KiB of the body, or ``incomplete`` with the partial turns), never as an
    answer. Counts the answer's ``usage`` under its ``model``; schedules the compaction
    due once it is committed. Never raises (a failure is counted and logged with
    the request id).
    """
    app = ex.request.app
    aengine = app[AENGINE]
    ticket = ex.ticket
    assert ticket is not None
    try:
        body = result.body()
        event: dict[str, Any] = {"status": status, "stream": streamed, "bytes": result.nbytes}
        if api is not None:
            event["api"] = api
        if status >= 400:
            event["error_body"] = body[:_ERROR_BODY_KEEP].decode("utf-8", "replace")
            aengine.queue_response(ticket, [], dict(event, outcome="upstream_error"))
            return _nothing()
        choices, finished = read(streamed, body, event)
        app[METRICS].count_tokens(event.get("model"), event.get("usage"))
        complete = finished and not result.client_gone and result.upstream_error is None
        if not complete:
            event.update(
                outcome="incomplete", partial_choices=choices,
                client_gone=result.client_gone, upstream_error=result.upstream_error,
            )
            choices = []
        else:
            event["outcome"] = "complete"
        return _committed(ex, aengine.queue_answer(ticket, choices, event), summarizer)
    except Exception:  # noqa: BLE001 - fail open, after the client was served
        _capture_failed(ex)
        return _nothing()


async def _committed(ex: Exchange, queued: Awaitable[list[int]],
                     summarizer: LLMSummarizer | None) -> None:
    """Wait for a queued answer's commit, then schedule the compaction due."""
    try:
        ids = await queued
        _compact_after(ex, ids, summarizer)
    except Exception:  # noqa: BLE001 - fail open, after the client was served
        _capture_failed(ex)


async def _nothing() -> None:
    """The wait of a capture that queued nothing to wait for."""


def unparsed(body: bytes) -> str:
    """The first 64 KiB of a body no API reader understood, as text (for its event)."""
    return body[:_ERROR_BODY_KEEP].decode("utf-8", "replace")


def capture_relayed(ex: Exchange, status: int, streamed: bool, result: RelayResult,
                    summarizer: LLMSummarizer | None = None) -> Stored:
    """Queue a relayed Chat Completions answer (:func:`store_relayed`): complete when a
    non-streamed body has ``choices``, or a stream ended with ``[DONE]`` or a
    ``finish_reason`` on every choice."""

    def read(streamed: bool, body: bytes, event: dict[str, Any]) -> tuple[list[Any], bool]:
        if streamed:
            decoder, acc = SSEDecoder(), ChunkAccumulator()
            for ev in decoder.feed(body) + decoder.close():
                acc.add_event(ev)
            choices = acc.messages()
            event.update(
                id=acc.id, model=acc.model, usage=acc.usage,
                finish_reasons=acc.finish_reasons(), done=acc.done,
            )
            if acc.error is not None:
                event["error"] = acc.error
            return choices, acc.done or (bool(choices) and all(acc.finish_reasons()))
        try:
            obj = loads_lossless(body)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
            event["unparsed_body"] = unparsed(body)
            return [], False
        choices = ex.wire.client_choices(obj)
        ordered = sorted(
            (c for c in obj["choices"] if isinstance(c, dict)),
            key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0,
        )
        event.update(
            id=obj.get("id"), model=obj.get("model"), usage=obj.get("usage"),
            finish_reasons=[c.get("finish_reason") for c in ordered],
        )
        return choices, bool(choices)

    return store_relayed(ex, status, streamed, result, read, summarizer)


def _compact_after(ex: Exchange, ids: list[int], summarizer: LLMSummarizer | None) -> None:
    """Schedule the compaction due on the thread once the answer (``ids``) is stored."""
    ticket = ex.ticket
    capture = ticket.result if ticket is not None else None
    if ids and ticket is not None and capture is not None:
        schedule_compaction(ex.request.app, ticket.scope, capture.thread_id,
                            [*capture.path, ids[0]], summarizer)


def _capture_failed(ex: Exchange) -> None:
    """Count and log a failed answer capture (the client was already served)."""
    ex.request.app[METRICS].fail_open.labels("capture_response").inc()
    log.exception("response capture failed (request %s)", ex.rid)


async def count_usage(app: web.Application, streamed: bool, result: RelayResult) -> None:
    """Count the tokens of an answer nothing captures (capture off, or a request the
    proxy does not understand): its ``usage`` (the last usage chunk of a stream)
    under its ``model``. Runs after the client is served; never raises."""
    try:
        body = result.body()
        if streamed:
            decoder, acc = SSEDecoder(), ChunkAccumulator()
            for ev in decoder.feed(body) + decoder.close():
                acc.add_event(ev)
            app[METRICS].count_tokens(acc.model, acc.usage)
            return
        obj = loads_lossless(body)
        if isinstance(obj, dict):
            app[METRICS].count_tokens(obj.get("model"), obj.get("usage"))
    except Exception:  # noqa: BLE001 - a metric never fails a request
        log.debug("could not read the usage of an answer", exc_info=True)
