"""An age that grows (memory_core/items/age.py)."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from memory_core.items.age import grown_age


def _row(text: str) -> dict[str, object]:
    (ex,) = extract(text)
    return {"text": ex.text, "subject": ex.subject, "value": ex.value, "unit": ex.unit}


@pytest.mark.parametrize("old, new, grown", [
    ("My son is 7.", "My son turned 8.", True),
    ("My son is 7 years old.", "My son is 8 years old.", True),
    ("Our dog is 3.", "Our dog is 4 now.", True),
    ("息子は7歳です。", "息子は8歳になりました。", True),
    ("My son is 7.", "My son is 6.", False),
    ("My son is 7.", "My son is 7.", False),
    ("The build is 7.", "The build is 8.", False),  # no person, no age word
    ("The queue is 7.", "The queue is 8 now.", False),
    ("My son is 7.", "My son has 8 toys.", False),
])
def test_only_a_greater_age_of_a_person_grows(old: str, new: str, grown: bool) -> None:
    (ex,) = extract(new)
    assert grown_age(ex, _row(old)) is grown


@pytest.mark.parametrize("texts, key", [
    (("I'm 35.", "I turned 36.", "I'm 35 years old.", "I just turned 36 last week.",
      "My age is 35."), "age"),
    (("我儿子7岁", "我儿子8岁了", "我儿子今年8岁了。"), "儿子岁"),
    (("我35岁。", "我已经36岁了。", "我现在36岁了。"), "岁"),
    (("私は35歳です。", "私は36歳になりました。", "36歳になりました。"), "歳"),
    (("My son is 7.", "My son turned 8."), "son"),
])
def test_an_age_keys_one_subject_however_it_is_said(texts: tuple[str, ...], key: str) -> None:
    assert {extract(t)[0].subject for t in texts} == {key}


def test_a_number_that_is_no_age_keeps_its_key() -> None:
    assert extract("The build is 7.")[0].subject == "build"
    assert extract("I ran 5 km.")[0].subject != "age"
