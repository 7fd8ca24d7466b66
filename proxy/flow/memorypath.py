"""The memory path of a request: what the upstream sees, decided before forwarding.

:func:`prepare_upstream` waits for the request's capture and has its plan made
(:func:`proxy.flow.plan.prepare`: scaffold, left-out ``/memory`` exchanges, block,
context budget) on the memory-path pool, off the event loop. Any exception here is
the caller's cue to fail open and forward the client's original bytes.

After the response, :func:`schedule_compaction` runs the compaction that is due
in a worker thread, one per thread at a time, off the request path.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from concurrent.futures import Future, InvalidStateError
from typing import Any

from aiohttp import web

from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from proxy.appkeys import MEMORY_POOL, METRICS, SETTINGS, TASKS
from proxy.flow import plan
from proxy.flow.plan import Prepared
from proxy.rawjson import RawItems
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

__all__ = ["Prepared", "prepare_upstream", "schedule_compaction"]

_OFF = ("off", "0", "false", "no")


async def prepare_upstream(
    request: web.Request, engine: Engine, scope: Scope, capture_future: Any, raw: bytes,
    body: dict[str, Any], request_id: str, wire: WireAdapter = CHAT,
    raw_items: RawItems | None = None,
) -> Prepared:
    """Decide the upstream body (see module docstring). Raises on failure (fail open).

    ``wire``: the body's API (:mod:`proxy.wire`); its messages are read and written
    through it, and it places the block (Chat Completions by default).
    ``raw_items``: the client's bytes of its conversation items, spliced into a
    rewritten body for the items it keeps (:mod:`proxy.rawjson`).

    Waits for the request's capture at most ``injection.capture_wait_seconds``
    (``TimeoutError`` beyond; the capture itself goes on). Honours ``X-LCM-Memory:
    off`` (no block) and ``X-LCM-Compaction: off`` (raw history) per request.
    Everything after the wait runs as one job on the memory-path pool
    (:data:`~proxy.appkeys.MEMORY_POOL`): one hand-off instead of one per stage (each
    costs up to the interpreter's 5 ms switch interval while background threads
    index), and the event loop stays free for other requests. The job is queued
    by the capture's own completion, on the writer thread, rather than after a
    round through the event loop (0.5 ms at 1000 turns, measured); no thread waits
    for the capture. A request that gave up (time limit, client gone) before the
    job started never runs it.
    """
    settings = request.app[SETTINGS]
    cfg = engine.config
    want_block = cfg.inject and request.headers.get("X-LCM-Memory", "").lower() not in _OFF
    want_compaction = (cfg.compaction.enabled and settings.compaction.enabled
                       and request.headers.get("X-LCM-Compaction", "").lower() not in _OFF)
    offer_always = settings.tools.offer == "always"
    metrics, pool = request.app[METRICS], request.app[MEMORY_POOL]
    if not want_block:
        quick = plan.unchanged(engine, scope, raw, body, want_compaction, wire)
        if quick is not None:
            # Decided without the capture, which goes on in the writer (its order
            # with this request's answer and the next request's capture is the
            # writer's FIFO): the evidence is the same, only nothing waits for it.
            return quick
    prepared: Future[Prepared] = Future()
    gave_up = threading.Event()

    def run(result: CaptureResult) -> None:  # a memory-path thread
        if not prepared.set_running_or_notify_cancel():
            return
        try:
            prepared.set_result(plan.prepare(metrics, engine, scope, result, raw, body,
                                             request_id, want_block, want_compaction, wire,
                                             offer_always, raw_items))
        except BaseException as exc:  # noqa: BLE001 - delivered to the request (fail open)
            prepared.set_exception(exc)

    def on_capture(done: Future[CaptureResult]) -> None:  # the writer thread, mostly
        if gave_up.is_set() or done.cancelled() or done.exception() is not None:
            return  # the request sees the capture's own outcome
        try:
            pool.submit(run, done.result())
        except BaseException as exc:  # noqa: BLE001 - e.g. the pool is shut down (stopping):
            # the request must not wait for a job that never runs.
            with contextlib.suppress(InvalidStateError):  # unless the request gave up
                prepared.set_exception(exc)

    capture_future.add_done_callback(on_capture)
    try:
        # shield: giving up waiting must not cancel the capture itself (the writer
        # skips cancelled jobs, and the request would be lost as evidence).
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(capture_future)),
                               cfg.capture_wait_seconds)
        return await asyncio.wrap_future(prepared)
    except BaseException:
        gave_up.set()
        prepared.cancel()  # not started yet: it never will
        raise


def schedule_compaction(app: web.Application, engine: Engine, scope: Scope, thread_id: int,
                        path_ids: list[int], summarizer: Any) -> None:
    """Run the compaction due on a thread in the background (never on the request path)."""
    if not engine.config.compaction.enabled or not thread_id:
        return

    def job() -> list[int]:
        # Scheduled as the answer is stored, while its request still holds the
        # foreground (it waits for that store, then answers its client): checking
        # what is due costs a few ms of CPU, which would take the interpreter lock
        # from that request's last steps. Give way first (bounded).
        engine.give_way()
        return engine.compact(scope, thread_id, path_ids, summarizer)

    async def run() -> None:
        created = await asyncio.get_running_loop().run_in_executor(None, job)
        if created:
            app[METRICS].compactions.labels("background").inc(len(created))

    app[TASKS].spawn(run(), name=f"compaction-{thread_id}")
