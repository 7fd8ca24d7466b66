"""Stored chat completions (``store: true``) read back through the proxy: the
client sees the completion it was shown, not the upstream's copies of the tool
loop's rounds with the memory block, the memory calls and their results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import openai
import pytest

from memory_core.assembly.block import BLOCK_MARKER
from tests.conftest import TEST_KEY, RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream, Reply

GREP = {"id": "call_m1", "name": "memory_grep",
        "arguments": '{"query": "GRF-7781", "start_time": null, "end_time": null,'
                     ' "limit": null}'}
ASK = [{"role": "user", "content": "Which dashboard was it?"}]


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data", tools={"offer": "always"})
    yield running
    await running.close()


@pytest.mark.parametrize("stream", [False, True])
async def test_a_stored_completion_with_a_hidden_round_reads_back_as_shown(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    """The list of stored completions held the hidden round's completion too, and
    the answer's messages held the block, the memory call and its result."""
    sdk = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    upstream.push(Reply(content=None, tool_calls=[GREP]), Reply(content="It is GRF-7781."))
    if stream:
        chunks = [c async for c in await sdk.chat.completions.create(
            model="m", messages=ASK, store=True, stream=True)]  # type: ignore[arg-type]
        shown_id, usage = chunks[0].id, None
    else:
        made = await sdk.chat.completions.create(model="m", messages=ASK,  # type: ignore
                                                 store=True)
        shown_id, usage = made.id, made.usage
    await proxy.settle()
    assert len(upstream.completions) == 2  # the upstream stored both rounds
    assert upstream.completion_messages[shown_id][0]["content"].startswith(BLOCK_MARKER)
    listed = await sdk.chat.completions.list()
    assert [c.id for c in listed.data] == [shown_id]
    got = await sdk.chat.completions.retrieve(shown_id)
    if usage is not None:
        assert got.usage is not None and got.usage.total_tokens == usage.total_tokens == 30
    messages = (await sdk.chat.completions.messages.list(shown_id)).data
    assert [(m.role, m.content) for m in messages] == [("user", "Which dashboard was it?")]
    await sdk.chat.completions.delete(shown_id)
    assert upstream.completions == {}
