"""The injection's in-memory copy of active items always equals a fresh SELECT.

Real SQLite through the engine: extraction inserts items, corrections supersede,
retract and purge change and delete them, another tenant writes in between, the
change log is pruned, and a second engine (another process's view) makes changes
this cache never saw happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core.assembly.block import item_features, message_context
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.items.cache import ActiveItems, prune_changes
from memory_core.items.index import ItemIndex
from memory_core.models import Scope
from tests.conftest import sql_read, sql_write

A = Scope("t_a", "coder")
B = Scope("t_b", "coder")


def _say(engine: Engine, scope: Scope, history: list[Any], text: str) -> None:
    history.append({"role": "user", "content": text})
    ticket, fut = engine.capture_request(scope, "r", list(history), {})
    fut.result(10)
    reply = {"role": "assistant", "content": "ok"}
    engine.capture_response(ticket, [reply], {"outcome": "complete"}).result(10)
    history.append(reply)


def _fresh(engine: Engine, scope: Scope) -> list[tuple[Any, ...]]:
    rows = sql_read(engine, lambda c: c.execute(
        "SELECT id, status, text, supersedes FROM memory_items WHERE tenant=? AND role=?"
        " AND status='active' ORDER BY id DESC", (scope.tenant, scope.role)).fetchall())
    return [tuple(r) for r in rows]


def _cached(cache: ActiveItems, engine: Engine, scope: Scope) -> list[tuple[Any, ...]]:
    rows = engine.store.read_tx(cache.get, "db", scope.tenant, scope.role)
    return [(r["id"], r["status"], r["text"], r["supersedes"]) for r in rows]


def test_cached_active_items_equal_a_fresh_select_through_every_change(
        tmp_path: Path) -> None:
    engine = Engine(tmp_path / "d", MemoryConfig())
    other = Engine(tmp_path / "d", MemoryConfig())  # a second writer's view
    cache = ActiveItems(max_scopes=4)
    ha: list[Any] = [{"role": "system", "content": "s"}]
    hb: list[Any] = [{"role": "system", "content": "s"}]
    try:
        assert _cached(cache, engine, A) == _fresh(engine, A) == []
        _say(engine, A, ha, "The API timeout is 30 s when offline.")
        _say(engine, A, ha, "We decided to deploy the frontend on Render.")
        assert _cached(cache, engine, A) == _fresh(engine, A) and _fresh(engine, A)
        _say(engine, B, hb, "The export batch size is 500 rows.")  # another tenant
        _say(engine, A, ha, "Actually, the API timeout is 45 s when offline.")
        got = _cached(cache, engine, A)
        assert got == _fresh(engine, A)
        assert any(r[3] is not None for r in got)  # the correction, superseding
        assert all("30 s" not in r[2] for r in got)  # the old value left the cache
        assert _cached(cache, engine, B) == _fresh(engine, B) and _fresh(engine, B)
        victim = _fresh(engine, A)[0][0]
        other.retract(victim, "wrong")  # changed by someone else
        assert _cached(cache, engine, A) == _fresh(engine, A)
        assert victim not in [r[0] for r in _cached(cache, engine, A)]
        # Pruned past what the cache has seen: it reloads whole, still exact.
        _say(other, A, ha, "The upload limit is 80 MB for enterprise users.")
        engine.store.write_tx_sync(lambda tx: prune_changes(tx, keep=0))
        _say(other, A, ha, "The retry count is 7 for webhooks.")
        assert _cached(cache, engine, A) == _fresh(engine, A)
        other.purge(tenant="t_b")
        assert _cached(cache, engine, B) == _fresh(engine, B) == []
        assert _cached(cache, engine, A) == _fresh(engine, A) != []
    finally:
        other.close()
        engine.close()


def test_prune_keeps_the_newest_changes(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "d", MemoryConfig())
    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        for i in range(5):
            _say(engine, A, history, f"The limit number {i} is {i + 10} MB.")
        count = "SELECT COUNT(*), MAX(seq) FROM memory_item_changes"
        before, top = sql_read(engine, lambda c: tuple(c.execute(count).fetchone()))
        assert before >= 5
        assert engine.store.write_tx_sync(lambda tx: prune_changes(tx, keep=2)) == before - 2
        assert sql_read(engine, lambda c: tuple(c.execute(count).fetchone())) == (2, top)
    finally:
        engine.close()


def _index_state(view: Any) -> tuple[Any, ...]:
    """What assembly reads of a view: per live item its features, and the postings."""
    live = [s for s in range(view.n) if view.live[s]]
    items = sorted((int(view.ids[s]), float(view.weight[s]), view.terms[s],
                    bool(view.local[s]), bool(view.question[s]), bool(view.seen[s]),
                    int(view.src[s]), int(view.thread[s])) for s in live)
    ids_of = {s: int(view.ids[s]) for s in live}
    postings = {t: sorted(ids_of[s] for s in view.slots(t) if s in ids_of)
                for t in view.postings}
    around = {t: sorted(ids_of[s] for s in view.context_slots(t) if s in ids_of)
              for t in view.context_postings or ()}
    return (items, {t: p for t, p in postings.items() if p},
            {t: p for t, p in around.items() if p})


def _fresh_index(engine: Engine, scope: Scope, max_items: int = 5000) -> tuple[Any, ...]:
    rows = sql_read(engine, lambda c: c.execute(
        "SELECT * FROM memory_items WHERE tenant=? AND role=? AND status='active' ORDER BY id",
        (scope.tenant, scope.role)).fetchall())
    sources = sorted({r["source_message_id"] for r in rows if r["source_message_id"]})
    around = engine.store.read_tx(
        lambda tx: message_context(tx, "db", scope.tenant, scope.role, sources))
    return _index_state(ItemIndex(
        item_features, max_items, rows,
        context=lambda r: around.get(r["source_message_id"], (frozenset(), frozenset())),
    ).view())


def test_the_item_index_follows_every_change_as_a_fresh_build_would(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "d", MemoryConfig())
    other = Engine(tmp_path / "d", MemoryConfig())
    cache = ActiveItems(max_scopes=4, prepare=item_features, context=message_context)
    history: list[Any] = [{"role": "system", "content": "s"}]

    def cached() -> tuple[Any, ...]:
        return _index_state(engine.store.read_tx(cache.view, "db", A.tenant, A.role))

    try:
        assert cached() == _fresh_index(engine, A) == ([], {}, {})
        _say(engine, A, history, "We moved the build to Hetzner. The API timeout is 30 s "
                                 "when offline.")
        assert "hetzner" in cached()[2]  # the rest of the message, as context
        _say(engine, A, history, "The API timeout is 30 s when offline.")
        _say(engine, A, history, "We decided to deploy the frontend on Render.")
        assert cached() == _fresh_index(engine, A) and cached()[0]
        _say(engine, A, history, "Actually, the API timeout is 45 s when offline.")
        _say(engine, B, [{"role": "system", "content": "s"}], "The batch size is 500 rows.")
        got = cached()
        assert got == _fresh_index(engine, A)
        assert not any("30" in item[2] for item in got[0])  # the superseded value left
        assert "45" in got[1]  # and the correction is indexed under its number
        other.retract(got[0][0][0], "wrong")  # changed by another writer
        assert cached() == _fresh_index(engine, A)
        engine.store.write_tx_sync(lambda tx: prune_changes(tx, keep=0))
        _say(other, A, history, "The retry count is 7 for webhooks.")
        assert cached() == _fresh_index(engine, A)
    finally:
        other.close()
        engine.close()


def test_the_item_index_rebuilds_past_dead_slots_and_keeps_the_newest_live() -> None:
    def row(i: int, text: str) -> dict[str, Any]:
        return {"id": i, "kind": "constraint", "subject": None, "text": text, "value": None,
                "supersedes": None, "condition": None, "evidence": "user", "data": None,
                "source_message_id": 100 + i, "thread_id": 1, "conflict_with": None,
                "status": "active"}

    index = ItemIndex(item_features, 3, [row(i, f"never touch server {i}") for i in range(1, 6)])
    view = index.view()
    assert sorted(int(view.ids[s]) for s in range(view.n) if view.live[s]) == [3, 4, 5]
    for round_ in range(300):  # each change leaves a dead slot behind
        index.apply([1], [row(1, f"never touch server {round_}")])
    view = index.view()
    assert view.n < 300  # rebuilt: dead slots do not pile up
    assert sorted(int(view.ids[s]) for s in range(view.n) if view.live[s]) == [3, 4, 5]
    index.apply([5, 4], [])
    view = index.view()
    assert sorted(int(view.ids[s]) for s in range(view.n) if view.live[s]) == [1, 2, 3]
    assert view.slot(4) is None and view.rows[view.slot(1)]["text"] == "never touch server 299"
    assert [int(view.ids[s]) for s in view.slots("299") if view.live[s]] == [1]


def test_a_terms_slots_are_converted_once_then_extended_each_view_its_own() -> None:
    """A term's postings become an array once and are extended by the slots added
    since (a turn's common words are held by every turn's items); every view still
    gets only its own slots, also after a later view extended the kept array, and
    nobody can change what the next request reads."""
    def row(i: int, text: str) -> dict[str, Any]:
        return {"id": i, "kind": "constraint", "subject": None, "text": text, "value": None,
                "supersedes": None, "condition": None, "evidence": "user", "data": None,
                "source_message_id": 100 + i, "thread_id": 1, "conflict_with": None,
                "status": "active"}

    index = ItemIndex(item_features, 100, [row(i, f"keep port {i} closed") for i in range(3)])
    old = index.view()
    first = old.slots("port")
    assert first.tolist() == [0, 1, 2]
    assert np.shares_memory(first, old.slots("port"))  # kept, not converted again
    with pytest.raises(ValueError):
        first[0] = 7
    index.apply([], [row(i, f"keep port {i} open") for i in range(3, 6)])
    new = index.view()
    assert old.slots("port").tolist() == [0, 1, 2]  # before and after the array grew
    assert new.slots("port").tolist() == [0, 1, 2, 3, 4, 5]
    assert old.slots("port").tolist() == [0, 1, 2]
    assert new.slots("open").tolist() == [3, 4, 5] and old.slots("open").tolist() == []
    index.apply([0], [row(0, "keep port 0 shut")])  # a changed item: a new slot
    assert index.view().slots("port").tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert new.slots("port").tolist() == [0, 1, 2, 3, 4, 5]


def test_assembly_from_the_kept_index_equals_assembly_from_a_fresh_select(
        tmp_path: Path) -> None:
    from memory_core.assembly.block import assemble
    from proxy.evaluation.numbersgen import numbers_session

    # nothing counts as in view: every item may reach the block, so it has lines
    engine = Engine(tmp_path / "d", MemoryConfig(in_view_tokens=0))
    history: list[Any] = [{"role": "system", "content": "s"}]
    try:
        for turn in numbers_session(3, 40).turns:
            _say(engine, A, history, turn.text)
        _say(engine, A, history, "Actually, the pool size is 64 for the cache layer.")
        _say(engine, A, history, "Never restart the billing job during business hours.")
        for question in ("What is the pool size of the cache layer on eu-west?",
                         "Which target did we set for the billing job?",
                         "Remind me of the rules."):
            history.append({"role": "user", "content": question})
            _ticket, fut = engine.capture_request(A, "q", list(history), {})
            result = fut.result(10)
            kept = engine.assemble(A, result, question, "q")
            fresh = engine.store.read_tx(lambda c, r=result, q=question: assemble(
                c, A, r, q, engine.config, namespace=engine.store.location))
            assert kept.block == fresh.block and kept.block.count("\n- [") >= 3
            assert kept.log["included"] == fresh.log["included"]
            history.append({"role": "assistant", "content": "ok"})
    finally:
        engine.close()


def _execute(engine: Engine, sql: str, args: tuple[Any, ...]) -> Any:
    """One statement as a committed write; its first row's first value, if any."""
    def run(c: Any) -> Any:
        row = c.execute(sql, args).fetchone()
        return row[0] if row else None
    return sql_write(engine, run)


