"""Stored responses: each relayed response id mapped to the conversation it ends.

A Responses client that continues with ``previous_response_id`` (or in a
``conversation``) sends only its new items; :class:`ResponseThreads` keeps, per
tenant and role, the items each relayed response ends (durable in the store's
``response_threads``, read through a bounded cache), so the proxy can capture
and plan the request as its whole thread (:mod:`proxy.handlers.responses`).
A response or conversation id is found among the tenants of the request's API key
(its own and its end users'): :meth:`ResponseThreads.find` and
:meth:`ResponseThreads.head` say which scope holds it. A request without a session of
its own (no ``X-LCM-Session``) that continues a response takes that response's
session, so that it is captured on the thread the response ended, not a new one.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections import OrderedDict
from typing import Any

from memory_core.engine import Engine
from memory_core.items.writer import account_tenant
from memory_core.models import CaptureTicket, Scope
from proxy.appkeys import ENGINE
from proxy.flow.exchange import Exchange
from proxy.wire.responses import input_items
from proxy.wire.responseview import SHOWN_FIELDS, Shown

log = logging.getLogger("lcm.responses")


class ResponseThreads:
    """Response id → the conversation items it ends, per tenant and role.

    Durable: each relayed response's row goes to the store
    (:meth:`Engine.remember_response`, ``response_threads``), so a restarted proxy, or
    another on the same data dir, resolves it too; reads go through a cache of the
    newest ``limit`` conversations (entries share their items), keyed by the API
    key's tenant so that :meth:`find` sees every end user's. A store failure
    resolves nothing (the request is forwarded untouched) and never fails the chat.
    """

    def __init__(self, engine: Engine, limit: int = 1024) -> None:
        self.engine = engine
        self.limit = limit
        # (key's tenant, role, response id) -> (the tenant that holds it, its session,
        # its items)
        self._map: OrderedDict[tuple[str, str, str], tuple[str, str, tuple[Any, ...]]] = \
            OrderedDict()
        # (key's tenant, role, conversation id) -> (the tenant that holds it, its head)
        self._heads: OrderedDict[tuple[str, str, str], tuple[str, str]] = OrderedDict()
        self._shown: OrderedDict[str, Shown] = OrderedDict()
        self._lock = threading.Lock()

    def note_shown(self, shown: Shown) -> None:
        """Note how a relayed response was shown to its client (the newest
        ``limit``, in memory: for the ``/v1/responses/{id}`` routes)."""
        with self._lock:
            self._shown[shown.response["id"]] = shown
            self._shown.move_to_end(shown.response["id"])
            while len(self._shown) > self.limit:
                self._shown.popitem(last=False)

    def shown(self, response_id: str) -> Shown | None:
        """What :meth:`note_shown` noted for ``response_id``, or ``None``."""
        with self._lock:
            return self._shown.get(response_id)

    def forget_shown(self, response_id: str) -> None:
        with self._lock:
            self._shown.pop(response_id, None)

    def hidden_ids(self) -> set[str]:
        """The ids of the noted answers' other rounds (never a client's)."""
        with self._lock:
            return {i for shown in self._shown.values() for i in shown.others}

    def cached(self, scope: Scope, response_id: str) -> tuple[Any, ...] | None:
        """The items of the conversation ``response_id`` ends in ``scope``'s own
        tenant when the cache holds them, else ``None`` (no store read)."""
        found = self.cached_find(scope, response_id)
        return found[1] if found is not None and found[0].tenant == scope.tenant else None

    def cached_find(self, scope: Scope, response_id: str
                    ) -> tuple[Scope, tuple[Any, ...]] | None:
        """What :meth:`find` answers when the cache holds it, else ``None`` (no store
        read)."""
        key = (account_tenant(scope.tenant), scope.role, response_id)
        with self._lock:
            found = self._map.get(key)
            if found is None:
                return None
            self._map.move_to_end(key)
        tenant, session, items = found
        return _scoped(scope, tenant, session), items

    def find(self, scope: Scope, response_id: str) -> tuple[Scope, tuple[Any, ...]] | None:
        """The scope that holds ``response_id`` and the items of the conversation it
        ends: ``scope`` itself when its tenant holds it, else ``scope`` with the
        tenant of another end user of the same API key (or of the key itself) that
        does; ``None`` when none does. A ``scope`` without a session gets the
        response's. Reads the store on a cache miss: from the
        event loop, use :meth:`proxy.flow.asyncengine.AsyncEngine.stored_response`."""
        found = self.cached_find(scope, response_id)
        if found is not None:
            return found
        items = self.get(scope, response_id)
        if items is not None:
            return self.cached_find(scope, response_id) or (scope, items)
        try:
            owner = self.engine.response_owner(scope, response_id)
        except Exception:  # noqa: BLE001 - fail open: forwarded without memory
            log.exception("could not look up the owner of the stored response %s",
                          response_id)
            return None
        if owner is None or owner == scope.tenant:
            return None
        theirs = dataclasses.replace(scope, tenant=owner)
        items = self.get(theirs, response_id)
        if items is None:
            return None
        return self.cached_find(scope, response_id) or (theirs, items)

    def cached_head(self, scope: Scope, conversation_id: str) -> tuple[Scope, str] | None:
        """What :meth:`head` answers when the cache knows it, else ``None`` (no store
        read)."""
        with self._lock:
            found = self._heads.get((account_tenant(scope.tenant), scope.role,
                                     conversation_id))
        return (_scoped(scope, found[0]), found[1]) if found is not None else None

    def get(self, scope: Scope, response_id: str) -> tuple[Any, ...] | None:
        """The items of the conversation ``response_id`` ends, or ``None``. Reads the
        store on a cache miss: from the event loop, use
        :meth:`proxy.flow.asyncengine.AsyncEngine.stored_response`."""
        found = self.cached(scope, response_id)
        if found is not None:
            return found
        try:
            stored = self.engine.response_conversation(scope, response_id)
        except Exception:  # noqa: BLE001 - fail open: forwarded without memory
            log.exception("could not read the stored response %s", response_id)
            return None
        if stored is None:
            return None
        items = tuple(stored[0])
        self._cache(scope, response_id, items, stored[2])
        return items

    def head(self, scope: Scope, conversation_id: str) -> tuple[Scope, str] | None:
        """The scope that holds a ``conversation`` (``scope``, or ``scope`` with the
        tenant of another end user of its API key, as :meth:`find`) and the newest
        response relayed in it, or ``None`` (also when the store cannot be read).
        Reads the store on a cache miss."""
        found = self.cached_head(scope, conversation_id)
        if found is not None:
            return found
        try:
            at = self.engine.response_conversation_head(scope, conversation_id)
            if at is not None:
                return scope, at
            owner = self.engine.response_conversation_owner(scope, conversation_id)
            if owner is None or owner == scope.tenant:
                return None
            theirs = dataclasses.replace(scope, tenant=owner)
            at = self.engine.response_conversation_head(theirs, conversation_id)
        except Exception:  # noqa: BLE001 - fail open: captured as a new conversation
            log.exception("could not read the stored conversation %s", conversation_id)
            return None
        return (theirs, at) if at is not None else None

    def put(self, scope: Scope, response_id: str, items: list[Any], *,
            parent: str | None = None, added: list[Any] | None = None,
            ticket: CaptureTicket | None = None, conversation_id: str | None = None
            ) -> None:
        """Map ``response_id`` to ``items``; with ``added`` (the items it adds to the
        conversation of ``parent``) also store its row, after ``ticket``'s capture;
        with ``conversation_id``, make it that conversation's newest response."""
        self._cache(scope, response_id, tuple(items))
        if conversation_id is not None:
            with self._lock:
                key = (account_tenant(scope.tenant), scope.role, conversation_id)
                self._heads[key] = (scope.tenant, response_id)
                self._heads.move_to_end(key)
                while len(self._heads) > self.limit:
                    self._heads.popitem(last=False)
        if added is None:
            return
        try:
            self.engine.remember_response(scope, response_id, parent, added, ticket,
                                          conversation_id)
        except Exception:  # noqa: BLE001 - fail open: it stays in memory only
            log.exception("could not store the response %s", response_id)

    def _cache(self, scope: Scope, response_id: str, items: tuple[Any, ...],
               session: str | None = None) -> None:
        key = (account_tenant(scope.tenant), scope.role, response_id)
        with self._lock:
            self._map[key] = (scope.tenant, scope.session if session is None else session,
                              items)
            self._map.move_to_end(key)
            while len(self._map) > self.limit:
                self._map.popitem(last=False)


