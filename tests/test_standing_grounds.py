"""Standing items read from a statement's structure (issue 24, kinds 3, 9 and 10): an
order that rests on a lasting reason, a pasted block shown only to ask about it, a
word that limits what is said to one occasion, and every spelling of "from now on".
The sentences are written here, not taken from a labelled set; each group has a
negative control that must keep its verdict."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.extraction.grounds import rests_on_lasting
from memory_core.extraction.material import asked_about_spans
from tests.standing_helpers import assert_none_stands, assert_stands

GROUNDED = [
    "I work from Osaka, so give me meeting times in JST rather than Pacific.",
    "I cycle to work, so check the rain forecast before suggesting any outing.",
    "We've kept kosher for over ten years, so keep pork and shellfish out of the menus.",
    "My son has football training every Tuesday, so keep Tuesday afternoons free.",
    "Put the summary first, because I read these on a small screen every morning.",
]


def _order(text: str):  # the item the order gave: a constraint
    return [i for i in extract(text) if i.kind == "constraint"]


@pytest.mark.parametrize("text", GROUNDED)
def test_an_order_that_rests_on_a_lasting_reason_stands(text: str) -> None:
    orders = _order(text)
    assert orders, extract(text)
    assert any(stands(i) for i in orders), orders


MOMENT_REASONS = [
    "I'm exhausted, so keep it short.",
    "I have a dentist appointment at 4, so keep the reply brief.",
    "I'm reading this on the train, so skip the code blocks.",
    "I live in Osaka, so show the times in JST for this meeting.",
    "Keep it under 100 words because I am in a hurry right now.",
]


@pytest.mark.parametrize("text", MOMENT_REASONS)
def test_an_order_that_rests_on_the_moment_does_not_stand(text: str) -> None:
    assert not any(stands(i) for i in _order(text)), _order(text)


ASKED_ABOUT = [
    "# Release policy\n\nAlways tag releases from main. Never ship on a Friday.\n\n"
    "Which of these would you drop for a two-person team?",
    "commit 1a2b3c4d\nAuthor: Ravi Menon <ravi@example.org>\n    db: always run migrations in a "
    "transaction\n\nwhat does this commit change?",
    "## Style guide\n\nNever use semicolons. Always prefer const.\n\n"
    "how would you enforce that in CI?",
]


@pytest.mark.parametrize("text", ASKED_ABOUT)
def test_a_pasted_block_shown_only_to_ask_about_it_does_not_stand(text: str) -> None:
    assert asked_about_spans(text)
    assert_none_stands(text)


OWN_BLOCKS = [
    "# My rules\n\nAlways tag releases from main. Never ship on a Friday.\n\nDoes that make sense?",
    "# Release policy\n\nAlways tag releases from main.\n\nCan you follow this from now on?",
    "Always tag releases from main.\nNever ship on a Friday.\n\nDoes that make sense?",
]


@pytest.mark.parametrize("text", OWN_BLOCKS)
def test_the_users_own_rules_before_a_question_still_stand(text: str) -> None:
    assert_stands(text)


ONE_OCCASION = [
    "Raise the timeout to 90 seconds for this run only.",
    "Let's book the window seat this time.",
    "We'll use staging-2 just this once.",
    "这一次用表格回答吧。",
]


@pytest.mark.parametrize("text", ONE_OCCASION)
def test_what_is_limited_to_one_occasion_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_a_scope_that_lasts_still_stands() -> None:
    assert_stands("Use four-space indents for this repo only.")


FROM_NOW = [
    "From here on, always run the formatter before committing.",
    "From this point forward never use bare pip, use uv.",
    "Moving forward, use uv for installs.",
    "From here on out, sign every commit.",
]


@pytest.mark.parametrize("text", FROM_NOW)
def test_every_spelling_of_from_now_on_makes_a_rule(text: str) -> None:
    assert_stands(text)


NARRATED_BEFORE_INSTEAD = [
    ("The trains were on strike, so we drove to Leeds instead.", "trains"),
    ("My laptop died during the demo, so I presented from my phone instead.", "laptop"),
    ("It snowed all morning, so the kids built a snowman instead.", "snowed"),
]


@pytest.mark.parametrize(("text", "cause"), NARRATED_BEFORE_INSTEAD)
def test_a_closing_instead_revises_only_its_own_clause(text: str, cause: str) -> None:
    before = [i for i in extract(text) if cause in i.text.lower()]
    assert before, extract(text)
    assert not any(i.correction or stands(i) for i in before), before


def test_a_closing_instead_still_marks_the_choice_it_ends() -> None:
    items = extract("Postgres was too slow for us, so let's use MySQL instead.")
    assert any(i.correction and "MySQL" in i.text for i in items), items


DISLIKED_POINTERS = ["I hate this.", "Honestly, I really dislike that!", "I can't stand it."]


@pytest.mark.parametrize("text", DISLIKED_POINTERS)
def test_a_dislike_of_what_was_just_shown_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_a_named_dislike_still_stands() -> None:
    assert_stands("I hate it when replies end with a question.")


SCOPED_ORDERS = [
    "In this pipeline never auto-merge dependabot PRs.",
    "For this client, never use Comic Sans.",
    "Within the billing service always log the request id.",
]


@pytest.mark.parametrize("text", SCOPED_ORDERS)
def test_an_order_after_any_scope_lead_stands(text: str) -> None:
    orders = _order(text)
    assert orders and any(stands(i) for i in orders), extract(text)


def test_a_habit_after_a_time_lead_is_no_order() -> None:
    assert not _order("In the morning I always run 5 km.")


COMPARED_SIBLINGS = [
    "Run 8: batch 32, loss 0.71. Noticeably better than run 7.",
    "Run 12: dropout 0.2, val acc 0.88. Similar to run 11.",
]


@pytest.mark.parametrize("text", COMPARED_SIBLINGS)
def test_a_comparison_with_another_member_of_the_series_does_not_stand(text: str) -> None:
    assert_none_stands(text)


DENIED_VALUES = [
    "我儿子生日是 5 月 8 号，不是 5 月 18 号。",
    "面试定在 3 月 2 日，不是 3 月 12 日。",
]


@pytest.mark.parametrize("text", DENIED_VALUES)
def test_a_denied_old_value_stays_in_its_statement(text: str) -> None:
    items = extract(text)
    assert len(items) == 1 and items[0].text == text, items


def test_two_values_of_one_measure_still_split() -> None:
    assert len(extract("我每周跑步 3 次，每次 5 公里。")) == 2


CHOSEN_OVER_ANOTHER = [
    "I'd like a store credit rather than a refund, please.",
    "We'd like a quiet room instead of a sea-view room.",
]


@pytest.mark.parametrize("text", CHOSEN_OVER_ANOTHER)
def test_one_thing_chosen_over_another_is_a_single_request(text: str) -> None:
    assert_none_stands(text)


def test_a_kind_chosen_over_another_still_stands() -> None:
    assert_stands("I'd like answers in Spanish rather than English, please.")


PAST_REASONS = [
    "I broke my wrist, so keep the replies short.",
    "I took a painkiller, so keep it simple.",
    "I saw the movie, so don't spoil anything but skip the summary.",
    "I lost my notes, so summarize the plan again.",
    "We sold the car, so skip the parking tips.",
    "I wrote the draft in a hurry, so check the grammar carefully.",
]


@pytest.mark.parametrize("text", PAST_REASONS)
def test_an_order_that_rests_on_a_past_event_does_not_stand(text: str) -> None:
    # an irregular simple past is no habit. before: "I broke …" read as "I live …"
    at = text.index(", so ") + len(", so ")
    assert not rests_on_lasting(text, at, len(text))
    assert not any(stands(i) for i in _order(text)), _order(text)
