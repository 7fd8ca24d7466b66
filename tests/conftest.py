"""Shared fixtures: a fake upstream and a real proxy, both on 127.0.0.1 port 0."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from memory_core.engine import Engine
from proxy.app import create_app
from proxy.keys import ENGINE, TASKS
from proxy.settings import Settings, load_settings
from tests.fake_upstream import FakeUpstream


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    fake = FakeUpstream()
    await fake.start()
    yield fake
    await fake.stop()


class RunningProxy:
    """A proxy served on a real socket, with handles tests need."""

    def __init__(self, app: web.Application, runner: web.AppRunner, port: int,
                 settings: Settings):
        self.app, self.runner, self.port, self.settings = app, runner, port, settings

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def engine(self) -> Engine:
        return self.app[ENGINE]

    async def settle(self) -> None:
        """Wait for background capture tasks and queued SQLite writes."""
        await self.app[TASKS].drain(10)
        self.engine.flush()


async def start_proxy(upstream_url: str, data_dir: Path, **sections: dict[str, Any]
                      ) -> RunningProxy:
    overrides: dict[str, dict[str, Any]] = {
        "proxy": {"upstream": upstream_url},
        "storage": {"data_dir": str(data_dir)},
    }
    for name, values in sections.items():
        overrides.setdefault(name, {}).update(values)
    settings = load_settings(None, environ={}, overrides=overrides)
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return RunningProxy(app, runner, port, settings)


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data")
    yield running
    await running.runner.cleanup()
