"""More chit-chat that is no standing item (issue 24, second round on LoCoMo, measured
by ``docs/evaluation/locomo_block.py``): an empty "let's", a past choice told as an
event, a "must" that guesses, a liking of what is pointed at, a number inside the
subject it describes. Each is kept and searchable, not put in every block; the
rules, decisions and tastes beside them still stand. Sentences written here, not
taken from LoCoMo."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_stands

NOT_STANDING = {
    "empty hortative": [
        "Let's do it!",
        "Sure, let's go for it and have fun!",
        "Let's make it happen, Dana!",
        "Let's keep at it.",
    ],
    "past choice": [
        "Last week I chose to sign up for the choir.",
        "Yesterday I decided to repaint the fence.",
        "I picked this frame because it matches the wall.",
        "I decided to add this at the very end.",
    ],
    "guessing must": [
        "It must add so much warmth to the kitchen.",
        "Your garden must have a lot of birds.",
    ],
    "pointed liking": [
        "I love the colours of this harbour.",
        "I love seeing them nap like this.",
        "I love how it looks in the evening.",
        "I love this bowl!",
        "I love escaping to that island.",
    ],
    "counted description": [
        "The 3 older cousins adore chess.",
        "I ran a 10K for the food bank.",
    ],
}
STANDING = [
    "Let's use Postgres for the store.",
    "Let's do it in Rust.",
    "We decided to use Kafka for the event bus.",
    "I decided to go vegan.",
    "I chose Postgres because it has good JSON support.",
    "You must always run the tests before pushing.",
    "The API must return JSON.",
    "Passwords must be at least 12 characters.",
    "I love the ocean.",
    "I love coconut milk.",
    "I love stories that end well.",
    "Our 3 replicas run in us-east.",
    "We configured the timeout to 30 seconds.",
    "I capped the pool at 20 connections.",
    "We allocated 16 GB to the build VM.",
]


@pytest.mark.parametrize(("cls", "text"),
                         [(c, t) for c, texts in NOT_STANDING.items() for t in texts])
def test_chitchat_is_kept_but_does_not_stand(cls: str, text: str) -> None:
    items = extract(text)
    assert items, (cls, text)  # kept and searchable
    assert not any(stands(i) for i in items), (cls, items)


@pytest.mark.parametrize("text", STANDING)
def test_rules_decisions_and_tastes_with_content_still_stand(text: str) -> None:
    assert_stands(text)
