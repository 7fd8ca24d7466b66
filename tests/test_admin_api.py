"""The admin HTTP API under /lcm/v1/: auth, every route on a populated store, tenant and
role isolation of every read, retract and purge in SQLite, OpenAPI coverage."""

from __future__ import annotations

import hmac
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import make_mocked_request

from memory_core.tools.commands import REPLY_HEADER, is_command_exchange
from proxy import __version__, openapi
from proxy.errors import UnauthorizedError
from proxy.handlers import access, admin
from tests.conftest import RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import (
    ADMIN_TOKEN,
    KEY_A,
    MARK_A,
    MARK_B,
    STEADY,
    Populated,
    chat,
    client,
    count,
    populate,
)

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
async def guarded(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    """A proxy with an admin token configured."""
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN},
                                injection=STEADY)
    yield running
    await running.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(http: aiohttp.ClientSession, proxy: RunningProxy, method: str, path: str,
               *, headers: dict[str, str] | None = None, json: Any = None,
               **query: Any) -> tuple[int, Any, str]:
    params = {k: str(v) for k, v in query.items() if v is not None}
    async with http.request(method, proxy.root + path, headers=headers or AUTH, json=json,
                            params=params) as r:
        text = await r.text()
        body = await r.json(content_type=None) if "json" in r.content_type else None
        return r.status, body, text


def concrete(path: str, pop: Populated) -> str:
    return (path.replace("{thread_id}", str(pop.threads["a"]))
            .replace("{item_id}", str(pop.items["a_port"]))
            .replace("{message_id}", str(pop.messages["a"]))
            .replace("{role}", "coder").replace("{key}", "code_style"))


# -- OpenAPI -------------------------------------------------------------------------
def test_every_route_is_documented_and_every_documented_route_exists() -> None:
    doc = openapi.document("x")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    routed = {(m, p) for m, p, _ in admin.ROUTES}
    assert routed == documented
    assert doc["openapi"] == "3.1.0"
    for path, ops in doc["paths"].items():
        names = set(re.findall(r"{(\w+)}", path))
        for op in ops.values():
            in_path = {p["name"] for p in op["parameters"] if p["in"] == "path"}
            assert in_path == names, path


async def test_openapi_is_served_without_a_token(guarded: RunningProxy,
                                                 http: aiohttp.ClientSession) -> None:
    status, body, _ = await call(http, guarded, "GET", "/lcm/v1/openapi.json", headers={})
    assert status == 200 and body["info"]["version"] == __version__
    assert "/lcm/v1/purge" in body["paths"]


