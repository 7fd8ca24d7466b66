"""Message tree: canonical form, node keys and branch bookkeeping (DESIGN §3).

A client resends its whole history on every call. Each message is stored once as a
node whose key is ``sha256("lcm-node-v1" ‖ parent key ‖ canonical JSON)``. Two
requests that share a prefix therefore share nodes; an edited or regenerated
message gets a different key and forks a branch, and nothing is ever overwritten.

The canonical form keeps only what identifies a message to the model — ``role``,
``name``, ``content`` (text or parts), ``tool_calls`` (id, type, function name and
arguments), ``tool_call_id`` and the legacy ``function_call`` — so that the client's
echo of an assistant reply (which may add ``refusal: null``, ``annotations: []``…)
maps to the node the proxy stored when it produced that reply. Prompt-caching
breakpoints (``cache_control`` on a content part, at any depth of a part's own
``content``) are left out too: a client such as Claude Code moves its breakpoint to
the newest message on every turn, and the message it left is still the same message
(a form without ``cache_control`` is unchanged, so the key version stays).

Clients and frameworks re-serialise history in equivalent spellings, so content is
compared in a normal form (:func:`normal_content`, :func:`normal_arguments`): a
string or text parts (``text``/``input_text``/``output_text``, with or without
``citations``/``annotations``), ``null``/``""``/absent content, thinking blocks kept
or dropped, tool-call arguments with other whitespace or key order. A message
already in normal form (string content, compact sorted arguments) has the bytes it
always had, so its key is unchanged; a path stored before this normalisation is
still matched by its ``legacy`` keys (:func:`chain_keys`), which its new messages
then extend. Only what is compared is normalised: the bytes forwarded and the raw
JSON stored stay as the client sent them. Pure functions only: no I/O,
unit-testable.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from memory_core.extraction.prepare import user_words

NODE_KEY_VERSION = "lcm-node-v1"
"""Prefix hashed into every node key; bump it if the canonical form ever changes."""

_ROOT = b"root"


def canonical_message(message: Any, *, legacy: bool = False) -> dict[str, Any]:
    """Return the canonical form of one chat message.

    Takes a message as found in an OpenAI ``messages`` array (normally a dict; any
    other JSON value is kept whole under ``"raw"`` so that odd input still hashes
    deterministically). Returns a new dict with only the identifying fields, empty
    or null ``content`` normalised to ``None``, ``content`` in its normal form
    (:func:`normal_content`: text parts as one string, thinking left out) and tool
    calls reduced to ``{id, type, function: {name, arguments}}`` with JSON
    ``arguments`` in one spelling (:func:`normal_arguments`). ``legacy``: the form
    node keys were made from before that normalisation (content parts as sent, less
    ``cache_control``; arguments as sent), kept so that paths stored then still
    match (:func:`memory_core.capture.evidence.capture_request`). Never raises.
    """
    if not isinstance(message, dict):
        return {"raw": message}
    out: dict[str, Any] = {"role": message.get("role")}
    name = message.get("name")
    if name is not None:
        out["name"] = name
    content = message.get("content")
    if legacy:
        out["content"] = (_without_breakpoints(content)
                          if content not in ("", [], None) else None)
    else:
        out["content"] = normal_content(content, out["role"] == "assistant")
    tool_calls = message.get("tool_calls")
    if tool_calls:
        calls = []
        for call in tool_calls if isinstance(tool_calls, list) else [tool_calls]:
            if isinstance(call, dict):
                given = call.get("function")
                fn = given if isinstance(given, dict) else {}
                args = fn.get("arguments")
                calls.append(
                    {
                        "id": call.get("id"),
                        "type": call.get("type", "function"),
                        "function": {"name": fn.get("name"),
                                     "arguments": args if legacy else normal_arguments(args)},
                    }
                )
            else:
                calls.append(call)
        out["tool_calls"] = calls
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message.get("tool_call_id")
    if message.get("function_call") is not None:
        out["function_call"] = message.get("function_call")
    return out


_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})
"""Part types that carry only text: Chat Completions and Anthropic ``text``, the
Responses API's ``input_text`` and ``output_text``."""

