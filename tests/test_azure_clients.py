"""Azure OpenAI clients through the proxy: the real ``AzureOpenAI``/``AsyncAzureOpenAI``
(``azure_endpoint`` = the proxy) against the fake upstream serving Azure's paths.

The client's deployment path and ``?api-version=`` reach the upstream's Azure root
unchanged on every round, hidden memory-tool rounds included; its ``api-key`` header
goes as sent; the body is never given a ``model``; memory works as on ``/v1/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from openai.types.chat import ChatCompletion

from tests.conftest import RunningProxy, start_proxy
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_injection import block_of

KEY = "azure-key-0123456789abcdef"
VERSION = "2024-10-21"
DEPLOYMENT = "ops-chat-prod"
DEPLOYED = f"/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={VERSION}"


@pytest.fixture(params=["/openai/v1", ""], ids=["upstream-openai-v1", "upstream-root"])
async def proxy(request: pytest.FixtureRequest, upstream: FakeUpstream, tmp_path: Path
                ) -> AsyncIterator[RunningProxy]:
    """A proxy whose upstream is an Azure resource in either form: ``…/openai/v1`` (as
    for clients of its v1 surface) or the bare resource URL."""
    running = await start_proxy(f"http://127.0.0.1:{upstream.port}{request.param}",
                                tmp_path / "data", tools={"offer": "always"})
    yield running
    await running.close()


OPENED: list[openai.AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while OPENED:
        await OPENED.pop().close()


def azure(proxy: RunningProxy, session: str) -> openai.AsyncAzureOpenAI:
    """The real async Azure client, ``azure_endpoint`` the proxy (closed after the test)."""
    client = openai.AsyncAzureOpenAI(azure_endpoint=proxy.root, api_version=VERSION,
                                     api_key=KEY, max_retries=0,
                                     default_headers={"X-LCM-Session": session})
    OPENED.append(client)
    return client


def sent_to(upstream: FakeUpstream, start: int, prefix: str = "/openai/") -> list[dict[str, Any]]:
    return [r for r in upstream.requests[start:] if r["path"].startswith(prefix)]


def grep_call(query: str) -> dict[str, Any]:
    return {"id": "call_1", "name": "memory_grep", "arguments": orjson.dumps(
        {"query": query, "start_time": None, "end_time": None, "limit": None}).decode()}


@pytest.mark.parametrize("stream", [False, True])
async def test_a_deployment_chat_remembers_across_conversations(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    first = azure(proxy, "billing")
    r = await first.chat.completions.create(model=DEPLOYMENT, messages=[
        {"role": "user", "content": "The Grafana dashboard id is GRF-7781 for billing."}])
    assert r.choices[0].message.content
    await proxy.settle()
    # another conversation: the block recalls the fact, a hidden memory round reads it
    upstream.push(Reply(content=None, tool_calls=[grep_call("GRF-7781")]),
                  Reply(content="It is GRF-7781."))
    start = len(upstream.requests)
    later = azure(proxy, "ops")
    question = [{"role": "user", "content": "Which Grafana dashboard is the billing one?"}]
    if stream:
        s = await later.chat.completions.create(model=DEPLOYMENT, messages=question, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in s if c.choices])
    else:
        r = await later.chat.completions.create(model=DEPLOYMENT, messages=question)
        text = r.choices[0].message.content or ""
    assert text == "It is GRF-7781."
    rounds = sent_to(upstream, start)
    assert len(rounds) == 2 and len(upstream.requests) == start + 2  # nothing on /v1/
    for sent in rounds:
        assert sent["raw_path"] == DEPLOYED
        assert sent["headers"]["api-key"] == KEY
        assert sent["json"]["model"] == DEPLOYMENT  # as the SDK sent it
    assert "GRF-7781" in block_of(rounds[0]["json"]["messages"][-1]["content"])
    assert "GRF-7781" in rounds[1]["json"]["messages"][-1]["content"]  # the tool's result


async def test_a_body_without_model_is_planned_for_its_deployment(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A client that sends no ``model`` (the deployment names it): the deployment's
    ``[context]`` window plans the request, the recorded request names it, and the body
    the upstream receives still has no ``model``."""
    proxy = await start_proxy(f"http://127.0.0.1:{upstream.port}", tmp_path / "data",
                              context={"model_windows": [f"{DEPLOYMENT}=50000"]})
    client = openai.AzureOpenAI(azure_endpoint=proxy.root, api_version=VERSION, api_key=KEY,
                                max_retries=0)
    try:
        raw = await asyncio.to_thread(
            client.chat.completions.with_raw_response.create, model=DEPLOYMENT,
            messages=[{"role": "user", "content": "hello"}])  # any model: see below

        def post() -> Any:  # the SDK's own request path, without a model in the body
            return client.post(
                f"/deployments/{DEPLOYMENT}/chat/completions",
                cast_to=openai.APIResponse[ChatCompletion],
                body={"messages": [{"role": "user", "content": "My locker code is 4471."}]})

        bare = await asyncio.to_thread(post)
        assert (bare.parse().choices[0].message.content or "").endswith("My locker code is 4471.")
        context = dict(p.split("=", 1) for p in bare.headers["x-lcm-context"].split("; "))
        assert (context["window"], context["source"]) == ("50000", "table")
        assert raw.headers["x-lcm-context"] == bare.headers["x-lcm-context"]
        sent = upstream.requests[-1]
        assert sent["raw_path"] == DEPLOYED and "model" not in sent["json"]
        await proxy.settle()
        models = {e["data"].get("model") for e in proxy.engine.export(events=True)["events"]
                  if e["kind"] == "request"}
        assert DEPLOYMENT in models
    finally:
        client.close()
        await proxy.close()