def _scoped(scope: Scope, tenant: str, session: str = "") -> Scope:
    """``scope`` with ``tenant``, and with ``session`` where ``scope`` has none
    (``scope`` itself when that changes nothing)."""
    changes: dict[str, str] = {}
    if tenant != scope.tenant:
        changes["tenant"] = tenant
    if session and not scope.session:
        changes["session"] = session
    return dataclasses.replace(scope, **changes) if changes else scope


_THREADS: weakref.WeakKeyDictionary[Engine, ResponseThreads] = weakref.WeakKeyDictionary()


def threads_of(engine: Engine) -> ResponseThreads:
    """The :class:`ResponseThreads` of one engine (one per proxy app)."""
    found = _THREADS.get(engine)
    if found is None:
        found = _THREADS[engine] = ResponseThreads(engine)
    return found


def remember(ex: Exchange, obj: Any) -> None:
    """Map a relayed response's id to its thread (the request's items, then its
    ``output``), unless the request said ``store: false`` or the response is not done
    (``queued`` or ``in_progress``: a ``background`` run, whose output only the upstream
    will know, so a request continuing it goes as sent); its row is stored when the
    conversation it continues is known (always, unless it continued an unknown id).
    How the client was shown it is noted (:func:`_note_shown`); of a response not
    done, only its ``previous_response_id`` (its output is the upstream's to come)."""
    if (isinstance(obj, dict) and isinstance(obj.get("id"), str)
            and isinstance(ex.body, dict) and ex.body.get("store") is not False):
        running = obj.get("status") in ("queued", "in_progress")
        _note_shown(ex, {"id": obj["id"], "previous_response_id": obj.get(
            "previous_response_id")} if running else obj)
    if (ex.scope is None or not isinstance(obj, dict) or not isinstance(obj.get("id"), str)
            or not isinstance(obj.get("output"), list)
            or obj.get("status") in ("queued", "in_progress")
            or not isinstance(ex.body, dict) or ex.body.get("store") is False):
        return
    conversation = ex.conversation if ex.conversation is not None else input_items(ex.body)
    known = ex.conversation is not None or (ex.body.get("previous_response_id") is None
                                            and ex.body.get("conversation") is None)
    added = [*input_items(ex.body), *obj["output"]]
    threads_of(ex.request.app[ENGINE]).put(
        ex.scope, obj["id"], [*conversation, *obj["output"]], parent=ex.continues,
        added=added if known else None, ticket=ex.ticket, conversation_id=ex.conversation_id)


