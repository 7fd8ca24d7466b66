"""One streamed answer across its upstream rounds, sans-io: what each API decides.

The tool loop (:mod:`proxy.flow.toolloop`) drives any API's stream the same way:
open a round, relay it through a fresh :class:`~proxy.wire.base.StreamRound`,
run the memory calls, go again. What differs by API lives here, one
:class:`StreamSession` per streamed answer (made by
:meth:`~proxy.wire.base.WireAdapter.stream_session`): the state the rounds share
(chunk id, client block indexes, the items the client was shown), the round's
assistant message, what a client that left was shown, the in-band error event,
and the answer's last bytes (finish, usage, end marker: the exact upstream bytes
after one unaltered round, restated after several).

:class:`StreamSession` itself is Chat Completions'; :class:`MessagesSession` and
:class:`ResponsesSession` override what their APIs decide otherwise. Nothing
here touches a socket.
"""

from __future__ import annotations

from typing import Any

import orjson

from proxy.sse import content_text
from proxy.wire.base import StreamRound, WireAdapter
from proxy.wire.chat import sum_usage
from proxy.wire.chatstream import ChatStreamRound
from proxy.wire.messagesstream import MessagesStreamRound
from proxy.wire.responses import error_event, reply_turn
from proxy.wire.responsesstream import (
    ResponsesStreamRound,
    StreamState,
    failed_bytes,
    terminal_bytes,
)

STRUCTURED_FORMATS = ("json_schema", "json_object")
"""Format types whose answer is a JSON document the client parses (Chat's
``response_format``, Responses' ``text.format``, Messages' ``output_config.format``)."""


def _structured(fmt: Any) -> bool:
    """True for a format object (``{"type": ...}``) that asks for a JSON answer."""
    return isinstance(fmt, dict) and fmt.get("type") in STRUCTURED_FORMATS


