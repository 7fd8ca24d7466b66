"""The tests' throwaway PostgreSQL cluster (tests/pgcluster.py) starts even when the
port it picked is taken before the server binds it, as another pytest-xdist worker
can take it: it tries another port.

Outside CI a machine without PostgreSQL or psycopg skips (and says why); under
``CI=true`` it fails instead.
"""

from __future__ import annotations

import os
import socket

import pytest

from tests import pgcluster


def test_a_cluster_whose_port_was_taken_meanwhile_starts_on_another(
        monkeypatch: pytest.MonkeyPatch) -> None:
    why = pgcluster.unavailable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tests cannot run in CI: {why}")
        pytest.skip(why)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        real_free_port = pgcluster._free_port
        picks = iter([busy])
        monkeypatch.setattr(pgcluster, "_free_port", lambda: next(picks, None) or real_free_port())
        with pgcluster.cluster() as url:
            import psycopg

            with psycopg.connect(url) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
            assert int(url.split("@127.0.0.1:")[1].split("/")[0]) != busy
