"""An update replaces only what it changes (issue 24, kind 1): a compound statement
("I live in Porto and work as a backend engineer") is stored as one item per coordinated
predicate, each with the message as its source, so a move retires the city and keeps the
job; a recurring day of one event given anew ("Deploys are on Thursdays now." after "We
deploy on Fridays at 16:00.") replaces the old day, and another event's day does not."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str) -> None:
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract(text), speaker=""))


def items(engine: Engine) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, supersedes FROM memory_items ORDER BY id")])


def active_texts(engine: Engine) -> list[str]:
    return [r["text"] for r in items(engine) if r["status"] == "active"]


# -- a compound statement: one item per predicate -------------------------------------------
@pytest.mark.parametrize("old, kept, new", [
    ("I live in Porto and work as a backend engineer.", "backend engineer",
     "I moved to Lisbon."),
    ("I'm based in Porto and work as a nurse.", "nurse", "I moved to Lisbon last month."),
    ("I live in Porto, work as a backend engineer and have two cats.", "two cats",
     "I moved to Lisbon."),
    ("我住在上海，并且在一家银行工作。", "银行", "我搬到北京了。"),
    ("我住在上海，还在一家银行工作。", "银行", "我搬到北京了。"),
    ("私は大阪に住んでいて、銀行で働いています。", "銀行", "東京に引っ越しました。"),
    ("大阪に住んでいるし、銀行で働いている。", "銀行", "東京に引っ越しました。"),
])
def test_a_move_retires_the_city_and_keeps_the_job(engine: Engine, old: str, kept: str,
                                                   new: str) -> None:
    put(engine, old)
    put(engine, new)
    rows = items(engine)
    assert len(rows) >= 3, rows  # the compound stored as two items or more, then the move
    moved = rows[-1]
    assert moved["text"] == new and moved["status"] == "active", rows
    gone = [r for r in rows if r["status"] == "superseded"]
    assert len(gone) == 1 and moved["supersedes"] == gone[0]["id"], rows
    assert kept not in gone[0]["text"], rows  # only the city went
    assert any(kept in t for t in active_texts(engine)), rows


async def test_the_block_keeps_the_job_after_a_move(proxy: RunningProxy,
                                                    upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, system="You help Ana.")
    await agent.say("I live in Porto and work as a backend engineer.")
    await agent.say("I moved to Lisbon.")
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, status, source_message_id FROM memory_items ORDER BY id")])
    first = [r for r in rows if r["text"] != "I moved to Lisbon."]
    assert len(first) == 2 and len({r["source_message_id"] for r in first}) == 1, rows
    assert first[0]["source_message_id"] is not None, rows  # both parts cite the message
    fresh = Agent(proxy, upstream, system="Another conversation.")
    await fresh.say("Where do I live and what is my job?")
    block = block_of(fresh.upstream_last_user())
    # each line without the note of what it corrects (history, marked superseded)
    current = [ln.split(" (corrects ")[0] for ln in block.splitlines()]
    assert any("Lisbon" in ln for ln in current), block
    assert any("backend engineer" in ln for ln in current), block  # the job stays
    assert not any("Porto" in ln for ln in current), block  # the city is history


@pytest.mark.parametrize("text", [
    "I think we use Postgres and deploy on Fridays.",  # the verb phrase is the inner clause's
    "I need to fix the bug and deploy it.",  # what is needed, not done
    "We use Postgres, Redis and Kafka.",  # a list of values, not of predicates
])
def test_a_dependent_or_listed_phrase_stays_one_item(text: str) -> None:
    assert len(extract(text)) <= 1, extract(text)


# -- a recurring day of one event, given anew ----------------------------------------------
@pytest.mark.parametrize("old, new", [
    ("We deploy on Fridays at 16:00.", "Deploys are on Thursdays now."),
    ("We deploy on Fridays at 16:00.", "Deployments are on Thursdays now."),
    ("We work from home on Tuesdays.", "We work from home on Mondays now."),
    ("On Fridays we work from home.", "We work from home on Mondays now."),
])
def test_a_new_day_of_the_same_event_supersedes_the_old(engine: Engine, old: str,
                                                        new: str) -> None:
    put(engine, old)
    put(engine, new)
    assert active_texts(engine) == [new], items(engine)


@pytest.mark.parametrize("old, new", [
    ("The web app deploys on Fridays.", "The mobile app deploys on Mondays now."),
    ("The web app deploys on Fridays at 16:00.", "The mobile app deploys on Mondays now."),
    ("We deploy the web app on Fridays.", "We deploy the mobile app on Mondays now."),
    ("The gym is closed on Sundays.", "The pool is closed on Mondays now."),
    ("I work as a nurse.", "We work from home on Mondays now."),
])
def test_another_events_day_supersedes_nothing(engine: Engine, old: str, new: str) -> None:
    put(engine, old)
    put(engine, new)
    assert active_texts(engine) == [old, new], items(engine)


def test_an_end_of_work_still_ends_the_job(engine: Engine) -> None:
    put(engine, "I work as a nurse.")
    put(engine, "I got laid off.")
    assert active_texts(engine) == ["I got laid off."], items(engine)
