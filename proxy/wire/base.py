"""The wire-adapter interface: what the memory steps and the tool loop ask of an API.

An adapter knows one wire format (OpenAI Chat Completions, the Responses API,
Anthropic Messages): where a request keeps its messages and tools, how an
answer carries its choices, tool calls, finish reason and usage, how a stream's
chunks look, and how an error is shaped. The tool loop (:mod:`proxy.flow.toolloop`)
and the exchange (:mod:`proxy.flow.exchange`) speak only through it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import orjson

from proxy.sse import args_text

if TYPE_CHECKING:
    from proxy.wire.streamsession import StreamSession


class StreamRound(ABC):
    """One streamed upstream round, sans-io (see :mod:`proxy.wire.chatstream`)."""

    tail: list[tuple[str, bytes]]
    holding: bool
    shown: bool

    def answer_fields(self) -> dict[str, Any]:
        """The round's top-level answer fields beside its message (for
        :meth:`WireAdapter.carried`); none here."""
        return {}

    @abstractmethod
    def feed(self, data: bytes) -> bytes:
        """Upstream bytes in; the bytes for the client now out."""

    @abstractmethod
    def close(self) -> bytes:
        """The upstream body ended; the bytes still due to the client."""

    @abstractmethod
    def pending(self) -> bytes:
        """Bytes of an unfinished event."""

    @abstractmethod
    def messages(self) -> list[dict[str, Any]]:
        """The round's assistant messages (one per choice), as sent upstream."""

    @abstractmethod
    def finish_reasons(self) -> list[Any]:
        """The round's finish reason per choice, as the upstream sent them."""

    @abstractmethod
    def usage(self) -> dict[str, Any] | None:
        """The round's usage, if the upstream sent one."""

    @abstractmethod
    def answered(self) -> bool:
        """True when the stream ended properly (end marker or a finish reason)."""

    @abstractmethod
    def identity(self) -> tuple[Any, Any]:
        """The round's chunk ``(id, created)``."""

    def holds(self) -> bool:
        """True while the round keeps back events it may still show (the client is
        kept alive with heartbeats meanwhile)."""
        return False

    def release(self) -> bytes:
        """Show what the round keeps back (its reasoning, before anything else of the
        round was shown), once: the bytes for the client. Called when the answer ends
        with this round; a hidden round's is never released."""
        return b""

    def hidden_head(self) -> bytes:
        """What a client whose stream has started must still get of this round once it
        is hidden: the opening it would have had from a shown round (a Chat
        Completions role kept back with the round's reasoning), else nothing."""
        return b""


