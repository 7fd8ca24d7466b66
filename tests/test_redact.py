"""Redact one message (``memory redact MSG_ID``, ``POST /lcm/v1/messages/{id}/redact``):
its content is replaced by a placeholder everywhere it was stored, the memory items
stated only there go (a correction stated there is undone), and the conversation goes
on: the client resends its history with the original text and the proxy still matches
it to the same thread, storing no new copy."""

from __future__ import annotations

import zlib
from typing import Any

import aiohttp
import anthropic
import openai
import orjson
from click.testing import CliRunner

from memory_core.store.scrub import PLACEHOLDER, Scrubber, mask_messages
from proxy.cli import main
from tests.conftest import TEST_KEY, RunningProxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_admin_support import ADMIN_TOKEN
from tests.test_injection import Agent, block_of
from tests.test_purge_thread import cli_search, n, settle, start, tool_texts

RECORD = ("Customer record for the ticket: Ilse Marrowfield, phone 555-0142, the"
          " ZEBRAQUILL cluster runs on port 7411 when the VPN is up.")
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def redact_api(proxy: RunningProxy, message_id: int, body: dict[str, Any],
                     query: str = "") -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as s, s.post(
            f"{proxy.root}/lcm/v1/messages/{message_id}/redact{query}", headers=AUTH,
            json=body) as r:
        return r.status, orjson.loads(await r.read())


async def block_for(proxy: RunningProxy, upstream: FakeUpstream) -> str:
    """The block a new conversation's question gets (the model's reply does not echo
    it, so it stores no copy of its own)."""
    upstream.push(Reply(content="ok"))
    asker = Agent(proxy, upstream, system="You answer about the network.")
    await asker.say("Which port does the cluster run on when the VPN is up?")
    return block_of(asker.upstream_last_user())


def message_of(proxy: RunningProxy, text: str) -> tuple[int, int]:
    """(id, thread id) of the one user message that said ``text``."""
    rows = store_sql(proxy.engine, "SELECT id, thread_id FROM messages WHERE text = ?"
                     " AND msg_role = 'user'", (text,))
    assert len(rows) == 1, rows
    return int(rows[0][0]), int(rows[0][1])


def stored_copies(proxy: RunningProxy, word: str) -> dict[str, int]:
    """Rows of every table that holds conversation text that still contain ``word``."""
    like = f"%{word}%"
    found = {table: n(proxy, f"SELECT COUNT(*) FROM {table} WHERE {col} LIKE ?", like)
             for table, col in (("messages", "text"), ("messages", "raw_json"),
                                ("memory_items", "text"), ("summary_nodes", "text"),
                                ("assembly_logs", "data"), ("task_state", "text"),
                                ("splices", "messages"))}
    bodies = store_sql(proxy.engine, "SELECT body FROM forwarded_requests"
                       " WHERE body IS NOT NULL")
    found["forwarded_requests"] = sum(word.encode() in zlib.decompress(bytes(b[0]))
                                      for b in bodies)
    return {k: v for k, v in found.items() if v}


