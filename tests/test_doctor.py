"""``lcm-proxy doctor``: schema, counts, integrity, index lag, config in force, warnings;
exit 1 for a damaged database; never creates a database that is not there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
from click.testing import CliRunner

from memory_core.store.migrations import SCHEMA_VERSION
from proxy.cli import main
from tests.conftest import RunningProxy
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    populate,
    steady_proxy_fixture,
)


async def test_doctor_reports_a_populated_store(proxy: RunningProxy, tmp_path: Path) -> None:
    await populate(proxy)
    data_dir = proxy.settings.storage.data_dir
    config = tmp_path / "lcm.toml"
    config.write_text('[proxy]\nhost = "0.0.0.0"\nupstream_api_key = "sk-secret-upstream"\n'
                      '[nonsense]\nx = 1\n')
    result = CliRunner().invoke(main, ["doctor", "--data-dir", data_dir, "--config",
                                       str(config)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"schema version:  {SCHEMA_VERSION} (code {SCHEMA_VERSION})" in out
    assert "integrity:       ok" in out
    assert "index_text:" in out and "lag" in out
    assert "messages:" in out and "memory_items:" in out and "summaries L1:" in out
    assert "proxy.upstream_api_key = '***'" in out and "sk-secret-upstream" not in out
    assert "proxy.host = '0.0.0.0'" in out
    assert "warning: proxy.host=0.0.0.0 is not loopback and no admin token is set" in out
    assert "unknown section [nonsense]" in out


async def test_doctor_json_is_complete(proxy: RunningProxy) -> None:
    await populate(proxy)
    result = CliRunner().invoke(main, ["doctor", "--json", "--data-dir",
                                       proxy.settings.storage.data_dir])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["schema_version_db"] == report["schema_version_code"] == SCHEMA_VERSION
    assert report["integrity_check"] == ["ok"] and report["problems"] == []
    assert report["counts"]["threads"] == 4 and report["counts"]["summary_nodes"] == 3
    lag = report["index"]["indexers"]
    assert set(lag) >= {"index_text", "index_vector"}
    assert lag["index_text"]["lag"] == report["index"]["outbox_head"] - lag["index_text"][
        "checkpoint"]
    assert report["config"]["storage"]["data_dir"] == proxy.settings.storage.data_dir


def test_doctor_index_lag_counts_rows_past_each_checkpoint(tmp_path: Path) -> None:
    from memory_core.engine import Engine

    engine = Engine(tmp_path / "d")
    try:
        def seed(c: sqlite3.Connection) -> None:
            for i in range(10):
                c.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?,"
                          " 'upsert')", (i,))
            c.execute("INSERT INTO checkpoints (name, value, updated_at) VALUES"
                      " ('index_text', 7, 0), ('index_vector', 3, 0), ('other', 1, 0)")

        engine.store.write_sync(seed)
        lag = engine.index_lag()
    finally:
        engine.close()
    assert lag == {"outbox_head": 10, "indexers": {
        "index_text": {"checkpoint": 7, "lag": 3}, "index_vector": {"checkpoint": 3, "lag": 7}}}


def test_doctor_does_not_create_a_missing_database(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(tmp_path / "none")])
    assert result.exit_code == 0 and "no database yet" in result.output
    assert not (tmp_path / "none" / "lcm.sqlite3").exists()


def test_doctor_fails_on_a_damaged_database(tmp_path: Path) -> None:
    from memory_core.engine import Engine

    data = tmp_path / "d"
    engine = Engine(data)
    engine.store.write_sync(lambda c: c.executemany(
        "INSERT INTO events (kind, created_at, data) VALUES ('x', 0, ?)",
        [("y" * 3000,) for _ in range(200)]))
    engine.close()
    db = data / "lcm.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    raw = bytearray(db.read_bytes())
    for n in range(len(raw) // page // 2, len(raw) // page):  # scribble over the later pages
        raw[n * page + 8: n * page + 64] = b"\xff" * 56
    db.write_bytes(bytes(raw))
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    assert "PROBLEM: PRAGMA integrity_check failed" in result.output
    assert result.output.count("On tree page") <= 8  # a paste-able report, not a dump
