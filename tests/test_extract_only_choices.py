"""A choice the user narrows for good ("I only invest in ETFs", 我只考虑深圳的工作机会;
issue 24, the standdev3 split) is a preference that stands, keyed by what is chosen.
Sentences here are in no labelled split; the controls say "only" of something else."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands

CHOICES = [
    ("I only invest in ETFs.", "etfs"),
    ("I'm only considering jobs in Berlin.", "jobs berlin"),
    ("We only accept bank transfers.", "bank transfers"),
    ("I only buy secondhand furniture.", "secondhand furniture"),
    ("我只考虑深圳的工作机会。", "深圳工作机会"),
    ("我们只接受银行转账。", "银行转账"),
]


@pytest.mark.parametrize(("text", "key"), CHOICES)
def test_a_narrowed_choice_is_a_standing_preference(text: str, key: str) -> None:
    prefs = [i for i in extract(text) if i.kind == "preference" and stands(i)]
    assert prefs and prefs[0].subject == key, extract(text)


CONTROLS = [
    "I only looked at the first page of results.",
]


@pytest.mark.parametrize("text", CONTROLS)
def test_only_said_of_what_happened_does_not_stand(text: str) -> None:
    assert_none_stands(text)
