"""Memory tools on a streamed Responses answer: the loop over upstream rounds.

:class:`ResponsesToolLoop` is :class:`proxy.toolloop.ToolLoop` with a stream loop
for the Responses API (the non-streamed loop is the same for every API). Each
round's bytes go through :class:`proxy.wire.responsesstream.ResponsesStreamRound`:
the client gets one ``response.created``, the items it is shown renumbered, and
one terminal event restated with the id it saw, the items it was shown and the
usage summed over the rounds. Status holding, heartbeats and a client that
leaves work as for chat (:class:`proxy.flow.client.ClientSide`).
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from aiohttp import web

from proxy import headers as hdrs
from proxy.flow.exchange import Round
from proxy.flow.streamround import open_round, relay_round
from proxy.relay import _abort_client, relay_body
from proxy.rewrite import dumps_body, loads_exact
from proxy.toolloop import ToolLoop
from proxy.wire.chat import sum_usage
from proxy.wire.responses import error_event, reply_turn
from proxy.wire.responsesstream import (
    ResponsesStreamRound,
    StreamState,
    terminal_bytes,
    without_our_tools,
)

log = logging.getLogger("lcm.tools")


class ResponsesToolLoop(ToolLoop):
    """One Responses request's interception loop (create one per request)."""

    final: dict[str, Any] | None = None
    """The response object the client's stream ended with (``None`` before)."""
    shown_previous: str | None = None
    """The client's ``previous_response_id`` when its request went as a stateless
    replay: the client is shown it where the upstream's answer says null."""

    async def run_plain(self, body: dict[str, Any]) -> web.StreamResponse:
        """:meth:`ToolLoop.run_plain`, the answer's echoed ``tools`` without ours."""
        response = await super().run_plain(body)
        if (isinstance(response, web.Response) and response.status < 400
                and isinstance(response.body, bytes)
                and (b'"tools"' in response.body or self.shown_previous is not None)):
            try:
                obj = loads_exact(response.body)
            except (ValueError, RecursionError):
                return response
            scrubbed = without_our_tools(obj, self.names)
            if (self.shown_previous is not None and isinstance(scrubbed, dict)
                    and "previous_response_id" in scrubbed
                    and scrubbed["previous_response_id"] is None):
                scrubbed = dict(scrubbed, previous_response_id=self.shown_previous)
            if scrubbed is not obj:
                response.body = dumps_body(scrubbed)
        return response

    async def run_stream(self, body: dict[str, Any]) -> web.StreamResponse:
        """Run the loop over SSE, relaying to one client response."""
        ex, wire = self.ex, self.wire
        messages = wire.messages(body)
        state = StreamState()
        state.previous = self.shown_previous
        sr: ResponsesStreamRound | None = None
        while True:
            resp, queue, reader = await open_round(
                self.client, self.session, self.url, self.headers,
                dumps_body(wire.with_messages(body, messages)))
            rnd = Round(resp.status, resp.headers)
            ex.rounds.append(rnd)
            if queue is None:
                if ex.response is None:
                    if resp.status < 400:  # not a stream: relay it as it comes
                        client_headers = hdrs.to_client(resp.headers)
                        client_headers.update(ex.extra)
                        ex.response = web.StreamResponse(status=resp.status,
                                                         reason=resp.reason,
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
                    raw = await self._read(resp)
                    if len(ex.rounds) == 1:
                        # Nothing reached the client: a context-length error is tried again.
                        again = await self._retry_body(resp.status, raw)
                        if again is not None:
                            body, messages, ex.rounds = again, wire.messages(again), []
                            continue
                    ex.status, ex.complete = resp.status, False
                    ex.error = raw[:2000].decode("utf-8", "replace")
                    return self._whole(resp, raw)  # the true status of the round shown
                raw = await self._read(resp)
                await self.client.write(state.stamp(error_event(
                    "upstream failed during a memory tool round: "
                    + raw[:500].decode("utf-8", "replace")), None))
                ex.status, ex.complete, ex.error = resp.status, False, "upstream error in round"
                return ex.response
            sr = ResponsesStreamRound(self.names, state, first=len(ex.rounds) == 1)
            gone = not await relay_round(self.client, resp, queue, reader, sr)
            msgs = sr.messages()
            if gone:
                ex.client_gone, ex.complete = True, False
                ex.client_choices = [reply_turn(list(state.output))] if state.output else []
                return ex.response or web.Response(status=499)
            ex.usage = sum_usage(ex.usage, sr.usage())
            ex.answered = sr.answered()
            msg = msgs[0] if msgs else reply_turn([])
            self._split(rnd, msg)
            if ex.error is not None or not sr.answered() or not rnd.ours:
                if len(ex.rounds) > 1:
                    ex.upstream_view = [*ex.hidden, msg]
                break
            if len(ex.rounds) >= self.max_rounds:
                log.warning("memory tool rounds reached %d; ending the stream", self.max_rounds)
                ex.upstream_view = [*ex.hidden, wire.without_calls(msg, rnd.client_calls)]
                break
            rnd.hidden = not rnd.client_calls and not sr.shown
            self.client.hidden_running = True
            self.client.held = b""  # a hidden round's comments: never shown
            results = await self.client.wait(self._run_tools(rnd.ours))
            fitted = (self._fit(body, messages, msg, results) if not rnd.client_calls
                      else results)
            if fitted is None:
                ex.upstream_view = [*ex.hidden, wire.without_calls(msg, [])] \
                    if ex.hidden else None
                break
            ex.hidden.extend([msg, *fitted])
            if rnd.client_calls:
                ex.upstream_view = list(ex.hidden)
                break
            messages.extend([msg, *fitted])
        return await self._finish(sr, state)

    async def _finish(self, sr: ResponsesStreamRound | None, state: StreamState
                      ) -> web.StreamResponse:
        ex = self.ex
        assert sr is not None
        out, final = terminal_bytes(sr, state, rounds=len(ex.rounds), usage=ex.usage)
        self.final = final
        ok = await self.client.commit()
        ex.client_choices = [reply_turn(list(state.output))]
        if not ex.complete or final is None:
            # The upstream broke off: the client must not see a clean end of stream.
            ex.complete = False
            if ok and ex.response is not None:
                if sr.holding:
                    await self.client.write(out)
                _abort_client(ex.response, ex.request)
            return ex.response  # type: ignore[return-value]
        ex.finish_reasons = [final.get("status")]
        if final.get("status") == "failed":
            ex.answered = False  # a clean end for the client; not an answer to store
        if not ok:
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        if self.before_end is not None:
            await self.before_end()
        if not await self.client.write(out):
            ex.client_gone = True
            return ex.response  # type: ignore[return-value]
        try:
            await ex.response.write_eof()  # type: ignore[union-attr]
        except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
            pass
        return ex.response  # type: ignore[return-value]
