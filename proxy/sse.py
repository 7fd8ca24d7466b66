"""Server-sent events: a pure decoder (bytes in, events out) and a chunk accumulator.

The relay forwards the upstream's bytes untouched; this module only *reads* them
so that memory can keep the assembled reply. Sans-io: nothing here touches a
socket, so every edge case (events split across reads, several in one read,
CRLF/CR/LF line endings, ``:`` comments, ``data: [DONE]``, usage chunks with empty
``choices``, tool-call fragments) is tested from byte generators.
Format: https://html.spec.whatwg.org/multipage/server-sent-events.html
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: ``data`` is the ``data:`` lines joined by ``\\n``."""

    data: str
    event: str = ""
    id: str = ""
    retry: int | None = None


class SSEDecoder:
    """Incremental SSE parser. Feed it bytes in any split; it returns whole events.

    ``feed(chunk)`` returns the events completed by ``chunk`` (possibly none);
    ``close()`` returns an event left unterminated at end of stream, as browsers do
    not but robust clients should (the upstream may omit the final blank line).
    Comments (``: keep-alive``) are counted in ``comments`` and otherwise ignored.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[str] = []
        self._event = ""
        self._id = ""
        self._retry: int | None = None
        self._has_field = False
        self._skip_lf = False  # the last read ended in CR: a leading LF completes CRLF
        self._started = False  # a UTF-8 BOM is stripped from the very start only
        self.comments = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume ``chunk`` and return the events it completes.

        A CR ends its line at once, even at the end of a read (so a CR-terminated
        event is not held back until more bytes arrive); an LF opening the next read
        is then the second half of that CRLF and is skipped. Each byte is scanned a
        bounded number of times, so decoding a whole multi-megabyte body at once
        stays linear.
        """
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buf = self._buf + chunk if self._buf else chunk
        if not self._started:
            if len(buf) < 3 and _BOM.startswith(buf):
                self._buf = buf  # could still be the BOM: wait for more bytes
                return []
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[3:]
        events: list[SSEEvent] = []
        start = 0
        n = len(buf)
        cr = buf.find(b"\r")
        lf = buf.find(b"\n")
        while start < n:
            # Positions found earlier stay valid until ``start`` passes them; -1 means
            # "none in the rest of the buffer", which stays true.
            if 0 <= cr < start:
                cr = buf.find(b"\r", start)
            if 0 <= lf < start:
                lf = buf.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                end = cr
                if cr + 1 == n:
                    nxt = n
                    self._skip_lf = True
                elif buf[cr + 1] == 0x0A:
                    nxt = cr + 2
                else:
                    nxt = cr + 1
            else:
                end, nxt = lf, lf + 1
            self._line(buf[start:end], events)
            start = nxt
        self._buf = buf[start:]
        return events

    def close(self) -> list[SSEEvent]:
        """Flush at end of stream: a pending line and an undispatched event."""
        events: list[SSEEvent] = []
        self._skip_lf = False
        if self._buf:
            line, self._buf = self._buf, b""
            if self._started or not _BOM.startswith(line):
                self._line(line, events)
        if self._has_field:
            self._dispatch(events)
        return events

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            self.comments += 1
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        else:
            return
        self._has_field = True

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event, self._id, self._retry))
        self._data = []
        self._event = ""
        self._retry = None
        self._has_field = False


_REASONING = ("reasoning_content", "reasoning")
"""Streamed reasoning text fields (DeepSeek's ``reasoning_content``, OpenRouter's
``reasoning``); ``reasoning_details`` is a list, concatenated."""


def _text(value: Any) -> str:
    """A fragment to append: strings as they are, anything else (null, junk) as ``""``."""
    return value if isinstance(value, str) else ""


def args_text(value: Any) -> str:
    """A tool call's arguments fragment as text: a string as it is; a JSON object (the
    form some OpenAI-compatible servers write, llama.cpp's server in one release)
    as its JSON text; anything else (null, junk) as ``""``."""
    if isinstance(value, dict):
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError is one: an integer past 64 bits
            return json.dumps(value)
    return _text(value)


def name_piece(held: str, piece: Any) -> str:
    """What a streamed tool-call fragment adds to the call's name ``held`` so far.

    The name arrives in the call's first fragment; some OpenAI-compatible servers
    (MiniMax through NVIDIA NIM, Fireworks) restate the whole name, and the id, in
    every fragment. A piece equal to the name already held is such a restatement and
    adds nothing (appending it gave ``memory_grepmemory_grep``); anything else (a
    name sent in pieces) is appended. Not a string: nothing."""
    text = _text(piece)
    return "" if held and text == held else text


