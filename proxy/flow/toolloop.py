"""Memory tools by tool-call interception (DESIGN §8), streaming and not, for every API.

The proxy adds its memory tools to the upstream request (never to the client's
view). When the model calls one, the proxy runs it, appends the call and its
result, and calls the upstream again — up to ``tools.max_rounds`` — so the client
receives one ordinary completion with only its own tool calls. The hidden
exchange is kept as the exchange's ``upstream_view`` so that it can be stored and
spliced back into later requests in place of the client-visible reply (the
model's view of its own history stays consistent). ``usage`` is summed over the
rounds. Everything wire-specific goes through the exchange's adapter
(:mod:`proxy.wire`): how a memory call is recognised, how the call and its
results go upstream again, and, streamed, the adapter's sans-io stream round and
stream session (:mod:`proxy.wire.streamsession`: what the rounds share, how the
answer's last bytes are restated). One loop serves Chat Completions, the
Responses API and Anthropic Messages.

Streaming: nothing reaches the client (status line included) until a round shows
something of its own (beyond a role chunk, ``message_start`` or
``response.created``), or ends without a memory call, or
``tools.heartbeat_seconds`` pass: an error of a later upstream call then reaches
the client with its true status, headers and body. While a hidden round runs
after the client's status was sent, a heartbeat (an SSE comment, Anthropic's
``ping``) is sent every ``heartbeat_seconds``. Content is relayed the moment it
arrives; a tool call is held only until its name shows whether it is ours
(swallowed) or the client's (relayed, renumbered). The end of the answer is
written once, at the very end. A client that leaves ends the loop, and the
upstream call in flight is cancelled.

Every upstream call of the loop after the first carries a derived
``Idempotency-Key`` (:func:`proxy.headers.for_send`): each is a new request, which an
upstream honouring the client's key would otherwise answer with the first one's answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from proxy import headers as hdrs
from proxy.appkeys import SETTINGS, TOOL_REFUSALS
from proxy.deployment import request_model
from proxy.errors import ProxyError, UpstreamError
from proxy.flow.asyncengine import AsyncEngine
from proxy.flow.client import ClientGone, ClientSide
from proxy.flow.exchange import Exchange, Round
from proxy.flow.recovery import Recover
from proxy.flow.roundbudget import fit_results
from proxy.flow.streamround import open_round, relay_round
from proxy.flow.toolrefusal import tools_refused, without_memory_tools
from proxy.rawhead import RelayedResponse, RelayedStreamResponse
from proxy.relay import _abort_client, relay_body, start
from proxy.rewrite import dumps_body, loads_exact
from proxy.wire.base import StreamRound
from proxy.wire.chat import sum_usage
from proxy.wire.streamsession import StreamSession

log = logging.getLogger("lcm.tools")

__all__ = ["ClientGone", "Recover", "ToolLoop"]


class ToolLoop:
    """One request's interception loop, any API (create one per request)."""

    shown_previous: str | None = None
    """The client's ``previous_response_id`` when its Responses request went as a
    stateless replay: the client is shown it where the upstream's answer says null."""
    stream: StreamSession | None = None
    """The streamed answer's session (:meth:`run_stream`), else ``None``."""

    def __init__(self, ex: Exchange, *, session: aiohttp.ClientSession, url: Any,
                 headers: Any, aengine: AsyncEngine, names: dict[str, str], max_rounds: int,
                 tool_timeout: float, heartbeat: float = 5.0,
                 on_round: Callable[[], None] | None = None,
                 before_end: Callable[[], Awaitable[None]] | None = None,
                 recover: Recover | None = None) -> None:
        self.ex, self.wire = ex, ex.wire
        self.session, self.url, self.headers = session, url, headers
        self.aengine, self.names = aengine, names
        self.max_rounds, self.tool_timeout = max_rounds, tool_timeout
        self.heartbeat = heartbeat
        self.on_round = on_round
        self.before_end = before_end
        """Awaited, the exchange's evidence complete, before a stream's final bytes
        (finish, usage, ``[DONE]``) reach the client: the caller stores the answer
        first, so an answer the client fully received is never one the proxy lost."""
        self.recover = recover
        """Asked once about an error of the first round, before any byte reached the
        client (:data:`Recover`)."""
        self.client = ClientSide(ex, heartbeat)
        self._sends = 0  # upstream calls made so far (idempotency keys per call)

    def _send_headers(self) -> Any:
        """The headers of the next upstream call (:func:`proxy.headers.for_send`)."""
        self._sends += 1
        return hdrs.for_send(self.headers, self._sends - 1)

    async def _retry_body(self, body: dict[str, Any], status: int, raw: bytes
                          ) -> dict[str, Any] | None:
        """The body to send again after a first round's error, once, or ``None``:
        without the memory tools when the upstream takes no tools
        (:mod:`proxy.flow.toolrefusal`; the model is remembered), else what
        :attr:`recover` makes of a context-length error."""
        if self.names and tools_refused(status, raw):
            app = self.ex.request.app
            model = request_model(self.ex.request, body)
            app[TOOL_REFUSALS].learn(app[SETTINGS].proxy.upstream, model)
            log.warning("request %s: the upstream takes no tools for model %r (%s); sent"
                        " again without the memory tools, which it is no longer offered",
                        self.ex.rid, model, raw[:200].decode("utf-8", "replace"))
            offered = set(self.names)
            self.names.clear()  # in place: the stream session reads the same names
            return without_memory_tools(body, offered)
        recover, self.recover = self.recover, None
        return await recover(status, raw) if recover is not None else None

    def _fit(self, body: dict[str, Any], messages: list[Any], msg: dict[str, Any],
             results: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The results clipped to the request's input budget (``None``: not planned,
        no limit), or ``None`` (no room left)."""
        room = self.ex.prepared.input_budget
        fitted = fit_results(room, body.get("tools"), messages, msg, results,
                             outside=self.wire.outside_tokens(body),
                             turns=self.wire.result_turns)
        if fitted is None:
            log.warning("request %s: no room in a context budget of %s tokens for another"
                        " memory tool round; answering without it", self.ex.rid, room)
        return fitted

    async def _run_tools(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        scope = self.ex.scope
        assert scope is not None  # the loop runs for captured requests only
        results = []
        for call in calls:
            offered = self.wire.call_name(call)
            name = self.names.get(offered, offered)
            try:
                text = await self.aengine.run_tool(scope, name, self.wire.call_arguments(call),
                                                   self.tool_timeout)
            except TimeoutError:
                text = orjson.dumps({"error": f"{name} took longer than "
                                              f"{self.tool_timeout:g} s"}).decode()
            results.append(self.wire.tool_result(call, text))
        if self.on_round is not None:
            self.on_round()
        return results

    def _split(self, rnd: Round, msg: dict[str, Any]) -> None:
        calls = self.wire.tool_calls(msg)
        rnd.message = msg
        rnd.ours = [c for c in calls if self.wire.call_name(c) in self.names]
        self.wire.name_calls(rnd.ours, f"{self.ex.rid}:{len(self.ex.rounds)}")
        rnd.client_calls = [c for c in calls if self.wire.call_name(c) not in self.names]

    async def _send(self, body: dict[str, Any], messages: list[Any]) -> aiohttp.ClientResponse:
        return await self.client.wait(self.ex.send(
            self.session, self.url, self._send_headers(),
            dumps_body(self.wire.with_messages(body, messages))))

    async def _read(self, resp: aiohttp.ClientResponse) -> bytes:
        """The whole body of a round. Raises :class:`UpstreamError` (502) when the
        upstream ends it abnormally (connection dropped mid-body, bad chunking): the
        loop cannot answer from half a body, and the request is recorded as failed."""
        try:
            return await self.client.wait(resp.read())
        except aiohttp.ClientPayloadError as exc:
            raise UpstreamError(f"upstream body ended abnormally: {exc}") from exc
        finally:
            resp.release()

    def _whole(self, resp: aiohttp.ClientResponse, raw: bytes) -> web.Response:
        client_headers = hdrs.to_client(resp.headers)
        client_headers.update(self.ex.extra)
        return RelayedResponse(status=resp.status, reason=resp.reason, body=raw,
                            headers=client_headers)

    def _answer(self, resp: aiohttp.ClientResponse, raw: bytes) -> web.Response:
        """A whole 2xx answer as the client is shown it."""
        return self._whole(resp, self.wire.client_answer(raw, self.names, self.shown_previous))

    def _error(self, resp: aiohttp.ClientResponse, raw: bytes) -> web.Response:
        """An error, or an answer the loop cannot read: its true status, headers and
        body, as the client sees them; not an answer."""
        self.ex.status, self.ex.complete = resp.status, False
        self.ex.error = raw[:2000].decode("utf-8", "replace")
        return self._whole(resp, raw) if resp.status >= 400 else self._answer(resp, raw)

    # -- non-streaming -------------------------------------------------------------
    async def run_plain(self, body: dict[str, Any]) -> web.StreamResponse:
        """Run the loop without streaming; returns the client's response. Raises
        :class:`ClientGone` when the client left (nothing was answered)."""
        ex, wire = self.ex, self.wire
        messages = wire.messages(body)
        shown: list[Any] = []  # hidden rounds' server tool work, which a stream shows
        while True:
            resp = await self._send(body, messages)
            raw = await self._read(resp)
            rnd = Round(resp.status, resp.headers)
            ex.rounds.append(rnd)
            try:
                obj = loads_exact(raw) if resp.status < 400 else None
            except (ValueError, RecursionError):
                obj = None
            msg = wire.answer_message(obj)
            if isinstance(obj, dict):
                rnd.response_id = obj.get("id")
            if msg is None and len(ex.rounds) == 1 and resp.status >= 400:
                again = await self._retry_body(body, resp.status, raw)
                if again is not None:
                    body, messages, ex.rounds = again, wire.messages(again), []
                    continue
            if msg is None:
                # An error or an answer we cannot read: the client gets it as sent.
                return self._error(resp, raw)
            assert isinstance(obj, dict)
            ex.usage = sum_usage(ex.usage, wire.usage(obj))
            self._split(rnd, msg)
            ex.status = resp.status
            if not rnd.ours:
                if len(ex.rounds) == 1:  # nothing intercepted: the upstream's bytes
                    ex.client_choices = wire.client_choices(obj)
                    ex.finish_reasons = wire.finish_reasons(obj)
                    return self._answer(resp, raw)
                ex.upstream_view = [*ex.hidden, msg]
                wire.set_answer(obj, msg, wire.finish_reasons(obj)[0], ex.usage)
                break
            others = rnd.client_calls
            reason = (wire.finish_reasons(obj) or [None])[0]
            if reason in wire.finish_cut:
                # The model ran out of output room: its memory calls may be cut off
                # (arguments half written). None is run; the answer ends as the
                # upstream ended it, without them.
                rnd.cut = True
                msg = wire.without_calls(msg, others)
                ex.upstream_view = [*ex.hidden, msg] if ex.hidden else None
                wire.set_answer(obj, msg, reason, ex.usage)
                break
            if len(ex.rounds) >= self.max_rounds:
                log.warning("memory tool rounds reached %d; returning the model's last answer"
                            " without its memory calls", self.max_rounds)
                msg = wire.without_calls(msg, others)
                ex.upstream_view = [*ex.hidden, msg]
                wire.set_answer(obj, msg, wire.finish_tools if others else wire.finish_stop,
                                ex.usage)
                break
            results = await self.client.wait(self._run_tools(rnd.ours))
            fitted = self._fit(body, messages, msg, results) if not others else results
            if fitted is None:
                msg = wire.without_calls(msg, others)
                ex.upstream_view = [*ex.hidden, msg] if ex.hidden else None
                wire.set_answer(obj, msg, wire.finish_stop, ex.usage)
                break
            turns = wire.result_turns(fitted)
            rnd.hidden = not others
            sent = wire.replayable(body, msg)
            ex.hidden.extend([sent, *turns])
            if others:  # mixed: the client must run its own tools now
                ex.upstream_view = list(ex.hidden)
                wire.set_answer(obj, wire.without_calls(msg, others), wire.finish_tools,
                                ex.usage)
                break
            messages.extend([sent, *turns])
            shown.extend(wire.server_work(msg))
            body = wire.carried(body, obj)
        if shown:
            wire.lead_with(obj, shown)
        ex.client_choices = wire.client_choices(obj)
        ex.finish_reasons = wire.finish_reasons(obj)
        return self._answer(resp, dumps_body(obj))

    # -- streaming -------------------------------------------------------------------
    async def run_stream(self, body: dict[str, Any]) -> web.StreamResponse:
        """Run the loop over SSE, relaying to one client response (see module docstring)."""
        ex, wire = self.ex, self.wire
        ss = self.stream = wire.stream_session(self.names, body, previous=self.shown_previous)
        messages = wire.messages(body)
        sr: StreamRound | None = None
        while True:
            try:
                resp, queue, reader, head = await open_round(
                    self.client, self.session, self.url, self._send_headers(),
                    dumps_body(wire.with_messages(body, messages)))
            except ProxyError as exc:
                if ex.response is None:  # nothing sent: the API's error response
                    raise
                # The client's stream is started: the API's in-stream error event.
                return await self._fail_in_stream(ss, exc.status, exc.message)
            rnd = Round(resp.status, resp.headers)
            ex.rounds.append(rnd)
            if queue is None:
                if ex.response is None:
                    if resp.status < 400:  # not a stream: relay it as it comes
                        return await self._relay_whole(resp, head)
                    raw = await self._read(resp)
                    if len(ex.rounds) == 1:
                        # Nothing reached the client: a context-length error is tried again.
                        again = await self._retry_body(body, resp.status, raw)
                        if again is not None:
                            body, messages, ex.rounds = again, wire.messages(again), []
                            continue
                    return self._error(resp, raw)  # the true status of the round shown
                try:
                    raw = head + await self._read(resp)
                except UpstreamError as exc:
                    return await self._fail_in_stream(ss, exc.status, exc.message)
                await self.client.write(ss.upstream_error_bytes(
                    raw, "upstream failed during a memory tool round: "
                    + raw[:500].decode("utf-8", "replace")))
                ex.status, ex.complete, ex.error = resp.status, False, "upstream error in round"
                if ss.abort_after_error:
                    _abort_client(ex.response, ex.request)
                return ex.response
            sr = ss.next_round(len(ex.rounds))
            gone = not await relay_round(self.client, resp, queue, reader, sr)
            ss.after_round(sr, ex.response is not None)
            rnd.response_id = sr.identity()[0]
            if gone:
                ex.client_gone, ex.complete = True, False
                partial = ss.gone_choices(sr)
                if partial is not None:
                    ex.client_choices = partial
                return ex.response or web.Response(status=499)
            ex.usage = sum_usage(ex.usage, sr.usage())
            ex.answered = sr.answered()
            msg = ss.message(sr)
            self._split(rnd, msg)
            error = ss.round_error(sr)
            if error is not None:
                ex.error = error
            rnd.cut = bool(rnd.ours) and (sr.finish_reasons() or [None])[0] in wire.finish_cut
            if ex.error is not None or ss.stops(sr) or not rnd.ours or rnd.cut:
                # (A cut round's memory calls may be half written: none is run, and
                # the upstream's view of the round leaves them out, as the client's.)
                if len(ex.rounds) > 1:
                    ex.upstream_view = [*ex.hidden, wire.without_calls(msg, rnd.client_calls)
                                        if rnd.cut else msg]
                break
            if len(ex.rounds) >= self.max_rounds:
                log.warning("memory tool rounds reached %d; ending the stream", self.max_rounds)
                ex.upstream_view = [*ex.hidden, wire.without_calls(msg, rnd.client_calls)]
                break
            rnd.hidden = not rnd.client_calls and not sr.shown
            self.client.hidden_running = True
            self.client.held = b""  # a hidden round's head and heartbeats: never shown
            head = sr.hidden_head() if rnd.hidden else b""
            if head and ex.response is not None:  # the later rounds drop their role
                await self.client.write(head)
            results = await self.client.wait(self._run_tools(rnd.ours))
            fitted = (self._fit(body, messages, msg, results) if not rnd.client_calls
                      else results)
            if fitted is None:  # no room for another round: end as at max_rounds
                ex.upstream_view = [*ex.hidden, wire.without_calls(msg, [])] \
                    if ex.hidden else None
                break
            turns = wire.result_turns(fitted)
            sent = wire.replayable(body, msg)
            ex.hidden.extend([sent, *turns])
            if rnd.client_calls:
                ex.upstream_view = list(ex.hidden)
                break
            messages.extend([sent, *turns])
            body = wire.carried(body, sr.answer_fields())
        return await self._end(ss, sr)

    async def _fail_in_stream(self, ss: StreamSession, status: int, message: str
                              ) -> web.StreamResponse:
        """A later round failed without an answer (the upstream unreachable, or its
        connection dropped) after the client's stream started: the API's in-stream
        error event (``api_error``/``upstream_error``), then the end as after an
        upstream's error event; recorded as failed."""
        ex = self.ex
        assert ex.response is not None
        log.warning("request %s: upstream failed during a memory tool round: %s",
                    ex.rid, message)
        await self.client.write(ss.error_bytes(
            f"upstream failed during a memory tool round: {message}"))
        ex.status, ex.complete, ex.error = status, False, message[:2000]
        if ss.abort_after_error:
            _abort_client(ex.response, ex.request)
        return ex.response

    async def _relay_whole(self, resp: aiohttp.ClientResponse, head: bytes = b""
                           ) -> web.StreamResponse:
        """A 2xx round that is not an event stream, before the client saw anything:
        relayed as it comes (``head``: its first bytes, read already); not an answer."""
        ex = self.ex
        client_headers = hdrs.to_client(resp.headers)
        client_headers.update(ex.extra)
        ex.response = RelayedStreamResponse(status=resp.status, reason=resp.reason,
                                         headers=client_headers)
        ex.status, ex.complete = resp.status, False
        if not await start(ex.response, ex.request):  # the client left meanwhile
            resp.close()
            ex.client_gone = True
            return ex.response
        try:
            relayed = await relay_body(resp, ex.response, keep=True, head=head,
                                       request=ex.request, check_every=self.heartbeat)
        finally:
            resp.release()
        ex.client_gone = relayed.client_gone
        ex.error = relayed.body()[:2000].decode("utf-8", "replace")
        return ex.response

    async def _end(self, ss: StreamSession, sr: StreamRound | None) -> web.StreamResponse:
        """The last round's held tail (the exact upstream bytes after a single round;
        restated by the session after several), after the answer is stored."""
        ex = self.ex
        assert sr is not None
        last = ex.rounds[-1]
        out = ss.tail(sr, rounds=len(ex.rounds), usage=ex.usage,
                      cut=bool(last.ours) and not last.client_calls and not last.cut)
        broke = not ex.complete or not ss.ended()
        if broke and ex.response is None and len(ex.rounds) > 1:
            # A later round broke off before anything was shown and before a
            # heartbeat sent the client's status line: the API's error response
            # (502), as when the upstream cannot be reached.
            message = ("upstream connection broke off during a memory tool round: "
                       + (ex.error or "stream ended early"))
            log.warning("request %s: %s", ex.rid, message)
            ex.complete = False
            raise UpstreamError(message)
        ok = await self.client.commit()
        if not ex.complete or not ss.ended():
            # The upstream broke off: the client must not see a clean end of stream.
            ex.complete = False
            ex.client_choices = ss.broken_choices()
            if ok and ex.response is not None:
                flush = ss.flush_on_break(sr, out)
                if flush:
                    await self.client.write(flush)
                if len(ex.rounds) > 1 and not sr.answered():
                    # A stream the proxy composed of rounds: it says why it ends
                    # (the API's in-stream error event), then is cut, or closed
                    # where that event ends the stream (Responses' response.failed).
                    await self.client.write(ss.error_bytes(
                        "upstream connection broke off during a memory tool round: "
                        + (ex.error or "stream ended early")))
                    if ss.error_ends_stream:
                        return ex.response
                _abort_client(ex.response, ex.request)
            return ex.response  # type: ignore[return-value]
        ex.client_choices, ex.finish_reasons = ss.final_choices(last.message, last.client_calls)
        if ss.failed():
            ex.answered = False  # a clean end for the client; not an answer to store
        if not ok:
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        if self.before_end is not None and ss.storable(sr):
            await self.before_end()
        if not await self.client.write(out):
            # The answer was stored as complete by before_end; the client left just
            # before its last bytes: record that, as for any disconnect.
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        try:
            await ex.response.write_eof()  # type: ignore[union-attr]
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            pass
        return ex.response  # type: ignore[return-value]
