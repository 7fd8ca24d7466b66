"""Memory failure kinds reported against other memory systems, round 12
(docs/evaluation/memory_replays.md, rows 224 and on), and leftovers seen in earlier
rounds, replayed on lcm-proxy through the real openai SDK and the fake upstream, or
through ``memory_core`` where the kind is about extraction or supersession: one section
per row; a row marked fixed failed here before its fix, a row probed OK is kept as a
guard."""

from __future__ import annotations

import time

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later, put, rows
from tests.test_injection import Agent, block_of


def _active(engine: Engine) -> list[str]:
    return [r["text"] for r in rows(engine) if r["status"] == "active"]


def _read(text: str) -> list[tuple[str, str | None, bool, str]]:
    return [(i.kind, i.subject, i.negated, i.text) for i in extract(text)]


# -- 224: a simple-past experience keyed by its verb ("I went to Japan." `went`) --------------
@pytest.mark.parametrize("text, subject", [
    ("I went to Japan.", "visited japan"),
    ("I went to Japan last year.", "visited japan"),
    ("I tried Rust last week.", "tried rust"),
    ("I finally tried sushi yesterday.", "tried sushi"),
    ("We climbed Kilimanjaro in 2019.", "climbed kilimanjaro"),
    ("I ate sushi for the first time in Tokyo.", "eaten sushi"),
    ("I never tried Rust.", "tried rust"),
])
def test_a_simple_past_experience_is_keyed_as_the_perfect_is(text: str, subject: str) -> None:
    # before: "I went to Japan." keyed `went`, "I tried Rust last week." `tried rust last week`
    assert [(i.kind, i.subject) for i in extract(text)] == [("fact", subject)]


@pytest.mark.parametrize("text", [
    "I went to the gym.", "I tried to fix it.", "I tried that yesterday.",
    "I went to bed early.",
])
def test_a_simple_past_of_the_day_or_an_attempt_is_no_experience(text: str) -> None:
    from memory_core.extraction import experience
    assert experience.read(text, "en") is None


@pytest.mark.parametrize("before, after", [
    ("I haven't tried Rust yet.", "I tried Rust last week."),
    ("I've never been to Japan.", "I went to Japan in April."),
    ("I have never eaten sushi.", "I ate sushi for the first time last month."),
])
def test_a_simple_past_experience_turns_over_its_denial(
        engine: Engine, before: str, after: str) -> None:
    put(engine, before)
    put(engine, after)
    assert _active(engine) == [after]


async def test_an_experience_said_in_the_simple_past_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I haven't tried Rust yet."), ("b", "I tried Rust last week.")],
        "Should I write the tool in Rust?")
    assert "] I tried Rust last week." in block, block
    assert "\"I haven't tried Rust yet.\" — superseded" in block, block


# -- 225: a chore of the moment stored as a lasting experience ("I haven't done the dishes") --
@pytest.mark.parametrize("text", [
    "I haven't done the dishes yet.", "I haven't had lunch yet.",
    "I've already taken my meds.", "I haven't done my homework yet.",
])
def test_a_chore_of_the_moment_is_no_experience_and_stays_in_its_conversation(
        text: str) -> None:
    from memory_core.extraction import experience
    assert experience.read(text, "en") is None
    assert all(i.local for i in extract(text)), extract(text)


@pytest.mark.parametrize("text, subject", [
    ("I haven't tried Rust yet.", "tried rust"), ("I have never done yoga.", "yoga"),
    ("I've taken the train to Paris twice.", "train"),
])
def test_an_experience_of_a_life_is_still_one(text: str, subject: str) -> None:
    from memory_core.extraction import experience
    got = experience.read(text, "en")
    assert got is not None and got.subject == subject


async def test_a_chore_of_the_moment_reaches_no_other_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I haven't done the dishes yet."), ("b", "My dog is called Rex.")],
        "What should I do tonight with the dishes and the dog?")
    assert "dishes yet" not in block, block
    assert "] My dog is called Rex." in block, block


