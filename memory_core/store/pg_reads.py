"""PostgreSQL implementations of the engine-facing groups of
:mod:`memory_core.store.api`: :class:`~memory_core.store.api.HistoryReads`,
:class:`~memory_core.store.api.ItemFeed`, :class:`~memory_core.store.api.SummaryForest`,
:class:`~memory_core.store.api.ItemReads`, :class:`~memory_core.store.api.IndexSource`,
:class:`~memory_core.store.api.IndexFeed` and :class:`~memory_core.store.api.SearchReads`
(tables of migration 3 in :mod:`memory_core.store.pg_migrations`).

The statements are those of the SQLite twins (``sqlite_capture``, ``sqlite_summaries``,
``sqlite_items``, ``sqlite_index``, ``sqlite_search``) in PostgreSQL's dialect:

- ``id IN (?, …)`` lists are one array parameter, ``id = ANY(%s)``: one statement for
  any number of ids (SQLite splits them at 900 or 500), except where the interface
  fixes an order by runs (``message_evidence``).
- ``json_extract(data, '$.speaker')`` is ``data::json ->> 'speaker'`` (``data`` is
  always JSON text); a message's ``name`` (SQLite: ``CASE WHEN json_valid(raw_json)
  AND json_type(raw_json)='object' THEN json_extract(raw_json, '$.name') END``) is
  ``lcm_json_field(raw_json, 'name')``, a function of migration 3 that gives ``NULL``
  for text that is not a JSON object. Both return text: a name that is a JSON number
  reads as ``'5'`` where SQLite gives ``5``, and a name holding ``\u0000`` or a lone
  surrogate escape (which capture's lossless JSON may keep) reads as ``NULL``
  (PostgreSQL's text cannot hold them); names are plain strings in practice.
- ``instr(lower(x), ?)`` is ``strpos(lower_ascii(x), %s)``: SQLite's ``lower`` folds
  ASCII letters only, PostgreSQL's folds by locale, so :data:`LOWER_ASCII` spells
  the ASCII folding out with ``translate``.
- ``INSERT OR REPLACE`` is ``INSERT … ON CONFLICT … DO UPDATE``; ``lastrowid`` is
  ``RETURNING id``; ``SUM(kind = 'message')`` is ``COUNT(*) FILTER (WHERE …)``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from psycopg.rows import dict_row

from memory_core.store.api import (
    ITEM_ROW_COLUMNS,
    OUTBOX_KINDS,
    SEARCH_ITEM_COLUMNS,
    HistoryReads,
    IndexFeed,
    IndexSource,
    ItemFeed,
    ItemReads,
    Row,
    SearchReads,
    SummaryForest,
    cut_parents,
)
from memory_core.store.pg_text import Verbatim, fold_ascii, plain_sql, sendable

SPEAKER = "COALESCE(data::json ->> 'speaker', '')"
"""An item's speaker ("" for none): the expression of the ``memory_items_restate``
index, so a query that filters on it can use the index."""

MESSAGE_NAME = "lcm_json_field(raw_json, 'name')"
"""A message's ``name`` in its raw JSON, or ``NULL``."""


def lower_ascii(expr: str) -> str:
    """``expr`` with ASCII capitals folded to small letters (SQLite's ``lower``)."""
    return f"translate({expr}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


