"""Indexer: keeps Tantivy and the vector index in step with SQLite through the outbox.

Every change the indexes must see is a row of ``index_outbox`` (``kind``, ``ref_id``,
``op`` in {upsert, delete}), appended in the same transaction as the change itself.
Two worker threads consume it, each from its own checkpoint (``checkpoints`` rows
``index_text`` and ``index_vector``, value = last outbox id applied):

- the *text* worker loads rows, writes Tantivy, commits at most every
  ``commit_interval_ms`` and only then advances ``index_text``;
- the *vector* worker embeds in batches (vectors cached in the ``embeddings`` table
  with their model id, and the newest ``TEXT_CACHE_SIZE`` in memory by their text,
  so that a text seen again is not embedded again), updates the partitions, saves
  them at most every ``vector_save_interval_seconds`` and only then advances
  ``index_vector``.

On a shared store each replica has checkpoints of its own (``index_text@<id>``,
:mod:`memory_core.replica`) and its own indexes in its data directory; the outbox is
append-only (never pruned), so a replica that lags or was down catches up from its
checkpoint, and message vectors another replica stored in ``embeddings`` are reused
(items, memories and summaries, whose text may change under one id, are embedded
again by each replica).

Both workers keep under a CPU ceiling (``background_cpu_share``, :class:`_Duty`).

Because a checkpoint only moves after its index is durable and every operation is
idempotent (upsert = delete + add by label), a crash at any point (SIGKILL included)
loses nothing: ``catch_up`` replays from the checkpoints. ``rebuild`` empties both
indexes and re-reads every table; it produces the same index as incremental
indexing (tested). :meth:`Indexer.close` is bounded: a worker stops without waiting
for the embedding batch in progress, the step it was in is dropped (the vectors of
its finished batches stay cached in ``embeddings``), what was applied is saved, and
what is left past the checkpoints is logged and applied on the next start. Nothing
here runs on the asyncio loop (``foreground.hold``, called there, only counts);
``notify`` wakes the workers and is safe to call from any thread.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from memory_core.assembly.block import warm_message_terms
from memory_core.search.base import IndexDoc, SearchFilter, make_label, split_label
from memory_core.search.docs import embed_key, load_docs, scan_ids
from memory_core.search.embed.base import Embedder, SerialEmbedder, background_priority
from memory_core.search.foreground import REQUEST_QUIET_SECONDS, Foreground, StepBudget
from memory_core.search.fulltext import TantivyTextIndex
from memory_core.search.searchconfig import KIND_CODES, SearchConfig
from memory_core.search.vector import HnswVectorIndex
from memory_core.store.api import EngineStore, Tx

log = logging.getLogger("lcm.search.indexer")

TEXT_CHECKPOINT = "index_text"
VECTOR_CHECKPOINT = "index_vector"
"""Checkpoint names on a store of one process (a shared store's replicas key them by
replica: :func:`memory_core.replica.checkpoint_names`)."""
Progress = Callable[[str, int], None]
"""``progress(stage, n_done_increment)``; stages ``text`` and ``vector``."""


_STOP_POLL_S = 0.05
"""Seconds between two looks at the stop flag while an embedding batch runs."""
_REVISE_NEIGHBOURS = 16
"""Nearest items an update is compared with (:meth:`Indexer._revise_by_meaning`): the
filter knows no speaker, so other speakers' items take places among them."""


TEXT_CACHE_SIZE = 1024
"""Vectors kept in memory by the text they were embedded from (about 3 KB each with
the default pair): a text seen again (the same sentence in many conversations, an
item re-indexed with its text unchanged) is not embedded again."""
_PACE_MAX_S = 30.0
"""Longest single sleep of the CPU ceiling (``background_cpu_share``)."""


