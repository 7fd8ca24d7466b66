"""Search: Tantivy full text, partitioned vectors, hybrid ranking (DESIGN §9).

Public API::

    svc = SearchService(store, data_dir, SearchConfig(), create_embedder(EmbeddingConfig()))
    svc.start()                  # background indexer: catch-up, then follows the outbox
    svc.notify()                 # after a capture commits
    hits = svc.search(tenant, role, "query", k=10)
    svc.close()
"""

from typing import TYPE_CHECKING, Any

from memory_core.search.base import (
    Hit,
    IndexDoc,
    IndexOutOfSync,
    SearchFilter,
    SearchIndexError,
    make_label,
    split_label,
)
from memory_core.search.embed import (
    Embedder,
    EmbedderError,
    EmbeddingConfig,
    HashingEmbedder,
    SerialEmbedder,
    create_embedder,
)
from memory_core.search.searchconfig import KIND_CODES, SearchConfig

if TYPE_CHECKING:
    from memory_core.search.indexer import Indexer
    from memory_core.search.service import SearchService


def __getattr__(name: str) -> Any:
    """``Indexer`` and ``SearchService`` load Tantivy and hnswlib, so they are imported
    when first named: reading a :class:`SearchConfig` or :class:`EmbeddingConfig` (the
    settings loader declares ``[search]`` and ``[embedding]`` from them) does not."""
    if name == "Indexer":
        from memory_core.search.indexer import Indexer

        return Indexer
    if name == "SearchService":
        from memory_core.search.service import SearchService

        return SearchService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "KIND_CODES",
    "Embedder",
    "EmbedderError",
    "EmbeddingConfig",
    "HashingEmbedder",
    "Hit",
    "IndexDoc",
    "IndexOutOfSync",
    "Indexer",
    "SearchConfig",
    "SearchFilter",
    "SearchIndexError",
    "SearchService",
    "SerialEmbedder",
    "create_embedder",
    "make_label",
    "split_label",
]
