"""A leading apology is no part of the statement (memory_core/extraction/apology.py)."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from memory_core.extraction.apology import apology_end, without_apology
from memory_core.items.overlap import without_opener
from memory_core.items.supersession import evaluates


@pytest.mark.parametrize("text, rest", [
    ("Sorry, I live in Hamburg.", "I live in Hamburg."),
    ("I'm so sorry, I live in Hamburg.", "I live in Hamburg."),
    ("Sorry about that - I live in Hamburg.", "I live in Hamburg."),
    ("Oops, sorry! I live in Hamburg.", "I live in Hamburg."),
    ("My apologies: I live in Hamburg.", "I live in Hamburg."),
    ("抱歉，我住在汉堡。", "我住在汉堡。"),
    ("真不好意思，我住在汉堡。", "我住在汉堡。"),
    ("すみません、大阪に住んでいます。", "大阪に住んでいます。"),
    ("申し訳ありませんでした。大阪に住んでいます。", "大阪に住んでいます。"),
])
def test_a_leading_apology_set_off_by_a_mark_is_cut(text: str, rest: str) -> None:
    assert without_apology(text) == rest
    assert without_opener(text) == rest


@pytest.mark.parametrize("text", [
    "I'm sorry to hear that.",
    "Sorry for the late reply yesterday.",
    "Sorry!",  # nothing after it
    "Sorrybot is our chat plugin.",
    "抱歉的话就不用说了。",
])
def test_an_apology_that_leads_nothing_or_is_a_word_is_kept(text: str) -> None:
    assert apology_end(text) == 0


@pytest.mark.parametrize("text, subject, correction", [
    ("I'm sorry, I live in Hamburg.", "home", False),
    ("Apologies, I live in Hamburg.", "home", False),
    ("Sorry, I was wrong earlier: I live in Hamburg.", "home", True),
    ("抱歉，我之前说错了，我住在汉堡。", "home", True),
    ("对不起，我住在汉堡。", "home", False),
])
def test_a_statement_after_an_apology_is_read_as_said_alone(text: str, subject: str,
                                                           correction: bool) -> None:
    (item,) = extract(text)
    assert (item.subject, item.correction, item.text) == (subject, correction, text)


@pytest.mark.parametrize("text, subject, judged", [
    ("Sorry, I live in Hamburg.", "home", False),
    ("I'm sorry, my manager is Lee now.", "manager", False),
    ("Sorry, the trip was awful.", "trip", True),  # the judging word after it still judges
])
def test_an_apology_is_no_impression_of_the_statement(text: str, subject: str,
                                                      judged: bool) -> None:
    assert evaluates(text, subject) is judged