_TEXT_EXTRAS = frozenset({"type", "text", "cache_control", "citations", "annotations",
                          "logprobs"})
"""Keys a text part may carry that do not change what it says: its type, a prompt
cache breakpoint, and what the API added about the text (Anthropic ``citations``,
the Responses API's ``annotations`` and ``logprobs``)."""

_THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

_NEST_LIMIT = 32
"""Parts nested deeper than this (a ``tool_result`` inside a ``tool_result``…) are
compared as sent, less ``cache_control``: the normal form stays iterative-safe."""


def normal_content(content: Any, assistant: bool = False, depth: int = 0) -> Any:
    """The normal form of a message's (or a part's) ``content`` for matching.

    Equivalent spellings a client may send back normalise alike: ``None``, ``""``
    and ``[]`` are ``None``; a text part (``text``, ``input_text`` or
    ``output_text``, with or without ``cache_control``, ``citations`` or
    ``annotations``) is its text, and adjacent text parts are one text (joined
    without separator, as the Responses adapter joins ``output_text``); content
    that is then only text is that string. Other parts keep their fields less
    ``cache_control``, their own ``content`` (a ``tool_result``'s) normalised the
    same way. In an assistant message, ``thinking`` and ``redacted_thinking``
    blocks are left out: the Messages API lets a client drop them from earlier
    turns. Returns a new value; the input is not changed.
    """
    if content in ("", [], None):
        return None
    if not isinstance(content, list):
        return content
    if depth >= _NEST_LIMIT:
        return _without_breakpoints(content)
    out: list[Any] = []
    run: list[str] = []
    for part in content:
        if isinstance(part, dict):
            kind = part.get("type")
            if (kind in _TEXT_TYPES and isinstance(part.get("text"), str)
                    and part.keys() <= _TEXT_EXTRAS):
                run.append(part["text"])
                continue
            if assistant and kind in _THINKING_TYPES:
                continue
            part = {k: v for k, v in part.items() if k != "cache_control"}
            if "content" in part:
                part["content"] = normal_content(part["content"], False, depth + 1)
        if run:
            out.append({"type": "text", "text": "".join(run)})
            run = []
        out.append(part)
    if run:
        if not out:
            return "".join(run) or None
        out.append({"type": "text", "text": "".join(run)})
    return out or None


def normal_arguments(arguments: Any) -> Any:
    """Tool-call ``arguments`` (JSON text) in one spelling: a JSON object re-written
    compactly with sorted keys, so that whitespace and key order a client's
    re-serialisation changed do not tell calls apart. Text that is not a JSON
    object, that has a repeated key (its last value would win: order matters) or
    an integer past 64 bits is returned as it is."""
    if not isinstance(arguments, str) or not arguments.lstrip().startswith("{"):
        return arguments
    try:
        value = json.loads(arguments, object_pairs_hook=_unique_keys,
                           parse_constant=_no_constant)
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (ValueError, TypeError, RecursionError, orjson.JSONEncodeError):
        return arguments


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity: not JSON, orjson would write null


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("repeated key")
    return out


def _without_breakpoints(content: Any) -> Any:
    """``content`` with the ``cache_control`` of each part (and of the parts of a
    part's own ``content``, as a ``tool_result``'s) left out; anything else as is.
    Iterative: nesting as deep as a client sends never exhausts the stack."""
    if not isinstance(content, list):
        return content
    top: list[Any] = list(content)
    stack = [top]
    while stack:
        parts = stack.pop()
        for at, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            inner = part.get("content")
            if "cache_control" not in part and not isinstance(inner, list):
                continue
            part = {k: v for k, v in part.items() if k != "cache_control"}
            if isinstance(inner, list):
                part["content"] = list(inner)
                stack.append(part["content"])
            parts[at] = part
    return top


