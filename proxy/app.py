"""Application factory."""

from __future__ import annotations

import gc
from weakref import WeakSet

from aiohttp import web

from memory_core.engine import Engine
from proxy import rawhead
from proxy.appkeys import (
    AUTH_THROTTLE,
    ENGINE,
    METRICS,
    SETTINGS,
    TASKS,
    TOOL_REFUSALS,
    UI_SESSIONS,
    WEBSOCKETS,
)
from proxy.contexts import async_engine, http_session, memory_engine, memory_release
from proxy.flow.toolrefusal import ToolRefusals
from proxy.handlers.passthrough import close_websockets
from proxy.headers import HEAD_LIMITS
from proxy.metrics import Metrics
from proxy.middlewares import request_context
from proxy.routes import setup_routes
from proxy.settings import Settings
from proxy.tasks import TaskGroup
from proxy.throttle import FailureThrottle
from proxy.uisession import SessionRevocation


def create_app(settings: Settings, *, engine: Engine | None = None) -> web.Application:
    """Build the aiohttp application.

    ``engine``: an already-open :class:`Engine` to use (tests, benchmarks); when
    omitted one is opened on startup in ``settings.storage.data_dir`` and closed on
    cleanup. Request bodies are limited to ``proxy.max_body_bytes`` (413 beyond) and
    read by :mod:`proxy.body`; ``proxy.keepalive_timeout_seconds`` is aiohttp's
    server's ``keepalive_timeout`` (also the time a client has to send its headers).
    """
    rawhead.install()
    app = web.Application(
        middlewares=[request_context], client_max_size=settings.proxy.max_body_bytes,
        handler_args={**HEAD_LIMITS,
                      "keepalive_timeout": settings.proxy.keepalive_timeout_seconds},
    )
    app[SETTINGS] = settings
    app[METRICS] = Metrics()
    app[TOOL_REFUSALS] = ToolRefusals()
    app[TASKS] = TaskGroup()
    app[AUTH_THROTTLE] = FailureThrottle()
    app[UI_SESSIONS] = SessionRevocation()
    app[WEBSOCKETS] = WeakSet()
    app.on_shutdown.append(close_websockets)
    if engine is not None:
        app[ENGINE] = engine
    app.cleanup_ctx.append(memory_engine)
    app.cleanup_ctx.append(async_engine)
    app.cleanup_ctx.append(http_session)
    app.cleanup_ctx.append(memory_release)
    setup_routes(app)
    return app


def freeze_startup_heap() -> None:
    """Collect once, then move every object alive now into the garbage collector's
    permanent generation (:func:`gc.freeze`), so full collections stop rescanning
    what a started proxy keeps for its whole life (modules, the engine, the
    embedding model's wrappers, caches built at start). Call it once the app has
    started (``lcm-proxy serve`` does, on startup; the eval harness does, as it runs
    the proxy in its own process). Why: on ``lcm-proxy eval``'s 1000-turn session
    a full collection paused the process 86–100 ms, a few times per 100 turns;
    after the freeze the longest was 7–12 ms.

    It also raises the youngest generation's threshold to :data:`GC_GEN0_THRESHOLD`
    (never lowers it): parsing a long history allocates thousands of short-lived
    containers per request, and at the default of 700 the collector ran about seven
    times a request at 1000 turns (about 1.3 ms a request). Process-wide; never
    raises.
    """
    gc.collect()
    gc.freeze()
    gen0, *older = gc.get_threshold()
    if gen0 < GC_GEN0_THRESHOLD:
        gc.set_threshold(GC_GEN0_THRESHOLD, *older)


GC_GEN0_THRESHOLD = 50_000
"""Youngest-generation threshold of a started proxy (net container allocations between
collections). A larger threshold means fewer young collections on the request path;
the young generation then holds a few MB at most before it is collected
(measurements: docs/evaluation/constants.md)."""


async def freeze_on_startup(app: web.Application) -> None:
    """``app.on_startup`` hook for :func:`freeze_startup_heap`; append it after the
    cleanup contexts (as :func:`create_app`'s callers do) so the engine is open."""
    freeze_startup_heap()
