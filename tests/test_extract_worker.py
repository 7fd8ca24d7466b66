"""Extraction in a child process (``injection.extract_worker``): same items, same order,
and nothing lost when the child dies.

Real engines (the backend ``LCM_TEST_STORE`` decides), a real child process, real
signals: the engine with the worker and one without are fed the same memory-off
turns (the request's messages and the answer extracted by writer jobs after the
answer's commit), including corrections whose supersession depends on the order
items are stored in, and must end with the same items.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.extraction.worker import ExtractWorker, read_chunks
from memory_core.models import Scope
from proxy.settings import load_settings
from tests.conftest import sql_read

TURNS = [
    ("The API timeout is 30 s when offline. We decided to use PostgreSQL 16.",
     "Noted: the timeout is 30 s and PostgreSQL 16 it is."),
    ("Keep in mind: the budget is 120 dollars a month, 3 retries at most.",
     "I suggest we use 2 retries instead."),
    ("Actually the API timeout is 45 s, not 30 s. The budget is now 150 dollars.",
     "Understood, 45 s and 150 dollars."),
    ("My sister Anna lives in Lisbon. The deploy window is 02:00 to 04:00 UTC.",
     "I will schedule it for 02:30 UTC."),
]


def _feed(engine: Engine, scope: Scope, turns: list[tuple[str, str]]) -> None:
    """Each turn as a memory-off request (extracted after the answer) in one thread."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for n, (said, answer) in enumerate(turns):
        messages.append({"role": "user", "content": said})
        ticket, fut = engine.capture_request(scope, f"r{n}", list(messages), {},
                                             extract_after_answer=True)
        fut.result(30)
        engine.capture_response(ticket, [{"role": "assistant", "content": answer}],
                                {"outcome": "complete"}).result(30)
        messages.append({"role": "assistant", "content": answer})
    engine.flush()


def _items(engine: Engine) -> list[tuple[Any, ...]]:
    """Every item in id order with what order decides (status, the links, by rank)."""
    rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT id, kind, subject, text, value, unit, condition, status, supersedes,"
        " superseded_by, evidence FROM memory_items ORDER BY id")])
    rank = {r[0]: n for n, r in enumerate(rows)}
    return [(r[1:7], r[7], rank.get(r[8]), rank.get(r[9]), r[10]) for r in rows]


def _running(engine: Engine, timeout: float = 30.0) -> ExtractWorker:
    worker = engine.captures.worker
    assert worker is not None
    worker.read_ahead("start", "warm", "user")  # started lazily, by a thread
    deadline = time.monotonic() + timeout
    while not worker.stats()["running"]:
        assert time.monotonic() < deadline, "the extraction worker did not start"
        time.sleep(0.05)
    return worker


def test_items_are_the_same_and_in_the_same_order_with_the_worker(tmp_path: Path) -> None:
    """With the worker, every queued extraction is read by the child (used, none
    missed), and the items, their status and supersession links equal in-process
    extraction's."""
    plain = Engine(tmp_path / "a", MemoryConfig())
    offloaded = Engine(tmp_path / "b", MemoryConfig(extract_worker=True))
    try:
        assert plain.captures.worker is None
        worker = _running(offloaded)
        child = worker.stats()["pid"]
        assert child is not None and child != os.getpid()
        for eng in (plain, offloaded):
            _feed(eng, Scope("t_w"), TURNS)
        stats = worker.stats()
        assert stats["used"] == 2 * len(TURNS), stats  # every user message and answer
        assert stats["missed"] == 0 and stats["failed"] == 0, stats
        items = _items(plain)
        assert any(status == "superseded" for _, status, *_ in items)
        assert _items(offloaded) == items
    finally:
        plain.close()
        offloaded.close()
    assert not worker.stats()["running"]  # closed with the engine


def test_a_dead_worker_fails_open_and_loses_nothing(tmp_path: Path) -> None:
    """A hung child: the job waiting on it gives up after ``timeout``, the child is
    killed, every job extracts in process until it is started again (not at once:
    :data:`memory_core.extraction.worker.RESTART_SECONDS`), and the items equal
    in-process extraction's."""
    plain = Engine(tmp_path / "a", MemoryConfig())
    offloaded = Engine(tmp_path / "b", MemoryConfig(extract_worker=True))
    try:
        worker = _running(offloaded)
        _feed(plain, Scope("t_w"), TURNS)
        pid = worker.stats()["pid"]
        assert isinstance(pid, int)
        os.kill(pid, signal.SIGSTOP)  # hung: the first job waiting on it gives up
        worker.timeout = 0.5
        messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
        for n, (said, answer) in enumerate(TURNS):
            messages.append({"role": "user", "content": said})
            ticket, fut = offloaded.capture_request(Scope("t_w"), f"r{n}", list(messages),
                                                    {}, extract_after_answer=True)
            fut.result(30)
            offloaded.capture_response(ticket, [{"role": "assistant", "content": answer}],
                                       {"outcome": "complete"}).result(30)
            messages.append({"role": "assistant", "content": answer})
        offloaded.flush()
        stats = worker.stats()
        assert stats["restarts"] >= 1 and stats["failed"] >= 1, stats
        assert stats["used"] == 0, stats
        assert _items(offloaded) == _items(plain)
        pending = sql_read(offloaded, lambda c: list(c.execute(
            "SELECT count(*) FROM extraction_queue")))
        assert pending[0][0] == 0
    finally:
        plain.close()
        offloaded.close()


def test_the_child_reads_what_the_job_would() -> None:
    """A result is used only for the text and speaker it was read for."""
    worker = ExtractWorker(timeout=30.0)
    try:
        worker.read_ahead(1, "x", "user")  # starts it; nothing handed yet
        deadline = time.monotonic() + 30
        while not worker.stats()["running"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        text = "The API timeout is 30 s when offline."
        worker.read_ahead(1, text, "user")
        worker.read_ahead(2, text, "user")
        assert worker.take(1, text, "user") == read_chunks(text, "user")
        assert worker.take(2, text, "assistant") is None  # another speaker: in process
        assert worker.take(3, text, "user") is None  # never handed over
        assert worker.stats()["missed"] == 1 and worker.stats()["used"] == 1
    finally:
        worker.close()


def test_the_setting_reaches_the_engine_and_doctor() -> None:
    """``injection.extract_worker`` from the environment reaches the engine's config
    and the config ``doctor`` and ``/config`` print (``public_dict``)."""
    settings = load_settings(None, environ={"LCM_INJECTION__EXTRACT_WORKER": "true"})
    assert settings.memory_config().extract_worker is True
    assert settings.public_dict()["injection"]["extract_worker"] is True
    assert load_settings(None, environ={}).memory_config().extract_worker is False


def test_the_short_bench_counts_child_processes() -> None:
    """``bench short`` reads the proxy's CPU and RSS with its child processes (the
    extraction worker): a child holding 64 MB shows in both."""
    import subprocess
    import sys

    from proxy.shortbench import proc_stat

    before = proc_stat(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; b = bytearray(64_000_000); b[::4096] = b'x' * len(b[::4096]);"
        " print(1, flush=True); time.sleep(30)")], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline()
        after = proc_stat(os.getpid())
        assert after.child_rss_mib >= 60
        assert after.rss_mib - before.rss_mib >= 55
        assert after.cpu > before.cpu
    finally:
        child.kill()
        child.wait()
