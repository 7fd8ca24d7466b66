"""Relevance floor of vector-only hits: score distributions and no-answer hits.

Usage (after ``lcm-proxy eval locomo --conversations 0 --data-dir DIR`` built DIR):
``PYTHONPATH=. python docs/evaluation/vector_floor.py DIR [pair|hashing]``. Prints the
vector scores (absolute, minus the query's best, z over its 200 candidates) of the
gold evidence of LoCoMo conversation 0's questions (categories 1-4) and of the best
and 10th neighbour of 26 questions about things the conversation never says, then the
hits of a hybrid search (k=10) of those 26 with ``vector_floor`` off and on.
"""
import sqlite3
import sys
from pathlib import Path

import numpy as np

from memory_core.engine import Engine
from memory_core.evaluation.locomo import TENANT, conversation_messages, gold_turns
from memory_core.search import SearchConfig, SearchService
from memory_core.search.embed.base import query_embedding
from proxy.cli.searching import embedder_or_exit
from proxy.settings import load_settings

NO_ANSWER = [
    "peanuts",
    "What did Caroline say about her peanut allergy?",
    "Which cryptocurrency did Melanie invest in?",
    "What is the name of Caroline's goldfish?",
    "How much does Melanie pay for her car insurance?",
    "What programming language does Caroline use at work?",
    "Which football team does Melanie support?",
    "What did Caroline think of the new iPhone?",
    "When did Melanie get her driver's licence renewed?",
    "What is the password for the home wifi?",
    "How many cylinders does the truck engine have?",
    "What was the score of the chess tournament final?",
    "Which dentist did Caroline visit for her root canal?",
    "What is Melanie's favourite sushi restaurant in Tokyo?",
    "What did they decide about the kitchen renovation budget?",
    "Which database migration failed on Tuesday?",
    "How tall is the Eiffel Tower?",
    "What did Caroline say about quantum computing?",
    "What is the deadline for the tax return?",
    "Which video game console does Melanie own?",
    "What did the plumber charge for fixing the leak?",
    "What is the capital of Mongolia?",
    "Did Caroline ever go skydiving?",
    "What brand of motorcycle does Melanie ride?",
    "Which stock did Caroline sell last week?",
    "kubernetes cluster upgrade",
]
LOCOMO = "/work/shared/data/locomo/locomo10.json"


def main() -> None:
    data_dir = Path(sys.argv[1])
    if sys.argv[2:] == ["hashing"]:
        from memory_core.search.embed.hashing import HashingEmbedder
        embedder = HashingEmbedder(64)
    else:
        embedder = embedder_or_exit(load_settings())
    import json
    conv = json.loads(Path(LOCOMO).read_text())[0]
    dia = [d for _w, turns in conversation_messages(conv["conversation"]) for d, _m in turns]
    db = sqlite3.connect(str(data_dir / "lcm.sqlite3"))
    ids = [r[0] for r in db.execute("SELECT id FROM messages ORDER BY id")]
    assert len(ids) == len(dia), "DIR must hold conversation 0 alone"
    m2d = dict(zip(ids, dia))
    engine = Engine(data_dir)
    embed = query_embedding(embedder)
    svc = SearchService(engine.store, data_dir, SearchConfig(vector_floor=False), embedder,
                        query_timeout=600.0)
    rows: dict[str, list[tuple[float, float, float]]] = {}

    def cands(q: str):
        qv = embed([q])[0]
        b, v = svc.candidate_lists(TENANT, "conv0", q, k=50, kinds=["message"],
                                   query_vector=qv)
        return b, v, np.array([sc for _, sc in v])

    def add(name: str, sc: float, s) -> None:
        rows.setdefault(name, []).append((sc, sc - s[0], (sc - s.mean()) / s.std()))

    for qa in conv["qa"]:
        gold = gold_turns(qa, set(dia))
        if int(qa["category"]) == 5 or not gold:
            continue
        b, v, s = cands(qa["question"])
        keyword = {lb for lb, _ in b}
        for lb, sc in v:
            if m2d.get(lb & ((1 << 40) - 1)) in gold:
                add("gold", sc, s)
                if lb not in keyword:
                    add("gold, vector only", sc, s)
        add("question best", s[0], s)
    for q in NO_ANSWER:
        _b, _v, s = cands(q)
        add("no-answer best", s[0], s)
        add("no-answer 10th", s[9], s)
    svc.close()
    for name, r in rows.items():
        a = np.array(r)
        for col, what in enumerate(("score", "minus best", "z")):
            print(f"{name:18} {what:10} n={len(a):3} p5/25/50/75/95",
                  np.round(np.percentile(a[:, col], [5, 25, 50, 75, 95]), 3))
    qvs = embed(NO_ANSWER)
    for on in (False, True):
        svc = SearchService(engine.store, data_dir, SearchConfig(vector_floor=on), embedder,
                            query_timeout=600.0)
        tot = vonly = empty = 0
        for q, qv in zip(NO_ANSWER, qvs):
            hits = svc.search(TENANT, "conv0", q, k=10, query_vector=qv)
            tot += len(hits)
            vonly += sum(h.bm25_rank is None for h in hits)
            empty += not hits
        print(f"floor {'on ' if on else 'off'} ({svc.vector_floor}): {len(NO_ANSWER)} "
              f"queries, hits {tot}, vector-only {vonly}, queries with no hit {empty}")
        svc.close()
    engine.close()


if __name__ == "__main__":
    main()
