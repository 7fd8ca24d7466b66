"""Agreement of two labellers on the standing items of one extraction split.

    python docs/evaluation/label_agreement.py FIRST.jsonl SECOND.jsonl

Both files are extraction splits (``memory_core/evaluation/extraction.py``'s format)
over the same messages; the second labeller's items also carry ``text`` (the clause
they come from). Items of one message are paired as the eval pairs a label with a
prediction (:func:`memory_core.evaluation.extraction._standing_pairs`: by subject,
the same kind first, then by a text that holds the subject). Treating the first
file as the answer key and the second labeller's ``standing`` flags as predictions
gives the standing precision and recall a system would score if it judged exactly
as the second labeller: the precision the metric can be read to (agreement bounds
it), not a target. Prints one table; nothing is written. Not symmetric: the
pairing by text reads the second file's ``text``.
"""
from __future__ import annotations

import sys
from typing import Any

import json
import tempfile
from pathlib import Path

from memory_core.evaluation.extraction import _standing_pairs, load
from memory_core.extraction import Extracted


def read(path: str) -> list[dict[str, Any]]:
    """The split at ``path``, validated by the eval's loader once each item's ``text``
    is set aside (the loader does not know that field); the texts are kept."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.jsonl"
        bare.write_text("".join(json.dumps(
            {**r, "expected": [{k: v for k, v in i.items() if k != "text"}
                               for i in r["expected"]]}, ensure_ascii=False) + "\n"
            for r in rows), encoding="utf-8")
        load(bare)
    return rows


def _as_predictions(items: list[dict[str, Any]]) -> list[Extracted]:
    return [Extracted(kind=i["kind"], text=i.get("text") or i.get("subject", ""),
                      subject=i.get("subject")) for i in items]


def agreement(first: list[dict[str, Any]], second: list[dict[str, Any]]
              ) -> dict[str, Any]:
    """Counts over the messages both files label (by id): items each, items paired,
    and standing tp / fp / fn with the first file as the key (a second-labeller item
    that stands and pairs with no first-labeller ``true`` is a false positive)."""
    by_id = {r["id"]: r for r in second}
    out = {"messages": 0, "first_items": 0, "second_items": 0, "paired": 0,
           "kind_agree": 0, "tp": 0, "fp": 0, "fn": 0, "first_true": 0, "second_true": 0}
    for row in first:
        other = by_id.get(row["id"])
        if other is None:
            continue
        out["messages"] += 1
        a, b = row["expected"], other["expected"]
        out["first_items"] += len(a)
        out["second_items"] += len(b)
        out["first_true"] += sum(bool(i.get("standing")) for i in a)
        out["second_true"] += sum(bool(i.get("standing")) for i in b)
        pairs = dict(_standing_pairs(a, _as_predictions(b)))
        out["paired"] += len(pairs)
        out["kind_agree"] += sum(a[i]["kind"] == b[j]["kind"] for i, j in pairs.items())
        for i, exp in enumerate(a):
            j = pairs.get(i)
            got = j is not None and bool(b[j].get("standing"))
            if exp.get("standing"):
                out["tp" if got else "fn"] += 1
            elif got:
                out["fp"] += 1
        used = set(pairs.values())
        out["fp"] += sum(1 for j, it in enumerate(b) if it.get("standing") and j not in used)
    tp, fp, fn = out["tp"], out["fp"], out["fn"]
    out["precision"] = tp / (tp + fp) if tp + fp else 1.0
    out["recall"] = tp / (tp + fn) if tp + fn else 1.0
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    r = agreement(read(argv[0]), read(argv[1]))
    print("| messages | items first / second | paired (same kind) | standing first / second"
          " | standing P / R of the second against the first |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {r['messages']} | {r['first_items']} / {r['second_items']} | {r['paired']}"
          f" ({r['kind_agree']}) | {r['first_true']} / {r['second_true']} |"
          f" {r['precision']:.3f} / {r['recall']:.3f} (tp {r['tp']}, fp {r['fp']},"
          f" fn {r['fn']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
