"""End users behind one API key never see each other's memory — tests that try.

An app serving many people through one key names each person with the OpenAI
``user`` field, ``safety_identifier`` or the ``X-LCM-User`` header. Each probe runs
through the real openai SDK against the real proxy and greps what the upstream
received (the injection block), ``/memory`` answers and SQLite for the other
person's facts; a positive control checks that the owner's own memory is there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from proxy.scope import end_user, resolve_scope, tenant_for_key, user_tenant
from tests.conftest import RunningProxy, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream
from tests.reliability.test_isolation import leaks

KEY = "sk-one-app-key-0123456789"
SYS = {"role": "system", "content": "You are a helpful assistant."}
ALICE_FACT = "My locker code is 4417 and I always want answers in metric units."
QUESTION = "What is my locker code? Answer in the units I want."


@pytest.fixture(name="proxy")
async def proxy_fixture(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                injection={"capture_wait_seconds": 30})
    yield running
    await running.close()


def _client(proxy: RunningProxy, session: str, header_user: str = "") -> openai.AsyncOpenAI:
    headers = {"X-LCM-Session": session}
    if header_user:
        headers["X-LCM-User"] = header_user
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, default_headers=headers,
                              max_retries=0)


async def _say(proxy: RunningProxy, how: str, who: str, session: str, text: str) -> None:
    """One chat turn as end user ``who``, named the way ``how`` says."""
    c = _client(proxy, session, who if how == "header" else "")
    extra: dict[str, Any] = {}
    if how == "user":
        extra["user"] = who
    elif how == "safety_identifier":
        extra["safety_identifier"] = who
    try:
        await c.chat.completions.create(
            model="m", messages=[SYS, {"role": "user", "content": text}], **extra)
    finally:
        await c.close()


@pytest.mark.parametrize("how", ["user", "safety_identifier", "header"])
async def test_one_end_user_never_sees_anothers_memory(
        proxy: RunningProxy, upstream: FakeUpstream, how: str) -> None:
    await _say(proxy, how, "alice@example.com", "alice-1", ALICE_FACT)
    await proxy.settle()
    upstream.requests.clear()
    await _say(proxy, how, "bob@example.com", "bob-1", QUESTION)
    await _say(proxy, how, "alice@example.com", "alice-2", QUESTION)
    to_bob, to_alice = (r["raw"].decode() for r in upstream.chat_requests[-2:])
    assert not leaks("4417", to_bob) and "metric" not in to_bob
    assert leaks("4417", to_alice)  # the control: Alice's own memory reaches her
    # The end user's id is never stored: only its salted hash is part of the tenant.
    assert _stored_anywhere(proxy, "4417")  # the control: what was said is found
    assert not _stored_anywhere(proxy, "alice@example.com")
    assert not _stored_anywhere(proxy, "bob@example.com")


def _stored_anywhere(proxy: RunningProxy, text: str) -> bool:
    """Whether ``text`` is in the store: the bytes of the SQLite file and its WAL, or
    every text column of every table of the PostgreSQL database."""
    proxy.engine.flush()
    path = getattr(proxy.engine.store, "path", None)
    if path is not None:
        files = [p for p in path.parent.glob(path.name + "*") if p.is_file()]
        assert files
        return any(text.encode() in p.read_bytes() for p in files)
    columns = store_sql(proxy.engine, "SELECT table_name, column_name FROM"
                        " information_schema.columns WHERE table_schema = 'public'"
                        " AND data_type IN ('text', 'bytea')")
    assert columns
    return any(store_sql(proxy.engine, f"SELECT 1 FROM {t} WHERE position(? in {c}::text) > 0"
                         " LIMIT 1", (text,)) for t, c in columns)


async def test_memory_commands_of_one_end_user_miss_anothers_items(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    await _say(proxy, "user", "alice", "alice-1", ALICE_FACT)
    await proxy.settle()
    c = _client(proxy, "bob-1")
    try:
        for command in ("/memory search locker code", "/memory status"):
            r = await c.chat.completions.create(
                model="m", user="bob", messages=[{"role": "user", "content": command}])
            assert not leaks("4417", r.choices[0].message.content or ""), command
    finally:
        await c.close()


async def test_no_end_user_and_the_key_alone_are_one_scope_apart(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """Requests without an end user keep the key's tenant (existing data stays reachable);
    they do not see an end user's memory, nor an end user theirs."""
    await _say(proxy, "user", "alice", "alice-1", ALICE_FACT)
    await proxy.settle()
    upstream.requests.clear()
    await _say(proxy, "none", "", "anon-1", QUESTION)
    assert not leaks("4417", upstream.chat_requests[-1]["raw"].decode())


