"""CPU seconds of two regexes on a long run of figures (a pasted row of digits):
``readings.MOVEMENT`` on "x 0,1,2,…" and the writer's clock-time ``_SLOT`` on
"我的号码是777…", at each length given (characters). Quadratic before branch
``rev20`` (x4 per doubling), linear after.

    PYTHONPATH=$PWD python docs/evaluation/digit_runs.py 5000 10000 20000 100000
"""

from __future__ import annotations

import sys
import time

from memory_core.items import readings
from memory_core.items.writer import _SLOT

for n in map(int, sys.argv[1:] or ["20000"]):
    row = "x " + ",".join(str(i % 10) for i in range(n // 2))
    digits = "我的号码是" + "7" * n
    t = time.process_time()
    readings.MOVEMENT.search(row)
    moved = time.process_time() - t
    t = time.process_time()
    list(_SLOT.finditer(digits))
    slots = time.process_time() - t
    print(f"{n:>7} chars  MOVEMENT {moved:7.3f} s  _SLOT {slots:7.3f} s", flush=True)
