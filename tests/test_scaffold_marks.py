"""A summary node's text is marked with the superseded items it may quote, picked by
the ids it cites and the numbers it holds; the pick (a set intersection per node) marks
exactly what marking every line against every item marks.

Pure functions over generated texts (the numbers workload's kind of line: many
numbers, few of them old values), no store.
"""

from __future__ import annotations

import random

from memory_core.compaction.compressor import (
    Superseded,
    _mark_superseded,
    _marked,
    _superseded_key,
)


def _node(rng: random.Random, values: list[str]) -> str:
    lines = []
    for _ in range(rng.randint(3, 12)):
        picked = [rng.choice(values) if rng.random() < 0.2 else str(rng.randint(100, 99999))
                  for _ in range(rng.randint(2, 8))]
        cite = f" [msg {rng.randint(1, 60)}]" if rng.random() < 0.5 else ""
        lines.append("- the rate limit is " + " then ".join(f"{n} req/s" for n in picked) + cite)
    return "\n".join(lines)


def test_marks_from_the_nodes_pick_equal_marks_from_every_item() -> None:
    rng = random.Random(7)
    for _ in range(40):
        values = [str(rng.randint(100, 9999)) for _ in range(30)]
        items = [Superseded(rng.randint(1, 60), f"the rate limit is {v} req/s", v, "req/s")
                 for v in values]
        items += [Superseded(rng.randint(1, 60), "the host is eu-west-1", "eu-west-1", None),
                  Superseded(rng.randint(1, 60), "we use port 80", "80", None)]
        key = _superseded_key(items)
        text = _node(rng, values)
        assert _marked(text, key) == _mark_superseded(text, key)
    # a node quoting none of the items stays as it was
    assert _marked("- nothing here [msg 999] 123456", key[:-1]) == \
        "- nothing here [msg 999] 123456"
