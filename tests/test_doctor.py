"""``lcm-proxy doctor``: schema, counts, integrity, index lag, config in force, warnings;
exit 1 for a damaged database; never creates a database that is not there."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from memory_core.store import migrations, pg_migrations
from proxy.cli import main
from tests.conftest import TEST_STORE, RunningProxy, sql_write
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    count,
    populate,
    steady_proxy_fixture,
)

SCHEMA_VERSION = (pg_migrations if TEST_STORE == "postgresql" else migrations).SCHEMA_VERSION
"""The code's schema version of the backend under test (each numbers its own)."""


async def test_doctor_reports_a_populated_store(proxy: RunningProxy, tmp_path: Path) -> None:
    await populate(proxy)
    data_dir = proxy.settings.storage.data_dir
    config = tmp_path / "lcm.toml"
    # port 0: doctor's check of the listen address would bind 0.0.0.0 (tests: loopback)
    config.write_text('[proxy]\nhost = "0.0.0.0"\nport = 0\n'
                      'upstream_api_key = "sk-secret-upstream"\n')
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


def test_doctor_refuses_an_unknown_section_like_serve(tmp_path: Path) -> None:
    config = tmp_path / "lcm.toml"
    config.write_text('[proxy]\nport = 9000\n[nonsense]\nx = 1\n')
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(tmp_path / "d"),
                                       "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert f"{config}: unknown section [nonsense]" in result.stderr


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
    text, vector = engine.checkpoint_names()  # a shared store: index_text@<replica>
    try:
        def seed(c: sqlite3.Connection) -> None:
            for i in range(10):
                c.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?,"
                          " 'upsert')", (i,))
            c.execute("INSERT INTO checkpoints (name, value, updated_at) VALUES"
                      " (?, 7, 0), (?, 3, 0), ('other', 1, 0)", (text, vector))

        sql_write(engine, seed)
        lag = engine.index_lag()
    finally:
        engine.close()
    assert lag == {"outbox_head": 10, "indexers": {
        "index_text": {"checkpoint": 7, "lag": 3}, "index_vector": {"checkpoint": 3, "lag": 7}}}


def test_doctor_does_not_create_a_missing_database(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(tmp_path / "none")])
    assert result.exit_code == 0 and "no database yet" in result.output
    assert not (tmp_path / "none" / "lcm.sqlite3").exists()


