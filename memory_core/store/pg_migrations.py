"""PostgreSQL schema: numbered, append-only migrations of its own, applied on open.

The PostgreSQL backend (issue 27) keeps its own numbering: its tables arrive one
operation group at a time as the groups move behind :mod:`memory_core.store.api`,
with the same columns and meaning as the SQLite tables of that group
(:mod:`memory_core.store.migrations`) in PostgreSQL's types: ``BIGINT`` ids,
``DOUBLE PRECISION`` UNIX seconds, ``BYTEA`` blobs. Never edit a migration that
has shipped: add the next one.

``lcm_schema`` holds one row per migration applied. Several replicas may open one
database at once: each migration runs in its own transaction under a
transaction-level advisory lock, and re-reads the version after taking it, so each
is applied exactly once.
"""

from __future__ import annotations

import time
from typing import Any

from memory_core.errors import SchemaTooNewError

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "response map: Responses API response and conversation ids -> items", """
        CREATE TABLE response_threads (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            response_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            parent_response_id TEXT,
            thread_id BIGINT,
            items BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (tenant, role, response_id)
        );
        CREATE INDEX response_threads_thread ON response_threads(thread_id);
        CREATE TABLE response_conversations (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            response_id TEXT NOT NULL,
            thread_id BIGINT,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (tenant, role, conversation_id)
        );
        CREATE INDEX response_conversations_thread ON response_conversations(thread_id);
    """),
    (2, "evidence: threads, messages, events, splices, the index outbox", """
        CREATE TABLE threads (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            parent_thread_id BIGINT REFERENCES threads(id),
            fork_message_id BIGINT,
            root_message_id BIGINT,
            head_message_id BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            last_user_at DOUBLE PRECISION
        );
        CREATE INDEX threads_scope ON threads(tenant, role, session, updated_at);
        CREATE INDEX threads_head ON threads(head_message_id);
        CREATE TABLE messages (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            thread_id BIGINT NOT NULL REFERENCES threads(id),
            node_key TEXT NOT NULL,
            parent_key TEXT,
            parent_id BIGINT REFERENCES messages(id),
            depth INTEGER NOT NULL,
            msg_role TEXT,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            raw_json TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            hidden INTEGER NOT NULL DEFAULT 0,
            summary_node_id BIGINT,
            request_id TEXT,
            UNIQUE (tenant, role, session, node_key)
        );
        CREATE INDEX messages_thread ON messages(thread_id, id);
        CREATE INDEX messages_parent ON messages(parent_id);
        CREATE INDEX messages_scope ON messages(tenant, role, created_at);
        CREATE TABLE events (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            request_id TEXT,
            tenant TEXT,
            role TEXT,
            thread_id BIGINT,
            kind TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX events_thread ON events(thread_id, id);
        CREATE INDEX events_request ON events(request_id);
        CREATE TABLE splices (
            message_id BIGINT PRIMARY KEY REFERENCES messages(id),
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            messages TEXT NOT NULL,
            hidden_ids TEXT NOT NULL
        );
        CREATE TABLE index_outbox (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind TEXT NOT NULL,
            ref_id BIGINT NOT NULL,
            op TEXT NOT NULL
        );
    """),
]
SCHEMA_VERSION = len(MIGRATIONS)

_LOCK_KEY = 0x6C636D5F736368  # "lcm_sch": the advisory lock migrations take
"""Key of the advisory lock held while a migration is applied."""


def apply_migrations(conn: Any) -> int:
    """Apply every migration newer than the database's on ``conn`` (a
    ``psycopg.Connection`` outside a transaction); return the version now in force.

    Raises ``SchemaTooNewError`` when the database is newer than this code, and
    ``psycopg.Error`` when a migration fails (that migration is rolled back whole).
    """
    assert [n for n, _, _ in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS lcm_schema (number INTEGER PRIMARY KEY,"
                     " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)")
    for number, name, script in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            current = _version(conn)
            if current > SCHEMA_VERSION:
                raise SchemaTooNewError(
                    f"database schema {current} is newer than this code ({SCHEMA_VERSION})")
            if number <= current:
                continue
            conn.execute(script)
            conn.execute("INSERT INTO lcm_schema (number, name, applied_at) VALUES (%s, %s, %s)",
                         (number, name, time.time()))
    with conn.transaction():
        current = _version(conn)
    if current > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"database schema {current} is newer than this code ({SCHEMA_VERSION})")
    return current


def _version(conn: Any) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(number), 0) FROM lcm_schema").fetchone()[0])
