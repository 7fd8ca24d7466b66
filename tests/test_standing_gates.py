"""Three structural gates on what stands (issue 24, item 3): who speaks, when it holds,
what it asks (:mod:`memory_core.items.standing_gates`). Sentences here are in no
labelled split; each stood before the gate. The controls are rules, traits and
settings of the user's own, which still stand."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.extraction.transcript import other_lines
from memory_core.items.fields import extraction_data
from tests.standing_helpers import assert_none_stands, assert_stands

OTHERS_WORDS = [
    # another speaker's line of a pasted chat that the user's own line does not adopt
    "Lena: from now on we squash-merge everything\nme: hmm, let me think about it",
    "Omar: going forward every invoice goes out on the 2nd\nme: let me think about it",
    # the same, pasted under a line that introduces it and above the user's question
    "Here's our team chat from this morning:\nDana: from now on every PR needs two"
    " approvals\nRaj: lunch is at noon today\nme: I'll think about it\nCan you summarise it?",
    # a rule relayed from someone else about someone other than the user
    "The coach says kids under 10 should never play more than 60 minutes.",
    "My landlord says tenants must never sublet for more than 30 days.",
    # a named person's habit, with a number
    "Jonas always uses 4 spaces.",
]


@pytest.mark.parametrize("text", OTHERS_WORDS)
def test_someone_elses_words_do_not_stand(text: str) -> None:
    assert_none_stands(text)


BOUND_TO_NOW = [
    "Quiz me on 5 capitals now.",
    "Please book a table for 4 tonight.",
    "I need the slides done in 20 minutes.",
    "Translate 2 pages for me today, please.",
]


@pytest.mark.parametrize("text", BOUND_TO_NOW)
def test_a_request_bound_to_the_moment_does_not_stand(text: str) -> None:
    assert_none_stands(text)


PAST_REPORTS = [
    "I paid $40 for the concert tickets.",
    "Spent $1,200 on the flights.",
    "We spent €300 on the venue deposit.",
    "今日は12キロも歩いてしまった。",
    "今日は3時間も待った。",
]


@pytest.mark.parametrize("text", PAST_REPORTS)
def test_a_number_told_in_the_past_tense_does_not_stand(text: str) -> None:
    assert_none_stands(text)


SINGLE_REQUESTS = [
    "I'd like a replacement charger.",
    "I'd like an extra pillow.",
    "We'd like a refund for order 5512.",
]


@pytest.mark.parametrize("text", SINGLE_REQUESTS)
def test_a_wish_for_one_thing_does_not_stand(text: str) -> None:
    assert_none_stands(text)


STANDING = [
    "From now on answer in British English.",
    "From today, always answer in British English.",
    "Never commit to main.",
    "I'm vegetarian.",
    "Our budget is $40k.",
    "The budget is $50k now.",
    "I set the timeout to 30 seconds.",
    "We capped the budget at $5k.",
    "I'd like all answers in Spanish.",
    "My doctor says I must avoid gluten, keep that in mind.",
    "The README says the port is 8080.",
    "Jonas said the budget is capped at 500 euros.",
    "We gave the build VM 16 GB of RAM.",
    # a name alone leads the message: its sender, as a group chat names them
    "Tom: my team moved the standup to 9:45.",
    # a colleague's line the user agrees to, or the team acknowledges
    "Marco: going forward we freeze the API every Monday\nme: sounds good, let's do that",
    "Ines: from now on every release gets a changelog entry\nPaul: agreed.",
    "佐藤：今後、レビューは2人以上で行います。\n私：了解です。",
]


@pytest.mark.parametrize("text", STANDING)
def test_the_users_own_rules_and_settings_still_stand(text: str) -> None:
    assert_stands(text)


def test_other_lines_are_the_lines_nobody_adopts() -> None:
    text = "Dan: from now on we estimate in hours\nme: I'll push back on that"
    assert other_lines(text) == [(0, text.index("\nme:") + 1)]
    assert other_lines("Dan: from now on we estimate in hours\nme: ok, agreed") == []
    assert not any(a == 0 for a, _ in other_lines(
        "Dan: from now on we estimate in hours\nAmy: 👍"))
    # a chat framed by the user's lines: a note above it, a question below it
    framed = ("Chat from this morning:\n" + text + "\n\nCan you summarise it?")
    assert other_lines(framed) == [(framed.index("Dan:"), framed.index("\nme:") + 1)]
    ends = "Dan: from now on we estimate in hours\nAmy: sure\nRaj: we ship Friday\nThoughts?"
    assert other_lines(ends)[-1] == (ends.index("Raj:"), ends.index("\nThoughts?"))
    # a line no speaker leads amid the chat: notes, no chat
    assert other_lines("Dan: from now on we estimate in hours\nsome notes\nme: ok") == []
    # one speaker alone, or a header's fields, is no chat
    assert other_lines("Tom: my team moved the standup to 9:45.") == []
    assert other_lines("Status: green\nOwner: Dana") == []


def test_extraction_marks_another_speakers_line_quoted() -> None:
    items = extract("Dan: going forward I want all tickets in hours\n"
                    "me: I'll push back on that tomorrow, points work fine")
    dans = [i for i in items if "tickets" in i.text]
    assert dans and all(i.quoted for i in dans), items
    assert extraction_data(dans[0])["quoted"] is True
    assert not any(i.quoted for i in items if "push back" in i.text)


def test_a_framed_chat_keeps_the_speakers_name_out_of_the_key_and_the_adopted_rule_stands(
        ) -> None:
    """A pasted chat under a line introducing it, with the user's question below, is
    still a chat: the speaker's name is no part of a key, and the rule the user agrees
    to stands."""
    text = ("Here's our team chat from this morning:\nKim: going forward, every incident"
            " gets a postmortem within 48 hours.\nRaj: agreed.\nCan you summarise it?")
    items = extract(text)
    rule = [i for i in items if "postmortem" in i.text]
    assert rule and not rule[0].quoted and "kim" not in (rule[0].subject or ""), items
    assert stands(rule[0]), rule


@pytest.mark.parametrize("text", [
    "dana: from now on every PR needs two approvals\nraj: I think we should squash-merge"
    " everything\nme: agreed, from now on we squash-merge everything",
    "Dana: from now on every PR needs two approvals\nRaj: I think we should squash-merge"
    " everything\nme: agreed, from now on we squash-merge everything",
])
def test_each_chat_line_is_read_alone_and_an_acknowledgement_leads_the_users_rule(
        text: str) -> None:
    """A line led by a speaker ("raj: ", "me: ") is no soft-wrapped continuation of the
    line above, even where it goes on in lower case; "agreed," before the user's rule
    is an acknowledgement, not its subject."""
    items = extract(text)
    assert items and not any("\n" in i.text for i in items), items
    rule = [i for i in items if i.text.startswith("agreed, from now on")]
    assert len(rule) == 1 and rule[0].kind == "constraint", items
    assert rule[0].subject == "squash-merge everything" and stands(rule[0]), rule


def test_the_users_own_answer_to_a_rule_they_do_not_adopt_is_theirs() -> None:
    """The colleague's rule stays their words; the user's reply on the next line, read
    alone, is the user's own preference."""
    items = extract("Lena: from now on we squash-merge everything\nme: nah, I prefer rebase")
    lena = [i for i in items if "squash-merge" in i.text]
    mine = [i for i in items if "rebase" in i.text]
    assert lena and all(i.quoted and not stands(i) for i in lena), items
    assert len(mine) == 1 and "squash" not in mine[0].text and stands(mine[0]), items
@pytest.mark.parametrize("text", [
    "I paid $40 for the concert tickets, remember that.",
    "Spent $1,200 on the flights, don't forget that.",
])
def test_a_past_number_the_user_asks_to_keep_stands(text: str) -> None:
    # before: the past-report gate hid what the user asked the assistant to keep
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "My name is Alex now, please update it.",
    "Our main database is Postgres now, please update your notes.",
])
def test_an_own_value_new_now_with_a_request_after_it_stands(text: str) -> None:
    # before: "now," and "please" read as a request bound to the moment
    assert_stands(text)


def test_a_state_now_before_a_request_stays_the_moments() -> None:
    assert_none_stands("I'm free now, quiz me on 5 capitals.")
