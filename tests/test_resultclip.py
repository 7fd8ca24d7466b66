"""Tool results cut in their middle to fit the context window (proxy.flow.resultclip),
sans-io: what is kept, what the note says, when it gives up."""

from __future__ import annotations

import copy
from typing import Any

from memory_core.tokens import count_tokens
from proxy.flow.resultclip import MIN_KEEP_TOKENS, clip_results

LOG = "".join(f"line {i}: request served in {i % 97} ms\n" for i in range(3000))


def test_a_large_result_keeps_its_head_and_tail_and_says_where_the_rest_is() -> None:
    tool = {"role": "tool", "tool_call_id": "c1", "content": LOG}
    messages: list[Any] = [{"role": "user", "content": "why slow?"}, tool]
    before = copy.deepcopy(messages)
    over = count_tokens(LOG) - 2_000
    got = clip_results(messages, over, {id(tool): 42}, tools=True)
    assert got is not None
    out, clipped = got
    assert clipped == 1 and messages == before  # the input is not changed
    text = out[1]["content"]
    assert text.startswith("line 0: ") and text.endswith("line 2999: request served in 89 ms\n")
    assert "stored as message 42" in text and "view_message(42)" in text
    assert count_tokens(LOG) - count_tokens(text) >= over
    # without the memory tools the note names no tool
    out, _ = clip_results(messages, over, {id(tool): 42}) or ([], 0)
    assert "stored as message 42" in out[1]["content"]
    assert "view_message" not in out[1]["content"]


def test_anthropic_text_parts_are_cut_and_images_left_alone() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AA=="}}
    turn = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1",
         "content": [{"type": "text", "text": LOG}, image]},
        {"type": "text", "text": "Keep going."}]}
    out, clipped = clip_results([turn], count_tokens(LOG) // 2, {}) or ([], 0)
    assert clipped == 1
    parts = out[0]["content"][0]["content"]
    assert parts[1] == image and len(parts[0]["text"]) < len(LOG)
    assert "left out to fit the context window]" in parts[0]["text"]
    assert out[0]["content"][1] == {"type": "text", "text": "Keep going."}


def test_nothing_is_cut_when_cutting_everything_would_not_be_enough() -> None:
    small = {"role": "tool", "tool_call_id": "c1", "content": "ok " * (MIN_KEEP_TOKENS + 50)}
    assert clip_results([small], 10_000, {}) is None
    assert clip_results([{"role": "user", "content": LOG}], 100, {}) is None  # not a result
