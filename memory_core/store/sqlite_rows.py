"""Reading rows by a list of ids from SQLite, a bounded number of ids per statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

IN_CHUNK = 900
"""Ids per ``IN (…)`` statement: under SQLite's default limit of 999 variables."""


def rows_by_ids(conn: sqlite3.Connection, sql: str, ids: Sequence[int], *,
                before: Sequence[Any] = (), chunk: int = IN_CHUNK) -> Iterator[sqlite3.Row]:
    """The rows of ``sql`` for ``ids``, ``chunk`` ids per statement, in statement
    order. ``sql`` holds ``{marks}`` where the ``IN (…)`` list goes; ``before``: the
    parameters that precede the ids."""
    for start in range(0, len(ids), chunk):
        part = list(ids[start:start + chunk])
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), [*before, *part])
