"""A negation said of a group the speaker is in (issue 24): "we", "my wife and I",
"both of us", "neither of us", 我们, 私たちは — memory_core/extraction/denial.py."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from tests.replay_helpers import put, rows


@pytest.mark.parametrize("text, negated", [
    # the speaker in a group, each predicate class: have, be + adjective/noun, eat,
    # drink, use, own, like
    ("My wife and I don't have a car.", True),
    ("We are not vegetarian.", True),
    ("We're not vegans.", True),
    ("My husband and I are not vegetarian.", True),
    ("Both of us don't drink coffee.", True),
    ("My team and I don't use Jira.", True),
    ("We don't own a house.", True),
    ("We don't like jazz.", True),
    ("We don't eat meat.", True),
    ("Anna and I never had a dog.", True),
    # a contracted be is its aux and its negation
    ("We aren't vegetarian.", True),
    ("Tom and I aren't vegetarian.", True),
    ("I wasn't born in Paris.", True),
    ("We weren't born in Paris.", True),
    ("We were born in Paris.", False),
    # the negation in the subject
    ("Neither of us drinks coffee.", True),
    ("Nobody in my family eats pork.", True),
    ("Neither of us is vegetarian.", True),
    ("Neither my wife nor I have a car.", True),
    ("No one in my family eats pork.", True),
    ("No one on our team uses Windows.", True),
    ("No-one in our house owns a car.", True),
    ("Neither our son nor I are vegetarian.", True),
    ("Neither my wife nor we are vegetarian.", True),
    ("Neither we nor our neighbours have a car.", True),
    # Chinese and Japanese
    ("我们没有车。", True),
    ("我和我妻子没有车。", True),
    ("我们不是素食者。", True),
    ("私たちは肉を食べない。", True),
    ("私と妻は車を持っていません。", True),
    # plain controls: the same shapes affirmed, or another person's negation
    ("My wife and I have a car.", False),
    ("We are vegetarian.", False),
    ("We both drink coffee.", False),
    ("私たちは車を持っています。", False),
    ("我是素食者。", False),
    ("Dana doesn't have a car.", False),
    ("彼は肉を食べない。", False),
])
def test_a_groups_negation_is_kept(text: str, negated: bool) -> None:
    items = extract(text)
    assert items, text
    assert all(i.negated is negated for i in items), [(i.kind, i.subject, i.negated)
                                                      for i in items]


@pytest.mark.parametrize("said, then", [
    ("My wife and I don't have a car.", "We have a car now."),
    ("We are not vegetarian.", "We are vegetarian now."),
    ("I don't have a car.", "I have a car now."),
])
def test_a_later_statement_supersedes_the_groups_denial(engine: Engine, said: str,
                                                        then: str) -> None:
    put(engine, said)
    put(engine, then)
    old, new = rows(engine)
    assert old["status"] == "superseded" and new["supersedes"] == old["id"], rows(engine)
