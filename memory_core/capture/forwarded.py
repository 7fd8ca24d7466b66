"""What each upstream received: the forwarded body per request, and the request log.

The proxy hands every body it forwards with memory in play to
:meth:`memory_core.engine.Engine.record_forwarded` (nothing waits for it). On a
background thread of its own (:func:`prepare`), the body is serialised if it came as a
dict, secrets are masked when capture redacts (``memory_core.capture.redact``, message by
message, remembering clean ones; a masked body is re-serialised and the page says
so) and zlib-compressed (level 1); the writer only inserts the row (:func:`insert`)
into ``forwarded_requests`` with what memory did. Retention is bounded: only the
newest ``keep`` rows per tenant stay, and a body over ``max_bytes`` is kept as its size alone.

:func:`request_log` and :func:`forwarded` are the operator reads (inspector, admin
API); :func:`split_body` marks the scaffold, the injection block and the tail.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from memory_core.assembly.block import split_block
from memory_core.capture.evidence import loads_lossless
from memory_core.capture.identity import CANDIDATE_BYTES
from memory_core.capture.redact import TRIGGER_BYTES, redact_value
from memory_core.compaction.compressor import ACKNOWLEDGEMENT, SCAFFOLD_HEADER
from memory_core.models import Scope
from memory_core.capture.tree import canonical_bytes
from memory_core.store.api import ForwardedRow, Tx
from memory_core.store.scrub import mask_messages

__all__ = ["forwarded", "insert", "prepare", "request_log", "split_body"]


def prepare(scope: Scope, request_id: str, body: bytes | Any, meta: dict[str, Any], *,
            max_bytes: int, redact: bool, identity: bool = False,
            dumps: Callable[[Any], bytes] | None = None,
            removed: frozenset[str] | None = None) -> ForwardedRow:
    """The ``forwarded_requests`` row for one forwarded body (any thread but the
    writer: this is the costly part, about 5-9 ms for a 1000-turn body of 380 KiB).

    ``body``: the bytes forwarded, or the dict the caller serialises with ``dumps``
    (the same function, so the bytes are the same). ``meta``: ``state``,
    ``thread_id``, ``model``, ``stream``, ``client_bytes``, ``tools_added``,
    ``compacted_messages``. With ``redact``, secrets are masked
    (``memory_core.capture.redact``), with ``identity`` identity and payment numbers
    (``memory_core.capture.identity``), and the masked body re-serialised with ``dumps``.
    ``removed``: content hashes of the tenant's redacted messages
    (:mod:`memory_core.store.redaction`): the client still sends them, the row stores
    the placeholder in their place.
    """
    dumps = dumps or orjson.dumps
    raw = bytes(body if isinstance(body, bytes | bytearray) else dumps(body))
    size = len(raw)
    redacted = False
    stored: bytes | None = None
    if removed and size <= max_bytes:
        parsed = body if isinstance(body, dict) else loads_lossless(raw)
        kept = mask_messages(parsed, removed, _digest)
        if kept is not None:
            body, raw, redacted = kept, dumps(kept), True
    if size <= max_bytes:
        if (redact or identity) and (size > _SCAN_WHOLE_MAX
                                     or _has_trigger(raw, redact, identity)):
            masked = _masked(raw, body if isinstance(body, dict) else None,
                             {"secrets": redact, "identity": identity})
            if masked is not None:
                raw, redacted = dumps(masked), True
        stored = zlib.compress(raw, 1)
    return ForwardedRow(
        request_id, scope.tenant, scope.role, meta.get("thread_id"), time.time(),
        str(meta.get("state") or "skipped"), meta.get("model"),
        int(bool(meta.get("stream"))), int(meta.get("client_bytes") or 0), size, stored,
        int(stored is None), int(redacted), int(bool(meta.get("tools_added"))),
        int(meta.get("compacted_messages") or 0))


def _digest(message: Any) -> str:
    """The capture's content hash of one message (``messages.content_hash``)."""
    return hashlib.sha256(canonical_bytes(message)).hexdigest()


