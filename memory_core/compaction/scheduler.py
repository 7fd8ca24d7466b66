"""When compaction runs: one thread at a time, retried with backoff, one replica per range.

The compressor (:mod:`memory_core.compaction.compressor`) decides what is due and
writes the nodes; this module decides when it may run. A thread compacts under a
striped in-process lock (a concurrent call returns at once) and, on a shared
store, under the store's exclusive lock of that thread (another replica's run
wins; an inline run waits for it). A failed run leaves the raw history in place
and is retried after a backoff, logged with a ``compaction_failed`` event.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from memory_core.capture import evidence
from memory_core.capture.message_facts import MessageFacts
from memory_core.compaction import compressor
from memory_core.config import MemoryConfig
from memory_core.models import Scope
from memory_core.store.api import EngineStore

log = logging.getLogger("lcm.engine")

COMPACTION_WAIT_SECONDS = 30.0
"""How long an inline (``force``) compaction waits for another replica's compaction
of the same thread to end before it gives up (returns no nodes)."""

RETRY_SECONDS = (10.0, 60.0, 300.0, 1800.0)
"""Backoff after a thread's 1st, 2nd, 3rd and later failed compactions (seconds)."""


class Compactor:
    """Runs the compaction due on a thread's path.

    ``nodes_on_path(scope, path_ids)``: the active summary nodes over a path (the
    engine's node cache); ``node_written(scope)``: called before each node is
    written (the engine's "has summaries" cache)."""

    def __init__(self, store: EngineStore, config: MemoryConfig, message_facts: MessageFacts,
                 nodes_on_path: Callable[[Scope, Sequence[int]], list[compressor.SummaryNode]],
                 node_written: Callable[[Scope], None]) -> None:
        self.store = store
        self.config = config
        self._message_facts = message_facts
        self._nodes_on_path = nodes_on_path
        self._node_written = node_written
        # Striped, not one lock per thread id: a dict of per-thread locks grew with
        # every conversation the process ever saw. Two threads that share a stripe
        # only defer one background compaction to their next turn.
        self._locks = tuple(threading.Lock() for _ in range(64))
        self._failures: dict[int, tuple[int, float]] = {}

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
        if not compressor.may_be_due(len(path_ids), cfg):
            return []
        now = time.time()
        failures, next_at = self._failures.get(thread_id, (0, 0.0))
        if not force and now < next_at:
            return []
        lock = self._locks[thread_id % len(self._locks)]
        if not lock.acquire(blocking=force):
            return []
        try:
            created = self._compact_locked(scope, thread_id, path_ids, summarizer, cfg, force)
        except Exception as exc:  # noqa: BLE001 - raw history stays in place
            failures += 1
            backoff = RETRY_SECONDS[min(failures - 1, len(RETRY_SECONDS) - 1)]
            self._failures[thread_id] = (failures, now + backoff)
            log.warning("compaction of thread %s failed (%r); retry in %.0f s", thread_id, exc,
                        backoff)
            self.store.write_tx(evidence.record_event, None, "compaction_failed",
                                {"thread_id": thread_id, "error": repr(exc)[:500],
                                 "failures": failures, "request_id": None})
            return []
        finally:
            lock.release()
        self._failures.pop(thread_id, None)
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
            self._node_written(scope)  # before the node exists
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
