"""Record what the upstream received, for the inspector's request log (one call).

:func:`record` is the only hook in the request path (``proxy.handlers.chat``): it
queues the forwarded body on the store's writer (:meth:`Engine.record_forwarded`)
without waiting, so it costs a queue put; serialising a dict, masking secrets and
compressing happen on the writer thread. It never raises: a failure is logged and
counted (``lcm_fail_open_total{stage="forward_log"}``) and the request goes on.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from aiohttp import web

from memory_core.models import Scope
from proxy.appkeys import AENGINE, METRICS, SETTINGS
from proxy.deployment import request_model
from proxy.rewrite import dumps_body
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

log = logging.getLogger("lcm.forwardlog")


def record(request: web.Request, scope: Scope | None, request_id: str, prepared: Any,
           raw: bytes, client: dict[str, Any], *, tools: bool,
           wire: WireAdapter = CHAT) -> None:
    """Queue the body the upstream receives for this request with what memory did.

    ``prepared``: the memory path's ``proxy.flow.memorypath.Prepared`` (its ``body``, or
    ``raw`` — the client's bytes — when it left the request unchanged). ``tools``:
    the memory tool loop will forward it, with the memory tools added: the body is
    then built on the writer thread by the loop's own functions
    (the adapter's ``add_tools``, ``rewrite.dumps_body``), the same bytes as its first
    round (``wire``: the request's API, Chat Completions by default).
    ``client``: the client's parsed body (model, stream). Records nothing
    without a scope (no capture) or with ``capture.keep_forwarded_requests = 0``.
    """
    if scope is None:
        return
    try:
        cfg = request.app[SETTINGS].capture
        capture = getattr(prepared, "capture", None)
        meta = {"state": prepared.state,
                "thread_id": capture.thread_id if capture is not None else None,
                "model": request_model(request, client),
                "stream": client.get("stream") is True, "client_bytes": len(raw),
                "tools_added": tools, "compacted_messages": prepared.compacted_messages}
        body: Any = raw if prepared.body is None else prepared.body
        if tools:
            body = prepared.obj or client
        app = request.app
        app[AENGINE].queue_forwarded(
            scope, request_id, body, meta, keep=cfg.keep_forwarded_requests,
            max_bytes=cfg.forwarded_body_max_kib * 1024,
            dumps=functools.partial(_with_tools, strict=app[SETTINGS].tools.strict,
                                    wire=wire,
                                    short=bool(getattr(prepared, "short_tools", False))),
            on_error=lambda exc: _failed(app, request_id, exc))
    except Exception:  # noqa: BLE001 - the inspector never fails a chat
        _failed(request.app, request_id)


def _failed(app: web.Application, request_id: str, exc: BaseException | None = None) -> None:
    app[METRICS].fail_open.labels("forward_log").inc()
    log.error("could not record the forwarded body (request %s)", request_id,
              exc_info=exc or True)


def _with_tools(body: dict[str, Any], strict: str = "auto",
                wire: WireAdapter = CHAT, short: bool = False) -> bytes:
    return dumps_body(wire.add_tools(body, strict=strict, short=short)[0])
