"""The memory path of a request: what the upstream sees, decided before forwarding.

:func:`prepare_upstream` waits for the request's capture and has its plan made
(:func:`proxy.flow.plan.prepare`: scaffold, left-out ``/memory`` exchanges, block,
context budget) on the memory-path pool, off the event loop
(:meth:`proxy.flow.asyncengine.AsyncEngine.plan`). Any exception here is the
caller's cue to fail open and forward the client's original bytes.

After the response, :func:`schedule_compaction` runs the compaction that is due
in a worker thread, one per thread at a time, off the request path.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from memory_core.compaction.compressor import may_be_due
from memory_core.models import CaptureResult, Scope
from proxy.appkeys import AENGINE, METRICS, SETTINGS, TASKS
from proxy.deployment import request_model
from proxy.flow import plan
from proxy.flow.plan import Prepared
from proxy.rawjson import RawItems
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

__all__ = ["Prepared", "prepare_upstream", "schedule_compaction"]

_OFF = ("off", "0", "false", "no")


async def prepare_upstream(
    request: web.Request, scope: Scope, capture_future: Any, raw: bytes,
    body: dict[str, Any], request_id: str, wire: WireAdapter = CHAT,
    raw_items: RawItems | None = None,
) -> Prepared:
    """Decide the upstream body (see module docstring). Raises on failure (fail open).

    ``capture_future``: the request's capture, as
    :meth:`~proxy.flow.asyncengine.AsyncEngine.capture_request` returned it.
    ``wire``: the body's API (:mod:`proxy.wire`); its messages are read and written
    through it, and it places the block (Chat Completions by default).
    ``raw_items``: the client's bytes of its conversation items, spliced into a
    rewritten body for the items it keeps (:mod:`proxy.rawjson`).

    Holds the engine's foreground while it runs (the background gives way, bounded).
    Waits for the request's capture at most ``injection.capture_wait_seconds``
    (``TimeoutError`` beyond; the capture itself goes on). Honours ``X-LCM-Memory:
    off`` (no block) and ``X-LCM-Compaction: off`` (raw history) per request.
    Everything after the wait runs as one job on the memory-path pool, queued by the
    capture's own completion (:meth:`~proxy.flow.asyncengine.AsyncEngine.plan`); a
    request that gave up (time limit, client gone) before the job started never
    runs it.
    """
    aengine = request.app[AENGINE]
    with aengine.foreground():
        return await _prepare(request, scope, capture_future, raw, body, request_id, wire,
                              raw_items)


async def _prepare(
    request: web.Request, scope: Scope, capture_future: Any, raw: bytes,
    body: dict[str, Any], request_id: str, wire: WireAdapter, raw_items: RawItems | None,
) -> Prepared:
    settings, aengine = request.app[SETTINGS], request.app[AENGINE]
    engine = aengine.engine
    cfg = engine.config
    want_block = cfg.inject and request.headers.get("X-LCM-Memory", "").lower() not in _OFF
    want_compaction = (cfg.compaction.enabled and settings.compaction.enabled
                       and request.headers.get("X-LCM-Compaction", "").lower() not in _OFF)
    offer_always = settings.tools.offer == "always"
    metrics = request.app[METRICS]
    model = request_model(request, body)
    if not want_block:
        quick = plan.unchanged(engine, scope, raw, body, want_compaction, wire, model=model)
        if quick is not None:
            # Decided without the capture, which goes on in the writer (its order
            # with this request's answer and the next request's capture is the
            # writer's FIFO): the evidence is the same, only nothing waits for it.
            return quick

    # The block's searches need only the newest user message: they run while the
    # writer captures (memory_core.assembly.lookahead).
    ahead = aengine.search_ahead(scope, plan.newest_user_text(body, wire),
                                 want_compaction) if want_block else None

    def job(result: CaptureResult) -> Prepared:  # a memory-path thread
        return plan.prepare(metrics, engine, scope, result, raw, body, request_id,
                            want_block, want_compaction, wire, offer_always, raw_items,
                            ahead=ahead, model=model)

    try:
        return await aengine.plan(capture_future, job, cfg.capture_wait_seconds)
    finally:
        if ahead is not None:
            # Not started yet: nothing takes it any more (the request gave up, or its
            # plan searched live or made no block), so it never runs.
            ahead.cancel()


def schedule_compaction(app: web.Application, scope: Scope, thread_id: int,
                        path_ids: list[int], summarizer: Any) -> None:
    """Run the compaction due on a thread in the background (never on the request path).

    ``path_ids``: the thread's stored path, its answer last. A path too short for
    anything to be due (:func:`memory_core.compaction.compressor.may_be_due`: a new
    conversation, a thread of a few turns) schedules nothing: no task, no executor
    job, no wake-up of the loop when it returns.
    """
    aengine = app[AENGINE]
    if not thread_id or not may_be_due(len(path_ids), aengine.engine.config.compaction):
        return

    async def run() -> None:
        created = await aengine.compact(scope, thread_id, path_ids, summarizer)
        if created:
            app[METRICS].compactions.labels("background").inc(len(created))

    app[TASKS].spawn(run(), name=f"compaction-{thread_id}")
