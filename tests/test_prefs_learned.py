"""Preferences learned from what the user said ("I use metric units") are listed
wherever preferences are: ``/memory prefs`` (real openai SDK), ``lcm-proxy memory
prefs list``, ``GET /lcm/v1/preferences`` and the inspector's Preferences page (real
Chromium) — each with the message it came from — and can be removed there: the next
memory block no longer shows a retracted one."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import ADMIN_TOKEN, KEY_A, KEY_B, STEADY
from tests.test_cli_memory import cli
from tests.test_commands import ask
from tests.test_ui import CHROMIUM, CHROMIUM_ARGS, _browser_or_skip

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SAID = ("I prefer answers in English.", "I use metric units.")


@pytest.fixture
async def guarded(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN},
                                injection={**STEADY, "extract": True})
    yield running
    await running.close()


def sdk(proxy: RunningProxy, key: str = KEY_A, session: str = "sess-p") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, max_retries=0,
                              default_headers={"X-LCM-Role": "coder",
                                               "X-LCM-Session": session})


async def learn(proxy: RunningProxy, upstream: FakeUpstream) -> tuple[openai.AsyncOpenAI,
                                                                         list[str]]:
    """Say both preferences in one thread; return the client and the two lines the
    next turn's block shows under ``[User Preferences]``."""
    c = sdk(proxy)
    history: list[dict[str, Any]] = []
    for text in SAID:
        await ask(c, text, history=history)
        history += [{"role": "user", "content": text},
                    {"role": "assistant", "content": "Noted."}]
        await proxy.settle()
    # a new conversation of the role: the block shows both (in the old one their
    # messages are in view, not repeated)
    fresh = sdk(proxy, session="sess-new")
    await ask(fresh, "How far is it to Lyon?")
    await fresh.close()
    block = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
    prefs = block.split("[User Preferences]", 1)[1].split("\n[", 1)[0]
    lines = [ln for ln in prefs.splitlines() if ln.startswith("- ")]
    assert len(lines) == 2, (block, proxy.engine.list_items()["items"])
    return c, lines


def item_ids(listing: str) -> list[int]:
    return [int(i) for i in re.findall(r"item:(\d+)", listing)]


async def test_chat_lists_learned_preferences_and_deletes_one(
        guarded: RunningProxy, upstream: FakeUpstream) -> None:
    c, shown = await learn(guarded, upstream)
    listed = await ask(c, "/memory prefs")
    assert "no preferences" not in listed
    for said in ("answers in English", "metric units"):
        line = next(ln for ln in listed.splitlines() if said in ln)
        assert re.search(r"learned from your msg \d+", line), line
    assert "/memory prefs delete item:ID" in listed
    ids = item_ids(listed)
    assert len(ids) == 2
    # another tenant sees none of them, nor can delete one
    other = sdk(guarded, KEY_B, "sess-other")
    assert "no preferences" in await ask(other, "/memory prefs")
    assert "no learned preference" in await ask(other, f"/memory prefs delete item:{ids[0]}")
    metric = next(i for i in ids if f"item:{i}" in next(
        ln for ln in listed.splitlines() if "metric" in ln))
    done = await ask(c, f"/memory prefs delete item:{metric}")
    assert f"retracted item:{metric}" in done
    after = await ask(c, "/memory prefs")
    assert "metric" not in after and "English" in after
    fresh = sdk(guarded, session="sess-new2")
    await ask(fresh, "And to Paris?")
    await fresh.close()
    block = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
    assert "metric units" not in block and "answers in English" in block
    await c.close()
    await other.close()


async def test_cli_admin_api_and_inspector_agree(guarded: RunningProxy,
                                                upstream: FakeUpstream) -> None:
    c, shown = await learn(guarded, upstream)
    await c.close()
    guarded.engine.set_agent_memory(tenant="*", role="coder", category="user_preferences",
                                    key="tone", title="Tone", content="Be brief.")
    # CLI
    out = cli(guarded, "memory", "prefs", "list", "--role", "coder")
    assert out.exit_code == 0, out.output
    assert "Be brief." in out.output
    for said in ("answers in English", "metric units"):
        assert re.search(rf"item:\d+ +.*{said}.*\[learned from msg \d+", out.output), out.output
    rows = orjson.loads(cli(guarded, "memory", "prefs", "list", "--json").stdout)
    assert sorted(r["source"] for r in rows) == ["learned", "learned", "set"]
    cli_ids = sorted(r["id"] for r in rows if r["source"] == "learned")
    # admin API
    async with aiohttp.ClientSession() as http:
        async with http.get(guarded.root + "/lcm/v1/preferences", headers=AUTH,
                            params={"role": "coder"}) as r:
            body = await r.json()
    assert [p["key"] for p in body["preferences"]] == ["tone"]
    assert sorted(i["id"] for i in body["learned"]) == cli_ids
    assert all(i["source_message_id"] for i in body["learned"])
    # the CLI removes one by its item id, as `memory retract` would
    gone = cli(guarded, "memory", "prefs", "delete", "--role", "coder",
               "--key", f"item:{cli_ids[0]}")
    assert gone.exit_code == 0 and f"retracted item:{cli_ids[0]}" in gone.output
    rows = orjson.loads(cli(guarded, "memory", "prefs", "list", "--json").stdout)
    assert [r["id"] for r in rows if r["source"] == "learned"] == [cli_ids[1]]
    # inspector, in a real browser
    async_playwright = _browser_or_skip()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await (await browser.new_context(
                extra_http_headers=AUTH)).new_page()
            await page.goto(f"{guarded.root}/lcm/ui")
            await page.click("header a:text('Preferences')")
            await page.wait_for_url("**/lcm/ui/preferences**")
            text = await page.locator("main, body").first.inner_text()
            assert "Be brief." in text and f"item:{cli_ids[1]}" in text
            assert f"item:{cli_ids[0]}" not in text
            row = page.locator(f"tr:has-text('item:{cli_ids[1]}')")
            assert await row.locator("a:text-matches('msg \\\\d+')").count() == 1
            async with page.expect_response("**/retract**") as posted:
                await row.locator("form.retract button").click()
            assert (await posted.value).status == 303
        finally:
            await browser.close()
    assert guarded.engine.learned_preferences(role="coder") == []
