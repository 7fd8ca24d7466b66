"""Memory through a conversation's life (issue 24): an edited message's old branch
leaves the thread's memory, a purged correction gives the value it replaced back, and
a fact restated in later sessions stays one item. Through the real SDK and proxy
where a client is involved; the block is read from what the upstream received."""

from __future__ import annotations

from typing import Any

from memory_core.engine import Engine
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
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
