"""Memory that stays right, second pass (issue 24): a numbered list's steps stay in
their conversation, a rule restated as a fact is one item, and an update that marks
its value as the present one ("these days", "currently") supersedes a paraphrase of
the old value by the same speaker. Wording here is not the crowd eval's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_core import memory, standing
from memory_core.assemble import standing_weight
from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.models import Scope
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    eng = Engine(tmp_path / "d")
    yield eng
    eng.close()


def put(engine: Engine, text: str, speaker: str = "") -> None:
    engine.store.write_sync(lambda c: memory.store_extracted(
        c, SCOPE, 1, None, extract(text), speaker=speaker))


def rows(engine: Engine, status: str = "active") -> list[dict[str, Any]]:
    return engine.store.read(lambda c: [dict(r) for r in c.execute(
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


def test_a_title_over_a_list_is_not_a_statement_but_a_sentence_is() -> None:
    assert [e.text for e in extract(CHECKLIST)] == ["set the rollout cap to 25 percent"]
    assert [e.subject for e in extract("The budget is 200 euros:\n- rent\n- food")][0] \
        == "budget"
