"""``lcm-proxy bench context`` at a tiny size: the table, and no request over budget."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation.contextbench import run_context_bench


def test_context_bench_tiny_run_fits_every_request() -> None:
    result = run_context_bench((30,), ("4k", "32k"), ("chatter", "agent"))
    rows = result["rows"]
    assert {(r["kind"], r["window"]) for r in rows} == {
        ("chatter", "4k"), ("chatter", "32k"), ("agent", "4k"), ("agent", "32k")}
    for row in rows:
        assert row["requests"] == 30
        assert row["over_budget"] == 0
        assert row["unfittable"] == 0
        assert row["largest"] <= row["budget"]
        assert row["curve"] and row["curve"][-1]["turns"] == 30
    small = next(r for r in rows if r["kind"] == "chatter" and r["window"] == "4k")
    assert small["inline"] >= 1  # 30 chatter turns do not fit 4k uncompacted
    assert "over budget" in result["table"] and "forest tokens" in result["table"]


def test_context_bench_cli_refuses_unknown_kind() -> None:
    out = CliRunner().invoke(main, ["bench", "context", "--kinds", "poems"])
    assert out.exit_code != 0
    assert "unknown history kind" in out.output


def test_context_bench_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match="unknown budget"):
        run_context_bench((5,), ("3k",))


def test_context_bench_cli_writes_the_forest_chart(tmp_path: Path) -> None:
    png, js = tmp_path / "forest.png", tmp_path / "rows.json"
    out = CliRunner().invoke(main, ["bench", "context", "--turns", "40", "--windows", "4k",
                                    "--kinds", "pastes", "--png", str(png), "--output", str(js)])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = orjson.loads(js.read_bytes())
    turns = [p["turns"] for p in rows[0]["curve"]]
    assert len(turns) > 5 and 10 in turns and turns[-1] == 40  # log-spaced points too
    assert sum(p["table"] for p in rows[0]["curve"]) == 5
    assert rows[0]["unfittable"] == 0  # the head paste is summarised once needed


def test_sample_points_are_log_spaced() -> None:
    from proxy.evaluation.contextbench import sample_points

    table, points = sample_points(5000)
    assert table == {1000, 2000, 3000, 4000, 5000}
    assert {10, 5000} <= points and len(points) >= 15
    assert sample_points(8) == ({2, 3, 5, 6, 8}, {2, 3, 5, 6, 8})
