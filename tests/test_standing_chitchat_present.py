"""Chit-chat that is no standing item, third round on LoCoMo (issue 24, measured by
``docs/evaluation/locomo_block.py``): an "and always …"/"and never …" that goes on
describing someone else, the speaker's activity of the moment told with "now" or
"currently", and a favourite named inside a statement about something else. The
rules, circumstances and tastes beside them still stand. Sentences written here, not
taken from LoCoMo."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands

NOT_STANDING = {
    "another's doing after and": [
        "Yeah, my cousins are a blessing and always check on me.",
        "Dogs make us calmer and never judge us.",
        "Old photos are precious to me and always bring back that summer.",
        "Those lanterns were part of our garden and always remind me of my grandmother.",
        "My neighbours are lovely and always wave at us.",
    ],
    "present activity": [
        "I'm currently knitting a scarf for my niece.",
        "Actually, I'm currently competing in the chess league again.",
        "I'm off to the pool now.",
        "Now, I'm planning a picnic for the volunteers.",
        "We're just painting the fence now.",
    ],
    "attributive favourite": [
        "I copied a few of my favourite lines into a notebook.",
        "The shelf is full of my favourite comics.",
        "My favourite was when we won the final in the last minute.",
        "This scarf was knitted by my favourite aunt.",
    ],
}
STANDING = [
    # orders and a team's rule after "and" keep their split
    "Use tabs and always run the linter.",
    "You should use tabs and never commit to main.",
    "We use Go and never use panics.",
    "Never eat meat.",
    "I never eat meat.",
    "From now on, answer in French.",
    "always reply in English.",
    "Always cite your sources.",
    # circumstances said with "now" or "currently"
    "I'm now living in Lisbon.",
    "We're currently using Postgres for the store.",
    "I'm now working at a bakery downtown.",
    "I'm now studying law in Leeds.",
    # a choice said in the progressive, with no word of now
    "Actually, we're keeping the old bike, sell the new one.",
    "We're sticking with the blue tiles.",
    # lasting restrictions
    "I'm allergic to peanuts.",
    "I'm vegetarian.",
    # favourites stated as such
    "Dune is my favourite book.",
    "My favourite band is Radiohead.",
    "It's one of my favourite cities to walk in.",
    "Here is a photo of my favourite, Blade Runner!",
    "I love my favourite hoodie.",
    "From now on I'll keep a list of my favourite recipes.",
]


@pytest.mark.parametrize(("cls", "text"),
                         [(c, t) for c, texts in NOT_STANDING.items() for t in texts])
def test_chitchat_does_not_stand(cls: str, text: str) -> None:
    assert_none_stands(text)
    if cls != "another's doing after and":
        assert extract(text), (cls, text)  # kept and searchable


@pytest.mark.parametrize("text", STANDING)
def test_rules_circumstances_and_tastes_still_stand(text: str) -> None:
    assert_stands(text)


def test_the_description_is_kept_whole() -> None:
    """The second verb phrase stays with its subject: one fact, not a bare order."""
    items = extract("Dogs make us calmer and never judge us.")
    assert [i.kind for i in items] == ["fact"]
    assert "never judge us" in items[0].text
    assert not any(stands(i) for i in items)
