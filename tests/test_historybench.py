"""``lcm-proxy bench history``: a real proxy, the real SDK and the eval's fake upstream,
at a small depth (the figures themselves are the benchmark's, not asserted here)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation.benchall import summary_rows
from proxy.evaluation.historybench import run_depth_bench_async, run_history_bench_async
from proxy.evaluation.numbersgen import numbers_session


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


async def test_depth_bench_grows_one_conversation_and_measures_a_relay_beside_it(
        tmp_path: Path) -> None:
    out = await run_depth_bench_async([30, 50], 4, workload="numbers", workdir=tmp_path)
    assert [r["turns"] for r in out["depths"]] == [30, 50]
    assert out["failed_open"] == 0 and out["workload"] == "numbers"
    for row in out["depths"]:
        assert row["measured"] == 4
        for series in ("direct_ms", "relay_ms", "proxy_ms"):
            assert 0 < row[series]["p50"] <= row[series]["p95"]
        assert "assemble" in row["stage_mean_ms"]  # the proxy built blocks
    # Two depths give a slope (ms per 1,000 turns), for the proxy and the relay.
    assert isinstance(out["slope_per_1000_turns_ms"]["p50"], float)
    assert isinstance(out["relay_slope_per_1000_turns_ms"]["p95"], float)
    # The conversation grew to the last depth: system + two messages per turn.
    assert out["messages"] == 1 + 2 * 50
    assert out["table"].startswith("| turns | direct p50 | relay p50 |")
    assert "| 50 |" in out["table"] and "slope per 1,000 turns" in out["table"]
    with pytest.raises(ValueError, match="depth"):
        await run_depth_bench_async([5], 4, workdir=tmp_path)
    with pytest.raises(ValueError, match="workload"):
        await run_depth_bench_async([30], 4, workload="nope", workdir=tmp_path)


@pytest.mark.slow
def test_depth_bench_runs_the_proxy_in_its_own_process(tmp_path: Path) -> None:
    """``--proxy-process``: ``lcm-proxy serve`` in a process of its own (pinned to the
    last CPU when there are two); the table gives its CPU per turn (request and
    background until idle) and its RSS, each from ``/proc``."""
    pin = len(os.sched_getaffinity(0)) > 1
    before = os.sched_getaffinity(0)
    result = CliRunner().invoke(main, [
        "bench", "history", "--workload", "numbers", "--depths", "20", "--measure", "3",
        "--proxy-process", *(["--pin"] if pin else []), "--output", str(tmp_path / "p.json")])
    assert result.exit_code == 0, result.output
    assert os.sched_getaffinity(0) == before  # this process's CPUs given back
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["process"] is True and data["pinned"] is pin and data["failed_open"] == 0
    row = data["depths"][0]
    assert row["measured"] == 3 and row["stage_mean_ms"] == {}
    assert 0 < row["turn_cpu_ms"]["p50"] and row["added_cpu_ms"]["p50"] > 0
    assert 50 < row["rss_mib"] < 2000 and 0 < row["anon_mib"] <= row["rss_mib"]
    assert "proxy CPU per turn" in result.output and "in its own process" in result.output
    bad = CliRunner().invoke(main, ["bench", "history", "--workload", "numbers",
                                    "--depths", "20", "--measure", "3", "--pin"])
    assert bad.exit_code != 0 and "--proxy-process" in bad.output


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
async def test_depth_bench_gives_back_its_cpus_when_the_proxy_does_not_start(
        tmp_path: Path) -> None:
    """A proxy process that never answers (here a source tree whose ``proxy`` exits
    at import) fails the bench, and this process gets back the CPUs it gave the
    proxy: a caller that goes on is not left on fewer."""
    tree = tmp_path / "tree"
    (tree / "proxy").mkdir(parents=True)
    (tree / "proxy" / "__init__.py").write_text("raise SystemExit(3)\n")
    before = os.sched_getaffinity(0)
    with pytest.raises(RuntimeError, match="exited with 3"):
        await run_depth_bench_async([20], 3, process=True, pin=True, proxy_tree=tree,
                                    workdir=tmp_path)
    assert os.sched_getaffinity(0) == before


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to drop one")
async def test_depth_bench_pin_counts_the_cpus_this_process_may_use(tmp_path: Path) -> None:
    """``--pin`` on a machine of several CPUs, in a process allowed one (``taskset -c
    0``): refused as a bad value before anything starts, not an ``OSError`` from an
    empty CPU set."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        with pytest.raises(ValueError, match="two CPUs"):
            await run_depth_bench_async([20], 3, process=True, pin=True, workdir=tmp_path)
    finally:
        os.sched_setaffinity(0, before)


def test_numbers_workload_is_seeded_and_full_of_numbers() -> None:
    a, b = numbers_session(1, 20), numbers_session(1, 20)
    assert a == b and a != numbers_session(2, 20)
    for turn in a.turns:
        words = len(turn.text.split())
        assert 35 <= words <= 60 and "Keep in mind the target" in turn.text
        assert sum(ch.isdigit() for ch in turn.text) >= 5
        assert 15 <= len(turn.reply.split()) <= 32 and turn.tool is None
    with pytest.raises(ValueError):
        numbers_session(1, 0)


