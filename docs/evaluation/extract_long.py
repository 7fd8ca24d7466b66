"""CPU of one ``extract()`` call on long pastes, two trees side by side.

Each row is one message made of a sentence repeated ``n`` times (a long paste of
settled values, of 不是X而是Y contrasts, of a two-speaker chat); a linear extraction
doubles its time as ``n`` doubles. Every measurement runs in a fresh process, base and
new alternating, and reports process CPU seconds (best of 2):

    PYTHONPATH=$PWD python docs/evaluation/extract_long.py BASE_TREE

(from the new tree's root; base tree: ``git archive REV | tar -x -C /tmp/base``).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNITS = {
    "settled": "In this project we always use pnpm, no exceptions. ",
    "contrast": "第{i}个服务用的不是MySQL，而是Postgres{i}。",
    "chat": "Raj: we should always rebase {i}\nAnna: no\n",
}
SIZES = (1000, 2000, 4000)
WORKER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from memory_core.extraction import extract
unit, n = sys.argv[2], int(sys.argv[3])
text = "".join(unit.replace("{i}", str(i)) for i in range(n))
best = float("inf")
for _ in range(2):
    c0 = time.process_time()
    extract(text)
    best = min(best, time.process_time() - c0)
print(best)
"""


def _run(tree: Path, unit: str, n: int) -> float:
    out = subprocess.run([sys.executable, "-c", WORKER, str(tree), unit, str(n)],
                         capture_output=True, text=True, check=True, cwd=tree)
    return float(out.stdout.strip())


def main() -> None:
    base = Path(sys.argv[1]).resolve()
    print(f"{'paste':<10}{'n':>6}{'chars':>9}{'base s':>9}{'new s':>9}")
    for name, unit in UNITS.items():
        for n in SIZES:
            chars = sum(len(unit.replace("{i}", str(i))) for i in range(n))
            b, new = _run(base, unit, n), _run(ROOT, unit, n)
            print(f"{name:<10}{n:>6}{chars:>9}{b:>9.2f}{new:>9.2f}")


if __name__ == "__main__":
    main()
