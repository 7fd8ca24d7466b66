"""The OpenAI Responses API wire adapter (``POST /v1/responses``).

The memory steps speak chat-shaped *turn messages* (``role``, ``content``,
``tool_calls``, ``tool_call_id``); this module turns a Responses ``input`` into
them and back, keeping every original item untouched under ``items``:

- ``instructions`` (a string) → a leading ``system`` turn (:class:`Instructions`);
  it is evidence only: :meth:`ResponsesWire.with_messages` drops it again, the
  body's ``instructions`` are never rewritten.
- a ``message`` item (or the shorthand ``{"role", "content"}``, or a string
  ``input``) with role user, system or developer → one turn of that role, its
  ``content`` as sent (string or ``input_text``/image/file parts).
- a run of model-output items (assistant ``message``, ``reasoning``,
  ``function_call`` and other ``*_call`` items) → one ``assistant`` turn whose
  ``content`` is the joined ``output_text``/refusal text and whose ``tool_calls``
  are the function calls (``call_id`` as the id). The node key of a stored reply
  therefore depends on its text and calls only, so a client's echo of the
  response's ``output`` (with or without ids, status, annotations or reasoning)
  maps to the node the proxy stored. ``custom_tool_call`` items count as calls too
  (their ``input`` as arguments).
- a ``function_call_output`` (any ``*_call_output``) → a ``tool`` turn
  (``tool_call_id`` = ``call_id``); an ``mcp_approval_response`` (the client's
  answer to an ``mcp_approval_request``) likewise, its ``approval_request_id`` as
  the id and the item as its content: the client's, not the model's.
- anything else (``compaction``, ``item_reference``, unknown types, non-objects)
  → an opaque ``assistant`` turn whose content is the item itself, hashed whole
  and forwarded as the client's own bytes (:mod:`proxy.rawjson`).

:meth:`ResponsesWire.with_messages` flattens turns back into items: a turn that
carries ``items`` is replaced by them, a turn the proxy made (the summary scaffold,
its acknowledgement) becomes an ``EasyInputMessage`` (``role`` + string
``content``). The memory block goes into the newest user message as an extra
``input_text`` part before the user's own (:meth:`ResponsesWire.inject_block`),
never as a system-role item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from memory_core.tools import memory_tools
from proxy import rewrite
from proxy.wire.base import StreamRound, WireAdapter
from proxy.wire.chat import STRICT_MODES, fit_tools, room_for_tools, sum_usage

if TYPE_CHECKING:
    from proxy.wire.streamsession import StreamSession

__all__ = ["RESPONSES", "STRICT_MODES", "Instructions", "ResponsesWire", "error_event",
           "flatten", "input_items", "reply_turn", "sum_usage", "to_turns"]

ITEMS = "items"
"""The key of a turn message that holds its original Responses items."""

_PROMPT_ROLES = ("user", "system", "developer")

CLIENT_CALLS = frozenset({"function_call", "custom_tool_call", "computer_call",
                          "local_shell_call", "shell_call", "apply_patch_call",
                          "mcp_approval_request"})
"""Output items the client must answer (a ``*_call_output`` or an approval) before the
response can go on; a round holding one beside a memory call ends with it shown."""


SERVER_ITEMS = frozenset({"web_search_call", "file_search_call", "code_interpreter_call",
                          "image_generation_call", "mcp_call", "mcp_list_tools"})
"""Output items of tools the upstream runs itself; nothing for the client to answer."""


class Instructions(dict[str, Any]):
    """The ``system`` turn standing for the request's ``instructions`` (dropped again
    when the turns become an ``input``)."""


def _is_message(item: Any) -> bool:
    return (isinstance(item, dict) and item.get("type", "message") == "message"
            and isinstance(item.get("role"), str))


_OTHER_OUTPUT = frozenset({"reasoning", "mcp_list_tools", "mcp_approval_request"})
"""Output items whose type does not end in ``_call``."""


def _is_output_side(item: Any) -> bool:
    """Items the model (or the upstream, for its own tools) produces: an assistant
    message, reasoning, any ``*_call``, an MCP tool listing or approval request."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if _is_message(item):
        return item["role"] == "assistant"
    return kind in _OTHER_OUTPUT or (isinstance(kind, str) and kind.endswith("_call"))


