"""Every typed ``web.AppKey`` of the application (aiohttp: no singletons)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from weakref import WeakSet

from aiohttp import ClientSession, web

from memory_core.engine import Engine
from proxy.flow.toolrefusal import ToolRefusals
from proxy.metrics import Metrics
from proxy.settings import Settings
from proxy.tasks import TaskGroup
from proxy.throttle import FailureThrottle
from proxy.uisession import SessionRevocation

if TYPE_CHECKING:
    from proxy.flow.asyncengine import AsyncEngine

SETTINGS = web.AppKey("settings", Settings)
ENGINE = web.AppKey("engine", Engine)
HTTP = web.AppKey("http", ClientSession)
TASKS = web.AppKey("tasks", TaskGroup)
METRICS = web.AppKey("metrics", Metrics)
AENGINE: web.AppKey[AsyncEngine] = web.AppKey("aengine")
"""The engine's async façade, owner of the request path's threads
(:class:`proxy.flow.asyncengine.AsyncEngine`)."""
TOOL_REFUSALS = web.AppKey("tool_refusals", ToolRefusals)
"""Models whose upstream refused tools: offered no memory tools
(:mod:`proxy.flow.toolrefusal`)."""
AUTH_THROTTLE = web.AppKey("auth_throttle", FailureThrottle)
"""Wrong admin tokens per client address (:mod:`proxy.throttle`)."""
UI_SESSIONS = web.AppKey("ui_sessions", SessionRevocation)
"""When the inspector was last signed out of (:mod:`proxy.uisession`)."""
WEBSOCKETS: web.AppKey[WeakSet[Any]] = web.AppKey("websockets")
"""The relayed WebSocket sessions open now (:mod:`proxy.handlers.passthrough`), closed
with 1001 when the proxy shuts down."""
REQUEST_ID = web.RequestKey("request_id", str)

MODEL = web.RequestKey("model", str)
"""The request body's ``model`` (chat requests), for the access line."""
