"""A 300-turn Anthropic Messages session through the proxy (the real ``anthropic``
SDK, the fake Anthropic upstream): a fact stated at turn 2 reaches the upstream at
turn 300 (in the memory block or the summary), and every forwarded request stays
within its context budget, a window small enough that the history must be
compacted (Messages clients resend the whole history on every turn)."""

from __future__ import annotations

import time
from typing import Any

import anthropic

from memory_core.assembly import budget
from proxy.wire import messages as mw
from tests.conftest import TEST_KEY
from tests.fake_upstream import FakeUpstream

WINDOW = 8192
MAX_TOKENS = 256


def _forwarded_tokens(body: dict[str, Any]) -> int:
    return budget.messages_tokens(mw.view_messages(body)) + budget.tools_tokens(
        body.get("tools"))


async def test_a_fact_from_turn_2_reaches_the_upstream_at_turn_300(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await make_proxy(context={"model_windows": [f"claude-tiny*={WINDOW}"]})
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    texts = ["Hi, let's plan the data migration.",
             "The staging database runs on port 5433 when the VPN is up.",
             *(f"Step {i}: review the changelog entry number {i} and summarise it."
               for i in range(297)),
             "Which port does the staging database use?"]
    history: list[dict[str, Any]] = []
    started = time.perf_counter()
    for text in texts:
        history.append({"role": "user", "content": text})
        raw = await client.messages.with_raw_response.create(
            model="claude-tiny-1", max_tokens=MAX_TOKENS, system="You are terse.",
            messages=history)
        msg = await raw.parse()
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": b.text} for b in msg.content if b.type == "text"]})
        assert raw.headers["x-lcm-memory"] != "over-budget"
    elapsed = time.perf_counter() - started
    limit = budget.request_budget({"model": "claude-tiny-1", "max_tokens": MAX_TOKENS},
                                  proxy.engine.config.context).input_tokens
    assert budget.messages_tokens(mw.view_messages(
        {"system": "You are terse.", "messages": history})) > limit  # must compact
    sent = [r["json"] for r in upstream.requests if r["path"] == "/v1/messages"]
    assert len(sent) == 300
    over = [(i, n) for i, body in enumerate(sent) if (n := _forwarded_tokens(body)) > limit]
    assert not over, (over[:5], limit)
    last = sent[-1]
    seen = " ".join(b.get("text", "") if isinstance(b, dict) else str(b)
                    for m in last["messages"]
                    for b in (m["content"] if isinstance(m["content"], list)
                              else [{"text": m["content"]}]))
    assert "5433" in seen and "staging database" in seen
    assert len(last["messages"]) < len(history) - 100  # compacted, not the whole history
    newest = last["messages"][-1]["content"]
    assert newest[0] == {"type": "text", "text": texts[-1]} or newest == texts[-1] or (
        isinstance(newest, list) and newest[0].get("text") == texts[-1])
    await proxy.settle()
    threads = proxy.engine.export()["threads"]
    assert len(threads) == 1 and len(threads[0]["messages"]) == 1 + 2 * 300
    print(f"300 Messages turns in {elapsed:.1f} s")
