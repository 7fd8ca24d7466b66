"""What a Chat Completions client was shown of a stored completion (``store: true``),
for the ``/v1/chat/completions/{id}`` routes, sans-io.

The upstream stores each round of the tool loop as a completion of its own, with
the request's messages as sent upstream: the memory block in the user's message,
the hidden rounds' memory calls and results, one round's usage. The client was
shown one completion (its id), without them. :func:`completion_view`,
:func:`messages_view` and :func:`list_view` make the upstream's answers agree
(:class:`proxy.wire.responseview.Shown` notes what the proxy showed; the block is
found by its marker without one).
"""

from __future__ import annotations

from typing import Any

from memory_core.assembly.block import split_block
from proxy.wire.responseview import Shown, is_block_part, page_of


def completion_view(obj: Any, shown: Shown | None) -> Any:
    """A stored completion with the usage its client was shown (the same object when
    nothing differs)."""
    if (not isinstance(obj, dict) or shown is None or shown.response.get("id") != obj.get("id")
            or "usage" not in shown.response or obj.get("usage") == shown.response["usage"]):
        return obj
    return dict(obj, usage=shown.response["usage"])


def messages_view(page: Any, shown: Shown | None) -> Any:
    """A stored completion's ``messages`` page without the memory block and, where
    ``shown`` names the memory tools, without their calls and results (an
    assistant message left with nothing is dropped). The same object when nothing
    differs."""
    if not isinstance(page, dict) or not isinstance(page.get("data"), list):
        return page
    names = shown.names if shown is not None else frozenset()
    # the memory calls first: a page in descending order lists a result before its call
    ours = {c.get("id") for msg in page["data"] for c in _calls(msg)
            if _is_memory_call(c, names)}
    kept: list[Any] = []
    for msg in page["data"]:
        if not isinstance(msg, dict):
            kept.append(msg)
            continue
        calls = _calls(msg)
        rest = [c for c in calls if not _is_memory_call(c, names)]
        if len(rest) != len(calls):
            if not rest and not msg.get("content"):
                continue
            msg = dict(msg, tool_calls=rest or None)
        elif msg.get("role") == "tool" and msg.get("tool_call_id") in ours:
            continue
        elif msg.get("role") == "user" and (shown is None or shown.block):
            msg = _without_block(msg)
        kept.append(msg)
    return page_of(page, kept)


def _calls(msg: Any) -> list[Any]:
    """An assistant message's ``tool_calls`` (``[]`` for any other message)."""
    calls = msg.get("tool_calls") if isinstance(msg, dict) else None
    return calls if isinstance(calls, list) and msg.get("role") == "assistant" else []


def _is_memory_call(call: Any, names: frozenset[str]) -> bool:
    return isinstance(call, dict) and (call.get("function") or {}).get("name") in names


def list_view(page: Any, hidden: set[str]) -> Any:
    """A list of stored completions without the hidden rounds' (ids in ``hidden``)."""
    if not isinstance(page, dict) or not isinstance(page.get("data"), list) or not hidden:
        return page
    return page_of(page, [c for c in page["data"]
                          if not (isinstance(c, dict) and c.get("id") in hidden)])


def _without_block(msg: dict[str, Any]) -> dict[str, Any]:
    """A user message without the memory block (``block + "\\n" + text``, or a leading
    text part); the message itself when it has none."""
    content = msg.get("content")
    if isinstance(content, str):
        split = split_block(content)
        return dict(msg, content=split[1]) if split is not None else msg
    if isinstance(content, list):
        kept = [p for p in content if not is_block_part(p, "text")]
        if len(kept) != len(content):
            return dict(msg, content=kept)
    return msg
