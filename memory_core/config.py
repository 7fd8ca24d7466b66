"""MemoryConfig: the engine's settings, frozen and clamped. Never reads the environment.

The proxy's settings loader (``proxy.settings``) builds one of these from the
``[capture]`` and ``[injection]`` tables of the TOML file; every number is clamped
to a safe range by :meth:`MemoryConfig.clamped` so that the engine can trust it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from memory_core.budget import ContextConfig


def clamp(value: float, low: float, high: float) -> float:
    """Return ``value`` limited to ``[low, high]``."""
    return max(low, min(high, value))


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """Thresholds; tokens are o200k tokens. Ranges are clamped by the settings loader.

    ``min_tokens``/``min_turns``: how much uncompacted middle triggers a Level-0 pass.
    ``head_turns``/``tail_turns``: user turns protected at each end.
    ``group_tokens``: most source tokens one Level-0 node covers.
    ``consolidation_k``: K of the 2×K merge rule. ``summary_tokens``: cap of one
    node's text. ``hard_limit_tokens``: a request over this is compacted inline.
    """

    enabled: bool = True
    min_tokens: int = 6000
    min_turns: int = 6
    head_turns: int = 1
    tail_turns: int = 6
    group_tokens: int = 12000
    consolidation_k: int = 4
    summary_tokens: int = 700
    hard_limit_tokens: int = 100000




_COMPACTION_RANGES: dict[str, tuple[int, int]] = {
    "min_tokens": (500, 1_000_000),
    "min_turns": (1, 10_000),
    "head_turns": (0, 100),
    "tail_turns": (1, 1000),
    "group_tokens": (1000, 1_000_000),
    "consolidation_k": (2, 64),
    "summary_tokens": (100, 8000),
    "hard_limit_tokens": (2000, 10_000_000),
}


_RANGES: dict[str, tuple[float, float]] = {
    "soft_budget_tokens": (200, 20000),
    "idle_resume_seconds": (0, 30 * 86400),
    "max_items": (0, 500),
    "pinned_items": (0, 200),
    "evidence_snippets": (0, 50),
    "in_view_tokens": (0, 10_000_000),
    "snippet_chars": (40, 4000),
    "capture_wait_seconds": (0.05, 30),
    "sqlite_cache_kib": (64, 4_194_304),
    "sqlite_statement_cache": (0, 1000),
}


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Engine settings. Units are in the names: ``*_tokens`` are o200k tokens,
    ``*_seconds`` are seconds, ``*_chars`` are characters.

    ``soft_budget_tokens`` default 3000, clamped to 200–20000 (DESIGN §7).
    ``idle_resume_seconds`` (1800 = 30 min): a thread idle longer gets a bootstrap turn.
    ``max_items``: memory items per block; ``pinned_items``: of those, at most this
    many standing items (preferences, constraints, decisions, facts with a number or
    a correction; :func:`memory_core.assemble.standing_weight`) shown without a
    keyword match.
    ``evidence_snippets``/``snippet_chars``: quoted earlier messages not in the request.
    ``in_view_tokens``: a fact, decision or proposal whose message is among the newest
    this-many tokens the upstream sees verbatim is not repeated in the block
    (:mod:`memory_core.inview`); 0 = always repeat.
    ``quote_tool_output``: tool results may be quoted as evidence (off by default).
    ``semantic_min_similarity``: cosine similarity (−1…1) a vector-only search hit
    needs to count as relevant, in multilingual-e5-small's cosines: 0.84 suits it,
    whose unrelated pairs score lower. With the default pair embedder the floor is
    multiplied by its ``similarity_scale`` (√0.9, so 0.797), exactly e5's test for a
    non-English query (figures: docs/evaluation/constants.md).
    ``store_raw_json``: keep each message's original JSON (else only its canonical
    fields, content as text). ``redact_secrets``: mask keys, tokens and private keys
    (``memory_core.redact``) in stored text, raw JSON and events.
    ``injection_search_mode``: ``bm25`` (default) or ``hybrid`` retrieval for the
    block. Hybrid embeds the query on the request path, which waits behind the indexer's
    backlog (docs/evaluation/constants.md), so the block uses BM25 plus keyword
    scores and semantic search is left to the ``memory_search`` tool.
    ``capture_wait_seconds``: how long a request waits for its capture before the
    proxy gives up on injection for it and forwards unmodified (fail open).
    ``context``: the context budget of each upstream request
    (:class:`memory_core.budget.ContextConfig`).
    ``sqlite_cache_kib``/``sqlite_statement_cache``: page cache (KiB) and prepared
    statements kept per SQLite connection (one writer, one reader per reading
    thread); see :class:`memory_core.store.sqlite.SqliteStore`.
    ``store_url``: a ``postgresql://`` URL selects the PostgreSQL store
    (:func:`memory_core.store.factory.open_store`); empty: SQLite.
    """

    enabled: bool = True
    store_raw_json: bool = True
    redact_secrets: bool = True
    extract: bool = True
    inject: bool = True
    soft_budget_tokens: int = 3000
    idle_resume_seconds: float = 1800.0
    max_items: int = 40
    pinned_items: int = 20
    evidence_snippets: int = 4
    snippet_chars: int = 400
    in_view_tokens: int = 8000
    quote_tool_output: bool = False
    capture_wait_seconds: float = 2.0
    semantic_min_similarity: float = 0.84
    injection_search_mode: str = "bm25"
    tools_enabled: bool = False
    sqlite_cache_kib: int = 2000
    sqlite_statement_cache: int = 32
    store_url: str = ""
    compaction: CompactionConfig = CompactionConfig()
    context: ContextConfig = ContextConfig()

    def clamped(self) -> MemoryConfig:
        """Return a copy with every number inside its documented range."""
        changes = {}
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            bounded = type(value)(clamp(value, low, high))
            if bounded != value:
                changes[name] = bounded
        comp_changes: dict[str, Any] = {}
        for name, (low, high) in _COMPACTION_RANGES.items():
            value = getattr(self.compaction, name)
            bounded = int(clamp(value, low, high))
            if bounded != value:
                comp_changes[name] = bounded
        if comp_changes:
            changes["compaction"] = dataclasses.replace(self.compaction, **comp_changes)
        return dataclasses.replace(self, **changes) if changes else self