class _Duty:
    """The CPU ceiling of one index worker (``SearchConfig.background_cpu_share``).

    ``cpu`` returns the CPU seconds charged to the worker so far (its own thread's,
    plus the embedder thread's document calls for the vector worker). :meth:`pace`
    sleeps, after a piece of work that took ``c`` CPU seconds in ``w`` wall seconds,
    ``c / share - w`` seconds (at most ``_PACE_MAX_S``), in short waits that end
    early when ``stop`` or ``hurry`` is set; then starts the next piece.
    """

    def __init__(self, share: float, cpu: Callable[[], float], stop: threading.Event,
                 hurry: threading.Event) -> None:
        self.share, self._cpu, self._stop, self._hurry = share, cpu, stop, hurry
        self.slept = 0.0
        self.start()

    def start(self) -> None:
        self._wall0, self._cpu0 = time.monotonic(), self._cpu()

    def pace(self) -> None:
        if self.share > 0:
            now = time.monotonic()
            left = min(_PACE_MAX_S, (self._cpu() - self._cpu0) / self.share
                       - (now - self._wall0))
            end = now + left
            while left > 0 and not self._stop.is_set() and not self._hurry.is_set():
                self._stop.wait(min(0.1, left))
                left = end - time.monotonic()
            self.slept += max(0.0, time.monotonic() - now)
        self.start()


class _Stopping(Exception):
    """Raised inside a worker step when :meth:`Indexer.close` asked it to stop."""


def _set_checkpoint(tx: Tx, name: str, value: int) -> None:
    """A write job: checkpoint ``name`` is at outbox id ``value`` (stamped when it runs)."""
    tx.index_feed.set_checkpoint(name, value, time.time())


def _store_vectors(tx: Tx, rows: list[tuple[str, int, str, int, bytes, float]]) -> None:
    tx.index_feed.save_vectors(rows)