def test_doctor_leads_with_its_verdict_and_lists_every_setting_only_on_request(
        tmp_path: Path) -> None:
    """The first line is the verdict and the findings follow it, each with what to do;
    before, some 140 setting lines came first and the warnings last. Without
    ``--settings`` only the settings off their default are listed, under a line that
    counts them all; ``--json`` holds every setting either way."""
    import re

    from memory_core.engine import Engine

    config = tmp_path / "lcm.toml"
    config.write_text('[proxy]\nhost = "0.0.0.0"\nport = 0\n')
    args = ["doctor", "--data-dir", str(tmp_path / "none"), "--config", str(config)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "doctor: 2 warnings"
    assert lines[1].startswith("warning: no database yet in")
    assert lines[2].startswith("warning: proxy.host=0.0.0.0 is not loopback")
    assert lines[2].endswith("(set proxy.admin_token to reach them from elsewhere)")
    assert lines[3] == ""
    listed = [line for line in lines if re.match(r"  [a-z_]+\.[a-z_0-9]+ = ", line)]
    assert "  proxy.host = '0.0.0.0'" in listed and "  proxy.port = 0" in listed
    assert "  proxy.tenant = ''" not in listed  # at its default
    counted = re.search(r"(\d+) of (\d+) settings off their default \(`--settings` lists"
                        r" all\)", result.stdout)
    assert counted is not None and int(counted[1]) == len(listed) < int(counted[2])

    full = CliRunner().invoke(main, [*args, "--settings"])
    assert full.exit_code == 0, full.output
    every = [line for line in full.stdout.splitlines()
             if re.match(r"  [a-z_]+\.[a-z_0-9]+ = ", line)]
    assert "  proxy.tenant = ''" in every and len(every) == int(counted[2])
    report = orjson.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert sum(len(v) for v in report["config"].values()) == len(every)
    assert orjson.loads(CliRunner().invoke(main, [*args, "--json", "--settings"]).stdout) \
        == report

    data = tmp_path / "d"
    Engine(data).close()
    config.write_text("[proxy]\nport = 0\n")
    clean = CliRunner().invoke(main, ["doctor", "--data-dir", str(data), "--config",
                                      str(config)])
    assert clean.exit_code == 0, clean.output
    assert clean.stdout.splitlines()[:2] == ["doctor: OK", ""]
    assert "warning:" not in clean.stdout


@pytest.mark.sqlite_only("damages the SQLite file's pages by hand (PostgreSQL's own"
                         " files are the server's, checksummed by it)")
def test_doctor_fails_on_a_damaged_database(tmp_path: Path) -> None:
    from memory_core.engine import Engine

    data = tmp_path / "d"
    engine = Engine(data)
    sql_write(engine, lambda c: c.executemany(
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
    config = tmp_path / "free-port.toml"  # 8787 may be the README's step 1 serving
    config.write_text("[proxy]\nport = 0\n")
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(data), "--config",
                                       str(config)])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("doctor: 1 problem (exit 1)\nPROBLEM: PRAGMA"
                                    " integrity_check failed")
    assert result.output.count("On tree page") <= 8  # a paste-able report, not a dump


async def test_doctor_checks_each_index_against_sqlite(proxy: RunningProxy) -> None:
    """Counts per kind agree after indexing (retracted items excluded); documents
    deleted behind SQLite's back are a problem whose fix is ``lcm-proxy reindex``."""
    from memory_core.search import make_label

    pop = await populate(proxy)
    engine = proxy.engine
    engine.retract(pop.items["a_port"], reason="wrong")
    await proxy.settle()
    data_dir = proxy.settings.storage.data_dir

    def doctor() -> tuple[int, dict[str, Any]]:
        result = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", data_dir])
        return result.exit_code, orjson.loads(result.stdout)

    code, report = doctor()
    assert code == 0 and report["problems"] == [], report["problems"]
    consistency = report["index_consistency"]
    live_items = count(proxy, "SELECT COUNT(*) FROM memory_items WHERE status != 'retracted'")
    assert consistency["text"]["item"] == {"sqlite": live_items, "index": live_items}
    for name in ("text", "vector"):
        for kind, v in consistency[name].items():
            assert v["index"] == v["sqlite"] > 0, (name, kind, v)
    text = CliRunner().invoke(main, ["doctor", "--data-dir", data_dir]).output
    assert "index consistency (indexed/SQLite per kind):" in text
    assert f"item {live_items}/{live_items}" in text

    # Break both indexes the way a lost write would: delete documents directly.
    victims = [make_label("message", pop.messages["a"]), make_label("message", pop.messages["b"])]
    service = engine.search
    service.text.delete(victims)
    service.text.commit()
    assert service.vectors is not None
    service.vectors.delete(victims[:1])
    service.vectors.save()
    code, report = doctor()
    assert code == 1
    problems = "\n".join(report["problems"])
    n_messages = consistency["text"]["message"]["sqlite"]
    assert (f"text index disagrees with SQLite (message {n_messages - 2} indexed,"
            f" {n_messages} in SQLite)") in problems
    assert "vector index disagrees with SQLite (message" in problems
    assert problems.count("run `lcm-proxy reindex`") == 2
    assert report["index_consistency"]["text"]["message"]["index"] == n_messages - 2


def test_doctor_expected_counts_follow_the_indexer(tmp_path: Path) -> None:
    """SQLite's expectation matches what a rebuild indexes, kind by kind, including
    blank texts (no vector) and kinds left out of ``vector_kinds``."""
    from memory_core.engine import Engine
    from memory_core.search import HashingEmbedder, SearchConfig, SearchService
    from memory_core.search.consistency import (
        expected_counts,
        text_index_counts,
        vector_index_counts,
    )

    engine = Engine(tmp_path / "d")
    try:
        def seed(c: sqlite3.Connection) -> None:
            thread = c.execute("INSERT INTO threads (tenant, role, session, created_at,"
                               " updated_at) VALUES ('t', 'r', 's', 0, 0)").lastrowid
            # the fourth: a blank answer to the first (with the turn before as
            # context, its embed text was that turn alone, so it got a vector)
            ids: list[int | None] = []
            for i, (text, raw, parent) in enumerate([
                    ("hello", "{}", None), (" \u3000\n", "{}", None),
                    ("", '{"name": "bob"}', None), ("", "{}", 0)], 1):
                ids.append(c.execute(
                    "INSERT INTO messages (tenant, role, session, thread_id, node_key, depth,"
                    " created_at, msg_role, kind, text, raw_json, content_hash, tokens,"
                    " parent_id) VALUES ('t', 'r', 's', ?, ?, ?, 0, 'user', 'request', ?, ?,"
                    " ?, 1, ?)", (thread, f"k{i}", i, text, raw, f"h{i}",
                                  None if parent is None else ids[parent])).lastrowid)
                c.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('message', ?,"
                          " 'upsert')", (ids[-1],))

        sql_write(engine, seed)
        cfg = SearchConfig(vector_kinds=("message", "item"))
        svc = SearchService(engine.store, tmp_path / "d", cfg, HashingEmbedder(dim=32))
        try:
            built = svc.rebuild()
        finally:
            svc.close()
        want = engine.store.read_tx(expected_counts, cfg.vector_kinds)
    finally:
        engine.close()
    assert built["message"] == want["text"]["message"] == 4
    assert want["vector"]["message"] == 2  # the blank ones have no vector; "bob: " has
    assert text_index_counts(tmp_path / "d" / "index" / "text") == want["text"]
    assert vector_index_counts(tmp_path / "d" / "index" / "vectors") == want["vector"]


def test_doctor_counts_retries_and_leftovers_not_an_answer_about_to_be_extracted(
        tmp_path: Path) -> None:
    """An answer is marked pending in its capture and extracted by the next write:
    such a row (no attempt, not yet due) is no backlog. A row that failed, or a
    pending one past due (a crash left it), is."""
    import time

    from memory_core.engine import Engine
    from memory_core.models import Scope

    data = tmp_path / "d"
    engine = Engine(data)
    try:
        ids = []
        for i in range(3):
            ticket, fut = engine.capture_request(Scope("t"), f"r{i}", [
                {"role": "user", "content": f"question {i}"}], {})
            fut.result(10)
            ids += engine.capture_response(ticket, [
                {"role": "assistant", "content": f"answer {i}"}], {}).result(10)
        engine.flush()
        now = time.time()
        sql_write(engine, lambda c: c.executemany(
            "INSERT INTO extraction_queue (message_id, attempts, next_at) VALUES (?, ?, ?)"
            " ON CONFLICT (message_id) DO UPDATE SET attempts = excluded.attempts,"
            " next_at = excluded.next_at", [(ids[0], 0, now + 60), (ids[1], 2, now + 60),
                                  (ids[2], 0, now - 60)]))
    finally:
        engine.close()
    result = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", str(data)])
    assert orjson.loads(result.output)["extraction_queue"] == 2, result.output


@pytest.mark.parametrize("extract", ["true", "false"])
def test_doctor_says_what_clears_messages_waiting_for_an_extraction_retry(
        tmp_path: Path, extract: str) -> None:
    """The warning names what clears the backlog: the serving proxy's retries and the
    log line that gives each failure's reason, or the setting that stops them."""
    import time

    from memory_core.capture.jobs import EXTRACT_RETRY_SECONDS
    from memory_core.engine import Engine
    from memory_core.models import Scope

    data = tmp_path / "d"
    engine = Engine(data)
    try:
        ticket, fut = engine.capture_request(Scope("t"), "r0", [
            {"role": "user", "content": "question"}], {})
        fut.result(10)
        (answer,) = engine.capture_response(ticket, [
            {"role": "assistant", "content": "answer"}], {}).result(10)
        engine.flush()
        sql_write(engine, lambda c: c.execute(
            "INSERT INTO extraction_queue (message_id, attempts, next_at) VALUES (?, 2, ?)"
            " ON CONFLICT (message_id) DO UPDATE SET attempts = excluded.attempts,"
            " next_at = excluded.next_at", (answer, time.time() + 60)))
    finally:
        engine.close()
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(data)],
                                env={**_free_port_env(), "LCM_INJECTION__EXTRACT": extract})
    (line,) = [w for w in result.stdout.splitlines() if "for an extraction retry" in w]
    assert line.startswith("warning: 1 message waits for an extraction retry"), line
    if extract == "true":
        assert "`lcm-proxy serve` retries one due message with each request" in line, line
        assert f"then every {EXTRACT_RETRY_SECONDS[-1]:g} s" in line, line
        assert "in its log" in line and "; queued for retry" in line, line
    else:
        assert "injection.extract is off" in line, line
        assert "LCM_INJECTION__EXTRACT=true" in line, line


