"""An item's features (standing weight, keyword terms, locality) are computed once per
item version, shared by the item cache's index and the block's later reads, and a
changed item (an operator's edit, a correction) is prepared again, never read stale.
``ends.end_day`` is memoised on its arguments: an edited text is a new key.

Real SQLite through the engine; the count wraps the real ``standing_weight`` (the
one step of the features every path runs), nothing is replaced.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memory_core.assembly import block
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.extraction.ends import end_day, end_note
from memory_core.models import Scope

A = Scope("t_a", "coder")


def _turn(engine: Engine, history: list[Any], text: str) -> str:
    """One turn: the request captured, its block built, the answer captured."""
    history.append({"role": "user", "content": text})
    ticket, fut = engine.capture_request(A, "r", list(history), {})
    result = fut.result(10)
    ids = set(result.message_ids)
    assembly = engine.assemble(A, result, text, "r", ids, sorted(ids))
    reply = {"role": "assistant", "content": "ok"}
    engine.capture_response(ticket, [reply], {"outcome": "complete"}).result(10)
    history.append(reply)
    return assembly.block


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[Any, ...]]:
    """``standing_weight`` calls by item version (id, text, then every column as
    read: a restatement merged into an item changes its source, not its words):
    one per preparation."""
    calls: Counter[tuple[Any, ...]] = Counter()
    real = block.standing_weight

    def counting(row: Any) -> float:
        calls[(int(row["id"]), str(row["text"]), repr(sorted(dict(row).items())))] += 1
        return real(row)

    monkeypatch.setattr(block, "standing_weight", counting)
    return calls


def test_each_item_version_is_prepared_once_for_the_index_and_the_block(
        tmp_path: Path, counted: Counter[tuple[Any, ...]]) -> None:
    # in view by default: each new item is a hidden row of the next turns, read
    # by the in-view updates (their terms) after the index prepared it
    engine = Engine(tmp_path / "d", MemoryConfig())
    history: list[Any] = [{"role": "system", "content": "s"}]
    try:
        _turn(engine, history, "Never deploy the billing service on Fridays.")
        for i in range(6):
            _turn(engine, history, f"The cache pool size is {32 + i} for region eu-{i}."
                  " Deploying the billing service on Fridays is risky.")
        assert counted, "no item was prepared"
        assert max(counted.values()) == 1, counted.most_common(3)
    finally:
        engine.close()


def test_an_edited_item_is_prepared_again_and_its_block_line_changes(
        tmp_path: Path, counted: Counter[tuple[Any, ...]]) -> None:
    engine = Engine(tmp_path / "d", MemoryConfig(in_view_tokens=0))
    history: list[Any] = [{"role": "system", "content": "s"}]
    try:
        _turn(engine, history, "Never restart the billing job during business hours.")
        first = _turn(engine, history, "Which rules did we set for the billing job?")
        assert "Never restart the billing job during business hours" in first
        item = next(k for k in counted if "billing job during business" in k[1])
        out = engine.edit_in_scope(item[0], "Never restart the billing job on weekends.")
        edited = _turn(engine, history, "Which rules did we set for the billing job?")
        assert "Never restart the billing job on weekends" in edited
        assert "during business hours." not in edited.split("edited from")[0]
        assert [n for k, n in counted.items() if k[0] == int(out["new_id"])] == [1]
    finally:
        engine.close()


def test_the_end_day_memo_keys_on_the_text_the_time_and_the_zone() -> None:
    wednesday = 1_765_292_400.0  # 2025-12-09 15:00 UTC, a Tuesday
    until = end_day("I'm in Paris until Friday.", wednesday)
    assert until is not None
    assert end_day("I'm in Paris until Friday.", wednesday) == until  # a memo hit
    assert end_day("I'm in Paris.", wednesday) is None  # edited: no end any more
    assert end_day("I'm in Paris until Friday.", wednesday + 7 * 86400) > until
    # the note still reads ``now`` on every call: current, then over
    assert "holds until" in end_note("I'm in Paris until Friday.", wednesday, "", wednesday)
    assert "over, not current" in end_note("I'm in Paris until Friday.", wednesday, "",
                                           wednesday + 30 * 86400)
