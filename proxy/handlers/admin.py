"""``/lcm/`` routes: health and Prometheus metrics (the admin API grows here)."""

from __future__ import annotations

import asyncio

import orjson
from aiohttp import web

from memory_core.store.migrations import SCHEMA_VERSION
from proxy import __version__
from proxy.keys import ENGINE, METRICS, SETTINGS
from proxy.settings import data_dir_path


async def health(request: web.Request) -> web.Response:
    """``GET /lcm/health`` → 200 ``{status, version, data_dir, schema_version, upstream}``.

    Answers 503 with ``status: "degraded"`` when the store cannot be read.
    """
    settings = request.app[SETTINGS]
    engine = request.app[ENGINE]
    status, code = "ok", 200
    try:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(
            None, engine.store.read, lambda c: c.execute("SELECT 1").fetchone()
        )
    except Exception:  # noqa: BLE001 - health reports, never raises
        status, code = "degraded", 503
    body = {
        "status": status,
        "version": __version__,
        "data_dir": str(data_dir_path(settings)),
        "schema_version": SCHEMA_VERSION,
        "upstream": settings.proxy.upstream,
    }
    return web.Response(status=code, body=orjson.dumps(body), content_type="application/json")


async def metrics(request: web.Request) -> web.Response:
    """``GET /lcm/metrics`` → Prometheus text exposition format 0.0.4."""
    return web.Response(
        body=request.app[METRICS].render(),
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )
