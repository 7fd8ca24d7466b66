"""Capture (memory_core.capture.evidence through the ``CaptureWrites`` group) behaves the
same on every backend: each test runs on SQLite and on a throwaway PostgreSQL
(tests/pgcluster.py), with the same calls and the same expected ids, threads and
events. The PostgreSQL half skips outside CI without PostgreSQL or psycopg, and
fails under ``CI=true`` (see tests/test_store_responsemap.py).

One writer per scope (as the engine's writer thread runs capture); replicas
capturing one scope at once are issue 27's next step, not tested here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from memory_core.capture import evidence
from memory_core.models import CaptureTicket, Scope
from memory_core.store.sqlite import SqliteStore
from tests import pgcluster
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

Backend = tuple[Callable[[Callable[[Any], Any]], Any], Callable[[str], list[tuple[Any, ...]]]]
"""``(run, rows)``: ``run(fn)`` runs ``fn(tx)`` as one committed job; ``rows(query)``
reads a query's rows back (a check of what was stored, outside the interface)."""

SCOPE = Scope("t1", "coder", "s1")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        store = SqliteStore(tmp_path / "data")
        try:
            yield (lambda fn: store.write_tx_sync(fn),
                   lambda q: [tuple(r) for r in store.reader().execute(q)])
        finally:
            store.close()
        return
    cluster_url = request.getfixturevalue("pg_url")  # skips (or fails in CI) first
    from memory_core.store.pg_capture import PgCaptureWrites

    with pgcluster.migrated(cluster_url, f"c_{abs(hash(request.node.nodeid)):x}") as conn:
        tx = SimpleNamespace(capture=PgCaptureWrites(conn))
        run = pgcluster.in_transaction(conn, tx)
        yield run, lambda q: run(lambda _tx: [tuple(r) for r in conn.execute(q)])


def _request(run: Any, request_id: str, messages: list[Any], now: float) -> Any:
    ticket = CaptureTicket(SCOPE, request_id)
    result = run(lambda tx: evidence.capture_request(tx, ticket, messages, {"model": "m"}, now))
    return ticket, result


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def test_a_conversation_is_stored_once_and_extends_its_thread(backend: Backend) -> None:
    run, rows = backend
    history = [{"role": "system", "content": "be brief"}, _user("port of staging?")]
    ticket, first = _request(run, "r1", history, 100.0)
    assert (first.thread_id, first.message_ids, first.new_ids) == (1, (1, 2), (1, 2))
    assert first.created_thread and first.previous_activity_at is None
    assert run(lambda tx: evidence.capture_response(tx, ticket, [_reply("5432")], {}, 101.0)
               ) == [3]

    # The client resends the history with the answer and a new question.
    history += [_reply("5432"), _user("and production?")]
    _ticket, second = _request(run, "r2", history, 102.0)
    assert (second.thread_id, second.message_ids, second.new_ids) == (1, (1, 2, 3, 4), (4,))
    assert not second.created_thread and second.previous_activity_at == 101.0
    # A replay of the same list stores nothing and moves no head.
    _ticket, again = _request(run, "r3", history, 103.0)
    assert (again.message_ids, again.new_ids, again.created_thread) == ((1, 2, 3, 4), (), False)

    assert rows("SELECT id, thread_id, parent_id, depth, msg_role, kind, text, tokens,"
                " hidden FROM messages ORDER BY id") == [
        (1, 1, None, 0, "system", "request", "be brief", 2, 0),
        (2, 1, 1, 1, "user", "request", "port of staging?", 4, 0),
        (3, 1, 2, 2, "assistant", "response", "5432", 2, 0),
        (4, 1, 3, 3, "user", "request", "and production?", 3, 0)]
    assert rows("SELECT id, root_message_id, head_message_id, updated_at, last_user_at"
                " FROM threads") == [(1, 1, 4, 103.0, 102.0)]
    assert rows("SELECT ref_id FROM index_outbox WHERE kind = 'message' ORDER BY id") == [
        (1,), (2,), (3,), (4,)]
    events = rows("SELECT request_id, kind, thread_id, data FROM events ORDER BY id")
    assert [(e[0], e[1], e[2]) for e in events] == [
        ("r1", "request", 1), ("r1", "response", 1), ("r2", "request", 1),
        ("r3", "request", 1)]
    assert orjson.loads(events[2][3])["new_ids"] == [4]


def test_a_regenerated_answer_forks_a_branch_with_the_same_root(backend: Backend) -> None:
    run, rows = backend
    history = [_user("name the service")]
    ticket, _first = _request(run, "r1", history, 10.0)
    run(lambda tx: evidence.capture_response(tx, ticket, [_reply("Falcon")], {}, 11.0))
    _ticket, _next = _request(run, "r2", [*history, _reply("Falcon"), _user("why?")], 12.0)

    # "Regenerate": the first question again, whose node is no thread's head now.
    ticket, retry = _request(run, "r3", history, 13.0)
    assert (retry.thread_id, retry.new_ids, retry.created_thread) == (1, (), False)
    assert retry.previous_activity_at == 12.0
    view = [{"role": "assistant", "content": None, "tool_calls": []}, _reply("Kestrel")]
    ids = run(lambda tx: evidence.capture_response(tx, ticket, [_reply("Kestrel")], {}, 14.0,
                                                  None, view))
    assert ids == [4]
    assert rows("SELECT id, parent_thread_id, fork_message_id, root_message_id,"
                " head_message_id, updated_at FROM threads ORDER BY id") == [
        (1, None, None, 1, 3, 13.0), (2, 1, 1, 1, 4, 14.0)]
    assert rows("SELECT id, thread_id, parent_id, depth FROM messages WHERE id = 4") == [
        (4, 2, 1, 1)]
    assert rows("SELECT message_id, tenant, role, messages, hidden_ids FROM splices") == [
        (4, "t1", "coder", orjson.dumps(view).decode(), "[]")]
    # The same answer again maps to its node: nothing new, no second fork.
    assert run(lambda tx: evidence.capture_response(tx, ticket, [_reply("Kestrel")], {}, 15.0,
                                                   None, view)) == [4]
    assert rows("SELECT COUNT(*) FROM threads") == [(2,)]
    data = [orjson.loads(r[0]) for r in rows(
        "SELECT data FROM events WHERE kind = 'response' ORDER BY id")]
    assert [d.get("forked_thread_id") for d in data] == [None, 2, None]


def test_events_without_a_request_and_orphan_answers(backend: Backend) -> None:
    run, rows = backend
    first = run(lambda tx: evidence.record_event(tx, None, "unparsed", {
        "request_id": "x1", "tenant": "t9", "body": "sk-ant-api03-" + "a" * 90}, now=5.0))
    orphan = CaptureTicket(SCOPE, "r0")  # its request capture failed: no result
    assert run(lambda tx: evidence.capture_response(tx, orphan, [_reply("hi")], {}, 6.0)) == []
    assert first == 1
    stored = rows("SELECT id, request_id, tenant, role, thread_id, kind, created_at, data"
                  " FROM events ORDER BY id")
    assert [r[:7] for r in stored] == [(1, "x1", "t9", None, None, "unparsed", 5.0),
                                       (2, "r0", "t1", "coder", None, "response", 6.0)]
    assert "sk-ant-api03" not in stored[0][7]  # redacted before it is stored
    assert orjson.loads(stored[1][7])["orphan_choices"] == [_reply("hi")]
    assert rows("SELECT COUNT(*) FROM messages") == [(0,)]
