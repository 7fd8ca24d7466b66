"""``POST /v1/responses``: the OpenAI Responses API with memory (DESIGN §2).

The same steps as :mod:`proxy.handlers.chat`, through the Responses wire adapter
(:mod:`proxy.wire.responses`): parse, scope, capture the input items as evidence
(``instructions`` as the system turn, every item kept whole in ``raw_json``), the
memory path (block as an ``input_text`` part on the newest user message,
compaction), forward, capture the response's ``output``. The memory tools go
through the tool loop (:mod:`proxy.flow.toolloop`).

Fail open: any exception in the memory path forwards the client's original
bytes; upstream answers, errors included, reach the client with their status,
headers and body.

Stored responses (``previous_response_id``): the client sends only its new items.
The proxy keeps, per tenant and role, a map from each response id it relayed to the
conversation that response ends (its input items, the client's own, and its
``output``; :class:`proxy.flow.responsethreads.ResponseThreads`), in the store
(``response_threads``, read through a bounded cache; a miss reads on a memory-path
thread, never on the event loop), so a restarted proxy or
another one on the same data dir continues it too. A request that continues a
known response is captured and planned as its whole thread (the evidence stays
complete and a replay stores nothing new).
When the memory path changes nothing, the client's bytes go as sent,
``previous_response_id`` included. When it injects a block or compacts, the request
becomes a *stateless replay*: ``previous_response_id`` is dropped and the whole
thread goes as ``input`` (items as first relayed: reasoning with its
``encrypted_content``, compaction and unknown items unchanged), the block on the
newest user message only; the client is still shown its own ``previous_response_id``
in the answer (the upstream's says null). This is what keeps the block from
accumulating upstream: a stored response's input holds one block, but the next turn
that gets a block is sent from the proxy's map, which holds the client's items
without any, so the model sees that one block only; a turn that gets none goes as
sent, and the upstream's context then holds the latest block only. Either way there
is never more than one, as on the chat path. A streamed answer with hidden
memory-tool rounds shows the client the response id of the first round it shows
anything from (never one that only called memory tools); the map holds it,
and the continuing request is replayed with the hidden rounds spliced back (the
reply has a splice, so the memory path always rewrites it). A
``previous_response_id`` the map does not know (relayed elsewhere, purged, in
another tenant, or kept out of the store by capture policy and relayed before a
restart: :mod:`memory_core.capture.response_threads`) is forwarded untouched, without memory
(``x-lcm-memory-reason: unknown-previous-response``). One the map knows under
another end user of the same API key (or under the key without one, or the
reverse) is captured on that response's thread, in its scope, and forwarded as
sent, without block or memory tools (``x-lcm-memory-reason: other-end-user``):
the conversation stays whole and no one's memory reaches a request that did not
name them (docs/scopes.md). A request in a
``conversation`` (the upstream keeps its items) is forwarded untouched too
(``x-lcm-memory-reason: conversation``: no block, no memory tools, no command), but
captured: as the items of the newest response the proxy relayed in that
conversation (durable, as for ``previous_response_id``), then its own, in the scope
that holds the conversation (another end user's of the key, too).
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from memory_core.capture.evidence import loads_lossless
from memory_core.capture.tree import message_text
from memory_core.models import Scope
from proxy import chatcommands, forwardlog, rewrite
from proxy import headers as hdrs
from proxy.appkeys import AENGINE, SETTINGS
from proxy.flow import record
from proxy.flow.client import send_whole
from proxy.flow.exchange import Exchange
from proxy.flow.forward import forward, forward_with_tools
from proxy.flow.recovery import recoverer
from proxy.flow.responsethreads import conversation_id, remember, shown_previous
from proxy.flow.steps import (
    begin_capture,
    offers_tools,
    open_exchange,
    run_memory_path,
    scope_of,
    skip_reason,
)
from proxy.relay import RelayResult
from proxy.sse import SSEDecoder
from proxy.upstream import is_azure_path, route_url
from proxy.wire.responses import RESPONSES, input_items, reply_turn
from proxy.wire.responsesstream import ShowPrevious, event_bytes

log = logging.getLogger("lcm.responses")

TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a Responses stream (there is no ``[DONE]``)."""


async def responses(request: web.Request) -> web.StreamResponse:
    """Handle one ``POST /v1/responses``, streaming or not (see module docstring)."""
    with request.app[AENGINE].in_flight():
        response = await _responses(request)
        await send_whole(request, response)  # the give-way covers the answer's bytes too
        return response


