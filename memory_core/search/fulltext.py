"""Full-text index over Tantivy: English words, CJK substrings, filters, BM25.

Schema (DEPENDENCIES.md, "Tantivy configuration for CJK + English"):

- ``key`` i64 (stored, fast): the label ``kind << 40 | ref_id`` (``base.make_label``);
  upserts delete by this term first. i64, never u64 (a u64 delete matches nothing).
- ``kind``, ``thread``, ``ts`` (UNIX milliseconds), ``hidden``: i64, indexed + fast,
  used as filters (``ts`` for time ranges).
- ``tenant``, ``role``, ``session``, ``msg_role``: ``raw`` strings (exact terms).
- ``text``: the words, analyzer ``simple → remove_long(40) → lowercase → ascii_fold
  [→ stemmer(english)]``. Stemming on by default: measured on LoCoMo (see
  ``memory_core/evaluation/locomo.py``). A CJK run comes out of it as one token.
- ``extra``: the same analyzer over added words (speaker, session date), searched
  with a lower boost.
- ``speaker``: the same analyzer over a message's ``name``. A query word that is a
  speaker's name in the caller's scope (:meth:`TantivyTextIndex.speaker_terms`) is
  matched here instead of in ``text``: "What did Caroline research?" is about
  Caroline's turns, while the other participant's turns *address* her by name.
- ``context``: the same analyzer over the previous turn's text (``docs.py``),
  searched with ``context_weight`` (hybrid searches only).
- ``ngram``: ``ngram(1, 2) → lowercase`` over the CJK and emoji runs only, joined by
  newlines (the n-gram tokenizer would also cut English into grams).

Queries are built in Python, not with ``parse_query``: the query text goes through
the same analyzers (``TextAnalyzer.analyze``), words become ``Should`` term queries
on ``text``, ``extra`` and ``context`` (stopwords, stemmed like the words, dropped),
a CJK run becomes a boolean of its bigrams (``Must``: an
exact-substring-like match), ``word*`` becomes a regex query over the indexed
terms, and the filters are ``Must`` clauses. Tokenizers are registered again on
every open (Tantivy does not persist them).

Thread-safety: one writer (the indexer's text thread) calls ``upsert``/``delete``/
``commit``; ``search`` may run on any thread concurrently (Tantivy releases the GIL).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import shutil
import threading
import unicodedata
from pathlib import Path
from typing import cast

import tantivy
from tantivy import Filter, Occur, Query, TextAnalyzerBuilder, Tokenizer

from memory_core.capture.evidence import storable_text
from memory_core.extraction.prepare import fold_width
from memory_core.search.base import IndexDoc, SearchFilter, SearchIndexError
from memory_core.search.docs import TEXT_RECIPE
from memory_core.search.searchconfig import KIND_CODES

log = logging.getLogger("lcm.search.text")

SCHEMA_VERSION = 2
"""Bump when the fields or analyzers change; a mismatch rebuilds the index."""

_CJK = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_EMOJI = "\u2600-\u27bf\U0001f000-\U0001faff"
NGRAM_RUN = re.compile(f"[{_CJK}{_EMOJI}]+")
_WILDCARD = re.compile(r"[^\s*]*\*[^\s]*")
_KANA_ONLY = re.compile("[\u3040-\u309f\u30fc]+")
"""A bigram of hiragana (and the long-vowel mark) only: in Japanese these are
mostly particles and inflections (が, の, ます, ない, とき…) that nearly every
turn holds, so a ranked query does not score them each on its own (the run's
all-bigrams clause still holds them). Long-session eval, kept stores searched as
at question time: BM25 found 17 → 22 of 77 within its top 10."""
_REGEX_META = re.compile(r"([.+?^${}()|\[\]\\])")
_QUERY_CACHE = 64
"""Built text queries kept per index (:meth:`TantivyTextIndex.build_query`)."""
_TERMS_AS_CLAUSES = 32
"""Most values :meth:`TantivyTextIndex._any_of` turns into term clauses."""


def _hidden_counts(searcher: tantivy.Searcher) -> tuple[int, int]:
    """``(shown, hidden)`` documents of ``searcher``'s snapshot, deleted ones included
    until their segment merges. Every document has a ``hidden`` value, so their sum
    is BM25's N as Tantivy counts it (``num_docs`` leaves the deleted ones out)."""
    return searcher.doc_freq("hidden", 0), searcher.doc_freq("hidden", 1)


