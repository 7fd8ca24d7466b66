"""Memory failure kinds, round 13 (docs/evaluation/memory_replays.md, rows 242 and on):
leftovers of rows 240–241 (a modal's negation, a group subject's key, an experience
told in the simple past with "saw", a recall heading over bullets of two voices) and
kinds reported against other memory systems, replayed on lcm-proxy through the real
openai SDK and the fake upstream, or through ``memory_core`` where the kind is about
extraction or supersession: one section per row; a row marked fixed failed here before
its fix, a row probed OK is kept as a guard."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later, put, rows


def _active(engine: Engine) -> list[str]:
    return [r["text"] for r in rows(engine) if r["status"] == "active"]


def _read(text: str) -> list[tuple[str, str | None, bool]]:
    return [(i.kind, i.subject, i.negated) for i in extract(text)]


# -- 242: a modal's negation ("I can't eat gluten.", 我不能吃辣) stored without `negated` -----
@pytest.mark.parametrize("text, subject", [
    ("I can't eat gluten.", "eat gluten"),
    ("I cannot drink milk.", "drink milk"),
    ("I can not drink milk.", "drink milk"),
    ("I won't use Redis.", "redis"),
    ("We can't deploy on Fridays.", "deploy"),
    ("i cant eat gluten", "eat gluten"),
    ("我不能吃辣。", "吃辣"),
    ("我们不会用Redis。", "redis"),
    ("我不会说日语。", "说日语"),
])
def test_a_negated_modal_is_a_denial_keyed_without_the_modal(text: str, subject: str) -> None:
    # before: `negated` False, keyed `can't eat gluten`, `won't redis`, 不
    assert _read(text) == [("fact", subject, True)]


@pytest.mark.parametrize("text", [
    "I never drink coffee.", "私は卵が食べられない。", "卵が食べられません。",
])
def test_other_negations_of_ability_or_habit_are_negated(text: str) -> None:
    got = extract(text)
    assert got and all(i.negated for i in got), got


@pytest.mark.parametrize("text", [
    "I can eat gluten.", "I will use Redis.", "彼は卵が食べられない。", "I can't wait!",
    "我会说中文。",
])
def test_an_affirmed_modal_or_another_persons_is_no_denial(text: str) -> None:
    assert not any(i.negated for i in extract(text)), extract(text)


@pytest.mark.parametrize("said, then", [
    ("I can't eat gluten.", "I can eat gluten again."),
    ("I can't eat gluten.", "I can eat gluten now."),
    ("I'm not vegetarian.", "I'm vegetarian again."),
    ("I don't eat gluten.", "I eat gluten now."),
    ("我不能喝酒。", "我现在能喝酒了。"),
])
def test_a_later_ability_or_state_come_back_supersedes_the_denial(
        engine: Engine, said: str, then: str) -> None:
    # before: "I can eat gluten again." (keyed `eat gluten again`) left the denial current
    put(engine, said)
    put(engine, then)
    assert _active(engine) == [then]


def test_a_plain_affirmation_is_not_deduped_into_the_denial(engine: Engine) -> None:
    put(engine, "I can't eat gluten.")
    put(engine, "I can eat gluten.")
    assert _active(engine) == ["I can't eat gluten.", "I can eat gluten."]


@pytest.mark.parametrize("text", [
    "I read through the config again.", "lol 404 again", "The build failed again.",
])
def test_an_event_told_again_revises_nothing(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)


async def test_a_modal_denial_reaches_another_block_and_its_end_replaces_it(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I can't eat gluten."), ("b", "I can eat gluten again.")],
        "Suggest a pasta recipe for me.")
    assert "] I can eat gluten again." in block, block
    assert "\"I can't eat gluten.\" — superseded" in block, block


# -- 243: a group subject keys by its own words ("Neither of us drinks coffee." `neither`) ---
@pytest.mark.parametrize("text, read", [
    ("Neither of us drinks coffee.", [("preference", "coffee", True)]),
    ("Neither of us drinks tea.", [("preference", "tea", True)]),
    ("Both of us don't drink coffee.", [("preference", "coffee", True)]),
    ("None of us eat meat.", [("preference", "meat", True)]),
    ("None of us eats meat.", [("preference", "meat", True)]),
    ("Nobody in my family eats pork.", [("preference", "pork", True)]),
    ("No one on our team uses Jira.", [("fact", "jira", True)]),
    ("Neither of us is vegetarian.", [("fact", "vegetarian", True)]),
    ("Neither of us has a car.", [("fact", "car", True)]),
    ("Each of us has a car.", [("fact", "car", False)]),
    ("The two of us love hiking.", [("preference", "hiking", False)]),
])
def test_a_group_subject_is_read_as_the_speakers(text: str, read: list[object]) -> None:
    # before: keyed `neither`, `both`, `none`, `family nobody`; "None of us eat meat."
    # nothing; "No one on our team uses Jira." not negated
    assert _read(text) == read


def test_two_group_denials_of_different_things_stay_two(engine: Engine) -> None:
    put(engine, "Neither of us drinks coffee.")
    put(engine, "Neither of us drinks tea.")
    assert [r["status"] for r in rows(engine)] == ["active", "active"]
    assert {i.subject for t in ("Neither of us drinks coffee.", "Neither of us drinks tea.")
            for i in extract(t)} == {"coffee", "tea"}


async def test_a_group_diet_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("a", "None of us eat meat.")],
                              "Suggest a dinner recipe for us.")
    assert "- None of us eat meat." in block, block


# -- 244: "I saw the Northern Lights twice." keyed `northern` ----------------------------------
@pytest.mark.parametrize("text, subject", [
    ("I saw the Northern Lights twice.", "seen northern lights"),
    ("I never saw the ocean.", "seen ocean"),
    ("I saw Hamilton on Broadway in 2019.", "seen hamilton"),
])
def test_an_experience_with_saw_is_keyed_by_its_object(text: str, subject: str) -> None:
    assert [(i.kind, i.subject) for i in extract(text)] == [("fact", subject)]


@pytest.mark.parametrize("text", ["I saw that the build failed yesterday.",
                                  "I saw how it works yesterday."])
def test_saw_before_a_clause_is_no_experience(text: str) -> None:
    from memory_core.extraction import experience
    assert experience.read(text, "en") is None


def test_a_sight_seen_turns_over_its_denial(engine: Engine) -> None:
    put(engine, "I've never seen the Northern Lights.")
    put(engine, "I saw the Northern Lights twice.")
    assert _active(engine) == ["I saw the Northern Lights twice."]


# -- 245: a recall heading over bullets of two voices read as the user's ---------------------
@pytest.mark.parametrize("text, kept", [
    ("Relevant memories:\n- The user lives in Berlin.\n- I prefer short answers.\n\n"
     "I prefer dark mode.", ["I prefer dark mode."]),
    ("Memory context:\n- I have a dog named Rex.\n- User works at Acme.\n"
     "My cat is called Tom.", ["My cat is called Tom."]),
    # controls: bullets all in the user's voice, or a heading of the user's own
    ("Relevant memories:\n- I live in Berlin.\n- I prefer tabs.",
     ["I live in Berlin.", "I prefer tabs."]),
    ("My notes:\n- The user lives in Berlin.\n- I prefer tabs.",
     ["The user lives in Berlin.", "I prefer tabs."]),
])
def test_a_recall_of_mixed_voices_is_not_the_users(text: str, kept: list[str]) -> None:
    assert [i.text for i in extract(text)] == kept


# -- 246: "My current favourite X is Y" beside "My favourite X is Z" (mem0 #5867) -------------
@pytest.mark.parametrize("said, then", [
    ("My favorite football player is Ronaldo.",
     "My current favorite football player is Messi."),
    ("My favorite color is blue.", "My new favorite color is green."),
    ("My employer is Initech.", "My current employer is Acme."),
])
def test_a_current_or_new_value_supersedes_the_old(engine: Engine, said: str,
                                                   then: str) -> None:
    # before: both current (a preference keyed `football player` and a fact keyed
    # `favorite football player`)
    put(engine, said)
    put(engine, then)
    assert _active(engine) == [then]


async def test_the_current_favourite_alone_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "My favorite football player is Ronaldo."),
        ("b", "My current favorite football player is Messi.")],
        "Who is my favorite football player?")
    # before: "- My favorite football player is Ronaldo." stood in [User Preferences]
    assert "- My current favorite football player is Messi." in block, block
    assert "Ronaldo." not in block.split("[Memory]")[0], block


# -- 247: a statement whose object is only "it" kept as a lasting memory (synaplan #950) -----
@pytest.mark.parametrize("text", [
    "Now I don't need it anymore.", "I hate it.", "I love it.", "I use it every day.",
])
def test_a_pronoun_only_object_stays_in_its_conversation(text: str) -> None:
    # before: lasting items keyed `need`, None, None, `day`
    got = extract(text)
    assert got and all(i.local for i in got), got


@pytest.mark.parametrize("text", ["I love that song.", "I love Python.",
                                  "I love it here in Berlin."])
def test_a_named_object_is_no_pointer(text: str) -> None:
    assert not any(i.local for i in extract(text)), extract(text)


async def test_a_pronoun_only_statement_reaches_no_other_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I started lifting to feel confident. Now I don't need it anymore."),
        ("b", "My dog is called Rex.")],
        "What do I need for my dog?")
    assert "need it anymore" not in block, block
    assert "] My dog is called Rex." in block, block


# -- 248: "She lives in Oslo." after "My sister is a nurse." lost (renfield #709) --------------
@pytest.mark.parametrize("text, texts", [
    ("My sister is a nurse. She lives in Oslo.",
     ["My sister is a nurse.", "My sister … She lives in Oslo."]),
    ("My brother Tom lives in Oslo. He works at Equinor.",
     ["My brother Tom lives in Oslo.", "My brother Tom … He works at Equinor."]),
    # controls: a pronoun that does not agree, or with no one named before it
    ("My sister is a nurse. He lives in Oslo.", ["My sister is a nurse."]),
    ("She lives in Oslo.", []),
])
def test_a_pronoun_after_the_speakers_person_is_that_person(text: str,
                                                            texts: list[str]) -> None:
    # before: the sentence with "She"/"He" stored nothing
    assert [i.text for i in extract(text)] == texts


async def test_a_fact_said_with_a_pronoun_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "My sister is a nurse. She lives in Oslo.")],
        "Where does my sister live?")
    assert "My sister … She lives in Oslo." in block, block


# -- 249: "My name is Sarah, not Chad." a conflict with "My name is Chad." (letta #552) ------
@pytest.mark.parametrize("said, then", [
    ("My name is Chad.", "My name is Sarah, not Chad."),
    ("The meeting is on Tuesday.", "The meeting is on Thursday, not Tuesday."),
    ("My editor is Vim.", "My editor is Neovim, not Vim."),
])
def test_a_value_that_denies_the_old_one_replaces_it(engine: Engine, said: str,
                                                     then: str) -> None:
    # before: both current, marked in conflict
    put(engine, said)
    put(engine, then)
    assert _active(engine) == [then]


def test_a_denied_value_the_old_item_does_not_hold_stays_a_conflict(engine: Engine) -> None:
    put(engine, "My editor is Emacs.")
    put(engine, "My editor is Neovim, not Vim.")
    old, new = rows(engine)
    assert old["status"] == "active" and new["conflict_with"] == old["id"], rows(engine)


# -- 250: "lately"/"recently" and the speaker in an update's key (remnic #2371) ---------------
@pytest.mark.parametrize("text, subject", [
    ("I've been using Neovim recently.", "neovim"),
    ("I've been using Neovim lately.", "neovim"),
    ("I'm using Neovim these days.", "using neovim"),
    ("I've been drinking tea lately.", "drinking tea"),
])
def test_a_recent_habit_is_keyed_without_its_time_or_speaker(text: str, subject: str) -> None:
    # before: `neovim recently`, `neovim lately`, `i'm using neovim`, `drinking tea lately`
    assert [i.subject for i in extract(text)] == [subject]


# -- 251: an allergy said as a noun keyed apart from the adjective (chalie #1617) -------------
@pytest.mark.parametrize("text", [
    "I have a peanut allergy.", "I have a severe peanut allergy.",
    "I'm allergic to peanuts.", "I've got a peanut allergy.",
])
def test_an_allergy_is_one_key_however_said(text: str) -> None:
    # before: `severe peanut allergy`, `peanuts allergy`; the noun form not lasting
    assert [(i.subject, i.lasting) for i in extract(text)] == [("peanut allergy", True)]


def test_an_allergy_said_again_with_its_degree_is_one_memory(engine: Engine) -> None:
    put(engine, "I'm allergic to peanuts.")
    put(engine, "I have a severe peanut allergy.")
    assert _active(engine) == ["I have a severe peanut allergy."]


async def test_an_allergy_reaches_a_request_in_a_new_conversation(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("a", "I have a severe peanut allergy.")],
                              "Can you recommend some Thai dishes?")
    assert "] I have a severe peanut allergy." in block, block


# -- 252: the user's name lost when said with another person's (MemOS #931) -------------------
def test_a_name_said_with_a_relatives_is_kept() -> None:
    # probed OK: two facts, the speaker's name keyed `name`
    assert [(i.subject, i.text) for i in extract(
        "My name is Wang Muchen, and my son is Wang Mingze.")] == [
        ("name", "My name is Wang Muchen"), ("son", "my son is Wang Mingze.")]


# -- 253: an item-level liking dropped beside others of one brand (memory-lancedb-pro #228) --
def test_likings_of_one_brand_stay_apart(engine: Engine) -> None:
    # probed OK: three likings, all current
    for text in ("我喜欢吃麦当劳的板烧鸡腿堡。", "我喜欢吃麦当劳的麦旋风。", "我喜欢吃麦当劳的麦辣鸡翅。"):
        put(engine, text)
    assert len(_active(engine)) == 3


# -- 254: a fact said with no speaker ("CRM used is HubSpot.") kept nowhere (AutoGPT #14412) --
async def test_a_fact_with_no_speaker_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # probed OK: a fact keyed `crm`, shown for a later question about it
    block = await asked_later(proxy, upstream, [("a", "CRM used is HubSpot.")],
                              "Which CRM do we use?")
    assert "] CRM used is HubSpot." in block, block


# -- 255: a liking that changed kept beside the old one (Sakura #32) --------------------------
@pytest.mark.parametrize("said, then", [
    ("我喜欢小狗。", "我不喜欢小狗了，我现在喜欢小猫。"),
    ("I like dogs.", "I don't like dogs anymore, I prefer cats now."),
])
def test_a_changed_liking_replaces_the_old(engine: Engine, said: str, then: str) -> None:
    # probed OK: the old liking superseded
    put(engine, said)
    put(engine, then)
    assert _active(engine) == [then]