# -- 226: "Ignore that." after the assistant's reply takes back the user's message ------------
@pytest.mark.parametrize("reply", ["Ignore that.", "Disregard that.", "Forget that."])
async def test_a_bare_ignore_that_after_a_reply_leaves_the_users_message(
        proxy: RunningProxy, upstream: FakeUpstream, reply: str) -> None:
    # before: "My favourite color is green." was retracted by "Ignore that." about the reply
    agent = Agent(proxy, upstream, session="a")
    for text in ("My favourite color is green.", reply):
        await agent.say(text)
        await proxy.settle()
    assert [(r["text"], r["status"]) for r in rows(proxy.engine)
            if r["kind"] != "question"] == [("My favourite color is green.", "active")]


@pytest.mark.parametrize("reply", ["Ignore my last message.", "Scratch that.",
                                   "Forget what I said."])
async def test_a_take_back_naming_the_users_words_still_withdraws_them(
        proxy: RunningProxy, upstream: FakeUpstream, reply: str) -> None:
    agent = Agent(proxy, upstream, session="a")
    for text in ("My favourite color is green.", reply):
        await agent.say(text)
        await proxy.settle()
    assert [(r["text"], r["status"]) for r in rows(proxy.engine)
            if r["kind"] != "question"] == [("My favourite color is green.", "retracted")]


# -- 227: "Neither my wife nor I eat meat." stores nothing ------------------------------------
@pytest.mark.parametrize("text, subject", [
    ("Neither my wife nor I eat meat.", "meat"),
    ("Neither Sam nor I drink coffee.", "coffee"),
])
def test_neither_nor_with_the_speaker_is_the_speakers_denial(text: str, subject: str) -> None:
    assert [(i.kind, i.subject, i.negated, i.text) for i in extract(text)] == [
        ("preference", subject, True, text)]


async def test_a_diet_said_with_neither_nor_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("a", "Neither my wife nor I eat meat.")],
                              "Suggest a dinner recipe for us.")
    assert "[User Preferences]\n- Neither my wife nor I eat meat." in block, block


# -- 228: a diet said indirectly does not replace the diet before it --------------------------
@pytest.mark.parametrize("later", [
    "Actually, pescatarian is more accurate.", "Actually more like pescatarian.",
    "Actually, I'm pescatarian.", "I'm pescatarian now.",
])
def test_a_new_diet_replaces_the_old_one(engine: Engine, later: str) -> None:
    # before: "I'm vegetarian." stayed current beside each of these
    put(engine, "I'm vegetarian.")
    put(engine, later)
    assert _active(engine) == [later]


def test_a_diet_and_an_allergy_stay_apart(engine: Engine) -> None:
    put(engine, "I'm vegetarian.")
    put(engine, "I'm allergic to peanuts.")
    put(engine, "I'm lactose intolerant.")
    assert len(_active(engine)) == 3


async def test_the_newer_diet_alone_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I'm vegetarian."), ("b", "Actually more like pescatarian.")],
        "Suggest a dinner recipe for me.")
    assert "pescatarian" in block, block
    assert "] I'm vegetarian." not in block, block


# -- 229: "The decision was hard." a decision; 一点 ("a little") read as one o'clock ------------
@pytest.mark.parametrize("text", [
    "The decision was hard.", "The decision was really tough.", "Our decision was not easy.",
])
def test_a_decision_judged_is_no_choice(text: str) -> None:
    assert [i.kind for i in extract(text) if i.kind == "decision"] == []


@pytest.mark.parametrize("text", [
    "The decision is final: we use Postgres.", "The decision was to use Postgres.",
])
def test_a_decision_that_names_the_choice_stays(text: str) -> None:
    assert [i.kind for i in extract(text)] == ["decision"]


@pytest.mark.parametrize("text, chosen", [
    ("The decision was tough, we'll go with Postgres.", "postgres"),
    ("The plan was simple, we use Rust.", "rust"),
    ("The decision was good for the team; let's use Rust.", "rust"),
])
def test_a_judged_decision_followed_by_the_choice_keeps_the_choice(text: str,
                                                                    chosen: str) -> None:
    # the judgement's clause runs on past a comma to the choice: it is no judgement alone
    got = extract(text)
    assert [i.kind for i in got] == ["decision"] and chosen in (got[0].subject or ""), got


