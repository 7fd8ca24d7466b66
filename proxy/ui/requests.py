"""Inspector pages of the request log: ``/lcm/ui/requests`` (newest first: latency,
model, tokens, what memory did) and ``/lcm/ui/requests/{request_id}``, the exact body
the upstream received — summary scaffold, injection block and tail marked, tool
definitions — beside the injection's budget, sections and explain table.

Bodies come from ``forwarded_requests`` (:mod:`memory_core.capture.forwarded`): the newest
``capture.keep_forwarded_requests`` per tenant, secrets masked as in capture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from memory_core.capture.forwarded import split_body
from proxy.appkeys import ENGINE, SETTINGS
from proxy.ui.html import (
    budget_bar,
    clip,
    e,
    explain_table,
    link,
    pager,
    section_table,
    table,
    url,
    when,
)
from proxy.ui.pages import _filters, _query_int, _run
from proxy.ui.signin import guard, respond

_BODY_CHARS = 200_000
"""Characters of one message (or of the raw body) shown before it is cut."""


def _kib(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:.1f} KiB"


def _memory_cell(r: dict[str, Any]) -> str:
    parts = [f'<span class="badge">{e(r["state"])}</span>']
    inj = r.get("injection")
    if inj:
        if inj.get("skipped"):
            parts.append(f"block: {e(inj['skipped'])}")
        else:
            parts.append(f"block {e(inj['used_tokens'])}/{e(inj['budget_tokens'])} tokens,"
                         f" {e(inj['items'])} items ({e(inj['trigger'])})")
    if r["compacted_messages"]:
        parts.append(f"{e(r['compacted_messages'])} messages compacted")
    if r["tools_added"]:
        parts.append("memory tools offered")
    return " · ".join(parts)


def _usage(u: dict[str, Any] | None) -> str:
    if not u:
        return "-"
    return f"{e(u.get('prompt_tokens', '?'))} → {e(u.get('completion_tokens', '?'))}"


async def request_log_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/requests`` (``tenant``, ``role``, ``thread``, ``offset``, ``limit``)."""
    if (denied := guard(request)) is not None:
        return denied
    tenant, role = _filters(request)
    try:
        thread = int(request.query["thread"]) if request.query.get("thread") else None
    except ValueError:
        return respond(request, "Requests", "<p>thread must be a thread id</p>", tenant=tenant,
                       status=400)
    limit = _query_int(request, "limit", 50, 500) or 50
    offset = _query_int(request, "offset", 0, 1 << 40)
    data = await _run(request, lambda: request.app[ENGINE].request_log(
        tenant=tenant, role=role, thread_id=thread, limit=limit, offset=offset))
    rows = []
    for r in data["requests"]:
        rid = r["request_id"]
        th = r["thread_id"]
        latency = "-" if r["latency_s"] is None else f"{r['latency_s'] * 1000:.0f} ms"
        rows.append((
            e(when(r["created_at"])),
            link(url(f"/lcm/ui/requests/{rid}", tenant=tenant), rid),
            link(url(f"/lcm/ui/threads/{th}", tenant=tenant), f"#{th}") if th else "-",
            e(r["role"]), e(r["model"] or "-") + (" · stream" if r["stream"] else ""),
            e(r["status"] if r["status"] is not None else "-") + (
                f" {e(r['outcome'])}" if r["outcome"] else ""),
            e(latency), _usage(r["usage"]), _memory_cell(r),
            f"{e(_kib(r['client_bytes']))} → {e(_kib(r['body_bytes']))}"))
    keep = request.app[SETTINGS].capture.keep_forwarded_requests
    paging = pager("/lcm/ui/requests", data["total"], offset, limit, len(rows),
                   tenant=tenant, role=role, thread=thread)
    note = (f'<p class="muted">the newest {e(keep)} forwarded requests per tenant are kept'
            " (capture.keep_forwarded_requests); latency: from the request's capture to its"
            " answer's, in the proxy</p>")
    body = note + paging + table(
        ("time", "request", "thread", "role", "model", "status", "latency",
         "tokens in → out", "memory", "client → upstream body"), rows,
        "no requests recorded yet") + paging
    return respond(request, "Requests", body, tenant=tenant)


def _message_html(m: dict[str, Any]) -> str:
    part, block = m["part"], m["block"]
    labels = [f'<span class="part {e(part)}">{e(part)}</span>']
    inner = ""
    if block is not None:
        labels.append('<span class="part block">memory block</span>')
        inner = f'<div class="blocktext"><pre>{e(clip(block, _BODY_CHARS))}</pre></div>'
    msg = m["message"] if isinstance(m["message"], dict) else {}
    text = m["text"]
    if text is None or (block is None and not isinstance(msg.get("content"), str)):
        content = msg.get("content") if msg else m["message"]
        text = orjson.dumps(content, option=orjson.OPT_INDENT_2).decode()
    calls = {k: msg[k] for k in ("tool_calls", "tool_call_id", "name") if msg.get(k)}
    extra = ("<pre class=muted>"
             f"{e(orjson.dumps(calls, option=orjson.OPT_INDENT_2).decode())}</pre>"
             if calls else "")
    cls = "scaffold" if part in ("scaffold", "acknowledgement") else e(m["role"])
    return (f'<div class="msg {cls}" data-part="{e(part)}"'
            f'{" data-block=1" if block is not None else ""}>'
            f'<div class="meta">{"".join(labels)} #{e(m["index"])} · {e(m["role"])}</div>'
            f"{inner}<pre>{e(clip(text, _BODY_CHARS))}</pre>{extra}</div>")


