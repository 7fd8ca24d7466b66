"""Storage backends. ``sqlite`` is the embedded default and the source of truth."""

from memory_core.store.sqlite import SqliteStore

__all__ = ["SqliteStore"]
