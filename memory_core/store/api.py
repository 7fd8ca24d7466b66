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
  ``concurrent.futures.Future`` of its value. Jobs run in the order queued; each is
  atomic (all its changes commit, or none when it raises), and the future resolves
  after the commit. Write operations may only be called inside a write job.

Values crossing the interface are plain Python: ``dict`` rows keyed by column name,
ints, floats (UNIX seconds), str and bytes (compressed blobs). No backend type
(``sqlite3.Row``, a cursor, ``lastrowid``) and no SQL text crosses it: an insert
that the caller needs the id of returns the id.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
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
    """One ``forwarded_requests`` row as :func:`memory_core.forwarded.prepare` makes it."""

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


class NodeRef(NamedTuple):
    """Where a stored message sits: its id, its thread and its depth (root 0)."""

    id: int
    thread_id: int
    depth: int


class MessageRow(NamedTuple):
    """One ``messages`` row as :mod:`memory_core.capture` stores it (``id`` is
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


class CaptureWrites(Protocol):
    """The evidence tree and the event log (``memory_core.capture``): messages,
    threads, splices, events. Lookups read inside the write job that calls them.

    ``tenant``, ``role`` and ``session`` scope every node lookup: a node key is
    unique within its scope only."""

    def node(self, tenant: str, role: str, session: str, key: str) -> NodeRef | None:
        """The stored message of node ``key`` in the scope, or ``None``."""
        ...

    def path_ids(self, message_id: int) -> list[int]:
        """The ids from the root of ``message_id``'s path down to it (by depth)."""
        ...

    def insert_message(self, row: MessageRow) -> int:
        """Insert ``row`` and queue its outbox ``upsert``; return its id (ids only
        grow)."""
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


class HistoryReads(Protocol):
    """Immutable facts of stored messages and the summary forest, read by the
    engine's in-memory caches (``memory_core.msgfacts``, ``memory_core.nodecache``).

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

    def message_evidence(self, ids: Sequence[int]) -> tuple[list[Row], list[Row]]:
        """What was extracted from the messages ``ids``: memory items ``{id, kind,
        text, status, source_message_id}`` and task lines ``{label, text, status,
        source_message_id}``. Order (the summary's line order): by id within each
        consecutive run of 900 of ``ids``, the runs in turn."""
        ...


class SummaryForest(Protocol):
    """The summary nodes compaction writes and ``memory status`` reports
    (``memory_core.compaction``)."""

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
    engine's cache of active items (``memory_core.itemcache``). Item rows are
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
                       "superseded_by")
"""The ``memory_items`` columns of a search's item rows (:class:`ItemReads`), in
this order: what the search ranks by, and the link to a successor."""


class ItemReads(Protocol):
    """Memory items read by the writer's supersession rules
    (``memory_core.supersession``) and by search (``memory_core.search``)."""

    def correction_candidates(self, tenant: str, role: str, kinds: Sequence[str],
                              speaker: str, label: str | None,
                              units: Sequence[str] | None, limit: int) -> list[Row]:
        """``{id, subject, text, unit, condition, value_text}`` of the newest
        ``limit`` active items of ``kinds`` in a tenant and role said by ``speaker``
        (the ``speaker`` of their data, ``""`` for none), newest (highest id) first.
        ``label``: only items of that ordinal label (``None``: any); ``units``: only
        items without a unit or with one of these (``None``: any). One statement."""
        ...

    def search_items(self, ids: Sequence[int], *, scope: bool = False) -> list[Row]:
        """:data:`SEARCH_ITEM_COLUMNS` of each of ``ids`` that exists (any order);
        with ``scope`` also ``tenant, role, session, thread_id, created_at``. One
        statement for any number of ids (a search's candidates: at most a few
        hundred)."""
        ...


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
                     dry_run: bool) -> dict[str, int]:
        """Delete every row of the scope, queue an outbox ``delete`` for every removed
        row of :data:`OUTBOX_KINDS` and an ``upsert`` for each surviving child message
        of a removed one; return the rows removed per table plus ``outbox_deletes``
        and ``reindexed_children``. ``dry_run``: the same counts, nothing changed.
        Freed storage is overwritten where the backend can. At least one filter is
        given (checked by the caller)."""
        ...

    def record(self, created_at: float, data: str) -> None:
        """Append the ``purge`` audit event (``data``: JSON text)."""
        ...


class ResponseMap(Protocol):
    """Responses API response ids and conversations (``memory_core.responsemap``)."""

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
        """``[{parent, items, thread_id}]`` from ``response_id`` back through its
        parents (at most ``max_rows + 1`` rows), oldest first; empty when unknown."""
        ...


class ForwardedLog(Protocol):
    """Bodies forwarded upstream and the request log (``memory_core.forwarded``)."""

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


class Store(Protocol):
    """What a backend's store object offers the engine (see module docstring)."""

    schema_version: int

    def read_tx(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(tx, *args)`` on a read connection of this thread."""
        ...

    def write_tx(self, fn: Callable[..., T], *args: Any,
                 then: Callable[[T], None] | None = None) -> Future[T]:
        """Queue ``fn(tx, *args)`` as one atomic write job."""
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
