"""A throwaway PostgreSQL cluster for tests: ``initdb`` in a temporary directory
(on ``/dev/shm`` when that memory file system has room, :func:`_scratch_dir`),
``postgres`` on 127.0.0.1 and a free port (and a unix socket in that directory),
torn down with the directory afterwards. Nothing about PostgreSQL is mocked.

The server binaries are looked up on ``PATH`` and in ``/usr/lib/postgresql/*/bin``
(Debian's ``postgresql`` package). ``postgres`` refuses to run as root: as root the
cluster runs as the ``postgres`` user (Debian's package creates it) or ``nobody``.
:func:`unavailable` says why a cluster cannot be started here (no binaries, no
``psycopg``), so that a test can skip outside CI and fail under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _binaries() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[4]))
    for d in reversed(dirs):
        if Path(d, "pg_ctl").exists():
            return Path(d)
    return None


def unavailable() -> str | None:
    """Why no throwaway cluster can run here, or ``None`` when one can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[dev]')"
    if _binaries() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_RAMDISK = Path("/dev/shm")
_RAMDISK_FREE = 1 << 30
"""Bytes a memory file system must have free to hold the clusters (each a few hundred
MB at most: its WAL is bounded, each test's database is dropped after it)."""


def _scratch_dir() -> str | None:
    """Where a cluster's files go: ``/dev/shm`` when it is a memory file system with
    :data:`_RAMDISK_FREE` bytes free (copying the template for each test costs little
    there, and nothing waits on a disk other jobs write to), else the default
    temporary directory (``None``)."""
    try:
        if (os.access(_RAMDISK, os.W_OK | os.X_OK)
                and shutil.disk_usage(_RAMDISK).free >= _RAMDISK_FREE):
            return str(_RAMDISK)
    except OSError:
        pass
    return None


_START_ATTEMPTS = 3
"""How many ports :func:`cluster` tries when the one it picked was taken meanwhile."""


def _run_as() -> tuple[list[str], int | None, int | None]:
    """The command prefix, uid and gid to run the server with."""
    if os.geteuid() != 0:
        return [], None, None
    for name in ("postgres", "nobody"):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"], user.pw_uid, user.pw_gid
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL")


@contextlib.contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield its ``postgresql://`` URL (user ``postgres``, trust
    authentication, database ``postgres``); stop it and remove its files on exit."""
    bindir = _binaries()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries not found")
    prefix, uid, gid = _run_as()
    root = Path(tempfile.mkdtemp(prefix="lcm-pg-", dir=_scratch_dir()))
    data = root / "data"
    env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}
    if uid is not None and gid is not None:
        os.chown(root, uid, gid)
    started = False
    try:
        subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
                        "-A", "trust", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, env=env, timeout=120)
        # The free port is only free when looked up: another process (a parallel
        # test worker) can take it before the server binds it; then try another.
        for attempt in range(_START_ATTEMPTS):
            port = _free_port()
            options = (f"-h 127.0.0.1 -p {port} -k {root} -F -c fsync=off"
                       " -c synchronous_commit=off -c full_page_writes=off"
                       " -c max_wal_size=96MB -c min_wal_size=32MB")
            try:
                subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o",
                                options, "-l", str(root / "log"), "-w", "-t", "60", "start"],
                               check=True, capture_output=True, env=env, timeout=90)
                break
            except subprocess.CalledProcessError:
                log = (root / "log").read_text() if (root / "log").exists() else ""
                if attempt + 1 == _START_ATTEMPTS or "could not bind" not in log:
                    raise
        started = True
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        _wait_ready(url)
        yield url
    except subprocess.CalledProcessError as exc:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr!r} {log}") from exc
    finally:
        if started:
            subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m",
                            "immediate", "-w", "stop"], capture_output=True, env=env,
                           timeout=60, check=False)
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(url: str, timeout: float = 30.0) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def fresh_database(url: str, name: str, *, template: str | None = None) -> str:
    """Create database ``name`` in the cluster at ``url`` (a copy of database
    ``template`` when given, which must have no open connection); return its URL.
    From PostgreSQL 15 the copy is made file by file (``STRATEGY FILE_COPY``): it
    writes no WAL for the template's blocks, as the default ``WAL_LOG`` would."""
    import psycopg

    copy = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(url, autocommit=True) as conn:
        if template and conn.info.server_version >= 150000:
            copy += " STRATEGY FILE_COPY"
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    return url.rsplit("/", 1)[0] + "/" + name


def migrated_template(url: str, name: str) -> str:
    """Create database ``name`` with every migration of
    :mod:`memory_core.store.pg_migrations` applied and nothing else, closed, for
    :func:`fresh_database`'s ``template``: copying it costs a fraction of migrating
    a new database per test. Returns ``name``."""
    with migrated(url, name):
        pass
    return name


@contextlib.contextmanager
def migrated(url: str, name: str) -> Iterator[Any]:
    """A fresh database ``name`` in the cluster at ``url`` with every migration of
    :mod:`memory_core.store.pg_migrations` applied; yield a ``psycopg`` connection
    to it (closed on exit)."""
    import psycopg

    from memory_core.store import pg_migrations

    with psycopg.connect(fresh_database(url, name)) as conn:
        assert pg_migrations.apply_migrations(conn) == pg_migrations.SCHEMA_VERSION
        yield conn


def in_transaction(conn: Any, tx: Any) -> Callable[[Callable[[Any], Any]], Any]:
    """``run(fn)``: ``fn(tx)`` inside one committed transaction of ``conn`` (rolled
    back when it raises), as a store runs a write job."""

    def run(fn: Callable[[Any], Any]) -> Any:
        with conn.transaction():
            return fn(tx)

    return run
