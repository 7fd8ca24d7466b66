"""The storage contract (memory_core.store.api) on both backends: every operation
group through ``Store.read_tx``/``Store.write_tx`` of a real ``SqliteStore`` (in
tmp_path) and a real ``PgStore`` (a throwaway PostgreSQL, tests/pgcluster.py).

Two kinds of test: ``test_backends_agree`` runs one scenario that calls every read
operation on each backend and compares the two results value by value; the others
run on each backend (parametrised) with the expected values written out (capture
idempotence, the write-job contract, purge). Every row is seeded through the
interface's write operations.

The PostgreSQL half skips outside CI when no server binaries or psycopg are found,
and fails under ``CI=true`` (tests/test_store_responsemap.py's ``pg_url``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.capture import evidence as capture
from memory_core.errors import StoreError
from memory_core.models import CaptureTicket, Scope
from memory_core.store.api import ForwardedRow, Store
from memory_core.store.sqlite import SqliteStore
from tests import pgcluster
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

Raw = Callable[[str, tuple[Any, ...]], None]
"""Runs one INSERT/UPDATE (``?`` placeholders) on the backend outside the interface."""

S1 = Scope("t1", "coder", "s1")
S2 = Scope("t1", "coder", "s2")
OTHER = Scope("t2", "coder", "s1")


def _sqlite(tmp_path: Path) -> tuple[Store, Raw, Callable[[], None]]:
    store = SqliteStore(tmp_path / "data")

    def raw(sql: str, args: tuple[Any, ...]) -> None:
        with sqlite3.connect(store.path) as conn:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(sql, args)

    return store, raw, store.close


def _postgres(cluster_url: str, name: str) -> tuple[Store, Raw, Callable[[], None]]:
    import psycopg

    from memory_core.store.pg import PgStore

    url = pgcluster.fresh_database(cluster_url, name)
    store = PgStore(url, max_size=4)

    def raw(sql: str, args: tuple[Any, ...]) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.replace("?", "%s"), args)

    return store, raw, store.close


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Raw]]:
    if request.param == "sqlite":
        store, raw, close = _sqlite(tmp_path)
    else:
        cluster_url = request.getfixturevalue("pg_url")  # skips (or fails in CI) first
        store, raw, close = _postgres(cluster_url, f"k_{abs(hash(request.node.nodeid)):x}")
    try:
        yield store, raw
    finally:
        close()


def _w(store: Store, fn: Callable[..., Any], *args: Any) -> Any:
    return store.write_tx(fn, *args).result(30)


def _capture(store: Store, scope: Scope, request_id: str, messages: list[Any], now: float,
             reply: str | None = None) -> Any:
    ticket = CaptureTicket(scope, request_id)
    result = _w(store, lambda tx: capture.capture_request(tx, ticket, messages,
                                                          {"model": "m"}, now))
    if reply is not None:
        _w(store, lambda tx: capture.capture_response(
            tx, ticket, [{"role": "assistant", "content": reply}], {}, now + 1))
    return result


def _user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def _seed(store: Store, raw: Raw) -> dict[str, Any]:
    """Two sessions and another tenant, with items, tasks, memories and logs."""
    hist = [{"role": "system", "content": "be brief"}, _user("Port of STAGING?")]
    first = _capture(store, S1, "r1", hist, 100.0, reply="5432")
    hist += [{"role": "assistant", "content": "5432"}, _user("and production?", name="alice")]
    second = _capture(store, S1, "r2", hist, 102.0, reply="6543")
    # "Regenerate" the first answer: a fork of thread 1 at message 2.
    _capture(store, S1, "r3", hist[:2], 104.0, reply="Kestrel")
    _capture(store, S2, "r4", [_user("deploy the blue build")], 106.0, reply="done")
    _capture(store, OTHER, "r5", [_user("secret of t2")], 108.0, reply="ok")
    _w(store, _seed_rows)
    return {"first": first, "second": second}


def _seed_rows(tx: Any) -> None:
    """Items, task lines, agent memories, an assembly log, the extraction queue and a
    revision, written through the interface's write operations."""
    iw = tx.item_writes
    for args in (
            ("t1", "s1", 1, "fact", "staging port", "Staging port is 5432", 5432.0, "5432",
             None, None, 2, "user", 110.0, json.dumps({"speaker": "alice", "label": "a"})),
            ("t1", "s1", 1, "fact", "prod port", "Prod port is 6543", 6543.0, "6543",
             "port", None, 4, "user", 111.0, "{}"),
            ("t1", "s2", 3, "decision", "build", "Deploy the BLUE build", None, None, None,
             "if green", 8, "assistant", 112.0, json.dumps({"speaker": "bob"})),
            ("t2", "s1", 4, "fact", "secret", "t2 secret", None, None, None, None, 10,
             "user", 113.0, "{}")):
        (tenant, session, thread, kind, subject, text, value, value_text, unit, condition,
         source, evidence, now, data) = args
        iw.insert_item(tenant=tenant, role="coder", session=session, thread_id=thread,
                       kind=kind, subject=subject, text=text, value=value,
                       value_text=value_text, unit=unit, condition=condition,
                       source_message_id=source, evidence=evidence, lang=None, now=now,
                       data=data)
    iw.mark_superseded(1, 2, 120.0)
    iw.set_conflict(2, 3)
    tasks = tx.tasks
    for tenant, thread, label, text, source, now in (
            ("t1", 1, "goal", "ship it", 2, 130.0), ("t1", 1, "todo", "write docs", 4, 131.0),
            ("t1", 3, "goal", "blue build", 8, 132.0), ("t2", 4, "goal", "t2 goal", 10, 133.0)):
        tasks.upsert_line(tenant=tenant, role="coder", thread_id=thread, label=label,
                          text=text, norm=text, message_id=source, now=now)
    tasks.close(2, 131.0)
    mem = tx.agent_memories
    for category, key, title, content, now, tenant in (
            ("user_preferences", "tone", "Tone", "Terse ANSWERS", 140.0, "t1"),
            ("memo", "m1", " ", "\u3000\t", 141.0, "t1"),  # blank
            ("user_preferences", "lang", "Lang", "English", 142.0, "*"),
            ("progress", "p", "P", "t2 progress", 143.0, "t2")):
        mem.upsert(tenant=tenant, role="coder", category=category, key=key, title=title,
                   content=content, now=now)
    tx.engine_writes.log_assembly(request_id="r2", tenant="t1", role="coder", thread_id=1,
                                  created_at=102.5, trigger="regular", budget_tokens=3000,
                                  used_tokens=120, token_source="estimate", data='{"a": 1}')
    tx.extraction.failed(2, 1, "boom", 500.0)
    tx.extraction.defer(4, 90.0)
    iw.revision(1, "status", "active", "superseded", "newer", 120.0)


def _summaries(tx: Any) -> list[int]:
    s = tx.summaries
    common = {"tenant": "t1", "role": "coder", "thread_id": 1, "tokens": 5,
              "source_tokens": 20, "model": "extractive", "created_at": 150.0}
    a = s.save_node(level=0, message_ids=[1, 2], ids_json="[1,2]", text="setup",
                    children=[], **common)
    again = s.save_node(level=0, message_ids=[1, 2], ids_json="[1,2]", text="other",
                        children=[], **common)
    b = s.save_node(level=0, message_ids=[3, 4], ids_json="[3,4]", text="ports",
                    children=[], **common)
    top = s.save_node(level=1, message_ids=[1, 2, 3, 4], ids_json="[1,2,3,4]",
                      text="all", children=[a, b], **common)
    return [a, again, b, top]


def _forwarded(store: Store) -> list[int]:
    def row(request_id: str, tenant: str, thread: int | None) -> ForwardedRow:
        return ForwardedRow(request_id, tenant, "coder", thread, 160.0, "injected", "m", 1,
                            100, 200, b"\x78\x9c body", 0, 1, 2, 3)
    rows = [row(rid, t, th) for rid, t, th in (("r1", "t1", 1), ("r2", "t1", 1),
                                                ("r4", "t1", 3), ("r5", "t2", 4))]
    return [_w(store, lambda tx, r=r: tx.forwarded.insert(r, 2)) for r in rows]


def _index_writes(tx: Any) -> None:
    tx.index_feed.set_checkpoint("index_text", 3, 170.0)
    tx.index_feed.set_checkpoint("index_text", 5, 171.0)
    tx.index_feed.set_checkpoint("index_vector", 2, 172.0)
    tx.index_feed.set_checkpoint("other", 9, 173.0)
    tx.index_feed.save_vectors([("message", 1, "e5", 4, b"\x00\x01\x02\x03", 174.0),
                                ("message", 2, "e5", 4, b"\x04\x05\x06\x07", 174.0),
                                ("item", 2, "e5", 4, b"\x08", 174.0)])
    tx.index_feed.save_vectors([("message", 2, "e5", 4, b"\xff\xfe", 175.0)])


def _responses(tx: Any) -> None:
    r = tx.responses
    r.save_response(tenant="t1", role="coder", session="s1", response_id="resp1",
                    parent=None, thread_id=1, items=b"a", created_at=180.0)
    r.save_response(tenant="t1", role="coder", session="s1", response_id="resp2",
                    parent="resp1", thread_id=1, items=b"b", created_at=181.0)
    r.save_conversation_head(tenant="t1", role="coder", session="s1", conversation_id="c1",
                             response_id="resp2", thread_id=1, updated_at=182.0)


