"""Issue 24, standdev2's left-overs (eleventh pass), and a settling phrase that fixes a
value ("Budget is 40k, period.", 两周交付，没得商量; branch rows9). Sentences here are in no labelled
split; each case fails before the change it tests, except the controls.

- A sentence that names what came before the user's rule or settles it ("That's the
  rule I'm following now.", "…, and that's final.") holds nothing itself: what it
  points back at stands, as after "…, remember that." (promotion.kept_tail).
- A value the user denies having said ("I never said the deadline was 3 weeks") is
  not a number the user set: it does not stand, though "never" is in it; nor is "we
  never" before a past verb ("We never agreed to a 20% discount") a team norm.
"""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands


@pytest.mark.parametrize(("text", "kind", "key"), [
    ("Walk 8,000 steps a day. That's the rule I'm following now.", "fact", "walk"),
    ("No screens after 10pm, that's my rule.", "constraint", "screens"),
    ("We're going with Hetzner, and that's final.", "decision", "hetzner"),
    ("The retro is on Thursdays. This is non-negotiable.", "fact", "retro"),
])
def test_a_settling_sentence_holds_nothing_and_what_it_points_at_stands(
        text: str, kind: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [(kind, key)], items
    assert stands(items[0]), items


@pytest.mark.parametrize("text", [
    "That's the rule of thumb I use for estimates.",  # no pointer: nothing to promote
    "Is that final?",
])
def test_controls_that_settle_nothing(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "I never said the deadline was 3 weeks.",
    "I didn't say the budget was $4,000.",
    "We never agreed to a 20% discount.",
])
def test_a_value_the_user_denies_saying_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_the_value_after_the_denial_stands() -> None:
    items = extract("I never said the cap was 50 users. It's 80 users.")
    standing = [i.value for i in items if stands(i)]
    assert standing == [80.0], items


# -- a settling phrase closing the clause fixes its value (branch rows9) -----------------------
@pytest.mark.parametrize(("text", "kind", "key"), [
    ("Payment terms are net 30, no exceptions.", "fact", "payment terms"),
    ("Budget is 40k, period.", "fact", "budget"),
    ("The launch date is March 3, full stop.", "fact", "launch date"),
    ("Our hourly rate is 120 EUR; non-negotiable.", "fact", "hourly rate"),
    ("两周交付，没得商量。", "fact", "交付"),
    ("报价就是八千块，没商量。", "fact", "报价就是"),
])
def test_a_settled_value_stands_keyed_without_the_phrase(text: str, kind: str, key: str
                                                         ) -> None:
    # before: "net 30" and the launch date did not stand; 两周交付 was keyed 交付没得商量
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [(kind, key)], items
    assert items[0].text == text and stands(items[0]), items


@pytest.mark.parametrize("text", [
    "The period is 30 days.",  # the noun, not the phrase
    "No exceptions were thrown in the last run.",
    "Payment terms are net 30.",  # not settled: a passing remark
])
def test_a_value_without_a_settling_phrase_is_as_before(text: str) -> None:
    items = extract(text)
    assert items and not any(i.lasting for i in items), items


@pytest.mark.parametrize("text", [
    "Per Marco: invoices go out net 45, no exceptions.",
    "Marco says the budget is 40k, period.",
])
def test_a_settled_value_passed_on_from_someone_else_is_theirs(text: str) -> None:
    items = extract(text)
    assert items and not any(i.lasting for i in items), items


def test_a_hedged_value_stays_a_guess_though_settled() -> None:
    items = extract("I think the budget is 40k, period.")
    assert items and not any(stands(i) for i in items), items


@pytest.mark.parametrize("text", [
    "Haha that movie was the best ever, period.",
    "The party last year was a disaster, full stop.",
])
def test_a_settling_phrase_after_a_past_clause_settles_nothing(text: str) -> None:
    # before: an emphatic report marked lasting, so it stood in every block
    assert not any(i.lasting for i in extract(text)), extract(text)
    assert_none_stands(text)
