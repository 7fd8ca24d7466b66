"""``GET``/``DELETE /v1/responses/{id}`` and ``GET …/input_items``: a stored response
read back as its client was shown it.

Forwarded as any other path (:func:`proxy.handlers.passthrough.passthrough`); a 200
answer is then shown through :mod:`proxy.wire.responseview`: without the memory
tools, their calls and results, the memory block, and with the usage and
``previous_response_id`` the client got. A response the proxy answered in several
rounds left the other rounds' responses stored upstream, holding the client's
input: a ``DELETE`` deletes those first (best effort; noted in memory only, so a
restarted proxy no longer knows them). A ``GET`` with ``stream=true``
(an event replay) goes as sent.
"""

from __future__ import annotations

import logging

from aiohttp import web

from proxy import headers as hdrs
from proxy.appkeys import ENGINE, HTTP, SETTINGS
from proxy.errors import ProxyError
from proxy.flow.responsethreads import threads_of
from proxy.handlers.passthrough import passthrough
from proxy.upstream import client_url, is_azure_path, send
from proxy.wire.responseview import input_items_view, response_view

log = logging.getLogger("lcm.responses")


async def get_response(request: web.Request) -> web.StreamResponse:
    """``GET /v1/responses/{id}``."""
    if request.query.get("stream", "").lower() == "true":
        return await passthrough(request)
    shown = threads_of(request.app[ENGINE]).shown(request.match_info["rid"])
    return await passthrough(request, view=lambda obj: response_view(obj, shown))


async def get_input_items(request: web.Request) -> web.StreamResponse:
    """``GET /v1/responses/{id}/input_items``."""
    shown = threads_of(request.app[ENGINE]).shown(request.match_info["rid"])
    ascending = request.query.get("order", "").lower() == "asc"
    return await passthrough(
        request, view=lambda page: input_items_view(page, shown, ascending=ascending))


async def delete_response(request: web.Request) -> web.StreamResponse:
    """``DELETE /v1/responses/{id}``: the other rounds' responses first (the client
    holds its answer only once they are gone), then the client's own, relayed."""
    return await delete_with_rounds(request)


async def delete_with_rounds(request: web.Request) -> web.StreamResponse:
    """``DELETE`` of a stored answer (``{rid}`` in the path): the upstream copies of
    its other rounds first (best effort), then the client's own, relayed."""
    threads = threads_of(request.app[ENGINE])
    rid = request.match_info["rid"]
    shown = threads.shown(rid)
    if shown is not None and shown.others:
        settings = request.app[SETTINGS]
        headers = hdrs.to_upstream(request.headers, api_key=settings.proxy.upstream_api_key,
                                   azure=is_azure_path(request.rel_url.raw_path))
        base = request.rel_url.raw_path[: -len(rid)]
        for other in shown.others:
            url = client_url(settings.proxy.upstream, base + other,
                             request.rel_url.raw_query_string)
            try:
                resp = await send(request.app[HTTP], "DELETE", url, headers, None)
                resp.release()
            except ProxyError:  # best effort: the client's own delete goes on
                log.warning("could not delete %s, a round of %s", other, rid, exc_info=True)
    response = await passthrough(request)
    if response.status == 200:
        threads.forget_shown(rid)
    return response
