"""``POST /v1/chat/completions``: orchestrates the request flow of DESIGN §2.

This module decides nothing about memory itself; it sequences the steps and keeps
the fail-open promise: any exception in the memory path is logged with the
request id, counted, and the original request bytes are forwarded unchanged.
Upstream answers (errors included) reach the client exactly as sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from memory_core import budget
from memory_core.capture import loads_lossless
from memory_core.models import CaptureTicket, Scope
from memory_core.tree import message_text
from proxy import commands, forwardlog, rewrite, toolloop
from proxy import headers as hdrs
from proxy.errors import BadRequestError, ProxyError
from proxy.keys import ENGINE, HTTP, METRICS, MODEL, REQUEST_ID, SETTINGS, TASKS
from proxy.memorypath import Prepared, prepare_upstream, schedule_compaction
from proxy.relay import RelayResult, relay_body
from proxy.scope import bearer_key, effective_salt, resolve_scope
from proxy.sse import ChunkAccumulator, SSEDecoder
from proxy.summarizer import LLMSummarizer
from proxy.upstream import is_event_stream, send, upstream_url

log = logging.getLogger("lcm.chat")

_ERROR_BODY_KEEP = 64 * 1024


@dataclass(frozen=True, slots=True)
class ParsedBody:
    """The request body as parsed (``value``), or ``None`` with ``error`` set."""

    value: Any
    error: str | None = None


def parse_body(body: bytes) -> ParsedBody:
    """Parse a request body: orjson first, the stdlib as fallback.

    orjson rejects lone surrogates, NaN/Infinity and integers past 64 bits, all of
    which the stdlib accepts (shared/DEPENDENCIES.md); a body neither accepts is
    reported in ``error``. Never raises.
    """
    try:
        return ParsedBody(orjson.loads(body))
    except orjson.JSONDecodeError:
        pass
    try:
        return ParsedBody(json.loads(body))
    except (ValueError, RecursionError) as exc:
        return ParsedBody(None, f"{exc.__class__.__name__}: {exc}"[:300])


def _event_meta(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": body.get("model") if isinstance(body.get("model"), str) else None,
        "stream": body.get("stream") is True,
    }


def _skip_reason(request: web.Request, settings: Any, engine: Any, body: Any,
                 ticket: CaptureTicket | None) -> str:
    """Why a forwarded request got no memory (``x-lcm-memory-reason`` beside
    ``x-lcm-memory: skipped``): ``not-chat`` (no messages array), ``capture-off``,
    ``error`` (the capture failed; logged), ``injection-off`` (settings),
    ``memory-off-header`` (``X-LCM-Memory: off``), ``no-user-message``, or
    ``nothing-to-inject`` (the block came out empty)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "not-chat"
    if not settings.capture.enabled:
        return "capture-off"
    if ticket is None:
        return "error"
    if not engine.config.inject:
        return "injection-off"
    if request.headers.get("X-LCM-Memory", "").lower() in ("off", "0", "false", "no"):
        return "memory-off-header"
    if rewrite.newest_user_index(body["messages"]) is None:
        return "no-user-message"
    return "nothing-to-inject"


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """Handle one chat completion, streaming or not (see module docstring).

    While its memory path runs, and while it waits for its answer's capture, the
    search indexer, compaction and WAL checkpoints give way to it
    (``engine.foreground()``); for the rest of its life, upstream round trip
    included, the indexer alone does (``engine.in_flight()``); both bounded per
    step by ``search.foreground_wait_ms``. On a small machine the embedder and
    Tantivy's writer, woken by this request's own capture, would otherwise take the
    cores from its memory path and, when the upstream answers quickly, from the
    answer's relay and capture: on the history bench at 1000 turns (fake upstream,
    about 1.5 ms an answer), also holding the indexer off during the round trip
    took 1.6 to 2.8 ms off the added mean (three A/B pairs). Behind a real model
    the step's budget runs out while the model thinks, and indexing goes on then.
    """
    with request.app[ENGINE].in_flight():
        return await _chat_completions(request)


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    app = request.app
    settings, engine, metrics = app[SETTINGS], app[ENGINE], app[METRICS]
    rid: str = request[REQUEST_ID]
    raw = await request.read()
    parsed = parse_body(raw)
    if parsed.error is not None:
        _record_unparsed(request, raw, parsed.error)
        raise BadRequestError(
            "We could not parse the JSON body of your request. (HINT: This likely means"
            " you aren't using your HTTP library correctly. The OpenAI API expects a JSON"
            f" payload.) Parser said: {parsed.error}"
        )
    body = parsed.value
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        request[MODEL] = body["model"][:100]  # for the access line (middlewares)
    ticket: CaptureTicket | None = None
    capture_future = None
    scope: Scope | None = None
    prepared = Prepared()
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        # Not something we understand: the upstream answers it; we keep it.
        _record_unparsed(request, raw, "body is not an object with a messages array")
    elif settings.capture.enabled:
        try:
            scope = resolve_scope(
                request.headers,
                salt=effective_salt(settings.proxy.tenant_salt, engine.tenant_salt),
                fixed_tenant=settings.proxy.tenant, body=body,
            )
            ticket, capture_future = engine.capture_request(
                scope, rid, body["messages"], _event_meta(body)
            )
        except Exception:  # noqa: BLE001 - fail open
            metrics.fail_open.labels("capture").inc()
            log.exception("capture failed; forwarding unmodified")
            ticket = None
    if scope is not None:
        index = rewrite.newest_user_index(body["messages"])
        newest = message_text(body["messages"][index]) if index is not None else ""
        if index is not None and commands.is_command(newest):
            return await commands.answer(request, engine, scope, body, newest, ticket, rid)
    if ticket is not None and capture_future is not None and scope is not None:
        started = time.perf_counter()
        try:
            with engine.foreground():  # the background gives way (bounded) meanwhile
                prepared = await prepare_upstream(request, engine, scope, capture_future, raw,
                                                  body, rid)
        except Exception as exc:  # noqa: BLE001 - fail open: forward unmodified
            metrics.fail_open.labels("memory_path").inc()
            log.exception("memory path failed; forwarding the request unmodified")
            prepared = Prepared(state="failed-open", headers={"x-lcm-memory-reason": (
                "capture-timeout" if isinstance(exc, TimeoutError) else "error")})
        metrics.stage_latency.labels("memory_path").observe(time.perf_counter() - started)

    url = upstream_url(settings.proxy.upstream, "/chat/completions")
    # The body sent is bytes aiohttp decoded, or the proxy's rewrite of them: never
    # the client's Content-Encoding.
    out_headers = hdrs.to_upstream(request.headers, api_key=settings.proxy.upstream_api_key,
                                   body_decoded=True)
    extra = {"x-lcm-request-id": rid, "x-lcm-memory": prepared.state, **prepared.headers}
    if prepared.state == "skipped":
        extra["x-lcm-memory-reason"] = _skip_reason(request, settings, engine, body, ticket)
    tools = (ticket is not None and scope is not None and prepared.state != "failed-open"
             and settings.tools.enabled and toolloop.tools_wanted(body))
    forwardlog.record(request, scope, rid, prepared, raw, body, tools=tools)  # inspector
    if tools:
        return await _with_memory_tools(
            request, ticket, scope, prepared, body, url, out_headers, extra,
            _recoverer(request, scope, capture_future, raw, body, prepared, extra, tools=True))
    recover = (_recoverer(request, scope, capture_future, raw, body, prepared, extra)
               if ticket is not None and scope is not None else None)
    started = time.perf_counter()
    refused: bytes | None = None
    try:
        upstream = await send(app[HTTP], "POST", url, out_headers,
                              raw if prepared.body is None else prepared.body)
        if upstream.status >= 400 and recover is not None:
            # A context-length error is answered once more, compacted further,
            # before any byte reached the client; any other error as it came.
            try:
                refused = await upstream.read()
            finally:
                upstream.release()
            again = await recover(upstream.status, refused)
            if again is not None:
                refused = None
                upstream = await send(app[HTTP], "POST", url, out_headers,
                                      rewrite.dumps_body(again))
    except ProxyError as exc:
        if ticket is not None:  # the request is evidence; say what became of it
            engine.capture_response(ticket, [], {"status": exc.status, "outcome": exc.code,
                                                 "error": exc.message})
        raise
    metrics.upstream_latency.labels("chat").observe(time.perf_counter() - started)
    if refused is not None:
        return await _answer_read(request, ticket, upstream, refused, extra)
    try:
        client_headers = hdrs.to_client(upstream.headers)
        client_headers.update(extra)
        response = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=client_headers
        )
        await response.prepare(request)
        status = upstream.status
        streamed = is_event_stream(upstream)
        summarizer = _summarizer(app, request) if ticket is not None else None
        captured = False

        async def store_first(res: RelayResult) -> None:
            # Store the answer before the client gets its end (bounded wait).
            nonlocal captured
            if ticket is None:
                return
            captured = True
            task = app[TASKS].spawn(
                _capture_response(app, ticket, status, streamed, res, summarizer),
                name=f"capture-response-{rid}")
            with engine.foreground():
                await _bounded(task, settings.capture.response_wait_seconds, rid)

        result = await relay_body(upstream, response, keep=True, request=request,
                                  before_end=store_first, hold_done=streamed)
    finally:
        upstream.release()
    if result.client_gone:
        metrics.client_disconnects.inc()
    if ticket is not None and not captured:
        app[TASKS].spawn(
            _capture_response(request.app, ticket, status, streamed, result, summarizer),
            name=f"capture-response-{rid}",
        )
    elif ticket is None and status < 400:  # no capture to read the usage: read it alone
        app[TASKS].spawn(_count_usage(app, streamed, result), name=f"usage-{rid}")
    return response


