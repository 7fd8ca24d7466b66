"""``/lcm/`` routes: health, Prometheus metrics and the admin API under ``/lcm/v1/``.

The admin API (and the inspector, ``proxy.ui``) lets an operator see, search,
correct and delete what the proxy remembers. Who may call it is decided in
:mod:`proxy.handlers.access` (bearer admin token compared in constant time, or
loopback only when no token is set; JSON-only, same-origin writes).

Every read takes optional ``tenant`` and ``role`` query parameters, applied in SQL:
with ``tenant`` set nothing of another tenant is visible. Tenant ids are salted
key hashes (``t_`` + 16 hex); an operator lists them with ``GET /lcm/v1/tenants``,
and a user learns their own with the in-chat ``/memory status``. The routes are
documented in ``proxy.openapi`` (served at ``/lcm/v1/openapi.json``). Health
(``/lcm/health``, ``/lcm/livez``, ``/lcm/readyz``) and metrics need no token.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from memory_core.errors import InvalidIdError, ItemStateError, NotFoundError
from memory_core.items.writer import GLOBAL_TENANT, ITEM_CHANGES, DuplicateKeyError
from memory_core.tools.refs import parse_id
from proxy import __version__, openapi
from proxy.appkeys import AENGINE, ENGINE, METRICS, SETTINGS
from proxy.body import read_body
from proxy.errors import BadRequestError, ProxyError
from proxy.handlers.access import AdminForbiddenError, require_admin, require_write
from proxy.settings import data_dir_path
from proxy.upstream import shown_url

T = TypeVar("T")
PREFIX = "/lcm/v1"
MAX_LIMIT = 1000


class AdminNotFoundError(ProxyError):
    status, type, code = 404, "not_found_error", "not_found"


class AdminConflictError(ProxyError):
    status, type, code = 409, "conflict_error", "near_duplicate_key"


class AdminStatusError(ProxyError):
    status, type, code = 409, "conflict_error", "item_status"


# -- helpers ----------------------------------------------------------------------------
def _json(value: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, content_type="application/json",
                        body=orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def _param(request: web.Request, name: str) -> str | None:
    value = request.query.get(name, "").strip()
    return value or None


def _int(request: web.Request, name: str, default: int | None = None, *, low: int = 0,
         high: int = 1 << 62) -> int | None:
    raw = request.query.get(name, "").strip()
    if not raw:
        return default
    try:
        return max(low, min(high, int(raw)))
    except ValueError as exc:
        raise BadRequestError(f"{name} must be an integer", code="invalid_parameter",
                              param=name) from exc


def _path_int(request: web.Request, name: str) -> int:
    """The id in the path; one no row can have (not digits, beyond SQLite's range) is 404."""
    try:
        return parse_id(request.match_info[name], what=name)
    except InvalidIdError as exc:
        raise AdminNotFoundError(str(exc)) from exc


async def _body(request: web.Request) -> dict[str, Any]:
    raw = await read_body(request)
    try:
        value = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        raise BadRequestError(f"body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadRequestError("body must be a JSON object")
    return value


async def _run(request: web.Request, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` off the event loop (:meth:`proxy.flow.asyncengine.AsyncEngine.read`)."""
    return await request.app[AENGINE].read(fn, *args)


def _scope(request: web.Request) -> tuple[str | None, str | None]:
    return _param(request, "tenant"), _param(request, "role")


def _in_scope(row: dict[str, Any], tenant: str | None, role: str | None, what: str) -> None:
    if (tenant is not None and row.get("tenant") != tenant) or (
            role is not None and row.get("role") != role):
        raise AdminNotFoundError(f"no {what}")


# -- health and metrics ---------------------------------------------------------------------
async def health(request: web.Request) -> web.Response:
    """``GET /lcm/health`` → 200 ``{status, version, schema_version, upstream}``, plus
    ``data_dir`` for a request the admin API would serve (:func:`require_admin`: the
    token, or loopback without one): the path says where every conversation is kept
    and whose account runs the proxy, and a probe needs no token. A wrong token here
    is throttled on its own count, never the admin API's.

    Answers 503 with ``status: "degraded"`` when the store cannot be read. Kept for
    existing probes; :func:`livez` and :func:`readyz` separate liveness from readiness.
    """
    settings = request.app[SETTINGS]
    engine = request.app[ENGINE]
    status, code = "ok", 200
    try:
        await _run(request, engine.store.read_tx, lambda tx: tx.maintenance.ping())
    except Exception:  # noqa: BLE001 - health reports, never raises
        status, code = "degraded", 503
    body = {
        "status": status,
        "version": __version__,
        "schema_version": engine.store.schema_version,  # the backend's own numbering
        "upstream": shown_url(settings.proxy.upstream),  # no token here: no credentials
    }
    try:  # wrong tokens here count apart: a probe's stray header must not lock out admins
        require_admin(request, bucket="health:")
    except ProxyError:
        pass
    else:
        body["data_dir"] = str(data_dir_path(settings))
    return _json(body, code)


async def livez(request: web.Request) -> web.Response:
    """``GET /lcm/livez`` → 200 ``{"status": "alive"}`` while the event loop answers.

    The liveness probe: it touches neither the store nor the upstream, so a slow
    disk or a down upstream never gets a working process restarted.
    """
    return _json({"status": "alive"})


READY_WRITE_TIMEOUT_SECONDS = 2.0
"""How long ``/lcm/readyz`` waits for an empty job to pass the store's writer queue."""


def _store_writable(engine: Any) -> str:
    """``"ok"``, or why the store cannot take writes (data dir or SQLite database
    file not writable by this process). Runs on an executor thread."""
    paths = [engine.data_dir]
    if getattr(engine.store, "path", None) is not None:  # SQLite's file
        paths.append(engine.store.path)
    for path in paths:
        if not os.access(path, os.W_OK):
            return f"{path.name or path} is not writable"
    return "ok"


async def readyz(request: web.Request) -> web.Response:
    """``GET /lcm/readyz`` → 200 ``{"status": "ready", "checks": {...}}`` or 503
    ``{"status": "not_ready", "checks": {...}}``.

    ``checks``: ``engine`` (the store is open and its read connection answers),
    ``store_writable`` (data dir and database file writable, and an empty job
    passes the writer queue within ``READY_WRITE_TIMEOUT_SECONDS``), ``upstream``
    (an http(s) URL with a host is configured). Each value is ``"ok"`` or a short
    reason; nothing of the stored memory is shown.
    """
    settings = request.app[SETTINGS]
    engine = request.app[ENGINE]
    checks: dict[str, str] = {}
    try:
        await _run(request, engine.store.read_tx, lambda tx: tx.maintenance.ping())
        checks["engine"] = "ok"
    except Exception as exc:  # noqa: BLE001 - a probe reports, never raises
        checks["engine"] = f"store cannot be read: {exc.__class__.__name__}"
    try:
        checks["store_writable"] = await _run(request, _store_writable, engine)
        if checks["store_writable"] == "ok":
            await request.app[AENGINE].write_barrier(READY_WRITE_TIMEOUT_SECONDS)
    except TimeoutError:
        checks["store_writable"] = (
            f"writer queue busy for over {READY_WRITE_TIMEOUT_SECONDS:g} s")
    except Exception as exc:  # noqa: BLE001 - e.g. StoreError after close
        checks["store_writable"] = f"store cannot be written: {exc}"
    upstream = urlsplit(settings.proxy.upstream)
    checks["upstream"] = ("ok" if upstream.scheme in ("http", "https") and upstream.hostname
                          else "proxy.upstream is not an http(s) URL")
    ready = all(v == "ok" for v in checks.values())
    return _json({"status": "ready" if ready else "not_ready", "checks": checks},
                 200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    """``GET /lcm/metrics`` → Prometheus text exposition format 0.0.4 (docs/metrics.md).

    Rendered on a worker thread: the engine's series (messages stored, index lag,
    writer queue) are read from SQLite at scrape time, and left out of a scrape
    when the store cannot be read.
    """
    body = await _run(request, request.app[METRICS].render)
    return web.Response(body=body,
                        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def protect_admin_answers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: every ``/lcm/`` answer (memory, exports, errors,
    probes) gets ``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff``,
    so that no browser or cache in between keeps a copy of what the proxy remembers
    and no stored text is read as another content type. Pass-through answers are the
    upstream's and left alone."""
    if request.path == "/lcm" or request.path.startswith("/lcm/"):
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"


async def observe_memory_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: count what the chat handler announced in its
    ``x-lcm-memory`` / ``x-lcm-injected-items`` / ``x-lcm-injected-tokens`` headers."""
    outcome = response.headers.get("x-lcm-memory")
    if outcome is None:
        return
    m = request.app[METRICS]
    m.memory_outcomes.labels(outcome).inc()
    if outcome == "injected":
        try:
            m.injected_items.inc(int(response.headers.get("x-lcm-injected-items", "0")))
            m.injection_tokens.observe(int(response.headers.get("x-lcm-injected-tokens", "0")))
        except ValueError:
            pass


# -- the admin API ----------------------------------------------------------------------------
async def openapi_document(request: web.Request) -> web.Response:
    """``GET /lcm/v1/openapi.json`` → the OpenAPI 3.1 document of this API (no auth)."""
    return _json(openapi.document(__version__))


async def config(request: web.Request) -> web.Response:
    """``GET /lcm/v1/config`` → ``{config_file, config}``: the settings this proxy
    runs with, as ``lcm-proxy doctor`` prints them (every section and key; secrets
    shown as ``***``, credentials in URLs removed)."""
    require_admin(request)
    settings = request.app[SETTINGS]
    return _json({"config_file": settings.config_file, "config": settings.public_dict()})


async def status(request: web.Request) -> web.Response:
    """``GET /lcm/v1/status`` → database, schema, budget, index lag and the scope's counts."""
    require_admin(request)
    engine = request.app[ENGINE]
    tenant, role = _scope(request)
    info = await _run(request, engine.status)
    scoped = await _run(request, engine.status_for, tenant, role)
    lag = await _run(request, engine.index_lag)
    return _json({"database": info["database"], "schema_version": info["schema_version"],
                  "size_bytes": info["size_bytes"],
                  "soft_budget_tokens": engine.config.soft_budget_tokens,
                  "index": lag, "scope": scoped})


async def tenants(request: web.Request) -> web.Response:
    """``GET /lcm/v1/tenants`` → ``{tenants: [{tenant, roles, threads, messages, …}]}``."""
    require_admin(request)
    tenant, _ = _scope(request)
    rows = await _run(request, request.app[ENGINE].list_tenants)
    return _json({"tenants": [r for r in rows if tenant is None or r["tenant"] == tenant]})


async def threads(request: web.Request) -> web.Response:
    """``GET /lcm/v1/threads`` → ``{total, threads}`` (filters tenant, role, session)."""
    require_admin(request)
    tenant, role = _scope(request)
    out = await _run(request, lambda: request.app[ENGINE].list_threads(
        tenant=tenant, role=role, session=_param(request, "session"),
        limit=_int(request, "limit", 50, low=1, high=MAX_LIMIT),
        offset=_int(request, "offset", 0)))
    return _json(out)


async def thread(request: web.Request) -> web.Response:
    """``GET /lcm/v1/threads/{thread_id}`` → path, branch points, task state, summaries."""
    require_admin(request)
    tenant, role = _scope(request)
    tid = _path_int(request, "thread_id")
    try:
        out = await _run(request, lambda: request.app[ENGINE].thread_detail(tid, tenant=tenant,
                                                                     role=role))
    except NotFoundError as exc:
        raise AdminNotFoundError(str(exc)) from exc
    return _json(out)


async def items(request: web.Request) -> web.Response:
    """``GET /lcm/v1/items`` → ``{total, items, chains}`` (tenant, role, status, kind)."""
    require_admin(request)
    tenant, role = _scope(request)
    out = await _run(request, lambda: request.app[ENGINE].list_items(
        tenant=tenant, role=role, status=_param(request, "status"),
        kind=_param(request, "kind"), limit=_int(request, "limit", 200, low=1, high=MAX_LIMIT),
        offset=_int(request, "offset", 0)))
    return _json(out)


async def _inspect(request: web.Request, kind: str, name: str) -> web.Response:
    require_admin(request)
    tenant, role = _scope(request)
    ident = _path_int(request, name)
    try:
        out = await _run(request, request.app[ENGINE].inspect, f"{kind}:{ident}")
    except NotFoundError as exc:
        raise AdminNotFoundError(str(exc)) from exc
    _in_scope(out, tenant, role, f"{'memory item' if kind == 'item' else 'message'} {ident}")
    return _json(out)


async def item(request: web.Request) -> web.Response:
    """``GET /lcm/v1/items/{item_id}`` → the item with chains, revisions and source."""
    return await _inspect(request, "item", "item_id")


async def message(request: web.Request) -> web.Response:
    """``GET /lcm/v1/messages/{message_id}`` → the message, its original JSON and items."""
    return await _inspect(request, "msg", "message_id")


async def search(request: web.Request) -> web.Response:
    """``GET /lcm/v1/search?q=`` → ``{query, mode, hits}`` best first (tenant, role,
    session, limit, ``mode``: ``hybrid``, the default, ranks as the model's
    ``memory_search`` does, then keyword-only matches; ``keyword`` is the SQLite scan
    alone). Stored ``/memory`` commands and their replies, and hidden memory-tool
    rounds, are left out, as in chat."""
    require_admin(request)
    tenant, role = _scope(request)
    query = request.query.get("q", "").strip()
    if not query:
        raise BadRequestError("q is required", code="invalid_parameter", param="q")
    mode = request.query.get("mode", "hybrid").strip() or "hybrid"
    if mode not in ("hybrid", "keyword"):
        raise BadRequestError(f"mode must be hybrid or keyword, not {mode!r}",
                              code="invalid_parameter", param="mode")
    limit = _int(request, "limit", 20, low=1, high=MAX_LIMIT)
    hits = await _run(request, lambda: request.app[ENGINE].search_memory(
        query, tenant=tenant, role=role, session=_param(request, "session"),
        limit=limit or 20, include_commands=False, mode=mode))
    return _json({"query": query, "mode": mode, "hits": hits})


async def explain(request: web.Request) -> web.Response:
    """``GET /lcm/v1/explain`` → the newest assembly log (tenant, role, session, thread)."""
    require_admin(request)
    tenant, role = _scope(request)
    last = await _run(request, lambda: request.app[ENGINE].last_assembly(
        tenant=tenant, role=role, session=_param(request, "session"),
        thread_id=_int(request, "thread")))
    if last is None:
        raise AdminNotFoundError("no injection recorded yet")
    return _json(last)


async def retract(request: web.Request) -> web.Response:
    """``POST /lcm/v1/items/{item_id}/retract`` ``{reason?}`` → ``{id, old_status}``."""
    return await _item_change(request, "retract")


async def restore(request: web.Request) -> web.Response:
    """``POST /lcm/v1/items/{item_id}/restore`` ``{reason?}`` → ``{id, old_status}``: a
    superseded or retracted item active again; 409 for an active or merged one."""
    return await _item_change(request, "restore")


async def edit(request: web.Request) -> web.Response:
    """``POST /lcm/v1/items/{item_id}/edit`` ``{text, reason?}`` → ``{id, old_status,
    new_id}``: the operator's correction of an active item's text, a new item
    (evidence ``admin``) that supersedes it (``…/restore`` of the old one undoes it);
    400 for a missing, empty, overlong or unchanged text, 409 for an item that is not
    active."""
    require_admin(request)
    require_write(request)
    tenant, role = _scope(request)
    ident = _path_int(request, "item_id")
    body = await _body(request)
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadRequestError("text must be a non-empty string", param="text")
    why = body.get("reason")
    reason = why if isinstance(why, str) else ""
    try:
        out = await _run(request, lambda: request.app[ENGINE].edit_in_scope(
            ident, text, reason, tenant=tenant, role=role))
    except NotFoundError as exc:
        raise AdminNotFoundError(str(exc)) from exc
    except ItemStateError as exc:
        raise AdminStatusError(str(exc)) from exc
    except ValueError as exc:
        raise BadRequestError(str(exc), param="text") from exc
    return _json(out)


async def _item_change(request: web.Request, verb: str) -> web.Response:
    require_admin(request)
    require_write(request)
    tenant, role = _scope(request)
    ident = _path_int(request, "item_id")
    body = await _body(request)
    reason = body.get("reason") if isinstance(body.get("reason"), str) else ""
    try:
        out = await _run(request, lambda: request.app[ENGINE].change_in_scope(
            verb, ident, reason or f"{ITEM_CHANGES[verb]} by operator", tenant=tenant,
            role=role))
    except NotFoundError as exc:
        raise AdminNotFoundError(str(exc)) from exc
    except ItemStateError as exc:
        raise AdminStatusError(str(exc)) from exc
    return _json(out)


async def purge(request: web.Request) -> web.Response:
    """``POST /lcm/v1/purge`` ``{thread?, session?, role?, tenant?, confirm: true}`` →
    counts.

    Irreversible; filters combine with AND. ``thread`` is a thread id (an integer, as
    search, export and inspect show it): that conversation and its forked branches.
    The ``tenant`` and ``role`` query parameters, when set, bound the purge to that
    tenant and role, as on every other route (a body value must then match).
    ``"dry_run": true`` only counts. ``copies`` lists the rows of other threads
    holding a copy of the purged text (``{table: [ids]}``) and ``held_elsewhere``
    other users' messages stating it; ``"scrub_copies": true`` replaces each copied
    span by the placeholder (statements are never changed).
    """
    require_admin(request)
    require_write(request)
    q_tenant, q_role = _scope(request)
    body = await _body(request)
    filters: dict[str, str | None] = {}
    for name in ("tenant", "role", "session"):
        value = body.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise BadRequestError(f"{name} must be a non-empty string", param=name)
        filters[name] = value
    thread = body.get("thread")
    if thread is not None and (isinstance(thread, bool) or not isinstance(thread, int)
                               or thread < 1):
        raise BadRequestError("thread must be a positive integer thread id", param="thread")
    for name, bound in (("tenant", q_tenant), ("role", q_role)):
        if bound is not None:
            if filters[name] not in (None, bound):
                raise AdminForbiddenError(f"{name} in the body differs from the {name} filter")
            filters[name] = bound
    if not any(filters.values()) and thread is None:
        raise BadRequestError("purge needs thread, session, role or tenant",
                              code="missing_filter")
    dry_run = body.get("dry_run") is True
    if body.get("confirm") is not True and not dry_run:
        raise BadRequestError('purge is irreversible: send {"confirm": true}',
                              code="confirmation_required", param="confirm")
    scrub_copies = body.get("scrub_copies") is True
    counts = await _run(request, lambda: request.app[ENGINE].purge(
        dry_run=dry_run, thread_id=thread, scrub_copies=scrub_copies, **filters))
    copies, elsewhere = counts.pop("copies", {}), counts.pop("held_elsewhere", [])
    shown: dict[str, str | int] = {k: v for k, v in filters.items() if v is not None}
    if thread is not None:
        shown["thread"] = thread
    return _json({"filters": shown, "dry_run": dry_run, "removed": counts,
                  "scrub_copies": scrub_copies, "copies": copies,
                  "held_elsewhere": elsewhere})


async def redact(request: web.Request) -> web.Response:
    """``POST /lcm/v1/messages/{message_id}/redact`` ``{confirm: true}`` → ``{message_id,
    dry_run, changed, rows, held_elsewhere}``: irreversibly replace one message's
    content by a placeholder and keep the conversation (:mod:`memory_core.admin.redact`).
    ``changed``: rows per table; ``rows``: their ids per table; ``held_elsewhere``:
    the other messages that state the same text, left as they are (redact them too
    if they must go). The ``tenant``, ``role`` and ``session`` query parameters bound
    it: a message outside them is 404, as one that does not exist. ``"dry_run":
    true`` only reports."""
    require_admin(request)
    require_write(request)
    tenant, role = _scope(request)
    ident = _path_int(request, "message_id")
    body = await _body(request)
    dry_run = body.get("dry_run") is True
    if body.get("confirm") is not True and not dry_run:
        raise BadRequestError('redact is irreversible: send {"confirm": true}',
                              code="confirmation_required", param="confirm")
    try:
        counts = await _run(request, lambda: request.app[ENGINE].redact(
            ident, tenant=tenant, role=role, session=_param(request, "session"),
            dry_run=dry_run))
    except ValueError as exc:  # not a positive id: no message has it
        raise AdminNotFoundError(str(exc)) from exc
    if counts is None:
        raise AdminNotFoundError(f"message {ident} not found")
    rows, elsewhere = counts.pop("rows", {}), counts.pop("held_elsewhere", [])
    return _json({"message_id": ident, "dry_run": dry_run, "changed": counts,
                  "rows": rows, "held_elsewhere": elsewhere})


async def export(request: web.Request) -> web.Response:
    """``GET /lcm/v1/export`` → threads with messages (``events=1`` adds events)."""
    require_admin(request)
    tenant, role = _scope(request)
    events = request.query.get("events", "").lower() in ("1", "true", "yes")
    out = await _run(request, lambda: request.app[ENGINE].export(
        tenant=tenant, role=role, session=_param(request, "session"),
        thread_id=_int(request, "thread"), events=events))
    return _json(out)


async def preferences(request: web.Request) -> web.Response:
    """``GET /lcm/v1/preferences`` → ``{preferences, learned}``: the set ones (a tenant
    also sees ``*`` ones) and those learned from what users said (active memory items
    of kind ``preference``, newest first; ``POST /lcm/v1/items/{id}/retract`` removes
    one). Both are shown in the memory block."""
    require_admin(request)
    tenant, role = _scope(request)
    engine = request.app[ENGINE]

    def read() -> dict[str, Any]:
        return {"preferences": engine.list_agent_memories(
                    category="user_preferences", role=role, tenant=tenant),
                "learned": engine.learned_preferences(tenant=tenant, role=role)}

    return _json(await _run(request, read))


async def preference_put(request: web.Request) -> web.Response:
    """``PUT /lcm/v1/preferences/{role}/{key}`` ``{title, content, replace_similar?}``.

    Written for the ``tenant`` filter, else for every tenant (``*``). 200 with
    ``{id, key, created, routed_from, reason}``; 409 for a near-duplicate key
    unless ``replace_similar``; 400 for content over 500 characters.
    """
    require_admin(request)
    require_write(request)
    tenant = _param(request, "tenant") or GLOBAL_TENANT
    role, key = request.match_info["role"], request.match_info["key"]
    body = await _body(request)
    title, content = body.get("title"), body.get("content")
    if not isinstance(content, str) or not isinstance(title or "", str):
        raise BadRequestError("content (string) is required; title is a string",
                              param="content")
    try:
        out = await _run(request, lambda: request.app[ENGINE].set_agent_memory(
            tenant=tenant, role=role, category="user_preferences", key=key,
            title=title or key, content=content,
            on_duplicate="route" if body.get("replace_similar") is True else "refuse"))
    except DuplicateKeyError as exc:
        raise AdminConflictError(str(exc)) from exc
    except ValueError as exc:
        raise BadRequestError(str(exc), code="invalid_preference") from exc
    return _json({"id": out.id, "key": out.key, "created": out.created, "tenant": tenant,
                  "role": role, "routed_from": out.routed_from, "reason": out.reason})


async def preference_delete(request: web.Request) -> web.Response:
    """``DELETE /lcm/v1/preferences/{role}/{key}`` → ``{deleted: true}`` or 404."""
    require_admin(request)
    require_write(request)
    tenant = _param(request, "tenant") or GLOBAL_TENANT
    role, key = request.match_info["role"], request.match_info["key"]
    try:
        ok = await _run(request, lambda: request.app[ENGINE].delete_agent_memory(
            tenant=tenant, role=role, category="user_preferences", key=key))
    except ValueError as exc:
        raise BadRequestError(str(exc)) from exc
    if not ok:
        raise AdminNotFoundError(f"no preference '{key}' for role {role}")
    return _json({"deleted": True, "tenant": tenant, "role": role, "key": key})


ROUTES: list[tuple[str, str, Callable[[web.Request], Any]]] = [
    ("GET", f"{PREFIX}/openapi.json", openapi_document),
    ("GET", f"{PREFIX}/status", status),
    ("GET", f"{PREFIX}/config", config),
    ("GET", f"{PREFIX}/tenants", tenants),
    ("GET", f"{PREFIX}/threads", threads),
    ("GET", f"{PREFIX}/threads/{{thread_id}}", thread),
    ("GET", f"{PREFIX}/items", items),
    ("GET", f"{PREFIX}/items/{{item_id}}", item),
    ("POST", f"{PREFIX}/items/{{item_id}}/retract", retract),
    ("POST", f"{PREFIX}/items/{{item_id}}/restore", restore),
    ("POST", f"{PREFIX}/items/{{item_id}}/edit", edit),
    ("GET", f"{PREFIX}/messages/{{message_id}}", message),
    ("POST", f"{PREFIX}/messages/{{message_id}}/redact", redact),
    ("GET", f"{PREFIX}/search", search),
    ("GET", f"{PREFIX}/explain", explain),
    ("POST", f"{PREFIX}/purge", purge),
    ("GET", f"{PREFIX}/export", export),
    ("GET", f"{PREFIX}/preferences", preferences),
    ("PUT", f"{PREFIX}/preferences/{{role}}/{{key}}", preference_put),
    ("DELETE", f"{PREFIX}/preferences/{{role}}/{{key}}", preference_delete),
]
"""Every admin API route: (method, path, handler). ``proxy.routes`` adds them all and
``proxy.openapi`` must document each one (tested)."""
