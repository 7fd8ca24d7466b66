"""Which replica this process is, for what each replica keeps to itself.

Several proxies may share one PostgreSQL store (issue 27: many replicas, one
memory). The evidence and everything derived inside the store are shared; the
derived search indexes (Tantivy, HNSW) live in each replica's data directory, and
each replica follows the shared index outbox from checkpoints of its own.

A replica is named by its data directory: :func:`replica_id` writes a random id
to ``<data_dir>/replica_id`` once and reads it back afterwards, so a restarted
replica finds its checkpoints again, and two replicas never share them. On the
embedded store (one process per data directory) the checkpoints keep their
historical names ``index_text`` and ``index_vector``.

What a replica keeps in memory, and how it sees the other replicas' writes:

- compaction runs once per thread across replicas: ``store.exclusive(thread_id)``
  (a PostgreSQL session advisory lock), and ``store_node`` refuses a second node
  over one range;
- active items (:mod:`memory_core.items.cache`): read the shared change log
  ``memory_item_changes`` on every call (sequence ids drawn under the write lock, so
  in commit order): exact, no delay;
- summary nodes (:mod:`memory_core.compaction.node_cache`): the active node ids are read on
  every call, only parsed texts are kept (a node never changes): exact;
- ``Engine.has_summaries``: a "none" is read again after
  ``SUMMARIES_RECHECK_SECONDS`` (1 s): a request within that second of another
  replica's first compaction of the scope goes uncompacted;
- splices (memory-tool rounds shown back to the model): on a shared store read
  from the store for every aligned request (one query), not from the set kept;
- captured paths, chain keys, message token counts and roles, response threads:
  immutable rows keyed by id or content; a miss or a mismatch reads the store;
- agent memories and the tenant salt: not cached (read per request / at open from
  the shared store);
- blocks remembered for a turn's tool rounds (``Engine.block_for``) and learned
  context windows stay per process (for a tool round served by the other replica
  ``block_for`` returns ``None``, as after a restart).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from memory_core.store.api import EngineStore

TEXT_CHECKPOINT = "index_text"
VECTOR_CHECKPOINT = "index_vector"
REPLICA_FILE = "replica_id"
"""File in the data directory holding the replica id (12 hex digits)."""

_ID = re.compile(r"^[0-9a-f]{12}$")


def replica_id(data_dir: str | Path) -> str:
    """The id of the replica whose data directory is ``data_dir`` (12 hex digits),
    created on first call (the directory too). Raises ``OSError`` when the file can
    be neither read nor written."""
    root = Path(data_dir)
    path = root / REPLICA_FILE
    try:
        held = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        held = ""
    if _ID.match(held):
        return held
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    new = secrets.token_hex(6)
    tmp = root / f".{REPLICA_FILE}.{os.getpid()}"
    tmp.write_text(new + "\n", encoding="ascii")
    try:
        os.link(tmp, path)  # first writer wins, even against a concurrent start
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    held = path.read_text(encoding="ascii").strip()
    if not _ID.match(held):
        raise OSError(f"{path}: not a replica id: {held[:40]!r}")
    return held


def is_shared(store: EngineStore) -> bool:
    """True when other processes may write ``store`` (PostgreSQL)."""
    return bool(getattr(store, "shared", False))


def checkpoint_names(store: EngineStore, data_dir: str | Path) -> tuple[str, str]:
    """``(text, vector)`` checkpoint names of the indexes in ``data_dir`` on
    ``store``: ``index_text@<id>`` and ``index_vector@<id>`` on a shared store,
    else ``index_text`` and ``index_vector``."""
    if not is_shared(store):
        return TEXT_CHECKPOINT, VECTOR_CHECKPOINT
    rid = replica_id(data_dir)
    return f"{TEXT_CHECKPOINT}@{rid}", f"{VECTOR_CHECKPOINT}@{rid}"