async def test_a_redacted_message_is_gone_and_the_conversation_goes_on(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    agent = Agent(proxy, upstream)
    await agent.say("Hello, I need help with a support ticket.")
    await agent.say(RECORD)
    await agent.say("Which team owns this kind of ticket?")
    await settle(proxy)
    message_id, thread = message_of(proxy, RECORD)
    # Everything holds it before (so the checks below can fail).
    assert "ZEBRAQUILL" in cli_search(proxy, "ZEBRAQUILL")
    assert "ZEBRAQUILL" in await block_for(proxy, upstream)
    assert n(proxy, "SELECT COUNT(*) FROM memory_items WHERE source_message_id = ?",
             message_id) >= 1
    assert stored_copies(proxy, "Marrowfield").get("forwarded_requests")
    await settle(proxy)
    threads = n(proxy, "SELECT COUNT(*) FROM threads")
    messages = n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", thread)

    status, refused = await redact_api(proxy, message_id, {})
    assert status == 400 and refused["error"]["code"] == "confirmation_required"
    status, dry = await redact_api(proxy, message_id, {"dry_run": True})
    assert status == 200 and dry["changed"]["messages"] == 1
    assert dry["changed"]["memory_items"] >= 1
    assert message_of(proxy, RECORD)[0] == message_id  # the dry run changed nothing
    status, done = await redact_api(proxy, message_id, {"confirm": True})
    assert status == 200 and done["changed"] == dry["changed"]
    await settle(proxy)
    assert stored_copies(proxy, "Marrowfield") == {}
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    row = store_sql(proxy.engine, "SELECT text, raw_json, thread_id FROM messages WHERE id = ?",
                    (message_id,))[0]
    assert row[0] == PLACEHOLDER and orjson.loads(row[1]) == {"role": "user",
                                                             "content": PLACEHOLDER}

    # The client resends the original text: same thread, nothing captured again.
    await agent.say("Please draft the reply to the customer.")
    await settle(proxy)
    assert n(proxy, "SELECT COUNT(*) FROM threads") == threads
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?",
             thread) == messages + 2
    assert message_of(proxy, "Please draft the reply to the customer.")[1] == thread
    assert RECORD in orjson.dumps(upstream.chat_requests[-1]["json"]).decode()  # as sent
    assert "ZEBRAQUILL" not in block_of(agent.upstream_last_user())
    assert stored_copies(proxy, "Marrowfield") == {}
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    assert "ZEBRAQUILL" not in cli_search(proxy, "ZEBRAQUILL")
    assert "ZEBRAQUILL" not in await tool_texts(proxy, upstream, "memory_grep", "ZEBRAQUILL")
    assert "ZEBRAQUILL" not in await block_for(proxy, upstream)
    assert "Marrowfield" not in orjson.dumps(proxy.engine.export(events=True)).decode()
    audit = [e for e in proxy.engine.export(events=True)["events"] if e["kind"] == "redact"]
    assert len(audit) == 1 and audit[0]["data"]["message_id"] == message_id
    assert proxy.engine.integrity_check() == ["ok"]


