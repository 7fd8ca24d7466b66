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
    # Load the tokenizer's ranks now (about 2 s) rather than inside the first request.
    await asyncio.get_running_loop().run_in_executor(None, count_tokens, "warm up")
    yield
    await app[TASKS].drain(app[SETTINGS].proxy.shutdown_timeout_seconds)
    if owned:
        app[ENGINE].close()


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