@pytest.mark.parametrize("text", [
    "The decision was hard, I'm glad it's over.", "The decision was tough for everyone.",
])
def test_a_judged_decision_with_no_choice_after_it_stays_no_choice(text: str) -> None:
    assert [i.kind for i in extract(text) if i.kind == "decision"] == []


@pytest.mark.parametrize("text, slots", [
    ("我有一点累。", set()), ("我一点都不喜欢咖啡。", set()), ("慢一点说。", set()),
    ("会议在下午一点。", {"下午一点"}), ("一点半开会。", {"一点半"}), ("两点开会。", {"两点"}),
    ("一時的に止めています。", set()), ("会議は一時です。", {"一時"}),
])
def test_a_little_is_no_clock_time(text: str, slots: set[str]) -> None:
    from memory_core.items.writer import _slots
    assert _slots(text) == slots


@pytest.mark.parametrize("text", ["1" * 100_000, "一" * 100_000, "我的号码是" + "7" * 100_000])
def test_a_long_run_of_digits_is_read_for_clock_times_in_linear_time(text: str) -> None:
    from memory_core.items.writer import _SLOT
    started = time.process_time()  # CPU seconds: 0.1 here, minutes when quadratic
    assert list(_SLOT.finditer(text)) == []
    assert time.process_time() - started < 3.0


# -- 230: a plan dated day-first ("on 10 September") stores nothing ----------------------------
@pytest.mark.parametrize("text, subject", [
    ("Please remember that I will be having next scrum meeting on 10 september",
     "having next scrum meeting"),
    ("I will have a scrum meeting on 10 September.", "scrum meeting"),
    ("I will present the roadmap on 3rd May.", "present roadmap"),
])
def test_a_plan_dated_day_first_is_a_dated_fact(text: str, subject: str) -> None:
    # before: nothing ("on 10 September" and "on 3rd May" dated no plan; "on May 3" did)
    got = extract(text)
    assert [(i.kind, i.subject, i.dated) for i in got] == [("fact", subject, True)], got


async def test_a_plan_dated_day_first_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Please remember that I will be having next scrum meeting on 10 september")],
        "When is my next scrum meeting?")
    assert "next scrum meeting on 10 september" in block, block


# -- 231: a degree adverb hides an allergy, so its plain restatement is a second memory -------
@pytest.mark.parametrize("text, subject", [
    ("I'm gravely allergic to walnuts.", "walnut allergy"),
    ("I'm deathly allergic to bees.", "bee allergy"),
    ("I'm mildly lactose intolerant.", "lactose intolerant"),
])
def test_an_allergy_with_a_degree_is_the_lasting_allergy(text: str, subject: str) -> None:
    # before: "I'm gravely allergic to walnuts." a fact keyed `gravely allergic`
    assert [(i.kind, i.subject, i.lasting) for i in extract(text)] == [
        ("fact", subject, True)]


def test_an_allergy_said_with_and_without_its_degree_is_one_memory(engine: Engine) -> None:
    put(engine, "I'm gravely allergic to walnuts.")
    put(engine, "I'm allergic to walnuts.")
    assert _active(engine) == ["I'm gravely allergic to walnuts."]


def test_a_figure_of_speech_stays_no_allergy() -> None:
    assert [i.subject for i in extract("I'm so allergic to meetings.")] != ["meetings allergy"]


# -- 232: "I am N <unit>" read as an attribute ("I'm 22 minutes away", "100 percent sure") ---
@pytest.mark.parametrize("text", ["I am 100 percent sure.", "I'm 100% sure about it!",
                                  "We're 99% certain."])
def test_a_share_of_certainty_is_no_fact(text: str) -> None:
    assert extract(text) == []


def test_a_claim_after_a_share_of_certainty_is_still_read() -> None:
    assert [i.kind for i in extract("I'm 99% certain the port is 8080.")] == ["fact"]


@pytest.mark.parametrize("text", [
    "I'm 22 minutes away.", "I'm running 10 minutes late.", "I'm 5 minutes from home.",
])
def test_how_far_or_late_right_now_stays_in_its_conversation(text: str) -> None:
    got = extract(text)
    assert got and all(i.local and i.subject != "age" for i in got), got