class CallSlots:
    """Which call each streamed tool-call fragment of one choice belongs to (sans-io).

    A fragment names its call by ``index``; the slot key returned is that index
    unless the index was reused. Some OpenAI-compatible servers break the rule
    that each call has an index of its own: Ollama streams ``index: 0`` for every
    call of a parallel batch, older builds and others omit ``index``. So a fragment
    that carries an id other than the one its index's call holds, and a name, starts
    a new call (keyed past every key so far; later fragments with that index, id-less,
    continue it); without ``index``, a new id starts a call and none continues the
    last. A server that restates the same id in every fragment continues its call.
    """

    def __init__(self) -> None:
        self.ids: dict[int, str | None] = {}
        """slot key → the id its call carried first (``None`` before one came)."""
        self._open: dict[int, int] = {}
        """index the upstream wrote → the slot key of the last call it started."""
        self._last: int | None = None

    def _new(self, preferred: int | None) -> int:
        key = preferred if preferred is not None and preferred not in self.ids else (
            max(self.ids) + 1 if self.ids else 0)
        self.ids[key] = None
        return key

    def key(self, frag: dict[str, Any]) -> int:
        """The slot key of ``frag`` (a ``delta.tool_calls`` element)."""
        cid = frag.get("id") if isinstance(frag.get("id"), str) and frag.get("id") else None
        idx = frag.get("index")
        if isinstance(idx, int) and not isinstance(idx, bool):
            key = self._open.get(idx)
            if key is None:
                key = self._open[idx] = self._new(idx)
            elif cid is not None and self.ids[key] not in (None, cid):
                fn = frag.get("function")
                name = fn.get("name") if isinstance(fn, dict) else None
                if isinstance(name, str) and name:
                    key = self._open[idx] = self._new(None)
        elif self._last is not None and cid in (None, self.ids[self._last]):
            key = self._last
        else:
            key = self._new(None)
        if cid is not None and self.ids[key] is None:
            self.ids[key] = cid
        self._last = key
        return key