def dicts(conn: Any, sql: str, args: Any = ()) -> list[Row]:
    """The rows of ``sql`` as dicts (column name → value)."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(sql, args)
        return [_plain(r) for r in cur.fetchall()]


def _plain(row: dict[str, Any]) -> Row:
    # BYTEA arrives as bytes in psycopg 3 (memoryview only with binary cursors).
    return {k: bytes(v) if isinstance(v, memoryview) else v for k, v in row.items()}


def ids_list(ids: Collection[int]) -> list[int]:
    """``ids`` as a list of ints (an ``= ANY(%s)`` parameter)."""
    return [int(i) for i in ids]


_EVIDENCE_RUN = 900
"""``message_evidence`` orders by id within runs of this many ids (SQLite's chunks)."""


class PgHistoryReads:
    """``messages`` outlines and ``summary_nodes``, one statement per list."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def message_outlines(self, ids: Sequence[int]) -> list[tuple[int, str | None, int | None]]:
        return [(int(r[0]), r[1], r[2]) for r in self._c.execute(
            "SELECT id, msg_role, tokens FROM messages WHERE id = ANY(%s)", (ids_list(ids),))]

    def active_summaries(self, tenant: str, role: str) -> dict[int, int | None]:
        return {int(r[0]): r[1] for r in self._c.execute(
            "SELECT id, parent_id FROM summary_nodes WHERE tenant = %s AND role = %s"
            " AND status = 'active'", (tenant, role))}

    def summary_rows(self, ids: Sequence[int]) -> list[Row]:
        return dicts(self._c, "SELECT id, level, message_ids, text, tokens, source_tokens,"
                     " model, parent_id FROM summary_nodes WHERE id = ANY(%s)",
                     (ids_list(ids),))

    def path_messages(self, ids: Sequence[int]) -> list[Row]:
        return dicts(self._c, "SELECT id, msg_role, text, tokens, raw_json, created_at"
                     " FROM messages WHERE id = ANY(%s)", (ids_list(ids),))

    def message_links(self, ids: Sequence[int]) -> list[Row]:
        return dicts(self._c, "SELECT id, parent_id, msg_role, text FROM messages"
                     " WHERE id = ANY(%s)", (ids_list(ids),))

    def sent_as_history(self, message_id: int) -> bool:
        return self._c.execute(
            "SELECT 1 FROM messages c JOIN messages m ON m.id = c.parent_id"
            " WHERE c.parent_id = %s AND c.kind = 'request' AND c.request_id = m.request_id"
            " LIMIT 1", (message_id,)).fetchone() is not None

    def next_turns(self, ids: Sequence[int]) -> list[Row]:
        return dicts(self._c, "SELECT parent_id, msg_role, text FROM messages"
                     " WHERE parent_id = ANY(%s)", (ids_list(ids),))

    def message_evidence(self, ids: Sequence[int]) -> tuple[list[Row], list[Row]]:
        items: list[Row] = []
        todos: list[Row] = []
        for start in range(0, len(ids), _EVIDENCE_RUN):
            run = ids_list(ids[start:start + _EVIDENCE_RUN])
            items += dicts(self._c, "SELECT id, kind, text, status, source_message_id"
                           " FROM memory_items WHERE source_message_id = ANY(%s) ORDER BY id",
                           (run,))
            todos += dicts(self._c, "SELECT label, text, status, source_message_id"
                           " FROM task_state WHERE source_message_id = ANY(%s) ORDER BY id",
                           (run,))
        return items, todos


_ITEM_COLUMNS = ", ".join(ITEM_ROW_COLUMNS)


class PgItemFeed:
    """``memory_items`` and ``memory_item_changes`` (filled by a trigger, migration 3)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def change_position(self) -> int:
        return int(self._c.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM memory_item_changes").fetchone()[0])

    def oldest_change(self) -> int | None:
        oldest = self._c.execute("SELECT MIN(seq) FROM memory_item_changes").fetchone()[0]
        return int(oldest) if oldest is not None else None

    def changes_after(self, position: int, limit: int) -> list[tuple[int, int]]:
        return [(int(r[0]), int(r[1])) for r in self._c.execute(
            "SELECT seq, item_id FROM memory_item_changes WHERE seq > %s ORDER BY seq"
            " LIMIT %s", (position, limit))]

    def changes_since(self, position: int, limit: int
                      ) -> tuple[int | None, list[tuple[int, int]]]:
        rows = self._c.execute(
            "SELECT (SELECT MIN(seq) FROM memory_item_changes), c.seq, c.item_id"
            " FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT seq, item_id FROM"
            " memory_item_changes WHERE seq > %s ORDER BY seq LIMIT %s) c ON TRUE"
            " ORDER BY c.seq", (position, limit)).fetchall()
        oldest = rows[0][0] if rows else None
        return (int(oldest) if oldest is not None else None,
                [(int(r[1]), int(r[2])) for r in rows if r[1] is not None])

    def active_items(self, tenant: str, role: str) -> list[Row]:
        return dicts(self._c, f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE tenant = %s"
                     " AND role = %s AND status = 'active'", (tenant, role))

    def items_in_scope(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        return dicts(self._c, f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE id = ANY(%s)"
                     " AND tenant = %s AND role = %s", (ids_list(ids), tenant, role))

    def prune_changes(self, keep: int) -> int:
        cur = self._c.execute(
            "DELETE FROM memory_item_changes WHERE seq <="
            " (SELECT COALESCE(MAX(seq), 0) FROM memory_item_changes) - %s", (keep,))
        return int(cur.rowcount)


class PgSummaryForest:
    """``summary_nodes`` (and the summary links of ``messages``)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def nodes_within(self, tenant: str, role: str, first_id: int, last_id: int
                     ) -> list[Row]:
        return dicts(self._c,
                     "SELECT * FROM summary_nodes WHERE tenant = %s AND role = %s"
                     " AND status = 'active' AND first_message_id >= %s"
                     " AND last_message_id <= %s ORDER BY level, first_message_id, id",
                     (tenant, role, first_id, last_id))

    def forest_rows(self, *, tenant: str | None, role: str | None, thread_id: int | None
                    ) -> list[Row]:
        where, args = ["status = 'active'"], []
        for col, val in (("tenant", tenant), ("role", role), ("thread_id", thread_id)):
            if val is not None:
                where.append(f"{col} = %s")
                args.append(val)
        return dicts(self._c,
                     "SELECT id, thread_id, level, first_message_id, last_message_id,"
                     " message_ids, tokens, source_tokens, model, parent_id FROM summary_nodes"
                     f" WHERE {' AND '.join(where)} ORDER BY level, first_message_id, id", args)

    def save_node(self, *, tenant: str, role: str, thread_id: int, level: int,
                  message_ids: Sequence[int], ids_json: str, text: str, tokens: int,
                  source_tokens: int, model: str, created_at: float,
                  children: Sequence[int]) -> int:
        conn = self._c
        existing = conn.execute(
            "SELECT id FROM summary_nodes WHERE tenant = %s AND role = %s AND level = %s"
            " AND message_ids = %s AND status = 'active' ORDER BY id LIMIT 1",
            (tenant, role, level, ids_json)).fetchone()
        if existing is not None:
            return int(existing[0])
        node_id = int(conn.execute(
            "INSERT INTO summary_nodes (tenant, role, thread_id, level, first_message_id,"
            " last_message_id, message_ids, text, tokens, source_tokens, model, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (tenant, role, thread_id, level, message_ids[0], message_ids[-1], ids_json, text,
             tokens, source_tokens, model, created_at)).fetchone()[0])
        if children:
            conn.execute("UPDATE summary_nodes SET parent_id = %s WHERE id = ANY(%s)",
                         (node_id, ids_list(children)))
        if level == 0:
            conn.execute("UPDATE messages SET summary_node_id = %s WHERE id = ANY(%s)"
                         " AND summary_node_id IS NULL", (node_id, ids_list(message_ids)))
        conn.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('summary', %s,"
                     " 'upsert')", (node_id,))
        return node_id


_SEARCH_COLUMNS = ", ".join(SEARCH_ITEM_COLUMNS)
_SCOPE_COLUMNS = "tenant, role, session, thread_id, created_at"


class PgItemReads:
    """``memory_items`` reads of supersession and search."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def correction_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                              speaker: str, label: str | None,
                              units: Sequence[str] | None, limit: int,
                              subject_prefix: str | None = None) -> list[Row]:
        sql = ("SELECT id, subject, text, unit, condition, value_text, kind FROM memory_items"
               " WHERE tenant = %s AND role = %s AND status = 'active' AND kind = ANY(%s)"
               f" AND {SPEAKER} = %s")
        args: list[Any] = [tenant, role, list(kinds), speaker]
        if label:
            sql += " AND COALESCE(data::json ->> 'label', '') = %s"
            args.append(label)
        if units is not None:
            sql += " AND (unit IS NULL OR unit = ANY(%s))"
            args.append(list(units))
        if subject_prefix:
            sql += " AND left(subject, %s) = %s"
            args += [len(subject_prefix), Verbatim(subject_prefix)
                     if sendable(subject_prefix) else subject_prefix]
        return dicts(self._c, f"{sql} ORDER BY id DESC LIMIT %s", [*args, int(limit)])

    def replaced_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, label: str | None, limit: int) -> list[Row]:
        sql = ("SELECT o.id, o.text, o.condition, o.superseded_by, n.text AS successor_text"
               " FROM memory_items o"
               " JOIN memory_items n ON n.id = o.superseded_by AND n.status = 'active'"
               " WHERE o.tenant = %s AND o.role = %s AND o.status = 'superseded'"
               " AND o.kind = ANY(%s) AND COALESCE(o.data::json ->> 'speaker', '') = %s")
        args: list[Any] = [tenant, role, list(kinds), speaker]
        if label:
            sql += " AND COALESCE(o.data::json ->> 'label', '') = %s"
            args.append(label)
        return dicts(self._c, f"{sql} ORDER BY o.id DESC LIMIT %s", [*args, int(limit)])

    def search_items(self, ids: Sequence[int], *, scope: bool = False) -> list[Row]:
        columns = f"{_SEARCH_COLUMNS}, {_SCOPE_COLUMNS}" if scope else _SEARCH_COLUMNS
        return dicts(self._c, f"SELECT {columns} FROM memory_items WHERE id = ANY(%s)",
                     (ids_list(ids),))


_QUERIES = {
    "message": (
        "SELECT id, tenant, role, session, thread_id, created_at, kind AS mkind, msg_role,"
        f" hidden, text, {MESSAGE_NAME} AS name, NULL::text AS status{{context}}"
        " FROM messages"
    ),
    "item": (
        "SELECT id, tenant, role, session, thread_id, created_at, kind AS mkind,"
        " '' AS msg_role, 0 AS hidden, text, subject AS name, status, unit, condition,"
        " data::json ->> 'speaker' AS speaker FROM memory_items"
    ),
    "agent_memory": (
        "SELECT id, tenant, role, '' AS session, 0::bigint AS thread_id,"
        " updated_at AS created_at, category AS mkind, '' AS msg_role, 0 AS hidden,"
        " title || chr(10) || content AS text, key AS name, NULL::text AS status"
        " FROM agent_memories"
    ),
    "summary": (
        "SELECT id, tenant, role, '' AS session, thread_id, created_at, 'summary' AS mkind,"
        " '' AS msg_role, 0 AS hidden, text, NULL::text AS name, status FROM summary_nodes"
    ),
}
_PREFIX = (f"CASE WHEN {plain_sql('p.text')} THEN substr(p.text, 1, {{chars}})"
           " ELSE p.text END")
"""The first characters of the parent's text; whole when it holds an escape pair
(``substr`` would count the pairs, and could split one), cut by
:func:`~memory_core.store.api.cut_parents`."""
_MESSAGE_CONTEXT = (
    f", (SELECT {_PREFIX} FROM messages p"
    " WHERE p.id = messages.parent_id) AS ctx_parent"
)
_EMBED_CONTEXT = (
    f", (SELECT {_PREFIX} FROM messages p WHERE p.id = messages.parent_id"
    " AND p.msg_role IN ('user', 'assistant')) AS embed_parent,"
    " (SELECT lcm_json_field(p.raw_json, 'name') FROM messages p"
    " WHERE p.id = messages.parent_id) AS embed_parent_name"
)


class PgIndexSource:
    """Rows of ``messages``, ``memory_items``, ``agent_memories``, ``summary_nodes``
    as the derived indexes read them (one statement per call)."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def doc_rows(self, kind: str, ids: Sequence[int], *, context_chars: int = 0,
                 embed_chars: int = 0) -> list[Row]:
        extra = _MESSAGE_CONTEXT.format(chars=int(context_chars)) if context_chars > 0 else ""
        if embed_chars > 0:
            extra += _EMBED_CONTEXT.format(chars=int(embed_chars))
        sql = _QUERIES[kind].replace("{context}", extra)
        return cut_parents(dicts(self._c, f"{sql} WHERE id = ANY(%s)",
                                 (sorted(set(ids_list(ids))),)), context_chars, embed_chars)

    def ids_after(self, kind: str, after: int, limit: int) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            f"SELECT id FROM {OUTBOX_KINDS[kind]} WHERE id > %s ORDER BY id LIMIT %s",
            (after, limit))]


class PgIndexFeed:
    """``checkpoints``, ``index_outbox`` and ``embeddings`` for the indexer."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def checkpoint(self, name: str) -> int:
        row = self._c.execute("SELECT value FROM checkpoints WHERE name = %s",
                              (name,)).fetchone()
        return int(row[0]) if row else 0

    def set_checkpoint(self, name: str, value: int, now: float) -> None:
        self._c.execute("INSERT INTO checkpoints (name, value, updated_at) VALUES (%s, %s, %s)"
                        " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value,"
                        " updated_at = EXCLUDED.updated_at", (name, value, now))

    def outbox_rows(self, after: int, limit: int) -> list[tuple[int, str, int, str]]:
        return [(int(r[0]), r[1], int(r[2]), r[3]) for r in self._c.execute(
            "SELECT id, kind, ref_id, op FROM index_outbox WHERE id > %s ORDER BY id"
            " LIMIT %s", (after, limit))]

    def outbox_left(self, after: int) -> tuple[int, int]:
        row = self._c.execute(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE kind = 'message') FROM index_outbox"
            " WHERE id > %s", (after,)).fetchone()
        return int(row[0]), int(row[1])

    def cached_vectors(self, kind: str, model: str, dim: int, refs: Sequence[int]
                       ) -> dict[int, bytes]:
        return {int(r[0]): bytes(r[1]) for r in self._c.execute(
            "SELECT ref_id, vector FROM embeddings WHERE kind = %s AND model = %s"
            " AND dim = %s AND ref_id = ANY(%s)", (kind, model, dim, ids_list(refs)))}

    def save_vectors(self, rows: Sequence[tuple[str, int, str, int, bytes, float]]) -> None:
        if not rows:
            return
        with self._c.cursor() as cur:
            cur.executemany(
                "INSERT INTO embeddings (kind, ref_id, model, dim, vector, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (kind, ref_id) DO UPDATE SET"
                " model = EXCLUDED.model, dim = EXCLUDED.dim, vector = EXCLUDED.vector,"
                " created_at = EXCLUDED.created_at", list(rows))

    def unembedded(self) -> int:
        row = self._c.execute(
            "SELECT (SELECT COUNT(*) FROM messages m WHERE btrim(m.text, ' ') != ''"
            " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.kind = 'message'"
            " AND e.ref_id = m.id))"
            " + (SELECT COUNT(*) FROM memory_items i"
            " WHERE i.status NOT IN ('retracted', 'deleted', 'purged', 'merged', 'edited')"
            " AND NOT EXISTS (SELECT 1 FROM embeddings e"
            " WHERE e.kind = 'item' AND e.ref_id = i.id))").fetchone()
        return int(row[0])


