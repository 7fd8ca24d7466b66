"""Exceptions raised by the memory engine.

Tree::

    MemoryError_ (base; never reaches a chat client: the proxy fails open)
    ├── StoreError          SQLite could not be opened, migrated or written
    │   └── SchemaTooNewError   the database was written by a newer lcm-proxy
    ├── NotFoundError       an id given by an operator does not exist
    ├── InvalidIdError      (also ValueError) an id that cannot exist: not 1..2**63-1
    └── ItemStateError      an operator's change that the item's status does not allow
"""

from __future__ import annotations


class MemoryError_(Exception):
    """Base class of every error raised by ``memory_core``."""


class StoreError(MemoryError_):
    """The SQLite store could not be opened, migrated or written."""


class SchemaTooNewError(StoreError):
    """The database's schema version is newer than this code knows."""


class NotFoundError(MemoryError_):
    """A thread, message or item id given by an operator does not exist."""


class InvalidIdError(MemoryError_, ValueError):
    """An id or ref that no row can have: not digits, or outside SQLite's 1..2**63-1."""


class ItemStateError(MemoryError_):
    """An operator's change that the item's status does not allow (restoring an
    active or merged item)."""
