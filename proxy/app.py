"""Application factory."""

from __future__ import annotations

from aiohttp import web

from memory_core.engine import Engine
from proxy.contexts import http_session, memory_engine
from proxy.keys import ENGINE, METRICS, SETTINGS, TASKS
from proxy.metrics import Metrics
from proxy.middlewares import request_context
from proxy.routes import setup_routes
from proxy.settings import Settings
from proxy.tasks import TaskGroup


def create_app(settings: Settings, *, engine: Engine | None = None) -> web.Application:
    """Build the aiohttp application.

    ``engine``: an already-open :class:`Engine` to use (tests, benchmarks); when
    omitted one is opened on startup in ``settings.storage.data_dir`` and closed on
    cleanup. Request bodies are limited to ``proxy.max_body_bytes`` (413 beyond).
    """
    app = web.Application(
        middlewares=[request_context], client_max_size=settings.proxy.max_body_bytes
    )
    app[SETTINGS] = settings
    app[METRICS] = Metrics()
    app[TASKS] = TaskGroup()
    if engine is not None:
        app[ENGINE] = engine
    app.cleanup_ctx.append(memory_engine)
    app.cleanup_ctx.append(http_session)
    setup_routes(app)
    return app
