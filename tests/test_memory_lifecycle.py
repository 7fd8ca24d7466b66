"""Memory through a conversation's life (issue 24): an edited message's old branch
leaves the thread's memory, a purged correction gives the value it replaced back, and
a fact restated in later sessions stays one item. Through the real SDK and proxy
where a client is involved; the block is read from what the upstream received."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_injection import Agent, block_of


def items(engine: Engine) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, superseded_by, supersedes, conflict_with, session"
        " FROM memory_items ORDER BY id")])


def revisions(engine: Engine, item_id: int) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT field, old, new, reason FROM memory_item_revisions WHERE item_id=?"
        " ORDER BY id", (item_id,))])


# -- a purged correction ------------------------------------------------------------------------
async def test_purging_the_session_of_a_correction_makes_the_old_value_current_again(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    await Agent(proxy, upstream, session="s-old").say("My budget is $500.")
    await Agent(proxy, upstream, session="s-fix").say("Actually, my budget is $800.")
    await proxy.settle()
    old, new = items(proxy.engine)
    assert (old["status"], old["superseded_by"]) == ("superseded", new["id"])
    preview = proxy.engine.purge(session="s-fix", dry_run=True)
    assert preview.get("restored_items") == 1 and items(proxy.engine) == [old, new]
    removed = proxy.engine.purge(session="s-fix")
    assert removed == preview and removed["memory_items"] == 1
    [row] = items(proxy.engine)
    assert (row["id"], row["status"], row["superseded_by"]) == (old["id"], "active", None)
    assert revisions(proxy.engine, old["id"])[-1]["reason"] == (
        f"restored: item {new['id']} that replaced it was purged")
    await proxy.settle()
    asker = Agent(proxy, upstream, session="s-ask")
    await asker.say("How much money can I spend on the trip?")
    assert "500" in block_of(asker.upstream_last_user())
    hits = proxy.engine.search_memory("budget")
    assert any("500" in h["text"] for h in hits), hits


async def test_purging_a_middle_correction_points_the_old_value_at_the_newest(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    for session, text in (("s1", "My budget is $500."), ("s2", "Actually, my budget is $800."),
                          ("s3", "Correction: my budget is $900.")):
        await Agent(proxy, upstream, session=session).say(text)
    await proxy.settle()
    first, middle, last = items(proxy.engine)
    assert middle["superseded_by"] == last["id"]
    removed = proxy.engine.purge(session="s2")
    assert removed.get("restored_items") == 0
    a, b = items(proxy.engine)
    assert (a["id"], a["status"], a["superseded_by"]) == (first["id"], "superseded", last["id"])
    assert (b["id"], b["status"], b["supersedes"]) == (last["id"], "active", first["id"])
    # purging the newest one as well: the first value is the only one left, current
    proxy.engine.purge(session="s3")
    [only] = items(proxy.engine)
    assert (only["id"], only["status"]) == (first["id"], "active")


@pytest.mark.parametrize("purged", ["s-first", "s-again"])
async def test_purging_one_session_of_a_restated_fact_keeps_the_others_statement(
        proxy: RunningProxy, upstream: FakeUpstream, purged: str) -> None:
    """A restatement moves the item to the newest session that said it; purging
    either session leaves the item, citing the statement that survives."""
    await Agent(proxy, upstream, session="s-first").say("My manager is Dana.")
    await Agent(proxy, upstream, session="s-again").say("Reminder: Dana is my manager.")
    await proxy.settle()
    [before] = items(proxy.engine)
    assert before["session"] == "s-first"
    proxy.engine.purge(session=purged)
    [after] = items(proxy.engine)
    assert (after["id"], after["status"]) == (before["id"], "active")
    kept = "s-again" if purged == "s-first" else "s-first"
    src = sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT m.session, m.text, i.thread_id = m.thread_id FROM memory_items i"
        " JOIN messages m ON m.id = i.source_message_id")])
    text = "My manager is Dana." if kept == "s-first" else "Reminder: Dana is my manager."
    assert src == [(kept, text, True)]
    assert after["session"] == kept
    await proxy.settle()
    asker = Agent(proxy, upstream, session="s-ask")
    await asker.say("Who is my manager?")
    assert "Dana" in block_of(asker.upstream_last_user())


# -- restatements across sessions -----------------------------------------------------------------
def put_in_sessions(engine: Engine, texts: list[str]) -> None:
    """Each text said in a session (thread) of its own, one tenant and role."""
    for i, text in enumerate(texts):
        scope = Scope("t", "coder", f"s{i}")
        engine.store.write_tx_sync(lambda c, s=scope, t=text, n=i: writer.store_extracted(
            c, s, n + 1, None, extract(t)))  # type: ignore[arg-type]  # no message


def active_items(engine: Engine) -> list[dict[str, Any]]:
    return [r for r in items(engine) if r["status"] == "active"]


@pytest.mark.parametrize("texts, kept", [
    (["My manager is Dana.", "Reminder: Dana is my manager.",
      "Just so you know, my manager is Dana.", "My manager is Dana, as I said.",
      "Reminder: Dana is my manager."], "My manager is Dana."),
    (["The deploy window is Tuesday 14:00 UTC.", "We deploy on Tuesdays at 14:00 UTC.",
      "Reminder: our deploy window is Tuesday at 14:00 UTC."],
     "The deploy window is Tuesday 14:00 UTC."),
    (["I prefer metric units.", "I use metric units.", "As I said, I prefer metric units."],
     "I prefer metric units."),
    (["My manager is Dana.", "My manager is Dana Smith.", "My manager is Dana."],
     "My manager is Dana Smith."),
])
def test_a_fact_restated_in_later_sessions_is_one_item_without_conflicts(
        engine: Engine, texts: list[str], kept: str) -> None:
    put_in_sessions(engine, texts)
    rows = items(engine)
    assert all(r["conflict_with"] is None for r in rows), rows
    assert [r["text"] for r in active_items(engine)] == [kept], rows


def test_rival_values_across_sessions_still_conflict(engine: Engine) -> None:
    put_in_sessions(engine, ["My manager is Dana.", "My manager is Lee."])
    assert active_items(engine)[-1]["conflict_with"] is not None
    put_in_sessions(engine, ["The deploy window is Tuesday 14:00 UTC.",
                             "The deploy window is Tuesday 16:00 UTC."])
    assert active_items(engine)[-1]["conflict_with"] is not None


def test_a_statement_of_its_subject_alone_conflicts_with_nothing(engine: Engine) -> None:
    put_in_sessions(engine, ["We deploy the billing service with Argo CD.",
                             "Tell me again what you know about Dana and the billing deploys."])
    rows = active_items(engine)
    assert rows[0]["text"] == "We deploy the billing service with Argo CD."
    assert all(r["conflict_with"] is None for r in rows), rows


# -- an edited message ---------------------------------------------------------------------------
async def send(agent: Agent, history: list[dict[str, Any]]) -> str:
    """Send ``history`` as it is (an edit: a changed message, the later turns gone)."""
    r = await agent.client.chat.completions.create(model="m", messages=history)  # type: ignore[arg-type]
    return r.choices[0].message.content or ""


async def test_an_edited_message_retires_the_old_branch_and_the_edit_supersedes_it(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream)
    await agent.say("Hi, can you help me plan something?")
    await agent.say("I'm planning a trip to Lisbon in May.")
    await agent.say("My budget is $500. I prefer window seats.")
    await agent.say("What hotels do you suggest?")
    # the user edits the third message: same prefix, the later turns gone
    edited = agent.messages[:5] + [{"role": "user", "content": "My budget is $800."}]
    await send(agent, edited)
    await proxy.settle()
    rows = {r["text"]: r for r in items(proxy.engine)}
    old, seats = rows["My budget is $500."], rows["I prefer window seats."]
    new = rows["My budget is $800."]
    assert old["status"] == "edited" and seats["status"] == "edited", rows
    assert (old["superseded_by"], new["supersedes"]) == (new["id"], old["id"])
    assert new["status"] == "active" and new["conflict_with"] is None
    assert rows["I'm planning a trip to Lisbon in May."]["status"] == "active"  # shared prefix
    reason = revisions(proxy.engine, old["id"])[-1]["reason"]
    assert reason.startswith("edited:"), revisions(proxy.engine, old["id"])
    # a later conversation sees the edited value only
    other = Agent(proxy, upstream, system="Another conversation.")
    await other.say("How much can I spend on the Lisbon trip, and which seats do I like?")
    block = block_of(other.upstream_last_user())
    assert "800" in block and "500" not in block and "window" not in block, block
    assert "CONFLICTS" not in block
    # the old branch's words are still evidence: kept and searchable
    assert proxy.engine.search_memory("budget $500")


async def test_an_edit_that_drops_a_statement_retires_it_and_keeps_what_it_repeats(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="chat-1")
    await agent.say("Hello.")
    await agent.say("Let's plan a city trip.")
    await agent.say("My budget is $500. The hotel must have a pool.")
    edited = agent.messages[:5] + [
        {"role": "user", "content": "The hotel must have a pool. What about Porto?"}]
    await send(agent, edited)
    await proxy.settle()
    rows = items(proxy.engine)
    status = {r["text"]: r["status"] for r in rows}
    assert status["My budget is $500."] == "edited", rows
    pool = [r for r in rows if r["text"] == "The hotel must have a pool."]
    assert [r["status"] for r in pool] == ["active"], rows  # said again: one item, active


async def test_a_regeneration_or_a_new_conversation_retires_nothing(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """Only a user message changed after an answer the user saw is an edit: not the
    same message resent, not a new conversation that shares the system prompt (with
    or without the same session header), not one that shares a few-shot example."""
    agent = Agent(proxy, upstream, session="app")
    await agent.say("Hello, I need help with a trip.")
    await agent.say("My budget is $500.")
    await send(agent, agent.messages[:4])  # "regenerate": the same user message again
    await Agent(proxy, upstream, session="app").say("What is the capital of Portugal?")
    await Agent(proxy, upstream).say("What is the capital of Spain?")
    shots = [{"role": "user", "content": "Example: my budget is $100."},
             {"role": "assistant", "content": "Noted: $100."}]
    for text in ("Our office is in Lyon.", "What is the capital of Italy?"):
        few_shot = Agent(proxy, upstream, session="shots")
        few_shot.messages += shots
        await few_shot.say(text)
    await proxy.settle()
    rows = items(proxy.engine)
    assert [r["status"] for r in rows if "$500" in r["text"]] == ["active"], rows
    assert all(r["status"] == "active" for r in rows if "Lyon" in r["text"]), rows


async def test_a_branch_that_goes_on_gets_its_items_back(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """An agent that forks on purpose continues both branches: memory follows the
    branch continued last, and nothing is lost either way."""
    agent = Agent(proxy, upstream, session="agent-1")
    await agent.say("Hello.")
    await agent.say("Plan the migration of the billing service.")
    await agent.say("The staging database port is 5433.")
    branch_a = list(agent.messages)
    await send(agent, branch_a[:5] + [{"role": "user", "content": "The cache size is 4 GB."}])
    await proxy.settle()
    status = {r["text"]: r["status"] for r in items(proxy.engine)}
    assert status["The staging database port is 5433."] == "edited", status
    assert status["The cache size is 4 GB."] == "active", status
    # branch A goes on
    await send(agent, branch_a + [{"role": "user", "content": "Continue with the plan."}])
    await proxy.settle()
    rows = {r["text"]: r for r in items(proxy.engine)}
    port = rows["The staging database port is 5433."]
    assert port["status"] == "active" and port["superseded_by"] is None, rows
    assert rows["The cache size is 4 GB."]["status"] == "active"
    assert revisions(proxy.engine, port["id"])[-1]["reason"].startswith("restored:")


def test_a_fuller_restatement_takes_the_place_of_the_shorter_one(engine: Engine) -> None:
    """Not a correction: the shorter item is merged into the fuller one, which cites
    both statements and is not shown as correcting anything."""
    put_in_sessions(engine, ["My manager is Dana.", "My manager is Dana Smith."])
    old, new = items(engine)
    assert (old["status"], old["superseded_by"]) == ("merged", new["id"])
    assert (new["status"], new["supersedes"], new["conflict_with"]) == ("active", None, None)


async def test_conversations_of_two_sessions_that_open_alike_are_not_edits(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """Two sessions whose first exchange is byte-identical ("Hi!" and the same
    answer, as a model at temperature 0 gives) share those nodes; the second
    session's next message is not an edit of the first session's."""
    upstream.push(*[Reply(content="Hello! How can I help you today?") for _ in range(4)])
    first, second = Agent(proxy, upstream), Agent(proxy, upstream)
    await first.say("Hi!")
    await second.say("Hi!")
    assert first.messages == second.messages  # the same opening, answer included
    await first.say("My budget is $500.")
    await second.say("What is the capital of Spain?")
    await proxy.settle()
    rows = items(proxy.engine)
    assert [r["status"] for r in rows if "$500" in r["text"]] == ["active"], rows


async def test_an_edit_that_drops_a_correction_makes_the_old_value_current_again(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """"Actually, $800" edited away: the $500 it replaced is the budget again; when
    the branch goes on, $800 replaces it again."""
    agent = Agent(proxy, upstream, session="budget")
    await agent.say("Hello.")
    await agent.say("My budget is $500.")
    await agent.say("Actually, my budget is $800.")
    branch = list(agent.messages)
    await send(agent, branch[:5] + [{"role": "user", "content": "Which hotels are near the sea?"}])
    await proxy.settle()
    rows = {r["text"]: r for r in items(proxy.engine)}
    assert rows["Actually, my budget is $800."]["status"] == "edited", rows
    old = rows["My budget is $500."]
    assert old["status"] == "active" and old["superseded_by"] is None, rows
    await send(agent, branch + [{"role": "user", "content": "Book the first one."}])
    await proxy.settle()
    rows = {r["text"]: r for r in items(proxy.engine)}
    new = rows["Actually, my budget is $800."]
    assert new["status"] == "active", rows
    assert rows["My budget is $500."]["status"] == "superseded", rows
    assert rows["My budget is $500."]["superseded_by"] == new["id"], rows
