"""The storage interface: operation groups as typed Protocols, one per concern.

Code outside ``memory_core/store/`` reaches the database only through these
operations (the modules already moved behind them are listed in
``tests/test_store_boundary.py``). A backend implements every group over one
connection and hands them out together as a :class:`Tx`; its store object
(:class:`Store`) runs functions of a ``Tx`` as reads or as queued writes.

Transaction model:

- ``Store.read_tx(fn, *args)`` runs ``fn(tx, *args)`` on the calling thread with a
  read connection of its own and returns its value. Each operation reads committed
  data; two operations of one ``fn`` may see different commits (SQLite readers run
  in autocommit mode), so an operation that needs one snapshot is one operation.
- ``Store.write_tx(fn, *args, then=None)`` queues ``fn(tx, *args)`` and returns a
  ``concurrent.futures.Future`` of its value. Jobs run in the order queued (what
  ``then`` queues after the job's commit keeps the job's place); each is
  atomic (all its changes commit, or none when it raises), and the future resolves
  after the commit. Write operations may only be called inside a write job.

Values crossing the interface are plain Python: ``dict`` rows keyed by column name,
ints, floats (UNIX seconds), str and bytes (compressed blobs). No backend type
(``sqlite3.Row``, a cursor, ``lastrowid``) and no SQL text crosses it: an insert
that the caller needs the id of returns the id.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, TypeVar

T = TypeVar("T")
Row = dict[str, Any]
"""One row: column name → value, in the table's (or the query's) column order."""

OUTBOX_KINDS = {"message": "messages", "item": "memory_items",
                "agent_memory": "agent_memories", "summary": "summary_nodes"}
"""``index_outbox`` kind → the table whose rows it indexes."""


WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
              "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""Every character ``str.isspace`` accepts (what ``strip`` removes): a text of these
only is blank, and the indexer embeds no blank text."""


class PathRows(NamedTuple):
    """A thread's path (root → head) with what branches off it.

    ``messages``: ``{id, parent_id, msg_role, kind, hidden, text, tokens, created_at,
    summary_node_id, thread_id, depth}`` ordered by depth. ``children``: every
    child of a path message, ``{id, parent_id, thread_id, msg_role, text}`` by id.
    ``forks``: ``(thread id, fork_message_id)`` of threads forked at a path message,
    by thread id."""

    messages: list[Row]
    children: list[Row]
    forks: list[tuple[int, int]]


class ForwardedRow(NamedTuple):
    """One ``forwarded_requests`` row as :func:`memory_core.capture.forwarded.prepare` makes it."""

    request_id: str
    tenant: str
    role: str
    thread_id: int | None
    created_at: float
    state: str
    model: str | None
    stream: int
    client_bytes: int
    body_bytes: int
    body: bytes | None
    body_omitted: int
    redacted: int
    tools_added: int
    compacted_messages: int


class BlockBasics(NamedTuple):
    """What every injection block reads first (:meth:`AssemblyReads.block_basics`)."""

    preferences: list[Row]
    open_tasks: list[Row]
    progress: list[Row]


class NodeRef(NamedTuple):
    """Where a stored message sits: its id, its thread and its depth (root 0)."""

    id: int
    thread_id: int
    depth: int


class MessageRow(NamedTuple):
    """One ``messages`` row as :mod:`memory_core.capture.evidence` stores it (``id`` is
    assigned by the store; ``summary_node_id`` starts unset)."""

    tenant: str
    role: str
    session: str
    thread_id: int
    node_key: str
    parent_key: str | None
    parent_id: int | None
    depth: int
    msg_role: str | None
    kind: str
    text: str
    raw_json: str
    content_hash: str
    tokens: int
    created_at: float
    hidden: int
    request_id: str | None
    tz: str | None = None
    """The IANA time zone the message was said in; ``None``: UTC (and every message
    stored before zones were kept)."""


class NodeReads(NamedTuple):
    """What a capture job reads first, in one statement
    (:meth:`CaptureWrites.node_reads`)."""

    nodes: dict[str, NodeRef]
    """The stored messages of the keys asked for, by key (as :meth:`CaptureWrites.nodes`)."""
    heads: dict[int, Row]
    """For each message of ``nodes`` that is the head of a thread of the scope:
    ``{id, updated_at}`` of the oldest such thread (as
    :meth:`CaptureWrites.thread_with_head`), by message id."""
    thread: Row | None
    """``{head_message_id, root_message_id}`` of the thread asked for (as
    :meth:`CaptureWrites.thread_ends`), or ``None``."""


class CaptureWrites(Protocol):
    """The evidence tree and the event log (``memory_core.capture.evidence``): messages,
    threads, splices, events. Lookups read inside the write job that calls them.

    ``tenant``, ``role`` and ``session`` scope every node lookup: a node key is
    unique within its scope only."""

    def node(self, tenant: str, role: str, session: str, key: str) -> NodeRef | None:
        """The stored message of node ``key`` in the scope, or ``None``."""
        ...

    def redacted_children(self, tenant: str, role: str, session: str,
                          parent_id: int | None, placeholder: str
                          ) -> list[tuple[str, str, str]]:
        """``(node_key, text, msg_role)`` of the scope's messages under ``parent_id``
        (``None``: the roots) whose text holds ``placeholder``, oldest first: the
        nodes a redaction left (``memory_core.capture.evidence``)."""
        ...

    def nodes(self, tenant: str, role: str, session: str, keys: Sequence[str]
              ) -> dict[str, NodeRef]:
        """The stored messages of those of ``keys`` stored in the scope, by key (one
        statement: capture asks for the few keys it may need at once)."""
        ...

    def node_reads(self, tenant: str, role: str, session: str, keys: Sequence[str],
                   thread_id: int | None = None) -> NodeReads:
        """:meth:`nodes` of ``keys``, the threads of the scope headed by those found
        and, with ``thread_id``, that thread's ends: a capture job's first reads, one
        round trip on PostgreSQL."""
        ...

    def path_ids(self, message_id: int) -> list[int]:
        """The ids from the root of ``message_id``'s path down to it (by depth)."""
        ...

    def insert_message(self, row: MessageRow) -> int:
        """Insert ``row`` and queue its outbox ``upsert``; return its id (ids only
        grow)."""
        ...

    def insert_chain(self, rows: Sequence[MessageRow]) -> list[int]:
        """Insert ``rows`` as :meth:`insert_message` does, each after the first as the
        child of the row before it (its ``parent_id`` is that row's id, whatever the
        row says); return their ids, in order (one round trip on PostgreSQL)."""
        ...

    def new_thread(self, tenant: str, role: str, session: str, now: float,
                   parent_thread_id: int | None, fork_message_id: int | None) -> int:
        """Create a thread (created and updated at ``now``); return its id."""
        ...

    def thread_with_head(self, tenant: str, role: str, session: str, head_id: int
                         ) -> Row | None:
        """``{id, updated_at}`` of the oldest thread of the scope whose head is
        ``head_id``, or ``None``."""
        ...

    def thread_updated_at(self, thread_id: int) -> float | None:
        """When the thread last moved, or ``None`` when it does not exist."""
        ...

    def thread_ends(self, thread_id: int) -> Row | None:
        """``{head_message_id, root_message_id}`` of a thread, or ``None``."""
        ...

    def message_depth(self, message_id: int | None) -> int | None:
        """The depth of a stored message, or ``None``."""
        ...

    def fill_thread_root(self, thread_id: int, root_id: int | None) -> None:
        """Set the thread's root message unless it has one."""
        ...

    def touch_thread(self, thread_id: int, now: float) -> None:
        """Mark the thread active at ``now`` (its head stays)."""
        ...

    def extend_thread(self, thread_id: int, head_id: int | None, now: float,
                      user_turn: bool) -> None:
        """Move the thread's head to ``head_id`` at ``now``; with ``user_turn`` also
        its last user activity."""
        ...

    def set_head(self, thread_id: int, head_id: int | None, now: float) -> None:
        """Move the thread's head to ``head_id`` at ``now`` whatever it was."""
        ...

    def advance_head(self, thread_id: int, head_id: int, now: float,
                     from_head: int | None) -> None:
        """Move the thread's head to ``head_id`` at ``now`` only if it is still
        ``from_head`` or unset (another answer may have moved it)."""
        ...

    def save_splice(self, message_id: int, tenant: str, role: str, messages: str,
                    hidden_ids: str) -> None:
        """Write or replace the splice of ``message_id`` (both as JSON text)."""
        ...

    def insert_event(self, request_id: str | None, tenant: str | None, role: str | None,
                     thread_id: int | None, kind: str, created_at: float, data: str
                     ) -> int:
        """Append one ``events`` row (``data``: JSON text); return its id."""
        ...

    def add_event(self, request_id: str | None, tenant: str | None, role: str | None,
                  thread_id: int | None, kind: str, created_at: float, data: str) -> None:
        """:meth:`insert_event` without reading its id back (on PostgreSQL sent with
        the job's next statement: no round trip of its own)."""
        ...


