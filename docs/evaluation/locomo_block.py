"""What the injection block carries on public chit-chat: LoCoMo replayed turn by turn.

    PYTHONPATH=. python docs/evaluation/locomo_block.py --data locomo10.json \
        --conversations 0-4 [--labels docs/evaluation/locomo_block_labels.json] \
        [--sample 100 --sample-out FILE] [--list] [--indexes] [--why] \
        [--search-mode bm25|hybrid] [--curve]

LoCoMo (Maharana et al., ACL 2024; ``locomo10.json``, CC BY-NC 4.0, read from the path
given, never copied here: see the shared data's README). Each conversation is one
tenant; each of its sessions a thread in which every turn is captured as the newest
user message, its ``name`` the speaker, with an assistant "Okay." between turns (the
replay of :mod:`memory_core.evaluation.supersessions`), through a real
:class:`memory_core.engine.Engine` on a fresh SQLite store, words only (no search
index; ``--indexes`` attaches the search indexes and the default embedder, so the
block's matches come from the search the proxy uses, by ``--search-mode``, the
block's ``injection_search_mode``: no query falls back to BM25 for time). Then every QA question
of categories 1-4 with gold evidence is asked in a thread of its own (a user
message without a name) and its block assembled with the default settings; the question's own items are retracted after it, so that one
question does not feed the next.

Per conversation: turns, active items, standing items (``standing_weight > 0``:
:func:`memory_core.assembly.block.standing_weight` over the predicates of
:mod:`memory_core.items.standing`), questions, the block's item lines and o200k
tokens per question, the share of lines that are standing items, and block
precision: the share of item lines the answer needs (a source message of the line's
item is a gold evidence turn) or that are standing items the speaker truly set. The
second half is read from hand labels (``--labels``: ``{key: true|false}``, the key
``"<conversation>:<dia id>:<sha1 of the item text, 10 hex>"``, no LoCoMo text); a
standing line without a label counts as useful at the labelled sample's rate
(``precision``; 100 % when none is labelled), and the share of standing lines
labelled is printed, with the bounds of precision (unlabelled standing lines
counted useless, then useful). ``--sample N``
writes N standing items (seeded, spread over the conversations) with their keys
to ``--sample-out`` for labelling (keep that file outside the repository: it
quotes LoCoMo). ``--why`` follows each question's gold turns (:func:`why_one`): what
became of the best-placed item of a gold turn in the block (:data:`FATES`: shown,
cut by ``max_items`` or ``match_items``, below the match floor, no match, excluded, no item), its rank in
the block's relevance ``rel``, and with ``--indexes`` the gold turn's rank in the
hybrid message search and the gold items' in the BM25 and hybrid item searches; it
also times the block's item choice (``_choose_items``, best of 5) on the item index as
assembly gets it and on the same index without its context postings (the rest of each
item's message: :meth:`memory_core.items.index.IndexView.context_slots`), alternately
in the same run, and prints the medians. ``--curve`` (:func:`curve_one`) prints the
block's match lines by their score against the turn's best match and by absolute
score, with their gold share, its standing lines by kind and label, and the
trade-off of a relative floor (:data:`FLOORS`) and a cap on match lines
(:data:`MATCH_CAPS`, ``match_items``): lines per question, precision, best gold item
shown.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from memory_core.assembly import block
from memory_core.assembly.block import _choose_items, asked_terms, standing_weight, terms
from memory_core.evaluation.locomo import gold_turns, speaker_name
from memory_core.evaluation.supersessions import sessions, span
from memory_core.evaluation.updates import scratch_engine
from memory_core.items import fields
from memory_core.models import Scope

ROLE = "eval"
CATEGORIES = (1, 2, 3, 4)
FATES = ("shown", "collapsed", "omitted (budget)", "past max/match_items",
         "past collapse scan", "below floor", "no match", "in view", "conversation-local",
         "a question", "not a candidate", "no item")
"""What became of a question's best-placed gold item, best first (``--why``)."""
RANKS = (1, 5, 10, 20, 40)
FLOORS = (0.0, 0.2, 0.3, 1 / 3, 0.4, 0.5, 0.6)
"""Relative floors of the ``--curve`` (a match kept at this share of the best's score)."""
MATCH_CAPS = (4, 6, 8, 12, None)
"""Most match lines per block of the ``--curve`` (``None``: as many as ``max_items`` leaves)."""
RATIO_BINS = (0.0, 0.2, 1 / 3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.01)
SCORE_BINS = (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, float("inf"))


