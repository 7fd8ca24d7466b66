"""Purge: a session, role or tenant leaves SQLite entirely, with index deletes queued;
everything else stays, foreign keys stay valid; the CLI asks before it deletes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memory_core.items import writer as memory
from memory_core.models import Scope
from memory_core.store.api import Tx
from proxy.cli import main
from tests.conftest import RunningProxy, sql_read, sql_write, store_sql
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    MARK_A,
    MARK_B,
    Populated,
    count,
    fake_item,
    populate,
    steady_proxy_fixture,
)

SCOPED_TABLES = ("threads", "messages", "memory_items", "task_state", "summary_nodes",
                 "assembly_logs", "events")


@pytest.fixture
async def pop(proxy: RunningProxy) -> Populated:
    p = await populate(proxy)
    if proxy.engine.search is not None:
        # Let the proxy's indexer finish first: a vector batch that is still embedding
        # when the purge commits would write its cache rows afterwards (see report).
        assert proxy.engine.search.wait_idle(60)

    def extra(tx: Tx) -> None:
        # task state, an embedding and an extraction retry for the bravo thread
        memory.merge_task_line(tx, Scope(p.tenant_b, "coder", "sess-b"),
                               p.threads["b"], p.messages["b"], "todo", "rotate the cache keys")
        tx.index_feed.save_vectors([("message", p.messages["b"], "test", 1, b"\0\0\0\0", 0.0)])
        tx.extraction.failed(p.messages["b"], 1, "", 0.0)

    proxy.engine.store.write_tx_sync(extra)
    return p


def snapshot(proxy: RunningProxy, where: str, *args: Any) -> dict[str, int]:
    return {t: count(proxy, f"SELECT COUNT(*) FROM {t} WHERE {where}", *args)
            for t in SCOPED_TABLES}


def tables_with_tenant(proxy: RunningProxy) -> list[str]:
    if getattr(proxy.engine.store, "path", None) is None:  # PostgreSQL
        return [r[0] for r in store_sql(
            proxy.engine, "SELECT table_name FROM information_schema.columns WHERE"
            " table_schema = current_schema() AND column_name = 'tenant'")]

    def q(c: sqlite3.Connection) -> list[str]:
        names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [n for n in names
                if any(col[1] == "tenant" for col in c.execute(f"PRAGMA table_info({n})"))]

    return sql_read(proxy.engine, q)


def fk_problems(proxy: RunningProxy) -> list[Any]:
    if getattr(proxy.engine.store, "path", None) is None:
        return []  # PostgreSQL checks every foreign key at each statement
    return sql_read(proxy.engine, lambda c: c.execute("PRAGMA foreign_key_check").fetchall())


async def test_purge_tenant_removes_every_row_and_queues_index_deletes(
        proxy: RunningProxy, pop: Populated) -> None:
    keep_a = snapshot(proxy, "tenant=?", pop.tenant_a)
    msgs = sql_read(proxy.engine, lambda c: {r[0] for r in c.execute(
        "SELECT id FROM messages WHERE tenant=?", (pop.tenant_b,))})
    items = sql_read(proxy.engine, lambda c: {r[0] for r in c.execute(
        "SELECT id FROM memory_items WHERE tenant=?", (pop.tenant_b,))})
    prefs = sql_read(proxy.engine, lambda c: {r[0] for r in c.execute(
        "SELECT id FROM agent_memories WHERE tenant=?", (pop.tenant_b,))})
    assert msgs and items and prefs
    preview = proxy.engine.purge(tenant=pop.tenant_b, dry_run=True)
    assert snapshot(proxy, "tenant=?", pop.tenant_b)["messages"] == len(msgs)  # unchanged
    removed = proxy.engine.purge(tenant=pop.tenant_b)
    assert removed == {**preview}
    assert removed["messages"] == len(msgs) and removed["agent_memories"] == len(prefs)
    assert removed["task_state"] == 1 and removed["embeddings"] >= 1
    assert removed["extraction_queue"] >= 1
    assert all(v == 0 for v in snapshot(proxy, "tenant=?", pop.tenant_b).values())
    assert count(proxy, "SELECT COUNT(*) FROM agent_memories WHERE tenant=?", pop.tenant_b) == 0
    assert not sql_read(proxy.engine, lambda c: c.execute(
        "SELECT 1 FROM embeddings e WHERE (e.kind='message' AND e.ref_id NOT IN (SELECT id FROM"
        " messages)) OR (e.kind='item' AND e.ref_id NOT IN (SELECT id FROM memory_items))"
        " OR (e.kind='agent_memory' AND e.ref_id NOT IN (SELECT id FROM agent_memories))"
        " OR (e.kind='summary' AND e.ref_id NOT IN (SELECT id FROM summary_nodes))").fetchall())
    for table in tables_with_tenant(proxy):  # every table, including future ones
        assert count(proxy, f"SELECT COUNT(*) FROM {table} WHERE tenant=?", pop.tenant_b) == 0
    assert snapshot(proxy, "tenant=?", pop.tenant_a) == keep_a
    outbox = sql_read(proxy.engine, lambda c: {(r[0], r[1]) for r in c.execute(
        "SELECT kind, ref_id FROM index_outbox WHERE op='delete'")})
    assert {("message", m) for m in msgs} <= outbox
    assert {("item", i) for i in items} <= outbox
    assert {("agent_memory", p) for p in prefs} <= outbox
    assert removed["outbox_deletes"] == len(msgs) + len(items) + len(prefs)
    hits = proxy.engine.search_memory("production cache port")
    assert not [h for h in hits if MARK_B in h["text"]]
    assert fk_problems(proxy) == []
    assert proxy.engine.integrity_check() == ["ok"]
    audit = proxy.engine.export(events=True)["events"]
    assert any(e["kind"] == "purge" and e["data"]["filters"] == {"tenant": pop.tenant_b}
               for e in audit)


async def test_purge_session_keeps_other_sessions_and_role_memories(
        proxy: RunningProxy, pop: Populated) -> None:
    keep_w = snapshot(proxy, "tenant=? AND role='writer'", pop.tenant_a)
    summaries = set(pop.summaries)
    removed = proxy.engine.purge(session="sess-a")
    assert removed["threads"] == 2 and removed["summary_nodes"] == 3
    assert count(proxy, "SELECT COUNT(*) FROM messages WHERE session='sess-a'") == 0
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE role='coder' AND tenant=?",
                 pop.tenant_a) == 0
    assert count(proxy, "SELECT COUNT(*) FROM summary_nodes") == 0
    # agent memories are per role, not per session: the coder's preference stays
    assert count(proxy, "SELECT COUNT(*) FROM agent_memories WHERE tenant=? AND role='coder'",
                 pop.tenant_a) == 1
    assert snapshot(proxy, "tenant=? AND role='writer'", pop.tenant_a) == keep_w
    assert count(proxy, "SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_b) == 3
    outbox = sql_read(proxy.engine, lambda c: {r[0] for r in c.execute(
        "SELECT ref_id FROM index_outbox WHERE op='delete' AND kind='summary'")})
    assert summaries <= outbox
    assert fk_problems(proxy) == []


async def test_purge_by_combined_filters_then_by_role(proxy: RunningProxy,
                                                         pop: Populated) -> None:
    scope = Scope(pop.tenant_a, "coder", "sess-z")

    def corrected_elsewhere(c: Tx) -> int:
        # same role, another session: corrects an item of sess-a (cross-session link)
        return memory.store_extracted(c, scope, pop.threads["a"], pop.messages["a"], [
            fake_item(f"{MARK_A} API timeout is 60 s when offline", subject="api timeout",
                      value=60, unit="s", condition="when offline", correction=True)])[0]

    newer = proxy.engine.store.write_tx_sync(corrected_elsewhere)
    proxy.engine.purge(tenant=pop.tenant_a, role="coder", session="sess-a")
    # the sess-z item was stored against thread a, so it went with the thread;
    # what stays must not point at what went
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE id=?", newer) == 0
    assert fk_problems(proxy) == []
    removed = proxy.engine.purge(role="writer")
    assert removed["messages"] == 3 and removed["memory_items"] == 1
    assert count(proxy, "SELECT COUNT(*) FROM messages WHERE role='writer'") == 0
    assert fk_problems(proxy) == []


async def test_purge_cuts_supersession_links_into_the_purged_scope(
        proxy: RunningProxy, pop: Populated) -> None:
    old, new = pop.items["a_old"], pop.items["a_new"]
    sql_write(proxy.engine, lambda c: c.execute(
        "UPDATE memory_items SET session='sess-keep', thread_id=NULL WHERE id=?", (new,)))
    sql_write(proxy.engine, lambda c: c.execute(
        "UPDATE memory_items SET source_message_id=NULL WHERE id=?", (new,)))
    proxy.engine.purge(session="sess-a")
    row = sql_read(proxy.engine, lambda c: c.execute(
        "SELECT supersedes, status FROM memory_items WHERE id=?", (new,)).fetchone())
    assert row is not None and row[0] is None and row[1] == "active"
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE id=?", old) == 0
    assert fk_problems(proxy) == []


def test_purge_refuses_missing_or_empty_filters(proxy: RunningProxy) -> None:
    with pytest.raises(ValueError):
        proxy.engine.purge()
    with pytest.raises(ValueError):
        proxy.engine.purge(session="  ")


async def test_cli_purge_asks_and_honours_the_answer(proxy: RunningProxy,
                                                     pop: Populated) -> None:
    data_dir = proxy.settings.storage.data_dir
    await proxy.settle()  # the CLI opens the store with its own connections
    runner = CliRunner()
    args = ["memory", "purge", "--data-dir", data_dir, "--tenant", pop.tenant_b]
    dry = runner.invoke(main, [*args, "--dry-run"])
    assert dry.exit_code == 0 and "would remove" in dry.output and "messages:" in dry.output
    no = runner.invoke(main, args, input="n\n")
    assert no.exit_code == 1 and "Purge?" in no.output
    def n(sql: str, *a: Any) -> int:
        return int(store_sql(proxy.engine, sql, a)[0][0])

    assert n("SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_b) == 3
    yes = runner.invoke(main, args, input="y\n")
    assert yes.exit_code == 0, yes.output
    assert "purged 3 messages, 1 threads, 1 memory items" in yes.output
    assert n("SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_b) == 0
    again = runner.invoke(main, [*args, "--yes"])
    assert again.exit_code == 0 and "nothing stored" in again.output
    forced = runner.invoke(main, ["memory", "purge", "--data-dir", data_dir, "--session",
                                  "sess-w", "--yes", "--json"])
    assert forced.exit_code == 0 and '"messages": 3' in forced.output
    assert n("SELECT COUNT(*) FROM messages WHERE session='sess-w'") == 0
    assert n("SELECT COUNT(*) FROM messages WHERE session='sess-a'") > 0
    usage = runner.invoke(main, ["memory", "purge", "--data-dir", data_dir])
    assert usage.exit_code == 2 and "--session, --role or --tenant" in usage.output


async def test_purge_and_retract_leave_both_derived_indexes(
        proxy: RunningProxy, pop: Populated, tmp_path: Path) -> None:
    from tests.test_search_support import open_service

    # The proxy's own indexer when search is on (it owns the checkpoints), else one here.
    own = proxy.engine.search is None
    service = open_service(tmp_path / "idx", proxy.engine) if own else proxy.engine.search

    def settle() -> None:
        if own:
            service.catch_up()
        else:
            assert service.wait_idle(60)

    try:
        settle()

        def found(tenant: str, query: str, mode: str, kinds: tuple[str, ...]) -> set[Any]:
            return {(h.kind, h.ref_id) for h in service.search(
                tenant, "coder", query, k=50, mode=mode, kinds=kinds)}

        bravo = {("message", pop.messages["b"]), ("item", pop.items["b_port"])}
        for mode in ("bm25", "vector"):
            assert bravo <= found(pop.tenant_b, "production cache port", mode,
                                  ("message", "item"))
        port = ("item", pop.items["a_port"])
        assert port in found(pop.tenant_a, "staging database port", "bm25", ("item",))
        proxy.engine.retract_in_scope(pop.items["a_port"], "test", tenant=pop.tenant_a)
        proxy.engine.purge(tenant=pop.tenant_b)
        settle()
        for mode in ("bm25", "vector"):
            assert found(pop.tenant_b, "production cache port", mode,
                         ("message", "item", "agent_memory")) == set()
            assert port not in found(pop.tenant_a, "staging database port", mode, ("item",))
        assert found(pop.tenant_a, "staging database port", "bm25", ("message",))  # A stays
    finally:
        if own:
            service.close()


def test_purge_reindexes_a_surviving_child_without_its_parent(tmp_path: Path) -> None:
    """A turn that survives its purged parent (a fork across sessions; linked here
    by hand, since the fork is made elsewhere) was indexed with the parent's words
    (context field, contextual vector): its cached vector is dropped and it is queued
    for re-indexing, and its parent link is cut."""
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path)
    try:
        for session, text in (("s1", "Forked secret: the vault code is 8841."),
                              ("s2", "What was the next step?")):
            _t, fut = engine.capture_request(Scope(tenant="t", role="default", session=session),
                                             "r", [{"role": "user", "content": text}], {})
            fut.result(10)
        engine.flush(10)

        def setup(conn: Any) -> int:
            parent = conn.execute("SELECT id FROM messages WHERE session='s1'").fetchone()[0]
            child = conn.execute("SELECT id FROM messages WHERE session='s2'").fetchone()[0]
            conn.execute("UPDATE messages SET parent_id=? WHERE id=?", (parent, child))
            conn.execute("INSERT INTO embeddings (kind, ref_id, model, dim, vector, created_at)"
                         " VALUES ('message', ?, 'm', 1, ?, 0) ON CONFLICT (kind, ref_id)"
                         " DO UPDATE SET model = excluded.model, dim = excluded.dim,"
                         " vector = excluded.vector, created_at = excluded.created_at",
                         (child, b"\x00\x00\x00\x00"))
            return int(child)

        child = sql_write(engine, setup)
        head = sql_read(engine, lambda c: c.execute(
            "SELECT COALESCE(MAX(id), 0) FROM index_outbox").fetchone()[0])
        removed = engine.purge(tenant="t", session="s1")
        assert removed["reindexed_children"] == 1
        row = sql_read(engine, lambda c: c.execute(
            "SELECT parent_id FROM messages WHERE id=?", (child,)).fetchone())
        assert row is not None and row[0] is None
        assert sql_read(engine, lambda c: c.execute(
            "SELECT COUNT(*) FROM embeddings WHERE kind='message' AND ref_id=?",
            (child,)).fetchone()[0]) == 0
        assert sql_read(engine, lambda c: [r[0] for r in c.execute(
            "SELECT op FROM index_outbox WHERE id > ? AND kind='message' AND ref_id=?",
            (head, child))]) == ["upsert"]
    finally:
        engine.close()


def test_a_message_sent_after_a_purge_is_kept(tmp_path: Path) -> None:
    """A purge queued behind background writes, then a request of the purged
    session: captures run ahead of background writes, and so does the purge, so the
    new message is stored after the purge, not deleted by it. A write of the session
    queued before the purge (a Responses API response's thread row) still runs
    before it and is purged, not written back after it."""
    import threading

    from memory_core.engine import Engine

    engine = Engine(tmp_path)
    scope = Scope(tenant="t", role="default", session="s1")
    try:
        ticket, first = engine.capture_request(scope, "r1", [{"role": "user", "content": "old"}],
                                               {})
        first.result(10)
        hold, running, queued = threading.Event(), threading.Event(), threading.Event()

        def busy(_tx: Any) -> None:
            running.set()
            assert hold.wait(30)

        engine.store.write_tx(busy)
        assert running.wait(10)
        engine.remember_response(scope, "resp_1", None, [
            {"type": "message", "role": "user", "content": "old"}], ticket)
        write_tx = engine.store.write_tx

        def seen(*args: Any, **kwargs: Any) -> Any:  # the real write, then the signal
            fut = write_tx(*args, **kwargs)
            queued.set()
            return fut

        engine.store.write_tx = seen  # type: ignore[method-assign]
        purged: list[dict[str, int]] = []
        worker = threading.Thread(target=lambda: purged.append(
            engine.purge(tenant="t", session="s1")))
        worker.start()
        assert queued.wait(10)  # the purge is queued behind the busy writer
        engine.store.write_tx = write_tx  # type: ignore[method-assign]
        _t, fut = engine.capture_request(scope, "r2", [{"role": "user", "content": "new"}], {})
        hold.set()
        worker.join(30)
        fut.result(10)
        engine.flush(10)
        assert purged and purged[0]["messages"] == 1
        texts = sql_read(engine, lambda c: [r[0] for r in c.execute(
            "SELECT text FROM messages WHERE session='s1'")])
        assert texts == ["new"]
        assert purged[0]["response_threads"] == 1
        assert engine.response_conversation(scope, "resp_1") is None
    finally:
        engine.close()
