"""One streamed Chat Completions round, sans-io: upstream bytes in, client bytes out.

:class:`ChatStreamRound` reads one upstream SSE stream (any split of its bytes) and
decides, block by block, what the client gets: a block that needs no change is
relayed as its exact bytes; a memory tool call (one of ``names``) is swallowed
(a call's fragments are held until its name is known: some servers name it after
its first arguments); a client tool call is re-indexed from ``client_offset``; the finish chunk, the
usage chunk and ``[DONE]`` are held in :attr:`tail` for the loop, which alone
knows whether the round ends the answer. Nothing here touches a socket, so every
case is tested from byte scripts (tests/test_chatstream.py).

Whether the round is *shown* (:attr:`shown`): a round whose output so far is only
a role chunk and comments may still turn out to be a hidden memory round; the
loop holds such bytes (and the client's status line) until :attr:`shown` is set.
Reasoning chunks (a delta of ``reasoning_content`` / ``reasoning`` /
``reasoning_details`` only, as vLLM, DeepSeek and OpenRouter stream them) that
come before anything was shown are held too (:attr:`held`): a round of reasoning
and memory calls is hidden whole, as a whole answer hides it. The first chunk
the client is shown, or the end of an answer that ends with this round
(:meth:`ChatStreamRound.release`), sends them first, in their place; meanwhile
the loop keeps the client alive with heartbeats (:meth:`holds`). Content that is
only whitespace, before anything was shown, is held the same way: a hidden round's
``"\n\n"`` before its memory call would otherwise lead the client's answer.

A request for a structured answer (``response_format`` ``json_schema`` or
``json_object``: ``hold_text``) has its content held the same way: a hidden round's
text (a model's "Let me check." before its memory call) would otherwise be glued to
the answer's JSON, which the SDKs' ``parse``/``stream`` helpers then fail to read;
a whole answer never shows it either.

Later rounds of one answer (``later=True``) keep the answer's chunk ``id`` and
``created`` (``stream_id``, ``created``) and drop their own role-only chunk: the
client sees one completion. A round after hidden ones (``usage_before``: their usage,
summed) adds it to every ``usage`` object its chunks carry (vLLM's
``stream_options.continuous_usage_stats`` puts the running usage on each chunk), so
the client's running totals count the whole answer, as the held finish and usage
chunks do.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from proxy.sse import CallSlots, ChunkAccumulator, EventSplitter, SSEEvent, name_piece

Block = tuple[bytes, SSEEvent | None]


def _role_only(delta: Any) -> bool:
    """True for a delta that carries nothing but the role (and empty content)."""
    if not isinstance(delta, dict):
        return True
    return all(k == "role" or (k == "content" and not v) or v is None
               for k, v in delta.items())


REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_details")
"""Delta fields of streamed reasoning (DeepSeek/vLLM, OpenRouter)."""


def _reasoning_only(chunk: dict[str, Any], text: bool = False) -> bool:
    """True for a chunk whose choices carry reasoning and nothing to show beyond a
    role (no content, tool call or finish reason); content that is only whitespace
    counts as reasoning (a hidden round's blank text is no part of the client's
    answer), and with ``text`` all content does (a structured answer's text)."""
    choices = [c for c in chunk.get("choices") or [] if isinstance(c, dict)]
    some = False
    for ch in choices:
        if ch.get("finish_reason"):
            return False
        delta = ch.get("delta")
        if not isinstance(delta, dict):
            continue
        for key, value in delta.items():
            if key in REASONING_KEYS or (text and key == "content"):
                some = some or bool(value)
            elif key == "content" and isinstance(value, str) and value and not value.strip():
                some = True  # whitespace before anything shown: held like reasoning
            elif not (key == "role" or (key == "content" and not value) or value is None):
                return False
    return some


def sum_usage(total: dict[str, Any] | None, usage: Any) -> dict[str, Any] | None:
    """Add ``usage`` into ``total`` (numbers summed, nested objects likewise; a field
    only a later round reports, or that ``total`` holds as null, is taken as is). A
    string names how the round was served (Anthropic's ``service_tier``,
    ``inference_geo``): the later round's wins, as the answer the client gets is
    that round's."""
    if not isinstance(usage, dict):
        return total
    if total is None:
        return copy.deepcopy(usage)
    for key, value in usage.items():
        have = total.get(key)
        if have is None:
            if value is not None:
                total[key] = copy.deepcopy(value)
        elif isinstance(value, str):
            total[key] = value
        elif isinstance(value, bool) or isinstance(have, bool):
            continue  # not a count
        elif isinstance(value, int | float) and isinstance(have, int | float):
            total[key] = have + value
        elif isinstance(value, dict) and isinstance(have, dict):
            sum_usage(have, value)
    return total


def sse_data(obj: Any) -> bytes:
    """One SSE ``data:`` block for ``obj`` (JSON, orjson)."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"


class ChatStreamRound:
    """Decisions over one round's SSE blocks: pass, rewrite, hold or swallow."""

    def __init__(self, names: dict[str, str], client_offset: int = 0, *,
                 later: bool = False, stream_id: Any = None, created: Any = None,
                 hold_text: bool = False, usage_before: dict[str, Any] | None = None
                 ) -> None:
        self.names = names
        self.usage_before = usage_before
        """The usage of the answer's earlier rounds, summed (``None`` for the first)."""
        self.hold_text = hold_text
        self.slots: dict[int, dict[str, Any]] = {}
        self.client_offset = client_offset
        self.next_client_index = client_offset
        self.tail: list[tuple[str, bytes]] = []
        """Held blocks, in order, as ``(kind, bytes)``: kind ``finish``, ``usage``,
        ``done`` or ``other``."""
        self.holding = False
        self.shown = False
        """The round relayed something beyond a role chunk and comments."""
        self.later = later
        self.stream_id, self.created = stream_id, created
        self.acc = ChunkAccumulator()
        self.splitter = EventSplitter()
        self.call_slots = CallSlots()
        self._client_at: dict[int, int] = {}
        """The upstream's index of a client call → the index the client got for it."""
        self.held: list[bytes] = []
        """Reasoning chunks for the client, held while nothing of the round was shown."""
        self._role_head: bytes | None = None
        """The role a held reasoning chunk carried, as a role chunk of its own."""
        self._last: dict[str, Any] | None = None
        """The last chunk with choices: the frame of :meth:`_settle_calls`' chunk."""

    # -- bytes in, bytes out ----------------------------------------------------------
    def feed(self, data: bytes) -> bytes:
        """Consume upstream bytes; return the bytes for the client now."""
        return self.process(self.splitter.feed(data))

    def close(self) -> bytes:
        """The upstream body ended: decide on what is left."""
        return self.process(self.splitter.close()) + self._settle_calls()

    def pending(self) -> bytes:
        """The held reasoning (an answer cut off shows it), the calls still unnamed,
        then the bytes of an unfinished block (what an aborted stream still owes)."""
        return self.release() + self._settle_calls() + self.splitter.pending()

    def _release_held(self) -> list[dict[str, Any]]:
        """Decide every waiting call for good (the stream ends): the held fragments of
        those that are the client's, each at its client index, in slot order; their
        holds emptied."""
        for slot in self.slots.values():
            self._decide(slot, final=True)
        released = [dict(h, index=s["client_index"]) for s in self.slots.values()
                    if s["ours"] is False for h in s["held"]]
        for s in self.slots.values():
            if s["ours"] is False:
                s["held"] = []
        return released

    def _settle_calls(self) -> bytes:
        """The stream ends with no finish chunk (``[DONE]``, a usage chunk or the end
        of the body first) while calls wait for their names: each is the client's,
        its held fragments sent in one chunk."""
        released = self._release_held()
        if not released or self._last is None:
            return b""
        self.shown = True
        frame = {k: v for k, v in self._last.items() if k != "usage"}
        body = {"index": 0, "delta": {"tool_calls": released}, "finish_reason": None}
        return self.release() + self._emit(dict(frame, choices=[body]), True, b"")

    def holds(self) -> bool:
        """True while reasoning chunks are held (heartbeats are due)."""
        return bool(self.held)

    def release(self) -> bytes:
        """Show the held reasoning chunks (once); their bytes."""
        held, self.held = self.held, []
        if held:
            self.shown = True
            self._role_head = None  # it goes with its chunk, as the upstream sent it
        return b"".join(held)

    def messages(self) -> list[dict[str, Any]]:
        """The round's assistant messages, as the upstream sent them."""
        return self.acc.messages()

    def process(self, blocks: list[Block]) -> bytes:
        """Return the bytes to relay now for ``blocks``; from the finish chunk (or a
        usage chunk) on, every block is held in ``tail``, in order, for the loop."""
        out = b""
        acc = self.acc
        for raw, event in blocks:
            if event is None:
                if self.holding:
                    self.tail.append(("other", raw))
                else:
                    out += raw  # comments (keep-alive) pass through
                continue
            if event.data.strip() == "[DONE]":
                acc.add_event(event)
                out += self._settle_calls()
                self.tail.append(("done", raw))
                self.holding = True
                continue
            obj = acc.add_event(event)
            choices = obj.get("choices") if obj is not None else None
            if choices is not None and not isinstance(choices, list):
                choices = None
            if obj is not None and not choices and obj.get("usage") is not None:
                # The usage chunk. (With include_usage every chunk says "usage": null,
                # Azure's choice-less prompt-filter chunk first: relayed as it comes.)
                out += self._settle_calls()
                self.tail.append(("usage", raw))
                self.holding = True
                continue
            if obj is None or not choices:
                if self.holding:
                    self.tail.append(("other", raw))
                else:
                    # an error object or junk: the client's to see
                    out += self.release() + raw
                    self.shown = True
                continue
            if self.holding:
                self.tail.append(("other", raw))
                continue
            self._last = obj
            if not self.shown and _reasoning_only(obj, self.hold_text):
                out += self._hold_reasoning(raw, obj)
                continue
            piece = self._chunk(raw, obj)
            if self.held and self.shown:
                piece = self.release() + piece
            out += piece
        return out

    def _hold_reasoning(self, raw: bytes, obj: dict[str, Any]) -> bytes:
        """Hold a reasoning chunk as it came; a role it carries is kept apart too
        (:meth:`hidden_head`): a client whose stream started gets it when the round
        turns out hidden, and the later rounds drop theirs."""
        piece = self._chunk(raw, obj)
        self.shown = False  # reasoning alone does not show the round yet
        if not piece:
            return b""
        self.held.append(piece)
        if self._role_head is None and not self.later:
            chunk = orjson.loads(piece[piece.index(b"{"):]) if piece is not raw else obj
            first = [c for c in chunk.get("choices") or [] if isinstance(c, dict)]
            delta = first[0].get("delta") if len(first) == 1 else None
            if isinstance(delta, dict) and "role" in delta:
                role = dict(first[0], delta={"role": delta["role"], "content": ""})
                self._role_head = sse_data(dict(chunk, choices=[role]))
        return b""

    def hidden_head(self) -> bytes:
        """The role chunk kept back with the round's reasoning (once), when nothing of
        the held reasoning went out."""
        head, self._role_head = self._role_head, None
        return head or b""

    # -- decisions ----------------------------------------------------------------------
    def _decide(self, slot: dict[str, Any], final: bool) -> None:
        if slot["ours"] is not None:
            return
        name = slot["name"]
        if not name:
            # OpenAI's first fragment carries the name; some servers send it after the
            # id and the first arguments: held until it comes, the client's if none does.
            if final:
                slot["ours"] = False
        elif not any(n.startswith(name) for n in self.names):
            slot["ours"] = False
        elif name in self.names and (final or slot["args_started"]):
            slot["ours"] = True
        elif final or slot["args_started"]:
            # Arguments follow a whole name: one that only begins a memory tool's
            # (a client tool named ``memory``) is the client's, relayed as it comes.
            slot["ours"] = False
        if slot["ours"] is False:
            # A call on an index the upstream reused goes to the client on the index
            # its earlier client call got there: what the client would see direct.
            up = slot["index"]
            if up in self._client_at:
                slot["client_index"] = self._client_at[up]
            else:
                slot["client_index"] = self._client_at[up] = self.next_client_index
                self.next_client_index += 1

    def _emit(self, obj: dict[str, Any], changed: bool, raw: bytes) -> bytes:
        """``raw`` when nothing changed, else ``obj`` re-serialised; a later round's
        chunk takes the answer's ``id`` and ``created``; a chunk's ``usage`` after
        earlier rounds counts them too."""
        if self.usage_before is not None and isinstance(obj.get("usage"), dict):
            total = sum_usage(copy.deepcopy(self.usage_before), obj["usage"])
            obj, changed = dict(obj, usage=total), True
        if self.later:
            if obj.get("id") != self.stream_id or obj.get("created") != self.created:
                obj = dict(obj, id=self.stream_id, created=self.created)
                changed = True
        return sse_data(obj) if changed else raw

    def _chunk(self, raw: bytes, obj: dict[str, Any]) -> bytes:
        changed = False
        keep_choices = []
        finish_here = False
        for ch in obj["choices"]:
            if not isinstance(ch, dict) or ch.get("index", 0) != 0:
                keep_choices.append(ch)
                continue
            delta = ch.get("delta") or {}
            if not isinstance(delta, dict):
                delta = {}
            if self.later and "role" in delta:
                delta = {k: v for k, v in delta.items() if k != "role"}
                ch = dict(ch, delta=delta)
                changed = True
            frags = delta.get("tool_calls")
            if not isinstance(frags, list):
                frags = None
            if frags:
                relay = []
                altered = False
                for frag in frags:
                    if not isinstance(frag, dict):
                        continue
                    idx = self.call_slots.key(frag)
                    up = frag.get("index")
                    slot = self.slots.setdefault(idx, {
                        "name": "", "ours": None, "id": None, "args_started": False,
                        "held": [], "index": up if isinstance(up, int) else idx})
                    if frag.get("id"):
                        slot["id"] = frag["id"]
                    fn = frag.get("function")
                    fn = fn if isinstance(fn, dict) else {}
                    slot["name"] += name_piece(slot["name"], fn.get("name"))
                    if fn.get("arguments"):
                        slot["args_started"] = True
                    for other_idx, other in self.slots.items():
                        if other_idx != idx:
                            self._decide(other, final=True)
                    self._decide(slot, final=False)
                    if slot["ours"] is None:
                        slot["held"].append(frag)
                        altered = True
                    elif slot["ours"] is False:
                        if slot["held"] or slot["client_index"] != slot["index"]:
                            altered = True
                        for held in [*slot["held"], frag]:
                            relay.append(dict(held, index=slot["client_index"]))
                        slot["held"] = []
                    else:
                        slot["held"] = []
                        altered = True
                if altered:
                    delta = dict(delta)
                    if relay:
                        delta["tool_calls"] = relay
                    else:
                        delta.pop("tool_calls", None)
                    ch = dict(ch, delta=delta)
                    changed = True
            if ch.get("finish_reason"):
                released = self._release_held()
                if released:
                    delta = dict(ch.get("delta") or {}, tool_calls=released)
                    ch = dict(ch, delta=delta)
                    changed = True
                finish_here = True
            keep_choices.append(ch)
        if finish_here and not changed and len(keep_choices) == 1:
            self.tail.append(("finish", raw))  # unchanged: its exact bytes, at the end
            self.holding = True
            return b""
        if finish_here:
            # Held back: the loop decides whether this round really ends the answer.
            first = [c for c in keep_choices if isinstance(c, dict) and c.get("index", 0) == 0]
            rest = [c for c in keep_choices if c not in first]
            finish = sse_data(dict(obj, choices=first))
            pre = b""
            if first and ((first[0].get("delta") or {}).get("tool_calls")
                          or (first[0].get("delta") or {}).get("content")):
                body = dict(first[0], finish_reason=None)
                pre = self._emit(dict(obj, choices=[body]), True, raw)
                self.shown = True
                # The finish chunk repeats nothing the content chunk carried.
                rest_of = dict(first[0], delta={})
                if rest_of.get("logprobs") is not None:
                    rest_of["logprobs"] = None
                finish = sse_data(dict(obj, choices=[rest_of]))
            if rest:
                pre += self._emit(dict(obj, choices=rest), True, raw)
                self.shown = True
            self.tail.append(("finish", finish))
            self.holding = True
            return pre
        live = [c for c in keep_choices if isinstance(c, dict)]
        if all(_role_only(c.get("delta")) and not c.get("finish_reason") for c in live):
            if self.later or (changed and not any(
                    "role" in (c.get("delta") or {}) for c in live)):
                return b""  # a later round's role chunk, or only our fragments
            return self._emit(obj if not changed else dict(obj, choices=keep_choices),
                              changed, raw)  # the role chunk: not yet shown
        self.shown = True
        return self._emit(dict(obj, choices=keep_choices) if changed else obj, changed, raw)
