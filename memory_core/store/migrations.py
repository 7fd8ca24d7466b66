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


@migration(2, "memory: items, agent memories, task state, summaries, assembly logs, indexes")
def m002_memory() -> str:
    return """
        -- Extracted memory items (DESIGN §4-5). Never deleted except by purge;
        -- supersession and retraction are status changes with links.
        CREATE TABLE memory_items (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            thread_id INTEGER,
            kind TEXT NOT NULL,         -- fact|decision|constraint|preference|question|proposal
            subject TEXT,               -- normalised subject, matches corrections/conflicts
            text TEXT NOT NULL,
            value REAL,                 -- number stated, if any
            value_text TEXT,            -- the number as written ("30", "1.5k")
            unit TEXT,
            condition TEXT,
            status TEXT NOT NULL DEFAULT 'active',   -- active|superseded|retracted
            supersedes INTEGER REFERENCES memory_items(id),
            superseded_by INTEGER REFERENCES memory_items(id),
            conflict_with INTEGER REFERENCES memory_items(id),
            source_message_id INTEGER REFERENCES messages(id),
            evidence TEXT NOT NULL DEFAULT 'user',   -- user|assistant|operator
            lang TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memory_items_scope ON memory_items(tenant, role, status, kind);
        CREATE INDEX memory_items_subject ON memory_items(tenant, role, subject);
        CREATE INDEX memory_items_source ON memory_items(source_message_id);

        CREATE TABLE memory_item_revisions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            item_id INTEGER NOT NULL REFERENCES memory_items(id),
            changed_at REAL NOT NULL,
            field TEXT NOT NULL,
            old TEXT,
            new TEXT,
            reason TEXT
        );
        CREATE INDEX memory_item_revisions_item ON memory_item_revisions(item_id, id);

        -- The seed's agent memories. tenant is added for isolation between API keys;
        -- within one tenant, uniqueness is exactly the seed's (category, key, role).
        CREATE TABLE agent_memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            category TEXT NOT NULL CHECK (category IN ('progress', 'user_preferences', 'memo')),
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL CHECK (length(content) <= 500),
            updated_at REAL NOT NULL,
            role TEXT NOT NULL DEFAULT 'default',
            embedding BLOB,
            tenant TEXT NOT NULL DEFAULT '',
            UNIQUE (tenant, category, key, role)
        );

        CREATE TABLE task_state (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id INTEGER NOT NULL,
            label TEXT NOT NULL,        -- goal|progress|todo|blocked|decision
            text TEXT NOT NULL,
            norm TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',     -- open|done|superseded
            source_message_id INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (thread_id, label, norm)
        );

        CREATE TABLE summary_nodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id INTEGER NOT NULL,
            level INTEGER NOT NULL,
            first_message_id INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            message_ids TEXT NOT NULL,  -- JSON array of covered message ids
            parent_id INTEGER REFERENCES summary_nodes(id),
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            source_tokens INTEGER NOT NULL,
            model TEXT NOT NULL,        -- the summarizer's model, or 'extractive'
            status TEXT NOT NULL DEFAULT 'active',
            created_at REAL NOT NULL
        );
        CREATE INDEX summary_nodes_thread ON summary_nodes(thread_id, level, id);

        CREATE TABLE assembly_logs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            request_id TEXT,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id INTEGER,
            created_at REAL NOT NULL,
            trigger TEXT NOT NULL,      -- bootstrap|regular
            budget_tokens INTEGER NOT NULL,
            used_tokens INTEGER NOT NULL,
            token_source TEXT NOT NULL,
            data TEXT NOT NULL          -- JSON: sections, included/truncated/omitted + why
        );
        CREATE INDEX assembly_logs_thread ON assembly_logs(thread_id, id);
        CREATE INDEX assembly_logs_scope ON assembly_logs(tenant, role, id);

        -- Vectors (derived): one per indexed object, with the model that made it.
        CREATE TABLE embeddings (
            kind TEXT NOT NULL,         -- message|item|agent_memory|summary
            ref_id INTEGER NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,       -- float32, L2-normalised
            created_at REAL NOT NULL,
            PRIMARY KEY (kind, ref_id)
        );

        -- Every change the derived indexes must see, in commit order. Indexers keep
        -- their position in checkpoints(name) and catch up from it after a crash.
        CREATE TABLE index_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,         -- message|item|agent_memory|summary
            ref_id INTEGER NOT NULL,
            op TEXT NOT NULL            -- upsert|delete
        );

        -- Messages whose extraction failed, retried with backoff.
        CREATE TABLE extraction_queue (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            next_at REAL NOT NULL
        );
        """


