"""Deterministic feature-hashing embedder — for unit tests only.

Words (lowercased ``\\w+`` runs) and character bigrams of CJK text are hashed
(blake2b, stable across processes) into ``dim`` signed buckets; rows are
L2-normalised. Texts sharing words get similar vectors; paraphrases do not.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from memory_core.search.embed.base import normalise

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """``hashing-<dim>``: no model, no semantics, fully deterministic."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.model_id = f"hashing-{dim}"

    def _features(self, text: str) -> list[str]:
        feats = []
        for w in _WORD.findall(text.lower()):
            if w.isascii():
                feats.append(w)
            else:
                feats.extend(w[i : i + 2] for i in range(max(1, len(w) - 1)))
        return feats

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for f in self._features(text):
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return normalise(out)
