"""The message tree's canonical form (memory_core/capture/tree.py): what makes two
messages the same node."""

from __future__ import annotations

import copy
from typing import Any

from memory_core.capture.tree import canonical_bytes, chain_keys

MARK = {"type": "ephemeral"}


def _blocks(text: str, mark: bool) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        block["cache_control"] = MARK
    return [block]


def test_a_breakpoint_does_not_change_a_message() -> None:
    """``cache_control`` on a part, or on a part inside a ``tool_result``'s content,
    is not part of the message; the input is left as it was."""
    marked = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "cache_control": MARK,
         "content": [{"type": "text", "text": "42", "cache_control": MARK}]},
        {"type": "text", "text": "go on", "cache_control": MARK}]}
    plain = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "42"}]},
        {"type": "text", "text": "go on"}]}
    before = copy.deepcopy(marked)
    assert canonical_bytes(marked) == canonical_bytes(plain)
    assert marked == before
    # A history whose breakpoint moved to the newest message keeps its earlier keys.
    turn1 = [{"role": "user", "content": _blocks("a", True)}]
    turn2 = [{"role": "user", "content": _blocks("a", False)},
             {"role": "assistant", "content": _blocks("b", False)},
             {"role": "user", "content": _blocks("c", True)}]
    assert chain_keys(turn2)[0] == chain_keys(turn1)[0]


def test_what_a_message_says_still_tells_messages_apart() -> None:
    a = {"role": "user", "content": _blocks("port 5432", True)}
    b = {"role": "user", "content": _blocks("port 5433", True)}
    assert canonical_bytes(a) != canonical_bytes(b)
    # a string, and a part list without breakpoints, hash as before (stored keys stay)
    assert canonical_bytes({"role": "user", "content": "x"}) == (
        b'{"content":"x","role":"user"}')
    deep: dict[str, Any] = {"role": "user", "content": []}
    parts = deep["content"]
    for _ in range(3000):  # nesting deeper than the recursion limit
        inner: dict[str, Any] = {"type": "tool_result", "cache_control": MARK, "content": []}
        parts.append(inner)
        parts = inner["content"]
    assert b"cache_control" not in canonical_bytes(deep)


def test_equivalent_spellings_hash_alike_and_others_apart() -> None:
    """Text parts, citations, thinking and argument spelling (normal_content,
    normal_arguments); a message already in normal form keeps its old key."""
    from memory_core.capture.tree import node_key

    said = {"role": "assistant", "content": "ab"}
    for other in ([{"type": "text", "text": "a"}, {"type": "text", "text": "b", "citations": None}],
                  [{"type": "thinking", "thinking": "t", "signature": "s"},
                   {"type": "output_text", "text": "ab", "annotations": []}]):
        assert canonical_bytes(dict(said, content=other)) == canonical_bytes(said)
    assert node_key(None, said) == node_key(None, said, legacy=True)
    # a user's thinking-typed part, text with unknown fields, an image: kept apart
    assert canonical_bytes({"role": "user", "content": [{"type": "text", "text": "ab",
                                                         "x": 1}]}) != canonical_bytes(
        dict(said, role="user"))

    def call(args: str) -> dict[str, Any]:
        return {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": args}}]}

    assert canonical_bytes(call('{"b": 1, "a": [1.0]}')) == canonical_bytes(
        call('{"a":[1.0],"b":1}'))
    # a repeated key (the last wins: order matters), NaN, text that is no object
    for odd in ('{"a": 1, "a": 2}', '{"a": NaN}', "[1, 2]", "not json"):
        assert canonical_bytes(call(odd)) == canonical_bytes(call(odd), legacy=True)
    assert canonical_bytes(call('{"a": 1, "a": 2}')) != canonical_bytes(call('{"a": 2, "a": 1}'))