async def _responses(request: web.Request) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    ex = await open_exchange(request, RESPONSES)
    raw = ex.raw
    body = ex.body
    reason = None
    whole: dict[str, Any] | None = None
    if not RESPONSES.understood(body):
        record.record_unparsed(request, raw, "body is not an object with an input")
    elif body.get("conversation") is not None:
        # The upstream keeps the conversation: the request goes as sent, without
        # memory; it is captured (evidence) as the conversation relayed so far.
        reason = "conversation"
        conv = conversation_id(body["conversation"])
        if settings.capture.enabled and conv is not None:
            scope = _scope(ex)
            head, stored = None, None
            if scope is not None:
                # Captured in the scope that holds the conversation, also when that is
                # another end user's of the key (as for previous_response_id, below).
                ex.scope, head, stored = await request.app[AENGINE].stored_conversation(
                    scope, conv)

            def expand_conversation(scope: Scope) -> dict[str, Any] | None:
                if stored is None:
                    return None
                ex.conversation = [*stored, *input_items(body)]
                ex.continues, ex.conversation_id = head, conv
                return dict(body, input=ex.conversation)

            begin_capture(ex, expand_conversation)
    elif settings.capture.enabled and body.get("previous_response_id") is not None:
        prev = body["previous_response_id"]
        scope = _scope(ex) if isinstance(prev, str) else None
        found = await request.app[AENGINE].stored_response(
            scope, prev) if scope is not None else None
        stored = found[1] if found is not None else None
        if found is not None and scope is not None and found[0].tenant != scope.tenant:
            # Another end user's conversation (or the key's, continued by an end
            # user; docs/scopes.md): captured on its thread, in its scope, and
            # forwarded as sent, so no one's memory reaches a request not naming them.
            ex.scope, reason = found[0], "other-end-user"
        elif found is not None:
            ex.scope = found[0]  # its session, where the request names none

        def expand(scope: Scope) -> dict[str, Any] | None:
            nonlocal whole
            if stored is None:
                return None
            ex.conversation, ex.continues = [*stored, *input_items(body)], prev
            whole = {k: v for k, v in body.items() if k != "previous_response_id"}
            whole["input"] = ex.conversation
            return whole

        begin_capture(ex, expand)
        if whole is None:
            reason = "unknown-previous-response"
    elif settings.capture.enabled:
        begin_capture(ex)
    observed = reason in ("conversation", "other-end-user")  # captured, forwarded as sent
    if whole is not None and not observed:
        ex.plan_body, ex.plan_raw = whole, rewrite.dumps_body(whole)
    if ex.scope is not None and ex.ticket is not None and not observed:
        turns = RESPONSES.messages(whole if whole is not None else body)
        index = rewrite.newest_user_index(turns)
        newest = message_text(turns[index]) if index is not None else ""
        if index is not None and chatcommands.is_command(newest):
            return await answer_command(ex, newest)
    if ex.memory and ex.capture_future is not None and not observed:
        await run_memory_path(ex)
    ex.extra = {"x-lcm-request-id": ex.rid, "x-lcm-memory": ex.prepared.state,
                **ex.prepared.headers}
    if ex.prepared.state == "skipped":
        ex.extra["x-lcm-memory-reason"] = reason or skip_reason(ex)
    if whole is not None and ex.prepared.body is not None:
        # A replay also when nothing was injected (a thread with hidden rounds is
        # always spliced): the upstream's answer then says null, the client its own.
        ex.extra["x-lcm-responses-mode"] = "stateless-replay"
    ex.tools = offers_tools(ex) and not observed
    forwardlog.record(request, ex.scope, ex.rid, ex.prepared, raw, body, tools=ex.tools,
                      wire=RESPONSES)
    if ex.tools:
        return await _with_memory_tools(ex)
    return await _forward(ex)


def _scope(ex: Exchange) -> Scope | None:
    """The request's scope, set on ``ex`` for its capture; ``None`` when it cannot be
    resolved (the capture then fails open, as for any request)."""
    try:
        ex.scope = scope_of(ex)
    except Exception:  # noqa: BLE001 - begin_capture resolves it again and fails open
        return None
    return ex.scope


async def answer_command(ex: Exchange, text: str) -> web.StreamResponse:
    """Answer a ``/memory`` command locally as a Responses answer (a response object,
    or its events when streamed); never sent upstream. The reply is stored like a
    chat command's (no extraction from it) and its id mapped, so the client may
    continue from it by ``previous_response_id`` (that request is then replayed:
    the memory path leaves earlier commands out, which rewrites it)."""
    request, aengine = ex.request, ex.request.app[AENGINE]
    assert ex.scope is not None and ex.ticket is not None
    body: dict[str, Any] = ex.body
    reply = await aengine.run_command(ex.scope, text)
    tag = uuid.uuid4().hex[:24]
    item: dict[str, Any] = {"type": "message", "id": f"msg_lcm_{tag}", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply, "annotations": []}]}
    model = body.get("model") if isinstance(body.get("model"), str) else "lcm-proxy"
    resp: dict[str, Any] = {
        "id": f"resp_lcm_{tag}", "object": "response", "created_at": int(time.time()),
        "status": "completed", "error": None, "incomplete_details": None,
        "instructions": body.get("instructions"), "model": model, "output": [item],
        "parallel_tool_calls": True, "previous_response_id": body.get("previous_response_id"),
        "tool_choice": "auto", "tools": [], "metadata": {},
        "usage": {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 0}}
    aengine.queue_command_reply(ex.ticket, [reply_turn([item])], {
        "status": 200, "outcome": "complete", "command": True, "model": model,
        "id": resp["id"], "api": "responses"})
    remember(ex, resp)
    headers = {"x-lcm-request-id": ex.rid, "x-lcm-memory": "command"}
    if body.get("stream") is not True:
        return web.Response(body=orjson.dumps(resp), content_type="application/json",
                            headers=headers)
    out = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream",
                                      "Cache-Control": "no-cache"})
    await out.prepare(request)
    start = dict(resp, status="in_progress", output=[], usage=None)
    part = item["content"][0]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
        {"type": "response.output_item.added", "output_index": 0,
         "item": dict(item, status="in_progress", content=[])},
        {"type": "response.content_part.added", "item_id": item["id"], "output_index": 0,
         "content_index": 0, "part": dict(part, text="")},
        {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
         "content_index": 0, "delta": reply},
        {"type": "response.output_text.done", "item_id": item["id"], "output_index": 0,
         "content_index": 0, "text": reply},
        {"type": "response.content_part.done", "item_id": item["id"], "output_index": 0,
         "content_index": 0, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": resp},
    ]
    for seq, event in enumerate(events):
        await out.write(event_bytes(dict(event, sequence_number=seq)))
    await out.write_eof()
    return out


