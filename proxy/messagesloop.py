"""Memory tools on Anthropic Messages, by ``tool_use`` interception (DESIGN §8).

The memory tools go upstream as Anthropic tools (``name``, ``description``,
``input_schema``; :meth:`proxy.wire.messages.MessagesWire.add_tools`). When the
model answers with a ``tool_use`` block calling one, the proxy runs it, appends
the assistant turn as sent (thinking blocks and their signatures included) and a
user turn with one ``tool_result`` per call (same ``tool_use_id``), and calls the
upstream again — up to ``tools.max_rounds``. The client gets one message with
only its own blocks; ``usage`` is summed over the rounds, ``stop_reason`` is the
last round's (``end_turn`` when memory calls were cut at the round limit). The
hidden rounds are stored and spliced back into later requests
(:func:`proxy.flow.record.capture_tool_answer`).

Streaming: nothing reaches the client (status line included) until a round shows
a block of its own, ends, or ``tools.heartbeat_seconds`` pass (then ``ping``
events keep it alive while a hidden round runs), so an error of a later round
reaches the client with its true status when nothing was sent yet. Intercepted
``tool_use`` blocks are removed and block ``index``es renumbered across rounds
(:class:`proxy.wire.messagesstream.MessagesStreamRound`); the client sees one
``message_start`` and one ``message_delta``/``message_stop``. A client that
leaves ends the loop and cancels the upstream call in flight.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from memory_core import tools as mtools
from proxy import headers as hdrs
from proxy.errors import ProxyError
from proxy.flow import record
from proxy.flow.client import ClientGone, ClientSide
from proxy.flow.exchange import Exchange, Round
from proxy.flow.recovery import Recover
from proxy.flow.steps import exact_body
from proxy.flow.streamround import open_round, relay_round
from proxy.handlers.messages import upstream_target
from proxy.keys import ENGINE, HTTP, METRICS, SETTINGS
from proxy.relay import _abort_client, relay_body
from proxy.rewrite import dumps_body, loads_exact
from proxy.upstream import send
from proxy.wire.messages import MESSAGES, sum_usage
from proxy.wire.messagesstream import MessagesStreamRound

log = logging.getLogger("lcm.tools")


async def run_with_tools(ex: Exchange, recover: Recover | None = None) -> web.StreamResponse:
    """Forward ``ex`` with the memory tools offered; answer their calls; store the
    answer (before a plain answer's body, or a stream's last bytes, goes out).
    ``recover`` answers a context-length error of the first round once
    (:func:`proxy.handlers.messages.recoverer`)."""
    app = ex.request.app
    settings, metrics = app[SETTINGS], app[METRICS]
    url, headers = upstream_target(ex)
    body, names = MESSAGES.add_tools(exact_body(ex))

    async def store_first() -> None:
        await record.store_first(ex, record.capture_tool_answer(ex, None))

    loop = MessagesLoop(ex, session=app[HTTP], url=url, headers=headers, names=names,
                        max_rounds=settings.tools.max_rounds,
                        tool_timeout=settings.tools.tool_timeout_seconds,
                        heartbeat=settings.tools.heartbeat_seconds, before_end=store_first,
                        recover=recover)
    started = time.perf_counter()
    try:
        if ex.streamed:
            response = await loop.run_stream(body)
        else:
            response = await loop.run_plain(body)
    except ProxyError as exc:
        record.record_failure(ex, exc.status, exc.code, exc.message)
        raise
    except ClientGone:
        ex.client_gone, ex.complete = True, False
        response = ex.response or web.Response(status=499)
    metrics.upstream_latency.labels("messages").observe(time.perf_counter() - started)
    if ex.client_gone:
        metrics.client_disconnects.inc()
    if not ex.captured:
        if ex.streamed or ex.client_gone:
            record.spawn(ex, record.capture_tool_answer(ex, None))
        else:
            await store_first()
    return response


class MessagesLoop:
    """One Messages request's interception loop (see module docstring)."""

    def __init__(self, ex: Exchange, *, session: aiohttp.ClientSession, url: Any,
                 headers: Any, names: dict[str, str], max_rounds: int, tool_timeout: float,
                 heartbeat: float, before_end: Any, recover: Recover | None = None) -> None:
        self.ex, self.wire = ex, MESSAGES
        self.session, self.url, self.headers = session, url, headers
        self.names, self.max_rounds, self.tool_timeout = names, max_rounds, tool_timeout
        self.before_end = before_end
        self.recover = recover
        self.client = ClientSide(ex, heartbeat)
        self.engine = ex.request.app[ENGINE]

    async def _run_tools(self, calls: list[dict[str, Any]]) -> dict[str, Any]:
        """Run our ``tool_use`` calls; the user turn with their ``tool_result`` blocks."""
        loop = asyncio.get_running_loop()
        scope = self.ex.scope
        assert scope is not None  # the loop runs for captured requests only
        results = []
        for call in calls:
            name = self.names.get(self.wire.call_name(call), self.wire.call_name(call))
            try:
                text = await asyncio.wait_for(loop.run_in_executor(
                    None, mtools.run_tool, self.engine, scope, name,
                    self.wire.call_arguments(call)), self.tool_timeout)
            except TimeoutError:
                text = orjson.dumps({"error": f"{name} took longer than "
                                              f"{self.tool_timeout:g} s"}).decode()
            results.append(self.wire.tool_result(call, text))
        self.ex.request.app[METRICS].tool_rounds.inc()
        return {"role": "user", "content": results}

    def _split(self, rnd: Round, msg: dict[str, Any]) -> None:
        calls = self.wire.tool_calls(msg)
        rnd.message = msg
        rnd.ours = [c for c in calls if self.wire.call_name(c) in self.names]
        rnd.client_calls = [c for c in calls if self.wire.call_name(c) not in self.names]

    def _whole(self, resp: aiohttp.ClientResponse, raw: bytes) -> web.Response:
        client_headers = hdrs.to_client(resp.headers)
        client_headers.update(self.ex.extra)
        return web.Response(status=resp.status, reason=resp.reason, body=raw,
                            headers=client_headers)

    async def _retry_body(self, status: int, raw: bytes) -> dict[str, Any] | None:
        """The body to send again after a first round's error, once, or ``None``."""
        recover, self.recover = self.recover, None
        if recover is None or len(self.ex.rounds) != 1:
            return None
        again = await recover(status, raw)
        if again is not None:
            self.ex.rounds = []
        return again

    async def _read(self, resp: aiohttp.ClientResponse) -> bytes:
        try:
            return await self.client.wait(resp.read())
        finally:
            resp.release()

    # -- not streamed --------------------------------------------------------------------
    async def run_plain(self, body: dict[str, Any]) -> web.StreamResponse:
        """The loop without streaming; returns the client's response."""
        ex, wire = self.ex, self.wire
        messages = wire.messages(body)
        while True:
            resp = await self.client.wait(send(
                self.session, "POST", self.url, self.headers,
                dumps_body(wire.with_messages(body, messages))))
            raw = await self._read(resp)
            rnd = Round(resp.status, resp.headers)
            ex.rounds.append(rnd)
            try:
                obj = loads_exact(raw) if resp.status < 400 else None
            except (ValueError, RecursionError):
                obj = None
            msg = wire.answer_message(obj)
            if msg is None and resp.status >= 400:
                again = await self._retry_body(resp.status, raw)
                if again is not None:
                    body, messages = again, wire.messages(again)
                    continue
            if msg is None:  # an error or an answer we cannot read: as sent
                ex.status, ex.complete = resp.status, False
                ex.error = raw[:2000].decode("utf-8", "replace")
                return self._whole(resp, raw)
            assert isinstance(obj, dict)
            ex.usage = sum_usage(ex.usage, wire.usage(obj))
            self._split(rnd, msg)
            ex.status = resp.status
            if not rnd.ours:
                if len(ex.rounds) == 1:  # nothing intercepted: the upstream's bytes
                    ex.client_choices, ex.finish_reasons = [msg], wire.finish_reasons(obj)
                    return self._whole(resp, raw)
                ex.upstream_view = [*ex.hidden, msg]
                wire.set_answer(obj, msg, obj.get("stop_reason"), ex.usage)
                break
            others = rnd.client_calls
            if len(ex.rounds) >= self.max_rounds:
                log.warning("memory tool rounds reached %d; returning the model's last answer"
                            " without its memory calls", self.max_rounds)
                msg = wire.without_calls(msg, others)
                ex.upstream_view = [*ex.hidden, msg]
                wire.set_answer(obj, msg, "tool_use" if others else "end_turn", ex.usage)
                break
            results = await self.client.wait(self._run_tools(rnd.ours))
            rnd.hidden = not others
            ex.hidden.extend([msg, results])
            if others:  # mixed: the client runs its own tools now
                ex.upstream_view = list(ex.hidden)
                wire.set_answer(obj, wire.without_calls(msg, others), "tool_use", ex.usage)
                break
            messages.extend([msg, results])
        ex.client_choices, ex.finish_reasons = wire.client_choices(obj), wire.finish_reasons(obj)
        return self._whole(resp, dumps_body(obj))

    # -- streamed --------------------------------------------------------------------------
    async def run_stream(self, body: dict[str, Any]) -> web.StreamResponse:
        """The loop over SSE, relaying to one client response (see module docstring)."""
        ex, wire = self.ex, self.wire
        messages = wire.messages(body)
        shown: list[dict[str, Any]] = []  # the client's blocks, all rounds
        started = False  # the client has its message_start
        offset = 0
        sr: MessagesStreamRound | None = None
        while True:
            resp, queue, reader = await open_round(
                self.client, self.session, self.url, self.headers,
                dumps_body(wire.with_messages(body, messages)))
            rnd = Round(resp.status, resp.headers)
            ex.rounds.append(rnd)
            if queue is None:
                if ex.response is None and resp.status >= 400:
                    raw = await self._read(resp)
                    again = await self._retry_body(resp.status, raw)
                    if again is not None:
                        body, messages = again, wire.messages(again)
                        continue
                    return self._error(resp, raw)
                return await self._not_a_stream(resp)
            sr = MessagesStreamRound(self.names, offset, later=started)
            gone = not await relay_round(self.client, resp, queue, reader, sr)
            started = started or (ex.response is not None and sr.message is not None)
            shown.extend(sr.content(client_only=True))
            offset = sr.next_index
            msg = sr.messages()[0]
            if gone:
                ex.client_gone, ex.complete = True, False
                ex.client_choices = [{"role": "assistant", "content": shown}]
                return ex.response or web.Response(status=499)
            ex.usage = sum_usage(ex.usage, sr.usage())
            ex.answered = sr.answered()
            self._split(rnd, msg)
            if ex.error is not None or sr.error is not None or not rnd.ours:
                if sr.error is not None:
                    ex.error = orjson.dumps(sr.error).decode()[:2000]
                if len(ex.rounds) > 1:
                    ex.upstream_view = [*ex.hidden, msg]
                break
            if len(ex.rounds) >= self.max_rounds:
                log.warning("memory tool rounds reached %d; ending the stream", self.max_rounds)
                ex.upstream_view = [*ex.hidden, wire.without_calls(msg, rnd.client_calls)]
                break
            rnd.hidden = not rnd.client_calls and not sr.shown
            self.client.hidden_running = True
            self.client.held = b""  # a hidden round's message_start and pings: never shown
            results = await self.client.wait(self._run_tools(rnd.ours))
            ex.hidden.extend([msg, results])
            if rnd.client_calls:
                ex.upstream_view = list(ex.hidden)
                break
            messages.extend([msg, results])
        return await self._end(sr, shown)

    async def _not_a_stream(self, resp: aiohttp.ClientResponse) -> web.StreamResponse:
        """A round answered with something other than an event stream."""
        ex = self.ex
        if ex.response is None:
            if resp.status < 400:  # 2xx but not a stream: relay it as it comes
                client_headers = hdrs.to_client(resp.headers)
                client_headers.update(ex.extra)
                ex.response = web.StreamResponse(status=resp.status, reason=resp.reason,
                                                 headers=client_headers)
                await ex.response.prepare(ex.request)
                try:
                    relayed = await relay_body(resp, ex.response, keep=True)
                finally:
                    resp.release()
                ex.status, ex.complete = resp.status, False
                ex.client_gone = relayed.client_gone
                ex.error = relayed.body()[:2000].decode("utf-8", "replace")
                return ex.response
            return self._error(resp, await self._read(resp))
        raw = await self._read(resp)
        await self.client.write(self.wire.stream_error(
            "upstream failed during a memory tool round: "
            + raw[:500].decode("utf-8", "replace")))
        ex.status, ex.complete, ex.error = resp.status, False, "upstream error in round"
        _abort_client(ex.response, ex.request)
        return ex.response

    def _error(self, resp: aiohttp.ClientResponse, raw: bytes) -> web.Response:
        """The true status, headers and body of the round the client sees."""
        self.ex.status, self.ex.complete = resp.status, False
        self.ex.error = raw[:2000].decode("utf-8", "replace")
        return self._whole(resp, raw)

    async def _end(self, sr: MessagesStreamRound | None,
                   shown: list[dict[str, Any]]) -> web.StreamResponse:
        """The last round's held ``message_delta`` (restated with the answer's stop
        reason and summed usage after several rounds) and ``message_stop``."""
        ex, wire = self.ex, self.wire
        assert sr is not None
        last = ex.rounds[-1]
        upstream_stop = sr.stop_reason
        stop = "end_turn" if last.ours and not last.client_calls else upstream_stop
        later = len(ex.rounds) > 1
        out = b""
        for kind, raw in sr.tail:
            if kind == "finish" and (later or stop != upstream_stop):
                raw = wire.restate(kind, raw, finish_reason=stop, usage=ex.usage,
                                   stream_id=None, created=None)
            out += raw
        ok = await self.client.commit()
        ex.client_choices = [{"role": "assistant", "content": shown}]
        if not ex.complete:  # the upstream broke off: no clean end for the client
            if ok and ex.response is not None:
                _abort_client(ex.response, ex.request)
            return ex.response  # type: ignore[return-value]
        ex.finish_reasons = [stop]
        if not ok:
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        if self.before_end is not None and sr.error is None:
            await self.before_end()
        if not await self.client.write(out):
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        try:
            await ex.response.write_eof()  # type: ignore[union-attr]
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            pass
        return ex.response  # type: ignore[return-value]
