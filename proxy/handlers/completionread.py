"""``GET``/``DELETE /v1/chat/completions/{id}``, its ``messages`` and the list of
stored completions (``store: true``): read back as the client was shown them.

Forwarded as any other path; a 200 answer is shown through
:mod:`proxy.wire.chatview`: the usage the client got, the messages without the
memory block and the hidden rounds' memory calls and results, the list without the
hidden rounds' completions (noted in memory for the newest answers: a restarted
proxy lists them again). A ``DELETE`` deletes the hidden rounds' completions first
(:func:`proxy.handlers.responseread.delete_with_rounds`).
"""

from __future__ import annotations

from aiohttp import web

from proxy.appkeys import ENGINE
from proxy.flow.responsethreads import threads_of
from proxy.handlers.passthrough import passthrough
from proxy.handlers.responseread import delete_with_rounds
from proxy.wire.chatview import completion_view, list_view, messages_view


async def list_completions(request: web.Request) -> web.StreamResponse:
    """``GET /v1/chat/completions``."""
    hidden = threads_of(request.app[ENGINE]).hidden_ids()
    return await passthrough(request, view=lambda page: list_view(page, hidden))


async def get_completion(request: web.Request) -> web.StreamResponse:
    """``GET /v1/chat/completions/{id}``."""
    shown = threads_of(request.app[ENGINE]).shown(request.match_info["rid"])
    return await passthrough(request, view=lambda obj: completion_view(obj, shown))


async def get_messages(request: web.Request) -> web.StreamResponse:
    """``GET /v1/chat/completions/{id}/messages``."""
    shown = threads_of(request.app[ENGINE]).shown(request.match_info["rid"])
    return await passthrough(request, view=lambda page: messages_view(page, shown))


async def delete_completion(request: web.Request) -> web.StreamResponse:
    """``DELETE /v1/chat/completions/{id}``."""
    return await delete_with_rounds(request)