def _output_text(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    out = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict):
            for key in ("text", "refusal"):
                if isinstance(part.get(key), str):
                    out.append(part[key])
                    break
    return out


def reply_turn(items: list[Any]) -> dict[str, Any]:
    """One ``assistant`` turn for a run of model-output items (see module docstring)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if _is_message(item):
            texts.extend(_output_text(item))
        elif item.get("type") == "function_call":
            calls.append({"id": item.get("call_id"), "type": "function",
                          "function": {"name": item.get("name"),
                                       "arguments": item.get("arguments")}})
        elif item.get("type") == "custom_tool_call":  # free-form input (Codex's apply_patch)
            calls.append({"id": item.get("call_id"), "type": "custom",
                          "function": {"name": item.get("name"),
                                       "arguments": item.get("input")}})
    turn: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        turn["tool_calls"] = calls
    turn[ITEMS] = list(items)
    return turn


def to_turns(items: list[Any]) -> list[dict[str, Any]]:
    """The turn messages of a list of input items (see module docstring)."""
    turns: list[dict[str, Any]] = []
    run: list[Any] = []

    def close_run() -> None:
        if run:
            turns.append(reply_turn(run))
            run.clear()

    for item in items:
        if _is_output_side(item):
            run.append(item)
            continue
        close_run()
        if _is_message(item) and item["role"] in _PROMPT_ROLES:
            turns.append({"role": item["role"], "content": item.get("content"),
                          ITEMS: [item]})
        elif isinstance(item, dict) and isinstance(item.get("type"), str) and item[
                "type"].endswith("_call_output"):  # function, custom, shell… results
            turns.append({"role": "tool", "tool_call_id": item.get("call_id"),
                          "content": item.get("output"), ITEMS: [item]})
        elif isinstance(item, dict) and item.get("type") == "mcp_approval_response":
            turns.append({"role": "tool", "tool_call_id": item.get("approval_request_id"),
                          "content": [item], ITEMS: [item]})
        else:
            turns.append({"role": "assistant", "content": [item], ITEMS: [item],
                          "opaque": True})
    close_run()
    return turns


def flatten(turns: list[Any]) -> list[Any]:
    """The ``input`` items of turn messages (the instructions turn left out)."""
    out: list[Any] = []
    for turn in turns:
        if isinstance(turn, Instructions):
            continue
        items = turn.get(ITEMS) if isinstance(turn, dict) else None
        if (isinstance(items, list) and turn.get("role") == "tool" and len(items) == 1
                and isinstance(items[0], dict) and isinstance(turn.get("content"), str)
                and items[0].get("output") != turn["content"]):
            out.append(dict(items[0], output=turn["content"]))  # a result clipped to fit
        elif isinstance(items, list):
            out.extend(items)
        elif isinstance(turn, dict):  # made by the proxy: scaffold, acknowledgement
            out.append({"role": turn.get("role"), "content": turn.get("content")})
        else:
            out.append(turn)
    return out


def error_event(message: str) -> dict[str, Any]:
    """An in-band ``error`` event (its ``sequence_number`` is the stream's to add)."""
    return {"type": "error", "code": "upstream_error", "message": message, "param": None}


def input_items(body: dict[str, Any]) -> list[Any]:
    """The request's ``input`` as a list of items (a string is one user message)."""
    given = body.get("input")
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    return list(given) if isinstance(given, list) else []


def understood(body: Any) -> bool:
    """True for a body the memory steps can read: an object whose ``input`` is a
    string or a list (absent ``input`` is a request the upstream judges)."""
    return isinstance(body, dict) and isinstance(body.get("input"), str | list)


def _client_strict(tools: list[Any]) -> bool:
    return any(isinstance(t, dict) and t.get("type") == "function" and t.get("strict") is True
               for t in tools)


def _flat(tool: dict[str, Any], strict: bool) -> dict[str, Any]:
    """A Chat Completions definition of ours as a flat Responses function tool;
    without ``strict`` its nullable parameters become optional (as for chat)."""
    fn = tool["function"]
    out: dict[str, Any] = {"type": "function", "name": fn["name"],
                           "description": fn.get("description", "")}
    params = fn["parameters"]
    if strict:
        out["parameters"] = params
        out["strict"] = True
        return out
    props = {}
    for name, spec in params["properties"].items():
        kind = spec.get("type")
        if isinstance(kind, list) and "null" in kind:
            rest = [k for k in kind if k != "null"]
            spec = dict(spec, type=rest[0] if len(rest) == 1 else rest)
        props[name] = spec
    required = [n for n in params["required"]
                if not (isinstance(params["properties"][n].get("type"), list)
                        and "null" in params["properties"][n]["type"])]
    out["parameters"] = {"type": "object", "properties": props, "required": required}
    out["strict"] = False
    return out


class ResponsesWire(WireAdapter):
    """The Responses API (see module docstring). Streams with memory tools are
    handled by :mod:`proxy.handlers.responses`; :meth:`stream_round` is not offered."""

    name = "responses"
    raw_items_key = "input"
    conversation_key = "input"
    finish_cut = frozenset({"incomplete"})

    # -- requests -----------------------------------------------------------------------
    def messages(self, body: dict[str, Any]) -> list[Any]:
        turns: list[Any] = []
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            turns.append(Instructions(role="system", content=instructions))
        turns.extend(to_turns(input_items(body)))
        return turns

    def last_message(self, body: dict[str, Any]) -> Any:
        """The last turn of :meth:`messages`, converting only the last item when it
        is not an output item (a prompt message, a tool result or another item is a
        turn of its own, :func:`to_turns`); the whole input otherwise (a run of
        output items is one turn), or without input (the instructions)."""
        given = body.get("input")
        last = given[-1:] if isinstance(given, list) else input_items(body)
        if last and not _is_output_side(last[0]):
            return to_turns(last)[-1]
        turns = self.messages(body)
        return turns[-1] if turns else None

    def with_messages(self, body: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
        return dict(body, input=flatten(messages))

    def is_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def understood(self, body: Any) -> bool:
        return understood(body)

    def tools_wanted(self, body: dict[str, Any]) -> bool:
        """False when ``tool_choice`` is ``none``, ``required`` (every round must call a
        tool: the hidden rounds could end only on the round budget, with no answer) or
        forces a tool (any object form), ``tools`` is not a list, or ``background`` is
        true (the run goes on upstream after the proxy relayed its ``queued`` answer:
        no round could be hidden), or the client's tools leave no room under
        :data:`proxy.wire.chat.MAX_TOOLS`."""
        choice = body.get("tool_choice")
        if (choice in ("none", "required") or isinstance(choice, dict)
                or body.get("background") is True or not room_for_tools(body)):
            return False
        return body.get("tools") is None or isinstance(body.get("tools"), list)

    def add_tools(self, body: dict[str, Any], *, strict: str = "auto", short: bool = False
                  ) -> tuple[dict[str, Any], dict[str, str]]:
        client_tools = body.get("tools") or []
        taken = {t.get("name") for t in client_tools
                 if isinstance(t, dict) and isinstance(t.get("name"), str)}
        ours, names = memory_tools.definitions_for({n for n in taken if isinstance(n, str)},
                                               short=short)
        ours, names = fit_tools(ours, names, room_for_tools(body))
        keep = strict == "always" or (strict == "auto" and _client_strict(client_tools))
        out = dict(body)
        out["tools"] = [*client_tools, *(_flat(t, keep) for t in ours)]
        return out, names

    def inject_block(self, messages: list[Any], block: str, index: int | None = None
                     ) -> list[Any]:
        """A copy of ``messages`` whose user turn ``index`` (default: the last) starts
        with an ``input_text`` part holding ``block`` (the block ends with
        ``[Current Request]``: the user's own parts follow it, as in chat). The
        items before this message are untouched, so their prefix stays cacheable."""
        messages = list(messages)
        index = len(messages) - 1 if index is None else index
        turn = messages[index]
        items = turn.get(ITEMS) if isinstance(turn, dict) else None
        if not (isinstance(items, list) and len(items) == 1 and _is_message(items[0])):
            return rewrite.inject_block(messages, block, index)
        item = dict(items[0])
        content = item.get("content")
        part = {"type": "input_text", "text": block}
        if isinstance(content, str):
            parts: list[Any] = [part, {"type": "input_text", "text": content}]
        elif isinstance(content, list):
            parts = [part, *content]
        else:
            parts = [part]
        item["content"] = parts
        messages[index] = dict(turn, content=parts, **{ITEMS: [item]})
        return messages

    # -- whole answers -----------------------------------------------------------------
    def answer_message(self, obj: Any) -> dict[str, Any] | None:
        if not isinstance(obj, dict) or not isinstance(obj.get("output"), list):
            return None
        return reply_turn(obj["output"])

    def set_answer(self, obj: dict[str, Any], message: dict[str, Any],
                   finish_reason: Any, usage: dict[str, Any] | None) -> None:
        obj["output"] = list(message.get(ITEMS) or [])
        if usage is not None:
            obj["usage"] = usage

    def client_choices(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        msg = self.answer_message(obj)
        return [msg] if msg is not None else []

    def finish_reasons(self, obj: dict[str, Any]) -> list[Any]:
        return [obj.get("status")]

    def usage(self, obj: dict[str, Any]) -> Any:
        return obj.get("usage")

    def tool_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        return [i for i in message.get(ITEMS) or []
                if isinstance(i, dict) and i.get("type") in CLIENT_CALLS]

    def call_name(self, call: dict[str, Any]) -> str:
        """A ``function_call``'s name; "" for any other call the client answers (a
        ``custom_tool_call``, or an ``mcp_approval_request`` naming a remote MCP tool the
        proxy never saw and could not rename): only a function call can be a memory call."""
        name = call.get("name")
        return name if isinstance(name, str) and call.get("type") == "function_call" else ""

    def server_work(self, message: dict[str, Any]) -> list[Any]:
        """The round's :data:`SERVER_ITEMS` (a web search, an MCP call, an image) and,
        where there are any, its ``reasoning`` items in their places: a stream shows
        those once the round showed something, and an output item sent back by id
        needs the reasoning item that led to it ("provided without its required
        'reasoning' item")."""
        items = [i for i in message.get(ITEMS) or [] if isinstance(i, dict)]
        if not any(i.get("type") in SERVER_ITEMS for i in items):
            return []
        return [i for i in items if i.get("type") in SERVER_ITEMS or i.get("type") == "reasoning"]

    def lead_with(self, obj: dict[str, Any], parts: list[Any]) -> None:
        obj["output"] = [*parts, *(obj.get("output") or [])]

    def without_calls(self, message: dict[str, Any], keep: list[dict[str, Any]]
                      ) -> dict[str, Any]:
        kept = [i for i in message.get(ITEMS) or []
                if not (isinstance(i, dict) and i.get("type") in CLIENT_CALLS)
                or any(i is k for k in keep)]
        return reply_turn(kept)

    def tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        item = {"type": "function_call_output", "call_id": call.get("call_id"),
                "output": text}
        return {"role": "tool", "tool_call_id": call.get("call_id"), "content": text,
                ITEMS: [item]}

    def call_arguments(self, call: dict[str, Any]) -> Any:
        return call.get("arguments")

    def replayable(self, body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """With ``store: false`` a reasoning item without ``encrypted_content`` refers
        to nothing the upstream kept (a 404, "Item with id 'rs_…' not found"): it
        stays out. The items that followed it (up to the next reasoning item kept)
        then go without their ids: an output item sent back with its id must come
        with its reasoning item (a 400, "Item 'fc_…' of type 'function_call' was
        provided without its required 'reasoning' item"); without one it is plain
        input. Items after a kept reasoning item keep theirs, as does that item (the
        reference gives an input reasoning item a required ``id``). A ``function_call`` with
        ``arguments: ""`` (a no-argument call, as OpenAI-compatible servers write it)
        goes as ``"{}"``, what it was run with. Otherwise calls, text and encrypted
        reasoning go on unchanged, and so does a reasoning item that carries its
        text (``reasoning_text`` parts in ``content``: gpt-oss and other servers that
        show raw reasoning, and read it back on the next turn of a tool loop)."""
        items = message.get(ITEMS)
        if not isinstance(items, list):
            return message
        if any(isinstance(i, dict) and i.get("type") == "function_call"
               and i.get("arguments") == "" for i in items):
            items = [dict(i, arguments="{}") if isinstance(i, dict)
                     and i.get("type") == "function_call" and i.get("arguments") == ""
                     else i for i in items]
            message = dict(message, **{ITEMS: items})
        if body.get("store") is not False:
            return message
        kept: list[Any] = []
        orphaned = False  # after a reasoning item left out, before the next one kept
        for i in items:
            if isinstance(i, dict) and i.get("type") == "reasoning":
                orphaned = not i.get("encrypted_content") and not i.get("content")
                if not orphaned:
                    kept.append(i)
            elif orphaned and isinstance(i, dict) and "id" in i:
                kept.append({k: v for k, v in i.items() if k != "id"})
            else:
                kept.append(i)
        if len(kept) == len(items) and all(a is b for a, b in zip(kept, items)):
            return message
        return dict(message, **{ITEMS: kept})

    def client_answer(self, body: bytes, names: dict[str, str], previous: str | None
                      ) -> bytes:
        """The answer's echoed ``tools`` without ours; ``previous_response_id`` the
        client's own where the upstream's says null (a stateless replay)."""
        if b'"tools"' not in body and previous is None:
            return body
        from proxy.wire.responsesstream import without_our_tools  # noqa: PLC0415 - a cycle

        try:
            obj = rewrite.loads_exact(body)
        except (ValueError, RecursionError):
            return body
        scrubbed = without_our_tools(obj, names)
        if (previous is not None and isinstance(scrubbed, dict)
                and "previous_response_id" in scrubbed
                and scrubbed["previous_response_id"] is None):
            scrubbed = dict(scrubbed, previous_response_id=previous)
        return rewrite.dumps_body(scrubbed) if scrubbed is not obj else body

    # -- streams -------------------------------------------------------------------------
    def stream_session(self, names: dict[str, str], body: dict[str, Any], *,
                       previous: str | None = None) -> StreamSession:
        from proxy.wire.streamsession import ResponsesSession  # noqa: PLC0415 - a cycle

        return ResponsesSession(self, names, body, previous)

    def stream_round(self, names: dict[str, str], client_offset: int = 0, *,
                     later: bool = False, stream_id: Any = None,
                     created: Any = None, hold_text: bool = False) -> StreamRound:
        raise NotImplementedError("Responses streams with memory tools: see"
                                  " proxy.wire.responsesstream")

    def restate(self, kind: str, raw: bytes, *, finish_reason: Any, usage: Any,
                stream_id: Any, created: Any) -> bytes:
        raise NotImplementedError

    def stream_error(self, message: str) -> bytes:
        return b"event: error\ndata: " + orjson.dumps(error_event(message)) + b"\n\n"

    def heartbeat(self) -> bytes:
        return b": keep-alive\n\n"


RESPONSES = ResponsesWire()
"""The one Responses adapter."""
