"""Extraction in a child process, read ahead of the writer job that stores it.

The rules (:func:`memory_core.extraction.extract`) are a pure function of a message's
text and speaker, 0.3–1.3 ms of Python per short message (docs/evaluation/README.md).
On the writer thread they hold the interpreter the event loop relays requests on.
:class:`ExtractWorker` runs them in one long-lived child process instead: a capture
that queues a message's extraction for a later writer job hands the text over at once
(:meth:`ExtractWorker.read_ahead`), and the job, when it runs, takes the result
(:meth:`ExtractWorker.take`), waiting with the interpreter released when it is not back
yet. The job keeps its place in the writer's queue, so items are stored in the same
order as without the worker, and a result is only used for exactly the text and
speaker the job reads (else the job extracts in process): items come out identical.

Fail open: the child is started lazily, by a thread, at the first read-ahead (until it
answers, jobs extract in process); a child that dies, fails a message or does not answer
within :attr:`ExtractWorker.timeout` seconds is read as "extract in process" (a late or
hung child is killed and started again after :data:`RESTART_SECONDS`). Nothing of the
evidence depends on it. The protocol: pickled ``(key, text, speaker)`` frames on the
child's stdin, pickled ``(key, ok, chunks-or-error)`` frames on its stdout.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any

log = logging.getLogger("lcm.engine")

RESTART_SECONDS = 30.0
"""Wait after a child died or was killed before another is started (seconds)."""
MAX_PENDING_CHARS = 4_000_000
"""Characters handed over and not yet taken at most; beyond, jobs extract in process
(a large backfill does not queue minutes of work behind one child)."""
MAX_KEPT = 4096
"""Results kept for jobs not yet run at most (oldest dropped: that job extracts in process)."""


def read_chunks(text: str, speaker: str) -> list[list[Any]]:
    """The items of each chunk of ``text`` (:func:`memory_core.capture.jobs.extract_chunks`),
    as the writer job reads them; the child runs this."""
    from memory_core.capture.jobs import extract_chunks
    from memory_core.extraction import extract

    return [extract(chunk, speaker=speaker) for chunk in extract_chunks(text)]


class ExtractWorker:
    """One child process extracting ahead of the writer (see the module's docstring).

    ``timeout``: seconds a job waits for a result handed over before it extracts in
    process (and the child is restarted). Thread-safe; :meth:`close` stops the child.
    ``stats()``: counts of results used, missed (extracted in process) and restarts."""

    def __init__(self, timeout: float = 5.0) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._starting = False
        self._closed = False
        self._down_until = 0.0
        self._waiting: OrderedDict[Any, tuple[str, str, Future[list[list[Any]]]]] = OrderedDict()
        self._sent: deque[Future[list[list[Any]]]] = deque()  # the child answers in order
        self._pending_chars = 0
        self._counts = {"handed": 0, "used": 0, "missed": 0, "failed": 0, "restarts": 0}

    # -- the writer's side ----------------------------------------------------------------
    def read_ahead(self, key: Any, text: str, speaker: str) -> None:
        """Hand ``text`` (read as ``speaker``) to the child for the job that will ask for
        ``key``; cheap, never raises. Does nothing while the child is starting or down."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                self._start_locked()
                return
            if self._pending_chars + len(text) > MAX_PENDING_CHARS:
                return
            fut: Future[list[list[Any]]] = Future()
            old = self._waiting.pop(key, None)
            if old is not None:
                self._pending_chars -= len(old[0])
            self._waiting[key] = (text, speaker, fut)
            self._pending_chars += len(text)
            while len(self._waiting) > MAX_KEPT:
                _, (t, _s, _f) = self._waiting.popitem(last=False)
                self._pending_chars -= len(t)
            try:
                assert proc.stdin is not None
                proc.stdin.write(pickle.dumps((key, text, speaker), pickle.HIGHEST_PROTOCOL))
                proc.stdin.flush()
            except (OSError, ValueError):
                self._waiting.pop(key, None)
                self._pending_chars -= len(text)
                self._lost_locked(proc)
                return
            self._sent.append(fut)
            self._counts["handed"] += 1

    def take(self, key: Any, text: str, speaker: str) -> list[list[Any]] | None:
        """The items of each chunk of ``text`` as ``speaker`` (:func:`read_chunks`), read
        by the child for ``key``; ``None`` when none was handed over for exactly this
        text and speaker, the child failed or did not answer within :attr:`timeout`
        seconds (the caller extracts in process)."""
        with self._lock:
            entry = self._waiting.pop(key, None)
            if entry is not None:
                self._pending_chars -= len(entry[0])
        if entry is None or entry[0] != text or entry[1] != speaker:
            if entry is not None:
                self._count("missed")
            return None
        try:
            found = entry[2].result(self.timeout)
        except FutureTimeout:
            log.warning("extraction worker: no answer within %.1f s; extracting in process,"
                        " restarting it", self.timeout)
            with self._lock:
                if self._proc is not None:
                    self._lost_locked(self._proc)
            self._count("failed")
            return None
        except Exception:  # noqa: BLE001 - a failing rule or a dead child: in process
            self._count("failed")
            return None
        self._count("used")
        return found

    def stats(self) -> dict[str, Any]:
        """Counts (``handed``, ``used``, ``missed``, ``failed``, ``restarts``), whether
        the child runs (``running``) and its ``pid``."""
        with self._lock:
            proc = self._proc
            running = proc is not None and proc.poll() is None
            return {**self._counts, "running": running,
                    "pid": proc.pid if running and proc is not None else None}

    def close(self) -> None:
        """Stop the child (closing its stdin ends it; killed after a second)."""
        with self._lock:
            self._closed = True
            proc, self._proc = self._proc, None
            self._fail_waiting_locked()
        if proc is not None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                proc.wait(1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    # -- internals --------------------------------------------------------------------------
    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _start_locked(self) -> None:
        if self._starting or self._closed or time.monotonic() < self._down_until:
            return
        self._starting = True
        threading.Thread(target=self._start, name="lcm-extract-worker-start",
                         daemon=True).start()

    def _start(self) -> None:
        proc: subprocess.Popen[bytes] | None = None
        try:
            root = str(Path(__file__).resolve().parents[2])  # this tree's memory_core
            boot = ("import sys; sys.path.insert(0, sys.argv[1]); "
                    "from memory_core.extraction.worker import main; main()")
            proc = subprocess.Popen(
                [sys.executable, "-c", boot, root], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=None, close_fds=True,
                start_new_session=True)  # a terminal's Ctrl-C reaches the proxy only
            assert proc.stdin is not None and proc.stdout is not None
            # Warm up (imports, compiled patterns) before any job waits on it.
            proc.stdin.write(pickle.dumps((None, "Warm up: the timeout is 30 s.", "user"),
                                          pickle.HIGHEST_PROTOCOL))
            proc.stdin.flush()
            pickle.load(proc.stdout)
        except Exception as exc:  # noqa: BLE001 - fail open: in process
            log.warning("extraction worker did not start: %r; extracting in process", exc)
            if proc is not None:
                with contextlib.suppress(OSError):
                    proc.kill()
            with self._lock:
                self._starting = False
                self._down_until = time.monotonic() + RESTART_SECONDS
            return
        with self._lock:
            self._starting = False
            if self._closed:
                proc.kill()
                return
            self._proc = proc
            sent = self._sent = deque()
        threading.Thread(target=self._read, args=(proc, proc.stdout, sent),
                         name="lcm-extract-worker-read", daemon=True).start()
        log.info("extraction worker started (pid %s)", proc.pid)

    def _read(self, proc: subprocess.Popen[bytes], out: IO[bytes],
              sent: deque[Future[list[list[Any]]]]) -> None:
        """Resolve the futures of the child's answers (its own thread, blocking reads)."""
        while True:
            try:
                _key, ok, payload = pickle.load(out)
            except Exception:  # noqa: BLE001 - EOF or garbage: the child is gone
                break
            with self._lock:
                fut = sent.popleft() if sent else None
            if fut is None or fut.done():
                continue
            if ok:
                fut.set_result(payload)
            else:
                fut.set_exception(RuntimeError(payload))
        with self._lock:
            if self._proc is proc:
                self._lost_locked(proc)
        with contextlib.suppress(Exception):
            proc.wait(5)  # reaped: no zombie left behind

    def _lost_locked(self, proc: subprocess.Popen[bytes]) -> None:
        if self._proc is proc:
            self._proc = None
            self._counts["restarts"] += 1
            self._down_until = time.monotonic() + RESTART_SECONDS
            if not self._closed:
                log.warning("extraction worker (pid %s) lost; extracting in process,"
                            " restarting it in %.0f s", proc.pid, RESTART_SECONDS)
        with contextlib.suppress(OSError):
            proc.kill()
        self._fail_waiting_locked()

    def _fail_waiting_locked(self) -> None:
        sent, self._sent = self._sent, deque()
        for fut in sent:
            if not fut.done():
                fut.set_exception(RuntimeError("extraction worker lost"))


def main() -> None:
    """The child's loop: answer each ``(key, text, speaker)`` frame with
    ``(key, True, read_chunks(text, speaker))`` or ``(key, False, repr(error))``;
    ends at the end of stdin (the proxy closed it or exited)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the answers
    while True:
        try:
            key, text, speaker = pickle.load(stdin)
        except EOFError:
            return
        frame: tuple[Any, bool, Any]
        try:
            frame = (key, True, read_chunks(text, speaker))
        except Exception as exc:  # noqa: BLE001 - the job extracts it in process
            frame = (key, False, repr(exc)[:500])
        stdout.write(pickle.dumps(frame, pickle.HIGHEST_PROTOCOL))
        stdout.flush()
