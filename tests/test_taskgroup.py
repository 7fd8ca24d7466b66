"""``proxy.tasks.TaskGroup.wait``: waits for the tasks of one name, cancels none."""

from __future__ import annotations

import asyncio

from proxy.tasks import TaskGroup


def test_wait_ends_with_the_named_tasks_and_leaves_the_others_running() -> None:
    async def main() -> None:
        group = TaskGroup()
        gate, other_gate = asyncio.Event(), asyncio.Event()
        first = group.spawn(gate.wait(), name="capture-response-a")
        other = group.spawn(other_gate.wait(), name="capture-response-b")
        assert not await group.wait("capture-response-b", 0)  # still running
        assert not other.cancelled()
        asyncio.get_running_loop().call_soon(gate.set)
        assert await group.wait("capture-response-a", 60)
        assert first.done() and not other.done() and len(group) == 1
        assert await group.wait("no-such-task", 60)  # nothing of that name: at once
        other_gate.set()
        assert await group.wait("capture-response-b", 60)
        assert len(group) == 0

    asyncio.run(main())
