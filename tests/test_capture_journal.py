"""The capture journal: an answer the client got survives a crash before its commit.

With ``capture.journal`` (the default) the answer's capture is written to a file of
the process as it is queued, so the client's end no longer waits for the commit
(``capture.response_wait_seconds``); a crash before the commit is repaired on the
next open by replaying that file. Real proxy, real openai SDK, real fake upstream
on loopback, real SQLite; the store's writer is held up by a long job, and the crash
is a copy of the data directory taken while it is (what a killed process leaves).
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import openai
import pytest

from memory_core.capture import journal
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.models import Scope
from tests import pgcluster
from tests.conftest import sql_read, start_proxy
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

OFF = {"X-LCM-Memory": "off"}


def _rows(engine: Engine) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(role, text) of every stored message, and (kind, data) of every event, in order."""
    messages = sql_read(engine, lambda c: c.execute(
        "SELECT msg_role, text FROM messages ORDER BY id").fetchall())
    events = sql_read(engine, lambda c: c.execute(
        "SELECT kind, data FROM events ORDER BY id").fetchall())
    return [(r[0], r[1]) for r in messages], [(r[0], r[1]) for r in events]


def _journal_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / journal.DIRECTORY).glob("journal-*.jsonl"))


@pytest.mark.sqlite_only("the crash is a copy of the SQLite files")
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_an_answer_the_client_got_survives_a_crash_before_its_commit(
        upstream: FakeUpstream, tmp_path: Path, stream: bool) -> None:
    """The writer is stuck, so neither the request nor its answer can commit; the
    client still gets the whole answer at once (a commit wait of 10 s not
    taken), and a copy of the data directory taken then (the process killed at
    that moment) holds both once an engine opens it: replayed from the journal."""
    data = tmp_path / "d"
    proxy = await start_proxy(upstream.base_url, data, tools={"enabled": False},
                              capture={"response_wait_seconds": 10.0, "journal": True})
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-journal-0001",
                                max_retries=0)
    crashed = tmp_path / "crashed"
    release, running = threading.Event(), threading.Event()

    def hold(tx: object) -> None:
        running.set()
        release.wait(30)

    stuck = proxy.engine.store.write_tx(hold)
    assert running.wait(30)  # running: the captures cannot jump ahead of it
    try:
        upstream.push(Reply(content="Port 8443 stays open.", piece=4))
        messages = [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": "Which port stays open?"}]
        started = time.perf_counter()
        if stream:
            s = await client.chat.completions.create(model="m", messages=messages,
                                                     stream=True, extra_headers=OFF)
            text = "".join([c.choices[0].delta.content or "" async for c in s
                            if c.choices])
        else:
            r = await client.chat.completions.create(model="m", messages=messages,
                                                     extra_headers=OFF)
            text = r.choices[0].message.content
        assert text == "Port 8443 stays open."
        assert time.perf_counter() - started < 5.0  # the 10 s commit wait not taken
        assert [f.stat().st_size > 0 for f in _journal_files(data)] == [True]
        shutil.copytree(data, crashed)  # what a kill -9 now leaves behind
    finally:
        release.set()
        stuck.result(30)
        await client.close()
        await proxy.runner.cleanup()

    # opened with the journal off: what the killed process journaled is replayed
    # all the same
    engine = Engine(crashed, MemoryConfig(capture_journal=False))
    try:
        stored, events = _rows(engine)
        assert stored == [("system", "be brief"), ("user", "Which port stays open?"),
                          ("assistant", "Port 8443 stays open.")]
        assert [kind for kind, _ in events] == ["request", "response"]
        assert all('"replayed":"capture-journal"' in data for _, data in events)
        assert engine.captures.journal is None
        assert _journal_files(crashed) == []  # the orphan is gone, no new file
    finally:
        engine.close()


@pytest.mark.sqlite_only("the journal is not used with a shared store")
def test_a_committed_answer_leaves_nothing_in_the_journal_and_is_not_replayed(
        tmp_path: Path) -> None:
    """Once committed the journal is cut back to empty (the unredacted exchange does
    not linger on disk); a journal left over after that commit (the process died
    between the commit and the cut) is replayed without storing anything twice, and
    a torn last line (killed mid-write) is skipped."""
    engine = Engine(tmp_path, MemoryConfig(capture_journal=True))
    scope = Scope("t", "r")
    release, running = threading.Event(), threading.Event()

    def hold(tx: object) -> None:
        running.set()
        release.wait(30)

    stuck = engine.store.write_tx(hold)
    assert running.wait(30)  # running: the captures below cannot jump ahead of it
    try:
        ticket, request = engine.capture_request(
            scope, "req-1", [{"role": "user", "content": "the quota is 40 GB"}], {})
        answer = engine.capture_response(ticket, [{"role": "assistant", "content": "noted"}],
                                         {"outcome": "complete"})
        assert ticket.journaled
        [path] = _journal_files(tmp_path)
        saved = path.read_bytes()
        assert b"the quota is 40 GB" in saved and b"noted" in saved
    finally:
        release.set()
    stuck.result(30)
    request.result(30)
    answer.result(30)
    engine.store.flush()
    assert path.stat().st_size == 0
    before = _rows(engine)
    engine.close()
    assert _journal_files(tmp_path) == []

    leftover = tmp_path / journal.DIRECTORY / "journal-1-1.jsonl"
    leftover.write_bytes(saved + b'{"rid": "req-2", "scope": ["t", "r", ""], "cho')
    engine = Engine(tmp_path, MemoryConfig(capture_journal=True))
    try:
        assert _rows(engine) == before
        assert not leftover.exists()
    finally:
        engine.close()


@pytest.mark.sqlite_only("the journal is not used with a shared store")
def test_a_live_process_journal_is_not_replayed(tmp_path: Path) -> None:
    """A second engine on the same data directory leaves the first one's journal
    alone (it is locked while its process lives)."""
    first = Engine(tmp_path, MemoryConfig(capture_journal=True))
    second = Engine(tmp_path, MemoryConfig(capture_journal=True))
    try:
        assert first.captures.journal is not None and second.captures.journal is not None
        assert first.captures.journal.path.exists()
        assert len(_journal_files(tmp_path)) == 2
    finally:
        second.close()
        first.close()


def test_without_the_journal_the_answer_waits_for_its_commit(tmp_path: Path) -> None:
    """``capture_journal = False``: nothing is journaled (the proxy then waits for
    the commit, ``capture.response_wait_seconds``)."""
    _assert_unjournaled(Engine(tmp_path, MemoryConfig(capture_journal=False)), tmp_path)


def test_a_shared_store_keeps_no_journal(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """With PostgreSQL (replicas read only each other's commits) the journal is not
    started even when asked for: the answer waits for its commit, so another replica
    given the client's next request finds it stored."""
    url = pgcluster.fresh_database(pg_url, "journal_shared")
    engine = Engine(tmp_path, MemoryConfig(capture_journal=True, store_url=url))
    assert engine.store.shared
    _assert_unjournaled(engine, tmp_path)


def _assert_unjournaled(engine: Engine, data_dir: Path) -> None:
    """One exchange through ``engine`` (closed after): committed, nothing journaled."""
    try:
        ticket, _ = engine.capture_request(Scope("t"), "r1", [{"role": "user",
                                                               "content": "hi"}], {})
        engine.capture_response(ticket, [{"role": "assistant", "content": "yo"}], {}).result(30)
        assert not ticket.journaled
        assert engine.captures.journal is None
        assert _journal_files(data_dir) == []
    finally:
        engine.close()


def test_the_journal_line_of_a_committed_capture_is_asdicts() -> None:
    """An answer whose request capture committed journals that capture's result: the
    same line ``dataclasses.asdict`` wrote (every field, the request's 2,001 message
    ids included), read back into the same result; and no field of the result may
    be mutable (the line's fields are the result's own objects, not copies)."""
    import dataclasses

    from memory_core.capture import jobs
    from memory_core.capture.evidence import dumps_lossless
    from memory_core.models import CaptureResult, CaptureTicket

    result = CaptureResult(7, tuple(range(100, 2101)), (2099, 2100), 2100, "k" * 40,
                           False, 1765000000.25, tuple(range(100, 2090)), True)
    ticket = CaptureTicket(scope=Scope("t", "user", "s"), request_id="r1", result=result)
    line = jobs._journal_record(ticket, [{"role": "assistant"}], {"kind": "response"},
                                None, None)
    assert dumps_lossless(line["result"]) == dumps_lossless(dataclasses.asdict(result))
    assert list(line["result"]) == [f.name for f in dataclasses.fields(CaptureResult)]
    read = {k: tuple(v) if isinstance(v, list) else v for k, v in line["result"].items()}
    assert CaptureResult(**read) == result
    for value in line["result"].values():
        assert isinstance(value, (int, float, str, bool, tuple, type(None)))
        assert not isinstance(value, tuple) or all(isinstance(v, int) for v in value)
