"""The updates eval (``memory_core.evaluation.updates``) on its two blind splits: short
conversations replayed through a real engine, judged on what stays current.

``updates_dev.jsonl`` was tuned on (docs/evaluation/extraction_issue24.md, "An updates
eval"); ``updates_holdout.jsonl`` never was (summary lines only). The floors sit just
under today's figures, so a rule that loses updates, withdrawals or kept statements
fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.evaluation.updates import KINDS, judge, load, score

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name", ["updates_dev.jsonl", "updates_holdout.jsonl"])
def test_the_splits_are_valid_and_varied(name: str) -> None:
    rows = load(DATA / name)
    assert len(rows) >= 45
    assert {r["kind"] for r in rows} == set(KINDS)
    assert {r["lang"] for r in rows} == {"en", "zh", "ja"}
    assert all(r["gone"] for r in rows if r["kind"] in ("update", "withdrawal"))
    assert not any(r["gone"] for r in rows if r["kind"] in ("restatement", "control"))


def test_the_judge_counts_a_statement_never_stored_apart() -> None:
    row = {"active": ["Argo CD"], "gone": ["Helm", "Flux"]}
    items = [{"status": "active", "text": "We deploy with Argo CD now."},
             {"status": "superseded", "text": "We deploy with Helm."}]
    assert judge(row, items) == {"kept": [True], "replaced": [True, None], "right": False}
    items[1]["status"] = "active"
    assert judge(row, items)["replaced"] == [False, None]


@pytest.mark.parametrize(("name", "right", "replaced", "kept"), [
    ("updates_dev.jsonl", 0.5, 0.5, 0.85),
    ("updates_holdout.jsonl", 0.4, 0.27, 0.8),
])
def test_updates_withdrawals_and_kept_statements_hold_their_floors(
        name: str, right: float, replaced: float, kept: float) -> None:
    overall = score(DATA / name)["overall"]
    assert overall["right_share"] >= right, overall
    assert overall["replaced_share"] >= replaced, overall
    assert overall["kept_share"] >= kept, overall