class HistoryReads(Protocol):
    """Immutable facts of stored messages and the summary forest, read by the
    engine's in-memory caches (``memory_core.capture.message_facts``,
    ``memory_core.compaction.node_cache``).

    Lists of ids may be of any length (a backend splits them as it must)."""

    def message_outlines(self, ids: Sequence[int]) -> list[tuple[int, str | None, int | None]]:
        """``(id, msg_role, tokens)`` of each of ``ids`` that exists (any order;
        role and count as stored, ``None`` when unset)."""
        ...

    def active_summaries(self, tenant: str, role: str) -> dict[int, int | None]:
        """Every active summary node of a tenant and role: id → ``parent_id``."""
        ...

    def summary_rows(self, ids: Sequence[int]) -> list[Row]:
        """``{id, level, message_ids, text, tokens, source_tokens, model, parent_id}``
        of each of ``ids`` that exists (``message_ids`` as stored: JSON text)."""
        ...

    def path_messages(self, ids: Sequence[int]) -> list[Row]:
        """``{id, msg_role, text, tokens, raw_json, created_at}`` of each of ``ids``
        that exists (any order)."""
        ...

    def message_links(self, ids: Sequence[int]) -> list[Row]:
        """``{id, parent_id, msg_role, text}`` of each of ``ids`` that exists (any
        order): the links and turns a path is walked by, without the raw JSON."""
        ...

    def sent_as_history(self, message_id: int) -> bool:
        """Whether the request that stored ``message_id`` sent a message after it (a
        child of the same ``request_id`` and kind ``request``): the message was history
        that request carried, not its newest turn."""
        ...

    def next_turns(self, ids: Sequence[int]) -> list[Row]:
        """``{parent_id, msg_role, text}`` of every message whose parent is one of
        ``ids`` (the turns that followed them, in any request or conversation; any
        order); ``[]`` for none."""
        ...

    def message_evidence(self, ids: Sequence[int]) -> tuple[list[Row], list[Row]]:
        """What was extracted from the messages ``ids``: memory items ``{id, kind,
        text, status, source_message_id}`` and task lines ``{label, text, status,
        source_message_id}``. Order (the summary's line order): by id within each
        consecutive run of 900 of ``ids``, the runs in turn."""
        ...


class SummaryForest(Protocol):
    """The summary nodes compaction writes and ``memory status`` reports
    (``memory_core.compaction.compressor``)."""

    def nodes_within(self, tenant: str, role: str, first_id: int, last_id: int
                     ) -> list[Row]:
        """Every column of each active node of a tenant and role whose covered range
        lies within ``first_id``..``last_id``, by level, first message id, id."""
        ...

    def forest_rows(self, *, tenant: str | None, role: str | None, thread_id: int | None
                    ) -> list[Row]:
        """``{id, thread_id, level, first_message_id, last_message_id, message_ids,
        tokens, source_tokens, model, parent_id}`` of every active node (``None``
        filters: any), by level and first message id."""
        ...

    def save_node(self, *, tenant: str, role: str, thread_id: int, level: int,
                  message_ids: Sequence[int], ids_json: str, text: str, tokens: int,
                  source_tokens: int, model: str, created_at: float,
                  children: Sequence[int]) -> int:
        """Store one summary node over ``message_ids`` (``ids_json``: them as JSON
        text) and return its id; idempotent for a covered range: when an active node
        of that level already covers exactly ``ids_json``, its id, nothing written.
        A new node becomes the parent of ``children``; at level 0 it is set as the
        summary of each of its messages that has none; its outbox ``upsert`` is
        queued (write operation)."""
        ...


ITEM_ROW_COLUMNS = (
    "id", "tenant", "role", "session", "thread_id", "kind", "subject", "text", "value",
    "value_text", "unit", "condition", "status", "supersedes", "superseded_by",
    "conflict_with", "source_message_id", "evidence", "lang", "created_at", "updated_at",
    "data")
"""The ``memory_items`` columns of an item row that :class:`ItemFeed` hands out, in
this order (``data`` holds the speaker and ordinal label the block reads)."""


class ItemFeed(Protocol):
    """Memory items and their change log (``memory_item_changes``: every insert,
    update and delete of an item appends its id, whoever made it), read by the
    engine's cache of active items (``memory_core.items.cache``). Item rows are
    dicts of :data:`ITEM_ROW_COLUMNS`, in that order."""

    def change_position(self) -> int:
        """The newest change-log position (0 when empty)."""
        ...

    def oldest_change(self) -> int | None:
        """The oldest change-log position kept, or ``None`` when empty."""
        ...

    def changes_after(self, position: int, limit: int) -> list[tuple[int, int]]:
        """``(position, item id)`` of the first ``limit`` changes past ``position``,
        in order."""
        ...

    def changes_since(self, position: int, limit: int
                      ) -> tuple[int | None, list[tuple[int, int]]]:
        """:meth:`oldest_change` and :meth:`changes_after` (``position``,
        ``limit``) at once (one statement where a statement is a round trip)."""
        ...

    def active_items(self, tenant: str, role: str) -> list[Row]:
        """Every active item of a tenant and role (any order)."""
        ...

    def items_in_scope(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        """The items of ``ids`` that exist in the tenant and role, whatever their
        status, looked up by id (any order)."""
        ...

    def prune_changes(self, keep: int) -> int:
        """Delete all but the newest ``keep`` change-log rows; return how many went
        (write operation)."""
        ...


SEARCH_ITEM_COLUMNS = ("id", "status", "evidence", "kind", "source_message_id",
                       "superseded_by", "unit", "value", "text", "data")
"""The ``memory_items`` columns of a search's item rows (:class:`ItemReads`), in
this order: what the search ranks by (``value``, ``text`` and ``data`` tell a rule
that stands from a one-off request), and the link to a successor."""


class ItemReads(Protocol):
    """Memory items read by the writer's supersession rules
    (``memory_core.items.supersession``) and by search (``memory_core.search``)."""

    def correction_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                              speaker: str, label: str | None,
                              units: Sequence[str] | None, limit: int,
                              subject_prefix: str | None = None) -> list[Row]:
        """``{id, subject, text, unit, condition, value_text, kind}`` of the newest
        ``limit`` active items of ``kinds`` in a tenant and role said by ``speaker``
        (the ``speaker`` of their data, ``""`` for none), newest (highest id) first.
        ``label``: only items of that ordinal label (``None``: any); ``units``: only
        items without a unit or with one of these (``None``: any);
        ``subject_prefix``: only items whose subject starts with it (``None``: any).
        One statement."""
        ...

    def replaced_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, label: str | None, limit: int) -> list[Row]:
        """``{id, text, condition, superseded_by, successor_text}`` of the newest
        ``limit`` superseded items of ``kinds`` in a tenant and role said by
        ``speaker`` whose successor (``superseded_by``; its text: ``successor_text``)
        is still active, newest (highest id) first. ``label``: only items of that
        ordinal label (``None``: any). One statement."""
        ...

    def search_items(self, ids: Sequence[int], *, scope: bool = False) -> list[Row]:
        """:data:`SEARCH_ITEM_COLUMNS` of each of ``ids`` that exists (any order);
        with ``scope`` also ``tenant, role, session, thread_id, created_at``. One
        statement for any number of ids (a search's candidates: at most a few
        hundred)."""
        ...


