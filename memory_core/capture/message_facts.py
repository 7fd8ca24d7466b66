"""Immutable facts of stored messages (role, token count), kept in memory.

Three steps read them for much of a conversation's path on every turn:
:meth:`memory_core.engine.Engine.path_tokens` (is the request over the hard
limit?) sums ``messages.tokens`` over every uncompacted message,
:func:`memory_core.assembly.in_view.newest` walks the counts back from the newest message,
and the compaction that runs after each answer plans on the roles and counts of
the whole path (:func:`memory_core.compaction.compressor.plan`). At 2,000 messages the reads
cost about 0.7 ms on the request path and 5–7 ms of CPU after it, for values that
never change: a message's ``msg_role`` and ``tokens`` are written with the row and
never updated, and ids are ``AUTOINCREMENT`` (never reused). :class:`MessageFacts`
reads each id once and answers from memory after, so a resent history costs only
its new messages' lookups.

Purged messages are not forgotten at once (the engine's own purge drops the whole
cache; another process's purge is not seen): the ids asked for are those of a path
a capture has just stored or matched, so they exist when they are read, and a
purge landing between that capture and the read leaves the request using the facts
of the messages its client sent.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Collection, Sequence

from memory_core.compaction.compressor import MessageOutline
from memory_core.store.api import Tx

MAX_IDS = 100_000
"""Messages kept (about 170 bytes each, 17 MB); past this the cache is dropped
whole and refilled."""


class MessageFacts:
    """Each message's :class:`~memory_core.compaction.compressor.MessageOutline` (id, role,
    tokens; ``NULL`` role as ``""``, ``NULL`` count as 0) by id, read once per id;
    thread-safe.

    The mapping only grows; past ``max_ids`` it is replaced by a new one (never
    emptied in place), so a reader holding the old mapping still finds every id
    it saw there.
    """

    def __init__(self, max_ids: int = MAX_IDS) -> None:
        self._max = max_ids
        self._facts: dict[int, MessageOutline] = {}
        self._lock = threading.Lock()

    def outlines(self, tx: Tx, ids: Sequence[int]
                 ) -> dict[int, MessageOutline]:
        """The outline of each of ``ids`` that exists, by id.

        ``tx``: the store's operation groups (a read job's). Ids with no row are
        absent from the result and are not remembered (a later read may find them).
        Raises the store's errors as the read does.
        """
        known, missing, fresh = self._lookup(tx, ids)
        out = {i: known[i] for i in ids if i not in missing}
        out.update(fresh)
        return out

    def counts(self, tx: Tx, ids: Sequence[int]) -> dict[int, int]:
        """``{id: tokens}`` for each of ``ids`` that exists (as ``SELECT id, tokens``,
        ``NULL`` as 0)."""
        return {i: f.tokens for i, f in self.outlines(tx, ids).items()}

    def total(self, tx: Tx, ids: Sequence[int]) -> int:
        """The sum of the stored counts of the distinct ``ids`` (missing rows as 0):
        ``SELECT SUM(tokens) FROM messages WHERE id IN (ids)``, from memory."""
        distinct = set(ids)
        known, missing, fresh = self._lookup(tx, distinct)
        return (sum(known[i].tokens for i in distinct - missing)
                + sum(f.tokens for f in fresh.values()))

    def clear(self) -> None:
        """Forget every message (the next calls read them again)."""
        with self._lock:
            self._facts = {}

    def _lookup(self, tx: Tx, ids: Collection[int]
                ) -> tuple[dict[int, MessageOutline], set[int], dict[int, MessageOutline]]:
        """``(known, missing, fresh)``: the mapping as it was (holding every id of
        ``ids`` outside ``missing``), the ids it lacked, and the outlines just read
        for those of them that exist (now remembered)."""
        known = self._facts
        missing = set(ids).difference(known)
        fresh: dict[int, MessageOutline] = {}
        if missing:
            for i, role, tokens in tx.history.message_outlines(sorted(missing)):
                # Roles interned: a handful of distinct strings, not one per message.
                fresh[i] = MessageOutline(i, sys.intern(role or ""), int(tokens or 0))
        if fresh:
            with self._lock:
                if len(self._facts) + len(fresh) > self._max:
                    self._facts = {}
                self._facts.update(fresh)
        return known, missing, fresh
