"""The inspector at /lcm/ui: same auth as the admin API, escaped hostile text, tenant
filter; and a real render in headless Chromium (Debian's chromium driven by Playwright)
of a thread with branches, a summary forest, the last injection and its explain table.

The browser test skips, saying why, when Playwright or /usr/bin/chromium is missing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest
from aiohttp import web

from proxy.ui.html import CSP
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import ADMIN_TOKEN, KEY_A, MARK_A, MARK_B, STEADY, Populated, populate

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")  # not LCM_: settings warn
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">"\'&'


@pytest.fixture
async def guarded(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN},
                                injection=STEADY)
    yield running
    await running.close()


async def populated_with_hostile_text(proxy: RunningProxy) -> Populated:
    pop = await populate(proxy)
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0,
                           default_headers={"X-LCM-Role": "coder", "X-LCM-Session": "evil"})
    try:
        await c.chat.completions.create(model="m", messages=[
            {"role": "user", "content": f"{MARK_A} {HOSTILE}"}])
    finally:
        await c.close()
    await proxy.settle()
    return pop


async def ask_on_thread(proxy: RunningProxy, thread_id: int, text: str) -> None:
    """Continue a stored thread from its head (so its last injection has items)."""
    path = proxy.engine.thread_detail(thread_id)["messages"]
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0,
                           default_headers={"X-LCM-Role": "coder", "X-LCM-Session": "sess-a"})
    try:
        await c.chat.completions.create(model="m", messages=[
            *({"role": m["msg_role"], "content": m["text"]} for m in path),
            {"role": "user", "content": text}])
    finally:
        await c.close()
    await proxy.settle()


async def get(proxy: RunningProxy, path: str, headers: dict[str, str] | None = None,
              **query: str) -> tuple[int, str, Any]:
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + path, headers=headers, params=query,
                            allow_redirects=False) as r:
            return r.status, await r.text(), r.headers


AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def test_pages_need_the_token_and_offer_a_sign_in_form(guarded: RunningProxy) -> None:
    await populate(guarded)
    for path in ("/lcm/ui", "/lcm/ui/items", "/lcm/ui/search", "/lcm/ui/threads/1"):
        status, text, _ = await get(guarded, path)
        assert status == 401 and 'action="/lcm/ui/login"' in text and MARK_A not in text
        status, text, _ = await get(guarded, path, {"Authorization": "Bearer wrong"})
        assert status == 401 and MARK_A not in text
        status, text, headers = await get(guarded, path, AUTH, q="port")
        assert status == 200, path
        assert headers["Content-Security-Policy"] == CSP and "script-src" not in CSP
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": "wrong"},
                             allow_redirects=False) as r:
            assert r.status == 401 and "lcm_admin" not in r.cookies
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": ADMIN_TOKEN},
                             allow_redirects=False) as r:
            assert r.status == 303 and r.headers["Location"] == "/lcm/ui"
            cookie = r.cookies["lcm_admin"]
            assert cookie["httponly"] and cookie["samesite"] == "Strict"
            assert ADMIN_TOKEN not in cookie.value
        async with http.get(guarded.root + "/lcm/ui") as r:  # the cookie now signs us in
            assert r.status == 200 and MARK_A in await r.text()
        async with http.get(guarded.root + "/lcm/v1/status") as r:
            assert r.status == 401  # the cookie is for the read-only pages only


async def test_stored_text_is_escaped(guarded: RunningProxy) -> None:
    await populated_with_hostile_text(guarded)
    threads = guarded.engine.list_threads(session="evil")["threads"]
    status, text, _ = await get(guarded, f"/lcm/ui/threads/{threads[0]['id']}", AUTH)
    assert status == 200
    assert "<script>window.pwned" not in text and "<img src=x" not in text
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in text
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, q="pwned")
    assert "<script>window.pwned" not in text and "&lt;script&gt;" in text
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, q=HOSTILE)
    assert "<script>window.pwned" not in text


async def test_tenant_filter_hides_other_tenants(guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    for path in ("/lcm/ui", "/lcm/ui/items", "/lcm/ui/search"):
        status, text, _ = await get(guarded, path, AUTH, tenant=pop.tenant_a, q="port")
        assert status == 200 and MARK_B not in text and pop.tenant_b not in text, path
        assert MARK_A in text, path
    status, text, _ = await get(guarded, f"/lcm/ui/threads/{pop.threads['b']}", AUTH,
                                tenant=pop.tenant_a)
    assert status == 404 and MARK_B not in text
    status, text, _ = await get(guarded, "/lcm/ui", AUTH)
    assert pop.tenant_a in text and pop.tenant_b in text  # the operator sees every tenant


async def test_items_page_draws_supersession_chains(guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a)
    chain = text.split('<div class="chain">', 1)[1].split("</div>", 1)[0]
    assert chain.index(f"item:{pop.items['a_old']}") < chain.index(f"item:{pop.items['a_new']}")
    assert "30 s" in chain and "45 s" in chain and "superseded" in chain


def _browser_or_skip() -> Any:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; do not run "
                    "`playwright install`: the test drives Debian's chromium)")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    return async_playwright


@contextlib.asynccontextmanager
async def page_of_another_site(html: str) -> AsyncIterator[Any]:
    """A Chromium tab on ``html``, served from another origin (127.0.0.1 on a port of
    its own) for the page's whole life; skips where Chromium or playwright is missing."""
    async_playwright = _browser_or_skip()

    async def serve(_request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                tab = await browser.new_page()
                await tab.goto(f"http://127.0.0.1:{port}/")
                yield tab
            finally:
                await browser.close()
    finally:
        await runner.cleanup()


async def test_inspector_renders_a_thread_with_a_forest_in_chromium(
        guarded: RunningProxy, tmp_path: Path) -> None:
    async_playwright = _browser_or_skip()
    pop = await populated_with_hostile_text(guarded)
    thread = pop.threads["a"]
    await ask_on_thread(guarded, thread, f"{MARK_A} What API timeout applies when offline?")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(extra_http_headers=AUTH,
                                                viewport={"width": 1280, "height": 900})
            page = await context.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            resp = await page.goto(f"{guarded.root}/lcm/ui/threads/{thread}")
            assert resp is not None and resp.status == 200
            assert await page.title() == f"Thread #{thread} · lcm-proxy"
            # the forest: one L1 root with two L0 children, nested in the tree
            assert await page.locator("#forest ul.tree.top > li.node").count() == 1
            assert await page.locator(
                "#forest ul.tree.top > li.node[data-level='1'] > ul.tree > li.node"
                "[data-level='0']").count() == 2
            await page.locator("#forest summary").first.click()
            assert await page.locator("#forest details[open] pre").first.is_visible()
            # messages root → head, with the branch point where the edit forked
            assert await page.locator("div.msg").count() == 7
            branch = page.locator("div.branch")
            assert await branch.count() == 1
            assert f"thread #{pop.threads['a_fork']}" in await branch.inner_text()
            # the last injection: a budget bar inside its track, and the explain table
            bar = page.locator("div.bar > div")
            box, track = await bar.bounding_box(), await page.locator("div.bar").bounding_box()
            assert box is not None and track is not None and 0 < box["width"] <= track["width"]
            assert await page.locator("table:has(th:text('decision')) tbody tr").count() >= 1
            shot = tmp_path / "inspector-thread.png"
            await page.screenshot(path=str(shot), full_page=True)
            print(f"inspector screenshot: {shot}")
            assert shot.stat().st_size > 10_000
            # hostile text stays text, and scripts never run (CSP and escaping)
            evil = guarded.engine.list_threads(session="evil")["threads"][0]["id"]
            await page.goto(f"{guarded.root}/lcm/ui/threads/{evil}")
            assert HOSTILE in await page.locator("div.msg pre").last.inner_text()
            assert await page.evaluate("() => window.pwned === undefined") is True
            assert dialogs == []
            # the search box
            await page.goto(f"{guarded.root}/lcm/ui?tenant={pop.tenant_a}")
            await page.fill("input[name=q]", "timeout offline")
            await page.click("form.search button")
            await page.wait_for_url("**/lcm/ui/search?**")
            results = await page.locator("table tbody").inner_text()
            assert "45 s" in results and MARK_B not in results
            await page.screenshot(path=str(tmp_path / "inspector-search.png"), full_page=True)
        finally:
            await browser.close()


async def test_hostile_text_in_every_field_stays_text_on_every_page(
        guarded: RunningProxy) -> None:
    """Whatever a user of the agent can type or an app can send ends up on some page:
    message text, a speaker's ``name``, a model name, tool names and arguments, a
    decision the extractor keeps, a search query. None of it may become markup."""
    hostile = HOSTILE
    c = openai.AsyncOpenAI(base_url=guarded.base_url, api_key=KEY_A, max_retries=0,
                           default_headers={"X-LCM-Role": f"coder{hostile}",
                                            "X-LCM-Session": f"s{hostile}"})
    tool = {"type": "function", "function": {"name": f"t{hostile}"[:64], "description": hostile,
                                             "parameters": {"type": "object"}}}
    try:
        await c.chat.completions.create(model=f"gpt{hostile}", tools=[tool], messages=[
            {"role": "system", "content": f"You are {hostile}"},
            {"role": "user", "name": f"n{hostile}", "content":
             f"We decided to always deploy {hostile} on Fridays."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call{hostile}", "type": "function",
                "function": {"name": f"f{hostile}", "arguments": hostile}}]},
            {"role": "tool", "tool_call_id": f"call{hostile}", "content": hostile},
            {"role": "user", "content": f"Actually {hostile} is the port."}])
    finally:
        await c.close()
    await guarded.settle()
    thread = guarded.engine.list_threads()["threads"][0]["id"]
    items = guarded.engine.list_items()["items"]
    rid = guarded.engine.request_log(limit=1)["requests"][0]["request_id"]
    pages = ["/lcm/ui", f"/lcm/ui/threads/{thread}", "/lcm/ui/items", "/lcm/ui/requests",
             f"/lcm/ui/requests/{rid}", f"/lcm/ui/messages/{thread}"]
    pages += [f"/lcm/ui/items/{i['id']}" for i in items[:3]]
    for path, query in [(p, {}) for p in pages] + [
            ("/lcm/ui/search", {"q": hostile}), ("/lcm/ui/search", {"q": "deploy"}),
            ("/lcm/ui/items", {"text": hostile, "role": hostile}),
            ("/lcm/ui/search", {"q": "x", "mode": hostile})]:
        status, text, headers = await get(guarded, path, AUTH, **query)
        assert status in (200, 400, 404), (path, status)
        assert headers["Content-Security-Policy"] == CSP
        for raw in ("<script", "<img", 'onerror="'):
            assert raw not in text, (path, query, raw)
    status, text, _ = await get(guarded, f"/lcm/ui/requests/{rid}", AUTH)
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in text  # shown, as text
