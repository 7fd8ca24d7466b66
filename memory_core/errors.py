"""Exceptions raised by the memory engine.

Tree::

    MemoryError_ (base; never reaches a chat client: the proxy fails open)
    ├── StoreError          SQLite could not be opened, migrated or written
    │   └── SchemaTooNewError   the database was written by a newer lcm-proxy
    └── NotFoundError       an id given by an operator does not exist
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