def _reads(tx: Any) -> dict[str, Any]:
    """Every read operation of every group, with the seeded data."""
    out: dict[str, Any] = {}
    c, h, f, s = tx.capture, tx.history, tx.item_feed, tx.summaries
    out["capture.path_ids"] = [c.path_ids(i) for i in (1, 4, 5, 9)]
    out["capture.thread_with_head"] = c.thread_with_head("t1", "coder", "s1", 5)
    out["capture.thread_updated_at"] = [c.thread_updated_at(i) for i in (1, 2, 99)]
    out["capture.thread_ends"] = [c.thread_ends(i) for i in (1, 2, 99)]
    out["capture.message_depth"] = [c.message_depth(i) for i in (1, 5, None, 99)]
    out["history.message_outlines"] = sorted(h.message_outlines([5, 1, 2, 99]))
    out["history.active_summaries"] = h.active_summaries("t1", "coder")
    out["history.summary_rows"] = sorted(h.summary_rows([1, 3, 2]), key=lambda r: r["id"])
    out["history.path_messages"] = sorted(h.path_messages([4, 2]), key=lambda r: r["id"])
    out["history.message_evidence"] = h.message_evidence([2, 4, 8])
    out["history.message_links"] = sorted(h.message_links([5, 1, 99]), key=lambda r: r["id"])
    out["history.sent_as_history"] = [h.sent_as_history(i) for i in (1, 2, 3, 4, 99)]
    out["history.next_turns"] = sorted(
        (r["parent_id"], r["msg_role"], r["text"]) for r in h.next_turns([2, 4, 99]))
    assert h.next_turns([]) == []
    out["item_feed.change_position"] = f.change_position()
    out["item_feed.oldest_change"] = f.oldest_change()
    out["item_feed.changes_after"] = f.changes_after(2, 3)
    out["item_feed.changes_since"] = [f.changes_since(p, n) for p, n in ((2, 3), (0, 1), (99, 5))]
    assert out["item_feed.changes_since"] == [
        (f.oldest_change(), f.changes_after(p, n)) for p, n in ((2, 3), (0, 1), (99, 5))]
    out["item_feed.active_items"] = sorted(f.active_items("t1", "coder"),
                                           key=lambda r: r["id"])
    out["item_feed.items_in_scope"] = sorted(f.items_in_scope([1, 2, 4], "t1", "coder"),
                                             key=lambda r: r["id"])
    out["summaries.nodes_within"] = s.nodes_within("t1", "coder", 1, 3)
    out["summaries.forest_rows"] = [s.forest_rows(tenant="t1", role=None, thread_id=None),
                                    s.forest_rows(tenant="t2", role=None, thread_id=1)]
    it = tx.items
    out["items.correction_candidates"] = [
        it.correction_candidates("t1", "coder", ["fact", "decision"], sp, lab, units, 5)
        for sp, lab, units in (("", None, None), ("alice", None, None), ("bob", None, None),
                               ("", None, ["port"]), ("", None, ["kg"]), ("alice", "a", None),
                               ("alice", "b", None))]
    out["items.correction_candidates.prefix"] = [
        [r["id"] for r in it.correction_candidates("t1", "coder", ["fact"], "", None, None, 5,
                                                   subject_prefix=p)]
        for p in ("prod ", "pro", "prod port", "port", "prod portx", "\U0010ffff")]
    out["items.replaced_candidates"] = [
        it.replaced_candidates("t1", "coder", kinds, sp, lab, 5)
        for kinds, sp, lab in ((["fact", "decision"], "alice", None), (["fact"], "alice", "a"),
                               (["fact"], "alice", "b"), (["decision"], "alice", None),
                               (["fact"], "", None))]
    out["items.search_items"] = [sorted(it.search_items([1, 2, 3, 77], scope=sc),
                                        key=lambda r: r["id"]) for sc in (False, True)]
    src = tx.index_source
    out["index_source.doc_rows"] = {
        (kind, ctx, emb): sorted(src.doc_rows(kind, [1, 2, 3, 4, 5, 2], context_chars=ctx,
                                  embed_chars=emb), key=lambda r: r["id"])
        for kind in ("message", "item", "agent_memory", "summary")
        for ctx, emb in ((0, 0), (4, 3))}
    out["index_source.ids_after"] = {k: src.ids_after(k, 1, 3)
                                     for k in ("message", "item", "agent_memory", "summary")}
    feed = tx.index_feed
    out["index_feed.checkpoint"] = [feed.checkpoint(n) for n in ("index_text", "nope")]
    out["index_feed.outbox_rows"] = feed.outbox_rows(3, 4)
    out["index_feed.outbox_left"] = feed.outbox_left(2)
    out["index_feed.cached_vectors"] = [feed.cached_vectors("message", "e5", 4, [1, 2, 3]),
                                        feed.cached_vectors("message", "e6", 4, [1]),
                                        feed.cached_vectors("item", "e5", 4, [2])]
    out["index_feed.unembedded"] = feed.unembedded()
    se = tx.search
    out["search.task_lines_of"] = sorted(se.task_lines_of([2, 4, 8, 10]))
    out["search.open_task_lines"] = [
        se.open_task_lines("t1", "coder", ["goal", "todo"], thread_ids=th, session=sess,
                           start_time=st, end_time=en, include_hidden=False,
                           current_thread=cur, per_label=2)
        for th, sess, st, en, cur in ((None, None, None, None, 3), (None, None, None, None, 1),
                                      ([1], None, None, None, 1), (None, "s2", None, None, 1),
                                      (None, None, 101.0, 200.0, 1))]
    out["search.preference_memories"] = sorted(se.preference_memories([1, 2, 3, 4]))
    out["search.candidate_facts"] = {
        (kind, needle, names): sorted(se.candidate_facts(kind, [1, 2, 3, 4, 5], needle, names))
        for kind in ("message", "item", "agent_memory", "summary")
        for needle, names in ((None, False), ("staging", True), ("blue", True),
                              ("terse", False))}
    op = tx.operator
    out["operator.scope_status"] = [op.scope_status(t, r) for t, r in
                                    (("t1", None), ("t1", "coder"), (None, None), ("t9", None))]
    tenants = op.tenants()
    out["operator.tenants"] = [{**t, "roles": sorted(t["roles"])} for t in tenants]
    out["operator.threads_page"] = [
        op.threads_page(tenant=t, role=None, session=sess, limit=lim, offset=off)
        for t, sess, lim, off in (("t1", None, 10, 0), ("t1", "s1", 1, 1), (None, None, 2, 0))]
    out["operator.thread"] = [op.thread(1, tenant=t, role=None) for t in ("t1", "t2", None)]
    out["operator.thread_path"] = [op.thread_path(i) for i in (4, 5, 1)]
    out["operator.task_state"] = op.task_state(1)
    out["operator.summary_nodes"] = op.summary_nodes("t1", "coder")
    out["operator.items_page"] = [
        op.items_page(tenant=t, role=None, status=st, kind=k, thread_id=th, text=txt,
                      limit=10, offset=0)
        for t, st, k, th, txt in (("t1", None, None, None, None),
                                  ("t1", "active", None, None, None),
                                  (None, None, "fact", None, "PORT"),
                                  (None, None, None, None, "blue"),
                                  (None, None, None, 3, None),
                                  (None, None, None, None, "5%"),
                                  (None, None, None, None, "staging port"))]
    out["operator.item_brief"] = [op.item_brief(i) for i in (1, 99)]
    out["operator.superseded_page"] = op.superseded_page(tenant="t1", role=None, limit=5,
                                                         offset=0)
    out["operator.ref_row"] = [op.ref_row(k, i) for k, i in (
        ("message", 2), ("item", 2), ("summary", 1), ("agent_memory", 1), ("message", 99))]
    out["operator.item_scope"] = [op.item_scope(i) for i in (3, 99)]
    out["operator.session_rows"] = [op.session_rows("t1", "coder", s) for s in ("s1", "zz")]
    out["operator.session_tenant"] = [op.session_tenant(s) for s in ("s2", "zz")]
    out["operator.conflict_pairs"] = op.conflict_pairs()
    out["operator.message_session"] = [op.message_session(i) for i in (7, 99)]
    ix = tx.index
    out["index.outbox_head"] = ix.outbox_head()
    out["index.index_checkpoints"] = ix.index_checkpoints()
    out["index.outbox_after"] = ix.outbox_after(5)
    out["index.oldest_pending_message_at"] = [ix.oldest_pending_message_at(p) for p in (0, 6,
                                                                                        999)]
    out["index.indexable_rows"] = ix.indexable_rows()
    out["index.expected_documents"] = [
        ix.expected_documents(vk, ds) for vk, ds in (({"message", "item", "agent_memory",
                                                      "summary"}, {"deleted"}),
                                                     ({"message"}, {"superseded"}))]
    m = tx.maintenance
    m.ping()
    out["maintenance.integrity_check"] = m.integrity_check()
    out["maintenance.message_id_high_water"] = m.message_id_high_water()
    out["maintenance.extraction_backlog"] = [m.extraction_backlog(n) for n in (0.0, 95.0)]
    r = tx.responses
    out["responses.conversation_head"] = [r.conversation_head("t1", "coder", c)
                                          for c in ("c1", "zz")]
    out["responses.response_chain"] = r.response_chain("t1", "coder", "resp2", 5)
    fw = tx.forwarded
    out["forwarded.page"] = [fw.page(tenant=t, role=None, thread_id=th, limit=5, offset=0)
                             for t, th in (("t1", None), (None, 4), ("t1", 3))]
    out["forwarded.by_request"] = [fw.by_request(rid, tenant=t, role=None)
                                   for rid, t in (("r4", "t1"), ("r1", "t1"), ("r5", "t1"))]
    out["forwarded.request_events"] = fw.request_events("r2", "t1")
    out["forwarded.request_assembly"] = [fw.request_assembly("r2", t) for t in ("t1", "t2")]
    _engine_reads(tx, out)
    out["empty lists"] = [
        h.message_outlines([]), h.summary_rows([]), h.message_evidence([]),
        f.items_in_scope([], "t1", "coder"), it.search_items([]),
        it.correction_candidates("t1", "coder", [], "", None, [], 5),
        it.replaced_candidates("t1", "coder", [], "alice", None, 5),
        src.doc_rows("message", []), feed.cached_vectors("message", "e5", 4, []),
        se.task_lines_of([]), se.preference_memories([]),
        se.open_task_lines("t1", "coder", ["goal"], thread_ids=[], session=None,
                           start_time=None, end_time=None, include_hidden=True,
                           current_thread=0, per_label=3),
        se.candidate_facts("item", [], "x", True), op.session_rows("t1", "coder", "none"),
        op.items_page(tenant=None, role=None, status=None, kind=None, thread_id=None,
                      text="t_2", limit=5, offset=0)]
    return out


def _engine_reads(tx: Any, out: dict[str, Any]) -> None:
    """The reads of the tools, the block, the request path, the operator and the
    writer's item rules (ToolReads … ItemWrites), into ``out``."""
    def by_id(rows: Any) -> list[Any]:
        return sorted(rows, key=lambda r: r["id"])
    tl = tx.tools
    out["tools.hit_row"] = [tl.hit_row(k, i) for k, i in (
        ("message", 4), ("item", 2), ("agent_memory", 1), ("summary", 3), ("message", 99))]
    with pytest.raises(ValueError):
        tl.hit_row("thread", 1)
    out["tools.root_summary_texts"] = [tl.root_summary_texts(t, "coder") for t in ("t1", "t2")]
    out["tools.thread_timeline"] = [tl.thread_timeline(t, "coder") for t in ("t1", "t9")]
    a = tx.assembly
    out["assembly.thread_fork"] = [a.thread_fork(i) for i in (1, 2, 99)]
    out["assembly.preferences"] = [a.preferences("coder", ts) for ts in (["t1", "*"], ["t2"])]
    out["assembly.open_task_state"] = [a.open_task_state(i) for i in (1, 3, 99)]
    out["assembly.progress_memories"] = [a.progress_memories(t, "coder", 2) for t in ("t1", "t2")]
    basics = []
    for tenants, tenant, thread in ((["t1", "*"], "t1", 1), (["t2"], "t2", 3),
                                    (["t1"], "t1", None), (["t1"], "t1", 99)):
        got = a.block_basics("coder", tenants, tenant, thread, 2)
        assert tuple(got) == (a.preferences("coder", tenants),
                              a.open_task_state(thread) if thread else [],
                              a.progress_memories(tenant, "coder", 2))
        basics.append(tuple(got))
    out["assembly.block_basics"] = basics
    out["assembly.newest_active_items"] = [a.newest_active_items("t1", "coder", n)
                                           for n in (1, 5)]
    out["assembly.items_by_ids"] = by_id(a.items_by_ids([4, 1, 99]))
    out["assembly.quote_messages"] = [by_id(a.quote_messages([1, 4, 9, 99], t, "coder"))
                                      for t in ("t1", "t2")]
    out["assembly.visible_quote_messages"] = by_id(
        a.visible_quote_messages([1, 2, 4, 9], "t1", "coder"))
    out["assembly.superseded_texts"] = [a.superseded_texts("t1", "coder", ids)
                                        for ids in ([2, 4], [4])]
    rq = tx.request_reads
    out["request_reads.spliced_ids"] = sorted(rq.spliced_ids())
    out["request_reads.splices"] = rq.splices([1, 2, 3, 4, 5, 6])
    out["request_reads.history_beyond"] = [rq.history_beyond(t, r, th, n) for t, r, th, n in (
        ("t1", "coder", 1, 10), ("t2", "coder", 4, 10), ("t2", "coder", 4, 9),
        ("t9", "coder", 1, 99), ("t9", "other", 1, 99))]
    out["request_reads.has_active_summaries"] = [rq.has_active_summaries(t, "coder")
                                                 for t in ("t1", "t2")]
    out["request_reads.superseded_sources"] = [rq.superseded_sources("t1", "coder", last, 5)
                                               for last in (1, 2, 10)]
    ins = tx.inspection
    out["inspection.agent_memories"] = [
        ins.agent_memories(category=c, role=r, tenant=t, shared_tenant="*")
        for c, r, t in ((None, None, None), ("user_preferences", "coder", "t1"),
                        (None, None, "t2"))]
    out["inspection.last_assembly"] = [
        ins.last_assembly(tenant=t, role=None, session=s, thread_id=th)
        for t, s, th in (("t1", None, None), (None, "s1", 1), ("t1", "s2", None))]
    out["inspection.recent_scopes"] = [
        ins.recent_scopes(tenant=t, role=None, session=s, limit=5)
        for t, s in ((None, None), ("t1", "s2"))]
    out["inspection.scoped_item"] = [ins.scoped_item(i, t, "coder")
                                     for i, t in ((2, "t1"), (2, "t2"))]
    out["inspection.scoped_message"] = [ins.scoped_message(i, t, "coder")
                                        for i, t in ((4, "t1"), (4, "t2"))]
    out["inspection.keyword_items"] = [list(ins.keyword_items(
        tenant=t, role=None, session=s, limit=3)) for t, s in ((None, None), ("t1", "s2"))]
    out["inspection.keyword_messages"] = [list(ins.keyword_messages(
        tenant=t, role="coder", session=s, limit=3)) for t, s in ((None, None), ("t1", "s1"))]
    out["inspection.item"] = [ins.item(i) for i in (1, 99)]
    out["inspection.message_brief"] = [ins.message_brief(i) for i in (4, None, 99)]
    out["inspection.item_link"] = [ins.item_link(i, d) for i, d in (
        (1, "superseded_by"), (2, "supersedes"), (99, "supersedes"))]
    with pytest.raises(ValueError):
        ins.item_link(1, "text")
    out["inspection.revisions"] = [ins.revisions(i) for i in (1, 2)]
    out["inspection.message"] = [ins.message(i) for i in (4, 99)]
    out["inspection.message_items"] = [ins.message_items(i) for i in (2, 4, 99)]
    out["inspection.store_counts"] = ins.store_counts()
    out["inspection.export_threads"] = [
        ins.export_threads(session=s, role=None, tenant=t, thread_id=th)
        for s, t, th in ((None, None, None), ("s1", "t1", None), (None, None, 3))]
    out["inspection.thread_messages"] = [ins.thread_messages(i) for i in (1, 99)]
    out["inspection.events"] = [ins.events(ids) for ids in (None, [3], [])]
    out["inspection.head_path"] = [ins.head_path(i) for i in (1, 2, 99)]
    iw = tx.item_writes
    kinds = ["fact", "decision"]
    out["item_writes.lookups"] = [
        iw.subject_window_ids("t1", "coder", kinds, "port", "", 0, 10, 5),
        iw.subject_window_ids("t1", "coder", kinds, "build", "bob", 0, 10, 5),
        iw.subject_window_ids("t1", "coder", kinds, "port", "", 2, 10, 5),
        list(iw.same_subject("t1", "coder", kinds, "build", "bob")),
        list(iw.same_subject("t1", "coder", kinds, "build", "")),
        list(iw.subject_hits("t1", "coder", kinds, "port", "")),
        list(iw.subject_hits("t1", "coder", kinds, "prod port", "")),
        iw.subject_key_count("t1", "coder", "port", 5),
        list(iw.subject_hits_by_key("t1", "coder", "port", kinds, "port", "")),
        list(iw.subject_hits_among("t1", "coder", ["prod port", "zz"], kinds, "port", "")),
        list(iw.subject_hits_among("t1", "coder", [], kinds, "port", "")),
        list(iw.reworded_candidates("t1", "coder", ["fact"], "", 6543.0, "port", None, 5,
                                    ["prod", "port", "zz"], 2)),
        list(iw.reworded_candidates("t1", "coder", ["fact"], "", 6543.0, "port", None, 5,
                                    ["prod", "zz"], 2)),
        list(iw.reworded_candidates("t1", "coder", ["decision"], "bob", None, None,
                                    "if green", 5, ["blue"], 1)),
        [iw.item(i) for i in (2, 99)], [iw.item_sources(i) for i in (1, 99)],
        by_id(iw.active_pair(2, 3)), iw.active_pair(1, 2),
        [iw.conflict_of(i) for i in (2, 3, 99)], [iw.item_text(i) for i in (3, 99)],
        iw.conflicting_active(3, 0), iw.conflicting_active(3, 2),
        [iw.item_claim(i) for i in (1, 99)], [iw.item_status(i) for i in (1, 99)]]
    out["agent_memories.keys"] = sorted(tx.agent_memories.keys("t1", "user_preferences",
                                                               "coder"))
    out["agent_memories.find"] = [tx.agent_memories.find(t, c, k, "coder") for t, c, k in (
        ("t1", "user_preferences", "tone"), ("*", "user_preferences", "lang"),
        ("t1", "memo", "tone"))]
    q = tx.extraction
    out["extraction.reads"] = [[q.attempts(i) for i in (2, 4, 99)], q.due(95.0, 5),
                               q.due(1000.0, 1), q.due(1000.0, 5), q.pending(4), q.pending(2)]
    out["engine_writes.meta"] = tx.engine_writes.meta("nope")


