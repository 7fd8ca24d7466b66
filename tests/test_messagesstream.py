"""The Messages wire adapter, sans-io: the stream round over byte scripts (any
split), the block's place, and the mapping of memory-path edits back onto blocks."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from proxy.wire import messages as mw
from proxy.wire.messagesstream import MessagesStreamRound
from tests.fake_anthropic import AReply, stream_bytes, text, thinking, tool_use

NAMES = {"memory_grep": "memory_grep"}
SIG = "c2lnbmF0dXJl" * 4


def events(data: bytes) -> list[dict[str, Any]]:
    out = []
    for block in data.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                out.append(orjson.loads(line[6:]))
    return out


def run(payload: bytes, size: int, **kw: Any) -> tuple[MessagesStreamRound, bytes]:
    sr = MessagesStreamRound(NAMES, **kw)
    out = b""
    for s in range(0, len(payload), size):
        out += sr.feed(payload[s:s + size])
    return sr, out + sr.close()


@pytest.mark.parametrize("size", [1, 2, 7, 64, 100_000])
def test_memory_tool_block_is_removed_and_the_rest_renumbered(size: int) -> None:
    reply = AReply(content=[thinking("hmm", SIG), tool_use("t1", "memory_grep", {"query": "x"}),
                            text("hi"), tool_use("t2", "read_file", {"path": "a"})])
    payload = stream_bytes({"model": "m"}, reply)
    sr, out = run(payload, size)
    got = events(out)
    assert [e["type"] for e in got][:2] == ["message_start", "ping"]
    starts = [(e["index"], e["content_block"]["type"]) for e in got
              if e["type"] == "content_block_start"]
    assert starts == [(0, "thinking"), (1, "text"), (2, "tool_use")]
    assert all(e.get("index") in (None, 0, 1, 2) for e in got)
    assert not any(e["type"] in ("message_delta", "message_stop") for e in got)  # held
    assert [k for k, _ in sr.tail] == ["finish", "done"]
    assert sr.shown and sr.answered() and sr.stop_reason == "tool_use"
    content = sr.content()
    assert content[0] == thinking("hmm", SIG)
    assert content[1] == tool_use("t1", "memory_grep", {"query": "x"})
    assert sr.content(client_only=True) == [content[0], text("hi"), content[3]]
    # unchanged events keep their exact bytes (the thinking block's, the ping)
    assert b'"signature_delta","signature":"' + SIG.encode() in out
    assert payload.split(b"\n\n")[1] + b"\n\n" in out


def test_later_round_drops_message_start_and_continues_indices() -> None:
    payload = stream_bytes({"model": "m"}, AReply(content=[text("done")]))
    sr, out = run(payload, 5, client_offset=3, later=True)
    got = events(out)
    assert "message_start" not in [e["type"] for e in got]
    assert {e["index"] for e in got if "index" in e} == {3}
    assert sr.next_index == 4


def test_a_hidden_round_shows_nothing() -> None:
    payload = stream_bytes({"model": "m"}, AReply(
        content=[tool_use("t1", "memory_grep", {"query": "x"})]))
    sr, out = run(payload, 3)
    assert not sr.shown
    assert [e["type"] for e in events(out)] == ["message_start", "ping"]


@pytest.mark.parametrize("size", [1, 7, 100_000])
def test_a_structured_rounds_text_is_held_until_a_client_block_shows_it(size: int) -> None:
    """With ``hold_text`` (a structured answer) text before and after a memory call
    is held while nothing was shown; a client block shows it first, in its place,
    indexes from the offset; a round of text and a memory call shows no block."""
    grep = tool_use("t1", "memory_grep", {"query": "x"})
    payload = stream_bytes({"model": "m"}, AReply(content=[text("Let me check."), grep]))
    sr, out = run(payload, size, hold_text=True)
    assert [e["type"] for e in events(out)] == ["message_start", "ping"]
    assert not sr.shown and sr.holds() and sr.content(client_only=True) == []
    assert sr.content() == [text("Let me check."), grep]
    payload = stream_bytes({"model": "m"}, AReply(content=[
        thinking("hmm", SIG), text("Reading."), grep, tool_use("t2", "read_file", {"p": 1})]))
    sr, out = run(payload, size, client_offset=2, later=True, hold_text=True)
    starts = [(e["index"], e["content_block"]["type"]) for e in events(out)
              if e["type"] == "content_block_start"]
    assert starts == [(2, "thinking"), (3, "text"), (4, "tool_use")]
    assert not sr.holds() and sr.next_index == 5
    assert [b["type"] for b in sr.content(client_only=True)] == ["thinking", "text", "tool_use"]


def test_a_structured_answers_text_is_shown_when_the_round_ends_it() -> None:
    """The answering round's held text is released at the end, exact bytes."""
    payload = stream_bytes({"model": "m"}, AReply(content=[text('{"a":1}')]))
    sr, out = run(payload, 5, hold_text=True)
    assert [e["type"] for e in events(out)] == ["message_start", "ping"]
    rest = sr.release()
    assert out + rest + b"".join(raw for _, raw in sr.tail) == payload
    assert sr.shown and sr.content(client_only=True) == [text('{"a":1}')]


def test_restated_delta_carries_the_answers_stop_and_usage() -> None:
    raw = mw.sse_event("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 3}})
    out = mw.MESSAGES.restate("finish", raw, finish_reason="end_turn",
                              usage={"input_tokens": 20, "output_tokens": 9},
                              stream_id=None, created=None)
    assert out.startswith(b"event: message_delta\n")
    ev = events(out)[0]
    assert ev["delta"]["stop_reason"] == "end_turn" and ev["usage"]["output_tokens"] == 9


def test_block_after_tool_results_and_breakpoint() -> None:
    msg = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "ok"},
        {"type": "text", "text": "go", "cache_control": {"type": "ephemeral"}}]}
    out = mw.with_block(msg, "BLOCK")
    assert out["content"][:2] == msg["content"] and out["content"][2] == text("BLOCK")
    assert mw.with_block({"role": "user", "content": "hi"}, "B\n[Current Request]\n")[
        "content"] == [text("hi"), text("B")]


def test_map_back_refuses_a_tool_result_cut_from_its_tool_use() -> None:
    body = {"messages": [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [tool_use("t1", "read_file", {})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"}]}
    msgs = body["messages"]
    scaffold = [{"role": "user", "content": "summary"}, {"role": "assistant", "content": "ok"}]
    assert mw.map_back(body, [*scaffold, *msgs[2:]]) is None
    kept = mw.map_back(body, [*scaffold, *msgs[3:]])
    assert kept is not None and kept[2] is msgs[3] and kept[3] is msgs[4]
    injected = dict(msgs[4], content="BLOCK\nc")
    out = mw.map_back(body, [*msgs[:4], injected])
    assert out is not None and out[:4] == msgs[:4]
    assert out[4]["content"] == [text("c"), text("BLOCK")]


def test_tool_blocks_are_searchable_text_and_counted_by_size() -> None:
    from memory_core.assembly import budget
    from memory_core.capture.tree import message_text
    big = "x " * 4000
    msg = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [text("CFLAGS=-O3")]},
        {"type": "tool_result", "tool_use_id": "u", "content": big}]}
    assert message_text(msg).startswith("CFLAGS=-O3\n")
    call = {"role": "assistant", "content": [tool_use("t", "read_file", {"path": "Makefile"})]}
    assert message_text(call) == 'read_file({"path":"Makefile"})'
    assert budget.message_tokens(msg) > budget.count_tokens(big)  # not an image's 765
