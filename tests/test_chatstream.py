"""The Chat Completions stream round (proxy.wire.chatstream), fed byte scripts: no sockets."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from proxy.sse import SSEDecoder
from proxy.wire.chat import CHAT
from proxy.wire.chatstream import ChatStreamRound

NAMES = {"memory_grep": "memory_grep"}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, *,
          cid: str = "chatcmpl-1", created: int = 1, index: int = 0) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": "m",
            "choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}]}


def sse(*objs: Any, done: bool = True) -> bytes:
    out = b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in objs)
    return out + (b"data: [DONE]\n\n" if done else b"")


def run(script: bytes, size: int | None = None, **kw: Any) -> tuple[ChatStreamRound, bytes]:
    sr = ChatStreamRound(NAMES, **kw)
    out = b""
    step = size or len(script) or 1
    for i in range(0, len(script), step):
        out += sr.feed(script[i:i + step])
    return sr, out + sr.close()


def chunks_of(data: bytes) -> list[dict[str, Any]]:
    dec = SSEDecoder()
    return [orjson.loads(e.data) for e in dec.feed(data) + dec.close()
            if e.data != "[DONE]"]


def client_calls(data: bytes) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for obj in chunks_of(data):
        for ch in obj["choices"]:
            for tc in (ch.get("delta") or {}).get("tool_calls") or []:
                slot = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
    return calls


ANSWER = sse(chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}),
             chunk({"content": "lo"}), chunk(finish="stop"),
             {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
              "model": "m", "choices": [], "usage": {"total_tokens": 3}})


@pytest.mark.parametrize("size", [None, 1, 7, 64])
def test_a_plain_answer_passes_byte_for_byte_and_holds_its_tail(size: int | None) -> None:
    sr, out = run(ANSWER, size)
    held = b"".join(raw for _kind, raw in sr.tail)
    assert out + held == ANSWER
    assert [kind for kind, _raw in sr.tail] == ["finish", "usage", "done"]
    assert sr.shown and sr.messages()[0]["content"] == "Hello"


@pytest.mark.parametrize("size", [None, 1, 7])
def test_leading_blank_content_is_held_then_shown_in_its_place(size: int | None) -> None:
    """A whitespace chunk before anything shown waits (a hidden round's blank line
    before its memory call must not lead the client's answer); the first visible
    chunk sends it first, so an answer that begins with it passes byte for byte."""
    head = sse(chunk({"role": "assistant", "content": ""}), chunk({"content": "\n\n"}),
               done=False)
    sr, early = run(head, size)
    assert not sr.shown and b"\\n\\n" not in early
    rest = sse(chunk({"content": "Hello"}), chunk(finish="stop"))
    sr, out = run(head + rest, size)
    held = b"".join(raw for _kind, raw in sr.tail)
    assert out + held == head + rest
    assert sr.shown and sr.messages()[0]["content"] == "\n\nHello"


def test_a_role_chunk_alone_is_not_shown_yet() -> None:
    sr, out = run(sse(chunk({"role": "assistant", "content": ""}), done=False))
    assert out.startswith(b"data: ") and not sr.shown


def test_a_memory_call_round_shows_nothing() -> None:
    script = sse(chunk({"role": "assistant", "content": None}),
                 chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                        "function": {"name": "memory_", "arguments": ""}}]}),
                 chunk({"tool_calls": [{"index": 0, "function": {"name": "grep"}}]}),
                 chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
                 chunk(finish="tool_calls"))
    for size in (None, 1, 13):
        sr, out = run(script, size)
        assert not sr.shown and client_calls(out) == {}
        calls = sr.messages()[0]["tool_calls"]
        assert [c["function"]["name"] for c in calls] == ["memory_grep"]


def test_calls_without_index_sharing_a_chunk_are_kept_apart() -> None:
    # Some compatible servers omit ``index``: a client call and a memory call in one
    # chunk must not merge into one call for the client.
    script = sse(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [
            {"id": "call_c", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":'}},
            {"id": "call_m", "type": "function",
             "function": {"name": "memory_grep", "arguments": '{"query":"x"}'}}]}),
        chunk(finish="tool_calls"))
    sr, out = run(script)
    assert client_calls(out) == {0: {"name": "get_weather", "arguments": '{"city":'}}
    names = [c["function"]["name"] for c in sr.messages()[0]["tool_calls"]]
    assert names == ["get_weather", "memory_grep"]


def _at_zero(call_id: str | None, name: str, args: str) -> dict[str, Any]:
    frag: dict[str, Any] = {"index": 0, "type": "function",
                            "function": {"name": name, "arguments": args}}
    return chunk({"tool_calls": [dict(frag, id=call_id) if call_id else frag]})


def test_calls_sharing_one_index_are_kept_apart() -> None:
    # Ollama streams ``index: 0`` for every parallel call; each new call has its own id
    # and name, id-less fragments continue the last one started.
    script = sse(chunk({"role": "assistant", "content": None}),
                 _at_zero("call_c", "get_weather", ""), _at_zero(None, "", '{"city":"x"}'),
                 _at_zero("call_m", "memory_grep", ""), _at_zero(None, "", '{"query":"y"}'),
                 chunk(finish="tool_calls"))
    for size in (None, 1, 13):
        sr, out = run(script, size)
        assert client_calls(out) == {0: {"name": "get_weather", "arguments": '{"city":"x"}'}}
        assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
                for c in sr.messages()[0]["tool_calls"]] == [
            ("call_c", "get_weather", '{"city":"x"}'), ("call_m", "memory_grep", '{"query":"y"}')]


def test_client_calls_sharing_one_index_pass_as_sent() -> None:
    script = sse(chunk({"role": "assistant", "content": None}),
                 _at_zero("call_a", "get_weather", '{"city":"x"}'),
                 _at_zero("call_b", "get_weather", '{"city":"y"}'), chunk(finish="tool_calls"))
    sr, out = run(script)
    assert out + b"".join(raw for _kind, raw in sr.tail) == script
    assert [c["id"] for c in sr.messages()[0]["tool_calls"]] == ["call_a", "call_b"]


def test_a_later_round_keeps_the_answer_id_and_drops_its_role_chunk() -> None:
    script = sse(chunk({"role": "assistant", "content": ""}, cid="chatcmpl-2", created=9),
                 chunk({"content": "Hi"}, cid="chatcmpl-2", created=9),
                 chunk(finish="stop", cid="chatcmpl-2", created=9))
    sr, out = run(script, later=True, stream_id="chatcmpl-1", created=1)
    objs = chunks_of(out)
    assert [o["choices"][0]["delta"] for o in objs] == [{"content": "Hi"}]
    assert {(o["id"], o["created"]) for o in objs} == {("chatcmpl-1", 1)}
    kind, raw = sr.tail[0]
    again = CHAT.restate(kind, raw, finish_reason="stop", usage=None,
                         stream_id="chatcmpl-1", created=1)
    assert chunks_of(again)[0]["id"] == "chatcmpl-1"


def test_reasoning_fields_are_assembled() -> None:
    script = sse(chunk({"role": "assistant", "reasoning_content": "Let me "}),
                 chunk({"reasoning_content": "think.", "reasoning_details": [{"t": 1}]}),
                 chunk({"content": "Yes"}), chunk(finish="stop"))
    sr, _out = run(script, 5)
    msg = sr.messages()[0]
    assert msg["reasoning_content"] == "Let me think." and msg["reasoning_details"] == [{"t": 1}]


def test_any_split_gives_the_same_bytes() -> None:
    whole_sr, whole = run(ANSWER)
    for size in range(1, 40):
        sr, out = run(ANSWER, size)
        assert out == whole and sr.tail == whole_sr.tail


def test_a_finishing_chunk_split_in_two_carries_its_logprobs_once() -> None:
    """A later round's one chunk with content, finish_reason and logprobs is shown
    as the content (with its logprobs) and a held finish chunk (logprobs null): the
    client's logprobs list each token once."""
    lp = {"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105],
                       "top_logprobs": []}], "refusal": None}
    last = chunk({"role": "assistant", "content": "Hi"}, "stop", cid="chatcmpl-2")
    last["choices"][0]["logprobs"] = lp
    sr, out = run(sse(last), later=True, stream_id="chatcmpl-1", created=1)
    shown = [c for o in chunks_of(out) for c in o["choices"]]
    kind, raw = sr.tail[0]
    held = [c for o in chunks_of(raw) for c in o["choices"]]
    assert [c.get("logprobs") for c in shown] == [lp]
    assert [c.get("logprobs") for c in held] == [None]
    assert held[0]["finish_reason"] == "stop"