def canonical_bytes(message: Any, *, legacy: bool = False) -> bytes:
    """Serialise :func:`canonical_message` deterministically (sorted keys, orjson).

    Values orjson cannot serialise (non-str keys, integers past 64 bits, nesting past
    254 levels) fall back to their ``repr`` so that hashing never raises.
    """
    canon = canonical_message(message, legacy=legacy)
    try:
        return orjson.dumps(canon, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        pass
    try:
        return repr(canon).encode("utf-8", "surrogatepass")
    except RecursionError:
        # Nested deeper than Python's recursion limit (orjson parses up to 1024
        # levels): an iterative encoding, still deterministic.
        return dumps_deep(canon, sort_keys=True).encode("ascii")


def node_key(parent_key: str | None, message: Any, *, legacy: bool = False) -> str:
    """Return the hex sha256 node key of ``message`` stored under ``parent_key``.

    ``parent_key`` is ``None`` for the first message of a conversation; ``legacy``:
    from the form keys had before content was normalised (:func:`canonical_message`).
    """
    h = hashlib.sha256()
    h.update(NODE_KEY_VERSION.encode())
    h.update(b"\x00")
    h.update(parent_key.encode() if parent_key else _ROOT)
    h.update(b"\x00")
    h.update(canonical_bytes(message, legacy=legacy))
    return h.hexdigest()


def chain_keys(messages: list[Any], parent_key: str | None = None, *,
               legacy: bool = False) -> list[str]:
    """Return the node key of every message of ``messages`` in order.

    Each key depends on all earlier ones, so equal keys mean equal prefixes.
    ``legacy``: see :func:`node_key`.
    """
    keys: list[str] = []
    parent = parent_key
    for message in messages:
        parent = node_key(parent, message, legacy=legacy)
        keys.append(parent)
    return keys


class ChainKeyCache:
    """Memoised :func:`chain_keys` for histories that grow by appending.

    A client resends its whole history on every call; hashing every message's
    canonical form again costs about 5 µs per message (11 ms for 2 000 messages,
    measured here). This cache remembers, per conversation root (the first message's
    key), the last few message lists it saw: their count, the length of their orjson
    bytes, their keys, and either those bytes or their sha256. A new list whose
    serialised form starts with the same bytes, ending on a message boundary, has
    the same first ``count`` messages — byte-identical, so identical canonical forms
    — and reuses their keys; only the new tail is hashed.

    Cost per call: one ``orjson.dumps`` of the list, and one comparison with the
    bytes kept (a ``memcmp``, about 0.04 ms per 2 MB) or, for a list whose bytes
    were let go, one sha256 pass (about 1 ms per 2 MB). Memory: the keys (about 100
    bytes per message) for at most ``max_roots × per_root`` lists, and serialised
    lists up to ``max_kept_bytes`` in all: a conversation's earlier lists share the
    bytes of the newest one they start, so a growing history is held once; past
    the bound the least recently used conversations' are hashed and let go.

    Thread-safe. Results are always exactly ``chain_keys(messages)``; anything the
    fast path cannot serialise (integers past 64 bits…) takes the slow path.
    """

    def __init__(self, max_roots: int = 256, per_root: int = 4,
                 max_kept_bytes: int = 8 << 20) -> None:
        self._max_roots, self._per_root = max_roots, per_root
        self._max_kept = max_kept_bytes
        self._kept = 0  # bytes of the serialised lists held
        self._roots: OrderedDict[str, list[_Seen]] = OrderedDict()
        self._lock = threading.Lock()

    def keys(self, messages: list[Any]) -> list[str]:
        """Return ``chain_keys(messages)`` (a new list; the caller may keep it)."""
        if len(messages) < 8:
            return chain_keys(messages)
        try:
            data = orjson.dumps(messages)
        except TypeError:
            return chain_keys(messages)
        root = node_key(None, messages[0])
        view = memoryview(data)
        with self._lock:
            entries = list(self._roots.get(root, ()))
        best: _Seen | None = None
        for seen in sorted(entries, key=lambda e: -e.count):
            # ``length - 1`` drops the closing "]"; the next byte must close or
            # separate a message for the prefix to be whole messages.
            if (seen.count > len(messages) or seen.length > len(data)
                    or data[seen.length - 1] not in b",]"):
                continue
            held = seen.data
            if held is not None:
                same = data.startswith(memoryview(held)[: seen.length - 1])
            else:
                same = hashlib.sha256(view[: seen.length - 1]).digest() == seen.digest
            if same:
                best = seen  # the longest prefix that matches
                break
        if best is None:
            out = chain_keys(messages)
        else:
            out = best.keys[:best.count] + chain_keys(messages[best.count:],
                                                      best.keys[best.count - 1])
        entry = _Seen(len(messages), len(data), out, data)
        shared, reach = (best.data, best.length) if best is not None else (None, 0)
        with self._lock:
            kept: list[_Seen] = []
            before = self._roots.pop(root, [])
            self._kept -= _bytes_held(before)
            for e in before:
                if e.count == len(messages) or len(kept) >= self._per_root - 1:
                    continue
                if shared is not None and e.data is shared and e.length <= reach:
                    # Its bytes start the matched list's, so they start this one's:
                    # one copy of a growing history is kept, not one per list. A
                    # longer list sharing them went on another branch (a fork).
                    e.data = data
                kept.append(e)
            self._roots[root] = [entry, *kept]
            self._kept += _bytes_held(self._roots[root])
            while len(self._roots) > self._max_roots:
                self._kept -= _bytes_held(self._roots.popitem(last=False)[1])
            if self._kept > self._max_kept:
                self._let_go()
        return list(out)

    def _let_go(self) -> None:
        """Hash and drop kept bytes, least recently used conversations first, until
        they fit ``max_kept_bytes`` (under the lock). A conversation's bytes are its
        own (lists share them only within one), so what it lets go is subtracted."""
        for entries in self._roots.values():
            self._kept -= _bytes_held(entries)
            for e in entries:
                if e.data is not None:
                    e.digest = hashlib.sha256(memoryview(e.data)[: e.length - 1]).digest()
                    e.data = None
            if self._kept <= self._max_kept:
                return


def _bytes_held(entries: list[_Seen]) -> int:
    """Bytes of the distinct serialised lists ``entries`` keep (shared ones once)."""
    return sum(len(d) for d in {id(e.data): e.data for e in entries
                                if e.data is not None}.values())


@dataclass(slots=True)
class _Seen:
    """A message list :class:`ChainKeyCache` saw: its count, the length of its
    serialised bytes, its keys, and those bytes (``data``) or, once let go, the
    sha256 of all but their closing bracket (``digest``)."""

    count: int
    length: int
    keys: list[str]
    data: bytes | None
    digest: bytes = b""


def _approval_text(part: dict[str, Any]) -> str:
    """``[mcp approval: approved]`` or ``denied``, with the client's reason after it."""
    said = "approved" if part.get("approve") is True else "denied"
    reason = part.get("reason")
    return f"[mcp approval: {said}]" + (f" {reason}" if isinstance(reason, str) and reason
                                         else "")


def message_text(message: Any) -> str:
    """Return the searchable plain text of a message (characters, not tokens).

    Text parts of multimodal ``content`` are joined with newlines; image/audio parts
    become placeholders such as ``[image_url]``; tool calls are rendered as
    ``name(arguments)`` so that they can be searched; a Responses MCP approval
    answer as its decision and the client's reason.
    """
    if not isinstance(message, dict):
        return "" if message is None else _plain(message)
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("refusal"), str):
                    parts.append(part["refusal"])
                elif part.get("type") == "tool_use":  # Anthropic Messages
                    parts.append(f"{part.get('name')}({_plain_json(part.get('input'))})")
                elif part.get("type") == "tool_result":
                    parts.append(message_text({"content": part.get("content")}))
                elif part.get("type") == "mcp_approval_response":  # Responses
                    parts.append(_approval_text(part))
                else:
                    parts.append(f"[{part.get('type', 'part')}]")
            elif isinstance(part, str):
                parts.append(part)
    elif content is not None:
        parts.append(_plain(content))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, (list, tuple)) else ():
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            fn = call["function"]
            parts.append(f"{fn.get('name')}({fn.get('arguments') or ''})")
    fc = message.get("function_call")
    if isinstance(fc, dict):
        parts.append(f"{fc.get('name')}({fc.get('arguments') or ''})")
    return "\n".join(p for p in parts if p)


