"""A summary node's text is marked with the superseded items it may quote, picked by
the ids it cites and the numbers it holds; the pick (a set intersection per node) marks
exactly what marking every line against every item marks. The scaffold's memo keys on
the items each node does quote: rendered again when they change, byte for byte the
fresh render, the same bytes (the upstream's cached prefix) when they do not.

Pure functions over generated texts (the numbers workload's kind of line: many
numbers, few of them old values), no store.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from memory_core.compaction.compressor import (
    Superseded,
    SummaryNode,
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


# -- the scaffold's memo: keyed on what each node quotes -----------------------------------
def _summary_nodes() -> list[SummaryNode]:
    """Three roots of the numbers workload's kind: many numbers, a few citations."""
    texts = [
        "- the gateway timeout is 280 s [msg 3]\n- the pool holds 105 connections\n"
        "- region eu-west-1 serves 4,200 req/s",
        "- the cache TTL is 100 s [msg 14]\n- the batch size is 640 rows, then 1,280",
        "- the retry budget is 12 % [msg 25]\n- the queue depth is 3,500 jobs",
    ]
    return [SummaryNode(100 + n, 1, list(range(10 * n + 1, 10 * n + 11)), t, 40, 900,
                        "extractive") for n, t in enumerate(texts)]


def test_scaffold_memo_renders_again_only_when_a_quoted_item_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over corrections that a summary quotes and ones none quotes, edits, purges,
    a redaction and items leaving the newest window, the memoised scaffold is byte
    for byte the fresh render (every node marked against every item), and it is
    rendered again exactly when a node's quoted items change: otherwise the bytes,
    the upstream's cached prefix, stay as they were (issue 28: every correction
    changed the key and re-rendered the scaffold)."""
    from memory_core.compaction import compressor

    renders: list[int] = []
    render = compressor._scaffold_text

    def counted(*a: Any, **k: Any) -> str:
        renders.append(1)
        return render(*a, **k)

    monkeypatch.setattr(compressor, "_scaffold_text", counted)
    compressor._SCAFFOLDS.clear()
    roots = _summary_nodes()
    filler = [Superseded(500 + n, f"the shard {n} count is {7000 + n}", str(7000 + n), None)
              for n in range(6)]
    timeout = Superseded(3, "The gateway timeout is 280 s.", "280", "s")
    pool = Superseded(41, "The pool holds 105 connections.", "105", None)
    region = Superseded(42, "Region eu-west-1 serves it.", "eu-west-1", None)
    ttl = Superseded(14, "The cache TTL is 90 s.", "90", "s")  # cited, value not quoted
    # (label, superseded items, nodes, re-rendered?, its bytes changed?)
    steps: list[tuple[str, list[Superseded], list[SummaryNode], bool, bool]] = []
    items = filler[:2]
    steps.append(("start", items, roots, True, True))
    items = [*items, filler[2]]  # a correction no summary quotes
    steps.append(("unquoted correction", items, roots, False, False))
    items = [*items, timeout]
    steps.append(("quoted by value and cited", items, roots, True, True))
    items = [*items, Superseded(600, "The batch size is 64 rows.", "64", None)]
    steps.append(("value inside a longer number", items, roots, False, False))
    items = [*items, ttl]
    steps.append(("cited, its value not quoted", items, roots, True, True))
    items = [*items, region, pool]
    steps.append(("a value that is not a plain number", items, roots, True, True))
    items = [*items, Superseded(601, "Region us-east-2 serves it.", "us-east-2", None)]
    steps.append(("an unquoted non-numeric value", items, roots, False, False))
    items = [i if i is not filler[0] else Superseded(500, "the shard count is 7001",
                                                      "7001", None) for i in items]
    steps.append(("an unquoted item edited", items, roots, False, False))
    items = [i if i is not timeout else Superseded(3, "The gateway timeout was 280 s.",
                                                   "280", "s") for i in items]
    steps.append(("a quoted item edited", items, roots, True, True))
    items = [i for i in items if i is not pool]
    steps.append(("a quoted item purged", items, roots, True, True))
    items = [i for i in items if i.source_id != 601]
    steps.append(("an unquoted item purged", items, roots, False, False))
    redacted = [*roots[:2], SummaryNode(102, 1, roots[2].message_ids,
                                        roots[2].text.replace("3,500", "[redacted]"), 40,
                                        900, "extractive")]
    steps.append(("a node redacted, nothing it quotes", items, redacted, True, True))
    items = [i if i is not region else Superseded(42, "[redacted]", "eu-west-1", None)
             for i in items]
    steps.append(("a quoted item's text redacted", items, redacted, True, True))
    items = items[-3:]  # the newest window moves on past the quoted ones
    steps.append(("quoted items out of the window", items, redacted, True, True))
    previous = None
    for label, superseded, nodes, rendered, changed in steps:
        for budget in (None, 60):
            before = len(renders)
            got = compressor.scaffold_text(nodes, tools_enabled=True, superseded=superseded,
                                           budget_tokens=budget)
            fresh = render(nodes, tools_enabled=True, superseded=superseded,
                           budget_tokens=budget, short_tools=False)
            assert got == fresh, label
            assert (len(renders) > before) == rendered, label
            if budget is None:
                assert (got != previous) == changed, label
                previous = got
    final = compressor.scaffold_text(roots, tools_enabled=True, superseded=[timeout, pool])
    assert final.count("later corrected") == 2  # what the nodes quote is marked


def test_scaffold_prefix_bytes_hold_when_no_summary_quotes_the_correction() -> None:
    """The scaffold and its acknowledgement open the body the upstream caches as a
    prefix: a correction no summary quotes leaves the serialised body's bytes up to
    the new turn as they were; one a summary quotes changes them."""
    from proxy import rewrite

    roots = _summary_nodes()
    messages: list[Any] = [{"role": "system", "content": "You help."}]
    messages += [{"role": "user" if n % 2 else "assistant", "content": f"turn {n}"}
                 for n in range(1, 31)]
    ids = [0, *range(1, 31)]

    def body(superseded: list[Superseded], turn: str) -> bytes:
        view = rewrite.apply_forest([*messages, {"role": "user", "content": turn}],
                                    [*ids, 31], roots, tools_enabled=True,
                                    superseded=superseded)
        return rewrite.dumps_body({"model": "m", "messages": view}, raw_items=None)

    old = [Superseded(700, "The shard count is 7000.", "7000", None)]
    first = body(old, "TURN-A")
    unquoted = body([*old, Superseded(701, "The shard count is 7100.", "7100", None)],
                    "TURN-B")
    head = first[:first.index(b"TURN-A")]
    assert unquoted.startswith(head)
    assert head.count(b"Conversation summary") == 1
    quoted = body([*old, Superseded(3, "The gateway timeout is 280 s.", "280", "s")], "x")
    assert not quoted.startswith(head)
