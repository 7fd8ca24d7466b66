"""Full-text behaviour through SearchService: CJK substrings, emoji, accents, wildcards, time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search import SearchService
from tests.test_search_support import capture_chat, open_service

SCOPE = Scope(tenant="t1", role="default")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    eng = Engine(tmp_path)
    yield eng
    eng.close()


@pytest.fixture
def svc(tmp_path: Path, engine: Engine) -> Iterator[SearchService]:
    service = open_service(tmp_path, engine)
    service.start()
    yield service
    service.close()


def _ids(hits: list) -> list[int]:  # type: ignore[type-arg]
    return [h.ref_id for h in hits]


def test_chinese_substring_found_inside_a_longer_run(engine: Engine, svc: SearchService) -> None:
    ids = capture_chat(engine, SCOPE, [
        "我最近在用标日学习日语，进度不错",
        "我们明天去公园散步",
        "学习计划：每天两课",
    ])
    assert svc.wait_idle(20)
    # ranked: the substring first; a text sharing only a bigram ("学习") may follow
    assert _ids(svc.search("t1", "default", "标日学习", mode="bm25"))[0] == ids[0]
    assert _ids(svc.search("t1", "default", "标日学习", mode="bm25", require_all=True)) == [ids[0]]
    # a substring that is not a word boundary in either text
    assert _ids(svc.search("t1", "default", "日学", mode="bm25")) == [ids[0]]
    assert set(_ids(svc.search("t1", "default", "学习", mode="bm25"))) == {ids[0], ids[2]}
    assert svc.search("t1", "default", "学日", mode="bm25", require_all=True) == []


def test_japanese_substring_in_kana_and_kanji(engine: Engine, svc: SearchService) -> None:
    ids = capture_chat(engine, SCOPE, [
        "毎朝日本語を勉強しています",
        "東京は雨でした",
        "カタカナのテストです",
    ])
    assert svc.wait_idle(20)
    assert _ids(svc.search("t1", "default", "勉強し", mode="bm25")) == [ids[0]]
    assert _ids(svc.search("t1", "default", "カタカナ", mode="bm25")) == [ids[2]]
    assert _ids(svc.search("t1", "default", "東京", mode="hybrid", k=1)) == [ids[1]]


def test_emoji_and_accented_text(engine: Engine, svc: SearchService) -> None:
    ids = capture_chat(engine, SCOPE, [
        "Launch day 🚀 for the café menu",
        "Crème brûlée recipe, naïve résumé notes",
        "plain english text",
    ])
    assert svc.wait_idle(20)
    assert _ids(svc.search("t1", "default", "🚀", mode="bm25")) == [ids[0]]
    assert _ids(svc.search("t1", "default", "cafe", mode="bm25")) == [ids[0]]
    assert _ids(svc.search("t1", "default", "café", mode="bm25")) == [ids[0]]
    assert _ids(svc.search("t1", "default", "creme brulee", mode="bm25")) == [ids[1]]
    assert _ids(svc.search("t1", "default", "résumé", mode="bm25")) == [ids[1]]


def test_wildcard_matches_prefixes(engine: Engine, svc: SearchService) -> None:
    ids = capture_chat(engine, SCOPE, [
        "the kubernetes cluster restarted",
        "kubectl apply failed",
        "nothing relevant here",
    ])
    assert svc.wait_idle(20)
    assert set(_ids(svc.search("t1", "default", "kube*", mode="bm25"))) == {ids[0], ids[1]}
    assert _ids(svc.search("t1", "default", "kubectl*", mode="bm25")) == [ids[1]]
    assert svc.search("t1", "default", "zzz*", mode="bm25") == []


def test_time_range_is_inclusive_and_filters(engine: Engine, svc: SearchService) -> None:
    a = capture_chat(engine, SCOPE, ["deploy notes alpha"], now=1_000.0, request_id="a")
    b = capture_chat(engine, SCOPE, ["deploy notes alpha", "deploy notes beta"], now=2_000.0,
                     request_id="b")
    assert svc.wait_idle(20)
    both = svc.search("t1", "default", "deploy", mode="bm25")
    assert set(_ids(both)) == {a[0], b[1]}
    assert _ids(svc.search("t1", "default", "deploy", mode="bm25", end_time=1_000.0)) == [a[0]]
    assert _ids(svc.search("t1", "default", "deploy", start_time=1_500.0)) == [b[1]]
    # an empty query is a pure time-range listing
    assert _ids(svc.search("t1", "default", "", mode="bm25", start_time=1_999.0)) == [b[1]]


def test_hiragana_bigrams_are_not_scored_alone(engine: Engine, svc: SearchService) -> None:
    """A Japanese question shares its particles and endings (ます, ちま…) with nearly
    every turn: a turn that shares nothing else is not a keyword match, while one
    that shares a content bigram is, and a hiragana-only query still matches."""
    ids = capture_chat(engine, SCOPE, [
        "設定画面がたまに落ちます。",
        "オフライン時は何秒で諦めるか決めましょう。",
        "ありがとうございます",
    ])
    assert svc.wait_idle(20)
    found = _ids(svc.search("t1", "default", "リクエストは何秒待ちますか", mode="bm25"))
    assert found == [ids[1]]
    assert ids[2] in _ids(svc.search("t1", "default", "ございます", mode="bm25"))


def test_reference_score_sums_the_idf_of_the_ranked_terms(
        engine: Engine, svc: SearchService) -> None:
    """The score of a document holding each query term once: the idf of the
    content words (stopwords out) and of the CJK bigrams scored alone."""
    import math

    capture_chat(engine, SCOPE, ["the staging database port", "the production database",
                                 "日志保存期间"])
    assert svc.wait_idle(20)
    searcher = svc.text.index.searcher()
    n = searcher.num_docs

    def idf(field: str, term: str) -> float:
        df = searcher.doc_freq(field, term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    got = svc.text.reference_score("Which port does the staging database use?")
    want = sum(idf("text", w) for w in ("port", "stage", "databas", "use"))
    assert got == pytest.approx(want)
    assert svc.text.reference_score("日志期间") == pytest.approx(
        sum(idf("ngram", g) for g in ("日志", "志期", "期间")))
    assert svc.text.reference_score("the of") == pytest.approx(
        idf("text", "the") + idf("text", "of"))  # only stopwords: they are the terms
    assert svc.text.reference_score("stag*") == 0.0


def test_reference_score_is_what_tantivy_scores_a_document_holding_each_term_once(
        tmp_path: Path) -> None:
    """Every text has four words (so each is of average length): the one holding
    both query words once scores the reference exactly, with another tenant's
    texts in the index (the filters add nothing to the score) and after texts
    were replaced (deleted documents still count in BM25's N)."""
    from memory_core.search.base import IndexDoc, SearchFilter
    from memory_core.search.fulltext import TantivyTextIndex
    from memory_core.search.searchconfig import KIND_CODES

    index = TantivyTextIndex(tmp_path / "text", stemming=False)
    other = ["charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

    def doc(ref: int, tenant: str, text: str) -> IndexDoc:
        return IndexDoc(kind="message", ref_id=ref, tenant=tenant, role="default", text=text)

    docs = [doc(1, "t1", "alpha bravo charlie delta")]
    docs += [doc(i, "t1", " ".join(other[i % 3:i % 3 + 4])) for i in range(2, 8)]
    docs += [doc(i, "t2", "india juliet kilo lima") for i in range(8, 60)]
    index.upsert(docs)
    index.commit()
    index.upsert(docs[1:5])  # replaced: a delete and an add each
    index.commit()
    flt = SearchFilter(tenant="t1", role="default")
    hits = dict(index.search("alpha bravo", flt, 10))
    label = KIND_CODES["message"] << 40 | 1
    assert index.reference_score("alpha bravo") == pytest.approx(hits[label], rel=1e-5)
    assert index.reference_score("alpha bravo") > 2 * index.reference_score("charlie")
    assert index.reference_score("alpha 端口") > index.reference_score("alpha")
    index.close()


def test_filters_every_document_matches_are_left_out_and_change_nothing(
        tmp_path: Path) -> None:
    """A sidecar's index holds one tenant and role: those filters (and ``hidden``
    where nothing is hidden, and a kind list covering every document) are left out
    of the query, and the hits are exactly those of the query with every filter.
    Once a second tenant is indexed, the tenant filter is back and still filters."""
    from memory_core.search.base import IndexDoc, SearchFilter, split_label
    from memory_core.search.fulltext import TantivyTextIndex

    index = TantivyTextIndex(tmp_path / "text", stemming=False)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]

    def doc(ref: int, tenant: str, kind: str = "message") -> IndexDoc:
        return IndexDoc(kind=kind, ref_id=ref, tenant=tenant, role="default",
                        text=" ".join(words[ref % 4: ref % 4 + 3]))

    index.upsert([doc(i, "t1", "message" if i % 3 else "item") for i in range(1, 30)])
    index.commit()

    def clauses(flt: SearchFilter) -> list[str]:
        return [repr(q) for _, q in index._filters(flt, index.index.searcher())]

    def every_filter(flt: SearchFilter) -> list[tuple[int, float]]:
        class Needs:  # stands in for a searcher: every filter looks needed
            def doc_freq(self, field: str, value: object) -> int:
                return 1 if field == "hidden" else -1

        real = index._filters
        index._filters = lambda f, _s: real(f, Needs())  # type: ignore[method-assign]
        try:
            return index.search("alpha charlie", flt, 10)
        finally:
            index._filters = real  # type: ignore[method-assign]

    mine = SearchFilter(tenant="t1", role="default", include_hidden=False)
    assert clauses(mine) == []
    assert clauses(SearchFilter(tenant="t1", role="default", kinds=("message", "item"))) == []
    kind = clauses(SearchFilter(tenant="t1", role="default", kinds=("item",)))
    assert len(kind) == 1 and "TermQuery" in kind[0]  # one kind: a plain term query
    for flt in (mine, SearchFilter(tenant="t1", role="default", kinds=("item",))):
        hits = index.search("alpha charlie", flt, 10)
        assert hits and hits == every_filter(flt)
    assert index.search("alpha", SearchFilter(tenant="t2", role="default"), 10) == []

    index.upsert([doc(100, "t2")])
    index.commit()
    tenant = clauses(mine)
    assert len(tenant) == 1 and '"t1"' in tenant[0]
    assert all(split_label(label)[1] != 100
               for label, _ in index.search("alpha charlie", mine, 50))
    assert index.search("alpha charlie", mine, 10) == every_filter(mine)
    index.close()


@pytest.mark.parametrize("n_values", [1, 3, 32, 33, 60])
def test_a_filter_on_several_values_matches_exactly_those(tmp_path: Path, n_values: int) -> None:
    """Kind and thread filters match the documents holding any of the values, the
    same hits in the same order whether the filter is one term query, term clauses
    (up to 32 values) or Tantivy's term-set query (more), and whatever values
    no document holds."""
    import tantivy

    from memory_core.search.base import IndexDoc, SearchFilter, split_label
    from memory_core.search.fulltext import TantivyTextIndex

    index = TantivyTextIndex(tmp_path / "text", stemming=False)
    kinds = ("message", "item", "summary")
    docs = [IndexDoc(kind=kinds[i % 3], ref_id=i, tenant="t1", role="default",
                     text=f"shared word{i % 7} filler", thread_id=i % 70)
            for i in range(1, 400)]
    index.upsert(docs)
    index.commit()
    threads = list(range(0, 2 * n_values, 2))  # every other thread; some past 70
    flt = SearchFilter(tenant="t1", role="default", thread_ids=tuple(threads),
                       kinds=("item", "summary"))
    hits = index.search("shared word3", flt, 500)
    wanted = {(d.kind, d.ref_id) for d in docs
              if d.thread_id in threads and d.kind in ("item", "summary")}
    assert {split_label(label) for label, _ in hits} == wanted
    # Against the term-set query for every filter, as before.
    s = index.schema
    real = index._any_of
    index._any_of = lambda field, values: tantivy.Query.term_set_query(  # type: ignore[method-assign]
        s, field, values)
    try:
        assert index.search("shared word3", flt, 500) == hits
    finally:
        index._any_of = real  # type: ignore[method-assign]
    assert index.search("shared", SearchFilter(tenant="t1", role="default",
                                               thread_ids=(1000, 1001)), 10) == []
    index.close()
