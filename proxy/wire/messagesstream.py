"""One streamed Anthropic Messages round, sans-io: upstream bytes in, client bytes out.

An Anthropic stream is ``message_start``; per content block ``content_block_start``,
``content_block_delta`` (``text_delta``, ``input_json_delta``, ``thinking_delta``,
``signature_delta``, ``citations_delta``, ``compaction_delta``; the fields of a delta
of another type go on its block), ``content_block_stop``; then
``message_delta`` (``stop_reason``, cumulative ``usage``) and ``message_stop``;
``ping`` anywhere; ``error`` in place of the rest. Each event is an ``event:``
line and a JSON ``data:`` line.

:class:`MessagesStreamRound` relays each event as its exact bytes unless it must
change: a ``tool_use`` block calling a memory tool (one of ``names``, known from
its ``content_block_start``) is swallowed whole (start, deltas, stop), and so is a
nameless ``tool_use`` block reopening it (same ``id``), whose input continues the
call's; every other
block is re-indexed from ``client_offset`` so the client's block indices run
0, 1, 2… across all rounds of one answer. ``message_delta`` and ``message_stop``
are held in :attr:`tail` for the loop, which alone knows whether the round ends
the answer. A later round (``later``) drops its own ``message_start``: the client
sees one message.

A ``thinking`` or ``redacted_thinking`` block that comes before anything of the
round was shown is held (start, ``thinking_delta``, ``signature_delta``, stop):
a round of thinking and memory calls is hidden whole, as a whole answer hides it
(the model's thinking before a memory call is no part of the client's turn; the
upstream gets it back with the call, signature intact, as extended thinking
requires). The first client block (or an ``error``), or the end of an answer
that ends with this round (:meth:`MessagesStreamRound.release`), shows the held
blocks in their place, taking the next client indexes; meanwhile the loop keeps
the client alive with ``ping`` events (:meth:`holds`). Thinking blocks that come
after something was shown, and every signature, pass unchanged.

A ``text`` block that is empty or only whitespace so far (relays and bridges stream
one before a ``tool_use``) is held the same way while nothing was shown: a hidden
round's blank block never reaches the client, which would send it back on its next
turn (Anthropic refuses it: "text content blocks must be non-empty"). Its first
visible text, or the next client block, shows it in its place.

A request for a structured answer (``output_config.format``, or the structured
outputs beta's ``output_format``, of type ``json_schema``: ``hold_text``) has its
``text`` blocks held the same way: a hidden round's "Let me check." before its
memory call would otherwise be a text block of the client's message, which the
SDK's ``stream(output_format=...)`` parses as the answer's JSON when it stops. A
held block never shown takes no client index, so the client's run on from 0.

:attr:`shown` is set once a client block (or an ``error``) was relayed: before
that the round may still turn out to be a hidden memory round.
"""

from __future__ import annotations

from typing import Any

import orjson

from proxy.sse import EventSplitter, SSEEvent
from proxy.wire.base import StreamRound
from proxy.wire.messages import UnparsedInput, sse_event


def _merge_usage(into: dict[str, Any], usage: Any) -> None:
    """Cumulative usage of a ``message_delta`` over ``message_start``'s (non-null wins)."""
    if isinstance(usage, dict):
        for key, value in usage.items():
            if value is not None:
                into[key] = value


def _blank(text: Any) -> bool:
    """True for a text block's text that is empty or only whitespace."""
    return not str(text or "").strip()