def shown_previous(ex: Exchange) -> str | None:
    """The client's ``previous_response_id`` when its request went as a stateless
    replay (the upstream's answer then says null; the client is shown its own)."""
    prev = ex.body.get("previous_response_id") if isinstance(ex.body, dict) else None
    replayed = ex.extra.get("x-lcm-responses-mode") == "stateless-replay"
    return prev if replayed and isinstance(prev, str) else None


def _note_shown(ex: Exchange, obj: dict[str, Any]) -> None:
    """Note how the client was shown ``obj`` (the response it ended with): what the
    proxy changed, so that the upstream's stored copy reads back as shown, and
    whether a memory block went in (a request it left alone is noted with none: a
    user text shaped like a block is then read back whole)."""
    previous = shown_previous(ex)
    response = {k: obj[k] for k in ("id", *SHOWN_FIELDS) if k in obj}
    if previous is not None and response.get("previous_response_id") is None:
        response["previous_response_id"] = previous
    others = tuple(dict.fromkeys(r.response_id for r in ex.rounds
                                 if isinstance(r.response_id, str)
                                 and r.response_id != obj["id"]))
    threads_of(ex.request.app[ENGINE]).note_shown(
        Shown(response, frozenset(ex.tool_names), others,
              block=ex.prepared.state == "injected"))


def note_completion(ex: Exchange, obj: Any) -> None:
    """Note how a stored chat completion (``store: true``) was shown, as for a response
    (``obj``: the client's completion, or a stream's ``{"id": ...}``)."""
    if (isinstance(obj, dict) and isinstance(obj.get("id"), str)
            and isinstance(ex.body, dict) and ex.body.get("store") is True):
        _note_shown(ex, {k: obj[k] for k in ("id", "usage") if k in obj})


def conversation_id(given: Any) -> str | None:
    """A request's ``conversation`` id (a string, or an object with an ``id``)."""
    given = given.get("id") if isinstance(given, dict) else given
    return given if isinstance(given, str) and given else None
