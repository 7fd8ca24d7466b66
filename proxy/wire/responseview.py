"""What a Responses client was shown of a response, for the ``/v1/responses/{id}``
routes, sans-io.

The upstream stores each response as it made it: for one the proxy changed, its
``tools`` list the memory tools, its ``output`` may hold memory calls, its ``usage``
is one round's, its ``previous_response_id`` says null for a stateless replay, and
its input items hold the memory block and the hidden rounds' calls and results.
The client was shown none of that (:mod:`proxy.wire.responsesstream`,
:meth:`~proxy.wire.responses.ResponsesAdapter.client_answer`), so reading the
response back must not show it either. :class:`Shown` is what the proxy noted when
it relayed the response (:class:`proxy.flow.responsethreads.ResponseThreads` keeps
the newest in memory); :func:`response_view` and :func:`input_items_view` make the
upstream's answers agree with it. Without a note (a restarted proxy) the memory
tools are still found by their definitions, which no client tool shares whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core.assembly.block import split_block
from memory_core.tools import memory_tools

SHOWN_FIELDS = ("output", "usage", "tools", "previous_response_id")
"""The fields of a response object the proxy may have shown otherwise than stored."""


@dataclass(frozen=True)
class Shown:
    """A relayed response as the client saw it: ``response`` (the object it ended
    with), ``names`` (the memory tools offered, as named upstream), ``others``
    (the ids of the other upstream responses its rounds made: never the client's)
    and ``block`` (whether the proxy put a memory block in the stored request; the
    read-back views strip one by its shape only where it did or where nothing was
    noted)."""

    response: dict[str, Any]
    names: frozenset[str]
    others: tuple[str, ...] = ()
    block: bool = True


def _descriptions() -> dict[str, str]:
    out: dict[str, str] = {}
    for table in (memory_tools.DEFINITIONS, memory_tools.SHORT_DEFINITIONS):
        for name, spec in table.items():
            description = spec["function"].get("description", "")
            out[name] = out[f"lcm_{name}"] = description
    return out


_OURS = _descriptions()
"""Each memory tool's name (and its ``lcm_`` form) → its description."""


def is_our_tool(tool: Any) -> bool:
    """True for a memory tool definition as the proxy offers it on this API (a flat
    ``function`` tool with one of our names and that name's description)."""
    return (isinstance(tool, dict) and tool.get("type") == "function"
            and _OURS.get(str(tool.get("name"))) == tool.get("description") is not None)


def _is_our_call(item: Any, names: frozenset[str]) -> bool:
    return (isinstance(item, dict) and item.get("type") == "function_call"
            and item.get("name") in names)


def response_view(obj: Any, shown: Shown | None) -> Any:
    """The upstream's response object ``obj`` as its client was shown it: the noted
    fields from ``shown`` (when it notes this id), else without the memory tools and
    their calls. The same object when nothing differs."""
    if not isinstance(obj, dict):
        return obj
    if shown is not None and shown.response.get("id") == obj.get("id"):
        changed = {k: shown.response[k] for k in SHOWN_FIELDS
                   if k in shown.response and k in obj and obj[k] != shown.response[k]}
        return dict(obj, **changed) if changed else obj
    tools = obj.get("tools")
    if not isinstance(tools, list) or not any(is_our_tool(t) for t in tools):
        return obj
    names = frozenset(str(t.get("name")) for t in tools if is_our_tool(t))
    out = dict(obj, tools=[t for t in tools if not is_our_tool(t)])
    if isinstance(obj.get("output"), list):
        out["output"] = [i for i in obj["output"] if not _is_our_call(i, names)]
    return out


def input_items_view(listing: Any, shown: Shown | None, *, ascending: bool = False) -> Any:
    """An ``input_items`` page (``{"object": "list", "data": [...]}``, newest first
    unless ``ascending``) without what the proxy added: the memory block's part of a
    user message, and, where ``shown`` names the memory tools, their calls, the
    reasoning items just before them and their results. ``first_id``/``last_id``
    follow the page kept. The same object when nothing differs."""
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return listing
    names = shown.names if shown is not None else frozenset()
    data: list[Any] = listing["data"]
    calls = {i.get("call_id") for i in data if _is_our_call(i, names)}
    drop = set()
    for at, item in enumerate(data):
        if _is_our_call(item, names):
            drop.add(at)
            step = -1 if ascending else 1  # towards the items made before it
            k = at + step
            while 0 <= k < len(data) and isinstance(data[k], dict) \
                    and data[k].get("type") == "reasoning":
                drop.add(k)
                k += step
        elif (isinstance(item, dict) and item.get("type") == "function_call_output"
              and item.get("call_id") in calls):
            drop.add(at)
    kept = [item for at, item in enumerate(data) if at not in drop]
    return page_of(listing, kept if shown is not None and not shown.block
                   else [_without_block(item) for item in kept])


def page_of(listing: dict[str, Any], kept: list[Any]) -> dict[str, Any]:
    """``listing`` with ``data`` = ``kept`` and ``first_id``/``last_id`` those of the
    items kept; a page whose every item was hidden keeps the upstream's, so that a
    client pages on from it (``after=last_id``). ``listing`` itself when ``kept`` holds
    its very items (nothing was hidden or changed)."""
    data = listing["data"]
    if len(kept) == len(data) and all(a is b for a, b in zip(kept, data, strict=True)):
        return listing
    out = dict(listing, data=kept)
    if kept:
        for key, at in (("first_id", 0), ("last_id", -1)):
            if key in out:
                out[key] = kept[at].get("id") if isinstance(kept[at], dict) else None
    return out


def is_block_part(part: Any, kind: str) -> bool:
    """True for the memory block's content part in a stored copy of a request: a
    ``kind`` part (Chat ``text``, Responses ``input_text``) whose text is a whole
    block (:func:`~memory_core.assembly.block.split_block`, the bootstrap turn's
    and every later turn's). Both read-back views (this module's and
    :mod:`proxy.wire.chatview`) find the block by this one rule."""
    if not (isinstance(part, dict) and part.get("type") == kind
            and isinstance(part.get("text"), str)):
        return False
    split = split_block(part["text"])
    return split is not None and split[1] == ""


def _without_block(item: Any) -> Any:
    """A user message without the memory block's ``input_text`` part (the item itself
    when it has none)."""
    content = item.get("content") if isinstance(item, dict) else None
    if not isinstance(content, list):
        return item
    kept = [p for p in content if not is_block_part(p, "input_text")]
    return item if len(kept) == len(content) else dict(item, content=kept)