@migration(3, "splices: the model's own view of replies that hid memory-tool rounds")
def m003_splices() -> str:
    return """
        -- A client-visible reply whose production involved memory-tool calls the
        -- client never saw. Later requests show the upstream ``messages`` (the
        -- hidden calls, their results and the full reply) in its place.
        CREATE TABLE splices (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id),
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            messages TEXT NOT NULL,     -- JSON array of OpenAI messages
            hidden_ids TEXT NOT NULL    -- JSON array of the hidden messages' ids
        );
        """


@migration(4, "memory item change log for the injection's item cache")
def m004_item_changes() -> str:
    return """
        -- Every insert, update and delete of a memory item appends its id here, by
        -- trigger (whatever code or process made the change). Readers that keep
        -- items in memory (memory_core.items.cache) reload only the ids changed since
        -- the last seq they saw. Ids only, no content; old rows are pruned.
        CREATE TABLE memory_item_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            item_id INTEGER NOT NULL
        );
        CREATE TRIGGER memory_items_changed_insert AFTER INSERT ON memory_items
        BEGIN INSERT INTO memory_item_changes (item_id) VALUES (new.id); END;
        CREATE TRIGGER memory_items_changed_update AFTER UPDATE ON memory_items
        BEGIN INSERT INTO memory_item_changes (item_id) VALUES (new.id); END;
        CREATE TRIGGER memory_items_changed_delete AFTER DELETE ON memory_items
        BEGIN INSERT INTO memory_item_changes (item_id) VALUES (old.id); END;
        """


@migration(5, "index task_state by source message (search's task-turn lookup)")
def m005_task_state_source() -> str:
    return """
        -- SearchService._task_turns (every hybrid search with message candidates)
        -- and compaction look task lines up by source_message_id IN (...): without
        -- this, each such query scans the whole table (all tenants).
        CREATE INDEX task_state_source ON task_state(source_message_id);
        """


@migration(6, "index open task lines by scope and label (search's query intents)")
def m006_task_state_open() -> str:
    return """
        -- SearchService._open_task_lines: the newest open lines of one label in a
        -- tenant and role (a goal or blocker question). Without this, the lookup
        -- walks every message of the scope.
        CREATE INDEX task_state_open ON task_state(tenant, role, status, label, updated_at);
        """


@migration(7, "forwarded requests: the body each upstream received, for the inspector")
def m007_forwarded_requests() -> str:
    return """
        -- One row per request forwarded upstream with memory in play: the exact body
        -- sent (zlib-compressed JSON bytes; secrets masked when capture redacts), what
        -- memory did to it. Only the newest rows per tenant are kept
        -- (capture.keep_forwarded_requests); a body over forwarded_body_max_kib is
        -- kept as its size alone (body NULL, body_omitted 1).
        CREATE TABLE forwarded_requests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            request_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            thread_id INTEGER,
            created_at REAL NOT NULL,
            state TEXT NOT NULL,            -- x-lcm-memory: injected|skipped|failed-open|...
            model TEXT,
            stream INTEGER NOT NULL DEFAULT 0,
            client_bytes INTEGER NOT NULL,  -- the client's request body, bytes
            body_bytes INTEGER NOT NULL,    -- the forwarded body, bytes (uncompressed)
            body BLOB,                      -- zlib(forwarded body), NULL when omitted
            body_omitted INTEGER NOT NULL DEFAULT 0,
            redacted INTEGER NOT NULL DEFAULT 0,
            tools_added INTEGER NOT NULL DEFAULT 0,
            compacted_messages INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX forwarded_requests_scope ON forwarded_requests(tenant, role, id);
        CREATE INDEX forwarded_requests_request ON forwarded_requests(request_id);
        CREATE INDEX forwarded_requests_thread ON forwarded_requests(thread_id, id);
        -- The request log joins a request's events and assembly log by request id.
        CREATE INDEX events_request ON events(request_id);
        CREATE INDEX assembly_logs_request ON assembly_logs(request_id);
        """