async def test_an_item_said_elsewhere_stays_and_a_correction_is_undone(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    first = Agent(proxy, upstream)
    await first.say(RECORD)
    second = Agent(proxy, upstream, system="You are the ops agent.")
    await second.say(RECORD)
    await second.say("The staging database runs on port 5433.")
    await second.say("Actually, the staging database runs on port 5434.")
    await proxy.settle()
    said = sorted(int(r[0]) for r in store_sql(
        proxy.engine, "SELECT id FROM messages WHERE text = ?", (RECORD,)))
    item = store_sql(proxy.engine, "SELECT id FROM memory_items WHERE status = 'active'"
                     " AND text LIKE ?", ("%ZEBRAQUILL%",))
    assert len(said) == 2 and len(item) == 1
    old = store_sql(proxy.engine, "SELECT id, status FROM memory_items WHERE text LIKE ?",
                    ("%5433%",))
    assert [r[1] for r in old] == ["superseded"]
    fix, _ = message_of(proxy, "Actually, the staging database runs on port 5434.")

    terms = n(proxy, "SELECT COUNT(*) FROM memory_item_terms WHERE item_id = ?",
              int(item[0][0]))
    assert terms > 0
    changed = proxy.engine.redact(said[0])
    assert n(proxy, "SELECT COUNT(*) FROM memory_item_terms WHERE item_id = ?",
             int(item[0][0])) == terms  # the surviving item keeps its look-up rows
    assert changed is not None and changed["sources_dropped"] + changed["memory_items"] >= 1
    row = store_sql(proxy.engine, "SELECT text, source_message_id, data FROM memory_items"
                    " WHERE id = ?", (int(item[0][0]),))[0]
    assert "ZEBRAQUILL" in row[0]  # said in the other conversation too: the text stays
    assert int(row[1]) == said[1] and orjson.loads(row[2])["sources"] == [said[1]]

    changed = proxy.engine.redact(fix)
    assert changed is not None and changed["restored_items"] == 1
    assert n(proxy, "SELECT COUNT(*) FROM memory_items WHERE text LIKE ?", "%5434%") == 0
    assert store_sql(proxy.engine, "SELECT status FROM memory_items WHERE id = ?",
                     (int(old[0][0]),))[0][0] == "active"


async def test_cli_redact_dry_run_then_yes_and_the_api_bounds(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    agent = Agent(proxy, upstream, role="coder")
    await agent.say(RECORD)
    await settle(proxy)
    message_id, _ = message_of(proxy, RECORD)
    status, _ = await redact_api(proxy, message_id, {"confirm": True}, "?role=writer")
    assert status == 404  # outside the role bound: as if it did not exist
    status, _ = await redact_api(proxy, 999_999, {"confirm": True})
    assert status == 404
    runner = CliRunner()
    args = ["memory", "redact", "--data-dir", proxy.settings.storage.data_dir,
            str(message_id)]
    outside = runner.invoke(main, [*args, "--session", "other", "--yes"])
    assert outside.exit_code == 1 and f"no message {message_id}" in outside.output
    dry = runner.invoke(main, [*args, "--dry-run", "--json", "--role", "coder"])
    assert dry.exit_code == 0, dry.output
    assert orjson.loads(dry.output)["would_change"]["messages"] == 1
    assert message_of(proxy, RECORD)[0] == message_id
    yes = runner.invoke(main, [*args, "--yes"])
    assert yes.exit_code == 0 and f"redacted message {message_id}" in yes.output, yes.output
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text LIKE ?", "%ZEBRAQUILL%") == 0
    again = runner.invoke(main, [*args, "--yes", "--json"])
    assert again.exit_code == 0 and orjson.loads(again.stdout)["changed"]["messages"] == 0
    missing = runner.invoke(main, ["memory", "redact", "--data-dir",
                                   proxy.settings.storage.data_dir, "999999", "--yes"])
    assert missing.exit_code == 1 and "no message 999999" in missing.output


def test_a_scrubber_replaces_copies_and_keeps_the_rest() -> None:
    scrub = Scrubber([RECORD], ["Ilse Marrowfield: phone 555-0142"])
    assert scrub.scrub(f"[block] {RECORD} ok") == f"[block] {PLACEHOLDER} ok"
    assert scrub.scrub("snippet: ...the ZEBRAQUILL cluster runs on port 7411 w...") \
        == f"snippet: ...{PLACEHOLDER}..."
    assert scrub.scrub("- [#4] user said the ZEBRAQUILL cluster runs on port 7411") \
        == f"- [#4] user said {PLACEHOLDER}"
    assert scrub.scrub("The staging database runs on port 5433.") \
        == "The staging database runs on port 5433."
    assert scrub.scrub("ilse marrowfield:  phone 555-0142") == PLACEHOLDER  # an item, whole
    value = scrub.scrub_value({"messages": [{"content": f"a {RECORD}"},
                                            {"content": "cluster runs on port 7411"
                                                        " when the VPN"}]})
    assert value["messages"] == [{"content": f"a {PLACEHOLDER}"},
                                 {"content": PLACEHOLDER}]


def test_a_short_text_is_a_copy_only_as_a_whole_string() -> None:
    scrub = Scrubber(["Yes, go."])
    assert scrub.scrub("yes,  go.") == PLACEHOLDER
    assert scrub.scrub("Yes, go. I will deploy it now.") == "Yes, go. I will deploy it now."
    value = scrub.scrub_value({"messages": [{"content": "Yes, go."},
                                            {"content": "Yes, go ahead"}]})
    assert value["messages"][0]["content"] == PLACEHOLDER
    assert value["messages"][1]["content"] == "Yes, go ahead"


def test_mask_messages_copies_the_body_it_changes() -> None:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "keep"},
                                                       {"role": "user", "content": RECORD}]}
    out = mask_messages(body, frozenset({"h"}),
                        lambda m: "h" if m.get("content") == RECORD else "x")
    assert out is not None and out["messages"][1] == {"role": "user", "content": PLACEHOLDER}
    assert body["messages"][1]["content"] == RECORD  # the caller's body is untouched
    assert mask_messages(body, frozenset({"y"}), lambda m: "x") is None


