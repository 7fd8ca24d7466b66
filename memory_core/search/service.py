"""SearchService: the façade the engine uses — open, feed, search, rebuild, close.

Construction opens ``<data_dir>/index/text`` (Tantivy; its writer lock is held
until :meth:`close`) and, with an embedder, ``<data_dir>/index/vectors``.
:meth:`start` launches the indexer threads, which first catch up from the
checkpoints (so start never blocks on embedding). After each committed capture,
call :meth:`notify` so the indexer wakes at once; :meth:`wait_idle` blocks until
everything committed so far is searchable (tests, eval, CLI).

Thread-safety: :meth:`search` may be called from any number of threads at once
(Tantivy searches and numpy release the GIL; SQLite reads use thread-local
connections). Query embedding is serialised with the indexer's batches on the
embedder's thread, with priority and a bounded wait (``query_timeout``); on
timeout or embedder failure a hybrid search degrades to BM25 and says so in
``last_degraded``. Never call these methods on the asyncio loop: run them in an
executor (they block on SQLite, Tantivy and the model).
"""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.capture.evidence import storable_text
from memory_core.extraction.units import unit_class
from memory_core.items import standing
from memory_core.items.fields import STATED
from memory_core.search.base import (
    LABEL_SHIFT,
    Hit,
    SearchFilter,
    SearchIndexError,
    split_label,
)
from memory_core.search.docs import DELETED_STATUSES, embed_key
from memory_core.search.embed.base import (
    Embedder,
    EmbedderError,
    SerialEmbedder,
    query_embedding,
    relevance_floor,
)
from memory_core.search.fulltext import TantivyTextIndex
from memory_core.search.hybrid import (
    Fused,
    add_boost,
    add_neighbours,
    add_session,
    apply_boosts,
    drop_unrelated,
    fuse,
    query_periods,
    ranked,
    scale,
)
from memory_core.search.indexer import Indexer, Progress
from memory_core.search.intent import TASK_INTENTS, asked_quantity, query_intents
from memory_core.search.searchconfig import KIND_CODES, SearchConfig
from memory_core.search.successors import current_successors
from memory_core.search.vector import HnswVectorIndex
from memory_core.store.api import EngineStore, Tx

log = logging.getLogger("lcm.search")

_STATEMENT_KINDS = frozenset({"fact", "decision", "constraint", "preference"})
"""Item kinds the memory prior favours (a user's question answers nothing)."""

_WORK_LABELS = frozenset({"goal", "todo", "blocked"})
"""Task labels whose open lines rank as memory (work still to do)."""

FOLD_MIN_SHARE = 0.5
"""An item takes its source turn's higher score only when its own fused score is
at least this share of the turn's (:meth:`SearchService._fold_sources`). Long-session
eval, kept stores searched as at question time (seed 1, 77 questions): rank-1 44 →
45 of 77 with query intents on; 0.3, 0.7 and never taking the score measure alike."""



def _quantity_of(unit: str | None) -> str | None:
    """What kind of quantity a stated value of canonical ``unit`` is (see
    :func:`~memory_core.search.intent.asked_quantity`)."""
    if not unit:
        return None
    cls = unit_class(unit)
    if cls == "%":
        return "percent"
    return cls if cls in ("time", "data", "money", "rate") else "count"


def _standing_rule(row: Any) -> bool:
    """Whether an item row is a rule the user set that says it stands: an active
    constraint of the user's that says so ("Never …", "always", 一律, 今後;
    :func:`memory_core.items.standing.is_standing_rule`), not one scoped to the answer
    or material at hand (:func:`memory_core.items.standing.one_off`)."""
    return (row["status"] == "active" and row["evidence"] in STATED
            and row["kind"] == "constraint" and standing.is_standing_rule(row["text"])
            and not standing.one_off(row))


TASK_LINES_PER_LABEL = 3
"""Most open task lines of one label a query intent adds as candidates (the current
thread's first, then the newest)."""


@dataclass(frozen=True, slots=True)
class CandidatePool:
    """The keyword and vector candidate lists of several scopes, each merged into one
    list best first and cut to ``depth`` (:meth:`SearchService.pool`).

    A hybrid search scales each list over its own candidates; run in one scope at a
    time, a scope where no keyword matches scales its best vector neighbour to the
    top, as high as a whole-query match elsewhere, so per-scope scores do not compare
    (an operator's search across tenants ranked another tenant's unrelated item above
    an exact match). Given a pool, :meth:`SearchService.search` fuses the pooled
    lists, which hold only the candidates of the scopes that were pooled (each
    scope's vectors come from its own partition), and keeps its own scope's: its
    scores are those of one search over the pooled scopes together."""

    bm25: tuple[tuple[int, float], ...]
    vector: tuple[tuple[int, float], ...]
    depth: int