def test_bench_history_command_runs_the_numbers_workload_at_depths(tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    result = CliRunner().invoke(main, ["bench", "history", "--workload", "numbers",
                                       "--depths", "20,30", "--measure", "3",
                                       "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "| 30 |" in result.output and "relay p50" in result.output
    data = json.loads(out.read_text())
    assert [r["turns"] for r in data["depths"]] == [20, 30]
    bad = CliRunner().invoke(main, ["bench", "history", "--depths", "4", "--measure", "3"])
    assert bad.exit_code != 0 and "--measure" in bad.output


def test_bench_history_sets_the_blocks_search_mode(tmp_path: Path) -> None:
    """``--search-mode hybrid`` runs (the hybrid block fails nothing open) and the
    figures and table say which block search ran; without --depths it is refused."""
    out = tmp_path / "h.json"
    result = CliRunner().invoke(main, ["bench", "history", "--workload", "numbers",
                                       "--depths", "20", "--measure", "3",
                                       "--search-mode", "hybrid", "--output", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["search_mode"] == "hybrid" and data["failed_open"] == 0
    assert "block search hybrid" in result.output
    bad = CliRunner().invoke(main, ["bench", "history", "--search-mode", "hybrid"])
    assert bad.exit_code != 0 and "--search-mode" in bad.output


def _locomo_file(tmp_path: Path, convs: int = 2, sessions: int = 3, pairs: int = 5) -> Path:
    """A small file in LoCoMo's shape (not LoCoMo's text): two speakers per sample,
    numbered sessions with dates, a caption on one turn, one speaker twice in a row."""
    samples = []
    for c in range(convs):
        a, b = f"Ann{c}", f"Bo{c}"
        conv: dict[str, object] = {"speaker_a": a, "speaker_b": b}
        for s in range(1, sessions + 1):
            turns = []
            for p in range(pairs):
                turns.append({"speaker": a, "dia_id": f"D{s}:{2 * p + 1}",
                              "text": f"{a} says {c}.{s}.{p}"})
                if p == 1:
                    turns.append({"speaker": a, "dia_id": f"D{s}:{2 * p + 1}b",
                                  "text": "and one more", "blip_caption": "a red bike"})
                turns.append({"speaker": b, "dia_id": f"D{s}:{2 * p + 2}",
                              "text": f"{b} answers {c}.{s}.{p}"})
            conv[f"session_{s}"] = turns
            conv[f"session_{s}_date_time"] = f"1:56 pm on {s} May, 2023"
        samples.append({"conversation": conv, "qa": []})
    path = tmp_path / "locomo-shaped.json"
    path.write_text(json.dumps(samples))
    return path


def test_locomo_workload_joins_the_conversations_and_names_both_speakers(
        tmp_path: Path) -> None:
    from proxy.evaluation.historybench import _messages_of
    from proxy.evaluation.locomoturns import locomo_session

    path = _locomo_file(tmp_path)
    s = locomo_session(path, 30, seed=1)  # conversation 1 first, then 0
    assert len(s.turns) == 30 and s.turns[0].text == "Ann1 says 1.1.0"
    assert s.turns[15].text == "Ann0 says 0.1.0"
    # one speaker twice in a row: one turn, the caption kept as a text part
    joined = s.turns[1].text
    assert isinstance(joined, list) and [p["text"] for p in joined] == [
        "Ann1 says 1.1.1", "and one more", "[image: a red bike]"]
    assert _messages_of(s.turns[0]) == [
        {"role": "user", "content": "Ann1 says 1.1.0", "name": "Ann1"},
        {"role": "assistant", "content": "Bo1 answers 1.1.0", "name": "Bo1"}]
    with pytest.raises(ValueError, match="30 user turns"):
        locomo_session(path, 31)
    (tmp_path / "bad.json").write_text('{"conversation": {}}')
    with pytest.raises(ValueError, match="not LoCoMo"):
        locomo_session(tmp_path / "bad.json", 1)


def test_bench_history_command_replays_locomo_at_depths(tmp_path: Path) -> None:
    path = _locomo_file(tmp_path)
    out = tmp_path / "l.json"
    result = CliRunner().invoke(main, ["bench", "history", "--workload", "locomo",
                                       "--data", str(path), "--depths", "20,30",
                                       "--measure", "3", "--output", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["workload"] == "locomo" and data["failed_open"] == 0
    assert [r["turns"] for r in data["depths"]] == [20, 30]
    assert data["messages"] == 1 + 2 * 30
    bad = CliRunner().invoke(main, ["bench", "history", "--workload", "locomo",
                                    "--depths", "20", "--measure", "3"])
    assert bad.exit_code != 0 and "--data" in bad.output
