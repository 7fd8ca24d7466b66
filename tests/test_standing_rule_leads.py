"""A rule introduced by its name before a colon ("Rule for me:", "House rule at my
table:", "Retention policy:"; issue 24, the standdev3 split): what follows is read as
a standing constraint, keyed by what the rule is about, not by the word "rule". The
sentences are in no labelled split; the controls are a colon lead that names no rule
of the user's."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands

RULES = [
    ("Rule for the twins: screens off at 8.", "screens"),
    ("Rule for me: no coffee after 2pm.", "coffee"),
    ("House rule for our book club: snacks must be vegetarian.", "snacks"),
    ("Standing rule for releases: no releases after 4pm on Fridays.", "releases"),
    ("Retention policy: keep nightly backups for 30 days.", "retention policy"),
    ("Our expense policy: meals over $60 need a receipt.", "expense policy"),
    ("Deploy policy: only the release captain merges to main.", "deploy policy"),
]


@pytest.mark.parametrize(("text", "key"), RULES)
def test_a_named_rule_stands_as_a_constraint_keyed_by_its_content(text: str, key: str) -> None:
    items = extract(text)
    rules = [i for i in items if i.kind == "constraint" and stands(i)]
    assert rules, items
    assert key in (rules[0].subject or ""), rules
    assert all(not (i.subject or "").startswith("rule") for i in items), items


CONTROLS = [
    "The policy was strange: they let anyone in.",
    "Break the rules: it's fun.",
]


@pytest.mark.parametrize("text", CONTROLS)
def test_a_colon_after_a_rule_word_that_names_no_rule_does_not_stand(text: str) -> None:
    assert_none_stands(text)
