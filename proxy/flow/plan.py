"""The plan of what the upstream sees, decided on a memory-path thread (DESIGN §6, §7).

Given the parsed request and its capture, :func:`prepare` produces the
upstream body: compacted ranges replaced by the summary scaffold, earlier
``/memory`` exchanges left out (they are not conversation), the injection block
on the newest user message, all within the request's context budget (compacted
inline when it would not fit). :func:`unchanged` decides, before the capture,
the requests it would leave as sent. Any exception here is the caller's cue to
fail open and forward the client's original bytes. The asynchronous side (the
wait for the capture, the hand-off to a thread) is :mod:`proxy.flow.memorypath`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory_core.assembly import budget
from memory_core.assembly.block import is_bootstrap
from memory_core.assembly.budget import Budget
from memory_core.assembly.lookahead import Ahead
from memory_core.capture.tree import message_text, query_text
from memory_core.compaction.compressor import HEADERS_LINE, headers_line_saving
from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from memory_core.tokens import count_tokens
from memory_core.tools.commands import may_hold_command
from proxy import chatcommands, rewrite
from proxy.flow import resultclip
from proxy.flow.inlinefit import View, fit, scaffold_index
from proxy.flow.side import side_reason
from proxy.rawjson import RawItems
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

log = logging.getLogger("lcm.memory")


@dataclass
class Prepared:
    """The outcome of the memory path for one request.

    ``body`` is the upstream body to send (``None`` = the client's bytes unchanged)
    and ``obj`` the same body parsed (``None`` likewise);
    ``state`` goes to ``x-lcm-memory``; ``headers`` are extra ``x-lcm-*`` headers;
    ``capture`` is the request's capture (``None`` when it did not finish in time).
    """

    body: bytes | None = None
    obj: dict[str, Any] | None = None
    state: str = "skipped"
    headers: dict[str, str] = field(default_factory=dict)
    capture: CaptureResult | None = None
    compacted_messages: int = 0
    budget: Budget | None = None
    """The request's context budget (``None`` when the memory path did not run)."""
    tokens: int | None = None
    """The forwarded request's count when it was counted (near or over its budget)."""
    tools: bool = False
    """The memory tools go with the request: they could find something the upstream
    does not see (:meth:`~memory_core.engine.Engine.has_history_beyond`, or messages
    compacted out of the view), or ``tools.offer`` is ``always``."""
    short_tools: bool = False
    """The memory tools go as the short set (:data:`SHORT_TOOLS_SHARE`): every
    ``add_tools`` of this request passes ``short=``."""
    on_sent: Callable[[], None] | None = None
    """What waits until the request is sent upstream (:meth:`sent`, run by
    :meth:`proxy.flow.exchange.Exchange.send`): the queueing of
    the block's explain log (``assembly_logs``), so that the store's writer does not
    wake, and take the interpreter, while the request is still being planned."""

    @property
    def input_budget(self) -> int | None:
        """The most tokens the upstream request may hold (:attr:`budget`'s
        ``input_tokens``), or ``None`` when the memory path did not plan it: what the
        tool loop's hidden rounds are fitted to."""
        return self.budget.input_tokens if self.budget is not None else None

    def sent(self) -> None:
        """The request went upstream (or could not): run :attr:`on_sent` once.
        Never raises (the hook fails open itself)."""
        hook, self.on_sent = self.on_sent, None
        if hook is not None:
            hook()


_MAY_START_COMMAND = frozenset(("", "/"))


def _command_exchanges(messages: list[Any], raw: bytes) -> set[int]:
    """Indexes of earlier ``/memory`` commands and the proxy's replies to them.

    ``raw`` is the request body: without the bytes ``/memory`` (in any letter case)
    anywhere in it (a command's JSON string holds them, its slash escaped as ``\\/``
    or not) there is no command to look for, and the per-message scan (about 0.8 ms
    per thousand messages) is skipped, also in a conversation that talks about memory. (A
    command whose slash or letters are JSON ``\\u`` escapes, ``\\u002f``, would be
    missed; no client writes them that way.)
    """
    drop: set[int] = set()
    if not may_hold_command(raw):
        return drop
    last = len(messages) - 1
    for i, msg in enumerate(messages[:last]):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str) and content[:1] not in _MAY_START_COMMAND \
                and not content[:1].isspace():
            # A text that starts with another character cannot start with /memory:
            # the message's text starts with its string content (message_text).
            continue
        if chatcommands.is_command(message_text(msg)):
            drop.add(i)
            reply = messages[i + 1]
            if i + 1 < last and isinstance(reply, dict) and reply.get("role") == "assistant":
                drop.add(i + 1)
    return drop


