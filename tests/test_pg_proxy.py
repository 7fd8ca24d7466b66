"""The proxy on PostgreSQL, end to end: the real openai SDK → a proxy whose
``storage.url`` names a database of a throwaway PostgreSQL cluster
(tests/pgcluster.py) → the fake upstream. A fact stated early is injected into a
later request's block; a proxy restarted on the same database (and a fresh data
directory: nothing of SQLite) still has it.

Skips outside CI without PostgreSQL server binaries or psycopg; fails under
``CI=true`` (tests/test_store_responsemap.py's ``pg_url``).
"""

from __future__ import annotations

from pathlib import Path

from tests import pgcluster
from tests.conftest import start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture


async def test_a_fact_survives_on_postgresql_across_a_restart(
        upstream: FakeUpstream, tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    url = pgcluster.fresh_database(pg_url, "proxy_e2e")
    storage = {"url": url}
    view = {"in_view_tokens": 0}  # repeat what is in view: a short talk has a block
    proxy = await start_proxy(upstream.base_url, tmp_path / "a", storage=storage,
                              injection=view)
    try:
        assert proxy.engine.store.location.endswith("/proxy_e2e")
        assert not (tmp_path / "a" / "lcm.sqlite3").exists()
        agent = Agent(proxy, upstream, role="ops")
        await agent.say("Hi, let's plan the data migration.")
        await agent.say("The staging database runs on port 5433 when the VPN is up.")
        for i in range(6):
            await agent.say(f"Step {i}: review changelog entry {i} and summarise it.")
        await agent.say("Which port does the staging database use?")
        block = block_of(agent.upstream_last_user())
        assert "5433" in block and "staging database" in block
        await proxy.settle()
        threads = proxy.engine.export()["threads"]
        assert len(threads) == 1 and len(threads[0]["messages"]) == 1 + 2 * 9
    finally:
        await proxy.close()

    again = await start_proxy(upstream.base_url, tmp_path / "b", storage=storage,
                              injection=view)
    try:
        assert not (tmp_path / "b" / "lcm.sqlite3").exists()
        other = Agent(again, upstream, role="ops", session="after-restart")
        await other.say("Remind me: which port does the staging database use?")
        block = block_of(other.upstream_last_user())
        assert "5433" in block and "staging database" in block
        await again.settle()
        assert again.engine.status()["counts"]["threads"] == 2
    finally:
        await again.close()
