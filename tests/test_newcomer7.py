"""Findings of the seventh newcomer pass (docs/evaluation/newcomer7/README.md), through a
real proxy, the real openai SDK and the fake upstream on loopback.

A plan laid out as numbered steps ("Step 1: add a uuid column. Step 2: backfill it.
Step 3: drop the old id.") lost every step at the first "Step 1 done": a step's number
carries no content term, so "Step 1 done" shared only "step" with each TODO, and all
three tied as the best match and closed. The next block had no TODO left, with steps 2
and 3 not done. A done line that names a step now closes only the TODO or blocker of
that step.

"The billing database is Postgres 16 on db-billing-2, not 14." after "… Postgres 14 …"
left both current, a conflict to ask the user about: a value restated with the one it
strikes after ", not" now supersedes it."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.items.writer import step_refs
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of


async def turn(agent: Agent, proxy: Any, text: str) -> str:
    """Say ``text``, let the proxy's background work finish, and return the block the
    upstream received with it."""
    await agent.say(text)
    await proxy.settle()
    return block_of(agent.upstream_last_user())


def todos(block: str) -> list[str]:
    return [ln for ln in block.splitlines() if ln.startswith(("TODO:", "Blocked:"))]


async def test_a_done_step_closes_that_step_and_no_other(
        proxy: Any, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="plan-steps")
    await turn(agent, proxy, "Step 1: add a uuid column. Step 2: backfill it. "
                             "Step 3: drop the old id.")
    await turn(agent, proxy, "Step 1 done.")
    block = await turn(agent, proxy, "Is the backfill slow?")
    assert [t.split(" (msg")[0] for t in todos(block)] == [
        "TODO: Step 2: backfill it", "TODO: Step 3: drop the old id"], block
    assert "Progress: Step 1 done" in block, block
    await turn(agent, proxy, "Step two is finished too.")
    block = await turn(agent, proxy, "What is left?")
    assert [t.split(" (msg")[0] for t in todos(block)] == [
        "TODO: Step 3: drop the old id"], block


async def test_a_numbered_todo_list_keeps_its_numbers_for_the_steps_done(
        proxy: Any, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="todo-list")
    await turn(agent, proxy, "TODO:\n1. add the index\n2. backfill the rows\n"
                             "3. drop the old column")
    await turn(agent, proxy, "Blocked on step 3: the column is still read by reports.")
    await turn(agent, proxy, "Step 2 done.")
    block = await turn(agent, proxy, "And now?")
    open_lines = [t.split(" (msg")[0] for t in todos(block)]
    assert "TODO: 2. backfill the rows" not in open_lines, block
    assert "TODO: 1. add the index" in open_lines, block
    assert "TODO: 3. drop the old column" in open_lines, block
    assert any(t.startswith("Blocked:") and "step 3" in t for t in open_lines), block
    await turn(agent, proxy, "Step 3 is done.")
    block = await turn(agent, proxy, "Anything blocked?")
    left = [t.split(" (msg")[0] for t in todos(block)]
    assert left == ["TODO: 1. add the index"], block  # step 3's TODO and its blocker


async def test_a_done_line_naming_no_step_still_closes_by_its_words(
        proxy: Any, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="no-step")
    await turn(agent, proxy, "Step 1: add a uuid column. Step 2: write the backfill job.")
    await turn(agent, proxy, "The backfill job is done.")
    block = await turn(agent, proxy, "Next?")
    assert [t.split(" (msg")[0] for t in todos(block)] == [
        "TODO: Step 1: add a uuid column"], block


@pytest.mark.parametrize(("text", "steps"), [
    ("Step 1 done", {"1"}),
    ("phase three is finished", {"3"}),
    ("step #4 done", {"4"}),
    ("Step 10 and step 2 are merged", {"10", "2"}),
    ("第二步完成了", {"2"}),
    ("第十步", {"10"}),
    ("ステップ3が完了しました", {"3"}),
    ("2. backfill the rows", {"2"}),
    ("Steps are done", set()),
    ("Version 2. done", set()),
    ("We shipped 3 features", set()),
])
def test_step_refs_reads_the_step_numbers_a_line_names(text: str, steps: set[str]) -> None:
    assert step_refs(text) == steps


# "The billing database is Postgres 16 on db-billing-2, not 14." after "… Postgres 14 on
# db-billing-1." left both current, the block asking the model to ask the user which
# holds: a value restated with the one it strikes after ", not" is a correction.
NOT_OLD = [
    ("The billing database is Postgres 14 on db-billing-1.",
     "The billing database is Postgres 16 on db-billing-2, not 14.", "Postgres 16"),
    ("The staging port is 5432.", "The staging port is 5433, not 5432.", "5433"),
    ("Our identity provider is Okta.", "Our identity provider is Keycloak, not Okta.",
     "Keycloak"),
]


@pytest.mark.parametrize(("said", "fixed", "new"), NOT_OLD)
async def test_a_value_restated_with_not_the_old_one_supersedes_it(
        proxy: Any, upstream: FakeUpstream, said: str, fixed: str, new: str) -> None:
    agent = Agent(proxy, upstream, session="not-old")
    await turn(agent, proxy, said)
    await turn(agent, proxy, fixed)
    other = Agent(proxy, upstream, session="not-old-later")
    block = await turn(other, proxy, "Remind me of the current setup details.")
    lines = [ln for ln in block.splitlines() if new in ln]
    assert len(lines) == 1, block
    assert "superseded" in lines[0] and "CONFLICTS" not in lines[0], block
    assert not any(said in ln and "superseded" not in ln for ln in block.splitlines()), block


@pytest.mark.parametrize("text", [
    "The bug is in the parser, not the lexer.",  # a contrast: no name nor number struck
    "It is Postgres 16, not 14.",  # no named subject to revise
    "The port is not 5432.",  # a denial, not a restated value
])
def test_a_not_that_strikes_no_named_value_is_no_correction(text: str) -> None:
    from memory_core.extraction import extract
    assert not any(i.correction for i in extract(text)), extract(text)
