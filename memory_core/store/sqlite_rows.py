"""Reading rows by a list of ids from SQLite, a bounded number of ids per statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

IN_CHUNK = 900
"""Ids per ``IN (…)`` statement: under SQLite's default limit of 999 variables."""

_EXACT_UP_TO = 4


def padded(values: Sequence[Any]) -> list[Any]:
    """``values`` for an ``IN (…)`` list, its last value repeated up to the next of a
    few lengths (as given up to 4, then powers of two up to 512, then
    :data:`IN_CHUNK`): each length is a statement of its own in a connection's
    cache, so lists of every length would push each other and the connection's other
    statements out of it, and every statement would be prepared anew. Membership is
    unchanged by a repeated value. A list longer than :data:`IN_CHUNK` is returned as
    given (callers chunk theirs)."""
    n = len(values)
    if n <= _EXACT_UP_TO:
        return list(values)
    size = 1 << (n - 1).bit_length()
    size = size if size <= 512 else IN_CHUNK
    return [*values, *([values[-1]] * (size - n))]


def marks(n: int) -> str:
    """``n`` ``?`` placeholders, comma-separated (an ``IN (…)`` list of ``n`` values)."""
    return ",".join("?" * n)


def rows_by_ids(conn: sqlite3.Connection, sql: str, ids: Sequence[int], *,
                before: Sequence[Any] = (), chunk: int = IN_CHUNK) -> Iterator[sqlite3.Row]:
    """The rows of ``sql`` for ``ids``, ``chunk`` ids per statement, in statement
    order. ``sql`` holds ``{marks}`` where the ``IN (…)`` list goes; ``before``: the
    parameters that precede the ids."""
    for start in range(0, len(ids), chunk):
        part = padded(ids[start:start + chunk])
        yield from conn.execute(sql.format(marks=marks(len(part))), [*before, *part])