def insert(tx: Tx, row: ForwardedRow, keep: int) -> int:
    """Insert a :func:`prepare` row, then delete its tenant's rows beyond the newest
    ``keep`` (at least 1). Writer job (``store.write_tx``); returns the row id."""
    return tx.forwarded.insert(row, keep)


_CLEAN: OrderedDict[bytes, None] = OrderedDict()
_CLEAN_MAX = 50_000
"""Digests of messages already found free of secrets (the one preparing thread), each
after the flags it was scanned under. A long
conversation is forwarded again on every turn: only its new messages are scanned."""


_SCAN_WHOLE_MAX = 32 * 1024
"""Bodies up to this size are first tested for any trigger of the redaction at all
(``TRIGGER_BYTES``: it used to be a shorter list of its own, which let a stated
password, a Stripe key or a URL's password through unmasked); larger ones go message
by message through the cache of clean messages at once (a 380 KiB, 1000-turn body:
about 3 ms)."""


def _has_trigger(raw: bytes, secrets: bool, identity: bool) -> bool:
    if secrets:
        folded = raw.lower()
        if any(t in folded for t in TRIGGER_BYTES):
            return True
    return identity and CANDIDATE_BYTES.search(raw) is not None


def _masked(raw: bytes, parsed: dict[str, Any] | None, flags: dict[str, bool]) -> Any:
    """The body with secrets masked, or ``None`` when it holds none.

    Messages are checked one by one (each a bounded regex run, not one over the whole
    body) and remembered when clean, so an unchanged history costs a digest each."""
    value = parsed if parsed is not None else loads_lossless(raw)
    if not isinstance(value, dict):
        out = redact_value(value, **flags)
        return None if out == value else out
    given = value.get("messages")
    messages = given if isinstance(given, list) else []
    changed = False
    new_messages = []
    policy = b"%d%d" % (flags["secrets"], flags["identity"])  # clean under these flags
    for msg in messages:
        try:
            key = policy + hashlib.blake2b(orjson.dumps(msg), digest_size=16).digest()
        except (TypeError, orjson.JSONEncodeError):
            key = None
        if key is not None and key in _CLEAN:
            _CLEAN.move_to_end(key)
            new_messages.append(msg)
            continue
        masked = redact_value(msg, **flags)
        if masked != msg:
            changed = True
        elif key is not None:
            _CLEAN[key] = None
            if len(_CLEAN) > _CLEAN_MAX:
                _CLEAN.popitem(last=False)
        new_messages.append(masked)
    rest = {k: v for k, v in value.items() if k != "messages"}
    masked_rest = redact_value(rest, **flags)
    if not changed and masked_rest == rest:
        return None
    out = dict(masked_rest)
    if "messages" in value:
        out["messages"] = new_messages
    return {k: out[k] for k in value}  # the client's field order


def request_log(tx: Tx, *, tenant: str | None = None, role: str | None = None,
                thread_id: int | None = None, limit: int = 50, offset: int = 0
                ) -> dict[str, Any]:
    """The newest forwarded requests of a scope, with their outcome.

    Returns ``{total, requests: [{id, request_id, tenant, role, thread_id, created_at,
    state, model, stream, client_bytes, body_bytes, body_omitted, redacted,
    tools_added, compacted_messages, latency_s, status, outcome, usage,
    injection: {used_tokens, budget_tokens, trigger, items} | None}]}``. ``latency_s``
    is from the request's capture to its answer's capture (seconds; ``None`` while
    unanswered); ``status``/``outcome``/``usage`` come from the response event.
    """
    total, rows = tx.forwarded.page(tenant=tenant, role=role, thread_id=thread_id,
                                    limit=max(0, limit), offset=max(0, offset))
    for r in rows:
        r.update(_outcome(tx, r["request_id"], r["tenant"]))
    return {"total": total, "requests": rows}


