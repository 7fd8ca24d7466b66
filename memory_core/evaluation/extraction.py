"""Score ``memory_core.extraction.extract`` against a labelled JSONL set.

    python -m memory_core.evaluation.extraction tests/data/extraction_labelled.jsonl [--errors]

Each line of the set is ``{"id", "lang", "speaker", "text", "expected": [item…]}`` where an
item is ``{"kind", "subject"?, "value"?, "unit"?, "condition"?, "correction"?,
"task_label"?}``; a field left out of a label is not checked.

**Matching rule.** Within one message, an expected and a predicted item can pair when
they have the same ``kind`` (and, for tasks, the same ``task_label`` where labelled) and
their subjects overlap: an unlabelled expected subject accepts any prediction; otherwise
``subject_similarity`` must reach 0.5. Pairs are chosen greedily, best first (subject
similarity, then agreeing value and unit), each item used once. A pair is a true
positive when, in addition, the predicted ``value`` equals the labelled one (relative
tolerance 1e-6) and the ``unit`` equals the labelled unit, where labelled; a pair that
fails only there counts as one false positive and one false negative. Unpaired
predictions are false positives, unpaired labels false negatives.

**Standing items.** Where a labelled item says ``"standing": true|false`` (standing =
what the user set to last: preferences, rules, decisions, corrections, quantities the
user fixed; not observations, one of a numbered series, one-off requests, small talk,
assistant proposals), a prediction *stands* when the block would put it in every
turn: :func:`memory_core.assembly.block.standing_weight` > 0 on the item as it would be
stored (evidence ``user`` unless a proposal; an extraction flagged ``correction``
counts as superseding an earlier item). Predictions pair with the labels of their
message by subject (any kind; the same kind first), or by a text that holds the
labelled subject (a statement filed under another key still stands or not), and last
a label and a prediction both left over pair when they share the message and the kind
(the label's free-worded subject names neither the key nor the text; one label, one
item; ``--no-message-pairs`` leaves this step out). Standing precision is the share
of standing predictions, in messages whose every label carries ``standing`` (in a
set that has such labels: its messages with no item are judged too), paired
with a label that says ``true``; recall the share of ``true`` labels whose paired
prediction stands.

**Field accuracy** is measured over the pairs (before the value/unit check): the share
with the labelled value, unit and condition right (conditions compared with the same
similarity as subjects), and the share whose ``correction`` flag equals the label (an
unlabelled flag means ``False``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from memory_core.extraction import KINDS, LANGS, TASK_LABELS, Extracted, extract
from memory_core.extraction.model import RETRACTION
from memory_core.extraction.prepare import fold_traditional

_LABEL_KEYS = {"kind", "subject", "value", "unit", "condition", "correction", "task_label",
               "standing"}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_STRIP = re.compile(r"[\s\W_]+")
_LINK = re.compile(r"[的の]")
MATCH_THRESHOLD = 0.5
TEXT_PAIR = 0.4
"""Standing pairs only: the most a pair by text (a prediction whose text holds the
labelled subject, its own subject not matching) scores, below any subject pair."""


def load(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a labelled set; raises ValueError naming the bad line."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            problem = _problem(row, seen)
            if problem:
                raise ValueError(f"{path}:{n}: {problem}")
            seen.add(row["id"])
            rows.append(row)
    return rows


def _problem(row: Any, seen: set[str]) -> str | None:
    if not isinstance(row, dict) or not {"id", "lang", "speaker", "text", "expected"} <= set(row):
        return "needs id, lang, speaker, text, expected"
    if row["id"] in seen:
        return f"duplicate id {row['id']!r}"
    if row["lang"] not in LANGS or row["speaker"] not in ("user", "assistant"):
        return "bad lang or speaker"
    for item in row["expected"]:
        if not isinstance(item, dict) or item.get("kind") not in KINDS or set(item) - _LABEL_KEYS:
            return f"bad expected item {item!r}"
        if item.get("task_label") not in (None, *TASK_LABELS):
            return f"bad task_label {item!r}"
        if item.get("standing") not in (None, True, False):
            return f"bad standing {item!r}"
    return None


def _units(text: str) -> set[str]:
    """Tokens for overlap: words for Latin text, character bigrams for CJK text."""
    text = _LINK.sub("", fold_traditional(text.lower()))
    if _CJK.search(text):
        flat = _STRIP.sub("", text)
        return {flat[i:i + 2] for i in range(len(flat) - 1)} or {flat}
    return {t for t in _STRIP.split(text) if t}


def subject_similarity(expected: str, predicted: str) -> float:
    """Overlap coefficient |A∩B| / min(|A|,|B|) of word (or CJK bigram) sets; 1.0 when
    one normalised string contains the other (the engine's own containment rule)."""
    a_flat = _STRIP.sub("", _LINK.sub("", fold_traditional(expected.lower())))
    b_flat = _STRIP.sub("", _LINK.sub("", fold_traditional(predicted.lower())))
    if a_flat and b_flat and (a_flat in b_flat or b_flat in a_flat):
        return 1.0
    a, b = _units(expected), _units(predicted)
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _same_value(expected: float, got: float | None) -> bool:
    return got is not None and math.isclose(expected, got, rel_tol=1e-6)


def _value_ok(exp: dict[str, Any], got: Extracted) -> bool:
    if "value" in exp and not _same_value(exp["value"], got.value):
        return False
    return "unit" not in exp or exp["unit"] == got.unit


def _pairs(expected: list[dict[str, Any]], predicted: list[Extracted]) -> list[tuple[int, int]]:
    scored: list[tuple[float, int, int]] = []
    for i, exp in enumerate(expected):
        for j, got in enumerate(predicted):
            if exp["kind"] != got.kind:
                continue
            if exp.get("task_label") not in (None, got.task_label):
                continue
            if "subject" in exp:
                if got.subject is None:
                    continue
                sim = subject_similarity(exp["subject"], got.subject)
                if sim < MATCH_THRESHOLD:
                    continue
            else:
                sim = 1.0
            bonus = (1.0 if _value_ok(exp, got) else 0.0) + (0.1 if got.condition else 0.0)
            scored.append((sim + bonus, i, j))
    return _greedy(scored)


def _greedy(scored: list[tuple[float, int, int]]) -> list[tuple[int, int]]:
    """``(score, label, prediction)`` triples paired best score first (ties by index),
    each label and each prediction used once."""
    used_e: set[int] = set()
    used_p: set[int] = set()
    out: list[tuple[int, int]] = []
    for _, i, j in sorted(scored, key=lambda t: (-t[0], t[1], t[2])):
        if i not in used_e and j not in used_p:
            used_e.add(i)
            used_p.add(j)
            out.append((i, j))
    return out


def stands(item: Extracted, speaker: str = "user") -> bool:
    """Whether the block would show ``item`` on every turn (module doc, "Standing
    items")."""
    import orjson

    from memory_core.assembly.block import standing_weight
    from memory_core.items.fields import extraction_data

    row = {"kind": item.kind, "text": item.text, "value": item.value,
           "condition": item.condition,
           "evidence": "assistant" if item.kind == "proposal" or speaker == "assistant"
           else "user",
           "supersedes": 0 if item.correction else None,
           "data": orjson.dumps(extraction_data(item)).decode()}
    return standing_weight(row) > 0


def _standing_pairs(expected: list[dict[str, Any]], predicted: list[Extracted],
                    *, message_pairs: bool = True) -> list[tuple[int, int]]:
    """Labels and predictions of one message paired by subject, any kind (the same
    kind first, then a labelled value matched), greedily, each used once. A
    prediction whose text names the labelled subject pairs too, after every subject
    match (:data:`TEXT_PAIR`): whether a statement stands is judged apart from the
    key it was filed under, which the overall scores judge. Last, with
    ``message_pairs`` (the default; ``False`` gives the pairing before it), what is
    left pairs by message and kind (:func:`_message_pairs`)."""
    scored = []
    for i, exp in enumerate(expected):
        for j, got in enumerate(predicted):
            sim = (subject_similarity(exp["subject"], got.subject or got.text)
                   if "subject" in exp else 1.0)
            bonus = ((1.0 if exp["kind"] == got.kind else 0.0)
                     + (0.5 if "value" in exp and _value_ok(exp, got) else 0.0))
            if sim >= MATCH_THRESHOLD:
                scored.append((sim + bonus, i, j))
            elif _names(got.text, exp["subject"]):
                # below every subject pair, whatever its kind and value
                scored.append((TEXT_PAIR * (sim + bonus) / 3.0, i, j))
    pairs = _greedy(scored)
    if not message_pairs:
        return pairs
    return pairs + _message_pairs(expected, predicted, pairs)


def _message_pairs(expected: list[dict[str, Any]], predicted: list[Extracted],
                   pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The last resort of :func:`_standing_pairs`: a label and a prediction of one
    message, both left unpaired, pair when their ``kind`` is the same. The label's row
    is its source message, so such a pair is a statement of that message whose key
    and text both miss the labeller's free wording. Each label and prediction is used
    once; among several of a kind the prediction whose text shares most of the
    labelled subject's words wins (then an agreeing value, then order) — never
    whether it stands, so a stray statement beside a missed one stays a stray."""
    left_e = {i for i in range(len(expected))} - {i for i, _ in pairs}
    left_p = {j for j in range(len(predicted))} - {j for _, j in pairs}
    scored = []
    for i in sorted(left_e):
        exp = expected[i]
        words = _units(exp["subject"]) if "subject" in exp else set()
        for j in sorted(left_p):
            got = predicted[j]
            if got.kind != exp["kind"]:
                continue
            shared = len(words & _units(got.text)) / len(words) if words else 0.0
            value = 0.5 if "value" in exp and _value_ok(exp, got) else 0.0
            scored.append((shared + value, i, j))
    return _greedy(scored)


def _names(text: str, subject: str) -> bool:
    """Whether ``text`` holds ``subject`` (normalised as :func:`subject_similarity`
    normalises: case, links, punctuation and spaces, traditional characters)."""
    flat = _STRIP.sub("", _LINK.sub("", fold_traditional(subject.lower())))
    return bool(flat) and flat in _STRIP.sub("", _LINK.sub("", fold_traditional(text.lower())))


def _standing_counts(counts: dict[str, int], errors: list[dict[str, Any]],
                     row: dict[str, Any], predicted: list[Extracted],
                     message_pairs: bool = True) -> None:
    expected = row["expected"]
    if not all("standing" in e for e in expected):
        return
    counts["messages"] += 1
    flags = [stands(p, row["speaker"]) for p in predicted]
    pairs = dict(_standing_pairs(expected, predicted, message_pairs=message_pairs))
    wrong: list[str] = []
    for i, exp in enumerate(expected):
        j = pairs.get(i)
        got = j is not None and flags[j]
        if exp["standing"]:
            counts["tp" if got else "fn"] += 1
            if not got:
                wrong.append("should stand: " + (predicted[j].text if j is not None
                                                  else f"(no {exp['kind']} extracted)"))
        elif got:
            counts["fp"] += 1
            wrong.append(f"stands, should not: {predicted[j].text}")  # type: ignore[index]
    paired = set(pairs.values())
    for j, flag in enumerate(flags):
        if flag and j not in paired:
            counts["fp"] += 1
            wrong.append(f"stands, nothing labelled: {predicted[j].text}")
    if wrong:
        errors.append({"id": row["id"], "text": row["text"], "wrong": wrong})


def _prf(c: dict[str, int]) -> dict[str, float | int]:
    tp, fp, fn = c["tp"], c["fp"], c["fn"]
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": round(p, 4), "recall": round(r, 4),
            "f1": round(f, 4)}


def score(path: str | Path, *, only: str | None = None,
          message_pairs: bool = True) -> dict[str, Any]:
    """Precision/recall/F1 overall, per kind and per language, plus field accuracy.

    Returns ``{"messages", "overall", "by_kind", "by_lang", "fields", "standing",
    "standing_errors", "errors"}`` (``standing``: ``None`` when no message carries
    standing labels, else its counts and ``messages``); the counts dicts hold
    ``tp``/``fp``/``fn``/``precision``/``recall``/``f1``. ``errors``
    lists, per message with a mismatch, the missed labels and spurious predictions.
    ``only`` keeps the messages whose id starts with that prefix (e.g. ``"b-"``);
    ``message_pairs=False`` scores standing without the pairing by message and kind
    (:func:`_standing_pairs`), as it was scored before that pairing.
    """
    rows = [r for r in load(path) if only is None or r["id"].startswith(only)]
    overall: dict[str, int] = defaultdict(int)
    by_kind: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_lang: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    fields: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    errors: list[dict[str, Any]] = []
    standing: dict[str, int] = defaultdict(int)
    standing_errors: list[dict[str, Any]] = []
    # A set that labels standing anywhere judges its empty messages too (nothing stands).
    judged = any("standing" in i for r in rows for i in r["expected"])
    for row in rows:
        # a retraction stores no item (it takes one out): not among the predictions
        predicted = [p for p in extract(row["text"], speaker=row["speaker"])
                     if p.kind != RETRACTION]
        expected = row["expected"]
        if judged:
            _standing_counts(standing, standing_errors, row, predicted, message_pairs)
        pairs = _pairs(expected, predicted)
        good = [(i, j) for i, j in pairs if _value_ok(expected[i], predicted[j])]
        for i, j in pairs:
            _fields(fields, expected[i], predicted[j])
        hit_e = {i for i, _ in good}
        hit_p = {j for _, j in good}
        lang = row["lang"]
        for i, exp in enumerate(expected):
            outcome = "tp" if i in hit_e else "fn"
            for counts in (overall, by_kind[exp["kind"]], by_lang[lang]):
                counts[outcome] += 1
        for j, got in enumerate(predicted):
            if j not in hit_p:
                for counts in (overall, by_kind[got.kind], by_lang[lang]):
                    counts["fp"] += 1
        if len(good) != len(expected) or len(good) != len(predicted):
            errors.append({
                "id": row["id"], "text": row["text"],
                "missed": [e for i, e in enumerate(expected) if i not in hit_e],
                "spurious": [_brief(p) for j, p in enumerate(predicted) if j not in hit_p],
            })
    return {
        "messages": len(rows),
        "overall": _prf(overall),
        "by_kind": {k: _prf(by_kind[k]) for k in KINDS if k in by_kind},
        "by_lang": {lang: _prf(by_lang[lang]) for lang in LANGS if lang in by_lang},
        "fields": {name: {"correct": c["correct"], "total": c["total"],
                          "accuracy": round(c["correct"] / c["total"], 4) if c["total"] else 1.0}
                   for name, c in sorted(fields.items())},
        "standing": dict(_prf(standing), messages=standing["messages"])
        if standing["messages"] else None,
        "standing_errors": standing_errors,
        "errors": errors,
    }


def _fields(fields: dict[str, dict[str, int]], exp: dict[str, Any], got: Extracted) -> None:
    checks: dict[str, bool] = {}
    if "value" in exp:
        checks["value"] = _same_value(exp["value"], got.value)
    if "unit" in exp:
        checks["unit"] = exp["unit"] == got.unit
    if "condition" in exp:
        checks["condition"] = got.condition is not None and subject_similarity(
            exp["condition"], got.condition) >= MATCH_THRESHOLD
    checks["correction"] = bool(exp.get("correction", False)) == got.correction
    for name, ok in checks.items():
        fields[name]["total"] += 1
        fields[name]["correct"] += int(ok)


def _brief(item: Extracted) -> dict[str, Any]:
    out = {"kind": item.kind, "subject": item.subject, "value": item.value, "unit": item.unit,
           "condition": item.condition, "correction": item.correction,
           "task_label": item.task_label, "text": item.text}
    return {k: v for k, v in out.items() if v not in (None, False)}


def _table(title: str, rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"{title:<12} {'P':>6} {'R':>6} {'F1':>6} {'tp':>5} {'fp':>5} {'fn':>5}"]
    for name, c in rows.items():
        lines.append(f"{name:<12} {c['precision']:>6.3f} {c['recall']:>6.3f} {c['f1']:>6.3f}"
                     f" {c['tp']:>5} {c['fp']:>5} {c['fn']:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI: print the score tables (and with ``--errors`` every mismatch) to stdout."""
    parser = argparse.ArgumentParser(prog="python -m memory_core.evaluation.extraction")
    parser.add_argument("path", nargs="?", default="tests/data/extraction_labelled.jsonl")
    parser.add_argument("--errors", action="store_true", help="list every mismatch")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--only", metavar="PREFIX", help="score only ids starting with PREFIX")
    parser.add_argument("--no-message-pairs", action="store_true",
                        help="standing: pair by subject and text only (the pairing before"
                             " the pairing by message and kind)")
    args = parser.parse_args(argv)
    result = score(args.path, only=args.only, message_pairs=not args.no_message_pairs)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print(f"messages: {result['messages']}")
    print(_table("overall", {"all": result["overall"]}))
    print(_table("kind", result["by_kind"]))
    print(_table("lang", result["by_lang"]))
    print("fields:", ", ".join(f"{k} {v['correct']}/{v['total']} ({v['accuracy']:.3f})"
                               for k, v in result["fields"].items()))
    st = result["standing"]
    if st is not None:
        print(f"standing ({st['messages']} labelled messages): P {st['precision']:.3f}"
              f" R {st['recall']:.3f} (tp {st['tp']}, fp {st['fp']}, fn {st['fn']})")
    if args.errors:
        for err in result["standing_errors"]:
            print(f"\n{err['id']} (standing): {err['text']!r}")
            for w in err["wrong"]:
                print("   ", w)
        for err in result["errors"]:
            print(f"\n{err['id']}: {err['text']!r}")
            for e in err["missed"]:
                print("   missed  ", json.dumps(e, ensure_ascii=False))
            for p in err["spurious"]:
                print("   spurious", json.dumps(p, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
