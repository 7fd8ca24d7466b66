"""OpenAI-compatible ``POST {base_url}/embeddings`` over stdlib ``urllib``.

Runs on the indexer's (or the caller's) thread; never on the asyncio loop, which is
why blocking ``urllib`` is acceptable and memory_core stays free of aiohttp. The
vectors are re-normalised (some servers return unnormalised vectors). ``dim`` is
learned from the first response when not configured.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np

from memory_core.search.embed.base import EmbedderError, normalise


class HttpEmbedder:
    """Embeddings from ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) with ``model``.

    ``api_key`` is sent as a bearer token and never logged. ``timeout`` is in
    seconds per request. Raises ``EmbedderError`` on transport errors, non-2xx
    status, or a body without ``data[*].embedding``.
    """

    def __init__(
        self, base_url: str, model: str, api_key: str = "", *, dim: int = 0,
        timeout: float = 30.0, batch_size: int = 64,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"http/{model}"
        self._key = api_key
        self.dim = dim
        self.timeout = timeout
        self.batch_size = max(1, batch_size)

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        req = urllib.request.Request(self.url, data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        if self._key:
            req.add_header("Authorization", f"Bearer {self._key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise EmbedderError(f"embeddings endpoint answered {exc.code}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EmbedderError(f"embeddings request failed: {exc}") from exc
        try:
            rows = sorted(payload["data"], key=lambda d: d.get("index", 0))
            arr = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError("embeddings response has no data[*].embedding") from exc
        if arr.shape[0] != len(texts):
            raise EmbedderError(f"asked {len(texts)} embeddings, got {arr.shape[0]}")
        return arr

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._post([t or " " for t in texts[i : i + self.batch_size]])
            for i in range(0, len(texts), self.batch_size)
        ]
        out = normalise(np.concatenate(parts))
        if self.dim and out.shape[1] != self.dim:
            raise EmbedderError(f"expected {self.dim} dimensions, got {out.shape[1]}")
        self.dim = int(out.shape[1])
        return out
