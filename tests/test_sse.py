"""SSEDecoder and ChunkAccumulator, fed from byte generators (no sockets)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.sse import ChunkAccumulator, SSEDecoder, SSEEvent, content_text
from tests.fake_upstream import FakeUpstream, Reply

# -- helpers -------------------------------------------------------------------------


def decode(chunks: Iterable[bytes]) -> tuple[list[SSEEvent], int]:
    """Feed ``chunks`` one by one, then close; return (events, comments)."""
    dec = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += dec.feed(chunk)
    events += dec.close()
    return events, dec.comments


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """Split ``data`` at the given offsets (sorted, duplicates allowed)."""
    out, prev = [], 0
    for cut in sorted(cuts):
        out.append(data[prev:cut])
        prev = cut
    out.append(data[prev:])
    return out


def pieces(data: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def accumulate(events: Iterable[SSEEvent]) -> ChunkAccumulator:
    acc = ChunkAccumulator()
    for ev in events:
        acc.add_event(ev)
    return acc


def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": choices, **extra}


def sse(*objs: Any, nl: bytes = b"\n", done: bool = True) -> bytes:
    out = b"".join(b"data: " + orjson.dumps(o) + nl + nl for o in objs)
    return out + (b"data: [DONE]" + nl + nl if done else b"")


def realistic_stream(**reply: Any) -> bytes:
    """The bytes the fake upstream would stream for ``Reply(**reply)``."""
    body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}}
    return FakeUpstream().stream_bytes(body, Reply(**reply))


TOOL = {"id": "call_abc123", "name": "get_weather_forecast",
        "arguments": '{"city": "Zürich", "days": 3, "units": "metric"}'}


# -- decoder -------------------------------------------------------------------------


def test_event_split_at_every_byte_offset() -> None:
    data = realistic_stream(content="Hello, 世界! ✓", tool_calls=[TOOL], piece=3)
    whole, _ = decode([data])
    assert len(whole) > 10 and whole[-1].data == "[DONE]"
    for cut in range(len(data) + 1):
        assert decode(split_at(data, [cut]))[0] == whole, cut


def test_byte_at_a_time_and_two_cut_points() -> None:
    data = sse(chunk([{"index": 0, "delta": {"content": "ab"}}]),
               chunk([{"index": 0, "delta": {"content": "é"}}]), nl=b"\r\n")
    whole, _ = decode([data])
    assert [e.data for e in whole][-1] == "[DONE]" and len(whole) == 3
    assert decode(pieces(data, 1))[0] == whole
    for a in range(0, len(data) + 1, 3):
        for b in range(a, len(data) + 1, 5):
            assert decode(split_at(data, [a, b]))[0] == whole


def test_several_events_in_one_read() -> None:
    data = b"data: one\n\ndata: two\n\ndata: three\n\n"
    dec = SSEDecoder()
    assert [e.data for e in dec.feed(data)] == ["one", "two", "three"]
    assert dec.close() == []


@pytest.mark.parametrize("nl", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_line_endings_are_equivalent(nl: bytes) -> None:
    data = (b"event: message" + nl + b"id: 7" + nl + b"data: first line" + nl
            + b"data: second line" + nl + nl + b"data: [DONE]" + nl + nl)
    events, _ = decode(pieces(data, 2))
    assert events == [
        SSEEvent("first line\nsecond line", event="message", id="7"),
        SSEEvent("[DONE]", event="", id="7"),  # the last event id persists
    ]


def test_cr_at_read_boundary_followed_by_lf_is_one_line_ending() -> None:
    # If the CR and the LF were two line endings, the blank line between them would
    # dispatch "a" alone and then "b" alone.
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    assert dec.feed(b"\ndata: b\r") == []
    assert dec.feed(b"\n\r") == [SSEEvent("a\nb")]
    assert dec.feed(b"\n") == []  # the LF completing the CRLF is not another blank line
    assert dec.feed(b"data: c\n\n") == [SSEEvent("c")]
    assert dec.close() == []


def test_cr_terminated_event_is_dispatched_without_waiting_for_more_bytes() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: x\r\r") == [SSEEvent("x")]
    assert dec.feed(b"data: y\r\r") == [SSEEvent("y")]


def test_keepalive_comments_are_counted_and_ignored() -> None:
    data = (b": keep-alive\n\n" + b"data: a\n" + b": comment inside an event\n"
            + b"data: b\n\n" + b":\n\n" + b": keep-alive\r\n\r\n")
    events, comments = decode(pieces(data, 3))
    assert events == [SSEEvent("a\nb")]
    assert comments == 4


def test_field_parsing_follows_the_spec() -> None:
    data = (b"data:no-space\n\n"          # the space after the colon is optional
            b"data:  two spaces\n\n"      # only one space is removed
            b"data\n\n"                   # a field with no colon has an empty value
            b"retry: 1500\nunknown: x\ndata: r\n\n"
            b"retry: soon\ndata: bad-retry\n\n"
            b"event: only-an-event-type\n\n")  # no data: nothing is dispatched
    events, _ = decode([data])
    assert events == [
        SSEEvent("no-space"),
        SSEEvent(" two spaces"),
        SSEEvent(""),
        SSEEvent("r", retry=1500),
        SSEEvent("bad-retry"),
    ]


def test_utf8_split_inside_a_character_and_bom() -> None:
    data = "\ufeffdata: 日本語 ✓ 😀\n\n".encode()
    expected = [SSEEvent("日本語 ✓ 😀")]
    for cut in range(len(data) + 1):
        assert decode(split_at(data, [cut]))[0] == expected, cut
    assert decode([b"\xef", b"\xbb", b"\xbfdata: x\n\n"])[0] == [SSEEvent("x")]


def test_unterminated_final_event_is_flushed_by_close() -> None:
    for tail in (b"data: last", b"data: last\n", b"data: last\r", b"data: last\r\n"):
        dec = SSEDecoder()
        assert dec.feed(b"data: first\n\n" + tail) == [SSEEvent("first")]
        assert dec.close() == [SSEEvent("last")], tail
        assert dec.close() == []


# -- accumulator ---------------------------------------------------------------------


def test_done_and_usage_chunk_with_empty_choices() -> None:
    data = realistic_stream(content="The answer is 42.", piece=5)
    acc = accumulate(decode([data])[0])
    assert acc.done is True
    assert acc.usage == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert acc.bad_events == 0
    assert acc.messages() == [{"role": "assistant", "content": "The answer is 42."}]
    assert acc.finish_reasons() == ["stop"]
    assert (acc.id, acc.model, acc.system_fingerprint) == ("chatcmpl-fake", "m", "fp_fake")


def test_chunks_with_empty_choices_are_not_errors() -> None:
    # Azure sends prompt_filter_results with "choices": [] before the first delta.
    data = sse(
        {"id": "", "object": "", "created": 0, "model": "", "choices": [],
         "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]},
        chunk([{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]),
        chunk([], usage=None),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )
    acc = accumulate(decode([data])[0])
    assert acc.bad_events == 0
    assert acc.messages() == [{"role": "assistant", "content": "hi"}]
    assert acc.id == "chatcmpl-1" and acc.usage is None


def test_content_chunk_lists_are_kept_and_joined() -> None:
    # Mistral's reasoning models stream content as chunk lists; a string joins as text,
    # consecutive chunks of one type join, an empty delta between them joins nothing.
    think = [{"type": "thinking", "thinking": [{"type": "text", "text": "Let "}]}]
    more = [{"type": "thinking", "thinking": [{"type": "text", "text": "me see."}]}]
    data = sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": think}}]),
        chunk([{"index": 0, "delta": {"content": ""}}]),
        chunk([{"index": 0, "delta": {"content": more}}]),
        chunk([{"index": 0, "delta": {"content": "do"}}]),
        chunk([{"index": 0, "delta": {"content": [{"type": "text", "text": "ne"}]}}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )
    acc = accumulate(decode([data])[0])
    content = acc.messages()[0]["content"]
    assert content == [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]},
                       {"type": "text", "text": "done"}]
    assert content_text(content) == "done" and content_text("plain") == "plain"


def test_joined_chunks_keep_the_fields_of_later_chunks() -> None:
    # a field only a later chunk carries (a signature, ``closed``) stays on the joined
    # chunk: the turn sent back must carry what the upstream wrote
    first = [{"type": "thinking", "thinking": [{"type": "text", "text": "Let "}]}]
    last = [{"type": "thinking", "thinking": [{"type": "text", "text": "me see."}],
             "signature": "c2ln", "closed": True}]
    data = sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": first}}]),
        chunk([{"index": 0, "delta": {"content": last}}]),
        chunk([{"index": 0, "delta": {"content": [{"type": "text", "text": "do"}]}}]),
        chunk([{"index": 0, "delta": {"content": [
            {"type": "text", "text": "ne", "annotations": [{"n": 1}]}]}}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )
    content = accumulate(decode([data])[0]).messages()[0]["content"]
    assert content == [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}],
                        "signature": "c2ln", "closed": True},
                       {"type": "text", "text": "done", "annotations": [{"n": 1}]}]


def test_an_empty_content_list_leaves_a_string_answer_a_string() -> None:
    # ``"content": []`` in a delta (a server's role chunk) holds no chunk: the answer
    # streamed as strings stays a string, as it was before chunk lists were kept
    data = sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "content": []}}]),
        chunk([{"index": 0, "delta": {"content": "hi"}}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )
    assert accumulate(decode([data])[0]).messages()[0]["content"] == "hi"


def test_tool_call_fragments_split_mid_name_and_mid_arguments() -> None:
    second = {"id": "call_2", "name": "lookup", "arguments": '{"q": "a \\"quoted\\" b"}'}
    data = realistic_stream(content=None, tool_calls=[TOOL, second])
    # The fake splits names in half and arguments every 5 characters; re-split the
    # bytes too, so JSON strings are also cut mid-event.
    acc = accumulate(decode(pieces(data, 7))[0])
    (msg,) = acc.messages()
    assert msg["tool_calls"] == [
        {"id": t["id"], "type": "function",
         "function": {"name": t["name"], "arguments": t["arguments"]}}
        for t in (TOOL, second)
    ]
    assert orjson.loads(msg["tool_calls"][1]["function"]["arguments"]) == {"q": 'a "quoted" b'}
    assert acc.finish_reasons() == ["tool_calls"]


def test_interleaved_parallel_tool_calls() -> None:
    def frag(i: int, **fn: str) -> dict[str, Any]:
        return chunk([{"index": 0, "delta": {"tool_calls": [{"index": i, "function": fn}]}}])

    data = sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "c0", "type": "function",
             "function": {"name": "rea", "arguments": ""}},
            {"index": 1, "id": "c1", "type": "function",
             "function": {"name": "wri", "arguments": ""}}]}}]),
        frag(1, name="te"), frag(0, name="d"), frag(0, arguments='{"p":'),
        frag(1, arguments='{"p": "x"'), frag(0, arguments=' "y"}'), frag(1, arguments="}"),
        chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
    )
    (msg,) = accumulate(decode([data])[0]).messages()
    assert msg["content"] is None
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in msg["tool_calls"]] == [("c0", "read", '{"p": "y"}'),
                                            ("c1", "write", '{"p": "x"}')]


def test_tool_call_fragments_without_index() -> None:
    # Some OpenAI-compatible servers omit ``index`` on tool-call deltas.
    data = sse(
        chunk([{"index": 0, "delta": {"tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x"'}}]}}]),
        chunk([{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": ": 1}"}}]}}]),
        chunk([{"index": 0, "delta": {"tool_calls": [
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}}]),
    )
    (msg,) = accumulate(decode([data])[0]).messages()
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in msg["tool_calls"]] == [("a", "f", '{"x": 1}'), ("b", "g", "{}")]


def test_a_name_restated_in_every_fragment_is_read_once() -> None:
    # Some servers (MiniMax through NVIDIA NIM, Fireworks) repeat a call's whole name
    # and id in each fragment; a name sent in pieces is still joined.
    def frag(i: int, cid: str, name: str, args: str) -> dict[str, Any]:
        return chunk([{"index": 0, "delta": {"tool_calls": [{
            "index": i, "id": cid, "type": "function",
            "function": {"name": name, "arguments": args}}]}}])

    data = sse(frag(0, "a", "read", ""), frag(0, "a", "read", '{"p":'),
               frag(0, "a", "read", ' "x"}'), frag(1, "b", "wri", ""), frag(1, "b", "te", "{}"),
               chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    (msg,) = accumulate(decode([data])[0]).messages()
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in msg["tool_calls"]] == [("a", "read", '{"p": "x"}'), ("b", "write", "{}")]


def test_a_custom_tool_call_is_rebuilt_in_its_own_shape() -> None:
    # GPT-5's custom (freeform) tools stream ``custom: {name, input}``, no ``function``;
    # the message is rebuilt as the client rebuilds it, beside a function call.
    data = sse(chunk([{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c", "type": "custom", "custom": {"name": "apply_patch",
                                                              "input": ""}},
        {"index": 1, "id": "f", "type": "function",
         "function": {"name": "read", "arguments": "{}"}}]}}]),
        chunk([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "custom": {"input": "*** Begin"}}]}}]),
        chunk([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "custom": {"input": " Patch"}}]}}]))
    (msg,) = accumulate(decode([data])[0]).messages()
    assert msg["tool_calls"] == [
        {"id": "c", "type": "custom", "custom": {"name": "apply_patch",
                                                 "input": "*** Begin Patch"}},
        {"id": "f", "type": "function", "function": {"name": "read", "arguments": "{}"}}]


def test_n_greater_than_one_choices() -> None:
    data = realistic_stream(content="same words", n=3, piece=2)
    acc = accumulate(decode(pieces(data, 11))[0])
    assert acc.messages() == [{"role": "assistant", "content": "same words"}] * 3
    assert acc.finish_reasons() == ["stop", "stop", "stop"]


def test_interleaved_choices_are_kept_apart() -> None:
    data = sse(
        chunk([{"index": 1, "delta": {"role": "assistant", "content": "B"}}]),
        chunk([{"index": 0, "delta": {"role": "assistant", "content": "A"}}]),
        chunk([{"index": 0, "delta": {"content": "a"}}, {"index": 1, "delta": {"content": "b"}}]),
        chunk([{"index": 1, "delta": {}, "finish_reason": "length"}]),
        chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )
    acc = accumulate(decode([data])[0])
    assert [m["content"] for m in acc.messages()] == ["Aa", "Bb"]
    assert acc.finish_reasons() == ["stop", "length"]


def test_refusal_and_legacy_function_call() -> None:
    data = sse(
        chunk([{"index": 0, "delta": {"role": "assistant", "refusal": "I can"}}]),
        chunk([{"index": 0, "delta": {"refusal": "not."}}]),
        chunk([{"index": 1, "delta": {"role": "assistant",
                                      "function_call": {"name": "lo", "arguments": ""}}}]),
        chunk([{"index": 1, "delta": {"function_call": {"name": "ok", "arguments": "{}"}}}]),
    )
    acc = accumulate(decode([data])[0])
    assert acc.messages() == [
        {"role": "assistant", "content": None, "refusal": "I cannot."},
        {"role": "assistant", "content": None,
         "function_call": {"name": "look", "arguments": "{}"}},
    ]


def test_junk_events_are_counted_not_fatal() -> None:
    data = (b"data: not json\n\n" + b"data: [1, 2]\n\n"
            + b'data: {"no": "choices"}\n\n'
            + sse(chunk([{"index": 0, "delta": {"content": "fine", "tool_calls": [
                {"index": 0, "id": "c", "function": {"name": None, "arguments": 5}}]}}]),
                  {"error": {"message": "overloaded", "type": "server_error"}}))
    acc = accumulate(decode([data])[0])
    assert acc.bad_events == 3
    assert acc.error == {"message": "overloaded", "type": "server_error"}
    (msg,) = acc.messages()
    assert msg["content"] == "fine"
    assert msg["tool_calls"][0]["function"] == {"name": "", "arguments": ""}


class _ScanCountingBytes(bytes):
    """bytes whose ``find`` adds up how many bytes each search had to scan."""

    scanned = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        start = 0 if start is None else start
        pos = bytes.find(self, sub, start)
        _ScanCountingBytes.scanned += (len(self) if pos == -1 else pos) - start
        return pos


def test_valid_json_orjson_rejects_is_still_read() -> None:
    # An escaped lone surrogate (a cut emoji) is valid JSON; orjson refuses it.
    data = b'data: {"choices": [{"index": 0, "delta": {"content": "cut \\ud83d"}}]}\n\n'
    acc = accumulate(decode([data])[0])
    assert acc.bad_events == 0
    assert acc.messages() == [{"role": "assistant", "content": "cut \ud83d"}]


def test_decoding_a_large_body_at_once_scans_each_byte_a_bounded_number_of_times() -> None:
    # The proxy decodes a whole streamed body in one feed after relaying it. Searching
    # the rest of the buffer for CR on every line made that quadratic (seconds of
    # event-loop time for a few MB); count the scanning work instead of timing it.
    one = sse(chunk([{"index": 0, "delta": {"content": "x"}}]), done=False)
    data = _ScanCountingBytes(one * 5_000)
    _ScanCountingBytes.scanned = 0
    dec = SSEDecoder()
    events = dec.feed(data)
    assert len(events) == 5_000
    assert _ScanCountingBytes.scanned > 0, "the decoder no longer searches the fed bytes"
    assert _ScanCountingBytes.scanned <= 2 * len(data)


# -- property: any split equals the whole -------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
_delta = st.one_of(
    st.fixed_dictionaries({"content": _text}),
    st.fixed_dictionaries({"refusal": _text}),
    st.fixed_dictionaries({"tool_calls": st.lists(st.fixed_dictionaries(
        {"index": st.integers(0, 2),
         "function": st.fixed_dictionaries({"name": _text, "arguments": _text})},
        optional={"id": st.sampled_from(["c1", "c2"])}), min_size=1, max_size=2)}),
)
_choice = st.fixed_dictionaries(
    {"index": st.integers(0, 2), "delta": _delta},
    optional={"finish_reason": st.sampled_from(["stop", "length", "tool_calls", None])},
)
_chunk_obj = st.builds(chunk, st.lists(_choice, max_size=3))
_usage_obj = st.just(chunk([], usage={"prompt_tokens": 1, "completion_tokens": 2,
                                      "total_tokens": 3}))


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    nl = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    objs = draw(st.lists(st.one_of(_chunk_obj, _usage_obj), min_size=1, max_size=8))
    out = b""
    for obj in objs:
        if draw(st.booleans()):
            out += b": keep-alive" + nl + nl
        out += b"data: " + orjson.dumps(obj) + nl + nl
    if draw(st.booleans()):
        out += b"data: [DONE]" + nl + nl
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=streams(), cuts=st.lists(st.integers(0, 10**6), max_size=12))
def test_any_split_equals_feeding_whole(data: bytes, cuts: list[int]) -> None:
    whole_events, whole_comments = decode([data])
    whole = accumulate(whole_events)
    parts = split_at(data, [c % (len(data) + 1) for c in cuts])
    split_events, split_comments = decode(parts)
    split = accumulate(split_events)
    assert split_events == whole_events
    assert split_comments == whole_comments
    assert split.messages() == whole.messages()
    assert (split.done, split.usage, split.finish_reasons()) == (
        whole.done, whole.usage, whole.finish_reasons())
    # And the decoder really saw every event the encoder wrote.
    assert len(whole_events) == data.count(b"data: ")
    assert whole.bad_events == 0


def test_block_json_reads_the_data_lines_as_the_spec_joins_them() -> None:
    """A block's JSON over several ``data:`` lines, after a comment and an ``id:`` that
    hold braces of their own, is one value (reading from the first ``{`` or the first
    ``data:`` took a part of it)."""
    from proxy.sse import block_json

    raw = (b': {"not": "data"}\r\nid: {1}\r\nevent: message_delta\r\n'
           b'data: {"a": 1,\r\ndata:"b": [2]}\r\n\r\n')
    assert block_json(raw) == {"a": 1, "b": [2]}
    with pytest.raises(ValueError):
        block_json(b": only a comment\n\n")
