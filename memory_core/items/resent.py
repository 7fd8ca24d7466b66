"""History sent again: whether a message is one of an item's sources re-sent with its
turns (a client resuming or forking a conversation in a new thread), not a new telling.

:func:`memory_core.items.writer._restated` asks it before it counts another
conversation's time (``data.occasions``). The answer compares two message paths, the
message's and each earlier source's, back to where the shorter one starts; a whole
history re-sent asks it once per restated message, each path the one before plus a
turn or two. :class:`TurnPaths` reads each message of those paths once and carries
how far two paths agree from one pair of messages to their children, so a re-send of
N messages reads O(N) rows and compares O(N) turns, not O(N²).
"""

from __future__ import annotations

from memory_core.store.api import Row, Tx

_CONTEXT_ROLES_SKIPPED = frozenset({"system", "developer"})
"""Roles left out when two paths are compared: a client that starts a new
conversation may send a new system prompt (today's date) above the old turns."""

_RESENT_COMPARED = 4
"""Most earlier sources of the same words whose paths :meth:`TurnPaths.resent` reads."""

_STEPS = 8
"""Parents read one at a time before the rest of a path is read in one walk: a
message of a re-send is a turn or two below one already read."""

Turn = tuple[str | None, str]


class TurnPaths:
    """The message paths :meth:`resent` compares, each message read once.

    For each message read: its turn ``(role, text)`` (``None`` for a system or
    developer message, left out of paths), the last turn of its parent's path and
    its path's length. Messages never change once stored; only a purge cuts a path
    (it deletes an ancestor), so one memo serves one capture, or one batch of
    extraction jobs queued together, and is then dropped. Used on the writer thread
    only; not thread-safe.
    """

    __slots__ = ("_agree", "_depth", "_turn", "_up")

    def __init__(self) -> None:
        self._turn: dict[int, Turn | None] = {}
        self._up: dict[int, int | None] = {}
        """Message id → the last message of its parent's path (a turn), or ``None``."""
        self._depth: dict[int, int] = {}
        """Message id → how many turns its path holds (its own included)."""
        self._agree: dict[tuple[int, int], int] = {}
        """Two turn messages → how many turns their paths share at the end."""

    def resent(self, tx: Tx, message_id: int | None, sources: list[int]) -> bool:
        """Whether message ``message_id`` is one of ``sources`` sent again with its
        history (a client that replays an earlier conversation in a new session or
        thread, or forks it), not the same words told anew. It is when a source holds
        the same words after the same turns: their paths (system and developer
        messages left out) agree back to where the shorter one starts, and that
        shared part holds more than the message itself, or the message opens its
        path and its request sent more after it
        (:meth:`~memory_core.store.api.HistoryReads.sent_as_history`: history, not
        the newest turn). History sent with its opening turns edited or replaced (a
        first message rewritten, a summary in place of the older turns) is resent
        too: the message is history in its request and the turn just before it, or
        one just after it (:meth:`~memory_core.store.api.HistoryReads.next_turns`), is
        a source's. The same words as the newest turn of a new conversation, or
        after other turns, are a new telling. ``False`` for a message not stored."""
        others = [s for s in sources if s != message_id]
        if message_id is None or not others:
            return False
        mine = self._last_turn(tx, message_id)
        if mine is None:
            return False
        said = self._turn[mine]
        same = sorted((int(r["id"]) for r in tx.history.message_links(others)
                       if (r["msg_role"], r["text"]) == said), reverse=True)[:_RESENT_COMPARED]
        befores = [b for b in (self._last_turn(tx, s) for s in same) if b is not None]
        for before in befores:
            n = min(self._depth[mine], self._depth[before])
            if n > 1 and self._shared(mine, before) >= n:
                return True
        if not same or not tx.history.sent_as_history(message_id):
            return False
        if self._depth[mine] == 1:
            return True  # it opens its path
        up = self._up[mine]
        if any((b_up := self._up[b]) is not None and up is not None
               and self._turn[b_up] == self._turn[up] for b in befores):
            return True  # the turn before it is a source's
        after = {(r["msg_role"], r["text"]) for r in tx.history.next_turns([message_id])}
        return any((r["msg_role"], r["text"]) in after for r in tx.history.next_turns(same))

    def _last_turn(self, tx: Tx, message_id: int) -> int | None:
        """The message whose turn ends ``message_id``'s path (itself, unless a system
        or developer message), read with its ancestors; ``None``: an empty path or
        no such message."""
        self._read(tx, message_id)
        if message_id not in self._depth:
            return None
        return message_id if self._turn[message_id] is not None else self._up[message_id]

    def _read(self, tx: Tx, message_id: int) -> None:
        """Remember ``message_id`` and every ancestor not yet read: parent by parent
        up to :data:`_STEPS` of them, then the rest of the path in one walk."""
        unread: list[Row] = []
        at: int | None = message_id
        while at is not None and at not in self._depth:
            if len(unread) == _STEPS:
                ids = [i for i in tx.capture.path_ids(at) if i not in self._depth]
                rows = {int(r["id"]): r for r in tx.history.message_links(ids)}
                unread += [rows[i] for i in reversed(ids) if i in rows]
                break
            found = tx.history.message_links([at])
            if not found:
                break
            unread.append(found[0])
            at = None if found[0]["parent_id"] is None else int(found[0]["parent_id"])
        for row in reversed(unread):  # root first: each parent is known before its child
            mid = int(row["id"])
            parent = row["parent_id"]
            up: int | None = None
            depth = 0
            if parent is not None and int(parent) in self._depth:
                p = int(parent)
                up = p if self._turn[p] is not None else self._up[p]
                depth = self._depth[p]
            role = row["msg_role"]
            turn = None if role in _CONTEXT_ROLES_SKIPPED else (role, row["text"])
            self._turn[mid] = turn
            self._up[mid] = up
            self._depth[mid] = depth + (turn is not None)

    def _shared(self, a: int, b: int) -> int:
        """How many turns the paths ending at turn messages ``a`` and ``b`` share at
        their ends, carried from their parents' pair when that was compared."""
        walked: list[tuple[int, int]] = []
        x: int | None = a
        y: int | None = b
        base = 0
        while x is not None and y is not None:
            if (x, y) in self._agree:
                base = self._agree[(x, y)]
                break
            if x == y:  # one message: the rest of the path is shared
                base = self._depth[x]
                break
            if self._turn[x] != self._turn[y]:
                break
            walked.append((x, y))
            x, y = self._up[x], self._up[y]
        for pair in reversed(walked):
            base += 1
            self._agree[pair] = base
        return self._agree.get((a, b), base)
