"""The OpenAI Chat Completions wire adapter (``POST /v1/chat/completions``).

Body fields (``messages``, ``tools``, ``tool_choice``, ``functions``, ``n``,
``stream``), answer shapes (``choices[].message``, ``finish_reason``, ``usage``),
stream chunks (:mod:`proxy.wire.chatstream`) and the error shape, in one place.
"""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, Any

from memory_core.tools import memory_tools
from proxy.sse import block_json
from proxy.wire.base import StreamRound, WireAdapter
from proxy.wire.chatstream import ChatStreamRound, sse_data
from proxy.wire.chatstream import sum_usage  # noqa: F401 - re-exported (its home before)

if TYPE_CHECKING:
    from proxy.wire.streamsession import StreamSession

STRICT_MODES = ("auto", "always", "never")
"""``tools.strict``: memory tools carry ``"strict": true`` when the client's own
tools do (``auto``), always, or never."""


MAX_TOOLS = 128
"""The most ``tools`` OpenAI accepts in one request (Chat Completions and Responses:
more is a 400 ``array_above_max_length``); the memory tools take only the room the
client's leave."""


def room_for_tools(body: dict[str, Any]) -> int:
    """How many memory tools fit beside the client's ``tools`` (0 when none do)."""
    tools = body.get("tools")
    return max(0, MAX_TOOLS - (len(tools) if isinstance(tools, list) else 0))


