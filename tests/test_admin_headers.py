"""Response headers that say what the proxy did, checked through the real SDK, and the
metrics they feed."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import openai

from memory_core.items import writer
from memory_core.models import Scope
from proxy.scope import tenant_for_key
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import KEY_A, fake_item

SYS = {"role": "system", "content": "You are a helpful agent."}


async def test_headers_report_injection_skips_and_request_ids(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # A generous capture wait: a cold first request must not fail open in this test.
    proxy: RunningProxy = await make_proxy(injection={"capture_wait_seconds": 30})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0,
                           default_headers={"X-LCM-Session": "hdr"})
    try:
        history = [SYS, {"role": "user", "content": "Let us configure the API client."}]
        first = await c.chat.completions.with_raw_response.create(model="m", messages=history)
        assert re.fullmatch(r"req_[0-9a-f]{32}", first.headers["x-lcm-request-id"])
        assert first.headers["x-lcm-memory"] == "injected"  # bootstrap: guidelines
        history.append({"role": "assistant", "content": first.parse().choices[0].message.content})
        await proxy.settle()
        tenant = tenant_for_key(KEY_A, proxy.engine.tenant_salt)
        thread = proxy.engine.list_threads(tenant=tenant)["threads"][0]["id"]
        proxy.engine.store.write_tx_sync(lambda conn: writer.store_extracted(
            conn, Scope(tenant, "default", "hdr"), thread, 2, [
                fake_item("API timeout is 30 s when offline", subject="api timeout", value=30,
                          unit="s", condition="when offline"),
                fake_item("API retries are limited to 3", subject="api retries", value=3)]))
        # A new conversation of the same persona: the items' source message is not in
        # its request, so the block carries them (a visible source is not repeated).
        history = [SYS, {"role": "user", "content": "What API timeout applies when offline?"}]
        second = await c.chat.completions.with_raw_response.create(model="m", messages=history)
        h = second.headers
        assert h["x-lcm-memory"] == "injected"
        assert h["x-lcm-request-id"] != first.headers["x-lcm-request-id"]
        await proxy.settle()
        last = proxy.engine.last_assembly(tenant=tenant)
        assert last is not None and last["request_id"] == h["x-lcm-request-id"]
        items = [r for r in last["data"]["included"] if r["ref"].startswith("item:")]
        assert int(h["x-lcm-injected-items"]) == len(items) >= 1
        assert int(h["x-lcm-injected-tokens"]) == last["used_tokens"] > 0
        assert "30 s" in upstream.chat_requests[-1]["json"]["messages"][-1]["content"]

        off = await c.chat.completions.with_raw_response.create(
            model="m", messages=history, extra_headers={"X-LCM-Memory": "off"})
        assert off.headers["x-lcm-memory"] == "skipped"
        assert "x-lcm-injected-items" not in off.headers
        assert upstream.chat_requests[-1]["json"]["messages"][-1]["content"] == history[-1][
            "content"]
        streamed = await c.chat.completions.with_raw_response.create(
            model="m", messages=history, stream=True)
        assert streamed.headers["x-lcm-memory"] == "injected"
        assert int(streamed.headers["x-lcm-injected-tokens"]) > 0
        async for _ in streamed.parse():
            pass
    finally:
        await c.close()
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + "/lcm/metrics") as r:
            text = await r.text()
        async with http.get(proxy.root + "/lcm/v1/threads/987654") as r:
            assert r.status == 404 and r.headers["x-lcm-request-id"].startswith("req_")
    assert re.search(r'lcm_memory_outcomes_total\{outcome="injected"\} 3\.0', text)
    assert re.search(r'lcm_memory_outcomes_total\{outcome="skipped"\} 1\.0', text)
    assert re.search(r"lcm_injection_tokens_count 3\.0", text)
    injected = re.search(r"^lcm_injected_items_total (\S+)$", text, re.M)
    assert injected is not None and float(injected.group(1)) >= 2


async def test_fail_open_counter_is_exported_at_zero_before_any_failure(
        proxy: RunningProxy) -> None:
    """Alerting on lcm_fail_open_total needs the series before the first failure."""
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + "/lcm/metrics") as r:
            text = await r.text()
    for stage in ("capture", "memory_path", "capture_response", "search_index"):
        assert f'lcm_fail_open_total{{stage="{stage}"}} 0.0' in text
