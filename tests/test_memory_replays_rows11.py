"""Memory failure kinds reported against other memory systems, round 11
(docs/evaluation/memory_replays.md, rows 213 and on), replayed on lcm-proxy through
the real openai SDK and the fake upstream, or through ``memory_core`` where the kind is
about extraction or supersession: one section per row; a row marked fixed failed here
before its fix, a row probed OK is kept as a guard."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items.supersession import subjects_match
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later, put, rows
from tests.test_injection import Agent, block_of


def _active(engine: Engine) -> list[str]:
    return [r["text"] for r in rows(engine) if r["status"] == "active"]


def _read(text: str) -> list[tuple[str, str | None, bool, str]]:
    return [(i.kind, i.subject, i.negated, i.text) for i in extract(text)]


# -- 213: an idiom on "No" read as a negation ("No kidding, I have three cats.") -------------
@pytest.mark.parametrize("text, kind, subject", [
    ("No doubt, I love hiking.", "preference", "hiking"),
    ("No kidding, I have three cats.", "fact", "cats"),
    ("No offense, but I prefer tabs.", "preference", "tabs"),
    ("No joke, my commute is 90 minutes.", "fact", "commute"),
])
def test_an_idiom_on_no_denies_nothing(text: str, kind: str, subject: str) -> None:
    # before: "No doubt, …" nothing, "No kidding, …" a negated constraint `kidding cats`
    assert _read(text) == [(kind, subject, False, text)]


@pytest.mark.parametrize("text, negated", [
    ("No emojis in commit messages.", True), ("No, I live in Berlin.", False)])
def test_a_prohibition_or_a_correction_on_no_is_unchanged(text: str, negated: bool) -> None:
    assert [i.negated for i in extract(text)] == [negated]


async def test_a_fact_after_an_idiom_on_no_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("a", "No kidding, I have three cats.")],
                              "How many cats do I have?")
    assert "] No kidding, I have three cats." in block, block
    assert "[Constraints]" not in block, block


# -- 214: an initialism or an ellipsis cuts the sentence ("I moved to the U.S. in 2019.") -----
@pytest.mark.parametrize("text", [
    "I moved to the U.S. in 2019.", "I work for the U.N. in Geneva.",
    "I live in Washington, D.C. with my wife.", "I have a Ph.D. in chemistry.",
    "I live in... Berlin.", "My favourite band is... hmm... Radiohead.",
])
def test_an_initialism_or_a_pause_does_not_end_the_sentence(text: str) -> None:
    # before: "I moved to the U.S.", "I live in..." (the value cut off)
    assert [i.text for i in extract(text)] == [text]


@pytest.mark.parametrize("text, sentences", [
    ("I was born in the U.S.A. My name is Ben.", ["I was born in the U.S.A.", "My name is Ben."]),
    ("We use Postgres... It works.", ["We use Postgres..."]),
])
def test_an_initialism_or_an_ellipsis_before_a_new_sentence_still_ends_one(
        text: str, sentences: list[str]) -> None:
    assert [i.text for i in extract(text)] == sentences


async def test_a_place_after_a_pause_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I live in Madrid."), ("b", "Actually, I live in... Berlin now.")],
        "Where do I live?")
    assert "] Actually, I live in... Berlin now." in block, block
    assert "] I live in Madrid." not in block, block


# -- 215: the name the user gives the assistant taken for the user's own ("Your name is Max.") -
def test_naming_the_assistant_leaves_the_users_name_alone(engine: Engine) -> None:
    # before: "Your name is Max." keyed `name`, in conflict with "My name is Priya."
    put(engine, "My name is Priya.")
    put(engine, "Your name is Max.")
    got = rows(engine)
    assert [(r["text"], r["status"], r["conflict_with"]) for r in got] == [
        ("My name is Priya.", "active", None), ("Your name is Max.", "active", None)]


def test_the_assistants_name_and_the_users_revise_only_their_own(engine: Engine) -> None:
    for text in ("My name is Priya.", "Your name is Max.", "Actually, my name is Priyanka.",
                 "Your name is Jarvis now."):
        put(engine, text)
    assert _active(engine) == ["Actually, my name is Priyanka.", "Your name is Jarvis now."]


@pytest.mark.parametrize("a, b, same", [
    ("your name", "name", False), ("your name", "your name", True),
    ("name", "first name", True),
])
def test_a_key_of_the_assistants_thing_matches_only_another(a: str, b: str, same: bool) -> None:
    assert subjects_match(a, b) is same


async def test_the_users_name_reaches_another_block_beside_the_assistants(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "My name is Priya."), ("b", "Your name is Max.")], "What is my name?")
    assert "] My name is Priya." in block, block
    assert "conflict" not in block.lower(), block


# -- 216: text handed over to translate or proofread stored as the user's facts --------------
@pytest.mark.parametrize("text", [
    "Translate to French: I have two children and live in Rome.",
    "Fix the grammar: me and him goes to school every days.",
    "Please proofread this:\nI am a senior nurse. I always work night shifts.",
    "Can you make this sound more formal: I hate Mondays and I never answer email before 10.",
    "翻译成英文：我有两个孩子，住在罗马。",
    "帮我润色一下：我是一名护士，我总是上夜班。",
    "英訳してください：私は東京に住んでいます。",
])
def test_text_handed_over_for_a_task_states_nothing(text: str) -> None:
    # before: "I have two children" and "I … live in Rome." facts; the grammar line a
    # constraint; the proofread lines a fact and a standing habit
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text, kept", [
    ("Fix the bug: the port is 8080.", "Fix the bug: the port is 8080."),  # names no text
    ("I live in Madrid. Translate to Spanish: I love my dog.", "I live in Madrid."),
])
def test_the_users_own_words_beside_a_task_on_text_stay(text: str, kept: str) -> None:
    assert [i.text for i in extract(text)] == [kept]


async def test_text_to_translate_reaches_no_other_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I live in Madrid."),
        ("b", "Translate to French: I have two children and live in Rome.")],
        "Where do I live?")
    assert "] I live in Madrid." in block, block
    assert "Rome" not in block and "children" not in block, block


# -- 217: a statement said as an aside in parentheses is lost ("(I'm vegan, by the way.)") ---
@pytest.mark.parametrize("text, subject, quoted", [
    ("(I'm vegan.)", "vegan", "I'm vegan."),
    ("Can you suggest a recipe? (I'm vegan, by the way.)", "vegan", "I'm vegan, by the way."),
    ("(btw my name is Priya)", "name", "btw my name is Priya"),
])
def test_an_aside_in_parentheses_is_read_as_typed_without_them(
        text: str, subject: str, quoted: str) -> None:
    # before: nothing, and "(btw my name is Priya)" keyed `btw name`
    assert [(i.kind, i.subject, i.text) for i in extract(text)] == [("fact", subject, quoted)]


@pytest.mark.parametrize("text", ["Use f(a, b) here.", "(1) Always run the tests."])
def test_brackets_that_hold_no_aside_are_left_as_they_are(text: str) -> None:
    assert all("(" in i.text for i in extract(text)) or not extract(text)


async def test_an_aside_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Can you suggest a recipe? (I'm vegan, by the way.)")],
        "What should I cook tonight?")
    assert "] I'm vegan, by the way." in block, block


# -- 218: dots inside an IP address or a version cut the sentence (probed OK) ---------------
@pytest.mark.parametrize("text", [
    "My home server is at 172.16.0.10 in the basement.",
    "We upgraded to Node 20.11.1 last week.",
])
def test_an_address_or_a_version_keeps_its_sentence_whole(text: str) -> None:
    assert [i.text for i in extract(text)] == [text]


# -- 219: a negated clause swallows the positive clause after "and" (probed OK) -------------
def test_a_negated_clause_and_a_liking_after_and_are_two_items() -> None:
    assert _read("I don't drink coffee and I love tea.") == [
        ("preference", "coffee", True, "I don't drink coffee"),
        ("preference", "tea", False, "I love tea.")]


# -- 220: a profile written as label lines stores nothing ("About me:\n- Name: Priya") -----
@pytest.mark.parametrize("text, want", [
    ("About me:\n- Name: Priya\n- City: Berlin\n- Job: nurse",
     [("name", "Name: Priya"), ("city", "City: Berlin"), ("job", "Job: nurse")]),
    ("Name: Priya\nLocation: Berlin\nRole: backend engineer",
     [("name", "Name: Priya"), ("location", "Location: Berlin"),
      ("role", "Role: backend engineer")]),
    ("My details:\nEmail: priya@example.com", [("email", "Email: priya@example.com")]),
])
def test_a_profiles_label_lines_are_the_users_facts(
        text: str, want: list[tuple[str, str]]) -> None:
    # before: nothing at all
    assert [(i.kind, i.subject, i.text) for i in extract(text)] == [
        ("fact", s, t) for s, t in want]


@pytest.mark.parametrize("text", [
    "Name: Priya",  # one line alone: maybe a form the user talks about
    "Name: <Username>\nCity: [Your City]",  # template slots (row 183)
    "Error: port in use\nStatus: failed",  # no attribute of a person
    # a config paste: "name:" nested at two depths, keys no person has around it
    "- hosts: web\n  tasks:\n    - name: install nginx\n      apt:\n        name: nginx",
    "metadata:\n  name: web\n  namespace: prod\nspec:\n  replicas: 3\n  role: api",
])
def test_lines_that_are_no_profile_are_not_read_as_one(text: str) -> None:
    assert not any(i.subject in ("name", "city", "status", "role") for i in extract(text)), \
        extract(text)


async def test_a_profile_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "About me:\n- Name: Priya\n- City: Berlin\n- Job: nurse")],
        "What is my job?")
    assert "] Job: nurse" in block, block


# -- 221: "Scratch that." / "Just kidding." leaves the message before it stored --------------
@pytest.mark.parametrize("take_back", [
    "Scratch that.", "Ignore my last message.", "Just kidding.", "jk",
    "Never mind, forget I said that.", "I take that back", "当我没说", "今のなし",
])
async def test_a_take_back_withdraws_the_message_before_it(
        proxy: RunningProxy, upstream: FakeUpstream, take_back: str) -> None:
    # before: "My favourite color is green." stayed active and in every later block
    agent = Agent(proxy, upstream, session="a")  # one conversation, its history resent
    for text in ("My dog is called Rex.", "My favourite color is green.", take_back):
        await agent.say(text)
        await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("What is my favourite color, and what is my dog called?")
    block = block_of(later.upstream_last_user())
    assert [(r["text"], r["status"]) for r in rows(proxy.engine)
            if r["kind"] != "question"] == [
        ("My dog is called Rex.", "active"), ("My favourite color is green.", "retracted")]
    assert "color is green" not in block and "] My dog is called Rex." in block, block


@pytest.mark.parametrize("reply", [
    "Forget it.", "Never mind.", "Scratch that, make it 14.", "Ignore that warning."])
def test_what_drops_a_request_or_names_a_thing_is_no_take_back(reply: str) -> None:
    from memory_core.extraction.reply import takes_back_last
    assert not takes_back_last(reply)


# -- 222: a save order before the statement loses it ("Please remember my anniversary …") ---
@pytest.mark.parametrize("text, subject", [
    ("Please remember that my anniversary is on 12 May.", "anniversary"),
    ("Please remember my anniversary is on 12 May.", "anniversary"),
    ("Remember my wife's name is Ana.", "wife name"),
    ("Can you remember that I have a dog named Xena", "dog named xena"),
    ("Can you save to memory that my dog is named Xena", "dog"),
    ("Can you remember that my passport expires in June?", "passport"),
    ("Remind me that my passport expires in June.", "passport"),
])
def test_a_save_order_keeps_the_statement_after_it(text: str, subject: str) -> None:
    # before: nothing, "Remember my wife's name …" keyed `remember wife name`
    assert [(i.kind, i.subject, i.text) for i in extract(text)] == [("fact", subject, text)]


@pytest.mark.parametrize("text, kind", [
    ("Remember to run the tests.", "constraint"), ("Please remember to add tests.", "constraint"),
    ("Can you remember my name?", "question"),  # was nothing: now the question it asks
    ("Do you remember that my passport expires in June?", "question"),
])
def test_a_reminder_to_act_or_a_question_about_memory_is_no_statement(
        text: str, kind: str) -> None:
    assert [i.kind for i in extract(text)] == [kind]


async def test_a_statement_kept_by_a_save_order_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Can you remember that I have a dog named Xena")], "What is my dog called?")
    assert "] Can you remember that I have a dog named Xena" in block, block


# -- 223: a request not to keep the message said as a wish ("I don't want this saved: …") -----
@pytest.mark.parametrize("text", [
    "I don't want this saved: my salary is 95000 EUR.",
    "I don't want you to remember this, but my salary is 95000 EUR.",
    "I don't want this kept in your memory. My salary is 95000 EUR.",
    "Please remember that I don't want this saved: my salary is 95000 EUR.",
])
def test_a_wish_not_to_keep_the_message_yields_nothing(text: str) -> None:
    # before: a negated fact keyed `want saved salary` holding the salary (the last form
    # stored nothing only because the save order before it hid everything, row 222)
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text", [
    "I don't want this to be slow.", "I don't want that saved game deleted."])
def test_a_wish_about_something_else_is_no_opt_out(text: str) -> None:
    assert extract(text), text
