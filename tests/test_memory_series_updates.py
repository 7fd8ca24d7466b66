"""Memory that stays right, second pass (issue 24): a numbered list's steps stay in
their conversation, a rule restated as a fact is one item, and an update that marks
its value as the present one ("these days", "currently") supersedes a paraphrase of
the old value by the same speaker. Wording here is not the crowd eval's."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from memory_core.assembly.block import standing_weight
from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import standing, writer
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str, speaker: str = "") -> None:
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract(text), speaker=speaker))


def rows(engine: Engine, status: str = "active") -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_items WHERE status=? ORDER BY id", (status,))])


def as_row(text: str) -> list[dict[str, Any]]:
    """Each extraction of ``text`` as the block would read it once stored."""
    return [{"kind": e.kind, "text": e.text, "value": e.value, "evidence": "user",
             "supersedes": None, "condition": e.condition,
             "data": orjson.dumps({"label": e.label} if e.label else {}).decode()}
            for e in extract(text)]


# -- numbered lists are task state of their conversation ------------------------------------
CHECKLIST = ("Release checklist for v2.3:\n1. freeze the main branch\n"
             "2. set the rollout cap to 25 percent\n3) tag the build")


def test_a_numbered_list_step_is_one_of_a_series_that_does_not_stand() -> None:
    items = [e for e in extract(CHECKLIST) if "rollout" in e.text]
    assert [e.label for e in items] == ["#2"], items
    for row in as_row(CHECKLIST):
        assert standing_weight(row) == 0 and standing.conversation_local(row), row


@pytest.mark.parametrize("text", [
    "Team rules:\n1. Always squash-merge pull requests.\n2. Never force-push to main.",
    "About me:\n1. I prefer short answers.",
    "Conventions:\n1) From now on, write commit messages in English.",
])
def test_a_numbered_rule_or_preference_still_stands(text: str) -> None:
    stood = [r for r in as_row(text) if r["kind"] in ("constraint", "preference")]
    assert stood and all(standing_weight(r) > 0 and not standing.conversation_local(r)
                         for r in stood), stood


async def test_a_checklist_step_stays_in_its_conversation(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say(CHECKLIST)
    await first.say("Team rules:\n1. Always squash-merge pull requests.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two", system="Another conversation.")
    await other.say("What is the rollout cap, and how do we merge pull requests?")
    block = block_of(other.upstream_last_user())
    assert "squash-merge" in block, block  # a numbered rule reaches every thread
    assert "rollout cap" not in block, block
    await first.say("Remind me of the rollout cap for this release.")
    assert "rollout cap to 25 percent" in block_of(first.upstream_last_user())


# -- a rule restated as a fact --------------------------------------------------------------
@pytest.mark.parametrize("first, again", [
    ("From now on, always sign every release tag with the team key.",
     "Reminder: release tags always get signed with the team key."),
    ("Release tags always get signed with the team key.",
     "From now on, always sign every release tag with the team key."),
])
def test_a_rule_restated_as_a_fact_is_one_rule(engine: Engine, first: str, again: str) -> None:
    put(engine, first)
    put(engine, again)
    active = rows(engine)
    assert [r["kind"] for r in active] == ["constraint"], active
    merged = rows(engine, "merged")  # a fact said first is merged into the rule
    assert [m["superseded_by"] for m in merged] == (
        [active[0]["id"]] if first.startswith("Release") else []), merged


async def test_a_rule_restated_as_a_fact_keeps_both_sources(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    fact = "Reminder: release tags always get signed with the team key."
    rule = "From now on, always sign every release tag with the team key."
    agent = Agent(proxy, upstream, session="one")
    await agent.say(fact)
    await agent.say("Unrelated: the weather is nice.")
    await agent.say(rule)
    await proxy.settle()
    found = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT kind, json_extract(data, '$.sources') AS sources, source_message_id"
        " FROM memory_items WHERE status='active' AND text LIKE '%release tag%'")])
    msgs = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM messages WHERE msg_role='user' AND text IN (?, ?) ORDER BY id",
        (fact, rule))])
    assert [f["kind"] for f in found] == ["constraint"], found
    assert found[0]["sources"] == f"[{msgs[0]},{msgs[1]}]", found
    other = Agent(proxy, upstream, session="two", system="Another conversation.")
    await other.say("How do we handle release tags?")
    lines = [ln for ln in block_of(other.upstream_last_user()).splitlines()
             if ln.startswith("- [") and "release tag" in ln]
    assert len(lines) == 1, lines


@pytest.mark.parametrize("first, again", [
    ("Never force-push to the main branch.", "We force-push to the main branch on Fridays."),
    ("Always sign release tags with the team key.", "Release tags are signed by the CI bot."),
])
def test_a_rule_and_a_different_fact_stay_two_items(engine: Engine, first: str,
                                                    again: str) -> None:
    put(engine, first)
    put(engine, again)
    assert len(rows(engine)) == 2 and not rows(engine, "merged")


# -- paraphrased updates ---------------------------------------------------------------------
@pytest.mark.parametrize("old, new", [
    ("I live in Porto.", "Home is Lisbon these days."),
    ("I'm based in Leeds.", "I relocated to York in spring."),
    ("We live near Lyon.", "Nowadays we live in Nice."),
    ("我住在杭州。", "我现在住在上海。"),
    ("私は札幌に住んでいます。", "今は福岡に住んでいます。"),
    ("Our paper comes from the Riverside supplier.",
     "We moved our paper order to the Hillcrest supplier."),
    ("The staging cluster runs Postgres 14.", "The staging cluster currently runs Postgres 16."),
    ("We use Jenkins for CI.", "We don't use Jenkins anymore."),
])
def test_a_marked_paraphrased_update_supersedes(engine: Engine, old: str, new: str) -> None:
    put(engine, old, speaker="kim")
    put(engine, new, speaker="kim")
    active = rows(engine)
    assert [r["text"] for r in active] == [new], active
    assert active[0]["supersedes"] is not None


def test_an_update_supersedes_only_its_own_speaker_and_series(engine: Engine) -> None:
    put(engine, "I live in Porto.", speaker="kim")
    put(engine, "I live in Bergen.", speaker="lee")
    put(engine, "Home is Lisbon these days.", speaker="kim")
    assert sorted(r["text"] for r in rows(engine)) == [
        "Home is Lisbon these days.", "I live in Bergen."]
    assert all(r["conflict_with"] is None for r in rows(engine))
    put(engine, "Run 39: accuracy is 0.91.")
    put(engine, "Run 40: accuracy is currently 0.93.")
    texts = [r["text"] for r in rows(engine)]
    assert "Run 39: accuracy is 0.91." in texts and "Run 40: accuracy is currently 0.93." in texts
    assert all(r["conflict_with"] is None for r in rows(engine))


@pytest.mark.parametrize("text, subject", [
    ("My sister lives in Bergen.", "sister"),
    ("We moved to Argo CD last week.", "argo cd"),
    ("I'm currently working on the parser.", "working"),
])
def test_other_subjects_are_not_where_the_speaker_lives(text: str, subject: str) -> None:
    assert [e.subject for e in extract(text)] == [subject]


def test_a_title_over_a_list_is_not_a_statement_but_a_sentence_is() -> None:
    assert [e.text for e in extract(CHECKLIST)] == ["set the rollout cap to 25 percent"]
    assert [e.subject for e in extract("The budget is 200 euros:\n- rent\n- food")][0] \
        == "budget"