async def test_operator_preferences_for_the_key_reach_its_end_users(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    tenant = tenant_for_key(KEY, proxy.engine.tenant_salt)
    proxy.engine.set_agent_memory(tenant=tenant, role="default", category="user_preferences",
                                  key="answer_language", title="Language",
                                  content="Answer in plain British English.")
    await _say(proxy, "user", "carol", "carol-1", "Hello there.")
    assert "plain British English" in upstream.chat_requests[-1]["raw"].decode()


async def test_an_end_users_own_preference_overrides_the_keys(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A preference the end user set under the key the operator set for every user of
    the API key (or for every tenant) replaces it in that user's block; it stood
    beside it ("Units: metric" and "Units: imperial"), one of them wrong. Another
    end user of the key still gets the key's."""
    tenant = tenant_for_key(KEY, proxy.engine.tenant_salt)
    dave = user_tenant(tenant, "dave", proxy.engine.tenant_salt)
    for who, content in (("*", "Use SI units everywhere."), (tenant, "Units: metric."),
                         (dave, "Units: imperial.")):
        proxy.engine.set_agent_memory(tenant=who, role="default",
                                      category="user_preferences", key="units",
                                      title="Units", content=content)
    await _say(proxy, "user", "dave", "dave-1", "How far is the station?")
    sent = upstream.chat_requests[-1]["raw"].decode()
    assert "Units: imperial." in sent and "metric" not in sent and "SI units" not in sent
    await _say(proxy, "user", "erin", "erin-1", "How far is the station?")
    sent = upstream.chat_requests[-1]["raw"].decode()
    assert "Units: metric." in sent and "imperial" not in sent and "SI units" not in sent
    await _say(proxy, "none", "", "anon-2", "How far is the station?")
    sent = upstream.chat_requests[-1]["raw"].decode()
    assert "Units: metric." in sent and "SI units" not in sent


def test_end_user_id_precedence_and_tenant_shape() -> None:
    body = {"user": "u1", "safety_identifier": "s1"}
    assert end_user({"X-LCM-User": " h1 "}, body) == "h1"
    assert end_user({}, body) == "s1"
    assert end_user({}, {"user": "u1", "safety_identifier": ""}) == "u1"
    assert end_user({}, {"user": 42}) == ""
    assert end_user({}, None) == ""
    assert user_tenant("t_abc", "", "salt") == "t_abc"
    one, two = user_tenant("t_abc", "u1", "salt"), user_tenant("t_abc", "u2", "salt")
    assert one.startswith("t_abc~u_") and len(one) == len("t_abc~u_") + 16 and one != two
    # the same person behind another key is another scope
    assert user_tenant("t_def", "u1", "salt") != one
    scope = resolve_scope({"Authorization": "Bearer k"}, salt="s", body={"user": "u1"})
    assert scope.tenant == user_tenant(tenant_for_key("k", "s"), "u1", "s")


async def _say_anthropic(proxy: RunningProxy, user_id: str | None, session: str,
                         text: str) -> None:
    """One Messages turn through the real anthropic SDK, ``metadata.user_id`` set."""
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=KEY, max_retries=0,
                                      default_headers={"X-LCM-Session": session})
    extra: dict[str, Any] = {} if user_id is None else {"metadata": {"user_id": user_id}}
    try:
        await client.messages.create(model="claude-x", max_tokens=64, system=SYS["content"],
                                     messages=[{"role": "user", "content": text}], **extra)
    finally:
        await client.close()


def _messages_sent(upstream: FakeUpstream) -> list[str]:
    return [r["raw"].decode() for r in upstream.requests if r["path"] == "/v1/messages"]


async def test_anthropic_metadata_user_id_names_the_end_user(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """An app serving many people through one Anthropic key names each with
    ``metadata.user_id``: one person's memory never reaches another."""
    await _say_anthropic(proxy, "alice-7f3a", "alice-1", ALICE_FACT)
    await proxy.settle()
    await _say_anthropic(proxy, "bob-92c1", "bob-1", QUESTION)
    await _say_anthropic(proxy, "alice-7f3a", "alice-2", QUESTION)
    to_bob, to_alice = _messages_sent(upstream)[-2:]
    assert not leaks("4417", to_bob) and "metric" not in to_bob
    assert leaks("4417", to_alice)  # the control: Alice's own memory reaches her
    assert not _stored_anywhere(proxy, "alice-7f3a")


CLAUDE_CODE_IDS = [
    "user_" + "3f" * 32 + "_account__session_57a121ec-f78c-48c3-a745-e3036a3ecc33",
    '{"device_id":"' + "9c" * 32 + '","account_uuid":"","session_id":'
    '"54c1eb09-bc4c-4d2f-98eb-6d2ab2d5e2fe"}',
]


@pytest.mark.parametrize("user_id", CLAUDE_CODE_IDS)
async def test_a_coding_clients_session_id_is_no_end_user(
        proxy: RunningProxy, upstream: FakeUpstream, user_id: str) -> None:
    """Claude Code fills ``metadata.user_id`` with its installation and session: its
    requests stay the key holder's, so memory carries from session to session."""
    await _say_anthropic(proxy, user_id, "cc-1", ALICE_FACT)
    await proxy.settle()
    other = user_id.replace("57a121ec", "68b232fd").replace("54c1eb09", "65d2fc1a")
    await _say_anthropic(proxy, other, "cc-2", QUESTION)
    await _say_anthropic(proxy, None, "cc-3", QUESTION)
    for sent in _messages_sent(upstream)[-2:]:
        assert leaks("4417", sent)
    assert end_user({}, {"metadata": {"user_id": user_id}}) == ""
