"""The store's writer: WAL checkpoints on their own thread, never inside a commit;
a write's follow-up after its commit."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memory_core.store.sqlite import CHECKPOINT_COMMITS, SqliteStore


def test_checkpoints_run_after_the_hook_on_their_own_thread(tmp_path: Path) -> None:
    """Every CHECKPOINT_COMMITS commits the checkpointer wakes, calls
    ``before_checkpoint`` (the engine's give-way) and copies the WAL into the
    database file; until then the writer's commits leave the file as it was."""
    store = SqliteStore(tmp_path)
    called: list[str] = []
    woke, gate = threading.Event(), threading.Event()

    def hook() -> None:
        called.append(threading.current_thread().name)
        woke.set()
        gate.wait(10)

    store.before_checkpoint = hook
    try:
        store.write_sync(lambda c: c.execute("CREATE TABLE blobs (b BLOB)"))
        db = tmp_path / "lcm.sqlite3"
        size = os.path.getsize(db)
        for _ in range(CHECKPOINT_COMMITS):
            store.write_sync(lambda c: c.execute("INSERT INTO blobs VALUES (?)",
                                                 (os.urandom(160 * 1024),)))
        assert woke.wait(10)
        assert called == ["lcm-sqlite-checkpoint"]
        time.sleep(0.2)
        # 5 MB (1,280 pages) committed, under the writer's own 4,000-page backstop
        # but past SQLite's default 1,000: none checkpointed yet
        assert os.path.getsize(db) == size
        gate.set()
        deadline = time.monotonic() + 10
        while os.path.getsize(db) < size + CHECKPOINT_COMMITS * 160 * 1024:
            assert time.monotonic() < deadline, "the WAL was never checkpointed"
            time.sleep(0.05)
        assert store.read(lambda c: c.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]) \
            == CHECKPOINT_COMMITS
    finally:
        gate.set()
        store.close()


def test_close_stops_the_checkpointer_before_and_after_checkpoints(tmp_path: Path) -> None:
    """close() returns promptly and stops the checkpointer thread, whether it never
    checkpointed or is waiting for the next round; the data is all there after."""
    idle = SqliteStore(tmp_path / "idle")
    started = time.monotonic()
    idle.close()
    assert not idle._checkpointer.is_alive() and time.monotonic() - started < 5

    store = SqliteStore(tmp_path / "busy")
    store.write_sync(lambda c: c.execute("CREATE TABLE t (x)"))
    for i in range(CHECKPOINT_COMMITS + 3):
        store.write_sync(lambda c, i=i: c.execute("INSERT INTO t VALUES (?)", (i,)))
    started = time.monotonic()
    store.close()
    assert not store._checkpointer.is_alive() and time.monotonic() - started < 5
    reopened = SqliteStore(tmp_path / "busy")
    try:
        assert reopened.read(lambda c: c.execute("SELECT COUNT(*) FROM t").fetchone()[0]) \
            == CHECKPOINT_COMMITS + 3
    finally:
        reopened.close()


def test_a_writes_follow_up_runs_after_its_commit_before_its_future_resolves(
        tmp_path: Path) -> None:
    """``write(..., then=)``: called with the job's value once the batch has
    committed (another connection sees the row) and before the future resolves, so
    what it queues comes before anything its waiter queues; never for a failed job."""
    import sqlite3

    store = SqliteStore(tmp_path)
    seen: list[object] = []
    futures: list[Any] = []

    def then(value: object) -> None:
        other = sqlite3.connect(tmp_path / "lcm.sqlite3")
        try:
            rows = other.execute("SELECT COUNT(*) FROM t").fetchone()[0]
        finally:
            other.close()
        seen.append((value, rows, futures[0].done()))
        store.write(lambda c: c.execute("INSERT INTO t VALUES ('follow-up')"))

    try:
        store.write_sync(lambda c: c.execute("CREATE TABLE t (x)"))
        hold = threading.Event()  # the writer waits until the future is recorded
        store.write(lambda c: hold.wait(10))
        futures.append(store.write(
            lambda c: c.execute("INSERT INTO t VALUES ('job')").rowcount, then=then))
        hold.set()
        assert futures[0].result(10) == 1
        assert seen == [(1, 1, False)]
        store.write_sync(lambda c: c.execute("INSERT INTO t VALUES ('waiter')"))
        assert store.read(lambda c: [r[0] for r in c.execute("SELECT x FROM t")]) == [
            "job", "follow-up", "waiter"]
        failed = store.write(lambda c: 1 / 0, then=lambda v: seen.append("failed"))
        with pytest.raises(ZeroDivisionError):
            failed.result(10)
        store.flush()
        assert seen == [(1, 1, False)]

        def broken(value: object) -> None:
            raise RuntimeError("follow-up failed")

        # A follow-up that raises is logged: its job's future and the writer go on.
        hold.clear()
        store.write(lambda c: hold.wait(10))
        first = store.write(lambda c: c.execute("INSERT INTO t VALUES ('a')").rowcount,
                            then=broken)
        second = store.write(lambda c: c.execute("INSERT INTO t VALUES ('b')").rowcount,
                             then=lambda v: seen.append("second"))
        hold.set()
        assert first.result(10) == 1 and second.result(10) == 1
        assert seen[-1] == "second"
        assert store.write_sync(lambda c: c.execute("SELECT COUNT(*) FROM t").fetchone()[0]) == 5
    finally:
        store.close()


