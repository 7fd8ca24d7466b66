"""Inspector pages: threads, one thread (messages, branches, forest, last injection),
memory items with supersession chains, and search. Read-only; the sign-in form is
the only POST and it only sets the session cookie.

Each page takes the ``tenant`` (and ``role``) query filter like the admin API and
reads through the same scoped engine methods, so the inspector shows exactly what
the API would.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web

from memory_core.errors import NotFoundError
from memory_core.ref import parse_id
from proxy.errors import UnauthorizedError
from proxy.handlers.access import UI_COOKIE, require_admin, ui_session_value
from proxy.keys import ENGINE, SETTINGS
from proxy.ui.html import (
    SECURITY_HEADERS,
    budget_bar,
    clip,
    e,
    explain_table,
    forest,
    link,
    page,
    status_badge,
    table,
    url,
    when,
)

T = TypeVar("T")


async def _run(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(status=status, text=body, content_type="text/html",
                        charset="utf-8", headers=SECURITY_HEADERS)


def _login_page(message: str = "") -> web.Response:
    note = f'<p class="muted">{e(message)}</p>' if message else ""
    form = ('<form method="post" action="/lcm/ui/login"><label>Admin token '
            '<input type="password" name="token" autocomplete="current-password"></label>'
            ' <button type="submit">Sign in</button></form>')
    return _html(page("Sign in", note + form), 401)


def _guard(request: web.Request) -> web.Response | None:
    """The login page when the token is set and missing; raises 403 off loopback."""
    try:
        require_admin(request, cookie_ok=True)
    except UnauthorizedError as exc:
        return _login_page(exc.message)
    return None


def _filters(request: web.Request) -> tuple[str | None, str | None]:
    tenant = request.query.get("tenant", "").strip() or None
    role = request.query.get("role", "").strip() or None
    return tenant, role


async def login(request: web.Request) -> web.StreamResponse:
    """``POST /lcm/ui/login`` (form ``token``) → cookie and 303 to ``/lcm/ui``."""
    token = request.app[SETTINGS].proxy.admin_token
    form = await request.post()
    presented = str(form.get("token", ""))
    if not token or not hmac.compare_digest(presented.encode(), token.encode()):
        return _login_page("wrong token" if token else "no admin token is configured")
    resp = web.Response(status=303, headers={"Location": "/lcm/ui", **SECURITY_HEADERS})
    resp.set_cookie(UI_COOKIE, ui_session_value(token), httponly=True, samesite="Strict",
                    path="/lcm/", secure=request.secure)
    return resp


async def index(request: web.Request) -> web.Response:
    """``GET /lcm/ui`` → tenants (unfiltered) and the threads list."""
    if (denied := _guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    out = []
    if tenant is None:
        tenants = await _run(engine.list_tenants)
        out.append("<h2>Tenants</h2>" + table(
            ("tenant", "roles", "threads", "messages", "last activity"),
            ((link(url("/lcm/ui", tenant=t["tenant"]), t["tenant"]), e(", ".join(t["roles"])),
              e(t["threads"]), e(t["messages"]), e(when(t["last_activity"]))) for t in tenants),
            "no tenants yet"))
    data = await _run(lambda: engine.list_threads(tenant=tenant, role=role, limit=200))
    rows = []
    for t in data["threads"]:
        parent = t["parent_thread_id"]
        fork = (f"fork of {link(url(f'/lcm/ui/threads/{parent}', tenant=tenant), parent)}"
                f" at msg {e(t['fork_message_id'])}" if parent else "")
        tid = t["id"]
        rows.append((link(url(f"/lcm/ui/threads/{tid}", tenant=tenant), f"#{tid}"),
                     e(t["title"]), e(t["role"]), e(t["session"] or "-"),
                     e(t["path_length"]), fork, e(when(t["updated_at"])),
                     e(t["tenant"])))
    out.append(f"<h2>Threads ({e(data['total'])})</h2>" + table(
        ("thread", "first user message", "role", "session", "messages", "branch", "updated",
         "tenant"), rows, "no threads"))
    return _html(page("Threads", "".join(out), tenant=tenant))


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
    if (denied := _guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    try:
        tid = parse_id(request.match_info["thread_id"])
        detail = await _run(lambda: engine.thread_detail(tid, tenant=tenant, role=role))
    except (ValueError, NotFoundError):
        return _html(page("Not found", "<p>no such thread</p>", tenant=tenant), 404)
    t = detail["thread"]
    head = table(("tenant", "role", "session", "parent thread", "fork at", "created",
                  "updated"), [(e(t["tenant"]), e(t["role"]), e(t["session"] or "-"),
                                e(t["parent_thread_id"] or "-"), e(t["fork_message_id"] or "-"),
                                e(when(t["created_at"])), e(when(t["updated_at"])))])
    last = await _run(lambda: engine.last_assembly(tenant=t["tenant"], role=t["role"],
                                                   thread_id=tid))
    if last is None:
        inj = '<p class="muted">no injection recorded for this thread</p>'
    else:
        data = last["data"]
        skipped = f"<p>skipped: {e(data['skipped'])}</p>" if data.get("skipped") else ""
        sections = table(("section", "lines", "tokens"), (
            (e(s["name"]), e(s["lines"]), e(s["tokens"])) for s in data.get("sections", [])),
            "no sections")
        bar = budget_bar(last["used_tokens"], last["budget_tokens"])
        inj = (f"<p>request {e(last['request_id'])} · {e(when(last['created_at']))} ·"
               f" trigger <b>{e(last['trigger'])}</b> · counted with"
               f" {e(last['token_source'])}</p>{bar}"
               f"{skipped}{sections}<h3>Explain</h3>{explain_table(data)}")
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
    return _html(page(f"Thread #{tid}", body, tenant=tenant))


async def items_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/items``: supersession chains, then every item of the scope."""
    if (denied := _guard(request)) is not None:
        return denied
    engine = request.app[ENGINE]
    tenant, role = _filters(request)
    status = request.query.get("status", "").strip() or None
    data = await _run(lambda: engine.list_items(tenant=tenant, role=role, status=status,
                                                limit=500))
    by_id = {i["id"]: i for i in data["items"]}
    chains = []
    for chain in data["chains"]:
        steps = []
        for i in chain:
            it = by_id.get(i)
            text = e(clip(it["text"], 160)) if it else '<span class="muted">(not listed)</span>'
            badge = status_badge(it["status"]) if it else ""
            steps.append(f"item:{e(i)} {badge} {text}")
        chains.append(f'<div class="chain">{"<span class=arrow>→</span>".join(steps)}</div>')
    rows = ((e(f"item:{i['id']}"), e(i["kind"]), status_badge(i["status"]), e(i["text"]),
             e(f"{i['value']:g} {i['unit'] or ''}" if i["value"] is not None else ""),
             e(i["condition"] or ""), e(i["supersedes"] or ""), e(i["superseded_by"] or ""),
             e(i["source_message_id"] or ""), e(i["role"]), e(i["tenant"]))
            for i in data["items"])
    body = (f"<h2>Supersession chains (oldest → newest)</h2>"
            f"{''.join(chains) or '<p class=muted>no corrections yet</p>'}"
            f"<h2>Items ({e(data['total'])})</h2>"
            + table(("id", "kind", "status", "text", "number", "condition", "supersedes",
                     "superseded by", "source msg", "role", "tenant"), rows, "no items"))
    return _html(page("Memory items", body, tenant=tenant))


async def search_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/search?q=``: keyword search over items and messages of the scope."""
    if (denied := _guard(request)) is not None:
        return denied
    tenant, role = _filters(request)
    query = request.query.get("q", "").strip()
    body = '<p class="muted">type a query in the search box above</p>'
    if query:
        hits = await _run(lambda: request.app[ENGINE].search_memory(
            query, tenant=tenant, role=role, limit=100, include_commands=False))
        body = f"<p>{len(hits)} results for <b>{e(query)}</b></p>" + table(
            ("ref", "kind", "status", "role", "text"),
            ((e(h["ref"]), e(h["kind"]), status_badge(h["status"]), e(h["role"]),
              e(clip(h["text"], 600))) for h in hits), "no matches")
    return _html(page("Search", body, tenant=tenant))


ROUTES: list[tuple[str, str, Callable[[web.Request], Any]]] = [
    ("GET", "/lcm/ui", index),
    ("GET", "/lcm/ui/threads/{thread_id}", thread_page),
    ("GET", "/lcm/ui/items", items_page),
    ("GET", "/lcm/ui/search", search_page),
    ("POST", "/lcm/ui/login", login),
]
