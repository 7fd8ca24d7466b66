"""Inspector pages: threads, one thread (messages, branches, forest, last injection),
the request log and what each upstream received, memory items (paged, filtered) with
their supersession chains, the preferences memory blocks show (set and learned),
and search; retracting an item and restoring a superseded
or retracted one, which need the page's CSRF token (see :func:`retract`). Signing in
and out: :mod:`proxy.ui.signin`.

Each page takes the ``tenant`` (and ``role``) query filter like the admin API and
reads through the same scoped engine methods, so the inspector shows exactly what
the API would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from aiohttp import web

from memory_core.errors import ItemStateError, NotFoundError
from memory_core.items.writer import ITEM_CHANGES, RESTORABLE
from memory_core.tools.refs import parse_id
from proxy.appkeys import AENGINE, ENGINE, SETTINGS
from proxy.body import read_form
from proxy.handlers.access import host_is_loopback
from proxy.ui.html import (
    SECURITY_HEADERS,
    budget_bar,
    clip,
    e,
    explain_table,
    forest,
    link,
    pager,
    section_table,
    status_badge,
    table,
    url,
    when,
)
from proxy.ui.signin import csrf_refusal, csrf_token, guard, login, logout, respond

T = TypeVar("T")


async def _run(request: web.Request, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` off the event loop (:meth:`proxy.flow.asyncengine.AsyncEngine.read`)."""
    return await request.app[AENGINE].read(fn, *args)


def _query_int(request: web.Request, name: str, default: int, high: int) -> int:
    try:
        return max(0, min(high, int(request.query.get(name, "") or default)))
    except ValueError:
        return default


def _filters(request: web.Request) -> tuple[str | None, str | None]:
    tenant = request.query.get("tenant", "").strip() or None
    role = request.query.get("role", "").strip() or None
    return tenant, role


