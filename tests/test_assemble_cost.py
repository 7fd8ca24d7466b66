"""The block's hot spots keep their results: terms by bytes, collapse by bit masks,
the scaffold's view, the ``/memory`` scan, and message terms computed at indexing
(issue 28; docs/evaluation/README.md, "The memory-path job at 1,000 turns")."""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from memory_core.assembly import block as asm
from memory_core.capture.tree import message_text
from memory_core.compaction.compressor import ACKNOWLEDGEMENT, INSTRUCTION_ROLES, SummaryNode
from memory_core.items import standing
from memory_core.items.index import ItemIndex
from memory_core.models import Scope
from proxy import chatcommands, rewrite
from proxy.flow import plan
from tests.test_search_support import capture_chat, running_service


def _reference_terms(text: str) -> set[str]:
    """:func:`asm.terms` as it was written before the byte split (the regex loop)."""
    out: set[str] = set()
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    for w in asm._WORD.findall(text.lower()):
        w = w.strip(".-+")
        if not w or w in asm._EN_STOP or (len(w) < 3 and not w.isdigit()):
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    for run in asm._CJK_RUN.findall(text):
        if len(run) == 1:
            out.add(run)
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["Status of the cache layer on ap-south: we run version 1.23.96 on 60 nodes, "
             "the pool size is 208. Keep in mind: p95 latency under 511 ms.",
             "", "   ", "the and of", "_a_ -5- .x +y+ a--b c++ v2.0- 1.2.3. __init__",
             "classes glass bus buses ss sss", "Straße ſtraße \u212a K İı é e\u0301",
             "東京タワーに行きました 我们决定 A 한국어", "\u212a"]
    alphabets = ("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789.-+_ \t\n,;:!?'\"()[]/\\sS",
                 "abcdefgxyz0123456789.-+_ sSſK東京éİı\u212a\u0301")
    out = list(fixed)
    for i in range(n):
        alph = alphabets[i % 2]
        out.append("".join(rng.choice(alph) for _ in range(rng.randint(0, 60))))
    return out


def test_terms_match_the_regex_loop_also_across_memo_drops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(1, 4000)
    for text in texts:
        got, want = asm.terms(text), _reference_terms(text)
        # Equal, and iterated in the same order: keyword scores sum floats in it.
        assert got == want and list(got) == list(want), text
    # A small memo is dropped whole many times on the way: same terms.
    monkeypatch.setattr(asm, "_WORD_TERMS_MAX", 50)
    asm._WORD_TERMS.clear()
    for text in texts:
        assert asm.terms(text) == _reference_terms(text), text
    assert len(asm._WORD_TERMS) <= 50 + max(len(t) for t in texts)


def _reference_collapse(cands: list[tuple[Any, float, str]], limit: int
                        ) -> tuple[list[int], dict[int, list[int]]]:
    """The pairwise Jaccard scan on skeleton sets (before the bit masks)."""
    kept: list[int] = []
    reps: dict[tuple[Any, ...], list[tuple[frozenset[str], int]]] = {}
    similar: dict[int, list[int]] = {}
    for r, _, _ in cands[:asm._COLLAPSE_SCAN]:
        key = (r["kind"], standing.speaker(r), r["condition"] or "")
        sk = asm.skeleton(r["text"] or "")
        same = reps.setdefault(key, [])
        for rsk, rid in same:
            if sk and rsk and len(sk & rsk) >= asm._NEAR_DUPLICATE * len(sk | rsk):
                similar[rid].append(r["id"])
                break
        else:
            if len(kept) < limit:
                kept.append(r["id"])
                same.append((sk, r["id"]))
                similar[r["id"]] = []
    return kept, similar


def _rows(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    words = "latency run service cache pool batch window timeout quota disk node build".split()
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 7)))
        text += f" {rng.randint(1, 999)} ms" if rng.random() < 0.7 else ""
        rows.append({"id": i + 1, "kind": rng.choice(("fact", "decision")),
                     "condition": rng.choice((None, "", "on canary")),
                     "data": json.dumps({"speaker": rng.choice(("", "Ann"))}),
                     "text": text if rng.random() < 0.95 else None})
    return rows


