"""CPU of ``memory_core.extraction.extract`` per message on the labelled splits
(``tests/data/extraction_*.jsonl`` except the held-out ``holdout3``): every message
extracted twice to warm up, then the whole set seven times; the best pass, in
microseconds per message. Extraction of a short message runs inline in its capture,
so this is request-path CPU.
Run from a source tree: ``python docs/evaluation/extract_cost.py``; for an A/B, run it
again from an older tree (``git archive REV | tar -x -C /tmp/old`` and
``cd /tmp/old && PYTHONPATH=. python /path/to/extract_cost.py``).

Figures: extraction_issue24.md, "An updates eval".
"""
import glob
import json
import time
from pathlib import Path

from memory_core.extraction import extract

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def main() -> None:
    texts = []
    for path in sorted(glob.glob(str(DATA / "extraction_*.jsonl"))):
        if "holdout3" in path:
            continue
        with open(path, encoding="utf-8") as fh:
            texts += [(r["text"], r["speaker"]) for r in map(json.loads, fh) if r]
    for _ in range(2):
        for text, speaker in texts:
            extract(text, speaker=speaker)
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for text, speaker in texts:
            extract(text, speaker=speaker)
        best = min(best, time.perf_counter() - start)
    print(f"{len(texts)} messages: {best * 1e6 / len(texts):.1f} us a message")


if __name__ == "__main__":
    main()
