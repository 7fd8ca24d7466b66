"""One access line per request at INFO (method, path, status, ms, model, memory state
and reason), never the prompt or a key; ``x-lcm-memory: skipped`` comes with
``x-lcm-memory-reason`` (issue 29). Real SDK, real proxy, loopback fake upstream."""

from __future__ import annotations

import logging
import re
from typing import Any

import aiohttp
import openai
import pytest

from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream

KEY = "sk-access-log-key-never-printed-0123456789"
PROMPT = "the-secret-prompt-words-zebra-quartz"


def access_lines(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "lcm.access" and r.levelno == level]


async def test_access_lines_and_skip_reasons(make_proxy: Any, upstream: FakeUpstream,
                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="lcm.access")
    proxy: RunningProxy = await make_proxy(injection={"capture_wait_seconds": 30})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    user = {"role": "user", "content": PROMPT}
    try:
        first = await c.chat.completions.with_raw_response.create(model="m-1", messages=[user])
        assert first.headers["x-lcm-memory"] == "injected"
        assert "x-lcm-memory-reason" not in first.headers
        off = await c.chat.completions.with_raw_response.create(
            model="m-1", messages=[user], extra_headers={"X-LCM-Memory": "off"})
        assert off.headers["x-lcm-memory"] == "skipped"
        assert off.headers["x-lcm-memory-reason"] == "memory-off-header"
        system_only = await c.chat.completions.with_raw_response.create(
            model="m-2", messages=[{"role": "system", "content": PROMPT}])
        assert system_only.headers["x-lcm-memory-reason"] == "no-user-message"
    finally:
        await c.close()
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.base_url + "/chat/completions",
                             json={"model": "m-3", "prompt": PROMPT},
                             headers={"Authorization": f"Bearer {KEY}"}) as r:
            assert r.headers["x-lcm-memory"] == "skipped"
            assert r.headers["x-lcm-memory-reason"] == "not-chat"
        async with http.get(proxy.root + "/lcm/health") as r:
            assert r.status == 200
    await proxy.settle()

    lines = access_lines(caplog)
    pattern = r"POST /v1/chat/completions 200 \d+\.\d ms model={} memory={}"
    expected = [("m-1", "injected"), ("m-1", r"skipped \(memory-off-header\)"),
                ("m-2", r"skipped \(no-user-message\)"), ("m-3", r"skipped \(not-chat\)")]
    assert len(lines) == len(expected), lines
    for line, (model, memory) in zip(lines, expected, strict=True):
        assert re.fullmatch(pattern.format(model, memory), line), line
    # a probe is a DEBUG line, so INFO shows the traffic only
    assert any(re.fullmatch(r"GET /lcm/health 200 \d+\.\d ms", line)
               for line in access_lines(caplog, logging.DEBUG))
    text = caplog.text
    assert PROMPT not in text and KEY not in text


async def test_capture_off_is_the_reason(make_proxy: Any,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lcm.access")
    proxy: RunningProxy = await make_proxy(capture={"enabled": False})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    try:
        r = await c.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    finally:
        await c.close()
    assert (r.headers["x-lcm-memory"], r.headers["x-lcm-memory-reason"]) == (
        "skipped", "capture-off")
    (line,) = access_lines(caplog)
    assert line.endswith("model=m memory=skipped (capture-off)")


async def test_a_client_cannot_forge_access_lines(make_proxy: Any, upstream: FakeUpstream,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The path and the model name are the client's; with ``log.json = false`` a line
    break in them would start a forged line ("… POST /lcm/v1/purge 200"). Control
    characters are written escaped."""
    from proxy.log import PlainFormatter

    caplog.set_level(logging.DEBUG, logger="lcm.access")
    proxy: RunningProxy = await make_proxy()
    forged = "\n12:00:00 INFO    lcm.access [req_0] POST /lcm/v1/purge 200 1.0 ms\r"
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    try:
        await c.chat.completions.create(model="m" + forged, messages=[
            {"role": "user", "content": "hi"}])
    finally:
        await c.close()
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + "/v1/models%0AINFO%20forged%0D") as r:
            await r.read()
    await proxy.settle()
    records = [r for r in caplog.records if r.name == "lcm.access"]
    assert len(records) >= 2
    for record in records:
        line = PlainFormatter().format(record)
        assert "\n" not in line and "\r" not in line, line
    assert any("\\n12:00:00" in r.getMessage() for r in records)
