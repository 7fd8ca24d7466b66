"""Vector index: one partition per (tenant, role), exact numpy below a size, hnswlib above.

Layout under ``<data_dir>/index/vectors``::

    manifest.json            {"version", "dim", "model", "partitions": {name: {tenant, role}}}
    <name>.npz               per-partition rows: label, kind, thread, ts, hidden, session,
                             alive, and vectors (float32 [rows, dim], L2-normalised)
    <name>.hnsw              the hnswlib graph (only when rows > ``flat_max_vectors``)

``name`` is the first 20 hex digits of sha256(tenant ‖ 0x1f ‖ role). Labels are the
global ``kind << 40 | ref_id`` (``base.make_label``), used as hnswlib labels too.

Why partitions: every search is scoped to one tenant and role (DESIGN §3), so the
scope filter is "open one partition", never a per-candidate Python callback, which
DEPENDENCIES.md measured at 43 ms per query for selective filters. Remaining
filters (kind, thread, session, time, hidden) are numpy masks over the partition's
rows. Why numpy first: brute force over 50k × 384 takes 3.5–4 ms and is exact
(DEPENDENCIES.md, "Vector search size rule"); a partition switches to an HNSW
graph (M=16, efConstruction=200, ef=64 by default) once it holds more than
``flat_max_vectors`` rows. A filtered search over a large partition takes the exact
path when the mask leaves ≤ ``flat_max_vectors`` rows, else over-fetches from the graph.

hnswlib pitfalls handled here: ``ef`` is not persisted (set again after load),
``allow_replace_deleted`` is passed again to ``load_index``, deletions use
``mark_deleted`` (a deleted label is un-marked before being re-added), the graph is
resized (doubling) before it fills, and its random seed is fixed.

Thread-safety: one writer thread (the indexer's vector thread) calls ``upsert``/
``delete``/``save``; searches may run concurrently from other threads — a lock
guards each partition's arrays (held only for the short numpy/hnswlib calls).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np

from memory_core.search.base import IndexDoc, SearchFilter
from memory_core.search.searchconfig import KIND_CODES

log = logging.getLogger("lcm.search.vector")

FORMAT_VERSION = 1
_SEED = 100
_COLUMNS = {
    "label": np.int64,
    "kind": np.int8,
    "thread": np.int64,
    "ts": np.float64,
    "hidden": np.bool_,
    "alive": np.bool_,
}


_CHUNK_ROWS = 1024
"""Rows per matrix-vector product in the exact search (see :func:`similarities`)."""


def similarities(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``vectors @ q`` in blocks of ``_CHUNK_ROWS`` rows.

    One big product lets OpenBLAS split it over threads; on a busy 2-core machine
    that took the p95 of a 5k-row product from 0.3 ms to 8 ms (threads waiting for
    a core), while blocks this small stay on the calling thread at the same p50.
    """
    out = np.empty(len(vectors), dtype=np.float32)
    for s in range(0, len(vectors), _CHUNK_ROWS):
        np.dot(vectors[s : s + _CHUNK_ROWS], q, out=out[s : s + _CHUNK_ROWS])
    return out


def partition_name(tenant: str, role: str) -> str:
    """Return the file stem of the (tenant, role) partition."""
    return hashlib.sha256(f"{tenant}\x1f{role}".encode()).hexdigest()[:20]


