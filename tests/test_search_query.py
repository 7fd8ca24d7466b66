"""Query-side ranking: speaker names, dates in the query, previous-turn context, min-max
fusion, stemmed stopwords."""

from __future__ import annotations

import calendar
import dataclasses
from pathlib import Path
from typing import Any

from memory_core.capture import evidence
from memory_core.engine import Engine
from memory_core.models import CaptureTicket, Scope
from memory_core.search import SearchConfig
from memory_core.search.hybrid import fuse, query_periods
from tests.test_search_support import hit_text, open_service, running_service

A = Scope(tenant="tenantA", role="default")


def _capture(engine: Engine, scope: Scope, turns: list[tuple[str, str]], *,
             now: float | None = None, request_id: str = "req") -> list[int]:
    """Store ``(speaker, text)`` turns as one chat with OpenAI ``name`` fields."""
    messages: list[Any] = [
        {"role": "user" if i % 2 == 0 else "assistant", "name": name, "content": text}
        for i, (name, text) in enumerate(turns)
    ]
    ticket = CaptureTicket(scope=scope, request_id=request_id)
    result = engine.store.write_tx(evidence.capture_request, ticket, messages, {}, now).result(30)
    return list(result.message_ids)


def _ts(year: int, month: int, day: int) -> float:
    return float(calendar.timegm((year, month, day, 12, 0, 0)))


def test_query_periods_name_months_and_years() -> None:
    may = (_ts(2023, 5, 1) - 12 * 3600, _ts(2023, 6, 1) - 12 * 3600)
    assert query_periods("What did she do in May 2023?") == [may]
    assert query_periods("What happened on 8 May, 2023?") == [may]
    assert query_periods("and on May 8th, 2023") == [may]
    year = query_periods("Which book did he read in 2022?")
    assert year == [(_ts(2022, 1, 1) - 12 * 3600, _ts(2023, 1, 1) - 12 * 3600)]
    assert query_periods("may I march on?") == []
    dec = query_periods("December 2023")[0]
    assert dec[1] == _ts(2024, 1, 1) - 12 * 3600


def test_minmax_fusion_scales_each_list_over_its_candidates() -> None:
    cfg = SearchConfig(fusion="minmax", bm25_weight=1.0, vector_weight=1.0)
    out = fuse([(1, 10.0), (2, 6.0), (3, 2.0)], [(2, 0.9), (4, 0.5)], cfg)
    assert out[1].score == 0.5            # top of BM25, absent from vectors
    assert out[2].score == 0.75           # (0.5 + 1.0) / 2
    assert out[3].score == 0.0 and out[4].score == 0.0
    flat = fuse([(1, 3.0), (2, 3.0)], [], cfg)
    assert flat[1].score == flat[2].score == 0.0


def test_minmax_fusion_scales_bm25_to_at_least_the_reference() -> None:
    """A best keyword match below the reference score (a document holding the
    whole query) is not stretched to 1; one above it still is."""
    cfg = SearchConfig(fusion="minmax", bm25_weight=1.0, vector_weight=1.0)
    bm25, vec = [(1, 2.0), (2, 1.0)], [(3, 0.9), (1, 0.5)]
    plain = fuse(bm25, vec, cfg, depth=10)
    assert plain[1].score == 0.5 and plain[3].score == 0.5   # a tie: 1.0 / 2 each
    scaled = fuse(bm25, vec, cfg, depth=10, reference=8.0)
    assert scaled[1].score == 0.125                          # (2 / 8) / 2
    assert scaled[2].score == 0.0625 and scaled[3].score == 0.5
    assert fuse(bm25, vec, cfg, depth=10, reference=1.5)[1].score == 0.5


def test_a_keyword_match_on_a_small_part_of_the_query_does_not_outrank_the_meaning(
        tmp_path: Path) -> None:
    """The question shares one word with a statement about something else and
    none with the statement it means (its query vector here is that statement's
    own): min-max alone ranks the lone keyword match first; scaled against the
    query's reference score, the semantic match is first. A search of turns alone
    keeps min-max (LoCoMo's adversarial questions measured better with it)."""
    with running_service(tmp_path, neighbor_weight=0.0, session_boost=0.0,
                         context_weight=0.0, bm25_reference_share=0.0) as (engine, svc):
        ids = _capture(engine, A, [
            ("u", "The settings page throws an error when the input is empty."),
            ("a", "Noted."),
            ("u", "Offline, the client gives up after 30 seconds."),
        ])
        assert svc.wait_idle(20)
        meant = svc.embed_query("Offline, the client gives up after 30 seconds.")
        assert meant is not None
        query = "If the network is down, how long until a request errors out for good?"
        msgs = ["message"]
        words = svc.search("tenantA", "default", query, mode="bm25", kinds=msgs)
        assert [h.ref_id for h in words] == [ids[0]]           # "errors": one word of seven

        def top(**kw: Any) -> str:
            hit = svc.search("tenantA", "default", query, query_vector=meant, **kw)[0]
            return hit_text(engine, hit.kind, hit.ref_id)

        assert top().startswith("The settings page")           # memory and turns: min-max
        svc.config = dataclasses.replace(svc.config, bm25_reference_share=1.4)
        assert top().startswith("Offline, the client")        # scaled: the meaning wins
        assert top(kinds=msgs).startswith("The settings page")  # turns alone: min-max