class SearchService:
    """Full-text + vector search over one store (see module docstring).

    ``config`` is clamped; ``embedder`` ``None`` means BM25 only (``mode="vector"``
    then returns nothing). ``clock`` returns UNIX seconds (recency boost).
    ``query_timeout``/``index_dates`` override the config's values (eval, tests).
    Raises ``SearchIndexError`` if an index cannot be opened.

    ``readonly``: search what is on disk beside the process that writes it (an
    operator's command while the proxy runs): no Tantivy writer lock, nothing
    written (indexes, checkpoints); :meth:`start`, :meth:`catch_up` and
    :meth:`rebuild` are refused with ``SearchIndexError``. Results are as fresh as
    the writer's last commit (text) and save (vectors).
    """

    def __init__(
        self,
        store: EngineStore,
        data_dir: str | Path,
        config: SearchConfig | None = None,
        embedder: Embedder | None = None,
        *,
        clock: Callable[[], float] = time.time,
        query_timeout: float | None = None,
        index_dates: bool | None = None,
        readonly: bool = False,
    ) -> None:
        self.config = (config or SearchConfig()).clamped()
        self.readonly = readonly
        self.store = store
        self.embedder = embedder
        self.clock = clock
        floor = relevance_floor(embedder.model_id) if embedder is not None else None
        self.vector_floor: float | None = (
            floor + self.config.vector_floor_shift
            if floor is not None and self.config.vector_floor else None)
        """Similarity below which a hit only the vector list found is dropped (hybrid)."""
        self.query_timeout = (query_timeout if query_timeout is not None
                              else self.config.query_timeout_seconds)
        root = Path(data_dir) / "index"
        cfg = self.config
        dates = cfg.index_dates if index_dates is None else index_dates
        self.text = TantivyTextIndex(root / "text", stemming=cfg.stemming, index_dates=dates,
                                     heap_bytes=cfg.writer_heap_bytes, threads=cfg.writer_threads,
                                 readonly=readonly)
        self.vectors: HnswVectorIndex | None = None
        if embedder is not None:
            self.vectors = HnswVectorIndex(
                root / "vectors", embedder.dim, embed_key(embedder.model_id,
                                                          cfg.embed_context_chars),
                m=cfg.hnsw_m, ef_construction=cfg.hnsw_ef_construction,
                ef_search=cfg.hnsw_ef_search, flat_max=cfg.flat_max_vectors,
                readonly=readonly,
            )
        from memory_core.replica import checkpoint_names

        self.indexer = Indexer(store, self.text, self.vectors, embedder, cfg,
                               checkpoints=checkpoint_names(store, data_dir))
        self.indexer.index_dates = dates
        self.last_degraded: str | None = None
        self._closed = False
        self._name_words: dict[str, frozenset[str]] = {}

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        """Start background indexing (catch-up from the checkpoints comes first)."""
        self._writable()
        self.indexer.start()

    def notify(self) -> None:
        """Tell the indexer new outbox rows were committed (cheap, any thread)."""
        self.indexer.notify()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until all committed changes are indexed; ``False`` on timeout (s)."""
        return self.indexer.wait_idle(timeout)

    def catch_up(self, progress: Progress | None = None) -> None:
        """Index everything past the checkpoints now, on this thread (blocking)."""
        self._writable()
        self.indexer.catch_up(progress)

    def rebuild(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild both indexes from SQLite (blocking); returns docs per kind."""
        self._writable()
        return self.indexer.rebuild(progress)

    def close(self, timeout: float = 120.0) -> None:
        """Stop the indexer, commit/save, release the Tantivy writer lock, within about
        ``timeout`` seconds (see :meth:`Indexer.close`). An indexer worker still busy
        at the deadline keeps its index objects (released at process exit)."""
        if self._closed:
            return
        self._closed = True
        if self.readonly:
            return
        if not self.indexer.close(timeout):
            return
        self.text.close()
        if self.vectors is not None:
            self.vectors.close()

    def _writable(self) -> None:
        if self.readonly:
            raise SearchIndexError("this search service is read-only")

    def status(self) -> dict[str, Any]:
        """Counts, checkpoints, outbox head and worker errors (JSON-ready)."""

        return {
            "text_docs": self.text.count(),
            "vectors": self.vectors.count() if self.vectors else 0,
            "model": self.embedder.model_id if self.embedder else None,
            "outbox_head": self.indexer.outbox_head(),
            "checkpoints": {
                "text": self.indexer.checkpoint(self.indexer.text_checkpoint),
                "vector": self.indexer.checkpoint(self.indexer.vector_checkpoint),
            },
            "errors": dict(self.indexer.errors),
        }

    # -- search ----------------------------------------------------------------
    def embed_query(self, query: str, timeout: float | None = None) -> np.ndarray | None:
        """Return the query vector, or ``None`` (no embedder, timeout, failure).
        ``timeout``: seconds to wait for a shared embedder (default ``query_timeout``)."""
        if self.embedder is None or not query.strip():
            return None
        # as the indexed texts (docs.row_to_doc); a cut emoji's lone surrogate as U+FFFD
        query = unicodedata.normalize("NFC", storable_text(query))
        try:
            emb: Any = self.embedder
            if isinstance(emb, SerialEmbedder):
                vecs = emb.embed_queries([query], timeout=self.query_timeout
                                         if timeout is None else timeout)
            else:
                vecs = query_embedding(emb)([query])
            return np.asarray(vecs[0], dtype=np.float32)
        except (TimeoutError, EmbedderError, OSError, RuntimeError) as exc:
            log.warning("query embedding failed (%s): falling back to BM25", exc)
            self.last_degraded = f"query embedding failed: {exc}"
            return None

    def search(
        self,
        tenant: str,
        role: str,
        query: str,
        *,
        k: int = 10,
        kinds: tuple[str, ...] | list[str] | None = None,
        thread_ids: tuple[int, ...] | list[int] | None = None,
        session: str | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
        mode: str | None = None,
        current_thread_id: int | None = None,
        include_hidden: bool = True,
        require_all: bool = False,
        query_vector: np.ndarray | None = None,
        vectors: bool = True,
        pool: CandidatePool | None = None,
    ) -> list[Hit]:
        """Return up to ``k`` hits for ``query`` within one tenant and role.

        ``mode``: ``hybrid`` (default from config), ``bm25`` (Tantivy only, BM25
        scores; keyword and ``*`` wildcards; ``require_all`` for grep semantics) or
        ``vector`` (cosine similarity). Only ``hybrid`` also matches a message's
        neighbouring turns (``context_weight``); in ``bm25`` and ``hybrid`` a query
        word that is a speaker's name in the scope matches the speaker, not the text
        (``speaker_boost`` > 0). Filters: ``kinds`` ⊂ {message, item,
        agent_memory, summary}; ``thread_ids``; ``session``; ``start_time``/
        ``end_time`` in UNIX seconds, inclusive. ``current_thread_id`` earns the
        scope boost. ``query_vector`` skips query embedding (benchmarks, eval).
        ``vectors=False``: a ``hybrid`` search without the vector list (no query
        embedding): BM25 with the turn-before field, the neighbour, speaker,
        session and date scores.
        Hybrid scores are normalised fused scores plus boosts (``Hit.boosts``). In
        a hybrid search over several kinds, the records of the kind of memory the
        query asks for (:func:`~memory_core.search.intent.query_intents`) gain
        ``intent_boost`` (``boosts["intent"]``), and a goal, blocker, TODO or
        progress question adds the open task lines of that label as candidates;
        a preference question lifts the kept preferences (agent memories) by
        ``standing_preference_boost`` more (``boosts["standing"]``), and a question
        asking for a kind of quantity (a duration, size, count or percentage,
        :func:`~memory_core.search.intent.asked_quantity`) lifts the items whose
        value is one by ``quantity_boost`` (``boosts["quantity"]``).
        A superseded item that matches brings the item that replaced it in the
        end (``superseded_by``, within the filters) to at least its own score as a
        current item (``boosts["successor"]``; hybrid searches that include items),
        so a hit may come from neither list (``bm25_rank`` and ``vector_rank``
        ``None``).
        ``pool`` (hybrid): the candidate lists of several scopes, this one among them
        (:meth:`pool`); the fused scores are those of one search over all of them
        (ranks and scaling over the pooled lists), the hits this scope's own, so hits
        of several scopes compare by score (:class:`CandidatePool`).
        Raises ``ValueError`` for an unknown mode or kind.
        """
        cfg = self.config
        mode = mode or cfg.default_mode
        if mode not in ("hybrid", "bm25", "vector"):
            raise ValueError(f"unknown search mode {mode!r}")
        k = self._checked_k(k, kinds)
        flt = SearchFilter(
            tenant=tenant, role=role,
            kinds=tuple(kinds) if kinds is not None else None,
            thread_ids=tuple(int(t) for t in thread_ids) if thread_ids is not None else None,
            session=session, start_time=start_time, end_time=end_time,
            include_hidden=include_hidden,
        )
        self.last_degraded = None
        n_cand = max(k, cfg.candidates)
        bm25: list[tuple[int, float]] = []
        vec: list[tuple[int, float]] = []
        speakers: frozenset[str] = frozenset()
        if mode in ("hybrid", "bm25"):
            bm25, speakers = self._keyword(
                query, flt, n_cand if mode == "hybrid" else k, require_all=require_all,
                context_weight=cfg.context_weight if mode == "hybrid" else 0.0)
        if mode in ("hybrid", "vector") and self.vectors is not None and vectors:
            qv = query_vector if query_vector is not None else self.embed_query(query)
            if qv is not None:
                vec = self.vectors.search(qv, flt, n_cand if mode == "hybrid" else k)
                vec = [(lb, s) for lb, s in vec if s >= cfg.vector_min_similarity]
        if mode == "bm25":
            return [self._plain(lb, s, r, "bm25") for r, (lb, s) in enumerate(bm25, 1)]
        if mode == "vector":
            return [self._plain(lb, s, r, "vector") for r, (lb, s) in enumerate(vec, 1)]
        # Task-state turns rank as memory only where memory competes with turns: a
        # search of messages alone (LoCoMo, the injection's evidence search) keeps
        # plain turn ranking, as the config documents.
        several = flt.kinds is None or any(kd != "message" for kd in flt.kinds)
        # Query intents and the keyword list's reference score only where kinds of
        # record compete with each other: not in a search of one kind (the block's
        # searches on the request path, LoCoMo's turns).
        competing = flt.kinds is None or len(set(flt.kinds)) > 1
        reference = 0.0
        if (competing and bm25 and vec and cfg.fusion == "minmax"
                and cfg.bm25_reference_share > 0):
            # A vector list is there to rank what the keywords do not cover.
            reference = cfg.bm25_reference_share * self.text.reference_score(query, speakers)
        if pool is not None:
            own = {lb for lb, _ in bm25} | {lb for lb, _ in vec}
            fused = {lb: e for lb, e in fuse(list(pool.bm25), list(pool.vector), cfg,
                                             pool.depth, reference).items() if lb in own}
        else:
            fused = fuse(bm25, vec, cfg, n_cand, reference)
        intents = (query_intents(query) if competing and cfg.intent_boost > 0
                   else frozenset())
        if intents & set(TASK_INTENTS) and (flt.kinds is None or "message" in flt.kinds):
            # The open task line asked for is a candidate even when neither index
            # found it ("is anything stopping us?" shares no word with "Blocked: …").
            for label in self._open_task_lines(flt, intents, current_thread_id):
                fused.setdefault(label, Fused(label))
        if not fused:
            return []
        needle = " ".join(query.casefold().split())
        exact_needle = needle if (cfg.exact_match_boost > 0 and len(needle) >= 3
                                  and "*" not in needle) else None
        meta = self._metadata(list(fused), exact_needle, with_names=bool(speakers))
        items = self._item_rows(fused)
        # A superseded candidate stands for the value that replaced it in the end:
        # that item joins the candidates (lifted in _memory_prior). ``every_item``
        # holds it too; the fold below does not (it has no score of its own).
        successors, added = self._successors(fused, items, flt, meta)
        every_item = items + added
        # Turns that rank as memory, by status: open task lines (and, below, tool
        # outputs that match the words) and replaced task lines; ``labels`` maps
        # every open task line among the candidates to its task labels.
        turns = (self._task_turns(fused) if several
                 else {"open": set(), "superseded": set(), "labels": {}})
        if several:
            # A tool output among the best keyword matches is an observation the
            # agent made (a test run, a file it read): memory, as an open goal is.
            # A question about what the agent saw also takes one among the best
            # matches of either list.
            wide = cfg.tool_output_intent_rank if "observation" in intents else 0
            turns["open"] |= {lb for lb in meta["tool"] if _within(
                fused.get(lb), max(cfg.tool_output_prior_rank, wide), wide)}
        asked = (self._asked_for(fused, intents, every_item, meta["tool"], turns)
                 if intents else set())
        # An open task line is a record of its own: it is not folded into a
        # statement extracted from the same turn (task lines yield no items).
        folded = self._fold_sources(fused, items, keep=set(turns["labels"]))
        if cfg.neighbor_weight > 0:
            # Memory gets no context from the turns around it: an open task line's
            # turn is a record of its own (a tool output keeps it: the call before
            # it names what was run).
            lines = turns["open"] - meta["tool"]
            add_neighbours(fused, {lb: near for lb, near in _adjacent(meta["parent"], fused)
                                   .items() if lb not in lines}, cfg.neighbor_weight)
        if speakers:
            add_boost(fused, "speaker", {lb for lb, name in meta["name"].items()
                                         if self._speaks(name, speakers)}, cfg.speaker_boost)
        if cfg.date_boost > 0 and (periods := query_periods(query)):
            add_boost(fused, "date", {lb for lb, t in meta["time"].items()
                                      if any(a <= t < b for a, b in periods)}, cfg.date_boost)
        if cfg.session_boost > 0:
            # Plain turns only: a sitting is a property of the conversation's turns.
            # Memory (items, agent memories, task and tool turns) gets the memory prior
            # instead: a one-sitting thread would otherwise lift all of its items by
            # the same amount above the agent memories, which belong to no thread
            # (an item's own turn reaches it through _fold_sources).
            msg = KIND_CODES["message"]
            memory = turns["open"] | turns["superseded"]
            add_session(fused, {lb: (meta["thread"][lb], int(t // 86400))
                                for lb, t in meta["time"].items()
                                if meta["thread"].get(lb) and lb >> LABEL_SHIFT == msg
                                and lb not in memory}, cfg.session_boost)
        apply_boosts(
            fused, cfg, exact=meta["exact"], threads=meta["thread"],
            times=meta["time"], current_thread_id=current_thread_id, now=self.clock(),
        )
        self._memory_prior(fused, every_item, folded, turns, meta["tool"] | asked, successors)
        add_boost(fused, "intent", asked, cfg.intent_boost)
        # A preference someone chose to keep outranks one read from a turn in passing.
        add_boost(fused, "standing", {lb for lb in asked if lb >> LABEL_SHIFT
                                      == KIND_CODES["agent_memory"]},
                  cfg.standing_preference_boost)
        if cfg.quantity_boost > 0 and competing and (want := asked_quantity(query)):
            # "how many machines": the statement whose value is a count, not the port
            # of the same environment
            add_boost(fused, "quantity", {
                (KIND_CODES["item"] << LABEL_SHIFT) | int(r["id"]) for r in items
                if r["status"] == "active" and r["evidence"] in STATED
                and r["kind"] in _STATEMENT_KINDS and _quantity_of(r["unit"]) == want},
                cfg.quantity_boost)
        if self.vector_floor is not None:
            drop_unrelated(fused, self.vector_floor)
        hits = []
        for e in ranked(fused, cfg.min_score, k):
            kind, ref = split_label(e.label)
            hits.append(Hit(
                kind=kind, ref_id=ref, score=e.score, bm25_rank=e.bm25_rank,
                bm25_score=e.bm25_score, vector_rank=e.vector_rank,
                vector_score=e.vector_score, boosts=e.boosts,
                thread_id=meta["thread"].get(e.label), created_at=meta["time"].get(e.label),
            ))
        return hits

    def candidate_lists(self, tenant: str, role: str, query: str, *, k: int = 10,
                        kinds: tuple[str, ...] | list[str] | None = None,
                        session: str | None = None,
                        query_vector: np.ndarray | None = None,
                        include_hidden: bool = True,
                        ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The keyword and vector ``(label, score)`` lists a hybrid :meth:`search` of
        one tenant and role fuses (filters as there; the vector list from that scope's
        own partition, none without ``query_vector`` or an embedder). For
        :meth:`pool`."""
        k = self._checked_k(k, kinds)
        flt = SearchFilter(tenant=tenant, role=role,
                           kinds=tuple(kinds) if kinds is not None else None,
                           session=session, include_hidden=include_hidden)
        n_cand = max(k, self.config.candidates)
        bm25, _ = self._keyword(query, flt, n_cand, context_weight=self.config.context_weight)
        vec: list[tuple[int, float]] = []
        if self.vectors is not None and query_vector is not None:
            vec = [(lb, sc) for lb, sc in self.vectors.search(query_vector, flt, n_cand)
                   if sc >= self.config.vector_min_similarity]
        return bm25, vec

    def pool(self, lists: Iterable[tuple[list[tuple[int, float]], list[tuple[int, float]]]],
             k: int = 10) -> CandidatePool:
        """Merge the :meth:`candidate_lists` of several scopes into one
        :class:`CandidatePool`: each kind of list best first (ties: lower label),
        cut to the depth a search of ``k`` asks each list for."""
        depth = max(self._checked_k(k, None), self.config.candidates)
        bm25: list[tuple[int, float]] = []
        vec: list[tuple[int, float]] = []
        for b, v in lists:
            bm25 += b
            vec += v

        def best(pairs: list[tuple[int, float]]) -> tuple[tuple[int, float], ...]:
            return tuple(sorted(pairs, key=lambda p: (-p[1], p[0]))[:depth])

        return CandidatePool(best(bm25), best(vec), depth)

    def keyword_hits(self, tenant: str, role: str, query: str, *, k: int,
                     kinds: tuple[str, ...], include_hidden: bool = True
                     ) -> list[tuple[str, int, float]]:
        """``search(..., mode="bm25")`` as ``(kind, ref_id, BM25 score)`` tuples, best
        first: the same hits in the same order, without a :class:`Hit` per result
        (the injection block's two searches on every request take up to 112 hits
        by default, about 0.2 ms of objects it reads three fields of). Raises
        ``ValueError`` for an unknown kind."""
        k = self._checked_k(k, kinds)
        flt = SearchFilter(tenant=tenant, role=role, kinds=tuple(kinds),
                           include_hidden=include_hidden)
        self.last_degraded = None
        pairs, _ = self._keyword(query, flt, k)
        return [(*split_label(lb), s) for lb, s in pairs]

    def _checked_k(self, k: int, kinds: Sequence[str] | None) -> int:
        """``k`` within 1..``max_k``; raises ``ValueError`` for an unknown kind."""
        for kind in kinds or ():
            if kind not in KIND_CODES:
                raise ValueError(f"unknown kind {kind!r}")
        return max(1, min(int(k), self.config.max_k))

    def _keyword(self, query: str, flt: SearchFilter, limit: int, *,
                 require_all: bool = False, context_weight: float = 0.0
                 ) -> tuple[list[tuple[int, float]], frozenset[str]]:
        """The BM25 list, ``(label, score)`` best first, and the query's words that
        name a speaker in ``flt``'s scope (matched as speakers; none with
        ``require_all`` or ``speaker_boost`` 0)."""
        speakers: frozenset[str] = frozenset()
        if self.config.speaker_boost > 0 and not require_all:
            speakers = self.text.speaker_terms(query, flt)
        return self.text.search(query, flt, limit, require_all=require_all, speakers=speakers,
                                context_weight=context_weight), speakers

    def _item_rows(self, fused: dict[int, Any]) -> list[Any]:
        """Rows (:data:`~memory_core.search.successors.ITEM_COLUMNS`) of the ``item``
        candidates (one query; ``[]`` when there are none)."""
        refs = sorted(ref for kind, ref in map(split_label, fused) if kind == "item")
        if not refs:
            return []
        return self.store.read_tx(lambda tx: tx.items.search_items(refs))

    def _successors(self, fused: dict[int, Any], rows: list[Any], flt: SearchFilter,
                    meta: dict[str, dict[int, Any]]) -> tuple[dict[int, int], list[Any]]:
        """``(successor, added)``: label of each superseded item candidate → label of
        its current successor within ``flt``
        (:func:`~memory_core.search.successors.current_successors`), and the rows of
        the successors that were not candidates. Those join ``fused`` (score 0,
        no list ranks: a hit found through the item it replaced) and ``meta``'s
        thread and time. No query when no candidate is superseded."""
        pairs, found = self.store.read_tx(current_successors, rows, flt)
        code = KIND_CODES["item"] << LABEL_SHIFT
        have = {int(r["id"]) for r in rows}
        added = []
        for ref, row in found.items():
            label = code | ref
            if label not in fused:
                fused[label] = Fused(label)
                meta["thread"][label] = int(row["thread_id"] or 0)
                meta["time"][label] = float(row["created_at"] or 0.0)
            if ref not in have:
                added.append(row)
        return {code | old: code | new for old, new in pairs.items()}, added

    @staticmethod
    def _fold_sources(fused: dict[int, Any], rows: list[Any],
                      keep: set[int] | frozenset[int] = frozenset()) -> set[int]:
        """Fold each source message into the item of it that matches best; return the
        labels of those messages (the caller drops them at the end).

        An item and the message it was extracted from say the same thing, and the
        message, being longer, often matches better. A turn can hold several
        statements, so only its best-scoring item candidate (by its own score)
        takes the turn's score, when that is higher; its sibling items keep their
        own (a sibling that is a mere vector neighbour of the query must not rise
        with the turn), and it takes it only when its own score is at least
        :data:`FOLD_MIN_SHARE` of the turn's (a turn that matched through its
        other statements lends its score to none of them). Items retracted while
        the index lags are skipped and do not hide their turn. Run on the plain
        fused scores, before neighbour and session boosts: an item takes what its
        own turn earned, not what the turns around it did. The message stays a
        candidate until the end so that its neighbours still get its context.
        Messages in ``keep`` (open task lines, records of their own) are never
        folded."""
        code = KIND_CODES["item"] << LABEL_SHIFT
        msg_code = KIND_CODES["message"] << LABEL_SHIFT
        best: dict[int, Any] = {}
        for r in rows:
            if r["source_message_id"] is None or r["status"] in DELETED_STATUSES:
                continue
            source = msg_code | int(r["source_message_id"])
            if source in keep:
                continue
            item = fused.get(code | int(r["id"]))
            if source in fused and item is not None and (
                    source not in best or item.score > best[source].score):
                best[source] = item
        for source, item in best.items():
            message = fused[source]
            if message.score > item.score >= FOLD_MIN_SHARE * message.score:
                item.boosts["source"] = message.score - item.score
                item.score = message.score
        return set(best)

    def _task_turns(self, fused: dict[int, Any]) -> dict[str, Any]:
        """Labels of the message candidates that state work still to do — a goal, a
        TODO or a blocker (not progress or decision lines, which stay ``open`` as
        records) — by the entry's status: ``{"open": …, "superseded": …}`` (a
        ``done`` TODO is in neither), and ``"labels"``: label → the set of task
        labels of every candidate that holds an open task line of any label
        (progress and decision included; query intents use it). Task state has no
        index of its own, so the turn is its record among the candidates. One query
        (indexed by migration 5)."""
        msg_code = KIND_CODES["message"] << LABEL_SHIFT
        msgs = sorted(ref for kind, ref in map(split_label, fused) if kind == "message")
        out: dict[str, Any] = {"open": set(), "superseded": set(), "labels": {}}
        if msgs:
            for r in self.store.read_tx(lambda tx: tx.search.task_lines_of(msgs)):
                label = msg_code | int(r[0])
                if r[1] == "open":  # a turn may hold several task lines
                    out["labels"].setdefault(label, set()).add(r[2])
                if r[2] in _WORK_LABELS and r[1] in ("open", "superseded"):
                    out[r[1]].add(label)
        return out

    def _open_task_lines(self, flt: SearchFilter, intents: frozenset[str],
                         current_thread_id: int | None = None) -> list[int]:
        """Message labels of the open task lines whose label an intent asks for
        (``goal``, ``blocked``, ``todo``, ``progress``), at most
        :data:`TASK_LINES_PER_LABEL` per label: the current thread's first, then
        the newest, within ``flt`` (tenant, role, the message's thread, session,
        time range, hidden rounds). One query per label, on the ``task_state_open``
        index (migration 6)."""
        msg_code = KIND_CODES["message"] << LABEL_SHIFT
        current = -1 if current_thread_id is None else int(current_thread_id)
        labels = [name for name in TASK_INTENTS if name in intents]
        ids = self.store.read_tx(lambda tx: tx.search.open_task_lines(
            flt.tenant, flt.role, labels, thread_ids=flt.thread_ids, session=flt.session,
            start_time=flt.start_time, end_time=flt.end_time,
            include_hidden=flt.include_hidden, current_thread=current,
            per_label=TASK_LINES_PER_LABEL))
        return [msg_code | i for i in ids]

    def _asked_for(self, fused: dict[int, Any], intents: frozenset[str], rows: list[Any],
                   tools: set[int], turns: dict[str, Any]) -> set[int]:
        """Labels of the candidates of the kinds the query asks for (``intents``, see
        :mod:`memory_core.search.intent`): turns holding an open task line of an
        asked-for label (``turns["labels"]``), active decision or preference items
        (``rows`` from :meth:`_item_rows`), turns holding an open decision line,
        agent memories of category ``user_preferences``, the user's standing rules
        (:func:`_standing_rule`) for a preference question, and the tool outputs
        (``tools``) that rank as memory (``turns["open"]``). Superseded and
        retracted records are never among them."""
        item_code = KIND_CODES["item"] << LABEL_SHIFT
        out = {lb for lb, names in turns["labels"].items() if names & intents}
        kinds = {kind for kind in ("decision", "preference") if kind in intents}
        out |= {item_code | int(r["id"]) for r in rows
                if r["status"] == "active" and r["kind"] in kinds}
        if "preference" in intents:
            # "Is there anything I've banned …?": a rule the user set for the work,
            # stored as a constraint ("Never put emojis in code comments."), is as
            # much the user's preference as "I prefer …"
            out |= {item_code | int(r["id"]) for r in rows if _standing_rule(r)}
        if "observation" in intents:
            out |= tools & turns["open"]
        if "preference" in intents:
            am_code = KIND_CODES["agent_memory"] << LABEL_SHIFT
            refs = sorted(ref for kind, ref in map(split_label, fused)
                          if kind == "agent_memory")
            if refs:
                out |= {am_code | i for i in self.store.read_tx(
                    lambda tx: tx.search.preference_memories(refs))}
        return out & fused.keys()

    def _memory_prior(self, fused: dict[int, Any], rows: list[Any], folded: set[int],
                      turns: dict[str, Any],
                      ungated: set[int] | frozenset[int] = frozenset(),
                      successors: dict[int, int] | None = None) -> None:
        """Rank memory items by what they are; drop the messages folded into them.

        An active statement the user made (a fact, decision, constraint or
        preference; not a question), every agent memory and each turn in
        ``turns["open"]`` (open task state, see :meth:`_task_turns`, and tool
        outputs among the best keyword matches, ``tool_output_prior_rank``) gain
        ``memory_item_boost``; a task turn only when it is among the
        ``task_line_prior_rank`` best matches of either list or in ``ungated``
        (the records the query asks for, and the tool outputs). A superseded item
        or replaced task line is scaled by ``superseded_factor``. The ``folded``
        source messages (see :meth:`_fold_sources`) leave the results, so one
        statement does not fill two of the ``k`` places and the hit shown is the
        one that carries its status (a corrected value ranks as superseded rather
        than coming back as the raw turn). The current successor of a superseded
        item (``successors``: labels, see :mod:`memory_core.search.successors`)
        ranks at least as the superseded item would have as a current one (its
        score plus ``memory_item_boost``, ``boosts["successor"]``): a match on an
        old value is a match on the subject, whose current value is the
        successor's.
        """
        cfg = self.config
        code = KIND_CODES["item"] << LABEL_SHIFT
        for label in folded:
            fused.pop(label, None)
        current = {code | int(r["id"]) for r in rows if r["status"] == "active"
                   and r["evidence"] in STATED and r["kind"] in _STATEMENT_KINDS}
        old = {code | int(r["id"]) for r in rows if r["status"] == "superseded"}
        # Agent memories are memories someone chose to keep (a preference set with
        # `memory prefs set`, a note the model saved): as much a statement as an item.
        current |= {lb for lb in fused if lb >> LABEL_SHIFT == KIND_CODES["agent_memory"]}
        # An open task line's turn counts when the query matches it (or asks for
        # it: ``ungated`` holds the asked-for records and the tool outputs, gated
        # on their own rank above).
        gate = cfg.task_line_prior_rank
        current |= {lb for lb in turns["open"]
                    if lb in ungated or _within(fused.get(lb), gate, gate)}
        old |= turns["superseded"] - turns["open"]
        stood_for: dict[int, float] = {}
        for label, new in (successors or {}).items():
            if label in fused and new in fused:
                stood_for[new] = max(stood_for.get(new, 0.0),
                                     fused[label].score + cfg.memory_item_boost)
        add_boost(fused, "memory", current, cfg.memory_item_boost)
        scale(fused, "superseded", old, cfg.superseded_factor)
        for label, score in stood_for.items():
            e = fused[label]
            if score > e.score:
                e.boosts["successor"] = score - e.score
                e.score = score

    def _speaks(self, name: str | None, speakers: frozenset[str]) -> bool:
        """Whether a message ``name`` contains one of the query's speaker words."""
        if not name:
            return False
        words = self._name_words.get(name)
        if words is None:
            words = frozenset(self.text.query_words(name.replace("_", " ")))
            if len(self._name_words) < 10_000:
                self._name_words[name] = words
        return not words.isdisjoint(speakers)

    @staticmethod
    def _plain(label: int, score: float, rank: int, which: str) -> Hit:
        kind, ref = split_label(label)
        if which == "bm25":
            return Hit(kind, ref, score, bm25_rank=rank, bm25_score=score)
        return Hit(kind, ref, score, vector_rank=rank, vector_score=score)

    def _metadata(self, labels: list[int], needle: str | None, *, with_names: bool = False
                  ) -> dict[str, Any]:
        """Thread, time, exact-match flag, parent label and ``name`` of candidate labels,
        and the set ``tool`` of those that are tool outputs (role ``tool``).

        One query per kind. The verbatim test runs inside SQLite (``instr`` on the
        lowercased text) so candidate texts never cross into Python; SQLite's
        ``lower`` folds ASCII only. ``parent`` exists for messages, ``name`` (only
        ``with_names``) for messages and for items (the name of the turn the item
        was said in): a question that names a speaker lifts what that speaker said,
        whether it is found as the turn or as the item extracted from it.
        """
        by_kind: dict[str, list[int]] = {}
        for label in labels:
            kind, ref = split_label(label)
            by_kind.setdefault(kind, []).append(ref)

        def q(tx: Tx) -> dict[str, Any]:
            thread: dict[int, int] = {}
            when: dict[int, float] = {}
            exact: dict[int, bool] = {}
            parent: dict[int, int] = {}
            names: dict[int, str] = {}
            tools: set[int] = set()
            msg_code = KIND_CODES["message"] << LABEL_SHIFT
            for kind, refs in by_kind.items():
                refs.sort()  # rowid order: neighbouring B-tree pages, about 2x faster
                code = KIND_CODES[kind] << LABEL_SHIFT
                for rid, th, ts, ex, par, name, mrole in tx.search.candidate_facts(
                        kind, refs, needle, with_names):
                    label = code | rid
                    if mrole == "tool":
                        tools.add(label)
                    thread[label] = th or 0
                    when[label] = float(ts or 0.0)
                    if ex:
                        exact[label] = True
                    if par is not None:
                        parent[label] = msg_code | par
                    if name is not None and isinstance(name, str):
                        names[label] = name
            return {"thread": thread, "time": when, "exact": exact, "parent": parent,
                    "name": names, "tool": tools}

        return self.store.read_tx(q)


def _within(entry: Fused | None, bm25_rank: int, vector_rank: int) -> bool:
    """Whether a candidate is among the best ``bm25_rank`` keyword matches or the best
    ``vector_rank`` vector matches (1-based ranks; 0 = not that list)."""
    return entry is not None and (
        (entry.bm25_rank is not None and entry.bm25_rank <= bm25_rank)
        or (entry.vector_rank is not None and entry.vector_rank <= vector_rank))


def _adjacent(parents: dict[int, int], fused: dict[int, Any]) -> dict[int, list[int]]:
    """Neighbours among the candidates: each one's parent and children that are also
    candidates (a neighbour outside the candidates would add nothing)."""
    out: dict[int, list[int]] = {}
    for label, par in parents.items():
        if par in fused:
            out.setdefault(label, []).append(par)
            out.setdefault(par, []).append(label)
    return out
