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


def test_what_is_read_in_comes_out_again_to_the_users_text() -> None:
    text = "i dont care. Love Python. we dont use jira. Not a fan of Java and i cant stand Go."
    restored, added = contractions.restore(text)
    assert restored == ("i don't care. I Love Python. we don't use jira. I'm Not a fan of"
                        " Java and i can't stand Go.")
    assert "".join(ch for i, ch in enumerate(restored) if i not in added) == text
    assert [i.text for i in extract(text)] == [
        "Love Python.", "we dont use jira.", "Not a fan of Java", "i cant stand Go."]


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


# -- 201: a fact about another named thing taken for a rewording ("Project Beta uses …") ------
@pytest.mark.parametrize("first, second", [
    ("Project Alpha uses PostgreSQL for persistent storage.",
     "Project Beta uses PostgreSQL for persistent storage."),
    ("The Berlin office uses Slack for team chat.", "The Madrid office uses Slack for team chat."),
    ("The Billing service runs on Kubernetes in Frankfurt.",
     "The Search service runs on Kubernetes in Frankfurt."),
    ("Dana reviews the backend pull requests.", "Omar reviews the backend pull requests."),
])
def test_the_same_words_about_another_name_are_a_second_fact(
        engine: Engine, first: str, second: str) -> None:
    # before: the second was taken for a rewording of the first and stored as nothing
    put(engine, first)
    put(engine, second)
    assert _active(engine) == [first, second]


@pytest.mark.parametrize("first, second", [
    ("Project Alpha uses PostgreSQL for persistent storage.",
     "For persistent storage, Project Alpha uses PostgreSQL."),
    ("Reminder: Dana is my manager.", "Just so you know, my manager is Dana."),
])
def test_a_rewording_that_names_the_same_things_is_still_one_item(
        engine: Engine, first: str, second: str) -> None:
    put(engine, first)
    put(engine, second)
    assert _active(engine) == [first]


async def test_facts_about_two_projects_both_reach_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Project Alpha uses PostgreSQL for persistent storage."),
        ("b", "Project Beta uses PostgreSQL for persistent storage.")],
        "Which database does Project Beta use?")
    assert "] Project Beta uses PostgreSQL for persistent storage." in block, block


# -- 202: a correction revises an unrelated fact (probed OK) ----------------------------------
def test_a_correction_leaves_an_unrelated_fact_current(engine: Engine) -> None:
    put(engine, "My dentist is Dr. Lee.")
    put(engine, "Actually, my gym is on Main Street.")
    assert _active(engine) == ["My dentist is Dr. Lee.", "Actually, my gym is on Main Street."]


# -- 203: forgetting one fact forgets every fact about its subject (probed OK) -----------------
def test_forgetting_one_fact_keeps_the_others_about_the_same_person(engine: Engine) -> None:
    for text in ("My sister lives in Oslo.", "My sister is a nurse.",
                 "Forget that my sister lives in Oslo."):
        put(engine, text)
    assert _active(engine) == ["My sister is a nurse."]


# -- 204, 205: "whenever" read as "never"; "you don't need to …" as "need to …" (OK) -----
@pytest.mark.parametrize("text, negated", [
    ("Whenever I paste a stack trace, explain the root cause first.", False),
    ("You don't need to constantly tell me about the tests.", True),
    ("No need to explain the basics every time.", True),
])
def test_a_rule_keeps_its_polarity(text: str, negated: bool) -> None:
    assert [(i.kind, i.negated, i.text) for i in extract(text)] == [
        ("constraint", negated, text)]


# -- 206: "Can you remember that?" after a statement (probed OK) -------------------------------
async def test_remember_that_adds_no_item_and_the_statement_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I don't like aubergines."), ("a", "Can you remember that?")],
        "What vegetables should I avoid in the curry?")
    assert "- I don't like aubergines." in block.split("[User Preferences]", 1)[1], block
    assert [r["text"] for r in rows(proxy.engine) if r["kind"] != "question"] == [
        "I don't like aubergines."]


# -- 207: a tool switched for a job leaves both current (probed OK) ----------------------------
def test_a_tool_switched_for_a_job_supersedes_the_old_one(engine: Engine) -> None:
    put(engine, "We use Jina for web search.")
    put(engine, "We use Exa for web search now.")
    assert _active(engine) == ["We use Exa for web search now."]


# -- 208: a height or weight said in other units keyed by its unit ("feet tall" / "cm tall") ---
@pytest.mark.parametrize("text, subject, value, unit", [
    ("I'm 6 feet tall.", "tall", 6.0, "ft"), ("I'm 185 cm tall.", "tall", 185.0, "cm"),
    ("I'm 185 cm tall now.", "tall", 185.0, "cm"), ("I weigh 176 lbs.", "weigh", 176.0, "lb"),
    ("I weigh 75 kilos now.", "weigh", 75.0, "kg"), ("My height is 6 feet.", "height", 6.0, "ft"),
])
def test_a_length_or_weight_is_a_measure_not_part_of_the_key(
        text: str, subject: str, value: float, unit: str) -> None:
    # before: keyed "feet tall", "cm tall", "weigh lbs", "weigh kilos" (no unit read)
    (item,) = extract(text)
    assert (item.subject, item.value, item.unit) == (subject, value, unit), item


@pytest.mark.parametrize("first, second", [
    ("I'm 6 feet tall.", "I'm 185 cm tall now."), ("I weigh 176 lbs.", "I weigh 80 kg now."),
    ("I run 5 miles a day.", "I run 8 km a day now."),
])
def test_a_measure_changed_in_another_unit_supersedes_the_old(
        engine: Engine, first: str, second: str) -> None:
    # before: the two heights and weights had unrelated keys, both current
    put(engine, first)
    put(engine, second)
    assert _active(engine) == [second]