AGENT_CONTENT_LIMIT = 500
"""The most characters an agent memory's content holds (the seed's limit)."""


def check_agent_content(content: str) -> None:
    """Raise ``ValueError`` when ``content`` is longer than :data:`AGENT_CONTENT_LIMIT`
    characters. Checked in Python before the write, on both backends: SQLite's
    ``CHECK (length(content) <= 500)`` counts up to the first NUL only (PostgreSQL's
    counts real characters, ``lcm_text_length``: migration 4)."""
    if len(content) > AGENT_CONTENT_LIMIT:
        raise ValueError(f"content is {len(content)} characters; the limit is"
                         f" {AGENT_CONTENT_LIMIT}")


def drop_purged_sources(data: dict[str, Any], messages: set[int],
                        threads: set[int]) -> bool:
    """Take the purged ``messages`` and ``threads`` out of a surviving item's ``data``
    (in place): its ``sources``, its ``occasions`` with ``occasion_threads`` in step,
    its ``resent_threads``. Returns whether anything changed. Both backends' purges
    use it, so a surviving item cites no purged statement and names no purged
    conversation."""
    changed = False
    srcs = data.get("sources")
    if isinstance(srcs, list) and any(m in messages for m in srcs):
        data["sources"] = [m for m in srcs if m not in messages]
        changed = True
    told, told_in = data.get("occasions"), data.get("occasion_threads")
    if (isinstance(told, list) and isinstance(told_in, list) and len(told) == len(told_in)
            and any(t in threads for t in told_in)):
        pairs = [(at, t) for at, t in zip(told, told_in, strict=True) if t not in threads]
        data["occasions"] = [at for at, _ in pairs]
        data["occasion_threads"] = [t for _, t in pairs]
        changed = True
    resent = data.get("resent_threads")
    if isinstance(resent, list) and any(t in threads for t in resent):
        data["resent_threads"] = [t for t in resent if t not in threads]
        changed = True
    return changed


def orphan_successor(by: int, purged: dict[int, int | None]) -> int | None:
    """Where a surviving item superseded by purged item ``by`` points after a purge:
    the first item down the purged items' own supersession chain (``purged``: each
    purged item's id → its ``superseded_by``) that is not purged itself, or ``None``
    when the chain ends inside the purged scope (the item is current again). Both
    backends' purges use it."""
    nxt: int | None = by
    seen: set[int] = set()
    while nxt is not None and nxt in purged:
        if nxt in seen:
            return None
        seen.add(nxt)
        nxt = purged[nxt]
    return nxt


def cut_parents(rows: list[Row], context_chars: int, embed_chars: int) -> list[Row]:
    """``rows`` of :meth:`IndexSource.doc_rows` with ``ctx_parent`` and ``embed_parent``
    cut to ``context_chars`` and ``embed_chars`` characters. A backend cuts in SQL
    only text whose characters SQL counts right (SQLite's ``substr`` ends a string at
    a NUL; PostgreSQL's counts the escape pairs of ``pg_text``) and hands the rest
    whole, cut here."""
    for row in rows:
        for col, chars in (("ctx_parent", context_chars), ("embed_parent", embed_chars)):
            text = row.get(col)
            if isinstance(text, str) and len(text) > chars:
                row[col] = text[:chars]
    return rows


class IndexSource(Protocol):
    """The rows the derived indexes are built from, per :data:`OUTBOX_KINDS` kind
    (``memory_core.search.docs``)."""

    def doc_rows(self, kind: str, ids: Sequence[int], *, context_chars: int = 0,
                 embed_chars: int = 0) -> list[Row]:
        """One row per existing id of ``ids`` (distinct; any order): ``{id, tenant,
        role, session, thread_id, created_at, mkind, msg_role, hidden, text, name,
        status}``, an item's also ``unit, condition, speaker``. A message's ``name``
        is the one in its raw JSON; ``context_chars`` > 0 adds ``ctx_parent`` (that
        many characters of the parent's text), ``embed_chars`` > 0 adds
        ``embed_parent`` (of a user or assistant parent) and ``embed_parent_name``.
        One statement per 500 ids."""
        ...

    def ids_after(self, kind: str, after: int, limit: int) -> list[int]:
        """Up to ``limit`` row ids of ``kind`` above ``after``, ascending."""
        ...


class IndexFeed(Protocol):
    """What the outbox indexer reads and writes besides the indexed rows
    (``memory_core.search.indexer``): its checkpoints, the outbox, and the
    ``embeddings`` cache of vectors (float32 bytes)."""

    def checkpoint(self, name: str) -> int:
        """The outbox id checkpoint ``name`` has applied (0 when unset)."""
        ...

    def set_checkpoint(self, name: str, value: int, now: float) -> None:
        """Write checkpoint ``name`` (updated at ``now``; write operation)."""
        ...

    def outbox_rows(self, after: int, limit: int) -> list[tuple[int, str, int, str]]:
        """``(id, kind, ref_id, op)`` of the first ``limit`` outbox rows past ``after``,
        in order."""
        ...

    def outbox_left(self, after: int) -> tuple[int, int]:
        """``(rows, message rows)`` of the outbox past ``after``."""
        ...

    def cached_vectors(self, kind: str, model: str, dim: int, refs: Sequence[int]
                       ) -> dict[int, bytes]:
        """ref id → stored vector of each of ``refs`` of ``kind`` embedded by
        ``model`` at ``dim``. One statement per 500 ids."""
        ...

    def save_vectors(self, rows: Sequence[tuple[str, int, str, int, bytes, float]]) -> None:
        """Write or replace ``(kind, ref_id, model, dim, vector, created_at)`` rows
        (write operation)."""
        ...

    def unembedded(self) -> int:
        """Messages with text and live memory items (not retracted, deleted, purged or
        merged) that have no row in ``embeddings`` yet (with any model): the
        vector index's backlog as a benchmark sees it from outside the process."""
        ...