def test_a_write_job_and_its_follow_up_log_with_the_queuing_requests_id(
        tmp_path: Path) -> None:
    """A job runs on the writer thread in a copy of its caller's context: its log
    lines (and those of a job its follow-up queues) carry the request id of the
    request that queued it, not "-" (a fail-open line must name its request)."""
    import logging

    from proxy.log import JsonFormatter, request_id_var

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep()
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("lcm.test.writer")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    store = SqliteStore(tmp_path)
    done = threading.Event()
    try:
        def later(_c: Any) -> None:
            logger.warning("follow-up job")
            done.set()

        def job(_c: Any) -> None:
            logger.warning("first job")

        token = request_id_var.set("req_abc")
        try:
            store.write(job, then=lambda _v: store.write(later)).result(10)
        finally:
            request_id_var.reset(token)
        store.write_sync(lambda _c: logger.warning("no request"))
        assert done.wait(10)
    finally:
        logger.removeHandler(handler)
        store.close()
    import orjson
    got = {orjson.loads(line)["msg"]: orjson.loads(line)["request_id"] for line in lines}
    assert got == {"first job": "req_abc", "follow-up job": "req_abc", "no request": "-"}


def _job(name: str) -> Any:
    """A queue entry's job: (fn, args, future, then, context), named by its fn."""
    import contextvars
    from concurrent.futures import Future

    def fn(_tx: Any) -> str:
        return name

    return (fn, (), Future(), None, contextvars.copy_context())


def _names(entries: list[Any]) -> list[str]:
    return [entry[2][0](None) for entry in entries]


def test_the_stop_stays_queued_behind_jobs_a_cut_batch_puts_back() -> None:
    """close() queues the stop after the jobs before it; when the batch holding
    them is cut by an urgent job, they run before the writer stops."""
    from memory_core.store.batch import WriteQueue

    q = WriteQueue()
    q.put(_job("n1"))
    q.put(_job("n2"))
    q.stop()
    batch, stop = q.take(256)
    assert _names(batch) == ["n1", "n2"] and not stop
    q.put(_job("late, urgent"), urgent=True)  # queued past close()'s check
    assert q.cut(1, batch[1])  # n1 ran: the batch ends before n2
    q.put_back(batch[1:])
    assert [(_names(b), s) for b, s in (q.take(256), q.take(256), q.take(256))] == [
        (["late, urgent"], False), (["n2"], False), ([], True)]


def test_the_background_turn_never_runs_a_job_ahead_of_an_older_urgent_one() -> None:
    """After an urgent batch the oldest ordinary job runs alone only when it was
    queued before every waiting urgent job: one queued after them waits for them."""
    from memory_core.store.batch import WriteQueue

    q = WriteQueue()
    q.put(_job("u0"), urgent=True)
    assert _names(q.take(256)[0]) == ["u0"]  # an urgent batch: the background is owed one
    q.put(_job("u1"), urgent=True, key="k")
    q.put(_job("after u1"))
    assert _names(q.take(256)[0]) == ["u1"]
    assert _names(q.take(256)[0]) == ["after u1"]
    # Queued before the urgent ones: it gets its turn between two urgent batches.
    q.put(_job("older"))
    q.put(_job("u2"), urgent=True)
    q.put(_job("u3"), urgent=True)
    assert _names(q.take(1)[0]) == ["u2"]
    assert _names(q.take(256)[0]) == ["older"]
    assert _names(q.take(256)[0]) == ["u3"]


def test_an_urgent_job_keyed_every_key_keeps_its_place_after_everything_before_it() -> None:
    """A purge's key: every job queued before it runs first, whatever its key,
    including those of a batch it cuts short; jobs queued after it wait for it."""
    from memory_core.store.batch import EVERY_KEY, WriteQueue

    q = WriteQueue()
    for name, key in (("a", None), ("b", "p"), ("c", None)):
        q.put(_job(name), key=key)
    batch, _ = q.take(256)
    q.put(_job("d"), key="q")
    q.put(_job("purge"), urgent=True, key=EVERY_KEY)
    q.put(_job("after"))
    assert q.cut(1, batch[1])
    q.put_back(batch[1:])
    assert _names(q.take(256)[0]) == ["b", "c", "d", "purge"]
    assert _names(q.take(256)[0]) == ["after"]


