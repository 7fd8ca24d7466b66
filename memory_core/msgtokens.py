"""Stored token counts of messages, kept in memory for the request path.

Two steps of every chat request read ``messages.tokens`` for much of the path:
:meth:`memory_core.engine.Engine.path_tokens` (is the request over the hard
limit?) sums it over every uncompacted message, and
:func:`memory_core.inview.newest` walks it back from the newest message. At 2,000
messages the two queries cost about 0.7 ms a request, for counts that never
change: a message's ``tokens`` is written with the row and never updated, and ids
are ``AUTOINCREMENT`` (never reused). :class:`MessageTokens` reads each id's count
once and answers from memory after, so a resent history costs only its new
messages' lookups.

Purged messages are not forgotten here: a count stays cached after its row is
deleted. The ids asked for are those of a path the request's own capture has just
stored or matched, so they exist when they are read; only a purge landing between
that capture and the read would tell the two apart, and the request then uses the
counts of the messages its client sent.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Sequence

MAX_IDS = 200_000
"""Counts kept (about 20 MB); past this the cache is dropped whole and refilled."""

_CHUNK = 900
"""Ids per ``IN (…)`` query (under SQLite's default 999 variables)."""


class MessageTokens:
    """``messages.tokens`` by message id, read once per id; thread-safe.

    The mapping only grows; past ``max_ids`` it is replaced by a new one (never
    emptied in place), so a reader holding the old mapping still finds every id
    it saw there.
    """

    def __init__(self, max_ids: int = MAX_IDS) -> None:
        self._max = max_ids
        self._counts: dict[int, int] = {}
        self._lock = threading.Lock()

    def counts(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
        """The stored o200k token count of each of ``ids`` that exists (``NULL`` as 0).

        ``conn``: a (reader) connection to the store. Ids with no row are absent
        from the result and are not remembered (a later read may find them).
        Raises ``sqlite3.Error`` as the query does.
        """
        known, missing, fresh = self._lookup(conn, ids)
        out = {i: known[i] for i in ids if i not in missing}
        out.update(fresh)
        return out

    def total(self, conn: sqlite3.Connection, ids: Sequence[int]) -> int:
        """The sum of the stored counts of the distinct ``ids`` (missing rows as 0):
        ``SELECT SUM(tokens) FROM messages WHERE id IN (ids)``, from memory."""
        distinct = set(ids)
        known, missing, fresh = self._lookup(conn, distinct)
        return sum(map(known.__getitem__, distinct - missing)) + sum(fresh.values())

    def clear(self) -> None:
        """Forget every count (the next :meth:`counts` reads them again)."""
        with self._lock:
            self._counts = {}

    def _lookup(self, conn: sqlite3.Connection, ids: Collection[int]
                ) -> tuple[dict[int, int], set[int], dict[int, int]]:
        """``(known, missing, fresh)``: the mapping as it was (holding every id of
        ``ids`` outside ``missing``), the ids it lacked, and the counts just read
        for those of them that exist (now remembered)."""
        known = self._counts
        missing = set(ids).difference(known)
        fresh: dict[int, int] = {}
        ordered = sorted(missing)
        for at in range(0, len(ordered), _CHUNK):
            chunk = ordered[at:at + _CHUNK]
            fresh.update((int(i), int(t or 0)) for i, t in conn.execute(
                f"SELECT id, tokens FROM messages WHERE id IN ({','.join('?' * len(chunk))})",
                chunk))
        if fresh:
            with self._lock:
                if len(self._counts) + len(fresh) > self._max:
                    self._counts = {}
                self._counts.update(fresh)
        return known, missing, fresh