def test_a_chunk_without_choices_whose_usage_is_null_does_not_hold_the_stream() -> None:
    """With ``include_usage`` every chunk carries ``"usage": null``, Azure's first one
    (its prompt filter results) with ``choices: []`` too. Only the chunk whose usage
    is set is the usage chunk: taken for it, the filter chunk held everything after
    it until the upstream ended, so the client got the whole answer at once."""
    head = {"id": "", "object": "", "created": 0, "model": "", "choices": [], "usage": None,
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
    first = sse(head, chunk({"role": "assistant", "content": "Hel"}), done=False)
    sr = ChatStreamRound(NAMES)
    assert sr.feed(first) == first  # relayed as it comes
    assert sr.shown and not sr.holding and sr.tail == []
    more = sse(chunk({"content": "lo"}), done=False)
    assert sr.feed(more + sse(chunk(finish="stop"))) == more  # finish, [DONE]: the loop's
    assert [kind for kind, _ in sr.tail] == ["finish", "done"]


def test_a_client_tool_named_like_a_memory_tools_prefix_streams_its_arguments() -> None:
    """A client tool whose name begins a memory tool's name (``memory``, the name of
    Anthropic's memory tool, is such) was held until the finish chunk while the
    proxy waited for more of its name: its arguments reached the client in one
    chunk at the end instead of as they were written. Arguments follow a whole
    name, so a call whose arguments started under another name is the client's."""
    sr = ChatStreamRound(NAMES)
    sr.feed(sse(chunk({"role": "assistant", "content": None}), done=False))
    start = chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                   "function": {"name": "memory", "arguments": ""}}]})
    assert sr.feed(sse(start, done=False)) == b""  # the name may still go on
    first = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"cmd":'}}]})
    assert client_calls(sr.feed(sse(first, done=False))) == {
        0: {"name": "memory", "arguments": '{"cmd":'}}
    rest = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"view"}'}}]})
    raw = sse(rest, done=False)
    assert sr.feed(raw) == raw  # as sent, the moment it arrives


def _nameless(tail: bytes) -> bytes:
    frag = lambda **k: {"tool_calls": [dict(index=0, **k)]}  # noqa: E731
    return sse(chunk({"role": "assistant", "content": None}),
               chunk(frag(id="call_c", type="function", function={"arguments": '{"pa'})),
               chunk(frag(function={"arguments": 'th": 1}'})), done=False) + tail


@pytest.mark.parametrize("tail", [b"data: [DONE]\n\n", b"", sse(
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [], "usage": {"total_tokens": 3}})], ids=["done", "cut", "usage"])
@pytest.mark.parametrize("size", [1, 9, None])
def test_a_call_never_named_reaches_the_client_when_no_finish_chunk_comes(
        tail: bytes, size: int | None) -> None:
    # The stream ends ([DONE], a usage chunk, or the body) with no finish_reason while
    # a call's name never came: it is the client's. before: its fragments were held
    # for ever, the client got no call at all
    sr, out = run(_nameless(tail), size)
    assert client_calls(out) == {0: {"name": "", "arguments": '{"path": 1}'}}, out
    assert chunks_of(out)[-1]["id"] == "chatcmpl-1"
