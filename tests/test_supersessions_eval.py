"""The supersessions count (``memory_core.evaluation.supersessions``) on a small
conversation in LoCoMo's shape, written here (the real data is never shipped): each
session replayed turn by turn with its speakers named, every supersession counted by
reason and listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.evaluation.supersessions import main, run


def _data(tmp_path: Path) -> Path:
    conv = {
        "speaker_a": "Mia Chen", "speaker_b": "Ola",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Mia Chen", "dia_id": "D1:1", "text": "I live in Boston."},
            {"speaker": "Ola", "dia_id": "D1:2", "text": "I live in Oslo."},
            {"speaker": "Mia Chen", "dia_id": "D1:3", "text": "Our team uses Slack."},
            {"speaker": "Ola", "dia_id": "D1:4", "text": "The trip was amazing!"},
            {"speaker": "Ola", "dia_id": "D1:5", "text": "The trip budget is 500 euros."},
        ],
        "session_2_date_time": "2:10 pm on 9 June, 2023",
        "session_2": [
            {"speaker": "Mia Chen", "dia_id": "D2:1", "text": "I moved to Denver last month."},
            {"speaker": "Ola", "dia_id": "D2:2", "text": "Nice!"},
            {"speaker": "Mia Chen", "dia_id": "D2:3", "text": "We now also use Teams."},
            {"speaker": "Ola", "dia_id": "D2:4", "text": "The trip was so much fun."},
            {"speaker": "Ola", "dia_id": "D2:5", "text": "The trip budget is 700 euros."},
        ],
    }
    path = tmp_path / "locomo_like.json"
    path.write_text(json.dumps([{"conversation": conv}, {"conversation": conv}]))
    return path


def test_a_move_supersedes_only_its_speaker_s_home(tmp_path: Path) -> None:
    result = run(_data(tmp_path), [0])
    assert result["turns"] == 10 and result["items"] >= 8
    assert [(old, new) for _, old, new in result["superseded"]] == [
        ("I live in Boston.", "I moved to Denver last month.")]


def test_two_values_are_a_conflict_two_impressions_are_not(tmp_path: Path) -> None:
    assert run(_data(tmp_path), [0])["conflicts"] == [
        ("The trip budget is 700 euros.", "The trip budget is 500 euros.")]


def test_the_cli_counts_by_reason_and_lists_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(_data(tmp_path)), "--conversations", "0-1", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "turns 20, items 18, supersessions 2", out
    assert out[1].split() == ["2", "correction"]
    assert out[2] == "conflicts 2"
    assert out[3:] == (
        ["correction | I live in Boston. => I moved to Denver last month."] * 2
        + ["conflict | The trip budget is 500 euros. <> The trip budget is 700 euros."] * 2)
