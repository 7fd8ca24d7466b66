"""PostgreSQL schema: numbered, append-only migrations of its own, applied on open.

The PostgreSQL backend (issue 27) keeps its own numbering. Migrations 1-3 hold
every table of SQLite's schema 9 (:mod:`memory_core.store.migrations`), same
columns, same order and meaning, in PostgreSQL's types: ``BIGINT`` identity ids
(``GENERATED ALWAYS``: never reused, like ``AUTOINCREMENT``), ``DOUBLE PRECISION``
UNIX seconds, ``BYTEA`` blobs and vectors. JSON columns (``memory_items.data``,
``raw_json``, ``message_ids``, ``events.data``) stay ``TEXT``: they read back byte
for byte as SQLite's do (``JSONB`` would reorder keys and drop duplicates), and
queries parse them with ``::json`` where SQLite calls ``json_extract``. The item
change log is filled by a trigger (as SQLite's m004) and ``lcm_json_field`` is
SQLite's ``json_valid`` + ``json_extract`` of one key (``NULL`` for text that is not
a JSON object). Never edit a migration that has shipped: add the next one.

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
    (3, "memory: items and their logs, agent memories, task state, summaries,"
        " assembly logs, checkpoints, vectors, extraction queue, forwarded requests", """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE checkpoints (
            name TEXT PRIMARY KEY,
            value BIGINT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE memory_items (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            thread_id BIGINT,
            kind TEXT NOT NULL,
            subject TEXT,
            text TEXT NOT NULL,
            value DOUBLE PRECISION,
            value_text TEXT,
            unit TEXT,
            condition TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            supersedes BIGINT REFERENCES memory_items(id),
            superseded_by BIGINT REFERENCES memory_items(id),
            conflict_with BIGINT REFERENCES memory_items(id),
            source_message_id BIGINT REFERENCES messages(id),
            evidence TEXT NOT NULL DEFAULT 'user',
            lang TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memory_items_scope ON memory_items(tenant, role, status, kind);
        CREATE INDEX memory_items_subject ON memory_items(tenant, role, subject);
        CREATE INDEX memory_items_source ON memory_items(source_message_id);
        CREATE INDEX memory_items_restate ON memory_items(tenant, role, status,
            (COALESCE(data::json ->> 'speaker', '')), value, unit, condition);
        CREATE TABLE memory_item_revisions (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            item_id BIGINT NOT NULL REFERENCES memory_items(id),
            changed_at DOUBLE PRECISION NOT NULL,
            field TEXT NOT NULL,
            old TEXT,
            new TEXT,
            reason TEXT
        );
        CREATE INDEX memory_item_revisions_item ON memory_item_revisions(item_id, id);
        CREATE TABLE memory_item_changes (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            item_id BIGINT NOT NULL
        );
        CREATE FUNCTION lcm_item_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                INSERT INTO memory_item_changes (item_id) VALUES (OLD.id);
            ELSE
                INSERT INTO memory_item_changes (item_id) VALUES (NEW.id);
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER memory_items_changed AFTER INSERT OR UPDATE OR DELETE
            ON memory_items FOR EACH ROW EXECUTE FUNCTION lcm_item_changed();
        CREATE TABLE memory_item_subject_keys (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            part INTEGER NOT NULL,
            key TEXT NOT NULL,
            item_id BIGINT NOT NULL,
            PRIMARY KEY (tenant, role, part, key, item_id)
        );
        CREATE INDEX memory_item_subject_keys_item ON memory_item_subject_keys(item_id);
        CREATE TABLE memory_item_terms (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            term TEXT NOT NULL,
            item_id BIGINT NOT NULL,
            PRIMARY KEY (tenant, role, term, item_id)
        );
        CREATE INDEX memory_item_terms_item ON memory_item_terms(item_id);
        CREATE TABLE agent_memories (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            category TEXT NOT NULL
                CHECK (category IN ('progress', 'user_preferences', 'memo')),
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL CHECK (length(content) <= 500),
            updated_at DOUBLE PRECISION NOT NULL,
            role TEXT NOT NULL DEFAULT 'default',
            embedding BYTEA,
            tenant TEXT NOT NULL DEFAULT '',
            UNIQUE (tenant, category, key, role)
        );
        CREATE TABLE task_state (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id BIGINT NOT NULL,
            label TEXT NOT NULL,
            text TEXT NOT NULL,
            norm TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',
            source_message_id BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            UNIQUE (thread_id, label, norm)
        );
        CREATE INDEX task_state_source ON task_state(source_message_id);
        CREATE INDEX task_state_open ON task_state(tenant, role, status, label, updated_at);
        CREATE TABLE summary_nodes (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id BIGINT NOT NULL,
            level INTEGER NOT NULL,
            first_message_id BIGINT NOT NULL,
            last_message_id BIGINT NOT NULL,
            message_ids TEXT NOT NULL,
            parent_id BIGINT REFERENCES summary_nodes(id),
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            source_tokens INTEGER NOT NULL,
            model TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX summary_nodes_thread ON summary_nodes(thread_id, level, id);
        CREATE INDEX summary_nodes_scope ON summary_nodes(tenant, role, status, level);
        CREATE TABLE assembly_logs (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            request_id TEXT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            trigger TEXT NOT NULL,
            budget_tokens INTEGER NOT NULL,
            used_tokens INTEGER NOT NULL,
            token_source TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX assembly_logs_thread ON assembly_logs(thread_id, id);
        CREATE INDEX assembly_logs_scope ON assembly_logs(tenant, role, id);
        CREATE INDEX assembly_logs_request ON assembly_logs(request_id);
        CREATE TABLE embeddings (
            kind TEXT NOT NULL,
            ref_id BIGINT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (kind, ref_id)
        );
        CREATE TABLE extraction_queue (
            message_id BIGINT PRIMARY KEY REFERENCES messages(id),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            next_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE forwarded_requests (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            request_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            state TEXT NOT NULL,
            model TEXT,
            stream INTEGER NOT NULL DEFAULT 0,
            client_bytes BIGINT NOT NULL,
            body_bytes BIGINT NOT NULL,
            body BYTEA,
            body_omitted INTEGER NOT NULL DEFAULT 0,
            redacted INTEGER NOT NULL DEFAULT 0,
            tools_added INTEGER NOT NULL DEFAULT 0,
            compacted_messages INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX forwarded_requests_scope ON forwarded_requests(tenant, role, id);
        CREATE INDEX forwarded_requests_request ON forwarded_requests(request_id);
        CREATE INDEX forwarded_requests_thread ON forwarded_requests(thread_id, id);
        CREATE INDEX index_outbox_message ON index_outbox(id) WHERE kind = 'message';
        CREATE FUNCTION lcm_json_field(doc TEXT, field TEXT) RETURNS TEXT
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        BEGIN
            IF doc IS NULL OR left(ltrim(doc, E' \t\n\r'), 1) <> '{' THEN
                RETURN NULL;
            END IF;
            RETURN doc::json ->> field;
        EXCEPTION WHEN others THEN
            RETURN NULL;
        END $$;
    """),
    (4, "agent memories: content length in real characters", r"""
        -- length() counts the escape pairs of pg_text (a NUL is stored as two
        -- characters), so the CHECK refused content of 500 characters that SQLite
        -- keeps. lcm_text_length is the length of the text a stored value decodes
        -- to: every ESC (U+FFFF) starts a two-character pair, every unescaped
        -- \uffff0 or \uffff1 stands for the six characters \u0000 or \uffff.
        CREATE FUNCTION lcm_text_length(t TEXT) RETURNS INTEGER
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
            SELECT length(replace(t, chr(65535), ''))
                   - (SELECT count(*)::integer
                      FROM regexp_matches(t, '(?<!\\)(?:\\\\)*\\uffff[01]', 'g'))
        $$;
        ALTER TABLE agent_memories DROP CONSTRAINT IF EXISTS agent_memories_content_check;
        ALTER TABLE agent_memories ADD CONSTRAINT agent_memories_content_check
            CHECK (lcm_text_length(content) <= 500);
    """),
    (5, "response threads: find a response or conversation id among a key's users", """
        -- SQLite's m010: a request may continue a response or conversation made under
        -- another end user of the same API key; the id is looked up among the key's
        -- tenants.
        CREATE INDEX response_threads_response ON response_threads(response_id, role);
        CREATE INDEX response_conversations_conversation
            ON response_conversations(conversation_id, role);
    """),
    (6, "superseded items by source message", """
        -- SQLite's m011: the values corrected since a summary was written, read on
        -- every request of a compacted conversation.
        CREATE INDEX memory_items_superseded ON memory_items(tenant, role, source_message_id)
            WHERE status = 'superseded';
    """),
    (7, "conflict sides", """
        -- SQLite's m012: a supersession looks up the items in conflict with the one it
        -- replaces; without an index each correction read the table. (The active
        -- summaries of a scope have summary_nodes_scope here since m001.)
        CREATE INDEX memory_items_conflict ON memory_items(conflict_with)
            WHERE conflict_with IS NOT NULL;
    """),
    (8, "the time zone each message was said in", """
        -- SQLite's m013: the IANA time zone a message was said in; NULL: UTC.
        -- Nullable without a default: no table rewrite, old rows read as UTC.
        ALTER TABLE messages ADD COLUMN tz TEXT;
    """),
    (9, "assistant messages with tool calls by scope", """
        -- SQLite's m014: the newest assistant messages with a tool call of a scope
        -- (ExtractionQueue.calls_before) without reading every assistant message of
        -- the window. The predicate is that look-up's filter, word for word; id last
        -- so that the rows come in the look-up's order and its LIMIT stops the scan.
        CREATE INDEX messages_calls ON messages(tenant, role, created_at, id)
            WHERE msg_role = 'assistant' AND hidden = 0
            AND (strpos(raw_json, '"tool_use"') > 0 OR strpos(raw_json, '"tool_calls"') > 0
                 OR strpos(raw_json, '"function_call"') > 0);
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
