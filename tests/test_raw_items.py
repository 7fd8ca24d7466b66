"""Items the proxy keeps reach the upstream as the client's own bytes (proxy/rawjson.py).

Re-serialising a parsed item is value-identical at best: ``\\u00e9`` becomes ``é``,
``1e400`` (infinity once parsed) becomes ``null``, an integer past 64 bits parsed
by orjson becomes a float, spacing changes. The bodies here are written by hand
with all of those and posted as bytes (an SDK would re-encode them), through the
proxy's Responses and Messages paths, with and without the memory-tool loop.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from proxy import rewrite
from proxy.flow.steps import parse_body
from proxy.rawjson import RawItems
from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream

COMPACTION = (b'{ "type" : "compaction", "id": "cmp_1",\n'
              b'   "encrypted_content": "c0mp\\u0000act\\/x",'
              b' "huge": 1e400, "big": 1180591620717411303424, "exp": 1.50E+3 }')
REASONING = (b'{"type": "reasoning", "id": "rs_1", "summary": [],'
             b' "encrypted_content": "gAAAA\\u00e9+/==", "n": 73786976294838206464}')
UNKNOWN = b'{"type": "future_item", "payload": {"k": "\\u2603", "z": -0.0, "e": 2E-5}}'
USER_IMAGE = b'{"type": "input_image", "image_url": "data:image/png;base64,AA==", "x": 1e400}'


def _responses_body(user_text: str = "Goal: ship the importer") -> bytes:
    return (b'{\n  "model": "m",\n  "instructions": "You are terse.",\n  "input": [\n    '
            + COMPACTION + b',\n    ' + REASONING + b',\n    ' + UNKNOWN
            + b',\n    {"type": "message", "role": "user", "content": [\n      '
            + USER_IMAGE + b',\n      {"type": "input_text", "text": "'
            + user_text.encode() + b'"}]}\n  ]\n}')


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                tools={"offer": "always"})
    yield running
    await running.close()


async def _post(proxy: RunningProxy, path: str, raw: bytes) -> tuple[int, Any, Any]:
    async with aiohttp.ClientSession() as http, http.post(
            proxy.root + path, data=raw,
            headers={"Authorization": f"Bearer {TEST_KEY}", "Content-Type": "application/json",
                     "anthropic-version": "2023-06-01"}) as resp:
        return resp.status, resp.headers, await resp.read()


# -- sans-io ---------------------------------------------------------------------------
def test_kept_items_are_spliced_changed_ones_serialised() -> None:
    raw = _responses_body()
    body = parse_body(raw).value
    items = RawItems(raw, body, "input")
    user = body["input"][3]
    new_user = dict(user, content=[{"type": "input_text", "text": "BLOCK"}, *user["content"]])
    added = {"role": "assistant", "content": "made by the proxy"}
    out = rewrite.dumps_body(dict(body, input=[*body["input"][:3], new_user, added]), items)
    for kept in (COMPACTION, REASONING, UNKNOWN, USER_IMAGE):
        assert kept in out
    value = json.loads(out)
    assert value["input"][3]["content"][0] == {"type": "input_text", "text": "BLOCK"}
    assert value["input"][4] == added and value["instructions"] == "You are terse."
    assert value["input"][0]["big"] == 1180591620717411303424
    # without the client's bytes (today's path for other APIs): value-identical only
    plain = rewrite.dumps_body(dict(body, input=body["input"]))
    assert COMPACTION not in plain and b"1e400" not in plain


def test_an_item_changed_in_place_or_a_strange_body_is_serialised_from_values() -> None:
    raw = _responses_body()
    body = parse_body(raw).value
    items = RawItems(raw, body, "input")
    body["input"][2]["payload"]["k"] = "changed"  # same object, other value
    out = items.dumps(dict(body))
    assert out is not None and UNKNOWN not in out and COMPACTION in out
    assert json.loads(out)["input"][2]["payload"]["k"] == "changed"
    # bytes that disagree with the parse: no splicing, never a wrong body
    other = RawItems(raw.replace(b"}\n  ]", b"}, 7\n  ]"), body, "input")
    assert other.dumps(dict(body)) is None
    assert RawItems(b"\xff" + raw, body, "input").dumps(dict(body)) is None
    # objects that are not the client's: nothing to splice
    copy = json.loads(raw)
    assert items.dumps(copy) is None


# -- end to end --------------------------------------------------------------------------
@pytest.mark.parametrize("tools", [True, False])
async def test_responses_items_reach_the_upstream_byte_for_byte(
        make_proxy: Any, upstream: FakeUpstream, tools: bool) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    status, headers, _ = await _post(proxy, "/v1/responses", _responses_body())
    assert status == 200 and headers["x-lcm-memory"] == "injected"
    sent = upstream.responses_requests[-1]
    for kept in (COMPACTION, REASONING, UNKNOWN, USER_IMAGE):
        assert kept in sent["raw"]
    parts = sent["json"]["input"][-1]["content"]
    assert "Background Context" in parts[0]["text"] or parts[0]["text"].startswith("<")
    assert ("memory_search" in {t.get("name") for t in sent["json"].get("tools") or []}) is tools


THINKING = (b'{"type": "thinking", "thinking": "I should read the file \\u2014 now.",'
            b' "signature": "EqQBCkYIARgCKkC+sig\\/with+base64=="}')
REDACTED = b'{"type":"redacted_thinking","data":"cmVkYWN0ZWQ="}'
TOOL_RESULT = (b'{"type": "tool_result", "tool_use_id": "toolu_1",'
               b' "content": [{"type": "text", "text": "CFLAGS=-O3 caf\\u00e9"}]}')
DOCUMENT = (b'{"type": "document", "source": {"type": "base64", "media_type": "application/pdf",'
            b' "data": "JVBERi0="}, "n": 36893488147419103232}')


def _messages_body() -> bytes:
    return (b'{"model": "claude-x", "max_tokens": 100,\n "system": "You are a coding agent.",\n'
            b' "messages": [\n  {"role": "user", "content": [{"type": "text",'
            b' "text": "The build flag is -O3."}, ' + DOCUMENT + b']},\n'
            b'  {"role": "assistant", "content": [' + THINKING + b', ' + REDACTED
            + b', {"type": "tool_use", "id": "toolu_1", "name": "read_file",'
            b' "input": {"path": "Makefile"}}]},\n'
            b'  {"role": "user", "content": [' + TOOL_RESULT
            + b', {"type": "text", "text": "Also check the docs."}]}\n ],\n'
            b' "tools": [{"name": "read_file", "description": "Read a file", "input_schema":'
            b' {"type": "object", "properties": {"path": {"type": "string"}}}}]}')


@pytest.mark.parametrize("tools", [True, False])
async def test_messages_blocks_reach_the_upstream_byte_for_byte(
        make_proxy: Any, upstream: FakeUpstream, tools: bool) -> None:
    proxy = await make_proxy(tools={"enabled": tools, "offer": "always"})
    status, headers, _ = await _post(proxy, "/v1/messages", _messages_body())
    assert status == 200 and headers["x-lcm-memory"] == "injected"
    got = [r for r in upstream.requests if r["path"] == "/v1/messages"][-1]
    for kept in (THINKING, REDACTED, TOOL_RESULT, DOCUMENT):
        assert kept in got["raw"]
    last = got["json"]["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and len(last) == 3
    assert ("memory_search" in {t.get("name") for t in got["json"]["tools"]}) is tools
