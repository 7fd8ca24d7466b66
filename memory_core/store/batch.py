"""The end of a write batch, shared by the stores' writer threads
(:class:`~memory_core.store.sqlite.SqliteStore`, :class:`~memory_core.store.pg.PgStore`).

Both queue jobs ``(fn, args, future, then, context)`` and run a batch of them as
one transaction, each job's outcome kept as a :data:`Done` row. After the
commit, :func:`complete_batch` runs the ``after_commit`` hook, then each
committed job's ``then`` (in the job's context), then resolves the futures, in
that order (the stores' contract: what ``then`` queues runs before anything
queued by whoever waits on the future). When the batch as a whole failed,
:func:`fail_batch` fails every job that had started with one ``StoreError``.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from memory_core.errors import StoreError

log = logging.getLogger("lcm.store")

Job = tuple[Callable[..., Any], tuple[Any, ...], "Future[Any]",
            "Callable[[Any], None] | None", contextvars.Context]
"""A queued write job: ``(fn, args, future, then, context)``."""

Done = tuple["Future[Any]", bool, Any, "Callable[[Any], None] | None", contextvars.Context]
"""A job's outcome in its batch: ``(future, ok, value or exception, then, context)``."""


def complete_batch(done: Iterable[Done], after_commit: Callable[[], None] | None) -> None:
    """After a batch committed: ``after_commit()``, each ``then(value)`` of the jobs
    that succeeded, then every future (its value, or the job's own exception).
    Neither the hook nor a ``then`` that raises stops the rest (logged)."""
    done = list(done)
    if after_commit is not None:
        try:
            after_commit()
        except Exception:  # noqa: BLE001 - a hook never breaks writes
            log.exception("after_commit hook failed")
    for _fut, ok, value, then, ctx in done:
        if ok and then is not None:
            try:
                ctx.run(then, value)
            except BaseException:  # noqa: BLE001 - the job itself has committed
                log.exception("a write's follow-up failed")
    for fut, ok, value, _then, _ctx in done:
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


def fail_batch(jobs: Iterable[Job], exc: BaseException) -> None:
    """The batch's transaction failed as a whole (rolled back, or lost at
    ``COMMIT``): fail every job that had started with ``StoreError``."""
    err = StoreError(f"write failed: {exc}")
    for _fn, _args, fut, _then, _ctx in jobs:
        if fut.running():
            fut.set_exception(err)
