"""SQLite implementation of :class:`memory_core.store.api.OperatorReads`."""

from __future__ import annotations

import sqlite3
from typing import Any

from memory_core.store.api import PathRows, Row


def where(prefix: str = "", **filters: Any) -> tuple[str, list[Any]]:
    """``(clause, args)`` ANDing ``prefix + col = ?`` for each filter not ``None``."""
    parts, args = ["1=1"], []
    for col, val in filters.items():
        if val is not None:
            parts.append(f"{prefix}{col}=?")
            args.append(val)
    return " AND ".join(parts), args


def _one(conn: sqlite3.Connection, sql: str, args: Any = ()) -> Any:
    return conn.execute(sql, args).fetchone()[0]


_PATH_CTE = ("WITH RECURSIVE path(id) AS (SELECT ? UNION ALL SELECT m.parent_id FROM"
             " messages m JOIN path p ON m.id=p.id WHERE m.parent_id IS NOT NULL)")

_REF_SQL = {
    "message": "SELECT tenant, role, text, thread_id, msg_role FROM messages WHERE id=?",
    "item": "SELECT tenant, role, text, thread_id, status, kind, source_message_id"
            " FROM memory_items WHERE id=?",
    "summary": "SELECT tenant, role, text, thread_id, level FROM summary_nodes WHERE id=?",
    "agent_memory": "SELECT tenant, role, title, content, category FROM agent_memories"
                    " WHERE id=?",
}


