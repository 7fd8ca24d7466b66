"""Storage: the interface every database access goes through
(:mod:`memory_core.store.api`) and its backends. ``sqlite`` is the embedded default
and the source of truth; ``pg`` is the PostgreSQL store shared by several replicas
(issue 27; needs the ``postgres`` extra); ``factory.open_store`` picks one from the
configuration."""

from memory_core.store.api import Store, Tx
from memory_core.store.sqlite import SqliteStore

__all__ = ["SqliteStore", "Store", "Tx"]