def test_a_batch_that_fails_before_its_first_job_fails_every_future() -> None:
    """BEGIN (or the connection) failed: the jobs that never started get the
    error too, instead of waiting forever; a cancelled one stays cancelled."""
    from memory_core.errors import StoreError
    from memory_core.store.batch import fail_batch

    jobs = [_job("started"), _job("not started"), _job("cancelled")]
    jobs[0][2].set_running_or_notify_cancel()
    jobs[2][2].cancel()
    fail_batch(jobs, OSError("disk I/O error"))
    for job in jobs[:2]:
        assert isinstance(job[2].exception(0), StoreError)
    assert jobs[2][2].cancelled()


def _take_in_thread(q: Any) -> tuple[threading.Thread, list[list[str]]]:
    out: list[list[str]] = []
    t = threading.Thread(target=lambda: out.append(_names(q.take(256)[0])), daemon=True)
    t.start()
    return t, out


def test_a_job_that_gives_way_waits_while_a_request_is_in_flight() -> None:
    """An extraction queued after a commit (``gives_way``) does not start while
    ``busy()`` says a request is in flight: urgent jobs run meanwhile; it starts
    once woken with the requests gone, at once when an ordinary job (a flush) waits
    behind it or its key's urgent job takes it ahead, and after its budget anyway."""
    from memory_core.store.batch import WriteQueue

    busy = [True]
    q = WriteQueue()
    q.put(_job("not held: no hook yet"), gives_way=True)
    assert _names(q.take(256)[0]) == ["not held: no hook yet"]
    q.hold_background(lambda: busy[0], 60.0)
    q.put(_job("extract"), gives_way=True)
    q.put(_job("capture"), urgent=True)
    assert _names(q.take(256)[0]) == ["capture"]
    t, out = _take_in_thread(q)
    t.join(0.2)
    assert t.is_alive() and not out  # held while the request is in flight
    busy[0] = False
    q.wake()
    t.join(5)
    assert out == [["extract"]]

    busy[0] = True
    q.put(_job("held"), gives_way=True)
    q.put(_job("flush"))  # somebody waits for everything queued before: no hold
    assert _names(q.take(256)[0]) == ["held", "flush"]
    q.put(_job("persona's"), gives_way=True, key="p")
    q.put(_job("its next capture"), urgent=True, key="p")
    assert _names(q.take(256)[0]) == ["persona's", "its next capture"]

    q.hold_background(lambda: True, 0.05)  # a request that never ends: the budget
    q.put(_job("late"), gives_way=True)
    t, out = _take_in_thread(q)
    t.join(5)
    assert out == [["late"]]


def test_the_background_turn_skips_a_job_that_gives_way() -> None:
    """Between urgent batches the oldest ordinary job gets its turn, unless it is
    one that gives way to the requests in flight (their captures go first)."""
    from memory_core.store.batch import WriteQueue

    q = WriteQueue()
    q.hold_background(lambda: True, 60.0)
    q.put(_job("u0"), urgent=True)
    assert _names(q.take(256)[0]) == ["u0"]  # the background is owed a turn
    q.put(_job("extract"), gives_way=True)
    q.put(_job("u1"), urgent=True)
    assert _names(q.take(256)[0]) == ["u1"]
    q.put(_job("after"))
    assert _names(q.take(256)[0]) == ["extract", "after"]


def _then_job(name: str) -> Any:
    """A queue entry's job that has a ``then`` (its follow-ups may take a key)."""
    fn, args, fut, _then, ctx = _job(name)
    return (fn, args, fut, lambda value: None, ctx)


