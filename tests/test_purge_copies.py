"""What a purge and a redaction reach beyond the conversation they name.

A purged thread's text copied into another conversation (a reply that repeated it, a
summary, an assembly log, a forwarded body) is reported, and scrubbed on request
(``--scrub-copies``, ``"scrub_copies": true``), by redaction's copy rule; the other
conversation's own statements are named, never changed, and every other row stays
byte for byte. A redacted stock message ("Thanks, that works!") reaches no other
conversation's logs; a distinctive one redacted under an end user is masked in the
bodies that user's other threads forward later.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
from click.testing import CliRunner

from memory_core.store.scrub import PLACEHOLDER, Scrubber, is_distinctive
from proxy.cli import main
from tests.conftest import RunningProxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_injection import Agent
from tests.test_purge_thread import n, purge_api, start
from tests.test_redact import message_of

GONE = ("Customer record for the ticket: Ilse Marrowfield, phone 555-0142, the"
        " ZEBRAQUILL cluster runs on port 7411 when the VPN is up.")
STOCK = "Thanks, that works!"


def snapshot(proxy: RunningProxy) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """Every row of the tables a purge may scrub, by id (bodies decompressed)."""
    rows = {table: {r[0]: tuple(r[1:]) for r in store_sql(proxy.engine, sql)}
            for table, sql in (
                ("messages", "SELECT id, text, raw_json, content_hash, node_key FROM messages"),
                ("summary_nodes", "SELECT id, text FROM summary_nodes"),
                ("memory_items", "SELECT id, text FROM memory_items"),  # data: sources move
                ("assembly_logs", "SELECT id, data FROM assembly_logs"),
                ("splices", "SELECT message_id, messages FROM splices"))}
    rows["forwarded_requests"] = {
        r[0]: (zlib.decompress(bytes(r[1])) if r[1] is not None else None,)
        for r in store_sql(proxy.engine, "SELECT id, body FROM forwarded_requests")}
    return rows


def bodies_holding(proxy: RunningProxy, text: str, thread: int) -> int:
    return sum(text.encode() in zlib.decompress(bytes(r[0])) for r in store_sql(
        proxy.engine, "SELECT body FROM forwarded_requests WHERE thread_id = ? AND body IS"
        " NOT NULL", (thread,)))


def test_a_stock_message_is_not_distinctive_and_reaches_no_other_string() -> None:
    assert not is_distinctive(STOCK) and is_distinctive(GONE)
    assert is_distinctive("Call Ilse at 555-0142")
    near, far = Scrubber([STOCK]), Scrubber([STOCK], distinctive_only=True)
    assert near.scrub(STOCK) == PLACEHOLDER and far.scrub(STOCK) == STOCK
    body = {"messages": [{"role": "user", "content": STOCK}]}
    assert far.scrub_value(body) is body and near.scrub_value(body) != body
    wide = Scrubber([GONE], distinctive_only=True)
    assert wide.scrub(f"Earlier: {GONE}") == f"Earlier: {PLACEHOLDER}"


def test_many_texts_are_pretested_by_tokens() -> None:
    # a purged thread of hundreds of messages: the pre-test is one pass, and sound
    texts = [f"Note {i}: the QUILL{i} relay runs on port {7000 + i} after the upgrade."
             for i in range(300)]
    scrub = Scrubber(texts, distinctive_only=True)
    hit = '{"content": "as said: the QUILL150 relay runs on port 7150\\nok"}'
    assert scrub.may_hold(hit) and scrub.scrub("the QUILL150 relay runs on port 7150") \
        == PLACEHOLDER
    assert not scrub.may_hold('{"content": "the relay runs fine today, thanks"}')
    # a distinctive short text held verbatim, glued to a word, across a JSON newline
    glued = Scrubber([*texts, "Ilse 555-0142 ok\nsee"], distinctive_only=True)
    value = {"m": "xIlse 555-0142 ok\nseey"}
    assert glued.may_hold(orjson.dumps(value).decode())
    assert glued.scrub_value(value) == {"m": f"x{PLACEHOLDER}y"}


async def test_purge_reports_and_scrubs_copies_in_other_threads(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    gone = Agent(proxy, upstream)
    await gone.say(GONE)
    await gone.say(STOCK)
    other = Agent(proxy, upstream, system="You are the ops agent.")
    await other.say(STOCK)  # its own stock message: not a copy of the purged one
    upstream.push(Reply(content=f"From what I know: {GONE} Anything else?"))
    await other.say("Which cluster was that ticket about, and its port?")
    await other.say(f"Again, for the record: {GONE}")  # the user's own statement
    await proxy.settle()
    thread = message_of(proxy, GONE)[1]
    reply_id = int(store_sql(proxy.engine, "SELECT id FROM messages WHERE text LIKE ?",
                             ("From what I know:%",))[0][0])
    statement, other_thread = message_of(proxy, f"Again, for the record: {GONE}")
    status, dry = await purge_api(proxy, {"thread": thread, "dry_run": True})
    assert status == 200
    assert reply_id in dry["copies"]["messages"]
    assert statement in {m["message_id"] for m in dry["held_elsewhere"]}
    assert statement not in dry["copies"]["messages"]
    assert dry["removed"]["copies_found"] >= 1 and dry["removed"]["copies_scrubbed"] == 0
    assert bodies_holding(proxy, "ZEBRAQUILL", other_thread)  # the block or the history
    before = snapshot(proxy)
    # Reported only: a purge without the flag leaves every other row as it was.
    status, done = await purge_api(proxy, {"thread": thread, "dry_run": True,
                                           "scrub_copies": True})
    assert status == 200 and done["copies"] == dry["copies"]
    assert done["removed"]["copies_scrubbed"] == done["removed"]["copies_found"]
    assert snapshot(proxy) == before  # a dry run changes nothing
    status, done = await purge_api(proxy, {"thread": thread, "confirm": True,
                                           "scrub_copies": True})
    assert status == 200, done
    after = snapshot(proxy)
    scrubbed = {table: set(ids) for table, ids in done["copies"].items()}
    for table, rows in after.items():
        for ref, row in rows.items():
            if ref in scrubbed.get(table, set()):
                assert row != before[table][ref] and "ZEBRAQUILL" not in str(row)
            else:
                assert row == before[table][ref], (table, ref)  # byte-identical
    reply = store_sql(proxy.engine, "SELECT text FROM messages WHERE id = ?", (reply_id,))
    assert reply[0][0] == f"From what I know: {PLACEHOLDER} Anything else?"
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ?",
             f"Again, for the record: {GONE}") == 1
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ? AND thread_id = ?",
             STOCK, other_thread) == 1
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", thread) == 0


async def test_cli_purge_lists_copies_and_scrubs_them_on_request(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    await Agent(proxy, upstream).say(GONE)
    other = Agent(proxy, upstream, system="You are the ops agent.")
    upstream.push(Reply(content=f"Noted: {GONE}"))
    await other.say("What did the customer record say?")
    await proxy.settle()
    thread = message_of(proxy, GONE)[1]
    args = ["memory", "purge", "--data-dir", proxy.settings.storage.data_dir, "--thread",
            str(thread)]
    out = CliRunner().invoke(main, [*args, "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "copies in other threads (kept; --scrub-copies" in out.output
    out = CliRunner().invoke(main, [*args, "--yes", "--scrub-copies"])
    assert out.exit_code == 0, out.output
    assert "copies in other threads (scrubbed):" in out.output
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE text = ?",
             f"Noted: {PLACEHOLDER}") == 1


async def test_a_redacted_stock_message_leaves_other_conversations_alone(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    first = Agent(proxy, upstream)
    await first.say("The deploy script failed on step three, can you look?")
    await first.say(STOCK)
    second = Agent(proxy, upstream, system="You are the ops agent.")
    await second.say("Can you restart the worker pool?")
    await second.say(STOCK)
    await second.say("One more question about the pool size.")
    await proxy.settle()
    rows = store_sql(proxy.engine, "SELECT id, thread_id FROM messages WHERE text = ? AND"
                     " msg_role = 'user' ORDER BY id", (STOCK,))
    (message_id, thread), (_, other_thread) = rows
    held = bodies_holding(proxy, STOCK, other_thread)
    assert held and bodies_holding(proxy, STOCK, thread)
    before = snapshot(proxy)
    changed = proxy.engine.redact(message_id)
    assert changed is not None and changed["messages"] == 1
    assert bodies_holding(proxy, STOCK, other_thread) == held  # another person's own
    assert not bodies_holding(proxy, STOCK, thread)  # its own conversation's are masked
    after = snapshot(proxy)
    for ref, row in after["forwarded_requests"].items():
        if ref not in changed["rows"]["forwarded_requests"]:
            assert row == before["forwarded_requests"][ref]
    other_ids = {int(r[0]) for r in store_sql(
        proxy.engine, "SELECT id FROM messages WHERE thread_id = ?", (other_thread,))}
    assert all(after["messages"][i] == before["messages"][i] for i in other_ids)


async def test_an_end_users_later_bodies_are_masked_in_their_other_threads(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)

    def user_agent(system: str, user: str) -> Agent:
        agent = Agent(proxy, upstream, system=system)
        agent.client = agent.client.with_options(
            default_headers={"X-LCM-Role": "default", "X-LCM-User": user})
        return agent

    first = user_agent("You help with tickets.", "alice")
    await first.say(GONE)
    await first.say(STOCK)
    later = user_agent("You help with the cluster.", "alice")
    await later.say("Where does the cluster run?")
    stranger = user_agent("You help with the cluster.", "bob")
    await stranger.say("Where does the cluster run?")
    await proxy.settle()
    message_id, thread = message_of(proxy, GONE)
    stock_id = int(store_sql(proxy.engine, "SELECT id FROM messages WHERE text = ? AND"
                             " msg_role = 'user'", (STOCK,))[0][0])
    tenant = store_sql(proxy.engine, "SELECT tenant FROM messages WHERE id = ?",
                       (message_id,))[0][0]
    assert "~u_" in tenant
    assert proxy.engine.redact(stock_id) is not None
    later_thread = int(store_sql(proxy.engine, "SELECT thread_id FROM messages WHERE text"
                                 " = ? AND tenant = ?", ("Where does the cluster run?",
                                                         tenant))[0][0])
    assert proxy.engine._redacted_for(tenant, later_thread) is None  # a stock text: no
    assert proxy.engine.redact(message_id) is not None
    assert proxy.engine._redacted_for(tenant, thread)
    # The same user's client carries the record in another conversation's history
    # (pasted there after the redaction): the bodies it forwards later are masked.
    later.messages.insert(1, {"role": "user", "content": GONE})
    later.messages.insert(2, {"role": "assistant", "content": "Noted."})
    await later.say("And the port?")
    await proxy.settle()
    assert "ZEBRAQUILL" in str(upstream.chat_requests[-1]["json"])  # forwarded as sent
    newest = store_sql(proxy.engine, "SELECT body, thread_id FROM forwarded_requests"
                       " ORDER BY id DESC LIMIT 1")[0]
    sent = orjson.loads(zlib.decompress(bytes(newest[0])))["messages"]
    assert newest[1] not in (None, thread) and sent[1] == {"role": "user", "content": PLACEHOLDER}
    # … and captured as the redaction left it: the placeholder, in that thread too.
    # (the fake model's replies echo the memory block: another conversation's reply
    # that quoted it is named by the redaction, not changed)
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE tenant = ? AND msg_role = 'user'"
             " AND (text LIKE ? OR raw_json LIKE ?)", tenant, "%ZEBRAQUILL%",
             "%ZEBRAQUILL%") == 0
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE tenant = ? AND text = ? AND"
             " thread_id = ?", tenant, PLACEHOLDER, newest[1]) >= 1
    # Another end user saying the same words is another person: stored as said.
    await stranger.say(GONE)
    await proxy.settle()
    assert n(proxy, "SELECT COUNT(*) FROM messages WHERE tenant <> ? AND text = ?",
             tenant, GONE) == 1
    # Another end user's thread is another person's: not listed.
    other = store_sql(proxy.engine, "SELECT DISTINCT tenant FROM messages WHERE tenant <> ?",
                      (tenant,))
    assert all(proxy.engine._redacted_for(t[0], None) is None for t in other)
