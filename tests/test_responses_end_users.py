"""A Responses conversation continued under another end user of the same API key.

An app names its end users with ``user``, ``safety_identifier`` or ``X-LCM-User``;
each gets their own memory (docs/scopes.md). A request that continues a response
(``previous_response_id``) made under another end user of the key -- or under none,
or the reverse -- must not be lost: it is captured on the thread of the response
it continues, in that conversation's scope, and forwarded as sent, with no block,
so no end user's memory reaches a request that did not name them. The real
``openai`` SDK as client, the fake Responses upstream on loopback, a real store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from proxy.scope import tenant_for_key, user_tenant
from tests.conftest import TEST_KEY, RunningProxy, SqlRow, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream
from tests.reliability.test_isolation import leaks

INSTRUCTIONS = "You are terse."
ALICE_FACT = "My locker code is 4417 and I always want answers in metric units."
GOAL = "Goal: ship the importer by Friday"
DECISION = "Decision: use pyarrow for parsing"
QUESTION = "What is my locker code, and what did we decide for parsing?"


@pytest.fixture(name="proxy")
async def proxy_fixture(upstream: FakeUpstream, tmp_path: Path) -> Any:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                injection={"capture_wait_seconds": 30})
    yield running
    await running.close()


async def _turn(proxy: RunningProxy, text: str, prev: str | None = None, who: str = "",
                how: str = "user", **kwargs: Any) -> Any:
    """One Responses turn as end user ``who`` (none when empty), named as ``how`` says
    (``user``, ``safety_identifier`` or ``header``)."""
    headers = {"X-LCM-User": who} if who and how == "header" else {}
    extra: dict[str, Any] = {"previous_response_id": prev} if prev else {}
    if who and how != "header":
        extra[how] = who
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0,
                                  default_headers=headers) as client:
        r = await client.responses.with_raw_response.create(
            model="m", instructions=INSTRUCTIONS, input=[{"role": "user", "content": text}],
            **extra, **kwargs)
    await proxy.settle()
    return r


def _tenant(proxy: RunningProxy, who: str) -> str:
    salt = proxy.engine.tenant_salt
    return user_tenant(tenant_for_key(TEST_KEY, salt), who, salt)


def _messages(proxy: RunningProxy) -> list[SqlRow]:
    return store_sql(proxy.engine, "SELECT tenant, thread_id, msg_role, text FROM messages"
                                   " ORDER BY id")


def _said(proxy: RunningProxy, text: str) -> list[SqlRow]:
    return [m for m in _messages(proxy) if m["text"] == text]


@pytest.mark.parametrize("how", ["user", "safety_identifier", "header"])
async def test_a_turn_without_the_end_user_joins_the_owners_thread(
        proxy: RunningProxy, upstream: FakeUpstream, how: str) -> None:
    await _turn(proxy, ALICE_FACT, who="alice", how=how)
    r1 = (await _turn(proxy, GOAL, who="alice", how=how)).parse()
    raw = await _turn(proxy, DECISION, r1.id)  # the client left the end user out
    assert raw.parse().output_text == f"echo: {DECISION}"
    assert raw.headers["x-lcm-memory"] == "skipped"
    assert raw.headers["x-lcm-memory-reason"] == "other-end-user"
    sent = upstream.responses_requests[-1]
    assert sent["json"]["previous_response_id"] == r1.id  # forwarded as sent
    assert not leaks("4417", sent["raw"].decode())  # no block of Alice's memory
    # Captured: the turn and its answer, on the thread of the response it continues.
    alice = _tenant(proxy, "alice")
    goal, = _said(proxy, GOAL)
    decision, = _said(proxy, DECISION)
    answer, = _said(proxy, f"echo: {DECISION}")
    assert goal["tenant"] == decision["tenant"] == answer["tenant"] == alice
    assert goal["thread_id"] == decision["thread_id"] == answer["thread_id"]
    # Nothing of Alice's conversation was copied into the key's own scope.
    assert {m["tenant"] for m in _messages(proxy)} == {alice}
    mapped = store_sql(proxy.engine, "SELECT tenant, parent_response_id FROM response_threads"
                                     " WHERE response_id = ?", (raw.parse().id,))
    assert [(m["tenant"], m["parent_response_id"]) for m in mapped] == [(alice, r1.id)]
    # Alice goes on from that turn: her whole thread, with her memory.
    again = await _turn(proxy, QUESTION, raw.parse().id, who="alice", how=how)
    assert again.headers["x-lcm-responses-mode"] == "stateless-replay"
    replayed = upstream.responses_requests[-1]
    users = [i for i in replayed["json"]["input"] if i.get("role") == "user"]
    assert [u["content"] for u in users[:-1]] == [GOAL, DECISION]
    assert leaks("4417", replayed["raw"].decode())  # the control: her memory reaches her
    assert len({m["thread_id"] for m in _messages(proxy)
                if m["text"] in (GOAL, DECISION, QUESTION)}) == 1


async def test_an_end_user_continuing_the_keys_response_gets_no_memory_of_theirs(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    await _turn(proxy, ALICE_FACT, who="alice")
    r1 = (await _turn(proxy, GOAL)).parse()  # no end user: the key's own scope
    raw = await _turn(proxy, QUESTION, r1.id, who="alice")
    assert raw.headers["x-lcm-memory-reason"] == "other-end-user"
    assert not leaks("4417", upstream.responses_requests[-1]["raw"].decode())
    key = _tenant(proxy, "")
    question, = _said(proxy, QUESTION)
    goal, = _said(proxy, GOAL)
    assert question["tenant"] == key and question["thread_id"] == goal["thread_id"]


async def test_another_end_user_continuing_a_response_gets_none_of_the_owners_memory(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    await _turn(proxy, ALICE_FACT, who="alice")
    r1 = (await _turn(proxy, GOAL, who="alice")).parse()
    raw = await _turn(proxy, QUESTION, r1.id, who="bob", stream=False)
    assert raw.headers["x-lcm-memory-reason"] == "other-end-user"
    assert not leaks("4417", upstream.responses_requests[-1]["raw"].decode())
    question, = _said(proxy, QUESTION)
    assert question["tenant"] == _tenant(proxy, "alice")
    assert _tenant(proxy, "bob") not in {m["tenant"] for m in _messages(proxy)}
    # Bob's own later conversation sees nothing of Alice's either.
    await _turn(proxy, QUESTION, who="bob")
    assert not leaks("4417", upstream.responses_requests[-1]["raw"].decode())


async def test_a_streamed_turn_without_the_end_user_is_captured(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    r1 = (await _turn(proxy, GOAL, who="alice")).parse()
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY,
                                  max_retries=0) as client:
        stream = await client.responses.create(
            model="m", instructions=INSTRUCTIONS, previous_response_id=r1.id,
            input=[{"role": "user", "content": DECISION}], stream=True)
        events = [e async for e in stream]
    await proxy.settle()
    done = [e.response for e in events if e.type == "response.completed"]
    assert done and done[0].previous_response_id == r1.id
    goal, = _said(proxy, GOAL)
    answer, = _said(proxy, f"echo: {DECISION}")
    assert answer["thread_id"] == goal["thread_id"]
    assert answer["tenant"] == _tenant(proxy, "alice")


async def test_a_conversation_continued_without_the_end_user_stays_on_one_thread(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """The same for a ``conversation`` (the upstream keeps its items): a turn in it
    from another of the key's scopes joins the conversation's thread, in its scope."""
    conv = {"id": "conv_end_users"}
    await _turn(proxy, ALICE_FACT, who="alice")
    await _turn(proxy, GOAL, who="alice", conversation=conv)
    raw = await _turn(proxy, DECISION, conversation=conv)  # no end user
    assert raw.headers["x-lcm-memory-reason"] == "conversation"
    assert not leaks("4417", upstream.responses_requests[-1]["raw"].decode())
    alice = _tenant(proxy, "alice")
    goal, = _said(proxy, GOAL)
    decision, = _said(proxy, DECISION)
    assert decision["tenant"] == alice and decision["thread_id"] == goal["thread_id"]
    await _turn(proxy, QUESTION, who="alice", conversation=conv)
    question, = _said(proxy, QUESTION)
    assert question["thread_id"] == goal["thread_id"]
    assert {m["tenant"] for m in _messages(proxy)} == {alice}
