"""Tenants (API keys) and roles never see each other's evidence, items, preferences,
summaries or search results — tests that try.

The store is populated through the real SDK by ``tests.test_admin_support.populate``:
tenant A (``KEY_A``) with roles ``coder`` and ``writer``, tenant B (``KEY_B``) with
``coder``; items, preferences and a summary forest. Every probe then asks as B (or as
A's other role) for A/coder's data in every way we offer — the injection block the
upstream receives, ``/memory`` commands with guessed ids, the admin API with a tenant
filter, and the search service itself — and greps the answers for A/coder's facts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
import numpy as np
import openai
import pytest

from proxy.handlers import admin
from proxy.scope import tenant_for_key
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_admin_support import (  # noqa: F401 - fixtures: proxy, sdk
    KEY_A,
    KEY_B,
    MARK_A,
    MARK_B,
    Populated,
    count,
    populate,
    sdk_fixture,
    steady_proxy_fixture,
)

SYS = {"role": "system", "content": "You are a helpful agent."}
A_CODER_ONLY = ("5433", "45 s", "30 s", "black, 100 columns", "ledger", "billing", "VPN",
                "L0 summary", "L1 summary")
"""Strings that exist only in tenant A / role coder (facts, preference, summaries)."""


def leaks(secret: str, text: str) -> bool:
    """``secret`` occurs in ``text`` as its own token: not inside a hex tenant id
    ("t_f0dc54b6e543362e" holds "5433") or a timestamp, which are random."""
    return re.search(rf"(?<![0-9A-Za-z.]){re.escape(secret)}(?![0-9A-Za-z])", text) is not None
PROBE = (f"{MARK_A} what is the staging database port, the API timeout when offline, the"
         " code style, the migration plan, and the prose style?")
"""A question worded like A/coder's facts, so keyword and vector retrieval both fire."""


@pytest.fixture
async def pop(proxy: RunningProxy) -> Populated:
    return await populate(proxy)


async def ask(c: openai.AsyncOpenAI, text: str, history: list[dict[str, Any]] | None = None
              ) -> str:
    r = await c.chat.completions.create(
        model="m", messages=[SYS, *(history or []), {"role": "user", "content": text}])
    return r.choices[0].message.content or ""


def owner(proxy: RunningProxy, kind: str, ref: int) -> tuple[str, str]:
    """(tenant, role) owning a search hit, read from SQLite."""
    table = {"message": "messages", "item": "memory_items", "summary": "summary_nodes",
             "agent_memory": "agent_memories"}[kind]
    row = sql_read(proxy.engine, lambda c: c.execute(
        f"SELECT tenant, role FROM {table} WHERE id=?", (ref,)).fetchone())
    assert row is not None, (kind, ref)
    return str(row[0]), str(row[1])


# -- the injection block -------------------------------------------------------------------
@pytest.mark.parametrize("who", ["other tenant", "other role"])
async def test_the_block_never_carries_another_scopes_memory(
        proxy: RunningProxy, sdk: Any, upstream: FakeUpstream, pop: Populated, who: str
) -> None:
    c = sdk(KEY_B, "coder", "probe") if who == "other tenant" else sdk(KEY_A, "writer", "probe")
    own = "tabs, 80 columns" if who == "other tenant" else "prose style is plain"
    # Two turns: a bootstrap turn, then a regular one in the same thread.
    first = await ask(c, PROBE)
    await ask(c, PROBE + " Again, please.", [{"role": "user", "content": PROBE},
                                             {"role": "assistant", "content": first}])
    for sent in upstream.chat_requests[-2:]:
        body = sent["raw"].decode()
        for secret in A_CODER_ONLY:
            assert not leaks(secret, body), (who, secret)
        assert own in body  # the block was injected, from the caller's own scope
    assert MARK_B not in body if who == "other role" else True


