"""Counting what a Responses or Messages request forwards that is not text
(memory_core/assembly/budget.py): encrypted reasoning and compaction items, images, files and
documents, hosted tools' items; and a Responses session whose encrypted reasoning
alone overflows a small window is compacted to fit, where before the reasoning was
not counted at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import orjson

from memory_core.assembly import budget
from proxy.wire.responses import RESPONSES, to_turns
from tests.conftest import TEST_KEY, start_proxy
from tests.fake_upstream import FakeUpstream

SECRET = "gAAAAB" + "x9Qz" * 2000  # 8006 characters of base64


def _reasoning(i: int) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{i}", "encrypted_content": SECRET,
            "summary": [{"type": "summary_text", "text": f"Thinking about step {i}."}]}


def test_encrypted_reasoning_and_compaction_items_count() -> None:
    least = len(SECRET) // budget.ENCRYPTED_CHARS_PER_TOKEN
    reply = to_turns([_reasoning(1), {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": "ok"}]}])[0]
    bare = to_turns([{"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": "ok"}]}])[0]
    assert budget.message_tokens(reply) >= budget.message_tokens(bare) + least
    compaction = to_turns([{"type": "compaction", "encrypted_content": SECRET}])[0]
    assert budget.message_tokens(compaction) >= least
    # an unknown item counts its JSON, not an image's constant
    unknown = to_turns([{"type": "future_item", "payload": "word " * 3000}])[0]
    assert budget.message_tokens(unknown) >= 3000
    # hosted tools' calls count too (their results can be long)
    search = to_turns([{"type": "file_search_call", "id": "fs_1", "status": "completed",
                        "queries": ["q"], "results": [{"text": "hit " * 2000}]}])[0]
    assert budget.message_tokens(search) >= 2000


def test_images_files_and_documents_count() -> None:
    def user(*parts: Any) -> dict[str, Any]:
        return {"role": "user", "content": list(parts)}

    text = {"type": "input_text", "text": "look"}
    base = budget.message_tokens(user(text))
    image = {"type": "input_image", "image_url": "https://example.com/a.png"}
    assert budget.message_tokens(user(text, image)) == base + budget.MAX_IMAGE_TOKENS
    by_id = {"type": "input_file", "file_id": "file_1"}
    assert budget.message_tokens(user(text, by_id)) == base + budget.FILE_REF_TOKENS
    inline = {"type": "input_file", "filename": "a.pdf",
              "file_data": "data:application/pdf;base64," + "JVBE" * 40_000}
    assert budget.message_tokens(user(text, inline)) >= base + 40_000
    # Anthropic Messages blocks
    a_image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    a_pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                            "data": "JVBE" * 40_000}}
    a_txt = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                            "data": "alpha beta " * 1000}}
    a_text = {"type": "text", "text": "look"}
    a_base = budget.message_tokens(user(a_text))
    assert budget.message_tokens(user(a_text, a_image)) == a_base + budget.MAX_IMAGE_TOKENS
    assert budget.message_tokens(user(a_text, a_pdf)) >= a_base + 40_000
    assert budget.message_tokens(user(a_text, a_txt)) >= a_base + 2000
    thinking = {"type": "thinking", "thinking": "step " * 500, "signature": "sig"}
    assert budget.message_tokens({"role": "assistant", "content": [thinking]}) >= 500
    # chat's image_url keeps its constant
    chat = {"type": "image_url", "image_url": {"url": "u"}}
    assert budget.message_tokens(user(chat)) == budget.MESSAGE_OVERHEAD + budget.IMAGE_PART_TOKENS


def test_the_byte_bound_holds_for_every_estimate() -> None:
    """The memory path skips counting under a bound made of the body's bytes and
    :func:`budget.media_upper_bound`: every estimate must stay under it."""
    items = [{"role": "user", "content": [
                 {"type": "input_text", "text": "hi"},
                 {"type": "input_image", "image_url": "https://e/a.png"},
                 {"type": "input_file", "file_id": "f"},
                 {"type": "input_file", "file_data": "QUJD"}]},
             _reasoning(1), {"type": "compaction", "encrypted_content": "abc"},
             {"role": "user", "content": [
                 {"type": "image", "source": {"type": "file", "file_id": "f"}},
                 {"type": "document", "source": {"type": "url", "url": "https://e/d.pdf"}}]}]
    raw = orjson.dumps({"model": "m", "input": items})
    turns = RESPONSES.messages({"input": items})
    assert budget.messages_tokens(turns) <= len(raw) + budget.media_upper_bound(raw)


def test_remembered_counts_leave_the_reasoning_out() -> None:
    """A reply's stored id stands for its text and calls, with or without the
    reasoning its echo carries: the reasoning is counted each time."""
    with_reasoning = to_turns([_reasoning(1), {"type": "message", "role": "assistant",
                                               "content": "ok"}])[0]
    without = to_turns([{"type": "message", "role": "assistant", "content": "ok"}])[0]
    counts = budget.MessageCounts()
    assert counts.total([without], [7]) == budget.message_tokens(without)
    assert counts.total([with_reasoning], [7]) == budget.message_tokens(with_reasoning)
    assert budget.message_tokens(with_reasoning) > budget.message_tokens(without) + 3000


async def test_encrypted_reasoning_over_a_window_is_compacted_to_fit(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              context={"model_windows": ["tiny-*=16384"]})
    try:
        items: list[Any] = []
        for i in range(6):
            items += [{"role": "user", "content": f"Step {i}: run the migration part {i}."},
                      _reasoning(i), {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text",
                                                   "text": f"Done with part {i}."}]}]
        items.append({"role": "user", "content": "What is left?"})
        limit = budget.request_budget({"model": "tiny-1"},
                                      proxy.engine.config.context).input_tokens
        assert budget.messages_tokens(RESPONSES.messages({"input": items})) > limit
        async with aiohttp.ClientSession() as http, http.post(
                proxy.base_url + "/responses", json={"model": "tiny-1", "input": items},
                headers={"Authorization": f"Bearer {TEST_KEY}"}) as resp:
            assert resp.status == 200
            headers = resp.headers
        assert headers["x-lcm-memory"] != "over-budget"
        assert headers.get("x-lcm-context-compacted") == "inline"
        sent = upstream.responses_requests[-1]["json"]
        counted = budget.messages_tokens(RESPONSES.messages(sent)) + budget.tools_tokens(
            sent.get("tools"))
        assert counted <= limit, (counted, limit)
        assert sent["input"][-1]["content"][-1]["text"] == "What is left?"
    finally:
        await proxy.close()