# -- auth ------------------------------------------------------------------------------
async def test_every_admin_route_requires_the_token(guarded: RunningProxy,
                                                    http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    for method, path, _ in admin.ROUTES:
        if path.endswith("openapi.json"):
            continue
        url = concrete(path, pop)
        for headers in ({"X-Nothing": "1"}, {"Authorization": "Bearer wrong-token"},
                        {"Authorization": ADMIN_TOKEN}):
            status, body, _ = await call(http, guarded, method, url, headers=headers,
                                         json={"confirm": True, "tenant": pop.tenant_b})
            assert status == 401, (method, url, headers)
            assert body["error"]["type"] == "authentication_error"
            assert set(body["error"]) == {"message", "type", "param", "code"}
        # the right token clears this address's wrong ones (else 429 after ten)
        assert (await call(http, guarded, "GET", "/lcm/v1/status"))[0] == 200
    # nothing was purged by the refused calls
    assert count(guarded, "SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_b) > 0


async def test_the_token_is_compared_in_constant_time(
        guarded: RunningProxy, http: aiohttp.ClientSession,
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    assert (await call(http, guarded, "GET", "/lcm/v1/status"))[0] == 200
    assert (await call(http, guarded, "GET", "/lcm/v1/status",
                       headers={"Authorization": "Bearer nope"}))[0] == 401
    assert (b"nope", ADMIN_TOKEN.encode()) in seen
    assert (ADMIN_TOKEN.encode(), ADMIN_TOKEN.encode()) in seen


async def test_without_a_token_loopback_is_served(proxy: RunningProxy,
                                                  http: aiohttp.ClientSession) -> None:
    status, body, _ = await call(http, proxy, "GET", "/lcm/v1/status", headers={})
    assert status == 200 and body["schema_version"] >= 2


async def test_without_a_token_a_foreign_host_header_is_refused(
        proxy: RunningProxy, http: aiohttp.ClientSession) -> None:
    # DNS rebinding: a page on evil.example resolved to 127.0.0.1.
    status, body, _ = await call(http, proxy, "GET", "/lcm/v1/status",
                                 headers={"Host": "evil.example:8787"})
    assert status == 403 and body["error"]["type"] == "permission_error"


@pytest.mark.parametrize("forwarded", [
    {"X-Forwarded-For": "203.0.113.9"}, {"Forwarded": "for=203.0.113.9"},
    {"X-Real-IP": "203.0.113.9"}, {"X-Forwarded-Host": "memory.example.com"}])
async def test_without_a_token_a_request_relayed_by_a_local_proxy_is_refused(
        proxy: RunningProxy, http: aiohttp.ClientSession, forwarded: dict[str, str]) -> None:
    """A reverse proxy on this machine (nginx's default keeps ``Host`` at the address it
    forwards to) makes every client of the internet a loopback peer with a loopback
    ``Host``. Its forwarding header gives it away: without a token that is no local
    operator."""
    for path in ("/lcm/v1/status", "/lcm/ui"):
        async with http.get(proxy.root + path, headers=forwarded) as r:
            assert r.status == 403, (path, await r.text())
    status, _, _ = await call(http, proxy, "GET", "/lcm/v1/status", headers={})
    assert status == 200  # the operator's own curl still works


def _mocked(peer: tuple[str, int], token: str, headers: dict[str, str] | None = None) -> Any:
    from unittest import mock

    from proxy.appkeys import AUTH_THROTTLE, SETTINGS
    from proxy.settings import load_settings
    from proxy.throttle import FailureThrottle

    settings = load_settings(None, environ={}, overrides={"proxy": {"admin_token": token}})
    state = {SETTINGS: settings, AUTH_THROTTLE: FailureThrottle()}
    app = mock.MagicMock()
    app.__getitem__.side_effect = state.get
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (
        peer if name == "peername" else default)
    return make_mocked_request("GET", "/lcm/v1/status", headers={"Host": "127.0.0.1:8787",
                                                                 **(headers or {})},
                               app=app, transport=transport)


@pytest.mark.parametrize("peer,allowed", [
    (("127.0.0.1", 5000), True), (("::1", 5000, 0, 0), True),
    (("::ffff:127.0.0.1", 5000, 0, 0), True), (("10.1.2.3", 5000), False),
    (("192.168.0.7", 5000), False), (("2001:db8::1", 5000, 0, 0), False),
])
def test_without_a_token_only_loopback_peers_pass(peer: tuple[Any, ...], allowed: bool) -> None:
    request = _mocked(peer, "")
    if allowed:
        access.require_admin(request)
    else:
        with pytest.raises(access.AdminForbiddenError):
            access.require_admin(request)


def test_forwarded_headers_do_not_make_a_remote_peer_local() -> None:
    request = _mocked(("10.9.9.9", 1), "", {"X-Forwarded-For": "127.0.0.1",
                                            "Forwarded": "for=127.0.0.1"})
    with pytest.raises(access.AdminForbiddenError):
        access.require_admin(request)


def test_with_a_token_a_remote_peer_with_the_token_passes() -> None:
    access.require_admin(_mocked(("10.1.2.3", 1), "tok", {"Authorization": "Bearer tok"}))
    with pytest.raises(UnauthorizedError):
        access.require_admin(_mocked(("127.0.0.1", 1), "tok"))  # loopback is not enough


async def test_posts_need_json_and_no_foreign_origin(guarded: RunningProxy,
                                                     http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    url = guarded.root + "/lcm/v1/purge"
    async with http.post(url, headers={**AUTH, "Content-Type": "text/plain"},
                         data=f'{{"confirm": true, "tenant": "{pop.tenant_b}"}}') as r:
        assert r.status == 400 and (await r.json())["error"]["code"] == "json_required"
    async with http.post(url, headers={**AUTH, "Origin": "http://evil.example"},
                         json={"confirm": True, "tenant": pop.tenant_b}) as r:
        assert r.status == 403
    assert count(guarded, "SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_b) > 0


# -- every route on a populated store ---------------------------------------------------------
async def test_read_routes_answer_on_a_populated_store(guarded: RunningProxy,
                                                       http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/status", tenant=pop.tenant_a,
                             role="coder")
    assert st == 200 and body["scope"]["counts"]["threads"] == 2
    assert body["scope"]["counts"]["summary_nodes"] == 3
    index = body["index"]
    assert 0 <= index["indexers"]["index_text"]["lag"] <= index["outbox_head"] > 0
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/tenants")
    assert {t["tenant"] for t in body["tenants"]} == {pop.tenant_a, pop.tenant_b}
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/threads", tenant=pop.tenant_a,
                             role="coder")
    assert st == 200 and {t["id"] for t in body["threads"]} == {pop.threads["a"],
                                                                pop.threads["a_fork"]}
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/threads/{pop.threads['a']}")
    assert st == 200 and [m["msg_role"] for m in body["messages"]] == [
        "system", "user", "assistant", "user", "assistant"]
    fork_at = body["messages"][2]
    assert body["branch_points"] == [fork_at["id"]] and fork_at["children"] == 2
    assert fork_at["forks"] == [pop.threads["a_fork"]]
    assert fork_at["alternatives"][0]["thread_id"] == pop.threads["a_fork"]
    assert [n["level"] for n in body["summaries"]] == [1]
    assert [c["level"] for c in body["summaries"][0]["children"]] == [0, 0]
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/items", tenant=pop.tenant_a,
                             role="coder")
    assert [pop.items["a_old"], pop.items["a_new"]] in body["chains"]
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/items/{pop.items['a_new']}")
    assert st == 200 and body["supersedes_chain"][0]["id"] == pop.items["a_old"]
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/messages/{pop.messages['a']}")
    assert st == 200 and MARK_A in body["message"]["content"]
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q="timeout offline")
    assert st == 200 and body["hits"][0]["ref"] == f"item:{pop.items['a_new']}"
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search")
    assert st == 400 and body["error"]["param"] == "q"
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/explain", tenant=pop.tenant_a,
                             role="coder")
    assert st == 200 and body["trigger"] in ("bootstrap", "regular")
    assert body["data"]["included"] and body["used_tokens"] <= body["budget_tokens"]
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/explain", tenant="t_nobody")
    assert st == 404
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/export", tenant=pop.tenant_b,
                             events=1)
    assert st == 200 and len(body["threads"]) == 1 and body["events"]
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/threads/999999")
    assert st == 404 and body["error"]["type"] == "not_found_error"
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/threads/abc")
    assert st == 404
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/threads", limit="x")
    assert st == 400