@migration(8, "response threads: Responses API response and conversation ids -> items")
def m008_response_threads() -> str:
    return """
        -- One row per Responses API response the proxy relayed with store on: the
        -- items it adds to its conversation (the request's new input items, then the
        -- response's output; zlib-compressed JSON array), and the response it
        -- continued (previous_response_id), so a response's whole thread is its chain
        -- of rows back to one without parent (memory_core.capture.response_threads). Scoped by
        -- tenant and role: an id never resolves in another tenant.
        CREATE TABLE response_threads (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            response_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            parent_response_id TEXT,    -- NULL: the request started its conversation
            thread_id INTEGER,          -- the thread its request was captured on
            items BLOB NOT NULL,        -- zlib(JSON array of the items it adds)
            created_at REAL NOT NULL,
            PRIMARY KEY (tenant, role, response_id)
        );
        CREATE INDEX response_threads_thread ON response_threads(thread_id);
        -- A Responses API conversation (a request's ``conversation``) → its newest
        -- response relayed by the proxy: the next request's items follow that
        -- response's conversation in the evidence.
        CREATE TABLE response_conversations (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            response_id TEXT NOT NULL,
            thread_id INTEGER,
            updated_at REAL NOT NULL,
            PRIMARY KEY (tenant, role, conversation_id)
        );
        CREATE INDEX response_conversations_thread ON response_conversations(thread_id);
        """


@migration(9, "subject keys, content terms and a restatement index for duplicate checks")
def m009_subject_keys() -> str:
    return """
        -- The words and CJK characters of each item's subject
        -- (memory_core.items.supersession.subject_keys; part 0: every key, part 1: the
        -- anchor), so the writer finds the items whose subject contains a new one's
        -- or is contained in it without reading every item of the scope.
        CREATE TABLE memory_item_subject_keys (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            part INTEGER NOT NULL,      -- 0: a key of the subject, 1: its anchor
            key TEXT NOT NULL,
            item_id INTEGER NOT NULL,
            PRIMARY KEY (tenant, role, part, key, item_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_item_subject_keys_item ON memory_item_subject_keys(item_id);
        INSERT OR IGNORE INTO memory_item_subject_keys (tenant, role, part, key, item_id)
            SELECT i.tenant, i.role, 0, k.value, i.id
            FROM memory_items i, json_each(lcm_subject_keys(i.subject)) k
            WHERE i.subject IS NOT NULL AND i.subject != '';
        INSERT OR IGNORE INTO memory_item_subject_keys (tenant, role, part, key, item_id)
            SELECT i.tenant, i.role, 1, lcm_subject_anchor(i.subject), i.id
            FROM memory_items i WHERE i.subject IS NOT NULL AND i.subject != '';
        -- Each item's content terms (memory_core.items.writer.content_terms), for the
        -- restatement check: only items holding one of a statement's terms are
        -- compared with it.
        CREATE TABLE memory_item_terms (
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            term TEXT NOT NULL,
            item_id INTEGER NOT NULL,
            PRIMARY KEY (tenant, role, term, item_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_item_terms_item ON memory_item_terms(item_id);
        INSERT OR IGNORE INTO memory_item_terms (tenant, role, term, item_id)
            SELECT i.tenant, i.role, k.value, i.id
            FROM memory_items i, json_each(lcm_content_terms(i.text)) k;
        -- The restatement check (memory_core.items.writer._reworded): the newest active
        -- items of one speaker, value, unit and condition, without reading the rest.
        CREATE INDEX memory_items_restate ON memory_items(tenant, role, status,
            coalesce(json_extract(data, '$.speaker'), ''), value, unit, condition);
        """


