"""Memory tools by tool-call interception (DESIGN §8), streaming and not.

The proxy adds its memory tools to the upstream request (never to the client's
view). When the model calls one, the proxy runs it, appends the call and its
result, and calls the upstream again — up to ``tools.max_rounds`` — so the client
receives one ordinary completion with only its own tool calls. The hidden
exchange is returned as ``upstream_view`` so that it can be stored and spliced
back into later requests in place of the client-visible reply (the model's view
of its own history stays consistent). ``usage`` is summed over the rounds.

Streaming: content deltas are relayed the moment they arrive; a tool-call delta is
held only until its function name shows whether it is ours (swallowed) or the
client's (relayed, re-indexed from 0). Blocks that need no change are relayed as
their exact upstream bytes; ``[DONE]`` and the usage chunk are written once, at the
very end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from memory_core import tools as mtools
from memory_core.engine import Engine
from memory_core.models import Scope
from proxy import headers as hdrs
from proxy.relay import _abort_client, relay_body
from proxy.rewrite import dumps_body
from proxy.sse import ChunkAccumulator, EventSplitter
from proxy.upstream import is_event_stream, send

log = logging.getLogger("lcm.tools")


Recover = Callable[[int, bytes], Awaitable[dict[str, Any] | None]]
"""Given a first round's error status and body, a new upstream body to send once
instead, or ``None`` (``proxy.handlers.chat._recoverer``)."""


def tools_wanted(body: dict[str, Any]) -> bool:
    """False when the request rules our tools out: ``tool_choice`` ``none``, a forced
    client function, or the legacy ``functions`` parameter (no mixing with ``tools``)."""
    choice = body.get("tool_choice")
    if choice == "none" or body.get("functions") is not None:
        return False
    if isinstance(choice, dict):  # {"type": "function", "function": {"name": ...}}
        return False
    return body.get("tools") is None or isinstance(body.get("tools"), list)


def add_tools(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Return ``(body with our tools appended, offered name → canonical name)``."""
    client_tools = body.get("tools") or []
    taken = {
        t.get("function", {}).get("name") for t in client_tools
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    ours, names = mtools.definitions_for({n for n in taken if isinstance(n, str)})
    out = dict(body)
    out["tools"] = [*client_tools, *ours]
    return out, names


def _sum_usage(total: dict[str, Any] | None, usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return total
    if total is None:
        return orjson.loads(orjson.dumps(usage))
    for key, value in usage.items():
        if isinstance(value, int | float) and isinstance(total.get(key), int | float):
            total[key] += value
        elif isinstance(value, dict) and isinstance(total.get(key), dict):
            _sum_usage(total[key], value)
    return total


@dataclass
class LoopResult:
    """What the client got, for capture: its choices, the hidden rounds, the model's
    own view of choice 0, the summed usage, and the status of the exchange."""

    status: int
    client_choices: list[dict[str, Any]] = field(default_factory=list)
    hidden: list[dict[str, Any]] = field(default_factory=list)
    upstream_view: list[dict[str, Any]] | None = None
    usage: dict[str, Any] | None = None
    rounds: int = 0
    complete: bool = True
    client_gone: bool = False
    finish_reasons: list[Any] = field(default_factory=list)
    error: str | None = None
    answered: bool = True
    """False when the stream ended without ``[DONE]`` or a ``finish_reason``: not
    an answer, whatever bytes came (kept as an incomplete event)."""


class ToolLoop:
    """One chat request's interception loop (create one per request)."""

    def __init__(self, *, request: web.Request, session: aiohttp.ClientSession, url: Any,
                 headers: Any, engine: Engine, scope: Scope, names: dict[str, str],
                 max_rounds: int, tool_timeout: float,
                 extra_headers: dict[str, str], on_round: Callable[[], None] | None = None,
                 before_end: Callable[[LoopResult], Awaitable[None]] | None = None,
                 recover: Recover | None = None) -> None:
        self.request, self.session, self.url, self.headers = request, session, url, headers
        self.engine, self.scope, self.names = engine, scope, names
        self.max_rounds, self.tool_timeout = max_rounds, tool_timeout
        self.extra_headers = extra_headers
        self.on_round = on_round
        self.before_end = before_end
        """Awaited with the complete result before a stream's final bytes (finish,
        usage, ``[DONE]``) reach the client: the caller stores the answer first, so
        an answer the client fully received is never one the proxy lost."""
        self.recover = recover
        """Asked once about an error of the first round, before any byte reached the
        client (:data:`Recover`)."""

    async def _retry_body(self, status: int, raw: bytes) -> dict[str, Any] | None:
        """The body to send again after a first round's error, once, or ``None``."""
        recover, self.recover = self.recover, None
        return await recover(status, raw) if recover is not None else None

    async def _run_tools(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        results = []
        for call in calls:
            fn = call.get("function") or {}
            name = self.names.get(fn.get("name", ""), fn.get("name", ""))
            try:
                text = await asyncio.wait_for(loop.run_in_executor(
                    None, mtools.run_tool, self.engine, self.scope, name,
                    fn.get("arguments")), self.tool_timeout)
            except TimeoutError:
                text = orjson.dumps({"error": f"{name} took longer than "
                                              f"{self.tool_timeout:g} s"}).decode()
            results.append({"role": "tool", "tool_call_id": call.get("id"), "content": text})
        if self.on_round is not None:
            self.on_round()
        return results

    def _is_ours(self, call: dict[str, Any]) -> bool:
        return (call.get("function") or {}).get("name") in self.names

    # -- non-streaming -------------------------------------------------------------
    async def run_plain(self, body: dict[str, Any]) -> tuple[web.Response, LoopResult]:
        """Run the loop without streaming; returns the client's response and the record."""
        messages = list(body["messages"])
        hidden: list[dict[str, Any]] = []
        usage: dict[str, Any] | None = None
        rounds = 0
        while True:
            rounds += 1
            resp = await send(self.session, "POST", self.url, self.headers,
                              dumps_body(dict(body, messages=messages)))
            try:
                raw = await resp.read()
            finally:
                resp.release()
            client_headers = hdrs.to_client(resp.headers)
            client_headers.update(self.extra_headers)
            try:
                obj = orjson.loads(raw) if resp.status < 400 else None
            except orjson.JSONDecodeError:
                obj = None
            choice = _first_choice(obj)
            if choice is None and rounds == 1 and resp.status >= 400:
                again = await self._retry_body(resp.status, raw)
                if again is not None:
                    body, messages, rounds = again, list(again["messages"]), 0
                    continue
            if choice is None:
                # An error or an answer we cannot read: the client gets it as sent.
                result = LoopResult(resp.status, rounds=rounds, complete=False,
                                    error=raw[:2000].decode("utf-8", "replace"))
                if rounds > 1:
                    result.hidden = hidden
                return web.Response(status=resp.status, body=raw,
                                    headers=client_headers), result
            usage = _sum_usage(usage, obj.get("usage"))
            msg = choice.get("message") or {}
            calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
            mine = [c for c in calls if self._is_ours(c)]
            if not mine:
                if rounds == 1:  # nothing intercepted: the upstream's bytes, untouched
                    return web.Response(status=resp.status, body=raw, headers=client_headers), \
                        LoopResult(resp.status, client_choices=_choices(obj), rounds=1,
                                   usage=usage, finish_reasons=_finishes(obj))
                view = [*hidden, msg]
                break
            others = [c for c in calls if not self._is_ours(c)]
            if rounds >= self.max_rounds:
                log.warning("memory tool rounds reached %d; returning the model's last answer"
                            " without its memory calls", self.max_rounds)
                msg = _without_calls(msg, others)
                choice["finish_reason"] = "tool_calls" if others else "stop"
                view = [*hidden, msg]
                break
            results = await self._run_tools(mine)
            if others:  # mixed: the client must run its own tools now
                full = msg
                view = [*hidden, full, *results]
                hidden.extend([full, *results])
                msg = _without_calls(full, others)
                choice["finish_reason"] = "tool_calls"
                break
            hidden.extend([msg, *results])
            messages.extend([msg, *results])
        choice["message"] = msg
        if usage is not None:
            obj["usage"] = usage
        result = LoopResult(resp.status, client_choices=_choices(obj), hidden=hidden,
                            upstream_view=view, usage=usage, rounds=rounds,
                            finish_reasons=_finishes(obj))
        return web.Response(status=resp.status, body=orjson.dumps(obj),
                            headers=client_headers), result

    # -- streaming -------------------------------------------------------------------
    async def run_stream(self, body: dict[str, Any]) -> tuple[web.StreamResponse, LoopResult]:
        """Run the loop over SSE, relaying to one client response (see module docstring)."""
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        messages = list(body["messages"])
        hidden: list[dict[str, Any]] = []
        usage: dict[str, Any] | None = None
        response: web.StreamResponse | None = None
        content_parts: list[str] = []
        client_calls: list[dict[str, Any]] = []
        rounds = 0
        tail: list[tuple[str, bytes]] = []
        result = LoopResult(200)
        view: list[dict[str, Any]] | None = None
        while True:
            rounds += 1
            resp = await send(self.session, "POST", self.url, self.headers,
                              dumps_body(dict(body, messages=messages)))
            if response is None and resp.status >= 400 and self.recover is not None:
                # Nothing reached the client yet: a context-length error is tried again.
                try:
                    raw = await resp.read()
                finally:
                    resp.release()
                again = await self._retry_body(resp.status, raw)
                if again is not None:
                    body, messages, rounds = again, list(again["messages"]), 0
                    continue
                client_headers = hdrs.to_client(resp.headers)
                client_headers.update(self.extra_headers)
                response = web.Response(status=resp.status, reason=resp.reason, body=raw,
                                        headers=client_headers)
                return response, LoopResult(resp.status, complete=False,
                                            error=raw[:2000].decode("utf-8", "replace"))
            if response is None:
                client_headers = hdrs.to_client(resp.headers)
                client_headers.update(self.extra_headers)
                response = web.StreamResponse(status=resp.status, reason=resp.reason,
                                              headers=client_headers)
                await response.prepare(self.request)
                if resp.status >= 400 or not is_event_stream(resp):
                    try:
                        relayed = await relay_body(resp, response, keep=True)
                    finally:
                        resp.release()
                    return response, LoopResult(resp.status, complete=False,
                                                client_gone=relayed.client_gone,
                                                error=relayed.body()[:2000].decode(
                                                    "utf-8", "replace"))
            elif resp.status >= 400 or not is_event_stream(resp):
                raw = await resp.read()
                resp.release()
                err = {"error": {"message": "upstream failed during a memory tool round: "
                                 + raw[:500].decode("utf-8", "replace"),
                                 "type": "upstream_error", "param": None, "code": None}}
                await _write(response, b"data: " + orjson.dumps(err) + b"\n\n")
                return response, LoopResult(resp.status, hidden=hidden, complete=False,
                                            rounds=rounds, error="upstream error in round")
            state = _StreamRound(self.names, len(client_calls))
            acc = ChunkAccumulator()
            splitter = EventSplitter()
            gone = False
            try:
                async for chunk in resp.content.iter_any():
                    out = state.process(splitter.feed(chunk), acc)
                    if out and not await _write(response, out):
                        gone = True
                        break
                if not gone:
                    out = state.process(splitter.close(), acc)
                    if out and not await _write(response, out):
                        gone = True
            except (aiohttp.ClientError, TimeoutError) as exc:
                result.error = f"{exc.__class__.__name__}: {exc}"
                result.complete = False
                # The client gets every byte the upstream sent before it broke off.
                if not state.holding and splitter.pending():
                    await _write(response, splitter.pending())
            finally:
                if gone:
                    resp.close()
                resp.release()
            if gone:
                partial = acc.messages()[:1]
                if partial:
                    partial[0]["content"] = "".join(content_parts) + (
                        partial[0].get("content") or "")
                return response, LoopResult(200, complete=False, client_gone=True,
                                            hidden=hidden, rounds=rounds,
                                            client_choices=partial)
            usage = _sum_usage(usage, acc.usage)
            result.answered = acc.done or any(acc.finish_reasons())
            tail = state.tail
            msgs = acc.messages()
            msg = msgs[0] if msgs else {"role": "assistant", "content": None}
            content_parts.append(msg.get("content") or "")
            calls = msg.get("tool_calls") or []
            mine = [c for c in calls if self._is_ours(c)]
            others = [c for c in calls if not self._is_ours(c)]
            client_calls.extend(others)
            if result.error is not None or not mine:
                view = [*hidden, msg] if rounds > 1 else None
                break
            if rounds >= self.max_rounds:
                log.warning("memory tool rounds reached %d; ending the stream", self.max_rounds)
                view = [*hidden, _without_calls(msg, others)]
                break
            results = await self._run_tools(mine)
            if others:
                view = [*hidden, msg, *results]
                hidden.extend([msg, *results])
                break
            hidden.extend([msg, *results])
            messages.extend([msg, *results])
        # The last round's held tail, in order: finish chunk, usage chunk, [DONE] (the
        # exact upstream bytes after a single round; finish and usage restated after
        # several, usage summed over them).
        out = b""
        for kind, raw in tail:
            if rounds > 1 and kind == "finish":
                raw = _finish_again(raw, client_calls)
            elif rounds > 1 and kind == "usage":
                raw = _usage_again(raw, usage)
            if kind != "usage" or include_usage or rounds == 1:
                out += raw
        if not result.complete:
            # The upstream broke off: the client must not see a clean end of stream.
            _abort_client(response, self.request)
            result.client_choices = [{"role": "assistant",
                                      "content": "".join(content_parts) or None}]
            result.hidden, result.rounds = hidden, rounds
            return response, result
        final: dict[str, Any] = {"role": "assistant",
                                 "content": "".join(content_parts) if any(content_parts)
                                 else None}
        if client_calls:
            final["tool_calls"] = list(client_calls)
        result.client_choices = [final]
        result.hidden = hidden
        result.upstream_view = view
        result.usage = usage
        result.rounds = rounds
        result.finish_reasons = ["tool_calls" if client_calls else "stop"]
        if self.before_end is not None:
            await self.before_end(result)
        if not await _write(response, out):
            # The answer was stored as complete by before_end; the client left just
            # before its last bytes: record that, as for any disconnect.
            result.client_gone = True
            return response, result
        try:
            await response.write_eof()
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            pass
        return response, result


class _StreamRound:
    """Per-round decisions over SSE blocks: pass, rewrite, hold or swallow."""

    def __init__(self, names: dict[str, str], client_offset: int) -> None:
        self.names = names
        self.slots: dict[int, dict[str, Any]] = {}
        self.client_offset = client_offset
        self.next_client_index = client_offset
        self.tail: list[tuple[str, bytes]] = []
        self.holding = False

    def _decide(self, slot: dict[str, Any], final: bool) -> None:
        if slot["ours"] is not None:
            return
        name = slot["name"]
        if not name or not any(n.startswith(name) for n in self.names):
            # A call's first fragment carries its name; one without is never ours.
            slot["ours"] = False
        elif name in self.names and (final or slot["args_started"]):
            slot["ours"] = True
        elif final:
            slot["ours"] = False
        if slot["ours"] is False:
            slot["client_index"] = self.next_client_index
            self.next_client_index += 1

    def process(self, blocks: list[tuple[bytes, Any]], acc: ChunkAccumulator) -> bytes:
        """Return the bytes to relay now for ``blocks``; from the finish chunk (or a
        usage chunk) on, every block is held in ``tail``, in order, for the loop."""
        out = b""
        for raw, event in blocks:
            if event is None:
                if self.holding:
                    self.tail.append(("other", raw))
                else:
                    out += raw  # comments (keep-alive) pass through
                continue
            if event.data.strip() == "[DONE]":
                acc.add_event(event)
                self.tail.append(("done", raw))
                self.holding = True
                continue
            obj = acc.add_event(event)
            choices = obj.get("choices") if obj is not None else None
            if choices is not None and not isinstance(choices, list):
                choices = None
            if obj is not None and not choices and "usage" in obj:
                self.tail.append(("usage", raw))
                self.holding = True
                continue
            if obj is None or not choices:
                if self.holding:
                    self.tail.append(("other", raw))
                else:
                    out += raw
                continue
            if self.holding:
                self.tail.append(("other", raw))
                continue
            out += self._chunk(raw, obj)
        return out

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
            frags = delta.get("tool_calls")
            if not isinstance(frags, list):
                frags = None
            if frags:
                relay = []
                altered = False
                for frag in frags:
                    if not isinstance(frag, dict):
                        continue
                    idx = frag.get("index", 0)
                    idx = idx if isinstance(idx, int) else 0
                    slot = self.slots.setdefault(idx, {"name": "", "ours": None,
                                                       "args_started": False, "held": []})
                    fn = frag.get("function")
                    fn = fn if isinstance(fn, dict) else {}
                    name = fn.get("name")
                    slot["name"] += name if isinstance(name, str) else ""
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
                        if slot["held"] or slot["client_index"] != idx:
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
                for slot in self.slots.values():
                    self._decide(slot, final=True)
                released = [dict(h, index=s["client_index"]) for s in self.slots.values()
                            if s["ours"] is False for h in s["held"]]
                for s in self.slots.values():
                    if s["ours"] is False:
                        s["held"] = []
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
            fin = dict(obj, choices=first)
            finish = b"data: " + orjson.dumps(fin) + b"\n\n"
            pre = b""
            if first and ((first[0].get("delta") or {}).get("tool_calls")
                          or (first[0].get("delta") or {}).get("content")):
                body = dict(first[0], finish_reason=None)
                pre = b"data: " + orjson.dumps(dict(obj, choices=[body])) + b"\n\n"
                fin_choice = dict(first[0], delta={})
                finish = b"data: " + orjson.dumps(dict(obj, choices=[fin_choice])) + b"\n\n"
            if rest:
                pre += b"data: " + orjson.dumps(dict(obj, choices=rest)) + b"\n\n"
            self.tail.append(("finish", finish))
            self.holding = True
            return pre
        if not changed:
            return raw
        empty = all(not (c.get("delta") or {}) for c in keep_choices if isinstance(c, dict))
        if empty and not any(c.get("finish_reason") for c in keep_choices
                             if isinstance(c, dict)):
            return b""  # only our fragments: nothing for the client
        return b"data: " + orjson.dumps(dict(obj, choices=keep_choices)) + b"\n\n"


def _finish_again(block: bytes, client_calls: list[dict[str, Any]]) -> bytes:
    obj = orjson.loads(block[block.index(b"{"):])
    for ch in obj.get("choices", []):
        ch["finish_reason"] = "tool_calls" if client_calls else "stop"
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _usage_again(block: bytes, usage: dict[str, Any] | None) -> bytes:
    obj = orjson.loads(block[block.index(b"{"):])
    obj["usage"] = usage
    return b"data: " + orjson.dumps(obj) + b"\n\n"


async def _write(response: web.StreamResponse, data: bytes) -> bool:
    try:
        await response.write(data)
        return True
    except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
        return False


def _first_choice(obj: Any) -> dict[str, Any] | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
        return None
    for ch in obj["choices"]:
        if isinstance(ch, dict) and ch.get("index", 0) == 0 and isinstance(
                ch.get("message"), dict):
            return ch
    return None


def _choices(obj: dict[str, Any]) -> list[dict[str, Any]]:
    ordered = sorted((c for c in obj.get("choices", []) if isinstance(c, dict)),
                     key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
    return [c["message"] for c in ordered if isinstance(c.get("message"), dict)]


def _finishes(obj: dict[str, Any]) -> list[Any]:
    return [c.get("finish_reason") for c in obj.get("choices", []) if isinstance(c, dict)]


def _without_calls(msg: dict[str, Any], keep: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(msg)
    if keep:
        out["tool_calls"] = keep
    else:
        out.pop("tool_calls", None)
        if out.get("content") is None:
            out["content"] = ""
    return out