def test_collapse_matches_the_pairwise_scan_across_vocabulary_generations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(2, 600)
    rng = random.Random(3)
    calls = []
    for _ in range(40):
        cands = [(r, 0.0, "") for r in rng.sample(rows, rng.randint(0, 450))]
        calls.append((cands, rng.randint(0, 25)))
    for small in (False, True):
        if small:  # a new vocabulary (and row memo) almost every call
            monkeypatch.setattr(asm, "_SK_VOCAB_MAX", 3)
        generations: list[Any] = []  # held: no id is reused
        for cands, limit in calls:
            kept, similar = asm._collapse(cands, limit)
            generations.append(asm._SK_VOCAB[0])
            want_kept, want_similar = _reference_collapse(cands, limit)
            assert [c[0]["id"] for c in kept] == want_kept
            assert {k: [r["id"] for r in v] for k, v in similar.items()} == want_similar
        assert (len({id(g) for g in generations}) > 10) == small


def _reference_fold(order: list[int], rows: list[dict[str, Any]], limit: int
                    ) -> tuple[list[int], dict[int, list[int]]]:
    """:func:`asm._fold_rivals` as it was written before the array scan (a Python
    step a row, each row's key looked up); folded rows as ids."""
    groups: list[list[int]] = []
    group_of: dict[int, int] = {}
    lines = 0
    for s in order[: limit + asm._COLLAPSE_SCAN]:
        if lines >= limit:
            break
        fold = asm.fold_key(rows[s])
        g = group_of.get(fold) if fold >= 0 else None
        if g is not None:
            groups[g].append(s)
            size = len(groups[g])
            lines += 1 if size < asm._FOLD_MIN else (2 - size if size == asm._FOLD_MIN else 0)
        else:
            if fold >= 0:
                group_of[fold] = len(groups)
            groups.append([s])
            lines += 1
    kept: list[int] = []
    folded: dict[int, list[int]] = {}
    for members in groups:
        if len(members) < asm._FOLD_MIN:
            kept.extend(members)
            folded.update((int(rows[m]["id"]), []) for m in members)
            continue
        line = max(members, key=lambda m: (rows[m]["source_message_id"] or 0, rows[m]["id"]))
        kept.append(line)
        folded[int(rows[line]["id"])] = [rows[m]["id"] for m in members if m != line]
    return kept[:limit], folded


def test_fold_by_arrays_keeps_and_folds_what_the_row_scan_did() -> None:
    """The standing fold reading the item index's arrays (each row's fold key kept when
    the item entered the index, its source and id) keeps, folds and orders what the
    loop over the rows did, from the rows alone too: floods of one statement, pairs
    of rivals, rows without words, rows without a source, every limit (0 included),
    scans cut by the limit or by the scan's length. The folded rows' slots come back
    for the matches to leave out."""
    rng = random.Random(7)
    statements = ["Synced {} files to the backup bucket", "Keep service p95 under {} ms",
                  "The API timeout is {} s", "{}", "", "Deploy window is {} pm on canary"]
    rows = []
    for i in range(900):
        v = rng.randint(1, 60)
        rows.append({"id": i + 1, "kind": rng.choice(("fact", "constraint")),
                     "text": rng.choice(statements).format(v), "value": float(v),
                     "subject": rng.choice(("sync", "service", None)),
                     "condition": rng.choice((None, "on canary")),
                     "data": json.dumps({"speaker": rng.choice(("", "Ann"))}),
                     "source_message_id": rng.choice((None, rng.randint(1, 400))),
                     "conflict_with": None, "supersedes": None, "evidence": "user",
                     "thread_id": 1, "status": "active"})
    view = ItemIndex(asm.item_features, len(rows), rows, fold_key=asm.fold_key).view()
    plain = ItemIndex(asm.item_features, len(rows), rows).view()  # no keys: read as rows
    assert view.has_fold_keys and not plain.has_fold_keys
    standing = [s for s in range(len(rows)) if view.weight[s] > 0]  # what is folded
    assert len(standing) > 300
    floods = 0
    for _ in range(300):
        order = rng.sample(standing, rng.randint(0, len(standing)))
        limit = rng.choice((0, 1, 2, 3, 5, 20, 40, 500))
        want_kept, want_folded = _reference_fold(order, rows, limit)
        for ix in (None, view, plain):
            slots: list[int] = []
            kept, folded = asm._fold_rivals(order, rows, limit, folded_slots=slots, ix=ix)
            assert kept == want_kept
            assert {k: [r["id"] for r in v] for k, v in folded.items()} == want_folded
            assert list(folded) == list(want_folded)  # the lines' order
            assert sorted(rows[s]["id"] for s in slots) == sorted(
                i for v in want_folded.values() for i in v)
        floods += any(len(v) >= 2 for v in want_folded.values())
    assert floods > 30