@migration(10, "response threads: find a response or conversation id among a key's users")
def m010_response_threads_by_id() -> str:
    return """
        -- A request may continue a response or conversation made under another end
        -- user of the same API key (tenant t_a~u_b, or the key's own t_a): the proxy
        -- looks the id up among the key's tenants (memory_core.capture.response_threads:
        -- owner, conversation_owner). The primary keys lead with the tenant; these
        -- indexes find an id in one lookup.
        CREATE INDEX response_threads_response ON response_threads(response_id, role);
        CREATE INDEX response_conversations_conversation
            ON response_conversations(conversation_id, role);
        """


@migration(11, "superseded items by source message")
def m011_superseded_by_source() -> str:
    return """
        -- The values corrected since a summary was written (Engine.superseded_sources):
        -- the newest superseded items of a scope up to a message, read on every request
        -- of a compacted conversation. Without it the read walked every item newer than
        -- those (most of the table where corrections are frequent).
        CREATE INDEX memory_items_superseded ON memory_items(tenant, role, source_message_id)
            WHERE status = 'superseded';
        """


@migration(12, "conflict sides and active summaries by scope")
def m012_conflicts_and_summary_scope() -> str:
    return """
        -- A supersession looks up the items in conflict with the one it replaces
        -- (items.writer.supersede): without an index every item of the table was read,
        -- once per correction.
        CREATE INDEX memory_items_conflict ON memory_items(conflict_with)
            WHERE conflict_with IS NOT NULL;
        -- The active nodes of a scope, read twice on every request of a compacted
        -- conversation (compaction.node_cache): the scan read each node's covered ids
        -- and text to reach its status. Covering: (id, parent_id) come from the index.
        CREATE INDEX summary_nodes_scope ON summary_nodes(tenant, role, status, parent_id);
        """


@migration(13, "the time zone each message was said in")
def m013_message_zone() -> str:
    return """
        -- The IANA time zone a message was said in (the request's X-LCM-Timezone,
        -- else capture.timezone): its relative days ("tomorrow") are read in it, by an
        -- extraction queued after the capture as by one run inline. NULL: UTC, the
        -- zone every message stored before was read in.
        ALTER TABLE messages ADD COLUMN tz TEXT;
        """


@migration(14, "assistant messages with tool calls by scope")
def m014_message_calls() -> str:
    return """
        -- The extraction job's "did the assistant write this?" look-up
        -- (ExtractionQueue.calls_before) wants the newest assistant messages with a tool
        -- call of a scope; on messages_scope it read the raw JSON of every assistant
        -- message of the past hour, once per user message. The predicate is that
        -- look-up's own filter, word for word (so the planner may use the index and
        -- the rows are the same): built from the rows already stored, kept by SQLite.
        CREATE INDEX messages_calls ON messages(tenant, role, created_at)
            WHERE msg_role = 'assistant' AND hidden = 0
            AND (instr(raw_json, '"tool_use"') OR instr(raw_json, '"tool_calls"')
                 OR instr(raw_json, '"function_call"'));
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
    _register_functions(conn)
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


def _register_functions(conn: sqlite3.Connection) -> None:
    """SQL functions the migrations' backfills call (Python code the schema
    cannot express): ``lcm_subject_keys(subject)`` (JSON array) and
    ``lcm_subject_anchor(subject)`` (:func:`memory_core.items.supersession.subject_keys`),
    ``lcm_content_terms(text)`` (JSON array, :func:`memory_core.items.writer.content_terms`)."""
    import json

    from memory_core.items.supersession import subject_keys
    from memory_core.items.writer import content_terms

    conn.create_function("lcm_subject_keys", 1,
                         lambda s: json.dumps(sorted(subject_keys(s)[0])), deterministic=True)
    conn.create_function("lcm_subject_anchor", 1, lambda s: subject_keys(s)[1],
                         deterministic=True)
    conn.create_function("lcm_content_terms", 1,
                         lambda s: json.dumps(sorted(content_terms(s))), deterministic=True)
