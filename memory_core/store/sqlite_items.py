"""SQLite implementation of :class:`~memory_core.store.api.ItemReads`: the SQL of
:mod:`memory_core.items.supersession` and :mod:`memory_core.search.successors`, statement
for statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memory_core.store.api import SEARCH_ITEM_COLUMNS, ItemReads, Row

_SEARCH_COLUMNS = ", ".join(SEARCH_ITEM_COLUMNS)
_SCOPE_COLUMNS = "tenant, role, session, thread_id, created_at"


class SqliteItemReads:
    """``memory_items`` reads of supersession and search."""

    __slots__ = ("_c",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def correction_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                              speaker: str, label: str | None,
                              units: Sequence[str] | None, limit: int,
                              subject_prefix: str | None = None) -> list[Row]:
        sql = (f"SELECT id, subject, text, unit, condition, value_text, kind FROM memory_items"
               f" WHERE tenant=? AND"
               f" role=? AND status='active' AND kind IN ({','.join('?' * len(kinds))})"
               f" AND coalesce(json_extract(data, '$.speaker'), '') = ?")
        args: list[Any] = [tenant, role, *kinds, speaker]
        if label:
            sql += " AND coalesce(json_extract(data, '$.label'), '') = ?"
            args.append(label)
        if units is not None:
            sql += f" AND (unit IS NULL OR unit IN ({','.join('?' * len(units))}))"
            args += units
        if subject_prefix:
            # a range of the subject index, then the exact test (BINARY order: every
            # string that starts with the prefix sorts between it and its successor)
            above = _successor(subject_prefix)
            sql += " AND subject >= ?" + (" AND subject < ?" if above is not None else "")
            sql += " AND substr(subject, 1, ?) = ?"
            args += [subject_prefix, *([above] if above is not None else []),
                     len(subject_prefix), subject_prefix]
        return [dict(r) for r in self._c.execute(
            f"{sql} ORDER BY id DESC LIMIT {int(limit)}", args)]

    def replaced_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, label: str | None, limit: int) -> list[Row]:
        sql = (f"SELECT o.id, o.text, o.condition, o.superseded_by, n.text AS successor_text"
               f" FROM memory_items o"
               f" JOIN memory_items n ON n.id = o.superseded_by AND n.status='active'"
               f" WHERE o.tenant=? AND o.role=? AND o.status='superseded'"
               f" AND o.kind IN ({','.join('?' * len(kinds))})"
               f" AND coalesce(json_extract(o.data, '$.speaker'), '') = ?")
        args: list[Any] = [tenant, role, *kinds, speaker]
        if label:
            sql += " AND coalesce(json_extract(o.data, '$.label'), '') = ?"
            args.append(label)
        return [dict(r) for r in self._c.execute(
            f"{sql} ORDER BY o.id DESC LIMIT {int(limit)}", args)]

    def search_items(self, ids: Sequence[int], *, scope: bool = False) -> list[Row]:
        columns = f"{_SEARCH_COLUMNS}, {_SCOPE_COLUMNS}" if scope else _SEARCH_COLUMNS
        return [dict(r) for r in self._c.execute(
            f"SELECT {columns} FROM memory_items WHERE id IN ({','.join('?' * len(ids))})",
            list(ids))]


if TYPE_CHECKING:  # mypy checks the group against its Protocol
    def _conforms(conn: sqlite3.Connection) -> ItemReads:
        return SqliteItemReads(conn)


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` in SQLite's
    BINARY order (UTF-8 bytes, so code point order): the prefix cut after its last
    character below U+10FFFF, that character raised by one (past the surrogates);
    ``None`` when every character is U+10FFFF (no bound above)."""
    for i in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[i]) + 1
        if code <= 0x10FFFF:
            return prefix[:i] + chr(0xE000 if 0xD800 <= code <= 0xDFFF else code)
    return None
