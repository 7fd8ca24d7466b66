"""LoCoMo eval plumbing on a tiny synthetic file (hashing embedder; the real data is not
shipped with the repository)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_core.evaluation.locomo import (
    EVIDENCE_ID,
    Score,
    _group_names,
    gold_turns,
    run_locomo,
)
from memory_core.search import HashingEmbedder
from tests.conftest import sql_read

SAMPLE = [{
    "sample_id": "x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat named Miso."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I started pottery classes."},
        ],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "Miso knocked over my plant.",
             "blip_caption": "a photo of a cat next to a broken pot"},
            {"speaker": "Bob", "dia_id": "D2:2", "text": "My pottery vase won a prize."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ann's cat?", "answer": "Miso",
         "evidence": ["D1:1"], "category": 4},
        {"question": "What did Bob make in pottery?", "answer": "a vase",
         "evidence": ["D:2:2", "D1:2"], "category": 1},
        {"question": "What did Ann's cat break?", "evidence": ["D9:9"], "category": 5,
         "adversarial_answer": "a plant"},
    ],
}]


def test_evidence_ids_tolerate_malformed_forms() -> None:
    known = {"D1:2", "D2:2"}
    assert gold_turns({"evidence": ["D:2:2", "D1:2", "D9:9"]}, known) == {"D1:2", "D2:2"}
    assert EVIDENCE_ID.findall("D10:3; D:4:5") == [("10", "3"), ("4", "5")]


def test_each_question_counts_once_per_group() -> None:
    assert _group_names(5) == ["cat5", "all"]
    assert _group_names(1) == ["cat1", "all", "cat1-4"]


def test_score_metrics() -> None:
    s = Score()
    s.add(["a", "b", "c"], {"b", "z"}, [1, 2])
    row = s.row([1, 2])
    assert row["recall@1"] == 0.0 and row["recall@2"] == 0.5 and row["all@2"] == 0.0
    assert row["hit@1"] == 0.0 and row["mrr"] == 0.5


def test_run_locomo_on_a_tiny_conversation(tmp_path: Path) -> None:
    data = tmp_path / "mini.json"
    data.write_text(json.dumps(SAMPLE))
    out = run_locomo(data, tmp_path / "dd", HashingEmbedder(64), ks=(1, 4))
    res = out["results"]
    assert out["skipped_no_evidence"] == 1  # D9:9 resolves to no turn
    assert res["bm25"]["cat4"]["hit@1"] == 1.0
    assert res["hybrid"]["cat1-4"]["n"] == 2 and res["hybrid"]["cat1-4"]["recall@4"] == 1.0
    assert "cat1-4" in out["table"] and "hybrid" in out["table"]
    # the stored evidence is what was said: speaker in `name`, caption as a separate part
    from memory_core.engine import Engine

    engine = Engine(tmp_path / "dd")
    raw = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT raw_json FROM messages ORDER BY id")])
    engine.close()
    first = json.loads(raw[0])
    assert first == {"role": "user", "name": "Ann", "content": "I adopted a grey cat named Miso."}
    # a second run reuses the store: nothing new is captured
    again = run_locomo(data, tmp_path / "dd", HashingEmbedder(64), ks=(1, 4))
    assert again["results"] == res


def test_a_split_embeds_only_its_own_questions(tmp_path: Path) -> None:
    """--conversations 1 embeds conversation 1's questions, not every question of the
    file (on the real file: 199 of 1,986 for one conversation)."""
    import numpy as np

    class Counting(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__(64)
            self.texts: list[str] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.texts.extend(texts)
            return super().embed(texts)

    other = json.loads(json.dumps(SAMPLE[0]))
    other["qa"] = [{"question": "Which city did Ann move to?", "answer": "Lyon",
                    "evidence": ["D1:1"], "category": 4}]
    data = tmp_path / "two.json"
    data.write_text(json.dumps([SAMPLE[0], other]))
    counting = Counting()
    out = run_locomo(data, tmp_path / "dd", counting, ks=(1, 4), conversations=[1])
    assert out["questions"] == 1
    assert "Which city did Ann move to?" in counting.texts
    assert not any("cat" in t for t in counting.texts if t.endswith("?"))
