"""The model the proxy plans a request for, an Azure deployment standing in.

An Azure deployment path (``/openai/deployments/{deployment}/chat/completions``) names
what serves the request; its body may carry no ``model`` (clients other than the
openai SDK, which always sends one). The proxy still needs a model name for the
request's context window (``[context]`` table, learned limits), for the upstreams that
refused tools, for usage counts, the access line and the recorded request: the
deployment's name then stands in. The body sent upstream is never given a ``model``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web


def request_model(request: web.Request, body: Any) -> str | None:
    """``body``'s ``model`` when it is a string, else the ``{deployment}`` of the
    request's Azure route (:data:`proxy.routes.AZURE_CHAT`), else ``None``."""
    model = body.get("model") if isinstance(body, dict) else None
    if isinstance(model, str):
        return model
    deployment = request.match_info.get("deployment")
    return deployment or None
