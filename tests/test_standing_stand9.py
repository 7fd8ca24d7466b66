"""Standing items read from structure, second round on standdev5's errors (issue 24,
branch stand9): a closing "instead" after what the speaker did (one event, no
revision); a decision label with a qualifier ("Decision made:", "Final decision:",
最終決定：); an order said to hold "Ever." apart, and "don't bother doing" as an order; a
series label after one qualifying word ("Experiment run 23:", 実験 Run 23：); a number
reported "since the last update"; an age before "and …" ("She's 2 and already …").
The sentences are written here, not taken from a labelled set; each group has
controls that must keep their verdict."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands, kept_but_not_standing

NARRATED_INSTEAD = [
    "The train was late, so I took a taxi instead.",
    "I skipped lunch and had a big dinner instead.",
    "The gym was packed, so we walked along the river instead.",
    "It snowed all morning, so I worked from the cafe and read instead.",
]


@pytest.mark.parametrize("text", NARRATED_INSTEAD)
def test_what_the_speaker_did_instead_is_no_revision(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)
    assert_none_stands(text)


REVISED_INSTEAD = [
    "Let's use MySQL instead.",
    "I'll take the train instead.",
    "We switched to Vim instead.",
    "We went with Redis instead.",
    "We picked Kafka instead.",
    "Postgres was too slow, so we moved to ClickHouse instead.",
    "Vim was clunky, so I use Helix instead.",
    "The deadline is Monday instead.",
]


@pytest.mark.parametrize("text", REVISED_INSTEAD)
def test_a_choice_or_value_given_instead_still_revises(text: str) -> None:
    assert any(i.correction for i in extract(text)), extract(text)
    assert_stands(text)


DECISION_LABELS = [
    "Decision made: Postgres, not MySQL, for the billing service.",
    "Final decision: we release on Tuesdays.",
    "Our decision: Grafana over Datadog for dashboards.",
    "最終決定：ダッシュボードは Grafana。",
    "Team decision: no deploys after 4pm.",  # these two stood before: controls
    "最终决定：用 Postgres。",
]


@pytest.mark.parametrize("text", DECISION_LABELS)
def test_a_decision_label_with_a_qualifier_leads_a_decision(text: str) -> None:
    decisions = [i for i in extract(text) if i.kind == "decision"]
    assert decisions, extract(text)
    assert_stands(text)


def test_a_decision_label_needs_its_colon() -> None:
    assert not [i for i in extract("Decision made, let's move on.") if i.kind == "decision"]


EVER_AFTER = [
    "Don't add emojis to commit messages. Ever.",
    "Don't paste secrets into the chat. Not ever.",
    "Never force-push to main. Ever!",
    "Don't bother writing docstrings for the one-off scripts in /tmp. Ever.",
    "Never bother adding type hints to the test helpers.",
]


@pytest.mark.parametrize("text", EVER_AFTER)
def test_an_order_said_to_hold_ever_stands(text: str) -> None:
    items = extract(text)
    assert [i for i in items if i.kind == "constraint"], items
    assert_stands(text)
    assert all(i.subject for i in items), items  # "Ever." is no item of its own


@pytest.mark.parametrize("text", [
    "Don't bother writing docstrings for the one-off scripts in /tmp.",  # one-off
    "Don't bother, I'll do it myself.",
    "Do you ever use tabs? Not really.",
])
def test_an_order_without_ever_stays_one_off(text: str) -> None:
    assert_none_stands(text)


def test_ever_after_a_question_is_its_answer() -> None:
    items = extract("Did you ever deploy on a Friday? Never.")
    assert any(i.kind == "question" for i in items), items
    assert all("Friday? Never" not in i.text for i in items), items


QUALIFIED_SERIES = [
    "Experiment run 23: lr 1e-4, accuracy 91.2%.",
    "Load-test round 4: p99 220 ms at 500 rps.",
    "実験 Run 23：学習率 1e-4、精度 91.2%。",
    "实验 Run 23：学习率 1e-4，准确率 91.2%。",
]


@pytest.mark.parametrize("text", QUALIFIED_SERIES)
def test_a_qualified_series_label_names_one_of_a_series(text: str) -> None:
    items = extract(text)
    assert any(i.value is not None for i in items), items
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "Node version 18 is required for this repo.",   # no colon: the version is the value
    "Python version 3: always use f-strings.",      # a rule that says it lasts
])
def test_a_qualified_series_word_without_a_series_keeps_its_verdict(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "Since the last update the app logs me out every ten minutes.",
    "Ever since the upgrade, the build takes 14 minutes.",
    "Since our last deploy the dashboard loads in 9 seconds.",
])
def test_what_a_change_brought_is_a_reading(text: str) -> None:
    kept_but_not_standing(text)


def test_a_limit_set_since_a_change_still_stands() -> None:
    assert_stands("Since the last release, keep the timeout at 30 s.")


@pytest.mark.parametrize("text", [
    "She's 2 and already runs the house.",
    "He's 7 now and loves dinosaurs.",
    "She is 3 and already reads.",
])
def test_an_age_told_before_more_about_its_bearer_is_no_fixed_number(text: str) -> None:
    kept_but_not_standing(text)


def test_a_limit_before_and_still_stands() -> None:
    assert_stands("The limit is 5 and never more.")
