"""Many replicas, one memory (issue 27, build item 3): two proxies with their own
data directories on one throwaway PostgreSQL (tests/pgcluster.py), the real openai
SDK, the fake upstream. Agents of two tenants talk at once, each turn going to the
other replica than the one before: every conversation is stored once, in order; no
two summary nodes cover one range; a fact stated to one replica is in the other's
block on the next turn; an agent memory written through one is injected by the
other; no tenant sees another's facts; each replica indexes everything from its own
checkpoints, reusing the message vectors the other stored.

Skips outside CI without PostgreSQL server binaries or psycopg; fails under
``CI=true`` (tests/test_store_responsemap.py's ``pg_url``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai
import orjson
import psycopg

from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.replica import replica_id
from memory_core.store.pg import PgStore
from proxy.scope import tenant_for_key
from tests import pgcluster
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_injection import block_of
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

COMPACTION = {"min_tokens": 500, "min_turns": 2, "tail_turns": 2, "group_tokens": 1000,
              "consolidation_k": 2, "summary_tokens": 120}
KEYS = ("sk-tenant-one-0123456789", "sk-tenant-two-0123456789")
TURNS = 14


class Agent:
    """Resends its whole history each turn; turn ``n`` goes to replica ``n % 2``."""

    def __init__(self, n: int, key: str, replicas: list[RunningProxy]) -> None:
        self.n, self.key = n, key
        self.clients = [openai.AsyncOpenAI(base_url=r.base_url, api_key=key, max_retries=0,
                                           default_headers={"X-LCM-Session": f"s{n}"})
                        for r in replicas]
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": f"You are agent number {n}."}]
        self.code = f"{n + 3}{n + 7}{n + 1}9"
        self.turn = 0

    async def say(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        client = self.clients[self.turn % 2]
        self.turn += 1
        r = await client.chat.completions.create(model="m", messages=self.messages)
        self.messages.append({"role": "assistant", "content": r.choices[0].message.content})


def _filler(n: int, i: int) -> str:
    return (f"Step {i} for agent {n}: review the migration notes of module {i}, compare"
            f" them with the runbook, list every open question about module {i}, and"
            " write down which team owns each remaining task before the release.")


def _requests_of(upstream: FakeUpstream, agent: Agent) -> list[str]:
    marker = f"You are agent number {agent.n}."
    return [r["raw"].decode() for r in upstream.chat_requests if marker in r["raw"].decode()]


async def test_two_replicas_share_one_memory(upstream: FakeUpstream, tmp_path: Path,
                                             pg_url: str) -> None:  # noqa: F811
    url = pgcluster.fresh_database(pg_url, "replicas")
    sections: dict[str, dict[str, Any]] = {
        "storage": {"url": url}, "compaction": COMPACTION,
        "injection": {"in_view_tokens": 0}}
    a = await start_proxy(upstream.base_url, tmp_path / "a", **sections)
    b = await start_proxy(upstream.base_url, tmp_path / "b", **sections)
    replicas = [a, b]
    try:
        agents = [Agent(n, KEYS[n % 2], replicas) for n in range(4)]

        async def talk(agent: Agent) -> None:
            await agent.say("Hello, let us plan the release together.")
            # Stated to replica 1 (turn 1), asked of replica 0 on the next turn.
            await agent.say(f"The deploy code for agent {agent.n} is {agent.code}.")
            await agent.say(f"What is the deploy code for agent {agent.n}?")
            last = orjson.loads(_requests_of(upstream, agent)[-1])["messages"][-1]["content"]
            assert agent.code in block_of(last)
            for i in range(TURNS):
                await agent.say(_filler(agent.n, i))

        await asyncio.gather(*(talk(x) for x in agents))
        for r in replicas:
            await r.settle()

        # An agent memory written through replica a is injected by replica b.
        tenant = tenant_for_key(KEYS[0], a.engine.tenant_salt)
        assert tenant == tenant_for_key(KEYS[0], b.engine.tenant_salt)
        a.engine.set_agent_memory(tenant=tenant, role="default", category="user_preferences",
                                  key="answer_language", title="Language",
                                  content="Answer in plain British English.")
        first = agents[0]
        first.turn = 1  # the next turn goes to replica b
        await first.say("Please summarise where we are.")
        assert "plain British English" in _requests_of(upstream, first)[-1]
        third = agents[1]  # the other tenant: never
        third.turn = 1
        await third.say("Please summarise where we are.")
        assert "plain British English" not in _requests_of(upstream, third)[-1]
        for r in replicas:
            await r.settle()

        # No leak across tenants: an agent's requests never carry another tenant's code.
        for agent in agents:
            others = [x.code for x in agents if x.key != agent.key]
            for raw in _requests_of(upstream, agent):
                assert not any(code in raw for code in others)

        # Every conversation stored once, in order, on one path: what the agent sent.
        threads = a.engine.export()["threads"]
        assert len(threads) == len(agents)
        stored = sorted(([(m["message"]["role"], m["message"]["content"])
                          for m in t["messages"]] for t in threads),
                        key=lambda ms: ms[0][1])
        sent = sorted(([(m["role"], m["content"]) for m in x.messages] for x in agents),
                      key=lambda ms: ms[0][1])
        assert stored == sent

        # Compaction ran, and once per range.
        for r in replicas:  # a compaction the other replica ran queued index work
            await r.settle()
        with psycopg.connect(url) as conn:
            nodes = conn.execute("SELECT thread_id, level, message_ids FROM summary_nodes"
                                 ).fetchall()
            points = dict(conn.execute("SELECT name, value FROM checkpoints WHERE name"
                                       " LIKE 'index%%'").fetchall())
            head = conn.execute("SELECT MAX(id) FROM index_outbox").fetchone()
        assert len(nodes) >= len(agents)
        assert len(set(nodes)) == len(nodes)

        # Each replica indexed everything from checkpoints of its own.
        ids = {replica_id(tmp_path / "a"), replica_id(tmp_path / "b")}
        assert len(ids) == 2
        assert head is not None
        for rid in ids:
            assert points[f"index_text@{rid}"] >= head[0]
            assert points[f"index_vector@{rid}"] >= head[0]
        assert "index_text" not in points
        # A replica started later builds its indexes from the shared outbox and
        # reuses the message vectors stored there: it embeds only the other kinds
        # (items, memories, summaries, whose text may change under one id).
        c = await start_proxy(upstream.base_url, tmp_path / "c", **sections)
        replicas.append(c)
        await c.settle()
        indexer = c.engine.search.indexer
        assert indexer.embedded_texts > 0 and indexer.embedded_kinds.get("message", 0) == 0
        for r in replicas:
            assert r.engine.index_lag()["indexers"]["index_text"]["lag"] == 0
            hits = await asyncio.to_thread(r.engine.search.search, tenant, "default",
                                           "deploy code")
            assert hits
    finally:
        for r in replicas:
            await r.close()


def test_the_store_lock_excludes_other_processes_only(pg_url: str) -> None:  # noqa: F811
    url = pgcluster.fresh_database(pg_url, "replica_lock")
    one, two = PgStore(url), PgStore(url)
    try:
        with one.exclusive(7) as first:
            assert first
            with two.exclusive(7) as second:
                assert not second
            with two.exclusive(8) as other:
                assert other
        with two.exclusive(7) as again:
            assert again
    finally:
        one.close()
        two.close()


async def test_a_memory_tool_round_of_one_replica_is_shown_by_the_other(
        upstream: FakeUpstream, tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """Replica a answers a turn with a hidden memory_grep round; the next turn, served
    by replica b, shows the model that round in place (the splice written by a)."""
    url = pgcluster.fresh_database(pg_url, "replica_splices")
    sections: dict[str, dict[str, Any]] = {"storage": {"url": url},
                                           "tools": {"offer": "always"}}
    a = await start_proxy(upstream.base_url, tmp_path / "a", **sections)
    b = await start_proxy(upstream.base_url, tmp_path / "b", **sections)
    try:
        ca, cb = (openai.AsyncOpenAI(base_url=r.base_url, api_key=KEYS[0], max_retries=0)
                  for r in (a, b))
        history: list[Any] = [
            {"role": "system", "content": "You are the ops agent."},
            {"role": "user", "content": "The Grafana dashboard id is GRF-7781 for billing."}]
        r = await ca.chat.completions.create(model="m", messages=history)
        history.append({"role": "assistant", "content": r.choices[0].message.content})
        await a.settle()
        history.append({"role": "user", "content": "Which dashboard was it again?"})
        upstream.push(Reply(content=None, tool_calls=[{
            "id": "call_1", "name": "memory_grep", "arguments": orjson.dumps(
                {"query": "GRF-7781", "start_time": None, "end_time": None,
                 "limit": None}).decode()}]), Reply(content="It is GRF-7781."))
        r = await ca.chat.completions.create(model="m", messages=history)
        assert r.choices[0].message.content == "It is GRF-7781."
        await a.settle()
        history += [{"role": "assistant", "content": "It is GRF-7781."},
                    {"role": "user", "content": "thanks"}]
        await cb.chat.completions.create(model="m", messages=history)
        seen = upstream.chat_requests[-1]["json"]["messages"]
        roles = [m["role"] for m in seen]
        assert "tool" in roles
        i = roles.index("tool")
        assert seen[i - 1]["tool_calls"][0]["function"]["name"] == "memory_grep"
        assert seen[i + 1]["content"] == "It is GRF-7781."
    finally:
        for p in (a, b):
            await p.close()


def test_a_thread_compacts_on_one_replica_at_a_time(tmp_path: Path,
                                                    pg_url: str) -> None:  # noqa: F811
    """While another replica holds a thread's compaction lock, a due compaction here
    skips (no summarizer call, no node); once released, it runs."""
    url = pgcluster.fresh_database(pg_url, "replica_compact")
    one = Engine(tmp_path / "one", MemoryConfig(store_url=url))
    two = Engine(tmp_path / "two", MemoryConfig(store_url=url))
    scope = Scope("t", "default")
    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        for i in range(40):
            history.append({"role": "user", "content": f"turn {i}: fix item {i * 7} " * 20})
            history.append({"role": "assistant", "content": f"done with item {i * 7}. " * 15})
        ticket, fut = one.capture_request(scope, "r", history, {})
        ids = list(fut.result(30).message_ids)
        thread = ticket.result.thread_id  # type: ignore[union-attr]
        with two.store.exclusive(thread) as held:
            assert held
            assert one.compact(scope, thread, ids) == []
        created = one.compact(scope, thread, ids)
        assert created
        assert two.compact(scope, thread, ids) == []  # nothing left due: the nodes seen
    finally:
        one.close()
        two.close()