class SearchReads(Protocol):
    """What a search reads about its candidates besides the indexes
    (``memory_core.search.service``). Candidate lists are a search's: at most a few
    hundred ids, one statement each."""

    def task_lines_of(self, message_ids: Sequence[int]) -> list[tuple[int, str, str]]:
        """``(source_message_id, status, label)`` of every task line stated in one of
        ``message_ids`` (any order)."""
        ...

    def open_task_lines(self, tenant: str, role: str, labels: Sequence[str], *,
                        thread_ids: Collection[int] | None, session: str | None,
                        start_time: float | None, end_time: float | None,
                        include_hidden: bool, current_thread: int, per_label: int
                        ) -> list[int]:
        """Source message ids of the open task lines of each of ``labels`` in turn, at
        most ``per_label`` each: those of ``current_thread`` first, then the newest
        updated. The message must lie in the tenant and role and pass the filters
        (``None``: any; ``thread_ids`` by its thread, times inclusive on its
        ``created_at`` in UNIX s, hidden rounds only with ``include_hidden``). One
        statement per label."""
        ...

    def preference_memories(self, ids: Sequence[int]) -> list[int]:
        """The ids among ``ids`` of agent memories of category ``user_preferences``."""
        ...

    def candidate_facts(self, kind: str, refs: Sequence[int], needle: str | None,
                        with_names: bool) -> list[tuple[Any, ...]]:
        """``(id, thread_id, time, exact, parent_id, name, msg_role)`` of each of
        ``refs`` of an :data:`OUTBOX_KINDS` kind. ``thread_id`` (0 for an agent
        memory) and ``time`` (``created_at``; an agent memory's ``updated_at``) as
        stored; ``exact``: truthy when the lowercased text (an agent memory's title,
        space, content) contains ``needle`` (falsy without one; ASCII letters folded
        only); ``parent_id`` and ``msg_role`` for messages, else ``None``; ``name``
        only ``with_names``: a message's name in its raw JSON, an item's speaker."""
        ...


class OperatorReads(Protocol):
    """Reads of the admin API, the inspector, ``doctor`` and the evaluation.

    ``tenant``/``role``/``session`` filters of ``None`` mean "any"; a given filter is
    applied on every table read (tenant isolation, DESIGN §1). Agent memories of a
    tenant include the shared ones (tenant ``'*'``)."""

    def scope_status(self, tenant: str | None, role: str | None) -> Row:
        """``{counts: {threads, messages, events, memory_items, task_state,
        summary_nodes, hidden_messages, agent_memories}, items_by_status: {status: n},
        summary_levels: [{level, nodes, tokens, source_tokens}] (active nodes),
        last_message_at: float | None, last_assembly: assembly_logs row | None}``."""
        ...

    def tenants(self) -> list[Row]:
        """``[{tenant, roles: [str], threads, messages, last_activity}]``, most
        recently active first."""
        ...

    def threads_page(self, *, tenant: str | None, role: str | None, session: str | None,
                     limit: int, offset: int) -> tuple[int, list[Row]]:
        """``(total, rows)``: threads newest-updated first, each the ``threads`` row
        plus ``head_depth``, ``own_messages`` and ``first_user`` (text or None)."""
        ...

    def thread(self, thread_id: int, *, tenant: str | None, role: str | None
               ) -> Row | None:
        """The ``threads`` row, or ``None`` (absent or outside the filter)."""
        ...

    def thread_path(self, head_message_id: int) -> PathRows:
        """The path ending at ``head_message_id`` and its branches."""
        ...

    def task_state(self, thread_id: int) -> list[Row]:
        """``[{id, label, text, status, source_message_id, updated_at}]`` by id."""
        ...

    def summary_nodes(self, tenant: str, role: str) -> list[Row]:
        """Every ``summary_nodes`` row of a tenant and role, level descending, then id;
        ``message_ids`` as stored (JSON text)."""
        ...

    def items_page(self, *, tenant: str | None, role: str | None, status: str | None,
                   kind: str | None, thread_id: int | None, text: str | None,
                   limit: int, offset: int) -> tuple[int, list[Row]]:
        """``(total, rows)``: memory items newest first, ``{id, tenant, role, kind,
        status, text, subject, value, unit, condition, supersedes, superseded_by,
        conflict_with, source_message_id, evidence, created_at, updated_at}``;
        ``text`` keeps items whose text or subject contains it (ASCII letters
        compared case-insensitively)."""
        ...

    def item_brief(self, item_id: int) -> Row | None:
        """``{id, status, kind, text, updated_at, supersedes, superseded_by}``."""
        ...

    def superseded_page(self, *, tenant: str | None, role: str | None, limit: int,
                        offset: int) -> tuple[int, list[int]]:
        """``(total, ids)``: superseded items, most recently updated first."""
        ...

    def ref_row(self, kind: str, ref_id: int) -> Row | None:
        """The row a search hit names. ``message``: ``{tenant, role, text, thread_id,
        msg_role}``; ``item``: ``{tenant, role, text, thread_id, status, kind,
        source_message_id}``; ``summary``: ``{tenant, role, text, thread_id, level}``;
        ``agent_memory``: ``{tenant, role, title, content, category}``. Raises
        ``ValueError`` for another kind."""
        ...

    def item_scope(self, item_id: int) -> tuple[str, str, str] | None:
        """``(tenant, role, session)`` of a memory item, or ``None``."""
        ...

    def session_rows(self, tenant: str, role: str, session: str) -> dict[str, list[Any]]:
        """One session's rows for the evaluation: ``threads`` (ids), ``items``
        ``{id, kind, text, status, source_message_id}`` (whole tenant and role),
        ``prefs`` ``{key, title, content}`` (user preferences), ``tasks`` ``{label,
        text, status}``, ``messages`` ``{id, thread_id, parent_id, msg_role, text,
        node_key, hidden}``, ``summaries`` ``{level, message_ids}`` (active), each by
        id (``prefs`` by key)."""
        ...

    def session_tenant(self, session: str) -> str | None:
        """The tenant of one thread of ``session`` (any tenant, any role), or
        ``None`` (the evaluation's users are sessions)."""
        ...

    def conflict_pairs(self) -> list[Row]:
        """Every item marked as conflicting, whole store: ``{a_text, b_text, a_msg,
        b_msg}``, its text and the text of the item it conflicts with, and the texts
        of their source messages (``None`` when gone)."""
        ...

    def message_session(self, message_id: int) -> Row | None:
        """``{text, session}`` of a message (the session of its thread), or ``None``."""
        ...


class IndexProgress(Protocol):
    """The outbox that feeds the derived indexes, read by operators."""

    def outbox_head(self) -> int:
        """The highest outbox id (0 when empty)."""
        ...

    def index_checkpoints(self) -> dict[str, int]:
        """Every ``index_*`` checkpoint: name → outbox id applied."""
        ...

    def outbox_after(self, position: int) -> int:
        """Outbox rows with an id past ``position``."""
        ...

    def oldest_pending_message_at(self, position: int) -> float | None:
        """``created_at`` of the message of the first ``message`` outbox row past
        ``position``, or ``None``."""
        ...

    def indexable_rows(self) -> int:
        """Rows the derived indexes are built from (messages, memory items, agent
        memories, summary nodes)."""
        ...

    def expected_documents(self, vector_kinds: Collection[str],
                           deleted_statuses: Collection[str]) -> dict[str, dict[str, int]]:
        """What each derived index should hold, per :data:`OUTBOX_KINDS` kind:
        ``{"text": {kind: n}, "vector": {kind: n}}``. Text: every row, less items and
        summaries whose status is one of ``deleted_statuses``. Vector: the same rows
        of ``vector_kinds`` whose embedded text (an agent memory's ``title`` newline
        ``content``) is not blank (only :data:`WHITESPACE`), a message with a
        ``name`` in its raw JSON counting too; 0 for other kinds."""
        ...


class Maintenance(Protocol):
    """Health probes and whole-store checks."""

    def ping(self) -> None:
        """One round trip; raises when the store cannot be read."""
        ...

    def integrity_check(self) -> list[str]:
        """The backend's consistency check, one problem a line; ``["ok"]`` if none."""
        ...

    def message_id_high_water(self) -> int:
        """The highest message id ever assigned (0 before the first); it only grows,
        whatever is deleted or rolled back."""
        ...

    def extraction_backlog(self, now: float) -> int:
        """Extraction-queue rows already tried or due at ``now``."""
        ...


