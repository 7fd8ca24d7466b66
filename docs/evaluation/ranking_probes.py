"""Ranking changes tried as code on kept long-session stores, none of them adopted.

Each probe patches one step of ``SearchService.search`` in this process only, then
runs :mod:`retrieval_variants` with the remaining arguments (its ``base`` variant is
the probe). Figures: README.md, "Rank-1 on the quick profile, seventh round".

- ``coverage=P``: each BM25 candidate's score times ``c ** P``, ``c`` the share of
  the query's term weight (the idf sum of :meth:`TantivyTextIndex.reference_score`'s
  terms) that the record's own text holds: Lucene's classic coordination factor,
  so a record that matches one common word of the question counts for less. The
  record's text is read from the store and cut into words and CJK bigrams with the
  index's own analyzers; a record that matched through its context or extra field
  alone keeps its score.
- ``seen_reference=ngram|all``: the keyword reference leaves out the CJK bigrams
  (``ngram``) or all terms (``all``) that no document holds.
- ``standing_gate``: ``standing_preference_boost`` only for a kept preference ahead,
  on the vector list, of every stated preference the query asks for.

Run: ``python docs/evaluation/ranking_probes.py coverage=0.5 quick 10 default
--stores /tmp/rank1d/s10``.
"""
import math
import runpy
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.search import fulltext, service  # noqa: E402
from memory_core.search.searchconfig import KIND_CODES, KIND_NAMES  # noqa: E402
from proxy.evaluation import runner  # noqa: E402

SHIFT = 40


def _idf(text: Any, query: str, speakers: frozenset[str]
         ) -> dict[tuple[str, str], tuple[float, int]]:
    """The reference's terms of ``query``: their idf (as ``reference_score``) and
    document frequency."""
    _, runs, words, _ = text._plan(query, require_all=False, speakers=speakers)
    terms = [("text", w) for w in words] + [("ngram", g) for bigrams, each in runs
                                            for g in (each or bigrams[:1])]
    searcher = text.index.searcher()
    n = sum(fulltext._hidden_counts(searcher))
    return {t: (math.log(1.0 + (n - df + 0.5) / (df + 0.5)), df)
            for t in terms for df in [searcher.doc_freq(*t)]} if n > 0 else {}


def coverage(power: float) -> None:
    keyword = service.SearchService._keyword

    def patched(self: Any, query: str, flt: Any, limit: int, *, require_all: bool = False,
                context_weight: float = 0.0) -> Any:
        found, speakers = keyword(self, query, flt, limit, require_all=require_all,
                                  context_weight=context_weight)
        if require_all or not found or context_weight == 0:
            return found, speakers
        idf = _idf(self.text, query, speakers)
        total = sum(w for w, _ in idf.values())
        if total <= 0:
            return found, speakers
        texts = self.store.read_tx(lambda tx: {lb: runner._hit_text(
            tx, KIND_NAMES[lb >> SHIFT], lb & ((1 << SHIFT) - 1))[0] for lb, _ in found})
        out = []
        for lb, score in found:
            own = fulltext.normalise(texts.get(lb) or "")
            words = set(self.text._words.analyze(fulltext.NGRAM_RUN.sub(" ", own)))
            grams = {g for run in fulltext.NGRAM_RUN.findall(own)
                     for g in self.text._ngrams.analyze(run)}
            held = sum(w for (field, term), (w, _) in idf.items()
                       if term in (words if field == "text" else grams))
            out.append((lb, score * (held / total) ** power if held else score))
        out.sort(key=lambda p: -p[1])
        return out, speakers

    service.SearchService._keyword = patched  # type: ignore[method-assign]


def seen_reference(which: str) -> None:
    def patched(self: Any, query: str, speakers: frozenset[str] = frozenset()) -> float:
        return sum(w for (field, _), (w, df) in _idf(self, query, speakers).items()
                   if df or not (which == "all" or field == "ngram"))

    fulltext.TantivyTextIndex.reference_score = patched  # type: ignore[method-assign]


def standing_gate() -> None:
    add_boost = service.add_boost
    asked: set[int] = set()
    kept_code = KIND_CODES["agent_memory"]
    item_code = KIND_CODES["item"]

    def patched(fused: dict[int, Any], name: str, labels: set[int], amount: float) -> None:
        if name == "intent":
            asked.clear()
            asked.update(labels)
        if name == "standing":
            stated = [fused[lb].vector_rank for lb in asked if lb in fused
                      and lb >> SHIFT == item_code and fused[lb].vector_rank]
            if stated:
                labels = {lb for lb in labels if lb >> SHIFT == kept_code
                          and fused[lb].vector_rank is not None
                          and fused[lb].vector_rank < min(stated)}
        add_boost(fused, name, labels, amount)

    service.add_boost = patched


def main() -> None:
    probe, _, arg = sys.argv[1].partition("=")
    if probe == "coverage":
        coverage(float(arg or 1.0))
    elif probe == "seen_reference":
        seen_reference(arg or "ngram")
    elif probe == "standing_gate":
        standing_gate()
    else:
        raise SystemExit(f"unknown probe {probe!r}")
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    runpy.run_path(str(ROOT / "docs/evaluation/retrieval_variants.py"), run_name="__main__")


if __name__ == "__main__":
    main()