def spoken_text(message: Any) -> str:
    """The text of a user message that its author wrote, for extraction: as
    :func:`message_text`, less what the client put in the turn that the user did not
    say: Anthropic ``tool_result`` blocks (a tool's output, sent in a ``user``
    message), tool calls and media placeholders. Text parts are joined with newlines.
    (What a client adds as text, a ``<system-reminder>`` or an AGENTS.md block, is
    masked by the extraction itself: :func:`memory_core.extraction.prepare.context_spans`.)
    """
    if not isinstance(message, dict):
        return message_text(message)
    content = message.get("content")
    if not isinstance(content, list):
        return message_text({"content": content})
    return "\n".join(part["text"] if isinstance(part, dict) else part
                     for part in content
                     if isinstance(part, str) or (isinstance(part, dict)
                                                  and part.get("type") != "tool_result"
                                                  and isinstance(part.get("text"), str)
                                                  and part["text"]))


def query_text(message: Any) -> str:
    """What a search for a user turn reads (the block's query): the words its author
    wrote (:func:`spoken_text`, without a client's tagged blocks:
    :func:`memory_core.extraction.prepare.user_words`), else :func:`message_text`
    without them (a turn of tool results only)."""
    words = user_words(spoken_text(message))
    if words.strip():
        return words
    whole = message_text(message)
    return user_words(whole) or whole


