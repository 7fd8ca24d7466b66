"""Cost of a purge's copy scan (``memory purge``: :mod:`memory_core.store.purge_copies`).

Run from the repository root: ``python docs/evaluation/purge_copies_cost.py [--passes N]``.

The purged thread is the first ``--purged`` turns (default 300) of the LoCoMo
conversations 0-4 (``extract_ab.corpora``); the rows that stay are the next 1000
turns, each a message of another conversation, and one forwarded body holding them all
(a 1000-turn chat body as JSON). Per item, best of ``--passes`` (default 7), process
CPU time: building the :class:`~memory_core.store.scrub.Scrubber` of the purged texts
(``distinctive_only``, once per purge), the pre-test and scrub of one message, and of
the body (its JSON text pre-tested by tokens, then each string scrubbed). The other
turns are statements of their own: each one the scan changes is counted as an
over-wipe.

``--store``: a whole purge on a SQLite store of ``--threads`` conversations (default
60) of 40 LoCoMo turns each (distinct turns while the corpus lasts), one tenant: a
dry-run purge of the first thread (best of ``--passes``, process CPU time), with the
copy scan and with it replaced by a no-op.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "evaluation"))

import orjson  # noqa: E402
from extract_ab import corpora  # noqa: E402

from memory_core.store.scrub import Scrubber  # noqa: E402


def best_ms(fn: Callable[[], object], passes: int) -> float:
    """Best pass of ``fn`` in process CPU milliseconds."""
    best = float("inf")
    for _ in range(passes):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best * 1000


def whole_purge(turns: list[str], threads: int, passes: int) -> None:
    """Dry-run purges of one thread on a SQLite store, scan on and off (``--store``)."""
    import tempfile

    from memory_core.capture import evidence
    from memory_core.engine import Engine
    from memory_core.models import CaptureTicket, Scope
    from memory_core.store import sqlite_purge

    scope = Scope("bench-purge", "default")
    with tempfile.TemporaryDirectory(prefix="lcm-purge-") as tmp:
        engine = Engine(tmp)
        try:
            for c in range(threads):
                at = (c * 40) % max(1, len(turns) - 40)  # wraps past the corpus
                msgs = [{"role": "user" if j % 2 == 0 else "assistant",
                         "content": f"[{c}] {t}" if j == 0 else t}
                        for j, t in enumerate(turns[at:at + 40])]
                engine.store.write_tx(evidence.capture_request,
                                      CaptureTicket(scope=scope, request_id=f"p{c}"),
                                      msgs, {}, 1_700_000_000.0 + c).result(600)

            def timed() -> float:
                best = float("inf")
                for _ in range(passes):
                    t = time.process_time()
                    engine.purge(thread_id=1, dry_run=True)
                    best = min(best, time.process_time() - t)
                return best * 1000

            with_scan = timed()
            real = sqlite_purge.find_copies
            sqlite_purge.find_copies = lambda *a, **k: ({}, [])  # type: ignore[assignment]
            try:
                without = timed()
            finally:
                sqlite_purge.find_copies = real
        finally:
            engine.close()
    print(f"dry-run purge of 1 thread among {threads} ({threads * 40} messages), CPU:"
          f" {with_scan:.1f} ms with the copy scan, {without:.1f} ms without")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--purged", type=int, default=300)
    parser.add_argument("--store", action="store_true")
    parser.add_argument("--threads", type=int, default=60)
    args = parser.parse_args()
    turns = [t for t, _ in list(corpora(ROOT).values())[-1]]
    if args.store:
        whole_purge(turns, args.threads, args.passes)
        return
    purged, kept = turns[:args.purged], turns[args.purged:args.purged + 1000]
    body = orjson.dumps({"model": "m", "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "content": t}
        for i, t in enumerate(kept)]}).decode()
    scrub = Scrubber(purged, distinctive_only=True)

    def each() -> int:
        return sum(scrub.scrub(t) != t for t in kept if scrub.may_hold(t))

    def whole() -> object:
        return scrub.scrub_value(orjson.loads(body)) if scrub.may_hold(body) else None

    build = best_ms(lambda: Scrubber(purged, distinctive_only=True), args.passes)
    rows = best_ms(each, args.passes)
    blob = best_ms(whole, args.passes)
    print(f"purged turns {len(purged)}, rows kept {len(kept)}, body {len(body) // 1024} KiB")
    print(f"scrubber build            {build:8.2f} ms (once per purge)")
    print(f"1000 messages, pre-test+scrub {rows:8.2f} ms ({rows:.1f} us a message)")
    print(f"one 1000-turn body        {blob:8.2f} ms")
    print(f"over-wipes among kept turns: {each()}")


if __name__ == "__main__":
    main()
