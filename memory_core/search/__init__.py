"""Search: Tantivy full text, partitioned vectors, hybrid ranking (DESIGN §9).

Public API::

    svc = SearchService(store, data_dir, SearchConfig(), create_embedder(EmbeddingConfig()))
    svc.start()                  # background indexer: catch-up, then follows the outbox
    svc.notify()                 # after a capture commits
    hits = svc.search(tenant, role, "query", k=10)
    svc.close()
"""

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
from memory_core.search.indexer import Indexer
from memory_core.search.searchconfig import KIND_CODES, SearchConfig
from memory_core.search.service import SearchService

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
