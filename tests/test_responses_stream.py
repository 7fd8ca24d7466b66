"""The Responses stream round, sans-io: byte scripts in the real format
(tests/fake_responses.py) through :class:`ResponsesStreamRound`."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from proxy.sse import SSEDecoder
from proxy.wire.responsesstream import (
    ResponsesStreamRound,
    ShowPrevious,
    StreamState,
    terminal_bytes,
)
from tests.fake_responses import ResponsesFake, RReply

NAMES = {"memory_grep": "memory_grep"}
GREP = {"call_id": "call_m", "name": "memory_grep", "arguments": '{"query":"x"}'}
CLIENT = {"call_id": "call_w", "name": "get_weather", "arguments": '{"city":"Oslo"}'}


def script(fake: ResponsesFake, reply: RReply) -> bytes:
    return fake.stream_bytes(fake.build({"model": "m"}, reply), reply)


def run(sr: ResponsesStreamRound, data: bytes, size: int) -> bytes:
    out = b""
    for at in range(0, len(data), size):
        out += sr.feed(data[at:at + size])
    return out + sr.close()


def events(data: bytes) -> list[dict[str, Any]]:
    dec = SSEDecoder()
    return [orjson.loads(e.data) for e in dec.feed(data) + dec.close()]


@pytest.mark.parametrize("size", [1, 3, 64, 100000])
def test_a_round_without_memory_calls_is_relayed_byte_for_byte(size: int) -> None:
    fake = ResponsesFake()
    data = script(fake, RReply(text="hello world", reasoning="E", calls=[CLIENT]))
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, size)
    end, final = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data
    assert final is not None and final["status"] == "completed"
    assert sr.messages()[0]["content"] == "hello world"


@pytest.mark.parametrize("size", [1, 7, 100000])
def test_a_memory_call_round_shows_nothing(size: int) -> None:
    fake = ResponsesFake()
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    assert run(sr, script(fake, RReply(text=None, calls=[GREP])), size) == b""
    assert not sr.shown and sr.answered()
    assert [c["name"] for c in sr.messages()[0]["items"]] == ["memory_grep"]


@pytest.mark.parametrize("size", [1, 7, 100000])
def test_a_round_of_reasoning_and_a_memory_call_shows_nothing(size: int) -> None:
    """A reasoning model reasons before every call: its reasoning was shown, so the
    round that only called memory was the client's response (its id, in a stream;
    not in a plain answer), one the upstream holds as ending in an unanswered call."""
    fake = ResponsesFake()
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    data = script(fake, RReply(text=None, reasoning="E", calls=[GREP]))
    assert run(sr, data, size) == b""
    assert not sr.shown and state.output == [] and state.next_index == 0
    assert [i["type"] for i in sr.messages()[0]["items"]] == ["reasoning", "function_call"]
    nxt = ResponsesStreamRound(NAMES, state, first=False)
    out = run(nxt, script(fake, RReply(text="found", reasoning="F")), size)
    end, final = terminal_bytes(nxt, state, rounds=2, usage=None)
    shown = events(out + end)
    assert final is not None and final["id"] == "resp_0002" == shown[0]["response"]["id"]
    assert [i["type"] for i in final["output"]] == ["reasoning", "message"]
    assert [e["sequence_number"] for e in shown] == list(range(len(shown)))


@pytest.mark.parametrize("size", [1, 100000])
def test_reasoning_alone_ends_the_answer_shown(size: int) -> None:
    """A round that only reasons (cut off by ``max_output_tokens``) shows its reasoning
    at the end, byte for byte, comments in place."""
    fake = ResponsesFake()
    data = script(fake, RReply(text=None, reasoning="E", response_status="incomplete"))
    at = data.index(b"event: response.output_item.done")
    data = data[:at] + b": keep-alive\n\n" + data[at:]
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, size)
    end, final = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data
    assert final is not None and [i["type"] for i in final["output"]] == ["reasoning"]


def test_rounds_join_into_one_answer() -> None:
    fake = ResponsesFake()
    state = StreamState()
    first = ResponsesStreamRound(NAMES, state, first=True)
    out = run(first, script(fake, RReply(text="looking", calls=[GREP])), 5)
    second = ResponsesStreamRound(NAMES, state, first=False)
    out += run(second, script(fake, RReply(text="found", calls=[CLIENT])), 5)
    end, final = terminal_bytes(second, state, rounds=2, usage={"total_tokens": 30})
    shown = events(out + end)
    kinds = [e["type"] for e in shown]
    assert kinds.count("response.created") == 1 and kinds[-1] == "response.completed"
    assert [e["sequence_number"] for e in shown] == list(range(len(shown)))
    assert [e["output_index"] for e in shown if e["type"] == "response.output_item.added"] == [
        0, 1, 2]
    assert "memory_grep" not in (out + end).decode()
    assert final is not None and final["id"] == "resp_0001" and final["usage"] == {
        "total_tokens": 30}
    assert [(o["type"], o.get("name")) for o in final["output"]] == [
        ("message", None), ("message", None), ("function_call", "get_weather")]


@pytest.mark.parametrize("size", [1, 7, 100000])
def test_a_structured_rounds_message_is_held_and_a_hidden_one_never_numbered(
        size: int) -> None:
    """With ``hold_text`` a round of a message and a memory call shows nothing; the
    next round's message is held to its end and then shown at ``output_index`` 0,
    sequence numbers contiguous, the restated terminal holding only it."""
    fake = ResponsesFake()
    state = StreamState()
    first = ResponsesStreamRound(NAMES, state, first=True, hold_text=True)
    assert run(first, script(fake, RReply(text="Let me check.", calls=[GREP])), size) == b""
    assert not first.shown and first.holds() and state.output == []
    assert [i["type"] for i in first.messages()[0]["items"]] == ["message", "function_call"]
    second = ResponsesStreamRound(NAMES, state, first=False, hold_text=True)
    out = run(second, script(fake, RReply(text='{"a":1}', reasoning="E")), size)
    assert out == b"" and second.holds()
    end, final = terminal_bytes(second, state, rounds=2, usage=None)
    shown = events(out + end)
    assert [e["sequence_number"] for e in shown] == list(range(len(shown)))
    assert [(e["output_index"], e["item"]["type"]) for e in shown
            if e["type"] == "response.output_item.added"] == [(0, "reasoning"), (1, "message")]
    assert b"Let me check." not in out + end
    assert final is not None and final["id"] == "resp_0002"
    assert [i["type"] for i in final["output"]] == ["reasoning", "message"]


def test_a_structured_rounds_message_goes_before_a_client_call_in_its_place() -> None:
    """A held message is shown, in its place, once a client call shows the round;
    a single round is then relayed byte for byte."""
    fake = ResponsesFake()
    data = script(fake, RReply(text="Calling.", calls=[CLIENT]))
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True, hold_text=True)
    out = run(sr, data, 5)
    assert sr.shown and not sr.holds()
    end, _ = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data


def only_deltas(data: bytes) -> bytes:
    """The stream as some compatible servers send it: no output_item events, the
    items only in the terminal event."""
    dec = SSEDecoder()
    keep = b""
    n = 0
    for e in dec.feed(data) + dec.close():
        obj = orjson.loads(e.data)
        if obj["type"] not in ("response.output_item.added", "response.output_item.done"):
            obj["sequence_number"], n = n, n + 1
            keep += f"event: {e.event}\ndata: ".encode() + orjson.dumps(obj) + b"\n\n"
    return keep


def test_items_only_in_the_terminal_event_are_kept_for_the_record() -> None:
    fake = ResponsesFake()
    data = only_deltas(script(fake, RReply(text="hello world")))
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, 5)
    end, final = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data  # one unaltered round: the client's bytes as they came
    assert [o["type"] for o in state.output] == ["message"]  # what the turn records
    assert final is not None and final["output"] == state.output


def test_after_a_memory_round_terminal_only_items_reach_the_restated_terminal() -> None:
    fake = ResponsesFake()
    state = StreamState()
    first = ResponsesStreamRound(NAMES, state, first=True)
    out = run(first, script(fake, RReply(text=None, calls=[GREP])), 5)
    second = ResponsesStreamRound(NAMES, state, first=False)
    out += run(second, only_deltas(script(fake, RReply(text="found it"))), 5)
    end, final = terminal_bytes(second, state, rounds=2, usage={"total_tokens": 9})
    assert final is not None
    assert [o["type"] for o in final["output"]] == ["message"]
    assert "found it" in orjson.dumps(final["output"]).decode()
    assert "memory_grep" not in (out + end).decode()


@pytest.mark.parametrize("size", [1, 7, 100000])
def test_a_replayed_stream_shows_the_clients_previous_id_and_nothing_else_changes(
        size: int) -> None:
    fake = ResponsesFake()
    resp = fake.build({"model": "m"}, RReply(text="hi"))
    assert resp["previous_response_id"] is None
    data = fake.stream_bytes(resp, RReply(text="hi"))
    rw = ShowPrevious("resp_prev", streamed=True)
    out = b"".join(rw.feed(data[at:at + size]) for at in range(0, len(data), size))
    out += rw.close()
    before, after = events(data), events(out)
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        if isinstance(old.get("response"), dict):
            assert new["response"]["previous_response_id"] == "resp_prev"
            assert dict(new["response"], previous_response_id=None) == old["response"]
        else:
            assert new == old
    # Events without a response object keep their exact bytes.
    assert b'"type":"response.output_text.delta"' in out
    assert out.count(b"resp_prev") == sum(1 for e in before if "response" in e)


def test_a_replayed_plain_answer_shows_the_clients_previous_id() -> None:
    fake = ResponsesFake()
    resp = fake.build({"model": "m"}, RReply(text="hi"))
    body = orjson.dumps(resp)
    rw = ShowPrevious("resp_prev", streamed=False)
    assert rw.feed(body[:10]) == b"" and rw.feed(body[10:]) == b""
    assert orjson.loads(rw.close()) == dict(resp, previous_response_id="resp_prev")
    # An answer that names a previous id, or is no JSON, goes as it came.
    named = orjson.dumps(dict(resp, previous_response_id="resp_x"))
    for given in (named, b"not json"):
        rw = ShowPrevious("resp_prev", streamed=False)
        rw.feed(given)
        assert rw.close() == given


@pytest.mark.parametrize("numbering", ["from 1", "none"])
def test_a_single_round_keeps_the_upstreams_numbering(numbering: str) -> None:
    """A compatible server that numbers its events from 1, or not at all: one round
    with no memory call is relayed byte for byte (no number rewritten or added); a
    later round continues the upstream's count, or adds none."""
    fake = ResponsesFake()
    data = script(fake, RReply(text="hello", calls=[CLIENT]))
    shifted = []
    for e in events(data):
        if numbering == "none":
            e.pop("sequence_number")
        else:
            e["sequence_number"] += 1
        shifted.append(b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e)
                       + b"\n\n")
    data = b"".join(shifted)
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, 7)
    end, _ = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data
    state = StreamState()
    first = ResponsesStreamRound(NAMES, state, first=True)
    out = run(first, b"".join(shifted[:-1]), 7)  # no terminal yet: a later round follows
    second = ResponsesStreamRound(NAMES, state, first=False)
    out += run(second, data, 7)
    end, _ = terminal_bytes(second, state, rounds=2, usage=second.usage())
    numbers = [e.get("sequence_number") for e in events(out + end)]
    if numbering == "none":
        assert set(numbers) == {None}
    else:
        assert numbers == list(range(1, len(numbers) + 1))


