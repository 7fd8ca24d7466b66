"""The writer jobs that capture requests and answers, and extract their items.

A request's capture is urgent (the request may wait for it) and keyed by its persona
(:func:`persona_order`): that persona's extraction jobs keep their queued order, so
items are stored in message order (supersession). What a capture cannot afford to
extract inline (long messages, backfills, pasted logs, answers) is extracted by
writer jobs queued once the capture commits, off the request path; a failing rule
queues its message for a retry and never loses the evidence it was reading.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

from memory_core.capture import delegated, evidence
from memory_core.capture.journal import CaptureJournal
from memory_core.capture.redact import redact_text
from memory_core.capture.reply import read_pick, read_reply, take_back_last
from memory_core.capture.tree import ChainKeyCache, message_text, spoken_text
from memory_core.config import MemoryConfig
from memory_core.errors import StoreError
from memory_core.extraction.prepare import open_fence
from memory_core.extraction.reply import (
    is_assent,
    is_bare_answer,
    may_mean_reply,
    takes_back_last,
)
from memory_core.extraction.worker import ExtractWorker
from memory_core.items import branches
from memory_core.items import writer as items_writer
from memory_core.items.cache import prune_changes
from memory_core.items.resent import TurnPaths
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.api import EngineStore, Tx
from memory_core.tools.commands import is_command

log = logging.getLogger("lcm.engine")

EXTRACT_MAX_CHARS = 32_000
"""Longest text extracted inside the capture transaction, and the size of each chunk
a longer message is extracted in (by a writer job queued after the capture
commits, off the request path: :meth:`CaptureJobs._extract_one`). The capture runs on
the writer thread that requests wait on, and the rules cost about 1.5 ms per 2 KB:
a whole 100 KB paste extracted inline would hold every other capture for seconds."""
EXTRACT_INLINE_MESSAGES = 4
"""Most new user messages of one request extracted inside its capture transaction.
A request bringing more (a conversation the proxy first sees with its history,
dozens of messages at once) has them all extracted, in order, by writer jobs
queued after the capture commits, as a long message is: the request that brings
them carries those messages itself, and extracting them inline holds it (and every
capture queued behind it) for a statement per rule step (on PostgreSQL a round trip each: a
25-message first request, ~600 items, ~6,500 statements, over the capture wait).
All or none, so that items are still stored in message order (supersession)."""
EXTRACT_INLINE_ITEMS = 12
"""Most items one message may yield inside its capture transaction. A message the
rules find more in (a pasted log: a line each) is extracted by a writer job queued
after the capture commits, as a long message is: each item costs its duplicate and
supersession checks (on PostgreSQL a round trip each), which would hold the request
and every capture queued behind it. The message itself is in the upstream's view
on that turn; its items serve later turns."""
EXTRACT_MAX_TOTAL_CHARS = 2_000_000
"""Characters of one message read for memory at most (about 63 chunks); the rest of
a longer message is skipped, logged at WARNING. It stays stored and searchable."""


def extract_chunks(text: str, size: int = EXTRACT_MAX_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, each ending at the
    last line break (else sentence end, else space) of its window when there is one
    in its second half: a fact is not cut in two at a chunk's edge. A piece that
    starts inside a fenced code block (opened in an earlier piece) is read with that
    fence line before it, so the rules still see code, not statements (a 40 KB
    pasted log is not 90 user facts)."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            for sep in ("\n", ". ", "。", " "):
                cut = window.rfind(sep)
                if cut >= size // 2:
                    end = start + cut + len(sep)
                    break
        out.append(text[start:end])
        start = end
    if len(out) < 2 or ("```" not in text and "~~~" not in text):
        return out
    fenced, fence = [], None
    for piece in out:
        fenced.append(f"{fence}\n{piece}" if fence else piece)
        fence = open_fence(piece, fence)
    return fenced

EXTRACT_RETRY_SECONDS = (5.0, 30.0, 300.0, 3600.0)
"""Backoff between extraction retries of one message (seconds), then every hour."""


def persona_order(scope: Scope) -> tuple[str, str]:
    """The writer's order key of a persona (tenant, role): its captures and
    extraction jobs keep their queued order (:class:`memory_core.store.batch.WriteQueue`),
    so its items are stored in message order (supersession)."""
    return (scope.tenant, scope.role)


def is_memory_command(text: str) -> bool:
    """True for in-chat ``/memory …`` commands, which are never extracted from
    (:func:`memory_core.tools.commands.is_command`)."""
    return is_command(text)


class CaptureJobs:
    """Queues captures on ``store``'s writer and extracts what they bring.

    ``spliced``: the engine's set of answer ids with a splice (memory-tool rounds
    the client never saw); an answer captured with an ``upstream_view`` joins it.
    ``worker``: extracts the messages a capture queues for a later writer job in a
    child process meanwhile (``MemoryConfig.extract_worker``,
    :mod:`memory_core.extraction.worker`); ``None``: the job extracts in process.
    :attr:`journal`: where answers are journaled as they are queued (set by the
    engine, :mod:`memory_core.capture.journal`); ``None``: not journaled."""

    def __init__(self, store: EngineStore, config: MemoryConfig, spliced: set[int],
                 worker: ExtractWorker | None = None) -> None:
        self.store = store
        self.config = config
        self.worker = worker
        self._spliced = spliced
        self._deferred = threading.local()  # ids of long messages queued by a capture
        self._chain_keys = ChainKeyCache()
        self._path_ids = evidence.PathIdCache()
        self._captures = 0
        # Per persona: ids of messages a request's capture queued for extraction after
        # its commit, not yet extracted (writer thread; see _catch_up).
        self._queued_after: dict[Hashable, list[int]] = {}
        self._queued_lock = threading.Lock()
        self._request_keys = itertools.count(1)
        self.journal: CaptureJournal | None = None
        self.masked_for: Callable[[Tx, str], frozenset[str] | None] | None = None
        """The content hashes a tenant's captures store with the placeholder
        (:attr:`CaptureTicket.masked`), read on the writer's transaction; set by the
        engine."""

    def capture_request(
        self, scope: Scope, request_id: str, messages: list[Any], event: dict[str, Any],
        zone: str = "", *, extract_after_answer: bool = False,
    ) -> tuple[CaptureTicket, Future[CaptureResult]]:
        """Queue the capture of a request's ``messages``; return (ticket, future).

        Pass the ticket to :meth:`capture_response` for the matching response; the
        writer runs jobs in order so the response always sees the request's result.
        ``zone``: the time zone the messages were said in, as stored (``""``: UTC);
        kept on each new message (a queued extraction reads it there) and its items.
        ``extract_after_answer``: nothing reads this request's items before its
        answer (no block, no memory tools: ``X-LCM-Memory: off``), so its user
        messages are only marked pending in the capture, and their extraction is
        queued once the answer's capture commits, ahead of the answer's own
        (items in message order, as stored inline); the answer's commit, which the
        client's end waits for, no longer waits behind it. A fork (an edited
        message) is still extracted inline. Without an answer's capture the
        pending rows are retried once due.
        """
        ticket = CaptureTicket(scope=scope, request_id=request_id, zone=zone)
        deferred: list[int] = []
        if extract_after_answer:
            ticket.after_answer = deferred  # filled by the job; read by the answer's
        if self.journal is not None:
            ticket.pending = (messages, event)  # journaled with the answer until committed
        # Urgent (the request may wait for it): ahead of the background writes
        # queued before it, except its persona's extraction jobs, which go ahead
        # with it (its own extraction then stores items in message order).
        order = persona_order(scope)
        # What this capture queues after its commit is keyed to the request, not the
        # persona: the persona's next capture (another request in flight, which never
        # saw this one's answer) does not wait for it; this request's answer does
        # (capture_response), so a request sent after that answer sees its items.
        # Message order is kept by _catch_up.
        own = (*order, next(self._request_keys))
        ticket.extract_key = own

        def queue_deferred(_result: CaptureResult) -> None:
            # The writer thread, after COMMIT: long messages queued for extraction,
            # in this capture's place, their paths read once for all of them (a
            # re-sent history: items.resent).
            paths = TurnPaths()
            for message_id in deferred if ticket.after_answer is None else ():
                with contextlib.suppress(StoreError):  # closing: retried on a later start
                    self.store.write_tx(self._extract_pending, message_id, paths,
                                        order_key=own, gives_way=True)
                    with self._queued_lock:
                        self._queued_after.setdefault(order, []).append(message_id)

        fut = self.store.write_tx(self._capture_request_job, ticket, messages, event, deferred,
                                  then=queue_deferred, urgent=True, order_key=order,
                                  then_key=own)

        def remember(done: Future[CaptureResult]) -> None:
            # Runs after COMMIT (the writer resolves futures then): only committed
            # paths are remembered.
            if not done.cancelled() and done.exception() is None:
                ticket.pending = None  # committed: the answer's journal line needs no copy
                res = done.result()
                if res.head_key and res.message_ids:
                    self._path_ids.put(scope, res.head_key, res.path)

        fut.add_done_callback(remember)
        return ticket, fut

    def _capture_request_job(
        self, tx: Tx, ticket: CaptureTicket, messages: list[Any],
        event: dict[str, Any], deferred: list[int] | None = None,
    ) -> CaptureResult:
        self._deferred.ids = deferred
        # Bounded: one queued message a capture (the request waits on this job);
        # queued messages are otherwise extracted by their own writer jobs. Asked
        # first, read last (with the capture's first read: no round trip of its own
        # on PostgreSQL); what this job queues is not due yet.
        due = tx.extraction.due_later(time.time(), 1) if self.config.extract else None
        if self.masked_for is not None:
            ticket.masked = self.masked_for(tx, ticket.scope.tenant)
        result = evidence.capture_request(tx, ticket, messages, event,
                                         config=self.config, key_cache=self._chain_keys,
                                         path_cache=self._path_ids)
        if self.config.extract and result.new_ids:
            # The new ids are the request's last messages, or (regrouped tool calls,
            # evidence.regroup_calls) each one request message's: found by id.
            first_new = len(result.message_ids) - len(result.new_ids)
            at = ({mid: i for i, mid in enumerate(result.message_ids)} if result.path_ids
                  else {mid: first_new + n for n, mid in enumerate(result.new_ids)})
            users = [(mid, messages[at[mid]]) for mid in result.new_ids
                     if isinstance(messages[at[mid]], dict)
                     and messages[at[mid]].get("role") == "user"]
            # A queued extraction reads the stored message: its parts from the raw
            # JSON, or, where that is not kept, its whole text (tool output included),
            # so a turn with tool results is read now (_queued_text).
            parts_lost = not self.config.store_raw_json
            # Items are stored in the order their messages were said (supersession):
            # once one message is queued for after the commit, every later one is.
            later = len(users) > EXTRACT_INLINE_MESSAGES
            # No reader before the answer: after it, unless a fork (edit) retires
            # items (its own are extracted first, as inline).
            after = ticket.after_answer is not None and not (
                result.created_thread and not result.path_ids
                and branches.is_edit(messages, first_new))
            # A user message with no assistant turn before it in the request (a
            # conversation's opening: a sub-agent's task prompt is one) may be words
            # the model wrote in a tool call (delegated.py): read by the job after the
            # commit, whose look-up of the scope's recent calls is off the request path.
            opening = next((i for i, m in enumerate(messages)
                            if isinstance(m, dict) and m.get("role") == "assistant"),
                           len(messages))
            paths = TurnPaths()  # one re-sent history is read once (items.resent)
            for mid, msg in users:
                name = msg.get("name")
                queued = len(deferred) if deferred is not None else 0
                said = spoken_text(msg)
                inline = parts_lost and _has_tool_results(msg)
                check = at[mid] < opening and delegated.worth_checking(said)
                self._extract_one(tx, ticket.scope, result.thread_id, mid, said, "user",
                                  name if isinstance(name, str) else "", defer=True,
                                  later=later and not inline, zone=ticket.zone,
                                  after_commit=(after or check) and not inline,
                                  paths=paths)
                if deferred is not None and len(deferred) > queued:
                    later = True
        if result.created_thread and result.new_ids and not result.path_ids:
            self._edited(tx, ticket.scope, messages, result)
        if due is not None:
            self._extract_queued(tx, due())
        self._captures += 1
        if self._captures % 1000 == 0:
            prune_changes(tx)
        return result

    def _edited(self, tx: Tx, scope: Scope, messages: list[Any],
                result: CaptureResult) -> None:
        """A request that forks a new thread with a user message beside another one
        (an edited message): retire the old branch's items, after the edit's own
        were extracted (:mod:`memory_core.items.branches`). Under its own savepoint:
        a failure loses nothing the capture stored."""
        first_new = len(result.message_ids) - len(result.new_ids)
        if not branches.is_edit(messages, first_new):
            return
        parent_id, new_id = result.message_ids[first_new - 1], result.new_ids[0]
        try:
            tx.extraction.attempt(lambda: branches.retire_edited(tx, scope, parent_id, new_id))
        except Exception as exc:  # noqa: BLE001 - fail open: the evidence is kept
            log.warning("retiring the items edited away under message %s failed: %r",
                        parent_id, exc)

    def _extract_one(self, tx: Tx, scope: Scope, thread_id: int,
                     message_id: int, text: str, speaker: str, name: str = "",
                     defer: bool = False, later: bool = False, zone: str = "",
                     after_commit: bool = False, paths: TurnPaths | None = None) -> None:
        """Extract and store items of one message; on failure queue it for a retry.
        ``name``: the message's ``name`` field, the items' speaker (``""``: none).
        ``zone``: the time zone it was said in, as stored (``""``: UTC).
        A text longer than :data:`EXTRACT_MAX_CHARS` is read whole, in chunks of that
        size (:func:`extract_chunks`), up to :data:`EXTRACT_MAX_TOTAL_CHARS`; with
        ``defer`` (the capture transaction) it is only queued, for a writer job
        after the commit, as is any text with ``later`` (a backfill message,
        :data:`EXTRACT_INLINE_MESSAGES`) the rules find items in (one they find
        nothing in needs no job). With ``after_commit`` (and ``defer``) it is queued
        unread, its rules run by that job. ``paths``: the message paths read for
        re-sent history, shared by the messages of one capture or batch of jobs
        (:class:`~memory_core.items.resent.TurnPaths`; ``None``: read for this one).

        Runs inside the capture transaction under its own savepoint, so a failing
        rule never loses the evidence it was reading.
        """
        text = evidence.storable_text(text)  # a cut emoji's lone surrogate: items are stored text
        if not text.strip() or is_memory_command(text):
            return
        if defer and after_commit:
            self._defer_extraction(tx, message_id, text, speaker)
            return
        if later and len(text) <= EXTRACT_MAX_CHARS and not self._has_items(text, speaker) \
                and not (speaker == "user" and (is_assent(text) or takes_back_last(text))):
            return  # a backfill message the rules find nothing in: no job for it
        if defer and (later or len(text) > EXTRACT_MAX_CHARS
                      or self._owes(scope, message_id)):
            self._defer_extraction(tx, message_id, text, speaker)
            return
        self._catch_up(tx, scope, message_id)
        # Items are stored text too: extract from what capture stored, never the key
        # or the card number.
        text = redact_text(text, **evidence.redaction(self.config))
        found: list[list[Any]] | None = None
        if defer:
            from memory_core.extraction import extract

            try:
                found = [extract(chunk, speaker=speaker) for chunk in extract_chunks(text)]
            except Exception as exc:  # noqa: BLE001 - the job retries it; evidence kept
                log.warning("extraction of message %s failed: %r; queued", message_id, exc)
                found = None
            if found is None or sum(map(len, found)) > EXTRACT_INLINE_ITEMS:
                self._defer_extraction(tx, message_id, text, speaker)
                return
        if len(text) > EXTRACT_MAX_TOTAL_CHARS:
            log.warning("message %s: %d characters; reading the first %d for memory,"
                        " skipping the rest (it stays stored and searchable)",
                        message_id, len(text), EXTRACT_MAX_TOTAL_CHARS)
            text = text[:EXTRACT_MAX_TOTAL_CHARS]
        if found is None and not defer and self.worker is not None:
            # Read by the child meanwhile when the capture handed this text over
            # (_read_ahead); else, or when it failed, read here.
            found = self.worker.take(message_id, text, speaker)

        if found is not None and not any(found) and not (
                speaker == "user" and (is_assent(text) or is_bare_answer(text)
                                       or takes_back_last(text))):
            tx.extraction.done(message_id)  # nothing to store: no savepoint for it
            return

        def store_items() -> None:
            from memory_core.extraction import extract

            chunks = found if found is not None else [
                extract(chunk, speaker=speaker) for chunk in extract_chunks(text)]
            answer = None
            if speaker == "user" and not any(chunks) and takes_back_last(text):
                # "Scratch that." / "Just kidding.": the message before is withdrawn
                take_back_last(tx, scope, message_id, name, past_reply=not may_mean_reply(text))
                return
            if speaker == "user" and len(chunks) == 1 and not chunks[0]:
                # "The editor one." after "Which font size did you mean …?"
                pick = read_pick(tx, scope, message_id, text, name)
                if pick is not None:
                    items_writer.supersede(tx, pick[1], pick[0],
                                           "correction: the user said which item it meant")
                    return
            if speaker == "user" and len(chunks) == 1:  # a short reply is one chunk
                answer = read_reply(tx, scope, message_id, text, chunks[0], lambda t: (
                    redact_text(t, **evidence.redaction(self.config))))
            if answer is not None and answer.proposals:
                # "yep 👍" after "I suggest we use Redis …": the proposal, the user's now
                for decision in answer.proposals:
                    new = items_writer.store_extracted(tx, scope, thread_id, message_id,
                                                       [decision], speaker=name, zone=zone,
                                                       paths=paths)
                    old = answer.stored.get(decision.text)
                    if new and old is not None:
                        items_writer.confirm_proposal(tx, new[0], old)
                return  # the assent says nothing of its own ("let's do it")
            for items in chunks:
                items_writer.store_extracted(tx, scope, thread_id, message_id, items,
                                             speaker=name, zone=zone,
                                             answering=answer is not None and answer.answering,
                                             paths=paths)

        try:
            tx.extraction.attempt(store_items)
        except Exception as exc:  # noqa: BLE001 - queued for retry, evidence kept
            log.warning("extraction of message %s failed: %r; queued for retry", message_id, exc)
            attempts = (tx.extraction.attempts(message_id) or 0) + 1
            delay = EXTRACT_RETRY_SECONDS[min(attempts - 1, len(EXTRACT_RETRY_SECONDS) - 1)]
            tx.extraction.failed(message_id, attempts, repr(exc)[:500], time.time() + delay)
            return
        tx.extraction.done(message_id)

    def _defer_extraction(self, tx: Tx, message_id: int, text: str, speaker: str) -> None:
        """Queue ``message_id``'s extraction for a writer job run once this capture
        commits (:meth:`capture_request`), off the request path, as a retry would;
        its ``text`` (as ``speaker``) goes to the worker meanwhile (:meth:`_read_ahead`)."""
        tx.extraction.defer(message_id, time.time() + EXTRACT_RETRY_SECONDS[0])
        deferred = getattr(self._deferred, "ids", None)
        if deferred is not None:
            deferred.append(message_id)
        self._read_ahead(message_id, text, speaker)

    def _catch_up(self, tx: Tx, scope: Scope, message_id: int) -> None:
        """Before ``message_id``'s items are stored (writer thread): extract first the
        persona's earlier messages that a request's capture queued for after its
        commit and that no job has read yet (:meth:`capture_request`: the persona's
        next capture does not wait for those jobs), so that items are stored in
        message order (supersession). Each job then finds its message done."""
        order = persona_order(scope)
        with self._queued_lock:
            queued = self._queued_after.get(order)
            if not queued:
                return
            earlier = [m for m in queued if m < message_id]
            later = [m for m in queued if m > message_id]
            if later:
                self._queued_after[order] = later
            else:
                del self._queued_after[order]
        for earlier_id in earlier:
            self._extract_pending(tx, earlier_id)

    def _owes(self, scope: Scope, message_id: int) -> bool:
        """Whether an earlier message of the persona waits for a queued extraction
        job (:meth:`_catch_up`): the capture then queues ``message_id`` too, so that
        its items still follow theirs without reading them on the request path
        (another conversation's 100 KB paste). One of this capture's own queued
        messages is ``later`` already (:meth:`_capture_request_job`)."""
        with self._queued_lock:
            return any(m < message_id for m in self._queued_after.get(persona_order(scope), ()))

    def _forget_queued(self, message_id: int) -> None:
        """``message_id``'s own job runs: :meth:`_catch_up` need not read it."""
        with self._queued_lock:
            for order, queued in list(self._queued_after.items()):
                if message_id in queued:
                    queued.remove(message_id)
                    if not queued:
                        del self._queued_after[order]

    def _read_ahead(self, message_id: int, text: str, speaker: str) -> None:
        """Hand the text a queued extraction job of ``message_id`` will read (redacted,
        cut at :data:`EXTRACT_MAX_TOTAL_CHARS`, as :meth:`_extract_one` does) to the
        worker, if any; the job uses its result only for that exact text."""
        if self.worker is None:
            return
        text = redact_text(text, **evidence.redaction(self.config))
        self.worker.read_ahead(message_id, text[:EXTRACT_MAX_TOTAL_CHARS], speaker)

    def _has_items(self, text: str, speaker: str) -> bool:
        """Whether the rules find anything to store in ``text`` (CPU only, no store);
        ``True`` when a rule fails (the queued job retries it and records the failure)."""
        from memory_core.extraction import extract

        text = redact_text(text, **evidence.redaction(self.config))
        try:
            return bool(extract(text, speaker=speaker))
        except Exception:  # noqa: BLE001 - decided by the job, evidence kept
            return True

    def _extract_queued(self, tx: Tx, rows: list[dict[str, Any]],
                        paths: TurnPaths | None = None) -> None:
        """Extract the queued messages ``rows`` (:meth:`ExtractionQueue.due
        <memory_core.store.api.ExtractionQueue.due>`), each from its stored text, in
        its own thread, as its author's speaker, in the time zone it was said in."""
        for r in rows:
            scope = Scope(r["tenant"], r["role"], r["session"])
            text = _queued_text(r)
            if not text.strip() or is_memory_command(text):
                # nothing of the user's (tool results alone, a command): off the
                # queue, so that the rows behind it are reached
                tx.extraction.done(r["message_id"])
                continue
            speaker = "assistant" if r["msg_role"] == "assistant" else "user"
            if speaker == "user" and self._model_wrote(tx, r["message_id"], text):
                continue
            self._extract_one(tx, scope, r["thread_id"], r["message_id"], text, speaker,
                              r["name"] if isinstance(r["name"], str) else "",
                              zone=r["tz"] or "", paths=paths)

    def _model_wrote(self, tx: Tx, message_id: int, text: str) -> bool:
        """Whether the queued user message ``message_id`` (its ``text``) is a tool-call
        argument an assistant of its scope wrote just before
        (:func:`memory_core.capture.delegated.model_wrote`): then it is taken off the
        queue with no items (kept as evidence). ``False`` when the look-up fails
        (fail open: extracted as the user's)."""
        if not delegated.worth_checking(text):
            return False
        try:
            calls = tx.extraction.attempt(functools.partial(  # a savepoint: a failed
                tx.extraction.calls_before, message_id,       # read aborts nothing else
                delegated.WINDOW_SECONDS, delegated.RECENT_CALLS))
            wrote = delegated.model_wrote(text, calls)
        except Exception as exc:  # noqa: BLE001 - fail open: read as the user's
            log.warning("checking message %s against the assistant's tool calls failed:"
                        " %r", message_id, exc)
            return False
        if wrote:
            log.debug("message %s is a tool-call argument the assistant wrote: no items",
                      message_id)
            tx.extraction.done(message_id)
        return wrote

    def capture_response(
        self,
        ticket: CaptureTicket,
        choices: list[Any],
        event: dict[str, Any],
        hidden_rounds: list[Any] | None = None,
        upstream_view: list[Any] | None = None, *, journal: bool = True,
    ) -> Future[list[int]]:
        """Queue the capture of the assistant messages of a response (one per choice).

        ``hidden_rounds``/``upstream_view``: see ``evidence.capture_response`` (memory
        tool rounds the client never saw, and what replaces choice 0 upstream later).
        The future resolves once the answer is committed; its memory items are
        extracted by the writer job queued just before that (:meth:`_extract_pending`),
        in this capture's place: ahead of anything queued after it (the persona's
        next capture included, even when it was queued before this one committed).

        The write is urgent, as its request's capture is (which it follows): it
        waits for the writer's running job, not for the background jobs queued
        before it (long messages' extraction). It extracts nothing itself; its
        extraction job, queued after it commits, keeps its place behind its
        persona's (:func:`persona_order`: items in message order). Like every
        extraction queued after a commit it gives way to the requests in flight
        (``gives_way``; this one's included, so the answer reaches the client before
        the writer takes the interpreter for it), at most ``search.foreground_wait_ms``;
        the persona's next capture takes it ahead (its order key) when it is still
        queued then.

        With :attr:`journal` (and ``journal``), the capture is also written to the
        journal file before this returns (``ticket.journaled`` then true: it
        survives a crash before the commit, and is replayed on the next open).
        """
        fut = self.store.write_tx(
            self._capture_response_job, ticket, choices, event, hidden_rounds,
            upstream_view, then=functools.partial(self._queue_extraction,
                                                  persona_order(ticket.scope), ticket),
            # the request's own queued extractions go ahead of its answer
            urgent=True, order_key=ticket.extract_key, then_key=persona_order(ticket.scope))
        book = self.journal
        if book is not None and journal:
            try:
                token = book.append(
                    _journal_record(ticket, choices, event, hidden_rounds, upstream_view))
            except Exception as exc:  # noqa: BLE001 - not journaled: the caller waits
                log.warning("could not journal the answer of request %s: %r",
                            ticket.request_id, exc)
                token = None
            if token is not None:
                ticket.journaled = True
                fut.add_done_callback(lambda _: book.done(token))
        return fut

    def replay(self, records: list[dict[str, Any]]) -> int:
        """Store the journaled answers (:mod:`memory_core.capture.journal`) whose
        ``response`` event the store lacks (their commit never came), each with its
        request's capture when the line holds it (its messages then match what is
        stored, by prefix; the ``request`` event is written again, marked
        ``"replayed": "capture-journal"``, as is the answer's), in order, waiting
        for each commit; the number stored. A line that fails is logged and
        skipped."""
        stored = 0
        for rec in records:
            try:
                scope = Scope(*rec["scope"])
                rid = str(rec["rid"])

                def committed(tx: Tx, rid: str = rid, tenant: str = scope.tenant) -> bool:
                    return any(e["kind"] == "response"
                               for e in tx.forwarded.request_events(rid, tenant))

                if self.store.read_tx(committed):
                    continue
                zone = str(rec.get("zone") or "")
                request = rec.get("request")
                if isinstance(request, dict):
                    ticket, fut = self.capture_request(
                        scope, rid, request["messages"],
                        dict(request["event"], replayed="capture-journal"), zone)
                    fut.result()
                else:
                    ticket = CaptureTicket(scope=scope, request_id=rid, zone=zone)
                    result = rec.get("result")
                    if isinstance(result, dict):
                        fields: dict[str, Any] = {
                            k: tuple(v) if isinstance(v, list) else v
                            for k, v in result.items()}
                        ticket.result = CaptureResult(**fields)
                self.capture_response(
                    ticket, rec["choices"], dict(rec["event"], replayed="capture-journal"),
                    rec.get("hidden"), rec.get("view"), journal=False).result()
                stored += 1
            except Exception as exc:  # noqa: BLE001 - the rest are still replayed
                log.error("replaying a capture journal line (request %s) failed: %r",
                          rec.get("rid"), exc)
        return stored

    def _queue_extraction(self, order: Hashable, ticket: CaptureTicket,
                          ids: list[int]) -> None:
        """Queue the extraction of a committed answer (writer thread, after the
        commit, while the client still waits: cheap; never raises), after that of
        the request's messages that waited for it (``ticket.after_answer``). The job
        itself decided whether the answer is pending; :meth:`_extract_pending` looks."""
        held, ticket.after_answer = ticket.after_answer or [], []
        paths = TurnPaths()  # the held messages' paths, read once for all of them
        for held_id in held:  # the request's, said first (no-op when not pending)
            with contextlib.suppress(StoreError):  # closing: retried on a later start
                self.store.write_tx(self._extract_pending, held_id, paths, order_key=order,
                                    gives_way=True)
        if not ids or not self.config.extract:
            return
        message_id = ids[0]
        try:
            job = self.store.write_tx(self._extract_pending, message_id, order_key=order,
                                      gives_way=True)
        except StoreError:  # closing: the pending row is retried on a later start
            return

        def report(f: Future[None]) -> None:
            if not f.cancelled() and f.exception() is not None:
                log.error("extraction of answer %s failed: %r", message_id, f.exception())

        job.add_done_callback(report)

    def _wants_extraction(self, choices: list[Any]) -> bool:
        if not self.config.extract or not choices:
            return False
        text = message_text(choices[0])
        return bool(text.strip()) and not is_memory_command(text)

    def _capture_response_job(
        self, tx: Tx, ticket: CaptureTicket, choices: list[Any],
        event: dict[str, Any], hidden_rounds: list[Any] | None,
        upstream_view: list[Any] | None = None,
    ) -> list[int]:
        ids = evidence.capture_response(tx, ticket, choices, event, None,
                                       hidden_rounds, upstream_view, config=self.config)
        if ids and upstream_view is not None:
            self._spliced.add(ids[0])
        if ids and ticket.result is not None and self._wants_extraction(choices):
            # Assistant text becomes proposals only (DESIGN §5), from choice 0. Not in
            # this job: the client's end waits for it (the answer's durability), and
            # extraction took about 0.4 ms of that wait at 1000 turns. The answer is
            # marked pending in this transaction (``attempts`` 0) and extracted by
            # the job queued once it commits (:meth:`capture_response`), which the
            # writer runs before any capture queued later (FIFO): the next request's
            # block sees its items as before. After a crash in between, the pending
            # row is retried once due (``EXTRACT_RETRY_SECONDS[0]``).
            tx.extraction.defer(ids[0], time.time() + EXTRACT_RETRY_SECONDS[0])
            text = evidence.storable_text(message_text(choices[0]))
            if text.strip():
                self._read_ahead(ids[0], text, "assistant")
        return ids

    def _extract_pending(self, tx: Tx, message_id: int,
                         paths: TurnPaths | None = None) -> None:
        """Extract a committed answer its capture marked pending (writer job, see
        :meth:`capture_response`), from the stored message as a retry would; nothing
        when it is not pending (not marked, a retry did it, a purge removed it) or is
        already in the retry backoff (``attempts`` > 0). An answer on a branch an edit
        had left (an agent that forks on purpose) gives that branch its items back
        (:func:`memory_core.items.branches.restore_continued`). ``paths``: shared by
        the jobs queued with it (:meth:`_extract_one`)."""
        self._forget_queued(message_id)
        rows = tx.extraction.pending(message_id)
        self._extract_queued(tx, rows, paths)
        for r in rows:
            scope = Scope(r["tenant"], r["role"], r["session"])
            try:
                tx.extraction.attempt(functools.partial(
                    branches.restore_continued, tx, scope, message_id))
            except Exception as exc:  # noqa: BLE001 - fail open: nothing is lost
                log.warning("restoring items on the path of message %s failed: %r",
                            message_id, exc)


def _journal_record(ticket: CaptureTicket, choices: list[Any], event: dict[str, Any],
                    hidden: list[Any] | None, view: list[Any] | None) -> dict[str, Any]:
    """An answer's journal line: what :meth:`CaptureJobs.replay` needs to store it,
    with the request's messages while their capture has not committed, else that
    capture's result (the stored ids the answer hangs from)."""
    scope = ticket.scope
    record: dict[str, Any] = {
        "rid": ticket.request_id, "scope": [scope.tenant, scope.role, scope.session],
        "zone": ticket.zone, "choices": choices, "event": event}
    if hidden:
        record["hidden"] = hidden
    if view is not None:
        record["view"] = view
    pending = ticket.pending
    if pending is not None:
        record["request"] = {"messages": pending[0], "event": pending[1]}
    elif ticket.result is not None:
        record["result"] = _result_fields(ticket.result)
    return record


def _result_fields(result: CaptureResult) -> dict[str, Any]:
    """``result``'s fields by name, as ``dataclasses.asdict`` gives them, without its
    deep copy: every field is an int, a string, a bool, a float, ``None`` or a tuple
    of ints, none of them mutable. ``asdict`` copied ``message_ids`` element by element,
    on the event loop, before the answer was sent: a cost that grew with the history
    (about 2,000 ids at 1,000 turns)."""
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}


def _queued_text(row: dict[str, Any]) -> str:
    """What a queued message's extraction reads: a user or assistant message's stored
    text; for a turn of tool results, stored with ``msg_role`` ``tool`` (an Anthropic
    user turn that opens with ``tool_result`` blocks) or ``user``, the parts its author
    wrote after them (:func:`~memory_core.capture.tree.spoken_text`, from the kept
    ``raw_json``); ``""`` when none is kept or it cannot be parsed."""
    raw = row.get("raw_json")
    message = None
    if raw and '"tool_result"' in raw:
        try:
            message = evidence.loads_lossless(raw)
        except (ValueError, RecursionError):  # its parts unreadable: nothing is read
            return ""
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        return spoken_text(message)
    return "" if row["msg_role"] == "tool" else str(row["text"])


def _has_tool_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "tool_result" for part in content)
