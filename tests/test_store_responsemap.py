"""The ``ResponseMap`` operation group (memory_core.store.api) behaves the same on
every backend: each test runs on SQLite and on a throwaway PostgreSQL
(tests/pgcluster.py), through the group and through memory_core.capture.response_threads.

Outside CI a machine without PostgreSQL or psycopg skips the PostgreSQL half (and
says why); under ``CI=true`` it fails instead, so CI never skips it silently.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memory_core.capture import response_threads
from memory_core.capture.evidence import dumps_lossless
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.sqlite import SqliteStore
from tests import pgcluster

Run = Callable[[Callable[[Any], Any]], Any]
"""Runs ``fn(tx)`` as one committed job of the backend and returns its value."""


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    why = pgcluster.unavailable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tests cannot run in CI: {why}")
        pytest.skip(why)
    with pgcluster.cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Run]:
    if request.param == "sqlite":
        store = SqliteStore(tmp_path / "data")
        try:
            yield lambda fn: store.write_tx_sync(fn)
        finally:
            store.close()
        return
    cluster_url = request.getfixturevalue("pg_url")  # skips (or fails in CI) first
    from memory_core.store.pg_ops import PgResponseMap

    name = f"t_{abs(hash(request.node.nodeid)):x}"
    with pgcluster.migrated(cluster_url, name) as conn:
        tx = SimpleNamespace(responses=PgResponseMap(conn))  # the groups built so far
        yield pgcluster.in_transaction(conn, tx)


def _blob(items: list[Any]) -> bytes:
    return zlib.compress(dumps_lossless(items).encode(), 1)


def _save(run: Run, response_id: str, parent: str | None, items: list[Any], *,
          tenant: str = "t1", role: str = "coder", thread_id: int | None = 7,
          session: str = "s") -> None:
    run(lambda tx: tx.responses.save_response(
        tenant=tenant, role=role, session=session, response_id=response_id, parent=parent,
        thread_id=thread_id, items=_blob(items), created_at=1000.5))


def test_a_chain_reads_back_oldest_first_within_its_tenant_and_role(run: Run) -> None:
    _save(run, "r1", None, [{"role": "user", "content": "one"}], thread_id=1)
    _save(run, "r2", "r1", [{"role": "assistant", "content": "two"}], thread_id=2)
    _save(run, "r3", "r2", [{"role": "user", "content": "three ü \U0001f600"}], thread_id=3,
          session="s3")
    _save(run, "r3", None, [{"role": "user", "content": "other tenant"}], tenant="t2",
          session="")

    rows = run(lambda tx: tx.responses.response_chain("t1", "coder", "r3", 100))
    assert [r["parent"] for r in rows] == [None, "r1", "r2"]
    assert [r["thread_id"] for r in rows] == [1, 2, 3]
    assert [r["session"] for r in rows] == ["s", "s", "s3"]
    assert all(isinstance(r["items"], bytes) for r in rows)
    got = run(lambda tx: response_threads.conversation(tx, "t1", "coder", "r3"))
    assert got == ([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                    {"role": "user", "content": "three ü \U0001f600"}], 3, "s3")
    # Another tenant's r3 is its own conversation; another role sees nothing.
    assert run(lambda tx: response_threads.conversation(tx, "t2", "coder", "r3")) == (
        [{"role": "user", "content": "other tenant"}], 7, "")
    assert run(lambda tx: tx.responses.response_chain("t1", "writer", "r3", 100)) == []
    assert run(lambda tx: response_threads.conversation(tx, "t1", "coder", "nope")) is None


def test_saving_a_response_again_replaces_its_row(run: Run) -> None:
    _save(run, "r1", None, [{"v": 1}], thread_id=1)
    _save(run, "r1", "r0", [{"v": 2}], thread_id=None)
    rows = run(lambda tx: tx.responses.response_chain("t1", "coder", "r1", 100))
    assert rows == [{"parent": "r0", "items": _blob([{"v": 2}]), "thread_id": None,
                     "session": "s"}]
    # r0 was never stored: the chain is broken, so no conversation.
    assert run(lambda tx: response_threads.conversation(tx, "t1", "coder", "r1")) is None


def test_a_cycle_reads_at_most_max_rows_plus_one(run: Run) -> None:
    _save(run, "a", "b", [1])
    _save(run, "b", "a", [2])
    rows = run(lambda tx: tx.responses.response_chain("t1", "coder", "a", 5))
    assert len(rows) == 6
    assert run(lambda tx: response_threads.conversation(tx, "t1", "coder", "a")) is None


def test_conversation_head_follows_the_newest_response(run: Run) -> None:
    scope = Scope("t1", "coder", "s")
    ticket = CaptureTicket(scope, "req_1")
    ticket.result = CaptureResult(thread_id=42, message_ids=(), new_ids=(), head_id=None,
                                  head_key=None, created_thread=True,
                                  previous_activity_at=None)
    run(lambda tx: response_threads.insert(tx, scope, "r1", None, _blob([{"a": 1}]), ticket,
                                      "conv_1"))
    assert run(lambda tx: tx.responses.conversation_head("t1", "coder", "conv_1")) == "r1"
    run(lambda tx: response_threads.insert(tx, scope, "r2", "r1", None, None, "conv_1"))
    assert run(lambda tx: response_threads.conversation_head(tx, "t1", "coder", "conv_1")) == "r2"
    assert run(lambda tx: tx.responses.conversation_head("t2", "coder", "conv_1")) is None
    assert run(lambda tx: tx.responses.conversation_head("t1", "coder", "conv_2")) is None
    # r2 had no blob (capture policy): only r1's row exists, with the ticket's thread.
    assert run(lambda tx: response_threads.conversation(tx, "t1", "coder", "r1")) == (
        [{"a": 1}], 42, "s")
    assert run(lambda tx: tx.responses.response_chain("t1", "coder", "r2", 10)) == []


def test_an_id_is_owned_by_one_tenant_of_its_key_only(run: Run) -> None:
    """A request may continue a response made under another end user of its API key
    (proxy.handlers.responses): the id is found among the key's tenants, never
    another key's, whose id may begin alike."""
    _save(run, "r1", None, [1], tenant="t_a~u_alice")
    _save(run, "r2", None, [2], tenant="t_a")
    _save(run, "r3", None, [3], tenant="t_ab~u_x")  # another key: "t_ab" begins "t_a"
    _save(run, "r4", None, [4], tenant="t_b~u_alice")
    _save(run, "r5", None, [5], tenant="t_ab")

    def owner(tenant: str, response_id: str, role: str = "coder") -> str | None:
        return run(lambda tx: response_threads.owner(tx, tenant, role, response_id))

    for asking in ("t_a", "t_a~u_alice", "t_a~u_bob"):
        assert owner(asking, "r1") == "t_a~u_alice"
        assert owner(asking, "r2") == "t_a"
        assert [owner(asking, r) for r in ("r3", "r4", "r5", "nope")] == [None] * 4
    assert owner("t_a~u_bob", "r1", role="writer") is None
    assert owner("t_ab", "r3") == "t_ab~u_x"
    # The group itself: the key's tenant and the prefix of its end users' tenants.
    assert run(lambda tx: tx.responses.response_owner("t_a", "t_a~", "coder", "r1")) == \
        "t_a~u_alice"


