"""Every typed ``web.AppKey`` of the application (aiohttp: no singletons)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from aiohttp import ClientSession, web

from memory_core.engine import Engine
from proxy.metrics import Metrics
from proxy.settings import Settings
from proxy.tasks import TaskGroup

SETTINGS = web.AppKey("settings", Settings)
ENGINE = web.AppKey("engine", Engine)
HTTP = web.AppKey("http", ClientSession)
TASKS = web.AppKey("tasks", TaskGroup)
METRICS = web.AppKey("metrics", Metrics)
MEMORY_POOL = web.AppKey("memory_pool", ThreadPoolExecutor)
"""Threads of the chat requests' memory paths (``proxy.flow.memorypath``)."""
REQUEST_ID = web.RequestKey("request_id", str)

MODEL = web.RequestKey("model", str)
"""The request body's ``model`` (chat requests), for the access line."""
