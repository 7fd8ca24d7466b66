"""Round trips of a chat turn's request path on PostgreSQL do not grow with the
conversation (issue 27, item 4).

A real proxy (``proxy.evaluation.storebench``: the fake upstream, the real SDK) on a
throwaway PostgreSQL: the same turns sent at the end of a 10-turn and of a 200-turn
conversation make the same number of round trips from the request's start to its
answer's commit (capture of the request, the memory path's reads, capture of the
answer: with ``capture.journal`` that commit comes after the client's end, and the
bench waits for it), counted by the store (:mod:`memory_core.store.pg_trips`). The
user messages state nothing to remember, so that the count is the request path's own
(a turn's extracted items add their statements: docs/evaluation/store_backends.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from proxy.evaluation import storebench
from tests import pgcluster
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

PER_JOB = {
    "jobs.CaptureJobs._capture_request_job": 4,
    "engine.Engine.has_history_beyond.<locals>.<lambda>": 1,
    "engine.Engine.splices_for.<locals>.<lambda>": 1,
    "engine.Engine.assemble.<locals>.build": 4,
    "jobs.CaptureJobs._capture_response_job": 3,
}
"""Round trips of each of a turn's own jobs on PostgreSQL (a job alone in its write
batch), besides the summary forest's (``SummaryNodes.on_path``: one, and one more
when the compaction check after the answer runs inside the turn's window)."""


def _session(turns: int) -> Any:
    return SimpleNamespace(
        system="You are a terse assistant.",
        turns=[SimpleNamespace(text=f"what comes after number {n}?", reply=f"it is {n + 1}.",
                               tool=None) for n in range(turns)])


def _per_job(url: str, turns: int, root: Path, monkeypatch: pytest.MonkeyPatch
             ) -> dict[str, int]:
    """Each job's fewest round trips in one of the measured turns (a job that shared
    its write batch with another adds that batch's savepoints: timing, not size)."""
    seen: dict[str, list[int]] = {name: [] for name in PER_JOB}
    per_turn = storebench._per_turn

    def record(request: list[dict[str, tuple[int, int]]], after: Any) -> Any:
        for delta in request:
            for name in PER_JOB:
                if name in delta:
                    seen[name].append(delta[name][1] // delta[name][0])
        return per_turn(request, after)

    monkeypatch.setattr(storebench, "_per_turn", record)
    asyncio.run(storebench._backend(_session(turns), 4, 1, 1, url, root, "hashing",
                                    lambda: None))
    return {name: min(v) for name, v in seen.items() if v}


def test_a_turns_round_trips_do_not_grow_with_the_conversation(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    short = _per_job(pgcluster.fresh_database(pg_url, "rt_short"), 10, tmp_path / "a",
                     monkeypatch)
    long = _per_job(pgcluster.fresh_database(pg_url, "rt_long"), 200, tmp_path / "b",
                    monkeypatch)
    assert short == long == PER_JOB, (short, long)
