"""Engine: the synchronous façade of the memory core (capture, export, status).

The proxy talks to :class:`memory_core.aio.AsyncEngine`, which wraps this class for
asyncio. Writes are queued to the store's writer thread and return futures; reads
run on the calling thread. No aiohttp here (DESIGN §1).
"""

from __future__ import annotations

import secrets
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import orjson

from memory_core import capture
from memory_core.config import MemoryConfig
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.migrations import SCHEMA_VERSION
from memory_core.store.sqlite import SqliteStore


def _ensure_salt(conn: Any) -> str:
    """Return this data directory's tenant salt, creating it on first open."""
    row = conn.execute("SELECT value FROM meta WHERE key='tenant_salt'").fetchone()
    if row is not None:
        return str(row[0])
    salt = secrets.token_hex(16)
    conn.execute("INSERT INTO meta (key, value) VALUES ('tenant_salt', ?)", (salt,))
    return salt


class Engine:
    """Owns one :class:`SqliteStore` in ``data_dir`` (raises ``StoreError`` on open)."""

    def __init__(self, data_dir: str | Path, config: MemoryConfig | None = None) -> None:
        self.config = (config or MemoryConfig()).clamped()
        self.store = SqliteStore(data_dir)
        self.tenant_salt: str = self.store.write_sync(_ensure_salt)

    # -- capture (writes) -------------------------------------------------------
    def capture_request(
        self, scope: Scope, request_id: str, messages: list[Any], event: dict[str, Any]
    ) -> tuple[CaptureTicket, Future[CaptureResult]]:
        """Queue the capture of a request's ``messages``; return (ticket, future).

        Pass the ticket to :meth:`capture_response` for the matching response; the
        writer runs jobs in order so the response always sees the request's result.
        """
        ticket = CaptureTicket(scope=scope, request_id=request_id)
        fut = self.store.write(capture.capture_request, ticket, messages, event)
        return ticket, fut

    def capture_response(
        self,
        ticket: CaptureTicket,
        choices: list[Any],
        event: dict[str, Any],
        hidden_rounds: list[Any] | None = None,
    ) -> Future[list[int]]:
        """Queue the capture of the assistant messages of a response (one per choice)."""
        return self.store.write(
            capture.capture_response, ticket, choices, event, None, hidden_rounds
        )

    def record_event(
        self, scope: Scope | None, request_id: str, kind: str, data: dict[str, Any]
    ) -> Future[int]:
        """Queue one ``events`` row (e.g. ``unparsed`` bodies, upstream errors)."""
        ticket = CaptureTicket(scope=scope, request_id=request_id) if scope else None
        if ticket is None:
            data = dict(data, request_id=request_id)
        return self.store.write(capture.record_event, ticket, kind, data)

    def flush(self, timeout: float | None = 60.0) -> None:
        """Block until every queued write has committed."""
        self.store.flush(timeout)

    def close(self) -> None:
        """Flush and close the store."""
        self.store.close()

    # -- reads ------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Return database path, schema version, row counts and file size in bytes."""

        def q(conn: Any) -> dict[str, Any]:
            counts = {}
            for table in ("threads", "messages", "events"):
                counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            counts["hidden_messages"] = conn.execute(
                "SELECT COUNT(*) FROM messages WHERE hidden=1"
            ).fetchone()[0]
            scopes = conn.execute(
                "SELECT COUNT(DISTINCT tenant), COUNT(DISTINCT tenant || '/' || role)"
                " FROM threads"
            ).fetchone()
            last = conn.execute("SELECT MAX(created_at) FROM messages").fetchone()[0]
            return {"counts": counts, "tenants": scopes[0], "roles": scopes[1], "last": last}

        info = self.store.read(q)
        path = self.store.path
        size = sum(
            p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()
        )
        return {
            "database": str(path),
            "schema_version": SCHEMA_VERSION,
            "size_bytes": size,
            "counts": info["counts"],
            "tenants": info["tenants"],
            "tenant_roles": info["roles"],
            "last_message_at": info["last"],
        }

    def export(
        self,
        *,
        session: str | None = None,
        role: str | None = None,
        tenant: str | None = None,
        thread_id: int | None = None,
        events: bool = False,
    ) -> dict[str, Any]:
        """Return stored threads and messages (and events) as plain JSON-ready dicts.

        Filters combine with AND. ``session`` matches ``X-LCM-Session`` values.
        Messages carry ``id`` (the public message id), ``parent_id``, ``role``,
        ``kind``, ``hidden``, ``text``, ``message`` (the original JSON) and
        ``created_at`` (UNIX seconds).
        """
        where, args = [], []
        for col, val in (("session", session), ("role", role), ("tenant", tenant)):
            if val is not None:
                where.append(f"{col}=?")
                args.append(val)
        if thread_id is not None:
            where.append("id=?")
            args.append(thread_id)
        clause = (" WHERE " + " AND ".join(where)) if where else ""

        def q(conn: Any) -> dict[str, Any]:
            threads = []
            for t in conn.execute(f"SELECT * FROM threads{clause} ORDER BY id", args):
                msgs = [
                    {
                        "id": m["id"],
                        "parent_id": m["parent_id"],
                        "role": m["msg_role"],
                        "kind": m["kind"],
                        "hidden": bool(m["hidden"]),
                        "text": m["text"],
                        "tokens": m["tokens"],
                        "message": orjson.loads(m["raw_json"]),
                        "created_at": m["created_at"],
                    }
                    for m in conn.execute(
                        "SELECT * FROM messages WHERE thread_id=? ORDER BY id", (t["id"],)
                    )
                ]
                threads.append(
                    {
                        "id": t["id"],
                        "tenant": t["tenant"],
                        "role": t["role"],
                        "session": t["session"] or None,
                        "parent_thread_id": t["parent_thread_id"],
                        "fork_message_id": t["fork_message_id"],
                        "head_message_id": t["head_message_id"],
                        "created_at": t["created_at"],
                        "updated_at": t["updated_at"],
                        "messages": msgs,
                    }
                )
            out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "threads": threads}
            if events:
                ids = [t["id"] for t in threads]
                rows = []
                if ids or not where:
                    ev_clause = ""
                    ev_args: list[Any] = []
                    if where:
                        ev_clause = f" WHERE thread_id IN ({','.join('?' * len(ids))})"
                        ev_args = ids
                    for e in conn.execute(f"SELECT * FROM events{ev_clause} ORDER BY id", ev_args):
                        rows.append(
                            {
                                "id": e["id"],
                                "request_id": e["request_id"],
                                "thread_id": e["thread_id"],
                                "kind": e["kind"],
                                "created_at": e["created_at"],
                                "data": orjson.loads(e["data"]),
                            }
                        )
                out["events"] = rows
            return out

        return self.store.read(q)

    def thread_messages(self, thread_id: int) -> list[dict[str, Any]]:
        """Return the path from the root to the thread's head (ids, roles, texts)."""

        def q(conn: Any) -> list[dict[str, Any]]:
            head = conn.execute(
                "SELECT head_message_id FROM threads WHERE id=?", (thread_id,)
            ).fetchone()
            if head is None or head[0] is None:
                return []
            rows = conn.execute(
                "WITH RECURSIVE path(id) AS (SELECT ? UNION ALL"
                " SELECT m.parent_id FROM messages m JOIN path p ON m.id=p.id"
                " WHERE m.parent_id IS NOT NULL)"
                " SELECT m.id, m.msg_role, m.kind, m.text, m.hidden FROM messages m"
                " JOIN path USING(id) ORDER BY m.depth",
                (head[0],),
            ).fetchall()
            return [dict(r) for r in rows]

        return self.store.read(q)

    @staticmethod
    def now() -> float:
        """Wall-clock UNIX seconds (one place to stub in tests of idle logic)."""
        return time.time()