def item_key(ci: int, dia: str, text: str) -> str:
    """The label key of an item: conversation, source turn, hash of its text."""
    return f"{ci}:{dia}:{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def _rows(db: Path, tenant: str) -> dict[int, sqlite3.Row]:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute("SELECT * FROM memory_items WHERE tenant = ? AND status = 'active'",
                            (tenant,)).fetchall()
    finally:
        conn.close()
    return {int(r["id"]): r for r in rows}


def replay_one(engine: Any, ci: int, sample: dict[str, Any], why: bool = False,
               curve: bool = False) -> dict[str, Any]:
    """Replay conversation ``ci`` and ask its questions (module doc)."""
    conv = sample["conversation"]
    tenant = f"locomo-{ci}"
    dia_of: dict[int, str] = {}
    said_text: dict[int, str] = {}
    names: frozenset[str] = frozenset()
    turns = 0
    for si, session in enumerate(sessions(conv)):
        scope = Scope(tenant, ROLE, f"c{ci}-s{si}")
        messages: list[dict[str, Any]] = [{"role": "system", "content": "A chat."}]
        for ti, turn in enumerate(session):
            text = turn.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            messages.append({"role": "user", "content": text,
                             "name": speaker_name(str(turn.get("speaker", "")))})
            _, done = engine.capture_request(scope, f"{ci}-{si}-{ti}",
                                             [dict(m) for m in messages], {})
            dia_of[done.result().message_ids[-1]] = str(turn["dia_id"])
            said_text[done.result().message_ids[-1]] = text
            names |= terms(str(messages[-1]["name"]))
            messages.append({"role": "assistant", "content": "Okay."})
            turns += 1
    engine.flush()
    if engine.search is not None:
        engine.search.catch_up()  # the questions search every turn and item
    db = Path(engine.store.location)
    rows = _rows(db, tenant)
    standing_ids = {i for i, r in rows.items() if standing_weight(r) > 0}
    known = set(dia_of.values())
    questions: list[dict[str, Any]] = []
    for qi, qa in enumerate(sample["qa"]):
        if qa.get("category") not in CATEGORIES:
            continue
        gold = gold_turns(qa, known)
        if not gold:
            continue
        scope = Scope(tenant, ROLE, f"c{ci}-q{qi}")
        msgs = [{"role": "system", "content": "A chat."},
                {"role": "user", "content": str(qa["question"])}]
        _, done = engine.capture_request(scope, f"{ci}-q{qi}", msgs, {})
        result = done.result()
        assembly = engine.assemble(scope, result, str(qa["question"]), f"{ci}-q{qi}",
                                   log=False)
        lines = []
        for entry in assembly.log.get("included", []):
            ref = str(entry.get("ref", ""))
            if not ref.startswith("item:"):
                continue
            iid = int(ref[5:])
            row = rows.get(iid)
            srcs = fields.sources(row) if row is not None else []
            lines.append({"id": iid, "standing": str(entry["reason"]).startswith("standing"),
                          "gold": any(dia_of.get(s) in gold for s in srcs)})
        questions.append({"tokens": assembly.used_tokens, "lines": lines})
        if why:
            gold_msgs = {m: said_text[m] for m, d in dia_of.items() if d in gold}
            gold_items = {i for i, r in rows.items()
                          if any(s in gold_msgs for s in fields.sources(r))}
            questions[-1]["why"] = why_one(engine, scope, result, str(qa["question"]),
                                           gold_msgs, gold_items, assembly, names)
        if curve:
            gold_msgs = {m for m, d in dia_of.items() if d in gold}
            gold_items = {i for i, r in rows.items()
                          if any(s in gold_msgs for s in fields.sources(r))}
            questions[-1]["curve"] = curve_one(engine, scope, result, str(qa["question"]),
                                               gold_items)
        engine.flush()
        own = engine.list_items(tenant=tenant, role=ROLE, thread_id=result.thread_id,
                                limit=1000)["items"]
        for it in own:
            if it["status"] == "active":
                engine.retract(int(it["id"]), "eval question")
    items = {i: {"key": item_key(ci, dia_of.get(int(r["source_message_id"] or 0), "?"),
                                 str(r["text"])),
                 "text": str(r["text"]), "kind": r["kind"], "speaker": fields.speaker(r),
                 "weight": standing_weight(r)}
             for i, r in rows.items()}
    return {"conversation": ci, "turns": turns, "active": len(rows),
            "standing": sorted(standing_ids), "items": items, "questions": questions}