async def test_doctor_counts_an_indexer_behind_at_the_start_as_at_work(
        proxy: RunningProxy) -> None:
    """An indexer that was behind when doctor began and caught up while it counted may
    have committed after the count was read: a warning, never a problem."""
    from memory_core.search import make_label
    from proxy.cli.doctor import _check_indexes

    pop = await populate(proxy)
    await proxy.settle()
    engine = proxy.engine
    service = engine.search
    service.text.delete([make_label("message", pop.messages["a"])])
    service.text.commit()
    root = Path(proxy.settings.storage.data_dir) / "index"
    kinds = proxy.settings.search.search_config().vector_kinds
    now = engine.index_lag()
    assert now["indexers"]["index_text"]["lag"] == 0

    def check(lag_at_start: int) -> tuple[list[str], list[str]]:
        before = {"outbox_head": now["outbox_head"], "indexers": {
            name: {**v, "lag": lag_at_start if name == "index_text" else v["lag"]}
            for name, v in now["indexers"].items()}}
        warnings: list[str] = []
        problems: list[str] = []
        _check_indexes({}, warnings, problems, engine, root, kinds, before)
        return warnings, problems

    warnings, problems = check(11)
    assert problems == [] and any("text index differs from SQLite" in w
                                  and "11 outbox rows behind" in w for w in warnings)
    warnings, problems = check(0)
    assert any(p.startswith("text index disagrees with SQLite") for p in problems)


