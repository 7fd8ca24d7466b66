"""What a redaction counts as a copy of the redacted message, and what it leaves alone.

A copy is a stretch that repeats the redacted text (:mod:`memory_core.store.scrub`):
its span is replaced in place and the rest of the row stays, so an unrelated summary
line that shares a stock phrase with it keeps its text, a forwarded body stays the
JSON it was, and a Responses API chain row is scrubbed and kept (after a restart the
chain still resolves on the same thread). Other messages that state the same text are
not redacted with it: the answer names them so the operator can redact them too.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest
from click.testing import CliRunner

from memory_core.engine import REDACTED_TTL_S
from memory_core.store.scrub import PLACEHOLDER, Scrubber
from proxy.cli import main
from tests.conftest import TEST_KEY, TEST_STORE, RunningProxy, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_injection import Agent
from tests.test_purge_thread import n, settle, start
from tests.test_redact import RECORD, message_of, redact_api, stored_copies

STOCK = "let me know if anything in the plan looks wrong"
SAID = (f"Customer record for the ticket: Ilse Marrowfield, phone 555-0142, the ZEBRAQUILL"
        f" cluster runs on port 7411 when the VPN is up, and {STOCK}.")
OTHER = f"The billing export moved to the nightly batch at 02:00, so {STOCK}."


def test_a_stock_phrase_is_no_copy_and_a_snippet_is_replaced_in_place() -> None:
    scrub = Scrubber([SAID])
    line = f"- [#7] user: {OTHER}"
    assert scrub.scrub(line) == line  # a phrase both share is not a copy of it
    assert scrub.scrub("- [#4] user said the ZEBRAQUILL cluster runs on port 7411 (ops)") \
        == f"- [#4] user said {PLACEHOLDER} (ops)"
    cut = "…ilse Marrowfield, phone 555-0142, the ZEBRAQU…"  # a snippet cut mid-word
    assert "Marrowfield" not in scrub.scrub(cut) and "ZEBRAQU" not in scrub.scrub(cut)
    # a whole sentence of it, even without names or numbers
    secret = Scrubber(["Short note. my brother has been in the hospital since the"
                       " accident last spring and nobody at work knows."])
    assert secret.scrub("Summary: my brother has been in the hospital since the accident"
                        " last spring and nobody at work knows. Then: deploy.") \
        == f"Summary: {PLACEHOLDER}. Then: deploy."
    body = {"messages": [{"role": "user", "content": SAID},
                         {"role": "user", "content": OTHER}], "n": 1}
    out = scrub.scrub_value(body)
    assert out == {"messages": [{"role": "user", "content": PLACEHOLDER},
                                {"role": "user", "content": OTHER}], "n": 1}


def test_cjk_copies_are_found_by_characters() -> None:
    said = ("王小明的电话是一三九零零零零，住在北京市朝阳区。"
            "集群在七四一一端口运行，请查看。")
    scrub = Scrubber([said])
    assert scrub.scrub("摘要：王小明的电话是一三九零零零零，住在北京市朝阳区。") \
        == f"摘要：{PLACEHOLDER}。"
    assert scrub.scrub("集群今天运行正常。") == "集群今天运行正常。"


def test_a_copy_in_ascii_escaped_json_is_not_skipped() -> None:
    # many clients send JSON with ``\\u`` escapes (Python's json.dumps): the pre-test
    # on a stored body's text must not skip a copy whose words are spelled so
    said = ("王小明的电话是一三九零零零零，住在北京市朝阳区。"
            "集群在七四一一端口运行，请查看。")
    scrub = Scrubber([said])
    body = {"messages": [{"role": "user", "content": "摘要：王小明的电话是一三九零零零零，住在北京市朝阳区。"}]}
    assert scrub.scrub_value(body) != body
    assert scrub.may_hold(json.dumps(body))
    accented = Scrubber(["Jürgen Müller wohnt in der Straße 12 in Köln, seit 2019."])
    value = {"m": "Herr Jürgen Müller wohnt in der Straße"}
    assert accented.scrub_value(value) != value and accented.may_hold(json.dumps(value))
    wide = Scrubber(["𝐀𝐥𝐩𝐡𝐚 𝐁𝐞𝐭𝐚 gamma delta epsilon zeta 4411 eta"])
    assert wide.may_hold(json.dumps({"m": "𝐀𝐥𝐩𝐡𝐚 𝐁𝐞𝐭𝐚 gamma"}))
    assert not scrub.may_hold(json.dumps({"m": "今天天气很好"}))  # no anchor either way


async def test_a_body_sent_with_ascii_escapes_loses_its_copy(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # Python's json.dumps (and clients built on it) write every non-ASCII character
    # as a \\u escape; a body memory left unchanged is stored as the client sent it
    said = "王小明的电话是一三九零零零零，住在北京市朝阳区。集群在七四一一端口运行，请查看。"
    proxy = await make_proxy(injection={"enabled": False}, tools={"enabled": False})
    upstream.push(Reply(content="好的。"))
    body = json.dumps({"model": "gpt-test", "messages": [{"role": "user", "content": said}]})
    assert "\\u" in body
    async with aiohttp.ClientSession() as s, s.post(
            f"{proxy.base_url}/chat/completions", data=body.encode(), headers={
                "Authorization": f"Bearer {TEST_KEY}",
                "Content-Type": "application/json"}) as r:
        assert r.status == 200, await r.text()
    await proxy.settle()
    message_id, _ = message_of(proxy, said)

    def bodies() -> list[str]:
        return [orjson.dumps(orjson.loads(zlib.decompress(bytes(b[0])))).decode()
                for b in store_sql(proxy.engine, "SELECT body FROM forwarded_requests"
                                   " WHERE body IS NOT NULL")]
    assert any("王小明" in b for b in bodies())  # logged, as sent
    assert proxy.engine.redact(message_id) is not None
    assert bodies() and not any("王小明" in b for b in bodies())


async def test_a_reply_whose_raw_json_keeps_a_lone_surrogate_is_scrubbed(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # a truncated emoji is kept in raw_json as an escaped lone surrogate, and an id past
    # 64 bits as written (memory_core.capture.evidence): the reply that echoed the
    # record is scrubbed all the same and keeps both as they were
    proxy = await make_proxy()
    upstream.push(Reply(content=f"Noted: {RECORD}"))
    await Agent(proxy, upstream).say(RECORD)
    await proxy.settle()
    message_id, _ = message_of(proxy, RECORD)
    raw = ('{"role":"assistant","content":' + json.dumps(f"Noted: {RECORD} \ud83d")
           + ',"trace":123456789012345678901234567890}')
    store_sql(proxy.engine, "UPDATE messages SET raw_json = ? WHERE msg_role = 'assistant'"
              " AND text = ?", (raw, f"Noted: {RECORD}"))
    assert proxy.engine.redact(message_id) is not None
    (kept,) = [str(r[0]) for r in store_sql(
        proxy.engine, "SELECT raw_json FROM messages WHERE msg_role = 'assistant'")]
    assert "ZEBRAQUILL" not in kept and PLACEHOLDER in kept
    assert "\\ud83d" in kept and "123456789012345678901234567890" in kept


async def test_an_unrelated_line_and_body_keep_their_text(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(search={"enabled": True}, compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2, "group_tokens": 100000})
    agent = Agent(proxy, upstream)
    await agent.say("Hello, I need help with a support ticket.")
    await agent.say(SAID)
    await agent.say(OTHER)
    for i in range(8):
        await agent.say(f"Step {i}: please also check the billing details " + "again " * 30)
        await proxy.settle()
    await settle(proxy)
    message_id, _ = message_of(proxy, SAID)
    lines = [line for r in store_sql(proxy.engine, "SELECT text FROM summary_nodes")
             for line in str(r[0]).split("\n") if "billing export" in line]
    assert lines and any(STOCK in line for line in lines), "no summary line to keep"
    assert stored_copies(proxy, "ZEBRAQUILL").get("summary_nodes")
    bodies = n(proxy, "SELECT COUNT(*) FROM forwarded_requests WHERE body IS NOT NULL")

    changed = proxy.engine.redact(message_id)
    assert changed is not None and changed["summary_nodes"] >= 1
    assert "forwarded_bodies_dropped" not in changed  # every body kept
    await settle(proxy)
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
    assert stored_copies(proxy, "Marrowfield") == {}
    after = [line for r in store_sql(proxy.engine, "SELECT text FROM summary_nodes")
             for line in str(r[0]).split("\n") if "billing export" in line]
    assert after == lines  # untouched, stock phrase and all
    # Every body is kept, valid JSON of the same shape, the other message whole.
    kept = [orjson.loads(zlib.decompress(bytes(r[0]))) for r in store_sql(
        proxy.engine, "SELECT body FROM forwarded_requests WHERE body IS NOT NULL")]
    assert len(kept) == bodies
    holding = [b for b in kept if any(m.get("content") == OTHER for m in b["messages"])]
    assert holding and all(any(m.get("content") == PLACEHOLDER for m in b["messages"])
                           for b in holding)


async def test_a_responses_chain_row_is_scrubbed_and_resolves_after_a_restart(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await start_proxy(upstream.base_url, data)
    try:
        async with openai.AsyncOpenAI(base_url=first.base_url, api_key=TEST_KEY,
                                      max_retries=0) as client:
            r1 = await client.responses.create(model="m", input=[{"role": "user",
                                                                  "content": RECORD}])
            r2 = await client.responses.create(model="m", previous_response_id=r1.id,
                                               input=[{"role": "user", "content":
                                                       "Goal: answer the customer today"}])
        await first.settle()
        message_id, thread = message_of(first, RECORD)
        threads = n(first, "SELECT COUNT(*) FROM threads")
        changed = first.engine.redact(message_id)
        assert changed is not None and changed["response_items_scrubbed"] >= 1
        assert n(first, "SELECT COUNT(*) FROM response_threads") == 2  # kept
        rows = [zlib.decompress(bytes(r[0])) for r in store_sql(
            first.engine, "SELECT items FROM response_threads")]
        assert not any(b"ZEBRAQUILL" in r for r in rows)
        assert any(PLACEHOLDER.encode() in r for r in rows)
    finally:
        await first.close()
    proxy = await start_proxy(upstream.base_url, data)  # a real restart: no memory map
    try:
        async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                      max_retries=0) as client:
            raw = await client.responses.with_raw_response.create(
                model="m", previous_response_id=r2.id,
                input=[{"role": "user", "content": "One more."}])
        await proxy.settle()
        # The chain resolved from the store: the whole conversation went upstream.
        assert raw.headers["x-lcm-responses-mode"] == "stateless-replay", raw.headers
        sent = orjson.dumps(upstream.responses_requests[-1]["json"]).decode()
        assert "ZEBRAQUILL" not in sent and PLACEHOLDER in sent
        assert message_of(proxy, "One more.")[1] == thread
        assert n(proxy, "SELECT COUNT(*) FROM threads") == threads
        assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ?", PLACEHOLDER) == 1
        assert stored_copies(proxy, "ZEBRAQUILL") == {}
    finally:
        await proxy.close()


async def test_a_redacted_message_of_two_parts_resolves_after_a_restart(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    # each part of the redacted message becomes the placeholder in the chain row: the
    # rebuilt message is two placeholders and still continues the redacted node
    data = tmp_path / "data"
    first = await start_proxy(upstream.base_url, data)
    parts = [{"type": "input_text", "text": RECORD},
             {"type": "input_text", "text": "Please call her back before noon today."}]
    try:
        async with openai.AsyncOpenAI(base_url=first.base_url, api_key=TEST_KEY,
                                      max_retries=0) as client:
            r1 = await client.responses.create(model="m", input=[{"role": "user",
                                                                  "content": parts}])
            r2 = await client.responses.create(model="m", previous_response_id=r1.id,
                                               input=[{"role": "user", "content":
                                                       "Goal: answer the customer today"}])
        await first.settle()
        message_id, thread = message_of(first, f"{RECORD}\nPlease call her back before"
                                        " noon today.")
        threads = n(first, "SELECT COUNT(*) FROM threads")
        assert first.engine.redact(message_id) is not None
    finally:
        await first.close()
    proxy = await start_proxy(upstream.base_url, data)
    try:
        async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                      max_retries=0) as client:
            await client.responses.create(model="m", previous_response_id=r2.id,
                                          input=[{"role": "user", "content": "One more."}])
        await proxy.settle()
        assert message_of(proxy, "One more.")[1] == thread
        assert n(proxy, "SELECT COUNT(*) FROM threads") == threads
        assert stored_copies(proxy, "ZEBRAQUILL") == {}
    finally:
        await proxy.close()


async def test_other_statements_are_named_not_redacted(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    first = Agent(proxy, upstream)
    await first.say(RECORD)
    second = Agent(proxy, upstream, system="You are the ops agent.")
    await second.say(f"Again: {RECORD}")
    await second.say("The staging database runs on port 5433.")
    await settle(proxy)
    message_id, _ = message_of(proxy, RECORD)
    elsewhere, other_thread = message_of(proxy, f"Again: {RECORD}")
    status, dry = await redact_api(proxy, message_id, {"dry_run": True})
    assert status == 200
    # the other conversation's statement (and its reply, which echoes it)
    assert dry["held_elsewhere"][0] == {"message_id": elsewhere, "thread_id": other_thread,
                                        "role": "default", "msg_role": "user"}
    assert {m["thread_id"] for m in dry["held_elsewhere"]} == {other_thread}
    assert dry["rows"]["messages"] == [message_id]
    runner = CliRunner()
    args = ["memory", "redact", "--data-dir", proxy.settings.storage.data_dir,
            str(message_id)]
    out = runner.invoke(main, [*args, "--dry-run"])
    assert out.exit_code == 0, out.output
    assert f"message {elsewhere}" in out.output and "not redacted" in out.output
    assert "summary_nodes" in out.output or "messages" in out.output
    done = runner.invoke(main, [*args, "--yes"])
    assert done.exit_code == 0 and f"message {elsewhere}" in done.output, done.output
    # Its own statement is redacted; the other thread's is the operator's to redact.
    assert message_of(proxy, f"Again: {RECORD}")[0] == elsewhere
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE id = ? AND text = ?",
             message_id, PLACEHOLDER) == 1


@pytest.mark.skipif(TEST_STORE != "sqlite", reason="SQLite reuses a purged thread's id")
async def test_a_thread_id_reused_after_a_cli_purge_is_tested_again(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # The CLI purges the newest thread and the server's next thread gets its id again
    # (SQLite reuses the largest rowid); a redaction in that new thread must reach the
    # bodies the server logs for it, whatever root it cached for the old one.
    proxy = await make_proxy()
    await Agent(proxy, upstream).say(RECORD)
    await proxy.settle()
    message_id, _ = message_of(proxy, RECORD)
    assert proxy.engine.redact(message_id) is not None  # the tenant has hashes
    await Agent(proxy, upstream, system="You help with payroll.").say(
        "Which team owns the payroll export job?")
    await proxy.settle()
    _, old = message_of(proxy, "Which team owns the payroll export job?")
    tenant = store_sql(proxy.engine, "SELECT tenant FROM messages WHERE id = ?",
                       (message_id,))[0][0]
    assert proxy.engine._redacted_for(tenant, old) is None  # its root, cached
    data_dir = proxy.settings.storage.data_dir
    runner = CliRunner()
    out = runner.invoke(main, ["memory", "purge", "--data-dir", data_dir, "--thread",
                               str(old), "--yes"])
    assert out.exit_code == 0, out.output
    said = "The escrow account for Ondrej Vasquez is 4410-2291-7781, branch Tallow Creek."
    await Agent(proxy, upstream, system="You help with banking.").say(said)
    await proxy.settle()
    new_id, new = message_of(proxy, said)
    assert new == old, "the thread id was not reused: the test tests nothing"
    out = runner.invoke(main, ["memory", "redact", "--data-dir", data_dir, str(new_id),
                               "--yes"])
    assert out.exit_code == 0, out.output
    await asyncio.sleep(REDACTED_TTL_S + 0.1)  # the server reads the meta rows again
    assert proxy.engine._redacted_for(tenant, new)


async def test_only_bodies_of_the_redacted_tree_are_tested(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy()
    agent = Agent(proxy, upstream)
    await agent.say(RECORD)
    await agent.say("Which team owns this kind of ticket?")
    other = Agent(proxy, upstream, role="ops")  # its replies echo no block of the record
    await other.say("The staging database runs on port 5433.")
    await proxy.settle()
    message_id, thread = message_of(proxy, RECORD)
    _, other_thread = message_of(proxy, "The staging database runs on port 5433.")
    tenant = store_sql(proxy.engine, "SELECT tenant FROM messages WHERE id = ?",
                       (message_id,))[0][0]
    assert proxy.engine._redacted_for(tenant, thread) is None  # nothing redacted yet
    assert proxy.engine.redact(message_id) is not None
    assert proxy.engine._redacted_for(tenant, thread)  # its tree's bodies are tested
    assert proxy.engine._redacted_for(tenant, other_thread) is None  # others' are not
    assert proxy.engine._redacted_for(tenant, None)  # a body of no known thread is
    # A branch forked after the redaction is of the same tree: its body is masked.
    agent.messages = agent.messages[:-2]
    await agent.say("Who should I escalate this ticket to?")
    await proxy.settle()
    _, fork = message_of(proxy, "Who should I escalate this ticket to?")
    assert fork != thread and proxy.engine._redacted_for(tenant, fork)
    assert RECORD in orjson.dumps(upstream.chat_requests[-1]["json"]).decode()  # as sent
    assert stored_copies(proxy, "ZEBRAQUILL") == {}
