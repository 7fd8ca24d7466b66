"""Chit-chat that is no standing item (issue 24 items 3 and 9, measured on LoCoMo by
``docs/evaluation/locomo_block.py``): a span of time counted back from now, a liking
of what was just shown or said, a word of encouragement. Each is kept and searchable,
but not put in every block. The sentences are written here, not taken from LoCoMo."""

from __future__ import annotations

import pytest

from memory_core.items import standing
from tests.standing_helpers import assert_stands, kept_but_not_standing

ELAPSED = [
    "We adopted our parrot four months ago.",
    "I've been friends with Ana for 9 years, since college.",
    "Twelve years now, and I still love the job.",
    "I've had this bike for 2 years now.",
    "I've worked here for 3 years.",
]


@pytest.mark.parametrize("text", ELAPSED)
def test_a_span_counted_back_from_now_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)  # kept: "how long have you known Ana?" finds it


REACTIONS = [
    "I love how you framed that photo.",
    "I love that you kept going after the storm.",
    "I like the way the glaze came out.",
    "I love your garden!",
    "We really enjoy those sunsets.",
    "Yeah, we love to!",
]


@pytest.mark.parametrize("text", REACTIONS)
def test_a_liking_of_what_was_just_said_does_not_stand(text: str) -> None:
    items = kept_but_not_standing(text, lambda i: i.kind == "preference")
    assert standing.reaction(items[0].text)


ENCOURAGEMENT = [
    "Never give up on your dreams!",
    "Don't ever quit, you're so close.",
    "You never know what tomorrow brings.",
]


@pytest.mark.parametrize("text", ENCOURAGEMENT)
def test_encouragement_is_no_rule(text: str) -> None:
    kept_but_not_standing(text, lambda i: i.kind == "constraint")


STILL_STANDING = [
    "Keep the backups for 30 days.",
    "The retention period is 90 days.",
    "I love jazz.",
    "I like it when answers are short.",
    "We really enjoy hiking in the Alps.",
    "Never push directly to main.",
    "Don't ever commit secrets to the repo.",
    "Never quit the installer before it finishes.",
    "Always answer in British English.",
]


@pytest.mark.parametrize("text", STILL_STANDING)
def test_rules_tastes_and_set_numbers_still_stand(text: str) -> None:
    assert_stands(text)
