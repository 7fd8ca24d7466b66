"""`lcm-proxy bench proxy`: the fake upstream speaks OpenAI, the report is complete,
JSON-serialisable and printable; `bench upstream` serves that fake on its own. Tiny
sizes: this checks the harness, not speed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

from proxy.bench import MODES, percentile, request_body, run_proxy_bench
from proxy.benchfake import REPLY_TEXT, BenchUpstream, stream_events
from proxy.cli import main as cli_main
from tests.conftest import start_proxy

ROOT = Path(__file__).resolve().parent.parent


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([0.0, 10.0], 0.99) == pytest.approx(9.9)
    assert percentile([5.0], 0.99) == 5.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_request_bodies_are_deterministic_growing_conversations() -> None:
    assert request_body("x", 3, stream=False) == request_body("x", 3, stream=False)
    first, third = orjson.loads(request_body("x", 0, stream=True)), orjson.loads(
        request_body("x", 2, stream=False))
    assert first["stream"] is True and "stream" not in third
    assert [m["role"] for m in third["messages"]] == [
        "system", "user", "assistant", "user", "assistant", "user"]
    assert third["messages"][:2] == first["messages"]
    assert orjson.loads(request_body("x", 8, stream=False))["messages"][1] != first["messages"][1]


def test_stream_events_have_the_requested_chunk_count() -> None:
    events = stream_events(20)
    assert len(events) == 21 and events[-1] == b"data: [DONE]\n\n"
    text = "".join(
        orjson.loads(e[6:])["choices"][0]["delta"].get("content", "") for e in events[:-1])
    assert text == REPLY_TEXT
    assert orjson.loads(events[-2][6:])["choices"][0]["finish_reason"] == "stop"


async def test_fake_upstream_answers_the_openai_sdk() -> None:
    fake = BenchUpstream()
    base = await fake.start()
    try:
        client = AsyncOpenAI(base_url=base, api_key="sk-test", max_retries=0)
        reply = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == REPLY_TEXT
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        parts = [c.choices[0].delta.content or "" async for c in stream]
        assert "".join(parts) == REPLY_TEXT
        await client.close()
    finally:
        await fake.stop()


@pytest.mark.slow
def test_run_proxy_bench_reports_every_figure() -> None:
    result = run_proxy_bench(n_requests=12, concurrency=3, progress=False)
    assert json.loads(json.dumps(result)) == result
    assert set(result["modes"]) == set(MODES)
    for mode in MODES:
        figures = result["modes"][mode]
        assert figures["errors"] == 0, mode
        assert figures["samples"] == 12
        assert 0 < figures["nonstream_p50_ms"] <= figures["nonstream_p99_ms"]
        assert 0 < figures["stream_ttfb_p50_ms"] <= figures["stream_total_p99_ms"]
        assert figures["throughput_rps"] > 0
    for mode in MODES[1:]:
        assert set(result["verdict"][mode]) == {
            "added_p50_under_1ms", "added_p99_under_5ms", "throughput_at_least_70pct"}
        assert result["added"][mode]["throughput_ratio"] > 0
    assert result["modes"]["proxy_capture_on"]["messages_stored"] > 0
    assert result["modes"]["direct"]["messages_stored"] is None
    table = result["table"]
    assert "| non-stream p50 (ms)" in table and "throughput @3 clients" in table
    assert "proxy (capture off)" in table


def test_cli_bench_proxy_writes_json(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import proxy.bench

    fake = {"table": "TABLE", "modes": {}}
    monkeypatch.setattr(proxy.bench, "run_proxy_bench", lambda **kw: dict(fake, kw=kw))
    out = tmp_path / "b.json"
    res = CliRunner().invoke(
        cli_main, ["bench", "proxy", "--requests", "5", "--concurrency", "2", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert "TABLE" in res.output
    assert json.loads(out.read_bytes())["kw"] == {"n_requests": 5, "concurrency": 2}


def test_cli_bench_json_prints_json_and_never_names_a_file(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch) -> None:
    """``--json`` means "print JSON" in every command (issue 29); files are ``--output``.
    The old ``--json FILE`` is refused instead of writing the file."""
    import proxy.bench

    monkeypatch.setattr(proxy.bench, "run_proxy_bench",
                        lambda **kw: {"table": "TABLE", "modes": {"direct": 1}})
    res = CliRunner().invoke(cli_main, ["bench", "proxy", "--requests", "5", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"table": "TABLE", "modes": {"direct": 1}}
    old = tmp_path / "old.json"
    res = CliRunner().invoke(cli_main, ["bench", "proxy", "--json", str(old)])
    assert res.exit_code == 2 and "unexpected extra argument" in res.stderr
    assert not old.exists()


async def test_fake_upstream_serves_every_api_with_memory_through_the_proxy(
        tmp_path: Path) -> None:
    """The README's keyless trial: the real openai (Chat Completions, Responses) and
    anthropic SDKs, streamed and not, through a real proxy to the bench's fake; the
    fact said on one API comes back in the block of another conversation."""
    fake = BenchUpstream()
    base = await fake.start()
    running = await start_proxy(base, tmp_path / "data")
    oai = AsyncOpenAI(base_url=running.base_url, api_key="sk-demo", max_retries=0)
    ant = AsyncAnthropic(base_url=running.root, api_key="sk-demo", max_retries=0)
    try:
        first = await oai.responses.create(
            model="gpt-4o-mini", input="Remember: the staging database runs on port 5433.",
            extra_headers={"X-LCM-Session": "a"})
        assert first.output_text == REPLY_TEXT
        await running.settle()
        chained = await oai.responses.create(
            model="gpt-4o-mini", input="Thanks.", previous_response_id=first.id,
            extra_headers={"X-LCM-Session": "a"})
        assert chained.id != first.id and chained.output_text == REPLY_TEXT
        events = [e async for e in await oai.responses.create(
            model="gpt-4o-mini", input="hello", stream=True)]
        assert events[-1].type == "response.completed"
        assert "".join(e.delta for e in events if e.type == "response.output_text.delta") \
            == REPLY_TEXT
        await running.settle()
        raw = await ant.messages.with_raw_response.create(
            model="claude-sonnet-4-5", max_tokens=100, extra_headers={"X-LCM-Session": "b"},
            messages=[{"role": "user", "content": "Which port does the staging database use?"}])
        assert raw.headers["x-lcm-memory"] == "injected"
        assert int(raw.headers["x-lcm-injected-items"]) >= 1
        message = await raw.parse()
        assert message.content[0].type == "text" and message.content[0].text == REPLY_TEXT
        async with ant.messages.stream(
                model="claude-sonnet-4-5", max_tokens=100,
                messages=[{"role": "user", "content": "hi"}]) as stream:
            assert await stream.get_final_text() == REPLY_TEXT
    finally:
        await oai.close()
        await ant.close()
        await running.close()
        await fake.stop()


async def test_cli_bench_upstream_serves_every_client_until_ctrl_c(tmp_path: Path) -> None:
    """``lcm-proxy bench upstream`` (the README's keyless trial) as a process on a free
    loopback port: the URLs it prints reach it through the proxy with the real openai
    (Chat Completions, Responses) and anthropic SDKs, and SIGINT ends it with status 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "proxy", "bench", "upstream", "--port", "0", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        lines: list[str] = []
        while not lines or "Anthropic SDK (" not in lines[-1]:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line, lines
            lines.append(line.decode())
        head = "".join(lines)
        urls = dict(re.findall(r"(\w+) SDK \(.*\): +base_url=(\S+)", head))
        upstream = re.search(r"serve --upstream (\S+)", head)
        assert upstream and urls.keys() == {"OpenAI", "Anthropic"}, head
        # the SDK URLs are the fake's own: the banner sends clients to the proxy first
        # and marks them as direct, without memory, so that a newcomer's client does
        # not skip the proxy
        clients = next((i for i, x in enumerate(lines) if x.strip().startswith("clients:")), -1)
        bypass = next((i for i, x in enumerate(lines) if "without memory" in x), -1)
        assert 0 <= clients < bypass < len(lines) - 2, head
        assert "serve prints" in lines[clients], head
        assert urls["OpenAI"] == upstream.group(1) == urls["Anthropic"] + "/v1", head
        direct = AsyncAnthropic(base_url=urls["Anthropic"], api_key="sk-demo", max_retries=0)
        async with direct:
            said = await direct.messages.create(model="claude-sonnet-4-5", max_tokens=50,
                                                messages=[{"role": "user", "content": "hi"}])
        assert said.content[0].type == "text" and said.content[0].text == REPLY_TEXT
        running = await start_proxy(upstream.group(1), tmp_path / "data")
        oai = AsyncOpenAI(base_url=running.base_url, api_key="sk-demo", max_retries=0)
        ant = AsyncAnthropic(base_url=running.root, api_key="sk-demo", max_retries=0)
        try:
            chat = await oai.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
            assert chat.choices[0].message.content == REPLY_TEXT
            resp = await oai.responses.create(model="gpt-4o-mini", input="hi")
            assert resp.output_text == REPLY_TEXT
            message = await ant.messages.create(
                model="claude-sonnet-4-5", max_tokens=50,
                messages=[{"role": "user", "content": "hi"}])
            assert message.content[0].type == "text" and message.content[0].text == REPLY_TEXT
        finally:
            await oai.close()
            await ant.close()
            await running.close()
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 60) == 0, await proc.stderr.read()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
