"""``lcm-proxy bench history``: a real proxy, the real SDK and the eval's fake upstream,
at a small depth (the figures themselves are the benchmark's, not asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation.benchall import summary_rows
from proxy.evaluation.historybench import run_history_bench_async


async def test_history_bench_measures_the_last_turns_against_direct_calls(
        tmp_path: Path) -> None:
    out = await run_history_bench_async(150, 6, embedding="hashing", workdir=tmp_path)
    # A tool turn sends two requests (the call, then its result): at least one a turn.
    assert out["requests"] >= 6 and out["measured_turns"] == 6 and out["turns"] == 150
    assert out["failed_open"] == 0
    for series in ("direct_ms", "proxy_ms"):
        s = out[series]
        assert 0 < s["p50"] <= s["p95"] and s["mean"] > 0
    assert out["added_ms"]["p50"] == pytest.approx(
        out["proxy_ms"]["p50"] - out["direct_ms"]["p50"], abs=0.02)
    # The preloaded history was compacted: the upstream's prompt is smaller than the
    # history the client sends.
    assert 0 < out["upstream_prompt_kb"] < out["client_kb"]
    assert out["table"].startswith("| last 6 of 150 turns | mean ms | p50 ms | p95 ms |")
    assert (tmp_path / "bench-150en").is_dir()  # the proxy's data directory was used
    rows = summary_rows({}, {}, {}, out)
    assert ("history", "150", "added chat p95", out["added_ms"]["p95"], "ms") in rows


async def test_history_bench_refuses_sizes_out_of_range(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="measure"):
        await run_history_bench_async(40, 40, workdir=tmp_path)
    with pytest.raises(ValueError, match="n_turns"):
        await run_history_bench_async(10, 2, workdir=tmp_path)


def test_bench_history_command_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "h.json"
    result = CliRunner().invoke(main, ["bench", "history", "--turns", "30", "--measure", "3",
                                       "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "| last 3 of 30 turns |" in result.output and "through lcm-proxy" in result.output
    data = json.loads(out.read_text())
    assert data["measured_turns"] == 3 and data["embedding"] == "hashing"
    bad = CliRunner().invoke(main, ["bench", "history", "--turns", "30", "--measure", "30"])
    assert bad.exit_code != 0 and "--measure" in bad.output