async def test_identical_text_in_two_tenants_stays_two_histories(
        proxy: RunningProxy, sdk: Any, upstream: FakeUpstream) -> None:
    same = [SYS, {"role": "user", "content": "Shared opening line, word for word."}]
    a, b = sdk(KEY_A, "coder"), sdk(KEY_B, "coder")
    reply_a = await ask(a, same[1]["content"])
    reply_b = await ask(b, same[1]["content"])
    # Same first turn, then a private fact in each tenant.
    await ask(a, "The vault code is 7781.", [same[1], {"role": "assistant", "content": reply_a}])
    await ask(b, "The vault code is 1234.", [same[1], {"role": "assistant", "content": reply_b}])
    await proxy.settle()
    upstream.requests.clear()
    await ask(b, "What is the vault code?")
    assert "7781" not in upstream.chat_requests[0]["raw"].decode()
    salt = proxy.engine.tenant_salt
    ta, tb = tenant_for_key(KEY_A, salt), tenant_for_key(KEY_B, salt)
    for tenant in (ta, tb):
        # the shared opening is stored once per tenant, under that tenant's own thread
        assert count(proxy, "SELECT COUNT(*) FROM messages WHERE tenant=? AND text=?", tenant,
                     same[1]["content"]) == 1
    assert count(proxy, "SELECT COUNT(*) FROM messages m JOIN threads t ON t.id=m.thread_id"
                 " WHERE m.tenant != t.tenant OR m.role != t.role") == 0
    assert count(proxy, "SELECT COUNT(*) FROM messages c JOIN messages p ON p.id=c.parent_id"
                 " WHERE c.tenant != p.tenant OR c.role != p.role") == 0


async def test_tenant_cannot_be_chosen_by_header(proxy: RunningProxy, upstream: FakeUpstream,
                                                 pop: Populated) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.base_url + "/chat/completions", json={
                "model": "m", "messages": [SYS, {"role": "user", "content": PROBE}]},
                headers={"Authorization": f"Bearer {KEY_B}", "X-LCM-Role": "coder",
                         "X-LCM-Tenant": pop.tenant_a, "X-Tenant": pop.tenant_a,
                         "api-key": KEY_A}) as r:
            assert r.status == 200
    body = upstream.chat_requests[-1]["raw"].decode()
    assert not any(leaks(s, body) for s in A_CODER_ONLY)
    assert "tabs, 80 columns" in body


# -- /memory commands ------------------------------------------------------------------------
async def test_commands_with_guessed_ids_never_touch_another_scope(
        proxy: RunningProxy, sdk: Any, pop: Populated) -> None:
    b = sdk(KEY_B, "coder", "sess-b")
    top = count(proxy, "SELECT MAX(id) FROM memory_items")
    before = sql_read(proxy.engine, lambda c: dict(c.execute(
        "SELECT id, status FROM memory_items").fetchall()))
    for item_id in range(1, top + 3):
        reply = await ask(b, f"/memory retract {item_id} guessing")
        if item_id != pop.items["b_port"]:
            assert f"no memory item {item_id}" in reply, reply
    after = sql_read(proxy.engine, lambda c: dict(c.execute(
        "SELECT id, status FROM memory_items").fetchall()))
    changed = {i for i in before if before[i] != after[i]}
    assert changed == {pop.items["b_port"]}  # only B's own item
    for query in (MARK_A, "staging database port 5433", "timeout offline", "black columns",
                  "ledger migration", "prose style"):
        found = await ask(b, f"/memory search {query}")
        hits = "\n".join(found.split("\n")[1:])  # the first line echoes the query
        assert MARK_A not in hits and "5433" not in hits, query
    status = await ask(b, "/memory status")
    assert pop.tenant_a not in status and pop.tenant_b in status


# -- admin API with a tenant filter -------------------------------------------------------------
async def test_admin_reads_by_guessed_id_stay_in_the_filtered_tenant(
        proxy: RunningProxy, pop: Populated) -> None:
    limits = {name: count(proxy, f"SELECT MAX(id) FROM {table}") + 2 for name, table in
              (("thread_id", "threads"), ("item_id", "memory_items"),
               ("message_id", "messages"))}
    routes = [p for m, p, _ in admin.ROUTES if m == "GET" and "{" in p]
    assert routes
    async with aiohttp.ClientSession() as http:
        for path in routes:
            name = path.rsplit("{", 1)[1].rstrip("}")
            for ident in range(1, limits[name]):
                url = proxy.root + path.replace("{" + name + "}", str(ident))
                for tenant, role in ((pop.tenant_b, None), (pop.tenant_a, "writer")):
                    params = {"tenant": tenant, **({"role": role} if role else {})}
                    async with http.get(url, params=params) as r:
                        text = await r.text()
                        assert r.status in (200, 404), (url, r.status)
                        for secret in A_CODER_ONLY:
                            assert not leaks(secret, text), (url, params, secret)
                        if r.status == 200:
                            got = await r.json()
                            assert got.get("tenant", tenant) == tenant, (url, params)
        # retract by guessed id through B's filter: only B's item can change
        for ident in range(1, limits["item_id"]):
            async with http.post(f"{proxy.root}/lcm/v1/items/{ident}/retract",
                                 params={"tenant": pop.tenant_b}, json={}) as r:
                assert r.status == (200 if ident == pop.items["b_port"] else 404), ident
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE status='retracted'") == 1


