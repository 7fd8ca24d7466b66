"""Forms of an unmarked update (issue 24 kind 1, the classes of ``updates_dev5``): a
date of effect that opens the sentence ("As of Monday …", "Since last week …"), a date
that slipped by itself, a value chosen ("we settled on …"), a pronoun whose old thing is
named beside it ("It's X now, the Y broke"), Japanese changes told as done (XをYに変えま
した, Yに替わりました, 最近は) and a Japanese routine without 私は that もう…ません
ends — supersede the old statement; a thing moved to a place (its time stays), a
switch only considered, a span of days and a reason that open with a date, and a
pronoun with nothing named beside it do not. Wording here is not the updates evals'."""

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
    for text in texts:
        engine.store.write_tx_sync(lambda c, text=text: writer.store_extracted(
            c, SCOPE, 1, None, extract(text)))
    return dict(sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status FROM memory_items ORDER BY id")]))


@pytest.mark.parametrize("old, update", [
    ("The retro is on Wednesdays at 11.", "As of Monday the retro is on Fridays at 2pm."),
    ("Office hours are at 15:00.", "Since March, office hours are at 16:00."),
    ("The v2 release is planned for March.", "The v2 release slipped to June."),
    ("The upload limit is 20 MB.", "We settled on 50 MB for the upload limit."),
    ("My phone is a Pixel 6.", "It's an iPhone 15 now, the Pixel broke."),
    ("エディタは Emacs を使っています。", "エディタを Zed に変えました。"),
    ("経理の担当は山本さんです。", "経理の担当は小林さんに替わりました。"),
    ("毎晩ワインを飲んでいます。", "もうワインは飲んでいません。"),
])
def test_an_unmarked_update_supersedes_the_old_statement(tmp_path: Path, old: str,
                                                         update: str) -> None:
    engine = Engine(tmp_path / "data")
    try:
        assert _said(engine, old, update) == {old: "superseded", update: "active"}
    finally:
        engine.close()


@pytest.mark.parametrize("old, beside", [
    ("The retro is at 11:00.", "The retro moved to the big conference room."),
    ("We host the API on Render.", "Last spring we considered switching to Railway."),
    ("My phone is a Pixel 6.", "It's sunny now, so I walk to the Pixel store."),
])
def test_a_look_alike_supersedes_nothing(tmp_path: Path, old: str, beside: str) -> None:
    engine = Engine(tmp_path / "data")
    try:
        statuses = _said(engine, old, beside)
        assert statuses[old] == "active"
        assert "superseded" not in statuses.values()
    finally:
        engine.close()


@pytest.mark.parametrize("old, update", [
    ("The retro is in room 2.", "The retro moved to the big conference room."),
    ("The summit is booked in Lyon for October.", "The summit moved to Nantes, same dates."),
])
def test_a_place_move_still_revises_a_place(tmp_path: Path, old: str, update: str) -> None:
    """Only a statement of a time or a date alone stays: "room 2" is a place, and a
    place booked for a month is the place the move replaces."""
    engine = Engine(tmp_path / "data")
    try:
        assert _said(engine, old, update) == {old: "superseded", update: "active"}
    finally:
        engine.close()


@pytest.mark.parametrize("text, change", [
    ("As of Monday the retro is on Fridays.", True),
    ("Since last week I walk to work.", True),
    ("From Monday to Friday I work from home.", False),  # a span, no onset
    ("Since Monday is a holiday, the retro is on Tuesday.", False),  # a reason
    ("We considered switching to Railway.", False),  # only considered
    ("We settled on Railway for hosting.", True),
    ("最近は電車で通勤しています。", True),
])
def test_a_lead_or_verb_marks_a_change(text: str, change: bool) -> None:
    assert any(e.correction for e in extract(text)) is change


def test_a_japanese_routine_is_the_speakers_own_habit() -> None:
    """毎晩ワインを飲んでいます drops 私は: a fact keyed by what the routine is of."""
    assert [(e.kind, e.subject) for e in extract("毎晩ワインを飲んでいます。")] == [
        ("fact", "ワイン")]
