"""``eval locomo --context-window``: gold evidence that reaches a small upstream.

A conversation written here in LoCoMo's format checks the measurement (an early
turn reaches a 4k-window upstream through the block, plain truncation loses it);
the real LoCoMo file (CC BY-NC 4.0, kept outside the repository in
``../shared/data/locomo``; skipped when absent) checks one conversation end to end.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation.locomo_context import replay_conversation, run_locomo_context

LOCOMO = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"

_FILLER = ("we talked about the weather and the garden and the new bakery on the corner and "
           "how busy the week was with work and errands and the long drive back home").split()


def _sample(turns: int = 160) -> dict[str, Any]:
    rng = random.Random(7)
    session: list[dict[str, Any]] = []
    for i in range(1, turns + 1):
        speaker = "Ana" if i % 2 else "Ben"
        text = " ".join(rng.choice(_FILLER) for _ in range(rng.randint(15, 30))) + "."
        if i == 3:
            text = "My sister Ingrid moved to Tromsø in March 2019 to study glaciology."
        session.append({"speaker": speaker, "dia_id": f"D1:{i}", "text": text})
    return {"conversation": {"speaker_a": "Ana", "speaker_b": "Ben", "session_1": session,
                             "session_1_date_time": "1:56 pm on 8 May, 2023"},
            "qa": [{"question": "Where did Ingrid move to study glaciology?",
                    "answer": "Tromsø", "evidence": ["D1:3"], "category": 4},
                   {"question": "What did they talk about?", "evidence": ["D9:99"],
                    "category": 3}]}


def test_an_early_evidence_turn_reaches_a_small_window_through_the_block() -> None:
    out = replay_conversation(0, _sample(), 4096)
    assert out["requests"] == 80 and out["questions"] == 1  # no resolvable evidence: skipped
    assert out["over_budget"] == 0 and out["unfittable"] == 0
    assert max(out["tokens"]) <= out["budget"]
    assert out["gold"] == 1
    assert out["reached"] == 1 and out["where"]["block"] == 1
    assert out["truncation"] == 0  # 160 turns do not fit: truncation lost the early turn


def test_cli_context_window_writes_the_figures(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_sample(60)]), encoding="utf-8")
    out_file = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["eval", "locomo", "--data", str(data),
                                       "--context-window", "4096", "--conversations", "0",
                                       "--output", str(out_file)])
    assert result.exit_code == 0, result.output
    assert "reach proxy" in result.output
    figures = json.loads(out_file.read_text(encoding="utf-8"))
    assert figures["splits"]["dev 0-4"]["gold"] == 1
    bad = CliRunner().invoke(main, ["eval", "locomo", "--data", str(data),
                                    "--context-window", "4096", "--conversations", "3"])
    assert bad.exit_code != 0 and "not in the file" in bad.output


def test_locomo_conversation_replays_within_its_budget() -> None:
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data not found at {LOCOMO} (evaluation data, kept outside the"
                    " repository; see shared/data/locomo/README.md)")
    result = run_locomo_context(LOCOMO, 4096, (1,))
    row = result["rows"][0]
    assert row["requests"] > 100 and row["questions"] > 50
    assert row["over_budget"] == 0 and row["unfittable"] == 0
    assert max(row["tokens"]) <= row["budget"]
    assert sum(row["where"].values()) == row["reached"] <= row["gold"]
    assert 0 < row["reached"] and 0 < row["truncation"]
