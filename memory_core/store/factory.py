"""Open the store the configuration names: PostgreSQL for a ``postgresql://`` URL
(``[storage] url``, ``LCM_STORE__URL``), else the embedded SQLite store."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from memory_core.config import MemoryConfig
from memory_core.errors import StoreError
from memory_core.store.api import EngineStore

URL_SCHEMES = ("postgresql://", "postgres://")
"""The URL schemes that select :class:`~memory_core.store.pg.PgStore`."""


def open_store(data_dir: str | Path, config: MemoryConfig | None = None) -> EngineStore:
    """The store of ``config``: a :class:`~memory_core.store.pg.PgStore` on
    ``config.store_url`` when it is set, else a
    :class:`~memory_core.store.sqlite.SqliteStore` in ``data_dir`` with the
    configured page and statement caches.

    Raises :class:`~memory_core.errors.StoreError` when the store cannot be opened
    or migrated, when the URL is not ``postgresql://``, or when it is and
    ``psycopg``/``psycopg_pool`` (the ``postgres`` extra) are not installed."""
    cfg = config or MemoryConfig()
    url = cfg.store_url
    if url:
        if not url.startswith(URL_SCHEMES):
            raise StoreError(f"store URL must start with postgresql://, got"
                             f" {url.split('://')[0]!r}://...")
        try:
            from memory_core.store.pg import PgStore
        except ImportError as exc:
            raise StoreError(f"a PostgreSQL store needs the postgres extra"
                             f" (pip install 'lcm-proxy[postgres]'): {exc}") from exc
        return PgStore(url)
    from memory_core.store.sqlite import SqliteStore

    return SqliteStore(data_dir, cache_kib=cfg.sqlite_cache_kib,
                       statements=cfg.sqlite_statement_cache,
                       memory_limit_kib=cfg.sqlite_memory_limit_kib)


def stored_schema_version(data_dir: str | Path, config: MemoryConfig | None = None) -> int:
    """The schema version of the store :func:`open_store` would open, as stored, read
    without applying a migration (``0``: no database yet). Opening a store upgrades
    it; a diagnostic beside a running proxy of an older version must not (that
    proxy, restarted, would refuse the newer schema). Raises
    :class:`~memory_core.errors.StoreError` when the store cannot be read."""
    cfg = config or MemoryConfig()
    if cfg.store_url:
        if not cfg.store_url.startswith(URL_SCHEMES):
            raise StoreError(f"store URL must start with postgresql://, got"
                             f" {cfg.store_url.split('://')[0]!r}://...")
        try:
            from memory_core.store.pg import stored_schema_version as pg_version
        except ImportError as exc:
            raise StoreError(f"a PostgreSQL store needs the postgres extra: {exc}") from exc
        return pg_version(cfg.store_url)
    from memory_core.store.sqlite import stored_schema_version as sqlite_version

    return sqlite_version(data_dir)


def code_schema_version(config: MemoryConfig | None = None) -> int:
    """The schema version this code writes for the store of ``config`` (PostgreSQL's
    migrations for a ``storage.url``, else SQLite's): what :func:`open_store` upgrades
    a store at :func:`stored_schema_version` to."""
    cfg = config or MemoryConfig()
    if cfg.store_url:
        from memory_core.store.pg_migrations import SCHEMA_VERSION as pg_code

        return pg_code
    from memory_core.store.migrations import SCHEMA_VERSION as sqlite_code

    return sqlite_code


@contextlib.contextmanager
def scratch_database(url: str, name: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database ``name`` in the cluster at ``url`` (which
    must allow ``CREATE DATABASE``); yield its URL, drop it on exit (``WITH
    (FORCE)``: open sessions are ended). For benchmarks; raises ``psycopg`` errors."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
