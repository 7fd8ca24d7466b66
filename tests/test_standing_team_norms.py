"""Issue 24, team norms and bare standing orders (eleventh pass). Sentences here are in
no labelled split; each case fails before the change it tests, except the controls.

- A team's habitual "we only + present verb" states a norm ("We only merge on
  Wednesdays"): a rule that stands, as "we never/always …" already did. "Only" before
  a verb of having, needing or knowing ("We only have two days left") is no norm.
- What is left ("three days left", "2 seats remaining") is a count down, not a number
  the user set.
- An order ending "instead" ("Use Redis instead.") is an order on the work at hand: a
  constraint that does not stand, not a fact keyed by its verb that stands as a
  correction.
- A bare order to use a kind of thing ("Use British spelling.") is kept as a
  constraint that does not stand (issue 24 item 9: it does not say it lasts); the user
  promotes it with "always", a scope or "…, remember that". An order on the material
  at hand ("Use a set here.", "Use the cache.") gives no item.
"""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands


@pytest.mark.parametrize("text", [
    "We only merge on Wednesdays.",
    "We only release from the stable branch.",
    "We only ever deploy with a feature flag.",
])
def test_a_team_norm_with_only_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "We only have three days left.",
    "You only have 2 attempts left.",
    "We only need one more reviewer.",
    "There are 4 seats remaining.",
    "We only sold 12 tickets.",  # control: a past verb reports what happened
])
def test_only_before_having_and_what_is_left_do_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "We only began testing last week.",  # an irregular past verb
    "We only spoke once at the conference.",
    "We only knew about the outage later.",
    "We only ever shipped twice a year.",  # an adverb before the past verb
    "We never spoke about the budget.",
    "We never knew the password.",
])
def test_only_or_never_before_any_past_verb_is_no_norm(text: str) -> None:
    assert not any(i.kind == "constraint" for i in extract(text)), extract(text)
    assert_none_stands(text)


@pytest.mark.parametrize(("text", "key"), [
    ("Use British spelling.", "british spelling"),
    ("Use Celsius.", "celsius"),
    ("Use snake case.", "snake case"),
])
def test_a_bare_convention_is_kept_but_does_not_stand(text: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [("constraint", key)], items
    assert not stands(items[0]), items


@pytest.mark.parametrize("text", [
    "Use British spelling, remember that.",
    "Use Celsius. Don't forget that.",
    "Always use snake case.",  # control: already a rule
])
def test_a_convention_the_user_promotes_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "Use a set here.", "Use the cache.", "Use it.", "Use this one instead.",
    "Use tabs for this file.",
])
def test_an_order_on_the_material_at_hand_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize(("text", "key"), [
    ("Use Redis instead.", "redis"),
    ("Use the staging bucket instead.", "staging bucket"),
])
def test_an_order_with_instead_is_a_one_off_constraint(text: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [("constraint", key)], items
    assert not stands(items[0]), items
