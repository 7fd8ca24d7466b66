"""The inspector's request view (the exact body each upstream received, beside the
explain table), request log, item paging and filters, corrections, search links and
modes, and retract with CSRF protection; rendered in headless Chromium with
screenshots (tests.test_ui launches it).

The forwarded body is compared byte for byte with what the fake upstream received.
"""

from __future__ import annotations

import asyncio
import os
import re
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from memory_core.capture import forwarded
from memory_core.items import writer as memory
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import (
    ADMIN_TOKEN,
    KEY_A,
    MARK_A,
    MARK_B,
    STEADY,
    Populated,
    count,
    fake_item,
    populate,
)
from tests.test_ui import AUTH, CHROMIUM, CHROMIUM_ARGS, _browser_or_skip, ask_on_thread, get

SHOTS = Path(os.environ.get("LCM_UI_SHOTS", "/tmp"))


@pytest.fixture
async def guarded(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN}, injection=STEADY)
    yield running
    await running.close()


def forwarded_rows(proxy: RunningProxy) -> list[dict[str, Any]]:
    return sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM forwarded_requests ORDER BY id")])


async def test_the_recorded_body_is_the_upstreams_bytes(guarded: RunningProxy,
                                                        upstream: FakeUpstream) -> None:
    pop = await populate(guarded)
    before = len(upstream.chat_requests)
    await ask_on_thread(guarded, pop.threads["a"], f"{MARK_A} What API timeout applies"
                        " when offline?")
    sent = upstream.chat_requests[before:]
    assert len(sent) == 1
    row = forwarded_rows(guarded)[-1]
    # the tool loop's body (memory tools added) and the rewrite: both exactly as sent
    assert zlib.decompress(row["body"]) == sent[0]["raw"]
    assert row["state"] == "injected" and row["tools_added"] == 1
    assert row["body_bytes"] == len(sent[0]["raw"]) and row["client_bytes"] > 0
    fw = guarded.engine.forwarded(row["request_id"], tenant=pop.tenant_a)
    assert fw is not None and fw["assembly"] is not None and fw["status"] == 200
    assert fw["latency_s"] is not None and fw["latency_s"] >= 0
    assert guarded.engine.forwarded(row["request_id"], tenant=pop.tenant_b) is None
    # every request of populate was recorded, each with its tenant
    assert {r["tenant"] for r in forwarded_rows(guarded)} == {pop.tenant_a, pop.tenant_b}
    # the page marks scaffold, block and tail, lists the tools and shows the explain
    status, text, _ = await get(guarded, f"/lcm/ui/requests/{row['request_id']}", AUTH)
    assert status == 200
    assert 'data-part="scaffold"' in text and 'data-part="acknowledgement"' in text
    assert 'data-block=1' in text and "[Current Request]" in text
    assert text.count('class="tool"') == len(sent[0]["json"]["tools"]) >= 1
    assert "decision" in text and "45 s" in text
    assert MARK_B not in text
    scaffold = text.split('data-part="scaffold"', 1)[1].split("</div></div>", 1)[0]
    assert "L1 summary" in scaffold


async def test_retention_size_limit_and_purge(upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "data", injection=STEADY,
                              capture={"keep_forwarded_requests": 2,
                                       "forwarded_body_max_kib": 16})
    try:
        c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0)
        for i in range(4):
            await c.chat.completions.create(model="m", messages=[
                {"role": "user", "content": f"question {i} " + ("x" * 20000 if i == 3 else "")}])
        await c.close()
        await proxy.settle()
        rows = forwarded_rows(proxy)
        assert len(rows) == 2  # the newest two of this tenant
        assert rows[-1]["body"] is None and rows[-1]["body_omitted"] == 1
        assert rows[-1]["body_bytes"] > 20000
        assert rows[0]["body"] is not None and b"question 2" in zlib.decompress(rows[0]["body"])
        status, text, _ = await get(proxy, f"/lcm/ui/requests/{rows[-1]['request_id']}")
        assert status == 200 and "was not kept" in text
        removed = proxy.engine.purge(tenant=rows[0]["tenant"])
        assert removed["forwarded_requests"] == 2 and forwarded_rows(proxy) == []
    finally:
        await proxy.close()


