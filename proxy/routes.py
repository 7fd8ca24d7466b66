"""The route table."""

from __future__ import annotations

from aiohttp import web

from proxy.handlers import admin, chat, passthrough


def setup_routes(app: web.Application) -> None:
    """Register every route: chat, /lcm/ admin, and the /v1/ catch-all pass-through."""
    app.router.add_post("/v1/chat/completions", chat.chat_completions)
    app.router.add_get("/lcm/health", admin.health)
    app.router.add_get("/lcm/metrics", admin.metrics)
    app.router.add_route("*", "/v1/{tail:.*}", passthrough.passthrough)