def _rank(ids: list[int], wanted: set[int]) -> int | None:
    return next((i + 1 for i, x in enumerate(ids) if x in wanted), None)


def why_one(engine: Any, scope: Scope, result: Any, question: str, gold_msgs: dict[int, str],
            gold_items: set[int], assembly: Any, names: frozenset[str]) -> dict[str, Any]:
    """Where the gold turns (``gold_msgs``: id → text) and their items rank, and what
    became of the best-placed gold item in the block (``--why``; :data:`FATES`). For
    a gold item below the floor or unmatched: whether it, or its message, shares a
    word of the question other than a speaker's name (``names``: their terms)."""
    out: dict[str, Any] = {"gold_items": len(gold_items)}
    cfg = engine.config
    refs = [str(e.get("ref", "")) for e in assembly.log.get("included", [])]
    out["quoted"] = any(r == f"msg:{m}" for r in refs for m in gold_msgs)
    svc = engine.search
    if svc is not None:
        hits = svc.search(scope.tenant, scope.role, question, k=50, kinds=("message",),
                          mode="hybrid", include_hidden=False)
        out["msg_hybrid"] = _rank([h.ref_id for h in hits], gold_msgs)
        hits = svc.keyword_hits(scope.tenant, scope.role, question, k=50, kinds=("item",),
                                include_hidden=False)
        out["item_bm25"] = _rank([h[1] for h in hits], gold_items)
        floor = cfg.semantic_min_similarity * getattr(svc.embedder, "similarity_scale", 1.0)
        hits = svc.search(scope.tenant, scope.role, question, k=50, kinds=("item",),
                          mode="hybrid", include_hidden=False)
        out["item_hybrid"] = _rank([h.ref_id for h in hits if h.bm25_rank is not None
                                    or (h.vector_score or 0.0) >= floor], gold_items)
    if not gold_items:
        out["fate"] = "no item"
        return out
    trace: dict[str, Any] = {}
    hook = engine.searcher if svc is not None else None

    def run(tx: Any) -> Any:
        ix = engine._active_items.view(tx, engine.store.location, scope.tenant, scope.role)
        newest = set(result.new_ids) or {result.head_id}
        bare = dataclasses.replace(ix, context_postings=None, context_arrays=None,
                                   names=frozenset())
        best = {"context": float("inf"), "bare": float("inf")}
        for _ in range(5):
            for name, view in (("context", ix), ("bare", bare)):
                t0 = time.perf_counter()
                _choose_items(view, tx, result, newest, set(result.message_ids),
                              asked_terms(question), question, scope, cfg, hook,
                              engine._indexed_items())
                best[name] = min(best[name], time.perf_counter() - t0)
        out["choose_us"] = (1e6 * best["context"], 1e6 * best["bare"])
        return ix, _choose_items(ix, tx, result, newest, set(result.message_ids),
                                 asked_terms(question), question, scope, cfg, hook,
                                 engine._indexed_items(), trace)

    ix, (chosen, _hidden, _row, similar) = engine.store.read_tx(run)
    shown = {int(r[5:]) for r in refs if r.startswith("item:")}
    chosen_ids = {int(c[0]["id"]) for c in chosen}
    collapsed = {int(o["id"]) for v in similar.values() for o in v}
    rel, mask, floor_v = trace["rel"], trace["items_mask"], trace["floor"]
    matching = set(trace["matching"].tolist())
    cand_rel = rel[mask]
    q_content = asked_terms(question) - names
    msg_shares = any(q_content & terms(t) for t in gold_msgs.values())
    best_fate, best_rank, item_shares = len(FATES), None, False
    for iid in gold_items:
        s = ix.slot(iid)
        rank = None
        if s is None:
            fate = "not a candidate"
        elif not mask[s]:
            fate = ("in view" if trace["hidden_mask"][s] else "a question" if ix.question[s]
                    else "conversation-local" if ix.local[s] else "not a candidate")
        else:
            if rel[s] > 0:
                rank = 1 + int((cand_rel > rel[s]).sum())
            if iid in shown:
                fate = "shown"
            elif iid in chosen_ids:
                fate = "omitted (budget)"
            elif iid in collapsed:
                fate = "collapsed"
            elif rel[s] <= 0:
                fate = "no match"
            elif rel[s] < floor_v:
                fate = "below floor"
            elif s in matching:
                fate = "past max/match_items"
            else:
                fate = "past collapse scan"
        if s is not None and q_content & ix.terms[s]:
            item_shares = True
        if rank is not None and (best_rank is None or rank < best_rank):
            best_rank = rank
        best_fate = min(best_fate, FATES.index(fate))
    out["fate"] = FATES[best_fate]
    out["block_rank"] = best_rank
    if out["fate"] in ("below floor", "no match"):
        out["shares"] = ("item shares a content word" if item_shares else
                         "only its message shares one" if msg_shares else
                         "neither shares one")
    return out


