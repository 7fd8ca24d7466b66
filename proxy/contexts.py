"""Cleanup contexts: resources opened at startup and closed in reverse at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from memory_core.engine import Engine
from memory_core.tokens import count_tokens
from proxy.appkeys import AENGINE, ENGINE, HTTP, METRICS, SETTINGS, TASKS
from proxy.flow.asyncengine import AsyncEngine
from proxy.headers import MAX_FIELD_BYTES
from proxy.metrics import upstream_error_cause
from proxy.settings import data_dir_path
from proxy.upstream import client_timeout

if TYPE_CHECKING:
    from memory_core.search import SerialEmbedder

log = logging.getLogger("lcm.app")


async def memory_engine(app: web.Application) -> AsyncIterator[None]:
    """Open the engine (SQLite store) unless one was injected; close it last."""
    owned = ENGINE not in app
    if owned:
        settings = app[SETTINGS]
        app[ENGINE] = Engine(data_dir_path(settings), settings.memory_config())
    embedder = None
    if owned and app[SETTINGS].search.enabled:
        embedder = await asyncio.get_running_loop().run_in_executor(
            None, _attach_search, app)
    app[METRICS].watch_engine(app[ENGINE].stats)
    # Load the tokenizer's ranks now (about 2 s) rather than inside the first request.
    await asyncio.get_running_loop().run_in_executor(None, count_tokens, "warm up")
    yield
    loop = asyncio.get_running_loop()
    budget = app[SETTINGS].proxy.shutdown_timeout_seconds
    started = loop.time()
    await app[TASKS].drain(budget)
    if owned:
        # The search indexer's backlog is left to the next start: it stops between
        # embedding batches, within what is left of the shutdown budget (1 s at least).
        left = max(1.0, budget - (loop.time() - started))
        await loop.run_in_executor(None, lambda: app[ENGINE].close(search_timeout=left))
    if embedder is not None:
        # The indexer stops without waiting for its embedding batch; the batch must
        # end before the process exits, or the interpreter's finalization kills the
        # embedder thread inside onnxruntime and the process aborts (exit code 134).
        left = max(_EMBEDDER_STOP_MIN_S, budget - (loop.time() - started))
        if not await loop.run_in_executor(None, embedder.close, left):
            log.warning("embedder still busy %.1f s after shutdown began; the process"
                        " may abort at exit", loop.time() - started)


_EMBEDDER_STOP_MIN_S = 10.0
"""Seconds the embedder's batch in progress may take at shutdown even when the
shutdown budget is spent (a batch of ``embed_batch_size`` texts takes a few)."""


def _attach_search(app: web.Application) -> SerialEmbedder | None:
    """Open the search indexes and start the indexer; on failure run without search.
    Returns the embedder it started (``None`` when none loaded), for the caller to
    close after the engine.

    An embedder that cannot load leaves BM25 (Tantivy) only. An index that cannot
    be opened (truncated or garbled files) is derived data: it is deleted and
    rebuilt from SQLite by the indexer's catch-up, with an error log line and the
    ``lcm_fail_open{stage="search_index"}`` metric. An index locked by another
    process (``LockBusy``) is left alone and keyword retrieval over SQLite serves.
    """
    from memory_core.search import EmbedderError, SearchService, create_embedder

    settings, engine = app[SETTINGS], app[ENGINE]
    embedder = None
    try:
        embedder = create_embedder(settings.embedding.embedding_config(settings.proxy))
    except EmbedderError as exc:
        log.warning("embedder unavailable (%s); search runs on BM25 only", exc)
    root = data_dir_path(settings)
    # Each failed open removes more of the derived data: the text index, then all.
    repairs = [root / "index" / "text", root / "index"]
    while True:
        try:
            service = SearchService(engine.store, root, settings.search.search_config(),
                                    embedder)
            break
        except Exception as exc:  # noqa: BLE001 - fail open: keyword retrieval still works
            if "LockBusy" in str(exc) or not repairs:
                log.exception("search indexes unavailable; using keyword retrieval")
                return embedder
            broken = repairs.pop(0)
            app[METRICS].fail_open.labels("search_index").inc()
            log.error("search index unreadable (%s); deleting %s and rebuilding it from"
                      " SQLite", exc, broken)
            shutil.rmtree(broken, ignore_errors=True)
    engine.attach_search(service)
    return embedder


async def async_engine(app: web.Application) -> AsyncIterator[None]:
    """The engine's async façade (:class:`proxy.flow.asyncengine.AsyncEngine`) under
    :data:`~proxy.appkeys.AENGINE`, with its memory-path pool. Stopped before the engine
    closes, after the running memory paths finish (queued ones are cancelled: their
    requests fail open)."""
    aengine = AsyncEngine(app[ENGINE])
    app[AENGINE] = aengine
    yield
    await aengine.aclose()


async def memory_release(app: web.Application) -> AsyncIterator[None]:
    """Hand freed C-heap memory back to the system once the process is quiet after
    some work (:func:`proxy.allocator.idle_trim_loop`,
    ``proxy.memory_release_idle_seconds``; glibc only, a no-op elsewhere or at 0)."""
    from proxy import allocator

    seconds = app[SETTINGS].proxy.memory_release_idle_seconds
    task = None
    if seconds > 0 and allocator.available():
        def count(took: float) -> None:
            app[METRICS].memory_release.observe(took)
        # Held here for the app's life, not in ``app[TASKS]``: that group is drained
        # (waited for, then cancelled) on shutdown and by whoever waits for the
        # requests' background work, and this loop never ends by itself.
        task = asyncio.get_running_loop().create_task(
            allocator.idle_trim_loop(seconds, on_trim=count), name="memory-release")
    yield
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def http_session(app: web.Application) -> AsyncIterator[None]:
    """One shared upstream ``ClientSession`` with bounded connection pool and timeouts.

    Every call on it that fails (no answer, or an answer of 400 or more) is counted
    in ``lcm_upstream_errors_total{cause}`` (:func:`proxy.metrics.upstream_error_cause`).
    """
    proxy = app[SETTINGS].proxy
    errors = app[METRICS].upstream_errors

    async def on_end(_s: Any, _c: Any, params: aiohttp.TraceRequestEndParams) -> None:
        cause = upstream_error_cause(status=params.response.status)
        if cause is not None:
            errors.labels(cause).inc()

    async def on_exception(_s: Any, _c: Any,
                           params: aiohttp.TraceRequestExceptionParams) -> None:
        if isinstance(params.exception, Exception):  # not a cancelled request
            errors.labels(upstream_error_cause(exc=params.exception)).inc()

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(on_end)
    trace.on_request_exception.append(on_exception)
    connector = aiohttp.TCPConnector(
        limit=proxy.max_connections,
        limit_per_host=proxy.max_connections_per_host,
        enable_cleanup_closed=True,
    )
    session = aiohttp.ClientSession(
        connector=connector,
        timeout=client_timeout(proxy.connect_timeout_seconds, proxy.read_timeout_seconds),
        auto_decompress=True,
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        max_line_size=MAX_FIELD_BYTES, max_field_size=MAX_FIELD_BYTES,
        trace_configs=[trace],
    )
    app[HTTP] = session
    yield
    await session.close()
