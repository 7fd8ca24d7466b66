"""AsyncEngine: the one owner of the proxy's concurrency around the engine.

:class:`memory_core.engine.Engine` is synchronous; its writes go to one writer
thread and come back as thread futures. The request path (handlers, flow steps,
the admin API and the inspector) reaches the engine through this façade only,
with ``await aengine.x(...)``: the thread futures, the memory-path pool, the event
loop's default executor and the give-way protocol (``foreground``/``in_flight``/
``give_way``, :mod:`memory_core.search.foreground`) stay in here. A test keeps it
so (``tests/test_asyncengine.py`` fails if a request-path module uses an executor
or a thread future itself).

Two kinds of threads:

- the **memory-path pool** (``lcm-memory-path-*``, as many threads as asyncio's
  default, ``min(32, CPUs + 4)``): each request's memory path (:meth:`plan`) and
  stored-response reads. A pool of its own so that compactions, commands and admin
  reads never hold up a request's block, nor the other way round;
- the loop's **default executor**: memory tools, ``/memory`` commands, compaction,
  operator reads.

Created by :func:`proxy.contexts.async_engine` under :data:`proxy.appkeys.AENGINE`;
its pool is shut down before the engine closes, after the running jobs finish
(queued ones are cancelled: their requests fail open).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from typing import Any, TypeVar

from memory_core.assembly.lookahead import BlockSearches
from memory_core.capture import evidence as capture
from memory_core.engine import Engine
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.tools import memory_tools
from proxy.chatcommands import run_command
from proxy.flow.responsethreads import threads_of

__all__ = ["AsyncEngine"]

T = TypeVar("T")


class AsyncEngine:
    """Awaitable access to one :class:`Engine` for code on the event loop.

    ``engine``: the open engine (its config and cheap in-memory reads stay
    available as :attr:`engine` for jobs that run on this façade's threads).
    ``workers``: threads of the memory-path pool (default ``min(32, CPUs + 4)``).
    Non-``async`` methods only queue work (never block the loop); ``async`` ones
    return once it is done. Errors are the engine's own, unchanged, so each caller
    keeps its fail-open handling.
    """

    def __init__(self, engine: Engine, workers: int | None = None) -> None:
        self.engine = engine
        self._pool = ThreadPoolExecutor(
            max_workers=workers or min(32, (os.cpu_count() or 1) + 4),
            thread_name_prefix="lcm-memory-path")
        self._compact_lock = threading.Lock()
        self._compact_waiting = 0  # compaction jobs giving way to requests now

    # -- lifecycle --------------------------------------------------------------
    def stop(self) -> None:
        """Let the running memory-path jobs finish and cancel the queued ones (their
        requests fail open); later memory paths fail open at once. Blocks: call it
        off the loop (:meth:`aclose`), or where blocking is fine."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    async def aclose(self) -> None:
        """:meth:`stop` without blocking the event loop."""
        await asyncio.get_running_loop().run_in_executor(None, self.stop)

    # -- give-way protocol ------------------------------------------------------
    def in_flight(self) -> contextlib.AbstractContextManager[None]:
        """Mark a chat request for its whole life (the indexer gives way, bounded)."""
        return self.engine.in_flight()

    def foreground(self) -> contextlib.AbstractContextManager[None]:
        """Mark a request's latency-critical step (indexer, compaction and WAL
        checkpoints give way, bounded by ``search.foreground_wait_ms``)."""
        return self.engine.foreground()

    # -- capture ----------------------------------------------------------------
    def capture_request(self, scope: Scope, request_id: str, messages: list[Any],
                        event: dict[str, Any], zone: str | None = None, *,
                        extract_after_answer: bool = False,
                        ) -> tuple[CaptureTicket, Future[CaptureResult]]:
        """Queue a request's capture on the writer; return ``(ticket, capture)``.

        ``capture`` is a handle to pass to :meth:`plan` (a thread future: await it
        only through this façade). ``zone``: the request's time zone (``None``: the
        configured one). ``extract_after_answer``: nothing reads the request's items
        before its answer (see :meth:`Engine.capture_request`). Raises what
        :meth:`Engine.capture_request` raises (e.g. the store is closed)."""
        return self.engine.capture_request(scope, request_id, messages, event, zone,
                                           extract_after_answer=extract_after_answer)

    def queue_response(self, ticket: CaptureTicket, choices: list[Any],
                       event: dict[str, Any]) -> None:
        """Queue an answer's capture (or an event saying what became of the request)
        without waiting for it."""
        self.engine.capture_response(ticket, choices, event)

    def queue_answer(self, ticket: CaptureTicket, choices: list[Any], event: dict[str, Any],
                     hidden_rounds: list[Any] | None = None,
                     upstream_view: list[Any] | None = None) -> asyncio.Future[list[int]]:
        """Queue an answer's capture on the store's writer now (:meth:`Engine.capture_response`,
        in the caller's order: see :func:`proxy.flow.record.store_first`); awaiting the
        result gives the stored message ids once committed. Call on the event loop."""
        return asyncio.wrap_future(self.engine.capture_response(
            ticket, choices, event, hidden_rounds, upstream_view))

    def queue_event(self, scope: Scope | None, request_id: str, kind: str,
                    data: dict[str, Any]) -> None:
        """Queue one ``events`` row (:meth:`Engine.record_event`) without waiting."""
        self.engine.record_event(scope, request_id, kind, data)

    def queue_forwarded(self, scope: Scope, request_id: str, body: Any, meta: dict[str, Any],
                        *, keep: int, max_bytes: int, dumps: Callable[[Any], bytes] | None,
                        on_error: Callable[[BaseException], None]) -> None:
        """Queue the body forwarded upstream (:meth:`Engine.record_forwarded`) without
        waiting; ``on_error(exc)`` runs on an engine thread if its write fails."""
        queued = self.engine.record_forwarded(scope, request_id, body, meta, keep=keep,
                                              max_bytes=max_bytes, dumps=dumps)
        if queued is not None:
            def check(done: Future[int]) -> None:
                exc = None if done.cancelled() else done.exception()
                if exc is not None:
                    on_error(exc)

            queued.add_done_callback(check)

    async def capture_response(self, ticket: CaptureTicket, choices: list[Any],
                               event: dict[str, Any], hidden_rounds: list[Any] | None = None,
                               upstream_view: list[Any] | None = None) -> list[int]:
        """Capture an answer (:meth:`Engine.capture_response`) and return the stored
        message ids once committed. The write is queued before the first ``await``
        (the writer's FIFO order is the caller's: see :func:`proxy.flow.record.store_first`)."""
        return await asyncio.wrap_future(self.engine.capture_response(
            ticket, choices, event, hidden_rounds, upstream_view))

    def queue_command_reply(self, ticket: CaptureTicket, messages: list[Any],
                            event: dict[str, Any]) -> None:
        """Queue a ``/memory`` command's reply as the request's answer: stored as
        evidence, but not through :meth:`Engine.capture_response` (a command reply is
        not conversation content and is never extracted from)."""
        # Urgent, as every capture is: the next turn's capture comes after it.
        self.engine.store.write_tx(capture.capture_response, ticket, messages, event,
                                   urgent=True)

    async def write_barrier(self, timeout: float) -> None:
        """Return once an empty job has passed the writer queue; ``TimeoutError``
        after ``timeout`` seconds (the job stays queued)."""
        await asyncio.wait_for(asyncio.wrap_future(self.engine.store.write_tx(lambda tx: None)),
                               timeout)

    # -- the memory path --------------------------------------------------------
    def search_ahead(self, scope: Scope, query: str,
                     compacted: bool) -> Future[BlockSearches] | None:
        """Queue :meth:`Engine.search_ahead` on the memory-path pool (``compacted``:
        compaction applies to the request: the scope's summary nodes decide whether
        compacted messages may be quoted); ``None`` without a search index or a
        query, or with the pool stopped."""
        engine = self.engine
        if engine.search is None or not query.strip():
            return None

        def run() -> BlockSearches:
            return engine.search_ahead(scope, query, compacted and engine.has_summaries(scope))

        try:
            return self._pool.submit(run)
        except RuntimeError:  # the pool is shut down: the plan fails open anyway
            return None

    async def plan(self, capture_future: Future[CaptureResult],
                   job: Callable[[CaptureResult], T], wait_seconds: float) -> T:
        """``job(capture result)`` on the memory-path pool, once the request's
        capture is done; its result, or its exception.

        The job is queued by the capture's own completion, on the writer thread,
        rather than after a round through the event loop (0.5 ms at 1000 turns,
        measured); no thread waits for the capture. Everything after the wait is one
        job: one hand-off instead of one per stage (each costs up to the
        interpreter's 5 ms switch interval while background threads index). The
        event loop waits for the job's outcome alone: it is not woken when the
        capture commits, just as the job starts (a timer on the loop enforces the
        capture's wait).

        Waits for the capture at most ``wait_seconds`` (``TimeoutError`` beyond; the
        capture itself goes on, never cancelled). A failed capture raises its own
        error. A caller that gave up (time limit, cancelled: the client left) before
        the job started never has it run. With the pool stopped, raises at once
        instead of waiting for a job that never runs.
        """
        prepared: Future[T] = Future()
        gave_up = threading.Event()
        pool = self._pool

        def run(result: CaptureResult) -> None:  # a memory-path thread
            try:
                if not prepared.set_running_or_notify_cancel():
                    return
            except RuntimeError:  # finished already: the request gave up meanwhile
                return
            try:
                prepared.set_result(job(result))
            except BaseException as exc:  # noqa: BLE001 - delivered to the request (fail open)
                prepared.set_exception(exc)

        def on_capture(done: Future[CaptureResult]) -> None:  # the writer thread, mostly
            if gave_up.is_set():
                return
            # InvalidStateError: the request gave up meanwhile (nothing waits).
            with contextlib.suppress(InvalidStateError):
                if done.cancelled():
                    prepared.cancel()
                elif (failed := done.exception()) is not None:
                    prepared.set_exception(failed)  # the request sees the capture's own error
                else:
                    try:
                        pool.submit(run, done.result())
                    except BaseException as exc:  # noqa: BLE001 - e.g. the pool is shut down
                        # (stopping): the request must not wait for a job that never runs.
                        prepared.set_exception(exc)

        def expire() -> None:  # the event loop, ``wait_seconds`` after the call
            if not capture_future.done():
                gave_up.set()  # the capture itself goes on (never cancelled: evidence)
                with contextlib.suppress(InvalidStateError):
                    prepared.set_exception(TimeoutError())

        # The loop waits for the job's outcome only: it does not wake when the capture
        # commits (just as the job starts, which would take the interpreter from it).
        timer = asyncio.get_running_loop().call_later(wait_seconds, expire)
        capture_future.add_done_callback(on_capture)
        try:
            return await asyncio.wrap_future(prepared)
        except BaseException:
            gave_up.set()
            prepared.cancel()  # not started yet: it never will
            raise
        finally:
            timer.cancel()

    async def compact(self, scope: Scope, thread_id: int, path_ids: list[int],
                      summarizer: Any) -> list[int]:
        """Run the compaction due on a thread (:meth:`Engine.compact`) on the default
        executor, after giving way to requests in flight (bounded); the ids of the
        summaries created."""
        engine = self.engine

        def job() -> list[int]:
            # Scheduled as the answer is stored, while its request still holds the
            # foreground (it waits for that store, then answers its client): checking
            # what is due costs a few ms of CPU (about 2-3 ms at 1,000 turns), which
            # would take the interpreter lock from that request's last steps, its
            # answer's relay to the client included. Give way first (bounded): to
            # the requests in flight when no other compaction is already waiting for
            # them, else (steady load) to their critical steps only, so that the
            # default executor's threads never queue up behind the wait.
            with self._compact_lock:
                first = not self._compact_waiting
                self._compact_waiting += 1
            try:
                engine.give_way(requests=first)
            finally:
                with self._compact_lock:
                    self._compact_waiting -= 1
            return engine.compact(scope, thread_id, path_ids, summarizer)

        return await asyncio.get_running_loop().run_in_executor(None, job)

    # -- tools and commands -----------------------------------------------------
    async def run_tool(self, scope: Scope, name: str, arguments: str | None,
                       timeout: float) -> str:
        """A memory tool's result as JSON text (:func:`memory_core.tools.memory_tools.run_tool`,
        which never raises); ``TimeoutError`` after ``timeout`` seconds (the tool
        finishes in its thread, unseen)."""
        return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(
            None, memory_tools.run_tool, self.engine, scope, name, arguments), timeout)

    async def run_command(self, scope: Scope, text: str) -> str:
        """The reply text of a ``/memory`` command (:func:`proxy.chatcommands.run_command`)."""
        return await asyncio.get_running_loop().run_in_executor(
            None, run_command, self.engine, scope, text)

    # -- stored responses (Responses API) ---------------------------------------
    async def stored_response(self, scope: Scope, response_id: str
                              ) -> tuple[Scope, tuple[Any, ...]] | None:
        """The scope that holds a relayed response (``scope``, or another end user's
        of the same API key) and the items of the conversation it ends, or ``None``
        (:meth:`~proxy.flow.responsethreads.ResponseThreads.find`); a cache miss reads
        the store on the memory-path pool, never on the loop."""
        threads = threads_of(self.engine)
        found = threads.cached_find(scope, response_id)
        if found is not None:
            return found
        return await self._on_pool(threads.find, scope, response_id)

    async def stored_conversation(self, scope: Scope, conversation_id: str
                                  ) -> tuple[Scope, str | None, tuple[Any, ...] | None]:
        """``(holder, head, items)`` of a ``conversation``: the scope that holds it
        (``scope``, or another end user's of the same API key; ``scope`` when none
        does), its newest relayed response and the items that response ends (``()``
        without a head; ``None`` when they cannot be read); store reads on the
        memory-path pool."""
        threads = threads_of(self.engine)
        cached = threads.cached_head(scope, conversation_id)
        found = threads.cached(*cached) if cached is not None else None
        if cached is not None and found is not None:
            return cached[0], cached[1], found

        def read() -> tuple[Scope, str | None, tuple[Any, ...] | None]:
            at = threads.head(scope, conversation_id)
            if at is None:
                return scope, None, ()
            return at[0], at[1], threads.get(*at)

        return await self._on_pool(read)

    async def _on_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a memory-path thread; inline when the pool no longer takes
        work (the proxy is stopping)."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except RuntimeError:  # cannot schedule new futures after shutdown
            return fn(*args)

    # -- operator reads (admin API, inspector) ----------------------------------
    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` (an engine read or operator action) on the default executor."""
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