def test_a_named_speaker_is_matched_as_speaker_not_as_word(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    try:
        ids = _capture(engine, A, [
            ("Melanie", "Thanks Caroline! How is your research on adoption going?"),
            ("Caroline", "My research on adoption agencies is going well."),
            ("Melanie", "Caroline, my research on pottery is fun too."),
        ])
        assert svc.wait_idle(20)
        flt_words = svc.text.speaker_terms("What did Caroline research?", _flt())
        assert flt_words == frozenset({"carolin"})   # stemmed like the indexed name
        assert svc.text.speaker_terms("What did Caroline research?",
                                      _flt(tenant="other")) == frozenset()
        for mode in ("bm25", "hybrid"):
            hits = svc.search("tenantA", "default", "What did Caroline research?", mode=mode)
            assert hits[0].ref_id == ids[1], mode
        hit = svc.search("tenantA", "default", "What did Caroline research?")[0]
        assert hit.boosts["speaker"] == svc.config.speaker_boost
        svc.config = SearchConfig(speaker_boost=0.0).clamped()
        hits = svc.search("tenantA", "default", "What did Caroline research?")
        assert all("speaker" not in h.boosts for h in hits)
    finally:
        svc.close()
        engine.close()


def test_a_date_in_the_query_boosts_hits_of_that_month(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, session_boost=0.0, neighbor_weight=0.0)
    svc.start()
    try:
        old = _capture(engine, A, [("Jon", "I went hiking in the hills")],
                       now=_ts(2023, 3, 4), request_id="1")
        new = _capture(engine, A, [("Jon", "I went hiking in the hills"),
                                   ("Gina", "nice"), ("Jon", "I went hiking by the lake")],
                       now=_ts(2023, 8, 20), request_id="2")
        assert svc.wait_idle(20)
        hits = svc.search("tenantA", "default", "Where did Jon go hiking in August 2023?")
        assert hits[0].ref_id == new[2] and "date" in hits[0].boosts
        assert old[0] not in {h.ref_id for h in hits if "date" in h.boosts}
    finally:
        svc.close()
        engine.close()


def test_hybrid_finds_the_answer_turn_through_the_previous_turn(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, neighbor_weight=0.0, session_boost=0.0,
                       vector_weight=0.0)
    svc.start()
    try:
        ids = _capture(engine, A, [
            ("Ann", "Which telescope did you buy for stargazing?"),
            ("Bob", "A small refractor, it fits in the car."),
            ("Ann", "Lunch was great today."),
            ("Bob", "Glad to hear it."),
        ])
        assert svc.wait_idle(20)
        hybrid = [h.ref_id for h in svc.search("tenantA", "default", "telescope stargazing")]
        assert hybrid[:2] == [ids[0], ids[1]]
        # plain BM25 matches an object's own words only
        assert [h.ref_id for h in svc.search("tenantA", "default", "telescope stargazing",
                                             mode="bm25")] == [ids[0]]
    finally:
        svc.close()
        engine.close()


def test_stemmed_function_words_are_dropped(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    try:
        ids = _capture(engine, A, [("Ann", "The doe does graze"), ("Bob", "kayak trips")])
        assert svc.wait_idle(20)
        # "does" (stemmed "doe") and "his" are function words: only "kayak" counts
        hits = svc.search("tenantA", "default", "What does his kayak do?", mode="bm25")
        assert [h.ref_id for h in hits] == [ids[1]]
    finally:
        svc.close()
        engine.close()


def _flt(tenant: str = "tenantA"):  # type: ignore[no-untyped-def]
    from memory_core.search.base import SearchFilter

    return SearchFilter(tenant=tenant, role="default")


def test_a_turn_is_embedded_after_the_turn_before_it(tmp_path: Path) -> None:
    """``embed_text`` of a user/assistant message is ``"<name>: <text>"`` of the turn
    before (cut at ``embed_context`` characters), a newline, then its own
    ``"<name>: <text>"``, never cut for the context; the first turn, a turn after a
    system prompt or a tool result, and the text index's docs carry no such line."""
    from memory_core.search.docs import embed_key, load_docs

    engine = Engine(tmp_path)
    try:
        ids = _capture(engine, A, [("Ann", "Do you still practise the cello?"),
                                   ("Bob", "Yes, every evening.")])
        messages: list[Any] = [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Run the job."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "run", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "exit 0, 4 files written"},
            {"role": "assistant", "content": "Done: four files."},
        ]
        ticket = CaptureTicket(scope=A, request_id="tools")
        other = list(engine.store.write_tx(evidence.capture_request, ticket, messages, {},
                                           None).result(30).message_ids)

        def embedded(refs: list[int], chars: int, max_chars: int = 2000) -> list[str]:
            docs, _ = engine.store.read_tx(lambda c: load_docs(
                c, "message", refs, index_dates=False, max_chars=max_chars,
                embed_context=chars))
            by_id = {d.ref_id: d.embed_text for d in docs}
            return [by_id[r] for r in refs]

        question = "Ann: Do you still practise the cello?"
        assert embedded(ids, 500) == [question, question + "\nBob: Yes, every evening."]
        assert embedded(ids, 8)[1] == "Ann: Do you s\nBob: Yes, every evening."
        assert embedded(ids, 0)[1] == "Bob: Yes, every evening."
        # the turn's own text keeps the whole budget: the context fits in what is left
        assert embedded(ids, 500, max_chars=40)[1] == "Ann: Do you sti\nBob: Yes, every evening."
        assert embedded(ids, 500, max_chars=24)[1] == "Bob: Yes, every evening."
        texts = dict(zip(other, embedded(other, 500), strict=True))
        user, final = other[1], other[-1]
        assert texts[user] == "Run the job."  # after a system prompt: alone
        assert texts[final] == "Done: four files."  # after a tool result: alone
        docs, _ = engine.store.read_tx(lambda c: load_docs(
            c, "message", ids, index_dates=False, max_chars=2000, context=True))
        assert docs[1].embed_text == "Bob: Yes, every evening."
        assert embed_key("m", 0) == "m|r1" and embed_key("m", 500) == "m|r1|ctx500"
    finally:
        engine.close()
