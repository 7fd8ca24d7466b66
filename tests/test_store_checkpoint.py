"""WAL checkpoints run on the store's checkpointer thread, never inside a commit."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from memory_core.store.sqlite import CHECKPOINT_COMMITS, SqliteStore


def test_checkpoints_run_after_the_hook_on_their_own_thread(tmp_path: Path) -> None:
    """Every CHECKPOINT_COMMITS commits the checkpointer wakes, calls
    ``before_checkpoint`` (the engine's give-way) and copies the WAL into the
    database file; until then the writer's commits leave the file as it was."""
    store = SqliteStore(tmp_path)
    called: list[str] = []
    woke, gate = threading.Event(), threading.Event()

    def hook() -> None:
        called.append(threading.current_thread().name)
        woke.set()
        gate.wait(10)

    store.before_checkpoint = hook
    try:
        store.write_sync(lambda c: c.execute("CREATE TABLE blobs (b BLOB)"))
        db = tmp_path / "lcm.sqlite3"
        size = os.path.getsize(db)
        for _ in range(CHECKPOINT_COMMITS):
            store.write_sync(lambda c: c.execute("INSERT INTO blobs VALUES (?)",
                                                 (os.urandom(160 * 1024),)))
        assert woke.wait(10)
        assert called == ["lcm-sqlite-checkpoint"]
        time.sleep(0.2)
        assert os.path.getsize(db) == size  # 5 MB (1,280 pages) committed, none checkpointed
        gate.set()
        deadline = time.monotonic() + 10
        while os.path.getsize(db) < size + CHECKPOINT_COMMITS * 160 * 1024:
            assert time.monotonic() < deadline, "the WAL was never checkpointed"
            time.sleep(0.05)
        assert store.read(lambda c: c.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]) \
            == CHECKPOINT_COMMITS
    finally:
        gate.set()
        store.close()
