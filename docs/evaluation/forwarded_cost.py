"""Cost of recording a forwarded body for the inspector, by history length: the
preparing thread's work (mask, compress), the writer's insert, and the call the
request path makes. Run: ``python docs/evaluation/forwarded_cost.py``.

Measured on the 2-core build machine while other jobs ran (medians of 30):
10 turns 0.08 ms prepare / 0.04 ms insert; 100 turns 0.18 / 0.03 ms; 1000 turns
(380 KiB body, 12.7 KiB stored) 2.4 / 0.15 ms, with a trigger word in every
message ("task-") 5.7 / 0.22 ms; the request-path call 15-60 us.
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory_core.capture import forwarded  # noqa: E402
from memory_core.engine import Engine  # noqa: E402
from memory_core.models import Scope  # noqa: E402

eng = Engine(Path(tempfile.mkdtemp()))
scope = Scope("t_x", "coder", "")
for trig, turns in ((False, 10), (False, 100), (False, 1000), (True, 1000)):
    msgs = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"turn {i}: the staging database runs on port {5000 + i} and the "
                        "ledger migration plan needs review by the team before Friday. " * 3
                        + (" see task-list" if trig else "")} for i in range(turns)]
    body = orjson.dumps({"model": "m", "messages": msgs})
    puts, prep, ins = [], [], []
    for _ in range(30):
        t = time.perf_counter()
        fut = eng.record_forwarded(scope, "rid", body, {"state": "injected"}, keep=200,
                                   max_bytes=4 << 20)
        puts.append(time.perf_counter() - t)
        fut.result()
        t = time.perf_counter()
        row = forwarded.prepare(scope, "rid", body, {"state": "injected"}, max_bytes=4 << 20,
                                redact=True)
        prep.append(time.perf_counter() - t)

        def run(c, row=row, ins=ins):
            t = time.perf_counter()
            forwarded.insert(c, row, 200)
            ins.append(time.perf_counter() - t)
        eng.store.write_tx_sync(run)
    def med(xs):
        return statistics.median(xs) * 1000
    print(f"{'task- ' if trig else ''}{turns:5d} turns: body {len(body)/1024:6.1f} KiB,"
          f" stored {len(row[10])/1024:5.1f} KiB; prepare (own thread) median {med(prep):5.2f} ms;"
          f" writer insert median {med(ins):5.2f} ms; request-path call median"
          f" {med(puts)*1000:5.1f} us")
eng.close()
