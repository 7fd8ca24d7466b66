"""Checks the CLI runs before opening a store: the data directory, its lock, the port.

``serve`` calls them before anything heavy opens (no engine, no index), so a
second proxy on a busy port or data dir, or a data dir that is a regular file,
stops with one line instead of tracebacks; ``doctor`` reports the same findings;
read commands refuse a directory that holds no store instead of creating one.

The data-dir lock is an advisory ``flock`` on ``<data_dir>/.lcm-proxy.lock``, held
by ``serve``, ``reindex`` and ``migrate`` for their whole run. The file holds the
holder's pid, the command and, for ``serve``, the URL it listens on (one per line;
older proxies wrote the pid alone), so ``doctor`` can name a running proxy and ask
its ``/lcm/health``. A proxy that predates the lock is still found through Tantivy's
own writer lock on ``<data_dir>/index/text/.tantivy-writer.lock`` (also a
``flock``). On a filesystem without ``flock`` (some network mounts) the lock is
skipped.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK_FILENAME = ".lcm-proxy.lock"
_TANTIVY_LOCK = Path("index") / "text" / ".tantivy-writer.lock"


def data_dir_problems(path: Path) -> list[str]:
    """What stops ``serve`` from creating or writing the store at ``path`` (empty
    list when nothing does): not a directory, a parent that is a file, or a
    directory this user cannot write. Does not create anything."""
    from memory_core.store.sqlite import DB_FILENAME

    if path.exists() and not path.is_dir():
        return [f"data dir {path} is not a directory (it is a regular file); pass"
                " --data-dir a directory, or remove the file"]
    if not path.exists():
        parent = path.parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            return [f"data dir {path} cannot be created: {parent} is not a directory"]
        if not os.access(parent, os.W_OK | os.X_OK):
            return [f"data dir {path} cannot be created: {parent} is not writable by this"
                    f" user (uid {os.getuid()})"]
        return []
    if not os.access(path, os.W_OK | os.X_OK):
        return [f"data dir {path} is not writable by this user (uid {os.getuid()})"]
    db = path / DB_FILENAME
    if db.exists() and not os.access(db, os.R_OK | os.W_OK):
        return [f"database {db} is not readable and writable by this user"
                f" (uid {os.getuid()})"]
    return []


def has_store(path: Path) -> bool:
    """Whether ``path`` is a directory holding an lcm-proxy database."""
    from memory_core.store.sqlite import DB_FILENAME

    return path.is_dir() and (path / DB_FILENAME).is_file()


def _busy(lock_path: Path) -> tuple[bool, str]:
    """(held by another process, what the file says) for one flock'ed file."""
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False, ""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return True, os.pread(fd, 1024, 0).decode("ascii", "replace").strip()
            return False, ""  # no flock on this filesystem
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False, ""
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class LockOwner:
    """Who holds a data dir's lock: ``pid`` (``None`` when unknown), ``command``
    (``serve``, ``reindex``, ``migrate``; ``""`` when unknown: an older proxy, or only
    the full-text index's writer lock is held) and ``url``, the ``http://host:port``
    a ``serve`` listens on (``""`` when unknown)."""

    pid: int | None
    command: str = ""
    url: str = ""
    index_lock_only: bool = False

    def describe(self) -> str:
        """"a running lcm-proxy (pid 123)", "a running `lcm-proxy reindex` (pid 9)"…"""
        if self.index_lock_only:
            return "another process (it holds the full-text index's writer lock)"
        what = (f"`lcm-proxy {self.command}`" if self.command not in ("", "serve")
                else "lcm-proxy")
        return f"a running {what}" + (f" (pid {self.pid})" if self.pid is not None else "")


def lock_owner(path: Path) -> LockOwner | None:
    """Who holds the data dir ``path`` (:class:`LockOwner`), or ``None`` when nobody
    does. Reads the lock file; starts nothing."""
    held, text = _busy(path / LOCK_FILENAME)
    if held:
        lines = [*text.splitlines(), "", "", ""]
        pid = lines[0].strip()
        return LockOwner(int(pid) if pid.isdigit() else None, lines[1].strip(),
                         lines[2].strip())
    held, _ = _busy(path / _TANTIVY_LOCK)
    if held:
        return LockOwner(None, index_lock_only=True)
    return None


def lock_holder(path: Path) -> str | None:
    """A sentence naming who holds the data dir ``path`` ("a running lcm-proxy (pid
    123)"), or ``None`` when nobody does."""
    owner = lock_owner(path)
    return None if owner is None else owner.describe()


class DataDirLock:
    """The exclusive lock of one data directory, held until :meth:`release`; the file
    says who holds it (``command``, and ``url`` for ``serve``: see :func:`lock_owner`).

    Raises :class:`DataDirBusy` when another process holds it."""

    def __init__(self, path: Path, command: str, url: str = "") -> None:
        self._fd: int | None = None
        holder = lock_holder(path)
        if holder is not None:
            raise DataDirBusy(path, holder)
        fd = os.open(path / LOCK_FILENAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DataDirBusy(path, "a running lcm-proxy") from exc
            return  # no flock on this filesystem: run unlocked, as before
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{command}\n{url}\n".encode("ascii", "replace"), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the file stays; its pid is stale until the next holder)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class DataDirBusy(Exception):
    """Another process holds the data directory's lock."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"data dir {path} is in use by {holder}")
        self.path, self.holder = path, holder


def bind_sockets(host: str, port: int) -> list[socket.socket]:
    """Bind and listen on every address ``host`` resolves to (all interfaces for
    ``""``), as aiohttp's own site would; port 0 binds one free port on the first
    address. Raises ``OSError`` with a one-line reason (port in use, address not
    on this machine, name not resolvable)."""
    try:
        infos = socket.getaddrinfo(host or None, port, socket.AF_UNSPEC, socket.SOCK_STREAM,
                                   0, socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot resolve listen address {host!r}: {exc.strerror}") from exc
    seen: list[tuple[socket.AddressFamily, tuple[Any, ...]]] = []
    for fam, _type, _proto, _name, sockaddr in infos:
        if (fam, sockaddr) not in seen:
            seen.append((fam, sockaddr))
    if port == 0:
        seen = seen[:1]
    socks: list[socket.socket] = []
    try:
        for family, addr in seen:
            sock = socket.socket(family, socket.SOCK_STREAM)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and len(seen) > 1:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(addr)
            except OSError as exc:
                what = ("address already in use (another lcm-proxy or program listens"
                        " there; stop it or pick another --port)"
                        if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc))
                raise OSError(f"cannot listen on {addr[0]} port {addr[1]}: {what}") from exc
            sock.listen(1024)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks
