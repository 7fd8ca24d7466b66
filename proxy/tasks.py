"""Background tasks that cannot be garbage-collected mid-flight (mitmproxy's spawn()).

``asyncio.create_task`` keeps only a weak reference to its task; a task nobody
holds can vanish. :class:`TaskGroup` keeps a strong reference until the task ends,
names it, logs its exception, and can be drained on shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("lcm.tasks")


class TaskGroup:
    """A set of named background tasks owned by the application."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Start ``coro`` as a task named ``name`` and hold it until it finishes."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed: %r", task.get_name(), task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    async def wait(self, name: str, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the running tasks named ``name`` (none
        cancelled); ``True`` when none is left running."""
        tasks = {t for t in self._tasks if t.get_name() == name}
        if not tasks:
            return True
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        return not pending

    async def drain(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for running tasks, then cancel the rest."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
