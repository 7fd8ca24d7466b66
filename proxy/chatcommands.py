"""In-chat ``/memory …`` commands, answered by the proxy itself (DESIGN §2 step 4).

A newest user message that starts with ``/memory`` never reaches the upstream. The
proxy answers with an ordinary ``chat.completion`` — or, when the request streams,
with ``chat.completion.chunk`` SSE events and ``data: [DONE]`` — so every OpenAI
client renders it like any other reply. The exchange is captured as evidence but
is not conversation content: it is never extracted from.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from memory_core.assembly import in_view as inview
from memory_core.assembly.block import most_specific_preferences
from memory_core.engine import Engine
from memory_core.errors import InvalidIdError, ItemStateError, NotFoundError
from memory_core.items.agent_keys import snake_key
from memory_core.items.writer import (
    GLOBAL_TENANT,
    ITEM_CHANGES,
    DuplicateKeyError,
    account_tenant,
)
from memory_core.models import CaptureTicket, Scope
from memory_core.tools.commands import PREFIX, REPLY_HEADER, is_command
from memory_core.tools.refs import parse_item_id

if TYPE_CHECKING:
    from proxy.flow.asyncengine import AsyncEngine

__all__ = ["HELP", "PREFIX", "REPLY_HEADER", "answer", "is_command", "run_command"]

HELP = """lcm-proxy memory commands:
/memory status             what is stored for this tenant and role (threads, messages, items)
/memory search QUERY       find memory items and messages of this role
/memory explain            what the last injection contained, and why
/memory retract ID         retract memory item ID (kept for audit, no longer used)
/memory restore ID         make a superseded or retracted item ID current again
/memory prefs              the preferences shown to this role in every memory block
/memory prefs set KEY TEXT set your preference KEY (e.g. reply_language) to TEXT
/memory prefs delete KEY   delete your preference KEY
/memory prefs delete item:ID  retract a preference learned from what you said
/memory help               this text"""


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(ts)) if ts else "-"


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status(engine: Engine, scope: Scope) -> str:
    info = engine.status_for(scope.tenant, scope.role)
    c, by = info["counts"], info["items_by_status"]
    states = ", ".join(f"{by[k]} {k}" for k in sorted(by)) or "none"
    lines = [
        f"{REPLY_HEADER} · status of tenant {scope.tenant}, role {scope.role}",
        f"threads: {c['threads']}   messages: {c['messages']} (hidden {c['hidden_messages']})",
        f"memory items: {c['memory_items']} ({states})",
        f"agent memories: {c['agent_memories']}   task lines: {c['task_state']}"
        f"   summary nodes: {c['summary_nodes']}",
        f"last message: {_when(info['last_message_at'])}",
    ]
    last = info["last_injection"]
    if last is None:
        lines.append("last injection: none yet")
    else:
        lines.append(f"last injection: {_when(last['created_at'])} {last['trigger']},"
                     f" {last['used_tokens']}/{last['budget_tokens']} tokens,"
                     f" {last['items']} items ({last['request_id']})")
    return "\n".join(lines)


def _search(engine: Engine, scope: Scope, query: str) -> str:
    if not query:
        return f"{REPLY_HEADER} · usage: /memory search QUERY"
    hits = engine.search_memory(query, tenant=scope.tenant, role=scope.role, limit=10,
                                include_commands=False, mode="hybrid")
    lines = [f"{REPLY_HEADER} · search {query!r}: {len(hits) or 'no'} match"
             f"{'' if len(hits) == 1 else 'es'}"]
    for h in hits:
        extra = f" [{h['status']}]" if h["kind"] != "message" else f" ({h['status']})"
        lines.append(f"{h['ref']:<10} {h['kind']:<10}{extra} {_flat(h['text'], 160)}")
    return "\n".join(lines)


def _explain(engine: Engine, scope: Scope) -> str:
    last = engine.last_assembly(tenant=scope.tenant, role=scope.role,
                                session=scope.session or None)
    if last is None:
        where = f"session {scope.session!r}, " if scope.session else ""
        return (f"{REPLY_HEADER} · explain: no injection recorded yet for this conversation"
                f" ({where}role {scope.role}); `/memory status` shows the role's last")
    data = last["data"]
    lines = [
        f"{REPLY_HEADER} · last injection {_when(last['created_at'])} ({last['request_id']})",
        f"trigger: {last['trigger']}   budget: {last['used_tokens']}/{last['budget_tokens']}"
        f" tokens ({last['token_source']})",
    ]
    if data.get("skipped"):
        lines.append(f"skipped: {data['skipped']}")
    for sec in data.get("sections", []):
        lines.append(f"section  {sec['name']}: {sec['lines']} lines, {sec['tokens']} tokens")
    in_view = [row["ref"] for row in data.get("omitted", [])
               if row["reason"].startswith(inview.NOT_REPEATED)]
    for label in ("included", "truncated", "omitted"):
        for row in data.get(label, []):
            if label == "omitted" and row["reason"].startswith(inview.NOT_REPEATED):
                continue  # one summary line below, not one per item
            lines.append(f"{label:<9}{row['ref']:<16}{row['tokens']:>5} tok  {row['reason']}")
    if in_view:
        lines.append(f"in view  {len(in_view)} items not repeated (their messages are in the"
                     f" request): {', '.join(in_view)}")
    return "\n".join(lines)


def _change(engine: Engine, scope: Scope, verb: str, arg: str) -> str:
    """``/memory retract|restore ID [reason]`` on an item of the caller's tenant and
    role only."""
    head, _, reason = arg.partition(" ")
    try:
        ident = parse_item_id(head)
    except InvalidIdError:
        return (f"{REPLY_HEADER} · usage: /memory {verb} ID [reason]"
                "  (ID from /memory search)")
    done = ITEM_CHANGES[verb]
    try:
        out = engine.change_in_scope(verb, ident, reason.strip() or f"{done} in chat",
                                     tenant=scope.tenant, role=scope.role)
    except NotFoundError:
        return f"{REPLY_HEADER} · no memory item {ident} for role {scope.role}"
    except ItemStateError as exc:
        return f"{REPLY_HEADER} · {exc}"
    after = ("it is kept for audit and no longer used" if verb == "retract"
             else "it is current again")
    return f"{REPLY_HEADER} · {done} item:{out['id']} (was {out['old_status']}); {after}"


def _pref_source(row: dict[str, Any], scope: Scope) -> str:
    if row["tenant"] == scope.tenant:
        return "yours"
    return ("set by the operator for every tenant" if row["tenant"] == GLOBAL_TENANT
            else "set for every user of this API key")


def _learned_from(row: dict[str, Any]) -> str:
    src = row["source_message_id"]
    return (f"learned from your msg {src}" if src is not None
            else "learned from your words") + f", {_when(row['created_at'])}"


def _forget_learned(engine: Engine, scope: Scope, ref: str) -> str:
    """``/memory prefs delete item:ID``: retract a preference learned from the
    caller's own words (its tenant and role only); other items are left to
    ``/memory retract``."""
    try:
        ident = parse_item_id(ref)
    except InvalidIdError:
        return f"{REPLY_HEADER} · usage: /memory prefs delete KEY | item:ID"
    if ident not in {r["id"] for r in engine.learned_preferences(tenant=scope.tenant,
                                                                 role=scope.role)}:
        return (f"{REPLY_HEADER} · item:{ident} is no learned preference of role"
                f" {scope.role} (`/memory prefs` lists them)")
    return _change(engine, scope, "retract", f"item:{ident} preference deleted in chat")


def _prefs(engine: Engine, scope: Scope, arg: str) -> str:
    """``/memory prefs [set KEY TEXT | delete KEY | delete item:ID]``: list the user
    preferences the caller's memory block shows (its own, those the operator set for
    its key or every tenant, and those learned from its own words, each with the
    message it came from), or set or delete one of its own for its tenant and role
    (a learned one is retracted: kept for audit, no longer shown). User
    preferences are the user's to write (DESIGN §4): never the model's, and an
    operator's are changed only by the operator."""
    verb, _, rest = arg.partition(" ")
    verb = verb.lower()
    if verb in ("", "list"):
        rows = engine.list_agent_memories(category="user_preferences", role=scope.role,
                                          tenant=scope.tenant)
        learned = engine.learned_preferences(tenant=scope.tenant, role=scope.role)
        if not rows and not learned:
            return (f"{REPLY_HEADER} · no preferences for role {scope.role};"
                    " `/memory prefs set KEY TEXT` adds one")
        # what the block shows: per key, the caller's own over its key's over everyone's
        shown = {r["id"] for r in most_specific_preferences(
            rows, (scope.tenant, account_tenant(scope.tenant), GLOBAL_TENANT))}
        lines = [f"{REPLY_HEADER} · preferences of role {scope.role} ({len(shown)} set,"
                 f" {len(learned)} learned from what you said), shown in memory blocks:"]
        lines += [f"{r['key']:<20} {_flat(r['title'], 60)}: {_flat(r['content'], 300)}"
                  f"  ({_pref_source(r, scope)}"
                  f"{'' if r['id'] in shown else '; not shown: a more specific one replaces it'})"
                  for r in rows]
        lines += [f"{'item:' + str(r['id']):<20} {_flat(r['text'], 300)}  ({_learned_from(r)})"
                  for r in learned]
        if learned:
            lines.append("learned ones: `/memory prefs delete item:ID` retracts one (kept for"
                         " audit); a set one with the same meaning is listed first")
        return "\n".join(lines)
    key, _, content = rest.strip().partition(" ")
    key = key.rstrip(":")
    if verb == "set":
        content = content.strip()
        if not key or not content:
            return f"{REPLY_HEADER} · usage: /memory prefs set KEY TEXT"
        try:
            title = snake_key(key).replace("_", " ")
            out = engine.set_agent_memory(
                tenant=scope.tenant, role=scope.role, category="user_preferences", key=key,
                title=title[:1].upper() + title[1:], content=content, on_duplicate="refuse")
        except DuplicateKeyError as exc:
            return (f"{REPLY_HEADER} · {exc} (`/memory prefs set {exc.match.key} …`"
                    " replaces that one)")
        except ValueError as exc:
            return f"{REPLY_HEADER} · not set: {exc}"
        done = "set" if out.created else "replaced"
        return (f"{REPLY_HEADER} · {done} preference {out.key} for role {scope.role};"
                " every memory block of this role shows it")
    if verb == "delete":
        if not key or content.strip():
            return f"{REPLY_HEADER} · usage: /memory prefs delete KEY"
        if key.lower().startswith("item:"):
            return _forget_learned(engine, scope, key)
        try:
            gone = engine.delete_agent_memory(tenant=scope.tenant, role=scope.role,
                                              category="user_preferences", key=key)
        except ValueError as exc:
            return f"{REPLY_HEADER} · not deleted: {exc}"
        if gone:
            return f"{REPLY_HEADER} · deleted your preference {snake_key(key)}"
        theirs = [r for r in engine.list_agent_memories(
            category="user_preferences", role=scope.role, tenant=scope.tenant)
            if r["key"] == snake_key(key)]
        if theirs:
            return (f"{REPLY_HEADER} · preference {theirs[0]['key']} is"
                    f" {_pref_source(theirs[0], scope)}: not yours to delete")
        return f"{REPLY_HEADER} · no preference {snake_key(key)} for role {scope.role}"
    return f"{REPLY_HEADER} · usage: /memory prefs [set KEY TEXT | delete KEY]"


