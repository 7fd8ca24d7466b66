"""Cleanup contexts: resources opened at startup and closed in reverse at shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from memory_core.engine import Engine
from memory_core.tokens import count_tokens
from proxy.keys import ENGINE, HTTP, SETTINGS, TASKS
from proxy.settings import data_dir_path
from proxy.upstream import client_timeout

log = logging.getLogger("lcm.app")


async def memory_engine(app: web.Application) -> AsyncIterator[None]:
    """Open the engine (SQLite store) unless one was injected; close it last."""
    owned = ENGINE not in app
    if owned:
        settings = app[SETTINGS]
        app[ENGINE] = Engine(data_dir_path(settings), settings.memory_config())
    if owned and app[SETTINGS].search.enabled:
        await asyncio.get_running_loop().run_in_executor(None, _attach_search, app)
    # Load the tokenizer's ranks now (about 2 s) rather than inside the first request.
    await asyncio.get_running_loop().run_in_executor(None, count_tokens, "warm up")
    yield
    await app[TASKS].drain(app[SETTINGS].proxy.shutdown_timeout_seconds)
    if owned:
        app[ENGINE].close()


def _attach_search(app: web.Application) -> None:
    """Open the search indexes and start the indexer; on failure run without search.

    An embedder that cannot load leaves BM25 (Tantivy) only; an index that cannot
    open leaves keyword retrieval over SQLite. Either is logged, never fatal.
    """
    from memory_core.search import EmbedderError, SearchService, create_embedder

    settings, engine = app[SETTINGS], app[ENGINE]
    embedder = None
    try:
        embedder = create_embedder(settings.embedding.embedding_config(settings.proxy))
    except EmbedderError as exc:
        log.warning("embedder unavailable (%s); search runs on BM25 only", exc)
    try:
        service = SearchService(engine.store, data_dir_path(settings),
                                settings.search.search_config(), embedder)
    except Exception:  # noqa: BLE001 - fail open: keyword retrieval still works
        log.exception("search indexes unavailable; using keyword retrieval")
        return
    engine.attach_search(service)


async def http_session(app: web.Application) -> AsyncIterator[None]:
    """One shared upstream ``ClientSession`` with bounded connection pool and timeouts."""
    proxy = app[SETTINGS].proxy
    connector = aiohttp.TCPConnector(
        limit=proxy.max_connections,
        limit_per_host=proxy.max_connections_per_host,
        enable_cleanup_closed=True,
    )
    session = aiohttp.ClientSession(
        connector=connector,
        timeout=client_timeout(proxy.connect_timeout_seconds, proxy.read_timeout_seconds),
        auto_decompress=True,
        skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
    )
    app[HTTP] = session
    yield
    await session.close()