def test_apply_forest_keeps_places_instructions_and_the_tail() -> None:
    rng = random.Random(4)
    for _ in range(300):
        n = rng.randint(0, 30)
        messages: list[Any] = [{"role": rng.choice(("user", "assistant", "system", "developer",
                                                     "tool")), "content": f"m{i}"}
                               for i in range(n)]
        if messages and rng.random() < 0.2:
            messages[rng.randrange(n)] = "not a dict"
        ids = list(range(100, 100 + n + rng.randint(-3, 3)))
        covered = sorted(rng.sample(range(95, 140), rng.randint(1, 12)))
        roots = [SummaryNode(id=1, level=0, message_ids=covered, text="summary", tokens=1,
                             source_tokens=9, model="extractive")]
        got = rewrite.apply_forest(messages, ids, roots, tools_enabled=False)
        assert got is not messages
        # What stays of the client's messages, in order: the ones no summary covers,
        # covered instructions, and the tail past the known ids.
        cov = set(covered)
        pairs = list(zip(messages, ids, strict=False))
        kept = [m for m, mid in pairs if mid not in cov
                or (isinstance(m, dict) and m.get("role") in INSTRUCTION_ROLES)]
        kept += messages[len(ids):]
        assert [m for m in got if any(m is x for x in messages)] == kept
        # Added: one scaffold turn and its acknowledgement, where the first covered
        # message was; nothing when the summaries cover none of them.
        added = [k for k, m in enumerate(got) if not any(m is x for x in messages)]
        first = next((k for k, (_m, mid) in enumerate(pairs) if mid in cov), None)
        if first is None:
            assert added == []
            continue
        at = sum(1 for m, mid in pairs[:first] if mid not in cov)
        assert got[at]["role"] == "user" and "summary" in got[at]["content"]
        if added == [at]:  # no acknowledgement before the model's own turn
            assert isinstance(got[at + 1], dict) and got[at + 1]["role"] == "assistant"
            continue
        assert added == [at, at + 1]
        assert got[at + 1] == {"role": "assistant", "content": ACKNOWLEDGEMENT}
        nxt = got[at + 2] if at + 2 < len(got) else None
        assert not (isinstance(nxt, dict) and nxt.get("role") == "assistant")


def test_command_scan_finds_commands_after_whitespace_and_in_parts() -> None:
    messages: list[Any] = [
        {"role": "user", "content": "  /memory list"},
        {"role": "assistant", "content": "reply 1"},
        {"role": "user", "content": "talk about /memory here"},
        {"role": "assistant", "content": "reply 2"},
        {"role": "user", "content": [{"type": "text", "text": "\n/memory forget x"}]},
        {"role": "assistant", "content": "reply 3"},
        {"role": "user", "content": "/memoryless is text"},
        {"role": "assistant", "content": "reply 4"},
        {"role": "user", "content": "/memory"},
        {"role": "assistant", "content": "reply 5"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "now"},
    ]
    want = set()
    for i, m in enumerate(messages[:-1]):
        if m["role"] == "user" and chatcommands.is_command(message_text(m)):
            want |= {i, i + 1}
    assert plan._command_exchanges(messages, json.dumps(messages).encode()) == want \
        == {0, 1, 4, 5, 8, 9}


def test_the_indexer_computes_the_terms_of_new_messages_ahead(tmp_path: Path) -> None:
    scope = Scope(tenant="tenantA", role="default")
    with running_service(tmp_path) as (engine, svc):
        ids = capture_chat(engine, scope, ["the ingest worker runs 12 nodes on canary",
                                           "noted: twelve nodes for the ingest worker"])
        assert svc.wait_idle(20)
        where = engine.store.location
        rows = engine.store.read_tx(lambda tx: tx.assembly.quote_messages(
            ids, scope.tenant, scope.role))
        assert rows
        for r in rows:
            held = asm._TERMS_CACHE.get((where, "msg", r["id"]))
            assert held == frozenset(asm.terms(r["text"])), r
    assert asm.warm_message_terms("elsewhere", [(1, "tool", "x y z"), (2, "user", "a" * 9000),
                                                (3, "user", "cache layer")]) == 1
    assert asm._TERMS_CACHE[("elsewhere", "msg", 3)] == frozenset({"cache", "layer"})


def _reference_apply_forest(messages: list[Any], ids: list[int],
                            roots: list[SummaryNode]) -> list[Any]:
    """:func:`rewrite.apply_forest` as it was written before the run search (one
    set test per message), with the scaffold as a marker."""
    covered = {i for node in roots for i in node.message_ids}
    out: list[Any] = []
    placed = False
    for msg, mid in zip(messages, ids, strict=False):
        if mid in covered:
            if not placed:
                out += ["SCAFFOLD", {"role": "assistant", "content": ACKNOWLEDGEMENT}]
                placed = True
            if not (isinstance(msg, dict) and msg.get("role") in INSTRUCTION_ROLES):
                continue
        out.append(msg)
    out.extend(messages[len(ids):])
    if placed:  # no acknowledgement before an assistant message (a compacted tool loop)
        at = out.index("SCAFFOLD") + 1
        if at + 1 < len(out) and isinstance(out[at + 1], dict) and out[at + 1].get(
                "role") == "assistant":
            del out[at]
    return out