async def test_tenant_filter_isolates_every_read(guarded: RunningProxy,
                                                 http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    reads = [path for m, path, _ in admin.ROUTES if m == "GET" and "openapi" not in path]
    for tenant, own, other, other_tenant in ((pop.tenant_a, MARK_A, MARK_B, pop.tenant_b),
                                             (pop.tenant_b, MARK_B, MARK_A, pop.tenant_a)):
        for path in reads:
            url = concrete(path, pop)
            st, body, text = await call(http, guarded, "GET", url, tenant=tenant,
                                        q="port timeout staging production cache",
                                        events=1)
            assert other not in text and other_tenant not in text, (tenant, url)
            if path.endswith(("/threads", "/items", "/search", "/export", "/preferences")):
                assert own in text, (tenant, url)  # the filter shows the tenant's own data
            if tenant == pop.tenant_a:
                assert st == 200, (url, text[:300])
            else:  # A's thread/item/message ids do not exist for B
                assert st == 200 or (st == 404 and "{" in path), (url, st)
        # B's objects are invisible through A's filter, even by id
    for path in (f"/lcm/v1/threads/{pop.threads['b']}", f"/lcm/v1/items/{pop.items['b_port']}",
                 f"/lcm/v1/messages/{pop.messages['b']}"):
        st, body, text = await call(http, guarded, "GET", path, tenant=pop.tenant_a)
        assert st == 404 and MARK_B not in text


async def test_role_filter_isolates_reads(guarded: RunningProxy,
                                          http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    for path in ("/lcm/v1/threads", "/lcm/v1/items", "/lcm/v1/search", "/lcm/v1/export",
                 "/lcm/v1/preferences", "/lcm/v1/explain", "/lcm/v1/status"):
        st, body, text = await call(http, guarded, "GET", path, tenant=pop.tenant_a,
                                    role="writer", q="port staging timeout prose")
        assert st == 200, path
        if isinstance(body, dict):
            body.pop("query", None)  # the search echoes the query itself
        seen = str(body)
        assert "staging" not in seen and "timeout" not in seen and MARK_B not in seen, path
    st, _, _ = await call(http, guarded, "GET", f"/lcm/v1/items/{pop.items['a_port']}",
                          role="writer")
    assert st == 404


async def test_search_leaves_out_memory_commands_as_in_chat(
        guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    c = client(guarded, KEY_A, "coder", "sess-a")
    try:
        reply = await chat(c, [{"role": "user", "content": f"/memory search {MARK_A} port"}])
    finally:
        await c.close()
    await guarded.settle()
    stored = guarded.engine.search_memory(f"{MARK_A} port", tenant=pop.tenant_a, limit=100)
    assert sum(is_command_exchange(h["text"]) for h in stored) == 2  # command and reply
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q=f"{MARK_A} port",
                             tenant=pop.tenant_a, limit=100)
    assert st == 200 and body["hits"]
    assert not any(is_command_exchange(h["text"]) for h in body["hits"])
    # The in-chat answer is the same hybrid search in the same scope: its best hit
    # leads, and all it lists is found (ranks further down may swap: the command
    # exchange stored since then shifts the words' BM25 weights).
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q=f"{MARK_A} port",
                             tenant=pop.tenant_a, role="coder", limit=100)
    api = [h["ref"] for h in body["hits"]]
    in_chat = [line.split()[0] for line in reply.splitlines()[1:]]
    assert body["mode"] == "hybrid" and in_chat[0] == api[0] and set(in_chat) <= set(api)
    st, body, text = await call(http, guarded, "GET", "/lcm/v1/search",
                                q="lcm-proxy memory search", tenant=pop.tenant_a)
    assert st == 200 and REPLY_HEADER not in text.replace(body["query"], "")


async def test_search_narrows_to_a_session(guarded: RunningProxy,
                                           http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q=MARK_A,
                             session="sess-w", limit=100)
    assert st == 200 and body["hits"] and {h["role"] for h in body["hits"]} == {"writer"}
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q=MARK_A,
                             tenant=pop.tenant_a, session="sess-a", limit=100)
    refs = [h["ref"] for h in body["hits"]]
    assert f"item:{pop.items['a_port']}" in refs and f"item:{pop.items['w_style']}" not in refs
    st, body, text = await call(http, guarded, "GET", "/lcm/v1/search", q="port cache",
                                tenant=pop.tenant_a, session="sess-b")
    assert st == 200 and body["hits"] == [] and MARK_B not in text


