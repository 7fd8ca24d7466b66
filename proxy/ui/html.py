"""HTML building blocks of the inspector: escaping, page frame, tables, bars, trees.

Every value that reaches the page goes through :func:`e` (``html.escape`` with
quotes): stored text is hostile input. Functions return strings; nothing here
touches the store or the request.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlencode

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self';"
       " frame-ancestors 'none'; base-uri 'none'")
"""No scripts, no external anything: escaping mistakes cannot become script execution."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate CSP 2
    # same-origin, not no-referrer: under no-referrer Chromium sends "Origin: null" with
    # a form POST, which the retract form's Origin check must refuse.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:18px;
align-items:center;flex-wrap:wrap}
header a{color:#cfe0ff;text-decoration:none}header b{margin-right:12px}
header .badge{background:#3b4456;color:#fff}
main{padding:16px 20px;max-width:1200px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:13px/1.4 ui-monospace,monospace}
.msg{background:#fff;border:1px solid #dde1e7;border-left:4px solid #9aa5b5;
margin:6px 0;padding:6px 10px}
.msg.user{border-left-color:#2f6fdd}.msg.assistant{border-left-color:#1f9d55}
.msg.tool{border-left-color:#b7791f}.msg.hidden{opacity:.7;border-style:dashed}
.meta{color:#5b6472;font-size:12px;margin-bottom:3px}
.branch{background:#fff4d6;border:1px solid #e6c36a;padding:3px 8px;margin-top:4px;
font-size:12px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:#e4e8ee;
font-size:12px}
.active{background:#d6f5e3}.superseded{background:#fde2c8}.retracted{background:#f5d0d0}.edited{background:#e6e0f5}
.bar{width:100%;max-width:600px;height:16px;background:#e4e8ee;border-radius:8px;
overflow:hidden;border:1px solid #c8ced8}
.bar div{height:100%;background:#2f6fdd}
ul.tree{list-style:none;padding-left:18px;border-left:2px solid #c8ced8;margin:4px 0}
ul.tree li{margin:4px 0}ul.tree.top{border-left:none;padding-left:0}
.chain{margin:4px 0}.chain .arrow{color:#5b6472;padding:0 6px}
form.search input[type=text]{width:320px;padding:4px}
.muted{color:#5b6472}
header form.signout{margin-left:auto}
.cols{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}
.cols>section{flex:1 1 480px;min-width:0}
.part{font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.04em;
padding:0 6px;border-radius:6px;margin-right:6px}
.part.scaffold{background:#e9ddff;color:#4b2a99}.part.acknowledgement{background:#efe7ff}
.part.block{background:#fff0b3;color:#6b5200}.part.tail{background:#dff0ff;color:#174a7a}
.part.tools{background:#ffe1cc;color:#7a3a00}
.msg.scaffold{border-left-color:#7b4fd6}.blocktext{background:#fffbe6;
border:1px dashed #d9b400;padding:4px 6px;margin:4px 0}
.pager{margin:8px 0}.pager a,.pager span{margin-right:10px}
.notice{background:#fff4d6;border:1px solid #e6c36a;padding:6px 10px;margin:8px 0}
form.filters{display:flex;gap:8px;flex-wrap:wrap;align-items:end;margin:8px 0}
form.filters label{font-size:12px;display:flex;flex-direction:column}
form.inline{display:inline;margin:0}form.inline input[type=text]{width:110px}
tr.total td{font-weight:700;background:#eef1f5}
"""


def e(value: Any) -> str:
    """Escape any value for HTML text and attribute context."""
    return html.escape("" if value is None else str(value), quote=True)


def when(ts: float | None) -> str:
    """UTC time of UNIX seconds ``ts``, or ``-``."""
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(ts)) if ts else "-"


def clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def url(path: str, **query: Any) -> str:
    """``path`` with the non-empty ``query`` values URL-encoded (then escape it)."""
    q = {k: v for k, v in query.items() if v not in (None, "")}
    return path + ("?" + urlencode(q) if q else "")


def link(href: str, text: Any) -> str:
    return f'<a href="{e(href)}">{e(text)}</a>'


def page(title: str, body: str, *, tenant: str | None = None,
         signout: str | None = None) -> str:
    """A whole HTML document: navigation (keeping the tenant filter) and ``body``;
    with ``signout`` (the CSRF token), a sign-out button."""
    scope = f' <span class="badge">tenant {e(tenant)}</span>' if tenant else ""
    nav = " ".join(link(url(p, tenant=tenant), label) for p, label in (
        ("/lcm/ui", "Threads"), ("/lcm/ui/requests", "Requests"),
        ("/lcm/ui/items", "Memory items"), ("/lcm/ui/preferences", "Preferences"),
        ("/lcm/ui/search", "Search")))
    search = (f'<form class="search" method="get" action="/lcm/ui/search">'
              f'<input type="hidden" name="tenant" value="{e(tenant or "")}">'
              f'<input type="text" name="q" placeholder="search memory" aria-label="search">'
              f' <button type="submit">Search</button></form>')
    signout_form = ("" if signout is None else
                    '<form class="signout" method="post" action="/lcm/ui/logout">'
                    f'<input type="hidden" name="csrf" value="{e(signout)}">'
                    '<button type="submit">Sign out</button></form>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{e(title)} · lcm-proxy</title><style>{_CSS}</style></head><body>"
            f"<header><b>lcm-proxy inspector</b>{nav}{scope}{search}{signout_form}</header>"
            f"<main><h1>{e(title)}</h1>{body}</main></body></html>")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], empty: str = "none") -> str:
    """A table; ``rows`` cells are already-escaped HTML."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    if not body:
        return f'<p class="muted">{e(empty)}</p>'
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def status_badge(status: str) -> str:
    return f'<span class="badge {e(status)}">{e(status)}</span>'


def pager(path: str, total: int, offset: int, limit: int, shown: int,
          **query: Any) -> str:
    """"rows a–b of total" with previous/next links keeping ``query`` (the filters)."""
    if total == 0:
        return ""
    first, last = (offset + 1, offset + shown) if shown else (0, 0)
    parts = [f"<span>rows {first}–{last} of {total}</span>"]
    if offset > 0:
        parts.append(link(url(path, **query, offset=max(0, offset - limit) or None,
                              limit=limit), "← previous"))
    if offset + shown < total:
        parts.append(link(url(path, **query, offset=offset + limit, limit=limit), "next →"))
    return f'<div class="pager">{"".join(parts)}</div>'


def section_table(sections: Sequence[dict[str, Any]], used: int) -> str:
    """The block's sections and their line tokens, then what the lines do not cover
    (section headers, ``[Current Request]``, joins: ``used`` minus the lines' sum)
    and a total row equal to ``used``, the figure the budget bar shows."""
    rows = [(e(s["name"]), e(s["lines"]), e(s["tokens"])) for s in sections]
    if not rows:
        return '<p class="muted">no sections</p>'
    rest = used - sum(int(s["tokens"]) for s in sections)
    rows.append(('<span class="muted">section headers, [Current Request] marker,'
                 " line breaks</span>", "", e(rest)))
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    body += (f'<tr class="total"><td>total (exact count of the block)</td><td></td>'
             f'<td>{e(used)}</td></tr>')
    return ("<table class=sections><thead><tr><th>section</th><th>lines</th><th>tokens</th>"
            f"</tr></thead><tbody>{body}</tbody></table>")


def budget_bar(used: int, budget: int) -> str:
    """The token-budget bar: ``used`` of ``budget`` tokens, with the figures."""
    pct = 0.0 if budget <= 0 else max(0.0, min(100.0, 100.0 * used / budget))
    return (f'<div class="bar" role="meter" aria-valuemin="0" aria-valuemax="{budget}"'
            f' aria-valuenow="{used}" title="{used} / {budget} tokens">'
            f'<div style="width:{pct:.1f}%"></div></div>'
            f"<p>{used} / {budget} tokens ({pct:.0f}% of the soft budget)</p>")


def forest(nodes: Sequence[dict[str, Any]], *, top: bool = True) -> str:
    """The summary forest as a nested list: each node, then its children below it."""
    if not nodes:
        return '<p class="muted">no summaries yet (nothing compacted)</p>' if top else ""
    items = []
    for n in nodes:
        ids = n.get("message_ids") or []
        label = (f"L{e(n['level'])} · summary #{e(n['id'])} · messages {e(n['first_message_id'])}"
                 f"–{e(n['last_message_id'])} ({len(ids)}) · {e(n['tokens'])} tokens from"
                 f" {e(n['source_tokens'])} · {e(n['model'])}")
        items.append(f'<li class="node" data-level="{e(n["level"])}"><details><summary>'
                     f"{label}</summary><pre>{e(clip(n.get('text'), 4000))}</pre></details>"
                     f"{forest(n.get('children') or [], top=False)}</li>")
    return f'<ul class="tree{" top" if top else ""}">{"".join(items)}</ul>'


def ref_link(ref: Any, tenant: str | None = None) -> str:
    """``item:N`` / ``msg:N`` as a link to its inspector page; anything else as text."""
    kind, _, ident = str(ref or "").partition(":")
    if ident.isdigit() and kind in ("item", "msg"):
        path = "items" if kind == "item" else "messages"
        return link(url(f"/lcm/ui/{path}/{ident}", tenant=tenant), ref)
    return e(ref)


def explain_table(data: dict[str, Any], tenant: str | None = None) -> str:
    """Included, truncated and omitted lines of an assembly log, with reasons (item
    and message refs link to their pages, keeping the ``tenant`` filter)."""
    rows = []
    for label in ("included", "truncated", "omitted"):
        for r in data.get(label, []):
            why = r.get("reason", "")
            if r.get("would_have_been"):
                why += f" (would have been: {r['would_have_been']})"
            rows.append((e(label), ref_link(r.get("ref"), tenant), e(r.get("section", "")),
                         e(r.get("tokens")), e(why)))
    return table(("decision", "ref", "section", "tokens", "reason"), rows,
                 "nothing was considered")
