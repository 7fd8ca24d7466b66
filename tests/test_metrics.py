"""``GET /lcm/metrics`` scraped from a running proxy (real sockets, the real openai SDK,
the fake upstream) and parsed with prometheus_client's own exposition parser: every
series of docs/metrics.md moves as the traffic that feeds it says it should."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from memory_core.engine import Engine
from memory_core.store.sqlite import SqliteStore
from proxy.app import create_app
from proxy.metrics import Metrics
from proxy.settings import load_settings
from tests.conftest import TEST_KEY, RunningProxy, closed_port, sql_read
from tests.fake_upstream import FakeUpstream, Reply

MakeProxy = Callable[..., Awaitable[RunningProxy]]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(proxy: RunningProxy) -> tuple[Samples, str]:
    """Every sample of the exposition, keyed by (sample name, labels); and the text."""
    async with aiohttp.ClientSession() as http, http.get(proxy.root + "/lcm/metrics") as r:
        assert r.status == 200
        text = await r.text()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out, text


def value(samples: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    assert key in samples, f"{name}{labels} not exported"
    return samples[key]


def stored_messages(proxy: RunningProxy) -> int:
    return int(sql_read(proxy.engine,
        lambda c: c.execute("SELECT COUNT(*) FROM messages").fetchone()[0]))


def client(proxy: RunningProxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


async def test_captured_messages_and_tokens_follow_the_traffic(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    proxy = await make_proxy()
    before, _ = await scrape(proxy)
    assert value(before, "lcm_captured_messages_total") == 0
    sdk = client(proxy)
    history: list[Any] = [{"role": "system", "content": "You are terse."}]
    usage = [(31, 7), (52, 11), (80, 3)]
    for turn, (p, c) in enumerate(usage):
        upstream.push(Reply(content=f"answer {turn}", usage={
            "prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}))
        history.append({"role": "user", "content": f"question number {turn}"})
        out = await sdk.chat.completions.create(model="model-a", messages=history)
        history.append({"role": "assistant", "content": out.choices[0].message.content})
    # One streamed answer with usage, under another model.
    upstream.push(Reply(content="streamed", usage={
        "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}))
    history.append({"role": "user", "content": "and a streamed one"})
    stream = await sdk.chat.completions.create(
        model="model-b", messages=history, stream=True,
        stream_options={"include_usage": True})
    async for _ in stream:
        pass
    await proxy.settle()
    after, _ = await scrape(proxy)
    # 1 system + 4 user + 4 assistant turns, each stored once.
    assert stored_messages(proxy) == 9
    assert value(after, "lcm_captured_messages_total") == 9
    assert value(after, "lcm_upstream_tokens_total", model="model-a", kind="prompt") == 163
    assert value(after, "lcm_upstream_tokens_total", model="model-a", kind="completion") == 21
    assert value(after, "lcm_upstream_tokens_total", model="model-b", kind="prompt") == 100
    assert value(after, "lcm_upstream_tokens_total", model="model-b", kind="completion") == 20
    # The writer committed, the embedder ran (hashing, through the serial wrapper).
    assert value(after, "lcm_sqlite_commit_seconds_count") > value(
        before, "lcm_sqlite_commit_seconds_count")
    assert value(after, "lcm_sqlite_commit_seconds_bucket", le="+Inf") == value(
        after, "lcm_sqlite_commit_seconds_count")
    assert value(after, "lcm_embed_seconds_count", kind="document") >= 1
    assert value(after, "lcm_sqlite_writer_queue_depth") == 0
    # Settled: the indexes have applied everything.
    for indexer in ("index_text", "index_vector"):
        assert value(after, "lcm_index_lag_seconds", indexer=indexer) == 0
        assert value(after, "lcm_index_lag", indexer=indexer) == 0
    assert value(after, "lcm_requests_in_flight", route="/v1/chat/completions") == 0
    # The process collector runs on the app's registry.
    assert value(after, "process_resident_memory_bytes") > 10 * 2**20
    assert value(after, "process_open_fds") > 0
    assert value(after, "process_cpu_seconds_total") > 0
    await sdk.close()


async def test_model_labels_are_bounded_however_many_names_clients_send(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    """The ``model`` label is the client's (and upstream's) string: past
    ``MODEL_LABELS_MAX`` names new ones count as ``other``, and no token is lost."""
    from proxy import metrics

    MODEL_LABELS_MAX = getattr(metrics, "MODEL_LABELS_MAX", 64)  # noqa: N806 - the constant
    proxy = await make_proxy()
    names = [f"made-up-model-{i:03d}" for i in range(MODEL_LABELS_MAX + 40)]
    async with aiohttp.ClientSession() as http:
        for i, name in enumerate(names):
            body = {"model": name, "messages": [{"role": "user", "content": f"q {i}"}]}
            async with http.post(proxy.base_url + "/chat/completions", json=body,
                                 headers={"Authorization": f"Bearer {TEST_KEY}",
                                          "X-LCM-Session": f"s{i}"}) as r:
                assert r.status == 200
    after, _ = await scrape(proxy)
    prompt = {dict(labels)["model"]: v for (n, labels), v in after.items()
              if n == "lcm_upstream_tokens_total" and dict(labels)["kind"] == "prompt"}
    assert len(prompt) == MODEL_LABELS_MAX + 1  # the first names, then "other"
    assert set(names[:MODEL_LABELS_MAX]) < set(prompt)
    per_call = prompt[names[0]]  # the fake upstream's usage, the same every call
    assert prompt["other"] == 40 * per_call
    assert sum(prompt.values()) == len(names) * per_call


async def test_tokens_of_responses_and_messages_are_counted(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    """``input_tokens``/``output_tokens`` of the Responses API and of Anthropic
    Messages count as ``prompt``/``completion``, streamed or not."""
    import anthropic

    from tests.fake_anthropic import AReply
    from tests.fake_responses import RReply

    proxy = await make_proxy()
    sdk = client(proxy)
    upstream.push_response(RReply(usage={"input_tokens": 40, "output_tokens": 9,
                                         "total_tokens": 49}),
                           RReply(usage={"input_tokens": 2, "output_tokens": 1,
                                         "total_tokens": 3}))
    await sdk.responses.create(model="resp-m", input="first question")
    stream = await sdk.responses.create(model="resp-m", input="second one", stream=True)
    async for _ in stream:
        pass
    upstream.anthropic_replies.append(AReply(usage={
        "input_tokens": 30, "output_tokens": 8, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0}))
    ant = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    await ant.messages.create(model="claude-m", max_tokens=20,
                              messages=[{"role": "user", "content": "hello"}])
    await proxy.settle()
    samples, _ = await scrape(proxy)
    assert value(samples, "lcm_upstream_tokens_total", model="resp-m", kind="prompt") == 42
    assert value(samples, "lcm_upstream_tokens_total", model="resp-m", kind="completion") == 10
    assert value(samples, "lcm_upstream_tokens_total", model="claude-m", kind="prompt") == 30
    assert value(samples, "lcm_upstream_tokens_total", model="claude-m", kind="completion") == 8
    await sdk.close()
    await ant.close()


async def test_tokens_are_counted_with_capture_off(make_proxy: MakeProxy,
                                                   upstream: FakeUpstream) -> None:
    proxy = await make_proxy(capture={"enabled": False})
    sdk = client(proxy)
    upstream.push(Reply(usage={"prompt_tokens": 12, "completion_tokens": 4,
                               "total_tokens": 16}),
                  Reply(usage={"prompt_tokens": 5, "completion_tokens": 6,
                               "total_tokens": 11}))
    await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
    stream = await sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "b"}], stream=True,
        stream_options={"include_usage": True})
    async for _ in stream:
        pass
    await proxy.settle()
    samples, _ = await scrape(proxy)
    assert value(samples, "lcm_upstream_tokens_total", model="m", kind="prompt") == 17
    assert value(samples, "lcm_upstream_tokens_total", model="m", kind="completion") == 10
    assert value(samples, "lcm_captured_messages_total") == 0 == stored_messages(proxy)
    await sdk.close()


async def test_upstream_errors_by_cause(make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(proxy={"read_timeout_seconds": 1})
    sdk = client(proxy)
    samples, _ = await scrape(proxy)
    for cause in ("unreachable", "timeout", "429", "4xx", "5xx"):  # exported from the start
        assert value(samples, "lcm_upstream_errors_total", cause=cause) == 0
    upstream.push(Reply(status=429, error={"message": "slow down", "type": "rate_limit",
                                           "param": None, "code": None}),
                  Reply(status=429), Reply(status=400), Reply(status=503),
                  Reply(answer_delay=2.5))
    msgs = [{"role": "user", "content": "hi"}]
    for expected in (openai.RateLimitError, openai.RateLimitError, openai.BadRequestError,
                     openai.InternalServerError, openai.APIStatusError):
        with pytest.raises(expected):
            await sdk.chat.completions.create(model="m", messages=msgs)
    samples, _ = await scrape(proxy)
    assert value(samples, "lcm_upstream_errors_total", cause="429") == 2
    assert value(samples, "lcm_upstream_errors_total", cause="4xx") == 1
    assert value(samples, "lcm_upstream_errors_total", cause="5xx") == 1
    assert value(samples, "lcm_upstream_errors_total", cause="timeout") == 1
    assert value(samples, "lcm_upstream_errors_total", cause="unreachable") == 0
    await sdk.close()

    dead = await make_proxy(upstream_url=f"http://127.0.0.1:{closed_port()}/v1")
    sdk = client(dead)
    with pytest.raises(openai.APIStatusError) as err:
        await sdk.chat.completions.create(model="m", messages=msgs)
    assert err.value.status_code == 502
    async with aiohttp.ClientSession() as http:  # a pass-through route counts too
        async with http.get(dead.base_url + "/models") as r:
            assert r.status == 502
    samples, _ = await scrape(dead)
    assert value(samples, "lcm_upstream_errors_total", cause="unreachable") == 2
    await sdk.close()


async def test_requests_in_flight_while_the_upstream_thinks(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    proxy = await make_proxy()
    sdk = client(proxy)
    upstream.push(Reply(answer_delay=1.5), Reply(answer_delay=1.5))
    calls = [asyncio.create_task(sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": f"slow {i}"}])) for i in range(2)]
    deadline = time.monotonic() + 5
    while len(upstream.chat_requests) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    during, _ = await scrape(proxy)
    assert value(during, "lcm_requests_in_flight", route="/v1/chat/completions") == 2
    assert value(during, "lcm_requests_in_flight", route="/lcm/metrics") == 1  # this scrape
    await asyncio.gather(*calls)
    after, _ = await scrape(proxy)
    assert value(after, "lcm_requests_in_flight", route="/v1/chat/completions") == 0
    await sdk.close()


async def test_index_lag_is_an_age_while_nothing_indexes(
        make_proxy: MakeProxy, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(search={"enabled": False})  # no indexer: the lag only grows
    sdk = client(proxy)
    await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    await proxy.settle()
    first, _ = await scrape(proxy)
    await asyncio.sleep(0.5)
    later, _ = await scrape(proxy)
    for indexer in ("index_text", "index_vector"):
        age0 = value(first, "lcm_index_lag_seconds", indexer=indexer)
        assert age0 > 0
        assert value(later, "lcm_index_lag_seconds", indexer=indexer) >= age0 + 0.4
        assert value(later, "lcm_index_lag", indexer=indexer) == 2  # question + answer rows
    assert ("lcm_embed_seconds_count", frozenset({("kind", "document")})) not in later
    await sdk.close()


@pytest.fixture
async def closed_engine_proxy(upstream: FakeUpstream, tmp_path: Path
                              ) -> AsyncIterator[RunningProxy]:
    engine = Engine(tmp_path / "data")
    settings = load_settings(None, environ={}, overrides={
        "proxy": {"upstream": upstream.base_url},
        "storage": {"data_dir": str(tmp_path / "data")}, "search": {"enabled": False}})
    app = create_app(settings, engine=engine)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield RunningProxy(app, runner, port, settings, [0])
    await runner.cleanup()


async def test_a_scrape_survives_an_unreadable_store(closed_engine_proxy: RunningProxy,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    closed_engine_proxy.engine.close()
    # Earlier tests may have run setup_logging (levels, propagation): listen directly.
    logger = logging.getLogger("lcm.metrics")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="lcm.metrics"):
            samples, text = await scrape(closed_engine_proxy)
    finally:
        logger.removeHandler(caplog.handler)
    assert value(samples, "process_open_fds") > 0  # the rest of the scrape is there
    assert "lcm_captured_messages_total" not in text
    assert "engine figures unavailable" in caplog.text


def test_store_records_commit_latency_and_queue_depth(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    try:
        n0 = store.commit_latency.snapshot().count
        store.write_sync(lambda c: c.execute("SELECT 1"))
        snap = store.commit_latency.snapshot()
        assert snap.count == n0 + 1 and snap.buckets[-1] == (float("inf"), snap.count)
        assert 0 < snap.total < 5
        assert store.queue_depth() == 0
    finally:
        store.close()


def test_metrics_doc_lists_every_lcm_series() -> None:
    """docs/metrics.md names each ``lcm_`` family the proxy registers."""
    from proxy.metrics import Metrics

    doc = (Path(__file__).parent.parent / "docs" / "metrics.md").read_text()
    m = Metrics()
    names = {f.name for f in m.registry.collect() if f.name.startswith("lcm_")}
    names |= {"lcm_captured_messages", "lcm_sqlite_writer_queue_depth",
              "lcm_sqlite_commit_seconds", "lcm_embed_seconds", "lcm_index_lag",
              "lcm_index_lag_seconds"}
    documented = set(re.findall(r"`(lcm_[a-z_]+?)(?:_total)?[`{]", doc))
    assert names <= documented, names - documented


def test_a_label_child_once_made_is_found_without_converting_its_values() -> None:
    """A request's ``labels()`` calls find the child made before by the values passed,
    without ``str``-ing them again or taking the metric's lock; the series is the same
    one, counted once per call."""
    converted: list[str] = []

    class Route:
        def __str__(self) -> str:
            converted.append("route")
            return "/v1/chat/completions"

    route = Route()
    metrics = Metrics()
    first = metrics.requests.labels(route, "200")
    for _ in range(5):
        assert metrics.requests.labels(route, "200") is first
        metrics.requests.labels(route, "200").inc()
    assert converted == ["route"]
    assert metrics.requests.labels(route="/v1/chat/completions", status="200") is first
    text = metrics.render().decode()
    assert 'lcm_requests_total{route="/v1/chat/completions",status="200"} 5.0' in text
