"""Helpers for the reliability suite: a real ``lcm-proxy serve`` subprocess, a scripted
upstream with arbitrary write boundaries, a raw HTTP client and a background event loop.

Everything listens on 127.0.0.1 only. A :class:`ServeProcess` is always killed in
``stop()``; tests call it in ``finally`` (or use :func:`serve_process`). This module
has no tests of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

from tests.conftest import store_env

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port() -> int:
    """A loopback port that was free a moment ago (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> int:
    """Resident set size of process ``pid`` in KiB (``/proc/<pid>/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class ServeProcess:
    """``python -m proxy serve`` on 127.0.0.1 with its own data dir and settings.

    ``env`` adds ``LCM_*`` variables (the hashing embedder is the default here, so
    that a test does not wait for a model); the store is the one ``LCM_TEST_STORE``
    chose (``tests.conftest.store_env``). stderr (the JSON log) goes to
    ``log_path``. :meth:`start` waits until ``/lcm/health`` answers 200.
    """

    def __init__(self, upstream: str, data_dir: Path, log_path: Path,
                 env: dict[str, str] | None = None) -> None:
        self.upstream, self.data_dir, self.log_path = upstream, data_dir, log_path
        self.extra_env = {"LCM_EMBEDDING__PROVIDER": "hashing", **store_env(data_dir),
                          **(env or {})}
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self, timeout: float = 60.0) -> None:
        """Spawn the server and wait for health (retries once on a lost port race)."""
        for _attempt in range(3):
            self.port = free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
            env.update(self.extra_env, PYTHONPATH=str(ROOT))
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "proxy", "serve", "--host", "127.0.0.1",
                 "--port", str(self.port), "--upstream", self.upstream,
                 "--data-dir", str(self.data_dir)],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=self._log)
            if await self._wait_healthy(timeout):
                return
            self.stop()
        raise RuntimeError(f"lcm-proxy serve did not start; log:\n{self.log_text()[-4000:]}")

    async def _wait_healthy(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as http:
            while time.monotonic() < deadline:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    return False
                with contextlib.suppress(aiohttp.ClientError, OSError, ValueError):
                    async with http.get(self.root + "/lcm/health") as r:
                        # another worker's server may hold the port we lost the race
                        # for: healthy only when the data directory is ours
                        if r.status == 200 and self._ours(await r.json()):
                            return True
                await asyncio.sleep(0.1)
        return False

    def _ours(self, health: dict[str, Any]) -> bool:
        """Whether a ``/lcm/health`` body is this server's: its ``data_dir`` (shown
        on loopback without an admin token) is ours; without one, trusted."""
        shown = health.get("data_dir")
        return shown is None or Path(shown).resolve() == self.data_dir.resolve()

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind runs in the server."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def terminate(self) -> None:
        """SIGTERM: the server drains in-flight requests and exits."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    async def wait_exit(self, timeout: float = 60.0) -> int | None:
        """Wait (without blocking the loop) for the process to exit; its return code."""
        deadline = time.monotonic() + timeout
        while self.proc is not None and self.proc.poll() is None:
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.05)
        return None if self.proc is None else self.proc.returncode

    def stop(self) -> None:
        """Kill the process if still running and close the log file (idempotent)."""
        self.kill()
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_records(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far (non-JSON lines are skipped)."""
        out = []
        for line in self.log_text().splitlines():
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    out.append(obj)
        return out


@contextlib.asynccontextmanager
async def serve_process(upstream: str, data_dir: Path, log_path: Path,
                        env: dict[str, str] | None = None) -> AsyncIterator[ServeProcess]:
    """Start a :class:`ServeProcess`; it is always killed on exit."""
    server = ServeProcess(upstream, data_dir, log_path, env)
    try:
        await server.start()
        yield server
    finally:
        server.stop()


def cli(*args: str, timeout: float = 120.0) -> str:
    """Run ``python -m proxy <args>`` and return its stdout (raises on failure); with
    ``--data-dir DIR``, on the store ``LCM_TEST_STORE`` chose for ``DIR``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
    env["PYTHONPATH"] = str(ROOT)
    if "--data-dir" in args:
        env.update(store_env(args[args.index("--data-dir") + 1]))
    done = subprocess.run([sys.executable, "-m", "proxy", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return done.stdout.decode()


def read_sql(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one read-only statement (the same in both dialects) on the store of
    a server's ``data_dir``, from outside that server: its SQLite file, or its
    PostgreSQL database (``tests.conftest.store_env``)."""
    url = store_env(data_dir).get("LCM_STORE__URL")
    if url:
        import psycopg

        with psycopg.connect(url) as conn:
            return [tuple(r) for r in conn.execute(sql)]
    lite = sqlite3.connect(f"file:{data_dir / 'lcm.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return [tuple(r) for r in lite.execute(sql)]
    finally:
        lite.close()


def integrity(data_dir: Path) -> list[str]:
    """The store's integrity check from outside its server: ``PRAGMA integrity_check``
    of a read-only SQLite connection, or the PostgreSQL backend's own check
    (``Maintenance.integrity_check``); ``["ok"]`` when healthy."""
    url = store_env(data_dir).get("LCM_STORE__URL")
    if url:
        from memory_core.store.pg import PgStore

        store = PgStore(url, max_size=1)
        try:
            return list(store.read_tx(lambda tx: tx.maintenance.integrity_check()))
        finally:
            store.close()
    return [r[0] for r in read_sql(data_dir, "PRAGMA integrity_check")]


def export(data_dir: Path, *extra: str) -> dict[str, Any]:
    """``lcm-proxy memory export --data-dir DIR`` parsed."""
    return json.loads(cli("memory", "export", "--data-dir", str(data_dir), *extra))


# -- a scripted upstream -------------------------------------------------------------------
@dataclass
class Script:
    """One scripted answer: ``chunks`` written one by one (``pause`` seconds apart);
    ``drop`` closes the connection after the last chunk instead of ending the body."""

    chunks: list[bytes]
    status: int = 200
    content_type: str = "text/event-stream"
    drop: bool = False
    pause: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedUpstream:
    """An upstream on 127.0.0.1 that answers ``POST /v1/chat/completions`` from a
    queue of :class:`Script` objects, or with a small JSON completion for any body
    (it never fails on odd input: every 5xx a test sees comes from the proxy).
    Records the raw bytes of each request."""

    def __init__(self) -> None:
        self.scripts: list[Script] = []
        self.received: list[bytes] = []
        self.sent: list[bytes] = []
        self.app = web.Application(client_max_size=1 << 30)
        self.app.router.add_route("*", "/v1/{tail:.*}", self.handle)
        self.runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self.runner = web.AppRunner(self.app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.received.append(await request.read())
        if not self.scripts:
            return web.json_response({
                "id": "chatcmpl-s", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"},
                             "finish_reason": "stop"}]})
        script = self.scripts.pop(0)
        resp = web.StreamResponse(status=script.status, headers={
            "Content-Type": script.content_type, **script.headers})
        await resp.prepare(request)
        sent = b""
        for chunk in script.chunks:
            await resp.write(chunk)
            sent += chunk
            if script.pause:
                await asyncio.sleep(script.pause)
        self.sent.append(sent)
        if script.drop:
            assert request.transport is not None
            request.transport.close()
            return resp
        await resp.write_eof()
        return resp


# -- an event loop in a thread (for hypothesis, which drives sync test functions) --------
class LoopThread:
    """Runs an asyncio loop in a daemon thread; :meth:`run` executes a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-loop",
                                       daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@contextlib.contextmanager
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    try:
        yield lt
    finally:
        lt.close()


def sse(*objects: Any, done: bool = True) -> bytes:
    """Render chunk objects as SSE bytes (``data: {json}\\n\\n`` each, then ``[DONE]``)."""
    out = b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in objects)
    return out + (b"data: [DONE]\n\n" if done else b"")


def chunk(content: str | None = None, finish: str | None = None, index: int = 0,
          role: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` object with a single choice."""
    delta: dict[str, Any] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    return {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


class EchoUpstream:
    """An upstream on 127.0.0.1 that answers ``echo: <last user text>``, streamed in
    ``pieces`` SSE chunks ``pause`` seconds apart when the request streams (both are
    attributes, changeable while requests run). Counts what it started and finished;
    ``service_seconds`` holds, per finished request, the time from its arrival to the
    end of its answer; the answer itself carries it as ``x_service_ms`` (in the final
    chunk of a stream), which the load test subtracts to get the proxy's added latency."""

    def __init__(self, pieces: int = 8, pause: float = 0.0) -> None:
        self.pieces, self.pause = pieces, pause
        self.started = 0
        self.finished = 0
        self.service_seconds: list[float] = []
        self.app = web.Application(client_max_size=1 << 30)
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self.runner = web.AppRunner(self.app, handler_cancellation=True)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @staticmethod
    def reply_for(text: str) -> str:
        return "echo: " + text

    async def chat(self, request: web.Request) -> web.StreamResponse:
        t0 = time.perf_counter()
        body = json.loads(await request.read())
        self.started += 1
        last = ""
        for msg in body.get("messages", []):
            if isinstance(msg, dict) and msg.get("role") == "user" and isinstance(
                    msg.get("content"), str):
                last = msg["content"]
        # the proxy may prepend its memory block: the user's own text follows it
        last = last.rsplit("[Current Request]\n", 1)[-1]
        text = self.reply_for(last)
        if not body.get("stream"):
            self.finished += 1
            self.service_seconds.append(time.perf_counter() - t0)
            return web.json_response({
                "x_service_ms": (time.perf_counter() - t0) * 1000,
                "id": "chatcmpl-e", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        step = max(1, -(-len(text) // self.pieces))
        await resp.write(sse(chunk("", role="assistant"), done=False))
        for i in range(0, len(text), step):
            if self.pause:
                await asyncio.sleep(self.pause)
            await resp.write(sse(chunk(text[i:i + step]), done=False))
        final = chunk(None, finish="stop")
        final["x_service_ms"] = (time.perf_counter() - t0) * 1000
        await resp.write(sse(final))
        await resp.write_eof()
        self.finished += 1
        self.service_seconds.append(time.perf_counter() - t0)
        return resp


@dataclass
class Agent:
    """One simulated agent: its session, its history and what it fully received."""

    name: str
    history: list[dict[str, Any]] = field(default_factory=list)
    completed: int = 0
    first_bytes: bool = False
    last_ttfb: float = 0.0
    """Seconds from sending the last turn to its first response byte."""
    last_total: float = 0.0
    """Seconds from sending the last turn to the end of its answer."""
    last_service: float = 0.0
    """Seconds the upstream spent on the last turn (``x_service_ms``), 0 if unknown."""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": "Bearer sk-agent-" + self.name + "-0123456789",
                "X-LCM-Session": self.name}

    def user_text(self, turn: int) -> str:
        return f"{self.name} turn {turn} marker{self.name}x{turn} please continue the plan"

    async def turn(self, http: aiohttp.ClientSession, base_url: str, turn: int, *,
                   stream: bool = True) -> str:
        """Send one turn (the whole history, as agents do); append the answer to the
        history only when it arrived whole (``[DONE]``); raise otherwise."""
        self.first_bytes = False
        messages = [*self.history, {"role": "user", "content": self.user_text(turn)}]
        body = {"model": "m", "stream": stream, "messages": messages}
        t0 = time.perf_counter()
        async with http.post(base_url + "/chat/completions", json=body,
                             headers=self.headers) as r:
            self.last_ttfb = time.perf_counter() - t0
            if r.status != 200:
                raise RuntimeError(f"{self.name}: status {r.status}: {await r.text()}")
            if not stream:
                obj = await r.json()
                text = obj["choices"][0]["message"]["content"]
                self.last_service = obj.get("x_service_ms", 0.0) / 1000
            else:
                raw = b""
                async for piece in r.content.iter_any():
                    if not raw:
                        self.last_ttfb = time.perf_counter() - t0
                    raw += piece
                    self.first_bytes = True
                if not raw.endswith(b"data: [DONE]\n\n"):
                    raise RuntimeError(f"{self.name}: stream ended without [DONE]")
                chunks = [json.loads(line[6:]) for line in raw.decode().split("\n")
                          if line.startswith("data: {")]
                text = "".join((c["choices"] or [{}])[0].get("delta", {}).get("content") or ""
                               for c in chunks)
                self.last_service = chunks[-1].get("x_service_ms", 0.0) / 1000
        self.last_total = time.perf_counter() - t0
        self.history = [*messages, {"role": "assistant", "content": text}]
        self.completed = turn
        return text
