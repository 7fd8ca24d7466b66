"""Writer-side memory rules: supersession chains, conflicts, restatements, task state."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import memory
from memory_core.engine import Engine
from memory_core.extraction import Extracted, extract
from memory_core.models import Scope

SCOPE = Scope("t", "coder")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    eng = Engine(tmp_path / "d")
    yield eng
    eng.close()


def put(engine: Engine, text: str, message_id: int | None = None) -> list[int]:
    return engine.store.write_sync(
        lambda c: memory.store_extracted(c, SCOPE, 1, message_id, extract(text)))


def items(engine: Engine) -> list[dict]:
    return engine.store.read(lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, supersedes, superseded_by, conflict_with, value"
        " FROM memory_items ORDER BY id")])


def test_correction_chain_a_b_c(engine: Engine) -> None:
    put(engine, "The API timeout is 30 s when offline.")
    put(engine, "Actually, the API timeout is 45 s when offline.")
    put(engine, "Correction: the API timeout is 60 s when offline.")
    rows = items(engine)
    assert [(r["value"], r["status"]) for r in rows] == [
        (30.0, "superseded"), (45.0, "superseded"), (60.0, "active")]
    assert rows[0]["superseded_by"] == rows[1]["id"] and rows[1]["supersedes"] == rows[0]["id"]
    assert rows[1]["superseded_by"] == rows[2]["id"] and rows[2]["supersedes"] == rows[1]["id"]


def test_correction_reaches_an_item_older_than_many_others(engine: Engine) -> None:
    put(engine, "The staging database port is 5433.")
    for i in range(600):
        engine.store.write_sync(lambda c, i=i: memory.store_extracted(c, SCOPE, 1, None, [
            Extracted(kind="fact", text=f"service {i} runs", subject=f"service {i}")]))
    put(engine, "Actually, the staging database port is 5434.")
    first = items(engine)[0]
    assert first["value"] == 5433.0 and first["status"] == "superseded"


def test_conflict_keeps_both_visible_until_corrected(engine: Engine) -> None:
    put(engine, "The budget is 5000 USD.")
    put(engine, "The budget is 6000 USD.")
    a, b = items(engine)
    assert a["status"] == b["status"] == "active" and b["conflict_with"] == a["id"]
    put(engine, "Correction: the budget is 6000 USD.")
    rows = items(engine)
    assert [r["status"] for r in rows].count("active") == 1
    assert rows[-1]["status"] == "active" and rows[-1]["value"] == 6000.0


def test_restatement_is_not_a_duplicate(engine: Engine) -> None:
    assert put(engine, "The staging database port is 5433.")
    assert put(engine, "The staging database port is 5433.") == []
    assert len(items(engine)) == 1
    revisions = engine.store.read(lambda c: c.execute(
        "SELECT field FROM memory_item_revisions").fetchall())
    assert [r[0] for r in revisions] == ["restated"]


def test_task_lines_merge(engine: Engine) -> None:
    put(engine, "Goal: ship the importer\nTODO: write the CSV reader\nBlocked: no test data")
    put(engine, "Goal: ship the importer and the exporter")
    put(engine, "Progress: finished the CSV reader")
    state = {(r["label"], r["status"]) for r in engine.task_state(1)}
    assert ("goal", "superseded") in state and ("goal", "open") in state
    todo = [r for r in engine.task_state(1) if r["label"] == "todo"][0]
    assert todo["status"] == "done"
    assert ("blocked", "open") in state


def test_questions_and_assistant_text_are_not_facts(engine: Engine) -> None:
    put(engine, "Which port does staging use?")
    engine.store.write_sync(lambda c: memory.store_extracted(
        c, SCOPE, 1, None, extract("I suggest we use Redis for the cache.", speaker="assistant")))
    kinds = engine.store.read(lambda c: [r[0] for r in c.execute(
        "SELECT kind FROM memory_items ORDER BY id")])
    assert kinds == ["question", "proposal"]
