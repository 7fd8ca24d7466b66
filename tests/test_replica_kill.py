"""Kill -9 one of two ``lcm-proxy serve`` replicas on one PostgreSQL mid-stream
(issue 27): the other keeps serving, nothing committed is lost, and the killed one,
restarted on its data directory, catches its own indexes up from its checkpoints.

Skips outside CI without PostgreSQL server binaries or psycopg; fails under
``CI=true`` (tests/test_store_responsemap.py's ``pg_url``).
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import openai
import psycopg

from memory_core.replica import replica_id
from tests import pgcluster
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-kill-test-0123456789"


class Replica:
    """A ``python -m proxy serve`` process on ``url``; ``port`` read from its log;
    ``extra``: more environment variables (settings) for it."""

    def __init__(self, data_dir: Path, url: str, upstream: str,
                 extra: dict[str, str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
        env.update(PYTHONPATH=str(ROOT), LCM_EMBEDDING__PROVIDER="hashing",
                   LCM_UPSTREAM=upstream, LCM_LOG__JSON="false", LCM_STORE__URL=url,
                   # Vectors saved (and their checkpoint moved) within a second.
                   LCM_SEARCH__VECTOR_SAVE_INTERVAL_SECONDS="1")
        env.update(extra or {})
        self.data_dir = data_dir
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "proxy", "serve", "--port", "0", "--data-dir",
             str(data_dir)], env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        """Every line of its log so far (what a failed check quotes)."""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            self.lines.put(line)

    def problems(self, limit: int = 40) -> str:
        """The log's warnings and errors with their tracebacks (at most ``limit``
        records): what a memory path that failed open says about why."""
        out: list[str] = []
        keep = False
        for line in list(self.log):
            if re.match(r"\S", line):
                keep = bool(re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line))
                if keep:
                    if len(out) >= limit:
                        break
                    out.append(line)
            elif keep:
                out[-1] += line
        return "".join(out)

    async def ready(self) -> str:
        """The proxy's base URL once it listens (waits up to 60 s)."""
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                assert self.proc.poll() is None, "".join(seen)
                await asyncio.sleep(0.05)
                continue
            seen.append(line)
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+/v1)", line)
            if found:
                return found.group(1)
        raise AssertionError("replica did not start: " + "".join(seen))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after a minute); its log is kept beside its
        data dir (``<data dir>.log``)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.data_dir.with_suffix(".log").write_text("".join(self.log), encoding="utf-8")


def _client(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=30)


async def _say(client: openai.AsyncOpenAI, history: list[Any], text: str) -> None:
    history.append({"role": "user", "content": text})
    r = await client.chat.completions.create(model="m", messages=history)
    history.append({"role": "assistant", "content": r.choices[0].message.content})


async def test_kill_9_one_replica_mid_stream(upstream: FakeUpstream, tmp_path: Path,
                                             pg_url: str) -> None:  # noqa: F811
    url = pgcluster.fresh_database(pg_url, "replica_kill")
    one = Replica(tmp_path / "one", url, upstream.base_url)
    two = Replica(tmp_path / "two", url, upstream.base_url)
    restarted: Replica | None = None
    try:
        clients = [_client(await one.ready()), _client(await two.ready())]
        history: list[Any] = [{"role": "system", "content": "You are the ops agent."}]
        for i in range(6):
            await _say(clients[i % 2], history,
                       f"Turn {i}: the build number of component {i} is B-{4100 + i}.")

        # A slow stream through replica one, killed after its first chunk.
        upstream.push(Reply(content="a long answer that never ends " * 8, write_size=120,
                            delay=0.3))
        sent = [*history, {"role": "user", "content": "Tell me a long story."}]
        stream = await clients[0].chat.completions.create(model="m", messages=sent,
                                                          stream=True)
        got = False
        try:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    got = True
                    one.kill()
        except Exception:  # noqa: BLE001 - the connection dies with the replica
            pass
        assert got and one.proc.returncode == -signal.SIGKILL

        # The other keeps serving: the same turn again, then more.
        await _say(clients[1], history, "Tell me a long story.")
        for i in range(6, 9):
            await _say(clients[1], history,
                       f"Turn {i}: the build number of component {i} is B-{4100 + i}.")

        # Nothing committed is lost; the retried turn is stored once.
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT msg_role, text FROM messages ORDER BY id").fetchall()
            head = conn.execute("SELECT MAX(id) FROM index_outbox").fetchone()[0]
            points = dict(conn.execute("SELECT name, value FROM checkpoints").fetchall())
        assert [(r[0], r[1]) for r in rows] == [(m["role"], m["content"]) for m in history]

        # The killed replica restarts on its data directory and catches up from its
        # own checkpoint, which stopped before what replica two wrote meanwhile.
        rid = replica_id(tmp_path / "one")
        assert points[f"index_text@{rid}"] < head
        restarted = Replica(tmp_path / "one", url, upstream.base_url)
        again = _client(await restarted.ready())
        await _say(again, history, "Which build number did component 7 have?")
        deadline = time.monotonic() + 30
        while True:
            with psycopg.connect(url) as conn:
                head = conn.execute("SELECT MAX(id) FROM index_outbox").fetchone()[0]
                points = dict(conn.execute("SELECT name, value FROM checkpoints").fetchall())
            if (points.get(f"index_text@{rid}", 0) >= head
                    and points.get(f"index_vector@{rid}", 0) >= head):
                break
            assert time.monotonic() < deadline, (head, points)
            await asyncio.sleep(0.2)
        assert "B-4107" in upstream.chat_requests[-1]["raw"].decode()
    finally:
        for r in (one, two, restarted):
            if r is not None:
                r.stop()