# -- writes ---------------------------------------------------------------------------------
async def test_retract_changes_status_and_queues_an_index_delete(
        guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    item = pop.items["a_port"]
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{pop.items['b_port']}"
                             "/retract", json={"reason": "x"}, tenant=pop.tenant_a)
    assert st == 404  # another tenant's item, through a tenant-scoped call
    assert count(guarded, "SELECT COUNT(*) FROM memory_items WHERE id=? AND status='active'",
                 pop.items["b_port"]) == 1
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{item}/retract",
                             json={"reason": "wrong port"}, tenant=pop.tenant_a)
    assert st == 200 and body == {"id": item, "old_status": "active"}
    assert count(guarded, "SELECT COUNT(*) FROM memory_items WHERE id=? AND"
                 " status='retracted'", item) == 1
    assert count(guarded, "SELECT COUNT(*) FROM memory_item_revisions WHERE item_id=? AND"
                 " reason='wrong port'", item) == 1
    assert count(guarded, "SELECT COUNT(*) FROM index_outbox WHERE kind='item' AND ref_id=?"
                 " AND op='delete'", item) == 1
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q="staging port 5433",
                             tenant=pop.tenant_a)
    assert st == 200 and f"item:{item}" not in [h["ref"] for h in body["hits"]]
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/items/{item}", tenant=pop.tenant_a)
    assert st == 200 and body["status"] == "retracted"  # still inspectable, for audit