def run_command(engine: Engine, scope: Scope, text: str) -> str:
    """Execute one command for ``scope`` (its tenant and role only) and return the
    answer text. Runs on a worker thread (reads, and a write for retract, restore and
    ``prefs set|delete``). Unknown
    commands answer with the help text; never raises for bad input."""
    try:
        # The command's own capture is queued just before: let it land, so the answer
        # counts it and two identical commands give the same answer.
        engine.flush(timeout=5.0)
    except Exception:  # noqa: BLE001 - answer from what is committed
        pass
    parts = text.strip().split(None, 2)
    verb = parts[1].lower() if len(parts) > 1 else "help"
    arg = parts[2].strip() if len(parts) > 2 else ""
    if verb == "status":
        return _status(engine, scope)
    if verb == "search":
        return _search(engine, scope, arg)
    if verb == "explain":
        return _explain(engine, scope)
    if verb in ("retract", "restore"):
        return _change(engine, scope, verb, arg)
    if verb in ("prefs", "preferences"):
        return _prefs(engine, scope, arg)
    return HELP if verb == "help" else f"{REPLY_HEADER} · unknown command '{verb}'\n{HELP}"


async def answer(request: web.Request, aengine: AsyncEngine, scope: Scope,
                 body: dict[str, Any], text: str, ticket: CaptureTicket | None,
                 request_id: str) -> web.StreamResponse:
    """Answer a ``/memory`` command locally, streamed when ``body["stream"]`` is true.

    The reply is captured as the assistant message of ``ticket`` (when given).
    """
    reply = await aengine.run_command(scope, text)
    model = body.get("model") if isinstance(body.get("model"), str) else "lcm-proxy"
    cid = "chatcmpl-lcm-" + uuid.uuid4().hex[:24]
    created = int(time.time())
    message = {"role": "assistant", "content": reply}
    headers = {"x-lcm-request-id": request_id, "x-lcm-memory": "command"}
    if ticket is not None:
        aengine.queue_command_reply(ticket, [message], {
            "status": 200, "outcome": "complete", "command": True, "model": model})
    if body.get("stream") is True:
        resp = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        base = {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {"content": reply},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            chunks.append({**base, "choices": [], "usage": {
                "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
        for chunk in chunks:
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
    return web.Response(
        body=orjson.dumps({
            "id": cid, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {**message, "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }),
        content_type="application/json", headers=headers,
    )
