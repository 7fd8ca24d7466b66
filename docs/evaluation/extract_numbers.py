"""CPU of ``extract()`` on issue 28's ``numbers`` workload, one tree per process.

Extracts the user messages of ``numbers_session(2, 300)`` five times after a warm-up
and prints the best pass in microseconds of thread CPU a message. Run it from each
tree's root, alternating, to compare two checkouts:

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/extract_numbers.py
"""
import os
import sys
import time

sys.path.insert(0, os.getcwd())

from memory_core.extraction import extract  # noqa: E402
from proxy.evaluation.numbersgen import numbers_session  # noqa: E402

texts = [t.text for t in numbers_session(2, 300).turns]
for t in texts[:20]:
    extract(t)
best = float("inf")
for _ in range(5):
    c0 = time.thread_time()
    for t in texts:
        extract(t)
    best = min(best, (time.thread_time() - c0) / len(texts))
print(f"extract: {best * 1e6:.0f} us/msg ({len(texts)} messages, best of 5)")