class _Partition:
    """Rows, vectors and (when large) the HNSW graph of one (tenant, role)."""

    def __init__(self, tenant: str, role: str, dim: int) -> None:
        self.tenant, self.role, self.dim = tenant, role, dim
        self.n = 0
        self.cols: dict[str, np.ndarray[Any, Any]] = {
            c: np.zeros(16, dtype=t) for c, t in _COLUMNS.items()}
        self.session: list[str] = []
        self.vectors = np.zeros((16, dim), dtype=np.float32)
        self.pos: dict[int, int] = {}
        self.graph: hnswlib.Index | None = None
        self.live = 0
        self.dirty = False
        self.lock = threading.RLock()

    # -- storage helpers ---------------------------------------------------------
    def _grow(self, need: int) -> None:
        cap = len(self.vectors)
        if need <= cap:
            return
        new = max(need, cap * 2)
        for c, arr in self.cols.items():
            grown = np.zeros(new, dtype=arr.dtype)
            grown[: self.n] = arr[: self.n]
            self.cols[c] = grown
        vec = np.zeros((new, self.dim), dtype=np.float32)
        vec[: self.n] = self.vectors[: self.n]
        self.vectors = vec

    def build_graph(self, m: int, ef_c: int, ef: int) -> None:
        """(Re)build the HNSW graph from the alive rows."""
        rows = np.flatnonzero(self.cols["alive"][: self.n])
        graph = hnswlib.Index(space="ip", dim=self.dim)
        graph.init_index(
            max_elements=max(1024, 2 * len(rows)), M=m, ef_construction=ef_c,
            random_seed=_SEED, allow_replace_deleted=True,
        )
        graph.set_ef(ef)
        if len(rows):
            graph.add_items(self.vectors[rows], self.cols["label"][rows].astype(np.uint64))
        self.graph = graph

    def _graph_add(self, vectors: np.ndarray, labels: list[int], revived: list[int]) -> None:
        graph = self.graph
        assert graph is not None
        for label in revived:
            try:
                graph.unmark_deleted(label)
            except RuntimeError:
                pass  # its slot was reused by another label: add it afresh below
        need = graph.element_count + len(labels)
        if need > graph.get_max_elements():
            graph.resize_index(max(need, 2 * graph.get_max_elements()))
        try:
            graph.add_items(vectors, np.asarray(labels, dtype=np.uint64), replace_deleted=True)
        except RuntimeError:
            # A label still marked deleted (slot not reused): add one by one.
            for vec, label in zip(vectors, labels, strict=True):
                try:
                    graph.add_items(vec[None, :], [label], replace_deleted=True)
                except RuntimeError:
                    graph.unmark_deleted(label)
                    graph.add_items(vec[None, :], [label])

    def upsert(self, docs: list[IndexDoc], vectors: np.ndarray) -> None:
        with self.lock:
            self._grow(self.n + len(docs))
            revived: list[int] = []
            for doc, vec in zip(docs, vectors, strict=True):
                label = doc.label
                row = self.pos.get(label)
                if row is None:
                    row = self.n
                    self.n += 1
                    self.pos[label] = row
                    self.session.append(doc.session)
                    self.live += 1
                else:
                    self.session[row] = doc.session
                    if not self.cols["alive"][row]:
                        self.live += 1
                        revived.append(label)
                c = self.cols
                c["label"][row] = label
                c["kind"][row] = KIND_CODES[doc.kind]
                c["thread"][row] = doc.thread_id
                c["ts"][row] = doc.created_at
                c["hidden"][row] = doc.hidden
                c["alive"][row] = True
                self.vectors[row] = vec
            if self.graph is not None and docs:
                self._graph_add(vectors, [d.label for d in docs], revived)
            self.dirty = True

    def delete(self, labels: list[int]) -> int:
        removed = 0
        with self.lock:
            for label in labels:
                row = self.pos.get(int(label))
                if row is None or not self.cols["alive"][row]:
                    continue
                self.cols["alive"][row] = False
                self.live -= 1
                removed += 1
                if self.graph is not None:
                    try:
                        self.graph.mark_deleted(int(label))
                    except RuntimeError:
                        pass
            if removed:
                self.dirty = True
        return removed

    def mask(self, flt: SearchFilter) -> np.ndarray:
        n = self.n
        c = self.cols
        m = c["alive"][:n].copy()
        if flt.kinds is not None:
            m &= np.isin(c["kind"][:n], [KIND_CODES[k] for k in flt.kinds if k in KIND_CODES])
        if flt.thread_ids is not None:
            m &= np.isin(c["thread"][:n], np.asarray(flt.thread_ids, dtype=np.int64))
        if flt.session is not None:
            m &= np.asarray([s == flt.session for s in self.session], dtype=bool)
        if flt.start_time is not None:
            m &= c["ts"][:n] >= flt.start_time
        if flt.end_time is not None:
            m &= c["ts"][:n] <= flt.end_time
        if not flt.include_hidden:
            m &= ~c["hidden"][:n]
        return m

    def search(
        self, q: np.ndarray, flt: SearchFilter, limit: int, flat_max: int, ef: int
    ) -> list[tuple[int, float]]:
        with self.lock:
            if self.live == 0 or limit <= 0:
                return []
            mask = self.mask(flt)
            selected = int(mask.sum())
            if selected == 0:
                return []
            unfiltered = selected == self.live
            if self.graph is None or (not unfiltered and selected <= flat_max):
                if selected == self.n:  # nothing filtered or deleted: no copy
                    rows = np.arange(self.n)
                    sims = similarities(self.vectors[: self.n], q)
                else:
                    rows = np.flatnonzero(mask)
                    sims = similarities(self.vectors[rows], q)
                k = min(limit, len(rows))
                top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
                labels = self.cols["label"][rows[top]]
                order = np.lexsort((labels, -sims[top]))  # ties: lower label first
                top, labels = top[order], labels[order]
                return [(int(lb), float(s)) for lb, s in zip(labels, sims[top], strict=True)]
            k = min(self.live, limit if unfiltered else limit * 4)
            self.graph.set_ef(max(ef, k))
            found, dist = self.graph.knn_query(q, k=k)
            out: list[tuple[int, float]] = []
            for label, d in zip(found[0], dist[0], strict=True):
                row = self.pos.get(int(label))
                if row is not None and mask[row]:
                    out.append((int(label), float(1.0 - d)))
            if len(out) < min(limit, selected) and not unfiltered:
                labels_arr = self.cols["label"]
                allowed = {int(labels_arr[r]) for r in np.flatnonzero(mask)}
                k = min(limit, selected)
                found, dist = self.graph.knn_query(q, k=k, filter=lambda lb: lb in allowed)
                out = [(int(lb), float(1.0 - d)) for lb, d in zip(found[0], dist[0], strict=True)]
            return out[:limit]

    def compact(self, cfg: dict[str, int]) -> None:
        """Drop deleted rows from memory (their vectors, sessions, threads, times), so
        that what is saved next holds none of them. The graph, which keeps a deleted
        element's vector, is rebuilt from the rows left once a tenth of its elements
        are deleted (or dropped when the partition fell under ``flat_max``)."""
        with self.lock:
            n = self.n
            keep = np.flatnonzero(self.cols["alive"][:n])
            if len(keep) == n:
                return
            size = max(16, len(keep))
            for c, arr in self.cols.items():
                new = np.zeros(size, dtype=arr.dtype)
                new[: len(keep)] = arr[keep]
                self.cols[c] = new
            vectors = np.zeros((size, self.dim), dtype=np.float32)
            vectors[: len(keep)] = self.vectors[keep]
            self.vectors = vectors
            self.session = [self.session[i] for i in keep]
            self.n = self.live = len(keep)
            self.pos = {int(lb): i for i, lb in enumerate(self.cols["label"][: self.n])}
            if self.graph is not None:
                total = self.graph.get_current_count()
                if self.live <= cfg["flat_max"]:
                    self.graph = None
                elif total and total - self.live >= total // 10:
                    self.build_graph(cfg["m"], cfg["ef_c"], cfg["ef"])
            self.dirty = True

    # -- persistence -------------------------------------------------------------
    def save(self, base: Path) -> None:
        with self.lock:
            n = self.n
            tmp = base.with_suffix(".tmp")
            # rows and vectors in one file, so one atomic rename covers both
            arrays: dict[str, Any] = {c: a[:n] for c, a in self.cols.items()}
            np.savez(str(tmp) + ".npz", session=np.asarray(self.session, dtype=str),
                     vectors=self.vectors[:n], **arrays)
            if self.graph is not None:
                self.graph.save_index(str(tmp) + ".hnsw")
            os.replace(str(tmp) + ".npz", str(base) + ".npz")
            if self.graph is not None:
                os.replace(str(tmp) + ".hnsw", str(base) + ".hnsw")
            elif os.path.exists(str(base) + ".hnsw"):
                os.remove(str(base) + ".hnsw")
            self.dirty = False

    @classmethod
    def load(cls, base: Path, tenant: str, role: str, dim: int, cfg: dict[str, int]) -> _Partition:
        part = cls(tenant, role, dim)
        meta = np.load(str(base) + ".npz")
        vectors = meta["vectors"]
        n = len(meta["label"])
        part._grow(n)
        for c in _COLUMNS:
            part.cols[c][:n] = meta[c]
        part.session = [str(s) for s in meta["session"]]
        part.vectors[:n] = vectors
        part.n = n
        part.pos = {int(lb): i for i, lb in enumerate(part.cols["label"][:n])}
        part.live = int(part.cols["alive"][:n].sum())
        graph_file = str(base) + ".hnsw"
        if part.live > cfg["flat_max"]:
            ok = False
            if os.path.exists(graph_file):
                graph = hnswlib.Index(space="ip", dim=dim)
                graph.load_index(graph_file, allow_replace_deleted=True)
                graph.set_ef(cfg["ef"])  # not persisted by hnswlib
                ids = set(graph.get_ids_list())
                alive = part.cols["label"][:n][part.cols["alive"][:n]]
                ok = graph.get_current_count() >= part.live and all(
                    int(x) in ids for x in alive
                )
                part.graph = graph if ok else None
            if not ok:
                log.warning("vector graph %s missing or stale: rebuilding from rows", base.name)
                part.build_graph(cfg["m"], cfg["ef_c"], cfg["ef"])
                part.dirty = True
        return part


