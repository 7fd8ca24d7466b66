"""Experiences (issue 24): what a person has or has not done, seen or been to, kept as
a fact keyed by the experience (memory_core.extraction.experience), and one said anew
turning over the one it contradicts."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.extraction.experience import read
from tests.replay_helpers import put, rows


def _one(text: str) -> tuple[str, str | None, bool]:
    (item,) = extract(text)
    return item.kind, item.subject, item.negated


@pytest.mark.parametrize("text, subject, negated", [
    ("I've been to Japan twice.", "visited japan", False),
    ("I have been to Japan.", "visited japan", False),
    ("I have never been to Japan.", "visited japan", True),
    ("I've never been to Japan.", "visited japan", True),
    ("I have not been to Japan.", "visited japan", True),
    ("I haven't been to Japan since 2019.", "visited japan", True),
    ("I've never visited Japan.", "visited japan", True),
    ("I visited Japan in May.", "visited japan", False),
    ("I've been to Japan 3 times.", "visited japan", False),
    ("I have been to the Louvre a few times.", "visited louvre", False),
    ("I haven't tried Rust yet.", "tried rust", True),
    ("I have tried sushi once.", "tried sushi", False),
    ("I've met Obama three times.", "met obama", False),
    ("I've worked with Kubernetes before.", "worked kubernetes", False),
    ("I've never used Vim.", "vim", True),
    ("My son has never flown before.", "son flown", True),
    ("Caroline has been to Japan.", "caroline visited japan", False),
    ("我去过日本。", "去过日本", False),
    ("我没去过日本。", "去过日本", True),
    ("我从来没去过日本。", "去过日本", True),
    ("我去过日本两次。", "去过日本", False),
    ("我还没吃过寿司。", "吃过寿司", True),
    ("日本に行ったことがある。", "日本に行った", False),
    ("日本に行ったことがない。", "日本に行った", True),
    ("日本に二回行ったことがあります。", "日本に行った", False),
    ("私は寿司を食べたことがありません。", "寿司を食べた", True),
])
def test_an_experience_is_a_fact_keyed_by_what_was_done(text: str, subject: str,
                                                          negated: bool) -> None:
    assert _one(text) == ("fact", subject, negated)


@pytest.mark.parametrize("text", [
    "I've been in meetings all day.",  # a day, no experience
    "I've been to the gym.",  # no place named, no count: a day's event
    "I have used Vim for years.",  # how long a state held
    "I've lived in Paris for ten years.",
    "I've tried that before.",  # the thing at hand
    "Have you been to Japan?",  # a question
])
def test_other_perfects_are_no_experience(text: str) -> None:
    lang = "en"
    assert read(text.rstrip("."), lang) is None


def test_an_experience_is_never_standing() -> None:
    for text in ("I've never been to Japan.", "我没去过日本。", "日本に行ったことがない。"):
        (item,) = extract(text)
        assert not item.lasting and not item.one_off and not item.tentative


@pytest.mark.parametrize("first, then", [
    ("I've never been to Japan.", "I visited Japan in May."),
    ("I've been to Japan twice.", "I haven't been to Japan."),
    ("I visited Japan in May.", "I've never been to Japan."),
    ("I've never visited Japan.", "I've visited Japan twice."),
    ("我没去过日本。", "我去过日本。"),
    ("我去过日本。", "我没去过日本。"),
    ("日本に行ったことがない。", "日本に行ったことがある。"),
])
def test_an_experience_said_anew_turns_over_the_old(engine: Engine, first: str,
                                                    then: str) -> None:
    put(engine, first)
    put(engine, then)
    old, new = rows(engine)
    assert (old["status"], new["status"]) == ("superseded", "active"), rows(engine)
    assert new["supersedes"] == old["id"] and new["conflict_with"] is None


@pytest.mark.parametrize("first, then", [
    ("My son has never flown before.", "I've flown to Lisbon twice."),  # another person
    ("I've never been to Japan.", "I've never been to Japan."),  # one polarity
    ("I've never been to Japan.", "I've been to Korea twice."),  # another place
])
def test_other_experiences_leave_the_old_active(engine: Engine, first: str,
                                                then: str) -> None:
    put(engine, first)
    put(engine, then)
    assert all(r["status"] == "active" for r in rows(engine)), rows(engine)
