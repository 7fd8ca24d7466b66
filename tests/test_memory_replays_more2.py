"""Memory failure kinds reported against other memory systems, round 10
(docs/evaluation/memory_replays.md, rows 199 and on), replayed on lcm-proxy through
the real openai SDK and the fake upstream, or through ``memory_core`` where the kind is
about extraction or supersession: one section per row; a row marked fixed failed here
before its fix, a row probed OK is kept as a guard."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import contractions, extract
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later, put, rows


def _active(engine: Engine) -> list[str]:
    return [r["text"] for r in rows(engine) if r["status"] == "active"]


def _read(text: str) -> list[tuple[str, str | None, bool, str]]:
    return [(i.kind, i.subject, i.negated, i.text) for i in extract(text)]


# -- 199: a negation typed without its apostrophe ("i dont like coffee") ----------------------
@pytest.mark.parametrize("casual, formal", [
    ("i dont like coffee", "i don't like coffee"),
    ("we dont use jira", "we don't use jira"),
    ("i cant stand jazz", "i can't stand jazz"),
    ("i wont work on fridays", "i won't work on fridays"),
    ("i havent got a car", "i haven't got a car"),
    ("my wife isnt vegan", "my wife isn't vegan"),
    ("im vegan", "i'm vegan"),
    ("Ive moved to Lisbon", "I've moved to Lisbon"),
])
def test_a_contraction_typed_without_its_apostrophe_reads_as_written_with_it(
        casual: str, formal: str) -> None:
    # before: "we dont use jira" a positive fact, "i cant stand jazz" a liking kept
    # as a fact, "im vegan" and "my wife isnt vegan" nothing
    want = [(k, s, n, t.replace("'", "")) for k, s, n, t in _read(formal)]
    assert want and _read(casual) == want, (_read(casual), want)


@pytest.mark.parametrize("text", [
    "As is his wont, he came late.", "The cant of the campaign annoys me.",  # nouns
    "I will be ill on Monday.", "Well, we were well prepared.", "Its id is 7.",  # words
])
def test_words_that_only_look_like_contractions_are_left_alone(text: str) -> None:
    assert contractions.restore(text) == (text, frozenset())


def test_a_restored_contraction_is_quoted_as_typed_beside_one_written_out() -> None:
    # the apostrophes the user typed stay; only the ones read in are taken out again
    items = extract("I don't drink beer. i dont eat pork.")
    assert [(i.text, i.negated) for i in items] == [
        ("I don't drink beer.", True), ("i dont eat pork.", True)], items


async def test_casual_typing_supersedes_the_statement_in_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I like jazz."), ("b", "I live in Porto."),
        ("c", "i cant stand jazz"), ("d", "im living in Lisbon now")],
        "Where do I live, and do I like jazz?")
    # before: "i cant stand jazz" a fact beside the liking, "im living …" beside Porto
    assert "- i cant stand jazz" in block.split("[User Preferences]", 1)[1], block
    assert "] im living in Lisbon now" in block, block
    assert "] I like jazz." not in block and "] I live in Porto." not in block, block


# -- 200: a complaint about the assistant read as a standing order ("you never remember") -----
@pytest.mark.parametrize("text", [
    "you never remember ANYTHING", "You always forget my name, this is annoying.",
    "You never listen.", "You always do this.", "You always mess up the imports!",
])
def test_a_complaint_about_the_assistant_is_no_order(text: str) -> None:
    # before: each a constraint ("never remember anything" a prohibition in every block)
    assert all(i.kind != "constraint" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text, negated", [
    ("You never use semicolons in this repo.", True),  # a norm stated of "you"
    ("Never forget to run the linter.", False), ("You must never forget the changelog.", True),
    ("Please always remember to add tests.", False),
])
def test_an_order_about_remembering_or_a_norm_stays_an_order(text: str, negated: bool) -> None:
    assert [(i.kind, i.negated) for i in extract(text)] == [("constraint", negated)]


async def test_a_complaint_never_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("rant", "you never remember ANYTHING"), ("name", "My name is Priya.")],
        "What is my name?")
    assert "] My name is Priya." in block, block
    assert "never remember" not in block, block

