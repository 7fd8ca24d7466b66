"""Issue 24, the standdev3 split's classes (tenth pass). Sentences here are in no
labelled split; each case fails before the change it tests, except the controls.

- A statement followed by a clause asking the assistant to keep it ("…, keep that in
  mind", "…, remember that.", …，记住这一点。, …、覚えておいてね。) stands, and the clause
  is no item of its own.
- "Only" before a past verb reports what happened ("We only bought 3 chairs"): no rule.
- An order to stop a practice ("Stop using emojis …") or to keep a kind of advice from
  the user ("Don't recommend keto diets to me") stands; a one-off order does not.
- 现在 before an order ("现在把这个类拆成三个文件") is the next step of the work, not an
  update that stands.
"""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands

KEPT = [
    ("My dog is scared of thunder, don't forget that.", "fact", "dog"),
    ("Our office wifi password changes monthly, remember that.", "fact", "office wifi password"),
    ("My sister's name is Ana. Remember that.", "fact", "sister name"),
    ("The staging bucket lives in eu-west-1, keep that in mind when you write scripts.",
     "fact", "staging bucket"),
    ("Answer in German, don't forget that.", "constraint", "answer german"),
    ("我妹妹在杭州工作，记住这一点。", "fact", "妹妹"),
]


@pytest.mark.parametrize(("text", "kind", "key"), KEPT)
def test_a_statement_the_user_asks_to_keep_stands_alone(text: str, kind: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [(kind, key)], items
    assert stands(items[0]), items


@pytest.mark.parametrize("text", [
    "I'm allergic to shellfish, keep that in mind.",
    "私は卵アレルギーです、覚えておいてね。",
])
def test_the_keep_clause_is_no_item_of_its_own(text: str) -> None:
    items = extract(text)
    assert len(items) == 1 and stands(items[0]), items


@pytest.mark.parametrize("text", [
    "I can't remember that.",  # no clause asking the assistant to keep anything
    "Remember that the tests need Docker.",
])
def test_remember_that_with_its_own_object_is_no_promotion(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "We only sold 12 tickets.",
    "We only got 2 replies to the survey.",
    "We only ran 3 epochs.",
    "We only had 20 minutes for lunch.",
])
def test_only_before_a_past_verb_is_no_rule(text: str) -> None:
    items = extract(text)
    assert items and not any(i.kind == "constraint" for i in items), items
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "We only need 2 replicas.",  # controls: a present "only" still sets a bound
    "You only get 3 retries.",
])
def test_only_in_the_present_still_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "Stop using emojis in commit messages.",
    "Stop adding docstrings to private helpers.",
    "Please stop apologizing in every reply.",
    "Don't recommend keto diets to me.",
])
def test_an_order_to_stop_a_practice_or_a_kind_of_advice_stands(text: str) -> None:
    items = [i for i in extract(text) if i.kind == "constraint"]
    assert items and all(stands(i) for i in items), extract(text)


@pytest.mark.parametrize("text", [
    "Stop the server.",
    "Stop running the tests for now.",
    "Don't add a test for this one.",
    "Don't send it to me yet.",
])
def test_a_one_off_order_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "好了，现在把这个类拆成三个文件。",
    "现在把这个函数拆成两个。",
])
def test_now_before_an_order_is_no_standing_update(text: str) -> None:
    items = extract(text)
    assert not any(i.kind == "fact" for i in items), items
    assert_none_stands(text)


def test_now_before_a_state_still_updates() -> None:
    items = extract("现在的超时是30秒。")  # control: 现在 dates a state
    assert items and items[0].kind == "fact" and stands(items[0]), items


@pytest.mark.parametrize("text", [
    "Call the dentist at 3pm today, remember that.",  # an errand for one day
    "明日の会議は10時からです、忘れないでね。",            # tomorrow's meeting
    "I'm moving to Lisbon next month, keep that in mind.",
])
def test_what_is_bound_to_a_day_it_names_is_kept_but_does_not_stand(text: str) -> None:
    items = extract(text)
    assert items and not any(stands(i) for i in items), items


# The clause asking to keep what was said may name what it is kept for ("…, keep that in
# mind for recipes.", "Keep this in mind for any meal plans.") or be an order to stick to
# it ("Please always stick to that."); either way it points back and holds nothing itself.
KEPT_FOR = [
    ("I'm allergic to peanuts, keep that in mind for recipes.", "I'm allergic to peanuts"),
    ("I'm vegetarian. Keep this in mind for any meal plans.", "I'm vegetarian."),
    ("I'm allergic to peanuts, please remember that for future recipes.",
     "I'm allergic to peanuts"),
    ("I use metric units. Please always stick to that.", "I use metric units."),
    ("We decided on Postgres. Stick with it.", "We decided on Postgres."),
]


@pytest.mark.parametrize(("text", "kept"), KEPT_FOR)
def test_a_keep_clause_naming_its_use_points_back_and_holds_nothing(text: str,
                                                                     kept: str) -> None:
    items = extract(text)
    assert [i.text for i in items] == [kept], items
    assert stands(items[0]), items


@pytest.mark.parametrize("text", [
    "Remember that for loops run fast.",  # "that" opens a clause about for-loops
    "Don't forget that for the demo we need two laptops.",
])
def test_remember_that_before_a_for_clause_is_no_keep_clause(text: str) -> None:
    items = extract(text)
    assert len(items) == 1 and items[0].text == text, items