def fit_tools(ours: list[dict[str, Any]], names: dict[str, str], room: int
              ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The first ``room`` of ``ours`` (Chat Completions definitions) and their names."""
    ours = ours[:room]
    kept = {t["function"]["name"] for t in ours}
    return ours, {k: v for k, v in names.items() if k in kept}


def _client_strict(tools: list[Any]) -> bool:
    return any(isinstance(t, dict) and isinstance(t.get("function"), dict)
               and t["function"].get("strict") is True for t in tools)


def _loose(tool: dict[str, Any]) -> dict[str, Any]:
    """A strict definition made plain: no ``strict``, nullable parameters optional
    (and not nullable), no ``additionalProperties`` (fewer prompt tokens)."""
    fn = {k: v for k, v in tool["function"].items() if k != "strict"}
    params = fn["parameters"]
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
    fn["parameters"] = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "function": fn}


@functools.lru_cache(maxsize=64)
def _offered(taken: frozenset[str], short: bool, room: int, keep_strict: bool
             ) -> tuple[tuple[dict[str, Any], ...], tuple[tuple[str, str], ...]]:
    """The memory tools :meth:`ChatWire.add_tools` appends beside client tools named
    ``taken`` (``room``: how many fit; ``keep_strict``: as defined, else
    :func:`_loose`), and their offered → canonical names. The same few answers on
    every request, built once each; the definitions are shared, never changed."""
    ours, names = memory_tools.definitions_for(set(taken), short=short)
    ours, names = fit_tools(ours, names, room)
    if not keep_strict:
        ours = [_loose(t) for t in ours]
    return tuple(ours), tuple(names.items())


class _Round(ChatStreamRound, StreamRound):
    def finish_reasons(self) -> list[Any]:
        return self.acc.finish_reasons()

    def usage(self) -> dict[str, Any] | None:
        return self.acc.usage

    def answered(self) -> bool:
        return self.acc.done or any(self.acc.finish_reasons())

    def identity(self) -> tuple[Any, Any]:
        return self.acc.id, self.acc.created


class ChatWire(WireAdapter):
    """Chat Completions (see module docstring)."""

    name = "chat"

    def messages(self, body: dict[str, Any]) -> list[Any]:
        return list(body["messages"])

    def with_messages(self, body: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
        return dict(body, messages=messages)

    def is_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def tools_wanted(self, body: dict[str, Any]) -> bool:
        """False when the request rules our tools out: ``tool_choice`` ``none``,
        ``required`` (a call of the client's own tools is due: a memory call would
        satisfy it and leave the client none), a forced client function, the legacy
        ``functions`` parameter (no mixing with ``tools``), a ``prediction``
        (Predicted Outputs refuse ``tools``), ``n`` above 1 (one answer per choice: no
        round could be hidden in all), or no room under :data:`MAX_TOOLS`."""
        choice = body.get("tool_choice")
        if (choice in ("none", "required") or body.get("functions") is not None
                or body.get("prediction") is not None or not room_for_tools(body)):
            return False
        if isinstance(choice, dict):  # {"type": "function", "function": {"name": ...}}
            return False
        n = body.get("n")
        if n is not None and n != 1:
            return False
        return body.get("tools") is None or isinstance(body.get("tools"), list)

    def add_tools(self, body: dict[str, Any], *, strict: str = "auto", short: bool = False
                  ) -> tuple[dict[str, Any], dict[str, str]]:
        """Return ``(body with our tools appended, offered name → canonical name)``.

        ``strict`` (:data:`STRICT_MODES`): whether our definitions keep
        ``"strict": true``; ``auto`` follows the client's tools (some upstreams
        reject ``strict``), and a request without tools gets none.
        """
        client_tools = body.get("tools") or []
        taken = {  # a function's name or a custom (freeform) tool's: one namespace
            t[kind].get("name") for t in client_tools for kind in ("function", "custom")
            if isinstance(t, dict) and isinstance(t.get(kind), dict)
        }
        keep_strict = strict == "always" or (strict == "auto" and _client_strict(client_tools))
        ours, names = _offered(frozenset(n for n in taken if isinstance(n, str)), short,
                               room_for_tools(body), keep_strict)
        out = dict(body)
        out["tools"] = [*client_tools, *ours]
        return out, dict(names)

    # -- whole answers -----------------------------------------------------------------
    def _first_choice(self, obj: Any) -> dict[str, Any] | None:
        if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
            return None
        for ch in obj["choices"]:
            if isinstance(ch, dict) and ch.get("index", 0) == 0 and isinstance(
                    ch.get("message"), dict):
                return ch
        return None

    def answer_message(self, obj: Any) -> dict[str, Any] | None:
        choice = self._first_choice(obj)
        return choice["message"] if choice is not None else None

    def set_answer(self, obj: dict[str, Any], message: dict[str, Any],
                   finish_reason: Any, usage: dict[str, Any] | None) -> None:
        choice = self._first_choice(obj)
        if choice is not None:
            choice["message"] = message
            choice["finish_reason"] = finish_reason
        if usage is not None:
            obj["usage"] = usage

    def client_choices(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        ordered = sorted((c for c in obj.get("choices", []) if isinstance(c, dict)),
                         key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int)
                         else 0)
        return [c["message"] for c in ordered if isinstance(c.get("message"), dict)]

    def finish_reasons(self, obj: dict[str, Any]) -> list[Any]:
        return [c.get("finish_reason") for c in obj.get("choices", []) if isinstance(c, dict)]

    def usage(self, obj: dict[str, Any]) -> Any:
        return obj.get("usage")

    def tool_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]

    def call_name(self, call: dict[str, Any]) -> str:
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        return name if isinstance(name, str) else ""

    def without_calls(self, message: dict[str, Any], keep: list[dict[str, Any]]
                      ) -> dict[str, Any]:
        out = dict(message)
        if keep:
            out["tool_calls"] = keep
        else:
            out.pop("tool_calls", None)
            if out.get("content") is None:
                out["content"] = ""
        return out

    def tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call.get("id"), "content": text}

    def name_calls(self, calls: list[dict[str, Any]], seed: str) -> None:
        for i, call in enumerate(calls):
            if not (isinstance(call.get("id"), str) and call["id"]):
                digest = hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=12).hexdigest()
                call["id"] = f"call_lcm{digest}"

    # -- streams -------------------------------------------------------------------------
    def stream_round(self, names: dict[str, str], client_offset: int = 0, *,
                     later: bool = False, stream_id: Any = None,
                     created: Any = None, hold_text: bool = False) -> StreamRound:
        return _Round(names, client_offset, later=later, stream_id=stream_id, created=created,
                      hold_text=hold_text)

    def stream_session(self, names: dict[str, str], body: dict[str, Any], *,
                       previous: str | None = None) -> StreamSession:
        from proxy.wire.streamsession import StreamSession  # noqa: PLC0415 - a cycle

        return StreamSession(self, names, body)

    def restate(self, kind: str, raw: bytes, *, finish_reason: Any, usage: Any,
                stream_id: Any, created: Any) -> bytes:
        obj = block_json(raw)
        if kind == "finish":
            for ch in obj.get("choices", []):
                ch["finish_reason"] = finish_reason
            if isinstance(obj.get("usage"), dict) and isinstance(usage, dict):
                obj["usage"] = usage  # usage on the finish chunk (Gemini, vLLM): summed
        elif kind == "usage":
            obj["usage"] = usage
        # The answer's id and created where it has them; an upstream that writes none
        # (OpenVINO, TGI) gets none added: a strict client reads ``"id": null`` as an
        # id of the wrong type.
        for key, value in (("id", stream_id), ("created", created)):
            if value is not None:
                obj[key] = value
        return sse_data(obj)

    def stream_error(self, message: str) -> bytes:
        return sse_data({"error": {"message": message, "type": "upstream_error",
                                   "param": None, "code": None}})

    def stream_upstream_error(self, raw: bytes) -> bytes | None:
        obj = self.upstream_error(raw)
        return sse_data(obj) if obj is not None else None

    def heartbeat(self) -> bytes:
        return b": keep-alive\n\n"


CHAT = ChatWire()
"""The one Chat Completions adapter."""
