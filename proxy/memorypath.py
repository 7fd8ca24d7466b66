"""The memory path of a chat request: what the upstream sees, decided before forwarding.

Given the parsed request and its capture, :func:`prepare_upstream` produces the
upstream body: compacted ranges replaced by the summary scaffold (DESIGN §6),
earlier ``/memory`` exchanges left out (they are not conversation), the injection
block on the newest user message (§7). Any exception here is the caller's cue to
fail open and forward the client's original bytes.

After the response, :func:`schedule_compaction` runs the compaction that is due
in a worker thread, one per thread at a time, off the request path.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import threading
import time
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from memory_core import budget
from memory_core.budget import Budget
from memory_core.compaction import SCAFFOLD_HEADER
from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from memory_core.tokens import count_tokens
from memory_core.tree import message_text
from proxy import commands, rewrite
from proxy.keys import MEMORY_POOL, METRICS, SETTINGS, TASKS
from proxy.rawjson import RawItems
from proxy.wire.base import WireAdapter
from proxy.wire.chat import CHAT

log = logging.getLogger("lcm.memory")

_OFF = ("off", "0", "false", "no")


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


def _command_exchanges(messages: list[Any], raw: bytes) -> set[int]:
    """Indexes of earlier ``/memory`` commands and the proxy's replies to them.

    ``raw`` is the request body: without the bytes ``/memory`` anywhere in it (a
    command's JSON string holds them, its slash escaped as ``\\/`` or not) there is
    no command to look for, and the per-message scan (about 0.8 ms per thousand
    messages) is skipped, also in a conversation that talks about memory. (A
    command whose slash or letters are JSON ``\\u`` escapes, ``\\u002f``, would be
    missed; no client writes them that way.)
    """
    drop: set[int] = set()
    if b"/memory" not in raw:
        return drop
    last = len(messages) - 1
    for i, msg in enumerate(messages[:last]):
        if isinstance(msg, dict) and msg.get("role") == "user" and commands.is_command(
                message_text(msg)):
            drop.add(i)
            reply = messages[i + 1]
            if i + 1 < last and isinstance(reply, dict) and reply.get("role") == "assistant":
                drop.add(i + 1)
    return drop


async def prepare_upstream(
    request: web.Request, engine: Engine, scope: Scope, capture_future: Any, raw: bytes,
    body: dict[str, Any], request_id: str, wire: WireAdapter = CHAT,
    raw_items: RawItems | None = None,
) -> Prepared:
    """Decide the upstream body (see module docstring). Raises on failure (fail open).

    ``wire``: the body's API (:mod:`proxy.wire`); its messages are read and written
    through it, and it places the block (Chat Completions by default).
    ``raw_items``: the client's bytes of its conversation items, spliced into a
    rewritten body for the items it keeps (:mod:`proxy.rawjson`).

    Waits for the request's capture at most ``injection.capture_wait_seconds``
    (``TimeoutError`` beyond; the capture itself goes on). Honours ``X-LCM-Memory:
    off`` (no block) and ``X-LCM-Compaction: off`` (raw history) per request.
    Everything after the wait runs as one job on the memory-path pool
    (:data:`~proxy.keys.MEMORY_POOL`): one hand-off instead of one per stage (each
    costs up to the interpreter's 5 ms switch interval while background threads
    index), and the event loop stays free for other requests. The job is queued
    by the capture's own completion, on the writer thread, rather than after a
    round through the event loop (0.5 ms at 1000 turns, measured); no thread waits
    for the capture. A request that gave up (time limit, client gone) before the
    job started never runs it.
    """
    settings = request.app[SETTINGS]
    cfg = engine.config
    want_block = cfg.inject and request.headers.get("X-LCM-Memory", "").lower() not in _OFF
    want_compaction = (cfg.compaction.enabled and settings.compaction.enabled
                       and request.headers.get("X-LCM-Compaction", "").lower() not in _OFF)
    offer_always = settings.tools.offer == "always"
    metrics, pool = request.app[METRICS], request.app[MEMORY_POOL]
    if not want_block:
        quick = _unchanged(engine, scope, raw, body, want_compaction, wire)
        if quick is not None:
            # Decided without the capture, which goes on in the writer (its order
            # with this request's answer and the next request's capture is the
            # writer's FIFO): the evidence is the same, only nothing waits for it.
            return quick
    prepared: Future[Prepared] = Future()
    gave_up = threading.Event()

    def run(result: CaptureResult) -> None:  # a memory-path thread
        if not prepared.set_running_or_notify_cancel():
            return
        try:
            prepared.set_result(_prepare(metrics, engine, scope, result, raw, body, request_id,
                                         want_block, want_compaction, wire, offer_always,
                                         raw_items))
        except BaseException as exc:  # noqa: BLE001 - delivered to the request (fail open)
            prepared.set_exception(exc)

    def on_capture(done: Future[CaptureResult]) -> None:  # the writer thread, mostly
        if gave_up.is_set() or done.cancelled() or done.exception() is not None:
            return  # the request sees the capture's own outcome
        try:
            pool.submit(run, done.result())
        except BaseException as exc:  # noqa: BLE001 - e.g. the pool is shut down (stopping):
            # the request must not wait for a job that never runs.
            with contextlib.suppress(InvalidStateError):  # unless the request gave up
                prepared.set_exception(exc)

    capture_future.add_done_callback(on_capture)
    try:
        # shield: giving up waiting must not cancel the capture itself (the writer
        # skips cancelled jobs, and the request would be lost as evidence).
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(capture_future)),
                               cfg.capture_wait_seconds)
        return await asyncio.wrap_future(prepared)
    except BaseException:
        gave_up.set()
        prepared.cancel()  # not started yet: it never will
        raise


INLINE_SECONDS = 5.0
"""Inline compaction to fit a budget starts no further stage after this long."""
MIN_BLOCK_TOKENS = 64
"""A block with less room than this is left out rather than squeezed."""


@dataclass
class _View:
    """What the upstream would see: ``messages``, the stored ``ids`` beside them
    (splices repeat their reply's id), the ids the forest ``covered``."""

    messages: list[Any]
    ids: list[int]
    covered: set[int]
    spliced: bool


def _memory_tools_tokens(body: dict[str, Any], wire: WireAdapter = CHAT) -> int:
    """Tokens of the memory tool definitions the tool loop adds to ``body``."""
    with_tools, _names = wire.add_tools(body)
    return budget.tools_tokens(with_tools["tools"]) - budget.tools_tokens(body.get("tools"))


def _view_tokens(engine: Engine, view: list[Any], messages: list[Any], ids: list[int]) -> int:
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


def _upper_bound(cfg: Any, raw: bytes, fixed: int, block_room: int, forest_room: int,
                 want_compaction: bool) -> int:
    """An upper bound on the forwarded request's tokens, from its bytes: a token is
    at least one byte of the JSON it came from (and a message's JSON framing
    outweighs its 4 tokens of overhead)."""
    return (len(raw) + budget.media_upper_bound(raw) + fixed
            + block_room + (forest_room + 200 if want_compaction else 0))


def _unchanged(engine: Engine, scope: Scope, raw: bytes, body: dict[str, Any],
               want_compaction: bool, wire: WireAdapter) -> Prepared | None:
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
    if b"/memory" in raw:
        return None
    plan = budget.request_budget(body, cfg.context, hard_limit=cfg.compaction.hard_limit_tokens,
                                 limits=engine.context_limits)
    forest_room = int(cfg.context.forest_share * plan.input_tokens)
    if _upper_bound(cfg, raw, _fixed_tokens(cfg, body, wire), 0, forest_room,
                    want_compaction) > plan.input_tokens:
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


def _prepare(metrics: Any, engine: Engine, scope: Scope, result: CaptureResult, raw: bytes,
             body: dict[str, Any], request_id: str, want_block: bool,
             want_compaction: bool, wire: WireAdapter = CHAT,
             offer_always: bool = False, raw_items: RawItems | None = None) -> Prepared:
    """The body of :func:`prepare_upstream` after the capture (worker thread).

    Plans the request against its context budget (:func:`memory_core.budget.request_budget`):
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
    ``offer_always``. Otherwise the block does not point to them.
    """
    cfg = engine.config
    out = Prepared(capture=result)
    client_messages: list[Any] = wire.messages(body)
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
                                 limits=engine.context_limits)
    out.budget = plan
    limit = plan.input_tokens
    aligned = len(ids) == len(messages)
    remembered = aligned and not result.path_ids
    roots: list[Any] = []
    started = time.perf_counter()
    if want_compaction and aligned:
        roots = engine.forest_for(scope, ids)
    wanted = cfg.tools_enabled and wire.tools_wanted(body)
    offer = wanted and (offer_always or bool(roots)
                        or engine.has_history_beyond(scope, result))
    tools_tokens = _memory_tools_tokens(body, wire) if wanted else 0
    fixed = budget.tools_tokens(body.get("tools")) + (tools_tokens if offer else 0)
    block_room = min(cfg.soft_budget_tokens, int(cfg.context.block_share * limit)) \
        if want_block else 0
    forest_room = int(cfg.context.forest_share * limit)
    # Under this bound, nothing to count (the tools counted as if offered).
    maybe_over = _upper_bound(cfg, raw, fixed + (0 if offer else tools_tokens), block_room,
                              forest_room, want_compaction) > limit

    def render(roots: list[Any], room: int | None) -> _View:
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
                                                 tools_enabled=offer,
                                                 superseded=superseded, budget_tokens=room)
        return _View(view_msgs, view_ids, covered, spliced)

    view = render(roots, forest_room)
    total: int | None = None
    if maybe_over:
        # Remembered counts are per stored id: not when one id stands for several
        # of the request's turns (regrouped parallel calls, CaptureResult.path_ids).
        total = fixed + (_view_tokens(engine, view.messages, messages, ids) if remembered
                         else budget.messages_tokens(view.messages))
        if total + block_room > limit and want_compaction and aligned:
            if wanted and not offer:  # what the compaction takes out, the tools find
                offer, fixed, total = True, fixed + tools_tokens, total + tools_tokens
            roots, view, total = _fit(
                metrics, engine, scope, result.thread_id, ids, roots, view, total, render,
                limit - block_room, forest_room,
                lambda v: fixed + (_view_tokens(engine, v.messages, messages, ids) if remembered
                                   else budget.messages_tokens(v.messages)))
            out.headers["x-lcm-context-compacted"] = "inline"
    if want_compaction and aligned:
        metrics.stage_latency.labels("compaction_rewrite").observe(
            time.perf_counter() - started)
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
        newest = message_text(messages[index])
        # Once each: a reply that hid memory-tool rounds repeats its id per splice.
        order = list(dict.fromkeys(itertools.filterfalse(covered.__contains__, view.ids)))
        visible = set(order)
        assembly = engine.assemble(scope, result, newest, request_id, visible, order,
                                   budget_tokens=block_room, tools=offer)
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
    out.headers["x-lcm-context"] = (f"tokens={out.tokens}; " if out.tokens is not None
                                    else "") + context_note

    if changed:
        # Other fields keep exact integers when orjson could have turned them to floats.
        source = json.loads(raw) if rewrite.needs_exact_numbers(raw) else body
        new_body = wire.with_messages(source, messages)
        out.obj = new_body
        # Serialised here, inside the fail-open path, even when the tool loop will
        # serialise its own copy: a body too deep to encode must be forwarded as the
        # client sent it, not become a 500 (tests/reliability/test_hostile_input).
        out.body = rewrite.dumps_body(new_body, raw_items)
    return out