class MessagesStreamRound(StreamRound):
    """Decisions over one round's events (see module docstring)."""

    def __init__(self, names: dict[str, str], client_offset: int = 0, *,
                 later: bool = False, hold_text: bool = False) -> None:
        self.names = names
        self.hold_text = hold_text
        """Hold the round's text blocks as its thinking (a structured answer)."""
        self.later = later
        self.next_index = client_offset
        self.tail: list[tuple[str, bytes]] = []
        self.holding = False
        self.shown = False
        self.splitter = EventSplitter()
        self.message: dict[str, Any] | None = None
        """``message_start``'s message (id, model, usage…)."""
        self.blocks: dict[int, dict[str, Any]] = {}
        """Upstream index → ``{"block", "ours", "client", "json"}``, in arrival order."""
        self.stop_reason: Any = None
        self.stop_sequence: Any = None
        self.container: Any = None
        """The code-execution container the round ran in (``message_delta``'s
        ``delta.container``, or ``message_start``'s), ``{"id", "expires_at"}``."""
        self._usage: dict[str, Any] = {}
        self.stopped = False
        self.error: Any = None
        self.held: list[tuple[str, dict[str, Any], bytes, dict[str, Any]]] = []
        """The events of thinking blocks (and, with ``hold_text``, text blocks) held
        while nothing of the round was shown: ``(kind, slot, bytes, event)``."""

    # -- bytes in, bytes out ----------------------------------------------------------
    def feed(self, data: bytes) -> bytes:
        return self._process(self.splitter.feed(data))

    def close(self) -> bytes:
        return self._process(self.splitter.close())

    def pending(self) -> bytes:
        """The held thinking blocks (an answer cut off shows them), then the bytes of
        an unfinished event."""
        return self.release() + self.splitter.pending()

    def holds(self) -> bool:
        return bool(self.held)

    def release(self) -> bytes:
        """Show the held blocks (once), each taking the next client index; their
        bytes."""
        held, self.held = self.held, []
        out = b""
        for kind, slot, raw, obj in held:
            if slot["client"] is None:
                slot["client"] = self.next_index
                self.next_index += 1
            out += self._relay(kind, slot, raw, obj)
        if held:
            self.shown = True
        return out

    def _relay(self, kind: str, slot: dict[str, Any], raw: bytes, obj: dict[str, Any]
               ) -> bytes:
        """A client block's event, at its client index (its exact bytes when the
        index is the upstream's)."""
        if slot["client"] == obj.get("index"):
            return raw
        return sse_event(kind, dict(obj, index=slot["client"]))

    def _process(self, items: list[tuple[bytes, SSEEvent | None]]) -> bytes:
        out = b""
        for raw, event in items:
            if event is None:  # comments
                if self.holding:
                    self.tail.append(("other", raw))
                else:
                    out += raw
                continue
            try:
                obj = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                obj = None
            kind = obj.get("type") if isinstance(obj, dict) else None
            kind = kind or event.event
            out += self._event(kind, raw, obj if isinstance(obj, dict) else {})
        return out

    def _event(self, kind: str, raw: bytes, obj: dict[str, Any]) -> bytes:
        if kind == "message_start":
            msg = obj.get("message")
            self.message = msg if isinstance(msg, dict) else {}
            if self.message.get("container") is not None:
                self.container = self.message["container"]
            _merge_usage(self._usage, self.message.get("usage"))
            return b"" if self.later else raw
        if kind == "message_delta":
            raw_delta = obj.get("delta")
            delta: dict[str, Any] = raw_delta if isinstance(raw_delta, dict) else {}
            self.stop_reason = delta.get("stop_reason", self.stop_reason)
            self.stop_sequence = delta.get("stop_sequence", self.stop_sequence)
            if delta.get("container") is not None:
                self.container = delta["container"]
            _merge_usage(self._usage, obj.get("usage"))
            self.tail.append(("finish", raw))
            self.holding = True
            return b""
        if kind == "message_stop":
            self.stopped = True
            self.tail.append(("done", raw))
            self.holding = True
            return b""
        if kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            return self._block_event(kind, raw, obj)
        if kind == "error":
            self.error = obj.get("error", obj)
            out = self.release()
            self.shown = True
            return out + raw
        if self.holding:  # ping and unknown events after the end wait with it
            self.tail.append(("other", raw))
            return b""
        return raw  # ping, unknown events: the client's to see (or ignore)

    def _block_event(self, kind: str, raw: bytes, obj: dict[str, Any]) -> bytes:
        index = obj.get("index")
        out = b""
        if kind == "content_block_start":
            block = obj.get("content_block")
            block = dict(block) if isinstance(block, dict) else {}
            again = self._reopened(block)
            if again is not None:  # one memory call reopened: its deltas join it
                self.blocks[index if isinstance(index, int) else len(self.blocks)] = again
                return b""
            ours = block.get("type") == "tool_use" and block.get("name") in self.names
            blank = (not ours and not self.shown and not self.hold_text
                     and block.get("type") == "text" and _blank(block.get("text")))
            held = blank or (not ours and not self.shown and block.get("type") in (
                ("thinking", "redacted_thinking", "text") if self.hold_text
                else ("thinking", "redacted_thinking")))
            slot: dict[str, Any] | None = {"block": block, "ours": ours, "client": None,
                                           "json": "", "blank": blank}
            assert slot is not None
            if not ours and not held:
                out = self.release()  # held thinking first, in its place
                slot["client"] = self.next_index
                self.next_index += 1
            self.blocks[index if isinstance(index, int) else len(self.blocks)] = slot
        else:
            slot = self.blocks.get(index) if isinstance(index, int) else None
            if slot is None:  # a delta for no known block: not ours to judge
                out = self.release()
                self.shown = True
                return out + raw
            if kind == "content_block_delta":
                self._apply(slot, obj.get("delta"))
                if slot["blank"] and not _blank(slot["block"].get("text")):
                    slot["blank"] = False  # a text after all: shown from here on
                    out = self.release()
            else:
                self._finish(slot)
        if slot["ours"]:
            return b""
        if slot["client"] is None:  # a held thinking block
            self.held.append((kind, slot, raw, obj))
            return b""
        self.shown = True
        return out + self._relay(kind, slot, raw, obj)

    def _reopened(self, block: dict[str, Any]) -> dict[str, Any] | None:
        """The slot of the memory call that a ``tool_use`` block with the same ``id``
        and no name of its own (``""`` or the call's) continues, or ``None``.
        Translators from OpenAI streams open one such block per argument fragment
        of one call; each is a piece of the call, not a call of the client's. A
        client's call so written reaches the client as written."""
        if block.get("type") != "tool_use" or block.get("id") is None:
            return None
        for slot in self.blocks.values():
            first = slot["block"]
            if (slot["ours"] and first.get("type") == "tool_use"
                    and first.get("id") == block["id"]
                    and block.get("name") in ("", None, first.get("name"))):
                return slot
        return None

    @staticmethod
    def _apply(slot: dict[str, Any], delta: Any) -> None:
        if not isinstance(delta, dict):
            return
        block, kind = slot["block"], delta.get("type")
        if kind == "text_delta":
            # Only a text block holds text: a bridge's stray newline stamped with an
            # open ``tool_use`` block's index would make the block sent back invalid.
            if block.get("type") in ("text", None):
                block["text"] = (block.get("text") or "") + str(delta.get("text") or "")
        elif kind == "input_json_delta":
            slot["json"] += str(delta.get("partial_json") or "")
        elif kind == "thinking_delta":
            block["thinking"] = (block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")
        elif kind == "citations_delta":
            block["citations"] = [*(block.get("citations") or []), delta.get("citation")]
        else:
            # A delta type this reader does not know (``compaction_delta``: the
            # summary and ``encrypted_content`` of a ``compaction`` block opened with
            # null): its fields go on the block, text appended to text, so the turn
            # sent back carries what the client was shown.
            for key, value in delta.items():
                if key == "type":
                    continue
                before = block.get(key)
                block[key] = before + value if isinstance(before, str) and isinstance(
                    value, str) else value

    @staticmethod
    def _finish(slot: dict[str, Any]) -> None:
        if slot["json"]:
            try:
                slot["block"]["input"] = orjson.loads(slot["json"])
            except orjson.JSONDecodeError:
                slot["block"]["input"] = UnparsedInput(slot["json"])

    # -- what the round said ------------------------------------------------------------
    def content(self, *, client_only: bool = False) -> list[dict[str, Any]]:
        """The round's content blocks, as the upstream sent them (``client_only``: the
        blocks the client was shown, in its order: without the memory tool calls
        and the thinking still held)."""
        slots = list({id(s): s for s in self.blocks.values()}.values())  # reopened: once
        for slot in slots:
            if slot["json"]:
                self._finish(slot)
        if client_only:
            shown = [s for s in slots if s["client"] is not None]
            return [s["block"] for s in sorted(shown, key=lambda s: s["client"])]
        return [s["block"] for s in slots]

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": self.content()}]

    def answer_fields(self) -> dict[str, Any]:
        return {"container": self.container} if self.container is not None else {}

    def finish_reasons(self) -> list[Any]:
        return [self.stop_reason]

    def usage(self) -> dict[str, Any] | None:
        return dict(self._usage) if self._usage else None

    def answered(self) -> bool:
        return self.stopped or self.stop_reason is not None

    def identity(self) -> tuple[Any, Any]:
        return (self.message or {}).get("id"), None