class StreamSession:
    """Chat Completions: one chunk ``id``/``created`` across rounds (the first shown
    round's), content joined over the rounds, the finish chunk, usage chunk and
    ``[DONE]`` held and written once, at the very end."""

    abort_after_error = False
    """After an in-band error event (a later round failed), close the client's
    connection instead of ending its stream."""
    final: dict[str, Any] | None = None
    """The response object the stream ended with, where the API has one."""
    error_ends_stream = False
    """The in-band error bytes (:meth:`error_bytes`) end with the API's terminal event:
    a stream that broke off in a later round is then closed cleanly after them, not
    cut."""

    def __init__(self, wire: WireAdapter, names: dict[str, str], body: dict[str, Any]
                 ) -> None:
        self.wire, self.names = wire, names
        options = body.get("stream_options")
        self.include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        self.hold_text = self.structured(body)
        """A structured answer: each round's text is held until the round is known to
        be shown (:mod:`proxy.wire.chatstream`, :mod:`~proxy.wire.responsesstream`,
        :mod:`~proxy.wire.messagesstream`)."""
        self._contents: list[tuple[StreamRound, str]] = []
        self.stream_id: tuple[Any, Any] | None = None
        self.finish: Any = None

    @staticmethod
    def structured(body: dict[str, Any]) -> bool:
        """True when the request asks for a JSON answer (``response_format``)."""
        return _structured(body.get("response_format"))

    # -- rounds --------------------------------------------------------------------
    def next_round(self, rounds: int) -> StreamRound:
        """The state machine of the next round (``rounds``: the rounds so far, this one
        included)."""
        sid = self.stream_id
        before = None
        for sr, _ in self._contents:
            before = sum_usage(before, sr.usage())
        sr = self.wire.stream_round(self.names, 0, later=sid is not None,
                                    stream_id=sid and sid[0], created=sid and sid[1],
                                    hold_text=self.hold_text)
        if isinstance(sr, ChatStreamRound):
            sr.usage_before = before  # its chunks' usage counts the earlier rounds too
        return sr

    def after_round(self, sr: StreamRound, committed: bool) -> None:
        """Note what round ``sr`` showed (``committed``: the client's status is sent)."""
        if committed and self.stream_id is None and sr.identity()[0] is not None:
            self.stream_id = sr.identity()
        self._contents.append((sr, content_text(self.message(sr).get("content"))))

    @property
    def parts(self) -> list[str]:
        """The content the client was shown, per round so far (a round whose held
        text was never released, a hidden one, shows none)."""
        return [text for sr, text in self._contents if sr.shown or not sr.holds()]

    def message(self, sr: StreamRound) -> dict[str, Any]:
        """The round's assistant message (choice 0), as it goes upstream again."""
        msgs = sr.messages()
        return msgs[0] if msgs else {"role": "assistant", "content": None}

    def round_error(self, sr: StreamRound) -> str | None:
        """An error the round's own events reported (it ends the answer)."""
        return None

    def stops(self, sr: StreamRound) -> bool:
        """True when the round ends the answer whatever it called."""
        return False

    def gone_choices(self, sr: StreamRound) -> list[dict[str, Any]] | None:
        """What a client that left during round ``sr`` was shown (``None``: nothing
        to say)."""
        msgs = sr.messages()
        if not msgs:
            return None
        return [dict(msgs[0], content="".join(self.parts))]

    def error_bytes(self, message: str) -> bytes:
        """The in-band error event for a later round that failed."""
        return self.wire.stream_error(message)

    def upstream_error_bytes(self, raw: bytes, message: str) -> bytes:
        """The in-band error event for a later round the upstream answered with the
        error body ``raw``: that error as the API streams one, its type kept (an
        ``overloaded_error`` stays one), else :meth:`error_bytes` of ``message``."""
        own = self.wire.stream_upstream_error(raw)
        return own if own is not None else self.error_bytes(message)

    # -- the end ---------------------------------------------------------------------
    def tail(self, sr: StreamRound, *, rounds: int, usage: Any, cut: bool) -> bytes:
        """The last round's held bytes, in order (``cut``: the model's memory calls were
        cut at the round limit, so the answer ends as a plain stop)."""
        upstream_finish = (sr.finish_reasons() or [None])[0]
        self.finish = self.wire.finish_stop if cut else upstream_finish
        later = rounds > 1
        sid, created = self.stream_id if self.stream_id is not None else sr.identity()
        out = sr.release()  # the answer ends with this round: its reasoning is shown
        for kind, raw in sr.tail:
            if (later or self.finish != upstream_finish) and kind in ("finish", "usage"):
                raw = self.wire.restate(kind, raw, finish_reason=self.finish, usage=usage,
                                        stream_id=sid, created=created)
            if kind != "usage" or self.include_usage or not later:
                out += raw
        return out

    def ended(self) -> bool:
        """True when the tail ends the stream properly."""
        return True

    def flush_on_break(self, sr: StreamRound, out: bytes) -> bytes:
        """What of the tail still goes to the client before a broken stream is cut."""
        return b""

    def broken_choices(self) -> list[dict[str, Any]]:
        """What the client of a stream that broke off was shown."""
        return [{"role": "assistant", "content": "".join(self.parts) or None}]

    def final_choices(self, last: dict[str, Any] | None, client_calls: list[Any]
                      ) -> tuple[list[dict[str, Any]], list[Any]]:
        """``(client choices, finish reasons)`` of a stream that ended properly."""
        final: dict[str, Any] = {"role": "assistant",
                                 "content": "".join(self.parts) if any(self.parts) else None}
        msg = last or {}
        for key in ("reasoning_content", "reasoning", "reasoning_details"):
            if key in msg:
                final[key] = msg[key]
        if client_calls:
            final["tool_calls"] = list(client_calls)
        return [final], [self.finish]

    def failed(self) -> bool:
        """True when the stream ended properly but says the answer failed."""
        return False

    def storable(self, sr: StreamRound) -> bool:
        """True when the answer is stored before the client's last bytes."""
        return True


class MessagesSession(StreamSession):
    """Anthropic Messages: one ``message_start``, block indexes running on across
    rounds, ``message_delta`` restated with the answer's stop reason and usage; an
    ``error`` event ends the answer. A round's held thinking
    (:mod:`proxy.wire.messagesstream`) is shown when the answer ends with that
    round, and never when the round was hidden; so is its text for a structured
    answer."""

    abort_after_error = True

    def __init__(self, wire: WireAdapter, names: dict[str, str], body: dict[str, Any]
                 ) -> None:
        super().__init__(wire, names, body)
        self.rounds: list[MessagesStreamRound] = []
        """Every round so far (what each showed the client is read at the end: the
        last round's held thinking is shown only then)."""
        self.started = False
        """The client has its ``message_start``."""
        self.offset = 0

    @property
    def shown(self) -> list[dict[str, Any]]:
        """The client's blocks, all rounds, in its order."""
        return [b for sr in self.rounds for b in sr.content(client_only=True)]

    @staticmethod
    def structured(body: dict[str, Any]) -> bool:
        """``output_config.format``, or the structured outputs beta's body field
        ``output_format``, of type ``json_schema``."""
        config = body.get("output_config")
        return _structured(config.get("format") if isinstance(config, dict) else None) \
            or _structured(body.get("output_format"))

    def next_round(self, rounds: int) -> StreamRound:
        return MessagesStreamRound(self.names, self.offset, later=self.started,
                                   hold_text=self.hold_text)

    def after_round(self, sr: StreamRound, committed: bool) -> None:
        assert isinstance(sr, MessagesStreamRound)
        self.started = self.started or (committed and sr.message is not None)
        self.rounds.append(sr)
        self.offset = sr.next_index

    def message(self, sr: StreamRound) -> dict[str, Any]:
        return sr.messages()[0]

    def round_error(self, sr: StreamRound) -> str | None:
        error = sr.error if isinstance(sr, MessagesStreamRound) else None
        return orjson.dumps(error).decode()[:2000] if error is not None else None

    def gone_choices(self, sr: StreamRound) -> list[dict[str, Any]] | None:
        return self.broken_choices()

    def broken_choices(self) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": self.shown}]

    def final_choices(self, last: dict[str, Any] | None, client_calls: list[Any]
                      ) -> tuple[list[dict[str, Any]], list[Any]]:
        return self.broken_choices(), [self.finish]

    def storable(self, sr: StreamRound) -> bool:
        return not isinstance(sr, MessagesStreamRound) or sr.error is None