def curve_one(engine: Any, scope: Scope, result: Any, question: str,
              gold_items: set[int]) -> dict[str, Any]:
    """The block's item lines under each relative floor of :data:`FLOORS` and match
    cap of :data:`MATCH_CAPS` (``--curve``): ``{(floor, cap): [line]}``, a line as in
    :func:`replay_one`'s, taken from :func:`_choose_items` with the module's floor
    (and match cap, where the module has one) set for the call; and each line of the
    block as it is, with its score against the turn's best match (``lines``).
    The budget is not applied (on LoCoMo it cuts no item line)."""
    cfg = engine.config
    hook = engine.searcher if engine.search is not None else None
    out: dict[str, Any] = {"variants": {}}
    saved = block._RELEVANCE_FLOOR
    has_cap = hasattr(cfg, "match_items")

    def line(c: Any) -> dict[str, Any]:
        iid = int(c[0]["id"])
        return {"id": iid, "standing": str(c[2]).startswith("standing"),
                "gold": iid in gold_items, "kind": str(c[0]["kind"]),
                "match": str(c[2]).startswith("matches")}

    def run(tx: Any) -> None:
        ix = engine._active_items.view(tx, engine.store.location, scope.tenant, scope.role)
        newest = set(result.new_ids) or {result.head_id}
        def args(c: Any) -> tuple[Any, ...]:
            return (ix, tx, result, newest, set(result.message_ids), asked_terms(question),
                    question, scope, c, hook, engine._indexed_items())
        trace: dict[str, Any] = {}
        chosen = _choose_items(*args(cfg), trace)[0]
        rel, mask = trace["rel"], trace["items_mask"]
        best = float(rel[mask].max()) if mask.any() else 0.0
        out["lines"] = []
        for c in chosen:
            ln = line(c)
            s = ix.slot(ln["id"])
            ln["score"] = float(rel[s]) if s is not None else 0.0
            ln["ratio"] = ln["score"] / best if best > 0 else 0.0
            out["lines"].append(ln)
        try:
            for f in FLOORS:
                block._RELEVANCE_FLOOR = f
                for k in MATCH_CAPS:
                    ck = (dataclasses.replace(cfg, match_items=k or cfg.max_items)
                          if has_cap else cfg)
                    got = [line(c) for c in _choose_items(*args(ck))[0]]
                    keep, matches = [], 0
                    for ln in got:
                        if ln["match"]:
                            matches += 1
                            if k is not None and matches > k:
                                continue
                        keep.append(ln)
                    out["variants"][(f, k)] = keep
        finally:
            block._RELEVANCE_FLOOR = saved

    engine.store.read_tx(run)
    return out


