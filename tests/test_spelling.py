"""British and American spellings folded where subject keys are compared
(memory_core/items/spelling.py)."""

from __future__ import annotations

import pytest

from memory_core.items.spelling import fold, fold_word, variants
from memory_core.items.supersession import more_specific, spelled_alike, subjects_match


@pytest.mark.parametrize("british, american", [
    ("colour", "color"), ("favourite", "favorite"), ("flavours", "flavors"),
    ("behaviour", "behavior"), ("honourable", "honorable"), ("centre", "center"),
    ("centred", "centered"), ("kilometres", "kilometers"), ("organise", "organize"),
    ("organisation", "organization"), ("prioritising", "prioritizing"),
    ("analyse", "analyze"), ("travelled", "traveled"), ("cancelling", "canceling"),
    ("grey", "gray"), ("programmes", "programs"), ("catalogue", "catalog"),
    ("defence", "defense"), ("licence", "license"),
])
def test_both_spellings_fold_to_one(british: str, american: str) -> None:
    assert fold_word(british) == fold_word(american) == american
    assert british in variants(american) and american in variants(british)


@pytest.mark.parametrize("word", [
    # an -our, -ise, -re or doubled l that is no spelling pair
    "four", "hour", "tour", "your", "rise", "wise", "noise", "prise", "filled", "called",
    "laboratory", "genre", "acre", "cheque", "tyre", "storey",
])
def test_words_with_one_spelling_are_left_alone(word: str) -> None:
    assert fold_word(word) == word and variants(word) == [word]


def test_a_subject_folds_word_by_word_and_its_variants_are_bounded() -> None:
    assert fold("favourite colour") == fold("favorite color") == "favorite color"
    assert variants("favourite colour")[0] == "favourite colour"
    assert len(variants("colour centre organise grey behaviour")) == 8


@pytest.mark.parametrize("a, b", [
    ("colour", "color"), ("favourite colour", "color"), ("wall colour", "wall color"),
])
def test_subjects_spelled_two_ways_match(a: str, b: str) -> None:
    assert subjects_match(a, b) and subjects_match(b, a)


def test_a_spelling_is_no_narrower_subject() -> None:
    assert not more_specific("colour", "color")
    assert more_specific("wall colour", "color")


def test_a_correction_compares_spellings_word_for_word() -> None:
    assert spelled_alike("meeting centre", "meeting center", "the meeting centre",
                         "the meeting center")
    assert not spelled_alike("meeting centre", "meeting room", "", "")
