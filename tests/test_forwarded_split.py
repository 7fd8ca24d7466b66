"""The inspector's view of a forwarded request splits the memory block from the user's
text by the rule the read-back views use (:func:`memory_core.assembly.block.split_block`)."""

from __future__ import annotations

from memory_core.capture.forwarded import split_body


def _user(text: str) -> dict[str, object]:
    out = split_body({"messages": [{"role": "user", "content": text}]})
    message: dict[str, object] = out["messages"][0]
    return message


def test_a_later_turns_block_is_split_from_the_users_text() -> None:
    got = _user("[User Preferences]\n- Units: metric\n[Current Request]\nHow far is it?")
    assert got["block"] == "[User Preferences]\n- Units: metric\n[Current Request]"
    assert got["text"] == "How far is it?"


def test_a_users_own_bracketed_text_is_not_a_block() -> None:
    """A text that opens with a bracket but not with a block's first line is the
    user's whole (the inspector's own rule took any ``[`` for a block's start)."""
    text = "[todo]\n[Current Request]\nship it"
    got = _user(text)
    assert got["block"] is None and got["text"] == text