async def index(request: web.Request) -> web.Response:
    """``GET /lcm/ui`` → tenants (unfiltered) and the threads list."""
    if (denied := guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    out = []
    if tenant is None:
        tenants = await _run(request, engine.list_tenants)
        out.append("<h2>Tenants</h2>" + table(
            ("tenant", "roles", "threads", "messages", "last activity"),
            ((link(url("/lcm/ui", tenant=t["tenant"]), t["tenant"]), e(", ".join(t["roles"])),
              e(t["threads"]), e(t["messages"]), e(when(t["last_activity"]))) for t in tenants),
            "no tenants yet"))
    data = await _run(request, lambda: engine.list_threads(tenant=tenant, role=role, limit=200))
    rows = []
    for t in data["threads"]:
        parent = t["parent_thread_id"]
        fork = (f"fork of {link(url(f'/lcm/ui/threads/{parent}', tenant=tenant), parent)}"
                f" at msg {e(t['fork_message_id'])}" if parent else "")
        tid = t["id"]
        rows.append((link(url(f"/lcm/ui/threads/{tid}", tenant=tenant), f"#{tid}"),
                     (status_badge("command") + " " if t["command"] else "") + e(t["title"]),
                     e(t["role"]), e(t["session"] or "-"),
                     e(t["path_length"]), fork, e(when(t["updated_at"])),
                     e(t["tenant"])))
    out.append(f"<h2>Threads ({e(data['total'])})</h2>" + table(
        ("thread", "first user message", "role", "session", "messages", "branch", "updated",
         "tenant"), rows, "no threads"))
    return respond(request, "Threads", "".join(out), tenant=tenant)


def _message_html(m: dict[str, Any], tenant: str | None) -> str:
    role = m["msg_role"] or "?"
    cls = f"msg {e(role)}{' hidden' if m['hidden'] else ''}"
    meta = (f"msg {e(m['id'])} · {e(role)} · {e(m['kind'])} · {e(m['tokens'])} tokens ·"
            f" {e(when(m['created_at']))}")
    if m["summary_node_id"]:
        meta += f" · in summary #{e(m['summary_node_id'])}"
    if m["hidden"]:
        meta += " · hidden tool round"
    branch = ""
    if m["children"] > 1 or m["forks"]:
        alts = ", ".join(
            link(url(f"/lcm/ui/threads/{a['thread_id']}", tenant=tenant),
                 f"thread #{a['thread_id']}") + f" (msg {e(a['id'])}: {e(a['text'])})"
            for a in m["alternatives"])
        forks = ", ".join(link(url(f"/lcm/ui/threads/{f}", tenant=tenant), f"#{f}")
                          for f in m["forks"])
        branch = (f'<div class="branch">branch point: {e(m["children"])} continuations'
                  f"{'; other branches: ' + alts if alts else ''}"
                  f"{'; forked threads: ' + forks if forks else ''}</div>")
    return (f'<div class="{cls}" id="m{e(m["id"])}"><div class="meta">{meta}</div>'
            f"<pre>{e(clip(m['text'], 4000))}</pre>{branch}</div>")


async def thread_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/threads/{thread_id}``: messages, forest, last injection, task state."""
    if (denied := guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    try:
        tid = parse_id(request.match_info["thread_id"])
        detail = await _run(request, lambda: engine.thread_detail(tid, tenant=tenant, role=role))
    except (ValueError, NotFoundError):
        return respond(request, "Not found", "<p>no such thread</p>", tenant=tenant, status=404)
    t = detail["thread"]
    head = table(("tenant", "role", "session", "parent thread", "fork at", "created",
                  "updated"), [(e(t["tenant"]), e(t["role"]), e(t["session"] or "-"),
                                e(t["parent_thread_id"] or "-"), e(t["fork_message_id"] or "-"),
                                e(when(t["created_at"])), e(when(t["updated_at"])))])
    last = await _run(request, lambda: engine.last_assembly(tenant=t["tenant"], role=t["role"],
                                                   thread_id=tid))
    if last is None:
        inj = '<p class="muted">no injection recorded for this thread</p>'
    else:
        data = last["data"]
        skipped = f"<p>skipped: {e(data['skipped'])}</p>" if data.get("skipped") else ""
        sections = section_table(data.get("sections", []), last["used_tokens"])
        bar = budget_bar(last["used_tokens"], last["budget_tokens"])
        rid = last["request_id"]
        seen = link(url(f"/lcm/ui/requests/{rid}", tenant=tenant), f"request {rid}")
        inj = (f"<p>{seen} (what the upstream received) · {e(when(last['created_at']))} ·"
               f" trigger <b>{e(last['trigger'])}</b> · counted with"
               f" {e(last['token_source'])}</p>{bar}"
               f"{skipped}{sections}<h3>Explain</h3>{explain_table(data, tenant)}")
    task = table(("label", "status", "text", "source"), (
        (e(r["label"]), status_badge(r["status"]), e(r["text"]),
         e(r["source_message_id"] or "-")) for r in detail["task_state"]), "no task state")
    bp = ", ".join(f'<a href="#m{e(i)}">msg {e(i)}</a>' for i in detail["branch_points"])
    body = (f"{head}<h2>Last injection</h2>{inj}"
            f'<h2>Summary forest</h2><div id="forest">{forest(detail["summaries"])}</div>'
            f"<h2>Task state</h2>{task}"
            f"<h2>Messages ({len(detail['messages'])}, root → head)</h2>"
            f"<p>branch points: {bp or 'none'}</p>"
            + "".join(_message_html(m, tenant) for m in detail["messages"]))
    return respond(request, f"Thread #{tid}", body, tenant=tenant)


_ITEM_FILTERS = ("status", "kind", "role", "thread", "text")


async def items_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/items``: supersession chains of the scope, then its items, paged
    (``offset``, ``limit`` ≤ 500) and filtered (``kind``, ``status``, ``role``,
    ``thread``, ``text``), each active one with a retract form, each superseded or
    retracted one with a restore form."""
    if (denied := guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    q = {k: request.query.get(k, "").strip() or None for k in _ITEM_FILTERS}
    thread: int | None = None
    if q["thread"]:
        try:
            thread = parse_id(q["thread"], what="thread")
        except ValueError:
            return respond(request, "Memory items", "<p>thread must be a thread id</p>",
                           tenant=tenant, status=400)
    limit = _query_int(request, "limit", 100, 500) or 100
    offset = _query_int(request, "offset", 0, 1 << 40)
    data = await _run(request, lambda: engine.list_items(
        tenant=tenant, role=role, status=q["status"], kind=q["kind"], thread_id=thread,
        text=q["text"], limit=limit, offset=offset))
    fixes = await _run(request, lambda: engine.corrections(tenant=tenant, role=role, limit=50))
    token = csrf_token(request)
    chains = []
    for chain in fixes["chains"]:
        steps = [link(url(f"/lcm/ui/items/{c['id']}", tenant=tenant), f"item:{c['id']}")
                 + f" {status_badge(c['status'])} {e(clip(c['text'], 160))}" for c in chain]
        chains.append(f'<div class="chain">{"<span class=arrow>→</span>".join(steps)}</div>')
    more = (f'<p class="muted">the {len(fixes["chains"])} most recent of'
            f" {e(fixes['total'])} superseded items</p>" if fixes["total"] > 50 else "")
    rows = []
    for i in data["items"]:
        action = _action_form(i["id"], i["status"], token, tenant)
        src = i["source_message_id"]
        rows.append((
            link(url(f"/lcm/ui/items/{i['id']}", tenant=tenant), f"item:{i['id']}"),
            e(i["kind"]), status_badge(i["status"]), e(i["text"]),
            e(f"{i['value']:g} {i['unit'] or ''}" if i["value"] is not None else ""),
            e(i["condition"] or ""), e(i["supersedes"] or ""), e(i["superseded_by"] or ""),
            link(url(f"/lcm/ui/messages/{src}", tenant=tenant), f"msg {src}") if src else "",
            e(i["role"]), e(i["tenant"]), action))
    keep = {k: v for k, v in q.items() if v}
    notice = "".join(f'<p class="notice">{done} item:{e(request.query[done])}</p>'
                     for done in ("retracted", "restored") if request.query.get(done))
    shown = len(data["items"])
    paging = pager("/lcm/ui/items", data["total"], offset, limit, shown, tenant=tenant, **keep)
    body = (f"{notice}<h2>Corrections: supersession chains (oldest → newest)</h2>{more}"
            f"{''.join(chains) or '<p class=muted>no corrections yet</p>'}"
            f"<h2>Items ({e(data['total'])})</h2>{_item_filters(tenant, q)}{paging}"
            + table(("id", "kind", "status", "text", "number", "condition", "supersedes",
                     "superseded by", "source msg", "role", "tenant", ""), rows, "no items")
            + paging)
    return respond(request, "Memory items", body, tenant=tenant)


async def preferences_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/preferences``: what ``[User Preferences]`` of the scope's memory
    blocks draws on, as ``GET /lcm/v1/preferences`` lists it: the set ones (key,
    content, who set them: a tenant's own or ``*`` for every tenant) and those
    learned from what users said (memory items, each with its source message and a
    retract form: a retracted one is no longer shown)."""
    if (denied := guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)

    def read() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return (engine.list_agent_memories(category="user_preferences", role=role,
                                           tenant=tenant),
                engine.learned_preferences(tenant=tenant, role=role))

    set_rows, learned = await _run(request, read)
    token = csrf_token(request)
    set_html = table(("key", "title", "content", "role", "set for", "updated"), (
        (e(r["key"]), e(r["title"]), e(r["content"]), e(r["role"]),
         e("every tenant (*)" if r["tenant"] == "*" else f"tenant {r['tenant']}"),
         e(when(r["updated_at"]))) for r in set_rows), "none set")
    learned_rows = []
    for i in learned:
        src = i["source_message_id"]
        learned_rows.append((
            link(url(f"/lcm/ui/items/{i['id']}", tenant=tenant), f"item:{i['id']}"),
            e(i["text"]),
            link(url(f"/lcm/ui/messages/{src}", tenant=tenant), f"msg {src}") if src else "",
            e(i["role"]), e(i["tenant"]), e(when(i["created_at"])),
            _action_form(i["id"], i["status"], token, tenant)))
    body = (f"<h2>Set preferences ({len(set_rows)})</h2>"
            '<p class="muted">written by a user (<code>/memory prefs set</code>) or an'
            " operator (<code>lcm-proxy memory prefs set</code>, the admin API)</p>"
            + set_html
            + f"<h2>Learned from what users said ({len(learned)})</h2>"
            '<p class="muted">preferences stated in conversation; retract one to stop'
            " showing it (kept for audit)</p>"
            + table(("item", "text", "learned from", "role", "tenant", "said", ""),
                    learned_rows, "none learned"))
    return respond(request, "Preferences", body, tenant=tenant)


def _item_filters(tenant: str | None, q: dict[str, str | None]) -> str:
    def select(name: str, options: tuple[str, ...]) -> str:
        opts = "".join(f'<option value="{e(o)}"{" selected" if q[name] == o else ""}>'
                       f"{e(o or 'any')}</option>" for o in ("", *options))
        return f'<label>{name}<select name="{name}">{opts}</select></label>'

    def text(name: str, width: int = 120) -> str:
        return (f'<label>{name}<input type="text" name="{name}" value="{e(q[name] or "")}"'
                f' style="width:{width}px"></label>')

    return ('<form class="filters" method="get" action="/lcm/ui/items">'
            f'<input type="hidden" name="tenant" value="{e(tenant or "")}">'
            + select("kind", ("fact", "decision", "constraint", "preference", "question",
                              "proposal"))
            + select("status", ("active", "superseded", "edited", "retracted"))
            + text("role", 90) + text("thread", 60) + text("text", 200)
            + ' <button type="submit">Filter</button></form>')


def _action_form(item_id: int, status: str, token: str, tenant: str | None) -> str:
    """The change an item's status allows: retract an active item, restore a superseded
    or retracted one (:data:`memory_core.items.writer.RESTORABLE`); else nothing."""
    if status == "active":
        verb = "retract"
    elif status in RESTORABLE:
        verb = "restore"
    else:
        return ""
    return (f'<form class="inline {verb}" method="post"'
            f' action="{e(url(f"/lcm/ui/items/{item_id}/{verb}", tenant=tenant))}">'
            f'<input type="hidden" name="csrf" value="{e(token)}">'
            '<input type="text" name="reason" placeholder="reason" aria-label="reason">'
            f' <button type="submit">{verb.capitalize()}</button></form>')


async def item_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/items/{item_id}``: one item, its chain, revisions and source."""
    if (denied := guard(request)) is not None:
        return denied
    return await _inspect_page(request, "item", request.match_info["item_id"])


async def message_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/messages/{message_id}``: one message with its thread and items."""
    if (denied := guard(request)) is not None:
        return denied
    return await _inspect_page(request, "msg", request.match_info["message_id"])


async def _inspect_page(request: web.Request, kind: str, raw_id: str) -> web.Response:
    tenant, role = _filters(request)
    what = "Memory item" if kind == "item" else "Message"
    try:
        ident = parse_id(raw_id)
        info = await _run(request, request.app[ENGINE].inspect, f"{kind}:{ident}")
    except (ValueError, NotFoundError):
        info = None
    if info is None or (tenant is not None and info.get("tenant") != tenant) or (
            role is not None and info.get("role") != role):
        return respond(request, "Not found", f"<p>no such {what.lower()}</p>",
                       tenant=tenant, status=404)
    thread = info.get("thread_id")
    head = []
    if thread:
        anchor = f"#m{ident}" if kind == "msg" else ""
        head.append(link(url(f"/lcm/ui/threads/{thread}", tenant=tenant) + anchor,
                         f"thread #{thread}"))
    src = info.get("source_message_id")
    if src:
        head.append(link(url(f"/lcm/ui/messages/{src}", tenant=tenant), f"source msg {src}"))
    action = ""
    if kind == "item":
        form = _action_form(ident, str(info.get("status")), csrf_token(request), tenant)
        if form:
            verb = "Retract" if info.get("status") == "active" else "Restore"
            action = f"<h2>{verb}</h2>{form}"
    fields = table(("field", "value"), ((e(k), f"<pre>{e(clip(_shown(k, v), 4000))}</pre>")
                                        for k, v in info.items()
                                        if k not in ("message", "raw_json")))
    body = f"<p>{' · '.join(head)}</p>{action}{fields}"
    return respond(request, f"{what} {kind}:{ident}", body, tenant=tenant)


def _shown(key: str, value: Any) -> str:
    if key.endswith("_at") and isinstance(value, int | float):
        return when(value)
    if isinstance(value, dict | list):
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    return "-" if value is None else str(value)


async def retract(request: web.Request) -> web.StreamResponse:
    """``POST /lcm/ui/items/{item_id}/retract`` (form ``csrf``, ``reason``) → 303 back
    to the items page.

    Needs the admin token (bearer or the session cookie), an ``Origin`` naming this
    host when the browser sends one (and a loopback ``Host`` without a token), and
    the form's ``csrf`` equal to the ``lcm_csrf`` cookie (SameSite=Strict), compared
    in constant time; otherwise 403 and nothing changes. 404 for an item outside
    the ``tenant``/``role`` filter.
    """
    return await _change(request, "retract")


async def restore(request: web.Request) -> web.StreamResponse:
    """``POST /lcm/ui/items/{item_id}/restore`` (form ``csrf``, ``reason``): a superseded
    or retracted item active again, then 303 back to the items page; 409 for an item
    that is active or merged. The same checks as :func:`retract`."""
    return await _change(request, "restore")


async def _change(request: web.Request, verb: str) -> web.StreamResponse:
    if (denied := guard(request)) is not None:
        return denied
    tenant, role = _filters(request)
    form = await read_form(request)
    if (why := csrf_refusal(request, form)) is not None:
        return _forbidden(request, tenant, why)
    if not request.app[SETTINGS].proxy.admin_token and not host_is_loopback(request.host):
        return _forbidden(request, tenant, "no admin token is configured")
    try:
        ident = parse_id(request.match_info["item_id"])
        reason = (str(form.get("reason", "")).strip()[:500]
                  or f"{ITEM_CHANGES[verb]} in the inspector")
        await _run(request, lambda: request.app[ENGINE].change_in_scope(
            verb, ident, reason, tenant=tenant, role=role))
    except (ValueError, NotFoundError):
        return respond(request, "Not found", "<p>no such memory item</p>", tenant=tenant,
                       status=404)
    except ItemStateError as exc:
        return respond(request, "Not changed", f"<p>{e(str(exc))}</p>", tenant=tenant,
                       status=409)
    back = url("/lcm/ui/items", tenant=tenant, **{ITEM_CHANGES[verb]: ident})
    return web.Response(status=303, headers={"Location": back, **SECURITY_HEADERS})


def _forbidden(request: web.Request, tenant: str | None, why: str) -> web.Response:
    return respond(request, "Refused", f"<p>{e(why)}</p>", tenant=tenant, status=403)


SEARCH_MODES = ("hybrid", "keyword", "bm25", "vector")
"""``hybrid`` (the default): the model's ``memory_search`` ranking (BM25 fused with
vectors) in one tenant and role, or in every scope the filters allow followed by
keyword-only matches (``Engine.search_memory``); ``keyword``: SQLite scan, query
terms found (any scope); ``bm25``/``vector``: one index of one tenant and role."""


async def search_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/search?q=&mode=``: hits with their score and links to the item,
    message, or thread; the mode that ran is stated (see :data:`SEARCH_MODES`)."""
    if (denied := guard(request)) is not None:
        return denied
    tenant, role = _filters(request)
    query = request.query.get("q", "").strip()
    mode = request.query.get("mode", "").strip() or "hybrid"
    if mode not in SEARCH_MODES:
        return respond(request, "Search", f"<p>unknown mode {e(mode)}; use one of"
                       f" {e(', '.join(SEARCH_MODES))}</p>", tenant=tenant, status=400)
    form = _search_form(tenant, role, query, mode)
    body = form + '<p class="muted">type a query</p>'
    across = mode == "hybrid" and (tenant is None or role is None)
    if query and (mode == "keyword" or across):
        hits = await _run(request, lambda: request.app[ENGINE].search_memory(
            query, tenant=tenant, role=role, limit=100, include_commands=False, mode=mode))
        rows = [{"kind": "message", "id": h["id"], "score": h["score"], "status": None,
                 "text": h["text"], "message_id": h["id"], "thread_id": None,
                 "label": f"message ({h.get('status')})", "scope": _scope_of(h)}
                if h["kind"] == "message" else
                {"kind": "item", "id": h["id"], "score": h["score"], "status": h.get("status"),
                 "text": h["text"], "message_id": h.get("source_message_id"),
                 "thread_id": None, "label": f"item ({h['kind']})", "scope": _scope_of(h)}
                for h in hits]
        unit = ("fused rank score plus boosts in each tenant and role, then keyword-only"
                " matches (query terms found)" if across else
                "query terms found (+2 for the exact phrase)")
        body = form + _hits_table(rows, query, mode, unit, tenant)
    elif query:
        if tenant is None or role is None:
            body = form + ('<p class="notice">the bm25 and vector searches run within one'
                           " tenant and role: choose both (hybrid and keyword search work"
                           " on any scope)</p>")
        else:
            try:
                rows = await _run(request, lambda: request.app[ENGINE].search_indexed(
                    query, tenant=tenant, role=role, mode=mode, limit=100))
            except ValueError as exc:
                return respond(request, "Search", form + f"<p>{e(exc)}</p>", tenant=tenant,
                               status=400)
            unit = {"bm25": "BM25", "vector": "cosine similarity",
                    "hybrid": "fused rank score plus boosts"}[mode]
            body = form + _hits_table(rows, query, mode, unit, tenant)
    return respond(request, "Search", body, tenant=tenant)


def _scope_of(hit: dict[str, Any]) -> str:
    """``tenant · role · session`` of a hit found across scopes (whose hit it is)."""
    return " · ".join(str(hit[k]) for k in ("tenant", "role", "session") if hit.get(k))


def _search_form(tenant: str | None, role: str | None, query: str, mode: str) -> str:
    opts = "".join(f'<option value="{m}"{" selected" if m == mode else ""}>{m}</option>'
                   for m in SEARCH_MODES)
    return ('<form class="filters" method="get" action="/lcm/ui/search">'
            f'<input type="hidden" name="tenant" value="{e(tenant or "")}">'
            f'<label>query<input type="text" name="q" value="{e(query)}" style="width:260px">'
            f'</label><label>role<input type="text" name="role" value="{e(role or "")}"'
            f' style="width:90px"></label><label>mode<select name="mode">{opts}</select>'
            '</label> <button type="submit">Search</button></form>')


def _hits_table(rows: list[dict[str, Any]], query: str, mode: str, unit: str,
                tenant: str | None) -> str:
    """The hits as a table; a ``scope`` column first when they were found across
    tenants or roles (the operator must see whose each hit is)."""
    across = any("scope" in h for h in rows)
    out: list[tuple[str, ...]] = []
    for h in rows:
        if h["kind"] == "message":
            ref = link(url(f"/lcm/ui/messages/{h['id']}", tenant=tenant), f"msg:{h['id']}")
        elif h["kind"] == "item":
            ref = link(url(f"/lcm/ui/items/{h['id']}", tenant=tenant), f"item:{h['id']}")
        else:
            ref = e(f"{h['kind']}:{h['id']}")
        where = []
        if h.get("message_id") and h["kind"] != "message":
            where.append(link(url(f"/lcm/ui/messages/{h['message_id']}", tenant=tenant),
                              f"source msg {h['message_id']}"))
        if h.get("thread_id"):
            where.append(link(url(f"/lcm/ui/threads/{h['thread_id']}", tenant=tenant),
                              f"thread #{h['thread_id']}"))
        score = h["score"]
        cells = (ref, e(h["label"]), e(f"{score:.4g}" if isinstance(score, float) else score),
                 status_badge(h["status"]) if h.get("status") else "",
                 " · ".join(where), e(clip(h["text"], 600)))
        out.append((e(h.get("scope", "")), *cells) if across else cells)
    head = ("ref", "kind", "score", "status", "links", "text")
    return (f'<p class="searchinfo">{len(rows)} results for <b>{e(query)}</b> · mode'
            f" <b class=mode>{e(mode)}</b> · score: {e(unit)}</p>"
            + table(("tenant · role · session", *head) if across else head, out,
                    "no matches"))


ROUTES: list[tuple[str, str, Callable[[web.Request], Any]]] = [
    ("GET", "/lcm/ui", index),
    ("GET", "/lcm/ui/threads/{thread_id}", thread_page),
    ("GET", "/lcm/ui/items", items_page),
    ("GET", "/lcm/ui/items/{item_id}", item_page),
    ("GET", "/lcm/ui/preferences", preferences_page),
    ("POST", "/lcm/ui/items/{item_id}/retract", retract),
    ("POST", "/lcm/ui/items/{item_id}/restore", restore),
    ("GET", "/lcm/ui/messages/{message_id}", message_page),
    ("GET", "/lcm/ui/search", search_page),
    ("POST", "/lcm/ui/login", login),
    ("POST", "/lcm/ui/logout", logout),
]
