"""Defects found by the cold review of the rev18 merges (rows11, newcomer6): each test
failed on the merged code before its fix."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from memory_core.extraction.reply import takes_back_last
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream, Reply
from memory_core.engine import Engine
from tests.replay_helpers import put, rows
from tests.test_injection import Agent


# -- "Not really." answers the assistant's question; it takes nothing back ---------------
@pytest.mark.parametrize("reply", ["Not really.", "No, not really.", "Nah not really",
                                   "Hmm, not really."])
def test_not_really_is_no_take_back(reply: str) -> None:
    assert not takes_back_last(reply)


@pytest.mark.parametrize("reply", ["不算", "不算了。"])
def test_a_bare_doesnt_count_is_no_take_back(reply: str) -> None:
    # "周末算工作日吗？" "不算。": an answer; 刚才说的不算 still takes back
    assert not takes_back_last(reply) and takes_back_last("刚才说的不算")


async def test_not_really_after_a_question_keeps_the_statement_before(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # before: "I love hiking." was retracted by the answer to "Do you camp too?"
    upstream.push(Reply("Nice! Do you go camping too?"), Reply("Fair enough."))
    agent = Agent(proxy, upstream, session="a")
    for text in ("I love hiking in the Alps.", "Not really."):
        await agent.say(text)
        await proxy.settle()
    assert [(r["text"], r["status"]) for r in rows(proxy.engine)
            if r["kind"] != "question"] == [("I love hiking in the Alps.", "active")]


# -- a record a task works on is no profile of the user ----------------------------------
@pytest.mark.parametrize("text", [
    "Create a user account with these fields:\nName: John Smith\nRole: admin\n"
    "Email: john@acme.com",
    "Write a SQL insert for this row:\nName: Alice\nAge: 30\nCity: Boston",
    "Name: Alice\nAge: 30\nTurn this into a JSON object.",
])
def test_label_lines_that_come_with_a_task_are_not_the_users(text: str) -> None:
    # before: "Name: John Smith" stored as the user's name, "Email: …" as theirs
    # ("Age: 30" and "City: Boston" alone were read so before the profile rule: left)
    assert not any(i.subject in ("name", "role", "email") for i in extract(text)), \
        extract(text)


def test_label_lines_that_are_the_whole_message_are_still_a_profile() -> None:
    assert [i.subject for i in extract("Name: Priya\n\nCity: Berlin\n")] == ["name", "city"]


# -- a bare "Remember …?" asks whether the assistant recalls; it states nothing -----------
@pytest.mark.parametrize("text", [
    "Remember I told you about my sister?", "Remember I have a dog?",
    "Remember when I said I like tea?"])
def test_remember_asked_is_a_question(text: str) -> None:
    # before: "Remember I told you about my sister?" a fact keyed `told`
    assert [i.kind for i in extract(text)] == ["question"], extract(text)


@pytest.mark.parametrize("text", [
    "Can you remember that my passport expires in June?",
    "Please remember my anniversary is on 12 May."])
def test_a_save_order_still_keeps_its_statement(text: str) -> None:
    assert [i.kind for i in extract(text)] == ["fact"]


# -- a take-back of an update brings the value it replaced back --------------------------
@pytest.mark.parametrize("take_back", ["Just kidding.", "Scratch that."])
async def test_a_take_back_of_an_update_restores_the_value_before(
        proxy: RunningProxy, upstream: FakeUpstream, take_back: str) -> None:
    # before: "My rent is 1400 EUR." stayed superseded by the retracted update, so no
    # rent at all was left
    agent = Agent(proxy, upstream, session="a")
    for text in ("My rent is 1400 EUR.", "My rent is 1500 EUR now.", take_back):
        await agent.say(text)
        await proxy.settle()
    assert [(r["text"], r["status"]) for r in rows(proxy.engine)
            if r["kind"] != "question"] == [
        ("My rent is 1400 EUR.", "active"), ("My rent is 1500 EUR now.", "retracted")]


# -- a statement about the thing is no experience of it -----------------------------------
@pytest.mark.parametrize("first, then", [
    ("I have never used Docker.", "Docker is slow on my Mac."),
    ("I've never had a car.", "The car is in the garage."),
    ("Vim is hard.", "I've never used Vim."),
])
def test_a_statement_about_the_thing_leaves_the_experience(
        engine: Engine, first: str, then: str) -> None:
    # before: "Docker is slow on my Mac." turned over "I have never used Docker."
    # (a light verb keys the experience by its object alone, `docker`)
    put(engine, first)
    put(engine, then)
    assert all(r["status"] == "active" for r in rows(engine)), rows(engine)


@pytest.mark.parametrize("first, then", [
    ("I've never had a car.", "My car is red."),
    ("I've never been to Japan.", "I visited Japan in May."),
])
def test_the_speakers_own_use_still_turns_over_the_experience(
        engine: Engine, first: str, then: str) -> None:
    put(engine, first)
    put(engine, then)
    assert [r["status"] for r in rows(engine)] == ["superseded", "active"], rows(engine)


# -- a file or domain name before a lower-case sentence is no initialism -----------------
@pytest.mark.parametrize("text, want", [
    ("i use node.js. my team uses go.", ["i use node.js.", "my team uses go."]),
    ("we use vue.js. the backend is django.", ["we use vue.js.", "the backend is django."]),
    ("I moved to the U.S. in 2019.", ["I moved to the U.S. in 2019."]),
    ("I have a Ph.D. in chemistry.", ["I have a Ph.D. in chemistry."]),
])
def test_only_an_initialism_keeps_a_lower_case_sentence_after_it(
        text: str, want: list[str]) -> None:
    # before: any word with a dot inside ("node.js") held the next sentence in its own
    assert [i.text for i in extract(text)] == want