class WireAdapter(ABC):
    """Everything one API's wire format decides (one instance serves all requests)."""

    name: str
    raw_items_key: str | None = None
    """The body's array of items to forward as the client's bytes when unchanged
    (:mod:`proxy.rawjson`); ``None``: bodies are serialised from their values."""
    conversation_key = "messages"
    """The body's field that :meth:`with_messages` replaces."""
    finish_stop = "stop"
    """The finish reason of an answer that ends without tool calls."""
    finish_tools = "tool_calls"
    """The finish reason of an answer that ends with the client's tool calls."""
    finish_cut: frozenset[str] = frozenset({"length"})
    """Finish reasons of a round the model did not finish (it reached its output
    limit): a memory call in it may be cut off, so it is not run, and the answer
    ends there, with that finish reason."""

    # -- requests ----------------------------------------------------------------------
    @abstractmethod
    def messages(self, body: dict[str, Any]) -> list[Any]:
        """The conversation of a request body."""

    def last_message(self, body: dict[str, Any]) -> Any:
        """The last of :meth:`messages` (``None`` when there is none); a wire whose
        :meth:`messages` converts every item reads only what the last one needs (on
        the event loop: :func:`proxy.flow.plan.newest_user_text`)."""
        messages = self.messages(body)
        return messages[-1] if messages else None

    @abstractmethod
    def with_messages(self, body: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
        """A copy of ``body`` with ``messages`` instead."""

    @abstractmethod
    def tools_wanted(self, body: dict[str, Any]) -> bool:
        """False when the request rules out the memory tools."""

    @abstractmethod
    def add_tools(self, body: dict[str, Any], *, strict: str = "auto", short: bool = False
                  ) -> tuple[dict[str, Any], dict[str, str]]:
        """``(body with the memory tools, offered name → canonical name)``; ``short``:
        only the short set (:data:`memory_core.tools.memory_tools.SHORT_DEFINITIONS`)."""

    @abstractmethod
    def is_stream(self, body: dict[str, Any]) -> bool:
        """True when the request asks for a streamed answer."""

    def outside_tokens(self, body: dict[str, Any]) -> int:
        """Tokens the upstream reads from ``body`` outside :meth:`messages` and
        ``tools`` (a round's budget counts them too). Chat Completions: none."""
        return 0

    def understood(self, body: Any) -> bool:
        """True for a body whose conversation the memory steps can read (Chat
        Completions: an object with a ``messages`` array)."""
        return isinstance(body, dict) and isinstance(body.get("messages"), list)

    # -- answers ------------------------------------------------------------------------
    @abstractmethod
    def answer_message(self, obj: Any) -> dict[str, Any] | None:
        """The assistant message of a whole (non-streamed) answer, or ``None``."""

    @abstractmethod
    def set_answer(self, obj: dict[str, Any], message: dict[str, Any],
                   finish_reason: Any, usage: dict[str, Any] | None) -> None:
        """Put ``message``, ``finish_reason`` and ``usage`` into a whole answer."""

    @abstractmethod
    def client_choices(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """Every choice's message, in order, of a whole answer."""

    @abstractmethod
    def finish_reasons(self, obj: dict[str, Any]) -> list[Any]:
        """Every choice's finish reason, in order, of a whole answer."""

    @abstractmethod
    def usage(self, obj: dict[str, Any]) -> Any:
        """The usage of a whole answer."""

    @abstractmethod
    def tool_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The tool calls of an assistant message."""

    @abstractmethod
    def call_name(self, call: dict[str, Any]) -> str:
        """The function name of one tool call."""

    @abstractmethod
    def without_calls(self, message: dict[str, Any], keep: list[dict[str, Any]]
                      ) -> dict[str, Any]:
        """``message`` with only the tool calls ``keep``."""

    @abstractmethod
    def tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        """The message that answers tool call ``call`` with ``text``."""

    def carried(self, body: dict[str, Any], answer: Any) -> dict[str, Any]:
        """``body`` for the round after a hidden one, given the hidden round's top-level
        ``answer`` fields (a whole answer object, or :meth:`StreamRound.answer_fields`):
        what the upstream named in it that the next request must name again. Chat
        Completions and Responses: unchanged."""
        return body

    def server_work(self, message: dict[str, Any]) -> list[Any]:
        """The parts of a hidden round's assistant ``message`` that record work the
        upstream ran itself (a server tool's call and its result, a remote MCP call, a
        generated image), in order. A stream shows them as they come; a whole answer
        leads with them (:meth:`lead_with`). Chat Completions has none."""
        return []

    def lead_with(self, obj: dict[str, Any], parts: list[Any]) -> None:
        """Put ``parts`` (:meth:`server_work` of the hidden rounds) before the content
        of the whole answer ``obj``. Chat Completions has none to put."""

    def replayable(self, body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        """A round's assistant ``message`` as it can go upstream again with ``body``
        (the Responses API leaves out what the upstream cannot read back). Chat
        Completions: a ``content`` that is empty or whitespace beside tool calls goes
        as ``null`` (what OpenAI answers; bridges to Anthropic make a refused empty
        text block of a string), and a call's ``arguments: ""`` (a no-argument call,
        as OpenAI-compatible servers stream it) as ``"{}"``, what it was run with;
        the rest unchanged."""
        calls = message.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            return message
        out = dict(message)
        content = message.get("content")
        if isinstance(content, str) and not content.strip():
            out["content"] = None
        out["tool_calls"] = [
            dict(c, function=dict(c["function"], arguments="{}"))
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
            and c["function"].get("arguments") == "" else c for c in calls]
        return out

    def result_turns(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The conversation entries that answer one round's memory calls, from their
        results (:meth:`tool_result`; Chat Completions: the tool messages themselves)."""
        return list(results)

    def client_answer(self, body: bytes, names: dict[str, str], previous: str | None
                      ) -> bytes:
        """A whole 2xx answer's body as the client is shown it (``names``: the memory
        tools offered; ``previous``: the client's ``previous_response_id`` of a
        stateless replay). Chat Completions: unchanged."""
        return body

    def name_calls(self, calls: list[dict[str, Any]], seed: str) -> None:
        """Give each of a round's memory ``calls`` that came without an id one, in
        place, so that the call and its result pair up when they go upstream again
        (``seed``: unique to the round). Chat Completions: some servers omit a
        streamed call's ``id``, and a ``tool_call_id`` of null is answered with a
        400. The Responses and Messages APIs always send one: unchanged."""
        del calls, seed

    def call_arguments(self, call: dict[str, Any]) -> Any:
        """The arguments (a JSON string, as sent) of one tool call (Chat Completions
        shape: ``function.arguments``); arguments an upstream wrote as a JSON object
        instead of its text (llama.cpp's server in one release) as that object's text."""
        fn = call.get("function")
        args = fn.get("arguments") if isinstance(fn, dict) else None
        return args_text(args) if isinstance(args, dict) else args

    def inject_block(self, messages: list[Any], block: str, index: int | None = None
                     ) -> list[Any]:
        """A copy of ``messages`` whose message ``index`` (default: the last) carries
        the memory ``block`` (Chat Completions: :func:`proxy.rewrite.inject_block`)."""
        from proxy import rewrite  # noqa: PLC0415 - rewrite is no dependency of the interface

        return rewrite.inject_block(messages, block, index)

    # -- streams ------------------------------------------------------------------------
    @abstractmethod
    def stream_round(self, names: dict[str, str], client_offset: int = 0, *,
                     later: bool = False, stream_id: Any = None,
                     created: Any = None, hold_text: bool = False) -> StreamRound:
        """A fresh sans-io state machine for one streamed round (``hold_text``: hold
        the round's text until it is known to be shown, as its reasoning)."""

    @abstractmethod
    def stream_session(self, names: dict[str, str], body: dict[str, Any], *,
                       previous: str | None = None) -> StreamSession:
        """A fresh :class:`~proxy.wire.streamsession.StreamSession` for one streamed
        answer to ``body`` (``previous`` as for :meth:`client_answer`)."""

    @abstractmethod
    def restate(self, kind: str, raw: bytes, *, finish_reason: Any, usage: Any,
                stream_id: Any, created: Any) -> bytes:
        """A held tail block (``finish`` / ``usage``) of a later round, restated."""

    @abstractmethod
    def stream_error(self, message: str) -> bytes:
        """An in-band error event, for an error after the client's status was sent."""

    def upstream_error(self, raw: bytes) -> dict[str, Any] | None:
        """The error object of an upstream's error body ``raw`` when it has this
        API's error shape (``{"error": {...}}``), else ``None``."""
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return obj if isinstance(obj, dict) and isinstance(obj.get("error"), dict) else None

    def stream_upstream_error(self, raw: bytes) -> bytes | None:
        """The in-band event that carries the upstream's own error body ``raw`` (its
        type kept: clients decide on retries by it), or ``None`` when ``raw`` is not
        this API's error shape."""
        return None

    @abstractmethod
    def heartbeat(self) -> bytes:
        """Bytes that keep a stream alive and that every client ignores."""
