"""``lcm-proxy bench store``: SQLite and PostgreSQL in one run, with round trips.

Runs the real command small (a 30-turn conversation, 2 measured turns, 2 clients at
once) on a throwaway PostgreSQL (tests/pgcluster.py); skipped where none can start
(fails under ``CI=true``, as the other PostgreSQL tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation.storebench import stage_of
from tests import pgcluster


def test_jobs_fall_into_the_stages_the_table_shows() -> None:
    assert stage_of("jobs.CaptureJobs._capture_request_job") == "capture"
    assert stage_of("jobs.CaptureJobs._capture_response_job") == "capture"
    assert stage_of("engine.Engine.assemble.<locals>.build") == "memory path reads"
    assert stage_of("engine._log_assembly") == "logs (queued, not waited)"
    assert stage_of("forwarded.insert") == "logs (queued, not waited)"
    assert stage_of("jobs.CaptureJobs._extract_pending") == "background"
    assert stage_of("indexer.Indexer._read_outbox.<locals>.<lambda>") == "background"
    # The compaction check after an answer reads the path: background, not waited.
    assert stage_of("compressor.load_path") == "background"
    assert stage_of("compressor.store_node") == "background"


@pytest.mark.sqlite_only("its first half is the SQLite store, which LCM_TEST_STORE=postgresql"
                        " replaces; the second half is PostgreSQL in either pass")
def test_bench_store_prints_both_backends_with_round_trips(tmp_path: Path) -> None:
    why = pgcluster.unavailable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    out = tmp_path / "store.json"
    result = CliRunner().invoke(main, ["bench", "store", "--turns", "30", "--measure", "2",
                                       "--concurrency", "2", "--per-client", "1",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "| SQLite |" in result.output and "| PostgreSQL (loopback) |" in result.output
    figures = json.loads(out.read_text())
    trips = figures["postgresql"]["round_trips"]
    assert trips["request_path"]["p50"] > 0
    assert trips["stages"]["capture"]["p50"] > 0
    assert "round_trips" not in figures["sqlite"]
    for name in ("sqlite", "postgresql"):
        assert figures[name]["proxy_rps"] > 0 and figures[name]["direct_rps"] > 0