def _keys(searcher: tantivy.Searcher, addrs: list[tantivy.DocAddress]) -> list[int]:
    """The ``key`` (label) of each hit: an integer fast field every document has."""
    return [int(cast(int, k)) for k in searcher.fast_field_values("key", addrs)]

STOPWORDS = frozenset(
    "a about above after again against all also am an and any are as at be because been before"
    " being below between both but by can could d did do does doing don down during each ever"
    " few for from further had has have having he her here hers herself him himself his how i"
    " if in into is it its itself just ll m me more most my myself no nor not now o of off on"
    " once only or other our ours ourselves out over own re s same she should so some such t"
    " than that the their theirs them themselves then there these they this those through to"
    " too under until up ve very was we were what when where which while who whom why will"
    " with would y you your yours yourself yourselves".split()
)
"""Dropped from ranked (not ``require_all``) queries when other words remain: the
usual English function words (NLTK's list), compared after the analyzer, so the
stemmed forms ("does" → "doe") are caught too. LoCoMo BM25 recall@10 (categories
1-4) rose by about 0.02 over the former 60-word list compared unstemmed."""

_GLUED = re.compile(f"(?<=[{_CJK}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{_CJK}])")


def normalise(text: str) -> str:
    """Text as both index and query see it: Unicode NFC (an accent or a Hangul
    syllable typed decomposed, NFD, matches the composed form; Tantivy's analyzers
    cannot normalise), full-width ASCII folded to half-width (``ＳＲＶ７７８１``, as
    CJK input methods type it, is the word ``SRV7781``; Tantivy's ascii_fold folds a
    full-width word alone, but not one glued to kana or hanzi) and a space where
    ASCII letters or digits meet CJK (``部署auth-svc之后`` holds the words ``auth``
    and ``svc``, which the simple tokenizer would otherwise glue to the Chinese
    around them). A lone surrogate (an emoji cut in half) becomes U+FFFD, which
    Tantivy can take (:func:`memory_core.capture.evidence.storable_text`)."""
    if not text.isascii():
        text = _GLUED.sub(" ", fold_width(unicodedata.normalize("NFC", storable_text(text))))
    return text


def ngram_runs(text: str) -> str:
    """Return the CJK and emoji runs of ``text`` joined by newlines."""
    return "\n".join(NGRAM_RUN.findall(text))


def _word_analyzer(stemming: bool) -> tantivy.TextAnalyzer:
    builder = (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.ascii_fold())
    )
    if stemming:
        builder = builder.filter(Filter.stemmer("english"))
    return builder.build()