def test_a_measure_of_another_thing_in_the_same_unit_is_no_rival(engine: Engine) -> None:
    put(engine, "The desk is 120 cm wide.")
    put(engine, "I'm 185 cm tall.")
    assert [(r["status"], r["conflict_with"]) for r in rows(engine)] == [
        ("active", None), ("active", None)]


async def test_a_height_changed_in_another_unit_reaches_another_block_once(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I'm 6 feet tall."), ("b", "I'm 185 cm tall now.")], "How tall am I?")
    assert "] I'm 185 cm tall now." in block, block
    assert "] I'm 6 feet tall." not in block, block


# -- 209: a request for help with the task at hand stored as a lasting fact -------------------
@pytest.mark.parametrize("text", [
    "I need help with my resume.", "i need some help with this regex",
    "I could use some help planning the migration.", "I need your help with a cover letter.",
])
def test_a_request_for_help_is_no_fact(text: str) -> None:
    # before: "I need help with my resume." a fact keyed "need help"
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text, kind", [
    ("I need a vacation.", "fact"), ("I need glasses for reading.", "fact"),
    ("My sister needs help with her resume.", "fact"),  # not the speaker's request
    ("I need help with my taxes every April, so always remind me in March.", "constraint"),
])
def test_a_need_that_is_no_request_for_help_is_kept(text: str, kind: str) -> None:
    assert [i.kind for i in extract(text)] == [kind], extract(text)


async def test_a_request_for_help_never_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I need help with my resume."), ("b", "My resume is two pages long.")],
        "Can you look over my resume?")
    assert "] My resume is two pages long." in block, block
    assert "need help" not in block, block


# -- 210: a third person's state and its denial both current ("My wife isn't vegan.") ----------
@pytest.mark.parametrize("first, second", [
    ("My wife is vegan.", "My wife isn't vegan."),
    ("The staging API is public.", "The staging API is not public."),
    ("Tom is my manager.", "Tom is not my manager."),
    ("The nightly backup is encrypted.", "The nightly backup isn't encrypted."),
    ("My parents are retired.", "My parents aren't retired."),
])
def test_a_denied_claim_is_a_conflict_with_the_claim(
        engine: Engine, first: str, second: str) -> None:
    # before: "My wife isn't vegan." stood beside "My wife is vegan." unrelated (the
    # verbs "is" / "isn't" told them apart); "is not" was a conflict already
    put(engine, first)
    put(engine, second)
    assert [(r["status"], r["conflict_with"]) for r in rows(engine)] == [
        ("active", None), ("active", 1)]


def test_a_denial_of_another_claim_is_no_conflict(engine: Engine) -> None:
    put(engine, "My wife is vegan.")
    put(engine, "My wife doesn't drink coffee.")
    assert [(r["status"], r["conflict_with"]) for r in rows(engine)] == [
        ("active", None), ("active", None)]


# -- 211: a frustrated reply to the assistant stored as a fact (fixed with 199) ---------------
@pytest.mark.parametrize("text", [
    "ok well this isnt what i want at all...", "this isnt what i asked for",
    "thats not what i meant",
])
def test_a_frustrated_reply_typed_casually_is_no_fact(text: str) -> None:
    # before: "well this isnt what i want at all..." a fact keyed "isnt"
    assert extract(text) == [], extract(text)


# -- 212: a liking typed without its speaker ("Love Python.", "Not a fan of Java.") -----------
@pytest.mark.parametrize("text, subject, negated", [
    ("Love Python.", "python", False), ("Hate meetings.", "meetings", True),
    ("Not a fan of Java.", "java", True), ("Big fan of Rust.", "rust", False),
    ("Thanks! Love experimenting with spices.", "experimenting spices", False),
])
def test_a_liking_without_its_speaker_is_the_speakers_preference(
        text: str, subject: str, negated: bool) -> None:
    # before: nothing, or a fact keyed "hate" / "love experimenting"
    item = extract(text)[-1]
    assert (item.kind, item.subject, item.negated) == ("preference", subject, negated), item
    assert item.text in text, item


@pytest.mark.parametrize("text", [
    "Love it!", "Love you!", "Love the colors and the sunset vibe.",  # impressions
    "Love seeing your dedication to helping others.", "Love is truly magical.",
    "Prefer composition over inheritance.", "Enjoy your weekend!",  # an order, a wish
])
def test_an_impression_an_order_or_love_as_a_noun_is_no_liking(text: str) -> None:
    assert all(i.kind != "preference" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "Love letters from my grandmother are in the attic.",
    "Hate speech is banned on our forum.",
    "Love Actually is on TV tonight.",
    "Despise Me Not is the title of my friend's novel.",
    "Love songs were all they played at the wedding.",
    "Hate mail has been piling up since the article ran.",
])
def test_a_verb_of_liking_that_opens_a_noun_phrase_is_no_liking(text: str) -> None:
    # before: each a standing preference of the user's ("I Hate speech is banned ...")
    assert all(i.kind != "preference" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text, subject", [
    ("Love hiking when it is sunny.", "hiking"),
    ("Love cooking for friends who are vegan.", "cooking friends"),
    ("Hate meetings that have no agenda.", "meetings agenda"),
    ("Love long walks, they are relaxing.", "long walks"),
])
def test_a_liking_whose_later_clause_has_a_verb_is_still_a_liking(
        text: str, subject: str) -> None:
    assert any(i.kind == "preference" for i in extract(text)), extract(text)


async def test_a_liking_without_its_speaker_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("a", "Not a fan of Java.")],
                              "Which language should I pick for the new service?")
    assert "- Not a fan of Java." in block.split("[User Preferences]", 1)[1], block