async def _with_memory_tools(
    request: web.Request, ticket: CaptureTicket, scope: Scope, prepared: Prepared,
    body: dict[str, Any], url: Any, out_headers: Any, extra: dict[str, str],
    recover: toolloop.Recover | None = None,
) -> web.StreamResponse:
    """Forward with the memory tools offered and intercept their calls (proxy.toolloop);
    ``recover`` answers a context-length error of the first round (:func:`_recoverer`)."""
    app = request.app
    settings, engine, metrics = app[SETTINGS], app[ENGINE], app[METRICS]
    upstream_body, names = toolloop.add_tools(prepared.obj or body)
    streamed = body.get("stream") is True
    model = body.get("model")
    summarizer = _summarizer(app, request)
    captured = False

    async def store_first(outcome: toolloop.LoopResult) -> None:
        # Store the answer before the client gets its last bytes (bounded wait).
        nonlocal captured
        captured = True
        task = app[TASKS].spawn(_capture_loop(app, ticket, outcome, streamed, summarizer,
                                              model),
                                name=f"capture-response-{ticket.request_id}")
        with engine.foreground():
            await _bounded(task, settings.capture.response_wait_seconds, ticket.request_id)

    loop = toolloop.ToolLoop(
        request=request, session=app[HTTP], url=url, headers=out_headers, engine=engine,
        scope=scope, names=names, max_rounds=settings.tools.max_rounds,
        tool_timeout=settings.tools.tool_timeout_seconds, extra_headers=extra,
        on_round=lambda: metrics.tool_rounds.inc(), before_end=store_first,
        recover=recover,
    )
    started = time.perf_counter()
    try:
        if streamed:
            response, outcome = await loop.run_stream(upstream_body)
        else:
            response, outcome = await loop.run_plain(upstream_body)
    except ProxyError as exc:  # the request is evidence; say what became of it
        engine.capture_response(ticket, [], {"status": exc.status, "outcome": exc.code,
                                             "error": exc.message})
        raise
    metrics.upstream_latency.labels("chat").observe(time.perf_counter() - started)
    if outcome.client_gone:
        metrics.client_disconnects.inc()
    if not captured:
        if streamed:  # ended early (error, disconnect): nothing to hold back
            app[TASKS].spawn(_capture_loop(app, ticket, outcome, streamed, summarizer, model),
                             name=f"capture-response-{ticket.request_id}")
        else:  # the body is not sent yet: store it first
            await store_first(outcome)
    return response


