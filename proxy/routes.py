"""The route table."""

from __future__ import annotations

from aiohttp import web

from proxy import ui
from proxy.handlers import (
    admin,
    chat,
    completionread,
    messages,
    passthrough,
    responseread,
    responses,
)


def setup_routes(app: web.Application) -> None:
    """Register every route: chat, responses, Anthropic messages, /lcm/ admin, and
    the /v1/ catch-all pass-through."""
    app.router.add_post("/v1/chat/completions", chat.chat_completions)
    app.router.add_get("/v1/chat/completions", completionread.list_completions)
    app.router.add_get("/v1/chat/completions/{rid}", completionread.get_completion)
    app.router.add_get("/v1/chat/completions/{rid}/messages", completionread.get_messages)
    app.router.add_delete("/v1/chat/completions/{rid}", completionread.delete_completion)
    app.router.add_post("/v1/responses", responses.responses)
    app.router.add_get("/v1/responses/{rid}", responseread.get_response)
    app.router.add_get("/v1/responses/{rid}/input_items", responseread.get_input_items)
    app.router.add_delete("/v1/responses/{rid}", responseread.delete_response)
    app.router.add_post("/v1/messages", messages.messages)  # count_tokens: pass-through
    app.router.add_get("/lcm/health", admin.health)
    app.router.add_get("/lcm/livez", admin.livez)
    app.router.add_get("/lcm/readyz", admin.readyz)
    app.router.add_get("/lcm/metrics", admin.metrics)
    for method, path, handler in admin.ROUTES + ui.ROUTES:
        app.router.add_route(method, path, handler)
    app.on_response_prepare.append(admin.observe_memory_headers)
    app.on_response_prepare.append(admin.protect_admin_answers)
    app.router.add_route("*", "/v1/{tail:.*}", passthrough.passthrough)