def _superseded_read(tx: Any, scope: Scope, last_id: int, limit: int) -> list[Any]:
    return [(r["source_message_id"], r["id"], r["text"], r["value_text"], r["unit"])
            for r in tx.request_reads.superseded_sources(scope.tenant, scope.role, last_id,
                                                         limit)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_superseded_items_equal_the_stores_read_through_every_change(
        tmp_path: Path, seed: int) -> None:
    """:class:`SupersededItems` against the store's read after each of a few hundred
    random writes to a real database: items inserted in two scopes, superseded,
    reinstated, retracted, edited and deleted, the summary boundary moved, the change
    log pruned past what the kept sets saw; a small limit so that they are often cut."""
    import random

    from memory_core.items.cache import SupersededItems

    rng = random.Random(seed)
    engine = Engine(tmp_path / "d", MemoryConfig())
    cache = SupersededItems(max_scopes=2)
    insert = ("INSERT INTO memory_items (tenant, role, session, thread_id, kind, subject,"
              " text, status, source_message_id, evidence, created_at, updated_at, data)"
              " VALUES (?, 'coder', 's', ?, 'fact', 'x', ?, ?, ?, 'user', 0, 0, '{}')"
              " RETURNING id")
    flip = ("UPDATE memory_items SET status=CASE status WHEN 'active' THEN 'superseded'"
            " ELSE 'active' END WHERE id=?")
    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        for n in range(12):
            _say(engine, A, history, f"Note {n}: the pool size is {n + 10}.")
        messages, thread = sql_read(engine, lambda c: (
            [r[0] for r in c.execute("SELECT id FROM messages ORDER BY id")],
            c.execute("SELECT MAX(thread_id) FROM messages").fetchone()[0]))
        ids = sql_read(engine, lambda c: [r[0] for r in c.execute(
            "SELECT id FROM memory_items ORDER BY id")])
        last_id, limit = messages[len(messages) // 2], 6
        for step in range(300):
            op = rng.random()
            if op < 0.35 or not ids:
                ids.append(_execute(engine, insert, (
                    rng.choice((A.tenant, A.tenant, B.tenant)), thread, f"item {step}",
                    rng.choice(("active", "superseded", "superseded")),
                    rng.choice((None, *messages)))))
            elif op < 0.7:
                _execute(engine, "UPDATE memory_items SET status=? WHERE id=?", (
                    rng.choice(("active", "superseded", "retracted")), rng.choice(ids)))
            elif op < 0.8:
                _execute(engine, "UPDATE memory_items SET text=text || ' (edited)'"
                         " WHERE id=?", (rng.choice(ids),))
            elif op < 0.85:
                _execute(engine, "DELETE FROM memory_items WHERE id=?",
                         (ids.pop(rng.randrange(len(ids))),))
            elif op < 0.9:
                last_id = rng.choice(messages)
            elif op < 0.93:  # changes the kept sets never see: pruned before they look
                for _ in range(2):
                    _execute(engine, flip, (rng.choice(ids),))
                engine.store.write_tx_sync(lambda tx: prune_changes(tx, keep=1))
            for scope in (A, B):
                kept = engine.store.read_tx(cache.newest, "db", scope.tenant, scope.role,
                                            last_id, limit)
                fresh = engine.store.read_tx(_superseded_read, scope, last_id, limit)
                assert kept == fresh, (step, scope)
    finally:
        engine.close()


def test_a_change_pruned_away_with_the_whole_log_is_still_seen(tmp_path: Path) -> None:
    """A cache that has looked, a change it has not seen, then the log pruned to
    nothing: an empty log read as "nothing changed" and kept the stale item. Pruning
    keeps the newest row, so the cache sees it fell behind and reloads."""
    engine = Engine(tmp_path / "d", MemoryConfig())
    cache = ActiveItems(max_scopes=4)
    history: list[Any] = [{"role": "system", "content": "s"}]
    try:
        _say(engine, A, history, "The upload limit is 80 MB for enterprise users.")
        _say(engine, A, history, "The retry count is 7 for webhooks.")
        assert _cached(cache, engine, A) == _fresh(engine, A) != []
        victim = _fresh(engine, A)[0][0]
        engine.retract(victim, "wrong")
        engine.store.write_tx_sync(lambda tx: prune_changes(tx, keep=0))
        assert _cached(cache, engine, A) == _fresh(engine, A)
        assert victim not in [r[0] for r in _cached(cache, engine, A)]
    finally:
        engine.close()