@pytest.mark.parametrize("text", [
    "I'm 9 hours ahead of you.", "I'm 6 hours behind UTC.", "We're 8 hours ahead of London.",
])
def test_a_time_zones_difference_is_no_moment(text: str) -> None:
    got = extract(text)
    assert got and not any(i.local for i in got), got


async def test_an_arrival_time_reaches_no_other_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I'm 22 minutes away."), ("b", "I'm 30.")], "How old am I?")
    assert "22 minutes" not in block and "] I'm 30." in block, block


# -- 233: someone named in a question stored as the user ("KPIs for user Christophe?") -------
async def test_a_person_asked_about_is_not_the_user(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "What are the KPIs for user Christophe?"), ("b", "My name is Priya.")],
        "What is my name?")
    assert "] My name is Priya." in block and "conflict" not in block.lower(), block
    assert [r["kind"] for r in rows(proxy.engine)
            if "Christophe" in r["text"]] == ["question"]


# -- 234: a friend's reported dislike stored as the user's ------------------------------------
def test_what_a_friend_said_is_not_the_users_liking() -> None:
    got = extract("Yesterday my good friend Jack said that he didn't like playing football.")
    assert [i.kind for i in got if i.kind == "preference"] == [], got
    assert all("jack" in (i.subject or "") for i in got), got


# -- 235: a save order read as the user's name ("Remember that I prefer short answers.") ------
def test_a_save_order_before_a_liking_is_no_name() -> None:
    assert _read("Remember that I prefer short answers.") == [
        ("preference", "short answers", False, "Remember that I prefer short answers.")]


# -- 236: another memory layer's recall in the user turn stored again as new memories --------
@pytest.mark.parametrize("recall", [
    "<memories>\n- The user lives in Berlin.\n- The user prefers tea.\n</memories>\n",
    "<relevant_memories>The user lives in Berlin.</relevant_memories> ",
    "<retrieved_context>The user lives in Berlin.</retrieved_context>\n",
])
def test_a_recalled_memory_block_is_not_the_users_words(recall: str) -> None:
    # before: "The user lives in Berlin." a fact keyed `user`, once more on every turn
    got = extract(recall + "I live in Paris now.")
    assert [i.text for i in got] == ["I live in Paris now."], got


async def test_a_recalled_block_sent_by_the_client_adds_no_item(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="a")
    await agent.say("<memories>\n- The user prefers tea.\n</memories>\nWhat should I drink?")
    await proxy.settle()
    assert [r["kind"] for r in rows(proxy.engine) if r["kind"] != "proposal"] == ["question"]
    assert not any("prefers tea" in r["text"] for r in rows(proxy.engine))


# -- 237: the assistant's words quoted in a reply taken for the user's ------------------------
def test_a_quoted_line_of_the_assistants_is_not_the_users_fact() -> None:
    got = extract("> I don't have a girlfriend yet.\nWhy would you say that about me?")
    assert [i.kind for i in got] == ["question"], got


# -- 238: "please remember that I don't want it saved" writes the memory ---------------------
def test_a_save_order_around_an_opt_out_keeps_nothing() -> None:
    assert extract("Please remember that I don't want it saved: my salary is 95000 EUR.") == []


# -- 239: "Remember this: …" keeps the save order as the statement ("… keyed `remember`") -----
@pytest.mark.parametrize("text, kind, subject, negated", [
    ("Remember this: I'm allergic to shellfish.", "fact", "shellfish allergy", False),
    ("Remember this: always run the linter.", "constraint", "run linter", False),
    ("Remember, don't use tabs.", "constraint", "tabs", True),
])
def test_a_save_order_with_this_keeps_the_statement_after_it(
        text: str, kind: str, subject: str, negated: bool) -> None:
    # before: a fact keyed `remember` (the first two), nothing (the third)
    assert _read(text) == [(kind, subject, negated, text)]


@pytest.mark.parametrize("text", ["Remember this feeling.", "Remember I told you about my sister?"])
def test_remember_without_a_statement_after_it_is_left_as_it_was(text: str) -> None:
    assert [i.subject for i in extract(text)] in (["remember"], ["remember told sister"])


async def test_a_rule_kept_with_remember_this_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Remember this: always run the linter.")], "Write the release script.")
    assert "Remember this: always run the linter." in block, block