# -- the search service ---------------------------------------------------------------------
async def test_search_service_returns_only_the_callers_scope(proxy: RunningProxy,
                                                             pop: Populated) -> None:
    service = proxy.engine.search
    assert service is not None
    await proxy.settle()
    texts = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT text FROM messages WHERE tenant=? AND role='coder' UNION ALL"
        " SELECT text FROM memory_items WHERE tenant=? AND role='coder' UNION ALL"
        " SELECT text FROM summary_nodes WHERE tenant=? AND role='coder'",
        (pop.tenant_a, pop.tenant_a, pop.tenant_a))])
    assert len(texts) >= 8
    emb = service.embedder
    for tenant, role in ((pop.tenant_b, "coder"), (pop.tenant_a, "writer")):
        for text in [*texts, MARK_A, "port*", "*"]:
            for mode in ("hybrid", "bm25", "vector"):
                vec = (np.asarray(emb.embed([text])[0], dtype=np.float32)
                       if mode == "vector" and emb is not None else None)
                hits = service.search(tenant, role, text, k=50, mode=mode, query_vector=vec)
                for h in hits:
                    assert owner(proxy, h.kind, h.ref_id) == (tenant, role), (text, mode, h)
        # the engine's own keyword search (memory_search tool, /memory search, admin)
        for h in proxy.engine.search_memory(PROBE, tenant=tenant, role=role, limit=100):
            kind = "message" if h["kind"] == "message" else "item"
            assert owner(proxy, kind, h["id"]) == (tenant, role)
    # a control: A/coder finds its own facts through the same calls
    own = service.search(pop.tenant_a, "coder", "staging database port", k=10, mode="bm25")
    assert own and all(owner(proxy, h.kind, h.ref_id)[0] == pop.tenant_a for h in own)


# -- the memory tools the model calls ------------------------------------------------------------
async def test_memory_tools_answer_only_from_the_callers_scope(
        proxy: RunningProxy, sdk: Any, upstream: FakeUpstream, pop: Populated) -> None:
    """The model (our fake upstream) asks, as B, for every message id that exists and
    searches for A/coder's facts; every tool result the proxy feeds back is B's."""
    top = count(proxy, "SELECT MAX(id) FROM messages")
    calls = [{"id": f"v{i}", "name": "view_message", "arguments": f'{{"message_id": {i}}}'}
             for i in range(1, top + 2)]
    calls += [
        {"id": "g1", "name": "memory_grep", "arguments": '{"query": "ALPHAMARK"}'},
        {"id": "g2", "name": "memory_grep", "arguments": '{"query": "port*"}'},
        {"id": "s1", "name": "memory_search",
         "arguments": '{"query": "staging database port timeout offline"}'},
        {"id": "h1", "name": "view_chat_history_summary", "arguments": "{}"},
    ]
    upstream.push(Reply(content=None, tool_calls=calls), Reply(content="done"))
    b = sdk(KEY_B, "coder", "tools-probe")
    assert await ask(b, PROBE) == "done"
    rounds = upstream.chat_requests[-2:]
    assert any(t["function"]["name"] == "view_message"
               for t in rounds[0]["json"].get("tools", []))  # the tools were offered
    results = [m for m in rounds[1]["json"]["messages"] if m.get("role") == "tool"]
    assert len(results) == len(calls)
    answers = [json.loads(m["content"]) for m in results]
    seen = "\n".join(json.dumps({k: v for k, v in a.items() if k != "query"})
                     for a in answers)  # a search echoes its own query
    for secret in (*A_CODER_ONLY, "prose style is plain"):  # (B's own probe names MARK_A)
        assert not leaks(secret, seen), secret
    assert "6380" in seen  # B's own facts are found: the tools did run
    own = {m["tool_call_id"]: m["content"] for m in results}
    assert "BRAVOMARK" in own[f"v{pop.messages['b']}"]
    assert '"error"' in own[f"v{pop.messages['a']}"]