def curve_tables(questions: list[dict[str, Any]], items: dict[int, Any],
                 labels: dict[str, bool], rate: float) -> str:
    """The ``--curve`` tables: the block's match lines by their score against the
    turn's best and by absolute score (with their gold share), its standing lines by
    kind and label, and lines, precision and best gold item shown per floor and cap."""
    qs = [q for q in questions if "curve" in q]
    n = max(1, len(qs))
    out = [f"questions: {len(qs)}"]

    def bins(key: str, edges: tuple[float, ...], title: str) -> None:
        out.append(f"{title:<28} {'lines/q':>8} {'gold':>6} {'gold%':>6}")
        for lo, hi in zip(edges, edges[1:], strict=False):
            got = [ln for q in qs for ln in q["curve"]["lines"]
                   if not ln["standing"] and lo <= ln[key] < hi]
            g = sum(ln["gold"] for ln in got)
            out.append(f"  [{lo:.2f}, {hi:.2f}){'':<14} {len(got) / n:>8.2f} {g:>6}"
                       f" {100 * g / max(1, len(got)):>5.1f}%")

    bins("ratio", RATIO_BINS, "match lines, score / best")
    bins("score", SCORE_BINS, "match lines, absolute score")
    out.append(f"{'standing lines by kind':<28} {'lines/q':>8} {'true':>6} {'false':>6}"
               f" {'unlab.':>6} {'gold':>6}")
    kinds = sorted({ln["kind"] for q in qs for ln in q["curve"]["lines"] if ln["standing"]})
    for kind in kinds:
        got = [ln for q in qs for ln in q["curve"]["lines"]
               if ln["standing"] and ln["kind"] == kind]
        keys = [items.get(ln["id"], {}).get("key", "") for ln in got]
        out.append(f"  {kind:<26} {len(got) / n:>8.2f}"
                   f" {sum(1 for k in keys if labels.get(k) is True):>6}"
                   f" {sum(1 for k in keys if labels.get(k) is False):>6}"
                   f" {sum(1 for k in keys if k not in labels):>6}"
                   f" {sum(ln['gold'] for ln in got):>6}")
    out.append(f"{'floor':>6} {'cap':>5} {'lines/q':>8} {'match/q':>8} {'gold%':>6}"
               f" {'prec%':>6} {'best gold shown%':>17}")
    for f in FLOORS:
        for k in MATCH_CAPS:
            lines = [q["curve"]["variants"][(f, k)] for q in qs]
            flat = [ln for ls in lines for ln in ls]
            useful = 0.0
            for ln in flat:
                key = items.get(ln["id"], {}).get("key", "")
                useful += 1.0 if ln["gold"] else (
                    (float(labels[key]) if key in labels else rate) if ln["standing"] else 0.0)
            shown = sum(1 for ls in lines if any(ln["gold"] for ln in ls))
            out.append(f"{f:>6.2f} {str(k or 'all'):>5} {len(flat) / n:>8.1f}"
                       f" {sum(not ln['standing'] for ln in flat) / n:>8.1f}"
                       f" {100 * sum(ln['gold'] for ln in flat) / max(1, len(flat)):>5.1f}%"
                       f" {100 * useful / max(1, len(flat)):>5.1f}%"
                       f" {100 * shown / n:>16.1f}%")
    return "\n".join(out)