async def test_a_summary_that_quoted_it_loses_the_line_and_the_thread_goes_on(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(search={"enabled": True}, compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2, "group_tokens": 100000})
    agent = Agent(proxy, upstream)
    await agent.say("Hello, I need help with a support ticket.")
    await agent.say(RECORD)
    for i in range(8):
        await agent.say(f"Step {i}: please also check the billing details " + "again " * 30)
        await proxy.settle()
    await settle(proxy)
    message_id, thread = message_of(proxy, RECORD)
    covering = store_sql(proxy.engine, "SELECT id FROM summary_nodes WHERE text LIKE ?",
                         ("%ZEBRAQUILL%",))
    assert covering, "the extractive summary must quote the record (else nothing is tested)"
    threads = n(proxy, "SELECT COUNT(*) FROM threads")

    changed = proxy.engine.redact(message_id)
    assert changed is not None and changed["summary_nodes"] >= 1
    await settle(proxy)
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    await agent.say("Please draft the reply to the customer.")
    await settle(proxy)
    assert n(proxy, "SELECT COUNT(*) FROM threads") == threads
    assert message_of(proxy, "Please draft the reply to the customer.")[1] == thread
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    # The record's turn is compacted: the upstream saw the scrubbed summary instead.
    sent = orjson.dumps(upstream.chat_requests[-1]["json"]["messages"]).decode()
    assert "[Conversation summary" in sent and "ZEBRAQUILL" not in sent
    assert "ZEBRAQUILL" not in cli_search(proxy, "ZEBRAQUILL")


async def test_a_responses_chain_row_that_holds_it_is_scrubbed_and_kept(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy()
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    async with client:
        r1 = await client.responses.create(model="m", input=[{"role": "user",
                                                              "content": RECORD}])
        r2 = await client.responses.create(model="m", previous_response_id=r1.id,
                                           input=[{"role": "user", "content": "Thanks."}])
    await proxy.settle()
    message_id, thread = message_of(proxy, RECORD)
    assert n(proxy, "SELECT COUNT(*) FROM response_threads") == 2
    changed = proxy.engine.redact(message_id)
    assert n(proxy, "SELECT COUNT(*) FROM response_threads") == 2
    assert changed is not None and changed["response_items_scrubbed"] >= 1
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    rows = [zlib.decompress(bytes(r[0])) for r in store_sql(
        proxy.engine, "SELECT items FROM response_threads")]
    assert not any(b"ZEBRAQUILL" in r for r in rows)
    # The running proxy still continues the chain (its in-memory map) on the thread.
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                  max_retries=0) as client:
        await client.responses.create(model="m", previous_response_id=r2.id,
                                      input=[{"role": "user", "content": "One more."}])
    await proxy.settle()
    assert message_of(proxy, "One more.")[1] == thread
    assert stored_copies(proxy, "ZEBRAQUILL") == {}


async def test_an_anthropic_history_resent_after_a_redaction_stays_on_its_thread(
        make_proxy: Any) -> None:
    proxy = await make_proxy()
    messages: list[dict[str, Any]] = []
    async with anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY,
                                        max_retries=0) as client:
        async def say(words: str) -> None:
            messages.append({"role": "user", "content": [{"type": "text", "text": words}]})
            sent: Any = messages  # the SDK's TypedDicts; plain dicts on the wire
            r: Any = await client.messages.create(model="claude-x", max_tokens=100,
                                                  system="You are terse.", messages=sent)
            messages.append({"role": "assistant",
                             "content": [{"type": "text", "text": r.content[0].text}]})
            await proxy.settle()

        await say(RECORD)
        await say("Which team owns this kind of ticket?")
        message_id, thread = message_of(proxy, RECORD)
        threads = n(proxy, "SELECT COUNT(*) FROM threads")
        assert proxy.engine.redact(message_id) is not None
        assert stored_copies(proxy, "ZEBRAQUILL") == {}
        await say("Please draft the reply to the customer.")
    assert n(proxy, "SELECT COUNT(*) FROM threads") == threads
    assert message_of(proxy, "Please draft the reply to the customer.")[1] == thread
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
