"""The capture journal: answers queued on the writer, kept on disk until they commit.

An answer the client receives must not be lost in a crash (the proxy's process
killed) before the writer commits it. Instead of the client's end waiting for that
commit, :meth:`CaptureJournal.append` writes the answer's capture (and, when its
request's capture has not committed yet, that one too) as one line of lossless
JSON to a file of this process (``write(2)``: it survives the process, as a commit
under ``PRAGMA synchronous=NORMAL`` does; neither survives a power cut). Once the
store has committed every journaled capture the file is cut back to empty, so it
holds only the captures in flight (the exchange as the client sent it, before
redaction, for those milliseconds).

Files of one process (``journal-<pid>-<ns>.jsonl`` under the engine's data
directory; a new one past :data:`ROTATE_BYTES`), locked (``flock``) while it lives: the next engine to open the
directory replays the files no live process holds (:func:`orphans`,
:meth:`memory_core.capture.jobs.CaptureJobs.replay`), then deletes them. A torn last
line (the crash came mid-write) is skipped: its client never got the answer's end.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memory_core.capture.evidence import dumps_lossless, loads_lossless

__all__ = ["CaptureJournal", "orphans"]

log = logging.getLogger("lcm.engine")

DIRECTORY = "capture-journal"
"""The journal files' folder under the engine's data directory."""


ROTATE_BYTES = 4 << 20
"""Size past which the next line starts a new file: under steady load some capture
is always in flight, so a file is never cut back to empty; an older file is deleted
once every capture it holds has committed."""


class _Segment:
    """One journal file: its descriptor, lines written and not yet committed, size."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / f"journal-{os.getpid()}-{time.time_ns()}.jsonl"
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            raise
        self.open = 0
        self.size = 0

    def release(self, unlink: bool) -> None:
        if unlink:
            self.path.unlink(missing_ok=True)
        os.close(self.fd)


class CaptureJournal:
    """This process's journal (see the module docstring); thread-safe.

    ``directory``: where its files go (created). Raises ``OSError`` when the first
    file cannot be created or locked (the caller then waits for commits instead).
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._directory = directory
        self._current = _Segment(directory)
        self._old: list[_Segment] = []  # rotated away, captures still in flight
        self._lock = threading.Lock()
        self._closed = False

    @property
    def path(self) -> Path:
        """The file lines are written to now."""
        return self._current.path

    def append(self, record: dict[str, Any]) -> object | None:
        """Write ``record`` (JSON values; numbers kept exactly) as one line; a token
        to pass to :meth:`done` once its capture committed (or failed), or ``None``
        when it could not be written (logged; the caller waits for the commit
        instead)."""
        line = (dumps_lossless(record) + "\n").encode("utf-8")
        with self._lock:
            if self._closed:
                return None
            seg = self._current
            if seg.size > ROTATE_BYTES:
                try:
                    seg = _Segment(self._directory)
                except OSError as exc:
                    log.warning("capture journal: no new file (%r); writing on", exc)
                else:
                    self._old.append(self._current)
                    self._current = seg
            try:
                written = os.write(seg.fd, line)
            except OSError as exc:
                log.warning("capture journal write failed: %r", exc)
                return None
            seg.size += max(written, 0)
            if written != len(line):  # a full disk mid-line: the torn line is skipped
                log.warning("capture journal write cut short (%d of %d bytes)",
                            written, len(line))
                return None
            seg.open += 1
            return seg

    def done(self, token: object) -> None:
        """The capture of ``token``'s line committed (or failed, logged as such): its
        file is cut back to empty (deleted, once rotated away) when none of its
        lines is left in flight."""
        with self._lock:
            seg = token
            assert isinstance(seg, _Segment)
            seg.open -= 1
            if seg.open or self._closed:
                return
            if seg is self._current:
                if seg.size:
                    try:
                        os.ftruncate(seg.fd, 0)
                        seg.size = 0
                    except OSError as exc:  # kept: replayed (idempotently) after a crash
                        log.warning("capture journal truncate failed: %r", exc)
            elif seg in self._old:
                self._old.remove(seg)
                seg.release(unlink=True)

    def close(self) -> None:
        """Release the files: each is deleted when nothing in it is still in flight
        (call after the store's writes are flushed), else left for the next start."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for seg in [*self._old, self._current]:
                seg.release(unlink=seg.open == 0)
            self._old.clear()


def orphans(directory: Path) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    """``(path, records)`` of every journal file under ``directory`` that no live
    process holds, in the order they were written (a torn or unreadable line is
    skipped, logged). The caller deletes the file once its records are replayed."""
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("journal-*.jsonl")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live process's
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
            records = []
            for line in data.split(b"\n"):
                if not line.strip():
                    continue
                try:
                    record = loads_lossless(line)
                except ValueError:
                    log.warning("capture journal %s: skipped an unreadable line", path.name)
                    continue
                if isinstance(record, dict):
                    records.append(record)
            yield path, records
        finally:
            os.close(fd)