def _engine_writes(tx: Any) -> dict[str, Any]:
    """Every write operation of ItemWrites, TaskWrites, AgentMemoryWrites,
    ExtractionQueue and EngineWrites, with what each left behind."""
    out: dict[str, Any] = {}
    iw, ins = tx.item_writes, tx.inspection

    def item(**kw: Any) -> int:
        base = {"tenant": "t1", "role": "coder", "session": "s2", "thread_id": 3,
                "kind": "fact", "subject": "blue build colour", "text": "The build is blue",
                "value": 3.0, "value_text": "3", "unit": "kg", "condition": None,
                "source_message_id": 8, "evidence": "user", "lang": "en", "now": 200.0,
                "data": json.dumps({"speaker": "bob"})}
        return int(iw.insert_item(**{**base, **kw}))
    a, b, c = item(), item(text="Build colour: blue"), item(subject=None, text="x")
    out["ids"] = [a, b, c]
    iw.index_subject_keys("t1", "coder", a, ["blue", "build"], "blue build colour")
    iw.index_subject_keys("t1", "coder", a, ["blue"], "blue build colour")  # kept once
    iw.index_terms("t1", "coder", a, ["build", "blue", "colour"])
    iw.index_terms("t1", "coder", b, ["build", "blue"])
    iw.index_terms("t1", "coder", b, [])
    iw.queue_index("item", a)
    iw.queue_index("item", c, "delete")
    iw.revision(a, "value", None, 3.5, "why", 201.0)
    iw.revision(a, "text", "old", None, "why not", 202.0)
    kinds = ["fact", "decision"]
    out["lookups"] = [
        iw.subject_key_count("t1", "coder", "blue", 9),
        list(iw.subject_hits_by_key("t1", "coder", "blue", kinds, "build", "bob")),
        iw.subject_window_ids("t1", "coder", kinds, "build", "bob", 0, 100, 2),
        list(iw.reworded_candidates("t1", "coder", ["fact"], "bob", 3.0, "kg", None, 10,
                                    ["blue", "build", "colour"], 3)),
        list(iw.reworded_candidates("t1", "coder", ["fact"], "bob", 3.0, "kg", None, 1,
                                    ["blue", "build"], 2))]
    iw.set_conflict(a, 3)
    iw.set_data(b, json.dumps({"speaker": "bob", "label": "x"}))
    iw.touch(a, 203.0)
    iw.restate(a, now=204.0, message_id=7, thread_id=3, data=json.dumps({"speaker": "ann"}))
    iw.mark_merged(b, a, 205.0)
    iw.settle(3, a, 206.0)
    iw.mark_retracted(c, 207.0)
    # an edited message's branch (memory_core.items.branches): message 1's user
    # children but 999, with everything under them (the regenerated answer too)
    out["branches"] = [iw.branch_messages(1, 999), iw.branch_messages(1, 2),
                       iw.branch_messages(3, 999), iw.branch_messages(2, 999)]
    out["sourced_in"] = [r["id"] for r in iw.items_sourced_in("t1", "coder", [2, 4, 8])]
    edited = item(text="edited away", source_message_id=4, thread_id=1)
    iw.set_status(edited, "edited", None, 208.0)
    iw.link_edit(edited, a)
    out["edited"] = [[r["id"] for r in iw.edited_items("t1", "coder")],
                     iw.edited_items("t2", "coder"), ins.item(edited), ins.item(a)]
    iw.link_edit(edited, None)
    iw.set_status(edited, "active", None, 209.0)
    out["restored"] = [iw.edited_items("t1", "coder"), ins.item(edited), ins.item(a)]
    iw.mark_retracted(edited, 209.5)  # out of the active items read below
    out["items"] = [ins.item(i) for i in (3, a, b, c)]
    out["revisions"] = ins.revisions(a)
    t = tx.tasks
    t.upsert_line(tenant="t1", role="coder", thread_id=3, label="todo", text="fix docs",
                  norm="fix docs", message_id=8, now=210.0)
    t.upsert_line(tenant="t1", role="coder", thread_id=3, label="blocked", text="wait",
                  norm="wait", message_id=None, now=211.0)
    t.upsert_line(tenant="t1", role="coder", thread_id=3, label="goal", text="new goal",
                  norm="new goal", message_id=7, now=212.0)
    t.supersede_goals(3, "new goal", 213.0)
    todos = t.open_todos(3)
    out["open_todos"] = sorted(todos, key=lambda r: r["id"])
    t.close(min(r["id"] for r in todos), 214.0)
    t.upsert_line(tenant="t1", role="coder", thread_id=3, label="todo", text="Fix docs!",
                  norm="fix docs", message_id=7, now=215.0)  # reopened
    out["task_lines"] = [tx.assembly.open_task_state(3), sorted(t.open_todos(3),
                                                                key=lambda r: r["id"])]
    m = tx.agent_memories
    first = m.upsert(tenant="t1", role="coder", category="memo", key="k", title="K",
                     content="one", now=220.0)
    again = m.upsert(tenant="t1", role="coder", category="memo", key="k", title="K2",
                     content="two", now=221.0)
    out["memories"] = [first == again, sorted(m.keys("t1", "memo", "coder")),
                       tx.tools.hit_row("agent_memory", first)]
    m.delete(first)
    out["memories.after_delete"] = [m.find("t1", "memo", "k", "coder"),
                                    tx.tools.hit_row("agent_memory", first)]
    q = tx.extraction
    q.defer(6, 300.0)
    q.defer(6, 400.0)  # queued already: unchanged
    out["queue"] = [q.attempts(6), q.pending(6), q.due(350.0, 9)]
    q.failed(6, 2, "bad", 310.0)
    q.failed(5, 1, "new", 305.0)
    out["queue.failed"] = [q.attempts(6), q.pending(6), q.due(350.0, 9)]
    q.done(6)
    q.done(99)
    out["queue.done"] = [q.attempts(6), q.due(1000.0, 9)]

    ew = tx.engine_writes

    def boom() -> None:  # draws no id: PostgreSQL's sequences skip what a rollback drew
        q.done(5)
        ew.set_meta("rolled", "back")
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        q.attempt(boom)
    out["attempt"] = [q.attempt(lambda: item(text="kept")), q.attempts(5), ew.meta("rolled"),
                      [r["text"] for r in tx.assembly.newest_active_items("t1", "coder", 2)]]
    ew.set_meta("salt", "abc")
    out["meta"] = [ew.meta("salt"), ew.meta("nope")]
    out["log_assembly"] = ew.log_assembly(
        request_id="r9", tenant="t1", role="coder", thread_id=None, created_at=230.0,
        trigger="tool", budget_tokens=10, used_tokens=0, token_source="x", data="{}")
    out["outbox"] = [row[1:] for row in tx.index_feed.outbox_rows(0, 1000)]
    return out


def _scenario(store: Store, raw: Raw) -> dict[str, Any]:
    seeded = _seed(store, raw)
    out: dict[str, Any] = {"seed": (seeded["first"].message_ids, seeded["second"].message_ids)}
    out["save_node"] = _w(store, _summaries)
    out["forwarded.insert"] = _forwarded(store)
    _w(store, _index_writes)
    _w(store, _responses)
    out.update(store.read_tx(_reads))
    # the same reads inside a write job (the writer's connection) agree with a reader's
    inside = _w(store, _reads)
    assert inside == {k: v for k, v in out.items() if k in inside}
    out["engine_writes"] = _w(store, _engine_writes)
    out["before_purge"] = store.read_tx(_reads)["operator.scope_status"]
    out["item_feed.prune_changes"] = _w(store, lambda tx: tx.item_feed.prune_changes(2))
    out["item_feed.after_prune"] = store.read_tx(
        lambda tx: (tx.item_feed.oldest_change(), tx.item_feed.change_position()))
    out["purge.dry_run"] = _w(store, lambda tx: tx.purge.delete_scope(
        tenant="t1", role=None, session="s1", dry_run=True))
    out["purge.after_dry_run"] = store.read_tx(_reads)["operator.scope_status"]
    out["purge.delete"] = _w(store, lambda tx: tx.purge.delete_scope(
        tenant="t1", role=None, session="s1", dry_run=False))
    _w(store, lambda tx: tx.purge.record(190.0, '{"tenant": "t1"}'))
    after = store.read_tx(_reads)
    # Ids drawn inside a rolled-back transaction (the dry run's) are reused by SQLite
    # (AUTOINCREMENT's counter rolls back) and skipped by PostgreSQL (sequences do
    # not): positions after it differ by that gap, what they hold does not.
    for key in ("item_feed.change_position", "item_feed.changes_after",
                "item_feed.changes_since", "index.outbox_head"):
        del after[key]
    after["outbox"] = store.read_tx(lambda tx: [
        row[1:] for row in tx.index_feed.outbox_rows(0, 1000)])
    after["changes"] = store.read_tx(lambda tx: [
        item for _pos, item in tx.item_feed.changes_after(0, 1000)])
    out["purge.after"] = after
    return out


def test_backends_agree(tmp_path: Path, pg_url: str) -> None:  # noqa: F811 - the fixture
    results = []
    for open_backend in (lambda: _sqlite(tmp_path),
                         lambda: _postgres(pg_url, "k_agree")):
        store, raw, close = open_backend()
        try:
            results.append(_scenario(store, raw))
        finally:
            close()
    lite, pg = results
    assert lite.keys() == pg.keys()
    differ = [k for k in lite if lite[k] != pg[k]]
    for k in differ:
        if isinstance(lite[k], dict) and isinstance(pg[k], dict):
            for sub in lite[k]:
                if lite[k][sub] != pg[k].get(sub):
                    print(f"{k}.{sub}:\n  sqlite   {lite[k][sub]!r}\n  postgres {pg[k].get(sub)!r}")
        else:
            print(f"{k}:\n  sqlite   {lite[k]!r}\n  postgres {pg[k]!r}")
    assert not differ


