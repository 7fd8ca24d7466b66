"""Response-map chain reads on SQLite and on PostgreSQL (loopback), A/B in one run.

Writes a conversation of ``turns`` responses through the ``ResponseMap`` group of
each backend (memory_core.store.api), then times 20 reads of its whole chain
(``memory_core.capture.response_threads.conversation``): median and minimum, in ms. PostgreSQL
is a throwaway server (tests/pgcluster.py; needs psycopg and the server binaries).

Run: ``python docs/evaluation/store_backends_chain.py [turns ...]`` (default 300 1000).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.capture import response_threads as responsemap  # noqa: E402
from memory_core.store.sqlite import SqliteStore  # noqa: E402
from tests import pgcluster  # noqa: E402


def _items(i: int) -> list[Any]:
    return [{"role": "user", "content": f"question {i} " + "word " * 60},
            {"type": "message", "id": f"msg_{i}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "answer " * 60, "annotations": []}]}]


def _measure(write: Any, read: Any, turns: int) -> tuple[float, float]:
    prev = None
    for i in range(turns):
        blob = responsemap.prepare(_items(i), redact=True, store_raw=True)
        assert blob is not None
        write(lambda tx, i=i, prev=prev, blob=blob: tx.responses.save_response(
            tenant="t", role="default", session="", response_id=f"resp_{i}", parent=prev,
            thread_id=1, items=blob, created_at=time.time()))
        prev = f"resp_{i}"
    times = []
    for _ in range(20):
        started = time.perf_counter()
        found = read(lambda tx: responsemap.conversation(tx, "t", "default", prev))
        times.append((time.perf_counter() - started) * 1000)
    assert found is not None and len(found[0]) == 2 * turns
    return statistics.median(times), min(times)


def main(turns_list: list[int]) -> None:
    import psycopg

    from memory_core.store import pg_migrations
    from memory_core.store.pg_ops import PgResponseMap

    with pgcluster.cluster() as cluster_url:
        for turns in turns_list:
            with tempfile.TemporaryDirectory() as tmp:
                store = SqliteStore(tmp)
                try:
                    s_med, s_min = _measure(store.write_tx_sync, store.read_tx, turns)
                finally:
                    store.close()
            url = pgcluster.fresh_database(cluster_url, f"chain_{turns}")
            with psycopg.connect(url) as conn:
                pg_migrations.apply_migrations(conn)
                tx = SimpleNamespace(responses=PgResponseMap(conn))

                def in_tx(fn: Any, conn: Any = conn, tx: Any = tx) -> Any:
                    with conn.transaction():
                        return fn(tx)

                p_med, p_min = _measure(in_tx, in_tx, turns)
            print(f"{turns:5d} turns: sqlite median {s_med:6.2f} ms (min {s_min:6.2f});"
                  f" postgresql median {p_med:6.2f} ms (min {p_min:6.2f})")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [300, 1000])
