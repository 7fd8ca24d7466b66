"""Writer CPU of storing one user turn's items (``memory_core.items.writer.store_extracted``)
on the history bench's numbers workload at given depths, and the part of it spent in
the duplicate checks ``_candidates`` (a generator: its iteration is timed) and
``_reworded``. The store is filled with ``depth`` turns (user and assistant items),
then 20 more user turns are stored one write job each; means of ``time.thread_time``
on the writer thread, in ms. Prints a Markdown row per depth: turns, active items,
store_extracted, _candidates, _reworded.
Run: ``python docs/evaluation/dedupe_cost.py 1000,2000``.

Figures: README.md, "The duplicate checks" (issue 28).
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory_core.engine import Engine  # noqa: E402
from memory_core.extraction import extract  # noqa: E402
from memory_core.items import writer as memory  # noqa: E402
from memory_core.models import Scope  # noqa: E402
from proxy.evaluation.numbersgen import numbers_session  # noqa: E402

SCOPE = Scope("t", "coder")
MEASURE = 20
spent = {"_candidates": 0.0, "_reworded": 0.0}


def timed(name):
    fn = getattr(memory, name)

    def iterate(gen):
        while True:
            start = time.thread_time()
            try:
                row = next(gen)
            except StopIteration:
                return
            finally:
                spent[name] += time.thread_time() - start
            yield row

    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            out = fn(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - start
        return iterate(out) if hasattr(out, "__next__") else out
    setattr(memory, name, wrapper)


def main(depths):
    for name in spent:
        timed(name)
    for depth in depths:
        session = numbers_session(1, depth + MEASURE)
        with tempfile.TemporaryDirectory() as tmp:
            engine = Engine(Path(tmp) / "d")

            def fill(conn, turns):
                for turn in turns:
                    memory.store_extracted(conn, SCOPE, 1, None, extract(turn.text))
                    memory.store_extracted(conn, SCOPE, 1, None,
                                           extract(turn.reply, speaker="assistant"))
            engine.store.write_tx_sync(fill, session.turns[:depth])
            active = engine.store.read(lambda c: c.execute(
                "SELECT COUNT(*) FROM memory_items WHERE status='active'").fetchone()[0])
            whole, cand, rew = [], [], []
            for turn in session.turns[depth:]:
                items = extract(turn.text)
                for name in spent:
                    spent[name] = 0.0

                def one(conn, items=items):
                    start = time.thread_time()
                    memory.store_extracted(conn, SCOPE, 1, None, items)
                    return time.thread_time() - start
                whole.append(engine.store.write_tx_sync(one) * 1000)
                cand.append(spent["_candidates"] * 1000)
                rew.append(spent["_reworded"] * 1000)
            engine.close()
        print(f"| {depth:,} | {active:,} | {statistics.mean(whole):.2f}"
              f" | {statistics.mean(cand):.2f} | {statistics.mean(rew):.2f} |", flush=True)


if __name__ == "__main__":
    main([int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "1000,2000").split(",")])
