"""The OpenAPI 3.1 document of the admin API, served at ``/lcm/v1/openapi.json``.

Hand-written so it says what the handlers promise (shapes in ``proxy.handlers.admin``
docstrings), not what a generator guesses. A test checks that every route in
``admin.ROUTES`` has an operation here and that nothing here lacks a route.
"""

from __future__ import annotations

from typing import Any

_ERROR = {"$ref": "#/components/responses/Error"}
_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": True}


def _q(name: str, description: str, schema_type: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": {"type": schema_type}}


def _path(name: str, schema_type: str = "integer") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": schema_type}}


TENANT = _q("tenant", "Only this tenant's data (t_ + 16 hex, from GET /lcm/v1/tenants).")
ROLE = _q("role", "Only this role (persona, the X-LCM-Role header).")
SESSION = _q("session", "Only this X-LCM-Session value.")
LIMIT = _q("limit", "Maximum rows (1-1000).", "integer")
OFFSET = _q("offset", "Rows to skip.", "integer")
THREAD = _q("thread", "Only this thread id.", "integer")


def _op(summary: str, params: list[dict[str, Any]] | None = None, *,
        body: dict[str, Any] | None = None, ok: dict[str, Any] | None = None,
        auth: bool = True, errors: tuple[int, ...] = ()) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "parameters": params or [],
        "responses": {"200": {"description": "OK", "content": {
            "application/json": {"schema": ok or _OBJ}}}},
    }
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": body}}}
    if auth:
        for code in (401, 403, 429, *errors):
            op["responses"][str(code)] = _ERROR
    else:
        op["security"] = []
    return op