class Indexer:
    """Feeds ``text`` and ``vectors`` from ``store``'s outbox (see module docstring).

    ``embedder`` may be ``None``: then only the text index is maintained.
    Call :meth:`start` to launch the two worker threads, :meth:`close` to stop them
    (the final commit/save and checkpoints happen there).
    """

    def __init__(
        self,
        store: EngineStore,
        text: TantivyTextIndex,
        vectors: HnswVectorIndex | None,
        embedder: Embedder | None,
        config: SearchConfig,
        checkpoints: tuple[str, str] = (TEXT_CHECKPOINT, VECTOR_CHECKPOINT),
    ) -> None:
        self.text_checkpoint, self.vector_checkpoint = checkpoints
        """This replica's checkpoint names (``checkpoints``: text, vector)."""
        self.store, self.text, self.vectors, self.embedder = store, text, vectors, embedder
        self.config = config
        self.model_key = (embed_key(embedder.model_id, config.embed_context_chars)
                          if embedder else "")
        self._locks = {"text": threading.Lock(), "vector": threading.Lock()}
        self._wake = {"text": threading.Event(), "vector": threading.Event()}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: dict[str, str] = {}
        self.index_dates = False
        self._text_pos: int | None = None
        self._text_saved: int | None = None
        self._text_dirty = False
        self._text_items = 0  # the newest item id applied since the last commit
        self.indexed_items: int | None = None
        """The newest item id the text index holds (committed, searchable): every
        item with a smaller id is in it too, since item ids and outbox ids are both
        drawn in commit order. ``None`` until this process has applied an item."""
        self._vec_pos: int | None = None
        self._vec_saved: int | None = None
        self._last_save = time.monotonic()
        self._flush = threading.Event()
        self._duties: dict[str, _Duty] = {}  # each worker's ceiling, read live
        self._by_text: OrderedDict[str, np.ndarray] = OrderedDict()  # TEXT_CACHE_SIZE
        self.embedded_texts = 0
        """Texts sent to the embedder so far (cache hits not counted)."""
        self.embedded_kinds: dict[str, int] = {}
        """:attr:`embedded_texts` by document kind (``message``, ``item``, …)."""
        self.foreground = Foreground(REQUEST_QUIET_SECONDS)
        self._budget = threading.local()  # each worker thread's StepBudget
        self._duty = threading.local()  # each worker thread's _Duty (CPU ceiling)
        if text.was_reset:
            self.store.write_tx_sync(_set_checkpoint, self.text_checkpoint, 0)
        if vectors is not None and vectors.was_reset:
            self.store.write_tx_sync(_set_checkpoint, self.vector_checkpoint, 0)

    # -- shared helpers ----------------------------------------------------------
    def checkpoint(self, name: str) -> int:
        return int(self.store.read_tx(lambda tx: tx.index_feed.checkpoint(name)))

    def outbox_head(self) -> int:
        """The newest outbox id (0 when empty)."""
        return self.store.read_tx(lambda tx: tx.index.outbox_head())

    def _read_outbox(self, after: int) -> list[tuple[int, str, int, str]]:
        limit = self.config.batch_size
        return self.store.read_tx(lambda tx: tx.index_feed.outbox_rows(after, limit))

    def _load(self, kind: str, ids: list[int], *, context: bool = False, embed: bool = True
              ) -> tuple[list[IndexDoc], list[int]]:
        dates, max_chars = self.index_dates, self.config.embed_max_chars
        before = self.config.embed_context_chars if embed and self.vectors is not None else 0
        return self.store.read_tx(
            lambda c: load_docs(c, kind, ids, index_dates=dates, max_chars=max_chars,
                                context=context, embed_context=before))

    def _resolve(self, ops: list[tuple[int, str, int, str]], *, text: bool = False
                 ) -> tuple[list[IndexDoc], list[int]]:
        """Collapse outbox ops (last wins) into docs to upsert and labels to delete.

        ``text``: docs for the text index (messages carry their parent's text).
        """
        last: dict[tuple[str, int], str] = {}
        for _id, kind, ref, op in ops:
            if kind in KIND_CODES:
                last[(kind, ref)] = op
        by_kind: dict[str, list[int]] = {}
        deletes: list[int] = []
        for (kind, ref), op in last.items():
            if op == "delete":
                deletes.append(make_label(kind, ref))
            else:
                by_kind.setdefault(kind, []).append(ref)
        docs: list[IndexDoc] = []
        for kind, refs in by_kind.items():
            found, gone = self._load(kind, refs, context=text, embed=not text)
            docs.extend(found)
            deletes.extend(make_label(kind, r) for r in gone)
        return docs, deletes

    # -- text ------------------------------------------------------------------
    def _text_apply(self, docs: list[IndexDoc], deletes: list[int]) -> None:
        if deletes:
            self.text.delete(deletes)
        if docs:
            self.text.upsert(docs)
            # The block's evidence terms of the new messages, here rather than on the
            # request that first quotes one (memory_core.assembly.block.warm_message_terms).
            warm_message_terms(self.store.location, [
                (d.ref_id, d.msg_role, d.text) for d in docs
                if d.kind == "message" and not d.hidden])

    def text_step(self, *, commit: bool) -> int:
        """Apply one outbox batch to Tantivy; return the number of outbox rows read."""
        with self._locks["text"]:
            pos = self._text_pos
            if pos is None:
                pos = self.checkpoint(self.text_checkpoint)
            ops = self._read_outbox(pos)
            if ops:
                self._text_apply(*self._resolve(ops, text=True))
                self._text_items = max([self._text_items,
                                        *(ref for _, kind, ref, _ in ops if kind == "item")])
                self._text_pos = ops[-1][0]
                self._text_dirty = True
            if commit or not ops:
                self._text_commit()
            if not ops and self.vectors is None:
                self._flush.clear()  # no vector worker to end the catch-up
            return len(ops)

    def _text_commit(self) -> None:
        pos = self._text_pos
        if pos is None or not (self._text_dirty or pos != self._text_saved):
            return
        self.text.commit()
        self._text_dirty = False
        if self._text_items:
            self.indexed_items = max(self.indexed_items or 0, self._text_items)
        if pos != self._text_saved:
            self.store.write_tx_sync(_set_checkpoint, self.text_checkpoint, pos)
            self._text_saved = pos

    # -- vectors -----------------------------------------------------------------
    def _vectors_for(self, docs: list[IndexDoc], *, use_cache_all: bool) -> np.ndarray:
        """Return vectors for ``docs``: cached rows of this model, the rest embedded."""
        assert self.embedder is not None
        dim = self.embedder.dim
        out = np.zeros((len(docs), dim), dtype=np.float32)
        cacheable = [i for i, d in enumerate(docs) if use_cache_all or d.kind == "message"]
        cached: dict[tuple[str, int], bytes] = {}
        if cacheable:
            def q(tx: Tx) -> dict[tuple[str, int], bytes]:
                got: dict[tuple[str, int], bytes] = {}
                for kind in {docs[i].kind for i in cacheable}:
                    refs = [docs[i].ref_id for i in cacheable if docs[i].kind == kind]
                    for ref, blob in tx.index_feed.cached_vectors(
                            kind, self.model_key, dim, refs).items():
                        got[(kind, ref)] = blob
                return got
            cached = self.store.read_tx(q)
        todo: list[int] = []
        known: list[int] = []
        for i, d in enumerate(docs):
            blob = cached.get((d.kind, d.ref_id))
            if blob is not None and len(blob) == dim * 4:
                out[i] = np.frombuffer(blob, dtype=np.float32)
            elif (vec := self._by_text.get(d.embed_text)) is not None and len(vec) == dim:
                self._by_text.move_to_end(d.embed_text)
                out[i] = vec
                known.append(i)
            else:
                todo.append(i)
        now = time.time()
        if known:  # embedded before under another ref: store it for this one too
            self.store.write_tx(_store_vectors, [
                (docs[i].kind, docs[i].ref_id, self.model_key, dim, out[i].tobytes(), now)
                for i in known])
        first: dict[str, int] = {}  # the same text twice in this step: embed it once
        again: list[tuple[int, int]] = []
        for i in todo:
            j = first.setdefault(docs[i].embed_text, i)
            if j != i:
                again.append((i, j))
        todo = [i for i in todo if first[docs[i].embed_text] == i]
        bs = self.config.embed_batch_size
        for s in range(0, len(todo), bs):
            idx = todo[s : s + bs]
            self._give_way()
            if self._stop.is_set():  # stop between batches, not after the whole step
                raise _Stopping
            vecs = self._embed([docs[i].embed_text for i in idx])
            self.embedded_texts += len(idx)
            for i in idx:
                self.embedded_kinds[docs[i].kind] = self.embedded_kinds.get(docs[i].kind, 0) + 1
            out[idx] = vecs
            for i in idx:
                self._remember(docs[i].embed_text, out[i])
            done = set(idx)
            for i, j in again:
                if j in done:
                    out[i] = out[j]
            self.store.write_tx(_store_vectors, [
                (docs[i].kind, docs[i].ref_id, self.model_key, dim,
                 out[i].astype(np.float32).tobytes(), now)
                for i in idx + [i for i, j in again if j in done]
            ])
            self._pace()
        return out

    def _remember(self, text: str, vec: np.ndarray) -> None:
        self._by_text[text] = vec.copy()
        if len(self._by_text) > TEXT_CACHE_SIZE:
            self._by_text.popitem(last=False)

    def _pace(self) -> None:
        """Keep this worker under the CPU ceiling (``_Duty``); a no-op outside the
        worker threads (rebuild, catch-up)."""
        duty = getattr(self._duty, "duty", None)
        if duty is not None:
            duty.pace()

    def _worker_cpu(self, which: str) -> Callable[[], float]:
        """CPU seconds charged to the ``which`` worker on the calling thread."""
        embedder = self.embedder
        if which == "vector" and isinstance(embedder, SerialEmbedder):
            return lambda: time.thread_time() + embedder.cpu_seconds["document"]
        return time.thread_time

    def paced_seconds(self) -> float:
        """Seconds the workers have slept so far to keep under the CPU ceiling."""
        return sum(duty.slept for duty in list(self._duties.values()))

    def _embed(self, texts: list[str]) -> np.ndarray:
        """One embedding batch; with a :class:`SerialEmbedder`, the wait for it ends
        as soon as :meth:`close` asks (raises ``_Stopping``). The batch then finishes
        on the embedder's own thread, unwaited for: a stop never waits for a batch
        (``embed_batch_size`` texts can take seconds on a busy machine)."""
        assert self.embedder is not None
        if not isinstance(self.embedder, SerialEmbedder):
            return self.embedder.embed(texts)
        fut = self.embedder.submit(texts)
        while True:
            try:
                return fut.result(timeout=_STOP_POLL_S)
            except FutureTimeout:
                if self._stop.is_set():
                    fut.cancel()  # only takes effect while still queued
                    raise _Stopping from None

    def _vector_apply(self, docs: list[IndexDoc], deletes: list[int], *, rebuild: bool) -> int:
        if self.vectors is None or self.embedder is None:
            return 0
        if deletes:
            self.vectors.delete(deletes)
        wanted = [d for d in docs if d.kind in self.config.vector_kinds and d.embed_text]
        skipped = [d.label for d in docs if d.kind not in self.config.vector_kinds
                   or not d.embed_text]
        if skipped:
            self.vectors.delete(skipped)
        if wanted:
            vecs = self._vectors_for(wanted, use_cache_all=rebuild)
            self.vectors.upsert(wanted, vecs)
            if not rebuild and self.config.dedupe_similarity > 0:
                self._merge_duplicates(wanted, vecs)
            if not rebuild and self.config.update_similarity > 0:
                self._revise_by_meaning(wanted, vecs)
        return len(wanted)

    def _merge_duplicates(self, docs: list[IndexDoc], vecs: np.ndarray) -> int:
        """Write-time dedupe, vector half: merge each item just embedded into an older
        active item of its scope whose vector is at least ``dedupe_similarity`` alike,
        when :func:`memory_core.items.writer.merge_duplicate` agrees (kinds that are one
        statement said two ways, same speaker, value, numbers and polarity; words that
        reword rather than replace; the stronger kind is kept, so the item just
        embedded may be the one kept). Off the request path: this runs on the
        indexer's vector thread. Returns merges made."""
        from memory_core.items import writer

        threshold = self.config.dedupe_similarity
        merged = 0
        for doc, vec in zip(docs, vecs, strict=True):
            if doc.kind != "item":
                continue
            flt = SearchFilter(tenant=doc.tenant, role=doc.role, kinds=("item",))
            for label, sim in self.vectors.search(vec, flt, 8) if self.vectors else []:
                _kind, ref = split_label(label)
                if ref >= doc.ref_id or sim < threshold:
                    continue
                try:
                    gone = self.store.write_tx_sync(writer.merge_duplicate, doc.ref_id, ref)
                except Exception:  # noqa: BLE001 - dedupe is best effort; indexing goes on
                    log.exception("vector dedupe of item %s failed", doc.ref_id)
                    break
                if gone is not None:
                    kept = ref if gone == doc.ref_id else doc.ref_id
                    log.info("item %s merged into item %s (cosine %.3f)", gone, kept, sim)
                    self.vectors.delete(  # type: ignore[union-attr]
                        [doc.label if gone == doc.ref_id else label])
                    merged += 1
                    if gone == doc.ref_id:
                        break
        return merged

    def _revise_by_meaning(self, docs: list[IndexDoc], vecs: np.ndarray) -> int:
        """Supersession, vector half: each update just embedded that replaced nothing by
        its words supersedes the older item of its speaker it is most alike
        (:func:`memory_core.items.writer.revise_by_meaning`, thresholds
        ``update_similarity`` and ``update_margin``). Off the request path: this runs
        on the indexer's vector thread. Returns items superseded."""
        from memory_core.items import writer

        if self.vectors is None:
            return 0
        revised = 0
        for doc, vec in zip(docs, vecs, strict=True):
            if doc.kind != "item":
                continue
            row = self.store.read_tx(lambda tx, ref=doc.ref_id: tx.item_writes.item(ref))
            if row is None or not writer.revisable(row):
                continue
            flt = SearchFilter(tenant=doc.tenant, role=doc.role, kinds=("item",))
            near = [(split_label(label)[1], sim)
                    for label, sim in self.vectors.search(vec, flt, _REVISE_NEIGHBOURS)]
            try:
                gone = self.store.write_tx_sync(
                    functools.partial(writer.revise_by_meaning,
                                      floor=self.config.update_similarity,
                                      margin=self.config.update_margin),
                    doc.ref_id, near)
            except Exception:  # noqa: BLE001 - best effort, as dedupe; indexing goes on
                log.exception("supersession by meaning of item %s failed", doc.ref_id)
                continue
            if gone is not None:
                log.info("item %s superseded by item %s (update said in other words)",
                         gone, doc.ref_id)
                revised += 1
        return revised

    def vector_step(self, *, save: bool) -> int:
        """Apply one outbox batch to the vector index; return outbox rows read."""
        if self.vectors is None:
            return 0
        with self._locks["vector"]:
            pos = self._vec_pos
            if pos is None:
                pos = self.checkpoint(self.vector_checkpoint)
            ops = self._read_outbox(pos)
            if ops:
                self._vector_apply(*self._resolve(ops), rebuild=False)
                self._vec_pos = ops[-1][0]
            if save or (not ops and self._flush.is_set()):
                self._vector_save()
                if not ops:
                    self._flush.clear()
            return len(ops)

    def _vector_save(self) -> None:
        pos = self._vec_pos
        if pos is None or self.vectors is None:
            return
        if pos != self._vec_saved:
            self.vectors.save()
            self.store.write_tx_sync(_set_checkpoint, self.vector_checkpoint, pos)
            self._vec_saved = pos
            self._last_save = time.monotonic()

    # -- drivers -----------------------------------------------------------------
    def catch_up(self, progress: Progress | None = None) -> None:
        """Apply every outbox row past the checkpoints, commit, save (blocking)."""
        while (n := self.text_step(commit=False)):
            if progress:
                progress("text", n)
        self.text_step(commit=True)
        while (n := self.vector_step(save=False)):
            if progress:
                progress("vector", n)
        self.vector_step(save=True)

    def rebuild(self, progress: Progress | None = None) -> dict[str, int]:
        """Empty both indexes and index every row of every table again (blocking).

        Cached vectors of the current model are reused (no re-embedding); the
        checkpoints are set to the outbox head read before the scan, so later rows
        are applied by the workers as usual. Returns counts per kind.
        """
        with self._locks["text"], self._locks["vector"]:
            head = self.outbox_head()
            self.text.clear()
            if self.vectors is not None:
                self.vectors.clear()
            counts: dict[str, int] = {}
            for kind in KIND_CODES:
                after = 0
                while ids := self.store.read_tx(scan_ids, kind, after, self.config.batch_size):
                    after = ids[-1]
                    docs, _gone = self._load(kind, ids, context=True)
                    self.text.upsert(docs)
                    if progress:
                        progress("text", len(ids))
                    n = self._vector_apply(docs, [], rebuild=True)
                    if progress and n:
                        progress("vector", n)
                    counts[kind] = counts.get(kind, 0) + len(docs)
            self.text.commit()
            if self.vectors is not None:
                self.vectors.save()
            self.store.write_tx_sync(_set_checkpoint, self.text_checkpoint, head)
            self.store.write_tx_sync(_set_checkpoint, self.vector_checkpoint, head)
            self._text_pos = self._text_saved = head
            self._text_dirty = False
            self._vec_pos = self._vec_saved = head
        return counts

    def _give_way(self) -> None:
        """Wait for requests in flight, within this worker step's budget (outside
        a step, e.g. rebuild: the whole ``foreground_wait_ms``); see ``foreground``."""
        step = getattr(self._budget, "step", None)
        (step or StepBudget(self.foreground, self.config.foreground_wait_ms / 1000)).give_way()

    def notify(self) -> None:
        """Wake both workers now (new outbox rows were committed)."""
        for ev in self._wake.values():
            ev.set()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until both checkpoints reach the outbox head seen at call time.

        Returns ``False`` on timeout (seconds). Wakes the workers first.
        """
        head = self.outbox_head()
        deadline = time.monotonic() + timeout
        self._flush.set()
        self.notify()
        while time.monotonic() < deadline:
            done_text = self.checkpoint(self.text_checkpoint) >= head
            done_vec = self.vectors is None or self.checkpoint(self.vector_checkpoint) >= head
            if done_text and done_vec:
                return True
            self.notify()
            time.sleep(0.02)
        return False

    def _loop(self, which: str) -> None:
        background_priority()
        cfg = self.config
        wake = self._wake[which]
        last = time.monotonic()
        duty = _Duty(cfg.background_cpu_share, self._worker_cpu(which), self._stop,
                     self._flush)
        self._duty.duty = duty
        self._duties[which] = duty
        while not self._stop.is_set():
            duty.start()
            try:
                self._budget.step = StepBudget(self.foreground, cfg.foreground_wait_ms / 1000)
                self._give_way()
                if self._stop.is_set():
                    break
                if which == "text":
                    due = (time.monotonic() - last) * 1000 >= cfg.commit_interval_ms
                    n = self.text_step(commit=due)
                    if due:
                        last = time.monotonic()
                else:
                    due = time.monotonic() - self._last_save >= cfg.vector_save_interval_seconds
                    n = self.vector_step(save=due)
                self.errors.pop(which, None)
            except _Stopping:
                break
            except Exception as exc:  # noqa: BLE001 - worker boundary: log and retry later
                if self._stop.is_set():  # closing underneath the step: nothing to retry
                    log.debug("%s indexer step ended by the stop: %s", which, exc)
                    break
                first = self.errors.get(which) != str(exc)
                log.error("%s indexer step failed: %s", which, exc, exc_info=first)
                self.errors[which] = str(exc)
                n = 0
                self._stop.wait(max(1.0, cfg.poll_interval_ms / 1000))
            if n == 0:
                wake.wait(cfg.poll_interval_ms / 1000)
                wake.clear()
            else:
                duty.pace()

    def start(self) -> None:
        """Start the ``lcm-index-text`` and ``lcm-index-vector`` threads (idempotent)."""
        if self._threads:
            return
        for which in ("text", "vector"):
            if which == "vector" and self.vectors is None:
                continue
            t = threading.Thread(target=self._loop, args=(which,), name=f"lcm-index-{which}",
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def close(self, timeout: float = 120.0) -> bool:
        """Stop the workers, then commit/save what was applied and advance checkpoints,
        all within ``timeout`` seconds; log what is left for the next start.

        A worker in an embedding step stops at once: it no longer waits for the
        batch in progress (:meth:`_embed`) and starts no other. A worker still busy
        at the deadline (a long Tantivy step, say) is left running (a daemon thread)
        and its index is not saved: its checkpoint stays where it was, and the next
        start applies the rest. Returns ``True``
        when every worker stopped and every index was saved.
        """
        began = time.monotonic()
        deadline = began + max(0.0, timeout)
        self._stop.set()
        self.foreground.close()
        self.notify()
        for t in self._threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        busy = [t.name for t in self._threads if t.is_alive()]
        self._threads.clear()
        clean = not busy
        if busy:
            log.warning("search indexer: %s still busy after %.1f s; stopping without it",
                        ", ".join(busy), timeout)
        for which, save in (("text", self._text_commit), ("vector", self._vector_save)):
            lock = self._locks[which]
            if not lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                clean = False
                continue
            try:
                save()
            finally:
                lock.release()
        self._log_left(time.monotonic() - began)
        return clean

    def _log_left(self, took: float) -> None:
        """Log the outbox rows (and messages among them) each index has not applied."""
        try:
            def q(tx: Tx) -> dict[str, tuple[int, int]]:
                out: dict[str, tuple[int, int]] = {}
                names = [("text", self.text_checkpoint)]
                if self.vectors is not None:
                    names.append(("vector", self.vector_checkpoint))
                for which, name in names:
                    out[which] = tx.index_feed.outbox_left(tx.index_feed.checkpoint(name))
                return out
            left = self.store.read_tx(q)
        except Exception as exc:  # noqa: BLE001 - only a report
            log.warning("search indexer: could not count what is left to index: %s", exc)
            return
        behind = {k: v for k, v in left.items() if v[0]}
        if not behind:
            log.info("search indexer: stopped in %.1f s with every index up to date", took)
            return
        log.info("search indexer: stopped in %.1f s; left %s unindexed; caught up on next"
                 " start", took, "; ".join(
                     f"{msgs} messages ({rows} outbox rows) of the {which} index"
                     for which, (rows, msgs) in behind.items()))
