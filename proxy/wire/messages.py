"""The Anthropic Messages wire adapter (``POST /v1/messages``).

Body fields: top-level ``system`` (a string or text blocks), ``messages`` (roles
``user`` and ``assistant``; content a string or blocks: ``text``, ``image``,
``document``, ``tool_use``, ``tool_result``, ``thinking``, ``redacted_thinking``,
and any other type, kept as sent), ``tools`` (``name``, ``description``,
``input_schema``), ``tool_choice`` (``{"type": "auto"|"any"|"tool"|"none"}``),
``stream``. An answer is one ``message`` object: ``content`` blocks,
``stop_reason``, ``usage`` (``input_tokens``, ``output_tokens``,
``cache_creation_input_tokens``, ``cache_read_input_tokens``). Errors:
``{"type": "error", "error": {"type", "message"}}``. Streams:
:mod:`proxy.wire.messagesstream`.

The memory steps see a Messages request as a chat-shaped *view*
(:func:`view_messages`): the ``system`` field as a leading ``system`` message, then
the messages themselves, unchanged (blocks are stored as sent: the evidence keeps
them byte-for-byte). Their edits are mapped back onto the client's own message
objects (:func:`map_back`), so that untouched messages are serialised from the
same values and stay byte-identical.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson

from memory_core.assembly import budget
from memory_core.assembly.block import CURRENT_REQUEST
from memory_core.tools import memory_tools
from proxy.sse import block_json
from proxy.wire.base import StreamRound, WireAdapter
from proxy.wire.chat import sum_usage

if TYPE_CHECKING:
    from proxy.wire.streamsession import StreamSession

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error",
               413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 502: "api_error", 504: "api_error",
               529: "overloaded_error"}
"""Anthropic's error ``type`` per HTTP status (the proxy's own errors use them)."""

def error_body(status: int, message: str) -> dict[str, Any]:
    """Anthropic's error shape for ``status``: ``{"type": "error", "error": {...}}``."""
    return {"type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def sse_event(name: str, obj: Any) -> bytes:
    """One Anthropic SSE event: ``event: <name>`` and its JSON ``data:`` line."""
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(obj) + b"\n\n"


_THINKING = ("thinking", "redacted_thinking")


def is_server_block(kind: str) -> bool:
    """True for a content block type the upstream writes for a tool it runs itself:
    ``server_tool_use``, ``mcp_tool_use`` and their results (``*_tool_result`` other
    than the client's own ``tool_result``)."""
    return kind in ("server_tool_use", "mcp_tool_use") or (
        kind.endswith("_tool_result") and kind != "tool_result")


def blocks(content: Any) -> list[Any]:
    """A message's content as a block list (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def view_messages(body: dict[str, Any]) -> list[Any]:
    """The chat-shaped view the memory steps store and rewrite: ``system`` (string or
    blocks, as sent) as a leading ``system`` message, then ``messages`` as they are."""
    system = body.get("system")
    head = [{"role": "system", "content": system}] if system not in (None, "", []) else []
    return [*head, *body["messages"]]


def with_block(message: dict[str, Any], block: str) -> dict[str, Any]:
    """A copy of user ``message`` with the memory ``block`` as a last text block.

    Last: after any leading ``tool_result`` blocks (a message answering ``tool_use``
    must start with them) and after the client's last ``cache_control`` breakpoint,
    so every byte before a breakpoint stays as the client sent it. The block carries
    no ``cache_control`` of its own (the four-breakpoint limit is the client's).
    The block's closing ``[Current Request]`` line (which introduces the user's text
    when the block goes first) is left off: the request is above it here.
    """
    block = block.rstrip()
    if block.endswith(CURRENT_REQUEST):
        block = block[:-len(CURRENT_REQUEST)].rstrip()
    return dict(message, content=[*blocks(message.get("content")),
                                  {"type": "text", "text": block}])


def injected_block(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """The memory block the chat-shaped memory path put on ``before`` (giving
    ``after``, :func:`proxy.rewrite.inject_block`), or ``None``."""
    old, new = before.get("content"), after.get("content")
    if isinstance(old, str) and isinstance(new, str) and new.endswith("\n" + old):
        return new[:len(new) - len(old) - 1]
    if isinstance(new, list) and new and isinstance(new[0], dict) and (
            new[0].get("type") == "text") and len(new) == len(blocks(old)) + 1:
        text = new[0].get("text")
        return text if isinstance(text, str) else None
    if old in (None, "", []) and isinstance(new, str):
        return new
    return None


def tool_pairs_ok(messages: list[Any]) -> bool:
    """True when calls and results pair up as the upstream insists, both ways: every
    ``tool_result`` answers a ``tool_use`` of the last assistant message before it,
    and every ``tool_use`` of an assistant message that is not the last one is
    answered in the user turn right after it ("tool_use ids were found without
    tool_result blocks immediately after"). Consecutive user messages count as one
    turn, as the upstream merges them."""
    pending: set[Any] = set()  # the last assistant's calls not answered yet
    prev_ids: set[Any] = set()
    for msg in messages:
        if not isinstance(msg, dict):
            return False
        raw_content = msg.get("content")
        content: list[Any] = raw_content if isinstance(raw_content, list) else []
        if msg.get("role") == "user":
            for part in content:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    if part.get("tool_use_id") not in prev_ids:
                        return False
                    pending.discard(part.get("tool_use_id"))
        elif msg.get("role") == "assistant":
            if pending:
                return False
            prev_ids = {p.get("id") for p in content
                        if isinstance(p, dict) and p.get("type") == "tool_use"}
            pending = set(prev_ids)
    last = messages[-1] if messages else None
    return not pending or (isinstance(last, dict) and last.get("role") == "assistant")


def map_back(body: dict[str, Any], out: list[Any], system: Any = None) -> list[Any] | None:
    """The upstream ``messages`` for ``body`` from the memory path's edited view.

    ``out`` is the memory path's messages made from :func:`view_messages` of
    ``body`` (whose leading ``system`` message is ``system``): the client's message
    objects kept (the same objects, so the same bytes), compacted ranges replaced
    by the scaffold and its acknowledgement (string messages, valid here too),
    spliced hidden rounds (stored as Messages blocks), tool results cut to fit the
    window (:mod:`proxy.flow.resultclip`), and the block on the newest user message,
    moved to its end (:func:`with_block`). The ``system`` view
    message is dropped (the ``system`` field stays as sent). ``None`` when the
    result would break the upstream's rules (a ``tool_result`` cut off from its
    ``tool_use`` by a compacted range, an instruction message left in the list):
    the caller then forwards the messages uncompacted.
    """
    msgs = [m for m in out if m is not system]
    if not msgs:
        return None
    last_in = body["messages"][-1] if body["messages"] else None
    if msgs[-1] is not last_in and isinstance(last_in, dict) and last_in.get("role") == "user":
        planned = msgs[-1].get("content") if isinstance(msgs[-1], dict) else None
        block = injected_block(last_in, msgs[-1])
        base = last_in
        if isinstance(planned, list) and len(planned) == len(blocks(last_in.get("content"))) + (
                block is not None) and planned[block is not None:] != blocks(
                last_in.get("content")):
            # Its blocks as planned: tool results cut to fit the context window.
            base = dict(last_in, content=planned[block is not None:])
        elif block is None:
            return None
        msgs[-1] = with_block(base, block) if block is not None else base
    if any(isinstance(m, dict) and m.get("role") not in ("user", "assistant") for m in msgs):
        return None
    return msgs if tool_pairs_ok(msgs) else None


def _results_only(msg: Any) -> bool:
    content = msg.get("content") if isinstance(msg, dict) else None
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def opening_user_index(messages: list[Any]) -> int | None:
    """Index of the user message that opened the current turn: the last user
    message that is not only ``tool_result`` blocks, when everything after it is
    assistant turns and ``tool_result``-only user turns; ``None`` otherwise."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if not isinstance(msg, dict):
            return None
        if msg.get("role") == "user" and not _results_only(msg):
            return i
    return None


def newest_is_user(body: dict[str, Any]) -> bool:
    """The request ends with a user message (the block's place)."""
    msgs = body.get("messages") or []
    return bool(msgs) and isinstance(msgs[-1], dict) and msgs[-1].get("role") == "user"


def anthropic_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A memory tool (chat definition, :mod:`memory_core.tools.memory_tools`) as an Anthropic tool:
    ``name``, ``description``, ``input_schema`` (nullable fields made optional)."""
    fn = spec["function"]
    params = fn["parameters"]
    props, required = {}, []
    for name, prop in params["properties"].items():
        kind = prop.get("type")
        if isinstance(kind, list) and "null" in kind:
            rest = [k for k in kind if k != "null"]
            prop = dict(prop, type=rest[0] if len(rest) == 1 else rest)
        else:
            required.append(name)
        props[name] = prop
    return {"name": fn["name"], "description": fn["description"],
            "input_schema": {"type": "object", "properties": props, "required": required}}


class UnparsedInput(dict[str, Any]):
    """The ``input`` of a streamed ``tool_use`` whose ``input_json_delta`` text does
    not parse (fine-grained tool streaming sends it unvalidated): an empty object,
    written as ``{}`` wherever the block goes (the API refuses an ``input`` that is
    not an object when the turn goes back), holding :attr:`text`, the upstream's
    text, for the memory tool's error result."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def __reduce__(self) -> Any:  # copies keep the text
        return (UnparsedInput, (self.text,))


class MessagesWire(WireAdapter):
    """Anthropic Messages (see module docstring)."""

    name = "messages"
    raw_items_key = "messages"
    finish_stop = "end_turn"
    finish_tools = "tool_use"
    finish_cut = frozenset({"max_tokens", "model_context_window_exceeded"})

    def messages(self, body: dict[str, Any]) -> list[Any]:
        return list(body["messages"])

    def with_messages(self, body: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
        return dict(body, messages=messages)

    def is_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def outside_tokens(self, body: dict[str, Any]) -> int:
        """The ``system`` field (a leading ``system`` message of the view)."""
        system = body.get("system")
        if system in (None, "", []):
            return 0
        return budget.message_tokens({"role": "system", "content": system})

    def tools_wanted(self, body: dict[str, Any]) -> bool:
        """False when ``tool_choice`` rules our tools out (``none``, or a forced
        ``any``/``tool`` choice: a hidden round could not end), or ``tools`` is not
        a list."""
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in ("none", "any", "tool"):
            return False
        if choice is not None and not isinstance(choice, dict):
            return False
        return body.get("tools") is None or isinstance(body.get("tools"), list)

    def add_tools(self, body: dict[str, Any], *, strict: str = "auto", short: bool = False
                  ) -> tuple[dict[str, Any], dict[str, str]]:
        """``(body with the memory tools appended, offered name → canonical name)``;
        a name the client uses is never shadowed
        (:func:`memory_core.tools.memory_tools.definitions_for`).
        Appended after the client's tools, so a breakpoint on the client's last tool
        keeps its prefix only if the client's tools come first (they do)."""
        client_tools = body.get("tools") or []
        taken = {t.get("name") for t in client_tools if isinstance(t, dict)}
        ours, names = memory_tools.definitions_for({n for n in taken if isinstance(n, str)},
                                               short=short)
        return dict(body, tools=[*client_tools, *(anthropic_tool(t) for t in ours)]), names

    def carried(self, body: dict[str, Any], answer: Any) -> dict[str, Any]:
        """``body`` naming the container a hidden round's code execution ran in
        (``answer["container"]["id"]``), as a client calling the API itself would on
        its next request: without it the next round starts in a new container, the
        files and state of the hidden round's code gone. A client's ``container``
        object (``skills``) keeps its fields and takes the ``id``."""
        container = answer.get("container") if isinstance(answer, dict) else None
        cid = container.get("id") if isinstance(container, dict) else None
        if not isinstance(cid, str) or not cid:
            return body
        sent = body.get("container")
        if isinstance(sent, dict):
            return body if sent.get("id") == cid else dict(body, container=dict(sent, id=cid))
        return body if sent == cid else dict(body, container=cid)

    # -- whole answers -----------------------------------------------------------------
    def answer_message(self, obj: Any) -> dict[str, Any] | None:
        if not isinstance(obj, dict) or obj.get("type") != "message" or not isinstance(
                obj.get("content"), list):
            return None
        return {"role": "assistant", "content": obj["content"]}

    def set_answer(self, obj: dict[str, Any], message: dict[str, Any],
                   finish_reason: Any, usage: dict[str, Any] | None) -> None:
        obj["content"] = message["content"]
        obj["stop_reason"] = finish_reason
        if usage is not None:
            obj["usage"] = usage

    def client_choices(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        msg = self.answer_message(obj)
        return [msg] if msg is not None else []

    def finish_reasons(self, obj: dict[str, Any]) -> list[Any]:
        return [obj.get("stop_reason")]

    def usage(self, obj: dict[str, Any]) -> Any:
        return obj.get("usage")

    def tool_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        content = message.get("content")
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] \
            if isinstance(content, list) else []

    def call_name(self, call: dict[str, Any]) -> str:
        name = call.get("name")
        return name if isinstance(name, str) else ""

    def call_arguments(self, call: dict[str, Any]) -> str:
        """A ``tool_use`` block's ``input`` as JSON text (what the tools take); the
        stdlib writes what orjson refuses (an integer past 64 bits, read from the
        answer by the stdlib), so odd arguments reach the tool, which answers them,
        instead of failing the chat. A streamed input that did not parse
        (:class:`UnparsedInput`) reaches the tool as the text the upstream wrote, so
        its result names the parse error instead of a missing argument."""
        value = call.get("input")
        if isinstance(value, UnparsedInput):
            return value.text
        value = value or {}
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError is one
            return json.dumps(value)

    def server_work(self, message: dict[str, Any]) -> list[Any]:
        """``server_tool_use`` and ``mcp_tool_use`` blocks and the results the upstream
        wrote for them (``web_search_tool_result``, ``mcp_tool_result``, …), and where
        there are any, the round's ``thinking`` / ``redacted_thinking`` blocks in their
        places: a stream shows those once the round showed something, and a turn
        sent back must keep a signed thinking block ahead of the tool use it led to."""
        content = [b for b in message.get("content") or [] if isinstance(b, dict)]
        if not any(is_server_block(str(b.get("type"))) for b in content):
            return []
        return [b for b in content
                if b.get("type") in _THINKING or is_server_block(str(b.get("type")))]

    def lead_with(self, obj: dict[str, Any], parts: list[Any]) -> None:
        obj["content"] = [*parts, *(obj.get("content") or [])]

    def without_calls(self, message: dict[str, Any], keep: list[dict[str, Any]]
                      ) -> dict[str, Any]:
        kept = {id(c) for c in keep}
        content = [b for b in message.get("content") or [] if not (
            isinstance(b, dict) and b.get("type") == "tool_use" and id(b) not in kept)]
        return dict(message, content=content)

    def replayable(self, body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """A text block that is empty or only whitespace (relays and bridges stream
        one before a ``tool_use``) is refused when it goes back ("text content blocks
        must contain non-whitespace text", a 400): it stays out of the turn the proxy
        sends on. Every other block goes on unchanged, in order."""
        content = message.get("content")
        if not isinstance(content, list):
            return message
        kept = [b for b in content if not (isinstance(b, dict) and b.get("type") == "text"
                                           and not str(b.get("text") or "").strip())]
        return message if len(kept) == len(content) or not kept else dict(message, content=kept)

    def tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        """A ``tool_result`` block (the loop puts all of a round's in one user message)."""
        return {"type": "tool_result", "tool_use_id": call.get("id"), "content": text}

    def result_turns(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One user turn with every ``tool_result`` block of the round."""
        return [{"role": "user", "content": results}]

    # -- streams -------------------------------------------------------------------------
    def stream_session(self, names: dict[str, str], body: dict[str, Any], *,
                       previous: str | None = None) -> StreamSession:
        from proxy.wire.streamsession import MessagesSession  # noqa: PLC0415 - a cycle

        return MessagesSession(self, names, body)

    def stream_round(self, names: dict[str, str], client_offset: int = 0, *,
                     later: bool = False, stream_id: Any = None,
                     created: Any = None, hold_text: bool = False) -> StreamRound:
        from proxy.wire.messagesstream import MessagesStreamRound
        return MessagesStreamRound(names, client_offset, later=later, hold_text=hold_text)

    def restate(self, kind: str, raw: bytes, *, finish_reason: Any, usage: Any,
                stream_id: Any, created: Any) -> bytes:
        """The held ``message_delta`` with the answer's stop reason and summed usage."""
        if kind != "finish":
            return raw
        obj = block_json(raw)
        delta = dict(obj.get("delta") or {}, stop_reason=finish_reason)
        obj["delta"] = delta
        if isinstance(usage, dict):
            obj["usage"] = usage
        return sse_event("message_delta", obj)

    def stream_error(self, message: str) -> bytes:
        return sse_event("error", error_body(502, message))

    def stream_upstream_error(self, raw: bytes) -> bytes | None:
        obj = self.upstream_error(raw)  # {"type": "error", "error": {"type": …}}
        return sse_event("error", obj) if obj is not None else None

    def heartbeat(self) -> bytes:
        return sse_event("ping", {"type": "ping"})


MESSAGES = MessagesWire()
"""The one Messages adapter."""

__all__ = ["MESSAGES", "MessagesWire", "error_body", "map_back", "sse_event", "sum_usage",
           "view_messages", "with_block"]