@pytest.mark.parametrize("size", [1, 5, 100000])
def test_comments_between_the_head_events_keep_their_place(size: int) -> None:
    """A keep-alive comment after ``response.created`` (relays and gateways send them
    while the model thinks) went out at once while the head events it follows were
    held for the first item: the client got it ahead of ``response.created``."""
    fake = ResponsesFake()
    data = script(fake, RReply(text="hello"))
    blocks = data.split(b"\n\n")[:-1]
    data = b"".join(block + b"\n\n" + (b": keep-alive\n\n" if i < 2 else b"")
                    for i, block in enumerate(blocks))
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, size)
    end, _ = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data


def _unnamed_then_named(first_name: str) -> tuple[bytes, list[dict[str, Any]]]:
    """A bridged stream (tests/test_wire_replays_more7.py, row 149): call 0 opened
    without a name and named when done, call 1 (the client's ``get_weather``) opened
    named while call 0 is still unnamed, their events interleaved."""
    seq = iter(range(100))

    def ev(kind: str, **fields: Any) -> bytes:
        obj = {"type": kind, "sequence_number": next(seq), **fields}
        return f"event: {kind}\ndata: ".encode() + orjson.dumps(obj) + b"\n\n"

    done0 = {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": first_name,
             "arguments": '{"query":"x"}', "status": "completed"}
    done1 = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
             "arguments": '{"city":"Oslo"}', "status": "completed"}
    opened = [dict(done0, name="", arguments="", status="in_progress"),
              dict(done1, arguments="", status="in_progress")]
    resp = {"id": "resp_u", "object": "response", "status": "in_progress", "output": []}
    data = ev("response.created", response=resp)
    data += b"".join(ev("response.output_item.added", output_index=i, item=it)
                     for i, it in enumerate(opened))
    data += b"".join(ev("response.function_call_arguments.delta", output_index=i,
                        item_id=d["id"], delta=d["arguments"])
                     for i, d in enumerate((done0, done1)))
    data += b"".join(ev("response.output_item.done", output_index=i, item=d)
                     for i, d in enumerate((done0, done1)))
    data += ev("response.completed", response=dict(resp, status="completed",
                                                   output=[done0, done1]))
    return data, [done0, done1]


@pytest.mark.parametrize("size", [1, 64, 100000])
def test_a_call_after_an_unnamed_client_call_keeps_its_place(size: int) -> None:
    # before: the later call went out first, at output_index 0, while the terminal's
    # output listed it second (and the bytes were rewritten)
    data, _ = _unnamed_then_named("read_config")
    state = StreamState()
    sr = ResponsesStreamRound(NAMES, state, first=True)
    out = run(sr, data, size)
    end, _final = terminal_bytes(sr, state, rounds=1, usage=sr.usage())
    assert out + end == data


def test_a_call_after_an_unnamed_memory_call_takes_its_index() -> None:
    data, (_grep, weather) = _unnamed_then_named("memory_grep")
    sr = ResponsesStreamRound(NAMES, StreamState(), first=True)
    shown = [e for e in events(run(sr, data, 100000)) if "output_index" in e]
    assert [(e["type"], e["output_index"]) for e in shown] == [
        ("response.output_item.added", 0), ("response.function_call_arguments.delta", 0),
        ("response.output_item.done", 0)]
    assert shown[-1]["item"] == weather and b"fc_0" not in orjson.dumps(shown)
