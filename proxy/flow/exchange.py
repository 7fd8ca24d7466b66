"""One chat request from parse to its last capture: the :class:`Exchange`.

The handler creates it, the steps fill it in, in order: the parsed body and its
scope and capture ticket (parse, scope, capture), the memory path's
:class:`~proxy.flow.plan.Prepared` upstream body, one :class:`Round` per upstream
call, the client's state (``response`` once its status line is committed,
``client_gone``), and the evidence recorded at the end (the client's choices, the
hidden memory-tool rounds, the model's own view, usage, finish reasons, and
whether the answer is complete). Wire-specific reading and writing goes through
``wire`` (:class:`proxy.wire.base.WireAdapter`). Every upstream call of the
exchange goes out through :meth:`Exchange.send`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from memory_core.models import CaptureTicket, Scope
from proxy import upstream
from proxy.flow.plan import Prepared
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT


@dataclass
class Round:
    """One upstream call: its status and headers, the assistant message it produced
    (choice 0), its tool calls split into ``ours`` (answered by the proxy) and the
    client's, its usage and finish reasons, and whether the client saw it."""

    status: int
    headers: Any = None
    message: dict[str, Any] | None = None
    ours: list[dict[str, Any]] = field(default_factory=list)
    client_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Any = None
    finish_reasons: list[Any] = field(default_factory=list)
    hidden: bool = False
    cut: bool = False
    """The model reached its output limit in this round (``WireAdapter.finish_cut``):
    its memory calls were not run."""
    response_id: Any = None
    """The id the upstream gave this round's answer (a Responses response id)."""


@dataclass
class Exchange:
    """One chat request (see module docstring)."""

    request: web.Request
    rid: str
    raw: bytes
    body: Any
    wire: WireAdapter = CHAT
    scope: Scope | None = None
    ticket: CaptureTicket | None = None
    capture_future: Any = None
    prepared: Prepared = field(default_factory=Prepared)
    extra: dict[str, str] = field(default_factory=dict)
    """``x-lcm-*`` headers the client gets."""
    tools: bool = False
    """The memory tools are offered (the tool loop answers this request)."""
    tool_names: dict[str, str] = field(default_factory=dict)
    """The memory tools offered, as named upstream → their own names."""
    rounds: list[Round] = field(default_factory=list)
    # -- the client --------------------------------------------------------------------
    response: web.StreamResponse | None = None
    """The client's response once its status line is committed."""
    client_gone: bool = False
    # -- evidence ------------------------------------------------------------------------
    status: int = 200
    client_choices: list[dict[str, Any]] = field(default_factory=list)
    hidden: list[dict[str, Any]] = field(default_factory=list)
    upstream_view: list[dict[str, Any]] | None = None
    usage: dict[str, Any] | None = None
    finish_reasons: list[Any] = field(default_factory=list)
    complete: bool = True
    """False when the upstream broke off."""
    answered: bool = True
    """False when a stream ended without its end marker or a finish reason."""
    error: str | None = None
    captured: bool = False
    """The answer's capture was started (it is never started twice)."""
    conversation: list[Any] | None = None
    """A Responses request that continues a stored response: the items of its whole
    thread, the client's new ones last (``None`` otherwise)."""
    continues: str | None = None
    """The response id whose stored thread :attr:`conversation` follows."""
    conversation_id: str | None = None
    """A Responses request's ``conversation`` id, when it is captured."""
    plan_body: dict[str, Any] | None = None
    """The body the memory path plans from when it is not the client's (that whole
    thread as a stateless request), and its bytes (``plan_raw``)."""
    plan_raw: bytes | None = None

    @property
    def streamed(self) -> bool:
        """The client asked for a stream."""
        return isinstance(self.body, dict) and self.wire.is_stream(self.body)

    async def send(self, session: aiohttp.ClientSession, url: Any, headers: Any,
                   data: bytes) -> aiohttp.ClientResponse:
        """POST ``data`` upstream (:func:`proxy.upstream.send`: the response once its
        headers arrived; raises its ``UpstreamError``), then run what waited for the
        send (:meth:`~proxy.flow.plan.Prepared.sent`: the block's explain log), also
        when the send fails or is cancelled. Every upstream call of the exchange goes
        through here: the plain forward, its context-length retry, and each tool-loop
        round, streamed or not; only the first runs the hook."""
        try:
            return await upstream.send(session, "POST", url, headers, data)
        finally:
            self.prepared.sent()

    @property
    def memory(self) -> bool:
        """The request is captured (it has a scope and a capture ticket)."""
        return self.ticket is not None and self.scope is not None

    def is_whole_answer(self) -> bool:
        """True when the client received a whole, successful answer: the only kind
        stored as a reply (anything else is kept as an event)."""
        return (self.status < 400 and self.complete and not self.client_gone
                and self.answered)

    def evidence(self) -> dict[str, Any]:
        """The response event recorded for the tool loop's answer."""
        event: dict[str, Any] = {"status": self.status, "stream": self.streamed,
                                 "usage": self.usage, "rounds": len(self.rounds),
                                 "finish_reasons": self.finish_reasons}
        if not self.is_whole_answer():
            event.update(outcome="incomplete" if self.status < 400 else "upstream_error",
                         client_gone=self.client_gone, upstream_error=self.error,
                         partial_choices=self.client_choices, hidden_messages=self.hidden)
            return event
        event["outcome"] = "complete"
        if self.hidden:
            event["hidden_messages"] = len(self.hidden)
        return event