def why_table(questions: list[dict[str, Any]]) -> str:
    """The ``--why`` tables: fates of the best-placed gold item, and ranks."""
    whys = [q["why"] for q in questions if "why" in q]
    n = max(1, len(whys))
    lines = [f"questions: {len(whys)}; with a gold item: "
             f"{sum(1 for w in whys if w['gold_items'])}; gold turn quoted by the block: "
             f"{sum(1 for w in whys if w['quoted'])}",
             f"{'fate of the best-placed gold item':<36} {'questions':>9} {'share':>7}"]
    for f in FATES:
        c = sum(1 for w in whys if w["fate"] == f)
        lines.append(f"{f:<36} {c:>9} {100 * c / n:>6.1f}%")
    for how in ("item shares a content word", "only its message shares one",
                "neither shares one"):
        c = sum(1 for w in whys if w.get("shares") == how)
        lines.append(f"  below floor / no match: {how:<30} {c:>5} {100 * c / n:>6.1f}%")
    costs = [w["choose_us"] for w in whys if "choose_us" in w]
    if costs:
        lines.append("item choice per question, median of best-of-5 (us): with context "
                     f"{statistics.median(c[0] for c in costs):.0f}, without "
                     f"{statistics.median(c[1] for c in costs):.0f}")
    lines.append(f"{'first gold hit within top k':<36} " + " ".join(f"{'@' + str(k):>6}"
                                                                    for k in RANKS))
    for key, label in (("msg_hybrid", "turn, hybrid message search"),
                       ("item_bm25", "item, BM25 item search (block hook)"),
                       ("item_hybrid", "item, hybrid item search"),
                       ("block_rank", "item, block relevance (rel)")):
        if not any(key in w for w in whys):
            continue
        vals = [w.get(key) for w in whys]
        lines.append(f"{label:<36} " + " ".join(
            f"{100 * sum(1 for v in vals if v is not None and v <= k) / n:>5.1f}%"
            for k in RANKS))
    return "\n".join(lines)


def score(res: dict[str, Any], labels: dict[str, bool], rate: float) -> dict[str, Any]:
    """Figures of one replayed conversation (or several merged): see module doc."""
    n_lines = n_standing = n_gold = labelled = unknown = 0
    useful = 0.0
    tokens = 0
    for q in res["questions"]:
        tokens += q["tokens"]
        for ln in q["lines"]:
            n_lines += 1
            key = res["items"].get(ln["id"], {}).get("key", "")
            if ln["gold"]:
                n_gold += 1
            if ln["standing"]:
                n_standing += 1
                if key in labels:
                    labelled += 1
            if ln["gold"]:
                useful += 1
            elif ln["standing"]:
                useful += float(labels[key]) if key in labels else rate
                unknown += key not in labels
    nq = max(1, len(res["questions"]))
    return {"turns": res["turns"], "active": res["active"], "standing": len(res["standing"]),
            "questions": len(res["questions"]), "lines": n_lines / nq, "tokens": tokens / nq,
            "standing_share": n_standing / max(1, n_lines), "gold_share": n_gold / max(1, n_lines),
            "precision": useful / max(1, n_lines),
            "low": (useful - unknown * rate) / max(1, n_lines),
            "high": (useful + unknown * (1 - rate)) / max(1, n_lines),
            "labelled": labelled / max(1, n_standing)}


