"""Cost of reading a Responses API conversation back from the store
(``memory_core.capture.response_threads.conversation``: the chain of ``response_threads`` rows of
a ``previous_response_id`` session), which a continued request pays on a cache miss
only (after a restart, or once evicted from the proxy's 1024-entry cache). Each turn
adds a user message and an assistant reply of about 70 distinct words each.
Run: ``python docs/evaluation/response_chain_cost.py [turns ...]``.

Measured on the 2-core build machine while the full test suite ran (medians of 20):
see constants.md, "Response id map".
"""
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory_core.capture import response_threads as responsemap  # noqa: E402
from memory_core.models import Scope  # noqa: E402
from memory_core.store.sqlite import SqliteStore  # noqa: E402

rng = random.Random(7)
WORDS = [f"w{n}" for n in range(5000)]
scope = Scope("t", "default", "")


def text(n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


for turns in [int(a) for a in sys.argv[1:]] or [10, 300, 1000]:
    store = SqliteStore(Path(tempfile.mkdtemp()))
    prev = None
    for i in range(turns):
        items = [{"role": "user", "content": text(70)},
                 {"type": "message", "id": f"msg_{i}", "role": "assistant",
                  "status": "completed",
                  "content": [{"type": "output_text", "text": text(70), "annotations": []}]}]
        blob = responsemap.prepare(items, redact=True, store_raw=True)
        store.write_tx(responsemap.insert, scope, f"resp_{i}", prev, blob).result()
        prev = f"resp_{i}"
    times = []
    for _ in range(20):
        started = time.perf_counter()
        found = store.read_tx(responsemap.conversation, "t", "default", prev)
        times.append((time.perf_counter() - started) * 1000)
    assert found is not None and len(found[0]) == 2 * turns
    size = store.read(lambda c: c.execute(
        "SELECT sum(length(items)) FROM response_threads").fetchone()[0])
    print(f"{turns} turns: read {statistics.median(times):.2f} ms"
          f" (min {min(times):.2f}), stored {size / turns / 1024:.2f} KiB/turn")
    store.close()