async def test_other_azure_paths_pass_through(proxy: RunningProxy,
                                              upstream: FakeUpstream) -> None:
    client = azure(proxy, "embed")
    start = len(upstream.requests)
    out = await client.embeddings.create(model="embed-dep", input="hello")
    assert out.data[0].embedding == [0.1, 0.2, 0.3]
    listed = await client.models.with_raw_response.list()
    (emb, models) = sent_to(upstream, start)
    assert emb["raw_path"] == f"/openai/deployments/embed-dep/embeddings?api-version={VERSION}"
    assert models["raw_path"] == f"/openai/models?api-version={VERSION}"
    assert models["headers"]["api-key"] == KEY
    assert listed.headers["x-echo"] == "1"
    assert orjson.loads(listed.content)["path"] == "/openai/models"


@pytest.mark.parametrize("surface", ["deployment-api", "v1"])
async def test_azure_responses_get_memory(proxy: RunningProxy, upstream: FakeUpstream,
                                          surface: str) -> None:
    if surface == "v1":
        def make(session: str) -> openai.AsyncOpenAI:
            client = openai.AsyncOpenAI(base_url=proxy.root + "/openai/v1", api_key=KEY,
                                        max_retries=0, default_headers={"X-LCM-Session": session})
            OPENED.append(client)
            return client
        path = "/openai/v1/responses"
    else:
        def make(session: str) -> openai.AsyncOpenAI:
            return azure(proxy, session)
        path = f"/openai/responses?api-version={VERSION}"
    upstream.push_response(RReply(text="noted"), RReply(text="Port 5433."))
    await make("a").responses.create(model=DEPLOYMENT,
                                     input="The staging database runs on port 5433.")
    await proxy.settle()
    start = len(upstream.requests)
    r = await make("b").responses.create(model=DEPLOYMENT,
                                         input="Which port does the staging database use?")
    assert r.output_text == "Port 5433."
    (sent,) = sent_to(upstream, start)
    assert sent["raw_path"] == path
    assert "5433" in orjson.dumps(sent["json"]["input"]).decode()


async def test_the_proxys_upstream_key_goes_as_api_key(upstream: FakeUpstream,
                                                      tmp_path: Path) -> None:
    proxy = await start_proxy(f"http://127.0.0.1:{upstream.port}/openai/v1", tmp_path / "data",
                              proxy={"upstream_api_key": "resource-key"})
    try:
        await azure(proxy, "k").chat.completions.create(
            model=DEPLOYMENT, messages=[{"role": "user", "content": "hi"}])
        sent = upstream.requests[-1]
        assert sent["raw_path"] == DEPLOYED
        assert sent["headers"]["api-key"] == "resource-key"
        assert "Authorization" not in sent["headers"]
    finally:
        await proxy.close()


async def test_azure_paths_are_held_to_the_client_key_list(upstream: FakeUpstream,
                                                          tmp_path: Path) -> None:
    """``proxy.require_client_keys`` guards ``/openai/…`` as it does ``/v1/…``."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "data",
                              proxy={"require_client_keys": ["t_someone_else"]})
    try:
        with pytest.raises(openai.AuthenticationError):
            await azure(proxy, "k").chat.completions.create(
                model=DEPLOYMENT, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.AuthenticationError):
            await azure(proxy, "k").models.list()
        assert upstream.requests == []
    finally:
        await proxy.close()


async def _raw_get(port: int, target: bytes) -> tuple[int, bytes]:
    """Send ``GET target`` as written (no client normalises its dot segments)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize("target", [
    b"/openai/../v1/models",  # out of /openai on the Azure root
    b"/openai/%2e%2e/v1/models",
    b"/openai/deployments/x/..%2f..%2f..%2fv1/models",
    b"/openai/.%2Fdeployments/x/chat/completions",
    b"/openai/deployments/..%5C..%5Cadmin",
    b"/v1/../../admin",  # out of the base's /v1
    b"/v1/models/%2E%2E/%2E%2E/%2E%2E/admin",
])
async def test_a_path_with_dot_segments_is_refused_before_the_upstream(
        upstream: FakeUpstream, tmp_path: Path, target: bytes) -> None:
    """The raw path is forwarded as the client wrote it; an upstream that resolves
    ``..`` would serve it outside ``proxy.upstream``'s prefix, with the proxy's key."""
    proxy = await start_proxy(f"http://127.0.0.1:{upstream.port}", tmp_path / "data",
                              proxy={"upstream_api_key": "resource-key"})
    try:
        status, body = await _raw_get(proxy.port, target)
        assert status == 400, body
        assert orjson.loads(body)["error"]["type"] == "invalid_request_error"
        assert upstream.requests == []
    finally:
        await proxy.close()