def _ngram_analyzer() -> tantivy.TextAnalyzer:
    return TextAnalyzerBuilder(Tokenizer.ngram(1, 2, False)).filter(Filter.lowercase()).build()


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("key", stored=True, indexed=True, fast=True)
    for name in ("kind", "thread", "ts", "hidden"):
        sb.add_integer_field(name, stored=False, indexed=True, fast=True)
    for name in ("tenant", "role", "session", "msg_role"):
        sb.add_text_field(name, stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("text", stored=False, tokenizer_name="lcm_words", index_option="freq")
    sb.add_text_field("extra", stored=False, tokenizer_name="lcm_words", index_option="freq")
    sb.add_text_field("speaker", stored=False, tokenizer_name="lcm_words", index_option="basic")
    sb.add_text_field("context", stored=False, tokenizer_name="lcm_words", index_option="freq")
    sb.add_text_field("ngram", stored=False, tokenizer_name="lcm_ngram", index_option="freq")
    return sb.build()


class TantivyTextIndex:
    """The Tantivy index in ``path`` (created if missing; rebuilt on version change).

    ``stemming`` selects the word analyzer; the choice is stamped in ``lcm-index.json``
    and a different stamp empties the index (the caller then re-feeds it from SQLite:
    :attr:`was_reset` tells it to). Raises ``SearchIndexError`` when the index cannot
    be opened (for example ``LockBusy``: another process holds the writer).

    ``readonly``: open for searching only, as an operator's command does beside a
    running proxy: no writer (so no writer lock), nothing on disk is created, emptied
    or stamped; a missing index or one stamped for other settings raises
    ``SearchIndexError`` instead of being rebuilt, and the write methods raise it too.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        stemming: bool = True,
        index_dates: bool = False,
        heap_bytes: int = 64 << 20,
        threads: int = 1,
        readonly: bool = False,
    ) -> None:
        self.path = Path(path)
        self.stemming = stemming
        self.readonly = readonly
        self._words = _word_analyzer(stemming)
        self._stop = STOPWORDS | {t for w in STOPWORDS for t in self._words.analyze(w)}
        self._ngrams = _ngram_analyzer()
        stamp = {"schema": SCHEMA_VERSION, "stemming": stemming, "dates": index_dates,
                 "keys": TEXT_RECIPE}
        stamp_file = self.path / "lcm-index.json"
        self.was_reset = False
        try:
            old = json.loads(stamp_file.read_text()) if stamp_file.exists() else None
        except (OSError, ValueError):
            old = None
        if readonly and (old != stamp or not (self.path / "meta.json").exists()):
            raise SearchIndexError(f"text index {self.path} is missing or was built with"
                                   f" other settings ({old}); run `lcm-proxy reindex`")
        if old != stamp and self.path.exists():
            log.warning("text index %s has stamp %s, want %s: rebuilding", self.path, old, stamp)
            shutil.rmtree(self.path)
            self.was_reset = True
        elif old is None:
            self.was_reset = True
        self.path.mkdir(parents=True, exist_ok=True)
        self.schema = _schema()
        try:
            self.index = tantivy.Index(self.schema, str(self.path), reuse=True)
            self.index.register_tokenizer("lcm_words", self._words)
            self.index.register_tokenizer("lcm_ngram", self._ngrams)
            self._writer = (None if readonly else
                            self.index.writer(max(heap_bytes, (15 << 20) * threads), threads))
        except ValueError as exc:
            raise SearchIndexError(f"cannot open text index {self.path}: {exc}") from exc
        if not readonly:
            stamp_file.write_text(json.dumps(stamp))
        self._heap, self._threads = heap_bytes, threads
        self._wlock = threading.Lock()
        self._pending = 0
        self._built = functools.lru_cache(maxsize=_QUERY_CACHE)(self._build_query)

    # -- writes (one writer thread) ---------------------------------------------
    def _writable(self) -> tantivy.IndexWriter:
        """The index's writer; :class:`SearchIndexError` when read-only or closed."""
        if self.readonly:
            raise SearchIndexError(f"text index {self.path} is open read-only")
        if self._writer is None:
            raise SearchIndexError(f"text index {self.path} is closed")
        return self._writer

    def _document(self, doc: IndexDoc) -> tantivy.Document:
        text, extra = normalise(doc.text), normalise(doc.extra)
        return tantivy.Document(
            key=[doc.label],
            kind=[KIND_CODES[doc.kind]],
            thread=[int(doc.thread_id)],
            ts=[int(doc.created_at * 1000)],
            hidden=[1 if doc.hidden else 0],
            tenant=[doc.tenant],
            role=[doc.role],
            session=[doc.session],
            msg_role=[doc.msg_role or ""],
            text=[text],
            extra=[extra],
            speaker=[normalise(doc.speaker)],
            context=[normalise(doc.context)],
            ngram=[ngram_runs(text + "\n" + extra)],
        )

    def upsert(self, docs: list[IndexDoc]) -> None:
        """Replace (delete by key, then add) each doc; visible after :meth:`commit`."""
        with self._wlock:
            writer = self._writable()
            for doc in docs:
                writer.delete_documents_by_term("key", doc.label)
                writer.add_document(self._document(doc))
            self._pending += len(docs)

    def delete(self, labels: list[int]) -> None:
        """Delete the docs with these labels; visible after :meth:`commit`."""
        with self._wlock:
            writer = self._writable()
            for label in labels:
                writer.delete_documents_by_term("key", int(label))
            self._pending += len(labels)

    def commit(self) -> None:
        """Commit pending changes (about 30 ms) and make them visible to searches."""
        with self._wlock:
            self._writable().commit()
            self._pending = 0
        self.index.reload()

    def clear(self) -> None:
        """Delete every document and commit."""
        with self._wlock:
            writer = self._writable()
            writer.delete_all_documents()
            writer.commit()
        self.index.reload()

    def close(self) -> None:
        """Commit what is pending and release the writer lock."""
        with self._wlock:
            if self._writer is None:
                return
            try:
                self._writer.commit()
                self._writer.wait_merging_threads()
            finally:
                self._writer = None  # consumed by wait_merging_threads

    # -- reads (any thread) ----------------------------------------------------
    def count(self) -> int:
        """Number of live (committed) documents."""
        return int(self.index.searcher().num_docs)

    def _filters(self, flt: SearchFilter, searcher: tantivy.Searcher
                 ) -> list[tuple[Occur, Query]]:
        """``flt`` as ``Must`` clauses, leaving out those every document of
        ``searcher``'s snapshot matches (the one tenant and role of a sidecar's
        index, ``hidden`` where nothing is hidden, every kind): they change no
        result, and each filter the text query is intersected with cost about
        0.1 ms a search at 2,400 documents (measured). Counts include deleted
        documents, as the filters would."""
        s = self.schema
        shown, hidden = _hidden_counts(searcher)
        n = shown + hidden
        out = [(Occur.Must, Query.term_query(s, field, value))
               for field, value in (("tenant", flt.tenant), ("role", flt.role))
               if searcher.doc_freq(field, value) != n]
        if flt.kinds is not None:
            codes = sorted({KIND_CODES[k] for k in flt.kinds if k in KIND_CODES})
            if not codes or sum(searcher.doc_freq("kind", c) for c in codes) != n:
                out.append((Occur.Must, self._any_of("kind", codes or [-1])))
        if flt.thread_ids is not None:
            out.append((Occur.Must, self._any_of(
                "thread", sorted({int(t) for t in flt.thread_ids}) or [-1])))
        if flt.session is not None:
            out.append((Occur.Must, Query.term_query(s, "session", flt.session)))
        if flt.start_time is not None or flt.end_time is not None:
            lo = None if flt.start_time is None else int(flt.start_time * 1000)
            hi = None if flt.end_time is None else int(flt.end_time * 1000)
            out.append((Occur.Must, Query.range_query(
                s, "ts", tantivy.FieldType.Integer, lo, hi)))
        if not flt.include_hidden and hidden:
            out.append((Occur.Must, Query.term_query(s, "hidden", 0)))
        return out

    def _any_of(self, field: str, values: list[int]) -> Query:
        """A filter matching documents whose integer ``field`` holds any of ``values``.

        Up to :data:`_TERMS_AS_CLAUSES` values it is one term query each (``Should``):
        Tantivy's term-set query first collects every document of the set into a
        bitset, which cost 0.3 ms more a search than the term query it replaces, on
        an index of 2,600 documents where one kind matches 2,000 (measured here;
        same hits, the filters are unscored). Beyond that, the term-set query.
        """
        if len(values) == 1:
            return Query.term_query(self.schema, field, values[0])
        if len(values) <= _TERMS_AS_CLAUSES:
            return Query.boolean_query([(Occur.Should, Query.term_query(self.schema, field, v))
                                        for v in values])
        return Query.term_set_query(self.schema, field, values)

    def query_words(self, query: str) -> list[str]:
        """The analyzed words of ``query`` outside wildcards and CJK runs (distinct)."""
        rest = _WILDCARD.sub(" ", normalise(query))
        rest = NGRAM_RUN.sub(" ", rest)
        return list(dict.fromkeys(self._words.analyze(rest)))

    def speaker_terms(self, query: str, flt: SearchFilter) -> frozenset[str]:
        """The query's words that name a speaker (``speaker`` field) in ``flt``'s scope.

        A word no document names as its speaker (index-wide ``doc_freq`` 0, the
        usual case: a dictionary lookup) is out at once; each other word costs one
        tiny Tantivy search (tenant ∧ role ∧ speaker:word, one hit), so a word
        counts only when someone *in this scope* goes by it.
        """
        searcher = self.index.searcher()
        words = [w for w in self.query_words(query)
                 if w not in self._stop and searcher.doc_freq("speaker", w)]
        if not words:
            return frozenset()
        s = self.schema
        scope = [(Occur.Must, Query.term_query(s, "tenant", flt.tenant)),
                 (Occur.Must, Query.term_query(s, "role", flt.role))]
        found = set()
        for w in words:
            q = Query.boolean_query([*scope, (Occur.Must, Query.term_query(s, "speaker", w))])
            if searcher.search(q, 1, count=False).hits:
                found.add(w)
        return frozenset(found)

    def _plan(self, query: str, *, require_all: bool, speakers: frozenset[str]
              ) -> tuple[list[str], list[tuple[list[str], list[str]]], list[str], list[str]]:
        """Analyse ``query`` once for :meth:`build_query` and :meth:`reference_score`.

        Returns ``(patterns, runs, words, names)``: regex patterns of the ``word*``
        wildcards; per CJK/emoji run, its distinct bigrams (its unigrams when it
        has none) and the ones scored each on its own in a ranked query (see
        :data:`_KANA_ONLY`); the words matched in ``text``; the words matched in
        ``speaker`` instead.
        """
        patterns: list[str] = []
        query = rest = normalise(query)
        for wild in _WILDCARD.findall(query):
            rest = rest.replace(wild, " ")
            parts = [self._words.analyze(p) for p in wild.split("*")]
            pattern = ".*".join(
                _REGEX_META.sub(r"\\\1", "".join(p)) for p in parts
            )
            if pattern.replace(".*", ""):
                patterns.append(pattern)
        runs: list[tuple[list[str], list[str]]] = []
        for run in NGRAM_RUN.findall(rest):
            grams = self._ngrams.analyze(run)
            bigrams = list(dict.fromkeys(g for g in grams if len(g) == 2)) or grams
            each: list[str] = []
            if not require_all and len(bigrams) > 1:
                # Ranked queries also score each bigram on its own (BM25 over
                # overlapping bigrams, the usual unsegmented-CJK scheme): a question
                # such as "眼下有什么事情卡住我们了吗" is never a substring of the
                # statement it asks about, so the all-bigrams clause alone would
                # match nothing. Hiragana-only bigrams are left out of these.
                each = [g for g in bigrams if not _KANA_ONLY.fullmatch(g)] or bigrams
            runs.append((bigrams, each))
        rest = NGRAM_RUN.sub(" ", rest)
        words = list(dict.fromkeys(self._words.analyze(rest)))
        names: list[str] = []
        if not require_all:
            content = [w for w in words if w not in self._stop]
            words = content or words
            if speakers and (others := [w for w in words if w not in speakers]):
                names = [w for w in words if w in speakers]
                words = others
        return patterns, runs, words, names

    def build_query(
        self,
        query: str,
        *,
        require_all: bool = False,
        speakers: frozenset[str] = frozenset(),
        context_weight: float = 0.0,
    ) -> Query | None:
        """Return the text part of a search (``None`` when the query has no terms).

        ``require_all``: every word/run must match (grep semantics); otherwise words
        are ``Should`` clauses ranked by BM25 and stopwords are dropped. ``speakers``
        (from :meth:`speaker_terms`, ranked queries only): these words are matched
        in the ``speaker`` field instead of the text, as long as other words remain.
        ``context_weight``: boost of the neighbouring-turn field (0: not searched).
        Memoised (``functools.lru_cache`` of :data:`_QUERY_CACHE`; the query depends on
        its arguments alone): the injection block searches twice with the same turn.
        """
        return self._built(query, require_all, speakers, context_weight)

    def _build_query(self, query: str, require_all: bool, speakers: frozenset[str],
                     context_weight: float) -> Query | None:
        s = self.schema
        occur = Occur.Must if require_all else Occur.Should
        clauses: list[tuple[Occur, Query]] = []
        patterns, runs, words, names = self._plan(query, require_all=require_all,
                                                  speakers=speakers)
        for pattern in patterns:
            clauses.append((occur, Query.regex_query(s, "text", pattern)))
        for bigrams, each in runs:
            sub = Query.boolean_query(
                [(Occur.Must, Query.term_query(s, "ngram", g)) for g in bigrams])
            # kept next to the bigrams scored alone: a substring still ranks first
            clauses.append((occur, Query.boost_query(sub, 2.0)))
            clauses.extend((Occur.Should, Query.term_query(s, "ngram", g)) for g in each)
        for w in words:
            if require_all:
                sub = Query.boolean_query([
                    (Occur.Should, Query.term_query(s, "text", w)),
                    (Occur.Should, Query.term_query(s, "extra", w)),
                ])
                clauses.append((Occur.Must, sub))
            else:
                clauses.append((Occur.Should, Query.term_query(s, "text", w)))
                clauses.append((Occur.Should, Query.boost_query(
                    Query.term_query(s, "extra", w), 0.5)))
                if context_weight > 0:
                    clauses.append((Occur.Should, Query.boost_query(
                        Query.term_query(s, "context", w), context_weight)))
        for w in names:
            clauses.append((Occur.Should, Query.term_query(s, "speaker", w)))
        if not clauses:
            return None
        return Query.boolean_query(clauses)

    def reference_score(self, query: str, speakers: frozenset[str] = frozenset()) -> float:
        """The BM25 units against which a hybrid search measures how much of the
        ranked ``query`` its best keyword match covers
        (``SearchConfig.bm25_reference_share``): the sum of the idf of its words
        matched in ``text`` and of its CJK bigrams scored alone (a run's only
        bigram when it has one), which is what those clauses give a document of
        average length holding each term once. Tantivy's idf,
        ``ln(1 + (N - df + 0.5) / (df + 0.5))``, index-wide, with ``N`` counted as
        Tantivy counts it (deleted documents included until their segment merges).
        A term no document holds has the largest idf, so a question that a match
        covers only in part keeps a high reference. Not counted: a run's
        all-bigrams clause (x2), the ``extra``, ``context`` and ``speaker`` fields
        and wildcards, so a document holding a whole CJK run, or the words also in
        its context, scores above it. ``0.0`` when the query has no such term or
        the index is empty. One ``doc_freq`` lookup per term (microseconds).
        """
        _, runs, words, _ = self._plan(query, require_all=False, speakers=speakers)
        terms = [("text", w) for w in words] + [("ngram", g) for bigrams, each in runs
                                                  for g in (each or bigrams[:1])]
        if not terms:
            return 0.0
        searcher = self.index.searcher()
        n = sum(_hidden_counts(searcher))
        if n <= 0:
            return 0.0
        return sum(math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                   for df in (searcher.doc_freq(f, t) for f, t in terms))

    def search(
        self,
        query: str,
        flt: SearchFilter,
        limit: int,
        *,
        require_all: bool = False,
        speakers: frozenset[str] = frozenset(),
        context_weight: float = 0.0,
    ) -> list[tuple[int, float]]:
        """Return up to ``limit`` ``(label, bm25)`` pairs, best first.

        ``speakers``/``context_weight``: see :meth:`build_query`.
        An empty query (no terms) with filters returns the newest matches (score
        0.0), so a pure time-range grep works. Equal scores are ordered by label.
        """
        text_q = self.build_query(query, require_all=require_all, speakers=speakers,
                                  context_weight=context_weight)
        searcher = self.index.searcher()
        clauses = self._filters(flt, searcher)
        if text_q is None:
            q = Query.boolean_query(clauses) if clauses else Query.all_query()
            res = searcher.search(q, limit, count=False, order_by_field="ts")
            addrs = [a for _, a in res.hits]
            keys = _keys(searcher, addrs)
            return [(k, 0.0) for k in keys]  # newest first
        # The filters match without scoring: as scored term clauses each one added
        # its idf to every hit, a constant that min-max fusion (scaled from 0 when
        # the list runs out) and the reference score do not expect.
        if clauses:
            text_q = Query.boolean_query([
                (Occur.Must, Query.const_score_query(Query.boolean_query(clauses), 0.0)),
                (Occur.Must, text_q)])
        try:
            # over-fetch, then break score ties on the label: the order of equal scores
            # would otherwise depend on segment layout (rebuild vs incremental)
            res = searcher.search(text_q, limit * 2, count=False)
        except ValueError as exc:
            raise SearchIndexError(f"text search failed: {exc}") from exc
        addrs = [a for _, a in res.hits]
        keys = _keys(searcher, addrs)
        pairs = [(k, float(score)) for k, (score, _) in zip(keys, res.hits, strict=True)]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:limit]