def _free_port_env() -> dict[str, str]:
    """A configured port nothing listens on: doctor's "serve would fail now" check
    must not depend on what else listens on 8787 (the README's step-1 proxy may)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return {"LCM_PROXY__PORT": str(s.getsockname()[1])}


def _doctor_json(data_dir: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", str(data_dir)],
                                env=_free_port_env())
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = orjson.loads(result.stdout)
    return report


def test_doctor_names_what_holds_the_data_dir_and_warns_when_it_does_not_answer(
        tmp_path: Path) -> None:
    """The lock file says who holds the data dir: a ``serve`` whose health endpoint
    does not answer is a warning that names its URL; a running ``reindex`` is a
    warning that its figures are moving; a pid-only lock (older proxies) is named in a
    note; nothing holding it is ``running proxy: none``. The store checks run in each
    case."""
    import os
    import socket

    from memory_core.engine import Engine
    from proxy.cli.preflight import LOCK_FILENAME, DataDirLock

    data = tmp_path / "d"
    Engine(data).close()
    data.mkdir(exist_ok=True)  # the lock's home, also when the store is PostgreSQL
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    pid = os.getpid()
    lock = DataDirLock(data, "serve", f"http://127.0.0.1:{closed}")
    try:
        report = _doctor_json(data)
    finally:
        lock.release()
    assert report["running_proxy"]["pid"] == pid
    assert report["running_proxy"]["status"] is None
    assert report["warnings"] == [
        f"data dir {data} is held by a running lcm-proxy (pid {pid}), but"
        f" http://127.0.0.1:{closed}/lcm/health does not answer (still starting, or"
        " stuck: see its log)"]
    assert report["integrity_check"] == ["ok"]
    lock = DataDirLock(data, "reindex")
    try:
        report = _doctor_json(data)
    finally:
        lock.release()
    assert report["running_proxy"]["command"] == "reindex"
    assert report["warnings"][0].startswith(
        f"data dir {data} is in use by a running `lcm-proxy reindex` (pid {pid}): index"
        " and store figures change")
    lock = DataDirLock(data, "serve")
    (data / LOCK_FILENAME).write_text(f"{pid}\n")  # what proxies before the URL wrote
    try:
        text = CliRunner().invoke(main, ["doctor", "--data-dir", str(data)],
                                  env=_free_port_env())
    finally:
        lock.release()
    assert f"running proxy:   serve, pid {pid}\n" in text.stdout
    assert f"note: a running lcm-proxy (pid {pid}) serves this data dir; doctor only" \
           " reads beside it" in text.stdout
    assert "warning:" not in text.stdout
    idle = CliRunner().invoke(main, ["doctor", "--data-dir", str(data)])
    assert "running proxy:   none" in idle.stdout and "note:" not in idle.stdout


@pytest.mark.sqlite_only("writes an older schema into the SQLite file")
def test_doctor_leaves_a_store_of_an_older_schema_as_it_is(tmp_path: Path) -> None:
    """Doctor run by a newer lcm-proxy (as before restarting a service on an upgrade)
    opened the store, which applied the newer migrations in place: beside the running
    older proxy, which then refused the store when it restarted ("database schema 13
    is newer than this code (12)"). Doctor only reads: it says the schema is older,
    skips the checks that open the store and leaves the file at its version."""
    from memory_core.engine import Engine
    from memory_core.store.sqlite import DB_FILENAME

    data_dir = tmp_path / "d"
    Engine(data_dir).close()
    older = migrations.SCHEMA_VERSION - 1
    db = sqlite3.connect(data_dir / DB_FILENAME)
    db.execute("DROP INDEX messages_calls")  # the last migration, undone
    db.execute(f"PRAGMA user_version = {older}")
    db.commit()
    db.close()
    result = CliRunner().invoke(main, ["doctor", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    assert f"schema version:  {older} (code {migrations.SCHEMA_VERSION})" in result.output
    assert f"warning: store schema {older} is older than this lcm-proxy's" in result.output
    db = sqlite3.connect(f"{(data_dir / DB_FILENAME).as_uri()}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == older
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_calls'"
                          ).fetchone() is None
    finally:
        db.close()
    report = orjson.loads(CliRunner().invoke(
        main, ["doctor", "--json", "--data-dir", str(data_dir)]).stdout)
    assert report["schema_version_db"] == older and "counts" not in report


@pytest.mark.skipif(TEST_STORE != "postgresql", reason="a PostgreSQL store: LCM_TEST_STORE")
def test_doctor_leaves_a_postgresql_store_of_an_older_schema_as_it_is(
        tmp_path: Path, pg_session_cluster: str) -> None:
    """As for SQLite: doctor on a ``storage.url`` database an older lcm-proxy migrated
    reads its schema number without migrating it."""
    import psycopg

    from tests import pgcluster

    url = pg_session_cluster.rsplit("/", 1)[0] + "/lcm_doctor_older"
    try:
        with pgcluster.migrated(pg_session_cluster, "lcm_doctor_older") as conn:
            conn.execute("DROP INDEX messages_calls")  # the last migration, undone
            conn.execute("DELETE FROM lcm_schema WHERE number = %s",
                         (pg_migrations.SCHEMA_VERSION,))
        older = pg_migrations.SCHEMA_VERSION - 1
        config = tmp_path / "lcm.toml"
        config.write_text(f'[storage]\nurl = "{url}"\n')
        result = CliRunner().invoke(main, ["doctor", "--config", str(config),
                                           "--data-dir", str(tmp_path / "d")])
        assert result.exit_code == 0, result.output
        assert (f"schema version:  {older} (code {pg_migrations.SCHEMA_VERSION})"
                in result.output)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT MAX(number) FROM lcm_schema").fetchone()
            assert row is not None and row[0] == older
    finally:
        with psycopg.connect(pg_session_cluster, autocommit=True) as conn:
            conn.execute('DROP DATABASE IF EXISTS "lcm_doctor_older" WITH (FORCE)')


async def test_doctor_prints_the_running_proxys_config_not_its_own(
        proxy: RunningProxy, tmp_path: Path) -> None:
    """Beside a running ``serve``, "config" is that proxy's (its upstream, its port),
    read from its ``GET /lcm/v1/config`` with secrets masked, and labelled so; when
    that does not answer, the section says it is this command's own."""
    import asyncio
    from urllib.parse import urlsplit

    data = Path(proxy.settings.storage.data_dir)
    config = tmp_path / "doctor.toml"
    port = urlsplit(proxy.root).port
    config.write_text(f'[proxy]\nport = {port}\nupstream = "https://api.openai.com"\n')
    args = ["doctor", "--data-dir", str(data), "--config", str(config)]
    result = await asyncio.to_thread(CliRunner().invoke, main, args)
    as_json = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--json"])
    out = result.output
    assert result.exit_code == 0, out
    assert f"config of the running proxy ({proxy.root}," in out
    assert f"proxy.upstream = {proxy.settings.proxy.upstream!r}" in out
    assert "proxy.upstream = 'https://api.openai.com'" not in \
        out.split("config of the running proxy")[1]
    # its settings at their default are left out, as for doctor's own
    assert "proxy.allowed_hosts =" not in out and "context.model_windows =" not in out
    report = orjson.loads(as_json.stdout)
    assert report["running_config"]["config"]["proxy"]["upstream"] == \
        proxy.settings.proxy.upstream
    assert report["config"]["proxy"]["upstream"] == "https://api.openai.com"
    # no running proxy: the section is labelled as this command's
    config.write_text('[proxy]\nport = 0\nupstream = "https://api.openai.com"\n')
    alone = CliRunner().invoke(main, ["doctor", "--data-dir", str(tmp_path / "none"),
                                      "--config", str(config)])
    assert "running proxy:   none" in alone.output
    assert "config of this doctor command" in alone.output
    assert "proxy.upstream = 'https://api.openai.com'" in alone.output


async def test_doctor_names_a_setting_of_its_own_the_running_proxy_does_not_use(
        proxy: RunningProxy, tmp_path: Path) -> None:
    """Beside a running ``serve``, a setting that doctor's own environment or file sets
    (``LCM_INJECTION__MATCH_ITEMS=3`` to try it) is not what the listed settings show:
    a note names it with the proxy's value, so that nobody reads the old value as the
    new one refused; a setting both hold alike, or at its default, is not named."""
    import asyncio
    from urllib.parse import urlsplit

    data = Path(proxy.settings.storage.data_dir)
    config = tmp_path / "doctor.toml"
    port = urlsplit(proxy.root).port  # the proxy found on the port the file names
    config.write_text(f'[proxy]\nport = {port}\nupstream = "{proxy.settings.proxy.upstream}"\n')
    args = ["doctor", "--data-dir", str(data), "--config", str(config)]
    result = await asyncio.to_thread(CliRunner().invoke, main, args,
                                     env={"LCM_INJECTION__MATCH_ITEMS": "3"})
    out = result.output
    assert result.exit_code == 0, out
    note = next((line for line in out.splitlines()
                 if line.startswith("note: this command's file or environment")), out)
    assert "injection.match_items = 3 (running: 8)" in note
    assert "restart `serve`" in note
    assert "proxy.upstream" not in note and "storage.data_dir" not in note
    assert "injection.match_items" not in out.split("config of the running proxy")[1]
    # the same settings as the proxy's: no note
    same = await asyncio.to_thread(CliRunner().invoke, main, args)
    assert "note: this command's file or environment" not in same.output


async def test_the_config_endpoint_shows_no_credential_written_into_a_url(
        tmp_path: Path) -> None:
    """``GET /lcm/v1/config`` (and doctor, which prints the same dict) masks every
    secret: the keyed settings, and a password or token written into a URL setting
    (``https://user:pass@host``, ``?api-key=…``), the URL itself still told."""
    import aiohttp

    from tests.conftest import start_proxy

    secrets = ["upw-0451", "adm-0452", "llm-0453", "emb-0454", "qk-0455", "upk-0456",
               "salt-0457"]
    proxy = await start_proxy(
        "http://alice:upw-0451@127.0.0.1:9/v1?api-key=qk-0455", tmp_path / "d",
        proxy={"admin_token": "adm-0452", "upstream_api_key": "upk-0456",
               "tenant_salt": "salt-0457"},
        compaction={"llm_base_url": "https://bob:llm-0453@llm.example/v1"},
        embedding={"base_url": "https://emb-0454@emb.example/v1?x=1"})
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(proxy.root + "/lcm/v1/config", headers={
                    "Authorization": "Bearer adm-0452"}) as resp:
                assert resp.status == 200
                raw = await resp.text()
        cfg = orjson.loads(raw)["config"]
        assert not [s for s in secrets if s in raw], raw
        assert cfg["proxy"]["upstream"].startswith("http://")
        assert "127.0.0.1:9/v1" in cfg["proxy"]["upstream"]
        assert "llm.example/v1" in cfg["compaction"]["llm_base_url"]
        assert "emb.example/v1" in cfg["embedding"]["base_url"]
    finally:
        await proxy.close()


async def test_doctor_on_another_data_dir_names_the_proxy_on_its_port(
        proxy: RunningProxy, tmp_path: Path) -> None:
    """Doctor run without the ``--data-dir`` a running ``serve`` was given (the README's
    keyless trial serves ``./lcm-demo``; doctor reads ``./lcm-data``): the port warning
    names that proxy's data dir once, with the doctor command that checks it, instead
    of the bind error's generic advice followed by a second one."""
    import asyncio
    from urllib.parse import urlsplit

    data = Path(proxy.settings.storage.data_dir)
    config = tmp_path / "doctor.toml"
    config.write_text(f"[proxy]\nport = {urlsplit(proxy.root).port}\n")
    args = ["doctor", "--json", "--data-dir", str(tmp_path / "lcm-data"),
            "--config", str(config)]
    result = await asyncio.to_thread(CliRunner().invoke, main, args)
    assert result.exit_code == 0, result.output
    port_warnings = [w for w in orjson.loads(result.stdout)["warnings"]
                     if w.startswith("serve with these settings would fail now")]
    assert port_warnings == [
        f"serve with these settings would fail now: port {urlsplit(proxy.root).port} is"
        f" taken by another lcm-proxy, data dir {data} (`lcm-proxy doctor --data-dir"
        f" {data}` checks that one); stop it or set another proxy.port"]
