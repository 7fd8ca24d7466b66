"""The active summary nodes of each (tenant, role), kept parsed in memory.

Every request of a compacted conversation looks up the summary forest of its path
(:meth:`memory_core.engine.Engine.forest_for`), and every compaction after an
answer plans on the same nodes. Reading them meant fetching every active node of
the scope and parsing each one's ``message_ids`` JSON again: about 0.75 ms a
request at 1,000 turns, growing with the conversation. :class:`SummaryNodes`
keeps each node parsed and, on each call, asks the store only which nodes
are active now (their ids and ``parent_id``: one scan of small integers, no JSON). A
node's content never changes once written (``store_node`` inserts; only
``parent_id`` is set later, and a purge deletes rows), and ids are
``AUTOINCREMENT`` (never reused), so the nodes handed out always equal a fresh
read, whichever process wrote or purged (tested against
:func:`memory_core.compaction.compressor.load_nodes`). The cache is keyed by the database's
path: a file replaced under a running engine (a restore) needs a restart, as the
engine's other caches do.
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Sequence

from memory_core.compaction.compressor import SummaryNode, summary_node
from memory_core.store.api import Tx


class SummaryNodes:
    """Per-scope cache of parsed active summary nodes; thread-safe.

    ``max_scopes``: scopes kept (least recently used dropped); each holds its
    active nodes (their texts and covered ids).
    """

    def __init__(self, max_scopes: int = 32) -> None:
        self._max = max_scopes
        self._lock = threading.Lock()
        self._scopes: OrderedDict[tuple[str, str, str], dict[int, SummaryNode]] = OrderedDict()

    def active(self, tx: Tx, namespace: str, tenant: str, role: str
               ) -> list[SummaryNode]:
        """Every active node of ``(tenant, role)``, ordered by level, first id, id.

        ``tx``: the operation groups of a read job on the database named
        ``namespace`` (its path). The nodes are shared: do not mutate them. Raises
        the store's errors as the reads do.
        """
        key = (namespace, tenant, role)
        with self._lock:
            held = self._scopes.get(key)
            if held is not None:
                self._scopes.move_to_end(key)
        now = tx.history.active_summaries(tenant, role)
        nodes: dict[int, SummaryNode] = {}
        missing: list[int] = []
        for node_id, parent in now.items():
            node = held.get(node_id) if held is not None else None
            if node is None:
                missing.append(node_id)
            elif node.parent_id != parent:  # merged into a new parent since
                nodes[node_id] = dataclasses.replace(node, parent_id=parent)
            else:
                nodes[node_id] = node
        if missing:
            for r in tx.history.summary_rows(missing):
                nodes[int(r["id"])] = summary_node(r)
        with self._lock:
            self._scopes[key] = nodes
            self._scopes.move_to_end(key)
            while len(self._scopes) > self._max:
                self._scopes.popitem(last=False)
        return sorted((n for n in nodes.values() if n.message_ids),
                      key=lambda n: (n.level, n.first, n.id))

    def on_path(self, tx: Tx, namespace: str, tenant: str, role: str,
                path_ids: Sequence[int]) -> list[SummaryNode]:
        """What :func:`memory_core.compaction.compressor.load_nodes` returns: the active nodes
        whose covered ids all lie on ``path_ids``, ordered by level, first id, id."""
        if not path_ids:
            return []
        path = list(path_ids)
        # A path's ids ascend (a message is stored after its parent), and a node
        # covers a run of the path it was made on: one slice comparison finds it,
        # where a set of the whole path (and its min and max) cost more than the
        # rest of the lookup (about 0.2 ms at 2,000 messages). Anything else takes
        # the set.
        ordered = path == sorted(path)
        lo, hi = (path[0], path[-1]) if ordered else (min(path), max(path))
        on_path: set[int] | None = None
        out = []
        for node in self.active(tx, namespace, tenant, role):
            if node.first < lo or node.last > hi:
                continue
            if ordered:
                at = bisect.bisect_left(path, node.first)
                if path[at:at + len(node.message_ids)] == node.message_ids:
                    out.append(node)
                    continue
            if on_path is None:
                on_path = set(path)
            if on_path.issuperset(node.message_ids):
                out.append(node)
        return out

    def clear(self) -> None:
        """Forget every scope (the next call reads them again)."""
        with self._lock:
            self._scopes.clear()
