"""Memory items the upstream already sees: what the injection block does not repeat.

The block carries what the model cannot see (DESIGN §7). A fact, decision or
assistant proposal whose own message the upstream receives verbatim, among the
newest ``injection.in_view_tokens`` tokens of the request (not compacted), is left
out of the block: the model reads it where it was said. Three exceptions keep the
block from misleading:

- preferences and constraints are restated whatever the view (standing
  instructions are what drifts out of a long window's attention);
- an item with an unresolved conflict is restated (the message alone does not
  say that it conflicts);
- an in-view item newer than a rule, preference, decision or proposal the block
  shows, and sharing a keyword few items hold, is shown after all, with it: otherwise
  the block would show "never deploy on Fridays" and leave out the newer
  "deploying on Fridays is fine now", or show a choice made on an abandoned branch
  without the one that replaced it.

Its effect on tokens and the cacheable prefix: docs/evaluation/constants.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from memory_core.store.api import Tx

SEEN_KINDS = frozenset(("fact", "decision", "proposal"))
"""Kinds of item not repeated while their source message is in view."""

LOGGED = 50
"""At most this many not-repeated items are named in one explain log."""

ANCHOR_KINDS = frozenset(("constraint", "preference", "decision", "proposal"))
"""Kinds of shown item whose newer, related in-view items are shown with them."""

RARE_TERM_ITEMS = 3
"""A keyword held by at most this many active items relates the items that share it."""

NOT_REPEATED = "not repeated"
"""How an explain-log ``omitted`` row left out by this rule begins its ``reason``."""


def newest(tx: Tx, visible_ids: Sequence[int], tokens: int,
           counts_of: Callable[[Tx, Sequence[int]], dict[int, int]]) -> set[int]:
    """The in-view ids: the newest of ``visible_ids`` (distinct, in path order, as the
    upstream sees them verbatim) whose stored o200k token counts (``messages.tokens``)
    add up to at most ``tokens``, walking back from the end and stopping at the first
    that does not fit (the newest message counts too: after a pasted message longer
    than ``tokens``, nothing is in view); ``set()`` when ``tokens`` is 0. Reads the
    counts of the tail only, 128 ids at a time (a few for 8000 tokens), through
    ``counts_of(tx, ids)`` (:meth:`memory_core.capture.message_facts.MessageFacts.counts`:
    ``{id: tokens}``, missing ids absent)."""
    out: set[int] = set()
    if tokens <= 0:
        return out
    used = 0
    for end in range(len(visible_ids), 0, -128):
        chunk = list(visible_ids[max(0, end - 128):end])
        counts = counts_of(tx, chunk)
        for mid in reversed(chunk):
            used += counts.get(mid) or 0
            if used > tokens:
                return out
            out.add(mid)
    return out


def is_in_view(row: Any, view_ids: set[int]) -> bool:
    """Whether the block leaves out ``row`` (a ``memory_items`` row) because the
    upstream reads its source message among ``view_ids`` (module docstring)."""
    return (row["kind"] in SEEN_KINDS and row["source_message_id"] in view_ids
            and row["conflict_with"] is None)


def related_updates(shown: Sequence[tuple[Any, float]], hidden: Sequence[Any],
                    terms_of: Callable[[Any], frozenset[str]], limit: int,
                    population: Sequence[Any] = (), *,
                    term_counts: Callable[[set[str]], Mapping[str, int]] | None = None,
                    ) -> list[tuple[Any, float, Any]]:
    """In-view items to show after all: each ``hidden`` row newer (higher id) than a
    ``shown`` rule, preference, decision or proposal (:data:`ANCHOR_KINDS`) it
    relates to, and not saying the same words. Related: a keyword (``terms_of``)
    that at most :data:`RARE_TERM_ITEMS` items of ``population`` + ``hidden`` hold
    ("fridays" in "never deploy on Fridays" and "deploying on Fridays is fine now").
    A word many items share ("log", a common CJK bigram), or a shared subject,
    relates nothing: on the eval's 2000-turn session, counting a third of shared
    words grew the block from 971 to 1,144 tokens a turn, and the same subject from
    971 to 1,123 (filler says many things about "the audit log"). A fact that
    changes a shown fact's value is the supersession rules' job (it supersedes it,
    or is marked as conflicting and restated). Returns ``(row, priority,
    shown_row)``, the priority just above the shown row's, so a budget that keeps
    the old item keeps its update; at most ``limit`` rows (the block's
    ``max_items``), the most important first. ``term_counts(terms)``, when given,
    returns those counts (``{term: items}``) in place of counting ``population``
    and ``hidden`` here (the item index's postings:
    :mod:`memory_core.items.index`)."""
    if not shown or not hidden or limit <= 0:
        return []
    by_term: dict[str, list[int]] = {}
    for i, (row, _) in enumerate(shown):
        if row["kind"] in ANCHOR_KINDS:
            for term in terms_of(row):
                by_term.setdefault(term, []).append(i)
    candidates: dict[int, tuple[Any, set[str]]] = {}
    for row in hidden:
        via_terms = by_term.keys() & terms_of(row)  # a set, in C
        if via_terms:
            candidates[row["id"]] = (row, via_terms)
    if not candidates:
        return []
    wanted = set().union(*(c[1] for c in candidates.values()))
    df: Mapping[str, int]
    if term_counts is not None:
        df = term_counts(wanted)
    else:
        counted: Counter[str] = Counter()
        for item in (*population, *hidden):
            counted.update(wanted & terms_of(item))
        df = counted
    out: list[tuple[Any, float, Any]] = []
    for row, via_terms in candidates.values():
        related: set[int] = set()
        for term in via_terms:
            if df.get(term, 0) <= RARE_TERM_ITEMS:
                related.update(by_term[term])
        text = " ".join(str(row["text"]).split()).casefold()
        best: tuple[float, int] | None = None
        for i in related:
            old, prio = shown[i]
            if old["id"] >= row["id"] or " ".join(str(old["text"]).split()).casefold() == text:
                continue
            if best is None or prio > best[0]:
                best = (prio, i)
        if best is not None:
            out.append((row, best[0] + 1e-6, shown[best[1]][0]))
    out.sort(key=lambda u: -u[1])
    return out[:limit]


def not_repeated_log(hidden: Sequence[Any], weight_of: Callable[[Any], float],
                     query_terms: AbstractSet[str], terms_of: Callable[[Any], frozenset[str]]
                     ) -> list[dict[str, Any]]:
    """Explain-log rows (``omitted``) for the hidden items that would have been
    candidates: standing ones (``weight_of`` > 0) and ones sharing a keyword with the
    turn; at most :data:`LOGGED`. ``tokens`` is 0: the line was never rendered."""
    out: list[dict[str, Any]] = []
    for row in hidden:
        if len(out) >= LOGGED:
            break
        weight = weight_of(row)
        if weight > 0:
            why = f"standing {row['kind']} (weight {weight:.1f})"
        elif query_terms & terms_of(row):
            why = "shares a keyword with this turn"
        else:
            continue
        out.append({"ref": f"item:{row['id']}", "section": "items", "tokens": 0,
                    "reason": f"{NOT_REPEATED}: msg {row['source_message_id']} is in view",
                    "would_have_been": why})
    return out