async def test_secrets_are_masked_and_zero_keeps_nothing(upstream: FakeUpstream,
                                                         tmp_path: Path) -> None:
    secret = "sk-proj-" + "A1b2C3d4" * 5
    proxy = await start_proxy(upstream.base_url, tmp_path / "data", injection=STEADY)
    try:
        c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0)
        await c.chat.completions.create(model="m", messages=[
            {"role": "user", "content": f"my key is {secret}"}])
        await proxy.settle()
        row = forwarded_rows(proxy)[-1]
        body = zlib.decompress(row["body"])
        assert secret.encode() not in body and b"[REDACTED:openai_key]" in body
        assert row["redacted"] == 1
        assert secret.encode() in upstream.chat_requests[-1]["raw"]  # the upstream had it
        status, text, _ = await get(proxy, f"/lcm/ui/requests/{row['request_id']}")
        assert "secrets in this body are masked" in text
        await c.close()
    finally:
        await proxy.close()
    off = await start_proxy(upstream.base_url, tmp_path / "off", injection=STEADY,
                            capture={"keep_forwarded_requests": 0})
    try:
        c = openai.AsyncOpenAI(base_url=off.base_url, api_key=KEY_A, max_retries=0)
        await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await c.close()
        await off.settle()
        assert forwarded_rows(off) == []
    finally:
        await off.close()


async def test_a_failing_recorder_never_fails_the_chat(proxy: RunningProxy,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(proxy.engine, "record_forwarded", broken)
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0)
    r = await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    await c.close()
    assert r.choices[0].message.content
    async with aiohttp.ClientSession() as http, http.get(proxy.root + "/lcm/metrics") as m:
        assert 'lcm_fail_open_total{stage="forward_log"} 1.0' in await m.text()


async def test_request_log_lists_latency_model_tokens_and_memory(guarded: RunningProxy
                                                                 ) -> None:
    pop = await populate(guarded)
    await ask_on_thread(guarded, pop.threads["a"], f"{MARK_A} What API timeout applies"
                        " when offline?")
    status, text, _ = await get(guarded, "/lcm/ui/requests", AUTH, tenant=pop.tenant_a)
    assert status == 200 and MARK_B not in text and pop.tenant_b not in text
    rows = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr>")[1:]
    total = count(guarded, "SELECT COUNT(*) FROM forwarded_requests WHERE tenant=?",
                  pop.tenant_a)
    assert len(rows) == total >= 4
    newest = rows[0]
    assert re.search(r"\d+ ms", newest) and ">m<" in newest and "injected" in newest
    assert re.search(r"block \d+/\d+ tokens, \d+ items", newest)
    assert "messages compacted" in newest and "memory tools offered" in newest
    status, text, _ = await get(guarded, "/lcm/ui/requests", AUTH, tenant=pop.tenant_a,
                                limit="2")
    assert f"rows 1–2 of {total}" in text and "next →" in text


async def test_budget_bar_and_section_table_agree(guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    await ask_on_thread(guarded, pop.threads["a"], f"{MARK_A} What API timeout applies"
                        " when offline?")
    status, text, _ = await get(guarded, f"/lcm/ui/threads/{pop.threads['a']}", AUTH)
    used = int(re.search(r'aria-valuenow="(\d+)"', text).group(1))  # type: ignore[union-attr]
    table = text.split("<table class=sections>", 1)[1].split("</table>", 1)[0]
    cells = [int(x) for x in re.findall(r"<td>(-?\d+)</td></tr>", table)]
    assert cells[-1] == used and sum(cells[:-1]) == used  # rows add up to the bar's figure
    assert f"{used} / " in text


async def many_items(proxy: RunningProxy, pop: Populated, n: int) -> None:
    scope = Scope(pop.tenant_a, "coder", "sess-a")

    def job(tx: Any) -> None:
        for i in range(n):
            kind = "decision" if i % 3 == 0 else "fact"
            memory.store_extracted(tx, scope, pop.threads["a"], pop.messages["a"], [
                fake_item(f"{MARK_A} bulk note number {i:03d}", subject=f"bulk {i}",
                          kind=kind)])

    proxy.engine.store.write_tx_sync(job)


async def test_items_are_paged_and_filtered_and_corrections_always_shown(
        guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    await many_items(guarded, pop, 130)
    total = count(guarded, "SELECT COUNT(*) FROM memory_items WHERE tenant=?", pop.tenant_a)
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a)
    assert f"rows 1–100 of {total}" in text and "next →" in text
    assert text.count("item:") > 100 and "bulk note number 129" in text
    assert "bulk note number 000" not in text  # on the next page
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a,
                                offset="100")
    assert "bulk note number 000" in text and "← previous" in text
    # filters: kind, text, status, thread, role
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a,
                                kind="decision", text="number 12")
    found = set(re.findall(r"bulk note number (\d{3})", text))
    assert found == {"120", "123", "126", "129"}
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a,
                                status="active", role="writer")
    assert "prose style is plain" in text and "bulk note" not in text.split("<h2>Items")[1]
    status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a,
                                thread=str(pop.threads["w"]))
    assert "prose style is plain" in text and "bulk note number" not in text.split(
        "<h2>Items")[1]
    # the correction of page 2's old items is shown on every page and filter
    for query in ({}, {"status": "active"}, {"offset": "100"}):
        status, text, _ = await get(guarded, "/lcm/ui/items", AUTH, tenant=pop.tenant_a,
                                    **query)
        chain = text.split('<div class="chain">', 1)[1].split("</div>", 1)[0]
        assert chain.index(f"item:{pop.items['a_old']}") < chain.index(
            f"item:{pop.items['a_new']}")
        assert "no corrections yet" not in text


