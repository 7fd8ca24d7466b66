"""Evidence capture: store each message once as a node of the conversation tree.

These functions run as write jobs of the store (``store.write_tx``: they take the
job's :class:`~memory_core.store.api.Tx` as first argument and reach the database
through its ``capture`` group only). See DESIGN §3 for the tree: an incoming
``messages`` list is matched to its longest stored prefix; what follows is new.
Continuing a thread's head extends that thread; continuing from any other node
forks a new thread (``parent_thread_id``/``fork_message_id``).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any

import orjson

from memory_core.capture.redact import may_need_redaction, redact_text, redact_value
from memory_core.capture.tree import (
    ChainKeyCache,
    canonical_bytes,
    canonical_message,
    chain_keys,
    dumps_deep,
    message_text,
    node_key,
)
from memory_core.config import MemoryConfig
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.api import MessageRow, NodeRef, Row, Tx
from memory_core.store.scrub import PLACEHOLDER, redacted_raw
from memory_core.tokens import count_tokens

_DEFAULT_CONFIG = MemoryConfig()
"""What capture stores when the caller passes no config: secrets redacted, raw JSON kept."""


def dumps_lossless(value: Any) -> str:
    """Serialise any parsed JSON value to text without loss.

    orjson is tried first; values it rejects (lone surrogates, integers beyond 64
    bits, non-str keys, nesting past 254 levels) fall back to the stdlib encoder
    with ASCII escapes, and nesting past the recursion limit to an iterative one.
    """
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, UnicodeDecodeError, orjson.JSONEncodeError):
        pass
    try:
        return json.dumps(value, ensure_ascii=True, default=repr)
    except RecursionError:
        return dumps_deep(value)


def stored_forms(message: Any, config: MemoryConfig | None = None) -> tuple[str, str]:
    """Return ``(text, raw_json)`` to store for ``message`` under ``config``.

    With ``redact_secrets`` (the default) every secret pattern of
    :mod:`memory_core.capture.redact` is masked in both, with
    ``redact_identity_numbers`` (the default) every identity and payment number
    (:mod:`memory_core.capture.identity`). Without ``store_raw_json`` the raw
    JSON is reduced to the message's canonical fields (role, name, tool calls…)
    with ``content`` replaced by the stored text, so extra fields, images and audio
    are not kept. Node keys never depend on these forms: they are computed from the
    original message, so a replay still maps to the same node.
    """
    cfg = config or _DEFAULT_CONFIG
    text = storable_text(message_text(message))
    raw = message
    raw_json = dumps_lossless(message)
    # The JSON text holds every string of the message, so one cheap scan of it clears
    # the common case (no secret anywhere) without walking the message.
    flags = redaction(cfg)
    if may_need_redaction(raw_json, **flags):
        text = redact_text(text, **flags)
        raw = redact_value(message, **flags)
        if raw is not message:
            raw_json = dumps_lossless(raw)
    if not cfg.store_raw_json:
        raw = canonical_message(raw)
        if "raw" not in raw:
            raw["content"] = text or None
        raw_json = dumps_lossless(raw)
    return text, raw_json


def redaction(config: MemoryConfig) -> dict[str, bool]:
    """The flags of :func:`memory_core.capture.redact.redact_text` and
    ``redact_value`` that ``config`` asks capture for."""
    return {"secrets": config.redact_secrets, "identity": config.redact_identity_numbers}


def loads_lossless(text: str | bytes) -> Any:
    """Parse what :func:`dumps_lossless` wrote: orjson, else the stdlib (which also
    reads escaped lone surrogates and integers past 64 bits exactly)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def storable_text(text: str) -> str:
    """Return ``text`` as SQLite can store it: lone surrogates become U+FFFD.

    A truncated emoji arrives as an escaped lone surrogate (``"\\ud83d"``), which
    the stdlib JSON parser accepts but UTF-8 cannot encode; the searchable text gets
    a replacement character while ``raw_json`` keeps the original escape.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class _Nodes:
    """The node lookups of one capture job in ``scope``.

    Each key is read at most once a job (found or not): no other write runs
    between the job's statements (one writer; on PostgreSQL every write batch
    holds one advisory lock), and the job's own inserts are recorded
    (:meth:`stored`). :meth:`prefetch` reads the keys a job will likely ask for in
    one statement, so that the usual capture (a history resent with one or two new
    messages) makes one node lookup instead of six or seven (a round trip each on
    PostgreSQL).
    """

    __slots__ = ("_heads", "_known", "scope", "thread", "tx")

    def __init__(self, tx: Tx, scope: Scope) -> None:
        self.tx, self.scope = tx, scope
        self._known: dict[str, NodeRef | None] = {}
        self._heads: dict[int, Row | None] = {}
        self.thread: Row | None = None
        """The ends of the thread :meth:`prefetch` was asked for."""

    def prefetch(self, keys: list[str], thread_id: int | None = None) -> None:
        """Read those of ``keys`` not read yet, with the threads they head and the
        ends of thread ``thread_id`` (:attr:`thread`), in one statement."""
        want = [k for k in dict.fromkeys(keys) if k not in self._known]
        if not want and thread_id is None:
            return
        s = self.scope
        got = self.tx.capture.node_reads(s.tenant, s.role, s.session, want, thread_id)
        for key in want:
            ref = got.nodes.get(key)
            self._known[key] = ref
            if ref is not None:
                self._heads[ref.id] = got.heads.get(ref.id)
        self.thread = got.thread

    def thread_with_head(self, head_id: int) -> Row | None:
        """``{id, updated_at}`` of the oldest thread of the scope whose head is
        ``head_id`` (read with the node when :meth:`prefetch` found it: no thread
        moves before the job's own writes)."""
        if head_id in self._heads:
            return self._heads[head_id]
        s = self.scope
        return self.tx.capture.thread_with_head(s.tenant, s.role, s.session, head_id)

    def get(self, key: str) -> NodeRef | None:
        """The stored message of node ``key``, or ``None``."""
        if key not in self._known:
            s = self.scope
            self._known[key] = self.tx.capture.node(s.tenant, s.role, s.session, key)
        return self._known[key]

    def stored(self, key: str, ref: NodeRef) -> None:
        """Record a message this job inserted."""
        self._known[key] = ref


_PREFETCH = 8
"""Trailing keys of a request that :func:`capture_request` reads at once: the
checks of :func:`matched_prefix` (the last three) and the path cache's
(:data:`_CACHE_REACH` nodes back from the stored prefix)."""


def matched_prefix(nodes: _Nodes, keys: list[str]) -> int:
    """Return how many leading keys of ``keys`` are already stored in ``scope``.

    A node is only ever stored after its parent, so existence is monotone along the
    chain and a binary search needs O(log n) lookups; the common cases (a pure
    replay, or one or two new messages) are checked first.
    """
    n = len(keys)
    if n == 0:
        return 0
    for k in (n, n - 1, n - 2):
        if k <= 0:
            break
        if nodes.get(keys[k - 1]) is not None:
            if k == n or nodes.get(keys[k]) is None:
                return k
            break
    lo, hi = 0, n  # invariant: keys[:lo] stored, keys[hi:] not stored
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if nodes.get(keys[mid - 1]) is not None:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PathIdCache:
    """Stored ids of recently captured paths, so a resent history needs no walk.

    Maps ``(tenant, role, session, node key)`` to the ids of that node's path, root
    first; at most ``max_paths`` paths (least recently used dropped). Filled only
    with committed rows (the engine calls :meth:`put` once a capture's future
    resolves, after COMMIT). Message ids are AUTOINCREMENT and a node never moves,
    so a path whose last id still matches its key's row is still exact; a purged
    path fails that check and is walked again. Thread-safe.
    """

    def __init__(self, max_paths: int = 256) -> None:
        self._max = max_paths
        self._paths: OrderedDict[tuple[str, str, str, str], tuple[int, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, scope: Scope, key: str, ids: tuple[int, ...]) -> None:
        """Remember ``ids`` as the path ending at node ``key`` in ``scope``."""
        with self._lock:
            self._paths[(scope.tenant, scope.role, scope.session, key)] = ids
            self._paths.move_to_end((scope.tenant, scope.role, scope.session, key))
            while len(self._paths) > self._max:
                self._paths.popitem(last=False)

    def get(self, scope: Scope, key: str) -> tuple[int, ...] | None:
        """The remembered path ending at ``key``, or ``None``."""
        with self._lock:
            return self._paths.get((scope.tenant, scope.role, scope.session, key))


_CACHE_REACH = 4
"""How many nodes back from a request's stored prefix :func:`_prefix_ids` looks for
a remembered path (the previous request's head is usually 1–2 nodes back: the
reply, and the tool results of a tool round)."""


def _prefix_ids(nodes: _Nodes, keys: list[str], k: int,
                cache: PathIdCache | None = None) -> list[int]:
    """Return the stored ids of ``keys[:k]`` (all stored), root first.

    A node key hashes its parent's key, so the stored ancestors of ``keys[k-1]`` are
    exactly ``keys[:k-1]``: one recursive walk up ``parent_id`` replaces ``k``
    separate lookups (a 2 000-message history is resent on every call). With a
    ``cache`` holding the path of one of the last few nodes, only the nodes after
    it are looked up (about 0.1 ms instead of 5 ms at 2 000 messages).
    """
    if k == 0:
        return []
    if cache is not None:
        for j in range(k, max(0, k - _CACHE_REACH), -1):
            known = cache.get(nodes.scope, keys[j - 1])
            if known is None or len(known) != j:
                continue
            row = nodes.get(keys[j - 1])
            if row is None or row.id != known[-1]:
                break
            tail = [nodes.get(key) for key in keys[j:k]]
            if all(r is not None for r in tail):
                return [*known, *(r.id for r in tail if r is not None)]
            break
    last = nodes.get(keys[k - 1])
    assert last is not None
    ids = nodes.tx.capture.path_ids(last.id)
    if len(ids) == k:
        return ids
    # Not a plain chain (should not happen): look each key up.
    out = []
    for key in keys[:k]:
        row = nodes.get(key)
        assert row is not None
        out.append(row.id)
    return out


def _answers_tool_use(message: dict[str, Any]) -> bool:
    """True for an Anthropic Messages user message that opens with ``tool_result``
    blocks (the API wants them first in the turn that answers a ``tool_use``), with
    or without text after them (Claude Code appends reminders there): stored with
    ``msg_role`` ``tool``, so that compaction keeps it with the ``tool_use`` it
    answers (a boundary between them is a request the API refuses) and user turns
    are counted right. Extraction reads the message's own role, so the text after
    the results is still read as the user's. Its ``raw_json`` stays as sent."""
    content = message.get("content")
    return isinstance(content, list) and bool(content) and isinstance(content[0], dict) \
        and content[0].get("type") == "tool_result"


def _insert_message(
    tx: Tx,
    scope: Scope,
    thread_id: int,
    key: str,
    parent_key: str | None,
    parent_id: int | None,
    depth: int,
    message: Any,
    kind: str,
    now: float,
    request_id: str | None,
    hidden: bool = False,
    config: MemoryConfig | None = None,
    zone: str = "",
    masked: frozenset[str] | None = None,
) -> int:
    return tx.capture.insert_message(_message_row(
        scope, thread_id, key, parent_key, parent_id, depth, message, kind, now,
        request_id, hidden, config, zone, masked))


def _message_row(
    scope: Scope,
    thread_id: int,
    key: str,
    parent_key: str | None,
    parent_id: int | None,
    depth: int,
    message: Any,
    kind: str,
    now: float,
    request_id: str | None,
    hidden: bool = False,
    config: MemoryConfig | None = None,
    zone: str = "",
    masked: frozenset[str] | None = None,
) -> MessageRow:
    """The stored row of ``message``; ``zone``: the time zone it was said in, as
    stored (``""``: UTC, kept as NULL). A message whose content hash is in
    ``masked`` (one an operator redacted, said again: :attr:`CaptureTicket.masked`)
    is stored as the redaction left it: the placeholder, no content."""
    canon = canonical_bytes(message)
    digest = hashlib.sha256(canon).hexdigest()
    if masked and digest in masked:
        text, raw_json = PLACEHOLDER, redacted_raw(dumps_lossless(message))
    else:
        text, raw_json = stored_forms(message, config)
    role = message.get("role") if isinstance(message, dict) else None
    if role == "user" and _answers_tool_use(message):
        role = "tool"  # an Anthropic tool_result turn: a tool result, not a user turn
    return MessageRow(
        scope.tenant,
        scope.role,
        scope.session,
        thread_id,
        key,
        parent_key,
        parent_id,
        depth,
        role if isinstance(role, str) else None,
        kind,
        text,
        raw_json,
        digest,
        count_tokens(text),
        now,
        1 if hidden else 0,
        request_id,
        zone or None,
    )


def _new_thread(
    tx: Tx,
    scope: Scope,
    now: float,
    parent_thread_id: int | None = None,
    fork_message_id: int | None = None,
) -> int:
    return tx.capture.new_thread(scope.tenant, scope.role, scope.session, now,
                                 parent_thread_id, fork_message_id)


def _calls(message: Any) -> list[Any]:
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return calls if isinstance(calls, list) and message.get("role") == "assistant" else []


def _is_result(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "tool"


def regroup_calls(nodes: _Nodes, messages: list[Any], keys: list[str], k: int,
                  legacy: bool = False) -> tuple[list[Any], list[int]] | None:
    """A stored arrangement of a request whose stored prefix ends inside a tool round.

    A model's parallel calls are one stored reply (one assistant turn with every
    call), but a client may echo them interleaved with their results (call 1,
    result 1, call 2, result 2: the Responses API's items allow it), or the results
    in another order than it sent them before. From the assistant turn with calls
    at or just before ``k`` (the first unstored message), the later assistant
    turns that carry only calls (no text) are merged into it and the results are
    ordered as stored (greedily, the rest as sent). Returns ``(messages in that
    arrangement, index in it of each request message)`` when it is stored further
    than ``keys[:k]``; ``None`` otherwise. A sequence of separate rounds stays as
    it is: only a merged turn the store holds (the reply that made the calls) is
    taken. ``legacy``: ``keys`` are :func:`~memory_core.capture.tree.chain_keys`'s
    legacy keys.
    """
    s = k
    while s > 0 and _is_result(messages[s]):
        s -= 1
    if not _calls(messages[s]):
        return None
    calls = list(_calls(messages[s]))
    merged_at: list[int] = [s]
    results: list[int] = []
    end = s + 1
    while end < len(messages):
        msg = messages[end]
        if _is_result(msg):
            results.append(end)
        elif _calls(msg) and msg.get("content") in (None, "", []) and results:
            calls.extend(_calls(msg))
            merged_at.append(end)
        else:
            break
        end += 1
    if len(merged_at) == 1 and len(results) < 2:
        return None
    merged = dict(messages[s], tool_calls=calls) if len(merged_at) > 1 else messages[s]
    parent = keys[s - 1] if s else None
    key = node_key(parent, merged, legacy=legacy)
    if nodes.get(key) is None:
        return None
    ordered: list[int] = []
    left = list(results)
    while left:
        for i in left:
            child = node_key(key, messages[i], legacy=legacy)
            if nodes.get(child) is not None:
                ordered.append(i)
                left.remove(i)
                key = child
                break
        else:
            ordered.extend(left)
            break
    if len(merged_at) == 1 and ordered == results:
        return None  # the arrangement as sent
    out = [*messages[:s], merged, *(messages[i] for i in ordered), *messages[end:]]
    folded = len(messages) - len(out)
    place = {i: s + 1 + n for n, i in enumerate(ordered)}
    place.update(dict.fromkeys(merged_at, s))
    index = [place.get(i, i if i < s else i - folded) for i in range(len(messages))]
    return out, index


def _same_scrubbed(stored: str, text: str) -> bool:
    """Whether a request message's ``text`` is what a redaction left of the stored
    message whose text is ``stored``: the same text, or, for the redacted message
    itself (``stored`` is the placeholder), placeholders only (its content parts each
    became one, and ``message_text`` joins them)."""
    if stored == text:
        return True
    return stored == PLACEHOLDER and not text.replace(PLACEHOLDER, "").strip()


def _continue_redacted(nodes: _Nodes, messages: list[Any], keys: list[str], k: int,
                       legacy: bool) -> tuple[list[str], int]:
    """Keys that continue a redacted node where the request holds its placeholder.

    A redacted message keeps its node key (the hash of the text it had), and the
    copies of a Responses API chain are kept with the placeholder in its place
    (:mod:`memory_core.store.redaction`): rebuilt from them after a restart, the
    conversation's message ``k`` holds :data:`~memory_core.store.scrub.PLACEHOLDER`
    and hashes to no stored node. It continues instead the stored child of the same
    parent, of the same role, whose stored text is its text (the redaction scrubbed
    both alike; a message of several parts is placeholders only,
    :func:`_same_scrubbed`; of several, the one the rest of the request continues furthest), and
    the keys after it are hashed from that node's key. A new message that merely
    quotes the placeholder differs in its text and is stored as usual. Repeated
    while the next unstored message holds the placeholder too. Returns ``(keys,
    matched prefix)``, the arguments unchanged when no such node is stored."""
    while k < len(messages) and PLACEHOLDER in message_text(messages[k]):
        parent = nodes.get(keys[k - 1]) if k else None
        if k and parent is None:
            break
        s, msg = nodes.scope, messages[k]
        role = msg.get("role") if isinstance(msg, dict) else None
        text = storable_text(message_text(msg))
        found = nodes.tx.capture.redacted_children(
            s.tenant, s.role, s.session, parent.id if parent is not None else None,
            PLACEHOLDER)
        best: tuple[int, list[str]] | None = None
        for node, stored, msg_role in found:
            if msg_role != role or not _same_scrubbed(stored, text):
                continue
            tried = [*keys[:k], node, *chain_keys(messages[k + 1:], node, legacy=legacy)]
            reach = matched_prefix(nodes, tried)
            if best is None or reach > best[0]:
                best = (reach, tried)
        if best is None or best[0] <= k:
            break
        k, keys = best
    return keys, k


def _first_renormalised(messages: list[Any], k: int) -> int | None:
    """The index of the first message whose canonical form differs from its legacy
    form, looking no further than ``k`` (``None``: none up to ``k``). Checks
    ``messages[k]`` first, the usual answer: a continued path is already past it."""
    if canonical_bytes(messages[k]) == canonical_bytes(messages[k], legacy=True):
        return None
    for i in range(k):
        if canonical_bytes(messages[i]) != canonical_bytes(messages[i], legacy=True):
            return i
    return k


def capture_request(
    tx: Tx,
    ticket: CaptureTicket,
    messages: list[Any],
    event: dict[str, Any],
    now: float | None = None,
    *,
    config: MemoryConfig | None = None,
    key_cache: ChainKeyCache | None = None,
    path_cache: PathIdCache | None = None,
) -> CaptureResult:
    """Store the messages of one request that are not stored yet (writer job).

    ``messages`` is the request's ``messages`` array as parsed. Idempotent: a replay
    of the same list stores nothing. Parallel tool calls echoed in another order than
    stored continue the stored path (:func:`regroup_calls`). Fills ``ticket.result``
    and also records a ``request`` event carrying ``event`` (model, stream flag…) plus
    the new ids.
    ``config``: what is stored (secret redaction, raw JSON; see :func:`stored_forms`).
    ``key_cache``: reuse the node keys of a history seen before (same result, less
    hashing; see :class:`~memory_core.capture.tree.ChainKeyCache`). ``path_cache``: the
    stored ids of recent paths (:class:`PathIdCache`; the caller fills it after
    commit).
    """
    scope = ticket.scope
    now = time.time() if now is None else now
    keys = key_cache.keys(messages) if key_cache is not None else chain_keys(messages)
    nodes = _Nodes(tx, scope)
    nodes.prefetch(keys[-_PREFETCH:])
    k = matched_prefix(nodes, keys)
    legacy = False
    if k < len(messages) and _first_renormalised(messages, k) == k:
        # Message k is spelled as only the legacy form tells apart, and every
        # earlier one hashes alike in both forms: the path may have been stored
        # before content was normalised. Its legacy keys then go on matching it.
        keys_l = [*keys[:k], *chain_keys(messages[k:], keys[k - 1] if k else None,
                                         legacy=True)]
        k_l = matched_prefix(nodes, keys_l)
        if k_l > k:
            keys, k, legacy = keys_l, k_l, True
    if k < len(messages) and PLACEHOLDER in message_text(messages[k]):
        keys, k = _continue_redacted(nodes, messages, keys, k, legacy)
    index: list[int] | None = None  # request message → its place in the stored path
    if 0 < k < len(messages):
        regrouped = regroup_calls(nodes, messages, keys, k, legacy)
        if regrouped is not None:
            keys_r = chain_keys(regrouped[0], legacy=legacy)
            k_r = matched_prefix(nodes, keys_r)
            if sum(1 for i in regrouped[1] if i < k_r) > k:
                messages, index = regrouped
                keys, k = keys_r, k_r
    ids = _prefix_ids(nodes, keys, k, path_cache if index is None else None)
    created = False
    replay_only = False
    previous: float | None = None
    if k == 0:
        thread_id = _new_thread(tx, scope, now) if messages else 0
        created = bool(messages)
    else:
        prefix_row = nodes.get(keys[k - 1])
        assert prefix_row is not None
        head = nodes.thread_with_head(ids[-1])
        if head is not None:
            thread_id = int(head["id"])
            previous = float(head["updated_at"])
        elif k == len(keys):
            # Every message is stored and the last one is no thread's head: a retry
            # or a "regenerate". No head moves (the thread keeps its own answer);
            # capture_response forks a branch if a different answer comes back.
            replay_only = True
            thread_id = prefix_row.thread_id
            previous = tx.capture.thread_updated_at(thread_id)
        else:
            thread_id = _new_thread(
                tx, scope, now, prefix_row.thread_id, prefix_row.id
            )
            created = True
    # The new messages, a chain under the stored prefix: one insert (one round
    # trip on PostgreSQL) however many.
    new_ids = tx.capture.insert_chain([
        _message_row(scope, thread_id, keys[i], keys[i - 1] if i else None,
                     ids[-1] if ids else None, i, messages[i], "request", now,
                     ticket.request_id, config=config, zone=ticket.zone,
                     masked=ticket.masked)
        for i in range(k, len(messages))])
    for i, mid in zip(range(k, len(messages)), new_ids, strict=True):
        nodes.stored(keys[i], NodeRef(mid, thread_id, i))
        ids.append(mid)
    has_user = any(isinstance(msg, dict) and msg.get("role") == "user"
                   for msg in messages[k:])
    if thread_id:
        if created:
            tx.capture.fill_thread_root(thread_id, ids[0] if ids else None)
        if replay_only:
            tx.capture.touch_thread(thread_id, now)
        else:
            tx.capture.extend_thread(thread_id, ids[-1] if ids else None, now, has_user)
    result = CaptureResult(
        thread_id=thread_id,
        message_ids=tuple(ids) if index is None else tuple(ids[i] for i in index),
        new_ids=tuple(new_ids),
        head_id=ids[-1] if ids else None,
        head_key=keys[-1] if keys else None,
        created_thread=created,
        previous_activity_at=previous,
        path_ids=() if index is None else tuple(ids),
        legacy_keys=legacy,
    )
    ticket.result = result
    data = dict(event)
    data.update(n_messages=len(messages), new_ids=new_ids, created_thread=created)
    record_event(tx, ticket, "request", data, thread_id=thread_id, now=now, config=config,
                 returning=False)
    return result


def capture_response(
    tx: Tx,
    ticket: CaptureTicket,
    choices: list[Any],
    event: dict[str, Any],
    now: float | None = None,
    hidden_rounds: list[Any] | None = None,
    upstream_view: list[Any] | None = None,
    *,
    config: MemoryConfig | None = None,
) -> list[int]:
    """Store the assistant message of each choice as a child of the request's last node.

    ``choices`` are assistant message dicts in choice-index order (index 0 moves the
    thread head), exactly as the client saw them, so that the client's echo of the
    reply maps to its node. ``hidden_rounds`` are the messages of memory-tool
    exchanges the client never saw; they are stored (``hidden=1``) as a side branch
    under the request's last message. ``upstream_view`` is what the model actually
    produced and read in place of choice 0 (hidden calls and results included); it
    is recorded in ``splices`` so later requests show the model its own history.
    When the request capture failed the whole response is kept in the event instead,
    so nothing is lost. Returns the stored ids (existing ids for an identical reply).
    ``config``: what is stored (secret redaction, raw JSON; see :func:`stored_forms`).
    """
    now = time.time() if now is None else now
    result = ticket.result
    if result is None or not result.thread_id:
        data = dict(event)
        data["orphan_choices"] = choices
        record_event(tx, ticket, "response", data, now=now, config=config, returning=False)
        return []
    scope = ticket.scope
    parent_key, parent_id = result.head_key, result.head_id
    # One statement reads the request's last node (its depth) and the nodes this
    # answer may already have (a replayed answer, hidden rounds): see _Nodes.
    nodes = _Nodes(tx, scope)
    legacy = result.legacy_keys
    want = [parent_key] if parent_key is not None else []
    h_key = parent_key
    for msg in hidden_rounds or []:
        h_key = node_key(h_key, msg, legacy=legacy)
        want.append(h_key)
    want += [node_key(parent_key, msg, legacy=legacy) for msg in choices]
    nodes.prefetch(want, result.thread_id)
    head = nodes.get(parent_key) if parent_key is not None else None
    parent_depth = (head.depth if head is not None and head.id == parent_id
                    else tx.capture.message_depth(parent_id))
    depth = parent_depth + 1 if parent_depth is not None else 0
    thread = nodes.thread
    # The request's last message is no longer its thread's head when this is a
    # regenerate (or another answer extended the thread meanwhile): a *new* answer
    # then forks a branch instead of being filed under a thread it is not on.
    must_fork = (
        thread is not None
        and thread["head_message_id"] is not None
        and thread["head_message_id"] != result.head_id
    )
    thread_id = result.thread_id
    forked = False

    def store(msg: Any, kind: str, hidden: bool, parent_key: str | None = parent_key,
              parent_id: int | None = parent_id, depth: int = depth) -> int:
        nonlocal thread_id, forked
        key = node_key(parent_key, msg, legacy=legacy)
        existing = nodes.get(key)
        if existing is not None:
            return existing.id
        if must_fork and not forked:
            thread_id = _new_thread(tx, scope, now, result.thread_id, parent_id)
            # must_fork: the request's thread exists; the branch shares its root
            tx.capture.fill_thread_root(thread_id, thread["root_message_id"] if thread else None)
            forked = True
        mid = _insert_message(
            tx, scope, thread_id, key, parent_key, parent_id, depth, msg, kind, now,
            ticket.request_id, hidden=hidden, config=config, zone=ticket.zone,
            masked=ticket.masked,
        )
        nodes.stored(key, NodeRef(mid, thread_id, depth))
        return mid

    hidden_ids: list[int] = []
    h_key, h_id, h_depth = parent_key, parent_id, depth
    for msg in hidden_rounds or []:
        mid = store(msg, "hidden", True, h_key, h_id, h_depth)
        hidden_ids.append(mid)
        h_key, h_id, h_depth = node_key(h_key, msg, legacy=legacy), mid, h_depth + 1
    ids: list[int] = []
    for msg in choices:
        ids.append(store(msg, "response", False))
    if ids and upstream_view is not None:
        flags = redaction(config or _DEFAULT_CONFIG)
        if any(flags.values()):  # stored like any other evidence
            upstream_view = redact_value(upstream_view, **flags)
        tx.capture.save_splice(ids[0], scope.tenant, scope.role,
                               dumps_lossless(upstream_view), dumps_lossless(hidden_ids))
    if forked:
        tx.capture.set_head(thread_id, ids[0] if ids else parent_id, now)
    elif ids:
        tx.capture.advance_head(result.thread_id, ids[0], now, result.head_id)
    data = dict(event)
    data["message_ids"] = ids
    if hidden_ids:
        data["hidden_message_ids"] = hidden_ids
    if forked:
        data["forked_thread_id"] = thread_id
    record_event(tx, ticket, "response", data, thread_id=thread_id, now=now, config=config,
                 returning=False)
    return ids


def record_event(
    tx: Tx,
    ticket: CaptureTicket | None,
    kind: str,
    data: dict[str, Any],
    thread_id: int | None = None,
    now: float | None = None,
    *,
    config: MemoryConfig | None = None,
    returning: bool = True,
) -> int:
    """Append one row to ``events`` (what happened: request, response, unparsed, error).

    ``data`` is stored as JSON; with ``config.redact_secrets`` (the default) its
    strings are redacted first (and identity numbers masked with
    ``redact_identity_numbers``): events keep unparsed bodies, partial answers and
    upstream error bodies, which may quote a key as readily as a message does.
    Returns the row's id; ``0`` without ``returning`` (the id is not read back: no
    round trip of its own on PostgreSQL).
    """
    flags = redaction(config or _DEFAULT_CONFIG)
    if any(flags.values()):
        data = redact_value(data, **flags)
    scope = ticket.scope if ticket else None
    row = (
        ticket.request_id if ticket else data.get("request_id"),
        scope.tenant if scope else data.get("tenant"),
        scope.role if scope else data.get("role"),
        thread_id,
        kind,
        time.time() if now is None else now,
        dumps_lossless(data),
    )
    if not returning:
        tx.capture.add_event(*row)
        return 0
    return tx.capture.insert_event(*row)
