"""MemoryConfig: the engine's settings, frozen and clamped. Never reads the environment.

The proxy's settings loader (``proxy.settings``) builds one of these from the
``[capture]``, ``[injection]``, ``[compaction]`` and ``[storage]`` tables of the TOML
file. Each setting's default and range are declared here, once, as field metadata
(:mod:`memory_core.setting`); the loader takes both from these fields, and
:meth:`MemoryConfig.clamped` keeps every number inside its range so that the engine
can trust it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from memory_core.assembly.budget import ContextConfig
from memory_core.setting import clamped_fields, one_of, rng


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """Thresholds; tokens are o200k tokens. Each number's range is its field's
    metadata (:mod:`memory_core.setting`), clamped by :meth:`MemoryConfig.clamped`.

    ``min_tokens``/``min_turns``: how much uncompacted middle triggers a Level-0 pass.
    ``head_turns``/``tail_turns``: user turns protected at each end.
    ``group_tokens``: most source tokens one Level-0 node covers.
    ``consolidation_k``: K of the 2×K merge rule. ``summary_tokens``: cap of one
    node's text. ``hard_limit_tokens``: a request over this is compacted inline.
    ``tail_rounds``: not a setting; the proxy's last inline stage sets it (see
    :func:`memory_core.compaction.compressor.protected_bounds`) so that an agent's
    long tool loop inside one user turn can be compacted too, all but its last
    ``tail_rounds`` call/result rounds (0: whole turns only).
    """

    enabled: bool = True
    min_tokens: int = field(default=6000, metadata=rng(500, 1_000_000))
    min_turns: int = field(default=6, metadata=rng(1, 10_000))
    head_turns: int = field(default=1, metadata=rng(0, 100))
    tail_turns: int = field(default=6, metadata=rng(1, 1000))
    group_tokens: int = field(default=12000, metadata=rng(1000, 1_000_000))
    consolidation_k: int = field(default=4, metadata=rng(2, 64))
    summary_tokens: int = field(default=700, metadata=rng(100, 8000))
    hard_limit_tokens: int = field(default=100000, metadata=rng(2000, 10_000_000))
    tail_rounds: int = 0


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Engine settings. Units are in the names: ``*_tokens`` are o200k tokens,
    ``*_seconds`` are seconds, ``*_chars`` are characters.

    ``soft_budget_tokens``: the memory block's budget (DESIGN §7).
    ``idle_resume_seconds`` (1800 = 30 min): a thread idle longer gets a bootstrap turn.
    ``max_items``: memory items per block; ``pinned_items``: of those, at most this
    many standing items (preferences, constraints, decisions, facts with a number or
    a correction; :func:`memory_core.assembly.block.standing_weight`) shown without a
    keyword match; ``match_items``: of those, at most this many items that match the
    turn's words or search (the best first), in the room the standing items leave.
    ``evidence_snippets``/``snippet_chars``: quoted earlier messages not in the request.
    ``in_view_tokens``: a fact, decision or proposal whose message is among the newest
    this-many tokens the upstream sees verbatim is not repeated in the block
    (:mod:`memory_core.assembly.in_view`); 0 = always repeat.
    ``quote_tool_output``: tool results may be quoted as evidence (off by default).
    ``semantic_min_similarity``: cosine similarity (−1…1) a vector-only search hit
    needs to count as relevant, in multilingual-e5-small's cosines: 0.84 suits it,
    whose unrelated pairs score lower. With the default pair embedder the floor is
    multiplied by its ``similarity_scale`` (√0.9, so 0.797), exactly e5's test for a
    non-English query (figures: docs/evaluation/constants.md).
    ``store_raw_json``: keep each message's original JSON (else only its canonical
    fields, content as text). ``redact_secrets``: mask keys, tokens and private keys
    (``memory_core.capture.redact``) in stored text, raw JSON and events.
    ``redact_identity_numbers``: mask US SSNs, payment card numbers and IBANs
    (``memory_core.capture.identity``) wherever ``redact_secrets`` masks secrets, so
    memory items, blocks, tool answers and the inspector never repeat them.
    ``injection_search_mode``: ``bm25`` (default) or ``hybrid`` retrieval for the
    block. Hybrid embeds the query on the request path, which waits behind the indexer's
    backlog (docs/evaluation/constants.md), so the block uses BM25 plus keyword
    scores and semantic search is left to the ``memory_search`` tool.
    ``capture_wait_seconds``: how long a request waits for its capture before the
    proxy gives up on injection for it and forwards unmodified (fail open).
    ``context``: the context budget of each upstream request
    (:class:`memory_core.assembly.budget.ContextConfig`).
    ``sqlite_cache_kib``/``sqlite_statement_cache``: page cache (KiB) and prepared
    statements kept per SQLite connection (one writer, one reader per reading
    thread); see :class:`memory_core.store.sqlite.SqliteStore`.
    ``sqlite_memory_limit_kib``: SQLite's memory in the whole process, every
    connection together (KiB; a soft limit: past it, page caches recycle their
    pages instead of growing); 0: none, connections x ``sqlite_cache_kib``.
    ``store_url``: a ``postgresql://`` URL selects the PostgreSQL store
    (:func:`memory_core.store.factory.open_store`); empty: SQLite.
    ``extract_worker``: run the extraction that writer jobs do after a capture
    commits in one child process (:mod:`memory_core.extraction.worker`), read while
    the job waits in the queue, so that the writer thread only stores; fails open to
    in-process extraction.
    ``capture_journal``: write each answer's capture (with its request's, when not
    committed yet) to a per-process file as it is queued, so that it survives a
    crash before its commit (:mod:`memory_core.capture.journal`); replayed on the
    next open (whatever this setting says then). Not used with a shared store
    (PostgreSQL): replicas see each other's answers only once committed.
    ``timezone``: the IANA time zone statements are said in when a request names none
    (:mod:`memory_core.extraction.relative_dates`); one this host does not know is
    read as UTC, logged (the proxy's loader refuses it).
    """

    enabled: bool = True
    store_raw_json: bool = True
    redact_secrets: bool = True
    redact_identity_numbers: bool = True
    extract: bool = True
    extract_worker: bool = False
    capture_journal: bool = True
    inject: bool = True
    soft_budget_tokens: int = field(default=3000, metadata=rng(200, 20000))
    idle_resume_seconds: float = field(default=1800.0, metadata=rng(0, 30 * 86400))
    max_items: int = field(default=40, metadata=rng(0, 500))
    pinned_items: int = field(default=20, metadata=rng(0, 200))
    match_items: int = field(default=8, metadata=rng(0, 500))
    evidence_snippets: int = field(default=4, metadata=rng(0, 50))
    snippet_chars: int = field(default=400, metadata=rng(40, 4000))
    in_view_tokens: int = field(default=8000, metadata=rng(0, 10_000_000))
    quote_tool_output: bool = False
    capture_wait_seconds: float = field(default=2.0, metadata=rng(0.05, 30))
    semantic_min_similarity: float = 0.84
    injection_search_mode: str = field(default="bm25", metadata=one_of("bm25", "hybrid"))
    tools_enabled: bool = False
    sqlite_cache_kib: int = field(default=2000, metadata=rng(64, 4_194_304))
    sqlite_statement_cache: int = field(default=32, metadata=rng(0, 1000))
    sqlite_memory_limit_kib: int = field(default=8192, metadata=rng(0, 4_194_304))
    store_url: str = ""
    timezone: str = "UTC"
    compaction: CompactionConfig = CompactionConfig()
    context: ContextConfig = ContextConfig()

    def clamped(self) -> MemoryConfig:
        """Return a copy with every number (its own and :attr:`compaction`'s) inside the
        range its field declares; :attr:`context` is left as given."""
        fixed = clamped_fields(self)
        compaction = clamped_fields(self.compaction)
        if compaction is not self.compaction:
            fixed = dataclasses.replace(fixed, compaction=compaction)
        return fixed