MIN_BLOCK_TOKENS = 64
"""A block with less room than this is left out rather than squeezed."""


SHORT_TOOLS_SHARE = 1 / 12
"""The full memory tools go with a request when their definitions take at most this
share of its context budget; above it (a 4k window: about 320 of 2,816 tokens) only
``memory_search`` and ``view_message``, with short schemas
(:data:`memory_core.tools.memory_tools.SHORT_DEFINITIONS`, about 100 tokens): the rest of
the room goes to the block's quotes."""


SHORT_FOREST_SHARE = 0.05
"""With the short tool set (a small budget), the summary scaffold's room is at most
this share of the budget (``context.forest_share``'s least): its nodes go as one-line
headers with their message ranges, and a resumed thread or a new fork is compacted
to its protected turns (:func:`prepare`), so the room goes to the block's quotes."""


def _memory_tools_tokens(body: dict[str, Any], wire: WireAdapter = CHAT,
                         short: bool = False) -> int:
    """Tokens of the memory tool definitions the tool loop adds to ``body``.

    A body without tools of its own (most requests) gets the same definitions every
    time, so their count is taken once per adapter and tool set
    (:func:`_bare_tools_tokens`); a client's tools change names, room and
    strictness, and are counted with ours each time."""
    if not body.get("tools"):
        return _bare_tools_tokens(wire, short)
    with_tools, _names = wire.add_tools(body, short=short)
    return budget.tools_tokens(with_tools["tools"]) - budget.tools_tokens(body.get("tools"))


@functools.lru_cache(maxsize=16)
def _bare_tools_tokens(wire: WireAdapter, short: bool) -> int:
    """:func:`_memory_tools_tokens` of a body without ``tools``: what ``wire`` adds
    to it depends on nothing else in the body (the full or the short set, not
    strict, all the room)."""
    return budget.tools_tokens(wire.add_tools({}, short=short)[0]["tools"])


