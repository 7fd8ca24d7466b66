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

AZURE_CHAT = ("/openai/deployments/{deployment}/chat/completions", "/openai/v1/chat/completions")
"""Azure OpenAI's chat completions: a deployment's (``AzureOpenAI(azure_endpoint=…)``,
``?api-version=``) and the v1 surface's; forwarded on the upstream's Azure root
(:func:`proxy.upstream.client_url`)."""
AZURE_RESPONSES = ("/openai/responses", "/openai/v1/responses")
"""Azure OpenAI's Responses API (``?api-version=`` on the first)."""


def setup_routes(app: web.Application) -> None:
    """Register every route: chat, responses, Anthropic messages (each also on Azure's
    paths, :data:`AZURE_CHAT`, :data:`AZURE_RESPONSES`), /lcm/ admin, and the /v1/ and
    /openai/ catch-all pass-throughs."""
    for chat_path in ("/v1/chat/completions", *AZURE_CHAT):
        app.router.add_post(chat_path, chat.chat_completions)
    for read_path in ("/v1/chat/completions", "/openai/v1/chat/completions"):
        app.router.add_get(read_path, completionread.list_completions)
        app.router.add_get(read_path + "/{rid}", completionread.get_completion)
        app.router.add_get(read_path + "/{rid}/messages", completionread.get_messages)
        app.router.add_delete(read_path + "/{rid}", completionread.delete_completion)
    for responses_path in ("/v1/responses", *AZURE_RESPONSES):
        app.router.add_post(responses_path, responses.responses)
        app.router.add_get(responses_path + "/{rid}", responseread.get_response)
        app.router.add_get(responses_path + "/{rid}/input_items", responseread.get_input_items)
        app.router.add_delete(responses_path + "/{rid}", responseread.delete_response)
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
    app.router.add_route("*", "/openai/{tail:.*}", passthrough.passthrough)
