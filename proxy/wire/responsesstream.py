"""One streamed Responses API round, sans-io: upstream bytes in, client bytes out.

A Responses stream is SSE blocks of ``event: <type>`` and ``data: <json>``; every
event has a ``sequence_number``, item events an ``output_index``, and the stream
ends with one terminal event (``response.completed``/``incomplete``/``failed``;
there is no ``[DONE]``). When the proxy answers memory tools, one client stream
is made of several upstream rounds. :class:`ResponsesStreamRound` decides, block
by block, what the client gets:

- ``response.created``/``in_progress``/``queued`` are held in the shared
  :class:`StreamState` and sent once, just before the first event the client is
  shown: those of the round that shows it (a round that only called memory tools
  is never the client's response: the upstream's copy of it ends in an unanswered
  call); later rounds' are dropped: one ``response.created`` in all;
- a ``reasoning`` item is held while no other item of its round was shown: a
  round of reasoning and memory calls is hidden whole (as a plain answer hides
  it), so its response id is never the client's; the first item shown, or the
  end of the answer, releases it in its place;
- a ``message`` item whose text is empty or whitespace so far is held the same
  way (a hidden round's blank message before its memory call would be an item of
  the client's response, and its id the client's); its first visible text, or
  the next item shown, releases it;
- for a request for a structured answer (``text.format`` ``json_schema`` or
  ``json_object``: ``hold_text``) a ``message`` item is held the same way: a hidden
  round's "Let me check." before its memory call would otherwise be an item of the
  client's response, which the SDKs' ``parse``/``stream`` helpers fail to read as
  the answer's JSON; a held item that is never shown takes no ``output_index`` or
  ``sequence_number``, so the client's stay contiguous;
- a ``function_call`` item whose name is a memory tool (its name comes whole in
  ``response.output_item.added``) is hidden with every event of its
  ``output_index`` (``function_call_arguments.delta``/``done``, ``output_item.done``);
  one added without a name (bridges from Chat streams name it when done) has its
  events held until its ``output_item.done`` or the terminal event names it;
- every other item gets the next client ``output_index``, and every event sent
  the next client ``sequence_number``, counted from the upstream's first (none
  when the upstream numbers none; an event left unchanged is relayed as its exact
  bytes);
- a ``keepalive`` event is relayed (renumbered) once its round was shown, and
  dropped before: it carries no state, and a hidden round's would show the client
  that round's response (its id, ending in an unanswered memory call);
- the terminal event is held in :attr:`ResponsesStreamRound.tail`: only the loop
  knows whether this round ends the answer (:func:`terminal_bytes` restates it);
- the response objects of the head and terminal events echo the request's
  ``tools``: the memory tools are left out of them (:func:`without_our_tools`).

Nothing here touches a socket; tests feed byte scripts (tests/test_responses_stream.py).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from proxy.sse import EventSplitter, SSEEvent
from proxy.wire.base import StreamRound
from proxy.wire.responses import reply_turn

HEAD_EVENTS = ("response.created", "response.in_progress", "response.queued")
TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
KEEPALIVE_EVENTS = ("keepalive", "response.keep_alive")
"""Transport keep-alives of long streams (undocumented; OpenAI's ``keepalive``, a
``response.keep_alive`` some relays wrote): no response state, so never what makes a
round shown."""


def without_our_tools(response: Any, names: dict[str, str]) -> Any:
    """A response object whose ``tools`` (the request's, echoed) leave out the memory
    tools ``names``; the same object when it lists none of them."""
    if not isinstance(response, dict) or not isinstance(response.get("tools"), list):
        return response
    kept = [t for t in response["tools"] if not (isinstance(t, dict)
                                                 and t.get("type") == "function"
                                                 and t.get("name") in names)]
    return response if len(kept) == len(response["tools"]) else dict(response, tools=kept)


def _blank_message(item: Any) -> bool:
    """True for a ``message`` item with no text but whitespace (yet)."""
    return (isinstance(item, dict) and item.get("type") == "message"
            and not _has_text({"item": item}))


def _has_text(obj: dict[str, Any]) -> bool:
    """True when an item event carries text that is not whitespace: a ``delta`` or
    ``text`` (``output_text``/``refusal`` events), or a part's or item's content."""
    parts: list[Any] = [obj, obj.get("part")]
    item = obj.get("item")
    if isinstance(item, dict) and isinstance(item.get("content"), list):
        parts += item["content"]
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key in ("delta", "text", "refusal"):
            value = part.get(key)
            if isinstance(value, str) and value.strip():
                return True
    return False


def event_bytes(obj: dict[str, Any]) -> bytes:
    """One SSE block for a Responses event ``obj`` (``event:`` line and ``data:``)."""
    return (b"event: " + str(obj.get("type", "")).encode() + b"\ndata: "
            + orjson.dumps(obj) + b"\n\n")


class StreamState:
    """What the client was shown across the rounds of one streamed answer."""

    def __init__(self) -> None:
        self.seq = 0
        """The next client ``sequence_number``."""
        self.numbered: bool | None = None
        """Whether the upstream numbers its events (decided by the first event
        stamped, whose number the client's count then starts from): a stream whose
        upstream numbers none gets none added, one that starts at 1 keeps its own."""
        self.next_index = 0
        """The next client ``output_index``."""
        self.head: list[tuple[dict[str, Any] | None, bytes]] = []
        """The held ``response.created``/``in_progress`` events, until sent (those of
        the latest round while every round so far was hidden), and the comments
        between them (``None``, their bytes), so they keep their place."""
        self.head_sent = False
        self.client_id: Any = None
        """The response id the client sees (that of the first round it was shown
        anything from)."""
        self.output: list[Any] = []
        """The items the client was shown, in its order (from ``output_item.done``)."""
        self.previous: str | None = None
        """The client's ``previous_response_id`` when its request went as a stateless
        replay: shown in the response objects where the upstream says null."""

    def stamp(self, obj: dict[str, Any], raw: bytes | None) -> bytes:
        """``obj`` with the next sequence number (none when the upstream numbers
        none: :attr:`numbered`): ``raw`` when that changes nothing."""
        given = obj.get("sequence_number")
        if self.numbered is None:
            self.numbered = isinstance(given, int) and not isinstance(given, bool)
            if isinstance(given, int) and self.numbered:
                self.seq = given
        response = obj.get("response")
        if (self.previous is not None and isinstance(response, dict)
                and "previous_response_id" in response
                and response["previous_response_id"] is None):
            obj, raw = dict(obj, response=dict(response, previous_response_id=self.previous)), None
        if not self.numbered:
            if raw is not None and "sequence_number" not in obj:
                return raw
            return event_bytes({k: v for k, v in obj.items() if k != "sequence_number"})
        seq = self.seq
        self.seq += 1
        if raw is not None and given == seq:
            return raw
        return event_bytes(dict(obj, sequence_number=seq))


class ResponsesStreamRound(StreamRound):
    """Decisions over one round's SSE blocks (see module docstring)."""

    def __init__(self, names: dict[str, str], state: StreamState, *, first: bool,
                 hold_text: bool = False) -> None:
        self.names, self.state, self.first = names, state, first
        self.hold_text = hold_text
        """Hold the round's ``message`` items as its reasoning (a structured answer)."""
        self.splitter = EventSplitter()
        self.tail: list[tuple[str, bytes]] = []
        self.holding = False
        self.shown = False
        self.hidden: set[int] = set()
        self.index_map: dict[int, int] = {}
        self.items: dict[int, Any] = {}
        """Upstream ``output_index`` → the item of its ``output_item.done``."""
        self.response: dict[str, Any] | None = None
        """The terminal event's response object."""
        self.terminal: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        """The round's ``error`` event: it ends the stream (no terminal follows)."""
        self.rid: Any = None
        self.created: Any = None
        self.held: list[tuple[dict[str, Any] | None, bytes]] = []
        """The events of this round's reasoning items (and, with ``hold_text``, its
        message items) while no item of the round was shown (and the comments among
        them, ``None``): a round of reasoning and memory calls is hidden whole."""
        self.held_idx: set[int] = set()
        self.blank_idx: set[int] = set()
        """Held ``message`` items whose text is empty or whitespace so far."""
        self.unnamed: set[int] = set()
        """``function_call`` items opened without a name (bridges of Chat streams name
        them in ``output_item.done``), until the name tells whose."""
        self.waiting: list[tuple[dict[str, Any], bytes]] = []
        """Item events from the first unnamed call's on, in upstream order, held while
        a call before them is unnamed: the client gets the items in the order and at
        the indexes the upstream sent them."""

    # -- bytes in, bytes out ----------------------------------------------------------
    def feed(self, data: bytes) -> bytes:
        return self._process(self.splitter.feed(data))

    def close(self) -> bytes:
        return self._process(self.splitter.close())

    def pending(self) -> bytes:
        """The held reasoning events (an answer cut off shows them), the events of
        calls still unnamed (the client's, as no name made them ours), then the bytes
        of an unfinished event."""
        return self.release() + self._settle_unnamed(None) + self.splitter.pending()

    def holds(self) -> bool:
        return bool(self.held)

    def release(self) -> bytes:
        """Show the held reasoning events (once); their bytes."""
        held, self.held = self.held, []
        self.held_idx.clear()
        self.blank_idx.clear()
        if not held:
            return b""
        out = self._show()
        for obj, raw in held:
            out += raw if obj is None else self._item_event(obj, raw)
        return out

    def _show(self) -> bytes:
        """Mark the round shown; the held head goes first, once per answer."""
        self.shown = True
        state = self.state
        if state.head_sent:
            return b""
        state.head_sent = True
        return b"".join(raw if obj is None else state.stamp(obj, raw)
                        for obj, raw in state.head)

    def _process(self, blocks: list[tuple[bytes, SSEEvent | None]]) -> bytes:
        out = b""
        for raw, event in blocks:
            if event is None:  # comments
                if self.holding:
                    self.tail.append(("other", raw))
                elif self.held:  # between held events: it keeps its place
                    self.held.append((None, raw))
                elif self.state.head and not self.state.head_sent:
                    self.state.head.append((None, raw))  # after the head it follows
                else:
                    out += raw
                continue
            try:
                obj = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                obj = None
            kind = obj.get("type") if isinstance(obj, dict) else None
            if not isinstance(obj, dict) or not isinstance(kind, str):
                if self.holding:
                    self.tail.append(("other", raw))
                else:  # junk: the client's to see, as sent
                    out += self.release() + self._show() + raw
                continue
            if kind in HEAD_EVENTS or kind in TERMINAL_EVENTS:
                scrubbed = without_our_tools(obj.get("response"), self.names)
                if scrubbed is not obj.get("response"):  # the echoed request's tools
                    obj = dict(obj, response=scrubbed)
                    raw = event_bytes(obj)
            if kind in HEAD_EVENTS:
                response = obj.get("response")
                if isinstance(response, dict) and self.rid is None:
                    self.rid, self.created = response.get("id"), response.get("created_at")
                if not self.state.head_sent:
                    if not self.first and kind == "response.created":
                        # Every earlier round was hidden (a memory call, nothing
                        # shown): the client is shown this round's response, whose
                        # upstream conversation holds those rounds and their
                        # results, not one that ends in an unanswered memory call
                        # (a previous_response_id the upstream would refuse).
                        self.state.head.clear()
                        self.state.client_id = None
                    self.state.head.append((obj, raw))
                    if self.state.client_id is None and isinstance(response, dict):
                        self.state.client_id = response.get("id")
                continue  # a later round's once the head is shown: the client has it
            if kind in TERMINAL_EVENTS:
                response = obj.get("response")
                self.response = response if isinstance(response, dict) else None
                out += self._settle_unnamed(self.response)
                self.terminal = obj
                self.tail.append(("terminal", raw))
                self.holding = True
                continue
            if self.holding:
                self.tail.append(("other", raw))
                continue
            if kind in KEEPALIVE_EVENTS:
                if self.shown and not (self.held or self.unnamed or self.waiting):
                    out += self.state.stamp(obj, raw)
                # else dropped: the round may yet be hidden, and while it runs the
                # proxy's own heartbeats keep the client's stream alive
                continue
            idx = obj.get("output_index")
            if isinstance(idx, int) and not isinstance(idx, bool):
                item = obj.get("item")
                if kind == "response.output_item.added" and idx not in self.index_map \
                        and idx not in self.hidden and idx not in self.held_idx:
                    if (isinstance(item, dict) and item.get("type") == "function_call"
                            and item.get("name") in self.names):
                        self.hidden.add(idx)
                    elif (isinstance(item, dict) and item.get("type") == "function_call"
                            and not item.get("name")):
                        self.unnamed.add(idx)
                    elif not self.shown and self._held_kind(item):
                        self.held_idx.add(idx)
                    elif not self.shown and _blank_message(item):
                        self.held_idx.add(idx)
                        self.blank_idx.add(idx)
                if kind == "response.output_item.done":
                    self.items[idx] = item
                if self.unnamed or self.waiting:
                    self.waiting.append((obj, raw))
                    if idx in self.unnamed and kind == "response.output_item.done":
                        self._name(idx, item)
                    out += self._flush_waiting()
                    continue
                out += self._route(idx, obj, raw)
                continue
            if kind == "error":
                self.error = obj
            out += self.release() + self._show() + self.state.stamp(obj, raw)  # others
        return out

    def _route(self, idx: int, obj: dict[str, Any], raw: bytes) -> bytes:
        """An item event's bytes for the client now: none for a hidden item's or a
        held one's (kept in :attr:`held`), else renumbered and stamped."""
        out = b""
        if idx in self.hidden:
            return out
        if idx in self.blank_idx and _has_text(obj):
            self.blank_idx.discard(idx)  # a message after all: shown from here on
            out += self.release()
        if idx in self.held_idx:
            self.held.append((obj, raw))
            return out
        return out + self.release() + self._item_event(obj, raw)

    def _name(self, idx: int, item: Any) -> None:
        """Decide the unnamed call at ``idx`` by ``item``'s name: a memory call is
        hidden (its held events dropped), any other is the client's."""
        self.unnamed.discard(idx)
        if isinstance(item, dict) and item.get("name") in self.names:
            self.hidden.add(idx)

    def _flush_waiting(self) -> bytes:
        """The waiting events up to the first of a call still unnamed, routed in
        upstream order (:meth:`_route`)."""
        out = b""
        while self.waiting and self.waiting[0][0]["output_index"] not in self.unnamed:
            obj, raw = self.waiting.pop(0)
            out += self._route(obj["output_index"], obj, raw)
        return out

    def _settle_unnamed(self, response: dict[str, Any] | None) -> bytes:
        """Decide the calls still unnamed by the terminal ``response``'s items at
        their indexes (none: the client's), and route what waited on them."""
        up = response.get("output") if response is not None else None
        for idx in sorted(self.unnamed):
            self._name(idx, up[idx] if isinstance(up, list) and idx < len(up) else None)
        return self._flush_waiting()

    def _held_kind(self, item: Any) -> bool:
        """True for an item held while nothing of the round was shown: reasoning,
        and with :attr:`hold_text` a message."""
        kind = item.get("type") if isinstance(item, dict) else None
        return kind == "reasoning" or (self.hold_text and kind == "message")

    def _item_event(self, obj: dict[str, Any], raw: bytes) -> bytes:
        """An event of a shown item (``output_index`` set): renumbered, stamped."""
        idx = obj["output_index"]
        if idx not in self.index_map:  # its item's first event
            self.index_map[idx] = self.state.next_index
            self.state.next_index += 1
        if obj.get("type") == "response.output_item.done":
            self.state.output.append(obj.get("item"))
        new = self.index_map[idx]
        pre = self._show()
        if new != idx:
            return pre + self.state.stamp(dict(obj, output_index=new), None)
        return pre + self.state.stamp(obj, raw)

    # -- what the round produced ------------------------------------------------------
    def output(self) -> list[Any]:
        """The round's output items, upstream order: the terminal's when it came and
        holds as many as the stream's ``output_item.done`` events brought, else those
        (ChatGPT's Codex backend ends with ``"output": []`` after streaming its items)."""
        up = self.response.get("output") if self.response is not None else None
        if isinstance(up, list) and len(up) >= len(self.items):
            return list(up)
        return [self.items[i] for i in sorted(self.items)]

    def messages(self) -> list[dict[str, Any]]:
        items = self.output()
        return [reply_turn(items)] if items else []

    def finish_reasons(self) -> list[Any]:
        return [self.response.get("status") if self.response is not None else None]

    def usage(self) -> dict[str, Any] | None:
        usage = self.response.get("usage") if self.response is not None else None
        return usage if isinstance(usage, dict) else None

    def answered(self) -> bool:
        return self.terminal is not None

    def identity(self) -> tuple[Any, Any]:
        return self.rid, self.created


def terminal_bytes(sr: ResponsesStreamRound, state: StreamState, *, rounds: int,
                   usage: Any) -> tuple[bytes, dict[str, Any] | None]:
    """The client's last bytes: the held head if it was never sent, then the last
    round's terminal event (its exact bytes after one unaltered round; after
    several, or with hidden items, restated: the id the client saw, the items it
    was shown, the summed usage), then anything held after it. Returns the bytes
    and the response object the client ends with (``None`` without a terminal)."""
    out = sr.release()  # the answer ends with this round: its reasoning is shown
    out = (sr._show() if not state.head_sent else b"") + out
    final: dict[str, Any] | None = None
    _adopt_terminal_items(sr, state)
    for kind, raw in sr.tail:
        if kind != "terminal" or sr.terminal is None:
            out += raw
            continue
        altered = rounds > 1 or bool(sr.hidden) or any(
            sr.index_map.get(i, i) != i for i in sr.index_map)
        response = sr.response
        if altered and response is not None:
            response = dict(response, output=list(state.output))
            if state.client_id is not None:
                response["id"] = state.client_id
            if usage is not None:
                response["usage"] = usage
            out += state.stamp(dict(sr.terminal, response=response), None)
        else:
            out += state.stamp(sr.terminal, raw)
        final = response
    return out, final


def failed_bytes(state: StreamState, code: Any, message: str, param: Any = None, *,
                 usage: Any = None, model: Any = None) -> bytes:
    """How a stream the proxy composed of rounds ends when a later round failed, as
    the API ends a response that fails mid-stream: the held head if the client never
    got it (so that ``response.created`` comes first), the ``error`` event (``code``,
    ``message``, ``param``), then the terminal ``response.failed`` whose response is
    the one the client saw in ``response.created`` (its id; a bare object when no
    round sent one) with ``status: "failed"``, ``error: {code, message}`` (``code``
    ``server_error`` for a failure of the proxy's own upstream call, the upstream's
    when it refused), the items the client was shown and ``usage`` summed over the
    rounds (left as it was when ``None``). Every event gets the next sequence number."""
    out = b""
    if not state.head_sent:
        state.head_sent = True
        out += b"".join(raw if obj is None else state.stamp(obj, raw)
                        for obj, raw in state.head)
    out += state.stamp({"type": "error", "code": code, "message": message,
                        "param": param}, None)
    base = next((obj["response"] for obj, _ in reversed(state.head)
                 if obj is not None and isinstance(obj.get("response"), dict)), None)
    response: dict[str, Any] = dict(base) if base is not None else {
        "object": "response", "created_at": int(time.time()), "model": model}
    if state.client_id is not None or "id" not in response:
        response["id"] = state.client_id if state.client_id is not None \
            else "resp_" + uuid.uuid4().hex
    response.update(status="failed", output=list(state.output), incomplete_details=None,
                    error={"code": "server_error" if code == "upstream_error" else code,
                           "message": message})
    if usage is not None:
        response["usage"] = usage
    return out + state.stamp({"type": "response.failed", "response": response}, None)


def _adopt_terminal_items(sr: ResponsesStreamRound, state: StreamState) -> None:
    """Items the terminal event's ``output`` holds but no ``output_item.done`` brought
    (some compatible servers stream only deltas and the terminal) join the items
    the client is shown, so that the stored turn and a restated terminal keep them.
    The proxy's own memory calls stay out. An item the terminal states too (same
    ``id`` and type) is shown as the terminal states it, the response's final word
    (servers and translators end a message with ``output_item.done`` whose
    ``content`` is ``[]``, or close it before its last deltas), merged with the
    streamed one (:func:`merged_item`) so that nothing the client already received
    is taken back where the terminal is the poorer one."""
    up = sr.response.get("output") if sr.terminal is not None and sr.response else None
    if not isinstance(up, list):
        return
    for i, item in enumerate(up):
        done = sr.items.get(i)
        if (isinstance(done, dict) and isinstance(item, dict) and item != done
                and done.get("id") is not None and done.get("id") == item.get("id")
                and done.get("type") == item.get("type")):
            item = merged_item(done, item)
            state.output = [item if o is done else o for o in state.output]
            sr.items[i] = item
        if i in sr.items or i in sr.hidden:
            continue
        if isinstance(item, dict) and item.get("type") == "function_call" \
                and item.get("name") in sr.names:
            continue
        sr.items[i] = item
        state.output.append(item)


def merged_item(shown: Any, final: Any) -> Any:
    """An item as the terminal states it (``final``) with what the client was shown of
    it (``shown``, from ``output_item.done``) kept where the terminal is poorer: a
    field the terminal leaves out or empty (``encrypted_content``, ``logprobs``)
    keeps the shown value; lists merge element by element, the longer one's tail
    kept (content parts, annotations); a string keeps the shown text when that
    extends the terminal's (a terminal cut short), else the terminal's. Values of
    other shapes are the terminal's. Pure; neither argument is changed."""
    if isinstance(shown, dict) and isinstance(final, dict):
        out = dict(final)
        for key, value in shown.items():
            mine = out.get(key)
            out[key] = value if mine is None or mine in ("", [], {}) \
                else merged_item(value, mine)
        return out
    if isinstance(shown, list) and isinstance(final, list):
        both = [merged_item(a, b) for a, b in zip(shown, final, strict=False)]
        return both + (shown[len(final):] if len(shown) > len(final) else final[len(shown):])
    if isinstance(shown, str) and isinstance(final, str) and len(shown) > len(final) \
            and shown.startswith(final):
        return shown
    return final


class ShowPrevious:
    """A :class:`proxy.relay.Rewriter` for a stateless replay's answer: the client
    sees ``value`` (its own ``previous_response_id``) where the upstream, which got
    none, says ``previous_response_id: null``. Streamed: every event whose
    ``response`` object says null is restated, any other block relayed as its exact
    bytes. Not streamed: the body is held to its end and restated there (an
    unparsable body goes as it came)."""

    def __init__(self, value: str, *, streamed: bool) -> None:
        self.value = value
        self.streamed = streamed
        self.splitter = EventSplitter()
        self.held: list[bytes] = []

    def feed(self, chunk: bytes) -> bytes:
        if not self.streamed:
            self.held.append(chunk)
            return b""
        return self._process(self.splitter.feed(chunk))

    def close(self) -> bytes:
        if not self.streamed:
            body = b"".join(self.held)
            try:
                obj = orjson.loads(body)
            except orjson.JSONDecodeError:
                return body
            shown = self._shown(obj)
            return body if shown is None else orjson.dumps(shown)
        return self._process(self.splitter.close())

    def _shown(self, obj: Any) -> dict[str, Any] | None:
        """``obj`` (a response object) with the client's id, or ``None`` unchanged."""
        if (isinstance(obj, dict) and "previous_response_id" in obj
                and obj["previous_response_id"] is None):
            return dict(obj, previous_response_id=self.value)
        return None

    def _process(self, blocks: list[tuple[bytes, SSEEvent | None]]) -> bytes:
        out = []
        for raw, event in blocks:
            if event is None or b'"previous_response_id"' not in raw:
                out.append(raw)
                continue
            try:
                obj = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                out.append(raw)
                continue
            shown = self._shown(obj.get("response")) if isinstance(obj, dict) else None
            out.append(raw if shown is None else event_bytes(dict(obj, response=shown)))
        return b"".join(out)