_TIME_COL = {"message": "created_at", "item": "created_at", "agent_memory": "updated_at",
             "summary": "created_at"}
_TEXT_COL = {"message": "text", "item": "text", "agent_memory": "title || ' ' || content",
             "summary": "text"}
_THREAD_COL = {"message": "thread_id", "item": "thread_id", "agent_memory": "0::bigint",
               "summary": "thread_id"}


class PgSearchReads:
    """Task lines, agent-memory categories and candidate facts for search."""

    __slots__ = ("_c",)

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def task_lines_of(self, message_ids: Sequence[int]) -> list[tuple[int, str, str]]:
        return [(int(r[0]), r[1], r[2]) for r in self._c.execute(
            "SELECT source_message_id, status, label FROM task_state"
            " WHERE source_message_id = ANY(%s)", (ids_list(message_ids),))]

    def open_task_lines(self, tenant: str, role: str, labels: Sequence[str], *,
                        thread_ids: Collection[int] | None, session: str | None,
                        start_time: float | None, end_time: float | None,
                        include_hidden: bool, current_thread: int, per_label: int
                        ) -> list[int]:
        where = ["t.tenant = %s", "t.role = %s", "t.status = 'open'", "t.label = %s",
                 "m.tenant = t.tenant", "m.role = t.role"]
        args: list[Any] = []
        if thread_ids is not None:
            where.append("m.thread_id = ANY(%s)")
            args.append(ids_list(thread_ids))
        if session is not None:
            where.append("m.session = %s")
            args.append(session)
        if start_time is not None:
            where.append("m.created_at >= %s")
            args.append(start_time)
        if end_time is not None:
            where.append("m.created_at <= %s")
            args.append(end_time)
        if not include_hidden:
            where.append("m.hidden = 0")
        sql = ("SELECT t.source_message_id FROM task_state t JOIN messages m"
               " ON m.id = t.source_message_id WHERE " + " AND ".join(where)
               + " ORDER BY t.thread_id = %s DESC, t.updated_at DESC, t.id DESC LIMIT %s")
        out: list[int] = []
        for label in labels:
            params = [tenant, role, label, *args, current_thread, per_label]
            out.extend(int(r[0]) for r in self._c.execute(sql, params))
        return out

    def preference_memories(self, ids: Sequence[int]) -> list[int]:
        return [int(r[0]) for r in self._c.execute(
            "SELECT id FROM agent_memories WHERE category = 'user_preferences'"
            " AND id = ANY(%s)", (ids_list(ids),))]

    def candidate_facts(self, kind: str, refs: Sequence[int], needle: str | None,
                        with_names: bool) -> list[tuple[Any, ...]]:
        is_msg = kind == "message"
        text_col = _TEXT_COL[kind]
        # decided in SQL for text stored as it is, in Python for the rest (pg_text):
        # ``odd`` is the decoded text of those, else NULL
        exact_col, odd_col = "0", "NULL::text"
        if needle:
            exact_col = (f"(strpos({lower_ascii(text_col)}, %s) > 0)::int" if sendable(needle)
                         else "0")
            odd_col = f"CASE WHEN {plain_sql(text_col)} THEN NULL ELSE {text_col} END"
        name_col = "NULL::text"
        if with_names and is_msg:
            name_col = MESSAGE_NAME
        elif with_names and kind == "item":
            name_col = "data::json ->> 'speaker'"
        parent_col = "parent_id" if is_msg else "NULL::bigint"
        role_col = "msg_role" if is_msg else "NULL::text"
        sql = (f"SELECT id, {_THREAD_COL[kind]}, {_TIME_COL[kind]}, {exact_col},"
               f" {parent_col}, {name_col}, {role_col}, {odd_col} FROM {OUTBOX_KINDS[kind]}"
               " WHERE id = ANY(%s)")
        args: list[Any] = [ids_list(refs)]
        if needle and sendable(needle):
            args.insert(0, Verbatim(needle))
        out = []
        for *row, odd in self._c.execute(sql, args):
            if odd is not None:  # needle given; SQLite: instr(lower(text), needle)
                row[3] = int(needle is not None and needle in fold_ascii(odd))
            out.append(tuple(row))
        return out


if TYPE_CHECKING:  # mypy checks every group against its Protocol
    def _conforms(conn: Any) -> tuple[HistoryReads, ItemFeed, SummaryForest, ItemReads,
                                      IndexSource, IndexFeed, SearchReads]:
        return (PgHistoryReads(conn), PgItemFeed(conn), PgSummaryForest(conn),
                PgItemReads(conn), PgIndexSource(conn), PgIndexFeed(conn),
                PgSearchReads(conn))
