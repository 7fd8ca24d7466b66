"""Unmarked updates (issue 24 kind 1): a new value said without "actually" — dated from a
month on ("starting March", "from next month on"), moved by whoever holds the slot
("The vet moved me to the 9th"), a Chinese recurring slot moved (例会改到周三), a
thing of the speaker's replaced by "it" ("… my ThinkPad and replaced it with …") —
supersedes the old one; a statement of another attribute ("the onboarding guide
checklist" after "the onboarding guide"), a thing named from a month, or one occasion's
slot moved does not. Wording here is not the updates evals'."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import sql_read

SCOPE = Scope("t", "coder")


def _said(engine: Engine, *texts: str) -> dict[str, str]:
    """Each text's statements stored in order; ``{text: status}`` of the items."""
    for n, text in enumerate(texts):
        engine.store.write_tx_sync(lambda c, n=n, text=text: writer.store_extracted(
            c, SCOPE, 1, None, extract(text)))
    return dict(sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status FROM memory_items ORDER BY id")]))


@pytest.mark.parametrize("old, update", [
    ("The gym membership is 40 a month.", "The gym membership is 45 a month starting March."),
    ("Office hours are at 15:00.", "Office hours are at 16:00 from next month on."),
    ("The parking fee is 12 a day.", "Starting May, the parking fee is 15 a day."),
    ("My vet appointment is on the 3rd at 10:00.", "The vet moved me to the 9th at 16:30."),
    ("例会定在周一上午九点。", "例会改到周三下午三点。"),
    ("My laptop is a ThinkPad X1.",
     "Spilled coffee on my ThinkPad and replaced it with a Framework 13."),
])
def test_an_unmarked_new_value_supersedes_the_old_one(tmp_path: Path, old: str,
                                                       update: str) -> None:
    engine = Engine(tmp_path / "data")
    try:
        assert _said(engine, old, update) == {old: "superseded", update: "active"}
    finally:
        engine.close()


@pytest.mark.parametrize("old, beside", [
    ("My vet is Dr. Park.", "The vet moved me to the 9th at 16:30."),
    ("The onboarding guide is owned by HR.",
     "I changed the onboarding guide checklist to include a laptop setup step."),
    ("例会定在周一上午九点。", "这周的例会改到周三。"),
    ("My laptop is a ThinkPad X1.",
     "My sister sold her ThinkPad and replaced it with a Framework."),
])
def test_a_statement_of_another_attribute_or_occasion_supersedes_nothing(
        tmp_path: Path, old: str, beside: str) -> None:
    engine = Engine(tmp_path / "data")
    try:
        statuses = _said(engine, old, beside)
        assert statuses[old] == "active"
        assert "superseded" not in statuses.values()
    finally:
        engine.close()


@pytest.mark.parametrize("text, dated", [
    ("Rent is 900 starting October.", True),
    ("As of March 3, the office is in Leeds.", True),
    ("Standup is at 10:15 from next week on.", True),
    ("The photos from October are on the drive.", False),  # a thing named from a month
    ("Starting may be the hardest part.", False),  # "may", the verb
    ("例会改到周三下午三点。", True),
    ("明天的会改到下午三点。", False),  # one occasion's slot
])
def test_a_date_of_effect_marks_the_statement_as_a_change(text: str, dated: bool) -> None:
    assert any(e.correction for e in extract(text)) is dated