def _fit(metrics: Any, engine: Engine, scope: Scope, thread_id: int, ids: list[int],
         roots: list[Any], view: _View, total: int, render: Any, goal: int,
         forest_room: int, count: Any) -> tuple[list[Any], _View, int]:
    """Compact inline until the request counts at most ``goal`` tokens.

    Stages, each an extractive compaction with no minimum size: the configured
    protected turns, then fewer protected tail turns (halving to 1), then no
    protected head turns. The first stage whose result leaves a fifth of ``goal``
    free wins (the next turns then fit without compacting again); otherwise the
    first that fits. If none fits, the scaffold is squeezed to the room left.
    ``count(view)`` is the request's tokens with ``view``.
    Returns ``(roots, view, total)``.
    """
    base = engine.config.compaction
    path = list(dict.fromkeys(ids))  # each stored message once (regrouped calls repeat one)
    tails = [base.tail_turns]
    while tails[-1] > 1:
        tails.append(max(1, tails[-1] // 2))
    stages = [dataclasses.replace(base, min_tokens=0, min_turns=1, tail_turns=t)
              for t in tails]
    stages.append(dataclasses.replace(stages[-1], head_turns=0))
    started = time.perf_counter()
    best: tuple[list[Any], _View, int] | None = None
    for stage in stages:
        if time.perf_counter() - started > INLINE_SECONDS:
            break
        created = engine.compact(scope, thread_id, path, None, force=True, config=stage)
        if not created:
            continue
        metrics.compactions.labels("inline").inc(len(created))
        roots = engine.forest_for(scope, ids)
        view = render(roots, forest_room)
        total = count(view)
        if total <= goal and best is None:
            best = (roots, view, total)
        if total <= goal - goal // 5:
            best = (roots, view, total)
            break
    if best is not None:
        metrics.context.labels("fitted").inc()
        return best
    if roots:
        # Still over: give the scaffold only the room the rest leaves.
        at = _scaffold_index(view.messages)
        scaffold = budget.message_tokens(view.messages[at]) if at is not None else 0
        room = max(0, goal - (total - scaffold))
        view = render(roots, room)
        total = count(view)
        if total <= goal:
            metrics.context.labels("fitted").inc()
    return roots, view, total


def _scaffold_index(messages: list[Any]) -> int | None:
    for i, msg in enumerate(messages):
        if (isinstance(msg, dict) and isinstance(msg.get("content"), str)
                and msg["content"].startswith(SCAFFOLD_HEADER)):
            return i
    return None


def _newest_user_id(messages: list[Any], result: CaptureResult) -> int | None:
    """Stored id of the user message that opened the current turn (the last
    message, or the one a trailing tool round continues); ``None`` otherwise."""
    at = rewrite.newest_user_index(messages)
    if at is None:
        at = rewrite.tool_round_user_index(messages)
    if at is None or len(result.message_ids) != len(messages):
        return None
    return result.message_ids[at]


def schedule_compaction(app: web.Application, engine: Engine, scope: Scope, thread_id: int,
                        path_ids: list[int], summarizer: Any) -> None:
    """Run the compaction due on a thread in the background (never on the request path)."""
    if not engine.config.compaction.enabled or not thread_id:
        return

    def job() -> list[int]:
        # Scheduled as the answer is stored, while its request still holds the
        # foreground (it waits for that store, then answers its client): checking
        # what is due costs a few ms of CPU, which would take the interpreter lock
        # from that request's last steps. Give way first (bounded).
        engine.give_way()
        return engine.compact(scope, thread_id, path_ids, summarizer)

    async def run() -> None:
        created = await asyncio.get_running_loop().run_in_executor(None, job)
        if created:
            app[METRICS].compactions.labels("background").inc(len(created))

    app[TASKS].spawn(run(), name=f"compaction-{thread_id}")
