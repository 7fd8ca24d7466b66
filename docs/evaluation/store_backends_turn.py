"""Capture of a chat turn on SQLite and on PostgreSQL (loopback), A/B in one run.

Each turn is what the request path writes: a ``capture_request`` job (the client's
whole history, one new user message) and a ``capture_response`` job (the answer),
each queued with ``Store.write_tx`` and waited on in turn, as a request does. One
conversation of ``turns`` turns, then ``clients`` conversations at once (threads).
Reports per-job latency (p50, p95, ms) and the operations each turn calls on the
store's groups (one statement each on PostgreSQL; a write batch adds its
``BEGIN``, advisory lock and ``COMMIT``, and a savepoint pair per job when the
batch holds more than one). PostgreSQL is a throwaway server (tests/pgcluster.py,
``fsync=off``: this measures round trips and CPU, not disk).

Run: ``python docs/evaluation/store_backends_turn.py [turns] [clients]``
(default 300 turns, 8 clients x 50 turns).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.capture import evidence as capture  # noqa: E402
from memory_core.models import CaptureTicket, Scope  # noqa: E402
from memory_core.store.api import Store  # noqa: E402
from memory_core.store.sqlite import SqliteStore  # noqa: E402
from tests import pgcluster  # noqa: E402


class _Counting:
    """A ``Tx`` whose ``capture`` group counts the operations called on it."""

    def __init__(self, tx: Any, counter: list[int]) -> None:
        self._tx, self._n = tx, counter

    @property
    def capture(self) -> Any:
        group, n = self._tx.capture, self._n

        class Wrap:
            def __getattr__(self, name: str) -> Any:
                fn = getattr(group, name)

                def call(*a: Any, **k: Any) -> Any:
                    n[0] += 1
                    return fn(*a, **k)
                return call
        return Wrap()


def _conversation(store: Store, session: str, turns: int, lat: list[float],
                  ops: list[int]) -> None:
    scope = Scope("t", "default", session)
    hist: list[Any] = [{"role": "system", "content": "be brief"}]
    for i in range(turns):
        hist.append({"role": "user", "content": f"question {i} " + "word " * 40})
        ticket = CaptureTicket(scope, f"{session}-{i}")
        counter = [0]
        started = time.perf_counter()
        store.write_tx(lambda tx, h=list(hist), t=ticket, c=counter: capture.capture_request(
            _Counting(tx, c), t, h, {"model": "m"}, time.time())).result(60)
        mid = time.perf_counter()
        answer = {"role": "assistant", "content": f"answer {i} " + "word " * 40}
        store.write_tx(lambda tx, t=ticket, a=answer, c=counter: capture.capture_response(
            _Counting(tx, c), t, [a], {}, time.time())).result(60)
        lat += [(mid - started) * 1000, (time.perf_counter() - mid) * 1000]
        ops.append(counter[0])
        hist.append(answer)


def _run(store: Store, turns: int, clients: int, per_client: int) -> str:
    lat: list[float] = []
    ops: list[int] = []
    _conversation(store, "solo", turns, lat, ops)
    q = statistics.quantiles(lat, n=20)
    solo = (f"{statistics.median(lat):.2f} / {q[18]:.2f} ms,"
            f" {statistics.median(ops):.0f} group ops a turn")
    lat2: list[float] = []
    started = time.perf_counter()
    threads = [threading.Thread(target=_conversation,
                                args=(store, f"c{n}", per_client, lat2, []))
               for n in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - started
    q2 = statistics.quantiles(lat2, n=20)
    return (f"{solo} | {statistics.median(lat2):.2f} / {q2[18]:.2f} ms,"
            f" {clients * per_client / wall:.0f} turns/s")


def main(turns: int, clients: int) -> None:
    from memory_core.store.pg import PgStore

    print(f"| backend | one conversation, {turns} turns: job p50 / p95, ops"
          f" | {clients} conversations at once x 50 turns: job p50 / p95, throughput |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        lite = SqliteStore(Path(tmp))
        try:
            print(f"| SQLite | {_run(lite, turns, clients, 50)} |")
        finally:
            lite.close()
    with pgcluster.cluster() as cluster_url:
        url = pgcluster.fresh_database(cluster_url, "bench")
        pg = PgStore(url)
        try:
            print(f"| PostgreSQL (loopback) | {_run(pg, turns, clients, 50)} |")
        finally:
            pg.close()


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(args[0] if args else 300, args[1] if len(args) > 1 else 8)