def _reference_forest(nodes: list[SummaryNode]) -> list[int]:
    """:func:`compressor.forest` as it was written before the range test."""
    chosen: list[SummaryNode] = []
    covered: set[int] = set()
    for node in sorted(nodes, key=lambda n: (-n.level, n.first)):
        ids = set(node.message_ids)
        if ids & covered:
            continue
        chosen.append(node)
        covered |= ids
    return [n.id for n in sorted(chosen, key=lambda n: n.first)]


def _path_forest(rng: random.Random) -> tuple[list[Any], list[int], list[SummaryNode]]:
    """A request as a long history sends it: ascending ids with gaps (other
    threads' messages), now and then a spliced reply (its id repeated), an
    instruction or a non-object inside a covered run; and the nodes of that path,
    runs of it at two levels, some of them overlapping (a level-1 node over its
    children), some not on this path."""
    n = rng.randint(1, 60)
    ids: list[int] = []
    nid = rng.randint(1, 5)
    for _ in range(n):
        ids.append(nid)
        if rng.random() < 0.05:
            ids.append(nid)  # a spliced reply: its id again
        nid += rng.randint(1, 3)
    if rng.random() < 0.1:
        rng.shuffle(ids)  # not a path: the general way
    roles = ("user", "assistant", "tool", "system", "developer")
    messages: list[Any] = [
        {"role": rng.choices(roles, (5, 5, 2, 1, 1))[0], "content": f"m{k}"}
        for k in range(len(ids) + rng.randint(-2, 2))]
    if messages and rng.random() < 0.1:
        messages[rng.randrange(len(messages))] = "not a dict"
    distinct = sorted(set(ids))
    nodes: list[SummaryNode] = []
    for node_id in range(1, rng.randint(1, 6) + 1):
        a = rng.randrange(len(distinct))
        b = min(len(distinct), a + rng.randint(1, 12))
        run = distinct[a:b]
        if rng.random() < 0.1:
            run = run + [max(distinct) + 50]  # an id this path does not hold
        nodes.append(SummaryNode(node_id, rng.randint(0, 1), run, f"s{node_id}", 5, 50,
                                 "extractive"))
    return messages, ids, nodes


def test_forest_and_its_view_are_those_of_the_set_tests() -> None:
    from memory_core.compaction import compressor

    rng = random.Random(28)
    for _ in range(3000):
        messages, ids, nodes = _path_forest(rng)
        roots = compressor.forest(nodes)
        assert [n.id for n in roots] == _reference_forest(nodes)
        got = rewrite.apply_forest(messages, ids, roots, tools_enabled=False)
        want = _reference_apply_forest(messages, ids, roots)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            if w == "SCAFFOLD":
                assert g["role"] == "user" and g["content"].count("s") >= len(roots)
            else:
                assert g is w or g == w  # the client's own objects, in order
        assert sum(1 for g in got if any(g is m for m in messages)) == sum(
            1 for w in want if any(w is m for m in messages))


def test_scaffold_memo_gives_what_a_fresh_render_gives() -> None:
    from memory_core.compaction import compressor

    rng = random.Random(5)
    for _ in range(300):
        _messages, _ids, nodes = _path_forest(rng)
        roots = compressor.forest(nodes)
        superseded = [compressor.Superseded(rng.choice(_ids), "The window is 5 ms", "5", "ms")
                      ] if rng.random() < 0.5 else []
        for budget in (None, 40, 400):
            for tools in (False, True):
                kw: dict[str, Any] = {"tools_enabled": tools, "superseded": superseded,
                                      "budget_tokens": budget, "short_tools": not tools}
                fresh = compressor._scaffold_text(roots, **kw)
                assert compressor.scaffold_text(roots, **kw) == fresh
                assert compressor.scaffold_text(roots, **kw) == fresh  # from the memo
    # A node's text is part of the key: a changed text renders anew.
    node = compressor.SummaryNode(1, 0, [1, 2], "first text", 5, 50, "extractive")
    assert "first text" in compressor.scaffold_text([node], tools_enabled=False)
    node = compressor.SummaryNode(1, 0, [1, 2], "second text", 5, 50, "extractive")
    assert "second text" in compressor.scaffold_text([node], tools_enabled=False)
