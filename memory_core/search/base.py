"""Shared shapes of the search package: documents, filters, labels, interfaces, errors.

Every indexed object is identified by one integer *label*::

    label = KIND_CODE << 40 | ref_id        (kind codes in ``config.KIND_CODES``)

``ref_id`` is the SQLite row id of ``messages``/``memory_items``/``agent_memories``/
``summary_nodes`` (below 2**40, about 10**12 rows); the kind code sits above it. The
same label is the Tantivy ``key`` field (an **i64** field: ``delete_documents_by_term``
on a u64 field deletes nothing, DEPENDENCIES.md pitfall 1) and the hnswlib label.

Errors::

    MemoryError_ (memory_core.errors)
    └── SearchIndexError        an index could not be opened, written or searched
        └── IndexOutOfSync      the index disagrees with SQLite: run ``lcm-proxy reindex``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from memory_core.errors import MemoryError_
from memory_core.search.searchconfig import KIND_CODES, KIND_NAMES

LABEL_SHIFT = 40
REF_MASK = (1 << LABEL_SHIFT) - 1


class SearchIndexError(MemoryError_):
    """A derived index (Tantivy or hnswlib) could not be opened, written or searched."""


class IndexOutOfSync(SearchIndexError):
    """The derived index disagrees with SQLite; ``lcm-proxy reindex`` rebuilds it."""


def make_label(kind: str, ref_id: int) -> int:
    """Return ``KIND_CODE << 40 | ref_id``; raises ``ValueError`` for an unknown kind."""
    if kind not in KIND_CODES:
        raise ValueError(f"unknown indexed kind {kind!r}")
    if not 0 <= ref_id <= REF_MASK:
        raise ValueError(f"ref_id {ref_id} out of range")
    return (KIND_CODES[kind] << LABEL_SHIFT) | ref_id


def split_label(label: int) -> tuple[str, int]:
    """Inverse of :func:`make_label`: ``(kind, ref_id)``."""
    return KIND_NAMES[int(label) >> LABEL_SHIFT], int(label) & REF_MASK


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """One object as the indexes see it (built from a SQLite row by the indexer).

    ``text``: what the user/model wrote (searchable, never altered in SQLite).
    ``extra``: additional searchable words (speaker name, session date…) in their
    own lower-weight field. ``speaker``: the message's ``name`` (its own field, so a
    query can tell a participant's name from a word). ``context``: the text of the
    turn before (the parent message), searched with ``search.context_weight``.
    ``created_at``: UNIX seconds. ``thread_id``: 0 for
    objects outside a thread (agent memories). ``embed_text``: what the vector
    encodes (text with speaker prefix), ``""`` for no vector.
    """

    kind: str
    ref_id: int
    tenant: str
    role: str
    text: str
    extra: str = ""
    session: str = ""
    thread_id: int = 0
    created_at: float = 0.0
    msg_role: str = ""
    hidden: bool = False
    embed_text: str = ""
    speaker: str = ""
    context: str = ""

    @property
    def label(self) -> int:
        return make_label(self.kind, self.ref_id)


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Filters every backend applies without leaking across scopes.

    ``tenant`` and ``role`` are mandatory (the vector index is partitioned by them).
    ``kinds``/``thread_ids``: ``None`` = any. ``start_time``/``end_time``: UNIX
    seconds, inclusive, ``None`` = open. ``include_hidden``: hidden tool rounds.
    """

    tenant: str
    role: str
    kinds: tuple[str, ...] | None = None
    thread_ids: tuple[int, ...] | None = None
    session: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    include_hidden: bool = True


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    ``score``: final score (normalised fused score in [0, 1] plus boosts) for
    hybrid; the backend's own score for ``bm25`` (BM25) or ``vector`` (cosine).
    ``bm25_rank``/``vector_rank``: 1-based rank in each candidate list, ``None``
    when absent there; ``bm25_score``/``vector_score``: the raw scores; ``boosts``:
    name → amount added (explain).
    """

    kind: str
    ref_id: int
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    boosts: dict[str, float] = field(default_factory=dict)
    thread_id: int | None = None
    created_at: float | None = None


class TextIndex(Protocol):
    """A full-text backend (one writer; search is thread-safe)."""

    def upsert(self, docs: list[IndexDoc]) -> None: ...
    def delete(self, labels: list[int]) -> None: ...
    def commit(self) -> None: ...
    def search(
        self, query: str, flt: SearchFilter, limit: int, *, require_all: bool = False
    ) -> list[tuple[int, float]]: ...
    def count(self) -> int: ...
    def clear(self) -> None: ...
    def close(self) -> None: ...


class VectorIndex(Protocol):
    """A vector backend: L2-normalised float32 vectors, inner-product similarity."""

    def upsert(self, docs: list[IndexDoc], vectors: np.ndarray) -> None: ...
    def delete(self, tenant: str, role: str, labels: list[int]) -> None: ...
    def search(
        self, vector: np.ndarray, flt: SearchFilter, limit: int
    ) -> list[tuple[int, float]]: ...
    def save(self) -> None: ...
    def count(self) -> int: ...
    def clear(self) -> None: ...
    def close(self) -> None: ...