def test_a_conversation_is_owned_by_one_tenant_of_its_key_only(run: Run) -> None:
    def head(tenant: str, conversation_id: str, response_id: str, at: float) -> None:
        run(lambda tx: tx.responses.save_conversation_head(
            tenant=tenant, role="coder", session="", conversation_id=conversation_id,
            response_id=response_id, thread_id=None, updated_at=at))

    head("t_a~u_alice", "conv_1", "r1", 1.0)
    head("t_ab", "conv_2", "r2", 1.0)  # another key whose tenant begins alike
    head("t_a~u_bob", "conv_3", "r3", 1.0)
    head("t_a", "conv_3", "r4", 2.0)  # the head moved last in the key's own tenant

    def owner(tenant: str, conversation_id: str, role: str = "coder") -> str | None:
        return run(lambda tx: response_threads.conversation_owner(tx, tenant, role,
                                                                  conversation_id))

    for asking in ("t_a", "t_a~u_alice", "t_a~u_carol"):
        assert owner(asking, "conv_1") == "t_a~u_alice"
        assert owner(asking, "conv_2") is None
        assert owner(asking, "conv_3") == "t_a"
    assert owner("t_a", "conv_1", role="writer") is None
    assert owner("t_ab~u_x", "conv_2") == "t_ab"


