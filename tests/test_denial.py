"""Denials of the speaker's own facts (memory_core/extraction/denial.py)."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from memory_core.extraction.denial import Denial, find, head, states


@pytest.mark.parametrize("text, lang, verb, what, ending", [
    ("I don't have a dog, that was a mistake.", "en", "have", "a dog", False),
    ("I never had a dog.", "en", "have", "a dog", False),
    ("I've never had a dog.", "en", "have", "a dog", False),
    ("I'm not actually married.", "en", "be", "married", False),
    ("I am no longer married.", "en", "be", "married", True),
    ("I don't have a dog anymore.", "en", "have", "a dog", True),
    ("I do not live in Berlin.", "en", "liv", "in Berlin", False),
    ("我其实没结婚。", "zh", "", "结婚", False),
    ("我从来没养过狗。", "zh", "", "养狗", False),
    ("私は結婚していません。", "ja", "", "結婚し", False),
])
def test_the_speakers_own_negation_is_a_denial(text: str, lang: str, verb: str, what: str,
                                               ending: bool) -> None:
    assert find(text, lang) == Denial(verb, what, ending)


@pytest.mark.parametrize("text, lang", [
    ("Dana doesn't have a dog.", "en"),  # another person
    ("Don't I have a dog?", "en"),  # a question
    ("I don't have a dog?", "en"),
    ("I don't know.", "en"),  # nothing it holds of
    ("Tomorrow I don't have to work.", "en"),  # a plan led by a day
    ("I have a dog.", "en"),
    ("我结婚了。", "zh"),
    ("他没有狗。", "zh"),
    ("私は結婚しています。", "ja"),
])
def test_other_negations_and_statements_are_no_denial(text: str, lang: str) -> None:
    assert find(text, lang) is None


@pytest.mark.parametrize("phrase, words", [
    ("a dog named Rex", ("dog",)),
    ("in Berlin with my sister", ("berlin",)),
    ("a dog's bed", ("dog", "bed")),
    ("married to Anna", ("marri",)),
    ("a car loan", ("car", "loan")),
])
def test_the_head_of_a_phrase_stops_at_its_qualifier(phrase: str, words: tuple[str, ...]) -> None:
    assert head(phrase) == words


@pytest.mark.parametrize("denial, stored, lang, affirmed", [
    ("I never had a dog.", "I have a dog named Rex.", "en", True),
    ("I'm not actually married.", "I'm married to Anna.", "en", True),
    ("I'm not actually married.", "I am married.", "en", True),
    ("I don't have a dog.", "I have a dog's bed.", "en", False),
    ("I don't have a car.", "I have a car loan.", "en", False),
    ("I don't have a dog.", "Dana has a dog.", "en", False),
    ("I'm not working today.", "I'm working on the parser.", "en", False),
    # a bare feeling denied is no stance taken back: the stance names what it is about
    ("I'm not tired.", "I'm tired of my job.", "en", False),
    ("I'm not scared.", "I'm scared of heights.", "en", False),
    ("I'm not worried.", "I am worried about the launch.", "en", False),
    ("I'm not tired of my job anymore.", "I'm tired of my job.", "en", True),
    ("I'm not a fan.", "I'm a fan of jazz.", "en", True),  # a noun: the fan is denied
    # a reason, a time or a place after the state is no object of a feeling: the
    # bare denial takes the state back (review rev8)
    ("I'm not vegan.", "I'm vegan for ethical reasons.", "en", True),
    ("I'm not busy.", "I'm busy on Friday.", "en", True),
    ("I'm not busy.", "I'm busy at 3pm.", "en", True),
    ("I'm not tired.", "I'm tired since Monday.", "en", True),
    ("I'm not fluent.", "I'm fluent in French.", "en", True),  # kept consistent
    ("I don't have a dog.", "I don't have a dog named Rex.", "en", False),  # negated too
    ("我从来没养过狗。", "我养了一只狗，叫Rex。", "zh", True),
    ("我没有狗。", "我有狗粮。", "zh", False),
    ("私は結婚していません。", "私は結婚しています。", "ja", True),
])
def test_a_stored_fact_states_what_is_denied(denial: str, stored: str, lang: str,
                                             affirmed: bool) -> None:
    said = find(denial, lang)
    assert said is not None
    assert states(said, stored, lang) is affirmed


def test_extraction_marks_a_denial_negated_and_leaves_the_statement() -> None:
    (denied,) = extract("I never had a dog.")
    (stated,) = extract("I have a dog named Rex.")
    (other,) = extract("Dana doesn't have a dog.")
    assert (denied.kind, denied.negated) == ("fact", True)
    assert not stated.negated and not other.negated