class HnswVectorIndex:
    """Partitioned vector index in ``path`` for vectors of ``dim`` from model ``model_id``.

    A manifest written by another dimension or model empties the index
    (:attr:`was_reset` is then true and the caller re-feeds it). Raises
    ``SearchIndexError`` when a partition file cannot be read.

    ``readonly``: load what is on disk and never write there (an operator's command
    beside a running proxy): a manifest of another model, or an unreadable
    partition, leaves the index empty instead of rebuilding it, and :meth:`save`
    does nothing.
    """

    def __init__(
        self,
        path: str | Path,
        dim: int,
        model_id: str,
        *,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 64,
        flat_max: int = 20_000,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.dim, self.model_id = dim, model_id
        self.cfg = {"m": m, "ef_c": ef_construction, "ef": ef_search, "flat_max": flat_max}
        self._parts: dict[tuple[str, str], _Partition] = {}
        self._lock = threading.Lock()
        self.was_reset = False
        manifest = self._read_manifest()
        want = {"version": FORMAT_VERSION, "dim": dim, "model": model_id}
        if readonly and (manifest is None
                         or any(manifest.get(k) != v for k, v in want.items())):
            log.warning("vector index %s is missing or was built for another model:"
                        " searching without vectors", self.path)
            return
        if manifest is None or any(manifest.get(k) != v for k, v in want.items()):
            if manifest is not None:
                log.warning("vector index %s was built for %s: rebuilding for %s",
                            self.path, {k: manifest.get(k) for k in want}, want)
            shutil.rmtree(self.path, ignore_errors=True)
            self.was_reset = True
            manifest = dict(want, partitions={})
        self.path.mkdir(parents=True, exist_ok=True)
        for name, info in manifest.get("partitions", {}).items():
            try:
                part = _Partition.load(self.path / name, info["tenant"], info["role"], dim,
                                       self.cfg)
            except (OSError, ValueError, KeyError, RuntimeError, EOFError) as exc:
                if readonly:
                    log.warning("vector partition %s unreadable (%s): searching without"
                                " vectors", name, exc)
                    self._parts.clear()
                    return
                # Derived data: start empty and let the indexer re-feed it from SQLite
                # (vectors come back from the embeddings table, no re-embedding).
                log.warning("vector partition %s unreadable (%s): rebuilding all", name, exc)
                self._parts.clear()
                shutil.rmtree(self.path, ignore_errors=True)
                self.was_reset = True
                break
            self._parts[(part.tenant, part.role)] = part
        if not readonly:
            self.path.mkdir(parents=True, exist_ok=True)
            self._write_manifest()

    def _read_manifest(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.path / "manifest.json").read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write_manifest(self) -> None:
        data = {
            "version": FORMAT_VERSION, "dim": self.dim, "model": self.model_id,
            "partitions": {
                partition_name(t, r): {"tenant": t, "role": r} for (t, r) in self._parts
            },
        }
        tmp = self.path / "manifest.json.tmp"
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.path / "manifest.json")

    def upsert(self, docs: list[IndexDoc], vectors: np.ndarray) -> None:
        """Add or replace vectors (``[len(docs), dim]`` float32, L2-normalised)."""
        if len(docs) != len(vectors):
            raise ValueError("docs and vectors differ in length")
        groups: dict[tuple[str, str], list[int]] = {}
        for i, doc in enumerate(docs):
            groups.setdefault((doc.tenant, doc.role), []).append(i)
        for key, idx in groups.items():
            with self._lock:
                part = self._parts.get(key)
                if part is None:
                    part = self._parts[key] = _Partition(key[0], key[1], self.dim)
            part.upsert([docs[i] for i in idx], np.asarray(vectors[idx], dtype=np.float32))
            if part.graph is None and part.live > self.cfg["flat_max"]:
                with part.lock:
                    part.build_graph(self.cfg["m"], self.cfg["ef_c"], self.cfg["ef"])

    def delete(self, labels: list[int]) -> int:
        """Remove these labels from whichever partition holds them; return how many."""
        return sum(part.delete(labels) for part in list(self._parts.values()))

    def search(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[tuple[int, float]]:
        """Return up to ``limit`` ``(label, cosine)`` pairs of the filter's partition."""
        part = self._parts.get((flt.tenant, flt.role))
        if part is None:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        return part.search(q, flt, limit, self.cfg["flat_max"], self.cfg["ef"])

    def has_graph(self, tenant: str, role: str) -> bool:
        part = self._parts.get((tenant, role))
        return part is not None and part.graph is not None

    def save(self) -> None:
        """Write every changed partition (atomic per file) and the manifest. Deleted
        rows are dropped first (:meth:`_Partition.compact`: a purged or retracted
        row's vector and metadata do not stay on disk), and a partition left empty is
        removed, files and manifest entry."""
        if self.readonly:
            return
        for key, part in list(self._parts.items()):
            if not part.dirty:
                continue
            part.compact(self.cfg)
            base = self.path / partition_name(part.tenant, part.role)
            if part.n == 0:
                with self._lock:
                    if self._parts.get(key) is part and part.n == 0:
                        del self._parts[key]
                for suffix in (".npz", ".hnsw"):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(str(base) + suffix)
                continue
            part.save(base)
        self._write_manifest()

    def count(self) -> int:
        """Number of live vectors over all partitions."""
        return sum(p.live for p in self._parts.values())

    def clear(self) -> None:
        """Drop every partition (in memory and on disk)."""
        with self._lock:
            self._parts.clear()
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir(parents=True, exist_ok=True)
            self._write_manifest()

    def close(self) -> None:
        """Save what changed."""
        self.save()