def _plain_json(value: Any) -> str:
    """``value`` as compact JSON text (``str`` when it is not JSON-ready)."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _plain(value)


def _plain(value: Any) -> str:
    """``str(value)`` for odd content (numbers, objects), without the recursion limit."""
    try:
        return str(value)
    except RecursionError:
        return dumps_deep(value)


def dumps_deep(value: Any, *, sort_keys: bool = False) -> str:
    """Serialise a parsed JSON value as ASCII JSON text without recursion.

    For values nested too deeply for the stdlib encoder (``RecursionError``) or
    orjson (254 levels). Non-str keys become ``str(key)``; other leaves are written
    by ``json.dumps`` (``default=repr``). ``sort_keys`` orders object keys.
    """
    parts: list[str] = []
    stack: list[list[Any]] = []  # [child iterator, closing bracket, is_object, first]

    def begin(v: Any) -> None:
        if isinstance(v, dict):
            items = sorted(v.items(), key=lambda kv: str(kv[0])) if sort_keys else v.items()
            parts.append("{")
            stack.append([iter(items), "}", True, True])
        elif isinstance(v, (list, tuple)):
            parts.append("[")
            stack.append([iter(v), "]", False, True])
        else:
            parts.append(json.dumps(v, ensure_ascii=True, default=repr))

    begin(value)
    while stack:
        frame = stack[-1]
        child: Any = next(frame[0], _END)
        if child is _END:
            parts.append(frame[1])
            stack.pop()
            continue
        if not frame[3]:
            parts.append(",")
        frame[3] = False
        if frame[2]:
            key, child = child
            parts.append(json.dumps(key if isinstance(key, str) else str(key)) + ":")
        begin(child)
    return "".join(parts)


_END = object()
