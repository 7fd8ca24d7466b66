"""Vector partitions: exact numpy path, HNSW above the threshold, persistence, deletions."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_core.search import IndexDoc, SearchFilter, make_label
from memory_core.search.vector import HnswVectorIndex, partition_name


def _docs(n: int, tenant: str = "t", role: str = "r", start: int = 1) -> list[IndexDoc]:
    return [IndexDoc("message", i, tenant, role, f"d{i}", thread_id=i % 3, created_at=float(i))
            for i in range(start, start + n)]


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_graph_above_threshold_matches_exact_search_and_persists(tmp_path: Path) -> None:
    vecs = _vectors(300)
    docs = _docs(300)
    ix = HnswVectorIndex(tmp_path, 16, "m", flat_max=100, ef_search=200)
    ix.upsert(docs[:150], vecs[:150])
    ix.upsert(docs[150:], vecs[150:])  # crosses resize of the initial graph capacity? grows
    assert ix.has_graph("t", "r")
    flt = SearchFilter("t", "r")
    exact = np.argsort(-(vecs @ vecs[7]))[:10] + 1
    got = [lb & ((1 << 40) - 1) for lb, _ in ix.search(vecs[7], flt, 10)]
    assert got[0] == 8 and len(set(got) & set(exact.tolist())) >= 9
    ix.delete([make_label("message", 8)])
    assert 8 not in [lb & ((1 << 40) - 1) for lb, _ in ix.search(vecs[7], flt, 10)]
    ix.close()

    again = HnswVectorIndex(tmp_path, 16, "m", flat_max=100, ef_search=200)
    assert not again.was_reset and again.count() == 299
    part = again._parts[("t", "r")]
    assert part.graph is not None and part.graph.ef == 200  # ef re-applied after load
    res = again.search(vecs[7], flt, 10)
    assert 8 not in [lb & ((1 << 40) - 1) for lb, _ in res]
    # filtered search on a graph partition: the thread mask is exact
    res = again.search(vecs[7], SearchFilter("t", "r", thread_ids=(1,)), 5)
    assert res and all(((lb & ((1 << 40) - 1)) % 3) == 1 for lb, _ in res)
    # re-adding a deleted label revives it
    again.upsert([docs[7]], vecs[7:8])
    assert (again.search(vecs[7], flt, 1)[0][0] & ((1 << 40) - 1)) == 8
    assert (tmp_path / f"{partition_name('t', 'r')}.hnsw").exists()


def test_partitions_isolate_scopes_and_model_change_resets(tmp_path: Path) -> None:
    v = _vectors(4)
    ix = HnswVectorIndex(tmp_path, 16, "m1")
    ix.upsert(_docs(2, "a", "x"), v[:2])
    ix.upsert(_docs(2, "a", "y", start=10), v[2:])
    assert {lb & 0xFFFF for lb, _ in ix.search(v[0], SearchFilter("a", "x"), 10)} == {1, 2}
    assert ix.search(v[0], SearchFilter("b", "x"), 10) == []
    assert ix.search(v[0], SearchFilter("a", "x", start_time=2.0), 10)[0][0] & 0xFFFF == 2
    ix.close()
    assert HnswVectorIndex(tmp_path, 16, "m1").count() == 4
    changed = HnswVectorIndex(tmp_path, 16, "m2")
    assert changed.was_reset and changed.count() == 0


def test_deleted_rows_leave_the_files_and_an_emptied_partition_goes(tmp_path: Path) -> None:
    """What a purge or retraction deleted does not stay on disk: a saved partition
    holds its live rows only (no vector, session or thread of a deleted one), a graph
    a tenth of whose elements are deleted is rebuilt without them, and a partition
    left empty is removed with its manifest entry."""
    vecs = _vectors(300)
    ix = HnswVectorIndex(tmp_path, 16, "m", flat_max=100)
    ix.upsert(_docs(300), vecs)
    ix.upsert(_docs(3, "gone", "r"), vecs[:3])
    ix.save()
    ix.delete([make_label("message", i) for i in range(1, 41)])  # 40 of 300: a graph rebuild
    ix.delete([make_label("message", i) for i in range(1, 4)])  # the other tenant's three
    ix.save()
    part = np.load(tmp_path / f"{partition_name('t', 'r')}.npz")
    assert len(part["label"]) == 260 and part["alive"].all()
    assert not {make_label("message", i) for i in range(1, 41)} & set(part["label"].tolist())
    graph = ix._parts[("t", "r")].graph
    assert graph is not None and graph.get_current_count() == 260
    assert not (tmp_path / f"{partition_name('gone', 'r')}.npz").exists()
    manifest = (tmp_path / "manifest.json").read_text()
    assert "gone" not in manifest
    ix.close()
    again = HnswVectorIndex(tmp_path, 16, "m", flat_max=100)
    assert again.count() == 260
    got = [lb & ((1 << 40) - 1) for lb, _ in again.search(vecs[100], SearchFilter("t", "r"), 5)]
    assert got[0] == 101