class Purge(Protocol):
    """Irreversible removal of a scope (write operations)."""

    def delete_scope(self, *, tenant: str | None, role: str | None, session: str | None,
                     dry_run: bool, thread: int | None = None,
                     scrub_copies: bool = False) -> dict[str, Any]:
        """Delete every row of the scope (``thread``: that thread and the threads
        forked from it, within the other filters), queue an outbox ``delete`` for every removed
        row of :data:`OUTBOX_KINDS` and an ``upsert`` for each surviving child message
        of a removed one; return the rows removed per table plus ``outbox_deletes``
        and ``reindexed_children``, and ``restored_items``: surviving items that a
        removed item had superseded or merged away become active again, or point at
        the first survivor down its chain (:func:`orphan_successor`), with a
        ``restored`` revision and an outbox ``upsert``. An item of the scope that a
        message outside it also stated (``data.sources``) stays, moved to its newest
        surviving source (a ``sources`` revision); a surviving item loses the removed
        messages and threads from its ``data`` (:func:`drop_purged_sources`, a
        ``sources`` revision). Copies of the scope's text in rows that stay are
        reported (``copies``, ``held_elsewhere``, ``copies_found``) and, with
        ``scrub_copies``, scrubbed (``copies_scrubbed``;
        :mod:`memory_core.store.purge_copies`). ``dry_run``: the same counts,
        nothing changed. Freed storage is overwritten where the backend can. At least one filter is
        given (checked by the caller)."""
        ...

    def record(self, created_at: float, data: str) -> None:
        """Append the ``purge`` audit event (``data``: JSON text)."""
        ...

    def redact_message(self, message_id: int, *, tenant: str | None, role: str | None,
                       dry_run: bool, session: str | None = None) -> dict[str, Any] | None:
        """Replace one message's content by a placeholder, keep its row and node key
        (:mod:`memory_core.store.redaction`): drop the items stated only there as a
        purge does, scrub its copies, queue index upserts and deletes, record a
        ``redact`` event. ``None`` when no such message is in ``tenant``/``role``/
        ``session`` (each ``None``: any). ``dry_run``: the same counts, nothing changed."""
        ...


class ResponseMap(Protocol):
    """Responses API response ids and conversations (``memory_core.capture.response_threads``)."""

    def save_response(self, *, tenant: str, role: str, session: str, response_id: str,
                      parent: str | None, thread_id: int | None, items: bytes,
                      created_at: float) -> None:
        """Write or replace the row of ``response_id`` in its tenant and role."""
        ...

    def save_conversation_head(self, *, tenant: str, role: str, session: str,
                               conversation_id: str, response_id: str,
                               thread_id: int | None, updated_at: float) -> None:
        """Make ``response_id`` the newest response of the conversation."""
        ...

    def conversation_head(self, tenant: str, role: str, conversation_id: str
                          ) -> str | None:
        """The newest response id of a conversation, or ``None``."""
        ...

    def response_chain(self, tenant: str, role: str, response_id: str, max_rows: int
                       ) -> list[Row]:
        """``[{parent, items, thread_id, session}]`` from ``response_id`` back through its
        parents (at most ``max_rows + 1`` rows), oldest first; empty when unknown."""
        ...

    def response_owner(self, account: str, prefix: str, role: str, response_id: str
                       ) -> str | None:
        """The tenant holding ``response_id`` in ``role`` among ``account`` (an API
        key's tenant) and the tenants that begin with ``prefix`` (its end users'):
        the one whose row came first; ``None`` when none does."""
        ...

    def conversation_owner(self, account: str, prefix: str, role: str,
                           conversation_id: str) -> str | None:
        """The tenant holding a head of ``conversation_id`` in ``role`` among
        ``account`` and the tenants that begin with ``prefix``: the one whose head
        moved last; ``None`` when none does."""
        ...


class ForwardedLog(Protocol):
    """Bodies forwarded upstream and the request log (``memory_core.capture.forwarded``)."""

    def insert(self, row: ForwardedRow, keep: int) -> int:
        """Insert ``row``, then delete its tenant's rows beyond the newest ``keep``
        (at least 1); return the new row's id."""
        ...

    def page(self, *, tenant: str | None, role: str | None, thread_id: int | None,
             limit: int, offset: int) -> tuple[int, list[Row]]:
        """``(total, rows)`` newest first: the row without ``body``, with ``id``."""
        ...

    def by_request(self, request_id: str, *, tenant: str | None, role: str | None
                   ) -> Row | None:
        """The newest row of ``request_id`` with its ``body`` (or ``None``)."""
        ...

    def request_events(self, request_id: str, tenant: str) -> list[Row]:
        """``[{kind, created_at, data}]``: the request's ``request`` and ``response``
        events, in order."""
        ...

    def request_assembly(self, request_id: str, tenant: str) -> Row | None:
        """The request's newest ``assembly_logs`` row (``data`` as JSON text)."""
        ...


class ToolReads(Protocol):
    """What the memory tools read besides the indexes (``memory_core.tools.memory_tools``)."""

    def hit_row(self, kind: str, ref_id: int) -> Row | None:
        """The row a search hit names, or ``None``: a ``message``'s ``{id, msg_role,
        text, created_at, tenant, role, hidden}``; every column of an ``item``
        (``memory_items``), ``agent_memory`` or ``summary`` (``summary_nodes``). Raises
        ``ValueError`` for another kind. One statement."""
        ...

    def root_summary_texts(self, tenant: str, role: str) -> dict[int, str]:
        """id → text of every active root summary node (no parent) of a tenant and
        role."""
        ...

    def thread_timeline(self, tenant: str, role: str) -> list[Row]:
        """``{id, created_at, updated_at, messages}`` of every thread of a tenant and
        role (``messages``: how many it holds), oldest created first."""
        ...


