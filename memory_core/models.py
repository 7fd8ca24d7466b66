"""Frozen value types shared by the engine, the store and the proxy."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a conversation belongs to.

    ``tenant``: salted hash of the client's API key (never the key), or a configured
    name. ``role``: the persona (``X-LCM-Role``, default ``"default"``). ``session``:
    the ``X-LCM-Session`` header, or ``""`` when threads are found by prefix
    fingerprint. Node keys are unique within one scope.
    """

    tenant: str
    role: str = "default"
    session: str = ""


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What capturing one request's ``messages`` did.

    ``thread_id``: the thread the request continues (or started, or forked).
    ``message_ids``: the stored id of every request message, in order.
    ``new_ids``: the ids stored by this call (empty when the history was replayed).
    ``head_id``/``head_key``: the last request message (parent of the response).
    ``created_thread``: a new root or fork. ``previous_activity_at``: the thread's
    ``updated_at`` before this call (UNIX seconds; ``None`` for a new thread).
    ``path_ids``: the stored path, root first, when it differs from ``message_ids``
    (the request's parallel tool calls were echoed interleaved with their results
    and matched the one stored reply that made them: ``message_ids`` then repeats
    that reply's id for each of the request's call turns); empty otherwise.
    ``legacy_keys``: the stored path was keyed in the form used before content was
    normalised (:func:`memory_core.capture.tree.canonical_message`); its answer is
    keyed that way too.
    """

    thread_id: int
    message_ids: tuple[int, ...]
    new_ids: tuple[int, ...]
    head_id: int | None
    head_key: str | None
    created_thread: bool
    previous_activity_at: float | None
    path_ids: tuple[int, ...] = ()
    legacy_keys: bool = False

    @property
    def path(self) -> tuple[int, ...]:
        """The stored path of the request's messages, root first (each id once)."""
        return self.path_ids or self.message_ids


@dataclass(slots=True)
class CaptureTicket:
    """Links a queued request capture to the response capture that follows it.

    The writer thread runs jobs in order, so the request job fills ``result`` before
    the response job reads it. ``error`` is set when the request capture failed.
    ``zone``: the IANA time zone the request's messages were said in, as stored
    (``""``: UTC; :func:`memory_core.extraction.relative_dates.check_zone`).
    """

    scope: Scope
    request_id: str
    result: CaptureResult | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    zone: str = ""
    after_answer: list[int] | None = None
    """Ids of the request's messages whose extraction waits for the answer's commit
    (a request captured with ``extract_after_answer``); ``None``: none wait."""
    pending: tuple[list[Any], dict[str, Any]] | None = None
    """The request's ``(messages, event)`` while its capture has not committed (the
    capture journal writes them with the answer, :mod:`memory_core.capture.journal`);
    ``None`` once it has, or without a journal."""
    journaled: bool = False
    """The answer's capture was written to the capture journal when queued: it
    survives a crash before its commit (nothing need wait for that commit)."""
    masked: frozenset[str] | None = None
    """Content hashes of messages redacted under the request's tenant that are stored
    with the placeholder wherever they are captured again (set by the capture job:
    :data:`memory_core.store.scrub.WIDE_KEY`); ``None``: none."""
    extract_key: Hashable = None
    """The writer's order key of the extraction jobs the request's capture queued
    for after its commit (:meth:`memory_core.capture.jobs.CaptureJobs.capture_request`);
    the answer's capture goes after them. ``None``: none."""