def _recoverer(request: web.Request, scope: Scope, capture_future: Any, raw: bytes,
               body: dict[str, Any], prepared: Prepared, extra: dict[str, str], *,
               tools: bool = False) -> toolloop.Recover | None:
    """The once-only answer to an upstream context-length error, or ``None`` when
    the memory path did not plan this request (failed open, over budget).

    The returned coroutine function takes the error's status and body; for a
    context-length error (:func:`memory_core.budget.context_error`) it records a
    smaller window for the model (:class:`memory_core.budget.ContextLimits`), runs
    the memory path again under it and returns the new upstream body (memory tools
    added when ``tools``), or ``None`` (not such an error, already retried, or the
    new plan is no smaller). Says what happened in ``extra``
    (``x-lcm-context-recovery``), the log and ``lcm_context_events``.
    """
    if prepared.budget is None or prepared.state in ("over-budget", "failed-open"):
        return None
    app = request.app
    engine, metrics = app[ENGINE], app[METRICS]
    rid: str = request[REQUEST_ID]
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
            sent = budget.messages_tokens(sent_obj["messages"]) + budget.tools_tokens(
                toolloop.add_tools(sent_obj)[0]["tools"] if tools else sent_obj.get("tools"))
        window = engine.context_limits.learn(body.get("model"), prepared.budget, error, sent)
        again: Prepared | None = None
        try:
            with engine.foreground():
                again = await prepare_upstream(request, engine, scope, capture_future, raw,
                                               body, rid)
        except Exception:  # noqa: BLE001 - fail open: the client gets the error
            log.exception("memory path failed while recovering from a context-length error")
        if (again is None or again.obj is None or again.state == "over-budget"
                or (again.tokens is not None and again.tokens >= sent)):
            metrics.context.labels("not_recovered").inc()
            log.warning("request %s: the upstream refused %d tokens as too long (%s); a"
                        " window of %d for model %r cannot hold less: answered with the error",
                        rid, sent, error.message[:200], window, body.get("model"))
            extra["x-lcm-context-recovery"] = f"not-recovered; window={window}"
            return None
        metrics.context.labels("recovered").inc()
        log.warning("request %s: the upstream refused %d tokens as too long (%s); model %r"
                    " now planned with a window of %d, retried once with %s tokens",
                    rid, sent, error.message[:200], body.get("model"), window,
                    again.tokens if again.tokens is not None else "fewer")
        extra.update(again.headers)
        extra["x-lcm-memory"] = again.state
        extra["x-lcm-context-recovery"] = f"retried; window={window}; refused_tokens={sent}"
        return toolloop.add_tools(again.obj)[0] if tools else again.obj

    return recover