async def test_restore_sets_a_superseded_or_retracted_item_active_again(
        guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    old, new, port = pop.items["a_old"], pop.items["a_new"], pop.items["a_port"]
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{old}/restore",
                             json={}, tenant=pop.tenant_b)
    assert st == 404  # another tenant's item
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{old}/restore",
                             json={"reason": "not a correction"}, tenant=pop.tenant_a)
    assert st == 200 and body == {"id": old, "old_status": "superseded"}
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/items/{old}", tenant=pop.tenant_a)
    assert body["status"] == "active" and body["superseded_by"] is None
    st, body, _ = await call(http, guarded, "GET", f"/lcm/v1/items/{new}", tenant=pop.tenant_a)
    assert body["status"] == "active"  # what superseded it stays
    assert count(guarded, "SELECT COUNT(*) FROM memory_item_revisions WHERE item_id=? AND"
                 " new='active' AND reason='not a correction'", old) == 1
    # an active item: 409 in the API's error shape, nothing changes
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{old}/restore", json={})
    assert st == 409 and body["error"]["type"] == "conflict_error", body
    assert set(body["error"]) == {"message", "type", "param", "code"}
    # retracted, then restored: indexed again after the delete
    await call(http, guarded, "POST", f"/lcm/v1/items/{port}/retract", json={})
    st, body, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{port}/restore", json={})
    assert st == 200 and body == {"id": port, "old_status": "retracted"}
    assert count(guarded, "SELECT COUNT(*) FROM index_outbox WHERE kind='item' AND ref_id=?"
                 " AND op='upsert' AND id > (SELECT max(id) FROM index_outbox WHERE"
                 " kind='item' AND ref_id=? AND op='delete')", port, port) == 1
    await guarded.settle()
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/search", q="staging port 5433",
                             tenant=pop.tenant_a)
    assert f"item:{port}" in [h["ref"] for h in body["hits"]]


async def test_a_restored_item_is_current_in_the_next_block_not_called_superseded(
        guarded: RunningProxy, upstream: FakeUpstream, http: aiohttp.ClientSession) -> None:
    """Restoring a_old (superseded by a_new, which stays active) makes it current: the
    next block lists it, and a_new's line no longer says it corrects a superseded
    value, which would tell the model that a current item is history."""
    pop = await populate(guarded)
    old = pop.items["a_old"]
    st, _, _ = await call(http, guarded, "POST", f"/lcm/v1/items/{old}/restore", json={},
                          tenant=pop.tenant_a)
    assert st == 200
    c = client(guarded, KEY_A, "coder", "sess-a")
    try:
        await chat(c, [{"role": "user", "content": f"{MARK_A} What is the API timeout when"
                        " offline?"}])
    finally:
        await c.close()
    sent = upstream.chat_requests[-1]["json"]["messages"]
    block = next(m["content"] for m in sent if "[Memory]" in str(m["content"]))
    memory = block.split("[Memory]", 1)[1]
    assert f"{MARK_A} API timeout is 30 s when offline" in memory, memory
    assert f"{MARK_A} API timeout is 45 s when offline" in memory, memory
    assert "superseded" not in memory, memory


@pytest.mark.parametrize("method,path", [
    ("GET", "/lcm/v1/items/{n}"), ("GET", "/lcm/v1/messages/{n}"),
    ("GET", "/lcm/v1/threads/{n}"), ("POST", "/lcm/v1/items/{n}/retract"),
    ("POST", "/lcm/v1/items/{n}/restore"),
])
@pytest.mark.parametrize("n", ["99999999999999999999999", str(1 << 63), "0"])
async def test_ids_no_row_can_have_are_404_not_500(
        guarded: RunningProxy, http: aiohttp.ClientSession, method: str, path: str,
        n: str) -> None:
    st, body, _ = await call(http, guarded, method, path.format(n=n),
                             json={} if method == "POST" else None)
    assert st == 404, body
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == "not_found_error"
    st, body, _ = await call(http, guarded, method, path.format(n=(1 << 63) - 1),
                             json={} if method == "POST" else None)
    assert st == 404 and body["error"]["type"] == "not_found_error"  # largest id: looked up


