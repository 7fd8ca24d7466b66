"""Extraction CPU A/B and output equivalence between two source trees (issue 28).

Corpora, every text extracted as the role it had:
  short   the short bench's 200 user prompts (``proxy.shortbench.prompt``),
  labelled  every text of ``tests/data/extraction_*.jsonl``,
  locomo  the turns of LoCoMo conversations 0-4 (``/work/shared/data/locomo/locomo10.json``,
          or ``LOCOMO``), each as a user message.

``python docs/evaluation/extract_ab.py BASE_TREE`` (from the new tree's root) runs one
worker process per tree and pass, alternating base/new ``--rounds`` times (default 3); each
worker extracts every text once to warm up, checks that ``repr`` of every result equals
the other tree's (the first worker of each tree writes a digest), then times each corpus
``--passes`` times and reports its best pass in microseconds of process CPU time per
message (CPU time, not wall time: the figure holds on a shared machine). Prints mean and
spread (min-max) over the rounds per tree and corpus, and the new/base ratio. Exits 1 if
any output differs. Base tree: ``git archive REV | tar -x -C /tmp/base``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = Path(os.environ.get("LOCOMO", "/work/shared/data/locomo/locomo10.json"))


def corpora(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Corpus name -> [(text, speaker)], read from ``root`` by the parent process, which
    hands the same texts to both trees' workers (a worker of the base tree imports no
    module of the new one)."""
    from proxy.shortbench import prompt

    out: dict[str, list[tuple[str, str]]] = {"short": [(prompt(i), "user") for i in range(200)]}
    labelled: list[tuple[str, str]] = []
    for path in sorted((root / "tests" / "data").glob("extraction_*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            labelled += [(r["text"], r.get("speaker", "user"))
                         for r in map(json.loads, filter(str.strip, fh))]
    out["labelled"] = labelled
    conv = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns: list[tuple[str, str]] = []
    for sample in conv[:5]:
        c = sample["conversation"]
        for k in sorted(k for k in c if k.startswith("session_") and isinstance(c[k], list)):
            turns += [(t["text"], "user") for t in c[k] if t.get("text")]
    out["locomo"] = turns
    return out


def worker(texts_file: Path, passes: int, dump: Path | None) -> None:
    from memory_core.extraction import extract

    sets = {name: [(text, speaker) for text, speaker in pairs] for name, pairs in
            json.loads(texts_file.read_text(encoding="utf-8")).items()}
    result: dict[str, object] = {"tree": str(Path(extract.__code__.co_filename).parents[2])}
    digest = hashlib.sha256()
    lines: list[str] = []
    for texts in sets.values():
        for text, speaker in texts:
            r = repr(extract(text, speaker=speaker))
            digest.update(r.encode())
            if dump is not None:
                lines.append(r)
    result["digest"] = digest.hexdigest()
    if dump is not None:
        dump.write_text("\n".join(lines), encoding="utf-8")
    for name, texts in sets.items():
        best = float("inf")
        for _ in range(passes):
            t0 = time.process_time()
            for text, speaker in texts:
                extract(text, speaker=speaker)
            best = min(best, time.process_time() - t0)
        result[name] = best * 1e6 / len(texts)
        result[name + "_n"] = len(texts)
    print(json.dumps(result))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--texts", type=Path, default=Path("/tmp/extract_ab_texts.json"))
    args = ap.parse_args()
    if args.worker:
        worker(args.texts, args.passes, args.dump)
        return
    args.texts.write_text(json.dumps(corpora(ROOT), ensure_ascii=False), encoding="utf-8")
    trees = {"base": Path(args.base).resolve(), "new": ROOT}
    runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    digests: dict[str, set[str]] = {"base": set(), "new": set()}
    for r in range(args.rounds):
        for label, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            cmd = [sys.executable, __file__, "--worker", "--passes", str(args.passes),
                   "--texts", str(args.texts)]
            if r == 0:
                cmd += ["--dump", f"/tmp/extract_ab_{label}.txt"]
            out = subprocess.run(cmd, env=env, cwd=tree, check=True, capture_output=True,
                                 text=True).stdout
            res = json.loads(out.strip().splitlines()[-1])
            assert Path(res["tree"]).resolve() == tree, (res["tree"], tree)
            digests[label].add(res["digest"])
            runs[label].append(res)
    same = digests["base"] == digests["new"] and len(digests["new"]) == 1
    print(f"outputs identical: {same} (digest {sorted(digests['new'])[0][:16]}; "
          "dumps in /tmp/extract_ab_{base,new}.txt)")
    print(f"{'corpus':<10}{'msgs':>6}{'base us/msg':>22}{'new us/msg':>22}{'new/base':>10}")
    for name in ("short", "labelled", "locomo"):
        row = []
        for label in ("base", "new"):
            xs = [res[name] for res in runs[label]]
            row.append((statistics.mean(xs), min(xs), max(xs)))
        n = runs["new"][0][name + "_n"]
        cells = "".join(f"{m:>10.1f} ({lo:.0f}-{hi:.0f})" for m, lo, hi in row)
        print(f"{name:<10}{n:>6}{cells}{row[1][0] / row[0][0]:>10.2f}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