def test_the_scenario_reads_what_it_seeded(backend: tuple[Store, Raw]) -> None:
    """The values behind test_backends_agree, written out for the main operations
    (so that agreeing on an empty or wrong answer cannot pass)."""
    store, raw = backend
    out = _scenario(store, raw)
    assert out["seed"] == ((1, 2), (1, 2, 3, 4))
    assert out["save_node"] == [1, 1, 2, 3]  # the second save of [1,2] is the first node
    assert out["capture.path_ids"] == [[1], [1, 2, 3, 4], [1, 2, 3, 4, 5], [9]]
    assert out["capture.thread_ends"] == [{"head_message_id": 5, "root_message_id": 1},
                                          {"head_message_id": 6, "root_message_id": 1}, None]
    assert out["history.active_summaries"] == {1: 3, 2: 3, 3: None}
    # the system message was history of request r1; each user turn was its request's
    # newest, followed by the answer (3 by r2's own turn, another request)
    assert out["history.sent_as_history"] == [True, False, False, False, False]
    # the answers that followed each turn: both of 2's (the regenerated one too)
    assert out["history.next_turns"] == [(2, "assistant", "5432"), (2, "assistant", "Kestrel"),
                                         (4, "assistant", "6543")]
    items, todos = out["history.message_evidence"]
    assert [i["id"] for i in items] == [1, 2, 3]
    assert [t["label"] for t in todos] == ["goal", "todo", "goal"]
    assert [i["id"] for i in out["item_feed.active_items"]] == [2, 3]
    assert out["item_feed.changes_after"] == [(3, 3), (4, 4), (5, 1)]
    assert [[r["id"] for r in x] for x in out["items.correction_candidates"]] == [
        [2], [], [3], [2], [], [], []]
    assert out["items.correction_candidates.prefix"] == [[2], [2], [2], [], [], []]
    assert out["items.replaced_candidates"] == [
        [{"id": 1, "text": "Staging port is 5432", "condition": None, "superseded_by": 2,
          "successor_text": "Prod port is 6543"}],
        [{"id": 1, "text": "Staging port is 5432", "condition": None, "superseded_by": 2,
          "successor_text": "Prod port is 6543"}],
        [], [], []]
    names = {r["id"]: r["name"] for r in out["index_source.doc_rows"][("message", 0, 0)]}
    assert names == {1: None, 2: None, 3: None, 4: "alice", 5: None}
    ctx = out["index_source.doc_rows"][("message", 4, 3)]
    assert [(r["ctx_parent"], r["embed_parent"]) for r in ctx][:3] == [
        (None, None), ("be b", None), ("Port", "Por")]
    assert out["index_feed.cached_vectors"] == [{1: b"\x00\x01\x02\x03", 2: b"\xff\xfe"}, {},
                                                {2: b"\x08"}]
    assert out["index.index_checkpoints"] == {"index_text": 5, "index_vector": 2}
    assert out["index_feed.unembedded"] == 11  # 2 of the messages have vectors
    assert out["search.preference_memories"] == [1, 3]
    assert out["search.open_task_lines"] == [[8, 2], [2, 8], [2], [8], [8]]
    facts = out["search.candidate_facts"]
    assert [f[3] for f in facts[("message", "staging", True)]] == [0, 1, 0, 0, 0]
    assert [f[3] for f in facts[("agent_memory", "terse", False)]] == [1, 0, 0, 0]
    assert [f[5] for f in facts[("item", "blue", True)]] == ["alice", None, "bob", None]
    assert out["index.expected_documents"][0]["vector"]["agent_memory"] == 3  # one blank
    assert out["operator.superseded_page"] == (1, [1])
    assert out["operator.items_page"][2][0] == 2  # "PORT" matches "port" in text or subject
    assert out["operator.items_page"][5][0] == 0  # "%" is a character, not a wildcard
    assert out["maintenance.integrity_check"] == ["ok"]
    assert out["maintenance.message_id_high_water"] == 10
    assert out["maintenance.extraction_backlog"] == [1, 2]
    assert [r["items"] for r in out["responses.response_chain"]] == [b"a", b"b"]
    total, page = out["forwarded.page"][0]
    assert total == 2 and [p["request_id"] for p in page] == ["r4", "r2"]  # keep=2
    assert out["forwarded.by_request"][0]["body"] == b"\x78\x9c body"
    assert out["forwarded.by_request"][1:] == [None, None]  # pruned; other tenant
    assert out["tools.root_summary_texts"] == [{3: "all"}, {}]
    assert [r["messages"] for r in out["tools.thread_timeline"][0]] == [5, 1, 2]
    assert out["assembly.thread_fork"] == [(None, None), (1, 2), None]
    assert [r["key"] for r in out["assembly.preferences"][0]] == ["lang", "tone"]
    assert out["request_reads.history_beyond"] == [True, True, True, True, False]
    assert [len(r) for r in out["request_reads.superseded_sources"]] == [0, 1, 1]
    assert out["inspection.recent_scopes"] == [[("t2", "coder"), ("t1", "coder")],
                                               [("t1", "coder")]]
    assert [r["id"] for r in out["inspection.head_path"][0]] == [1, 2, 3, 4, 5]
    assert out["inspection.store_counts"]["counts"]["messages"] == 10
    assert out["agent_memories.find"] == [1, 3, None]
    lookups = out["item_writes.lookups"]
    assert lookups[:3] == [[2], [3], []] and [r["id"] for r in lookups[3]] == [3]
    assert [r["id"] for r in lookups[5]] == [2] and [r["id"] for r in lookups[9]] == [2]
    assert out["extraction.reads"][0] == [1, 0, None]
    assert [r["name"] for r in out["extraction.reads"][1]] == ["alice"]
    ew = out["engine_writes"]
    a, b, _c = ew["ids"]
    looked = ew["lookups"]
    assert looked[0] == 1 and looked[2] == [b, a]  # newest first, at most 2 of 3
    assert [[r["id"] for r in x] for x in (looked[1], looked[3], looked[4])] == [[a], [a], []]
    assert [r["text"] for r in ew["open_todos"]] == ["fix docs", "wait"]
    assert [r["text"] for r in ew["task_lines"][0]] == ["fix docs", "wait", "new goal"]
    assert ew["memories"][:2] == [True, [("k", "K2"), ("m1", " ")]]
    assert ew["memories.after_delete"] == [None, None]
    assert [r["message_id"] for r in ew["queue"][1]] == [6]
    assert ew["queue.failed"][:2] == [2, []]
    assert ew["queue.done"][0] is None
    assert ew["attempt"][1:] == [1, None, ["kept", "The build is blue"]]
    assert ew["branches"] == [{2: 2, 3: 2, 4: 2, 5: 2, 6: 2}, {}, {4: 4, 5: 4}, {}]
    assert ew["sourced_in"] == [2]  # the active one (1: superseded, 3: settled)
    ids, other, old, new = ew["edited"]
    assert ids == [old["id"]] and other == [] and old["status"] == "edited"
    assert (old["superseded_by"], new["supersedes"]) == (new["id"], old["id"])
    assert new["conflict_with"] == 3  # not a conflict with the edited item: kept
    gone, back, unlinked = ew["restored"]
    assert gone == [] and back["status"] == "active" and back["superseded_by"] is None
    assert unlinked["supersedes"] is None
    assert ew["meta"] == ["abc", None]
    assert out["purge.dry_run"] == out["purge.delete"]
    assert {k: out["purge.delete"][k] for k in ("messages", "threads", "memory_items",
                                                "summary_nodes", "outbox_deletes")} == {
        "messages": 6, "threads": 2, "memory_items": 3, "summary_nodes": 3,
        "outbox_deletes": 12}  # memory_items: with the retracted item of thread 1
    assert out["purge.after_dry_run"] == out["before_purge"]
    after = out["purge.after"]
    assert after["operator.session_rows"][0]["messages"] == []
    assert after["operator.scope_status"][0]["counts"]["messages"] == 2  # session s2 stays
    assert after["operator.scope_status"][2]["counts"]["messages"] == 4  # and tenant t2
    assert after["outbox"][-12:] == [(k, ref, "delete") for k, refs in (
        ("message", range(1, 7)), ("item", (1, 2, 8)), ("summary", (1, 2, 3)))
        for ref in refs]


