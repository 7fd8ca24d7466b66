"""SearchService: scope isolation, rebuild = incremental, deletions, ranking, model change."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search import HashingEmbedder, SearchConfig, SerialEmbedder, make_label
from memory_core.search.fulltext import TantivyTextIndex
from tests.conftest import sql_read, sql_write
from tests.test_search_support import (
    Conversation,
    capture_chat,
    hit_text,
    open_service,
    running_service,
)

A = Scope(tenant="tenantA", role="default")
A_OTHER_ROLE = Scope(tenant="tenantA", role="coder")
B = Scope(tenant="tenantB", role="default")


def test_filters_never_leak_across_tenant_or_role(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        a = capture_chat(engine, A, ["secret launch codes for project falcon"])
        r = capture_chat(engine, A_OTHER_ROLE, ["secret launch codes for project falcon"])
        b = capture_chat(engine, B, ["secret launch codes for project falcon"])
        assert svc.wait_idle(20)
        for mode in ("bm25", "vector", "hybrid"):
            for scope, ids in ((A, a), (A_OTHER_ROLE, r), (B, b)):
                hits = svc.search(scope.tenant, scope.role, "secret falcon codes", mode=mode)
                assert [h.ref_id for h in hits] == ids, (mode, scope)
            assert svc.search("tenantC", "default", "secret falcon", mode=mode) == []


def test_thread_session_and_kind_filters(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        one = capture_chat(engine, A, ["alpha shared topic"], request_id="1")
        two = capture_chat(engine, A, ["beta shared topic"], request_id="2")
        sess = capture_chat(engine, Scope("tenantA", "default", "s1"), ["gamma shared topic"])
        assert svc.wait_idle(20)
        t1 = sql_read(engine, lambda c: c.execute(
            "SELECT thread_id FROM messages WHERE id=?", (one[0],)).fetchone()[0])
        for mode in ("bm25", "vector", "hybrid"):
            hits = svc.search("tenantA", "default", "shared topic", mode=mode, thread_ids=[t1])
            assert [h.ref_id for h in hits] == one, mode
            hits = svc.search("tenantA", "default", "shared topic", mode=mode, session="s1")
            assert [h.ref_id for h in hits] == sess, mode
            assert svc.search("tenantA", "default", "shared topic", mode=mode,
                              kinds=["summary"]) == []
        assert len(svc.search("tenantA", "default", "shared topic")) == 3
        assert two[0] not in {h.ref_id for h in svc.search(
            "tenantA", "default", "shared", thread_ids=[t1])}


def _insert_item(conn, text: str, status: str = "active") -> int:  # type: ignore[no-untyped-def]
    now = time.time()
    cur = conn.execute(
        "INSERT INTO memory_items (tenant, role, kind, text, status, created_at, updated_at)"
        " VALUES (?,?,?,?,?,?,?)", ("tenantA", "default", "fact", text, status, now, now))
    conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                 (cur.lastrowid,))
    return int(cur.lastrowid)


def _retract(conn, item_id: int) -> None:  # type: ignore[no-untyped-def]
    conn.execute("UPDATE memory_items SET status='retracted' WHERE id=?", (item_id,))
    conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                 (item_id,))


def _delete_message(conn, mid: int) -> None:  # type: ignore[no-untyped-def]
    conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?, 'delete')",
                 (mid,))


def test_deletion_removes_from_both_indexes(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    try:
        ids = capture_chat(engine, A, ["the orchid needs water weekly", "orchid pot is blue"])
        item = sql_write(engine, _insert_item, "orchid fertiliser monthly")
        assert svc.wait_idle(20)
        for mode in ("bm25", "vector"):
            found = {(h.kind, h.ref_id) for h in svc.search("tenantA", "default", "orchid",
                                                             mode=mode)}
            assert found == {("message", ids[0]), ("message", ids[1]), ("item", item)}, mode
        sql_write(engine, _delete_message, ids[0])
        sql_write(engine, _retract, item)
        assert svc.wait_idle(20)
        for mode in ("bm25", "vector", "hybrid"):
            found = {(h.kind, h.ref_id) for h in svc.search("tenantA", "default", "orchid",
                                                             mode=mode)}
            assert found == {("message", ids[1])}, mode
        assert svc.vectors is not None and svc.vectors.count() == 1
    finally:
        svc.close()
        engine.close()
    # deletions survive a reopen (saved partitions, committed Tantivy)
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    try:
        for mode in ("bm25", "vector"):
            assert [h.ref_id for h in svc.search("tenantA", "default", "orchid",
                                                 mode=mode)] == [ids[1]]
    finally:
        svc.close()
        engine.close()


def _snapshot(svc, queries: list[str]) -> list:  # type: ignore[no-untyped-def]
    out = []
    for q in queries:
        for mode in ("bm25", "vector", "hybrid"):
            hits = svc.search("tenantA", "default", q, mode=mode, k=20)
            out.append((q, mode, [(h.kind, h.ref_id, round(h.score, 5)) for h in hits]))
    return out


def test_rebuild_equals_incremental(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    texts = [f"note {i} about {w} and {v}" for i, (w, v) in enumerate(
        zip(["rust", "python", "tantivy", "sqlite", "hnsw"] * 8,
            ["speed", "safety", "search", "storage", "vectors", "graphs", "tests", "docs"] * 5,
            strict=True))]
    queries = ["rust speed", "search", "vectors graphs", "note 7", "sqlite*", "python safety"]
    try:
        capture_chat(engine, A, texts[:20], request_id="x")
        capture_chat(engine, A, texts, request_id="y")
        item = sql_write(engine, _insert_item, "python safety item")
        # inserted and retracted in one commit: the indexer never holds it, so no
        # deleted document skews the incremental index's BM25 statistics (whether it
        # saw the two apart was up to its polling: scores 8 % apart on PostgreSQL)
        sql_write(engine, lambda c: _retract(c, _insert_item(c, "gone search")))
        assert svc.wait_idle(20)
        incremental = _snapshot(svc, queries)
        assert any(h[0] == "item" and h[1] == item for _q, _m, hits in incremental for h in hits)
        counts = svc.rebuild()
        assert counts["message"] == 40 and counts["item"] == 1
        rebuilt = _snapshot(svc, queries)
        # The same hits in the same order. Scores agree to 2 %: Tantivy's BM25
        # statistics (document count, mean field length) still count a deleted
        # document (the retracted item) until a merge drops its segment, and when
        # that merge happens is up to Tantivy's background merge policy.
        assert [(q, m, [(k, i) for k, i, _ in hits]) for q, m, hits in rebuilt] == \
            [(q, m, [(k, i) for k, i, _ in hits]) for q, m, hits in incremental]
        for (_q, _m, new_hits), (_q2, _m2, old_hits) in zip(rebuilt, incremental, strict=True):
            for (_k, _i, new_score), (_k2, _i2, old_score) in zip(new_hits, old_hits,
                                                                   strict=True):
                assert new_score == pytest.approx(old_score, rel=0.02)
    finally:
        svc.close()
        engine.close()


def test_hybrid_ranks_double_evidence_first_and_boosts_exact(tmp_path: Path) -> None:
    with running_service(tmp_path, exact_match_boost=0.5, neighbor_weight=0.0) as (engine, svc):
        ids = capture_chat(engine, A, [
            "blue green deployment strategy",     # both words, exact phrase
            "green deployment blue strategy",     # both words, not the phrase
            "deployment checklist",
            "unrelated lunch menu",
        ])
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", "blue green deployment", k=4)
        assert [h.ref_id for h in hits[:2]] == [ids[0], ids[1]]
        assert hits[0].boosts.get("exact") == 0.5 and "exact" not in hits[1].boosts
        assert hits[0].bm25_rank is not None and hits[0].vector_rank is not None
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
        assert ids[3] not in [h.ref_id for h in hits[:3]]
        # min_score applies after the boosts: only the exact-match hit clears 1.2
        svc.config = SearchConfig(min_score=1.2, exact_match_boost=0.5,
                                  neighbor_weight=0.0, session_boost=0.0).clamped()
        strict = svc.search("tenantA", "default", "blue green deployment", k=4)
        assert [h.ref_id for h in strict] == [ids[0]]


def test_model_change_reembeds_vectors(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    ids = capture_chat(engine, A, ["vectors are stamped with their model"])
    assert svc.wait_idle(20)
    svc.close()
    svc = open_service(tmp_path, engine, embedder=SerialEmbedder(HashingEmbedder(32)))
    svc.start()
    try:
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", "stamped model", mode="vector")
        assert [h.ref_id for h in hits] == ids
        models = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT model, dim FROM embeddings WHERE kind='message'")])
        assert models == [("hashing-32|r1|ctx500", 32)]
    finally:
        svc.close()
        engine.close()


def test_text_index_upsert_replaces_by_i64_key(tmp_path: Path) -> None:
    from memory_core.search import IndexDoc, SearchFilter

    ix = TantivyTextIndex(tmp_path / "t")
    doc = IndexDoc("summary", 7, "t", "r", "first version")
    ix.upsert([doc])
    ix.upsert([IndexDoc("summary", 7, "t", "r", "second version")])
    ix.commit()
    assert ix.count() == 1
    assert ix.search("first", SearchFilter("t", "r"), 5) == []
    assert ix.search("second", SearchFilter("t", "r"), 5)[0][0] == make_label("summary", 7)
    ix.delete([make_label("summary", 7)])
    ix.commit()
    assert ix.count() == 0
    ix.close()
    assert np.int64(make_label("summary", 7)) > 0


def test_current_memory_items_rank_first_and_superseded_ones_below(tmp_path: Path) -> None:
    """In a search over every kind, the item a user stated outranks the chatter
    around it, and a corrected value ranks below the value that replaced it."""
    with running_service(tmp_path) as (engine, svc):
        say = Conversation(engine, A).say
        say("The gateway timeout is 280 s.", "Gateway timeout noted: gateway timeout 280 s.")
        say("Actually, the gateway timeout is 150 s.", "Gateway timeout, gateway timeout: ok.")
        say("Gateway timeout talk again: the gateway timeout gateway.", "Sure, gateway timeout.")
        engine.flush(10)  # extraction is queued: the items exist after this
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", "gateway timeout", mode="hybrid", k=20)
        texts = {h.ref_id: hit_text(engine, "item", h.ref_id) for h in hits if h.kind == "item"}
        assert hits[0].kind == "item" and "150 s" in texts[hits[0].ref_id]
        assert "memory" in hits[0].boosts
        order = [(h.kind, h.ref_id) for h in hits]
        ranks = {("150" if "150" in t else "280"): order.index(("item", i))
                 for i, t in texts.items()}
        assert ranks["150"] < ranks["280"]
        old = next(h for h in hits if h.kind == "item" and "280" in texts[h.ref_id])
        assert old.boosts.get("superseded") == -0.7  # factor 0.3
        # Each item's source turn is folded into the item: one statement, one place.
        sources = sql_read(engine, lambda c: {int(r[0]) for r in c.execute(
            "SELECT source_message_id FROM memory_items WHERE source_message_id IS NOT NULL")})
        assert sources and not sources & {h.ref_id for h in hits if h.kind == "message"}
        assert any(h.kind == "message" for h in hits)  # the replies are still there
        # Messages only (as LoCoMo searches): the prior does not apply.
        plain = svc.search("tenantA", "default", "gateway timeout", mode="hybrid",
                           kinds=["message"])
        assert all("memory" not in h.boosts for h in plain)


def _supersede(conn, old: int, new: int, created_at: float) -> None:  # type: ignore[no-untyped-def]
    """Mark ``old`` replaced by ``new`` (both sides of the link, as memory.py writes
    them), give ``new`` its creation time, and queue both for the indexer."""
    conn.execute("UPDATE memory_items SET status='superseded', superseded_by=? WHERE id=?",
                 (new, old))
    conn.execute("UPDATE memory_items SET supersedes=?, created_at=? WHERE id=?",
                 (old, created_at, new))
    for ref in (old, new):
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('item', ?, 'upsert')",
                     (ref,))


def _chain(conn, t0: float) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """A statement corrected twice, each correction naming only the new value, and
    an unrelated item sharing a word with the question; all in tenantA."""
    first = _insert_item(conn, "The nightly ledger export runs on the Falcon cluster.")
    second = _insert_item(conn, "Correction: Osprey, not that one.")
    third = _insert_item(conn, "No wait, make it Kestrel.")
    _insert_item(conn, "The ledger dashboard loads slowly on Mondays.")
    conn.execute("UPDATE memory_items SET created_at=?", (t0,))
    _supersede(conn, first, second, t0 + 60)
    _supersede(conn, second, third, t0 + 120)
    return first, second, third


_LEDGER = "which cluster runs the nightly ledger export"


@pytest.mark.parametrize("embedder", ["hashing", None])
def test_a_match_on_a_corrected_value_finds_the_value_that_replaced_it(
        tmp_path: Path, embedder: Any) -> None:
    """A correction of a correction that names only the new value ("No wait, make
    it Kestrel.") is found through the words of the first statement: the
    superseded statements match, and their current successor ranks first with a
    ``successor`` boost, above an unrelated item and above the old values. Without
    an embedder the successor is in neither list and joins the candidates with its
    thread and time. A search up to a moment before the last correction does not
    return it (the filters hold for successors too); neither does another tenant's
    search nor a search of messages alone."""
    t0 = time.time() - 3600
    with running_service(tmp_path, embedder=embedder) as (engine, svc):
        first, _, third = sql_write(engine, _chain, t0)
        sql_write(engine, lambda c: c.execute(
            "INSERT INTO memory_items (tenant, role, kind, text, status, created_at,"
            " updated_at) VALUES ('tenantB', 'default', 'fact', ?, 'active', ?, ?)",
            ("The nightly ledger export runs on the Heron cluster.", t0, t0)))
        msgs = capture_chat(engine, A, ["which cluster runs the nightly ledger export?"])
        sql_write(engine, lambda c: c.execute(
            "INSERT INTO index_outbox (kind, ref_id, op) SELECT 'item', id, 'upsert'"
            " FROM memory_items WHERE tenant='tenantB'"))
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", _LEDGER, mode="hybrid", k=10,
                          end_time=t0 + 600)
        top = hits[0]
        assert (top.kind, top.ref_id) == ("item", third)
        assert top.boosts.get("successor", 0) > 0 and "memory" in top.boosts
        assert top.created_at == pytest.approx(t0 + 120) and top.thread_id == 0
        if embedder is None:
            assert top.bm25_rank is None and top.vector_rank is None
        ranks = {h.ref_id: i for i, h in enumerate(hits) if h.kind == "item"}
        assert ranks[third] < ranks[first] and "superseded" in hits[ranks[first]].boosts
        items = svc.search("tenantA", "default", _LEDGER, mode="hybrid", kinds=["item"])
        assert items[0].ref_id == third
        # Up to a moment between the corrections: the later correction is not
        # returned at all.
        before = svc.search("tenantA", "default", _LEDGER, mode="hybrid", k=10,
                            end_time=t0 + 90)
        assert first in {h.ref_id for h in before if h.kind == "item"}
        assert third not in {h.ref_id for h in before if h.kind == "item"}
        other = svc.search("tenantB", "default", _LEDGER, mode="hybrid")
        assert other and all("successor" not in h.boosts for h in other)
        plain = svc.search("tenantA", "default", _LEDGER, mode="hybrid", kinds=["message"])
        assert [h.ref_id for h in plain] == msgs[:1]


def test_a_broken_chain_lifts_nothing_and_a_better_successor_keeps_its_score(
        tmp_path: Path) -> None:
    """No successor for a chain that ends on a retracted item or loops back on
    itself (the superseded items keep their scaled scores); a successor that
    matches better than the item it replaced keeps its own score (no boost)."""
    t0 = time.time() - 3600
    with running_service(tmp_path, embedder=None) as (engine, svc):
        def write(conn):  # type: ignore[no-untyped-def]
            gone = _insert_item(conn, "The invoice archive lives in bucket alpha.")
            retracted = _insert_item(conn, "Actually bucket beta.")
            loop_a = _insert_item(conn, "The audit mirror syncs every hour.")
            loop_b = _insert_item(conn, "Make that two.")
            old = _insert_item(conn, "The report renderer uses 4 workers.")
            new = _insert_item(conn, "Correction: the report renderer uses 6 workers per"
                                     " region.")
            conn.execute("UPDATE memory_items SET created_at=?", (t0,))
            _supersede(conn, gone, retracted, t0 + 60)
            _retract(conn, retracted)
            _supersede(conn, loop_a, loop_b, t0 + 60)
            _supersede(conn, loop_b, loop_a, t0 + 60)
            _supersede(conn, old, new, t0 + 60)
            return gone, retracted, loop_a, loop_b, new

        gone, retracted, loop_a, loop_b, new = sql_write(engine, write)
        assert svc.wait_idle(20)
        archive = svc.search("tenantA", "default", "where does the invoice archive live",
                             mode="hybrid")
        assert [h.ref_id for h in archive] == [gone] and "superseded" in archive[0].boosts
        mirror = svc.search("tenantA", "default", "how often does the audit mirror sync",
                            mode="hybrid")
        assert {h.ref_id for h in mirror} == {loop_a}
        assert all("successor" not in h.boosts for h in mirror)
        render = svc.search("tenantA", "default", "report renderer workers per region",
                            mode="hybrid")
        assert render[0].ref_id == new and "successor" not in render[0].boosts


def test_task_lines_are_found_by_the_words_people_ask_with(tmp_path: Path) -> None:
    """A "Blocked: …" / "目标：…" line carries its label's synonyms in the text index,
    so a question that never says "blocked" ("what are we stuck on?", "卡住") finds it
    by BM25, in English and CJK; an ordinary line gains nothing."""
    from memory_core.search.docs import task_label_keys

    assert "stuck" in task_label_keys("Blocked: the security team must approve the image")
    assert "目的" in task_label_keys("目标：月底前把报表服务迁到新的集群")  # full-width colon
    assert "足止め" in task_label_keys("ブロッカー：ネットワーク許可がまだ下りていない")
    assert task_label_keys("We are blocked by nothing, all good.") == ""
    with running_service(tmp_path) as (engine, svc):
        capture_chat(engine, A, [
            "Goal: move the billing jobs to the new scheduler",
            "Blocked: the security team must approve the new base image",
            "阻塞：新集群的网络策略还没批下来",
            "The security review happens on Tuesdays.",
        ])
        assert svc.wait_idle(20)

        def top(query: str, n: int = 1) -> list[str]:
            hits = svc.search("tenantA", "default", query, mode="bm25", kinds=["message"])
            return [hit_text(engine, "message", h.ref_id) for h in hits[:n]]

        assert top("what are we stuck on")[0].startswith("Blocked:")
        assert top("what is our aim")[0].startswith("Goal:")
        # both blocked lines (the synonyms are the same in every language), nothing else
        assert sorted(t[:2] for t in top("眼下有什么事情卡住我们了吗", 2)) == ["Bl", "阻塞"]


def test_memory_prior_covers_agent_memories_and_task_state_turns(tmp_path: Path) -> None:
    """In a search over every kind, memory of every sort gets the memory prior: an
    agent memory (a preference set by the operator) and the turn that states an open
    goal rank with the extracted items, above chatter of the same sitting; a
    replaced goal's turn is scaled as superseded. Plain turns keep the session boost
    and memory does not get it on top."""
    with running_service(tmp_path) as (engine, svc):
        say = Conversation(engine, A).say
        say("Goal: move the billing jobs to the new scheduler", "OK, billing jobs it is.")
        say("Goal: move the billing and payroll jobs to the new scheduler before the audit",
            "Noted, payroll jobs too.")
        say("The billing jobs scheduler chatter again, billing jobs.", "Sure, billing jobs.")
        engine.set_agent_memory(tenant="tenantA", role="default", category="user_preferences",
                                key="billing_report", title="Billing report",
                                content="Billing jobs reports go out as CSV")
        engine.flush(10)
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", "billing jobs", mode="hybrid", k=20)
        texts = {(h.kind, h.ref_id): hit_text(engine, h.kind, h.ref_id) for h in hits}
        by_text = {texts[(h.kind, h.ref_id)]: h for h in hits if (h.kind, h.ref_id) in texts}
        pref = by_text["Billing jobs reports go out as CSV"]
        new_goal = next(h for t, h in by_text.items() if "payroll" in t and t.startswith("Goal"))
        old_goal = by_text["Goal: move the billing jobs to the new scheduler"]
        chatter = next(h for h in hits if h.kind == "message"
                       and texts[(h.kind, h.ref_id)] == "Sure, billing jobs.")
        assert "memory" in pref.boosts and "session" not in pref.boosts
        assert "memory" in new_goal.boosts and "session" not in new_goal.boosts
        assert "superseded" in old_goal.boosts
        assert "session" in chatter.boosts and "memory" not in chatter.boosts
        order = [(h.kind, h.ref_id) for h in hits]

        def rank(h: Any) -> int:
            return order.index((h.kind, h.ref_id))

        assert rank(new_goal) < rank(old_goal)
        # no plain turn gains more from its context than memory gains from the prior
        assert chatter.boosts["session"] + chatter.boosts.get("neighbours", 0.0) <= \
            new_goal.boosts["memory"]


def test_a_sibling_item_does_not_take_its_turns_score(tmp_path: Path) -> None:
    """A turn with two statements yields two items; a query about one of them lifts
    that item, not the other one (a mere vector neighbour of the query), and a
    search of messages alone gives task-state turns no memory prior."""
    with running_service(tmp_path) as (engine, svc):
        say = Conversation(engine, A).say
        say("We decided to use Postgres for the ledger. By the way my dentist appointment"
            " is on the ninth at Harbor Clinic.", "Noted.")
        say("Goal: move the billing jobs to the new scheduler", "OK, billing jobs it is.")
        engine.flush(10)
        assert svc.wait_idle(20)
        items = sql_read(engine, lambda c: {r[0]: r[1] for r in c.execute(
            "SELECT id, text FROM memory_items")})
        postgres = next(i for i, t in items.items() if "Postgres" in t)
        hits = svc.search("tenantA", "default", "dentist appointment Harbor Clinic",
                          mode="hybrid", k=10)
        sibling = next((h for h in hits if h.kind == "item" and h.ref_id == postgres), None)
        assert sibling is None or "source" not in sibling.boosts
        plain = svc.search("tenantA", "default", "billing jobs", mode="hybrid",
                           kinds=["message"])
        assert plain and all("memory" not in h.boosts for h in plain)


def test_a_tool_output_that_matches_the_words_is_memory(tmp_path: Path) -> None:
    """In a search over several kinds, a tool output among the best keyword matches
    gains the memory prior (an observation the agent made); one that only the
    vectors bring in does not, nor does any in a search of messages alone, nor with
    tool_output_prior_rank = 0."""
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Please run the sync suite."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "shell", "arguments": '{"cmd": "pytest tests/test_sync.py"}'}}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": "....F....\nFAILED tests/test_sync.py::test_reconnect_backoff"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2", "type": "function",
             "function": {"name": "shell", "arguments": '{"cmd": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "total 12 files in the tree"},
        {"role": "assistant", "content": "One check failed."},
        {"role": "user", "content": "The staging cluster has 12 nodes."},
    ]
    try:
        ticket, fut = engine.capture_request(A, "r1", history, {})
        ids = fut.result(10).message_ids
        engine.flush(10)
        assert svc.wait_idle(20)
        failed, listing = ids[2], ids[4]
        query = "which reconnect check failed in the sync run"
        hits = {(h.kind, h.ref_id): h for h in svc.search("tenantA", "default", query, k=50)}
        assert hits[("message", failed)].bm25_rank is not None
        assert "memory" in hits[("message", failed)].boosts
        assert hits[("message", listing)].bm25_rank is None  # a vector neighbour only
        assert "memory" not in hits[("message", listing)].boosts
        only = {h.ref_id: h for h in svc.search("tenantA", "default", query, k=50,
                                                kinds=("message",))}
        assert "memory" not in only[failed].boosts
        svc.config = dataclasses.replace(svc.config, tool_output_prior_rank=0)
        hits = {(h.kind, h.ref_id): h for h in svc.search("tenantA", "default", query, k=50)}
        assert "memory" not in hits[("message", failed)].boosts
    finally:
        svc.close()
        engine.close()


def test_keyword_hits_are_the_bm25_search_as_tuples(tmp_path: Path) -> None:
    """``keyword_hits`` (the injection block's searches) returns exactly what a
    ``bm25`` search returns, as (kind, ref_id, score), for one kind or several,
    hidden rounds left out or not; an unknown kind is a ValueError."""
    with running_service(tmp_path) as (engine, svc):
        capture_chat(engine, A, [
            "The staging database listens on port 6555 when the VPN is up.",
            "Noted: staging database on port 6555 behind the VPN.",
            "We decided to use Typesense for the search backend.",
            "Typesense it is; I will update the search config.",
            "The nightly backup keeps 19 days of snapshots.",
            "Nightly snapshots: 19 days, got it.",
        ])
        assert svc.wait_idle(20)
        for query in ("which port does the staging database use", "search backend",
                      "nightly snapshots", "nothing matches this"):
            for kinds in (("message",), ("item",), ("message", "item")):
                for hidden in (True, False):
                    hits = svc.search("tenantA", "default", query, k=7, kinds=list(kinds),
                                      mode="bm25", include_hidden=hidden)
                    assert svc.keyword_hits("tenantA", "default", query, k=7, kinds=kinds,
                                            include_hidden=hidden) == [
                        (h.kind, h.ref_id, h.score) for h in hits]
        assert svc.keyword_hits("tenantA", "default", "port 6555", k=5, kinds=("message",))
        with pytest.raises(ValueError):
            svc.keyword_hits("tenantA", "default", "x", k=5, kinds=("nope",))
