"""The active memory items of each (tenant, role), kept in memory for assembly.

Every injection looks at all active items of the role (standing items, keyword
scores): at 600 items the ``SELECT`` alone measured 4–7 ms on this machine, and it
grows with the store. :class:`ActiveItems` keeps them per ``(database, tenant,
role)`` and on each call applies only what changed since it last looked, read
from ``memory_item_changes`` (migration m004: a trigger appends the id of every
inserted, updated or deleted item, whichever code or process made the change).
A reader that fell behind the pruned part of that log, or sees too many changes,
reloads the scope whole. The result always equals a fresh ``SELECT`` of the active
items (tested against it), newest first. :meth:`ActiveItems.view` hands out the
same items as arrays and a term index (:mod:`memory_core.items.index`), to which
each change is applied as it is read, so that assembly's cost does not grow with
the number of items.

With a ``context`` reader, each scope also keeps what its items' source messages say
(their keyword terms and speaker's name terms, by message id: read once per message,
when its first item arrives; pruned to the active items' messages past
:data:`_CONTEXT_MAX`), for the index's context postings.

Items are handed out as plain dicts (column name → value), as the store's
:class:`~memory_core.store.api.ItemFeed` reads them, not ``sqlite3.Row``: a ``Row``
looks a name up by comparing it with each column name in turn (about 0.35 µs for
``source_message_id``, against 0.05 µs for a dict), and assembly reads several
columns of every active item on every turn. Each row is converted once, when it is
read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memory_core.items.index import (
    NO_CONTEXT,
    FoldKey,
    IndexView,
    ItemIndex,
    MessageContext,
    Prepare,
    context_of,
)
from memory_core.store.api import Tx

ItemRow = dict[str, Any]
"""One cached item: :data:`~memory_core.store.api.ITEM_ROW_COLUMNS` by name (``data``
holds the speaker and ordinal label the block reads: :mod:`memory_core.items.standing`)."""

ContextReader = Callable[[Tx, str, str, str, list[int]], MessageContext]
"""``(tx, namespace, tenant, role, message ids) -> MessageContext`` of those messages."""

_CONTEXT_MAX = 20_000
"""Source messages whose context a scope keeps before dropping those of gone items."""

MAX_ITEMS = 5000
"""Newest active items of a scope handed to assembly (older ones stay searchable)."""

_FULL_RELOAD_CHANGES = 2000
"""More changes than this since the last look: reload the scope whole instead."""

KEEP_CHANGES = 50_000
"""Change-log rows :func:`prune_changes` keeps (about 1 MB)."""


@dataclass
class _Snapshot:
    seq: int
    rows: dict[int, ItemRow]
    ordered: list[ItemRow] | None = field(default=None)
    changed: tuple[list[int], list[ItemRow]] | None = field(default=None)
    """What this snapshot changed from the one it was made from: (ids gone or
    changed, their active rows now); ``None`` for a whole (re)load."""
    index: ItemIndex | None = field(default=None)

    def newest_first(self) -> list[ItemRow]:
        if self.ordered is None:
            self.ordered = [self.rows[i] for i in sorted(self.rows, reverse=True)[:MAX_ITEMS]]
        return self.ordered


class ActiveItems:
    """Per-scope cache of active memory items; thread-safe.

    ``max_scopes``: scopes kept (least recently used dropped); each holds its
    active items' rows (about 1 KB an item). ``prepare``, ``fold_key``: what each
    scope's :class:`~memory_core.items.index.ItemIndex` computes per item;
    ``context``: reads the items' source messages for the index's context postings
    (module docstring), called with new source ids only.
    """

    def __init__(self, max_scopes: int = 32, prepare: Prepare | None = None,
                 fold_key: FoldKey | None = None,
                 context: ContextReader | None = None) -> None:
        self._max = max_scopes
        self._prepare = prepare
        self._fold_key = fold_key
        self._context = context
        self._contexts: dict[tuple[str, str, str], MessageContext] = {}
        self._lock = threading.Lock()
        self._scopes: OrderedDict[tuple[str, str, str], _Snapshot] = OrderedDict()

    def get(self, tx: Tx, namespace: str, tenant: str,
            role: str) -> list[ItemRow]:
        """Active items of ``(tenant, role)``, newest first, at most :data:`MAX_ITEMS`.

        ``tx``: the operation groups of a read job on the database named
        ``namespace`` (its path). Items are dicts of the item columns
        (:data:`ItemRow`), the same object for an item until it changes; do not
        mutate them or the returned list. Raises the store's errors as the reads do.
        """
        return self._snapshot(tx, namespace, tenant, role, indexed=False).newest_first()

    def view(self, tx: Tx, namespace: str, tenant: str,
             role: str) -> IndexView:
        """The same items as :meth:`get`, as an :class:`~memory_core.items.index.IndexView`
        (only the newest :data:`MAX_ITEMS` are live). Needs ``prepare`` (the
        constructor's); raises the store's errors as the reads do."""
        snap = self._snapshot(tx, namespace, tenant, role, indexed=True)
        assert snap.index is not None
        return snap.index.view()

    def _snapshot(self, tx: Tx, namespace: str, tenant: str, role: str,
                  *, indexed: bool) -> _Snapshot:
        key = (namespace, tenant, role)
        with self._lock:
            snap = self._scopes.get(key)
            if snap is not None:
                self._scopes.move_to_end(key)
        fresh = self._refresh(tx, tenant, role, snap)
        context = (None if self._context is None
                   else self._read_context(tx, key, fresh, is_new=fresh is not snap))
        with self._lock:
            held = self._scopes.get(key)
            if fresh is not snap:
                base = held.index if held is not None else None
                if base is not None and fresh.changed is not None:
                    # The index follows the newest snapshot; changes are re-applied
                    # idempotently (by item id), older ones never over newer.
                    if base.seq < fresh.seq:
                        base.apply(*fresh.changed)
                        base.seq = fresh.seq
                    fresh.index = base
            if held is None or held.seq <= fresh.seq:
                self._scopes[key] = fresh
                self._scopes.move_to_end(key)
            elif held.index is not None:
                fresh.index = held.index  # a newer one was stored meanwhile
            while len(self._scopes) > self._max:
                gone, _ = self._scopes.popitem(last=False)
                self._contexts.pop(gone, None)
            if indexed and fresh.index is None:
                if self._prepare is None:
                    raise RuntimeError("ActiveItems.view needs a prepare function")
                rows = fresh.rows.values()
                fresh.index = ItemIndex(self._prepare, MAX_ITEMS, sorted(
                    rows, key=lambda r: r["id"]), fold_key=self._fold_key,
                    context=None if context is None else context_of(context))
                fresh.index.seq = fresh.seq
                stored = self._scopes.get(key)
                if stored is not None and stored.seq == fresh.seq and stored.index is None:
                    stored.index = fresh.index
        return fresh

    def _read_context(self, tx: Tx, key: tuple[str, str, str], snap: _Snapshot,
                      *, is_new: bool) -> MessageContext:
        """The scope's message context, with the source messages of a new ``snap``'s
        new rows (all its rows after a whole load) read in. Entries are facts of
        immutable messages: the dict only grows (one object per scope, which every
        index of the scope reads), but for a prune past :data:`_CONTEXT_MAX`."""
        assert self._context is not None
        with self._lock:
            held = self._contexts.setdefault(key, {})
        if not is_new:
            return held
        rows: Iterable[ItemRow] = (snap.rows.values() if snap.changed is None
                                   else snap.changed[1])
        # a question is never a block candidate: its message's context is not read
        new = sorted({int(m) for r in rows
                      if (m := r["source_message_id"]) is not None and r["kind"] != "question"}
                     - held.keys())
        if new:
            got = self._context(tx, *key, new)
            with self._lock:
                if len(held) + len(new) > _CONTEXT_MAX:
                    keep = {r["source_message_id"] for r in snap.rows.values()}
                    for m in [m for m in held if m not in keep]:
                        del held[m]
                held.update((m, got.get(m, NO_CONTEXT)) for m in new)
        return held

    def clear(self) -> None:
        """Forget every scope (the next :meth:`get` reloads)."""
        with self._lock:
            self._scopes.clear()
            self._contexts.clear()

    @staticmethod
    def _full(tx: Tx, tenant: str, role: str) -> _Snapshot:
        # The log position first: a change landing between the two reads is then
        # applied again on the next look (reloading an item is idempotent).
        seq = tx.item_feed.change_position()
        rows = tx.item_feed.active_items(tenant, role)
        return _Snapshot(seq, {int(r["id"]): r for r in rows})

    def _refresh(self, tx: Tx, tenant: str, role: str,
                 snap: _Snapshot | None) -> _Snapshot:
        if snap is None:
            return self._full(tx, tenant, role)
        changed = _changes_since(tx, snap.seq)
        if changed is None:
            return self._full(tx, tenant, role)
        seq, ids = changed
        if not ids:
            return snap
        fresh = tx.item_feed.items_in_scope(ids, tenant, role)
        if not fresh and snap.rows.keys().isdisjoint(ids):
            # Not ours: the same items (and index) at a later position in the log.
            return _Snapshot(seq, snap.rows, snap.ordered, ([], []), snap.index)
        rows = dict(snap.rows)
        for i in ids:
            rows.pop(i, None)
        added = []
        for r in fresh:
            if r["status"] == "active":
                rows[int(r["id"])] = r
                added.append(r)
        return _Snapshot(seq, rows, changed=(ids, added))


def _changes_since(tx: Tx, seq: int) -> tuple[int, list[int]] | None:
    """``(log position, ids of the items changed)`` after position ``seq`` of
    ``memory_item_changes``, sorted (none: ``seq`` and ``[]``); ``None`` when only a
    whole reload can catch up: changes past ``seq`` were pruned, or there are more
    than :data:`_FULL_RELOAD_CHANGES`."""
    oldest, changes = tx.item_feed.changes_since(seq, _FULL_RELOAD_CHANGES + 1)
    if oldest is not None and seq < oldest - 1:
        return None  # changes never seen were pruned
    if len(changes) > _FULL_RELOAD_CHANGES:
        return None
    if not changes:
        return seq, []
    return changes[-1][0], sorted({c[1] for c in changes})


def prune_changes(tx: Tx, keep: int = KEEP_CHANGES) -> int:
    """Delete all but the newest ``keep`` change-log rows (a write job's ``tx``); the
    newest row always stays, so that a cache behind the pruned part can tell (an
    emptied log would read as "nothing changed").

    Returns the number deleted. Caches behind the pruned part reload whole.
    """
    return tx.item_feed.prune_changes(max(keep, 1))


SupersededRow = tuple[int, int, str, str | None, str | None]
"""``(source_message_id, id, text, value_text, unit)`` of a superseded item."""


@dataclass
class _Superseded:
    seq: int
    last_id: int
    limit: int
    rows: dict[int, SupersededRow]
    truncated: bool
    """The store held more than ``limit`` such items at the last whole read."""
    newest: list[SupersededRow]


class SupersededItems:
    """The newest ``limit`` superseded items of each (tenant, role) stated up to a
    message (what summaries of messages up to it may quote), kept between requests.

    Read whole once per scope and summary boundary (``last_id``: it moves on a
    compaction), then brought up to date from ``memory_item_changes`` as
    :class:`ActiveItems` is: each changed id is read back and is in the set while it
    is superseded, of the scope and stated up to ``last_id``. A whole read follows a
    pruned log, too many changes, or an item leaving a set that was cut at ``limit``
    (an older one may belong to it now). Equal to the store's
    :meth:`~memory_core.store.api.RequestReads.superseded_sources` (tested against
    it). Thread-safe; ``max_scopes`` scopes, least recently used dropped first.
    """

    def __init__(self, max_scopes: int = 32) -> None:
        self._max = max_scopes
        self._lock = threading.Lock()
        self._scopes: OrderedDict[tuple[str, str, str], _Superseded] = OrderedDict()

    def newest(self, tx: Tx, namespace: str, tenant: str, role: str, last_id: int,
               limit: int) -> list[SupersededRow]:
        """The items, newest (by source message, then id) first. ``tx``: the
        operation groups of a read job on the database named ``namespace``. Raises the
        store's errors as its reads do. The list is shared: do not mutate it."""
        key = (namespace, tenant, role)
        with self._lock:
            held = self._scopes.get(key)
        fresh = None
        if held is not None and held.last_id == last_id and held.limit == limit:
            fresh = self._refresh(tx, tenant, role, held)
        if fresh is None:
            fresh = self._whole(tx, tenant, role, last_id, limit)
        with self._lock:
            self._scopes[key] = fresh
            self._scopes.move_to_end(key)
            while len(self._scopes) > self._max:
                self._scopes.popitem(last=False)
        return fresh.newest

    @staticmethod
    def _whole(tx: Tx, tenant: str, role: str, last_id: int, limit: int) -> _Superseded:
        seq = tx.item_feed.change_position()  # first: a change landing after is seen again
        rows = {int(r["id"]): (int(r["source_message_id"]), int(r["id"]), r["text"],
                               r["value_text"], r["unit"])
                for r in tx.request_reads.superseded_sources(tenant, role, last_id, limit)}
        return _Superseded(seq, last_id, limit, rows, len(rows) >= limit,
                           sorted(rows.values(), reverse=True))

    @staticmethod
    def _refresh(tx: Tx, tenant: str, role: str, held: _Superseded) -> _Superseded | None:
        """``held`` brought up to date, or ``None`` when only a whole read can."""
        changed = _changes_since(tx, held.seq)
        if changed is None:
            return None
        seq, ids = changed
        if not ids:
            return held
        rows = dict(held.rows)
        gone = {i for i in ids if rows.pop(i, None) is not None}
        for r in tx.item_feed.items_in_scope(ids, tenant, role):
            source = r["source_message_id"]
            if r["status"] == "superseded" and source is not None and source <= held.last_id:
                rows[int(r["id"])] = (int(source), int(r["id"]), r["text"], r["value_text"],
                                      r["unit"])
                gone.discard(int(r["id"]))
        if gone and held.truncated:
            return None  # an item left a cut set: an older one may belong to it now
        newest = sorted(rows.values(), reverse=True)
        truncated = held.truncated or len(newest) > held.limit
        if len(newest) > held.limit:
            for cut in newest[held.limit:]:
                del rows[cut[1]]
            newest = newest[:held.limit]
        return _Superseded(seq, held.last_id, held.limit, rows, truncated, newest)