def content_text(content: Any) -> str:
    """The text of a message's ``content``: the string, or the ``text`` of its text
    parts (Mistral's reasoning models write a list of chunks; their ``thinking``
    chunks are no part of the answer's text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(c.get("text") or "") for c in content
                       if isinstance(c, dict) and c.get("type") == "text")
    return ""


def _joined_fields(last: dict[str, Any], chunk: dict[str, Any], key: str,
                   joined: Any) -> dict[str, Any]:
    """``last`` and the ``chunk`` that goes on it as one chunk: ``key`` holds
    ``joined``, and a field ``chunk`` carries (a ``signature``, ``closed``) is kept,
    over the one before it unless ``None``."""
    out = dict(last)
    out.update((k, v) for k, v in chunk.items() if v is not None or k not in out)
    out[key] = joined
    return out


def _joined_chunks(pieces: list[Any]) -> list[Any]:
    """Streamed ``content`` pieces (strings and chunk lists) as one chunk list, as the
    whole answer writes it: a string is a ``text`` chunk, and a chunk that goes on
    the one before it (text after text, thinking after thinking) joins it, so a
    turn sent back leads with one thinking chunk (Mistral refuses two)."""
    out: list[Any] = []
    for piece in pieces:
        if piece == "":  # an empty delta between two bursts of thinking joins nothing
            continue
        chunks = piece if isinstance(piece, list) else [{"type": "text", "text": piece}]
        for c in chunks:
            last = out[-1] if out else None
            if not (isinstance(c, dict) and isinstance(last, dict)
                    and c.get("type") == last.get("type")):
                out.append(c)
            elif c.get("type") == "text" and isinstance(c.get("text"), str) and isinstance(
                    last.get("text"), str):
                out[-1] = _joined_fields(last, c, "text", last["text"] + c["text"])
            elif isinstance(kind := c.get("type"), str) and isinstance(
                    c.get(kind), list) and isinstance(last.get(kind), list):
                out[-1] = _joined_fields(last, c, kind, _joined_chunks([last[kind], c[kind]]))
            else:
                out.append(c)
    return out


@dataclass
class _Choice:
    role: str = "assistant"
    content: list[Any] = field(default_factory=list)
    """Streamed content pieces: strings, or chunk lists (Mistral's reasoning models)."""
    refusal: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    call_slots: CallSlots = field(default_factory=CallSlots)
    function_call: dict[str, str] | None = None
    finish_reason: str | None = None
    seen_content: bool = False
    reasoning: dict[str, list[str]] = field(default_factory=dict)
    reasoning_details: list[Any] | None = None


_CALL_KEYS = frozenset({"index", "id", "type", "function", "custom"})
"""The fields of a streamed tool-call fragment the accumulator joins; any other is
the provider's own and is kept as the fragment carried it."""


class ChunkAccumulator:
    """Assembles ``chat.completion.chunk`` events into whole assistant messages.

    Call :meth:`add_event` for each decoded event. Tolerant by design: an event
    whose data is not JSON, or lacks ``choices``, is counted in ``bad_events`` and
    skipped. ``done`` is set by ``data: [DONE]``; ``usage`` keeps the last usage
    object seen (the usage chunk, whose ``choices`` is empty, when
    ``stream_options.include_usage`` is set).
    """

    def __init__(self) -> None:
        self.choices: dict[int, _Choice] = {}
        self.usage: dict[str, Any] | None = None
        self.id: str | None = None
        self.model: str | None = None
        self.created: int | None = None
        self.system_fingerprint: str | None = None
        self.done = False
        self.events = 0
        self.bad_events = 0
        self.error: Any = None

    def add_event(self, event: SSEEvent) -> dict[str, Any] | None:
        """Fold one event in; return its parsed JSON (``None`` for ``[DONE]``/junk)."""
        self.events += 1
        data = event.data
        if data.strip() == "[DONE]":
            self.done = True
            return None
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            try:  # valid JSON orjson refuses, e.g. an escaped lone surrogate
                obj = json.loads(data)
            except (ValueError, RecursionError):
                self.bad_events += 1
                return None
        if not isinstance(obj, dict):
            self.bad_events += 1
            return None
        self.add_chunk(obj)
        return obj

    def add_chunk(self, obj: dict[str, Any]) -> None:
        """Fold one parsed ``chat.completion.chunk`` object in."""
        if "error" in obj and "choices" not in obj:
            self.error = obj["error"]
            return
        self.id = obj.get("id") or self.id
        self.model = obj.get("model") or self.model
        self.created = obj.get("created") or self.created
        self.system_fingerprint = obj.get("system_fingerprint") or self.system_fingerprint
        if isinstance(obj.get("usage"), dict):
            self.usage = obj["usage"]
        choices = obj.get("choices")
        if not isinstance(choices, list):
            if "usage" not in obj:
                self.bad_events += 1
            return
        for ch in choices:
            if not isinstance(ch, dict):
                continue
            idx = ch.get("index", 0)
            idx = idx if isinstance(idx, int) else 0
            acc = self.choices.setdefault(idx, _Choice())
            delta = ch.get("delta") or {}
            if isinstance(delta, dict):
                self._add_delta(acc, delta)
            if ch.get("finish_reason"):
                acc.finish_reason = ch["finish_reason"]

    @staticmethod
    def _add_delta(acc: _Choice, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("role"), str):
            acc.role = delta["role"]
        content = delta.get("content")
        if isinstance(content, str) or (isinstance(content, list) and content):
            acc.content.append(content)  # an empty chunk list holds nothing
            acc.seen_content = True
        if isinstance(delta.get("refusal"), str):
            acc.refusal.append(delta["refusal"])
        for key in _REASONING:  # some upstreams want these back on later turns
            if isinstance(delta.get(key), str):
                acc.reasoning.setdefault(key, []).append(delta[key])
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            acc.reasoning_details = [*(acc.reasoning_details or []), *details]
        fc = delta.get("function_call")
        if isinstance(fc, dict):
            cur = acc.function_call or {"name": "", "arguments": ""}
            cur["name"] += name_piece(cur["name"], fc.get("name"))
            cur["arguments"] += args_text(fc.get("arguments"))
            acc.function_call = cur
        tool_calls = delta.get("tool_calls")
        for tc in tool_calls if isinstance(tool_calls, list) else []:
            if not isinstance(tc, dict):
                continue
            i = acc.call_slots.key(tc)
            slot = acc.tool_calls.setdefault(
                i, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if tc.get("id"):
                slot["id"] = tc["id"]
            if tc.get("type"):
                slot["type"] = tc["type"]
            custom = tc.get("custom")
            if isinstance(custom, dict):  # a custom (freeform) tool's call: name and input
                if slot.get("function") == {"name": "", "arguments": ""}:
                    del slot["function"]
                part = slot.setdefault("custom", {"name": "", "input": ""})
                part["name"] += name_piece(part["name"], custom.get("name"))
                if isinstance(custom.get("input"), str):
                    part["input"] += custom["input"]
            for key, value in tc.items():
                if key not in _CALL_KEYS and value is not None:
                    # a provider's own field (Gemini's ``extra_content`` with the call's
                    # thought signature): it must go back with the call
                    slot[key] = value
            fn = tc.get("function") or {}
            if isinstance(fn, dict) and "custom" not in slot:
                slot["function"]["name"] += name_piece(slot["function"]["name"], fn.get("name"))
                slot["function"]["arguments"] += args_text(fn.get("arguments"))

    def messages(self) -> list[dict[str, Any]]:
        """Return one assistant message per choice, in index order, as a client would
        rebuild it (``content`` is ``None`` when only tool calls were streamed)."""
        out = []
        for idx in sorted(self.choices):
            acc = self.choices[idx]
            msg: dict[str, Any] = {
                "role": acc.role,
                "content": (None if not acc.seen_content
                            else _joined_chunks(acc.content)
                            if any(isinstance(p, list) for p in acc.content)
                            else "".join(acc.content)),
            }
            if acc.refusal:
                msg["refusal"] = "".join(acc.refusal)
            for key, parts in acc.reasoning.items():
                msg[key] = "".join(parts)
            if acc.reasoning_details is not None:
                msg["reasoning_details"] = acc.reasoning_details
            if acc.tool_calls:
                msg["tool_calls"] = [acc.tool_calls[i] for i in sorted(acc.tool_calls)]
            if acc.function_call:
                msg["function_call"] = acc.function_call
            out.append(msg)
        return out

    def finish_reasons(self) -> list[str | None]:
        """Return each choice's ``finish_reason`` in index order."""
        return [self.choices[i].finish_reason for i in sorted(self.choices)]


class EventSplitter:
    """Splits an SSE byte stream into whole blocks, keeping each block's exact bytes.

    ``feed(chunk)`` returns ``[(raw, event)]`` for every block completed by
    ``chunk``: ``raw`` is the block's bytes including its terminating blank line,
    ``event`` the parsed :class:`SSEEvent` (``None`` for a block of comments only).
    Relaying ``raw`` unchanged keeps the stream byte-identical while the proxy
    inspects each event; bytes of an unfinished block wait for the rest.
    ``close()`` returns what is left at end of stream as one final block.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._scan = 0  # where the next line starts inside _buf
        self._prev_blank = True

    def feed(self, chunk: bytes) -> list[tuple[bytes, SSEEvent | None]]:
        """Consume ``chunk`` and return the blocks it completes."""
        self._buf += chunk
        out: list[tuple[bytes, SSEEvent | None]] = []
        buf, pos, n = self._buf, self._scan, len(self._buf)
        block_start = 0
        while pos < n:
            cr, lf = buf.find(b"\r", pos), buf.find(b"\n", pos)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                if cr + 1 == n:
                    break  # CR at the end: maybe the first half of CRLF
                end, nxt = cr, cr + 2 if buf[cr + 1:cr + 2] == b"\n" else cr + 1
            else:
                end, nxt = lf, lf + 1
            if end == pos:  # a blank line ends the block
                raw = buf[block_start:nxt]
                events = SSEDecoder().feed(raw)
                out.append((raw, events[0] if events else None))
                block_start = nxt
            pos = nxt
        self._buf = buf[block_start:]
        self._scan = pos - block_start
        return out

    def pending(self) -> bytes:
        """Bytes of the unfinished block (what an aborted stream still owes)."""
        return self._buf

    def close(self) -> list[tuple[bytes, SSEEvent | None]]:
        """Return the unterminated rest of the stream as a final block, if any."""
        if not self._buf:
            return []
        raw, self._buf, self._scan = self._buf, b"", 0
        decoder = SSEDecoder()
        events = decoder.feed(raw) + decoder.close()
        return [(raw, events[0] if events else None)]


def block_json(raw: bytes) -> Any:
    """The JSON value in one SSE block's data, as :class:`EventSplitter` kept its bytes.

    The data is read as the SSE spec reads it (every ``data:`` line of the block,
    joined by a newline; comments, ``event:`` and ``id:`` lines aside), not from the
    first ``data:`` or ``{``: a server may split one event's JSON over several
    ``data:`` lines. Raises ``ValueError`` (``orjson.JSONDecodeError``) when the
    block holds no data or its data is not JSON.
    """
    decoder = SSEDecoder()
    events = decoder.feed(raw) + decoder.close()
    if not events:
        raise ValueError("an SSE block without data")
    return orjson.loads(events[0].data)