def _paths() -> dict[str, Any]:
    pref = [_path("role", "string"), _path("key", "string"), TENANT]
    return {
        "/lcm/v1/openapi.json": {"get": _op("This document.", auth=False)},
        "/lcm/v1/config": {"get": _op(
            "The settings this proxy runs with (secrets shown as ***).", [])},
        "/lcm/v1/status": {"get": _op(
            "Database, schema, soft budget, index lag and the scope's counts and last"
            " injection.", [TENANT, ROLE])},
        "/lcm/v1/tenants": {"get": _op(
            "Tenants seen (salted key hashes) with their roles and counts.", [TENANT])},
        "/lcm/v1/threads": {"get": _op(
            "Threads, most recently updated first.", [TENANT, ROLE, SESSION, LIMIT, OFFSET])},
        "/lcm/v1/threads/{thread_id}": {"get": _op(
            "A thread: its path root to head, branch points and alternatives, forks, task"
            " state and summary forest.", [_path("thread_id"), TENANT, ROLE], errors=(404,))},
        "/lcm/v1/items": {"get": _op(
            "Memory items (all statuses) with supersession chains.",
            [TENANT, ROLE, _q("status", "active | superseded | edited | retracted"),
             _q("kind", "fact | decision | constraint | preference | question | proposal"),
             LIMIT, OFFSET])},
        "/lcm/v1/items/{item_id}": {"get": _op(
            "One memory item: numbers, scope, source message, supersession chains and"
            " revision history.", [_path("item_id"), TENANT, ROLE], errors=(404,))},
        "/lcm/v1/items/{item_id}/retract": {"post": _op(
            "Retract an item: a status change kept in the audit trail; it leaves retrieval"
            " and the indexes.", [_path("item_id"), TENANT, ROLE],
            body={"type": "object", "properties": {"reason": {"type": "string"}}},
            errors=(400, 404))},
        "/lcm/v1/items/{item_id}/restore": {"post": _op(
            "Set a superseded or retracted item active again (undo a wrong supersession"
            " or retraction; the history keeps both). The item that superseded it stays"
            " active. 409 for an active or merged item.", [_path("item_id"), TENANT, ROLE],
            body={"type": "object", "properties": {"reason": {"type": "string"}}},
            errors=(400, 404, 409))},
        "/lcm/v1/items/{item_id}/edit": {"post": _op(
            "Correct an active item's text: a new item (evidence admin) supersedes it,"
            " with subject and value read again from the text; restore the old one to"
            " undo. 409 for an item that is not active.", [_path("item_id"), TENANT, ROLE],
            body={"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string", "maxLength": 2000},
                "reason": {"type": "string"}}},
            errors=(400, 404, 409))},
        "/lcm/v1/messages/{message_id}": {"get": _op(
            "One stored message with its original JSON and the items taken from it.",
            [_path("message_id"), TENANT, ROLE], errors=(404,))},
        "/lcm/v1/messages/{message_id}/redact": {"post": _op(
            "Irreversibly replace one message's content by \"[removed by operator]\" and"
            " keep the conversation: items stated only there are deleted, the copied"
            " spans in replies, summaries, logs, forwarded bodies and Responses chain"
            " rows replaced, index updates queued. Answers the rows changed (ids per"
            " table) and held_elsewhere: other messages stating the same text, left as"
            " they are. Needs confirm: true unless dry_run.",
            [_path("message_id"), TENANT, ROLE, SESSION],
            body={"type": "object", "properties": {
                "confirm": {"type": "boolean"}, "dry_run": {"type": "boolean"}}},
            errors=(400, 404))},
        "/lcm/v1/search": {"get": _op(
            "Search memory items and messages, best first: mode hybrid (default) ranks"
            " as the model's memory_search (BM25 fused with vectors: a paraphrase is"
            " found), then keyword-only matches; mode keyword is the SQLite scan alone."
            " Stored /memory commands and their replies, and hidden memory-tool rounds,"
            " are left out.",
            [{**_q("q", "Query (words or a paraphrase; CJK substrings)."), "required": True},
             {**_q("mode", "hybrid (default) or keyword.")},
             TENANT, ROLE, SESSION, LIMIT], errors=(400,))},
        "/lcm/v1/explain": {"get": _op(
            "The last injection: trigger, budget, token source, sections, included,"
            " truncated and omitted lines with reasons.", [TENANT, ROLE, SESSION, THREAD],
            errors=(404,))},
        "/lcm/v1/purge": {"post": _op(
            "Irreversibly delete a thread (and its forked branches), session, role or"
            " tenant; filters combine with AND (SQLite rows; index deletes are queued)."
            " Needs confirm: true unless dry_run.", [TENANT],
            body={"type": "object", "properties": {
                "thread": {"type": "integer", "minimum": 1},
                "session": {"type": "string"}, "role": {"type": "string"},
                "tenant": {"type": "string"}, "confirm": {"type": "boolean"},
                "dry_run": {"type": "boolean"}}},
            errors=(400,))},
        "/lcm/v1/export": {"get": _op(
            "Threads and messages as JSON (events=1 adds the event log).",
            [TENANT, ROLE, SESSION, THREAD, _q("events", "1 to include events.")])},
        "/lcm/v1/preferences": {"get": _op(
            "User preferences: set ones (a tenant also sees those set for every tenant,"
            " '*') and, under learned, those learned from what users said (memory"
            " items; retract one to remove it).",
            [TENANT, ROLE])},
        "/lcm/v1/preferences/{role}/{key}": {
            "put": _op("Create or replace a user preference (for the tenant filter, else"
                       " '*').", pref,
                       body={"type": "object", "required": ["content"], "properties": {
                           "title": {"type": "string"},
                           "content": {"type": "string", "maxLength": 500},
                           "replace_similar": {"type": "boolean"}}},
                       errors=(400, 409)),
            "delete": _op("Delete a user preference.", pref, errors=(404,)),
        },
    }


def document(version: str) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document (a fresh dict) for API ``version``."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "lcm-proxy admin API",
            "version": version,
            "description": (
                "Operator API of lcm-proxy: see, search, correct and delete what the proxy"
                " remembers. Bearer admin token (proxy.admin_token / LCM_ADMIN_TOKEN); with"
                " no token configured only loopback clients are served. After 10 wrong"
                " tokens from one address in 5 minutes it gets 429 (Retry-After). Every"
                " read takes tenant and role filters."),
        },
        "servers": [{"url": "/"}],
        "security": [{"adminToken": []}],
        "paths": _paths(),
        "components": {
            "securitySchemes": {"adminToken": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {
                "type": "object", "required": ["error"], "properties": {"error": {
                    "type": "object", "properties": {
                        "message": {"type": "string"}, "type": {"type": "string"},
                        "param": {"type": ["string", "null"]},
                        "code": {"type": ["string", "null"]}}}}}},
            "responses": {"Error": {
                "description": "Error in OpenAI's shape",
                "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"}}}}},
        },
    }