class SqliteOperatorReads:
    """Operator reads on one SQLite connection (``sqlite3.Row`` factory)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def scope_status(self, tenant: str | None, role: str | None) -> Row:
        conn = self._c
        clause, args = where(tenant=tenant, role=role)
        counts: dict[str, int] = {}
        for table in ("threads", "messages", "events", "memory_items", "task_state",
                      "summary_nodes"):
            counts[table] = _one(conn, f"SELECT COUNT(*) FROM {table} WHERE {clause}", args)
        counts["hidden_messages"] = _one(
            conn, f"SELECT COUNT(*) FROM messages WHERE {clause} AND hidden=1", args)
        am_clause, am_args = where(role=role)
        if tenant is not None:
            am_clause += " AND tenant IN (?, '*')"
            am_args.append(tenant)
        counts["agent_memories"] = _one(
            conn, f"SELECT COUNT(*) FROM agent_memories WHERE {am_clause}", am_args)
        by_status = {r[0]: r[1] for r in conn.execute(
            f"SELECT status, COUNT(*) FROM memory_items WHERE {clause} GROUP BY status", args)}
        levels = [dict(r) for r in conn.execute(
            f"SELECT level, COUNT(*) AS nodes, SUM(tokens) AS tokens, SUM(source_tokens) AS"
            f" source_tokens FROM summary_nodes WHERE {clause} AND status='active'"
            f" GROUP BY level ORDER BY level", args)]
        last_msg = _one(conn, f"SELECT MAX(created_at) FROM messages WHERE {clause}", args)
        row = conn.execute(f"SELECT * FROM assembly_logs WHERE {clause} ORDER BY id DESC"
                           " LIMIT 1", args).fetchone()
        return {"counts": counts, "items_by_status": by_status, "summary_levels": levels,
                "last_message_at": last_msg,
                "last_assembly": dict(row) if row is not None else None}

    def tenants(self) -> list[Row]:
        conn = self._c
        out = []
        for r in conn.execute(
                "SELECT tenant, GROUP_CONCAT(DISTINCT role) AS roles, COUNT(*) AS threads,"
                " MAX(updated_at) AS last_activity FROM threads GROUP BY tenant"
                " ORDER BY last_activity DESC"):
            n = _one(conn, "SELECT COUNT(*) FROM messages WHERE tenant=?", (r["tenant"],))
            out.append({"tenant": r["tenant"], "roles": str(r["roles"] or "").split(","),
                        "threads": r["threads"], "messages": n,
                        "last_activity": r["last_activity"]})
        return out

    def threads_page(self, *, tenant: str | None, role: str | None, session: str | None,
                     limit: int, offset: int) -> tuple[int, list[Row]]:
        conn = self._c
        clause, args = where("t.", tenant=tenant, role=role, session=session)
        total = _one(conn, f"SELECT COUNT(*) FROM threads t WHERE {clause}", args)
        rows = conn.execute(
            "SELECT t.*, (SELECT depth FROM messages WHERE id=t.head_message_id) AS head_depth,"
            " (SELECT COUNT(*) FROM messages m WHERE m.thread_id=t.id) AS own_messages,"
            " (SELECT text FROM messages m WHERE m.thread_id=t.id AND m.msg_role='user'"
            "  ORDER BY m.id LIMIT 1) AS first_user"
            f" FROM threads t WHERE {clause} ORDER BY t.updated_at DESC, t.id DESC"
            " LIMIT ? OFFSET ?", [*args, limit, offset]).fetchall()
        return total, [dict(r) for r in rows]

    def thread(self, thread_id: int, *, tenant: str | None, role: str | None
               ) -> Row | None:
        clause, args = where(tenant=tenant, role=role)
        row = self._c.execute(f"SELECT * FROM threads WHERE id=? AND {clause}",
                              [thread_id, *args]).fetchone()
        return dict(row) if row is not None else None

    def thread_path(self, head_message_id: int) -> PathRows:
        conn = self._c
        head = (head_message_id,)
        messages = [dict(r) for r in conn.execute(
            f"{_PATH_CTE} SELECT m.id, m.parent_id, m.msg_role, m.kind, m.hidden, m.text,"
            " m.tokens, m.created_at, m.summary_node_id, m.thread_id, m.depth FROM messages m"
            " JOIN path USING(id) ORDER BY m.depth", head)]
        children = [dict(r) for r in conn.execute(
            f"{_PATH_CTE} SELECT c.id, c.parent_id, c.thread_id, c.msg_role, c.text"
            " FROM messages c JOIN path p ON c.parent_id=p.id ORDER BY c.id", head)]
        forks = [(r[0], r[1]) for r in conn.execute(
            f"{_PATH_CTE} SELECT th.id, th.fork_message_id FROM threads th"
            " JOIN path p ON th.fork_message_id=p.id ORDER BY th.id", head)]
        return PathRows(messages, children, forks)

    def task_state(self, thread_id: int) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT id, label, text, status, source_message_id, updated_at FROM task_state"
            " WHERE thread_id=? ORDER BY id", (thread_id,))]

    def summary_nodes(self, tenant: str, role: str) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT * FROM summary_nodes WHERE tenant=? AND role=? ORDER BY level DESC, id",
            (tenant, role))]

    def items_page(self, *, tenant: str | None, role: str | None, status: str | None,
                   kind: str | None, thread_id: int | None, text: str | None,
                   limit: int, offset: int) -> tuple[int, list[Row]]:
        conn = self._c
        clause, args = where(tenant=tenant, role=role, status=status, kind=kind,
                             thread_id=thread_id)
        if text:
            # instr, not LIKE: LIKE ends both strings at a NUL (ASCII letters folded
            # either way: SQLite's lower folds those only)
            clause += (" AND (instr(lower(text), lower(?)) > 0"
                       " OR instr(lower(COALESCE(subject, '')), lower(?)) > 0)")
            args += [text, text]
        total = _one(conn, f"SELECT COUNT(*) FROM memory_items WHERE {clause}", args)
        cols = ("id, tenant, role, kind, status, text, subject, value, unit, condition,"
                " supersedes, superseded_by, conflict_with, source_message_id, evidence,"
                " created_at, updated_at")
        items = [dict(r) for r in conn.execute(
            f"SELECT {cols} FROM memory_items WHERE {clause} ORDER BY id DESC"
            " LIMIT ? OFFSET ?", [*args, limit, offset])]
        return total, items

    def item_brief(self, item_id: int) -> Row | None:
        row = self._c.execute(
            "SELECT id, status, kind, text, updated_at, supersedes, superseded_by"
            " FROM memory_items WHERE id=?", (item_id,)).fetchone()
        return dict(row) if row is not None else None

    def superseded_page(self, *, tenant: str | None, role: str | None, limit: int,
                        offset: int) -> tuple[int, list[int]]:
        conn = self._c
        clause, args = where(tenant=tenant, role=role)
        total = _one(conn, f"SELECT COUNT(*) FROM memory_items WHERE {clause} AND"
                     " status='superseded'", args)
        ids = [r[0] for r in conn.execute(
            f"SELECT id FROM memory_items WHERE {clause} AND status='superseded'"
            " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?", [*args, limit, offset])]
        return total, ids

    def ref_row(self, kind: str, ref_id: int) -> Row | None:
        sql = _REF_SQL.get(kind)
        if sql is None:
            raise ValueError(f"unknown ref kind {kind!r}")
        row = self._c.execute(sql, (ref_id,)).fetchone()
        return dict(row) if row is not None else None

    def item_scope(self, item_id: int) -> tuple[str, str, str] | None:
        r = self._c.execute("SELECT tenant, role, session FROM memory_items WHERE id=?",
                            (item_id,)).fetchone()
        return (r["tenant"], r["role"], r["session"]) if r is not None else None

    def session_rows(self, tenant: str, role: str, session: str) -> dict[str, list[Any]]:
        conn = self._c

        def rows(sql: str, args: tuple[Any, ...]) -> list[Row]:
            return [dict(r) for r in conn.execute(sql, args)]

        threads = [r["id"] for r in rows("SELECT id FROM threads WHERE tenant=? AND role=?"
                                         " AND session=? ORDER BY id",
                                         (tenant, role, session))]
        marks = ",".join("?" * len(threads)) or "NULL"
        return {
            "items": rows("SELECT id, kind, text, status, source_message_id FROM memory_items"
                          " WHERE tenant=? AND role=? ORDER BY id", (tenant, role)),
            "prefs": rows("SELECT key, title, content FROM agent_memories WHERE category="
                          "'user_preferences' AND role=? AND tenant IN (?, '*') ORDER BY key",
                          (role, tenant)),
            "tasks": rows(f"SELECT label, text, status FROM task_state WHERE thread_id IN"
                          f" ({marks}) ORDER BY id", tuple(threads)),
            "messages": rows("SELECT id, thread_id, parent_id, msg_role, text, node_key,"
                             " hidden FROM messages WHERE tenant=? AND role=? AND session=?"
                             " ORDER BY id", (tenant, role, session)),
            "summaries": rows("SELECT level, message_ids FROM summary_nodes WHERE tenant=?"
                              " AND role=? AND status='active' ORDER BY id", (tenant, role)),
            "threads": threads,
        }

    def session_tenant(self, session: str) -> str | None:
        row = self._c.execute("SELECT tenant FROM threads WHERE session=? LIMIT 1",
                              (session,)).fetchone()
        return str(row[0]) if row is not None else None

    def conflict_pairs(self) -> list[Row]:
        return [dict(r) for r in self._c.execute(
            "SELECT a.text AS a_text, b.text AS b_text, ma.text AS a_msg, mb.text AS b_msg"
            " FROM memory_items a JOIN memory_items b ON b.id = a.conflict_with"
            " LEFT JOIN messages ma ON ma.id = a.source_message_id"
            " LEFT JOIN messages mb ON mb.id = b.source_message_id")]

    def message_session(self, message_id: int) -> Row | None:
        row = self._c.execute("SELECT m.text, t.session FROM messages m JOIN threads t ON"
                              " t.id = m.thread_id WHERE m.id=?", (message_id,)).fetchone()
        return dict(row) if row is not None else None
