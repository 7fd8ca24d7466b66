"""The block's searches, run ahead while the request's capture is still running.

A block's two searches (items, and messages to quote) depend only on the newest
user message's text and the scope, not on the capture: run on a memory-path
thread as soon as the body is parsed, they overlap the capture's writer job
(Tantivy's search releases the interpreter lock), and block assembly reads their
hits instead of searching again. :func:`run_ahead` does the searches;
:func:`hook` wraps the live search hook so that a call with the same query,
kinds and ``k`` takes the hits found ahead and any other call searches as before.

Hits found ahead are the ones a search at assembly time would return, but for
documents the index took in between (the indexer runs behind the writer either
way: ``indexed_items`` is read before the search, as assembly reads it, so an item
newer than the search's index gets its imputed score).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from memory_core.models import Scope

log = logging.getLogger("lcm.assembly")

Hits = list[tuple[str, int, float]]
SearchHook = Callable[..., Hits]


@dataclass(frozen=True)
class BlockSearches:
    """Hits found ahead for one query: ``hits[(kinds, k)]`` → ``(kind, ref_id,
    score)`` best first, as the search hook returns them; ``indexed``: the newest
    item id the search index held before the searches (``None``: unknown)."""

    scope: Scope
    query: str
    indexed: int | None
    hits: dict[tuple[tuple[str, ...], int], Hits] = field(default_factory=dict)


Ahead = Future[BlockSearches]
"""The searches ahead as queued on a thread pool."""


def run_ahead(search: SearchHook, scope: Scope, query: str,
              wanted: Sequence[tuple[tuple[str, ...], int]],
              indexed: Callable[[], int | None]) -> BlockSearches:
    """Run ``search(scope, query, kinds, k)`` for each ``(kinds, k)`` of ``wanted``.

    ``indexed()``: the index's newest item id, read first. Raises what a search
    raises (:func:`take` then leaves assembly to search live, where it meets the
    error as it always did)."""
    out = BlockSearches(scope, query, indexed())
    for kinds, k in wanted:
        out.hits[(tuple(kinds), k)] = search(scope, query, kinds, k)
    return out


def take(ahead: Future[BlockSearches] | None) -> BlockSearches | None:
    """The searches found ahead, waiting for them while they run; ``None`` when
    there are none, one failed, or they have not started (then they never run:
    assembly searches live rather than queue behind them)."""
    if ahead is None or ahead.cancel():
        return None
    try:
        return ahead.result()
    except Exception as exc:  # noqa: BLE001 - live search instead
        log.debug("searches ahead for the block failed: %r", exc)
        return None


def hook(live: SearchHook, found: BlockSearches) -> SearchHook:
    """``live`` answering the calls ``found`` holds (same scope, query, kinds and
    ``k``) with its hits; every other call goes to ``live``."""

    def search(scope: Scope, query: str, kinds: Sequence[str], k: int) -> Hits:
        hits = found.hits.get((tuple(kinds), k)) \
            if scope == found.scope and query == found.query else None
        return list(hits) if hits is not None else live(scope, query, kinds, k)

    return search