async def _answer_read(request: web.Request, ticket: CaptureTicket | None,
                       upstream: Any, body: bytes, extra: dict[str, str]) -> web.Response:
    """Answer with an upstream error whose body was read already (and store it)."""
    client_headers = hdrs.to_client(upstream.headers)
    client_headers.update(extra)
    response = web.Response(status=upstream.status, reason=upstream.reason, body=body,
                            headers=client_headers)
    if ticket is not None:
        request.app[TASKS].spawn(
            _capture_response(request.app, ticket, upstream.status, False,
                              RelayResult(nbytes=len(body), chunks=[body])),
            name=f"capture-response-{ticket.request_id}")
    return response


async def _bounded(task: asyncio.Task[Any], seconds: float, request_id: str) -> None:
    """Wait up to ``seconds`` for a capture task; it keeps running past the limit."""
    if seconds <= 0:
        return
    try:
        await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        log.warning("response capture still pending after %.1f s; answering anyway"
                    " (request %s)", seconds, request_id)


async def _capture_loop(app: web.Application, ticket: CaptureTicket,
                        outcome: toolloop.LoopResult, streamed: bool,
                        summarizer: LLMSummarizer | None, model: Any = None) -> None:
    """Store what the tool loop produced: the client's reply, the hidden rounds, and
    the model's own view of the reply (spliced into later requests); count the
    rounds' summed usage under the request's ``model``."""
    engine, metrics = app[ENGINE], app[METRICS]
    metrics.count_tokens(model, outcome.usage)
    try:
        event: dict[str, Any] = {"status": outcome.status, "stream": streamed,
                                 "usage": outcome.usage, "rounds": outcome.rounds,
                                 "finish_reasons": outcome.finish_reasons}
        if (outcome.status >= 400 or not outcome.complete or outcome.client_gone
                or not outcome.answered):
            event.update(outcome="incomplete" if outcome.status < 400 else "upstream_error",
                         client_gone=outcome.client_gone, upstream_error=outcome.error,
                         partial_choices=outcome.client_choices,
                         hidden_messages=outcome.hidden)
            await asyncio.wrap_future(engine.capture_response(ticket, [], event))
            return
        event["outcome"] = "complete"
        if outcome.hidden:
            event["hidden_messages"] = len(outcome.hidden)
        ids = await asyncio.wrap_future(engine.capture_response(
            ticket, outcome.client_choices, event, outcome.hidden or None,
            outcome.upstream_view))
        capture = ticket.result
        if ids and capture is not None:
            schedule_compaction(app, engine, ticket.scope, capture.thread_id,
                                [*capture.message_ids, ids[0]], summarizer)
    except Exception:  # noqa: BLE001 - fail open, after the client was served
        metrics.fail_open.labels("capture_response").inc()
        log.exception("response capture failed (request %s)", ticket.request_id)


