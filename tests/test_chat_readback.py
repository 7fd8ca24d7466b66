"""Stored chat completions (``store: true``) read back through the proxy: the
client sees the completion it was shown, not the upstream's copies of the tool
loop's rounds with the memory block, the memory calls and their results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

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
    # a stored message with a lone surrogate (JSON allows it escaped; orjson does not)
    # beside the block: the view's answer was a 500
    upstream.completion_messages[shown_id].append(
        {"id": "m-sur", "role": "user", "content": "cut emoji \ud83d"})
    messages = (await sdk.chat.completions.messages.list(shown_id)).data
    assert [m.content for m in messages] == ["Which dashboard was it?", "cut emoji \ud83d"]
    await sdk.chat.completions.delete(shown_id)
    assert upstream.completions == {}


def test_messages_view_hides_a_result_listed_before_its_call() -> None:
    """``order=desc`` lists a memory result before the call that made it: it was kept
    (the call's id was learnt only after it)."""
    from proxy.wire.chatview import messages_view
    from proxy.wire.responseview import Shown

    call = {"id": "call_m", "type": "function",
            "function": {"name": "memory_search", "arguments": "{}"}}
    newest_first = [
        {"id": "m3", "role": "tool", "tool_call_id": "call_m", "content": "recalled"},
        {"id": "m2", "role": "assistant", "content": None, "tool_calls": [call]},
        {"id": "m1", "role": "user", "content": "hi"}]
    page = {"object": "list", "data": newest_first, "first_id": "m3", "last_id": "m1",
            "has_more": False}
    got = messages_view(page, Shown({"id": "c1"}, frozenset({"memory_search"})))
    assert [m["id"] for m in got["data"]] == ["m1"]
    assert (got["first_id"], got["last_id"]) == ("m1", "m1")


def test_a_page_of_hidden_rounds_only_keeps_its_cursor() -> None:
    """A page whose every completion was a hidden round came back with ``last_id``
    null: no cursor to page on from."""
    from proxy.wire.chatview import list_view

    page = {"object": "list", "data": [{"id": "h1"}, {"id": "h2"}], "first_id": "h1",
            "last_id": "h2", "has_more": True}
    got = list_view(page, {"h1", "h2"})
    assert got["data"] == [] and (got["first_id"], got["last_id"]) == ("h1", "h2")
    assert got["has_more"] is True


async def test_a_block_before_the_clients_content_parts_is_not_read_back(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A user message of content parts gets the block as a leading text part
    (:func:`proxy.rewrite.inject_block`); its stored copy reads back with the
    client's parts only."""
    sdk = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    parts = [{"type": "text", "text": "Which dashboard was it?"}]
    messages: Any = [{"role": "user", "content": parts}]
    made = await sdk.chat.completions.create(model="m", messages=messages, store=True)
    await proxy.settle()
    stored = upstream.completion_messages[made.id][0]["content"]
    assert stored[0]["text"].startswith(BLOCK_MARKER) and stored[1:] == parts
    page = await sdk.get(f"/chat/completions/{made.id}/messages", cast_to=object)
    assert [m["content"] for m in page["data"]] == [parts]  # type: ignore[index]


@pytest.mark.parametrize("as_parts", [False, True])
async def test_a_later_turns_block_is_not_read_back(
        proxy: RunningProxy, upstream: FakeUpstream, as_parts: bool) -> None:
    """A block after the thread's first turn has no guidelines: it opens with a
    section header (``[User Preferences]``, ``[Memory]``…), not the bootstrap
    marker, and was read back inside the user's message."""
    proxy.engine.set_agent_memory(tenant="*", role="default", category="user_preferences",
                                  key="units", title="Units", content="metric")
    sdk = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    first: Any = [{"role": "user", "content": "I always deploy with Argo CD, remember that."}]
    upstream.push(Reply(content="Noted."))
    await sdk.chat.completions.create(model="m", messages=first, store=True)
    await proxy.settle()
    ask = "How do I deploy?"
    content: Any = [{"type": "text", "text": ask}] if as_parts else ask
    history: Any = [*first, {"role": "assistant", "content": "Noted."},
                    {"role": "user", "content": content}]
    upstream.push(Reply(content="With Argo CD."))
    made = await sdk.chat.completions.create(model="m", messages=history, store=True)
    await proxy.settle()
    sent = upstream.completion_messages[made.id][-1]["content"]
    sent_text = sent[0]["text"] if as_parts else sent
    assert "[Current Request]" in sent_text and not sent_text.startswith(BLOCK_MARKER)
    page = await sdk.get(f"/chat/completions/{made.id}/messages", cast_to=object)
    assert page["data"][-1]["content"] == content  # type: ignore[index]


async def test_a_users_own_text_shaped_like_a_block_is_read_back_whole(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A turn that got no block, whose user text itself opens with a section header
    and holds a ``[Current Request]`` line (a pasted block, a relayed agent message),
    was read back cut after that line: split_block finds the block by its shape. The
    proxy notes whether a block went in (``Shown.block``); the shape is read only
    where it did, or where nothing was noted (another replica, a restart)."""
    sdk = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    first: Any = [{"role": "user", "content": "hello there"}]
    upstream.push(Reply(content="Hi."))
    await sdk.chat.completions.create(model="m", messages=first, store=True)
    await proxy.settle()
    text = "[Memory]\n- the old log says X\n[Current Request]\nwhat does that log mean?"
    upstream.push(Reply(content="ok"))
    made = await sdk.chat.completions.create(
        model="m", store=True,
        messages=[*first, {"role": "assistant", "content": "Hi."},
                  {"role": "user", "content": text}])
    await proxy.settle()
    assert upstream.completion_messages[made.id][-1]["content"] == text  # no block went in
    page = await sdk.get(f"/chat/completions/{made.id}/messages", cast_to=object)
    assert page["data"][-1]["content"] == text  # type: ignore[index]