class AssemblyReads(Protocol):
    """What the injection block reads (``memory_core.assembly.block``), on the request
    path: one statement per call. Lists of ids are a block's (at most a few
    thousand)."""

    def thread_fork(self, thread_id: int) -> tuple[int | None, int | None] | None:
        """``(parent_thread_id, fork_message_id)`` of a thread, or ``None`` when it
        does not exist."""
        ...

    def preferences(self, role: str, tenants: Sequence[str]) -> list[Row]:
        """``{id, key, title, content, tenant}`` of the ``user_preferences`` agent
        memories of ``role`` in any of ``tenants``, by key, then tenant."""
        ...

    def block_basics(self, role: str, tenants: Sequence[str], tenant: str,
                     thread_id: int | None, progress_limit: int) -> BlockBasics:
        """:meth:`preferences` (``role``, ``tenants``), :meth:`open_task_state`
        (``thread_id``; none without one) and :meth:`progress_memories` (``tenant``,
        ``role``, ``progress_limit``) at once: one statement where a statement is
        a round trip."""
        ...

    def open_task_state(self, thread_id: int) -> list[Row]:
        """``{id, label, text, status, source_message_id}`` of the thread's open task
        lines, by id."""
        ...

    def progress_memories(self, tenant: str, role: str, limit: int) -> list[Row]:
        """``{id, key, title, content}`` of the newest updated ``limit`` ``progress``
        agent memories of a tenant and role, newest first."""
        ...

    def newest_active_items(self, tenant: str, role: str, limit: int) -> list[Row]:
        """Every column of the newest ``limit`` active items of a tenant and role,
        highest id first."""
        ...

    def items_by_ids(self, ids: Sequence[int]) -> list[Row]:
        """Every column of each item of ``ids`` that exists, whatever its scope and
        status (any order)."""
        ...

    def quote_messages(self, ids: Sequence[int], tenant: str, role: str) -> list[Row]:
        """``{id, parent_id, msg_role, text, created_at, name}`` of each message of
        ``ids`` in a tenant and role (``name``: the one in its raw JSON, else
        ``None``), looked up by id (any order)."""
        ...

    def visible_quote_messages(self, ids: Sequence[int], tenant: str, role: str
                               ) -> list[Row]:
        """:meth:`quote_messages` less hidden messages (any order)."""
        ...

    def superseded_texts(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[tuple[int, str]]:
        """``(source_message_id, text)`` of the superseded items of a tenant and role
        stated in one of ``message_ids``, by item id."""
        ...


class ItemWrites(Protocol):
    """Memory items as the writer's rules read and change them
    (``memory_core.items.writer``): supersession, conflicts, restatements, merges,
    retraction, with the revision log, the duplicate checks' subject keys and
    content terms, and the outbox. Write operations: call them inside a write job.

    Item rows are every ``memory_items`` column. The lookups marked lazy return an
    iterator that reads its rows as it is advanced (a caller that stops early reads
    little); use it within the job that made it."""

    def queue_index(self, kind: str, ref_id: int, op: str = "upsert") -> None:
        """Append an outbox row (``op``: ``upsert`` or ``delete``)."""
        ...

    def revision(self, item_id: int, field: str, old: Any, new: Any, reason: str,
                 now: float) -> None:
        """Append a ``memory_item_revisions`` row (``old``/``new`` stored as text,
        ``None`` kept)."""
        ...

    def subject_window_ids(self, tenant: str, role: str, kinds: Sequence[str],
                           subject: str, speaker: str, above: int, upto: int,
                           limit: int) -> list[int]:
        """The ids of the active items of ``kinds`` in the tenant and role said by
        ``speaker`` whose subject contains ``subject`` or is contained in it, at
        ids ``above`` < id <= ``upto``: newest first, at most ``limit``. Walks the id
        range."""
        ...

    def same_subject(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        """Active items of ``kinds`` of the tenant, role and ``speaker`` whose subject
        is ``subject``, newest first (lazy; through the subject index)."""
        ...

    def subject_hits(self, tenant: str, role: str, kinds: Sequence[str], subject: str,
                     speaker: str) -> Iterator[Row]:
        """Active items of ``kinds`` of the tenant, role and ``speaker`` whose
        subject differs from ``subject`` and contains it or is contained in it,
        newest first (lazy; reads every item of the scope)."""
        ...

    def subject_key_count(self, tenant: str, role: str, key: str, cap: int) -> int:
        """How many items of the tenant and role hold subject key ``key`` (part 0),
        counted up to ``cap``."""
        ...

    def subject_hits_by_key(self, tenant: str, role: str, key: str, kinds: Sequence[str],
                            subject: str, speaker: str) -> Iterator[Row]:
        """:meth:`subject_hits` among the items holding subject key ``key`` (lazy)."""
        ...

    def subject_hits_among(self, tenant: str, role: str, subjects: Sequence[str],
                           kinds: Sequence[str], subject: str, speaker: str
                           ) -> Iterator[Row]:
        """:meth:`subject_hits` among the items whose subject is one of ``subjects``
        (lazy)."""
        ...

    def reworded_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                            speaker: str, value: Any, unit: str | None,
                            condition: str | None, scan: int, terms: Sequence[str],
                            least: int) -> Iterator[Row]:
        """Of the newest ``scan`` active items of ``kinds`` of the tenant, role and
        ``speaker`` with this ``value``, ``unit`` and ``condition`` (``None`` equal
        to ``None``), those holding at least ``least`` of content ``terms``, newest
        first (lazy)."""
        ...

    def item(self, item_id: int) -> Row | None:
        """Every column of an item, or ``None``."""
        ...

    def item_sources(self, item_id: int) -> Row | None:
        """``{data, source_message_id}`` of an item, or ``None``."""
        ...

    def active_pair(self, a: int, b: int) -> list[Row]:
        """Every column of items ``a`` and ``b`` that are active (any order)."""
        ...

    def conflict_of(self, item_id: int) -> tuple[int | None] | None:
        """``(conflict_with,)`` of an item, or ``None`` when it does not exist."""
        ...

    def item_text(self, item_id: int) -> str | None:
        """An item's text, or ``None`` when it does not exist."""
        ...

    def conflicting_active(self, item_id: int, besides: int) -> list[int]:
        """Ids of the active items marked as conflicting with ``item_id``, less
        ``besides`` (any order)."""
        ...

    def item_claim(self, item_id: int) -> Row | None:
        """``{status, subject, text}`` of an item, or ``None``."""
        ...

    def item_status(self, item_id: int) -> str | None:
        """An item's status, or ``None`` when it does not exist."""
        ...

    def insert_item(self, *, tenant: str, role: str, session: str, thread_id: int, kind: str,
                    subject: str | None, text: str, value: Any, value_text: str | None,
                    unit: str | None, condition: str | None, source_message_id: int | None,
                    evidence: str, lang: str | None, now: float, data: str) -> int:
        """Insert an active item (created and updated at ``now``; ``data``: JSON
        text); return its id. Queues nothing (see :meth:`queue_index`)."""
        ...

    def index_subject_keys(self, tenant: str, role: str, item_id: int, keys: Sequence[str],
                           anchor: str) -> None:
        """Record an item's subject ``keys`` (part 0) and ``anchor`` (part 1)."""
        ...

    def index_terms(self, tenant: str, role: str, item_id: int, terms: Sequence[str]) -> None:
        """Record an item's content terms."""
        ...

    def set_conflict(self, item_id: int, other_id: int) -> None:
        """Mark ``item_id`` as conflicting with ``other_id``."""
        ...

    def branch_messages(self, parent_id: int, keep_id: int) -> dict[int, int]:
        """Every message under the user-message children of ``parent_id`` other than
        ``keep_id`` (the sibling branches an edit left), those children included (a
        user turn stored as ``tool``, an Anthropic turn that opens with tool results,
        is one too):
        message id → the id of the child its branch starts at. ``{}`` for none."""
        ...

    def items_sourced_in(self, tenant: str, role: str, message_ids: Sequence[int]
                         ) -> list[Row]:
        """Active items of the tenant and role whose ``source_message_id`` is one of
        ``message_ids``, oldest first."""
        ...

    def edited_items(self, tenant: str, role: str) -> list[Row]:
        """Items of the tenant and role with status ``edited``, oldest first."""
        ...

    def set_status(self, item_id: int, status: str, superseded_by: int | None,
                   now: float) -> None:
        """Set status and ``superseded_by``, updated at ``now``."""
        ...

    def link_edit(self, old_id: int, new_id: int | None) -> None:
        """``old_id`` (status ``edited``) replaced by ``new_id`` of the edit: its
        ``superseded_by`` and the new item's ``supersedes`` point at each other and
        the new item's ``conflict_with`` (with the old one) is cleared. With
        ``new_id`` ``None``: the links to ``old_id`` are cleared (a restore)."""
        ...

    def set_data(self, item_id: int, data: str) -> None:
        """Replace an item's ``data`` (JSON text)."""
        ...

    def mark_merged(self, item_id: int, into: int, now: float) -> None:
        """Status ``merged``, ``superseded_by`` = ``into``, updated at ``now``."""
        ...

    def touch(self, item_id: int, now: float) -> None:
        """Set an item's ``updated_at``."""
        ...

    def restate(self, item_id: int, *, now: float, message_id: int, thread_id: int,
                data: str) -> None:
        """Make ``message_id`` (of ``thread_id``) the item's source, with ``data``,
        updated at ``now``."""
        ...

    def mark_superseded(self, old_id: int, new_id: int, now: float) -> None:
        """``old_id`` superseded by ``new_id`` (updated at ``now``), ``new_id``
        supersedes ``old_id``."""
        ...

    def settle(self, item_id: int, new_id: int, now: float) -> None:
        """A conflict side superseded by ``new_id``: its ``conflict_with`` cleared."""
        ...

    def mark_retracted(self, item_id: int, now: float) -> None:
        """Status ``retracted``, updated at ``now``."""
        ...

    def mark_restored(self, item_id: int, now: float) -> None:
        """Status ``active`` again, no ``superseded_by``, updated at ``now`` (the item
        that superseded it keeps its ``supersedes`` link: history)."""
        ...


class TaskWrites(Protocol):
    """A thread's task state lines (``memory_core.items.writer.merge_task_line``; write
    operations)."""

    def supersede_goals(self, thread_id: int, keep_norm: str, now: float) -> None:
        """Mark the thread's open goals superseded, but the one of ``keep_norm``."""
        ...

    def open_todos(self, thread_id: int) -> list[Row]:
        """``{id, text, label}`` of the thread's open ``todo`` and ``blocked`` lines."""
        ...

    def close(self, line_id: int, now: float) -> None:
        """Mark a line ``done`` at ``now``."""
        ...

    def upsert_line(self, *, tenant: str, role: str, thread_id: int, label: str, text: str,
                    norm: str, message_id: int | None, now: float) -> None:
        """Add an open line, or reopen the thread's line of that label and ``norm``
        (its source and ``updated_at`` replaced)."""
        ...


class AgentMemoryWrites(Protocol):
    """Agent memories (``memory_core.items.writer.upsert_agent_memory``; write operations)."""

    def keys(self, tenant: str, category: str, role: str) -> list[tuple[str, str]]:
        """``(key, title)`` of every memory of a tenant, category and role."""
        ...

    def find(self, tenant: str, category: str, key: str, role: str) -> int | None:
        """The id of a memory, or ``None``."""
        ...

    def upsert(self, *, tenant: str, role: str, category: str, key: str, title: str,
               content: str, now: float) -> int:
        """Insert or replace (title, content, ``updated_at``; the stored embedding
        cleared) a memory, queue its outbox ``upsert``; return its id. ``content``
        longer than :data:`AGENT_CONTENT_LIMIT` characters raises ``ValueError``
        before anything is written (see :func:`check_agent_content`)."""
        ...

    def delete(self, memory_id: int) -> None:
        """Delete a memory and queue its outbox ``delete``."""
        ...


class ExtractionQueue(Protocol):
    """Messages whose extraction is pending or failed (``extraction_queue``), read
    and written by the engine's writer jobs (write operations)."""

    def defer(self, message_id: int, next_at: float) -> None:
        """Queue a message as pending (``attempts`` 0, due at ``next_at``) unless it
        is queued already."""
        ...

    def attempt(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` so that when it raises, what it wrote is undone (the rest of
        the job stays) and the exception propagates; return its value."""
        ...

    def attempts(self, message_id: int) -> int | None:
        """Failed attempts so far of a queued message, or ``None`` when not queued."""
        ...

    def failed(self, message_id: int, attempts: int, error: str, next_at: float) -> None:
        """Queue or update a message after a failure: ``attempts``, the error text,
        due again at ``next_at``."""
        ...

    def done(self, message_id: int) -> None:
        """Take a message off the queue."""
        ...

    def due(self, now: float, limit: int) -> list[Row]:
        """The first ``limit`` queued messages due at ``now``, soonest due first:
        ``{message_id, tenant, role, session, thread_id, text, tz, msg_role, name}``
        (``tz``: the time zone it was said in, ``None`` for UTC; ``name``: the one in
        its raw JSON, else ``None``)."""
        ...

    def due_later(self, now: float, limit: int) -> Callable[[], list[Row]]:
        """:meth:`due` as the job's store stands now, read when the returned function
        is called (on PostgreSQL sent with the job's next statement: no round trip of
        its own when the job sends another before it needs the rows)."""
        ...

    def pending(self, message_id: int) -> list[Row]:
        """The row of :meth:`due` of ``message_id`` when it is queued and not yet
        tried (``attempts`` 0); else empty."""
        ...

    def calls_before(self, message_id: int, window: float, limit: int) -> list[str]:
        """The raw JSON of the newest ``limit`` visible assistant messages with a tool
        call of ``message_id``'s tenant and role, stored before it and at most
        ``window`` seconds earlier, newest first (what
        :func:`memory_core.capture.delegated.model_wrote` reads); one statement, on
        ``messages_calls`` (SQLite m014, PostgreSQL m009), an index of the visible
        assistant messages with a tool call alone: its work grows with the calls it
        passes, not with the chat around them. "With a tool call": the raw JSON holds
        ``"tool_use"``, ``"tool_calls"`` or ``"function_call"`` (that index's
        predicate, word for word)."""
        ...


class RequestReads(Protocol):
    """Small reads of the engine on the request path (each one statement unless
    said)."""

    def spliced_ids(self) -> list[int]:
        """Every message id with a splice."""
        ...

    def splices(self, ids: Sequence[int]) -> dict[int, str]:
        """message id → its splice's ``messages`` (JSON text as stored), for each
        of ``ids`` that has one."""
        ...

    def history_beyond(self, tenant: str, role: str, thread_id: int, newest: int) -> bool:
        """Whether the tenant and role have another thread than ``thread_id``, or the
        thread a visible message after ``newest``, or the role an agent memory of the
        tenant or shared (``'*'``). Up to three statements, stopping at the first
        that finds one."""
        ...

    def has_active_summaries(self, tenant: str, role: str) -> bool:
        """Whether the tenant and role have an active summary node."""
        ...

    def superseded_sources(self, tenant: str, role: str, last_id: int, limit: int
                           ) -> list[Row]:
        """``{id, source_message_id, text, value_text, unit}`` of the newest ``limit``
        superseded items of the tenant and role stated up to message ``last_id``,
        newest (by source message, then id) first; through ``memory_items_superseded``."""
        ...


class Inspection(Protocol):
    """The engine's operator reads (``memory_core.engine``): agent memories, assembly
    logs, the keyword scan, search hits by scope, one item or message in full,
    exports. Filters of ``None`` mean "any". Lazy results are read as they are
    iterated, within the read that made them."""

    def agent_memories(self, *, category: str | None, role: str | None, tenant: str | None,
                       shared_tenant: str) -> list[Row]:
        """``{id, category, key, title, content, updated_at, role, tenant}`` by role,
        category, key; a ``tenant`` filter also keeps ``shared_tenant``'s."""
        ...

    def last_assembly(self, *, tenant: str | None, role: str | None, session: str | None,
                      thread_id: int | None) -> Row | None:
        """The newest ``assembly_logs`` row (``data`` as JSON text) of the filters
        (``session``: its thread's), or ``None``."""
        ...

    def recent_scopes(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> list[tuple[str, str]]:
        """``(tenant, role)`` of the threads of the filters, the one with the newest
        thread first, at most ``limit``."""
        ...

    def scoped_item(self, item_id: int, tenant: str, role: str) -> Row | None:
        """Every column of an item of the tenant and role, or ``None``."""
        ...

    def scoped_message(self, message_id: int, tenant: str, role: str) -> Row | None:
        """``{id, msg_role, tenant, role, session, text, created_at}`` of a message of
        the tenant and role, or ``None``."""
        ...

    def keyword_items(self, *, tenant: str | None, role: str | None, session: str | None,
                      limit: int) -> Iterator[Row]:
        """Every column of the newest ``limit`` items of the filters that are not
        retracted, newest first (lazy)."""
        ...

    def keyword_messages(self, *, tenant: str | None, role: str | None, session: str | None,
                         limit: int) -> Iterator[Row]:
        """``{id, msg_role, tenant, role, session, text, created_at, hidden}`` of the
        newest ``limit`` messages of the filters, newest first (lazy)."""
        ...

    def item(self, item_id: int) -> Row | None:
        """Every column of an item, or ``None``."""
        ...

    def message_brief(self, message_id: int | None) -> Row | None:
        """``{id, msg_role, text, created_at}`` of a message, or ``None``."""
        ...

    def item_link(self, item_id: int, direction: str) -> Row | None:
        """``{id, text, status, <direction>}`` of an item, ``direction`` being
        ``supersedes`` or ``superseded_by`` (else ``ValueError``), or ``None``."""
        ...

    def revisions(self, item_id: int) -> list[Row]:
        """``{changed_at, field, old, new, reason}`` of an item's revisions, in order."""
        ...

    def message(self, message_id: int) -> Row | None:
        """Every column of a message, or ``None``."""
        ...

    def message_items(self, message_id: int) -> list[Row]:
        """``{id, kind, status, text}`` of the items stated in a message."""
        ...

    def store_counts(self) -> Row:
        """``{counts: {threads, messages, events, hidden_messages}, tenants, roles,
        last}``: tenants, tenant-roles with a thread, and the newest message's
        ``created_at`` (``None`` when empty). Whole store."""
        ...

    def export_threads(self, *, session: str | None, role: str | None, tenant: str | None,
                       thread_id: int | None) -> list[Row]:
        """Every column of the threads of the filters, by id."""
        ...

    def thread_messages(self, thread_id: int) -> list[Row]:
        """Every column of a thread's own messages, by id."""
        ...

    def events(self, thread_ids: Sequence[int] | None, *,
               owner: tuple[str | None, str | None] | None = None) -> list[Row]:
        """Every column of the events of ``thread_ids`` (``None``: every event), by id;
        with ``owner`` ``(tenant, role)`` (``None`` for any) also the events of no thread
        filed under that tenant and role (a body the proxy could not read)."""
        ...

    def head_path(self, thread_id: int) -> list[Row]:
        """``{id, msg_role, kind, text, hidden}`` of the path from the root to the
        thread's head, by depth; empty without a thread or head."""
        ...


class EngineWrites(Protocol):
    """The engine's own small writes (write operations)."""

    def meta(self, key: str) -> str | None:
        """A ``meta`` value, or ``None``."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Add a ``meta`` value (the key must be new)."""
        ...

    def log_assembly(self, *, request_id: str, tenant: str, role: str, thread_id: int | None,
                     created_at: float, trigger: str, budget_tokens: int, used_tokens: int,
                     token_source: str, data: str) -> int:
        """Append an ``assembly_logs`` row (``data``: JSON text); return its id."""
        ...


class Tx(Protocol):
    """Every operation group over one connection: what read and write jobs receive."""

    @property
    def operator(self) -> OperatorReads: ...

    @property
    def index(self) -> IndexProgress: ...

    @property
    def maintenance(self) -> Maintenance: ...

    @property
    def purge(self) -> Purge: ...

    @property
    def responses(self) -> ResponseMap: ...

    @property
    def forwarded(self) -> ForwardedLog: ...

    @property
    def capture(self) -> CaptureWrites: ...

    @property
    def history(self) -> HistoryReads: ...

    @property
    def item_feed(self) -> ItemFeed: ...

    @property
    def summaries(self) -> SummaryForest: ...

    @property
    def items(self) -> ItemReads: ...

    @property
    def index_source(self) -> IndexSource: ...

    @property
    def index_feed(self) -> IndexFeed: ...

    @property
    def search(self) -> SearchReads: ...

    @property
    def tools(self) -> ToolReads: ...

    @property
    def assembly(self) -> AssemblyReads: ...

    @property
    def item_writes(self) -> ItemWrites: ...

    @property
    def tasks(self) -> TaskWrites: ...

    @property
    def agent_memories(self) -> AgentMemoryWrites: ...

    @property
    def extraction(self) -> ExtractionQueue: ...

    @property
    def request_reads(self) -> RequestReads: ...

    @property
    def inspection(self) -> Inspection: ...

    @property
    def engine_writes(self) -> EngineWrites: ...


class Store(Protocol):
    """What a backend's store object offers the engine (see module docstring)."""

    schema_version: int

    def read_tx(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(tx, *args)`` on a read connection of this thread."""
        ...

    def write_tx(self, fn: Callable[..., T], *args: Any,
                 then: Callable[[T], None] | None = None, urgent: bool = False,
                 order_key: Hashable = None, gives_way: bool = False,
                 then_key: Hashable = None) -> Future[T]:
        """Queue ``fn(tx, *args)`` as one atomic write job; ``urgent`` (a request
        waits for it): ahead of queued jobs that are not, except those that share
        its ``order_key``; ``gives_way``: background work that waits while a request
        is in flight (:meth:`hold_background`); ``then(value)`` runs on the writer
        thread after the commit, and what it queues keeps this job's place
        (``then_key``: its order key when not ``order_key``), see
        :class:`~memory_core.store.batch.WriteQueue`."""
        ...

    def hold_background(self, busy: Callable[[], bool] | None, seconds: float) -> None:
        """Jobs queued with ``gives_way`` wait while ``busy()`` (a request is in
        flight), at most ``seconds`` each (:meth:`WriteQueue.hold_background
        <memory_core.store.batch.WriteQueue.hold_background>`); ``None``: never."""
        ...

    def wake_writer(self) -> None:
        """``busy()`` may have turned false: the writer looks again (cheap, any
        thread)."""
        ...

    def flush(self, timeout: float | None = 60.0) -> None:
        """Wait until every write queued before this call has committed."""
        ...

    def queue_depth(self) -> int:
        """Write jobs queued and not yet started."""
        ...

    def close(self) -> None:
        """Flush queued writes and release every connection."""
        ...


class EngineStore(Store, Protocol):
    """What :class:`memory_core.engine.Engine` and its search service use of a store
    besides :class:`Store`: both backends' store objects are one."""

    location: str
    """Where the store lives, for messages and as the namespace of in-process
    caches: the SQLite file's path, or ``host:port/dbname`` (no password)."""

    shared: bool
    """True when other processes (replicas) may write the same store (PostgreSQL)."""

    after_commit: Callable[[], None] | None
    """Called on the writer thread after each committed batch (cheap, must not
    raise); ``None``: nothing."""

    before_checkpoint: Callable[[], None] | None
    """Called before a WAL checkpoint (SQLite; never called on PostgreSQL)."""

    commit_latency: Any
    """A :class:`memory_core.stats.LatencyStats` of write transactions (seconds)."""

    def write_tx_sync(self, fn: Callable[..., T], *args: Any,
                      timeout: float | None = 60.0, urgent: bool = False) -> T:
        """Run ``fn(tx, *args)`` as a write job and wait for its value."""
        ...

    def exclusive(self, key: int) -> AbstractContextManager[bool]:
        """Try, without waiting, to take the lock ``key`` (31 bits) of every process
        on this store; the context yields whether it was taken and releases it on
        exit. Not exclusive between threads of one process (keep a lock of your own);
        PostgreSQL: a session advisory lock, released if the process dies."""
        ...
