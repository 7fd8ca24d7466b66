"""Arrays and a term index over a scope's active items, kept up to date by change.

Assembly (:func:`memory_core.assembly.block.assemble`) scores every active item of the
role against the turn, picks the standing ones and the matches, and counts how
many items hold each of the turn's keywords. Done item by item in Python that is
about 10 µs an item, on every request, and the item set grows with the
conversation. :class:`ItemIndex` keeps, per item, what assembly reads (standing
weight, keyword terms, conversation-locality, kind, source message, thread) in
numpy arrays, and an inverted index from keyword term to the items holding it;
the item cache (:mod:`memory_core.items.cache`) applies each change to it (an item
added, changed or gone), so a request pays for its own keywords' postings and a
few array operations in C, not for a Python loop over every item.

An item is one sentence of a message; the rest of the message often names what the
sentence is about ("I went to the beach last weekend. We saw dolphins there."). With a
``context`` function the index also keeps, per item, its source message's other terms
in postings of their own (:meth:`IndexView.context_slots`), which assembly weighs
below the item's own words, and the terms of the message's speaker's name
(:attr:`IndexView.names`), which a context match never counts: who said a message is
the item's own speaker term, not what the message is about.

Slots are append-only: a changed item takes a new slot and its old one is marked
dead; the arrays are rebuilt when dead slots outnumber live ones. A
:class:`IndexView` is a consistent copy of the arrays for one request (the
postings are shared: they only grow, and a view ignores slots past its end).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Prepare = Callable[[Any], tuple[float, frozenset[str], bool]]
"""``row -> (standing weight, keyword terms, conversation-local)``."""
Context = Callable[[Any], tuple[frozenset[str], frozenset[str]]]
"""``row -> (keyword terms of its source message, terms of that message's speaker's
name)``; empty sets for none."""
MessageContext = dict[int, tuple[frozenset[str], frozenset[str]]]
"""Source message id → (its keyword terms, its speaker's name terms)."""
NO_CONTEXT: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
"""The context of an item whose message gives none (absent, or too long to say)."""


def context_of(messages: MessageContext) -> Context:
    """The :data:`Context` of items read from ``messages`` by their
    ``source_message_id`` (:data:`NO_CONTEXT` for none or an unknown one)."""
    def of(row: Any) -> tuple[frozenset[str], frozenset[str]]:
        m = row["source_message_id"]
        return NO_CONTEXT if m is None else messages.get(int(m), NO_CONTEXT)
    return of

FoldKey = Callable[[Any], int]
"""``row -> the number of what assembly folds it with`` (``-1``: nothing)."""

SEEN_KINDS = frozenset(("fact", "decision", "proposal"))
"""Kinds the in-view rule may leave out (:data:`memory_core.assembly.in_view.SEEN_KINDS`)."""

_START = 256


@dataclass(frozen=True)
class IndexView:
    """One request's view of an :class:`ItemIndex`: arrays of ``n`` slots.

    ``rows[s]``: the item row of slot ``s``; ``ids``, ``weight``, ``src`` (source
    message id, ``-1`` for none), ``thread`` (``-1`` for none), ``fold`` (the
    index's ``fold_key`` of a standing row, ``-1`` for the others; ``has_fold_keys``:
    the index was given a ``fold_key``); boolean arrays
    ``live`` (an active item among the scope's newest ``max_items``), ``question``,
    ``local``, ``seen`` (a kind the in-view rule applies to, without a conflict);
    ``terms[s]`` the slot's keyword terms; ``postings`` term → slots (ascending);
    ``slot_of`` item id → live slot; ``by_source`` source message id → slots (live
    or not); ``arrays`` term → the postings as an array (a prefix: :meth:`slots`);
    ``context_postings``/``context_arrays`` the same for the terms of each item's source
    message that the item's own terms lack (:meth:`context_slots`); ``names`` the
    terms of the speakers' names met in those messages.
    The lists and dicts are shared with the index and only grow (a rebuild makes
    new ones): slots ≥ ``n`` are not this view's; use :meth:`slot`,
    :meth:`slots` and :meth:`source_slots`.
    """

    n: int
    rows: Sequence[Any]
    ids: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    src: npt.NDArray[np.int64]
    thread: npt.NDArray[np.int64]
    fold: npt.NDArray[np.int64]
    live: npt.NDArray[np.bool_]
    question: npt.NDArray[np.bool_]
    local: npt.NDArray[np.bool_]
    seen: npt.NDArray[np.bool_]
    terms: Sequence[frozenset[str]]
    postings: dict[str, list[int]]
    slot_of: dict[int, int]
    by_source: dict[int, list[int]]
    arrays: dict[str, npt.NDArray[np.intp]]
    has_fold_keys: bool = False
    context_postings: dict[str, list[int]] | None = None
    context_arrays: dict[str, npt.NDArray[np.intp]] | None = None
    names: frozenset[str] = frozenset()

    def slots(self, term: str) -> npt.NDArray[np.intp]:
        """Slots (< ``n``) of the items holding ``term`` (live or not), ascending.

        A turn's common words are held by items of every turn: converting their
        postings on every request cost time in the conversation's length (about
        0.4 ms a request at 1,000 turns of issue 28's numbers workload). The array
        of a term's postings is kept (``arrays``) and extended by the slots added
        since; a postings list only grows, so any array kept is a prefix of it
        (threads racing to extend one each store a correct prefix)."""
        return _prefix(self.postings, self.arrays, term, self.n)

    def context_slots(self, term: str) -> npt.NDArray[np.intp]:
        """Slots (< ``n``) of the items whose source message holds ``term`` and whose
        own terms do not (live or not), ascending; empty without a ``context``."""
        if self.context_postings is None or self.context_arrays is None:
            return np.empty(0, dtype=np.intp)
        return _prefix(self.context_postings, self.context_arrays, term, self.n)

    def slot(self, item_id: Any) -> int | None:
        """The slot of item ``item_id`` in this view, ``None`` when absent."""
        s = self.slot_of.get(item_id) if item_id is not None else None
        if s is None or s >= self.n or self.ids[s] != item_id:
            return None
        return s

    def source_slots(self, message_ids: Iterable[Any]) -> list[int]:
        """Slots (< ``n``) of the items whose source is one of ``message_ids``."""
        out: list[int] = []
        for m in message_ids:
            for s in self.by_source.get(m, ()):
                if s < self.n:
                    out.append(s)
        return out


def _prefix(postings: dict[str, list[int]], arrays: dict[str, npt.NDArray[np.intp]],
            term: str, n: int) -> npt.NDArray[np.intp]:
    p = postings.get(term)
    if not p:
        return np.empty(0, dtype=np.intp)
    k = len(p)
    a = arrays.get(term)
    if a is None or len(a) < k:
        done = 0 if a is None else len(a)
        tail = np.fromiter(p[done:k], dtype=np.intp, count=k - done)
        a = tail if a is None else np.concatenate((a, tail))
        a.flags.writeable = False  # handed out to every request: never changed
        arrays[term] = a
    return a[: int(np.searchsorted(a, n))] if a[-1] >= n else a


class ItemIndex:
    """The arrays and term index of one scope's active items (module docstring);
    thread-safe. ``prepare`` computes a row's weight, terms and locality (called
    once per item version); ``max_items``: only the newest this many active items
    are ``live`` in a view (the item cache's limit); ``fold_key``: a number per
    standing row (a positive weight) kept in the ``fold`` array (once per item
    version, as ``prepare``; ``-1`` for the others); ``context``: the terms of a
    row's source message and of its speaker's name (module docstring; once per item
    version)."""

    def __init__(self, prepare: Prepare, max_items: int, rows: Iterable[Any] = (), *,
                 fold_key: FoldKey | None = None, context: Context | None = None) -> None:
        self._prepare = prepare
        self._fold_key = fold_key
        self._context = context
        self._max = max_items
        self._lock = threading.Lock()
        self.seq = 0
        """The item cache's change-log position this index reflects (its owner's)."""
        self._reset()
        for r in rows:
            self._add(r)

    def _reset(self) -> None:
        self._n = 0
        self._live_count = 0
        self._rows: list[Any] = []
        self._terms: list[frozenset[str]] = []
        self._ids = np.zeros(_START, dtype=np.int64)
        self._weight = np.zeros(_START, dtype=np.float64)
        self._src = np.zeros(_START, dtype=np.int64)
        self._thread = np.zeros(_START, dtype=np.int64)
        self._fold = np.zeros(_START, dtype=np.int64)
        self._alive = np.zeros(_START, dtype=np.bool_)
        self._question = np.zeros(_START, dtype=np.bool_)
        self._local = np.zeros(_START, dtype=np.bool_)
        self._seen = np.zeros(_START, dtype=np.bool_)
        self._postings: dict[str, list[int]] = {}
        self._arrays: dict[str, npt.NDArray[np.intp]] = {}
        self._context_postings: dict[str, list[int]] = {}
        self._context_arrays: dict[str, npt.NDArray[np.intp]] = {}
        self._names: frozenset[str] = frozenset()
        self._slot_of: dict[int, int] = {}
        self._by_source: dict[int, list[int]] = {}

    def _grow(self) -> None:
        cap = len(self._ids) * 2
        for name in ("_ids", "_weight", "_src", "_thread", "_fold", "_alive", "_question",
                     "_local", "_seen"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _add(self, row: Any) -> None:
        item_id = int(row["id"])
        self._drop(item_id)
        if self._n == len(self._ids):
            self._grow()
        s = self._n
        weight, words, local = self._prepare(row)
        src = row["source_message_id"]
        thread = row["thread_id"]
        self._rows.append(row)
        self._terms.append(words)
        self._ids[s] = item_id
        self._weight[s] = weight
        self._src[s] = -1 if src is None else int(src)
        self._thread[s] = -1 if thread is None else int(thread)
        # only standing rows (weight > 0) are ever folded: the others' keys are unused
        self._fold[s] = -1 if self._fold_key is None or weight <= 0 else self._fold_key(row)
        self._alive[s] = True
        self._question[s] = row["kind"] == "question"
        self._local[s] = local
        self._seen[s] = row["kind"] in SEEN_KINDS and row["conflict_with"] is None
        self._slot_of[item_id] = s
        if src is not None:
            self._by_source.setdefault(int(src), []).append(s)
        if row["kind"] != "question":
            for t in words:
                self._postings.setdefault(t, []).append(s)
            if self._context is not None:
                around, name = self._context(row)
                if name - self._names:
                    self._names = self._names | name
                for t in around - words:
                    self._context_postings.setdefault(t, []).append(s)
        self._n += 1
        self._live_count += 1

    def _drop(self, item_id: int) -> None:
        s = self._slot_of.pop(item_id, None)
        if s is not None:
            self._alive[s] = False
            self._live_count -= 1

    def apply(self, removed: Iterable[int], added: Iterable[Any]) -> None:
        """Forget the items ``removed`` (ids) and add (or replace) the rows ``added``
        (active items); rebuild the arrays when dead slots outnumber live ones."""
        with self._lock:
            for i in removed:
                self._drop(int(i))
            for r in added:
                self._add(r)
            if self._n - self._live_count > max(_START, self._live_count):
                live = [self._rows[s] for s in sorted(self._slot_of.values())]
                self._reset()
                for r in live:
                    self._add(r)

    def view(self) -> IndexView:
        """A consistent copy of the arrays for one request."""
        with self._lock:
            n = self._n
            live = self._alive[:n].copy()
            ids = self._ids[:n].copy()
            if self._live_count > self._max:
                # Only the newest max_items active items (the item cache's limit).
                floor = np.partition(ids[live], -self._max)[-self._max]
                live &= ids >= floor
            return IndexView(
                n=n, rows=self._rows, ids=ids, weight=self._weight[:n].copy(),
                src=self._src[:n].copy(), thread=self._thread[:n].copy(),
                fold=self._fold[:n].copy(), live=live,
                question=self._question[:n].copy(), local=self._local[:n].copy(),
                seen=self._seen[:n].copy(), terms=self._terms, postings=self._postings,
                slot_of=self._slot_of, by_source=self._by_source, arrays=self._arrays,
                has_fold_keys=self._fold_key is not None,
                context_postings=self._context_postings if self._context else None,
                context_arrays=self._context_arrays if self._context else None,
                names=self._names)