def _upstream(ex: Exchange) -> tuple[Any, Any]:
    settings = ex.request.app[SETTINGS]
    url = route_url(settings.proxy.upstream, ex.request.rel_url.raw_path, "/responses",
                    ex.request.rel_url.raw_query_string)
    out_headers = hdrs.to_upstream(ex.request.headers,
                                   api_key=settings.proxy.upstream_api_key, body_decoded=True,
                                   azure=is_azure_path(ex.request.rel_url.raw_path))
    return url, out_headers


async def _forward(ex: Exchange) -> web.StreamResponse:
    """Forward without memory tools (:func:`proxy.flow.forward.forward`); the client of
    a stateless replay is shown its own ``previous_response_id``."""
    url, out_headers = _upstream(ex)
    shown = shown_previous(ex)

    def rewriter(streamed: bool, status: int) -> ShowPrevious | None:
        return ShowPrevious(shown, streamed=streamed) if shown is not None and status < 400 \
            else None

    return await forward(ex, url, out_headers, label="responses", recover=recoverer(ex),
                         capture=capture_relayed, rewriter=rewriter)


def final_response(streamed: bool, body: bytes) -> tuple[Any, str | None]:
    """The response object of a relayed body and the event that carried it: the
    object itself (``None`` as event), or a stream's terminal event's ``response``
    (``response.completed``/``incomplete``/``failed``; ``None`` when it never came)."""
    if not streamed:
        try:
            return loads_lossless(body), None
        except ValueError:
            return None, None
    decoder = SSEDecoder()
    found: tuple[Any, str | None] = (None, None)
    for event in decoder.feed(body) + decoder.close():
        try:
            obj = loads_lossless(event.data)
        except ValueError:
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind in TERMINAL_EVENTS and isinstance(obj.get("response"), dict):
            found = (obj["response"], kind)
    return found


def capture_relayed(ex: Exchange, status: int, streamed: bool,
                    result: RelayResult) -> record.Stored:
    """Queue a relayed answer (:func:`proxy.flow.record.store_relayed`; as the
    client's body ends, or after) and map its response id (:func:`remember`).

    The reply (one ``assistant`` turn of the response's ``output``) is stored as a
    message only when the client received all of it: a 2xx status, a response
    object with status ``completed`` or ``incomplete`` (a stream's terminal event),
    the client there to the end. Anything else is kept in an event.
    """

    def read(streamed: bool, body: bytes, event: dict[str, Any]) -> tuple[list[Any], bool]:
        obj, terminal = final_response(streamed, body)
        remember(ex, obj)
        if not isinstance(obj, dict) or not isinstance(obj.get("output"), list):
            event["unparsed_body"] = record.unparsed(body)
            return [], False
        event.update(id=obj.get("id"), model=obj.get("model"), usage=obj.get("usage"),
                     finish_reasons=[obj.get("status")])
        if terminal is not None:
            event["terminal_event"] = terminal
        return [reply_turn(obj["output"])], obj.get("status") in ("completed", "incomplete")

    return record.store_relayed(ex, status, streamed, result, read,
                                record.summarizer_for(ex.request.app, ex.request),
                                api="responses")


async def _with_memory_tools(ex: Exchange) -> web.StreamResponse:
    """Forward with the memory tools offered and answer their calls
    (:func:`proxy.flow.forward.forward_with_tools`); each response the client ends with
    is mapped to its thread."""
    url, out_headers = _upstream(ex)
    return await forward_with_tools(
        ex, url, out_headers, label="responses", recover=recoverer(ex),
        summarizer=record.summarizer_for(ex.request.app, ex.request),
        shown_previous=shown_previous(ex), remember=lambda obj: remember(ex, obj))