def test_a_follow_up_keeps_its_parents_place_ahead_of_its_keys_later_capture() -> None:
    """What a job's ``then`` queues (``following``) runs before every job queued
    after the job: in the urgent lane when an urgent job of its key waits (the
    persona's next capture, queued while the answer's capture ran), in the ordinary
    lane before later ordinary jobs, after the jobs queued before the job. It still
    gives way when no urgent job of its key waits, and a later one takes it ahead."""
    from memory_core.store.batch import EVERY_KEY, WriteQueue

    q = WriteQueue()
    q.hold_background(lambda: True, 60.0)
    q.put(_job("older"))  # ordinary, queued before the answer's capture
    q.put(_job("answer"), urgent=True)
    (answer,), _ = q.take(256)
    q.put(_job("next capture"), urgent=True, key="p")  # the client's next turn
    q.put(_job("later"))
    with q.following(answer):  # the answer's then, after its commit
        q.put(_job("extract held"), key="p", gives_way=True)
        q.put(_job("extract answer"), key="p", gives_way=True)
        q.put(_job("other persona's"), key="o", gives_way=True)
    # the background turn (after the urgent batch): the oldest ordinary job
    assert _names(q.take(256)[0]) == ["older"]
    assert _names(q.take(256)[0]) == ["extract held", "extract answer", "next capture"]
    assert _names(q.take(256)[0]) == ["other persona's", "later"]

    # no urgent job of its key waits: ordinary lane, held while requests are in
    # flight, but still ahead of the ordinary jobs queued after its parent
    q.put(_job("answer 2"), urgent=True)
    (answer,), _ = q.take(256)
    q.put(_job("flush"))
    with q.following(answer):
        q.put(_job("extract 2"), key="p", gives_way=True)
        with q.following(answer):  # a follow-up's follow-up: after it, same place
            q.put(_job("extract 2b"), key="p")
    assert _names(q.take(256)[0]) == ["extract 2", "extract 2b", "flush"]
    q.put(_job("answer 3"), urgent=True)
    (answer,), _ = q.take(256)
    with q.following(answer):
        q.put(_job("extract 3"), key="p", gives_way=True)
    q.put(_job("capture 3"), urgent=True, key="p")  # takes it ahead (its key)
    q.put(_job("purge"), urgent=True, key=EVERY_KEY)
    assert _names(q.take(256)[0]) == ["extract 3", "capture 3", "purge"]
    # outside ``following`` (another thread, or after it) a job takes a new place
    q.put(_job("answer 4"), urgent=True)
    (answer,), _ = q.take(256)
    q.put(_job("capture 4"), urgent=True, key="p")
    with q.following(answer):
        q.put(_job("extract 4"), key="p")
    q.put(_job("extract 5"), key="p")
    assert _names(q.take(256)[0]) == ["extract 4", "capture 4"]
    assert _names(q.take(256)[0]) == ["extract 5"]


def test_a_batch_ends_after_a_job_whose_follow_ups_take_the_next_jobs_key() -> None:
    """A job with a ``then`` whose follow-ups take key ``p`` (``then_key``, else its
    own key) ends its batch before a job keyed ``p`` or :data:`EVERY_KEY`, so that
    those follow-ups run first; jobs of other keys batch with it."""
    from memory_core.store.batch import EVERY_KEY, WriteQueue

    q = WriteQueue()
    q.put(_then_job("answer"), urgent=True, then_key="p")
    q.put(_job("capture o"), urgent=True, key="o")
    q.put(_job("capture p"), urgent=True, key="p")
    batch, _ = q.take(256)
    assert _names(batch) == ["answer", "capture o"]
    with q.following(batch[0]):
        q.put(_job("extract answer"), key="p", gives_way=True)
    assert _names(q.take(256)[0]) == ["extract answer", "capture p"]
    q.put(_then_job("request p"), urgent=True, key="p")  # its own key
    q.put(_job("answer, no then"), urgent=True)
    q.put(_job("purge"), urgent=True, key=EVERY_KEY)
    assert _names(q.take(256)[0]) == ["request p", "answer, no then"]
    assert _names(q.take(256)[0]) == ["purge"]
    q.put(_then_job("no key"), urgent=True)  # follow-ups with no key: no end
    q.put(_job("capture p2"), urgent=True, key="p")
    assert _names(q.take(256)[0]) == ["no key", "capture p2"]


def test_a_follow_up_queued_by_then_runs_before_a_job_queued_while_its_parent_ran(
        tmp_path: Path) -> None:
    """The store: a job queued (urgent, key ``p``) while another job runs waits for
    what that job's ``then`` queues with key ``p`` after its commit."""
    store = SqliteStore(tmp_path)
    order: list[str] = []
    try:
        store.write_sync(lambda c: None)
        running, release = threading.Event(), threading.Event()

        def parent(_c: Any) -> str:
            running.set()
            release.wait(10)
            order.append("parent")
            return "parent"

        def then(_value: str) -> None:
            store.write(lambda c: order.append("follow-up"), order_key="p",
                        gives_way=True)

        store.write(parent, then=then, urgent=True)
        assert running.wait(10)
        late = store.write(lambda c: order.append("next capture"), urgent=True,
                           order_key="p")
        release.set()
        late.result(10)
        store.flush()
        assert order == ["parent", "follow-up", "next capture"]
    finally:
        store.close()