async def indexed(proxy: RunningProxy, timeout: float = 30.0) -> None:
    """Wait until the text index has caught up with the outbox."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        lag = proxy.engine.index_lag()["indexers"].get("index_text", {}).get("lag", 1)
        if lag == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the text index did not catch up")


async def test_search_links_scores_and_modes(guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, tenant=pop.tenant_a,
                                q="timeout offline", mode="keyword")
    assert "mode <b class=mode>keyword</b>" in text
    assert f'href="/lcm/ui/items/{pop.items["a_new"]}?tenant={pop.tenant_a}"' in text
    assert re.search(r"<td>\d+</td>", text)  # the score column
    await indexed(guarded)
    # hybrid is the default, and runs over every role of the tenant
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, tenant=pop.tenant_a,
                                q="timeout offline")
    assert status == 200 and "mode <b class=mode>hybrid</b>" in text
    assert f'href="/lcm/ui/items/{pop.items["a_new"]}?tenant={pop.tenant_a}"' in text
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, tenant=pop.tenant_a,
                                q="timeout offline", mode="vector")
    assert status == 200 and "choose both" in text
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, tenant=pop.tenant_a,
                                role="coder", q="staging port", mode="bm25")
    assert "mode <b class=mode>bm25</b>" in text and "score: BM25" in text
    status, text, _ = await get(guarded, "/lcm/ui/search", AUTH, q="x", mode="psychic")
    assert status == 400
    # the links lead somewhere
    status, text, _ = await get(guarded, f"/lcm/ui/items/{pop.items['a_new']}", AUTH,
                                tenant=pop.tenant_a)
    assert status == 200 and "45 s" in text and f"thread #{pop.threads['a']}" in text
    status, text, _ = await get(guarded, f"/lcm/ui/items/{pop.items['b_port']}", AUTH,
                                tenant=pop.tenant_a)
    assert status == 404 and MARK_B not in text
    status, text, _ = await get(guarded, f"/lcm/ui/messages/{pop.messages['a']}", AUTH)
    assert status == 200 and "5433" in text


async def test_retract_needs_the_csrf_token(guarded: RunningProxy) -> None:
    pop = await populate(guarded)
    item = pop.items["a_port"]
    path = f"/lcm/ui/items/{item}/retract"

    def status_of() -> str:
        return sql_read(guarded.engine, lambda c: c.execute(
            "SELECT status FROM memory_items WHERE id=?", (item,)).fetchone()[0])

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(guarded.root + "/lcm/ui/items", headers=AUTH) as r:
            page_html = await r.text()
            cookie = r.cookies["lcm_csrf"]
            assert cookie["httponly"] and cookie["samesite"] == "Strict"
        token = re.search(r'name="csrf" value="([^"]+)"', page_html).group(1)  # type: ignore
        assert token == cookie.value
        for data, headers in (
                ({"reason": "no token"}, AUTH),
                ({"reason": "wrong", "csrf": "x" * 43}, AUTH),
                ({"reason": "foreign", "csrf": token}, {**AUTH, "Origin": "http://evil.test"}),
                ({"reason": "no admin", "csrf": token}, {})):
            async with http.post(guarded.root + path, data=data, headers=headers,
                                 allow_redirects=False) as r:
                assert r.status in (401, 403), data
                assert r.status == (401 if not headers else 403)
        assert status_of() == "active"
        origin = guarded.root
        async with http.post(guarded.root + path, data={"reason": "stale", "csrf": token},
                             headers={**AUTH, "Origin": origin}, allow_redirects=False) as r:
            assert r.status == 303
            assert r.headers["Location"] == f"/lcm/ui/items?retracted={item}"
    assert status_of() == "retracted"
    reason = sql_read(guarded.engine, lambda c: c.execute(
        "SELECT reason FROM memory_item_revisions WHERE item_id=? ORDER BY id DESC",
        (item,)).fetchone()[0])
    assert "stale" in reason
    # without the cookie the form's token alone is refused too
    async with aiohttp.ClientSession() as http, http.post(
            guarded.root + f"/lcm/ui/items/{pop.items['a_new']}/retract",
            data={"csrf": token}, headers=AUTH, allow_redirects=False) as r:
        assert r.status == 403


async def test_restore_in_the_inspector(guarded: RunningProxy) -> None:
    """A superseded item carries a restore form (an active one a retract form); the
    POST needs the CSRF token as retract does; an active item is a 409."""
    pop = await populate(guarded)
    old = pop.items["a_old"]

    def status_of(item: int) -> str:
        return sql_read(guarded.engine, lambda c: c.execute(
            "SELECT status FROM memory_items WHERE id=?", (item,)).fetchone()[0])

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(guarded.root + f"/lcm/ui/items/{old}", headers=AUTH) as r:
            page_html = await r.text()
        assert f'action="/lcm/ui/items/{old}/restore"' in page_html
        assert "/retract" not in page_html
        token = re.search(r'name="csrf" value="([^"]+)"', page_html).group(1)  # type: ignore
        path = guarded.root + f"/lcm/ui/items/{old}/restore"
        async with http.post(path, data={"reason": "no token"}, headers=AUTH,
                             allow_redirects=False) as r:
            assert r.status == 403
        assert status_of(old) == "superseded"
        async with http.post(path, data={"reason": "misread", "csrf": token}, headers=AUTH,
                             allow_redirects=False) as r:
            assert r.status == 303
            assert r.headers["Location"] == f"/lcm/ui/items?restored={old}"
        assert status_of(old) == "active"
        async with http.get(guarded.root + f"/lcm/ui/items?restored={old}",
                            headers=AUTH) as r:
            listing = await r.text()
        assert f"restored item:{old}" in listing
        assert f'action="/lcm/ui/items/{old}/retract"' in listing
        async with http.post(path, data={"csrf": token}, headers=AUTH,
                             allow_redirects=False) as r:
            assert r.status == 409 and "is active" in await r.text()


async def test_inspector_in_chromium(guarded: RunningProxy) -> None:
    async_playwright = _browser_or_skip()
    pop = await populate(guarded)
    await many_items(guarded, pop, 130)
    await ask_on_thread(guarded, pop.threads["a"], f"{MARK_A} What API timeout applies"
                        " when offline?")
    rid = forwarded_rows(guarded)[-1]["request_id"]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            page = await context.new_page()
            # sign in through the form (cookie session), as an operator's browser does
            await page.goto(f"{guarded.root}/lcm/ui")
            await page.fill("input[name=token]", ADMIN_TOKEN)
            await page.click("form[action='/lcm/ui/login'] button")
            await page.wait_for_url(f"{guarded.root}/lcm/ui")
            # the request view: body left, injection right
            await page.goto(f"{guarded.root}/lcm/ui/requests/{rid}")
            left = await page.locator("#forwarded").bounding_box()
            right = await page.locator("#explain").bounding_box()
            assert left and right and left["x"] + left["width"] <= right["x"] + 1
            assert abs(left["y"] - right["y"]) < 5  # side by side
            assert await page.locator("div.msg[data-part=scaffold]").count() == 1
            block = page.locator("div.msg[data-block='1'] .blocktext")
            assert "[Current Request]" in await block.inner_text()
            assert "45 s" in await block.inner_text()
            assert await page.locator("details.tool").count() >= 1
            assert await page.locator("#explain table:has(th:text('decision')) tbody tr"
                                      ).count() >= 1
            total = page.locator("#explain tr.total td").last
            bar = await page.locator("#explain div.bar").get_attribute("aria-valuenow")
            assert await total.inner_text() == bar
            await page.screenshot(path=str(SHOTS / "inspector-request.png"), full_page=True)
            # the request log
            await page.goto(f"{guarded.root}/lcm/ui/requests?tenant={pop.tenant_a}")
            assert await page.locator("table tbody tr").count() >= 4
            await page.locator(f"a:text('{rid}')").click()
            await page.wait_for_url(f"**/lcm/ui/requests/{rid}?**")
            await page.goto(f"{guarded.root}/lcm/ui/requests?tenant={pop.tenant_a}")
            await page.screenshot(path=str(SHOTS / "inspector-requests.png"), full_page=True)
            # items: paging, filters, corrections, then retract from the page
            await page.goto(f"{guarded.root}/lcm/ui/items?tenant={pop.tenant_a}")
            assert "rows 1–100 of" in await page.locator("div.pager").first.inner_text()
            await page.select_option("select[name=kind]", "decision")
            await page.fill("form.filters input[name=text]", "number 12")
            await page.click("form.filters button")
            await page.wait_for_url("**/lcm/ui/items?**kind=decision**")
            assert await page.locator("table tbody tr").count() == 4
            await page.screenshot(path=str(SHOTS / "inspector-items-filtered.png"),
                                  full_page=True)
            await page.goto(f"{guarded.root}/lcm/ui/items?tenant={pop.tenant_a}&text=5433")
            assert await page.locator("div.chain").count() >= 1
            row = page.locator("tr:has-text('staging database port')")
            await row.locator("input[name=reason]").fill("moved to 5434")
            async with page.expect_response("**/retract**") as posted:
                await row.locator("form.retract button").click()
            resp = await posted.value
            assert resp.status == 303, await page.content()
            await page.wait_for_url("**retracted=**")
            assert "retracted item:" in await page.locator("p.notice").inner_text()
            await page.screenshot(path=str(SHOTS / "inspector-items-retracted.png"),
                                  full_page=True)
            # search: mode, score, links
            await page.goto(f"{guarded.root}/lcm/ui/search?tenant={pop.tenant_a}"
                            "&q=timeout+offline")
            first = page.locator("table tbody tr").first
            assert await first.locator("a").count() >= 1
            await page.screenshot(path=str(SHOTS / "inspector-search-links.png"),
                                  full_page=True)
            await first.locator("a").first.click()
            await page.wait_for_url("**/lcm/ui/items/**")
            await page.screenshot(path=str(SHOTS / "inspector-item.png"), full_page=True)
            # sign out: back to the sign-in form, and the session cookie is gone
            await page.click("form.signout button")
            await page.wait_for_url(f"{guarded.root}/lcm/ui")
            assert await page.locator("form[action='/lcm/ui/login']").count() == 1
            assert "lcm_admin" not in {c["name"] for c in await context.cookies()}
        finally:
            await browser.close()
    status = sql_read(guarded.engine, lambda c: c.execute(
        "SELECT status FROM memory_items WHERE id=?", (pop.items["a_port"],)).fetchone()[0])
    assert status == "retracted"


def test_large_bodies_are_masked_message_by_message() -> None:
    secret = "sk-proj-" + "Z9y8X7w6" * 5
    scope = Scope("t_big", "coder", "")
    msgs = [{"role": "user", "content": f"turn {i}: see task-list and risk-notes " * 4}
            for i in range(300)]
    clean = orjson.dumps({"model": "m", "messages": msgs})
    assert len(clean) > 32 * 1024
    for _ in range(2):  # the second time the clean messages come from the cache
        row = forwarded.prepare(scope, "r", clean, {}, max_bytes=1 << 20, redact=True)
        assert zlib.decompress(row[10]) == clean and row[12] == 0
        dirty = orjson.dumps({"model": "m", "messages": [
            *msgs, {"role": "user", "content": f"key {secret}"}]})
        row = forwarded.prepare(scope, "r", dirty, {}, max_bytes=1 << 20, redact=True)
        stored = zlib.decompress(row[10])
        assert secret.encode() not in stored and row[12] == 1
        assert orjson.loads(stored)["messages"][:300] == msgs
    row = forwarded.prepare(scope, "r", dirty, {}, max_bytes=1 << 20, redact=False)
    assert zlib.decompress(row[10]) == dirty and row[12] == 0