def view_tokens(engine: Engine, view: list[Any], messages: list[Any], ids: list[int]) -> int:
    """:func:`budget.messages_tokens` of ``view``, the upstream's messages made from
    the client's ``messages`` (stored ids ``ids``, aligned).

    The view keeps the client's leading and trailing messages as the same objects
    (the forest replaces a middle range): those are counted once per stored id
    (:attr:`Engine.message_counts`), later requests only look them up; the rest
    (scaffold, acknowledgement, splices) is counted.
    """
    n, m = len(view), len(messages)
    head = 0
    while head < n and head < m and view[head] is messages[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and view[n - 1 - tail] is messages[m - 1 - tail]:
        tail += 1
    if head + tail == 0:
        return budget.messages_tokens(view)
    return (budget.messages_tokens(view[head:n - tail])
            + engine.message_counts.total(view[:head] + view[n - tail:],
                                          ids[:head] + ids[m - tail:]))


def _fixed_tokens(cfg: Any, body: dict[str, Any], wire: WireAdapter) -> int:
    """Tokens of the tools the upstream gets: the client's and, when they may be
    offered, the memory tools."""
    offered_tools = cfg.tools_enabled and wire.tools_wanted(body)
    return budget.tools_tokens(body.get("tools")) + (
        _memory_tools_tokens(body, wire) if offered_tools else 0)


def _may_exceed(raw: bytes, fixed: int, block_room: int, forest_room: int,
                want_compaction: bool, limit: int) -> bool:
    """Whether an upper bound on the forwarded request's tokens exceeds ``limit``.

    The bound comes from the body's bytes: a token is at least one byte of the JSON
    it came from (and a message's JSON framing outweighs its 4 tokens of overhead),
    plus :func:`budget.media_upper_bound`. That term only adds, so a body whose
    bytes alone exceed ``limit`` (any long conversation) skips its six scans of the
    body (about 1 ms per 400 KB)."""
    bound = len(raw) + fixed + block_room + (forest_room + 200 if want_compaction else 0)
    return bound > limit or bound + budget.media_upper_bound(raw) > limit


def unchanged(engine: Engine, scope: Scope, raw: bytes, body: dict[str, Any],
               want_compaction: bool, wire: WireAdapter, *, model: str | None = None
               ) -> Prepared | None:
    """The outcome for a request without a block (``X-LCM-Memory: off``) when it is
    certain before its capture that the memory path leaves it as sent; ``None``
    when the capture is needed to know.

    Without a block, the memory path changes a request only by leaving out earlier
    ``/memory`` exchanges (none without those bytes in the body), by the summary
    forest (none when the scope has no active summary node, or compaction is off
    for it), by splices (only on stored replies: none when no reply was ever
    spliced, or the request has no message but user, system and developer ones),
    or by fitting it to its budget (not when its upper bound fits). A new
    conversation with memory off, the common short request, then waits for no
    capture (about 4-5 ms of hand-offs on a loaded 2-CPU machine,
    docs/evaluation/README.md). Cheap: bytes, the budget table, one ``LIMIT 1``.
    """
    cfg = engine.config
    if may_hold_command(raw):
        return None
    plan = budget.request_budget(body, cfg.context, hard_limit=cfg.compaction.hard_limit_tokens,
                                 limits=engine.context_limits, model=model)
    forest_room = int(cfg.context.forest_share * plan.input_tokens)
    if _may_exceed(raw, _fixed_tokens(cfg, body, wire), 0, forest_room, want_compaction,
                   plan.input_tokens):
        return None
    if engine.may_splice() and not all(
            isinstance(m, dict) and m.get("role") in ("user", "system", "developer")
            for m in wire.messages(body)):
        return None
    if want_compaction and engine.has_summaries(scope):
        return None
    return Prepared(budget=plan, headers={"x-lcm-context": (
        f"budget={plan.input_tokens}; window={plan.window}; source={plan.source};"
        f" reserve={plan.reserve}")})


def prepare(metrics: Any, engine: Engine, scope: Scope, result: CaptureResult, raw: bytes,
             body: dict[str, Any], request_id: str, want_block: bool,
             want_compaction: bool, wire: WireAdapter = CHAT,
             offer_always: bool = False, raw_items: RawItems | None = None,
             ahead: Ahead | None = None, model: str | None = None) -> Prepared:
    """The plan of one request after its capture (a memory-path thread;
    :func:`proxy.flow.memorypath.prepare_upstream`).

    Plans the request against its context budget
    (:func:`memory_core.assembly.budget.request_budget`):
    the tools (the client's and the memory tools), the scaffold (at most
    ``context.forest_share`` of the budget), the messages and the block (at most
    ``context.block_share``) must fit. A request that may not fit is counted; one
    that does not is compacted inline (extractive, lower thresholds, fewer
    protected tail turns stage by stage) until it fits; one whose protected
    messages alone are too large is forwarded unchanged (state ``over-budget``).

    The memory tools are offered (``Prepared.tools``) when the request allows them
    and they could find something beyond what the upstream sees: stored history or
    memories beyond the request's own messages, or messages compacted out of its
    view (also by an inline compaction: the tools are counted before it), or when
    ``offer_always``. Otherwise the block does not point to them. ``ahead``: the
    block's searches, run while the capture ran (:meth:`Engine.search_ahead`).
    ``model``: the request's model when not the body's (an Azure deployment,
    :func:`proxy.deployment.request_model`), for its budget.
    """
    cfg = engine.config
    out = Prepared(capture=result)
    client_messages: list[Any] = wire.messages(body)
    side = side_reason(body, client_messages)
    if side is not None:
        # An agent's one-shot utility call (proxy.flow.side): no block, no memory tools.
        out.headers["x-lcm-side-request"] = side
        out.headers["x-lcm-memory-reason"] = "side-request"
        want_block = offer_always = False
    messages = client_messages
    ids = list(result.message_ids)
    changed = False

    drop = _command_exchanges(messages, raw)
    if drop:
        keep = [i for i in range(len(messages)) if i not in drop]
        messages = [messages[i] for i in keep]
        ids = [ids[i] for i in keep if i < len(ids)]
        changed = True

    plan = budget.request_budget(body, cfg.context, hard_limit=cfg.compaction.hard_limit_tokens,
                                 limits=engine.context_limits, model=model)
    out.budget = plan
    limit = plan.input_tokens
    aligned = len(ids) == len(messages)
    remembered = aligned and not result.path_ids
    roots: list[Any] = []
    started = time.perf_counter()
    if want_compaction and aligned:
        roots = engine.forest_for(scope, ids)
    wanted = cfg.tools_enabled and side is None and wire.tools_wanted(body)
    offer = wanted and (offer_always or bool(roots)
                        or engine.has_history_beyond(scope, result))
    full_tools = tools_tokens = _memory_tools_tokens(body, wire) if wanted else 0
    short = tools_tokens > SHORT_TOOLS_SHARE * limit
    if short:
        tools_tokens = _memory_tools_tokens(body, wire, short=True)
    fixed = budget.tools_tokens(body.get("tools")) + (tools_tokens if offer else 0)
    # The room the short tool set frees is the block's (its quotes), not the tail's.
    block_room = min(cfg.soft_budget_tokens, int(cfg.context.block_share * limit)
                     + full_tools - tools_tokens) if want_block else 0
    forest_room = int(cfg.context.forest_share * limit)
    if short and block_room:
        # A small budget: the scaffold keeps to its nodes' headers (the memory tools
        # read them in full), the block's quotes, found for this turn, take the room.
        forest_room = min(forest_room, int(SHORT_FOREST_SHARE * limit))
    # Under this bound, nothing to count (the tools counted as if offered).
    maybe_over = _may_exceed(raw, fixed + (0 if offer else tools_tokens), block_room,
                             forest_room, want_compaction, limit)

    def render(roots: list[Any], room: int | None) -> View:
        covered: set[int] = set().union(*(n.message_ids for n in roots)) if roots else set()
        view_msgs, view_ids = messages, ids
        spliced = False
        if aligned:
            # Replies that hid memory-tool rounds: show the model what it really did.
            # (None among all ids, the usual case: none among the visible ones either.)
            splices = {}
            if engine.has_splices(ids):
                splices = engine.splices_for([i for i in ids if i not in covered])
            if splices or covered:
                view_msgs, view_ids = rewrite.apply_splices(messages, ids, splices)
                spliced = bool(splices)
            if covered:
                superseded = engine.superseded_sources(scope, max(covered))
                view_msgs = rewrite.apply_forest(view_msgs, view_ids, roots,
                                                 tools_enabled=offer, short_tools=short,
                                                 superseded=superseded, budget_tokens=room)
        return View(view_msgs, view_ids, covered, spliced)

    view = render(roots, forest_room)
    at = scaffold_index(view.messages) if short and block_room and view.covered else None
    if at is not None and HEADERS_LINE in view.messages[at]["content"]:
        # Likewise the room the scaffold saves by listing its collapsed nodes on one line.
        block_room = min(cfg.soft_budget_tokens, block_room + headers_line_saving(roots))
    total: int | None = None
    if maybe_over:
        # Remembered counts are per stored id: not when one id stands for several
        # of the request's turns (regrouped parallel calls, CaptureResult.path_ids).
        total = fixed + (view_tokens(engine, view.messages, messages, ids) if remembered
                         else budget.messages_tokens(view.messages))
        # A resumed thread or a new fork (a bootstrap turn) at a small budget: its
        # older tail is compacted down to the protected turns, so the block's quotes,
        # found for this turn, take that room (the upstream holds no cache of it).
        resume = (short and block_room > 0 and bool(roots) and want_compaction and aligned
                  and is_bootstrap(result, time.time(), cfg.idle_resume_seconds))
        over = total + block_room > limit
        if (over or resume) and want_compaction and aligned:
            if wanted and not offer:  # what the compaction takes out, the tools find
                offer, fixed, total = True, fixed + tools_tokens, total + tools_tokens
            compacted = len(roots), view.covered
            roots, view, total = fit(
                metrics, engine, scope, result.thread_id, ids, roots, view, total, render,
                limit - block_room, forest_room,
                lambda v: fixed + (view_tokens(engine, v.messages, messages, ids) if remembered
                                   else budget.messages_tokens(v.messages)),
                first_stage_only=not over)
            if over or (len(roots), view.covered) != compacted:
                out.headers["x-lcm-context-compacted"] = "inline"
    if want_compaction and aligned:
        metrics.stage_latency.labels("compaction_rewrite").observe(
            time.perf_counter() - started)
    if total is not None and total > limit:
        # Compacted down to its protected turns and still too large: the client's own
        # tool results (a whole file, a long log) are cut in their middle to fit.
        stored = {id(m): i for m, i in zip(messages, ids, strict=False)} if aligned else {}
        clip = resultclip.clip_results(view.messages, total - limit, stored, tools=offer)
        if clip is not None and (clipped_total := fixed + budget.messages_tokens(clip[0])
                                 ) <= limit:
            view = View(clip[0], view.ids, view.covered, view.spliced)
            total, changed = clipped_total, True
            out.headers["x-lcm-clipped-results"] = str(clip[1])
            metrics.context.labels("clipped_results").inc()
    if total is not None:
        # The block shares the budget: the room the messages leave (up to the soft
        # budget), at least its share when that fits.
        free = max(0, limit - total)
        block_room = min(free, max(block_room, min(free, cfg.soft_budget_tokens))) \
            if block_room else 0
        if block_room < MIN_BLOCK_TOKENS:
            block_room = 0
        out.tokens = total
    context_note = (f"budget={limit}; window={plan.window}; source={plan.source};"
                    f" reserve={plan.reserve}")
    if total is not None and total > limit:
        # Even compacted to its protected messages the request does not fit: the
        # client's own request goes as sent, and the upstream answers it.
        metrics.context.labels("over_budget").inc()
        log.warning("request %s: %d tokens over a context budget of %d even after compaction"
                    " (its protected messages alone); forwarded unchanged",
                    request_id, total, limit)
        return Prepared(state="over-budget", capture=result, budget=plan, tokens=total,
                        headers={"x-lcm-context": f"tokens={total}; {context_note}"})
    if view.covered:
        out.compacted_messages = sum(len(n.message_ids) for n in roots)
        out.headers["x-lcm-compacted-messages"] = str(out.compacted_messages)
        changed = True
    changed = changed or view.spliced
    messages, covered = view.messages, view.covered

    index = rewrite.newest_user_index(messages)
    user_id = _newest_user_id(client_messages, result)
    if want_block and not block_room:
        out.headers["x-lcm-memory-reason"] = "no-room"  # the messages fill the budget
    if want_block and block_room and index is not None:
        started = time.perf_counter()
        newest = query_text(messages[index])
        # Once each: a reply that hid memory-tool rounds repeats its id per splice.
        order = list(dict.fromkeys(itertools.filterfalse(covered.__contains__, view.ids)))
        visible = set(order)
        assembly = engine.assemble(scope, result, newest, request_id, visible, order,
                                   budget_tokens=block_room, tools=offer, ahead=ahead,
                                   log=False)
        out.on_sent = functools.partial(_log_assembly, engine, scope, request_id, assembly)
        metrics.stage_latency.labels("assemble").observe(time.perf_counter() - started)
        if assembly.block:
            messages = wire.inject_block(messages, assembly.block)
            out.state = "injected"
            out.headers["x-lcm-injected-items"] = str(assembly.items_injected)
            out.headers["x-lcm-injected-tokens"] = str(assembly.used_tokens)
            changed = True
            if out.tokens is not None:
                out.tokens += assembly.used_tokens + 1
        if user_id is not None:
            engine.remember_block(scope, user_id, assembly.block)
    elif want_block and block_room and user_id is not None:
        # A tool round of the same turn: the user message keeps the block it had.
        block = engine.block_for(scope, user_id)
        at = rewrite.tool_round_user_index(messages)
        if block and at is not None and count_tokens(block) <= block_room:
            messages = wire.inject_block(messages, block, at)
            out.state = "injected"
            out.headers["x-lcm-injected-tokens"] = str(count_tokens(block))
            changed = True
    out.tools = offer
    out.short_tools = short
    out.headers["x-lcm-context"] = (f"tokens={out.tokens}; " if out.tokens is not None
                                    else "") + context_note

    if changed:
        # Other fields keep exact integers when orjson could have turned them to floats.
        source = rewrite.exact_source(raw, body, wire.conversation_key)
        new_body = wire.with_messages(source, messages)
        out.obj = new_body
        # Serialised here, inside the fail-open path, even when the tool loop will
        # serialise its own copy: a body too deep to encode must be forwarded as the
        # client sent it, not become a 500 (tests/reliability/test_hostile_input).
        out.body = rewrite.dumps_body(new_body, raw_items)
    return out


def _log_assembly(engine: Engine, scope: Scope, request_id: str, assembly: Any) -> None:
    """Queue a block's explain log (:meth:`Engine.log_assembly`); a failure is logged
    with the request id, never raised (the chat goes on)."""
    try:
        engine.log_assembly(scope, request_id, assembly)
    except Exception:  # noqa: BLE001 - the explain log never fails a chat
        log.warning("request %s: could not queue the block's explain log", request_id,
                    exc_info=True)


def newest_user_text(body: dict[str, Any], wire: WireAdapter = CHAT) -> str:
    """The text of the request's last message when it is a user message (the
    block's query, as :func:`prepare` reads it), else ``""``."""
    last = wire.last_message(body)  # not every message: on the event loop
    return query_text(last) if rewrite.newest_user_index([last]) is not None else ""


def _newest_user_id(messages: list[Any], result: CaptureResult) -> int | None:
    """Stored id of the user message that opened the current turn (the last
    message, or the one a trailing tool round continues); ``None`` otherwise."""
    at = rewrite.newest_user_index(messages)
    if at is None:
        at = rewrite.tool_round_user_index(messages)
    if at is None or len(result.message_ids) != len(messages):
        return None
    return result.message_ids[at]
