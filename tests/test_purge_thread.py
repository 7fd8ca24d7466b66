"""Purge one thread (``memory purge --thread``, ``POST /lcm/v1/purge {"thread": …}``):
a conversation sent without ``X-LCM-Session`` can be deleted alone, with the branches
forked from it; items also stated in another conversation stay and lose only this
one's statements; after the indexer has run, nothing of it is found by ``memory
search``, the model's memory tools or the block."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest
from click.testing import CliRunner

from proxy.cli import main
from tests.conftest import RunningProxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_admin_support import ADMIN_TOKEN
from tests.test_injection import Agent, block_of
from tests.test_memory_tools import call, tool_results

GONE = "The ZEBRAQUILL cluster runs on port 7411 when the VPN is up."
KEPT = "The staging database runs on port 5433 when the VPN is up."
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def n(proxy: RunningProxy, sql: str, *args: Any) -> int:
    return int(store_sql(proxy.engine, sql, args)[0][0])


def thread_of(proxy: RunningProxy, text: str) -> int:
    rows = store_sql(proxy.engine, "SELECT DISTINCT thread_id FROM messages WHERE text = ?"
                     " AND msg_role = 'user'", (text,))
    assert len(rows) == 1, rows
    return int(rows[0][0])


async def settle(proxy: RunningProxy) -> None:
    await proxy.settle()
    assert proxy.engine.search is not None and proxy.engine.search.wait_idle(60)


async def start(make_proxy: Any) -> RunningProxy:
    return await make_proxy(search={"enabled": True}, tools={"offer": "always"},
                            proxy={"admin_token": ADMIN_TOKEN})


async def purge_api(proxy: RunningProxy, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as s, s.post(
            f"{proxy.root}/lcm/v1/purge", headers=AUTH, json=body) as r:
        return r.status, orjson.loads(await r.read())


async def tool_texts(proxy: RunningProxy, upstream: FakeUpstream, tool: str,
                     query: str, role: str = "default") -> str:
    """What ``tool`` answered the model in a new conversation, as one string."""
    upstream.push(Reply(content=None, tool_calls=[call(tool, {"query": query, "limit": 10}
                                                       | ({"start_time": None,
                                                           "end_time": None}
                                                          if tool == "memory_grep" else {}))]),
                  Reply(content="ok"))
    asker = Agent(proxy, upstream, role=role, system=f"You look things up ({tool}).")
    await asker.say("Which cluster was it, and its port?")
    answer = tool_results(upstream.chat_requests[-1])["call_1"]
    assert "results" in answer, answer
    return orjson.dumps(answer["results"]).decode()


async def block_for(proxy: RunningProxy, upstream: FakeUpstream) -> str:
    asker = Agent(proxy, upstream, system="You answer about the network.")
    await asker.say("Which port does the cluster run on when the VPN is up?")
    return block_of(asker.upstream_last_user())


def cli_search(proxy: RunningProxy, query: str) -> str:
    out = CliRunner().invoke(main, ["memory", "search", "--data-dir",
                                    proxy.settings.storage.data_dir, query])
    assert out.exit_code == 0, out.output
    return out.output


async def test_a_purged_thread_is_gone_from_search_the_tools_and_the_block(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    gone = Agent(proxy, upstream)  # no X-LCM-Session: only its thread id names it
    await gone.say(GONE)
    await gone.say("Thanks, noted.")
    kept = Agent(proxy, upstream, system="You are the ops agent.")
    await kept.say(KEPT)
    await settle(proxy)
    thread = thread_of(proxy, GONE)
    assert thread != thread_of(proxy, KEPT)
    # Everything finds it before the purge (so the checks below can fail).
    assert "ZEBRAQUILL" in cli_search(proxy, "ZEBRAQUILL")
    assert "ZEBRAQUILL" in await tool_texts(proxy, upstream, "memory_grep", "ZEBRAQUILL")
    assert "ZEBRAQUILL" in await tool_texts(proxy, upstream, "memory_search",
                                            "ZEBRAQUILL cluster port")
    assert "ZEBRAQUILL" in await block_for(proxy, upstream)
    await settle(proxy)
    messages = n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", thread)

    status, dry = await purge_api(proxy, {"thread": thread, "dry_run": True})
    assert status == 200 and dry["filters"] == {"thread": thread}
    assert dry["removed"]["messages"] == messages and dry["removed"]["threads"] == 1
    assert dry["removed"]["memory_items"] >= 1
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", thread) == messages
    status, refused = await purge_api(proxy, {"thread": thread})
    assert status == 400 and refused["error"]["code"] == "confirmation_required"
    status, done = await purge_api(proxy, {"thread": thread, "confirm": True})
    assert status == 200 and done["removed"] == dry["removed"]
    await settle(proxy)

    for table in ("threads", "messages", "memory_items", "events", "assembly_logs",
                  "task_state", "summary_nodes"):
        col = "id" if table == "threads" else "thread_id"
        assert n(proxy, f"SELECT COUNT(*) FROM {table} WHERE {col} = ?", thread) == 0, table
    assert "ZEBRAQUILL" not in cli_search(proxy, "ZEBRAQUILL")
    assert "5433" in cli_search(proxy, "staging database port")  # the other one stays
    assert "ZEBRAQUILL" not in await tool_texts(proxy, upstream, "memory_grep", "ZEBRAQUILL")
    assert "ZEBRAQUILL" not in await tool_texts(proxy, upstream, "memory_search",
                                                "ZEBRAQUILL cluster port")
    grep_kept = await tool_texts(proxy, upstream, "memory_grep", "staging database")
    assert "5433" in grep_kept
    assert "ZEBRAQUILL" not in await block_for(proxy, upstream)
    assert proxy.engine.integrity_check() == ["ok"]


async def test_an_item_said_in_two_threads_keeps_the_other_ones_statement(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    first = Agent(proxy, upstream)
    await first.say(GONE)
    second = Agent(proxy, upstream, system="You are the ops agent.")
    await second.say(GONE)
    await proxy.settle()
    threads = sorted(int(r[0]) for r in store_sql(
        proxy.engine, "SELECT DISTINCT thread_id FROM messages WHERE text = ?", (GONE,)))
    said = {int(r[1]): int(r[0]) for r in store_sql(
        proxy.engine, "SELECT id, thread_id FROM messages WHERE text = ?", (GONE,))}
    assert len(threads) == 2
    items = store_sql(proxy.engine, "SELECT id, data FROM memory_items WHERE status = 'active'"
                      " AND text LIKE ?", ("%ZEBRAQUILL%",))
    assert len(items) == 1
    item_id = int(items[0][0])
    assert sorted(orjson.loads(items[0][1])["sources"]) == sorted(said.values())

    removed = proxy.engine.purge(thread_id=threads[0])
    assert removed["memory_items"] == 0 and removed["sources_dropped"] == 1
    row = store_sql(proxy.engine, "SELECT text, thread_id, source_message_id, data FROM"
                    " memory_items WHERE id = ?", (item_id,))[0]
    data = orjson.loads(row[3])
    assert "ZEBRAQUILL" in row[0]  # said in the other conversation too: the text stays
    assert (int(row[1]), int(row[2])) == (threads[1], said[threads[1]])
    assert data["sources"] == [said[threads[1]]]
    assert threads[0] not in (data.get("occasion_threads") or ())
    assert threads[0] not in (data.get("resent_threads") or ())
    # Its only statement left is in the second thread: purging that removes it.
    removed = proxy.engine.purge(thread_id=threads[1])
    assert removed["memory_items"] == 1
    assert n(proxy, "SELECT COUNT(*) FROM memory_items WHERE id = ?", item_id) == 0


async def test_purging_the_thread_that_holds_the_item_moves_it_to_the_other(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    first = Agent(proxy, upstream)
    await first.say(GONE)
    second = Agent(proxy, upstream, system="You are the ops agent.")
    await second.say(GONE)
    await proxy.settle()
    said = {int(r[1]): int(r[0]) for r in store_sql(
        proxy.engine, "SELECT id, thread_id FROM messages WHERE text = ?", (GONE,))}
    item = store_sql(proxy.engine, "SELECT id, thread_id FROM memory_items WHERE"
                     " status = 'active' AND text LIKE ?", ("%ZEBRAQUILL%",))[0]
    holder = int(item[1])
    other = next(t for t in said if t != holder)
    proxy.engine.purge(thread_id=holder)
    row = store_sql(proxy.engine, "SELECT thread_id, source_message_id, data FROM"
                    " memory_items WHERE id = ?", (int(item[0]),))[0]
    assert (int(row[0]), int(row[1])) == (other, said[other])
    assert orjson.loads(row[2])["sources"] == [said[other]]


async def test_a_thread_purge_takes_its_forks_and_combines_with_other_filters(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    agent = Agent(proxy, upstream, role="coder")
    await agent.say("Please plan the ledger migration.")
    await agent.say("Now the schedule.")
    agent.messages[-2:] = []  # the last question edited: a branch forked from the thread
    await agent.say("Now the budget instead.")
    other = Agent(proxy, upstream, role="coder", system="You are the ops agent.")
    await other.say(KEPT)
    await proxy.settle()
    root = thread_of(proxy, "Please plan the ledger migration.")
    fork = thread_of(proxy, "Now the budget instead.")
    assert fork != root
    assert n(proxy, "SELECT COUNT(*) FROM threads WHERE id = ? AND parent_thread_id = ?",
             fork, root) == 1
    # combined with a role it does not have: nothing
    assert not any(v for k, v in proxy.engine.purge(thread_id=root, role="writer",
                                                    dry_run=True).items())
    removed = proxy.engine.purge(thread_id=root, role="coder")
    assert removed["threads"] == 2
    assert n(proxy, "SELECT COUNT(*) FROM threads WHERE id IN (?, ?)", root, fork) == 0
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ?", KEPT) == 1
    audit = proxy.engine.export(events=True)["events"]
    assert any(e["kind"] == "purge" and e["data"]["filters"] == {"role": "coder",
                                                                 "thread": root}
               for e in audit)


async def test_cli_purge_thread_dry_run_then_yes(make_proxy: Any,
                                                 upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    gone = Agent(proxy, upstream)
    await gone.say(GONE)
    kept = Agent(proxy, upstream, system="You are the ops agent.")
    await kept.say(KEPT)
    await settle(proxy)
    thread = thread_of(proxy, GONE)
    data_dir = proxy.settings.storage.data_dir
    runner = CliRunner()
    args = ["memory", "purge", "--data-dir", data_dir, "--thread", str(thread)]
    dry = runner.invoke(main, [*args, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    preview = orjson.loads(dry.output)["would_remove"]
    assert preview["threads"] == 1 and preview["messages"] == 3
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", thread) == 3
    yes = runner.invoke(main, [*args, "--yes"])
    assert yes.exit_code == 0 and "purged 3 messages, 1 threads" in yes.output, yes.output
    again = runner.invoke(main, [*args, "--yes"])
    assert again.exit_code == 0 and f"nothing stored for thread={thread}" in again.output
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ?", KEPT) == 1
    bad = runner.invoke(main, ["memory", "purge", "--data-dir", data_dir, "--thread", "0"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("body", [{"thread": "7"}, {"thread": 0}, {"thread": True},
                                  {"thread": 1.5}])
async def test_api_purge_refuses_a_thread_that_is_not_an_id(
        make_proxy: Any, body: dict[str, Any]) -> None:
    proxy = await start(make_proxy)
    status, err = await purge_api(proxy, {**body, "confirm": True})
    assert status == 400 and err["error"]["param"] == "thread"