async def test_purge_needs_confirmation_and_removes_the_session(
        guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge", json={"session": "sess-b"})
    assert st == 400 and body["error"]["code"] == "confirmation_required"
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge", json={"confirm": True})
    assert st == 400 and body["error"]["code"] == "missing_filter"
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"session": "sess-b", "dry_run": True})
    assert st == 200 and body["dry_run"] and body["removed"]["messages"] == 3
    assert count(guarded, "SELECT COUNT(*) FROM messages WHERE session='sess-b'") == 3
    # a tenant-bounded purge of B's session from tenant A's filter removes nothing
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"session": "sess-b", "confirm": True}, tenant=pop.tenant_a)
    assert st == 200 and body["removed"]["messages"] == 0
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"tenant": pop.tenant_b, "confirm": True},
                             tenant=pop.tenant_a)
    assert st == 403
    # the role query parameter bounds a purge as it bounds every read
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"session": "sess-b", "dry_run": True}, role="no-such-role")
    assert st == 200 and body["removed"]["messages"] == 0
    assert body["filters"] == {"session": "sess-b", "role": "no-such-role"}
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"role": "other", "confirm": True}, role="no-such-role")
    assert st == 403
    msg_ids = sql_read(guarded.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM messages WHERE session='sess-b'")])
    st, body, _ = await call(http, guarded, "POST", "/lcm/v1/purge",
                             json={"session": "sess-b", "confirm": True})
    assert st == 200 and body["removed"]["messages"] == 3 and body["removed"]["threads"] == 1
    for table in ("messages", "threads", "memory_items"):
        assert count(guarded, f"SELECT COUNT(*) FROM {table} WHERE tenant=?", pop.tenant_b) == 0
    deleted = sql_read(guarded.engine, lambda c: {r[0] for r in c.execute(
        "SELECT ref_id FROM index_outbox WHERE kind='message' AND op='delete'")})
    assert set(msg_ids) <= deleted
    assert count(guarded, "SELECT COUNT(*) FROM messages WHERE tenant=?", pop.tenant_a) > 0


async def test_preferences_crud(guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    pop = await populate(guarded)
    path = "/lcm/v1/preferences/coder/answer_language"
    st, body, _ = await call(http, guarded, "PUT", path, tenant=pop.tenant_a,
                             json={"title": "Answer language", "content": "English"})
    assert st == 200 and body["created"] and body["tenant"] == pop.tenant_a
    st, body, _ = await call(http, guarded, "PUT", path, tenant=pop.tenant_a,
                             json={"title": "Answer language", "content": "English, brief"})
    assert st == 200 and not body["created"]
    st, body, _ = await call(http, guarded, "PUT", "/lcm/v1/preferences/coder/answer_lang",
                             tenant=pop.tenant_a, json={"title": "Answer lang", "content": "x"})
    assert st == 409 and "answer_language" in body["error"]["message"]
    st, body, _ = await call(http, guarded, "PUT", path, tenant=pop.tenant_a,
                             json={"content": "x" * 501})
    assert st == 400
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/preferences", tenant=pop.tenant_a)
    keys = {(p["key"], p["content"]) for p in body["preferences"]}
    assert ("answer_language", "English, brief") in keys and MARK_B not in str(keys)
    st, body, _ = await call(http, guarded, "GET", "/lcm/v1/preferences", tenant=pop.tenant_b)
    assert "answer_language" not in str(body)
    st, body, _ = await call(http, guarded, "DELETE", path, tenant=pop.tenant_a)
    assert st == 200 and body["deleted"]
    st, body, _ = await call(http, guarded, "DELETE", path, tenant=pop.tenant_a)
    assert st == 404
    st, body, _ = await call(http, guarded, "PUT", "/lcm/v1/preferences/coder/tone",
                             json={"title": "Tone", "content": "calm"})
    assert st == 200 and body["tenant"] == "*"  # no tenant filter: every tenant


# -- observability --------------------------------------------------------------------------
async def test_metrics_expose_the_operator_series(guarded: RunningProxy,
                                                  http: aiohttp.ClientSession) -> None:
    await populate(guarded)
    async with http.get(guarded.root + "/lcm/metrics") as r:
        assert r.status == 200  # no token needed for Prometheus
        text = await r.text()
    for name in ("lcm_requests_total", "lcm_upstream_latency_seconds_bucket",
                 "lcm_stage_latency_seconds_bucket", "lcm_injection_tokens_bucket",
                 "lcm_injected_items_total", "lcm_tool_rounds_total",
                 "lcm_client_disconnects_total", "lcm_memory_outcomes_total",
                 'lcm_compactions_total{mode="background"}'):
        assert name in text, name
    lag = re.search(r'lcm_index_lag\{indexer="index_text"\} ([\d.e+]+)', text)
    assert lag is not None
    assert 0 <= float(lag.group(1)) <= count(guarded, "SELECT COUNT(*) FROM index_outbox")
    injected = re.search(r'lcm_memory_outcomes_total\{outcome="injected"\} (\d+)', text)
    assert injected is not None and float(injected.group(1)) >= 1
    n_obs = re.search(r"lcm_injection_tokens_count (\d+)", text)
    assert n_obs is not None and float(n_obs.group(1)) == float(injected.group(1))


async def test_admin_answers_are_never_cached_nor_sniffed(guarded: RunningProxy,
                                                          http: aiohttp.ClientSession) -> None:
    """Every ``/lcm/`` answer (exports of stored conversations, errors, probes) says
    ``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff``, as the
    inspector's pages do: no browser or cache in between keeps a copy of memory."""
    await populate(guarded)
    for path, headers in (("/lcm/v1/export", AUTH), ("/lcm/v1/items", AUTH),
                          ("/lcm/v1/items/999999", AUTH), ("/lcm/v1/status", {}),
                          ("/lcm/health", {}), ("/lcm/ui/nope", AUTH)):
        async with http.get(guarded.root + path, headers=headers) as r:
            await r.read()
            assert r.headers.get("Cache-Control") == "no-store", (path, r.status)
            assert r.headers.get("X-Content-Type-Options") == "nosniff", path
    async with http.get(guarded.root + "/lcm/ui", headers=AUTH) as r:
        assert r.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
    async with http.get(guarded.base_url + "/models") as r:  # pass-through: untouched
        assert "X-Content-Type-Options" not in r.headers


async def test_health_shows_the_data_dir_to_an_admin_only(
        guarded: RunningProxy, upstream: FakeUpstream, tmp_path: Path,
        http: aiohttp.ClientSession) -> None:
    """``/lcm/health`` needs no token (probes), so it must not tell anyone where the
    conversations are kept: the data dir is shown to a request the admin API serves."""
    for headers in ({"X": "1"}, {"Authorization": "Bearer not-the-token"}):
        status, body, text = await call(http, guarded, "GET", "/lcm/health", headers=headers)
        assert status == 200 and body["status"] == "ok" and body["version"] == __version__
        assert "data_dir" not in body and str(tmp_path) not in text
    status, body, _ = await call(http, guarded, "GET", "/lcm/health", headers=AUTH)
    assert status == 200 and body["data_dir"] == str(tmp_path / "data")
    # without a token, a loopback client with a loopback Host is the admin; one a
    # reverse proxy relayed is not
    open_proxy = await start_proxy(upstream.base_url, tmp_path / "open", injection=STEADY)
    try:
        status, body, _ = await call(http, open_proxy, "GET", "/lcm/health", headers={"X": "1"})
        assert status == 200 and body["data_dir"] == str(tmp_path / "open")
        status, body, _ = await call(http, open_proxy, "GET", "/lcm/health",
                                     headers={"X-Forwarded-For": "203.0.113.9"})
        assert status == 200 and "data_dir" not in body
    finally:
        await open_proxy.close()


async def test_a_probe_with_a_stray_token_never_locks_out_the_admin_api(
        guarded: RunningProxy, http: aiohttp.ClientSession) -> None:
    """``/lcm/health`` reads a bearer token (to show the data dir) and counted a wrong
    one against the address: a probe sending some other key (a client's API key)
    locked the admin API and the inspector's sign-in out of that address, while its
    own answers stayed 200. Its wrong tokens now count apart."""
    stray = {"Authorization": "Bearer sk-a-client-key-not-the-admin-token"}
    for _ in range(30):  # three times the throttle's failures
        status, body, _ = await call(http, guarded, "GET", "/lcm/health", headers=stray)
        assert status == 200 and "data_dir" not in body
    status, _, text = await call(http, guarded, "GET", "/lcm/v1/tenants", headers=AUTH)
    assert status == 200, text
    # health's own count still throttles guessing there: the right token shows nothing now
    status, body, _ = await call(http, guarded, "GET", "/lcm/health", headers=AUTH)
    assert status == 200 and "data_dir" not in body
