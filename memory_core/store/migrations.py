"""Numbered, append-only schema migrations, applied in order when a store opens.

Never edit a migration that has shipped: add the next one. ``PRAGMA user_version``
holds the number of the last migration applied; a database whose version is newer
than ``SCHEMA_VERSION`` is refused (``SchemaTooNewError``) rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[], str]
"""A migration returns one SQL script; it runs in one transaction with the version bump."""
MIGRATIONS: list[tuple[int, str, Migration]] = []


def migration(number: int, name: str) -> Callable[[Migration], Migration]:
    """Register ``fn`` as migration ``number`` (consecutive from 1)."""

    def register(fn: Migration) -> Migration:
        assert number == len(MIGRATIONS) + 1, f"migration {number} out of order"
        MIGRATIONS.append((number, name, fn))
        return fn

    return register


@migration(1, "evidence log: threads, messages, events, checkpoints, meta")
def m001_evidence() -> str:
    return """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE threads (
            id INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            parent_thread_id INTEGER REFERENCES threads(id),
            fork_message_id INTEGER,
            root_message_id INTEGER,
            head_message_id INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_user_at REAL
        );
        CREATE INDEX threads_scope ON threads(tenant, role, session, updated_at);
        CREATE INDEX threads_head ON threads(head_message_id);

        -- The evidence log. id is the public, monotonically increasing message id.
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            thread_id INTEGER NOT NULL REFERENCES threads(id),
            node_key TEXT NOT NULL,
            parent_key TEXT,
            parent_id INTEGER REFERENCES messages(id),
            depth INTEGER NOT NULL,
            msg_role TEXT,
            kind TEXT NOT NULL,            -- request | response | hidden
            text TEXT NOT NULL,
            raw_json TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            created_at REAL NOT NULL,
            hidden INTEGER NOT NULL DEFAULT 0,
            summary_node_id INTEGER,
            request_id TEXT,
            UNIQUE (tenant, role, session, node_key)
        );
        CREATE INDEX messages_thread ON messages(thread_id, id);
        CREATE INDEX messages_parent ON messages(parent_id);
        CREATE INDEX messages_scope ON messages(tenant, role, created_at);

        -- One row per request/response/unparsed body/error: what happened, not content.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            request_id TEXT,
            tenant TEXT,
            role TEXT,
            thread_id INTEGER,
            kind TEXT NOT NULL,
            created_at REAL NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX events_thread ON events(thread_id, id);

        CREATE TABLE checkpoints (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL,
            updated_at REAL NOT NULL
        );
        """


SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes (number of the last migration)."""


def apply_migrations(conn: sqlite3.Connection) -> int:
    """Apply every migration newer than the database's ``user_version``.

    Each migration runs in its own transaction together with the version bump, so a
    crash leaves the database at a whole version. Returns the version now in force.
    Raises ``SchemaTooNewError`` when the file is newer than this code.
    """
    from memory_core.errors import SchemaTooNewError

    current = conn.execute("PRAGMA user_version").fetchone()[0]
    latest = len(MIGRATIONS)
    if current > latest:
        raise SchemaTooNewError(f"database schema {current} is newer than this code ({latest})")
    for number, _name, fn in MIGRATIONS[current:]:
        # executescript commits any open transaction first, so BEGIN/COMMIT live in
        # the script itself; the version bump is inside the same transaction.
        try:
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{fn()}\nPRAGMA user_version = {number};\nCOMMIT;"
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return latest
