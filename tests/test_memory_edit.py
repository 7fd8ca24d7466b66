"""``memory edit ITEM_ID TEXT`` and ``POST /lcm/v1/items/{id}/edit``: an operator's
correction of an item is a new item (evidence ``admin``) that supersedes it, with its
subject and value read again from the text, revisions saying who changed what,
indexed; the block shows the new text; ``restore`` of the old one works."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
from click.testing import CliRunner

from memory_core.items import standing
from proxy.cli import main
from tests.conftest import RunningProxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_admin_support import ADMIN_TOKEN
from tests.test_injection import Agent, block_of
from tests.test_purge_thread import settle, start, tool_texts

SAID = "The staging database runs on port 5433 when the VPN is up."
FIXED = "The staging database runs on port 6543 when the VPN is up."
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def post(proxy: RunningProxy, path: str, body: dict[str, Any]
               ) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as s, s.post(
            f"{proxy.root}/lcm/v1/{path}", headers=AUTH, json=body) as r:
        return r.status, orjson.loads(await r.read())


def item_row(proxy: RunningProxy, item_id: int) -> Any:
    return store_sql(proxy.engine, "SELECT * FROM memory_items WHERE id = ?", (item_id,))[0]


def revisions(proxy: RunningProxy, item_id: int) -> list[tuple[str, str, str]]:
    return [(r[0], r[1], r[2]) for r in store_sql(
        proxy.engine, "SELECT field, new, reason FROM memory_item_revisions WHERE item_id = ?"
        " ORDER BY id", (item_id,))]


async def told(proxy: RunningProxy, upstream: FakeUpstream) -> int:
    agent = Agent(proxy, upstream, role="ops")
    await agent.say(SAID)
    await settle(proxy)
    rows = store_sql(proxy.engine, "SELECT id FROM memory_items WHERE status = 'active'"
                     " AND text = ?", (SAID,))
    assert len(rows) == 1
    return int(rows[0][0])


async def block_for(proxy: RunningProxy, upstream: FakeUpstream) -> str:
    asker = Agent(proxy, upstream, role="ops", system="You answer about the network.")
    await asker.say("Which port does the staging database use on the VPN?")
    return block_of(asker.upstream_last_user())


async def test_an_edit_supersedes_the_item_and_the_block_shows_the_new_text(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    old = await told(proxy, upstream)
    before = item_row(proxy, old)
    assert "5433" in await block_for(proxy, upstream)

    status, out = await post(proxy, f"items/{old}/edit",
                             {"text": FIXED, "reason": "user said 6543 by mail"})
    assert status == 200 and out["id"] == old and out["old_status"] == "active"
    new = int(out["new_id"])
    row, was = item_row(proxy, new), item_row(proxy, old)
    assert (row["status"], row["evidence"], row["text"]) == ("active", "admin", FIXED)
    assert row["kind"] == before["kind"] and row["subject"] == before["subject"]
    assert float(row["value"]) == 6543 and float(before["value"]) == 5433  # re-extracted
    assert int(row["supersedes"]) == old and int(row["thread_id"]) == int(before["thread_id"])
    assert row["source_message_id"] == before["source_message_id"]
    assert orjson.loads(row["data"])["edited_from"] == old
    assert (was["status"], int(was["superseded_by"])) == ("superseded", new)
    assert ("text", FIXED, f"edited by admin: user said 6543 by mail (item {old})") in \
        revisions(proxy, new)
    assert any(f == "status" and new_ == "superseded" and "edited by admin" in why
               for f, new_, why in revisions(proxy, old))

    await settle(proxy)
    block = await block_for(proxy, upstream)
    assert FIXED in block
    assert FIXED in await tool_texts(proxy, upstream, "memory_grep", "6543", role="ops")
    found = CliRunner().invoke(main, ["memory", "search", "--data-dir",
                                      proxy.settings.storage.data_dir, "staging port 6543",
                                      "--json"])
    assert found.exit_code == 0 and "6543" in found.output, found.output  # only the edit

    # The old revision can be restored: active and indexed again, history kept.
    status, back = await post(proxy, f"items/{old}/restore", {})
    assert status == 200 and back["old_status"] == "superseded"
    assert item_row(proxy, old)["status"] == "active"
    assert item_row(proxy, new)["status"] == "active"


async def test_edit_refuses_what_it_cannot_do(make_proxy: Any,
                                              upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    old = await told(proxy, upstream)
    status, err = await post(proxy, f"items/{old}/edit", {"text": "  "})
    assert status == 400 and err["error"]["param"] == "text"
    status, err = await post(proxy, f"items/{old}/edit", {"text": SAID})
    assert status == 400 and "already says" in err["error"]["message"]
    status, err = await post(proxy, "items/999999/edit", {"text": FIXED})
    assert status == 404
    status, _ = await post(proxy, f"items/{old}/edit?role=writer", {"text": FIXED})
    assert status == 404  # outside the role filter
    status, out = await post(proxy, f"items/{old}/edit", {"text": FIXED})
    assert status == 200
    status, err = await post(proxy, f"items/{old}/edit", {"text": "port 7000"})
    assert status == 409  # superseded now: restore it first


async def test_cli_memory_edit(make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    old = await told(proxy, upstream)
    await proxy.settle()
    data_dir = proxy.settings.storage.data_dir
    runner = CliRunner()
    done = runner.invoke(main, ["memory", "edit", "--data-dir", data_dir, f"item:{old}",
                                FIXED, "--reason", "typo", "--json"])
    assert done.exit_code == 0, done.output
    out = orjson.loads(done.output)
    assert out["id"] == old and item_row(proxy, out["new_id"])["text"] == FIXED
    again = runner.invoke(main, ["memory", "edit", "--data-dir", data_dir, str(old), "x"])
    assert again.exit_code == 1 and "restore it first" in again.output
    bad = runner.invoke(main, ["memory", "edit", "--data-dir", data_dir, "item:x", "x"])
    assert bad.exit_code == 2
    empty = runner.invoke(main, ["memory", "edit", "--data-dir", data_dir,
                                 str(out["new_id"]), " "])
    assert empty.exit_code == 2 and "empty" in empty.output
    scoped = runner.invoke(main, ["memory", "edit", "--data-dir", data_dir,
                                  str(out["new_id"]), "port 1", "--role", "writer"])
    assert scoped.exit_code == 1


async def test_an_edited_assistant_proposal_stays_the_assistants(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # An operator rewording what the assistant proposed does not make it the user's
    # statement: it stays a proposal "not confirmed", shown only in its own thread.
    # before: evidence "admin", shown untagged in every thread as a stated item
    proxy = await start(make_proxy)
    upstream.push(Reply(content="I suggest we use Redis for the session cache."))
    await Agent(proxy, upstream, role="ops").say("What should hold the session cache?")
    await settle(proxy)
    rows = store_sql(proxy.engine, "SELECT id FROM memory_items WHERE status = 'active'"
                     " AND kind = 'proposal'", ())
    assert len(rows) == 1
    status, out = await post(proxy, f"items/{rows[0][0]}/edit",
                             {"text": "I suggest we use Memcached for the session cache."})
    assert status == 200, out
    row = item_row(proxy, int(out["new_id"]))
    assert (row["kind"], row["evidence"]) == ("proposal", "assistant"), dict(row)
    assert not standing.lasting(row) and standing.conversation_local(row)
    assert revisions(proxy, int(out["new_id"]))[0][2].startswith("edited by admin")
