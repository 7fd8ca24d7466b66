"""The injection's in-memory copy of active items always equals a fresh SELECT.

Real SQLite through the engine: extraction inserts items, corrections supersede,
retract and purge change and delete them, another tenant writes in between, the
change log is pruned, and a second engine (another process's view) makes changes
this cache never saw happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.itemcache import ActiveItems, prune_changes
from memory_core.models import Scope

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
    rows = engine.store.read(lambda c: c.execute(
        "SELECT id, status, text, supersedes FROM memory_items WHERE tenant=? AND role=?"
        " AND status='active' ORDER BY id DESC", (scope.tenant, scope.role)).fetchall())
    return [tuple(r) for r in rows]


def _cached(cache: ActiveItems, engine: Engine, scope: Scope) -> list[tuple[Any, ...]]:
    rows = engine.store.read(lambda c: cache.get(c, "db", scope.tenant, scope.role))
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
        engine.store.write_sync(lambda c: prune_changes(c, keep=0))
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
        before, top = engine.store.read(lambda c: tuple(c.execute(count).fetchone()))
        assert before >= 5
        assert engine.store.write_sync(lambda c: prune_changes(c, keep=2)) == before - 2
        assert engine.store.read(lambda c: tuple(c.execute(count).fetchone())) == (2, top)
    finally:
        engine.close()