def test_sqlite_finds_an_owner_by_the_response_id_index(tmp_path: Path) -> None:
    import contextlib
    import sqlite3

    from memory_core.store.sqlite_ops import OWNER_SQL

    store = SqliteStore(tmp_path / "data")
    path = store.path
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        plan = " ".join(str(r[-1]) for r in conn.execute(
            "EXPLAIN QUERY PLAN " + OWNER_SQL, ("r", "x", "t", 2, "t~")))
    assert "response_threads_response" in plan, plan


def test_pg_finds_an_owner_by_the_response_id_index(pg_url: str) -> None:
    import psycopg

    from memory_core.store import pg_migrations
    from memory_core.store.pg_ops import OWNER_SQL, PgResponseMap

    url = pgcluster.fresh_database(pg_url, "t_owner_plan")
    with psycopg.connect(url) as conn:
        pg_migrations.apply_migrations(conn)
        group = PgResponseMap(conn)
        for i in range(300):
            group.save_response(tenant=f"t~u_{i % 30}", role="r", session="",
                                response_id=f"r{i}", parent=None, thread_id=1,
                                items=b"x", created_at=0.0)
        conn.commit()
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN " + OWNER_SQL, {"id": "r299", "r": "r", "t": "t", "n": 2, "p": "t~"}))
        assert "response_threads_response" in plan, plan
        assert group.response_owner("t", "t~", "r", "r299") == "t~u_29"


def test_pg_migrations_apply_once_when_replicas_open_together(pg_url: str) -> None:
    import psycopg

    from memory_core.errors import SchemaTooNewError
    from memory_core.store import pg_migrations

    url = pgcluster.fresh_database(pg_url, "t_migrations")
    versions: list[int] = []

    def open_one() -> None:
        with psycopg.connect(url) as conn:
            versions.append(pg_migrations.apply_migrations(conn))

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert versions == [pg_migrations.SCHEMA_VERSION] * 4
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT number FROM lcm_schema ORDER BY number").fetchall() == [
            (n,) for n in range(1, pg_migrations.SCHEMA_VERSION + 1)]
        conn.execute("INSERT INTO lcm_schema VALUES (999, 'from newer code', 0)")
        conn.commit()
        with pytest.raises(SchemaTooNewError):
            pg_migrations.apply_migrations(conn)


def test_pg_chain_steps_are_key_lookups_before_any_analyze(pg_url: str) -> None:
    """A freshly grown map has no statistics: each step must still be a lookup of
    the parent by its full key, not a scan of the tenant's rows per step."""
    import psycopg

    from memory_core.store import pg_migrations
    from memory_core.store.pg_ops import CHAIN_SQL, PgResponseMap

    url = pgcluster.fresh_database(pg_url, "t_plan")
    with psycopg.connect(url) as conn:
        pg_migrations.apply_migrations(conn)
        group = PgResponseMap(conn)
        for i in range(300):
            group.save_response(tenant="t", role="r", session="", response_id=f"r{i}",
                                parent=f"r{i - 1}" if i else None, thread_id=1,
                                items=b"x" * 200, created_at=0.0)
        conn.commit()
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN " + CHAIN_SQL, {"t": "t", "r": "r", "id": "r299", "max": 1000}))
        assert any("Index Cond" in line and ".parent" in line
                   for line in plan.splitlines()), plan
        assert len(group.response_chain("t", "r", "r299", 1000)) == 300