def _summarizer(app: web.Application, request: web.Request) -> LLMSummarizer | None:
    """The ``llm`` summarizer for a compaction this request may trigger, if configured.

    Without ``compaction.llm_api_key`` it borrows the request's key, held in memory
    for the background task only (never stored or logged).
    """
    cfg = app[SETTINGS].compaction
    if cfg.summarizer != "llm":
        return None
    key = cfg.llm_api_key or app[SETTINGS].proxy.upstream_api_key or bearer_key(request.headers)
    return LLMSummarizer(
        app[HTTP], asyncio.get_running_loop(),
        base_url=cfg.llm_base_url or app[SETTINGS].proxy.upstream, model=cfg.llm_model,
        api_key=key, timeout=cfg.llm_timeout_seconds,
    )


def _record_unparsed(request: web.Request, raw: bytes, reason: str) -> None:
    app = request.app
    try:
        app[ENGINE].record_event(
            None,
            request[REQUEST_ID],
            "unparsed",
            {"path": request.path, "reason": reason, "body": raw.decode("utf-8", "replace")},
        )
    except Exception:  # noqa: BLE001 - fail open
        app[METRICS].fail_open.labels("capture").inc()
        log.exception("could not record unparsed body")


async def _capture_response(
    app: web.Application,
    ticket: CaptureTicket,
    status: int,
    streamed: bool,
    result: RelayResult,
    summarizer: LLMSummarizer | None = None,
) -> None:
    """Decode the relayed body and store the reply (runs after the client is served).

    A reply is stored as a message only when it is complete: a 2xx status and, for
    streams, ``[DONE]`` or a ``finish_reason`` on every choice, and the client
    stayed to the end. Anything else is kept in an event, never as an answer.
    """
    engine, metrics = app[ENGINE], app[METRICS]
    try:
        body = result.body()
        event: dict[str, Any] = {"status": status, "stream": streamed, "bytes": result.nbytes}
        if status >= 400:
            event["error_body"] = body[:_ERROR_BODY_KEEP].decode("utf-8", "replace")
            engine.capture_response(ticket, [], dict(event, outcome="upstream_error"))
            return
        if streamed:
            decoder, acc = SSEDecoder(), ChunkAccumulator()
            for ev in decoder.feed(body) + decoder.close():
                acc.add_event(ev)
            choices = acc.messages()
            finished = acc.done or (bool(choices) and all(acc.finish_reasons()))
            event.update(
                id=acc.id, model=acc.model, usage=acc.usage,
                finish_reasons=acc.finish_reasons(), done=acc.done,
            )
            metrics.count_tokens(acc.model, acc.usage)
            if acc.error is not None:
                event["error"] = acc.error
        else:
            try:
                obj = loads_lossless(body)
            except ValueError:
                obj = None
            choices, finished = [], False
            if isinstance(obj, dict) and isinstance(obj.get("choices"), list):
                ordered = sorted(
                    (c for c in obj["choices"] if isinstance(c, dict)),
                    key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0,
                )
                choices = [c.get("message") for c in ordered if isinstance(c.get("message"), dict)]
                finished = bool(choices)
                event.update(
                    id=obj.get("id"), model=obj.get("model"), usage=obj.get("usage"),
                    finish_reasons=[c.get("finish_reason") for c in ordered],
                )
                metrics.count_tokens(obj.get("model"), obj.get("usage"))
            else:
                event["unparsed_body"] = body[:_ERROR_BODY_KEEP].decode("utf-8", "replace")
        complete = finished and not result.client_gone and result.upstream_error is None
        if not complete:
            event.update(
                outcome="incomplete", partial_choices=choices,
                client_gone=result.client_gone, upstream_error=result.upstream_error,
            )
            choices = []
        else:
            event["outcome"] = "complete"
        ids = await asyncio.wrap_future(engine.capture_response(ticket, choices, event))
        capture = ticket.result
        if ids and capture is not None:
            schedule_compaction(app, engine, ticket.scope, capture.thread_id,
                                [*capture.message_ids, ids[0]], summarizer)
    except Exception:  # noqa: BLE001 - fail open, after the client was served
        metrics.fail_open.labels("capture_response").inc()
        log.exception("response capture failed (request %s)", ticket.request_id)


async def _count_usage(app: web.Application, streamed: bool, result: RelayResult) -> None:
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