class ResponsesSession(StreamSession):
    """The Responses API: one ``response.created``, items and sequence numbers
    renumbered across rounds, one terminal event restated with the id the client
    saw, the items it was shown and the summed usage. A later round that failed
    ends the stream with the ``error`` event and ``response.failed``."""

    error_ends_stream = True

    def __init__(self, wire: WireAdapter, names: dict[str, str], body: dict[str, Any],
                 previous: str | None = None) -> None:
        super().__init__(wire, names, body)
        self.state = StreamState()
        self.state.previous = previous
        self.errored = False
        self.model = body.get("model")
        self.usage: dict[str, Any] | None = None
        """The usage of the rounds so far, summed (what a failed response reports)."""

    def _turn(self) -> dict[str, Any]:
        return reply_turn(list(self.state.output))

    @staticmethod
    def structured(body: dict[str, Any]) -> bool:
        """``text.format`` of type ``json_schema`` or ``json_object``."""
        text = body.get("text")
        return _structured(text.get("format") if isinstance(text, dict) else None)

    def next_round(self, rounds: int) -> StreamRound:
        return ResponsesStreamRound(self.names, self.state, first=rounds == 1,
                                    hold_text=self.hold_text)

    def after_round(self, sr: StreamRound, committed: bool) -> None:
        self.usage = sum_usage(self.usage, sr.usage())

    def message(self, sr: StreamRound) -> dict[str, Any]:
        msgs = sr.messages()
        return msgs[0] if msgs else reply_turn([])

    def stops(self, sr: StreamRound) -> bool:
        return not sr.answered()

    def round_error(self, sr: StreamRound) -> str | None:
        error = sr.error if isinstance(sr, ResponsesStreamRound) else None
        return orjson.dumps(error).decode()[:2000] if error is not None else None

    def gone_choices(self, sr: StreamRound) -> list[dict[str, Any]] | None:
        return [self._turn()] if self.state.output else []

    def error_bytes(self, message: str) -> bytes:
        # The ``error`` event, then ``response.failed``: the terminal event that
        # clients (Codex, the agents SDK) wait for (failed_bytes).
        err = error_event(message)
        return failed_bytes(self.state, err["code"], message, usage=self.usage,
                            model=self.model)

    def upstream_error_bytes(self, raw: bytes, message: str) -> bytes:
        obj = self.wire.upstream_error(raw)
        if obj is None:
            return self.error_bytes(message)
        err = obj["error"]
        code = err.get("code") if err.get("code") is not None else err.get("type")
        text = err.get("message")
        return failed_bytes(self.state, code, text if isinstance(text, str) else message,
                            err.get("param"), usage=self.usage, model=self.model)

    def tail(self, sr: StreamRound, *, rounds: int, usage: Any, cut: bool) -> bytes:
        assert isinstance(sr, ResponsesStreamRound)
        out, self.final = terminal_bytes(sr, self.state, rounds=rounds, usage=usage)
        self.errored = sr.error is not None
        return out

    def ended(self) -> bool:
        # An error event ends a Responses stream as a terminal event does.
        return self.final is not None or self.errored

    def flush_on_break(self, sr: StreamRound, out: bytes) -> bytes:
        # A later round's tail without its terminal is the held head (a client that
        # only had heartbeats gets its response.created before the error) and held
        # reasoning: whole events, which the error event then numbers on from.
        assert isinstance(sr, ResponsesStreamRound)
        return out if sr.holding or not sr.first else b""

    def broken_choices(self) -> list[dict[str, Any]]:
        return [self._turn()]

    def final_choices(self, last: dict[str, Any] | None, client_calls: list[Any]
                      ) -> tuple[list[dict[str, Any]], list[Any]]:
        return [self._turn()], [(self.final or {}).get("status")]

    def failed(self) -> bool:
        return (self.final or {}).get("status") == "failed"
