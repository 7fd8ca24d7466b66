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