def main(argv: list[str] | None = None) -> int:
    """CLI: print the table (module doc)."""
    p = argparse.ArgumentParser(prog="docs/evaluation/locomo_block.py")
    p.add_argument("--data", required=True, help="locomo10.json")
    p.add_argument("--conversations", default="0-4")
    p.add_argument("--labels", default=str(Path(__file__).with_name("locomo_block_labels.json")))
    p.add_argument("--sample", type=int, default=0, help="standing items to sample")
    p.add_argument("--sample-out", help="where the sample goes (outside the repository)")
    p.add_argument("--list", action="store_true", help="print every standing item")
    p.add_argument("--indexes", action="store_true",
                   help="attach the search indexes and the default embedder (hybrid search)")
    p.add_argument("--why", action="store_true",
                   help="where gold turns and their items rank, and what drops them")
    p.add_argument("--curve", action="store_true",
                   help="match lines by score, standing lines by kind, and the trade-off"
                        " of a relative floor and a match cap")
    p.add_argument("--search-mode", choices=("bm25", "hybrid"),
                   help="the block's injection_search_mode (default: the config's);"
                        " hybrid needs --indexes")
    args = p.parse_args(argv)
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    chosen = span(args.conversations)
    labels: dict[str, bool] = {}
    if Path(args.labels).is_file():
        labels = {k: bool(v) for k, v in
                  json.loads(Path(args.labels).read_text(encoding="utf-8")).items()}
    results = []
    with scratch_engine("lcm-locomo-block-", index=args.indexes) as engine:
        if args.search_mode:
            engine.config = dataclasses.replace(engine.config,
                                                injection_search_mode=args.search_mode)
        if engine.search is not None:
            # quality apart from latency: no query falls back to BM25 for a slow CPU
            engine.search.query_timeout = 120.0
        for ci in chosen:
            results.append(replay_one(engine, ci, data[ci], why=args.why,
                                      curve=args.curve))
    # sample precision: labelled standing items still standing
    st_keys = [res["items"][i]["key"] for res in results for i in res["standing"]]
    known = [labels[k] for k in st_keys if k in labels]
    rate = sum(known) / len(known) if known else 1.0
    head = (f"{'conv':>5} {'turns':>6} {'active':>7} {'standing':>9} {'qs':>5} "
            f"{'lines/q':>8} {'tok/q':>7} {'stand%':>7} {'gold%':>6} {'prec%':>6} {'lab%':>5}"
            f" {'bounds%':>11}")
    print(head)
    merged: dict[str, Any] = {"turns": 0, "active": 0, "standing": [], "questions": [],
                              "items": {}}
    for res in results:
        s = score(res, labels, rate)
        print(f"{res['conversation']:>5} {s['turns']:>6} {s['active']:>7} {s['standing']:>9}"
              f" {s['questions']:>5} {s['lines']:>8.1f} {s['tokens']:>7.0f}"
              f" {100 * s['standing_share']:>6.1f} {100 * s['gold_share']:>6.1f}"
              f" {100 * s['precision']:>6.1f} {100 * s['labelled']:>5.0f}"
              f" {100 * s['low']:>5.1f}-{100 * s['high']:<5.1f}")
        merged["turns"] += res["turns"]
        merged["active"] += res["active"]
        merged["standing"] += res["standing"]  # item ids: one store
        merged["questions"] += res["questions"]
        merged["items"].update(res["items"])
    s = score(merged, labels, rate)
    print(f"{'all':>5} {s['turns']:>6} {s['active']:>7} {s['standing']:>9}"
          f" {s['questions']:>5} {s['lines']:>8.1f} {s['tokens']:>7.0f}"
          f" {100 * s['standing_share']:>6.1f} {100 * s['gold_share']:>6.1f}"
          f" {100 * s['precision']:>6.1f} {100 * s['labelled']:>5.0f}"
              f" {100 * s['low']:>5.1f}-{100 * s['high']:<5.1f}")
    if args.why:
        print(why_table(merged["questions"]))
    if args.curve:
        print(curve_tables(merged["questions"], merged["items"], labels, rate))
    print(f"standing items labelled: {len(known)} of {len(st_keys)};"
          f" truly standing among them: {100 * rate:.1f} %")
    if args.list:
        for res in results:
            for i in res["standing"]:
                it = res["items"][i]
                print(f"{it['key']}\t{it['kind']}\t{it['speaker']}\t{it['weight']:.1f}\t"
                      f"{it['text']}")
    if args.sample and args.sample_out:
        pool = [res["items"][i] for res in results for i in res["standing"]]
        pick = random.Random(24).sample(pool, min(args.sample, len(pool)))
        Path(args.sample_out).write_text(
            "\n".join(json.dumps({"key": it["key"], "kind": it["kind"],
                                  "speaker": it["speaker"], "text": it["text"]},
                                 ensure_ascii=False) for it in pick) + "\n",
            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