async def request_page(request: web.Request) -> web.Response:
    """``GET /lcm/ui/requests/{request_id}``: the forwarded body and its explain."""
    if (denied := guard(request)) is not None:
        return denied
    tenant, role = _filters(request)
    rid = request.match_info["request_id"]
    fw = await _run(request, lambda: request.app[ENGINE].forwarded(rid, tenant=tenant, role=role))
    if fw is None:
        return respond(request, "Not found", "<p>no forwarded body recorded for this request"
                       " (not kept, purged, or outside the filter)</p>", tenant=tenant,
                       status=404)
    th = fw["thread_id"]
    head = table(("request", "time", "tenant", "role", "thread", "model", "status",
                  "latency", "tokens in → out", "memory", "body"), [(
        e(rid), e(when(fw["created_at"])), e(fw["tenant"]), e(fw["role"]),
        link(url(f"/lcm/ui/threads/{th}", tenant=tenant), f"#{th}") if th else "-",
        e(fw["model"] or "-"), e(fw["status"] if fw["status"] is not None else "-"),
        e("-" if fw["latency_s"] is None else f"{fw['latency_s'] * 1000:.0f} ms"),
        _usage(fw["usage"]), _memory_cell(fw),
        f"{e(_kib(fw['client_bytes']))} from the client → {e(_kib(fw['body_bytes']))}"
        " upstream")])
    notes = []
    if fw["redacted"]:
        notes.append("secrets in this body are masked here ([REDACTED:…]); the upstream"
                     " received them")
    left: str
    if fw["body"] is None:
        left = (f'<p class="notice">the body ({e(_kib(fw["body_bytes"]))}) was larger than'
                " capture.forwarded_body_max_kib and was not kept</p>")
    else:
        parts = split_body(fw["parsed"], injected=fw["state"] == "injected")
        msgs = "".join(_message_html(m) for m in parts["messages"])
        counts: dict[str, int] = {}
        for m in parts["messages"]:
            counts[m["part"]] = counts.get(m["part"], 0) + 1
        legend = " · ".join(f'<span class="part {e(k)}">{e(k)}</span> {v}'
                            for k, v in counts.items())
        tools = "".join(
            f'<details class="tool"><summary><span class="part tools">tool</span>'
            f" {e(_tool_name(t))}</summary><pre>"
            f"{e(orjson.dumps(t, option=orjson.OPT_INDENT_2).decode())}</pre></details>"
            for t in parts["tools"])
        other = e(orjson.dumps(parts["other"], option=orjson.OPT_INDENT_2).decode())
        left = (f"<h2>Messages ({len(parts['messages'])})</h2><p>{legend}</p>{msgs}"
                f"<h2>Tool definitions ({len(parts['tools'])})</h2>"
                f"{tools or '<p class=muted>none</p>'}"
                f"<h2>Other fields</h2><pre>{other}</pre>"
                f"<h2>Exact body</h2><details><summary>{e(_kib(fw['body_bytes']))} as sent"
                f"</summary><pre id=rawbody>{e(clip(fw['body'], _BODY_CHARS))}</pre></details>")
    a = fw["assembly"]
    if a is None:
        right = '<p class="muted">no injection was assembled for this request</p>'
    else:
        data = a["data"]
        skipped = f"<p>skipped: {e(data['skipped'])}</p>" if data.get("skipped") else ""
        right = (f"<p>trigger <b>{e(a['trigger'])}</b> · counted with"
                 f" {e(a['token_source'])}</p>{budget_bar(a['used_tokens'], a['budget_tokens'])}"
                 f"{skipped}{section_table(data.get('sections', []), a['used_tokens'])}"
                 f"<h3>Explain</h3>{explain_table(data, tenant)}")
    note = "".join(f'<p class="notice">{e(n)}</p>' for n in notes)
    body = (f"{head}{note}<div class=cols><section id=forwarded><h2>What the upstream"
            f" received</h2>{left}</section><section id=explain><h2>Injection</h2>{right}"
            "</section></div>")
    return respond(request, f"Request {rid}", body, tenant=tenant)


def _tool_name(t: Any) -> str:
    if isinstance(t, dict) and isinstance(t.get("function"), dict):
        return str(t["function"].get("name", "?"))
    return "?"


ROUTES: list[tuple[str, str, Callable[[web.Request], Any]]] = [
    ("GET", "/lcm/ui/requests", request_log_page),
    ("GET", "/lcm/ui/requests/{request_id}", request_page),
]