def _outcome(tx: Tx, request_id: str, tenant: str) -> dict[str, Any]:
    out: dict[str, Any] = {"latency_s": None, "status": None, "outcome": None,
                           "usage": None, "injection": None}
    started = None
    for ev in tx.forwarded.request_events(request_id, tenant):
        if ev["kind"] == "request":
            started = ev["created_at"]
            continue
        data = loads_lossless(ev["data"])
        if started is not None:
            out["latency_s"] = round(ev["created_at"] - started, 3)
        if isinstance(data, dict):
            out["status"] = data.get("status")
            out["outcome"] = data.get("outcome")
            out["usage"] = data.get("usage") if isinstance(data.get("usage"), dict) else None
            if data.get("model") and isinstance(data.get("model"), str):
                out["answer_model"] = data["model"]
    a = tx.forwarded.request_assembly(request_id, tenant)
    if a is not None:
        data = orjson.loads(a["data"])
        out["injection"] = {
            "trigger": a["trigger"], "used_tokens": a["used_tokens"],
            "budget_tokens": a["budget_tokens"], "skipped": data.get("skipped"),
            "items": sum(1 for r in data.get("included", []) if r.get("section") == "items")}
    return out


def forwarded(tx: Tx, request_id: str, *, tenant: str | None = None,
              role: str | None = None) -> dict[str, Any] | None:
    """One forwarded request with its body and assembly log, or ``None``.

    Returns the :func:`request_log` row plus ``body`` (the forwarded JSON text, or
    ``None`` when omitted for size), ``parsed`` (that JSON parsed, or ``None``) and
    ``assembly`` (the assembly log row with ``data`` parsed, or ``None``).
    """
    out = tx.forwarded.by_request(request_id, tenant=tenant, role=role)
    if out is None:
        return None
    blob = out.pop("body")
    text = None if blob is None else zlib.decompress(blob).decode("utf-8", "replace")
    out["body"] = text
    try:
        out["parsed"] = None if text is None else loads_lossless(text)
    except ValueError:
        out["parsed"] = None
    out.update(_outcome(tx, request_id, out["tenant"]))
    a = tx.forwarded.request_assembly(request_id, out["tenant"])
    out["assembly"] = None
    if a is not None:
        out["assembly"] = a
        out["assembly"]["data"] = loads_lossless(a["data"])
    return out


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict):
        first = content[0]
        if first.get("type") == "text" and isinstance(first.get("text"), str):
            return first["text"]
    return None


def split_body(parsed: Any, *, injected: bool = True) -> dict[str, Any]:
    """Mark the parts of a forwarded body: which message is the summary scaffold (and
    its acknowledgement), which carries the injection block, and the tail after them.

    Returns ``{messages: [{index, role, part, block, text, message}], tools:
    [definition, …], other: {field: value}}`` where ``part`` is ``scaffold``,
    ``acknowledgement``, ``tail`` (messages after the scaffold, or all without one) and
    ``block`` is the injection block's text when this message starts with it (its
    ``text`` is then the rest; only with ``injected``, i.e. the request's memory
    state says a block was injected); ``text`` is ``None`` for content that is not
    text. Never raises on a body of another shape.
    """
    body = parsed if isinstance(parsed, dict) else {}
    given = body.get("messages")
    messages = given if isinstance(given, list) else []
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        m = msg if isinstance(msg, dict) else {}
        role = m.get("role") if isinstance(m.get("role"), str) else "?"
        text = _text_of(m.get("content"))
        part, block = "tail", None
        if role == "user" and text is not None and text.startswith(SCAFFOLD_HEADER):
            part = "scaffold"
        elif (role == "assistant" and text == ACKNOWLEDGEMENT and out
              and out[-1]["part"] == "scaffold"):
            part = "acknowledgement"
        elif injected and role == "user" and text is not None \
                and (split := split_block(text)) is not None:
            block, text = split
        out.append({"index": i, "role": role, "part": part, "block": block, "text": text,
                    "message": msg})
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    other = {k: v for k, v in body.items() if k not in ("messages", "tools")}
    return {"messages": out, "tools": tools, "other": other}