def test_capture_of_one_key_twice_stores_one_row(backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    hist = [_user("hello"), {"role": "assistant", "content": "hi"}, _user("again")]
    first = _capture(store, S1, "a", hist, 10.0)
    second = _capture(store, S1, "b", hist, 11.0)
    assert first.new_ids == (1, 2, 3) and second.new_ids == ()
    assert second.message_ids == first.message_ids
    # The same node key in another scope is another row.
    other = _capture(store, S2, "c", hist, 12.0)
    assert other.new_ids == (4, 5, 6)

    def nodes(tx: Any) -> list[Any]:
        return [tx.capture.node(s.tenant, s.role, s.session, k) for s in (S1, S2)
                for k in ("nope",)]
    assert store.read_tx(nodes) == [None, None]
    status = store.read_tx(lambda tx: tx.operator.scope_status("t1", None))
    assert status["counts"]["messages"] == 6 and status["counts"]["threads"] == 2
    outbox = store.read_tx(lambda tx: tx.index_feed.outbox_rows(0, 100))
    assert [(k, ref, op) for _id, k, ref, op in outbox] == [
        ("message", i, "upsert") for i in range(1, 7)]


def test_nodes_reads_many_keys_of_one_scope_as_node_reads_each(
        backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    hist = [_user("hello"), {"role": "assistant", "content": "hi"}, _user("again")]
    _capture(store, S1, "a", hist, 10.0)
    _capture(store, S2, "b", hist[:2], 11.0)
    keys = capture.chain_keys(hist)

    def both(tx: Any, s: Scope) -> tuple[Any, Any]:
        many = tx.capture.nodes(s.tenant, s.role, s.session, [*keys, "nope", keys[0]])
        one = {k: tx.capture.node(s.tenant, s.role, s.session, k) for k in keys}
        return many, {k: v for k, v in one.items() if v is not None}

    many, one = store.read_tx(both, S1)
    assert many == one and len(many) == 3
    many, one = store.read_tx(both, S2)
    assert many == one and set(many) == set(keys[:2])
    assert store.read_tx(lambda tx: tx.capture.nodes("t1", "coder", "s1", [])) == {}


def test_node_reads_are_nodes_with_the_threads_they_head_and_a_threads_ends(
        backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    hist = [_user("hello"), {"role": "assistant", "content": "hi"}, _user("again")]
    first = _capture(store, S1, "a", hist, 10.0, reply="ok")
    _capture(store, S1, "b", [*hist[:2], _user("other")], 11.0)  # a fork from "hi"
    keys = capture.chain_keys(hist)
    reply_key = capture.node_key(keys[-1], {"role": "assistant", "content": "ok"})
    want = [*keys, reply_key, "nope"]

    def reads(tx: Any, thread_id: int | None) -> tuple[Any, Any]:
        got = tx.capture.node_reads("t1", "coder", "s1", want, thread_id)
        nodes = tx.capture.nodes("t1", "coder", "s1", want)
        heads = {ref.id: tx.capture.thread_with_head("t1", "coder", "s1", ref.id)
                 for ref in nodes.values()}
        ends = tx.capture.thread_ends(thread_id) if thread_id is not None else None
        return got, (nodes, {k: v for k, v in heads.items() if v is not None}, ends)

    got, expected = store.read_tx(reads, first.thread_id)
    assert (got.nodes, got.heads, got.thread) == expected
    assert len(got.nodes) == 4 and len(got.heads) == 1 and got.thread is not None
    got, expected = store.read_tx(reads, None)
    assert got.thread is None and (got.nodes, got.heads) == expected[:2]
    assert store.read_tx(lambda tx: tx.capture.node_reads("t1", "coder", "s1", [], 999)
                         ) == ({}, {}, None)


def test_insert_chain_stores_each_row_under_the_one_before(
        backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    root = _capture(store, S1, "a", [_user("hello")], 10.0)
    parent_key = root.head_key
    rows, key = [], parent_key
    for n in range(3):
        child = capture.node_key(key, _user(f"m{n}"))
        rows.append(capture._message_row(S1, root.thread_id, child, key, root.head_id
                                         if n == 0 else 12345, 1 + n, _user(f"m{n}"),
                                         "request", 11.0, "b"))
        key = child

    ids = _w(store, lambda tx: tx.capture.insert_chain(rows))
    assert ids == sorted(ids) and len(set(ids)) == 3 and ids[0] > root.head_id
    assert store.read_tx(lambda tx: tx.capture.path_ids(ids[-1])) == [root.head_id, *ids]
    assert _w(store, lambda tx: tx.capture.insert_chain([])) == []


def test_a_failing_event_row_fails_its_job_and_leaves_nothing(
        backend: tuple[Store, Raw]) -> None:
    """``add_event`` is sent with the job's next statement on PostgreSQL (or with
    COMMIT): its error is still the job's own, and the job rolls back alone."""
    store, _raw = backend

    def job(tx: Any, kind: str | None, then_read: bool) -> int:
        tx.capture.add_event(None, "t1", "coder", None, kind, 1.0, "{}")
        if then_read:
            return len(tx.capture.nodes("t1", "coder", "s1", ["x"]))
        return 7

    def events() -> int:
        return int(store.read_tx(lambda tx: tx.operator.scope_status("t1", None)
                                 )["counts"]["events"])

    for then_read in (False, True):
        with pytest.raises(Exception, match="(?i)null"):
            store.write_tx(job, None, then_read).result(30)
        assert events() == 0
    assert store.write_tx(job, "fine", False).result(30) == 7
    assert store.write_tx(job, "fine", True).result(30) == 0
    assert events() == 2


def test_due_later_reads_the_queue_as_it_stood_when_asked(
        backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    first = _capture(store, S1, "a", [_user("hello"), _user("again")], 10.0)
    _w(store, lambda tx: tx.extraction.defer(first.message_ids[0], 5.0))
    _w(store, lambda tx: tx.extraction.defer(first.message_ids[1], 50.0))

    def job(tx: Any) -> tuple[list[Any], list[Any]]:
        later = tx.extraction.due_later(20.0, 5)
        tx.extraction.done(first.message_ids[0])  # after it was asked
        tx.capture.nodes("t1", "coder", "s1", ["x"])
        return later(), tx.extraction.due(20.0, 5)

    got, now = _w(store, job)
    assert [r["message_id"] for r in got] == [first.message_ids[0]] and now == []
    assert got[0]["text"] == "hello" and got[0]["thread_id"] == first.thread_id
    # Read before any other statement of the job: sent on its own.
    assert _w(store, lambda tx: tx.extraction.due_later(100.0, 5)()) == store.read_tx(
        lambda tx: tx.extraction.due(100.0, 5))


def test_write_jobs_are_atomic_ordered_and_visible_after_their_future(
        backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    order: list[str] = []

    def good(tx: Any, name: str) -> int:
        order.append(name)
        return int(tx.capture.insert_event(None, "t1", "coder", None, name, 1.0, "{}"))

    def bad(tx: Any) -> None:
        tx.capture.insert_event(None, "t1", "coder", None, "lost", 1.0, "{}")
        raise RuntimeError("job fails")

    followed: list[int] = []
    futures: list[Future[Any]] = [store.write_tx(good, "one"), store.write_tx(bad),
               store.write_tx(good, "two", then=followed.append)]
    assert futures[0].result(30) == 1
    with pytest.raises(RuntimeError, match="job fails"):
        futures[1].result(30)
    second = futures[2].result(30)
    assert followed == [second] and order == ["one", "two"]
    # Visible to a reader once the future has resolved; the failed job left nothing.
    assert store.read_tx(lambda tx: tx.operator.scope_status("t1", None)
                         )["counts"]["events"] == 2
    assert store.queue_depth() == 0
    # A failing job alone in its batch rolls back too, and the next job commits.
    with pytest.raises(RuntimeError, match="job fails"):
        store.write_tx(bad).result(30)
    assert store.write_tx(good, "three").result(30) > second  # PostgreSQL skips the lost id
    assert store.read_tx(lambda tx: tx.operator.scope_status("t1", None)
                         )["counts"]["events"] == 3

    # Many threads queueing at once: every job runs once, each thread's in order.
    seen: list[tuple[int, int]] = []

    def queue_from(thread: int) -> None:
        for k in range(20):
            store.write_tx(lambda tx, t=thread, k=k: seen.append((t, k)))

    threads = [threading.Thread(target=queue_from, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    store.flush()
    assert sorted(seen) == [(t, k) for t in range(4) for k in range(20)]
    for t in range(4):
        assert [k for tt, k in seen if tt == t] == list(range(20))


def test_an_urgent_job_waits_for_the_running_job_only(backend: tuple[Store, Raw]) -> None:
    """An urgent job queued behind a batch of ordinary ones runs after the job running
    now, commits alone (its future resolves before the rest start), and the rest
    then run in their order; an ordinary job keeps its place behind them."""
    store, _raw = backend
    order: list[str] = []
    running, release = threading.Event(), threading.Event()
    urgent: list[Future[Any]] = []

    def slow(tx: Any, name: str) -> int:
        order.append(name)
        running.set()
        assert release.wait(30)
        return int(tx.capture.insert_event(None, "t1", "coder", None, name, 1.0, "{}"))

    def job(tx: Any, name: str) -> int:
        order.append(name if not urgent or not urgent[0].done() else f"{name} (after)")
        return int(tx.capture.insert_event(None, "t1", "coder", None, name, 1.0, "{}"))

    hold = threading.Event()
    store.write_tx(lambda _tx: hold.wait(30))  # the writer is busy: the next queue up
    queued = [store.write_tx(slow, "a")] + [store.write_tx(job, n) for n in "bcd"]
    hold.set()
    assert running.wait(30)  # "a" runs, "b" to "d" wait in its batch
    urgent.append(store.write_tx(job, "urgent", urgent=True))
    late = store.write_tx(job, "e")
    release.set()
    assert urgent[0].result(30) > queued[0].result(30)
    assert late.result(30) > max(f.result(30) for f in queued)
    assert order == ["a", "urgent", "b (after)", "c (after)", "d (after)", "e (after)"]
    assert store.read_tx(lambda tx: tx.operator.scope_status("t1", None)
                         )["counts"]["events"] == 6
    assert store.queue_depth() == 0


def test_an_urgent_job_takes_the_jobs_of_its_order_key_ahead(
        backend: tuple[Store, Raw]) -> None:
    """Jobs that share an order key keep their order whatever their lanes: an urgent
    job runs after the queued jobs of its key (they go ahead with it), before the
    others; so do the jobs of its key in a batch it cuts short."""
    store, _raw = backend
    order: list[str] = []
    hold, running = threading.Event(), threading.Event()

    def job(_tx: Any, name: str) -> None:
        order.append(name)

    def blocker(_tx: Any, name: str) -> None:
        order.append(name)
        running.set()
        assert hold.wait(30)

    # Queued while the writer is busy.
    store.write_tx(blocker, "busy")
    assert running.wait(30)
    for name, key in (("p1", "p"), ("q1", "q"), ("p2", "p"), ("x", None)):
        store.write_tx(job, name, order_key=key)
    last = store.write_tx(job, "p-urgent", urgent=True, order_key="p")
    hold.set()
    last.result(30)
    store.flush()
    assert order == ["busy", "p1", "p2", "p-urgent", "q1", "x"]

    # Taken into a batch, then cut short by the urgent job.
    order.clear()
    hold.clear()
    running.clear()
    gate = threading.Event()
    store.write_tx(lambda _tx: gate.wait(30))  # holds the writer while the batch queues
    store.write_tx(blocker, "first")
    for name, key in (("q1", "q"), ("p1", "p"), ("x", None)):
        store.write_tx(job, name, order_key=key)
    gate.set()
    assert running.wait(30)  # "first" runs; q1, p1 and x wait in its batch
    last = store.write_tx(job, "p-urgent", urgent=True, order_key="p")
    hold.set()
    last.result(30)
    store.flush()
    assert order == ["first", "p1", "p-urgent", "q1", "x"]


def test_a_stream_of_urgent_jobs_does_not_starve_the_others(
        backend: tuple[Store, Raw]) -> None:
    """Each urgent job queues the next (a steady stream, never a queue without one):
    the waiting ordinary jobs still run, one after each urgent batch, in order."""
    store, _raw = backend
    order: list[str] = []
    hold, running = threading.Event(), threading.Event()
    done: list[Future[Any]] = []

    def blocker(_tx: Any) -> None:
        running.set()
        assert hold.wait(30)

    def urgent(_tx: Any, n: int) -> None:
        order.append(f"u{n}")
        if n < 4:
            done.append(store.write_tx(urgent, n + 1, urgent=True))

    store.write_tx(blocker)
    assert running.wait(30)
    for name in ("n1", "n2"):
        store.write_tx(lambda _tx, name=name: order.append(name))
    store.write_tx(urgent, 1, urgent=True)
    hold.set()
    store.flush()
    for fut in list(done):
        fut.result(30)
    assert order == ["u1", "n1", "u2", "n2", "u3", "u4"]


def test_write_jobs_run_in_their_callers_context(backend: tuple[Store, Raw]) -> None:
    """A job and its follow-up see the context variables of whoever queued the job
    (a request id, for their log lines); a job queued outside sees the default."""
    import contextvars
    import threading

    store, _raw = backend
    var: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="-")
    seen: list[tuple[str, str]] = []
    done = threading.Event()

    def later(_tx: Any) -> None:
        seen.append(("follow-up's job", var.get()))
        done.set()

    def then(_value: Any) -> None:
        seen.append(("then", var.get()))
        store.write_tx(later)

    token = var.set("req_1")
    try:
        store.write_tx(lambda _tx: seen.append(("job", var.get())), then=then).result(10)
    finally:
        var.reset(token)
    assert done.wait(10)
    store.write_tx_sync(lambda _tx: seen.append(("outside", var.get())))
    assert seen == [("job", "req_1"), ("then", "req_1"), ("follow-up's job", "req_1"),
                    ("outside", "-")]


def test_a_closed_store_refuses_writes(backend: tuple[Store, Raw]) -> None:
    store, _raw = backend
    fut = store.write_tx(lambda tx: tx.capture.new_thread("t1", "coder", "s", 1.0, None, None))
    store.close()
    assert fut.result(1) == 1  # queued before close: committed
    with pytest.raises(StoreError):
        store.write_tx(lambda tx: None)


def test_open_store_picks_the_backend_from_the_configuration(tmp_path: Path,
                                                             pg_url: str) -> None:  # noqa: F811
    from memory_core.config import MemoryConfig
    from memory_core.store.factory import open_store
    from memory_core.store.pg import PgStore

    lite = open_store(tmp_path / "a", MemoryConfig(sqlite_cache_kib=128))
    try:
        assert isinstance(lite, SqliteStore) and (tmp_path / "a" / "lcm.sqlite3").exists()
    finally:
        lite.close()
    url = pgcluster.fresh_database(pg_url, "k_factory")
    pg = open_store(tmp_path / "b", MemoryConfig(store_url=url))
    try:
        assert isinstance(pg, PgStore) and not (tmp_path / "b").exists()
        assert pg.write_tx(lambda tx: tx.capture.new_thread("t", "r", "", 1.0, None, None)
                           ).result(30) == 1
        assert pg.read_tx(lambda tx: tx.operator.thread(1, tenant="t", role=None)) is not None
    finally:
        pg.close()
    # Reopening applies no migration twice and keeps the rows.
    again = open_store(tmp_path / "b", MemoryConfig(store_url=url))
    try:
        assert again.read_tx(lambda tx: tx.operator.session_tenant("")) == "t"
    finally:
        again.close()
    with pytest.raises(StoreError, match="postgresql://"):
        open_store(tmp_path, MemoryConfig(store_url="mysql://db/x"))
    port = pg_url.rsplit(":", 1)[1].split("/")[0]
    dead = pg_url.replace(f":{port}/", ":1/")  # nothing listens on port 1
    with pytest.raises(StoreError, match="cannot open store at 127.0.0.1:1/postgres"):
        from memory_core.store.pg import PgStore as Pg
        Pg(dead, timeout=2)


def test_two_stores_on_one_database_commit_in_id_order(pg_url: str) -> None:  # noqa: F811
    """Replicas: every write batch holds one advisory lock until it commits, so a
    job of store B waits while a job of store A that drew a smaller id is still
    open, and a reader that catches up by position (the outbox) skips nothing."""
    from memory_core.store.pg import PgStore

    url = pgcluster.fresh_database(pg_url, "k_replicas")
    a, b = PgStore(url, max_size=2), PgStore(url, max_size=2)
    try:
        inside, release = threading.Event(), threading.Event()

        def slow(tx: Any) -> int:
            tid = int(tx.capture.new_thread("t", "r", "", 1.0, None, None))
            inside.set()
            assert release.wait(30)
            return tid

        first = a.write_tx(slow)
        assert inside.wait(30)
        second = b.write_tx(lambda tx: tx.capture.new_thread("t", "r", "", 2.0, None, None))
        threading.Event().wait(0.3)
        assert not second.done(), "store B committed while store A's batch was open"
        release.set()
        assert (first.result(30), second.result(30)) == (1, 2)
    finally:
        release.set()
        a.close()
        b.close()


def test_one_conversation_through_two_stores_is_stored_once(pg_url: str) -> None:  # noqa: F811
    """Requests of one conversation alternating between two stores (two replicas),
    several clients at once: each message is stored once, on one path, in order."""
    from memory_core.store.pg import PgStore

    url = pgcluster.fresh_database(pg_url, "k_alternate")
    stores = [PgStore(url, max_size=2), PgStore(url, max_size=2)]
    new: list[list[int]] = []  # per request: messages each replica stored
    try:
        def client(n: int) -> None:
            scope = Scope("t", "r", f"s{n}")
            hist: list[Any] = []
            for turn in range(12):
                hist.append(_user(f"client {n} turn {turn}"))
                store = stores[turn % 2]
                # Each request reaches both replicas at once (a client's retry).
                def job(tx: Any, ticket: CaptureTicket, h: list[Any], now: float) -> Any:
                    return capture.capture_request(tx, ticket, h, {}, now)
                futures = [s.write_tx(job, CaptureTicket(scope, f"{n}-{turn}"), list(hist),
                                      float(turn))
                           for s in (store, stores[(turn + 1) % 2])]
                stored = [f.result(30).new_ids for f in futures]
                new.append(sorted(len(ids) for ids in stored))
                hist.append({"role": "assistant", "content": f"reply {n}.{turn}"})

        threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        # One replica stored the request's new messages (the previous answer and the
        # question; the first question alone), the other nothing.
        assert sorted(new) == sorted([[0, 1]] * 4 + [[0, 2]] * 44)

        def rows(tx: Any, n: int) -> dict[str, list[Any]]:
            return tx.operator.session_rows("t", "r", f"s{n}")
        for n in range(4):
            got = stores[n % 2].read_tx(rows, n)
            assert len(got["threads"]) == 1
            texts = [m["text"] for m in got["messages"]]
            assert len(texts) == 23 and len(set(texts)) == 23  # 12 questions, 11 replies
            assert [m["parent_id"] for m in got["messages"][1:]] == [
                m["id"] for m in got["messages"][:-1]]
    finally:
        for s in stores:
            s.close()


def test_a_batch_whose_connection_dies_fails_and_the_next_one_commits(
        pg_url: str) -> None:  # noqa: F811
    """The server ends the writer's connection in the middle of a job (a restart, a
    failover): every job of that batch fails with StoreError, nothing of it is
    kept, and the next write connects again."""
    import psycopg

    from memory_core.store.pg import PgStore

    url = pgcluster.fresh_database(pg_url, "k_dies")
    store = PgStore(url, max_size=2)
    try:
        inside, release = threading.Event(), threading.Event()

        def doomed(tx: Any) -> int:
            tx.capture.new_thread("t", "r", "", 1.0, None, None)
            inside.set()
            assert release.wait(30)
            return int(tx.capture.new_thread("t", "r", "", 2.0, None, None))

        fut = store.write_tx(doomed)
        assert inside.wait(30)
        with psycopg.connect(url, autocommit=True) as conn:
            killed = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                " AND granted AND pid <> pg_backend_pid()").fetchall()
        assert killed == [(True,)]
        release.set()
        with pytest.raises(StoreError, match="write failed"):
            fut.result(30)
        assert store.write_tx(lambda tx: tx.capture.new_thread("t", "r", "", 3.0, None, None)
                              ).result(30) == 2  # id 1 was drawn by the lost batch
        assert store.read_tx(lambda tx: tx.operator.threads_page(
            tenant="t", role=None, session=None, limit=10, offset=0))[0] == 1
    finally:
        release.set()
        store.close()


@pytest.mark.parametrize(("raw_json", "name"), [
    ('{"role": "user", "name": "alice"}', "alice"),
    ('\n\t {"name": "bob"}', "bob"),
    ('{"role": "user"}', None),
    ('{"name": null}', None),
    ('[{"name": "x"}]', None),
    ("not json {", None),
])
def test_a_message_name_is_read_from_its_raw_json_only_when_it_is_an_object(
        backend: tuple[Store, Raw], raw_json: str, name: str | None) -> None:
    store, raw = backend
    _capture(store, S1, "r", [_user("hello")], 1.0)
    raw("UPDATE messages SET raw_json = ? WHERE id = 1", (raw_json,))
    rows = store.read_tx(lambda tx: tx.index_source.doc_rows("message", [1]))
    assert rows[0]["name"] == name
    facts = store.read_tx(lambda tx: tx.search.candidate_facts("message", [1], None, True))
    assert facts[0][5] == name
    counts = store.read_tx(lambda tx: tx.index.expected_documents({"message"}, set()))
    assert counts["vector"]["message"] == 1


def _one_job_capture_turn(store: Any, session: str, turn: int, hist: list[Any]) -> None:
    """One chat turn's capture, as the engine queues it: the request, then the answer."""
    hist.append({"role": "user", "content": f"question {turn}"})
    ticket = CaptureTicket(Scope("t", "r", session), f"{session}-{turn}")
    store.write_tx(lambda tx, h=list(hist): capture.capture_request(
        tx, ticket, h, {}, 1.0)).result(30)
    answer = {"role": "assistant", "content": f"answer {turn}"}
    store.write_tx(lambda tx: capture.capture_response(tx, ticket, [answer], {}, 2.0)
                   ).result(30)
    hist.append(answer)


def test_postgresql_round_trips_are_counted_by_job(pg_url: str) -> None:  # noqa: F811
    """Every statement a job sends is one round trip, counted under the job's name;
    a write batch of one job adds its BEGIN, lock and COMMIT to that job. A turn
    deep into a conversation (the path cache warm) makes a fixed number of round
    trips, whatever the history's length."""
    from memory_core.store.pg import PgStore

    store = PgStore(pgcluster.fresh_database(pg_url, "k_trips"), max_size=2)
    try:
        def two(tx: Any) -> None:
            tx.capture.node("t", "r", "s", "a")
            tx.capture.node("t", "r", "s", "b")

        store.write_tx(two).result(30)
        store.read_tx(lambda tx: tx.capture.node("t", "r", "s", "a"))
        got = store.round_trips.snapshot()
        assert got["test_store_contract.test_postgresql_round_trips_are_counted_by_job"
                   ".<locals>.two"] == (1, 2 + WRITE_OVERHEAD)
        assert got["test_store_contract.test_postgresql_round_trips_are_counted_by_job"
                   ".<locals>.<lambda>"] == (1, 1)

        hist: list[Any] = [{"role": "system", "content": "be brief"}]
        per_turn = []
        for turn in range(12):
            before = sum(t for _j, t in store.round_trips.snapshot().values())
            _one_job_capture_turn(store, "deep", turn, hist)
            per_turn.append(sum(t for _j, t in store.round_trips.snapshot().values())
                            - before)
        assert per_turn[-1] == per_turn[-2] == per_turn[-6] == CAPTURE_TURN_TRIPS, per_turn
    finally:
        store.close()


WRITE_OVERHEAD = 1
"""COMMIT (BEGIN and the advisory lock go with the job's first statement)."""
CAPTURE_TURN_TRIPS = 7
"""Round trips of one turn's capture (request and answer), deep in a conversation."""
_AWKWARD = "a\x00b \uffff0 \uffff1 \\u0000 \\\\u0000 \\uffff1 \x00\uffff"
"""NUL, the PostgreSQL backend's escape (U+FFFF) and JSON escapes of both, as they
come (memory_core/store/pg_text.py)."""


def test_a_message_with_nul_characters_round_trips(backend: tuple[Store, Raw]) -> None:
    """PostgreSQL's text cannot hold NUL: the store still gives back every character
    of the text, the raw JSON and the name (read from that JSON) SQLite gives."""
    store, _raw = backend
    # (SQLite's json_extract ends a name at a NUL: the name holds the escape only)
    message = {"role": "user", "content": _AWKWARD, "name": "x\uffff0y\\u0000"}
    result = _capture(store, S1, "r", [message], 1.0, reply="ok\x00")
    (row,) = store.read_tx(lambda tx: tx.history.path_messages(list(result.message_ids)))
    assert row["text"] == _AWKWARD
    assert json.loads(row["raw_json"]) == message
    docs = store.read_tx(lambda tx: tx.index_source.doc_rows("message", [row["id"]]))
    assert docs[0]["name"] == message["name"] and docs[0]["text"] == _AWKWARD
    answer = store.read_tx(lambda tx: tx.history.path_messages([row["id"] + 1]))
    assert answer[0]["text"] == "ok\x00"
    # equality on an encoded column: the same conversation is found again, not re-stored
    again = _capture(store, S1, "r2", [message], 2.0)
    assert again.new_ids == () and again.message_ids == result.message_ids


@given(st.text(alphabet=st.sampled_from(["\x00", "\uffff", "\\", "u", "0", "f", "1", "a"]),
               max_size=24))
@settings(max_examples=400)
def test_the_postgresql_text_encoding_is_lossless_and_nul_free(text: str) -> None:
    from memory_core.store import pg_text

    stored = pg_text.encode(text)
    assert "\x00" not in stored and "\\u0000" not in stored.replace("\\\\", "")
    assert pg_text.decode(stored) == text
    if "\x00" not in text and "\uffff" not in text and "\\u" not in text:
        assert stored == text


# -- text that holds NUL, U+FFFF or JSON escapes of them (pg_text), inside SQL --------------------
_ODD_TEXTS = ("a\x00b", "x\uffffy", "plain 0 and 1", "json \\u0000 escape", "kept \\\\u0000",
              "Port\x00\x00END", "\uffff0 \uffff1", "none here")
"""Item texts: NUL, the escape character, JSON escapes, and ordinary text with the
digits the escape pairs end in."""
_NEEDLES = ("\x00", "\uffff", "0", "1", "b", "\\u0000", "u0000", "ffff", "\x00e", "PORT",
            "y", "\uffff1", "x")


def _insert_items(tx: Any, texts: tuple[str, ...], subjects: tuple[str | None, ...]) -> None:
    for i, (text, subject) in enumerate(zip(texts, subjects, strict=True)):
        tx.item_writes.insert_item(
            tenant="t1", role="coder", session="s1", thread_id=1, kind="fact",
            subject=subject, text=text, value=None, value_text=None, unit=None,
            condition=None, source_message_id=None, evidence="user", lang=None,
            now=100.0 + i, data="{}")


def _folded(text: str) -> str:
    return text.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                        "abcdefghijklmnopqrstuvwxyz"))


def test_a_search_finds_exactly_the_items_containing_nul_or_the_escape(
        backend: tuple[Store, Raw]) -> None:
    """The operator search and search's exact-match flag find what contains the
    string, character for character, on both backends: a NUL does not end a string
    (SQLite's LIKE did), and a search never matches inside an escape pair of
    pg_text (``"0"`` in a NUL's ``ESC 0``) nor misses text the JSON layer rewrote."""
    store, _raw = backend
    _w(store, _insert_items, _ODD_TEXTS, (None,) * len(_ODD_TEXTS))
    ids = list(range(1, len(_ODD_TEXTS) + 1))
    for needle in _NEEDLES:
        want = [i for i, t in zip(ids, _ODD_TEXTS, strict=True)
                if _folded(needle) in _folded(t)]
        total, rows = store.read_tx(lambda tx, n=needle: tx.operator.items_page(
            tenant="t1", role=None, status=None, kind=None, thread_id=None, text=n,
            limit=100, offset=0))
        assert (total, sorted(r["id"] for r in rows)) == (len(want), want), repr(needle)
        facts = store.read_tx(lambda tx, n=needle: tx.search.candidate_facts(
            "item", ids, n, False))
        exact = sorted(r[0] for r in facts if r[3])
        assert exact == [i for i, t in zip(ids, _ODD_TEXTS, strict=True)
                         if needle in _folded(t)], repr(needle)
    # a page of such a search: counted and cut in SQL as any other
    total, rows = store.read_tx(lambda tx: tx.operator.items_page(
        tenant="t1", role=None, status=None, kind=None, thread_id=None, text="\x00",
        limit=1, offset=1))
    assert (total, [r["id"] for r in rows]) == (2, [1])


def test_subject_lookups_compare_the_real_characters(backend: tuple[Store, Raw]) -> None:
    """The duplicate checks' subject containment (``instr`` both ways) on subjects
    holding NUL and the escape character."""
    store, _raw = backend
    subjects = ("port\x00x", "a\uffffb", "port", "\\u0000", "10")
    _w(store, _insert_items, tuple(f"item {i}" for i in range(5)), subjects)
    for looked_up in ("0", "1", "\x00", "\uffff", "port", "port\x00xy", "u0000", "b"):
        want = [i for i, s in zip(range(5, 0, -1), reversed(subjects), strict=True)
                if s != looked_up and (looked_up in s or s in looked_up)]
        hits = store.read_tx(lambda tx, s=looked_up: [r["id"] for r in tx.item_writes.subject_hits(
            "t1", "coder", ["fact"], s, "")])
        assert hits == want, repr(looked_up)
        ids = store.read_tx(lambda tx, s=looked_up: tx.item_writes.subject_window_ids(
            "t1", "coder", ["fact"], s, "", 0, 5, 10))
        assert ids == [i for i, s in zip(range(5, 0, -1), reversed(subjects), strict=True)
                       if looked_up in s or s in looked_up], repr(looked_up)


def test_a_parents_context_is_cut_at_real_characters(backend: tuple[Store, Raw]) -> None:
    """``doc_rows``' parent text is its first characters, NULs and escape characters
    counted as one each (SQLite's substr ended it at a NUL; PostgreSQL's counted and
    split escape pairs)."""
    store, _raw = backend
    parent = "\x00\uffff\x00" * 4 + "tail of the question"
    hist = [_user(parent)]
    first = _capture(store, S1, "r1", hist, 1.0, reply="answer")
    child = first.message_ids[-1] + 1
    (row,) = store.read_tx(lambda tx: tx.index_source.doc_rows(
        "message", [child], context_chars=7, embed_chars=13))
    assert row["ctx_parent"] == parent[:7]
    assert row["embed_parent"] == parent[:13]
    (row,) = store.read_tx(lambda tx: tx.index_source.doc_rows(
        "message", [child], context_chars=500, embed_chars=500))
    assert row["ctx_parent"] == row["embed_parent"] == parent


def test_an_agent_memorys_length_counts_real_characters(backend: tuple[Store, Raw]) -> None:
    """500 characters fit whatever they are (PostgreSQL's CHECK counted a NUL as its
    two-character escape); 501 do not, NUL first or not (SQLite's CHECK stopped
    counting at the NUL)."""
    store, _raw = backend

    def put(content: str) -> Callable[[Any], int]:
        return lambda tx: tx.agent_memories.upsert(
            tenant="t1", role="coder", category="memo", key="k", title="K", content=content,
            now=1.0)

    fits = "\x00\uffff" * 150 + "a" * 200
    mid = _w(store, put(fits))
    (doc,) = store.read_tx(lambda tx: tx.index_source.doc_rows("agent_memory", [mid]))
    assert doc["text"] == "K\n" + fits
    for content in ("\x00" + "a" * 500, "a" * 501):
        with pytest.raises((ValueError, StoreError)):
            _w(store, put(content))
    (doc,) = store.read_tx(lambda tx: tx.index_source.doc_rows("agent_memory", [mid]))
    assert doc["text"] == "K\n" + fits


@given(st.text(alphabet=st.sampled_from(["\x00", "\uffff", "\\", "u", "0", "f", "1", "a"]),
               max_size=24))
@settings(max_examples=200, deadline=None)
def test_postgresqls_length_of_stored_text_counts_real_characters(pg_url: str,  # noqa: F811
                                                                  text: str) -> None:
    """``lcm_text_length`` (migration 4, the agent-memory CHECK) of a stored value is
    the length of the string it decodes to."""
    import psycopg

    from memory_core.store import pg_migrations, pg_text

    if pg_url not in _LENGTH_DB:  # one migrated database per cluster, not per example
        _LENGTH_DB[pg_url] = pgcluster.fresh_database(pg_url, "k_text_length")
        with psycopg.connect(_LENGTH_DB[pg_url], autocommit=True) as conn:
            pg_migrations.apply_migrations(conn)
    with psycopg.connect(_LENGTH_DB[pg_url], autocommit=True) as conn:
        pg_text.register(conn)
        got = conn.execute("SELECT lcm_text_length(%s::text)", (text,)).fetchone()
        assert got is not None and got[0] == len(text)


_LENGTH_DB: dict[str, str] = {}
