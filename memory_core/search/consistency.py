"""Index consistency: what the store says each derived index should hold, and what it holds.

``lcm-proxy doctor`` compares the two per kind (message, item, agent_memory,
summary). The store is the truth: the text index should hold every row the indexer
would load (``docs.load_docs``: items and summaries whose status is retracted,
deleted or purged are left out; purged rows are gone from the store altogether); the
vector index the same rows of the configured ``vector_kinds`` whose embedded text
is not blank (the indexer skips those).

Both indexes are read from disk without a writer: Tantivy through a fresh reader
(its writer lock is not taken, so this works while a proxy is running) and the
vector partitions from their saved ``.npz`` rows. What is on disk is what the
checkpoints promise, so counts agree exactly only when the index lag is 0; the
caller decides how to treat a difference while the indexer is behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from memory_core.search.docs import DELETED_STATUSES
from memory_core.search.searchconfig import KIND_CODES, KIND_NAMES
from memory_core.store.api import Tx


def expected_counts(tx: Tx, vector_kinds: Iterable[str]) -> dict[str, dict[str, int]]:
    """Rows per kind each index should hold: ``{"text": {kind: n}, "vector": {kind: n}}``
    (:meth:`~memory_core.store.api.IndexProgress.expected_documents` with the
    indexer's rule: items and summaries of :data:`~memory_core.search.docs.DELETED_STATUSES`
    are left out).

    ``vector_kinds``: the kinds the configuration embeds (``SearchConfig.vector_kinds``);
    other kinds expect 0 vectors.
    """
    return tx.index.expected_documents(set(vector_kinds), DELETED_STATUSES)


def text_index_counts(path: str | Path) -> dict[str, int] | None:
    """Live documents per kind in the Tantivy index at ``path``; ``None`` if absent.

    Opens a reader only (no writer lock). Raises ``ValueError`` (tantivy's error)
    when the index cannot be read.
    """
    import tantivy

    path = Path(path)
    if not (path / "meta.json").exists():
        return None
    index = tantivy.Index.open(str(path))
    searcher = index.searcher()
    schema = index.schema
    # tantivy's stub leaves out SearchResult.count, which count=True fills in.
    return {kind: int(searcher.search(tantivy.Query.term_query(schema, "kind", code), 1,
                                      count=True).count or 0)  # type: ignore[attr-defined]
            for kind, code in KIND_CODES.items()}


def vector_index_counts(path: str | Path) -> dict[str, int] | None:
    """Live vectors per kind over every partition saved at ``path``; ``None`` if absent.

    Reads the manifest and each partition's ``label``/``kind``/``alive`` rows (not the
    vectors). Raises ``OSError``/``ValueError``/``KeyError`` for unreadable files.
    """
    from memory_core.search.vector import partition_name

    path = Path(path)
    manifest_file = path / "manifest.json"
    if not manifest_file.exists():
        return None
    manifest = json.loads(manifest_file.read_text())
    counts = dict.fromkeys(KIND_CODES, 0)
    for name, info in manifest.get("partitions", {}).items():
        if name != partition_name(info["tenant"], info["role"]):
            raise ValueError(f"partition {name} does not match its tenant and role")
        with np.load(str(path / name) + ".npz") as rows:
            kinds = rows["kind"][rows["alive"]]
        for code, n in zip(*np.unique(kinds, return_counts=True), strict=True):
            kind = KIND_NAMES.get(int(code), f"code {int(code)}")
            counts[kind] = counts.get(kind, 0) + int(n)
    return counts


def vector_index_model(path: str | Path) -> str | None:
    """The embedding model id the vector index at ``path`` was built with (or ``None``)."""
    try:
        data = json.loads((Path(path) / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return str(model) if model is not None else None
