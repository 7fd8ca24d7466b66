"""The notes of one of a series ("Session 12 recap: …", "Sprint 9 retro: …"; issue 24,
the standdev3 split): their figures are one step's, kept but not standing. Sentences
here are in no labelled split; the controls are a rule and a number the user set
under such a lead, which still stand."""

from __future__ import annotations

import pytest

from tests.standing_helpers import assert_none_stands, assert_stands

NOTES = [
    "Session 12 recap: they killed the hydra.",
    "Episode 4 notes: the crew found the map.",
    "Lesson 5 summary - we covered 40 words.",
]


@pytest.mark.parametrize("text", NOTES)
def test_the_notes_of_one_of_a_series_do_not_stand(text: str) -> None:
    assert_none_stands(text)


CONTROLS = [
    "Session 12 recap: from now on, always roll initiative openly.",
    "Our session length is 4 hours.",
]


@pytest.mark.parametrize("text", CONTROLS)
def test_a_rule_or_a_number_set_beside_a_series_still_stands(text: str) -> None:
    assert_stands(text)
